//! Live checks through the real kubectl against the replay API server:
//! `verify-pods check` (live) and `generated/verify-pods.sh` give the golden
//! output of every recorded case, also when the list spans several pages.

use checker::contract::{CHUNK_SIZE_ENV, DEADLINE_ENV};
use checker::Engine;
use serde_json::Value;
use std::process::{Command, Output};
use verify_pods_tests::corpus::{self, Case, EXPECTED_JSON, EXPECTED_TXT};
use verify_pods_tests::replay::expect;
use verify_pods_tests::replay::fixtures::{self, Pod};
use verify_pods_tests::replay::{in_parallel, FaultRule, KubeEnv, Resource, Server, State};
use verify_pods_tests::{code, run, text, Driver, KUBECTL_CHUNK_SIZE, SLOW};

/// Two cores: two cases at a time.
const WORKERS: usize = 2;

fn command(env: &KubeEnv, path: Driver) -> Command {
    let mut cmd = path.command(env);
    cmd.env(DEADLINE_ENV, "0");
    cmd
}

/// The golden's `unscheduled` count: whether events must have been fetched.
fn expects_events(case: &Case) -> bool {
    let result: Value = serde_json::from_slice(&case.read(EXPECTED_JSON)).expect("expected.json");
    result["unscheduled"].as_u64().unwrap_or(0) > 0
}

/// Whether `live` is the offline output `offline` of `state` read at
/// `offline_at` (its resourceVersion, "" for none), except that the live
/// attempt took a few whole seconds (`waited` counts them) and read the
/// state at the version the server served it: the engine renders the state
/// with each possible wait.
/// `knobs`: the case's own list limit and owner kinds, as its run got them.
fn same_as_offline(
    state: &State,
    offline_at: &str,
    offline: &str,
    live: &str,
    knobs: &expect::Knobs,
) -> bool {
    if live == offline {
        return true;
    }
    // A case with workloads (issue 30): expect.rs derives no text with
    // them yet, so the golden itself, at the one version served (the
    // server's first, 1000), is what the live run must print.
    if !state.workloads.is_empty() {
        let (golden, served) = if offline_at.is_empty() {
            (
                " (attempts=1, waited=0s)\n".to_owned(),
                " (attempts=1, waited=0s) at resourceVersion 1000\n",
            )
        } else {
            (
                format!(" at resourceVersion {offline_at}\n"),
                " at resourceVersion 1000\n",
            )
        };
        return live == offline.replacen(&golden, served, 1);
    }
    let engine = Engine::new().expect("engine");
    let at_offline = expect::final_text_as(&engine, state, offline_at, Some(state), 1, 0, knobs);
    expect::start_line(&engine) + &at_offline == offline
        && expect::single_attempt_wait_as(&engine, state, &expect::served(0), live, SLOW, knobs)
            .is_some()
}

/// A case's settings ([`Case::env`]) as the engine takes them.
fn knobs(case: &Case) -> expect::Knobs {
    expect::Knobs {
        excluded: case.selection(),
        list_limit: case.list_limit(),
    }
}

