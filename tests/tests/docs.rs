//! The examples of README.md and docs/*.md, run. Every fenced code block of
//! those pages is known to this file: run by a test here, or named with the
//! test elsewhere that runs it. A block no test runs fails
//! `every_example_is_run_by_a_test`, so an example cannot go stale unseen.
//!
//! Beside the examples, the statements a user relies on and a test can
//! check: what an error looks like, that an empty variable means unset,
//! what `--save-dir` saves, one `::error` per group, what the splice writes.

use checker::artifacts::ARTIFACTS;
use checker::contract::DEADLINE_ENV;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use verify_pods_tests::corpus::case;
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, web_pods, Pod};
use verify_pods_tests::replay::{KubeEnv, Server, State};
use verify_pods_tests::{binary, checker_command, code, run, text, workspace_root};

// ------------------------------------------------------------ the pages

/// A fenced code block: the page it is on, its language and its text.
#[derive(Debug)]
struct Block {
    page: String,
    lang: String,
    body: String,
}

impl Block {
    fn first_line(&self) -> &str {
        self.body.lines().next().unwrap_or("")
    }

    /// Its lines that are commands: without comments after ` #` and blanks.
    fn commands(&self) -> Vec<String> {
        self.body
            .lines()
            .map(|line| line.split(" #").next().unwrap_or("").trim().to_owned())
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect()
    }
}

/// README.md, then docs/*.md by name: each page's path from the root.
fn pages() -> Vec<String> {
    let mut docs: Vec<String> = fs::read_dir(workspace_root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    std::iter::once("README.md".to_owned())
        .chain(docs)
        .collect()
}

fn read_page(page: &str) -> String {
    fs::read_to_string(workspace_root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Whether `page` says `words`, however its lines are wrapped.
fn says(page: &str, words: &str) -> bool {
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    flat(&read_page(page)).contains(&flat(words))
}

/// Every fenced block of every page (fences may be indented, as in a list).
fn blocks() -> Vec<Block> {
    let mut found = Vec::new();
    for page in pages() {
        let mut open: Option<(String, Vec<String>)> = None;
        for line in read_page(&page).lines() {
            let trimmed = line.trim_start();
            match (&mut open, trimmed.strip_prefix("```")) {
                (None, Some(lang)) => open = Some((lang.to_owned(), Vec::new())),
                (Some(_), Some("")) => {
                    let (lang, lines) = open.take().unwrap();
                    found.push(Block {
                        page: page.clone(),
                        lang,
                        body: lines.join("\n") + "\n",
                    });
                }
                (Some((_, lines)), _) => lines.push(line.to_owned()),
                (None, None) => {}
            }
        }
        assert!(open.is_none(), "{page}: a code block is not closed");
    }
    found
}

/// The one block of `page` whose first line starts with `first`.
fn block(page: &str, first: &str) -> Block {
    let mut matching: Vec<Block> = blocks()
        .into_iter()
        .filter(|b| b.page == page && b.first_line().starts_with(first))
        .collect();
    assert_eq!(matching.len(), 1, "{page}: one block starting {first:?}");
    matching.pop().unwrap()
}

/// Which test runs each block: its page, how its first line starts, and
/// the test (in this file unless a path is given).
const RUN_BY: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "make demo",
        "quick_start_is_the_two_make_targets",
    ),
    (
        "README.md",
        "v=v",
        "cli/tests/dist.rs: the_readme_installs_the_archive_and_uses_the_action",
    ),
    (
        "README.md",
        "cargo install --locked --path cli",
        "install_from_source_runs (the install itself: hack/install-check.sh)",
    ),
    (
        "README.md",
        "verify-pods check ",
        "use_examples_run_live_and_offline",
    ),
    (
        "README.md",
        "Verifying pod scheduling...",
        "tests/tests/golden.rs: readme_text_example_is_a_golden",
    ),
    (
        "README.md",
        "- name: Verify pods",
        "cli/tests/dist.rs: the_readme_installs_the_archive_and_uses_the_action",
    ),
    (
        "docs/bash-function.md",
        "verify-pods bash render",
        "render_and_splice_examples_run",
    ),
    (
        "docs/bash-function.md",
        "export KWOK_VERIFY_PODS_DEADLINE_EPOCH",
        "host_script_example_runs",
    ),
    (
        "docs/migrating.md",
        "export KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS",
        "the_job_rule_export_keeps_upstreams_verdict",
    ),
    ("docs/outputs.md", "{", "json_keys_are_the_outputs_in_order"),
];

#[test]
fn every_example_is_run_by_a_test() {
    let mut unknown = Vec::new();
    for block in blocks() {
        let known = RUN_BY
            .iter()
            .any(|(page, first, _)| block.page == *page && block.first_line().starts_with(first));
        if !known {
            unknown.push(format!(
                "{}: ```{} {:?}",
                block.page,
                block.lang,
                block.first_line()
            ));
        }
    }
    assert!(
        unknown.is_empty(),
        "examples no test runs (run them here and add them to RUN_BY):\n{}",
        unknown.join("\n")
    );
    // And every entry still has its block.
    for (page, first, _) in RUN_BY {
        block(page, first);
    }
}

// --------------------------------------------------------- running them

/// A directory to run examples in, holding the bundled sample as
/// `pods.json` and `events.json`.
fn sample_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["pods.json", "events.json"] {
        fs::copy(
            workspace_root().join("samples").join(name),
            dir.path().join(name),
        )
        .unwrap();
    }
    dir
}

