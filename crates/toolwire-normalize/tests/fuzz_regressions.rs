//! Inputs the fuzzer found, kept: each must normalize to a valid result, and normalizing
//! that result again must change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use toolwire_core::CallRef;
use toolwire_normalize::{normalize_bytes, normalize_value};

#[test]
fn every_found_input_normalizes_validly_and_idempotently() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let call = CallRef::new("call_fuzz", "fuzz");
        let result = normalize_bytes(&bytes, &call).result;
        if let Err(v) = result.validate() {
            panic!("{}: invalid result:\n{v}", path.display());
        }
        let again = normalize_value(serde_json::to_value(&result).unwrap(), &call).result;
        assert_eq!(again, result, "{}: not idempotent", path.display());
        seen += 1;
    }
    assert!(seen >= 1, "no regression inputs in {}", dir.display());
}
