//! Pods not yet created (issue 30), live through the real kubectl against
//! the replay server, both drivers: a pass waits for every pod the
//! workloads want, read at the pods list's resourceVersion; a 403 on a
//! workload list is one warning, never exit 2; a compacted revision (410)
//! lists the pods again.

use checker::contract::{messages, ARTIFACT_DIR_ENV, DEADLINE_ENV, INTERVAL_ENV};
use serde_json::{json, Value};
use std::process::Output;
use std::time::{Duration, Instant};
use verify_pods_tests::driver::{Driver, DRIVERS};
use verify_pods_tests::replay::fixtures::Pod;
use verify_pods_tests::replay::{
    Advance, Fault, FaultRule, KubeEnv, LogEntry, Server, State, Target,
};
use verify_pods_tests::{
    assert_exit, assert_lines_of, checker_command, lines_of, run, shown, text,
};

/// StatefulSet data/nats: 3 replicas, observed.
fn nats() -> Value {
    json!({"kind": "StatefulSet", "apiVersion": "apps/v1",
           "metadata": {"name": "nats", "namespace": "data", "uid": "sts-nats", "generation": 1},
           "spec": {"replicas": 3}, "status": {"observedGeneration": 1, "replicas": 3}})
}

/// nats-I, running, owned by the StatefulSet.
fn nats_pod(i: usize) -> Value {
    let mut pod = Pod::running("data", &format!("nats-{i}"), "kwok-node-0").to_json();
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "StatefulSet",
        "name": "nats", "uid": "sts-nats", "controller": true}]);
    pod
}

/// The cluster with the first `n` pods of nats created, all scheduled.
fn created(n: usize) -> State {
    State::new((0..n).map(nats_pod).collect(), vec![]).with_workloads(vec![nats()])
}

/// The cluster with every pod of nats created, the first unschedulable.
fn first_stuck() -> State {
    let mut stuck = Pod::unschedulable("data", "nats-0").to_json();
    stuck["metadata"]["ownerReferences"] = nats_pod(0)["metadata"]["ownerReferences"].clone();
    State::new(vec![stuck, nats_pod(1), nats_pod(2)], vec![]).with_workloads(vec![nats()])
}

fn check(server: &Server, driver: Driver, deadline: u64) -> (Output, Duration) {
    check_saving(server, driver, deadline, None)
}

fn check_saving(
    server: &Server,
    driver: Driver,
    deadline: u64,
    save_dir: Option<&std::path::Path>,
) -> (Output, Duration) {
    let env = KubeEnv::for_server(server).expect("kube env");
    let started = Instant::now();
    let mut command = driver.command(&env);
    command
        .env(DEADLINE_ENV, deadline.to_string())
        .env(INTERVAL_ENV, "1");
    if let Some(dir) = save_dir {
        command.env(ARTIFACT_DIR_ENV, dir);
    }
    let output = run(&mut command);
    (output, started.elapsed())
}

/// The StatefulSet's pods appear one a second (an OrderedReady StatefulSet,
/// a controller-manager at its QPS): every state is all scheduled, and only
/// the last has every pod the StatefulSet wants. Without the workloads both
/// drivers pass at once, on the first state.
#[test]
fn a_pass_waits_for_pods_created_over_several_seconds() {
    let period = Duration::from_millis(1500);
    for driver in DRIVERS {
        let server = Server::builder()
            .states((1..=3).map(created))
            .advance(Advance::Every(period))
            .start()
            .expect("server");
        let (output, took) = check(&server, driver, 20);
        let stdout = text(&output.stdout);
        assert_exit(&output, 0, driver);
        // The server's versions are 1000, 1001, …: the third state's.
        let last = "1002";
        assert!(
            stdout.contains(&format!("at resourceVersion {last}"))
                && stdout.contains("PASSED: all 3 pods"),
            "{driver:?} did not pass on the last state: {}",
            shown(&output)
        );
        assert!(took >= period * 2, "{driver:?} passed after {took:?}");
    }
}

