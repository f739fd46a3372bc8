//! One list, read raw in pages through kubectl: `kubectl get --raw
//! '/api/v1/pods?limit=N'`, then `&continue=TOKEN` until a page has no
//! token. kubectl stays the only way to the cluster (contexts, exec
//! credential plugins, proxies, certificates) but no longer decodes and
//! re-prints the objects.
//!
//! The pages are one list only when each carries the first page's
//! `metadata.resourceVersion` (the API server pins continue tokens to it).
//! A page from another version, a page that cannot be read, a 410 Expired
//! or kubectl failing after the first page break the list: the caller lists
//! again from the start ([`ListError::Broken`]). A failure on the first page
//! is the cluster's answer ([`ListError::Failed`]), as a failing `get pods`
//! was.
//!
//! Page k is parsed while kubectl fetches page k+1: a fetcher thread reads
//! each page whole (one page is small), takes the token from its head
//! ([`page::head`]), hands the bytes over and starts the next kubectl; at
//! most one page waits between them, so no more than three pages are held.
//! With a chunk size of 0, one request lists everything and its output is
//! streamed as it comes, never held.
//!
//! Every list ends by an instant ([`Until`]): the time left caps each
//! page's kubectl as its timeout does, so a server that hands out a new
//! continue token on every page, or serves slow pages, cannot keep a check
//! paging: the list ends as [`ListError::Unfinished`]. When the reader
//! fails (an unreadable page), the fetcher's kubectl is killed at once: the
//! error is reported when known, not when the next page ends.

use crate::check::{unreadable_why, CheckError};
use crate::contract::words;
use crate::kubectl::{Kubectl, KubectlError, Stop};
use crate::reader::page::{self, PageHead};
use crate::reader::Shape;
use crate::snapshot;
use jaq_json::Val;
use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// When a list must have ended: no page waits past `at`.
#[derive(Debug, Clone, Copy)]
pub struct Until {
    /// The instant.
    pub at: Instant,
    /// The budget it ends, in whole seconds, as messages say it.
    pub seconds: u64,
}

impl Until {
    /// `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Self {
            at: Instant::now() + budget,
            seconds: budget.as_secs(),
        }
    }

    /// The time left, zero once past.
    pub fn left(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// `kubectl` with its timeout capped by the time left; true when the
    /// cap, not kubectl's own timeout, is what may kill it. A cap within a
    /// second of the timeout is the timeout (its words: "did not finish
    /// within 120s"), as in the bash, which counts in whole seconds.
    fn cap(&self, kubectl: &Kubectl) -> (Kubectl, bool) {
        let left = self.left();
        let mut capped = kubectl.clone();
        if left.saturating_add(Duration::from_secs(1)) < kubectl.timeout {
            capped.timeout = left;
            return (capped, true);
        }
        (capped, false)
    }
}

/// A list the checker reads: the API path and its fixed query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List {
    /// `/api/v1/pods`.
    pub path: &'static str,
    /// Query parameters every page carries (already URL-encoded), or "".
    pub query: &'static str,
    /// The resource, as messages name the list: `pods`.
    pub what: &'static str,
}

/// Every pod of every namespace.
pub const PODS: List = List {
    path: "/api/v1/pods",
    query: "",
    what: "pods",
};

/// The FailedScheduling events of every namespace (events.jq filters them).
pub const EVENTS: List = List {
    path: "/api/v1/events",
    query: "fieldSelector=reason%3DFailedScheduling",
    what: "events",
};

impl List {
    /// The URL of a page: `limit` when `chunk_size` is not 0, `continue`
    /// after the first page (the token is base64: `+`, `/`, `=` encoded).
    pub fn url(&self, chunk_size: usize, token: Option<&str>) -> String {
        let mut params: Vec<String> = Vec::new();
        if !self.query.is_empty() {
            params.push(self.query.to_owned());
        }
        if chunk_size > 0 {
            params.push(format!("limit={chunk_size}"));
        }
        if let Some(token) = token {
            params.push(format!("continue={}", url_encode(token)));
        }
        if params.is_empty() {
            self.path.to_owned()
        } else {
            format!("{}?{}", self.path, params.join("&"))
        }
    }

