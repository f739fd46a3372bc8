//! generated/verify-pods.sh, run for real: bash, jq, timeout, and a stub
//! kubectl printing recorded documents, compared with the verify-pods
//! checker on the same documents.

use verify_pods_tests::sandbox;

use checker::contract::{self, ARTIFACT_DIR_ENV, DEADLINE_ENV, INTERVAL_ENV, KUBECTL_TIMEOUT_ENV};
use checker::Programs;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::process::Output;
use verify_pods_tests::code;
use verify_pods_tests::sandbox::{checker_offline, sample, without_seconds, Sandbox};
use verify_pods_tests::text;

/// Same stdout, same exit code, and the temporary files are gone.
///
/// Numbers of seconds are compared as `<N>s`: bash measures the wall clock
/// from its first kubectl call like the live checker, so on a loaded machine
/// a run without any retry can end after 1s and say `waited=1s` where the
/// offline checker says 0s. Everything else must match byte for byte.
fn assert_same(bash: &Output, checker: &Output, sandbox: &Sandbox) {
    assert_eq!(
        without_seconds(&text(&bash.stdout)),
        without_seconds(&text(&checker.stdout)),
        "stdout differs; bash stderr:\n{}",
        text(&bash.stderr)
    );
    assert_eq!(code(bash), code(checker), "exit codes differ");
    assert_eq!(sandbox.leftovers(), Vec::<String>::new(), "temp files left");
}

/// A bad-input run: exit 2, no verdict on stdout (at most the start line,
/// printed before the first list; diagnostics go to stderr, like the
/// checker's), stderr says `why`, no temp files left.
fn assert_cannot_observe(bash: &Output, why: &str, sandbox: &Sandbox) {
    let stderr = text(&bash.stderr);
    assert_eq!(code(bash), 2, "stderr:\n{stderr}");
    let (_, start) = checker::Engine::new()
        .expect("programs compile")
        .start_line(0)
        .expect("progress.jq's start line");
    let stdout = text(&bash.stdout);
    assert!(
        stdout.is_empty() || stdout == start + "\n",
        "stdout must hold no more than the start line: {stdout:?}"
    );
    assert!(stderr.contains(why), "stderr lacks {why:?}:\n{stderr}");
    assert_eq!(sandbox.leftovers(), Vec::<String>::new(), "temp files left");
}

fn offline_sandbox(pods: &Path, events: &Path) -> Sandbox {
    let mut sandbox = Sandbox::new();
    sandbox.pods(&[pods]).events(events).set(DEADLINE_ENV, "0");
    sandbox
}

fn write_json(sandbox: &Sandbox, name: &str, value: &Value) -> std::path::PathBuf {
    sandbox.file(name, &serde_json::to_string_pretty(value).unwrap())
}

fn empty_list() -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": []})
}

#[test]
fn sample_red_run_prints_what_the_checker_prints() {
    let (pods, events) = (sample("pods.json"), sample("events.json"));
    let sandbox = offline_sandbox(&pods, &events);
    let bash = sandbox.run_wrapper();
    let checker = checker_offline(&pods, Some(&events), &[]);
    assert_eq!(code(&checker), 1, "the sample is a red run");
    assert_same(&bash, &checker, &sandbox);
    // One snapshot and one events query, nothing else.
    assert_eq!(
        sandbox.kubectl_calls(),
        [
            verify_pods_tests::first_page(checker::api::PODS),
            verify_pods_tests::first_page(checker::api::EVENTS)
        ]
    );
}

/// The wrapper (no settling) and the offline checker on the same pods and
/// events documents, written into `sandbox`: (bash, checker).
fn both_on(sandbox: &mut Sandbox, pods: &Value, events: &Value) -> (Output, Output) {
    let pods = write_json(sandbox, "pods.json", pods);
    let events = write_json(sandbox, "events.json", events);
    sandbox
        .pods(&[&pods])
        .events(&events)
        .set(DEADLINE_ENV, "0");
    let checker = checker_offline(&pods, Some(&events), &[]);
    (sandbox.run_wrapper(), checker)
}

#[test]
fn zero_pods_is_empty_and_passes() {
    let mut sandbox = Sandbox::new();
    let (bash, checker) = both_on(&mut sandbox, &empty_list(), &empty_list());
    assert_eq!(code(&checker), 0);
    assert_same(&bash, &checker, &sandbox);
    assert_eq!(sandbox.kubectl_calls().len(), 1, "no events query");
}

