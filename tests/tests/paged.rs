//! The paged live path through the real kubectl, both drivers: `verify-pods
//! check` (live) and `generated/verify-pods.sh` read the pods list raw, in
//! pages (`kubectl get --raw '/api/v1/pods?limit=N'`, then `&continue=T`),
//! from the replay server.
//!
//! A list is one snapshot only when every page carries the first page's
//! resourceVersion and every page arrived whole; otherwise the attempt has
//! no snapshot and the drivers list again from the start while the deadline
//! allows, else exit 2. One table of cases (a fault, a chunk size, a
//! deadline, what must happen) runs through both drivers; the state is
//! built so that a partial list gives another text: its unschedulable and
//! failed pods are the last items of the list.
//!
//! Expected texts come from the checker's engine on the served state
//! (replay::expect), the messages from the contract table
//! (checker/programs/contract.json): none is restated here.

use checker::contract::{
    self, messages, words, ARTIFACT_DIR_ENV, CHUNK_SIZE_ENV, DEADLINE_ENV, INTERVAL_ENV,
    KUBECTL_TIMEOUT_ENV,
};
use checker::Engine;
use serde_json::Value;
use std::path::Path as FsPath;
use std::process::{Command, Output};
use std::time::Duration;
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, web_pods, Phase, Pod};
use verify_pods_tests::replay::{
    expect, in_parallel, Fault, FaultRule, KubeEnv, KubeOptions, LogEntry, Resource, Server, State,
    Target,
};
use verify_pods_tests::{lines_of, run, text, Driver, DRIVERS, KUBECTL_CHUNK_SIZE, SLOW};

/// Items per page in the cases: the 11 pods are 4 pages.
const CHUNK: usize = 3;
/// A deadline no case reaches when a fault fires once.
const ROOMY: u64 = 60;
/// A deadline that "always" faults reach after two lists or more.
const SHORT: u64 = 5;

/// Nine running pods, then (last in list order) an unschedulable pod and a
/// failed one: a list without its last page passes, the whole list fails
/// at once (a failed pod never recovers, so no settling).
fn state() -> State {
    let mut pods = web_pods(9);
    let waiting = Pod::unschedulable("zz-training", "trainer-0");
    let mut failed = Pod::running("zz-web", "api-9", "kwok-node-1");
    failed.phase = Phase::Failed;
    failed.reason = Some("OOMKilled".into());
    pods.push(waiting.to_json());
    pods.push(failed.to_json());
    State::new(pods, vec![failed_scheduling_event(&waiting, 90, 4)])
}

/// The driver's command against `env`, with the knobs (environment
/// variables, which both drivers read) of a case.
fn command(env: &KubeEnv, driver: Driver, knobs: &[(&str, String)]) -> Command {
    let mut cmd = driver.command(env);
    // The pods' pages are under test here; the workloads' lists are read
    // (and saved) in tests/tests/workloads.rs and artifacts.rs.
    cmd.env(INTERVAL_ENV, "1")
        .env(checker::contract::WORKLOADS.env, "false");
    for (name, value) in knobs {
        cmd.env(name, value);
    }
    cmd
}

/// What a run must end with.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The whole list's verdict (exit 1 and its text) after this many
    /// lists (first pages served): 1 = no re-list.
    Verdict { lists: usize },
    /// Exit 2 with this message of the contract, no verdict, after at
    /// least this many lists.
    CannotObserve {
        message: &'static contract::Message,
        lists: usize,
    },
}

/// One line of the table.
struct Case {
    name: &'static str,
    /// Fault rules on the pods list.
    rules: Vec<FaultRule>,
    chunk: usize,
    deadline: u64,
    /// `--kubectl-timeout`, when the case needs a short one.
    kubectl_timeout: Option<u64>,
    expect: Expect,
}

