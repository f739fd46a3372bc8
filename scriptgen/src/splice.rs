//! Replace the `verify_pods()` definition of a host script, byte-exactly.
//!
//! The definition runs from its `verify_pods() {` line (also `verify_pods () {`,
//! `function verify_pods {`, `function verify_pods() {`) at column 0 to the
//! first `}` line at column 0 after it. Lines are read with a small bash
//! lexer that knows quotes, comments and here-documents, so a `}` or a
//! `verify_pods() {` inside a here-document (the generated function embeds
//! jq programs that way) or a multi-line string never counts. Everything
//! before and after the definition is kept byte for byte.
//!
//! As a library ([`splice_source`]): the definition is replaced by the line
//! that sources a generated file, written the way the host already sources
//! its own libraries ([`SourceStyle`]); [`reindent`] gives the generated
//! function the host's indentation step.

use crate::bash_lines::{classify, Kind};
pub use crate::follow_ups::{follow_ups, Changes, FollowUp};

pub use crate::splice_error::SpliceError;
pub(crate) use crate::splice_error::NAME;

/// `script` with its `verify_pods()` definition replaced by `definition`
/// (which ends with its `}` line and a newline).
pub fn splice(script: &str, definition: &str) -> Result<String, SpliceError> {
    // The old closing `}` may end the file without a newline: so does ours.
    splice_span(script, find_definition(script)?, definition)
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

/// How a host script sources its libraries, read from its first `source`
/// (or `.`) line whose file is named through a variable, e.g.
/// `source "${SCRIPT_DIR}/lib/cleanup.sh"`, and the `# shellcheck source=`
/// directive right above it, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStyle {
    /// `source` or `.`.
    pub keyword: String,
    /// Whether the path is double-quoted.
    pub quoted: bool,
    /// What the path starts with, before the `/`: `${SCRIPT_DIR}`.
    pub base: String,
    /// The directive above the host's line with the host's file taken off
    /// its end (`# shellcheck source=`), when there is one.
    pub directive: Option<String>,
}

impl SourceStyle {
    /// For a host that sources nothing this way: the script's own directory.
    pub fn fallback() -> Self {
        Self {
            keyword: "source".into(),
            quoted: true,
            base: "$(dirname \"${BASH_SOURCE[0]}\")".into(),
            directive: None,
        }
    }

    /// The host's style, or [`Self::fallback`].
    pub fn detect(script: &str) -> Result<Self, SpliceError> {
        let lines = classify(script)?;
        for (i, line) in lines.iter().enumerate() {
            if line.kind != Kind::Code {
                continue;
            }
            let Some((keyword, path)) = sourced_path(line.text) else {
                continue;
            };
            let (quoted, path) = match path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
                Some(inner) => (true, inner),
                None => (false, path),
            };
            let Some((base, file)) = path.split_once('/') else {
                continue;
            };
            if !base.starts_with('$') || base.contains(['"', '\'', ' ']) || file.is_empty() {
                continue;
            }
            let directive = i
                .checked_sub(1)
                .map(|above| lines[above].text.trim())
                .filter(|above| above.starts_with("# shellcheck source="))
                .and_then(|above| above.strip_suffix(file))
                .map(str::to_owned);
            return Ok(Self {
                keyword: keyword.to_owned(),
                quoted,
                base: base.to_owned(),
                directive,
            });
        }
        Ok(Self::fallback())
    }

    /// The lines (directive, then `source`) that source `lib`, a path
    /// relative to the script's directory, each ending with a newline.
    pub fn lines(&self, lib: &str) -> String {
        let quote = if self.quoted { "\"" } else { "" };
        let directive = match &self.directive {
            Some(directive) => format!("{directive}{lib}\n"),
            None => String::new(),
        };
        format!(
            "{directive}{} {quote}{}/{lib}{quote}\n",
            self.keyword, self.base
        )
    }
}

/// `source PATH` / `. PATH` alone on a line (indented or not): the keyword
/// and PATH as written.
fn sourced_path(text: &str) -> Option<(&str, &str)> {
    let text = text.trim();
    let (keyword, rest) = text
        .strip_prefix("source")
        .map(|rest| ("source", rest))
        .or_else(|| text.strip_prefix('.').map(|rest| (".", rest)))?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let path = rest.trim();
    let simple = !path.is_empty() && !path.contains([';', '&', '|', '#', '\'']);
    let one_word = !path.trim_matches('"').contains([' ', '\t', '"']) || path.starts_with("\"$(");
    (simple && one_word).then_some((keyword, path))
}

/// Whether the code line `text` sources `lib` (in any style): its path,
/// unquoted, ends with `/lib`.
fn sources(text: &str, lib: &str) -> bool {
    sourced_path(text).is_some_and(|(_, path)| {
        path.trim_matches('"')
            .strip_suffix(lib)
            .is_some_and(|before| before.ends_with('/'))
    })
}

