//! What the reader keeps of a document: the [`Shape`] of the fields the
//! canonical programs read (declared in `checker/programs/projection.json`).
//! `plan.rs` compiles it for reading.
//!
//! A 150k-pod snapshot is ~1.7 GB of JSON; the programs read a dozen short
//! fields per pod. Dropping the rest while parsing keeps memory a fraction of
//! the file and makes the jq evaluation cheap. The projection must be
//! invisible: `tests/tests/projection.rs` compares every program's output
//! with and without it.

use crate::programs::Programs;
use std::collections::HashMap;

/// What to keep of one JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Keep the whole value.
    Keep,
    /// For an object, keep only these keys, each projected by its shape.
    Fields(HashMap<String, Shape>),
    /// For an array, project every element by this shape.
    Each(Box<Shape>),
    /// Keep the value (a string). An array element whose field has this
    /// shape is kept only when the value equals the string: report.jq reads
    /// `status.conditions` only through `select(.type == "PodScheduled" and
    /// .status == "False")`, and the conditions of a running pod cost about
    /// 1.4 KB of memory (+70 MB at 50k pods; tests/ prove it invisible).
    Equals(String),
    /// Like [`Shape::Fields`], for the object the programs search a list's
    /// elements for: an element is kept only when it holds an object here
    /// (`"$is": "object"` in projection.json). report.jq reads
    /// `status.containerStatuses` only through `.state.terminated |
    /// objects`, and a running container's `{"state": {}}` costs two maps.
    Object(HashMap<String, Shape>),
    /// Like [`Shape::Equals`], for any of these strings: a list of the run
    /// (`{"$one_of": "excluded_owner_kinds"}` in projection.json). report.jq
    /// searches `metadata.ownerReferences` only for the excluded kinds, and
    /// a ReplicaSet owner kept on every pod cost 20 MB at 50k pods.
    OneOf(Vec<String>),
    /// Keep the value, but for this string: an object's key whose value it
    /// is, is left out (`{"$except": "Pod"}` in projection.json). report.jq
    /// reads a pod's `kind` only to refuse a list holding another kind, and
    /// takes a missing kind (a raw page's items have none) as it takes
    /// "Pod": the key and its value on every pod cost 7 MB at 50k pods.
    Except(String),
}

/// The key of projection.json that makes an object shape a [`Shape::Object`].
const IS: &str = "$is";
/// The key of projection.json that makes a [`Shape::OneOf`] of a run's list.
const ONE_OF: &str = "$one_of";
/// The key of projection.json that makes a [`Shape::Except`].
const EXCEPT: &str = "$except";
/// The one list a [`Shape::OneOf`] may name.
const OWNER_KINDS: &str = "excluded_owner_kinds";
/// The key of projection.json that shapes a value by what the run reads
/// ([`Reads`]): `{"$if": condition}` keeps the whole value when the
/// condition holds, else leaves it out; `"$then"` and `"$else"` give the
/// shape for each case instead (an `"$else"` keeps the value, shaped so,
/// when the condition does not hold).
const IF: &str = "$if";
/// The shape of a value when the `$if` condition holds.
const THEN: &str = "$then";
/// The shape of a value when the `$if` condition does not hold.
const ELSE: &str = "$else";
/// The condition of a run with a label selector ([`Reads::selector`]).
const SELECTOR: &str = "selector";
/// The condition of a run that reads the workloads ([`Reads::workloads`]).
const WORKLOADS: &str = "workloads";

/// What a run reads beyond what every run reads: the conditions of
/// projection.json's `{"$if": …}`. The projection of a run keeps only
/// what its programs read, and report.jq reads more of each pod in some
/// runs than in others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// A label selector (`-l`): report.jq selects the pods by their labels.
    pub selector: bool,
    /// The workloads: report.jq counts the active pods of every owner
    /// (`active_owners`, from the owners' uids and the pods'
    /// deletionTimestamp), which the pods of a run without them do not
    /// keep (at 50k pods they held a fifth of the checker's memory).
    pub workloads: bool,
}

impl Reads {
    /// Whether `condition` (the string of a `$if`) holds for this run.
    fn holds(self, condition: &serde_json::Value) -> Result<bool, String> {
        match condition.as_str() {
            Some(SELECTOR) => Ok(self.selector),
            Some(WORKLOADS) => Ok(self.workloads),
            _ => Err(format!("not a condition of the run: {condition}")),
        }
    }
}

