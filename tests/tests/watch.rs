//! The checker's watch-based settle (issue 15), through the real kubectl
//! against the replay server, whose timeline advances by the clock
//! (`Advance::Every`: lists do not move it, so only the watch can see it
//! move): one list plus one watch reaches the verdict; every state the
//! checker prints is one state of the timeline; a cut watch, an ERROR event
//! (410) and a server that cannot watch fall back to a fresh list or to
//! polling; `--watch=false` polls.

use checker::contract::{self, messages, DEADLINE_ENV, INTERVAL_ENV};
use checker::Engine;
use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};
use verify_pods_tests::replay::coherence;
use verify_pods_tests::replay::expect;
use verify_pods_tests::replay::fixtures::{Phase, Pod};
use verify_pods_tests::replay::{
    Advance, Fault, FaultRule, KubeEnv, LogEntry, Server, State, Target, WatchEnd,
};
use verify_pods_tests::{lines_of, run, shown, text, SLOW};

fn running(name: &str) -> Value {
    Pod::running("default", name, "kwok-node-0").to_json()
}

fn waiting(name: &str) -> Value {
    Pod::unschedulable("default", name).to_json()
}

/// 10 running pods and `trainer-0`, unschedulable until state 1 binds it.
fn bind_timeline() -> Vec<State> {
    let others: Vec<Value> = (0..10).map(|i| running(&format!("app-{i}"))).collect();
    let before = State::new(
        [others.clone(), vec![waiting("trainer-0")]].concat(),
        vec![],
    );
    let after = State::new([others, vec![running("trainer-0")]].concat(), vec![]);
    vec![before, after]
}

fn server(states: Vec<State>, period: Duration, faults: Vec<FaultRule>) -> (Server, KubeEnv) {
    let mut builder = Server::builder()
        .states(states)
        .advance(Advance::Every(period));
    for rule in faults {
        builder = builder.fault(rule);
    }
    let server = builder.start().expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    (server, env)
}

fn check(env: &KubeEnv, deadline: u64, interval: u64, extra: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = run(env
        .checker()
        .args(extra)
        .env(DEADLINE_ENV, deadline.to_string())
        .env(INTERVAL_ENV, interval.to_string()));
    (output, started.elapsed())
}

/// Whether `stdout` is state `before`'s progress line (attempt 1, at 0 s)
/// then the result of state `after` after `attempts` attempts (any whole
/// seconds waited), each at the version the server serves it: the text of a
/// run that settled.
fn settled_text(
    stdout: &str,
    states: &[State],
    (before, after): (usize, usize),
    attempts: usize,
    deadline: u64,
) -> bool {
    let engine = Engine::new().expect("engine");
    let (at_before, at_after) = (expect::served(before), expect::served(after));
    let (before, after) = (&states[before], &states[after]);
    let progress = expect::start_line(&engine)
        + &expect::progress_text(&engine, before, &at_before, 1, 0, deadline);
    stdout.strip_prefix(&progress).is_some_and(|rest| {
        (0..=SLOW).any(|waited| {
            expect::final_text(&engine, after, &at_after, after, attempts, waited) == rest
        })
    })
}

fn pods_watches(server: &Server) -> Vec<LogEntry> {
    server.watches()
}

/// The timeline binds the pod at 1 s; polling every 30 s would see it at
/// 30 s. The watch sees it within a quiet window: the verdict comes well
/// before the first poll, from one list and one watch (no list again), and
/// the text is state 0's progress line then state 1's result.
#[test]
fn the_verdict_comes_from_one_list_and_one_watch() {
    let states = bind_timeline();
    let (server, env) = server(states.clone(), Duration::from_secs(1), vec![]);
    let (output, took) = check(&env, 60, 30, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    assert!(took < Duration::from_secs(10), "took {took:?}: polled?");
    assert_eq!(server.pods_lists().len(), 1, "one list");
    let watches = pods_watches(&server);
    assert_eq!(watches.len(), 1, "one watch");
    let watch = watches[0].watch.as_ref().expect("a watch record");
    assert_eq!(
        watch.from.as_deref(),
        Some("1000"),
        "from the list's version"
    );
    assert!(watch.bookmarks, "bookmarks asked for");
    let asked = watch.timeout_seconds.expect("timeoutSeconds");
    assert!(
        (55..=61).contains(&asked),
        "timeoutSeconds {asked}: the time left"
    );
    assert!(
        settled_text(&text(&output.stdout), &states, (0, 1), 2, 60),
        "{}",
        shown(&output)
    );
}

/// The result (`--format json`) of a run.
fn result_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not a JSON result ({e}): {}", shown(output)))
}

