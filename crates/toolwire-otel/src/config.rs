//! The exporter's settings from the standard OpenTelemetry variables (`OTEL_*`): off
//! unless an OTLP endpoint is given, and off whatever else is set when the SDK or the
//! trace exporter is disabled.

use std::time::Duration;

/// Where and how spans are sent.
#[derive(Debug, Clone, PartialEq)]
pub struct OtelConfig {
    /// The full URL spans are POSTed to (`…/v1/traces`).
    pub endpoint: String,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. an API key.
    pub headers: Vec<(String, String)>,
    /// `service.name` and the other resource attributes.
    pub resource: Vec<(String, String)>,
    /// Per export request (`OTEL_EXPORTER_OTLP_TIMEOUT`, default 10 s).
    pub timeout: Duration,
    /// Spans waiting to be sent at most; more are dropped and counted
    /// (`OTEL_BSP_MAX_QUEUE_SIZE`, default 2048).
    pub max_queue: usize,
    /// Spans per request at most (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, default 512).
    pub max_batch: usize,
    /// How long a partial batch waits (`OTEL_BSP_SCHEDULE_DELAY`, default 5 s).
    pub delay: Duration,
    /// Tool arguments and results recorded (opt-in content:
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
    pub content: bool,
}

/// Why the variables could not be followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The variable that turns on recording tool arguments and results, as the GenAI
/// instrumentations name it.
pub const CONTENT_ENV: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

impl OtelConfig {
    /// From the process environment.
    pub fn from_env() -> Result<Option<OtelConfig>, ConfigError> {
        OtelConfig::from_vars(|name| std::env::var(name).ok())
    }

    /// From `var` (a name to its value): `None` when tracing is off.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OtelConfig>, ConfigError> {
        let get = |name: &str| {
            var(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        match get("OTEL_TRACES_EXPORTER").as_deref() {
            None | Some("otlp") => {}
            Some("none") => return Ok(None),
            Some(other) => {
                return Err(ConfigError(format!(
                    "OTEL_TRACES_EXPORTER={other}: toolwire exports traces over otlp only (or none)"
                )));
            }
        }
        let protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(p) = protocol.filter(|p| p != "http/json" && p != "http/protobuf") {
            // Any OTLP/HTTP receiver takes JSON too; gRPC is another port and protocol.
            return Err(ConfigError(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={p}: toolwire sends OTLP over HTTP (http/json)"
            )));
        }
        let endpoint = match (
            get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            get("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            // The signal's own endpoint is used as given; the base one gets the path.
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(ConfigError(format!(
                "OTLP endpoint {endpoint:?} is not an http(s) URL"
            )));
        }
        let mut headers = pairs(get("OTEL_EXPORTER_OTLP_HEADERS").as_deref());
        headers.extend(pairs(get("OTEL_EXPORTER_OTLP_TRACES_HEADERS").as_deref()));
        let mut resource = pairs(get("OTEL_RESOURCE_ATTRIBUTES").as_deref());
        resource.retain(|(k, _)| k != "service.name");
        let service = get("OTEL_SERVICE_NAME")
            .or_else(|| {
                pairs(get("OTEL_RESOURCE_ATTRIBUTES").as_deref())
                    .into_iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v)
            })
            .unwrap_or_else(|| "toolwire".to_owned());
        resource.insert(0, ("service.name".to_owned(), service));
        let millis = |name: &str, default: u64| {
            get(name)
                .and_then(|v| v.parse::<u64>().ok())
                .map_or(Duration::from_millis(default), Duration::from_millis)
        };
        let count = |name: &str, default: usize| {
            get(name)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        let timeout = get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .map(|_| millis("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 10_000))
            .unwrap_or_else(|| millis("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000));
        let max_queue = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048);
        Ok(Some(OtelConfig {
            endpoint,
            headers,
            resource,
            timeout,
            max_queue,
            max_batch: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512).min(max_queue),
            delay: millis("OTEL_BSP_SCHEDULE_DELAY", 5_000),
            content: get(CONTENT_ENV).is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1"),
        }))
    }
}

/// `k1=v1,k2=v2` with percent-encoded values (the W3C Baggage form the variables use);
/// malformed members are skipped.
fn pairs(text: Option<&str>) -> Vec<(String, String)> {
    let Some(text) = text else { return Vec::new() };
    text.split(',')
        .filter_map(|member| {
            let (k, v) = member.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (percent_decode(k), percent_decode(v.trim())))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let (h, l) = (hex(h).unwrap_or(0), hex(l).unwrap_or(0));
                out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Option<OtelConfig>, ConfigError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        OtelConfig::from_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn off_without_an_endpoint_or_when_disabled() {
        assert_eq!(config(&[]).unwrap(), None);
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")];
        assert!(config(&on).unwrap().is_some());
        let mut off = on.to_vec();
        off.push(("OTEL_SDK_DISABLED", "true"));
        assert_eq!(config(&off).unwrap(), None);
        let mut none = on.to_vec();
        none.push(("OTEL_TRACES_EXPORTER", "none"));
        assert_eq!(config(&none).unwrap(), None);
        let mut zipkin = on.to_vec();
        zipkin.push(("OTEL_TRACES_EXPORTER", "zipkin"));
        assert!(config(&zipkin).is_err());
    }

    #[test]
    fn endpoints_headers_and_service() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x=1,broken"),
            ("OTEL_SERVICE_NAME", "agent-7"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(
            c.headers,
            [("api-key".into(), "a b".into()), ("x".into(), "1".into())]
        );
        assert_eq!(c.resource[0], ("service.name".into(), "agent-7".into()));
        assert_eq!(c.resource[1].0, "deployment.environment");
        assert!(!c.content);
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://here:9999/custom",
            ),
            (CONTENT_ENV, "true"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint, "http://here:9999/custom");
        assert_eq!(c.resource[0].1, "toolwire");
        assert!(c.content);
        assert!(config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")]).is_err());
    }
}
