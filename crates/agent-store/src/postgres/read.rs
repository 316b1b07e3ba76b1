//! Reads: metadata, events (whole or a window from the tail), the conversation (whole or its
//! last messages, read backwards by `seq`), the list, and exports. Reads take no lock: each
//! reads the session row first and then only events up to that row's `last_seq`, which an
//! append writes together with the row.

use std::path::PathBuf;

use agent_core::events::{Event, decode_line};
use tokio_postgres::Row;

use super::{PgStore, pg_error};
use crate::error::{Result, StoreError};
use crate::export::{ExportFormat, claude_transcript};
use crate::id::SessionId;
use crate::index::ListQuery;
use crate::messages::{TailMessages, TranscriptMessage, conversation};
use crate::metadata::SessionMetadata;
use crate::read::{LoadRange, Loaded};

/// Events read backwards by the last query of a tail when the first ones were not enough: pages
/// start at what is wanted (plus a little for events that are not messages) and double up to
/// this.
const TAIL_PAGE_MAX: i64 = 4096;

/// The metadata in a row's `meta` (text) and `updated_us` columns.
pub(super) fn meta_of(
    row: &Row,
    meta: usize,
    updated_us: usize,
    url: &str,
) -> Result<SessionMetadata> {
    let text: String = row.get(meta);
    let mut m: SessionMetadata = serde_json::from_str(&text).map_err(|e| StoreError::Postgres {
        url: url.to_owned(),
        action: "cannot read a session row",
        message: format!("its metadata is not what this version writes ({e}); `agent sessions reindex` rewrites it from the events"),
    })?;
    m.updated_us = row.get(updated_us);
    Ok(m)
}

impl PgStore {
    /// A session's metadata: its row (always in step with its events).
    pub(super) async fn read_metadata(&self, id: &SessionId) -> Result<SessionMetadata> {
        if let Some(w) = self.inner.writers.lock().await.get(id).cloned() {
            return Ok(w.lock().await.meta.clone());
        }
        let conn = self.inner.pool.get().await?;
        let row = conn
            .query_opt(
                "SELECT meta::text, updated_us FROM agent_sessions WHERE id = $1",
                &[&id.as_str()],
            )
            .await
            .map_err(pg_error(self.url(), "cannot read a session"))?;
        match row {
            Some(row) => meta_of(&row, 0, 1, self.url()),
            None => Err(self.not_found(id)),
        }
    }

    /// Decodes event lines (each `(seq, line)`), naming the first bad one.
    pub(super) fn decode(&self, id: &SessionId, rows: &[Row]) -> Result<Vec<Event>> {
        rows.iter()
            .map(|row| {
                let seq: i64 = row.get(0);
                let line: &str = row.get(1);
                decode_line(line).map_err(|source| StoreError::Corrupt {
                    id: id.clone(),
                    path: PathBuf::from(format!("{} (table agent_events)", self.url())),
                    line: usize::try_from(seq).unwrap_or(usize::MAX),
                    source,
                })
            })
            .collect()
    }

    /// Event rows `(seq, line)` of `id` with `seq <= upto`, oldest first.
    pub(super) async fn all_rows(&self, id: &SessionId, upto: u64) -> Result<Vec<Row>> {
        let conn = self.inner.pool.get().await?;
        conn.query(
            "SELECT seq, line FROM agent_events WHERE session_id = $1 AND seq <= $2 ORDER BY seq",
            &[&id.as_str(), &to_i64(upto)],
        )
        .await
        .map_err(pg_error(self.url(), "cannot read a session's events"))
    }

    /// Events: all, or a window from the tail.
    pub(super) async fn load_events(&self, id: &SessionId, range: LoadRange) -> Result<Loaded> {
        let meta = self.read_metadata(id).await?;
        let rows = if range.offset == 0 && range.limit.is_none() {
            self.all_rows(id, meta.last_seq).await?
        } else {
            let conn = self.inner.pool.get().await?;
            let limit = range
                .limit
                .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
            let mut rows = conn
                .query(
                    "SELECT seq, line FROM agent_events WHERE session_id = $1 AND seq <= $2
                      ORDER BY seq DESC OFFSET $3 LIMIT $4",
                    &[
                        &id.as_str(),
                        &to_i64(meta.last_seq),
                        &i64::try_from(range.offset).unwrap_or(i64::MAX),
                        &limit,
                    ],
                )
                .await
                .map_err(pg_error(self.url(), "cannot read a session's events"))?;
            rows.reverse();
            rows
        };
        Ok(Loaded {
            events: self.decode(id, &rows)?,
            torn: None,
        })
    }

