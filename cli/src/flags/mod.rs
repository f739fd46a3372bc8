//! The command line: clap's definitions of the subcommands and their flags
//! ([`help`] holds the texts after them), and where each knob's value came
//! from ([`knobs`]).

mod help;
mod knobs;

pub(crate) use knobs::{
    excluded_namespaces, knob, only_namespaces, owner_kinds, selection, selector_warning, source,
    workloads,
};

use checker::contract::{self, DEADLINE_ENV, INTERVAL_ENV};
use checker::Programs;
use clap::builder::{OsStringValueParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};
use help::{
    BASH_HELP, CHECK_HELP, COMPLETIONS_HELP, EXIT_CODES, MAN_HELP, PROGRAMS_HELP, TRIAGE_ABOUT,
    TRIAGE_HELP, VERSION,
};
use scriptgen::commands::{self as bash, RenderArgs, SpliceArgs, SPLICE_HELP};
use std::ffi::OsString;
use std::path::PathBuf;

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Write the manual pages (roff), one per command, into a directory.
    #[command(after_help = MAN_HELP)]
    Man {
        /// The directory to write verify-pods.1, verify-pods-check.1, … into.
        dir: PathBuf,
    },
}

#[derive(Subcommand)]
pub(crate) enum BashCommand {
    /// Print the bash function verify_pods() (header + function) on stdout.
    Render(RenderArgs),
    /// Replace the verify_pods() definition in SCRIPT with the rendered one.
    #[command(after_help = SPLICE_HELP)]
    Splice(SpliceArgs),
}

