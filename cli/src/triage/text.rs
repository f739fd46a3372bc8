//! What a CI log line looks like around its message: ANSI colour codes,
//! GitHub Actions timestamps, `[INFO]`-style prefixes; and the kinds of lines
//! triage looks for besides the status line (kubectl event rows, "No
//! resources found", GitHub step markers).

use std::borrow::Cow;

/// The line without ANSI escape sequences (CSI such as colours, OSC such as
/// hyperlinks, and two-byte escapes) and without a trailing carriage return.
pub fn strip_ansi(line: &str) -> Cow<'_, str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if !line.contains('\x1b') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates, then one final byte @..~.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ST (ESC \).
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // nF escapes such as ESC ( B: intermediates, then one final byte.
            Some(c) if (' '..='/').contains(&c) => {
                for c in chars.by_ref() {
                    if ('0'..='~').contains(&c) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// The line without a leading GitHub Actions timestamp
/// (`2026-05-28T10:01:02.1234567Z `), as in downloaded job logs.
pub fn strip_timestamp(line: &str) -> &str {
    let (first, rest) = line.split_once(' ').unwrap_or((line, ""));
    if is_timestamp(first) {
        rest
    } else {
        line
    }
}

/// `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`.
fn is_timestamp(token: &str) -> bool {
    let b = token.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && (token.ends_with('Z') || token[19..].contains(['+', '-']))
}

/// The GitHub Actions step header (`##[group]Run …`): a failure block never
/// runs past it (timestamp already stripped).
pub fn is_step_marker(line: &str) -> bool {
    line.starts_with("##[group]Run ")
}

/// The message part of a line: without GitHub's `##[error]`-style markers,
/// bracketed prefixes (`[INFO]`, `[2026-05-28 10:01:02]`, `[verify-pods]`)
/// and `INFO:`-style level words (timestamp already stripped).
pub fn strip_prefixes(mut line: &str) -> &str {
    loop {
        line = line.trim_start();
        let rest = line
            .strip_prefix("##")
            .unwrap_or(line)
            .strip_prefix('[')
            .and_then(|inner| inner.split_once(']'))
            .filter(|(tag, _)| tag.len() <= 64)
            .map(|(_, rest)| rest)
            .or_else(|| strip_level_word(line));
        match rest {
            Some(rest) => line = rest,
            None => return line,
        }
    }
}

fn strip_level_word(line: &str) -> Option<&str> {
    const LEVELS: [&str; 7] = [
        "INFO", "WARN", "WARNING", "ERROR", "DEBUG", "NOTICE", "FATAL",
    ];
    let (word, rest) = line.split_once(':')?;
    LEVELS
        .iter()
        .any(|level| word.eq_ignore_ascii_case(level))
        .then_some(rest)
}

/// A row of `kubectl get events` (or `kubectl events`) with reason
/// FailedScheduling: `NAMESPACE LAST-SEEN TYPE REASON OBJECT MESSAGE…`, also
/// `-o wide` (same first columns) and without the NAMESPACE column (then the
/// namespace is unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRow<'a> {
    pub namespace: Option<&'a str>,
}

/// The event row in a message (prefixes stripped), if it is one.
pub fn event_row(message: &str) -> Option<EventRow<'_>> {
    let mut tokens = [""; 16];
    let mut count = 0;
    for (slot, token) in tokens.iter_mut().zip(message.split_whitespace()) {
        *slot = token;
        count += 1;
    }
    let tokens = &tokens[..count];
    let reason = tokens.iter().position(|t| *t == "FailedScheduling")?;
    let kind = tokens.get(reason.checked_sub(1)?)?;
    if *kind != "Warning" && *kind != "Normal" {
        return None;
    }
    let age_at = reason.checked_sub(2);
    let namespace = match age_at {
        Some(age) if age >= 1 && is_age(tokens[age]) && is_label(tokens[age - 1]) => {
            Some(tokens[age - 1])
        }
        _ => None,
    };
    Some(EventRow { namespace })
}

/// kubectl's LAST SEEN column: `45s`, `2m`, `3m2s`, `5d12h`, `<unknown>`.
fn is_age(token: &str) -> bool {
    if token == "<unknown>" || token == "<invalid>" {
        return true;
    }
    let mut digits = 0;
    for b in token.bytes() {
        match b {
            b'0'..=b'9' => digits += 1,
            b's' | b'm' | b'h' | b'd' | b'y' if digits > 0 => digits = 0,
            _ => return false,
        }
    }
    !token.is_empty() && digits == 0
}

