//! The rules of report.jq and events.jq, through the real `verify-pods`
//! binary: one small snapshot per rule, the JSON result checked field by field.

use assert_cmd::Command;
use serde_json::{json, Value};
use std::io::Write;

fn pod(ns: &str, name: &str, phase: Option<&str>, node: Option<&str>, owners: Value) -> Value {
    let mut pod = json!({
        "metadata": {"namespace": ns, "name": name, "uid": format!("uid-{name}"), "ownerReferences": owners},
        "spec": {"containers": [{"name": "main", "image": "pause"}]},
        "status": {}
    });
    if let Some(phase) = phase {
        pod["status"]["phase"] = json!(phase);
    }
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

/// Run `check --format json` on a snapshot (and events); (result, exit code).
fn check(snapshot: &Value, events: Option<&Value>, extra: &[&str]) -> (Value, i32) {
    let dir = tempfile::tempdir().unwrap();
    let pods = dir.path().join("pods.json");
    std::fs::write(&pods, snapshot.to_string()).unwrap();
    let mut cmd = Command::from_std(verify_pods_tests::checker_command());
    cmd.arg("check")
        .arg("--snapshot")
        .arg(&pods)
        .args(["--format", "json"])
        .args(extra);
    if let Some(events) = events {
        let path = dir.path().join("events.json");
        std::fs::write(&path, events.to_string()).unwrap();
        cmd.arg("--events").arg(path);
    }
    let out = cmd.output().unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), code)
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["namespace"].as_str().unwrap(),
                p["name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn only_pods_owned_by_a_job_may_stay_unscheduled() {
    let owner = |kind: &str| json!([{"apiVersion": "x/v1", "kind": kind, "name": "o", "uid": "o"}]);
    let snapshot = list(vec![
        pod("ml", "hook", Some("Pending"), None, owner("Job")),
        pod("ml", "pytorch", Some("Pending"), None, owner("PyTorchJob")),
        pod("ml", "mpi", Some("Pending"), None, owner("MPIJob")),
        pod("ml", "cron", Some("Pending"), None, owner("CronJob")),
        pod("ml", "jobset", Some("Pending"), None, owner("JobSet")),
        pod("ml", "lower", Some("Pending"), None, owner("job")),
        pod("ml", "null-owners", Some("Pending"), None, Value::Null),
        pod("ml", "no-owners", Some("Pending"), None, json!([])),
    ]);
    let (result, code) = check(&snapshot, None, &[]);
    assert_eq!(code, 1);
    assert_eq!(result["pending"], 8);
    assert_eq!(
        names(&result["unscheduled_pods"]),
        [
            "ml/pytorch",
            "ml/mpi",
            "ml/cron",
            "ml/jobset",
            "ml/lower",
            "ml/null-owners",
            "ml/no-owners"
        ]
    );
    assert_eq!(result["unscheduled"], 7);
}

#[test]
fn empty_missing_and_null_node_names_are_unscheduled_but_bound_pending_is_not() {
    let mut null_node = pod("app", "null-node", Some("Pending"), None, json!([]));
    null_node["spec"]["nodeName"] = Value::Null;
    let snapshot = list(vec![
        pod("app", "empty-node", Some("Pending"), Some(""), json!([])),
        pod("app", "no-node", Some("Pending"), None, json!([])),
        null_node,
        pod(
            "app",
            "bound",
            Some("Pending"),
            Some("kwok-node-0"),
            json!([]),
        ),
    ]);
    let (result, _) = check(&snapshot, None, &[]);
    assert_eq!(
        names(&result["unscheduled_pods"]),
        ["app/empty-node", "app/no-node", "app/null-node"]
    );
    assert_eq!(result["pending"], 4);
    assert_eq!(
        result["distribution"],
        json!([{"node": "<none>", "pods": 3}, {"node": "kwok-node-0", "pods": 1}])
    );
}

