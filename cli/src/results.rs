//! `--ctrf FILE`, `--junit FILE` and `--json FILE`: the check as CI test
//! results, written by ctrf.jq (and junit.jq from its report) once a
//! verdict is decided, or with one `other` test when the check ended
//! without one (exit 2); and the result itself, as `--format json` prints
//! it (the error object on exit 2). A file that cannot be written is a
//! warning: the verdict's exit code stands.

use checker::contract::{self, messages};
use checker::engine::{number, to_json, to_raw};
use checker::programs::Program;
use checker::{Engine, Programs};
use jaq_json::Val;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the results go, and when the check began.
pub(crate) struct Results {
    ctrf: Option<PathBuf>,
    junit: Option<PathBuf>,
    json: Vec<PathBuf>,
    start_ms: u64,
}

/// How a check ended, for its results.
pub(crate) enum Ended<'a> {
    /// With a verdict: result.jq's result, and the list limit.
    Decided(&'a Val, u64),
    /// Without one (exit 2): the error object, and its line.
    Stopped(&'a Val, &'a str),
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// An empty path means unset, as in the bash.
fn path(value: &Option<OsString>) -> Option<PathBuf> {
    value.as_ref().filter(|p| !p.is_empty()).map(PathBuf::from)
}

/// `seconds` since the epoch as RFC 3339 in UTC (`2026-12-04T01:02:03Z`),
/// as `date -u +%Y-%m-%dT%H:%M:%SZ` prints it (Howard Hinnant's
/// civil_from_days).
pub(crate) fn rfc3339(seconds: u64) -> String {
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let rest = seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

impl Results {
    pub(crate) fn new(ctrf: &Option<OsString>, junit: &Option<OsString>, json: &[PathBuf]) -> Self {
        Self {
            ctrf: path(ctrf),
            junit: path(junit),
            json: json.to_vec(),
            start_ms: now_ms(),
        }
    }

    /// The programs that write the files asked for (a check that ends
    /// with a verdict runs them).
    pub(crate) fn programs(&self) -> Vec<Program> {
        let mut programs = Vec::new();
        // junit.jq reads ctrf.jq's report.
        if self.ctrf.is_some() || self.junit.is_some() {
            programs.push(Programs::CTRF);
        }
        if self.junit.is_some() {
            programs.push(Programs::JUNIT);
        }
        programs
    }

    /// Write the files asked for: the tests of a decided result, or one
    /// `other` test saying why the check stopped; the JSON of either.
    /// Warns, never fails.
    pub(crate) fn write(&self, engine: &Engine, ended: Ended) {
        let (json, result, why, list_limit) = match ended {
            Ended::Decided(result, list_limit) => (result, Some(result), "", list_limit),
            Ended::Stopped(error, why) => (error, None, why, 0),
        };
        for file in &self.json {
            warn_unless(write(file, to_json(json) + "\n"), file, "JSON");
        }
        if self.ctrf.is_none() && self.junit.is_none() {
            return;
        }
        let vars = vec![
            number(list_limit),
            Val::from(why.to_owned()),
            Val::from(checker::VERSION.to_owned()),
            Val::from(rfc3339(self.start_ms / 1000)),
            number(self.start_ms),
            number(now_ms().max(self.start_ms)),
        ];
        let input = result.cloned().unwrap_or(Val::Null);
        let report = engine
            .run(Programs::CTRF, input, vars)
            .map_err(|e| e.to_string())
            .and_then(|values| values.into_iter().next().ok_or_else(String::new));
        if let Some(file) = &self.ctrf {
            let written = report
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|report| write(file, to_json(report) + "\n"));
            warn_unless(written, file, "CTRF");
        }
        if let Some(file) = &self.junit {
            let written = report.and_then(|report| {
                let lines = engine
                    .run(Programs::JUNIT, report, vec![])
                    .map_err(|e| e.to_string())?;
                write(file, lines.iter().map(|v| to_raw(v) + "\n").collect())
            });
            warn_unless(written, file, "JUnit");
        }
    }
}

fn write(file: &Path, text: String) -> Result<(), String> {
    fs::write(file, text).map_err(|e| contract::io_words(&e))
}

fn warn_unless(written: Result<(), String>, file: &Path, format: &str) {
    if let Err(why) = written {
        let said = messages::RESULTS_NOT_WRITTEN.format(&[
            ("file", &file.display()),
            ("format", &format),
            ("why", &why),
        ]);
        eprintln!("{}{said}", contract::CHECKER_PREFIX.warning);
    }
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn rfc3339_is_dates_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_346_123), "2026-12-04T01:02:03Z");
    }
}
