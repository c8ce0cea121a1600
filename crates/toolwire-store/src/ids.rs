//! Validation of the names that reach storage: blob keys, session ids and call ids.
//!
//! A key or id is later part of a file path, an object-store key or a URL, so anything that
//! could escape a directory or confuse a parser is refused up front (docs/contracts.md,
//! "Invariants", 5).

use std::fmt;

use toolwire_core::is_blob_key;

use crate::error::{Result, StoreError};

/// A checked content address: `blake3:` plus 64 lowercase hex characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobKey(String);

impl BlobKey {
    /// The key, if it is `blake3:` and 64 lowercase hex characters.
    pub fn parse(key: &str) -> Result<Self> {
        if is_blob_key(key) {
            Ok(BlobKey(key.to_owned()))
        } else {
            Err(StoreError::InvalidBlobKey {
                key: truncate_for_message(key),
            })
        }
    }

    #[cfg(feature = "backends")]
    pub(crate) fn from_hash(hash: &blake3::Hash) -> Self {
        BlobKey(format!("blake3:{}", hash.to_hex()))
    }

    /// The key as a string, `blake3:<hex>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 64 hex characters.
    pub fn hex(&self) -> &str {
        self.0.get("blake3:".len()..).unwrap_or_default()
    }
}

impl fmt::Display for BlobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a session id, call id or other identifier by toolwire's one rule
/// ([`toolwire_core::check_id`]).
pub fn validate_id(what: &'static str, value: &str) -> Result<()> {
    match toolwire_core::check_id(value) {
        Some(reason) => Err(StoreError::InvalidId {
            what,
            value: truncate_for_message(value),
            reason,
        }),
        None => Ok(()),
    }
}

/// Error messages quote bad input, but never a megabyte of it.
pub(crate) fn truncate_for_message(s: &str) -> String {
    const MAX: usize = 120;
    if s.len() <= MAX {
        return s.to_owned();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_core::MAX_ID_LEN;

    #[test]
    fn blob_keys_are_checked() {
        let good = format!("blake3:{}", "ab".repeat(32));
        assert_eq!(BlobKey::parse(&good).unwrap().hex(), "ab".repeat(32));
        for bad in ["", "blake3:", "sha256:00", "blake3:../../etc/passwd"] {
            let err = BlobKey::parse(bad).unwrap_err();
            assert!(err.to_string().contains("invalid blob key"), "{err}");
        }
        let upper = format!("blake3:{}", "AB".repeat(32));
        assert!(BlobKey::parse(&upper).is_err());
    }

    /// The rule itself is toolwire-core's (`check_id`, tested there); the store's error
    /// names what was refused and quotes a bounded excerpt of it.
    #[test]
    fn ids_are_checked_by_the_one_rule() {
        validate_id("session id", "sess_01HZX-abc.def").unwrap();
        let long = "../".repeat(MAX_ID_LEN);
        let err = validate_id("call id", &long).unwrap_err().to_string();
        assert!(err.contains("call id") && err.len() < 300, "{err}");
    }
}
