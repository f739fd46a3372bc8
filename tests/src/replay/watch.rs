//! Watch streams (`?watch=1`) from the timeline, as the apiserver sends
//! them: HTTP 200, chunked, one compact event per line,
//! `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{…}}`.
//!
//! The events between consecutive states k and k+1: a pod only in k+1 is
//! ADDED, in both but different MODIFIED, only in k DELETED (each in the
//! states' list order: ADDED/MODIFIED in k+1's, then DELETED in k's); every
//! event's object carries k+1's `resourceVersion`, so a client that applied
//! all the events of one version holds that state. A watch from state k's
//! version replays the transitions from k to the present, then follows the
//! timeline as it advances, until `timeoutSeconds`. Without a version (or
//! with "0") it starts with an ADDED per object of the present state, like
//! the apiserver's watch cache. With `allowWatchBookmarks=true` a
//! transition without an event for this watch is a BOOKMARK (the client's
//! version still advances), and so is the present version just before
//! the timeout (the apiserver sends one shortly before a watch's deadline,
//! so clients can resume from it).
//!
//! A version older than the watch window ([`super::Builder::watch_history`])
//! gets what the apiserver sends: HTTP 200 and one `ERROR` event with a
//! `410 Expired` Status, then the end of the body.

use super::api::{resource_version, Shared};
use super::fault::Fault;
use super::http::{Chunk, Stream};
use super::log::{Resource, WatchEnd};
use super::object::{go_json, Object};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Which objects of a state a watch sees (namespace, selectors).
pub type Selector = Box<dyn Fn(&Object) -> bool + Send>;

/// How a watch starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// The client holds this state: send the transitions after it.
    After(usize),
    /// An ADDED per object of this state first (no version asked).
    Snapshot(usize),
    /// One `ERROR` event carrying this Status line, then the end.
    Error(String),
}

/// What the request handler decided for one watch.
pub struct WatchPlan {
    /// The watched resource (pods or events).
    pub resource: Resource,
    /// Its filter.
    pub select: Selector,
    /// Where it starts.
    pub start: Start,
    /// `timeoutSeconds` from the request's arrival.
    pub deadline: Instant,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// A watch fault to play ([`Fault::CutWatch`], [`Fault::ErrorEvent`]).
    pub fault: Option<Fault>,
    /// The log entry of the request (its `seq`) and the log's generation.
    pub seq: usize,
    /// `Shared::generation` when the watch started.
    pub generation: u64,
}

/// What a stream needs of the server.
#[derive(Clone)]
pub struct Handles {
    /// The server's state.
    pub shared: Arc<Mutex<Shared>>,
    /// Notified whenever a request was handled (the timeline may have moved).
    pub changed: Arc<Condvar>,
    /// Set when the server stops.
    pub stop: Arc<AtomicBool>,
}

/// A queued line.
enum Line {
    /// Written already.
    Text(Vec<u8>),
    /// This object's event, to write when sent.
    Event(Object),
}

/// One running watch: turns timeline transitions into event lines.
pub struct WatchStream {
    plan: WatchPlan,
    handles: Handles,
    /// The state the client holds once every queued line is sent.
    state: usize,
    /// Event type, version, and the line (an object's line is written when
    /// it is sent: the first of 10k events leaves before the last is made).
    queue: VecDeque<(&'static str, String, Line)>,
    sent: usize,
    finished: Option<WatchEnd>,
}

impl WatchStream {
    /// The stream for `plan`.
    pub fn new(plan: WatchPlan, handles: Handles) -> Self {
        let mut stream = Self {
            state: 0,
            queue: VecDeque::new(),
            sent: 0,
            finished: None,
            handles,
            plan,
        };
        match stream.plan.start.clone() {
            Start::After(index) => stream.state = index,
            Start::Snapshot(index) => {
                let objects = stream.objects(index);
                let version = resource_version(index);
                let selected: Vec<Object> = objects
                    .into_iter()
                    .filter(|o| (stream.plan.select)(o))
                    .collect();
                for object in selected {
                    stream
                        .queue
                        .push_back(("ADDED", version.clone(), Line::Event(object)));
                }
                stream.state = index;
            }
            Start::Error(status) => {
                stream.push("ERROR", error_line(&status), "");
                stream.finished = Some(WatchEnd::Error);
            }
        }
        stream
    }

    fn kind(&self) -> &'static str {
        self.plan.resource.kind()
    }

    fn push(&mut self, kind: &'static str, line: Vec<u8>, version: &str) {
        self.queue
            .push_back((kind, version.to_owned(), Line::Text(line)));
    }

