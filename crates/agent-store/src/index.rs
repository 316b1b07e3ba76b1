//! The SQLite index of session metadata (`index.sqlite` in the store root, WAL mode).
//!
//! It is a cache of what the logs say, for fast `list` and search: every row can be computed again
//! from its session's log, and `reindex` does so for all. Besides the rows it keeps:
//! - `open_writers`: a session is entered here before its writer touches the log and removed when
//!   the writer closes. A row left behind by a crashed writer marks a session whose index row may
//!   lag its log; opening the store reconciles exactly those.
//! - `meta`: the schema version, and the root directory's modification time when the index last
//!   matched the set of session directories (a changed time means a directory was added or
//!   removed behind the index's back, and triggers a scan).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::metadata::SessionMetadata;

/// The directory of the index in the store root. The index lives apart from the session
/// directories so that SQLite's `-wal` and `-shm` files coming and going do not change the
/// root's mtime, which is how an open notices sessions added or removed behind its back.
pub const INDEX_DIR: &str = ".index";
/// The index's file name in [`INDEX_DIR`].
pub const INDEX_FILE: &str = "index.sqlite";

/// Bumped when the schema changes; a different version triggers a rebuild from the logs.
const SCHEMA_VERSION: &str = "1";

/// The session id rules the rows were checked against (`meta.id_rules`). When an index records an
/// older one, rows whose id the current [`SessionId::parse`] refuses are dropped on open (their
/// directories are no sessions until renamed to a valid id). 2: no whitespace at either end,
/// none but spaces inside, no invisible characters.
const ID_RULES_VERSION: &str = "2";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_us INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    cwd TEXT,
    model TEXT,
    first_prompt TEXT,
    git_branch TEXT,
    size_bytes INTEGER NOT NULL,
    event_count INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    last_event_id TEXT,
    parent_id TEXT,
    fork_point TEXT,
    tags TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (updated_us DESC, id);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_us DESC);
CREATE TABLE IF NOT EXISTS session_tags (
    session_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (session_id, tag)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS session_tags_by_tag ON session_tags (tag, session_id);
CREATE TABLE IF NOT EXISTS open_writers (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL);
";

/// Filters of [`LocalStore::list`](crate::LocalStore::list) and
/// [`SessionBackend::list`](crate::SessionBackend::list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// At most this many sessions (`None`: all).
    pub limit: Option<usize>,
    /// Only sessions whose `cwd` is exactly this.
    pub cwd: Option<String>,
    /// Only sessions with this tag.
    pub tag: Option<String>,
    /// Only sessions whose id, title or first prompt contains this text (case-insensitive for
    /// ASCII).
    pub text: Option<String>,
}

/// An open index.
#[derive(Debug)]
pub struct Index {
    conn: Connection,
    path: PathBuf,
}

const COLUMNS: &str = "id, title, created_at, updated_at, updated_us, message_count, cwd, model, \
    first_prompt, git_branch, size_bytes, event_count, last_seq, last_event_id, parent_id, \
    fork_point, tags";

impl Index {
    /// Opens (creating) the index in `root`. Returns whether it was new or of another schema
    /// version, so needs a full rebuild.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn open(root: &Path) -> Result<(Self, bool)> {
        let dir = root.join(INDEX_DIR);
        if !dir.is_dir() {
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder
                .create(&dir)
                .map_err(|e| StoreError::io("cannot create the index directory", &dir, e))?;
        }
        let path = dir.join(INDEX_FILE);
        let existed = path.exists();
        let conn = Connection::open(&path).map_err(|e| index_err(&path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        let index = Self { conn, path };
        index.setup().map_err(|e| index_err(&index.path, e))?;
        let version: Option<String> = index
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| index_err(&index.path, e))?;
        let fresh = !existed || version.as_deref() != Some(SCHEMA_VERSION);
        if !fresh && index.meta("id_rules")?.as_deref() != Some(ID_RULES_VERSION) {
            index.drop_invalid_ids()?;
        }
        Ok((index, fresh))
    }

    /// Removes the rows of ids the current rules refuse, then records the rules' version.
    fn drop_invalid_ids(&self) -> Result<()> {
        let mut names = Vec::new();
        for sql in [
            "SELECT id FROM sessions",
            "SELECT session_id FROM open_writers",
        ] {
            let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(|e| self.err(e))?;
            for name in rows {
                let name = name.map_err(|e| self.err(e))?;
                if SessionId::parse(&name).is_err() {
                    names.push(name);
                }
            }
        }
        for name in &names {
            tracing::warn!(id = %name, "an indexed session id breaks the id rules; its row is dropped");
            for sql in [
                "DELETE FROM sessions WHERE id = ?1",
                "DELETE FROM session_tags WHERE session_id = ?1",
                "DELETE FROM open_writers WHERE session_id = ?1",
            ] {
                self.conn
                    .execute(sql, [name.as_str()])
                    .map_err(|e| self.err(e))?;
            }
        }
        self.set_meta("id_rules", ID_RULES_VERSION)
    }

    fn setup(&self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(Duration::from_secs(10))?;
        self.conn.pragma_update(None, "journal_mode", "WAL")?;
        // WAL + NORMAL: a commit survives a crash of the process; the log, not the index, is
        // what must survive power loss, and the index is rebuilt from it.
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.execute_batch(SCHEMA)?;
        Ok(())
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        index_err(&self.path, e)
    }

