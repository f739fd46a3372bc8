//! The help texts: the examples and exit codes printed after each
//! subcommand's `--help`, and `--version`.

/// `--version`: the package version and the commit it was built from
/// (build.rs; "unknown" outside git).
pub(crate) const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("VERIFY_PODS_COMMIT"),
    ")"
);

pub(crate) const EXIT_CODES: &str = "\
Examples:
  verify-pods check                                  # the live cluster, through kubectl
  verify-pods check --snapshot pods.json --events events.json
  verify-pods triage job.log                         # was this red run the sampling race?
  verify-pods completions bash > /etc/bash_completion.d/verify-pods

Exit codes (check; see each subcommand's --help for its own):
  0  every pod is scheduled (pass), or no pod outside the excluded namespaces (empty)
  1  validation failed: pods are unscheduled, failed or not yet created, or
     a selection (-n, -l) selects no pod
  2  could not observe: kubectl missing, failing or hanging; unreadable or
     malformed snapshot; bad flags or environment";

pub(crate) const BASH_HELP: &str = "\
The bash function runs the same canonical programs with the real jq. It needs
bash >= 3.2, jq >= 1.6, timeout and kubectl, and prints through the host's
log_info/log_warn/log_error where it has them (docs/bash-function.md).

Examples:
  verify-pods bash render > verify_pods.sh            # the function, to source
  verify-pods bash render --wrapper > verify-pods.sh  # a runnable script
  verify-pods bash splice kwok/scripts/validate-scheduling.sh           # show the diff
  verify-pods bash splice kwok/scripts/validate-scheduling.sh --write   # apply it
  verify-pods bash splice kwok/scripts/validate-scheduling.sh --check   # exit 1 if it differs
  verify-pods bash splice kwok/scripts/validate-scheduling.sh --lib lib/verify-pods.sh --write";

pub(crate) const PROGRAMS_HELP: &str = "\
Examples:
  verify-pods programs                       # each program, its jq options and its input
  verify-pods programs report > report.jq
  kubectl get pods -A -o json | jq -c --slurp --arg excluded_namespaces kube-system --arg excluded_owner_kinds Job \
      --arg namespaces '' --arg selector '' --arg workloads false -f report.jq

Exit codes:
  0  printed    2  no such program";

pub(crate) const TRIAGE_ABOUT: &str = "\
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

pub(crate) const TRIAGE_HELP: &str = "\
Examples:
  gh run view 123456 --log-failed > job.log && verify-pods triage job.log
  verify-pods triage --format json logs/*.txt \\
    | jq -r '.logs[] | select(.verdict == \"race-signature\") | .log'
  curl -sL \"$LOG_URL\" | verify-pods triage -

Exit codes:
  0  no log shows the race signature (real-failure, pass or no-status-line)
  1  at least one log shows the race signature
  2  a log could not be read (missing, a directory, read error), or bad flags";

pub(crate) const COMPLETIONS_HELP: &str = "\
Examples:
  verify-pods completions bash > /etc/bash_completion.d/verify-pods
  verify-pods completions zsh > \"${fpath[1]}/_verify-pods\"
  verify-pods completions fish > ~/.config/fish/completions/verify-pods.fish

Exit codes:
  0  printed    2  unknown shell";

pub(crate) const MAN_HELP: &str = "\
Examples:
  verify-pods man /usr/local/share/man/man1 && man verify-pods-check

Exit codes:
  0  written    2  the directory cannot be written";

pub(crate) const CHECK_HELP: &str = "\
Examples:
  verify-pods check                                  # live, settle up to 60s
  verify-pods check --snapshot pods.json --events events.json
  kubectl get pods -A -o json | verify-pods check --snapshot - --format json
  verify-pods check --save-dir artifacts/ --deadline 120
  verify-pods check --format github                  # in a GitHub Actions step

GitHub Actions: `--format github` prints the text lines, then workflow commands
from github.jq. On a failure, `::error title=...::...` lines: one for the verdict,
one for the pods not yet created, one per group of unscheduled or failed pods
(per pod with --list-limit 0); GitHub shows 10 errors a step, so the groups
beyond are left out and a `::warning` says how many. When no pod is found, one
`::warning`.

No verdict (exit 2): one line on stderr says why. `--format json` prints the
error object instead of the result,
  {\"verdict\":\"error\",\"exit_code\":2,\"usage\":false,\"error\":\"LINE\"}
LINE being that line without `verify-pods: error: ` (`usage` true: the command
line was refused, LINE the parser's first line without `error: `); `--format
github` prints one `::error` with LINE; --json, --ctrf and --junit record it.
A stdout closed, full or whose reader left is exit 2 too: no verdict was read.
Two outputs naming one file, or an output naming an input, are refused before
the check runs.

Whenever GITHUB_STEP_SUMMARY names a file (any --format, like the generated
bash), the Markdown of summary.jq (counts, the unscheduled pods, their events,
the failed pods) is appended to it; an empty GITHUB_STEP_SUMMARY counts as unset.

Exit codes:
  0  pass or empty    1  validation failed    2  could not observe / bad input";
