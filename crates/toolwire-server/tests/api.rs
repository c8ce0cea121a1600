//! Every endpoint against a real server on loopback, with its success and error statuses:
//! sessions, calls, messages, pending calls (live and after a restart), export, tools,
//! and resources with Range.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value as Json, json};
use support::{error_code, start, start_in, wait_for};

async fn put(blobs: &dyn toolwire_store::BlobStore, bytes: Vec<u8>) -> toolwire_store::BlobKey {
    let chunk: Result<bytes::Bytes, toolwire_store::StoreError> = Ok(bytes.into());
    toolwire_store::put_stream(blobs, futures::stream::iter([chunk]), None)
        .await
        .unwrap()
        .key
}

/// A final result (a suspended call's first result is a `tool_result` event too).
fn has_result(events: &[Json]) -> bool {
    events
        .iter()
        .any(|e| e["type"] == "tool_result" && e["result"]["status"] != "suspended")
}

#[tokio::test]
async fn sessions_are_created_listed_paged_read_and_deleted() {
    let f = start().await;
    let s = &f.server;
    let ids = [s.session().await, s.session().await, s.session().await];
    let page = s.json("/api/sessions?limit=2").await;
    assert_eq!(page["sessions"].as_array().unwrap().len(), 2);
    let rest = s.json("/api/sessions?limit=2&offset=2").await;
    assert_eq!(rest["sessions"].as_array().unwrap().len(), 1);
    let one = s.json(&format!("/api/sessions/{}", ids[0])).await;
    assert_eq!(one["session"]["id"], ids[0].as_str());
    assert_eq!(one["messages"], json!([]));

    assert_eq!(
        error_code(s.get("/api/sessions/s_nothere").send().await.unwrap()).await,
        (404, "not_found".into())
    );
    // The page shows this message: the id quoted, not a Rust type's debug form.
    let missing: serde_json::Value = s
        .get("/api/sessions/s_nothere")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(missing["error"]["message"], "no session \"s_nothere\"");
    assert_eq!(
        error_code(s.get("/api/sessions/a..b").send().await.unwrap())
            .await
            .0,
        400
    );
    // Out-of-range pages are refused as the OpenAPI document says, not clamped.
    for bad in [
        "limit=x",
        "limit=0",
        "limit=201",
        "offset=-1",
        "offset=4294967296",
    ] {
        let r = s.get(&format!("/api/sessions?{bad}")).send().await.unwrap();
        assert_eq!(error_code(r).await.0, 400, "{bad}");
    }

    let del = s
        .delete(&format!("/api/sessions/{}", ids[1]))
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 204);
    assert_eq!(
        error_code(
            s.delete(&format!("/api/sessions/{}", ids[1]))
                .send()
                .await
                .unwrap()
        )
        .await
        .0,
        404
    );
    assert_eq!(
        s.json("/api/sessions").await["sessions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // A body that is not JSON, or JSON of the wrong shape, is a client error.
    let r = s
        .client
        .post(s.url("/api/sessions"))
        .body("{")
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = s.send_post("/api/sessions", json!({"title": 7})).await;
    assert_eq!(r.status(), 422);
}

#[tokio::test]
async fn a_sessions_messages_are_read_whole_or_a_page_at_a_time() {
    use toolwire_core::Message;
    let f = start().await;
    let s = &f.server;
    let id = s.session().await;
    let texts: Vec<String> = (0..5).map(|i| format!("message {i}")).collect();
    for t in &texts {
        s.host
            .stores()
            .append(&id, Message::user(t.clone()))
            .await
            .unwrap();
    }
    let text = |page: &Json| -> Vec<String> {
        page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"]["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let whole = s.json(&format!("/api/sessions/{id}")).await;
    assert_eq!(text(&whole), texts);
    assert_eq!(whole["more"], false);
    // Pages of 2 after the last seq read: the same messages, in order; `more` until the end.
    let mut read = Vec::new();
    let mut after = 0;
    let mut mores = Vec::new();
    loop {
        let page = s
            .json(&format!("/api/sessions/{id}?limit=2&after={after}"))
            .await;
        assert_eq!(page["session"]["id"], id.as_str());
        read.extend(text(&page));
        mores.push(page["more"].as_bool().unwrap());
        match page["messages"].as_array().unwrap().last() {
            Some(last) if page["more"] == true => after = last["seq"].as_i64().unwrap(),
            _ => break,
        }
    }
    assert_eq!(read, texts);
    assert_eq!(mores, [true, true, false]);
    // A limit that is exactly the rest says there is no more.
    let exact = s.json(&format!("/api/sessions/{id}?limit=5")).await;
    assert_eq!(
        (text(&exact).len(), &exact["more"]),
        (5, &Json::Bool(false))
    );
    // Out-of-range pages are refused, as the OpenAPI document says.
    for bad in [
        "limit=0",
        "limit=10001",
        "after=-1",
        "after=x",
        "after=9223372036854775808",
    ] {
        let r = s
            .get(&format!("/api/sessions/{id}?{bad}"))
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await.0, 400, "{bad}");
    }
}

#[tokio::test]
async fn a_call_runs_its_result_is_stored_and_streamed() {
    let f = start().await;
    let s = &f.server;
    std::fs::write(
        f.dirs.1.path().join("notes.txt"),
        "hello from the workspace",
    )
    .unwrap();
    let id = s.session().await;
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls"),
            json!({"tool": "read_file", "input": {"path": "notes.txt"}}),
        )
        .await;
    assert_eq!(r.status(), 202);
    let body: Json = r.json().await.unwrap();
    assert_eq!(body["events"], format!("/api/sessions/{id}/events"));
    let events = wait_for(s, &id, has_result).await;
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["result"]["status"], "success");
    let session = s.json(&format!("/api/sessions/{id}")).await;
    let text = session["messages"].to_string();
    assert!(text.contains("hello from the workspace"), "{text}");
    // Stored as the person's call, made in the web app: no words put in their mouth.
    let messages = session["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "assistant", "{text}");
    assert_eq!(
        messages[0]["content"]["toolCalls"][0]["byPerson"],
        json!({"via": "web"})
    );
    assert!(!messages.iter().any(|m| m["role"] == "user"), "{text}");

    // The list counts calls and failed calls, not messages.
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls"),
            json!({"tool": "read_file", "input": {"path": "missing.txt"}}),
        )
        .await;
    assert_eq!(r.status(), 202);
    wait_for(s, &id, |events| {
        events.iter().filter(|e| e["type"] == "tool_result").count() == 2
    })
    .await;
    let listed = s.json("/api/sessions").await;
    let row = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        (&row["callCount"], &row["pendingCount"], &row["errorCount"]),
        (&json!(2), &json!(0), &json!(1)),
        "{row}"
    );

    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls"),
            json!({"tool": "no_such_tool"}),
        )
        .await;
    assert_eq!(error_code(r).await.0, 404);
    let r = s
        .send_post(
            "/api/sessions/s_nothere/calls",
            json!({"tool": "read_file"}),
        )
        .await;
    assert_eq!(error_code(r).await.0, 404);
    let tools = s.json("/api/tools").await;
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "read_file" && t["inputSchema"].is_object())
    );
    // resources/read goes to a tool's source; built-ins have none, and a bad body is 400.
    for (path, body, want) in [
        (
            "/api/tools/read_file/resource",
            json!({"uri": "ui://x"}),
            404,
        ),
        ("/api/tools/nothere/resource", json!({"uri": "ui://x"}), 404),
        ("/api/tools/read_file/resource", json!({"uri": ""}), 400),
        ("/api/tools/read_file/resource", json!({}), 422),
    ] {
        let r = s.send_post(path, body.clone()).await;
        assert_eq!(error_code(r).await.0, want, "{path} {body}");
    }
}

