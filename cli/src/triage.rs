//! `verify-pods triage`: read CI job logs and tell, with line numbers,
//! whether a red `verify_pods` was the sampling race of the old function
//! (several `kubectl get pods` calls that saw different cluster states) or a
//! real scheduling failure.
//!
//! A log is read line by line in bounded memory (lines cut at [`MAX_LINE`]
//! bytes, at most [`KEEP_FINDINGS`] findings kept per class, a failure block
//! holds a few counters), so a log of any size streams through.
//!
//! Every `Pod status:` line (a frozen grammar, see [`pattern`]) that reports
//! unscheduled or failed pods opens a **failure block**: the lines after it up
//! to the next status line, the next GitHub Actions step header (`##[group]Run …`), or
//! [`BLOCK_LINES`] lines, whichever comes first. Its first part, up to the
//! first line that speaks of events (an event row, an events table header,
//! any line containing "event"), is the **unscheduled listing**. Each status
//! line is then classified:
//! - **impossible**: `unscheduled > pending`, or `running + pending + failed > total`;
//! - **contradicted**: `unscheduled > 0` and `No resources found` in its
//!   unscheduled listing (the listing was a second query that saw no such pod);
//! - **red herring**: FailedScheduling event rows in its block whose
//!   namespace is excluded (kube-system…): they are not about the checked pods.
//!
//! A status line that is impossible or contradicted carries the race
//! signature; red herrings are reported but alone do not make one. The
//! verdict of a log: `race-signature` when any status line carries it, else
//! `real-failure` when any reports unscheduled or failed pods, else `pass`
//! when there is a status line, else `no-status-line`.

mod lines;
mod pattern;
mod run;
mod text;

pub use pattern::{Status, StatusPattern};
pub(crate) use run::run_triage;

use serde::Serialize;
use std::io::{self, BufRead};

/// Longest line kept, in bytes; the rest of a longer line is skipped.
pub const MAX_LINE: usize = 64 * 1024;
/// A failure block ends at the latest this many lines after its status line.
pub const BLOCK_LINES: u64 = 1000;
/// Findings kept in detail per class; the others are only counted.
pub const KEEP_FINDINGS: usize = 100;
/// Line numbers kept per red herring.
const KEEP_LINES: usize = 10;

/// The verdict on one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    RaceSignature,
    RealFailure,
    Pass,
    NoStatusLine,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::RaceSignature => "race-signature",
            Verdict::RealFailure => "real-failure",
            Verdict::Pass => "pass",
            Verdict::NoStatusLine => "no-status-line",
        }
    }
}

/// What one status line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Impossible or contradicted.
    RaceSignature,
    /// Unscheduled or failed pods, coherent.
    Failure,
    /// Nothing unscheduled or failed, coherent.
    Pass,
}

/// FailedScheduling events of excluded namespaces after a status line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RedHerring {
    /// How many event rows.
    pub count: u64,
    /// The first line numbers (at most 10).
    pub lines: Vec<u64>,
    /// Their namespaces, distinct, in order of appearance (at most 10).
    pub namespaces: Vec<String>,
}

/// One status line and what its failure block showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// 1-based line number of the status line.
    pub line: u64,
    pub class: Class,
    pub status: Status,
    /// Why the counts cannot come from one cluster state (empty if they can).
    pub impossible: Vec<String>,
    /// The line of `No resources found` in the unscheduled listing.
    pub contradicted_at: Option<u64>,
    pub red_herring: Option<RedHerring>,
    /// FailedScheduling event rows of other (or unknown) namespaces.
    pub events_in_checked_namespaces: u64,
}

/// The triage of one log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogReport {
    /// The path as given (`-` for stdin).
    pub log: String,
    pub verdict: Verdict,
    /// Lines read.
    pub lines: u64,
    /// Status lines found.
    pub status_lines: u64,
    /// The findings kept, in log order.
    pub findings: Vec<Finding>,
    /// Findings only counted (more than [`KEEP_FINDINGS`] of one class).
    pub findings_omitted: u64,
    /// The verdict in words, one reason per entry, with line numbers.
    pub reasons: Vec<String>,
}

/// Triage one log.
pub fn scan(reader: impl BufRead, log: &str, excluded: &[String]) -> io::Result<LogReport> {
    let mut scanner = Scanner::new(excluded);
    let mut lines = lines::Lines::new(reader, MAX_LINE);
    while let Some(line) = lines.next_line()? {
        scanner.line(&line);
    }
    Ok(scanner.finish(log))
}

