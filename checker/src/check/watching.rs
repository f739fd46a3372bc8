//! Settling through a watch: from the pods list of a waiting state, the
//! watch ([`crate::live::watch`]) follows the pods until a state decides;
//! a state that would decide is decided only with its workloads, and one
//! that then waits only for pods not yet created keeps watching from there.

use super::context::Check;
use super::error::CheckError;
use super::settings::Source;
use super::workloads::{confirm, Confirmed};
use crate::contract::words;
use crate::engine::{Decision, Report};
use crate::live::watch;
use jaq_json::Val;
use std::time::{Duration, Instant};

impl Check<'_> {
    /// Watch from `listed`, the pods list of the waiting state `report`
    /// (`decision`), until a state decides, the watch breaks or the server
    /// will not watch ([`watch::Ended`]). `attempts` counts the states
    /// evaluated; `progress` receives a line at most once an interval;
    /// `warned`: the workloads lists refused, said once through `notice`.
    pub(super) fn watch(
        &self,
        mut listed: Vec<Val>,
        (report, decision): (Report, Decision),
        attempts: &mut usize,
        progress: &mut dyn FnMut(&str, &str),
        warned: &mut Vec<String>,
        notice: &mut dyn FnMut(&str),
    ) -> Result<watch::Ended, CheckError> {
        let Check {
            engine,
            source,
            excluded,
            started,
            checking,
            ..
        } = *self;
        let Source::Live {
            deadline,
            interval,
            kubectl,
            pods,
            ..
        } = source
        else {
            unreachable!("only a live check settles through a watch");
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
                .run(&listed, first, attempts, &mut line, notice)
                .map_err(CheckError::report)?;
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
            match confirm(self.context(), (pods.first(), None), report, warned, notice)? {
                Confirmed::Again { page, why, .. } => {
                    let broken = words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]);
                    break watch::Ended::ListAgain(broken);
                }
                Confirmed::Report(report, decision)
                    if self.settles(&decision, started.elapsed()) =>
                {
                    // The watch evaluates the pods alone: a state
                    // that waits only for pods not yet created
                    // says so here, once an interval, as every
                    // waiting state does.
                    if printed_at.get().elapsed() >= *interval {
                        line(&report, *attempts, waited).map_err(CheckError::report)?;
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
        Ok(ended)
    }
}
