//! Settle on one list plus a watch stream (issue 15), as client-go's
//! reflector does: after the first snapshot whose decision is "keep
//! waiting", ONE `kubectl get --raw '/api/v1/pods?watch=1&resourceVersion=RV
//! &allowWatchBookmarks=true&timeoutSeconds=N'` from that list's version,
//! instead of a new list every interval (each list of 150k pods is ~660 MB).
//!
//! The pods are kept in memory, projected by the reader's own projection
//! (the `items` element of `projection.json`'s pods: [`event_shape`] only
//! adds what an event needs around it), keyed by namespace/name: ADDED and
//! MODIFIED replace, DELETED removes, BOOKMARK only moves the version.
//!
//! The events of one transition share one resourceVersion and arrive in a
//! burst, so the state is evaluated (report.jq and decision.jq on one page
//! at the current version) only once the stream has been quiet for
//! [`QUIET`], and at least once per interval. Every evaluated state is the
//! list plus a whole prefix of the stream: the state at one version, coherent
//! by construction. At the deadline a burst still arriving is not evaluated:
//! the last whole state decides.
//!
//! Failures never leave a partial state: an ERROR event (410 Expired), an
//! unreadable event, the stream ending, or kubectl failing after events
//! arrived mean "list again" ([`Ended::ListAgain`]); kubectl failing before
//! any event means the server cannot watch (405) and the check polls
//! ([`Ended::Refused`]). The bash function keeps polling.

mod state;

pub use state::{event_shape, Change, Pods};

use super::kubectl::{Kubectl, KubectlError};
use super::stop::Stop;
use crate::api;
use crate::contract::messages;
use crate::engine::Engine;
use crate::engine::{Decision, EvalError, Report};
use crate::reader::snapshot::{self, ReadOptions};
use crate::reader::Projection;
use jaq_json::Val;
use state::event_version;
use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long the stream must be quiet before the state is evaluated: the
/// events of one transition (one version) arrive together, far closer than
/// this (10k MODIFIED events reach the checker within ~100 ms of each other
/// through kubectl; tests/tests/watch_server.rs measures it).
pub const QUIET: Duration = Duration::from_millis(150);

/// What a settle through a watch needs.
pub struct Settle<'a> {
    pub engine: &'a Engine,
    pub kubectl: &'a Kubectl,
    /// The pods list within the selection: the watch is of the same pods.
    pub pods: api::List,
    pub excluded: &'a crate::engine::Excluded,
    /// When the check started, and its deadline and interval from then.
    pub started: Instant,
    pub deadline: Duration,
    pub interval: Duration,
}

/// How a watch ended.
#[derive(Debug)]
pub enum Ended {
    /// decision.jq said stop, or the deadline passed: the last whole state
    /// evaluated, and when (since the check started).
    Decided {
        report: Report,
        decision: Decision,
        waited: Duration,
        /// The documents of that state (one page at its version), from
        /// which the workloads are checked (issue 30).
        pods: Vec<Val>,
    },
    /// The watch broke (why, in words): list again, never go on from a
    /// partial state.
    ListAgain(String),
    /// The server would not watch (why, in words): poll.
    Refused(String),
}

/// One state the watch led to, as evaluated.
#[derive(Clone)]
pub struct Evaluated {
    pub report: Report,
    pub decision: Decision,
    /// The documents the report was made from.
    pub pods: Vec<Val>,
}

impl Evaluated {
    /// This state as the one that decides, evaluated `waited` after the
    /// check started.
    fn decided(self, waited: Duration) -> Ended {
        Ended::Decided {
            report: self.report,
            decision: self.decision,
            waited,
            pods: self.pods,
        }
    }
}

/// The watch URL of `pods` (its path and query: the selection) from
/// `version`, ending after `seconds`.
pub fn url(pods: api::List, version: Option<&str>, seconds: u64) -> String {
    let from = version
        .map(|v| format!("&resourceVersion={}", api::url_encode(v)))
        .unwrap_or_default();
    let query = if pods.query.is_empty() {
        String::new()
    } else {
        format!("{}&", pods.query)
    };
    format!(
        "{}?{query}watch=1{from}&allowWatchBookmarks=true&timeoutSeconds={seconds}",
        pods.path
    )
}

