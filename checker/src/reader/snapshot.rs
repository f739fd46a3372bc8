//! The reader's entry point and frame walker: a snapshot (`kubectl get pods
//! -A -o json`) or an events list from a file, stdin or kubectl's stdout,
//! streamed, projected, never held whole; errors name line and column.
//!
//! Parsers are fastest on a slice (serde_json's reader-based parser goes
//! byte by byte through `io::Bytes`), but a slice of a 1.7 GB document is
//! the whole document in memory. So the outer frame of the document (the
//! top-level object and the arrays right under it, like `items`) is walked
//! here over a refilled buffer, and every value inside that frame (one pod,
//! one key's value) is parsed from the buffer as a slice, with the
//! projection: by `fast_parser.rs`, or by serde_json (`serde_fallback.rs`)
//! when the fast parser doubts it. Only the buffer (two MiB, more when a
//! single value is larger) and the projected values stay in memory.
//!
//! The elements of a long array (the pods) are parsed by several threads at
//! once, each taking a share of the buffer; see `batch.rs` for why that
//! gives exactly the document one thread reads.

use super::batch::{self, Lane};
use super::fast_parser::{parse_fast, parse_key, Stop, Workspace};
use super::scan::Scanner;
use super::serde_fallback::{non_finite_as_zeros, Key, KeySeed, Planned};
use super::shape::{key_val, Plan, Shape};
use super::BOM;
use crate::contract::words;
use jaq_json::{Map, Val};
use serde::de::{DeserializeSeed, IgnoredAny};
use std::fmt;
use std::io::{self, Read};

/// A document that could not be read. Never "0 pods".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    /// Where the document came from (a path, `<stdin>`, `kubectl get pods`).
    pub source: String,
    /// `line:column` of the problem, when the parser knows it.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl SnapshotError {
    /// Why a document kubectl printed is unreadable, in the contract's
    /// words (the position as `line L, column C`: kubectl's output is no
    /// file).
    pub fn unreadable_why(&self) -> String {
        match self.position {
            Some((line, column)) => words::AT_POSITION.format(&[
                ("line", &line),
                ("column", &column),
                ("why", &self.message),
            ]),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Parse one JSON document from `reader`, keeping only what `shape` keeps.
/// Anything after the document but whitespace is an error.
pub fn read(reader: impl Read, source: &str, shape: &Shape) -> Result<Val, SnapshotError> {
    read_with(reader, source, shape, &ReadOptions::default())
}

/// How [`read_with`] reads. The result never depends on it: tests use tiny
/// buffers (every value then straddles a refill) and the serde_json path
/// alone (to compare the fast path with it); benchmarks compare both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// The first buffer size in bytes (at least 1); it doubles while one
    /// value does not fit.
    pub initial_buffer: usize,
    /// Try the fast projecting parser before serde_json.
    pub fast_path: bool,
    /// Threads that parse the elements of a long array together (1: only
    /// the calling thread). Needs the fast path.
    pub threads: usize,
    /// The fast path's byte scans eight bytes at a time on any CPU, not
    /// with SIMD (tests compare the two; `scan.rs`).
    pub portable_scan: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            initial_buffer: BUFFER,
            fast_path: true,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
            portable_scan: false,
        }
    }
}

/// [`read`], with the reading machinery chosen by `options`.
pub fn read_with(
    reader: impl Read,
    source: &str,
    shape: &Shape,
    options: &ReadOptions,
) -> Result<Val, SnapshotError> {
    let plan = Plan::new(shape);
    let mut input = Input::new(reader, options);
    document(&mut input, &plan).map_err(|fault| fault.into_error(source))
}

/// Parse every JSON document of `reader` until its end, each kept as
/// `shape` keeps it: a snapshot is one `kubectl get pods -A -o json` List or
/// the raw pages of a paged list, written one after the other (`jq -s`
/// reads both alike). Whitespace between documents is allowed, nothing at
/// all is an error ("empty input"), as for [`read`].
pub fn read_documents(
    reader: impl Read,
    source: &str,
    shape: &Shape,
) -> Result<Vec<Val>, SnapshotError> {
    read_documents_with(reader, source, shape, &ReadOptions::default())
}

/// [`read_documents`], with the reading machinery chosen by `options`.
pub fn read_documents_with(
    reader: impl Read,
    source: &str,
    shape: &Shape,
    options: &ReadOptions,
) -> Result<Vec<Val>, SnapshotError> {
    let plan = Plan::new(shape);
    let mut input = Input::new(reader, options);
    documents(&mut input, &plan).map_err(|fault| fault.into_error(source))
}

/// The first buffer size; it doubles while one value does not fit.
const BUFFER: usize = 2 << 20;
/// Most threads used to parse the elements of an array.
const MAX_THREADS: usize = 4;
/// Fewer unread bytes than this are parsed by the calling thread alone.
const BATCH_MIN: usize = 256 << 10;

fn document<R: Read>(input: &mut Input<R>, plan: &Plan) -> Result<Val, Fault> {
    input.skip_bom()?;
    let doc = next_document(input, plan)?;
    match input.peek_token()? {
        None => Ok(doc),
        Some(_) => Err(input.syntax_here("trailing characters")),
    }
}

