//! What a user downloads instead of building: the release archive that
//! `make dist` writes (hack/dist.py, here fed the tests' build so that
//! `make test` never builds release), its checksums, the krew manifest held
//! to krew's validator rules and installed the way krew installs it, cargo
//! binstall's templates, and the composite action (action.yml) run step by
//! step as the runner runs it. The archive is packaged once per test binary.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use verify_pods_tests::{binary, code, profile_dir, run, text, workspace_root};

const TARGET: &str = "x86_64-unknown-linux-gnu";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One packaging of the tests' build: the output folder, kept for the run.
struct Dist {
    _dir: tempfile::TempDir,
    out: PathBuf,
}

impl Dist {
    fn stem(&self) -> String {
        format!("verify-pods-v{VERSION}-{TARGET}")
    }
    fn archive(&self) -> PathBuf {
        self.out.join(format!("{}.tar.gz", self.stem()))
    }
    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.out.join(name)).unwrap()
    }
}

/// `hack/dist.py package` then `index`, as `make dist DIST_PROFILE=testing`
/// runs them, into `out`.
fn package(out: &Path) {
    // binary() fails when the build is older than a source.
    let built = binary("verify-pods");
    assert!(built.starts_with(profile_dir()));
    let profile = profile_dir();
    let name = profile.file_name().unwrap().to_str().unwrap().to_owned();
    let dist = workspace_root().join("hack/dist.py");
    for args in [
        vec!["package", "--profile", &name, "--target-dir"],
        vec!["index"],
    ] {
        let mut cmd = Command::new("python3");
        cmd.arg(&dist).args(&args);
        if args[0] == "package" {
            cmd.arg(profile.parent().unwrap());
        }
        let output = run(cmd.arg("--out").arg(out));
        assert!(
            output.status.success(),
            "hack/dist.py {args:?}: {}",
            text(&output.stderr)
        );
    }
}

fn dist() -> &'static Dist {
    static DIST: OnceLock<Dist> = OnceLock::new();
    DIST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("dist");
        package(&out);
        Dist { _dir: dir, out }
    })
}

