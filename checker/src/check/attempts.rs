//! The attempt loop: a pods list per attempt (with its workloads beside
//! it), report.jq and decision.jq on it, and, while the state only waits,
//! a progress line and the next attempt (polling) or a watch from that
//! list ([`crate::live::watch`]); then the events and the result.

use super::bounds::Bounds;
use super::error::CheckError;
use super::events::read_events;
use super::inputs::inputs;
use super::pods::{list_again, pods_eval_error, read_pods};
use super::settings::{Outcome, Settings, Source};
use super::workloads::{confirm, fetch, read_at, Confirmed};
use crate::artifacts::Saver;
use crate::contract::{messages, words};
use crate::engine::{Engine, Report};
use crate::live::watch;
use crate::reader::Projection;
use std::thread;
use std::time::{Duration, Instant};

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
    let projection = Projection::for_run(
        &settings.excluded.owner_kinds,
        !settings.excluded.selector.is_empty(),
    );
    // report.jq computes the pods' owners only for workloads.jq.
    let excluded = &crate::engine::Excluded {
        workloads: settings.reads_workloads(source),
        ..settings.excluded.clone()
    };
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
    let source = &bounds.source;
    let mut attempts = 0;
    let eval_error = |source: String| move |error| CheckError::Eval { source, error };
    let mut watching = matches!(source, Source::Live { watch: true, .. });
    let mut warned = Vec::new();
    let checking = settings.reads_workloads(source);
    // Live, a state settles while decision.jq says wait before the deadline
    // (`elapsed`: since the check started, read once per state, so that a
    // state whose workloads were dropped as settling does settle).
    let settles = |decision: &crate::engine::Decision, elapsed: Duration| match source {
        Source::Live { deadline, .. } => decision.may_settle && elapsed < *deadline,
        Source::Offline { .. } => false,
    };
    let (report, decision, waited_seconds) = loop {
        attempts += 1;
        // waited_seconds is the time spent before the snapshot the verdict
        // comes from: 0 whenever the first attempt decides, in both drivers.
        let attempt_started = started.elapsed().as_secs();
        let list_started = Instant::now();
        let mut lists = 0;
        let (listed, report, decision, waited) = loop {
            let bounded = (started, &bounds, &mut lists);
            let copying = settings.save_dir.is_some();
            // The workloads at the list's version are read as soon as its
            // head tells the version, while the pods stream and then while
            // report.jq runs, on every list (issue 30's cost): the server's
            // answers and their parsing overlap the check's own work, where
            // reading them after a deciding report added 0.3 s at 10k pods.
            // A state that settles drops them: four more lists an interval
            // while polling (BENCHMARKS.md), as the bash does.
            let bounds_ref = &bounds;
            // workloads.jq's work on the workloads alone is done as soon as
            // they are in, while the pods still stream.
            let read_workloads = move |at| {
                let fetched = fetch(source, settings, bounds_ref, at, copying);
                fetched.map(|f| f.prepare(engine, &settings.excluded))
            };
            let read = thread::scope(|scope| {
                let mut fetching = Vec::new();
                let mut heard = |version: &str| {
                    if checking {
                        let at = Some(version.to_owned());
                        fetching
                            .push((version.to_owned(), scope.spawn(move || read_workloads(at))));
                    }
                };
                let docs = read_pods(source, &projection, &saver, bounded, notice, &mut heard)?;
                // Rc clones: the watch starts from these pods.
                let listed = watching.then(|| docs.clone());
                let at = read_at(&docs);
                // A list that broke after its head leaves its reads behind:
                // they end on their own, by the scope's end.
                let fetching = match fetching.into_iter().rfind(|(v, _)| Some(v) == at.as_ref()) {
                    Some((_, fetching)) => fetching,
                    None => scope.spawn(move || read_workloads(at)),
                };
                // workloads.jq on the owners' part, as soon as it and the
                // lists are in, beside the rest of report.jq: at 10k pods
                // and 2,000 workloads it ends with report.jq, not after it.
                let (report, fetched) = engine.report_with(docs, excluded, |owners| {
                    let fetched = fetching.join().expect("the workloads thread");
                    match owners {
                        Some(owners) => {
                            fetched.map(|f| f.ahead(engine, owners, &settings.excluded))
                        }
                        None => fetched,
                    }
                });
                Ok::<_, CheckError>((listed, report, fetched))
            });
            let (listed, report, fetched) = read?;
            let report = report.map_err(|error| pods_eval_error(source, error))?;
            let decision = engine
                .decide(&report)
                .map_err(eval_error("report".into()))?;
            let decided_at = started.elapsed();
            if !checking || settles(&decision, decided_at) {
                break (listed, report, decision, decided_at);
            }
            // A state that would decide is decided only with its
            // workloads, read at its resourceVersion (issue 30); when they
            // cannot be, the pods list is as good as broken: list again.
            let context = (engine, source, &bounds, settings, &saver, started);
            match confirm(context, (None, fetched), report, &mut warned, notice)? {
                Confirmed::Report(report, decision) => {
                    break (listed, report, decision, started.elapsed())
                }
                Confirmed::Again { what, page, why } => {
                    list_again(source, started, (what, page, &why, lists), notice)?;
                }
            }
        };
        match source {
            Source::Live {
                deadline,
                interval,
                kubectl,
                pods,
                ..
            } if decision.may_settle && waited < *deadline => {
                let (level, text) = engine
                    .progress(&report, attempts, waited.as_secs(), deadline.as_secs())
                    .map_err(eval_error("report".into()))?;
                progress(&level, &text);
                let Some(listed) = listed else {
                    // One attempt an interval, its own time counted (a line
                    // every interval), never past the deadline: the next
                    // attempt is then its last.
                    let rest = interval.saturating_sub(list_started.elapsed());
                    thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    continue;
                };
                let settle = watch::Settle {
                    engine,
                    kubectl,
                    pods: *pods,
                    excluded,
                    started,
                    deadline: *deadline,
                    interval: *interval,
                };
                let mut listed = listed;
                let mut first = watch::Evaluated {
                    report,
                    decision,
                    pods: Vec::new(),
                };
                // When the last progress line was printed (the list's, just now).
                let printed_at = std::cell::Cell::new(Instant::now());
                let mut line = |report: &Report, attempts, waited: Duration| {
                    let secs = (waited.as_secs(), deadline.as_secs());
                    let (level, text) = engine.progress(report, attempts, secs.0, secs.1)?;
                    progress(&level, &text);
                    printed_at.set(Instant::now());
                    Ok(())
                };
                let ended = loop {
                    let ended = settle
                        .run(&listed, first, &mut attempts, &mut line, notice)
                        .map_err(eval_error("report".into()))?;
                    if !checking {
                        break ended;
                    }
                    let watch::Ended::Decided {
                        report,
                        waited,
                        pods,
                        ..
                    } = ended
                    else {
                        break ended;
                    };
                    // The state the watch would decide on, with its
                    // workloads: missing pods keep it watching, from there.
                    let context = (engine, source, &bounds, settings, &saver, started);
                    match confirm(context, (pods.first(), None), report, &mut warned, notice)? {
                        Confirmed::Again { page, why, .. } => {
                            let broken =
                                words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]);
                            break watch::Ended::ListAgain(broken);
                        }
                        Confirmed::Report(report, decision)
                            if settles(&decision, started.elapsed()) =>
                        {
                            // The watch evaluates the pods alone: a state
                            // that waits only for pods not yet created
                            // says so here, once an interval, as every
                            // waiting state does.
                            if printed_at.get().elapsed() >= *interval {
                                line(&report, attempts, waited)
                                    .map_err(eval_error("report".into()))?;
                            }
                            listed = pods.clone();
                            first = watch::Evaluated {
                                report,
                                decision,
                                pods,
                            };
                        }
                        Confirmed::Report(report, decision) => {
                            break watch::Ended::Decided {
                                report,
                                decision,
                                waited,
                                pods,
                            }
                        }
                    }
                };
                match ended {
                    watch::Ended::Decided {
                        report,
                        decision,
                        waited,
                        ..
                    } => break (report, decision, waited.as_secs()),
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
            _ => break (report, decision, attempt_started),
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
    })
}
