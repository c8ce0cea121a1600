//! Bare JSON-RPC echo loop variants against server-everything: blocking read vs poll(2) wait,
//! plain calls vs calls with _meta.progressToken, an empty initialize vs toolwire's (`ours`)
//! vs toolwire's with its discovery probe and tools/list (`full`). See ../README.md.
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a[1].parse().unwrap();
    let poll = a[2] == "poll";
    let meta = a[3] == "meta";
    let ours = a[4] == "ours" || a[4] == "full";
    let full = a[4] == "full";
    let srv = "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    let mut c = Command::new("node")
        .arg(srv)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut w = c.stdin.take().unwrap();
    let mut r = c.stdout.take().unwrap();
    let fd = r.as_raw_fd();
    let mut buf: Vec<u8> = Vec::new();
    let mut tmp = vec![0u8; 65536];
    let mut rt = |id: usize, req: &str, w: &mut std::process::ChildStdin| {
        w.write_all(req.as_bytes()).unwrap();
        let want = format!("\"id\":{id}");
        loop {
            while let Some(p) = buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buf.drain(..=p).collect();
                let l = String::from_utf8_lossy(&line);
                if l.contains(&want) {
                    return;
                }
                if l.contains("\"method\":\"roots/list\"") {
                    // answer the server's roots/list as toolwire does
                    let rid = l
                        .split("\"id\":")
                        .nth(1)
                        .unwrap()
                        .split(|c| c == ',' || c == '}')
                        .next()
                        .unwrap()
                        .to_string();
                    w.write_all(
                        format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":{rid},\"result\":{{\"roots\":[]}}}}\n"
                        )
                        .as_bytes(),
                    )
                    .unwrap();
                }
            }
            if poll {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                unsafe { libc::poll(&mut p, 1, -1) };
            }
            let k = r.read(&mut tmp).unwrap();
            assert!(k > 0);
            buf.extend_from_slice(&tmp[..k]);
        }
    };
    let caps = if ours {
        r#"{"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"roots":{"listChanged":false},"elicitation":{"form":{},"url":{}}}"#
    } else {
        "{}"
    };
    let proto = if ours { "2025-11-25" } else { "2025-06-18" };
    if full {
        // toolwire's first request: the 2026-07-28 discovery probe (answered with an error)
        rt(
            0,
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\",\"params\":{}}\n",
            &mut w,
        );
    }
    rt(0, &format!("{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{proto}\",\"capabilities\":{caps},\"clientInfo\":{{\"name\":\"b\",\"version\":\"1\"}}}}}}\n"), &mut w);
    let call = |i: usize| {
        if meta {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"_meta\":{{\"progressToken\":{i}}},\"name\":\"echo\",\"arguments\":{{\"message\":\"call {i}\"}}}}}}\n")
        } else {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"message\":\"call {i}\"}}}}}}\n")
        }
    };
    if full {
        rt(100000, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":100000,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"progressToken\":0}}}\n", &mut w);
        rt(1, &call(1), &mut w);
    } else {
        rt(
            1,
            &format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n{}",
                call(1)
            ),
            &mut w,
        );
    }
    for i in 2..=20 {
        rt(i, &call(i), &mut w);
    }
    let t = Instant::now();
    for i in 21..21 + n {
        rt(i, &call(i), &mut w);
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let _ = c.kill();
    println!("{us:.0}");
}
