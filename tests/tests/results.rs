//! CI results (`--ctrf`, `--junit`; KWOK_VERIFY_PODS_CTRF/JUNIT): both
//! drivers, live through the real kubectl against the replay server, write
//! the same files but for their times; the official CTRF package validates
//! the report and junitparser (PyPI) reads the XML; one test per namespace
//! of the golden, failed exactly where the golden has stuck pods; a check
//! that could not observe writes one `other` test; a file that cannot be
//! written is a warning that leaves the exit code alone.

use checker::contract::{self, DEADLINE_ENV};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use verify_pods_tests::corpus::{self, EXPECTED_JSON};
use verify_pods_tests::replay::{in_parallel, KubeEnv, Server, State};
use verify_pods_tests::{code, lines_of, run, text, workspace_root, Driver, DRIVERS};

/// CTRF with its times zeroed: the only bytes the drivers may differ in.
fn ctrf_without_times(file: &Path) -> Value {
    let mut report: Value =
        serde_json::from_slice(&std::fs::read(file).expect("the CTRF file")).expect("CTRF is JSON");
    report["timestamp"] = Value::from("T");
    report["results"]["summary"]["start"] = Value::from(0);
    report["results"]["summary"]["stop"] = Value::from(0);
    for test in report["results"]["tests"].as_array_mut().expect("tests") {
        test["duration"] = Value::from(0);
    }
    report
}

/// JUnit with every `time="…"` and `timestamp="…"` emptied.
fn junit_without_times(file: &Path) -> String {
    let xml = std::fs::read_to_string(file).expect("the JUnit file");
    ["time=\"", "timestamp=\""]
        .iter()
        .fold(xml, |xml, attribute| {
            let mut out = String::new();
            let mut rest = xml.as_str();
            while let Some(at) = rest.find(attribute) {
                let (head, tail) = rest.split_at(at + attribute.len());
                out.push_str(head);
                rest = &tail[tail.find('"').expect("a closing quote")..];
            }
            out + rest
        })
}

/// The official validator's verdict on the files (npm `ctrf`).
fn ctrf_validator(files: &[&Path]) -> Result<(), String> {
    let out = run(Command::new("node")
        .arg(workspace_root().join("tests/scripts/ctrf-validate.cjs"))
        .args(files));
    match code(&out) {
        0 => Ok(()),
        _ => Err(format!("{}{}", text(&out.stdout), text(&out.stderr))),
    }
}

