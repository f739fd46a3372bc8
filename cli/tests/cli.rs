//! The CLI around the checks: colours only on a terminal and never with
//! NO_COLOR, shell completions that really complete, help that teaches.

use assert_cmd::Command;
use checker::Programs;
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn verify_pods() -> Command {
    Command::cargo_bin("verify-pods").unwrap()
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("verify-pods")
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// samples/pods.json and samples/events.json, as arguments.
fn sample_snapshot() -> (String, String) {
    let path = |name: &str| repo(name).to_str().unwrap().to_owned();
    (path("samples/pods.json"), path("samples/events.json"))
}

fn shell_quote(arg: &Path) -> String {
    format!("'{}'", arg.display().to_string().replace('\'', r"'\''"))
}

/// Run `verify-pods ARGS` on a pseudo-terminal (util-linux `script`), with
/// NO_COLOR set to `no_color` or removed; what the terminal showed.
fn on_tty(args: &[&Path], no_color: Option<&str>) -> String {
    let mut command_line = shell_quote(&bin());
    for arg in args {
        command_line.push(' ');
        command_line.push_str(&shell_quote(arg));
    }
    let mut script = std::process::Command::new("script");
    script
        .args(["-q", "-e", "-c", &command_line, "/dev/null"])
        .stdin(Stdio::null());
    match no_color {
        Some(value) => script.env("NO_COLOR", value),
        None => script.env_remove("NO_COLOR"),
    };
    let out = script.output().expect("util-linux script runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn check_args() -> Vec<PathBuf> {
    ["check", "--snapshot"]
        .iter()
        .map(PathBuf::from)
        .chain([repo("samples/pods.json")])
        .collect()
}

#[test]
fn colours_on_a_terminal_only_and_never_with_no_color() {
    let triage = [
        PathBuf::from("triage"),
        repo("cli/tests/fixtures/triage/seed-race.log"),
    ];
    for args in [check_args(), triage.to_vec()] {
        let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        // The control: a terminal without NO_COLOR gets colours (an empty
        // NO_COLOR does not count, as no-color.org says).
        assert!(on_tty(&args, None).contains("\x1b["), "{args:?}");
        assert!(on_tty(&args, Some("")).contains("\x1b["), "{args:?}");
        let plain = on_tty(&args, Some("1"));
        assert!(plain.contains("Pod") || plain.contains("race"), "{plain:?}");
        assert!(!plain.contains('\x1b'), "{args:?}: {plain:?}");
        // Not a terminal: no colours even without NO_COLOR.
        verify_pods()
            .env_remove("NO_COLOR")
            .args(&args)
            .assert()
            .code(1)
            .stdout(predicate::str::contains("\x1b").not());
    }
}

/// The words bash would offer after `verify-pods WORDS… CURRENT<TAB>`.
fn bash_completions(words: &[&str]) -> Vec<String> {
    let script = verify_pods()
        .args(["completions", "bash"])
        .output()
        .unwrap()
        .stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("verify-pods.bash");
    std::fs::write(&file, script).unwrap();
    let all: Vec<String> = std::iter::once("verify-pods")
        .chain(words.iter().copied())
        .map(|w| format!("'{w}'"))
        .collect();
    let driver = format!(
        "source {file}\n\
         COMP_WORDS=({words})\n\
         COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}\n\
         fn=$(complete -p verify-pods | sed -E 's/.*-F ([^ ]+).*/\\1/')\n\
         \"$fn\" verify-pods \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file = shell_quote(&file),
        words = all.join(" ")
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &driver])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completion_completes_subcommands_options_and_values() {
    assert_eq!(bash_completions(&["tr"]), ["triage"]);
    assert!(bash_completions(&["check", "--f"]).contains(&"--format".to_owned()));
    let formats = bash_completions(&["check", "--format", ""]);
    assert!(formats.contains(&"github".to_owned()), "{formats:?}");
    assert!(bash_completions(&["triage", "--exc"]).contains(&"--exclude-ns".to_owned()));
    let shells = bash_completions(&["completions", ""]);
    assert!(
        ["bash", "zsh", "fish"]
            .iter()
            .all(|s| shells.contains(&(*s).to_owned())),
        "{shells:?}"
    );
}

#[test]
fn zsh_and_fish_scripts_name_every_subcommand() {
    for (shell, marker) in [
        ("zsh", "#compdef verify-pods"),
        ("fish", "complete -c verify-pods"),
    ] {
        let out = verify_pods().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell}");
        for sub in ["check", "programs", "triage", "completions"] {
            assert!(script.contains(sub), "{shell}: {sub}");
        }
        assert!(script.contains("github"), "{shell}: the --format values");
    }
    verify_pods().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn every_help_has_examples_and_exit_codes() {
    for sub in [
        None,
        Some("check"),
        Some("programs"),
        Some("triage"),
        Some("completions"),
    ] {
        let mut command = verify_pods();
        command.args(sub).arg("--help");
        command
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:\n"))
            .stdout(predicate::str::contains("Exit codes"))
            .stdout(predicate::str::contains("verify-pods "));
    }
    verify_pods()
        .args(["check", "--help"])
        .assert()
        .stdout(predicate::str::contains("GITHUB_STEP_SUMMARY"))
        .stdout(predicate::str::contains("github"));
    verify_pods()
        .args(["triage", "--help"])
        .assert()
        .stdout(predicate::str::contains("race-signature"))
        .stdout(predicate::str::contains("##[group]Run"));
}

#[test]
fn the_new_programs_are_listed_and_printed() {
    let listing = verify_pods().arg("programs").output().unwrap().stdout;
    let listing = String::from_utf8(listing).unwrap();
    for program in [Programs::GITHUB, Programs::SUMMARY] {
        assert!(listing
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(program.file)));
        verify_pods()
            .args(["programs", program.name])
            .assert()
            .success()
            .stdout(program.text);
    }
}

/// `verify-pods … | head` closes the pipe before the output is written: no
/// crash (println! would panic with 101); the exit code stays the command's
/// own, but for `check`, whose verdict nobody read: exit 2.
#[test]
fn a_closed_stdout_is_not_a_crash() {
    let (snapshot, events) = sample_snapshot();
    let (snapshot, events) = (snapshot.as_str(), events.as_str());
    let cases: [(&[&str], i32); 4] = [
        (&["programs"], 0),
        (&["programs", "report"], 0),
        (&["check", "--snapshot", snapshot, "--events", events], 2),
        (&["triage", "--format", "json", snapshot], 0),
    ];
    for (args, code) in cases {
        let mut child = std::process::Command::new(bin())
            .args(args)
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the first write
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Issue 12, item 3: output that cannot be written (`> /dev/full`) is not
/// success: exit 2 with one line on stderr, whatever the command printed.
#[test]
fn a_full_stdout_exits_2_with_one_line() {
    let (snapshot, events) = sample_snapshot();
    let (snapshot, events) = (snapshot.as_str(), events.as_str());
    let green = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(green.path(), r#"{"items":[]}"#).unwrap();
    let green = green.path().to_str().unwrap();
    let cases: [&[&str]; 8] = [
        &["programs"],
        &["programs", "report"],
        &["check", "--snapshot", snapshot, "--events", events],
        &["check", "--snapshot", green],
        &["check", "--snapshot", green, "--format", "json"],
        &["check", "--snapshot", snapshot, "--format", "github"],
        &["triage", snapshot],
        &["completions", "bash"],
    ];
    for args in cases {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(bin())
            .args(args)
            .env("NO_COLOR", "1")
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        // With --format json the progress lines, the start line among
        // them, go to stderr: the error is the one line after it.
        let start = checker::Engine::new().unwrap().start_line(0).unwrap().1 + "\n";
        let stderr = match args.contains(&"json") {
            true => stderr.strip_prefix(&start).unwrap_or(&stderr).to_owned(),
            false => stderr.into_owned(),
        };
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("verify-pods: error: ") && stderr.contains("No space left"),
            "{args:?}: {stderr}"
        );
    }
}
