//! `verify-pods check`: run the check and print its verdict.

use crate::flags::{
    excluded_namespaces, knob, only_namespaces, owner_kinds, selection, selector_warning, source,
    workloads, CheckArgs, Format,
};
use crate::output::{
    self, append_step_summary, print_lines, raw_lines, render_result, stdout_closed, Colour,
};
use crate::results::{Ended, Results};
use crate::same_file::{refuse_same_files, Named};
use checker::artifacts::ARTIFACTS;
use checker::check;
use checker::contract;
use checker::engine::to_json;
use checker::{exit, Engine, Programs, Verdict};
use clap::parser::ValueSource;
use clap::ArgMatches;
use jaq_json::Val;
use std::io::{self, Write};
use std::path::Path;

/// Why a check ended without a verdict: its exit code and the lines it
/// printed on stderr (the first one is the error object's `error` and what
/// the CTRF `other` test says).
struct Stopped {
    code: u8,
    lines: Vec<String>,
    /// Whether the results files may be written: not when two of them, or
    /// one and an input, are the same file.
    results: bool,
}

impl Stopped {
    fn new(code: u8, line: impl std::fmt::Display) -> Self {
        Self {
            code,
            lines: vec![line.to_string()],
            results: true,
        }
    }
}

fn refuse(said: contract::Said) -> Stopped {
    Stopped::new(said.exit_code(), said)
}

fn fail(e: impl std::fmt::Display) -> Stopped {
    Stopped::new(exit::CANNOT_OBSERVE, e)
}

/// `check`'s exit code. Every check that ends without a verdict says why
/// where a machine reads it too: stderr's line, then the error object on
/// stdout (`--format json`, `--format github` as one `::error`) and in the
/// results files asked for.
pub(crate) fn run_check(args: &CheckArgs, matches: &ArgMatches) -> u8 {
    // Before anything can stop the check: its start time is the results'.
    let results = Results::new(&args.ctrf, &args.junit, &args.json);
    let engine = Engine::lazy();
    match check(args, matches, &engine, &results) {
        Ok(code) => code,
        Err(stopped) => {
            for line in &stopped.lines {
                crate::fail_as(stopped.code, line);
            }
            let why = stopped.lines.first().map_or("", String::as_str);
            let error = error_object(stopped.code, why, false);
            print_error(&engine, &error, args.format);
            if stopped.results {
                results.write(&engine, Ended::Stopped(&error, why));
            }
            stopped.code
        }
    }
}

/// A usage error of `check`: clap refused the command line and printed
/// its words on stderr; `args` are its output and input flags alone (when
/// `whole`, else only its --format), which say where the error goes.
pub(crate) fn usage_error(error: &clap::Error, code: u8, args: &CheckArgs, whole: bool) -> u8 {
    // clap's first line, without its `error: `, as our lines are given
    // without the `verify-pods: error: ` prefix.
    let rendered = error.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    let why = first.strip_prefix("error: ").unwrap_or(first);
    let engine = Engine::lazy();
    let object = error_object(code, why, true);
    print_error(&engine, &object, args.format);
    // Only with every input known: the error is never written over one.
    if whole && outputs_and_inputs(args, None).is_ok() {
        let results = Results::new(&args.ctrf, &args.junit, &args.json);
        results.write(&engine, Ended::Stopped(&object, why));
    }
    code
}

