//! Streaming projection: while a snapshot is parsed, keep only the fields the
//! canonical programs read (declared in `checker/programs/projection.json`).
//!
//! A 150k-pod snapshot is ~1.7 GB of JSON; the programs read a dozen short
//! fields per pod. Dropping the rest while parsing keeps memory a fraction of
//! the file and makes the jq evaluation cheap. The projection must be
//! invisible: `tests/tests/projection.rs` compares every program's output
//! with and without it.

use crate::programs::Programs;
use jaq_json::{Map, Num, Val};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;

/// What to keep of one JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Keep the whole value.
    Keep,
    /// For an object, keep only these keys, each projected by its shape.
    Fields(HashMap<String, Shape>),
    /// For an array, project every element by this shape.
    Each(Box<Shape>),
    /// Keep the value (a string). An array element whose field has this
    /// shape is kept only when the value equals the string: report.jq reads
    /// `status.conditions` only through `select(.type == "PodScheduled" and
    /// .status == "False")`, and the conditions of a running pod cost about
    /// 1.4 KB of memory (+70 MB at 50k pods; tests/ prove it invisible).
    Equals(String),
}

impl Shape {
    /// Read a shape from its JSON form: `true`, `"value"`, `{key: shape}` or `[shape]`.
    /// Keys starting with `_` are comments.
    pub fn from_json(v: &serde_json::Value) -> Result<Self, String> {
        use serde_json::Value as J;
        match v {
            J::Bool(true) => Ok(Shape::Keep),
            J::String(wanted) => Ok(Shape::Equals(wanted.clone())),
            J::Object(fields) => fields
                .iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| Ok((k.clone(), Shape::from_json(v)?)))
                .collect::<Result<_, String>>()
                .map(Shape::Fields),
            J::Array(elems) if elems.len() == 1 => {
                Ok(Shape::Each(Box::new(Shape::from_json(&elems[0])?)))
            }
            other => Err(format!("not a shape: {other}")),
        }
    }

    /// The dotted paths this shape keeps (`items[].metadata.name`), sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_paths(String::new(), &mut out);
        out.sort();
        out
    }

    fn collect_paths(&self, prefix: String, out: &mut Vec<String>) {
        match self {
            Shape::Keep | Shape::Equals(_) => out.push(prefix),
            Shape::Each(elem) => elem.collect_paths(format!("{prefix}[]"), out),
            Shape::Fields(fields) => {
                for (key, shape) in fields {
                    let sep = if prefix.is_empty() { "" } else { "." };
                    shape.collect_paths(format!("{prefix}{sep}{key}"), out);
                }
            }
        }
    }

    /// Every object key this shape names, at any depth, sorted and unique.
    pub fn keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_keys(&mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_keys(&self, out: &mut Vec<String>) {
        match self {
            Shape::Keep | Shape::Equals(_) => {}
            Shape::Each(elem) => elem.collect_keys(out),
            Shape::Fields(fields) => {
                for (key, shape) in fields {
                    out.push(key.clone());
                    shape.collect_keys(out);
                }
            }
        }
    }
}

/// The shapes of the two documents the checker reads.
#[derive(Debug, Clone)]
pub struct Projection {
    /// For `kubectl get pods -A -o json`.
    pub pods: Shape,
    /// For `kubectl get events -A -o json`.
    pub events: Shape,
}

impl Projection {
    /// The projection declared in `checker/programs/projection.json`.
    pub fn canonical() -> Self {
        let doc: serde_json::Value =
            serde_json::from_str(Programs::PROJECTION_FILE).expect("projection.json is valid JSON");
        let shape = |key: &str| Shape::from_json(&doc[key]).expect("projection.json holds shapes");
        Self {
            pods: shape("pods"),
            events: shape("events"),
        }
    }

    /// Keep everything (used to prove the projection is invisible).
    pub fn keep_all() -> Self {
        Self {
            pods: Shape::Keep,
            events: Shape::Keep,
        }
    }
}

/// A shape compiled for reading: what to do with one value while it parses.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// Not read by any program: validate it, build nothing.
    Skip,
    /// Keep the whole value.
    Keep,
    /// Keep only these keys of an object (any other value is kept whole).
    Fields(Vec<Field>),
    /// Project every element of an array (any other value is kept whole).
    Each(Box<Plan>),
}

