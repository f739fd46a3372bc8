//! `scriptgen splice` on a realistic host script (tests/fixtures/
//! validate-scheduling.sh): only the function changes, bash still parses the
//! result, a second splice changes nothing, bad scripts exit 2 untouched.

mod common;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use std::fs;
use std::path::{Path, PathBuf};

fn definition() -> String {
    let output = Command::cargo_bin("scriptgen")
        .unwrap()
        .args(["render", "--definition"])
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

fn splice(script: &Path, flag: Option<&str>) -> assert_cmd::assert::Assert {
    let mut cmd = Command::cargo_bin("scriptgen").unwrap();
    cmd.arg("splice").arg(script);
    if let Some(flag) = flag {
        cmd.arg(flag);
    }
    cmd.assert()
}

/// A copy of the fixture in a temp dir (the fixture itself never changes).
fn host_copy(dir: &Path, contents: &str) -> PathBuf {
    let path = dir.join("validate-scheduling.sh");
    fs::write(&path, contents).unwrap();
    path
}

fn fixture_text() -> String {
    fs::read_to_string(common::fixture("validate-scheduling.sh")).unwrap()
}

/// The old definition's byte range, found the simple way: by its first
/// two lines (the usage here-document holds a decoy `verify_pods() {`), and
/// it holds no here-document, so it ends at the first `}` line after.
fn old_definition_span(script: &str) -> (usize, usize) {
    let opening = "\nverify_pods() {\n    log_info \"Verifying pod scheduling...\"\n";
    let start = script.find(opening).expect("old definition") + 1;
    let end = start + script[start..].find("\n}\n").expect("its closing brace") + 3;
    (start, end)
}

fn bash_parses(path: &Path) {
    let output = common::run(std::process::Command::new("bash").arg("-n").arg(path));
    assert!(
        output.status.success(),
        "bash -n: {}",
        common::text(&output.stderr)
    );
}

#[test]
fn only_the_function_changes_and_bash_still_parses() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture_text();
    let script = host_copy(dir.path(), &original);

    // Without flags: a diff on stdout, the file untouched.
    splice(&script, None)
        .success()
        .stdout(contains(
            "-    local total pending failed running unscheduled",
        ))
        .stdout(contains("+verify_pods() {").not())
        .stdout(contains(report_first_line()));
    assert_eq!(fs::read_to_string(&script).unwrap(), original);
    splice(&script, Some("--check")).code(1);
    assert_eq!(fs::read_to_string(&script).unwrap(), original);

    splice(&script, Some("--write")).success();
    let spliced = fs::read_to_string(&script).unwrap();
    let (start, end) = old_definition_span(&original);
    let new = definition();
    assert_eq!(
        &spliced[..start],
        &original[..start],
        "bytes before changed"
    );
    assert_eq!(&spliced[start..start + new.len()], new, "the function");
    assert_eq!(
        &spliced[start + new.len()..],
        &original[end..],
        "bytes after changed"
    );
    bash_parses(&script);

    // Twice is a no-op, and --check agrees.
    splice(&script, Some("--write")).success().stdout("");
    splice(&script, Some("--check")).success();
    assert_eq!(fs::read_to_string(&script).unwrap(), spliced);
}

/// The first line of report.jq, added: the diff shows the embedded programs.
fn report_first_line() -> String {
    let first = checker::Programs::REPORT.text.lines().next().unwrap();
    format!("+{first}")
}

#[test]
fn the_spliced_function_runs_inside_the_host_script() {
    // Source the spliced host script's functions (main is not run: the
    // harness defines its own flow) and compare with the wrapper.
    let dir = tempfile::tempdir().unwrap();
    let script = host_copy(dir.path(), &fixture_text());
    splice(&script, Some("--write")).success();
    let without_main: String = fs::read_to_string(&script)
        .unwrap()
        .lines()
        .filter(|l| *l != "main \"$@\"")
        .map(|l| format!("{l}\n"))
        .collect();
    let functions = dir.path().join("functions.sh");
    fs::write(&functions, without_main).unwrap();

    let mut sandbox = common::Sandbox::new();
    sandbox
        .pods(&[&common::sample("pods.json")])
        .events(&common::sample("events.json"))
        .set(checker::options::DEADLINE_ENV, "0")
        .set("VERIFY_PODS_SH", functions.to_str().unwrap());
    let hosted = common::run(&mut sandbox.command(&common::fixture("host-harness.sh")));
    let wrapped = sandbox.run_wrapper();
    assert_eq!(
        hosted.status.code(),
        Some(1),
        "{}",
        common::text(&hosted.stderr)
    );
    assert_eq!(hosted.status.code(), wrapped.status.code());
    assert_eq!(common::text(&hosted.stdout), common::text(&wrapped.stdout));
}

#[test]
fn missing_duplicate_and_unterminated_definitions_exit_2_and_change_nothing() {
    let original = fixture_text();
    let (start, end) = old_definition_span(&original);
    let old = &original[start..end];
    let cases = [
        (
            "missing",
            [&original[..start], &original[end..]].concat(),
            "no definition",
        ),
        (
            "duplicate",
            [&original[..end], old, &original[end..]].concat(),
            "defined 2 times",
        ),
        (
            "unterminated",
            [&original[..end - 2], &original[end..]].concat(),
            "no closing",
        ),
        ("truncated", original[..end - 2].to_owned(), "no closing"),
    ];
    for (name, contents, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        let script = host_copy(dir.path(), &contents);
        for flag in [None, Some("--write"), Some("--check")] {
            splice(&script, flag)
                .code(2)
                .stdout("")
                .stderr(contains(message));
            assert_eq!(
                fs::read_to_string(&script).unwrap(),
                contents,
                "{name} {flag:?}"
            );
        }
    }
}

#[test]
fn a_missing_script_exits_2() {
    splice(Path::new("/nonexistent/validate-scheduling.sh"), None)
        .code(2)
        .stderr(contains("/nonexistent/validate-scheduling.sh"));
}
