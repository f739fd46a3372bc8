//! `scriptgen`: render the bash verify_pods() from the canonical programs,
//! keep generated/ current, splice the function into host scripts.
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};
use scriptgen::commands::{self, RenderArgs, SpliceArgs, Tool, SPLICE_HELP};
use scriptgen::generated;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  scriptgen render > verify_pods.sh          # the function, to source or read
  scriptgen write                            # regenerate generated/ (make generate)
  scriptgen check                            # exit 1 with a diff when generated/ is stale
  scriptgen splice kwok/scripts/validate-scheduling.sh           # show the diff
  scriptgen splice kwok/scripts/validate-scheduling.sh --write   # apply it
  scriptgen splice kwok/scripts/validate-scheduling.sh --check   # exit 1 if it differs
  scriptgen splice kwok/scripts/validate-scheduling.sh --lib lib/verify-pods.sh --write

Exit codes:
  0  done / up to date    1  check: differs    2  error (nothing changed)";

#[derive(Parser)]
#[command(
    name = "scriptgen",
    version,
    about = "Render the bash verify_pods() from the canonical jq programs; regenerate, verify, splice",
    long_about = "Render the bash verify_pods() from the canonical jq programs of checker/programs/ \
(as written, comments and all) and the checker's settings, through the askama templates of \
scriptgen/templates/. Keeps generated/ current and splices the function into host scripts \
with a reviewable unified diff.",
    after_help = EXAMPLES
)]
struct Cli {
    /// Repository root holding generated/ (default: the one scriptgen was built from).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print generated/verify_pods.sh (header + function) on stdout.
    Render(RenderArgs),
    /// Regenerate generated/verify_pods.sh and generated/verify-pods.sh.
    Write,
    /// Exit 0 when generated/ is what would be rendered now, else 1 with a diff.
    Check,
    /// Replace the verify_pods() definition in SCRIPT with the rendered one.
    #[command(after_help = SPLICE_HELP)]
    Splice(SpliceArgs),
}

const TOOL: Tool = Tool {
    name: "scriptgen",
    splice: "scriptgen splice",
    written_by: concat!("scriptgen ", env!("CARGO_PKG_VERSION")),
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = cli.root.unwrap_or_else(generated::default_root);
    let code = match cli.command {
        Command::Render(args) => commands::render(TOOL, &args),
        Command::Splice(args) => commands::splice(TOOL, &args),
        Command::Write => run_write(&root),
        Command::Check => run_check(&root),
    };
    ExitCode::from(code)
}

fn fail(message: impl std::fmt::Display) -> u8 {
    TOOL.fail(message)
}

fn run_write(root: &Path) -> u8 {
    let files = match generated::files() {
        Ok(files) => files,
        Err(e) => return fail(e),
    };
    match generated::write(root, &files) {
        Ok(written) if written.is_empty() => {
            eprintln!("scriptgen: {}/ is up to date", generated::DIR);
            commands::exit::OK
        }
        Ok(written) => {
            for path in written {
                eprintln!("scriptgen: wrote {path}");
            }
            commands::exit::OK
        }
        Err(e) => fail(format!("{}: {e}", root.join(generated::DIR).display())),
    }
}

fn run_check(root: &Path) -> u8 {
    let files = match generated::files() {
        Ok(files) => files,
        Err(e) => return fail(e),
    };
    let stale = match generated::check(root, &files) {
        Ok(stale) => stale,
        Err(e) => return fail(e),
    };
    if stale.is_empty() {
        eprintln!("scriptgen: {}/ is up to date", generated::DIR);
        return commands::exit::OK;
    }
    let mut out = io::stdout().lock();
    for file in &stale {
        let _ = out.write_all(file.diff.as_bytes());
    }
    for file in &stale {
        eprintln!("scriptgen: {} {}", file.path, file.reason);
    }
    eprintln!(
        "scriptgen: {}/ is stale: run `make generate` (cargo run -p scriptgen -- write) and commit the result",
        generated::DIR
    );
    commands::exit::DIFFERS
}
