//! Writes: create, append, import, fork, rename, tag, delete and reindex. A whole new session
//! (create, import, fork) is one transaction; an append is one statement that checks the
//! writer's lease and the last `seq`, advances the row and inserts the events.

use agent_core::events::{Event, EventPayload, SessionTag, SessionTitle, decode_line, encode_line};
use tokio_postgres::types::ToSql;

use super::lease::{Writer, seconds};
use super::read::{meta_of, to_i64};
use super::{PgStore, pg_error};
use crate::append::stamp;
use crate::create::{NewSession, initial_log};
use crate::error::{Result, StoreError};
use crate::fork::{ForkOptions, fork_cut, fork_event};
use crate::id::SessionId;
use crate::import::prepare;
use crate::metadata::SessionMetadata;

/// Events inserted per statement when a whole session is written.
const INSERT_CHUNK: usize = 4096;

const APPEND: &str = "
WITH advanced AS (
    UPDATE agent_sessions
       SET meta = $4::text::jsonb, updated_us = $5, cwd = $6, title = $7, first_prompt = $8,
           tags = $9, last_seq = $10,
           lease_until = clock_timestamp() + make_interval(secs => $11)
     WHERE id = $1 AND lease_holder = $2 AND lease_token = $3 AND last_seq = $12
 RETURNING id)
INSERT INTO agent_events (session_id, seq, event_id, kind, line)
SELECT advanced.id, e.seq, e.event_id, e.kind, e.line
  FROM advanced,
       unnest($13::bigint[], $14::text[], $15::text[], $16::text[]) AS e(seq, event_id, kind, line)";

/// One event as a row: `seq`, id, type, line.
struct EventRow {
    seq: i64,
    id: String,
    kind: String,
    line: String,
}

/// Event rows and the metadata folded from a whole log's text (lines ending in `\n`).
fn rows_of(id: &SessionId, text: &str) -> Result<(Vec<EventRow>, SessionMetadata)> {
    let mut meta = SessionMetadata::empty(id.clone());
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event = decode_line(line).map_err(|e| StoreError::BadInput(e.to_string()))?;
        meta.apply(&event, line.len() as u64 + 1);
        rows.push(EventRow {
            seq: to_i64(event.seq),
            id: event.id.0.clone(),
            kind: event.type_name().to_owned(),
            line: line.to_owned(),
        });
    }
    Ok((rows, meta))
}

fn meta_json(meta: &SessionMetadata) -> Result<String> {
    serde_json::to_string(meta).map_err(|e| StoreError::BadInput(format!("session metadata: {e}")))
}