fn documents<R: Read>(input: &mut Input<R>, plan: &Plan) -> Result<Vec<Val>, Fault> {
    input.skip_bom()?;
    let first = input.not_a_list_at_start()?;
    if input.peek_token()? == Some(b'[') {
        return Err(Fault::NotAList(first.unwrap_or_default()));
    }
    let mut docs = vec![
        next_document(input, plan).map_err(|fault| match (&first, fault) {
            (Some(found), Fault::Syntax { .. }) => Fault::NotAList(found.clone()),
            (_, fault) => fault,
        })?,
    ];
    // A single object (`kubectl get pod NAME -o json`): its kind, from
    // the bytes it started with, since the projection drops `kind`.
    if let (Some(head), Some(false)) = (&input.head, has_items(&docs[0])) {
        if let Some(kind) = top_level_kind(head).filter(|k| !k.ends_with("List")) {
            let found = words::FOUND_OBJECT.format(&[("kind", &kind)]);
            return Err(Fault::NotAList(found));
        }
    }
    input.head = None;
    while input.peek_token()?.is_some() {
        docs.push(next_document(input, plan)?);
    }
    Ok(docs)
}

/// The document that starts at the next token.
fn next_document<R: Read>(input: &mut Input<R>, plan: &Plan) -> Result<Val, Fault> {
    Ok(match input.peek_token()? {
        None if input.at_start() => return Err(Fault::Empty),
        None => return Err(input.syntax_eof("EOF while parsing a value")),
        Some(b'{') => object(input, plan)?,
        Some(b'[') => array(input, plan, 0)?,
        Some(_) => input.value(plan, 0)?,
    })
}

/// The top-level object, one key at a time; arrays under it stream. Its
/// values start where jq's parser stack holds the object and the key.
fn object<R: Read>(input: &mut Input<R>, plan: &Plan) -> Result<Val, Fault> {
    input.consume(1); // `{`
    let mut out = Map::default();
    let eof = "EOF while parsing an object";
    if input.peek_token()? == Some(b'}') {
        input.consume(1);
        return Ok(Val::obj(out));
    }
    loop {
        match input.peek_token()? {
            Some(b'"') => {}
            Some(_) => return Err(input.syntax_here("key must be a string")),
            None => return Err(input.syntax_eof(eof)),
        }
        let key = input.key()?;
        match input.peek_token()? {
            Some(b':') => input.consume(1),
            Some(_) => return Err(input.syntax_here("expected `:`")),
            None => return Err(input.syntax_eof(eof)),
        }
        let field = plan.field(&key);
        let value_plan = field.map_or(&Plan::Skip, |(_, plan)| plan);
        let value = match input.peek_token()? {
            Some(b'[') => array(input, value_plan, 2)?,
            Some(_) => input.value(value_plan, 2)?,
            None => return Err(input.syntax_eof("EOF while parsing a value")),
        };
        if let Some((planned_key, plan)) = field {
            let key = key_val(planned_key, &key);
            if plan.leaves_out(&value) {
                out.shift_remove(&key);
            } else {
                out.insert(key, value);
            }
        }
        match input.peek_token()? {
            Some(b',') => input.consume(1),
            Some(b'}') => {
                input.consume(1);
                return Ok(Val::obj(out));
            }
            Some(_) => return Err(input.syntax_here("expected `,` or `}`")),
            None => return Err(input.syntax_eof(eof)),
        }
        if input.peek_token()? == Some(b'}') {
            return Err(input.syntax_here("trailing comma"));
        }
    }
}

/// An array of the frame, opened where jq's parser stack is `depth` high:
/// every element parsed on its own from the buffer.
fn array<R: Read>(input: &mut Input<R>, plan: &Plan, depth: u32) -> Result<Val, Fault> {
    input.consume(1); // `[`
    let depth = depth + 1;
    let elem = plan.element();
    let mut out = Vec::new();
    let eof = "EOF while parsing a list";
    if input.peek_token()? == Some(b']') {
        input.consume(1);
        return Ok(Val::from_iter(out));
    }
    let mut lanes = Vec::new();
    loop {
        if input.peek_token()?.is_none() {
            return Err(input.syntax_eof(eof));
        }
        match input.batch(elem, depth, &mut lanes)? {
            Some(values) if !matches!(elem, Plan::Skip) => {
                out.extend(values.into_iter().filter(|v| elem.keeps(v)));
            }
            Some(_) => {}
            None => {
                let value = input.value(elem, depth)?;
                if !matches!(elem, Plan::Skip) && elem.keeps(&value) {
                    out.push(value);
                }
            }
        }
        match input.peek_token()? {
            Some(b',') => input.consume(1),
            Some(b']') => {
                input.consume(1);
                return Ok(Val::from_iter(out));
            }
            Some(_) => return Err(input.syntax_here("expected `,` or `]`")),
            None => return Err(input.syntax_eof(eof)),
        }
        if input.peek_token()? == Some(b']') {
            return Err(input.syntax_here("trailing comma"));
        }
    }
}

