//! `check --format github` and the step summary, through the binary.
//!
//! The workflow commands are decoded the way the GitHub runner decodes them
//! (actions/runner, ActionCommand: `::name k=v,k=v::data`, then `%0D`,
//! `%0A`, `%3A`, `%2C`, `%25` unescaped) and the summary is read back with a
//! real CommonMark/GFM parser: what a user sees must be the data of the
//! result, whatever characters the cluster put in it. github.jq and
//! summary.jq must also give the same bytes on jq 1.6 and libjq 1.8.

use assert_cmd::Command;
use checker::programs::{Output, Pass, Program, Var};
use checker::{contract, Programs};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The checker without the user's settings (GITHUB_STEP_SUMMARY among
/// them) and without NO_COLOR.
fn verify_pods() -> Command {
    Command::from_std(verify_pods_tests::checker_command())
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
}

/// A snapshot and events on disk, and what the checker makes of them.
struct Case {
    dir: tempfile::TempDir,
    pods: PathBuf,
    events: PathBuf,
    /// `--list-limit N`; `None`: neither the flag nor the variable (the default).
    limit: Option<u64>,
}

impl Case {
    fn new(pods: &Value, events: &Value) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let (p, e) = (dir.path().join("pods.json"), dir.path().join("events.json"));
        std::fs::write(&p, pods.to_string()).unwrap();
        std::fs::write(&e, events.to_string()).unwrap();
        Case {
            dir,
            pods: p,
            events: e,
            limit: None,
        }
    }

    fn with_limit(mut self, limit: u64) -> Case {
        self.limit = Some(limit);
        self
    }

    /// `verify-pods check --format FORMAT` on the case, at its limit.
    fn command(&self, format: &str) -> Command {
        let mut command = verify_pods();
        command
            .args(["check", "--format", format, "--snapshot"])
            .arg(&self.pods)
            .arg("--events")
            .arg(&self.events);
        if let Some(limit) = self.limit {
            command.args([contract::LIST_LIMIT.flag, &limit.to_string()]);
        }
        command
    }

    fn samples() -> Case {
        let read = |name| serde_json::from_slice(&std::fs::read(sample(name)).unwrap()).unwrap();
        Case::new(&read("pods.json"), &read("events.json"))
    }

    /// `check --snapshot … --events … --format FORMAT`, GITHUB_STEP_SUMMARY unset.
    fn check(&self, format: &str) -> std::process::Output {
        self.command(format).output().unwrap()
    }

    fn result(&self) -> Value {
        serde_json::from_slice(&self.check("json").stdout).unwrap()
    }

    /// The workflow commands: what `--format github` prints after the text.
    fn commands(&self) -> String {
        let text = String::from_utf8(self.check("text").stdout).unwrap();
        let github = String::from_utf8(self.check("github").stdout).unwrap();
        github
            .strip_prefix(&text)
            .unwrap_or_else(|| {
                panic!("github output does not start with the text output:\n{github}")
            })
            .to_owned()
    }

    /// The summary appended to GITHUB_STEP_SUMMARY by `check --format FORMAT`.
    fn summary(&self, format: &str) -> String {
        let file = self.dir.path().join(format!("summary-{format}.md"));
        let _ = std::fs::remove_file(&file);
        self.command(format)
            .env("GITHUB_STEP_SUMMARY", &file)
            .assert()
            .code(predicates::ord::lt(2));
        std::fs::read_to_string(&file).unwrap()
    }
}