/// `script` with its `verify_pods()` definition replaced by the lines that
/// source `lib` (relative to the script's directory) in the host's style:
/// after the host's last line that sources a library the same way (with
/// its others), else where the definition was.
/// A script that already sources `lib` and defines no `verify_pods()` is
/// returned as it is; one that sources it and still has a definition loses
/// the definition.
pub fn splice_source(script: &str, lib: &str) -> Result<String, SpliceError> {
    let lines = classify(script)?;
    let sourced = lines
        .iter()
        .any(|line| line.kind == Kind::Code && sources(line.text, lib));
    let span = match find_definition(script) {
        Ok(span) => span,
        Err(SpliceError::Missing) if sourced => return Ok(script.to_owned()),
        Err(SpliceError::Missing) => return Err(SpliceError::NotSourced { lib: lib.into() }),
        Err(e) => return Err(e),
    };
    if sourced {
        return splice_span(script, span, "");
    }
    let style = SourceStyle::detect(script)?;
    let ours = style.lines(lib);
    // The host's last `source` line written in its style, outside the
    // definition: ours goes right after it.
    let last = lines
        .iter()
        .rev()
        .filter(|l| l.kind == Kind::Code && (l.offset < span.start || l.offset >= span.end))
        .find(|l| {
            sourced_path(l.text).is_some_and(|(keyword, path)| {
                keyword == style.keyword
                    && path
                        .trim_matches('"')
                        .starts_with(&format!("{}/", style.base))
            })
        });
    match last {
        Some(line) if style != SourceStyle::fallback() => {
            let at = line.offset + line.len_with_newline;
            let ours = if script[..at].ends_with('\n') {
                ours
            } else {
                format!("\n{ours}")
            };
            let inserted = [&script[..at], &ours, &script[at..]].concat();
            let moved = if at <= span.start {
                Span {
                    start: span.start + ours.len(),
                    end: span.end + ours.len(),
                }
            } else {
                span
            };
            without_definition(&inserted, moved)
        }
        _ => splice_span(script, span, &ours),
    }
}

/// `script` without the definition at `span` and the comment block right
/// above it (which describes the function: it goes with it), and without
/// the blank line that would then be doubled.
fn without_definition(script: &str, span: Span) -> Result<String, SpliceError> {
    let mut start = span.start;
    while start > 0 {
        let above = script[..start - 1].rfind('\n').map_or(0, |at| at + 1);
        let line = script[above..start].trim();
        if !line.starts_with('#') || line.starts_with("# shellcheck ") {
            break;
        }
        start = above;
    }
    let mut end = span.end;
    let blank_before = start == 0 || script[..start].ends_with("\n\n");
    if blank_before && script[end..].starts_with('\n') {
        end += 1;
    }
    splice_span(script, Span { start, end }, "")
}

/// The host's license header, for its library: the comment block right
/// after its `#!` line (or at its top), when one of its lines names a
/// copyright, a license or an SPDX identifier; each line with its newline,
/// then a blank line. Empty when it has none.
pub fn license_header(script: &str) -> String {
    let block: Vec<&str> = script
        .lines()
        .skip_while(|line| line.starts_with("#!"))
        .take_while(|line| line.starts_with('#') && !line.starts_with("#!"))
        .collect();
    let names_a_license = block.iter().any(|line| {
        let lower = line.to_ascii_lowercase();
        ["copyright", "license", "spdx-license-identifier"]
            .iter()
            .any(|word| lower.contains(word))
    });
    if !names_a_license {
        return String::new();
    }
    let mut header: String = block.iter().map(|line| format!("{line}\n")).collect();
    header.push('\n');
    header
}

fn splice_span(script: &str, span: Span, replacement: &str) -> Result<String, SpliceError> {
    let mut replacement = replacement;
    if !script[..span.end].ends_with('\n') {
        replacement = replacement.strip_suffix('\n').unwrap_or(replacement);
    }
    Ok([&script[..span.start], replacement, &script[span.end..]].concat())
}

/// The indentation step of `script`'s code, in spaces: the largest of 4, 3
/// and 2 that divides the indentation of (nearly) every indented code line;
/// None when it indents with tabs or no step fits.
pub fn indent_step(script: &str) -> Result<Option<usize>, SpliceError> {
    let indents: Vec<usize> = classify(script)?
        .iter()
        .filter(|l| l.kind == Kind::Code && !l.text.trim().is_empty())
        .filter(|l| !l.text.starts_with('\t'))
        .map(|l| l.text.len() - l.text.trim_start_matches(' ').len())
        .filter(|&n| n > 0)
        .collect();
    if indents.is_empty() {
        return Ok(None);
    }
    // Alignment of continued lines may be off the step: allow 1 in 20.
    Ok([4, 3, 2].into_iter().find(|&step| {
        let fitting = indents.iter().filter(|&&n| n % step == 0).count();
        fitting * 20 >= indents.len() * 19
    }))
}

