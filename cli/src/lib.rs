//! `verify-pods`: the command-line face of the checker, also run by kubectl
//! as the plugin `kubectl verify-pods`. The two binaries of this package
//! (src/main.rs, src/bin/kubectl-verify_pods.rs) only call [`main`].
#![forbid(unsafe_code)]

mod triage;

use checker::check::{self, Source};
use checker::contract::{self, Knob, DEADLINE_ENV, INTERVAL_ENV, STEP_SUMMARY_ENV};
use checker::engine::to_raw;
use checker::programs::Program;
use checker::{exit, Engine, Programs, Verdict};
use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use jaq_json::Val;
use scriptgen::commands::{self as bash, RenderArgs, SpliceArgs, SPLICE_HELP};
use std::ffi::OsString;
use std::fs;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `--version`: the package version and the commit it was built from
/// (build.rs; "unknown" outside git).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("VERIFY_PODS_COMMIT"),
    ")"
);

const EXIT_CODES: &str = "\
Examples:
  verify-pods check                                  # the live cluster, through kubectl
  verify-pods check --snapshot pods.json --events events.json
  verify-pods triage job.log                         # was this red run the sampling race?
  verify-pods completions bash > /etc/bash_completion.d/verify-pods

Exit codes (check; see each subcommand's --help for its own):
  0  every pod is scheduled (pass), or no pod outside the excluded namespaces (empty)
  1  validation failed: pods are unscheduled or failed
  2  could not observe: kubectl missing, failing or hanging; unreadable or
     malformed snapshot; bad flags or environment";

#[derive(Parser)]
#[command(
    name = "verify-pods",
    version = VERSION,
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
    // Boxed: its many knobs make it far larger than the other variants
    // (clippy's large_enum_variant).
    #[command(after_help = CHECK_HELP)]
    Check(Box<CheckArgs>),
    /// Print a canonical jq program (or list them), to run it with jq yourself.
    #[command(after_help = PROGRAMS_HELP)]
    Programs {
        /// A program's name (`report`) or file (`report.jq`); without one, list them all.
        name: Option<String>,
    },
    /// Read CI job logs and tell whether a red verify_pods was the sampling race or a real failure.
    #[command(after_help = TRIAGE_HELP, long_about = TRIAGE_ABOUT)]
    Triage(TriageArgs),
    /// Print the bash function verify_pods(), or splice it into a CI script.
    #[command(subcommand, after_help = BASH_HELP)]
    Bash(BashCommand),
    /// Print a shell completion script.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum BashCommand {
    /// Print the bash function verify_pods() (header + function) on stdout.
    Render(RenderArgs),
    /// Replace the verify_pods() definition in SCRIPT with the rendered one.
    #[command(after_help = SPLICE_HELP)]
    Splice(SpliceArgs),
}

const BASH_HELP: &str = "\
The bash function runs the same canonical programs with the real jq (see the
README: bash >= 3.2, jq >= 1.6, timeout, kubectl, log_info/log_warn/log_error).

Examples:
  verify-pods bash render > verify_pods.sh            # the function, to source
  verify-pods bash render --wrapper > verify-pods.sh  # a runnable script
  verify-pods bash splice kwok/scripts/validate-scheduling.sh           # show the diff
  verify-pods bash splice kwok/scripts/validate-scheduling.sh --write   # apply it
  verify-pods bash splice kwok/scripts/validate-scheduling.sh --check   # exit 1 if it differs
  verify-pods bash splice kwok/scripts/validate-scheduling.sh --lib lib/verify-pods.sh --write";

/// `verify-pods bash …` speaks as verify-pods.
const BASH_TOOL: bash::Tool = bash::Tool {
    name: "verify-pods",
    splice: scriptgen::render::SPLICE_COMMAND,
    written_by: concat!(
        "verify-pods ",
        env!("CARGO_PKG_VERSION"),
        " (commit ",
        env!("VERIFY_PODS_COMMIT"),
        ")"
    ),
};

const PROGRAMS_HELP: &str = "\
Examples:
  verify-pods programs                       # each program, its jq options and its input
  verify-pods programs report > report.jq
  kubectl get pods -A -o json | jq -c --slurp --arg excluded_namespaces kube-system -f report.jq

