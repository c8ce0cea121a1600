//! The `kind` of a semantic value: the well-known kinds and the namespaced-identifier rule.

use std::borrow::{Borrow, Cow};
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The pattern every kind must match: lowercase words joined by
/// underscores, namespaced with dots, e.g. `text`, `git.status`, `acme.test_report`.
pub const KIND_PATTERN: &str = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$";

/// A value's kind. Deserializing accepts any string so that a bad kind reaches
/// `validate()` and is reported with its path instead of failing the whole parse.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Kind(
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"))] Cow<'static, str>,
);

impl Kind {
    /// Wraps a string without checking it; [`Kind::is_valid`] or `validate()` checks.
    pub fn new(kind: impl Into<String>) -> Self {
        Kind(Cow::Owned(kind.into()))
    }

    /// The kind as a string, e.g. `file_list`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the kind matches [`KIND_PATTERN`].
    pub fn is_valid(&self) -> bool {
        is_valid_kind(&self.0)
    }

    /// The well-known kind this is, if any.
    pub fn well_known(&self) -> Option<WellKnown> {
        WellKnown::from_name(&self.0)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Kind {
    fn from(s: &str) -> Self {
        Kind::new(s)
    }
}

impl From<String> for Kind {
    fn from(s: String) -> Self {
        Kind::new(s)
    }
}

/// Well-known kinds borrow their static name: no allocation per value.
impl From<WellKnown> for Kind {
    fn from(k: WellKnown) -> Self {
        Kind(Cow::Borrowed(k.name()))
    }
}

impl Borrow<str> for Kind {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Kind {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Checks [`KIND_PATTERN`] by hand: core stays free of a regex engine.
pub fn is_valid_kind(kind: &str) -> bool {
    !kind.is_empty()
        && kind.split('.').all(|segment| {
            let mut bytes = segment.bytes();
            matches!(bytes.next(), Some(b'a'..=b'z'))
                && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_'))
        })
}

/// The kinds whose `data` shape is fixed (docs/contracts.md, "Result kinds and display
/// hints").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WellKnown {
    /// `text`: plain text or markdown.
    Text,
    /// `diff`: a change to one file.
    Diff,
    /// `file_content`: a file's text, with its path.
    FileContent,
    /// `file_list`: a directory listing.
    FileList,
    /// `table`: rows under typed columns.
    Table,
    /// `image`: an image, inline, by URL or stored as a blob.
    Image,
    /// `file`: audio, video, a document or other binary content.
    File,
    /// `resource_link`: a pointer to a resource that was not inlined.
    ResourceLink,
    /// `structured`: any JSON, shown as a tree.
    Structured,
}

impl WellKnown {
    /// Every well-known kind, in the order the contract lists them.
    pub const ALL: [WellKnown; 9] = [
        WellKnown::Text,
        WellKnown::Diff,
        WellKnown::FileContent,
        WellKnown::FileList,
        WellKnown::Table,
        WellKnown::Image,
        WellKnown::File,
        WellKnown::ResourceLink,
        WellKnown::Structured,
    ];

    /// The kind's wire name, e.g. `file_list`.
    pub fn name(self) -> &'static str {
        match self {
            WellKnown::Text => "text",
            WellKnown::Diff => "diff",
            WellKnown::FileContent => "file_content",
            WellKnown::FileList => "file_list",
            WellKnown::Table => "table",
            WellKnown::Image => "image",
            WellKnown::File => "file",
            WellKnown::ResourceLink => "resource_link",
            WellKnown::Structured => "structured",
        }
    }

    /// The well-known kind with this wire name, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        WellKnown::ALL.into_iter().find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_pattern_accepts_namespaced_and_rejects_the_rest() {
        for ok in ["text", "git.status", "acme.test_report", "a1_b.c2", "x"] {
            assert!(is_valid_kind(ok), "{ok} should be valid");
        }
        for bad in [
            "",
            "Bad Kind",
            "git.",
            ".git",
            "1abc",
            "git..status",
            "Git",
            "a-b",
            "a.B",
        ] {
            assert!(!is_valid_kind(bad), "{bad} should be invalid");
        }
    }

    #[test]
    fn well_known_names_round_trip() {
        for k in WellKnown::ALL {
            assert_eq!(WellKnown::from_name(k.name()), Some(k));
            assert!(is_valid_kind(k.name()));
        }
    }
}
