//! The `Pod status:` line: a fixed grammar, frozen.
//!
//! Triage reads logs that were written long ago, by the old five-call
//! `verify_pods()` and by every release of this tool since. Their status
//! line is a fact about those logs, not about today's render.jq, so the
//! grammar lives here and never follows a rewording:
//!
//! ```text
//! Pod status: T total, R running, P pending (U unscheduled), F failed[ REST]
//! ```
//!
//! REST may hold more terms (`, 2 succeeded, 1 other`, since the status line
//! adds up) and the checker's `(attempts=N, waited=Ns)`. The tests hold
//! render.jq to this grammar: a line it prints must parse to its report's counts.

/// The counts of one status line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    pub total: u64,
    pub running: u64,
    pub pending: u64,
    pub unscheduled: u64,
    pub failed: u64,
    /// Only in lines of the new checker.
    pub attempts: Option<u64>,
    /// Only in lines of the new checker.
    pub waited_seconds: Option<u64>,
}

/// The literal a status line starts with.
pub const ANCHOR: &str = "Pod status: ";

/// What follows each number of the required part, in order.
const REQUIRED: [&str; 5] = [
    " total, ",
    " running, ",
    " pending (",
    " unscheduled), ",
    " failed",
];

/// The checker's trailing group: `(attempts=N, waited=Ns)`.
const ATTEMPTS: &str = "(attempts=";
const WAITED: &str = ", waited=";
const WAITED_END: &str = "s)";

/// The status-line matcher.
#[derive(Debug, Clone, Copy)]
pub struct StatusPattern;

impl StatusPattern {
    /// The one grammar of the status line.
    pub fn canonical() -> &'static StatusPattern {
        &StatusPattern
    }

    /// The literal a status line starts with.
    pub fn anchor(&self) -> &str {
        ANCHOR
    }

    /// The counts of `line` when it contains a status line.
    pub fn parse(&self, line: &str) -> Option<Status> {
        line.match_indices(ANCHOR).find_map(|(at, _)| {
            let mut text = &line[at + ANCHOR.len()..];
            let mut numbers = [0u64; 5];
            for (n, literal) in numbers.iter_mut().zip(REQUIRED) {
                let (value, rest) = number(text)?;
                *n = value;
                text = rest.strip_prefix(literal)?;
            }
            let [total, running, pending, unscheduled, failed] = numbers;
            let (attempts, waited_seconds) = attempts_group(text).unzip();
            Some(Status {
                total,
                running,
                pending,
                unscheduled,
                failed,
                attempts,
                waited_seconds,
            })
        })
    }
}

/// A run of ASCII digits at the start of `text`, and what follows it.
fn number(text: &str) -> Option<(u64, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let value = text[..digits].parse::<u64>().ok()?;
    Some((value, &text[digits..]))
}

/// `(attempts=N, waited=Ns)` in what follows the required part, if whole.
fn attempts_group(rest: &str) -> Option<(u64, u64)> {
    let (_, group) = rest.split_once(ATTEMPTS)?;
    let (attempts, group) = number(group)?;
    let (waited, group) = number(group.strip_prefix(WAITED)?)?;
    group.starts_with(WAITED_END).then_some((attempts, waited))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(s: Status) -> (u64, u64, u64, u64, u64) {
        (s.total, s.running, s.pending, s.unscheduled, s.failed)
    }

    #[test]
    fn the_old_harness_line_and_the_checker_line_match() {
        let p = StatusPattern::canonical();
        let old = p
            .parse("[INFO] Pod status: 20 total, 20 running, 0 pending (1 unscheduled), 0 failed")
            .unwrap();
        assert_eq!(counts(old), (20, 20, 0, 1, 0));
        assert_eq!((old.attempts, old.waited_seconds), (None, None));
        let new = p
            .parse(
                "Pod status: 25 total, 20 running, 2 pending (2 unscheduled), 0 failed, \
                 2 succeeded, 1 other (attempts=3, waited=10s)",
            )
            .unwrap();
        assert_eq!(counts(new), (25, 20, 2, 2, 0));
        assert_eq!((new.attempts, new.waited_seconds), (Some(3), Some(10)));
    }

    #[test]
    fn a_broken_trailing_group_still_leaves_the_counts() {
        let p = StatusPattern::canonical();
        let broken = p
            .parse(
                "Pod status: 5 total, 4 running, 1 pending (1 unscheduled), 0 failed (attempts=x)",
            )
            .unwrap();
        assert_eq!(counts(broken), (5, 4, 1, 1, 0));
        assert_eq!(broken.attempts, None);
    }

    #[test]
    fn lines_off_the_grammar_do_not_match() {
        let p = StatusPattern::canonical();
        for no in [
            "Pod status: 5 total, 4 running, 1 pending (1 unscheduled)",
            "Pod status: five total, 4 running, 1 pending (1 unscheduled), 0 failed",
            "Pod status: 5 total,  4 running, 1 pending (1 unscheduled), 0 failed",
            "Pod status: 99999999999999999999999 total, 4 running, 1 pending (1 unscheduled), 0 failed",
            "Attempt 1: 5 total, 4 running, 1 pending (1 unscheduled), 0 failed; retrying",
            "",
        ] {
            assert_eq!(p.parse(no), None, "{no:?}");
        }
    }

    #[test]
    fn a_later_anchor_is_tried_when_the_first_does_not_match() {
        let p = StatusPattern::canonical();
        let line =
            "Pod status: Pod status: 1 total, 1 running, 0 pending (0 unscheduled), 0 failed";
        assert_eq!(p.parse(line).map(|s| s.total), Some(1));
    }

    /// render.jq must keep printing a line of the frozen grammar, with the
    /// counts of the report it renders (every phase, so the terms it appends
    /// are there too).
    #[test]
    fn render_jq_still_prints_a_line_this_grammar_matches() {
        use checker::{snapshot, Engine, Projection};
        let pods = br#"{"items":[
          {"metadata":{"namespace":"a","name":"r"},"spec":{"nodeName":"n"},"status":{"phase":"Running"}},
          {"metadata":{"namespace":"a","name":"p"},"status":{"phase":"Pending"}},
          {"metadata":{"namespace":"a","name":"f"},"spec":{"nodeName":"n"},"status":{"phase":"Failed"}},
          {"metadata":{"namespace":"a","name":"s"},"spec":{"nodeName":"n"},"status":{"phase":"Succeeded"}},
          {"metadata":{"namespace":"a","name":"u"},"spec":{"nodeName":"n"},"status":{"phase":"Unknown"}}]}"#;
        let engine = Engine::new().unwrap();
        let doc = snapshot::read(&pods[..], "inline", &Projection::canonical().pods).unwrap();
        let report = engine
            .report(
                vec![doc],
                &checker::engine::Excluded {
                    namespaces: vec![],
                    ..Default::default()
                },
            )
            .unwrap();
        let result = engine.result(&report, 2, 7, None).unwrap();
        let lines = engine
            .render(&result, checker::contract::LIST_LIMIT.default)
            .unwrap();
        let status = StatusPattern::canonical()
            .parse(&lines[0].1)
            .unwrap_or_else(|| panic!("render.jq's first line is off the grammar: {:?}", lines[0]));
        assert_eq!(counts(status), (5, 1, 1, 1, 1));
        assert_eq!((status.attempts, status.waited_seconds), (Some(2), Some(7)));
    }
}
