//! The driver contract: the knobs both drivers read and the words both
//! print on stderr, from ONE table, `checker/programs/contract.json`
//! (checker/build.rs turns it into the constants below; scriptgen renders
//! the bash from the same constants). Also the validation of the knobs and
//! of the excluded namespaces.

use std::fmt;

/// A number of seconds that both drivers read: the checker from a flag or
/// the environment, the bash function from the environment. Both validate it
/// from the table with the same rules and the same words; a test runs one
/// table of bad values through both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    /// Its name, also the bash function's variable that holds it: `deadline`.
    pub name: &'static str,
    /// The checker's flag: `--deadline`.
    pub flag: &'static str,
    /// The environment variable: `KWOK_VERIFY_PODS_DEADLINE`.
    pub env: &'static str,
    /// The value when neither is set.
    pub default: u64,
    /// The smallest value accepted.
    pub minimum: u64,
    /// The most significant digits it may have. bash arithmetic is signed
    /// 64-bit: every 18-digit number fits, some 19-digit ones do not.
    /// (Leading zeros do not count: `010` is ten.)
    pub max_digits: usize,
    /// What its number counts, one word (`seconds`), as messages say it.
    pub unit: &'static str,
    /// What it does, for the bash function's header.
    pub about: &'static str,
}

/// A setting that is not a number: the artifact directory, the step summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The checker's flag, when it has one.
    pub flag: Option<&'static str>,
    /// The environment variable.
    pub env: &'static str,
    /// What it does, for the bash function's header.
    pub about: &'static str,
}

/// How a driver's lines on stderr begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    pub error: &'static str,
    pub warning: &'static str,
}

/// Whether a message ends the check (with its exit code) or only warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// A line (or, without a level, part of a line) both drivers print, with
/// `{placeholders}`: the checker fills them with [`Message::format`], the
/// bash function from its shell variables of the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Its key in the table: `kubectl_failed`.
    pub id: &'static str,
    /// None for the words that make up part of a message.
    pub level: Option<Level>,
    /// The exit code of an error.
    pub exit: Option<u8>,
    /// The template: `` `{command}` failed (exit status: {code}): {why} ``.
    pub text: &'static str,
}

/// One piece of a message's template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Words printed as they are.
    Literal(&'a str),
    /// `{name}`: a value.
    Placeholder(&'a str),
}

impl Message {
    /// The template's pieces, in order. A `{` that does not open a
    /// placeholder (an identifier and `}`) is a literal.
    pub fn pieces(&self) -> Vec<Piece<'static>> {
        let text = self.text;
        let mut pieces = Vec::new();
        let mut literal = 0;
        let mut at = 0;
        while let Some(open) = text[at..].find('{').map(|i| at + i) {
            let name_len = text[open + 1..]
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(text.len() - open - 1);
            let close = open + 1 + name_len;
            if name_len > 0 && text[close..].starts_with('}') {
                if literal < open {
                    pieces.push(Piece::Literal(&text[literal..open]));
                }
                pieces.push(Piece::Placeholder(&text[open + 1..close]));
                literal = close + 1;
                at = close + 1;
            } else {
                at = open + 1;
            }
        }
        if literal < text.len() {
            pieces.push(Piece::Literal(&text[literal..]));
        }
        pieces
    }

    /// The names of its placeholders, in order.
    pub fn placeholders(&self) -> Vec<&'static str> {
        self.pieces()
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Placeholder(name) => Some(name),
                Piece::Literal(_) => None,
            })
            .collect()
    }

    /// The template with each placeholder replaced by its value. A value
    /// the template needs but `values` lacks is a bug of the caller.
    pub fn format(&self, values: &[(&str, &dyn fmt::Display)]) -> String {
        self.pieces()
            .into_iter()
            .map(|piece| match piece {
                Piece::Literal(text) => text.to_owned(),
                Piece::Placeholder(name) => values
                    .iter()
                    .find(|(given, _)| *given == name)
                    .map(|(_, value)| value.to_string())
                    .unwrap_or_else(|| panic!("{}: no value for {{{name}}}", self.id)),
            })
            .collect()
    }

    /// The exit code of an error (2 for a warning, which never ends a check
    /// by itself).
    pub fn exit_code(&self) -> u8 {
        self.exit.unwrap_or(crate::exit::CANNOT_OBSERVE)
    }

    /// [`Self::format`], keeping which message it is (for its exit code).
    pub fn say(&'static self, values: &[(&str, &dyn fmt::Display)]) -> Said {
        Said {
            message: self,
            line: self.format(values),
        }
    }
}

