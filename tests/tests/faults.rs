//! Fault tests: when the API server fails, `verify-pods check` (live) and
//! `generated/verify-pods.sh` exit 2 ("could not observe") and print no
//! status, never a verdict (0 or 1) on the empty or partial List a failing
//! kubectl still prints. A transient fault that kubectl retries by itself
//! gives the normal result.
//!
//! The state is built so that partial data would pass: the only
//! unschedulable pod is the last item of the list.

use checker::contract::{
    messages, CHUNK_SIZE_ENV, DEADLINE_ENV, DEADLINE_EPOCH, INTERVAL_ENV, KUBECTL_TIMEOUT_ENV,
};
use checker::Engine;
use std::process::Output;
use std::time::Duration;
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, web_pods, Pod};
use verify_pods_tests::replay::{
    coherence, expect, generated_wrapper, in_parallel, kubectl_binary, Fault, FaultRule, KubeEnv,
    KubeOptions, LogEntry, Resource, Server, State, Target,
};
use verify_pods_tests::{lines_of, run, text, Driver, DRIVERS, KUBECTL_CHUNK_SIZE, SLOW};
use Target::{PodsList, PodsPage};

/// Items per page when a fault aims at page 2.
const PAGE: usize = 3;
/// Nine running pods, then (last in list order) one unschedulable pod.
fn state() -> State {
    let mut pods = web_pods(9);
    let waiting = Pod::unschedulable("zz-training", "trainer-0");
    pods.push(waiting.to_json());
    State::new(pods, vec![failed_scheduling_event(&waiting, 90, 4)])
}

struct Outcome {
    output: Output,
    log: Vec<LogEntry>,
}

/// The server of [`state`] with `rules`, its pages capped at `page_size`.
fn server(rules: &[FaultRule], page_size: Option<usize>) -> Server {
    let mut builder = Server::builder().state(state());
    if let Some(n) = page_size {
        builder = builder.page_size(n);
    }
    for rule in rules {
        builder = builder.fault(rule.clone());
    }
    builder.start().expect("server")
}

/// The driver `path` against `env` with `env_vars`.
fn command(
    path: Driver,
    env: &KubeEnv,
    page_size: Option<usize>,
    env_vars: &[(&str, &str)],
) -> std::process::Command {
    let mut cmd = path.command(env);
    if page_size.is_some() {
        // Pages: the drivers ask for more than the server's cap gives.
        cmd.env(CHUNK_SIZE_ENV, KUBECTL_CHUNK_SIZE.to_string());
    }
    for (name, value) in env_vars {
        cmd.env(name, value);
    }
    cmd
}

fn run_with(
    rules: &[FaultRule],
    page_size: Option<usize>,
    path: Driver,
    env_vars: &[(&str, &str)],
) -> Outcome {
    let server = server(rules, page_size);
    let env = KubeEnv::new(&server.url()).expect("kube env");
    // No settling, unless the case says otherwise.
    let env_vars = [&[(DEADLINE_ENV, "0")], env_vars].concat();
    let output = run(&mut command(path, &env, page_size, &env_vars));
    Outcome {
        output,
        log: server.log(),
    }
}

fn both_paths(
    rules: Vec<FaultRule>,
    page_size: Option<usize>,
    env_vars: &[(&str, &str)],
) -> Vec<(Driver, Outcome)> {
    assert!(
        generated_wrapper().is_file(),
        "generated/verify-pods.sh is missing"
    );
    in_parallel(DRIVERS.to_vec(), 2, |path| {
        (path, run_with(&rules, page_size, path, env_vars))
    })
}

fn describe(path: impl std::fmt::Debug, outcome: &Outcome) -> String {
    let log: Vec<String> = outcome.log.iter().map(LogEntry::line).collect();
    format!(
        "{path:?}: exit {:?}\nstdout:\n{}stderr:\n{}requests:\n{}",
        outcome.output.status.code(),
        text(&outcome.output.stdout),
        text(&outcome.output.stderr),
        log.join("\n")
    )
}

/// Why an outcome breaks the contract (exit 2, no status line printed, and
/// the fault really hit a pods list), if it does.
fn contract_broken(outcome: &Outcome) -> Option<&'static str> {
    if outcome.output.status.code() != Some(2) {
        return Some("exit code is not 2");
    }
    if coherence::parse(&text(&outcome.output.stdout))
        .counts
        .is_some()
    {
        return Some("a status was printed");
    }
    let fired = outcome
        .log
        .iter()
        .any(|e| e.list == Some(Resource::Pods) && e.fault.is_some());
    (!fired).then_some("the fault never fired")
}

fn assert_cannot_observe(
    rules: Vec<FaultRule>,
    page_size: Option<usize>,
    env_vars: &[(&str, &str)],
) {
    for (path, outcome) in both_paths(rules, page_size, env_vars) {
        if let Some(why) = contract_broken(&outcome) {
            panic!("{why}: {}", describe(path, &outcome));
        }
    }
}

/// The check has teeth: a script that reads kubectl's partial output (the
/// legacy five-call pattern) breaks the contract under the same fault.
#[test]
fn the_contract_catches_a_script_that_trusts_partial_output() {
    let server = Server::builder()
        .state(state())
        .page_size(PAGE)
        .fault(FaultRule::always(Target::PodsPage(2), Fault::expired()))
        .start()
        .expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let legacy = verify_pods_tests::workspace_root().join("tests/scripts/legacy-verify-pods.sh");
    let output = run(env
        .apply(&mut std::process::Command::new("bash"))
        .arg(legacy));
    let outcome = Outcome {
        output,
        log: server.log(),
    };
    assert!(
        contract_broken(&outcome).is_some(),
        "{}",
        describe("legacy script", &outcome)
    );
}

/// A fault kubectl retries by itself: the normal result (exit 1: the
/// unschedulable pod), and the pods list was asked for more than once.
fn assert_retried_and_checked(rules: Vec<FaultRule>) {
    let engine = Engine::new().expect("engine");
    let state = state();
    for (path, outcome) in both_paths(rules, None, &[]) {
        let what = describe(path, &outcome);
        assert_eq!(outcome.output.status.code(), Some(1), "{what}");
        let stdout = text(&outcome.output.stdout);
        assert!(
            expect::single_attempt_wait(&engine, &state, &expect::served(0), &stdout, SLOW)
                .is_some(),
            "{what}"
        );
        let first_pages = outcome
            .log
            .iter()
            .filter(|e| e.list == Some(Resource::Pods) && e.page == Some(1))
            .count();
        assert_eq!(first_pages, 2, "one failed try, one retry: {what}");
    }
}

