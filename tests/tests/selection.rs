//! kubectl's flags (issue 32): `-n/--namespace`, `-l/--selector`, `-A`,
//! `--exclude-ns +NS`. The corpus cases `selection-*` give the verdicts
//! (golden.rs offline, live.rs through both drivers); this file checks what
//! the replay server was asked (one namespace: that namespace's lists, so a
//! namespace-scoped role is enough; the selector as labelSelector, on the
//! watch too; events never by the pods' labels), the refusals, and the flags
//! that have no environment variable.

use checker::contract::{self, messages, DEADLINE_ENV};
use serde_json::Value;
use verify_pods_tests::corpus::{self, EXPECTED_JSON};
use verify_pods_tests::replay::{KubeEnv, LogEntry, Server, State};
use verify_pods_tests::{checker_command, code, lines_of, run, text, Driver, DRIVERS};

/// The pods and events requests a driver made on `case`, with the case's
/// settings (its namespaces and selector) and `deadline` seconds.
fn requests(case: &str, driver: Driver, deadline: &str) -> (i32, Vec<LogEntry>) {
    let case = corpus::case(case);
    let server = Server::serve(State::from_case_dir(&case.dir).expect("state")).expect("server");
    let env = KubeEnv::for_server(&server).expect("kubeconfig");
    let out = run(driver
        .command(&env)
        .env(DEADLINE_ENV, deadline)
        .envs(case.env()));
    assert!(
        code(&out) == case.expected_exit(),
        "{driver:?}: {}",
        text(&out.stderr)
    );
    let lists = server
        .log()
        .into_iter()
        .filter(|e| e.path.ends_with("/pods") || e.path.ends_with("/events"))
        .collect();
    (code(&out), lists)
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
    let server = Server::serve(State::from_case_dir(&case.dir).expect("state")).expect("server");
    let env = KubeEnv::for_server(&server).expect("kubeconfig");
    let out = run(driver
        .command(&env)
        .env(DEADLINE_ENV, "0")
        .envs(case.env())
        .env(contract::WORKLOADS.env, "true"));
    assert!(
        code(&out) == case.expected_exit(),
        "{driver:?}: {}",
        text(&out.stderr)
    );
    server
        .log()
        .into_iter()
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
