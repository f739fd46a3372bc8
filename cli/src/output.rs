//! What `check` prints: the text, JSON or GitHub lines (in colour on a
//! terminal), and the GitHub step summary.

use crate::fail;
use crate::flags::Format;
use checker::contract::{self, STEP_SUMMARY_ENV};
use checker::engine::to_raw;
use checker::programs::Program;
use checker::{Engine, Programs};
use jaq_json::Val;
use std::fs;
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;

/// What `check` prints: (level, text) lines, a level of `None` for text
/// printed as is (JSON, GitHub workflow commands).
pub(crate) type Lines = Vec<(Option<String>, String)>;

/// The lines of `result` in `format`; the text names the selection of
/// `excluded` (`-n`, `-l`) when it selected no pod.
pub(crate) fn render_result(
    engine: &Engine,
    result: &Val,
    format: Format,
    list_limit: u64,
    excluded: &checker::Excluded,
) -> Result<Lines, String> {
    if format == Format::Json {
        return Ok(vec![(None, checker::engine::to_json(result) + "\n")]);
    }
    let rendered = engine
        .render_within(result, list_limit, excluded)
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

/// The programs that print a result in `format` ([`render_result`]) and
/// write the step summary when one is asked for ([`append_step_summary`]).
pub(crate) fn programs(format: Format) -> Vec<Program> {
    let mut programs = Vec::new();
    if format != Format::Json {
        programs.push(Programs::RENDER);
    }
    if format == Format::Github {
        programs.push(Programs::GITHUB);
    }
    if step_summary().is_some() {
        programs.push(Programs::SUMMARY);
    }
    programs
}

/// The file GITHUB_STEP_SUMMARY names, if any (empty means unset).
fn step_summary() -> Option<std::ffi::OsString> {
    std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty())
}

pub(crate) fn print_lines(lines: &Lines, colour: Colour) -> io::Result<()> {
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
pub(crate) fn raw_lines(
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
/// if any; a file that cannot be written is a warning. The exit code of the
/// error line printed when summary.jq itself fails.
pub(crate) fn append_step_summary(
    engine: &Engine,
    result: &Val,
    list_limit: u64,
) -> Result<(), u8> {
    let Some(path) = step_summary() else {
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
        .or_else(|e| {
            // A report never changes the verdict (issue 29): one warning,
            // and the exit code stays the verdict's.
            let line = contract::messages::STEP_SUMMARY.format(&[
                ("env", &STEP_SUMMARY_ENV),
                ("file", &path.display()),
                ("why", &contract::io_words(&e)),
            ]);
            eprintln!("{}{line}", contract::CHECKER_PREFIX.warning);
            Ok(())
        })
}

/// Whether stdout was closed when the program started
/// (`verify-pods check >&-`): as recorded before the Rust runtime started
/// (stdout_at_start.rs, on Linux). Elsewhere, a guess: the runtime opens
/// /dev/null on a closed stdout, for reading and writing, and every write
/// to it succeeds unseen; a shell's `> /dev/null` opens it for writing
/// only. A parent that discards the output on purpose with a read-write
/// /dev/null (Python's subprocess.DEVNULL, libuv's "ignore", daemon(3))
/// mostly gives one to stdin or stderr too: then stdout counts as open.
pub(crate) fn stdout_closed() -> bool {
    if let Some(closed) = crate::stdout_at_start::closed() {
        return closed;
    }
    read_write_null(io::stdout().as_fd())
        && !read_write_null(io::stdin().as_fd())
        && !read_write_null(io::stderr().as_fd())
}

/// Whether `fd` is /dev/null open for reading and writing (both tried on a
/// copy of it: /dev/null reads as at its end and swallows what is written).
fn read_write_null(fd: BorrowedFd) -> bool {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(copy) = fd.try_clone_to_owned() else {
        return false;
    };
    let mut file = fs::File::from(copy);
    let (Ok(meta), Ok(null)) = (file.metadata(), fs::metadata("/dev/null")) else {
        return false;
    };
    meta.file_type().is_char_device()
        && meta.rdev() == null.rdev()
        && file.read(&mut [0u8; 1]).is_ok()
        && file.write(&[0u8; 1]).is_ok()
}

/// Colour only on a terminal, and never with NO_COLOR (https://no-color.org).
#[derive(Clone, Copy)]
pub(crate) struct Colour(bool);

impl Colour {
    pub(crate) fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Colour(io::stdout().is_terminal() && !no_color)
    }

    pub(crate) fn print_line(self, out: &mut dyn Write, level: &str, text: &str) -> io::Result<()> {
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