    /// kubectl's arguments for a page.
    pub fn args(&self, chunk_size: usize, token: Option<&str>) -> [String; 3] {
        [
            "get".to_owned(),
            "--raw".to_owned(),
            self.url(chunk_size, token),
        ]
    }
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a list gave no documents.
#[derive(Debug)]
pub enum ListError {
    /// The first page failed: kubectl, or its output. Exit 2.
    Failed(CheckError),
    /// The list did not end by its [`Until`]: `pages` pages were read.
    Unfinished { pages: usize },
    /// The list broke after its first page: no snapshot, list again.
    Broken {
        /// The page that broke it (2 = the first continue).
        page: usize,
        /// Why, in words.
        why: String,
    },
}

/// Read every page of `list` through `kubectl`, each kept as `shape` keeps
/// it; every byte read is also written to `copy` (the pages one after the
/// other, a newline after each), when given.
pub fn read(
    kubectl: &Kubectl,
    list: List,
    chunk_size: usize,
    until: Until,
    shape: &Shape,
    copy: Option<&mut dyn Write>,
) -> Result<Vec<Val>, ListError> {
    if chunk_size == 0 {
        return read_whole(kubectl, list, until, shape, copy);
    }
    thread::scope(|scope| {
        // One page may wait while the next is fetched.
        let (pages, received) = mpsc::sync_channel(1);
        let stop = Stop::default();
        let fetcher = stop.clone();
        scope.spawn(move || fetch_pages(kubectl, (list, chunk_size), until, &fetcher, &pages));
        let read = receive(received, shape, copy);
        // The fetcher may be waiting on kubectl for a page no one will
        // read (this one failed): end it now, not at its timeout.
        stop.stop();
        read
    })
}

/// The pages as the fetcher sends them, read and joined.
fn receive(
    received: mpsc::Receiver<Fetched>,
    shape: &Shape,
    copy: Option<&mut dyn Write>,
) -> Result<Vec<Val>, ListError> {
    {
        let mut copy = copy;
        let mut docs = Vec::new();
        for fetched in received {
            let (number, bytes, command) = fetched?;
            if let Some(copy) = copy.as_mut() {
                save(&mut **copy, &bytes).map_err(|e| ListError::Failed(save_error(e)))?;
            }
            // What kubectl printed is read as jq -s reads it: a server
            // sends one document per page, but nothing else is trusted.
            let page = snapshot::read_documents(&bytes[..], "kubectl", shape).map_err(|e| {
                let why = unreadable_why(&e);
                if number == 1 {
                    ListError::Failed(CheckError::Unreadable { command, why })
                } else {
                    ListError::Broken { page: number, why }
                }
            })?;
            docs.extend(page);
        }
        // The fetcher ends with the last page or the first error, which it
        // sends: an empty channel here means it is done.
        Ok(docs)
    }
}

/// A page as fetched: its number, its bytes, the command that printed it.
type Fetched = Result<(usize, Vec<u8>, String), ListError>;

/// Fetch the pages one after the other, each sent as soon as kubectl has
/// exited 0 and its head is read; stops at the last page, at the first
/// error (sent), when `until` passes, or when the reader has gone away
/// (`stop` kills the page's kubectl).
fn fetch_pages(
    kubectl: &Kubectl,
    (list, chunk_size): (List, usize),
    until: Until,
    stop: &Stop,
    out: &mpsc::SyncSender<Fetched>,
) {
    let mut token: Option<String> = None;
    let mut version: Option<String> = None;
    for number in 1.. {
        let args = list.args(chunk_size, token.as_deref());
        let args = args.each_ref().map(String::as_str);
        let command = kubectl.command_line(&args);
        let unfinished = ListError::Unfinished { pages: number - 1 };
        if until.left().is_zero() {
            let _ = out.send(Err(unfinished));
            return;
        }
        let (kubectl, capped) = until.cap(kubectl);
        let bytes = kubectl.run_stoppable(&args, stop, |out| {
            let mut bytes = Vec::new();
            out.read_to_end(&mut bytes).map(|_| bytes)
        });
        let broken = |why: String| {
            if number == 1 {
                let command = command.clone();
                ListError::Failed(CheckError::Unreadable { command, why })
            } else {
                ListError::Broken { page: number, why }
            }
        };
        let page = match bytes {
            Err(KubectlError::TimedOut { .. }) if capped => Err(unfinished),
            Err(e) if number == 1 => Err(ListError::Failed(CheckError::Kubectl(e))),
            Err(e) => Err(ListError::Broken {
                page: number,
                why: e.to_string(),
            }),
            Ok(Err(e)) => Err(broken(format!("cannot read: {e}"))),
            // An empty answer (HTTP 200, no body) in the reader's words.
            Ok(Ok(bytes)) if bytes.iter().all(u8::is_ascii_whitespace) => {
                Err(broken(words::EMPTY_INPUT.text.to_owned()))
            }
            Ok(Ok(bytes)) => page::head(&bytes)
                .map_err(|why| broken(format!("not a list page: {why}")))
                .and_then(|head| coherent(head, &mut version, number).map(|head| (head, bytes))),
        };
        let (head, bytes) = match page {
            Ok(page) => page,
            Err(e) => {
                let _ = out.send(Err(e));
                return;
            }
        };
        token = head.next().map(str::to_owned);
        if out.send(Ok((number, bytes, command))).is_err() || token.is_none() {
            return;
        }
    }
}

/// The head of page `number`, when it carries the list's version (the
/// first page's, kept in `version`).
fn coherent(
    head: PageHead,
    version: &mut Option<String>,
    number: usize,
) -> Result<PageHead, ListError> {
    match version {
        None => {
            *version = Some(head.resource_version.clone());
            Ok(head)
        }
        Some(first) if *first == head.resource_version => Ok(head),
        Some(first) => Err(ListError::Broken {
            page: number,
            why: words::PAGE_OTHER_VERSION.format(&[
                ("version", &head.resource_version as &dyn std::fmt::Display),
                ("first_version", first),
            ]),
        }),
    }
}

/// One request, no limit: the whole list streamed from kubectl's stdout.
fn read_whole(
    kubectl: &Kubectl,
    list: List,
    until: Until,
    shape: &Shape,
    copy: Option<&mut dyn Write>,
) -> Result<Vec<Val>, ListError> {
    let args = list.args(0, None);
    let args = args.each_ref().map(String::as_str);
    if until.left().is_zero() {
        return Err(ListError::Unfinished { pages: 0 });
    }
    let (kubectl, capped) = until.cap(kubectl);
    let parsed = kubectl
        .run(&args, |out| {
            snapshot::read_documents(Tee { inner: out, copy }, "kubectl", shape)
        })
        .map_err(|e| match e {
            KubectlError::TimedOut { .. } if capped => ListError::Unfinished { pages: 0 },
            e => ListError::Failed(CheckError::Kubectl(e)),
        })?;
    let command = || kubectl.command_line(&args);
    let docs = parsed.map_err(|e| {
        ListError::Failed(CheckError::Unreadable {
            command: command(),
            why: unreadable_why(&e),
        })
    })?;
    // The rule page-head.jq holds in the bash (and page::head for pages).
    if !docs.iter().all(head_is_strings) {
        let why = words::HEAD_NOT_STRINGS.text.to_owned();
        let command = command();
        return Err(ListError::Failed(CheckError::Unreadable { command, why }));
    }
    Ok(docs)
}

/// Whether a document's `metadata.resourceVersion` and `metadata.continue`
/// are strings or absent, as the API server writes them (ListMeta).
fn head_is_strings(doc: &Val) -> bool {
    let field = |v: &Val, key: &str| match v {
        Val::Obj(map) => map.get(&Val::from(key.to_owned())).cloned(),
        _ => None,
    };
    let Some(metadata) = field(doc, "metadata") else {
        return true;
    };
    ["resourceVersion", "continue"].iter().all(|key| {
        matches!(
            field(&metadata, key),
            None | Some(Val::Null | Val::TStr(_) | Val::BStr(_))
        )
    })
}

/// A page's bytes into the copy, then a newline unless it ends with one
/// (the bash function saves the same bytes; a one-page list is saved as
/// kubectl printed it).
fn save(copy: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    copy.write_all(bytes)?;
    if bytes.last() == Some(&b'\n') {
        return Ok(());
    }
    copy.write_all(b"\n")
}

fn save_error(error: io::Error) -> CheckError {
    CheckError::SaveDir {
        path: "pods.json".into(),
        error,
    }
}

/// Copies every byte read into an optional writer.
struct Tee<'a, R> {
    inner: R,
    copy: Option<&'a mut dyn Write>,
}

