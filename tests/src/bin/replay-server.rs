//! `replay-server`: run the replay API server by hand and point kubectl at it.
//!
//! ```text
//! replay-server --state tests/corpus/all-running --state t1/pods.json --port 0 \
//!               [--page-size N] [--now RFC3339 (default: the wall clock)] [--version v1.32.0] \
//!               [--fault pods-page-2=expired] [--kubeconfig FILE] \
//!               [--tls] [--token T] [--exec-plugin-ms N] [--every MILLIS] [--watch-history N] \
//!               [--request-log FILE]
//! ```
//! It prints its URL (and writes a kubeconfig when asked: with `--tls` its
//! certificate beside it, with `--exec-plugin-ms` an exec credential plugin
//! beside it that takes N ms and hands kubectl the token), then logs each
//! request on stderr until killed (a watch again when it ends, with the
//! events it sent). `--request-log FILE` also writes each request as one
//! JSON object per line, for the load benchmark (bench/settle.py).
#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use verify_pods_tests::replay::client::write_kubeconfig;
use verify_pods_tests::replay::{
    Advance, ExecPlugin, FaultRule, KubeOptions, LogEntry, Server, State,
};

const USAGE: &str =
    "usage: replay-server --state DIR|PODS.json[,EVENTS.json] [--state …] [--port N]
       [--page-size N] [--now RFC3339] [--version vX.Y.Z] [--fault TARGET=FAULT[@once|@N]]
       [--kubeconfig FILE] [--tls] [--token T] [--exec-plugin-ms N]
       [--every MILLIS] [--watch-history N] [--request-log FILE]
  TARGET: pods, pods-page-N, events, request-N, pods-watch
  FAULT:  expired, 500, 503[:SECS], 429[:SECS], close, close-mid-body,
          stall-mid-body:MILLIS, truncate, other-version, endless, delay:MILLIS, 405,
          and for watches cut-after:N, error-event:N[:410|500]
  The timeline advances after each successful first page of a pods list,
  or with --every by the clock (state k from k*MILLIS on). Watches
  (?watch=1) stream the events between states; --watch-history N: a
  watch may start at most N states back (older: ERROR 410 Expired).
  --tls: https with a fresh self-signed certificate (kubectl sends a
  kubeconfig user's credentials only over TLS); --token: 401 without it;
  --exec-plugin-ms: the kubeconfig's user gets its token from an exec
  credential plugin that takes N ms (needs --tls and --token).
  --request-log FILE: first {started_unix: SECONDS} (the wall clock
  --every counts from), then each request as JSON once answered (seq, at:
  seconds since the start, method, path, query, status, bytes of the body
  sent, …); a running watch's line again whenever its bytes grew and when
  it ends: a seq's last line holds its totals. Flushed every 100 ms.";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay-server: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn wall_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn state(arg: &str) -> Result<State, String> {
    let path = Path::new(arg);
    if path.is_dir() {
        return State::from_case_dir(path);
    }
    match arg.split_once(',') {
        Some((pods, events)) => State::from_files(Path::new(pods), Some(Path::new(events))),
        None => State::from_files(path, None),
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    // By hand, ages are shown from the wall clock; tests pin `now`.
    let mut builder = Server::builder().now_seconds(wall_clock());
    let mut kubeconfig: Option<PathBuf> = None;
    let mut token: Option<String> = None;
    let mut plugin_ms: Option<u64> = None;
    let mut request_log: Option<PathBuf> = None;
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        builder = match flag.as_str() {
            "--state" => builder.state(state(&value()?)?),
            "--port" => builder.port(u16::try_from(number(value()?)?).map_err(|e| e.to_string())?),
            "--page-size" => builder.page_size(number(value()?)?),
            "--now" => builder.now(&value()?)?,
            "--version" => builder.git_version(&value()?),
            "--fault" => builder.fault(FaultRule::parse(&value()?)?),
            "--every" => builder.advance(Advance::Every(Duration::from_millis(
                number(value()?)? as u64
            ))),
            "--watch-history" => builder.watch_history(number(value()?)?),
            "--kubeconfig" => {
                kubeconfig = Some(PathBuf::from(value()?));
                builder
            }
            "--tls" => builder.tls(),
            "--token" => {
                let text = value()?;
                token = Some(text.clone());
                builder.token(&text)
            }
            "--request-log" => {
                request_log = Some(PathBuf::from(value()?));
                builder
            }
            "--exec-plugin-ms" => {
                plugin_ms = Some(number(value()?)? as u64);
                builder
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}")),
        };
    }
    let exec_plugin = match (plugin_ms, &token) {
        (None, _) => None,
        (Some(ms), Some(token)) => Some(ExecPlugin {
            delay: Duration::from_millis(ms),
            token: token.clone(),
        }),
        (Some(_), None) => return Err("--exec-plugin-ms needs --token".into()),
    };
    let server = builder.start().map_err(|e| format!("cannot listen: {e}"))?;
    if let Some(path) = kubeconfig {
        let mut options = KubeOptions::for_server(&server);
        if exec_plugin.is_some() {
            options.token = None;
            options.exec_plugin = exec_plugin;
        }
        write_kubeconfig(&path, &server.url(), &options)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let mut requests = request_log
        .map(|path| RequestLog::create(&path, &server))
        .transpose()?;
    println!("{}", server.url());
    let mut printed = 0;
    let mut running_watches = Vec::new();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let log = server.log();
        for entry in &log[printed.min(log.len())..] {
            eprintln!("{}", entry.line());
            if entry.is_running_watch() {
                running_watches.push(entry.seq);
            }
        }
        if let Some(requests) = requests.as_mut() {
            requests.write(&log[printed.min(log.len())..], &log)?;
        }
        printed = log.len();
        // A watch's line again once it ended: the events it sent.
        running_watches.retain(|seq| {
            let entry = log.iter().find(|e| e.seq == *seq);
            let ended = entry.is_none_or(|e| !e.is_running_watch());
            if let Some(entry) = entry.filter(|_| ended) {
                eprintln!("{}", entry.line());
            }
            !ended
        });
    }
}

