//! A [`Shape`] compiled for reading: the [`Plan`] the parsers follow for each
//! value (keep it, skip it, keep some of its fields), and how a kept entry
//! joins its object.

use super::shape::Shape;
use jaq_json::Val;

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
    pub(crate) fn guarded(&self) -> bool {
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

    /// [`Plan::keeps`] for the object these entries make (in the order
    /// read: a later duplicate key is the one an object keeps), judged
    /// before the object is made.
    pub(crate) fn keeps_entries(&self, entries: &[(Val, Val)]) -> bool {
        let Plan::Fields(fields) = self else {
            return true;
        };
        let last = |key: &Val| {
            let entry = entries.iter().rev().find(|(k, _)| same_key(k, key));
            entry.map(|(_, v)| v)
        };
        fields
            .iter()
            .filter(|f| f.guards)
            .all(|f| f.holds(last(&f.key)))
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

/// Whether two keys are equal. A kept entry's key is its field's shared
/// key, the very bytes: told by their address before their contents.
fn same_key(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::TStr(x), Val::TStr(y)) if x.as_ptr() == y.as_ptr() && x.len() == y.len() => true,
        _ => a == b,
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
    use crate::reader::shape::tests::{fields, shape};
    use crate::reader::Projection;
    use serde_json::json;

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

    /// An element is judged alike by its entries, before its map is made:
    /// a later duplicate key is the one the map keeps.
    #[test]
    fn entries_are_kept_as_their_object_would_be() {
        let list = shape(json!([{"type": "PodScheduled", "status": true,
                                 "state": {"$is": "object", "terminated": {"$is": "object"}}}]))
        .unwrap();
        let plan = Plan::new(&list);
        let elem = plan.element();
        let key = |k: &str| Val::from(k.to_owned());
        let cases = [
            vec![
                ("type", json!("PodScheduled")),
                ("state", json!({"terminated": {}})),
            ],
            vec![
                ("type", json!("Ready")),
                ("state", json!({"terminated": {}})),
            ],
            vec![
                ("type", json!("Ready")),
                ("state", json!({"terminated": {}})),
                ("type", json!("PodScheduled")),
            ],
            vec![
                ("type", json!("PodScheduled")),
                ("state", json!({"terminated": {}})),
                ("type", json!("Ready")),
            ],
            vec![("type", json!("PodScheduled")), ("state", json!({}))],
            vec![("type", json!("PodScheduled"))],
            vec![],
        ];
        for case in cases {
            let entries: Vec<(Val, Val)> =
                case.iter().map(|(k, v)| (key(k), obj(v.clone()))).collect();
            let object = Val::obj(entries.iter().cloned().collect());
            assert_eq!(
                elem.keeps_entries(&entries),
                elem.keeps(&object),
                "{case:?}"
            );
        }
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