    /// The conversation, or its last `limit` messages, read backwards a page at a time.
    pub(super) async fn read_messages(
        &self,
        id: &SessionId,
        limit: Option<usize>,
    ) -> Result<Vec<TranscriptMessage>> {
        let meta = self.read_metadata(id).await?;
        let Some(want) = limit else {
            let rows = self.all_rows(id, meta.last_seq).await?;
            return Ok(conversation(&self.decode(id, &rows)?));
        };
        let mut builder = TailMessages::new(want, meta.message_count);
        let mut below = to_i64(meta.last_seq).saturating_add(1);
        let mut page = i64::try_from(want)
            .unwrap_or(TAIL_PAGE_MAX)
            .saturating_add(16)
            .min(TAIL_PAGE_MAX);
        let conn = self.inner.pool.get().await?;
        'pages: loop {
            let rows = conn
                .query(
                    "SELECT seq, line FROM agent_events WHERE session_id = $1 AND seq < $2
                      ORDER BY seq DESC LIMIT $3",
                    &[&id.as_str(), &below, &page],
                )
                .await
                .map_err(pg_error(self.url(), "cannot read a session's events"))?;
            let Some(last) = rows.last() else {
                break;
            };
            below = last.get(0);
            let short = i64::try_from(rows.len()).unwrap_or(i64::MAX) < page;
            for event in self.decode(id, &rows)? {
                if builder.push(&event) {
                    break 'pages;
                }
            }
            if short {
                break;
            }
            page = page.saturating_mul(2).min(TAIL_PAGE_MAX);
        }
        Ok(builder.finish())
    }

    /// Sessions, most recently updated first.
    pub(super) async fn list_sessions(&self, query: &ListQuery) -> Result<Vec<SessionMetadata>> {
        let text = query.text.as_ref().map(|t| t.to_ascii_lowercase());
        let limit = query
            .limit
            .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let conn = self.inner.pool.get().await?;
        // `lower(... COLLATE "C")` folds ASCII only, as the local index's LIKE does.
        let rows = conn
            .query(
                r#"SELECT meta::text, updated_us FROM agent_sessions
                    WHERE ($1::text IS NULL OR cwd = $1)
                      AND ($2::text IS NULL OR $2 = ANY (tags))
                      AND ($3::text IS NULL
                           OR strpos(lower(id COLLATE "C"), $3) > 0
                           OR strpos(lower(coalesce(title, '') COLLATE "C"), $3) > 0
                           OR strpos(lower(coalesce(first_prompt, '') COLLATE "C"), $3) > 0)
                    ORDER BY updated_us DESC, id ASC
                    LIMIT $4"#,
                &[&query.cwd, &query.tag, &text, &limit],
            )
            .await
            .map_err(pg_error(self.url(), "cannot list sessions"))?;
        drop(conn);
        // This store's own writers' rows are current already (one statement per append).
        rows.iter().map(|r| meta_of(r, 0, 1, self.url())).collect()
    }

    /// The session as text: its lines verbatim, or a Claude Code transcript.
    pub(super) async fn export_session(
        &self,
        id: &SessionId,
        format: ExportFormat,
    ) -> Result<String> {
        let meta = self.read_metadata(id).await?;
        let rows = self.all_rows(id, meta.last_seq).await?;
        match format {
            ExportFormat::Jsonl => {
                let mut text = String::with_capacity(usize::try_from(meta.size_bytes).unwrap_or(0));
                for row in &rows {
                    text += row.get::<_, &str>(1);
                    text.push('\n');
                }
                Ok(text)
            }
            ExportFormat::Claude => {
                let events = self.decode(id, &rows)?;
                Ok(claude_transcript(&meta, &events))
            }
        }
    }
}

/// A `seq` or count as PostgreSQL's `bigint`.
pub(super) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
