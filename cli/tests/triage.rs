//! `verify-pods triage` through the binary: verdicts, line numbers, exit
//! codes, the JSON shape, prefixes and colours, unreadable input, and the
//! status line printed by `verify-pods check` being recognised.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn verify_pods() -> Command {
    Command::cargo_bin("verify-pods").unwrap()
}

/// `verify-pods triage FLAGS… LOGS…`, run.
fn triage(flags: &[&str], logs: &[&Path]) -> assert_cmd::assert::Assert {
    verify_pods().arg("triage").args(flags).args(logs).assert()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/triage")
        .join(name)
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
}

/// `triage --format json ARGS`: the document and the exit code.
fn triage_json(args: &[&Path]) -> (Value, i32) {
    let out = verify_pods()
        .arg("triage")
        .arg("--format")
        .arg("json")
        .args(args)
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    (doc, out.status.code().unwrap())
}

fn only_log(doc: &Value) -> &Value {
    let logs = doc["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 1, "{doc}");
    &logs[0]
}

/// The one log of `triage --format json` on the fixture `name`, once the
/// exit code is `code`, the log's verdict `verdict`, and the document's
/// race_signature whether that verdict is the race's.
fn triaged(name: &str, code: i32, verdict: &str) -> Value {
    let (doc, exit) = triage_json(&[&fixture(name)]);
    assert_eq!(exit, code, "{doc}");
    assert_eq!(doc["race_signature"], verdict == "race-signature", "{doc}");
    let log = only_log(&doc);
    assert_eq!(log["verdict"], verdict);
    log.clone()
}

/// The `keys` of the object `value`, as an object (a missing key: null).
fn fields(value: &Value, keys: &[&str]) -> Value {
    let kept = keys.iter().map(|key| (key.to_string(), value[key].clone()));
    Value::Object(kept.collect())
}

#[test]
fn the_seed_signature_is_the_race_with_its_line_numbers() {
    let log = triaged("seed-race.log", 1, "race-signature");
    let finding = &log["findings"][0];
    assert_eq!(finding["line"], 7);
    assert_eq!(finding["class"], "race-signature");
    assert_eq!(
        finding["status"],
        json!({"total": 20, "running": 20, "pending": 0, "unscheduled": 1, "failed": 0,
               "attempts": null, "waited_seconds": null})
    );
    assert_eq!(finding["impossible"].as_array().unwrap().len(), 1);
    assert_eq!(finding["contradicted_at"], 9);
    assert_eq!(finding["red_herring"]["lines"], json!([12, 13, 14]));
    assert_eq!(
        finding["red_herring"]["namespaces"],
        json!(["kube-system", "kwok-system"])
    );
    assert_eq!(finding["events_in_checked_namespaces"], 0);
}

#[test]
fn the_text_report_names_the_verdict_and_the_lines() {
    verify_pods()
        .arg("triage")
        .arg(fixture("seed-race.log"))
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with(format!(
            "{}: race-signature\n",
            fixture("seed-race.log").display()
        )))
        .stdout(predicate::str::contains("line 7: impossible counts"))
        .stdout(predicate::str::contains("line 9: \"No resources found\""))
        .stdout(predicate::str::contains(
            "lines 12, 13, 14: 3 FailedScheduling",
        ))
        .stdout(predicate::str::contains("\x1b[").not());
}

#[test]
fn a_genuine_failure_is_a_real_failure_and_exits_0() {
    let log = triaged("real-failure.log", 0, "real-failure");
    let finding = &log["findings"][0];
    let checked = [
        "line",
        "class",
        "impossible",
        "contradicted_at",
        "events_in_checked_namespaces",
    ];
    // The -o wide event rows: training is checked, kube-system a red
    // herring (line 11).
    let wanted = json!({"line": 3, "class": "failure", "impossible": [], "contradicted_at": null,
                        "events_in_checked_namespaces": 1});
    assert_eq!(fields(finding, &checked), wanted);
    assert_eq!(finding["red_herring"]["lines"], json!([11]));
}

#[test]
fn a_passing_log_passes_and_reads_the_attempts_group() {
    let log = triaged("pass.log", 0, "pass");
    assert_eq!(log["findings"][0]["status"]["attempts"], 2);
    assert_eq!(log["findings"][0]["status"]["waited_seconds"], 5);
}

#[test]
fn a_log_without_status_line_says_so() {
    let log = triaged("no-status.log", 0, "no-status-line");
    assert_eq!(log["status_lines"], 0);
    assert_eq!(log["lines"], 5);
    assert_eq!(log["findings"], json!([]));
}

#[test]
fn colour_codes_crlf_and_bytes_that_are_not_utf8_are_read_through() {
    let (doc, code) = triage_json(&[&fixture("crlf-colour.log")]);
    assert_eq!(code, 1);
    let finding = &only_log(&doc)["findings"][0];
    assert_eq!(finding["line"], 3);
    assert_eq!(finding["status"]["total"], 20);
    assert_eq!(finding["status"]["unscheduled"], 1);
    assert_eq!(finding["contradicted_at"], 4);
}

