//! The `Pod status:` line, recognised with a pattern derived from render.jq.
//!
//! render.jq is the one place that words the status line. Rather than copy
//! its wording here, the pattern is read out of render.jq's text: the string
//! literal that interpolates `.total` and `.unscheduled` is the template; its
//! literal parts must match exactly and each `\(.field)` hole matches a
//! number. The trailing group that holds the fields the old harness did not
//! print (`(attempts=…, waited=…s)`) is optional, so logs of the old
//! `verify_pods()` match too. If render.jq changes the line, the pattern
//! follows; the CLI tests feed a line printed by `verify-pods check` back to
//! triage so the two cannot drift apart.

use checker::Programs;

/// The counts of one status line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    pub total: u64,
    pub running: u64,
    pub pending: u64,
    pub unscheduled: u64,
    pub failed: u64,
    /// Only in lines of the new checker.
    pub attempts: Option<u64>,
    /// Only in lines of the new checker.
    pub waited_seconds: Option<u64>,
}

/// The report keys every status line carries (the old harness printed these).
const REQUIRED: [&str; 5] = ["total", "running", "pending", "unscheduled", "failed"];
/// The report keys only the new checker prints, in the optional trailing group.
const OPTIONAL: [&str; 2] = ["attempts", "waited_seconds"];

fn set(status: &mut Status, field: &str, n: u64) {
    match field {
        "total" => status.total = n,
        "running" => status.running = n,
        "pending" => status.pending = n,
        "unscheduled" => status.unscheduled = n,
        "failed" => status.failed = n,
        "attempts" => status.attempts = Some(n),
        "waited_seconds" => status.waited_seconds = Some(n),
        _ => unreachable!("fields are checked when the pattern is built"),
    }
}

/// One part of a jq string literal.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Lit(String),
    /// The code of an interpolation `\( … )`, trimmed.
    Hole(String),
}

/// One step of the matcher.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Lit(String),
    Num(&'static str),
}

/// The status-line matcher.
#[derive(Debug, Clone)]
pub struct StatusPattern {
    /// The literal the line starts with (`Pod status: `): searched for.
    anchor: String,
    /// What must follow the anchor.
    required: Vec<Step>,
    /// What may follow the required part (the `(attempts=…)` group).
    optional: Vec<Step>,
}

impl StatusPattern {
    /// The pattern of the status line of the canonical render.jq.
    pub fn canonical() -> &'static StatusPattern {
        static PATTERN: std::sync::OnceLock<StatusPattern> = std::sync::OnceLock::new();
        PATTERN.get_or_init(|| {
            StatusPattern::from_program(Programs::RENDER.text)
                .expect("render.jq has a status-line template (tested)")
        })
    }

    /// Find the status template among a program's string literals.
    pub fn from_program(program: &str) -> Result<StatusPattern, String> {
        let is_template = |pieces: &Vec<Piece>| {
            let holes: Vec<&str> = pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Hole(code) => Some(code.as_str()),
                    Piece::Lit(_) => None,
                })
                .collect();
            holes.contains(&".total") && holes.contains(&".unscheduled")
        };
        let template = string_literals(program)
            .into_iter()
            .find(is_template)
            .ok_or("no string literal interpolates .total and .unscheduled")?;
        Self::from_template(&template)
    }

    fn from_template(pieces: &[Piece]) -> Result<StatusPattern, String> {
        let mut steps = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Lit(text) => steps.push(Step::Lit(text.clone())),
                Piece::Hole(code) => steps.push(Step::Num(field_of(code)?)),
            }
        }
        let anchor = match steps.first() {
            Some(Step::Lit(text)) if !text.is_empty() => text.clone(),
            _ => return Err("the status template must start with literal text".into()),
        };
        let numbers: Vec<&str> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Num(f) => Some(*f),
                Step::Lit(_) => None,
            })
            .collect();
        let required_order: Vec<&str> = numbers
            .iter()
            .copied()
            .filter(|f| REQUIRED.contains(f))
            .collect();
        if required_order != REQUIRED {
            return Err(format!(
                "the status template must hold {REQUIRED:?} in this order, found {numbers:?}"
            ));
        }
        let (required, optional) = split_optional(&steps[1..])?;
        Ok(StatusPattern {
            anchor,
            required,
            optional,
        })
    }

    /// The literal a status line starts with, as render.jq words it.
    pub fn anchor(&self) -> &str {
        &self.anchor
    }

    /// The counts of `line` when it contains a status line.
    pub fn parse(&self, line: &str) -> Option<Status> {
        line.match_indices(&self.anchor).find_map(|(at, _)| {
            let mut status = Status::default();
            let rest = &line[at + self.anchor.len()..];
            let rest = match_steps(&self.required, rest, &mut status)?;
            let mut with_suffix = status;
            if match_steps(&self.optional, rest, &mut with_suffix).is_some() {
                return Some(with_suffix);
            }
            Some(status)
        })
    }
}

/// Split the steps after the anchor into the required part and the optional
/// trailing group: the group starts at the last ` (` of the literal that
/// precedes the first optional field. Without optional fields, all is required.
fn split_optional(steps: &[Step]) -> Result<(Vec<Step>, Vec<Step>), String> {
    let first_optional = steps
        .iter()
        .position(|s| matches!(s, Step::Num(f) if OPTIONAL.contains(f)));
    let Some(at) = first_optional else {
        return Ok((steps.to_vec(), Vec::new()));
    };
    if steps[at..]
        .iter()
        .any(|s| matches!(s, Step::Num(f) if REQUIRED.contains(f)))
    {
        return Err("optional fields must come after the required ones".into());
    }
    let Some(Step::Lit(joint)) = at.checked_sub(1).map(|i| &steps[i]) else {
        return Err("a literal must separate the required and optional fields".into());
    };
    let Some(split) = joint.rfind(" (") else {
        return Err(format!(
            "no ` (` group before the optional fields in {joint:?}"
        ));
    };
    let mut required = steps[..at - 1].to_vec();
    required.push(Step::Lit(joint[..split].to_owned()));
    let mut optional = vec![Step::Lit(joint[split..].to_owned())];
    optional.extend_from_slice(&steps[at..]);
    Ok((required, optional))
}

