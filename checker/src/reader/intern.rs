//! Interning: kept strings and small objects that repeat from pod to pod
//! share one copy, while the fast parser builds them.

use super::plan::Field;
use jaq_json::Val;
use std::borrow::Cow;
use std::collections::HashMap;

/// foldhash's fast hash, fixed-seeded: a kept string is hashed once per pod
/// that holds it, and SipHash cost 2 % of reading a snapshot.
type FastHash = foldhash::fast::FixedState;

/// Kept strings that repeat from pod to pod (namespace, phase, node name,
/// owner kind) share one copy of their bytes, and kept objects made only of
/// strings that repeat (a running pod's `status: {phase: "Running"}`, its
/// `spec: {nodeName: …}`) share one map: jq values are never changed in
/// place (jaq copies a shared one on write), so sharing cannot show. Per
/// field, interning stops when it does not pay (names and uids never
/// repeat, nor does a pod's metadata).
#[derive(Default)]
pub(crate) struct Interner {
    strings: HashMap<Box<[u8]>, Val, FastHash>,
    objects: HashMap<Box<[u8]>, Val, FastHash>,
    /// The key of the last object looked up ([`Interner::object`]).
    object_key: Vec<u8>,
    /// What this thread saw of each field's values, by [`Field::id`]:
    /// whether interning them pays.
    seen: Vec<Seen>,
}

/// Values of one field seen by the fast path, `(seen, repeated)`: how many,
/// and how many of them were seen before.
#[derive(Default, Clone, Copy)]
struct Seen {
    strings: (u32, u32),
    objects: (u32, u32),
}

/// Values per field to look at before judging whether they repeat.
const INTERN_TRIAL: u32 = 1024;
/// Most distinct strings, and objects, kept.
const INTERN_MAX: usize = 1 << 16;

/// Whether values of a field, seen `(seen, repeated)` times, are still worth
/// interning: until the trial is over, and then while one in four repeats.
fn pays((seen, repeated): (u32, u32)) -> bool {
    seen < INTERN_TRIAL || repeated * 4 >= seen
}

fn count(stats: &mut (u32, u32), repeated: bool) {
    stats.0 = stats.0.saturating_add(1);
    stats.1 = stats.1.saturating_add(u32::from(repeated));
}

impl Interner {
    /// An interner with nothing kept, that has seen what this one saw.
    pub(super) fn fresh(&self) -> Self {
        Self {
            seen: self.seen.clone(),
            ..Self::default()
        }
    }

    /// What was seen of `field`'s values.
    fn seen(&mut self, field: &Field) -> &mut Seen {
        if self.seen.len() <= field.id {
            self.seen.resize(field.id + 1, Seen::default());
        }
        &mut self.seen[field.id]
    }

    pub(super) fn string(&mut self, field: &Field, bytes: Cow<'_, [u8]>) -> Val {
        if !pays(self.seen(field).strings) {
            return Val::utf8_str(bytes.into_owned());
        }
        let shared = self.strings.get(&*bytes).cloned();
        count(&mut self.seen(field).strings, shared.is_some());
        if let Some(shared) = shared {
            return shared;
        }
        let value = Val::utf8_str(bytes.to_vec());
        if self.strings.len() < INTERN_MAX {
            self.strings
                .insert(bytes.into_owned().into(), value.clone());
        }
        value
    }

    /// The shared object with these entries (the value of `field`), if one
    /// was kept. `None`: make it, and offer it to [`Interner::keep_object`].
    pub(super) fn object(&mut self, field: &Field, entries: &[(Val, Val)]) -> Option<Val> {
        self.object_key.clear();
        if !pays(self.seen(field).objects) || !object_key(entries, &mut self.object_key) {
            return None;
        }
        let shared = self.objects.get(self.object_key.as_slice()).cloned();
        count(&mut self.seen(field).objects, shared.is_some());
        shared
    }

    /// Keep `object`, just made from the entries [`Interner::object`] last
    /// looked up and did not find, for the pods that follow.
    pub(super) fn keep_object(&mut self, object: &Val) {
        if !self.object_key.is_empty() && self.objects.len() < INTERN_MAX {
            let key = std::mem::take(&mut self.object_key).into_boxed_slice();
            self.objects.insert(key, object.clone());
        }
    }
}