/// `bash -c COMMAND` in `dir` with the built verify-pods first on PATH,
/// and none of the user's settings; `env` (a replay server's) when given.
fn shell(command: &str, dir: &Path, env: Option<&KubeEnv>) -> Output {
    let mut cmd = Command::new("bash");
    match env {
        Some(env) => {
            env.apply(&mut cmd);
        }
        None => {
            verify_pods_tests::without_user_settings(&mut cmd);
        }
    }
    let inherited = cmd
        .get_envs()
        .find(|(name, _)| *name == "PATH")
        .and_then(|(_, value)| value.map(|v| v.to_owned()))
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    let bin = binary("verify-pods").parent().unwrap().to_owned();
    let mut path = bin.into_os_string();
    path.push(":");
    path.push(inherited);
    cmd.env("PATH", path)
        .env(DEADLINE_ENV, "0")
        .args(["-c", &format!("set -o pipefail; {command}")])
        .current_dir(dir);
    run(&mut cmd)
}

fn describe(command: &str, output: &Output) -> String {
    format!(
        "{command}: exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    )
}

/// Nine running pods: a pass.
fn passing() -> State {
    State::new(web_pods(9), vec![])
}

/// Nine running pods and one unschedulable, with its event: a failure.
fn failing() -> State {
    let mut pods: Vec<Value> = web_pods(9);
    let waiting = Pod::unschedulable("zz-training", "trainer-0");
    pods.push(waiting.to_json());
    State::new(pods, vec![failed_scheduling_event(&waiting, 90, 4)])
}

#[test]
fn quick_start_is_the_two_make_targets() {
    let commands = block("README.md", "make demo").commands();
    assert_eq!(commands, ["make demo", "make test"]);
    let makefile = fs::read_to_string(workspace_root().join("Makefile")).unwrap();
    for target in ["demo:", "test:"] {
        assert!(
            makefile.lines().any(|line| line.starts_with(target)),
            "the Makefile has no target {target}"
        );
    }
}

/// The Use examples: the live ones against a replay server through the
/// real kubectl (a pass), the offline one on the bundled sample (a failure).
#[test]
fn use_examples_run_live_and_offline() {
    let server = Server::serve(passing()).expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let dir = sample_dir();
    for command in block("README.md", "verify-pods check ").commands() {
        let output = shell(&command, dir.path(), Some(&env));
        let expected = if command.contains("--snapshot pods.json") {
            1
        } else {
            0
        };
        assert_eq!(code(&output), expected, "{}", describe(&command, &output));
        if command.contains("--format json") {
            let result: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(result["verdict"], "pass");
        }
    }
}

/// The install from source, but for what hack/install-check.sh checks
/// (`cargo install`, kubectl's plugin lookup): the version line, the
/// completions and the man pages, written into a directory of the test's.
#[test]
fn install_from_source_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let commands = block("README.md", "cargo install --locked --path cli").commands();
    let mut ran = 0;
    for command in commands {
        if command.starts_with("cargo install") || command.starts_with("kubectl ") {
            continue;
        }
        // Absolute paths go under the test's directory, which has them.
        let command = command.replace(" /", &format!(" {root}/"));
        let redirected = command.split("> ").nth(1);
        for word in command.split_whitespace().filter(|w| w.starts_with(&root)) {
            let dir = if Some(word) == redirected {
                Path::new(word).parent().unwrap()
            } else {
                Path::new(word)
            };
            fs::create_dir_all(dir).unwrap();
        }
        let output = shell(&command, dir.path(), None);
        assert_eq!(code(&output), 0, "{}", describe(&command, &output));
        if command == "verify-pods --version" {
            let line = text(&output.stdout);
            assert!(
                line.starts_with("verify-pods ") && line.contains(" (commit "),
                "{line}"
            );
        }
        ran += 1;
    }
    assert_eq!(ran, 3, "the version, the completions and the man pages");
    assert!(dir
        .path()
        .join("etc/bash_completion.d/verify-pods")
        .is_file());
    assert!(dir
        .path()
        .join("usr/local/share/man/man1/verify-pods-check.1")
        .is_file());
}