/// A message of the contract, formatted: what to print and how to exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub message: &'static Message,
    pub line: String,
}

impl Said {
    /// The table's exit code for it.
    pub fn exit_code(&self) -> u8 {
        self.message.exit_code()
    }
}

impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.line)
    }
}

include!(concat!(env!("OUT_DIR"), "/contract.rs"));

/// What every setting's environment variable starts with (the generated
/// bash names them by what follows it).
pub const ENV_PREFIX: &str = "KWOK_VERIFY_PODS_";
/// Environment variable for the settle deadline, in seconds.
pub const DEADLINE_ENV: &str = DEADLINE.env;
/// Environment variable for the settle interval, in seconds.
pub const INTERVAL_ENV: &str = INTERVAL.env;
/// Environment variable for the per-call kubectl timeout, in seconds.
pub const KUBECTL_TIMEOUT_ENV: &str = KUBECTL_TIMEOUT.env;
/// Environment variable for the artifact directory.
pub const ARTIFACT_DIR_ENV: &str = ARTIFACT_DIR.env;
/// Set by GitHub Actions: the file that receives the step summary. When it
/// names a file, both drivers append summary.jq's Markdown of the result.
pub const STEP_SUMMARY_ENV: &str = STEP_SUMMARY.env;
/// Default settle deadline, in seconds.
pub const DEFAULT_DEADLINE: u64 = DEADLINE.default;
/// Default settle interval, in seconds.
pub const DEFAULT_INTERVAL: u64 = INTERVAL.default;
/// Default per-call kubectl timeout, in seconds.
pub const DEFAULT_KUBECTL_TIMEOUT: u64 = KUBECTL_TIMEOUT.default;
/// Environment variable for the chunk size of the raw lists.
pub const CHUNK_SIZE_ENV: &str = CHUNK_SIZE.env;

/// Parse a knob's text the way the bash function does: ASCII digits only,
/// base 10 (a leading zero does not mean octal), no sign, no spaces, at most
/// the knob's `max_digits` significant digits, at least its minimum. `named`
/// is how the error names where the text came from (the flag or the
/// environment variable).
pub fn parse_knob(knob: &Knob, named: &str, text: &str) -> Result<u64, Said> {
    let value = shown(text);
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        let values: [(&str, &dyn fmt::Display); 3] =
            [("named", &named), ("unit", &knob.unit), ("value", &value)];
        return Err(messages::KNOB_NOT_A_NUMBER.say(&values));
    }
    let digits = text.trim_start_matches('0');
    if digits.len() > knob.max_digits {
        return Err(messages::KNOB_TOO_LARGE.say(&[
            ("named", &named),
            ("max_digits", &knob.max_digits),
            ("value", &value),
        ]));
    }
    let seconds = digits.parse::<u64>().unwrap_or(0);
    if seconds < knob.minimum {
        return Err(messages::KNOB_BELOW_MINIMUM.say(&[
            ("named", &named),
            ("minimum", &knob.minimum),
            ("value", &value),
        ]));
    }
    Ok(seconds)
}

/// The spelling of "no owner kind excused" for the excluded owner kinds:
/// empty means the default list, as for every setting.
pub const NO_OWNER_KINDS: &str = "none";

