//! `verify-pods`: the command-line face of the checker, also run by kubectl
//! as the plugin `kubectl verify-pods`. The two binaries of this package
//! (src/main.rs, src/bin/kubectl-verify_pods.rs) only call [`main`].
#![forbid(unsafe_code)]

mod check;
mod completions;
mod flags;
mod output;
mod results;
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
    let matches = command.get_matches();
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