#[tokio::test]
async fn a_message_without_a_provider_is_409_and_with_one_runs_a_turn() {
    let f = start().await;
    let id = f.server.session().await;
    let r = f
        .server
        .send_post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_eq!(error_code(r).await, (409, "no_provider".into()));

    // With a provider (a local server answering like Anthropic's API).
    let api = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "Hello from the model"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}
        })))
        .mount(&api)
        .await;
    let settings = toolwire_agent::ProviderSettings {
        provider: Some(toolwire_model::Provider::Anthropic),
        base_url: Some(api.uri()),
        stream: false,
        ..Default::default()
    };
    let data = tempfile::tempdir().unwrap();
    let s = start_in(data.path(), f.dirs.1.path(), None, Some(settings)).await;
    let id = s.session().await;
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_eq!(r.status(), 202);
    let events = wait_for(&s, &id, |e| e.iter().any(|e| e["type"] == "turn_ended")).await;
    assert!(events.iter().any(|e| e["type"] == "turn_started"));
    let session = s.json(&format!("/api/sessions/{id}")).await;
    assert!(
        session["messages"]
            .to_string()
            .contains("Hello from the model")
    );
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/messages"),
            json!({"text": "  "}),
        )
        .await;
    assert_eq!(error_code(r).await.0, 400);
    s.stop().await;
}

