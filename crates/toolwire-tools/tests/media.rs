//! `view_image` and `ask_user` through the real executor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use base64::Engine as _;
use serde_json::json;
use support::{Fixture, PNG_1X1, assert_valid};
use toolwire_core::Resolution;
use toolwire_core::{Status, SuspensionReason, WellKnown};
use toolwire_tool::ExecutionMode;

#[tokio::test]
async fn view_image_sniffs_the_type_from_the_bytes() {
    let f = Fixture::new();
    // Named .jpg, but a PNG: the bytes decide.
    f.write("photo.jpg", PNG_1X1);
    let v = f.ok("view_image", json!({"path": "photo.jpg"})).await;
    assert!(v.is_kind(WellKnown::Image));
    assert_eq!(v.mime_type.as_deref(), Some("image/png"));
    let b64 = v.data["source"]["base64"].as_str().unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert_eq!(decoded, PNG_1X1);
    let expected = format!("photo.jpg: image/png, {} bytes", PNG_1X1.len());
    assert_eq!(v.summary.as_deref(), Some(expected.as_str()));
}

#[tokio::test]
async fn view_image_refuses_what_is_not_an_image() {
    let f = Fixture::new();
    f.write("notes.png", "just text");
    let (code, msg) = f.err("view_image", json!({"path": "notes.png"})).await;
    assert_eq!(code, "not_an_image");
    assert!(msg.contains("read_file"), "{msg}");
    f.write("doc.png", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n");
    let (code, msg) = f.err("view_image", json!({"path": "doc.png"})).await;
    assert_eq!(code, "not_an_image");
    assert!(msg.contains("application/pdf"), "{msg}");
    let (code, _) = f.err("view_image", json!({"path": "gone.png"})).await;
    assert_eq!(code, "not_found");
    let (code, _) = f.err("view_image", json!({"path": "/etc/hostname"})).await;
    assert_eq!(code, "outside_workspace");
}

#[tokio::test]
async fn ask_user_suspends_and_the_answer_becomes_the_output() {
    let f = Fixture::new();
    let schema = f.exec.registry().get("ask_user").unwrap().schema().clone();
    assert_eq!(schema.execution_mode, ExecutionMode::Blocking);
    let r = f
        .call_raw(
            "ask_user",
            json!({"question": "Which database?", "options": ["SQLite", "Postgres"]}),
        )
        .await;
    assert_valid(&r);
    assert_eq!(r.status, Status::Suspended);
    let s = r.suspension.unwrap();
    assert_eq!(s.reason, SuspensionReason::Input);
    assert_eq!(s.prompt, "Which database?\n1. SQLite\n2. Postgres");
    let answered = f
        .exec
        .resolve(
            &s.id,
            Resolution::Answer {
                value: json!("Postgres"),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_valid(&answered);
    assert_eq!(answered.status, Status::Success);
    assert_eq!(answered.output[0].data["content"], "Postgres");

    let r = f
        .call_raw("ask_user", json!({"question": "Proceed?"}))
        .await;
    assert_eq!(r.suspension.unwrap().prompt, "Proceed?");
    let r = f.call_raw("ask_user", json!({"options": ["a"]})).await;
    assert_eq!(r.status, Status::Error);
    assert_eq!(r.error.unwrap().code.as_deref(), Some("invalid_input"));
}