fn pod(namespace: &str, name: &str, phase: &str, node: Option<&str>) -> Value {
    let mut pod = json!({
        "metadata": {"namespace": namespace, "name": name, "uid": format!("uid-{name}")},
        "spec": {},
        "status": {"phase": phase}
    });
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

/// A pending pod the scheduler left unbound, in its words (PodScheduled=False).
fn unschedulable(namespace: &str, name: &str, reason: &str, message: &str) -> Value {
    let mut pod = pod(namespace, name, "Pending", None);
    pod["status"]["conditions"] = json!([{
        "type": "PodScheduled", "status": "False", "reason": reason, "message": message
    }]);
    pod
}

fn failed(namespace: &str, name: &str, reason: &str, message: &str) -> Value {
    let mut pod = pod(namespace, name, "Failed", Some("kwok-node-0"));
    pod["status"]["containerStatuses"] =
        json!([{"state": {"terminated": {"reason": reason, "message": message}}}]);
    pod
}

fn event(namespace: &str, name: &str, seen: &str, count: u64, message: &str) -> Value {
    json!({
        "reason": "FailedScheduling",
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": name},
        "lastTimestamp": seen,
        "count": count,
        "message": message
    })
}

fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// Everything GitHub's escaping and Markdown tables have to survive.
const NASTY_NS: &str = "team|a:b,c";
const NASTY_POD: &str = "web%0A-1:x,y\r\n::error::pwned\u{1b}[31m|`*_<b>&[l](u)~\\ü🚀";
const NASTY_REASON: &str = "Un:sched,ulable%0A";
const NASTY_MESSAGE: &str =
    "0/3 nodes: 100% busy,\nnext line\r\n| a | b |\ttab `code` <i>x</i> &amp; \\|";

fn nasty() -> Case {
    let pods = list(vec![
        pod("default", "web-0", "Running", Some("kwok-node-0")),
        pod(NASTY_NS, NASTY_POD, "Pending", None),
        unschedulable(NASTY_NS, "with-reason", NASTY_REASON, NASTY_MESSAGE),
        failed("default", "oom|1", "OOM:Killed", NASTY_MESSAGE),
    ]);
    let events = list(vec![
        event(
            NASTY_NS,
            NASTY_POD,
            "2026-05-28T10:01:00Z",
            2,
            NASTY_MESSAGE,
        ),
        event(
            NASTY_NS,
            NASTY_POD,
            "2026-05-28T10:02:00Z",
            1,
            "newest %25 first",
        ),
    ]);
    Case::new(&pods, &events)
}

/// Pods of a few causes: 12 with the scheduler's one message and an event
/// each, 3 without a condition (one with events), 3 OOMKilled with their
/// own messages, 1 evicted. Names of one width: none is part of another.
fn crowd() -> Case {
    let mut pods = vec![pod("default", "web-00", "Running", Some("kwok-node-0"))];
    let mut events = Vec::new();
    for i in 0..12 {
        let name = format!("gpu-{i:02}");
        pods.push(unschedulable(
            "train",
            &name,
            "Unschedulable",
            "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",
        ));
        events.push(event(
            "train",
            &name,
            &format!("2026-05-28T10:{i:02}:00Z"),
            i + 1,
            &format!("0/4 nodes are available (try {i:02})"),
        ));
    }
    for i in 0..3 {
        pods.push(pod("batch", &format!("late-{i:02}"), "Pending", None));
    }
    for (seen, message) in [
        ("2026-05-28T11:00:00Z", "older"),
        ("2026-05-28T11:01:00Z", "newer"),
    ] {
        events.push(event("batch", "late-01", seen, 1, message));
    }
    for i in 0..3 {
        pods.push(failed(
            "etl",
            &format!("oom-{i:02}"),
            "OOMKilled",
            &format!("used {i}Gi"),
        ));
    }
    pods.push(failed(
        "etl",
        "evict-00",
        "Evicted",
        "node had disk pressure",
    ));
    Case::new(&list(pods), &list(events))
}

/// One workflow command as the runner sees it.
#[derive(Debug)]
struct WorkflowCommand {
    name: String,
    properties: Vec<(String, String)>,
    data: String,
}

impl WorkflowCommand {
    fn title(&self) -> &str {
        self.properties
            .iter()
            .find(|(k, _)| k == "title")
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }
}

fn unescape(text: &str, property: bool) -> String {
    let mut text = text.replace("%0D", "\r").replace("%0A", "\n");
    if property {
        text = text.replace("%3A", ":").replace("%2C", ",");
    }
    text.replace("%25", "%")
}

/// Parse `::name k=v,k=v::data` as actions/runner does.
fn parse_command(line: &str) -> WorkflowCommand {
    let body = line
        .strip_prefix("::")
        .unwrap_or_else(|| panic!("not a workflow command: {line:?}"));
    let (head, data) = body
        .split_once("::")
        .unwrap_or_else(|| panic!("no data separator: {line:?}"));
    let (name, props) = head.split_once(' ').unwrap_or((head, ""));
    let properties = props
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p
                .split_once('=')
                .unwrap_or_else(|| panic!("bad property {p:?} in {line:?}"));
            (k.to_owned(), unescape(v, true))
        })
        .collect();
    WorkflowCommand {
        name: name.to_owned(),
        properties,
        data: unescape(data, false),
    }
}

fn parse_commands(text: &str) -> Vec<WorkflowCommand> {
    assert!(text.is_empty() || text.ends_with('\n'), "{text:?}");
    text.lines().map(parse_command).collect()
}

/// What the runner shows of a value: no line ends with whitespace (a CR
/// before a LF goes with it); CR and LF survive (escaped), other control
/// characters would break the log line and become spaces.
fn as_shown(value: &str) -> String {
    value
        .split('\n')
        .map(|line| line.trim_end_matches(|c: char| c.is_whitespace() || c.is_control()))
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .map(|c| {
            if c.is_control() && c != '\r' && c != '\n' && (c as u32) < 128 {
                ' '
            } else {
                c
            }
        })
        .collect()
}

fn pod_ref(v: &Value) -> String {
    format!(
        "{}/{}",
        v["namespace"].as_str().unwrap(),
        v["name"].as_str().or(v["pod"].as_str()).unwrap()
    )
}

/// GitHub keeps at most this many annotations of one level per step
/// (actions/runner); the verdict is one of the errors.
const GITHUB_PER_STEP: usize = 10;

/// The default list limit, from the contract.
fn default_limit() -> u64 {
    contract::LIST_LIMIT.default
}

/// A string a lib.jq definition returns: `def NAME: "WORDS";`.
fn lib_words(name: &str) -> String {
    let head = format!("def {name}: \"");
    let at = Programs::LIB
        .find(&head)
        .unwrap_or_else(|| panic!("lib.jq defines {name}"));
    let rest = &Programs::LIB[at + head.len()..];
    rest[..rest.find("\";").unwrap()].to_owned()
}

fn errors(commands: &[WorkflowCommand]) -> Vec<&WorkflowCommand> {
    commands.iter().filter(|c| c.name == "error").collect()
}

fn warnings(commands: &[WorkflowCommand]) -> Vec<&WorkflowCommand> {
    commands.iter().filter(|c| c.name == "warning").collect()
}

/// GitHub's bound, whatever the cluster: at most ten errors and ten warnings.
fn assert_within_github(commands: &[WorkflowCommand]) {
    assert!(errors(commands).len() <= GITHUB_PER_STEP, "{commands:?}");
    assert!(warnings(commands).len() <= GITHUB_PER_STEP, "{commands:?}");
}