Exit codes:
  0  printed    2  no such program";

const TRIAGE_ABOUT: &str = "\
Read CI job logs and tell, with line numbers, whether a red verify_pods was the sampling race \
of the old function or a real failure.

Every `Pod status: T total, R running, P pending (U unscheduled), F failed` line is found \
(with or without `(attempts=N, waited=Ws)`, through ANSI colours, GitHub Actions timestamps \
and `[INFO]`-style prefixes) and classified:
  impossible     U > P, or R + P + F > T: no single cluster state has these counts
  contradicted   U > 0, then `No resources found` where the unscheduled pods are listed
  red herring    FailedScheduling event rows (`kubectl get events -A`, also -o wide) of an
                 excluded namespace (kube-system...) after it: not about the checked pods
The lines a status line speaks for (its failure block) run up to the next status line, the \
next GitHub step header (`##[group]Run ...`) or 1000 lines, whichever comes first; the \
unscheduled listing is the part of the block before the first line that speaks of events.

Verdict per log: race-signature (a status line is impossible or contradicted), real-failure \
(unscheduled or failed pods, coherent), pass, or no-status-line. Logs are streamed: any size.";

const TRIAGE_HELP: &str = "\
Examples:
  gh run view 123456 --log-failed > job.log && verify-pods triage job.log
  verify-pods triage --format json logs/*.txt \\
    | jq -r '.logs[] | select(.verdict == \"race-signature\") | .log'
  curl -sL \"$LOG_URL\" | verify-pods triage -

Exit codes:
  0  no log shows the race signature (real-failure, pass or no-status-line)
  1  at least one log shows the race signature
  2  a log could not be read (missing, a directory, read error), or bad flags";

const COMPLETIONS_HELP: &str = "\
Examples:
  verify-pods completions bash > /etc/bash_completion.d/verify-pods
  verify-pods completions zsh > \"${fpath[1]}/_verify-pods\"
  verify-pods completions fish > ~/.config/fish/completions/verify-pods.fish

Exit codes:
  0  printed    2  unknown shell";

const CHECK_HELP: &str = "\
Examples:
  verify-pods check                                  # live, settle up to 60s
  verify-pods check --snapshot pods.json --events events.json
  kubectl get pods -A -o json | verify-pods check --snapshot - --format json
  verify-pods check --save-dir artifacts/ --deadline 120
  verify-pods check --format github                  # in a GitHub Actions step

GitHub Actions: `--format github` prints the text lines, then workflow commands
(`::error title=...::...` per unscheduled or failed pod, `::warning` when no pod
is found) from github.jq. Whenever GITHUB_STEP_SUMMARY names a file (any
--format, like the generated bash), the Markdown of summary.jq (counts, the
unscheduled pods, their events, the failed pods) is appended to it; an empty
GITHUB_STEP_SUMMARY counts as unset.

Exit codes:
  0  pass or empty    1  validation failed    2  could not observe / bad input";

#[derive(clap::Args)]
struct CheckArgs {
    /// Saved pods to check instead of the cluster (`-` = stdin): one `kubectl get pods -A -o json`, or the raw pages `--save-dir` saves
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// Saved events to explain unscheduled pods (offline mode): one `kubectl get events -A -o json`, or raw pages
    #[arg(long, value_name = "FILE", requires = "snapshot")]
    events: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Comma-separated namespaces to ignore, replacing the default list.
    #[arg(long, value_name = "NS,NS", default_value_t = default_excluded())]
    exclude_ns: String,
    /// Comma-separated owner kinds whose pending pods do not count as unscheduled, exact match (empty = none).
    #[arg(long, value_name = "KIND,KIND", env = contract::EXCLUDE_OWNER_KINDS.env,
          default_value_t = Programs::default_excluded_owner_kinds().join(","))]
    exclude_owner_kinds: String,
    /// Settle deadline in seconds: keep re-checking while pods are only unscheduled.
    #[arg(long, value_name = "SECONDS", env = DEADLINE_ENV, default_value_t = contract::DEFAULT_DEADLINE.to_string())]
    deadline: String,
    /// A unix time by which the whole check ends (settling, kubectl calls, events); cut short by it, exit 2 (0 = unset).
    #[arg(long, value_name = "EPOCH", env = contract::DEADLINE_EPOCH.env, default_value_t = contract::DEADLINE_EPOCH.default.to_string())]
    deadline_epoch: String,
    /// Seconds between attempts while settling (at least 1).
    #[arg(long, value_name = "SECONDS", env = INTERVAL_ENV, default_value_t = contract::DEFAULT_INTERVAL.to_string())]
    interval: String,
    /// On failure, save pods.json, events.json and report.json here (empty = unset).
    // Parsed as any OsString: an empty KWOK_VERIFY_PODS_ARTIFACT_DIR means
    // unset, as in the bash, where PathBuf's parser would refuse it.
    #[arg(long, value_name = "DIR", env = contract::ARTIFACT_DIR_ENV,
          value_parser = OsStringValueParser::new().map(PathBuf::from))]
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
    #[arg(long, value_name = "SECONDS", env = contract::KUBECTL_TIMEOUT_ENV, default_value_t = contract::DEFAULT_KUBECTL_TIMEOUT.to_string())]
    kubectl_timeout: String,
    /// Objects per page of the raw pods and events lists (0 = one request).
    #[arg(long, value_name = "N", env = contract::CHUNK_SIZE_ENV, default_value_t = contract::CHUNK_SIZE.default.to_string())]
    chunk_size: String,
    /// List at most N groups of pods by cause, pods per group and nodes (0 = every pod and node).
    #[arg(long, value_name = "N", env = contract::LIST_LIMIT.env, default_value_t = contract::LIST_LIMIT.default.to_string())]
    list_limit: String,
    /// Settle on one list plus a watch stream (true), or list again every interval (false).
    #[arg(long, value_name = "BOOL", env = contract::WATCH.env, default_value = "true")]
    watch: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The lines of render.jq.
    Text,
    /// The result object of result.jq, compact, one line.
    Json,
    /// The lines of render.jq, then GitHub Actions workflow commands of github.jq.
    Github,
}

#[derive(clap::Args)]
struct TriageArgs {
    /// Job logs to read (`-` or none = stdin).
    #[arg(value_name = "LOG")]
    logs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TriageFormat::Text)]
    format: TriageFormat,
    /// Comma-separated namespaces whose events are red herrings, replacing the default list.
    #[arg(long, value_name = "NS,NS", default_value_t = default_excluded())]
    exclude_ns: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TriageFormat {
    /// The verdict of each log and its reasons, with line numbers.
    Text,
    /// {"race_signature": bool, "logs": [...]}, compact, one line.
    Json,
}

fn default_excluded() -> String {
    Programs::default_excluded_namespaces().join(",")
}

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
            run_check(&args, check)
        }
        Command::Programs { name } => print_programs(name.as_deref()),
        Command::Triage(args) => run_triage(&args),
        Command::Bash(BashCommand::Render(args)) => bash::render(BASH_TOOL, &args),
        Command::Bash(BashCommand::Splice(args)) => bash::splice(BASH_TOOL, &args),
        Command::Completions { shell } => print_completions(shell),
    };
    ExitCode::from(code)
}

fn fail(message: impl std::fmt::Display) -> u8 {
    fail_as(exit::CANNOT_OBSERVE, message)
}

/// One line on stderr, with the checker's prefix from the contract
/// (checker/programs/contract.json); `code` is the exit code.
fn fail_as(code: u8, message: impl std::fmt::Display) -> u8 {
    eprintln!("{}{message}", contract::CHECKER_PREFIX.error);
    code
}

/// A message of the contract: its words and its exit code.
fn refuse(said: contract::Said) -> u8 {
    fail_as(said.exit_code(), said)
}

/// The exit code once stdout has been written: `code` when it was, and when
/// the reader went away (`verify-pods … | head` closes the pipe early, and
/// that is not a failure of ours); 2 with one line for any other error
/// (`> /dev/full`): a verdict nobody could read is not a success.
fn written(result: io::Result<()>, code: u8) -> u8 {
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

/// A knob's seconds, its error naming where the bad text came from: the
/// flag, or the environment variable (worded as the bash function words it).
fn knob(knob: &Knob, text: &str, matches: &ArgMatches) -> Result<u64, contract::Said> {
    let id = knob.flag.trim_start_matches("--").replace('-', "_");
    let named = match matches.value_source(&id) {
        Some(ValueSource::EnvVariable) => knob.env,
        _ => knob.flag,
    };
    contract::parse_knob(knob, named, text)
}

/// Where the pods come from. Every knob is validated in every mode, even
/// those an offline check does not use: a typo never passes silently.
fn source(args: &CheckArgs, matches: &ArgMatches) -> Result<Source, contract::Said> {
    let deadline = knob(&contract::DEADLINE, &args.deadline, matches)?;
    let interval = knob(&contract::INTERVAL, &args.interval, matches)?;
    let timeout = knob(&contract::KUBECTL_TIMEOUT, &args.kubectl_timeout, matches)?;
    let chunk_size = knob(&contract::CHUNK_SIZE, &args.chunk_size, matches)?;
    let deadline_epoch = knob(&contract::DEADLINE_EPOCH, &args.deadline_epoch, matches)?;
    // At most 9 digits (the contract): it fits.
    let chunk_size = usize::try_from(chunk_size).unwrap_or(usize::MAX);
    let watch = watch_setting(&args.watch, matches)?;
    if let Some(snapshot) = &args.snapshot {
        return Ok(Source::Offline {
            snapshot: snapshot.clone(),
            events: args.events.clone(),
        });
    }
    let kubectl = checker::live::kubectl::Kubectl {
        program: args.kubectl.clone(),
        context: args.context.clone(),
        kubeconfig: args.kubeconfig.clone(),
        timeout: Duration::from_secs(timeout),
    };
    Ok(Source::Live {
        kubectl,
        deadline: Duration::from_secs(deadline),
        interval: Duration::from_secs(interval),
        chunk_size,
        watch,
        deadline_epoch,
    })
}

/// `--exclude-owner-kinds` / KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS, its error
/// naming where the bad text came from (as the bash function words it).
fn owner_kinds(text: &str, matches: &ArgMatches) -> Result<Vec<String>, contract::Said> {
    let setting = contract::EXCLUDE_OWNER_KINDS;
    let named = match matches.value_source("exclude_owner_kinds") {
        Some(ValueSource::EnvVariable) => setting.env,
        _ => setting.flag.unwrap_or(setting.env),
    };
    contract::parse_owner_kinds(named, text)
}

/// `--watch` / KWOK_VERIFY_PODS_WATCH: true or false (empty = unset, the
/// default, as for the other settings).
fn watch_setting(text: &str, matches: &ArgMatches) -> Result<bool, contract::Said> {
    match text {
        "true" | "" => Ok(true),
        "false" => Ok(false),
        _ => {
            let named = match matches.value_source("watch") {
                Some(ValueSource::EnvVariable) => contract::WATCH.env,
                _ => contract::WATCH.flag.unwrap_or("--watch"),
            };
            let value = text.escape_debug().to_string();
            Err(contract::messages::SETTING_NOT_A_BOOLEAN
                .say(&[("named", &named), ("value", &value)]))
        }
    }
}

fn run_check(args: &CheckArgs, matches: &ArgMatches) -> u8 {
    let source = match source(args, matches) {
        Ok(source) => source,
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
    let engine = match Engine::new() {
        Ok(engine) => engine,
        Err(e) => return fail(e),
    };
    // Before the first kubectl or artifact: a cancelled check cleans up.
    if let Err(e) = checker::cancel::install() {
        return fail(format!("cannot handle signals: {e}"));
    }
    let settings = check::Settings {
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
    let colour = Colour::detect();
    let format = args.format;
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
    let mut notice = |text: &str| eprintln!("verify-pods: warning: {text}");
    // The start line (progress.jq before the first attempt), where the
    // progress lines go, before the first list: as the bash function does.
    match engine.start_line(0) {
        Ok((level, text)) => progress(&level, &text),
        Err(e) => return fail(e),
    }
    let outcome = match check::run(&engine, &source, &settings, &mut progress, &mut notice) {
        Ok(outcome) => outcome,
        Err(e) => return fail_as(e.exit_code(), e),
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

/// What `check` prints: (level, text) lines, a level of `None` for text
/// printed as is (JSON, GitHub workflow commands).
type Lines = Vec<(Option<String>, String)>;

fn render_result(
    engine: &Engine,
    result: &Val,
    format: Format,
    list_limit: u64,
) -> Result<Lines, String> {
    if format == Format::Json {
        return Ok(vec![(None, checker::engine::to_json(result) + "\n")]);
    }
    let rendered = engine
        .render(result, list_limit)
        .map_err(|e| e.to_string())?;
    let mut lines: Lines = rendered
        .into_iter()
        .map(|(level, text)| (Some(level), text))
        .collect();
    if format == Format::Github {
        let commands = raw_lines(engine, Programs::GITHUB, result, list_limit)?;
        lines.extend(commands.into_iter().map(|line| (None, line)));
    }
    Ok(lines)
}

fn print_lines(lines: &Lines, colour: Colour) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for (level, text) in lines {
        match level {
            Some(level) => colour.print_line(&mut out, level, text)?,
            None => out.write_all(text.as_bytes())?,
        }
    }
    Ok(())
}

/// A program's outputs as `jq -r` prints them: each raw, newline-terminated
/// (github.jq, summary.jq: their one variable is the list limit).
fn raw_lines(
    engine: &Engine,
    program: Program,
    result: &Val,
    list_limit: u64,
) -> Result<Vec<String>, String> {
    let values = engine
        .run(
            program,
            result.clone(),
            vec![checker::engine::number(list_limit)],
        )
        .map_err(|e| e.to_string())?;
    Ok(values.iter().map(|v| to_raw(v) + "\n").collect())
}

/// Append summary.jq's Markdown to the file named by GITHUB_STEP_SUMMARY,
/// if any; the exit code of the error line printed otherwise.
fn append_step_summary(engine: &Engine, result: &Val, list_limit: u64) -> Result<(), u8> {
    let Some(path) = std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let markdown: String = raw_lines(engine, Programs::SUMMARY, result, list_limit)
        .map_err(fail)?
        .concat();
    let path = PathBuf::from(path);
    fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut file| file.write_all(markdown.as_bytes()))
        .map_err(|e| {
            refuse(contract::messages::STEP_SUMMARY.say(&[
                ("env", &STEP_SUMMARY_ENV),
                ("file", &path.display()),
                ("why", &contract::io_words(&e)),
            ]))
        })
}

fn print_completions(shell: clap_complete::Shell) -> u8 {
    let mut command = <Cli as clap::CommandFactory>::command();
    // Into a buffer first: clap_complete panics when its writer fails (e.g.
    // `| head`); a closed pipe is not our error to report.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, BIN_NAME, &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == clap_complete::Shell::Bash {
        script = fix_hyphenated_bash_states(&script);
    }
    written(io::stdout().lock().write_all(script.as_bytes()), exit::PASS)
}

const BIN_NAME: &str = "verify-pods";

/// clap_complete's bash script names the subcommand states of a hyphenated
/// binary two ways: the loop that reads the words arrives at
/// `verify__pods__subcmd__check`, the case arms say
/// `verify__subcmd__pods__subcmd__check`, so no option of any subcommand
/// ever completes (clap-rs/clap#6421, open). Spell the arms like the loop;
/// a no-op once clap_complete is fixed.
fn fix_hyphenated_bash_states(script: &str) -> String {
    let state = BIN_NAME.replace('-', "__");
    let misspelled = BIN_NAME.replace('-', "__subcmd__");
    script.replace(&misspelled, &state)
}

fn run_triage(args: &TriageArgs) -> u8 {
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

/// Colour only on a terminal, and never with NO_COLOR (https://no-color.org).
#[derive(Clone, Copy)]
struct Colour(bool);

impl Colour {
    fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Colour(io::stdout().is_terminal() && !no_color)
    }

    fn print_line(self, out: &mut dyn Write, level: &str, text: &str) -> io::Result<()> {
        let code = match level {
            "error" => "31",
            "warn" => "33",
            _ => "",
        };
        if self.0 && !code.is_empty() {
            writeln!(out, "\x1b[{code}m{text}\x1b[0m")
        } else {
            writeln!(out, "{text}")
        }
    }
}
