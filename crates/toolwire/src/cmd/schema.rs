//! `toolwire schema`: the JSON Schema of the wire format.

use anyhow::Result;

use crate::{Outcome, out};

pub(crate) fn run() -> Result<Outcome> {
    out::rendered(&toolwire_core::tool_result_schema_json());
    Ok(Outcome::Ok)
}