/// How many bytes of a snapshot's start [`top_level_kind`] looks at.
const HEAD: usize = 4096;

/// Whether `doc` is an object (Some) with an `items` key (true).
fn has_items(doc: &Val) -> Option<bool> {
    match doc {
        Val::Obj(map) => Some(map.contains_key(&Val::from("items".to_owned()))),
        _ => None,
    }
}

/// `apiVersion: v1`, `kind: List`, `items:`, `metadata:`, `---`: the start
/// of a Kubernetes YAML document (`kubectl get -o yaml`). Only these keys:
/// `error: You must be logged in…` is kubectl's error text, not YAML.
fn looks_like_yaml(line: &str) -> bool {
    let line = line.trim_end();
    if line == "---" {
        return true;
    }
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    matches!(key, "apiVersion" | "kind" | "items" | "metadata")
        && (rest.is_empty() || rest.starts_with(' '))
}

/// `NAMESPACE   NAME   READY   STATUS …`: the columns of `kubectl get pods`.
fn looks_like_table(line: &str) -> bool {
    let mut columns = line.split_whitespace();
    matches!(columns.next(), Some("NAMESPACE" | "NAME"))
        && columns.all(|c| {
            c.chars()
                .all(|c| c.is_ascii_uppercase() || "-_()".contains(c))
        })
}

