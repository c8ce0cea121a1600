//! Times `encode_request_bytes` for each provider on the bench's build-log session (20, 200
//! and 2,000 turns; or the sizes given), beside `serde_json::to_vec` of the session: a
//! quick loop, and a target for `perf record`, without building the whole bench.
//! `ENCODE_ROUNDS` sets the rounds (20), `ENCODE_FLOOR=0` skips the floor: under valgrind,
//! a run of N rounds less one of 0 (the session's building) is N rounds' encoding.
//! `ENCODE_PROVIDER=anthropic` (a provider's name) times that provider alone.

use std::time::Instant;

use serde_json::json;
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_core::{Message, ToolCall};
use toolwire_model::{Conversation, EncodeOptions, NoBlobs, Provider, encode_request_bytes};

/// The bench's session (crates/toolwire-bench/src/payloads.rs): two build logs a turn.
fn session(turns: usize) -> Conversation {
    let mut messages = vec![Message::system("You are a coding agent.")];
    for t in 0..turns {
        messages.push(Message::user(format!("Fix the build, step {t}.")));
        let ids: Vec<String> = (0..2).map(|i| format!("c{t}_{i}")).collect();
        messages.push(Message::assistant(
            format!("Step {t}."),
            ids.iter()
                .map(|id| ToolCall::new(id, "bash", json!({"cmd": "cargo build"})))
                .collect(),
        ));
        let log = format!(
            "{}error[E0308]: mismatched types (turn {t})\n",
            "   Compiling toolwire v0.1.0\n".repeat(40)
        );
        for id in &ids {
            messages.push(Message::tool(ToolResult::success(
                CallRef::new(id, "bash"),
                Value::text(log.clone()),
            )));
        }
    }
    Conversation::new(messages)
}

fn best_ms(rounds: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> std::io::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![20, 200, 2000]
    } else {
        sizes
    };
    let rounds: usize = std::env::var("ENCODE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let with_floor = std::env::var("ENCODE_FLOOR").map_or(true, |f| f != "0");
    let only = std::env::var("ENCODE_PROVIDER").ok();
    let options = EncodeOptions::for_model("m");
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    for turns in sizes {
        let conv = session(turns);
        print!("{turns:>5} turns");
        if with_floor {
            let floor = best_ms(rounds, || {
                drop(std::hint::black_box(serde_json::to_vec(&conv)))
            });
            print!("  floor {floor:7.3} ms");
        }
        for provider in Provider::ALL {
            if only.as_deref().is_some_and(|name| name != provider.name()) {
                continue;
            }
            let ms = best_ms(rounds, || {
                let body = rt.block_on(encode_request_bytes(provider, &conv, &options, &NoBlobs));
                drop(std::hint::black_box(body));
            });
            print!("  {} {ms:7.3}", provider.name());
        }
        println!();
    }
    Ok(())
}
