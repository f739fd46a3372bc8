//! The streaming projection is invisible.
//!
//! The checker keeps only the fields named in `checker/programs/projection.json`
//! while it reads a snapshot. These tests prove that no canonical program can
//! tell: every program, fed the way the pipeline feeds it, gives the same
//! output (or fails alike) on the full and on the projected document — for
//! every recorded case, the samples, randomly mutated pods and events, and
//! every field of every recorded pod changed one at a time. A static scan of
//! the program texts fails as soon as a program names a field the projection
//! does not keep. Reading in tiny buffers (every value across a refill) gives
//! the same document and the same errors as reading in one piece.
#![forbid(unsafe_code)]

use checker::engine::{number, to_json};
use checker::programs::Program;
use checker::reader::{Projection, Reads, Shape};
use checker::snapshot::{ReadOptions, ScanPath};
use checker::{snapshot, Engine, Programs};
use jaq_json::Val;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use verify_pods_tests::corpus;
use verify_pods_tests::lint::{self, StrPart, Tok, Token};

// ------------------------------------------------------------ the pipeline

/// How the pipeline feeds a canonical program.
enum Feed {
    /// report.jq: the pods snapshot, `$excluded_namespaces`.
    Pods,
    /// events.jq: the events list, `$report` slurped.
    Events,
    /// workloads.jq: workloads made from the pods' owners, the report
    /// slurped (its active_owners: the pods are not read again).
    Workloads,
    /// result.jq: the report, attempts, waited seconds, events slurped.
    Result,
    /// The result, every variable a number (render, github, summary: the
    /// list limit).
    OfResult,
    /// The report, every variable a number (progress: attempts, waited, deadline).
    OfReport,
    /// The CTRF report of ctrf.jq (fed the result, every variable a number),
    /// no variables (junit).
    OfCtrf,
}

fn feed(program: Program) -> Feed {
    match program.name {
        "report" => Feed::Pods,
        "workloads" => Feed::Workloads,
        "events" => Feed::Events,
        "result" => Feed::Result,
        "render" | "github" | "summary" | "ctrf" => Feed::OfResult,
        "junit" => Feed::OfCtrf,
        "progress" | "decision" => Feed::OfReport,
        other => panic!(
            "{other}.jq is a new canonical program: teach tests/tests/projection.rs \
             how the pipeline feeds it, so that its output is compared too"
        ),
    }
}

fn programs_fed(how: fn(&Feed) -> bool) -> Vec<Program> {
    Programs::ALL
        .into_iter()
        .filter(|p| how(&feed(*p)))
        .collect()
}

/// One line per program run: its name and its outputs, or "error" (error
/// texts may quote the value that failed, which the projection shrinks).
fn run(
    engine: &Engine,
    program: Program,
    input: Val,
    vars: Vec<Val>,
    out: &mut Vec<String>,
) -> Option<Val> {
    match engine.run(program, input, vars) {
        Ok(values) => {
            let text: Vec<String> = values.iter().map(to_json).collect();
            out.push(format!("{}: {}", program.name, text.join(" ")));
            (values.len() == 1).then(|| values.into_iter().next().unwrap())
        }
        Err(_) => {
            out.push(format!("{}: error", program.name));
            None
        }
    }
}

fn read(bytes: &[u8], shape: &Shape) -> Result<Val, String> {
    snapshot::read(bytes, "doc", shape).map_err(|e| e.to_string())
}

/// A program's input as its descriptor says the drivers hand it over: the
/// array of every document of the file when it slurps (a snapshot is one
/// List or the raw pages of a paged list), else the one document.
fn input(program: Program, bytes: &[u8], shape: &Shape) -> Result<Val, String> {
    if !program.slurp {
        return read(bytes, shape);
    }
    snapshot::read_documents(bytes, "doc", shape)
        .map(Val::from_iter)
        .map_err(|e| e.to_string())
}

/// How far to run the pipeline.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    /// Every program.
    Everything,
    /// Only the programs that read the documents (report.jq, events.jq).
    /// Every other program reads only their outputs (see `feed`), so when
    /// these agree, the rest cannot differ; this keeps the many-mutation
    /// tests fast.
    Documents,
}

fn pipeline(engine: &Engine, pods: &[u8], events: &[u8], projection: &Projection) -> Vec<String> {
    run_pipeline(engine, pods, events, projection, (Depth::Everything, true))
}

/// The projection a run that reads the workloads or not (`workloads`)
/// reads its documents with: only then are the pods' owners kept.
fn projection_of(workloads: bool) -> Projection {
    let reads = Reads {
        selector: false,
        workloads,
    };
    Projection::for_reads(&Programs::default_excluded_owner_kinds(), reads)
}

