//! The HTTP gateway's listener, in process over a real Host and real sockets: every
//! request needs the token (401 without it or with another, before anything else is
//! read); at the connection cap a silent connection gives its place to a real request,
//! and only when every place has a request in flight is a new one refused (`503` at
//! once); a head sent slowly, or none, is dropped by the header timeout, and a kept-alive
//! connection by the idle timeout. Timeouts are set short, so each test takes seconds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwire_gateway::{Gateway, HostProfile, HttpSettings};

const TOKEN: &str = "0123456789abcdef-gateway-test-token";

/// A gateway served over HTTP with `configure`d settings.
struct Served {
    _dirs: (TempDir, TempDir),
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Served {
    async fn start(configure: impl FnOnce(&mut HttpSettings)) -> Self {
        let data = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let host = toolwire_agent::Host::builder()
            .data_dir(data.path())
            .workspace(workspace.path())
            .build()
            .await
            .unwrap();
        let gateway = Gateway::new(host, HostProfile::named("generic").unwrap());
        let mut settings = HttpSettings::new(TOKEN.to_owned());
        configure(&mut settings);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            toolwire_gateway::serve_http_until(gateway, listener, settings, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Served {
            _dirs: (data, workspace),
            addr,
            stop: Some(stop),
            task,
        }
    }

    /// Raw connections that send nothing.
    async fn silent(&self, n: usize) -> Vec<TcpStream> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(TcpStream::connect(self.addr).await.unwrap());
        }
        out
    }

    /// Raw connections each with a request in flight: a head (with the token) whose body
    /// never comes.
    async fn busy(&self, n: usize) -> Vec<TcpStream> {
        let mut out = Vec::new();
        for _ in 0..n {
            let mut conn = TcpStream::connect(self.addr).await.unwrap();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: 100\r\n\r\n{{",
                self.addr
            );
            conn.write_all(head.as_bytes()).await.unwrap();
            out.push(conn);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        out
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .expect("the gateway stops")
            .unwrap();
    }
}

/// An MCP `initialize`, with `authorization` (a whole header line, or nothing).
fn initialize(addr: SocketAddr, authorization: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"limits-test","version":"1"}}}"#;
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{authorization}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The status of the answer to `request` on a new connection, and its head.
async fn status_of(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let (status, head, _) = read_head(&mut conn).await;
    (status, head)
}

