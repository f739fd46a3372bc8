//! Why a check could not decide: [`CheckError`], every way a check ends
//! with exit 2 (or the contract's code for it), worded from the contract.

use crate::artifacts::{Artifact, ArtifactError};
use crate::contract::{self, messages, words};
use crate::engine::EvalError;
use crate::live::kubectl::KubectlError;
use crate::live::list::Failure;
use crate::reader::snapshot::SnapshotError;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a check could not decide (exit code 2).
#[derive(Debug)]
pub enum CheckError {
    /// A document was unreadable.
    Snapshot(SnapshotError),
    /// kubectl could not be run or failed.
    Kubectl(KubectlError),
    /// kubectl failed (or timed out) on the first page of a pods list: the
    /// cluster could not be reached; `config` says with which kubeconfig
    /// and context ([`Kubectl::config_used`]), a line of its own.
    Unreached { error: KubectlError, config: String },
    /// A canonical program rejected its input (e.g. no `items` array).
    Eval { source: String, error: EvalError },
    /// kubectl's output was unreadable: not one JSON document, or one that
    /// report.jq refuses (no `items` array).
    Unreadable { command: String, why: String },
    /// The artifact directory could not be created.
    ArtifactDir { dir: PathBuf, error: io::Error },
    /// Writing the artifacts failed.
    SaveDir { path: PathBuf, error: io::Error },
    /// A file could not be opened.
    Open { path: PathBuf, error: io::Error },
    /// Every list of the pods broke after its first page, or a list read
    /// with them (`what`: its name in the API's URL) broke, until the
    /// deadline passed: no snapshot.
    Incoherent {
        what: &'static str,
        page: usize,
        why: String,
        lists: usize,
    },
    /// A list (`what`) did not end by the deadline plus the kubectl
    /// timeout: `pages` of it were read.
    Unfinished {
        what: &'static str,
        pages: usize,
        seconds: u64,
    },
    /// The deadline epoch passed before the observation ended (`waited`
    /// whole seconds after the check started).
    EpochPassed { epoch: u64, waited: u64 },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            CheckError::Snapshot(e) => e.fmt(f),
            CheckError::Kubectl(e) | CheckError::Unreached { error: e, .. } => e.fmt(f),
            CheckError::Eval { source, error } => write!(f, "{source}: {}", error.message),
            CheckError::Unreadable { command, why } => f.write_str(
                &messages::UNREADABLE_OUTPUT.format(&[("command", command), ("why", why)]),
            ),
            CheckError::ArtifactDir { dir, error } => f.write_str(
                &messages::ARTIFACT_DIR_CREATE
                    .format(&[("dir", &dir.display()), ("why", &contract::io_words(error))]),
            ),
            CheckError::SaveDir { path, error } => {
                f.write_str(&messages::ARTIFACTS_NOT_SAVED.format(&[
                    ("path", &path.display()),
                    ("why", &contract::io_words(error)),
                ]))
            }
            CheckError::Open { path, error } => {
                write!(f, "{}: cannot open: {error}", path.display())
            }
            CheckError::Incoherent {
                what,
                page,
                why,
                lists,
            } => {
                let broken = words::LIST_BROKEN.format(&[("page", page), ("why", why)]);
                f.write_str(&messages::LIST_INCOHERENT.format(&[
                    ("what", what),
                    ("lists", lists),
                    ("broken", &broken),
                ]))
            }
            CheckError::Unfinished {
                what,
                pages,
                seconds,
            } => {
                let why = words::LIST_OVERRAN.format(&[("seconds", seconds), ("pages", pages)]);
                f.write_str(&messages::LIST_UNFINISHED.format(&[("what", what), ("why", &why)]))
            }
            CheckError::EpochPassed { epoch, waited } => f.write_str(
                &messages::DEADLINE_EPOCH_PASSED.format(&[("epoch", epoch), ("waited", waited)]),
            ),
        }
    }
}

impl std::error::Error for CheckError {}

impl CheckError {
    /// report.jq, decision.jq, progress.jq or result.jq refused a report.
    pub(super) fn report(error: EvalError) -> Self {
        CheckError::Eval {
            source: "report".into(),
            error,
        }
    }

    /// The line printed after the error's own, when it has one.
    pub fn next_line(&self) -> Option<&str> {
        match self {
            CheckError::Unreached { config, .. } => Some(config),
            _ => None,
        }
    }

    /// The contract's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CheckError::Kubectl(_) => messages::KUBECTL_FAILED.exit_code(),
            CheckError::Unreached { .. } => messages::KUBECTL_CONFIG.exit_code(),
            CheckError::Unreadable { .. } => messages::UNREADABLE_OUTPUT.exit_code(),
            CheckError::Incoherent { .. } => messages::LIST_INCOHERENT.exit_code(),
            CheckError::Unfinished { .. } => messages::LIST_UNFINISHED.exit_code(),
            CheckError::EpochPassed { .. } => messages::DEADLINE_EPOCH_PASSED.exit_code(),
            CheckError::ArtifactDir { .. } => messages::ARTIFACT_DIR_CREATE.exit_code(),
            CheckError::SaveDir { .. } => messages::ARTIFACTS_NOT_SAVED.exit_code(),
            CheckError::Snapshot(_) | CheckError::Eval { .. } | CheckError::Open { .. } => {
                crate::exit::CANNOT_OBSERVE
            }
        }
    }
}

impl From<Failure> for CheckError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Kubectl(e) => CheckError::Kubectl(e),
            Failure::Unreadable { command, why } => CheckError::Unreadable { command, why },
        }
    }
}

impl From<ArtifactError> for CheckError {
    fn from(error: ArtifactError) -> Self {
        match error {
            ArtifactError::Dir { dir, error } => CheckError::ArtifactDir { dir, error },
            ArtifactError::NotSaved { path, error } => CheckError::SaveDir { path, error },
        }
    }
}

/// The copy being written could not be: the artifact names itself.
pub(super) fn not_saved(copy: &Option<Artifact>, error: io::Error) -> CheckError {
    let path = copy.as_ref().map_or_else(PathBuf::new, |c| c.path.clone());
    CheckError::SaveDir { path, error }
}
