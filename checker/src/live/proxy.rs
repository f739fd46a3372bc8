//! One `kubectl proxy` for every list a check reads when it reads the
//! workloads: the pods list, the four workloads lists and the events
//! (issue 30's cost). Each `kubectl get --raw` starts a Go process, about
//! 0.04 s of CPU; four more of them on every deciding state made the check
//! half again as slow on 2 cores, and one beside the proxy still cost a
//! green lane 0.02 s (BENCHMARKS.md). The proxy is kubectl too (the same
//! kubeconfig, context and credentials), started once per check as it
//! begins, and it listens on a unix socket in a directory only this user
//! can open.
//!
//! The proxy is trusted only with success: a call takes its answer when it
//! is a whole HTTP 200. Any other answer (a status, a cut body, a proxy
//! that never started or has gone) is asked again of kubectl, so every
//! error keeps kubectl's words and exit code. A call that runs past its
//! timeout through the proxy ends as a kubectl call that timed out does.
//! A list read whole (chunk size 0) with no copy kept (no `--save-dir`) is
//! read as it comes ([`Streamed`]) and parsed meanwhile; what was parsed
//! counts only once the answer's end was read, else the list is read again
//! from kubectl. Other pages of the pods list, and the watch, go to kubectl.

use super::stop::Stop;
use super::waiting::Waiting;
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

/// What the proxy made of one call: `B` is the body of a whole HTTP 200
/// ([`Proxy::get`]), or of a 200 still being read ([`Proxy::stream`]).
#[derive(Debug)]
pub enum Answer<B = Vec<u8>> {
    /// An HTTP 200: its body.
    Body(B),
    /// The call ran past its timeout.
    TimedOut,
    /// Another status, read whole: kubectl decides what it says
    /// ([`super::kubectl`] fails as kubectl would on a transient one).
    Status(Status),
    /// Anything else: ask kubectl.
    AskKubectl,
}

/// An answer of the proxy that was not a `200`, read whole.
#[derive(Debug)]
pub struct Status {
    /// The HTTP status code.
    pub code: u16,
    /// The answer had a `Retry-After` header: kubectl waits and asks again
    /// by itself on a 429 or a 5xx that has one.
    pub retry_after: bool,
    /// The body (an API Status, when the server sent one).
    pub body: Vec<u8>,
}

/// The most of a non-`200` body read: an API Status is a few hundred bytes.
const STATUS_BODY: u64 = 64 << 10;

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

    /// GET `url` through the proxy within `timeout`; `note`: the lines said
    /// while it runs; `stop` may end it.
    pub fn get(&self, url: &str, timeout: Duration, stop: &Stop, note: Option<Waiting>) -> Answer {
        let answer = match self.stream(url, timeout, stop, note) {
            Answer::Body(mut streamed) => {
                let mut body = Vec::new();
                match streamed.read_to_end(&mut body) {
                    Ok(_) if streamed.whole() => Answer::Body(body),
                    _ if streamed.timed_out() => Answer::TimedOut,
                    _ => Answer::AskKubectl,
                }
            }
            Answer::TimedOut => Answer::TimedOut,
            Answer::Status(status) => Answer::Status(status),
            Answer::AskKubectl => Answer::AskKubectl,
        };
        stop.ended();
        answer
    }

    /// GET `url` through the proxy, its body read as it comes (a list
    /// parsed while it streams), once the head of a `200` is read within
    /// `timeout`. Trust what was read only when [`Streamed::whole`]; `stop`
    /// may end it.
    pub fn stream(
        &self,
        url: &str,
        timeout: Duration,
        stop: &Stop,
        note: Option<Waiting>,
    ) -> Answer<Streamed> {
        // The timeout counts from here, the wait for the proxy included.
        let asked = Instant::now();
        let Some(stream) = self.running().and_then(|r| r.ask(url, timeout, stop)) else {
            return Answer::AskKubectl;
        };
        Streamed::open(stream, (asked, timeout), note)
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

    /// A connection on which `GET url` was asked, registered with `stop`;
    /// None when the proxy does not serve within `timeout` or the request
    /// cannot be made.
    fn ask(&self, url: &str, timeout: Duration, stop: &Stop) -> Option<UnixStream> {
        if !self.serving(timeout)
            || url
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return None;
        }
        let mut stream = UnixStream::connect(&self.socket).ok()?;
        let request = format!(
            "GET {url} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\
             User-Agent: verify-pods/{}\r\nConnection: close\r\n\r\n",
            env!("CARGO_PKG_VERSION")
        );
        stream.write_all(request.as_bytes()).ok()?;
        stop.started_socket(stream.try_clone().ok()?)
            .then_some(stream)
    }
}

/// The proxy's buffer for an answer read as it comes.
const STREAM_BUFFER: usize = 256 << 10;

