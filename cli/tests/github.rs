//! `check --format github` and the step summary, through the binary.
//!
//! The workflow commands are decoded the way the GitHub runner decodes them
//! (actions/runner, ActionCommand: `::name k=v,k=v::data`, then `%0D`,
//! `%0A`, `%3A`, `%2C`, `%25` unescaped) and the summary is read back with a
//! real CommonMark/GFM parser: what a user sees must be the data of the
//! result, whatever characters the cluster put in it. github.jq and
//! summary.jq must also give the same bytes on jq 1.6 and libjq 1.8.

use assert_cmd::Command;
use checker::Programs;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn verify_pods() -> Command {
    Command::cargo_bin("verify-pods").unwrap()
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
        }
    }

    fn samples() -> Case {
        let read = |name| serde_json::from_slice(&std::fs::read(sample(name)).unwrap()).unwrap();
        Case::new(&read("pods.json"), &read("events.json"))
    }

    /// `check --snapshot … --events … --format FORMAT`, GITHUB_STEP_SUMMARY unset.
    fn check(&self, format: &str) -> std::process::Output {
        verify_pods()
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("NO_COLOR")
            .args(["check", "--format", format, "--snapshot"])
            .arg(&self.pods)
            .arg("--events")
            .arg(&self.events)
            .output()
            .unwrap()
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
        verify_pods()
            .env("GITHUB_STEP_SUMMARY", &file)
            .args(["check", "--format", format, "--snapshot"])
            .arg(&self.pods)
            .arg("--events")
            .arg(&self.events)
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
const NASTY_MESSAGE: &str =
    "0/3 nodes: 100% busy,\nnext line\r\n| a | b |\ttab `code` <i>x</i> &amp; \\|";

fn nasty() -> Case {
    let pods = list(vec![
        pod("default", "web-0", "Running", Some("kwok-node-0")),
        pod(NASTY_NS, NASTY_POD, "Pending", None),
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

#[test]
fn samples_give_the_verdict_first_then_one_error_per_pod_with_its_events() {
    let case = Case::samples();
    let result = case.result();
    assert_eq!(case.check("github").status.code(), Some(1));
    let commands = parse_commands(&case.commands());
    assert!(commands.iter().all(|c| c.name == "error"), "{commands:?}");
    let unscheduled = result["unscheduled_pods"].as_array().unwrap();
    let failed = result["failed_pods"].as_array().unwrap();
    assert_eq!(commands.len(), 1 + unscheduled.len() + failed.len());
    assert!(!commands[0].title().is_empty());
    for (pod, command) in unscheduled.iter().zip(&commands[1..]) {
        assert!(command.title().contains(&pod_ref(pod)), "{command:?}");
        let events = result["events"].as_array().unwrap();
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| pod_ref(e) == pod_ref(pod))
            .collect();
        assert!(!mine.is_empty());
        let mut at = 0;
        for e in mine {
            let found = command.data[at..]
                .find(e["message"].as_str().unwrap())
                .unwrap_or_else(|| panic!("{e} not in {command:?} in order"));
            at += found + 1;
        }
    }
}

#[test]
fn escaping_survives_the_runner_and_nothing_else_becomes_a_command() {
    let case = nasty();
    let result = case.result();
    assert_eq!(result["unscheduled"], 1);
    assert_eq!(result["failed"], 1);
    let printed = case.commands();
    // Every printed line is one command: no raw CR or newline got through.
    assert!(!printed.contains('\r'));
    let commands = parse_commands(&printed);
    assert_eq!(commands.len(), 3, "{commands:?}");
    let unscheduled = &commands[1];
    assert_eq!(unscheduled.name, "error");
    assert!(
        unscheduled
            .title()
            .contains(&as_shown(&format!("{NASTY_NS}/{NASTY_POD}"))),
        "{unscheduled:?}"
    );
    assert!(
        unscheduled.data.contains(&as_shown(NASTY_MESSAGE)),
        "{unscheduled:?}"
    );
    let newest = unscheduled.data.find("newest %25 first").unwrap();
    assert!(newest < unscheduled.data.find(&as_shown(NASTY_MESSAGE)).unwrap());
    let failed = &commands[2];
    assert!(failed.title().contains("default/oom|1"), "{failed:?}");
    assert!(failed.data.contains("OOM:Killed"));
    assert!(failed.data.contains(&as_shown(NASTY_MESSAGE)));
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
    let pods = (0..30)
        .map(|i| pod("team", &format!("p-{i}"), "Pending", None))
        .collect();
    let case = Case::new(&list(pods), &list(vec![]));
    let commands = parse_commands(&case.commands());
    let errors: Vec<&WorkflowCommand> = commands.iter().filter(|c| c.name == "error").collect();
    assert_eq!(errors.len(), 10);
    assert!(
        !errors[0].title().contains("team/"),
        "the verdict comes first"
    );
    let warnings: Vec<&WorkflowCommand> = commands.iter().filter(|c| c.name == "warning").collect();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].data.contains(&(30 - 9).to_string()),
        "{warnings:?}"
    );
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

fn assert_summary_shows(summary: &str, result: &Value) {
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
    let mut rest = tables[1..].iter();
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
        if let Some(events) = result["events"].as_array().filter(|e| !e.is_empty()) {
            let rows = body(rest.next().unwrap(), 4);
            let want: Vec<Vec<String>> = events
                .iter()
                .map(|e| {
                    let pod = format!(
                        "{}/{}",
                        e["namespace"].as_str().unwrap(),
                        e["pod"].as_str().unwrap()
                    );
                    vec![
                        cell(&e["last_seen"]),
                        cell(&json!(pod)),
                        cell(&e["count"]),
                        cell(&e["message"]),
                    ]
                })
                .collect();
            assert_eq!(rows, want);
        }
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
    assert!(rest.next().is_none(), "no other table");
}

#[test]
fn the_summary_tables_show_the_result_data_exactly() {
    for case in [Case::samples(), nasty()] {
        let result = case.result();
        let summary = case.summary("text");
        assert_summary_shows(&summary, &result);
        assert!(
            summary.ends_with("\n\n"),
            "a blank line separates appended summaries"
        );
    }
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
fn no_summary_without_the_variable_and_exit_2_when_it_cannot_be_written() {
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
        .code(2)
        .stderr(predicates::str::contains("GITHUB_STEP_SUMMARY"));
}

/// `jq -r -f PROGRAM` with jq 1.6 (/usr/bin/jq) on a result.
fn jq16(program: &str, result: &Value, dir: &Path) -> String {
    let prog = dir.join("program.jq");
    std::fs::write(&prog, program).unwrap();
    let out = std::process::Command::new("jq")
        .arg("-r")
        .arg("-f")
        .arg(&prog)
        .write_stdin_json(result)
        .expect("jq runs (make tools installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The same with libjq 1.8 through the PyPI `jq` module, printed as `jq -r` would.
fn libjq(program: &str, result: &Value) -> String {
    let script = "import jq, json, sys\n\
                  program, data = sys.stdin.buffer.read().decode().split('\\0')\n\
                  for v in jq.compile(program).input_text(data).all():\n\
                  \x20   line = v if isinstance(v, str) else json.dumps(v)\n\
                  \x20   sys.stdout.buffer.write((line + '\\n').encode())";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .write_stdin_bytes(format!("{program}\0{result}").into_bytes())
        .expect("python3 runs");
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
    let pass = Case::new(
        &list(vec![pod("default", "web-0", "Running", Some("n"))]),
        &list(vec![]),
    );
    let empty = Case::new(&list(vec![]), &list(vec![]));
    let many = Case::new(
        &list(
            (0..12)
                .map(|i| pod("team", &format!("p-{i}"), "Pending", None))
                .collect(),
        ),
        &list(vec![]),
    );
    for case in [Case::samples(), nasty(), pass, empty, many] {
        let result = case.result();
        let commands = case.commands();
        let summary = case.summary("text");
        let dir = case.dir.path();
        assert_eq!(
            jq16(Programs::GITHUB.text, &result, dir),
            commands,
            "jq 1.6 github.jq"
        );
        assert_eq!(
            libjq(Programs::GITHUB.text, &result),
            commands,
            "libjq 1.8 github.jq"
        );
        assert_eq!(
            jq16(Programs::SUMMARY.text, &result, dir),
            summary,
            "jq 1.6 summary.jq"
        );
        assert_eq!(
            libjq(Programs::SUMMARY.text, &result),
            summary,
            "libjq 1.8 summary.jq"
        );
    }
}