/// `tar -tvzf`'s lines: mode, owner, size, date, time, name.
fn listing(archive: &Path) -> Vec<Vec<String>> {
    let output = run(Command::new("tar")
        .args(["--numeric-owner", "-tvzf"])
        .arg(archive));
    assert!(output.status.success());
    text(&output.stdout)
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[test]
fn the_archive_holds_one_folder_with_the_binaries_docs_completions_and_man_pages() {
    let d = dist();
    let stem = d.stem();
    let entries = listing(&d.archive());
    let names: Vec<&str> = entries.iter().map(|e| e[5].as_str()).collect();
    for name in [
        "verify-pods",
        "kubectl-verify_pods",
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "completions/verify-pods.bash",
        "completions/_verify-pods",
        "completions/verify-pods.fish",
        "man/verify-pods.1",
        "man/verify-pods-check.1",
    ] {
        assert!(
            names.contains(&format!("{stem}/{name}").as_str()),
            "{name} missing from {names:?}"
        );
    }
    assert!(names.iter().all(|n| n.starts_with(&format!("{stem}/"))));
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries in name order");
    for entry in &entries {
        assert_eq!(entry[1], "0/0", "owner of {}", entry[5]);
        assert_eq!(&entry[3..5], &entries[0][3..5], "one mtime for all");
        let executable = entry[0].starts_with('d')
            || entry[5].ends_with("/verify-pods")
            || entry[5].ends_with("/kubectl-verify_pods");
        let mode = if executable { "rwxr-xr-x" } else { "rw-r--r--" };
        assert_eq!(&entry[0][1..], mode, "mode of {}", entry[5]);
    }
    // The files are the checkout's and the packaged tool's own words.
    let unpacked = unpack(&d.archive());
    let top = unpacked.path().join(&stem);
    for doc in ["LICENSE", "README.md", "CHANGELOG.md"] {
        assert_eq!(
            fs::read(top.join(doc)).unwrap(),
            fs::read(workspace_root().join(doc)).unwrap()
        );
    }
    let completions = run(Command::new(binary("verify-pods")).args(["completions", "fish"]));
    assert_eq!(
        fs::read(top.join("completions/verify-pods.fish")).unwrap(),
        completions.stdout
    );
    let man = fs::read_to_string(top.join("man/verify-pods-check.1")).unwrap();
    let title = man.lines().find(|l| l.starts_with(".TH ")).unwrap();
    assert!(title.starts_with(".TH verify-pods-check 1 "), "{title}");
    assert!(
        title.contains(&format!("\"verify-pods {VERSION}\"")),
        "{title}"
    );
    assert!(
        man.contains("\\-\\-snapshot"),
        "the check page lists its flags"
    );
    // Stripped: no symbol table left.
    for bin in ["verify-pods", "kubectl-verify_pods"] {
        let sections = run(Command::new("readelf").arg("-S").arg(top.join(bin)));
        assert!(sections.status.success());
        assert!(
            !text(&sections.stdout).contains(".symtab"),
            "{bin} is not stripped"
        );
    }
}

#[test]
fn the_checksums_are_what_sha256sum_checks() {
    let d = dist();
    let name = format!("{}.tar.gz", d.stem());
    let per_archive = d.read(&format!("{name}.sha256"));
    let sum = d.read("sha256.sum");
    assert_eq!(per_archive, sum, "one archive: the same one line");
    let (hex, file) = per_archive.trim_end().split_once("  ").unwrap();
    assert_eq!(file, name);
    assert!(
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let check = run(Command::new("sha256sum")
        .args(["-c", "sha256.sum"])
        .current_dir(&d.out));
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert_eq!(text(&check.stdout), format!("{name}: OK\n"));
}

#[test]
fn packaging_twice_gives_the_same_bytes() {
    let d = dist();
    let again = tempfile::tempdir().unwrap();
    package(again.path());
    for name in [
        format!("{}.tar.gz", d.stem()),
        format!("{}.tar.gz.sha256", d.stem()),
        "sha256.sum".to_owned(),
        "verify-pods.yaml".to_owned(),
    ] {
        assert!(
            fs::read(d.out.join(&name)).unwrap() == fs::read(again.path().join(&name)).unwrap(),
            "{name} differs between two runs"
        );
    }
}

// ------------------------------------------------------------------ krew

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

/// The os/arch pairs krew accepts (validate.go's allPlatforms()).
const KREW_PLATFORMS: &[(&str, &str)] = &[
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

/// krew's validator (internal/index/validation/validate.go, ValidatePlugin),
/// rule by rule: the list of rules a manifest named `file_name` breaks.
fn krew_rule_breaks(file_name: &str, m: &Value) -> Vec<String> {
    let mut broken = Vec::new();
    let mut rule = |ok: bool, what: &str| {
        if !ok {
            broken.push(what.to_owned());
        }
    };
    rule(
        m["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2",
        "apiVersion",
    );
    rule(m["kind"] == "Plugin", "kind");
    let name = m["metadata"]["name"].as_str().unwrap_or("");
    rule(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-'),
        "name matches ^[\\w-]+$",
    );
    let reserved = ["con", "prn", "aux", "nul"];
    let lower = name.to_lowercase();
    rule(
        !reserved.contains(&lower.as_str())
            && !((lower.starts_with("com") || lower.starts_with("lpt"))
                && lower.len() == 4
                && lower.as_bytes()[3].is_ascii_digit()),
        "not a Windows reserved name",
    );
    rule(file_name == format!("{name}.yaml"), "name is the file name");
    let spec = &m["spec"];
    let short = spec["shortDescription"].as_str().unwrap_or("");
    rule(
        !short.is_empty() && !short.contains(['\r', '\n']),
        "one-line shortDescription",
    );
    let version = spec["version"].as_str().unwrap_or("");
    let semver = version.strip_prefix('v').is_some_and(|v| {
        let core = v.split(['-', '+']).next().unwrap();
        let parts: Vec<&str> = core.split('.').collect();
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    });
    rule(semver, "version vX.Y.Z");
    let platforms = spec["platforms"].as_array().cloned().unwrap_or_default();
    rule(!platforms.is_empty(), "at least one platform");
    let mut matched: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, p) in platforms.iter().enumerate() {
        rule(p["uri"].as_str().is_some_and(|u| !u.is_empty()), "uri");
        let sha = p["sha256"].as_str().unwrap_or("");
        rule(
            sha.len() == 64 && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "sha256 ^[a-f0-9]{64}$",
        );
        rule(p["bin"].as_str().is_some_and(|b| !b.is_empty()), "bin");
        if let Some(files) = p.get("files") {
            let files = files.as_array().cloned().unwrap_or_default();
            rule(!files.is_empty(), "files absent or not empty");
            for f in files {
                rule(
                    f["from"].is_string() && f["to"].is_string(),
                    "files from/to",
                );
            }
        }
        let labels = p["selector"]["matchLabels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let expressions = p["selector"].get("matchExpressions").is_some();
        rule(!labels.is_empty() || expressions, "a selector, not empty");
        rule(
            labels.keys().all(|k| k == "os" || k == "arch"),
            "selector keys os/arch only",
        );
        let mut matches_one = false;
        for &(os, arch) in KREW_PLATFORMS {
            let hit = labels.get("os").is_none_or(|v| v == os)
                && labels.get("arch").is_none_or(|v| v == arch);
            if hit && !labels.is_empty() {
                matches_one = true;
                if let Some(j) = matched.insert((os, arch), i) {
                    rule(
                        false,
                        &format!("platforms {j} and {i} overlap on {os}/{arch}"),
                    );
                }
            }
        }
        rule(matches_one, "a selector that matches a supported os/arch");
    }
    broken
}

#[test]
fn the_krew_manifest_passes_the_validator_rules() {
    let d = dist();
    let manifest = yaml(&d.read("verify-pods.yaml"));
    assert_eq!(
        krew_rule_breaks("verify-pods.yaml", &manifest),
        Vec::<String>::new()
    );
    let platforms = manifest["spec"]["platforms"].as_array().unwrap();
    assert_eq!(platforms.len(), 1, "one archive, one platform");
    let p = &platforms[0];
    assert_eq!(p["selector"]["matchLabels"]["os"], "linux");
    assert_eq!(p["selector"]["matchLabels"]["arch"], "amd64");
    let sum = d.read(&format!("{}.tar.gz.sha256", d.stem()));
    assert_eq!(p["sha256"], sum.split_whitespace().next().unwrap());
    assert_eq!(manifest["spec"]["version"], format!("v{VERSION}"));
    let uri = p["uri"].as_str().unwrap();
    assert!(uri.ends_with(&format!(
        "/releases/download/v{VERSION}/{}.tar.gz",
        d.stem()
    )));

    // The rules can fail: each broken manifest breaks the rule it names.
    let broken = |edit: &dyn Fn(&mut Value), rule: &str| {
        let mut m = manifest.clone();
        edit(&mut m);
        let breaks = krew_rule_breaks("verify-pods.yaml", &m);
        assert!(
            breaks.iter().any(|b| b.contains(rule)),
            "{rule}: {breaks:?}"
        );
    };
    broken(&|m| m["spec"]["version"] = "0.1.0".into(), "version");
    broken(
        &|m| m["spec"]["shortDescription"] = "a\nb".into(),
        "one-line",
    );
    broken(
        &|m| m["spec"]["platforms"][0]["sha256"] = "AB".repeat(32).into(),
        "sha256",
    );
    broken(
        &|m| m["metadata"]["name"] = "verify_pods".into(),
        "file name",
    );
    broken(
        &|m| {
            let p = m["spec"]["platforms"][0].clone();
            m["spec"]["platforms"].as_array_mut().unwrap().push(p);
        },
        "overlap",
    );
}

#[test]
fn the_krew_release_bot_template_is_the_manifest_of_every_release_target() {
    let committed = fs::read_to_string(workspace_root().join(".krew.yaml")).unwrap();
    let output = run(Command::new("python3")
        .arg(workspace_root().join("hack/dist.py"))
        .arg("krew-template"));
    assert!(output.status.success());
    assert_eq!(
        committed,
        text(&output.stdout),
        ".krew.yaml is stale: python3 hack/dist.py krew-template > .krew.yaml"
    );
    // The bot's template functions, as it expands them for a tag.
    let sha = "0123456789abcdef".repeat(4);
    let mut expanded = String::new();
    for line in committed.lines() {
        let line = line.replace("{{ .TagName }}", "v9.8.7");
        match line.trim_start().strip_prefix("{{addURIAndSha \"") {
            Some(rest) => {
                let url = rest.split('"').next().unwrap();
                let indent = &line[..line.len() - line.trim_start().len()];
                expanded += &format!("{indent}uri: {url}\n{indent}sha256: {sha}\n");
            }
            None => expanded += &(line + "\n"),
        }
    }
    let manifest = yaml(&expanded);
    assert_eq!(
        krew_rule_breaks("verify-pods.yaml", &manifest),
        Vec::<String>::new()
    );
    // Every platform's archive is one the release workflow builds.
    let workflow =
        yaml(&fs::read_to_string(workspace_root().join(".github/workflows/release.yml")).unwrap());
    let built: Vec<String> = workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["target"].as_str().unwrap().to_owned())
        .collect();
    for p in manifest["spec"]["platforms"].as_array().unwrap() {
        let uri = p["uri"].as_str().unwrap();
        let target = uri
            .strip_suffix(".tar.gz")
            .and_then(|u| u.rsplit_once("/verify-pods-v9.8.7-"))
            .unwrap()
            .1;
        assert!(built.iter().any(|t| t == target), "{target} is not built");
        assert_eq!(
            p["bin"],
            format!("verify-pods-v9.8.7-{target}/kubectl-verify_pods")
        );
    }
    assert_eq!(manifest["spec"]["platforms"].as_array().unwrap().len(), 4);
}

fn unpack(archive: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let output = run(Command::new("tar")
        .arg("-xzf")
        .arg(archive)
        .arg("-C")
        .arg(dir.path()));
    assert!(output.status.success(), "{}", text(&output.stderr));
    dir
}

fn sha256sum(path: &Path) -> String {
    let output = run(Command::new("sha256sum").arg(path));
    text(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// What `kubectl krew install --manifest verify-pods.yaml --archive ARCHIVE`
/// does (krew internal/installation): the archive's sha256 checked against
/// the manifest, unpacked into store/NAME/VERSION (no `files:`: everything,
/// as it is), a LICENSE required somewhere in it (validate-krew-manifest),
/// then bin/kubectl-NAME (dashes as underscores) linked to `bin`.
#[test]
fn installed_as_krew_does_kubectl_runs_the_plugin() {
    let d = dist();
    let manifest = yaml(&d.read("verify-pods.yaml"));
    let platform = &manifest["spec"]["platforms"][0];
    assert_eq!(platform["sha256"], sha256sum(&d.archive()));
    assert!(platform.get("files").is_none());
    let root = tempfile::tempdir().unwrap();
    let name = manifest["metadata"]["name"].as_str().unwrap();
    let version = manifest["spec"]["version"].as_str().unwrap();
    let store = root.path().join("store").join(name).join(version);
    fs::create_dir_all(&store).unwrap();
    let output = run(Command::new("tar")
        .arg("-xzf")
        .arg(d.archive())
        .arg("-C")
        .arg(&store));
    assert!(output.status.success());
    let licenses = [
        "license",
        "license.txt",
        "license.md",
        "licenses",
        "copying",
    ];
    let mut found = false;
    let mut dirs = vec![store.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let lower = entry.file_name().to_string_lossy().to_lowercase();
            found |= licenses.contains(&lower.as_str());
            if entry.file_type().unwrap().is_dir() {
                dirs.push(entry.path());
            }
        }
    }
    assert!(found, "krew-index refuses a plugin without a LICENSE");
    let target = store.join(platform["bin"].as_str().unwrap());
    let bin_dir = root.path().join("bin");
    fs::create_dir(&bin_dir).unwrap();
    let link = bin_dir.join(format!("kubectl-{}", name.replace('-', "_")));
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let path = std::env::join_paths([
        bin_dir,
        verify_pods_tests::replay::client::real_kubectl_dir(),
    ])
    .unwrap();
    let output = run(Command::new("kubectl")
        .args(["verify-pods", "--version"])
        .env("PATH", path)
        .env("KUBECONFIG", "/dev/null"));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let own = run(Command::new(binary("verify-pods")).arg("--version"));
    assert_eq!(text(&output.stdout), text(&own.stdout));
    assert!(text(&output.stdout).starts_with(&format!("verify-pods {VERSION} (commit ")));
}

// -------------------------------------------------------------- binstall

/// binstall's template rule (SUPPORT.md): `{ var }`, spaces optional.
fn binstall_render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out += &rest[..open];
        let close = rest[open..].find('}').expect("a closed { }") + open;
        let key = rest[open + 1..close].trim();
        let value = vars
            .iter()
            .find(|(k, _)| *k == key)
            .unwrap_or_else(|| panic!("binstall has no template variable {key:?}"));
        out += value.1;
        rest = &rest[close + 1..];
    }
    out + rest
}

#[test]
fn cargo_binstall_finds_the_archive_and_both_binaries() {
    let d = dist();
    let cli: Value =
        basic_toml::from_str(&fs::read_to_string(workspace_root().join("cli/Cargo.toml")).unwrap())
            .unwrap();
    let workspace: Value =
        basic_toml::from_str(&fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap())
            .unwrap();
    let package = &cli["package"];
    let meta = &package["metadata"]["binstall"];
    assert_eq!(meta["pkg-fmt"], "tgz", "a .tar.gz");
    let name = package["name"].as_str().unwrap();
    let repo = workspace["workspace"]["package"]["repository"]
        .as_str()
        .unwrap();
    let manifest = yaml(&d.read("verify-pods.yaml"));
    let unpacked = unpack(&d.archive());
    let bins = verify_pods_tests::strings_of(&cli["bin"], "name");
    assert_eq!(bins, ["verify-pods", "kubectl-verify_pods"]);
    for bin in bins {
        let vars = [
            ("name", name),
            ("version", VERSION),
            ("repo", repo),
            ("target", TARGET),
            ("bin", bin),
            ("binary-ext", ""),
            ("archive-suffix", ".tar.gz"),
            ("archive-format", "tar.gz"),
        ];
        let url = binstall_render(meta["pkg-url"].as_str().unwrap(), &vars);
        assert_eq!(
            url,
            manifest["spec"]["platforms"][0]["uri"].as_str().unwrap()
        );
        let path = binstall_render(meta["bin-dir"].as_str().unwrap(), &vars);
        let file = unpacked.path().join(&path);
        let output = run(Command::new(&file).arg("--version"));
        assert!(output.status.success(), "{path} does not run");
    }
}

// ---------------------------------------------------------------- action

/// The action's outcome, as a workflow sees it.
#[derive(Debug)]
struct ActionRun {
    outputs: BTreeMap<String, String>,
    /// The id of the step that failed, if one did.
    failed: Option<String>,
    stdout: String,
    summary: String,
}

/// Run action.yml's steps as the runner does: each `run` in a file run by
/// `bash --noprofile --norc -eo pipefail FILE` with the step's env (its
/// expressions evaluated), GITHUB_OUTPUT a fresh file per step,
/// GITHUB_ENV/GITHUB_PATH applied to the steps after it, steps after a
/// failure skipped, then the action's outputs from their `value`s.
fn run_action(inputs: &[(&str, &str)], tmp: &Path) -> ActionRun {
    run_action_in(inputs, &[], tmp)
}

/// [`run_action`] with values of the `github` context (`action_ref`,
/// `action_repository`, `server_url`: GITHUB_SERVER_URL), empty by default.
fn run_action_in(inputs: &[(&str, &str)], github: &[(&str, &str)], tmp: &Path) -> ActionRun {
    let context = |name: &str| {
        github
            .iter()
            .find(|(k, _)| *k == name)
            .map_or(String::new(), |(_, v)| (*v).to_owned())
    };
    let action = yaml(&fs::read_to_string(workspace_root().join("action.yml")).unwrap());
    assert_eq!(action["runs"]["using"], "composite");
    let declared = action["inputs"].as_object().unwrap();
    let mut input = BTreeMap::new();
    for (name, spec) in declared {
        assert!(
            spec["description"].is_string(),
            "input {name} needs a description"
        );
        input.insert(
            name.clone(),
            spec["default"].as_str().unwrap_or("").to_owned(),
        );
    }
    for (name, value) in inputs {
        assert!(declared.contains_key(*name), "no input {name}");
        input.insert((*name).to_owned(), (*value).to_owned());
    }
    let runner_temp = tmp.join("runner-temp");
    fs::create_dir_all(&runner_temp).unwrap();
    let files = tmp.join("files");
    fs::create_dir_all(&files).unwrap();
    let summary = files.join("step-summary.md");
    let github_env = files.join("env");
    let github_path = files.join("path");
    // A PATH without the build: the check must run the archive's binaries.
    let mut path: Vec<PathBuf> = ["/usr/local/bin", "/usr/bin", "/bin"]
        .map(PathBuf::from)
        .to_vec();
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let eval = |value: &str,
                input: &BTreeMap<String, String>,
                steps: &BTreeMap<String, BTreeMap<String, String>>|
     -> String {
        let Some(inner) = value
            .trim()
            .strip_prefix("${{")
            .and_then(|v| v.strip_suffix("}}"))
        else {
            assert!(!value.contains("${{"), "an expression inside text: {value}");
            return value.to_owned();
        };
        let parts: Vec<&str> = inner.trim().split('.').collect();
        match parts[..] {
            ["inputs", name] => input
                .get(name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .clone(),
            ["github", name @ ("action_ref" | "action_repository")] => context(name),
            ["steps", id, "outputs", name] => steps
                .get(id)
                .and_then(|o| o.get(name))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("an expression the test cannot evaluate: {value}"),
        }
    };
    let mut failed = None;
    let mut stdout = String::new();
    for step in action["runs"]["steps"].as_array().unwrap() {
        let id = step["id"]
            .as_str()
            .expect("every step has an id")
            .to_owned();
        assert_eq!(step["shell"], "bash");
        assert!(step.get("if").is_none(), "the test runs no `if:`");
        let script = step["run"].as_str().unwrap();
        assert!(
            !script.contains("${{"),
            "step {id}: an input pasted into run:"
        );
        let file = files.join(format!("{id}.sh"));
        fs::write(&file, script).unwrap();
        let output_file = files.join(format!("{id}.output"));
        fs::write(&output_file, "").unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&file);
        // Nothing of this process's environment (env_clear): no setting of
        // the user's reaches the check.
        cmd.env_clear()
            .env("PATH", std::env::join_paths(&path).unwrap())
            .env("HOME", tmp)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ACTION_PATH", workspace_root())
            .env("GITHUB_WORKSPACE", workspace_root())
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_ENV", &github_env)
            .env("GITHUB_PATH", &github_path)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_SERVER_URL", context("server_url"))
            .current_dir(workspace_root())
            .envs(&env);
        for (name, value) in step["env"].as_object().into_iter().flatten() {
            cmd.env(name, eval(value.as_str().unwrap(), &input, &steps));
        }
        let output = run(&mut cmd);
        stdout += &text(&output.stdout);
        stdout += &text(&output.stderr);
        steps.insert(id.clone(), parse_env_file(&output_file));
        env.extend(parse_env_file(&github_env));
        fs::write(&github_env, "").unwrap();
        for dir in fs::read_to_string(&github_path)
            .unwrap_or_default()
            .lines()
            .rev()
        {
            path.insert(0, PathBuf::from(dir));
        }
        fs::write(&github_path, "").unwrap();
        if !output.status.success() {
            failed = Some(id);
            break;
        }
    }
    let outputs = action["outputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, spec)| {
            (
                name.clone(),
                eval(spec["value"].as_str().unwrap(), &input, &steps),
            )
        })
        .collect();
    ActionRun {
        outputs,
        failed,
        stdout,
        summary: fs::read_to_string(&summary).unwrap_or_default(),
    }
}

/// `name=value` lines and `name<<DELIMITER` blocks.
fn parse_env_file(path: &Path) -> BTreeMap<String, String> {
    let content = fs::read_to_string(path).unwrap_or_default();
    let mut values = BTreeMap::new();
    let mut lines = content.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            values.insert(name.to_owned(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            values.insert(name.to_owned(), value.to_owned());
        }
    }
    values
}

/// The checker's own summary and exit code for the same check, run directly.
fn direct_check(args: &[&str], tmp: &Path) -> (i32, String) {
    let summary = tmp.join("direct-summary.md");
    let mut cmd = verify_pods_tests::checker_command();
    let output = run(cmd
        .args(["check", "--format", "github"])
        .args(args)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .current_dir(workspace_root()));
    (
        code(&output),
        fs::read_to_string(&summary).unwrap_or_default(),
    )
}

#[test]
fn the_action_installs_the_archive_and_fails_on_the_red_sample() {
    let d = dist();
    let tmp = tempfile::tempdir().unwrap();
    // A folder with a space: the args input is split as a shell splits words.
    let samples = tmp.path().join("red run");
    fs::create_dir(&samples).unwrap();
    for f in ["pods.json", "events.json"] {
        fs::copy(workspace_root().join("samples").join(f), samples.join(f)).unwrap();
    }
    let args = format!(
        "--snapshot '{}' --events \"{}\"",
        samples.join("pods.json").display(),
        samples.join("events.json").display()
    );
    let archive = d.archive();
    let save_dir = tmp.path().join("artifacts");
    let ran = run_action(
        &[
            ("archive", archive.to_str().unwrap()),
            ("args", &args),
            ("save-dir", save_dir.to_str().unwrap()),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed.as_deref(), Some("check"), "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "fail");
    assert_eq!(ran.outputs["exit-code"], "1");
    // The report output: the checker's result, as --save-dir saves it.
    let report = save_dir.join("report.json");
    let result: Value = serde_json::from_slice(&fs::read(&report).unwrap()).unwrap();
    assert_eq!(result["verdict"], "fail");
    let output = &ran.outputs["report"];
    let reported: Value = serde_json::from_slice(&fs::read(output).unwrap()).unwrap();
    assert_eq!(reported, result);
    assert!(
        ran.stdout.contains("matches the published one"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("\n::error"),
        "--format github by default"
    );
    let direct = direct_check(
        &[
            "--snapshot",
            samples.join("pods.json").to_str().unwrap(),
            "--events",
            samples.join("events.json").to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(direct.0, 1);
    assert_eq!(ran.summary, direct.1, "the step summary is the checker's");
    assert!(!ran.summary.is_empty());
}

#[test]
fn the_action_passes_refuses_bad_input_and_a_wrong_checksum() {
    let d = dist();
    let passing = verify_pods_tests::corpus::case("all-running");
    let archive = d.archive();
    // The action on the published archive, checking the snapshot `pods`,
    // each time on a fresh runner's temp directory.
    let on_snapshot = |pods: &Path| {
        let tmp = tempfile::tempdir().unwrap();
        let args = format!("--snapshot {}", pods.display());
        run_action(
            &[("archive", archive.to_str().unwrap()), ("args", &args)],
            tmp.path(),
        )
    };
    let pods = passing.pods();
    let ran = on_snapshot(&pods);
    assert_eq!(ran.failed, None, "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "pass");
    assert_eq!(ran.outputs["exit-code"], "0");
    assert_eq!(ran.outputs["report"], "");

    // No pod to count: exit 0 too, but the verdict says empty.
    let ran = on_snapshot(&verify_pods_tests::corpus::case("empty-list").pods());
    assert_eq!(ran.failed, None, "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "empty");
    assert_eq!(ran.outputs["exit-code"], "0");

    let ran = on_snapshot(&verify_pods_tests::bad_inputs()[0]);
    assert_eq!(ran.failed.as_deref(), Some("check"), "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "could-not-observe");
    assert_eq!(ran.outputs["exit-code"], "2");
    // The checker's own annotation (--format github): its error line.
    assert_eq!(
        ran.stdout.matches("\n::error ").count(),
        1,
        "{}",
        ran.stdout
    );
    assert!(ran
        .stdout
        .contains("::error title=verify-pods gave no verdict::"));

    // An archive that is not the published one never runs.
    let tmp = tempfile::tempdir().unwrap();
    let forged = tmp.path().join(archive.file_name().unwrap());
    let mut bytes = fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&forged, bytes).unwrap();
    fs::copy(
        d.out.join(format!("{}.tar.gz.sha256", d.stem())),
        tmp.path().join(format!("{}.tar.gz.sha256", d.stem())),
    )
    .unwrap();
    let ran = run_action(
        &[
            ("archive", forged.to_str().unwrap()),
            ("args", &format!("--snapshot {}", pods.display())),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed.as_deref(), Some("install"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("does not match its sha256"),
        "{}",
        ran.stdout
    );
    assert_eq!(ran.outputs["verdict"], "");

    // No archive, no version and no release tag to take it from (`uses: ./`).
    let tmp = tempfile::tempdir().unwrap();
    let ran = run_action(&[("args", "--snapshot x")], tmp.path());
    assert_eq!(ran.failed.as_deref(), Some("install"), "{}", ran.stdout);
    let refusal = "::error title=verify-pods::no release to install: set the version input";
    assert!(ran.stdout.contains(refusal), "{}", ran.stdout);
}

/// The flags the action sets itself (--format, --save-dir, --ctrf,
/// --junit) work in args too, and the user's win; the outputs come from
/// the checker's result, whatever a report file says.
#[test]
fn the_users_flags_in_args_win_over_the_actions_own() {
    let d = dist();
    let archive = d.archive();
    let tmp = tempfile::tempdir().unwrap();
    let mine = tmp.path().join("mine");
    fs::create_dir(&mine).unwrap();
    let red = workspace_root().join("samples/pods.json");
    let args = format!(
        "--snapshot {} --format json --save-dir {m}/artifacts --ctrf {m}/ctrf.json --junit {m}/junit.xml",
        red.display(),
        m = mine.display()
    );
    let theirs = tmp.path().join("theirs");
    let ran = run_action(
        &[
            ("archive", archive.to_str().unwrap()),
            ("args", &args),
            ("format", "text"),
            ("save-dir", theirs.join("artifacts").to_str().unwrap()),
            ("ctrf", theirs.join("ctrf.json").to_str().unwrap()),
            ("junit", theirs.join("junit.xml").to_str().unwrap()),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed.as_deref(), Some("check"), "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "fail", "{}", ran.stdout);
    assert_eq!(ran.outputs["exit-code"], "1");
    assert!(
        ran.stdout.contains("{\"total\":"),
        "--format json: {}",
        ran.stdout
    );
    for file in ["artifacts/report.json", "ctrf.json", "junit.xml"] {
        assert!(mine.join(file).is_file(), "{file}: {}", ran.stdout);
    }
    assert!(!theirs.exists(), "the inputs' files were written");
    // Not annotated by the checker (--format json): the action says it once.
    assert_eq!(ran.stdout.matches("::error ").count(), 1, "{}", ran.stdout);

    // An empty cluster whose CTRF cannot be written: empty, not pass.
    let tmp = tempfile::tempdir().unwrap();
    let empty = verify_pods_tests::corpus::case("empty-list").pods();
    let ran = run_action(
        &[
            ("archive", archive.to_str().unwrap()),
            ("args", &format!("--snapshot {}", empty.display())),
            ("ctrf", "/nonexistent/folder/ctrf.json"),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed, None, "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "empty", "{}", ran.stdout);
    assert_eq!(ran.outputs["exit-code"], "0");
}

/// A usage error is said as one, in clap's words, once; a bad args input
/// (an unmatched quote) sets the outputs too.
#[test]
fn a_usage_error_and_a_bad_args_input_set_every_output() {
    let d = dist();
    let archive = d.archive();
    let pods = verify_pods_tests::corpus::case("all-running").pods();
    for format in ["github", "text", "json"] {
        let tmp = tempfile::tempdir().unwrap();
        let ran = run_action(
            &[
                ("archive", archive.to_str().unwrap()),
                (
                    "args",
                    &format!("--snapshot {} --no-such-flag", pods.display()),
                ),
                ("format", format),
            ],
            tmp.path(),
        );
        assert_eq!(ran.failed.as_deref(), Some("check"), "{}", ran.stdout);
        assert_eq!(ran.outputs["verdict"], "could-not-observe");
        assert_eq!(ran.outputs["exit-code"], "2");
        assert_eq!(ran.outputs["report"], "");
        let said =
            "::error title=verify-pods usage error::unexpected argument '--no-such-flag' found\n";
        assert_eq!(
            ran.stdout.matches(said).count(),
            1,
            "{format}: {}",
            ran.stdout
        );
        assert_eq!(
            ran.stdout.matches("::error ").count(),
            1,
            "{format}: {}",
            ran.stdout
        );
        assert!(
            ran.stdout.contains("error: unexpected argument"),
            "clap's own lines"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let ran = run_action(
        &[
            ("archive", archive.to_str().unwrap()),
            ("args", &format!("--snapshot '{}", pods.display())),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed.as_deref(), Some("check"), "{}", ran.stdout);
    assert_eq!(ran.outputs["verdict"], "could-not-observe");
    assert_eq!(ran.outputs["exit-code"], "2");
    assert_eq!(ran.outputs["report"], "");
    assert!(ran
        .stdout
        .contains("::error title=verify-pods::the args input is not words"));
}

#[test]
fn actionlint_passes_the_release_workflow_and_its_use_of_the_action() {
    // actionlint reads action.yml where a workflow uses it (`uses: ./` in
    // the release workflow's try-action job: its inputs are checked there);
    // the action's scripts are shellchecked by `make lint`.
    let output = run(Command::new("actionlint")
        .args(["-oneline", ".github/workflows/release.yml"])
        .current_dir(workspace_root()));
    assert!(
        output.status.success(),
        "actionlint (make tools installs it):\n{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

#[test]
fn the_readme_installs_the_archive_and_uses_the_action() {
    let d = dist();
    let readme = fs::read_to_string(workspace_root().join("README.md")).unwrap();
    // The download: the URL the manifest names, for the README's v and t.
    let url_line = readme
        .lines()
        .find_map(|l| l.strip_prefix("url="))
        .expect("the README's url= line");
    let v_t = readme
        .lines()
        .find(|l| l.starts_with("v=v") && l.contains(" t="))
        .expect("the README's v= t= line");
    let (v, t) = v_t.split_once(" t=").unwrap();
    let v = v.strip_prefix("v=").unwrap();
    let manifest = yaml(&d.read("verify-pods.yaml"));
    let uri = manifest["spec"]["platforms"][0]["uri"].as_str().unwrap();
    let expected = uri
        .replace(&format!("v{VERSION}"), "$v")
        .replace(TARGET, "$t");
    assert_eq!(url_line, expected);
    assert_eq!(v, format!("v{VERSION}"));
    assert!(
        t.ends_with("-musl"),
        "the README's archive runs on any Linux"
    );
    // The Actions example: the action, with inputs action.yml declares.
    let example = readme
        .split("```yaml\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap())
        .find(|block| block.contains("- name: Verify pods"))
        .expect("the README's Actions example");
    let steps = yaml(example);
    let step = &steps[0];
    let uses = step["uses"].as_str().expect("the example uses the action");
    assert!(
        uses.ends_with(&format!("/verify-pods@v{VERSION}")),
        "{uses}"
    );
    let action = yaml(&fs::read_to_string(workspace_root().join("action.yml")).unwrap());
    for key in step["with"].as_object().unwrap().keys() {
        assert!(action["inputs"].get(key).is_some(), "no input {key}");
    }
}

/// `python3 -m http.server` on a loopback port, serving `dir`; stopped
/// when dropped.
struct FileServer {
    child: std::process::Child,
    url: String,
}

impl FileServer {
    fn start(dir: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "http.server did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        FileServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_action_downloads_the_archive_and_its_checksum() {
    let d = dist();
    let served = tempfile::tempdir().unwrap();
    let name = format!("{}.tar.gz", d.stem());
    for file in [name.clone(), format!("{name}.sha256")] {
        fs::copy(d.out.join(&file), served.path().join(&file)).unwrap();
    }
    let server = FileServer::start(served.path());
    let tmp = tempfile::tempdir().unwrap();
    let passing = verify_pods_tests::corpus::case("all-running").pods();
    let url = format!("{}/{name}", server.url);
    let ran = run_action(
        &[
            ("archive", &url),
            ("args", &format!("--snapshot {}", passing.display())),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed, None, "{}", ran.stdout);
    assert!(ran.stdout.contains(&format!("Downloading {url}")));
    assert_eq!(ran.outputs["verdict"], "pass");

    // Without an archive: the release of the action's own tag, for this
    // runner (Linux X64: the static musl build), the URL the manifest names.
    let tmp = tempfile::tempdir().unwrap();
    let ran = run_action_in(
        &[("args", "--snapshot x")],
        &[
            ("action_ref", &format!("v{VERSION}")),
            ("action_repository", "owner/verify-pods"),
            ("server_url", &server.url),
        ],
        tmp.path(),
    );
    assert_eq!(ran.failed.as_deref(), Some("install"), "{}", ran.stdout);
    let manifest = yaml(&d.read("verify-pods.yaml"));
    let uri = manifest["spec"]["platforms"][0]["uri"].as_str().unwrap();
    let (_, path) = uri.split_once("/releases/download/").unwrap();
    let musl = path.replace("-gnu.tar.gz", "-musl.tar.gz");
    let wanted = format!("{}/owner/verify-pods/releases/download/{musl}", server.url);
    assert!(
        ran.stdout.contains(&format!("cannot download {wanted}")),
        "{}",
        ran.stdout
    );
}