/// The string value of the key `kind` of the top-level object that `head`
/// begins, when it comes within those bytes.
fn top_level_kind(head: &[u8]) -> Option<String> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b'"' => {
                let end = i + 1 + string_len(&head[i + 1..])?;
                if depth == 1 && &head[i + 1..end] == b"kind" {
                    let rest = &head[end + 1..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
                    let rest = rest[colon..].strip_prefix(b":")?;
                    let quote = rest.iter().position(|b| !b.is_ascii_whitespace())?;
                    let value = rest[quote..].strip_prefix(b"\"")?;
                    let len = string_len(value)?;
                    return String::from_utf8(value[..len].to_vec()).ok();
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The length of a JSON string's contents up to its closing `"`.
fn string_len(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The number of `\n` in `bytes` (it runs over every byte of the document).
fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Why a document could not be read, before it is given its source name.
enum Fault {
    Io(io::Error),
    Empty,
    /// Not a List, nor the pages of one: what it is, in the contract's words.
    NotAList(String),
    Syntax {
        message: String,
        line: usize,
        column: usize,
    },
}

impl Fault {
    fn into_error(self, source: &str) -> SnapshotError {
        let source = source.to_owned();
        match self {
            Fault::Io(e) => SnapshotError {
                source,
                position: None,
                message: format!("cannot read: {e}"),
            },
            Fault::NotAList(found) => SnapshotError {
                source,
                position: None,
                message: words::NOT_A_LIST.format(&[("found", &found)]),
            },
            Fault::Empty => SnapshotError {
                source,
                position: None,
                // Pods or events: the source names which document it is.
                message: crate::contract::words::EMPTY_INPUT.text.to_owned(),
            },
            Fault::Syntax {
                message,
                line,
                column,
            } => SnapshotError {
                source,
                position: Some((line, column)),
                message: format!("invalid JSON: {message}"),
            },
        }
    }
}

/// The unread part of the document: `buf[start..end]`, refilled from `reader`.
struct Input<R> {
    reader: R,
    /// The first buffer size.
    initial: usize,
    /// Whether to try [`parse_fast`] first.
    fast_path: bool,
    /// Threads for long arrays.
    threads: usize,
    /// Elements read in batches, by several threads, and batches set up
    /// (tests look).
    batched: usize,
    batches: usize,
    work: Workspace,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Bytes of a UTF-8 byte order mark skipped at the start (0 or 3).
    bom: u64,
    /// Line (1-based) and column (bytes since the last newline) of `buf[start]`.
    line: usize,
    column: usize,
    consumed: u64,
    /// The first bytes (at most HEAD) of a snapshot's first document, as
    /// they are consumed, kept until it is read (read_documents only): what
    /// a document that is no List is.
    head: Option<Vec<u8>>,
}

impl<R: Read> Input<R> {
    fn new(reader: R, options: &ReadOptions) -> Self {
        Self {
            reader,
            initial: options.initial_buffer.max(1),
            fast_path: options.fast_path,
            threads: options.threads.max(1),
            batched: 0,
            batches: 0,
            work: Workspace::with_scanner(if options.portable_scan {
                Scanner::Portable
            } else {
                Scanner::best()
            }),
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            bom: 0,
            line: 1,
            column: 0,
            consumed: 0,
            head: None,
        }
    }

    /// At the start of a snapshot: what its first document is when it is
    /// plainly no List (a bare array, YAML, kubectl's table), in the
    /// contract's words; keeps the first bytes for [`top_level_kind`].
    fn not_a_list_at_start(&mut self) -> Result<Option<String>, Fault> {
        let Some(first) = self.peek_token()? else {
            return Ok(None);
        };
        // The first document's bytes, gathered by `consume` as they are
        // read: the same head whatever the buffer size.
        self.head = (first == b'{').then(Vec::new);
        match first {
            b'[' => return Ok(Some(words::FOUND_ARRAY.text.to_owned())),
            b'{' | b'"' | b'0'..=b'9' => return Ok(None),
            _ => {}
        }
        // The first line whole (up to HEAD bytes), whatever the buffer size.
        while !self.buf[self.start..self.end].contains(&b'\n')
            && self.end - self.start < HEAD
            && self.fill()?
        {}
        let data = &self.buf[self.start..self.end];
        let head = &data[..data.len().min(HEAD)];
        let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        Ok(if looks_like_yaml(&line) {
            Some(words::FOUND_YAML.text.to_owned())
        } else if looks_like_table(&line) {
            Some(words::FOUND_TABLE.text.to_owned())
        } else {
            None
        })
    }

    fn at_start(&self) -> bool {
        self.consumed == self.bom && self.line == 1 && self.column == self.bom as usize
    }

    /// Step over a UTF-8 byte order mark at the very start, as jq does
    /// (Windows editors and PowerShell write one). Columns still count its
    /// bytes, as they count every byte.
    fn skip_bom(&mut self) -> Result<(), Fault> {
        while self.end - self.start < BOM.len() && self.fill()? {}
        if self.buf[self.start..self.end].starts_with(BOM) {
            self.consume(BOM.len());
            self.bom = BOM.len() as u64;
        }
        Ok(())
    }

    /// Read more input: move the unread bytes to the front, grow the buffer
    /// when they fill it, then read until it is full or the input ends.
    /// False when nothing more can come.
    fn fill(&mut self) -> Result<bool, Fault> {
        if self.eof {
            return Ok(false);
        }
        let unread = self.end - self.start;
        self.buf.copy_within(self.start..self.end, 0);
        self.start = 0;
        self.end = unread;
        if unread == self.buf.len() {
            let grown = (self.buf.len() * 2).max(self.initial);
            self.buf.resize(grown, 0);
        }
        let before = self.end;
        while self.end < self.buf.len() {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Fault::Io(e)),
            }
        }
        Ok(self.end > before)
    }

    /// Skip whitespace; the next byte, without consuming it (None at the end).
    fn peek_token(&mut self) -> Result<Option<u8>, Fault> {
        loop {
            let data = &self.buf[self.start..self.end];
            match data
                .iter()
                .position(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
            {
                Some(i) => {
                    self.consume(i);
                    return Ok(Some(self.buf[self.start]));
                }
                None => {
                    self.consume(data.len());
                    if !self.fill()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Move past `n` unread bytes, keeping track of line and column.
    fn consume(&mut self, n: usize) {
        let bytes = &self.buf[self.start..self.start + n];
        if let Some(head) = self.head.as_mut().filter(|h| h.len() < HEAD) {
            head.extend_from_slice(&bytes[..n.min(HEAD - head.len())]);
        }
        let newlines = count_newlines(bytes);
        if newlines == 0 {
            self.column += n;
        } else {
            self.line += newlines;
            let last = memchr::memrchr(b'\n', bytes).unwrap_or(0);
            self.column = n - last - 1;
        }
        self.start += n;
        self.consumed += n as u64;
    }

    /// Parse the next value by `plan` from the buffer, reading more while
    /// it is incomplete; it starts where jq's parser stack is `depth` high.
    fn value(&mut self, plan: &Plan, depth: u32) -> Result<Val, Fault> {
        if self.fast_path {
            if let Some(value) = self.value_fast(plan, depth)? {
                return Ok(value);
            }
        }
        self.parse(|de| Planned(plan).deserialize(de))
    }

    /// Several elements of an array at once (the next byte starts one),
    /// parsed by several threads (see [`batch`]) when the buffer holds
    /// enough of them; `None`: parse the next one alone.
    fn batch(
        &mut self,
        plan: &Plan,
        depth: u32,
        lanes: &mut Vec<Lane>,
    ) -> Result<Option<Vec<Val>>, Fault> {
        if self.threads < 2 || !self.fast_path {
            return Ok(None);
        }
        if self.end - self.start < BATCH_MIN {
            self.fill()?;
        }
        if self.end - self.start < BATCH_MIN {
            return Ok(None);
        }
        if lanes.is_empty() {
            lanes.extend((1..self.threads).map(|_| Lane::new(&self.work)));
        }
        self.batches += 1;
        let data = &self.buf[self.start..self.end];
        let found = batch::elements(
            data,
            self.column,
            self.eof,
            (plan, depth),
            &mut self.work,
            lanes,
        );
        Ok(found.map(|batch| {
            self.consume(batch.used);
            self.batched += batch.values.len();
            batch.values
        }))
    }

    /// The fast path ([`parse_fast`]), reading more while the value is
    /// incomplete. `None` sends the value to serde_json, which words the
    /// error (or, on invalid UTF-8, refuses it in a kept string itself).
    fn value_fast(&mut self, plan: &Plan, depth: u32) -> Result<Option<Val>, Fault> {
        self.fast(|data, work| parse_fast(data, plan, work, depth))
    }

    /// Parse the next object key (the `"` is next).
    fn key(&mut self) -> Result<String, Fault> {
        if self.fast_path {
            if let Some(key) = self.fast(|data, _| parse_key(data))? {
                return Ok(key);
            }
        }
        self.parse(|de| match KeySeed.deserialize(de)? {
            Key::Borrowed(s) => Ok(s.to_owned()),
            Key::Owned(s) => Ok(s),
        })
    }

    /// Run a fast parser on the unread bytes; when it runs out of bytes,
    /// read more and run it again from the same start. A value that ends
    /// right at the end of the buffer may be a number cut short, so that
    /// is retried too. `None`: serde_json shall parse it and word the error.
    fn fast<T>(
        &mut self,
        parse: impl Fn(&[u8], &mut Workspace) -> Result<(T, usize), Stop>,
    ) -> Result<Option<T>, Fault> {
        loop {
            let data = &self.buf[self.start..self.end];
            let parsed = parse(data, &mut self.work);
            let incomplete = match &parsed {
                Ok((_, used)) => *used == data.len(),
                Err(stop) => *stop == Stop::End,
            };
            if incomplete && !self.eof {
                self.fill()?; // more bytes, or the end is known
                continue;
            }
            return match parsed {
                Ok((value, used)) => {
                    self.consume(used);
                    Ok(Some(value))
                }
                Err(Stop::Refuse { at, why }) => Err(self.fault_at(at, why)),
                // serde_json words the error, invalid UTF-8 too (the fast
                // parser doubts a value holding any).
                Err(Stop::End | Stop::Doubt) => Ok(None),
            };
        }
    }

    /// Run `parse` on the unread bytes. When it runs out of bytes, read more
    /// and run it again from the same start: a value is parsed from one
    /// contiguous slice, and a value that ends exactly at the end of the
    /// buffer may be a number cut short, so that is retried too.
    fn parse<T>(
        &mut self,
        parse: impl for<'a> Fn(
            &mut serde_json::Deserializer<serde_json::de::SliceRead<'a>>,
        ) -> serde_json::Result<T>,
    ) -> Result<T, Fault> {
        let deserialize = |data: &[u8]| {
            let mut de = serde_json::Deserializer::from_slice(data);
            let parsed = parse(&mut de);
            (parsed, de.into_iter::<IgnoredAny>().byte_offset())
        };
        loop {
            let data = &self.buf[self.start..self.end];
            let (mut parsed, mut used) = deserialize(data);
            // serde_json stops at a `NaN` that jq reads (as the fast parser
            // does): the error is the one further on, read with the words
            // as zeros; a value read so is never taken.
            if parsed.as_ref().is_err_and(|e| !e.is_eof()) {
                if let Some(patched) = non_finite_as_zeros(data) {
                    let (again, again_used) = deserialize(&patched);
                    if again.is_err() {
                        (parsed, used) = (again, again_used);
                    }
                }
            }
            match parsed {
                Ok(_) if used == data.len() && self.fill()? => continue,
                Ok(value) => {
                    // serde_json checks UTF-8 only in the strings it builds;
                    // the ones the projection skips are checked here, so
                    // that a projected read refuses what a full one refuses.
                    let parsed = &self.buf[self.start..self.start + used];
                    if let Err(e) = std::str::from_utf8(parsed) {
                        return Err(self.bad_utf8(e.valid_up_to()));
                    }
                    self.consume(used);
                    return Ok(value);
                }
                Err(e) if e.is_eof() && self.fill()? => continue,
                Err(e) => return Err(self.syntax_from(&e)),
            }
        }
    }

    /// A serde_json error, its position made absolute (it counts from the
    /// start of the slice it parsed, which is `buf[start]`).
    fn syntax_from(&self, e: &serde_json::Error) -> Fault {
        let text = e.to_string();
        // serde_json appends " at line L column C"; we print the position first.
        let message = match text.rfind(" at line ") {
            Some(at) => text[..at].to_owned(),
            None => text,
        };
        let (line, column) = if e.line() <= 1 {
            (self.line, self.column + e.column())
        } else {
            (self.line + e.line() - 1, e.column())
        };
        Fault::Syntax {
            message,
            line,
            column,
        }
    }

    /// Invalid UTF-8 at `buf[start + offset]`.
    fn bad_utf8(&self, offset: usize) -> Fault {
        self.fault_at(offset, "invalid UTF-8")
    }

    /// A fault at `buf[start + offset]`, its column counted from 1 as
    /// serde_json counts.
    fn fault_at(&self, offset: usize, message: &str) -> Fault {
        let before = &self.buf[self.start..self.start + offset];
        let (line, column) = match before.iter().rposition(|&b| b == b'\n') {
            None => (self.line, self.column + offset + 1),
            Some(last) => (self.line + count_newlines(before), offset - last),
        };
        Fault::Syntax {
            message: message.to_owned(),
            line,
            column,
        }
    }

    /// An unexpected byte at `buf[start]` (serde_json counts its column from 1).
    fn syntax_here(&self, message: &str) -> Fault {
        Fault::Syntax {
            message: message.to_owned(),
            line: self.line,
            column: self.column + 1,
        }
    }

    /// The input ended inside the document.
    fn syntax_eof(&self, message: &str) -> Fault {
        Fault::Syntax {
            message: message.to_owned(),
            line: self.line,
            column: self.column,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read `data` with `threads`: the document (as JSON) or the error, and
    /// how many elements were read in batches.
    fn read_threads(data: &[u8], shape: &Shape, threads: usize) -> (Result<String, String>, usize) {
        let (doc, batched, _) = read_batches(data, shape, threads);
        (doc, batched)
    }

    /// [`read_threads`], and how many batches were set up.
    fn read_batches(
        data: &[u8],
        shape: &Shape,
        threads: usize,
    ) -> (Result<String, String>, usize, usize) {
        let options = ReadOptions {
            threads,
            ..ReadOptions::default()
        };
        let mut input = Input::new(data, &options);
        let doc = document(&mut input, &Plan::new(shape))
            .map(|v| crate::engine::to_json(&v))
            .map_err(|fault| fault.into_error("big.json").to_string());
        (doc, input.batched, input.batches)
    }

    /// A kubectl-like snapshot of `pods` pods, indented, about 1 KB each.
    fn big_snapshot(pods: usize) -> Vec<u8> {
        let items: Vec<serde_json::Value> = (0..pods)
            .map(|i| {
                serde_json::json!({
                    "metadata": {"name": format!("pod-{i}"), "namespace": format!("ns-{}", i % 7),
                                 "uid": format!("uid-{i}"), "labels": {"app": "web", "n": i},
                                 "ownerReferences": [{"kind": if i % 3 == 0 { "Job" } else { "ReplicaSet" }}]},
                    "spec": {"nodeName": if i % 5 == 0 { String::new() } else { format!("node-{}", i % 11) },
                             "containers": [{"name": "c", "image": "busybox", "args": ["sleep", "3600"]}]},
                    "status": {"phase": (["Running", "Pending", "Failed"][i % 3]),
                               "containerStatuses": [{"state": {"terminated": {"reason": "Error", "message": "exit 1"}}}],
                               "conditions": [{"type": "Ready", "status": "True", "message": "x".repeat(i % 300)}]}
                })
            })
            .collect();
        serde_json::to_vec_pretty(
            &serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List"}),
        )
        .unwrap()
    }

    #[test]
    fn threads_read_the_same_document_in_batches() {
        let data = big_snapshot(12_000);
        let shape = crate::reader::Projection::canonical().pods;
        let (alone, none) = read_threads(&data, &shape, 1);
        assert!(alone.is_ok(), "{alone:?}");
        assert_eq!(none, 0);
        for threads in 2..=4 {
            let (together, batched) = read_threads(&data, &shape, threads);
            assert!(together == alone, "{threads} threads read another document");
            assert!(
                batched > 11_000,
                "{threads} threads: only {batched} pods in batches"
            );
        }
    }

    #[test]
    fn threads_refuse_alike_where_one_thread_refuses() {
        let data = big_snapshot(6_000);
        let shape = crate::reader::Projection::canonical().pods;
        let late = data.len() * 3 / 4;
        let at = late
            + data[late..]
                .windows(4)
                .position(|w| w == b"\"xx\"")
                .unwrap()
            + 1;
        let faults: [&[u8]; 4] = [b"\xff", b"\\q", b"\\u00e9", b"\n"];
        for fault in faults {
            let mut bad = data.clone();
            bad.splice(at..at, fault.iter().copied());
            let (alone, _) = read_threads(&bad, &shape, 1);
            let (together, _) = read_threads(&bad, &shape, 2);
            assert_eq!(together, alone, "{:?}", String::from_utf8_lossy(fault));
        }
    }

    /// kubectl's Go encoder writes `&`, `<` and `>` as `\u0026`, `\u003c`
    /// and `\u003e`. An escape in every pod must not end a batch: the
    /// threads once set their batch up again before every such pod.
    #[test]
    fn escapes_do_not_end_a_batch() {
        let shape = crate::reader::Projection::canonical().pods;
        let escape = |json: Vec<u8>| {
            let text = String::from_utf8(json).unwrap();
            let arg = r#"sh -c \"a \u0026\u0026 b \u003e c\""#;
            text.replace("busybox", arg).into_bytes()
        };
        let indented = escape(big_snapshot(12_000));
        let parsed: serde_json::Value = serde_json::from_slice(&indented).unwrap();
        let compact = escape(serde_json::to_vec(&parsed).unwrap());
        assert!(compact.len() > 8 * BATCH_MIN, "{} bytes", compact.len());
        for (form, data) in [("indented", indented), ("compact", compact)] {
            let (alone, _, _) = read_batches(&data, &shape, 1);
            assert!(alone.is_ok(), "{alone:?}");
            for threads in 2..=3 {
                let (together, batched, batches) = read_batches(&data, &shape, threads);
                assert!(
                    together == alone,
                    "{form}, {threads} threads read another document"
                );
                assert!(
                    batched > 11_000,
                    "{form}, {threads} threads: {batched} pods in batches"
                );
                assert!(
                    batches < 100,
                    "{form}, {threads} threads: {batches} batches set up"
                );
            }
        }
    }

    #[test]
    fn a_bom_at_the_start_is_skipped_as_jq_skips_it() {
        let doc = b"\xef\xbb\xbf{\"items\":[{\"metadata\":{\"name\":\"p\"}}]}";
        let got = read_str(doc).unwrap();
        assert_eq!(
            crate::engine::to_json(&got),
            r#"{"items":[{"metadata":{"name":"p"}}]}"#
        );
        let e = read_str(b"\xef\xbb\xbf").unwrap_err();
        assert!(e.to_string().starts_with("snap.json: empty input"), "{e}");
        let e = read_str(b"\xef\xbb\xbf \n\t").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("snap.json:2:1: invalid JSON: EOF"),
            "{e}"
        );
        // Only at the very start, as in jq: anywhere else it is no JSON.
        let e = read_str(b" \xef\xbb\xbf{}").unwrap_err();
        assert_eq!(e.position, Some((1, 2)), "{e}");
        let e = read_str(b"\xef\xbb\xbf\xef\xbb\xbf{}").unwrap_err();
        assert_eq!(e.position, Some((1, 4)), "{e}");
        // Positions after it count its bytes, as they count every byte.
        let e = read_str(b"\xef\xbb\xbf{\"items\":[}").unwrap_err();
        assert_eq!(e.position, Some((1, 14)), "{e}");
    }

    #[test]
    fn numbers_beyond_f64_read_as_jq_prints_them() {
        let shape = crate::reader::Projection::canonical().pods;
        let doc = br#"{"items":[{"spec":{"nodeName":1e400},"status":{"phase":-1E+999}}]}"#;
        let got = read(&doc[..], "snap.json", &shape).unwrap();
        let max = "1.7976931348623157e308";
        let expected =
            format!(r#"{{"items":[{{"spec":{{"nodeName":{max}}},"status":{{"phase":-{max}}}}}]}}"#);
        assert_eq!(crate::engine::to_json(&got), expected);
    }

    #[test]
    fn surrogate_escapes_read_as_jq_reads_them() {
        let shape = crate::reader::Projection::canonical().pods;
        let doc = br#"{"items":[{"metadata":{"name":"a\udc00\ud83d\ude00"}}]}"#;
        let got = read(&doc[..], "snap.json", &shape).unwrap();
        let json = crate::engine::to_json(&got);
        assert_eq!(
            json,
            "{\"items\":[{\"metadata\":{\"name\":\"a\u{fffd}\u{1f600}\"}}]}"
        );
        // jq refuses a lone leading surrogate even where nothing reads it.
        let doc = b"{\"items\":[{\"metadata\":{\"labels\":{\"a\":\n \"x\\ud800\"}}}]}";
        let e = read(&doc[..], "snap.json", &shape).unwrap_err();
        assert_eq!(e.position, Some((2, 4)), "{e}");
        assert!(e.message.contains("lone leading surrogate"), "{e}");
    }

    /// jq 1.6 refuses to open a container on a parser stack 256 high (an
    /// array takes one, an object two: itself and its key), kept or not.
    #[test]
    fn nesting_is_refused_exactly_where_jq_refuses_it() {
        let shape = crate::reader::Projection::canonical().pods;
        let deep = |arrays: usize| format!("{}1{}", "[".repeat(arrays), "]".repeat(arrays));
        // Under `labels.x`, the stack holds 4 objects with their keys and items.
        let labels = |arrays| {
            format!(
                r#"{{"items":[{{"metadata":{{"labels":{{"x":{}}}}}}}]}}"#,
                deep(arrays)
            )
        };
        let kept = |arrays| {
            format!(
                r#"{{"items":[{{"metadata":{{"ownerReferences":{}}}}}]}}"#,
                deep(arrays)
            )
        };
        assert!(read(labels(247).as_bytes(), "s", &shape).is_ok());
        let e = read(labels(248).as_bytes(), "s", &shape).unwrap_err();
        assert_eq!(e.position, Some((1, 37 + 248)), "{e}"); // jq says 285 too
        assert!(e.message.contains("nested deeper than jq 1.6 reads"), "{e}");
        assert!(read(kept(249).as_bytes(), "s", &shape).is_ok());
        assert!(read(kept(250).as_bytes(), "s", &shape).is_err());
        let top = |arrays: usize| format!("{}{}", "[".repeat(arrays), "]".repeat(arrays));
        assert!(read(top(256).as_bytes(), "s", &Shape::Keep).is_ok());
        let e = read(top(257).as_bytes(), "s", &Shape::Keep).unwrap_err();
        assert_eq!(e.position, Some((1, 257)), "{e}");
    }

    fn read_str(s: &[u8]) -> Result<Val, SnapshotError> {
        read(s, "snap.json", &Shape::Keep)
    }

    #[test]
    fn empty_input_is_an_error() {
        let e = read_str(b"").unwrap_err();
        assert!(e.to_string().starts_with("snap.json: empty input"), "{e}");
    }

    /// serde_json words the errors the fast parser doubts, but stops at a
    /// `NaN` that jq reads: the error named is the one jq meets further on,
    /// with the fast parser and without.
    #[test]
    fn an_error_after_a_nan_is_named_where_it_is() {
        let doc = b"{\"items\": [{\"a\": NaN,\n \"b\": -Infinity, \"c\": [1 2]}]}";
        for fast_path in [true, false] {
            let options = ReadOptions {
                fast_path,
                ..ReadOptions::default()
            };
            let e = read_with(&doc[..], "snap.json", &Shape::Keep, &options).unwrap_err();
            assert_eq!(e.position, Some((2, 26)), "{e}");
        }
        // Without an error further on, serde_json alone refuses at the NaN:
        // only an error is taken from the copy that reads it as zero.
        let valid = b"{\"items\": [NaN]}";
        let slow = ReadOptions {
            fast_path: false,
            ..ReadOptions::default()
        };
        let e = read_with(&valid[..], "snap.json", &Shape::Keep, &slow).unwrap_err();
        assert_eq!(e.position, Some((1, 12)), "{e}");
        assert!(read_str(valid).is_ok());
    }

    #[test]
    fn truncated_json_names_line_and_column() {
        let e = read_str(b"{\n  \"items\": [\n").unwrap_err();
        assert_eq!(e.position, Some((3, 0)), "{e}");
        assert!(
            e.to_string()
                .starts_with("snap.json:3:0: invalid JSON: EOF"),
            "{e}"
        );
    }

    #[test]
    fn trailing_garbage_is_an_error() {
        assert!(read_str(b"{\"items\":[]} x").is_err());
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        assert!(read_str(b"{\"items\":[\"\xff\"]}").is_err());
    }

    #[test]
    fn invalid_utf8_in_a_dropped_field_is_an_error() {
        let doc = b"{\"items\":[{\"metadata\":{\"labels\":{\"a\":\n\"\xff\"}}}]}";
        let shape = crate::reader::Projection::canonical().pods;
        let e = read(&doc[..], "snap.json", &shape).unwrap_err();
        assert_eq!(e.position, Some((2, 2)), "{e}");
        assert!(e.message.contains("UTF-8"), "{e}");
    }

    fn docs(data: &[u8]) -> Result<Vec<String>, String> {
        read_documents(data, "pages.json", &Shape::Keep)
            .map(|docs| docs.iter().map(crate::engine::to_json).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn documents_are_read_until_the_end() {
        let pages = b"{\"items\":[1]}{\"items\":[2]}\n \n{\"items\":[]}\n";
        assert_eq!(
            docs(pages).unwrap(),
            [r#"{"items":[1]}"#, r#"{"items":[2]}"#, r#"{"items":[]}"#]
        );
        assert_eq!(docs(b"\xef\xbb\xbf{}").unwrap(), ["{}"]);
    }

    #[test]
    fn no_document_or_a_broken_last_one_is_an_error() {
        assert_eq!(
            docs(b"").unwrap_err(),
            "pages.json: empty input: expected a JSON document"
        );
        // As `read` words it: the input ended where a value was due.
        assert!(docs(b" \n")
            .unwrap_err()
            .contains("EOF while parsing a value"));
        let cut = docs(b"{\"items\":[1]}\n{\"items\":[").unwrap_err();
        assert!(cut.starts_with("pages.json:2:"), "{cut}");
        assert!(docs(b"{}]").unwrap_err().contains("invalid JSON"));
    }

    #[test]
    fn what_is_no_list_is_named_with_what_is_expected() {
        let expected = |found: &str| words::NOT_A_LIST.format(&[("found", &found)]);
        let pod = words::FOUND_OBJECT.format(&[("kind", &"Pod")]);
        let cases: [(&[u8], String); 7] = [
            (b"[]", expected(words::FOUND_ARRAY.text)),
            (b" [{\"kind\": \"PodList\"}]", expected(words::FOUND_ARRAY.text)),
            (b"apiVersion: v1\nkind: List\n", expected(words::FOUND_YAML.text)),
            (b"---\n", expected(words::FOUND_YAML.text)),
            (b"NAMESPACE  NAME  READY\nx  y  1/1\n", expected(words::FOUND_TABLE.text)),
            (
                b"{\"apiVersion\": \"v1\", \"metadata\": {\"kind\": \"x\", \"name\": \"a\"}, \"kind\": \"Pod\", \"spec\": {}}",
                expected(&pod),
            ),
            (b"{\"kind\": \"Event\", \"x\": \"\\\"}\"}", expected(&words::FOUND_OBJECT.format(&[("kind", &"Event")]))),
        ];
        for (data, message) in cases {
            let error = docs(data).unwrap_err();
            assert!(error.ends_with(&message), "{error}");
        }
        // Lists, pages, and what is merely broken keep their own words.
        assert!(docs(b"{\"kind\": \"PodList\"}").is_ok());
        assert!(docs(b"{\"kind\": \"List\", \"items\": []}").is_ok());
        assert!(docs(b"No resources found\n")
            .unwrap_err()
            .contains("invalid JSON"));
        assert!(docs(b"{\"items\": [").unwrap_err().contains("invalid JSON"));
    }
}
