//! The fast parser: where a snapshot's bytes become jq values. It parses
//! one value by a [`Plan`], skips what the projection drops with the byte
//! scans of `scan.rs` (sixteen bytes at a time), and reads JSON as jq 1.6
//! reads it. Whatever it doubts goes to the
//! serde_json fallback (`serde_fallback.rs`), which words the error, so it
//! only needs to be fast on valid input and never wrong.

use super::intern::Interner;
use super::scan::Scanner;
use super::shape::{push_entry, Field, Plan};
use jaq_json::{Map, Num, Val};
use std::borrow::Cow;

/// Why [`parse_fast`] returned no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The input ended inside the value: read more, or it is truncated.
    End,
    /// Invalid JSON: serde_json parses the value again and words the error.
    Doubt,
    /// JSON that jq refuses although serde_json would skip it: refused
    /// here, with these words, at `input[at]`.
    Refuse { at: usize, why: &'static str },
}

/// jq 1.6's parser gives up when a value would open with this many slots
/// on its stack (every open array takes one, every open object two: itself
/// and its pending key). jq 1.7 and later allow 10000 (see README).
pub(crate) const JQ_MAX_DEPTH: u32 = 256;
/// The words for nesting beyond [`JQ_MAX_DEPTH`].
const TOO_DEEP: &str = "nested deeper than jq 1.6 reads (its parsing depth limit is 256)";
/// The words for a `\u` leading surrogate without its trailing one.
const LONE_SURROGATE: &str =
    "lone leading surrogate in hex escape (jq refuses it even where nothing reads it)";

/// What one parsing thread reuses from value to value: its interned
/// strings, and room for the entries and elements of the objects and arrays
/// being built (a stack: a nested one is done before its parent goes on).
/// Each object and array is then made at its exact size, with no `Vec` of
/// its own to grow and shrink: a pod has a dozen of them.
#[derive(Default)]
pub(crate) struct Workspace {
    interner: Interner,
    entries: Vec<(Val, Val)>,
    elements: Vec<Val>,
    /// Which path the byte scans take (`scan.rs`).
    scanner: Scanner,
}

impl Workspace {
    /// An empty workspace whose byte scans take this path.
    pub(crate) fn with_scanner(scanner: Scanner) -> Self {
        Self {
            scanner,
            ..Self::default()
        }
    }

    /// A workspace for another thread: nothing interned yet, but what this
    /// one saw of each field's values, so that it judges alike.
    pub(crate) fn fresh(&self) -> Self {
        Self {
            interner: self.interner.fresh(),
            scanner: self.scanner,
            ..Self::default()
        }
    }
}

/// The fast path: parse one value from the start of `input` (after
/// whitespace) by `plan`, with a parser that knows only what a projection
/// needs. It skips dropped values faster than serde_json (spaces and string
/// bodies by the scans of `scan.rs`) and builds what it keeps as [`Planned`]
/// does; numbers are converted by serde_json, so they convert alike.
///
/// It reads JSON as jq 1.6 reads it, which is what serde_json reads but
/// for four cases (README, "JSON that jq reads"): a number beyond f64 is
/// the largest f64 of its sign (jq prints it so), a lone trailing
/// surrogate escape is U+FFFD, and, where serde_json would skip them, a
/// lone leading surrogate and nesting beyond [`JQ_MAX_DEPTH`] are refused
/// ([`Stop::Refuse`]). `depth` is jq's stack height where the value starts.
///
/// On anything else it does not accept (bad syntax, a control character
/// in a string) it stops with [`Stop::Doubt`], and the caller parses the
/// value again with serde_json, which words the error. Invalid UTF-8 is
/// doubted too, once the value is whole (so that a refusal or a cut
/// further on is told first, as before): the string scans note a byte of
/// 0x80 or more, and only a value holding one is validated as a whole.
/// Returns the value and the bytes used.
///
/// [`Planned`]: super::serde_fallback::Planned
pub(crate) fn parse_fast(
    input: &[u8],
    plan: &Plan,
    work: &mut Workspace,
    depth: u32,
) -> Result<(Val, usize), Stop> {
    let mut parser = Fast {
        s: input,
        i: 0,
        depth,
        scan: work.scanner,
        non_ascii: false,
        work,
    };
    parser.whitespace();
    let value = match plan {
        Plan::Skip => parser.skip_value().map(|()| Val::Null),
        plan => parser.value(plan),
    };
    // A value given up on leaves its unfinished parents' entries behind.
    if value.is_err() {
        parser.work.entries.clear();
        parser.work.elements.clear();
    }
    let value = value?;
    if parser.non_ascii && std::str::from_utf8(&input[..parser.i]).is_err() {
        return Err(Stop::Doubt);
    }
    Ok((value, parser.i))
}

/// An object key at the start of `input` (its `"` first), decoded as
/// [`parse_fast`] decodes strings. Returns the key and the bytes used.
pub(crate) fn parse_key(input: &[u8]) -> Result<(String, usize), Stop> {
    let mut work = Workspace::default();
    let mut parser = Fast {
        s: input,
        i: 0,
        depth: 0,
        scan: work.scanner,
        non_ascii: false,
        work: &mut work,
    };
    let key = parser.string()?.into_owned();
    let key = String::from_utf8(key).map_err(|_| Stop::Doubt)?;
    Ok((key, parser.i))
}

