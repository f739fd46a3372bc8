//! Replace the `verify_pods()` definition of a host script, byte-exactly.
//!
//! The definition runs from its `verify_pods() {` line (also `verify_pods () {`,
//! `function verify_pods {`, `function verify_pods() {`) at column 0 to the
//! first `}` line at column 0 after it. Lines are read with a small bash
//! lexer that knows quotes, comments and here-documents, so a `}` or a
//! `verify_pods() {` inside a here-document (the generated function embeds
//! jq programs that way) or a multi-line string never counts. Everything
//! before and after the definition is kept byte for byte.

use std::fmt;

const NAME: &str = "verify_pods";

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
        }
    }
}

impl std::error::Error for SpliceError {}

/// `script` with its `verify_pods()` definition replaced by `definition`
/// (which ends with its `}` line and a newline).
pub fn splice(script: &str, definition: &str) -> Result<String, SpliceError> {
    let span = find_definition(script)?;
    let mut definition = definition;
    if !script[..span.end].ends_with('\n') {
        // The old closing `}` ended the file without a newline: so does ours.
        definition = definition.strip_suffix('\n').unwrap_or(definition);
    }
    Ok([&script[..span.start], definition, &script[span.end..]].concat())
}

/// Byte range of the definition, from the start of its first line to the end
/// of its closing line (newline included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Where the one `verify_pods()` definition of `script` is.
pub fn find_definition(script: &str) -> Result<Span, SpliceError> {
    let lines = classify(script)?;
    let mut starts = Vec::new();
    for line in &lines {
        match line.kind {
            Kind::Code if is_definition_start(line.text) => starts.push(line),
            Kind::Code if is_bare_definition(line.text) => {
                return Err(SpliceError::BraceNotOnDefinitionLine { line: line.number })
            }
            _ => {}
        }
    }
    let start = match starts.as_slice() {
        [] => return Err(SpliceError::Missing),
        [one] => *one,
        many => {
            return Err(SpliceError::Duplicate(
                many.iter().map(|l| l.number).collect(),
            ))
        }
    };
    // The end is the first `}` at column 0. Another function opening at
    // column 0 first means the `}` is missing: splicing up to that
    // function's `}` would swallow it.
    let end = lines
        .iter()
        .skip_while(|l| l.number <= start.number)
        .filter(|l| l.kind == Kind::Code)
        .find(|l| is_closing_brace(l.text) || opens_a_function(l.text));
    match end {
        Some(end) if is_closing_brace(end.text) => Ok(Span {
            start: start.offset,
            end: end.offset + end.len_with_newline,
        }),
        _ => Err(SpliceError::Unterminated { line: start.number }),
    }
}

/// `NAME() {` or `function NAME` at column 0, for any NAME.
fn opens_a_function(text: &str) -> bool {
    if let Some(rest) = text.strip_prefix("function") {
        return rest.starts_with([' ', '\t']);
    }
    let name_end = text
        .find(|c: char| !(c.is_alphanumeric() || "_:-.".contains(c)))
        .unwrap_or(text.len());
    name_end > 0
        && text[name_end..]
            .trim_start()
            .strip_prefix("()")
            .is_some_and(|rest| rest.trim_start().starts_with('{'))
}

/// `verify_pods() {`, `verify_pods () {`, `function verify_pods {`,
/// `function verify_pods() {`, optionally followed by a comment.
fn is_definition_start(text: &str) -> bool {
    match after_name(text) {
        Some(rest) => rest.strip_prefix('{').is_some_and(is_blank_or_comment),
        None => false,
    }
}

/// The same without the `{`: the brace is on a later line.
fn is_bare_definition(text: &str) -> bool {
    after_name(text).is_some_and(is_blank_or_comment)
}

/// What follows `verify_pods()` / `function verify_pods` (spaces skipped).
fn after_name(text: &str) -> Option<&str> {
    let (keyword, rest) = match text.strip_prefix("function") {
        Some(rest) if rest.starts_with([' ', '\t']) => (true, rest.trim_start()),
        _ => (false, text),
    };
    let rest = rest.strip_prefix(NAME)?.trim_start();
    match rest.strip_prefix("()") {
        Some(rest) => Some(rest.trim_start()),
        None if keyword && !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
            Some(rest)
        }
        None => None,
    }
}

fn is_closing_brace(text: &str) -> bool {
    text.strip_prefix('}').is_some_and(is_blank_or_comment)
}

/// Nothing more on the line but blanks and a comment (`#` after a blank).
fn is_blank_or_comment(rest: &str) -> bool {
    let trimmed = rest.trim_start();
    trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A line that starts outside any string or here-document.
    Code,
    /// A here-document body line, its delimiter line, or the rest of a
    /// multi-line string.
    Text,
}

