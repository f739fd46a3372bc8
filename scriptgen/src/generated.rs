//! `generated/`: the files scriptgen owns, written and checked.

use crate::diff;
use crate::render::{self, Fields, RenderError};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The directory, relative to the repository root.
pub const DIR: &str = "generated";

/// One generated file.
pub struct File {
    /// Path relative to the repository root, e.g. `generated/verify_pods.sh`.
    pub path: String,
    /// What it must contain.
    pub contents: String,
    /// Whether it must be executable (the wrapper; `write` also clears the
    /// bits of the others, `check` only insists on this one).
    pub executable: bool,
}

/// The files of `generated/`, rendered now: the function as a host gets
/// it (no `--with`), and the wrapper with every feature.
pub fn files() -> Result<Vec<File>, RenderError> {
    Ok(vec![
        File {
            path: format!("{DIR}/verify_pods.sh"),
            contents: render::function_file(&Fields::with(&[])?)?,
            executable: false,
        },
        File {
            path: format!("{DIR}/verify-pods.sh"),
            contents: render::wrapper(&Fields::from_checker()?)?,
            executable: true,
        },
    ])
}

/// Write every file under `root` that differs; returns the paths written.
pub fn write(root: &Path, files: &[File]) -> io::Result<Vec<String>> {
    fs::create_dir_all(root.join(DIR))?;
    let mut written = Vec::new();
    for file in files {
        let path = root.join(&file.path);
        let current = fs::read_to_string(&path).ok();
        if current.as_deref() != Some(file.contents.as_str()) {
            fs::write(&path, &file.contents)?;
            written.push(file.path.clone());
        }
        set_executable(&path, file.executable)?;
    }
    Ok(written)
}

/// How a committed file differs from what would be rendered now.
pub struct Stale {
    /// Path relative to the repository root.
    pub path: String,
    /// Why, in a few words.
    pub reason: String,
    /// The unified diff committed → rendered (empty for a mode change).
    pub diff: String,
}

/// Every file under `root` that is missing, different or has the wrong mode.
pub fn check(root: &Path, files: &[File]) -> io::Result<Vec<Stale>> {
    let mut stale = Vec::new();
    for file in files {
        let path = root.join(&file.path);
        let committed = match fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        };
        let old_name = format!("{} (committed)", file.path);
        let new_name = format!("{} (rendered now)", file.path);
        match committed {
            None => stale.push(Stale {
                path: file.path.clone(),
                reason: "missing".into(),
                diff: diff::unified("", &file.contents, &old_name, &new_name),
            }),
            Some(text) if text != file.contents => stale.push(Stale {
                path: file.path.clone(),
                reason: "differs from what the templates and programs render".into(),
                diff: diff::unified(&text, &file.contents, &old_name, &new_name),
            }),
            Some(_) if file.executable && !is_executable(&path)? => stale.push(Stale {
                path: file.path.clone(),
                reason: "is not executable".into(),
                diff: String::new(),
            }),
            Some(_) => {}
        }
    }
    Ok(stale)
}

/// The repository root this binary was built from.
pub fn default_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("scriptgen/ lives inside the repository")
        .to_owned()
}

#[cfg(unix)]
fn is_executable(path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    Ok(fs::metadata(path)?.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> io::Result<bool> {
    Ok(true)
}

#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = fs::metadata(path)?.permissions();
    let mode = permissions.mode();
    // Execute bits follow the read bits, like `chmod +x` under a normal umask.
    let wanted = if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    if wanted != mode {
        permissions.set_mode(wanted);
        fs::set_permissions(path, permissions)?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_executable(_: &Path, _: bool) -> io::Result<()> {
    Ok(())
}
