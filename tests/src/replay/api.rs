//! The API: discovery, lists (JSON or Table, selectors, pagination pinned to
//! the state of the first page), watches ([`super::watch`]), single objects,
//! Status errors; the timeline and the fault rules, decided per request
//! under one lock.

use super::fault::{Fault, FaultRule, Target, Times};
use super::http::{Body, Delivery, Request, Response};
use super::log::{LogEntry, Resource, WatchLog};
use super::object::Object;
use super::select::{FieldSelector, Kind, LabelSelector};
use super::state::State;
use super::table::{self, IncludeObject, Printer};
use super::watch::{status_json, Selector, Start, WatchPlan};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// When the timeline moves to its next state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// After each successful first page of a pods list (the default).
    PodsLists,
    /// After each successful first page of a pods or events list.
    PodsAndEventsLists,
    /// By the clock: state k is the present from k periods after the start
    /// (or the last [`super::Server::reset`]) on; lists do not move it.
    Every(Duration),
}

/// A watch without `timeoutSeconds` ends after this long (the apiserver's
/// `--min-request-timeout` default; it picks between one and two times it).
pub const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// Settings that hold for a whole run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest page the server sends, whatever `limit` asks (None = `limit` only).
    pub page_size: Option<usize>,
    /// "Now" for the AGE columns, in seconds since the epoch.
    pub now: i64,
    /// `gitVersion` of `/version`: the google-cloud-sdk kubectl dispatcher
    /// picks the kubectl build from it.
    pub git_version: String,
    /// When the timeline advances.
    pub advance: Advance,
    /// The bearer token every request must carry (None = no check).
    pub token: Option<String>,
    /// How many states before the present a watch may start from (None =
    /// all); older versions get 410 Expired, as from a compacted watch cache.
    pub watch_history: Option<usize>,
}

/// Everything the connection threads share.
#[derive(Debug)]
pub struct Shared {
    /// The timeline.
    pub states: Vec<State>,
    /// The state the next first page is taken from.
    pub current: usize,
    /// Fault rules with how often each fired.
    pub rules: Vec<(FaultRule, usize)>,
    /// Every request so far.
    pub log: Vec<LogEntry>,
    /// Run settings.
    pub config: Config,
    /// `host:port` of the server, for `/api`.
    pub address: String,
    /// When the clock of [`Advance::Every`] started.
    pub started: Instant,
    /// Bumped by each reset: a watch of an earlier run logs nothing more.
    pub generation: u64,
}

/// Where a path leads.
enum Route {
    Version,
    Api,
    Apis,
    ApiV1,
    List(Resource, Option<String>),
    Get(Resource, Option<String>, String),
    /// An apps/v1 list, by the kind of its objects: of every namespace,
    /// or of one.
    Workloads(&'static str, Option<String>),
    Unknown,
}

/// The apps/v1 lists served (issue 30): plural, kind.
const WORKLOADS: [(&str, &str); 4] = [
    ("replicasets", "ReplicaSet"),
    ("statefulsets", "StatefulSet"),
    ("daemonsets", "DaemonSet"),
    ("deployments", "Deployment"),
];

fn route(path: &str) -> Route {
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let namespaced = |r: &str| {
        Resource::from_plural(r).filter(|r| matches!(r, Resource::Pods | Resource::Events))
    };
    match parts[..] {
        ["version"] => Route::Version,
        ["api"] => Route::Api,
        ["apis"] => Route::Apis,
        ["api", "v1"] => Route::ApiV1,
        ["api", "v1", r] => {
            Resource::from_plural(r).map_or(Route::Unknown, |r| Route::List(r, None))
        }
        ["api", "v1", "namespaces", ns, r] => {
            namespaced(r).map_or(Route::Unknown, |r| Route::List(r, Some(ns.to_owned())))
        }
        ["api", "v1", "namespaces", ns, r, name] => namespaced(r).map_or(Route::Unknown, |r| {
            Route::Get(r, Some(ns.to_owned()), name.to_owned())
        }),
        ["api", "v1", r @ ("nodes" | "namespaces"), name] => Resource::from_plural(r)
            .map_or(Route::Unknown, |r| Route::Get(r, None, name.to_owned())),
        ["apis", "apps", "v1", r] => WORKLOADS
            .iter()
            .find(|(plural, _)| *plural == r)
            .map_or(Route::Unknown, |(_, kind)| Route::Workloads(kind, None)),
        ["apis", "apps", "v1", "namespaces", ns, r] => WORKLOADS
            .iter()
            .find(|(plural, _)| *plural == r)
            .map_or(Route::Unknown, |(_, kind)| {
                Route::Workloads(kind, Some(ns.to_owned()))
            }),
        _ => Route::Unknown,
    }
}

/// What the client asked for in `Accept`.
enum Format {
    Json,
    Table(&'static str),
}

/// Scan the Accept entries in order, like the apiserver: a Table when an
/// entry asks for one, plain JSON for `application/json` or `*/*`.
fn negotiate(accept: Option<&str>) -> Option<Format> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Some(Format::Json);
    };
    for entry in accept.split(',') {
        let mut params = entry.split(';').map(str::trim);
        let media = params.next().unwrap_or("");
        let params: Vec<(&str, &str)> = params.filter_map(|p| p.split_once('=')).collect();
        let get = |key: &str| params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        if get("g") == Some("apidiscovery.k8s.io") {
            continue;
        }
        if !matches!(media, "application/json" | "*/*" | "application/*") {
            continue;
        }
        match (get("as"), get("g"), get("v")) {
            (None, _, _) => return Some(Format::Json),
            (Some("Table"), Some("meta.k8s.io"), Some("v1")) => return Some(Format::Table("v1")),
            (Some("Table"), Some("meta.k8s.io"), Some("v1beta1")) => {
                return Some(Format::Table("v1beta1"))
            }
            _ => continue,
        }
    }
    None
}

