//! `verify-pods check`: run the check and print its verdict.

use crate::flags::{knob, owner_kinds, source, workloads, CheckArgs, Format};
use crate::output::{append_step_summary, print_lines, render_result, Colour};
use crate::{fail, fail_as, refuse, written};
use checker::check;
use checker::contract;
use checker::{exit, Engine, Verdict};
use clap::ArgMatches;
use std::io;

pub(crate) fn run_check(args: &CheckArgs, matches: &ArgMatches) -> u8 {
    let engine = match Engine::new() {
        Ok(engine) => engine,
        Err(e) => return fail(e),
    };
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
        Err(e) => return fail(e),
    }
    let source = match source(args, matches) {
        Ok(source) => source,
        Err(said) => return refuse(said),
    };
    let workloads = match workloads(&args.workloads, &source, matches) {
        Ok(workloads) => workloads,
        Err(said) => return refuse(said),
    };
    let list_limit = match knob(&contract::LIST_LIMIT, &args.list_limit, matches) {
        Ok(limit) => limit,
        Err(said) => return refuse(said),
    };
    let excluded_namespaces = match contract::parse_namespaces(&args.exclude_ns) {
        Ok(names) => names,
        Err(e) => return fail(e),
    };
    let owner_kinds = match owner_kinds(&args.exclude_owner_kinds, matches) {
        Ok(kinds) => kinds,
        Err(said) => return refuse(said),
    };
    // Before the first kubectl or artifact: a cancelled check cleans up.
    if let Err(e) = checker::cancel::install() {
        return fail(format!("cannot handle signals: {e}"));
    }
    let settings = check::Settings {
        workloads,
        excluded: checker::Excluded {
            namespaces: excluded_namespaces,
            owner_kinds,
        },
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
    let outcome = match check::run(&engine, &source, &settings, &mut progress, &mut notice) {
        Ok(outcome) => outcome,
        Err(e) => {
            let code = fail_as(e.exit_code(), &e);
            if let Some(line) = e.next_line() {
                eprintln!("{}{line}", contract::CHECKER_PREFIX.error);
            }
            return code;
        }
    };
    for warning in &outcome.warnings {
        eprintln!("{}{warning}", contract::CHECKER_PREFIX.warning);
    }
    let lines = match render_result(&engine, &outcome.result, args.format, list_limit) {
        Ok(lines) => lines,
        Err(e) => return fail(e),
    };
    let printed = progress_written.and_then(|()| print_lines(&lines, colour));
    if let Err(e) = append_step_summary(&engine, &outcome.result, list_limit) {
        return e;
    }
    let code = match outcome.decision.verdict {
        Verdict::Pass | Verdict::Empty => exit::PASS,
        Verdict::Fail => exit::VALIDATION_FAILED,
    };
    written(printed, code)
}
