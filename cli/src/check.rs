//! `verify-pods check`: run the check and print its verdict.

use crate::flags::{
    excluded_namespaces, knob, only_namespaces, owner_kinds, selection, source, workloads,
    CheckArgs, Format,
};
use crate::output::{append_step_summary, print_lines, render_result, Colour};
use crate::results::Results;
use crate::{fail_as, written};
use checker::check;
use checker::contract;
use checker::{exit, Engine, Verdict};
use clap::ArgMatches;
use std::io;

/// Why a check ended without a verdict: its exit code and the lines it
/// printed on stderr (the first one is what the CTRF `other` test says).
struct Stopped {
    code: u8,
    lines: Vec<String>,
}

impl Stopped {
    fn new(code: u8, line: impl std::fmt::Display) -> Self {
        Self {
            code,
            lines: vec![line.to_string()],
        }
    }
}

fn refuse(said: contract::Said) -> Stopped {
    Stopped::new(said.exit_code(), said)
}

fn fail(e: impl std::fmt::Display) -> Stopped {
    Stopped::new(exit::CANNOT_OBSERVE, e)
}

pub(crate) fn run_check(args: &CheckArgs, matches: &ArgMatches) -> u8 {
    // Before anything can stop the check: its start time is the results'.
    let results = Results::new(&args.ctrf, &args.junit);
    let engine = Engine::lazy();
    match check(args, matches, &engine, &results) {
        Ok(code) => code,
        Err(stopped) => {
            for line in &stopped.lines {
                fail_as(stopped.code, line);
            }
            let why = stopped.lines.first().map_or("", String::as_str);
            results.write(&engine, None, why, 0);
            stopped.code
        }
    }
}

fn check(
    args: &CheckArgs,
    matches: &ArgMatches,
    engine: &Engine,
    results: &Results,
) -> Result<u8, Stopped> {
    // The start line (progress.jq before the first attempt), where the
    // progress lines go, before the first list and before the settings
    // are read: upstream prints it first whatever they hold, as the bash
    // function does.
    let colour = Colour::detect();
    let format = args.format;
    match engine.start_line(0) {
        Ok((level, text)) => {
            let _ = match format {
                Format::Json => colour.print_line(&mut io::stderr().lock(), &level, &text),
                _ => colour.print_line(&mut io::stdout().lock(), &level, &text),
            };
        }
        Err(e) => return Err(fail(e)),
    }
    let source = match source(args, matches) {
        Ok(source) => source,
        Err(said) => return Err(refuse(said)),
    };
    let workloads = match workloads(&args.workloads, &source, matches) {
        Ok(workloads) => workloads,
        Err(said) => return Err(refuse(said)),
    };
    let list_limit = match knob(&contract::LIST_LIMIT, &args.list_limit, matches) {
        Ok(limit) => limit,
        Err(said) => return Err(refuse(said)),
    };
    let owner_kinds = match owner_kinds(&args.exclude_owner_kinds, matches) {
        Ok(kinds) => kinds,
        Err(said) => return Err(refuse(said)),
    };
    // Before the first kubectl or artifact: a cancelled check cleans up.
    if let Err(e) = checker::cancel::install() {
        return Err(fail(format!("cannot handle signals: {e}")));
    }
    let excluded = checker::Excluded {
        namespaces: excluded_namespaces(args, matches),
        owner_kinds,
        only_namespaces: only_namespaces(args),
        selector: args.selector.clone(),
        // Set by the check, which knows whether it reads the workloads.
        workloads: true,
    };
    if let Err(said) = selection(engine, &excluded) {
        return Err(refuse(said));
    }
    engine.warm();
    let settings = check::Settings {
        workloads,
        excluded,
        // An empty KWOK_VERIFY_PODS_ARTIFACT_DIR means unset, as in the bash.
        save_dir: args
            .save_dir
            .clone()
            .filter(|dir| !dir.as_os_str().is_empty()),
    };
    // The first error writing a progress line to stdout, reported at the end.
    let mut progress_written = Ok(());
    let mut progress = |level: &str, text: &str| match format {
        Format::Text | Format::Github => {
            let line = colour.print_line(&mut io::stdout().lock(), level, text);
            if progress_written.is_ok() {
                progress_written = line;
            }
        }
        Format::Json => {
            let _ = colour.print_line(&mut io::stderr().lock(), level, text);
        }
    };
    let mut notice = |text: &str| eprintln!("{}{text}", contract::CHECKER_PREFIX.warning);
    let outcome = match check::run(engine, &source, &settings, &mut progress, &mut notice) {
        Ok(outcome) => outcome,
        Err(e) => {
            let mut stopped = Stopped::new(e.exit_code(), &e);
            stopped.lines.extend(e.next_line().map(str::to_owned));
            return Err(stopped);
        }
    };
    for warning in &outcome.warnings {
        eprintln!("{}{warning}", contract::CHECKER_PREFIX.warning);
    }
    // The verdict is decided: the results say it, whatever happens next.
    results.write(engine, Some(&outcome.result), "", list_limit);
    let lines = match render_result(engine, &outcome.result, args.format, list_limit) {
        Ok(lines) => lines,
        Err(e) => return Err(fail(e)),
    };
    let printed = progress_written.and_then(|()| print_lines(&lines, colour));
    if let Err(e) = append_step_summary(engine, &outcome.result, list_limit) {
        return Ok(e);
    }
    let code = match outcome.decision.verdict {
        Verdict::Pass | Verdict::Empty => exit::PASS,
        Verdict::Fail => exit::VALIDATION_FAILED,
    };
    Ok(written(printed, code))
}