    /// The objects of `resource` in state `index` (shared, not copied).
    fn objects(&self, index: usize) -> Vec<Object> {
        let shared = super::lock(&self.handles.shared);
        let state = &shared.states[index.min(shared.states.len() - 1)];
        match self.plan.resource {
            Resource::Events => state.events.clone(),
            _ => state.pods.clone(),
        }
    }

    /// Queue the events of every transition up to the present; false when
    /// the timeline has not moved.
    fn catch_up(&mut self) -> bool {
        let present = super::lock(&self.handles.shared).present();
        if present <= self.state {
            return false;
        }
        for next in self.state + 1..=present {
            let (before, after) = (self.objects(next - 1), self.objects(next));
            let version = resource_version(next);
            let events = changes(&before, &after, &self.plan.select);
            if events.is_empty() && self.plan.bookmarks {
                self.push("BOOKMARK", bookmark_line(self.kind(), &version), &version);
            }
            for (kind, object) in events {
                let line = Line::Event(object.clone());
                self.queue.push_back((kind, version.clone(), line));
            }
        }
        self.state = present;
        true
    }

    /// Record in the request log what was sent (the entry of this watch).
    fn record(
        &self,
        kind: Option<&'static str>,
        version: &str,
        bytes: usize,
        end: Option<WatchEnd>,
    ) {
        let mut shared = super::lock(&self.handles.shared);
        if shared.generation != self.plan.generation {
            return;
        }
        let seq = self.plan.seq;
        let Some(entry) = shared.log.iter_mut().rev().find(|e| e.seq == seq) else {
            return;
        };
        entry.bytes += bytes;
        let Some(watch) = entry.watch.as_mut() else {
            return;
        };
        if let Some(kind) = kind {
            watch.events.push(kind);
            if !version.is_empty() {
                watch.version = Some(version.to_owned());
            }
        }
        if end.is_some() {
            watch.end = end;
        }
    }

    fn end(&mut self, end: WatchEnd) -> Chunk {
        self.record(None, "", 0, Some(end));
        self.finished = Some(end);
        match end {
            WatchEnd::Cut => Chunk::Cut,
            _ => Chunk::End,
        }
    }

    /// The fault's line when it is due before the next event.
    fn fault_due(&mut self) -> Option<Chunk> {
        match self.plan.fault.clone()? {
            Fault::CutWatch(after) if self.sent >= after => Some(self.end(WatchEnd::Cut)),
            Fault::ErrorEvent {
                after,
                code,
                reason,
                message,
            } if self.sent >= after => {
                self.plan.fault = None;
                self.queue.clear();
                self.push(
                    "ERROR",
                    error_line(&status_json(code, &reason, &message)),
                    "",
                );
                self.finished = Some(WatchEnd::Error);
                None
            }
            _ => None,
        }
    }

    /// Wait for the timeline to move, the deadline, or the server to stop.
    fn wait(&self) {
        let shared = super::lock(&self.handles.shared);
        let now = Instant::now();
        let until = shared
            .next_advance()
            .map_or(self.plan.deadline, |at| at.min(self.plan.deadline));
        let timeout = until.saturating_duration_since(now);
        if !timeout.is_zero() {
            let _ = self.handles.changed.wait_timeout(shared, timeout);
        }
    }
}

impl Stream for WatchStream {
    fn next_chunk(&mut self) -> Chunk {
        loop {
            if self.handles.stop.load(Ordering::SeqCst) {
                return self.end(WatchEnd::Stopped);
            }
            if let Some(chunk) = self.fault_due() {
                return chunk;
            }
            if let Some((kind, version, line)) = self.queue.pop_front() {
                self.sent += 1;
                let bytes = match line {
                    Line::Text(bytes) => bytes,
                    Line::Event(object) => event_line(kind, self.kind(), &object, &version),
                };
                self.record(Some(kind), &version, bytes.len(), None);
                return Chunk::Data(bytes);
            }
            if let Some(end) = self.finished {
                return self.end(end);
            }
            if self.catch_up() {
                continue;
            }
            if Instant::now() >= self.plan.deadline {
                if self.plan.bookmarks {
                    let version = resource_version(self.state);
                    self.push("BOOKMARK", bookmark_line(self.kind(), &version), &version);
                }
                self.finished = Some(WatchEnd::Timeout);
                continue;
            }
            self.wait();
        }
    }

    fn client_gone(&mut self) {
        self.record(None, "", 0, Some(WatchEnd::ClientGone));
    }
}

