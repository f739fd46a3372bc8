//! The user-facing commands, `render` and `splice`: one implementation for
//! `scriptgen render|splice` and `verify-pods bash render|splice`. Only the
//! name in the messages differs ([`Tool`]); flags, help, output and exit
//! codes are the same.

use crate::render::{self, Feature, Fields, Library};
use crate::{diff, fit, splice};
use clap::Args;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

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
    /// Who writes a library file (`splice --lib`), as its stamp says:
    /// `verify-pods 0.2.0 (commit abc1234)`.
    pub written_by: &'static str,
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
    /// Print the runnable wrapper generated/verify-pods.sh instead (it has
    /// every feature).
    #[arg(long, conflicts_with = "with")]
    pub wrapper: bool,
    /// Add parts a host leaves out by default, comma-separated
    /// (summary: GitHub's step summary).
    #[arg(long, value_name = "FEATURES", value_delimiter = ',')]
    pub with: Vec<Feature>,
}

/// The `--help` text after the flags of splice.
pub const SPLICE_HELP: &str = "\
The definition runs from its `verify_pods() {` line at column 0 (also
`verify_pods () {`, `function verify_pods {`) to the first `}` at column 0
after it; here-documents and multi-line strings are skipped. Every other byte
of SCRIPT stays as it is, and splicing twice changes nothing. A missing,
duplicated or unterminated definition exits 2 and changes nothing.

Prints the unified diff on stdout (nothing when SCRIPT is current).