/// The verdict names the resourceVersion it was decided at (issue 15): after
/// the watch's events, the version of the last one applied, which the server
/// logged as the last it sent (state 1's); the text's status line says the
/// same (`settled_text` renders state 1 at that version).
#[test]
fn the_verdict_names_the_version_of_the_last_event_applied() {
    let states = bind_timeline();
    let (server, env) = server(states.clone(), Duration::from_secs(1), vec![]);
    let (output, _) = check(&env, 60, 30, &["--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    let watches = pods_watches(&server);
    assert_eq!(watches.len(), 1, "one watch: {}", shown(&output));
    let watch = watches[0].watch.as_ref().expect("a watch record");
    assert_eq!(watch.events, ["MODIFIED"], "{}", shown(&output));
    assert_eq!(watch.version, Some(expect::served(1)));
    assert_eq!(result_of(&output)["resource_version"], expect::served(1));
}

/// A BOOKMARK moves the version too: the timeline's second state has the
/// same pods (the server sends a bookmark, no event), the pod never binds,
/// and the verdict at the deadline names the bookmark's version, not the
/// list's.
#[test]
fn the_verdict_names_the_version_of_a_bookmark() {
    let waiting_state = bind_timeline().swap_remove(0);
    let states = vec![waiting_state.clone(), waiting_state];
    let (server, env) = server(states, Duration::from_secs(2), vec![]);
    let (output, _) = check(&env, 6, 1, &["--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    let watches = pods_watches(&server);
    assert_eq!(watches.len(), 1, "one watch: {}", shown(&output));
    let watch = watches[0].watch.as_ref().expect("a watch record");
    assert_eq!(
        watch.from,
        Some(expect::served(0)),
        "listed before the bookmark"
    );
    assert_eq!(
        watch.events.first(),
        Some(&"BOOKMARK"),
        "{}",
        shown(&output)
    );
    assert_eq!(result_of(&output)["resource_version"], expect::served(1));
}

/// Polling (`--watch=false`, as the bash function always does): the verdict
/// names the version of the list it was decided on, the last one served.
#[test]
fn a_polled_verdict_names_the_version_of_its_list() {
    let states = bind_timeline();
    let (server, env) = server(states, Duration::from_secs(1), vec![]);
    let (output, _) = check(&env, 20, 2, &["--format", "json", "--watch=false"]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    let lists = server.pods_lists();
    assert!(lists.len() >= 2, "polled: {}", shown(&output));
    let last = lists.last().and_then(|l| l.resource_version.clone());
    assert_eq!(last, Some(expect::served(1)));
    assert_eq!(result_of(&output)["resource_version"], expect::served(1));
}

/// `--watch=false` (and KWOK_VERIFY_PODS_WATCH=false) lists again every
/// interval, as the bash function does: no watch, several lists.
#[test]
fn watch_false_polls() {
    for how in ["flag", "env"] {
        let states = bind_timeline();
        let (server, env) = server(states.clone(), Duration::from_secs(1), vec![]);
        let mut cmd = env.checker();
        match how {
            "flag" => cmd.arg("--watch=false"),
            _ => cmd.env(contract::WATCH.env, "false"),
        };
        let output = run(cmd.env(DEADLINE_ENV, "20").env(INTERVAL_ENV, "2"));
        assert_eq!(output.status.code(), Some(0), "{how}: {}", shown(&output));
        assert!(server.watches().is_empty(), "{how}: no watch");
        assert!(server.pods_lists().len() >= 2, "{how}: polled");
        assert!(
            settled_text(&text(&output.stdout), &states, (0, 1), 2, 20),
            "{how}: {}",
            shown(&output)
        );
    }
}

/// A bad value is bad input: one line, exit 2, never a pass.
#[test]
fn a_watch_setting_that_is_not_a_boolean_is_refused() {
    let (_server, env) = server(bind_timeline(), Duration::from_secs(1), vec![]);
    let output = run(env.checker().arg("--watch=yes"));
    assert_eq!(output.status.code(), Some(2), "{}", shown(&output));
    // The words come from the contract table, as both drivers print them.
    let refused = |named: &str, value: &str| {
        let why = contract::messages::SETTING_NOT_A_BOOLEAN
            .format(&[("named", &named), ("value", &value)]);
        format!("{}{why}\n", contract::CHECKER_PREFIX.error)
    };
    assert_eq!(
        text(&output.stderr),
        refused(contract::WATCH.flag.expect("a flag"), "yes")
    );
    let output = run(env.checker().env(contract::WATCH.env, "no"));
    assert_eq!(text(&output.stderr), refused(contract::WATCH.env, "no"));
}

/// A watch that breaks is never continued from a partial state: the
/// checker lists again from the start, watches from the new list, and
/// reaches the verdict. `fault` breaks the first watch; `end` is how the
/// server logged its end.
fn falls_back_to_a_fresh_list(fault: Fault, end: WatchEnd, warning: &str) {
    let states = three_states();
    let rule = FaultRule::once(Target::PodsWatch, fault);
    let (server, env) = server(states.clone(), Duration::from_secs(1), vec![rule]);
    let (output, _) = check(&env, 60, 1, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    let watches = pods_watches(&server);
    assert!(watches.len() >= 2, "watched again: {}", shown(&output));
    assert_eq!(watches[0].watch.as_ref().and_then(|w| w.end), Some(end));
    let lists = server.pods_lists();
    assert!(lists.len() >= 2, "listed again: {}", shown(&output));
    // The second watch starts from the second list's version.
    assert_eq!(
        watches[1].watch.as_ref().and_then(|w| w.from.clone()),
        lists[1].resource_version
    );
    let stderr = text(&output.stderr);
    assert!(stderr.contains(warning), "{stderr}");
    assert!(lines_of(&stderr, &messages::WATCH_AGAIN) >= 1, "{stderr}");
    assert_result_of(&output, &states, 2);
}

/// The printed result is that of `states[state]`, and of no other state.
fn assert_result_of(output: &Output, states: &[State], state: usize) {
    let engine = Engine::new().expect("engine");
    let stdout = text(&output.stdout);
    let reports = coherence::reports(&engine, states);
    assert_eq!(
        coherence::explain(&stdout, &reports),
        Ok(vec![state]),
        "{stdout}"
    );
}

/// State 1 binds one pod and adds another: two events of one version.
fn three_states() -> Vec<State> {
    let others: Vec<Value> = (0..4).map(|i| running(&format!("app-{i}"))).collect();
    vec![
        State::new(
            [others.clone(), vec![waiting("trainer-0")]].concat(),
            vec![],
        ),
        State::new(
            [
                others.clone(),
                vec![running("trainer-0"), waiting("trainer-1")],
            ]
            .concat(),
            vec![],
        ),
        State::new(
            [others, vec![running("trainer-0"), running("trainer-1")]].concat(),
            vec![],
        ),
    ]
}

/// The first watch is cut after 1 of state 1's 2 events (kubectl: unexpected
/// EOF, exit 1): the half-applied transition is never evaluated, and, as
/// client-go's reflector does, the checker watches again from the last
/// version it has whole (state 0's: the list's), saying so, without a new
/// list (issue 21, item 7; it listed again before).
#[test]
fn a_watch_cut_mid_stream_watches_again_from_the_last_whole_version() {
    let states = three_states();
    let rule = FaultRule::once(Target::PodsWatch, Fault::CutWatch(1));
    let (server, env) = server(states.clone(), Duration::from_secs(1), vec![rule]);
    let (output, _) = check(&env, 60, 1, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    let watches = pods_watches(&server);
    assert!(watches.len() >= 2, "watched again: {}", shown(&output));
    assert_eq!(
        watches[0].watch.as_ref().and_then(|w| w.end),
        Some(WatchEnd::Cut)
    );
    assert_eq!(
        server.pods_lists().len(),
        1,
        "no list again: {}",
        shown(&output)
    );
    assert_eq!(
        watches[1].watch.as_ref().and_then(|w| w.from.clone()),
        Some(expect::served(0)),
        "from the list's version, the last whole one"
    );
    let stderr = text(&output.stderr);
    assert!(stderr.contains("unexpected EOF"), "{stderr}");
    assert_eq!(lines_of(&stderr, &messages::WATCH_RETRY), 1, "{stderr}");
    assert_result_of(&output, &states, 2);
}

/// An ERROR event with a 410 Status after 1 event (kubectl exits 0 and
/// prints it: the checker reads it).
#[test]
fn an_error_event_410_lists_again() {
    falls_back_to_a_fresh_list(
        Fault::error_event(1, 410),
        WatchEnd::Error,
        "ERROR event 410 Expired",
    );
}

/// A watch that fails before its first event for a transient reason (a
/// 500) is retried after a back-off, from the list's version, without a new
/// list; the checker does not fall back to polling (it did: "the server
/// cannot watch the pods").
#[test]
fn a_watch_failing_with_500_is_watched_again() {
    let states = bind_timeline();
    let rule = FaultRule::once(Target::PodsWatch, Fault::internal_error());
    let (server, env) = server(states.clone(), Duration::from_secs(2), vec![rule]);
    let (output, _) = check(&env, 30, 30, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    assert_eq!(
        server.pods_lists().len(),
        1,
        "no polling: {}",
        shown(&output)
    );
    assert_eq!(server.watches().len(), 2, "{}", shown(&output));
    let stderr = text(&output.stderr);
    assert_eq!(lines_of(&stderr, &messages::WATCH_RETRY), 1, "{stderr}");
    assert_eq!(lines_of(&stderr, &messages::WATCH_REFUSED), 0, "{stderr}");
}

/// A stream that never goes quiet: `trainer-0` binds 1 s in, and from
/// then on another pod comes and goes every 50 ms until past the deadline.
/// The latest whole state is evaluated anyway: the verdict comes within
/// half a second of the bind (today: never before the deadline, and then
/// exit 1 from the first list's state, `waited=0s`).
#[test]
fn a_busy_stream_still_decides_soon_after_the_bind() {
    let period = Duration::from_millis(50);
    let others: Vec<Value> = (0..10).map(|i| running(&format!("app-{i}"))).collect();
    let before = State::new(
        [others.clone(), vec![waiting("trainer-0")]].concat(),
        vec![],
    );
    let bound = [others, vec![running("trainer-0")]].concat();
    let churn = State::new([bound.clone(), vec![running("zz-churn")]].concat(), vec![]);
    let bound = State::new(bound, vec![]);
    // 1 s of the waiting state, the bind, then 20 s of churn.
    let mut states = vec![before; 20];
    for i in 0..400 {
        states.push(if i % 2 == 0 {
            bound.clone()
        } else {
            churn.clone()
        });
    }
    let (_server, env) = server(states, period, vec![]);
    let deadline = 15;
    let (output, took) = check(&env, deadline, 5, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    // The bind at 1 s, plus the half second, plus kubectl's start
    // and list on a loaded machine: far from the deadline either way.
    assert!(
        took < Duration::from_secs(deadline / 2),
        "took {took:?}: {}",
        shown(&output)
    );
}

/// A server that will not watch (`fault` on every watch, its reason in
/// stderr): the checker asks once, says so once, does not retry the watch,
/// and polls to the settled text.
fn refused_watch_is_polled(fault: Fault, reason: &str) {
    let states = bind_timeline();
    let rule = FaultRule::always(Target::PodsWatch, fault);
    let (server, env) = server(states.clone(), Duration::from_secs(1), vec![rule]);
    let (output, _) = check(&env, 20, 2, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    assert_eq!(server.watches().len(), 1, "asked once: {}", shown(&output));
    assert!(server.pods_lists().len() >= 2, "polled: {}", shown(&output));
    let stderr = text(&output.stderr);
    assert_eq!(lines_of(&stderr, &messages::WATCH_REFUSED), 1, "{stderr}");
    assert_eq!(lines_of(&stderr, &messages::WATCH_RETRY), 0, "{stderr}");
    assert!(stderr.contains(reason), "{stderr}");
    assert!(
        settled_text(&text(&output.stdout), &states, (0, 1), 2, 20),
        "{}",
        shown(&output)
    );
}

/// One test a line: `name: fault, the reason stderr names;`.
macro_rules! refused_watch_is_polled {
    ($($(#[$doc:meta])* $name:ident: $fault:expr, $reason:expr;)*) => {$(
        $(#[$doc])*
        #[test]
        fn $name() {
            refused_watch_is_polled($fault, $reason);
        }
    )*};
}

refused_watch_is_polled! {
    /// 403 Forbidden: the server will not let this user watch.
    a_forbidden_watch_is_polled: forbidden(), "Forbidden";
    /// 405: a server that cannot watch.
    a_server_that_cannot_watch_is_polled: Fault::method_not_allowed(), "MethodNotAllowed";
}

/// 403 Forbidden on the watch, as the API server words it.
fn forbidden() -> Fault {
    Fault::Status {
        code: 403,
        reason: "Forbidden".into(),
        message: "pods is forbidden: User \"ci\" cannot watch resource \"pods\"".into(),
        retry_after: None,
    }
}

// ------------------------------------------------------------ race on watch

use verify_pods_tests::rng::Rng;

/// Pods by name; each state is listed sorted by namespace/name, as the API
/// server lists (and as the checker keeps them).
fn state_of(pods: &std::collections::BTreeMap<String, Pod>) -> State {
    State::new(pods.values().map(Pod::to_json).collect(), vec![])
}

/// A timeline whose every transition makes 2 to 4 changes of one version
/// (bind, create, delete, now and then a failure): a state evaluated in the
/// middle of a burst would show counts no state has.
fn random_watch_timeline(seed: u64) -> Vec<State> {
    let mut rng = Rng(seed);
    let mut pods = std::collections::BTreeMap::new();
    let mut next = 0;
    let mut add = |pods: &mut std::collections::BTreeMap<String, Pod>, bound: bool| {
        let name = format!("p{next:03}");
        next += 1;
        let pod = if bound {
            Pod::running("default", &name, "kwok-node-1")
        } else {
            Pod::unschedulable("default", &name)
        };
        pods.insert(name, pod);
    };
    for i in 0..8 {
        add(&mut pods, i % 3 != 0);
    }
    let mut states = vec![state_of(&pods)];
    for _ in 0..5 {
        for _ in 0..2 + rng.below(3) {
            let names: Vec<String> = pods.keys().cloned().collect();
            let name = &names[rng.below(names.len())];
            match rng.below(10) {
                0..=3 => {
                    let pod = pods.get_mut(name).expect("listed");
                    pod.node = Some("kwok-node-2".into());
                    pod.phase = Phase::Running;
                }
                4..=6 => add(&mut pods, rng.below(2) == 0),
                7 | 8 if pods.len() > 2 => {
                    pods.remove(name);
                }
                _ => {
                    let pod = pods.get_mut(name).expect("listed");
                    pod.phase = if rng.below(4) == 0 {
                        Phase::Failed
                    } else {
                        Phase::Pending
                    };
                }
            }
        }
        states.push(state_of(&pods));
    }
    states
}

/// The states (indices) whose status counts are `counts`.
fn states_with(counts: coherence::Counts, reports: &[Value]) -> Vec<usize> {
    let number = |r: &Value, key: &str| r[key].as_u64().unwrap_or(u64::MAX);
    (0..reports.len())
        .filter(|&i| {
            let r = &reports[i];
            counts
                == coherence::Counts {
                    total: number(r, "total"),
                    running: number(r, "running"),
                    pending: number(r, "pending"),
                    unscheduled: number(r, "unscheduled"),
                    failed: number(r, "failed"),
                }
        })
        .collect()
}

/// Why a watched run's output is not a walk through the timeline, if it
/// is not: each printed line with counts (the progress lines, then the
/// status line) has the counts of some state, in timeline order; the final
/// output is one state's whole result, and the exit code its verdict.
fn watch_problem(stdout: &str, exit: Option<i32>, reports: &[Value]) -> Option<String> {
    let mut at = 0;
    for line in stdout.lines() {
        let Some(counts) = coherence::parse(line).counts else {
            continue;
        };
        let states = states_with(counts, reports);
        match states.iter().find(|&&s| s >= at) {
            Some(&s) => at = s,
            None => {
                return Some(format!(
                    "{line:?}: the counts of states {states:?}, after state {at}"
                ))
            }
        }
    }
    let explaining = match coherence::explain(stdout, reports) {
        Ok(explaining) => explaining,
        Err(why) => return Some(why),
    };
    let Some(&state) = explaining.iter().find(|&&s| s >= at) else {
        return Some(format!(
            "the result is that of states {explaining:?}, not after {at}"
        ));
    };
    let verdict = coherence::verdict(&reports[state]);
    let expected = if verdict == "fail" { 1 } else { 0 };
    (exit != Some(expected)).then(|| format!("exit {exit:?}, state {state} says {verdict}"))
}

/// Timelines whose transitions make several changes at one version, moved
/// by the clock while the checker watches: every state it prints is one
/// state of the timeline (never a half-applied burst), in order, and its
/// verdict is that of the state its result shows.
#[test]
fn race_on_watch_every_printed_state_is_one_state_of_the_timeline() {
    let engine = Engine::new().expect("engine");
    let seeds: Vec<u64> = (1..=12).collect();
    let problems = std::sync::Mutex::new(Vec::new());
    let watched_states = std::sync::Mutex::new(0);
    let queue = std::sync::Mutex::new(seeds.into_iter());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| loop {
                let Some(seed) = queue.lock().unwrap().next() else {
                    return;
                };
                let states = random_watch_timeline(seed);
                let reports = coherence::reports(&engine, &states);
                let (server, env) = server(states, Duration::from_millis(300), vec![]);
                let (output, _) = check(&env, 3, 1, &[]);
                let stdout = text(&output.stdout);
                if server.pods_lists().len() == 1 {
                    *watched_states.lock().unwrap() += stdout.lines().count();
                }
                if let Some(why) = watch_problem(&stdout, output.status.code(), &reports) {
                    problems
                        .lock()
                        .unwrap()
                        .push(format!("seed {seed}: {why}\n{}", shown(&output)));
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        *watched_states.lock().unwrap() > 0,
        "no run settled through a watch"
    );
}

/// A busy stream while a pod still waits (a new pod every 50 ms for 4 s,
/// so every state has other counts, then `trainer-0` binds): the states
/// evaluated on the busy stream print at most one progress line an interval
/// (2 s here), not one per evaluation (about three a second), and the
/// verdict still passes.
#[test]
fn a_busy_stream_prints_at_most_a_progress_line_an_interval() {
    let period = Duration::from_millis(50);
    let others: Vec<Value> = (0..10).map(|i| running(&format!("app-{i}"))).collect();
    let mut pods = [others, vec![waiting("trainer-0")]].concat();
    let mut states = vec![State::new(pods.clone(), vec![]); 10];
    for i in 0..80 {
        pods.push(running(&format!("zz-churn-{i:02}")));
        states.push(State::new(pods.clone(), vec![]));
    }
    let bound: Vec<Value> = pods
        .into_iter()
        .map(|pod| {
            if pod["metadata"]["name"] == "trainer-0" {
                running("trainer-0")
            } else {
                pod
            }
        })
        .collect();
    states.push(State::new(bound, vec![]));
    let (_server, env) = server(states, period, vec![]);
    let (output, _) = check(&env, 30, 2, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    let words = expect::progress_words(&Engine::new().expect("engine"));
    assert!(!words.is_empty(), "progress.jq's line begins with words");
    let progress = text(&output.stdout)
        .lines()
        .filter(|l| l.starts_with(&words))
        .count();
    // The first list's line, then at most one per 2 s of the 4.5 s churn
    // (and one when it goes quiet).
    assert!(progress <= 5, "{progress} lines: {}", shown(&output));
}

/// Issue 29: a quiet stream while a pod waits (nothing changes for the whole
/// 3 s deadline) still prints a progress line at least every interval (1 s
/// here), as the bash function prints one an attempt: never silent.
#[test]
fn a_quiet_watch_prints_a_progress_line_every_interval() {
    let others: Vec<Value> = (0..3).map(|i| running(&format!("app-{i}"))).collect();
    let states = vec![State::new(
        [others, vec![waiting("trainer-0")]].concat(),
        vec![],
    )];
    let (_server, env) = server(states, Duration::from_secs(3600), vec![]);
    let (output, _) = check(&env, 3, 1, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    let words = expect::progress_words(&Engine::new().expect("engine"));
    let progress = text(&output.stdout)
        .lines()
        .filter(|l| l.starts_with(&words))
        .count();
    // The first list's line, then one a second of the 3 s (the last
    // evaluation may be the deadline's, which decides instead).
    assert!(progress >= 3, "{progress} lines: {}", shown(&output));
}

// ------------------------------------------------ never silent while waiting

/// StatefulSet data/nats: 3 replicas, observed.
fn nats() -> Value {
    serde_json::json!({"kind": "StatefulSet", "apiVersion": "apps/v1",
        "metadata": {"name": "nats", "namespace": "data", "uid": "sts-nats", "generation": 1},
        "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3}})
}

/// nats-I, running, owned by the StatefulSet.
fn nats_pod(i: usize) -> Value {
    let mut pod = Pod::running("data", &format!("nats-{i}"), "kwok-node-0").to_json();
    pod["metadata"]["ownerReferences"] = serde_json::json!([{"apiVersion": "apps/v1",
        "kind": "StatefulSet", "name": "nats", "uid": "sts-nats", "controller": true}]);
    pod
}

/// What a waiting state says every interval: a progress line naming who
/// is awaited (stdout), or, while a list runs, the API server awaited
/// (`kubectl_waiting`, on stderr).
#[derive(Clone, Copy)]
enum Awaited {
    Progress(&'static str),
    ApiServer,
}

/// How long the pods list of "a list still running" takes to answer.
const LIST_RUNNING: Duration = Duration::from_millis(3500);

/// The waiting states, each for good (the server's state never changes,
/// or the pods list answers only after [`LIST_RUNNING`]), with who is
/// awaited.
fn waiting_states() -> Vec<(&'static str, State, Vec<FaultRule>, Awaited)> {
    let two_of_three =
        State::new((0..2).map(nats_pod).collect(), vec![]).with_workloads(vec![nats()]);
    let unscheduled = State::new(vec![running("app-0"), waiting("trainer-0")], vec![]);
    let all_running = State::new(vec![running("app-0")], vec![]);
    let slow_list = FaultRule::once(Target::PodsList, Fault::Delay(LIST_RUNNING));
    vec![
        (
            "not yet created",
            two_of_three,
            vec![],
            Awaited::Progress("controllers"),
        ),
        (
            "unscheduled",
            unscheduled,
            vec![],
            Awaited::Progress("scheduler"),
        ),
        (
            "a list still running",
            all_running,
            vec![slow_list],
            Awaited::ApiServer,
        ),
    ]
}

/// How one driver is started against a server.
type ReadCommand = fn(&KubeEnv) -> std::process::Command;

/// Every waiting state, held past three intervals (an attempt's own time
/// comes on top of the pause of an interval): every way of settling (the
/// checker's watch, its polling, the bash) prints a line each interval,
/// whose words name who is awaited: the controllers or the scheduler in a
/// progress line, or the API server while a list still runs, at each whole
/// interval it has run.
#[test]
fn every_waiting_state_prints_a_line_every_interval() {
    let engine = Engine::new().expect("engine");
    let attempt = expect::progress_words(&engine);
    let reads: [(&str, ReadCommand); 3] = [
        ("checker, watching", |env| env.checker()),
        ("checker, polling", |env| {
            let mut cmd = env.checker();
            cmd.env(contract::WATCH.env, "false");
            cmd
        }),
        ("bash", |env| env.wrapper()),
    ];
    for (state_name, state, rules, awaited) in waiting_states() {
        for (read_name, command) in reads {
            let mut builder = Server::builder().state(state.clone());
            for rule in &rules {
                builder = builder.fault(rule.clone());
            }
            let server = builder.start().expect("server");
            let env = KubeEnv::for_server(&server).expect("kube env");
            let output = run(command(&env).env(DEADLINE_ENV, "4").env(INTERVAL_ENV, "1"));
            let what = format!("{state_name}, {read_name}: {}", shown(&output));
            match awaited {
                Awaited::Progress(awaited) => {
                    assert_eq!(output.status.code(), Some(1), "{what}");
                    let stdout = text(&output.stdout);
                    let lines: Vec<&str> =
                        stdout.lines().filter(|l| l.starts_with(&attempt)).collect();
                    assert!(lines.len() >= 3, "a line an interval: {what}");
                    let words = format!("waiting for {awaited} (");
                    assert!(lines.iter().all(|line| line.contains(&words)), "{what}");
                }
                Awaited::ApiServer => {
                    assert_eq!(output.status.code(), Some(0), "{what}");
                    let stderr = text(&output.stderr);
                    let said: Vec<&str> = stderr
                        .lines()
                        .filter(|line| lines_of(line, &messages::KUBECTL_WAITING) == 1)
                        .collect();
                    // At 1, 2 and 3 s: the list answers at 3.5 s.
                    let expected: Vec<String> = (1..=LIST_RUNNING.as_secs())
                        .map(|seconds| {
                            messages::KUBECTL_WAITING.format(&[
                                ("what", &"pods"),
                                ("seconds", &seconds),
                                ("timeout", &contract::DEFAULT_KUBECTL_TIMEOUT),
                            ])
                        })
                        .collect();
                    assert_eq!(said.len(), expected.len(), "a line an interval: {what}");
                    for (line, expected) in said.iter().zip(&expected) {
                        assert!(line.ends_with(expected.as_str()), "{expected}: {what}");
                    }
                }
            }
        }
    }
}

/// Every accepted setting is said in the same bytes by both drivers: a
/// deadline past the bash's 64-bit bound on microseconds too.
#[test]
fn a_deadline_past_the_bashs_clock_bound_is_said_as_given() {
    let deadline = "999999999999999999";
    let mut lines = Vec::new();
    for driver in ["checker", "bash"] {
        let (_server, env) = server(bind_timeline(), Duration::from_secs(1), vec![]);
        let mut cmd = match driver {
            "checker" => env.checker(),
            _ => env.wrapper(),
        };
        let output = run(cmd.env(DEADLINE_ENV, deadline).env(INTERVAL_ENV, "1"));
        let what = format!("{driver}: {}", shown(&output));
        assert_eq!(output.status.code(), Some(0), "{what}");
        let stdout = text(&output.stdout);
        let first = stdout.lines().nth(1).unwrap_or_default().to_owned();
        assert!(first.ends_with(&format!("(0/{deadline}s)")), "{what}");
        lines.push(first);
    }
    assert_eq!(lines[0], lines[1]);
}
