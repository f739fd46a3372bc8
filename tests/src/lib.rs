//! Test support for verify-pods: the recorded corpus, the built binaries, and
//! the real tools the parity tests compare against (jq 1.6, libjq 1.8 through
//! the PyPI `jq` module, bash with the generated wrapper and a stub kubectl).
//!
//! Everything here runs real programs; nothing computes an expected result.
#![forbid(unsafe_code)]

pub mod corpus;
pub mod driver;
pub mod lint;
pub mod replay;
pub mod rng;
pub mod sandbox;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use corpus::{bad_inputs, cases, Case};
pub use driver::{Driver, DRIVERS};

/// The start line both drivers print first, with its newline (progress.jq
/// before the first attempt): on stdout in text mode, on stderr with
/// `--format json`, also when the run then exits 2.
pub fn start_line() -> String {
    replay::expect::start_line(&checker::Engine::new().expect("the programs compile"))
}

/// The repository root (the workspace that holds `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives inside the workspace")
        .to_owned()
}

/// `target/<profile>/` of the running test binary (`…/deps/<test>-<hash>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    let deps = exe
        .parent()
        .expect("test binaries live in target/<profile>/deps");
    deps.parent()
        .expect("deps/ lives in target/<profile>/")
        .to_owned()
}

/// A workspace binary (`verify-pods`) of the running test's profile. Tests
/// never run cargo: `make test` and `make test-quick` build the workspace
/// once before any test runs (`cargo build --profile testing --workspace`), and a
/// binary older than a source it is built from fails the test, so a stale
/// one is never measured. (Cargo builds only the tested package's own
/// binaries for its integration tests: `CARGO_BIN_EXE_*` serves those.)
pub fn binary(name: &str) -> PathBuf {
    let path = profile_dir().join(name);
    let built = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}: run `make build` first", path.display()));
    if let Some(newer) = newest_source().filter(|(modified, _)| *modified > built) {
        panic!(
            "{} is older than {}: run `make build` (cargo build --profile testing --workspace)",
            path.display(),
            newer.1.display()
        );
    }
    path
}

/// What the workspace binaries are built from: every file under these.
const SOURCES: [&str; 6] = [
    "Cargo.lock",
    "checker/src",
    "checker/programs",
    "cli/src",
    "scriptgen/src",
    "scriptgen/templates",
];

/// The most recently modified source file, and when.
fn newest_source() -> Option<(std::time::SystemTime, PathBuf)> {
    fn walk(path: &Path, newest: &mut Option<(std::time::SystemTime, PathBuf)>) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.is_dir() {
            for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
                walk(&entry.path(), newest);
            }
        } else if let Ok(modified) = meta.modified() {
            if newest.as_ref().is_none_or(|(time, _)| modified > *time) {
                *newest = Some((modified, path.to_owned()));
            }
        }
    }
    let mut newest = None;
    for source in SOURCES {
        walk(&workspace_root().join(source), &mut newest);
    }
    newest
}

/// Run a command to completion with `stdin` closed; panics if it cannot start.
pub fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Output bytes as text (invalid UTF-8 shown as U+FFFD).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The exit code of a process that exited; panics if a signal killed it.
pub fn code(output: &Output) -> i32 {
    output.status.code().expect("exited, not killed")
}

/// The first line where `left` and `right` differ, each shown under its
/// name (`names`), for a failure message.
pub fn first_difference(left: &[u8], right: &[u8], names: [&str; 2]) -> String {
    let (left, right) = (
        String::from_utf8_lossy(left),
        String::from_utf8_lossy(right),
    );
    let width = names.iter().map(|name| name.len() + 1).max().unwrap_or(0);
    let [left_name, right_name] = names.map(|name| format!("{:width$}", format!("{name}:")));
    let (mut lefts, mut rights) = (left.split_inclusive('\n'), right.split_inclusive('\n'));
    for line in 1.. {
        match (lefts.next(), rights.next()) {
            (None, None) => return "differs only in invalid UTF-8".into(),
            (l, r) if l != r => {
                return format!(
                    "line {line}:\n    {left_name} {:?}\n    {right_name} {:?}",
                    l.unwrap_or("<end>"),
                    r.unwrap_or("<end>")
                )
            }
            _ => {}
        }
    }
    unreachable!("the texts differ, or the loop returned at their ends")
}

