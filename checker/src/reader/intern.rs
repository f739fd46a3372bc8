//! Interning: kept strings and small objects that repeat from pod to pod
//! share one copy, while the fast parser builds them.

use super::shape::Field;
use jaq_json::Val;
use std::borrow::Cow;
use std::collections::HashMap;

/// Kept strings that repeat from pod to pod (namespace, phase, node name,
/// owner kind) share one copy of their bytes, and kept objects made only of
/// strings that repeat (a running pod's `status: {phase: "Running"}`, its
/// `spec: {nodeName: …}`) share one map: jq values are never changed in
/// place (jaq copies a shared one on write), so sharing cannot show. Per
/// field, interning stops when it does not pay (names and uids never
/// repeat, nor does a pod's metadata).
#[derive(Default)]
pub(crate) struct Interner {
    strings: HashMap<Box<[u8]>, Val>,
    objects: HashMap<Box<[u8]>, Val>,
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