#[test]
fn pods_only_in_excluded_namespaces_are_empty_and_pass() {
    let excluded = Programs::default_excluded_namespaces();
    let items: Vec<Value> = excluded
        .iter()
        .map(|ns| {
            json!({"metadata": {"namespace": ns, "name": "stuck"},
                   "spec": {}, "status": {"phase": "Pending"}})
        })
        .collect();
    let pods = json!({"kind": "List", "items": items});
    let mut sandbox = Sandbox::new();
    let (bash, checker) = both_on(&mut sandbox, &pods, &empty_list());
    assert_eq!(code(&checker), 0);
    assert_same(&bash, &checker, &sandbox);
}

#[test]
fn failing_kubectl_is_exit_2_even_with_a_valid_partial_list() {
    let mut sandbox = offline_sandbox(&sample("pods.json"), &sample("events.json"));
    let why = "the server has asked for the client to provide credentials";
    sandbox
        .set("STUB_PODS_EXIT", "1")
        .set("STUB_STDERR", &format!("error: {why}"));
    let bash = sandbox.run_wrapper();
    assert_cannot_observe(&bash, why, &sandbox);
    // The pods list, then the one call that names the context kubectl
    // used: no retry, no events.
    let calls = sandbox.kubectl_calls();
    let config = calls.iter().filter(|c| c.starts_with("config ")).count();
    assert_eq!((calls.len(), config), (2, 1), "{calls:?}");
}

#[test]
fn missing_kubectl_is_exit_2() {
    let mut sandbox = offline_sandbox(&sample("pods.json"), &sample("events.json"));
    sandbox.without_kubectl();
    let bash = sandbox.run_wrapper();
    assert_cannot_observe(&bash, "kubectl", &sandbox);
}

#[test]
fn hanging_kubectl_is_killed_and_exit_2() {
    let mut sandbox = offline_sandbox(&sample("pods.json"), &sample("events.json"));
    sandbox
        .set("STUB_SLEEP", "30")
        .set(KUBECTL_TIMEOUT_ENV, "1");
    let started = std::time::Instant::now();
    let bash = sandbox.run_wrapper();
    assert!(started.elapsed().as_secs() < 20, "timeout did not fire");
    assert_cannot_observe(&bash, "1s", &sandbox);
}

#[test]
fn invalid_json_and_documents_without_items_are_exit_2() {
    for (name, document) in [
        ("truncated.json", "{\"kind\": \"List\", \"items\": ["),
        ("not-json.json", "No resources found\n"),
        ("no-items.json", "{\"kind\": \"List\"}"),
        ("array.json", "[]"),
        (
            "two-lists.json",
            "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}\n{\"metadata\":{\"resourceVersion\":\"2\"},\"items\":[]}\n",
        ),
        ("empty.json", ""),
    ] {
        let mut sandbox = Sandbox::new();
        let pods = sandbox.file(name, document);
        sandbox.pods(&[&pods]).events(&sample("events.json"));
        let bash = sandbox.run_wrapper();
        let command = format!("kubectl {}", verify_pods_tests::first_page(checker::api::PODS));
        assert_cannot_observe(&bash, &command, &sandbox);
        let checker = checker_offline(&pods, None, &[]);
        assert_eq!(code(&checker), 2, "{name}: the checker agrees");
    }
}

#[test]
fn bad_numbers_in_the_environment_are_exit_2() {
    for env in [DEADLINE_ENV, INTERVAL_ENV, KUBECTL_TIMEOUT_ENV] {
        for bad in ["abc", "-1", "+1", " 1", "1s", "0x10", "1.5", "٣", "1e3"] {
            let mut sandbox = offline_sandbox(&sample("pods.json"), &sample("events.json"));
            sandbox.set(env, bad);
            let bash = sandbox.run_wrapper();
            assert_cannot_observe(&bash, env, &sandbox);
            // Issue 31: upstream's start line first, whatever the settings hold.
            assert!(
                text(&bash.stdout).starts_with("Verifying pod scheduling...\n"),
                "{env}={bad:?}"
            );
            assert!(
                sandbox.kubectl_calls().is_empty(),
                "{env}={bad:?}: validated first"
            );
        }
    }
    for env in [INTERVAL_ENV, KUBECTL_TIMEOUT_ENV] {
        let mut sandbox = offline_sandbox(&sample("pods.json"), &sample("events.json"));
        sandbox.set(env, "0");
        assert_cannot_observe(&sandbox.run_wrapper(), env, &sandbox);
    }
}