/// Everything the canonical programs say about one snapshot and its
/// events, read with `projection`, to `depth`; report.jq computes the
/// owners and workloads.jq runs when the run reads the `workloads`.
fn run_pipeline(
    engine: &Engine,
    pods: &[u8],
    events: &[u8],
    projection: &Projection,
    (depth, workloads): (Depth, bool),
) -> Vec<String> {
    let mut out = Vec::new();
    let pods_bytes = pods;
    let pods = match input(Programs::REPORT, pods, &projection.pods) {
        Ok(doc) => doc,
        Err(_) => return vec!["pods: unreadable".to_owned()],
    };
    let events = input(Programs::EVENTS, events, &projection.events);
    let excluded = Programs::default_excluded_namespaces().join(",");
    // The default list, and none: pods of kube-system etc. are checked too.
    for excluded in [excluded.as_str(), ""] {
        out.push(format!("excluded: {excluded}"));
        let Some(report) = run(
            engine,
            Programs::REPORT,
            pods.clone(),
            vec![
                Val::from(excluded.to_owned()),
                Val::from(Programs::default_excluded_owner_kinds().join(",")),
                Val::from(String::new()),
                Val::from(String::new()),
                Val::from(workloads.to_string()),
            ],
            &mut out,
        ) else {
            continue;
        };
        // workloads.jq, with a ReplicaSet of 2 for every owner the pods
        // name, some of them terminating or finished (issue 30).
        if workloads {
            let workloads = workloads_of(pods_bytes, &projection.workloads);
            let vars = vec![
                Val::from(excluded.to_owned()),
                Val::from(Programs::default_excluded_owner_kinds().join(",")),
                Val::from(String::new()),
                Val::from_iter([report.clone()]),
            ];
            run(engine, Programs::WORKLOADS, workloads, vars, &mut out);
        }
        let matched = match &events {
            Ok(doc) => {
                let slurped = Val::from_iter([report.clone()]);
                run(
                    engine,
                    Programs::EVENTS,
                    doc.clone(),
                    vec![slurped],
                    &mut out,
                )
            }
            Err(_) => {
                out.push("events: unreadable".to_owned());
                None
            }
        };
        if depth == Depth::Documents {
            continue;
        }
        for program in programs_fed(|f| matches!(f, Feed::OfReport)) {
            let vars = program.vars.iter().map(|_| Val::from(3usize)).collect();
            run(engine, program, report.clone(), vars, &mut out);
        }
        // With the events collected, and without (`events: null`).
        for events in [matched.clone(), None] {
            let slurped: Val = events.into_iter().collect();
            let vars = vec![Val::from(1usize), Val::from(0usize), slurped];
            let Some(result) = run(engine, Programs::RESULT, report.clone(), vars, &mut out) else {
                continue;
            };
            // Every list in full (0), and cut to the default list limit.
            for limit in [0, checker::contract::LIST_LIMIT.default] {
                for program in programs_fed(|f| matches!(f, Feed::OfResult)) {
                    let vars = program.vars.iter().map(|_| number(limit)).collect();
                    let Some(report) = run(engine, program, result.clone(), vars, &mut out) else {
                        continue;
                    };
                    if program == Programs::CTRF {
                        for program in programs_fed(|f| matches!(f, Feed::OfCtrf)) {
                            run(engine, program, report.clone(), vec![], &mut out);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The workloads of a snapshot, as `shape` reads them: a ReplicaSet of 2
/// replicas for every owner uid its pods name (read in full).
fn workloads_of(pods: &[u8], shape: &Shape) -> Val {
    let docs = snapshot::read_documents(pods, "pods", &Shape::Keep).unwrap_or_default();
    let mut uids = BTreeSet::new();
    for doc in &docs {
        let doc: serde_json::Value =
            serde_json::from_str(&checker::engine::to_json(doc)).unwrap_or_default();
        for pod in doc["items"].as_array().into_iter().flatten() {
            for owner in pod["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(uid) = owner["uid"].as_str() {
                    uids.insert(uid.to_owned());
                }
            }
        }
    }
    let items: Vec<serde_json::Value> = uids
        .iter()
        .map(|uid| {
            serde_json::json!({"kind": "ReplicaSet", "metadata": {"namespace": "default",
                "name": uid, "uid": uid, "generation": 1}, "spec": {"replicas": 2},
                "status": {"observedGeneration": 1}})
        })
        .collect();
    let list = serde_json::json!({"kind": "List", "apiVersion": "v1",
        "metadata": {"resourceVersion": ""}, "items": items});
    let bytes = serde_json::to_vec(&list).expect("JSON");
    Val::from_iter(snapshot::read_documents(&bytes[..], "workloads", shape).expect("readable"))
}

/// Fails with the first differing line when the projection shows.
fn assert_invisible(engine: &Engine, what: &str, pods: &[u8], events: &[u8]) {
    assert_invisible_to(engine, what, pods, events, Depth::Everything);
}

/// Fails with the first differing line when the projection shows, to a
/// run that reads the workloads and to one that does not (whose pods keep
/// less: only the documents' programs can tell, see [`Depth::Documents`]).
fn assert_invisible_to(engine: &Engine, what: &str, pods: &[u8], events: &[u8], depth: Depth) {
    for (workloads, depth) in [(true, depth), (false, Depth::Documents)] {
        let full = run_pipeline(
            engine,
            pods,
            events,
            &Projection::keep_all(),
            (depth, workloads),
        );
        let projected = run_pipeline(
            engine,
            pods,
            events,
            &projection_of(workloads),
            (depth, workloads),
        );
        let what = format!("{what} (workloads {workloads})");
        assert_said_alike(&what, (&full, &projected), pods, events);
    }
}

/// Fails with the first line the full and the projected documents' runs
/// differ at, if any.
fn assert_said_alike(
    what: &str,
    (full, projected): (&[String], &[String]),
    pods: &[u8],
    events: &[u8],
) {
    if full != projected {
        let at = full
            .iter()
            .zip(projected)
            .position(|(a, b)| a != b)
            .unwrap_or(full.len().min(projected.len()));
        panic!(
            "{what}: the projection changes what the programs say\n full:      {:?}\n projected: {:?}\npods: {}\nevents: {}",
            full.get(at),
            projected.get(at),
            String::from_utf8_lossy(&pods[..pods.len().min(3000)]),
            String::from_utf8_lossy(&events[..events.len().min(1500)]),
        );
    }
}

// ------------------------------------------------------------ inputs

/// (name, pods bytes, events bytes) of every corpus case and the samples.
/// samples/'s pods and events, as [`recorded`] reads them.
fn recorded_samples() -> (Vec<u8>, Vec<u8>) {
    let (_, pods, events) = recorded()
        .into_iter()
        .find(|(name, _, _)| name == "samples")
        .expect("samples/ is recorded");
    (pods, events)
}

fn recorded() -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut docs: Vec<_> = corpus::cases()
        .into_iter()
        .filter(|case| {
            !holds_non_finite(&case.read("pods.json"))
                && !holds_non_finite(&case.read("events.json"))
        })
        .map(|case| {
            (
                case.name.clone(),
                case.read("pods.json"),
                case.read("events.json"),
            )
        })
        .collect();
    let samples = verify_pods_tests::workspace_root().join("samples");
    docs.push((
        "samples".to_owned(),
        corpus::read(&samples.join("pods.json")),
        corpus::read(&samples.join("events.json")),
    ));
    assert!(docs.len() > 5, "no corpus to test the projection on");
    docs
}

/// Whether a recorded document holds a number JSON has no digits for
/// (`NaN`, `Infinity`, as make_corpus.py writes them: after `": "`). The
/// reader reads them as jq does, serde_json refuses them: the tests here
/// that take serde_json as their reference leave such documents out, and
/// `read_as_jq_reads` reads those numbers wherever they stand.
fn holds_non_finite(doc: &[u8]) -> bool {
    ["NaN", "-NaN", "Infinity", "-Infinity"].iter().any(|word| {
        let written = format!(": {word}");
        doc.windows(written.len()).any(|w| w == written.as_bytes())
    })
}

/// The documents of a recorded file: one List, or the raw pages of a
/// paged list.
fn parse(bytes: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("a recorded file is JSON")
}

/// Documents as a file of pages holds them: one after the other, each
/// ending its line.
fn bytes(docs: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for doc in docs {
        serde_json::to_writer(&mut out, doc).expect("serializable");
        out.push(b'\n');
    }
    out
}

/// One of the documents: the only one, or a page picked at random.
fn some_doc<'a>(rng: &mut Rng, docs: &'a mut [Value]) -> &'a mut Value {
    let i = if docs.len() > 1 {
        rng.below(docs.len())
    } else {
        0
    };
    &mut docs[i]
}

#[test]
fn projection_is_invisible_on_every_recorded_case() {
    let engine = Engine::new().unwrap();
    for (name, pods, events) in recorded() {
        assert_invisible(&engine, &name, &pods, &events);
        // Recorded cases are snapshots: report.jq reads them (else the
        // comparison above would hold for two errors alike).
        let said = pipeline(&engine, &pods, &events, &Projection::canonical());
        assert!(
            said.iter()
                .any(|l| l.starts_with("report: ") && !l.ends_with(": error")),
            "{name}: report.jq never ran cleanly: {said:?}"
        );
    }
}

/// The pipeline really runs: a recorded failing case yields its lines.
#[test]
fn the_pipeline_runs_every_program() {
    let engine = Engine::new().unwrap();
    let (pods, events) = recorded_samples();
    let lines = pipeline(&engine, &pods, &events, &Projection::canonical());
    for program in Programs::ALL {
        let prefix = format!("{}: ", program.name);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&prefix) && !l.ends_with(": error")),
            "{} never ran cleanly: {lines:?}",
            program.name
        );
    }
}

// ------------------------------------------------------------ random mutation

use verify_pods_tests::rng::Rng;

/// Key names worth planting: the projected ones (in the wrong places too),
/// and ones nobody reads.
fn key_name(rng: &mut Rng) -> String {
    let projected = Projection::canonical().pods.keys();
    let events = Projection::canonical().events.keys();
    match rng.below(3) {
        0 => rng.pick(&projected).clone(),
        1 => rng.pick(&events).clone(),
        _ => rng
            .pick(&[
                "zz-extra",
                "labels",
                "annotations",
                "x",
                "",
                "kind ",
                "Phase",
                "nodename",
            ])
            .to_string(),
    }
}

/// A value of any type, sometimes one the rules care about.
fn junk(rng: &mut Rng, depth: u32) -> Value {
    let meaningful = [
        "Pending",
        "Running",
        "Failed",
        "Succeeded",
        "Unknown",
        "Job",
        "CronJob",
        "Pod",
        "",
        "kube-system",
        "default",
        "FailedScheduling",
        "kwok-node-0",
        "line\nbreak\ttab\u{1b}[31m",
        "ünïcødé ☃ \u{2028}",
        "sh -c \"a && b\" <in >out 😀",
        "%25 :,",
        "null",
    ];
    match rng.below(if depth >= 3 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => json!(rng.below(1000) as i64 - 500),
        3 => json!(rng.pick(&[0.5, -0.0, 1e300, 3.0, 1.25e-7])),
        4 | 5 => Value::String(rng.pick(&meaningful).to_string()),
        6 => Value::Array((0..rng.below(3)).map(|_| junk(rng, depth + 1)).collect()),
        7 => junk_object(rng, depth + 1),
        _ => {
            json!([{"kind": "Job"}, {"state": {"terminated": {"reason": "OOMKilled", "message": 7}}}])
        }
    }
}

