//! The backends every store suite runs on: SQLite + a local blob directory always, and
//! Postgres + S3 (moto) when `tests/services/start` has pointed the tests at them. In CI
//! a missing server fails the suite; elsewhere it is skipped, saying so.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use toolwire_store::{StoreConfig, Stores};

pub(crate) const POSTGRES_ENV: &str = "TOOLWIRE_TEST_POSTGRES_URL";
pub(crate) const S3_ENV: &str = "TOOLWIRE_TEST_S3_URL";

/// `$body` with `$pool` a pool of `$backend`'s own database, of its type (SQLite's or
/// Postgres's): the same statements on either.
macro_rules! on_pool {
    ($backend:expr, |$pool:ident| $body:expr) => {
        if $backend.is_sqlite() {
            let $pool = sqlx::SqlitePool::connect(&$backend.history_url)
                .await
                .unwrap();
            $body
        } else {
            let $pool = sqlx::PgPool::connect(&$backend.history_url).await.unwrap();
            $body
        }
    };
}

/// One place to keep data: open it, drop the stores, open it again.
pub(crate) struct Backend {
    pub name: &'static str,
    pub history_url: String,
    pub blob_url: String,
    _dir: tempfile::TempDir,
}

impl Backend {
    pub(crate) async fn open(&self) -> Stores {
        self.open_with(StoreConfig::default()).await
    }

    pub(crate) async fn open_with(&self, config: StoreConfig) -> Stores {
        Stores::open_urls(&self.history_url, &self.blob_url, config)
            .await
            .unwrap_or_else(|e| panic!("{}: cannot open the stores: {e}", self.name))
    }

    pub(crate) fn is_sqlite(&self) -> bool {
        self.history_url.starts_with("sqlite:")
    }

    /// Runs `sql` (statements separated by `;`) on the database itself, beside the stores.
    pub(crate) async fn execute(&self, sql: String) {
        on_pool!(self, |pool| {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&pool)
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", self.name));
            pool.close().await;
        })
    }

    /// The length of each logged event's body in `session`, in order, read from the
    /// database itself: what the log holds, not what a read makes of it.
    pub(crate) async fn logged_lengths(&self, session: &str) -> Vec<i64> {
        const SQL: &str =
            "SELECT CAST(length(body) AS BIGINT) FROM events WHERE session_id = $1 ORDER BY seq";
        let rows: Vec<(i64,)> = on_pool!(self, |pool| sqlx::query_as(SQL)
            .bind(session)
            .fetch_all(&pool)
            .await
            .unwrap());
        rows.into_iter().map(|(n,)| n).collect()
    }
}

/// SQLite + local blobs, in a fresh temporary directory.
pub(crate) fn sqlite() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    Backend {
        name: "sqlite+file",
        history_url: format!("sqlite://{}", dir.path().join("history.db").display()),
        blob_url: format!("file://{}", dir.path().join("blobs").display()),
        _dir: dir,
    }
}

/// A server URL from the environment; in CI its absence fails the test.
pub(crate) fn server_url(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{var} is not set: CI must run {what} (eval \"$(tests/services/start)\")"
            );
            eprintln!(
                "SKIPPED on {what}: {var} is not set (eval \"$(tests/services/start)\" to run it)"
            );
            None
        }
    }
}

/// A fresh name for one test's schema and bucket prefix.
fn fresh_name() -> String {
    format!("t{}", toolwire_core::new_id("x").replace(['-', '_'], ""))
        .to_ascii_lowercase()
        .chars()
        .take(40)
        .collect()
}

/// Postgres in a schema of its own + S3 under a prefix of its own, so tests running at
/// once never see each other's rows or blobs.
pub(crate) async fn postgres_s3() -> Option<Backend> {
    let pg = server_url(POSTGRES_ENV, "Postgres")?;
    let s3 = server_url(S3_ENV, "S3")?;
    let name = fresh_name();
    let admin = sqlx::PgPool::connect(&pg)
        .await
        .unwrap_or_else(|e| panic!("Postgres at {pg}: {e}"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}")))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
    let sep = if pg.contains('?') { '&' } else { '?' };
    let history_url = format!("{pg}{sep}options=-c%20search_path%3D{name}");
    let (base, query) = s3.split_once('?').unwrap_or((&s3, ""));
    let blob_url = format!("{}/{name}?{query}", base.trim_end_matches('/'));
    Some(Backend {
        name: "postgres+s3",
        history_url,
        blob_url,
        _dir: tempfile::tempdir().unwrap(),
    })
}

/// Every backend this machine can run, SQLite first.
pub(crate) async fn all() -> Vec<Backend> {
    let mut out = vec![sqlite()];
    out.extend(postgres_s3().await);
    out
}

/// A test that runs its body once per backend, `$b` naming the [`Backend`]:
/// `on_every_backend! { async fn name(backend) { ... } }`.
#[macro_export]
macro_rules! on_every_backend {
    ($(#[$m:meta])* async fn $name:ident($b:ident) $body:block) => {
        $(#[$m])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            for backend in $crate::support::backends::all().await {
                eprintln!("{} on {}", stringify!($name), backend.name);
                let $b = &backend;
                $body
            }
        }
    };
}
