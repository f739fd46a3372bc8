//! The error words: why a document could not be read, with the line and
//! column of the problem (serde_json's words for the syntax errors of the
//! values the fast parser doubts, the reader's own for the rest).

use super::input::{count_newlines, Input};
use super::snapshot::SnapshotError;
use crate::contract::words;
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

impl<R> Input<R> {
    /// A serde_json error, its position made absolute (it counts from the
    /// start of the slice it parsed, which is `buf[start]`).
    pub(super) fn syntax_from(&self, e: &serde_json::Error) -> Fault {
        let text = e.to_string();
        // serde_json appends " at line L column C"; we print the position first.
        let message = match text.rfind(" at line ") {
            Some(at) => text[..at].to_owned(),
            None => text,
        };
        let (line, column) = if e.line() <= 1 {
            (self.line, self.column + e.column())
        } else {
            (self.line + e.line() - 1, e.column())
        };
        Fault::Syntax {
            message,
            line,
            column,
        }
    }

    /// Invalid UTF-8 at `buf[start + offset]`.
    pub(super) fn bad_utf8(&self, offset: usize) -> Fault {
        self.fault_at(offset, "invalid UTF-8")
    }

    /// A fault at `buf[start + offset]`, its column counted from 1 as
    /// serde_json counts.
    pub(super) fn fault_at(&self, offset: usize, message: &str) -> Fault {
        let before = &self.buf[self.start..self.start + offset];
        let (line, column) = match before.iter().rposition(|&b| b == b'\n') {
            None => (self.line, self.column + offset + 1),
            Some(last) => (self.line + count_newlines(before), offset - last),
        };
        Fault::Syntax {
            message: message.to_owned(),
            line,
            column,
        }
    }

    /// An unexpected byte at `buf[start]` (serde_json counts its column from 1).
    pub(super) fn syntax_here(&self, message: &str) -> Fault {
        Fault::Syntax {
            message: message.to_owned(),
            line: self.line,
            column: self.column + 1,
        }
    }

    /// The input ended inside the document.
    pub(super) fn syntax_eof(&self, message: &str) -> Fault {
        Fault::Syntax {
            message: message.to_owned(),
            line: self.line,
            column: self.column,
        }
    }
}