fn junk_object(rng: &mut Rng, depth: u32) -> Value {
    let mut map = Map::new();
    for _ in 0..rng.below(4) {
        map.insert(key_name(rng), junk(rng, depth + 1));
    }
    Value::Object(map)
}

/// Change one thing in `target` (an object, usually): add a field, drop
/// one, replace one with junk, or replace the whole value.
fn mutate(rng: &mut Rng, target: &mut Value) {
    match (rng.below(5), target) {
        (0, Value::Object(map)) => {
            map.insert(key_name(rng), junk(rng, 0));
        }
        (1, Value::Object(map)) if !map.is_empty() => {
            let key = rng.pick(&map.keys().cloned().collect::<Vec<_>>()).clone();
            map.remove(&key);
        }
        (2, Value::Object(map)) if !map.is_empty() => {
            let key = rng.pick(&map.keys().cloned().collect::<Vec<_>>()).clone();
            map.insert(key, junk(rng, 0));
        }
        (3, Value::Array(items)) => items.push(junk(rng, 0)),
        (_, target) => *target = junk(rng, 0),
    }
}

/// A mutable reference to a random part of a pod, by the paths the rules read.
fn pod_part<'a>(rng: &mut Rng, pod: &'a mut Value) -> &'a mut Value {
    let paths: &[&[&str]] = &[
        &[],
        &["metadata"],
        &["metadata", "ownerReferences"],
        &["metadata", "ownerReferences", "0"],
        &["metadata", "namespace"],
        &["spec"],
        &["spec", "nodeName"],
        &["status"],
        &["status", "phase"],
        &["status", "containerStatuses"],
        &["status", "containerStatuses", "0"],
        &["status", "containerStatuses", "0", "state"],
        &["status", "containerStatuses", "0", "state", "terminated"],
    ];
    descend(pod, paths[rng.below(paths.len())])
}

fn event_part<'a>(rng: &mut Rng, event: &'a mut Value) -> &'a mut Value {
    let paths: &[&[&str]] = &[
        &[],
        &["involvedObject"],
        &["involvedObject", "uid"],
        &["involvedObject", "kind"],
        &["reason"],
        &["count"],
        &["lastTimestamp"],
        &["eventTime"],
        &["metadata"],
    ];
    descend(event, paths[rng.below(paths.len())])
}

/// Follow `path` as far as it exists.
fn descend<'a>(mut value: &'a mut Value, path: &[&str]) -> &'a mut Value {
    for step in path {
        let has = match &*value {
            Value::Object(map) => map.contains_key(*step),
            Value::Array(items) => step.parse::<usize>().is_ok_and(|i| i < items.len()),
            _ => false,
        };
        if !has {
            break;
        }
        value = match value {
            Value::Object(map) => map.get_mut(*step).unwrap(),
            Value::Array(items) => &mut items[step.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
    }
    value
}

/// Mutate a part (`part_of` picks it) of a random item of a random page of
/// `pages`; nothing when that page has no items.
fn mutate_an_item(
    rng: &mut Rng,
    pages: &mut [Value],
    part_of: for<'a> fn(&mut Rng, &'a mut Value) -> &'a mut Value,
) {
    let page = some_doc(rng, pages);
    if let Some(list) = items(page).filter(|l| !l.is_empty()) {
        let i = rng.below(list.len());
        let part = part_of(rng, &mut list[i]);
        mutate(rng, part);
    }
}

fn items(doc: &mut Value) -> Option<&mut Vec<Value>> {
    doc.get_mut("items").and_then(Value::as_array_mut)
}

#[test]
fn projection_is_invisible_on_randomly_mutated_pods_and_events() {
    let engine = Engine::new().unwrap();
    let docs: Vec<(String, Vec<Value>, Vec<Value>)> = recorded()
        .into_iter()
        .filter(|(_, pods, _)| pods.len() < 500_000)
        .map(|(name, pods, events)| (name, parse(&pods), parse(&events)))
        .collect();
    let mut rng = Rng(0x5EED_0F9A);
    for round in 0..400 {
        let (name, pods, events) = rng.pick(&docs);
        let (mut pods, mut events) = (pods.clone(), events.clone());
        for _ in 0..1 + rng.below(6) {
            mutate_an_item(&mut rng, &mut pods, pod_part);
            if rng.chance(40) {
                mutate_an_item(&mut rng, &mut events, event_part);
            }
        }
        // Now and then the frame itself: extra top-level keys, odd items.
        if rng.chance(5) {
            let page = some_doc(&mut rng, &mut pods);
            mutate(&mut rng, page);
        }
        if rng.chance(3) {
            let page = some_doc(&mut rng, &mut events);
            mutate(&mut rng, page);
        }
        let what = format!("{name}, mutation round {round}");
        // Every tenth round runs the text programs on the odd values too.
        let depth = if round % 10 == 0 {
            Depth::Everything
        } else {
            Depth::Documents
        };
        assert_invisible_to(&engine, &what, &bytes(&pods), &bytes(&events), depth);
    }
}

// ------------------------------------------------------------ field by field

/// Every path to a value inside `v` (object keys and array indexes).
fn paths(v: &Value, prefix: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                prefix.push(k.clone());
                out.insert(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                prefix.push(i.to_string());
                out.insert(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// Replace (or delete) the value at `path` in `v`, when it exists.
fn set_path(v: &mut Value, path: &[String], new: Option<&Value>) {
    let (last, parents) = path.split_last().unwrap();
    let mut at = v;
    for step in parents {
        at = match at {
            Value::Object(map) => match map.get_mut(step) {
                Some(next) => next,
                None => return,
            },
            Value::Array(items) => {
                match step.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(next) => next,
                    None => return,
                }
            }
            _ => return,
        };
    }
    match (at, new) {
        (Value::Object(map), Some(new)) if map.contains_key(last) => {
            map.insert(last.clone(), new.clone());
        }
        (Value::Object(map), None) => {
            map.remove(last);
        }
        (Value::Array(items), Some(new)) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *slot = new.clone();
            }
        }
        _ => {}
    }
}

/// Every field found in the recorded pods and events, changed in all items
/// of a document at once (deleted, or set to a string, a number, null, an
/// object), in up to three cases that have it: full and projected still
/// agree. A program that starts reading a field outside the projection
/// changes its output for such a change, and fails here.
#[test]
fn changing_any_one_field_shows_no_projection() {
    let engine = Engine::new().unwrap();
    let replacements = [
        None,
        Some(json!("zz-changed")),
        Some(json!(42)),
        Some(Value::Null),
        Some(json!({"kind": "Job", "terminated": {"reason": "zz"}})),
    ];
    // The richest cases first: they have the most fields and pod states.
    let mut docs: Vec<(String, Vec<Value>, Vec<Value>)> = recorded()
        .into_iter()
        .filter(|(_, pods, _)| pods.len() < 500_000)
        .map(|(name, pods, events)| (name, parse(&pods), parse(&events)))
        .collect();
    docs.sort_by_key(|(name, _, _)| {
        !["mixed-everything", "odd-shapes", "samples"].contains(&name.as_str())
    });
    let mut tried: std::collections::BTreeMap<(&str, Vec<String>), usize> = Default::default();
    let mut changes = 0;
    for (name, pods, events) in &docs {
        for (which, doc) in [("pods", pods), ("events", events)] {
            let mut item_paths = BTreeSet::new();
            for item in doc
                .iter()
                .filter_map(|page| page.get("items").and_then(Value::as_array))
                .flatten()
            {
                paths(item, &mut Vec::new(), &mut item_paths);
            }
            for path in item_paths {
                let seen = tried.entry((which, path.clone())).or_default();
                if *seen == 3 {
                    continue;
                }
                *seen += 1;
                // Two of the five replacements per case; which two rotates.
                for new in [&replacements[changes % 5], &replacements[(changes + 2) % 5]] {
                    let mut changed = doc.clone();
                    for item in changed.iter_mut().filter_map(items).flatten() {
                        set_path(item, &path, new.as_ref());
                    }
                    let (p, e) = match which {
                        "pods" => (bytes(&changed), bytes(events)),
                        _ => (bytes(pods), bytes(&changed)),
                    };
                    let what = format!("{name}: {which} items[].{} = {new:?}", path.join("."));
                    assert_invisible_to(&engine, &what, &p, &e, Depth::Documents);
                }
                changes += 1;
            }
        }
    }
    assert!(changes > 150, "only {changes} fields changed");
}

