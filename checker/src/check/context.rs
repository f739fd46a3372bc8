//! What every step of one check reads ([`Check`]): the engine, the source
//! and its bounds, the settings, the artifacts, when the check started.

use super::bounds::Bounds;
use super::settings::{Settings, Source};
use super::workloads::Context;
use crate::artifacts::Saver;
use crate::engine::{Decision, Engine, Excluded};
use crate::reader::Projection;
use std::time::{Duration, Instant};

/// What every step of one check reads, set up once by [`super::run`].
#[derive(Clone, Copy)]
pub(super) struct Check<'a> {
    pub engine: &'a Engine,
    /// The source, its deadline capped by the deadline epoch ([`Bounds`]).
    pub source: &'a Source,
    pub bounds: &'a Bounds,
    pub settings: &'a Settings,
    pub saver: &'a Saver,
    pub projection: &'a Projection,
    /// The exclusions report.jq runs with: the pods' owners computed only
    /// when workloads.jq reads them.
    pub excluded: &'a Excluded,
    /// When the check started.
    pub started: Instant,
    /// Whether the workloads are read ([`Settings::reads_workloads`]).
    pub checking: bool,
}

impl Check<'_> {
    /// Live, a state settles while decision.jq says wait before the
    /// deadline (`elapsed`: since the check started, read once per state,
    /// so that a state whose workloads were dropped as settling does
    /// settle).
    pub(super) fn settles(&self, decision: &Decision, elapsed: Duration) -> bool {
        match self.source {
            Source::Live { deadline, .. } => decision.may_settle && elapsed < *deadline,
            Source::Offline { .. } => false,
        }
    }

    /// What [`super::workloads::confirm`] reads with.
    pub(super) fn context(&self) -> Context<'_> {
        (
            self.engine,
            self.source,
            self.bounds,
            self.settings,
            self.saver,
            self.started,
        )
    }
}
