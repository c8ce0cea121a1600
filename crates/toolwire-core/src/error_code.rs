//! `ErrorCode`: the machine-readable codes toolwire writes into `error.code`, typed once
//! so that crates match on a variant rather than on a string each spells for itself.

use std::fmt;

/// A result's `error.code`. On the wire it is a plain string (tools may use any code);
/// the variants are the ones toolwire itself writes and acts on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The model called a tool that is not registered.
    UnknownTool,
    /// The input did not match the tool's input schema.
    InvalidInput,
    /// The tool's output did not match its output schema, or was not a valid result.
    InvalidOutput,
    /// The tool ran past its deadline.
    Timeout,
    /// The tool panicked; the executor caught it.
    Panic,
    /// The call or its turn was cancelled before it finished.
    Cancelled,
    /// A person (or a policy acting for one) refused the call.
    Denied,
    /// A pending call could not be recorded or finished.
    SuspensionFailed,
    /// The store refused the result (invalid media, a full quota); the result records why.
    StoreFailed,
    /// The process running the call stopped before it finished (found on a later load).
    Interrupted,
    /// What serves the tool could not be reached: an MCP server that would not start,
    /// died mid-call, or lost a question across a restart.
    Unavailable,
    /// Any other code, kept verbatim.
    Other(String),
}

impl ErrorCode {
    /// The code as written into `error.code`, e.g. `unknown_tool`.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::InvalidOutput => "invalid_output",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Panic => "panic",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Denied => "denied",
            ErrorCode::SuspensionFailed => "suspension_failed",
            ErrorCode::StoreFailed => "store_failed",
            ErrorCode::Interrupted => "interrupted",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Other(code) => code,
        }
    }

    /// The typed code for a wire string; unknown codes are kept as [`ErrorCode::Other`].
    pub fn parse(code: &str) -> Self {
        match code {
            "unknown_tool" => ErrorCode::UnknownTool,
            "invalid_input" => ErrorCode::InvalidInput,
            "invalid_output" => ErrorCode::InvalidOutput,
            "timeout" => ErrorCode::Timeout,
            "panic" => ErrorCode::Panic,
            "cancelled" => ErrorCode::Cancelled,
            "denied" => ErrorCode::Denied,
            "suspension_failed" => ErrorCode::SuspensionFailed,
            "unavailable" => ErrorCode::Unavailable,
            "store_failed" => ErrorCode::StoreFailed,
            "interrupted" => ErrorCode::Interrupted,
            other => ErrorCode::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ErrorCode> for String {
    fn from(code: ErrorCode) -> Self {
        match code {
            ErrorCode::Other(s) => s,
            known => known.as_str().to_owned(),
        }
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_code_round_trips_through_its_string() {
        for code in [
            ErrorCode::UnknownTool,
            ErrorCode::InvalidInput,
            ErrorCode::InvalidOutput,
            ErrorCode::Timeout,
            ErrorCode::Panic,
            ErrorCode::Cancelled,
            ErrorCode::Denied,
            ErrorCode::SuspensionFailed,
            ErrorCode::StoreFailed,
            ErrorCode::Interrupted,
            ErrorCode::Unavailable,
            ErrorCode::Other("exit_status".into()),
        ] {
            assert_eq!(ErrorCode::parse(code.as_str()), code);
            assert_eq!(String::from(code.clone()), code.as_str());
        }
    }
}
