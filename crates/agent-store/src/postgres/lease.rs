//! The writer lease: one writer per session across hosts.
//!
//! A lease is four columns of the session row: `lease_holder` (a store's UUID), `lease_token`
//! (grows by one on every acquisition: the fencing token every append checks),
//! `lease_until` (on the server's clock) and `lease_backend` (the server pid of the holder's
//! presence connection). A store may take a lease that is free, expired, or whose holder's
//! presence connection is gone (its process died: the server closed the connection). The
//! heartbeat renews every lease a store holds each third of the lease; appends renew their
//! own. See docs/sessions.md, "PostgreSQL: locking".

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use tokio_postgres::Client;

use super::{PgOptions, PgStore, pg_error, pool};
use crate::error::{Result, StoreError};
use crate::id::SessionId;
use crate::metadata::SessionMetadata;

/// A session this store holds the lease of.
#[derive(Debug)]
pub(super) struct Writer {
    /// The fencing token of this holding.
    pub(super) token: i64,
    /// The session's metadata as of its last append (this store is its only writer).
    pub(super) meta: SessionMetadata,
}

/// How long a lease held by a live-looking holder is asked for again before `Busy`, and how
/// often: a holder that just exited can take a moment to leave the server's list of
/// connections.
const BUSY_GRACE: Duration = Duration::from_millis(250);
const BUSY_RETRY_WAIT: Duration = Duration::from_millis(50);

/// The server pid of a connection.
pub(super) async fn backend_pid(client: &Client, url: &str) -> Result<i32> {
    let row = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .map_err(pg_error(url, "cannot read the connection's server pid"))?;
    Ok(row.get(0))
}

/// Seconds as the SQL interval argument.
pub(super) fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Renews this store's leases every third of the lease, on a connection of its own whose server
/// pid marks the store as alive. When that connection breaks, a new one is opened and the
/// leases still held (same token) are moved to its pid.
pub(super) async fn heartbeat(
    mut client: Client,
    options: PgOptions,
    me: String,
    lease: Duration,
    presence: Arc<AtomicI32>,
) {
    let every = lease / 3;
    let url = options.redacted();
    loop {
        tokio::time::sleep(every).await;
        if client.is_closed() {
            match pool::connect(&options).await {
                Ok(c) => match backend_pid(&c, url).await {
                    Ok(pid) => {
                        presence.store(pid, Ordering::Relaxed);
                        client = c;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the session store's presence connection is down");
                        continue;
                    }
                },
                Err(e) => {
                    tracing::warn!(error = %e, "the session store's presence connection is down");
                    continue;
                }
            }
        }
        let pid = presence.load(Ordering::Relaxed);
        let renewed = client
            .execute(
                "UPDATE agent_sessions
                    SET lease_until = clock_timestamp() + make_interval(secs => $2),
                        lease_backend = $3
                  WHERE lease_holder = $1",
                &[&me, &seconds(lease), &pid],
            )
            .await;
        if let Err(e) = renewed {
            tracing::warn!(error = %e, "the session store could not renew its writer leases");
        }
    }
}

impl PgStore {
    /// The writer of `id`, taking the lease if this store does not hold it.
    pub(super) async fn writer(&self, id: &SessionId) -> Result<Arc<tokio::sync::Mutex<Writer>>> {
        let mut writers = self.inner.writers.lock().await;
        if let Some(w) = writers.get(id) {
            return Ok(w.clone());
        }
        let mut waited = Duration::ZERO;
        let writer = loop {
            if let Some(w) = self.try_acquire(id).await? {
                break w;
            }
            let (holder, alive) = self.holder(id).await?;
            if !alive {
                // Freed between the two queries: ask again at once.
                continue;
            }
            if waited >= BUSY_GRACE {
                return Err(StoreError::Busy {
                    id: id.clone(),
                    pid: holder,
                });
            }
            tokio::time::sleep(BUSY_RETRY_WAIT).await;
            waited += BUSY_RETRY_WAIT;
        };
        let w = Arc::new(tokio::sync::Mutex::new(writer));
        writers.insert(id.clone(), w.clone());
        Ok(w)
    }