impl Shape {
    /// Read a shape from its JSON form: `true`, `"value"`, `{key: shape}`
    /// (with `"$is": "object"`: [`Shape::Object`]), `{"$one_of":
    /// "excluded_owner_kinds"}` (the default kinds) or `[shape]`. Keys
    /// starting with `_` are comments.
    pub fn from_json(v: &serde_json::Value) -> Result<Self, String> {
        Self::for_owner_kinds(v, &Programs::default_excluded_owner_kinds())
    }

    /// Like [`Shape::from_json`], with the run's excluded owner kinds.
    pub fn for_owner_kinds(v: &serde_json::Value, owner_kinds: &[String]) -> Result<Self, String> {
        Self::for_run(v, owner_kinds, Projection::CANONICAL_READS)
            .map(|shape| shape.unwrap_or(Shape::Fields(HashMap::new())))
    }

    /// Like [`Shape::for_owner_kinds`], for a run that reads `reads`: None
    /// for a value the run leaves out.
    pub fn for_run(
        v: &serde_json::Value,
        owner_kinds: &[String],
        reads: Reads,
    ) -> Result<Option<Self>, String> {
        use serde_json::Value as J;
        let J::Object(fields) = v else {
            return Self::for_run_kept(v, owner_kinds, reads).map(Some);
        };
        let Some(condition) = fields.get(IF) else {
            return Self::for_run_kept(v, owner_kinds, reads).map(Some);
        };
        if let Some(other) = fields
            .keys()
            .find(|k| !k.starts_with('_') && ![IF, THEN, ELSE].contains(&k.as_str()))
        {
            return Err(format!("not a part of a condition: {other}"));
        }
        let branch = if reads.holds(condition)? {
            fields.get(THEN).unwrap_or(&J::Bool(true))
        } else {
            match fields.get(ELSE) {
                Some(shape) => shape,
                None => return Ok(None),
            }
        };
        Self::for_run(branch, owner_kinds, reads)
    }

    fn for_run_kept(
        v: &serde_json::Value,
        owner_kinds: &[String],
        reads: Reads,
    ) -> Result<Self, String> {
        use serde_json::Value as J;
        match v {
            J::Bool(true) => Ok(Shape::Keep),
            J::String(wanted) => Ok(Shape::Equals(wanted.clone())),
            J::Object(fields) if fields.contains_key(EXCEPT) => match &fields[EXCEPT] {
                J::String(value) if fields.len() == 1 => Ok(Shape::Except(value.clone())),
                other => Err(format!("not a string to leave out alone: {other}")),
            },
            J::Object(fields) if fields.contains_key(ONE_OF) => match &fields[ONE_OF] {
                J::String(list) if list == OWNER_KINDS => Ok(Shape::OneOf(owner_kinds.to_vec())),
                other => Err(format!("not a list of the run: {other}")),
            },
            J::Object(fields) => {
                let kept = fields
                    .iter()
                    .filter(|(k, _)| !k.starts_with('_') && *k != IS)
                    .filter_map(|(k, v)| {
                        Shape::for_run(v, owner_kinds, reads)
                            .map(|shape| shape.map(|shape| (k.clone(), shape)))
                            .transpose()
                    })
                    .collect::<Result<_, String>>()?;
                match fields.get(IS) {
                    None => Ok(Shape::Fields(kept)),
                    Some(J::String(kind)) if kind == "object" => Ok(Shape::Object(kept)),
                    Some(other) => Err(format!("not a kind of value to require: {other}")),
                }
            }
            J::Array(elems) if elems.len() == 1 => Ok(Shape::Each(Box::new(Shape::for_run_kept(
                &elems[0],
                owner_kinds,
                reads,
            )?))),
            other => Err(format!("not a shape: {other}")),
        }
    }

