//! The request log: what kubectl asked, and what it got, for assertions
//! (how many pods lists were served, which state each one saw) and for
//! the load benchmark (the bytes each request was sent: [`LogEntry::json`]).

use super::fault::Fault;
use serde_json::{json, Value};
use std::time::Duration;

/// The resources the server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// `pods`
    Pods,
    /// `events`
    Events,
    /// `nodes`
    Nodes,
    /// `namespaces`
    Namespaces,
}

impl Resource {
    /// The plural name in URLs.
    pub fn plural(self) -> &'static str {
        match self {
            Self::Pods => "pods",
            Self::Events => "events",
            Self::Nodes => "nodes",
            Self::Namespaces => "namespaces",
        }
    }

    /// The object kind.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Pods => "Pod",
            Self::Events => "Event",
            Self::Nodes => "Node",
            Self::Namespaces => "Namespace",
        }
    }

    /// A resource by its plural name.
    pub fn from_plural(plural: &str) -> Option<Self> {
        [Self::Pods, Self::Events, Self::Nodes, Self::Namespaces]
            .into_iter()
            .find(|r| r.plural() == plural)
    }
}

/// One request and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// 1-based arrival number.
    pub seq: usize,
    /// When it arrived, since the server started (or was last reset).
    pub at: Duration,
    /// `GET`, …
    pub method: String,
    /// The path (decoded).
    pub path: String,
    /// The raw query string.
    pub query: String,
    /// The `limit` parameter, when it is a number.
    pub limit: Option<usize>,
    /// The `continue` parameter, when not empty.
    pub continue_token: Option<String>,
    /// The `Accept` header.
    pub accept: String,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The `Authorization` header (`Bearer …`), if any.
    pub authorization: Option<String>,
    /// The listed resource, for list requests.
    pub list: Option<Resource>,
    /// The page of a list request (1 = first request, 2 = first continue).
    pub page: Option<usize>,
    /// The timeline state the answer was taken from.
    pub state: Option<usize>,
    /// The list's `metadata.resourceVersion` in the answer.
    pub resource_version: Option<String>,
    /// The HTTP status sent (0 when the connection closed before headers).
    pub status: u16,
    /// The fault injected, if any.
    pub fault: Option<Fault>,
    /// Objects in the answer (items or rows).
    pub items: usize,
    /// Bytes of the body the server wrote (half of it for a fault that
    /// cuts it; 0 before headers); for a watch, the event lines sent so
    /// far (without the chunked framing).
    pub bytes: usize,
    /// For a watch request: what it asked and what it was sent so far.
    pub watch: Option<WatchLog>,
}

/// One watch: its parameters and the events the server sent on it (kept
/// up to date while the stream runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchLog {
    /// The `resourceVersion` asked for (as given; None when absent).
    pub from: Option<String>,
    /// `timeoutSeconds`, when a number.
    pub timeout_seconds: Option<u64>,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// The `type` of every event sent, in order (`ADDED`, `BOOKMARK`, …).
    pub events: Vec<&'static str>,
    /// The `resourceVersion` of the last event sent.
    pub version: Option<String>,
    /// How the stream ended (None while it runs).
    pub end: Option<WatchEnd>,
}

/// How a watch stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEnd {
    /// `timeoutSeconds` passed: the body ended cleanly.
    Timeout,
    /// An `ERROR` event was the last event; the body ended cleanly.
    Error,
    /// A [`Fault::CutWatch`]: the connection dropped mid-body.
    Cut,
    /// The client went away.
    ClientGone,
    /// The server stopped (dropped or reset).
    Stopped,
}

impl LogEntry {
    /// Whether the client got the whole answer with a 2xx status.
    pub fn succeeded(&self) -> bool {
        (200..300).contains(&self.status) && !self.fault.as_ref().is_some_and(Fault::is_failure)
    }

    /// A successful first page of a list of `resource`: what advances the timeline.
    pub fn is_list_start(&self, resource: Resource) -> bool {
        self.list == Some(resource) && self.page == Some(1) && self.succeeded()
    }

    /// Whether this is a watch whose stream still runs.
    pub fn is_running_watch(&self) -> bool {
        self.status == 200 && self.watch.as_ref().is_some_and(|w| w.end.is_none())
    }

    /// What the load benchmark reads (`replay-server --request-log`, one
    /// JSON object per line): the request and what the server sent.
    pub fn json(&self) -> Value {
        let watch = self.watch.as_ref().map(|w| {
            json!({
                "events": w.events.len(),
                "version": w.version,
                "end": w.end.map(|end| format!("{end:?}")),
            })
        });
        json!({
            "seq": self.seq,
            "at": self.at.as_secs_f64(),
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "status": self.status,
            "bytes": self.bytes,
            "items": self.items,
            "list": self.list.map(Resource::plural),
            "page": self.page,
            "state": self.state,
            "watch": watch,
        })
    }

    /// One line for humans (the replay-server binary prints these).
    pub fn line(&self) -> String {
        let query = if self.query.is_empty() {
            String::new()
        } else {
            format!("?{}", self.query)
        };
        let state = self.state.map_or(String::new(), |s| format!(" state={s}"));
        let version = self
            .resource_version
            .as_ref()
            .map_or(String::new(), |v| format!(" rv={v}"));
        let auth = if self.authorization.is_some() {
            " auth"
        } else {
            ""
        };
        let page = self.page.map_or(String::new(), |p| format!(" page={p}"));
        let fault = self
            .fault
            .as_ref()
            .map_or(String::new(), |f| format!(" fault={f:?}"));
        let table = if self.accept.contains("as=Table") {
            " table"
        } else {
            ""
        };
        let watch = self.watch.as_ref().map_or(String::new(), |w| {
            format!(
                " watch events={} last_rv={} end={:?}",
                w.events.len(),
                w.version.as_deref().unwrap_or("-"),
                w.end
            )
        });
        format!(
            "{:>4} {} {}{query} -> {}{state}{version}{page} items={} bytes={}{table}{auth}{fault}{watch}",
            self.seq, self.method, self.path, self.status, self.items, self.bytes
        )
    }
}