/// Parse the excluded owner kinds the way the bash function does: empty (the
/// default list, checker/programs/excluded-owner-kinds, as every empty
/// setting is its default), [`NO_OWNER_KINDS`] (no kind excluded), or kinds
/// separated by single commas, each ASCII letters and digits starting with a
/// letter (a Kubernetes kind: `Job`, `PyTorchJob`). A space or an empty
/// entry is refused, not trimmed: the match is exact, and a kind that can
/// never match must not pass silently. `named` is the flag or the
/// environment variable the text came from.
pub fn parse_owner_kinds(named: &str, text: &str) -> Result<Vec<String>, Said> {
    let is_kind = |kind: &str| {
        kind.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && kind.bytes().all(|b| b.is_ascii_alphanumeric())
    };
    match text {
        "" => return Ok(crate::Programs::default_excluded_owner_kinds()),
        NO_OWNER_KINDS => return Ok(Vec::new()),
        _ => {}
    }
    if text.split(',').all(is_kind) {
        return Ok(text.split(',').map(str::to_owned).collect());
    }
    let value = shown(text);
    Err(messages::OWNER_KINDS_INVALID.say(&[("named", &named), ("value", &value)]))
}

/// What an I/O error says, in the words of the system (`No such file or
/// directory`), without Rust's ` (os error 2)`: the bash function prints
/// the same words from the tool that failed (mkdir, cp, bash itself).
pub fn io_words(error: &std::io::Error) -> String {
    let text = error.to_string();
    match error.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}

/// A value as an error shows it, between double quotes: control characters
/// (a newline would break the one-line error) become `?`, as bash's
/// `${text//[[:cntrl:]]/?}` does.
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// `a,b,c` as namespace names, unchecked (report.jq checks them); `+a,b`
/// adds them to the default list (checker/programs/excluded-namespaces)
/// instead of replacing it.
pub fn excluded_namespaces(text: &str) -> Vec<String> {
    let (mut names, listed) = match text.strip_prefix('+') {
        Some(added) => (crate::Programs::default_excluded_namespaces(), added),
        None => (Vec::new(), text),
    };
    names.extend(
        listed
            .split(',')
            .filter(|name| !name.is_empty())
            .map(str::to_owned),
    );
    names
}

/// Parse `a,b,c` into namespace names, as [`excluded_namespaces`]; each
/// must be a DNS-1123 label (what Kubernetes allows as a namespace name).
/// An empty list is allowed.
pub fn parse_namespaces(text: &str) -> Result<Vec<String>, String> {
    excluded_namespaces(text)
        .iter()
        .map(|name| name.trim())
        .filter(|name| !name.is_empty())
        .map(|name| {
            if is_dns1123_label(name) {
                Ok(name.to_owned())
            } else {
                Err(format!(
                    "excluded namespace {name:?} is not a DNS-1123 label \
                     (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)"
                ))
            }
        })
        .collect()
}