/// The pods of a group (JSON `unscheduled_groups` / `failed_groups`), in
/// the result's order: unscheduled pods by their (reason, message), failed
/// pods by their reason (docs/outputs.md: the JSON keys).
fn members<'a>(result: &'a Value, group: &Value, unscheduled: bool) -> Vec<&'a Value> {
    let pods = if unscheduled {
        "unscheduled_pods"
    } else {
        "failed_pods"
    };
    result[pods]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["reason"] == group["reason"] && (!unscheduled || p["message"] == group["message"])
        })
        .collect()
}

/// The groups in the order the annotations give them: unscheduled first.
fn groups(result: &Value) -> Vec<(bool, &Value)> {
    let of = |key: &str, unscheduled| {
        result[key]
            .as_array()
            .unwrap()
            .iter()
            .map(move |g| (unscheduled, g))
    };
    of("unscheduled_groups", true)
        .chain(of("failed_groups", false))
        .collect()
}

/// `data` from `at` on has `wanted` in order; returns where the last ends.
fn find_in_order(data: &str, mut at: usize, wanted: &[String]) -> usize {
    for w in wanted {
        let found = data[at..]
            .find(w.as_str())
            .unwrap_or_else(|| panic!("{w:?} not after byte {at} of {data:?}"));
        at += found + w.len();
    }
    at
}

/// The text of one value as an annotation shows it; `None` for null.
fn shown(value: &Value) -> Option<String> {
    value.as_str().map(|s| as_shown(s.trim_end()))
}

/// One error per group, at the limit `limit` (> 0): its count in the title;
/// its cause (the group's reason and message; for unscheduled pods without
/// a condition, lib.jq's words); its first `limit` pods in the result's
/// order and no other; how many are left; and for unscheduled pods the
/// group's own newest FailedScheduling events (issue 29), and no others.
fn assert_group_annotation(
    command: &WorkflowCommand,
    result: &Value,
    unscheduled: bool,
    group: &Value,
    limit: u64,
) {
    assert_eq!(command.name, "error");
    let count = group["count"].as_u64().unwrap();
    assert!(
        command.title().starts_with(&format!("{count} ")),
        "{command:?} for {group}"
    );
    let data = &command.data;
    let mut cause = Vec::new();
    if unscheduled && group["reason"].is_null() && group["message"].is_null() {
        cause.push(lib_words("no_scheduler_condition"));
    }
    cause.extend(shown(&group["reason"]));
    cause.extend(shown(&group["message"]));
    assert!(
        data.starts_with(&cause[0]),
        "{command:?} starts with {cause:?}"
    );
    let mut at = find_in_order(data, 0, &cause);
    let all = members(result, group, unscheduled);
    assert_eq!(all.len() as u64, count, "{group}");
    let named = &all[..all.len().min(limit as usize)];
    assert!(!named.is_empty());
    // Each named pod on a line of its own, right after the cause and one
    // another, with its message when the group has none.
    for pod in named {
        let mut line = format!("\n{}", as_shown(&pod_ref(pod)));
        if !unscheduled && group["message"].is_null() {
            if let Some(message) = shown(&pod["message"]).filter(|m| !m.is_empty()) {
                line = format!("{line}: {message}");
            }
        }
        assert!(
            data[at..].starts_with(&line),
            "{line:?} at byte {at} of {data:?}"
        );
        at += line.len();
        assert!(at == data.len() || data[at..].starts_with('\n'), "{data:?}");
    }
    // Not listed as a pod (its events may be among the group's newest).
    for pod in &all[named.len()..] {
        assert!(
            !data.lines().any(|l| l == as_shown(&pod_ref(pod))),
            "{pod} is not named: {command:?}"
        );
    }
    let left = all.len() - named.len();
    if left > 0 {
        let line = data[at..]
            .strip_prefix('\n')
            .unwrap()
            .lines()
            .next()
            .unwrap();
        assert!(line.contains(&left.to_string()), "{left} left in {line:?}");
        assert!(all.iter().all(|p| !line.contains(&as_shown(&pod_ref(p)))));
        at += 1 + line.len();
    }
    if !unscheduled {
        return;
    }
    // Issue 29: the group's own newest events (of any of its pods, named
    // or not), as many as the text lists under it.
    let mine = group_events(result, group, limit);
    let others: Vec<&Value> = result["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| !mine.contains(e))
        .collect();
    for e in &mine {
        at = find_in_order(
            data,
            at,
            &[
                as_shown(e["last_seen"].as_str().unwrap()),
                as_shown(&pod_ref(e)),
                format!("x{}", e["count"]),
                shown(&e["message"]).unwrap(),
            ],
        );
    }
    for e in others {
        assert!(
            !data.contains(e["last_seen"].as_str().unwrap()),
            "{e} is not one of the group's newest events: {command:?}"
        );
    }
}

/// Issue 29: a group's own newest events: the list limit split evenly
/// among the unscheduled groups shown (at least one each).
fn group_events<'a>(result: &'a Value, group: &Value, limit: u64) -> Vec<&'a Value> {
    let groups = result["unscheduled_groups"].as_array().unwrap().len() as u64;
    let share = (limit / groups.min(limit).max(1)).max(1) as usize;
    let pods = members(result, group, true);
    result["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| pods.iter().any(|p| pod_ref(p) == pod_ref(e)))
        .take(share)
        .collect()
}

