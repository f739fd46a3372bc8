//! The library file `splice --lib` writes for a host script, and the
//! line that names who wrote it.

use crate::render::{with_newline, Fields, RenderError};
use askama::Template;

/// A library file for a host script: a header and the definition, in the
/// host's indentation (see `commands::splice`).
#[derive(Template)]
#[template(path = "library.sh.j2", escape = "none")]
struct LibraryFile<'a> {
    f: &'a Fields,
    license: &'a str,
    lib: &'a str,
    host: &'a str,
    from: &'a str,
    regenerate: &'a str,
    written_by_prefix: &'static str,
    written_by: &'a str,
    definition: &'a str,
}

/// How the line of a library file that names the verify-pods that wrote it
/// begins. `splice --check` ignores that line: only the content counts.
pub const WRITTEN_BY: &str = "# Written by ";

/// Who writes a library file, whichever entry point runs (`scriptgen
/// splice`, `verify-pods bash splice`): the same file, the same header.
pub const GENERATOR: &str = concat!("verify-pods ", env!("CARGO_PKG_VERSION"));

/// What a library file says about itself.
pub struct Library<'a> {
    /// Its path, relative to the host script's directory.
    pub lib: &'a str,
    /// The host script's file name.
    pub host: &'a str,
    /// Where to run `regenerate` from, in words.
    pub from: &'a str,
    /// The command that regenerates it, without `--write`.
    pub regenerate: &'a str,
    /// The host's license header, each line ending with a newline, and a
    /// blank line after it (empty: none).
    pub license: &'a str,
}

/// The contents of a library file holding `definition` (already in the
/// host's indentation).
pub fn library_file(
    fields: &Fields,
    library: &Library,
    definition: &str,
) -> Result<String, RenderError> {
    let file = LibraryFile {
        f: fields,
        lib: library.lib,
        host: library.host,
        from: library.from,
        regenerate: library.regenerate,
        license: library.license,
        written_by_prefix: WRITTEN_BY,
        written_by: GENERATOR,
        definition: definition.trim_end_matches('\n'),
    };
    with_newline(file.render())
}

/// `text` with the line that names who wrote it emptied of the name.
pub fn without_written_by(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with(WRITTEN_BY) {
            out.push_str(WRITTEN_BY);
            out.push('\n');
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The name of who wrote `text`, from its written-by line.
pub fn written_by(text: &str) -> Option<&str> {
    text.lines().find_map(|line| line.strip_prefix(WRITTEN_BY))
}