/// One test a line: `name: rule, page size (Some when the rule aims past
/// page 1), settings;` under which both drivers cannot observe (exit 2).
macro_rules! cannot_observe {
    ($($(#[$doc:meta])* $name:ident: $rule:expr, $pages:expr, $env:expr;)*) => {$(
        $(#[$doc])*
        #[test]
        fn $name() {
            assert_cannot_observe(vec![$rule], $pages, $env);
        }
    )*};
}

/// One test a line: `name: rule;`, a fault kubectl retries by itself.
macro_rules! retried_and_checked {
    ($($name:ident: $rule:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_retried_and_checked(vec![$rule]);
        }
    )*};
}

cannot_observe! {
    expired_continue_token_on_page_2_exits_2: FaultRule::always(PodsPage(2), Fault::expired()), Some(PAGE), &[];
    internal_error_on_page_1_exits_2: FaultRule::always(PodsPage(1), Fault::internal_error()), None, &[];
    internal_error_on_page_2_exits_2: FaultRule::always(PodsPage(2), Fault::internal_error()), Some(PAGE), &[];
    /// kubectl retries a 503 with Retry-After for about ten seconds, then fails.
    service_unavailable_every_time_exits_2: FaultRule::always(PodsList, Fault::unavailable(1)), None, &[];
    /// kubectl retries a connection closed before any header, then fails.
    connection_closed_before_headers_every_time_exits_2: FaultRule::always(PodsList, Fault::CloseBeforeHeaders), None, &[];
    connection_closed_mid_body_on_page_1_exits_2: FaultRule::always(PodsPage(1), Fault::CloseMidBody), None, &[];
    connection_closed_mid_body_on_page_2_exits_2: FaultRule::always(PodsPage(2), Fault::CloseMidBody), Some(PAGE), &[];
    truncated_json_on_page_1_exits_2: FaultRule::always(PodsPage(1), Fault::TruncatedBody), None, &[];
    truncated_json_on_page_2_exits_2: FaultRule::always(PodsPage(2), Fault::TruncatedBody), Some(PAGE), &[];
    /// An answer slower than the kubectl timeout: kubectl is killed, exit 2.
    answer_slower_than_the_kubectl_timeout_exits_2: FaultRule::always(PodsList, Fault::Delay(Duration::from_secs(4))), None, &[(KUBECTL_TIMEOUT_ENV, "1")];
}

retried_and_checked! {
    service_unavailable_once_is_retried_and_checked: FaultRule::once(PodsList, Fault::unavailable(1));
    too_many_requests_once_is_retried_and_checked: FaultRule::once(PodsList, Fault::too_many_requests(1));
    connection_closed_before_headers_once_is_retried_and_checked: FaultRule::once(PodsList, Fault::CloseBeforeHeaders);
}

/// Events are diagnostics: when they cannot be listed, the pods verdict
/// stands (exit 1) and the output says the events were not collected.
#[test]
fn failing_events_list_keeps_the_pods_verdict() {
    let engine = Engine::new().expect("engine");
    let state = state();
    let rules = vec![FaultRule::always(
        Target::EventsList,
        Fault::internal_error(),
    )];
    for (path, outcome) in both_paths(rules, None, &[]) {
        let what = describe(path, &outcome);
        assert_eq!(outcome.output.status.code(), Some(1), "{what}");
        let stdout = text(&outcome.output.stdout);
        let explained = (0..=SLOW).any(|waited| {
            expect::start_line(&engine)
                + &expect::final_text_as(
                    &engine,
                    &state,
                    &expect::served(0),
                    None,
                    1,
                    waited,
                    &expect::Knobs::default(),
                )
                == stdout
        });
        assert!(explained, "not the result without events: {what}");
        assert!(
            outcome
                .log
                .iter()
                .any(|e| e.list == Some(Resource::Events) && e.status == 500),
            "{what}"
        );
    }
}

// ------------------------------------------------ issue 21: bounds, orphans

/// `cmd` run to its end, or killed after `limit` (a driver that pages
/// forever must fail its test, not hang it): the output and how long it took.
fn run_within(cmd: &mut std::process::Command, limit: Duration) -> (Output, Duration) {
    let started = std::time::Instant::now();
    let child = verify_pods_tests::spawn_job(cmd, true);
    let group = child.id();
    let watchdog = std::thread::spawn(move || {
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
            if !verify_pods_tests::running(group) {
                return;
            }
        }
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{group}")])
            .status();
    });
    let output = child.wait_with_output().expect("wait");
    let took = started.elapsed();
    let _ = watchdog.join();
    (output, took)
}

/// Both drivers against `rules` with `env_vars` (the deadline among them),
/// each killed after `limit`.
fn both_within(
    rules: &[FaultRule],
    page_size: Option<usize>,
    env_vars: &[(&str, &str)],
    options: &KubeOptions,
    limit: Duration,
) -> Vec<(Driver, Outcome, Duration)> {
    in_parallel(DRIVERS.to_vec(), 2, |path| {
        let server = server(rules, page_size);
        let env = KubeEnv::with_options(&server.url(), options).expect("kube env");
        let (output, took) = run_within(&mut command(path, &env, page_size, env_vars), limit);
        let log = server.log();
        (path, Outcome { output, log }, took)
    })
}

/// The issue's bound on any check: deadline + kubectl timeout + 2 s.
fn bound(deadline: u64, kubectl_timeout: u64) -> Duration {
    Duration::from_secs(deadline + kubectl_timeout + 2)
}

/// Both drivers against `rules` (pages of [`PAGE`]) with `deadline` and
/// `kubectl_timeout`: each ends within [`bound`] of them, exits `exit` and
/// says `message` once on stderr. The outcomes, for more checks.
fn assert_bounded(
    rules: &[FaultRule],
    (deadline, kubectl_timeout): (u64, u64),
    exit: i32,
    message: &checker::contract::Message,
) -> Vec<(Driver, Outcome)> {
    let (deadline_text, timeout_text) = (deadline.to_string(), kubectl_timeout.to_string());
    let env_vars = [
        (DEADLINE_ENV, deadline_text.as_str()),
        (KUBECTL_TIMEOUT_ENV, timeout_text.as_str()),
    ];
    let bound = bound(deadline, kubectl_timeout);
    let limit = bound + Duration::from_secs(SLOW);
    let options = KubeOptions::default();
    let outcomes = both_within(rules, Some(PAGE), &env_vars, &options, limit);
    for (path, outcome, took) in &outcomes {
        let what = describe(path, outcome);
        assert!(*took < bound, "took {took:?}: {what}");
        assert_eq!(outcome.output.status.code(), Some(exit), "{what}");
        let stderr = text(&outcome.output.stderr);
        assert_eq!(lines_of(&stderr, message), 1, "{what}");
    }
    outcomes
        .into_iter()
        .map(|(path, outcome, _)| (path, outcome))
        .collect()
}