/// Issue 31: a knob set but empty means its default, as upstream reads it
/// (`${VAR:-60}`), in both drivers.
#[test]
fn an_empty_knob_means_its_default() {
    for env in [DEADLINE_ENV, INTERVAL_ENV, KUBECTL_TIMEOUT_ENV] {
        let mut sandbox = Sandbox::new();
        let bound = bound_sample(&sandbox);
        let events = write_json(&sandbox, "events.json", &empty_list());
        sandbox.pods(&[&bound]).events(&events).set(env, "");
        let bash = sandbox.run_wrapper();
        assert_eq!(code(&bash), 0, "{env}=: {}", text(&bash.stderr));
        let checker = verify_pods_tests::checker_command()
            .args(["check", "--snapshot"])
            .arg(&bound)
            .env(env, "")
            .output()
            .unwrap();
        assert_eq!(code(&checker), 0, "{env}=: {}", text(&checker.stderr));
    }
}

#[test]
fn numbers_are_base_10_even_with_leading_zeros() {
    // `08` and `09` are invalid octal in bash arithmetic; the checker reads
    // them as 8 and 9. A passing snapshot never sleeps, so this is quick.
    let mut sandbox = Sandbox::new();
    let bound = bound_sample(&sandbox);
    let events = write_json(&sandbox, "events.json", &empty_list());
    sandbox
        .pods(&[&bound])
        .events(&events)
        .set(DEADLINE_ENV, "00")
        .set(INTERVAL_ENV, "08")
        .set(KUBECTL_TIMEOUT_ENV, "09");
    let bash = sandbox.run_wrapper();
    let checker = checker_offline(&bound, Some(&events), &[]);
    assert_eq!(code(&checker), 0);
    assert_same(&bash, &checker, &sandbox);
}

#[test]
fn events_that_cannot_be_collected_say_not_collected() {
    // The checker without --events has events: null; a failing or garbled
    // events query in bash must give the same text, and a warning on stderr.
    let pods = sample("pods.json");
    let checker = checker_offline(&pods, None, &[]);
    for broken in ["kubectl fails", "not JSON", "two lists"] {
        let mut sandbox = offline_sandbox(&pods, &sample("events.json"));
        match broken {
            "kubectl fails" => sandbox.set("STUB_EVENTS_EXIT", "1"),
            "not JSON" => {
                let garbage = sandbox.file("garbage.json", "No resources found\n");
                sandbox.events(&garbage)
            }
            _ => {
                // Pages of two resourceVersions: events.jq refuses them.
                let twice = sandbox.file(
                    "twice.json",
                    "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}\n{\"metadata\":{\"resourceVersion\":\"2\"},\"items\":[]}\n",
                );
                sandbox.events(&twice)
            }
        };
        let bash = sandbox.run_wrapper();
        assert_same(&bash, &checker, &sandbox);
        verify_pods_tests::assert_stderr_says(&bash, "FailedScheduling");
    }
}

/// Events from kubectl are diagnostics: a document without items leaves the
/// pods verdict standing ("not collected", a warning on stderr); the same
/// document given to the checker as a file is bad input.
#[test]
fn an_events_document_without_items_is_not_collected() {
    let pods = sample("pods.json");
    let mut sandbox = Sandbox::new();
    let events = sandbox.file("events.json", "{\"kind\": \"List\"}");
    sandbox
        .pods(&[&pods])
        .events(&events)
        .set(DEADLINE_ENV, "0");
    let bash = sandbox.run_wrapper();
    let checker_live_text = checker_offline(&pods, None, &[]);
    assert_eq!(code(&bash), 1, "{}", text(&bash.stderr));
    assert_eq!(text(&bash.stdout), text(&checker_live_text.stdout));
    assert!(text(&bash.stderr).contains("cannot collect FailedScheduling events"));
    assert_eq!(code(&checker_offline(&pods, Some(&events), &[])), 2);
}

