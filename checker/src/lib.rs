//! verify-pods: decide whether every pod of a cluster got scheduled, from ONE
//! snapshot, with canonical jq programs evaluated by jaq.
//!
//! The data path is `snapshot → report.jq → report → result.jq → render.jq →
//! text` (or the result as JSON). All rules and all wording live in the `.jq`
//! files of `checker/programs/`; this crate only reads snapshots and runs them.
//!
//! ```
//! use checker::{Engine, Excluded, Projection, snapshot};
//!
//! let engine = Engine::new().unwrap();
//! let pods = br#"{"kind":"List","items":[
//!   {"metadata":{"namespace":"default","name":"web-0"},
//!    "spec":{"nodeName":"kwok-node-0"},"status":{"phase":"Running"}},
//!   {"metadata":{"namespace":"kube-system","name":"coredns"},
//!    "spec":{},"status":{"phase":"Pending"}}]}"#;
//! let projection = Projection::canonical();
//! let docs = snapshot::read_documents(&pods[..], "inline", &projection.pods).unwrap();
//! let report = engine.report(docs, &Excluded::default()).unwrap();
//! assert_eq!(
//!     report.to_json(),
//!     r#"{"total":1,"running":1,"pending":0,"failed":0,"succeeded":0,"other":0,"unscheduled":0,"unscheduled_pods":[],"failed_pods":[],"distribution":[{"node":"kwok-node-0","pods":1}],"excused":0,"excused_pods":[],"excused_kinds":[],"namespaces":[{"namespace":"default","pods":1}],"verdict":"pass","resource_version":null,"missing":null,"missing_workloads":null,"active_owners":{}}"#
//! );
//! ```
// No unsafe code, but for one module that allows it: the SSE2 and AVX2
// paths of the reader's byte scans (reader/scan.rs, where their safety
// arguments are written down). `deny` rather than `forbid`, which no module could allow.
#![deny(unsafe_code)]

pub mod api;
pub mod artifacts;
pub mod cancel;
pub mod check;
pub mod contract;
pub mod engine;
pub mod exit;
pub mod live;
pub mod programs;
pub mod reader;

/// The version of verify-pods (the workspace's), as the CI results name it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use engine::{Engine, Excluded, Report, Verdict};
pub use programs::Programs;
pub use reader::{snapshot, Projection};