/// A user who may list pods but not StatefulSets: one warning naming the
/// kind; the check goes on (here it passes: nats is not checked).
#[test]
fn a_forbidden_statefulsets_list_is_one_warning() {
    for driver in DRIVERS {
        let forbidden = Fault::Status {
            code: 403,
            reason: "Forbidden".into(),
            message:
                "statefulsets.apps is forbidden: User \"ci\" cannot list resource \"statefulsets\""
                    .into(),
            retry_after: None,
        };
        let server = Server::builder()
            .state(created(1))
            .fault(FaultRule::always(
                Target::Workloads("statefulsets"),
                forbidden,
            ))
            .start()
            .expect("server");
        let (output, _) = check(&server, driver, 2);
        let stderr = text(&output.stderr);
        assert_exit(&output, 0, driver);
        assert_lines_of(&output, &messages::WORKLOADS_NOT_LISTED, 1, driver);
        assert!(stderr.contains("statefulsets"), "{driver:?}: {stderr}");
        // The checker asks its proxy once, then kubectl (whose words the
        // warning keeps), not the proxy again.
        if driver == Driver::Checker {
            let asked: Vec<bool> = server
                .log()
                .iter()
                .filter(|e| e.path.ends_with("/statefulsets"))
                .map(|e| e.user_agent.starts_with("verify-pods/"))
                .collect();
            assert_eq!(asked, [true, false], "{}", shown(&output));
        }
    }
}

/// The revision the pods were listed at is compacted before the workloads
/// are read (410): no verdict from it; the pods are listed again. The
/// server compacts as etcd does, for every client (no history kept: the
/// first list moves the present on), so the checker's proxy and the
/// kubectl it asks again both get the 410, as they would from a cluster.
#[test]
fn a_compacted_revision_lists_the_pods_again() {
    for driver in DRIVERS {
        let server = Server::builder()
            .states([created(3), created(3)])
            .watch_history(0)
            .start()
            .expect("server");
        let (output, _) = check(&server, driver, 10);
        assert_exit(&output, 0, driver);
        assert_lines_of(&output, &messages::LIST_AGAIN, 1, driver);
        assert_eq!(
            server.pods_lists().len(),
            2,
            "{driver:?}: {}",
            shown(&output)
        );
    }
}

/// Pods that never come: the check settles until the deadline, then fails
/// with the group of pods not yet created; the artifacts it saves (the
/// checker's from the state its watch decided on) replay that verdict.
#[test]
fn pods_never_created_fail_at_the_deadline() {
    for driver in DRIVERS {
        // A second pod comes after the first list (the checker's watch
        // sees it), the third never.
        let server = Server::builder()
            .states((1..=2).map(created))
            .start()
            .expect("server");
        let dir = tempfile::tempdir().expect("temp dir");
        let (output, took) = check_saving(&server, driver, 2, Some(dir.path()));
        let replay = run(checker_command()
            .arg("check")
            .arg("--snapshot")
            .arg(dir.path().join("pods.json"))
            .arg("--workloads")
            .arg(dir.path().join("workloads.json"))
            .args(["--format", "json"]));
        let replayed: Value = serde_json::from_slice(&replay.stdout).unwrap_or_default();
        assert_eq!(
            (replay.status.code(), &replayed["missing"]),
            (Some(1), &json!(1)),
            "{driver:?}'s artifacts replay: {}",
            shown(&replay)
        );
        let stdout = text(&output.stdout);
        assert_exit(&output, 1, driver);
        assert!(
            stdout.contains("\n1 pod not yet created:\n  StatefulSet data/nats: 2 of 3\n"),
            "{driver:?}: {}",
            shown(&output)
        );
        assert!(
            took >= Duration::from_secs(2),
            "{driver:?} settled {took:?}"
        );
    }
}

/// `driver` polling `server` (the checker with `--watch false`) for 2 s at
/// 1 s intervals; it fails, as every state it is used on has a pod
/// unscheduled.
fn polled_to_failure(server: &Server, driver: Driver) -> Output {
    let env = KubeEnv::for_server(server).expect("kube env");
    let mut command = driver.command(&env);
    if driver == Driver::Checker {
        command.args(["--watch", "false"]);
    }
    let output = run(command.env(DEADLINE_ENV, "2").env(INTERVAL_ENV, "1"));
    assert_exit(&output, 1, driver);
    output
}

