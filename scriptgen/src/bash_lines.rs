//! Which lines of a bash script are code: a small lexer that knows
//! quotes, comments and here-documents, so that a line inside a
//! here-document or a multi-line string is never taken for code.

use crate::splice_error::SpliceError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A line that starts outside any string or here-document.
    Code,
    /// A here-document body line, its delimiter line, or the rest of a
    /// multi-line string.
    Text,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    pub(crate) number: usize,
    pub(crate) offset: usize,
    pub(crate) len_with_newline: usize,
    pub(crate) text: &'a str,
    pub(crate) kind: Kind,
}

/// A here-document waiting for its body: `<<DELIM` or `<<-DELIM`.
#[derive(Debug, Clone)]
struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    line: usize,
}

/// Which lines are code: lexes quotes, comments and here-documents.
pub(crate) fn classify(script: &str) -> Result<Vec<Line<'_>>, SpliceError> {
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
