//! toolwire-otel: OpenTelemetry traces of toolwire's turns, model requests and tool
//! calls, by the GenAI semantic conventions, exported over OTLP/HTTP (JSON).
//!
//! [`Otel::from_env`] reads the standard `OTEL_*` variables and is `None` unless an OTLP
//! endpoint is set. Spans are queued (bounded: when the queue is full they are dropped
//! and counted, never waited for) and sent in batches by a background task, so a slow or
//! dead collector never slows or fails a call. [`Otel::shutdown`] sends what is queued.

#![warn(missing_docs)]

mod config;
mod encode;
mod export;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{mpsc, oneshot};
use toolwire_core::TraceContext;
use toolwire_runtime::trace::{Attr, AttrValue, Span, SpanKind, Tracer, attr};

pub use config::{CONTENT_ENV, ConfigError, OtelConfig};
pub use encode::{SpanData, SpanEvent, export_request};
pub use export::ExportStats;

/// A running exporter and the tracer that feeds it.
pub struct Otel {
    tracer: Arc<OtlpTracer>,
    shutdown: std::sync::Mutex<Option<oneshot::Sender<()>>>,
    done: tokio::sync::Mutex<Option<tokio::task::JoinHandle<ExportStats>>>,
}

impl std::fmt::Debug for Otel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Otel").finish_non_exhaustive()
    }
}

impl Otel {
    /// Tracing as the environment asks: `Ok(None)` when it is off (no endpoint,
    /// `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`). Must run inside a Tokio
    /// runtime (the exporter is a task of it).
    pub fn from_env() -> Result<Option<Otel>, ConfigError> {
        Ok(OtelConfig::from_env()?.map(Otel::start))
    }

    /// Starts the exporter task for `config`.
    pub fn start(config: OtelConfig) -> Otel {
        let (tx, rx) = mpsc::channel(config.max_queue.max(1));
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let dropped = Arc::new(AtomicU64::new(0));
        let tracer = Arc::new(OtlpTracer {
            queue: tx,
            dropped: Arc::clone(&dropped),
            content: config.content,
        });
        let task = tokio::spawn(export::run(config, rx, shutdown_rx));
        Otel {
            tracer,
            shutdown: std::sync::Mutex::new(Some(shutdown_tx)),
            done: tokio::sync::Mutex::new(Some(task)),
        }
    }

    /// The tracer to hand to the executor.
    pub fn tracer(&self) -> Arc<dyn Tracer> {
        Arc::clone(&self.tracer) as Arc<dyn Tracer>
    }

    /// Sends the spans still queued and stops, waiting at most `within` (a collector
    /// that does not answer must not hold the process up). Spans ended after this are
    /// dropped and counted.
    pub async fn shutdown(&self, within: Duration) -> ExportStats {
        if let Some(tx) = self.shutdown.lock().ok().and_then(|mut s| s.take()) {
            let _ = tx.send(());
        }
        let task = self.done.lock().await.take();
        let mut stats = match task {
            Some(task) => match tokio::time::timeout(within, task).await {
                Ok(Ok(stats)) => stats,
                Ok(Err(e)) => ExportStats {
                    last_error: Some(format!("the exporter task failed: {e}")),
                    ..ExportStats::default()
                },
                Err(_) => ExportStats {
                    last_error: Some(format!(
                        "the collector did not take the last spans within {}s",
                        within.as_secs_f32()
                    )),
                    ..ExportStats::default()
                },
            },
            None => ExportStats::default(),
        };
        stats.dropped = self.tracer.dropped.load(Ordering::Relaxed);
        stats
    }
}

/// Makes spans and queues them when they end.
struct OtlpTracer {
    queue: mpsc::Sender<SpanData>,
    dropped: Arc<AtomicU64>,
    content: bool,
}

impl Tracer for OtlpTracer {
    fn start(
        &self,
        name: String,
        kind: SpanKind,
        parent: Option<&TraceContext>,
        attributes: Vec<Attr>,
    ) -> Box<dyn Span> {
        let span_id = random_span_id();
        let context = match parent {
            Some(p) => TraceContext {
                trace_id: p.trace_id,
                span_id,
                sampled: p.sampled,
                state: p.state.clone(),
            },
            None => TraceContext {
                trace_id: *uuid::Uuid::new_v4().as_bytes(),
                span_id,
                sampled: true,
                state: None,
            },
        };
        Box::new(RecordingSpan {
            data: SpanData {
                trace_id: context.trace_id,
                span_id,
                parent_span_id: parent.map(|p| p.span_id),
                trace_state: context.state.clone(),
                name,
                kind,
                start_ns: now_ns(),
                end_ns: 0,
                attributes,
                events: Vec::new(),
                error: None,
            },
            // A parent that is not sampled (a caller's choice) is followed: nothing sent.
            recording: context.sampled,
            context,
            content: self.content,
            queue: self.queue.clone(),
            dropped: Arc::clone(&self.dropped),
        })
    }

    fn records_content(&self) -> bool {
        self.content
    }
}

/// An open span; it is queued for export when dropped.
struct RecordingSpan {
    data: SpanData,
    context: TraceContext,
    recording: bool,
    /// Whether content is recorded: without it a failure's status message is its
    /// `error.type` alone.
    content: bool,
    queue: mpsc::Sender<SpanData>,
    dropped: Arc<AtomicU64>,
}

/// Attributes one span keeps at most: a hostile tool cannot grow a span without bound.
const MAX_ATTRIBUTES: usize = 128;
/// Events one span keeps at most.
const MAX_EVENTS: usize = 128;

impl Span for RecordingSpan {
    fn context(&self) -> &TraceContext {
        &self.context
    }

    fn set(&mut self, key: &'static str, value: AttrValue) {
        if let Some(slot) = self.data.attributes.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
        } else if self.data.attributes.len() < MAX_ATTRIBUTES {
            self.data.attributes.push((key, value));
        }
    }

    fn event(&mut self, name: &'static str, attributes: Vec<Attr>) {
        if self.data.events.len() < MAX_EVENTS {
            self.data.events.push(SpanEvent {
                name,
                time_ns: now_ns(),
                attributes,
            });
        }
    }

    fn fail(&mut self, error_type: &str, message: &str) {
        self.set(attr::ERROR_TYPE, error_type.into());
        // An error's text is content: a tool's message quotes what it read or was given
        // (a customer's row, a path, a provider's echo of the prompt), which content
        // capture off keeps out of the collector. The type alone still says what failed.
        let message = if self.content { message } else { error_type };
        self.data.error = Some(message.chars().take(1024).collect());
    }
}

impl Drop for RecordingSpan {
    fn drop(&mut self) {
        if !self.recording {
            return;
        }
        self.data.end_ns = now_ns().max(self.data.start_ns);
        let data = std::mem::replace(
            &mut self.data,
            SpanData {
                trace_id: [0; 16],
                span_id: [0; 8],
                parent_span_id: None,
                trace_state: None,
                name: String::new(),
                kind: SpanKind::Internal,
                start_ns: 0,
                end_ns: 0,
                attributes: Vec::new(),
                events: Vec::new(),
                error: None,
            },
        );
        // Never wait: a full queue (a collector that cannot keep up) loses the span.
        if self.queue.try_send(data).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn random_span_id() -> [u8; 8] {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let mut id = [0u8; 8];
    // Bytes 0-5 and 9-10 of a v4 UUID are random (6 and 8 hold its version and variant).
    id[..6].copy_from_slice(&bytes[..6]);
    id[6..].copy_from_slice(&bytes[9..11]);
    if id == [0; 8] {
        id[7] = 1;
    }
    id
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
