//! kubectl's flags (issue 32): `-n/--namespace`, `-l/--selector`, `-A`,
//! `--exclude-ns +NS`. The corpus cases `selection-*` give the verdicts
//! (golden.rs offline, live.rs through both drivers); this file checks what
//! the replay server was asked (one namespace: that namespace's lists, so a
//! namespace-scoped role is enough; the selector as labelSelector, on the
//! watch too; events never by the pods' labels), the refusals, and the flags
//! that have no environment variable.

use checker::contract::{self, messages, DEADLINE_ENV};
use serde_json::Value;
use std::process::Output;
use verify_pods_tests::corpus::{self, Case, EXPECTED_JSON};
use verify_pods_tests::replay::{KubeEnv, LogEntry, Server, State};
use verify_pods_tests::{checker_command, code, lines_of, run, text, Driver, DRIVERS};

/// One driver's run on `case`'s cluster with the case's settings and
/// `extra` on top: its output, and every request the server saw.
fn run_on(case: &Case, driver: Driver, extra: &[(&str, &str)]) -> (Output, Vec<LogEntry>) {
    let server = Server::serve(State::from_case_dir(&case.dir).expect("state")).expect("server");
    let env = KubeEnv::for_server(&server).expect("kubeconfig");
    let out = run(driver
        .command(&env)
        .envs(case.env())
        .envs(extra.iter().copied()));
    (out, server.log())
}

/// The pods and events requests of a server's log.
fn pods_and_events(log: Vec<LogEntry>) -> Vec<LogEntry> {
    log.into_iter()
        .filter(|e| e.path.ends_with("/pods") || e.path.ends_with("/events"))
        .collect()
}

/// Asserts that `driver` ended its run on `case` with the case's golden
/// exit code.
fn assert_golden_exit(case: &Case, driver: Driver, out: &Output) {
    assert!(
        code(out) == case.expected_exit(),
        "{driver:?}: {}",
        text(&out.stderr)
    );
}

/// The pods and events requests a driver made on `case`, with the case's
/// settings (its namespaces and selector) and `deadline` seconds.
fn requests(case: &str, driver: Driver, deadline: &str) -> (i32, Vec<LogEntry>) {
    let case = corpus::case(case);
    let (out, log) = run_on(&case, driver, &[(DEADLINE_ENV, deadline)]);
    assert_golden_exit(&case, driver, &out);
    (code(&out), pods_and_events(log))
}

#[test]
fn one_namespace_is_read_from_that_namespace_alone() {
    for driver in DRIVERS {
        let (_, lists) = requests("selection-one-namespace", driver, "0");
        assert!(lists.iter().any(|e| e.path.ends_with("/pods")), "{lists:?}");
        assert!(
            lists.iter().any(|e| e.path.ends_with("/events")),
            "{lists:?}"
        );
        for entry in &lists {
            assert!(
                entry.path.starts_with("/api/v1/namespaces/training/"),
                "{driver:?} asked {} ?{}",
                entry.path,
                entry.query
            );
        }
    }
}

#[test]
fn the_selector_goes_to_the_server_and_the_watch_but_not_to_the_events() {
    let selector = corpus::case("selection-namespaces-and-selector").selector();
    let sent = format!("labelSelector={}", checker::api::url_encode(&selector));
    // The checker settles on a watch (deadline 1 s: its pods are only
    // unscheduled); the bash polls.
    for (driver, deadline) in [(Driver::Checker, "1"), (Driver::Wrapper, "0")] {
        let (_, lists) = requests("selection-namespaces-and-selector", driver, deadline);
        let pods: Vec<&LogEntry> = lists.iter().filter(|e| e.path.ends_with("/pods")).collect();
        assert!(!pods.is_empty(), "{driver:?}: {lists:?}");
        for entry in &pods {
            // Two namespaces: the cluster's list, selected by report.jq.
            assert_eq!(entry.path, "/api/v1/pods", "{driver:?}");
            assert!(
                entry.query.split('&').any(|p| p == sent),
                "{driver:?}: {}",
                entry.query
            );
        }
        if driver == Driver::Checker {
            assert!(
                pods.iter().any(|e| e.query.contains("watch=1")),
                "no watch: {pods:?}"
            );
        }
        for entry in lists.iter().filter(|e| e.path.ends_with("/events")) {
            assert!(
                !entry.query.contains("labelSelector"),
                "{driver:?}: {}",
                entry.query
            );
        }
    }
}

