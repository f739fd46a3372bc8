//! The serde_json fallback: serde seeds that build a jq value by a [`Plan`].
//! The frame walker uses them for every value the fast parser doubts, so
//! that serde_json words every syntax error and its position.

use super::plan::{key_val, push_entry, Plan};
use super::tokens::NON_FINITE;
use jaq_json::{Map, Num, Val};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// A serde seed that deserializes one value by a compiled plan.
#[derive(Clone, Copy)]
pub(crate) struct Planned<'p>(pub(crate) &'p Plan);

impl<'de> DeserializeSeed<'de> for Planned<'_> {
    type Value = Val;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        match self.0 {
            Plan::Keep | Plan::KeepExcept(_) => Val::deserialize(d),
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
                    let key = key_val(planned_key, key.as_str());
                    push_entry(&mut kept, 0, (key, v), plan);
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

/// `data` (a value's bytes, from its start) with each of the fast parser's
/// [`NON_FINITE`] words outside strings written as a zero of the same
/// length, or None when it holds none. serde_json has no such numbers: on
/// the copy it words the error jq would meet further on, at the same line
/// and column, rather than stopping at a `NaN` jq reads. Only an error is
/// ever taken from the copy, never a value.
///
/// [`NON_FINITE`]: super::tokens::NON_FINITE
pub(crate) fn non_finite_as_zeros(data: &[u8]) -> Option<Vec<u8>> {
    let mut copy: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        // A word starts a token: after punctuation or whitespace.
        let starts_token = i == 0
            || matches!(
                data[i - 1],
                b':' | b',' | b'[' | b' ' | b'\n' | b'\t' | b'\r'
            );
        let word = NON_FINITE
            .iter()
            .map(|(word, _)| *word)
            .find(|word| starts_token && data[i..].starts_with(word));
        match word {
            Some(word) => {
                let zero = zero_of_len(word.len(), word[0] == b'-');
                copy.get_or_insert_with(|| data.to_vec())[i..i + word.len()].copy_from_slice(&zero);
                i += word.len();
            }
            None => i += 1,
        }
    }
    copy
}

/// A zero written in exactly `len` bytes (at least three), negative when
/// `negative`: `0.0`, `-0.0`, `0.000000`.
fn zero_of_len(len: usize, negative: bool) -> Vec<u8> {
    let sign: &[u8] = if negative { b"-" } else { b"" };
    let mut zero = [sign, b"0."].concat();
    zero.resize(len, b'0');
    zero
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_words_outside_strings_become_zeros_of_their_length() {
        let zeros = |text: &str| {
            non_finite_as_zeros(text.as_bytes()).map(|z| String::from_utf8(z).unwrap())
        };
        assert_eq!(
            zeros(r#"[NaN,-NaN, Infinity,{"a":-Infinity}]"#).as_deref(),
            Some(r#"[0.0,-0.0, 0.000000,{"a":-0.000000}]"#)
        );
        // In strings, or not where a value starts, they stay as they are.
        assert_eq!(zeros(r#"["NaN","\"Infinity",xNaN]"#), None);
        assert_eq!(zeros("[1,2]"), None);
    }
}
