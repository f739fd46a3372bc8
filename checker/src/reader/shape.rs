//! What the reader keeps of a document: the [`Shape`] of the fields the
//! canonical programs read (declared in `checker/programs/projection.json`),
//! and the [`Plan`] it compiles to for reading.
//!
//! A 150k-pod snapshot is ~1.7 GB of JSON; the programs read a dozen short
//! fields per pod. Dropping the rest while parsing keeps memory a fraction of
//! the file and makes the jq evaluation cheap. The projection must be
//! invisible: `tests/tests/projection.rs` compares every program's output
//! with and without it.

use crate::programs::Programs;
use jaq_json::Val;
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

/// A shape compiled for reading: what to do with one value while it parses.
/// It holds no state of a read (the interning statistics are the parsing
/// thread's, in its `Interner`), so one plan is shared by every thread.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// Not read by any program: validate it, build nothing.
    Skip,
    /// Keep the whole value.
    Keep,
    /// Keep the whole value; as an object's value, leave its key out when
    /// the value is this one ([`Shape::Except`]).
    KeepExcept(Val),
    /// Keep only these keys of an object (any other value is kept whole).
    Fields(Vec<Field>),
    /// Project every element of an array (any other value is kept whole).
    Each(Box<Plan>),
}

/// One kept key of an object.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    name: Box<str>,
    /// The key as a jq value, made once: every pod shares its bytes.
    pub(super) key: Val,
    plan: Plan,
    /// What an array element holding this field needs here to be kept.
    wanted: Option<Wanted>,
    /// Whether this field decides if an element is kept: it has a
    /// [`Wanted`], or leads (through objects) to a field that has one.
    guards: bool,
    /// The field's number in its plan (0, 1, … depth first), under which
    /// an `Interner` keeps what it saw of the field's values.
    pub(super) id: usize,
}

/// What a searched list's element must hold at a field to be kept.
#[derive(Debug, Clone)]
enum Wanted {
    /// [`Shape::Equals`]: this string.
    Equals(Val),
    /// [`Shape::Object`]: an object.
    Object,
    /// [`Shape::OneOf`]: one of these strings.
    OneOf(Vec<Val>),
}

impl Field {
    /// Whether an element whose value at this field is `value` is kept.
    fn holds(&self, value: Option<&Val>) -> bool {
        match (&self.wanted, value) {
            (Some(Wanted::Equals(wanted)), value) => value == Some(wanted),
            (Some(Wanted::OneOf(wanted)), value) => value.is_some_and(|v| wanted.contains(v)),
            (Some(Wanted::Object), Some(value @ Val::Obj(_))) => self.plan.keeps(value),
            (Some(Wanted::Object), _) => false,
            // On the way to a wanted field deeper: a missing or null value
            // leads nowhere (jq's `.a.b` of null is null, found by no
            // search). Any other value is kept: the programs fail on it as
            // they would on the full value.
            (None, None | Some(Val::Null)) => false,
            (None, Some(value)) => self.plan.keeps(value),
        }
    }
}

impl Plan {
    pub(crate) fn new(shape: &Shape) -> Self {
        Self::numbered(shape, &mut 0)
    }

    /// The plan of `shape`, its fields numbered from `next` on.
    fn numbered(shape: &Shape, next: &mut usize) -> Self {
        match shape {
            Shape::Keep | Shape::Equals(_) | Shape::OneOf(_) => Plan::Keep,
            Shape::Except(left_out) => Plan::KeepExcept(Val::from(left_out.clone())),
            Shape::Each(elem) => Plan::Each(Box::new(Plan::numbered(elem, next))),
            Shape::Fields(fields) | Shape::Object(fields) => {
                let mut fields: Vec<(&String, &Shape)> = fields.iter().collect();
                fields.sort_by(|a, b| a.0.cmp(b.0));
                let fields = fields
                    .into_iter()
                    .map(|(name, shape)| {
                        let id = *next;
                        *next += 1;
                        let plan = Plan::numbered(shape, next);
                        let wanted = match shape {
                            Shape::Equals(wanted) => {
                                Some(Wanted::Equals(Val::from(wanted.clone())))
                            }
                            Shape::Object(_) => Some(Wanted::Object),
                            Shape::OneOf(wanted) => Some(Wanted::OneOf(
                                wanted.iter().cloned().map(Val::from).collect(),
                            )),
                            _ => None,
                        };
                        Field {
                            name: name.as_str().into(),
                            key: Val::from(name.clone()),
                            guards: wanted.is_some() || plan.guarded(),
                            plan,
                            wanted,
                            id,
                        }
                    })
                    .collect();
                Plan::Fields(fields)
            }
        }
    }

    /// Whether some elements parsed by this plan may be dropped: it wants
    /// something of them ([`Shape::Equals`], [`Shape::Object`]). A nested
    /// array's wants are for its own elements.
    fn guarded(&self) -> bool {
        matches!(self, Plan::Fields(fields) if fields.iter().any(|f| f.guards))
    }