impl PgStore {
    /// Writes a whole new session in one transaction: its row (with this store's lease when
    /// `hold`) and its events.
    async fn insert_new(&self, id: &SessionId, text: &str, hold: bool) -> Result<SessionMetadata> {
        let url = self.url().to_owned();
        let (rows, meta) = rows_of(id, text)?;
        let json = meta_json(&meta)?;
        let mut conn = self.inner.pool.get().await?;
        let tx = conn
            .transaction()
            .await
            .map_err(pg_error(&url, "cannot start a transaction"))?;
        let holder = hold.then(|| self.inner.me.clone());
        let lease_secs = hold.then(|| seconds(self.inner.options.lease));
        let presence = hold.then(|| self.presence_pid());
        let host = hold.then(|| self.inner.host.clone());
        let pid = hold.then_some(self.inner.pid);
        let inserted = tx
            .query_opt(
                "INSERT INTO agent_sessions
                     (id, meta, updated_us, cwd, title, first_prompt, tags, last_seq,
                      lease_holder, lease_token, lease_until, lease_backend, lease_host, lease_pid)
                 VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7, $8,
                         $9, 1, clock_timestamp() + make_interval(secs => $10), $11, $12, $13)
                 ON CONFLICT (id) DO NOTHING
                 RETURNING lease_token",
                &[
                    &id.as_str(),
                    &json,
                    &meta.updated_us,
                    &meta.cwd,
                    &meta.title,
                    &meta.first_prompt,
                    &meta.tags,
                    &to_i64(meta.last_seq),
                    &holder,
                    &lease_secs,
                    &presence,
                    &host,
                    &pid,
                ],
            )
            .await
            .map_err(pg_error(&url, "cannot create a session"))?;
        let Some(inserted) = inserted else {
            return Err(StoreError::AlreadyExists { id: id.clone() });
        };
        for chunk in rows.chunks(INSERT_CHUNK) {
            let seqs: Vec<i64> = chunk.iter().map(|r| r.seq).collect();
            let ids: Vec<&str> = chunk.iter().map(|r| r.id.as_str()).collect();
            let kinds: Vec<&str> = chunk.iter().map(|r| r.kind.as_str()).collect();
            let lines: Vec<&str> = chunk.iter().map(|r| r.line.as_str()).collect();
            tx.execute(
                "INSERT INTO agent_events (session_id, seq, event_id, kind, line)
                 SELECT $1, e.seq, e.event_id, e.kind, e.line
                   FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[])
                        AS e(seq, event_id, kind, line)",
                &[&id.as_str(), &seqs, &ids, &kinds, &lines],
            )
            .await
            .map_err(pg_error(&url, "cannot write a session's events"))?;
        }
        tx.commit()
            .await
            .map_err(pg_error(&url, "cannot commit a new session"))?;
        if hold {
            let writer = Writer {
                token: inserted.get(0),
                meta: meta.clone(),
            };
            self.inner.writers.lock().await.insert(
                id.clone(),
                std::sync::Arc::new(tokio::sync::Mutex::new(writer)),
            );
        }
        Ok(meta)
    }

    async fn exists(&self, id: &SessionId) -> Result<bool> {
        let conn = self.inner.pool.get().await?;
        let row = conn
            .query_opt(
                "SELECT 1 FROM agent_sessions WHERE id = $1",
                &[&id.as_str()],
            )
            .await
            .map_err(pg_error(self.url(), "cannot read a session"))?;
        Ok(row.is_some())
    }

    /// Creates a session (its log starts with `system.init`) and keeps its lease for appends.
    pub(super) async fn create_session(&self, new: NewSession) -> Result<SessionMetadata> {
        let id = new.id.clone().unwrap_or_else(SessionId::generate);
        let text = initial_log(&id, new)?;
        self.insert_new(&id, &text, true).await
    }

    /// Imports an events JSONL as a new session, checked as the local store checks it.
    pub(super) async fn import_session(
        &self,
        jsonl: &str,
        id: Option<SessionId>,
    ) -> Result<SessionMetadata> {
        let id = id.unwrap_or_else(SessionId::generate);
        if self.exists(&id).await? {
            return Err(StoreError::AlreadyExists { id });
        }
        let text = prepare(jsonl, &id)?;
        self.insert_new(&id, &text, false).await
    }

    /// Copies a session's history (whole, or up to a point) into a new session.
    pub(super) async fn fork_session(
        &self,
        source: &SessionId,
        options: ForkOptions,
    ) -> Result<SessionMetadata> {
        let meta = self.read_metadata(source).await?;
        let rows = self.all_rows(source, meta.last_seq).await?;
        let decoded = self.decode(source, &rows)?;
        let events: Vec<&Event> = decoded.iter().collect();
        let keep = fork_cut(source, &events, &options.at)?;
        let new_id = options.new_id.unwrap_or_else(SessionId::generate);
        if self.exists(&new_id).await? {
            return Err(StoreError::AlreadyExists { id: new_id });
        }
        // The lines are copied as stored (byte for byte), not re-encoded.
        let mut out = String::new();
        for row in rows.iter().take(keep) {
            out += row.get::<_, &str>(1);
            out.push('\n');
        }
        let fork = fork_event(
            source,
            keep.checked_sub(1).and_then(|i| events.get(i).copied()),
        );
        out += &encode_line(&fork).map_err(|e| StoreError::BadInput(e.to_string()))?;
        out.push('\n');
        self.insert_new(&new_id, &out, false).await
    }

    /// Appends events under this store's lease: one statement, durable on return.
    pub(super) async fn append_events(
        &self,
        id: &SessionId,
        events: Vec<Event>,
    ) -> Result<Vec<Event>> {
        if events.is_empty() {
            return Ok(events);
        }
        let writer = self.writer(id).await?;
        let mut w = writer.lock().await;
        let (stamped, lines) = stamp(events, w.meta.last_seq, w.meta.last_event_id.clone())?;
        let mut meta = w.meta.clone();
        for (e, line) in stamped.iter().zip(&lines) {
            meta.apply(e, line.len() as u64 + 1);
        }
        let json = meta_json(&meta)?;
        let seqs: Vec<i64> = stamped.iter().map(|e| to_i64(e.seq)).collect();
        let ids: Vec<&str> = stamped.iter().map(|e| e.id.as_str()).collect();
        let kinds: Vec<&str> = stamped.iter().map(Event::type_name).collect();
        let line_refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let params: [&(dyn ToSql + Sync); 16] = [
            &id.as_str(),
            &self.inner.me,
            &w.token,
            &json,
            &meta.updated_us,
            &meta.cwd,
            &meta.title,
            &meta.first_prompt,
            &meta.tags,
            &to_i64(meta.last_seq),
            &seconds(self.inner.options.lease),
            &to_i64(w.meta.last_seq),
            &seqs,
            &ids,
            &kinds,
            &line_refs,
        ];
        let conn = self.inner.pool.get().await?;
        let written = conn.execute(APPEND, &params).await;
        drop(conn);
        match written {
            Ok(n) if n == seqs.len() as u64 => {
                w.meta = meta;
                Ok(stamped)
            }
            Ok(_) => {
                drop(w);
                Err(self.lost(id).await)
            }
            Err(e) => {
                // The commit may or may not have happened (a connection lost mid-commit): the
                // next write re-reads the row instead of trusting this writer's copy.
                drop(w);
                self.inner.writers.lock().await.remove(id);
                Err(pg_error(self.url(), "cannot append")(e))
            }
        }
    }

    /// Sets the title (appends a `session.title` event).
    pub(super) async fn rename_session(
        &self,
        id: &SessionId,
        title: &str,
    ) -> Result<SessionMetadata> {
        let e = Event::new(
            0,
            None,
            EventPayload::SessionTitle(SessionTitle {
                title: title.to_owned(),
            }),
        );
        self.append_events(id, vec![e]).await?;
        self.read_metadata(id).await
    }

    /// Adds or removes a tag (appends a `session.tag` event).
    pub(super) async fn tag_session(
        &self,
        id: &SessionId,
        tag: &str,
        removed: bool,
    ) -> Result<SessionMetadata> {
        if tag.trim().is_empty() {
            return Err(StoreError::BadInput("a tag must not be empty".into()));
        }
        let e = Event::new(
            0,
            None,
            EventPayload::SessionTag(SessionTag {
                tag: tag.to_owned(),
                removed,
            }),
        );
        self.append_events(id, vec![e]).await?;
        self.read_metadata(id).await
    }

    /// Deletes a session (its events go with it). Refused while another store writes it.
    pub(super) async fn delete_session(&self, id: &SessionId) -> Result<()> {
        let writer = self.writer(id).await?;
        let token = writer.lock().await.token;
        let conn = self.inner.pool.get().await?;
        let n = conn
            .execute(
                "DELETE FROM agent_sessions WHERE id = $1 AND lease_holder = $2 AND lease_token = $3",
                &[&id.as_str(), &self.inner.me, &token],
            )
            .await
            .map_err(pg_error(self.url(), "cannot delete a session"))?;
        drop(conn);
        if n == 0 {
            return Err(self.lost(id).await);
        }
        self.inner.writers.lock().await.remove(id);
        Ok(())
    }

    /// Recomputes every session row from its events (after events were changed by hand, or a
    /// row by an older version); returns how many sessions were checked. Rows being appended
    /// to meanwhile are left to their writer.
    ///
    /// # Errors
    /// [`StoreError::Postgres`]; [`StoreError::Corrupt`] for an event that is not valid.
    pub async fn reindex(&self) -> Result<usize> {
        let ids: Vec<String> = {
            let conn = self.inner.pool.get().await?;
            conn.query("SELECT id FROM agent_sessions ORDER BY id", &[])
                .await
                .map_err(pg_error(self.url(), "cannot list sessions"))?
                .iter()
                .map(|r| r.get(0))
                .collect()
        };
        let mut checked = 0;
        for name in ids {
            let Ok(id) = SessionId::parse(&name) else {
                tracing::warn!(id = %name, "a session row with an invalid id was left alone");
                continue;
            };
            let conn = self.inner.pool.get().await?;
            let row = conn
                .query_opt(
                    "SELECT meta::text, updated_us, last_seq FROM agent_sessions WHERE id = $1",
                    &[&id.as_str()],
                )
                .await
                .map_err(pg_error(self.url(), "cannot read a session"))?;
            let Some(row) = row else { continue };
            let last_seq: i64 = row.get(2);
            let stored = meta_of(&row, 0, 1, self.url()).ok();
            drop(conn);
            let lines = self
                .all_rows(&id, u64::try_from(last_seq).unwrap_or(0))
                .await?;
            let mut text = String::new();
            for r in &lines {
                text += r.get::<_, &str>(1);
                text.push('\n');
            }
            let (_, meta) = rows_of(&id, &text)?;
            if stored.as_ref() != Some(&meta)
                || stored.map(|s| s.updated_us) != Some(meta.updated_us)
            {
                let conn = self.inner.pool.get().await?;
                conn.execute(
                    "UPDATE agent_sessions
                        SET meta = $2::text::jsonb, updated_us = $3, cwd = $4, title = $5,
                            first_prompt = $6, tags = $7
                      WHERE id = $1 AND last_seq = $8",
                    &[
                        &id.as_str(),
                        &meta_json(&meta)?,
                        &meta.updated_us,
                        &meta.cwd,
                        &meta.title,
                        &meta.first_prompt,
                        &meta.tags,
                        &last_seq,
                    ],
                )
                .await
                .map_err(pg_error(self.url(), "cannot rewrite a session row"))?;
            }
            checked += 1;
        }
        Ok(checked)
    }
}
