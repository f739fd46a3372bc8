//! What the replay server says it sent, checked against what the real
//! kubectl received: the load benchmark (bench/settle.py) counts the
//! requests and bytes of a settle from `replay-server --request-log`.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use verify_pods_tests::replay::fixtures::Pod;
use verify_pods_tests::replay::{kubectl_binary, Fault, FaultRule, Server, State, Target};

const REPLAY_SERVER: &str = env!("CARGO_BIN_EXE_replay-server");
const PERIOD_MS: u64 = 700;

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// A pending pod, then the same pod bound: a watch gets one MODIFIED.
fn write_states(dir: &std::path::Path) -> [String; 2] {
    let pods = [
        Pod::unschedulable("ns", "a").to_json(),
        Pod::running("ns", "a", "node-1").to_json(),
    ];
    pods.map(|pod| {
        let file = dir.join(format!("{}.json", pod["status"]["phase"].as_str().unwrap()));
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [pod]});
        std::fs::write(&file, list.to_string()).expect("write a state");
        file.display().to_string()
    })
}

/// Kill the server when the test ends, passed or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kubectl get --raw PATH`'s stdout (it prints the body as it came).
fn raw(kubeconfig: &std::path::Path, path: &str) -> Vec<u8> {
    let output = Command::new(kubectl_binary())
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", kubeconfig.with_extension("cache"))
        .args(["get", "--raw", path])
        .output()
        .expect("kubectl runs");
    assert!(output.status.success(), "{output:?}");
    output.stdout
}

/// The request log's lines, once it holds a line that `done` accepts (the
/// server writes it every 100 ms).
fn lines_until(file: &std::path::Path, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    for _ in 0..50 {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect();
        if lines.iter().any(&done) {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the request log never had the line: {}", file.display());
}

/// The list's and the watch's byte counts are what kubectl printed (the
/// watch replays the transition to state 1, whenever it started); the
/// first line gives the wall clock the timeline's `--every` counts from,
/// and each request's `at` counts from it.
#[test]
fn the_request_log_counts_the_bytes_kubectl_received() {
    let dir = tempfile::tempdir().unwrap();
    let [pending, bound] = write_states(dir.path());
    let kubeconfig = dir.path().join("kubeconfig");
    let log = dir.path().join("requests.jsonl");
    let before = unix_now();
    let mut child = Command::new(REPLAY_SERVER)
        .args(["--state", &pending, "--state", &bound])
        .args(["--every", &PERIOD_MS.to_string()])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--request-log")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("replay-server runs");
    let stdout = child.stdout.take().expect("stdout");
    let _server = Running(child);
    let mut url = String::new();
    BufReader::new(stdout).read_line(&mut url).expect("its URL");
    assert!(url.starts_with("http://"), "{url}");

    let listening = unix_now();
    let list = raw(&kubeconfig, "/api/v1/pods");
    let watch_asked = unix_now();
    let watch = raw(
        &kubeconfig,
        "/api/v1/pods?watch=1&resourceVersion=1000&timeoutSeconds=2",
    );
    let watched: Value = serde_json::from_slice(&watch).expect("one event");
    assert_eq!(watched["type"], "MODIFIED");

    let is_watch = |l: &Value| l["query"].as_str().unwrap_or("").contains("watch=1");
    let lines = lines_until(&log, |l| is_watch(l) && l["watch"]["end"] == "Timeout");
    let started = lines[0]["started_unix"].as_f64().expect("the first line");
    assert!(before <= started && started <= listening, "{started}");
    let list_line = lines
        .iter()
        .find(|l| l["list"] == "pods" && l["status"] == 200)
        .expect("the list's line");
    assert_eq!(list_line["bytes"], list.len());
    let watch_line = lines.iter().rev().find(|l| is_watch(l)).unwrap();
    assert_eq!(watch_line["bytes"], watch.len());
    assert_eq!(watch_line["watch"]["events"], 1);
    // The watch's arrival, on the wall clock: after kubectl was asked.
    let arrived = started + watch_line["at"].as_f64().unwrap();
    assert!(watch_asked <= arrived && arrived <= unix_now(), "{arrived}");
}

/// A body the server cuts in half counts the half it sent, and a request
/// closed before its headers counts nothing.
#[test]
fn a_cut_body_counts_what_was_sent() {
    let state = State::new(vec![Pod::running("ns", "a", "node-1").to_json()], vec![]);
    let cut = |fault| FaultRule::once(Target::PodsPage(1), fault);
    let (server, env) = Server::builder()
        .state(state)
        .fault(cut(Fault::CloseMidBody))
        .fault(cut(Fault::CloseBeforeHeaders))
        .start_with_env();
    for _ in 0..3 {
        let _ = env
            .kubectl()
            .args(["get", "--raw", "/api/v1/pods"])
            .output();
    }
    let pages = server.pods_requests();
    let whole = pages.last().expect("the third request succeeds").bytes;
    assert!(whole > 0);
    let sent: Vec<usize> = pages.iter().map(|e| e.bytes).collect();
    // (kubectl retries a GET closed before its headers once by itself.)
    assert_eq!(sent[..2], [whole / 2, 0], "{sent:?}");
    assert!(sent[2..].iter().all(|&bytes| bytes == whole), "{sent:?}");
}
