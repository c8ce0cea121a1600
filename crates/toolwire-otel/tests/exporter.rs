//! The exporter against real sockets: spans arrive as OTLP/JSON in batches with the
//! configured headers; a collector that is down or never answers costs the spans, counted,
//! and never the caller's time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolwire_otel::{Otel, OtelConfig};
use toolwire_runtime::trace::{AttrValue, SpanKind};

fn config(endpoint: String) -> OtelConfig {
    OtelConfig {
        endpoint,
        headers: vec![("x-key".into(), "secret".into())],
        resource: vec![("service.name".into(), "unit".into())],
        timeout: Duration::from_secs(2),
        max_queue: 64,
        max_batch: 4,
        delay: Duration::from_millis(50),
        content: false,
    }
}

/// A collector answering 200 to each request, keeping the requests' heads and bodies.
async fn collector() -> (String, Arc<Mutex<Vec<(String, Json)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let keep = Arc::clone(&keep);
            tokio::spawn(async move {
                loop {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 8192];
                    let (head, body) = loop {
                        let n = socket.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf).into_owned();
                        let Some(end) = text.find("\r\n\r\n") else {
                            continue;
                        };
                        let len: usize = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break (text[..end].to_owned(), buf[end + 4..end + 4 + len].to_vec());
                        }
                    };
                    keep.lock()
                        .unwrap()
                        .push((head, serde_json::from_slice(&body).unwrap()));
                    let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
                    socket.write_all(reply.as_bytes()).await.unwrap();
                }
            });
        }
    });
    (url, seen)
}

fn spans_in(request: &Json) -> &Vec<Json> {
    request["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
}

#[tokio::test]
async fn spans_arrive_in_batches_with_headers_and_parents() {
    let (url, seen) = collector().await;
    let otel = Otel::start(config(url));
    let tracer = otel.tracer();
    let parent = tracer.start("invoke_agent t".into(), SpanKind::Internal, None, vec![]);
    for i in 0..9u64 {
        let mut span = tracer.start(
            format!("execute_tool t{i}"),
            SpanKind::Internal,
            Some(parent.context()),
            vec![("gen_ai.tool.name", AttrValue::from("t"))],
        );
        span.set("toolwire.result.bytes", i.into());
        if i == 3 {
            span.fail("timeout", "timed out after 1s");
        }
    }
    let (trace, root) = (
        parent.context().trace_id_hex(),
        parent.context().span_id_hex(),
    );
    drop(parent);
    let stats = otel.shutdown(Duration::from_secs(5)).await;
    assert_eq!(
        (stats.exported, stats.failed, stats.dropped),
        (10, 0, 0),
        "{stats:?}"
    );
    let requests = seen.lock().unwrap().clone();
    assert!(
        requests.len() >= 3,
        "batches of at most 4: {}",
        requests.len()
    );
    let spans: Vec<&Json> = requests.iter().flat_map(|(_, r)| spans_in(r)).collect();
    assert_eq!(spans.len(), 10);
    for (head, request) in &requests {
        assert!(
            head.to_ascii_lowercase().contains("x-key: secret"),
            "{head}"
        );
        assert!(head.starts_with("POST /v1/traces "), "{head}");
        assert!(spans_in(request).len() <= 4);
        assert_eq!(
            request["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"],
            "unit"
        );
    }
    for s in &spans {
        assert_eq!(s["traceId"], trace.as_str());
        if s["name"] != "invoke_agent t" {
            assert_eq!(s["parentSpanId"], root.as_str());
        }
    }
    let failed = spans
        .iter()
        .find(|s| s["name"] == "execute_tool t3")
        .unwrap();
    assert_eq!(failed["status"]["code"], 2);
    assert!(
        failed["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["key"] == "error.type" && a["value"]["stringValue"] == "timeout")
    );
}

#[tokio::test]
async fn a_collector_that_is_down_loses_spans_not_time() {
    // Bound, then closed: nothing listens there any more.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let otel = Otel::start(config(format!("http://127.0.0.1:{port}/v1/traces")));
    let tracer = otel.tracer();
    for _ in 0..5 {
        drop(tracer.start("s".into(), SpanKind::Internal, None, vec![]));
    }
    let stats = otel.shutdown(Duration::from_secs(5)).await;
    assert_eq!(stats.exported, 0);
    assert_eq!(stats.failed + stats.dropped, 5, "{stats:?}");
    assert!(
        stats
            .last_error
            .unwrap()
            .contains("could not reach the collector")
    );
}

#[tokio::test]
async fn a_collector_that_never_answers_never_blocks_a_span() {
    // Accepts connections and reads nothing back: every export hangs until its timeout.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut cfg = config(url);
    cfg.max_queue = 8;
    cfg.timeout = Duration::from_secs(30);
    let otel = Otel::start(cfg);
    let tracer = otel.tracer();
    let started = Instant::now();
    for _ in 0..1000 {
        drop(tracer.start("s".into(), SpanKind::Internal, None, vec![]));
        tokio::task::yield_now().await;
    }
    // A thousand spans end at once, whatever the collector does.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let started = Instant::now();
    let stats = otel.shutdown(Duration::from_millis(300)).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // The full queue dropped most of them, counted.
    assert!(stats.dropped > 900, "{stats:?}");
    assert!(stats.last_error.is_some(), "{stats:?}");
}

/// The status of a failed tool call's span, as the collector received it.
async fn failed_span_status(content: bool) -> Json {
    let (url, seen) = collector().await;
    let mut cfg = config(url);
    cfg.content = content;
    let otel = Otel::start(cfg);
    let tracer = otel.tracer();
    let result = toolwire_core::ToolResult::error_with_code(
        toolwire_core::CallRef::new("call_1", "lookup"),
        "not_found",
        "no row for customer alice@example.com, card 4111",
    );
    let mut span = tracer.start(
        "execute_tool lookup".into(),
        SpanKind::Internal,
        None,
        vec![],
    );
    toolwire_runtime::trace::record_result(span.as_mut(), &result, tracer.records_content());
    drop(span);
    let stats = otel.shutdown(Duration::from_secs(5)).await;
    assert_eq!(stats.exported, 1, "{stats:?}");
    let requests = seen.lock().unwrap().clone();
    spans_in(&requests[0].1)[0]["status"].clone()
}

#[tokio::test]
async fn a_failing_tools_error_text_is_content() {
    // Content capture off (the default): the status says what kind of error, not what
    // the tool said; its text can carry the very data capture-off keeps out.
    let status = failed_span_status(false).await;
    assert_eq!(status["code"], 2, "{status}");
    assert_eq!(status["message"], "not_found", "{status}");
    // Capture on: the tool's own words.
    let status = failed_span_status(true).await;
    assert_eq!(status["code"], 2, "{status}");
    assert_eq!(
        status["message"], "no row for customer alice@example.com, card 4111",
        "{status}"
    );
}
