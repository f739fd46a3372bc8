//! `verify-pods triage`: run [`scan`](super::scan) on each log and print
//! the verdicts.

use crate::flags::{TriageArgs, TriageFormat};
use crate::output::Colour;
use crate::triage;
use crate::{fail, written};
use checker::contract;
use checker::exit;
use std::fs;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

pub(crate) fn run_triage(args: &TriageArgs) -> u8 {
    let excluded = match contract::parse_namespaces(&args.exclude_ns) {
        Ok(names) => names,
        Err(e) => return fail(e),
    };
    let stdin = [PathBuf::from("-")];
    let logs = if args.logs.is_empty() {
        &stdin[..]
    } else {
        &args.logs[..]
    };
    let colour = Colour::detect();
    let mut reports = Vec::new();
    let mut unreadable = false;
    let mut printed = Ok(());
    for log in logs {
        match triage_one(log, &excluded) {
            Ok(report) => {
                if args.format == TriageFormat::Text && printed.is_ok() {
                    printed = print_triage(&report, colour);
                }
                reports.push(report);
            }
            Err(e) => {
                eprintln!("{}{}: {e}", contract::CHECKER_PREFIX.error, log.display());
                unreadable = true;
            }
        }
    }
    let race = reports
        .iter()
        .any(|r| r.verdict == triage::Verdict::RaceSignature);
    if args.format == TriageFormat::Json {
        let doc = TriageDoc {
            race_signature: race,
            logs: &reports,
        };
        let json = serde_json::to_string(&doc).expect("a triage report serializes");
        printed = writeln!(io::stdout().lock(), "{json}");
    }
    let code = if unreadable {
        exit::CANNOT_OBSERVE
    } else if race {
        exit::VALIDATION_FAILED
    } else {
        exit::PASS
    };
    written(printed, code)
}

/// `--format json` of triage.
#[derive(serde::Serialize)]
struct TriageDoc<'a> {
    /// Whether any log shows the race signature (exit code 1).
    race_signature: bool,
    logs: &'a [triage::LogReport],
}

fn triage_one(log: &Path, excluded: &[String]) -> io::Result<triage::LogReport> {
    if log == Path::new("-") {
        return triage::scan(io::stdin().lock(), "<stdin>", excluded);
    }
    let name = log.display().to_string();
    if fs::metadata(log)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory, not a log",
        ));
    }
    let reader: Box<dyn BufRead> =
        Box::new(io::BufReader::with_capacity(1 << 16, fs::File::open(log)?));
    triage::scan(reader, &name, excluded)
}

fn print_triage(report: &triage::LogReport, colour: Colour) -> io::Result<()> {
    let level = match report.verdict {
        triage::Verdict::RaceSignature => "error",
        triage::Verdict::RealFailure => "warn",
        triage::Verdict::Pass | triage::Verdict::NoStatusLine => "info",
    };
    let mut out = io::stdout().lock();
    colour.print_line(
        &mut out,
        level,
        &format!("{}: {}", report.log, report.verdict.as_str()),
    )?;
    for reason in &report.reasons {
        writeln!(out, "  {reason}")?;
    }
    Ok(())
}
