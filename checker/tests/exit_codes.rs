//! Bad input never passes: every way a snapshot can fail to be observed
//! exits 2 with one line on stderr that names the cause.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn verify_pods() -> Command {
    let mut cmd = Command::cargo_bin("verify-pods").unwrap();
    for var in [
        "KWOK_VERIFY_PODS_DEADLINE",
        "KWOK_VERIFY_PODS_INTERVAL",
        "KWOK_VERIFY_PODS_ARTIFACT_DIR",
        "KWOK_VERIFY_PODS_KUBECTL_TIMEOUT",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// (file content, what stderr must say). One line per case, like jaq's golden tests.
const BAD_SNAPSHOTS: &[(&[u8], &str)] = &[
    (b"", "empty input"),
    (b"   \n", "invalid JSON"),
    (
        b"{\"items\": [",
        "1:11: invalid JSON: EOF while parsing a list",
    ),
    (
        b"{\n  \"items\": [\n    {\"metadata\": {\"name\": \"a\"}},\n",
        "4:0: invalid JSON: EOF",
    ),
    (b"{\"items\": [}", "1:12: invalid JSON"),
    (b"{}", "snapshot has no items array"),
    (b"{\"items\": {}}", "snapshot has no items array"),
    (b"{\"items\": null}", "snapshot has no items array"),
    (b"[]", "snapshot has no items array"),
    (b"null", "snapshot has no items array"),
    (b"\"items\"", "snapshot has no items array"),
    (
        b"{\"items\": []} {\"items\": []}",
        "invalid JSON: trailing characters",
    ),
    (b"{\"items\": [\"\xff\xfe\"]}", "invalid JSON"),
    // A BOM is skipped at the very start only, as jq skips it.
    (b" \xef\xbb\xbf{\"items\": []}", "1:2: invalid JSON"),
];

#[test]
fn bad_snapshots_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (content, cause)) in BAD_SNAPSHOTS.iter().enumerate() {
        let path = write(dir.path(), &format!("bad-{i}.json"), content);
        let shown = path.display().to_string();
        verify_pods()
            .args(["check", "--snapshot"])
            .arg(&path)
            .assert()
            .code(2)
            .stdout("")
            .stderr(
                predicate::str::contains(shown)
                    .and(predicate::str::contains(*cause))
                    .and(predicate::function(|s: &str| s.lines().count() == 1)),
            );
    }
}

#[test]
fn bad_snapshot_on_stdin_exits_2() {
    verify_pods()
        .args(["check", "--snapshot", "-"])
        .write_stdin("{\"items\": [")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("<stdin>:1:11"));
}

#[test]
fn missing_snapshot_file_exits_2() {
    verify_pods()
        .args(["check", "--snapshot", "/nonexistent/pods.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "/nonexistent/pods.json: cannot open",
        ));
}

#[test]
fn bad_events_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let pods = write(
        dir.path(),
        "pods.json",
        br#"{"items":[{"metadata":{"namespace":"a","name":"p"},"status":{"phase":"Pending"}}]}"#,
    );
    let events = write(dir.path(), "events.json", b"{\"kind\": \"List\"}");
    verify_pods()
        .args(["check", "--snapshot"])
        .arg(&pods)
        .arg("--events")
        .arg(&events)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "events.json: events document has no items array",
        ));
}

/// (flags, environment, what stderr must say).
type BadUsage = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[test]
fn bad_flags_and_environment_exit_2() {
    let cases: &[BadUsage] = &[
        (
            &["--exclude-ns", "Kube-System"],
            &[],
            "not a DNS-1123 label",
        ),
        (&["--exclude-ns", "a,b_c"], &[], "not a DNS-1123 label"),
        (&["--deadline", "1m"], &[], "non-negative integer"),
        (&["--interval", "0"], &[], "at least 1"),
        (
            &[],
            &[("KWOK_VERIFY_PODS_DEADLINE", "-5")],
            "non-negative integer",
        ),
        (
            &[],
            &[("KWOK_VERIFY_PODS_INTERVAL", "0x5")],
            "non-negative integer",
        ),
        (
            &[],
            &[("KWOK_VERIFY_PODS_KUBECTL_TIMEOUT", "")],
            "non-negative integer",
        ),
        (&["--format", "yaml"], &[], "invalid value"),
    ];
    for (args, env, cause) in cases {
        let mut cmd = verify_pods();
        cmd.arg("check")
            .args(*args)
            .args(["--kubectl", "/nonexistent/kubectl"]);
        for (k, v) in *env {
            cmd.env(k, v);
        }
        cmd.assert()
            .code(2)
            .stderr(predicate::str::contains(*cause));
    }
}

#[test]
fn unknown_program_exits_2() {
    verify_pods().args(["programs", "nope"]).assert().code(2);
    verify_pods()
        .args(["programs", "report"])
        .assert()
        .code(0)
        .stdout(checker::Programs::REPORT.text);
}

