//! Is a printed pod status possible? Parse what a checker printed (status
//! line, pod listings) and decide whether ONE cluster state explains all of
//! it. The expected reports come from `checker::Engine` on each state, so no
//! rule is restated here; a script that mixes two snapshots is caught.

use super::state::State;
use checker::Engine;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The five numbers of the status line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Pods checked.
    pub total: u64,
    /// Running pods.
    pub running: u64,
    /// Pending pods.
    pub pending: u64,
    /// Unscheduled pods (a subset of the pending ones).
    pub unscheduled: u64,
    /// Failed pods.
    pub failed: u64,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} total, {} running, {} pending ({} unscheduled), {} failed",
            self.total, self.running, self.pending, self.unscheduled, self.failed
        )
    }
}

/// What one output says about the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// The status line's numbers (None when there is no status line).
    pub counts: Option<Counts>,
    /// `namespace/name` of the listed unscheduled pods.
    pub unscheduled: Vec<String>,
    /// `namespace/name` of the listed failed pods.
    pub failed: Vec<String>,
    /// `namespace/name` of the pods the listed events are about.
    pub event_pods: Vec<String>,
    /// Node → pods, when the distribution is printed.
    pub distribution: Option<BTreeMap<String, u64>>,
}

/// Parse the text output of the checker, the generated wrapper or the
/// legacy script: the last line with `N total`, `N running`, `N pending`,
/// `N unscheduled` and `N failed`, and sections `Header:` + `  item` lines.
pub fn parse(text: &str) -> Observed {
    let mut observed = Observed::default();
    let mut section = Section::Other;
    for line in text.lines() {
        if let Some(item) = line.strip_prefix("  ") {
            observed.add_item(section, item);
            continue;
        }
        section = Section::of(line);
        if section == Section::Distribution {
            observed.distribution = Some(BTreeMap::new());
        }
        // The last line with counts: the checker prints the counts of each
        // earlier attempt before its status line.
        if let Some(line_counts) = counts(line) {
            observed.counts = Some(line_counts);
        }
    }
    observed
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Unscheduled,
    Failed,
    Events,
    Distribution,
    Other,
}

impl Section {
    fn of(header: &str) -> Self {
        let lower = header.to_lowercase();
        if !lower.trim_end().ends_with(':') {
            return Self::Other;
        }
        if lower.contains("failedscheduling events") {
            Self::Events
        } else if lower.contains("unscheduled pods") {
            Self::Unscheduled
        } else if lower.contains("failed pods") {
            Self::Failed
        } else if lower.contains("distribution") {
            Self::Distribution
        } else {
            Self::Other
        }
    }
}

impl Observed {
    fn add_item(&mut self, section: Section, item: &str) {
        match section {
            // Grouped by cause (render.jq): "N pod(s): <reason>: <message>"
            // heads the group's "  <ns>/<pod>" lines; "… and N more (groups)"
            // are cut lists. Else (the legacy script) "<ns>/<pod>", or
            // "<ns>/<pod>: <reason>: <message>".
            Section::Unscheduled | Section::Failed if is_group_line(item) => {}
            Section::Unscheduled => {
                let pod = item.split_once(": ").map_or(item, |(pod, _)| pod);
                self.unscheduled.push(pod.trim().to_owned());
            }
            Section::Failed => {
                let pod = item.split_once(": ").map_or(item, |(pod, _)| pod);
                self.failed.push(pod.trim().to_owned());
            }
            // Each group's events under a head (issue 29): "N pod(s) (…): cause".
            Section::Events if is_events_head(item) => {}
            Section::Events => {
                // "<last seen> <ns>/<pod> (x<count>): <message>", indented
                // under its group's head.
                let item = item.trim_start();
                let after_time = item.split_once(' ').map_or(item, |(_, rest)| rest);
                let pod = after_time
                    .split_once(" (x")
                    .map_or(after_time, |(pod, _)| pod);
                self.event_pods.push(pod.trim().to_owned());
            }
            Section::Distribution => {
                if let (Some(map), Some((node, pods))) =
                    (self.distribution.as_mut(), item.trim().rsplit_once(": "))
                {
                    map.insert(node.to_owned(), pods.trim().parse().unwrap_or(u64::MAX));
                }
            }
            Section::Other => {}
        }
    }
}

