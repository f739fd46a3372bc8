//! The driver contract (checker/programs/contract.json) through both
//! drivers: ONE table of bad inputs (`cases` below), each given to the
//! `verify-pods` checker and to the generated bash function (real bash, jq,
//! timeout, the shared stub kubectl). For each: the same exit code, the
//! table's for an error; and line by line the same stderr after each
//! driver's prefix (both prefixes from the table), each line the message of
//! the table the case names. Where the words come from each driver's own
//! JSON parser (jq vs the checker's), the case names those placeholders;
//! every other placeholder must still agree.

use verify_pods_tests::sandbox;

use checker::contract::{self, messages, Knob, Level, Message, Piece, Prefix};
use std::path::PathBuf;
use std::process::{Output, Stdio};
use verify_pods_tests::code;
use verify_pods_tests::replay::in_parallel;
use verify_pods_tests::sandbox::{sample, Sandbox};
use verify_pods_tests::text;

/// One bad input for both drivers.
struct Case {
    name: String,
    /// What makes the input bad: settings of the stub kubectl or of a driver.
    setup: Box<dyn Fn(&mut Sandbox)>,
    /// The messages of the table each driver prints, one per line, in order.
    says: Vec<&'static Message>,
    /// Placeholders whose values are each driver's own words.
    own_words: &'static [&'static str],
    /// Also run the checker offline (`--snapshot`): knobs are validated in
    /// every mode.
    offline_too: bool,
    /// Run with stdout on /dev/full.
    full_stdout: bool,
}

impl Case {
    fn new(name: impl Into<String>, says: &[&'static Message]) -> Self {
        Self {
            name: name.into(),
            setup: Box::new(|_| {}),
            says: says.to_vec(),
            own_words: &[],
            offline_too: false,
            full_stdout: false,
        }
    }

    fn setup(mut self, setup: impl Fn(&mut Sandbox) + 'static) -> Self {
        self.setup = Box::new(setup);
        self
    }

    fn own_words(mut self, names: &'static [&'static str]) -> Self {
        self.own_words = names;
        self
    }
}

/// Set one environment variable of the run.
fn env(name: &'static str, value: impl Into<String>) -> impl Fn(&mut Sandbox) + 'static {
    let value = value.into();
    move |sandbox: &mut Sandbox| {
        sandbox.set(name, &value);
    }
}

/// The stub prints a file of these bytes for the pods (or events) query.
fn serves(query: &'static str, bytes: &'static str) -> impl Fn(&mut Sandbox) + 'static {
    move |sandbox: &mut Sandbox| {
        let file = sandbox.file(&format!("{query}-served.json"), bytes);
        match query {
            "pods" => sandbox.pods(&[&file]),
            _ => sandbox.events(&file),
        };
    }
}

/// kubectl prints `printed` for the pods: output the drivers cannot read,
/// said in their own words (why).
fn unreadable_pods(name: &str, printed: &'static str) -> Case {
    Case::new(name, &[&messages::UNREADABLE_OUTPUT])
        .setup(serves("pods", printed))
        .own_words(&["why"])
}

/// Two outputs (the variables `outputs`) name one file of the sandbox
/// still to be made: refused as colliding, before anything runs.
fn one_new_file_twice(name: &str, file: &'static str, outputs: [&'static str; 2]) -> Case {
    Case::new(name, &[&messages::OUTPUTS_COLLIDE]).setup(move |s| {
        let path = s.path(file);
        let path = path.to_str().unwrap();
        s.with_tool("date")
            .set(outputs[0], path)
            .set(outputs[1], path);
    })
}

/// A knob's bad values, from the contract's knobs: each with the message
/// it must get.
fn knob_cases(knob: Knob) -> Vec<Case> {
    let mut bad: Vec<(String, &'static Message)> = [
        "junk", "-1", "+1", " 1", "1.5", "0x10", "1e3", "٣", "1\n2\t",
    ]
    .into_iter()
    .map(|text| (text.to_owned(), &messages::KNOB_NOT_A_NUMBER))
    .collect();
    // Issue 13's drift: a 19-digit deadline passed the checker.
    bad.push(("9".repeat(knob.max_digits + 1), &messages::KNOB_TOO_LARGE));
    if knob.minimum > 0 {
        bad.push((
            (knob.minimum - 1).to_string(),
            &messages::KNOB_BELOW_MINIMUM,
        ));
        bad.push(("000".to_owned(), &messages::KNOB_BELOW_MINIMUM));
    }
    bad.into_iter()
        .map(|(value, message)| {
            let mut case = Case::new(format!("{}={value:?}", knob.env), &[message])
                .setup(env(knob.env, value));
            case.offline_too = true;
            case
        })
        .collect()
}