    /// The plan of the value under `key` of an object planned by `self`.
    /// (A projection with a dozen keys: a linear scan beats hashing.)
    /// `None`: drop the value. `Some((key, plan))`: keep it, under the
    /// plan's shared key when there is one.
    pub(crate) fn field(&self, key: &str) -> Option<(Option<&Val>, &Plan)> {
        self.field_bytes(key.as_bytes())
    }

    fn field_bytes(&self, key: &[u8]) -> Option<(Option<&Val>, &Plan)> {
        self.field_entry(key)
            .map(|(field, plan)| (field.map(|f| &f.key), plan))
    }

    /// Like [`Plan::field`], with the projection's own field, if any.
    pub(super) fn field_entry(&self, key: &[u8]) -> Option<(Option<&Field>, &Plan)> {
        match self {
            Plan::Fields(fields) => fields
                .iter()
                .find(|f| f.name.as_bytes() == key)
                .map(|f| (Some(f), &f.plan)),
            Plan::Skip => None,
            // An object where an array was expected is kept whole.
            Plan::Keep | Plan::KeepExcept(_) | Plan::Each(_) => Some((None, KEEP)),
        }
    }

    /// Whether an array element parsed by this plan is kept: always, but
    /// for an object that lacks what the plan wants of it (see
    /// [`Field::holds`]). Anything but an object is kept whole, as always.
    pub(crate) fn keeps(&self, element: &Val) -> bool {
        let (Plan::Fields(fields), Val::Obj(map)) = (self, element) else {
            return true;
        };
        fields
            .iter()
            .filter(|f| f.guards)
            .all(|f| f.holds(map.get(&f.key)))
    }

    /// Whether a value parsed by this plan is left out of its object: a
    /// searched list (its elements [guarded](Plan::guarded)) that kept no
    /// element. The programs only search such a list (`.[]?`, `arrays`),
    /// where a missing list and an empty one look alike; an empty array
    /// costs an allocation, its key another and its entry a slot. Or the
    /// value a [`Plan::KeepExcept`] names.
    pub(crate) fn leaves_out(&self, value: &Val) -> bool {
        match (self, value) {
            (Plan::Each(elem), Val::Arr(items)) => items.is_empty() && elem.guarded(),
            (Plan::KeepExcept(left_out), value) => value == left_out,
            _ => false,
        }
    }

    /// The plan of every element of an array planned by `self`.
    pub(crate) fn element(&self) -> &Plan {
        match self {
            Plan::Each(elem) => elem,
            Plan::Skip => SKIP,
            // An array where an object was expected is kept whole: the
            // programs then see exactly what they would see unprojected.
            Plan::Keep | Plan::KeepExcept(_) | Plan::Fields(_) => KEEP,
        }
    }
}

/// Add a kept `(key, value)` to the entries of an object being built, as
/// jq builds it (a later duplicate key replaces the earlier value): a value
/// its plan [leaves out](Plan::leaves_out) removes the key instead.
pub(crate) fn push_entry(
    entries: &mut Vec<(Val, Val)>,
    from: usize,
    (key, value): (Val, Val),
    plan: &Plan,
) {
    if plan.leaves_out(&value) {
        let mut i = from;
        while i < entries.len() {
            if entries[i].0 == key {
                entries.remove(i);
            } else {
                i += 1;
            }
        }
    } else {
        entries.push((key, value));
    }
}

const KEEP: &Plan = &Plan::Keep;
const SKIP: &Plan = &Plan::Skip;

