//! Throwaway databases for tests (this crate's, the CLI's, and an embedder's): each test gets a
//! database of its own on a shared server, dropped when the test ends.
//!
//! The server is named by `AGENT_TEST_POSTGRES_URL` (a URL without a password, of a role
//! allowed to create databases; the password comes from `PGPASSWORD`). `.ci/run` starts one on
//! loopback and sets both. Without it, [`TestDatabase::create`] returns `None` (the caller
//! skips, saying so), unless `CI` is set: then a missing server is an error, so CI cannot pass
//! without running these tests.

use std::sync::atomic::{AtomicU32, Ordering};

use super::{PgOptions, pg_error, pool};
use crate::error::{Result, StoreError};

/// The variable naming the test server.
pub const TEST_SERVER_ENV: &str = "AGENT_TEST_POSTGRES_URL";

/// A database created for one test, dropped (with its connections) when this is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    admin: PgOptions,
    name: String,
    url: String,
}

impl TestDatabase {
    /// Creates a database named after `label` (plus the process id and a counter) on the test
    /// server. `Ok(None)`: no server is configured and `CI` is not set.
    ///
    /// # Errors
    /// [`StoreError::Config`] when `CI` is set but `AGENT_TEST_POSTGRES_URL` is not, or it is not
    /// a usable URL; [`StoreError::Postgres`] when the database cannot be created.
    pub async fn create(label: &str) -> Result<Option<Self>> {
        let Some(admin_url) = std::env::var(TEST_SERVER_ENV)
            .ok()
            .filter(|u| !u.is_empty())
        else {
            if std::env::var_os("CI").is_some() {
                return Err(StoreError::Config(format!(
                    "{TEST_SERVER_ENV} is not set, and CI is: the PostgreSQL tests need a server \
                     (.ci/run starts one on loopback and sets it)"
                )));
            }
            return Ok(None);
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let clean: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(30)
            .collect();
        let name = format!(
            "agent_test_{clean}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let admin = PgOptions::new(&admin_url)?;
        let client = pool::connect(&admin).await?;
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            client
                .batch_execute(&sql)
                .await
                .map_err(pg_error(admin.redacted(), "cannot create a test database"))?;
        }
        let url = replace_dbname(&admin_url, &name)?;
        Ok(Some(Self { admin, name, url }))
    }

    /// The test database's URL (no password: it comes from `PGPASSWORD`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Options for a store in the test database.
    ///
    /// # Errors
    /// As [`PgOptions::new`] (not expected: the URL was built from a valid one).
    pub fn options(&self) -> Result<PgOptions> {
        PgOptions::new(&self.url)
    }
}

/// Whether a connection opened as `options` say, by the store's own connection path (the same
/// connector its pool and presence connection use), is TLS as the server sees it
/// (`pg_stat_ssl`).
///
/// # Errors
/// [`StoreError::Postgres`] when the connection or the query fails (a TLS failure says what
/// failed, as for a store).
pub async fn connection_uses_tls(options: &PgOptions) -> Result<bool> {
    let client = pool::connect(options).await?;
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(pg_error(options.redacted(), "cannot read pg_stat_ssl"))?;
    Ok(row.get(0))
}

/// `url` with its database (the path) replaced by `name`.
fn replace_dbname(url: &str, name: &str) -> Result<String> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| {
        StoreError::Config(format!(
            "{TEST_SERVER_ENV} must be a postgres:// URL, not `{url}`"
        ))
    })?;
    let (authority, query) = match rest.find(['/', '?']) {
        Some(i) => {
            let tail = &rest[i..];
            let query = tail.find('?').map_or("", |q| &tail[q..]);
            (&rest[..i], query)
        }
        None => (rest, ""),
    };
    Ok(format!("{scheme}://{authority}/{name}{query}"))
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let admin = self.admin.clone();
        let name = self.name.clone();
        // A runtime of its own, on a thread of its own: the test's runtime may be gone, or be
        // the one this drop runs on.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let client = pool::connect(&admin).await.ok()?;
                client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            tracing::warn!(database = %self.name, "a test database was not dropped");
        }
    }
}
