//! rmcp's errors as a person reads them: its messages name Rust types
//! (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`) and hide the cause
//! (a refused connection) in the source chain. This keeps the words and the cause.

/// `e` and the causes its message does not already say, without Rust type names.
pub(crate) fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = strip_types(&e.to_string());
    let mut source = e.source();
    while let Some(cause) = source {
        let said = strip_types(&cause.to_string());
        if !said.is_empty() && !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        source = cause.source();
    }
    text.replace("Send message error ", "").replace(
        ", when send initialize request",
        " (during the MCP handshake)",
    )
}

/// Drops every `[…]` group that holds a Rust path (`::`), and the word before it when
/// that is `Transport`, so `Transport [a::B<c::D>] error: x` reads `error: x`.
fn strip_types(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('[') {
        let Some(len) = closing(&rest[open..]) else {
            break;
        };
        let group = &rest[open..open + len];
        if group.contains("::") {
            let before = rest[..open].trim_end();
            let before = before.strip_suffix("Transport").unwrap_or(before);
            out.push_str(before.trim_end());
            if !out.is_empty() {
                out.push(' ');
            }
            rest = rest[open + len..].trim_start();
        } else {
            out.push_str(&rest[..open + len]);
            rest = &rest[open + len..];
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// The length of the bracketed group `s` starts with, nested brackets included.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_go_and_words_stay() {
        let rmcp = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>] error: unexpected server response: HTTP 403 Forbidden: forbidden here, when send initialize request";
        let err = std::io::Error::other(rmcp);
        assert_eq!(
            readable(&err),
            "error: unexpected server response: HTTP 403 Forbidden: forbidden here (during the MCP handshake)"
        );
        assert_eq!(
            strip_types("keeps [plain] brackets"),
            "keeps [plain] brackets"
        );
        assert_eq!(strip_types("odd [a::b"), "odd [a::b");
        assert_eq!(strip_types("[x::Y] alone"), "alone");
    }
}