/// What the stream's reader thread sends.
enum Streamed {
    Line(Vec<u8>),
    End(Result<(), KubectlError>),
}

/// How a stream ended, when it did not decide.
enum Followed {
    /// Decided, listed again or refused: the settle ends so.
    Done(Ended),
    /// A transient failure (why): watch again from the last whole version,
    /// after a back-off when the stream gave nothing.
    Again { why: String, events: usize },
}

/// What the settle knows across streams: the last whole state evaluated,
/// and what has changed since.
struct Latest {
    /// The last state evaluated, and when (since the check started).
    last: (Evaluated, Duration),
    /// When it was evaluated, and what that cost.
    evaluated_at: Instant,
    cost: Duration,
    /// When the last progress line was printed: a busy stream's
    /// evaluations print at most one an interval.
    printed_at: Instant,
    /// Since when the pods held differ from `last` (None: they do not).
    changed_since: Option<Instant>,
    /// The last version whose events have all been applied: a new watch
    /// starts from it (events are whole objects: replaying some is harmless).
    whole: Option<String>,
}

impl Latest {
    /// How long a changed state may wait for a version boundary before it
    /// is evaluated, on a stream that never goes quiet: [`BUSY`], or the
    /// last evaluation's cost (never more than half the time evaluating).
    fn busy(&self) -> Duration {
        BUSY.max(self.cost)
    }
}

/// A stream that never goes quiet for [`QUIET`] is still evaluated: at the
/// first version boundary once the state has waited this long.
pub const BUSY: Duration = Duration::from_millis(250);
/// client-go's reflector backs off 800 ms, doubling, up to 30 s.
const BACKOFF: Duration = Duration::from_millis(800);
const BACKOFF_CAP: Duration = Duration::from_secs(30);

/// Why a watch that failed before its first event gives up (the server
/// will not watch: 403 Forbidden, 405 MethodNotAllowed) or lists again
/// (410: its version is too old), from kubectl's `Error from server
/// (Reason)`; anything else is transient.
fn failed_watch(error: &KubectlError) -> Option<Ended> {
    let KubectlError::Failed { stderr, .. } = error else {
        return None;
    };
    let said = |reason: &str| stderr.contains(&format!("({reason})"));
    if said("Forbidden") || said("MethodNotAllowed") {
        return Some(Ended::Refused(error.to_string()));
    }
    if said("Expired") || said("Gone") {
        return Some(Ended::ListAgain(error.to_string()));
    }
    None
}

