//! One cluster state the server replays: the pods and the events, as the
//! apiserver stores them (items without `kind`/`apiVersion`, compact; see
//! [`Object`]). Synthetic states are put in the apiserver's key order,
//! (namespace, name); recorded documents are replayed in their recorded
//! order (a recording of a real cluster already is in that order, and
//! goldens depend on it).

use super::object::{Interner, Object};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// The kinds of the apps/v1 workloads lists, as a raw page names them
/// (`ReplicaSetList`).
const WORKLOAD_KINDS: [&str; 4] = ["ReplicaSet", "StatefulSet", "DaemonSet", "Deployment"];

/// The pods and events of one moment of the cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Pod objects, in list order.
    pub pods: Vec<Object>,
    /// Event objects, in list order.
    pub events: Vec<Object>,
    /// The apps/v1 workloads (issue 30), each with its kind, in list order.
    pub workloads: Vec<(String, Object)>,
    /// The workload kinds the server refuses to list (403): a corpus case
    /// whose workloads are raw pages without a kind's page was read by a
    /// check that could not list it.
    pub forbidden_workloads: Vec<String>,
}

impl State {
    /// A state from pod and event objects (any order, `kind` allowed),
    /// listed in the apiserver's key order.
    pub fn new(pods: Vec<Value>, events: Vec<Value>) -> Self {
        let mut state = Self::recorded(pods, events);
        state.pods.sort_by(by_key);
        state.events.sort_by(by_key);
        state
    }

    /// A state listed exactly in the order given.
    pub fn recorded(pods: Vec<Value>, events: Vec<Value>) -> Self {
        Self {
            pods: pods.into_iter().map(Object::from_value).collect(),
            events: events.into_iter().map(Object::from_value).collect(),
            workloads: Vec::new(),
            forbidden_workloads: Vec::new(),
        }
    }

    /// A state from a `kubectl get pods -A -o json` document and a
    /// `kubectl get events -A -o json` document, in their recorded order.
    pub fn from_documents(pods: &Value, events: &Value) -> Result<Self, String> {
        Ok(Self::recorded(
            items(pods, "pods")?,
            items(events, "events")?,
        ))
    }

    /// A state from a pods file and an optional events file, read item by
    /// item (a 150k-pod file never becomes one tree of values).
    pub fn from_files(pods: &Path, events: Option<&Path>) -> Result<Self, String> {
        Ok(Self {
            pods: read_items(pods)?,
            events: match events {
                Some(path) => read_items(path)?,
                None => Vec::new(),
            },
            workloads: Vec::new(),
            forbidden_workloads: Vec::new(),
        })
    }

    /// A state from a corpus case folder (`pods.json`, and `events.json` when present).
    pub fn from_case_dir(dir: &Path) -> Result<Self, String> {
        let events = dir.join("events.json");
        let state = Self::from_files(
            &dir.join("pods.json"),
            events.exists().then_some(events.as_path()),
        )?;
        let workloads = dir.join("workloads.json");
        if !workloads.is_file() {
            return Ok(state);
        }
        let error = |e: &dyn fmt::Display| format!("{}: {e}", workloads.display());
        let text = std::fs::read(&workloads).map_err(|e| error(&e))?;
        let mut values = Vec::new();
        // The kinds whose raw page is there; None: a document that is no
        // such page (kubectl's List), which was asked for every kind.
        let mut listed = Some(Vec::new());
        for doc in serde_json::Deserializer::from_slice(&text).into_iter::<Value>() {
            let doc = doc.map_err(|e| error(&e))?;
            let list_kind = doc["kind"].as_str().unwrap_or("");
            let list_kind = list_kind.strip_suffix("List").unwrap_or("").to_owned();
            match listed.as_mut() {
                Some(kinds) if WORKLOAD_KINDS.contains(&list_kind.as_str()) => {
                    kinds.push(list_kind.clone())
                }
                _ => listed = None,
            }
            for item in items(&doc, "workloads")? {
                let mut item = item;
                if item.get("kind").is_none() {
                    item["kind"] = list_kind.clone().into();
                }
                values.push(item);
            }
        }
        let mut state = state.with_workloads(values);
        if let Some(listed) = listed {
            state.forbidden_workloads = WORKLOAD_KINDS
                .iter()
                .filter(|kind| !listed.iter().any(|k| k == *kind))
                .map(|kind| kind.to_string())
                .collect();
        }
        Ok(state)
    }

    /// This state with these workloads (objects with their `kind`).
    pub fn with_workloads(mut self, workloads: Vec<Value>) -> Self {
        self.workloads = workloads
            .into_iter()
            .map(|w| {
                let kind = w["kind"].as_str().unwrap_or("").to_owned();
                (kind, Object::from_value(w))
            })
            .collect();
        self
    }

