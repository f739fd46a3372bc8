//! The GitHub Actions step summary through both drivers: the generated bash
//! wrapper (a stub kubectl printing recorded files) and `verify-pods check`
//! append byte-identical Markdown to the file GITHUB_STEP_SUMMARY names, for
//! the sample and every corpus case, and fail alike when they cannot.

use checker::contract::{DEADLINE_ENV, STEP_SUMMARY_ENV};
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use verify_pods_tests::replay::in_parallel;
use verify_pods_tests::sandbox::{sample, Sandbox};
use verify_pods_tests::{cases, checker_command, corpus};

/// `command` (the checker without the user's settings) appending its
/// summary to `summary`, or with GITHUB_STEP_SUMMARY unset.
fn with_summary(command: &mut Command, summary: Option<&Path>) -> Output {
    if let Some(path) = summary {
        command.env(STEP_SUMMARY_ENV, path);
    }
    command.stdin(Stdio::null()).output().unwrap()
}

/// generated/verify-pods.sh in `sandbox`, one attempt, through the stub;
/// GITHUB_STEP_SUMMARY is `summary`, unset when None.
fn bash_in(sandbox: &mut Sandbox, pods: &Path, events: &Path, summary: Option<&Path>) -> Output {
    // A paged case is served page by page (the stub counts later pages in
    // its log).
    let (served, _) = verify_pods_tests::corpus::stub_pages(pods, sandbox.dir.path());
    sandbox
        .set("STUB_PODS", served.to_str().unwrap())
        .events(events)
        .set(DEADLINE_ENV, "0");
    if let Some(path) = summary {
        sandbox.set(STEP_SUMMARY_ENV, path.to_str().unwrap());
    }
    sandbox.run_wrapper()
}

/// [`bash_in`] a sandbox of its own.
fn bash(pods: &Path, events: &Path, summary: Option<&Path>) -> Output {
    bash_in(&mut Sandbox::new(), pods, events, summary)
}

/// `verify-pods check --snapshot PODS --events EVENTS`.
fn checker(pods: &Path, events: &Path, summary: Option<&Path>) -> Output {
    let mut command = checker_command();
    command
        .args(["check", "--snapshot"])
        .arg(pods)
        .arg("--events")
        .arg(events);
    with_summary(&mut command, summary)
}

/// What each driver appended, and its exit code: (bash, checker).
fn both(pods: &Path, events: &Path) -> ((Option<String>, i32), (Option<String>, i32)) {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, driver: &dyn Fn(&Path) -> Output| {
        let file = dir.path().join(name);
        let out = driver(&file);
        let summary = fs::read_to_string(&file).ok();
        (summary, out.status.code().unwrap())
    };
    let from_bash = run("bash.md", &|f| bash(pods, events, Some(f)));
    let from_checker = run("checker.md", &|f| checker(pods, events, Some(f)));
    (from_bash, from_checker)
}

/// The bash run measures its own wall clock: on a loaded machine one run in
/// a thousand can report `waited=1s` where the offline checker says 0. A
/// real difference stays through the retries.
fn assert_same_summary(name: &str, pods: &Path, events: &Path) -> Option<String> {
    let mut last = None;
    for _ in 0..3 {
        let (from_bash, from_checker) = both(pods, events);
        if from_bash == from_checker {
            return from_bash.0;
        }
        last = Some((from_bash, from_checker));
    }
    let ((bash, bash_code), (checker, checker_code)) = last.unwrap();
    panic!(
        "{name}: bash (exit {bash_code}) and checker (exit {checker_code}) summaries differ\n\
         --- bash\n{}\n--- checker\n{}",
        bash.unwrap_or_default(),
        checker.unwrap_or_default()
    );
}

#[test]
fn the_sample_summary_is_byte_identical_from_bash_and_checker() {
    let summary = assert_same_summary("samples", &sample("pods.json"), &sample("events.json"))
        .expect("a summary was written");
    let events: serde_json::Value =
        serde_json::from_slice(&fs::read(sample("events.json")).unwrap()).unwrap();
    // The unscheduled pod of the sample has events in the sample: they show.
    let message = events["items"][1]["message"].as_str().unwrap();
    assert!(summary.contains(message), "{summary}");
}

#[test]
fn every_corpus_case_gives_the_same_summary_through_both_drivers() {
    let cases = cases();
    assert!(cases.len() >= 10, "the corpus is there");
    // Two cases at a time (each case's runs have directories of their own).
    let written = in_parallel(cases.iter().collect(), 2, |case| {
        assert_same_summary(&case.name, &case.pods(), &case.events()).is_some()
    })
    .into_iter()
    .filter(|written| *written)
    .count();
    assert!(
        written >= cases.len() / 2,
        "most cases have a verdict and a summary"
    );
}