/// The resourceVersion a case's golden names ("" for none: a kubectl List).
fn golden_version(case: &Case) -> String {
    let result: Value = serde_json::from_slice(&case.read(EXPECTED_JSON)).expect("expected.json");
    result["resource_version"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// One case through one path: golden text, golden exit code, one pods list,
/// events listed only when pods are unscheduled. Err = what differs.
fn check_case(case: &Case, path: Driver) -> Result<(), String> {
    let state = State::from_case_dir(&case.dir).map_err(|e| format!("{}: {e}", case.name))?;
    let server = Server::serve(state.clone()).expect("server starts");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let output = run(command(&env, path).envs(case.env()));
    let mut problems = Vec::new();
    let expected = text(&case.read(EXPECTED_TXT));
    if !same_as_offline(
        &state,
        &golden_version(case),
        &expected,
        &text(&output.stdout),
        &knobs(case),
    ) {
        problems.push(format!(
            "stdout differs\n--- expected\n{expected}--- got\n{}",
            text(&output.stdout)
        ));
    }
    if code(&output) != case.expected_exit() {
        problems.push(format!(
            "exit {} (expected {})",
            code(&output),
            case.expected_exit()
        ));
    }
    let pods_lists = server.pods_lists().len();
    if pods_lists != 1 {
        problems.push(format!("{pods_lists} pods lists (expected exactly one)"));
    }
    let events_lists = server
        .log()
        .iter()
        .filter(|e| e.is_list_start(Resource::Events))
        .count();
    if events_lists != usize::from(expects_events(case)) {
        problems.push(format!("{events_lists} events lists"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} ({path:?}): {}\nstderr: {}",
            case.name,
            problems.join("\n"),
            text(&output.stderr)
        ))
    }
}

fn check_every_case(path: Driver) {
    let cases = corpus::served_cases();
    assert!(cases.len() >= 25, "the corpus has {} cases", cases.len());
    let failures: Vec<String> = in_parallel(cases, WORKERS, |case| check_case(&case, path))
        .into_iter()
        .filter_map(Result::err)
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

verify_pods_tests::test_both_drivers! {
    check_every_case => checker_live_gives_the_golden_output_for_every_case, generated_wrapper_live_gives_the_golden_output_for_every_case;
}

#[test]
fn checker_live_json_equals_the_golden_json() {
    let failures: Vec<String> = in_parallel(corpus::served_cases(), WORKERS, |case| {
        let server =
            Server::serve(State::from_case_dir(&case.dir).expect("state")).expect("server");
        let env = KubeEnv::new(&server.url()).expect("kube env");
        let output = run(command(&env, Driver::Checker)
            .envs(case.env())
            .args(["--format", "json"]));
        let expected = text(&case.read(EXPECTED_JSON));
        let same =
            text(&output.stdout) == expected || same_but_waited(&expected, &text(&output.stdout));
        (!same || code(&output) != case.expected_exit()).then(|| {
            format!(
                "{}: exit {}\n--- expected\n{expected}--- got\n{}",
                case.name,
                code(&output),
                text(&output.stdout)
            )
        })
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Equal JSON results but for a few whole seconds of `waited_seconds` and
/// the resourceVersion, which live is the one the server served.
fn same_but_waited(expected: &str, live: &str) -> bool {
    let (Ok(expected), Ok(mut live)) = (
        serde_json::from_str::<Value>(expected),
        serde_json::from_str::<Value>(live),
    ) else {
        return false;
    };
    let waited = live["waited_seconds"].as_u64().unwrap_or(u64::MAX);
    live["waited_seconds"] = expected["waited_seconds"].clone();
    let served = live["resource_version"] == expect::served(0);
    live["resource_version"] = expected["resource_version"].clone();
    waited <= SLOW && served && live == expected
}

/// The `kubectl` on PATH as users run it. When it is the google-cloud-sdk
/// dispatcher, it picks a kubectl build from `/version`; the pinned 1.32
/// makes it run its own code, and the output is the same.
#[test]
fn kubectl_on_path_gives_the_golden_output() {
    let Some(system_kubectl) = verify_pods_tests::replay::client::find_on_path("kubectl") else {
        panic!("kubectl is not on PATH (make tools installs it)");
    };
    let case = corpus::case("seed-one-unscheduled");
    let server = Server::serve(State::from_case_dir(&case.dir).expect("state")).expect("server");
    let env = KubeEnv::with_kubectl(&server.url(), &system_kubectl).expect("kube env");
    let output = run(command(&env, Driver::Checker).envs(case.env()));
    let state = State::from_case_dir(&case.dir).expect("state");
    let (golden, live) = (text(&case.read(EXPECTED_TXT)), text(&output.stdout));
    assert!(
        same_as_offline(
            &state,
            &golden_version(&case),
            &golden,
            &live,
            &knobs(&case)
        ),
        "{live}\n{}",
        text(&output.stderr)
    );
    assert_eq!(code(&output), case.expected_exit());
}

/// 1,200 pods (asked 500 at a time: three pages) plus unscheduled and
/// failed pods: the live result equals the offline result on the same data.
fn big_state() -> State {
    let mut pods = fixtures::many_running_pods(1200);
    let pending: Vec<Pod> = (0..3)
        .map(|i| Pod::unschedulable("ml", &format!("trainer-{i}")))
        .collect();
    let mut failed = Pod::running("web", "api-9", "kwok-node-1");
    failed.phase = fixtures::Phase::Failed;
    failed.reason = Some("OOMKilled".into());
    let events = pending
        .iter()
        .enumerate()
        .map(|(i, p)| fixtures::failed_scheduling_event(p, 600 + 60 * i as u32, 3))
        .collect();
    pods.extend(pending);
    pods.push(failed);
    State::new(pods.iter().map(Pod::to_json).collect(), events)
}

/// `state` checked offline, as a List at the version the server serves it.
fn offline(state: &State) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let pods = dir.path().join("pods.json");
    let events = dir.path().join("events.json");
    std::fs::write(
        &pods,
        serde_json::to_vec(&state.pods_document_at(&expect::served(0))).unwrap(),
    )
    .unwrap();
    std::fs::write(
        &events,
        serde_json::to_vec(&state.events_document()).unwrap(),
    )
    .unwrap();
    run(Command::new(verify_pods_tests::binary("verify-pods"))
        .arg("check")
        .arg("--snapshot")
        .arg(&pods)
        .arg("--events")
        .arg(&events)
        .env("NO_COLOR", "1"))
}

fn paginated_equals_offline(path: Driver) {
    let state = big_state();
    let expected = offline(&state);
    assert_eq!(
        code(&expected),
        1,
        "the data has unscheduled and failed pods"
    );
    let server = Server::serve(state.clone()).expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    // The workloads not read, as offline: both say so alike.
    let output = run(command(&env, path)
        .env(CHUNK_SIZE_ENV, KUBECTL_CHUNK_SIZE.to_string())
        .env(checker::contract::WORKLOADS.env, "false"));
    let (offline, live) = (text(&expected.stdout), text(&output.stdout));
    assert!(
        same_as_offline(
            &state,
            &expect::served(0),
            &offline,
            &live,
            &expect::Knobs::default()
        ),
        "--- offline\n{offline}--- live\n{live}stderr: {}",
        text(&output.stderr)
    );
    assert_eq!(code(&output), code(&expected));
    let pages = server.pods_pages();
    assert_eq!(
        pages,
        [(Some(1), Some(0)), (Some(2), Some(0)), (Some(3), Some(0))]
    );
}

verify_pods_tests::test_both_drivers! {
    paginated_equals_offline => checker_live_on_three_pages_equals_offline, generated_wrapper_live_on_three_pages_equals_offline;
}

/// A page cap smaller than kubectl's limit: kubectl follows `continue`
/// anyway, and every page comes from the state of the first one even when
/// the timeline has moved on.
#[test]
fn continue_pages_stay_on_the_state_of_the_first_page() {
    let big = fixtures::many_running(7);
    let small = fixtures::many_running(2);
    let server = Server::builder()
        .states([big, small])
        .page_size(3)
        .start()
        .expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let count = |output: Output| {
        assert!(output.status.success(), "{}", text(&output.stderr));
        let list: Value = serde_json::from_slice(&output.stdout).expect("kubectl prints JSON");
        list["items"].as_array().map_or(0, Vec::len)
    };
    assert_eq!(
        count(run(env.kubectl().args(["get", "pods", "-A", "-o", "json"]))),
        7
    );
    assert_eq!(
        count(run(env.kubectl().args(["get", "pods", "-A", "-o", "json"]))),
        2
    );
    let seen = server.pods_pages();
    assert_eq!(
        seen,
        [
            (Some(1), Some(0)),
            (Some(2), Some(0)),
            (Some(3), Some(0)),
            (Some(1), Some(1))
        ]
    );
}

/// What the legacy scripts and humans use: server-side Tables with
/// `--no-headers` and `-o wide`, field selectors, Status errors.
#[test]
fn kubectl_human_output_and_selectors_work() {
    let case = corpus::case("mixed-everything");
    let state = State::from_case_dir(&case.dir).expect("state");
    let (pods, events) = (state.pod_values(), state.event_values());
    let phase_count = |phase: &str| {
        pods.iter()
            .filter(|p| p.pointer("/status/phase").and_then(Value::as_str) == Some(phase))
            .count()
    };
    let (all, pending) = (pods.len(), phase_count("Pending"));
    let failed_scheduling = events
        .iter()
        .filter(|e| e["reason"] == "FailedScheduling")
        .count();
    let server = Server::serve(state.clone()).expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let lines = |args: &[&str]| {
        let output = run(env.kubectl().args(args));
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        text(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // `kubectl get KIND -A SELECTION --no-headers`: how many rows.
    let rows = |kind: &str, selection: &[&str]| {
        let args = [&["get", kind, "-A"], selection, &["--no-headers"]].concat();
        lines(&args).len()
    };
    assert_eq!(rows("pods", &[]), all);
    let pending_only = ["--field-selector=status.phase=Pending"];
    assert_eq!(rows("pods", &pending_only), pending);
    let not_pending = ["--field-selector=status.phase!=Pending"];
    assert_eq!(rows("pods", &not_pending), all - pending);
    let wide = lines(&["get", "pods", "-A", "-o", "wide"]);
    assert!(
        wide[0].contains("NOMINATED NODE") && wide[0].contains("READINESS GATES"),
        "{}",
        wide[0]
    );
    let first_pod = &pods[0];
    let row = wide[1].split_whitespace().collect::<Vec<_>>();
    assert_eq!(row[0], first_pod["metadata"]["namespace"]);
    assert_eq!(row[1], first_pod["metadata"]["name"]);
    let failed_only = ["--field-selector", "reason=FailedScheduling"];
    assert_eq!(rows("events", &failed_only), failed_scheduling);
    let sorted = rows("events", &["--sort-by=.lastTimestamp"]);
    assert_eq!(sorted, server.log().last().map_or(0, |e| e.items));

    let refused = run(env
        .kubectl()
        .args(["get", "pods", "-A", "--field-selector=spec.foo=bar"]));
    assert_eq!(code(&refused), 1);
    assert!(text(&refused.stderr).contains("field label not supported: spec.foo"));
    let missing = run(env.kubectl().args(["get", "pod", "-n", "default", "nope"]));
    assert_eq!(code(&missing), 1);
    verify_pods_tests::assert_stderr_says(&missing, "(NotFound)");
}

/// A fault rule aimed at one page hits only that page.
#[test]
fn fault_rules_hit_only_their_target() {
    use verify_pods_tests::replay::{Fault, Target};
    let state = fixtures::many_running(4);
    let server = Server::builder()
        .state(state)
        .page_size(2)
        .fault(FaultRule::once(
            Target::PodsPage(2),
            Fault::internal_error(),
        ))
        .start()
        .expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let first = run(env.kubectl().args(["get", "pods", "-A", "-o", "json"]));
    assert_eq!(code(&first), 1, "page 2 failed");
    let second = run(env.kubectl().args(["get", "pods", "-A", "-o", "json"]));
    assert_eq!(code(&second), 0, "{}", text(&second.stderr));
    let statuses: Vec<(Option<usize>, u16)> = server
        .pods_requests()
        .iter()
        .map(|e| (e.page, e.status))
        .collect();
    assert_eq!(
        statuses,
        [
            (Some(1), 200),
            (Some(2), 500),
            (Some(1), 200),
            (Some(2), 200)
        ]
    );
}
