//! What a user installs: `verify-pods --version` names the commit, the same
//! program answers as the kubectl plugin `kubectl verify-pods` through the
//! real kubectl's plugin lookup, and `verify-pods bash render|splice` give
//! what scriptgen renders.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use verify_pods_tests::text;

const VERIFY_PODS: &str = env!("CARGO_BIN_EXE_verify-pods");
const PLUGIN: &str = env!("CARGO_BIN_EXE_kubectl-verify_pods");

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// The commit of this checkout, as `git rev-parse` names it; None outside git.
fn head_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| text(&out.stdout).trim().to_owned())
}

#[test]
fn version_names_the_version_and_the_commit() {
    let commit = head_commit().unwrap_or_else(|| "unknown".to_owned());
    let expected = format!(
        "verify-pods {} (commit {commit})\n",
        env!("CARGO_PKG_VERSION")
    );
    for bin in [VERIFY_PODS, PLUGIN] {
        Command::new(bin)
            .arg("--version")
            .assert()
            .success()
            .stdout(expected.clone());
    }
}

#[test]
fn kubectl_finds_the_plugin_and_runs_it() {
    let plugins = tempfile::tempdir().unwrap();
    fs::copy(PLUGIN, plugins.path().join("kubectl-verify_pods")).unwrap();
    let path = std::env::join_paths([
        plugins.path().to_owned(),
        verify_pods_tests::replay::client::real_kubectl_dir(),
    ])
    .unwrap();
    let kubectl = || {
        let mut cmd = Command::new("kubectl");
        cmd.env("PATH", &path).env("KUBECONFIG", "/dev/null");
        cmd
    };
    kubectl()
        .args(["plugin", "list", "--name-only"])
        .assert()
        .stdout(predicate::str::contains("kubectl-verify_pods"));
    kubectl()
        .args(["verify-pods", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Usage: kubectl verify-pods <COMMAND>",
        ));
    kubectl()
        .args(["verify-pods", "check", "--snapshot"])
        .arg(repo("samples/pods.json"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("Pod status: "));
}

#[test]
fn bash_render_prints_the_generated_files() {
    for (args, file) in [
        (&["bash", "render"][..], "generated/verify_pods.sh"),
        (
            &["bash", "render", "--wrapper"][..],
            "generated/verify-pods.sh",
        ),
    ] {
        let committed = fs::read_to_string(repo(file)).unwrap();
        Command::new(VERIFY_PODS)
            .args(args)
            .assert()
            .success()
            .stdout(committed);
    }
    let fields = scriptgen::render::Fields::with(&[]).unwrap();
    let definition = scriptgen::render::definition(&fields).unwrap();
    Command::new(VERIFY_PODS)
        .args(["bash", "render", "--definition"])
        .assert()
        .success()
        .stdout(definition);
}

#[test]
fn bash_splice_shows_checks_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("validate-scheduling.sh");
    let original =
        fs::read_to_string(repo("scriptgen/tests/fixtures/validate-scheduling.sh")).unwrap();
    fs::write(&script, &original).unwrap();
    let splice = |flag: Option<&str>| {
        let mut cmd = Command::new(VERIFY_PODS);
        cmd.args(["bash", "splice"]).arg(&script).args(flag);
        cmd.assert()
    };
    splice(None)
        .success()
        .stdout(predicate::str::contains("validate-scheduling.sh (spliced)"));
    splice(Some("--check"))
        .code(1)
        .stderr(predicate::str::contains(
            "verify_pods() differs: run `verify-pods bash splice ",
        ));
    assert_eq!(fs::read_to_string(&script).unwrap(), original);
    splice(Some("--write")).success();
    splice(Some("--check")).success().stdout("");
    let spliced = fs::read_to_string(&script).unwrap();
    let definition =
        scriptgen::render::definition(&scriptgen::render::Fields::with(&[]).unwrap()).unwrap();
    assert!(spliced.contains(&definition));
}

#[test]
fn bash_splice_of_a_missing_script_is_one_line_and_exit_2() {
    Command::new(VERIFY_PODS)
        .args([
            "bash",
            "splice",
            "/nonexistent/validate-scheduling.sh",
            "--check",
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            predicate::str::is_match(
                "^verify-pods: error: /nonexistent/validate-scheduling.sh: [^\n]+\n$",
            )
            .unwrap(),
        );
}
