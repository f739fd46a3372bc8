//! generated/verify_pods.sh included in a host script: the host's state is
//! left alone, set -e hosts get the function's status (upstream's: 1 when it
//! could not observe), and jq receives each canonical program as written.

use verify_pods_tests::sandbox;

use checker::contract::DEADLINE_ENV;
use scriptgen::render::{and_decision, embedded_jq, DECIDED_BY_RUNNER, USED};
use std::fs;
use std::process::Output;
use verify_pods_tests::sandbox::{function_file, sample, scriptgen_fixture as fixture, Sandbox};
use verify_pods_tests::text;

fn harness(sandbox: &mut Sandbox, mode: &str) -> Output {
    sandbox
        .set("VERIFY_PODS_SH", function_file().to_str().unwrap())
        .set("HARNESS_MODE", mode);
    verify_pods_tests::run(&mut sandbox.command(&fixture("host-harness.sh")))
}

/// The sample's pods, red under upstream's Job rule too: its unscheduled
/// PyTorchJob worker, which that rule excuses, owned by nothing.
fn red_pods() -> String {
    sandbox::sample_pods_disowned("PyTorchJob")
}

fn red_sandbox() -> Sandbox {
    let mut sandbox = Sandbox::new();
    let red = sandbox.file("red-pods.json", &red_pods());
    sandbox
        .one_request()
        .pods(&[&red])
        .events(&sample("events.json"))
        .set(DEADLINE_ENV, "0");
    sandbox
}

#[test]
fn host_state_is_untouched_on_every_outcome() {
    let mut cases = Vec::new();
    let mut red = red_sandbox();
    cases.push((harness(&mut red, "checked"), 1, red));
    let mut broken = red_sandbox();
    broken.set("STUB_PODS_EXIT", "1");
    cases.push((harness(&mut broken, "checked"), 1, broken));
    let mut invalid = red_sandbox();
    invalid.set(DEADLINE_ENV, "soon");
    cases.push((harness(&mut invalid, "checked"), 1, invalid));
    for (output, expected, sandbox) in cases {
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(expected), "stderr:\n{stderr}");
        assert!(
            stderr.contains("host exit trap"),
            "the host's EXIT trap ran"
        );
        assert_eq!(sandbox.leftovers(), Vec::<String>::new(), "temp files left");
    }
}

#[test]
fn a_plain_call_under_set_e_ends_the_host_with_the_status() {
    let mut red = red_sandbox();
    let output = harness(&mut red, "plain");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        !stderr.contains("after a plain call"),
        "errexit stopped the host"
    );
    assert!(stderr.contains("host exit trap"));
    assert_eq!(red.leftovers(), Vec::<String>::new());
}

/// What jq receives for `program` alone: lib.jq then its body, as written;
/// report.jq between the two parts of upstream's Job rule (the function
/// has no exact-owner-kinds).
fn compacted(program: &checker::programs::Program) -> String {
    let mut body = embedded_jq(program.body).unwrap();
    if program.name == checker::Programs::REPORT.name {
        body = format!(
            "{}{body}{}",
            scriptgen::render::JOB_RULE,
            scriptgen::render::JOB_RULE_END
        );
    }
    if program.with_lib {
        embedded_jq(checker::Programs::LIB).unwrap() + &body
    } else {
        body
    }
}

/// The texts that bring `program` to jq: its own, or, for decision.jq,
/// the runner's that also decides; that runner's program never runs alone.
fn runs_of(program: &checker::programs::Program) -> Vec<String> {
    let decided = USED.iter().find(|p| p.name == DECIDED_BY_RUNNER).unwrap();
    let both = and_decision(
        &compacted(decided),
        &compacted(&checker::Programs::DECISION),
    );
    match program.name {
        name if name == DECIDED_BY_RUNNER => vec![both],
        name if name == checker::Programs::DECISION.name => vec![compacted(program), both],
        _ => vec![compacted(program)],
    }
}

#[test]
fn jq_receives_each_program_compacted() {
    let mut sandbox = red_sandbox();
    let dir = sandbox.path("jq-programs");
    fs::create_dir(&dir).unwrap();
    // Every jq process saves its program as PID.jq in dir.
    sandbox.wrap_jq(&format!("printf %s \"${{!#}}\" >'{}'/$$.jq", dir.display()));
    // generated/verify_pods.sh is rendered without `--with summary`: even
    // under GitHub Actions it leaves the host's step summary alone.
    let summary = sandbox.path("step-summary.md");
    sandbox.set(
        checker::contract::STEP_SUMMARY_ENV,
        summary.to_str().unwrap(),
    );
    // Nor the CI results (without `--with results`): a results file asked
    // for is said to be left out, in one warning.
    let mut results = Vec::new();
    for (setting, file) in [
        (checker::contract::CTRF, "results.json"),
        (checker::contract::JUNIT, "results.xml"),
    ] {
        let path = sandbox.path(file);
        sandbox.set(setting.env, path.to_str().unwrap());
        results.push(path);
    }
    let output = harness(&mut sandbox, "checked");
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let passed: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        !summary.exists(),
        "a host's function wrote the step summary"
    );
    for path in results {
        assert!(!path.exists(), "{} written", path.display());
    }
    // One warning for each setting of the feature left out.
    let results = scriptgen::render::Feature::Results;
    for named in results.settings() {
        let left_out = checker::contract::messages::FEATURE_LEFT_OUT
            .format(&[("named", &named), ("feature", &results.name())]);
        assert_eq!(
            text(&output.stderr).matches(&left_out).count(),
            1,
            "{}",
            text(&output.stderr)
        );
    }
    // The red sample settles nothing (deadline 0), so every program but
    // progress.jq runs; progress.jq is covered by the settle tests, and
    // summary.jq by the wrapper's (tests/tests/github.rs).
    // workloads.jq runs only with the feature workloads; decision.jq then
    // runs alone.
    let skipped = [
        "progress",
        checker::Programs::WORKLOADS.name,
        checker::Programs::SUMMARY.name,
        checker::Programs::CTRF.name,
        checker::Programs::JUNIT.name,
    ];
    for program in USED.iter().filter(|p| !skipped.contains(&p.name)) {
        assert!(
            passed.iter().any(|text| runs_of(program).contains(text)),
            "{} did not reach jq unchanged",
            program.file
        );
    }
    // Exactly one pass over the snapshot: report.jq, once.
    let report_runs = passed.iter().filter(|t| **t == compacted(&USED[0])).count();
    assert_eq!(report_runs, 1);
}

