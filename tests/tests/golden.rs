//! Goldens: the real `verify-pods` binary on every recorded case must print
//! exactly `expected.txt` / `expected.json` and exit with `expected.exit`.
//! With `VERIFY_PODS_BLESS=1` (`make bless`) the goldens are rewritten
//! instead; review them with `git diff`. Either way the goldens are then held
//! against the independent Python model of the rules in
//! `tests/corpus/make_corpus.py`, so a blessed golden is never just "whatever
//! the checker printed".
//!
//! Also: every file of `tests/corpus/bad/` must be refused with exit 2 and a
//! one-line error that names the file.
#![forbid(unsafe_code)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use verify_pods_tests::corpus::{self, Case, EXPECTED_EXIT, EXPECTED_JSON, EXPECTED_TXT};
use verify_pods_tests::{checker_command, run, workspace_root};

const BLESS_ENV: &str = "VERIFY_PODS_BLESS";

fn blessing() -> bool {
    std::env::var_os(BLESS_ENV).is_some_and(|v| v == "1")
}

/// `verify-pods check --snapshot pods.json --events events.json [extra]` at
/// the case's list limit, run from the case folder so messages carry the same relative names everywhere.
fn check(case: &Case, extra: &[&str]) -> Output {
    run(case
        .offline_check(checker_command())
        .args(
            case.workloads()
                .map(|_| ["--workloads", "workloads.json"])
                .into_iter()
                .flatten(),
        )
        .args(extra))
}

/// The three goldens as the checker produces them now.
struct Actual {
    text: Vec<u8>,
    json: Vec<u8>,
    exit: Vec<u8>,
}

fn actual(case: &Case) -> Actual {
    let text = check(case, &[]);
    let json = check(case, &["--format", "json"]);
    // The start line goes where the progress lines go: stdout (the first
    // line of expected.txt) for text, stderr for JSON.
    let (_, start) = checker::Engine::new()
        .expect("programs compile")
        .start_line(0)
        .expect("progress.jq's start line");
    for (what, out, stderr) in [
        ("text", &text, String::new()),
        ("json", &json, start + "\n"),
    ] {
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            stderr,
            "{}: {what} run's stderr",
            case.name,
        );
    }
    assert_eq!(
        text.status.code(),
        json.status.code(),
        "{}: text and JSON runs disagree on the exit code",
        case.name
    );
    let code = text.status.code().expect("verify-pods exited normally");
    Actual {
        text: text.stdout,
        json: json.stdout,
        exit: format!("{code}\n").into_bytes(),
    }
}

/// Where `actual` and the goldens differ, in words (empty when they agree).
fn differences(case: &Case, now: &Actual) -> Vec<String> {
    let mut out = Vec::new();
    for (file, bytes) in [
        (EXPECTED_TXT, &now.text),
        (EXPECTED_JSON, &now.json),
        (EXPECTED_EXIT, &now.exit),
    ] {
        let golden = fs::read(case.file(file)).unwrap_or_default();
        if &golden != bytes {
            out.push(format!(
                "{}/{file}: {}",
                case.name,
                first_difference(&golden, bytes)
            ));
        }
    }
    out
}

/// The first differing line, golden vs actual.
fn first_difference(golden: &[u8], actual: &[u8]) -> String {
    verify_pods_tests::first_difference(golden, actual, ["golden", "actual"])
}

fn write_goldens(case: &Case, now: &Actual) {
    for (file, bytes) in [
        (EXPECTED_TXT, &now.text),
        (EXPECTED_JSON, &now.json),
        (EXPECTED_EXIT, &now.exit),
    ] {
        fs::write(case.file(file), bytes).expect("write golden");
    }
}

