//! Unified diffs for humans.

use similar::TextDiff;

/// `old` → `new` as a unified diff with three lines of context; empty when
/// they are equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}
