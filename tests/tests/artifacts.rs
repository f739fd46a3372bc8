//! Issue 24, item 6: artifacts you can replay. Both drivers, through the
//! real kubectl against the replay server, save into one directory
//! (`--save-dir` / KWOK_VERIFY_PODS_ARTIFACT_DIR, given as the environment
//! variable both read):
//!
//! - only what was observed whole: `events.json` only when the events list
//!   was collected, so the README's replay command works for every set;
//! - only the last run's failure: every run first removes the files an
//!   earlier run left, and only a failed verdict writes them.
//!
//! The replay command is the README's own ("Debugging a red run"), read
//! from README.md, with its directory read as the test's.

use checker::artifacts::ARTIFACTS;
use checker::contract::{ARTIFACT_DIR_ENV, DEADLINE_ENV};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, web_pods, Phase, Pod};
use verify_pods_tests::replay::{Fault, FaultRule, KubeEnv, Server, State, Target};
use verify_pods_tests::{run, text, workspace_root, Driver, DRIVERS};

/// Nine running pods and one unschedulable pod with its event: a failed
/// verdict whose events are listed (the deadline is 0: no settling).
fn failing() -> State {
    let mut pods: Vec<Value> = web_pods(9);
    let waiting = Pod::unschedulable("zz-training", "trainer-0");
    pods.push(waiting.to_json());
    State::new(pods, vec![failed_scheduling_event(&waiting, 90, 4)])
}

/// The nine running pods alone: a pass.
fn passing() -> State {
    State::new(web_pods(9), vec![])
}

/// One live run of `driver` on `state` (with `rules`), saving into `dir`.
fn live(driver: Driver, state: State, rules: &[FaultRule], dir: &Path) -> Output {
    let mut builder = Server::builder().state(state);
    for rule in rules {
        builder = builder.fault(rule.clone());
    }
    let server = builder.start().expect("server");
    let env = KubeEnv::new(&server.url()).expect("kube env");
    let mut cmd = driver.command(&env);
    cmd.env(DEADLINE_ENV, "0").env(ARTIFACT_DIR_ENV, dir);
    run(&mut cmd)
}

/// The README's replay command, as its "Debugging a red run" shows it: the
/// words between the backticks of its `verify-pods check --snapshot` line.
fn readme_replay_words() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README");
    let section = &readme[readme
        .find("## Debugging a red run")
        .expect("README has its Debugging section")..];
    let line = section
        .lines()
        .find(|line| line.contains("`verify-pods check --snapshot"))
        .expect("the section shows the replay command");
    let command = line.split('`').nth(1).expect("between backticks");
    command.split_whitespace().map(str::to_owned).collect()
}

/// The README's replay command on the artifacts in `dir`, built as the
/// README says: its `red/` is `dir` (`--snapshot red/` reads it whole),
/// and `--events FILE` and `--workloads FILE` are given only if that file
/// exists. `extra` words are added (`--format json`).
fn replay(dir: &Path, extra: &[&str]) -> (Output, Vec<String>) {
    let words = readme_replay_words();
    let (program, args) = words.split_first().expect("a command");
    assert_eq!(program, "verify-pods");
    let in_dir = |word: &String| -> PathBuf {
        let name = word.split_once('/').map_or(word.as_str(), |(_, name)| name);
        dir.join(name)
    };
    let mut built = Vec::new();
    let mut args = args.iter().peekable();
    while let Some(word) = args.next() {
        match word.as_str() {
            "--snapshot" | "--events" | "--workloads" => {
                let file = in_dir(args.next().expect("a file after the flag"));
                if word != "--snapshot" && !file.exists() {
                    continue;
                }
                built.push(word.clone());
                built.push(file.display().to_string());
            }
            _ => built.push(word.clone()),
        }
    }
    built.extend(extra.iter().map(|word| (*word).to_owned()));
    let mut cmd = Command::new(verify_pods_tests::binary("verify-pods"));
    cmd.args(&built).env_clear().env("NO_COLOR", "1");
    (run(&mut cmd), built)
}

/// Which of the artifacts are in `dir`.
fn saved(dir: &Path) -> Vec<&'static str> {
    ARTIFACTS
        .into_iter()
        .filter(|name| dir.join(name).exists())
        .collect()
}

fn describe(driver: Driver, output: &Output) -> String {
    format!(
        "{driver:?}: exit {:?}\nstdout:\n{}stderr:\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    )
}

/// A failed run's artifacts replay, with the README's command, to the
/// run's verdict, its text and its saved report.json.
fn assert_replays(driver: Driver, dir: &Path, live: &Output) {
    let what = describe(driver, live);
    let (replayed, command) = replay(dir, &[]);
    let said = format!("{command:?}: {}\n{what}", text(&replayed.stderr));
    assert_eq!(replayed.status.code(), Some(1), "{said}");
    assert_eq!(text(&replayed.stdout), text(&live.stdout), "{said}");
    let (json, _) = replay(dir, &["--format", "json"]);
    let parse = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).expect("JSON");
    let report = std::fs::read(dir.join("report.json")).expect("report.json");
    assert_eq!(parse(&json.stdout), parse(&report), "{said}");
}

