//! The events of the unscheduled pods, read once the verdict is known,
//! within their own bound ([`EVENTS_BOUND`]): they explain a verdict and
//! never change it.

use super::bounds::Bounds;
use super::error::{not_saved, CheckError};
use super::inputs::{display_path, list_command, read_file};
use super::settings::Source;
use crate::api;
use crate::artifacts::{Artifact, Saver};
use crate::contract::{messages, words};
use crate::engine::{Engine, Report};
use crate::live::kubectl::{self, Kubectl};
use crate::live::list::{self, Failure, ListError};
use crate::reader::Projection;
use jaq_json::Val;
use std::io::Write;
use std::thread;
use std::time::Duration;

/// The most time the events get once the verdict is known: they only
/// explain it, so they never hold it longer (the bash's bound too). Past
/// it, one warning says the events list did not finish in time.
pub const EVENTS_BOUND: Duration = Duration::from_secs(10);

/// The events list's own budget: [`EVENTS_BOUND`] (or one kubectl timeout,
/// when shorter) from now, and never past the pods lists' end
/// ([`Bounds::until`], the deadline epoch's too).
fn events_until(check: list::Until, kubectl: &Kubectl) -> list::Until {
    let own = list::Until::after(kubectl.timeout.min(EVENTS_BOUND));
    if own.at <= check.at {
        own
    } else {
        list::Until::after(check.left())
    }
}

/// The events of the unscheduled pods, when some are (`saver` is given
/// then): null otherwise. A file the user named must be good whatever the
/// verdict (exit 2 otherwise), so it is always read and run through
/// events.jq; events from kubectl are diagnostics: when they cannot be
/// listed or read, the pods verdict stands and the text says "not collected"
/// (the bash function does the same).
pub(super) fn read_events(
    engine: &Engine,
    (source, bounds): (&Source, &Bounds),
    projection: &Projection,
    report: &Report,
    unscheduled: Option<&Saver>,
    warnings: &mut Vec<String>,
    notice: &mut dyn FnMut(&str),
) -> Result<Option<Val>, CheckError> {
    match (source, unscheduled) {
        (Source::Offline { events: None, .. }, _) => Ok(None),
        (
            Source::Offline {
                events: Some(path), ..
            },
            _,
        ) => {
            let tee = match unscheduled {
                Some(saver) => saver.tee("events.json"),
                None => None,
            };
            let doc = read_file(path, &projection.events, tee)?;
            let events = engine
                .events(doc, report)
                .map_err(|error| CheckError::Eval {
                    source: display_path(path),
                    error,
                })?;
            Ok(unscheduled.map(|_| events))
        }
        (Source::Live { .. }, None) => Ok(None),
        (
            Source::Live {
                kubectl,
                chunk_size,
                events: events_list,
                interval,
                ..
            },
            Some(saver),
        ) => {
            let until = events_until(bounds.until, kubectl);
            let list = (kubectl, *events_list, *chunk_size);
            let (docs, tee) = list_events(list, (until, *interval), projection, saver, notice)?;
            // Events are diagnostics: a list that breaks is not listed again.
            let matched = docs.and_then(|docs| {
                engine.events(docs, report).map_err(|e| {
                    let command = list_command(kubectl, *chunk_size, *events_list);
                    messages::UNREADABLE_OUTPUT
                        .format(&[("command", &command), ("why", &e.message)])
                })
            });
            match matched {
                Ok(events) => Ok(Some(events)),
                Err(why) => {
                    // Only what was observed whole is saved: no events.json.
                    saver.discard(tee);
                    warnings.push(messages::EVENTS_NOT_COLLECTED.format(&[("why", &why)]));
                    Ok(None)
                }
            }
        }
    }
}

/// The events list as read: its documents, or why not in words; and its
/// copy for events.json.
type Listed = (Result<Vec<Val>, String>, Option<Artifact>);

/// The events list read within its budget `until`, and its copy: the
/// documents, or why not in words. A transient failure of its first page
/// (a 5xx, a 429, a cut answer) is said and asked again as the pods list's
/// is, after a pause of at most `interval`, while the budget leaves time
/// after the pause; past it, the last failure's words.
fn list_events(
    (kubectl, list, chunk_size): (&Kubectl, api::List, usize),
    (until, interval): (list::Until, Duration),
    projection: &Projection,
    saver: &Saver,
    notice: &mut dyn FnMut(&str),
) -> Result<Listed, CheckError> {
    let mut lists = 0;
    loop {
        lists += 1;
        let mut tee = saver.tee("events.json");
        let copy = tee.as_mut().map(|file| file as &mut dyn Write);
        let read = list::read(kubectl, list, chunk_size, until, &projection.events, copy);
        let docs = match read {
            Ok(docs) => Ok(docs),
            Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
            Err(ListError::Failed(e)) => {
                let transient = match &e {
                    Failure::Kubectl(error) => error.transient(),
                    Failure::Unreadable { why, .. } => kubectl::transient(why),
                };
                let why = CheckError::from(e).to_string();
                // Asked again only when the pause leaves time to ask.
                let pause = interval.min(until.left());
                if transient && pause < until.left() {
                    let broken = words::LIST_BROKEN.format(&[("page", &1), ("why", &why)]);
                    let list = lists + 1;
                    notice(&messages::LIST_AGAIN.format(&[("broken", &broken), ("list", &list)]));
                    thread::sleep(pause);
                    continue;
                }
                Err(why)
            }
            Err(ListError::Unfinished { pages }) => {
                Err(words::EVENTS_OVERRAN.format(&[("seconds", &until.seconds), ("pages", &pages)]))
            }
            Err(ListError::Broken { page, why }) => {
                Err(words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]))
            }
        };
        return Ok((docs, tee));
    }
}