    /// This state's pods as one `List` document, the shape `kubectl get pods
    /// -A -o json` prints, at `version` ("" is kubectl's, none): with the
    /// version the replay server serves, the list as the result names it.
    pub fn pods_document_at(&self, version: &str) -> Value {
        let mut doc = list_document("Pod", &self.pods);
        doc["metadata"]["resourceVersion"] = version.into();
        doc
    }

    /// This state's events as one `List` document.
    pub fn events_document(&self) -> Value {
        list_document("Event", &self.events)
    }

    /// Share every object equal to one already stored in `interner`.
    pub fn intern(&mut self, interner: &mut Interner) {
        for object in self.pods.iter_mut().chain(self.events.iter_mut()) {
            *object = interner.intern(object.clone());
        }
    }

    /// The pods as `Value`s (parsed: for small states).
    pub fn pod_values(&self) -> Vec<Value> {
        self.pods.iter().map(Object::value).collect()
    }

    /// The events as `Value`s (parsed: for small states).
    pub fn event_values(&self) -> Vec<Value> {
        self.events.iter().map(Object::value).collect()
    }
}

fn by_key(a: &Object, b: &Object) -> std::cmp::Ordering {
    (a.namespace(), a.name()).cmp(&(b.namespace(), b.name()))
}

fn list_document(kind: &str, items: &[Object]) -> Value {
    let items = items
        .iter()
        .map(|item| {
            let mut item = item.value();
            if let Some(obj) = item.as_object_mut() {
                obj.insert("apiVersion".into(), "v1".into());
                obj.insert("kind".into(), kind.into());
            }
            item
        })
        .collect();
    serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": Value::Array(items)})
}

fn items(doc: &Value, what: &str) -> Result<Vec<Value>, String> {
    doc.get("items")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| format!("the {what} document has no items array"))
}

/// The `items` of a List file, each stored as it is parsed.
/// The items of a List document, or of the raw pages of one list saved one
/// after the other (a paged corpus case), joined in order.
fn read_items(path: &Path) -> Result<Vec<Object>, String> {
    let error = |e: &dyn fmt::Display| format!("{}: {e}", path.display());
    let file = File::open(path).map_err(|e| error(&e))?;
    let reader = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, file));
    let mut all: Option<Vec<Object>> = None;
    for page in reader.into_iter::<PageItems>() {
        let PageItems(items) = page.map_err(|e| error(&e))?;
        let items = items.ok_or_else(|| error(&"the document has no items array"))?;
        all.get_or_insert_with(Vec::new).extend(items);
    }
    all.ok_or_else(|| error(&"no JSON document"))
}

/// One document's items, read by [`ListItems`].
struct PageItems(Option<Vec<Object>>);

impl<'de> serde::Deserialize<'de> for PageItems {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ListItems.deserialize(d).map(PageItems)
    }
}

/// A List document's `items`, stored one by one (other keys skipped).
struct ListItems;

impl<'de> DeserializeSeed<'de> for ListItems {
    type Value = Option<Vec<Object>>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ListItems {
    type Value = Option<Vec<Object>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a List object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut items = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                items = Some(map.next_value_seed(Items)?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(items)
    }
}

struct Items;

impl<'de> DeserializeSeed<'de> for Items {
    type Value = Vec<Object>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Items {
    type Value = Vec<Object>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an items array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut objects = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Value>()? {
            objects.push(Object::from_value(item));
        }
        Ok(objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_are_sorted_and_stripped() {
        let pods = json!({"items": [
            {"kind": "Pod", "apiVersion": "v1", "metadata": {"namespace": "b", "name": "x"}},
            {"metadata": {"namespace": "a", "name": "z"}},
            {"metadata": {"namespace": "a", "name": "y"}}]});
        let recorded = State::from_documents(&pods, &json!({"items": []})).unwrap();
        assert_eq!(recorded.pods[0].name(), "x");
        let state = State::new(recorded.pod_values(), vec![]);
        let names: Vec<_> = state
            .pods
            .iter()
            .map(|p| format!("{}/{}", p.namespace(), p.name()))
            .collect();
        assert_eq!(names, ["a/y", "a/z", "b/x"]);
        assert!(state.pods[2].value().get("kind").is_none());
        assert!(State::from_documents(&json!({"kind": "List"}), &json!({"items": []})).is_err());
    }

    #[test]
    fn files_are_read_item_by_item() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pods.json");
        let doc = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
            "items": [{"kind": "Pod", "metadata": {"namespace": "a", "name": "p"}}]});
        std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
        let state = State::from_files(&path, None).unwrap();
        assert_eq!(state.pods.len(), 1);
        assert_eq!(
            state.pods[0].json(),
            r#"{"metadata":{"name":"p","namespace":"a"}}"#
        );
        std::fs::write(&path, b"{\"kind\": \"List\"}").unwrap();
        assert!(State::from_files(&path, None).is_err());
        std::fs::write(&path, b"{\"items\": [").unwrap();
        assert!(State::from_files(&path, None).is_err());
    }
}