/// The check above can fail: with a projection that lacks a field a rule
/// reads (spec.nodeName), changing that field shows.
#[test]
fn a_projection_missing_a_read_field_is_caught() {
    let engine = Engine::new().unwrap();
    let mut narrow = Projection::canonical();
    let Shape::Fields(top) = &mut narrow.pods else {
        panic!("pods shape is an object")
    };
    let Some(Shape::Each(pod)) = top.get_mut("items") else {
        panic!("items[] shape")
    };
    let Shape::Fields(pod) = pod.as_mut() else {
        panic!("pod shape is an object")
    };
    let Some(Shape::Fields(spec)) = pod.get_mut("spec") else {
        panic!("spec shape")
    };
    assert!(spec.remove("nodeName").is_some());
    let (pods, events) = recorded_samples();
    let full = pipeline(&engine, &pods, &events, &Projection::keep_all());
    assert_ne!(full, pipeline(&engine, &pods, &events, &narrow));
    assert_eq!(
        full,
        pipeline(&engine, &pods, &events, &Projection::canonical())
    );
}

#[test]
fn projection_drops_an_unread_field_and_keeps_a_read_one() {
    let engine = Engine::new().unwrap();
    let (pods, events) = recorded_samples();
    let mut doc = parse(&pods);
    let pod = &mut items(&mut doc[0]).unwrap()[0];
    pod["metadata"]["annotations"] = json!({"zz/unread": "dropped"});
    pod["spec"]["nodeName"] = json!("zz-read-node");
    let changed = bytes(&doc);

    let projected = to_json(&read(&changed, &Projection::canonical().pods).unwrap());
    assert!(!projected.contains("zz/unread"), "{projected}");
    assert!(projected.contains("zz-read-node"), "{projected}");
    let full = to_json(&read(&changed, &Projection::keep_all().pods).unwrap());
    assert!(full.contains("zz/unread") && full.contains("zz-read-node"));

    // And the programs: the read field shows in their output, the other not.
    let said = pipeline(&engine, &changed, &events, &Projection::canonical()).join("\n");
    assert!(said.contains("zz-read-node"));
    assert!(!said.contains("zz/unread"));
    assert_invisible(&engine, "planted fields", &changed, &events);
}

/// A running pod keeps nothing of its conditions (none is PodScheduled
/// False) and containers (none terminated): the searched lists are left out
/// whole, key and all, by the fast parser and by the serde_json fallback
/// alike. What a search can find is kept, and so is any value the programs
/// would fail on.
#[test]
fn searched_lists_keep_only_what_a_search_finds() {
    let engine = Engine::new().unwrap();
    let pod = |status: Value| {
        json!({"metadata": {"namespace": "ns", "name": "p", "uid": "u", "labels": {"a": "b"}},
               "spec": {"nodeName": "n", "containers": [{"name": "c"}]}, "status": status})
    };
    let running = pod(json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [{"name": "c", "state": {"running": {"startedAt": "t"}}},
                              {"name": "d", "state": null}, {"name": "e"}]}));
    let cases = [
        (running, json!({"phase": "Running"})),
        (
            pod(json!({"phase": "Failed", "conditions": [],
                "containerStatuses": [{"state": {"waiting": {}}},
                    {"state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}},
                    {"state": {"terminated": "odd"}}, {"state": "odd"}, 7]})),
            json!({"phase": "Failed", "containerStatuses": [
                {"state": {"terminated": {"reason": "OOMKilled"}}}, {"state": "odd"}, 7]}),
        ),
        (
            pod(
                json!({"phase": "Pending", "containerStatuses": [{"state": {"terminated": {}}}],
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}),
            ),
            json!({"phase": "Pending", "containerStatuses": [{"state": {"terminated": {}}}],
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}),
        ),
    ];
    let projection = Projection::canonical();
    for (full, status) in cases {
        let doc = serde_json::to_vec(&json!({"items": [full]})).unwrap();
        let expected = json!({"items": [{
            "metadata": {"namespace": "ns", "name": "p", "uid": "u"},
            "spec": {"nodeName": "n"}, "status": status}]});
        for fast_path in [true, false] {
            let options = ReadOptions {
                fast_path,
                ..ReadOptions::default()
            };
            let projected = read_opts(&doc, "doc", &projection.pods, &options).unwrap();
            let projected: Value = serde_json::from_str(&projected).unwrap();
            assert_eq!(projected, expected, "fast path: {fast_path}");
        }
        assert_invisible(
            &engine,
            &String::from_utf8_lossy(&doc),
            &doc,
            br#"{"items":[]}"#,
        );
    }
    // Owners: workloads.jq (issue 30) counts a pod for every owner uid it
    // names, so every owner is kept (its kind and uid), whatever the run's
    // excluded kinds.
    let owned = |owners: Value, kinds: &[&str]| {
        let doc = json!({"items": [{"metadata": {"name": "p", "ownerReferences": owners}}]});
        let doc = serde_json::to_vec(&doc).unwrap();
        assert_invisible(
            &engine,
            &String::from_utf8_lossy(&doc),
            &doc,
            br#"{"items":[]}"#,
        );
        let kinds: Vec<String> = kinds.iter().map(|k| (*k).to_owned()).collect();
        let projection = Projection::for_owner_kinds(&kinds);
        read(&doc, &projection.pods).map(|v| to_json(&v)).unwrap()
    };
    let default = Programs::default_excluded_owner_kinds();
    let default: Vec<&str> = default.iter().map(String::as_str).collect();
    let not_a_job = || json!([{"kind": "ReplicaSet", "name": "rs", "uid": "u1"}, {"kind": "CronJob"}, {"name": "x"}]);
    let job = || json!([{"kind": "ReplicaSet"}, {"kind": "Job", "name": "j"}, "odd"]);
    let kept_not_a_job = r#"{"items":[{"metadata":{"name":"p","ownerReferences":[{"kind":"ReplicaSet","uid":"u1"},{"kind":"CronJob"},{}]}}]}"#;
    let kept_job = r#"{"items":[{"metadata":{"name":"p","ownerReferences":[{"kind":"ReplicaSet"},{"kind":"Job"},"odd"]}}]}"#;
    for (owners, kinds, kept) in [
        (not_a_job(), &default[..], kept_not_a_job),
        (job(), &default[..], kept_job),
        (not_a_job(), &["PyTorchJob", "CronJob"][..], kept_not_a_job),
        (job(), &[][..], kept_job),
    ] {
        assert_eq!(owned(owners, kinds), kept, "owner kinds {kinds:?}");
    }
    // A later duplicate key replaces the earlier value, left out or not.
    let pods = br#"{"items":[{"metadata":{"namespace":"a","name":"p"},"spec":{},"status":{"phase":"Pending",
        "conditions":[{"type":"PodScheduled","status":"False","reason":"Early"}],"conditions":[],
        "containerStatuses":[],"containerStatuses":[{"state":{"terminated":{"reason":"Late"}}}]}}]}"#;
    assert_invisible(
        &engine,
        "duplicate searched lists",
        pods,
        br#"{"items":[]}"#,
    );
    let projected = read(pods, &projection.pods).map(|v| to_json(&v)).unwrap();
    assert!(
        !projected.contains("Early") && !projected.contains("conditions"),
        "{projected}"
    );
    assert!(projected.contains("Late"), "{projected}");
}