#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    number: usize,
    offset: usize,
    len_with_newline: usize,
    text: &'a str,
    kind: Kind,
}

/// A here-document waiting for its body: `<<DELIM` or `<<-DELIM`.
#[derive(Debug, Clone)]
struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    line: usize,
}

/// Which lines are code: lexes quotes, comments and here-documents.
fn classify(script: &str) -> Result<Vec<Line<'_>>, SpliceError> {
    let mut lines = Vec::new();
    let mut pending: std::collections::VecDeque<Heredoc> = Default::default();
    let mut body: Option<Heredoc> = None;
    let mut quote: Option<(Quote, usize)> = None;
    let mut offset = 0;
    for (index, raw) in script.split_inclusive('\n').enumerate() {
        let number = index + 1;
        let text = raw.strip_suffix('\n').unwrap_or(raw);
        let kind = if body.is_some() || quote.is_some() {
            Kind::Text
        } else {
            Kind::Code
        };
        if let Some(doc) = &body {
            let candidate = if doc.strip_tabs {
                text.trim_start_matches('\t')
            } else {
                text
            };
            if candidate == doc.delimiter {
                body = pending.pop_front();
            }
        } else {
            let state = lex_line(text, quote.map(|(q, _)| q));
            quote = match (state.open_quote, quote) {
                (None, _) => None,
                (Some(q), Some((_, since))) => Some((q, since)),
                (Some(q), None) => Some((q, number)),
            };
            pending.extend(
                state
                    .heredocs
                    .into_iter()
                    .map(|(delimiter, strip_tabs)| Heredoc {
                        delimiter,
                        strip_tabs,
                        line: number,
                    }),
            );
            if quote.is_none() {
                body = pending.pop_front();
            }
        }
        lines.push(Line {
            number,
            offset,
            len_with_newline: raw.len(),
            text,
            kind,
        });
        offset += raw.len();
    }
    if let Some(doc) = body.or_else(|| pending.pop_front()) {
        return Err(SpliceError::OpenHeredoc {
            line: doc.line,
            delimiter: doc.delimiter,
        });
    }
    if let Some((_, line)) = quote {
        return Err(SpliceError::OpenQuote { line });
    }
    Ok(lines)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// `'…'`: no escapes.
    Single,
    /// `"…"`: backslash escapes.
    Double,
    /// `$'…'`: backslash escapes.
    AnsiC,
}

#[derive(Debug, Default)]
struct LineState {
    /// The quote still open at the end of the line.
    open_quote: Option<Quote>,
    /// Here-documents started on this line, in order.
    heredocs: Vec<(String, bool)>,
}

