//! The wrapper sandbox: a hermetic PATH holding only the tools the
//! generated bash needs plus the stub kubectl (tests/fixtures/kubectl-stub),
//! an empty TMPDIR, and the paths of the generated files and samples. It is
//! the tests' one runner of the generated bash.

use crate::{binary, install_stub_kubectl, run, stub_kubectl_env, workspace_root};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

/// A file of scriptgen's own fixtures (scriptgen/tests/fixtures).
pub fn scriptgen_fixture(name: &str) -> PathBuf {
    workspace_root().join("scriptgen/tests/fixtures").join(name)
}

/// A recorded snapshot of samples/.
pub fn sample(name: &str) -> PathBuf {
    workspace_root().join("samples").join(name)
}

/// samples/pods.json, as JSON text, with the owner references removed from
/// every pod whose owners' JSON contains `owner_text` (a pod owned by
/// nothing is checked by every rule: upstream's and the exact one).
pub fn sample_pods_disowned(owner_text: &str) -> String {
    let pods = fs::read(sample("pods.json")).expect("samples/pods.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&pods).expect("the sample is JSON");
    for pod in doc["items"].as_array_mut().expect("a list's items") {
        let metadata = pod["metadata"].as_object_mut().expect("a pod's metadata");
        let owners = metadata.get("ownerReferences").map(|o| o.to_string());
        if owners.is_some_and(|o| o.contains(owner_text)) {
            metadata.remove("ownerReferences");
        }
    }
    doc.to_string()
}

/// The runnable wrapper, generated/verify-pods.sh.
pub fn wrapper() -> PathBuf {
    workspace_root().join("generated/verify-pods.sh")
}

/// The function alone, generated/verify_pods.sh.
pub fn function_file() -> PathBuf {
    workspace_root().join("generated/verify_pods.sh")
}

/// The `verify-pods` binary, built by `make build` before the tests run
/// (scriptgen's tests cannot name another package's binary).
pub fn verify_pods_bin() -> PathBuf {
    binary("verify-pods")
}

/// What the checker prints for a saved snapshot (and events).
pub fn checker_offline(pods: &Path, events: Option<&Path>, extra: &[&str]) -> Output {
    let mut cmd = Command::new(verify_pods_bin());
    cmd.arg("check").arg("--snapshot").arg(pods);
    if let Some(events) = events {
        cmd.arg("--events").arg(events);
    }
    // Nothing from the environment: no KWOK_VERIFY_PODS_*, NO_COLOR, or a
    // CI runner's GITHUB_STEP_SUMMARY to append to.
    cmd.args(extra).env_clear();
    run(&mut cmd)
}

/// The tools the generated bash (and the stub) run, besides kubectl.
/// (Not tail: the function does without it, see [`Sandbox::with_tool`].)
const TOOLS: [&str; 10] = [
    "bash", "env", "jq", "timeout", "mktemp", "rm", "mkdir", "cp", "sleep", "cat",
];

/// A tool's path on the caller's PATH.
pub fn find_on_path(tool: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("{tool} is not installed (make tools installs the test tools)"))
}

/// A sandbox for one run of the generated bash: a PATH directory with the
/// needed tools (and, unless removed, the stub as `kubectl`), an empty
/// TMPDIR, and the stub's settings.
pub struct Sandbox {
    pub dir: TempDir,
    env: Vec<(String, String)>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A fresh sandbox: the tools, the stub as `kubectl`, its settings.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let bin = dir.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        fs::create_dir_all(dir.path().join("tmp")).unwrap();
        for tool in TOOLS {
            std::os::unix::fs::symlink(find_on_path(tool), bin.join(tool)).unwrap();
        }
        install_stub_kubectl(&bin);
        let mut sandbox = Self {
            dir,
            env: Vec::new(),
        };
        for (name, value) in stub_kubectl_env() {
            sandbox.set(name, &value);
        }
        let log = sandbox.path("kubectl.log");
        sandbox.set("STUB_LOG", log.to_str().unwrap());
        sandbox
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn bin(&self) -> PathBuf {
        self.path("bin")
    }

    /// Set (or replace) an environment variable of the run.
    pub fn set(&mut self, name: &str, value: &str) -> &mut Self {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The stub prints these snapshots, one per `get pods` call.
    pub fn pods(&mut self, files: &[&Path]) -> &mut Self {
        let joined: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
        self.set("STUB_PODS", &joined.join(":"))
    }

    pub fn events(&mut self, file: &Path) -> &mut Self {
        self.set("STUB_EVENTS", file.to_str().unwrap())
    }

    /// Each list asked in one request, as a function without the feature
    /// paging asks it (and the checker and the wrapper with the default
    /// chunk size): the chunk size unset, which such a function would say
    /// it ignores.
    pub fn one_request(&mut self) -> &mut Self {
        for (name, value) in crate::stub_kubectl_env_one_request() {
            self.set(name, &value);
        }
        self.set(checker::contract::CHUNK_SIZE_ENV, "")
    }

    /// No kubectl on PATH at all.
    pub fn without_kubectl(&mut self) -> &mut Self {
        fs::remove_file(self.bin().join("kubectl")).unwrap();
        self
    }

    /// Put a bash script in front of the real jq: `before` runs first, with
    /// jq's arguments (`"${!#}"` is the program), then the real jq does the
    /// work unless `before` ended the script or replaced it (`exec`). Each
    /// run is a process of its own, as the function's runs of jq are.
    pub fn wrap_jq(&mut self, before: &str) -> &mut Self {
        let jq = self.bin().join("jq");
        let real = find_on_path("jq");
        fs::remove_file(&jq).unwrap();
        fs::write(
            &jq,
            format!("#!/bin/bash\n{before}\nexec '{}' \"$@\"\n", real.display()),
        )
        .unwrap();
        fs::set_permissions(&jq, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        self
    }

    /// Put another tool of the caller's PATH on the sandbox's PATH. The
    /// function runs without tail; with it (as on any system with
    /// coreutils), a saved page that does not end with a newline gets one,
    /// as the live checker saves it.
    pub fn with_tool(&mut self, tool: &str) -> &mut Self {
        std::os::unix::fs::symlink(find_on_path(tool), self.bin().join(tool)).unwrap();
        self
    }

    /// Write a file into the sandbox and return its path.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, contents).unwrap();
        path
    }

    /// A command with only the sandbox's environment.
    pub fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", self.bin())
            .env("TMPDIR", self.path("tmp"))
            .current_dir(self.dir.path());
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        cmd
    }

    /// Run the generated wrapper, executed through its shebang.
    pub fn run_wrapper(&self) -> Output {
        let wrapper = wrapper();
        assert!(
            wrapper.is_file(),
            "{} is missing: run `make generate`",
            wrapper.display()
        );
        run(&mut self.command(&wrapper))
    }

    /// Lines the stub logged: one per kubectl call.
    pub fn kubectl_calls(&self) -> Vec<String> {
        fs::read_to_string(self.path("kubectl.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// What the function left in TMPDIR (must be nothing).
    pub fn leftovers(&self) -> Vec<String> {
        fs::read_dir(self.path("tmp"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

/// `text` with every number of seconds (digits followed by `s` that ends
/// the word) replaced by `<N>s`.
pub fn without_seconds(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let is_seconds = i > start
            && chars.get(i) == Some(&'s')
            && !chars.get(i + 1).is_some_and(|c| c.is_alphanumeric());
        if is_seconds {
            out.push_str("<N>");
        } else if i > start {
            out.extend(&chars[start..i]);
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}
