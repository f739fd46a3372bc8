//! Cancellation: what a check must undo when SIGTERM, SIGINT or SIGHUP ends
//! it (how CI systems cancel a job), before it ends by that same signal.
//!
//! kubectl runs in a process group of its own (so that a timeout can kill
//! what it started), which also means that a signal to the checker, or to
//! the checker's group, misses it. Every kubectl group and every partial
//! artifact is therefore registered here while it exists; a thread that
//! receives the signals kills the groups, removes the files and re-raises
//! the signal with its default action.
//!
//! Registration and cleanup share one lock, which the cleaning thread never
//! releases: a kubectl spawned or a file created after the cleanup would
//! outlive the process, so whoever tries blocks until the process is gone.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};
use std::thread;

/// The signals that cancel a check.
pub const SIGNALS: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

#[derive(Default)]
struct Undo {
    /// Process groups of running kubectl calls (each led by its kubectl).
    groups: Vec<u32>,
    /// Files to remove: the partial copies of --save-dir, the proxy's
    /// socket and then its directory.
    files: Vec<PathBuf>,
}

static UNDO: Mutex<Undo> = Mutex::new(Undo {
    groups: Vec::new(),
    files: Vec::new(),
});

fn undo() -> MutexGuard<'static, Undo> {
    // A panic while holding the lock leaves the lists valid.
    UNDO.lock().unwrap_or_else(|e| e.into_inner())
}

/// Handle SIGTERM, SIGINT and SIGHUP from now on: undo, then end by the
/// signal. Call once, before the first kubectl or artifact.
pub fn install() -> io::Result<()> {
    let mut signals = Signals::new(SIGNALS)?;
    thread::Builder::new()
        .name("cancel".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let undo = undo();
                for group in &undo.groups {
                    kill_group(*group);
                }
                for file in &undo.files {
                    // A directory registered after what it holds is empty.
                    let _ = fs::remove_file(file).or_else(|_| fs::remove_dir(file));
                }
                // Still holding the lock: nothing new starts before the end.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                // Unreachable for the three terminating signals; be sure.
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// SIGKILL every process of group `group`; a group that is gone is fine.
pub fn kill_group(group: u32) {
    if let Ok(group) = i32::try_from(group) {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

/// A registration, removed when dropped.
pub struct Registered(Entry);

enum Entry {
    Group(u32),
    Files(Vec<PathBuf>),
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut undo = undo();
        match &self.0 {
            Entry::Group(group) => undo.groups.retain(|g| g != group),
            Entry::Files(files) => undo.files.retain(|f| !files.contains(f)),
        }
    }
}

/// Spawn `command`, which must make its child lead a new process group
/// (`process_group(0)`), and register that group until the result drops.
pub fn spawn_group(command: &mut Command) -> io::Result<(Child, Registered)> {
    let mut undo = undo();
    let child = command.spawn()?;
    let group = child.id();
    undo.groups.push(group);
    Ok((child, Registered(Entry::Group(group))))
}

/// Register files to remove on cancellation (whether or not they exist yet).
pub fn register_files(files: Vec<PathBuf>) -> Registered {
    undo().files.extend(files.iter().cloned());
    Registered(Entry::Files(files))
}

/// `File::create`, but never after a cancellation has cleaned up.
pub fn create_file(path: &Path) -> io::Result<fs::File> {
    let _undo = undo();
    fs::File::create(path)
}