/// The body of a `200` answer of the proxy, read as it comes ([`Proxy::stream`]).
pub struct Streamed {
    answer: BufReader<UnixStream>,
    body: Body,
    /// The body's end was read: its last chunk, its length, or the close.
    ended: bool,
    timed_out: bool,
    started: Instant,
    timeout: Duration,
    note: Option<Waiting>,
    /// The head's status code, and whether it had a `Retry-After` header.
    code: u16,
    retry_after: bool,
}

/// How the body of an answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// `Transfer-Encoding: chunked`: this many bytes left of the chunk being
    /// read (0: a chunk's size line comes next).
    Chunked(usize),
    /// `Content-Length`: this many bytes left.
    Length(usize),
    /// Neither: where the connection closes (HTTP/1.1 §6.3).
    UntilClosed,
}

impl Streamed {
    /// The answer on `stream`, whose request was sent at `asked`: its body
    /// once the head of a `200` is read within `timeout`; another status
    /// with its body read whole.
    fn open(
        stream: UnixStream,
        (asked, timeout): (Instant, Duration),
        note: Option<Waiting>,
    ) -> Answer<Streamed> {
        let mut streamed = Streamed {
            answer: BufReader::with_capacity(STREAM_BUFFER, stream),
            body: Body::UntilClosed,
            ended: false,
            timed_out: false,
            started: asked,
            timeout,
            note,
            code: 0,
            retry_after: false,
        };
        match streamed.head() {
            Ok(true) => Answer::Body(streamed),
            Err(_) if streamed.timed_out => Answer::TimedOut,
            Ok(false) if streamed.code != 0 => streamed.status(),
            _ => Answer::AskKubectl,
        }
    }

    /// The answer of a status other than `200`, its body read whole (an
    /// API Status is small); one cut or too long is left to kubectl.
    fn status(mut self) -> Answer<Streamed> {
        let mut body = Vec::new();
        let read = (&mut self).take(STATUS_BODY).read_to_end(&mut body);
        match read {
            Ok(_) if self.ended => Answer::Status(Status {
                code: self.code,
                retry_after: self.retry_after,
                body,
            }),
            _ if self.timed_out => Answer::TimedOut,
            _ => Answer::AskKubectl,
        }
    }

    /// Every byte of the body was read: what it made is the answer.
    pub fn whole(&self) -> bool {
        self.ended
    }

    /// The answer ran past its timeout.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Read the status line and the headers: true for a `200`. The status
    /// code is kept (0: no HTTP/1 status line, or a head whose body cannot
    /// be told apart).
    fn head(&mut self) -> io::Result<bool> {
        let status = self.line()?;
        let mut words = status.split(' ');
        if words.next().is_some_and(|w| w.starts_with("HTTP/1.")) {
            self.code = words.next().and_then(|code| code.parse().ok()).unwrap_or(0);
        }
        let ok = self.code == 200;
        loop {
            let line = self.line()?;
            if line.is_empty() {
                return Ok(ok);
            }
            let Some((key, value)) = line.split_once(':') else {
                self.code = 0;
                return Ok(false);
            };
            let (key, value) = (key.trim(), value.trim());
            if key.eq_ignore_ascii_case("Transfer-Encoding") {
                if !value.eq_ignore_ascii_case("chunked") {
                    self.code = 0;
                    return Ok(false);
                }
                self.body = Body::Chunked(0);
            } else if key.eq_ignore_ascii_case("Content-Length") && self.body == Body::UntilClosed {
                let Ok(length) = value.parse() else {
                    self.code = 0;
                    return Ok(false);
                };
                self.body = Body::Length(length);
            } else if key.eq_ignore_ascii_case("Retry-After") {
                self.retry_after = true;
            }
        }
    }

    /// One line of the head or of the chunks, without its CRLF.
    fn line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        self.waiting(|answer| answer.read_until(b'\n', &mut line))?;
        match line.strip_suffix(b"\r\n") {
            Some(text) => String::from_utf8(text.to_vec()).map_err(|_| cut()),
            None => Err(cut()),
        }
    }

    /// Run `read` on the answer within the timeout, saying each note as
    /// it falls due; a read that waits in vain is tried again.
    fn waiting<T>(
        &mut self,
        mut read: impl FnMut(&mut BufReader<UnixStream>) -> io::Result<T>,
    ) -> io::Result<T> {
        loop {
            let elapsed = self.started.elapsed();
            let Some(left) = self
                .timeout
                .checked_sub(elapsed)
                .filter(|left| !left.is_zero())
            else {
                self.timed_out = true;
                return Err(io::ErrorKind::TimedOut.into());
            };
            if let Some(note) = &mut self.note {
                note.say_due(elapsed);
            }
            let until_note = self.note.as_ref().and_then(Waiting::next_due);
            let wait = until_note.map_or(left, |due| left.min(due.saturating_sub(elapsed)));
            self.answer
                .get_ref()
                .set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
            match read(&mut self.answer) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                done => return done,
            }
        }
    }

    /// Read body bytes into `buf`, at most `most`; a close before the
    /// body's end is an error.
    fn some(&mut self, buf: &mut [u8], most: usize) -> io::Result<usize> {
        let most = most.min(buf.len());
        let n = self.waiting(|answer| answer.read(&mut buf[..most]))?;
        if n == 0 && most > 0 {
            return Err(cut());
        }
        Ok(n)
    }
}