// ------------------------------------------------------ the bash function

/// The validate-scheduling.sh fixture and its lib/ in `dir`; `directives`
/// false leaves out its `# shellcheck source=` lines, as a host without them.
fn host_script(dir: &Path, directives: bool) -> PathBuf {
    let fixtures = workspace_root().join("scriptgen/tests/fixtures");
    fs::create_dir_all(dir.join("lib")).unwrap();
    for entry in fs::read_dir(fixtures.join("lib")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join("lib").join(entry.file_name())).unwrap();
    }
    let script = fs::read_to_string(fixtures.join("validate-scheduling.sh")).unwrap();
    let script: String = script
        .lines()
        .filter(|line| directives || !line.starts_with("# shellcheck source="))
        .map(|line| format!("{line}\n"))
        .collect();
    let path = dir.join("validate-scheduling.sh");
    fs::write(&path, script).unwrap();
    path
}

/// docs/bash-function.md's commands, in its order: render, render the
/// wrapper, show the splice, apply it, check it (0: up to date).
#[test]
fn render_and_splice_examples_run() {
    let dir = tempfile::tempdir().unwrap();
    let script = host_script(dir.path(), true);
    for command in block("docs/bash-function.md", "verify-pods bash render").commands() {
        let command = command.replace("SCRIPT", &script.display().to_string());
        let output = shell(&command, dir.path(), None);
        assert_eq!(code(&output), 0, "{}", describe(&command, &output));
    }
    for rendered in ["verify_pods.sh", "verify-pods.sh", "lib/verify-pods.sh"] {
        let syntax = run(Command::new("bash")
            .arg("-n")
            .arg(dir.path().join(rendered)));
        assert_eq!(code(&syntax), 0, "{rendered}: {}", text(&syntax.stderr));
    }
    let spliced = fs::read_to_string(&script).unwrap();
    // (The fixture also shows `verify_pods() {` in a here-document.)
    assert!(
        !spliced.contains("\nverify_pods() {\n    log_info"),
        "the definition is gone"
    );
    assert!(spliced.contains(
        "# shellcheck source=lib/verify-pods.sh\nsource \"${SCRIPT_DIR}/lib/verify-pods.sh\"\n"
    ));
}

/// What docs/bash-function.md says the splice adds to a host whose
/// `source` lines carry no `# shellcheck source=` directive: the `source`
/// line alone, in the host's style.
#[test]
fn the_splice_writes_a_directive_only_where_the_host_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let script = host_script(dir.path(), false);
    let command = format!(
        "verify-pods bash splice {} --lib lib/verify-pods.sh --write",
        script.display()
    );
    let output = shell(&command, dir.path(), None);
    assert_eq!(code(&output), 0, "{}", describe(&command, &output));
    let spliced = fs::read_to_string(&script).unwrap();
    assert!(
        spliced.contains("\nsource \"${SCRIPT_DIR}/lib/verify-pods.sh\"\n"),
        "{spliced}"
    );
    assert!(!spliced.contains("# shellcheck source="), "{spliced}");
    assert!(says(
        "docs/bash-function.md",
        "A `# shellcheck source=lib/verify-pods.sh` line goes above it only when the script has such a directive"
    ));
}