fn field_of(code: &str) -> Result<&'static str, String> {
    REQUIRED
        .iter()
        .chain(OPTIONAL.iter())
        .find(|f| code.strip_prefix('.') == Some(**f))
        .copied()
        .ok_or_else(|| format!("unexpected interpolation \\({code}) in the status template"))
}

/// Match `steps` at the start of `text`; the rest of the text on success.
fn match_steps<'t>(steps: &[Step], mut text: &'t str, status: &mut Status) -> Option<&'t str> {
    for step in steps {
        text = match step {
            Step::Lit(lit) => text.strip_prefix(lit.as_str())?,
            Step::Num(field) => {
                let digits = text.bytes().take_while(u8::is_ascii_digit).count();
                let n = text[..digits].parse::<u64>().ok()?;
                set(status, field, n);
                &text[digits..]
            }
        };
    }
    Some(text)
}

/// The string literals of a jq program, outside comments, as pieces.
fn string_literals(program: &str) -> Vec<Vec<Piece>> {
    let mut literals = Vec::new();
    let mut chars = program.chars();
    while let Some(c) = chars.next() {
        match c {
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' => literals.push(read_literal(&mut chars)),
            _ => {}
        }
    }
    literals
}

/// Read a string literal after its opening quote, up to its closing quote.
fn read_literal(chars: &mut std::str::Chars) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('(') => {
                    pieces.push(Piece::Lit(std::mem::take(&mut text)));
                    pieces.push(Piece::Hole(read_interpolation(chars)));
                }
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some('r') => text.push('\r'),
                Some(other) => text.push(other),
                None => break,
            },
            _ => text.push(c),
        }
    }
    pieces.push(Piece::Lit(text));
    pieces.retain(|p| !matches!(p, Piece::Lit(t) if t.is_empty()));
    pieces
}

/// The code of an interpolation, up to its closing parenthesis. Nested
/// parentheses are counted; the status template only holds plain paths.
fn read_interpolation(chars: &mut std::str::Chars) -> String {
    let mut code = String::new();
    let mut depth = 0usize;
    for c in chars.by_ref() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => break,
            ')' => depth -= 1,
            _ => {}
        }
        code.push(c);
    }
    code.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_jq_yields_a_pattern_with_an_optional_group() {
        let pattern = StatusPattern::canonical();
        assert!(!pattern.anchor.is_empty());
        let numbers = |steps: &[Step]| -> Vec<&str> {
            steps
                .iter()
                .filter_map(|s| match s {
                    Step::Num(f) => Some(*f),
                    Step::Lit(_) => None,
                })
                .collect()
        };
        assert_eq!(numbers(&pattern.required), REQUIRED);
        assert_eq!(numbers(&pattern.optional), OPTIONAL);
    }

    fn template(program: &str) -> StatusPattern {
        StatusPattern::from_program(program).unwrap()
    }

    #[test]
    fn a_template_matches_with_and_without_its_optional_group() {
        let p = template(
            r#"# "not \(.total) a \(.unscheduled) literal"
            "S: \(.total) t, \(.running) r, \(.pending) p (\(.unscheduled) u), \(.failed) f (a=\(.attempts), w=\(.waited_seconds)s)""#,
        );
        let short = p.parse("x S: 5 t, 4 r, 1 p (1 u), 0 f").unwrap();
        assert_eq!(
            (
                short.total,
                short.running,
                short.pending,
                short.unscheduled,
                short.failed
            ),
            (5, 4, 1, 1, 0)
        );
        assert_eq!(short.attempts, None);
        let long = p
            .parse("S: 5 t, 4 r, 1 p (1 u), 0 f (a=3, w=10s) tail")
            .unwrap();
        assert_eq!((long.attempts, long.waited_seconds), (Some(3), Some(10)));
        // A broken optional group still leaves the required part.
        let broken = p.parse("S: 5 t, 4 r, 1 p (1 u), 0 f (a=x)").unwrap();
        assert_eq!(broken.attempts, None);
        for no in [
            "S: 5 t, 4 r, 1 p (1 u)",
            "S: five t, 4 r, 1 p (1 u), 0 f",
            "S: 5 t,  4 r, 1 p (1 u), 0 f",
            "S: 99999999999999999999999 t, 4 r, 1 p (1 u), 0 f",
            "",
        ] {
            assert_eq!(p.parse(no), None, "{no:?}");
        }
    }

    #[test]
    fn a_later_anchor_is_tried_when_the_first_does_not_match() {
        let p = template(
            r#""S: \(.total) t \(.running) r \(.pending) p \(.unscheduled) u \(.failed) f""#,
        );
        assert_eq!(
            p.parse("S: S: 1 t 1 r 0 p 0 u 0 f").map(|s| s.total),
            Some(1)
        );
    }

    #[test]
    fn templates_without_the_fields_are_refused() {
        assert!(StatusPattern::from_program(r#""no holes""#).is_err());
        assert!(StatusPattern::from_program(
            r#""S: \(.unscheduled) u \(.total) t \(.running) r \(.pending) p \(.failed) f""#
        )
        .is_err());
        assert!(StatusPattern::from_program(
            r#""S: \(.total) t \(.running) r \(.pending) p \(.unscheduled) u \(.failed) f \(.nodes)""#
        )
        .is_err());
    }
}
