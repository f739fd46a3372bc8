//! Race tests: the cluster changes between API reads (a replay timeline that
//! moves to its next state after each `kubectl get pods`).
//!
//! * The legacy five-call pattern prints an impossible status, every run.
//! * On 48 seeded random timelines ([`TIMELINES`]; more with
//!   `VERIFY_PODS_RACE_TIMELINES`), `verify-pods check` (live) and
//!   `generated/verify-pods.sh` never print an incoherent status, and their
//!   verdict is the verdict of the one state their counts came from.
//! * The coherence check is shared: the same check that passes the two
//!   paths catches the legacy pattern (a second `kubectl get pods`) on the
//!   same kind of timelines.
//! * Settle: a pod that binds within the deadline turns a failing first
//!   attempt into a pass.

use checker::contract::{CHUNK_SIZE_ENV, DEADLINE_ENV, INTERVAL_ENV, WATCH};
use checker::{Engine, Programs};
use serde_json::Value;
use std::time::Instant;
use verify_pods_tests::replay::coherence::{self, Counts};
use verify_pods_tests::replay::expect;
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, Phase, Pod};
use verify_pods_tests::replay::{generated_wrapper, KubeEnv, Server, State};
use verify_pods_tests::rng::Rng;
use verify_pods_tests::{code, run, text, Driver, KUBECTL_CHUNK_SIZE, SLOW};

/// Random timelines checked through both paths in `make test`: 48 (about a
/// quarter of the test's old cost) keep three quarters racy, which the test
/// asserts. More, and other seeds, for a deeper run:
/// `VERIFY_PODS_RACE_TIMELINES=400 VERIFY_PODS_RACE_SEED=1000 cargo test --profile testing -p verify-pods-tests --test race`.
const TIMELINES: u64 = 48;

/// `VERIFY_PODS_RACE_<NAME>` as a number, or `default`.
fn setting(name: &str, default: u64) -> u64 {
    let key = format!("VERIFY_PODS_RACE_{name}");
    match std::env::var(&key) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{key}={text:?}: not a number")),
        Err(_) => default,
    }
}
/// Random timelines the legacy script runs on (five kubectl calls each).
const LEGACY_TIMELINES: u64 = 24;
/// Of those, how many also run on their first state alone (the control).
const LEGACY_CONTROLS: u64 = 8;
/// Parallel workers: most of their time is spent waiting for processes or
/// for the settle interval, so more than the two cores.
const WORKERS: usize = 6;
// ------------------------------------------------------------ timelines

/// How one random run is set up.
#[derive(Debug, Clone)]
struct Timeline {
    seed: u64,
    states: Vec<State>,
    /// Largest page the server sends (kubectl follows `continue`).
    page_size: Option<usize>,
    /// Settle deadline; > 0 makes the run take several snapshots.
    deadline: u64,
}

const NAMESPACES: [&str; 4] = ["default", "ml", "web", "batch"];
const NODES: [&str; 4] = ["kwok-node-0", "kwok-node-1", "kwok-node-2", "kwok-node-3"];

/// A pod the generator may create. `noise` adds what the legacy script does
/// not know about: excluded namespaces and Job hook pods.
fn random_pod(rng: &mut Rng, name: String, noise: bool) -> Pod {
    let namespace = if noise && rng.chance(15) {
        Programs::default_excluded_namespaces()[0].clone()
    } else {
        rng.pick(&NAMESPACES).to_owned()
    };
    let mut pod = Pod::running(&namespace, &name, rng.pick(&NODES));
    match rng.below(100) {
        0..=59 => {}
        60..=79 => pod = Pod::unschedulable(&namespace, &name),
        80..=85 => {
            pod.phase = Phase::Failed;
            pod.reason = Some(rng.pick(&["Error", "OOMKilled", "Evicted"]).into());
        }
        86..=91 => pod.phase = Phase::Succeeded,
        _ => pod.phase = Phase::Pending,
    }
    pod.owner_kind = Some(
        rng.pick(&["ReplicaSet", "StatefulSet", "PyTorchJob"])
            .into(),
    );
    if noise && pod.phase == Phase::Pending && rng.chance(20) {
        pod.owner_kind = Some("Job".into());
    }
    pod
}