/// Lex one line that starts inside `quote` (or outside any).
fn lex_line(text: &str, mut quote: Option<Quote>) -> LineState {
    let chars: Vec<char> = text.chars().collect();
    let mut state = LineState::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(Quote::Single) => {
                if c == '\'' {
                    quote = None;
                }
            }
            Some(Quote::Double | Quote::AnsiC) => {
                if c == '\\' {
                    i += 1;
                } else if (c == '"' && quote == Some(Quote::Double))
                    || (c == '\'' && quote == Some(Quote::AnsiC))
                {
                    quote = None;
                }
            }
            None => match c {
                '\\' => i += 1,
                '\'' => quote = Some(Quote::Single),
                '"' => quote = Some(Quote::Double),
                '$' if chars.get(i + 1) == Some(&'\'') => {
                    quote = Some(Quote::AnsiC);
                    i += 1;
                }
                '#' if i == 0 || starts_word(chars[i - 1]) => break,
                '<' if chars.get(i + 1) == Some(&'<') => {
                    if chars.get(i + 2) == Some(&'<') {
                        i += 2; // a here-string
                    } else {
                        let (heredoc, next) = heredoc_operator(&chars, i + 2);
                        state.heredocs.extend(heredoc);
                        i = next;
                        continue;
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    state.open_quote = quote;
    state
}

/// Whether a `#` after `c` starts a comment.
fn starts_word(c: char) -> bool {
    c.is_whitespace() || ";|&()<>".contains(c)
}

/// After `<<` at `at`: the delimiter word (unquoted, with quote removal) and
/// whether it was `<<-`; None when this is not a here-document (`x << 2` in
/// arithmetic). Returns the index after the word.
fn heredoc_operator(chars: &[char], mut at: usize) -> (Option<(String, bool)>, usize) {
    let strip_tabs = chars.get(at) == Some(&'-');
    if strip_tabs {
        at += 1;
    }
    while chars.get(at).is_some_and(|c| *c == ' ' || *c == '\t') {
        at += 1;
    }
    let begins = chars
        .get(at)
        .is_some_and(|c| c.is_alphabetic() || matches!(c, '_' | '\'' | '"' | '\\'));
    if !begins {
        return (None, at);
    }
    let mut word = String::new();
    let mut quote: Option<char> = None;
    while let Some(&c) = chars.get(at) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '\\' => {
                if let Some(&next) = chars.get(at + 1) {
                    word.push(next);
                }
                at += 1;
            }
            None if c.is_whitespace() || ";|&()<>".contains(c) => break,
            None => word.push(c),
        }
        at += 1;
    }
    (Some((word, strip_tabs)), at)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEW: &str = "verify_pods() {\n  new\n}\n";

    #[test]
    fn replaces_only_the_definition() {
        let script = "a\nverify_pods() {\n  old\n}\nb\n";
        assert_eq!(
            splice(script, NEW).unwrap(),
            "a\nverify_pods() {\n  new\n}\nb\n"
        );
    }

    #[test]
    fn accepts_the_usual_spellings() {
        for first in [
            "verify_pods() {",
            "verify_pods () {",
            "function verify_pods {",
            "function verify_pods() {",
            "verify_pods() { # check the pods",
        ] {
            let script = format!("x\n{first}\n  old\n}}\ny\n");
            assert_eq!(
                splice(&script, NEW).unwrap(),
                format!("x\n{NEW}y\n"),
                "{first}"
            );
        }
    }

    #[test]
    fn other_names_and_indented_lines_do_not_count() {
        let script = "verify_pods_old() {\n}\n  verify_pods() {\n  }\nfunction verify_podsx {\n}\n";
        assert_eq!(splice(script, NEW), Err(SpliceError::Missing));
    }

    #[test]
    fn heredoc_bodies_are_text() {
        let script = "verify_pods() {\n  cat <<'EOF'\n}\nverify_pods() {\nEOF\n  x <<-END\n\t}\n\tEND\n}\nz\n";
        assert_eq!(splice(script, NEW).unwrap(), format!("{NEW}z\n"));
    }

    #[test]
    fn quotes_and_comments_do_not_open_heredocs() {
        let script = "echo \"<<EOF\" '<<EOF' # <<EOF\nverify_pods() {\n  echo $'it\\'s <<X'\n  (( 1 << 2 ))\n}\n";
        assert_eq!(
            splice(script, NEW).unwrap(),
            format!("echo \"<<EOF\" '<<EOF' # <<EOF\n{NEW}")
        );
    }

    #[test]
    fn multi_line_strings_are_text() {
        let script = "verify_pods() {\n  msg=\"\n}\n\"\n}\n";
        assert_eq!(splice(script, NEW).unwrap(), NEW);
    }

    #[test]
    fn missing_duplicate_unterminated_are_errors() {
        assert_eq!(splice("a\n", NEW), Err(SpliceError::Missing));
        assert_eq!(
            splice("verify_pods() {\n}\nverify_pods() {\n}\n", NEW),
            Err(SpliceError::Duplicate(vec![1, 3]))
        );
        assert_eq!(
            splice("x\nverify_pods() {\n  y\n  }\n", NEW),
            Err(SpliceError::Unterminated { line: 2 })
        );
        assert_eq!(
            splice("verify_pods() {\n  y\nmain() {\n  z\n}\n", NEW),
            Err(SpliceError::Unterminated { line: 1 })
        );
        assert_eq!(
            splice("verify_pods() {\n  y\nfunction main {\n}\n", NEW),
            Err(SpliceError::Unterminated { line: 1 })
        );
        assert_eq!(
            splice("verify_pods()\n{\n}\n", NEW),
            Err(SpliceError::BraceNotOnDefinitionLine { line: 1 })
        );
        assert!(matches!(
            splice("verify_pods() {\n cat <<EOF\n}\n", NEW),
            Err(SpliceError::OpenHeredoc { line: 2, .. })
        ));
        assert_eq!(
            splice("verify_pods() {\n echo 'x\n}\n", NEW),
            Err(SpliceError::OpenQuote { line: 2 })
        );
    }

    #[test]
    fn a_closing_brace_at_end_of_file_keeps_its_missing_newline() {
        assert_eq!(
            splice("a\nverify_pods() {\n}", NEW).unwrap(),
            "a\nverify_pods() {\n  new\n}"
        );
    }

    #[test]
    fn splicing_twice_changes_nothing() {
        let once = splice("a\nverify_pods() {\n  old\n}\nb\n", NEW).unwrap();
        assert_eq!(splice(&once, NEW).unwrap(), once);
    }
}
