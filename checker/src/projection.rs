//! Streaming projection: while a snapshot is parsed, keep only the fields the
//! canonical programs read (declared in `checker/programs/projection.json`).
//!
//! A 150k-pod snapshot is ~1.7 GB of JSON; the programs read a dozen short
//! fields per pod. Dropping the rest while parsing keeps memory a fraction of
//! the file and makes the jq evaluation cheap. The projection must be
//! invisible: `tests/` compare every program's output with and without it.

use crate::programs::Programs;
use jaq_json::{Map, Num, Val};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
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
}

impl Shape {
    /// Read a shape from its JSON form: `true`, `{key: shape}` or `[shape]`.
    /// Keys starting with `_` are comments.
    pub fn from_json(v: &serde_json::Value) -> Result<Self, String> {
        use serde_json::Value as J;
        match v {
            J::Bool(true) => Ok(Shape::Keep),
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
            Shape::Keep => out.push(prefix),
            Shape::Each(elem) => elem.collect_paths(format!("{prefix}[]"), out),
            Shape::Fields(fields) => {
                for (key, shape) in fields {
                    let sep = if prefix.is_empty() { "" } else { "." };
                    shape.collect_paths(format!("{prefix}{sep}{key}"), out);
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

/// A serde seed that deserializes one value into a jq value, projected by a shape.
#[derive(Clone, Copy)]
pub struct Project<'s>(pub &'s Shape);

impl<'de> DeserializeSeed<'de> for Project<'_> {
    type Value = Val;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        match self.0 {
            Shape::Keep => Val::deserialize(d),
            shape => d.deserialize_any(ProjectVisitor(shape)),
        }
    }
}

struct ProjectVisitor<'s>(&'s Shape);

impl<'de> Visitor<'de> for ProjectVisitor<'_> {
    type Value = Val;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

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
        // An array where an object was expected is kept whole: the programs
        // then see exactly what they would have seen without the projection.
        let elem = match self.0 {
            Shape::Each(elem) => elem.as_ref(),
            _ => &Shape::Keep,
        };
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Project(elem))? {
            out.push(v);
        }
        Ok(Val::from_iter(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        let mut out = Map::default();
        while let Some(key) = map.next_key::<String>()? {
            let keep = match self.0 {
                Shape::Fields(fields) => fields.get(&key),
                _ => Some(&Shape::Keep),
            };
            match keep {
                Some(shape) => {
                    let v = map.next_value_seed(Project(shape))?;
                    out.insert(Val::utf8_str(key.into_bytes()), v);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Val::obj(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_projection_keeps_the_fields_programs_read() {
        let paths = Projection::canonical().pods.paths();
        assert!(
            paths.contains(&"items[].metadata.namespace".to_owned()),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"items[].spec.nodeName".to_owned()),
            "{paths:?}"
        );
    }

    #[test]
    fn comments_are_not_shapes() {
        let shape = Shape::from_json(&serde_json::json!({"_comment": "x", "a": true})).unwrap();
        assert_eq!(shape.paths(), vec!["a".to_owned()]);
    }
}