/// A server that hands out a new continue token on every page: both drivers
/// stop paging at the deadline plus the kubectl timeout, exit 2 with the one
/// line that says so (today: they page forever, even with --deadline 0).
#[test]
fn an_endless_pods_list_ends_by_the_deadline_plus_the_kubectl_timeout() {
    let rules = [FaultRule::always(PodsList, Fault::Endless)];
    for (path, outcome) in assert_bounded(&rules, (1, 3), 2, &messages::LIST_UNFINISHED) {
        let stderr = text(&outcome.output.stderr);
        assert_eq!(
            stderr.lines().count(),
            1,
            "one line: {}",
            describe(path, &outcome)
        );
    }
}

/// Pages slower than the time left (4 pages of 1.5 s, a 3 s kubectl
/// timeout, --deadline 0): the list cannot finish by 3 s, exit 2 (today:
/// both read the six seconds of pages and give a verdict after them).
#[test]
fn slow_pages_end_by_the_deadline_plus_the_kubectl_timeout() {
    let slow = Fault::Delay(Duration::from_millis(1500));
    let rules = [FaultRule::always(PodsList, slow)];
    assert_bounded(&rules, (0, 3), 2, &messages::LIST_UNFINISHED);
}

/// An endless events list: the verdict is known, so it still prints
/// (exit 1) with the events "not collected", within its budget (today:
/// pages forever after the verdict).
#[test]
fn an_endless_events_list_keeps_the_verdict_within_its_budget() {
    let rules = [FaultRule::always(Target::EventsList, Fault::Endless)];
    let said = assert_bounded(&rules, (0, 3), 1, &messages::EVENTS_NOT_COLLECTED);
    for (path, outcome) in said {
        assert!(
            text(&outcome.output.stdout).contains("not collected"),
            "{}",
            describe(path, &outcome)
        );
    }
}

/// Page 1 unreadable (cut JSON, kubectl exits 0) while page 2 hangs: the
/// checker knows at once and says so at once, not at page 2's kubectl
/// timeout (20 s today). The bash reads the items only once the list is
/// whole, so it learns it only then.
#[test]
fn an_unreadable_page_1_is_reported_while_page_2_hangs() {
    let rules = [
        FaultRule::always(Target::PodsPage(1), Fault::TruncatedBody),
        FaultRule::always(
            Target::PodsPage(2),
            Fault::StallMidBody(Duration::from_secs(40)),
        ),
    ];
    let mut builder = Server::builder().state(state()).page_size(PAGE);
    for rule in rules {
        builder = builder.fault(rule);
    }
    let server = builder.start().expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let mut cmd = env.checker();
    cmd.env(DEADLINE_ENV, "0")
        .env(KUBECTL_TIMEOUT_ENV, "20")
        .env(CHUNK_SIZE_ENV, KUBECTL_CHUNK_SIZE.to_string());
    let (output, took) = run_within(&mut cmd, Duration::from_secs(SLOW));
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        lines_of(&stderr, &messages::UNREADABLE_OUTPUT),
        1,
        "{stderr}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}: {stderr}");
}

/// A kubectl (a wrapper, an exec credential plugin) that exits but leaves
/// a child of its own: `$1` is what the wrapper does before it runs the
/// real kubectl, with `$PID_DIR` its directory for pid files.
fn kubectl_wrapper(dir: &std::path::Path, before: &str) -> KubeOptions {
    let script = dir.join("kubectl-wrapper");
    let real = kubectl_binary();
    std::fs::write(
        &script,
        format!(
            "#!/usr/bin/env bash\nPID_DIR={}\n{before}\nexec {} \"$@\"\n",
            dir.display(),
            real.display()
        ),
    )
    .expect("write wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    KubeOptions {
        kubectl: Some(script),
        ..KubeOptions::default()
    }
}

/// Both drivers kill kubectl's whole process group when it ends: the
/// child it left behind does not outlive the check (today: the bash leaves
/// it running).
#[test]
fn a_child_kubectl_leaves_behind_does_not_outlive_the_check() {
    let dir = tempfile::tempdir().expect("temp dir");
    for path in DRIVERS {
        let sub = dir.path().join(format!("{path:?}"));
        std::fs::create_dir(&sub).expect("dir");
        let options = kubectl_wrapper(
            &sub,
            "sleep 300 </dev/null >/dev/null 2>&1 &\necho $! >\"$PID_DIR/child.$$\"",
        );
        let output = one_attempt(path, &options);
        assert_eq!(output.status.code(), Some(1), "{path:?}: {output:?}");
        let children: Vec<u32> = std::fs::read_dir(&sub)
            .expect("read dir")
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("child.")
                    .then(|| verify_pods_tests::read_pid(&e.path()))
                    .flatten()
            })
            .collect();
        assert!(!children.is_empty(), "{path:?}: the wrapper never ran");
        let left = verify_pods_tests::survivors(
            &children,
            std::time::Instant::now() + Duration::from_secs(1),
            || true,
        );
        for pid in &left {
            let _ = std::process::Command::new("kill")
                .args(["-s", "KILL", &pid.to_string()])
                .status();
        }
        assert!(
            left.is_empty(),
            "{path:?}: kubectl's child outlived the check"
        );
    }
}

/// kubectl killed by a signal: both drivers print the one contract line
/// (exit status 137, no error message), then the kubeconfig and context
/// line, and the bash adds no job line of its own (today: `... Killed
/// timeout ...`).
#[test]
fn kubectl_killed_by_a_signal_is_one_line_in_both_drivers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = kubectl_wrapper(dir.path(), "kill -s KILL $$");
    let mut lines = Vec::new();
    for path in DRIVERS {
        let output = one_attempt(path, &options);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{path:?}: {stderr}");
        // kubectl's line, then the kubeconfig and context it used.
        assert_eq!(stderr.lines().count(), 2, "{path:?}: two lines: {stderr}");
        assert_eq!(lines_of(&stderr, &messages::KUBECTL_FAILED), 1, "{stderr}");
        assert_eq!(lines_of(&stderr, &messages::KUBECTL_CONFIG), 1, "{stderr}");
        lines.push(after_command(stderr.lines().next().unwrap_or_default()));
    }
    assert_eq!(lines[0], lines[1], "one wording");
}