/// The failure block being read.
struct Block {
    finding: Finding,
    lines: u64,
    listing_open: bool,
}

struct Scanner<'a> {
    pattern: &'static StatusPattern,
    excluded: &'a [String],
    line_no: u64,
    block: Option<Block>,
    findings: Vec<Finding>,
    /// Findings seen per class: race, failure, pass.
    seen: [u64; 3],
    /// The last passing status line, kept or not: what a pass verdict cites.
    last_pass: Option<Finding>,
}

fn class_index(class: Class) -> usize {
    match class {
        Class::RaceSignature => 0,
        Class::Failure => 1,
        Class::Pass => 2,
    }
}

impl<'a> Scanner<'a> {
    fn new(excluded: &'a [String]) -> Self {
        Scanner {
            pattern: StatusPattern::canonical(),
            excluded,
            line_no: 0,
            block: None,
            findings: Vec::new(),
            seen: [0; 3],
            last_pass: None,
        }
    }

    fn line(&mut self, raw: &str) {
        self.line_no += 1;
        let clean = text::strip_ansi(raw);
        if let Some(status) = self.pattern.parse(&clean) {
            self.close();
            let finding = Finding {
                line: self.line_no,
                class: Class::Pass,
                status,
                impossible: Vec::new(),
                contradicted_at: None,
                red_herring: None,
                events_in_checked_namespaces: 0,
            };
            if status.unscheduled > 0 || status.failed > 0 {
                self.block = Some(Block {
                    finding,
                    lines: 0,
                    listing_open: true,
                });
            } else {
                self.keep(finding);
            }
            return;
        }
        let Some(block) = &mut self.block else {
            return;
        };
        block.lines += 1;
        let line = text::strip_timestamp(&clean);
        if text::is_step_marker(line) || block.lines > BLOCK_LINES {
            self.close();
            return;
        }
        let message = text::strip_prefixes(line);
        if let Some(row) = text::event_row(message) {
            block.listing_open = false;
            match row.namespace {
                Some(ns) if self.excluded.iter().any(|e| e == ns) => {
                    red_herring(&mut block.finding, self.line_no, ns);
                }
                _ => block.finding.events_in_checked_namespaces += 1,
            }
        } else if text::is_no_resources(message) {
            let finding = &mut block.finding;
            if block.listing_open
                && finding.status.unscheduled > 0
                && finding.contradicted_at.is_none()
            {
                finding.contradicted_at = Some(self.line_no);
            }
        } else if text::is_events_marker(message) {
            block.listing_open = false;
        }
    }

    /// Classify the open block's status line and keep it.
    fn close(&mut self) {
        if let Some(block) = self.block.take() {
            self.keep(block.finding);
        }
    }

    /// Classify a status line and keep it (or count it past the limit).
    fn keep(&mut self, mut finding: Finding) {
        finding.impossible = impossible(&finding.status);
        let s = finding.status;
        finding.class = if !finding.impossible.is_empty() || finding.contradicted_at.is_some() {
            Class::RaceSignature
        } else if s.unscheduled > 0 || s.failed > 0 {
            Class::Failure
        } else {
            Class::Pass
        };
        let seen = &mut self.seen[class_index(finding.class)];
        *seen += 1;
        if finding.class == Class::Pass {
            self.last_pass = Some(finding.clone());
        }
        if *seen <= KEEP_FINDINGS as u64 {
            self.findings.push(finding);
        }
    }

    fn finish(mut self, log: &str) -> LogReport {
        self.close();
        let [race, failure, pass] = self.seen;
        let verdict = if race > 0 {
            Verdict::RaceSignature
        } else if failure > 0 {
            Verdict::RealFailure
        } else if pass > 0 {
            Verdict::Pass
        } else {
            Verdict::NoStatusLine
        };
        let status_lines = race + failure + pass;
        let findings_omitted = status_lines - self.findings.len() as u64;
        let reasons = reasons(
            verdict,
            &self.findings,
            self.last_pass.as_ref(),
            self.line_no,
            findings_omitted,
        );
        LogReport {
            log: log.to_owned(),
            verdict,
            lines: self.line_no,
            status_lines,
            findings: self.findings,
            findings_omitted,
            reasons,
        }
    }
}

