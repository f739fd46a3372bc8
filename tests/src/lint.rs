//! The portable-subset lint: the canonical programs run on jaq (the checker)
//! and on whatever `jq` the user has (1.6, 1.7, 1.8), so they may only use
//! constructs on which all of them agree. This rejects the known divergent
//! ones (see `shared/research/jaq-vs-jq.md` of the planning notes).
//!
//! Programs are read with jaq's own lexer ([`lex`]), the one that compiles
//! them: comments are gone, `.name` is one token (a field, never a word), and
//! the code inside a string's `\( … )` is a token tree like any other.
//!
//! Only tests read it (the portable-subset test below, and the projection
//! tests' scan of the fields the programs read), so it lives in the tests'
//! crate, not in the product.

/// jaq's token trees, for other scans of the programs (the projection tests).
pub use jaq_core::load::lex::{StrPart, Tok, Token};
use jaq_core::load::Lexer;

/// One finding: a construct that jq 1.6, jq 1.7+ and jaq do not agree on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line of the construct (0: the program as a whole).
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
    let tokens = match lex(program) {
        Ok(tokens) => tokens,
        Err((line, expected)) => {
            return vec![Finding {
                line,
                construct: format!("expected {expected}"),
                why: "not a jq program (jaq's lexer refuses it)",
            }]
        }
    };
    let mut leaves = Vec::new();
    leaves_of(&tokens, &mut leaves);
    let mut findings: Vec<Finding> = leaves
        .iter()
        .filter_map(|Token(text, kind)| {
            let table = match kind {
                Tok::Word | Tok::Var | Tok::Fmt => REFUSED_WORDS,
                Tok::Sym => REFUSED_OPERATORS,
                _ => return None,
            };
            let (construct, why) = table.iter().find(|(refused, _)| refused == text)?;
            Some(Finding {
                line: line_of(program, text),
                construct: (*construct).to_owned(),
                why,
            })
        })
        .collect();
    findings.extend(unbalanced_if(&leaves));
    findings
}

/// jaq's lexer on a program: its token trees, or the 1-based line of the
/// first thing it cannot read and what it expected there.
pub fn lex(program: &str) -> Result<Vec<Token<&str>>, (usize, &'static str)> {
    Lexer::new(program).lex().map_err(|errors| {
        let (expected, at) = &errors[0];
        (line_of(program, at), expected.as_str())
    })
}

/// The 1-based line of `part`, a slice of `program` (as jaq's tokens are).
pub fn line_of(program: &str, part: &str) -> usize {
    let start = jaq_core::load::span(program, part).start;
    program[..start].matches('\n').count() + 1
}

/// Every token that is not a block or a string, in source order; the code
/// interpolated in strings included.
fn leaves_of<'a>(tokens: &'a [Token<&'a str>], out: &mut Vec<&'a Token<&'a str>>) {
    for token in tokens {
        match &token.1 {
            Tok::Block(inner) => leaves_of(inner, out),
            Tok::Str(parts) => {
                for part in parts {
                    if let StrPart::Term(term) = part {
                        leaves_of(std::slice::from_ref(term), out);
                    }
                }
            }
            _ => out.push(token),
        }
    }
}

/// Every `if` needs its own `else` (jq 1.6); `elif` branches share it.
fn unbalanced_if(leaves: &[&Token<&str>]) -> Option<Finding> {
    let count = |word: &str| {
        leaves
            .iter()
            .filter(|Token(text, kind)| matches!(kind, Tok::Word) && *text == word)
            .count()
    };
    (count("if") > count("else")).then(|| Finding {
        line: 0,
        construct: "if".into(),
        why: "`if` without `else` is a syntax error in jq 1.6",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use checker::Programs;

    #[test]
    fn canonical_programs_stay_in_the_portable_subset() {
        for program in Programs::ALL {
            assert_eq!(lint(program.text), vec![], "{}", program.file);
        }
    }

    /// The widest line a canonical program may have: the bash function embeds
    /// them verbatim, and generated files keep to the house's 100 columns.
    const MOST_COLUMNS: usize = 100;

    /// Every `.jq` file of checker/programs, code and comments, at most
    /// [`MOST_COLUMNS`] characters a line: read from the folder, so that a
    /// program added there is held to it too.
    #[test]
    fn canonical_programs_keep_to_100_columns() {
        let folder = crate::workspace_root().join("checker/programs");
        let mut programs = 0;
        let mut too_wide = Vec::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|ext| ext != "jq") {
                continue;
            }
            programs += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for (at, line) in text.lines().enumerate() {
                let columns = line.chars().count();
                if columns > MOST_COLUMNS {
                    let file = path.file_name().unwrap().to_string_lossy();
                    too_wide.push(format!("{file}:{}: {columns} columns", at + 1));
                }
            }
        }
        assert!(
            programs > Programs::ALL.len(),
            "{}: no programs",
            folder.display()
        );
        assert_eq!(
            too_wide,
            Vec::<String>::new(),
            "over {MOST_COLUMNS} columns"
        );
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
            ("\"\\(\"\\(limit(1; .[]))\")\"", "limit"),
            ("@base32d", "@base32d"),
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
    fn findings_name_their_line() {
        let found = lint("# a comment\n.a\n| .b / 2");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].line, found[0].construct.as_str()), (3, "/"));
    }

    #[test]
    fn fields_are_not_words() {
        assert_eq!(lint(".limit | .test | .[\"join\"]"), vec![]);
    }

    #[test]
    fn text_jaq_cannot_lex_is_a_finding() {
        let found = lint(".a | \"unterminated");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].construct.starts_with("expected"), "{found:?}");
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
