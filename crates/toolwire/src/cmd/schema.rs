//! `toolwire schema`: the JSON Schema of the wire format.

use anyhow::Result;

use crate::Outcome;

pub(crate) fn run() -> Result<Outcome> {
    print!("{}", toolwire_core::schema::tool_result_schema_json());
    Ok(Outcome::Ok)
}