#[tokio::test]
async fn a_waiting_call_is_approved_live_and_answered_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let s = start_in(data.path(), workspace.path(), None, None).await;
    let id = s.session().await;
    // write_file asks for approval.
    s.send_post(
        &format!("/api/sessions/{id}/calls"),
        json!({"tool": "write_file", "input": {"path": "a.txt", "content": "approved"}}),
    )
    .await;
    let events = wait_for(&s, &id, |e| e.iter().any(|e| e["type"] == "suspended")).await;
    let sid = events.iter().find(|e| e["type"] == "suspended").unwrap()["suspension"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pending = s.json(&format!("/api/sessions/{id}/suspensions")).await;
    assert_eq!(pending[0]["suspension"]["id"], sid.as_str());
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/suspensions/{sid}"),
            json!({"type": "approve"}),
        )
        .await;
    assert_eq!(r.status(), 202);
    wait_for(&s, &id, has_result).await;
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(),
        "approved"
    );
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/suspensions/{sid}"),
            json!({"type": "approve"}),
        )
        .await;
    assert_eq!(error_code(r).await.0, 404, "answered once only");

    // A question asked, then the server restarts before anyone answers.
    s.send_post(
        &format!("/api/sessions/{id}/calls"),
        json!({"tool": "ask_user", "input": {"question": "Which branch?"}}),
    )
    .await;
    wait_for(&s, &id, |e| {
        e.iter().filter(|e| e["type"] == "suspended").count() == 2
    })
    .await;
    s.stop().await;

    let s = start_in(data.path(), workspace.path(), None, None).await;
    let pending = s.json(&format!("/api/sessions/{id}/suspensions")).await;
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    assert_eq!(pending[0]["suspension"]["prompt"], "Which branch?");
    let sid = pending[0]["suspension"]["id"].as_str().unwrap();
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/suspensions/{sid}"),
            json!({"type": "answer", "value": "main"}),
        )
        .await;
    assert_eq!(r.status(), 200);
    let result: Json = r.json().await.unwrap();
    assert_eq!(result["status"], "success");
    assert!(
        s.json(&format!("/api/sessions/{id}/suspensions"))
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    let stored = s.json(&format!("/api/sessions/{id}")).await;
    assert!(stored["messages"].to_string().contains("main"));

    let r = s
        .send_post(
            &format!("/api/sessions/{id}/suspensions/susp_nope"),
            json!({"type": "deny"}),
        )
        .await;
    assert_eq!(error_code(r).await.0, 404);
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/suspensions/{sid}"),
            json!({"type": "maybe"}),
        )
        .await;
    assert_eq!(r.status(), 422);
    s.stop().await;
}