#[test]
fn bash_appends_and_keeps_what_earlier_steps_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("summary.md");
    fs::write(&file, "## an earlier step\n").unwrap();
    let (pods, events) = (sample("pods.json"), sample("events.json"));
    for _ in 0..2 {
        assert_eq!(bash(&pods, &events, Some(&file)).status.code(), Some(1));
    }
    let once = fs::read_to_string(&file).unwrap();
    let from_checker = dir.path().join("checker.md");
    checker(&pods, &events, Some(&from_checker));
    let summary = fs::read_to_string(&from_checker).unwrap();
    assert!(!summary.is_empty());
    assert_eq!(once, format!("## an earlier step\n{summary}{summary}"));
}

#[test]
fn no_summary_when_unset_or_empty_and_a_warning_when_it_cannot_be_written() {
    let (pods, events) = (sample("pods.json"), sample("events.json"));
    let mut sandbox = Sandbox::new();
    let unset = bash_in(&mut sandbox, &pods, &events, None);
    assert_eq!(unset.status.code(), Some(1));
    let empty = bash_in(&mut sandbox, &pods, &events, Some(Path::new("")));
    assert_eq!(empty.status.code(), Some(1));
    assert_eq!(unset.stdout, empty.stdout);
    // In the directory the wrapper ran in: the sandbox's tools, its
    // TMPDIR (left empty) and the stub's log; no summary anywhere.
    let mut entries: Vec<_> = fs::read_dir(sandbox.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        ["bin", "kubectl.log", "tmp"],
        "nothing else written"
    );
    assert_eq!(sandbox.leftovers(), Vec::<String>::new());

    let dir = tempfile::tempdir().unwrap();
    let not_a_file = dir.path();
    // A report never changes the verdict (issue 29): one warning, and the
    // exit code stays the verdict's, 1 for this failure and 0 for a pass.
    let passing = corpus::corpus_dir().join("all-running");
    let (pass_pods, pass_events) = (passing.join("pods.json"), passing.join("events.json"));
    for (pods, events, verdict) in [(&pods, &events, 1), (&pass_pods, &pass_events, 0)] {
        let from_bash = bash(pods, events, Some(not_a_file));
        let from_checker = checker(pods, events, Some(not_a_file));
        assert_eq!(from_bash.status.code(), Some(verdict));
        assert_eq!(from_checker.status.code(), Some(verdict));
        for stderr in [&from_bash.stderr, &from_checker.stderr] {
            let stderr = String::from_utf8_lossy(stderr);
            let said: Vec<_> = stderr
                .lines()
                .filter(|l| l.contains(STEP_SUMMARY_ENV))
                .collect();
            assert_eq!(said.len(), 1, "not one warning: {stderr}");
        }
        // The verdict's lines, alike.
        assert_eq!(from_bash.stdout, from_checker.stdout);
    }
}

/// What a line or a cell must not end with: whitespace, or a control
/// character (which the programs print as a space).
fn ends_blank(text: &str) -> bool {
    text.ends_with(|c: char| c.is_whitespace() || c.is_control())
}

/// The cells of a Markdown table row `| a | b |`; empty when not a row.
fn cells(line: &str) -> Vec<&str> {
    match line.strip_prefix("| ").and_then(|l| l.strip_suffix(" |")) {
        Some(inner) => inner.split(" | ").collect(),
        None => Vec::new(),
    }
}

/// The lines of an annotation's message, as the runner shows them.
fn annotation_lines(command: &str) -> Vec<String> {
    let message = command.split_once("::").map_or("", |(_, rest)| rest);
    let message = message.split_once("::").map_or("", |(_, m)| m);
    message
        .replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%25", "%")
        .split('\n')
        .map(str::to_owned)
        .collect()
}

/// kubelet's eviction messages end with ". ": no text line, annotation line
/// or summary cell of any corpus case may end with whitespace.
#[test]
fn no_line_annotation_or_summary_cell_ends_with_whitespace() {
    let dir = tempfile::tempdir().unwrap();
    for case in cases() {
        let summary = dir.path().join(format!("{}.md", case.name));
        let mut command = checker_command();
        command
            .args(["check", "--format", "github", "--snapshot"])
            .arg(case.pods())
            .arg("--events")
            .arg(case.events());
        let out = with_summary(&mut command, Some(&summary));
        let stdout = String::from_utf8(out.stdout).unwrap();
        for line in stdout.lines() {
            assert!(!ends_blank(line), "{}: line {line:?}", case.name);
            if line.starts_with("::") {
                for text in annotation_lines(line) {
                    assert!(!ends_blank(&text), "{}: annotation {line:?}", case.name);
                }
            }
        }
        let markdown = fs::read_to_string(&summary).unwrap_or_default();
        for line in markdown.lines() {
            for cell in cells(line) {
                assert!(
                    cell.is_empty() || !ends_blank(cell),
                    "{}: summary cell {cell:?} in {line:?}",
                    case.name
                );
            }
        }
    }
}
