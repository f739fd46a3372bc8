//! What a check is asked to do: where the pods come from ([`Source`]),
//! whether the workloads are read ([`Workloads`]), the rest of its
//! [`Settings`], and what it hands back ([`Outcome`]).

use crate::api;
use crate::live::kubectl::Kubectl;
use crate::programs::{Program, Programs};
use jaq_json::Val;
use std::path::PathBuf;
use std::time::Duration;

/// Where the pods (and events) come from.
// One per check, cloned once ([`super::bounds::Bounds`]): the live
// variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum Source {
    /// A saved snapshot (`-` = stdin), optional saved events: one attempt.
    Offline {
        snapshot: PathBuf,
        events: Option<PathBuf>,
    },
    /// The cluster, through kubectl, with the settle loop.
    Live {
        kubectl: Kubectl,
        deadline: Duration,
        interval: Duration,
        /// Raw pages of this many objects (0: one request), see [`list`].
        chunk_size: usize,
        /// Settle on one list plus a watch ([`crate::live::watch`]); false: list
        /// again every interval.
        watch: bool,
        /// A unix time by which the whole check ends (0: none), see
        /// `Bounds`.
        deadline_epoch: u64,
        /// The pods list and the events list, within the selection
        /// ([`api::List::within`]).
        pods: api::List,
        events: api::List,
    },
}

/// Whether the pods the workloads want are checked (issue 30), and from
/// where: live, the four apps/v1 lists at the pods list's resourceVersion;
/// offline, a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workloads {
    /// Not checked (`--workloads false`): upstream's verdicts.
    Off,
    /// Live: read at each deciding state. Offline: nothing to read, so not
    /// checked (and nothing says it was).
    On,
    /// Offline: `kubectl get rs,sts,ds,deploy -A -o json`, or the raw
    /// pages `--save-dir` saved (`workloads.json`).
    File(PathBuf),
}

/// What a check needs besides its source.
pub struct Settings {
    /// Whether the workloads are read, and from where.
    pub workloads: Workloads,
    /// The namespaces whose pods, and the owner kinds whose pending pods,
    /// are left out.
    pub excluded: crate::engine::Excluded,
    /// Where to save pods.json, events.json and report.json on failure.
    pub save_dir: Option<PathBuf>,
}

impl Settings {
    /// Whether the workloads are read: on, live or from a file, and no
    /// label selector (`-l`): a workload's labels do not say which pods it
    /// will create, so with one nothing checks them (and nothing says so).
    pub(super) fn reads_workloads(&self, source: &Source) -> bool {
        let on = match (&self.workloads, source) {
            (Workloads::Off, _) | (Workloads::On, Source::Offline { .. }) => false,
            (Workloads::On, Source::Live { .. }) | (Workloads::File(_), _) => true,
        };
        on && self.excluded.selector.is_empty()
    }

    /// The programs a check of `source` runs, for [`Engine::warm`]: the
    /// others are never compiled.
    ///
    /// [`Engine::warm`]: crate::engine::Engine::warm
    pub fn programs(&self, source: &Source) -> Vec<Program> {
        let mut programs = vec![Programs::REPORT, Programs::DECISION, Programs::RESULT];
        let (live, events) = match source {
            Source::Offline { events, .. } => (false, events.is_some()),
            Source::Live { .. } => (true, true),
        };
        // Live, a state that waits prints progress.jq's line.
        if live {
            programs.push(Programs::PROGRESS);
        }
        if events {
            programs.push(Programs::EVENTS);
        }
        if self.reads_workloads(source) {
            programs.push(Programs::WORKLOADS);
        }
        programs
    }
}

/// The outcome of a check.
pub struct Outcome {
    /// What decision.jq made of it.
    pub decision: crate::engine::Decision,
    /// The result of result.jq (`--format json`).
    pub result: Val,
    /// Diagnostics for stderr that do not change the verdict (e.g. why
    /// events could not be collected; the text then says "not collected").
    pub warnings: Vec<String>,
    /// The documents of the pods list the verdict was decided on (none
    /// when a watch decided it), held until the outcome is dropped: a
    /// program that ends with the check may leave them unfreed.
    pub snapshot: Vec<Val>,
}