/// The events from `before` to `after` of the objects `select` keeps.
pub fn changes<'a>(
    before: &'a [Object],
    after: &'a [Object],
    select: &dyn Fn(&Object) -> bool,
) -> Vec<(&'static str, &'a Object)> {
    let key = |o: &'a Object| (o.namespace(), o.name());
    let old: HashMap<(&str, &str), &Object> = before
        .iter()
        .filter(|o| select(o))
        .map(|o| (key(o), o))
        .collect();
    let mut events = Vec::new();
    let mut present = HashMap::with_capacity(after.len());
    for object in after {
        present.insert(key(object), object);
        if !select(object) {
            continue;
        }
        match old.get(&key(object)) {
            None => events.push(("ADDED", object)),
            Some(previous) if *previous != object => events.push(("MODIFIED", object)),
            Some(_) => {}
        }
    }
    for object in before.iter().filter(|o| select(o)) {
        match present.get(&key(object)) {
            // Gone: its last state. Still there but no longer selected:
            // its new state, as the apiserver sends it.
            None => events.push(("DELETED", object)),
            Some(now) if !select(now) => events.push(("DELETED", *now)),
            Some(_) => {}
        }
    }
    events
}

/// One event line: the object with `kind`/`apiVersion` first (Go's field
/// order) and its `metadata.resourceVersion` set to `version`.
pub fn event_line(kind: &str, object_kind: &str, object: &Object, version: &str) -> Vec<u8> {
    let mut value = object.value();
    if let Some(fields) = value.as_object_mut() {
        let metadata = fields
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert("resourceVersion".into(), version.into());
        }
    }
    let json = go_json(&value);
    let rest = json.strip_prefix('{').unwrap_or("}");
    let comma = if rest == "}" { "" } else { "," };
    format!(
        "{{\"type\":\"{kind}\",\"object\":{{\"kind\":\"{object_kind}\",\"apiVersion\":\"v1\"{comma}{rest}}}\n"
    )
    .into_bytes()
}

/// A BOOKMARK: an empty object of the kind with only the version, as the
/// apiserver (1.32) writes it for pods.
pub fn bookmark_line(object_kind: &str, version: &str) -> Vec<u8> {
    let body = if object_kind == "Pod" {
        r#","spec":{"containers":null},"status":{}"#
    } else {
        ""
    };
    format!(
        "{{\"type\":\"BOOKMARK\",\"object\":{{\"kind\":\"{object_kind}\",\"apiVersion\":\"v1\",\"metadata\":{{\"resourceVersion\":\"{version}\",\"creationTimestamp\":null}}{body}}}}}\n"
    )
    .into_bytes()
}

/// A `Status` in Go's field order (the order of an ERROR event's object).
pub fn status_json(code: u16, reason: &str, message: &str) -> String {
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":{},"reason":{},"code":{code}}}"#,
        go_json(&message),
        go_json(&reason)
    )
}

fn error_line(status: &str) -> Vec<u8> {
    format!("{{\"type\":\"ERROR\",\"object\":{status}}}\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, phase: &str) -> Object {
        Object::from_value(
            json!({"metadata": {"namespace": "ns", "name": name}, "status": {"phase": phase}}),
        )
    }

    #[test]
    fn transitions_become_events() {
        let before = [
            pod("a", "Pending"),
            pod("b", "Running"),
            pod("c", "Running"),
        ];
        let after = [
            pod("a", "Running"),
            pod("c", "Running"),
            pod("d", "Pending"),
        ];
        let names = |events: Vec<(&'static str, &Object)>| -> Vec<(&str, String)> {
            events
                .into_iter()
                .map(|(k, o)| (k, o.name().to_owned()))
                .collect()
        };
        assert_eq!(
            names(changes(&before, &after, &|_| true)),
            [
                ("MODIFIED", "a".into()),
                ("ADDED", "d".into()),
                ("DELETED", "b".into())
            ]
        );
        // A pod leaving a selection is DELETED (as its new self), one entering it ADDED.
        let pending = |o: &Object| o.value()["status"]["phase"] == "Pending";
        assert_eq!(
            names(changes(&before, &after, &pending)),
            [("ADDED", "d".into()), ("DELETED", "a".into())]
        );
        assert!(changes(&after, &after, &|_| true).is_empty());
    }

    #[test]
    fn lines_are_the_apiservers() {
        let line = event_line("ADDED", "Pod", &pod("a", "Pending"), "1003");
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"1003\"},\"status\":{\"phase\":\"Pending\"}}}\n"
        );
        let bookmark: Value = serde_json::from_slice(&bookmark_line("Pod", "1004")).unwrap();
        assert_eq!(bookmark["object"]["metadata"]["resourceVersion"], "1004");
        let error: Value =
            serde_json::from_slice(&error_line(&status_json(410, "Expired", "too old"))).unwrap();
        assert_eq!(error["object"]["code"], 410);
    }
}