/// One kept key of an object.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    name: Box<str>,
    /// The key as a jq value, made once: every pod shares its bytes.
    key: Val,
    plan: Plan,
    /// [`Shape::Equals`]: an element holding this field is kept only when
    /// the field's value is this string.
    only: Option<Val>,
    /// Strings of this field seen by the fast path, and how many of them
    /// were seen before: whether interning them pays.
    strings: Cell<(u32, u32)>,
}

impl Plan {
    pub(crate) fn new(shape: &Shape) -> Self {
        match shape {
            Shape::Keep | Shape::Equals(_) => Plan::Keep,
            Shape::Each(elem) => Plan::Each(Box::new(Plan::new(elem))),
            Shape::Fields(fields) => {
                let mut fields: Vec<Field> = fields
                    .iter()
                    .map(|(name, shape)| Field {
                        name: name.as_str().into(),
                        key: Val::from(name.clone()),
                        plan: Plan::new(shape),
                        only: match shape {
                            Shape::Equals(wanted) => Some(Val::from(wanted.clone())),
                            _ => None,
                        },
                        strings: Cell::new((0, 0)),
                    })
                    .collect();
                fields.sort_by(|a, b| a.name.cmp(&b.name));
                Plan::Fields(fields)
            }
        }
    }

    /// The plan of the value under `key` of an object planned by `self`.
    /// (A projection with a dozen keys: a linear scan beats hashing.)
    /// `None`: drop the value. `Some((key, plan))`: keep it, under the
    /// plan's shared key when there is one.
    pub(crate) fn field(&self, key: &str) -> Option<(Option<&Val>, &Plan)> {
        self.field_bytes(key.as_bytes())
    }

    fn field_bytes(&self, key: &[u8]) -> Option<(Option<&Val>, &Plan)> {
        self.field_entry(key)
            .map(|(field, plan)| (field.map(|f| &f.key), plan))
    }

    /// Like [`Plan::field`], with the projection's own field, if any.
    fn field_entry(&self, key: &[u8]) -> Option<(Option<&Field>, &Plan)> {
        match self {
            Plan::Fields(fields) => fields
                .iter()
                .find(|f| f.name.as_bytes() == key)
                .map(|f| (Some(f), &f.plan)),
            Plan::Skip => None,
            // An object where an array was expected is kept whole.
            Plan::Keep | Plan::Each(_) => Some((None, KEEP)),
        }
    }

    /// Whether an array element parsed by this plan is kept: always, but
    /// for an object with a [`Shape::Equals`] field whose value differs
    /// (or is missing). Anything but an object is kept whole, as always.
    pub(crate) fn keeps(&self, element: &Val) -> bool {
        let (Plan::Fields(fields), Val::Obj(map)) = (self, element) else {
            return true;
        };
        fields
            .iter()
            .filter_map(|f| f.only.as_ref().map(|wanted| (f, wanted)))
            .all(|(f, wanted)| map.get(&f.key) == Some(wanted))
    }

    /// The plan of every element of an array planned by `self`.
    pub(crate) fn element(&self) -> &Plan {
        match self {
            Plan::Each(elem) => elem,
            Plan::Skip => SKIP,
            // An array where an object was expected is kept whole: the
            // programs then see exactly what they would see unprojected.
            Plan::Keep | Plan::Fields(_) => KEEP,
        }
    }
}

const KEEP: &Plan = &Plan::Keep;
const SKIP: &Plan = &Plan::Skip;

/// The key to store for `key`: the plan's shared one, or a fresh one.
pub(crate) fn key_val(planned: Option<&Val>, key: &str) -> Val {
    match planned {
        Some(shared) => shared.clone(),
        None => Val::utf8_str(key.as_bytes().to_vec()),
    }
}

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