#[tokio::test]
async fn export_gives_the_model_view() {
    let f = start().await;
    let s = &f.server;
    std::fs::write(f.dirs.1.path().join("n.txt"), "x").unwrap();
    let id = s.session().await;
    s.send_post(
        &format!("/api/sessions/{id}/calls"),
        json!({"tool": "read_file", "input": {"path": "n.txt"}}),
    )
    .await;
    wait_for(s, &id, has_result).await;
    let body = s
        .json(&format!("/api/sessions/{id}/export?provider=anthropic"))
        .await;
    assert!(
        body["messages"].as_array().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    // With diagnostics: the same request, and the cut a 1-character budget makes.
    let cut = s
        .json(&format!(
            "/api/sessions/{id}/export?provider=anthropic&max_chars=1&diagnostics=true"
        ))
        .await;
    assert!(cut["request"]["messages"].is_array(), "{cut}");
    let said = cut["diagnostics"].to_string();
    assert!(
        said.contains("\"truncated\"") && said.contains("by the per-result budget"),
        "{said}"
    );
    for bad in [
        "provider=nope",
        "provider=gemini&model=",
        "provider=gemini&max_chars=0",
    ] {
        let r = s
            .get(&format!("/api/sessions/{id}/export?{bad}"))
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await.0, 400, "{bad}");
    }
    let r = s
        .get("/api/sessions/s_nothere/export?provider=gemini")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(r).await.0, 404);
}

#[tokio::test]
async fn resources_are_served_with_range_etag_and_a_sandbox_for_markup() {
    let f = start().await;
    let s = &f.server;
    let blobs = &s.host.stores().blobs();
    let png: Vec<u8> = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]
        .into_iter()
        .chain(0..=255u8)
        .cycle()
        .take(1000)
        .collect();
    let key = put(blobs.as_ref(), png.clone()).await;
    let path = format!("/api/resources/{key}/content");

    let r = s.get(&path).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "image/png");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert!(h["cache-control"].to_str().unwrap().contains("immutable"));
    let etag = h["etag"].to_str().unwrap().to_owned();
    assert!(etag.contains(key.hex()));
    assert_eq!(r.bytes().await.unwrap().as_ref(), png.as_slice());

    let r = s
        .get(&path)
        .header("range", "bytes=0-99")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 206);
    assert_eq!(r.headers()["content-range"], "bytes 0-99/1000");
    assert_eq!(r.bytes().await.unwrap().as_ref(), &png[..100]);
    let r = s
        .get(&path)
        .header("range", "bytes=-10")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 206);
    assert_eq!(r.bytes().await.unwrap().as_ref(), &png[990..]);
    let r = s
        .get(&path)
        .header("range", "bytes=5000-")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 416);
    assert_eq!(r.headers()["content-range"], "bytes */1000");
    let r = s
        .get(&path)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);

    let html = put(
        blobs.as_ref(),
        b"<!doctype html><script>alert(1)</script>".to_vec(),
    )
    .await;
    let r = s
        .get(&format!("/api/resources/{html}/content"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["content-security-policy"],
        "sandbox; default-src 'none'"
    );
    assert_eq!(r.headers()["content-disposition"], "attachment");
    // Whatever the bytes claim to be, markup that is not plainly passive is a sandboxed
    // download: an XHTML document behind `<?xml` used to be served inline as text/xml.
    let xhtml = put(
        blobs.as_ref(),
        br#"<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><script>fetch('/api/sessions')</script></html>"#.to_vec(),
    )
    .await;
    let r = s
        .get(&format!("/api/resources/{xhtml}/content"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-disposition"], "attachment");
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("sandbox")
    );
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");

    let missing = format!("blake3:{}", "0".repeat(64));
    assert_eq!(
        error_code(
            s.get(&format!("/api/resources/{missing}/content"))
                .send()
                .await
                .unwrap()
        )
        .await
        .0,
        404
    );
    for bad in [
        "not-a-key",
        "blake3:zz",
        "..%2f..%2fetc%2fpasswd",
        "%2e%2e",
        "blake3:..%2f..%2f",
    ] {
        let r = s
            .get(&format!("/api/resources/{bad}/content"))
            .send()
            .await
            .unwrap();
        assert!(
            matches!(r.status().as_u16(), 400 | 404),
            "{bad}: {}",
            r.status()
        );
    }
    let r = s
        .client
        .get(format!("{}api/resources/../../etc/passwd", s.base))
        .send()
        .await
        .unwrap();
    assert!(matches!(r.status().as_u16(), 400 | 404));

    // Session and call ids in a path follow the one id rule, refused at the door with
    // the rule's own words.
    let refused = |path: String| async move {
        let r = s.get(&path).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.text().await.unwrap())
    };
    for bad in ["a%20b", "a%3Fb", "..x", "%C3%A9"] {
        let (status, body) = refused(format!("/api/sessions/{bad}")).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body.contains("invalid session id"), "{bad}: {body}");
    }
    let (status, body) = refused(format!("/api/sessions/{}", "x".repeat(257))).await;
    assert_eq!(status, 400);
    assert!(body.contains("longer than 256"), "{body}");
}