struct Fast<'a, 'i> {
    s: &'a [u8],
    i: usize,
    /// jq's parser stack height at `i` (see [`JQ_MAX_DEPTH`]).
    depth: u32,
    /// The byte scans' path (the workspace's).
    scan: Scanner,
    /// Whether a string so far held a byte of 0x80 or more: then the value
    /// is validated as UTF-8 once it is whole.
    non_ascii: bool,
    work: &'i mut Workspace,
}

impl<'a> Fast<'a, '_> {
    fn peek(&self) -> Result<u8, Stop> {
        self.s.get(self.i).copied().ok_or(Stop::End)
    }

    /// Skip JSON whitespace (see [`whitespace`]).
    #[inline(always)]
    fn whitespace(&mut self) {
        self.i = whitespace(self.s, self.i, self.scan);
    }

    fn eat(&mut self, b: u8) -> Result<bool, Stop> {
        self.whitespace();
        let found = self.peek()? == b;
        if found {
            self.i += 1;
        }
        Ok(found)
    }

    fn expect(&mut self, b: u8) -> Result<(), Stop> {
        if self.eat(b)? {
            Ok(())
        } else {
            Err(Stop::Doubt)
        }
    }

    /// Move to the next `"`, `\\` or control character inside a string
    /// (or the end of the input), noting a byte of 0x80 or more on the way.
    #[inline]
    fn string_stop(&mut self) -> Result<u8, Stop> {
        let (at, non_ascii) = self.scan.string_stop(self.s, self.i);
        self.i = at;
        self.non_ascii |= non_ascii;
        self.peek()
    }

    /// The decoded bytes of the string at `i` (its `"` is next).
    fn string(&mut self) -> Result<Cow<'a, [u8]>, Stop> {
        self.i += 1;
        let start = self.i;
        let mut owned: Option<Vec<u8>> = None;
        let mut from = start;
        loop {
            match self.string_stop()? {
                b'"' => {
                    let end = self.i;
                    self.i += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(&self.s[start..end]),
                        Some(mut bytes) => {
                            bytes.extend_from_slice(&self.s[from..end]);
                            Cow::Owned(bytes)
                        }
                    });
                }
                b'\\' => {
                    let bytes = owned.get_or_insert_with(Vec::new);
                    bytes.extend_from_slice(&self.s[from..self.i]);
                    let c = self.escape()?;
                    bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    from = self.i;
                }
                _ => return Err(Stop::Doubt),
            }
        }
    }

    /// The character the escape at `i` (its `\` is next) stands for, as jq
    /// reads it; `i` moves past it. A `\u` escape costs a few comparisons
    /// more than a plain byte, never a trip to serde_json.
    fn escape(&mut self) -> Result<char, Stop> {
        let (c, next) = escape(self.s, self.i)?;
        self.i = next;
        Ok(c)
    }

    /// Past a JSON number (exactly JSON's grammar, as serde_json checks it).
    fn skip_number(&mut self) -> Result<(), Stop> {
        self.i = skip_number(self.s, self.i)?;
        Ok(())
    }

    /// A number, converted by serde_json. One beyond f64 (`1e400`), which
    /// serde_json refuses, is read as jq 1.6 prints it: the largest f64 of
    /// its sign (not infinity, which jaq would print as `Infinity`). The
    /// words `NaN` and `Infinity` (see [`NON_FINITE`]) are jq's NaN and
    /// infinities, for the programs' type checks to refuse.
    fn number(&mut self) -> Result<Val, Stop> {
        let start = self.i;
        self.skip_number()?;
        let text = &self.s[start..self.i];
        if let Some(value) = non_finite_value(text) {
            return Ok(Val::Num(Num::Float(value)));
        }
        Ok(serde_json::from_slice::<Val>(text).unwrap_or_else(|_| {
            let max = if text[0] == b'-' { f64::MIN } else { f64::MAX };
            Val::Num(Num::Float(max))
        }))
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        self.i = literal(self.s, self.i, word)?;
        Ok(())
    }

    /// Past one value, validated as [`Fast::value`] validates it, building
    /// nothing. One loop over the tokens, its open containers a stack of
    /// bits rather than calls, its position in a local (a register) rather
    /// than in `self`: a dropped pod part is hundreds of tokens, and the
    /// byte scans between them (`scan.rs`) are the rest.
    fn skip_value(&mut self) -> Result<(), Stop> {
        let (s, scan) = (self.s, self.scan);
        let byte = |i: usize| s.get(i).copied().ok_or(Stop::End);
        let (mut i, mut depth) = (self.i, self.depth);
        let mut non_ascii = false;
        let mut open = OpenContainers::default();
        'value: loop {
            i = whitespace(s, i, scan);
            match byte(i)? {
                b'"' => i = skip_string(s, i, scan, &mut non_ascii)?,
                open_byte @ (b'{' | b'[') => {
                    let object = open_byte == b'{';
                    if depth >= JQ_MAX_DEPTH {
                        return Err(Stop::Refuse {
                            at: i,
                            why: TOO_DEEP,
                        });
                    }
                    depth += if object { 2 } else { 1 };
                    open.push(object);
                    i = whitespace(s, i + 1, scan);
                    let close = if object { b'}' } else { b']' };
                    if byte(i)? == close {
                        i += 1;
                        depth -= if object { 2 } else { 1 };
                        open.pop();
                    } else {
                        if object {
                            i = skip_key(s, i, scan, &mut non_ascii)?;
                        }
                        continue 'value;
                    }
                }
                b't' => i = literal(s, i, b"true")?,
                b'f' => i = literal(s, i, b"false")?,
                b'n' => i = literal(s, i, b"null")?,
                _ => i = skip_number(s, i)?,
            }
            // A value ended: close what it ended, or go on after a comma.
            while let Some(object) = open.top() {
                i = whitespace(s, i, scan);
                match byte(i)? {
                    b',' => {
                        i += 1;
                        if object {
                            i = skip_key(s, i, scan, &mut non_ascii)?;
                        }
                        continue 'value;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return Err(Stop::Doubt),
                }
                i += 1;
                depth -= if object { 2 } else { 1 };
                open.pop();
            }
            self.i = i;
            self.depth = depth;
            self.non_ascii |= non_ascii;
            return Ok(());
        }
    }

    /// After an element of a container: past its `,` (false) or past the
    /// container's `close` (true).
    fn end_of_element(&mut self, close: u8) -> Result<bool, Stop> {
        self.whitespace();
        match self.peek()? {
            b',' => {
                self.i += 1;
                Ok(false)
            }
            b if b == close => {
                self.i += 1;
                Ok(true)
            }
            _ => Err(Stop::Doubt),
        }
    }

    /// Open the container at `i`, as deep as jq allows.
    fn enter(&mut self, object: bool) -> Result<(), Stop> {
        if self.depth >= JQ_MAX_DEPTH {
            return Err(Stop::Refuse {
                at: self.i,
                why: TOO_DEEP,
            });
        }
        self.i += 1;
        self.depth += if object { 2 } else { 1 };
        Ok(())
    }

    fn leave(&mut self, object: bool) {
        self.depth -= if object { 2 } else { 1 };
    }

    /// A value by `plan` (not Skip), built as [`Planned`] builds it.
    ///
    /// [`Planned`]: super::serde_fallback::Planned
    fn value(&mut self, plan: &Plan) -> Result<Val, Stop> {
        self.whitespace();
        match self.peek()? {
            b'"' => Ok(Val::utf8_str(self.string()?.into_owned())),
            b'{' => self.object(plan),
            b'[' => self.array(plan),
            b't' => self.literal(b"true").map(|()| Val::Bool(true)),
            b'f' => self.literal(b"false").map(|()| Val::Bool(false)),
            b'n' => self.literal(b"null").map(|()| Val::Null),
            _ => self.number(),
        }
    }

    fn object(&mut self, plan: &Plan) -> Result<Val, Stop> {
        self.object_of(plan, None)
    }

    /// An object by `plan`; as the value of `field`, shared with an equal
    /// one made before when the field's objects repeat (see `intern.rs`).
    fn object_of(&mut self, plan: &Plan, field: Option<&Field>) -> Result<Val, Stop> {
        self.enter(true)?;
        let from = self.work.entries.len();
        if !self.eat(b'}')? {
            loop {
                self.whitespace();
                if self.peek()? != b'"' {
                    return Err(Stop::Doubt);
                }
                let key = self.string()?;
                self.expect(b':')?;
                match plan.field_entry(&key) {
                    Some((field, plan)) => {
                        self.whitespace();
                        let value = match (plan, field) {
                            (Plan::Skip, _) => self.skip_value().map(|()| Val::Null)?,
                            (_, Some(field)) if self.peek()? == b'"' => {
                                let bytes = self.string()?;
                                self.work.interner.string(field, bytes)
                            }
                            (Plan::Fields(_), Some(field)) if self.peek()? == b'{' => {
                                self.object_of(plan, Some(field))?
                            }
                            (plan, _) => self.value(plan)?,
                        };
                        let key = match field {
                            Some(field) => field.key.clone(),
                            None => Val::utf8_str(key.into_owned()),
                        };
                        push_entry(&mut self.work.entries, from, (key, value), plan);
                    }
                    None => self.skip_value()?,
                }
                if self.end_of_element(b'}')? {
                    break;
                }
            }
        }
        self.leave(true);
        let work = &mut *self.work;
        let Some(field) = field else {
            return Ok(Val::obj(work.entries.drain(from..).collect::<Map>()));
        };
        if let Some(shared) = work.interner.object(field, &work.entries[from..]) {
            work.entries.truncate(from);
            return Ok(shared);
        }
        let object = Val::obj(work.entries.drain(from..).collect::<Map>());
        work.interner.keep_object(&object);
        Ok(object)
    }

    fn array(&mut self, plan: &Plan) -> Result<Val, Stop> {
        self.enter(false)?;
        let elem = plan.element();
        let from = self.work.elements.len();
        if !self.eat(b']')? {
            loop {
                let value = match elem {
                    Plan::Skip => self.skip_value().map(|()| Val::Null)?,
                    elem => self.value(elem)?,
                };
                if elem.keeps(&value) {
                    self.work.elements.push(value);
                }
                if self.end_of_element(b']')? {
                    break;
                }
            }
        }
        self.leave(false);
        Ok(Val::from_iter(self.work.elements.drain(from..)))
    }
}

