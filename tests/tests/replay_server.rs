//! The replay server's own tests, through the real kubectl: raw list pages
//! as the apiserver writes them (`kubectl get --raw`), each state at its own
//! resourceVersion, and the faults the paged drivers must survive (another
//! version on page 2, 410 on page 2, kubectl dying or hanging mid-list, a
//! slow exec credential plugin over TLS).

use serde_json::Value;
use std::io::Read;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};
use verify_pods_tests::replay::fixtures::{self, failed_scheduling_event, Pod};
use verify_pods_tests::replay::{
    Fault, FaultRule, KubeEnv, KubeOptions, LogEntry, Object, Resource, Server, State, Target,
};
use verify_pods_tests::{run, text};

fn raw(env: &KubeEnv, path: &str) -> Output {
    run(env.kubectl().args(["get", "--raw", path]))
}

fn raw_ok(env: &KubeEnv, path: &str) -> Vec<u8> {
    let output = raw(env, path);
    assert!(
        output.status.success(),
        "kubectl get --raw {path}: {}",
        text(&output.stderr)
    );
    output.stdout
}

/// A PodList page exactly as the apiserver writes it.
fn page_bytes(kind: &str, metadata: &str, items: &[Object]) -> Vec<u8> {
    let items: Vec<&str> = items.iter().map(Object::json).collect();
    format!(
        r#"{{"kind":"{kind}List","apiVersion":"v1","metadata":{metadata},"items":[{}]}}"#,
        items.join(",")
    )
    .into_bytes()
    .into_iter()
    .chain(*b"\n")
    .collect()
}

fn continue_token(page: &[u8]) -> Option<String> {
    let page: Value = serde_json::from_slice(page).expect("a page is JSON");
    page["metadata"]["continue"].as_str().map(str::to_owned)
}

fn pods_requests(server: &Server) -> Vec<LogEntry> {
    server.pods_requests()
}

