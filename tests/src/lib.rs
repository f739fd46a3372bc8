//! Test support for verify-pods: the recorded corpus, the built binaries, and
//! the real tools the parity tests compare against (jq 1.6, libjq 1.8 through
//! the PyPI `jq` module, bash with the generated wrapper and a stub kubectl).
//!
//! Everything here runs real programs; nothing computes an expected result.
#![forbid(unsafe_code)]

pub mod corpus;
pub mod replay;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

pub use corpus::{bad_inputs, cases, Case};

/// The repository root (the workspace that holds `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives inside the workspace")
        .to_owned()
}

/// `target/<profile>/` of the running test binary (`…/deps/<test>-<hash>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    let deps = exe
        .parent()
        .expect("test binaries live in target/<profile>/deps");
    deps.parent()
        .expect("deps/ lives in target/<profile>/")
        .to_owned()
}

/// The cargo profile of the running test binary (`dev` for target/debug).
fn profile_name() -> String {
    let dir = profile_dir();
    match dir.file_name().and_then(OsStr::to_str) {
        Some("debug") | None => "dev".to_owned(),
        Some(other) => other.to_owned(),
    }
}

/// A workspace binary (`verify-pods`, `scriptgen`) of the same profile as the
/// running test, built first so a test never runs a stale binary. (Cargo
/// builds only the tested package's own binaries for integration tests.)
pub fn binary(name: &str) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.iter().any(|b| b == name) {
        build_binary(name);
        built.push(name.to_owned());
    }
    let path = profile_dir().join(name);
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// `cargo build --bin NAME` (a no-op when it is fresh, as under `make test`).
fn build_binary(name: &str) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--profile",
            &profile_name(),
            "--bin",
            name,
        ])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .status()
        .expect("cannot run cargo build");
    assert!(status.success(), "cargo build --bin {name} failed");
}

/// Run a command to completion with `stdin` closed; panics if it cannot start.
pub fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}