/// docs/bash-function.md's host script: a function rendered with the
/// features the page names, the host's variables handed on. Unset and
/// empty, the epoch means none (no error, no warning); a failure saves its
/// artifacts under the host's directory; an epoch long past returns 2.
#[test]
fn host_script_example_runs() {
    let example = block(
        "docs/bash-function.md",
        "export KWOK_VERIFY_PODS_DEADLINE_EPOCH",
    )
    .body;
    let dir = tempfile::tempdir().unwrap();
    // The features the page renders the function with, from its own words.
    let features = read_page("docs/bash-function.md")
        .split("rendered or spliced `--with ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("the host script names its features")
        .to_owned();
    let render = format!("verify-pods bash render --with {features} > verify_pods.sh");
    let rendered = shell(&render, dir.path(), None);
    assert_eq!(code(&rendered), 0, "{}", describe(&render, &rendered));
    let script =
        format!("set -u\nsource ./verify_pods.sh\nstatus=0\n{example}echo \"status=$status\"\n");
    let cases = [
        (
            "unset KWOK_SYNC_DEADLINE_EPOCH KWOK_DEBUG_ARTIFACTS_DIR",
            passing(),
            "status=0",
        ),
        ("export KWOK_SYNC_DEADLINE_EPOCH=", passing(), "status=0"),
        (
            "export KWOK_DEBUG_ARTIFACTS_DIR=$PWD/debug",
            failing(),
            "status=1",
        ),
        // An epoch long past: the check is cut short, could not observe.
        ("export KWOK_SYNC_DEADLINE_EPOCH=1", passing(), "status=2"),
    ];
    for (host, state, status) in cases {
        let server = Server::serve(state).expect("server");
        let env = KubeEnv::new(&server.url()).expect("kube env");
        let output = shell(&format!("{host}\n{script}"), dir.path(), Some(&env));
        let described = describe(host, &output);
        assert!(
            text(&output.stdout).ends_with(&format!("{status}\n")),
            "{described}"
        );
        assert!(!text(&output.stderr).contains("must be"), "{described}");
    }
    for artifact in ["pods.json", "report.json"] {
        assert!(
            dir.path()
                .join("debug/verify-pods")
                .join(artifact)
                .is_file(),
            "{artifact}"
        );
    }
}

// --------------------------------------------------------------- the rest

/// docs/migrating.md's export keeps upstream's verdict on a PyTorchJob's
/// pending pods, which the default (exact `Job`) counts.
#[test]
fn the_job_rule_export_keeps_upstreams_verdict() {
    let export = block(
        "docs/migrating.md",
        "export KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS",
    )
    .commands();
    let pods = case("owner-kinds-pytorchjob").pods();
    let check = format!(
        "verify-pods check --snapshot {} > /dev/null",
        pods.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let default = shell(&check, dir.path(), None);
    assert_eq!(code(&default), 1, "{}", describe(&check, &default));
    let exported = format!("{}; {check}", export.join("; "));
    let output = shell(&exported, dir.path(), None);
    assert_eq!(code(&output), 0, "{}", describe(&exported, &output));
}

/// An example of JSON with comments without them: each line up to `//`.
fn without_comments(example: &str) -> String {
    example
        .lines()
        .map(|line| line.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The keys of the outermost object of `json`, in order. It reads JSON as
/// written, and also the docs' examples, whose `|` between alternatives is
/// skipped like any other character outside a string.
fn keys_in_order(json: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let (mut depth, mut in_string, mut current) = (0, false, String::new());
    let mut chars = json.chars();
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => {
                in_string = false;
                let next = chars.clone().find(|c| !c.is_whitespace());
                if depth == 1 && next == Some(':') {
                    keys.push(std::mem::take(&mut current));
                }
                current.clear();
            }
            (true, _) => current.push(c),
            (false, '"') => in_string = true,
            (false, '{' | '[') => depth += 1,
            (false, '}' | ']') => depth -= 1,
            _ => {}
        }
    }
    keys
}

/// docs/outputs.md's JSON shows every key `--format json` prints, in its order.
#[test]
fn json_keys_are_the_outputs_in_order() {
    let example = block("docs/outputs.md", "{").body;
    let sample = sample_dir();
    let output = shell(
        "verify-pods check --snapshot pods.json --events events.json --format json",
        sample.path(),
        None,
    );
    assert_eq!(code(&output), 1, "{}", text(&output.stderr));
    let printed = keys_in_order(&text(&output.stdout));
    assert_eq!(keys_in_order(&without_comments(&example)), printed);
}

/// README, "Exit codes": an error the check finds is one line
/// `verify-pods: error: …`; a command line that cannot be parsed gets the
/// parser's usage error, its first line starting `error:`. Both exit 2.
#[test]
fn errors_look_as_the_readme_says() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("pods.json"), "{\"items\": [\n{\n\n x").unwrap();
    let bad_snapshot = shell("verify-pods check --snapshot pods.json", dir.path(), None);
    assert_eq!(code(&bad_snapshot), 2);
    let stderr = text(&bad_snapshot.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("verify-pods: error: pods.json:4:"),
        "{stderr}"
    );
    let usage = shell("verify-pods check --list-limit", dir.path(), None);
    assert_eq!(code(&usage), 2);
    let stderr = text(&usage.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.lines().count() > 1,
        "{stderr}"
    );
    assert!(says(
        "README.md",
        "`verify-pods: error: ` then what (`pods.json:4:2: invalid JSON: …`"
    ));
    assert!(says(
        "README.md",
        "a few lines, the first starting `error:`"
    ));
}