    /// Every object key this shape names, at any depth, sorted and unique.
    pub fn keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_keys(&mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_keys(&self, out: &mut Vec<String>) {
        match self {
            Shape::Keep | Shape::Equals(_) | Shape::OneOf(_) | Shape::Except(_) => {}
            Shape::Each(elem) => elem.collect_keys(out),
            Shape::Fields(fields) | Shape::Object(fields) => {
                for (key, shape) in fields {
                    out.push(key.clone());
                    shape.collect_keys(out);
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
    /// For the workloads lists (issue 30): `kubectl get rs,sts,ds,deploy
    /// -A -o json`, or the raw pages of the four apps/v1 lists.
    pub workloads: Shape,
}

impl Projection {
    /// The projection declared in `checker/programs/projection.json`, for
    /// the default excluded owner kinds.
    pub fn canonical() -> Self {
        Self::for_owner_kinds(&Programs::default_excluded_owner_kinds())
    }

    /// The conditions of the canonical projection: no label selector, the
    /// workloads read.
    const CANONICAL_READS: Reads = Reads {
        selector: false,
        workloads: true,
    };

    /// The canonical projection for a run that excludes these owner kinds.
    pub fn for_owner_kinds(owner_kinds: &[String]) -> Self {
        Self::for_run(owner_kinds, false)
    }

    /// The canonical projection for a run that excludes these owner kinds,
    /// with a label selector (then the pods' labels are kept) or without,
    /// that may read the workloads (the owners' uids are kept).
    pub fn for_run(owner_kinds: &[String], selector: bool) -> Self {
        let reads = Reads {
            selector,
            ..Self::CANONICAL_READS
        };
        Self::for_reads(owner_kinds, reads)
    }

    /// The canonical projection for a run that excludes these owner kinds
    /// and reads `reads`: only what its programs read is kept.
    pub fn for_reads(owner_kinds: &[String], reads: Reads) -> Self {
        let doc: serde_json::Value =
            serde_json::from_str(Programs::PROJECTION_FILE).expect("projection.json is valid JSON");
        let shape = |key: &str| {
            Shape::for_run_kept(&doc[key], owner_kinds, reads)
                .expect("projection.json holds shapes")
        };
        Self {
            pods: shape("pods"),
            events: shape("events"),
            workloads: shape("workloads"),
        }
    }

    /// Keep everything (used to prove the projection is invisible).
    pub fn keep_all() -> Self {
        Self {
            pods: Shape::Keep,
            events: Shape::Keep,
            workloads: Shape::Keep,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A shape of its JSON form (projection.json's).
    pub(crate) fn shape(v: serde_json::Value) -> Result<Shape, String> {
        Shape::from_json(&v)
    }

    /// The fields of a [`Shape::Fields`] or [`Shape::Object`].
    pub(crate) fn fields(entries: &[(&str, Shape)]) -> HashMap<String, Shape> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn shapes_read_from_their_json_form() {
        assert_eq!(shape(json!(true)), Ok(Shape::Keep));
        assert_eq!(shape(json!("False")), Ok(Shape::Equals("False".into())));
        assert_eq!(
            shape(json!({"a": true, "_why": "a comment", "b": [{"c": true}]})),
            Ok(Shape::Fields(fields(&[
                ("a", Shape::Keep),
                (
                    "b",
                    Shape::Each(Box::new(Shape::Fields(fields(&[("c", Shape::Keep)]))))
                ),
            ])))
        );
        assert_eq!(
            shape(json!({"$is": "object", "a": true})),
            Ok(Shape::Object(fields(&[("a", Shape::Keep)])))
        );
        for bad in [
            json!(false),
            json!(1),
            json!(null),
            json!([]),
            json!([true, true]),
        ] {
            assert!(shape(bad.clone()).is_err(), "{bad}");
        }
        assert!(shape(json!({"$is": "array"})).is_err());
        let kinds = ["Job".to_owned(), "MPIJob".to_owned()];
        let one_of = json!({"$one_of": "excluded_owner_kinds"});
        assert_eq!(
            Shape::for_owner_kinds(&one_of, &kinds),
            Ok(Shape::OneOf(kinds.to_vec()))
        );
        assert_eq!(
            shape(one_of),
            Ok(Shape::OneOf(Programs::default_excluded_owner_kinds()))
        );
        assert!(shape(json!({"$one_of": "excluded_namespaces"})).is_err());
        assert!(shape(json!({"a": false})).is_err(), "deeper errors too");
    }

    /// `$if` shapes a value by what the run reads: kept whole or left out,
    /// or shaped by `$then` and `$else`.
    #[test]
    fn conditions_shape_a_value_by_what_the_run_reads() {
        let kinds = ["Job".to_owned()];
        let run = |selector, workloads| Reads {
            selector,
            workloads,
        };
        let shaped = |v: serde_json::Value, reads| Shape::for_run(&v, &kinds, reads);
        let labels = json!({"$if": "selector"});
        assert_eq!(
            shaped(labels.clone(), run(true, false)),
            Ok(Some(Shape::Keep))
        );
        assert_eq!(shaped(labels, run(false, true)), Ok(None));
        let deleted = json!({"$if": "workloads"});
        assert_eq!(
            shaped(deleted.clone(), run(false, true)),
            Ok(Some(Shape::Keep))
        );
        assert_eq!(shaped(deleted, run(true, false)), Ok(None));
        let owners = json!({"$if": "workloads", "$then": [{"uid": true}],
                            "$else": [{"kind": {"$one_of": "excluded_owner_kinds"}}]});
        let uid = Shape::Fields(fields(&[("uid", Shape::Keep)]));
        let kind = Shape::Fields(fields(&[("kind", Shape::OneOf(kinds.to_vec()))]));
        assert_eq!(
            shaped(owners.clone(), run(false, true)),
            Ok(Some(Shape::Each(Box::new(uid))))
        );
        assert_eq!(
            shaped(owners, run(false, false)),
            Ok(Some(Shape::Each(Box::new(kind))))
        );
        // Inside an object, a value left out is no key of the shape.
        let metadata = json!({"name": true, "deletionTimestamp": {"$if": "workloads"}});
        assert_eq!(
            shaped(metadata, run(false, false)),
            Ok(Some(Shape::Fields(fields(&[("name", Shape::Keep)]))))
        );
        for bad in [
            json!({"$if": "namespaces"}),
            json!({"$if": true}),
            json!({"$if": "workloads", "then": true}),
            json!({"$if": "workloads", "$then": false}),
        ] {
            assert!(shaped(bad.clone(), run(false, true)).is_err(), "{bad}");
        }
    }

    /// A run without the workloads keeps of a pod's owners only the kinds
    /// report.jq excuses, and no deletionTimestamp; one with them keeps
    /// every owner's kind and uid.
    #[test]
    fn the_owners_are_kept_for_the_workloads_only() {
        let kinds = Programs::default_excluded_owner_kinds();
        let metadata = |workloads| {
            let reads = Reads {
                selector: false,
                workloads,
            };
            let Shape::Fields(pods) = Projection::for_reads(&kinds, reads).pods else {
                panic!("the pods' shape is an object's")
            };
            let Shape::Each(item) = &pods["items"] else {
                panic!("items: every element shaped")
            };
            let Shape::Fields(item) = &**item else {
                panic!("an item's shape is an object's")
            };
            let Shape::Fields(metadata) = &item["metadata"] else {
                panic!("metadata's shape is an object's")
            };
            metadata.clone()
        };
        let with = metadata(true);
        assert_eq!(with["deletionTimestamp"], Shape::Keep);
        let owner = fields(&[("kind", Shape::Keep), ("uid", Shape::Keep)]);
        assert_eq!(
            with["ownerReferences"],
            Shape::Each(Box::new(Shape::Fields(owner)))
        );
        let without = metadata(false);
        assert!(!without.contains_key("deletionTimestamp"));
        let owner = fields(&[("kind", Shape::OneOf(kinds.clone()))]);
        assert_eq!(
            without["ownerReferences"],
            Shape::Each(Box::new(Shape::Fields(owner)))
        );
        assert_eq!(
            Projection::canonical().pods,
            Projection::for_reads(&kinds, Projection::CANONICAL_READS).pods
        );
    }

    #[test]
    fn keys_are_every_key_at_any_depth_once() {
        let s = shape(json!({"b": {"a": true, "c": [{"a": true}]}, "a": "x"})).unwrap();
        assert_eq!(s.keys(), ["a", "b", "c"]);
        assert_eq!(Shape::Keep.keys(), Vec::<String>::new());
    }

    #[test]
    fn the_canonical_projection_names_what_report_jq_reads() {
        let projection = Projection::canonical();
        for key in [
            "metadata",
            "namespace",
            "name",
            "spec",
            "nodeName",
            "status",
            "phase",
        ] {
            assert!(projection.pods.keys().iter().any(|k| k == key), "{key}");
        }
        assert_eq!(Projection::keep_all().pods, Shape::Keep);
    }
}