fn red_herring(finding: &mut Finding, line: u64, namespace: &str) {
    let herring = finding.red_herring.get_or_insert_with(RedHerring::default);
    herring.count += 1;
    if herring.lines.len() < KEEP_LINES {
        herring.lines.push(line);
    }
    if herring.namespaces.len() < KEEP_LINES && !herring.namespaces.iter().any(|n| n == namespace) {
        herring.namespaces.push(namespace.to_owned());
    }
}

/// Why these counts cannot describe one state of the cluster.
fn impossible(s: &Status) -> Vec<String> {
    let mut why = Vec::new();
    if s.unscheduled > s.pending {
        why.push(format!(
            "{} unscheduled but {} pending: every unscheduled pod is a pending pod",
            s.unscheduled, s.pending
        ));
    }
    let sum = u128::from(s.running) + u128::from(s.pending) + u128::from(s.failed);
    if sum > u128::from(s.total) {
        why.push(format!(
            "{} running + {} pending + {} failed = {sum}, more than {} total",
            s.running, s.pending, s.failed, s.total
        ));
    }
    why
}

fn line_list(lines: &[u64], count: u64) -> String {
    let listed: Vec<String> = lines.iter().map(u64::to_string).collect();
    let more = count.saturating_sub(lines.len() as u64);
    let word = if count == 1 { "line" } else { "lines" };
    if more > 0 {
        format!("{word} {} and {more} more", listed.join(", "))
    } else {
        format!("{word} {}", listed.join(", "))
    }
}

fn finding_reasons(f: &Finding) -> Vec<String> {
    let mut out = Vec::new();
    for why in &f.impossible {
        out.push(format!("line {}: impossible counts: {why}", f.line));
    }
    if let Some(at) = f.contradicted_at {
        out.push(format!(
            "line {at}: \"No resources found\" where the {} unscheduled pod(s) of line {} were listed: \
             the listing came from another query that saw another cluster state",
            f.status.unscheduled, f.line
        ));
    }
    if f.class == Class::Failure {
        out.push(format!(
            "line {}: {} unscheduled, {} failed, coherent counts, listing not contradicted",
            f.line, f.status.unscheduled, f.status.failed
        ));
    }
    if let Some(h) = &f.red_herring {
        out.push(format!(
            "{}: {} FailedScheduling event(s) of excluded namespaces ({}) after line {}: \
             red herring, they are not about the checked pods",
            line_list(&h.lines, h.count),
            h.count,
            h.namespaces.join(", "),
            f.line
        ));
    }
    out
}

