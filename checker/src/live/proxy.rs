//! One `kubectl proxy` for the lists read beside the pods list: the four
//! workloads lists and the events (issue 30's cost). Each `kubectl get
//! --raw` starts a Go process, about 0.07 s of CPU; four more of them on
//! every deciding state made the check half again as slow on 2 cores
//! (BENCHMARKS.md). The proxy is kubectl too (the same kubeconfig, context
//! and credentials), started once per check as it begins (or by the first
//! of those lists), and it listens on a unix socket in a directory only
//! this user can open.
//!
//! The proxy is trusted only with success: a call takes its answer when it
//! is a whole HTTP 200. Any other answer (a status, a cut body, a proxy
//! that never started or has gone) is asked again of kubectl, so every
//! error keeps kubectl's words and exit code. A call that runs past its
//! timeout through the proxy ends as a kubectl call that timed out does.
//! The pods list never goes through it: it streams into the parser as it
//! comes, and the proxy's answer is held whole.

use super::stop::Stop;
use crate::cancel::{self, Registered};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// How long a call waits for a proxy still starting (a real one serves
/// within 0.1 s) before the proxy is given up and kubectl asked instead.
const START_WAIT: Duration = Duration::from_secs(1);

/// The check's `kubectl proxy --unix-socket`: started by [`Proxy::start`]
/// as the check begins (its start then overlaps the pods list), or by the
/// first call that wants it; killed when dropped.
pub struct Proxy {
    /// The kubectl binary and its global flags (`--context`, `--kubeconfig`).
    program: OsString,
    global_args: Vec<String>,
    running: OnceLock<Option<Running>>,
}

/// A started proxy.
struct Running {
    socket: PathBuf,
    dir: PathBuf,
    child: Child,
    state: Arc<(Mutex<State>, Condvar)>,
    started: Instant,
    /// The proxy's process group, killed on a cancellation.
    _group: Registered,
    /// The socket and its directory, removed on a cancellation.
    _files: Registered,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let socket = self
            .running
            .get()
            .and_then(|r| r.as_ref().map(|r| &r.socket));
        f.debug_struct("Proxy").field("socket", &socket).finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Starting,
    Serving,
    /// Exited, never started, or given up: kubectl answers every call.
    Gone,
}

/// A line to say once a call has run this long (kubectl's waiting note).
pub type Note = (String, Duration);

/// What the proxy made of one call.
#[derive(Debug)]
pub enum Answer {
    /// A whole HTTP 200: its body.
    Body(Vec<u8>),
    /// The call ran past its timeout.
    TimedOut,
    /// Anything else: ask kubectl.
    AskKubectl,
}

impl Proxy {
    /// The proxy `program` (kubectl, with its `global_args`) would run;
    /// nothing starts before [`Proxy::start`] or the first call.
    pub fn new(program: &OsStr, global_args: Vec<String>) -> Proxy {
        Proxy {
            program: program.to_owned(),
            global_args,
            running: OnceLock::new(),
        }
    }

    /// Start the proxy now rather than at the first call, without waiting
    /// for it to serve.
    pub fn start(&self) {
        self.running();
    }

    /// GET `url` through the proxy within `timeout`; `note` is a line said
    /// once the call has run its time; `stop` may end it.
    pub fn get(&self, url: &str, timeout: Duration, stop: &Stop, note: Option<Note>) -> Answer {
        match self.running() {
            Some(running) => running.get(url, timeout, stop, note),
            None => Answer::AskKubectl,
        }
    }

    /// The proxy, started at the first ask; None when it cannot start.
    fn running(&self) -> Option<&Running> {
        self.running
            .get_or_init(|| Running::start(&self.program, &self.global_args))
            .as_ref()
    }
}