#[test]
fn a_host_with_unusual_shell_settings_gets_the_same_result() {
    // IFS=:, noclobber (every attempt rewrites its files), nullglob,
    // failglob, nocasematch; settling over two snapshots.
    let run = |hostile: bool| {
        let mut sandbox = Sandbox::new();
        let bound = sandbox.file("bound.json", &bound_pods());
        let red = sandbox.file("red-pods.json", &red_pods());
        sandbox
            .one_request()
            .pods(&[&red, &bound])
            .events(&sample("events.json"))
            .set(DEADLINE_ENV, "5")
            .set(checker::contract::INTERVAL_ENV, "1");
        if hostile {
            sandbox.set("HARNESS_HOSTILE", "1");
        }
        let output = harness(&mut sandbox, "checked");
        assert_eq!(sandbox.leftovers(), Vec::<String>::new());
        assert_eq!(sandbox.kubectl_calls().len(), 2, "{}", text(&output.stderr));
        output
    };
    let (plain, hostile) = (run(false), run(true));
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    assert_eq!(hostile.status.code(), Some(0), "{}", text(&hostile.stderr));
    assert_eq!(
        sandbox::without_seconds(&text(&hostile.stdout)),
        sandbox::without_seconds(&text(&plain.stdout))
    );
}

/// samples/pods.json with every pod bound to a node.
fn bound_pods() -> String {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&fs::read(sample("pods.json")).unwrap()).unwrap();
    for pod in doc["items"].as_array_mut().unwrap() {
        let spec = pod["spec"].as_object_mut().unwrap();
        let bound = spec
            .get("nodeName")
            .and_then(|n| n.as_str())
            .is_some_and(|n| !n.is_empty());
        if !bound {
            spec.insert("nodeName".into(), "kwok-node-0".into());
        }
    }
    doc.to_string()
}

/// Issue 31: a host without log functions gets fallbacks that print as
/// upstream's helpers do (`[INFO]`/`[WARN]` on stdout, `[ERROR]` on
/// stderr), defined only for the call: none is left behind.
#[test]
fn a_host_without_log_functions_gets_upstreams_tags_and_streams() {
    let sandbox = red_sandbox();
    let host = sandbox.file(
        "bare-host.sh",
        &format!(
            "#!/usr/bin/env bash\nset -euo pipefail\nsource {}\nstatus=0\nverify_pods || status=$?\n\
             if declare -F log_info log_warn log_error; then echo left >&2; exit 90; fi\nexit \"$status\"\n",
            function_file().display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&host, fs::Permissions::from_mode(0o755)).unwrap();
    let output = verify_pods_tests::run(&mut sandbox.command(&host));
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.starts_with("[INFO] Verifying pod scheduling...\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("[ERROR] Scheduling validation FAILED\n"),
        "{stderr}"
    );
    // The banner's rules go where upstream's log_error sends them.
    assert!(
        stderr.contains("[ERROR] ==========================================\n"),
        "{stderr}"
    );
    assert!(!stdout.contains("=========="), "{stdout}");
    assert!(!stderr.contains("command not found"), "{stderr}");
}

/// Without the feature paging, each list is one request, as upstream's one
/// `kubectl get`: a chunk size set is said to be ignored, never used.
#[test]
fn a_host_without_paging_asks_each_list_once_and_says_the_chunk_size_is_ignored() {
    let mut sandbox = red_sandbox();
    sandbox.set(checker::contract::CHUNK_SIZE_ENV, "500");
    let output = harness(&mut sandbox, "checked");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let paging = scriptgen::render::Feature::Paging;
    let ignored = checker::contract::messages::FEATURE_LEFT_OUT.format(&[
        ("named", &checker::contract::CHUNK_SIZE_ENV),
        ("feature", &paging.name()),
    ]);
    assert_eq!(stderr.matches(&ignored).count(), 1, "{stderr}");
    let one = |list: checker::api::List| list.args(0, None).join(" ");
    assert_eq!(
        sandbox.kubectl_calls(),
        [one(checker::api::PODS), one(checker::api::EVENTS)]
    );
}