#[test]
fn excluded_namespaces_match_exactly() {
    let snapshot = list(vec![
        pod("kube-system", "coredns", Some("Pending"), None, json!([])),
        pod("argocd", "server", Some("Pending"), None, json!([])),
        pod("argocd-apps", "ui", Some("Running"), Some("n1"), json!([])),
        pod(
            "kube-system-extra",
            "x",
            Some("Running"),
            Some("n1"),
            json!([]),
        ),
        pod("kube-systems", "y", Some("Running"), Some("n2"), json!([])),
    ]);
    let (result, code) = check(&snapshot, None, &[]);
    assert_eq!(
        (result["total"].clone(), result["running"].clone(), code),
        (json!(3), json!(3), 0)
    );
    assert_eq!(result["verdict"], "pass");
}

#[test]
fn exclude_ns_replaces_the_default_list() {
    let snapshot = list(vec![
        pod("kube-system", "coredns", Some("Pending"), None, json!([])),
        pod("team-a", "web", Some("Pending"), None, json!([])),
    ]);
    let (result, _) = check(&snapshot, None, &["--exclude-ns", "team-a"]);
    assert_eq!(names(&result["unscheduled_pods"]), ["kube-system/coredns"]);
    let (result, _) = check(&snapshot, None, &["--exclude-ns", ""]);
    assert_eq!(result["total"], 2);
}

#[test]
fn succeeded_unknown_and_statusless_pods_count_in_total_but_no_node_is_unscheduled() {
    let mut no_status = pod("app", "no-status", None, None, json!([]));
    no_status.as_object_mut().unwrap().remove("status");
    let snapshot = list(vec![
        pod("app", "done", Some("Succeeded"), Some("n1"), json!([])),
        pod("app", "lost", Some("Unknown"), Some("n1"), json!([])),
        pod("app", "lowercase", Some("running"), Some("n1"), json!([])),
        no_status,
    ]);
    let (result, code) = check(&snapshot, None, &[]);
    // Issue 29: the statusless pod has no node: not scheduled, whatever
    // its phase (none), so never "all 4 pods scheduled successfully".
    assert_eq!(code, 1);
    for (key, want) in [
        ("total", 4),
        ("running", 0),
        ("pending", 0),
        ("failed", 0),
        ("succeeded", 1),
        ("unscheduled", 1),
    ] {
        assert_eq!(result[key], want, "{key}");
    }
    assert_eq!(names(&result["unscheduled_pods"]), ["app/no-status"]);
    assert_eq!(result["verdict"], "fail");
}

#[test]
fn failed_pods_carry_the_first_terminated_reason_else_the_pod_reason_else_unknown() {
    let mut oom = pod("app", "oom", Some("Failed"), Some("n1"), json!([]));
    oom["status"]["reason"] = json!("Evicted");
    oom["status"]["containerStatuses"] = json!([
        {"name": "a", "state": {"running": {}}},
        {"name": "b", "state": {"terminated": {"reason": "OOMKilled", "message": "killed", "exitCode": 137}}},
        {"name": "c", "state": {"terminated": {"reason": "Error", "exitCode": 1}}}
    ]);
    let mut evicted = pod("app", "evicted", Some("Failed"), Some("n1"), json!([]));
    evicted["status"]["reason"] = json!("Evicted");
    evicted["status"]["message"] = json!("The node was low on resource: memory.");
    let unknown = pod("app", "unknown", Some("Failed"), Some("n1"), json!([]));
    let (result, code) = check(&list(vec![oom, evicted, unknown]), None, &[]);
    assert_eq!(code, 1);
    assert_eq!(result["verdict"], "fail");
    let reasons: Vec<(String, String)> = result["failed_pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["reason"].as_str().unwrap().to_owned(),
                p["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("OOMKilled".to_owned(), "killed".to_owned()),
            (
                "Evicted".to_owned(),
                "The node was low on resource: memory.".to_owned()
            ),
            ("Unknown".to_owned(), String::new())
        ]
    );
}

