//! The artifacts of `--save-dir`: the raw pods and events lists, copied
//! while they are read ([`Tee`]), and the result, kept when the check
//! fails. Every run first removes the artifacts an earlier run left, so
//! that the files in a save dir are always the last failure's, and an
//! events list that was not collected whole is never saved: what is saved
//! replays (`--snapshot DIR/pods.json`, plus `--events DIR/events.json`
//! when it exists).

use crate::cancel;
use jaq_json::Val;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why the artifacts could not be saved (`check/error.rs` makes it a
/// [`crate::check::CheckError`]).
#[derive(Debug)]
pub enum ArtifactError {
    /// The directory could not be created.
    Dir { dir: PathBuf, error: io::Error },
    /// An artifact could not be written (or an input would be overwritten).
    NotSaved { path: PathBuf, error: io::Error },
}

/// The first artifact that could not be written, shared by the [`Saver`]
/// and its copies.
type Problem = Arc<Mutex<Option<ArtifactError>>>;

/// Keep `error` as the problem when there is none yet.
fn record(problem: &Problem, error: ArtifactError) {
    let mut first = problem.lock().unwrap_or_else(|e| e.into_inner());
    first.get_or_insert(error);
}

/// The copy of one document being read, in its partial file. A write that
/// fails is recorded in the saver and the copy stops there: a report never
/// changes the verdict (issue 29), so the read goes on and the check ends
/// with its verdict and one warning ([`Saver::finish`]).
pub struct Artifact {
    file: Option<fs::File>,
    /// The file written.
    pub path: PathBuf,
    problem: Problem,
}

impl Write for Artifact {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(file) = &mut self.file {
            if let Err(error) = file.write_all(buf) {
                self.file = None;
                let path = self.path.clone();
                record(&self.problem, ArtifactError::NotSaved { path, error });
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Copies every byte read into an optional writer: a document is saved
/// while it streams, never held in memory. A failed write ends the read;
/// [`Tee::write_error`] then tells it from a failed read.
pub struct Tee<R, W> {
    inner: R,
    copy: Option<W>,
    write_error: Option<io::Error>,
}

impl<R, W> Tee<R, W> {
    /// `inner`, copied into `copy` when given.
    pub fn new(inner: R, copy: Option<W>) -> Self {
        Self {
            inner,
            copy,
            write_error: None,
        }
    }

    /// Why the copy could not be written, when it could not.
    pub fn write_error(&mut self) -> Option<io::Error> {
        self.write_error.take()
    }
}

impl<R: Read, W: Write> Read for Tee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(copy) = &mut self.copy {
            if let Err(error) = copy.write_all(&buf[..n]) {
                let said = io::Error::new(error.kind(), error.to_string());
                self.write_error = Some(error);
                self.copy = None;
                return Err(said);
            }
        }
        Ok(n)
    }
}

/// The artifacts of `--save-dir`: written while reading, kept on failure.
/// An earlier run's artifacts are removed when it is made. Copies of an
/// attempt that ended in an error are removed on drop (or by
/// [`cancel`] when a signal ends the check), like the bash function's
/// temporary files.
pub struct Saver {
    dir: Option<PathBuf>,
    /// The partial copies, registered for removal on cancellation.
    _partials: Option<cancel::Registered>,
    /// The first artifact that could not be written: from then on nothing
    /// more is saved, and [`Saver::finish`] hands it back as the warning.
    problem: Problem,
}

/// Every file a save dir may receive: the final names and the partial
/// copies (`Saver::partial`) of the three documents copied as read.
pub const ARTIFACTS: [&str; 4] = ["pods.json", "events.json", "workloads.json", "report.json"];
const COPIED: [&str; 3] = ["pods.json", "events.json", "workloads.json"];

impl Drop for Saver {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            for name in COPIED {
                let _ = fs::remove_file(Self::partial(dir, name));
            }
        }
    }
}

impl Saver {
    /// The saver of `dir`; one that saves nothing (its problem kept for
    /// [`Saver::finish`]) when `dir` cannot be made ready.
    pub fn new(dir: Option<&Path>, inputs: &[PathBuf]) -> Self {
        match Self::ready(dir, inputs) {
            Ok(saver) => saver,
            Err(error) => {
                let saver = Self::ready(None, inputs).unwrap_or_else(|_| unreachable!());
                record(&saver.problem, error);
                saver
            }
        }
    }

