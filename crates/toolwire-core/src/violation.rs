//! Contract violations: what `validate()` and the typed views report, each naming its field path.

use std::fmt;

/// One broken rule at one place, e.g. `output[2].data.rows: expected array`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Field path from the root of what was checked: `output[2].data.rows`.
    pub path: String,
    /// Which rule broke.
    pub problem: Problem,
}

impl Violation {
    /// A violation of `problem` at `path`.
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
    /// A required field is absent.
    #[error("missing required field")]
    Missing,
    /// The field holds the wrong JSON type; names the one expected.
    #[error("expected {0}")]
    WrongType(&'static str),
    /// A string or list that must have content is empty.
    #[error("must not be empty")]
    Empty,
    /// A `kind` does not match the kind pattern.
    #[error("invalid kind {0:?}: must match ^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$")]
    InvalidKind(String),
    /// A field holds a value outside its closed set.
    #[error("unknown value {found:?}, expected one of {expected}")]
    UnknownValue {
        /// What was found.
        found: String,
        /// The accepted values, `|`-separated.
        expected: &'static str,
    },
    /// A `success` result has no output.
    #[error("a success result needs at least one output value")]
    SuccessWithoutOutput,
    /// A field the status needs is absent (`error` for `error`, `suspension` for `suspended`).
    #[error("required when status is {0}")]
    RequiredForStatus(&'static str),
    /// A field is present that the status forbids.
    #[error("only allowed when status is {allowed}, but status is {status}")]
    NotAllowedForStatus {
        /// The status the field belongs to.
        allowed: &'static str,
        /// The result's actual status.
        status: &'static str,
    },
    /// A media source is not exactly one of its three forms.
    #[error("expected a source: exactly one of {{base64}}, {{blob, size}} or {{url}}")]
    InvalidSource,
    /// Inline media is not valid base64.
    #[error("not valid base64 (standard alphabet, optional `=` padding)")]
    InvalidBase64,
    /// A blob key is not `blake3:` and 64 lowercase hex characters.
    #[error("invalid blob key {0:?}: expected blake3: followed by 64 lowercase hex characters")]
    InvalidBlobKey(String),
    /// A MIME type does not fit the value's kind (e.g. `text/plain` on an `image`).
    #[error("mime type {found:?} does not fit kind {kind}: expected {expected}")]
    MimeMismatch {
        /// The MIME type found.
        found: String,
        /// The value's kind.
        kind: &'static str,
        /// What the kind accepts, e.g. `image/*`.
        expected: &'static str,
    },
    /// An MCP App URI is not a `ui://` URI.
    #[error("expected a ui:// URI, found {0:?}")]
    NotUiUri(String),
    /// A typed view was asked of a value of another kind.
    #[error("value is of kind {found}, not {expected}")]
    KindMismatch {
        /// The value's kind.
        found: String,
        /// The kind the view reads.
        expected: &'static str,
    },
    /// Stands in for violations cut from the list to keep it short.
    #[error("{0} more violations not shown")]
    More(usize),
}

/// All violations found, in document order. Never empty when returned as an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// The violations, in document order.
    pub fn iter(&self) -> impl Iterator<Item = &Violation> {
        self.0.iter()
    }

    /// How many violations there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none (never the case for a returned error).
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