impl Running {
    /// Start `kubectl proxy` on a socket in a new private directory; None
    /// when it cannot be started (kubectl then answers every call). Does
    /// not wait for it to serve.
    fn start(program: &OsStr, global_args: &[String]) -> Option<Running> {
        let dir = private_dir()?;
        let socket = dir.join("proxy.sock");
        let files = cancel::register_files(vec![socket.clone(), dir.clone()]);
        let mut command = Command::new(program);
        command
            .args(global_args)
            .arg("proxy")
            .arg(format!("--unix-socket={}", socket.display()))
            // Five small lists need one core; the pods list or report.jq
            // runs on the other meanwhile, and Go's start on both slowed
            // it (bench/workloads.py: the check 5 % faster with this).
            .env("GOMAXPROCS", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let Ok((mut child, group)) = cancel::spawn_group(&mut command) else {
            let _ = fs::remove_dir_all(&dir);
            return None;
        };
        let state = Arc::new((Mutex::new(State::Starting), Condvar::new()));
        let stdout = child.stdout.take().expect("stdout is piped");
        watch_stdout(stdout, Arc::clone(&state));
        Some(Running {
            socket,
            dir,
            child,
            state,
            started: Instant::now(),
            _group: group,
            _files: files,
        })
    }

    /// Whether the proxy serves, waiting for it while it starts, no longer
    /// than `timeout`; one that does not serve within [`START_WAIT`] of its
    /// start is given up.
    fn serving(&self, timeout: Duration) -> bool {
        let (lock, changed) = &*self.state;
        let state = lock.lock().unwrap_or_else(|e| e.into_inner());
        let wait = START_WAIT
            .saturating_sub(self.started.elapsed())
            .min(timeout);
        let (mut state, _) = changed
            .wait_timeout_while(state, wait, |s| *s == State::Starting)
            .unwrap_or_else(|e| e.into_inner());
        if *state == State::Starting && self.started.elapsed() >= START_WAIT {
            *state = State::Gone;
        }
        *state == State::Serving
    }

    fn get(&self, url: &str, timeout: Duration, stop: &Stop, note: Option<Note>) -> Answer {
        // The timeout counts from here, the wait for the proxy included.
        let asked = Instant::now();
        if !self.serving(timeout)
            || url
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Answer::AskKubectl;
        }
        let Ok(mut stream) = UnixStream::connect(&self.socket) else {
            return Answer::AskKubectl;
        };
        let request = format!(
            "GET {url} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\
             User-Agent: verify-pods/{}\r\nConnection: close\r\n\r\n",
            env!("CARGO_PKG_VERSION")
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return Answer::AskKubectl;
        }
        let Ok(clone) = stream.try_clone() else {
            return Answer::AskKubectl;
        };
        if !stop.started_socket(clone) {
            return Answer::AskKubectl;
        }
        let read = read_until_closed(&mut stream, (asked, timeout), note);
        stop.ended();
        match read {
            Received::All(bytes) => whole_ok_body(&bytes).map_or(Answer::AskKubectl, Answer::Body),
            Received::TimedOut => Answer::TimedOut,
            Received::Failed => Answer::AskKubectl,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        cancel::kill_group(self.child.id());
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A new directory only this user can open, for the socket.
fn private_dir() -> Option<PathBuf> {
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (0..8).find_map(|n| {
        let dir = base.join(format!("verify-pods-{}-{nanos}-{n}", std::process::id()));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .ok()
            .map(|()| dir)
    })
}

/// Read the proxy's stdout in a thread: its `Starting to serve on` line
/// says it listens (kubectl prints it once the socket is bound), the end
/// of its output that it has gone.
fn watch_stdout(stdout: std::process::ChildStdout, state: Arc<(Mutex<State>, Condvar)>) {
    let set = move |new: State| {
        let (lock, changed) = &*state;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        if *state != State::Gone {
            *state = new;
        }
        changed.notify_all();
    };
    thread::spawn(move || {
        let mut lines = BufReader::new(stdout);
        let mut line = String::new();
        while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.starts_with("Starting to serve on ") {
                set(State::Serving);
            }
            line.clear();
        }
        set(State::Gone);
    });
}

/// How reading an answer ended.
enum Received {
    /// The proxy closed the connection: every byte.
    All(Vec<u8>),
    TimedOut,
    Failed,
}

/// Every byte until the proxy closes the connection (`Connection: close`),
/// within `timeout` of `started`, saying `note`'s line once its time has
/// passed since.
fn read_until_closed(
    stream: &mut UnixStream,
    (started, timeout): (Instant, Duration),
    mut note: Option<Note>,
) -> Received {
    let mut bytes = Vec::new();
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let elapsed = started.elapsed();
        let Some(left) = timeout.checked_sub(elapsed).filter(|left| !left.is_zero()) else {
            return Received::TimedOut;
        };
        let until_note = note
            .as_ref()
            .map_or(Duration::ZERO, |n| n.1.saturating_sub(elapsed));
        if let Some((line, _)) = note.take_if(|_| until_note.is_zero()) {
            eprintln!("{line}");
        }
        let wait = match note {
            Some(_) => left.min(until_note),
            None => left,
        };
        if stream
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
            .is_err()
        {
            return Received::Failed;
        }
        match stream.read(&mut buffer) {
            Ok(0) => return Received::All(bytes),
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Received::Failed,
        }
    }
}

/// The body of a whole HTTP/1.1 `200` answer: its `Content-Length` bytes,
/// or its chunks up to the last (empty) one; None for any other status, or
/// a body cut short.
fn whole_ok_body(answer: &[u8]) -> Option<Vec<u8>> {
    let end = memchr::memmem::find(answer, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&answer[..end]).ok()?;
    let body = &answer[end + 4..];
    let mut lines = head.split("\r\n");
    let mut status = lines.next()?.split(' ');
    if !status.next()?.starts_with("HTTP/1.") || status.next()? != "200" {
        return None;
    }
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    if header("Transfer-Encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return dechunk(body);
    }
    match header("Content-Length") {
        Some(length) => (length.parse::<usize>().ok()? == body.len()).then(|| body.to_vec()),
        // Neither: the body ends where the connection did (HTTP/1.1 §6.3).
        None => Some(body.to_vec()),
    }
}

/// A chunked body's bytes; None unless it ends with its last chunk.
fn dechunk(mut chunked: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = memchr::memmem::find(chunked, b"\r\n")?;
        let size_text = std::str::from_utf8(&chunked[..line_end]).ok()?;
        let size_text = size_text.split(';').next()?.trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        chunked = &chunked[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        let data = chunked.get(..size)?;
        body.extend_from_slice(data);
        chunked = chunked.get(size..)?.strip_prefix(b"\r\n")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_200_gives_its_body_by_length_or_by_chunks() {
        let by_length = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(whole_ok_body(by_length).as_deref(), Some(&b"{}"[..]));
        let chunked =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n1;x\r\n}\r\n0\r\n\r\n";
        assert_eq!(whole_ok_body(chunked).as_deref(), Some(&b"{}"[..]));
    }

    #[test]
    fn another_status_or_a_cut_body_is_asked_of_kubectl() {
        let forbidden = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(whole_ok_body(forbidden), None);
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{}";
        assert_eq!(whole_ok_body(short), None);
        let no_last_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n";
        assert_eq!(whole_ok_body(no_last_chunk), None);
        let cut_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{}";
        assert_eq!(whole_ok_body(cut_chunk), None);
        assert_eq!(whole_ok_body(b"HTTP/1.1 200 OK\r\n"), None);
    }
}