    fn ready(dir: Option<&Path>, inputs: &[PathBuf]) -> Result<Self, ArtifactError> {
        let Some(dir) = dir else {
            return Ok(Self {
                dir: None,
                _partials: None,
                problem: Problem::default(),
            });
        };
        fs::create_dir_all(dir).map_err(|error| ArtifactError::Dir {
            dir: dir.to_owned(),
            error,
        })?;
        Self::refuse_inputs(dir, inputs)?;
        // An earlier failure's files must not look like this run's.
        for name in ARTIFACTS {
            let path = dir.join(name);
            match fs::remove_file(&path) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => {
                    return Err(ArtifactError::NotSaved { path, error });
                }
                _ => {}
            }
        }
        let partials = COPIED.map(|name| Self::partial(dir, name)).to_vec();
        Ok(Self {
            dir: Some(dir.to_owned()),
            _partials: Some(cancel::register_files(partials)),
            problem: Problem::default(),
        })
    }

    /// An input is never overwritten or removed: refuse a save dir where an
    /// artifact (final or partial) is the same file as an input, by file
    /// identity (links and `..` cannot hide it).
    fn refuse_inputs(dir: &Path, inputs: &[PathBuf]) -> Result<(), ArtifactError> {
        let identity = |path: &Path| fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
        let inputs: Vec<_> = inputs.iter().filter_map(|p| identity(p)).collect();
        let artifacts = ARTIFACTS
            .iter()
            .map(|name| dir.join(name))
            .chain(COPIED.iter().map(|name| Self::partial(dir, name)));
        for path in artifacts {
            if identity(&path).is_some_and(|id| inputs.contains(&id)) {
                let error = io::Error::other(
                    "it is an input of this check; choose another directory to save to",
                );
                return Err(ArtifactError::NotSaved { path, error });
            }
        }
        Ok(())
    }

    fn partial(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!(".{name}.partial"))
    }

    fn failed(&self) -> bool {
        self.problem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// A fresh file that receives a copy of the document being read; none
    /// once an artifact could not be written.
    pub fn tee(&self, name: &str) -> Option<Artifact> {
        let dir = self.dir.as_ref().filter(|_| !self.failed())?;
        let path = Self::partial(dir, name);
        match cancel::create_file(&path) {
            Ok(file) => Some(Artifact {
                file: Some(file),
                path,
                problem: Arc::clone(&self.problem),
            }),
            Err(error) => {
                record(&self.problem, ArtifactError::NotSaved { path, error });
                None
            }
        }
    }

    /// Drop the copy of `name`: what was read of it is not the whole
    /// document (the events list failed), and a partial list saved would
    /// not replay.
    pub fn discard(&self, copy: Option<Artifact>) {
        if let Some(copy) = copy {
            let path = copy.path.clone();
            drop(copy);
            let _ = fs::remove_file(path);
        }
    }

    /// Keep the copies (and the result as report.json) when the check
    /// failed; remove them otherwise. The first artifact that could not be
    /// written, if any: a warning, never the verdict's exit code (issue 29;
    /// the copies already written are removed, partial saves do not replay).
    pub fn finish(&self, failed: bool, result: &Val) -> Option<ArtifactError> {
        let saved = self.save(failed, result);
        let mut problem = self.problem.lock().unwrap_or_else(|e| e.into_inner());
        let problem = problem.take().or(saved.err());
        if let (Some(_), Some(dir)) = (&problem, &self.dir) {
            for name in COPIED {
                let _ = fs::remove_file(Self::partial(dir, name));
            }
        }
        problem
    }

    fn save(&self, failed: bool, result: &Val) -> Result<(), ArtifactError> {
        let Some(dir) = self.dir.as_ref().filter(|_| !self.failed()) else {
            return Ok(());
        };
        let io_err = |path: &Path| {
            let path = path.to_owned();
            move |error| ArtifactError::NotSaved { path, error }
        };
        for name in COPIED {
            let partial = Self::partial(dir, name);
            if !partial.exists() {
                continue;
            }
            if failed {
                fs::rename(&partial, dir.join(name)).map_err(io_err(&partial))?;
            } else {
                fs::remove_file(&partial).map_err(io_err(&partial))?;
            }
        }
        if failed {
            let path = dir.join("report.json");
            let json = crate::engine::to_json(result) + "\n";
            fs::write(&path, json).map_err(io_err(&path))?;
        }
        Ok(())
    }
}
