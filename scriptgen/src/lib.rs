//! scriptgen: render the bash `verify_pods()` from the canonical jq programs
//! of the checker, keep `generated/` current, and splice the function into
//! host scripts with a reviewable diff.
#![forbid(unsafe_code)]

mod bash_lines;
pub mod commands;
pub mod diff;
mod embed;
mod feature;
mod fit;
mod follow_ups;
pub mod generated;
mod library;
mod messages;
pub mod render;
pub mod splice;
mod splice_error;
