//! One check: take a snapshot per attempt, settle while pods are only
//! unscheduled, collect the matching events, build the result.
//!
//! The rooms, in the order a check walks through them:
//! - [`settings`]: what the check is asked ([`Source`], [`Workloads`],
//!   [`Settings`]) and what it hands back ([`Outcome`]);
//! - [`bounds`]: the deadline, the deadline epoch and the lists' budget,
//!   computed once;
//! - [`attempts`]: the attempt loop, [`run`], where a pods list becomes a
//!   verdict (report.jq, decision.jq), polling or watching while it waits;
//! - [`pods`]: one attempt's pods list, asked again when it breaks;
//! - [`workloads`]: the workloads lists beside a pods list, at its version;
//! - [`events`]: the unscheduled pods' events, once the verdict is known;
//! - [`inputs`]: saved lists read from files, and the names inputs go by;
//! - [`error`]: why a check could not decide ([`CheckError`]).

mod attempts;
mod bounds;
mod error;
mod events;
mod inputs;
mod pods;
mod settings;
mod workloads;

pub use attempts::run;
pub use error::CheckError;
pub use events::EVENTS_BOUND;
pub use settings::{Outcome, Settings, Source, Workloads};