/// `--interval 20 --deadline 3`: the sleep between attempts is cut at the
/// deadline, in both drivers, so the check ends about 3 s in with its
/// last attempt at the deadline (today: 20 s, "waited=20s of 3s").
#[test]
fn polling_never_sleeps_past_the_deadline() {
    let env_vars = [
        (DEADLINE_ENV, "3"),
        (INTERVAL_ENV, "20"),
        (checker::contract::WATCH.env, "false"),
    ];
    let limit = Duration::from_secs(20 + SLOW);
    for (path, outcome, took) in both_within(&[], None, &env_vars, &KubeOptions::default(), limit) {
        let what = describe(path, &outcome);
        assert_eq!(outcome.output.status.code(), Some(1), "{what}");
        assert!(took < Duration::from_secs(3 + 5), "took {took:?}: {what}");
        assert!(
            text(&outcome.output.stdout).contains("(attempts=2, waited=3s)"),
            "{what}"
        );
    }
}

/// The same after a watch the server refuses (405): the checker polls,
/// and its sleeps end at the deadline too.
#[test]
fn polling_after_a_refused_watch_never_sleeps_past_the_deadline() {
    let server = Server::builder()
        .state(state())
        .fault(FaultRule::always(
            Target::PodsWatch,
            Fault::method_not_allowed(),
        ))
        .start()
        .expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let mut cmd = env.checker();
    cmd.env(DEADLINE_ENV, "3").env(INTERVAL_ENV, "20");
    let (output, took) = run_within(&mut cmd, Duration::from_secs(20 + SLOW));
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(lines_of(&stderr, &messages::WATCH_REFUSED), 1, "{stderr}");
    assert!(took < Duration::from_secs(3 + 5), "took {took:?}: {stderr}");
}

/// One attempt (a deadline of 0) of `driver` through the kubectl of
/// `options`, against a server of [`state`].
fn one_attempt(driver: Driver, options: &KubeOptions) -> Output {
    let server = Server::builder().state(state()).start().expect("server");
    let env = KubeEnv::with_options(&server.url(), options).expect("kube env");
    let mut cmd = driver.command(&env);
    cmd.env(DEADLINE_ENV, "0");
    run_within(&mut cmd, Duration::from_secs(SLOW)).0
}

/// A line's words after the command it names (the checker names kubectl
/// by its path and global flags, the bash as `kubectl`).
fn after_command(line: &str) -> String {
    line.trim_end()
        .rsplit_once('`')
        .map_or(line, |(_, rest)| rest)
        .to_owned()
}

/// Both drivers on what a kubectl that exits 0 printed (`print` runs
/// instead of kubectl): exit code and stderr, without the driver's prefix.
fn both_on_printed(print: &str) -> Vec<(Driver, Option<i32>, String)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = kubectl_wrapper(dir.path(), &format!("{print}\nexit 0"));
    DRIVERS
        .into_iter()
        .map(|path| {
            let output = one_attempt(path, &options);
            let stderr = text(&output.stderr);
            assert_eq!(stderr.lines().count(), 1, "{path:?}: one line: {stderr}");
            (path, output.status.code(), after_command(&stderr))
        })
        .collect()
}

/// An empty HTTP 200 body (kubectl prints nothing, exits 0): one wording,
/// the contract's, in both drivers (today: "empty input" and "snapshot is
/// empty").
#[test]
fn an_empty_answer_is_one_wording_in_both_drivers() {
    let said = both_on_printed(":");
    for (path, code, line) in &said {
        assert_eq!(*code, Some(2), "{path:?}: {line}");
        assert!(
            line.ends_with(checker::contract::words::EMPTY_INPUT.text),
            "{path:?}: {line}"
        );
    }
    assert_eq!(said[0].2, said[1].2, "one wording");
}

/// A page whose `metadata.resourceVersion` is a JSON number is not a page
/// the API server writes (ListMeta's resourceVersion is a string): exit 2
/// in both drivers (today: the checker 2, the bash 0).
#[test]
fn a_numeric_resource_version_is_refused_by_both_drivers() {
    let page =
        r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":5},"items":[]}"#;
    for (path, code, line) in both_on_printed(&format!("printf '%s\\n' '{page}'")) {
        assert_eq!(code, Some(2), "{path:?}: {line}");
    }
}

// ------------------------------------------ issue 24 item 5: deadline epoch

/// The unix time `seconds` from now.
fn epoch_in(seconds: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    now.saturating_add_signed(seconds).to_string()
}

/// Both drivers with the deadline epoch `seconds` from now besides
/// `env_vars`, against `rules` (pages capped at `page_size`), each killed
/// after `limit`: each exits `exit` with `epoch_lines` lines of the
/// epoch's message on stderr. The epoch, and each run for more checks
/// (with its description).
fn with_epoch(
    seconds: i64,
    (rules, page_size): (&[FaultRule], Option<usize>),
    env_vars: &[(&str, &str)],
    limit: Duration,
    (exit, epoch_lines): (i32, usize),
) -> (String, Vec<(Outcome, Duration, String)>) {
    let epoch = epoch_in(seconds);
    let env_vars = [&[(DEADLINE_EPOCH.env, epoch.as_str())], env_vars].concat();
    let options = KubeOptions::default();
    let runs = both_within(rules, page_size, &env_vars, &options, limit);
    let runs = runs
        .into_iter()
        .map(|(path, outcome, took)| {
            let what = describe(path, &outcome);
            assert_eq!(outcome.output.status.code(), Some(exit), "{what}");
            let stderr = text(&outcome.output.stderr);
            let said = lines_of(&stderr, &messages::DEADLINE_EPOCH_PASSED);
            assert_eq!(said, epoch_lines, "{what}");
            (outcome, took, what)
        })
        .collect();
    (epoch, runs)
}

/// A deadline epoch already past: both drivers exit 2 at once, with the
/// one line that says so, before any list.
#[test]
fn a_deadline_epoch_in_the_past_exits_2_at_once() {
    let limit = Duration::from_secs(SLOW);
    let (past, runs) = with_epoch(-5, (&[], None), &[], limit, (2, 1));
    for (outcome, took, what) in runs {
        let stderr = text(&outcome.output.stderr);
        assert!(
            stderr.contains(&format!("epoch {past} passed after 0s")),
            "{what}"
        );
        assert!(
            outcome.log.iter().all(|e| e.list.is_none()),
            "no list: {what}"
        );
        assert!(took < Duration::from_secs(5), "took {took:?}: {what}");
    }
}