#[test]
fn a_selection_report_jq_refuses_ends_the_check_before_any_list() {
    // (setting, value, what report.jq says): each refused by both
    // drivers, exit 2, one line naming the value.
    let (sel, ns, ex) = (
        contract::SELECTOR,
        contract::NAMESPACES,
        contract::EXCLUDE_NAMESPACES,
    );
    let refused = [
        (
            sel,
            "env in (prod,dev)",
            "label selector term \"env in (prod\"",
        ),
        (sel, "app = web", "label selector term \"app = web\""),
        (sel, "=web", "label selector term \"=web\""),
        (sel, "app=we$b", "label selector term \"app=we$b\""),
        (sel, "a/b=c/d", "label selector term \"a/b=c/d\""),
        (ns, "Training", "namespace \"Training\""),
        (ns, "a/b", "namespace \"a/b\""),
        (ns, "ok,-a", "namespace \"-a\""),
        (ex, "Kube-System", "excluded namespace \"Kube-System\""),
        (ex, "+web,b_c", "excluded namespace \"b_c\""),
    ];
    // No server: a list would fail otherwise (kubectl's words, not these).
    let env = KubeEnv::new("http://127.0.0.1:9").expect("kubeconfig");
    for (setting, value, said) in refused {
        for driver in DRIVERS {
            let out = run(driver.command(&env).env(setting.env, value));
            let stderr = text(&out.stderr);
            assert_eq!(code(&out), 2, "{driver:?} {value:?}: {stderr}");
            assert_eq!(
                lines_of(&stderr, &messages::SELECTION_INVALID),
                1,
                "{driver:?} {value:?}: {stderr}"
            );
            assert!(stderr.contains(said), "{driver:?}: {stderr}");
            assert!(!stderr.contains("kubectl"), "{driver:?} listed: {stderr}");
        }
    }
}

#[test]
fn exclude_ns_plus_adds_to_the_default_list_and_all_namespaces_is_accepted() {
    let case = corpus::case("mixed-everything");
    let golden: Value = serde_json::from_slice(&case.read(EXPECTED_JSON)).expect("expected.json");
    let training = golden["namespaces"]
        .as_array()
        .expect("namespaces")
        .iter()
        .find(|n| n["namespace"] == "training")
        .and_then(|n| n["pods"].as_u64())
        .expect("the golden counts training's pods");
    let total = |args: &[&str]| -> u64 {
        let out = run(checker_command()
            .args(["check", "--format", "json", "--snapshot"])
            .arg(case.pods())
            .args(args));
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{args:?}: {}", text(&out.stderr)));
        result["total"].as_u64().expect("total")
    };
    let golden_total = golden["total"].as_u64().expect("total");
    assert_eq!(
        total(&["--exclude-ns", "+training"]),
        golden_total - training
    );
    // Without the +, the list is replaced: kube-system's pods count again.
    assert!(total(&["--exclude-ns", "training"]) > golden_total - training);
    assert_eq!(total(&["-A"]), golden_total);
    let both = run(checker_command()
        .args(["check", "-A", "-n", "training", "--snapshot"])
        .arg(case.pods()));
    assert_eq!(code(&both), 2, "-A with -n: {}", text(&both.stderr));
}

/// The apps/v1 requests a driver made on `case` with the workloads read
/// (`KWOK_VERIFY_PODS_WORKLOADS=true`, over the case's own setting).
fn workloads_requests(case: &str, driver: Driver) -> Vec<LogEntry> {
    let case = corpus::case(case);
    let read_workloads = [(DEADLINE_ENV, "0"), (contract::WORKLOADS.env, "true")];
    let (out, log) = run_on(&case, driver, &read_workloads);
    assert_golden_exit(&case, driver, &out);
    log.into_iter()
        .filter(|e| e.path.starts_with("/apis/"))
        .collect()
}

