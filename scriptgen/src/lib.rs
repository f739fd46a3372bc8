//! scriptgen: render the bash `verify_pods()` from the canonical jq programs
//! of the checker, keep `generated/` current, and splice the function into
//! host scripts with a reviewable diff.
#![forbid(unsafe_code)]

pub mod commands;
pub mod diff;
pub mod generated;
pub mod render;
pub mod splice;
