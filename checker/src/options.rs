//! Validation of the knobs both drivers share: the settle deadline and
//! interval (flags or `KWOK_VERIFY_PODS_*`), and the excluded namespaces.

/// Environment variable for the settle deadline, in seconds.
pub const DEADLINE_ENV: &str = "KWOK_VERIFY_PODS_DEADLINE";
/// Environment variable for the settle interval, in seconds.
pub const INTERVAL_ENV: &str = "KWOK_VERIFY_PODS_INTERVAL";
/// Environment variable for the artifact directory.
pub const ARTIFACT_DIR_ENV: &str = "KWOK_VERIFY_PODS_ARTIFACT_DIR";
/// Environment variable for the per-call kubectl timeout, in seconds.
pub const KUBECTL_TIMEOUT_ENV: &str = "KWOK_VERIFY_PODS_KUBECTL_TIMEOUT";
/// Set by GitHub Actions: the file that receives the step summary. When it
/// names a file, both drivers append summary.jq's Markdown of the result.
pub const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";
/// Default per-call kubectl timeout, in seconds: one `get pods` of a
/// 150k-pod cluster takes about a minute.
pub const DEFAULT_KUBECTL_TIMEOUT: u64 = 120;
/// Default settle deadline, in seconds.
pub const DEFAULT_DEADLINE: u64 = 60;
/// Default settle interval, in seconds.
pub const DEFAULT_INTERVAL: u64 = 5;

/// A number of seconds that both drivers read: the checker from a flag or
/// the environment, the bash function from the environment. Both validate it
/// from this table (scriptgen renders it into the function) with the same
/// rules and the same words; a test runs one table of bad values through
/// both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    /// The checker's flag: `--deadline`.
    pub flag: &'static str,
    /// The environment variable: `KWOK_VERIFY_PODS_DEADLINE`.
    pub env: &'static str,
    /// The bash function's variable that holds the value: `deadline`.
    pub variable: &'static str,
    /// The value when neither is set.
    pub default: u64,
    /// The smallest value accepted.
    pub minimum: u64,
}

/// The settle deadline: keep re-checking while pods are only unscheduled.
pub const DEADLINE: Knob = Knob {
    flag: "--deadline",
    env: DEADLINE_ENV,
    variable: "deadline",
    default: DEFAULT_DEADLINE,
    minimum: 0,
};
/// Seconds between attempts; 0 would hammer the API server.
pub const INTERVAL: Knob = Knob {
    flag: "--interval",
    env: INTERVAL_ENV,
    variable: "interval",
    default: DEFAULT_INTERVAL,
    minimum: 1,
};
/// Kill a kubectl call after this many seconds; 0 would kill every call.
pub const KUBECTL_TIMEOUT: Knob = Knob {
    flag: "--kubectl-timeout",
    env: KUBECTL_TIMEOUT_ENV,
    variable: "kubectl_timeout",
    default: DEFAULT_KUBECTL_TIMEOUT,
    minimum: 1,
};
/// Every knob, in the order both drivers validate them.
pub const KNOBS: [Knob; 3] = [DEADLINE, INTERVAL, KUBECTL_TIMEOUT];

/// The most significant digits a number of seconds may have. bash
/// arithmetic is signed 64-bit: every 18-digit number fits, some 19-digit
/// ones do not. (Leading zeros do not count: `010` is ten.)
pub const MAX_DIGITS: usize = 18;

/// Parse a knob's text the way the bash function does: ASCII digits only,
/// base 10 (a leading zero does not mean octal), no sign, no spaces, at most
/// [`MAX_DIGITS`] significant digits, at least the knob's minimum. `named`
/// is how the error names where the text came from (the flag or the
/// environment variable).
pub fn parse_knob(knob: &Knob, named: &str, text: &str) -> Result<u64, String> {
    let shown = shown(text);
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{named} must be a non-negative integer number of seconds, got \"{shown}\""
        ));
    }
    let digits = text.trim_start_matches('0');
    if digits.len() > MAX_DIGITS {
        return Err(format!(
            "{named} is too large: more than {MAX_DIGITS} digits, got \"{shown}\""
        ));
    }
    let seconds = digits.parse::<u64>().unwrap_or(0);
    if seconds < knob.minimum {
        return Err(format!(
            "{named} must be at least {}s, got \"{shown}\"",
            knob.minimum
        ));
    }
    Ok(seconds)
}

/// A value as an error shows it, between double quotes: control characters
/// (a newline would break the one-line error) become `?`, as bash's
/// `${text//[[:cntrl:]]/?}` does.
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Parse `a,b,c` into namespace names; each must be a DNS-1123 label
/// (what Kubernetes allows as a namespace name). An empty list is allowed.
pub fn parse_namespaces(text: &str) -> Result<Vec<String>, String> {
    text.split(',')
        .map(str::trim)
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
    fn seconds_are_digits_only_base_10() {
        let parse = |text| parse_knob(&DEADLINE, "d", text);
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
    fn interval_is_at_least_one() {
        assert!(parse_knob(&INTERVAL, "i", "0").is_err());
        assert_eq!(parse_knob(&INTERVAL, "i", "1"), Ok(1));
    }

    #[test]
    fn errors_stay_on_one_line() {
        let error = parse_knob(&DEADLINE, "d", "1\n2\t").unwrap_err();
        assert_eq!(
            error,
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
