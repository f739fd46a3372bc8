//! The portable-subset lint: the canonical programs run on jaq (the checker)
//! and on whatever `jq` the user has (1.6, 1.7, 1.8), so they may only use
//! constructs on which all of them agree. This rejects the known divergent
//! ones (see `shared/research/jaq-vs-jq.md` of the planning notes).

/// One finding: a construct that jq 1.6, jq 1.7+ and jaq do not agree on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line of the construct.
    pub line: usize,
    /// The construct.
    pub construct: String,
    /// Why it is refused.
    pub why: &'static str,
}

/// Words refused anywhere in code (outside strings and comments).
const REFUSED_WORDS: &[(&str, &str)] = &[
    ("IN", "missing in jaq"),
    ("INDEX", "missing in jaq"),
    ("$__loc__", "missing in jaq"),
    ("tostream", "missing in jaq"),
    ("fromstream", "missing in jaq"),
    ("input_line_number", "missing in jaq"),
    ("leaf_paths", "removed in jq 1.7, missing in jaq"),
    ("@base32", "missing in jaq"),
    ("@base32d", "missing in jaq"),
    ("@base64d", "jaq rejects unpadded input"),
    ("@tsv", "floats print differently; moved out of jaq-std"),
    ("@csv", "floats print differently; moved out of jaq-std"),
    ("pick", "missing in jq 1.6"),
    ("abs", "missing in jq 1.6"),
    ("trim", "missing in jq 1.6/1.7"),
    ("ltrim", "missing in jq 1.6/1.7"),
    ("rtrim", "missing in jq 1.6/1.7"),
    (
        "ltrimstr",
        "non-string input: jq 1.6/1.7 pass it through, jaq and jq 1.8 fail",
    ),
    (
        "rtrimstr",
        "non-string input: jq 1.6/1.7 pass it through, jaq and jq 1.8 fail",
    ),
    (
        "limit",
        "limit(0) emits one item in jq 1.6; limit(-1) differs everywhere",
    ),
    ("tonumber", "jaq parses a prefix of `100m`; jq rejects it"),
    ("join", "null/number elements join differently in jaq"),
    (
        "contains",
        "substring semantics: `CronJob` contains `Job`; compare with ==",
    ),
    ("inside", "substring semantics, like contains"),
    ("input", "jaq yields empty where jq fails"),
    (
        "inputs",
        "needs a custom jaq data type; one document per run",
    ),
    (
        "test",
        "regex engines differ (look-around, \\p{}, case folding)",
    ),
    ("match", "regex engines differ"),
    ("capture", "regex engines differ"),
    ("scan", "regex engines differ"),
    ("splits", "regex engines differ"),
    ("sub", "regex engines differ"),
    ("gsub", "regex engines differ; jq 1.6 anchors are buggy"),
    (
        "fromdateiso8601",
        "jaq accepts fractions and offsets jq rejects",
    ),
    ("fromdate", "jaq accepts fractions and offsets jq rejects"),
    ("todate", "fractions differ"),
    ("now", "not deterministic"),
    ("env", "not deterministic; pass data as variables"),
    (
        "$ENV",
        "not defined in embedded jaq; pass data as variables",
    ),
    ("input_filename", "not defined in embedded jaq"),
    ("nan", "printed as NaN by jaq, null by jq"),
    ("infinite", "printed as Infinity by jaq"),
    ("getpath", "missing paths differ"),
    ("setpath", "updates through a missing key fail in jaq"),
    ("delpaths", "paths through missing keys differ"),
    ("with_entries", "from_entries accepts more key names in jq"),
    ("ascii", "missing in jaq"),
    ("@sh", "number formatting differs"),
];

/// Operators refused in code.
const REFUSED_OPERATORS: &[(&str, &str)] = &[
    (
        "|=",
        "updates through a missing key fail in jaq; `|= empty` differs in jq 1.6",
    ),
    ("+=", "updates through a missing key fail in jaq"),
    ("-=", "updates through a missing key fail in jaq"),
    ("*=", "updates through a missing key fail in jaq"),
    ("/=", "updates through a missing key fail in jaq"),
    ("%=", "updates through a missing key fail in jaq"),
    ("//=", "updates through a missing key fail in jaq"),
    ("=", "assignment through a missing key fails in jaq"),
    (
        "/",
        "division yields a float in jaq (2.0), an integer-looking number in jq (2)",
    ),
];