/// THE table of bad inputs. The stub serves the sample red run (exit 1)
/// unless a case says otherwise.
fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = contract::KNOBS.into_iter().flat_map(knob_cases).collect();
    let unreadable = &messages::UNREADABLE_OUTPUT;
    let not_collected = &messages::EVENTS_NOT_COLLECTED;
    // kubectl ran and failed on the first page: its line, then the
    // kubeconfig and context it used (the stub has no current context).
    let unreached: &[&'static Message] = &[&messages::KUBECTL_FAILED, &messages::KUBECTL_CONFIG];
    cases.extend([
        Case::new("kubectl fails", unreached).setup(|s| {
            s.set("STUB_PODS_EXIT", "1").set(
                "STUB_STDERR",
                "error: You must be logged in to the server (Unauthorized)",
            );
        }),
        // One line, the last: kubectl's earlier lines are its retries.
        Case::new("kubectl fails, saying several lines", unreached).setup(
            |s| {
                s.set("STUB_PODS_EXIT", "1").set(
                    "STUB_STDERR",
                    "E1202 memcache.go:265] couldn't get current server API group list\n\n  error: the server is unreachable  ",
                );
            },
        ),
        Case::new("kubectl fails silently", unreached)
            .setup(env("STUB_PODS_EXIT", "5")),
        Case::new("the snapshot kubectl serves is missing", unreached)
            .setup(env("STUB_PODS", "/nonexistent/pods.json")),
        Case::new("kubectl is missing", &[&messages::KUBECTL_NOT_FOUND]).setup(|s| {
            s.without_kubectl();
        }),
        Case::new("kubectl is not executable", &[&messages::KUBECTL_CANNOT_RUN]).setup(|s| {
            s.without_kubectl();
            s.file("bin/kubectl", "#!/bin/sh\n");
        }),
        Case::new("kubectl hangs", &[&messages::KUBECTL_TIMED_OUT, &messages::KUBECTL_CONFIG]).setup(|s| {
            s.set("STUB_SLEEP", "30")
                .set(contract::KUBECTL_TIMEOUT_ENV, "1");
        }),
        // Issue 29: a list that runs a whole interval (10 s here) says what
        // it waits for, once, in both drivers, before the timeout's own
        // line (11 s).
        Case::new(
            "kubectl hangs past 10 s",
            &[&messages::KUBECTL_WAITING, &messages::KUBECTL_TIMED_OUT, &messages::KUBECTL_CONFIG],
        )
        .setup(|s| {
            s.set("STUB_SLEEP", "30")
                .set(contract::INTERVAL_ENV, "10")
                .set(contract::KUBECTL_TIMEOUT_ENV, "11");
        }),
        unreadable_pods("kubectl prints truncated JSON", "{\"kind\": \"List\", \"items\": ["),
        unreadable_pods("kubectl prints no JSON", "No resources found\n"),
        unreadable_pods("kubectl prints nothing", ""),
        // Inputs a user may take for a list (issue 24, item 7): the checker
        // names what is no JSON and what it expects, the bash says what jq
        // says; JSON that is no list (a single Pod, a bare array) both refuse
        // in the words of lib.jq's list_items.
        unreadable_pods("kubectl prints YAML", "apiVersion: v1\nitems: []\nkind: List\n"),
        unreadable_pods("kubectl prints the table of get pods -o wide", "NAMESPACE   NAME   READY   STATUS   RESTARTS   AGE   IP   NODE\n"),
        unreadable_pods("kubectl prints a single Pod", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}}"),
        unreadable_pods("kubectl prints a bare array", "[{\"kind\": \"Pod\"}]"),
        // Two pages of different lists: report.jq's own error (lib.jq's
        // list_items), the same words from jq and from jaq.
        Case::new("kubectl prints pages of two resourceVersions", &[unreadable]).setup(serves(
            "pods",
            "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}\n{\"metadata\":{\"resourceVersion\":\"2\"},\"items\":[]}\n",
        )),
        // Only pods are counted (issue 29): lib.jq's list_items names the
        // kind it found, the same words from jq and from jaq.
        Case::new("kubectl prints a NodeList", &[unreadable])
            .setup(serves("pods", "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"metadata\":{\"name\":\"n\"}}]}")),
        Case::new("kubectl prints a List of Events as the pods", &[unreadable])
            .setup(serves("pods", "{\"kind\":\"List\",\"items\":[{\"kind\":\"Event\",\"reason\":\"FailedScheduling\"}]}")),
        Case::new("the events are a List of Pods", &[not_collected])
            .setup(serves("events", "{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\"}]}")),
        // report.jq's own error: the same words from jq and from jaq.
        Case::new("kubectl prints a document without items", &[unreadable])
            .setup(serves("pods", "{\"kind\": \"List\"}")),
        Case::new("the events query fails", &[not_collected]).setup(|s| {
            s.set("STUB_EVENTS_EXIT", "1")
                .set("STUB_STDERR", "error: events are forbidden");
        }),
        Case::new("the events file kubectl serves is missing", &[not_collected])
            .setup(env("STUB_EVENTS", "/nonexistent/events.json")),
        Case::new("the events are no JSON", &[not_collected])
            .setup(serves("events", "No resources found\n"))
            .own_words(&["why"]),
        Case::new("the events have no items", &[not_collected])
            .setup(serves("events", "{\"kind\": \"List\"}")),
        // Issue 13's drift: an empty artifact directory was refused by the checker.
        Case::new("an empty artifact directory is unset", &[])
            .setup(env(contract::ARTIFACT_DIR_ENV, "")),
        Case::new("the artifact directory cannot be created", &[&messages::ARTIFACT_DIR_CREATE])
            .setup(|s| {
                let file = s.file("a-file", "");
                s.set(
                    contract::ARTIFACT_DIR_ENV,
                    file.join("artifacts").to_str().unwrap(),
                );
            }),
        // Issue 47: two outputs naming one file, refused before anything
        // runs (none written): one file by two spellings, one file still to
        // be made, a CI result and the step summary. (The CI results'
        // timestamps need date.)
        Case::new("CTRF and JUnit name one existing file", &[&messages::OUTPUTS_COLLIDE]).setup(
            |s| {
                let file = s.file("results.xml", "");
                let again = s.path("tmp/../results.xml");
                s.with_tool("date")
                    .set(contract::CTRF.env, file.to_str().unwrap())
                    .set(contract::JUNIT.env, again.to_str().unwrap());
            },
        ),
        one_new_file_twice(
            "CTRF and JUnit name one file to be made",
            "results.xml",
            [contract::CTRF.env, contract::JUNIT.env],
        ),
        one_new_file_twice(
            "CTRF and the step summary name one file",
            "results.md",
            [contract::CTRF.env, contract::STEP_SUMMARY_ENV],
        ),
        Case::new("the step summary is a directory", &[&messages::STEP_SUMMARY]).setup(|s| {
            let dir = s.path("tmp");
            s.set(contract::STEP_SUMMARY_ENV, dir.to_str().unwrap());
        }),
        Case::new("the step summary's directory is missing", &[&messages::STEP_SUMMARY])
            .setup(env(contract::STEP_SUMMARY_ENV, "/nonexistent/summary.md")),
        // Issue 30: the workloads setting, and a kind the server refuses
        // (one warning, the verdict stands).
        Case::new(
            "the workloads setting is neither true nor false",
            &[&messages::SETTING_NOT_A_BOOLEAN],
        )
        .setup(env(contract::WORKLOADS.env, "yes")),
        Case::new("StatefulSets are forbidden", &[&messages::WORKLOADS_NOT_LISTED]).setup(|s| {
            s.set(contract::WORKLOADS.env, "true")
                .set("STUB_WORKLOADS_EXIT", "1")
                .set(
                    "STUB_WORKLOADS_STDERR",
                    "Error from server (Forbidden): statefulsets.apps is forbidden: User \"ci\" cannot list resource \"statefulsets\"",
                );
        }),
        // The bash function cannot know why its host's log function failed.
        Case {
            full_stdout: true,
            ..Case::new("stdout is full", &[&messages::CANNOT_PRINT]).own_words(&["why"])
        },
    ]);
    cases
}