/// `--request-log`: each request as a JSON line, a running watch's again
/// whenever it sent more, so that a reader at any instant has the bytes
/// sent so far (the watch of a client that exited ends only when the
/// server next writes to it).
struct RequestLog {
    out: BufWriter<File>,
    path: PathBuf,
    /// Running watches: seq and the bytes their last line said.
    watches: Vec<(usize, usize)>,
}

impl RequestLog {
    fn create(path: &Path, server: &Server) -> Result<Self, String> {
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let started = server
            .started_at()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let mut log = Self {
            out: BufWriter::new(file),
            path: path.to_owned(),
            watches: Vec::new(),
        };
        log.line(&serde_json::json!({ "started_unix": started }))?;
        log.flush()?;
        Ok(log)
    }

    /// Write the `new` entries, and the running watches of `log` that sent
    /// more or ended.
    fn write(&mut self, new: &[LogEntry], log: &[LogEntry]) -> Result<(), String> {
        for entry in new {
            self.line(&entry.json())?;
            if entry.is_running_watch() {
                self.watches.push((entry.seq, entry.bytes));
            }
        }
        let mut watches = std::mem::take(&mut self.watches);
        for (seq, written) in &mut watches {
            let Some(entry) = log.iter().find(|e| e.seq == *seq) else {
                *written = usize::MAX;
                continue;
            };
            if entry.bytes != *written || !entry.is_running_watch() {
                self.line(&entry.json())?;
                *written = if entry.is_running_watch() {
                    entry.bytes
                } else {
                    usize::MAX
                };
            }
        }
        watches.retain(|(_, written)| *written != usize::MAX);
        self.watches = watches;
        self.flush()
    }

    fn line(&mut self, value: &serde_json::Value) -> Result<(), String> {
        writeln!(self.out, "{value}").map_err(|e| format!("{}: {e}", self.path.display()))
    }

    fn flush(&mut self) -> Result<(), String> {
        self.out
            .flush()
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }
}