With --lib PATH (relative to SCRIPT's directory, e.g. lib/verify-pods.sh):
the function goes to that file, in SCRIPT's indentation, and the definition
in SCRIPT, with the comment block above it, becomes one line that sources
it, written the way SCRIPT sources its other libraries (e.g. `source
\"${SCRIPT_DIR}/lib/verify-pods.sh\"`). The file is the same whichever tool
writes it: its header records the features it was rendered with, which
--check and --write use when --with is not given, and carries SCRIPT's
license header (or --header FILE's). It names the verify-pods that wrote
it; --check compares everything but that line, so a newer verify-pods that
renders the same function finds it current (and says who wrote it), and
--write leaves such a file alone.

Without --with, the function gives upstream's verdicts and exit codes;
exact-owner-kinds, workloads and exit-2 change them, each when asked for.

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
    /// Put the function in this file, relative to SCRIPT's directory
    /// (e.g. lib/verify-pods.sh), and source it from SCRIPT.
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
    /// Add parts a host leaves out by default, comma-separated
    /// (summary: GitHub's step summary). Without it, --lib renders the
    /// features the library's header records (none for a new one).
    #[arg(long, value_name = "FEATURES", value_delimiter = ',')]
    pub with: Vec<Feature>,
    /// With --lib: put this license header (comment lines) on top of the
    /// library. Without it, the host's own (the comment block after its
    /// `#!` line that names a copyright or license), if any.
    #[arg(long, value_name = "FILE", requires = "lib")]
    pub header: Option<PathBuf>,
}

/// Print the function file, the definition alone or the wrapper.
pub fn render(tool: Tool, args: &RenderArgs) -> u8 {
    let fields = if args.wrapper {
        Fields::from_checker()
    } else {
        Fields::with(&args.with)
    };
    let rendered = fields.and_then(|fields| {
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
    if let Some(lib) = &args.lib {
        return splice_lib(tool, args, lib);
    }
    let path = &args.script;
    let name = path.display().to_string();
    let script = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return tool.fail(format!("{name}: {e}")),
    };
    let definition = match Fields::with(&args.with).and_then(|f| render::definition(&f)) {
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
        if !args.check {
            print_follow_ups(tool, &name, &spliced, &args.with);
        }
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
    print_follow_ups(tool, &name, &spliced, &args.with);
    exit::OK
}

/// The host follow-ups of the spliced script, one line each on stderr
/// (`NAME:LINE: what to decide`), after a dry run or `--write`.
fn print_follow_ups(tool: Tool, name: &str, spliced: &str, with: &[Feature]) {
    let changes = splice::Changes {
        exit_2: with.contains(&Feature::Exit2),
        owner_kinds_env: with
            .contains(&Feature::ExactOwnerKinds)
            .then_some(checker::contract::EXCLUDE_OWNER_KINDS.env),
    };
    match splice::follow_ups(spliced, changes) {
        Ok(found) => {
            for f in found {
                eprintln!("{}: {name}:{}: follow-up: {}", tool.name, f.line, f.text);
            }
        }
        Err(e) => eprintln!("{}: {name}: no follow-ups: {e}", tool.name),
    }
}

/// A library file's header that the host added above the file's first
/// line (a license header its lint adds): the comment and blank lines
/// before `first`, the first line of what splice writes. Kept by
/// `--write`. Empty when there is none.
fn host_header<'a>(current: &'a str, first: &str) -> &'a str {
    let mut offset = 0;
    for line in current.split_inclusive('\n') {
        if line.trim_end_matches('\n') == first {
            return &current[..offset];
        }
        let text = line.trim();
        if !(text.is_empty() || text.starts_with('#')) {
            return "";
        }
        offset += line.len();
    }
    ""
}

/// `--lib`: print the diffs of SCRIPT and of the library file; write them
/// (the library first: SCRIPT never sources a missing file) with `--write`,
/// exit 1 when there is one with `--check`.
fn splice_lib(tool: Tool, args: &SpliceArgs, lib: &Path) -> u8 {
    let path = &args.script;
    let name = path.display().to_string();
    let lib_word = lib.to_str().filter(|word| {
        let plain = word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
        plain && lib.components().all(|c| matches!(c, Component::Normal(_)))
    });
    let Some(lib_word) = lib_word else {
        return tool.fail(format!(
            "--lib {}: expected a plain path inside the directory of {name}, e.g. lib/verify-pods.sh",
            lib.display()
        ));
    };
    let script = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return tool.fail(format!("{name}: {e}")),
    };
    let lib_path = path.parent().unwrap_or(Path::new("")).join(lib);
    let lib_name = lib_path.display().to_string();
    let current = match fs::read_to_string(&lib_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return tool.fail(format!("{lib_name}: {e}")),
    };
    // The features: those asked for, else those the library records.
    let with = match (&args.with[..], current.as_deref()) {
        ([], Some(text)) => render::recorded_features(text).unwrap_or_default(),
        (with, _) => with.to_vec(),
    };
    let license = match &args.header {
        Some(file) => match fs::read_to_string(file) {
            Ok(text) => license_block(&text),
            Err(e) => return tool.fail(format!("--header {}: {e}", file.display())),
        },
        None => splice::license_header(&script),
    };
    let (spliced, wanted) = match library(path, &script, lib_word, &with, &license) {
        Ok(both) => both,
        Err(e) => return tool.fail(format!("{name}: {e}")),
    };
    // A header the host added above ours by hand stays (a license, when
    // neither --header nor the script gives one).
    let first = wanted.lines().next().unwrap_or_default();
    let header = match current.as_deref() {
        Some(text) if license.is_empty() => host_header(text, first),
        _ => "",
    };
    let wanted = format!("{header}{wanted}");
    let lib_current = current.as_deref().is_some_and(|text| {
        render::without_written_by(text) == render::without_written_by(&wanted)
    });
    let host_patch = diff::unified(
        &script,
        &spliced,
        &format!("{name} (current)"),
        &format!("{name} (spliced)"),
    );
    let lib_patch = if lib_current {
        String::new()
    } else {
        diff::unified(
            current.as_deref().unwrap_or(""),
            &wanted,
            &format!("{lib_name} (current)"),
            &format!("{lib_name} (generated)"),
        )
    };
    if host_patch.is_empty() && lib_current {
        let by = current
            .as_deref()
            .and_then(render::written_by)
            .unwrap_or("?");
        if by == render::GENERATOR {
            eprintln!("{}: {lib_name}: up to date", tool.name);
        } else {
            eprintln!(
                "{}: {lib_name}: up to date (written by {by}; {} writes the same function)",
                tool.name,
                render::GENERATOR
            );
        }
        eprintln!("{}: {name}: sources {lib_word}", tool.name);
        if !args.check {
            print_follow_ups(tool, &name, &spliced, &with);
        }
        return exit::OK;
    }
    let printed = tool.print(&format!("{host_patch}{lib_patch}"));
    if printed != exit::OK {
        return printed;
    }
    let lib_state = if current.is_none() {
        "is missing"
    } else {
        "differs"
    };
    if args.check {
        if !lib_current {
            eprintln!("{}: {lib_name}: {lib_state}", tool.name);
        }
        if !host_patch.is_empty() {
            eprintln!("{}: {name}: does not source {lib_word} alone", tool.name);
        }
        // Without --with, --write renders what the library records.
        let with = if args.with.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = args.with.iter().map(|f| f.name()).collect();
            format!(" --with {}", names.join(","))
        };
        eprintln!(
            "{}: run `{} {name} --lib {lib_word}{with} --write`",
            tool.name, tool.splice
        );
        return exit::DIFFERS;
    }
    if args.write {
        if !lib_current {
            let created = lib_path
                .parent()
                .map_or(Ok(()), fs::create_dir_all)
                .and_then(|()| fs::write(&lib_path, &wanted));
            if let Err(e) = created {
                return tool.fail(format!("{lib_name}: cannot write: {e}"));
            }
            eprintln!("{}: {lib_name}: written", tool.name);
        }
        if !host_patch.is_empty() {
            if let Err(e) = fs::write(path, &spliced) {
                return tool.fail(format!("{name}: cannot write: {e}"));
            }
            eprintln!("{}: {name}: verify_pods() replaced by `source`", tool.name);
        }
    }
    print_follow_ups(tool, &name, &spliced, &with);
    exit::OK
}