/// The bytes that tell an object made only of strings from any other (each
/// key and value with its length first) into `out`; false, and no key, when
/// a value is not a string.
fn object_key(entries: &[(Val, Val)], out: &mut Vec<u8>) -> bool {
    out.push(b'{'); // an empty object has a key too
    for (key, value) in entries {
        let (Val::TStr(key), Val::TStr(value)) = (key, value) else {
            out.clear();
            return false;
        };
        for text in [&key[..], &value[..]] {
            out.extend_from_slice(&text.len().to_le_bytes());
            out.extend_from_slice(text);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::plan::Plan;
    use crate::reader::Shape;

    /// A plan of two kept string fields, `a` and `b`.
    fn plan() -> Plan {
        let shape = Shape::Fields(
            [("a".to_owned(), Shape::Keep), ("b".to_owned(), Shape::Keep)]
                .into_iter()
                .collect(),
        );
        Plan::new(&shape)
    }

    fn field<'p>(plan: &'p Plan, name: &str) -> &'p Field {
        plan.field_entry(name.as_bytes()).unwrap().0.unwrap()
    }

    /// Where a string value's bytes live: shared values share it.
    fn at(value: &Val) -> *const u8 {
        let Val::TStr(bytes) = value else {
            panic!("not a string: {value:?}")
        };
        bytes.as_ptr()
    }

    fn string(interner: &mut Interner, field: &Field, text: &str) -> Val {
        interner.string(field, Cow::Borrowed(text.as_bytes()))
    }

    #[test]
    fn a_repeated_string_shares_one_copy() {
        let plan = plan();
        let mut interner = Interner::default();
        let first = string(&mut interner, field(&plan, "a"), "Running");
        let again = string(&mut interner, field(&plan, "a"), "Running");
        assert_eq!(first, again);
        assert_eq!(at(&first), at(&again));
        let other = string(&mut interner, field(&plan, "a"), "Pending");
        assert_eq!(other, Val::from("Pending".to_owned()));
        assert_ne!(at(&other), at(&first));
    }

    #[test]
    fn a_field_whose_values_never_repeat_stops_being_interned() {
        let plan = plan();
        let (a, b) = (field(&plan, "a"), field(&plan, "b"));
        let mut interner = Interner::default();
        for i in 0..INTERN_TRIAL {
            string(&mut interner, a, &format!("uid-{i}"));
        }
        // The trial is over and nothing repeated: `a`'s strings are made
        // anew, even one seen before; `b` has a trial of its own.
        let seen = string(&mut interner, a, "uid-0");
        assert_eq!(seen, Val::from("uid-0".to_owned()));
        assert_ne!(at(&seen), at(&string(&mut interner, a, "uid-0")));
        let shared = string(&mut interner, b, "uid-0");
        assert_eq!(at(&shared), at(&string(&mut interner, b, "uid-0")));
    }

    #[test]
    fn a_field_that_repeats_often_stays_interned() {
        let plan = plan();
        let a = field(&plan, "a");
        let mut interner = Interner::default();
        for i in 0..INTERN_TRIAL * 2 {
            let text = if i % 3 == 0 {
                "ns".to_owned()
            } else {
                format!("n{i}")
            };
            string(&mut interner, a, &text);
        }
        let first = string(&mut interner, a, "ns");
        assert_eq!(at(&first), at(&string(&mut interner, a, "ns")));
    }

    #[test]
    fn objects_of_strings_are_shared_once_kept() {
        let plan = plan();
        let a = field(&plan, "a");
        let mut interner = Interner::default();
        let entries = [(
            Val::from("phase".to_owned()),
            Val::from("Running".to_owned()),
        )];
        assert_eq!(interner.object(a, &entries), None, "nothing kept yet");
        let made = Val::obj(entries.iter().cloned().collect());
        interner.keep_object(&made);
        assert_eq!(interner.object(a, &entries), Some(made));
        // Another value, or one that is not a string: none.
        let running = [(
            Val::from("phase".to_owned()),
            Val::from("Pending".to_owned()),
        )];
        assert_eq!(interner.object(a, &running), None);
        let number = [(Val::from("phase".to_owned()), Val::from(1.5))];
        assert_eq!(interner.object(a, &number), None);
        interner.keep_object(&Val::obj(number.iter().cloned().collect()));
        assert_eq!(interner.object(a, &number), None, "never kept");
    }

    #[test]
    fn object_keys_tell_entries_apart() {
        let key = |entries: &[(&str, &str)]| {
            let entries: Vec<(Val, Val)> = entries
                .iter()
                .map(|(k, v)| (Val::from((*k).to_owned()), Val::from((*v).to_owned())))
                .collect();
            let mut out = Vec::new();
            assert!(object_key(&entries, &mut out));
            out
        };
        assert_ne!(key(&[("ab", "c")]), key(&[("a", "bc")]));
        assert_ne!(key(&[("a", "b")]), key(&[("a", "b"), ("a", "b")]));
        assert_ne!(key(&[]), Vec::<u8>::new(), "an empty object has a key");
    }

    #[test]
    fn a_fresh_interner_keeps_nothing_but_judges_alike() {
        let plan = plan();
        let a = field(&plan, "a");
        let mut interner = Interner::default();
        for i in 0..INTERN_TRIAL {
            string(&mut interner, a, &format!("uid-{i}"));
        }
        let mut fresh = interner.fresh();
        assert!(fresh.strings.is_empty() && fresh.objects.is_empty());
        // It saw what `interner` saw: `a` is not worth interning there either.
        let one = string(&mut fresh, a, "x");
        assert_ne!(at(&one), at(&string(&mut fresh, a, "x")));
    }
}
