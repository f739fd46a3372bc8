//! The frame walker: a document's outer frame (the top-level object and
//! the arrays right under it, like `items`) walked over the refilled buffer
//! of `input.rs`, every value inside it handed to a parser; and what a
//! document that is no JSON is (YAML, kubectl's table), named from its
//! first bytes. JSON that is no List (null, a bare array, a single object)
//! is read, and refused by the programs' list_items (lib.jq) in the words
//! the bash prints too.

use super::fault::Fault;
use super::input::Input;
use super::plan::{key_val, Plan};
use crate::contract::words;
use jaq_json::{Map, Val};
use std::io::Read;

pub(super) fn document<R: Read>(input: &mut Input<R>, plan: &Plan) -> Result<Val, Fault> {
    input.skip_bom()?;
    let doc = next_document(input, plan)?;
    match input.peek_token()? {
        None => Ok(doc),
        Some(_) => Err(input.syntax_here("trailing characters")),
    }
}

pub(super) fn documents<R: Read>(input: &mut Input<R>, plan: &Plan) -> Result<Vec<Val>, Fault> {
    input.skip_bom()?;
    let first = input.not_a_list_at_start()?;
    let mut docs = vec![
        next_document(input, plan).map_err(|fault| match (&first, fault) {
            (Some(found), Fault::Syntax { .. }) => Fault::NotAList(found.clone()),
            (_, fault) => fault,
        })?,
    ];
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

/// How many bytes of a snapshot's first line [`Input::not_a_list_at_start`]
/// looks at.
const HEAD: usize = 4096;

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

impl<R: Read> Input<R> {
    /// At the start of a snapshot: what its first document is when it is
    /// plainly no JSON (YAML, kubectl's table), in the contract's words.
    pub(super) fn not_a_list_at_start(&mut self) -> Result<Option<String>, Fault> {
        let Some(first) = self.peek_token()? else {
            return Ok(None);
        };
        match first {
            b'{' | b'[' | b'"' | b'0'..=b'9' => return Ok(None),
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
}
