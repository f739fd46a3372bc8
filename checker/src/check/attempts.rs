//! The attempt loop: one state read per attempt ([`Check::read_state`]:
//! a pods list with its workloads beside it, report.jq and decision.jq on
//! it), and, while the state only waits, a progress line and the next
//! attempt (polling) or a watch from that list ([`Check::watch`]); then the
//! events and the result.

use super::bounds::Bounds;
use super::context::Check;
use super::error::CheckError;
use super::events::read_events;
use super::inputs::inputs;
use super::settings::{Outcome, Settings, Source};
use crate::artifacts::Saver;
use crate::contract::messages;
use crate::engine::Engine;
use crate::live::watch;
use crate::reader::{Projection, Reads};
use std::thread;
use std::time::Instant;

/// Run one check. `progress` receives the (level, text) line printed before
/// each extra attempt.
/// `notice` receives a diagnostic for stderr (a broken list listed again).
pub fn run(
    engine: &Engine,
    source: &Source,
    settings: &Settings,
    progress: &mut dyn FnMut(&str, &str),
    notice: &mut dyn FnMut(&str),
) -> Result<Outcome, CheckError> {
    // report.jq computes the pods' owners only for workloads.jq; the pods
    // keep them only then.
    let excluded = &crate::engine::Excluded {
        workloads: settings.reads_workloads(source),
        ..settings.excluded.clone()
    };
    let reads = Reads {
        selector: !excluded.selector.is_empty(),
        workloads: excluded.workloads,
    };
    let projection = Projection::for_reads(&excluded.owner_kinds, reads);
    let saver = Saver::new(settings.save_dir.as_deref(), &inputs(source));
    let started = Instant::now();
    let mut bounds = Bounds::new(source, started)?;
    // The workloads lists (and the events) go through one kubectl proxy
    // (issue 30's cost, live/proxy.rs), started now: every pods list
    // reads the workloads beside it, and the proxy's start (about 0.04 s
    // of CPU) then overlaps the pods list, which leaves a core idle more
    // than report.jq does (a green lane at 8.8k pods: 15-22 ms less).
    if let Source::Live { kubectl, .. } = &mut bounds.source {
        if excluded.workloads {
            *kubectl = kubectl.with_proxy();
            if let Some(proxy) = &kubectl.proxy {
                proxy.start();
            }
        }
    }
    // From here on the bounds only read.
    let bounds = bounds;
    let source = &bounds.source;
    let check = Check {
        engine,
        source,
        bounds: &bounds,
        settings,
        saver: &saver,
        projection: &projection,
        excluded,
        started,
        checking: settings.reads_workloads(source),
    };
    let mut attempts = 0;
    let mut watching = matches!(source, Source::Live { watch: true, .. });
    let mut warned = Vec::new();
    let (report, decision, waited_seconds, snapshot) = loop {
        attempts += 1;
        // waited_seconds is the time spent before the snapshot the verdict
        // comes from: 0 whenever the first attempt decides, in both drivers.
        let attempt_started = started.elapsed().as_secs();
        let list_started = Instant::now();
        let state = check.read_state(watching, &mut warned, notice)?;
        let (report, decision, waited) = (state.report, state.decision, state.waited);
        match source {
            Source::Live {
                deadline, interval, ..
            } if decision.may_settle && waited < *deadline => {
                let (level, text) = engine
                    .progress(&report, attempts, waited.as_secs(), deadline.as_secs())
                    .map_err(CheckError::report)?;
                progress(&level, &text);
                // Freed now, before the pause and the next list.
                drop(state.snapshot);
                let Some(listed) = state.listed else {
                    // One attempt an interval, its own time counted (a line
                    // every interval), never past the deadline: the next
                    // attempt is then its last.
                    let rest = interval.saturating_sub(list_started.elapsed());
                    thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    continue;
                };
                let waiting = (report, decision);
                let ended = check.watch(
                    listed,
                    waiting,
                    &mut attempts,
                    &mut *progress,
                    &mut warned,
                    notice,
                )?;
                match ended {
                    watch::Ended::Decided {
                        report,
                        decision,
                        waited,
                        ..
                    } => break (report, decision, waited.as_secs(), Vec::new()),
                    watch::Ended::ListAgain(why) => {
                        notice(&messages::WATCH_AGAIN.format(&[("why", &why)]));
                        // Never more than a list per interval, whatever breaks.
                        let rest = interval.saturating_sub(list_started.elapsed());
                        thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    }
                    watch::Ended::Refused(why) => {
                        notice(&messages::WATCH_REFUSED.format(&[("why", &why)]));
                        watching = false;
                        let rest = interval.saturating_sub(list_started.elapsed());
                        thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    }
                }
            }
            _ => break (report, decision, attempt_started, state.snapshot),
        }
    };
    // Still settling when the deadline epoch, not the deadline, ended it.
    if decision.may_settle && bounds.settle_by_epoch {
        return Err(bounds.passed(started));
    }
    let mut warnings = Vec::new();
    let events = read_events(
        engine,
        (source, &bounds),
        &projection,
        &report,
        decision.unscheduled.then_some(&saver),
        &mut warnings,
        notice,
    )?;
    let result = engine
        .result(&report, attempts, waited_seconds, events)
        .map_err(|error| CheckError::Eval {
            source: "report".into(),
            error,
        })?;
    // A report that cannot be written is a warning (issue 29).
    if let Some(error) = saver.finish(decision.verdict == crate::engine::Verdict::Fail, &result) {
        warnings.push(CheckError::from(error).to_string());
    }
    Ok(Outcome {
        decision,
        result,
        warnings,
        snapshot,
    })
}
