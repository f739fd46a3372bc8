//! The workloads beside a pods list (issue 30): the four apps/v1 lists read
//! at the pods list's resourceVersion ([`fetch`]), and the state that would
//! decide confirmed with them through workloads.jq ([`confirm`]), or listed
//! again when they cannot be read at that version.

use super::bounds::Bounds;
use super::error::{not_saved, CheckError};
use super::inputs::{display_path, read_file};
use super::pods::retries;
use super::settings::{Settings, Source, Workloads};
use crate::api;
use crate::artifacts::Saver;
use crate::contract::messages;
use crate::engine::{Engine, EvalError, Excluded, Report};
use crate::live::kubectl::KubectlError;
use crate::live::list::{self, Failure, ListError};
use crate::programs::Programs;
use crate::reader::Projection;
use jaq_json::Val;
use std::io::Write;
use std::thread;
use std::time::Instant;

/// A state's report with its workloads, or why the state must be listed
/// again.
pub(super) enum Confirmed {
    /// The report with `missing` (when the workloads were read), and what
    /// decision.jq makes of it.
    Report(Report, crate::engine::Decision),
    /// The workloads at that resourceVersion cannot be read any more (410:
    /// compacted), or their list (`what`) broke at `page`: list the pods
    /// again.
    Again {
        what: &'static str,
        page: usize,
        why: String,
    },
}

/// One workloads list as read: its documents, or why not.
type Listed = Result<Vec<Val>, ListError>;

/// The four workloads lists as read at one resourceVersion: each list's
/// documents (or why not) and its bytes for workloads.json.
pub(super) struct Fetched {
    at: Option<String>,
    reads: Vec<(api::List, Listed, Vec<u8>)>,
    /// workloads.jq's work on these reads alone
    /// ([`Engine::workloads_prepared`]), done as soon as they are in.
    prepared: Option<Val>,
    /// What workloads.jq adds to the report of the pods at `at`, computed
    /// from `prepared` beside report.jq ([`Engine::workloads_ahead`]).
    ahead: Option<Result<Val, EvalError>>,
}

impl Fetched {
    /// These reads with workloads.jq's work on them done, when any list
    /// was read and the program takes them (else it runs on them whole
    /// later, and says why).
    pub(super) fn prepare(mut self, engine: &Engine, excluded: &Excluded) -> Self {
        let docs: Vec<Val> = self
            .reads
            .iter()
            .filter_map(|(_, read, _)| read.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        if !docs.is_empty() {
            let at = self.at.as_deref();
            self.prepared = engine.workloads_prepared(docs, at, excluded).ok();
        }
        self
    }

    /// These reads with what workloads.jq adds to a report whose
    /// [`Part::Owners`] is `owners`, when that report is of the state at
    /// their version and they were prepared.
    pub(super) fn ahead(mut self, engine: &Engine, owners: &Val, excluded: &Excluded) -> Self {
        let read_at = version_of(owners);
        if let Some(prepared) = self
            .prepared
            .take()
            .filter(|_| read_at.is_some() && read_at == self.at)
        {
            self.ahead = Some(engine.workloads_ahead(owners, prepared, excluded));
        }
        self
    }
}

/// A report's `resource_version` (or its owners' part's): the version its
/// pods were listed at; None when unknown.
fn version_of(report: &Val) -> Option<String> {
    match crate::engine::field(report, "resource_version")? {
        Val::TStr(version) | Val::BStr(version) => {
            Some(String::from_utf8_lossy(version).into_owned())
        }
        _ => None,
    }
}

/// What [`confirm`] reads with: the engine, the source and its bounds,
/// the settings, the artifacts, when the check started.
pub(super) type Context<'a> = (
    &'a Engine,
    &'a Source,
    &'a Bounds,
    &'a Settings,
    &'a Saver,
    Instant,
);

