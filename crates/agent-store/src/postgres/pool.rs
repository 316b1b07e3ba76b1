//! A small connection pool: at most `max_connections` clients, each reused after its holder is
//! done with it unless the connection broke. The driver (tokio-postgres) pipelines queries on one
//! client, but a transaction needs a client to itself, so the store hands out whole clients.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{Client, NoTls, Socket};

use super::tls::Connector;
use super::{PgOptions, pg_error};
use crate::error::{Result, StoreError};

/// The pool.
pub(super) struct Pool {
    options: PgOptions,
    idle: Mutex<Vec<Client>>,
    permits: Semaphore,
}

/// A client taken from the pool; goes back when dropped (unless its connection closed).
pub(super) struct Conn<'a> {
    client: Option<Client>,
    pool: &'a Pool,
    _permit: SemaphorePermit<'a>,
}

impl Pool {
    pub(super) fn new(options: PgOptions) -> Self {
        let max = options.max_connections;
        Self {
            options,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(max),
        }
    }

    /// Keeps an open client for reuse.
    pub(super) fn put(&self, client: Client) {
        if !client.is_closed() {
            self.idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(client);
        }
    }

    /// A client: an idle one, or a new connection when none is idle (waiting while
    /// `max_connections` are out).
    pub(super) async fn get(&self) -> Result<Conn<'_>> {
        let permit =
            self.permits.acquire().await.map_err(|_| {
                StoreError::Task("the PostgreSQL connection pool was closed".into())
            })?;
        let reused = loop {
            let next = self
                .idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop();
            match next {
                Some(c) if c.is_closed() => {}
                other => break other,
            }
        };
        let client = match reused {
            Some(c) => c,
            None => connect(&self.options).await?,
        };
        Ok(Conn {
            client: Some(client),
            pool: self,
            _permit: permit,
        })
    }
}

/// Opens one connection (plain or TLS, as `options` say), drives it on the runtime, and makes
/// its commits durable: a server (or role) configured with `synchronous_commit = off`
/// acknowledges commits it can still lose, so the store turns it on for its own connections
/// (stronger settings, such as `remote_apply` for synchronous replicas, are kept).
pub(super) async fn connect(options: &PgOptions) -> Result<Client> {
    let config = options.connect_config();
    let url = options.redacted();
    let opened = match &options.connector {
        Connector::Plain => open(&config, NoTls, url).await,
        Connector::Tls { make, .. } => open(&config, make.clone(), url).await,
    };
    let client = opened.map_err(|e| match options.connector.explain(&e) {
        Some(message) => StoreError::Postgres {
            url: url.to_owned(),
            action: "cannot connect",
            message,
        },
        None => pg_error(url, "cannot connect")(e),
    })?;
    let row = client
        .query_one("SELECT current_setting('synchronous_commit')", &[])
        .await
        .map_err(pg_error(url, "cannot read synchronous_commit"))?;
    let mode: String = row.get(0);
    if mode == "off" {
        client
            .batch_execute("SET synchronous_commit = on")
            .await
            .map_err(pg_error(url, "cannot set synchronous_commit"))?;
    }
    Ok(client)
}

/// Connects with `tls` and spawns the task that drives the connection.
async fn open<T>(
    config: &tokio_postgres::Config,
    tls: T,
    url: &str,
) -> std::result::Result<Client, tokio_postgres::Error>
where
    T: MakeTlsConnect<Socket>,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    let (client, connection) = config.connect(tls).await?;
    let shown = url.to_owned();
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(url = %shown, error = %e, "a PostgreSQL connection ended");
        }
    });
    Ok(client)
}

impl Deref for Conn<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        // Present from creation until drop.
        self.client.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            self.pool.put(c);
        }
    }
}