impl<R: Read> Read for Tee<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(copy) = self.copy.as_mut() {
            copy.write_all(&buf[..n])?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_asked_for_with_limit_and_an_encoded_token() {
        assert_eq!(PODS.url(500, None), "/api/v1/pods?limit=500");
        assert_eq!(PODS.url(0, None), "/api/v1/pods");
        assert_eq!(
            PODS.url(2, Some("eyJ2+Ijo/=")),
            "/api/v1/pods?limit=2&continue=eyJ2%2BIjo%2F%3D"
        );
        assert_eq!(
            EVENTS.url(500, Some("t")),
            "/api/v1/events?fieldSelector=reason%3DFailedScheduling&limit=500&continue=t"
        );
        assert_eq!(
            EVENTS.url(0, None),
            "/api/v1/events?fieldSelector=reason%3DFailedScheduling"
        );
    }

    #[test]
    fn page_head_jq_words_its_refusal_as_the_checker() {
        let program = crate::programs::Programs::PAGE_HEAD;
        assert!(program.contains(words::HEAD_NOT_STRINGS.text));
    }

    #[test]
    fn a_page_of_another_version_breaks_the_list() {
        let head = |v: &str| PageHead {
            resource_version: v.to_owned(),
            continue_token: None,
        };
        let mut version = None;
        assert!(coherent(head("5"), &mut version, 1).is_ok());
        assert!(coherent(head("5"), &mut version, 2).is_ok());
        match coherent(head("6"), &mut version, 3) {
            Err(ListError::Broken { page: 3, why }) => {
                let expected =
                    words::PAGE_OTHER_VERSION.format(&[("version", &"6"), ("first_version", &"5")]);
                assert_eq!(why, expected)
            }
            other => panic!("{other:?}"),
        }
    }
}