/// The head of a group's events: `2 pods (3 of 3 events): CAUSE`.
fn is_events_head(item: &str) -> bool {
    let mut words = item.split_whitespace();
    words
        .next()
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        && words
            .next()
            .is_some_and(|unit| matches!(unit, "pod" | "pods"))
}

/// A line of a grouped listing that names no pod: a group's head
/// (`3 pods: OOMKilled`) or what a list limit left out (`… and 2 more`).
fn is_group_line(item: &str) -> bool {
    let item = item.trim_start();
    let head = item
        .split_once(": ")
        .map_or(item, |(head, _)| head)
        .split_once(' ')
        .is_some_and(|(n, unit)| {
            n.bytes().all(|b| b.is_ascii_digit()) && matches!(unit, "pod" | "pods")
        });
    head || item.starts_with("… and ")
}

/// The five numbers of a status line, if `line` is one.
fn counts(line: &str) -> Option<Counts> {
    let words: Vec<&str> = line
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let number_before = |word: &str| {
        words
            .windows(2)
            .find(|pair| pair[1] == word)
            .and_then(|pair| pair[0].parse::<u64>().ok())
    };
    Some(Counts {
        total: number_before("total")?,
        running: number_before("running")?,
        pending: number_before("pending")?,
        unscheduled: number_before("unscheduled")?,
        failed: number_before("failed")?,
    })
}

/// What no single cluster state can produce, whatever the state: the
/// invariants of one snapshot.
pub fn impossibilities(observed: &Observed) -> Vec<String> {
    let Some(c) = observed.counts else {
        return vec!["no status line".into()];
    };
    let mut problems = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };
    check(
        c.unscheduled <= c.pending,
        format!("{c}: more unscheduled than pending"),
    );
    check(
        c.running + c.pending + c.failed <= c.total,
        format!("{c}: running + pending + failed > total"),
    );
    check(
        observed.unscheduled.len() as u64 == c.unscheduled,
        format!(
            "{c}: {} unscheduled pods listed",
            observed.unscheduled.len()
        ),
    );
    check(
        observed.failed.len() as u64 == c.failed,
        format!("{c}: {} failed pods listed", observed.failed.len()),
    );
    for pod in &observed.event_pods {
        check(
            observed.unscheduled.contains(pod),
            format!("an event is listed for {pod}, which is not listed as unscheduled"),
        );
    }
    if let Some(distribution) = &observed.distribution {
        let sum: u64 = distribution.values().sum();
        check(
            sum == c.total,
            format!("{c}: the distribution adds up to {sum}"),
        );
    }
    problems
}

/// The report of report.jq for each state (default excluded namespaces),
/// computed by the checker's own engine, at the version the server serves it.
pub fn reports(engine: &Engine, states: &[State]) -> Vec<Value> {
    states
        .iter()
        .enumerate()
        .map(|(index, state)| {
            let version = super::expect::served(index);
            let report = super::expect::report(engine, state, &version);
            serde_json::from_str(&report.to_json()).expect("the report is JSON")
        })
        .collect()
}