/// One random change of the cluster.
fn mutate(rng: &mut Rng, pods: &mut Vec<Pod>, next_name: &mut usize, noise: bool) {
    let index = (!pods.is_empty()).then(|| rng.below(pods.len()));
    match (rng.below(6), index) {
        (0, _) | (_, None) => {
            *next_name += 1;
            let pod = random_pod(rng, format!("app-{next_name}"), noise);
            pods.push(pod);
        }
        (1, Some(i)) => {
            // The scheduler binds a pod (pending ones first).
            let i = pods.iter().position(|p| p.node.is_none()).unwrap_or(i);
            pods[i].node = Some(rng.pick(&NODES).to_owned());
            pods[i].phase = if rng.chance(70) {
                Phase::Running
            } else {
                Phase::Pending
            };
        }
        (2, Some(i)) => {
            pods[i].phase = Phase::Failed;
            pods[i].node.get_or_insert_with(|| NODES[0].to_owned());
            pods[i].reason = Some("Error".into());
        }
        (3, Some(i)) => {
            pods.remove(i);
        }
        (4, Some(i)) => {
            // Deleted and created again under the same name: a new uid.
            let old = pods.remove(i);
            let mut pod = random_pod(rng, old.name.clone(), noise);
            pod.namespace = old.namespace;
            pod.generation = old.generation + 1;
            pods.push(pod);
        }
        (_, Some(i)) => {
            pods[i].phase = Phase::Succeeded;
            pods[i].node.get_or_insert_with(|| NODES[1].to_owned());
        }
    }
}

/// A seeded random timeline of 2–5 states; every state carries the
/// FailedScheduling events of every pod that was ever unscheduled until then
/// (stale ones included: pods since bound, deleted or recreated).
fn random_timeline(seed: u64, noise: bool) -> Timeline {
    let mut rng = Rng(seed);
    let mut next_name = 0;
    let mut pods: Vec<Pod> = (0..3 + rng.below(10))
        .map(|_| {
            next_name += 1;
            random_pod(&mut rng, format!("app-{next_name}"), noise)
        })
        .collect();
    let mut events = Vec::new();
    let mut states = Vec::new();
    for step in 0..2 + rng.below(4) {
        if step > 0 {
            for _ in 0..1 + rng.below(3) {
                mutate(&mut rng, &mut pods, &mut next_name, noise);
            }
        }
        for (j, pod) in pods
            .iter()
            .filter(|p| p.phase == Phase::Pending && p.node.is_none())
            .enumerate()
        {
            let seconds = (step * 100 + j) as u32;
            events.push(failed_scheduling_event(pod, seconds, 1 + (seconds % 4)));
        }
        states.push(State::new(
            pods.iter().map(Pod::to_json).collect(),
            events.clone(),
        ));
    }
    Timeline {
        seed,
        states,
        page_size: [None, Some(3), Some(4), Some(5)][rng.below(4)],
        deadline: if rng.chance(20) {
            1 + rng.below(2) as u64
        } else {
            0
        },
    }
}

// ------------------------------------------------------------ running

/// What one run printed and which states its pods lists saw.
#[derive(Debug)]
struct Run {
    stdout: String,
    stderr: String,
    exit: i32,
    /// The state of each pods list served, in order.
    seen: Vec<usize>,
}

fn run_on(server: &Server, env: &KubeEnv, timeline: &Timeline, path: Driver) -> Run {
    server.reset(timeline.states.clone(), vec![]);
    server.set_page_size(timeline.page_size);
    let mut cmd = path.command(env);
    // The settle these runs check is the polling one both drivers share
    // (tests/tests/watch.rs races the checker's watch).
    cmd.env(DEADLINE_ENV, timeline.deadline.to_string())
        .env(INTERVAL_ENV, "1")
        .env(WATCH.env, "false");
    if timeline.page_size.is_some() {
        // Pages: the drivers ask for more than the server's cap gives.
        cmd.env(CHUNK_SIZE_ENV, KUBECTL_CHUNK_SIZE.to_string());
    }
    let output = run(&mut cmd);
    Run {
        stdout: text(&output.stdout),
        stderr: text(&output.stderr),
        exit: code(&output),
        seen: server.pods_lists().iter().filter_map(|e| e.state).collect(),
    }
}

