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
//! A list tells its version as soon as its first page's head is read
//! ([`read_heard`], [`page::Heard`]): the check starts the workloads lists
//! at that version while the pods are still being read.
//!
//! Every list ends by an instant ([`Until`]): the time left caps each
//! page's kubectl as its timeout does, so a server that hands out a new
//! continue token on every page, or serves slow pages, cannot keep a check
//! paging: the list ends as [`ListError::Unfinished`]. When the reader
//! fails (an unreadable page), the fetcher's kubectl is killed at once: the
//! error is reported when known, not when the next page ends.

use super::kubectl::{Kubectl, KubectlError};
use super::stop::Stop;
use crate::api::List;
use crate::artifacts::Tee;
use crate::contract::words;
use crate::reader::page::{self, PageHead};
use crate::reader::snapshot;
use crate::reader::Shape;
use jaq_json::Val;
use std::io::{self, Write};
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
            capped.bound = Some(left);
            return (capped, true);
        }
        (capped, false)
    }
}

/// Why a list gave no documents.
#[derive(Debug)]
pub enum ListError {
    /// The first page failed: kubectl, or its output. Exit 2.
    Failed(Failure),
    /// The copy of the list (`--save-dir`) could not be written.
    NotSaved(io::Error),
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

/// Why the first page of a list failed: the cluster's answer.
#[derive(Debug)]
pub enum Failure {
    /// kubectl could not be run or failed.
    Kubectl(KubectlError),
    /// kubectl's output was unreadable.
    Unreadable { command: String, why: String },
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
    read_at(kubectl, (list, None), chunk_size, until, shape, copy)
}

/// What a list tells of its version as soon as its first page's head is
/// read ([`page::Heard`]): a list streamed whole, before its items; a list
/// in pages, when its first page has come.
pub type Heard<'a> = &'a mut dyn FnMut(&str);

/// [`read`], its version told to `heard` before the list is read whole.
pub fn read_heard(
    kubectl: &Kubectl,
    list: List,
    (chunk_size, until): (usize, Until),
    shape: &Shape,
    copy: Option<&mut dyn Write>,
    heard: Heard,
) -> Result<Vec<Val>, ListError> {
    if chunk_size == 0 {
        return read_whole(kubectl, (list, None), until, shape, (copy, heard));
    }
    read_pages(
        kubectl,
        (list, None, chunk_size),
        until,
        shape,
        (copy, heard),
    )
}

/// [`read`], the list read at exactly resourceVersion `at` when given
/// ([`List::url_at`]): the workloads at the pods list's state.
pub fn read_at(
    kubectl: &Kubectl,
    (list, at): (List, Option<&str>),
    chunk_size: usize,
    until: Until,
    shape: &Shape,
    copy: Option<&mut dyn Write>,
) -> Result<Vec<Val>, ListError> {
    let heard = &mut |_: &str| {};
    if chunk_size == 0 {
        return read_whole(kubectl, (list, at), until, shape, (copy, heard));
    }
    read_pages(kubectl, (list, at, chunk_size), until, shape, (copy, heard))
}

/// Read a list in pages, one fetched while the one before is parsed.
fn read_pages(
    kubectl: &Kubectl,
    (list, at, chunk_size): (List, Option<&str>, usize),
    until: Until,
    shape: &Shape,
    (copy, heard): (Option<&mut dyn Write>, Heard),
) -> Result<Vec<Val>, ListError> {
    thread::scope(|scope| {
        // One page may wait while the next is fetched.
        let (pages, received) = mpsc::sync_channel(1);
        let stop = Stop::default();
        let fetcher = stop.clone();
        scope.spawn(move || fetch_pages(kubectl, (list, at, chunk_size), until, &fetcher, &pages));
        let read = receive(received, shape, (copy, heard));
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
    (copy, heard): (Option<&mut dyn Write>, Heard),
) -> Result<Vec<Val>, ListError> {
    {
        let mut copy = copy;
        let mut docs = Vec::new();
        for fetched in received {
            let (number, bytes, command) = fetched?;
            if let Some(copy) = copy.as_mut() {
                save(&mut **copy, &bytes).map_err(ListError::NotSaved)?;
            }
            // What kubectl printed is read as jq -s reads it: a server
            // sends one document per page, but nothing else is trusted.
            let page = match number {
                1 => snapshot::read_documents(
                    page::Heard::new(&bytes[..], &mut *heard),
                    "kubectl",
                    shape,
                ),
                _ => snapshot::read_documents(&bytes[..], "kubectl", shape),
            };
            let page = page.map_err(|e| {
                let why = e.unreadable_why();
                if number == 1 {
                    ListError::Failed(Failure::Unreadable { command, why })
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
    (list, at, chunk_size): (List, Option<&str>, usize),
    until: Until,
    stop: &Stop,
    out: &mpsc::SyncSender<Fetched>,
) {
    let mut token: Option<String> = None;
    let mut version: Option<String> = None;
    for number in 1.. {
        let args = list.args_at(chunk_size, token.as_deref(), at);
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
                ListError::Failed(Failure::Unreadable { command, why })
            } else {
                ListError::Broken { page: number, why }
            }
        };
        let page = match bytes {
            Err(KubectlError::TimedOut { .. }) if capped => Err(unfinished),
            Err(e) if number == 1 => Err(ListError::Failed(Failure::Kubectl(e))),
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
                .map_err(broken)
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
    (list, at): (List, Option<&str>),
    until: Until,
    shape: &Shape,
    (copy, heard): (Option<&mut dyn Write>, Heard),
) -> Result<Vec<Val>, ListError> {
    let args = list.args_at(0, None, at);
    let args = args.each_ref().map(String::as_str);
    if until.left().is_zero() {
        return Err(ListError::Unfinished { pages: 0 });
    }
    let (kubectl, capped) = until.cap(kubectl);
    let read = match copy {
        // Streamed through the proxy when there is one: read again from
        // kubectl when its answer is not whole.
        None => kubectl.run_streaming(&args, |out| {
            let parsed =
                snapshot::read_documents(page::Heard::new(out, &mut *heard), "kubectl", shape);
            (parsed, None)
        }),
        Some(copy) => kubectl.run(&args, |out| {
            let mut tee = Tee::new(page::Heard::new(out, heard), Some(copy));
            let parsed = snapshot::read_documents(&mut tee, "kubectl", shape);
            (parsed, tee.write_error())
        }),
    };
    let (parsed, not_saved) = read.map_err(|e| match e {
        KubectlError::TimedOut { .. } if capped => ListError::Unfinished { pages: 0 },
        e => ListError::Failed(Failure::Kubectl(e)),
    })?;
    if let Some(error) = not_saved {
        return Err(ListError::NotSaved(error));
    }
    let command = || kubectl.command_line(&args);
    let docs = parsed.map_err(|e| {
        ListError::Failed(Failure::Unreadable {
            command: command(),
            why: e.unreadable_why(),
        })
    })?;
    // The rule page-head.jq holds in the bash (and page::head for pages).
    if !docs.iter().all(head_is_strings) {
        let why = words::HEAD_NOT_STRINGS.text.to_owned();
        let command = command();
        return Err(ListError::Failed(Failure::Unreadable { command, why }));
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

#[cfg(test)]
mod tests {
    use super::*;

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