/// The first offset at or after `i` that is no JSON whitespace. Most
/// tokens follow no whitespace (`},`) or one space (`"key": value`): those
/// are told here, inline; a newline and its indentation go further.
#[inline(always)]
fn whitespace(s: &[u8], i: usize, scan: Scanner) -> usize {
    match s.get(i) {
        Some(&b) if b > b' ' => i,
        Some(b' ') if s.get(i + 1).is_some_and(|&b| b > b' ') => i + 1,
        _ => more_whitespace(s, i, scan),
    }
}

/// [`whitespace`] past more than one space: a newline and the spaces after
/// it (kubectl indents by four per level, so a pod's lines start with 26
/// spaces on average: two blocks of the scan that looks for spaces alone);
/// whatever else follows is the general scan's.
#[inline(never)]
fn more_whitespace(s: &[u8], mut i: usize, scan: Scanner) -> usize {
    if s.get(i) == Some(&b'\n') {
        i = scan.spaces(s, i + 1);
    }
    scan.token(s, i)
}

/// Past the string whose `"` is at `s[i]`, validated: the offset after its
/// closing `"`. Notes a byte of 0x80 or more in `non_ascii`.
#[inline(always)]
fn skip_string(s: &[u8], i: usize, scan: Scanner, non_ascii: &mut bool) -> Result<usize, Stop> {
    let mut i = i + 1;
    loop {
        let (stop, high) = scan.string_stop(s, i);
        *non_ascii |= high;
        match s.get(stop) {
            Some(b'"') => return Ok(stop + 1),
            Some(b'\\') => i = escape(s, stop)?.1,
            Some(_) => return Err(Stop::Doubt),
            None => return Err(Stop::End),
        }
    }
}

