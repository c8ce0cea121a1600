//! The OpenAPI document and the router agree: every documented route reaches a handler
//! (never the "no such route" fallback or a 405), the document is OpenAPI 3.1 with every
//! route in it, and it is what `/api/openapi.json` serves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value as Json, json};
use support::start;
use toolwire_server::openapi::{ROUTES, document};

#[tokio::test]
async fn every_documented_route_exists_and_the_document_lists_them_all() {
    let f = start().await;
    let s = &f.server;
    for route in ROUTES {
        let path = route
            .path
            .replace("{id}", "s_missing")
            .replace("{suspension}", "susp_missing")
            .replace("{blob}", "blake3:00");
        let request = match route.method {
            "get" => s.get(&path),
            "post" => s.post(&path, json!({})),
            "delete" => s.delete(&path),
            other => panic!("undocumented method {other}"),
        };
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        assert_ne!(
            status, 405,
            "{} {}: method not routed",
            route.method, route.path
        );
        if status == 404 {
            let body: Json = response.json().await.unwrap();
            assert_ne!(
                body["error"]["code"], "no_route",
                "{} {} is documented but not routed",
                route.method, route.path
            );
        }
    }
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let documented: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| p.as_object().unwrap().len())
        .sum();
    assert_eq!(documented, ROUTES.len());
    assert_eq!(s.json("/api/openapi.json").await, doc);
    // Request bodies carry the handlers' own schemas.
    let body = &doc["paths"]["/api/sessions/{id}/calls"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(body["required"], json!(["tool"]));
    // The session list's answer is written down, counts included.
    let list = &doc["paths"]["/api/sessions"]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    for count in ["callCount", "pendingCount", "errorCount"] {
        assert!(
            list["$defs"]["Session"]["properties"][count].is_object(),
            "{count}: {list}"
        );
    }
}

#[tokio::test]
async fn an_undocumented_route_is_no_route() {
    let f = start().await;
    let r = f
        .server
        .get("/api/sessions/x/undocumented")
        .send()
        .await
        .unwrap();
    let body: Json = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "no_route");
}