/// A `Status` error object.
pub fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

fn status_response(code: u16, reason: &str, message: &str) -> Response {
    Response::json(code, &status(code, reason, message))
}

/// What one request turned into, before the fault rules.
struct Answer {
    response: Response,
    list: Option<Resource>,
    page: Option<usize>,
    state: Option<usize>,
    resource_version: Option<String>,
    items: usize,
    /// A watch request: the resource watched, the log record, the plan.
    watch: Option<(Resource, WatchLog, Option<WatchPlan>)>,
}

impl Answer {
    fn plain(response: Response) -> Self {
        Self {
            response,
            list: None,
            page: None,
            state: None,
            resource_version: None,
            items: 0,
            watch: None,
        }
    }
}

/// The `resourceVersion` of timeline state `index`: distinct, increasing.
/// (`index` = the number of states names the version no state has, which
/// [`Fault::OtherVersion`] serves when the timeline has not moved.)
pub fn resource_version(index: usize) -> String {
    (1000 + index).to_string()
}

impl Shared {
    /// Answer one request: route it, apply the first matching fault rule,
    /// log it, and advance the timeline after a served first page.
    pub fn handle(&mut self, request: &Request) -> (Response, Delivery, Option<WatchPlan>) {
        self.tick();
        let seq = self.log.len() + 1;
        let mut answer = self.answer(request, None, false);
        let fault = self.fire(seq, &answer, &request.path);
        let delivery = match &fault {
            None => Delivery::Normal,
            Some(Fault::OtherVersion) => {
                if let Some(pinned) = answer.state {
                    let other = if pinned == self.current {
                        self.states.len()
                    } else {
                        self.current
                    };
                    answer = self.answer(request, Some(other), false);
                }
                Delivery::Normal
            }
            Some(Fault::Endless) => {
                if answer.list.is_some() && answer.response.status == 200 {
                    answer = self.answer(request, None, true);
                }
                Delivery::Normal
            }
            Some(Fault::Status {
                code,
                reason,
                message,
                retry_after,
            }) => {
                answer.response = self.fault_status(*code, reason, message, &answer);
                if let Some(secs) = retry_after {
                    answer
                        .response
                        .headers
                        .push(("Retry-After".into(), secs.to_string()));
                }
                Delivery::Normal
            }
            Some(Fault::CloseBeforeHeaders) => Delivery::CloseBeforeHeaders,
            Some(Fault::CloseMidBody) => Delivery::CloseMidBody,
            Some(Fault::StallMidBody(d)) => Delivery::StallMidBody(*d),
            Some(Fault::TruncatedBody) => Delivery::Truncated,
            Some(Fault::Delay(d)) => Delivery::Delayed(*d),
            Some(watch_fault @ (Fault::CutWatch(_) | Fault::ErrorEvent { .. })) => {
                if let Some((_, _, Some(plan))) = answer.watch.as_mut() {
                    plan.fault = Some(watch_fault.clone());
                }
                Delivery::Normal
            }
        };
        let (watch_log, mut plan) = match answer.watch.take() {
            Some((_, log, plan)) => (Some(log), plan),
            None => (None, None),
        };
        // Only a watch whose 200 head goes out streams.
        if answer.response.status != 200 || delivery == Delivery::CloseBeforeHeaders {
            plan = None;
        }
        if let Some(plan) = plan.as_mut() {
            plan.seq = seq;
            plan.generation = self.generation;
        }
        let bytes = delivery.body_bytes(answer.response.body.len());
        let entry = LogEntry {
            seq,
            at: self.started.elapsed(),
            method: request.method.clone(),
            path: request.path.clone(),
            query: request.raw_query.clone(),
            limit: request.param("limit").and_then(|l| l.parse().ok()),
            continue_token: request
                .param("continue")
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            accept: request.header("accept").unwrap_or("").to_owned(),
            user_agent: request.header("user-agent").unwrap_or("").to_owned(),
            authorization: request.header("authorization").map(str::to_owned),
            list: answer.list,
            page: answer.page,
            state: answer.state,
            resource_version: answer.resource_version.take(),
            status: if delivery == Delivery::CloseBeforeHeaders {
                0
            } else {
                answer.response.status
            },
            fault,
            items: answer.items,
            bytes,
            watch: watch_log,
        };
        self.advance_after(&entry);
        self.log.push(entry);
        (answer.response, delivery, plan)
    }