/// Past an object's key and its `:` (whitespace before each).
#[inline(always)]
fn skip_key(s: &[u8], i: usize, scan: Scanner, non_ascii: &mut bool) -> Result<usize, Stop> {
    let i = whitespace(s, i, scan);
    match s.get(i) {
        Some(b'"') => {}
        Some(_) => return Err(Stop::Doubt),
        None => return Err(Stop::End),
    }
    let i = whitespace(s, skip_string(s, i, scan, non_ascii)?, scan);
    match s.get(i) {
        Some(b':') => Ok(i + 1),
        Some(_) => Err(Stop::Doubt),
        None => Err(Stop::End),
    }
}

/// The character the escape at `s[at]` (its `\`) stands for, as jq reads
/// it, and the offset after it. A `\u` escape costs a few comparisons more
/// than a plain byte, never a trip to serde_json.
fn escape(s: &[u8], at: usize) -> Result<(char, usize), Stop> {
    let b = *s.get(at + 1).ok_or(Stop::End)?;
    if b != b'u' {
        let c = simple_escape(b).map(char::from).ok_or(Stop::Doubt)?;
        return Ok((c, at + 2));
    }
    let first = hex4(s, at + 2)?;
    let (code, next) = match first {
        // jq (1.6 and 1.8) reads a lone trailing surrogate as U+FFFD.
        0xDC00..=0xDFFF => (0xFFFD, at + 6),
        0xD800..=0xDBFF => {
            let lone = Stop::Refuse {
                at,
                why: LONE_SURROGATE,
            };
            let second = match s.get(at + 6..at + 8) {
                Some(b"\\u") => hex4(s, at + 8)?,
                None if s.get(at + 6).is_none_or(|&b| b == b'\\') => return Err(Stop::End),
                _ => return Err(lone),
            };
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(lone);
            }
            let pair = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            (pair, at + 12)
        }
        code => (code, at + 6),
    };
    Ok((char::from_u32(code).ok_or(Stop::Doubt)?, next))
}

/// The numbers JSON has no digits for, as Python's json, JavaScript and jq
/// write them: jq 1.6 reads them as numbers (NaN, +inf, -inf), and so does
/// the reader, wherever a number may stand, so that the programs' type
/// checks refuse them with the same words in both drivers. Exactly these
/// spellings; any other number outside JSON's grammar (`+1`, `.5`, `01`)
/// stays refused.
pub(crate) const NON_FINITE: [(&[u8], f64); 4] = [
    (b"NaN", f64::NAN),
    (b"-NaN", f64::NAN),
    (b"Infinity", f64::INFINITY),
    (b"-Infinity", f64::NEG_INFINITY),
];