/// A kubectl stand-in: a script, for behaviours a real server cannot be
/// asked for here (a missing binary, a hang). Real kubectl against the replay
/// server is exercised in tests/tests/faults.rs.
fn stub_kubectl(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("kubectl");
    fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn live(kubectl: &Path) -> Command {
    let mut cmd = verify_pods();
    cmd.args(["check", "--deadline", "0", "--kubectl"])
        .arg(kubectl);
    cmd
}

#[test]
fn missing_kubectl_exits_2() {
    live(Path::new("/nonexistent/kubectl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not found"));
}

#[test]
fn failing_kubectl_with_a_valid_partial_list_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    // What kubectl prints when page 2 of a list fails with 410 Expired.
    let kubectl = stub_kubectl(
        dir.path(),
        r#"echo '{"apiVersion":"v1","items":[{"metadata":{"namespace":"a","name":"p"},"spec":{"nodeName":"n"},"status":{"phase":"Running"}}],"kind":"List","metadata":{"resourceVersion":""}}'
echo 'Error from server (Expired): The provided continue parameter is too old' >&2
exit 1"#,
    );
    live(&kubectl)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("Error from server (Expired)"));
}

#[test]
fn failing_kubectl_with_an_empty_list_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let kubectl = stub_kubectl(
        dir.path(),
        r#"echo '{"apiVersion":"v1","items":[],"kind":"List","metadata":{"resourceVersion":""}}'
echo 'Error from server (InternalError): Internal error occurred' >&2
exit 1"#,
    );
    live(&kubectl)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("InternalError"));
}

#[test]
fn hanging_kubectl_is_killed_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    // The child `sleep` keeps stdout open: only killing the group ends it.
    let kubectl = stub_kubectl(dir.path(), "echo '{\"items\": ['\nsleep 30\necho ']}'");
    let started = std::time::Instant::now();
    live(&kubectl)
        .args(["--kubectl-timeout", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did not finish within 1s"));
    assert!(
        started.elapsed().as_secs() < 20,
        "the hung kubectl was not killed"
    );
}

#[test]
fn kubectl_output_that_is_not_json_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let kubectl = stub_kubectl(dir.path(), "echo 'No resources found'");
    live(&kubectl)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "kubectl get pods:1:1: invalid JSON",
        ));
}

#[test]
fn settle_turns_a_pod_that_binds_into_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("calls");
    let kubectl = stub_kubectl(
        dir.path(),
        &format!(
            r#"n=$(cat '{c}' 2>/dev/null || echo 0); echo $((n + 1)) > '{c}'
if [ "$2" = events ]; then echo '{{"items":[]}}'; exit 0; fi
if [ "$n" = 0 ]; then node=''; phase=Pending; else node=kwok-node-0; phase=Running; fi
printf '{{"items":[{{"metadata":{{"namespace":"a","name":"p"}},"spec":{{"nodeName":"%s"}},"status":{{"phase":"%s"}}}}]}}\n' "$node" "$phase""#,
            c = counter.display()
        ),
    );
    let out = verify_pods()
        .args([
            "check",
            "--deadline",
            "5",
            "--interval",
            "1",
            "--format",
            "json",
            "--kubectl",
        ])
        .arg(&kubectl)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["attempts"], 2);
    assert_eq!(result["verdict"], "pass");
    // The progress line of the first attempt goes to stderr in JSON mode.
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

#[test]
fn failure_saves_the_snapshot_events_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let pods =
        br#"{"items":[{"metadata":{"namespace":"a","name":"p"},"status":{"phase":"Pending"}}]}"#;
    let kubectl = stub_kubectl(
        dir.path(),
        &format!(
            "if [ \"$2\" = events ]; then echo '{{\"items\":[]}}'; else echo '{}'; fi",
            String::from_utf8_lossy(pods)
        ),
    );
    let save = dir.path().join("artifacts");
    let out = live(&kubectl)
        .arg("--save-dir")
        .arg(&save)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        fs::read(save.join("pods.json")).unwrap(),
        [&pods[..], b"\n"].concat()
    );
    assert_eq!(
        fs::read(save.join("events.json")).unwrap(),
        b"{\"items\":[]}\n"
    );
    assert_eq!(fs::read(save.join("report.json")).unwrap(), out.stdout);
    // The saved snapshot re-analyses offline to the same counts.
    let offline = verify_pods()
        .args(["check", "--format", "json", "--snapshot"])
        .arg(save.join("pods.json"))
        .output()
        .unwrap();
    let (live_result, offline_result): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&out.stdout).unwrap(),
        serde_json::from_slice(&offline.stdout).unwrap(),
    );
    assert_eq!(
        live_result["unscheduled_pods"],
        offline_result["unscheduled_pods"]
    );
}

#[test]
fn pass_leaves_no_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let kubectl = stub_kubectl(dir.path(), "echo '{\"items\":[]}'");
    let save = dir.path().join("artifacts");
    live(&kubectl).arg("--save-dir").arg(&save).assert().code(0);
    assert_eq!(fs::read_dir(&save).unwrap().count(), 0);
}