#[test]
fn workloads_follow_one_namespace_and_are_not_read_with_a_selector() {
    for driver in DRIVERS {
        // One namespace: its own four lists, as for the pods.
        let asked = workloads_requests("selection-one-namespace", driver);
        // (The checker reads the four at once: in any order.)
        let mut paths: Vec<&str> = asked.iter().map(|e| e.path.as_str()).collect();
        paths.sort();
        let mut wanted: Vec<String> = checker::api::WORKLOADS
            .iter()
            .map(|list| list.within(&["training".to_owned()], "").path.to_owned())
            .collect();
        wanted.sort();
        assert_eq!(paths, wanted, "{driver:?}");
        assert!(
            paths
                .iter()
                .all(|p| p.starts_with("/apis/apps/v1/namespaces/training/")),
            "{paths:?}"
        );
        // A selector: a workload's labels do not say which pods it will
        // create, so none is read (and `missing` stays null).
        let asked = workloads_requests("selection-namespaces-and-selector", driver);
        assert!(asked.is_empty(), "{driver:?}: {asked:?}");
    }
}

/// One driver's run on `case`'s cluster with the case's settings (and
/// `extra` on top), deadline 0: (exit code, stdout, stderr, the pods and
/// events requests the server saw).
fn run_case(
    case: &str,
    driver: Driver,
    extra: &[(&str, &str)],
) -> (i32, String, String, Vec<LogEntry>) {
    let at_once = [&[(DEADLINE_ENV, "0")], extra].concat();
    let (out, log) = run_on(&corpus::case(case), driver, &at_once);
    let lists = pods_and_events(log);
    (code(&out), text(&out.stdout), text(&out.stderr), lists)
}

#[test]
fn a_selection_that_selects_no_pod_fails_in_one_line_through_the_real_kubectl() {
    // The model's goldens (make_corpus.py): fail, exit 1, never "empty".
    for name in [
        "selection-no-such-namespace",
        "selection-selector-matches-nothing",
    ] {
        let case = corpus::case(name);
        let golden: Value =
            serde_json::from_slice(&case.read(EXPECTED_JSON)).expect("expected.json");
        assert_eq!(
            (golden["verdict"].as_str(), golden["total"].as_u64()),
            (Some("fail"), Some(0)),
            "{name}"
        );
        // The selection as the user wrote it, named on one line.
        let named = match case.selector().as_str() {
            "" => case.namespaces(),
            selector => selector.to_owned(),
        };
        for driver in DRIVERS {
            let (code, stdout, stderr, lists) = run_case(name, driver, &[]);
            assert_eq!(code, 1, "{driver:?} {name}: {stdout}{stderr}");
            assert_eq!(
                stdout.lines().filter(|l| l.contains(&named)).count(),
                1,
                "{driver:?} {name}: {stdout}"
            );
            assert!(!stdout.contains("bundle may be empty"), "{stdout}");
            // One namespace: that namespace's list, as kubectl -n asks.
            if !case.namespaces().is_empty() {
                for entry in lists.iter().filter(|e| e.path.ends_with("/pods")) {
                    let scope = format!("/api/v1/namespaces/{}/", case.namespaces());
                    assert!(entry.path.starts_with(&scope), "{driver:?}: {}", entry.path);
                }
            }
        }
    }
    // Without a selection, an empty cluster keeps upstream's warning, exit 0.
    for driver in DRIVERS {
        let (code, stdout, stderr, _) = run_case("empty-list", driver, &[]);
        assert_eq!(code, 0, "{driver:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("bundle may be empty"),
            "{driver:?}: {stdout}"
        );
    }
}