/// What junitparser reads in a JUnit file.
fn junitparser(file: &Path) -> Value {
    let out = run(Command::new("python3")
        .arg(workspace_root().join("tests/scripts/junit-read.py"))
        .arg(file));
    assert_eq!(code(&out), 0, "junitparser: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("junit-read.py prints JSON")
}

/// One driver's run with both files asked for.
struct Written {
    exit: i32,
    stderr: String,
    ctrf: std::path::PathBuf,
    junit: std::path::PathBuf,
}

fn check(env: &KubeEnv, driver: Driver, dir: &Path, settings: &[(&str, String)]) -> Written {
    let name = format!("{driver:?}");
    let ctrf = dir.join(format!("{name}.ctrf.json"));
    let junit = dir.join(format!("{name}.junit.xml"));
    let out = run(driver
        .command(env)
        .env(DEADLINE_ENV, "0")
        .env(contract::CTRF.env, &ctrf)
        .env(contract::JUNIT.env, &junit)
        .envs(settings.iter().cloned()));
    Written {
        exit: code(&out),
        stderr: text(&out.stderr),
        ctrf,
        junit,
    }
}

/// The namespaces of a golden result (those with counted pods or with
/// pods not yet created), and those with stuck pods or pods not yet
/// created.
fn golden_namespaces(result: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let names = |key: &str, field: &str| -> BTreeSet<String> {
        // missing_workloads is null when no workloads were read.
        result[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| item[field].as_str().expect("a namespace").to_owned())
            .collect()
    };
    let missing = names("missing_workloads", "namespace");
    let mut all = names("namespaces", "namespace");
    all.extend(missing.iter().cloned());
    let mut stuck = names("unscheduled_pods", "namespace");
    stuck.extend(names("failed_pods", "namespace"));
    stuck.extend(missing);
    (all, stuck)
}

/// Both drivers on a case: the same files, valid, read by the consumers
/// as the golden says. Err = what is wrong.
fn results_of_case(name: &str) -> Result<(), String> {
    let case = corpus::case(name);
    let golden: Value = serde_json::from_slice(&case.read(EXPECTED_JSON)).expect("expected.json");
    let (namespaces, stuck) = golden_namespaces(&golden);
    let server = Server::serve(State::from_case_dir(&case.dir)?).expect("server starts");
    let env = KubeEnv::for_server(&server).expect("kubeconfig");
    let dir = tempfile::tempdir().expect("scratch");
    let runs: Vec<Written> = DRIVERS
        .iter()
        .map(|&driver| check(&env, driver, dir.path(), &case.env()))
        .collect();
    let [checker, bash] = &runs[..] else {
        unreachable!()
    };
    let why = |what: &str| {
        format!(
            "{name}: {what}\nchecker: {}\nbash: {}",
            checker.stderr, bash.stderr
        )
    };
    if checker.exit != case.expected_exit() || bash.exit != checker.exit {
        return Err(why(&format!("exit {} / {}", checker.exit, bash.exit)));
    }
    if ctrf_without_times(&checker.ctrf) != ctrf_without_times(&bash.ctrf) {
        return Err(why("the CTRF files differ beyond their times"));
    }
    if junit_without_times(&checker.junit) != junit_without_times(&bash.junit) {
        return Err(why("the JUnit files differ beyond their times"));
    }
    ctrf_validator(&[&checker.ctrf, &bash.ctrf]).map_err(|e| why(&e))?;
    // The tests: a namespace each, failed where the golden has stuck pods.
    let report = ctrf_without_times(&checker.ctrf);
    let tests = report["results"]["tests"].as_array().expect("tests");
    let named: BTreeSet<String> = tests
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    let mut wanted: BTreeSet<String> = namespaces.iter().map(|ns| format!("pods/{ns}")).collect();
    // A failure no namespace holds (a selection that selects no pod) is
    // one failed test `pods`, never a report with nothing failed.
    let unheld = golden["verdict"] == "fail" && stuck.is_empty();
    if unheld {
        wanted.insert("pods".to_owned());
    }
    if named != wanted || tests.len() != wanted.len() {
        return Err(why(&format!(
            "tests {named:?}, golden namespaces {wanted:?}"
        )));
    }
    let failures = stuck.len() + usize::from(unheld);
    for test in tests {
        let name = test["name"].as_str().unwrap_or_default();
        let ns = name.strip_prefix("pods/").unwrap_or_default();
        let status = if stuck.contains(ns) || (unheld && name == "pods") {
            "failed"
        } else {
            "passed"
        };
        if test["status"] != status {
            return Err(why(&format!(
                "{ns}: {} where the golden says {status}",
                test["status"]
            )));
        }
    }
    // junitparser reads one suite, a case per test, a failure per failed one.
    let read = junitparser(&bash.junit);
    let suite = &read["suites"][0];
    let cases = suite["cases"].as_array().expect("cases");
    if read["suites"].as_array().map(Vec::len) != Some(1)
        || suite["name"] != "verify-pods"
        || cases.len() != tests.len()
        || suite["failures"] != failures
    {
        return Err(why(&format!("junitparser read {read}")));
    }
    for (case, test) in cases.iter().zip(tests) {
        let failure = case["results"].as_array().expect("results").first();
        let message = test["message"].as_str().unwrap_or_default();
        // `pods/NAMESPACE` is classname pods, name NAMESPACE; `pods` is both.
        let test_name = test["name"].as_str().unwrap_or_default();
        let fine = case["classname"] == "pods"
            && case["name"] == test_name.strip_prefix("pods/").unwrap_or(test_name)
            && match failure {
                None => test["status"] == "passed",
                Some(failure) => {
                    failure["type"] == "failure"
                        && failure["text"] == message
                        && failure["message"] == message.lines().next().unwrap_or_default()
                }
            };
        if !fine {
            return Err(why(&format!("junitparser read {case} for {test}")));
        }
    }
    Ok(())
}

#[test]
fn both_drivers_write_the_same_results_and_their_consumers_read_them() {
    // A failure of every kind (digest, list limit 1), a pass, nothing to
    // count; pods not yet created, also in a namespace with no pod yet; a
    // selection that selects no pod.
    let names = vec![
        "digest-limit-1",
        "mixed-everything",
        "all-running",
        "empty-list",
        "workloads-statefulset-1-of-3",
        "workloads-deployment-without-replicaset",
        "selection-no-such-namespace",
    ];
    let problems: Vec<String> = in_parallel(names, 2, results_of_case)
        .into_iter()
        .filter_map(Result::err)
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn a_check_that_could_not_observe_writes_one_other_test() {
    // No server on the other end: kubectl fails on the first list.
    let env = KubeEnv::new("http://127.0.0.1:9").expect("kubeconfig");
    let dir = tempfile::tempdir().expect("scratch");
    let runs: Vec<Written> = DRIVERS
        .iter()
        .map(|&driver| check(&env, driver, dir.path(), &[]))
        .collect();
    for written in &runs {
        assert_eq!(written.exit, 2, "{}", written.stderr);
    }
    // Each says why in its first error line, without its prefix (the
    // checker names the --kubectl and --kubeconfig it was given); the rest
    // is the same.
    let mut reports = Vec::new();
    for written in &runs {
        let mut report = ctrf_without_times(&written.ctrf);
        let tests = report["results"]["tests"].as_array_mut().expect("tests");
        assert_eq!(tests.len(), 1, "{tests:?}");
        assert_eq!(tests[0]["status"], "other");
        let first_error = written.stderr.lines().next().unwrap_or_default();
        let message = tests[0]["message"].as_str().expect("a message");
        assert!(
            !message.is_empty() && first_error.ends_with(&format!(": {message}")),
            "{message:?} / {first_error:?}"
        );
        let junit = junit_without_times(&written.junit);
        let escaped = message
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(junit.contains(&escaped), "{junit}");
        tests[0]["message"] = Value::from("M");
        reports.push((report, junit.replace(&escaped, "M")));
    }
    assert_eq!(reports[0], reports[1], "the drivers' CTRF and JUnit");
    ctrf_validator(&[&runs[0].ctrf, &runs[1].ctrf]).expect("valid CTRF");
    let read = junitparser(&runs[1].junit);
    assert_eq!(read["suites"][0]["errors"], 1, "{read}");
    assert_eq!(
        read["suites"][0]["cases"][0]["results"][0]["type"], "error",
        "{read}"
    );
}

#[test]
fn a_results_file_that_cannot_be_written_warns_and_keeps_the_verdict() {
    let case = corpus::case("digest-limit-1");
    let server = Server::serve(State::from_case_dir(&case.dir).expect("state")).expect("server");
    let env = KubeEnv::for_server(&server).expect("kubeconfig");
    let dir = tempfile::tempdir().expect("scratch");
    let nowhere = dir.path().join("no-such-dir/results");
    for driver in DRIVERS {
        let out = run(driver
            .command(&env)
            .env(DEADLINE_ENV, "0")
            .env(contract::CTRF.env, nowhere.with_extension("json"))
            .env(contract::JUNIT.env, nowhere.with_extension("xml")));
        let stderr = text(&out.stderr);
        assert_eq!(code(&out), case.expected_exit(), "{driver:?}: {stderr}");
        assert_eq!(
            lines_of(&stderr, &contract::messages::RESULTS_NOT_WRITTEN),
            2,
            "{driver:?}: {stderr}"
        );
    }
}

/// A command line clap refuses is recorded too: one `other` test in clap's
/// words (its first line, without `error: `), a valid CTRF report and a
/// JUnit error, from the flags and the environment alike.
#[test]
fn a_usage_error_writes_one_other_test() {
    let dir = tempfile::tempdir().expect("scratch");
    let ctrf = dir.path().join("usage.ctrf.json");
    let junit = dir.path().join("usage.junit.xml");
    let out = run(verify_pods_tests::checker_command()
        .args(["check", "--no-such-flag", "--ctrf"])
        .arg(&ctrf)
        .env(contract::JUNIT.env, &junit));
    assert_eq!(code(&out), 2);
    let stderr = text(&out.stderr);
    let clap_words = stderr.lines().next().unwrap_or_default();
    let report = ctrf_without_times(&ctrf);
    let tests = report["results"]["tests"].as_array().expect("tests");
    assert_eq!(tests.len(), 1, "{tests:?}");
    assert_eq!(tests[0]["status"], "other");
    assert_eq!(
        Some(clap_words),
        tests[0]["message"]
            .as_str()
            .map(|m| format!("error: {m}"))
            .as_deref()
    );
    ctrf_validator(&[&ctrf]).expect("valid CTRF");
    let read = junitparser(&junit);
    assert_eq!(read["suites"][0]["errors"], 1, "{read}");
}