/// At the limit `limit` (> 0): the verdict, then an error per group (at
/// most nine), then a warning when groups are left out.
fn assert_group_annotations(case: &Case, limit: u64) -> Vec<WorkflowCommand> {
    let result = case.result();
    let commands = parse_commands(&case.commands());
    assert_within_github(&commands);
    assert_eq!(commands[0].name, "error");
    // The verdict: the counts and how they were observed, from the result.
    let verdict: Vec<String> = ["unscheduled", "failed", "attempts", "waited_seconds"]
        .map(|key| result[key].to_string())
        .into();
    find_in_order(&commands[0].data, 0, &verdict);
    let groups = groups(&result);
    let shown = groups.len().min(GITHUB_PER_STEP - 1);
    assert_eq!(errors(&commands).len(), 1 + shown, "{commands:?}");
    for ((unscheduled, group), command) in groups[..shown].iter().zip(&commands[1..]) {
        assert_group_annotation(command, &result, *unscheduled, group, limit);
    }
    let warned = warnings(&commands);
    if groups.len() > shown {
        assert_eq!(warned.len(), 1, "{commands:?}");
        assert_eq!(commands.last().unwrap().name, "warning");
        assert!(warned[0].data.contains(&(groups.len() - shown).to_string()));
    } else {
        assert!(warned.is_empty(), "{commands:?}");
    }
    commands
}

/// At the limit 0: the verdict, then an error per pod (at most nine) with
/// its scheduler's words and its events, newest first, then a warning
/// saying how many pods are left.
fn assert_pod_annotations(case: &Case) -> Vec<WorkflowCommand> {
    let result = case.result();
    let commands = parse_commands(&case.commands());
    assert_within_github(&commands);
    assert!(!commands[0].title().is_empty());
    let unscheduled = result["unscheduled_pods"].as_array().unwrap();
    let failed = result["failed_pods"].as_array().unwrap();
    let pods: Vec<(bool, &Value)> = unscheduled
        .iter()
        .map(|p| (true, p))
        .chain(failed.iter().map(|p| (false, p)))
        .collect();
    let annotated = pods.len().min(GITHUB_PER_STEP - 1);
    assert_eq!(errors(&commands).len(), 1 + annotated, "{commands:?}");
    for ((unscheduled, pod), command) in pods[..annotated].iter().zip(&commands[1..]) {
        assert_eq!(command.name, "error");
        assert!(
            command.title().contains(&as_shown(&pod_ref(pod))),
            "{command:?}"
        );
        let words: Vec<String> = [&pod["reason"], &pod["message"]]
            .into_iter()
            .filter_map(shown)
            .collect();
        let at = find_in_order(&command.data, 0, &words);
        if *unscheduled {
            let mine: Vec<String> = result["events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| pod_ref(e) == pod_ref(pod))
                .map(|e| shown(&e["message"]).unwrap())
                .collect();
            find_in_order(&command.data, at, &mine);
        }
    }
    let warned = warnings(&commands);
    if pods.len() > annotated {
        assert_eq!(warned.len(), 1, "{commands:?}");
        assert!(warned[0]
            .data
            .contains(&(pods.len() - annotated).to_string()));
    } else {
        assert!(warned.is_empty(), "{commands:?}");
    }
    commands
}

#[test]
fn samples_give_the_verdict_first_then_one_error_per_group_with_its_events() {
    let case = Case::samples();
    assert_eq!(case.check("github").status.code(), Some(1));
    let result = case.result();
    assert!(result["events"].as_array().is_some_and(|e| !e.is_empty()));
    let commands = assert_group_annotations(&case, default_limit());
    assert!(commands.iter().all(|c| c.name == "error"), "{commands:?}");
    // The default is the contract's: the flag and the variable at that
    // value give the same bytes; another value does not.
    let default = case.check("github").stdout;
    let limit = default_limit().to_string();
    let flag = Case::samples().with_limit(default_limit());
    assert_eq!(flag.check("github").stdout, default);
    let env = |value: &str| {
        verify_pods()
            .env(contract::LIST_LIMIT.env, value)
            .args(["check", "--format", "github", "--snapshot"])
            .arg(&case.pods)
            .arg("--events")
            .arg(&case.events)
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(env(&limit), default);
    assert_ne!(env("0"), default);
}

#[test]
fn at_the_limit_0_samples_give_one_error_per_pod_with_its_events() {
    let case = Case::samples().with_limit(0);
    let result = case.result();
    let events = result["events"].as_array().unwrap();
    assert!(!events.is_empty());
    let commands = assert_pod_annotations(&case);
    assert!(commands.iter().all(|c| c.name == "error"), "{commands:?}");
    // Every event of the sample is in its pod's annotation.
    let data: String = commands.iter().map(|c| c.data.as_str()).collect();
    for e in events {
        assert!(data.contains(e["message"].as_str().unwrap()), "{e}");
    }
}

#[test]
fn a_crowd_is_named_up_to_the_limit_with_its_newest_events() {
    for limit in [default_limit(), 1] {
        let case = crowd().with_limit(limit);
        let result = case.result();
        // The case has what it tests: a group over the limit, a group
        // without a condition, failed pods with and without one message.
        let biggest = result["unscheduled_groups"][0]["count"].as_u64().unwrap();
        assert!(biggest > limit, "{result}");
        assert!(groups(&result)
            .iter()
            .any(|(u, g)| *u && g["reason"].is_null()));
        assert!(groups(&result)
            .iter()
            .any(|(u, g)| !*u && g["message"].is_null()));
        assert_group_annotations(&case, limit);
    }
    assert_pod_annotations(&crowd().with_limit(0));
}

#[test]
fn escaping_survives_the_runner_and_nothing_else_becomes_a_command() {
    for limit in [None, Some(0)] {
        let mut case = nasty();
        if let Some(limit) = limit {
            case = case.with_limit(limit);
        }
        let result = case.result();
        assert_eq!(result["unscheduled"], 2);
        assert_eq!(result["failed"], 1);
        let printed = case.commands();
        // Every printed line is one command: no raw CR or newline got through.
        assert!(!printed.contains('\r'));
        let commands = parse_commands(&printed);
        assert_eq!(commands.len(), 4, "{commands:?}");
        let nasty_pod = as_shown(&format!("{NASTY_NS}/{NASTY_POD}"));
        let unscheduled = commands
            .iter()
            .find(|c| c.title().contains(&nasty_pod) || c.data.contains(&nasty_pod))
            .unwrap_or_else(|| panic!("{commands:?}"));
        assert_eq!(unscheduled.name, "error");
        assert!(
            unscheduled.data.contains(&as_shown(NASTY_MESSAGE)),
            "{unscheduled:?}"
        );
        let newest = unscheduled.data.find("newest %25 first").unwrap();
        assert!(newest < unscheduled.data.find(&as_shown(NASTY_MESSAGE)).unwrap());
        let failed = commands
            .iter()
            .find(|c| c.data.contains("OOM:Killed"))
            .unwrap_or_else(|| panic!("{commands:?}"));
        assert!(failed.data.contains(&as_shown(NASTY_MESSAGE)));
        let with_reason = commands
            .iter()
            .find(|c| c.data.contains(NASTY_REASON))
            .unwrap_or_else(|| panic!("{commands:?}"));
        assert!(with_reason.data.contains(&as_shown(NASTY_MESSAGE)));
        if limit == Some(0) {
            assert!(unscheduled.title().contains(&nasty_pod), "{unscheduled:?}");
            assert!(failed.title().contains("default/oom|1"), "{failed:?}");
            assert_pod_annotations(&case);
        } else {
            assert!(failed.data.contains("default/oom|1"), "{failed:?}");
            assert_group_annotations(&case, default_limit());
        }
    }
}
#[test]
fn a_pass_prints_no_command_and_an_empty_cluster_one_warning() {
    let pass = Case::new(
        &list(vec![pod("default", "web-0", "Running", Some("n"))]),
        &list(vec![]),
    );
    assert_eq!(pass.check("github").status.code(), Some(0));
    assert_eq!(pass.commands(), "");
    let empty = Case::new(
        &list(vec![pod("kube-system", "dns", "Pending", None)]),
        &list(vec![]),
    );
    assert_eq!(empty.check("github").status.code(), Some(0));
    let commands = parse_commands(&empty.commands());
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].name, "warning");
}

