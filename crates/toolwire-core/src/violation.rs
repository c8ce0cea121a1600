//! Contract violations: what `validate()` and the typed views report, each naming its field path.

use std::fmt;

/// One broken rule at one place, e.g. `output[2].data.rows: expected array`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Field path from the root of what was checked: `output[2].data.rows`.
    pub path: String,
    pub problem: Problem,
}

impl Violation {
    pub fn new(path: impl Into<String>, problem: Problem) -> Self {
        Violation {
            path: path.into(),
            problem,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl std::error::Error for Violation {}

/// Every rule of the contract has its own variant, so callers can match on what broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("missing required field")]
    Missing,
    #[error("expected {0}")]
    WrongType(&'static str),
    #[error("must not be empty")]
    Empty,
    #[error("invalid kind {0:?}: must match ^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$")]
    InvalidKind(String),
    #[error("unknown value {found:?}, expected one of {expected}")]
    UnknownValue {
        found: String,
        expected: &'static str,
    },
    #[error("a success result needs at least one output value")]
    SuccessWithoutOutput,
    #[error("required when status is {0}")]
    RequiredForStatus(&'static str),
    #[error("only allowed when status is {allowed}, but status is {status}")]
    NotAllowedForStatus {
        allowed: &'static str,
        status: &'static str,
    },
    #[error("expected a source: exactly one of {{base64}}, {{blob, size}} or {{url}}")]
    InvalidSource,
    #[error("not valid base64 (standard alphabet, optional `=` padding)")]
    InvalidBase64,
    #[error("invalid blob key {0:?}: expected blake3: followed by 64 lowercase hex characters")]
    InvalidBlobKey(String),
    #[error("mime type {found:?} does not fit kind {kind}: expected {expected}")]
    MimeMismatch {
        found: String,
        kind: &'static str,
        expected: &'static str,
    },
    #[error("expected a ui:// URI, found {0:?}")]
    NotUiUri(String),
    #[error("value is of kind {found}, not {expected}")]
    KindMismatch {
        found: String,
        expected: &'static str,
    },
    #[error("{0} more violations not shown")]
    More(usize),
}

/// All violations found, in document order. Never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    pub fn iter(&self) -> impl Iterator<Item = &Violation> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One line per violation.
impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

/// Collects violations and caps them, so a million bad rows give a bounded report.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    found: Vec<Violation>,
    dropped: usize,
}

/// Enough to see the pattern of a broken payload without flooding a terminal.
const MAX_REPORTED: usize = 100;

impl Collector {
    pub(crate) fn push(&mut self, path: impl FnOnce() -> String, problem: Problem) {
        if self.found.len() < MAX_REPORTED {
            self.found.push(Violation::new(path(), problem));
        } else {
            self.dropped += 1;
        }
    }

    pub(crate) fn finish(mut self) -> Result<(), Violations> {
        if self.found.is_empty() {
            return Ok(());
        }
        if self.dropped > 0 {
            self.found
                .push(Violation::new("...", Problem::More(self.dropped)));
        }
        Err(Violations(self.found))
    }
}
