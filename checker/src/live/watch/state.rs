//! The pods a watch holds: a list's pods kept by namespace/name, every
//! event of the stream applied to them (ADDED and MODIFIED replace,
//! DELETED removes, BOOKMARK only moves the version), each event read by
//! the reader's own projection of a listed pod ([`event_shape`]).

use crate::engine::{field, to_raw};
use crate::reader::{Projection, Shape};
use jaq_json::{Map, Rc, Val};
use std::collections::{BTreeMap, HashMap};

/// The pods at one resourceVersion: a list, then every event applied.
pub struct Pods {
    /// By (namespace, name): the API server lists in this order.
    items: BTreeMap<(String, String), Val>,
    version: Option<String>,
}

impl Pods {
    /// The pods of a list's documents (its pages), at its version.
    pub fn from_list(docs: &[Val]) -> Self {
        let version = docs
            .first()
            .and_then(|doc| field(doc, "metadata"))
            .and_then(|m| text(m, "resourceVersion"))
            .filter(|v| !v.is_empty());
        let mut items = BTreeMap::new();
        for doc in docs {
            if let Some(Val::Arr(pods)) = field(doc, "items") {
                for pod in pods.iter() {
                    items.insert(key(pod), pod.clone());
                }
            }
        }
        Self { items, version }
    }

    /// The version of the state held.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The state as one list page at its version (report.jq's input).
    pub fn page(&self) -> Val {
        let mut metadata = Map::default();
        let version = self.version.clone().map_or(Val::Null, Val::from);
        metadata.insert(Val::from("resourceVersion".to_owned()), version);
        let mut page = Map::default();
        page.insert(Val::from("metadata".to_owned()), Val::obj(metadata));
        let items: Val = self.items.values().cloned().collect();
        page.insert(Val::from("items".to_owned()), items);
        Val::obj(page)
    }

    /// Apply one event (projected by [`event_shape`]). Err: why the watch
    /// cannot go on (an ERROR event, an unknown type).
    pub fn apply(&mut self, event: &Val) -> Result<Change, String> {
        let kind = field(event, "type").map(to_raw).unwrap_or_default();
        let object = field(event, "object").cloned().unwrap_or(Val::Null);
        let version = field(&object, "metadata").and_then(|m| text(m, "resourceVersion"));
        let change = match kind.as_str() {
            "ADDED" | "MODIFIED" => {
                let pod = without_version(object);
                self.items.insert(key(&pod), pod);
                Change::Pods
            }
            "DELETED" => {
                self.items.remove(&key(&object));
                Change::Pods
            }
            "BOOKMARK" => Change::Version,
            "ERROR" => return Err(status_words(&object)),
            other => return Err(format!("an event of unknown type {other:?}")),
        };
        if version.is_some() {
            self.version = version;
        }
        Ok(change)
    }
}

/// What an event changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The pods (and the version).
    Pods,
    /// Only the version (a bookmark).
    Version,
}

/// An ERROR event's Status in words: `410 Expired: too old resource version`.
fn status_words(status: &Val) -> String {
    let part = |key| field(status, key).map(to_raw).unwrap_or_default();
    format!(
        "ERROR event {} {}: {}",
        part("code"),
        part("reason"),
        part("message")
    )
}

fn text(v: &Val, key: &str) -> Option<String> {
    match field(v, key) {
        Some(s @ (Val::TStr(_) | Val::BStr(_))) => Some(to_raw(s)),
        _ => None,
    }
}

/// A pod's (namespace, name).
fn key(pod: &Val) -> (String, String) {
    let metadata = field(pod, "metadata");
    let part = |k| metadata.and_then(|m| text(m, k)).unwrap_or_default();
    (part("namespace"), part("name"))
}

/// The object without `metadata.resourceVersion`, which [`event_shape`]
/// keeps for the event and the list's projection drops: a pod from a watch
/// is then exactly the pod a list would give.
fn without_version(mut object: Val) -> Val {
    if let Val::Obj(map) = &mut object {
        let map = Rc::make_mut(map);
        if let Some(Val::Obj(metadata)) = map.get_mut(&Val::from("metadata".to_owned())) {
            Rc::make_mut(metadata).shift_remove(&Val::from("resourceVersion".to_owned()));
        }
    }
    object
}