/// The resourceVersion a list's documents were read at, as lib.jq's
/// `list_read_at` says it (the report's `resource_version`): the first
/// document's, when a non-empty string.
pub(super) fn read_at(docs: &[Val]) -> Option<String> {
    let metadata = crate::engine::field(docs.first()?, "metadata")?;
    match crate::engine::field(metadata, "resourceVersion")? {
        Val::TStr(v) | Val::BStr(v) if !v.is_empty() => {
            Some(String::from_utf8_lossy(v).into_owned())
        }
        _ => None,
    }
}

/// The four workloads lists at resourceVersion `at` (the latest when
/// None), at once (one kubectl each), each copied into its own buffer when
/// `copying`; None when the check reads none live. No I/O but kubectl:
/// it runs beside report.jq ([`run`]) and [`confirm`] takes it in order,
/// as the bash reads them.
pub(super) fn fetch(
    source: &Source,
    settings: &Settings,
    bounds: &Bounds,
    at: Option<String>,
    copying: bool,
) -> Option<Fetched> {
    let Source::Live {
        kubectl,
        chunk_size,
        ..
    } = source
    else {
        return None;
    };
    if !matches!(settings.workloads, Workloads::On) || !settings.reads_workloads(source) {
        return None;
    }
    let shape = Projection::canonical().workloads;
    // With one `-n` namespace, that namespace's lists (a role scoped to it
    // is enough), as for the pods.
    let lists = api::WORKLOADS.map(|list| list.within(&settings.excluded.only_namespaces, ""));
    let reads = thread::scope(|scope| {
        let handles: Vec<_> = lists
            .map(|list| {
                let (at, shape) = (at.as_deref(), &shape);
                scope.spawn(move || {
                    let mut copy = Vec::new();
                    let read = list::read_at(
                        kubectl,
                        (list, at),
                        *chunk_size,
                        bounds.until,
                        shape,
                        copying.then_some(&mut copy as &mut dyn Write),
                    );
                    (list, read, copy)
                })
            })
            .into_iter()
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a workloads list thread"))
            .collect()
    });
    Some(Fetched {
        at,
        reads,
        prepared: None,
        ahead: None,
    })
}