#[test]
fn verdict_is_empty_without_pods_and_kind_podlist_is_accepted() {
    let (result, code) = check(
        &json!({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": []}),
        None,
        &[],
    );
    assert_eq!((result["verdict"].clone(), code), (json!("empty"), 0));
    let only_system = list(vec![pod(
        "kube-system",
        "coredns",
        Some("Running"),
        Some("n1"),
        json!([]),
    )]);
    let (result, code) = check(&only_system, None, &[]);
    assert_eq!(
        (result["verdict"].clone(), result["total"].clone(), code),
        (json!("empty"), json!(0), 0)
    );
}

fn event(
    ns: &str,
    pod: &str,
    uid: Option<&str>,
    last: Option<&str>,
    event_time: Option<&str>,
    message: &str,
) -> Value {
    let mut involved = json!({"kind": "Pod", "namespace": ns, "name": pod});
    if let Some(uid) = uid {
        involved["uid"] = json!(uid);
    }
    json!({
        "reason": "FailedScheduling", "type": "Warning", "message": message, "count": 1,
        "involvedObject": involved, "lastTimestamp": last, "eventTime": event_time,
        "metadata": {"namespace": ns, "name": format!("{pod}.{message}")}
    })
}

#[test]
fn events_are_those_of_unscheduled_pods_newest_first() {
    let snapshot = list(vec![
        pod("ml", "worker-4", Some("Pending"), None, json!([])),
        pod("ml", "worker-2", Some("Running"), Some("n1"), json!([])),
        pod("kube-system", "coredns", Some("Pending"), None, json!([])),
    ]);
    let events = list(vec![
        event(
            "ml",
            "worker-4",
            Some("uid-worker-4"),
            Some("2026-05-28T10:00:05Z"),
            None,
            "older",
        ),
        event(
            "ml",
            "worker-4",
            None,
            None,
            Some("2026-05-28T10:00:07.123456Z"),
            "newest",
        ),
        event(
            "ml",
            "worker-4",
            Some("uid-of-a-deleted-pod"),
            Some("2026-05-28T10:00:09Z"),
            None,
            "other uid",
        ),
        event(
            "ml",
            "worker-2",
            Some("uid-worker-2"),
            Some("2026-05-28T10:00:09Z"),
            None,
            "since bound",
        ),
        event(
            "kube-system",
            "coredns",
            None,
            Some("2026-05-28T10:00:09Z"),
            None,
            "noise",
        ),
    ]);
    let (result, _) = check(&snapshot, Some(&events), &[]);
    let messages = verify_pods_tests::strings_of(&result["events"], "message");
    assert_eq!(messages, ["newest", "older"]);
}

#[test]
fn every_matched_event_is_kept_newest_first() {
    let snapshot = list(vec![pod("ml", "w", Some("Pending"), None, json!([]))]);
    let events = list(
        (0..60)
            .map(|i| {
                event(
                    "ml",
                    "w",
                    None,
                    Some(&format!("2026-05-28T10:{:02}:00Z", i)),
                    None,
                    &format!("m{i}"),
                )
            })
            .collect(),
    );
    let (result, _) = check(&snapshot, Some(&events), &[]);
    // Issue 29: every one (the outputs pick each group's newest); the
    // newest 50 of all hid the events of every group but the largest.
    let events = result["events"].as_array().unwrap();
    assert_eq!(events.len(), 60);
    assert_eq!(result["events_matched"], 60);
    assert_eq!(events[0]["message"], "m59");
    assert_eq!(events[59]["message"], "m0");
}

#[test]
fn text_output_keeps_the_upstream_status_line() {
    let snapshot = list(vec![pod("ml", "w", Some("Pending"), None, json!([]))]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pods.json");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(snapshot.to_string().as_bytes())
        .unwrap();
    let out = Command::from_std(verify_pods_tests::checker_command())
        .arg("check")
        .arg("--snapshot")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The start line first, as upstream prints it; then the status line.
    let text = text
        .strip_prefix(&verify_pods_tests::start_line())
        .unwrap_or_else(|| panic!("no start line first: {text}"));
    assert_eq!(text.lines().next(), Some("Pod status: 1 total, 0 running, 1 pending (1 unscheduled), 0 failed (attempts=1, waited=0s)"));
    assert_eq!(out.status.code(), Some(1));
}