/// More attempts than a run of a few seconds evaluates: the checker's watch
/// evaluates at least once an interval, and after each burst of events.
const MAX_ATTEMPTS: usize = 50;

/// A cluster that never settles, a 60 s deadline, an epoch 4 s ahead: both
/// drivers (the checker watching, the bash polling) end by the epoch, exit
/// 2 with its line and no verdict.
#[test]
fn a_deadline_epoch_ahead_cuts_settling_short() {
    let (engine, state) = (Engine::new().expect("engine"), state());
    let lead: u64 = 4;
    let env_vars = [(DEADLINE_ENV, "60"), (INTERVAL_ENV, "1")];
    let limit = Duration::from_secs(60 + SLOW);
    let (_, runs) = with_epoch(lead as i64, (&[], None), &env_vars, limit, (2, 1));
    for (outcome, took, what) in runs {
        assert!(
            took < Duration::from_secs(lead + 3),
            "took {took:?}: {what}"
        );
        assert!(took >= Duration::from_secs(2), "took {took:?}: {what}");
        // No verdict: the start line, then progress lines only, whose
        // deadline is the time left to the epoch.
        let stdout = text(&outcome.output.stdout);
        let progress = expect::only_progress(
            &engine,
            &state,
            &expect::served(0),
            &stdout,
            0..=lead,
            MAX_ATTEMPTS,
            took.as_secs(),
        );
        assert_eq!(progress, Ok(()), "no verdict: {what}");
    }
}

/// The same with a slow pods list (every page 2 s, pages of 3): the list
/// that the epoch interrupts ends by it too, with the epoch's line.
#[test]
fn a_deadline_epoch_ahead_cuts_a_slow_list_short() {
    let slow = Fault::Delay(Duration::from_millis(2000));
    let rules = [FaultRule::always(PodsList, slow)];
    let env_vars = [(DEADLINE_ENV, "60"), (KUBECTL_TIMEOUT_ENV, "60")];
    let limit = Duration::from_secs(60 + SLOW);
    let (_, runs) = with_epoch(3, (&rules, Some(PAGE)), &env_vars, limit, (2, 1));
    for (outcome, took, what) in runs {
        assert!(took < Duration::from_secs(3 + 3), "took {took:?}: {what}");
        let stderr = text(&outcome.output.stderr);
        assert_eq!(stderr.lines().count(), 1, "one line: {what}");
    }
}

/// An epoch later than the deadline: the deadline governs, as without it
/// (exit 1, the verdict after 2 s, no epoch line; the first progress line
/// shows the deadline's 2 s, not the epoch's 600).
#[test]
fn a_deadline_epoch_after_the_deadline_leaves_it_in_charge() {
    let (engine, state) = (Engine::new().expect("engine"), state());
    let env_vars = [(DEADLINE_ENV, "2"), (INTERVAL_ENV, "1")];
    let limit = Duration::from_secs(SLOW);
    let (_, runs) = with_epoch(600, (&[], None), &env_vars, limit, (1, 0));
    for (outcome, took, what) in runs {
        assert!(took < Duration::from_secs(2 + 5), "took {took:?}: {what}");
        let stdout = text(&outcome.output.stdout);
        let first_attempt = |waited| {
            expect::start_line(&engine)
                + &expect::progress_text(&engine, &state, &expect::served(0), 1, waited, 2)
        };
        assert!(
            (0..=SLOW).any(|waited| stdout.starts_with(&first_attempt(waited))),
            "{what}"
        );
    }
}

// ------------------------- issue 24 item 7: which kubeconfig and context

/// A URL where no server listens: a port bound, then closed.
fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A kubectl wrapper that logs each call's arguments (a line each, in
/// `calls` of `dir`), then runs `then` before the real kubectl.
fn logging_kubectl(dir: &std::path::Path, then: &str) -> KubeOptions {
    kubectl_wrapper(
        dir,
        &format!("printf '%s\\n' \"$*\" >>\"$PID_DIR/calls\"\n{then}"),
    )
}