    /// Replaces every row by `sessions` and records the schema version and `root_mtime`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn replace_all(&mut self, sessions: &[SessionMetadata], root_mtime: &str) -> Result<()> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| index_err(&path, e))?;
        let run = || -> rusqlite::Result<()> {
            tx.execute("DELETE FROM sessions", [])?;
            tx.execute("DELETE FROM session_tags", [])?;
            for m in sessions {
                upsert(&tx, m)?;
            }
            set_meta(&tx, "schema", SCHEMA_VERSION)?;
            set_meta(&tx, "id_rules", ID_RULES_VERSION)?;
            set_meta(&tx, "root_mtime", root_mtime)?;
            Ok(())
        };
        run().map_err(|e| index_err(&path, e))?;
        tx.commit().map_err(|e| index_err(&path, e))
    }

    /// Inserts or replaces one session's row.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn put(&mut self, m: &SessionMetadata) -> Result<()> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| index_err(&path, e))?;
        upsert(&tx, m).map_err(|e| index_err(&path, e))?;
        tx.commit().map_err(|e| index_err(&path, e))
    }

    /// Removes a session's row.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn remove(&mut self, id: &SessionId) -> Result<()> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| index_err(&path, e))?;
        let run = || -> rusqlite::Result<()> {
            tx.execute("DELETE FROM sessions WHERE id = ?1", [id.as_str()])?;
            tx.execute(
                "DELETE FROM session_tags WHERE session_id = ?1",
                [id.as_str()],
            )?;
            tx.execute(
                "DELETE FROM open_writers WHERE session_id = ?1",
                [id.as_str()],
            )?;
            Ok(())
        };
        run().map_err(|e| index_err(&path, e))?;
        tx.commit().map_err(|e| index_err(&path, e))
    }

    /// One session's row.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn get(&self, id: &SessionId) -> Result<Option<SessionMetadata>> {
        let sql = format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1");
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        stmt.query_row([id.as_str()], row_to_metadata)
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Every indexed id with its recorded log size.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn sizes(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, size_bytes FROM sessions")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Sessions, most recently updated first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn list(&self, q: &ListQuery) -> Result<Vec<SessionMetadata>> {
        let mut sql = format!("SELECT {COLUMNS} FROM sessions WHERE 1 = 1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(cwd) = &q.cwd {
            args.push(cwd.clone().into());
            sql += &format!(" AND cwd = ?{}", args.len());
        }
        if let Some(tag) = &q.tag {
            args.push(tag.clone().into());
            sql += &format!(
                " AND id IN (SELECT session_id FROM session_tags WHERE tag = ?{})",
                args.len()
            );
        }
        if let Some(text) = &q.text {
            let escaped = text
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            args.push(format!("%{escaped}%").into());
            let n = args.len();
            sql += &format!(
                " AND (id LIKE ?{n} ESCAPE '\\' OR title LIKE ?{n} ESCAPE '\\' OR first_prompt LIKE ?{n} ESCAPE '\\')"
            );
        }
        sql += " ORDER BY updated_us DESC, id ASC";
        if let Some(limit) = q.limit {
            sql += &format!(" LIMIT {limit}");
        }
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), row_to_metadata)
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Records that this process is about to write `id`'s log.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn writer_opened(&self, id: &SessionId) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO open_writers (session_id, pid) VALUES (?1, ?2)",
                params![id.as_str(), std::process::id()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Records that the writer of `id` closed with the index up to date.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn writer_closed(&self, id: &SessionId) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM open_writers WHERE session_id = ?1",
                [id.as_str()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Sessions whose writer has not closed (crashed, or still running).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn open_writers(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT session_id FROM open_writers")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// A `meta` value.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Sets a `meta` value.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        set_meta(&self.conn, key, value).map_err(|e| self.err(e))
    }
}

fn index_err(path: &Path, source: rusqlite::Error) -> StoreError {
    StoreError::Index {
        path: path.to_owned(),
        source,
    }
}

fn set_meta(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
        [key, value],
    )
    .map(drop)
}

fn upsert(conn: &Connection, m: &SessionMetadata) -> rusqlite::Result<()> {
    let tags = serde_json::to_string(&m.tags).unwrap_or_else(|_| "[]".into());
    conn.prepare_cached(&format!(
        "INSERT OR REPLACE INTO sessions ({COLUMNS}) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
    ))?
    .execute(params![
        m.id.as_str(),
        m.title,
        m.created_at,
        m.updated_at,
        m.updated_us,
        m.message_count as i64,
        m.cwd,
        m.model,
        m.first_prompt,
        m.git_branch,
        m.size_bytes as i64,
        m.event_count as i64,
        m.last_seq as i64,
        m.last_event_id,
        m.parent_id,
        m.fork_point,
        tags,
    ])?;
    conn.execute(
        "DELETE FROM session_tags WHERE session_id = ?1",
        [m.id.as_str()],
    )?;
    let mut stmt = conn
        .prepare_cached("INSERT OR IGNORE INTO session_tags (session_id, tag) VALUES (?1, ?2)")?;
    for tag in &m.tags {
        stmt.execute([m.id.as_str(), tag])?;
    }
    Ok(())
}

fn row_to_metadata(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionMetadata> {
    let id: String = r.get(0)?;
    let id = SessionId::parse(&id).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let tags: String = r.get(16)?;
    Ok(SessionMetadata {
        id,
        title: r.get(1)?,
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
        updated_us: r.get(4)?,
        message_count: r.get::<_, i64>(5)? as u64,
        cwd: r.get(6)?,
        model: r.get(7)?,
        first_prompt: r.get(8)?,
        git_branch: r.get(9)?,
        size_bytes: r.get::<_, i64>(10)? as u64,
        event_count: r.get::<_, i64>(11)? as u64,
        last_seq: r.get::<_, i64>(12)? as u64,
        last_event_id: r.get(13)?,
        parent_id: r.get(14)?,
        fork_point: r.get(15)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
    })
}
