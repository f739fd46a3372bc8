//! `scriptgen`: render the bash verify_pods() from the canonical programs,
//! keep generated/ current, splice the function into host scripts.
#![forbid(unsafe_code)]

use clap::{Args, Parser, Subcommand};
use scriptgen::render::{self, Fields};
use scriptgen::{diff, generated, splice};
use std::fs;
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

Exit codes:
  0  done / up to date    1  check: differs    2  error (nothing changed)";

#[derive(Parser)]
#[command(
    name = "scriptgen",
    version,
    about = "Render the bash verify_pods() from the canonical jq programs; regenerate, verify, splice",
    long_about = "Render the bash verify_pods() from the canonical jq programs of checker/programs/ \
(embedded byte for byte) and the checker's settings, through the askama templates of \
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

#[derive(Args)]
struct RenderArgs {
    /// Print the definition alone, as splice inserts it.
    #[arg(long, conflicts_with = "wrapper")]
    definition: bool,
    /// Print the runnable wrapper generated/verify-pods.sh instead.
    #[arg(long)]
    wrapper: bool,
}

const SPLICE_HELP: &str = "\
The definition runs from its `verify_pods() {` line at column 0 (also
`verify_pods () {`, `function verify_pods {`) to the first `}` at column 0
after it; here-documents and multi-line strings are skipped. Every other byte
of SCRIPT stays as it is, and splicing twice changes nothing. A missing,
duplicated or unterminated definition exits 2 and changes nothing.

Prints the unified diff on stdout (nothing when SCRIPT is current).";

#[derive(Args)]
struct SpliceArgs {
    /// The host script (e.g. kwok/scripts/validate-scheduling.sh).
    script: PathBuf,
    /// Apply the change in place.
    #[arg(long, conflicts_with = "check")]
    write: bool,
    /// Exit 1 when SCRIPT differs from the spliced result (changes nothing).
    #[arg(long)]
    check: bool,
}

const OK: u8 = 0;
const DIFFERS: u8 = 1;
const ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = cli.root.unwrap_or_else(generated::default_root);
    let code = match Fields::from_checker() {
        Err(e) => fail(e),
        Ok(fields) => match cli.command {
            Command::Render(args) => run_render(&fields, &args),
            Command::Write => run_write(&root, &fields),
            Command::Check => run_check(&root, &fields),
            Command::Splice(args) => run_splice(&fields, &args),
        },
    };
    ExitCode::from(code)
}

fn fail(message: impl std::fmt::Display) -> u8 {
    eprintln!("scriptgen: error: {message}");
    ERROR
}

fn print(text: &str) -> u8 {
    match io::stdout().lock().write_all(text.as_bytes()) {
        Ok(()) => OK,
        Err(e) => fail(format!("cannot write to stdout: {e}")),
    }
}

fn run_render(fields: &Fields, args: &RenderArgs) -> u8 {
    let rendered = if args.definition {
        render::definition(fields)
    } else if args.wrapper {
        render::wrapper(fields)
    } else {
        render::function_file(fields)
    };
    match rendered {
        Ok(text) => print(&text),
        Err(e) => fail(e),
    }
}

fn run_write(root: &Path, fields: &Fields) -> u8 {
    let files = match generated::files(fields) {
        Ok(files) => files,
        Err(e) => return fail(e),
    };
    match generated::write(root, &files) {
        Ok(written) if written.is_empty() => {
            eprintln!("scriptgen: {}/ is up to date", generated::DIR);
            OK
        }
        Ok(written) => {
            for path in written {
                eprintln!("scriptgen: wrote {path}");
            }
            OK
        }
        Err(e) => fail(format!("{}: {e}", root.join(generated::DIR).display())),
    }
}

fn run_check(root: &Path, fields: &Fields) -> u8 {
    let files = match generated::files(fields) {
        Ok(files) => files,
        Err(e) => return fail(e),
    };
    let stale = match generated::check(root, &files) {
        Ok(stale) => stale,
        Err(e) => return fail(e),
    };
    if stale.is_empty() {
        eprintln!("scriptgen: {}/ is up to date", generated::DIR);
        return OK;
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
    DIFFERS
}

fn run_splice(fields: &Fields, args: &SpliceArgs) -> u8 {
    let path = &args.script;
    let script = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let definition = match render::definition(fields) {
        Ok(text) => text,
        Err(e) => return fail(e),
    };
    let spliced = match splice::splice(&script, &definition) {
        Ok(text) => text,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let name = path.display().to_string();
    let patch = diff::unified(
        &script,
        &spliced,
        &format!("{name} (current)"),
        &format!("{name} (spliced)"),
    );
    if patch.is_empty() {
        eprintln!("scriptgen: {name}: verify_pods() is up to date");
        return OK;
    }
    let printed = print(&patch);
    if printed != OK {
        return printed;
    }
    if args.check {
        eprintln!(
            "scriptgen: {name}: verify_pods() differs: run `scriptgen splice {name} --write`"
        );
        return DIFFERS;
    }
    if args.write {
        if let Err(e) = fs::write(path, &spliced) {
            return fail(format!("{name}: cannot write: {e}"));
        }
        eprintln!("scriptgen: {name}: verify_pods() replaced");
    }
    OK
}
