//! Profiling driver (not a benchmark): normalizes 100,000 small MCP text results in a loop.
#![allow(clippy::unwrap_used)]
fn main() {
    let call = toolwire_core::CallRef::new("call_1", "t");
    let payloads: Vec<Vec<u8>> = (0..100_000)
        .map(|i| format!(r#"{{"content":[{{"type":"text","text":"result {i}: 3 files changed, 12 insertions(+)"}}]}}"#).into_bytes())
        .collect();
    // `parse` runs the floor alone, for comparing instruction counts (`perf stat`).
    let parse_only = std::env::args().nth(1).as_deref() == Some("parse");
    let reps: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    for _ in 0..reps {
        for p in &payloads {
            if parse_only {
                std::hint::black_box(serde_json::from_slice::<serde_json::Value>(p).unwrap());
            } else {
                std::hint::black_box(toolwire_normalize::normalize_bytes(p, &call));
            }
        }
    }
}
