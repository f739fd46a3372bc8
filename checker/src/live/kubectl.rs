//! Running kubectl: one process per document, its exit status checked, its
//! stderr kept for the error message, killed when it hangs past its timeout.
//!
//! kubectl prints a *valid* List on stdout even when it fails (an empty List
//! on a 500, a partial one when pagination fails with 410 Expired), so its
//! output is only used when it exits 0.

use super::proxy::{self, Answer, Proxy};
use super::stop::Stop;
use super::waiting::Waiting;
use crate::cancel;
use crate::contract;
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

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
    /// A bound sooner than the timeout for this call (the time left to its
    /// list's end, [`super::list::Until`]); None: the timeout.
    pub bound: Option<Duration>,
    /// The check's interval: a list call still running says so every
    /// interval ([`Waiting`]).
    pub interval: Duration,
    /// The check's `kubectl proxy`, for the lists read beside the pods
    /// list ([`super::proxy`]); None: one kubectl per call.
    pub proxy: Option<Arc<Proxy>>,
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
        use crate::contract::{messages, words};
        let line = match self {
            KubectlError::Spawn { program, error } if error.kind() == io::ErrorKind::NotFound => {
                messages::KUBECTL_NOT_FOUND.format(&[("program", program)])
            }
            KubectlError::Spawn { program, error } => messages::KUBECTL_CANNOT_RUN
                .format(&[("program", program), ("why", &contract::io_words(error))]),
            KubectlError::Failed {
                command,
                status,
                stderr,
            } => {
                let why = last_line(stderr).unwrap_or(words::NO_ERROR_MESSAGE.text);
                messages::KUBECTL_FAILED.format(&[
                    ("command", command),
                    ("code", &shell_status(*status)),
                    ("why", &why),
                ])
            }
            KubectlError::TimedOut { command, after } => messages::KUBECTL_TIMED_OUT
                .format(&[("command", command), ("seconds", &after.as_secs())]),
        };
        f.write_str(&line)
    }
}

/// An exit status as a shell reports it: the exit code, or 128 + the
/// signal that killed the process (what the bash function sees).
fn shell_status(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(-1)
}

impl std::error::Error for KubectlError {}

impl KubectlError {
    /// Whether kubectl failed transiently (a 5xx or a 429, a connection
    /// reset or cut, a body cut short): its last line of stderr says one of
    /// the contract's `transient_failure` words, and the list is asked
    /// again while the deadline allows. A timeout, a refusal (401, 403) or
    /// a kubectl that cannot run is not.
    pub fn transient(&self) -> bool {
        match self {
            KubectlError::Failed { stderr, .. } => last_line(stderr).is_some_and(transient),
            _ => false,
        }
    }
}

/// Whether `why`, a failure's last words (kubectl's, or the reader's on a
/// page it printed), says a transient failure: one of the contract's
/// `transient_failure` words, `|` between them (the bash reads the same).
pub fn transient(why: &str) -> bool {
    let words = contract::words::TRANSIENT_FAILURE.text;
    words.split('|').any(|said| why.contains(said))
}

