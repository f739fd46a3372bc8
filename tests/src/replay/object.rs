//! One stored object, lean: its compact JSON exactly as the apiserver writes
//! it in a list (no `kind`/`apiVersion`, Go's escapes), plus its key. The
//! server keeps nothing else per object: 150k kubectl-shaped pods cost their
//! compact size, and an object that several timeline states share is stored
//! once ([`Interner`]). Selectors, Tables and `get` parse it when they need
//! a field.

use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::io;
use std::sync::Arc;

/// A stored object; cloning shares it.
#[derive(Clone)]
pub struct Object(Arc<Stored>);

struct Stored {
    json: Box<str>,
    namespace: Box<str>,
    name: Box<str>,
}

impl Object {
    /// Store `value` as the apiserver lists it: `kind` and `apiVersion`
    /// dropped, compact, `&` `<` `>` escaped like Go's encoder.
    pub fn from_value(mut value: Value) -> Self {
        if let Some(fields) = value.as_object_mut() {
            fields.remove("kind");
            fields.remove("apiVersion");
        }
        let text = |field: &str| -> Box<str> {
            value
                .pointer(&format!("/metadata/{field}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .into()
        };
        let (namespace, name) = (text("namespace"), text("name"));
        Self(Arc::new(Stored {
            json: go_json(&value).into(),
            namespace,
            name,
        }))
    }

    /// The compact JSON text.
    pub fn json(&self) -> &str {
        &self.0.json
    }

    /// The object as a `Value` (parsed on each call: for small answers).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0.json).expect("a stored object is JSON")
    }

    /// `metadata.namespace` ("" when absent).
    pub fn namespace(&self) -> &str {
        &self.0.namespace
    }

    /// `metadata.name` ("" when absent).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Whether both are the same stored copy (not only equal).
    pub fn shares_storage_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        self.shares_storage_with(other) || self.json() == other.json()
    }
}

impl Eq for Object {}

impl Hash for Object {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.json().hash(state);
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Object({}/{}, {} bytes)",
            self.namespace(),
            self.name(),
            self.json().len()
        )
    }
}

/// Keeps one copy of equal objects across the states of a timeline.
#[derive(Debug, Default)]
pub struct Interner(HashSet<Object>);

impl Interner {
    /// The stored copy equal to `object` (the first one seen).
    pub fn intern(&mut self, object: Object) -> Object {
        if let Some(stored) = self.0.get(&object) {
            return stored.clone();
        }
        self.0.insert(object.clone());
        object
    }
}

/// Compact JSON the way Go's `encoding/json` writes it (the apiserver's and
/// kubectl's encoder): `&`, `<`, `>`, U+2028 and U+2029 as `\uXXXX`.
pub fn go_json(value: &impl Serialize) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    value
        .serialize(&mut serializer)
        .expect("a Value always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's compact formatter with Go's HTML-safe string escapes.
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            let escape = match c {
                '&' => "\\u0026",
                '<' => "\\u003c",
                '>' => "\\u003e",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..at])?;
            writer.write_all(escape.as_bytes())?;
            start = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_like_the_apiserver_lists_it() {
        let pod = json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"namespace": "ns", "name": "p", "annotations": {"a": "x && y <z> \u{2028}"}}});
        let object = Object::from_value(pod);
        assert_eq!(
            object.json(),
            r#"{"metadata":{"annotations":{"a":"x \u0026\u0026 y \u003cz\u003e \u2028"},"name":"p","namespace":"ns"}}"#
        );
        assert_eq!((object.namespace(), object.name()), ("ns", "p"));
        assert_eq!(
            object.value()["metadata"]["annotations"]["a"],
            "x && y <z> \u{2028}"
        );
    }

    #[test]
    fn equal_objects_are_stored_once() {
        let mut interner = Interner::default();
        let a = interner.intern(Object::from_value(json!({"metadata": {"name": "a"}})));
        let again = interner.intern(Object::from_value(json!({"metadata": {"name": "a"}})));
        let b = interner.intern(Object::from_value(json!({"metadata": {"name": "b"}})));
        assert!(a.shares_storage_with(&again));
        assert!(!a.shares_storage_with(&b));
    }
}