/// Whether `observed` says exactly what `report` says (counts, listed pods,
/// distribution when printed; events only about the report's unscheduled pods).
pub fn matches(observed: &Observed, report: &Value) -> bool {
    let number = |key: &str| report[key].as_u64().unwrap_or(u64::MAX);
    let pods = |key: &str| -> Vec<String> {
        report[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "{}/{}",
                    p["namespace"].as_str().unwrap_or(""),
                    p["name"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    let expected = Counts {
        total: number("total"),
        running: number("running"),
        pending: number("pending"),
        unscheduled: number("unscheduled"),
        failed: number("failed"),
    };
    let unscheduled = pods("unscheduled_pods");
    let distribution_ok = observed.distribution.as_ref().is_none_or(|printed| {
        let expected: BTreeMap<String, u64> = report["distribution"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                (
                    d["node"].as_str().unwrap_or("").to_owned(),
                    d["pods"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        *printed == expected
    });
    // The digest lists pods by group (largest cause first), not in the
    // report's order: the same pods, in any order.
    let same_pods = |printed: &[String], mut wanted: Vec<String>| {
        let mut printed = printed.to_vec();
        printed.sort();
        wanted.sort();
        printed == wanted
    };
    observed.counts == Some(expected)
        && same_pods(&observed.unscheduled, unscheduled.clone())
        && same_pods(&observed.failed, pods("failed_pods"))
        && observed.event_pods.iter().all(|p| unscheduled.contains(p))
        && distribution_ok
}

/// The verdict of a report: `pass`, `empty` or `fail`.
pub fn verdict(report: &Value) -> &str {
    report["verdict"].as_str().unwrap_or("fail")
}

/// Check an output against the reports of the states the run may have
/// seen: Ok(the indices of the states that explain it), or why it is
/// impossible (an invariant broken, or no single state says all of it).
pub fn explain(text: &str, reports: &[Value]) -> Result<Vec<usize>, String> {
    let observed = parse(text);
    let problems = impossibilities(&observed);
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let explaining: Vec<usize> = reports
        .iter()
        .enumerate()
        .filter(|(_, report)| matches(&observed, report))
        .map(|(i, _)| i)
        .collect();
    if explaining.is_empty() {
        return Err(format!(
            "no single state explains {} with unscheduled {:?} and failed {:?}",
            observed.counts.unwrap_or_default(),
            observed.unscheduled,
            observed.failed
        ));
    }
    Ok(explaining)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_listings_and_counts() {
        let text = "Pod status: 3 total, 1 running, 1 pending (1 unscheduled), 1 failed (attempts=1, waited=0s)\n\
                    Pod distribution by node:\n  <none>: 1\n  n1: 2\n\
                    Unscheduled pods (1):\n  ml/train-0\n\
                    FailedScheduling events for the unscheduled pods (1, newest first):\n  2025-01-01T11:00:00Z ml/train-0 (x2): 0/4 nodes (x3): no\n\
                    Failed pods (1):\n  web/api-1: Error: exit status 1\n";
        let observed = parse(text);
        assert_eq!(
            observed.counts,
            Some(Counts {
                total: 3,
                running: 1,
                pending: 1,
                unscheduled: 1,
                failed: 1
            })
        );
        assert_eq!(observed.unscheduled, ["ml/train-0"]);
        assert_eq!(observed.event_pods, ["ml/train-0"]);
        assert_eq!(observed.failed, ["web/api-1"]);
        assert_eq!(observed.distribution.as_ref().map(|d| d.len()), Some(2));
        assert!(impossibilities(&observed).is_empty());
    }

    #[test]
    fn parses_listings_grouped_by_cause() {
        let text = "Pod status: 3 total, 0 running, 2 pending (2 unscheduled), 1 failed (attempts=1, waited=0s)\n\
                    Unscheduled pods (2):\n  2 pods: Unschedulable: 0/4 nodes: no\n    ml/train-0\n    ml/train-1\n\
                    Failed pods (1):\n  1 pod: OOMKilled\n    web/api-1\n";
        let observed = parse(text);
        assert_eq!(observed.unscheduled, ["ml/train-0", "ml/train-1"]);
        assert_eq!(observed.failed, ["web/api-1"]);
        assert!(impossibilities(&observed).is_empty());
        let cut = parse("Unscheduled pods (40):\n  25 pods: Unschedulable: x\n    ml/a\n    … and 24 more\n  … and 2 more groups (15 pods)\n");
        assert_eq!(cut.unscheduled, ["ml/a"]);
    }

    #[test]
    fn the_legacy_race_output_is_impossible() {
        let observed = parse("Pod status: 20 total, 20 running, 0 pending (1 unscheduled), 0 failed\nUnscheduled pods (1):\n  default/x\n");
        assert!(!impossibilities(&observed).is_empty());
        assert!(!impossibilities(&parse("nothing here")).is_empty());
    }
}