#[test]
fn many_failing_pods_stay_within_githubs_ten_errors_and_say_how_many_are_left() {
    // 30 pods of one cause; 30 causes of one pod each, and 12 failed reasons.
    let one_cause = || {
        let pods = (0..30)
            .map(|i| pod("team", &format!("p-{i:02}"), "Pending", None))
            .collect();
        Case::new(&list(pods), &list(vec![]))
    };
    let many_causes = || {
        let pods = (0..30)
            .map(|i| {
                unschedulable(
                    "team",
                    &format!("p-{i:02}"),
                    "Unschedulable",
                    &format!("cause {i:02}"),
                )
            })
            .chain(
                (0..12).map(|i| failed("team", &format!("f-{i:02}"), &format!("Reason{i:02}"), "")),
            )
            .collect();
        Case::new(&list(pods), &list(vec![]))
    };
    let limit = default_limit();
    // Every pod its own error at the limit 0: nine, then how many are left.
    for case in [one_cause().with_limit(0), many_causes().with_limit(0)] {
        let commands = assert_pod_annotations(&case);
        assert_eq!(errors(&commands).len(), GITHUB_PER_STEP);
        assert_eq!(warnings(&commands).len(), 1);
        assert!(
            !errors(&commands)[0].title().contains("team/"),
            "the verdict comes first"
        );
    }
    // One group: one error naming the first N pods and how many more.
    let case = one_cause();
    let result = case.result();
    assert_eq!(result["unscheduled_groups"].as_array().unwrap().len(), 1);
    assert!(result["unscheduled"].as_u64().unwrap() > limit);
    let commands = assert_group_annotations(&case, limit);
    assert_eq!(commands.len(), 2, "{commands:?}");
    // More groups than errors: nine groups, then a warning with the rest.
    let case = many_causes();
    let result = case.result();
    let count = groups(&result).len();
    assert!(count > GITHUB_PER_STEP, "{count}");
    let commands = assert_group_annotations(&case, limit);
    assert_eq!(errors(&commands).len(), GITHUB_PER_STEP);
    assert_eq!(warnings(&commands).len(), 1);
    assert!(warnings(&commands)[0]
        .data
        .contains(&(count - (GITHUB_PER_STEP - 1)).to_string()));
}

/// The tables of a Markdown document, as rows of cell texts.
fn tables(markdown: &str) -> Vec<Vec<Vec<String>>> {
    let mut tables = Vec::new();
    let mut cell: Option<String> = None;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => tables.push(Vec::new()),
            Event::Start(Tag::TableHead) | Event::Start(Tag::TableRow) => {
                tables.last_mut().unwrap().push(Vec::new());
            }
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                if let Some(cell) = &mut cell {
                    cell.push_str(&t);
                }
            }
            Event::End(TagEnd::TableCell) => {
                let text = cell.take().unwrap();
                tables.last_mut().unwrap().last_mut().unwrap().push(text);
            }
            _ => {}
        }
    }
    tables
}