/// Polling (the bash; the checker with `--watch false`) reads the
/// workloads beside every pods list, while report.jq runs (issue 30's
/// cost); a state that settles on its report drops them, their failures
/// too. Here every state has an unscheduled pod, so only the last, at the
/// deadline, decides; the statefulsets list of the first state is a 410
/// (once), which the dropped read never acts on: no list again.
#[test]
fn polling_reads_the_workloads_beside_every_list_and_drops_a_settling_states() {
    for driver in DRIVERS {
        let server = Server::builder()
            .state(first_stuck())
            .fault(FaultRule::once(
                Target::Workloads("statefulsets"),
                Fault::expired(),
            ))
            .start()
            .expect("server");
        let output = polled_to_failure(&server, driver);
        let lists = server.pods_lists().len();
        assert!(
            lists >= 2,
            "{driver:?}: {lists} pods lists: {}",
            shown(&output)
        );
        // Each list's first workloads list (the bash stops at the 410,
        // the checker asks kubectl again: the counts of the others differ).
        let replicasets = server
            .log()
            .into_iter()
            .filter(|e| e.path.starts_with("/apis/apps/v1/replicasets"))
            .count();
        assert_eq!(replicasets, lists, "{driver:?}: {}", shown(&output));
        let again = lines_of(&text(&output.stderr), &messages::LIST_AGAIN);
        assert_eq!(again, 0, "{driver:?}: {}", shown(&output));
    }
}

/// A state that settles on its pods alone (a pod unscheduled) while a pod
/// is also not yet created: its attempt lines say nothing of the workloads,
/// in both drivers (the bash decides on lists read whole in workloads.jq's
/// run, then drops them for such a state); only the verdict at the
/// deadline counts the pod not yet created.
#[test]
fn a_settling_states_attempt_lines_leave_its_workloads_out() {
    let mut stuck = Pod::unschedulable("data", "nats-0").to_json();
    stuck["metadata"]["ownerReferences"] = nats_pod(0)["metadata"]["ownerReferences"].clone();
    let state = State::new(vec![stuck, nats_pod(1)], vec![]).with_workloads(vec![nats()]);
    let mut attempts = Vec::new();
    for driver in DRIVERS {
        let server = Server::builder()
            .state(state.clone())
            .start()
            .expect("server");
        let output = polled_to_failure(&server, driver);
        let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
        let lines: Vec<String> = all
            .lines()
            .filter(|l| l.contains("Attempt "))
            .map(|l| l[l.find("Attempt ").unwrap()..].to_owned())
            .collect();
        assert!(!lines.is_empty(), "{driver:?}: {}", shown(&output));
        assert!(
            lines.iter().all(|l| !l.contains("not yet created")),
            "{driver:?}: {}",
            shown(&output)
        );
        assert!(
            text(&output.stdout)
                .contains("1 pod not yet created:\n  StatefulSet data/nats: 2 of 3\n"),
            "{driver:?}: {}",
            shown(&output)
        );
        attempts.push(lines[0].clone());
    }
    assert_eq!(attempts[0], attempts[1]);
}

/// The checker reads the pods list, the workloads lists and the events
/// through one `kubectl proxy` on a socket of its own, not one kubectl each
/// (issue 30's cost, checker/src/live/proxy.rs); the proxy and its socket's
/// directory are gone when the check ends. A pod is unscheduled, so events
/// are read.
#[test]
fn the_checker_reads_every_list_through_one_proxy() {
    let server = Server::builder()
        .state(first_stuck())
        .start()
        .expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let output = run(env
        .checker()
        .env(DEADLINE_ENV, "0")
        .env("TMPDIR", tmp.path()));
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
    let log = server.log();
    let beside_pods: Vec<_> = log
        .iter()
        .filter(|e| e.path.starts_with("/apis/apps/v1/") || e.path.ends_with("/events"))
        .collect();
    assert_eq!(beside_pods.len(), 5, "{beside_pods:#?}");
    let proxied = |e: &LogEntry| e.user_agent.starts_with("verify-pods/");
    assert!(beside_pods.iter().all(|e| proxied(e)), "{beside_pods:#?}");
    let pods = server.pods_lists();
    assert!(
        !pods.is_empty() && pods.iter().all(proxied),
        "the pods list streams through the proxy: {pods:#?}"
    );
    assert_no_proxy_left(tmp.path());
}

