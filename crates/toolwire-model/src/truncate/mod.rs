//! Cutting a result's text to its budget by structure, with a marker that says what was
//! omitted and how to read it (`read_result`). The stored result is never changed.
//!
//! Every function here returns at most `budget` characters, marker included, and cuts only
//! on UTF-8 character boundaries.

mod json;
mod lines;
mod parts;
mod text;

pub use json::{cut_json, cut_value};
pub use lines::{cut_diff, cut_lines};
pub(crate) use parts::{Amount, Run, keep_ends, run_marker, run_marker_bound};
pub(crate) use text::COUNT_LIMIT;
pub use text::{Weight, cut_text};

use std::fmt::Write;

/// Where a cut text came from, so the marker can tell the model how to read the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutContext<'a> {
    /// The call whose result is cut.
    pub call_id: &'a str,
    /// Index of the value in the result's `output`.
    pub part: usize,
}

impl CutContext<'_> {
    /// The `read_result` call that reads on from `offset` (units depend on the kind).
    pub(crate) fn read_call(&self, offset: usize) -> String {
        let id = serde_json::Value::String(self.call_id.to_owned());
        format!(
            "read_result {{\"callId\":{id},\"part\":{},\"offset\":{offset}}}",
            self.part
        )
    }
}

/// `12345678` → `12,345,678`, so counts in markers read at a glance.
pub(crate) fn count(n: usize) -> String {
    toolwire_core::humanize::thousands(n as u64)
}

/// The first `budget` characters of `s`, on a char boundary: the last resort when even a
/// marker does not fit.
pub(crate) fn prefix_chars(s: &str, budget: usize) -> &str {
    match s.char_indices().nth(budget) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A marker for when the budget is too small for anything but a marker.
pub(crate) fn bare_marker(ctx: CutContext<'_>, budget: usize) -> String {
    let mut m = String::new();
    let _ = write!(m, "[… truncated; {} …]", ctx.read_call(0));
    prefix_chars(&m, budget).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_marker_respects_tiny_budgets() {
        let ctx = CutContext {
            call_id: "c1",
            part: 0,
        };
        assert_eq!(bare_marker(ctx, 0), "");
        assert_eq!(bare_marker(ctx, 3).chars().count(), 3);
    }
}