/// Check a program's text; an empty result means it stays in the subset.
pub fn lint(program: &str) -> Vec<Finding> {
    let code = code_only(program);
    let mut findings = Vec::new();
    for (line_no, line) in code.lines().enumerate() {
        let line_no = line_no + 1;
        for word in words(line) {
            if let Some((w, why)) = REFUSED_WORDS.iter().find(|(w, _)| *w == word) {
                findings.push(Finding {
                    line: line_no,
                    construct: (*w).to_owned(),
                    why,
                });
            }
        }
        for op in operators(line) {
            if let Some((o, why)) = REFUSED_OPERATORS.iter().find(|(o, _)| *o == op) {
                findings.push(Finding {
                    line: line_no,
                    construct: (*o).to_owned(),
                    why,
                });
            }
        }
    }
    findings.extend(unbalanced_if(&code));
    findings
}

/// Every `if` needs its own `else` (jq 1.6); `elif` branches share it.
fn unbalanced_if(code: &str) -> Option<Finding> {
    let count = |word: &str| code.lines().flat_map(words).filter(|w| *w == word).count();
    (count("if") > count("else")).then(|| Finding {
        line: 0,
        construct: "if".into(),
        why: "`if` without `else` is a syntax error in jq 1.6",
    })
}

fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '@'))
        .filter(|w| !w.is_empty())
}

/// Maximal runs of operator characters (`|=`, `//`, `==`, `/`...).
fn operators(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !matches!(c, '|' | '=' | '+' | '-' | '*' | '/' | '%' | '<' | '>' | '!'))
        .filter(|op| !op.is_empty())
}

/// The program with comments removed and string literals emptied, but the
/// code of string interpolations `\( … )` kept; line structure is preserved.
fn code_only(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    // Stack of interpolation depths: each entry counts open parentheses of
    // code nested inside a string.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut in_string = false;
    let mut chars = program.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' if chars.peek() == Some(&'(') => {
                    chars.next();
                    in_string = false;
                    interpolations.push(0);
                    out.push_str("\" + (");
                }
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    out.push('"');
                }
                '\n' => out.push('\n'),
                _ => {}
            }
            continue;
        }
        match c {
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                in_string = true;
                out.push('"');
            }
            '(' => {
                if let Some(depth) = interpolations.last_mut() {
                    *depth += 1;
                }
                out.push('(');
            }
            ')' => match interpolations.last_mut() {
                Some(0) => {
                    interpolations.pop();
                    in_string = true;
                    out.push_str(") + \"");
                }
                Some(depth) => {
                    *depth -= 1;
                    out.push(')');
                }
                None => out.push(')'),
            },
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Programs;

    #[test]
    fn canonical_programs_stay_in_the_portable_subset() {
        for program in Programs::ALL {
            assert_eq!(lint(program.text), vec![], "{}", program.file);
        }
    }

    #[test]
    fn known_divergent_constructs_are_refused() {
        let cases = [
            (r#".metadata.namespace | IN("a", "b")"#, "IN"),
            (".a / 2", "/"),
            (".a.b = 1", "="),
            (".[$ns][$ph] += 1", "+="),
            (".x |= empty", "|="),
            ("limit(0; .[])", "limit"),
            (".cpu | tonumber", "tonumber"),
            (r#"map(tostring) | join(",")"#, "join"),
            (r#".metadata.namespace | ltrimstr("kube-")"#, "ltrimstr"),
            ("map(@tsv)", "@tsv"),
            (r#"test("(?<=a)b")"#, "test"),
            (r#"map(.kind) | contains(["Job"])"#, "contains"),
            ("if . then 1 end", "if"),
            ("$__loc__", "$__loc__"),
            ("pick(.a)", "pick"),
            (".[] | abs", "abs"),
            ("\"\\(.a / 2)\"", "/"),
        ];
        for (program, construct) in cases {
            let found = lint(program);
            assert!(
                found.iter().any(|f| f.construct == construct),
                "{program}: {found:?}"
            );
        }
    }

    #[test]
    fn strings_comments_and_alternatives_are_not_code() {
        assert_eq!(
            lint("# IN, limit and a / in a comment\n.a // \"x / y = IN\" | . == 1"),
            vec![]
        );
        assert_eq!(
            lint("if .a then 1 elif .b then 2 else 3 end | . != 0 | . <= 1"),
            vec![]
        );
    }
}