/// What `--format json` prints when the check ends without a verdict:
/// `{"verdict":"error","exit_code":2,"usage":false,"error":"LINE"}`, the
/// line stderr got without its prefix; `usage` when clap refused the
/// command line (its words).
fn error_object(code: u8, line: &str, usage: bool) -> Val {
    // Written out, for its keys in this order (jaq keeps them).
    let line = serde_json::Value::from(line);
    let object =
        format!(r#"{{"verdict":"error","exit_code":{code},"usage":{usage},"error":{line}}}"#);
    serde_json::from_str(&object).expect("the error object is JSON")
}

/// The error object on stdout: the object itself for JSON, github.jq's one
/// `::error` for GitHub, nothing more for text (stderr said it). A stdout
/// that cannot take it changes nothing: the exit code is 2 already, and
/// stderr has the line.
fn print_error(engine: &Engine, error: &Val, format: Format) {
    let text = match format {
        Format::Text => return,
        Format::Json => to_json(error) + "\n",
        Format::Github => match raw_lines(engine, Programs::GITHUB, error, 0) {
            Ok(lines) => lines.concat(),
            Err(e) => {
                crate::fail(e);
                return;
            }
        },
    };
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Stdout written and flushed, or the check's one error line: a verdict
/// nobody could read is not a verdict (a closed pipe, `> /dev/full`).
fn printed(result: io::Result<()>) -> Result<(), Stopped> {
    result
        .and_then(|()| io::stdout().lock().flush())
        .map_err(|e| {
            refuse(contract::messages::CANNOT_PRINT.say(&[("why", &contract::io_words(&e))]))
        })
}

/// How the user named a file setting: its flag, or the environment
/// variable it came from.
fn named_by(matches: Option<&ArgMatches>, id: &str, flag: &str, env: &str) -> String {
    match matches.and_then(|m| m.value_source(id)) {
        Some(ValueSource::EnvVariable) => env.to_owned(),
        _ => flag.to_owned(),
    }
}

/// Refuse, before anything runs, two outputs naming the same file and an
/// output naming an input (`matches` names each by where it came from).
fn outputs_and_inputs(
    args: &CheckArgs,
    matches: Option<&ArgMatches>,
) -> Result<(), contract::Said> {
    let set = |path: &&std::ffi::OsString| !path.is_empty();
    let mut reports = Vec::new();
    if let Some(ctrf) = args.ctrf.as_ref().filter(set) {
        reports.push(Named::new(
            named_by(matches, "ctrf", "--ctrf", contract::CTRF.env),
            ctrf,
        ));
    }
    if let Some(junit) = args.junit.as_ref().filter(set) {
        reports.push(Named::new(
            named_by(matches, "junit", "--junit", contract::JUNIT.env),
            junit,
        ));
    }
    reports.extend(args.json.iter().map(|file| Named::new("--json", file)));
    if let Some(summary) = std::env::var_os(contract::STEP_SUMMARY_ENV).filter(|p| !p.is_empty()) {
        reports.push(Named::new(contract::STEP_SUMMARY_ENV, summary));
    }
    let mut inputs = Vec::new();
    if let Some(snapshot) = args.snapshot.as_ref().filter(|p| *p != Path::new("-")) {
        inputs.push(Named::new("--snapshot", snapshot));
        // A saved artifact folder given as the snapshot: its files.
        if snapshot.is_dir() {
            let saved = ARTIFACTS
                .iter()
                .map(|name| Named::new("--snapshot", snapshot.join(name)));
            inputs.extend(saved);
        }
    }
    if let Some(events) = &args.events {
        inputs.push(Named::new("--events", events));
    }
    if args.snapshot.is_some() && !matches!(args.workloads.as_str(), "true" | "false" | "") {
        let by = named_by(matches, "workloads", "--workloads", contract::WORKLOADS.env);
        inputs.push(Named::new(by, &args.workloads));
    }
    refuse_same_files(&reports, &inputs)?;
    // The save dir's files are outputs too, against the reports only: that
    // none is an input is the saver's own check (a warning, and the
    // artifacts are not saved).
    if let Some(dir) = args.save_dir.as_ref().filter(|d| !d.as_os_str().is_empty()) {
        let by = named_by(
            matches,
            "save_dir",
            "--save-dir",
            contract::ARTIFACT_DIR_ENV,
        );
        reports.extend(
            ARTIFACTS
                .iter()
                .map(|name| Named::new(by.clone(), dir.join(name))),
        );
    }
    refuse_same_files(&reports, &[])
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
    // `>&-`: no verdict can be read, and the check need not run.
    if stdout_closed() {
        let why = contract::words::STDOUT_CLOSED.text;
        return Err(refuse(
            contract::messages::CANNOT_PRINT.say(&[("why", &why)]),
        ));
    }
    match engine.start_line(0) {
        Ok((level, text)) => {
            let _ = match format {
                Format::Json => colour.print_line(&mut io::stderr().lock(), &level, &text),
                _ => colour.print_line(&mut io::stdout().lock(), &level, &text),
            };
        }
        Err(e) => return Err(fail(e)),
    }
    // A setting like the knobs (after the start line), checked before any
    // is used: nothing is read or written yet.
    if let Err(said) = outputs_and_inputs(args, Some(matches)) {
        // Writing the error into one of those files would be the harm.
        return Err(Stopped {
            results: false,
            ..refuse(said)
        });
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
    if let Err(said) = selection(engine, &excluded, args, matches) {
        return Err(refuse(said));
    }
    // A check not made is said, never silent.
    if let Some(said) = selector_warning(args) {
        eprintln!("{}{said}", contract::CHECKER_PREFIX.warning);
    }
    let settings = check::Settings {
        workloads,
        excluded,
        // An empty KWOK_VERIFY_PODS_ARTIFACT_DIR means unset, as in the bash.
        save_dir: args
            .save_dir
            .clone()
            .filter(|dir| !dir.as_os_str().is_empty()),
    };
    let mut programs = settings.programs(&source);
    programs.extend(output::programs(format));
    programs.extend(results.programs());
    engine.warm(&programs);
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
    let lines = match render_result(
        engine,
        &outcome.result,
        args.format,
        list_limit,
        &settings.excluded,
    ) {
        Ok(lines) => lines,
        Err(e) => return Err(fail(e)),
    };
    printed(progress_written.and_then(|()| print_lines(&lines, colour)))?;
    // The verdict is decided and printed: the results say it, whatever
    // happens next.
    results.write(engine, Ended::Decided(&outcome.result, list_limit));
    if let Err(e) = append_step_summary(engine, &outcome.result, list_limit) {
        return Ok(e);
    }
    let code = match outcome.decision.verdict {
        Verdict::Pass | Verdict::Empty => exit::PASS,
        Verdict::Fail => exit::VALIDATION_FAILED,
    };
    // Printed, flushed and written, and the process ends with this check:
    // its values (every pod read, the result) are left to the system,
    // which takes the memory back whole, rather than freed one allocation
    // at a time (3 % of the check's instructions at 50k pods).
    std::mem::forget(outcome);
    Ok(code)
}