#[test]
fn a_namespace_both_selected_and_named_excluded_is_refused_by_both_drivers() {
    let (ns, ex) = (contract::NAMESPACES.env, contract::EXCLUDE_NAMESPACES.env);
    // No server: a list would fail otherwise (kubectl's words, not these).
    let env = KubeEnv::new("http://127.0.0.1:9").expect("kubeconfig");
    for (namespaces, excluded) in [
        ("kube-system", "+kube-system"),
        ("web,training", "kube-system,training"),
    ] {
        let mut said = Vec::new();
        for driver in DRIVERS {
            let out = run(driver.command(&env).env(ns, namespaces).env(ex, excluded));
            let stderr = text(&out.stderr);
            assert_eq!(code(&out), 2, "{driver:?} {namespaces:?}: {stderr}");
            let lines: Vec<&str> = stderr
                .lines()
                .filter(|l| lines_of(l, &messages::NAMESPACE_SELECTED_AND_EXCLUDED) == 1)
                .collect();
            assert_eq!(lines.len(), 1, "{driver:?}: {stderr}");
            assert!(!stderr.contains("kubectl"), "{driver:?} listed: {stderr}");
            let prefix = match driver {
                Driver::Checker => contract::CHECKER_PREFIX.error,
                _ => contract::BASH_PREFIX.error,
            };
            said.push(lines[0].trim_start_matches(prefix).to_owned());
        }
        assert_eq!(said[0], said[1], "the drivers word it alike");
        assert!(said[0].contains(ns) && said[0].contains(ex), "{}", said[0]);
    }
}

#[test]
fn a_selector_says_once_that_pods_not_yet_created_are_not_checked() {
    let selector = corpus::case("selection-namespaces-and-selector").selector();
    let sel = contract::SELECTOR.env;
    let mut said = Vec::new();
    for driver in DRIVERS {
        let (_, _, stderr, _) =
            run_case("workloads-statefulset-1-of-3", driver, &[(sel, &selector)]);
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| lines_of(l, &messages::SELECTOR_NO_WORKLOADS) == 1)
            .collect();
        assert_eq!(lines.len(), 1, "{driver:?}: {stderr}");
        let prefix = match driver {
            Driver::Checker => contract::CHECKER_PREFIX.warning,
            _ => contract::BASH_PREFIX.warning,
        };
        said.push(lines[0].trim_start_matches(prefix).to_owned());
        // Not read on purpose (--workloads false): nothing to warn about.
        let off = [(sel, selector.as_str()), (contract::WORKLOADS.env, "false")];
        let (_, _, stderr, _) = run_case("workloads-statefulset-1-of-3", driver, &off);
        assert_eq!(
            lines_of(&stderr, &messages::SELECTOR_NO_WORKLOADS),
            0,
            "{driver:?}: {stderr}"
        );
    }
    assert_eq!(said[0], said[1], "the same bytes in both drivers");
}

#[test]
fn a_saved_dir_replays_the_live_verdict_workloads_included() {
    // Live through the real kubectl: a StatefulSet misses 2 pods, fail.
    let case = corpus::case("workloads-statefulset-1-of-3");
    let saved = tempfile::tempdir().expect("tempdir");
    let dir = saved.path().join("red");
    let (live_code, stdout, stderr, _) = run_case(
        &case.name,
        Driver::Checker,
        &[(contract::ARTIFACT_DIR_ENV, dir.to_str().expect("utf-8"))],
    );
    assert_eq!(live_code, 1, "{stdout}{stderr}");
    assert!(dir.join("workloads.json").is_file(), "{stderr}");
    let live: Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report.json"))
            .expect("report.json");
    let replay = |snapshot: &std::path::Path| {
        let out = run(checker_command()
            .args(["check", "--format", "json", "--snapshot"])
            .arg(snapshot)
            .envs(
                case.env()
                    .into_iter()
                    .filter(|(k, _)| *k != contract::WORKLOADS.env),
            ));
        let result: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
        (code(&out), result)
    };
    // The directory replays whole: the live verdict, its missing pods.
    let (replayed, result) = replay(&dir);
    assert_eq!(replayed, live_code);
    for key in [
        "verdict",
        "missing",
        "missing_workloads",
        "total",
        "unscheduled",
    ] {
        assert_eq!(result[key], live[key], "{key}");
    }
    // Its pods.json alone checks no workloads (`missing` null) and passes:
    // the gap the directory closes.
    let (alone, result) = replay(&dir.join("pods.json"));
    assert_eq!((alone, &result["missing"]), (0, &Value::Null), "{result}");
}