/// An empty KWOK_VERIFY_PODS_DEADLINE_EPOCH means unset, as the README's
/// flags table says (the bash function: `host_script_example_runs`).
#[test]
fn an_empty_epoch_variable_means_unset() {
    let pods = workspace_root().join("samples/pods.json");
    let output = run(checker_command()
        .args(["check", "--snapshot"])
        .arg(&pods)
        .env("KWOK_VERIFY_PODS_DEADLINE_EPOCH", ""));
    assert_eq!(code(&output), 1, "{}", text(&output.stderr));
    assert!(says("README.md", "| 0 (unset; so is empty) |"));
}

/// `check --help` names every file `--save-dir` saves.
#[test]
fn save_dir_help_names_every_artifact() {
    let help = text(&run(checker_command().args(["check", "--help"])).stdout);
    let save_dir = help
        .split("--save-dir <DIR>")
        .nth(1)
        .and_then(|rest| rest.split("[env:").next())
        .expect("--save-dir in the help");
    for artifact in ARTIFACTS {
        assert!(
            save_dir.contains(artifact),
            "--save-dir's help leaves out {artifact}:{save_dir}"
        );
    }
}

/// `--format github`: one `::error` for the verdict and one per group, as
/// `check --help` and the README say.
#[test]
fn github_format_gives_one_error_per_group() {
    let case = case("digest-limit-1");
    let output = run(checker_command()
        .args(["check", "--format", "github", "--snapshot"])
        .arg(case.pods())
        .arg("--events")
        .arg(case.events()));
    let errors = text(&output.stdout)
        .lines()
        .filter(|l| l.starts_with("::error"))
        .count();
    let json = run(checker_command()
        .args(["check", "--format", "json", "--snapshot"])
        .arg(case.pods()));
    let result: Value = serde_json::from_slice(&json.stdout).unwrap();
    let groups = result["unscheduled_groups"].as_array().unwrap().len()
        + result["failed_groups"].as_array().unwrap().len();
    assert!(
        groups > 1 && groups < 9,
        "a case with a few groups: {groups}"
    );
    assert_eq!(errors, 1 + groups);
    let help = text(&run(checker_command().args(["check", "--help"])).stdout);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("one per group of unscheduled or failed pods"),
        "{help}"
    );
}

