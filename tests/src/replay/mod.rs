//! A replay API server: the real `kubectl` talks to it as to a cluster.
//!
//! It serves discovery, pods/events lists (JSON or server-side Tables, field
//! and label selectors, `limit`/`continue` pagination pinned to the state of
//! the first page) from a *timeline* of recorded states, moving to the next
//! state after each successful first page of a pods list, so the N-th
//! `kubectl get pods` sees state N-1 and the last state sticks, or by the
//! clock ([`Advance::Every`]). Watches (`?watch=1`) stream the events
//! between consecutive states ([`watch`]). Fault rules break chosen answers
//! (error Statuses, closed connections, cut bodies, slow answers, cut
//! watches, ERROR events). Every request is logged for assertions.
//!
//! ```no_run
//! use verify_pods_tests::replay::{KubeEnv, Server, State};
//!
//! let server = Server::builder().state(State::default()).start().unwrap();
//! let env = KubeEnv::new(&server.url()).unwrap();
//! let out = env.kubectl().args(["get", "pods", "-A", "-o", "json"]).output().unwrap();
//! assert!(out.status.success());
//! assert_eq!(server.pods_lists().len(), 1);
//! ```
//!
//! The server runs in-process on `127.0.0.1:0`: a thread accepts, a thread
//! per connection answers (HTTP/1.1 keep-alive, TCP_NODELAY, head and body in
//! full buffers). Lists are what `kubectl get --raw '/api/v1/pods?limit=N'`
//! receives from a real apiserver: a compact `PodList`, each timeline state
//! with its own `resourceVersion` (1000, 1001, …). Objects are stored as
//! their compact JSON, once across the timeline ([`object`]), and pages are
//! written from them without copies: 150k kubectl-shaped pods fit.
//!
//! With [`Builder::tls`] it serves https with a fresh self-signed
//! certificate ([`Server::ca_pem`]): kubectl applies a kubeconfig's user
//! (a token, an exec credential plugin) only over TLS. [`Builder::token`]
//! makes every request without that bearer token a 401.

mod api;
pub mod client;
pub mod coherence;
pub mod expect;
pub mod fault;
pub mod fixtures;
mod http;
pub mod log;
pub mod object;
pub mod select;
pub mod state;
pub mod table;
mod tls;
pub mod watch;

pub use api::{Advance, Config};
pub use client::{generated_wrapper, in_parallel, kubectl_binary, KubeEnv};
pub use client::{ExecPlugin, KubeOptions};
pub use fault::{Fault, FaultRule, Target, Times};
pub use log::{LogEntry, Resource, WatchEnd, WatchLog};
pub use object::Object;
pub use state::State;

use api::Shared;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Instant;

/// The fixed "now" of the AGE columns unless told otherwise.
pub const DEFAULT_NOW: &str = "2025-01-01T12:00:00Z";
/// `/version` unless told otherwise: 1.32 makes the google-cloud-sdk
/// dispatcher run its built-in kubectl instead of exec'ing another build.
pub const DEFAULT_GIT_VERSION: &str = "v1.32.0";

/// How to start a server.
#[derive(Debug, Clone)]
pub struct Builder {
    states: Vec<State>,
    rules: Vec<FaultRule>,
    config: Config,
    port: u16,
    tls: bool,
}

impl Builder {
    /// Add a state to the timeline.
    pub fn state(mut self, state: State) -> Self {
        self.states.push(state);
        self
    }

    /// Add several states to the timeline.
    pub fn states(mut self, states: impl IntoIterator<Item = State>) -> Self {
        self.states.extend(states);
        self
    }

    /// Add a fault rule (the first matching rule with shots left fires).
    pub fn fault(mut self, rule: FaultRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Never send more than `n` items per page, whatever `limit` says.
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = Some(n);
        self
    }

    /// "Now" for the AGE columns (RFC 3339).
    pub fn now(mut self, now: &str) -> Result<Self, String> {
        self.config.now =
            table::parse_time(now).ok_or_else(|| format!("not an RFC 3339 time: {now:?}"))?;
        Ok(self)
    }