/// The fast path: parse one value from the start of `input` (after
/// whitespace) by `plan`, with a parser that knows only what a projection
/// needs. It skips dropped values faster than serde_json (spaces and string
/// bodies eight bytes at a time) and builds what it keeps as [`Planned`]
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
/// value again with serde_json, which words the error. Everything it
/// accepts is valid JSON except possibly for invalid UTF-8, which the
/// caller checks on every byte it consumes. Returns the value and the
/// bytes used.
pub(crate) fn parse_fast(
    input: &[u8],
    plan: &Plan,
    interner: &mut Interner,
    depth: u32,
) -> Result<(Val, usize), Stop> {
    let mut parser = Fast {
        s: input,
        i: 0,
        depth,
        interner,
    };
    parser.whitespace();
    let value = match plan {
        Plan::Skip => parser.skip_value().map(|()| Val::Null)?,
        plan => parser.value(plan)?,
    };
    Ok((value, parser.i))
}

/// An object key at the start of `input` (its `"` first), decoded as
/// [`parse_fast`] decodes strings. Returns the key and the bytes used.
pub(crate) fn parse_key(input: &[u8]) -> Result<(String, usize), Stop> {
    let mut interner = Interner::default();
    let mut parser = Fast {
        s: input,
        i: 0,
        depth: 0,
        interner: &mut interner,
    };
    let key = parser.string()?.into_owned();
    let key = String::from_utf8(key).map_err(|_| Stop::Doubt)?;
    Ok((key, parser.i))
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The lowest byte of `x` that equals `b` has its high bit set (bits above
/// it may be set wrongly, so only the lowest one counts).
fn bytes_equal(x: u64, b: u8) -> u64 {
    let y = x ^ (ONES * u64::from(b));
    y.wrapping_sub(ONES) & !y & HIGHS
}

/// Likewise for bytes below `n` (n <= 128): control characters.
fn bytes_below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS
}

struct Fast<'a, 'i> {
    s: &'a [u8],
    i: usize,
    /// jq's parser stack height at `i` (see [`JQ_MAX_DEPTH`]).
    depth: u32,
    interner: &'i mut Interner,
}

/// Kept strings that repeat from pod to pod (namespace, phase, node name,
/// owner kind) share one copy of their bytes: a few percent of the memory
/// of a projected snapshot. Per field, interning stops when it does not pay
/// (names and uids never repeat).
#[derive(Default)]
pub(crate) struct Interner {
    strings: HashMap<Box<[u8]>, Val>,
}

/// Strings per field to look at before judging whether they repeat.
const INTERN_TRIAL: u32 = 1024;
/// Most distinct strings kept.
const INTERN_MAX: usize = 1 << 16;

impl Interner {
    fn string(&mut self, field: &Field, bytes: Cow<'_, [u8]>) -> Val {
        let (seen, repeated) = field.strings.get();
        if seen >= INTERN_TRIAL && repeated * 4 < seen {
            return Val::utf8_str(bytes.into_owned());
        }
        if let Some(shared) = self.strings.get(&*bytes) {
            field
                .strings
                .set((seen.saturating_add(1), repeated.saturating_add(1)));
            return shared.clone();
        }
        field.strings.set((seen.saturating_add(1), repeated));
        let value = Val::utf8_str(bytes.to_vec());
        if self.strings.len() < INTERN_MAX {
            self.strings
                .insert(bytes.into_owned().into(), value.clone());
        }
        value
    }
}

impl<'a> Fast<'a, '_> {
    fn peek(&self) -> Result<u8, Stop> {
        self.s.get(self.i).copied().ok_or(Stop::End)
    }

    fn word(&self) -> Option<u64> {
        let bytes = self.s.get(self.i..self.i + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Skip JSON whitespace; runs of spaces (kubectl's indentation) eight
    /// bytes at a time.
    fn whitespace(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b' ' => match self.word() {
                    Some(x) => {
                        let other = x ^ (ONES * u64::from(b' '));
                        self.i += if other == 0 {
                            8
                        } else {
                            (other.trailing_zeros() / 8) as usize
                        };
                    }
                    None => self.i += 1,
                },
                b'\n' | b'\t' | b'\r' => self.i += 1,
                _ => return,
            }
        }
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

    /// Move to the next `"`, `\\` or control character inside a string.
    fn string_stop(&mut self) -> Result<u8, Stop> {
        loop {
            match self.word() {
                Some(x) => {
                    let hits = bytes_equal(x, b'"') | bytes_equal(x, b'\\') | bytes_below(x, 0x20);
                    if hits == 0 {
                        self.i += 8;
                        continue;
                    }
                    self.i += (hits.trailing_zeros() / 8) as usize;
                    return self.peek();
                }
                None => {
                    let b = self.peek()?;
                    if b == b'"' || b == b'\\' || b < 0x20 {
                        return Ok(b);
                    }
                    self.i += 1;
                }
            }
        }
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

    fn skip_string(&mut self) -> Result<(), Stop> {
        self.i += 1;
        loop {
            match self.string_stop()? {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.escape()?;
                }
                _ => return Err(Stop::Doubt),
            }
        }
    }

    /// The character the escape at `i` (its `\` is next) stands for, as jq
    /// reads it; `i` moves past it. A `\u` escape costs a few comparisons
    /// more than a plain byte, never a trip to serde_json.
    fn escape(&mut self) -> Result<char, Stop> {
        let at = self.i;
        let b = *self.s.get(at + 1).ok_or(Stop::End)?;
        if b != b'u' {
            self.i = at + 2;
            return simple_escape(b).map(char::from).ok_or(Stop::Doubt);
        }
        let first = hex4(self.s, at + 2)?;
        self.i = at + 6;
        let code = match first {
            // jq (1.6 and 1.8) reads a lone trailing surrogate as U+FFFD.
            0xDC00..=0xDFFF => 0xFFFD,
            0xD800..=0xDBFF => {
                let lone = Stop::Refuse {
                    at,
                    why: LONE_SURROGATE,
                };
                let second = match self.s.get(at + 6..at + 8) {
                    Some(b"\\u") => hex4(self.s, at + 8)?,
                    None if self.s.get(at + 6).is_none_or(|&b| b == b'\\') => {
                        return Err(Stop::End)
                    }
                    _ => return Err(lone),
                };
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(lone);
                }
                self.i = at + 12;
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            code => code,
        };
        char::from_u32(code).ok_or(Stop::Doubt)
    }

    /// Past a JSON number (exactly JSON's grammar, as serde_json checks it).
    fn skip_number(&mut self) -> Result<(), Stop> {
        let digits = |p: &mut Self| -> Result<(), Stop> {
            let start = p.i;
            while p.s.get(p.i).is_some_and(u8::is_ascii_digit) {
                p.i += 1;
            }
            match p.s.get(p.i) {
                _ if p.i > start => Ok(()),
                None => Err(Stop::End),
                Some(_) => Err(Stop::Doubt),
            }
        };
        if self.peek()? == b'-' {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => {
                self.i += 1;
                if self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                    return Err(Stop::Doubt);
                }
            }
            b'1'..=b'9' => digits(self)?,
            _ => return Err(Stop::Doubt),
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            digits(self)?;
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            digits(self)?;
        }
        Ok(())
    }

    /// A number, converted by serde_json. One beyond f64 (`1e400`), which
    /// serde_json refuses, is read as jq 1.6 prints it: the largest f64 of
    /// its sign (not infinity, which jaq would print as `Infinity`).
    fn number(&mut self) -> Result<Val, Stop> {
        let start = self.i;
        self.skip_number()?;
        let text = &self.s[start..self.i];
        Ok(serde_json::from_slice::<Val>(text).unwrap_or_else(|_| {
            let max = if text[0] == b'-' { f64::MIN } else { f64::MAX };
            Val::Num(Num::Float(max))
        }))
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        let rest = &self.s[self.i..];
        if rest.starts_with(word) {
            self.i += word.len();
            Ok(())
        } else if word.starts_with(rest) {
            Err(Stop::End)
        } else {
            Err(Stop::Doubt)
        }
    }

    fn skip_value(&mut self) -> Result<(), Stop> {
        self.whitespace();
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => self.skip_container(b'}', true),
            b'[' => self.skip_container(b']', false),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.skip_number(),
        }
    }

    fn skip_container(&mut self, close: u8, object: bool) -> Result<(), Stop> {
        self.enter(object)?;
        if self.eat(close)? {
            self.leave(object);
            return Ok(());
        }
        loop {
            if object {
                self.whitespace();
                if self.peek()? != b'"' {
                    return Err(Stop::Doubt);
                }
                self.skip_string()?;
                self.expect(b':')?;
            }
            self.skip_value()?;
            if self.end_of_element(close)? {
                self.leave(object);
                return Ok(());
            }
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
        self.enter(true)?;
        let mut kept = Vec::new();
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
                                self.interner.string(field, bytes)
                            }
                            (plan, _) => self.value(plan)?,
                        };
                        let key = match field {
                            Some(field) => field.key.clone(),
                            None => Val::utf8_str(key.into_owned()),
                        };
                        kept.push((key, value));
                    }
                    None => self.skip_value()?,
                }
                if self.end_of_element(b'}')? {
                    break;
                }
            }
        }
        self.leave(true);
        Ok(Val::obj(kept.into_iter().collect::<Map>()))
    }

    fn array(&mut self, plan: &Plan) -> Result<Val, Stop> {
        self.enter(false)?;
        let elem = plan.element();
        let mut out = Vec::new();
        if !self.eat(b']')? {
            loop {
                let value = match elem {
                    Plan::Skip => self.skip_value().map(|()| Val::Null)?,
                    elem => self.value(elem)?,
                };
                if elem.keeps(&value) {
                    out.push(value);
                }
                if self.end_of_element(b']')? {
                    break;
                }
            }
        }
        self.leave(false);
        out.shrink_to_fit();
        Ok(Val::from_iter(out))
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

/// A serde seed that deserializes one value into a jq value, projected by a shape.
#[derive(Clone, Copy)]
pub struct Project<'s>(pub &'s Shape);