/// The key to store for `key`: the plan's shared one, or a fresh one.
pub(crate) fn key_val(planned: Option<&Val>, key: &str) -> Val {
    match planned {
        Some(shared) => shared.clone(),
        None => Val::utf8_str(key.as_bytes().to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape(v: serde_json::Value) -> Result<Shape, String> {
        Shape::from_json(&v)
    }

    fn fields(entries: &[(&str, Shape)]) -> HashMap<String, Shape> {
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

    /// Every field of a plan has its own number, 0, 1, … with none left
    /// out: the interner's statistics of one field are never another's.
    #[test]
    fn fields_are_numbered_once_each() {
        fn ids(plan: &Plan, out: &mut Vec<usize>) {
            match plan {
                Plan::Fields(fields) => {
                    for field in fields {
                        out.push(field.id);
                        ids(&field.plan, out);
                    }
                }
                Plan::Each(elem) => ids(elem, out),
                Plan::Keep | Plan::KeepExcept(_) | Plan::Skip => {}
            }
        }
        let mut seen = Vec::new();
        ids(&Plan::new(&Projection::canonical().pods), &mut seen);
        assert!(seen.len() > 10);
        seen.sort_unstable();
        assert_eq!(seen, (0..seen.len()).collect::<Vec<_>>());
    }

    #[test]
    fn a_plan_is_shared_by_threads() {
        fn shared<T: Send + Sync>(_: &T) {}
        shared(&Plan::new(&Projection::canonical().pods));
    }

    #[test]
    fn fields_and_elements_are_planned_by_the_shape() {
        let plan = Plan::new(&shape(json!({"a": {"b": true}, "l": [true]})).unwrap());
        let (key, a) = plan.field("a").unwrap();
        assert_eq!(key, Some(&Val::from("a".to_owned())));
        assert!(matches!(a, Plan::Fields(_)));
        assert!(matches!(a.field("b"), Some((Some(_), Plan::Keep))));
        assert!(a.field("c").is_none(), "dropped");
        assert!(plan.field("zz").is_none(), "dropped");
        assert!(matches!(plan.field("l").unwrap().1.element(), Plan::Keep));
        // Kept whole, where the value is not what the shape expects.
        assert!(matches!(Plan::Keep.field("x"), Some((None, Plan::Keep))));
        assert!(matches!(plan.element(), Plan::Keep));
        assert!(Plan::Skip.field("x").is_none());
        assert!(matches!(Plan::Skip.element(), Plan::Skip));
    }

    fn obj(v: serde_json::Value) -> Val {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn searched_elements_are_kept_only_when_they_hold_what_is_wanted() {
        // As projection.json plans status.conditions and containerStatuses.
        let list = shape(json!([{"type": "PodScheduled", "status": true}])).unwrap();
        let plan = Plan::new(&list);
        let elem = plan.element();
        assert!(elem.keeps(&obj(json!({"type": "PodScheduled", "status": "False"}))));
        assert!(!elem.keeps(&obj(json!({"type": "Ready", "status": "True"}))));
        assert!(!elem.keeps(&obj(json!({"status": "True"}))));
        assert!(elem.keeps(&obj(json!(3))), "not an object: kept whole");

        let terminated =
            shape(json!([{"state": {"$is": "object", "terminated": {"$is": "object"}}}])).unwrap();
        let plan = Plan::new(&terminated);
        let elem = plan.element();
        assert!(elem.keeps(&obj(json!({"state": {"terminated": {"reason": "Error"}}}))));
        assert!(!elem.keeps(&obj(json!({"state": {}}))));
        assert!(!elem.keeps(&obj(json!({"state": {"terminated": null}}))));
        assert!(!elem.keeps(&obj(json!({}))));

        // A searched list that kept nothing is left out; another is not.
        assert!(plan.leaves_out(&obj(json!([]))));
        assert!(!plan.leaves_out(&obj(json!([{"state": {"terminated": {}}}]))));
        assert!(!Plan::new(&shape(json!([true])).unwrap()).leaves_out(&obj(json!([]))));
    }

    /// `$except`: the value is kept, but for the one named, whose key is
    /// left out, a later duplicate key's too (jq keeps the last).
    #[test]
    fn a_value_excepted_leaves_its_key_out() {
        let kind = shape(json!({"kind": {"$except": "Pod"}})).unwrap();
        assert_eq!(
            kind,
            Shape::Fields(fields(&[("kind", Shape::Except("Pod".into()))]))
        );
        for bad in [json!({"$except": 1}), json!({"$except": "Pod", "a": true})] {
            assert!(shape(bad.clone()).is_err(), "{bad}");
        }
        let plan = Plan::new(&kind);
        let (_, excepted) = plan.field("kind").unwrap();
        assert!(excepted.leaves_out(&obj(json!("Pod"))));
        assert!(!excepted.leaves_out(&obj(json!("Job"))));
        assert!(!excepted.leaves_out(&obj(json!({"kind": "Pod"}))));
        // Any other value is kept whole, an object too.
        assert!(matches!(excepted.field("x"), Some((None, Plan::Keep))));
        assert!(matches!(excepted.element(), Plan::Keep));
        let key = Val::from("kind".to_owned());
        let mut entries = vec![(key.clone(), obj(json!("Job")))];
        push_entry(&mut entries, 0, (key.clone(), obj(json!("Pod"))), excepted);
        assert!(entries.is_empty(), "the earlier duplicate goes too");
        push_entry(&mut entries, 0, (key.clone(), obj(json!("Job"))), excepted);
        assert_eq!(entries, vec![(key, obj(json!("Job")))]);
    }

    #[test]
    fn entries_are_added_as_jq_builds_an_object() {
        let plan = Plan::new(&shape(json!([{"type": "x"}])).unwrap());
        let key = |k: &str| Val::from(k.to_owned());
        let mut entries = vec![(key("before"), Val::Null), (key("a"), obj(json!(1)))];
        push_entry(&mut entries, 1, (key("b"), obj(json!(2))), &Plan::Keep);
        assert_eq!(entries.len(), 3);
        // Left out: the key goes, an earlier duplicate in this object too,
        // but not an entry of the parent (before `from`).
        push_entry(&mut entries, 1, (key("a"), obj(json!([]))), &plan);
        assert_eq!(
            entries,
            vec![(key("before"), Val::Null), (key("b"), obj(json!(2)))]
        );
        push_entry(&mut entries, 1, (key("before"), obj(json!([]))), &plan);
        assert_eq!(entries.len(), 2);
        assert_eq!(key_val(None, "k"), key("k"));
        assert_eq!(key_val(Some(&key("shared")), "k"), key("shared"));
    }
}
