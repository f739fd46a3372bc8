//! Issue 12, item 2: the generated bash, cancelled the way CI cancels a job
//! (SIGTERM, SIGINT or SIGHUP to the job's process group), stops its kubectl
//! and kubectl's children, removes its temporary files, and ends by that
//! same signal, within a second. `timeout` runs kubectl in a process group
//! of its own, which the job's signal misses. Real processes: bash, timeout
//! and a stub kubectl that sleeps with a child of its own.

use verify_pods_tests::sandbox;

use checker::contract::DEADLINE_ENV;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use verify_pods_tests::sandbox::{sample, Sandbox};
use verify_pods_tests::{read_pid, signal_job, survivors};

/// The longest a cancelled run may take to end, and to stop its kubectl.
const WITHIN: Duration = Duration::from_secs(1);

/// The stub kubectl, told to record its pid and its child's, and wait for
/// the child.
fn hanging_kubectl(sandbox: &mut Sandbox) {
    let pid_dir = sandbox.dir.path().to_str().unwrap().to_owned();
    sandbox
        .set("STUB_AFTER", "hang")
        .set("STUB_PID_DIR", &pid_dir);
}

/// The job: the wrapper leading a process group of its own, as a CI
/// runner or an interactive shell starts it.
fn start_job(sandbox: &Sandbox) -> Child {
    sandbox
        .command(&sandbox::wrapper())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// The PID a stand-in writes to `file` of the sandbox, once it has.
fn pid_written(sandbox: &Sandbox, file: &str, what: &str) -> u32 {
    let started = Instant::now();
    let path = sandbox.path(file);
    loop {
        if let Some(pid) = read_pid(&path) {
            return pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what} never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `to_group`: the signal goes to the job's process group (a CI runner's
/// cancel, ^C in a terminal); else to the job's PID alone, which the
/// function's subshell, timeout and kubectl do not receive (issue 21).
fn assert_cleanly_cancelled(signal: &str, number: i32, to_group: bool) {
    let mut sandbox = Sandbox::new();
    sandbox
        .pods(&[&sample("pods.json")])
        .events(&sample("events.json"))
        .set(DEADLINE_ENV, "0");
    hanging_kubectl(&mut sandbox);
    let mut job = start_job(&sandbox);
    let child = pid_written(&sandbox, "child.pid", "kubectl");
    let kubectl = read_pid(&sandbox.path("kubectl.pid")).unwrap();
    let sent = Instant::now();
    let (status, took) = signal_job(&mut job, signal, to_group);
    // SIGKILL takes effect when the killed process next runs, and the
    // job's shell may end before the function's subshell has cleaned up
    // (it has no trap, and the host may set none): look again until a
    // second after the signal; then clean up before asserting.
    let left = survivors(&[kubectl, child], sent + WITHIN, || {
        sandbox.leftovers().is_empty()
    });
    assert_eq!(status.signal(), Some(number), "SIG{signal}: {status:?}");
    assert!(took < WITHIN, "SIG{signal}: ended after {took:?}");
    assert!(
        left.is_empty(),
        "SIG{signal}: kubectl or its child still runs: {left:?}"
    );
    assert_eq!(
        sandbox.leftovers(),
        Vec::<String>::new(),
        "SIG{signal}: temp files left"
    );
}

/// One test a line: `name: signal, its number, whether to the group;`.
macro_rules! cleanly_cancelled {
    ($($name:ident: $signal:literal, $number:literal, $to_group:literal;)*) => {$(
        #[test]
        fn $name() {
            assert_cleanly_cancelled($signal, $number, $to_group);
        }
    )*};
}

cleanly_cancelled! {
    sigterm_to_the_job_stops_kubectl_and_ends_by_sigterm: "TERM", 15, true;
    sigterm_to_the_callers_pid_stops_kubectl_and_ends_by_sigterm: "TERM", 15, false;
    sigint_to_the_callers_pid_stops_kubectl_and_ends_by_sigint: "INT", 2, false;
    sighup_to_the_callers_pid_stops_kubectl_and_ends_by_sighup: "HUP", 1, false;
    sigint_to_the_job_stops_kubectl_and_ends_by_sigint: "INT", 2, true;
    sighup_to_the_job_stops_kubectl_and_ends_by_sighup: "HUP", 1, true;
}

/// Issue 31: at interval 30, a signal to the host's PID while the function
/// sleeps between attempts ends it within a second (the sleep runs in the
/// background, so the traps run at once), by that signal, files removed.
#[test]
fn a_signal_mid_sleep_at_interval_30_ends_it_within_a_second() {
    for (signal, number) in [("TERM", 15), ("INT", 2), ("HUP", 1)] {
        let mut sandbox = Sandbox::new();
        sandbox
            .pods(&[&sample("pods.json")])
            .events(&sample("events.json"))
            .set(DEADLINE_ENV, "120")
            .set(checker::contract::INTERVAL_ENV, "30");
        let mut job = start_job(&sandbox);
        let started = Instant::now();
        while sandbox.kubectl_calls().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(10), "no list");
            std::thread::sleep(Duration::from_millis(10));
        }
        // The first attempt's jq, then the sleep of 30 s.
        std::thread::sleep(Duration::from_millis(1500));
        assert!(job.try_wait().unwrap().is_none(), "still settling");
        let (status, took) = signal_job(&mut job, signal, false);
        assert_eq!(status.signal(), Some(number), "SIG{signal}: {status:?}");
        assert!(took < WITHIN, "SIG{signal}: ended after {took:?}");
        let clean = Instant::now() + WITHIN;
        while !sandbox.leftovers().is_empty() && Instant::now() < clean {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(sandbox.leftovers(), Vec::<String>::new(), "SIG{signal}");
    }
}

/// report.jq runs in the background while the workloads' lists are read
/// (issue 30). A signal to the host's PID alone, which jq does not receive,
/// stops it too: a cancelled check leaves no jq parsing a large cluster's
/// pods. The report's jq is a stand-in that records its PID and sleeps (the
/// run given `--arg workloads true`); every other run is the real jq.
#[test]
fn a_signal_while_report_jq_runs_stops_it() {
    let mut sandbox = Sandbox::new();
    let workloads = verify_pods_tests::workspace_root()
        .join("tests/corpus/workloads-all-created/workloads.json");
    sandbox
        .pods(&[&sample("pods.json")])
        .events(&sample("events.json"))
        .set(DEADLINE_ENV, "0");
    for (name, value) in verify_pods_tests::stub_workloads_env(Some(&workloads)) {
        sandbox.set(name, &value);
    }
    let pid_dir = sandbox.dir.path().to_str().unwrap().to_owned();
    sandbox.set("STUB_PID_DIR", &pid_dir).wrap_jq(
        "if [[ \" $* \" == *\" --arg workloads true \"* ]]; then\n\
         \x20 echo \"$$\" >\"$STUB_PID_DIR/jq.pid\"\n\
         \x20 exec sleep 30\n\
         fi",
    );
    let mut job = start_job(&sandbox);
    let report = pid_written(&sandbox, "jq.pid", "report.jq");
    let sent = Instant::now();
    let (status, took) = signal_job(&mut job, "TERM", false);
    let left = survivors(&[report], sent + WITHIN, || sandbox.leftovers().is_empty());
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert!(took < WITHIN, "ended after {took:?}");
    assert!(left.is_empty(), "report.jq still runs: {left:?}");
    assert_eq!(sandbox.leftovers(), Vec::<String>::new(), "temp files left");
}