/// An answer's status and head (lowercased), and the bytes read past it.
async fn read_head(stream: &mut TcpStream) -> (u16, String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(
            n > 0,
            "closed mid-head: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    (head[9..12].parse().unwrap(), head, buf[end..].to_vec())
}

/// An answer of known length, read whole: its status.
async fn read_answer(stream: &mut TcpStream) -> u16 {
    let (status, head, mut rest) = read_head(stream).await;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a content-length")
        .trim()
        .parse()
        .unwrap();
    let mut chunk = [0u8; 4096];
    while rest.len() < length {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed mid-body");
        rest.extend_from_slice(&chunk[..n]);
    }
    status
}

/// How long until the gateway closes `stream`, at most `limit`.
async fn time_to_close(stream: &mut TcpStream, limit: Duration) -> Duration {
    let started = Instant::now();
    let mut sink = [0u8; 1024];
    tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("the gateway closes the connection");
    started.elapsed()
}

#[tokio::test]
async fn every_request_needs_the_token() {
    let s = Served::start(|_| {}).await;
    for authorization in [
        String::new(),
        "Authorization: Bearer not-the-token-at-all\r\n".to_owned(),
        format!("Authorization: Bearer {TOKEN}x\r\n"),
        format!("Authorization: Basic {TOKEN}\r\n"),
    ] {
        let (status, head) = status_of(s.addr, &initialize(s.addr, &authorization)).await;
        assert_eq!(status, 401, "{authorization:?}: {head}");
        assert!(
            head.contains("www-authenticate: bearer"),
            "{authorization:?}: {head}"
        );
    }
    // Every path, not only /mcp.
    let other = format!("GET /elsewhere HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr);
    assert_eq!(status_of(s.addr, &other).await.0, 401);
    let with = format!("Authorization: Bearer {TOKEN}\r\n");
    let (status, head) = status_of(s.addr, &initialize(s.addr, &with)).await;
    assert_eq!(status, 200, "{head}");
    s.stop().await;

    // No gateway without a token worth the name.
    let data = tempfile::tempdir().unwrap();
    let host = toolwire_agent::Host::builder()
        .data_dir(data.path())
        .workspace(data.path())
        .build()
        .await
        .unwrap();
    let gateway = Gateway::new(host, HostProfile::named("generic").unwrap());
    let err = toolwire_gateway::http_router(gateway, "short").unwrap_err();
    assert!(
        matches!(err, toolwire_gateway::GatewayError::WeakToken),
        "{err}"
    );
    assert!(err.to_string().contains("at least 16 characters"), "{err}");
}

/// At the cap, connections that have sent nothing give their places to real requests
/// (issue 49: 600 silent sockets reopened every 5 s kept every request at 503); when
/// every place has a request in flight, a new connection gets 503 at once.
#[tokio::test]
async fn at_the_cap_silent_connections_give_way_and_busy_ones_do_not() {
    let s = Served::start(|c| {
        c.max_connections = 4;
        c.header_read_timeout = Duration::from_secs(20);
    })
    .await;
    let with = format!("Authorization: Bearer {TOKEN}\r\n");
    let mut silent = s.silent(4).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    for round in 0..6 {
        let started = Instant::now();
        let (status, head) = status_of(s.addr, &initialize(s.addr, &with)).await;
        assert_eq!(status, 200, "round {round}: {head}");
        assert!(started.elapsed() < Duration::from_secs(1), "round {round}");
        silent.extend(s.silent(2).await);
    }
    drop(silent);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut busy = s.busy(4).await;
    let started = Instant::now();
    let (status, head) = status_of(s.addr, &initialize(s.addr, &with)).await;
    assert_eq!(status, 503, "{head}");
    assert!(head.contains("retry-after: 5"), "{head}");
    assert!(started.elapsed() < Duration::from_secs(1));
    // A place freed is a place taken again.
    drop(busy.pop());
    let mut answered = false;
    for _ in 0..40 {
        if status_of(s.addr, &initialize(s.addr, &with)).await.0 == 200 {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(answered, "a closed connection gives its place back");
    drop(busy);
    s.stop().await;
}

#[tokio::test]
async fn a_slow_or_silent_client_is_dropped_by_the_header_timeout() {
    let s = Served::start(|c| {
        c.header_read_timeout = Duration::from_millis(600);
        c.idle_timeout = Duration::from_secs(20);
    })
    .await;
    // Half a head, then nothing (a half-sent head stayed open 71 s and more).
    let mut half = TcpStream::connect(s.addr).await.unwrap();
    half.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", s.addr).as_bytes())
        .await
        .unwrap();
    let took = time_to_close(&mut half, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    // Nothing at all.
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    let took = time_to_close(&mut silent, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_by_the_idle_timeout() {
    let s = Served::start(|c| {
        c.header_read_timeout = Duration::from_millis(400);
        c.idle_timeout = Duration::from_millis(1500);
    })
    .await;
    // Answers of known length on one connection: 401s.
    let request = format!("GET /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr);
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_answer(&mut conn).await, 401);
    // Idle for longer than the header timeout: still open, and serving.
    tokio::time::sleep(Duration::from_millis(800)).await;
    conn.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_answer(&mut conn).await, 401);
    // Then closed once idle for the idle timeout.
    let took = time_to_close(&mut conn, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(1200) && took < Duration::from_millis(3000),
        "closed after {took:?}"
    );
    s.stop().await;
}