/// The workloads of the state `report` was made from, read at its
/// resourceVersion, through workloads.jq with the report (issue 30; the
/// pods are not read again). `fetched`: the lists already read beside
/// report.jq, used when read at the report's version. A kind the server
/// refuses to list (403, 404) is left out with one warning, said once
/// (`warned`); every other failure is the check's, worded as a pods
/// list's.
/// `save`: a watch's state (one page), saved as pods.json beside the
/// workloads read for it, so that the two replay the verdict.
pub(super) fn confirm(
    (engine, source, bounds, settings, saver, started): Context,
    (save, fetched): (Option<&Val>, Option<Fetched>),
    report: Report,
    warned: &mut Vec<String>,
    notice: &mut dyn FnMut(&str),
) -> Result<Confirmed, CheckError> {
    let shape = Projection::canonical().workloads;
    if !settings.reads_workloads(source) {
        return decided(engine, report);
    }
    // workloads.jq's word, when computed beside report.jq (the same docs).
    let mut ahead = None;
    let workloads = match (source, &settings.workloads) {
        (Source::Offline { .. }, Workloads::File(path)) => {
            read_file(path, &shape, saver.tee("workloads.json"))?
        }
        (Source::Live { kubectl, .. }, Workloads::On) => {
            // The pods list's version; without one (no server lists so,
            // only a stand-in's kubectl List), the latest.
            let at = version_of(&report.0);
            // A watch's state is saved as pods.json beside its workloads
            // (the list saved before it is another state): they replay.
            if let Some(state) = save {
                if let Some(mut file) = saver.tee("pods.json") {
                    let _ = writeln!(file, "{}", crate::engine::to_json(state));
                }
            }
            let mut tee = saver.tee("workloads.json");
            let fetched = match fetched.filter(|f| f.at == at && at.is_some()) {
                Some(fetched) => fetched,
                None => match fetch(source, settings, bounds, at, tee.is_some()) {
                    Some(fetched) => fetched,
                    None => return decided(engine, report),
                },
            };
            ahead = fetched.ahead;
            let mut docs = Vec::new();
            // The lists the server refused (403, 404): one warning for all.
            let mut refused: Vec<(&str, String)> = Vec::new();
            for (list, read, copied) in fetched.reads {
                if let (Some(file), Ok(_)) = (tee.as_mut(), &read) {
                    // An artifact records its own write errors.
                    let _ = file.write_all(&copied);
                }
                let what = list.what;
                let again = |page: usize, why: String| Ok(Confirmed::Again { what, page, why });
                match read {
                    Ok(read) => docs.extend(read),
                    Err(ListError::Failed(Failure::Kubectl(
                        error @ (KubectlError::Failed { .. } | KubectlError::TimedOut { .. }),
                    ))) => {
                        let stderr = match &error {
                            KubectlError::Failed { stderr, .. } => stderr.as_str(),
                            _ => "",
                        };
                        let said = |reason: &str| stderr.contains(&format!("({reason})"));
                        // Its version compacted, or a transient failure
                        // before the deadline: list the pods again.
                        if said("Expired")
                            || said("Gone")
                            || (error.transient() && retries(source, started))
                        {
                            return again(1, error.to_string());
                        }
                        if !(said("Forbidden") || said("NotFound")) {
                            let config = kubectl.config_used();
                            return Err(CheckError::Unreached { error, config });
                        }
                        refused.push((list.what, error.to_string()));
                    }
                    Err(ListError::Failed(e)) => return Err(e.into()),
                    Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
                    Err(ListError::Unfinished { .. }) if bounds.until_by_epoch => {
                        return Err(bounds.passed(started));
                    }
                    Err(ListError::Unfinished { pages }) => {
                        let seconds = bounds.until.seconds;
                        let what = list.what;
                        return Err(CheckError::Unfinished {
                            what,
                            pages,
                            seconds,
                        });
                    }
                    Err(ListError::Broken { page, why }) => return again(page, why),
                }
            }
            if let Some(warning) = not_listed(&refused) {
                if !warned.contains(&warning) {
                    notice(&warning);
                    warned.push(warning);
                }
            }
            if docs.is_empty() {
                // Every kind refused: nothing was checked.
                saver.discard(tee);
                return decided(engine, report);
            }
            docs
        }
        _ => return decided(engine, report),
    };
    if let Some(Ok(ahead)) = ahead {
        return decided(engine, Engine::add(report, ahead));
    }
    let report = engine
        .workloads(&report, workloads, &settings.excluded)
        .map_err(|error| match &settings.workloads {
            Workloads::File(path) => CheckError::Eval {
                source: display_path(path),
                error,
            },
            _ => CheckError::Eval {
                source: Programs::WORKLOADS.file.into(),
                error,
            },
        })?;
    decided(engine, report)
}

/// The one warning for the workloads lists the server refused (403, 404),
/// naming them and every kind they leave unchecked ([`api::unchecked`]: the
/// Deployments with the ReplicaSets); the first refusal's words say why.
fn not_listed(refused: &[(&str, String)]) -> Option<String> {
    let (_, why) = refused.first()?;
    let what: Vec<&str> = refused.iter().map(|(what, _)| *what).collect();
    let unchecked = api::unchecked(&what).join(", ");
    Some(messages::WORKLOADS_NOT_LISTED.format(&[
        ("what", &what.join(", ")),
        ("why", why),
        ("unchecked", &unchecked),
    ]))
}

/// The report as it stands, and decision.jq's word on it.
fn decided(engine: &Engine, report: Report) -> Result<Confirmed, CheckError> {
    let decision = engine.decide(&report).map_err(|error| CheckError::Eval {
        source: "report".into(),
        error,
    })?;
    Ok(Confirmed::Report(report, decision))
}