/// Run every (timeline, path) pair on `WORKERS` threads, each with its own
/// server (reset per run, so kubectl's discovery cache stays warm).
fn run_all(jobs: Vec<(Timeline, Driver)>) -> Vec<(Timeline, Driver, Run)> {
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                let server = Server::builder().start().expect("server");
                let env = KubeEnv::new(&server.url()).expect("kube env");
                loop {
                    let job = queue.lock().unwrap().next();
                    let Some((timeline, path)) = job else { return };
                    let outcome = run_on(&server, &env, &timeline, path);
                    results.lock().unwrap().push((timeline, path, outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(t, p, _)| (t.seed, *p as u8));
    results
}

/// The shared coherence check of one run: the output is possible, it is
/// explained by the state the LAST pods list saw (where the final counts
/// come from), and the exit code is that state's verdict.
fn coherence_problem(reports: &[Value], run: &Run) -> Option<String> {
    let explaining = match coherence::explain(&run.stdout, reports) {
        Ok(explaining) => explaining,
        Err(why) => return Some(why),
    };
    let Some(&last) = run.seen.last() else {
        return Some("no pods list was served".into());
    };
    if !explaining.contains(&last) {
        return Some(format!(
            "the counts are those of states {explaining:?}, but the last pods list saw state {last}"
        ));
    }
    let expected_exit = if coherence::verdict(&reports[last]) == "fail" {
        1
    } else {
        0
    };
    (run.exit != expected_exit).then(|| {
        format!(
            "exit {} but state {last} has verdict {}",
            run.exit,
            coherence::verdict(&reports[last])
        )
    })
}

// ------------------------------------------------------------ tests

/// t0 = 20 running pods; t1 = t0 + 1 unschedulable pod.
fn brief_states() -> (State, State) {
    let running: Vec<Pod> = (0..20)
        .map(|i| Pod::running(NAMESPACES[i % 4], &format!("app-{i:02}"), NODES[i % 4]))
        .collect();
    let new_pod = Pod::unschedulable("ml", "trainer-0");
    let t0 = State::new(running.iter().map(Pod::to_json).collect(), vec![]);
    let mut t1_pods: Vec<Value> = running.iter().map(Pod::to_json).collect();
    t1_pods.push(new_pod.to_json());
    let t1 = State::new(t1_pods, vec![failed_scheduling_event(&new_pod, 30, 1)]);
    (t0, t1)
}

#[test]
fn legacy_pattern_prints_the_impossible_status_every_run() {
    let (t0, t1) = brief_states();
    let timeline = vec![t0.clone(), t0.clone(), t0.clone(), t0, t1];
    let engine = Engine::new().expect("engine");
    let reports = coherence::reports(&engine, &timeline);
    let server = Server::builder()
        .states(timeline.clone())
        .start()
        .expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    for attempt in 0..2 {
        server.reset(timeline.clone(), vec![]);
        let output = run(&mut Driver::Legacy.command(&env));
        let stdout = text(&output.stdout);
        let observed = coherence::parse(&stdout);
        let impossible = Counts {
            total: 20,
            running: 20,
            pending: 0,
            unscheduled: 1,
            failed: 0,
        };
        assert_eq!(
            observed.counts,
            Some(impossible),
            "run {attempt}: {stdout}{}",
            text(&output.stderr)
        );
        let seen: Vec<Option<usize>> = server.pods_lists().iter().map(|e| e.state).collect();
        assert_eq!(
            seen,
            [Some(0), Some(1), Some(2), Some(3), Some(4)],
            "one state per call"
        );
        let why =
            coherence::explain(&stdout, &reports).expect_err("the legacy output is impossible");
        assert!(why.contains("more unscheduled than pending"), "{why}");
    }
}

/// The coherence check rejects the legacy script for the race only: on a
/// cluster that does not change, the same script is coherent.
#[test]
fn legacy_pattern_is_coherent_without_a_race() {
    let (_, t1) = brief_states();
    let engine = Engine::new().expect("engine");
    let reports = coherence::reports(&engine, std::slice::from_ref(&t1));
    let server = Server::serve(t1).expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let output = run(&mut Driver::Legacy.command(&env));
    let stdout = text(&output.stdout);
    assert_eq!(
        coherence::explain(&stdout, &reports),
        Ok(vec![0]),
        "{stdout}"
    );
    assert_eq!(code(&output), 1);
}

/// The project's two paths on the brief's timeline: one snapshot, coherent.
#[test]
fn both_paths_are_coherent_on_the_brief_timeline() {
    let (t0, t1) = brief_states();
    let timeline = Timeline {
        seed: 0,
        states: vec![t0.clone(), t0.clone(), t0.clone(), t0, t1],
        page_size: None,
        deadline: 0,
    };
    let engine = Engine::new().expect("engine");
    let reports = coherence::reports(&engine, &timeline.states);
    let server = Server::builder().start().expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    for path in [Driver::Checker, Driver::Wrapper] {
        let outcome = run_on(&server, &env, &timeline, path);
        assert_eq!(
            coherence_problem(&reports, &outcome),
            None,
            "{path:?}: {outcome:?}"
        );
        assert_eq!(outcome.seen, [0], "{path:?}: one pods list");
        assert_eq!(outcome.exit, 0);
    }
}

#[test]
fn random_timelines_never_give_an_incoherent_status() {
    assert!(
        generated_wrapper().is_file(),
        "generated/verify-pods.sh is missing"
    );
    let started = Instant::now();
    let engine = Engine::new().expect("engine");
    let count = setting("TIMELINES", TIMELINES);
    let first_seed = setting("SEED", 1);
    let timelines: Vec<Timeline> = (first_seed..first_seed + count)
        .map(|seed| random_timeline(seed, true))
        .collect();
    let racy = timelines
        .iter()
        .filter(|t| {
            let reports = coherence::reports(&engine, &t.states);
            reports.windows(2).any(|w| w[0] != w[1])
        })
        .count();
    assert!(
        racy >= count as usize * 3 / 4,
        "only {racy} timelines change the report"
    );
    let jobs = timelines
        .iter()
        .flat_map(|t| [(t.clone(), Driver::Checker), (t.clone(), Driver::Wrapper)])
        .collect();
    let results = run_all(jobs);
    let mut problems = Vec::new();
    for pair in results.chunks(2) {
        let [(timeline, _, checker), (_, _, wrapper)] = pair else {
            unreachable!()
        };
        let reports = coherence::reports(&engine, &timeline.states);
        for (path, outcome) in [(Driver::Checker, checker), (Driver::Wrapper, wrapper)] {
            if let Some(why) = coherence_problem(&reports, outcome) {
                problems.push(format!(
                    "seed {} {path:?} (deadline {}, page {:?}, seen {:?}): {why}\n{}{}",
                    timeline.seed,
                    timeline.deadline,
                    timeline.page_size,
                    outcome.seen,
                    outcome.stdout,
                    outcome.stderr
                ));
            }
        }
        // With a deadline, the number of attempts depends on wall-clock time
        // (a loaded machine makes fewer); without one, both take one snapshot.
        let comparable = timeline.deadline == 0;
        if comparable && (checker.seen != wrapper.seen || checker.exit != wrapper.exit) {
            problems.push(format!(
                "seed {}: checker saw {:?} (exit {}), wrapper saw {:?} (exit {})",
                timeline.seed, checker.seen, checker.exit, wrapper.seen, wrapper.exit
            ));
        }
    }
    let settled = results.iter().filter(|(_, _, r)| r.seen.len() > 1).count();
    eprintln!(
        "{} runs over {count} timelines from seed {first_seed} ({racy} racy, {settled} runs took several snapshots) in {:.1}s",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(settled > 0, "no run exercised the settle loop");
    assert!(
        problems.is_empty(),
        "{} incoherent runs:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The same check on the same kind of timelines catches a script that reads
/// the cluster more than once: injecting a second `kubectl get pods` fails.
/// The same script on the first state alone of some of them (no race)
/// passes the check, so what is caught is the race.
#[test]
fn the_coherence_check_catches_the_legacy_pattern_on_random_timelines() {
    let engine = Engine::new().expect("engine");
    let jobs = (1..=LEGACY_TIMELINES)
        .flat_map(|seed| {
            let mut racy = random_timeline(1000 + seed, false);
            racy.deadline = 0;
            let mut calm = racy.clone();
            calm.states.truncate(1);
            let control = (seed <= LEGACY_CONTROLS).then_some((calm, Driver::Legacy));
            std::iter::once((racy, Driver::Legacy)).chain(control)
        })
        .collect();
    let results = run_all(jobs);
    let mut caught = 0;
    for (timeline, _, outcome) in &results {
        let reports = coherence::reports(&engine, &timeline.states);
        let problem = coherence_problem(&reports, outcome);
        assert_eq!(outcome.seen.len(), 5, "five pods lists: {outcome:?}");
        if timeline.states.len() == 1 {
            assert_eq!(
                problem, None,
                "seed {} without a race: {outcome:?}",
                timeline.seed
            );
        } else if problem.is_some() {
            caught += 1;
        }
    }
    eprintln!(
        "the coherence check caught the legacy pattern on {caught} of {LEGACY_TIMELINES} timelines"
    );
    assert!(
        caught >= LEGACY_TIMELINES as usize / 4,
        "caught only {caught} of {LEGACY_TIMELINES}"
    );
}

/// A pod that binds during the deadline: the first attempt fails, the
/// second one (a new snapshot, one interval later) passes.
fn settle(path: Driver) {
    let waiting = Pod::unschedulable("ml", "trainer-0");
    let mut bound = waiting.clone();
    bound.node = Some(NODES[2].to_owned());
    bound.phase = Phase::Running;
    let others: Vec<Value> = (0..10)
        .map(|i| Pod::running(NAMESPACES[i % 4], &format!("app-{i}"), NODES[i % 4]).to_json())
        .collect();
    let event = failed_scheduling_event(&waiting, 5, 2);
    let before = State::new(
        [others.clone(), vec![waiting.to_json()]].concat(),
        vec![event.clone()],
    );
    let after = State::new([others, vec![bound.to_json()]].concat(), vec![event]);
    let server = Server::builder()
        .states([before.clone(), after.clone()])
        .start()
        .expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let output = run(path
        .command(&env)
        .env(DEADLINE_ENV, "3")
        .env(INTERVAL_ENV, "1")
        .env(WATCH.env, "false"));
    let stdout = text(&output.stdout);
    assert_eq!(
        code(&output),
        0,
        "{path:?}: {stdout}{}",
        text(&output.stderr)
    );
    let seen: Vec<Option<usize>> = server.pods_lists().iter().map(|e| e.state).collect();
    assert_eq!(seen, [Some(0), Some(1)], "two snapshots");
    let engine = Engine::new().expect("engine");
    // The start line first; only the whole seconds waited are not known in
    // advance: find them.
    let rest = (0..=SLOW)
        .map(|waited| {
            expect::start_line(&engine)
                + &expect::progress_text(&engine, &before, &expect::served(0), 1, waited, 3)
        })
        .find_map(|progress| stdout.strip_prefix(&progress));
    let explained = rest.is_some_and(|rest| {
        (1..=SLOW).any(|waited| {
            expect::final_text(&engine, &after, &expect::served(1), &after, 2, waited) == rest
        })
    });
    assert!(
        explained,
        "{path:?}: not a progress line for state 0 and the result of state 1:\n{stdout}"
    );
}

verify_pods_tests::test_both_drivers! {
    settle => checker_settles_when_the_pod_binds_within_the_deadline, generated_wrapper_settles_when_the_pod_binds_within_the_deadline;
}
