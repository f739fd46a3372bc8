//! Fault tests: when the API server fails, `verify-pods check` (live) and
//! `generated/verify-pods.sh` exit 2 ("could not observe") and print no
//! status, never a verdict (0 or 1) on the empty or partial List a failing
//! kubectl still prints. A transient fault that kubectl retries by itself
//! gives the normal result.
//!
//! The state is built so that partial data would pass: the only
//! unschedulable pod is the last item of the list.

use checker::options::{CHUNK_SIZE_ENV, DEADLINE_ENV, KUBECTL_TIMEOUT_ENV};
use checker::Engine;
use serde_json::Value;
use std::process::Output;
use std::time::Duration;
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, Pod};
use verify_pods_tests::replay::{
    coherence, expect, generated_wrapper, in_parallel, Fault, FaultRule, KubeEnv, LogEntry,
    Resource, Server, State, Target,
};
use verify_pods_tests::{run, KUBECTL_CHUNK_SIZE};

/// Items per page when a fault aims at page 2.
const PAGE: usize = 3;
/// Whole seconds a run may take on a loaded machine.
const SLOW: u64 = 60;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Checker,
    Wrapper,
}

/// Nine running pods, then (last in list order) one unschedulable pod.
fn state() -> State {
    let mut pods: Vec<Value> = (0..9)
        .map(|i| {
            Pod::running("apps", &format!("web-{i}"), &format!("kwok-node-{}", i % 3)).to_json()
        })
        .collect();
    let waiting = Pod::unschedulable("zz-training", "trainer-0");
    pods.push(waiting.to_json());
    State::new(pods, vec![failed_scheduling_event(&waiting, 90, 4)])
}

struct Outcome {
    output: Output,
    log: Vec<LogEntry>,
}

fn run_with(
    rules: &[FaultRule],
    page_size: Option<usize>,
    path: Path,
    env_vars: &[(&str, &str)],
) -> Outcome {
    let mut builder = Server::builder().state(state());
    if let Some(n) = page_size {
        builder = builder.page_size(n);
    }
    for rule in rules {
        builder = builder.fault(rule.clone());
    }
    let server = builder.start().expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let mut cmd = match path {
        Path::Checker => env.checker(),
        Path::Wrapper => env.wrapper(),
    };
    cmd.env(DEADLINE_ENV, "0");
    if page_size.is_some() {
        // Pages: the drivers ask for more than the server's cap gives.
        cmd.env(CHUNK_SIZE_ENV, KUBECTL_CHUNK_SIZE.to_string());
    }
    for (name, value) in env_vars {
        cmd.env(name, value);
    }
    let output = run(&mut cmd);
    Outcome {
        output,
        log: server.log(),
    }
}

fn both_paths(
    rules: Vec<FaultRule>,
    page_size: Option<usize>,
    env_vars: &[(&str, &str)],
) -> Vec<(Path, Outcome)> {
    assert!(
        generated_wrapper().is_file(),
        "generated/verify-pods.sh is missing"
    );
    in_parallel(vec![Path::Checker, Path::Wrapper], 2, |path| {
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

#[test]
fn expired_continue_token_on_page_2_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(Target::PodsPage(2), Fault::expired())],
        Some(PAGE),
        &[],
    );
}

#[test]
fn internal_error_on_page_1_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(
            Target::PodsPage(1),
            Fault::internal_error(),
        )],
        None,
        &[],
    );
}

#[test]
fn internal_error_on_page_2_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(
            Target::PodsPage(2),
            Fault::internal_error(),
        )],
        Some(PAGE),
        &[],
    );
}

/// kubectl retries a 503 with Retry-After for about ten seconds, then fails.
#[test]
fn service_unavailable_every_time_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(Target::PodsList, Fault::unavailable(1))],
        None,
        &[],
    );
}

/// kubectl retries a connection closed before any header, then fails.
#[test]
fn connection_closed_before_headers_every_time_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(
            Target::PodsList,
            Fault::CloseBeforeHeaders,
        )],
        None,
        &[],
    );
}

#[test]
fn connection_closed_mid_body_on_page_1_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(Target::PodsPage(1), Fault::CloseMidBody)],
        None,
        &[],
    );
}

#[test]
fn connection_closed_mid_body_on_page_2_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(Target::PodsPage(2), Fault::CloseMidBody)],
        Some(PAGE),
        &[],
    );
}

#[test]
fn truncated_json_on_page_1_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(Target::PodsPage(1), Fault::TruncatedBody)],
        None,
        &[],
    );
}

#[test]
fn truncated_json_on_page_2_exits_2() {
    assert_cannot_observe(
        vec![FaultRule::always(Target::PodsPage(2), Fault::TruncatedBody)],
        Some(PAGE),
        &[],
    );
}

/// An answer slower than the kubectl timeout: kubectl is killed, exit 2.
#[test]
fn answer_slower_than_the_kubectl_timeout_exits_2() {
    let slow = FaultRule::always(Target::PodsList, Fault::Delay(Duration::from_secs(4)));
    assert_cannot_observe(vec![slow], None, &[(KUBECTL_TIMEOUT_ENV, "1")]);
}

#[test]
fn service_unavailable_once_is_retried_and_checked() {
    assert_retried_and_checked(vec![FaultRule::once(
        Target::PodsList,
        Fault::unavailable(1),
    )]);
}

#[test]
fn too_many_requests_once_is_retried_and_checked() {
    assert_retried_and_checked(vec![FaultRule::once(
        Target::PodsList,
        Fault::too_many_requests(1),
    )]);
}

#[test]
fn connection_closed_before_headers_once_is_retried_and_checked() {
    assert_retried_and_checked(vec![FaultRule::once(
        Target::PodsList,
        Fault::CloseBeforeHeaders,
    )]);
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
                + &expect::final_text_with(&engine, &state, &expect::served(0), None, 1, waited)
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