    /// "Now" for the AGE columns, in seconds since the epoch.
    pub fn now_seconds(mut self, now: i64) -> Self {
        self.config.now = now;
        self
    }

    /// The `gitVersion` `/version` reports.
    pub fn git_version(mut self, version: &str) -> Self {
        self.config.git_version = version.to_owned();
        self
    }

    /// When the timeline advances.
    pub fn advance(mut self, advance: Advance) -> Self {
        self.config.advance = advance;
        self
    }

    /// Let watches start at most `states` states before the present; an
    /// older version gets the apiserver's 410 Expired ERROR event.
    pub fn watch_history(mut self, states: usize) -> Self {
        self.config.watch_history = Some(states);
        self
    }

    /// Listen on this port (0 = any free port, the default).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Serve https with a self-signed certificate made at start.
    pub fn tls(mut self) -> Self {
        self.tls = true;
        self
    }

    /// Answer 401 to every request without `Authorization: Bearer TOKEN`
    /// (kubectl sends one only over TLS: use with [`Builder::tls`]).
    pub fn token(mut self, token: &str) -> Self {
        self.config.token = Some(token.to_owned());
        self
    }

    /// [`Builder::start`], and a kubectl environment that reaches the
    /// server ([`KubeEnv::for_server`]).
    pub fn start_with_env(self) -> (Server, KubeEnv) {
        let server = self.start().expect("server");
        let env = KubeEnv::for_server(&server).expect("kube env");
        (server, env)
    }

    /// Bind 127.0.0.1 and start serving.
    pub fn start(self) -> io::Result<Server> {
        let states = timeline(self.states);
        let tls = self.tls.then(tls::Identity::new).transpose()?;
        let listener = TcpListener::bind(("127.0.0.1", self.port))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared {
            states,
            current: 0,
            rules: self.rules.into_iter().map(|r| (r, 0)).collect(),
            log: Vec::new(),
            config: self.config,
            address: addr.to_string(),
            started: Instant::now(),
            generation: 0,
        }));
        let handles = watch::Handles {
            shared,
            changed: Arc::new(Condvar::new()),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let tls_config = tls.as_ref().map(|identity| Arc::clone(&identity.config));
        let acceptor = {
            let handles = handles.clone();
            thread::spawn(move || accept_loop(&listener, &handles, tls_config))
        };
        Ok(Server {
            shared: Arc::clone(&handles.shared),
            changed: Arc::clone(&handles.changed),
            stop: handles.stop,
            addr,
            acceptor: Some(acceptor),
            ca_pem: tls.map(|identity| identity.certificate_pem),
        })
    }
}

/// The states to serve (one empty state when none is given), each object
/// stored once across them.
fn timeline(states: Vec<State>) -> Vec<State> {
    let mut states = if states.is_empty() {
        vec![State::default()]
    } else {
        states
    };
    let mut interner = object::Interner::default();
    for state in &mut states {
        state.intern(&mut interner);
    }
    states
}

