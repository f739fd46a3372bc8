//! `scriptgen splice` on a realistic host script (tests/fixtures/
//! validate-scheduling.sh and its lib/): only the function changes, bash
//! still parses the result, a second splice changes nothing, bad scripts
//! exit 2 untouched. `verify-pods bash splice --lib`: the function goes to a
//! library file and the host changes by a source line.

use verify_pods_tests::sandbox;

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

/// A copy of the fixture, with its lib/, in a temp dir (the fixture itself
/// never changes).
fn host_copy(dir: &Path, contents: &str) -> PathBuf {
    let path = dir.join("validate-scheduling.sh");
    fs::write(&path, contents).unwrap();
    let lib = dir.join("lib");
    fs::create_dir_all(&lib).unwrap();
    for entry in fs::read_dir(sandbox::scriptgen_fixture("lib")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), lib.join(entry.file_name())).unwrap();
    }
    path
}

fn fixture_text() -> String {
    fs::read_to_string(sandbox::scriptgen_fixture("validate-scheduling.sh")).unwrap()
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
    let output = verify_pods_tests::run(std::process::Command::new("bash").arg("-n").arg(path));
    assert!(
        output.status.success(),
        "bash -n: {}",
        verify_pods_tests::text(&output.stderr)
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
            "-    local pods_json counts total running pending failed unscheduled",
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
    let report = scriptgen::render::embedded_jq(checker::Programs::REPORT.body).unwrap();
    format!("+{}", report.lines().next().unwrap())
}

#[test]
fn the_spliced_function_runs_inside_the_host_script() {
    // Source the spliced host script's functions (main is not run: the
    // harness defines its own flow) and compare with the wrapper.
    let dir = tempfile::tempdir().unwrap();
    let script = host_copy(dir.path(), &fixture_text());
    splice(&script, Some("--write")).success();
    runs_like_the_wrapper(&script);
}

/// The host script, its main not run (the harness defines its own flow),
/// gives the wrapper's stdout and exit code on the red sample.
fn runs_like_the_wrapper(script: &Path) {
    let without_main: String = fs::read_to_string(script)
        .unwrap()
        .lines()
        .filter(|l| *l != "main \"$@\"")
        .map(|l| format!("{l}\n"))
        .collect();
    // In the script's directory: it sources lib/ through its SCRIPT_DIR.
    let functions = script.with_file_name("functions.sh");
    fs::write(&functions, without_main).unwrap();

    let mut sandbox = sandbox::Sandbox::new();
    let red = sandbox.file("red-pods.json", &red_pods());
    sandbox
        .one_request()
        .pods(&[&red])
        .events(&sandbox::sample("events.json"))
        .set(checker::contract::DEADLINE_ENV, "0")
        .set("VERIFY_PODS_SH", functions.to_str().unwrap());
    // The host finds its SCRIPT_DIR with dirname, a tool of its own.
    std::os::unix::fs::symlink(
        sandbox::find_on_path("dirname"),
        sandbox.bin().join("dirname"),
    )
    .unwrap();
    let hosted = verify_pods_tests::run(
        &mut sandbox.command(&sandbox::scriptgen_fixture("host-harness.sh")),
    );
    let wrapped = sandbox.run_wrapper();
    assert_eq!(
        hosted.status.code(),
        Some(1),
        "{}",
        verify_pods_tests::text(&hosted.stderr)
    );
    assert_eq!(hosted.status.code(), wrapped.status.code());
    // The wrapper has every feature, the workloads check too (here off: no
    // workloads read, which its failure says); the host's library has not
    // the feature, and says nothing of pods not yet created.
    let wrapped: String = verify_pods_tests::text(&wrapped.stdout)
        .lines()
        .filter(|line| !line.starts_with("Pods not yet created"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(verify_pods_tests::text(&hosted.stdout), wrapped);
}

/// The sample's pods without owners whose kind contains "Job": upstream's
/// Job rule (the host's function) and the exact one (the wrapper's) then
/// give the same verdict and the same lines.
fn red_pods() -> String {
    sandbox::sample_pods_disowned("Job\"")
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

// ---- verify-pods bash splice --lib ----

const LIB: &str = "lib/verify-pods.sh";

/// `verify-pods bash splice SCRIPT --lib LIB ARGS…`.
fn splice_lib(script: &Path, lib: &str, args: &[&str]) -> assert_cmd::assert::Assert {
    let mut cmd = Command::new(sandbox::verify_pods_bin());
    cmd.args(["bash", "splice"])
        .arg(script)
        .args(["--lib", lib])
        .args(args);
    cmd.assert()
}

/// `--check` or `--write` of SCRIPT's library at LIB succeeds and prints
/// no diff: host and library are current (a write changes nothing).
fn assert_current(script: &Path, flag: &str) {
    splice_lib(script, LIB, &[flag]).success().stdout("");
}

/// A copy of the fixture host in a fresh temp dir (which lives as long as
/// the first value), and where its library goes.
fn host_and_library() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let script = host_copy(dir.path(), &fixture_text());
    let lib = dir.path().join(LIB);
    (dir, script, lib)
}

/// Lines added and removed by `old` -> `new`.
fn changed_lines(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let patch = scriptgen::diff::unified(old, new, "a", "b");
    let body = patch
        .lines()
        .filter(|l| !l.starts_with("+++") && !l.starts_with("---"));
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    for line in body {
        if let Some(line) = line.strip_prefix('+') {
            added.push(line.to_owned());
        } else if let Some(line) = line.strip_prefix('-') {
            removed.push(line.to_owned());
        }
    }
    (added, removed)
}

/// Who writes a library, as its stamp says (either tool).
fn version() -> String {
    scriptgen::render::GENERATOR.to_owned()
}

#[test]
fn splice_lib_adds_a_source_line_and_writes_the_library() {
    let (_dir, script, lib) = host_and_library();
    let original = fixture_text();

    // Without flags: the diffs, nothing written.
    splice_lib(&script, LIB, &[])
        .success()
        .stdout(contains("+source \"${SCRIPT_DIR}/lib/verify-pods.sh\""))
        .stdout(contains(report_first_line()));
    assert_eq!(fs::read_to_string(&script).unwrap(), original);
    assert!(!lib.exists());
    splice_lib(&script, LIB, &["--check"])
        .code(1)
        .stderr(contains("lib/verify-pods.sh: is missing"));
    assert!(!lib.exists());

    splice_lib(&script, LIB, &["--write"]).success();
    let spliced = fs::read_to_string(&script).unwrap();
    let (added, removed) = changed_lines(&original, &spliced);
    // The host's style: its directive and its `source "${SCRIPT_DIR}/lib/…"`.
    assert_eq!(
        added,
        [
            "# shellcheck source=lib/verify-pods.sh",
            "source \"${SCRIPT_DIR}/lib/verify-pods.sh\"",
        ]
    );
    // The old definition goes, with the comment block above it and the
    // blank line after it (none is left doubled).
    let (start, end) = old_definition_span(&original);
    let comment = original[..start]
        .trim_end_matches('\n')
        .rfind("\n\n")
        .unwrap()
        + 2;
    let ours = added.iter().map(|l| format!("{l}\n")).collect::<String>();
    let without_ours = spliced.replacen(&ours, "", 1);
    let expected = [&original[..comment], &original[end + 1..]].concat();
    assert_eq!(
        without_ours, expected,
        "only the old definition and its comment go"
    );
    assert_eq!(removed.len(), original[comment..end + 1].lines().count());
    assert!(!spliced.contains("\n\n\n"), "a blank line doubled");
    eprintln!("host diff: +{}/-{}", added.len(), removed.len());

    // The library: stamped, naming its regenerate command, the function in
    // the host's 4-space indentation, each program compacted.
    let text = fs::read_to_string(&lib).unwrap();
    let stamp = format!("{}{}", scriptgen::render::WRITTEN_BY, version());
    assert!(text.lines().any(|l| l == stamp), "no {stamp:?} in\n{text}");
    assert!(text.contains(
        "verify-pods bash splice validate-scheduling.sh --lib lib/verify-pods.sh --write"
    ));
    assert_eq!(scriptgen::splice::indent_step(&text).unwrap(), Some(4));
    for program in scriptgen::render::USED {
        let compacted = scriptgen::render::embedded_jq(program.body).unwrap();
        // The host's job summary stays its own: no summary.jq in its
        // library; nor the CI results' ctrf.jq and junit.jq, nor
        // workloads.jq (features).
        let feature = [
            checker::Programs::SUMMARY.name,
            checker::Programs::CTRF.name,
            checker::Programs::JUNIT.name,
            checker::Programs::WORKLOADS.name,
        ]
        .contains(&program.name);
        assert_eq!(text.contains(&compacted), !feature, "{}", program.file);
    }
    assert!(!text.contains(checker::contract::STEP_SUMMARY_ENV));
    // No byte budget: the programs are embedded as written, comments and all.
    eprintln!(
        "library: {} lines, {} bytes",
        text.lines().count(),
        text.len()
    );
    bash_parses(&script);
    bash_parses(&lib);

    // Twice changes nothing, and --check agrees.
    assert_current(&script, "--write");
    assert_current(&script, "--check");
    assert_eq!(fs::read_to_string(&script).unwrap(), spliced);
    assert_eq!(fs::read_to_string(&lib).unwrap(), text);
}

#[test]
fn a_library_with_a_feature_says_so_and_regenerates_with_it() {
    let (_dir, script, lib) = host_and_library();
    let with = |flag: &str| splice_lib(&script, LIB, &[flag, "--with", "summary"]);
    with("--write").success();
    let text = fs::read_to_string(&lib).unwrap();
    let summary = scriptgen::render::embedded_jq(checker::Programs::SUMMARY.body).unwrap();
    assert!(text.contains(&summary), "no summary.jq in\n{text}");
    assert!(text.contains("\n# Features: summary\n"), "{text}");
    // The block: its heading and the indented lines under it.
    let left_out: String = text
        .lines()
        .skip_while(|l| !l.contains("Left out"))
        .skip(1)
        .take_while(|l| l.starts_with("#   "))
        .collect();
    assert!(
        !left_out.contains("summary") && left_out.contains("results ("),
        "{text}"
    );
    with("--check").success().stdout("");
    // Without --with, the features it records: current.
    assert_current(&script, "--check");
}

/// One header, one check: `scriptgen splice` and `verify-pods bash splice`
/// write the same library, and each one's --check passes on the other's.
#[test]
fn either_tool_writes_the_same_library_and_checks_the_others() {
    let (_dir, script, lib) = host_and_library();
    let scriptgen_lib = |flag: &str| {
        let mut cmd = Command::cargo_bin("scriptgen").unwrap();
        cmd.arg("splice").arg(&script).args(["--lib", LIB, flag]);
        cmd.assert()
    };
    splice_lib(&script, LIB, &["--write"]).success();
    let by_verify_pods = fs::read_to_string(&lib).unwrap();
    scriptgen_lib("--check").success().stdout("");
    fs::remove_file(&lib).unwrap();
    scriptgen_lib("--write").success();
    assert_eq!(fs::read_to_string(&lib).unwrap(), by_verify_pods);
    assert_current(&script, "--check");
}

/// --check and --write without --with render the features the library
/// records; --with changes them, and the advice repeats it.
#[test]
fn the_features_a_library_records_are_kept_without_with() {
    let (_dir, script, lib) = host_and_library();
    let with = |flag: &str, features: &str| splice_lib(&script, LIB, &[flag, "--with", features]);
    with("--write", "exit-2,workloads").success();
    let text = fs::read_to_string(&lib).unwrap();
    assert!(text.contains("\n# Features: workloads, exit-2\n"), "{text}");
    assert_current(&script, "--check");
    assert_current(&script, "--write");
    assert_eq!(fs::read_to_string(&lib).unwrap(), text);
    with("--check", "exit-2")
        .code(1)
        .stderr(contains("--lib lib/verify-pods.sh --with exit-2 --write`"));
}

/// The host's license header goes on top of its library (found in the
/// script, or given with --header), and --check is clean with it.
#[test]
fn the_library_carries_the_hosts_license_header() {
    let (dir, script, lib) = host_and_library();
    splice_lib(&script, LIB, &["--write"]).success();
    let text = fs::read_to_string(&lib).unwrap();
    assert!(
        text.starts_with("# Copyright (c) 2025, EXAMPLE CORPORATION. All rights reserved.\n"),
        "{text}"
    );
    assert!(text.contains("# limitations under the License.\n\n# shellcheck shell=bash\n"));
    assert_current(&script, "--check");
    let header = dir.path().join("HEADER");
    fs::write(&header, "# SPDX-License-Identifier: Apache-2.0\n").unwrap();
    splice_lib(
        &script,
        LIB,
        &["--write", "--header", header.to_str().unwrap()],
    )
    .success();
    let text = fs::read_to_string(&lib).unwrap();
    assert!(
        text.starts_with("# SPDX-License-Identifier: Apache-2.0\n\n# shellcheck shell=bash\n"),
        "{text}"
    );
}

#[test]
fn splice_lib_check_says_which_file_is_stale() {
    let (_dir, script, lib) = host_and_library();
    let original = fixture_text();
    splice_lib(&script, LIB, &["--write"]).success();
    let (spliced, text) = (
        fs::read_to_string(&script).unwrap(),
        fs::read_to_string(&lib).unwrap(),
    );

    // A library edited by hand.
    fs::write(
        &lib,
        text.replace("verify_pods() {", "verify_pods() {\n    echo edited"),
    )
    .unwrap();
    splice_lib(&script, LIB, &["--check"])
        .code(1)
        .stdout(contains("-    echo edited"))
        .stderr(contains("lib/verify-pods.sh: differs"))
        .stderr(contains("validate-scheduling.sh: does not").not());
    splice_lib(&script, LIB, &["--write"]).success();
    assert_eq!(fs::read_to_string(&lib).unwrap(), text);

    // A host that got its old function back.
    fs::write(&script, &original).unwrap();
    splice_lib(&script, LIB, &["--check"])
        .code(1)
        .stdout(contains("+source \"${SCRIPT_DIR}/lib/verify-pods.sh\""))
        .stderr(contains(
            "validate-scheduling.sh: does not source lib/verify-pods.sh alone",
        ))
        .stderr(contains("lib/verify-pods.sh: differs").not());
    assert_eq!(fs::read_to_string(&script).unwrap(), original);
    splice_lib(&script, LIB, &["--write"]).success();
    assert_eq!(fs::read_to_string(&script).unwrap(), spliced);
}

#[test]
fn a_library_written_by_another_verify_pods_with_the_same_content_is_current() {
    let (_dir, script, lib) = host_and_library();
    splice_lib(&script, LIB, &["--write"]).success();
    let ours = format!("{}{}", scriptgen::render::WRITTEN_BY, version());
    let theirs = format!(
        "{}verify-pods 0.0.1 (commit 0000000)",
        scriptgen::render::WRITTEN_BY
    );
    let older = fs::read_to_string(&lib).unwrap().replace(&ours, &theirs);
    fs::write(&lib, &older).unwrap();
    splice_lib(&script, LIB, &["--check"])
        .success()
        .stdout("")
        .stderr(contains("written by verify-pods 0.0.1 (commit 0000000)"));
    assert_current(&script, "--write");
    assert_eq!(
        fs::read_to_string(&lib).unwrap(),
        older,
        "rewritten for its stamp alone"
    );
}

#[test]
fn the_host_sourcing_its_library_runs_and_shellcheck_is_no_worse() {
    let dir = tempfile::tempdir().unwrap();
    let script = host_copy(dir.path(), &fixture_text());
    let shellcheck = |file: &str| {
        let output = verify_pods_tests::run(
            std::process::Command::new("shellcheck")
                .args(["-x", "-f", "gcc", file])
                .current_dir(dir.path()),
        );
        verify_pods_tests::text(&output.stdout)
    };
    let before = shellcheck("validate-scheduling.sh");
    splice_lib(&script, LIB, &["--write"]).success();
    let after = shellcheck("validate-scheduling.sh");
    assert!(
        after.lines().count() <= before.lines().count(),
        "before:\n{before}\nafter:\n{after}"
    );
    assert_eq!(shellcheck(LIB), "", "shellcheck on the library");
    runs_like_the_wrapper(&script);
}

#[test]
fn a_library_path_outside_the_scripts_directory_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture_text();
    let script = host_copy(dir.path(), &original);
    for bad in [
        "/tmp/verify-pods.sh",
        "../verify-pods.sh",
        "lib/my lib.sh",
        "lib/$(x).sh",
    ] {
        splice_lib(&script, bad, &["--write"])
            .code(2)
            .stdout("")
            .stderr(contains("expected a plain path inside the directory"));
        assert_eq!(fs::read_to_string(&script).unwrap(), original, "{bad:?}");
    }
}

#[test]
fn the_library_names_its_command_from_the_host_repositorys_root() {
    let repo = tempfile::tempdir().unwrap();
    fs::create_dir(repo.path().join(".git")).unwrap();
    let scripts = repo.path().join("kwok/scripts");
    fs::create_dir_all(&scripts).unwrap();
    let script = host_copy(&scripts, &fixture_text());
    splice_lib(&script, LIB, &["--write"]).success();
    let text = fs::read_to_string(scripts.join(LIB)).unwrap();
    let command =
        "verify-pods bash splice kwok/scripts/validate-scheduling.sh --lib lib/verify-pods.sh";
    assert!(text.contains("From the repository root"), "{text}");
    assert!(text.contains(&format!("{command} --write")), "{text}");
    assert!(text.contains(&format!("{command} --check")), "{text}");
}

/// Issue 31: the source line goes after the host's last `source` line; a
/// license header the host's lint adds above the library is kept by
/// --write and ignored by --check; the splice ends with the host's
/// follow-ups, each with its line.
#[test]
fn the_hosts_header_stays_and_the_follow_ups_are_said() {
    let dir = tempfile::tempdir().unwrap();
    // Without its license: the header added by hand below is the only one.
    let fixture = fixture_text();
    let unlicensed = fixture.replacen(
        &fixture[fixture.find("# Copyright").unwrap()..fixture.find("\n\n").unwrap() + 1],
        "",
        1,
    );
    let script = host_copy(dir.path(), &unlicensed);
    let lib = dir.path().join(LIB);
    // Upstream's verdicts and exit codes: nothing to follow up.
    let default = splice_lib(&script, LIB, &[]).success();
    let stderr = String::from_utf8(default.get_output().stderr.clone()).unwrap();
    assert!(!stderr.contains(": follow-up: "), "{stderr}");
    let written = splice_lib(
        &script,
        LIB,
        &["--write", "--with", "exit-2,exact-owner-kinds"],
    )
    .success();
    let spliced = fs::read_to_string(&script).unwrap();
    let lines: Vec<&str> = spliced.lines().collect();
    let ours = lines
        .iter()
        .position(|l| *l == "source \"${SCRIPT_DIR}/lib/verify-pods.sh\"")
        .unwrap();
    let last_host = lines
        .iter()
        .rposition(|l| l.starts_with("source ") && !l.contains("verify-pods.sh"))
        .unwrap();
    assert_eq!(
        ours,
        last_host + 2,
        "after the host's last source line and our directive"
    );
    assert_eq!(lines[ours - 1], "# shellcheck source=lib/verify-pods.sh");

    // One line per follow-up, each naming its line of the spliced host.
    let stderr = String::from_utf8(written.get_output().stderr.clone()).unwrap();
    let follow_ups: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(": follow-up: "))
        .collect();
    let number = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap() + 1;
    let call = lines
        .iter()
        .position(|l| l.trim() == "verify_pods")
        .unwrap()
        + 1;
    let name = script.display().to_string();
    for (line, words) in [
        (number("# Exit codes:"), "exit codes"),
        (call, "bare `verify_pods` under set -e"),
        (call, "KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS is set nowhere"),
    ] {
        let prefix = format!("{name}:{line}: follow-up: ");
        assert!(
            follow_ups
                .iter()
                .any(|l| l.contains(&prefix) && l.contains(words)),
            "no {prefix}…{words} in\n{stderr}"
        );
    }
    // Not the comment about the sync gates' exit code 50.
    assert_eq!(follow_ups.len(), 3, "{stderr}");
    // The dry run says them too (the library records its features); the
    // host's logic is untouched.
    splice_lib(&script, LIB, &[])
        .success()
        .stderr(contains(": follow-up: "));
    assert!(
        spliced.contains("\n    verify_pods\n"),
        "the call stays bare"
    );

    // A license header above the library: kept, and --check ignores it.
    let license =
        "# Copyright 2026 EXAMPLE CORPORATION.\n# SPDX-License-Identifier: Apache-2.0\n\n";
    let text = fs::read_to_string(&lib).unwrap();
    fs::write(&lib, format!("{license}{text}")).unwrap();
    assert_current(&script, "--check");
    assert_current(&script, "--write");
    assert_eq!(
        fs::read_to_string(&lib).unwrap(),
        format!("{license}{text}")
    );
    // A stale library keeps it through --write too.
    fs::write(
        &lib,
        format!("{license}{}", text.replace("vp_now", "vp_then")),
    )
    .unwrap();
    splice_lib(&script, LIB, &["--check"]).code(1);
    splice_lib(&script, LIB, &["--write"]).success();
    assert_eq!(
        fs::read_to_string(&lib).unwrap(),
        format!("{license}{text}")
    );
}
