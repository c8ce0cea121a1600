//! Finished spans and their OTLP/JSON encoding (an `ExportTraceServiceRequest` as the
//! OTLP specification writes it in JSON: hex trace and span ids, 64-bit integers as
//! strings, enums as numbers, camelCase field names).

use serde_json::{Map, Value as Json, json};
use toolwire_core::hex_id as hex;
use toolwire_runtime::trace::{Attr, AttrValue, SpanKind};

/// A span once it ended, as it is exported.
#[derive(Debug, Clone)]
pub struct SpanData {
    /// The trace this span belongs to.
    pub trace_id: [u8; 16],
    /// This span's id.
    pub span_id: [u8; 8],
    /// The parent span's id; `None` for a trace's root.
    pub parent_span_id: Option<[u8; 8]>,
    /// The W3C `tracestate` received with the parent, passed on.
    pub trace_state: Option<String>,
    /// The span's name (`execute_tool read_file`, `chat claude-…`).
    pub name: String,
    /// Internal work or a request to another service.
    pub kind: SpanKind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, in nanoseconds since the Unix epoch.
    pub end_ns: u64,
    /// The span's attributes, keys by the GenAI conventions.
    pub attributes: Vec<Attr>,
    /// Points in time inside the span.
    pub events: Vec<SpanEvent>,
    /// `Some(message)` when the span failed (status `ERROR`).
    pub error: Option<String>,
}

/// A point in time inside a span (e.g. `toolwire.resolved` when an approval is answered).
#[derive(Debug, Clone)]
pub struct SpanEvent {
    /// The event's name.
    pub name: &'static str,
    /// When, in nanoseconds since the Unix epoch.
    pub time_ns: u64,
    /// The event's own attributes.
    pub attributes: Vec<Attr>,
}

/// The instrumentation scope every span is exported under.
const SCOPE: &str = "toolwire";

/// One export request for `spans`, under the process's resource attributes.
pub fn export_request(resource: &[(String, String)], spans: &[SpanData]) -> Json {
    let resource: Vec<Json> = resource
        .iter()
        .map(|(k, v)| attribute(k, &AttrValue::Str(v.clone())))
        .collect();
    json!({
        "resourceSpans": [{
            "resource": {"attributes": resource},
            "scopeSpans": [{
                "scope": {"name": SCOPE, "version": env!("CARGO_PKG_VERSION")},
                "spans": spans.iter().map(span).collect::<Vec<_>>(),
            }],
        }],
    })
}

fn span(s: &SpanData) -> Json {
    let mut out = Map::new();
    out.insert("traceId".into(), hex(&s.trace_id).into());
    out.insert("spanId".into(), hex(&s.span_id).into());
    if let Some(parent) = &s.parent_span_id {
        out.insert("parentSpanId".into(), hex(parent).into());
    }
    if let Some(state) = &s.trace_state {
        out.insert("traceState".into(), state.clone().into());
    }
    out.insert("name".into(), s.name.clone().into());
    // SPAN_KIND_INTERNAL = 1, SPAN_KIND_CLIENT = 3.
    let kind = match s.kind {
        SpanKind::Internal => 1,
        SpanKind::Client => 3,
    };
    out.insert("kind".into(), kind.into());
    out.insert("startTimeUnixNano".into(), s.start_ns.to_string().into());
    out.insert("endTimeUnixNano".into(), s.end_ns.to_string().into());
    out.insert("attributes".into(), attributes(&s.attributes));
    if !s.events.is_empty() {
        let events: Vec<Json> = s
            .events
            .iter()
            .map(|e| {
                json!({
                    "timeUnixNano": e.time_ns.to_string(),
                    "name": e.name,
                    "attributes": attributes(&e.attributes),
                })
            })
            .collect();
        out.insert("events".into(), events.into());
    }
    if let Some(message) = &s.error {
        // STATUS_CODE_ERROR = 2; unset (0) is left out.
        out.insert("status".into(), json!({"code": 2, "message": message}));
    }
    Json::Object(out)
}

fn attributes(attrs: &[Attr]) -> Json {
    Json::Array(attrs.iter().map(|(k, v)| attribute(k, v)).collect())
}

fn attribute(key: &str, value: &AttrValue) -> Json {
    json!({"key": key, "value": any_value(value)})
}

fn any_value(value: &AttrValue) -> Json {
    match value {
        AttrValue::Str(s) => json!({"stringValue": s}),
        AttrValue::Int(n) => json!({"intValue": n.to_string()}),
        AttrValue::Bool(b) => json!({"boolValue": b}),
        AttrValue::Strs(items) => json!({"arrayValue": {
            "values": items.iter().map(|s| json!({"stringValue": s})).collect::<Vec<_>>(),
        }}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_otlp_json_shapes() {
        let span = SpanData {
            trace_id: [0xab; 16],
            span_id: [1; 8],
            parent_span_id: Some([2; 8]),
            trace_state: None,
            name: "execute_tool read".into(),
            kind: SpanKind::Internal,
            start_ns: 1_700_000_000_000_000_000,
            end_ns: 1_700_000_000_000_000_001,
            attributes: vec![
                ("gen_ai.tool.name", "read".into()),
                ("toolwire.result.bytes", AttrValue::Int(12)),
                ("toolwire.result.ref", AttrValue::Strs(vec!["k".into()])),
            ],
            events: Vec::new(),
            error: Some("boom".into()),
        };
        let request = export_request(&[("service.name".into(), "t".into())], &[span]);
        let s = &request["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(s["traceId"], "abababababababababababababababab");
        assert_eq!(s["parentSpanId"], "0202020202020202");
        assert_eq!(s["startTimeUnixNano"], "1700000000000000000");
        assert_eq!(s["attributes"][1]["value"]["intValue"], "12");
        assert_eq!(
            s["attributes"][2]["value"]["arrayValue"]["values"][0]["stringValue"],
            "k"
        );
        assert_eq!(s["status"]["code"], 2);
        assert_eq!(
            request["resourceSpans"][0]["resource"]["attributes"][0]["key"],
            "service.name"
        );
    }
}