fn case(
    name: &'static str,
    rules: Vec<FaultRule>,
    deadline: u64,
    kubectl_timeout: Option<u64>,
    expect: Expect,
) -> Case {
    Case {
        name,
        rules,
        chunk: CHUNK,
        deadline,
        kubectl_timeout,
        expect,
    }
}

fn page(n: usize) -> Target {
    Target::PodsPage(n)
}

/// A stall longer than the short kubectl timeout of its cases.
const STALL: Duration = Duration::from_secs(20);
/// The kubectl timeout of the stall cases: kubectl hangs mid-page past it.
const TIMEOUT: u64 = 4;

fn verdict(lists: usize) -> Expect {
    Expect::Verdict { lists }
}

fn incoherent() -> Expect {
    Expect::CannotObserve {
        message: &messages::LIST_INCOHERENT,
        lists: 2,
    }
}

/// Every case, one line each.
#[rustfmt::skip]
fn cases() -> Vec<Case> {
    use FaultRule as R;
    vec![
        case("pages at one version", vec![], 0, None, verdict(1)),
        case("other version on page 2 once", vec![R::once(page(2), Fault::OtherVersion)], ROOMY, None, verdict(2)),
        case("other version on page 3 every time", vec![R::always(page(3), Fault::OtherVersion)], SHORT, None, incoherent()),
        case("410 on page 2 once", vec![R::once(page(2), Fault::expired())], ROOMY, None, verdict(2)),
        case("410 on page 2 every time", vec![R::always(page(2), Fault::expired())], SHORT, None, incoherent()),
        case("410 on page 2 at deadline 0", vec![R::always(page(2), Fault::expired())], 0, None,
             Expect::CannotObserve { message: &messages::LIST_INCOHERENT, lists: 1 }),
        case("connection closed mid-page 2 once", vec![R::once(page(2), Fault::CloseMidBody)], ROOMY, None, verdict(2)),
        case("connection closed mid-page 4 every time", vec![R::always(page(4), Fault::CloseMidBody)], SHORT, None, incoherent()),
        case("kubectl stalls mid-page 2 once", vec![R::once(page(2), Fault::StallMidBody(STALL))], ROOMY, Some(TIMEOUT), verdict(2)),
        case("kubectl stalls mid-page 2 every time", vec![R::always(page(2), Fault::StallMidBody(STALL))], SHORT + TIMEOUT, Some(TIMEOUT), incoherent()),
        case("page 2 cut, kubectl exits 0, once", vec![R::once(page(2), Fault::TruncatedBody)], ROOMY, None, verdict(2)),
        case("page 4 cut, kubectl exits 0, every time", vec![R::always(page(4), Fault::TruncatedBody)], SHORT, None, incoherent()),
        // A cut first page is asked again while the deadline allows
        // (faults.rs, one retry rule); at deadline 0, the reader's words.
        case("page 1 cut, kubectl exits 0", vec![R::always(page(1), Fault::TruncatedBody)], 0, None,
             Expect::CannotObserve { message: &messages::UNREADABLE_OUTPUT, lists: 0 }),
        case("410 on page 1", vec![R::always(page(1), Fault::expired())], ROOMY, None,
             Expect::CannotObserve { message: &messages::KUBECTL_FAILED, lists: 0 }),
    ]
}

/// What one run did.
struct Run {
    output: Output,
    log: Vec<LogEntry>,
}

impl Run {
    fn stdout(&self) -> String {
        text(&self.output.stdout)
    }

    fn stderr(&self) -> String {
        text(&self.output.stderr)
    }

    fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// The pods list requests that were answered as a first page.
    fn lists(&self) -> usize {
        self.log
            .iter()
            .filter(|e| e.is_list_start(Resource::Pods))
            .count()
    }

    fn describe(&self) -> String {
        let log: Vec<String> = self.log.iter().map(LogEntry::line).collect();
        format!(
            "exit {:?}\nstdout:\n{}stderr:\n{}requests:\n{}",
            self.code(),
            self.stdout(),
            self.stderr(),
            log.join("\n")
        )
    }
}