/// The value of `text` when it is one of the [`NON_FINITE`] words.
fn non_finite_value(text: &[u8]) -> Option<f64> {
    NON_FINITE
        .iter()
        .find(|(word, _)| *word == text)
        .map(|&(_, value)| value)
}

/// Past the JSON number at `s[i]` (exactly JSON's grammar, as serde_json
/// checks it, and the [`NON_FINITE`] words): the offset after it.
fn skip_number(s: &[u8], mut i: usize) -> Result<usize, Stop> {
    let digits = |mut i: usize| -> Result<usize, Stop> {
        let start = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        match s.get(i) {
            _ if i > start => Ok(i),
            None => Err(Stop::End),
            Some(_) => Err(Stop::Doubt),
        }
    };
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i).ok_or(Stop::End)? {
        b'N' => return literal(s, i, b"NaN"),
        b'I' => return literal(s, i, b"Infinity"),
        b'0' => {
            i += 1;
            if s.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(Stop::Doubt);
            }
        }
        b'1'..=b'9' => i = digits(i)?,
        _ => return Err(Stop::Doubt),
    }
    if s.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Ok(i)
}

/// Past `word` (`true`, `false`, `null`) at `s[i]`.
fn literal(s: &[u8], i: usize, word: &[u8]) -> Result<usize, Stop> {
    let rest = &s[i..];
    if rest.starts_with(word) {
        Ok(i + word.len())
    } else if word.starts_with(rest) {
        Err(Stop::End)
    } else {
        Err(Stop::Doubt)
    }
}

/// The containers [`Fast::skip_value`] is inside, innermost last: a bit
/// each, set for an object. jq's depth limit (each container takes at
/// least one of its 256 slots) keeps them within the bits.
#[derive(Default)]
struct OpenContainers {
    objects: [u64; 4],
    len: usize,
}

impl OpenContainers {
    fn push(&mut self, object: bool) {
        let (word, bit) = (self.len / 64, self.len % 64);
        self.objects[word] = self.objects[word] & !(1 << bit) | u64::from(object) << bit;
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len -= 1;
    }

    /// Whether the innermost container is an object; None outside any.
    fn top(&self) -> Option<bool> {
        let last = self.len.checked_sub(1)?;
        Some(self.objects[last / 64] >> (last % 64) & 1 == 1)
    }
}

/// The four hex digits at `s[at..]` of a `\u` escape.
fn hex4(s: &[u8], at: usize) -> Result<u32, Stop> {
    let digits = s.get(at..at + 4).ok_or(Stop::End)?;
    digits.iter().try_fold(0, |code, &b| {
        let digit = char::from(b).to_digit(16).ok_or(Stop::Doubt)?;
        Ok(code << 4 | digit)
    })
}

