//! A check's inputs as its words name them: a saved list read from a file
//! or stdin ([`read_file`]), the files a check reads (which `--save-dir`
//! must not overwrite), and the command line that lists a live list.

use super::error::{not_saved, CheckError};
use super::settings::Source;
use crate::api;
use crate::artifacts::{Artifact, Tee};
use crate::live::kubectl::Kubectl;
use crate::reader::snapshot;
use jaq_json::Val;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Every document of a saved list: one List, or the pages `--save-dir`
/// saved one after the other.
pub(super) fn read_file(
    path: &Path,
    shape: &crate::reader::Shape,
    mut copy: Option<Artifact>,
) -> Result<Vec<Val>, CheckError> {
    let name = display_path(path);
    let input: Box<dyn io::Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(fs::File::open(path).map_err(|error| CheckError::Open {
            path: path.to_owned(),
            error,
        })?)
    };
    let mut tee = Tee::new(input, copy.as_mut());
    let read = snapshot::read_documents(&mut tee, &name, shape);
    if let Some(error) = tee.write_error() {
        return Err(not_saved(&copy, error));
    }
    read.map_err(CheckError::Snapshot)
}

/// The files of the check's inputs (`-` is stdin, which may be a file).
pub(super) fn inputs(source: &Source) -> Vec<PathBuf> {
    let Source::Offline { snapshot, events } = source else {
        return Vec::new();
    };
    std::iter::once(snapshot)
        .chain(events)
        .map(|path| {
            if path == Path::new("-") {
                PathBuf::from("/dev/stdin")
            } else {
                path.clone()
            }
        })
        .collect()
}

/// The command line that lists `list` (its first page), as messages show it.
pub(super) fn list_command(kubectl: &Kubectl, chunk_size: usize, list: api::List) -> String {
    let args = list.args(chunk_size, None);
    kubectl.command_line(&args.each_ref().map(String::as_str))
}

pub(super) fn display_path(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}
