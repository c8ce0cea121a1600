//! Ids toolwire generates (sessions, calls, suspensions, temporary names): one scheme, a prefix and a UUID v7, so
//! they are unique across processes and sort by creation time.

/// `prefix_` and a UUID v7 in simple (hex) form, e.g. `susp_0190f0c1…`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sort_by_creation() {
        let a = new_id("call");
        let b = new_id("call");
        assert!(a.starts_with("call_") && a.len() == 5 + 32);
        assert_ne!(a, b);
        assert!(a < b, "{a} !< {b}");
    }
}
