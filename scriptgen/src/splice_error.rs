//! Why a script cannot be spliced: the error of the splice and of the bash
//! lexer it reads the script with.

use std::fmt;

pub(crate) const NAME: &str = "verify_pods";

/// Why a script cannot be spliced. Nothing is changed in any of these cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpliceError {
    /// No `verify_pods() {` line at column 0.
    Missing,
    /// More than one definition (1-based line numbers).
    Duplicate(Vec<usize>),
    /// The definition has no closing `}` at column 0 (before the next
    /// function that opens at column 0).
    Unterminated { line: usize },
    /// `verify_pods()` with its `{` on another line (1-based line number).
    BraceNotOnDefinitionLine { line: usize },
    /// A here-document that never ends: code and text cannot be told apart.
    OpenHeredoc { line: usize, delimiter: String },
    /// A quoted string that never ends.
    OpenQuote { line: usize },
    /// Library mode: neither a definition to replace nor a line that
    /// sources the library.
    NotSourced { lib: String },
}

impl fmt::Display for SpliceError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SpliceError::Missing => write!(
                f,
                "no definition of {NAME}() found (expected a line `{NAME}() {{` at column 0)"
            ),
            SpliceError::Duplicate(lines) => {
                let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                write!(
                    f,
                    "{NAME}() is defined {} times (lines {}); keep one and splice again",
                    lines.len(),
                    lines.join(", ")
                )
            }
            SpliceError::Unterminated { line } => write!(
                f,
                "the definition of {NAME}() on line {line} has no closing `}}` at column 0 \
                 (before the end of the file or the next function)"
            ),
            SpliceError::BraceNotOnDefinitionLine { line } => write!(
                f,
                "{NAME}() on line {line} opens its body on another line; \
                 put `{{` on the line of `{NAME}()` and splice again"
            ),
            SpliceError::OpenHeredoc { line, delimiter } => write!(
                f,
                "the here-document <<{delimiter} opened on line {line} never ends"
            ),
            SpliceError::OpenQuote { line } => {
                write!(f, "a quoted string opened on line {line} never ends")
            }
            SpliceError::NotSourced { lib } => write!(
                f,
                "no definition of {NAME}() found (expected a line `{NAME}() {{` at column 0) \
                 and no line sources {lib}"
            ),
        }
    }
}

impl std::error::Error for SpliceError {}