/// The knobs of a case, as environment variables.
fn knobs(case: &Case) -> Vec<(&'static str, String)> {
    let mut knobs = vec![
        (CHUNK_SIZE_ENV, case.chunk.to_string()),
        (DEADLINE_ENV, case.deadline.to_string()),
    ];
    if let Some(timeout) = case.kubectl_timeout {
        knobs.push((KUBECTL_TIMEOUT_ENV, timeout.to_string()));
    }
    knobs
}

fn run_case(case: &Case, driver: Driver) -> Run {
    let mut builder = Server::builder().state(state());
    for rule in &case.rules {
        builder = builder.fault(rule.clone());
    }
    let server = builder.start().expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let output = run(&mut command(&env, driver, &knobs(case)));
    Run {
        output,
        log: server.log(),
    }
}

/// The whole list's text after one attempt, if `stdout` is it.
fn is_verdict(stdout: &str) -> bool {
    let engine = Engine::new().expect("engine");
    // Every coherent list of this one-state timeline is state 0's, read
    // without the workloads (`command`).
    let knobs = expect::Knobs {
        excluded: checker::engine::Excluded {
            workloads: false,
            ..Default::default()
        },
        ..Default::default()
    };
    expect::single_attempt_wait_as(&engine, &state(), &expect::served(0), stdout, SLOW, &knobs)
        .is_some()
}

/// Why `run` is not what `case` expects, if it is not.
fn judge(case: &Case, run: &Run) -> Option<String> {
    let (stdout, stderr) = (run.stdout(), run.stderr());
    let again = lines_of(&stderr, &messages::LIST_AGAIN);
    match case.expect {
        Expect::Verdict { lists } => {
            if run.code() != Some(1) || !is_verdict(&stdout) {
                return Some("not the whole list's verdict".into());
            }
            if run.lists() != lists {
                return Some(format!("{} lists, expected {lists}", run.lists()));
            }
            if again != lists - 1 {
                return Some(format!("{again} 'listing again' lines"));
            }
        }
        Expect::CannotObserve { message, lists } => {
            if run.code() != Some(i32::from(message.exit_code())) {
                return Some("not the message's exit code".into());
            }
            if stdout != verify_pods_tests::start_line() {
                return Some("printed something but the start line on stdout".into());
            }
            if lines_of(&stderr, message) != 1 {
                return Some(format!("no line `{}` on stderr", message.text));
            }
            if run.lists() < lists {
                return Some(format!("{} lists, expected {lists} or more", run.lists()));
            }
            if again + 1 < run.lists() {
                return Some(format!("{again} 'listing again' lines"));
            }
        }
    }
    // A page of another version is named in the contract's words, the same
    // in both drivers, on every line that reports a broken list.
    let other_version = case.rules.iter().any(|r| r.fault == Fault::OtherVersion);
    let broken_lines = again + usize::from(matches!(case.expect, Expect::CannotObserve { .. }));
    if other_version && lines_of(&stderr, &words::PAGE_OTHER_VERSION) != broken_lines {
        return Some(format!(
            "no line `{}` on stderr",
            words::PAGE_OTHER_VERSION.text
        ));
    }
    let fired = case.rules.is_empty()
        || run
            .log
            .iter()
            .any(|e| e.list == Some(Resource::Pods) && e.fault.is_some());
    (!fired).then(|| "the fault never fired".into())
}