/// `text`, indented by `from` spaces a level, indented by `to` spaces a
/// level: only the leading spaces of code lines change (`n` levels and `r`
/// spaces become `n * to + r` spaces); here-document bodies and the rest of
/// multi-line strings stay byte for byte.
pub fn reindent(text: &str, from: usize, to: usize) -> Result<String, SpliceError> {
    if from == to || from == 0 {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in classify(text)? {
        let raw = &text[line.offset..line.offset + line.len_with_newline];
        let spaces = raw.len() - raw.trim_start_matches(' ').len();
        if line.kind == Kind::Code && spaces > 0 {
            let width = spaces / from * to + spaces % from;
            out.extend(std::iter::repeat_n(' ', width));
            out.push_str(&raw[spaces..]);
        } else {
            out.push_str(raw);
        }
    }
    Ok(out)
}

/// `text` without its blank lines and the comments written for the
/// templates' readers (which name verify-pods' insides): what a host's
/// maintainer reads is the code, the one-line comment above each helper
/// saying why it exists (written `## why` in the template, `# why` here),
/// and shellcheck's directives with their reasons. Here-document bodies
/// and multi-line strings stay byte for byte.
pub fn without_comments(text: &str) -> Result<String, SpliceError> {
    let mut out = String::with_capacity(text.len());
    for line in classify(text)? {
        let raw = &text[line.offset..line.offset + line.len_with_newline];
        let code = line.text.trim_start();
        if line.kind == Kind::Code && code.starts_with("## ") {
            let indent = &raw[..raw.len() - raw.trim_start().len()];
            out.push_str(indent);
            out.push_str(&raw.trim_start()[1..]);
            continue;
        }
        let comment = code.starts_with('#') && !code.starts_with("# shellcheck ");
        if line.kind == Kind::Code && (code.is_empty() || comment) {
            continue;
        }
        out.push_str(raw);
    }
    Ok(out)
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

    const HOST: &str = "set -euo pipefail\nSCRIPT_DIR=x\n# shellcheck source=lib/a.sh\nsource \"${SCRIPT_DIR}/lib/a.sh\"\n\nf() {\n    if x; then\n        y\n    fi\n}\n\nverify_pods() {\n    old\n}\nmain\n";

    #[test]
    fn the_host_style_is_read_from_its_own_source_lines() {
        let style = SourceStyle::detect(HOST).unwrap();
        assert_eq!(
            style.lines("lib/verify-pods.sh"),
            "# shellcheck source=lib/verify-pods.sh\nsource \"${SCRIPT_DIR}/lib/verify-pods.sh\"\n"
        );
        let dot = SourceStyle::detect("  . $HERE/common.sh\n").unwrap();
        assert_eq!(dot.lines("v.sh"), ". $HERE/v.sh\n");
        assert_eq!(
            SourceStyle::detect("source lib.sh\necho '. $X/y'\n").unwrap(),
            SourceStyle::fallback()
        );
    }

    #[test]
    fn splice_source_replaces_the_definition_once() {
        // After the host's last source line (issue 31), the definition gone.
        let once = splice_source(HOST, "lib/v.sh").unwrap();
        assert_eq!(
            once,
            HOST.replace("verify_pods() {\n    old\n}\n", "").replace(
                "source \"${SCRIPT_DIR}/lib/a.sh\"\n",
                "source \"${SCRIPT_DIR}/lib/a.sh\"\n# shellcheck source=lib/v.sh\nsource \"${SCRIPT_DIR}/lib/v.sh\"\n"
            )
        );
        // A host that sources nothing: where the definition was.
        let bare = "set -e\nverify_pods() {\n  old\n}\nmain\n";
        assert_eq!(
            splice_source(bare, "lib/v.sh").unwrap(),
            "set -e\nsource \"$(dirname \"${BASH_SOURCE[0]}\")/lib/v.sh\"\nmain\n"
        );
        assert_eq!(splice_source(&once, "lib/v.sh").unwrap(), once);
        assert_eq!(
            splice_source("x\n", "lib/v.sh"),
            Err(SpliceError::NotSourced {
                lib: "lib/v.sh".into()
            })
        );
        // Already sourced, still defined: the definition goes.
        let both = format!("{once}verify_pods() {{\n}}\n");
        assert_eq!(splice_source(&both, "lib/v.sh").unwrap(), once);
    }

    #[test]
    fn reindent_changes_code_lines_only() {
        assert_eq!(indent_step(HOST).unwrap(), Some(4));
        assert_eq!(indent_step("f() {\n  a\n    b\n}\n").unwrap(), Some(2));
        assert_eq!(indent_step("f() {\n\ta\n}\n").unwrap(), None);
        let text = "f() {\n  a <<'E'\n  body\nE\n  s=\"\n  kept\"\n    b \\\n     c\n}\n";
        assert_eq!(
            reindent(text, 2, 4).unwrap(),
            "f() {\n    a <<'E'\n  body\nE\n    s=\"\n  kept\"\n        b \\\n         c\n}\n"
        );
    }
}
