//! `verify-pods`: the command-line face of the checker.

use checker::check::{self, Source};
use checker::options::{self, DEADLINE_ENV, INTERVAL_ENV};
use checker::{exit, Engine, Programs, Verdict};
use clap::{Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXIT_CODES: &str = "\
Exit codes:
  0  every pod is scheduled (pass), or no pod outside the excluded namespaces (empty)
  1  validation failed: pods are unscheduled or failed
  2  could not observe: kubectl missing, failing or hanging; unreadable or
     malformed snapshot; bad flags or environment";

#[derive(Parser)]
#[command(
    name = "verify-pods",
    version,
    about = "Decide whether every pod got scheduled, from ONE snapshot of the cluster",
    long_about = "Decide whether every pod got scheduled, from ONE snapshot of the cluster.\n\n\
Every count, list and message comes from the canonical jq programs (see `verify-pods programs`), \
evaluated once per snapshot: the output can never mix two cluster states.",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a saved snapshot (--snapshot) or the live cluster (through kubectl).
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Print a canonical jq program (or list them), to run it with jq yourself.
    Programs {
        /// report, events, result, render or progress (with or without .jq).
        name: Option<String>,
    },
}

const CHECK_HELP: &str = "\
Examples:
  verify-pods check                                  # live, settle up to 60s
  verify-pods check --snapshot pods.json --events events.json
  kubectl get pods -A -o json | verify-pods check --snapshot - --format json
  verify-pods check --save-dir artifacts/ --deadline 120

Exit codes:
  0  pass or empty    1  validation failed    2  could not observe / bad input";

#[derive(clap::Args)]
struct CheckArgs {
    /// Saved `kubectl get pods -A -o json` to check instead of the cluster (`-` = stdin).
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// Saved `kubectl get events -A -o json` to explain unscheduled pods (offline mode).
    #[arg(long, value_name = "FILE", requires = "snapshot")]
    events: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Comma-separated namespaces to ignore, replacing the default list.
    #[arg(long, value_name = "NS,NS", default_value_t = default_excluded())]
    exclude_ns: String,
    /// Settle deadline in seconds: keep re-checking while pods are only unscheduled.
    #[arg(long, value_name = "SECONDS", env = DEADLINE_ENV, default_value_t = options::DEFAULT_DEADLINE.to_string())]
    deadline: String,
    /// Seconds between attempts while settling (at least 1).
    #[arg(long, value_name = "SECONDS", env = INTERVAL_ENV, default_value_t = options::DEFAULT_INTERVAL.to_string())]
    interval: String,
    /// On failure, save pods.json, events.json and report.json here.
    #[arg(long, value_name = "DIR", env = options::ARTIFACT_DIR_ENV)]
    save_dir: Option<PathBuf>,
    /// The kubectl binary.
    #[arg(long, value_name = "PATH", default_value = "kubectl")]
    kubectl: OsString,
    /// kubeconfig context to use.
    #[arg(long)]
    context: Option<String>,
    /// kubeconfig file to use.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Kill a kubectl call that runs longer than this many seconds.
    #[arg(long, value_name = "SECONDS", env = options::KUBECTL_TIMEOUT_ENV, default_value_t = options::DEFAULT_KUBECTL_TIMEOUT.to_string())]
    kubectl_timeout: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The lines of render.jq.
    Text,
    /// The result object of result.jq, compact, one line.
    Json,
}

fn default_excluded() -> String {
    Programs::default_excluded_namespaces().join(",")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => run_check(&args),
        Command::Programs { name } => print_programs(name.as_deref()),
    };
    ExitCode::from(code)
}

fn fail(message: impl std::fmt::Display) -> u8 {
    eprintln!("verify-pods: error: {message}");
    exit::CANNOT_OBSERVE
}

fn print_programs(name: Option<&str>) -> u8 {
    match name {
        None => {
            for p in Programs::ALL {
                let vars = p.vars.join(" ");
                println!("{:<10} {:<12} {}", p.name, p.file, vars);
            }
            exit::PASS
        }
        Some(name) => match Programs::by_name(name) {
            Some(p) => {
                print!("{}", p.text);
                exit::PASS
            }
            None => fail(format!(
                "no canonical program {name:?}; `verify-pods programs` lists them"
            )),
        },
    }
}

fn source(args: &CheckArgs) -> Result<Source, String> {
    if let Some(snapshot) = &args.snapshot {
        return Ok(Source::Offline {
            snapshot: snapshot.clone(),
            events: args.events.clone(),
        });
    }
    let deadline =
        options::parse_seconds("--deadline / KWOK_VERIFY_PODS_DEADLINE", &args.deadline)?;
    let interval =
        options::parse_interval("--interval / KWOK_VERIFY_PODS_INTERVAL", &args.interval)?;
    let timeout = options::parse_interval(
        "--kubectl-timeout / KWOK_VERIFY_PODS_KUBECTL_TIMEOUT",
        &args.kubectl_timeout,
    )?;
    let kubectl = checker::kubectl::Kubectl {
        program: args.kubectl.clone(),
        context: args.context.clone(),
        kubeconfig: args.kubeconfig.clone(),
        timeout: Duration::from_secs(timeout),
    };
    Ok(Source::Live {
        kubectl,
        deadline: Duration::from_secs(deadline),
        interval: Duration::from_secs(interval),
    })
}

fn run_check(args: &CheckArgs) -> u8 {
    let source = match source(args) {
        Ok(source) => source,
        Err(e) => return fail(e),
    };
    let excluded_namespaces = match options::parse_namespaces(&args.exclude_ns) {
        Ok(names) => names,
        Err(e) => return fail(e),
    };
    let engine = match Engine::new() {
        Ok(engine) => engine,
        Err(e) => return fail(e),
    };
    let settings = check::Settings {
        excluded_namespaces,
        save_dir: args.save_dir.clone(),
    };
    let colour = Colour::detect();
    let format = args.format;
    let mut progress = |level: &str, text: &str| match format {
        Format::Text => colour.print_line(&mut io::stdout().lock(), level, text),
        Format::Json => colour.print_line(&mut io::stderr().lock(), level, text),
    };
    let outcome = match check::run(&engine, &source, &settings, &mut progress) {
        Ok(outcome) => outcome,
        Err(e) => return fail(e),
    };
    for warning in &outcome.warnings {
        eprintln!("verify-pods: warning: {warning}");
    }
    match args.format {
        Format::Json => println!("{}", checker::engine::to_json(&outcome.result)),
        Format::Text => match engine.render(&outcome.result) {
            Ok(lines) => {
                let mut out = io::stdout().lock();
                for (level, text) in lines {
                    colour.print_line(&mut out, &level, &text);
                }
            }
            Err(e) => return fail(e),
        },
    }
    match outcome.report.verdict() {
        Verdict::Pass | Verdict::Empty => exit::PASS,
        Verdict::Fail => exit::VALIDATION_FAILED,
    }
}

/// Colour only on a terminal, and never with NO_COLOR (https://no-color.org).
#[derive(Clone, Copy)]
struct Colour(bool);

impl Colour {
    fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Colour(io::stdout().is_terminal() && !no_color)
    }

    fn print_line(self, out: &mut dyn Write, level: &str, text: &str) {
        let code = match level {
            "error" => "31",
            "warn" => "33",
            _ => "",
        };
        let _ = if self.0 && !code.is_empty() {
            writeln!(out, "\x1b[{code}m{text}\x1b[0m")
        } else {
            writeln!(out, "{text}")
        };
    }
}
