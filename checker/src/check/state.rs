//! One state of the cluster read, where a pods list becomes a verdict: the
//! pods list (listed again while it breaks), the workloads read beside it
//! at its resourceVersion, report.jq and decision.jq on them, and a state
//! that would decide confirmed with its workloads.

use super::context::Check;
use super::error::CheckError;
use super::pods::{list_again, pods_eval_error, read_pods};
use super::workloads::{confirm, fetch, read_at, Confirmed};
use crate::engine::{Decision, Report};
use jaq_json::Val;
use std::thread;
use std::time::Duration;

/// One state as read: its report, decision.jq's word on it and when
/// (since the check started), and the pods list's documents when a watch
/// starts from them.
pub(super) struct State {
    pub listed: Option<Vec<Val>>,
    pub report: Report,
    pub decision: Decision,
    pub waited: Duration,
    /// The pods list's documents, which report.jq read: they are freed
    /// with the state, not within report.jq, so that the last state of a
    /// check can hand them to its [`super::Outcome`] (freeing 50k pods is
    /// 3 % of a check, which a process that ends need not do).
    pub snapshot: Vec<Val>,
}

impl Check<'_> {
    /// The state of one attempt: its pods list read whole (listed again
    /// while it breaks, each time said through `notice`), the workloads
    /// beside it, through report.jq and decision.jq; a state that would
    /// decide is decided only with its workloads (`warned`: the lists
    /// refused, said once). `watching`: the list's documents are kept for
    /// the watch.
    pub(super) fn read_state(
        &self,
        watching: bool,
        warned: &mut Vec<String>,
        notice: &mut dyn FnMut(&str),
    ) -> Result<State, CheckError> {
        let Check {
            engine,
            source,
            bounds,
            settings,
            saver,
            projection,
            excluded,
            started,
            checking,
        } = *self;
        let mut lists = 0;
        let (listed, snapshot, report, decision, waited) = loop {
            let bounded = (started, bounds, &mut lists);
            let copying = settings.save_dir.is_some();
            // The workloads at the list's version are read as soon as its
            // head tells the version, while the pods stream and then while
            // report.jq runs, on every list (issue 30's cost): the server's
            // answers and their parsing overlap the check's own work, where
            // reading them after a deciding report added 0.3 s at 10k pods.
            // A state that settles drops them: four more lists an interval
            // while polling (BENCHMARKS.md), as the bash does.
            // workloads.jq's work on the workloads alone is done as soon as
            // they are in, while the pods still stream.
            let read_workloads = move |at| {
                let fetched = fetch(source, settings, bounds, at, copying);
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
                let docs = read_pods(source, projection, saver, bounded, notice, &mut heard)?;
                // Rc clones: the state keeps the documents, and the watch
                // starts from these pods.
                let snapshot = docs.clone();
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
                Ok::<_, CheckError>((listed, snapshot, report, fetched))
            });
            let (listed, snapshot, report, fetched) = read?;
            let report = report.map_err(|error| pods_eval_error(source, error))?;
            let decision = engine.decide(&report).map_err(CheckError::report)?;
            let decided_at = started.elapsed();
            if !checking || self.settles(&decision, decided_at) {
                break (listed, snapshot, report, decision, decided_at);
            }
            // A state that would decide is decided only with its
            // workloads, read at its resourceVersion (issue 30); when they
            // cannot be, the pods list is as good as broken: list again.
            match confirm(self.context(), (None, fetched), report, warned, notice)? {
                Confirmed::Report(report, decision) => {
                    break (listed, snapshot, report, decision, started.elapsed())
                }
                Confirmed::Again { what, page, why } => {
                    list_again(source, started, (what, page, &why, lists), notice)?;
                }
            }
        };
        Ok(State {
            listed,
            report,
            decision,
            waited,
            snapshot,
        })
    }
}