/// How each driver's lines on stderr begin, from the table.
fn prefix(prefixes: Prefix, message: &Message) -> &'static str {
    match message.level {
        Some(Level::Warning) => prefixes.warning,
        _ => prefixes.error,
    }
}

/// The value of each placeholder of `message` in `line`, or None when the
/// line is not that message. A placeholder takes the text up to the next
/// literal piece (the rest of the line when it is the last piece).
fn parse<'a>(message: &Message, line: &'a str) -> Option<Vec<(&'static str, &'a str)>> {
    let pieces = message.pieces();
    let mut rest = line;
    let mut values = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(text) => rest = rest.strip_prefix(text)?,
            Piece::Placeholder(name) => {
                let end = match pieces.get(i + 1) {
                    Some(Piece::Literal(next)) => rest.find(next)?,
                    Some(Piece::Placeholder(_)) => panic!("{}: adjacent placeholders", message.id),
                    None => rest.len(),
                };
                values.push((*name, &rest[..end]));
                rest = &rest[end..];
            }
        }
    }
    rest.is_empty().then_some(values)
}

/// The lines of a driver's stderr, each without that driver's prefix for
/// the message the case expects there.
fn said(case: &Case, driver: &str, prefixes: Prefix, output: &Output) -> Vec<String> {
    let stderr = text(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        case.says.len(),
        "{}: {driver} printed {stderr:?}",
        case.name
    );
    lines
        .iter()
        .zip(&case.says)
        .map(|(line, message)| {
            let words = line
                .strip_prefix(prefix(prefixes, message))
                .unwrap_or_else(|| panic!("{}: {driver}: {line:?} lacks its prefix", case.name));
            assert!(
                parse(message, words).is_some(),
                "{}: {driver}: {words:?} is not the table's {} ({:?})",
                case.name,
                message.id,
                message.text
            );
            words.to_owned()
        })
        .collect()
}

