//! Two outputs naming the same file, or an output naming an input, are
//! refused before the check runs: one report would be written over the
//! other (`--ctrf X --junit X`), or over the snapshot it was made from
//! (`--ctrf pods.json --snapshot pods.json`).

use checker::contract::{self, Said};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A file the check reads or writes: how the user named it (a flag, or the
/// environment variable it came from) and its path.
pub(crate) struct Named {
    pub(crate) by: String,
    pub(crate) path: PathBuf,
}

impl Named {
    pub(crate) fn new(by: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            by: by.into(),
            path: path.into(),
        }
    }
}

/// What one file is, however it is named.
#[derive(PartialEq, Eq)]
enum Identity {
    /// A file that exists: its device and inode, which links, `..` and
    /// symbolic links cannot hide.
    Existing(u64, u64),
    /// A file to be made: its folder's canonical path and its name (or,
    /// when the folder does not exist either, the path made absolute).
    Planned(PathBuf),
}

/// The identity of `path`; none for what can be written any number of
/// times without harm (`/dev/null`, a terminal, a pipe: not a regular
/// file) and for a path without a file name.
fn identity(path: &Path) -> Option<Identity> {
    if let Ok(meta) = fs::metadata(path) {
        let kind = meta.file_type();
        if kind.is_char_device() || kind.is_fifo() || kind.is_socket() {
            return None;
        }
        return Some(Identity::Existing(meta.dev(), meta.ino()));
    }
    let name = path.file_name()?;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let planned = match fs::canonicalize(folder) {
        Ok(folder) => folder.join(name),
        Err(_) => std::path::absolute(path).ok()?,
    };
    Some(Identity::Planned(planned))
}

/// A named file with its identity, if it has one.
fn known(named: &Named) -> Option<(Identity, &Named)> {
    identity(&named.path).map(|id| (id, named))
}

/// The first output that names the same file as an output before it, or
/// as an input, as the contract's refusal (exit 2).
pub(crate) fn refuse_same_files(outputs: &[Named], inputs: &[Named]) -> Result<(), Said> {
    let outputs: Vec<_> = outputs.iter().filter_map(known).collect();
    let inputs: Vec<_> = inputs.iter().filter_map(known).collect();
    for (at, (id, output)) in outputs.iter().enumerate() {
        // Inputs first: the user named them first, and that one is the harm.
        let earlier = inputs.iter().chain(&outputs[..at]);
        if let Some((_, other)) = earlier.into_iter().find(|(other, _)| other == id) {
            return Err(contract::messages::OUTPUTS_COLLIDE.say(&[
                ("first", &other.by),
                ("second", &output.by),
                ("file", &output.path.display()),
            ]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{refuse_same_files, Named};
    use std::fs;

    #[test]
    fn one_file_by_two_names_is_refused_and_dev_null_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("pods.json");
        fs::write(&input, "{}").unwrap();
        let dotted = dir.path().join("sub/../pods.json");
        fs::create_dir(dir.path().join("sub")).unwrap();
        let inputs = [Named::new("--snapshot", &input)];
        let refused = refuse_same_files(&[Named::new("--ctrf", &dotted)], &inputs).unwrap_err();
        assert!(refused
            .line
            .starts_with("--snapshot and --ctrf name the same file"));
        let planned = dir.path().join("out.xml");
        let again = dir.path().join("sub/../out.xml");
        let outputs = [
            Named::new("--ctrf", &planned),
            Named::new("--junit", &again),
        ];
        assert!(refuse_same_files(&outputs, &inputs).is_err());
        let null = [
            Named::new("--ctrf", "/dev/null"),
            Named::new("--junit", "/dev/null"),
        ];
        assert!(refuse_same_files(&null, &inputs).is_ok());
    }
}