fn reasons(
    verdict: Verdict,
    findings: &[Finding],
    last_pass: Option<&Finding>,
    lines: u64,
    omitted: u64,
) -> Vec<String> {
    let of_class = |class: Class| findings.iter().filter(move |f| f.class == class);
    let mut out: Vec<String> = match verdict {
        Verdict::RaceSignature => of_class(Class::RaceSignature).flat_map(finding_reasons).collect(),
        Verdict::RealFailure => of_class(Class::Failure).flat_map(finding_reasons).collect(),
        Verdict::Pass => last_pass
            .map(|f| format!("line {}: {} pods, none unscheduled or failed", f.line, f.status.total))
            .into_iter()
            .collect(),
        Verdict::NoStatusLine => vec![format!(
            "no `{}…` status line in {lines} lines: not a verify_pods log, or the step stopped before it",
            StatusPattern::canonical().anchor()
        )],
    };
    if omitted > 0 {
        out.push(format!("{omitted} more status line(s) not shown"));
    }
    match verdict {
        Verdict::RaceSignature => out.push(
            "the counts and the diagnostics disagree, so they came from separate kubectl calls \
             that saw different cluster states: the sampling race of the old verify_pods(), \
             not a scheduling failure caused by your change"
                .into(),
        ),
        Verdict::RealFailure => out.push(
            "a real scheduling failure: look at the unscheduled or failed pods listed after the status line"
                .into(),
        ),
        Verdict::Pass | Verdict::NoStatusLine => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triage(log: &str) -> LogReport {
        let excluded = checker::Programs::default_excluded_namespaces();
        scan(log.as_bytes(), "test.log", &excluded).unwrap()
    }

    const SEED: &str = "\
Pod status: 20 total, 20 running, 0 pending (1 unscheduled), 0 failed
Unscheduled pods:
No resources found
FailedScheduling events:
kube-system   2m   Warning   FailedScheduling   pod/coredns-x   0/3 nodes are available
";

    #[test]
    fn the_seed_signature_is_a_race() {
        let report = triage(SEED);
        assert_eq!(report.verdict, Verdict::RaceSignature);
        let f = &report.findings[0];
        assert_eq!((f.line, f.contradicted_at), (1, Some(3)));
        assert_eq!(f.impossible.len(), 1);
        let herring = f.red_herring.as_ref().unwrap();
        assert_eq!((herring.count, herring.lines.clone()), (1, vec![5]));
        assert_eq!(herring.namespaces, ["kube-system"]);
    }

    #[test]
    fn no_resources_after_the_events_marker_is_about_events() {
        let log = "Pod status: 3 total, 2 running, 1 pending (1 unscheduled), 0 failed\n\
                   Unscheduled pods:\n  default/web-1\nFailedScheduling events:\nNo resources found\n";
        let report = triage(log);
        assert_eq!(report.verdict, Verdict::RealFailure);
        assert_eq!(report.findings[0].contradicted_at, None);
    }

    #[test]
    fn blocks_end_at_the_next_status_line_and_at_step_markers() {
        let log = "Pod status: 3 total, 2 running, 1 pending (1 unscheduled), 0 failed\n\
                   ##[group]Run next step\nNo resources found\n\
                   Pod status: 3 total, 3 running, 0 pending (0 unscheduled), 0 failed\n\
                   No resources found\n";
        let report = triage(log);
        assert_eq!(report.verdict, Verdict::RealFailure);
        assert!(report.findings.iter().all(|f| f.contradicted_at.is_none()));
        assert_eq!(report.status_lines, 2);
    }

    #[test]
    fn blocks_end_after_block_lines() {
        let mut log =
            String::from("Pod status: 3 total, 2 running, 1 pending (1 unscheduled), 0 failed\n");
        log.push_str(&"noise\n".repeat(BLOCK_LINES as usize));
        log.push_str("No resources found\n");
        assert_eq!(triage(&log).verdict, Verdict::RealFailure);
        let mut log =
            String::from("Pod status: 3 total, 2 running, 1 pending (1 unscheduled), 0 failed\n");
        log.push_str(&"noise\n".repeat(BLOCK_LINES as usize - 1));
        log.push_str("No resources found\n");
        assert_eq!(triage(&log).verdict, Verdict::RaceSignature);
    }

    #[test]
    fn impossible_sums() {
        let s = Status {
            total: 20,
            running: 20,
            pending: 1,
            unscheduled: 1,
            ..Status::default()
        };
        assert_eq!(impossible(&s).len(), 1);
        let max = Status {
            total: u64::MAX,
            running: u64::MAX,
            pending: u64::MAX,
            ..Status::default()
        };
        assert_eq!(impossible(&max).len(), 1);
    }

    #[test]
    fn findings_beyond_the_limit_are_counted_not_kept() {
        let log = "Pod status: 1 total, 1 running, 0 pending (0 unscheduled), 0 failed\n"
            .repeat(KEEP_FINDINGS + 5);
        let report = triage(&log);
        assert_eq!(report.findings.len(), KEEP_FINDINGS);
        assert_eq!(report.findings_omitted, 5);
        assert_eq!(report.status_lines, KEEP_FINDINGS as u64 + 5);
        let last = format!("line {}:", KEEP_FINDINGS + 5);
        assert!(report.reasons[0].starts_with(&last), "{:?}", report.reasons);
    }

    #[test]
    fn no_resources_after_a_passing_status_line_is_nothing() {
        let log = "Pod status: 3 total, 3 running, 0 pending (0 unscheduled), 0 failed\n\
                   No resources found\n";
        assert_eq!(triage(log).verdict, Verdict::Pass);
    }

    #[test]
    fn excluded_namespaces_come_from_the_caller() {
        let log = "Pod status: 2 total, 1 running, 1 pending (1 unscheduled), 0 failed\n\
                   team-a 2m Warning FailedScheduling pod/x 0/3 nodes\n\
                   kube-system 2m Warning FailedScheduling pod/y 0/3 nodes\n";
        let report = scan(log.as_bytes(), "l", &["team-a".to_owned()]).unwrap();
        let f = &report.findings[0];
        assert_eq!(f.red_herring.as_ref().unwrap().lines, [2]);
        assert_eq!(f.events_in_checked_namespaces, 1);
    }
}
