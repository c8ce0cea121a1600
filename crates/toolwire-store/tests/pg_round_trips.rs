//! What a stored result costs Postgres in round trips, counted on the wire: a relay in
//! front of Postgres counts each Sync (the extended protocol's end of a statement) and each
//! simple Query the clients send, each of which the server answers with one
//! ReadyForQuery, that is, one round trip. 64 callers land calls at once, as a busy server
//! does: each call's message, its start event, its result and its result event.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolwire_core::{CallRef, EventKind, Message, ToolCall, ToolResult, Value};
use toolwire_store::{NewSession, StoreConfig, Stores};

const CALLERS: usize = 64;
const CALLS_EACH: usize = 8;
/// Calls landed one after another by one caller.
const ALONE: usize = 64;

/// Round trips the relay's clients asked for, and statements they ran.
#[derive(Debug, Default)]
struct Counts {
    round_trips: AtomicU64,
    statements: AtomicU64,
}

/// Relays every connection to `upstream`, counting what the client sends.
async fn relay(upstream: String, counts: Arc<Counts>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                return;
            };
            let Ok(server) = TcpStream::connect(&upstream).await else {
                continue;
            };
            let counts = Arc::clone(&counts);
            tokio::spawn(async move {
                let (mut client_rx, mut client_tx) = client.into_split();
                let (mut server_rx, mut server_tx) = server.into_split();
                let up = async move {
                    let mut parser = Parser::default();
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match client_rx.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let (ends, statements) = parser.feed(&buf[..n]);
                        counts.round_trips.fetch_add(ends, Ordering::Relaxed);
                        counts.statements.fetch_add(statements, Ordering::Relaxed);
                        if server_tx.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = server_tx.shutdown().await;
                };
                let down = async move {
                    let _ = tokio::io::copy(&mut server_rx, &mut client_tx).await;
                    let _ = client_tx.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    addr
}

/// The client's side of the Postgres protocol, as far as message boundaries: the first
/// messages (an SSL or GSS request, then the startup message) have no type byte, every
/// later one is a type byte and a length.
#[derive(Debug, Default)]
struct Parser {
    buf: Vec<u8>,
    started: bool,
}

impl Parser {
    /// Takes more bytes; returns how many Syncs and simple Queries they completed, and how
    /// many statements (Binds and simple Queries).
    fn feed(&mut self, bytes: &[u8]) -> (u64, u64) {
        self.buf.extend_from_slice(bytes);
        let (mut ends, mut statements) = (0, 0);
        loop {
            let typed = usize::from(self.started);
            if self.buf.len() < typed + 4 {
                break;
            }
            let len = u32::from_be_bytes(self.buf[typed..typed + 4].try_into().unwrap()) as usize;
            if self.buf.len() < typed + len {
                break;
            }
            if self.started {
                if matches!(self.buf[0], b'S' | b'Q') {
                    ends += 1;
                }
                if matches!(self.buf[0], b'B' | b'Q') {
                    statements += 1;
                }
            } else {
                let code = u32::from_be_bytes(self.buf[4..8].try_into().unwrap());
                // 80877103: SSLRequest, 80877104: GSSENCRequest; anything else starts.
                self.started = !matches!(code, 80_877_103 | 80_877_104);
            }
            self.buf.drain(..typed + len);
        }
        (ends, statements)
    }
}

/// The Postgres URL with its host and port replaced by `addr`'s.
fn through(url: &str, addr: std::net::SocketAddr) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (auth, path) = rest.split_once('/').unwrap();
    let user = auth.rsplit_once('@').map(|(user, _)| format!("{user}@"));
    format!("{scheme}://{}{addr}/{path}", user.unwrap_or_default())
}

fn upstream(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let auth = rest.split_once('/').unwrap().0;
    auth.rsplit_once('@')
        .map_or(auth, |(_, host)| host)
        .to_owned()
}

/// One call landed as `serve` lands it: the call's message, its start event, then its
/// result stored with the event that announces it (`Stores::record_result_announced`).
async fn land(stores: &Stores, session: &str, n: usize) {
    let call = ToolCall::new(format!("c{n}"), "echo", serde_json::json!({"n": n}));
    stores
        .append(session, Message::assistant("", vec![call.clone()]))
        .await
        .unwrap();
    stores
        .events()
        .append_event(
            session,
            "2026-11-29T10:00:00Z".into(),
            EventKind::ToolCallStarted {
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                input: call.input.clone(),
                by_person: None,
            },
        )
        .await
        .unwrap();
    let result = ToolResult::success(CallRef::new(call.id.clone(), "echo"), Value::text("ok"));
    let (stored, seq) = stores
        .record_result_announced(session, result, Vec::new(), "2026-11-29T10:00:00Z".into())
        .await
        .unwrap();
    assert!(stored.seq > 0);
    assert!(seq.is_some(), "the result's event was not logged with it");
}

/// At most 3 round trips per stored result with 64 callers at once: appends and events are
/// batched across callers, and no connection is pinged before each use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_result_costs_at_most_three_round_trips_under_64_callers() {
    let Some(backend) = support::backends::postgres_s3().await else {
        return;
    };
    let counts = Arc::new(Counts::default());
    let addr = relay(upstream(&backend.history_url), Arc::clone(&counts)).await;
    let stores = Stores::open_urls(
        &through(&backend.history_url, addr),
        &backend.blob_url,
        StoreConfig::default(),
    )
    .await
    .unwrap();
    let mut sessions = Vec::new();
    for _ in 0..CALLERS {
        sessions.push(
            stores
                .create_session(NewSession::default())
                .await
                .unwrap()
                .id,
        );
    }
    // Warm: every pooled connection open, as on a server that has been running.
    let warm: Vec<_> = sessions.iter().map(|s| land(&stores, s, 0)).collect();
    futures::future::join_all(warm).await;
    let before = counts.round_trips.load(Ordering::Relaxed);
    let statements_before = counts.statements.load(Ordering::Relaxed);
    let callers: Vec<_> = sessions
        .iter()
        .map(|session| {
            let stores = stores.clone();
            let session = session.clone();
            tokio::spawn(async move {
                for n in 1..=CALLS_EACH {
                    land(&stores, &session, n).await;
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.unwrap();
    }
    let round_trips = counts.round_trips.load(Ordering::Relaxed) - before;
    let results = (CALLERS * CALLS_EACH) as f64;
    let per_result = round_trips as f64 / results;
    let statements = counts.statements.load(Ordering::Relaxed) - statements_before;
    eprintln!(
        "{round_trips} round trips, {statements} statements for {results} stored results: \
         {per_result:.2} round trips each"
    );
    assert!(
        per_result <= 3.0,
        "{per_result:.2} round trips per stored result ({round_trips} for {results})"
    );
    // One caller alone: each write is its own round (no batch to share), still with no
    // ping: the call's append, its start event, its result with its event (one
    // statement), and the two events' `NOTIFY`s. Warmed first, as above (each pooled
    // connection prepares a statement the first time it runs it).
    for n in 1..=ALONE {
        land(&stores, &sessions[0], 100 + n).await;
    }
    let before = counts.round_trips.load(Ordering::Relaxed);
    for n in 1..=ALONE {
        land(&stores, &sessions[0], 1000 + n).await;
    }
    let alone = counts.round_trips.load(Ordering::Relaxed) - before;
    let alone_per_result = alone as f64 / ALONE as f64;
    eprintln!("one caller: {alone_per_result:.2} round trips per stored result");
    // 5 in a quiet run; a read connection idle over a second is pinged before use, and
    // a loaded CI machine gave one such ping in a run: the bound leaves room for a few,
    // and fails on a result and its event written apart (6) or a ping per write.
    assert!(alone_per_result <= 5.5, "{alone_per_result:.2} alone");
    // Everything landed, numbered without gaps.
    for session in &sessions[1..] {
        let events = stores.events().events_since(session, 0).await.unwrap();
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=2 * (CALLS_EACH as u64 + 1)).collect::<Vec<_>>());
        assert_eq!(
            stores.history().load(session).await.unwrap().len(),
            2 * (CALLS_EACH + 1)
        );
    }
}