#[test]
fn prefixes_of_every_kind_are_read_through() {
    let dir = tempfile::tempdir().unwrap();
    let prefixes = [
        "",
        "2026-05-28T10:01:02.1234567Z ",
        "[INFO] ",
        "\x1b[0;32m[INFO]\x1b[0m ",
        "2026-05-28T10:01:02.1234567Z \x1b[0;32m[INFO]\x1b[0m ",
        "##[error]",
        "INFO: ",
    ];
    for prefix in prefixes {
        let log = dir.path().join("prefixed.log");
        let text = format!(
            "{prefix}Pod status: 5 total, 4 running, 1 pending (1 unscheduled), 0 failed\n\
             {prefix}Unscheduled pods:\n\
             {prefix}No resources found\n\
             {prefix}kube-system   2m   Warning   FailedScheduling   pod/coredns-x   0/3 nodes\n"
        );
        std::fs::write(&log, text).unwrap();
        let (doc, code) = triage_json(&[&log]);
        let finding = &only_log(&doc)["findings"][0];
        assert_eq!(code, 1, "{prefix:?}: {doc}");
        assert_eq!(finding["contradicted_at"], 3, "{prefix:?}");
        assert_eq!(finding["red_herring"]["lines"], json!([4]), "{prefix:?}");
    }
}

#[test]
fn any_race_among_several_logs_exits_1_and_logs_keep_their_order() {
    let (doc, code) = triage_json(&[&fixture("pass.log"), &fixture("seed-race.log")]);
    assert_eq!(code, 1);
    let verdicts: Vec<&Value> = doc["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["verdict"])
        .collect();
    assert_eq!(verdicts, [&json!("pass"), &json!("race-signature")]);
    let (doc, code) = triage_json(&[&fixture("pass.log"), &fixture("real-failure.log")]);
    assert_eq!(code, 0);
    assert_eq!(doc["race_signature"], false);
}

#[test]
fn unreadable_logs_exit_2_and_the_readable_ones_are_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.log");
    triage(&[], &[&missing, &fixture("seed-race.log")])
        .code(2)
        .stderr(predicate::str::contains(missing.display().to_string()))
        .stdout(predicate::str::contains("race-signature"));
    triage(&[], &[dir.path()])
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
}

#[test]
fn stdin_is_read_without_arguments_and_for_a_dash() {
    let log = std::fs::read(fixture("seed-race.log")).unwrap();
    for args in [vec!["triage"], vec!["triage", "-"]] {
        verify_pods()
            .args(&args)
            .write_stdin(log.clone())
            .assert()
            .code(1)
            .stdout(predicate::str::starts_with("<stdin>: race-signature\n"));
    }
}

#[test]
fn exclude_ns_replaces_the_red_herring_namespaces() {
    let out = verify_pods()
        .args(["triage", "--format", "json", "--exclude-ns", "training"])
        .arg(fixture("real-failure.log"))
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = &only_log(&doc)["findings"][0];
    assert_eq!(finding["red_herring"]["lines"], json!([10]));
    assert_eq!(finding["red_herring"]["namespaces"], json!(["training"]));
    assert_eq!(finding["events_in_checked_namespaces"], 1);
    triage(&["--exclude-ns", "Not_A_Label"], &[&fixture("pass.log")])
        .code(2)
        .stderr(predicate::str::contains("DNS-1123"));
}

#[test]
fn the_json_document_has_the_documented_shape() {
    let (doc, _) = triage_json(&[&fixture("seed-race.log")]);
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let sorted = |mut k: Vec<&str>| {
        k.sort_unstable();
        k.into_iter().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(keys(&doc), sorted(vec!["race_signature", "logs"]));
    let log = only_log(&doc);
    assert_eq!(
        keys(log),
        sorted(vec![
            "log",
            "verdict",
            "lines",
            "status_lines",
            "findings",
            "findings_omitted",
            "reasons"
        ])
    );
    assert!(log["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .all(Value::is_string));
    assert_eq!(
        keys(&log["findings"][0]),
        sorted(vec![
            "line",
            "class",
            "status",
            "impossible",
            "contradicted_at",
            "red_herring",
            "events_in_checked_namespaces"
        ])
    );
    assert_eq!(
        keys(&log["findings"][0]["red_herring"]),
        sorted(vec!["count", "lines", "namespaces"])
    );
}

/// The status line is worded by render.jq; a line printed by the checker
/// must be recognised with the counts of the result it came from.
#[test]
fn the_status_line_printed_by_check_is_recognised() {
    let check = |format: &str| {
        verify_pods()
            .args(["check", "--format", format, "--snapshot"])
            .arg(sample("pods.json"))
            .arg("--events")
            .arg(sample("events.json"))
            .output()
            .unwrap()
            .stdout
    };
    let result: Value = serde_json::from_slice(&check("json")).unwrap();
    let out = verify_pods()
        .args(["triage", "--format", "json"])
        .write_stdin(check("text"))
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = only_log(&doc);
    assert_eq!(log["status_lines"], 1, "{doc}");
    let status = &log["findings"][0]["status"];
    for key in [
        "total",
        "running",
        "pending",
        "unscheduled",
        "failed",
        "attempts",
        "waited_seconds",
    ] {
        assert_eq!(status[key], result[key], "{key}");
    }
    // A coherent failure of the checker itself is never called a race.
    assert_eq!(log["verdict"], "real-failure");
    assert_eq!(out.status.code(), Some(0));
}