/// The proxy's answer to the pods list is trusted only when read to its
/// end: one cut mid-body is asked again of kubectl, which answers, and the
/// check goes on as if the proxy had not answered (no warning, no list
/// broken).
#[test]
fn a_pods_list_the_proxy_cuts_is_read_again_from_kubectl() {
    let server = Server::builder()
        .state(created(3))
        .fault(FaultRule::once(Target::PodsPage(1), Fault::CloseMidBody))
        .start()
        .expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    let output = run(env.checker().env(DEADLINE_ENV, "0"));
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    let pods = server.pods_requests();
    let proxied: Vec<bool> = pods
        .iter()
        .map(|e| e.user_agent.starts_with("verify-pods/"))
        .collect();
    assert_eq!(proxied, [true, false], "{pods:#?}");
    let warning = checker::contract::CHECKER_PREFIX.warning;
    assert!(
        !text(&output.stderr).contains(warning),
        "{}",
        shown(&output)
    );
}

/// TERM while a workloads list hangs in the checker's proxy: the check
/// ends by the signal within a second, the proxy and its socket's
/// directory gone (the cancel trap has them, as it has kubectl's groups).
#[test]
fn a_cancelled_check_leaves_no_proxy() {
    let server = Server::builder()
        .state(created(3))
        .fault(FaultRule::always(
            Target::Workloads("statefulsets"),
            Fault::Delay(Duration::from_secs(30)),
        ))
        .start()
        .expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut check = env
        .checker()
        .env(DEADLINE_ENV, "0")
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the checker starts");
    let asked = Instant::now();
    while !server
        .log()
        .iter()
        .any(|e| e.path.ends_with("/statefulsets"))
    {
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "no statefulsets list"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (status, took) = verify_pods_tests::signal_job(&mut check, "TERM", false);
    assert!(took < Duration::from_secs(1), "{took:?}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert_no_proxy_left(tmp.path());
}

/// Nothing in `tmp` (the checker's `$TMPDIR`), and no process whose
/// command line names it: the proxy and its socket are gone. A proxy the
/// check killed as it ended may take a moment to die: it gets a second.
fn assert_no_proxy_left(tmp: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(tmp).unwrap().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    let socket = tmp.display().to_string();
    let running = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
            .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
            .filter(|cmdline| cmdline.contains("proxy") && cmdline.contains(&socket))
            .collect()
    };
    let killed = Instant::now();
    while !running().is_empty() && killed.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(running().is_empty(), "still running: {:?}", running());
}

/// Deployment svc/api: 3 replicas, observed (`paused` as given).
fn api_deployment() -> Value {
    json!({"kind": "Deployment", "apiVersion": "apps/v1",
           "metadata": {"name": "api", "namespace": "svc", "uid": "deploy-api", "generation": 2},
           "spec": {"replicas": 3}, "status": {"observedGeneration": 2, "replicas": 3}})
}

/// ReplicaSet svc/api-`hash` of Deployment svc/api at `revision`, wanting
/// `replicas`.
fn api_replicaset(hash: &str, revision: &str, replicas: u64) -> Value {
    json!({"kind": "ReplicaSet", "apiVersion": "apps/v1",
           "metadata": {"name": format!("api-{hash}"), "namespace": "svc", "uid": format!("rs-{hash}"),
                        "generation": 1,
                        "annotations": {"deployment.kubernetes.io/revision": revision},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api",
                                             "uid": "deploy-api", "controller": true}]},
           "spec": {"replicas": replicas}, "status": {"observedGeneration": 1, "replicas": replicas}})
}

/// `n` running pods of ReplicaSet svc/api-`hash`.
fn api_pods(hash: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut pod = Pod::running("svc", &format!("api-{hash}-{i}"), "kwok-node-0").to_json();
            pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("api-{hash}"), "uid": format!("rs-{hash}"), "controller": true}]);
            pod
        })
        .collect()
}

/// A rollout of svc/api from ReplicaSet "old" (revision 1: `old` pods, as
/// many wanted) to "new" (revision 2: `new_wanted` wanted, `new` pods).
fn rollout(old: usize, new_wanted: u64, new: usize) -> State {
    let pods = [api_pods("old", old), api_pods("new", new)].concat();
    let workloads = vec![
        api_deployment(),
        api_replicaset("old", "1", old as u64),
        api_replicaset("new", "2", new_wanted),
    ];
    State::new(pods, vec![]).with_workloads(workloads)
}

