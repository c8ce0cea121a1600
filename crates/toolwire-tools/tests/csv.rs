//! `query_csv` through the real executor: typed tables, column selection, equality
//! filters, limits, and clear errors for broken CSV.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use support::Fixture;
use toolwire_core::WellKnown;

const CITIES: &str = "city,country,population,area\n\
                      Paris,FR,2102650,105.4\n\
                      Lyon,FR,522250,47.87\n\
                      Berlin,DE,3850809,891.1\n\
                      Nowhere,XX,,12\n";

#[tokio::test]
async fn a_csv_becomes_a_typed_table() {
    let f = Fixture::new();
    f.write("cities.csv", CITIES);
    let v = f.ok("query_csv", json!({"path": "cities.csv"})).await;
    assert!(v.is_kind(WellKnown::Table));
    assert_eq!(v.summary.as_deref(), Some("4 rows"));
    assert_eq!(
        v.data["columns"],
        json!([
            {"key": "city", "type": "string"},
            {"key": "country", "type": "string"},
            {"key": "population", "type": "number", "align": "right"},
            {"key": "area", "type": "number", "align": "right"},
        ])
    );
    assert_eq!(
        v.data["rows"][0],
        json!({"city": "Paris", "country": "FR", "population": 2102650, "area": 105.4})
    );
    // An empty cell in a number column is null, not a string.
    assert_eq!(v.data["rows"][3]["population"], json!(null));
}

#[tokio::test]
async fn columns_where_and_limit() {
    let f = Fixture::new();
    f.write("cities.csv", CITIES);
    let v = f
        .ok(
            "query_csv",
            json!({"path": "cities.csv", "columns": ["population", "city"], "where": {"country": "FR"}}),
        )
        .await;
    assert_eq!(
        v.data["rows"],
        json!([{"population": 2102650, "city": "Paris"}, {"population": 522250, "city": "Lyon"}])
    );
    assert_eq!(v.data["columns"][0]["key"], "population");
    assert_eq!(v.summary.as_deref(), Some("2 rows"));

    let v = f
        .ok(
            "query_csv",
            json!({"path": "cities.csv", "where": {"area": 47.87, "country": "FR"}}),
        )
        .await;
    assert_eq!(v.data["rows"][0]["city"], "Lyon");
    assert_eq!(v.summary.as_deref(), Some("1 row"));

    let v = f
        .ok("query_csv", json!({"path": "cities.csv", "limit": 2}))
        .await;
    assert_eq!(v.data["rows"].as_array().unwrap().len(), 2);
    assert_eq!(v.summary.as_deref(), Some("2 of 4 rows (limit 2)"));

    let v = f
        .ok(
            "query_csv",
            json!({"path": "cities.csv", "where": {"country": "JP"}}),
        )
        .await;
    assert_eq!(v.data["rows"], json!([]));
    assert_eq!(v.summary.as_deref(), Some("0 rows"));
}

#[tokio::test]
async fn broken_csv_and_bad_queries_are_clear_errors() {
    let f = Fixture::new();
    f.write("ragged.csv", "a,b,c\n1,2,3\n4,5\n");
    let (code, msg) = f.err("query_csv", json!({"path": "ragged.csv"})).await;
    assert_eq!(code, "invalid_csv");
    assert!(msg.contains("ragged.csv"), "{msg}");
    assert!(msg.contains("line 3"), "{msg}");

    f.write("latin1.csv", b"name\ncaf\xe9\n");
    let (code, msg) = f.err("query_csv", json!({"path": "latin1.csv"})).await;
    assert_eq!(code, "invalid_csv");
    assert!(msg.to_lowercase().contains("utf-8"), "{msg}");

    f.write("empty.csv", "");
    let (code, msg) = f.err("query_csv", json!({"path": "empty.csv"})).await;
    assert_eq!(code, "invalid_csv");
    assert!(msg.contains("header"), "{msg}");

    f.write("cities.csv", CITIES);
    let (code, msg) = f
        .err(
            "query_csv",
            json!({"path": "cities.csv", "columns": ["mayor"]}),
        )
        .await;
    assert_eq!(code, "invalid_input");
    assert!(
        msg.contains("mayor") && msg.contains("city, country, population, area"),
        "{msg}"
    );
    let (code, _) = f
        .err(
            "query_csv",
            json!({"path": "cities.csv", "where": {"zip": "75"}}),
        )
        .await;
    assert_eq!(code, "invalid_input");
    let (code, _) = f
        .err(
            "query_csv",
            json!({"path": "cities.csv", "where": {"city": ["a"]}}),
        )
        .await;
    assert_eq!(code, "invalid_input");
    let (code, _) = f.err("query_csv", json!({"path": "missing.csv"})).await;
    assert_eq!(code, "not_found");
    std::fs::create_dir(f.path("dir.csv")).unwrap();
    let (code, _) = f.err("query_csv", json!({"path": "dir.csv"})).await;
    assert_eq!(code, "is_directory");
}

/// One endless record (a sparse 5 GB file of zeros, or a quoted field of newlines) is cut
/// off at the record cap with a clear error, not read until memory runs out.
#[tokio::test]
async fn an_endless_record_is_a_clear_error_not_an_oom() {
    let f = Fixture::new();
    let sparse = std::fs::File::create(f.path("sparse.csv")).unwrap();
    sparse.set_len(5 * 1024 * 1024 * 1024).unwrap();
    drop(sparse);
    let (code, msg) = f.err("query_csv", json!({"path": "sparse.csv"})).await;
    assert_eq!(code, "record_too_large", "{msg}");
    assert!(
        msg.contains("sparse.csv") && msg.contains("1024 KiB"),
        "{msg}"
    );

    let mut quoted = b"a,b\n1,\"".to_vec();
    quoted.extend(std::iter::repeat_n(b'\n', 3 * 1024 * 1024));
    f.write("quoted.csv", quoted);
    let (code, _) = f.err("query_csv", json!({"path": "quoted.csv"})).await;
    assert_eq!(code, "record_too_large");
}
