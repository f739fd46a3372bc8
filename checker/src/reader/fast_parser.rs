//! The fast parser: where a snapshot's bytes become jq values. It parses
//! one value by a [`Plan`], skips what the projection drops eight bytes at a
//! time, and reads JSON as jq 1.6 reads it. Whatever it doubts goes to the
//! serde_json fallback (`serde_fallback.rs`), which words the error, so it
//! only needs to be fast on valid input and never wrong.

use super::intern::Interner;
use super::shape::Plan;
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
///
/// [`Planned`]: super::serde_fallback::Planned
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