fn is_label(token: &str) -> bool {
    checker::contract::parse_namespaces(token).is_ok_and(|names| names.len() == 1)
}

/// The header of an events table (`NAMESPACE LAST SEEN TYPE REASON OBJECT …`).
pub fn is_events_header(message: &str) -> bool {
    let has = |w: &str| message.split_whitespace().any(|t| t == w);
    has("REASON") && has("TYPE") && has("LAST")
}

/// A line that starts the events part of a failure block: an event row, an
/// events table header, or any line that speaks of events.
pub fn is_events_marker(message: &str) -> bool {
    event_row(message).is_some()
        || is_events_header(message)
        || contains_ignore_case(message, "event")
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// kubectl's answer for an empty listing ("No resources found" or
/// "No resources found in default namespace.").
pub fn is_no_resources(message: &str) -> bool {
    message.contains("No resources found")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_sequences_and_carriage_returns_go() {
        assert_eq!(strip_ansi("\x1b[0;32mPod\x1b[0m status\r"), "Pod status");
        assert_eq!(
            strip_ansi("a\x1b]8;;http://x\x07link\x1b]8;;\x1b\\b"),
            "alinkb"
        );
        assert_eq!(strip_ansi("a\x1b(Bb\x1b7c"), "abc");
        assert!(matches!(strip_ansi("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn github_timestamps_go_other_first_words_stay() {
        assert_eq!(
            strip_timestamp("2026-05-28T10:01:02.1234567Z hello"),
            "hello"
        );
        assert_eq!(strip_timestamp("2026-05-28T10:01:02Z hello"), "hello");
        assert_eq!(strip_timestamp("2026-05-28T10:01:02+02:00 hello"), "hello");
        assert_eq!(strip_timestamp("2026-05-28 hello"), "2026-05-28 hello");
        assert_eq!(
            strip_timestamp("kube-system 2m Warning"),
            "kube-system 2m Warning"
        );
    }

    #[test]
    fn prefixes_go() {
        assert_eq!(strip_prefixes("[INFO] x"), "x");
        assert_eq!(strip_prefixes("##[error]x"), "x");
        assert_eq!(strip_prefixes("  [2026-05-28 10:01:02] [WARN] y z"), "y z");
        assert_eq!(strip_prefixes("ERROR: kube-system 2m"), "kube-system 2m");
        assert_eq!(strip_prefixes("Errors: 3"), "Errors: 3");
        assert_eq!(strip_prefixes("[unclosed x"), "[unclosed x");
    }

    #[test]
    fn event_rows_name_their_namespace() {
        let default = "kube-system   2m   Warning   FailedScheduling   pod/coredns-x   0/3 nodes are available";
        assert_eq!(event_row(default).unwrap().namespace, Some("kube-system"));
        let wide = "default 5s Warning FailedScheduling pod/web-1 <none> default-scheduler 0/3 nodes 10m 4 web-1.17a";
        assert_eq!(event_row(wide).unwrap().namespace, Some("default"));
        let unknown_age = "kwok-system <unknown> Warning FailedScheduling pod/x m";
        assert_eq!(
            event_row(unknown_age).unwrap().namespace,
            Some("kwok-system")
        );
        let no_namespace = "3m2s Warning FailedScheduling pod/web-1 0/3 nodes";
        assert_eq!(event_row(no_namespace).unwrap().namespace, None);
        assert_eq!(event_row("FailedScheduling happened"), None);
        assert_eq!(event_row("kube-system 2m Warning BackOff pod/x"), None);
        assert_eq!(
            event_row("Kube_System 2m Warning FailedScheduling pod/x")
                .unwrap()
                .namespace,
            None
        );
    }

    #[test]
    fn ages_are_kubectl_durations() {
        for age in ["45s", "2m", "3m2s", "5d12h", "2y", "<unknown>"] {
            assert!(is_age(age), "{age}");
        }
        for not in ["", "m", "2", "2x", "s2", "kube-system"] {
            assert!(!is_age(not), "{not}");
        }
    }

    #[test]
    fn markers() {
        assert!(is_events_header(
            "NAMESPACE   LAST SEEN   TYPE   REASON   OBJECT   MESSAGE"
        ));
        assert!(is_events_marker("FailedScheduling events (unfiltered):"));
        assert!(is_events_marker("EVENTS"));
        assert!(!is_events_marker("Unscheduled pods:"));
        assert!(is_no_resources("No resources found in default namespace."));
        assert!(is_step_marker("##[group]Run make test"));
        assert!(!is_step_marker("##[group]Events"));
    }
}