fn accept_loop(
    listener: &TcpListener,
    handles: &watch::Handles,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    for stream in listener.incoming() {
        if handles.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let handles = handles.clone();
        let tls = tls.clone();
        thread::spawn(move || {
            let handle = |request: &http::Request| -> http::Reply {
                let (response, delivery, plan) = lock(&handles.shared).handle(request);
                // The timeline may have moved: wake the watches.
                handles.changed.notify_all();
                let stream = plan.map(|plan| {
                    Box::new(watch::WatchStream::new(plan, handles.clone()))
                        as Box<dyn http::Stream>
                });
                (response, delivery, stream)
            };
            if stream.set_nodelay(true).is_err() {
                return;
            }
            // A client that vanishes mid-request is not the server's problem.
            let _ = match tls {
                None => http::serve_connection(&mut { stream }, &handle),
                Some(config) => match rustls::ServerConnection::new(config) {
                    Ok(connection) => http::serve_connection(
                        &mut rustls::StreamOwned::new(connection, stream),
                        &handle,
                    ),
                    Err(_) => return,
                },
            };
        });
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running replay server; stops when dropped.
#[derive(Debug)]
pub struct Server {
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Condvar>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
    ca_pem: Option<String>,
}

impl Server {
    /// A server to configure.
    pub fn builder() -> Builder {
        Builder {
            states: Vec::new(),
            rules: Vec::new(),
            config: Config {
                page_size: None,
                now: table::parse_time(DEFAULT_NOW).expect("DEFAULT_NOW is RFC 3339"),
                git_version: DEFAULT_GIT_VERSION.to_owned(),
                advance: Advance::PodsLists,
                token: None,
                watch_history: None,
            },
            port: 0,
            tls: false,
        }
    }

    /// Serve one state (no timeline, no faults).
    pub fn serve(state: State) -> io::Result<Self> {
        Self::builder().state(state).start()
    }

    /// `http://127.0.0.1:PORT` (`https://` with TLS)
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The PEM certificate a client must trust (None without TLS).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bearer token the server requires, if any.
    pub fn token(&self) -> Option<String> {
        lock(&self.shared).config.token.clone()
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<LogEntry> {
        lock(&self.shared).log.clone()
    }

    /// The successful first pages of pods lists, in order: one per `kubectl
    /// get pods` that got an answer (their `state` says which state it saw).
    pub fn pods_lists(&self) -> Vec<LogEntry> {
        self.log()
            .into_iter()
            .filter(|e| e.is_list_start(Resource::Pods))
            .collect()
    }

    /// Every watch request, in order (with what each was sent so far).
    pub fn watches(&self) -> Vec<LogEntry> {
        self.log()
            .into_iter()
            .filter(|e| e.watch.is_some())
            .collect()
    }

    /// Every request for a pods list page (failed ones included).
    pub fn pods_requests(&self) -> Vec<LogEntry> {
        self.log()
            .into_iter()
            .filter(|e| e.list == Some(Resource::Pods))
            .collect()
    }

    /// Each pods list page asked for, in order: its page number and the
    /// index of the state it was served from.
    pub fn pods_pages(&self) -> Vec<(Option<usize>, Option<usize>)> {
        self.pods_requests()
            .iter()
            .map(|e| (e.page, e.state))
            .collect()
    }

    /// When the server started (or was last reset), by the wall clock: the
    /// instant [`Advance::Every`] counts from, for a benchmark in another
    /// process to know when each state became the present.
    pub fn started_at(&self) -> std::time::SystemTime {
        let elapsed = lock(&self.shared).started.elapsed();
        std::time::SystemTime::now() - elapsed
    }

    /// The state the next pods list starts from.
    pub fn current_state(&self) -> usize {
        lock(&self.shared).present()
    }

    /// Start over with a new timeline and new fault rules, on the same port
    /// (kubectl's discovery cache, keyed by host and port, stays warm).
    pub fn reset(&self, states: Vec<State>, rules: Vec<FaultRule>) {
        let states = timeline(states);
        let mut shared = lock(&self.shared);
        shared.states = states;
        shared.current = 0;
        shared.rules = rules.into_iter().map(|r| (r, 0)).collect();
        shared.log.clear();
        shared.started = Instant::now();
        shared.generation += 1;
        drop(shared);
        self.changed.notify_all();
    }

    /// Change the largest page size.
    pub fn set_page_size(&self, page_size: Option<usize>) {
        lock(&self.shared).config.page_size = page_size;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the watches and the accept loop so they see the flag.
        self.changed.notify_all();
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, phase: &str) -> serde_json::Value {
        json!({"metadata": {"namespace": "ns", "name": name}, "status": {"phase": phase}})
    }

    /// A timeline stores an object once however many states hold it.
    #[test]
    fn states_share_their_equal_objects() {
        let before = State::new(vec![pod("a", "Pending"), pod("b", "Running")], vec![]);
        let after = State::new(vec![pod("a", "Running"), pod("b", "Running")], vec![]);
        let states = timeline(vec![before, after]);
        let (first, second) = (&states[0].pods, &states[1].pods);
        assert!(first[1].shares_storage_with(&second[1]), "b is unchanged");
        assert!(!first[0].shares_storage_with(&second[0]), "a changed");
    }
}
