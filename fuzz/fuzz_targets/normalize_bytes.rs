//! libFuzzer target: any bytes through `normalize_bytes` must give a valid, idempotent
//! result without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwire_core::CallRef;
use toolwire_normalize::{normalize_bytes, normalize_value};

fuzz_target!(|data: &[u8]| {
    let call = CallRef::new("call_fuzz", "fuzz");
    let result = normalize_bytes(data, &call).result;
    if let Err(violations) = result.validate() {
        panic!("normalize produced an invalid result:\n{violations}");
    }
    let canonical = serde_json::to_value(&result).expect("a ToolResult always serializes");
    let again = normalize_value(canonical, &call).result;
    assert_eq!(again, result, "normalize is not idempotent");
});