/// The calls [`logging_kubectl`] logged in `dir`.
fn kubectl_calls(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// How a case hands kubectl its kubeconfig.
#[derive(Debug, Clone, Copy)]
enum Config {
    /// `--kubeconfig` (the checker only).
    Flag,
    /// $KUBECONFIG.
    Env,
    /// Neither: kubectl's default, `$HOME/.kube/config`.
    Home,
}

/// One run against a cluster: the words of the kubeconfig and context line
/// it must print, when it must print one.
struct ConfigCase {
    driver: Driver,
    config: Config,
    /// `--context` (the checker only).
    context_flag: bool,
    /// `kubectl config current-context` fails.
    no_current_context: bool,
}

impl ConfigCase {
    const fn new(driver: Driver, config: Config) -> Self {
        Self {
            driver,
            config,
            context_flag: false,
            no_current_context: false,
        }
    }

    /// Run the case against `url`: its output and the kubectl calls made.
    fn run(&self, url: &str, options_dir: &std::path::Path) -> (Output, Vec<String>, KubeEnv) {
        let then = if self.no_current_context {
            "case \" $* \" in *' config current-context '*) exit 1 ;; esac"
        } else {
            ""
        };
        let options = logging_kubectl(options_dir, then);
        let env = KubeEnv::with_options(url, &options).expect("kube env");
        let mut cmd = match self.driver {
            Driver::Checker => {
                // kubectl from PATH (env puts the wrapper first), no
                // --kubeconfig unless the case gives it.
                let mut cmd = std::process::Command::new(verify_pods_tests::binary("verify-pods"));
                env.apply(&mut cmd).arg("check");
                cmd
            }
            driver => driver.command(&env),
        };
        cmd.env(DEADLINE_ENV, "0");
        match self.config {
            Config::Flag => {
                cmd.env_remove("KUBECONFIG")
                    .arg("--kubeconfig")
                    .arg(&env.kubeconfig);
            }
            Config::Env => {}
            Config::Home => {
                let dot_kube = env.dir().join("home/.kube");
                std::fs::create_dir_all(&dot_kube).expect("~/.kube");
                std::fs::copy(&env.kubeconfig, dot_kube.join("config")).expect("copy");
                cmd.env_remove("KUBECONFIG");
            }
        }
        if self.context_flag {
            cmd.args(["--context", "replay"]);
        }
        let (output, _) = run_within(&mut cmd, Duration::from_secs(SLOW));
        (output, kubectl_calls(options_dir), env)
    }

    /// The line the case must print, in the contract's words.
    fn expected_line(&self, env: &KubeEnv) -> String {
        use checker::contract::words;
        let path = env.kubeconfig.display().to_string();
        let (kubeconfig, kubeconfig_from) = match self.config {
            Config::Flag => (path, words::KUBECONFIG_FLAG.text),
            Config::Env => (path, words::KUBECONFIG_ENV.text),
            Config::Home => (
                words::DEFAULT_KUBECONFIG.text.to_owned(),
                words::KUBECONFIG_DEFAULT.text,
            ),
        };
        let (context, context_from) = match (self.context_flag, self.no_current_context) {
            (true, _) => ("replay", words::CONTEXT_FLAG.text),
            (false, false) => ("replay", words::CONTEXT_CURRENT.text),
            (false, true) => (words::CONTEXT_NONE.text, words::CONTEXT_CURRENT.text),
        };
        messages::KUBECTL_CONFIG.format(&[
            ("kubeconfig", &kubeconfig),
            ("kubeconfig_from", &kubeconfig_from),
            ("context", &context),
            ("context_from", &context_from),
        ])
    }
}

/// Cases against a closed port: exit 2, kubectl's line, then the line that
/// names the kubeconfig and context, and `config current-context` called
/// `config_calls` times.
fn assert_unreachable_says(cases: &[ConfigCase], config_calls: usize) {
    let url = closed_port_url();
    for case in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let (output, calls, env) = case.run(&url, dir.path());
        let stderr = text(&output.stderr);
        let what = format!(
            "{:?} {:?} --context {} no current-context {}: {stderr}calls: {calls:?}",
            case.driver, case.config, case.context_flag, case.no_current_context
        );
        assert_eq!(output.status.code(), Some(2), "{what}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{what}");
        assert_eq!(lines_of(lines[0], &messages::KUBECTL_FAILED), 1, "{what}");
        assert!(lines[1].ends_with(&case.expected_line(&env)), "{what}");
        let config = calls
            .iter()
            .filter(|c| c.contains("config current-context"));
        assert_eq!(config.count(), config_calls, "{what}");
    }
}

/// A cluster kubectl cannot reach: both drivers say which kubeconfig
/// ($KUBECONFIG, or kubectl's default) and which context (the current
/// one, from one `kubectl config current-context`; none when that fails)
/// kubectl used (today: kubectl's line alone).
#[test]
fn an_unreachable_cluster_names_the_kubeconfig_and_context() {
    let mut cases = Vec::new();
    for driver in DRIVERS {
        cases.push(ConfigCase::new(driver, Config::Env));
        cases.push(ConfigCase::new(driver, Config::Home));
        cases.push(ConfigCase {
            no_current_context: true,
            ..ConfigCase::new(driver, Config::Env)
        });
    }
    assert_unreachable_says(&cases, 1);
}

/// The checker's `--kubeconfig` and `--context` are named as flags, and
/// with `--context` no `kubectl config current-context` is called.
#[test]
fn the_checker_names_its_kubeconfig_and_context_flags() {
    assert_unreachable_says(&[ConfigCase::new(Driver::Checker, Config::Flag)], 1);
    let with_context = ConfigCase {
        context_flag: true,
        ..ConfigCase::new(Driver::Checker, Config::Flag)
    };
    assert_unreachable_says(&[with_context], 0);
}

/// A cluster that answers: no `kubectl config` call and no config line,
/// in either driver.
#[test]
fn a_reachable_cluster_costs_no_config_call() {
    let server = Server::builder().state(state()).start().expect("server");
    for driver in DRIVERS {
        let dir = tempfile::tempdir().expect("temp dir");
        let (output, calls, _) =
            ConfigCase::new(driver, Config::Env).run(&server.url(), dir.path());
        let stderr = text(&output.stderr);
        let what = format!("{driver:?}: {stderr}calls: {calls:?}");
        assert_eq!(output.status.code(), Some(1), "{what}");
        assert!(!calls.is_empty(), "the wrapper never ran: {what}");
        assert!(calls.iter().all(|c| !c.contains("config")), "{what}");
        assert_eq!(lines_of(&stderr, &messages::KUBECTL_CONFIG), 0, "{what}");
    }
}

// ------------------------------------------------ one retry rule

/// The ways a live check reads the lists: the checker through its `kubectl
/// proxy` (it reads the workloads) or with kubectl alone (`--workloads
/// false`), and the bash, which always runs kubectl.
const READS: [(Driver, &str); 4] = [
    (Driver::Checker, "true"),
    (Driver::Checker, "false"),
    (Driver::Wrapper, "true"),
    (Driver::Wrapper, "false"),
];

/// Nine running pods: a pass, once one list is read whole.
fn green() -> State {
    State::new(web_pods(9), vec![])
}

/// One read of [`READS`] against a server of `state` with `rules`, with
/// `env_vars` (the deadline among them), killed after `limit`.
struct Read {
    driver: Driver,
    workloads: &'static str,
    outcome: Outcome,
    took: Duration,
}

impl Read {
    fn describe(&self) -> String {
        let what = (self.driver, self.workloads, self.took);
        describe(what, &self.outcome)
    }

    /// Its stderr lines without the driver's prefix: the contract's text.
    fn said(&self) -> Vec<String> {
        let prefixes = [
            checker::contract::CHECKER_PREFIX.error,
            checker::contract::CHECKER_PREFIX.warning,
            checker::contract::BASH_PREFIX.error,
        ];
        text(&self.outcome.output.stderr)
            .lines()
            .map(|line| {
                prefixes
                    .iter()
                    .find_map(|prefix| line.split_once(prefix).map(|(_, said)| said))
                    .unwrap_or(line)
                    .to_owned()
            })
            .collect()
    }

    /// The stderr lines that say `message`, the checker's kubectl named as
    /// the bash names it (`kubectl` on PATH, no flags).
    fn lines(&self, message: &checker::contract::Message) -> Vec<String> {
        let said = self.said();
        said.into_iter()
            .filter(|line| lines_of(line, message) == 1)
            .map(|line| as_bash_says(&line))
            .collect()
    }
}

