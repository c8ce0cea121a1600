//! Slow and idle clients cannot wear the server down: at the connection cap a new
//! connection takes the place of a silent or idle one, or gets `503` at once when every
//! one has a request in flight; a body over the limit gets `413`, chunked or not; a client that sends its head slowly, or nothing, is
//! dropped by the header-read timeout; a kept-alive connection by the idle timeout; idle
//! connections leave requests answered; event feeds are capped (`503`, `Retry-After`);
//! a feed ends when its session is deleted; an unspecified address answers to the
//! machine's own names. Timeouts are set short here, so each test takes a second or two.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value as Json, json};
use support::{error_code, host_in};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use toolwire_server::{Guard, ServeConfig, Server};

const TOKEN: &str = "0123456789abcdef-test-token";

/// A server started with `configure`d limits.
struct Limited {
    _dirs: (TempDir, TempDir),
    addr: SocketAddr,
    client: reqwest::Client,
    token: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Limited {
    async fn start(configure: impl FnOnce(&mut ServeConfig)) -> Self {
        let data = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let host = host_in(data.path(), workspace.path()).await;
        let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap());
        config.shutdown_grace = Duration::from_millis(500);
        configure(&mut config);
        let token = config.token.clone();
        let server = Server::bind(host, config).await.unwrap();
        let mut addr = server.local_addr().unwrap();
        if addr.ip().is_unspecified() {
            addr.set_ip([127, 0, 0, 1].into());
        }
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server
                .run(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Limited {
            _dirs: (data, workspace),
            addr,
            // No pooled connection carried from one request to the next: each request
            // here is about whether a new connection is served.
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
            token,
            stop: Some(stop),
            task,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        let request = self.client.get(self.url(path));
        match &self.token {
            Some(t) => request.bearer_auth(t),
            None => request,
        }
    }

    async fn session(&self) -> String {
        let r = self
            .client
            .post(self.url("/api/sessions"))
            .json(&json!({"title": "t"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Json>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Raw connections that send nothing.
    async fn idle(&self, n: usize) -> Vec<TcpStream> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(TcpStream::connect(self.addr).await.unwrap());
        }
        out
    }

    /// Raw connections each with a request in flight: a head whose body never comes.
    async fn busy(&self, n: usize) -> Vec<TcpStream> {
        let mut out = Vec::new();
        for _ in 0..n {
            let mut conn = TcpStream::connect(self.addr).await.unwrap();
            let head = format!(
                "POST /api/sessions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
                 Content-Length: 100\r\n\r\n{{",
                self.addr
            );
            conn.write_all(head.as_bytes()).await.unwrap();
            out.push(conn);
        }
        // Their heads parsed: in flight.
        tokio::time::sleep(Duration::from_millis(100)).await;
        out
    }

    async fn stop(mut self) -> Duration {
        let started = Instant::now();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .expect("the server stops")
            .unwrap();
        started.elapsed()
    }
}

/// A whole HTTP/1.1 answer of known length: (status, head, body).
async fn read_answer(stream: &mut TcpStream) -> (u16, String, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
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
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head[9..12].parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a content-length")
        .trim()
        .parse()
        .unwrap();
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed mid-body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned();
    (status, head, body)
}

/// How long until the server closes `stream` (reads end or fail), at most `limit`.
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
    .expect("the server closes the connection");
    started.elapsed()
}

fn request(addr: SocketAddr, path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n")
}

/// Every place taken by a request in flight: nothing can give way.
#[tokio::test]
async fn past_the_connection_cap_a_new_connection_gets_503_at_once_and_is_closed() {
    let s = Limited::start(|c| {
        c.max_connections = 4;
        c.header_read_timeout = Duration::from_secs(20);
    })
    .await;
    let mut busy = s.busy(4).await;
    // The fifth: answered as soon as its request is in, then closed.
    let started = Instant::now();
    let mut fifth = TcpStream::connect(s.addr).await.unwrap();
    fifth
        .write_all(request(s.addr, "/api/info").as_bytes())
        .await
        .unwrap();
    let (status, head, body) =
        tokio::time::timeout(Duration::from_secs(2), read_answer(&mut fifth))
            .await
            .expect("an immediate answer");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(status, 503);
    assert!(head.contains("\r\nretry-after: 5\r\n"), "{head}");
    assert!(head.contains("\r\nconnection: close\r\n"), "{head}");
    let body: Json = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "too_many_connections");
    time_to_close(&mut fifth, Duration::from_secs(2)).await;
    // An HTTP client sees the same, with its request sent.
    let r = s.get("/api/info").send().await.unwrap();
    assert_eq!(r.headers()["retry-after"], "5");
    assert_eq!(error_code(r).await, (503, "too_many_connections".into()));
    // A slot freed is a slot taken again.
    drop(busy.pop());
    let mut answered = false;
    for _ in 0..40 {
        if s.get("/api/info").send().await.unwrap().status() == 200 {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(answered, "a closed connection gives its slot back");
    // Stopping does not wait for idle connections.
    drop(busy);
    let _idle = s.idle(3).await;
    assert!(s.stop().await < Duration::from_secs(3));
}

#[tokio::test]
async fn a_slow_or_silent_client_is_dropped_by_the_header_timeout() {
    let s = Limited::start(|c| {
        c.header_read_timeout = Duration::from_millis(600);
        c.idle_timeout = Duration::from_secs(20);
    })
    .await;
    // Slowloris: a head that never ends, one more header line every 100 ms.
    let stream = TcpStream::connect(s.addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = format!("GET /api/info HTTP/1.1\r\nHost: {}\r\n", s.addr);
    writer.write_all(head.as_bytes()).await.unwrap();
    let dribble = tokio::spawn(async move {
        for i in 0.. {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer
                .write_all(format!("x-slow-{i}: 1\r\n").as_bytes())
                .await
                .is_err()
            {
                return i;
            }
        }
        unreachable!()
    });
    let started = Instant::now();
    let mut sink = [0u8; 256];
    let end = tokio::time::timeout(Duration::from_secs(5), reader.read(&mut sink))
        .await
        .expect("dropped within the header timeout");
    let took = started.elapsed();
    assert!(matches!(end, Ok(0) | Err(_)), "{end:?}");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(2000),
        "dropped after {took:?}"
    );
    dribble.abort();
    // A connection that sends nothing at all.
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    let took = time_to_close(&mut silent, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    // A slow but timely head is answered.
    let mut timely = TcpStream::connect(s.addr).await.unwrap();
    let whole = request(s.addr, "/api/info");
    let (first, rest) = whole.split_at(20);
    timely.write_all(first.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    timely.write_all(rest.as_bytes()).await.unwrap();
    assert_eq!(read_answer(&mut timely).await.0, 200);
    s.stop().await;
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_by_the_idle_timeout_not_the_header_one() {
    let s = Limited::start(|c| {
        c.header_read_timeout = Duration::from_millis(400);
        c.idle_timeout = Duration::from_millis(1500);
    })
    .await;
    let mut conn = TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(request(s.addr, "/api/info").as_bytes())
        .await
        .unwrap();
    assert_eq!(read_answer(&mut conn).await.0, 200);
    // Idle for longer than the header timeout: still open, and serving.
    tokio::time::sleep(Duration::from_millis(800)).await;
    conn.write_all(request(s.addr, "/api/info").as_bytes())
        .await
        .unwrap();
    assert_eq!(read_answer(&mut conn).await.0, 200);
    // Then closed once idle for the idle timeout.
    let took = time_to_close(&mut conn, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(1200) && took < Duration::from_millis(3000),
        "closed after {took:?}"
    );
    s.stop().await;
}

#[tokio::test]
async fn idle_connections_leave_requests_answered() {
    let s = Limited::start(|c| {
        c.max_connections = 64;
        c.header_read_timeout = Duration::from_millis(700);
    })
    .await;
    // Below the cap: a request beside 60 idle connections is answered at once.
    let idle = s.idle(60).await;
    let started = Instant::now();
    let r = s.get("/api/sessions").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(2));
    // At the cap: still answered at once (not left hanging, nor refused): an idle one
    // gives its place.
    let more = s.idle(4).await;
    let started = Instant::now();
    let r = s.get("/api/sessions").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(1));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let r = s.get("/api/sessions").send().await.unwrap();
    assert_eq!(r.status(), 200);
    drop((idle, more));
    s.stop().await;
}

#[tokio::test]
async fn past_the_feed_cap_a_feed_gets_503_with_retry_after() {
    let s = Limited::start(|c| c.max_feeds = 2).await;
    let id = s.session().await;
    let path = format!("/api/sessions/{id}/events");
    let first = s.get(&path).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let second = s.get(&path).send().await.unwrap();
    assert_eq!(second.status(), 200);
    let third = s.get(&path).send().await.unwrap();
    assert_eq!(third.headers()["retry-after"], "5");
    assert_eq!(error_code(third).await, (503, "too_many_feeds".into()));
    // The WebSocket counts too, refused before the upgrade.
    let ws = format!("ws://{}/api/ws", s.addr);
    match tokio_tungstenite::connect_async(ws.as_str()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => {
            assert_eq!(r.status(), 503);
            assert_eq!(r.headers()["retry-after"], "5");
        }
        other => panic!("{other:?}"),
    }
    // Other requests go on.
    assert_eq!(s.get("/api/sessions").send().await.unwrap().status(), 200);
    // A feed closed gives its slot back.
    drop(first);
    let mut reopened = false;
    for _ in 0..60 {
        if s.get(&path).send().await.unwrap().status() == 200 {
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(reopened);
    drop(second);
    s.stop().await;
}

#[tokio::test]
async fn deleting_a_session_ends_its_feeds_at_once_and_frees_their_slots() {
    let s = Limited::start(|c| c.max_feeds = 2).await;
    let id = s.session().await;
    let sse = s
        .get(&format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(sse.status(), 200);
    let mut body = sse.bytes_stream();
    let ws = format!("ws://{}/api/ws", s.addr);
    let (mut socket, _) = tokio_tungstenite::connect_async(ws.as_str()).await.unwrap();
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(
            json!({"sessionId": id}).to_string().into(),
        ))
        .await
        .unwrap();
    // Give the socket's subscription time to start before the deletion.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = s
        .client
        .delete(s.url(&format!("/api/sessions/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let started = Instant::now();
    // The SSE body ends (keep-alive comments aside, nothing more comes).
    let ended = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(chunk) = body.next().await {
            if chunk.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the SSE feed ended");
    // The WebSocket is closed cleanly.
    let closed = tokio::time::timeout(Duration::from_secs(2), async {
        loop {
            match socket.next().await {
                Some(Ok(tokio_tungstenite::tungstenite::Message::Close(frame))) => return frame,
                Some(Ok(_)) => {}
                other => panic!("{other:?}"),
            }
        }
    })
    .await
    .expect("the WebSocket feed ended");
    assert_eq!(
        closed.map(|f| u16::from(f.code)),
        Some(1000),
        "a normal close"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // Both slots are free again.
    let other = s.session().await;
    let path = format!("/api/sessions/{other}/events");
    let mut open = Vec::new();
    for _ in 0..2 {
        let r = s.get(&path).send().await.unwrap();
        assert_eq!(r.status(), 200);
        open.push(r);
    }
    s.stop().await;
}

#[tokio::test]
async fn a_session_deleted_by_another_process_ends_its_feed_too() {
    let s = Limited::start(|_| {}).await;
    let id = s.session().await;
    let sse = s
        .get(&format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(sse.status(), 200);
    let mut body = sse.bytes_stream();
    // Straight in the store, by a second instance's stores (their own connection, as the
    // CLI or another `serve` has): no word reaches the feed, which finds the session
    // gone when it next looks (the log has said that another writer changed it).
    let other = toolwire_store::Stores::open(s._dirs.0.path(), Default::default())
        .await
        .unwrap();
    assert!(other.delete_session(&id).await.unwrap());
    let ended = tokio::time::timeout(Duration::from_secs(8), async {
        while let Some(Ok(_)) = body.next().await {}
    })
    .await;
    assert!(ended.is_ok(), "the feed ended");
    s.stop().await;
}

/// The machine's host name as the kernel has it, lowercased, where there is `/proc`.
fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
}

#[tokio::test]
async fn an_unspecified_address_answers_to_the_machines_own_names() {
    let guard = Guard::for_addr("0.0.0.0:7777".parse().unwrap(), Some(TOKEN.into()));
    for host in ["0.0.0.0:7777", "127.0.0.1:7777", "localhost:7777"] {
        assert!(guard.hosts.iter().any(|h| h == host), "{host}");
    }
    assert!(guard.origins.iter().any(|o| o == "http://localhost:7777"));
    let Some(name) = hostname() else {
        return;
    };
    assert!(
        guard.hosts.contains(&format!("{name}:7777")),
        "{:?}",
        guard.hosts
    );
    assert!(guard.origins.contains(&format!("http://{name}:7777")));
    // A specific address stays that address.
    let specific = Guard::for_addr("127.0.0.2:7777".parse().unwrap(), None);
    assert!(!specific.hosts.contains(&format!("{name}:7777")));

    // A server on 0.0.0.0 answers a request made by the host name, and still refuses a
    // name that is not the machine's (DNS rebinding).
    let s = Limited::start(|c| {
        c.addr = "0.0.0.0:0".parse().unwrap();
        c.token = Some(TOKEN.into());
    })
    .await;
    let port = s.addr.port();
    let by_name = s
        .get("/api/sessions")
        .header("host", format!("{name}:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(by_name.status(), 200);
    let elsewhere = s
        .get("/api/sessions")
        .header("host", format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(elsewhere).await, (403, "forbidden_host".into()));
    s.stop().await;
}

/// Everything the server sends on `stream` until it closes or resets it (or `limit`
/// passes).
async fn read_to_close(stream: &mut tokio::net::tcp::OwnedReadHalf, limit: Duration) -> String {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let _ = tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&got).into_owned()
}

/// A body over the limit is refused with `413` whether its length is announced or not: a
/// chunked one, sent whole (after `100 Continue`, as curl does) before the answer is
/// read, gets its answer too, not a reset that destroys it while the client still sends.
#[tokio::test]
async fn a_chunked_body_over_the_limit_gets_413_too() {
    let s = Limited::start(|_| {}).await;
    for expect in [true, false] {
        let stream = TcpStream::connect(s.addr).await.unwrap();
        let (mut reader, mut writer) = stream.into_split();
        let expect_line = if expect {
            "Expect: 100-continue\r\n"
        } else {
            ""
        };
        let head = format!(
            "POST /api/sessions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Transfer-Encoding: chunked\r\n{expect_line}\r\n",
            s.addr
        );
        writer.write_all(head.as_bytes()).await.unwrap();
        if expect {
            let mut first = [0u8; 25];
            reader.read_exact(&mut first).await.unwrap();
            assert_eq!(&first, b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        let chunk = vec![b' '; 64 * 1024];
        let framed = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk,
            b"\r\n".to_vec(),
        ]
        .concat();
        // 8 MiB, all of it sent before the answer is read (as curl or an SDK does): more
        // than the sockets' buffers hold, so the server must read on past the limit.
        for i in 0..128 {
            let sent = tokio::time::timeout(Duration::from_secs(5), writer.write_all(&framed))
                .await
                .expect("the server reads on");
            assert!(sent.is_ok(), "expect {expect}: chunk {i}: {sent:?}");
        }
        writer.write_all(b"0\r\n\r\n").await.unwrap();
        let got = read_to_close(&mut reader, Duration::from_secs(5)).await;
        assert!(
            got.starts_with("HTTP/1.1 413"),
            "expect {expect}: {:?}",
            &got[..got.len().min(300)]
        );
    }
    // A body of announced length over the limit, for comparison: 413 without reading it.
    let big = "x".repeat(2 * 1024 * 1024);
    let r = s
        .client
        .post(s.url("/api/sessions"))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    s.stop().await;
}

/// At the connection cap, connections that have sent nothing (or sit idle between
/// requests) give way to a new one: a real request is served at once, however many silent
/// sockets an attacker holds open, and no token is needed to hold them.
#[tokio::test]
async fn at_the_cap_silent_and_idle_connections_give_way_to_a_real_request() {
    let s = Limited::start(|c| {
        c.max_connections = 8;
        c.header_read_timeout = Duration::from_secs(20);
        c.idle_timeout = Duration::from_secs(20);
    })
    .await;
    // Two that were served and now sit idle, then six that never said a word: the cap.
    let mut kept = Vec::new();
    for _ in 0..2 {
        let mut conn = TcpStream::connect(s.addr).await.unwrap();
        conn.write_all(request(s.addr, "/api/info").as_bytes())
            .await
            .unwrap();
        assert_eq!(read_answer(&mut conn).await.0, 200);
        kept.push(conn);
    }
    let mut silent = s.idle(6).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    for round in 0..12 {
        let started = Instant::now();
        let r = s.get("/api/info").send().await.unwrap();
        assert_eq!(r.status(), 200, "round {round}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "round {round}: {:?}",
            started.elapsed()
        );
        // The attacker opens new silent ones as fast as places free up.
        silent.extend(s.idle(2).await);
    }
    drop((kept, silent));
    s.stop().await;
}
