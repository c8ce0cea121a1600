//! Profiling driver (not a benchmark): normalizes 100,000 small MCP text results in a loop.
#![allow(clippy::unwrap_used)]
fn main() {
    let call = toolwire_core::CallRef::new("call_1", "t");
    let payloads: Vec<Vec<u8>> = (0..100_000)
        .map(|i| format!(r#"{{"content":[{{"type":"text","text":"result {i}: 3 files changed, 12 insertions(+)"}}]}}"#).into_bytes())
        .collect();
    for _ in 0..20 {
        for p in &payloads {
            std::hint::black_box(toolwire_normalize::normalize_bytes(p, &call));
        }
    }
}