/// `line` with the command of a `get --raw` as the bash says it.
fn as_bash_says(line: &str) -> String {
    match (line.find('`'), line.find(" get --raw ")) {
        (Some(start), Some(get)) if start < get => {
            format!("{}`kubectl{}", &line[..start], &line[get..])
        }
        _ => line.to_owned(),
    }
}

impl Read {
    /// Requests for the first page of a pods list.
    fn first_pages(&self) -> usize {
        let log = &self.outcome.log;
        log.iter()
            .filter(|e| e.list == Some(Resource::Pods) && e.page == Some(1))
            .count()
    }

    /// Whether the checker read through its proxy, which asks kubectl again
    /// at once when the proxy's answer is not a whole 200.
    fn proxied(&self) -> bool {
        self.driver == Driver::Checker && self.workloads == "true"
    }
}

fn every_read(
    state: fn() -> State,
    rules: &[FaultRule],
    env_vars: &[(&str, &str)],
    limit: Duration,
) -> Vec<Read> {
    in_parallel(READS.to_vec(), 2, |(driver, workloads)| {
        let mut builder = Server::builder().state(state());
        for rule in rules {
            builder = builder.fault(rule.clone());
        }
        let server = builder.start().expect("server");
        let env = KubeEnv::new(&server.url()).expect("kube env");
        let mut cmd = command(driver, &env, None, env_vars);
        cmd.env(checker::contract::WORKLOADS.env, workloads);
        let (output, took) = run_within(&mut cmd, limit);
        let log = server.log();
        Read {
            driver,
            workloads,
            outcome: Outcome { output, log },
            took,
        }
    })
}

/// A deadline with room for a retry, a pause of a second.
const RETRYING: [(&str, &str); 2] = [(DEADLINE_ENV, "4"), (INTERVAL_ENV, "1")];

/// A transient failure (a 5xx, a cut answer) of the first pods list is
/// asked again within the deadline, on every read: the verdict of the list
/// read whole, the same in each. One line says it, the same words in both
/// drivers when kubectl's (`same_words`; a page kubectl printed cut is in
/// each reader's words): through the proxy too on a 5xx (kubectl's words
/// for its Status); a cut answer of the proxy is asked of kubectl at once.
fn assert_asked_again(fault: Fault, same_words: bool) {
    let said_through_the_proxy = matches!(fault, Fault::Status { .. });
    let rules = [FaultRule::once(PodsPage(1), fault)];
    let reads = every_read(green, &rules, &RETRYING, Duration::from_secs(SLOW));
    let stdout = text(&reads[0].outcome.output.stdout);
    let mut retried = Vec::new();
    for read in &reads {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(0), "{what}");
        assert_eq!(text(&read.outcome.output.stdout), stdout, "{what}");
        assert_eq!(read.first_pages(), 2, "one failed, one asked again: {what}");
        let again = read.lines(&messages::LIST_AGAIN);
        assert!(again.len() <= 1, "{what}");
        if !read.proxied() || said_through_the_proxy {
            assert_eq!(again.len(), 1, "{what}");
            retried.push(again[0].clone());
        }
    }
    if same_words {
        assert!(retried.windows(2).all(|w| w[0] == w[1]), "{retried:#?}");
    }
}

#[test]
fn an_internal_error_on_the_first_pods_list_is_asked_again() {
    assert_asked_again(Fault::internal_error(), true);
}

#[test]
fn a_body_cut_on_the_first_pods_list_is_asked_again() {
    assert_asked_again(Fault::CloseMidBody, true);
}

#[test]
fn a_truncated_first_pods_list_is_asked_again() {
    assert_asked_again(Fault::TruncatedBody, false);
}

/// A transient failure that lasts to the deadline is exit 2, kubectl's
/// words said, after the list was asked again within it.
#[test]
fn a_transient_failure_that_lasts_to_the_deadline_exits_2() {
    let rules = [FaultRule::always(PodsList, Fault::internal_error())];
    let env = [(DEADLINE_ENV, "2"), (INTERVAL_ENV, "1")];
    for read in every_read(green, &rules, &env, Duration::from_secs(SLOW)) {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(2), "{what}");
        assert!(contract_broken(&read.outcome).is_none(), "{what}");
        assert!(read.took >= Duration::from_secs(2), "{what}");
        assert!(read.first_pages() >= 3, "{what}");
        // kubectl's words, then the kubeconfig and context it used.
        let said = read.said();
        let [.., failed, config] = &said[..] else {
            panic!("{what}");
        };
        let again = read.lines(&messages::LIST_AGAIN);
        assert!(!again.is_empty(), "{what}");
        let failed = as_bash_says(failed);
        assert!(again.iter().all(|line| line.contains(&failed)), "{what}");
        assert_eq!(lines_of(config, &messages::KUBECTL_CONFIG), 1, "{what}");
    }
}

/// A refusal (403 on the pods) is the cluster's answer, not a transient
/// failure: exit 2 at once, never asked again.
#[test]
fn a_forbidden_pods_list_is_not_asked_again() {
    let forbidden = Fault::Status {
        code: 403,
        reason: "Forbidden".into(),
        message: "pods is forbidden: User \"replay\" cannot list resource \"pods\"".into(),
        retry_after: None,
    };
    let rules = [FaultRule::always(PodsList, forbidden)];
    for read in every_read(green, &rules, &RETRYING, Duration::from_secs(SLOW)) {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(2), "{what}");
        assert!(read.lines(&messages::LIST_AGAIN).is_empty(), "{what}");
        // The proxy's 403, then kubectl's.
        let asked = if read.proxied() { 2 } else { 1 };
        assert_eq!(read.first_pages(), asked, "{what}");
        assert!(read.took < Duration::from_secs(3), "{what}");
    }
}

/// A workloads list that fails transiently is asked again with the pods
/// (the state it would decide is listed again), as a broken list is, said
/// in the same line by the checker (through its proxy) and the bash.
#[test]
fn an_internal_error_on_a_workloads_list_is_asked_again() {
    let rules = [FaultRule::once(
        Target::Workloads("deployments"),
        Fault::internal_error(),
    )];
    let reads = every_read(green, &rules, &RETRYING, Duration::from_secs(SLOW));
    let stdout = text(&reads[0].outcome.output.stdout);
    let mut retried = Vec::new();
    for read in reads.iter().filter(|read| read.workloads == "true") {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(0), "{what}");
        assert_eq!(text(&read.outcome.output.stdout), stdout, "{what}");
        let again = read.lines(&messages::LIST_AGAIN);
        assert_eq!(again.len(), 1, "{what}");
        retried.push(again[0].clone());
    }
    assert!(retried.windows(2).all(|w| w[0] == w[1]), "{retried:#?}");
}

