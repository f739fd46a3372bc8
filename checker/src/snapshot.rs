//! Reading a snapshot (`kubectl get pods -A -o json`) or an events list from
//! a file, stdin or kubectl's stdout: streamed, projected, never held whole.

use crate::projection::{Project, Shape};
use jaq_json::Val;
use serde::de::DeserializeSeed;
use std::fmt;
use std::io::{BufReader, Read};

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

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Parse one JSON document from `reader`, keeping only what `shape` keeps.
/// Anything after the document but whitespace is an error.
pub fn read(reader: impl Read, source: &str, shape: &Shape) -> Result<Val, SnapshotError> {
    let buffered = BufReader::with_capacity(1 << 16, reader);
    let mut de = serde_json::Deserializer::from_reader(buffered);
    let doc = Project(shape)
        .deserialize(&mut de)
        .and_then(|doc| de.end().map(|()| doc))
        .map_err(|e| error(source, &e))?;
    Ok(doc)
}

fn error(source: &str, e: &serde_json::Error) -> SnapshotError {
    let source = source.to_owned();
    if e.is_io() {
        return SnapshotError {
            source,
            position: None,
            message: format!("cannot read: {e}"),
        };
    }
    if e.is_eof() && e.line() == 1 && e.column() == 0 {
        let message = "empty input: expected the JSON of `kubectl get pods -A -o json`".to_owned();
        return SnapshotError {
            source,
            position: None,
            message,
        };
    }
    let text = e.to_string();
    // serde_json appends " at line L column C"; we print the position first.
    let message = match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    };
    let message = format!("invalid JSON: {message}");
    SnapshotError {
        source,
        position: Some((e.line(), e.column())),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &[u8]) -> Result<Val, SnapshotError> {
        read(s, "snap.json", &Shape::Keep)
    }

    #[test]
    fn empty_input_is_an_error() {
        let e = read_str(b"").unwrap_err();
        assert!(e.to_string().starts_with("snap.json: empty input"), "{e}");
    }

    #[test]
    fn truncated_json_names_line_and_column() {
        let e = read_str(b"{\n  \"items\": [\n").unwrap_err();
        assert_eq!(e.position, Some((3, 0)), "{e}");
        assert!(
            e.to_string()
                .starts_with("snap.json:3:0: invalid JSON: EOF"),
            "{e}"
        );
    }

    #[test]
    fn trailing_garbage_is_an_error() {
        assert!(read_str(b"{\"items\":[]} x").is_err());
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        assert!(read_str(b"{\"items\":[\"\xff\"]}").is_err());
    }
}
