//! One check: take a snapshot per attempt, settle while pods are only
//! unscheduled, collect the matching events, build the result.
//!
//! The rooms, in the order a check walks through them:
//! - [`settings`]: what the check is asked ([`Source`], [`Workloads`],
//!   [`Settings`]) and what it hands back ([`Outcome`]);
//! - [`bounds`]: the deadline, the deadline epoch and the lists' budget,
//!   computed once;
//! - [`context`]: what every step reads ([`context::Check`]);
//! - [`attempts`]: the attempt loop, [`run`]: a state per attempt, polling
//!   or watching while it waits, then the events and the result;
//! - [`state`]: one state read, where a pods list becomes a verdict
//!   (report.jq, decision.jq);
//! - [`pods`]: one attempt's pods list, asked again when it breaks;
//! - [`workloads`]: the workloads lists beside a pods list, at its version;
//! - [`watching`]: settling through a watch from a waiting state's list;
//! - [`events`]: the unscheduled pods' events, once the verdict is known;
//! - [`inputs`]: saved lists read from files, and the names inputs go by;
//! - [`error`]: why a check could not decide ([`CheckError`]).

mod attempts;
mod bounds;
mod context;
mod error;
mod events;
mod inputs;
mod pods;
mod settings;
mod state;
mod watching;
mod workloads;

pub use attempts::run;
pub use error::CheckError;
pub use events::EVENTS_BOUND;
pub use settings::{Outcome, Settings, Source, Workloads};
