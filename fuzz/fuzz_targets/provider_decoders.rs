//! libFuzzer target: any JSON a provider (or something posing as one) sends, as a whole
//! response or as a stream of events, must decode to a reply or a clear error, for every
//! provider format, without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwire_model::Provider;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    // An array is also read as a stream: each element one event's data.
    let events: Vec<&serde_json::Value> = match &json {
        serde_json::Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for provider in Provider::ALL {
        let format = provider.format();
        let _ = format.decode_response(&json);
        let mut decoder = format.stream_decoder();
        for event in &events {
            if decoder.push(event).is_err() {
                break;
            }
        }
        let _ = decoder.is_complete();
        let reply = decoder.finish();
        // Whatever was decoded can be encoded back into a conversation.
        let _ = reply.into_message();
    }
});
