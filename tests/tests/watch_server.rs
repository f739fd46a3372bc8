//! The replay server's watch streams, through the real kubectl
//! (`kubectl get --raw '/api/v1/pods?watch=1&…'`): the events between
//! consecutive timeline states, bookmarks, a timeline that advances by the
//! clock, 410 for a version older than the window, and the faults a
//! watching driver must survive (a cut stream, a server that cannot watch,
//! an ERROR event mid-stream). Each test says what kubectl does.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use verify_pods_tests::replay::fixtures::Pod;
use verify_pods_tests::replay::{
    Advance, Fault, FaultRule, KubeEnv, Server, State, Target, WatchEnd,
};
use verify_pods_tests::run;

/// What one `kubectl get --raw WATCH_URL` printed, and when.
struct Watched {
    /// Each stdout line, parsed, with its arrival time since `since`.
    lines: Vec<(Duration, Value)>,
    status: ExitStatus,
    stderr: String,
    /// When kubectl exited, since `since`.
    exited: Duration,
}

impl Watched {
    /// (type, name or "", metadata.resourceVersion) of each event.
    fn events(&self) -> Vec<(String, String, String)> {
        self.lines
            .iter()
            .map(|(_, event)| {
                let object = &event["object"];
                let field = |v: &Value| v.as_str().unwrap_or("").to_owned();
                (
                    field(&event["type"]),
                    field(&object["metadata"]["name"]),
                    field(&object["metadata"]["resourceVersion"]),
                )
            })
            .collect()
    }
}

/// Run kubectl on a watch URL, reading its stdout line by line as it comes.
fn watch(env: &KubeEnv, path: &str, since: Instant) -> Watched {
    let mut child = env
        .kubectl()
        .args(["get", "--raw", path])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut lines = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let line = line.expect("stdout is UTF-8 lines");
        let value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not one JSON event per line ({e}): {line}"));
        lines.push((since.elapsed(), value));
    }
    let status = child.wait().expect("kubectl ends");
    Watched {
        lines,
        status,
        exited: since.elapsed(),
        stderr: errors.join().expect("stderr reader"),
    }
}

fn pod(name: &str, bound: bool) -> Value {
    if bound {
        Pod::running("ns", name, "node-1").to_json()
    } else {
        Pod::unschedulable("ns", name).to_json()
    }
}

/// s0: a, b pending, c running. s1: a bound, d created. s2: b bound, c
/// deleted. s3: unchanged (only a bookmark can say the version moved).
fn timeline() -> Vec<State> {
    let state = |pods: Vec<Value>| State::new(pods, vec![]);
    vec![
        state(vec![pod("a", false), pod("b", false), pod("c", true)]),
        state(vec![
            pod("a", true),
            pod("b", false),
            pod("c", true),
            pod("d", false),
        ]),
        state(vec![pod("a", true), pod("b", true), pod("d", false)]),
        state(vec![pod("a", true), pod("b", true), pod("d", false)]),
    ]
}

fn event(kind: &str, name: &str, version: &str) -> (String, String, String) {
    (kind.into(), name.into(), version.into())
}

/// The pod `name` of `state` as a watch event's object carries it.
fn expected_object(state: &State, name: &str, version: &str) -> Value {
    let mut object = state
        .pod_values()
        .into_iter()
        .find(|p| p["metadata"]["name"] == name)
        .expect("the pod is in the state");
    object["kind"] = "Pod".into();
    object["apiVersion"] = "v1".into();
    object["metadata"]["resourceVersion"] = version.into();
    object
}

const PERIOD: Duration = Duration::from_millis(1000);

/// A clock-driven timeline (one state a second), watched from its first
/// version: every transition's events at its version, a BOOKMARK for the
/// transition without change and one before the timeout; kubectl prints
/// each event when it arrives (no event before its state's time, the first
/// ones long before the stream ends) and exits 0 when the server ends the
/// stream at timeoutSeconds.
#[test]
fn watch_streams_each_transition_as_the_clock_moves_the_timeline() {
    let states = timeline();
    // Taken before the server's clock starts: no event may arrive early.
    let started = Instant::now();
    let (_server, env) = Server::builder()
        .states(states.clone())
        .advance(Advance::Every(PERIOD))
        .start_with_env();
    let path =
        "/api/v1/pods?watch=1&resourceVersion=1000&allowWatchBookmarks=true&timeoutSeconds=5";
    let watched = watch(&env, path, started);
    assert!(watched.status.success(), "{}", watched.stderr);
    assert_eq!(
        watched.events(),
        [
            event("MODIFIED", "a", "1001"),
            event("ADDED", "d", "1001"),
            event("MODIFIED", "b", "1002"),
            event("DELETED", "c", "1002"),
            event("BOOKMARK", "", "1003"),
            event("BOOKMARK", "", "1003"),
        ]
    );
    let objects: Vec<&Value> = watched.lines.iter().map(|(_, e)| &e["object"]).collect();
    assert_eq!(*objects[0], expected_object(&states[1], "a", "1001"));
    assert_eq!(
        *objects[3],
        expected_object(&states[1], "c", "1002"),
        "c as it was last"
    );
    assert_eq!(
        *objects[4],
        serde_json::json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"resourceVersion": "1003", "creationTimestamp": null},
            "spec": {"containers": null}, "status": {}})
    );
    // Streamed: each state's events after its time, the first long before the end.
    for ((at, _), state) in watched.lines.iter().zip([1, 1, 2, 2, 3]) {
        assert!(*at >= PERIOD * state, "{at:?} before state {state}'s time");
    }
    let first = watched.lines[0].0;
    assert!(
        first + Duration::from_secs(2) < watched.exited,
        "first event at {first:?}, kubectl exited at {:?}: not streamed",
        watched.exited
    );
    assert!(
        watched.exited >= Duration::from_secs(5),
        "{:?}",
        watched.exited
    );
}

