//! Issue 12, item 2: a check cancelled by SIGTERM, SIGINT or SIGHUP (how CI
//! systems cancel a job) stops its kubectl and kubectl's children, removes
//! the partial artifacts of --save-dir, and ends by that same signal, within
//! a second. Real processes: a stub kubectl that prints half a document and
//! sleeps, with a child of its own (kubectl runs in its own process group,
//! so a signal to the checker or to the checker's group misses it).

use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use verify_pods_tests::{read_pid, survivors};

/// The longest a cancelled check may take to end, and to stop its kubectl.
const WITHIN: Duration = Duration::from_secs(1);

/// Poll `ready` every 10 ms for up to 10 s.
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `kill -SIGNAL TARGET` (a pid, or `-PGID` for a group), by the real tool.
fn send(signal: &str, target: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, "--", target])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {signal} {target}");
}

/// The stub kubectl, told to record its pid and its child's, print half a
/// List (so a partial copy is being saved), and wait for its child.
fn hanging_kubectl(dir: &Path, command: &mut Command) -> PathBuf {
    let partial = dir.join("partial-pods.json");
    fs::write(&partial, "{\"items\": [").unwrap();
    command
        .envs(verify_pods_tests::stub_kubectl_env_one_request())
        .env("STUB_PODS", &partial)
        .env("STUB_AFTER", "hang")
        .env("STUB_PID_DIR", dir);
    verify_pods_tests::install_stub_kubectl(&dir.join("bin"))
}

struct Cancelled {
    status: std::process::ExitStatus,
    sent: Instant,
    took: Duration,
    kubectl: u32,
    child: u32,
}

/// Start a live check against the hanging kubectl, wait until its partial
/// copy of the pods is being saved, send `signal` (to the checker, or to
/// its whole process group), and wait for the check to end.
fn cancel(signal: &str, to_group: bool, dir: &Path, save: &Path) -> Cancelled {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("verify-pods"));
    let kubectl = hanging_kubectl(dir, &mut command);
    let mut check: Child = command
        .args(["check", "--deadline", "0", "--kubectl-timeout", "60"])
        .arg("--kubectl")
        .arg(&kubectl)
        .arg("--save-dir")
        .arg(save)
        .env_remove("KWOK_VERIFY_PODS_ARTIFACT_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let partial = save.join(".pods.json.partial");
    wait_for("kubectl started and its output is being saved", || {
        read_pid(&dir.join("child.pid")).is_some()
            && fs::metadata(&partial).is_ok_and(|m| m.len() > 0)
    });
    let kubectl = read_pid(&dir.join("kubectl.pid")).unwrap();
    let child = read_pid(&dir.join("child.pid")).unwrap();
    let target = if to_group {
        format!("-{}", check.id())
    } else {
        check.id().to_string()
    };
    let sent = Instant::now();
    send(signal, &target);
    let status = check.wait().unwrap();
    let took = sent.elapsed();
    Cancelled {
        status,
        sent,
        took,
        kubectl,
        child,
    }
}

fn assert_cleanly_cancelled(signal: &str, number: i32, to_group: bool) {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("artifacts");
    let cancelled = cancel(signal, to_group, dir.path(), &save);
    let case = format!(
        "SIG{signal} to the checker{}",
        if to_group { "'s group" } else { "" }
    );
    let left = survivors(
        &[cancelled.kubectl, cancelled.child],
        cancelled.sent + WITHIN,
        || true,
    );
    assert_eq!(
        cancelled.status.signal(),
        Some(number),
        "{case}: {:?}",
        cancelled.status
    );
    assert!(
        cancelled.took < WITHIN,
        "{case}: ended after {:?}",
        cancelled.took
    );
    assert!(
        left.is_empty(),
        "{case}: kubectl or its child still runs: {left:?}"
    );
    let artifacts: Vec<_> = fs::read_dir(&save)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(artifacts.is_empty(), "{case}: left {artifacts:?}");
}

#[test]
fn sigterm_stops_kubectl_removes_partials_and_ends_by_sigterm() {
    assert_cleanly_cancelled("TERM", 15, false);
    assert_cleanly_cancelled("TERM", 15, true);
}

#[test]
fn sigint_stops_kubectl_removes_partials_and_ends_by_sigint() {
    assert_cleanly_cancelled("INT", 2, false);
    assert_cleanly_cancelled("INT", 2, true);
}

#[test]
fn sighup_stops_kubectl_removes_partials_and_ends_by_sighup() {
    assert_cleanly_cancelled("HUP", 1, true);
}
