//! Expected live output, computed by the checker's own engine from the
//! states the server served: the same programs, so no rule or wording is
//! restated. Live runs differ from offline ones only in `attempts`, the
//! whole seconds waited, which the caller chooses or searches, and the
//! resourceVersion the verdict was decided at: the version the server served
//! the state at ([`served`]), or "" for a `kubectl -o json` List's none.

use super::state::State;
use checker::engine::Excluded;
use checker::{Engine, Projection, Report};

/// What a run is checked with besides its states: the excluded namespaces
/// and owner kinds (report.jq) and the list limit (render.jq). The default
/// is the contract's defaults; a corpus case may set its own
/// ([`crate::Case::env`]).
#[derive(Debug, Clone)]
pub struct Knobs {
    pub excluded: Excluded,
    pub list_limit: u64,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            excluded: Excluded::default(),
            list_limit: checker::contract::LIST_LIMIT.default,
        }
    }
}

fn bytes(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON")
}

/// The resourceVersion the replay server gives timeline state `index`.
pub fn served(index: usize) -> String {
    super::api::resource_version(index)
}

/// report.jq on a state's pods read at `version` (default excluded namespaces).
pub fn report(engine: &Engine, state: &State, version: &str) -> Report {
    report_as(engine, state, version, &Knobs::default())
}

/// [`report`], with `knobs`' excluded namespaces and owner kinds.
pub fn report_as(engine: &Engine, state: &State, version: &str, knobs: &Knobs) -> Report {
    let projection = Projection::for_run(
        &knobs.excluded.owner_kinds,
        !knobs.excluded.selector.is_empty(),
    );
    let bytes = bytes(&state.pods_document_at(version));
    let doc = checker::snapshot::read(&bytes[..], "pods", &projection.pods).expect("valid pods");
    engine
        .report(vec![doc], &knobs.excluded)
        .expect("report.jq runs")
}

/// [`report_as`], with workloads.jq's word on it where the drivers read the
/// workloads beside the pods (by default: not with `-l` nor `--workloads
/// false`), every kind served: the pods `pods`'s workloads want and that do
/// not exist yet.
fn report_with_workloads(engine: &Engine, state: &State, version: &str, knobs: &Knobs) -> Report {
    let report = report_as(engine, state, version, knobs);
    let excluded = &knobs.excluded;
    if !excluded.workloads || !excluded.selector.is_empty() || !state.forbidden_workloads.is_empty()
    {
        return report;
    }
    let items: Vec<serde_json::Value> = state
        .workloads
        .iter()
        .map(|(kind, object)| {
            let mut item = object.value();
            item["kind"] = kind.clone().into();
            item
        })
        .collect();
    let list = serde_json::json!({
        "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items
    });
    let projection = Projection::canonical();
    let doc = checker::snapshot::read(&bytes(&list)[..], "workloads", &projection.workloads)
        .expect("valid workloads");
    engine
        .workloads(&report, vec![doc], excluded)
        .expect("workloads.jq runs")
}

/// The text of a final result: pods from `pods` read at `version`, events
/// (when pods are unscheduled) from `events`, after `attempts` attempts and
/// `waited` seconds.
pub fn final_text(
    engine: &Engine,
    pods: &State,
    version: &str,
    events: &State,
    attempts: usize,
    waited: u64,
) -> String {
    final_text_as(
        engine,
        pods,
        version,
        Some(events),
        attempts,
        waited,
        &Knobs::default(),
    )
}

