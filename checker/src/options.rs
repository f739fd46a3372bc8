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

/// Parse a number of seconds the way the bash function does: ASCII digits
/// only, base 10 (a leading zero does not mean octal), no sign, no spaces.
pub fn parse_seconds(what: &str, text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what} must be a non-negative integer number of seconds, got {text:?}"
        ));
    }
    text.parse::<u64>()
        .map_err(|_| format!("{what} is too large: {text:?}"))
}

/// The settle interval: like [`parse_seconds`], and at least 1.
pub fn parse_interval(what: &str, text: &str) -> Result<u64, String> {
    match parse_seconds(what, text)? {
        0 => Err(format!("{what} must be at least 1 second, got {text:?}")),
        n => Ok(n),
    }
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
        assert_eq!(parse_seconds("d", "60"), Ok(60));
        assert_eq!(parse_seconds("d", "010"), Ok(10));
        assert_eq!(parse_seconds("d", "0"), Ok(0));
        for bad in ["", "-1", "+1", " 1", "1s", "0x10", "1.5", "٣"] {
            assert!(parse_seconds("d", bad).is_err(), "{bad:?}");
        }
        assert!(parse_seconds("d", "99999999999999999999999").is_err());
    }

    #[test]
    fn interval_is_at_least_one() {
        assert!(parse_interval("i", "0").is_err());
        assert_eq!(parse_interval("i", "1"), Ok(1));
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
