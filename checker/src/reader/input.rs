//! The unread part of a document in a buffer refilled from its reader:
//! every value in it parsed from one contiguous slice, by the fast parser
//! (`fast_parser.rs`; the elements of a long array by several threads,
//! `batch.rs`) or, for what it doubts, by serde_json
//! (`serde_fallback.rs`), which words the error (`fault.rs`).

use super::batch::{self, Lane};
use super::fast_parser::{parse_fast, parse_key, Stop, Workspace};
use super::fault::Fault;
use super::plan::Plan;
use super::scan::Scanner;
use super::serde_fallback::{non_finite_as_zeros, Key, KeySeed, Planned};
use super::BOM;
use jaq_json::Val;
use serde::de::{DeserializeSeed, IgnoredAny};
use std::io::{self, Read};

/// Fewer unread bytes than this are parsed by the calling thread alone.
pub(super) const BATCH_MIN: usize = 256 << 10;

/// The unread part of the document: `buf[start..end]`, refilled from `reader`.
pub(super) struct Input<R> {
    pub(super) reader: R,
    /// The first buffer size.
    pub(super) initial: usize,
    /// Whether to try [`parse_fast`] first.
    pub(super) fast_path: bool,
    /// Threads for long arrays.
    pub(super) threads: usize,
    /// Elements read in batches, by several threads, and batches set up
    /// (tests look).
    pub(super) batched: usize,
    pub(super) batches: usize,
    pub(super) work: Workspace,
    pub(super) buf: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) eof: bool,
    /// Bytes of a UTF-8 byte order mark skipped at the start (0 or 3).
    pub(super) bom: u64,
    /// Line (1-based) and column (bytes since the last newline) of `buf[start]`.
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) consumed: u64,
}

impl<R: Read> Input<R> {
    pub(super) fn new(reader: R, options: &ReadOptions) -> Self {
        Self {
            reader,
            initial: options.initial_buffer.max(1),
            fast_path: options.fast_path,
            threads: options.threads.max(1),
            batched: 0,
            batches: 0,
            work: Workspace::with_scanner(match options.scan {
                ScanPath::Best => Scanner::best(),
                ScanPath::NoAvx2 => Scanner::without_avx2(),
                ScanPath::Portable => Scanner::Portable,
            }),
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            bom: 0,
            line: 1,
            column: 0,
            consumed: 0,
        }
    }

    pub(super) fn at_start(&self) -> bool {
        self.consumed == self.bom && self.line == 1 && self.column == self.bom as usize
    }

    /// Step over a UTF-8 byte order mark at the very start, as jq does
    /// (Windows editors and PowerShell write one). Columns still count its
    /// bytes, as they count every byte.
    pub(super) fn skip_bom(&mut self) -> Result<(), Fault> {
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
    pub(super) fn fill(&mut self) -> Result<bool, Fault> {
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
    pub(super) fn peek_token(&mut self) -> Result<Option<u8>, Fault> {
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
    pub(super) fn consume(&mut self, n: usize) {
        let bytes = &self.buf[self.start..self.start + n];
        // Every byte of the document is counted here, once.
        let newlines = self.work.scanner().newlines(bytes);
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
    pub(super) fn value(&mut self, plan: &Plan, depth: u32) -> Result<Val, Fault> {
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
    pub(super) fn batch(
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
    pub(super) fn key(&mut self) -> Result<String, Fault> {
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
}

/// How [`read_with`](super::snapshot::read_with) reads. The result never depends on it: tests use tiny
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
    /// The fast path's byte scans: the fastest this CPU has, or another
    /// (tests compare them; `scan.rs`).
    pub scan: ScanPath,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            initial_buffer: BUFFER,
            fast_path: true,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
            scan: ScanPath::Best,
        }
    }
}

/// Which path the fast parser's byte scans take (`scan.rs`). The result
/// never depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanPath {
    /// The fastest this CPU has: AVX2 for indentation where the CPU has
    /// it, SSE2 on any x86_64, eight bytes at a time in a `u64` elsewhere.
    Best,
    /// The same without AVX2.
    NoAvx2,
    /// Eight bytes at a time in a `u64`, on any CPU.
    Portable,
}

/// The first buffer size; it doubles while one value does not fit.
const BUFFER: usize = 2 << 20;
/// Most threads used to parse the elements of an array.
const MAX_THREADS: usize = 4;

impl<R> Input<R> {
    /// A serde_json error, its position made absolute (it counts from the
    /// start of the slice it parsed, which is `buf[start]`).
    pub(super) fn syntax_from(&self, e: &serde_json::Error) -> Fault {
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
    pub(super) fn bad_utf8(&self, offset: usize) -> Fault {
        self.fault_at(offset, "invalid UTF-8")
    }

    /// A fault at `buf[start + offset]`, its column counted from 1 as
    /// serde_json counts.
    pub(super) fn fault_at(&self, offset: usize, message: &str) -> Fault {
        let before = &self.buf[self.start..self.start + offset];
        let (line, column) = match before.iter().rposition(|&b| b == b'\n') {
            None => (self.line, self.column + offset + 1),
            Some(last) => (
                self.line + self.work.scanner().newlines(before),
                offset - last,
            ),
        };
        Fault::Syntax {
            message: message.to_owned(),
            line,
            column,
        }
    }

    /// An unexpected byte at `buf[start]` (serde_json counts its column from 1).
    pub(super) fn syntax_here(&self, message: &str) -> Fault {
        Fault::Syntax {
            message: message.to_owned(),
            line: self.line,
            column: self.column + 1,
        }
    }

    /// The input ended inside the document.
    pub(super) fn syntax_eof(&self, message: &str) -> Fault {
        Fault::Syntax {
            message: message.to_owned(),
            line: self.line,
            column: self.column,
        }
    }
}