/// An answer cut before its body's end.
fn cut() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the proxy's answer was cut")
}

impl Read for Streamed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        match self.body {
            Body::UntilClosed => {
                let n = self.waiting(|answer| answer.read(buf))?;
                self.ended = n == 0;
                Ok(n)
            }
            Body::Length(left) => {
                let n = if left == 0 { 0 } else { self.some(buf, left)? };
                self.body = Body::Length(left - n);
                self.ended = left == n;
                Ok(n)
            }
            Body::Chunked(0) => {
                let size = self.line()?;
                let size = size.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(size, 16).map_err(|_| cut())?;
                if size == 0 {
                    // Trailers, if any, up to the empty line.
                    while !self.line()?.is_empty() {}
                    self.ended = true;
                    return Ok(0);
                }
                self.body = Body::Chunked(size);
                self.read(buf)
            }
            Body::Chunked(left) => {
                let n = self.some(buf, left)?;
                if n == left && !self.line()?.is_empty() {
                    return Err(cut());
                }
                self.body = Body::Chunked(left - n);
                Ok(n)
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Streamed` makes of `answer` (the proxy's bytes, then its
    /// close): None for no `200`; else the body read and whether whole.
    fn streamed(answer: &[u8]) -> Option<(Vec<u8>, bool)> {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        theirs.write_all(answer).unwrap();
        drop(theirs);
        let asked = (Instant::now(), Duration::from_secs(5));
        let Answer::Body(mut streamed) = Streamed::open(ours, asked, None) else {
            return None;
        };
        let mut body = Vec::new();
        let read = streamed.read_to_end(&mut body);
        assert_eq!(read.is_ok(), streamed.whole(), "{read:?}");
        Some((body, streamed.whole()))
    }

    #[test]
    fn a_streamed_200_is_whole_at_its_last_chunk_its_length_or_the_close() {
        let chunked =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n1;x\r\n}\r\n0\r\n\r\n";
        assert_eq!(streamed(chunked), Some((b"{}".to_vec(), true)));
        let by_length = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(streamed(by_length), Some((b"{}".to_vec(), true)));
        let until_closed = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}";
        assert_eq!(streamed(until_closed), Some((b"{}".to_vec(), true)));
    }

    #[test]
    fn a_streamed_answer_cut_or_not_200_is_not_trusted() {
        let forbidden = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(streamed(forbidden), None);
        assert_eq!(streamed(b"HTTP/1.1 200 OK\r\n"), None);
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{}";
        assert_eq!(streamed(short), Some((b"{}".to_vec(), false)));
        let no_last_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n";
        assert_eq!(streamed(no_last_chunk), Some((b"{}".to_vec(), false)));
        let cut_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{}";
        assert_eq!(streamed(cut_chunk), Some((b"{}".to_vec(), false)));
        let bad_size =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n";
        assert_eq!(streamed(bad_size), Some((Vec::new(), false)));
    }

    #[test]
    fn another_status_is_read_whole_with_its_retry_after() {
        let opened = |answer: &[u8]| {
            let (ours, mut theirs) = UnixStream::pair().unwrap();
            theirs.write_all(answer).unwrap();
            drop(theirs);
            Streamed::open(ours, (Instant::now(), Duration::from_secs(5)), None)
        };
        let failed = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\n{}";
        let Answer::Status(status) = opened(failed) else {
            panic!("a 500 is a status");
        };
        assert_eq!((status.code, status.retry_after), (500, false));
        assert_eq!(status.body, b"{}");
        let later = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\r\n{}";
        let Answer::Status(status) = opened(later) else {
            panic!("a 503 is a status");
        };
        assert_eq!((status.code, status.retry_after), (503, true));
        // A body cut short is left to kubectl.
        let cut = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 9\r\n\r\n{}";
        assert!(matches!(opened(cut), Answer::AskKubectl));
    }

    #[test]
    fn a_streamed_answer_past_its_timeout_has_timed_out() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        theirs
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{")
            .unwrap();
        let asked = (Instant::now(), Duration::from_millis(50));
        let Answer::Body(mut streamed) = Streamed::open(ours, asked, None) else {
            panic!("no 200");
        };
        let mut body = Vec::new();
        let read = streamed.read_to_end(&mut body);
        assert!(
            read.is_err() && streamed.timed_out() && !streamed.whole(),
            "{read:?}"
        );
        assert_eq!(body, b"{");
        drop(theirs);
    }

    #[test]
    fn a_head_past_its_timeout_has_timed_out() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        theirs.write_all(b"HTTP/1.1 200 OK\r\nContent-Le").unwrap();
        let asked = (Instant::now(), Duration::from_millis(50));
        let opened = Streamed::open(ours, asked, None);
        assert!(matches!(opened, Answer::TimedOut));
        drop(theirs);
    }
}