/// (a) The events list fails (a 500; a cut answer kubectl exits 0 for):
/// the verdict stands, pods.json and report.json are saved and no
/// events.json, and the README's replay gives the same verdict (today: an
/// empty or cut events.json is saved, and the replay exits 2).
#[test]
fn a_failed_events_list_saves_no_events_and_replays() {
    let faults = [Fault::internal_error(), Fault::TruncatedBody];
    for fault in faults {
        for driver in DRIVERS {
            let dir = tempfile::tempdir().expect("temp dir");
            let rules = [FaultRule::always(Target::EventsList, fault.clone())];
            let output = live(driver, failing(), &rules, dir.path());
            let what = format!("{fault:?}: {}", describe(driver, &output));
            assert_eq!(output.status.code(), Some(1), "{what}");
            assert_eq!(
                saved(dir.path()),
                ["pods.json", "workloads.json", "report.json"],
                "{what}"
            );
            assert_replays(driver, dir.path(), &output);
        }
    }
}

/// A run after a failure on the same directory, and its exit code.
struct Later {
    name: &'static str,
    state: fn() -> State,
    rules: Vec<FaultRule>,
    code: i32,
}

/// A fresh directory that a failed run of `driver` (exit 1) saved every
/// artifact into.
fn after_a_failure(driver: Driver) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = live(driver, failing(), &[], dir.path());
    assert_eq!(first.status.code(), Some(1), "{}", describe(driver, &first));
    assert_eq!(saved(dir.path()), ARTIFACTS, "{}", describe(driver, &first));
    dir
}

/// (b) A failed run, then a run that passes (or cannot observe) on the same
/// directory: nothing of the failure is left to look current (today: the
/// failure's three files stay).
#[test]
fn a_later_run_that_does_not_fail_leaves_no_files() {
    let later = [
        Later {
            name: "a pass",
            state: passing,
            rules: vec![],
            code: 0,
        },
        Later {
            name: "a pods list that fails",
            state: failing,
            rules: vec![FaultRule::always(
                Target::PodsPage(1),
                Fault::internal_error(),
            )],
            code: 2,
        },
    ];
    for Later {
        name,
        state,
        rules,
        code,
    } in later
    {
        for driver in DRIVERS {
            let dir = after_a_failure(driver);
            let then = live(driver, state(), &rules, dir.path());
            let what = format!("then {name}: {}", describe(driver, &then));
            assert_eq!(then.status.code(), Some(code), "{what}");
            assert!(saved(dir.path()).is_empty(), "{what}");
        }
    }
}

/// A failed run (after an earlier one when `earlier`) and the files it
/// must leave.
struct Saves {
    name: &'static str,
    earlier: bool,
    state: fn() -> State,
    files: &'static [&'static str],
}

/// (c) A failed run saves what it saw, and the README's replay gives the
/// same text and report: all three files when the events were listed
/// (the replay then has `--events`); pods.json and report.json when no pod
/// waited for a node (no events listed), even where an earlier failure
/// had left an events.json (today: that events.json stays, as if this
/// run's).
#[test]
fn a_failed_run_saves_what_it_saw_and_replays() {
    let cases = [
        Saves {
            name: "unscheduled pods, in a fresh dir",
            earlier: false,
            state: failing,
            files: &ARTIFACTS,
        },
        Saves {
            name: "a failed pod only, after an earlier failure",
            earlier: true,
            state: failed_pod,
            files: &["pods.json", "workloads.json", "report.json"],
        },
    ];
    for Saves {
        name,
        earlier,
        state,
        files,
    } in cases
    {
        for driver in DRIVERS {
            let dir = if earlier {
                after_a_failure(driver)
            } else {
                tempfile::tempdir().expect("temp dir")
            };
            let output = live(driver, state(), &[], dir.path());
            let what = format!("{name}: {}", describe(driver, &output));
            assert_eq!(output.status.code(), Some(1), "{what}");
            assert_eq!(saved(dir.path()), files, "{what}");
            // The README's command reads the directory whole, or names the
            // events file only when it was saved.
            let (_, command) = replay(dir.path(), &[]);
            let whole_directory = command.iter().any(|w| w.ends_with('/'));
            let with_events = command.iter().any(|w| w == "--events");
            assert!(
                whole_directory || with_events == files.contains(&"events.json"),
                "{command:?}"
            );
            assert_replays(driver, dir.path(), &output);
        }
    }
}

/// The nine running pods and one Failed pod: a failed verdict for which
/// no events are listed (no pod waits for a node).
fn failed_pod() -> State {
    let mut pods = web_pods(9);
    let mut failed = Pod::running("zz-web", "api-9", "kwok-node-1");
    failed.phase = Phase::Failed;
    failed.reason = Some("OOMKilled".into());
    pods.push(failed.to_json());
    State::new(pods, vec![])
}