/// The shape a watch event is read with: `{type, object}`, the object by
/// the reader's projection of one listed pod, plus what a bookmark and an
/// ERROR event carry (`metadata.resourceVersion`; a Status's `code`,
/// `reason`, `message`, which a pod does not have at its top level).
pub fn event_shape(projection: &Projection) -> Shape {
    let Shape::Fields(list) = &projection.pods else {
        return Shape::Keep;
    };
    let mut object = match list.get("items") {
        Some(Shape::Each(pod)) => (**pod).clone(),
        _ => Shape::Keep,
    };
    if let Shape::Fields(fields) = &mut object {
        match fields.get_mut("metadata") {
            Some(Shape::Fields(metadata)) => {
                metadata.insert("resourceVersion".into(), Shape::Keep);
            }
            _ => {
                fields.insert("metadata".into(), Shape::Keep);
            }
        }
        for status in ["code", "reason", "message"] {
            fields.entry(status.into()).or_insert(Shape::Keep);
        }
    }
    Shape::Fields(HashMap::from([
        ("type".to_owned(), Shape::Keep),
        ("object".to_owned(), object),
    ]))
}

/// An event's `object.metadata.resourceVersion`.
pub(super) fn event_version(event: &Val) -> Option<String> {
    field(event, "object")
        .and_then(|object| field(object, "metadata"))
        .and_then(|metadata| text(metadata, "resourceVersion"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::snapshot;

    fn read(json: &str, shape: &Shape) -> Val {
        snapshot::read(json.as_bytes(), "test", shape).expect("JSON")
    }

    const POD: &str = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"namespace":"ns","name":"a","uid":"u","resourceVersion":"7","labels":{"x":"y"}},"spec":{"nodeName":"n","containers":[]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#;

    #[test]
    fn a_watched_pod_is_exactly_the_pod_a_list_gives() {
        let projection = Projection::canonical();
        let list = read(
            &format!(r#"{{"metadata":{{"resourceVersion":"7"}},"items":[{POD}]}}"#),
            &projection.pods,
        );
        let event = read(
            &format!(r#"{{"type":"ADDED","object":{POD}}}"#),
            &event_shape(&projection),
        );
        let mut watched = Pods::from_list(&[]);
        assert_eq!(watched.apply(&event), Ok(Change::Pods));
        assert_eq!(watched.version(), Some("7"));
        let listed = Pods::from_list(&[list]);
        assert_eq!(
            crate::engine::to_json(&watched.page()),
            crate::engine::to_json(&listed.page())
        );
    }

    #[test]
    fn events_replace_remove_and_bookmarks_move_the_version() {
        let projection = Projection::canonical();
        let shape = event_shape(&projection);
        let event = |json: String| read(&json, &shape);
        let pod = |name: &str, version: &str, phase: &str| {
            format!(
                r#"{{"metadata":{{"namespace":"ns","name":"{name}","resourceVersion":"{version}"}},"status":{{"phase":"{phase}"}}}}"#
            )
        };
        let mut pods = Pods::from_list(&[]);
        for (kind, object) in [
            ("ADDED", pod("b", "2", "Pending")),
            ("ADDED", pod("a", "2", "Pending")),
            ("MODIFIED", pod("b", "3", "Running")),
            ("DELETED", pod("a", "4", "Pending")),
        ] {
            let applied = pods.apply(&event(format!(r#"{{"type":"{kind}","object":{object}}}"#)));
            assert_eq!(applied, Ok(Change::Pods));
        }
        let bookmark = r#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}"#;
        assert_eq!(pods.apply(&event(bookmark.into())), Ok(Change::Version));
        assert_eq!(
            crate::engine::to_json(&pods.page()),
            r#"{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"namespace":"ns","name":"b"},"status":{"phase":"Running"}}]}"#
        );
        let error = r#"{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 1 (5)"}}"#;
        assert_eq!(
            pods.apply(&event(error.into())),
            Err("ERROR event 410 Expired: too old resource version: 1 (5)".to_owned())
        );
    }
}
