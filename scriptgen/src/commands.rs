//! The user-facing commands, `render` and `splice`: one implementation for
//! `scriptgen render|splice` and `verify-pods bash render|splice`. Only the
//! name in the messages differs ([`Tool`]); flags, help, output and exit
//! codes are the same.

use crate::render::{self, Fields};
use crate::{diff, splice};
use clap::Args;
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

/// Exit codes of every scriptgen command.
pub mod exit {
    /// Done, or up to date.
    pub const OK: u8 = 0;
    /// `check` / `splice --check`: it differs.
    pub const DIFFERS: u8 = 1;
    /// An error; nothing was changed.
    pub const ERROR: u8 = 2;
}

/// Who runs the command: its messages name it.
#[derive(Clone, Copy)]
pub struct Tool {
    /// The prefix of every message, e.g. `scriptgen`.
    pub name: &'static str,
    /// The command line that splices, e.g. `scriptgen splice`.
    pub splice: &'static str,
}

impl Tool {
    /// Report an error on one line; the exit code of an error.
    pub fn fail(self, message: impl std::fmt::Display) -> u8 {
        eprintln!("{}: error: {message}", self.name);
        exit::ERROR
    }

    fn print(self, text: &str) -> u8 {
        match io::stdout().lock().write_all(text.as_bytes()) {
            Ok(()) => exit::OK,
            Err(e) => self.fail(format!("cannot write to stdout: {e}")),
        }
    }
}

#[derive(Args)]
pub struct RenderArgs {
    /// Print the definition alone, as splice inserts it.
    #[arg(long, conflicts_with = "wrapper")]
    pub definition: bool,
    /// Print the runnable wrapper generated/verify-pods.sh instead.
    #[arg(long)]
    pub wrapper: bool,
}

/// The `--help` text after the flags of splice.
pub const SPLICE_HELP: &str = "\
The definition runs from its `verify_pods() {` line at column 0 (also
`verify_pods () {`, `function verify_pods {`) to the first `}` at column 0
after it; here-documents and multi-line strings are skipped. Every other byte
of SCRIPT stays as it is, and splicing twice changes nothing. A missing,
duplicated or unterminated definition exits 2 and changes nothing.

Prints the unified diff on stdout (nothing when SCRIPT is current).

Exit codes:
  0  done / up to date    1  --check: differs    2  error (nothing changed)";

#[derive(Args)]
pub struct SpliceArgs {
    /// The host script (e.g. kwok/scripts/validate-scheduling.sh).
    pub script: PathBuf,
    /// Apply the change in place.
    #[arg(long, conflicts_with = "check")]
    pub write: bool,
    /// Exit 1 when SCRIPT differs from the spliced result (changes nothing).
    #[arg(long)]
    pub check: bool,
}

/// Print the function file, the definition alone or the wrapper.
pub fn render(tool: Tool, args: &RenderArgs) -> u8 {
    let rendered = Fields::from_checker().and_then(|fields| {
        if args.definition {
            render::definition(&fields)
        } else if args.wrapper {
            render::wrapper(&fields)
        } else {
            render::function_file(&fields)
        }
    });
    match rendered {
        Ok(text) => tool.print(&text),
        Err(e) => tool.fail(e),
    }
}

/// Print the diff that splicing the definition into the script makes;
/// apply it with `--write`, exit 1 when there is one with `--check`.
pub fn splice(tool: Tool, args: &SpliceArgs) -> u8 {
    let path = &args.script;
    let name = path.display().to_string();
    let script = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return tool.fail(format!("{name}: {e}")),
    };
    let definition = match Fields::from_checker().and_then(|f| render::definition(&f)) {
        Ok(text) => text,
        Err(e) => return tool.fail(e),
    };
    let spliced = match splice::splice(&script, &definition) {
        Ok(text) => text,
        Err(e) => return tool.fail(format!("{name}: {e}")),
    };
    let patch = diff::unified(
        &script,
        &spliced,
        &format!("{name} (current)"),
        &format!("{name} (spliced)"),
    );
    if patch.is_empty() {
        eprintln!("{}: {name}: verify_pods() is up to date", tool.name);
        return exit::OK;
    }
    let printed = tool.print(&patch);
    if printed != exit::OK {
        return printed;
    }
    if args.check {
        eprintln!(
            "{}: {name}: verify_pods() differs: run `{} {name} --write`",
            tool.name, tool.splice
        );
        return exit::DIFFERS;
    }
    if args.write {
        if let Err(e) = fs::write(path, &spliced) {
            return tool.fail(format!("{name}: cannot write: {e}"));
        }
        eprintln!("{}: {name}: verify_pods() replaced", tool.name);
    }
    exit::OK
}