/// The byte a two-character escape stands for (`\u` is read by `escape`).
fn simple_escape(b: u8) -> Option<u8> {
    Some(match b {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::to_json;
    use crate::reader::serde_fallback::Planned;
    use crate::reader::Shape;
    use serde::de::DeserializeSeed;

    /// Parse `input` by `shape` from jq's stack height `depth`: the value as
    /// JSON and the bytes used.
    fn parse_at(input: &str, shape: &Shape, depth: u32) -> Result<(String, usize), Stop> {
        let plan = Plan::new(shape);
        let mut work = Workspace::default();
        parse_fast(input.as_bytes(), &plan, &mut work, depth)
            .map(|(value, used)| (to_json(&value), used))
    }

    /// The whole of `input`, kept, as JSON (it must use every byte).
    fn keep(input: &str) -> Result<String, Stop> {
        let (json, used) = parse_at(input, &Shape::Keep, 0)?;
        assert_eq!(used, input.len(), "{input:?}: bytes used");
        Ok(json)
    }

    /// `input` read by the serde_json fallback, as JSON.
    fn serde(input: &str, shape: &Shape) -> String {
        let mut de = serde_json::Deserializer::from_str(input);
        to_json(&Planned(&Plan::new(shape)).deserialize(&mut de).unwrap())
    }

    /// A shape from its JSON form, as projection.json writes it.
    fn shape(json: &str) -> Shape {
        Shape::from_json(&serde_json::from_str(json).unwrap()).unwrap()
    }

    #[test]
    fn every_escape_decodes_to_its_character() {
        let cases = [
            (r#""\"""#, "\""),
            (r#""\\""#, "\\"),
            (r#""\/""#, "/"),
            (r#""\b""#, "\u{8}"),
            (r#""\f""#, "\u{c}"),
            (r#""\n""#, "\n"),
            (r#""\r""#, "\r"),
            (r#""\t""#, "\t"),
            (r#""\u0026\u003c\u003E""#, "&<>"),
            (r#""\u00e9\u4e2d""#, "é中"),
            (r#""\ud83d\ude00""#, "😀"),
            (r#""a\tb\\c\"d\u0041e""#, "a\tb\\c\"dAe"),
        ];
        for (input, text) in cases {
            let expected = serde_json::to_string(text).unwrap();
            assert_eq!(keep(input), Ok(expected.clone()), "{input}");
            assert_eq!(
                parse_key(input.as_bytes()),
                Ok((text.to_owned(), input.len()))
            );
            // A kept field's string goes through the interner: decoded alike.
            let doc = format!(r#"{{"name":{input},"other":{input}}}"#);
            let (json, _) = parse_at(&doc, &shape(r#"{"name":true}"#), 0).unwrap();
            assert_eq!(json, format!(r#"{{"name":{expected}}}"#), "{input}");
        }
    }

    #[test]
    fn escapes_jq_reads_its_own_way() {
        // A lone trailing surrogate is U+FFFD, as in jq 1.6 and 1.8.
        assert_eq!(keep(r#""a\udc00b""#), Ok("\"a\u{fffd}b\"".to_owned()));
        // A lone leading surrogate is refused at its `\`, kept or skipped.
        for input in [r#""ab\ud800""#, r#""ab\ud800x""#, r#""ab\ud800\u0041""#] {
            let refused = Err(Stop::Refuse {
                at: 3,
                why: LONE_SURROGATE,
            });
            assert_eq!(parse_at(input, &Shape::Keep, 0), refused, "{input}");
            let skipped = shape(r#"{"a":true}"#);
            let doc = format!(r#"{{"b":{input}}}"#);
            let refused = Err(Stop::Refuse {
                at: 5 + 3,
                why: LONE_SURROGATE,
            });
            assert_eq!(parse_at(&doc, &skipped, 0), refused, "{doc}");
        }
        // Cut short after a leading surrogate: the rest may still come.
        for input in [
            r#""\ud800"#,
            r#""\ud800\"#,
            r#""\ud800\u"#,
            r#""\ud800\udc"#,
        ] {
            assert_eq!(parse_at(input, &Shape::Keep, 0), Err(Stop::End), "{input}");
        }
        // Anything else serde_json words.
        for input in [
            r#""\q""#,
            r#""\x41""#,
            r#""\u00g0""#,
            "\"\u{1}\"",
            "\"a\nb\"",
        ] {
            assert_eq!(keep(input), Err(Stop::Doubt), "{input:?}");
        }
    }

    /// Strings and runs of spaces are scanned eight and sixteen bytes at a
    /// time: a stop byte must be found at every offset of a block.
    #[test]
    fn strings_and_spaces_of_every_length_are_read_to_the_byte() {
        for n in 0..24 {
            let body = "x".repeat(n);
            let spaces = " ".repeat(n);
            assert_eq!(keep(&format!(r#""{body}""#)), Ok(format!(r#""{body}""#)));
            let escaped = format!(r#"{spaces}"{body}\n{body}"{spaces}"#);
            let (json, used) = parse_at(&escaped, &Shape::Keep, 0).unwrap();
            assert_eq!(json, format!(r#""{body}\n{body}""#));
            assert_eq!(used, escaped.len() - n, "trailing spaces are not used");
            let control = format!("\"{body}\u{1f}\"");
            assert_eq!(keep(&control), Err(Stop::Doubt), "control at {n}");
            let array = format!("[{spaces}1{spaces},{spaces}\"{body}\"{spaces}]");
            assert_eq!(keep(&array), Ok(format!(r#"[1,"{body}"]"#)));
        }
    }

    #[test]
    fn numbers_convert_as_serde_json_converts_them() {
        let cases = [
            ("0", "0"),
            ("-0", "-0.0"),
            ("-0.0", "-0.0"),
            ("42", "42"),
            ("-17", "-17"),
            ("1.5", "1.5"),
            ("1E3", "1000.0"),
            ("2.5e-3", "0.0025"),
            ("9223372036854775807", "9223372036854775807"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("18446744073709551615", "18446744073709551615"),
            ("123456789012345678901234567890", "1.2345678901234568e29"),
        ];
        for (input, expected) in cases {
            assert_eq!(keep(input), Ok(expected.to_owned()), "{input}");
            assert_eq!(serde(input, &Shape::Keep), expected, "{input}");
        }
    }

    /// Beyond f64, where serde_json gives up, jq 1.6 prints the largest
    /// f64 of the number's sign.
    #[test]
    fn numbers_beyond_f64_are_the_largest_f64_of_their_sign() {
        let max = "1.7976931348623157e308";
        assert_eq!(keep("1e400"), Ok(max.to_owned()));
        assert_eq!(keep("1E+999"), Ok(max.to_owned()));
        assert_eq!(keep("-1e400"), Ok(format!("-{max}")));
        assert_eq!(keep("[1e400,-2.5E999]"), Ok(format!("[{max},-{max}]")));
        // Tiny numbers underflow to zero, as in serde_json.
        assert_eq!(keep("1e-400"), Ok(serde("1e-400", &Shape::Keep)));
    }

    #[test]
    fn numbers_outside_json_s_grammar_are_doubted() {
        for input in ["01", "-", "-a", "1.", "1.e3", ".5", "+1", "1e", "1e+"] {
            let got = parse_at(input, &Shape::Keep, 0);
            // A number that ends with the input may be cut short.
            let cut_short = input.ends_with(['-', '.', 'e', '+']);
            let expected = if cut_short { Stop::End } else { Stop::Doubt };
            assert_eq!(got.map(|(json, _)| json), Err(expected), "{input}");
        }
        // A number ends where its grammar ends; what follows is the caller's.
        assert_eq!(parse_at("12,", &Shape::Keep, 0), Ok(("12".to_owned(), 2)));
        assert_eq!(parse_at("0x10", &Shape::Keep, 0), Ok(("0".to_owned(), 1)));
        assert_eq!(parse_at("-0]", &Shape::Keep, 0), Ok(("-0.0".to_owned(), 2)));
    }

    /// NaN and the infinities, as Python's json, JavaScript and jq write
    /// them, are numbers wherever a number may stand, kept or skipped;
    /// no other spelling is.
    #[test]
    fn non_finite_words_are_numbers_and_no_other_spelling_is() {
        let read = |input: &str| match parse_fast(
            input.as_bytes(),
            &Plan::Keep,
            &mut Workspace::default(),
            0,
        ) {
            Ok((Val::Num(Num::Float(x)), used)) if used == input.len() => x,
            other => panic!("{input}: {other:?}"),
        };
        assert!(read("NaN").is_nan() && read("-NaN").is_nan());
        assert_eq!(read("Infinity"), f64::INFINITY);
        assert_eq!(read("-Infinity"), f64::NEG_INFINITY);
        let only_a = shape(r#"{"a":true}"#);
        for word in ["NaN", "-NaN", "Infinity", "-Infinity"] {
            let dropped = format!(r#"{{"b":[{word},{{"c":{word}}}],"d":{word},"a":1}}"#);
            assert_eq!(
                parse_at(&dropped, &only_a, 0).map(|(json, _)| json),
                Ok(r#"{"a":1}"#.to_owned())
            );
            assert_eq!(
                parse_at(&format!("[{word},1]"), &Shape::Keep, 0).map(|(_, used)| used),
                Ok(word.len() + 4)
            );
        }
        for odd in [
            "nan",
            "NAN",
            "Nan",
            "inf",
            "-inf",
            "Inf",
            "+NaN",
            "+Infinity",
            "NaNx",
            "Infinityy",
            "-",
        ] {
            let kept = parse_at(&format!("[{odd}]"), &Shape::Keep, 0);
            let skipped = parse_at(&format!(r#"{{"b":{odd}}}"#), &only_a, 0);
            assert_eq!(kept, Err(Stop::Doubt), "kept {odd}");
            assert_eq!(skipped, Err(Stop::Doubt), "skipped {odd}");
        }
        // Cut short: the rest may still come.
        for cut in ["N", "Na", "-N", "Inf", "-Infinit"] {
            assert_eq!(parse_at(cut, &Shape::Keep, 0), Err(Stop::End), "{cut}");
        }
    }

    /// jq 1.6's stack: an array takes one slot, an object two; 256 is full.
    #[test]
    fn nesting_stops_exactly_at_jq_s_limit() {
        let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let too_deep = |at| Err(Stop::Refuse { at, why: TOO_DEEP });
        assert_eq!(keep(&arrays(256)), Ok(arrays(256)));
        assert_eq!(parse_at(&arrays(257), &Shape::Keep, 0), too_deep(256));
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert!(keep(&objects(128)).is_ok());
        assert_eq!(parse_at(&objects(129), &Shape::Keep, 0), too_deep(128 * 5));
        // Where the value starts counts: the frame walker passes its depth.
        assert!(parse_at(&arrays(6), &Shape::Keep, 250).is_ok());
        assert_eq!(parse_at(&arrays(7), &Shape::Keep, 250), too_deep(6));
        // Dropped values are held to the limit too: jq refuses them alike.
        let dropped = format!(r#"{{"b":{}}}"#, arrays(255));
        let only_a = shape(r#"{"a":true}"#);
        assert_eq!(parse_at(&dropped, &only_a, 0), too_deep(5 + 254));
    }

    #[test]
    fn only_the_planned_fields_are_kept() {
        let pod = shape(r#"{"metadata":{"name":true},"spec":{"nodeName":true},"_comment":true}"#);
        let input = r#"{
            "metadata": {"name": "web-0", "labels": {"a": "}{\"]["}, "uid": "u"},
            "spec": {"containers": [{"args": ["x", 1, null, true, false, {"y": []}]}],
                     "nodeName": "kwok-node-0"},
            "status": {"phase": "Running"},
            "_comment": "a key starting with _ is a comment in the shape only"
        }"#;
        let (json, used) = parse_at(input, &pod, 0).unwrap();
        assert_eq!(
            json,
            r#"{"metadata":{"name":"web-0"},"spec":{"nodeName":"kwok-node-0"}}"#
        );
        assert_eq!(used, input.len());
        assert_eq!(json, serde(input, &pod), "the fallback keeps the same");
        // A skipped value is validated and used whole, and built as null.
        let skip = Plan::Skip;
        let parsed = parse_fast(input.as_bytes(), &skip, &mut Workspace::default(), 0);
        assert_eq!(
            parsed.map(|(v, used)| (to_json(&v), used)),
            Ok(("null".to_owned(), input.len()))
        );
        let broken = input.replace(r#""uid": "u""#, r#""uid" "u""#);
        assert_eq!(parse_at(&broken, &pod, 0), Err(Stop::Doubt));
        // Not the type the shape expects: kept whole, as the programs would see it.
        let odd = r#"{"metadata":["x",{"name":1,"uid":2}],"spec":"none"}"#;
        assert_eq!(keep(odd), parse_at(odd, &pod, 0).map(|(json, _)| json));
    }

    /// Objects made only of strings that repeat share one map; others,
    /// and objects of fields whose objects do not repeat, are made anew.
    #[test]
    fn repeated_small_objects_share_one_map() {
        let pods: Vec<String> = (0..3000)
            .map(|i| {
                let node = if i % 2 == 0 { "n-0" } else { "n-1" };
                format!(
                    r#"{{"metadata":{{"name":"p-{i}"}},"spec":{{"nodeName":"{node}","x":1}},"status":{{"phase":"Running","n":{}}}}}"#,
                    i % 2
                )
            })
            .collect();
        let input = format!("[{}]", pods.join(","));
        let shape = shape(
            r#"[{"metadata":{"name":true},"spec":{"nodeName":true},"status":{"phase":true,"n":true}}]"#,
        );
        let plan = Plan::new(&shape);
        let (value, used) =
            parse_fast(input.as_bytes(), &plan, &mut Workspace::default(), 0).unwrap();
        assert_eq!(used, input.len());
        assert_eq!(to_json(&value), serde(&input, &shape), "the same value");
        let Val::Arr(pods) = value else {
            panic!("an array")
        };
        let part = |pod: &Val, key: &str| match pod {
            Val::Obj(map) => match map.get(&Val::from(key.to_owned())) {
                Some(Val::Obj(part)) => part.clone(),
                other => panic!("{key}: {other:?}"),
            },
            other => panic!("a pod: {other:?}"),
        };
        let shared = |a: usize, b: usize, key: &str| {
            jaq_json::Rc::ptr_eq(&part(&pods[a], key), &part(&pods[b], key))
        };
        assert!(shared(0, 2998, "spec") && shared(1, 2999, "spec"));
        assert!(!shared(0, 1, "spec"), "another node");
        assert!(!shared(0, 2, "status"), "not only strings");
        assert!(!shared(0, 2, "metadata"), "names do not repeat");
    }

    #[test]
    fn an_equals_field_keeps_only_the_elements_it_names() {
        let conditions = shape(r#"{"conditions":[{"type":"PodScheduled","status":true}]}"#);
        let input = r#"{"conditions":[
            {"type":"Ready","status":"True"},
            {"type":"PodScheduled","status":"False","message":"0/3 nodes"},
            {"status":"False"},
            "odd"
        ]}"#;
        let expected = r#"{"conditions":[{"type":"PodScheduled","status":"False"},"odd"]}"#;
        assert_eq!(
            parse_at(input, &conditions, 0).map(|(json, _)| json),
            Ok(expected.to_owned())
        );
        assert_eq!(
            serde(input, &conditions),
            expected,
            "the fallback keeps the same"
        );
    }

    #[test]
    fn truncated_input_asks_for_more_and_bad_syntax_is_doubted() {
        let ends = [
            "",
            "  ",
            "{",
            r#"{"a""#,
            r#"{"a":"#,
            r#"{"a":1"#,
            "[1,",
            r#""ab"#,
            "tru",
            "nul",
            "[fals",
        ];
        for input in ends {
            assert_eq!(
                parse_at(input, &Shape::Keep, 0),
                Err(Stop::End),
                "{input:?}"
            );
        }
        let doubts = [
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            "[1 2]",
            "[1,]",
            "{,}",
            "tx",
            "nulL",
            "}",
            r#"{"a":1,}"#,
        ];
        for input in doubts {
            assert_eq!(
                parse_at(input, &Shape::Keep, 0),
                Err(Stop::Doubt),
                "{input:?}"
            );
            let dropped = Plan::Skip;
            let parsed = parse_fast(input.as_bytes(), &dropped, &mut Workspace::default(), 0);
            assert_eq!(
                parsed.map(|(_, used)| used),
                Err(Stop::Doubt),
                "skipped {input:?}"
            );
        }
    }

    #[test]
    fn a_value_uses_its_leading_whitespace_and_not_what_follows() {
        assert_eq!(
            parse_at(" \n\t\r {\"a\":1} ,", &Shape::Keep, 0),
            Ok((r#"{"a":1}"#.to_owned(), 12))
        );
        assert_eq!(
            parse_at("true]", &Shape::Keep, 0),
            Ok(("true".to_owned(), 4))
        );
        assert_eq!(parse_key(br#""k\u0041y": 1"#), Ok(("kAy".to_owned(), 10)));
        // A key is taken as the bytes say; invalid UTF-8 goes to serde_json.
        assert_eq!(parse_key(b"\"\xff\""), Err(Stop::Doubt));
    }
}
