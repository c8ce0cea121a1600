//! The background exporter: takes ended spans off the queue and POSTs them in batches
//! (full ones at once, partial ones after the schedule delay), and the rest at shutdown.
//! A failed request loses its batch (counted); it is never retried in the way of newer
//! spans.

use tokio::sync::{mpsc, oneshot};

use crate::config::OtelConfig;
use crate::encode::{SpanData, export_request};

/// What the exporter did, for the process to report when it stops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportStats {
    /// Spans the collector accepted.
    pub exported: u64,
    /// Spans lost in requests that failed.
    pub failed: u64,
    /// Spans dropped because the queue was full (or the exporter had stopped).
    pub dropped: u64,
    /// The last export failure, said once at exit.
    pub last_error: Option<String>,
}

pub(crate) async fn run(
    config: OtelConfig,
    mut rx: mpsc::Receiver<SpanData>,
    mut shutdown: oneshot::Receiver<()>,
) -> ExportStats {
    let client = reqwest::Client::builder()
        .timeout(config.timeout)
        .build()
        .unwrap_or_default();
    let exporter = Exporter {
        client,
        config,
        stats: ExportStats::default(),
    };
    exporter.serve(&mut rx, &mut shutdown).await
}

struct Exporter {
    client: reqwest::Client,
    config: OtelConfig,
    stats: ExportStats,
}

impl Exporter {
    async fn serve(
        mut self,
        rx: &mut mpsc::Receiver<SpanData>,
        shutdown: &mut oneshot::Receiver<()>,
    ) -> ExportStats {
        let max = self.config.max_batch.max(1);
        let mut batch: Vec<SpanData> = Vec::with_capacity(max);
        let mut tick =
            tokio::time::interval(self.config.delay.max(std::time::Duration::from_millis(1)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                _ = &mut *shutdown => break,
                n = rx.recv_many(&mut batch, max) => {
                    if n == 0 {
                        break;
                    }
                    if batch.len() >= max {
                        self.send(&mut batch).await;
                    }
                }
                _ = tick.tick() => {
                    if !batch.is_empty() {
                        self.send(&mut batch).await;
                    }
                }
            }
        }
        // What was queued before the shutdown goes out now.
        rx.close();
        while let Some(span) = rx.recv().await {
            batch.push(span);
            if batch.len() >= max {
                self.send(&mut batch).await;
            }
        }
        if !batch.is_empty() {
            self.send(&mut batch).await;
        }
        self.stats
    }

    async fn send(&mut self, batch: &mut Vec<SpanData>) {
        let count = batch.len() as u64;
        let body = export_request(&self.config.resource, batch);
        batch.clear();
        let mut request = self
            .client
            .post(&self.config.endpoint)
            .header("content-type", "application/json");
        for (k, v) in &self.config.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let outcome = match serde_json::to_vec(&body) {
            Ok(bytes) => request.body(bytes).send().await,
            Err(e) => {
                self.fail(count, format!("could not encode spans: {e}"));
                return;
            }
        };
        match outcome {
            Ok(response) if response.status().is_success() => self.stats.exported += count,
            Ok(response) => {
                let status = response.status();
                self.fail(count, format!("the collector answered HTTP {status}"));
            }
            Err(e) => self.fail(count, format!("could not reach the collector: {e}")),
        }
    }

    fn fail(&mut self, count: u64, why: String) {
        self.stats.failed += count;
        self.stats.last_error = Some(why);
    }
}
