//! Ids: the ones toolwire makes (sessions, calls, suspensions, temporary names: one
//! scheme, a prefix and a UUID v7, so they are unique across processes and sort by creation
//! time), and the one rule every id it accepts follows, wherever it comes from (a
//! provider's call id, an imported history, a URL path): [`check_id`], the same rule as
//! [`ID_PATTERN`] for the schema, the OpenAPI document and the page.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest id accepted, in bytes (ids are ASCII, so in characters too); generous for
/// UUIDs and every provider's call ids.
pub const MAX_ID_LEN: usize = 256;

/// [`check_id`] as an ECMA-262 pattern (JSON Schema, OpenAPI, the page): 1 to 256 of
/// URLs' unreserved characters (letters, digits, `-`, `.`, `_`, `~`), no `..`.
pub const ID_PATTERN: &str = r"^(?!.*\.\.)[A-Za-z0-9._~-]{1,256}$";

/// Why an id is refused, or `None` for a good one. An id later becomes part of a URL, an
/// object-store key or a file name, so anything that could escape a directory or confuse
/// a parser is refused up front (docs/contracts.md, "Invariants", 5); what is left needs
/// no escaping in any of them.
pub fn check_id(value: &str) -> Option<&'static str> {
    if value.is_empty() {
        Some("must not be empty")
    } else if value.len() > MAX_ID_LEN {
        Some("longer than 256 bytes")
    } else if value.contains("..") {
        Some("must not contain `..`")
    } else if value.contains(['/', '\\']) {
        Some("must not contain a path separator")
    } else if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
    {
        Some("may hold only letters, digits, `-`, `.`, `_` and `~`")
    } else {
        None
    }
}

/// A refused id: which one, and why (the value itself is left out: it may be huge or
/// hostile).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what}: {reason}")]
pub struct InvalidId {
    /// Which id was refused, e.g. `session id`.
    pub what: &'static str,
    /// Why, e.g. `contains '..'`.
    pub reason: &'static str,
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// The id, if it follows [`check_id`].
            pub fn parse(value: impl Into<String>) -> Result<Self, InvalidId> {
                let value = value.into();
                match check_id(&value) {
                    None => Ok($name(value)),
                    Some(reason) => Err(InvalidId { what: $what, reason }),
                }
            }

            /// The id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidId;
            fn try_from(value: String) -> Result<Self, InvalidId> {
                $name::parse(value)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "description": concat!("A ", $what, ": ", "1 to 256 letters, digits, `-`, `.`, `_` or `~`, without `..`."),
                    "type": "string",
                    "pattern": ID_PATTERN,
                })
            }
        }
    };
}

id_type!(
    /// A session's id, checked ([`check_id`]).
    SessionId,
    "session id"
);
id_type!(
    /// A tool call's id, checked ([`check_id`]).
    CallId,
    "call id"
);

/// `prefix_` and a UUID v7 in simple (hex) form, e.g. `susp_0190f0c1…`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_every_id() {
        for good in [
            "s_0190f0c1",
            "toolu_01A09q90qw90lq917835lq9",
            "call.abc-1_2",
            "a~b",
        ] {
            assert_eq!(check_id(good), None, "{good}");
            assert_eq!(SessionId::parse(good).unwrap().as_str(), good);
        }
        let long = "x".repeat(MAX_ID_LEN + 1);
        for (bad, why) in [
            ("", "empty"),
            ("../x", "`..`"),
            ("a/b", "separator"),
            ("a\\b", "separator"),
            ("a\nb", "only"),
            ("a b", "only"),
            ("é", "only"),
            ("a?b", "only"),
            (long.as_str(), "256"),
        ] {
            let err = CallId::parse(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("invalid call id") && err.contains(why),
                "{bad:?}: {err}"
            );
        }
        let json: Result<SessionId, _> = serde_json::from_str("\"a/b\"");
        assert!(json.is_err());
        assert_eq!(
            serde_json::to_string(&SessionId::parse("s_1").unwrap()).unwrap(),
            "\"s_1\""
        );
    }

    #[test]
    fn ids_are_unique_and_sort_by_creation() {
        let a = new_id("call");
        let b = new_id("call");
        assert!(a.starts_with("call_") && a.len() == 5 + 32);
        assert_ne!(a, b);
        assert!(a < b, "{a} !< {b}");
    }
}