    /// The state the timeline is at now (the next list's first page).
    pub fn present(&self) -> usize {
        match self.config.advance {
            Advance::Every(period) if !period.is_zero() => {
                let periods = self.started.elapsed().as_nanos() / period.as_nanos();
                let last = self.states.len() - 1;
                usize::try_from(periods).map_or(last, |p| p.min(last))
            }
            _ => self.current,
        }
    }

    /// Move `current` to the present of a clock-driven timeline.
    pub fn tick(&mut self) {
        self.current = self.current.max(self.present());
    }

    /// When a clock-driven timeline moves next (None: not by the clock, or
    /// at its last state).
    pub fn next_advance(&self) -> Option<Instant> {
        match self.config.advance {
            Advance::Every(period) if self.present() + 1 < self.states.len() => {
                let next = u32::try_from(self.present() + 1).ok()?;
                Some(self.started + period.checked_mul(next)?)
            }
            _ => None,
        }
    }

    fn fault_status(&self, code: u16, reason: &str, message: &str, answer: &Answer) -> Response {
        let mut body = status(code, reason, message);
        // The apiserver's 410 carries a token to continue inconsistently.
        if code == 410 {
            body["metadata"] =
                json!({"continue": format!("inconsistent.{}", answer.page.unwrap_or(1))});
        }
        Response::json(code, &body)
    }

    fn advance_after(&mut self, entry: &LogEntry) {
        let advances = match self.config.advance {
            // Only the clock moves it ([`Self::tick`]).
            Advance::Every(period) if !period.is_zero() => false,
            Advance::PodsLists | Advance::Every(_) => entry.is_list_start(Resource::Pods),
            Advance::PodsAndEventsLists => {
                entry.is_list_start(Resource::Pods) || entry.is_list_start(Resource::Events)
            }
        };
        if advances && self.current + 1 < self.states.len() {
            self.current += 1;
        }
    }

