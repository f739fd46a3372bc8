//! Every line of the generated bash in 100 columns: a code line that a
//! contract's message or a long list makes longer is continued with a
//! backslash at a word boundary, its next lines indented one more step (two
//! spaces in the templates' indentation, the host's step in a spliced
//! library, which is fitted again once re-indented). Bash reads the
//! continued line as the one line it was.

use crate::bash_lines::{classify, Kind};
use crate::splice_error::SpliceError;

/// The longest line a generated file holds.
pub const MOST_COLUMNS: usize = 100;

/// `text` with each code line over [`MOST_COLUMNS`] continued on the next
/// lines, two spaces further in. Here-document bodies, multi-line strings
/// and comments stay as they are; so does a line with no word boundary
/// that would fit.
pub fn fitted(text: &str) -> Result<String, SpliceError> {
    fitted_by(text, 2)
}

/// [`fitted`], for text indented by `step` spaces a level: a continued
/// line's next lines are one step further in. A spliced library is fitted
/// again in the host's indentation, which may be wider than the
/// templates'.
pub fn fitted_by(text: &str, step: usize) -> Result<String, SpliceError> {
    let mut out = String::with_capacity(text.len());
    for line in classify(text)? {
        let raw = &text[line.offset..line.offset + line.len_with_newline];
        let comment = line.text.trim_start().starts_with('#');
        if line.kind == Kind::Code && !comment && columns(line.text) > MOST_COLUMNS {
            out.push_str(&continued(line.text, step));
            out.push_str(&raw[line.text.len()..]);
        } else {
            out.push_str(raw);
        }
    }
    Ok(out)
}

fn columns(text: &str) -> usize {
    text.chars().count()
}

/// `line` cut at word boundaries into pieces that fit, each but the last
/// ending with ` \`. A boundary before a value (a quoted word or an
/// expansion), a redirection or a `||`, `&&` or `|` is taken over a later
/// one before a bare word: an option or a command stays with its words.
fn continued(line: &str, step: usize) -> String {
    let indent = &line[..line.len() - line.trim_start().len()];
    let next_indent = format!("{indent}{}", " ".repeat(step));
    let boundaries = word_boundaries(line);
    let mut out = String::new();
    let mut start = 0;
    let mut lead = 0;
    loop {
        let rest = &line[start..];
        if lead + columns(rest) <= MOST_COLUMNS {
            out.push_str(rest);
            return out;
        }
        // The piece before a boundary, its ` \` and the columns before it.
        let fits =
            |at: &usize| *at > start && lead + columns(&line[start..*at]) + 2 <= MOST_COLUMNS;
        let fitting: Vec<usize> = boundaries.iter().copied().filter(fits).collect();
        let preferred = fitting.iter().rev().find(|at| {
            let word = &line[**at + 1..];
            word.starts_with(['"', '$', '|', '&', '<', '>'])
        });
        let Some(&at) = preferred.or(fitting.last()) else {
            out.push_str(rest);
            return out;
        };
        out.push_str(line[start..at].trim_end());
        out.push_str(" \\\n");
        out.push_str(&next_indent);
        lead = next_indent.len();
        start = at + 1;
        while line[start..].starts_with(' ') {
            start += 1;
        }
    }
}

/// Where a nesting of the line's words is open, innermost last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `"…"`.
    Double,
    /// `$(…)`, or a `(` inside one.
    Substitution,
    /// `${…}`.
    Parameter,
}

/// The byte offsets of the spaces of `line` that separate words at its top
/// level, after its indentation: outside quotes, `$(…)` and `${…}`, before any comment, and none
/// when the line ends inside one of them (a multi-line string) or opens a
/// here-document. A backslash and a newline there are only a separator.
fn word_boundaries(line: &str) -> Vec<usize> {
    if line.replace("<<<", "").contains("<<") {
        return Vec::new();
    }
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut open: Vec<Open> = Vec::new();
    let mut boundaries = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let next = chars.get(i + 1).map(|&(_, c)| c);
        let inner = open.last().copied();
        match c {
            '\\' => i += 1,
            '\'' if inner != Some(Open::Double) => {
                // A single-quoted word ($'…' too): to its closing quote.
                let ansi = i > 0 && chars[i - 1].1 == '$';
                i += 1;
                while i < chars.len() && chars[i].1 != '\'' {
                    if ansi && chars[i].1 == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Vec::new();
                }
            }
            '`' => return Vec::new(),
            '"' if inner == Some(Open::Double) => {
                open.pop();
            }
            '"' => open.push(Open::Double),
            '$' if next == Some('(') => {
                open.push(Open::Substitution);
                i += 1;
            }
            '$' if next == Some('{') => {
                open.push(Open::Parameter);
                i += 1;
            }
            '(' if inner == Some(Open::Substitution) => open.push(Open::Substitution),
            ')' if inner == Some(Open::Substitution) => {
                open.pop();
            }
            '}' if inner == Some(Open::Parameter) => {
                open.pop();
            }
            '#' if inner.is_none() && (i == 0 || chars[i - 1].1 == ' ') => break,
            ' ' if inner.is_none() && !line[..at].trim().is_empty() => boundaries.push(at),
            _ => {}
        }
        i += 1;
    }
    if open.is_empty() {
        boundaries
    } else {
        Vec::new()
    }
}

/// `words` joined by spaces into lines of at most `width` columns.
pub(crate) fn wrapped(words: &[String], width: usize) -> Vec<String> {
    packed(words, width, ' ', "")
}

/// `words` joined by `separator` into lines of at most `width` columns, each
/// line after the first starting with `lead`.
pub(crate) fn packed(words: &[String], width: usize, separator: char, lead: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in words {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(separator);
                line.push_str(word);
            }
            Some(_) => lines.push(format!("{lead}{word}")),
            None => lines.push(word.clone()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(words: &str) -> String {
        format!("    {words}")
    }

    #[test]
    fn a_short_line_stays() {
        let text = "  echo \"$x\"\n";
        assert_eq!(fitted(text).unwrap(), text);
    }

    #[test]
    fn a_long_line_is_continued_before_its_quoted_words() {
        let message = "a".repeat(60);
        let line = long(&format!(
            "then vp_error 2 \"{message} %s\" \"$named\" \"$value\" || return; fi"
        ));
        let text = fitted(&format!("{line}\n")).unwrap();
        for piece in text.lines() {
            assert!(columns(piece) <= MOST_COLUMNS, "{piece}");
        }
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains(" \\\n      \""), "{text}");
        // Bash reads it back as the one line.
        assert_eq!(text.replace(" \\\n      ", " "), format!("{line}\n"));
    }

    #[test]
    fn nothing_is_cut_inside_quotes_expansions_or_heredocs() {
        let quoted = format!("    x=\"{}\"\n", "a b ".repeat(30));
        assert_eq!(fitted(&quoted).unwrap(), quoted);
        let expansion = format!("    x=${{y:-{}}}\n", "a b ".repeat(30));
        assert_eq!(fitted(&expansion).unwrap(), expansion);
        let substituted = format!("    x=\"$(f \"{}\")\"\n", "a b ".repeat(30));
        assert_eq!(fitted(&substituted).unwrap(), substituted);
        let heredoc = format!("cat <<'EOF'\n{}\nEOF\n", "a b ".repeat(30));
        assert_eq!(fitted(&heredoc).unwrap(), heredoc);
    }
}