#[test]
fn artifacts_on_failure_match_the_checkers() {
    let (pods, events) = (sample("pods.json"), sample("events.json"));
    let mut sandbox = offline_sandbox(&pods, &events);
    let bash_dir = sandbox.path("artifacts/bash");
    sandbox.set(ARTIFACT_DIR_ENV, bash_dir.to_str().unwrap());
    let bash = sandbox.run_wrapper();
    let checker_dir = sandbox.path("artifacts/checker");
    let checker = checker_offline(
        &pods,
        Some(&events),
        &["--save-dir", checker_dir.to_str().unwrap()],
    );
    assert_same(&bash, &checker, &sandbox);
    for name in ["pods.json", "events.json", "report.json"] {
        let saved = fs::read(bash_dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(saved, fs::read(checker_dir.join(name)).unwrap(), "{name}");
    }
    assert_eq!(
        fs::read(bash_dir.join("pods.json")).unwrap(),
        fs::read(&pods).unwrap()
    );
}

#[test]
fn no_artifacts_on_a_pass() {
    let mut sandbox = Sandbox::new();
    let bound = bound_sample(&sandbox);
    let events = write_json(&sandbox, "events.json", &empty_list());
    let dir = sandbox.path("artifacts");
    sandbox
        .pods(&[&bound])
        .events(&events)
        .set(DEADLINE_ENV, "0")
        .set(ARTIFACT_DIR_ENV, dir.to_str().unwrap());
    let bash = sandbox.run_wrapper();
    assert_eq!(code(&bash), 0, "stderr: {}", text(&bash.stderr));
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
}

/// samples/pods.json with every pod bound to a node.
fn bound_sample(sandbox: &Sandbox) -> std::path::PathBuf {
    let mut doc: Value = serde_json::from_slice(&fs::read(sample("pods.json")).unwrap()).unwrap();
    for pod in doc["items"].as_array_mut().unwrap() {
        let spec = pod["spec"].as_object_mut().unwrap();
        let bound = spec
            .get("nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if !bound {
            spec.insert("nodeName".into(), json!("kwok-node-0"));
        }
    }
    write_json(sandbox, "bound.json", &doc)
}

#[test]
fn settles_when_the_pods_get_bound() {
    // First snapshot: a pod unscheduled; second: all bound. The checker,
    // live against the same stub, must print the same lines.
    let mut sandbox = Sandbox::new();
    let (red, events) = (sample("pods.json"), sample("events.json"));
    let bound = bound_sample(&sandbox);
    sandbox
        .pods(&[&red, &bound])
        .events(&events)
        .set(DEADLINE_ENV, "3")
        .set(INTERVAL_ENV, "1");
    let bash = sandbox.run_wrapper();
    assert_eq!(code(&bash), 0, "stderr: {}", text(&bash.stderr));
    let pods_query = verify_pods_tests::first_page(checker::api::PODS);
    assert_eq!(
        sandbox.kubectl_calls(),
        [pods_query.clone(), pods_query.clone()]
    );

    // The checker live, against the same stub from its first snapshot.
    fs::remove_file(sandbox.path("kubectl.log")).unwrap();
    let mut cmd = sandbox.command(&sandbox::verify_pods_bin());
    cmd.args(["check", "--kubectl"])
        .arg(sandbox.bin().join("kubectl"));
    let checker = verify_pods_tests::run(&mut cmd);
    assert_eq!(code(&checker), 0, "stderr: {}", text(&checker.stderr));
    assert_eq!(sandbox.kubectl_calls(), [pods_query.clone(), pods_query]);
    assert_same(&bash, &checker, &sandbox);
}

#[test]
fn seconds_are_masked_and_nothing_else() {
    assert_eq!(
        without_seconds("a 10s b 3 c 2s; 4sx 5"),
        "a <N>s b 3 c <N>s; 4sx 5"
    );
}

#[test]
fn keeps_failing_until_the_deadline() {
    let mut sandbox = Sandbox::new();
    let (red, events) = (sample("pods.json"), sample("events.json"));
    sandbox
        .pods(&[&red])
        .events(&events)
        .set(DEADLINE_ENV, "2")
        .set(INTERVAL_ENV, "1");
    let started = std::time::Instant::now();
    let bash = sandbox.run_wrapper();
    let took = started.elapsed().as_secs_f64();
    assert_eq!(code(&bash), 1, "stderr: {}", text(&bash.stderr));
    assert!(took >= 2.0, "gave up after {took}s, before the 2s deadline");
    let pods_calls = sandbox
        .kubectl_calls()
        .iter()
        .filter(|c| **c == verify_pods_tests::first_page(checker::api::PODS))
        .count();
    // One snapshot at 0s, one after each 1s sleep while under 2s: 3 on an
    // idle machine, 2 when attempts are slow; never more than 3.
    assert!(
        (2..=3).contains(&pods_calls),
        "{pods_calls} snapshots in 2s at 1s"
    );
    assert_eq!(sandbox.leftovers(), Vec::<String>::new());
}

#[test]
fn arguments_are_refused() {
    let sandbox = offline_sandbox(&sample("pods.json"), &sample("events.json"));
    let bash = verify_pods_tests::run(sandbox.command(&sandbox::wrapper()).arg("--deadline"));
    assert_cannot_observe(&bash, "usage", &sandbox);
}

/// `command` run on a pseudo-terminal by util-linux `script`; its output.
fn on_a_terminal(sandbox: &Sandbox, command: &str) -> String {
    let mut cmd = sandbox.command(std::path::Path::new("/usr/bin/script"));
    cmd.args(["-qec", command, "/dev/null"])
        .env("SHELL", sandbox.bin().join("bash"));
    let output = verify_pods_tests::run(&mut cmd);
    text(&output.stdout)
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let (pods, events) = (sample("pods.json"), sample("events.json"));
    let checker_command = format!(
        "{} check --snapshot {} --events {}",
        sandbox::verify_pods_bin().display(),
        pods.display(),
        events.display()
    );
    for no_color in ["", "1"] {
        let mut sandbox = offline_sandbox(&pods, &events);
        sandbox.set("NO_COLOR", no_color);
        let bash = on_a_terminal(&sandbox, &sandbox::wrapper().display().to_string());
        let checker = on_a_terminal(&sandbox, &checker_command);
        assert_eq!(
            without_seconds(&bash),
            without_seconds(&checker),
            "NO_COLOR={no_color:?}"
        );
        assert_eq!(
            bash.contains('\x1b'),
            no_color.is_empty(),
            "NO_COLOR={no_color:?}: {bash:?}"
        );
    }
}

/// Issue 12, item 3: a verdict that cannot be printed (stdout on a full
/// disk) is not a success, in the bash as in the checker: exit 2.
#[test]
fn a_full_stdout_exits_2_in_both_drivers() {
    let (pods, events) = (sample("pods.json"), sample("events.json"));
    let sandbox = offline_sandbox(&pods, &events);
    let full = || {
        fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let bash = verify_pods_tests::run(sandbox.command(&sandbox::wrapper()).stdout(full()));
    let mut checker = sandbox.command(&sandbox::verify_pods_bin());
    checker
        .args(["check", "--snapshot"])
        .arg(&pods)
        .arg("--events")
        .arg(&events)
        .stdout(full());
    let checker = verify_pods_tests::run(&mut checker);
    assert_eq!(code(&checker), 2, "{}", text(&checker.stderr));
    assert_eq!(code(&bash), 2, "{}", text(&bash.stderr));
    assert!(text(&bash.stderr).contains("verify_pods: cannot print the result"));
    assert_eq!(sandbox.leftovers(), Vec::<String>::new(), "temp files left");
}

// Bad knob values and an empty artifact directory: tests/contract.rs runs
// them through both drivers with the rest of the contract's bad inputs.

/// Issue 12, item 4: good values at the limits pass both drivers alike:
/// leading zeros do not count against the digits.
#[test]
fn both_drivers_accept_the_same_limits() {
    let mut sandbox = Sandbox::new();
    let bound = bound_sample(&sandbox);
    let events = write_json(&sandbox, "events.json", &empty_list());
    sandbox.pods(&[&bound]).events(&events);
    for knob in contract::KNOBS {
        let longest = format!("0{}", "9".repeat(knob.max_digits));
        sandbox.set(knob.env, &longest);
    }
    // The stub answers the first page at that chunk size.
    let chunk_size = "9".repeat(contract::CHUNK_SIZE.max_digits).parse().unwrap();
    for (stub, list) in [
        ("STUB_PODS_ARGS", checker::api::PODS),
        ("STUB_EVENTS_ARGS", checker::api::EVENTS),
    ] {
        sandbox.set(stub, &list.args(chunk_size, None).join(" "));
    }
    let bash = sandbox.run_wrapper();
    let checker = checker_offline(&bound, Some(&events), &[]);
    let mut live = sandbox.command(&sandbox::verify_pods_bin());
    live.args(["check", "--kubectl"])
        .arg(sandbox.bin().join("kubectl"));
    let live = verify_pods_tests::run(&mut live);
    assert_eq!(code(&bash), 0, "{}", text(&bash.stderr));
    assert_eq!(code(&live), 0, "{}", text(&live.stderr));
    assert_same(&bash, &checker, &sandbox);
}
