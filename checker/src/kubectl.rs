//! Running kubectl: one process per document, its exit status checked, its
//! stderr kept for the error message, killed when it hangs past its timeout.
//!
//! kubectl prints a *valid* List on stdout even when it fails (an empty List
//! on a 500, a partial one when pagination fails with 410 Expired), so its
//! output is only used when it exits 0.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How to run kubectl.
#[derive(Debug, Clone)]
pub struct Kubectl {
    /// The kubectl binary (`kubectl` on PATH by default).
    pub program: OsString,
    /// `--context`, when given.
    pub context: Option<String>,
    /// `--kubeconfig`, when given.
    pub kubeconfig: Option<PathBuf>,
    /// Kill kubectl when one call runs longer than this.
    pub timeout: Duration,
}

/// Why a kubectl call gave no usable output.
#[derive(Debug)]
pub enum KubectlError {
    /// The binary could not be started.
    Spawn { program: String, error: io::Error },
    /// kubectl exited non-zero; its stderr says why.
    Failed {
        command: String,
        status: ExitStatus,
        stderr: String,
    },
    /// kubectl ran past its timeout and was killed.
    TimedOut { command: String, after: Duration },
}

impl fmt::Display for KubectlError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            KubectlError::Spawn { program, error } if error.kind() == io::ErrorKind::NotFound => {
                write!(
                    f,
                    "cannot run {program}: not found (install kubectl or pass --kubectl PATH)"
                )
            }
            KubectlError::Spawn { program, error } => write!(f, "cannot run {program}: {error}"),
            KubectlError::Failed {
                command,
                status,
                stderr,
            } => {
                let why = last_line(stderr).unwrap_or("no error message");
                write!(f, "`{command}` failed ({status}): {why}")
            }
            KubectlError::TimedOut { command, after } => {
                write!(
                    f,
                    "`{command}` did not finish within {}s and was killed",
                    after.as_secs()
                )
            }
        }
    }
}

impl std::error::Error for KubectlError {}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

impl Kubectl {
    fn command_line(&self, args: &[&str]) -> String {
        let mut words = vec![self.program.to_string_lossy().into_owned()];
        words.extend(self.global_args());
        words.extend(args.iter().map(|a| (*a).to_owned()));
        words.join(" ")
    }

    fn global_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(context) = &self.context {
            args.push(format!("--context={context}"));
        }
        if let Some(kubeconfig) = &self.kubeconfig {
            args.push(format!("--kubeconfig={}", kubeconfig.display()));
        }
        args
    }

    /// Run `kubectl ARGS`, hand its stdout to `consume` while it runs, then
    /// check how it exited. A non-zero exit wins over whatever `consume` made
    /// of the output: partial output is never used.
    pub fn run<T>(
        &self,
        args: &[&str],
        consume: impl FnOnce(&mut dyn Read) -> T,
    ) -> Result<T, KubectlError> {
        let command = self.command_line(args);
        let mut child = Command::new(&self.program)
            .args(self.global_args())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group, so a timeout also kills what kubectl started
            // (a wrapper script's children would keep the pipe open).
            .process_group(0)
            .spawn()
            .map_err(|error| KubectlError::Spawn {
                program: self.program.to_string_lossy().into_owned(),
                error,
            })?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let stderr = collect_stderr(&mut child);
        let child = Arc::new(Mutex::new(child));
        let (done, watchdog) = spawn_watchdog(Arc::clone(&child), self.timeout);

        let value = consume(&mut stdout);
        drain(&mut stdout);
        let status = wait(&child);
        let timed_out = finish_watchdog(done, watchdog);
        let stderr = stderr.join().unwrap_or_default();

        if timed_out {
            return Err(KubectlError::TimedOut {
                command,
                after: self.timeout,
            });
        }
        if !status.success() {
            return Err(KubectlError::Failed {
                command,
                status,
                stderr,
            });
        }
        Ok(value)
    }
}

fn collect_stderr(child: &mut Child) -> thread::JoinHandle<String> {
    let mut stderr = child.stderr.take().expect("stderr is piped");
    thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    })
}

/// Read what the consumer left, so kubectl never blocks on a full pipe.
fn drain(stdout: &mut ChildStdout) {
    let _ = io::copy(stdout, &mut io::sink());
}

fn wait(child: &Mutex<Child>) -> ExitStatus {
    loop {
        if let Ok(Some(status)) = child.lock().expect("child lock").try_wait() {
            return status;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Kill the child when `timeout` passes before the caller says it is done.
fn spawn_watchdog(
    child: Arc<Mutex<Child>>,
    timeout: Duration,
) -> (mpsc::Sender<()>, thread::JoinHandle<bool>) {
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || match finished.recv_timeout(timeout) {
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let mut child = child.lock().expect("child lock");
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.kill();
            true
        }
        _ => false,
    });
    (done, watchdog)
}

fn finish_watchdog(done: mpsc::Sender<()>, watchdog: thread::JoinHandle<bool>) -> bool {
    let _ = done.send(());
    watchdog.join().unwrap_or(false)
}
