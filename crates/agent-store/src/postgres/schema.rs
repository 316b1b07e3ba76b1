//! The schema and its migrations: versioned, applied in order on first use (under an advisory
//! lock, so two stores starting at once do not both apply them), recorded in
//! `agent_schema_migrations`. A database whose schema is newer than this build knows is refused.

use super::pg_error;
use crate::error::{Result, StoreError};

/// One migration: its version, a name for the record, and its SQL.
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

/// The migrations, oldest first. Never edit one that has shipped: add the next.
const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "sessions and events",
    sql: r#"
CREATE TABLE agent_sessions (
    id text PRIMARY KEY,
    meta jsonb NOT NULL,
    updated_us bigint NOT NULL,
    cwd text,
    title text,
    first_prompt text,
    tags text[] NOT NULL DEFAULT '{}',
    last_seq bigint NOT NULL,
    lease_holder text,
    lease_token bigint NOT NULL DEFAULT 0,
    lease_until timestamptz,
    lease_backend integer,
    lease_host text,
    lease_pid bigint
);
CREATE INDEX agent_sessions_updated ON agent_sessions (updated_us DESC, id);
CREATE INDEX agent_sessions_cwd ON agent_sessions (cwd, updated_us DESC, id);
CREATE INDEX agent_sessions_tags ON agent_sessions USING gin (tags);
CREATE TABLE agent_events (
    session_id text NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    event_id text NOT NULL,
    kind text NOT NULL,
    line text NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"#,
}];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i32 = 1;

/// Applies the migrations the database lacks, in one transaction.
pub(super) async fn migrate(client: &mut tokio_postgres::Client, url: &str) -> Result<()> {
    let tx = client
        .transaction()
        .await
        .map_err(pg_error(url, "cannot start the schema migration"))?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(hashtext('agent_store.migrations'));
         CREATE TABLE IF NOT EXISTS agent_schema_migrations (
             version integer PRIMARY KEY,
             name text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
         );",
    )
    .await
    .map_err(|e| {
        let denied = e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE);
        match pg_error(url, "cannot prepare the schema migrations table")(e) {
            StoreError::Postgres {
                url,
                action,
                message,
            } if denied => StoreError::Postgres {
                message: format!(
                    "{message}; the first connect creates the store's tables: give the role \
                     CREATE on its schema (GRANT CREATE ON SCHEMA public TO <role>), or a database \
                     or schema of its own"
                ),
                url,
                action,
            },
            other => other,
        }
    })?;
    let row = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM agent_schema_migrations",
            &[],
        )
        .await
        .map_err(pg_error(url, "cannot read the schema version"))?;
    let current: i32 = row.get(0);
    if current > SCHEMA_VERSION {
        return Err(StoreError::Config(format!(
            "the session database {url} has schema version {current}, newer than this agent \
             knows ({SCHEMA_VERSION}); upgrade agent, or point it at another database"
        )));
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > current) {
        tracing::info!(
            url,
            version = m.version,
            name = m.name,
            "applying a session schema migration"
        );
        tx.batch_execute(m.sql)
            .await
            .map_err(pg_error(url, "cannot apply a schema migration"))?;
        tx.execute(
            "INSERT INTO agent_schema_migrations (version, name) VALUES ($1, $2)",
            &[&m.version, &m.name],
        )
        .await
        .map_err(pg_error(url, "cannot record a schema migration"))?;
    }
    tx.commit()
        .await
        .map_err(pg_error(url, "cannot commit the schema migration"))
}