/// On a clock-driven timeline only the clock moves the present: lists made
/// before the first period all see state 0 (a poller that saw the next
/// state early would beat the clock, and the latency benchmark with it).
#[test]
fn lists_do_not_move_a_clock_driven_timeline() {
    let (server, env) = Server::builder()
        .states(timeline())
        .advance(Advance::Every(Duration::from_secs(60)))
        .start_with_env();
    for _ in 0..2 {
        let list = run(env.kubectl().args(["get", "--raw", "/api/v1/pods"]));
        assert!(list.status.success());
        let list: Value = serde_json::from_slice(&list.stdout).expect("a PodList");
        assert_eq!(list["metadata"]["resourceVersion"], "1000");
    }
    let states: Vec<Option<usize>> = server.pods_lists().iter().map(|e| e.state).collect();
    assert_eq!(states, [Some(0), Some(0)]);
}

/// The checker's pattern: one list (the timeline moves after it), then a
/// watch from the list's version gets the events that lead to the present
/// and nothing else; without a version, a watch starts with an ADDED per
/// pod of the present (the watch cache's "any version").
#[test]
fn list_then_watch_from_its_version() {
    let states = timeline();
    let (server, env) = Server::builder().states(states.clone()).start_with_env();
    let list = run(env
        .kubectl()
        .args(["get", "--raw", "/api/v1/pods?limit=500"]));
    assert!(list.status.success());
    let list: Value = serde_json::from_slice(&list.stdout).expect("a PodList");
    let version = list["metadata"]["resourceVersion"].as_str().expect("rv");
    assert_eq!(version, "1000");
    let since = Instant::now();
    let path = format!("/api/v1/pods?watch=1&resourceVersion={version}&timeoutSeconds=1");
    let watched = watch(&env, &path, since);
    assert!(watched.status.success(), "{}", watched.stderr);
    assert_eq!(
        watched.events(),
        [event("MODIFIED", "a", "1001"), event("ADDED", "d", "1001")],
        "no bookmark when not allowed"
    );
    let any = watch(&env, "/api/v1/pods?watch=true&timeoutSeconds=1", since);
    assert_eq!(
        any.events(),
        ["a", "b", "c", "d"].map(|name| event("ADDED", name, "1001"))
    );
    let watches = server.watches();
    assert_eq!(watches.len(), 2);
    let log = watches[0].watch.as_ref().expect("a watch record");
    assert_eq!(log.from.as_deref(), Some("1000"));
    assert_eq!(log.timeout_seconds, Some(1));
    assert!(!log.bookmarks);
    assert_eq!(log.events, ["MODIFIED", "ADDED"]);
    assert_eq!(log.version.as_deref(), Some("1001"));
    assert_eq!(log.end, Some(WatchEnd::Timeout));
    assert_eq!((watches[0].status, watches[0].state), (200, Some(0)));
    assert_eq!(server.pods_lists().len(), 1, "a watch is not a list");
}

/// A version older than the window: HTTP 200 and one ERROR event with the
/// apiserver's 410 Expired Status, then the end; kubectl prints the event
/// and exits 0 (the caller must read the event). A version in the window
/// replays from there.
#[test]
fn watch_from_a_version_older_than_the_window_is_410_expired() {
    let (server, env) = Server::builder()
        .states(timeline())
        .watch_history(1)
        .start_with_env();
    for _ in 0..3 {
        assert!(run(env.kubectl().args(["get", "--raw", "/api/v1/pods"]))
            .status
            .success());
    }
    let since = Instant::now();
    let expired = watch(
        &env,
        "/api/v1/pods?watch=1&resourceVersion=1001&timeoutSeconds=5",
        since,
    );
    assert!(expired.status.success(), "{}", expired.stderr);
    assert!(
        expired.exited < Duration::from_secs(4),
        "ended at once: {:?}",
        expired.exited
    );
    let objects: Vec<&Value> = expired.lines.iter().map(|(_, e)| &e["object"]).collect();
    assert_eq!(expired.events()[0].0, "ERROR");
    assert_eq!(
        *objects[0],
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "too old resource version: 1001 (1001)",
            "reason": "Expired", "code": 410})
    );
    assert_eq!(objects.len(), 1);
    let kept = watch(
        &env,
        "/api/v1/pods?watch=1&resourceVersion=1002&timeoutSeconds=1",
        since,
    );
    assert_eq!(
        kept.events(),
        [] as [(String, String, String); 0],
        "1002→1003 changes nothing"
    );
    let entries = server.watches();
    assert_eq!(entries[0].status, 200);
    assert_eq!(entries[0].watch.as_ref().unwrap().events, ["ERROR"]);
    assert_eq!(
        entries[0].watch.as_ref().unwrap().end,
        Some(WatchEnd::Error)
    );
}