/// What a table cell shows of a value: every control character a space.
fn cell(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text.chars()
        .map(|c| {
            if c.is_control() && (c as u32) < 128 {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The data rows of a table (without its header), checked for width.
fn body(table: &[Vec<String>], width: usize) -> Vec<Vec<String>> {
    assert!(table.iter().all(|row| row.len() == width), "{table:?}");
    table[1..]
        .iter()
        .map(|row| row.iter().map(|c| c.trim().to_owned()).collect())
        .collect()
}

/// The counts table, first; the other tables.
fn assert_summary_counts(summary: &str, result: &Value) -> Vec<Vec<Vec<String>>> {
    let tables = tables(summary);
    let counts = body(&tables[0], 9);
    let keys = [
        "total",
        "running",
        "pending",
        "unscheduled",
        "failed",
        "succeeded",
        "other",
        "attempts",
    ];
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(counts[0][i], cell(&result[key]), "{key}");
    }
    assert!(counts[0][8].starts_with(&cell(&result["waited_seconds"])));
    tables[1..].to_vec()
}

/// The events table: every event of the result, newest first.
fn assert_events_table(table: &[Vec<String>], events: &[Value]) {
    let rows = body(table, 4);
    let want: Vec<Vec<String>> = events
        .iter()
        .map(|e| {
            vec![
                cell(&e["last_seen"]),
                cell(&json!(pod_ref(e))),
                cell(&e["count"]),
                cell(&e["message"]),
            ]
        })
        .collect();
    assert_eq!(rows, want);
}

/// At the limit 0: a row per pod, as before the digest.
fn assert_summary_shows_every_pod(summary: &str, result: &Value) {
    let tables = assert_summary_counts(summary, result);
    let mut rest = tables.iter();
    let unscheduled = result["unscheduled_pods"].as_array().unwrap();
    if !unscheduled.is_empty() {
        // The scheduler's reason and message: an empty cell when null.
        let rows = body(rest.next().unwrap(), 4);
        let or_empty = |v: &Value| if v.is_null() { String::new() } else { cell(v) };
        let want: Vec<Vec<String>> = unscheduled
            .iter()
            .map(|p| {
                vec![
                    cell(&p["namespace"]),
                    cell(&p["name"]),
                    or_empty(&p["reason"]),
                    or_empty(&p["message"]),
                ]
            })
            .collect();
        assert_eq!(rows, want);
    }
    let failed = result["failed_pods"].as_array().unwrap();
    if !failed.is_empty() {
        let rows = body(rest.next().unwrap(), 4);
        let want: Vec<Vec<String>> = failed
            .iter()
            .map(|p| {
                ["namespace", "name", "reason", "message"]
                    .iter()
                    .map(|k| cell(&p[k]))
                    .collect()
            })
            .collect();
        assert_eq!(rows, want);
    }
    // The events after the failed pods (issue 29): every one, newest first.
    if let Some(events) = result["events"].as_array().filter(|e| !e.is_empty()) {
        assert_events_table(rest.next().unwrap(), events);
    }
    assert!(rest.next().is_none(), "no other table");
}

/// A group's "First pods" cell: its first `limit` pods in the result's
/// order (with their own message when the group has none) and no other,
/// then how many more.
fn assert_members_cell(text: &str, result: &Value, unscheduled: bool, group: &Value, limit: u64) {
    let all = members(result, group, unscheduled);
    assert_eq!(all.len() as u64, group["count"].as_u64().unwrap());
    let named = &all[..all.len().min(limit as usize)];
    let wanted: Vec<String> = named
        .iter()
        .map(|p| {
            let mut shown = cell(&json!(pod_ref(p)));
            if !unscheduled && group["message"].is_null() {
                let message = cell(&p["message"]);
                if !message.is_empty() {
                    shown = format!("{shown}: {message}");
                }
            }
            shown
        })
        .collect();
    let at = find_in_order(text, 0, &wanted);
    for p in &all[named.len()..] {
        assert!(
            !text.contains(&cell(&json!(pod_ref(p)))),
            "{p} not named in {text:?}"
        );
    }
    let left = all.len() - named.len();
    if left > 0 {
        assert!(
            text[at..].contains(&left.to_string()),
            "{left} more in {text:?}"
        );
    } else {
        assert_eq!(at, text.len(), "nothing after the last pod: {text:?}");
    }
}

/// At a limit over 0: the digest, a row per group (the first `limit`), with
/// its count, cause and first pods, then the events; every pod not named
/// is counted in the last line.
fn assert_summary_digest(summary: &str, result: &Value, limit: u64) -> [u64; 2] {
    let tables = assert_summary_counts(summary, result);
    let mut rest = tables.iter();
    let or_empty = |v: &Value| if v.is_null() { String::new() } else { cell(v) };
    let mut named = [0, 0];
    for (unscheduled, key) in [(true, "unscheduled_groups"), (false, "failed_groups")] {
        let groups = result[key].as_array().unwrap();
        if groups.is_empty() {
            continue;
        }
        let rows = body(rest.next().unwrap(), 4);
        let shown = &groups[..groups.len().min(limit as usize)];
        assert_eq!(rows.len(), shown.len(), "{rows:?}");
        for (row, group) in rows.iter().zip(shown) {
            let reason = if unscheduled && group["reason"].is_null() && group["message"].is_null() {
                lib_words("no_scheduler_condition")
            } else {
                or_empty(&group["reason"])
            };
            assert_eq!(
                row[..3],
                [cell(&group["count"]), reason, or_empty(&group["message"])]
            );
            assert_members_cell(&row[3], result, unscheduled, group, limit);
            named[usize::from(!unscheduled)] += group["count"].as_u64().unwrap().min(limit);
        }
    }
    // The events after the failed pods (issue 29): a table for each group
    // shown that has events, its own newest.
    let groups = result["unscheduled_groups"].as_array().unwrap();
    for group in &groups[..groups.len().min(limit as usize)] {
        let events: Vec<Value> = group_events(result, group, limit)
            .into_iter()
            .cloned()
            .collect();
        if !events.is_empty() {
            assert_events_table(rest.next().unwrap(), &events);
        }
    }
    assert!(rest.next().is_none(), "no other table");
    let left = [
        result["unscheduled"].as_u64().unwrap() - named[0],
        result["failed"].as_u64().unwrap() - named[1],
    ];
    if left != [0, 0] {
        let last = summary.trim_end().lines().last().unwrap();
        find_in_order(
            last,
            0,
            &[
                left[0],
                result["unscheduled"].as_u64().unwrap(),
                left[1],
                result["failed"].as_u64().unwrap(),
            ]
            .map(|n| n.to_string()),
        );
    }
    left
}

#[test]
fn the_summary_tables_show_the_result_data_exactly() {
    let mut left_out = 0;
    for make in [Case::samples as fn() -> Case, nasty, crowd] {
        for limit in [default_limit(), 1, 0] {
            let case = make().with_limit(limit);
            let result = case.result();
            let summary = case.summary("text");
            if limit == 0 {
                assert_summary_shows_every_pod(&summary, &result);
            } else {
                left_out += assert_summary_digest(&summary, &result, limit)
                    .iter()
                    .sum::<u64>();
            }
            assert!(
                summary.ends_with("\n\n"),
                "a blank line separates appended summaries"
            );
        }
    }
    assert!(left_out > 0, "some case leaves pods out of the digest");
}

#[test]
fn every_format_appends_the_same_summary_and_keeps_what_was_there() {
    let case = nasty();
    let text = case.summary("text");
    assert_eq!(case.summary("json"), text);
    assert_eq!(case.summary("github"), text);
    let file = case.dir.path().join("existing.md");
    std::fs::write(&file, "# earlier step\n").unwrap();
    for _ in 0..2 {
        verify_pods()
            .env("GITHUB_STEP_SUMMARY", &file)
            .args(["check", "--snapshot"])
            .arg(&case.pods)
            .arg("--events")
            .arg(&case.events)
            .assert()
            .code(1);
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("# earlier step\n{text}{text}")
    );
}

#[test]
fn no_summary_without_the_variable_and_a_warning_when_it_cannot_be_written() {
    let case = Case::samples();
    let dir = case.dir.path();
    verify_pods()
        .current_dir(dir)
        .env("GITHUB_STEP_SUMMARY", "")
        .args(["check", "--snapshot"])
        .arg(&case.pods)
        .assert()
        .code(1);
    let before: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert_eq!(
        before.len(),
        2,
        "only pods.json and events.json: {before:?}"
    );
    verify_pods()
        .env("GITHUB_STEP_SUMMARY", dir)
        .args(["check", "--snapshot"])
        .arg(&case.pods)
        .assert()
        // A report never changes the verdict (issue 29): still 1, a warning.
        .code(1)
        .stderr(predicates::str::contains("warning: GITHUB_STEP_SUMMARY"));
}

/// The value a test gives a program's `$variable`: the list limit is the
/// only one github.jq and summary.jq take (their descriptors say so).
fn var_value(var: &Var, list_limit: u64) -> String {
    assert_eq!(
        var.name(),
        contract::LIST_LIMIT.name,
        "a variable the test has no value for"
    );
    list_limit.to_string()
}

/// jq 1.6 (/usr/bin/jq) on a result, with the options the program's
/// descriptor gives (output flag, each variable as its descriptor passes it).
fn jq16(program: &Program, result: &Value, dir: &Path, list_limit: u64) -> String {
    let prog = dir.join("program.jq");
    std::fs::write(&prog, program.text).unwrap();
    let out = std::process::Command::new("jq")
        .args(program.jq_options(|_, var| var_value(var, list_limit)))
        .arg("-f")
        .arg(&prog)
        .write_stdin_json(result)
        .expect("jq runs (make tools installs it)");
    stdout_of_success(out)
}

/// The same with libjq 1.8 through the PyPI `jq` module, the variables
/// from the descriptor, printed as the descriptor's output flag would.
fn libjq(program: &Program, result: &Value, list_limit: u64) -> String {
    let args: serde_json::Map<String, Value> = program
        .vars
        .iter()
        .map(|var| {
            let text = var_value(var, list_limit);
            let value = match var.pass {
                Pass::Arg => Value::String(text),
                Pass::ArgJson => serde_json::from_str(&text).unwrap(),
                Pass::SlurpFile => panic!("{} takes a file", var.jaq_name),
            };
            (var.name().to_owned(), value)
        })
        .collect();
    let input = json!({
        "program": program.text,
        "args": args,
        "raw": program.output == Output::Lines,
        "data": result,
    });
    let script = "import jq, json, sys\n\
                  job = json.load(sys.stdin)\n\
                  for v in jq.compile(job['program'], args=job['args']).input_value(job['data']).all():\n\
                  \x20   line = v if job['raw'] and isinstance(v, str) else json.dumps(v, separators=(',', ':'))\n\
                  \x20   sys.stdout.buffer.write((line + '\\n').encode())";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .write_stdin_json(&input)
        .expect("python3 runs");
    stdout_of_success(out)
}

/// The stdout of a run that must have succeeded (else its stderr says why).
fn stdout_of_success(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

trait WriteStdin {
    fn write_stdin_bytes(&mut self, input: Vec<u8>) -> std::io::Result<std::process::Output>;
    fn write_stdin_json(&mut self, value: &Value) -> std::io::Result<std::process::Output> {
        self.write_stdin_bytes(value.to_string().into_bytes())
    }
}

impl WriteStdin for std::process::Command {
    fn write_stdin_bytes(&mut self, input: Vec<u8>) -> std::io::Result<std::process::Output> {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output()?;
        writer.join().unwrap()?;
        Ok(out)
    }
}

#[test]
fn github_and_summary_agree_on_jaq_jq_1_6_and_libjq_1_8() {
    let pass = || {
        Case::new(
            &list(vec![pod("default", "web-0", "Running", Some("n"))]),
            &list(vec![]),
        )
    };
    let empty = || Case::new(&list(vec![]), &list(vec![]));
    let many = || {
        Case::new(
            &list(
                (0..12)
                    .map(|i| pod("team", &format!("p-{i}"), "Pending", None))
                    .collect(),
            ),
            &list(vec![]),
        )
    };
    for make in [
        Case::samples as fn() -> Case,
        nasty,
        crowd,
        pass,
        empty,
        many,
    ] {
        for limit in [default_limit(), 1, 0] {
            let case = make().with_limit(limit);
            let result = case.result();
            let commands = case.commands();
            let summary = case.summary("text");
            let dir = case.dir.path();
            for (program, jaq) in [
                (&Programs::GITHUB, &commands),
                (&Programs::SUMMARY, &summary),
            ] {
                assert!(
                    !program.vars.is_empty(),
                    "{} takes the list limit",
                    program.name
                );
                assert_eq!(
                    &jq16(program, &result, dir, limit),
                    jaq,
                    "jq 1.6 {} at the limit {limit}",
                    program.file
                );
                assert_eq!(
                    &libjq(program, &result, limit),
                    jaq,
                    "libjq 1.8 {} at the limit {limit}",
                    program.file
                );
            }
        }
    }
}

/// Issue 29: no annotation says "none" for pods that have FailedScheduling
/// events. On every corpus case, at its list limit: a group annotation says
/// "none" only when no pod of the group has a matching event, and every
/// group whose pods have events shows at least one (3000 pods in 3 groups
/// once said "none" for two groups: the newest 50 were all the largest's).
#[test]
fn no_annotation_says_none_for_pods_that_have_events() {
    for case in verify_pods_tests::corpus::cases() {
        let run = |format: &str| {
            let out = Command::from_std(case.offline_check(verify_pods_tests::checker_command()))
                .args(["--format", format])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        let result: Value = serde_json::from_str(&run("json")).unwrap();
        let Some(events) = result["events"].as_array() else {
            continue;
        };
        let with_events: Vec<(String, String)> = events
            .iter()
            .map(|e| (e["namespace"].to_string(), e["pod"].to_string()))
            .collect();
        let text = run("github");
        for group in result["unscheduled_groups"].as_array().unwrap() {
            let has = result["unscheduled_pods"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| {
                    p["reason"] == group["reason"]
                        && p["message"] == group["message"]
                        && with_events
                            .contains(&(p["namespace"].to_string(), p["name"].to_string()))
                });
            let count = group["count"].as_u64().unwrap();
            // Annotations are told apart by their title: only groups of a
            // count no other group has.
            let groups = result["unscheduled_groups"].as_array().unwrap();
            if groups
                .iter()
                .filter(|g| g["count"] == group["count"])
                .count()
                > 1
            {
                continue;
            }
            let title = format!("title={count} unscheduled pod");
            let said: Vec<&str> = text.lines().filter(|l| l.contains(&title)).collect();
            for line in said {
                if has {
                    assert!(!line.contains("none for"), "{}: {line}", case.name);
                }
            }
        }
    }
}

/// A check that ends without a verdict (exit 2) prints github.jq's one
/// `::error` on the error object, its line as stderr gave it, whatever
/// characters it holds; jq 1.6 and libjq 1.8 give the same bytes as jaq.
#[test]
fn exit_2_is_one_error_annotation_on_jaq_jq_1_6_and_libjq_1_8() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("100% missing: a,b\r.json");
    for (args, usage) in [
        (vec!["--snapshot".into(), missing.into_os_string()], false),
        (vec!["--no-such-flag".into()], true),
    ] {
        let result = dir.path().join("result.json");
        let out = verify_pods()
            .args(["check", "--format", "github", "--json"])
            .arg(&result)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let object: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
        assert_eq!(object["verdict"], "error");
        assert_eq!(object["usage"], usage);
        let stdout = String::from_utf8(out.stdout).unwrap();
        // After the text's start line (none for a usage error).
        let commands: Vec<_> = stdout
            .lines()
            .filter(|line| line.starts_with("::"))
            .map(parse_command)
            .collect();
        assert_eq!(commands.len(), 1, "{stdout}");
        assert_eq!(
            stdout.lines().count(),
            if usage { 1 } else { 2 },
            "{stdout}"
        );
        assert_eq!(commands[0].name, "error");
        assert_eq!(
            commands[0].data,
            as_shown(object["error"].as_str().unwrap())
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !usage {
            let line = stderr.lines().last().unwrap();
            let line = line.strip_prefix(contract::CHECKER_PREFIX.error).unwrap();
            assert_eq!(object["error"], line);
        }
        let annotation = stdout.lines().last().unwrap().to_owned() + "\n";
        let limit = default_limit();
        assert_eq!(
            jq16(&Programs::GITHUB, &object, dir.path(), limit),
            annotation
        );
        assert_eq!(libjq(&Programs::GITHUB, &object, limit), annotation);
    }
}
