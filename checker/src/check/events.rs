//! The events of the unscheduled pods, read once the verdict is known,
//! within their own bound ([`EVENTS_BOUND`]): they explain a verdict and
//! never change it.

use super::bounds::Bounds;
use super::error::{not_saved, CheckError};
use super::inputs::{display_path, list_command, read_file};
use super::settings::Source;
use crate::artifacts::Saver;
use crate::contract::{messages, words};
use crate::engine::{Engine, Report};
use crate::live::kubectl::Kubectl;
use crate::live::list::{self, ListError};
use crate::reader::Projection;
use jaq_json::Val;
use std::io::Write;
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
                ..
            },
            Some(saver),
        ) => {
            let mut tee = saver.tee("events.json");
            let copy = tee.as_mut().map(|file| file as &mut dyn Write);
            let until = events_until(bounds.until, kubectl);
            let read = list::read(
                kubectl,
                *events_list,
                *chunk_size,
                until,
                &projection.events,
                copy,
            );
            let docs =
                match read {
                    Ok(docs) => Ok(docs),
                    Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
                    Err(ListError::Failed(e)) => Err(CheckError::from(e).to_string()),
                    Err(ListError::Unfinished { pages }) => Err(words::EVENTS_OVERRAN
                        .format(&[("seconds", &until.seconds), ("pages", &pages)])),
                    Err(ListError::Broken { page, why }) => {
                        Err(words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]))
                    }
                };
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