/// `verify-pods bash …` speaks as verify-pods.
pub(crate) const BASH_TOOL: bash::Tool = bash::Tool {
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

#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// Saved pods to check instead of the cluster (`-` = stdin): one `kubectl get pods -A -o json`, or the raw pages `--save-dir` saves; a directory `--save-dir` wrote: its pods.json, events.json and workloads.json
    #[arg(long, value_name = "FILE")]
    pub(crate) snapshot: Option<PathBuf>,
    /// Saved events to explain unscheduled pods (offline mode): one `kubectl get events -A -o json`, or raw pages
    #[arg(long, value_name = "FILE", requires = "snapshot")]
    pub(crate) events: Option<PathBuf>,
    /// Output format (a later --format wins over an earlier one).
    // Each output flag overrides itself, so that a wrapper's value (the
    // action's) can be followed by the user's, which wins: clap would
    // otherwise refuse the second one.
    #[arg(long, value_enum, default_value_t = Format::Text, overrides_with = "format")]
    pub(crate) format: Format,
    /// Comma-separated namespaces to ignore, replacing the default list; `+NS,NS` adds to it.
    #[arg(long, value_name = "NS,NS", env = contract::EXCLUDE_NAMESPACES.env, default_value_t = default_excluded())]
    pub(crate) exclude_ns: String,
    /// Only the pods of these namespaces count, as kubectl's -n (repeatable or comma-separated); checked even when excluded by default; none selected fails.
    #[arg(short = 'n', long = "namespace", value_name = "NS", env = contract::NAMESPACES.env,
          value_delimiter = ',', conflicts_with = "all_namespaces")]
    pub(crate) namespace: Vec<String>,
    /// Only the pods this label selector selects count, as kubectl's -l (key, !key, key=value, key!=value); none selected fails; pods not yet created are not checked.
    #[arg(short = 'l', long, value_name = "SELECTOR", env = contract::SELECTOR.env, default_value = "")]
    pub(crate) selector: String,
    /// Every namespace (the default), as kubectl's -A.
    #[arg(short = 'A', long)]
    pub(crate) all_namespaces: bool,
    /// Comma-separated owner kinds whose pending pods do not count as unscheduled, exact match (empty = the default; `none` = no kind).
    #[arg(long, value_name = "KIND,KIND", env = contract::EXCLUDE_OWNER_KINDS.env,
          default_value_t = Programs::default_excluded_owner_kinds().join(","))]
    pub(crate) exclude_owner_kinds: String,
    /// Settle deadline in seconds: keep re-checking while pods are only unscheduled.
    #[arg(long, value_name = "SECONDS", env = DEADLINE_ENV, default_value_t = contract::DEFAULT_DEADLINE.to_string())]
    pub(crate) deadline: String,
    /// A unix time by which the whole check ends (settling, kubectl calls, events); cut short by it, exit 2 (0 or an empty variable = unset).
    #[arg(long, value_name = "EPOCH", env = contract::DEADLINE_EPOCH.env, default_value_t = contract::DEADLINE_EPOCH.default.to_string())]
    pub(crate) deadline_epoch: String,
    /// Seconds between attempts while settling (at least 1).
    #[arg(long, value_name = "SECONDS", env = INTERVAL_ENV, default_value_t = contract::DEFAULT_INTERVAL.to_string())]
    pub(crate) interval: String,
    /// On failure, save pods.json, events.json (when collected whole), workloads.json (when read) and report.json here (empty = unset).
    // Parsed as any OsString: an empty KWOK_VERIFY_PODS_ARTIFACT_DIR means
    // unset, as in the bash, where PathBuf's parser would refuse it.
    #[arg(long, value_name = "DIR", env = contract::ARTIFACT_DIR_ENV, overrides_with = "save_dir",
          value_parser = OsStringValueParser::new().map(PathBuf::from))]
    pub(crate) save_dir: Option<PathBuf>,
    /// The kubectl binary.
    #[arg(long, value_name = "PATH", default_value = "kubectl")]
    pub(crate) kubectl: OsString,
    /// kubeconfig context to use.
    #[arg(long)]
    pub(crate) context: Option<String>,
    /// kubeconfig file to use.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Kill a kubectl call that runs longer than this many seconds.
    #[arg(long, value_name = "SECONDS", env = contract::KUBECTL_TIMEOUT_ENV, default_value_t = contract::DEFAULT_KUBECTL_TIMEOUT.to_string())]
    pub(crate) kubectl_timeout: String,
    /// Objects per page of the raw pods and events lists (0 = one request).
    #[arg(long, value_name = "N", env = contract::CHUNK_SIZE_ENV, default_value_t = contract::CHUNK_SIZE.default.to_string())]
    pub(crate) chunk_size: String,
    /// List at most N groups of pods by cause, pods per group and nodes (0 = every pod and node).
    #[arg(long, value_name = "N", env = contract::LIST_LIMIT.env, default_value_t = contract::LIST_LIMIT.default.to_string())]
    pub(crate) list_limit: String,
    /// Write the check as CI test results in CTRF here: a test per namespace (empty = unset).
    #[arg(long, value_name = "FILE", env = contract::CTRF.env, overrides_with = "ctrf")]
    pub(crate) ctrf: Option<OsString>,
    /// Write the same tests as JUnit XML here (empty = unset).
    #[arg(long, value_name = "FILE", env = contract::JUNIT.env, overrides_with = "junit")]
    pub(crate) junit: Option<OsString>,
    /// Write the result, as --format json prints it (the error object on exit 2), to this file too (repeatable).
    #[arg(long = "json", value_name = "FILE")]
    pub(crate) json: Vec<PathBuf>,
    /// Settle on one list plus a watch stream (true), or list again every interval (false).
    #[arg(long, value_name = "BOOL", env = contract::WATCH.env, default_value = "true")]
    pub(crate) watch: String,
    /// Wait for every pod the ReplicaSets, StatefulSets, DaemonSets and Deployments want (true), or not (false); offline, a FILE of them.
    #[arg(long, value_name = "true|false|FILE", env = contract::WORKLOADS.env, default_value = "true")]
    pub(crate) workloads: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// The lines of render.jq.
    Text,
    /// The result object of result.jq, compact, one line.
    Json,
    /// The lines of render.jq, then GitHub Actions workflow commands of github.jq.
    Github,
}

#[derive(clap::Args)]
pub(crate) struct TriageArgs {
    /// Job logs to read (`-` or none = stdin).
    #[arg(value_name = "LOG")]
    pub(crate) logs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TriageFormat::Text)]
    pub(crate) format: TriageFormat,
    /// Comma-separated namespaces whose events are red herrings, replacing the default list.
    #[arg(long, value_name = "NS,NS", default_value_t = default_excluded())]
    pub(crate) exclude_ns: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TriageFormat {
    /// The verdict of each log and its reasons, with line numbers.
    Text,
    /// {"race_signature": bool, "logs": [...]}, compact, one line.
    Json,
}

fn default_excluded() -> String {
    Programs::default_excluded_namespaces().join(",")
}