impl<'de> DeserializeSeed<'de> for Project<'_> {
    type Value = Val;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        Planned(&Plan::new(self.0)).deserialize(d)
    }
}

/// A serde seed that deserializes one value by a compiled plan.
#[derive(Clone, Copy)]
pub(crate) struct Planned<'p>(pub(crate) &'p Plan);

impl<'de> DeserializeSeed<'de> for Planned<'_> {
    type Value = Val;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        match self.0 {
            Plan::Keep => Val::deserialize(d),
            Plan::Skip => d.deserialize_ignored_any(IgnoredAny).map(|_| Val::Null),
            plan => d.deserialize_any(PlanVisitor(plan)),
        }
    }
}

struct PlanVisitor<'p>(&'p Plan);

impl<'de> Visitor<'de> for PlanVisitor<'_> {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    // Scalars are built exactly as `jaq_json::Val`'s own Deserialize does.
    fn visit_bool<E>(self, v: bool) -> Result<Val, E> {
        Ok(Val::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Val, E> {
        Ok(Val::Num(Num::from_integral(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Val, E> {
        Ok(Val::Num(Num::from_integral(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Val, E> {
        Ok(Val::Num(Num::Float(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Val, E> {
        Ok(Val::utf8_str(v.as_bytes().to_vec()))
    }

    fn visit_string<E>(self, v: String) -> Result<Val, E> {
        Ok(Val::utf8_str(v.into_bytes()))
    }

    fn visit_unit<E>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
        let elem = self.0.element();
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Planned(elem))? {
            if elem.keeps(&v) {
                out.push(v);
            }
        }
        // Most projected arrays hold one element (an owner, a container):
        // do not keep the room for four that pushing made.
        out.shrink_to_fit();
        Ok(Val::from_iter(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        // Collected first so that the map is made with the exact size: a
        // pod has seven small maps, and growing them leaves room unused.
        let mut kept = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match self.0.field(key.as_str()) {
                Some((planned_key, plan)) => {
                    let v = map.next_value_seed(Planned(plan))?;
                    kept.push((key_val(planned_key, key.as_str()), v));
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        // Later duplicates replace earlier ones in place, as in `Val`'s own
        // Deserialize (both insert one entry after the other).
        Ok(Val::obj(kept.into_iter().collect::<Map>()))
    }
}

/// An object key, borrowed from the input when it has no escapes: keys the
/// projection drops are never copied.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

pub(crate) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v))
    }
}
