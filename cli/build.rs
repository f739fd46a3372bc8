//! `verify-pods --version` names the commit it was built from: `git
//! rev-parse HEAD` when built inside a git checkout (`cargo install --path
//! cli`, `cargo build`), else "unknown" (e.g. from a source tarball).

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    println!(
        "cargo:rustc-env=VERIFY_PODS_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it
    // names (a commit), wherever this worktree keeps them.
    for file in ["HEAD", "packed-refs"] {
        watch(git(&["rev-parse", "--git-path", file]));
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(git(&["rev-parse", "--git-path", &branch]));
    }
}

/// The trimmed stdout of a successful git command, run in this package.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// Ask cargo to rerun this script when `path` changes; a path that does not
/// exist is left out (cargo would rerun the script on every build).
fn watch(path: Option<String>) {
    if let Some(path) = path.filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
