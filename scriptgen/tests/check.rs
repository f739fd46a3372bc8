//! `scriptgen check` and `write` on the repository and on stale copies of
//! generated/ (always in a temporary root: the real tree is never touched).

use assert_cmd::Command;
use predicates::str::contains;
use std::fs;
use std::path::Path;

fn copy_generated(to: &Path) {
    let dir = to.join("generated");
    fs::create_dir_all(&dir).unwrap();
    for entry in fs::read_dir(verify_pods_tests::workspace_root().join("generated")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
}

fn scriptgen(root: &Path, command: &str) -> assert_cmd::assert::Assert {
    Command::cargo_bin("scriptgen")
        .unwrap()
        .arg("--root")
        .arg(root)
        .arg(command)
        .assert()
}

fn snapshot_of_real_tree() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(verify_pods_tests::workspace_root().join("generated"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_committed_generated_dir_is_current() {
    Command::cargo_bin("scriptgen")
        .unwrap()
        .arg("check")
        .assert()
        .success();
}

#[test]
fn a_stale_copy_fails_with_a_diff_and_write_fixes_it() {
    let before = snapshot_of_real_tree();
    let root = tempfile::tempdir().unwrap();
    copy_generated(root.path());
    scriptgen(root.path(), "check").success();

    // A program edited without regenerating: change one embedded line.
    let path = root.path().join("generated/verify_pods.sh");
    let text = fs::read_to_string(&path).unwrap();
    let compacted = scriptgen::render::embedded_jq(checker::Programs::REPORT.body).unwrap();
    let line = compacted.lines().next().unwrap();
    assert!(text.contains(line));
    fs::write(&path, text.replacen(line, "def stale: .;", 1)).unwrap();

    scriptgen(root.path(), "check")
        .code(1)
        .stdout(contains("--- generated/verify_pods.sh (committed)"))
        .stdout(contains("+++ generated/verify_pods.sh (rendered now)"))
        .stdout(contains("-def stale: .;"))
        .stdout(contains(format!("+{line}")))
        .stderr(contains("run `make generate`"));

    scriptgen(root.path(), "write").success();
    scriptgen(root.path(), "check").success();
    assert_eq!(
        snapshot_of_real_tree(),
        before,
        "the real generated/ changed"
    );
}

#[test]
fn a_missing_file_or_lost_exec_bit_is_stale() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    copy_generated(root.path());
    let wrapper = root.path().join("generated/verify-pods.sh");
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o644)).unwrap();
    scriptgen(root.path(), "check")
        .code(1)
        .stderr(contains("not executable"));
    scriptgen(root.path(), "write").success();
    let mode = fs::metadata(&wrapper).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "write restores the exec bits");

    fs::remove_file(root.path().join("generated/verify_pods.sh")).unwrap();
    scriptgen(root.path(), "check")
        .code(1)
        .stderr(contains("generated/verify_pods.sh missing"));
}

#[test]
fn write_into_an_empty_root_creates_both_files() {
    let root = tempfile::tempdir().unwrap();
    scriptgen(root.path(), "write").success();
    for name in ["verify_pods.sh", "verify-pods.sh"] {
        let written = fs::read(root.path().join("generated").join(name)).unwrap();
        let committed = fs::read(
            verify_pods_tests::workspace_root()
                .join("generated")
                .join(name),
        )
        .unwrap();
        assert_eq!(written, committed, "{name}");
    }
    scriptgen(root.path(), "check").success();
}
