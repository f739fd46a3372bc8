//! The error words: why a document could not be read, with the line and
//! column of the problem (serde_json's words for the syntax errors of the
//! values the fast parser doubts, the reader's own for the rest).

use crate::contract::words;
use std::fmt;
use std::io;

/// Why a document could not be read, before it is given its source name.
pub(super) enum Fault {
    Io(io::Error),
    Empty,
    /// Not a List, nor the pages of one: what it is, in the contract's words.
    NotAList(String),
    Syntax {
        message: String,
        line: usize,
        column: usize,
    },
}

impl Fault {
    pub(super) fn into_error(self, source: &str) -> SnapshotError {
        let source = source.to_owned();
        match self {
            Fault::Io(e) => SnapshotError {
                source,
                position: None,
                message: format!("cannot read: {e}"),
            },
            Fault::NotAList(found) => SnapshotError {
                source,
                position: None,
                message: words::NOT_A_LIST.format(&[("found", &found)]),
            },
            Fault::Empty => SnapshotError {
                source,
                position: None,
                // Pods or events: the source names which document it is.
                message: crate::contract::words::EMPTY_INPUT.text.to_owned(),
            },
            Fault::Syntax {
                message,
                line,
                column,
            } => SnapshotError {
                source,
                position: Some((line, column)),
                message: format!("invalid JSON: {message}"),
            },
        }
    }
}

/// A document that could not be read. Never "0 pods".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    /// Where the document came from (a path, `<stdin>`, `kubectl get pods`).
    pub source: String,
    /// `line:column` of the problem, when the parser knows it.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl SnapshotError {
    /// Why a document kubectl printed is unreadable, in the contract's
    /// words (the position as `line L, column C`: kubectl's output is no
    /// file).
    pub fn unreadable_why(&self) -> String {
        match self.position {
            Some((line, column)) => words::AT_POSITION.format(&[
                ("line", &line),
                ("column", &column),
                ("why", &self.message),
            ]),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for SnapshotError {}
