//! `verify-pods`: the command-line face of the checker, also run by kubectl
//! as the plugin `kubectl verify-pods`. The two binaries of this package
//! (src/main.rs, src/bin/kubectl-verify_pods.rs) only call [`main`].
// No unsafe code, but for one module that allows it: the probe of stdout
// before the Rust runtime starts (stdout_at_start.rs, where its safety
// argument is written down). `deny` rather than `forbid`, which no module
// could allow.
#![deny(unsafe_code)]

mod check;
mod completions;
mod flags;
mod output;
mod results;
mod same_file;
mod stdout_at_start;
mod triage;

use checker::contract;
use checker::{exit, Programs};
use clap::{CommandFactory, FromArgMatches};
use flags::{BashCommand, Cli, Command, BASH_TOOL};
use scriptgen::commands as bash;
use std::io::{self, Write};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How the program was started, for its usage lines: `verify-pods`, or
/// `kubectl verify-pods` when kubectl runs it as a plugin.
#[derive(Clone, Copy)]
pub enum Invocation {
    /// `verify-pods …`
    Direct,
    /// `kubectl verify-pods …` (the binary kubectl-verify_pods)
    KubectlPlugin,
}

/// The whole program; `invocation` only changes how usage lines name it.
pub fn main(invocation: Invocation) -> ExitCode {
    let command = match invocation {
        Invocation::Direct => Cli::command(),
        Invocation::KubectlPlugin => Cli::command().bin_name("kubectl verify-pods"),
    };
    let matches = match command.clone().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => return ExitCode::from(usage_error(command, &error)),
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let code = match cli.command {
        Command::Check(args) => {
            let check = matches
                .subcommand_matches("check")
                .expect("the check subcommand");
            check::run_check(&args, check)
        }
        Command::Programs { name } => print_programs(name.as_deref()),
        Command::Triage(args) => triage::run_triage(&args),
        Command::Bash(BashCommand::Render(args)) => bash::render(BASH_TOOL, &args),
        Command::Bash(BashCommand::Splice(args)) => bash::splice(BASH_TOOL, &args),
        Command::Completions { shell } => completions::print_completions(shell),
        Command::Man { dir } => completions::write_man_pages(&dir),
    };
    ExitCode::from(code)
}

/// clap refused the command line (or was asked for help or the version):
/// its words on stderr (stdout for help), its exit code. For `check`, the
/// error object and the results files go where the command line's output
/// flags say, read from it as clap would ([`refused_check`]).
fn usage_error(command: clap::Command, error: &clap::Error) -> u8 {
    let _ = error.print();
    let code = u8::try_from(error.exit_code()).unwrap_or(exit::CANNOT_OBSERVE);
    if !error.use_stderr() {
        // --help, --version: not an error.
        return code;
    }
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match refused_check(&command, &argv) {
        Some((args, whole)) => check::usage_error(error, code, &args, whole),
        None => code,
    }
}

/// The flags of a refused `check` command line that say where its error
/// goes (its outputs) and what must not be written over (its inputs).
const ERROR_FLAGS: [&str; 8] = [
    "--format",
    "--json",
    "--ctrf",
    "--junit",
    "--save-dir",
    "--snapshot",
    "--events",
    "--workloads",
];

/// What clap makes of only the [`ERROR_FLAGS`] of a refused `check`
/// command line (`--flag VALUE` or `--flag=VALUE`), and whether all of
/// them were taken; else only its `--format`; none for another command.
fn refused_check(
    command: &clap::Command,
    argv: &[std::ffi::OsString],
) -> Option<(flags::CheckArgs, bool)> {
    if argv.get(1).is_none_or(|word| word != "check") {
        return None;
    }
    let mut found: Vec<(String, std::ffi::OsString)> = Vec::new();
    let mut words = argv[2..].iter();
    while let Some(word) = words.next() {
        let text = word.to_string_lossy();
        if let Some((flag, value)) = text.split_once('=') {
            if ERROR_FLAGS.contains(&flag) {
                found.push((flag.to_owned(), value.into()));
            }
        } else if ERROR_FLAGS.contains(&text.as_ref()) {
            // As clap reads it: a word that starts with `-` (but `-`, stdin)
            // is the next flag, not this one's value.
            let next = words.as_slice().first();
            let value = next.filter(|v| *v == "-" || !v.to_string_lossy().starts_with('-'));
            if let Some(value) = value {
                found.push((text.into_owned(), value.clone()));
                words.next();
            }
        }
    }
    let parse = |pairs: &[(String, std::ffi::OsString)]| {
        let mut line = vec![argv[0].clone(), "check".into()];
        for (flag, value) in pairs {
            line.push(format!("{flag}=").into());
            line.last_mut().expect("pushed").push(value);
        }
        let matches = command.clone().try_get_matches_from(line).ok()?;
        match Cli::from_arg_matches(&matches).ok()?.command {
            Command::Check(args) => Some(*args),
            _ => None,
        }
    };
    if let Some(args) = parse(&found) {
        return Some((args, true));
    }
    found.retain(|(flag, _)| flag == "--format");
    parse(&found).map(|args| (args, false))
}

pub(crate) fn fail(message: impl std::fmt::Display) -> u8 {
    fail_as(exit::CANNOT_OBSERVE, message)
}

/// One line on stderr, with the checker's prefix from the contract
/// (checker/programs/contract.json); `code` is the exit code.
pub(crate) fn fail_as(code: u8, message: impl std::fmt::Display) -> u8 {
    eprintln!("{}{message}", contract::CHECKER_PREFIX.error);
    code
}

/// A message of the contract: its words and its exit code.
pub(crate) fn refuse(said: contract::Said) -> u8 {
    fail_as(said.exit_code(), said)
}

/// The exit code once stdout has been written: `code` when it was, and when
/// the reader went away (`verify-pods … | head` closes the pipe early, and
/// that is not a failure of ours); 2 with one line for any other error
/// (`> /dev/full`): a verdict nobody could read is not a success.
pub(crate) fn written(result: io::Result<()>, code: u8) -> u8 {
    match result.and_then(|()| io::stdout().lock().flush()) {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(e) => refuse(contract::messages::CANNOT_PRINT.say(&[("why", &contract::io_words(&e))])),
    }
}

fn print_programs(name: Option<&str>) -> u8 {
    let mut out = io::stdout().lock();
    match name {
        None => {
            // Each program with the jq options that run it, from its
            // descriptor: `jq OPTIONS -f FILE < INPUT`.
            let listed = Programs::ALL.iter().try_for_each(|p| {
                let options = p.jq_options(|_, var| var.name().to_uppercase());
                let options = options.join(" ");
                writeln!(out, "{:<9} {:<12} < {}", p.name, p.file, p.input)?;
                writeln!(out, "{:<22} jq {options} -f {}", "", p.file)
            });
            written(listed, exit::PASS)
        }
        Some(name) => match Programs::by_name(name) {
            Some(p) => written(out.write_all(p.text.as_bytes()), exit::PASS),
            None => fail(format!(
                "no canonical program {name:?}; `verify-pods programs` lists them"
            )),
        },
    }
}
