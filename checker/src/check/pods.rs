//! The pods list of one attempt: read whole in coherent pages
//! ([`read_pods`]), or, when it breaks or fails transiently, said and asked
//! again from the start while the deadline allows ([`list_again`]).

use super::bounds::Bounds;
use super::error::{not_saved, CheckError};
use super::inputs::{display_path, list_command, read_file};
use super::settings::Source;
use crate::artifacts::Saver;
use crate::contract::{messages, words};
use crate::engine::EvalError;
use crate::live::kubectl::{self, KubectlError};
use crate::live::list::{self, Failure, ListError};
use crate::reader::Projection;
use jaq_json::Val;
use std::io::Write;
use std::thread;
use std::time::Instant;

/// The documents of one snapshot. Live, a list that breaks after its first
/// page is no snapshot: it is listed again from the start while the
/// deadline allows (each time said through `notice`), else exit 2.
pub(super) fn read_pods(
    source: &Source,
    projection: &Projection,
    saver: &Saver,
    (started, bounds, lists): (Instant, &Bounds, &mut usize),
    notice: &mut dyn FnMut(&str),
    heard: list::Heard,
) -> Result<Vec<Val>, CheckError> {
    let (kubectl, chunk_size, pods) = match source {
        Source::Offline { snapshot, .. } => {
            return read_file(snapshot, &projection.pods, saver.tee("pods.json"))
        }
        Source::Live {
            kubectl,
            chunk_size,
            pods,
            ..
        } => (kubectl, *chunk_size, *pods),
    };
    let until = bounds.until;
    loop {
        *lists += 1;
        let mut tee = saver.tee("pods.json");
        let copy = tee.as_mut().map(|file| file as &mut dyn Write);
        let pages = (chunk_size, until);
        match list::read_heard(kubectl, pods, pages, &projection.pods, copy, &mut *heard) {
            Ok(docs) => return Ok(docs),
            // The cluster's answer to the first page: kubectl ran and
            // failed, so say which kubeconfig and context it used.
            // A transient failure (a 5xx, a 429, a cut answer) is asked
            // again while the deadline allows, as a broken list is.
            Err(ListError::Failed(Failure::Kubectl(error)))
                if error.transient() && retries(source, started) =>
            {
                let why = error.to_string();
                list_again(source, started, (pods.what, 1, &why, *lists), notice)?;
            }
            Err(ListError::Failed(Failure::Unreadable { command, why }))
                if kubectl::transient(&why) && retries(source, started) =>
            {
                let why = CheckError::Unreadable { command, why }.to_string();
                list_again(source, started, (pods.what, 1, &why, *lists), notice)?;
            }
            Err(ListError::Failed(Failure::Kubectl(
                error @ (KubectlError::Failed { .. } | KubectlError::TimedOut { .. }),
            ))) => {
                let config = kubectl.config_used();
                return Err(CheckError::Unreached { error, config });
            }
            Err(ListError::Failed(e)) => return Err(e.into()),
            Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
            Err(ListError::Unfinished { .. }) if bounds.until_by_epoch => {
                return Err(bounds.passed(started));
            }
            Err(ListError::Unfinished { pages }) => {
                let seconds = until.seconds;
                return Err(CheckError::Unfinished {
                    what: pods.what,
                    pages,
                    seconds,
                });
            }
            Err(ListError::Broken { page, why }) => {
                list_again(source, started, (pods.what, page, &why, *lists), notice)?;
            }
        }
    }
}

/// Whether a live list that failed transiently is asked again: before the
/// deadline (a failure that lasts to it is the check's).
pub(super) fn retries(source: &Source, started: Instant) -> bool {
    matches!(source, Source::Live { deadline, .. } if started.elapsed() < *deadline)
}

/// A live list (`what`, the pods or one read with them) that broke at
/// `page` (the `lists`th of the attempt): said, and a pause of an interval
/// (never past the deadline) before the pods are read again; past the
/// deadline, no coherent list of `what` (exit 2).
pub(super) fn list_again(
    source: &Source,
    started: Instant,
    (what, page, why, lists): (&'static str, usize, &str, usize),
    notice: &mut dyn FnMut(&str),
) -> Result<(), CheckError> {
    let Source::Live {
        deadline, interval, ..
    } = source
    else {
        return Ok(());
    };
    if started.elapsed() >= *deadline {
        let why = why.to_owned();
        return Err(CheckError::Incoherent {
            what,
            page,
            why,
            lists,
        });
    }
    let broken = words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]);
    notice(&messages::LIST_AGAIN.format(&[("broken", &broken), ("list", &(lists + 1))]));
    thread::sleep((*interval).min(deadline.saturating_sub(started.elapsed())));
    Ok(())
}

/// report.jq refused the document: a file's error names the file, kubectl's
/// is unreadable output (as in the bash function).
pub(super) fn pods_eval_error(source: &Source, error: EvalError) -> CheckError {
    match source {
        Source::Offline { snapshot, .. } => CheckError::Eval {
            source: display_path(snapshot),
            error,
        },
        Source::Live {
            kubectl,
            chunk_size,
            pods,
            ..
        } => CheckError::Unreadable {
            command: list_command(kubectl, *chunk_size, *pods),
            why: error.message,
        },
    }
}