/// The two drivers' lines agree: equal, or, for the case's own words,
/// equal in every other placeholder.
fn assert_same_words(case: &Case, mode: &str, checker: &[String], bash: &[String]) {
    for ((message, checker), bash) in case.says.iter().zip(checker).zip(bash) {
        if case.own_words.is_empty() {
            assert_eq!(checker, bash, "{}: checker {mode} vs bash", case.name);
            continue;
        }
        let checker_values = parse(message, checker).expect("parsed above");
        let bash_values = parse(message, bash).expect("parsed above");
        for ((name, from_checker), (_, from_bash)) in checker_values.iter().zip(&bash_values) {
            if !case.own_words.contains(name) {
                assert_eq!(
                    from_checker, from_bash,
                    "{}: {{{name}}} of checker {mode} vs bash",
                    case.name
                );
            }
        }
    }
}

fn full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full"),
    )
}

/// The checker, live (the stub kubectl on PATH) or offline (`--snapshot`).
fn checker(sandbox: &Sandbox, case: &Case, snapshot: Option<&PathBuf>) -> Output {
    let mut command = sandbox.command(&sandbox::verify_pods_bin());
    command.arg("check");
    if let Some(snapshot) = snapshot {
        command.arg("--snapshot").arg(snapshot);
    }
    if case.full_stdout {
        command.stdout(full());
    }
    verify_pods_tests::run(&mut command)
}

fn bash(sandbox: &Sandbox, case: &Case) -> Output {
    let mut command = sandbox.command(&sandbox::wrapper());
    if case.full_stdout {
        command.stdout(full());
    }
    verify_pods_tests::run(&mut command)
}

/// Issue 13, item 1: both drivers, one table of bad inputs, the same exit
/// code and the same words on stderr, both from the contract's table.
#[test]
fn both_drivers_keep_the_contract_on_bad_input() {
    // Every case runs, and each broken one is named (its panic message
    // says how it broke), rather than stopping at the first. Two at a time:
    // each is a few processes on one core. A case's setup closure is not
    // Send, so each worker builds the table and runs the case it was handed.
    let broken: Vec<String> = in_parallel((0..cases().len()).collect(), 2, |i| {
        let case = &cases()[i];
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(case)));
        run.is_err().then(|| case.name.clone())
    })
    .into_iter()
    .flatten()
    .collect();
    assert_eq!(
        broken,
        Vec::<String>::new(),
        "cases that broke the contract"
    );
}

fn run_case(case: &Case) {
    let red = checker::exit::VALIDATION_FAILED as i32;
    {
        let mut sandbox = Sandbox::new();
        sandbox
            .pods(&[&sample("pods.json")])
            .events(&sample("events.json"))
            .set(contract::DEADLINE_ENV, "0");
        (case.setup)(&mut sandbox);
        let bash = bash(&sandbox, case);
        let mut checkers = vec![("live", checker(&sandbox, case, None))];
        if case.offline_too {
            let offline = checker(&sandbox, case, Some(&sample("pods.json")));
            checkers.push(("offline", offline));
        }
        // The table's exit code for an error, else the red sample's verdict.
        let expected = match case.says.last() {
            Some(message) if message.level == Some(Level::Error) => message.exit_code() as i32,
            _ => red,
        };
        assert_eq!(code(&bash), expected, "{}: bash exit code", case.name);
        let bash_words = said(case, "bash", contract::BASH_PREFIX, &bash);
        for (mode, output) in &checkers {
            assert_eq!(
                code(output),
                expected,
                "{}: checker {mode} exit code",
                case.name
            );
            let checker_words = said(case, "checker", contract::CHECKER_PREFIX, output);
            assert_same_words(case, mode, &checker_words, &bash_words);
        }
        assert_eq!(
            sandbox.leftovers(),
            Vec::<String>::new(),
            "{}: temp files",
            case.name
        );
    }
}

#[test]
fn a_line_is_parsed_by_its_template() {
    let line = "`kubectl get pods` failed (exit status: 1): error: x: y";
    assert_eq!(
        parse(&messages::KUBECTL_FAILED, line),
        Some(vec![
            ("command", "kubectl get pods"),
            ("code", "1"),
            ("why", "error: x: y"),
        ])
    );
    assert_eq!(parse(&messages::KUBECTL_FAILED, "`kubectl` failed"), None);
    assert_eq!(parse(&messages::KUBECTL_TIMED_OUT, line), None);
}