/// The stored result of call `call_id` in session `id`, once there is one.
async fn result_of(s: &support::Running, id: &str, call_id: &str) -> Json {
    for _ in 0..100 {
        let session = s.json(&format!("/api/sessions/{id}")).await;
        if let Some(m) = session["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["content"]["callId"] == call_id && m["content"]["status"].is_string())
        {
            return m["content"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("no result for {call_id}");
}

/// A call waiting for approval, and a call running, are both stopped by the cancel API;
/// each gets its one stored result, and nothing is left waiting.
#[tokio::test]
async fn a_waiting_or_running_call_is_cancelled() {
    let data = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let s = start_in(data.path(), workspace.path(), None, None).await;
    let id = s.session().await;
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls"),
            json!({"tool": "write_file", "input": {"path": "a.txt", "content": "never"}}),
        )
        .await;
    let call: Json = r.json().await.unwrap();
    let call_id = call["callId"].as_str().unwrap().to_owned();
    wait_for(&s, &id, |e| e.iter().any(|e| e["type"] == "suspended")).await;
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls/{call_id}/cancel"),
            json!({}),
        )
        .await;
    assert_eq!(r.status(), 202);
    let result = result_of(&s, &id, &call_id).await;
    assert_eq!(result["status"], "error", "{result}");
    assert_eq!(result["error"]["code"], "cancelled", "{result}");
    assert!(!workspace.path().join("a.txt").exists());
    let waiting = s.json(&format!("/api/sessions/{id}/suspensions")).await;
    assert!(waiting.as_array().unwrap().is_empty(), "{waiting}");

    // A running call (approved, then sleeping) is stopped too.
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls"),
            json!({"tool": "run", "input": {"command": "sleep 30"}}),
        )
        .await;
    let call: Json = r.json().await.unwrap();
    let call_id = call["callId"].as_str().unwrap().to_owned();
    let events = wait_for(&s, &id, |e| {
        e.iter().filter(|e| e["type"] == "suspended").count() == 2
    })
    .await;
    let sid = events.iter().rfind(|e| e["type"] == "suspended").unwrap()["suspension"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/suspensions/{sid}"),
            json!({"type": "approve"}),
        )
        .await;
    assert_eq!(r.status(), 202);
    let started = std::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls/{call_id}/cancel"),
            json!({}),
        )
        .await;
    assert_eq!(r.status(), 202);
    let result = result_of(&s, &id, &call_id).await;
    assert_eq!(result["error"]["code"], "cancelled", "{result}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    let r = s
        .send_post(
            &format!("/api/sessions/{id}/calls/call_nope/cancel"),
            json!({}),
        )
        .await;
    assert_eq!(error_code(r).await.0, 404);
    s.stop().await;
}