/// The string `key` of each object of the JSON array `array`, in order
/// (panics on anything else: the test's document is not what it says).
pub fn strings_of<'v>(array: &'v serde_json::Value, key: &str) -> Vec<&'v str> {
    let items = array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array}"));
    items
        .iter()
        .map(|item| {
            item[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string {key:?} in {item}"))
        })
        .collect()
}

/// A finished run the way a failing assertion shows it: the exit status,
/// then stdout and stderr whole.
pub fn shown(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    )
}

/// Asserts that the run of `who` (a driver, a command) exited `expected`;
/// when it did not, the failure shows the whole run.
#[track_caller]
pub fn assert_exit(output: &Output, expected: i32, who: impl std::fmt::Debug) {
    assert_eq!(
        output.status.code(),
        Some(expected),
        "{who:?}: {}",
        shown(output)
    );
}

/// Asserts that the run's stderr holds `words`; when it does not, the
/// failure shows that stderr.
#[track_caller]
pub fn assert_stderr_says(output: &Output, words: &str) {
    let stderr = text(&output.stderr);
    assert!(stderr.contains(words), "no {words:?} in stderr: {stderr}");
}

/// Asserts that `message` stands on exactly `count` lines of the run's
/// stderr ([`lines_of`]); when it does not, the failure names `who` and
/// shows the whole run.
#[track_caller]
pub fn assert_lines_of(
    output: &Output,
    message: &checker::contract::Message,
    count: usize,
    who: impl std::fmt::Debug,
) {
    assert_eq!(
        lines_of(&text(&output.stderr), message),
        count,
        "{who:?}: {}",
        shown(output)
    );
}

/// Whole seconds a run may take beyond its schedule on a loaded machine (2
/// cores shared by every test: `waited` is wall-clock time, the rest of the
/// output is exact).
pub const SLOW: u64 = 60;

/// The environment variables a user configures either driver with: every
/// knob's and every other setting's, from the contract
/// (checker/programs/contract.json).
pub fn user_settings() -> impl Iterator<Item = &'static str> {
    use checker::contract::{KNOBS, SETTINGS};
    KNOBS
        .into_iter()
        .map(|knob| knob.env)
        .chain(SETTINGS.into_iter().map(|setting| setting.env))
}

/// `cmd` without the user's settings ([`user_settings`]).
pub fn without_user_settings(cmd: &mut Command) -> &mut Command {
    for name in user_settings() {
        cmd.env_remove(name);
    }
    cmd
}

/// The checker with none of the user's settings ([`user_settings`]), and no
/// NO_COLOR.
pub fn checker_command() -> Command {
    let mut cmd = Command::new(binary("verify-pods"));
    without_user_settings(&mut cmd).env_remove("NO_COLOR");
    cmd
}

// ---------------------------------------------------------------- jq runs

/// One run of a canonical program, described the way `jq` is called: the
/// options come from the program's descriptor (checker::programs), only the
/// values are the test's.
#[derive(Debug, Clone)]
pub struct JqRun {
    /// The program and its descriptor.
    pub program: checker::programs::Program,
    /// The value of each variable, in the descriptor's order: a string for
    /// `--arg`, JSON for `--argjson`, a file path for `--slurpfile`.
    pub values: Vec<String>,
    /// The input document.
    pub input: PathBuf,
}

impl JqRun {
    /// The jq command-line arguments: `-c|-r`, the variables, the program, the input.
    pub fn argv(&self) -> Vec<String> {
        let mut argv = self.program.jq_options(|i, _| self.values[i].clone());
        argv.push(self.program.text.to_owned());
        argv.push(self.input.display().to_string());
        argv
    }

    /// Whether the program prints raw lines (`-r`) rather than JSON values.
    pub fn raw(&self) -> bool {
        self.program.output == checker::programs::Output::Lines
    }
}

