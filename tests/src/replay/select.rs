//! Field and label selectors, with the apiserver's rules: only the fields a
//! resource supports (anything else is a 400), `=`, `==`, `!=`, comma = AND.

use serde_json::Value;

/// Which resource a selector applies to (each supports its own fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Pods.
    Pods,
    /// Events.
    Events,
    /// Nodes.
    Nodes,
    /// Namespaces.
    Namespaces,
}

/// One `field=value` / `field!=value` requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    value: String,
    equal: bool,
}

/// A parsed `fieldSelector`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<FieldTerm>);

impl FieldSelector {
    /// Parse `text` for `kind`. The error is the apiserver's message
    /// (kubectl adds its own prefix).
    pub fn parse(text: &str, kind: Kind) -> Result<Self, String> {
        let mut terms = Vec::new();
        for term in split_unescaped(text, ',') {
            if term.is_empty() {
                continue;
            }
            let (field, value, equal) = split_operator(&term)
                .ok_or_else(|| format!("invalid selector: '{text}'; can't understand '{term}'"))?;
            if !supported_fields(kind).contains(&field.as_str()) {
                return Err(format!("field label not supported: {field}"));
            }
            terms.push(FieldTerm {
                field,
                value: unescape(&value),
                equal,
            });
        }
        Ok(Self(terms))
    }

    /// Whether `object` satisfies every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        self.0
            .iter()
            .all(|t| (field_value(object, &t.field) == t.value) == t.equal)
    }

    /// No requirement at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn split_operator(term: &str) -> Option<(String, String, bool)> {
    if let Some((field, value)) = term.split_once("!=") {
        return Some((field.trim().to_owned(), value.to_owned(), false));
    }
    if let Some((field, value)) = term.split_once("==") {
        return Some((field.trim().to_owned(), value.to_owned(), true));
    }
    let (field, value) = term.split_once('=')?;
    Some((field.trim().to_owned(), value.to_owned(), true))
}

/// The fields the real apiserver indexes for each resource.
fn supported_fields(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Pods => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        Kind::Events => &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        Kind::Nodes => &["metadata.name", "spec.unschedulable"],
        Kind::Namespaces => &["metadata.name", "status.phase"],
    }
}

/// The value the apiserver compares for `field` ("" when absent).
fn field_value(object: &Value, field: &str) -> String {
    let at = |pointer: &str| object.pointer(pointer);
    let value = match field {
        "source" => at("/source/component"),
        "status.podIPs" => at("/status/podIPs/0/ip"),
        "spec.hostNetwork" | "spec.unschedulable" => {
            let flag = at(&pointer(field))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            return flag.to_string();
        }
        _ => at(&pointer(field)),
    };
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn pointer(field: &str) -> String {
    format!("/{}", field.replace('.', "/"))
}

/// Split on `sep` unless it is escaped with a backslash (kept for `unescape`).
fn split_unescaped(text: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in text.chars() {
        let current = parts.last_mut().expect("never empty");
        if escaped {
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            current.push(c);
            escaped = true;
        } else if c == sep {
            parts.push(String::new());
        } else {
            current.push(c);
        }
    }
    parts
}

fn unescape(value: &str) -> String {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// A parsed `labelSelector`: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
/// `k notin (a,b)`, `k`, `!k`; comma = AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelTerm>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelTerm {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    Absent(String),
}

impl LabelSelector {
    /// Parse a label selector.
    pub fn parse(text: &str) -> Result<Self, String> {
        split_outside_parens(text)
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
            .map(|t| label_term(t).ok_or_else(|| format!("unable to parse requirement: {t}")))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether `object`'s labels satisfy every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        let label = |key: &str| {
            object
                .pointer("/metadata/labels")
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
        };
        self.0.iter().all(|term| match term {
            LabelTerm::In(k, vs) => label(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            LabelTerm::NotIn(k, vs) => !label(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            LabelTerm::Exists(k) => label(k).is_some(),
            LabelTerm::Absent(k) => label(k).is_none(),
        })
    }

    /// No requirement at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn label_term(term: &str) -> Option<LabelTerm> {
    let words: Vec<&str> = term.splitn(2, char::is_whitespace).collect();
    if let [key, rest] = words[..] {
        let rest = rest.trim();
        let set = |list: &str| -> Option<Vec<String>> {
            let inner = list.trim().strip_prefix('(')?.strip_suffix(')')?;
            Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
        };
        if let Some(list) = rest.strip_prefix("notin") {
            return Some(LabelTerm::NotIn(key.to_owned(), set(list)?));
        }
        if let Some(list) = rest.strip_prefix("in") {
            return Some(LabelTerm::In(key.to_owned(), set(list)?));
        }
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Some(LabelTerm::NotIn(
            key.trim().into(),
            vec![value.trim().into()],
        ));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Some(LabelTerm::In(key.trim().into(), vec![value.trim().into()]));
    }
    match term.strip_prefix('!') {
        Some(key) => Some(LabelTerm::Absent(key.trim().into())),
        None => Some(LabelTerm::Exists(term.into())),
    }
}

fn split_outside_parens(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().expect("never empty").push(c);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(phase: &str, node: &str) -> Value {
        json!({"metadata": {"namespace": "ns", "name": "p", "labels": {"app": "web"}},
               "spec": {"nodeName": node}, "status": {"phase": phase}})
    }

    #[test]
    fn field_selectors_follow_the_apiserver() {
        let s = FieldSelector::parse("status.phase=Pending,spec.nodeName=", Kind::Pods).unwrap();
        assert!(s.matches(&pod("Pending", "")));
        assert!(!s.matches(&pod("Pending", "n1")));
        assert!(!s.matches(&pod("Running", "")));
        let s = FieldSelector::parse("status.phase!=Running", Kind::Pods).unwrap();
        assert!(s.matches(&pod("Failed", "n")) && !s.matches(&pod("Running", "n")));
        let s = FieldSelector::parse("status.phase==Running", Kind::Pods).unwrap();
        assert!(s.matches(&pod("Running", "n")));
        assert_eq!(
            FieldSelector::parse("spec.foo=bar", Kind::Pods),
            Err("field label not supported: spec.foo".into())
        );
        assert!(FieldSelector::parse("reason=FailedScheduling", Kind::Events).is_ok());
        assert!(FieldSelector::parse("reason=x", Kind::Pods).is_err());
        assert!(FieldSelector::parse("status.phase", Kind::Pods).is_err());
    }

    #[test]
    fn label_selectors() {
        let p = pod("Running", "n");
        for yes in ["app=web", "app in (db,web)", "app", "!tier", "app!=db"] {
            assert!(LabelSelector::parse(yes).unwrap().matches(&p), "{yes}");
        }
        for no in ["app=db", "app notin (web)", "tier", "!app", "app=web,tier"] {
            assert!(!LabelSelector::parse(no).unwrap().matches(&p), "{no}");
        }
    }
}
