//! A real server on a free loopback port over a Host in temp dirs, and a client for it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::path::Path;

use reqwest::{Client, RequestBuilder, Response};
use serde_json::{Value as Json, json};
use tempfile::TempDir;
use tokio::sync::oneshot;
use toolwire_agent::{Host, ProviderSettings};
use toolwire_server::{ServeConfig, Server};

pub(crate) struct Running {
    pub addr: SocketAddr,
    pub base: String,
    pub host: Host,
    pub client: Client,
    pub token: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path.trim_start_matches('/'))
    }

    fn auth(&self, b: RequestBuilder) -> RequestBuilder {
        match &self.token {
            Some(t) => b.bearer_auth(t),
            None => b,
        }
    }

    pub(crate) fn get(&self, path: &str) -> RequestBuilder {
        self.auth(self.client.get(self.url(path)))
    }

    pub(crate) fn post(&self, path: &str, body: Json) -> RequestBuilder {
        self.auth(self.client.post(self.url(path)).json(&body))
    }

    /// Posts `body` as JSON and gives the answer.
    pub(crate) async fn send_post(&self, path: &str, body: Json) -> Response {
        self.post(path, body).send().await.unwrap()
    }

    pub(crate) fn delete(&self, path: &str) -> RequestBuilder {
        self.auth(self.client.delete(self.url(path)))
    }

    pub(crate) async fn json(&self, path: &str) -> Json {
        self.get(path).send().await.unwrap().json().await.unwrap()
    }

    /// A new session's id.
    pub(crate) async fn session(&self) -> String {
        let r = self
            .post("/api/sessions", json!({"title": "test"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Json>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Stops the server, waiting for it to store what it was doing.
    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

pub(crate) async fn host_in(data: &Path, workspace: &Path) -> Host {
    Host::builder()
        .data_dir(data)
        .workspace(workspace)
        .build()
        .await
        .unwrap()
}

/// A server over `data` with its workspace in `workspace`.
pub(crate) async fn start_in(
    data: &Path,
    workspace: &Path,
    token: Option<&str>,
    provider: Option<ProviderSettings>,
) -> Running {
    let host = host_in(data, workspace).await;
    start_host(host, token, provider).await
}

/// A server over a host built by the caller (stores of its own, e.g. wrapped to count).
pub(crate) async fn start_host(
    host: Host,
    token: Option<&str>,
    provider: Option<ProviderSettings>,
) -> Running {
    let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap());
    config.token = token.map(str::to_owned);
    config.provider = provider;
    config.shutdown_grace = std::time::Duration::from_millis(500);
    let server = Server::bind(host.clone(), config).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server
            .run(async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running {
        addr,
        base: format!("http://{addr}/"),
        host,
        client: Client::new(),
        token: token.map(str::to_owned),
        stop: Some(stop),
        task: Some(task),
    }
}

pub(crate) struct Fixture {
    pub dirs: (TempDir, TempDir),
    pub server: Running,
}

/// A server in fresh temp dirs.
pub(crate) async fn start() -> Fixture {
    let data = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let server = start_in(data.path(), workspace.path(), None, None).await;
    Fixture {
        dirs: (data, workspace),
        server,
    }
}

pub(crate) async fn error_code(r: Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: Json = r.json().await.unwrap();
    (
        status,
        body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// Reads `n` events from an SSE response body (or fewer if it ends), as JSON.
pub(crate) async fn sse_events(response: Response, n: usize) -> Vec<Json> {
    use futures::StreamExt;
    let mut body = response.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    while out.len() < n {
        let Some(Ok(chunk)) = body.next().await else {
            break;
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            if let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) {
                out.push(serde_json::from_str(data).unwrap());
                if out.len() == n {
                    return out;
                }
            }
        }
    }
    out
}

/// Waits until `check` holds of the session's events (or fails after 10 s).
pub(crate) async fn wait_for(
    server: &Running,
    session: &str,
    check: impl Fn(&[Json]) -> bool,
) -> Vec<Json> {
    for _ in 0..200 {
        let events = server
            .host
            .stores()
            .events()
            .events_since(session, 0)
            .await
            .unwrap();
        let events: Vec<Json> = events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        if check(&events) {
            return events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the session's events never met the condition");
}
