//! Interning: kept strings that repeat from pod to pod share one copy of
//! their bytes, while the fast parser builds them.

use super::shape::Field;
use jaq_json::Val;
use std::borrow::Cow;
use std::collections::HashMap;

/// Kept strings that repeat from pod to pod (namespace, phase, node name,
/// owner kind) share one copy of their bytes: a few percent of the memory
/// of a projected snapshot. Per field, interning stops when it does not pay
/// (names and uids never repeat).
#[derive(Default)]
pub(crate) struct Interner {
    strings: HashMap<Box<[u8]>, Val>,
}

/// Strings per field to look at before judging whether they repeat.
const INTERN_TRIAL: u32 = 1024;
/// Most distinct strings kept.
const INTERN_MAX: usize = 1 << 16;

impl Interner {
    pub(super) fn string(&mut self, field: &Field, bytes: Cow<'_, [u8]>) -> Val {
        let (seen, repeated) = field.strings.get();
        if seen >= INTERN_TRIAL && repeated * 4 < seen {
            return Val::utf8_str(bytes.into_owned());
        }
        if let Some(shared) = self.strings.get(&*bytes) {
            field
                .strings
                .set((seen.saturating_add(1), repeated.saturating_add(1)));
            return shared.clone();
        }
        field.strings.set((seen.saturating_add(1), repeated));
        let value = Val::utf8_str(bytes.to_vec());
        if self.strings.len() < INTERN_MAX {
            self.strings
                .insert(bytes.into_owned().into(), value.clone());
        }
        value
    }
}