#[test]
fn duplicate_keys_read_alike() {
    let engine = Engine::new().unwrap();
    let pods = br#"{"items":[{"metadata":{"namespace":"a","name":"p","namespace":"b"},
        "spec":{"nodeName":"n","nodeName":""},"status":{"phase":"Running","phase":"Pending"}}],
        "items":[{"metadata":{"namespace":"c","name":"q"},"spec":{},"status":{"phase":"Pending"}}]}"#;
    let events = br#"{"items":[]}"#;
    assert_invisible(&engine, "duplicate keys", pods, events);
    let said = pipeline(&engine, pods, events, &Projection::canonical()).join("\n");
    assert!(said.contains(r#""namespace":"c""#), "{said}");
}

// ------------------------------------------------------------ buffers

/// Every recorded document and every bad input, read with first buffers of
/// 1 to 4096 bytes (so every value straddles refills and the buffer grows),
/// gives the same value, or the same error at the same position.
#[test]
fn tiny_buffers_read_the_same_documents_and_errors() {
    let mut files: Vec<PathBuf> = corpus::cases()
        .iter()
        .flat_map(|c| [c.pods(), c.events()])
        .collect();
    files.extend(corpus::bad_inputs());
    let samples = verify_pods_tests::workspace_root().join("samples");
    files.extend([samples.join("pods.json"), samples.join("events.json")]);
    let projection = Projection::canonical();
    let mut errors = 0;
    for path in &files {
        let data = corpus::read(path);
        for shape in [&projection.pods, &projection.events, &Shape::Keep] {
            let whole = read_sized(&data, path, shape, 1 << 20);
            errors += usize::from(whole.is_err());
            let sizes: &[usize] = if data.len() > 200_000 {
                &[4096]
            } else {
                &[1, 2, 3, 5, 17, 256, 4096]
            };
            for &size in sizes {
                let small = read_sized(&data, path, shape, size);
                assert_same(
                    &whole,
                    &small,
                    &format!("{}: buffer {size}", path.display()),
                );
            }
        }
    }
    assert!(errors > 0, "no bad input was refused");
}

/// Big snapshots are read by several threads at once (checker/src/batch.rs),
/// each taking a share of the pods. On thousands of randomly mutated pods
/// (odd types, escapes, deep values), whole or with a fault spliced in late,
/// that reads what one thread reads, or refuses it with the same words.
#[test]
fn several_threads_read_what_one_thread_reads() {
    let mut rng = Rng(0x7EAD5);
    let pods = mutated_pods(&mut rng, 6_000);
    let data = serde_json::to_vec_pretty(&json!({"kind": "List", "items": pods})).unwrap();
    assert!(data.len() > 4 << 20, "only {} bytes", data.len());
    let one = ReadOptions {
        threads: 1,
        ..ReadOptions::default()
    };
    let projection = Projection::canonical();
    let several = [2, 3].map(|threads| ReadOptions {
        threads,
        ..ReadOptions::default()
    });
    // Each document is read by one thread once, then by 2 and 3 threads.
    for shape in [&projection.pods, &Shape::Keep] {
        let alone = read_opts(&data, "big", shape, &one);
        assert!(alone.is_ok(), "{alone:?}");
        for options in &several {
            let what = format!("{} threads", options.threads);
            assert_same(&alone, &read_opts(&data, "big", shape, options), &what);
        }
        for fault in [&b"\\x"[..], b"\xff", b"}", b"\n"] {
            let at = data.len() - 1 - rng.below(data.len() / 2);
            let mut bad = data.clone();
            bad.splice(at..at, fault.iter().copied());
            let alone = read_opts(&bad, "big", shape, &one);
            for options in &several {
                let what = format!("{} threads, {fault:?} at byte {at}", options.threads);
                assert_same(&alone, &read_opts(&bad, "big", shape, options), &what);
            }
        }
    }
}

/// `n` recorded pods, about a third of them randomly mutated.
fn mutated_pods(rng: &mut Rng, n: usize) -> Vec<Value> {
    let docs: Vec<Value> = recorded()
        .into_iter()
        .flat_map(|(_, pods, _)| parse(&pods))
        .collect();
    let mut pods: Vec<Value> = Vec::new();
    while pods.len() < n {
        let mut doc = rng.pick(&docs).clone();
        if let Some(list) = items(&mut doc).filter(|l| !l.is_empty()) {
            let i = rng.below(list.len());
            let mut pod = list[i].clone();
            if rng.chance(30) {
                let part = pod_part(rng, &mut pod);
                mutate(rng, part);
            }
            pods.push(pod);
        }
    }
    pods
}

/// JSON text with the escapes of other encoders: `&`, `<`, `>`, U+2028 and
/// U+2029 as Go's encoder (kubectl) writes them, and characters beyond the
/// BMP as surrogate pairs, as ASCII-only encoders write them. Outside
/// strings JSON text is ASCII, so every such character is inside one.
fn escaped_like_encoders(json: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(json).expect("JSON text is UTF-8");
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' | '<' | '>' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c if u32::from(c) > 0xFFFF => {
                let mut pair = [0u16; 2];
                for unit in c.encode_utf16(&mut pair) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.into_bytes()
}

/// Snapshots with kubectl's `\u0026`-style escapes in most pods (and
/// surrogate pairs), indented and compact: every thread count and buffer
/// size reads the document the unescaped text holds, or refuses a fault
/// spliced in with the same words.
#[test]
fn escapes_read_alike_on_every_thread_and_form() {
    let mut rng = Rng(0xE5CA9E);
    let mut pods = mutated_pods(&mut rng, 3_000);
    for (i, pod) in pods.iter_mut().enumerate() {
        if i % 5 != 0 && pod["spec"].is_object() && pod["metadata"].is_object() {
            let arg = format!("sh -c \"test -f /a && exec run <in >out\" 😀 {i}");
            pod["spec"]["containers"] = json!([{"name": "c", "args": [arg]}]);
            pod["metadata"]["annotations"] = json!({"url": format!("http://x/?a={i}&b=<{i}>")});
        }
    }
    let doc = json!({"kind": "List", "items": pods});
    let plain = serde_json::to_vec_pretty(&doc).unwrap();
    let forms = [
        ("indented", escaped_like_encoders(&plain)),
        (
            "compact",
            escaped_like_encoders(&serde_json::to_vec(&doc).unwrap()),
        ),
    ];
    let projection = Projection::canonical();
    let threads = |threads| ReadOptions {
        threads,
        ..ReadOptions::default()
    };
    let all = [
        threads(1),
        threads(2),
        threads(3),
        ReadOptions {
            initial_buffer: 4096,
            ..threads(2)
        },
        ReadOptions {
            scan: ScanPath::NoAvx2,
            ..threads(2)
        },
        ReadOptions {
            scan: ScanPath::Portable,
            ..threads(2)
        },
    ];
    for shape in [&projection.pods, &Shape::Keep] {
        let expected = read_opts(&plain, "big", shape, &threads(1));
        assert!(expected.is_ok(), "{expected:?}");
        for (form, data) in &forms {
            assert!(data.len() > 1 << 20, "{form}: only {} bytes", data.len());
            for options in &all {
                let what = format!("{form}, {options:?}");
                assert_same(&expected, &read_opts(data, "big", shape, options), &what);
            }
            for fault in [&br"\ud800"[..], br"\udc00", br"\u12x4", br"\ud83d\u00e9"] {
                let late = data.len() / 2 + rng.below(data.len() / 3);
                let at = late + data[late..].windows(2).position(|w| w == br"\u").unwrap();
                let mut bad = data.clone();
                bad.splice(at..at, fault.iter().copied());
                let alone = read_opts(&bad, "big", shape, &threads(1));
                for options in &all[1..] {
                    let what = format!("{form}, {fault:?} at byte {at}, {options:?}");
                    assert_same(&alone, &read_opts(&bad, "big", shape, options), &what);
                }
            }
        }
    }
}

fn read_sized(data: &[u8], path: &Path, shape: &Shape, size: usize) -> Result<String, String> {
    let options = ReadOptions {
        initial_buffer: size,
        ..ReadOptions::default()
    };
    read_documents_opts(data, &path.display().to_string(), shape, &options)
}

/// Every document of a file (one List, or the raw pages of a paged list),
/// as the checker reads a snapshot.
fn read_documents_opts(
    data: &[u8],
    source: &str,
    shape: &Shape,
    options: &ReadOptions,
) -> Result<String, String> {
    snapshot::read_documents_with(data, source, shape, options)
        .map(|docs| to_json(&Val::from_iter(docs)))
        .map_err(|e| e.to_string())
}

fn read_opts(
    data: &[u8],
    source: &str,
    shape: &Shape,
    options: &ReadOptions,
) -> Result<String, String> {
    snapshot::read_with(data, source, shape, options)
        .map(|v| to_json(&v))
        .map_err(|e| e.to_string())
}

// ------------------------------------------------------------ static scan

/// What a program text names: the fields it reads (`.name`, `."name"`,
/// `.["name"]`, `{name}`) and the keys of the objects it builds
/// (`{name: …}`, `{"name": …}`). Comments are skipped; string literals only
/// count where they index; code inside `\( … )` of a string is scanned too.
#[derive(Debug, Default)]
struct Names {
    read: BTreeSet<String>,
    built: BTreeSet<String>,
    recursive_descent: bool,
}

fn names(text: &str) -> Names {
    let tokens = lint::lex(text).unwrap_or_else(|(line, expected)| {
        panic!("jaq's lexer refuses line {line}: expected {expected}")
    });
    let mut names = Names::default();
    scan(&tokens, false, &mut names);
    names
}

/// Walk jaq's token trees. `.name` is one token; `."name"` and `.["name"]`
/// are `.` and the string (in its block, which ends with its closing
/// bracket); in an object (`in_object`), a name or string at the start or
/// after `,` and before `:` is a key it builds, and a bare `{name}` reads
/// `.name`.
fn scan(tokens: &[Token<&str>], in_object: bool, names: &mut Names) {
    for (n, Token(text, kind)) in tokens.iter().enumerate() {
        let next = tokens.get(n + 1).map(|Token(t, k)| (*t, k));
        let key_position = in_object && (n == 0 || tokens[n - 1].0 == ",");
        match kind {
            Tok::Sym if *text == ".." => names.recursive_descent = true,
            Tok::Sym if text.starts_with('.') && text.len() > 1 => {
                names.read.insert(text[1..].to_owned());
            }
            Tok::Sym if *text == "." => {
                if let Some(name) = next.and_then(|(_, k)| indexed_name(k)) {
                    names.read.insert(name);
                }
            }
            // `.metadata["continue"]`: a `["name"]` right after a term
            // indexes it (lib.jq reads `continue` so).
            Tok::Block(_) if n > 0 && ends_a_term(&tokens[n - 1]) => {
                if let Some(name) = indexed_name(kind) {
                    names.read.insert(name);
                }
            }
            Tok::Word | Tok::Str(_) if key_position => {
                let name = match kind {
                    Tok::Str(parts) => literal(parts),
                    _ => Some((*text).to_owned()),
                };
                match (name, next.map(|(t, _)| t)) {
                    (Some(name), Some(":")) => {
                        names.built.insert(name);
                    }
                    (Some(name), Some("," | "}")) if matches!(kind, Tok::Word) => {
                        names.read.insert(name);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        match kind {
            Tok::Block(inner) => scan(inner, text.starts_with('{'), names),
            Tok::Str(parts) => {
                for part in parts {
                    if let StrPart::Term(term) = part {
                        scan(std::slice::from_ref(term), false, names);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether a `[` after this token indexes it rather than building an
/// array: after a path (`.a`, `.`), a variable, a string or a bracketed
/// term (`(.a)`, `.a[]`). A function call (`f["x"]`) is left out: a word
/// may as well be a keyword (`then ["x"]`).
fn ends_a_term(Token(text, kind): &Token<&str>) -> bool {
    match kind {
        Tok::Sym => text.starts_with('.'),
        Tok::Var | Tok::Str(_) => true,
        Tok::Block(_) => text.starts_with('(') || text.starts_with('['),
        _ => false,
    }
}

/// The name after a lone `.`: a string (`."name"`) or a block holding only
/// one (`.["name"]`).
fn indexed_name(kind: &Tok<&str>) -> Option<String> {
    match kind {
        Tok::Str(parts) => literal(parts),
        Tok::Block(inner) => match inner.as_slice() {
            // A block's last token is its closing bracket.
            [Token(_, Tok::Str(parts)), Token("]", Tok::Sym)] => literal(parts),
            _ => None,
        },
        _ => None,
    }
}

/// A string without interpolation, its escapes decoded.
fn literal(parts: &[StrPart<&str, Token<&str>>]) -> Option<String> {
    let mut out = String::new();
    for part in parts {
        match part {
            StrPart::Str(text) => out.push_str(text),
            StrPart::Char(c) => out.push(*c),
            StrPart::Term(_) => return None,
        }
    }
    Some(out)
}

/// Fields the programs read that are neither projected nor built by a
/// canonical program (report.jq's report, events.jq's events, …).
fn unprojected_reads(texts: &[&str]) -> BTreeSet<String> {
    // The widest projection: a run with a label selector keeps the labels.
    let projection = Projection::for_run(&Programs::default_excluded_owner_kinds(), true);
    let mut allowed: BTreeSet<String> = projection.pods.keys().into_iter().collect();
    allowed.extend(projection.events.keys());
    allowed.extend(projection.workloads.keys());
    let scans: Vec<Names> = texts.iter().map(|t| names(t)).collect();
    for scan in &scans {
        allowed.extend(scan.built.iter().cloned());
    }
    // github.jq also reads the error object the checker builds when it
    // gives no verdict: its keys, as the real checker prints them.
    allowed.extend(error_object_keys());
    scans
        .iter()
        .flat_map(|s| s.read.iter())
        .filter(|name| !allowed.contains(*name))
        .cloned()
        .collect()
}

/// The keys of the object `verify-pods check --format json` prints when it
/// ends without a verdict (here: a flag clap refuses).
fn error_object_keys() -> BTreeSet<String> {
    let out = std::process::Command::new(verify_pods_tests::sandbox::verify_pods_bin())
        .args(["check", "--format", "json", "--no-such-flag"])
        .output()
        .expect("verify-pods runs");
    let object: Map<String, Value> =
        serde_json::from_slice(&out.stdout).expect("the error object on stdout");
    object.keys().cloned().collect()
}

fn canonical_texts() -> Vec<&'static str> {
    Programs::ALL.iter().map(|p| p.text).collect()
}

#[test]
fn every_field_a_program_reads_is_projected_or_built_by_a_program() {
    let missing = unprojected_reads(&canonical_texts());
    assert!(
        missing.is_empty(),
        "the canonical programs read {missing:?}, which checker/programs/projection.json \
         does not keep: add them there (the checker would see null)"
    );
    for program in Programs::ALL {
        assert!(
            !names(program.text).recursive_descent,
            "{}: `..` reads every field",
            program.file
        );
    }
}

#[test]
fn every_projected_key_is_read_by_a_program() {
    let read: BTreeSet<String> = Programs::ALL
        .iter()
        .flat_map(|p| names(p.text).read)
        .collect();
    let projection = Projection::canonical();
    for key in projection
        .pods
        .keys()
        .into_iter()
        .chain(projection.events.keys())
        .chain(projection.workloads.keys())
    {
        assert!(
            read.contains(&key),
            "projection.json keeps {key:?}, which no program reads"
        );
    }
}

/// The scan is honest: a program that starts reading a new pod field, in
/// any of the ways jq spells it, is caught.
#[test]
fn the_scan_catches_a_new_field() {
    let report = Programs::REPORT.text;
    for (extra, field) in [
        ("| .spec.schedulerName", "schedulerName"),
        ("| .[\"priorityClassName\"]", "priorityClassName"),
        ("| .spec[\"preemptionPolicy\"]", "preemptionPolicy"),
        ("| $t[\"hostNetwork\"]", "hostNetwork"),
        ("| .status.containerStatuses[][\"image\"]", "image"),
        ("| .\"hostIP\"", "hostIP"),
        ("| {x: .status.podIP}", "podIP"),
        ("| {qosClass}", "qosClass"),
        ("| \"\\(.metadata.generateName)\"", "generateName"),
        ("| $t.exitCode", "exitCode"),
    ] {
        let changed = format!("{report}\n{extra}\n");
        let mut texts = canonical_texts();
        texts[0] = &changed;
        let missing = unprojected_reads(&texts);
        assert_eq!(missing, BTreeSet::from([field.to_owned()]), "{extra}");
    }
    // Comments and plain strings are not reads.
    let commented = format!("{report}\n# .spec.schedulerName\n| \"metadata.labels\"\n");
    let mut texts = canonical_texts();
    texts[0] = &commented;
    assert!(unprojected_reads(&texts).is_empty());
}

#[test]
fn the_scan_reads_the_report_program_as_expected() {
    let scan = names(Programs::REPORT.text);
    for field in [
        "items",
        "metadata",
        "namespace",
        "ownerReferences",
        "kind",
        "nodeName",
        "phase",
        "terminated",
    ] {
        assert!(
            scan.read.contains(field),
            "{field} not seen in report.jq: {:?}",
            scan.read
        );
    }
    for key in ["total", "unscheduled_pods", "distribution", "verdict"] {
        assert!(
            scan.built.contains(key),
            "{key} not seen built in report.jq: {:?}",
            scan.built
        );
    }
}

// ------------------------------------------------------------ fast path

/// Values that test the edges of JSON, valid and not.
fn tricky_values() -> Vec<Vec<u8>> {
    let mut values: Vec<Vec<u8>> = [
        r#""plain""#,
        r#""a\u0041b""#,
        r#""sh -c \"a \u0026\u0026 b\" \u003cin \u003eout""#,
        r#""\u00e9\u00E9\u2028\uffff\u0000\u001f""#,
        r#""\ud83d\ude00""#,
        r#""\ud83D\uDE00\\u0026""#,
        r#""\u12""#,
        r#""\u12x4""#,
        r#""\ud83d\u""#,
        r#""\ud83d\uZZZZ""#,
        "\"tab\there\"",
        r#""\x""#,
        r#""\"""#,
        r#""\\""#,
        r#""\/\b\f\n\r\t""#,
        r#""é☃ \u2028""#,
        "\"\"",
        "0",
        "-0",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "1E+2",
        "-1.5e-3",
        "2.50",
        "18446744073709551616",
        "-9223372036854775809",
        "12345678901234567890123",
        "tru",
        "true",
        "false",
        "null",
        "nulls",
        "[1,]",
        "{\"a\":1,}",
        "[]",
        "{}",
        "{\"a\" 1}",
        "{1:2}",
        "[1 2]",
        "{\"k\":\"v\",\"k\":\"w\"}",
        "[{\"kind\":\"Job\"}]",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    values.push(b"\"\xff\"".to_vec());
    values.push(b"\"caf\xc3\"".to_vec());
    for depth in [99, 101] {
        values.push(format!("{}1{}", "[".repeat(depth), "]".repeat(depth)).into_bytes());
    }
    values
}

/// Valid JSON that serde_json refuses or skips and jq reads otherwise; the
/// reader follows jq 1.6 (tests/tests/parity.rs compares it with jq
/// itself). Each with what the reader makes of it as a whole document (its
/// JSON), or the start of the error it gives wherever the value stands.
fn read_as_jq_reads() -> Vec<(Vec<u8>, Result<String, &'static str>)> {
    let deep = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let too_deep = "invalid JSON: nested deeper than jq 1.6 reads";
    let lone = "invalid JSON: lone leading surrogate";
    let read_as = |value: &str| Ok(value.to_owned());
    vec![
        (b"1e400".to_vec(), read_as("1.7976931348623157e308")),
        (b"-1e400".to_vec(), read_as("-1.7976931348623157e308")),
        // The numbers JSON has no digits for, as Python's json, JavaScript
        // and jq write them: jq's NaN and infinities (the programs refuse
        // them where they read a type). No other spelling is a number.
        (b"NaN".to_vec(), read_as("NaN")),
        (b"-NaN".to_vec(), read_as("NaN")),
        (b"Infinity".to_vec(), read_as("Infinity")),
        (b"-Infinity".to_vec(), read_as("-Infinity")),
        (b"nan".to_vec(), Err("invalid JSON")),
        (b"+Infinity".to_vec(), Err("invalid JSON")),
        (b"-Inf".to_vec(), Err("invalid JSON")),
        (br#""a\udc00b""#.to_vec(), read_as("\"a\u{fffd}b\"")),
        (br#""\ud800""#.to_vec(), Err(lone)),
        (br#""\ud800\u0041""#.to_vec(), Err(lone)),
        (br#""\ud800\ud800\udc00""#.to_vec(), Err(lone)),
        (br#""\udbff""#.to_vec(), Err(lone)),
        (deep(127).into_bytes(), read_as(&deep(127))),
        (deep(129).into_bytes(), read_as(&deep(129))),
        (deep(240).into_bytes(), read_as(&deep(240))),
        (deep(300).into_bytes(), Err(too_deep)),
        (deep(5000).into_bytes(), Err(too_deep)),
    ]
}

/// Where serde_json and jq part, the reader reads as jq does: in a field a
/// rule reads, in one nobody reads, as a pod and as the whole document;
/// and alike with every buffer size and thread count.
#[test]
fn the_reader_reads_as_jq_where_serde_json_does_not() {
    let projection = Projection::canonical();
    let options = [1, 3, 17, 1 << 20].map(|initial_buffer| ReadOptions {
        initial_buffer,
        ..ReadOptions::default()
    });
    for (value, expected) in read_as_jq_reads() {
        let name = String::from_utf8_lossy(&value[..value.len().min(40)]).into_owned();
        let docs = documents_around(&value);
        for doc in &docs {
            for shape in [&projection.pods, &projection.events, &Shape::Keep] {
                let read = read_opts(doc, "doc", shape, &ReadOptions::default());
                match (&read, &expected) {
                    (Err(e), Err(start)) => {
                        assert!(e.contains(start), "{name}: {e}");
                    }
                    (Ok(_), Ok(_)) => {}
                    _ => panic!("{name}: read {read:?}, expected {expected:?}"),
                }
                for other in &options {
                    let what = format!("{name}, buffer {}", other.initial_buffer);
                    assert_same(&read, &read_opts(doc, "doc", shape, other), &what);
                }
            }
        }
        let whole = docs.last().expect("the value as the whole document");
        if let Ok(json) = &expected {
            assert_eq!(
                &read_opts(whole, "doc", &Shape::Keep, &options[3]),
                &Ok(json.clone())
            );
        }
    }
}

/// `value` planted where a rule reads, where none does, as a whole pod,
/// and as the whole document.
fn documents_around(value: &[u8]) -> Vec<Vec<u8>> {
    let lossless = |parts: &[&[u8]]| parts.concat();
    vec![
        lossless(&[
            br#"{"items":[{"metadata":{"namespace":"ns","name":"#,
            value,
            br#","labels":{"x":1}},"status":{"phase":"Running"}}]}"#,
        ]),
        lossless(&[
            br#"{"items":[{"metadata":{"namespace":"ns","name":"p","labels":{"x":"#,
            value,
            br#"}},"status":{"phase":"Failed","reason":"#,
            value,
            br#"}}]}"#,
        ]),
        lossless(&[br#"{"items":["#, value, br#"],"kind":"List"}"#]),
        lossless(&[
            br#"{"items":[{"count":"#,
            value,
            br#","involvedObject":{"name":"#,
            value,
            br#"}}]}"#,
        ]),
        value.to_vec(),
    ]
}

/// The fast parser builds exactly what serde_json builds, and refuses
/// exactly what it refuses (with serde_json's words, since it hands every
/// doubt over): for every recorded document, every bad input, random
/// mutations and JSON's edge cases, by every shape. (Where serde_json and
/// jq part, the reader follows jq: `read_as_jq_reads`.)
#[test]
fn fast_path_reads_what_serde_json_reads() {
    let mut docs: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, pods, events) in recorded() {
        docs.push((format!("{name}/pods.json"), pods));
        docs.push((format!("{name}/events.json"), events));
    }
    for path in corpus::bad_inputs() {
        let doc = corpus::read(&path);
        if !holds_non_finite(&doc) {
            docs.push((path.display().to_string(), doc));
        }
    }
    for value in tricky_values() {
        for doc in documents_around(&value) {
            docs.push((String::from_utf8_lossy(&value).into_owned(), doc));
        }
    }
    let mut rng = Rng(0xFA57);
    for round in 0..200 {
        let mut doc =
            json!({"items": [{}, {"metadata": {}, "status": {"containerStatuses": [{}]}}]});
        for _ in 0..6 {
            let list = items(&mut doc).unwrap();
            let i = rng.below(list.len());
            let part = pod_part(&mut rng, &mut list[i]);
            mutate(&mut rng, part);
        }
        let pretty = serde_json::to_vec_pretty(&doc).unwrap();
        docs.push((format!("random {round}"), pretty));
    }
    let projection = Projection::canonical();
    let slow = ReadOptions {
        fast_path: false,
        ..ReadOptions::default()
    };
    let mut outcomes = Outcomes::default();
    for (name, data) in &docs {
        for shape in [&projection.pods, &projection.events, &Shape::Keep] {
            let fast = read_documents_opts(data, "doc", shape, &ReadOptions::default());
            assert_same(&fast, &read_documents_opts(data, "doc", shape, &slow), name);
            outcomes.count(&fast);
        }
    }
    outcomes.assert_more_than(100, 50);
}

/// How many reads of a fuzz test were accepted and how many refused.
#[derive(Default)]
struct Outcomes {
    accepted: usize,
    refused: usize,
}

impl Outcomes {
    fn count<T, E>(&mut self, read: &Result<T, E>) {
        match read {
            Ok(_) => self.accepted += 1,
            Err(_) => self.refused += 1,
        }
    }

    /// Both outcomes are exercised, not only the easy one.
    fn assert_more_than(&self, accepted: usize, refused: usize) {
        assert!(
            self.accepted > accepted && self.refused > refused,
            "{} accepted, {} refused",
            self.accepted,
            self.refused
        );
    }
}

/// The reader's byte scans have SIMD paths (AVX2 where the CPU has it,
/// SSE2) and a portable one (checker/src/reader/scan.rs): on every document
/// of the corpus, by every shape, whole and in a buffer refilled byte by
/// byte, they read alike. (The escape and byte-mutation tests run every
/// path too.)
#[test]
fn every_scan_path_reads_what_the_fastest_reads() {
    let projection = Projection::canonical();
    let portable: Vec<ReadOptions> = [ScanPath::NoAvx2, ScanPath::Portable]
        .into_iter()
        .flat_map(|scan| {
            [1 << 20, 1].map(|initial_buffer| ReadOptions {
                initial_buffer,
                scan,
                ..ReadOptions::default()
            })
        })
        .collect();
    let mut read = 0;
    for (name, pods, events) in recorded() {
        for doc in [pods, events] {
            for shape in [&projection.pods, &projection.events, &Shape::Keep] {
                let simd = read_documents_opts(&doc, "doc", shape, &ReadOptions::default());
                for options in &portable {
                    let what = format!("{name}, {options:?}");
                    assert_same(
                        &simd,
                        &read_documents_opts(&doc, "doc", shape, options),
                        &what,
                    );
                }
                read += 1;
            }
        }
    }
    assert!(read > 100, "only {read} documents read");
}

/// Byte-level mutation of the recorded documents: where the test above
/// changes values (always valid JSON), this breaks the bytes (a byte
/// dropped, doubled, replaced, a span cut or repeated, the end cut off), so
/// that most documents are invalid JSON, invalid UTF-8, or valid in an
/// unusual way. Every mode of the reader must read each alike: the fast
/// parser (with the default buffer and with one that must be refilled
/// byte by byte) and serde_json alone, by every shape. Deterministic and
/// bounded by its count of documents, not by time (a few seconds).
#[test]
fn byte_mutations_are_read_alike_by_every_mode() {
    const DOCUMENTS: usize = 10_000;
    const BYTES: &[u8] =
        b"{}[]\",:\\ \n0123456789-+.eEtrufalsn\x00\x1f\x7f\x80\xbf\xc3\xe2\xed\xf0\xff";
    let seeds: Vec<Vec<u8>> = recorded()
        .into_iter()
        .flat_map(|(_, pods, events)| [pods, events])
        .filter(|doc| doc.len() < 64 << 10)
        .collect();
    let projection = Projection::canonical();
    let slow = ReadOptions {
        fast_path: false,
        ..ReadOptions::default()
    };
    let refilled = ReadOptions {
        initial_buffer: 1,
        ..ReadOptions::default()
    };
    let [no_avx2, portable] = [ScanPath::NoAvx2, ScanPath::Portable].map(|scan| ReadOptions {
        scan,
        ..ReadOptions::default()
    });
    let mut rng = Rng(0xB17E);
    let mut outcomes = Outcomes::default();
    for round in 0..DOCUMENTS {
        let mut doc = rng.pick(&seeds).clone();
        for _ in 0..=rng.below(3) {
            if doc.is_empty() {
                break;
            }
            let at = rng.below(doc.len());
            let span = (at + 1 + rng.below(16)).min(doc.len());
            match rng.below(6) {
                0 => drop(doc.remove(at)),
                1 => doc.insert(at, rng.pick(BYTES)),
                2 => doc[at] = rng.pick(BYTES),
                3 => drop(doc.drain(at..span)),
                4 => {
                    let copy = doc[at..span].to_vec();
                    doc.splice(at..at, copy);
                }
                _ => doc.truncate(at),
            }
        }
        let shape = match round % 3 {
            0 => &projection.pods,
            1 => &projection.events,
            _ => &Shape::Keep,
        };
        let what = format!("mutation {round}");
        let expected = read_documents_opts(&doc, "doc", shape, &slow);
        for options in [&ReadOptions::default(), &refilled, &no_avx2, &portable] {
            assert_same(
                &read_documents_opts(&doc, "doc", shape, options),
                &expected,
                &what,
            );
        }
        outcomes.count(&expected);
    }
    outcomes.assert_more_than(1000, 1000);
}

/// Two reads agree; if not, show where they part (documents are long).
fn assert_same(a: &Result<String, String>, b: &Result<String, String>, what: &str) {
    if a == b {
        return;
    }
    let (x, y) = (format!("{a:?}"), format!("{b:?}"));
    let at = x
        .bytes()
        .zip(y.bytes())
        .position(|(p, q)| p != q)
        .unwrap_or(0);
    let window = |s: &str| {
        s.get(at.saturating_sub(80)..(at + 80).min(s.len()))
            .unwrap_or("")
            .to_owned()
    };
    panic!(
        "{what}: the reads differ at byte {at}:\n  {}\n  {}",
        window(&x),
        window(&y)
    );
}
