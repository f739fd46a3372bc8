//! The fast parser: where a snapshot's bytes become jq values. It parses
//! one value by a [`Plan`], skips what the projection drops with the byte
//! scans of `scan.rs` (sixteen bytes at a time), and reads JSON as jq 1.6
//! reads it. Whatever it doubts goes to the
//! serde_json fallback (`serde_fallback.rs`), which words the error, so it
//! only needs to be fast on valid input and never wrong.
//!
//! It is in three parts: this file builds the values the plan keeps
//! (objects, arrays, and the scalars in them); `skip.rs` skips the values
//! it drops, in one loop; `tokens.rs` reads the tokens both are made of
//! (whitespace, strings and their escapes, numbers, literals).

use super::intern::Interner;
use super::plan::{push_entry, Field, Plan};
use super::scan::Scanner;
pub(crate) use super::tokens::Stop;
use super::tokens::{escape, literal, non_finite_value, skip_number, skip_string, whitespace};
use jaq_json::{Map, Num, Val};
use std::borrow::Cow;

/// jq 1.6's parser gives up when a value would open with this many slots
/// on its stack (every open array takes one, every open object two: itself
/// and its pending key). jq 1.7 and later allow 10000 (see README).
pub(crate) const JQ_MAX_DEPTH: u32 = 256;
/// The words for nesting beyond [`JQ_MAX_DEPTH`].
pub(super) const TOO_DEEP: &str =
    "nested deeper than jq 1.6 reads (its parsing depth limit is 256)";

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

    /// The path its byte scans take.
    pub(crate) fn scanner(&self) -> Scanner {
        self.scanner
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

pub(super) struct Fast<'a, 'i> {
    pub(super) s: &'a [u8],
    pub(super) i: usize,
    /// jq's parser stack height at `i` (see [`JQ_MAX_DEPTH`]).
    pub(super) depth: u32,
    /// The byte scans' path (the workspace's).
    pub(super) scan: Scanner,
    /// Whether a string so far held a byte of 0x80 or more: then the value
    /// is validated as UTF-8 once it is whole.
    pub(super) non_ascii: bool,
    pub(super) work: &'i mut Workspace,
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
    #[inline]
    fn string(&mut self) -> Result<Cow<'a, [u8]>, Stop> {
        // Most strings (every key of a kept object: 77 a pod) hold no
        // escape: their bytes are borrowed after one scan.
        let start = self.i + 1;
        let (stop, non_ascii) = self.scan.string_stop(self.s, start);
        if self.s.get(stop) == Some(&b'"') {
            self.non_ascii |= non_ascii;
            self.i = stop + 1;
            return Ok(Cow::Borrowed(&self.s[start..stop]));
        }
        self.escaped_string()
    }

    /// An object's key and the `:` after it (its `"` is next): the key's
    /// bytes borrowed, as [`Fast::string`] reads them, with the common
    /// case (no escape, `:` right after) inline.
    #[inline(always)]
    fn key(&mut self) -> Result<Cow<'a, [u8]>, Stop> {
        let (s, start) = (self.s, self.i + 1);
        let (stop, non_ascii) = self.scan.string_stop(s, start);
        if s.get(stop) == Some(&b'"') && s.get(stop + 1) == Some(&b':') {
            self.non_ascii |= non_ascii;
            self.i = stop + 2;
            return Ok(Cow::Borrowed(&s[start..stop]));
        }
        let key = self.string()?;
        self.expect(b':')?;
        Ok(key)
    }

    /// Past the value of a key the plan drops. Most are strings (a pod's
    /// timestamps, IPs, images): skipped here inline, without the skip
    /// loop's call; anything else is the loop's.
    #[inline(always)]
    fn skip_dropped(&mut self) -> Result<(), Stop> {
        self.whitespace();
        if self.peek()? != b'"' {
            return self.skip_value();
        }
        let mut non_ascii = false;
        self.i = skip_string(self.s, self.i, self.scan, &mut non_ascii)?;
        self.non_ascii |= non_ascii;
        Ok(())
    }

    /// [`Fast::string`] for a string whose body holds an escape (or is
    /// cut short, or invalid).
    #[inline(never)]
    fn escaped_string(&mut self) -> Result<Cow<'a, [u8]>, Stop> {
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
    /// words `NaN` and `Infinity` (`tokens.rs`, `NON_FINITE`) are jq's NaN and
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
        let from = self.entries(plan)?;
        Ok(self.finish_object(from, field))
    }

    /// An element of an array by `plan`, or None when the plan does not
    /// keep it. An object a search looks into (most of a pod's conditions,
    /// owners and container statuses are not what it looks for) is judged
    /// by its entries, before any map is made of them.
    fn element(&mut self, plan: &Plan) -> Result<Option<Val>, Stop> {
        self.whitespace();
        if plan.guarded() && self.peek()? == b'{' {
            let from = self.entries(plan)?;
            if !plan.keeps_entries(&self.work.entries[from..]) {
                self.work.entries.truncate(from);
                return Ok(None);
            }
            return Ok(Some(self.finish_object(from, None)));
        }
        let value = self.value(plan)?;
        Ok(plan.keeps(&value).then_some(value))
    }

    /// The kept entries of the object at `i` by `plan`, pushed on the
    /// workspace's entries from the offset returned on.
    fn entries(&mut self, plan: &Plan) -> Result<usize, Stop> {
        self.enter(true)?;
        let from = self.work.entries.len();
        if !self.eat(b'}')? {
            loop {
                self.whitespace();
                if self.peek()? != b'"' {
                    return Err(Stop::Doubt);
                }
                let key = self.key()?;
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
                    None => self.skip_dropped()?,
                }
                if self.end_of_element(b'}')? {
                    break;
                }
            }
        }
        self.leave(true);
        Ok(from)
    }

    /// The object of the entries from `from` on; as the value of `field`,
    /// shared with an equal one made before when the field's objects
    /// repeat (see `intern.rs`).
    fn finish_object(&mut self, from: usize, field: Option<&Field>) -> Val {
        let work = &mut *self.work;
        let Some(field) = field else {
            return Val::obj(work.entries.drain(from..).collect::<Map>());
        };
        if let Some(shared) = work.interner.object(field, &work.entries[from..]) {
            work.entries.truncate(from);
            return shared;
        }
        let object = Val::obj(work.entries.drain(from..).collect::<Map>());
        work.interner.keep_object(&object);
        object
    }

    fn array(&mut self, plan: &Plan) -> Result<Val, Stop> {
        self.enter(false)?;
        let elem = plan.element();
        let from = self.work.elements.len();
        if !self.eat(b']')? {
            loop {
                match elem {
                    Plan::Skip => self.skip_value()?,
                    elem => {
                        if let Some(value) = self.element(elem)? {
                            self.work.elements.push(value);
                        }
                    }
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::engine::to_json;
    use crate::reader::serde_fallback::Planned;
    use crate::reader::Shape;
    use serde::de::DeserializeSeed;
    /// Parse `input` by `shape` from jq's stack height `depth`: the value as
    /// JSON and the bytes used.
    pub(in crate::reader) fn parse_at(
        input: &str,
        shape: &Shape,
        depth: u32,
    ) -> Result<(String, usize), Stop> {
        let plan = Plan::new(shape);
        let mut work = Workspace::default();
        parse_fast(input.as_bytes(), &plan, &mut work, depth)
            .map(|(value, used)| (to_json(&value), used))
    }

    /// The whole of `input`, kept, as JSON (it must use every byte).
    pub(in crate::reader) fn keep(input: &str) -> Result<String, Stop> {
        let (json, used) = parse_at(input, &Shape::Keep, 0)?;
        assert_eq!(used, input.len(), "{input:?}: bytes used");
        Ok(json)
    }

    /// `input` read by the serde_json fallback, as JSON.
    pub(in crate::reader) fn serde(input: &str, shape: &Shape) -> String {
        let mut de = serde_json::Deserializer::from_str(input);
        to_json(&Planned(&Plan::new(shape)).deserialize(&mut de).unwrap())
    }

    /// A shape from its JSON form, as projection.json writes it.
    pub(in crate::reader) fn shape(json: &str) -> Shape {
        Shape::from_json(&serde_json::from_str(json).unwrap()).unwrap()
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