    /// The first rule that aims at this request and has shots left.
    fn fire(&mut self, seq: usize, answer: &Answer, path: &str) -> Option<Fault> {
        let hit = |target: &Target| match *target {
            Target::PodsPage(n) => answer.list == Some(Resource::Pods) && answer.page == Some(n),
            Target::PodsList => answer.list == Some(Resource::Pods),
            Target::EventsList => answer.list == Some(Resource::Events),
            Target::Request(n) => n == seq,
            Target::PodsWatch => matches!(answer.watch, Some((Resource::Pods, _, _))),
            Target::Workloads(plural) => {
                path.starts_with("/apis/apps/v1/") && path.rsplit('/').next() == Some(plural)
            }
        };
        let (rule, fired) = self.rules.iter_mut().find(|(rule, fired)| {
            hit(&rule.target)
                && match rule.times {
                    Times::Always => true,
                    Times::First(n) => *fired < n,
                }
        })?;
        *fired += 1;
        Some(rule.fault.clone())
    }

    /// `other_state`: serve a list page from this state instead of the one
    /// its continue token is pinned to.
    /// `endless`: a list page carries a continue token even past its last
    /// item ([`Fault::Endless`]).
    fn answer(&self, request: &Request, other_state: Option<usize>, endless: bool) -> Answer {
        if let Some(token) = &self.config.token {
            if request.header("authorization") != Some(&format!("Bearer {token}")) {
                return Answer::plain(status_response(401, "Unauthorized", "Unauthorized"));
            }
        }
        if request.method != "GET" {
            return Answer::plain(status_response(
                405,
                "MethodNotAllowed",
                "replay: only GET is served",
            ));
        }
        let format = negotiate(request.header("accept"));
        match (route(&request.path), format) {
            (Route::List(resource, ns), _) if is_watch(request) => {
                self.watch(request, resource, ns.as_deref())
            }
            (_, None) => Answer::plain(status_response(
                406,
                "NotAcceptable",
                "only application/json and meta.k8s.io Tables are served",
            )),
            (Route::Version, _) => Answer::plain(Response::json(200, &self.version())),
            (Route::Api, _) => Answer::plain(Response::json(200, &self.api_versions())),
            (Route::Apis, _) => Answer::plain(Response::json(
                200,
                &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []}),
            )),
            (Route::ApiV1, _) => Answer::plain(Response::json(200, &resource_list())),
            (Route::List(resource, ns), Some(format)) => self.list(
                request,
                resource,
                ns.as_deref(),
                &format,
                (other_state, endless),
            ),
            (Route::Get(resource, ns, name), Some(format)) => {
                Answer::plain(self.get(request, resource, ns.as_deref(), &name, &format))
            }
            (Route::Workloads(kind, ns), Some(Format::Json)) => {
                Answer::plain(self.workloads(request, kind, ns.as_deref()))
            }
            (Route::Workloads(..), Some(Format::Table(_))) => Answer::plain(status_response(
                406,
                "NotAcceptable",
                "replay: the workloads are served as JSON only",
            )),
            (Route::Unknown, _) => Answer::plain(status_response(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )),
        }
    }

    fn version(&self) -> Value {
        let minor = self
            .config
            .git_version
            .trim_start_matches('v')
            .split('.')
            .nth(1)
            .unwrap_or("32")
            .to_owned();
        json!({"major": "1", "minor": minor, "gitVersion": self.config.git_version,
               "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
               "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc",
               "platform": "linux/amd64"})
    }

    fn api_versions(&self) -> Value {
        json!({"kind": "APIVersions", "versions": ["v1"],
               "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.address}]})
    }

    /// The objects of `resource` in state `index` (nodes and namespaces are
    /// derived from the pods: enough for `kubectl get nodes|namespaces`).
    /// The index past the last state serves the last state's objects.
    /// Pods and events are borrowed: a page request does not touch the
    /// other 150k objects of the state.
    fn objects(&self, resource: Resource, index: usize) -> Cow<'_, [Object]> {
        let state = &self.states[index.min(self.states.len() - 1)];
        let names = |derive: &dyn Fn(&Object) -> Option<String>| -> BTreeSet<String> {
            state
                .pods
                .iter()
                .filter_map(derive)
                .filter(|n| !n.is_empty())
                .collect()
        };
        match resource {
            Resource::Pods => Cow::Borrowed(&state.pods),
            Resource::Events => Cow::Borrowed(&state.events),
            Resource::Nodes => names(&|pod: &Object| {
                pod.value()
                    .pointer("/spec/nodeName")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .into_iter()
            .map(|n| Object::from_value(json!({"metadata": {"name": n}})))
            .collect(),
            Resource::Namespaces => names(&|pod: &Object| Some(pod.namespace().to_owned()))
                .into_iter()
                .map(|n| {
                    Object::from_value(
                        json!({"metadata": {"name": n}, "status": {"phase": "Active"}}),
                    )
                })
                .collect(),
        }
    }

    /// An apps/v1 list (issue 30): the workloads of `kind` of the present
    /// state, or with `resourceVersion=RV&resourceVersionMatch=Exact` of the
    /// state at RV: 410 once it is compacted (older than the watch history
    /// keeps, as etcd compacts), 504 past the present, as the apiserver.
    /// `limit` and `continue` page it, pinned to its state. A kind the
    /// present state forbids ([`State::forbidden_workloads`]) is a 403.
    fn workloads(&self, request: &Request, kind: &str, ns: Option<&str>) -> Response {
        let present = self.present();
        if self.states[present.min(self.states.len() - 1)]
            .forbidden_workloads
            .iter()
            .any(|k| k == kind)
        {
            let plural = format!("{}s", kind.to_lowercase());
            let message = format!(
                "{plural}.apps is forbidden: User \"replay\" cannot list resource \"{plural}\""
            );
            return status_response(403, "Forbidden", &message);
        }
        let mut index = present;
        if let Some(token) = request.param("continue").filter(|c| !c.is_empty()) {
            match parse_token(token).filter(|(s, _, _)| *s < self.states.len()) {
                Some((state, _, _)) => index = state,
                None => return status_response(400, "BadRequest", "continue key is not valid"),
            }
        } else if let Some(asked) = request.param("resourceVersion").filter(|v| !v.is_empty()) {
            if request.param("resourceVersionMatch") != Some("Exact") {
                return status_response(
                    400,
                    "BadRequest",
                    "replay: only resourceVersionMatch=Exact is served",
                );
            }
            let Some(asked) = (0..self.states.len()).find(|&i| resource_version(i) == asked) else {
                let message = format!(
                    "Too large resource version: {asked}, current: {}",
                    resource_version(present)
                );
                return status_response(504, "Timeout", &message);
            };
            let first = self
                .config
                .watch_history
                .map_or(0, |kept| present.saturating_sub(kept));
            if asked < first {
                let message = "The resourceVersion for the provided list is too old.";
                return status_response(410, "Expired", message);
            }
            index = asked;
        }
        let offset = request
            .param("continue")
            .and_then(parse_token)
            .map_or(0, |(_, offset, _)| offset);
        let page = request
            .param("continue")
            .and_then(parse_token)
            .map_or(1, |(_, _, page)| page);
        let state = &self.states[index.min(self.states.len() - 1)];
        let all: Vec<&Object> = state
            .workloads
            .iter()
            .filter(|(k, o)| k == kind && ns.is_none_or(|ns| o.namespace() == ns))
            .map(|(_, o)| o)
            .collect();
        let size = request
            .param("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|&l| l > 0)
            .unwrap_or(usize::MAX);
        let start = offset.min(all.len());
        let end = start.saturating_add(size).min(all.len());
        let metadata = ListMeta {
            resource_version: resource_version(index),
            next: (end < all.len()).then(|| (token(index, end, page + 1), Some(all.len() - end))),
        };
        list_response(kind, "apps/v1", &metadata, &all[start..end])
    }

    /// A watch request: its log record and, for a 200, the stream's plan.
    fn watch(&self, request: &Request, resource: Resource, namespace: Option<&str>) -> Answer {
        let timeout_param = request.param("timeoutSeconds").filter(|t| !t.is_empty());
        let record = WatchLog {
            from: request.param("resourceVersion").map(str::to_owned),
            timeout_seconds: timeout_param.and_then(|t| t.parse().ok()),
            bookmarks: request.param("allowWatchBookmarks") == Some("true"),
            events: Vec::new(),
            version: None,
            end: None,
        };
        let mut answer = Answer::plain(Response {
            status: 200,
            headers: Vec::new(),
            body: Body::default(),
        });
        let refuse = |mut answer: Answer, response: Response, record: WatchLog| {
            answer.response = response;
            answer.watch = Some((resource, record, None));
            answer
        };
        if !matches!(resource, Resource::Pods | Resource::Events) {
            let response = status_response(
                405,
                "MethodNotAllowed",
                "replay: only pods and events are watched",
            );
            return refuse(answer, response, record);
        }
        if matches!(
            negotiate(request.header("accept")),
            Some(Format::Table(_)) | None
        ) {
            let response = status_response(
                406,
                "NotAcceptable",
                "replay: watches are served as JSON only",
            );
            return refuse(answer, response, record);
        }
        let select: Selector = match self.select(request, resource, namespace) {
            Ok(select) => select,
            Err(response) => return refuse(answer, response, record),
        };
        let timeout = match timeout_param.map(str::parse::<u64>) {
            None => DEFAULT_WATCH_TIMEOUT,
            Some(Ok(secs)) => Duration::from_secs(secs),
            Some(Err(e)) => {
                let response =
                    status_response(400, "BadRequest", &format!("invalid timeoutSeconds: {e}"));
                return refuse(answer, response, record);
            }
        };
        let start = match self.watch_start(record.from.as_deref()) {
            Ok(start) => start,
            Err(response) => return refuse(answer, response, record),
        };
        answer.state = match start {
            Start::After(index) | Start::Snapshot(index) => Some(index),
            Start::Error(_) => None,
        };
        let plan = WatchPlan {
            resource,
            select,
            start,
            deadline: Instant::now() + timeout,
            bookmarks: record.bookmarks,
            fault: None,
            seq: 0,
            generation: 0,
        };
        answer.watch = Some((resource, record, Some(plan)));
        answer
    }

    /// Where a watch from `version` starts: after its state, from a
    /// snapshot (no version, or "0": any), or with an ERROR event (older
    /// than the window: 410; past the timeline's end: 504 as the apiserver
    /// answers a version it never reaches). A version that is no number
    /// is a 400.
    fn watch_start(&self, version: Option<&str>) -> Result<Start, Response> {
        let present = self.present();
        let asked = match version.filter(|v| !v.is_empty() && *v != "0") {
            None => return Ok(Start::Snapshot(present)),
            Some(v) => v.parse::<u64>().map_err(|_| {
                status_response(
                    400,
                    "BadRequest",
                    &format!("invalid resource version: {v:?}"),
                )
            })?,
        };
        let oldest = self
            .config
            .watch_history
            .map_or(0, |h| present.saturating_sub(h));
        let first = 1000 + oldest as u64;
        let Some(index) = asked
            .checked_sub(1000)
            .and_then(|i| usize::try_from(i).ok())
        else {
            return Ok(Start::Error(too_old(asked, first)));
        };
        if index < oldest {
            return Ok(Start::Error(too_old(asked, first)));
        }
        if index >= self.states.len() {
            let message = format!(
                "Too large resource version: {asked}, current: {}",
                resource_version(present)
            );
            return Ok(Start::Error(status_json(504, "Timeout", &message)));
        }
        Ok(Start::After(index))
    }

    fn list(
        &self,
        request: &Request,
        resource: Resource,
        namespace: Option<&str>,
        format: &Format,
        (other_state, endless): (Option<usize>, bool),
    ) -> Answer {
        let mut answer = Answer::plain(Response::json(200, &Value::Null));
        answer.list = Some(resource);
        let selected = match self.select(request, resource, namespace) {
            Ok(selected) => selected,
            Err(response) => {
                answer.page = Some(1);
                answer.response = response;
                return answer;
            }
        };
        let (index, offset, page) = match request.param("continue").filter(|c| !c.is_empty()) {
            None => (self.current, 0, 1),
            Some(token) => match parse_token(token).filter(|(s, _, _)| *s <= self.states.len()) {
                Some(pinned) => pinned,
                None => {
                    answer.page = Some(2);
                    answer.response = status_response(
                        400,
                        "BadRequest",
                        "continue key is not valid: replay: unknown token",
                    );
                    return answer;
                }
            },
        };
        let index = other_state.unwrap_or(index);
        let version = resource_version(index);
        answer.page = Some(page);
        answer.state = Some(index);
        answer.resource_version = Some(version.clone());
        let all = self.objects(resource, index);
        let matching: Vec<&Object> = all.iter().filter(|o| selected(o)).collect();
        let limit = match request.param("limit").map(str::parse::<usize>) {
            None => None,
            Some(Ok(0)) => None,
            Some(Ok(n)) => Some(n),
            Some(Err(_)) => {
                answer.response =
                    status_response(400, "BadRequest", "limit must be a non-negative integer");
                return answer;
            }
        };
        let size = [limit, self.config.page_size]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(usize::MAX);
        let start = offset.min(matching.len());
        let end = start.saturating_add(size).min(matching.len());
        let page_items = &matching[start..end];
        let metadata = ListMeta {
            resource_version: version,
            next: (endless || end < matching.len()).then(|| {
                let remaining = (!has_selectors(request)).then(|| matching.len() - end);
                (token(index, end, page + 1), remaining)
            }),
        };
        answer.items = page_items.len();
        answer.response = match format {
            Format::Json => list_response(resource.kind(), "v1", &metadata, page_items),
            Format::Table(version) => match IncludeObject::parse(request.param("includeObject")) {
                Ok(include) => {
                    let values: Vec<Value> = page_items.iter().map(|o| o.value()).collect();
                    Response::json(
                        200,
                        &table::table(
                            printer(resource),
                            resource.kind(),
                            &values.iter().collect::<Vec<_>>(),
                            include,
                            version,
                            self.config.now,
                            metadata.to_value(),
                        ),
                    )
                }
                Err(e) => status_response(400, "BadRequest", &e),
            },
        };
        answer
    }

    /// The filter of a list request: namespace, field and label selectors.
    #[allow(clippy::type_complexity)]
    fn select(
        &self,
        request: &Request,
        resource: Resource,
        namespace: Option<&str>,
    ) -> Result<Selector, Response> {
        let kind = match resource {
            Resource::Pods => Kind::Pods,
            Resource::Events => Kind::Events,
            Resource::Nodes => Kind::Nodes,
            Resource::Namespaces => Kind::Namespaces,
        };
        let fields = FieldSelector::parse(request.param("fieldSelector").unwrap_or(""), kind)
            .map_err(|e| status_response(400, "BadRequest", &e))?;
        let labels = LabelSelector::parse(request.param("labelSelector").unwrap_or(""))
            .map_err(|e| status_response(400, "BadRequest", &e))?;
        let namespace = namespace.map(str::to_owned);
        // Most lists have no selector: no object is parsed for those.
        let unselective = fields.is_empty() && labels.is_empty();
        Ok(Box::new(move |object: &Object| {
            let in_namespace = namespace
                .as_deref()
                .is_none_or(|ns| object.namespace() == ns);
            in_namespace
                && (unselective || {
                    let value = object.value();
                    fields.matches(&value) && labels.matches(&value)
                })
        }))
    }

    fn get(
        &self,
        request: &Request,
        resource: Resource,
        namespace: Option<&str>,
        name: &str,
        format: &Format,
    ) -> Response {
        let objects = self.objects(resource, self.current);
        let found = objects
            .iter()
            .find(|o| o.name() == name && namespace.is_none_or(|ns| o.namespace() == ns))
            .map(Object::value);
        let Some(object) = found else {
            let mut body = status(
                404,
                "NotFound",
                &format!("{} \"{name}\" not found", resource.plural()),
            );
            body["details"] = json!({"name": name, "kind": resource.plural()});
            return Response::json(404, &body);
        };
        match format {
            Format::Json => {
                let mut object = object;
                object["kind"] = resource.kind().into();
                object["apiVersion"] = "v1".into();
                Response::json(200, &object)
            }
            Format::Table(version) => match IncludeObject::parse(request.param("includeObject")) {
                Ok(include) => Response::json(
                    200,
                    &table::table(
                        printer(resource),
                        resource.kind(),
                        &[&object],
                        include,
                        version,
                        self.config.now,
                        json!({"resourceVersion": resource_version(self.current)}),
                    ),
                ),
                Err(e) => status_response(400, "BadRequest", &e),
            },
        }
    }
}

/// `watch=1|true|t` (Go's boolean forms).
fn is_watch(request: &Request) -> bool {
    matches!(
        request.param("watch"),
        Some("1" | "t" | "T" | "true" | "TRUE" | "True")
    )
}

/// The apiserver's ERROR Status for a watch from a compacted version.
fn too_old(asked: u64, first: u64) -> String {
    let message = format!(
        "too old resource version: {asked} ({})",
        first.saturating_sub(1)
    );
    status_json(410, "Expired", &message)
}

/// A list's `metadata`: its version, and for all but the last page the
/// continue token and (without selectors) how many items remain.
struct ListMeta {
    resource_version: String,
    next: Option<(String, Option<usize>)>,
}

impl ListMeta {
    /// The JSON in the apiserver's field order (ListMeta's Go struct order).
    fn json(&self) -> String {
        let mut json = format!(r#"{{"resourceVersion":"{}""#, self.resource_version);
        if let Some((token, remaining)) = &self.next {
            json.push_str(&format!(r#","continue":"{token}""#));
            if let Some(remaining) = remaining {
                json.push_str(&format!(r#","remainingItemCount":{remaining}"#));
            }
        }
        json.push('}');
        json
    }

    fn to_value(&self) -> Value {
        serde_json::from_str(&self.json()).expect("list metadata is JSON")
    }
}

/// A `…List` as the apiserver writes it: compact, `kind`, `apiVersion`,
/// `metadata`, `items` in that order, a newline after it (Go's
/// `json.Encoder`); the items are the stored objects, not copies.
/// `kind` and `api_version` are the items' (`Pod`, `v1`; `Deployment`,
/// `apps/v1`).
fn list_response(
    kind: &str,
    api_version: &str,
    metadata: &ListMeta,
    items: &[&Object],
) -> Response {
    let mut body = Body::default();
    body.push(
        format!(
            r#"{{"kind":"{kind}List","apiVersion":"{api_version}","metadata":{},"items":["#,
            metadata.json()
        )
        .into_bytes(),
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            body.push_static(b",");
        }
        body.push_object(item);
    }
    body.push_static(b"]}\n");
    Response {
        status: 200,
        headers: Vec::new(),
        body,
    }
}

fn printer(resource: Resource) -> Printer {
    match resource {
        Resource::Pods => Printer::Pods,
        Resource::Events => Printer::Events,
        Resource::Nodes | Resource::Namespaces => Printer::NameAge,
    }
}

fn has_selectors(request: &Request) -> bool {
    ["fieldSelector", "labelSelector"]
        .iter()
        .any(|p| request.param(p).is_some_and(|v| !v.is_empty()))
}

/// A continue token: the pinned state, the offset of the next item, the next page.
fn token(state: usize, offset: usize, page: usize) -> String {
    format!("replay.{state}.{offset}.{page}")
}

fn parse_token(token: &str) -> Option<(usize, usize, usize)> {
    let mut parts = token
        .strip_prefix("replay.")?
        .split('.')
        .map(str::parse::<usize>);
    let (state, offset, page) = (
        parts.next()?.ok()?,
        parts.next()?.ok()?,
        parts.next()?.ok()?,
    );
    parts.next().is_none().then_some((state, offset, page))
}

/// `/api/v1`: the resources `kubectl get` needs.
fn resource_list() -> Value {
    let verbs = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let resource = |name: &str, singular: &str, kind: &str, namespaced: bool, short: &str| {
        json!({"name": name, "singularName": singular, "namespaced": namespaced, "kind": kind,
               "verbs": verbs, "shortNames": [short]})
    };
    json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        resource("events", "event", "Event", true, "ev"),
        resource("namespaces", "namespace", "Namespace", false, "ns"),
        resource("nodes", "node", "Node", false, "no"),
        resource("pods", "pod", "Pod", true, "po"),
    ]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        assert_eq!(parse_token(&token(3, 500, 2)), Some((3, 500, 2)));
        assert_eq!(parse_token("replay.1.2"), None);
        assert_eq!(parse_token("abc"), None);
    }

    #[test]
    fn accept_headers() {
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert!(matches!(negotiate(Some(table)), Some(Format::Table("v1"))));
        assert!(matches!(
            negotiate(Some("application/json, */*")),
            Some(Format::Json)
        ));
        assert!(matches!(negotiate(None), Some(Format::Json)));
        assert!(negotiate(Some("text/plain")).is_none());
        let disco =
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
        assert!(matches!(negotiate(Some(disco)), Some(Format::Json)));
    }
}
