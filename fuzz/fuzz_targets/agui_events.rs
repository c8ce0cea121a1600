//! libFuzzer target: any byte stream an AG-UI agent sends, through the follower's SSE
//! decoder and event recorder, over a real Host in a temp dir. The decoder finds the same
//! events however the stream is cut into chunks; nothing panics; a run's diagnostics stay
//! within their bound; and what was recorded loads back from the store.
//!
//! The first byte chooses the chunk size (1 to 256 bytes); the rest is the stream. The
//! limits are small so that the bounds (an overlong event, too many open calls, long
//! arguments and text, many diagnostics) are reached by inputs of a few kilobytes.
#![no_main]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use toolwire_agui::{FollowLimits, Follower, SseDecoder};

struct Fixture {
    rt: tokio::runtime::Runtime,
    host: toolwire_agent::Host,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let data = tempfile::tempdir().expect("a temp dir");
        let ws = tempfile::tempdir().expect("a temp dir");
        let host = rt.block_on(async {
            toolwire_agent::Host::builder()
                .data_dir(data.path())
                .workspace(ws.path())
                .build()
                .await
                .expect("a host")
        });
        Fixture {
            rt,
            host,
            _dirs: (data, ws),
        }
    })
}

const LIMITS: FollowLimits = FollowLimits {
    max_event: 2048,
    max_open_calls: 4,
    max_args: 256,
    max_text: 512,
    max_diagnostics: 8,
};

/// Each input follows a thread of its own, so no session grows across inputs.
static THREAD: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first) + 1;

    let mut whole = Vec::new();
    SseDecoder::new(LIMITS.max_event).push(stream, &mut whole);
    let mut decoder = SseDecoder::new(LIMITS.max_event);
    let mut chunked = Vec::new();
    for piece in stream.chunks(chunk) {
        decoder.push(piece, &mut chunked);
    }
    assert_eq!(whole, chunked, "chunks of {chunk} bytes decode otherwise");
    for event in &whole {
        if let Ok(data) = event {
            assert!(data.len() <= LIMITS.max_event, "an event past the bound");
        }
    }

    let f = fixture();
    let thread = format!("fuzz-{}", THREAD.fetch_add(1, Ordering::Relaxed));
    f.rt.block_on(async {
        let mut follower = Follower::open(f.host.clone(), &thread, "fuzz", LIMITS)
            .await
            .expect("a session");
        for event in whole {
            match event {
                Ok(data) => follower.event(&data).await,
                // Too long or not UTF-8 (a non-exhaustive enum): skipped, as the pump does.
                Err(_) => {}
            }
        }
        follower.stream_ended("the fuzzer's stream ended").await;
        // The kept ones, and one line counting the rest.
        let notes = follower.diagnostics();
        assert!(notes.len() <= LIMITS.max_diagnostics + 1, "{notes:?}");
        let stores = f.host.stores();
        stores
            .history()
            .load(follower.session_id())
            .await
            .expect("the recorded session loads back");
    });
});