/// kubectl's last line for an API Status it fails on (`Error from server
/// (InternalError): Internal error occurred: ...`, as kubectl's
/// StandardErrorMessage words it); None when `body` is no failed Status
/// with a reason (kubectl's words then differ: kubectl is asked).
fn status_words(body: &[u8]) -> Option<String> {
    let status: serde_json::Value = serde_json::from_slice(body).ok()?;
    let text = |key: &str| status.get(key).and_then(serde_json::Value::as_str);
    if text("kind") != Some("Status") || text("status") == Some("Success") {
        return None;
    }
    let reason = text("reason").filter(|reason| !reason.is_empty())?;
    let message = text("message").unwrap_or_default();
    Some(format!("Error from server ({reason}): {message}"))
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

impl Kubectl {
    /// `kubectl ARGS` as the errors show it (and the bash function, which
    /// runs `kubectl` from PATH, shows it alike).
    pub fn command_line(&self, args: &[&str]) -> String {
        let mut words = vec![self.program.to_string_lossy().into_owned()];
        words.extend(self.global_args());
        words.extend(args.iter().map(|a| (*a).to_owned()));
        words.join(" ")
    }

    /// The line that says which kubeconfig and context kubectl used, for a
    /// cluster it could not reach (its first pods page failed): the
    /// `--kubeconfig` flag, else `$KUBECONFIG`, else kubectl's default; the
    /// `--context` flag, else what ONE `kubectl config current-context`
    /// prints (none when it fails). As the bash function says it.
    pub fn config_used(&self) -> String {
        use crate::contract::{messages, words};
        let env = std::env::var_os("KUBECONFIG").filter(|value| !value.is_empty());
        let (kubeconfig, kubeconfig_from) = match (&self.kubeconfig, env) {
            (Some(path), _) => (path.display().to_string(), words::KUBECONFIG_FLAG.text),
            (None, Some(env)) => (
                env.to_string_lossy().into_owned(),
                words::KUBECONFIG_ENV.text,
            ),
            (None, None) => (
                words::DEFAULT_KUBECONFIG.text.to_owned(),
                words::KUBECONFIG_DEFAULT.text,
            ),
        };
        let (context, context_from) = match &self.context {
            Some(context) => (context.clone(), words::CONTEXT_FLAG.text),
            None => (
                self.current_context()
                    .unwrap_or_else(|| words::CONTEXT_NONE.text.to_owned()),
                words::CONTEXT_CURRENT.text,
            ),
        };
        messages::KUBECTL_CONFIG.format(&[
            ("kubeconfig", &kubeconfig),
            ("kubeconfig_from", &kubeconfig_from),
            ("context", &context),
            ("context_from", &context_from),
        ])
    }

    /// The first line `kubectl config current-context` prints, when it
    /// exits 0 and the line is not empty.
    fn current_context(&self) -> Option<String> {
        let printed = self
            .run(&["config", "current-context"], |out| {
                let mut text = String::new();
                out.read_to_string(&mut text).map(|_| text)
            })
            .ok()?
            .ok()?;
        let first = printed.lines().next().unwrap_or_default();
        (!first.is_empty()).then(|| first.to_owned())
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

    /// How long this call may run: the timeout, or its bound when sooner.
    fn limit(&self) -> Duration {
        self.bound
            .map_or(self.timeout, |bound| bound.min(self.timeout))
    }

    /// The lines a list call says while it runs (issue 29: never silent
    /// while waiting); none for a watch, which runs on purpose.
    fn waiting(&self, args: &[&str]) -> Option<Waiting> {
        Waiting::of(args, self.interval, self.timeout, self.limit())
    }

    /// What kubectl does with a proxy's answer other than a `200`: an API
    /// Status whose words are a transient failure and that kubectl does
    /// not ask again by itself (no `Retry-After`) fails as kubectl fails on
    /// it, with its words, so that the check asks again as it does after
    /// kubectl; anything else is asked of kubectl.
    fn refused(&self, args: &[&str], status: &proxy::Status) -> Option<KubectlError> {
        let said = status_words(&status.body)?;
        if status.retry_after || !transient(&said) {
            return None;
        }
        use std::os::unix::process::ExitStatusExt;
        Some(KubectlError::Failed {
            command: self.command_line(args),
            // kubectl exits 1 on a server's error.
            status: ExitStatus::from_raw(1 << 8),
            stderr: said,
        })
    }

    /// Run `kubectl ARGS`, hand its stdout to `consume` while it runs, then
    /// check how it exited. A non-zero exit wins over whatever `consume` made
    /// of the output: partial output is never used.
    pub fn run<T>(
        &self,
        args: &[&str],
        consume: impl FnOnce(&mut dyn Read) -> T,
    ) -> Result<T, KubectlError> {
        self.run_stoppable(args, &Stop::default(), consume)
    }

    /// [`Self::run`] for a list read whole as it streams (no copy of it
    /// kept): with the check's proxy, through it, and `consume` reads its
    /// answer as it comes. That saves a kubectl (a Go process, about 0.04 s
    /// of CPU) beside the proxy, which reads the workloads (issue 30's
    /// cost). What `consume` made is taken only when it read the proxy's
    /// `200` to its end; any other answer, or one cut short, is asked again
    /// of kubectl, and `consume` runs again on kubectl's output: every
    /// error keeps kubectl's words. A proxy that runs past the timeout is
    /// kubectl timing out.
    pub fn run_streaming<T>(
        &self,
        args: &[&str],
        mut consume: impl FnMut(&mut dyn Read) -> T,
    ) -> Result<T, KubectlError> {
        let (Some(proxy), ["get", "--raw", url]) = (&self.proxy, args) else {
            return self.run(args, consume);
        };
        let timed_out = || KubectlError::TimedOut {
            command: self.command_line(args),
            after: self.limit(),
        };
        match proxy.stream(url, self.limit(), &Stop::default(), self.waiting(args)) {
            Answer::Body(mut answer) => {
                let value = consume(&mut answer);
                if answer.whole() {
                    return Ok(value);
                }
                if answer.timed_out() {
                    return Err(timed_out());
                }
            }
            Answer::TimedOut => return Err(timed_out()),
            Answer::Status(status) => {
                if let Some(error) = self.refused(args, &status) {
                    return Err(error);
                }
            }
            Answer::AskKubectl => {}
        }
        // kubectl itself: the proxy has had its chance.
        let direct = Kubectl {
            proxy: None,
            ..self.clone()
        };
        direct.run(args, consume)
    }

    /// [`Self::run`], but another thread may end the call early with
    /// [`Stop::stop`] (a watch whose stream is no longer wanted): kubectl's
    /// group is killed, the output ends, and the call fails.
    pub fn run_stoppable<T>(
        &self,
        args: &[&str],
        stop: &Stop,
        consume: impl FnOnce(&mut dyn Read) -> T,
    ) -> Result<T, KubectlError> {
        let command = self.command_line(args);
        match self.through_proxy(args, stop) {
            Answer::Body(bytes) => return Ok(consume(&mut &bytes[..])),
            Answer::TimedOut => {
                let after = self.limit();
                return Err(KubectlError::TimedOut { command, after });
            }
            Answer::Status(status) => {
                if let Some(error) = self.refused(args, &status) {
                    return Err(error);
                }
            }
            Answer::AskKubectl => {}
        }
        let mut spawn = Command::new(&self.program);
        spawn
            .args(self.global_args())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Own process group, so a timeout also kills what kubectl started
            // (a wrapper script's children would keep the pipe open).
            .process_group(0);
        let (mut child, _registered) =
            cancel::spawn_group(&mut spawn).map_err(|error| KubectlError::Spawn {
                program: self.program.to_string_lossy().into_owned(),
                error,
            })?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let stderr = collect_stderr(&mut child);
        stop.started(child.id());
        let (read_all, supervisor) = supervise(child, self.limit(), self.waiting(args));

        let value = consume(&mut stdout);
        drain(&mut stdout);
        let _ = read_all.send(());
        let ended = supervisor
            .join()
            .expect("the kubectl supervisor does not panic");
        // The group is gone: a late stop must not kill a reused id.
        stop.ended();
        let stderr = stderr.join().unwrap_or_default();

        match ended {
            Ended::TimedOut => Err(KubectlError::TimedOut {
                command,
                after: self.limit(),
            }),
            Ended::Exited(status) if !status.success() => Err(KubectlError::Failed {
                command,
                status,
                stderr,
            }),
            Ended::Exited(_) => Ok(value),
        }
    }
}

impl Kubectl {
    /// This kubectl with a `kubectl proxy` of its own for the lists read
    /// beside the pods list, started when the first of them is read.
    pub fn with_proxy(&self) -> Kubectl {
        let mut proxied = self.clone();
        proxied.proxy = Some(Arc::new(Proxy::new(&self.program, self.global_args())));
        proxied
    }

    /// The proxy's answer to `kubectl get --raw URL`, held whole, for a list
    /// that is not the pods list (which streams: [`Self::run_streaming`] or
    /// kubectl) and not a watch (which runs on).
    fn through_proxy(&self, args: &[&str], stop: &Stop) -> Answer {
        let (Some(proxy), ["get", "--raw", url]) = (&self.proxy, args) else {
            return Answer::AskKubectl;
        };
        // The pods list's resource, in every namespace or in one (`-n`).
        let resource = |path: &str| path.rsplit('/').next().map(str::to_owned);
        let path = url.split('?').next().unwrap_or_default();
        if resource(path) == resource(crate::api::PODS.path) || url.contains("watch=") {
            return Answer::AskKubectl;
        }
        proxy.get(url, self.limit(), stop, self.waiting(args))
    }
}

/// How a kubectl call ended.
enum Ended {
    Exited(ExitStatus),
    TimedOut,
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

/// Wait for kubectl in a thread of its own, polling, because the pipes may
/// outlive it: once kubectl has exited, whatever is left of its process
/// group (a child that kept stdout open) is killed so the reader sees the
/// end of the output; when `timeout` passes first, the whole group is
/// killed. The caller says on the returned sender when it has read all.
fn supervise(
    mut child: Child,
    timeout: Duration,
    mut note: Option<Waiting>,
) -> (mpsc::Sender<()>, thread::JoinHandle<Ended>) {
    let (read_all, told) = mpsc::channel::<()>();
    let supervisor = thread::spawn(move || {
        let group = child.id();
        let started = Instant::now();
        let mut poll = SLOW_POLL;
        loop {
            if let Some(note) = &mut note {
                note.say_due(started.elapsed());
            }
            match child.try_wait() {
                Ok(Some(status)) => {
                    // The group outlives its leader while a member lives; its
                    // id is not reused before the group is empty.
                    cancel::kill_group(group);
                    return Ended::Exited(status);
                }
                Ok(None) => {}
                Err(_) => {
                    cancel::kill_group(group);
                    return child.wait().map_or(Ended::TimedOut, Ended::Exited);
                }
            }
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                cancel::kill_group(group);
                let _ = child.kill();
                let _ = child.wait();
                return Ended::TimedOut;
            }
            // Once the output is read, kubectl is about to exit: look often.
            match told.recv_timeout(poll.min(left)) {
                Ok(()) => poll = FAST_POLL,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // The caller is gone (it panicked): keep time without it.
                Err(mpsc::RecvTimeoutError::Disconnected) => thread::sleep(poll.min(left)),
            }
        }
    });
    (read_all, supervisor)
}

/// How often the supervisor looks while kubectl still prints.
const SLOW_POLL: Duration = Duration::from_millis(20);
/// How often it looks once the output has been read.
const FAST_POLL: Duration = Duration::from_millis(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_status_is_worded_as_kubectl_words_it() {
        let status = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
            "message":"Internal error occurred: etcd leader changed","reason":"InternalError","code":500}"#;
        let said = status_words(status).expect("a failed Status");
        assert_eq!(
            said,
            "Error from server (InternalError): Internal error occurred: etcd leader changed"
        );
        assert!(transient(&said));
        // No Status, or none with a reason: kubectl's words differ, so it is asked.
        assert_eq!(status_words(b"upstream exploded"), None);
        assert_eq!(
            status_words(br#"{"kind":"Status","status":"Failure"}"#),
            None
        );
        assert_eq!(status_words(br#"{"kind":"Pod","reason":"X"}"#), None);
    }
}