// ------------------------------------------------ diagnostics never hold the verdict

/// An events list that answers after 40 s, the verdict known at once: the
/// events get their bound (10 s) and no more, within the default kubectl
/// timeout of 120 s; the list says it still runs at each whole interval
/// before its bound (the default 5 s), one line says the events were not
/// read in time, and the verdict is printed, on every read.
#[test]
fn a_slow_events_list_holds_the_verdict_no_longer_than_its_bound() {
    let slow = Fault::Delay(Duration::from_secs(40));
    let rules = [FaultRule::always(Target::EventsList, slow)];
    let bound = checker::check::EVENTS_BOUND;
    let decided_at_once = [(DEADLINE_ENV, "0")];
    let reads = every_read(state, &rules, &decided_at_once, Duration::from_secs(SLOW));
    let overran = checker::contract::words::EVENTS_OVERRAN
        .format(&[("seconds", &bound.as_secs()), ("pages", &0)]);
    let waiting = messages::KUBECTL_WAITING.format(&[
        ("what", &"events"),
        ("seconds", &checker::contract::DEFAULT_INTERVAL),
        ("timeout", &checker::contract::DEFAULT_KUBECTL_TIMEOUT),
    ]);
    for read in reads {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(1), "{what}");
        assert!(read.took >= bound, "{what}");
        // A second or two of kubectl and jq on top, more on a loaded machine.
        assert!(read.took < bound + Duration::from_secs(6), "{what}");
        let said = read.lines(&messages::EVENTS_NOT_COLLECTED);
        assert_eq!(said.len(), 1, "{what}");
        assert!(said[0].contains(&overran), "{what}");
        let notes = read.lines(&messages::KUBECTL_WAITING);
        assert_eq!(notes, [waiting.as_str()], "{what}");
        assert!(
            text(&read.outcome.output.stdout).contains("not collected"),
            "{what}"
        );
    }
}

/// A 500 on the events list once, the verdict known at once: every read
/// (the checker through its proxy and without, the bash) asks the list
/// again after a pause of the interval, says so in the line a pods list's
/// retry says (kubectl's words), and collects the events; the same line in
/// each.
#[test]
fn a_failed_events_list_is_asked_again_on_every_read() {
    let rules = [FaultRule::once(Target::EventsList, Fault::internal_error())];
    let env = [(DEADLINE_ENV, "0"), (INTERVAL_ENV, "1")];
    let reads = every_read(state, &rules, &env, Duration::from_secs(SLOW));
    let mut retried = Vec::new();
    for read in &reads {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(1), "{what}");
        let again = read.lines(&messages::LIST_AGAIN);
        assert_eq!(again.len(), 1, "{what}");
        assert!(again[0].contains("/api/v1/events"), "{what}");
        retried.push(again[0].clone());
        let not_collected = read.lines(&messages::EVENTS_NOT_COLLECTED);
        assert!(not_collected.is_empty(), "{what}");
        let stdout = text(&read.outcome.output.stdout);
        assert!(!stdout.contains("not collected"), "{what}");
        let asked = read.outcome.log.iter();
        let events = asked.filter(|e| e.list == Some(Resource::Events)).count();
        assert_eq!(events, 2, "{what}");
    }
    assert!(retried.windows(2).all(|w| w[0] == w[1]), "{retried:#?}");
}

// ------------------------------------------------ every error names its list

/// A 410 that never ends on the Deployments list (their version always
/// compacted): past the deadline, the error names the Deployments, not the
/// pods, in both drivers.
#[test]
fn a_workloads_list_that_always_breaks_is_named_in_the_error() {
    let rules = [FaultRule::always(
        Target::Workloads("deployments"),
        Fault::expired(),
    )];
    let env = [(DEADLINE_ENV, "2"), (INTERVAL_ENV, "1")];
    let reads = every_read(green, &rules, &env, Duration::from_secs(SLOW));
    for read in reads.iter().filter(|read| read.workloads == "true") {
        let what = read.describe();
        assert_eq!(read.outcome.output.status.code(), Some(2), "{what}");
        let said = read.lines(&messages::LIST_INCOHERENT);
        assert_eq!(said.len(), 1, "{what}");
        let named = messages::LIST_INCOHERENT.format(&[
            ("what", &"deployments"),
            ("lists", &""),
            ("broken", &""),
        ]);
        let head = named.split(':').next().unwrap_or_default();
        assert!(said[0].starts_with(head), "{head:?}: {what}");
    }
}

/// A 500 on the events list once: asked again after a pause of the
/// interval, said in one line as a pods list's retry is, and the events are
/// collected. Always a 500: asked again while a pause ends within the
/// events' bound (here the 3 s kubectl timeout), then the one warning. Both
/// drivers.
#[test]
fn a_transient_failure_of_the_events_list_is_asked_again() {
    let env = [(INTERVAL_ENV, "1"), (KUBECTL_TIMEOUT_ENV, "3")];
    for driver in DRIVERS {
        let once = [FaultRule::once(Target::EventsList, Fault::internal_error())];
        let outcome = run_with(&once, None, driver, &env);
        let what = describe(driver, &outcome);
        let stderr = text(&outcome.output.stderr);
        assert_eq!(outcome.output.status.code(), Some(1), "{what}");
        assert_eq!(lines_of(&stderr, &messages::LIST_AGAIN), 1, "{what}");
        let not_collected = lines_of(&stderr, &messages::EVENTS_NOT_COLLECTED);
        assert_eq!(not_collected, 0, "{what}");
        let events = outcome
            .log
            .iter()
            .filter(|e| e.list == Some(Resource::Events))
            .count();
        assert_eq!(events, 2, "{what}");

        let always = [FaultRule::always(
            Target::EventsList,
            Fault::internal_error(),
        )];
        let started = std::time::Instant::now();
        let outcome = run_with(&always, None, driver, &env);
        let took = started.elapsed();
        let what = describe(driver, &outcome);
        let stderr = text(&outcome.output.stderr);
        assert_eq!(outcome.output.status.code(), Some(1), "{what}");
        assert!(lines_of(&stderr, &messages::LIST_AGAIN) >= 1, "{what}");
        let not_collected = lines_of(&stderr, &messages::EVENTS_NOT_COLLECTED);
        assert_eq!(not_collected, 1, "{what}");
        assert!(took < Duration::from_secs(6), "{took:?}: {what}");
    }
}
