//! W3C Trace Context: the ids that tie a call's work to its trace, as plain values, so
//! tools (an MCP server's `_meta`) can pass a trace on without an OpenTelemetry crate.

/// Where a span sits in its trace: what a child records as its parent, and what travels
/// to another process as `traceparent` (and `tracestate`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// The trace's 16-byte id, shared by every span in it.
    pub trace_id: [u8; 16],
    /// This span's 8-byte id.
    pub span_id: [u8; 8],
    /// The `sampled` trace flag: whether the trace is being recorded.
    pub sampled: bool,
    /// Vendors' `tracestate`, passed on as received (at most 512 bytes kept).
    pub state: Option<String>,
}

/// The longest `tracestate` passed on; W3C allows a receiver to drop longer ones.
const MAX_STATE: usize = 512;

impl TraceContext {
    /// `00-{trace id}-{span id}-{flags}`, lowercase hex as W3C Trace Context writes it.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            hex_id(&self.trace_id),
            hex_id(&self.span_id),
            u8::from(self.sampled)
        )
    }

    /// The trace id as 32 lowercase hex digits (OTLP/JSON and W3C write it so).
    pub fn trace_id_hex(&self) -> String {
        hex_id(&self.trace_id)
    }

    /// The span id as 16 lowercase hex digits.
    pub fn span_id_hex(&self) -> String {
        hex_id(&self.span_id)
    }

    /// Reads a `traceparent` (and an optional `tracestate`); `None` for anything W3C
    /// says to ignore: a wrong length, non-hex or uppercase digits, all-zero ids, version
    /// `ff`.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let mut parts = traceparent.trim().split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        // Version 00 has exactly four parts; later versions may append more.
        if version.len() != 2 || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        let trace_id: [u8; 16] = unhex(trace)?;
        let span_id: [u8; 8] = unhex(span)?;
        let [flags]: [u8; 1] = unhex(flags)?;
        let _: [u8; 1] = unhex(version)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_STATE && s.is_ascii())
            .map(str::to_owned);
        Some(TraceContext {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
            state,
        })
    }
}

/// Lowercase hex of `bytes`.
pub fn hex_id(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// Exactly `N` bytes from `2N` lowercase hex digits.
fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != N * 2 {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = (value(pair[0])? << 4) | value(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let ctx = TraceContext::parse(text, Some("vendor=x")).unwrap();
        assert_eq!(ctx.traceparent(), text);
        assert!(ctx.sampled);
        assert_eq!(ctx.state.as_deref(), Some("vendor=x"));
        assert_eq!(ctx.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    }

    #[test]
    fn malformed_traceparents_are_ignored() {
        for bad in [
            "",
            "00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473é-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad:?}");
        }
    }
}