/// What a jq-like tool did: exit status, stdout bytes, stderr text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl From<Output> for ToolOutput {
    fn from(out: Output) -> Self {
        ToolOutput {
            status: out.status.code().unwrap_or(-1),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The system jq (`/usr/bin/jq`, jq 1.6 on Debian bookworm; `JQ` overrides).
pub fn jq_path() -> PathBuf {
    std::env::var_os("JQ")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/jq"))
}

/// `jq --version`, e.g. `jq-1.6`.
pub fn jq_version() -> String {
    let out = run(Command::new(jq_path()).arg("--version"));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Run the system jq exactly like the bash function does.
pub fn jq(run_: &JqRun) -> ToolOutput {
    run(Command::new(jq_path()).args(run_.argv())).into()
}

/// Run many programs with libjq 1.8 (PyPI `jq`) in ONE Python process:
/// `tests/libjq.py --batch`, which mimics jq's flags.
pub fn libjq(runs: &[JqRun]) -> Vec<ToolOutput> {
    use std::io::Write;
    let argvs: Vec<Vec<String>> = runs.iter().map(JqRun::argv).collect();
    let mut child = Command::new("python3")
        .arg(workspace_root().join("tests/libjq.py"))
        .arg("--batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run python3 tests/libjq.py");
    let request = serde_json::to_vec(&argvs).expect("argv as JSON");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&request)
        .expect("write to libjq.py");
    let out = child.wait_with_output().expect("libjq.py ran");
    assert!(
        out.status.success(),
        "libjq.py --batch failed (is the PyPI jq module installed? `make tools`): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("libjq.py prints a JSON array");
    assert_eq!(results.len(), runs.len(), "one libjq result per run");
    results
        .into_iter()
        .map(|r| ToolOutput {
            status: r["status"].as_i64().expect("status") as i32,
            stdout: r["stdout"].as_str().expect("stdout").as_bytes().to_vec(),
            stderr: r["stderr"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

// ---------------------------------------------------------------- generated bash
// (the one runner of the generated wrapper is the sandbox: [`sandbox::Sandbox`])

// ---------------------------------------------------------------- stub kubectl

/// The one stub kubectl of the tests (its settings are documented in it).
pub fn stub_kubectl_fixture() -> PathBuf {
    workspace_root().join("tests/fixtures/kubectl-stub")
}

/// Put the stub into `dir` as `kubectl` (a symlink) unless it is there
/// already; returns its path.
pub fn install_stub_kubectl(dir: &Path) -> PathBuf {
    let path = dir.join("kubectl");
    if path.symlink_metadata().is_err() {
        std::fs::create_dir_all(dir).expect("the stub's directory");
        std::os::unix::fs::symlink(stub_kubectl_fixture(), &path).expect("link the stub kubectl");
    }
    path
}

/// The settings every run of the stub needs: the two queries it answers,
/// as the checker (and the bash rendered from its constants) asks them, and
/// the chunk size they are asked with: kubectl's 500, so that a recorded
/// paged list (one file per page) is asked page by page, as a server pages it.
/// The workloads are off: a test that serves them (`STUB_WORKLOADS`) turns
/// them on after these.
pub fn stub_kubectl_env() -> [(&'static str, String); 4] {
    [
        ("STUB_PODS_ARGS", first_page(checker::api::PODS)),
        ("STUB_EVENTS_ARGS", first_page(checker::api::EVENTS)),
        (
            checker::contract::CHUNK_SIZE_ENV,
            KUBECTL_CHUNK_SIZE.to_string(),
        ),
        (checker::contract::WORKLOADS.env, "false".to_owned()),
    ]
}

/// What serves a case's workloads through the stub and turns them on
/// (after [`stub_kubectl_env`]); nothing for a case without any.
pub fn stub_workloads_env(workloads: Option<&Path>) -> Vec<(&'static str, String)> {
    let Some(path) = workloads else {
        return Vec::new();
    };
    vec![
        ("STUB_WORKLOADS", path.display().to_string()),
        (checker::contract::WORKLOADS.env, "true".to_owned()),
    ]
}

/// [`stub_kubectl_env`] for one request (chunk size 0, the drivers'
/// default): the whole list is streamed and parsed as it comes, so a
/// partial copy is saved while kubectl still prints.
pub fn stub_kubectl_env_one_request() -> [(&'static str, String); 4] {
    let one = |list: checker::api::List| list.args(0, None).join(" ");
    [
        ("STUB_PODS_ARGS", one(checker::api::PODS)),
        ("STUB_EVENTS_ARGS", one(checker::api::EVENTS)),
        (checker::contract::CHUNK_SIZE_ENV, "0".to_owned()),
        (checker::contract::WORKLOADS.env, "false".to_owned()),
    ]
}

/// kubectl's own `--chunk-size` default: the chunk size the tests give the
/// drivers where a list comes in pages (a stub's page files, a server that
/// caps its pages below it). The drivers' own default, 0, asks everything
/// in one request, which no server pages.
pub const KUBECTL_CHUNK_SIZE: usize = 500;

/// kubectl's arguments for the first page of `list` at the stub's chunk
/// size ([`stub_kubectl_env`]): the stub answers it with the first page.
pub fn first_page(list: checker::api::List) -> String {
    list.args(KUBECTL_CHUNK_SIZE, None).join(" ")
}

// ---------------------------------------------------------------- processes

/// Start `cmd` leading a process group of its own, as a CI runner starts a
/// job (a test then signals or kills the whole group), with stdin closed
/// and stdout and stderr captured (`capture`) or dropped.
pub fn spawn_job(cmd: &mut Command, capture: bool) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let output = || {
        if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(output())
        .stderr(output())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"))
}

/// Send `signal` (`TERM`, `INT`, …) to `job`: to its process group with
/// `to_group` (a CI runner's cancel, ^C in a terminal), else to its PID
/// alone. How it ended, and how long after the signal.
pub fn signal_job(
    job: &mut std::process::Child,
    signal: &str,
    to_group: bool,
) -> (std::process::ExitStatus, std::time::Duration) {
    let target = if to_group {
        format!("-{}", job.id())
    } else {
        job.id().to_string()
    };
    let sent = std::time::Instant::now();
    let kill = run(Command::new("kill").args(["-s", signal, "--", &target]));
    assert!(
        kill.status.success(),
        "kill -s {signal} -- {target}: {}",
        text(&kill.stderr)
    );
    (job.wait().expect("the job ends"), sent.elapsed())
}

/// Whether `pid` is a running process (a zombie has stopped running).
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `PID (COMM) STATE …`: COMM may hold spaces and parentheses.
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next()),
            Some('Z' | 'X') | None
        ),
        Err(_) => false,
    }
}

/// The pid a stub wrote into `path`, once it has.
pub fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The processes of `pids` still running once `settled()` holds and none of
/// them runs, or once `by` has passed (SIGKILL takes effect when a killed
/// process next runs, so look again until then). They are killed before
/// they are returned: a failing test leaves none behind.
pub fn survivors(pids: &[u32], by: std::time::Instant, settled: impl Fn() -> bool) -> Vec<u32> {
    let left = || -> Vec<u32> { pids.iter().copied().filter(|pid| running(*pid)).collect() };
    while (!left().is_empty() || !settled()) && std::time::Instant::now() < by {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let left = left();
    for pid in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    left
}

/// How many lines of `stderr` are `message` (its words in order around
/// whatever values).
pub fn lines_of(stderr: &str, message: &checker::contract::Message) -> usize {
    let literals: Vec<&str> = message
        .pieces()
        .into_iter()
        .filter_map(|piece| match piece {
            checker::contract::Piece::Literal(text) => Some(text),
            checker::contract::Piece::Placeholder(_) => None,
        })
        .collect();
    stderr
        .lines()
        .filter(|line| {
            let mut rest = *line;
            literals.iter().all(|literal| match rest.find(literal) {
                Some(at) => {
                    rest = &rest[at + literal.len()..];
                    true
                }
                None => false,
            })
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_names_the_line_and_both_sides() {
        let said = first_difference(b"a\nb\nc\n", b"a\nB\n", ["jaq", "other"]);
        assert_eq!(said, "line 2:\n    jaq:   \"b\\n\"\n    other: \"B\\n\"");
        let shorter = first_difference(b"a\n", b"a\nb\n", ["golden", "actual"]);
        assert_eq!(
            shorter,
            "line 2:\n    golden: \"<end>\"\n    actual: \"b\\n\""
        );
    }

    #[test]
    fn strings_of_reads_each_objects_string() {
        let array = serde_json::json!([{"name": "a"}, {"name": "b", "x": 1}]);
        assert_eq!(strings_of(&array, "name"), ["a", "b"]);
    }
}