/// Three raw pages of a 7-pod state: compact PodLists, metadata first and
/// in the apiserver's field order, every page at the first page's version,
/// the items exactly the state's; the next list (the timeline moved after
/// the first page) is at the next version.
#[test]
fn raw_pages_are_compact_pod_lists_at_one_version() {
    let (first, second) = (fixtures::many_running(7), fixtures::many_running(2));
    let (server, env) = Server::builder()
        .states([first.clone(), second.clone()])
        .start_with_env();
    let page1 = raw_ok(&env, "/api/v1/pods?limit=3");
    let token1 = continue_token(&page1).expect("page 1 has a continue token");
    let meta1 =
        format!(r#"{{"resourceVersion":"1000","continue":"{token1}","remainingItemCount":4}}"#);
    assert_eq!(
        text(&page1),
        text(&page_bytes("Pod", &meta1, &first.pods[..3]))
    );
    let page2 = raw_ok(&env, &format!("/api/v1/pods?limit=3&continue={token1}"));
    let token2 = continue_token(&page2).expect("page 2 has a continue token");
    let meta2 =
        format!(r#"{{"resourceVersion":"1000","continue":"{token2}","remainingItemCount":1}}"#);
    assert_eq!(
        text(&page2),
        text(&page_bytes("Pod", &meta2, &first.pods[3..6]))
    );
    let page3 = raw_ok(&env, &format!("/api/v1/pods?limit=3&continue={token2}"));
    let meta3 = r#"{"resourceVersion":"1000"}"#;
    assert_eq!(
        text(&page3),
        text(&page_bytes("Pod", meta3, &first.pods[6..]))
    );
    // The next list sees the next state, at its own version; limit 0 = all.
    let next = raw_ok(&env, "/api/v1/pods?limit=0");
    assert_eq!(
        text(&next),
        text(&page_bytes(
            "Pod",
            r#"{"resourceVersion":"1001"}"#,
            &second.pods
        ))
    );
    let log: Vec<_> = pods_requests(&server)
        .into_iter()
        .map(|e| {
            assert!(!e.accept.contains("as=Table"), "--raw asks no Table: {e:?}");
            (
                e.path,
                e.limit,
                e.continue_token,
                e.page,
                e.resource_version,
            )
        })
        .collect();
    let entry = |limit, token: Option<&String>, page, rv: &str| {
        (
            "/api/v1/pods".to_owned(),
            limit,
            token.cloned(),
            Some(page),
            Some(rv.to_owned()),
        )
    };
    assert_eq!(
        log,
        [
            entry(Some(3), None, 1, "1000"),
            entry(Some(3), Some(&token1), 2, "1000"),
            entry(Some(3), Some(&token2), 3, "1000"),
            entry(Some(0), None, 1, "1001"),
        ]
    );
}

/// The FailedScheduling events the drivers ask for: an EventList of those
/// only, paged, without remainingItemCount (the apiserver leaves it out
/// when a selector filters).
#[test]
fn raw_events_honour_the_field_selector_and_pages() {
    let waiting: Vec<Pod> = (0..3)
        .map(|i| Pod::unschedulable("ml", &format!("trainer-{i}")))
        .collect();
    let mut events: Vec<Value> = waiting
        .iter()
        .map(|p| failed_scheduling_event(p, 60, 2))
        .collect();
    let mut other = failed_scheduling_event(&waiting[0], 120, 1);
    other["reason"] = "Scheduled".into();
    events.push(other);
    let state = State::new(waiting.iter().map(Pod::to_json).collect(), events);
    let server = Server::serve(state.clone()).expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    let path = "/api/v1/events?fieldSelector=reason%3DFailedScheduling&limit=2";
    let page1 = raw_ok(&env, path);
    let token = continue_token(&page1).expect("two of three on page 1");
    let failed: Vec<Object> = state
        .events
        .iter()
        .filter(|e| e.value()["reason"] == "FailedScheduling")
        .cloned()
        .collect();
    assert_eq!(failed.len(), 3);
    let meta = format!(r#"{{"resourceVersion":"1000","continue":"{token}"}}"#);
    assert_eq!(
        text(&page1),
        text(&page_bytes("Event", &meta, &failed[..2]))
    );
    let page2 = raw_ok(&env, &format!("{path}&continue={token}"));
    assert_eq!(
        text(&page2),
        text(&page_bytes(
            "Event",
            r#"{"resourceVersion":"1000"}"#,
            &failed[2..]
        ))
    );
    let lists = server
        .log()
        .into_iter()
        .filter(|e| e.list == Some(Resource::Events))
        .count();
    assert_eq!(lists, 2);
}

/// The version a raw page carries.
fn version_of(page: &[u8]) -> String {
    let page: Value = serde_json::from_slice(page).expect("JSON");
    page["metadata"]["resourceVersion"]
        .as_str()
        .expect("a version")
        .to_owned()
}

/// Page 1 of a list, then page 2 with its token: both bodies.
fn two_pages(env: &KubeEnv) -> (Vec<u8>, Output) {
    let page1 = raw_ok(env, "/api/v1/pods?limit=2");
    let token = continue_token(&page1).expect("a continue token");
    let page2 = raw(env, &format!("/api/v1/pods?limit=2&continue={token}"));
    (page1, page2)
}

/// A server that loses the list's snapshot: page 2 comes at another
/// version, from the timeline's current state when it moved on, else the
/// same items under a version no state has. Once: the next list is whole.
#[test]
fn other_version_fault_serves_page_2_at_another_version() {
    for (states, page2_items) in [
        (
            vec![fixtures::many_running(5), fixtures::many_running(3)],
            1,
        ),
        (vec![fixtures::many_running(5)], 2),
    ] {
        let (server, env) = Server::builder()
            .states(states)
            .fault(FaultRule::once(Target::PodsPage(2), Fault::OtherVersion))
            .start_with_env();
        let (page1, page2) = two_pages(&env);
        assert!(page2.status.success(), "{}", text(&page2.stderr));
        assert_eq!(version_of(&page1), "1000");
        assert_eq!(version_of(&page2.stdout), "1001");
        let items: Value = serde_json::from_slice(&page2.stdout).unwrap();
        assert_eq!(items["items"].as_array().map(Vec::len), Some(page2_items));
        let (again1, again2) = two_pages(&env);
        assert!(again2.status.success());
        assert_eq!(version_of(&again1), version_of(&again2.stdout));
        let faults: Vec<_> = pods_requests(&server)
            .iter()
            .map(|e| (e.page, e.fault.clone()))
            .collect();
        assert_eq!(
            faults,
            [
                (Some(1), None),
                (Some(2), Some(Fault::OtherVersion)),
                (Some(1), None),
                (Some(2), None)
            ]
        );
    }
}

/// 410 Expired on page 2: once (the next list gets through), or always.
#[test]
fn expired_on_page_2_once_or_always() {
    for (rule, second_ok) in [
        (FaultRule::once(Target::PodsPage(2), Fault::expired()), true),
        (
            FaultRule::always(Target::PodsPage(2), Fault::expired()),
            false,
        ),
    ] {
        let (server, env) = Server::builder()
            .state(fixtures::many_running(5))
            .fault(rule)
            .start_with_env();
        let (_, page2) = two_pages(&env);
        assert_eq!(page2.status.code(), Some(1));
        assert!(
            text(&page2.stderr).contains("Expired"),
            "{}",
            text(&page2.stderr)
        );
        let (_, again) = two_pages(&env);
        assert_eq!(again.status.success(), second_ok, "{}", text(&again.stderr));
        let statuses: Vec<_> = pods_requests(&server)
            .iter()
            .map(|e| (e.page, e.status))
            .collect();
        let last = if second_ok { 200 } else { 410 };
        assert_eq!(
            statuses,
            [
                (Some(1), 200),
                (Some(2), 410),
                (Some(1), 200),
                (Some(2), last)
            ]
        );
    }
}

/// The whole page 2 of a fault-free run of the same server.
fn whole_page_2(state: &State) -> Vec<u8> {
    let server = Server::serve(state.clone()).expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    let (_, page2) = two_pages(&env);
    assert!(page2.status.success());
    page2.stdout
}

/// Five running pods whose page 2 (of two pods) `fault` cuts short, every
/// time: the whole page as it would have been, the server, and kubectl's
/// environment for it.
fn page_2_cut_by(fault: Fault) -> (Vec<u8>, Server, KubeEnv) {
    let state = fixtures::many_running(5);
    let whole = whole_page_2(&state);
    let (server, env) = Server::builder()
        .state(state)
        .fault(FaultRule::always(Target::PodsPage(2), fault))
        .start_with_env();
    (whole, server, env)
}

/// kubectl dying mid-list: the connection drops in the middle of page 2.
/// kubectl fails (exit 1) after printing at most a cut part of the page.
#[test]
fn connection_closed_mid_body_on_page_2_fails_kubectl() {
    let (whole, _server, env) = page_2_cut_by(Fault::CloseMidBody);
    let (_, page2) = two_pages(&env);
    assert_eq!(page2.status.code(), Some(1), "{}", text(&page2.stderr));
    assert!(
        page2.stdout.len() < whole.len() && whole.starts_with(&page2.stdout),
        "printed {} of {} bytes",
        page2.stdout.len(),
        whole.len()
    );
}

/// kubectl hanging mid-list: half of page 2 arrives, then nothing. kubectl
/// waits (its caller's timeout has to kill it) having printed a cut page.
#[test]
fn stall_mid_body_on_page_2_hangs_kubectl() {
    let (whole, _server, env) = page_2_cut_by(Fault::StallMidBody(Duration::from_secs(30)));
    let page1 = raw_ok(&env, "/api/v1/pods?limit=2");
    let token = continue_token(&page1).expect("a token");
    let mut child = env
        .kubectl()
        .args([
            "get",
            "--raw",
            &format!("/api/v1/pods?limit=2&continue={token}"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl runs");
    let started = Instant::now();
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut printed = Vec::new();
        let _ = stdout.take(whole.len() as u64).read_to_end(&mut printed);
        (printed, whole)
    });
    std::thread::sleep(Duration::from_secs(2));
    let still_running = child.try_wait().expect("wait").is_none();
    let _ = child.kill();
    let _ = child.wait();
    let (printed, whole) = reader.join().expect("reader");
    assert!(
        still_running,
        "kubectl ended within {:?}",
        started.elapsed()
    );
    assert!(
        printed.len() < whole.len() && whole.starts_with(&printed),
        "printed {} of {} bytes",
        printed.len(),
        whole.len()
    );
}

/// A kubeconfig whose user gets its token from an exec credential plugin
/// that takes 300 ms, through the real kubectl over TLS: the server sees
/// the plugin's token on every request, the plugin runs once per kubectl,
/// and each kubectl call pays its 300 ms. Without the user: 401, exit 1.
#[test]
fn exec_credential_plugin_through_the_real_kubectl() {
    let token = "replay-token-300ms";
    let server = Server::builder()
        .state(fixtures::many_running(3))
        .tls()
        .token(token)
        .start()
        .expect("server");
    assert!(server.url().starts_with("https://"));
    let options = KubeOptions::with_exec_plugin(&server, token, Duration::from_millis(300));
    let env = KubeEnv::with_options(&server.url(), &options).expect("kube env");
    for call in 1..=2 {
        let started = Instant::now();
        let page = raw_ok(&env, "/api/v1/pods?limit=500");
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(version_of(&page), "1000");
        assert_eq!(env.exec_plugin_runs(), call, "one plugin run per kubectl");
    }
    let bearer = format!("Bearer {token}");
    assert!(server
        .log()
        .iter()
        .all(|e| e.authorization.as_deref() == Some(bearer.as_str()) && e.status == 200));
    let anonymous = KubeOptions {
        ca_pem: server.ca_pem().map(str::to_owned),
        ..KubeOptions::default()
    };
    let env = KubeEnv::with_options(&server.url(), &anonymous).expect("kube env");
    let refused = raw(&env, "/api/v1/pods?limit=500");
    assert_eq!(refused.status.code(), Some(1));
    // (kubectl asks for a username after the 401 and finds stdin closed.)
    assert!(
        server
            .log()
            .iter()
            .any(|e| e.authorization.is_none() && e.status == 401),
        "the server refused the anonymous request"
    );
}