fn server_with(rule: FaultRule) -> (Server, KubeEnv) {
    let (server, env) = Server::builder()
        .states(timeline())
        .advance(Advance::Every(Duration::from_millis(200)))
        .fault(rule)
        .start_with_env();
    (server, env)
}

const FROM_START: &str = "/api/v1/pods?watch=1&resourceVersion=1000&timeoutSeconds=3";

/// A watch cut after 2 events (the connection drops mid-body, no final
/// chunk): kubectl prints those 2 events whole, then `error: unexpected
/// EOF`, exit 1.
#[test]
fn watch_cut_mid_stream_fails_kubectl_after_the_events_sent() {
    let (server, env) = server_with(FaultRule::once(Target::PodsWatch, Fault::CutWatch(2)));
    std::thread::sleep(Duration::from_millis(700));
    let cut = watch(&env, FROM_START, Instant::now());
    assert_eq!(cut.status.code(), Some(1), "stderr: {}", cut.stderr);
    assert_eq!(
        cut.events(),
        [event("MODIFIED", "a", "1001"), event("ADDED", "d", "1001")]
    );
    assert_eq!(cut.stderr.trim(), "error: unexpected EOF");
    let log = server.watches()[0].watch.clone().expect("record");
    assert_eq!((log.events.len(), log.end), (2, Some(WatchEnd::Cut)));
    // Once: the next watch runs to its timeout.
    let whole = watch(&env, FROM_START, Instant::now());
    assert!(whole.status.success(), "{}", whole.stderr);
    assert_eq!(whole.events().len(), 4);
}

/// A server that cannot watch answers 405 MethodNotAllowed: kubectl exits
/// 1 with `Error from server (MethodNotAllowed): …` and prints nothing.
#[test]
fn a_server_that_cannot_watch_answers_405() {
    let (server, env) = server_with(FaultRule::always(
        Target::PodsWatch,
        Fault::method_not_allowed(),
    ));
    let refused = watch(&env, FROM_START, Instant::now());
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.lines.is_empty());
    assert!(
        refused.stderr.contains(
            "Error from server (MethodNotAllowed): the server does not allow this method on the requested resource"
        ),
        "{}",
        refused.stderr
    );
    let entries = server.watches();
    assert_eq!(entries[0].status, 405);
    assert!(entries[0].watch.as_ref().unwrap().events.is_empty());
    // Lists still work.
    assert!(run(env.kubectl().args(["get", "--raw", "/api/v1/pods"]))
        .status
        .success());
}

/// An ERROR event after 3 events (the window moved while watching): the 3
/// events, the ERROR with a 410 Status, the end; kubectl exits 0.
#[test]
fn error_event_mid_stream_ends_the_watch() {
    let (server, env) = server_with(FaultRule::once(
        Target::PodsWatch,
        Fault::error_event(3, 410),
    ));
    std::thread::sleep(Duration::from_millis(700));
    let watched = watch(&env, FROM_START, Instant::now());
    assert!(watched.status.success(), "{}", watched.stderr);
    let events = watched.events();
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[3].0, "ERROR");
    assert_eq!(watched.lines[3].1["object"]["code"], 410);
    assert_eq!(watched.lines[3].1["object"]["reason"], "Expired");
    let log = server.watches()[0].watch.clone().expect("record");
    assert_eq!(log.events, ["MODIFIED", "ADDED", "MODIFIED", "ERROR"]);
    assert_eq!(log.end, Some(WatchEnd::Error));
}

/// A timeline moved by lists: a watch open while a list is served gets the
/// transition's events at once (not at its timeout).
#[test]
fn open_watch_follows_a_list_that_moves_the_timeline() {
    let (server, env) = Server::builder().states(timeline()).start_with_env();
    let since = Instant::now();
    let watcher = std::thread::scope(|scope| {
        let env = &env;
        let watcher = scope.spawn(move || {
            let path = "/api/v1/pods?watch=1&resourceVersion=1000&timeoutSeconds=4";
            watch(env, path, since)
        });
        // The watch is open once the server logged it.
        while server.watches().is_empty() {
            std::thread::sleep(Duration::from_millis(20));
        }
        let listed = Instant::now();
        assert!(run(env.kubectl().args(["get", "--raw", "/api/v1/pods"]))
            .status
            .success());
        (watcher.join().expect("watcher"), listed - since)
    });
    let (watched, listed) = watcher;
    assert_eq!(
        watched.events(),
        [event("MODIFIED", "a", "1001"), event("ADDED", "d", "1001")]
    );
    let arrived = watched.lines[0].0;
    assert!(
        arrived >= listed && arrived < Duration::from_millis(3000),
        "listed at {listed:?}, event at {arrived:?}, exited at {:?}",
        watched.exited
    );
}