/// The README's local krew install names the archive: `--manifest` alone
/// downloads the URL the manifest names (cli/tests/dist.rs installs the
/// way krew does, with both).
#[test]
fn the_readme_krew_install_names_the_archive() {
    assert!(says(
        "README.md",
        "`kubectl krew install --manifest verify-pods.yaml --archive verify-pods-$v-$t.tar.gz`"
    ));
}

// ------------------------------------------------------------ the shapes

/// The README stays one a user finishes, every docs/ page is linked from
/// it, and BENCHMARKS.md stays a reference.
#[test]
fn the_readme_is_short_and_links_every_page() {
    let readme = read_page("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: move a part to docs/"
    );
    for page in pages().iter().filter(|page| page.starts_with("docs/")) {
        assert!(
            readme.contains(&format!("]({page})")),
            "README.md does not link {page}"
        );
    }
    let benchmarks = read_page("BENCHMARKS.md");
    let lines = benchmarks.lines().count();
    assert!(lines <= 600, "BENCHMARKS.md has {lines} lines");
}

/// Whether `text` names an issue by its number ("issue 29", "Issue 30").
fn names_an_issue(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.match_indices("issue").any(|(at, word)| {
        let rest = lower[at + word.len()..].trim_start_matches('s');
        rest.strip_prefix(' ')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// Help texts, contract.json's words and the generated files say what a
/// thing does, never which issue made it (git and CHANGELOG.md keep that).
#[test]
fn words_users_read_name_no_issue() {
    let mut found = Vec::new();
    let subcommands = [
        "",
        "check",
        "triage",
        "programs",
        "bash",
        "bash render",
        "bash splice",
        "completions",
        "man",
    ];
    for subcommand in subcommands {
        let help = run(checker_command()
            .args(subcommand.split_whitespace())
            .arg("--help"));
        for line in text(&help.stdout)
            .lines()
            .filter(|line| names_an_issue(line))
        {
            found.push(format!("verify-pods {subcommand} --help: {line}"));
        }
    }
    let contract: Value =
        serde_json::from_str(&read_page("checker/programs/contract.json")).expect("contract.json");
    let mut strings = vec![&contract];
    while let Some(value) = strings.pop() {
        match value {
            Value::String(words) if names_an_issue(words) => {
                found.push(format!("contract.json: {words}"))
            }
            Value::Array(items) => strings.extend(items),
            Value::Object(fields) => strings.extend(fields.values()),
            _ => {}
        }
    }
    for generated in ["generated/verify-pods.sh", "generated/verify_pods.sh"] {
        for line in read_page(generated)
            .lines()
            .filter(|line| names_an_issue(line))
        {
            found.push(format!("{generated}: {line}"));
        }
    }
    assert!(found.is_empty(), "issue numbers:\n{}", found.join("\n"));
    assert!(names_an_issue("(issue 29)") && names_an_issue("Issues 22 and 24"));
    assert!(!names_an_issue("an issue of taste"));
}

/// A heading's anchor as GitHub makes it: lower case, punctuation but `-`
/// and `_` dropped, spaces made `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every relative link of README.md and docs/*.md (and the pages they
/// point into) names a file that exists, and a heading of it when it has
/// an anchor: a section moved or renamed breaks this test, not a reader.
#[test]
fn every_link_of_the_docs_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = read_page(&page);
        let dir = Path::new(&page).parent().unwrap().to_owned();
        for target in text
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                PathBuf::from(&page)
            } else {
                dir.join(file)
            };
            let Ok(linked) = fs::read_to_string(workspace_root().join(&file)) else {
                broken.push(format!("{page}: {target}: no file {}", file.display()));
                continue;
            };
            let anchors: Vec<String> = linked
                .lines()
                .filter_map(|line| {
                    line.trim_start_matches('#')
                        .strip_prefix(' ')
                        .filter(|_| line.starts_with('#'))
                })
                .map(anchor_of)
                .collect();
            if !anchor.is_empty() && !anchors.iter().any(|a| a == anchor) {
                broken.push(format!("{page}: {target}: no heading with that anchor"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert_eq!(
        anchor_of("JSON (`--format json`, and `report.json` in the artifacts)"),
        "json---format-json-and-reportjson-in-the-artifacts"
    );
}