/// Like [`final_text`], checked with `knobs`; `events: None` = the events
/// could not be collected.
pub fn final_text_as(
    engine: &Engine,
    pods: &State,
    version: &str,
    events: Option<&State>,
    attempts: usize,
    waited: u64,
    knobs: &Knobs,
) -> String {
    let report = report_with_workloads(engine, pods, version, knobs);
    let unscheduled = report.count("unscheduled") > 0;
    let events = events.filter(|_| unscheduled).map(|events| {
        let projection = Projection::canonical();
        let bytes = bytes(&events.events_document());
        let doc = checker::snapshot::read(&bytes[..], "events", &projection.events)
            .expect("valid events");
        engine.events(vec![doc], &report).expect("events.jq runs")
    });
    let result = engine
        .result(&report, attempts, waited, events)
        .expect("result.jq runs");
    let lines = engine
        .render_within(&result, knobs.list_limit, &knobs.excluded)
        .expect("render.jq runs");
    lines.into_iter().map(|(_, text)| text + "\n").collect()
}

/// The line printed before another attempt (pods read at `version`).
pub fn progress_text(
    engine: &Engine,
    pods: &State,
    version: &str,
    attempts: usize,
    waited: u64,
    deadline: u64,
) -> String {
    let (_, text) = engine
        .progress(&report(engine, pods, version), attempts, waited, deadline)
        .expect("progress.jq runs");
    text + "\n"
}

/// Why `output` is not the start line followed by progress lines only (no
/// verdict), if it is not: each line after the start line must be what
/// progress.jq prints for `state` read at `version`, some attempt from its
/// own place on up to `max_attempts`, after at most `up_to` whole seconds
/// of a deadline in `deadlines` (a deadline epoch nearer than the deadline
/// shortens it).
pub fn only_progress(
    engine: &Engine,
    state: &State,
    version: &str,
    output: &str,
    deadlines: std::ops::RangeInclusive<u64>,
    max_attempts: usize,
    up_to: u64,
) -> Result<(), String> {
    let start = start_line(engine);
    let rest = output
        .strip_prefix(&start)
        .ok_or_else(|| format!("does not begin with the start line {start:?}"))?;
    let report = report(engine, state, version);
    let progress = |attempts, waited, deadline| {
        engine
            .progress(&report, attempts, waited, deadline)
            .expect("progress.jq runs")
            .1
    };
    for (i, line) in rest.lines().enumerate() {
        let explained = (i + 1..=max_attempts).any(|attempts| {
            (0..=up_to).any(|waited| {
                deadlines
                    .clone()
                    .any(|deadline| progress(attempts, waited, deadline) == line)
            })
        });
        if !explained {
            return Err(format!("line {} is not a progress line: {line:?}", i + 2));
        }
    }
    Ok(())
}

/// The words progress.jq begins a line before another attempt with (what
/// stands before its first number), which no line of a result begins with.
pub fn progress_words(engine: &Engine) -> String {
    let empty = report(engine, &State::new(vec![], vec![]), &served(0));
    let (_, line) = engine.progress(&empty, 1, 0, 0).expect("progress.jq runs");
    let words = line.split(|c: char| c.is_ascii_digit()).next();
    words.unwrap_or_default().to_owned()
}

/// The start line both drivers print before the first attempt (progress.jq,
/// null, `$attempts` 0), with its newline.
pub fn start_line(engine: &Engine) -> String {
    engine.start_line(0).expect("progress.jq's start line").1 + "\n"
}

/// The whole seconds waited (≤ `up_to`) for which a one-attempt run on this
/// state, read at `version`, prints exactly `output`, if any.
pub fn single_attempt_wait(
    engine: &Engine,
    state: &State,
    version: &str,
    output: &str,
    up_to: u64,
) -> Option<u64> {
    single_attempt_wait_as(engine, state, version, output, up_to, &Knobs::default())
}

/// [`single_attempt_wait`], checked with `knobs`.
pub fn single_attempt_wait_as(
    engine: &Engine,
    state: &State,
    version: &str,
    output: &str,
    up_to: u64,
    knobs: &Knobs,
) -> Option<u64> {
    let rest = output.strip_prefix(&start_line(engine))?;
    (0..=up_to).find(|&waited| {
        final_text_as(engine, state, version, Some(state), 1, waited, knobs) == rest
    })
}
