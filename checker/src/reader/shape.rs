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
}

/// The key of projection.json that makes an object shape a [`Shape::Object`].
const IS: &str = "$is";
/// The key of projection.json that makes a [`Shape::OneOf`] of a run's list.
const ONE_OF: &str = "$one_of";
/// The one list a [`Shape::OneOf`] may name.
const OWNER_KINDS: &str = "excluded_owner_kinds";
/// The key of projection.json that keeps a value only for a run with a
/// label selector (`{"$if": "selector"}`: the pods' labels).
const IF: &str = "$if";
/// The one condition `$if` may name.
const SELECTOR: &str = "selector";

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
        Self::for_run(v, owner_kinds, false)
            .map(|shape| shape.unwrap_or(Shape::Fields(HashMap::new())))
    }

    /// Like [`Shape::for_owner_kinds`], for a run with a label selector
    /// (`selector`) or without: None for a value the run leaves out.
    pub fn for_run(
        v: &serde_json::Value,
        owner_kinds: &[String],
        selector: bool,
    ) -> Result<Option<Self>, String> {
        use serde_json::Value as J;
        if let J::Object(fields) = v {
            match fields.get(IF) {
                None => {}
                Some(J::String(condition)) if condition == SELECTOR => {
                    return Ok(selector.then_some(Shape::Keep))
                }
                Some(other) => return Err(format!("not a condition of the run: {other}")),
            }
        }
        Self::for_run_kept(v, owner_kinds, selector).map(Some)
    }

    fn for_run_kept(
        v: &serde_json::Value,
        owner_kinds: &[String],
        selector: bool,
    ) -> Result<Self, String> {
        use serde_json::Value as J;
        match v {
            J::Bool(true) => Ok(Shape::Keep),
            J::String(wanted) => Ok(Shape::Equals(wanted.clone())),
            J::Object(fields) if fields.contains_key(ONE_OF) => match &fields[ONE_OF] {
                J::String(list) if list == OWNER_KINDS => Ok(Shape::OneOf(owner_kinds.to_vec())),
                other => Err(format!("not a list of the run: {other}")),
            },
            J::Object(fields) => {
                let kept = fields
                    .iter()
                    .filter(|(k, _)| !k.starts_with('_') && *k != IS)
                    .filter_map(|(k, v)| {
                        Shape::for_run(v, owner_kinds, selector)
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
                selector,
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
            Shape::Keep | Shape::Equals(_) | Shape::OneOf(_) => {}
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

    /// The canonical projection for a run that excludes these owner kinds.
    pub fn for_owner_kinds(owner_kinds: &[String]) -> Self {
        Self::for_run(owner_kinds, false)
    }

    /// The canonical projection for a run that excludes these owner kinds,
    /// with a label selector (then the pods' labels are kept) or without.
    pub fn for_run(owner_kinds: &[String], selector: bool) -> Self {
        let doc: serde_json::Value =
            serde_json::from_str(Programs::PROJECTION_FILE).expect("projection.json is valid JSON");
        let shape = |key: &str| {
            Shape::for_run_kept(&doc[key], owner_kinds, selector)
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
            Plan::Keep | Plan::Each(_) => Some((None, KEEP)),
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
    /// costs an allocation, its key another and its entry a slot.
    pub(crate) fn leaves_out(&self, value: &Val) -> bool {
        match (self, value) {
            (Plan::Each(elem), Val::Arr(items)) => items.is_empty() && elem.guarded(),
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
            Plan::Keep | Plan::Fields(_) => KEEP,
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
                Plan::Keep | Plan::Skip => {}
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