impl Settle<'_> {
    fn evaluate(&self, pods: &Pods) -> Result<Evaluated, EvalError> {
        let page = vec![pods.page()];
        let report = self.engine.report(page.clone(), self.excluded)?;
        let decision = self.engine.decide(&report)?;
        Ok(Evaluated {
            report,
            decision,
            pods: page,
        })
    }

    /// Watch from the list `docs` (evaluated as `first`) until decision.jq
    /// says stop or the deadline passes. `evaluated` is called with each
    /// new state that still waits and whose counts changed (the progress
    /// line); `attempts` counts the states evaluated; `notice` receives a
    /// warning when a watch fails and is opened again.
    pub fn run(
        &self,
        docs: &[Val],
        first: Evaluated,
        attempts: &mut usize,
        evaluated: &mut dyn FnMut(&Report, usize, Duration) -> Result<(), EvalError>,
        notice: &mut dyn FnMut(&str),
    ) -> Result<Ended, EvalError> {
        let mut pods = Pods::from_list(docs);
        if pods.version().is_none() {
            // A watch without a version starts from the present, not from
            // this list: what changed in between would be missed.
            let why = "the list has no resourceVersion to watch from";
            return Ok(Ended::Refused(why.to_owned()));
        }
        let mut latest = Latest {
            last: (first, self.started.elapsed()),
            evaluated_at: Instant::now(),
            cost: Duration::ZERO,
            printed_at: Instant::now(),
            changed_since: None,
            whole: pods.version().map(str::to_owned),
        };
        let mut failures = 0u32;
        loop {
            let left = self.deadline.saturating_sub(self.started.elapsed());
            // A second past the deadline: the deadline, not the server, ends it.
            let seconds = left.as_secs() + 1;
            let mut kubectl = self.kubectl.clone();
            kubectl.timeout = kubectl.timeout.max(Duration::from_secs(seconds + 10));
            let args = [
                "get".to_owned(),
                "--raw".to_owned(),
                url(self.pods, latest.whole.as_deref(), seconds),
            ];
            let stop = Stop::default();
            let (sender, received) = mpsc::channel();
            let followed = thread::scope(|scope| {
                let (kubectl, stop_copy) = (&kubectl, stop.clone());
                scope.spawn(move || stream(kubectl, &args, &stop_copy, &sender));
                let followed = self.follow(&mut pods, &mut latest, &received, attempts, evaluated);
                stop.stop();
                followed
            })?;
            let (why, events) = match followed {
                Followed::Done(ended) => return Ok(ended),
                Followed::Again { why, events } => (why, events),
            };
            // A stream that gave events was a working watch: start over.
            if events > 0 {
                failures = 0;
            }
            let delay = if events > 0 {
                Duration::ZERO
            } else {
                BACKOFF
                    .saturating_mul(1 << failures.min(6))
                    .min(BACKOFF_CAP)
            };
            failures += 1;
            let left = self.deadline.saturating_sub(self.started.elapsed());
            let delay = delay.min(left);
            let seconds = format!("{:.1}s", delay.as_secs_f64());
            notice(&messages::WATCH_RETRY.format(&[("why", &why), ("delay", &seconds)]));
            thread::sleep(delay);
            if self.started.elapsed() >= self.deadline {
                let (last, waited) = latest.last;
                return Ok(last.decided(waited));
            }
        }
    }

    /// Evaluate the pods held as the latest whole state: Some when it
    /// decides (stop, or `past` the deadline: the deadline decides).
    /// `busy`: evaluated on a stream that is not quiet, whose progress
    /// lines come at most one an interval.
    fn take(
        &self,
        pods: &Pods,
        latest: &mut Latest,
        attempts: &mut usize,
        evaluated: &mut dyn FnMut(&Report, usize, Duration) -> Result<(), EvalError>,
        (past, busy): (bool, bool),
    ) -> Result<Option<Ended>, EvalError> {
        let began = Instant::now();
        let state = self.evaluate(pods)?;
        let waited = self.started.elapsed();
        *attempts += 1;
        latest.evaluated_at = Instant::now();
        latest.cost = began.elapsed();
        latest.changed_since = None;
        if !state.decision.may_settle || past {
            return Ok(Some(state.decided(waited)));
        }
        // A line when the counts change (on a busy stream at most one an
        // interval), and at least one an interval when nothing changes, as
        // the bash function prints one an attempt: never silent while
        // waiting (issue 29). `printed_at` is the evaluation's instant, so
        // a quiet stream's evaluation one interval later is due.
        let due = latest.printed_at.elapsed() >= self.interval;
        let throttled = busy && !due;
        if (counts(&state.report) != counts(&latest.last.0.report) && !throttled) || due {
            evaluated(&state.report, *attempts, waited)?;
            latest.printed_at = latest.evaluated_at;
        }
        latest.last = (state, waited);
        Ok(None)
    }

    fn follow(
        &self,
        pods: &mut Pods,
        latest: &mut Latest,
        received: &mpsc::Receiver<Streamed>,
        attempts: &mut usize,
        evaluated: &mut dyn FnMut(&Report, usize, Duration) -> Result<(), EvalError>,
    ) -> Result<Followed, EvalError> {
        let shape = event_shape(&Projection::canonical());
        let one_thread = ReadOptions {
            threads: 1,
            ..ReadOptions::default()
        };
        let mut events = 0usize;
        let mut last_line = Instant::now();
        loop {
            let elapsed = self.started.elapsed();
            let left = self.deadline.saturating_sub(elapsed);
            let past = left.is_zero();
            // At the deadline, a burst still arriving gets QUIET more to end
            // (or to reach a version boundary); without one, the last whole
            // state decides.
            let grace = (self.deadline + QUIET).saturating_sub(elapsed);
            if past && (latest.changed_since.is_none() || grace.is_zero()) {
                let (last, waited) = latest.last.clone();
                return Ok(Followed::Done(last.decided(waited)));
            }
            let wait = if latest.changed_since.is_some() {
                QUIET
            } else {
                self.interval.saturating_sub(latest.evaluated_at.elapsed())
            };
            let wait = if past {
                wait.min(grace)
            } else {
                wait.min(left)
            };
            match received.recv_timeout(wait) {
                Ok(Streamed::Line(line)) => {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    events += 1;
                    last_line = Instant::now();
                    let event =
                        snapshot::read_documents_with(&line[..], "watch", &shape, &one_thread);
                    let event = match event.as_deref() {
                        Ok([event]) => event.clone(),
                        Ok(_) => {
                            let why = "not one event on a line".to_owned();
                            return Ok(Followed::Done(Ended::ListAgain(why)));
                        }
                        Err(e) => {
                            let why = format!("an unreadable event: {e}");
                            return Ok(Followed::Done(Ended::ListAgain(why)));
                        }
                    };
                    let version = event_version(&event);
                    let boundary = version.is_some() && version.as_deref() != pods.version();
                    if boundary {
                        // The version held is whole: a new one begins.
                        latest.whole = pods.version().map(str::to_owned);
                        // A stream that never goes quiet is evaluated at a
                        // boundary once its state has waited long enough.
                        let due = latest
                            .changed_since
                            .is_some_and(|since| past || since.elapsed() >= latest.busy());
                        if due {
                            let how = (past, true);
                            if let Some(ended) =
                                self.take(pods, latest, attempts, evaluated, how)?
                            {
                                return Ok(Followed::Done(ended));
                            }
                        }
                    }
                    match pods.apply(&event) {
                        Ok(Change::Pods) => {
                            latest.changed_since.get_or_insert_with(Instant::now);
                        }
                        Ok(Change::Version) => {
                            latest.whole = pods.version().map(str::to_owned);
                        }
                        Err(why) => return Ok(Followed::Done(Ended::ListAgain(why))),
                    }
                }
                Ok(Streamed::End(Ok(()))) => {
                    let why = "the server ended the stream".to_owned();
                    return Ok(Followed::Again { why, events });
                }
                Ok(Streamed::End(Err(e))) => {
                    if events == 0 {
                        if let Some(ended) = failed_watch(&e) {
                            return Ok(Followed::Done(ended));
                        }
                    }
                    let why = e.to_string();
                    return Ok(Followed::Again { why, events });
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let why = "the stream's reader ended".to_owned();
                    return Ok(Followed::Again { why, events });
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Quiet for QUIET (not only a wait cut by the deadline's
                    // grace): the burst, and its version, ended.
                    let quiet = latest.changed_since.is_some() && last_line.elapsed() >= QUIET;
                    let interval_due = latest.evaluated_at.elapsed() >= self.interval;
                    if quiet || (interval_due && latest.changed_since.is_none()) {
                        if quiet {
                            latest.whole = pods.version().map(str::to_owned);
                        }
                        let how = (self.started.elapsed() >= self.deadline, false);
                        if let Some(ended) = self.take(pods, latest, attempts, evaluated, how)? {
                            return Ok(Followed::Done(ended));
                        }
                    }
                }
            }
        }
    }
}

/// The counts of the status line: a progress line is printed when they
/// change, not for every event.
fn counts(report: &Report) -> [usize; 7] {
    [
        "total",
        "running",
        "pending",
        "failed",
        "succeeded",
        "other",
        "unscheduled",
    ]
    .map(|key| report.count(key))
}

/// Run the watch's kubectl, sending each line of its output as it comes,
/// then how it ended.
fn stream(kubectl: &Kubectl, args: &[String; 3], stop: &Stop, out: &mpsc::Sender<Streamed>) {
    let args = args.each_ref().map(String::as_str);
    let ended = kubectl.run_stoppable(&args, stop, |stdout| {
        let mut lines = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match lines.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                // A line cut by the stream's end is no event: the next
                // watch starts from the last whole version and sends it again.
                Ok(_) if line.last() != Some(&b'\n') => return,
                Ok(_) => {
                    if out.send(Streamed::Line(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let _ = out.send(Streamed::End(ended));
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_watch_url_asks_for_bookmarks_from_the_version() {
        assert_eq!(
            url(api::PODS, Some("1000"), 61),
            "/api/v1/pods?watch=1&resourceVersion=1000&allowWatchBookmarks=true&timeoutSeconds=61"
        );
    }
}
