//! One cluster state the server replays: the pods and the events, as the
//! apiserver stores them (items without `kind`/`apiVersion`). Synthetic
//! states are put in the apiserver's key order, (namespace, name); recorded
//! documents are replayed in their recorded order (a recording of a real
//! cluster already is in that order, and goldens depend on it).

use serde_json::Value;
use std::fs;
use std::path::Path;

/// The pods and events of one moment of the cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Pod objects, in list order.
    pub pods: Vec<Value>,
    /// Event objects, in list order.
    pub events: Vec<Value>,
}

impl State {
    /// A state from pod and event objects (any order, `kind` allowed),
    /// listed in the apiserver's key order.
    pub fn new(pods: Vec<Value>, events: Vec<Value>) -> Self {
        let mut state = Self::recorded(pods, events);
        state.pods.sort_by_key(key);
        state.events.sort_by_key(key);
        state
    }

    /// A state listed exactly in the order given.
    pub fn recorded(pods: Vec<Value>, events: Vec<Value>) -> Self {
        Self {
            pods: stored(pods),
            events: stored(events),
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

    /// A state from a pods file and an optional events file.
    pub fn from_files(pods: &Path, events: Option<&Path>) -> Result<Self, String> {
        let pods = read_json(pods)?;
        let events = match events {
            Some(path) => read_json(path)?,
            None => serde_json::json!({"kind": "List", "items": []}),
        };
        Self::from_documents(&pods, &events)
    }

    /// A state from a corpus case folder (`pods.json`, and `events.json` when present).
    pub fn from_case_dir(dir: &Path) -> Result<Self, String> {
        let events = dir.join("events.json");
        Self::from_files(
            &dir.join("pods.json"),
            events.exists().then_some(events.as_path()),
        )
    }

    /// This state's pods as one `List` document, the shape `kubectl get pods
    /// -A -o json` prints (for offline checks of the same data).
    pub fn pods_document(&self) -> Value {
        list_document("Pod", &self.pods)
    }

    /// This state's events as one `List` document.
    pub fn events_document(&self) -> Value {
        list_document("Event", &self.events)
    }
}

fn list_document(kind: &str, items: &[Value]) -> Value {
    let items = items
        .iter()
        .map(|item| {
            let mut item = item.clone();
            if let Some(obj) = item.as_object_mut() {
                obj.insert("apiVersion".into(), "v1".into());
                obj.insert("kind".into(), kind.into());
            }
            item
        })
        .collect();
    serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": Value::Array(items)})
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn items(doc: &Value, what: &str) -> Result<Vec<Value>, String> {
    doc.get("items")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| format!("the {what} document has no items array"))
}

/// The apiserver stores objects without `kind`/`apiVersion`.
fn stored(mut objects: Vec<Value>) -> Vec<Value> {
    for object in &mut objects {
        if let Some(obj) = object.as_object_mut() {
            obj.remove("kind");
            obj.remove("apiVersion");
        }
    }
    objects
}

fn key(object: &Value) -> (String, String) {
    let text = |field: &str| {
        object
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    (text("namespace"), text("name"))
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
        assert_eq!(key(&recorded.pods[0]), ("b".to_owned(), "x".to_owned()));
        let state = State::new(recorded.pods.clone(), vec![]);
        let names: Vec<_> = state.pods.iter().map(key).collect();
        assert_eq!(
            names,
            [("a", "y"), ("a", "z"), ("b", "x")].map(|(n, m)| (n.to_owned(), m.to_owned()))
        );
        assert!(state.pods[2].get("kind").is_none());
        assert!(State::from_documents(&json!({"kind": "List"}), &json!({"items": []})).is_err());
    }
}