fn is_dns1123_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    let inner_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    let edge_ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.iter().all(inner_ok)
        && bytes.first().is_some_and(edge_ok)
        && bytes.last().is_some_and(edge_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_kinds_are_exact_kinds_separated_by_commas() {
        let parse = |text| parse_owner_kinds("k", text);
        // Empty is the default list, as for every setting; `none` is none.
        assert_eq!(
            parse(""),
            Ok(crate::Programs::default_excluded_owner_kinds())
        );
        assert_eq!(parse("none"), Ok(vec![]));
        assert_eq!(parse("Job"), Ok(vec!["Job".to_owned()]));
        assert_eq!(
            parse("Job,PyTorchJob,TFJob2"),
            Ok(vec!["Job".into(), "PyTorchJob".into(), "TFJob2".into()])
        );
        for bad in [
            ",",
            "Job,",
            ",Job",
            "Job,,MPIJob",
            " Job",
            "Job ",
            "2Job",
            "batch/Job",
            "Jöb",
            "Job\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn seconds_are_digits_only_base_10() {
        let parse = |text| parse_knob(&DEADLINE, "d", text);
        assert_eq!(DEADLINE.max_digits, 18, "the cases below");
        assert_eq!(parse("60"), Ok(60));
        assert_eq!(parse("010"), Ok(10));
        assert_eq!(parse("0"), Ok(0));
        assert_eq!(parse("000"), Ok(0));
        for bad in ["", "-1", "+1", " 1", "1s", "0x10", "1.5", "٣"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse("999999999999999999"), Ok(999_999_999_999_999_999));
        assert_eq!(parse("0999999999999999999"), Ok(999_999_999_999_999_999));
        assert!(parse("1000000000000000000").is_err());
        assert!(parse("99999999999999999999999").is_err());
    }

    #[test]
    fn a_template_is_filled_by_name() {
        let message = Message {
            id: "t",
            level: None,
            exit: None,
            text: "`{command}` {X}{ {}: {why}",
        };
        assert_eq!(message.placeholders(), ["command", "why"]);
        assert_eq!(
            message.format(&[("why", &"w"), ("command", &"k get")]),
            "`k get` {X}{ {}: w"
        );
    }

    #[test]
    #[should_panic(expected = "t: no value for {why}")]
    fn a_missing_value_is_a_bug() {
        let message = Message {
            id: "t",
            level: None,
            exit: None,
            text: "{why}",
        };
        message.format(&[]);
    }

    #[test]
    fn the_table_is_whole() {
        for message in messages::ALL {
            assert!(message.level.is_some(), "{}", message.id);
            assert_eq!(
                message.exit.is_some(),
                message.level == Some(Level::Error),
                "{}",
                message.id
            );
        }
        for knob in KNOBS {
            assert!(knob.default >= knob.minimum, "{}", knob.name);
            assert!(knob.default.to_string().len() <= knob.max_digits);
            assert!(knob.flag.starts_with("--") && knob.env.starts_with(ENV_PREFIX));
        }
    }

    #[test]
    fn a_plus_adds_to_the_default_namespaces() {
        let mut added = crate::Programs::default_excluded_namespaces();
        added.push("web".to_owned());
        assert_eq!(excluded_namespaces("+web,"), added);
        assert_eq!(parse_namespaces("+web").unwrap(), added);
        assert_eq!(excluded_namespaces("web,,Bad"), ["web", "Bad"]);
        assert_eq!(excluded_namespaces(""), Vec::<String>::new());
    }

    #[test]
    fn io_errors_in_the_systems_words() {
        let error = std::io::Error::from_raw_os_error(20);
        assert_eq!(io_words(&error), "Not a directory");
        assert_eq!(
            io_words(&std::io::Error::other("x (os error 1)")),
            "x (os error 1)"
        );
    }

    #[test]
    fn interval_is_at_least_one() {
        assert!(parse_knob(&INTERVAL, "i", "0").is_err());
        assert_eq!(parse_knob(&INTERVAL, "i", "1"), Ok(1));
    }

    #[test]
    fn errors_stay_on_one_line() {
        let error = parse_knob(&DEADLINE, "d", "1\n2\t").unwrap_err();
        assert_eq!(
            error.line,
            "d must be a non-negative integer number of seconds, got \"1?2?\""
        );
    }

    #[test]
    fn namespaces_must_be_dns1123_labels() {
        assert_eq!(
            parse_namespaces("a,b-c, d1"),
            Ok(vec!["a".into(), "b-c".into(), "d1".into()])
        );
        assert_eq!(parse_namespaces(""), Ok(vec![]));
        for bad in [
            "Kube-System",
            "-a",
            "a-",
            "a.b",
            "a_b",
            &"a".repeat(64),
            "ns\"x",
        ] {
            assert!(parse_namespaces(bad).is_err(), "{bad:?}");
        }
    }
}
