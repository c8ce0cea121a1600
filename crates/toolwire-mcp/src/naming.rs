//! `NAME__TOOL`: an MCP tool's name as every provider accepts it, stable across runs and
//! never the same for two tools.

use std::collections::HashSet;

/// Providers' cap on a function name.
pub(crate) const MAX_TOOL_NAME: usize = 64;

/// The separator between a server's name and its tool's.
pub const SEPARATOR: &str = "__";

/// The registered names of one server's tools, in order. A name that is already valid
/// and short enough is kept as `server__tool`; any other is cleaned (characters outside
/// `[a-zA-Z0-9_-]` become `_`), cut, and given a hash of the original name, so that it
/// stays the same from one run to the next and two tools never share one.
pub(crate) fn assign(server: &str, tools: &[&str]) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(tools.len());
    // Names kept as they are come first: a hashed name must never take one of theirs.
    let plain: Vec<Option<String>> = tools.iter().map(|t| plain_name(server, t)).collect();
    for name in plain.iter().flatten() {
        taken.insert(name.clone());
    }
    let mut seen_plain: HashSet<&str> = HashSet::new();
    for (tool, plain) in tools.iter().zip(&plain) {
        let name = match plain {
            // A server listing one name twice gets the second hashed, not a duplicate.
            Some(p) if seen_plain.insert(p.as_str()) => p.clone(),
            _ => {
                let mut salt = 0u32;
                loop {
                    let candidate = hashed_name(server, tool, salt);
                    if taken.insert(candidate.clone()) {
                        break candidate;
                    }
                    salt += 1;
                }
            }
        };
        out.push(name);
    }
    out
}

fn plain_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("{server}{SEPARATOR}{tool}");
    let ok = name.len() <= MAX_TOOL_NAME
        && !tool.is_empty()
        && tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then_some(name)
}

fn hashed_name(server: &str, tool: &str, salt: u32) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(tool.as_bytes());
    if salt > 0 {
        hasher.update(&salt.to_le_bytes());
    }
    let hash = hasher.finalize().to_hex();
    let suffix = &hash[..8];
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{server}{SEPARATOR}{clean}");
    // ASCII only by now, so any byte index is a char boundary.
    name.truncate(MAX_TOOL_NAME - 1 - suffix.len());
    name.push('_');
    name.push_str(suffix);
    name
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        toolwire_tool::is_valid_tool_name(name)
    }

    #[test]
    fn plain_names_are_kept() {
        let names = assign("everything", &["echo", "get-tiny-image", "getTinyImage"]);
        assert_eq!(
            names,
            [
                "everything__echo",
                "everything__get-tiny-image",
                "everything__getTinyImage"
            ]
        );
    }

    #[test]
    fn odd_and_long_names_are_valid_stable_and_distinct() {
        let long_a = format!("{}a", "x".repeat(80));
        let long_b = format!("{}b", "x".repeat(80));
        let tools = [
            "files/read",
            "files.read",
            "héllo",
            long_a.as_str(),
            long_b.as_str(),
            "echo",
            "echo",
        ];
        let names = assign("srv", &tools);
        assert_eq!(
            names,
            assign("srv", &tools),
            "stable from one run to the next"
        );
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for n in &names {
            assert!(valid(n) && n.len() <= MAX_TOOL_NAME, "{n}");
            assert!(n.starts_with("srv__"), "{n}");
        }
        assert_eq!(names[5], "srv__echo");
    }

    #[test]
    fn a_hashed_name_never_takes_a_plain_one() {
        // A tool literally named like another's hashed form keeps it; the other moves on.
        let hashed = assign("s", &["a.b"]).remove(0);
        let literal = hashed.trim_start_matches("s__").to_owned();
        let names = assign("s", &["a.b", &literal]);
        assert_eq!(names[1], hashed);
        assert_ne!(names[0], names[1]);
        assert!(valid(&names[0]));
    }
}