/// The one warning line of `stderr` for the workloads lists not read.
fn not_listed_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|line| lines_of(line, &messages::WORKLOADS_NOT_LISTED) == 1)
        .map(str::to_owned)
        .collect()
}

/// A warning line as both drivers word it: from its message on, the
/// command kubectl ran named as the bash names it (the checker names the
/// kubectl and kubeconfig it was given).
fn comparable(line: &str) -> String {
    let line = &line[line.find("cannot list").unwrap_or(0)..];
    match (line.find('`'), line.find(" get --raw ")) {
        (Some(open), Some(get)) if open < get => {
            format!("{}`kubectl{}", &line[..open], &line[get..])
        }
        _ => line.to_owned(),
    }
}

/// A 403 on `plural`, as the API server words it.
fn forbidden(plural: &str) -> Fault {
    Fault::Status {
        code: 403,
        reason: "Forbidden".into(),
        message: format!(
            "{plural}.apps is forbidden: User \"ci\" cannot list resource \"{plural}\""
        ),
        retry_after: None,
    }
}

/// A rollout whose new pods never come: the old ReplicaSet's 3 pods do not
/// stand in for them (both with the new ReplicaSet at the Deployment's 3
/// and, with maxSurge 1, at 1): not yet created at the deadline, fail. A
/// finished one (the old ReplicaSet scaled to 0) passes at once.
#[test]
fn a_rollout_is_done_when_its_newest_replicaset_has_the_pods() {
    let failing = [
        ("new ReplicaSet at 3", rollout(3, 3, 0)),
        ("new ReplicaSet at 1", rollout(3, 1, 0)),
    ];
    for driver in DRIVERS {
        for (story, state) in &failing {
            let server = Server::builder()
                .state(state.clone())
                .start()
                .expect("server");
            let (output, _) = check(&server, driver, 1);
            assert_exit(&output, 1, format_args!("{driver:?}, {story}"));
            assert!(
                text(&output.stdout)
                    .contains("\n3 pods not yet created:\n  Deployment svc/api: 0 of 3\n"),
                "{driver:?}, {story}: {}",
                shown(&output)
            );
        }
        let server = Server::builder()
            .state(rollout(0, 3, 3))
            .start()
            .expect("server");
        let (output, _) = check(&server, driver, 1);
        assert_exit(&output, 0, format_args!("{driver:?}, finished"));
    }
}

/// ReplicaSets forbidden, Deployments readable, a Deployment at 3 of 3:
/// its pods are counted through its ReplicaSets, so it is not checked
/// either (never a false "0 of 3"), and the one warning names both kinds;
/// the same line from both drivers.
#[test]
fn forbidden_replicasets_leave_the_deployments_unchecked_with_one_warning() {
    let line = one_warning_from_both_drivers(|| {
        Server::builder()
            .state(rollout(0, 3, 3))
            .fault(FaultRule::always(
                Target::Workloads("replicasets"),
                forbidden("replicasets"),
            ))
            .start()
            .expect("server")
    });
    assert!(
        line.contains("cannot list the replicasets (")
            && line.ends_with("not checked for the replicasets, deployments"),
        "{line}"
    );
}

/// Each driver against its own server from `server_for`: a pass (exit 0)
/// with one "cannot list" warning, the same line from both (their prefix
/// and kubectl's path aside). The checker's line.
fn one_warning_from_both_drivers(server_for: impl Fn() -> Server) -> String {
    let mut warnings = Vec::new();
    for driver in DRIVERS {
        let server = server_for();
        let (output, _) = check(&server, driver, 1);
        assert_exit(&output, 0, driver);
        let lines = not_listed_lines(&text(&output.stderr));
        assert_eq!(lines.len(), 1, "{driver:?}: {}", shown(&output));
        warnings.push((comparable(&lines[0]), lines[0].to_owned()));
    }
    assert_eq!(warnings[0].0, warnings[1].0);
    warnings.swap_remove(0).1
}