#[test]
fn every_case_through_both_drivers() {
    let runs: Vec<(usize, Driver)> = (0..cases().len())
        .flat_map(|i| DRIVERS.map(|driver| (i, driver)))
        .collect();
    // Four at a time on two cores: most runs wait out their deadline (the
    // whole table takes about a quarter of its wall time in CPU).
    let failures: Vec<String> = in_parallel(runs, 4, |(i, driver)| {
        let case = &cases()[i];
        let run = run_case(case, driver);
        judge(case, &run)
            .map(|why| format!("{} ({driver:?}): {why}\n{}", case.name, run.describe()))
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The request log of a list without faults: limit on every page, no token
/// on the first, the previous page's token on each next one, one version.
#[test]
fn pages_ask_for_limit_then_continue_at_one_version() {
    let case = &cases()[0];
    for driver in DRIVERS {
        let run = run_case(case, driver);
        let pods: Vec<&LogEntry> = run
            .log
            .iter()
            .filter(|e| e.list == Some(Resource::Pods))
            .collect();
        let shape: Vec<_> = pods
            .iter()
            .map(|e| {
                (
                    e.page,
                    e.limit,
                    e.continue_token.is_some(),
                    e.resource_version.as_deref(),
                    e.status,
                )
            })
            .collect();
        let expected: Vec<_> = (1..=4)
            .map(|page| (Some(page), Some(CHUNK), page > 1, Some("1000"), 200))
            .collect();
        assert_eq!(shape, expected, "{driver:?}: {}", run.describe());
        let events: Vec<_> = run
            .log
            .iter()
            .filter(|e| e.list == Some(Resource::Events))
            .map(|e| (e.page, e.limit, e.query.contains("fieldSelector=")))
            .collect();
        assert_eq!(events, [(Some(1), Some(CHUNK), true)], "{driver:?}");
    }
}

/// Chunk size 0 (one request, no `limit`: the default), 1, 3 and kubectl's
/// 500 give the same text in both drivers.
#[test]
fn every_chunk_size_gives_the_same_result() {
    let default = usize::try_from(contract::CHUNK_SIZE.default).expect("fits");
    let mut chunks = vec![0, 1, CHUNK, KUBECTL_CHUNK_SIZE, default];
    chunks.sort_unstable();
    chunks.dedup();
    let runs: Vec<(usize, Driver)> = chunks
        .into_iter()
        .flat_map(|chunk| DRIVERS.map(|driver| (chunk, driver)))
        .collect();
    let pods = state().pods.len();
    let failures: Vec<String> = in_parallel(runs, 2, |(chunk, driver)| {
        let case = Case {
            chunk,
            ..case("chunk", vec![], 0, None, verdict(1))
        };
        let run = run_case(&case, driver);
        let limits: Vec<Option<usize>> = run
            .log
            .iter()
            .filter(|e| e.list == Some(Resource::Pods))
            .map(|e| e.limit)
            .collect();
        let pages = if chunk == 0 { 1 } else { pods.div_ceil(chunk) };
        let limit = (chunk > 0).then_some(chunk);
        let why = judge(&case, &run)
            .or_else(|| (limits != vec![limit; pages]).then(|| format!("limits {limits:?}")));
        why.map(|why| format!("chunk {chunk} ({driver:?}): {why}\n{}", run.describe()))
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An https server that wants a bearer token, and a kubeconfig whose user
/// gets it from an exec credential plugin: both drivers check through the
/// real kubectl, which runs the plugin once per page.
#[test]
fn exec_credential_plugin_over_tls() {
    let token = "paged-exec-token";
    for driver in DRIVERS {
        let server = Server::builder()
            .state(state())
            .tls()
            .token(token)
            .start()
            .expect("server");
        let options = KubeOptions::with_exec_plugin(&server, token, Duration::from_millis(50));
        let env = KubeEnv::with_options(&server.url(), &options).expect("kube env");
        let knobs = [
            (CHUNK_SIZE_ENV, CHUNK.to_string()),
            (DEADLINE_ENV, "0".to_owned()),
        ];
        let output = run(&mut command(&env, driver, &knobs));
        let run = Run {
            output,
            log: server.log(),
        };
        let case = case("exec plugin", vec![], 0, None, verdict(1));
        if let Some(why) = judge(&case, &run) {
            panic!("{driver:?}: {why}\n{}", run.describe());
        }
        let bearer = format!("Bearer {token}");
        assert!(
            run.log
                .iter()
                .all(|e| e.authorization.as_deref() == Some(bearer.as_str()) && e.status == 200),
            "{driver:?}: {}",
            run.describe()
        );
        let lists = run.log.iter().filter(|e| e.list.is_some()).count();
        assert_eq!(lists, 5, "4 pods pages, 1 events page: {}", run.describe());
        assert_eq!(env.exec_plugin_runs(), lists, "one plugin run per kubectl");
    }
}

/// `verify-pods check` offline on `dir`'s pods.json and events.json.
fn offline(dir: &FsPath, json: bool) -> Output {
    let mut cmd = Command::new(verify_pods_tests::binary("verify-pods"));
    cmd.arg("check")
        .arg("--snapshot")
        .arg(dir.join("pods.json"))
        .arg("--events")
        .arg(dir.join("events.json"))
        .env("NO_COLOR", "1");
    if json {
        cmd.args(["--format", "json"]);
    }
    run(&mut cmd)
}

/// The saved artifacts of a paged list that broke once (so the saved copy
/// is the second list's, not both) replay offline to the live text and to
/// the saved report.json, from both drivers.
#[test]
fn saved_pages_replay_offline_to_the_same_result() {
    for driver in DRIVERS {
        let saved = tempfile::tempdir().expect("tempdir");
        let server = Server::builder()
            .state(state())
            .fault(FaultRule::once(page(2), Fault::expired()))
            .start()
            .expect("server");
        let env = KubeEnv::new(&server.url()).expect("kube env");
        let knobs = [
            (CHUNK_SIZE_ENV, CHUNK.to_string()),
            (DEADLINE_ENV, ROOMY.to_string()),
            (ARTIFACT_DIR_ENV, saved.path().display().to_string()),
        ];
        let live = run(&mut command(&env, driver, &knobs));
        let what = format!("{driver:?}: {}", text(&live.stderr));
        assert_eq!(live.status.code(), Some(1), "{what}");
        assert_eq!(server.pods_lists().len(), 2, "{what}");
        let pods = std::fs::read_to_string(saved.path().join("pods.json")).expect("pods.json");
        assert_eq!(pods.lines().count(), 4, "four pages, one a line: {what}");
        let text_offline = offline(saved.path(), false);
        assert_eq!(text(&text_offline.stdout), text(&live.stdout), "{what}");
        assert_eq!(text_offline.status.code(), Some(1));
        let json_offline = offline(saved.path(), true);
        let report = std::fs::read(saved.path().join("report.json")).expect("report.json");
        let parse = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).expect("JSON");
        assert_eq!(parse(&json_offline.stdout), parse(&report), "{what}");
    }
}

/// Chunk size 0 asks for the whole list in one request: a server that pages
/// anyway (a continue token nobody asked for) is not read as a snapshot and
/// its token is not followed; both drivers exit 2 after one request.
#[test]
fn a_token_nobody_asked_for_is_refused() {
    let message = &messages::UNREADABLE_OUTPUT;
    for driver in DRIVERS {
        let server = Server::builder()
            .state(state())
            .page_size(CHUNK)
            .start()
            .expect("server");
        let env = KubeEnv::new(&server.url()).expect("kube env");
        let knobs = [
            (CHUNK_SIZE_ENV, "0".to_owned()),
            (DEADLINE_ENV, "0".to_owned()),
        ];
        let output = run(&mut command(&env, driver, &knobs));
        let run = Run {
            output,
            log: server.log(),
        };
        let what = format!("{driver:?}: {}", run.describe());
        assert_eq!(run.code(), Some(i32::from(message.exit_code())), "{what}");
        assert_eq!(lines_of(&run.stderr(), message), 1, "{what}");
        let limits: Vec<_> = server.pods_requests().iter().map(|e| e.limit).collect();
        assert_eq!(limits, [None], "{what}");
    }
}