/// `text`'s comment lines up to its first other line (a `#!` line skipped),
/// with a blank line after them: a license header as `--header` gives it.
fn license_block(text: &str) -> String {
    let mut block: String = text
        .lines()
        .skip_while(|line| line.starts_with("#!"))
        .take_while(|line| line.starts_with('#'))
        .map(|line| format!("{line}\n"))
        .collect();
    if !block.is_empty() {
        block.push('\n');
    }
    block
}

/// SCRIPT spliced to source `lib`, and the library file's contents (the
/// same whichever tool writes it: its regenerate command is
/// [`render::SPLICE_COMMAND`]'s).
fn library(
    path: &Path,
    script: &str,
    lib: &str,
    with: &[Feature],
    license: &str,
) -> Result<(String, String), Box<dyn std::error::Error>> {
    let spliced = splice::splice_source(script, lib)?;
    let fields = Fields::with(with)?;
    let mut definition = render::definition(&fields)?;
    if let (Some(ours), Some(host)) = (
        splice::indent_step(&definition)?,
        splice::indent_step(script)?,
    ) {
        // The host's wider indentation can push a line past 100 columns.
        definition = fit::fitted_by(&splice::reindent(&definition, ours, host)?, host)?;
    }
    let (from, script_path) = regenerate_location(path);
    // No --with: the header's features line is what --write and --check
    // read.
    let regenerate = format!(
        "{} {} --lib {}",
        render::SPLICE_COMMAND,
        render::shell_word(&script_path),
        render::shell_word(lib)
    );
    let host = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let library = Library {
        lib,
        host: &host,
        from,
        regenerate: &regenerate,
        license,
    };
    Ok((
        spliced,
        render::library_file(&fields, &library, &definition)?,
    ))
}

/// Where the regenerate command runs and how it names SCRIPT: from the root
/// of the git repository holding it, else from its own directory. Never
/// from the current directory: the file must not depend on where splice ran.
fn regenerate_location(path: &Path) -> (&'static str, String) {
    let file_name = || {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let Ok(absolute) = fs::canonicalize(path) else {
        return ("the script's directory", file_name());
    };
    for dir in absolute.ancestors().skip(1) {
        if dir.join(".git").exists() {
            if let Ok(relative) = absolute.strip_prefix(dir) {
                return (
                    "the repository root",
                    relative.to_string_lossy().into_owned(),
                );
            }
        }
    }
    ("the script's directory", file_name())
}
