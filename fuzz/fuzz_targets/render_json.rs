//! libFuzzer target: any JSON through the terminal renderer must render without
//! panicking, and with colour off nothing it prints may hold an escape or another control
//! character (newlines aside): hostile text is shown, never obeyed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwire_term::{TermOptions, render_json};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for expand in [false, true] {
        let opts = TermOptions::plain(60).with_expand_all(expand);
        if let Ok(text) = render_json(&json, &opts) {
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "a control character reached the output: {text:?}"
            );
        }
    }
});