/// `python3 tests/corpus/make_corpus.py check`: inputs are reproducible and
/// every golden equals the model's prediction. Returns its report on failure.
fn model_check() -> Result<(), String> {
    let script = workspace_root().join("tests/corpus/make_corpus.py");
    let out = run(Command::new("python3").arg(script).arg("check"));
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn every_case_matches_its_goldens() {
    let cases = corpus::cases();
    assert!(
        cases.len() >= 25,
        "the corpus has {} cases; at least 25 expected",
        cases.len()
    );
    let mut problems = Vec::new();
    for case in &cases {
        assert!(
            case.readme().trim().lines().count() == 1,
            "{}: README must be one line",
            case.name
        );
        let now = actual(case);
        if blessing() {
            write_goldens(case, &now);
        } else {
            problems.extend(differences(case, &now));
        }
    }
    if blessing() {
        eprintln!(
            "blessed {} cases: review with `git diff tests/corpus`",
            cases.len()
        );
        if let Err(report) = model_check() {
            panic!(
                "goldens rewritten, but they disagree with the model of make_corpus.py:\n{report}"
            );
        }
    }
    assert!(
        problems.is_empty(),
        "{} golden(s) differ from the checker's output (if the change is intended: `make bless`, then review `git diff tests/corpus`):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn goldens_agree_with_the_independent_model() {
    if blessing() {
        return; // the bless run checks the model after writing every golden
    }
    if let Err(report) = model_check() {
        panic!("make_corpus.py check failed:\n{report}");
    }
}

#[test]
fn podlist_and_list_give_the_same_goldens() {
    // Same pods, once as the API server's compact PodList, once as kubectl's List.
    if blessing() {
        return; // the goldens are being rewritten concurrently
    }
    // The one difference: the API server's PodList names its resourceVersion,
    // kubectl's List has none ("") to name (issue 15).
    let podlist = corpus::case("kind-podlist");
    let list = corpus::case("kind-list");
    assert_ne!(podlist.read("pods.json"), list.read("pods.json"));
    let json = |case: &Case| -> serde_json::Value {
        serde_json::from_slice(&case.read(EXPECTED_JSON)).expect("expected.json")
    };
    let version: serde_json::Value =
        serde_json::from_slice(&podlist.read("pods.json")).expect("pods.json");
    let version = &version["metadata"]["resourceVersion"];
    assert!(version.is_string(), "the PodList has a version: {version}");
    let (mut with_version, without) = (json(&podlist), json(&list));
    assert_eq!(&with_version["resource_version"], version);
    assert_eq!(without["resource_version"], serde_json::Value::Null);
    with_version["resource_version"] = serde_json::Value::Null;
    assert_eq!(with_version, without, "{EXPECTED_JSON} but the version");
    let text = |case: &Case| String::from_utf8(case.read(EXPECTED_TXT)).expect("UTF-8");
    let (named, unnamed) = (text(&podlist), text(&list));
    // After the start line, the status line.
    let after_start = |text: &str| text.split_once('\n').expect("lines").1.to_owned();
    let (named, unnamed) = (after_start(&named), after_start(&unnamed));
    let (first_named, rest_named) = named.split_once('\n').expect("lines");
    let (first_unnamed, rest_unnamed) = unnamed.split_once('\n').expect("lines");
    assert_eq!(
        rest_named, rest_unnamed,
        "{EXPECTED_TXT} but the status line"
    );
    let added = first_named.strip_prefix(first_unnamed);
    assert!(
        added.is_some_and(|added| added.ends_with(version.as_str().unwrap_or_default())),
        "the status line only adds the version: {first_named:?} / {first_unnamed:?}"
    );
    assert_eq!(podlist.read(EXPECTED_EXIT), list.read(EXPECTED_EXIT));
}

// ---------------------------------------------------------------- bad input

/// The one-line error of `verify-pods check --snapshot <bad file>` (exit 2,
/// no verdict: only the start line on stdout, printed before the snapshot
/// is read); `fragment` must appear in it after the file's path.
fn refuse(args: &[&str], path_arg: &str, fragment: &str) {
    let out = run(checker_command()
        .current_dir(corpus::corpus_dir())
        .arg("check")
        .args(args));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{path_arg}: stderr {stderr}");
    let (_, start) = checker::Engine::new()
        .expect("programs compile")
        .start_line(0)
        .expect("progress.jq's start line");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        start + "\n",
        "{path_arg}: printed a verdict"
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "{path_arg}: not one line: {stderr}"
    );
    let named = stderr
        .find(path_arg)
        .unwrap_or_else(|| panic!("stderr does not name {path_arg}: {stderr}"));
    assert!(
        stderr[named..].contains(fragment),
        "{path_arg}: {fragment:?} not in {stderr}"
    );
}

/// One test a line: `name: file of bad/, what stderr says after its name;`.
macro_rules! bad_snapshot {
    ($($name:ident: $file:literal, $fragment:expr;)*) => {$(
        #[test]
        fn $name() {
            let path = concat!("bad/", $file);
            refuse(&["--snapshot", path], path, $fragment);
        }
    )*};
}

/// One test a line, the bad file given with `$flag` beside the pods of a
/// case: the events of the seed case (events are read when something is
/// unscheduled); the workloads of a case that passes with its own
/// (make_corpus.py's BAD_WORKLOADS_PODS).
macro_rules! bad_beside_pods {
    ($flag:literal of $pods:literal: $($name:ident: $file:literal, $fragment:expr;)*) => {$(
        #[test]
        fn $name() {
            let path = concat!("bad/", $file);
            refuse(&["--snapshot", $pods, $flag, path], path, $fragment);
        }
    )*};
}

// Positions were counted by hand in the files (line:column, column 1-based; at
// the end of input, the length of the last line).
bad_snapshot! {
    malformed_json: "malformed.json", ":4:63: invalid JSON";
    truncated_json: "truncated.json", ":188:12: invalid JSON";
    empty_file: "empty.json", ": empty input";
    whitespace_only: "whitespace-only.json", ":3:0: invalid JSON";
    no_items: "empty-object.json", ": snapshot has no items array";
    items_object: "items-object.json", ": snapshot has no items array";
    items_null: "items-null.json", ": snapshot has no items array";
    // JSON that is no list is named with what a snapshot must be, in the
    // words the bash prints too (lib.jq's list_items).
    top_level_array: "top-level-array.json", ": snapshot is an array, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    top_level_null: "null.json", ": snapshot is null, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    single_object: "workloads-one-deployment.json", ": a Deployment, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    non_utf8: "non-utf8.json", ":1:58: invalid JSON";
    // The invalid byte sits in a label, which no program reads.
    non_utf8_in_an_unread_field: "non-utf8-unread-field.json", ": invalid JSON";
    // Two Lists are read as the pages of one list: refused when their
    // resourceVersions differ (lib.jq's list_items).
    two_documents: "two-documents.json", ": snapshot mixes pages of resourceVersion \"\" and \"1001\": not one list";
    // The raw pages of a paged list (make_corpus.py's BAD_PAGES): the last page
    // from another version, or a list that stops before its last page.
    pages_mixed_versions: "pages-mixed-versions.json", ": snapshot mixes pages of resourceVersion \"48213\" and \"48290\": not one list";
    pages_trailing_continue: "pages-trailing-continue.json", ": snapshot is incomplete: its last page has a continue token";
    kubectl_error_text: "kubectl-error-text.json", ":1:1: invalid JSON";
    // Only pods are counted (issue 29): a list of something else, named.
    events_as_pods: "events-as-pods.json", ": a list holding an Event, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    nodelist: "nodelist.json", ": a NodeList, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    // A PodList's items are Pods too, not only a List's.
    podlist_holding_a_node: "podlist-holding-a-node.json", ": a list holding a Node, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    // The API server writes the version as a string (live, a number is refused).
    resource_version_number: "resource-version-number.json", ": snapshot has a resourceVersion that is a number, not a string";
    // Each pod once: a uid twice in one state is refused, whatever made it.
    pods_twice: "pods-twice.json", ": pod 1 (kube-system/coredns-lqzszz2g6d-9qwmp) and pod 35 (kube-system/coredns-lqzszz2g6d-9qwmp) have the same uid \"f747d583-f7b0-4f6e-8fb5-39416fc6bbb0\": each pod is counted once";
    pod_merged_twice: "pod-merged-twice.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt) and pod 15 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt) have the same uid \"b8e22df1-ca25-411b-85a3-40aa1a3595b1\": each pod is counted once";
    pod_null: "pod-null.json", ": pod 3 is null, not an object";
    // The API's types in the fields the verdict reads: what
    // numbers-where-strings-belong once printed is refused.
    nodename_number: "nodename-number.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): spec.nodeName is a number, not a string";
    nodename_false: "nodename-false.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): spec.nodeName is a boolean, not a string";
    namespace_number: "namespace-number.json", ": pod 13 (?/gpu-operator-hgwp95j2kt-9s5wt): metadata.namespace is a number, not a string";
    // A name is read of the pods listed: the unscheduled one here.
    name_number: "name-number.json", ": pod 33 (skyhook/?): metadata.name is a number, not a string";
    uid_number: "uid-number.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): metadata.uid is a number, not a string";
    phase_number: "phase-number.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): status.phase is a number, not a string";
    status_string: "status-string.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): status is a string, not an object";
    // The counted pod is named, not the excluded one before it (parity.rs
    // runs it with the workloads read, which check that one too).
    excluded_and_counted_pods_bad: "excluded-and-counted-pods-bad.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): status.phase is a number, not a string";
    // JSON has no NaN; jq reads it and its kin as numbers, and so does the
    // reader: refused as a number where a string belongs, in both drivers.
    nodename_nan: "nodename-nan.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): spec.nodeName is a number, not a string";
    phase_nan: "phase-nan.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): status.phase is a number, not a string";
    // A kind that is NaN, named as every engine prints such a number.
    item_kind_nan: "item-kind-nan.json", ": a list holding a kind null, expected a PodList or a List of Pods (kubectl get pods -A -o json)";
    uid_minus_nan: "uid-minus-nan.json", ": pod 13 (gpu-operator/gpu-operator-hgwp95j2kt-9s5wt): metadata.uid is a number, not a string";
    missing_file: "does-not-exist.json", ": cannot open";
}

bad_beside_pods! {
    "--events" of "seed-one-unscheduled/pods.json":
    events_malformed: "malformed.json", ":4:63: invalid JSON";
    events_empty: "empty.json", ": empty input";
    events_no_items: "empty-object.json", "no items array";
    events_null: "null.json", ": events document is null, expected an EventList or a List of Events (kubectl get events -A -o json)";
    events_non_utf8: "events-non-utf8.json", ":1:122: invalid JSON";
    pods_as_events: "pods-as-events.json", ": a list holding a Pod, expected an EventList or a List of Events (kubectl get events -A -o json)";
}

// Only the four apps/v1 kinds are workloads: any other kind is a wrong file,
// never a workload skipped.
bad_beside_pods! {
    "--workloads" of "workloads-all-created/pods.json":
    pods_as_workloads: "pods-as-workloads.json", ": workloads: a Pod, expected lists of ReplicaSets, StatefulSets, DaemonSets or Deployments (kubectl get rs,sts,ds,deploy -A -o json, or the saved workloads.json)";
    workloads_with_a_job: "workloads-with-a-job.json", ": workloads: a Job, expected lists of";
    workloads_without_kinds: "workloads-without-kinds.json", ": workloads: a kind \"\", expected lists of";
    workloads_empty_nodelist: "workloads-empty-nodelist.json", ": workloads: a NodeList, expected lists of";
    workloads_one_deployment: "workloads-one-deployment.json", ": workloads: a Deployment, expected lists of ReplicaSets, StatefulSets, DaemonSets or Deployments (kubectl get rs,sts,ds,deploy -A -o json, or the saved workloads.json)";
    workloads_twice: "workloads-twice.json", ": workloads: item 1 (Deployment kube-system/coredns) and item 37 (Deployment kube-system/coredns) have the same uid \"b03f4b57-3094-4113-877c-773696eb57b5\": each workload is counted once";
    workloads_null_item: "workloads-null-item.json", ": workloads: item 3 is null, not an object";
    // A replicas of "3" was read as 1 wanted; 99999999999999997 was printed.
    workloads_replicas_string: "workloads-replicas-string.json", ": workloads: item 35 (StatefulSet aicr-registry/registry): spec.replicas is a string, not an integer from 0 to 2147483647";
    workloads_replicas_too_big: "workloads-replicas-too-big.json", ": workloads: item 35 (StatefulSet aicr-registry/registry): spec.replicas is a number, not an integer from 0 to 2147483647";
    workloads_replicas_nan: "workloads-replicas-nan.json", ": workloads: item 35 (StatefulSet aicr-registry/registry): spec.replicas is a number, not an integer from 0 to 2147483647";
    workloads_replicas_infinity: "workloads-replicas-infinity.json", ": workloads: item 35 (StatefulSet aicr-registry/registry): spec.replicas is a number, not an integer from 0 to 2147483647";
    workloads_replicas_minus_infinity: "workloads-replicas-minus-infinity.json", ": workloads: item 35 (StatefulSet aicr-registry/registry): spec.replicas is a number, not an integer from 0 to 2147483647";
    workloads_generation_fraction: "workloads-generation-fraction.json", ": workloads: item 32 (DaemonSet gpu-operator/nvidia-device-plugin-daemonset): metadata.generation is a number, not an integer from 0 to 2147483647";
}

/// The bad workloads a server can send (kinds the stub kubectl serves as
/// their lists, with items of other types or twice), through both drivers
/// live: each exits 2 with the same words after its own prefix. (A null
/// item, NaN, a single object or another kind are no list a server sends:
/// the stub drops or rewrites them; they are checked offline above.)
#[test]
fn bad_workloads_are_refused_alike_by_bash_and_checker() {
    // make_corpus.py's BAD_WORKLOADS_PODS, as bad_beside_pods! uses it for --workloads.
    let pods = corpus::case("workloads-all-created").pods();
    let served = [
        "workloads-twice.json",
        "workloads-replicas-string.json",
        "workloads-replicas-too-big.json",
        "workloads-generation-fraction.json",
    ];
    let mut problems = Vec::new();
    for file in served {
        let workloads = corpus::bad_dir().join(file);
        let settings = verify_pods_tests::stub_workloads_env(Some(&workloads));
        let mut sandbox = verify_pods_tests::sandbox::Sandbox::new();
        sandbox
            .pods(&[&pods])
            .events(&corpus::case("empty-list").events());
        sandbox.set(checker::contract::DEADLINE_ENV, "0");
        for (name, value) in &settings {
            sandbox.set(name, value);
        }
        let bash = sandbox.run_wrapper();
        let stub = verify_pods_tests::install_stub_kubectl(&sandbox.path("checker-bin"));
        let checker = run(checker_command()
            .args(["check", "--kubectl"])
            .arg(&stub)
            .env(checker::contract::DEADLINE_ENV, "0")
            .envs(verify_pods_tests::stub_kubectl_env())
            .envs(settings)
            .env("STUB_PODS", &pods)
            .env("STUB_EVENTS", corpus::case("empty-list").events()));
        // The words after the driver's prefix: the program's error.
        let words = |out: &Output| {
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            stderr
                .split_once("workloads.jq: ")
                .map(|(_, words)| words.to_owned())
        };
        let refused = |out: &Output| out.status.code() == Some(2);
        if !refused(&bash)
            || !refused(&checker)
            || words(&bash).is_none()
            || words(&bash) != words(&checker)
        {
            problems.push(format!(
                "{file}: bash exit {:?} {:?}, checker exit {:?} {:?}",
                bash.status.code(),
                String::from_utf8_lossy(&bash.stderr),
                checker.status.code(),
                String::from_utf8_lossy(&checker.stderr)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_bad_input_is_in_the_table() {
    // A file added to bad/ without a line above would never be exercised.
    let table = include_str!("golden.rs");
    for path in corpus::bad_inputs() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            table.contains(&format!("\"{name}\"")) || table.contains(&format!("\"bad/{name}\"")),
            "tests/corpus/bad/{name} has no line in golden.rs"
        );
    }
    assert!(Path::new(&corpus::bad_dir()).is_dir());
}

/// The README's text example is executed: it names its case, and each of its
/// lines must stand in that case's golden in the same order. A line `  …`
/// stands for lines left out; a line ending in ` …` is a golden line cut short.
#[test]
fn readme_text_example_is_a_golden() {
    let readme = fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let section = &readme[readme.find("### Text").expect("README has a Text section")..];
    let case_name = section
        .split("`tests/corpus/")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .expect("the example names its case as `tests/corpus/NAME`");
    let example = section
        .split("```\n")
        .nth(1)
        .expect("the Text section has a code block");
    let golden =
        fs::read_to_string(corpus::corpus_dir().join(case_name).join(EXPECTED_TXT)).unwrap();
    let mut golden_lines = golden.lines();
    for line in example.lines().filter(|line| line.trim() != "…") {
        let found = match line.strip_suffix(" …") {
            Some(cut) => golden_lines.any(|g| g.starts_with(cut)),
            None => golden_lines.any(|g| g == line),
        };
        assert!(
            found,
            "README's example line is not in {case_name}'s golden, in order: {line}"
        );
    }
}

/// The verdict and the text of `case` as jq makes them (the chain a bash
/// function runs: report.jq, result.jq without events, render.jq), with
/// report.jq's `$workloads` at `workloads`.
fn text_by_jq(case: &Case, workloads: &str) -> (String, Vec<String>) {
    use checker::Programs;
    use verify_pods_tests::{jq, JqRun};
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let step = |program, values: Vec<String>, input: std::path::PathBuf, output: &str| {
        let ran = jq(&JqRun {
            program,
            values,
            input,
        });
        assert_eq!(
            ran.status, 0,
            "{}: {}: {}",
            case.name, program.file, ran.stderr
        );
        fs::write(path(output), &ran.stdout).unwrap();
        ran.stdout
    };
    step(
        Programs::REPORT,
        vec![
            case.excluded_namespaces().join(","),
            case.owner_kinds(),
            case.namespaces(),
            case.selector(),
            workloads.to_owned(),
        ],
        case.pods(),
        "report.json",
    );
    fs::write(path("events.json"), "").unwrap();
    let events = path("events.json").display().to_string();
    let result = step(
        Programs::RESULT,
        vec!["1".into(), "0".into(), events],
        path("report.json"),
        "result.json",
    );
    let lines = step(
        Programs::RENDER,
        vec![
            case.list_limit().to_string(),
            case.namespaces(),
            case.selector(),
        ],
        path("result.json"),
        "lines.txt",
    );
    let result: serde_json::Value = serde_json::from_slice(&result).unwrap();
    let text = String::from_utf8(lines).unwrap();
    (
        result["verdict"].as_str().unwrap().to_owned(),
        text.lines().map(str::to_owned).collect(),
    )
}

/// Whether a line of the text says that the pods not yet created were not
/// checked (its words are render.jq's; these two are what it is about).
fn says_not_checked(line: &str) -> bool {
    line.contains("not yet created") && line.contains("not checked")
}

/// A driver that never reads the workloads (a host's library without the
/// workloads feature: report.jq's `$workloads` "never", upstream's
/// verdicts) says nothing of pods not yet created: on every case its text
/// is that of a check whose workloads were not read ("false"), but for the
/// one line that says they were not checked, which a failure has there.
#[test]
fn a_driver_that_never_reads_the_workloads_says_nothing_of_them() {
    for case in corpus::cases() {
        let (verdict, never) = text_by_jq(&case, "never");
        let (verdict_not_read, not_read) = text_by_jq(&case, "false");
        assert_eq!(verdict, verdict_not_read, "{}", case.name);
        assert_eq!(
            not_read
                .iter()
                .filter(|line| says_not_checked(line))
                .count(),
            usize::from(verdict == "fail"),
            "{}: {not_read:#?}",
            case.name
        );
        let without: Vec<String> = not_read
            .into_iter()
            .filter(|line| !says_not_checked(line))
            .collect();
        assert_eq!(never, without, "{}", case.name);
        assert!(
            !never.iter().any(|line| line.contains("not yet created")),
            "{}: {never:#?}",
            case.name
        );
    }
}

/// GitHub shows at most this many error annotations a step, and as many
/// warnings (actions/runner); the rest are dropped.
const GITHUB_PER_STEP: usize = 10;

/// On every case, at its list limit and at 0 (an annotation a pod),
/// `--format github` keeps to GitHub's 10 errors and 10 warnings; when it
/// leaves pods out, its last line is the one warning that says how many.
#[test]
fn annotations_keep_to_the_ten_errors_github_shows() {
    let mut at_the_bound = 0;
    for case in corpus::cases() {
        for limit in [case.list_limit(), 0] {
            let limit = limit.to_string();
            let out = check(&case, &["--format", "github", "--list-limit", &limit]);
            let text = String::from_utf8(out.stdout).unwrap();
            let count = |level: &str| text.lines().filter(|l| l.starts_with(level)).count();
            let (errors, warnings) = (count("::error "), count("::warning "));
            let shown = format!("{} at the list limit {limit}:\n{text}", case.name);
            assert!(errors <= GITHUB_PER_STEP, "{errors} errors: {shown}");
            assert!(warnings <= GITHUB_PER_STEP, "{warnings} warnings: {shown}");
            let left_out: Vec<&str> = text
                .lines()
                .filter(|l| l.contains(" are not annotated"))
                .collect();
            if errors == GITHUB_PER_STEP {
                at_the_bound += 1;
                assert_eq!(left_out.len(), 1, "{shown}");
                assert!(text.lines().last() == Some(left_out[0]), "{shown}");
                assert!(left_out[0].starts_with("::warning "), "{shown}");
            }
        }
    }
    // The corpus has what the test is about: a check at the bound, with
    // pods not yet created beside the pods annotated one by one.
    assert!(at_the_bound > 0, "no case gives {GITHUB_PER_STEP} errors");
    let case = corpus::case("workloads-missing-and-unscheduled");
    let out = check(&case, &["--format", "github", "--list-limit", "0"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let errors = text.lines().filter(|l| l.starts_with("::error ")).count();
    assert_eq!(errors, GITHUB_PER_STEP, "{text}");
}