    /// Takes the lease if it is free, expired, or its holder's presence connection is gone.
    /// `None`: someone else holds it.
    async fn try_acquire(&self, id: &SessionId) -> Result<Option<Writer>> {
        let url = self.url();
        let conn = self.inner.pool.get().await?;
        let row = conn
            .query_opt(
                "UPDATE agent_sessions s
                    SET lease_holder = $2, lease_token = s.lease_token + 1,
                        lease_until = clock_timestamp() + make_interval(secs => $3),
                        lease_backend = $4, lease_host = $5, lease_pid = $6
                  WHERE s.id = $1
                    AND (s.lease_holder IS NULL OR s.lease_holder = $2
                         OR s.lease_until < clock_timestamp()
                         OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                                         WHERE a.pid = s.lease_backend))
                RETURNING s.lease_token, s.meta::text, s.updated_us",
                &[
                    &id.as_str(),
                    &self.inner.me,
                    &seconds(self.inner.options.lease),
                    &self.presence_pid(),
                    &self.inner.host,
                    &self.inner.pid,
                ],
            )
            .await
            .map_err(pg_error(url, "cannot take the session's writer lease"))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let meta = super::read::meta_of(&row, 1, 2, url)?;
        Ok(Some(Writer {
            token: row.get(0),
            meta,
        }))
    }

    /// Who holds the lease of `id` (`pid N on host H, ...`) and whether the holder looks alive;
    /// [`StoreError::NotFound`] when there is no such session.
    pub(super) async fn holder(&self, id: &SessionId) -> Result<(String, bool)> {
        let url = self.url();
        let conn = self.inner.pool.get().await?;
        let row = conn
            .query_opt(
                "SELECT s.lease_pid, s.lease_host,
                        to_char(s.lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
                        s.lease_holder IS NOT NULL AND s.lease_until >= clock_timestamp()
                          AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = s.lease_backend)
                   FROM agent_sessions s WHERE s.id = $1",
                &[&id.as_str()],
            )
            .await
            .map_err(pg_error(url, "cannot read the session's writer lease"))?;
        let Some(row) = row else {
            return Err(self.not_found(id));
        };
        let pid: Option<i64> = row.get(0);
        let host: Option<String> = row.get(1);
        let until: Option<String> = row.get(2);
        let alive: Option<bool> = row.get(3);
        let text = format!(
            "{} on host {}, writer lease until {} unless renewed",
            pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string()),
            host.unwrap_or_else(|| "unknown".into()),
            until.unwrap_or_else(|| "unknown".into())
        );
        Ok((text, alive == Some(true)))
    }

    /// Gives up the lease of `id` (if this store holds it).
    pub(super) async fn release(&self, id: &SessionId) -> Result<()> {
        let writer = self.inner.writers.lock().await.remove(id);
        let Some(writer) = writer else {
            return Ok(());
        };
        let token = writer.lock().await.token;
        let conn = self.inner.pool.get().await?;
        conn.execute(
            "UPDATE agent_sessions
                SET lease_holder = NULL, lease_until = NULL, lease_backend = NULL,
                    lease_host = NULL, lease_pid = NULL
              WHERE id = $1 AND lease_holder = $2 AND lease_token = $3",
            &[&id.as_str(), &self.inner.me, &token],
        )
        .await
        .map_err(pg_error(
            self.url(),
            "cannot release the session's writer lease",
        ))?;
        Ok(())
    }

    /// Forgets a writer whose lease was lost, and says who holds it now.
    pub(super) async fn lost(&self, id: &SessionId) -> StoreError {
        self.inner.writers.lock().await.remove(id);
        match self.holder(id).await {
            Ok((holder, _)) => StoreError::LeaseLost {
                id: id.clone(),
                holder: format!("pid {holder}"),
            },
            Err(e) => e,
        }
    }

    pub(super) fn not_found(&self, id: &SessionId) -> StoreError {
        StoreError::NotFound {
            id: id.clone(),
            root: self.url().into(),
        }
    }
}