/// Every apps/v1 list forbidden: one line names them all, and the verdict
/// does not pretend the workloads were checked (the JSON's `missing` is
/// null); the same line from both drivers.
#[test]
fn every_workloads_list_forbidden_is_one_line_and_nothing_checked() {
    let plurals = checker::api::WORKLOADS.map(|list| list.what);
    let server_for = || {
        let mut builder = Server::builder().state(rollout(0, 3, 3));
        for plural in plurals {
            builder = builder.fault(FaultRule::always(
                Target::Workloads(plural),
                forbidden(plural),
            ));
        }
        builder.start().expect("server")
    };
    let line = one_warning_from_both_drivers(server_for);
    let all = plurals.join(", ");
    assert!(
        line.contains(&format!("cannot list the {all} ("))
            && line.ends_with(&format!("not checked for the {all}")),
        "{line}"
    );
    let server = server_for();
    let env = KubeEnv::for_server(&server).expect("kube env");
    let output = run(env
        .checker()
        .args(["--format", "json"])
        .env(DEADLINE_ENV, "1"));
    let result: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
    assert_eq!(
        (output.status.code(), &result["verdict"], &result["missing"]),
        (Some(0), &json!("pass"), &Value::Null),
        "{}",
        shown(&output)
    );
}

/// `output`'s lines, stdout then stderr, each without its driver's prefix
/// and with every figure a `#` (how long a call ran differs run to run).
fn lines_without_figures(output: &Output) -> Vec<String> {
    use checker::contract;
    let all = text(&output.stdout) + &text(&output.stderr);
    all.lines()
        .map(|line| {
            let (checker, bash) = (contract::CHECKER_PREFIX, contract::BASH_PREFIX);
            let line = [checker.warning, checker.error, bash.warning, bash.error]
                .iter()
                .fold(line, |line, prefix| line.trim_start_matches(prefix));
            let mut kept = String::new();
            for c in line.chars() {
                match (c.is_ascii_digit(), kept.ends_with('#')) {
                    (true, true) => {}
                    (true, false) => kept.push('#'),
                    (false, _) => kept.push(c),
                }
            }
            kept
        })
        .collect()
}

/// Each apps/v1 list answers after 4 s, past the 3 s deadline, with a 5 s
/// kubectl timeout: read one after the other they would outlast the pods
/// lists' 8 s bound; read at once (as the checker reads them) they are
/// all in by 4 s. Both drivers: the same failed verdict, the same exit
/// code, the same lines (figures aside), well before the bound. (At a 5 s
/// interval no list runs long enough to say it is still running: those
/// lines would come in the order of the clock.)
#[test]
fn the_four_workloads_lists_are_read_at_once() {
    let delay = Duration::from_secs(4);
    let mut seen = Vec::new();
    for driver in DRIVERS {
        let mut builder = Server::builder().state(first_stuck());
        for list in checker::api::WORKLOADS {
            builder = builder.fault(FaultRule::always(
                Target::Workloads(list.what),
                Fault::Delay(delay),
            ));
        }
        let server = builder.start().expect("server");
        let env = KubeEnv::for_server(&server).expect("kube env");
        let started = Instant::now();
        let output = run(driver
            .command(&env)
            .env(DEADLINE_ENV, "3")
            .env(INTERVAL_ENV, "5")
            .env(checker::contract::KUBECTL_TIMEOUT_ENV, "5"));
        let took = started.elapsed();
        assert_exit(&output, 1, format_args!("{driver:?} after {took:?}"));
        // One after another, the lists would meet the bound (the deadline
        // plus the kubectl timeout: 8 s) and end with exit 2; at once, they
        // end after one delay. 3 s over it leaves room for a loaded machine
        // (the bash once took 6.2 s with two test binaries running).
        assert!(
            took < delay + Duration::from_secs(3),
            "{driver:?} took {took:?}: {}",
            shown(&output)
        );
        seen.push(lines_without_figures(&output));
    }
    assert_eq!(seen[0], seen[1], "the checker's lines, then the bash's");
}

/// A pods list and then the four apps/v1 lists, each answering after
/// 2.5 s, at a 1 s interval: each call still running says so after 1 s,
/// again after 2 s, and so on while it runs (a loaded machine starts
/// kubectl late), in its own order; the four apps/v1 lists at once, each
/// with its own lines. Both drivers (the bash's `diagnostics` feature).
#[test]
fn a_list_still_running_says_so_every_interval() {
    use checker::contract::{self, messages};
    let delay = Duration::from_millis(2500);
    let lists = checker::api::WORKLOADS.map(|list| list.what);
    for driver in DRIVERS {
        let mut builder = Server::builder()
            .state(first_stuck())
            .fault(FaultRule::always(Target::PodsList, Fault::Delay(delay)));
        for what in lists {
            builder = builder.fault(FaultRule::always(
                Target::Workloads(what),
                Fault::Delay(delay),
            ));
        }
        let server = builder.start().expect("server");
        let env = KubeEnv::for_server(&server).expect("kube env");
        let output = run(driver
            .command(&env)
            .env(DEADLINE_ENV, "0")
            .env(INTERVAL_ENV, "1")
            .env(contract::KUBECTL_TIMEOUT_ENV, "10"));
        assert_eq!(
            output.status.code(),
            Some(1),
            "{driver:?}: {}",
            shown(&output)
        );
        let stderr = text(&output.stderr);
        for what in ["pods"].into_iter().chain(lists) {
            let lines: Vec<String> = stderr
                .lines()
                .filter(|line| {
                    lines_of(line, &messages::KUBECTL_WAITING) == 1
                        && line.contains(&format!(": {what} list running "))
                })
                .map(|line| line[line.find("waiting").unwrap_or(0)..].to_owned())
                .collect();
            let said: Vec<String> = (1..=lines.len().max(2))
                .map(|seconds| {
                    messages::KUBECTL_WAITING.format(&[
                        ("what", &what),
                        ("seconds", &seconds),
                        ("timeout", &10),
                    ])
                })
                .collect();
            assert_eq!(lines, said, "{driver:?}, {what}: {}", shown(&output));
        }
    }
}

/// The bash function cancelled while its four apps/v1 lists run (SIGTERM
/// to the caller's PID alone, as a CI runner may send it): it ends by that
/// signal within a second, and leaves no kubectl (each runs in a process
/// group of its own, which the signal misses) and no temporary files.
#[test]
fn a_cancelled_bash_stops_the_four_workloads_lists() {
    use std::os::unix::process::ExitStatusExt;
    let lists = checker::api::WORKLOADS.map(|list| list.what);
    let mut builder = Server::builder().state(created(3));
    for what in lists {
        builder = builder.fault(FaultRule::always(
            Target::Workloads(what),
            Fault::Delay(Duration::from_secs(30)),
        ));
    }
    let server = builder.start().expect("server");
    let env = KubeEnv::for_server(&server).expect("kube env");
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let mut job = verify_pods_tests::spawn_job(
        Driver::Wrapper
            .command(&env)
            .env(DEADLINE_ENV, "0")
            .env("TMPDIR", tmp.path()),
        false,
    );
    let asked = Instant::now();
    let listed = || {
        let log = server.log();
        lists
            .iter()
            .all(|what| log.iter().any(|e| e.path.ends_with(&format!("/{what}"))))
    };
    while !listed() {
        assert!(asked.elapsed() < Duration::from_secs(10), "not every list");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The four kubectl, by the kubeconfig in their environment.
    let kubeconfig = format!("KUBECONFIG={}", env.kubeconfig.display());
    let kubectls = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|entry| {
                let name = entry.file_name();
                let pid = name.to_string_lossy();
                let read = |what: &str| std::fs::read(format!("/proc/{pid}/{what}"));
                let named = |bytes: Vec<u8>, word: &[u8]| {
                    bytes.split(|b| *b == 0).any(|part| part.ends_with(word))
                };
                // kubectl itself, not timeout (whose arguments name it).
                let first = |cmd: Vec<u8>| cmd.split(|b| *b == 0).next() == Some(b"kubectl");
                read("cmdline").is_ok_and(first)
                    && read("environ").is_ok_and(|env| named(env, kubeconfig.as_bytes()))
            })
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(kubectls().len(), 4, "the four lists' kubectl");
    let (status, took) = verify_pods_tests::signal_job(&mut job, "TERM", false);
    let sent = Instant::now() - took;
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert!(took < Duration::from_secs(1), "ended after {took:?}");
    // A killed kubectl may take a moment to go: a second.
    while !kubectls().is_empty() && sent.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(kubectls(), Vec::<String>::new(), "kubectl left running");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}
