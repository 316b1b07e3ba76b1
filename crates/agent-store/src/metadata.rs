//! A session's metadata, derived from its log by folding the events in order. The SQLite index
//! stores the result; it can always be computed again from the log.

use agent_core::events::{Event, EventPayload, parse_rfc3339};
use serde::{Deserialize, Serialize};

use super::id::SessionId;
use super::log::LogContents;

/// What the index knows of one session. Every field is derived from the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMetadata {
    /// The session id (its directory name).
    pub id: SessionId,
    /// The title: the latest `session.title` event, if any.
    pub title: Option<String>,
    /// Tags, sorted (from `session.tag` events).
    pub tags: Vec<String>,
    /// Timestamp of the first event (of a fork: of its `session.fork` event, written with the
    /// copied history); never changes after the first write.
    pub created_at: String,
    /// Timestamp of the last event.
    pub updated_at: String,
    /// Conversation events in the log: `user.message`, `assistant.message`, `tool.use` and
    /// `tool.result` (compaction does not lower it; it indexes `fork --upto`).
    pub message_count: u64,
    /// The working directory of `system.init`.
    pub cwd: Option<String>,
    /// The model of `system.init`.
    pub model: Option<String>,
    /// The text of the first `user.message`.
    pub first_prompt: Option<String>,
    /// The git branch of `system.init`.
    pub git_branch: Option<String>,
    /// Size of the log's complete part, in bytes.
    pub size_bytes: u64,
    /// Number of events.
    pub event_count: u64,
    /// `seq` of the last event (0 when empty).
    pub last_seq: u64,
    /// Id of the last event.
    pub last_event_id: Option<String>,
    /// The session this one was forked from.
    pub parent_id: Option<String>,
    /// Id of the last event copied from the parent.
    pub fork_point: Option<String>,
    /// `updated_at` as microseconds since the Unix epoch (the list order).
    #[serde(skip)]
    pub updated_us: i64,
}

/// The longest first prompt kept in the index (characters); the log has the whole text.
pub const FIRST_PROMPT_CHARS: usize = 500;

impl SessionMetadata {
    /// The metadata of a session with no events yet.
    pub fn empty(id: SessionId) -> Self {
        Self {
            id,
            title: None,
            tags: Vec::new(),
            created_at: String::new(),
            updated_at: String::new(),
            message_count: 0,
            cwd: None,
            model: None,
            first_prompt: None,
            git_branch: None,
            size_bytes: 0,
            event_count: 0,
            last_seq: 0,
            last_event_id: None,
            parent_id: None,
            fork_point: None,
            updated_us: 0,
        }
    }

    /// Folds one more event (whose line, newline included, is `line_bytes` long) into the
    /// metadata.
    pub fn apply(&mut self, event: &Event, line_bytes: u64) {
        if self.event_count == 0 {
            self.created_at = event.ts.clone();
        }
        self.event_count += 1;
        self.size_bytes += line_bytes;
        self.last_seq = event.seq;
        self.last_event_id = Some(event.id.0.clone());
        self.updated_at = event.ts.clone();
        self.updated_us = micros(&event.ts).max(self.updated_us);
        match &event.payload {
            EventPayload::SystemInit(init) => {
                if init.cwd.is_some() {
                    self.cwd.clone_from(&init.cwd);
                }
                if init.model.is_some() {
                    self.model.clone_from(&init.model);
                }
                if init.git_branch.is_some() {
                    self.git_branch.clone_from(&init.git_branch);
                }
            }
            EventPayload::UserMessage(m) => {
                self.message_count += 1;
                // Context the runtime injected (`isMeta`) is not the user's prompt.
                let is_meta = event
                    .extra
                    .get("isMeta")
                    .and_then(serde_json::Value::as_bool)
                    == Some(true);
                if self.first_prompt.is_none() && !is_meta {
                    self.first_prompt = Some(m.text.chars().take(FIRST_PROMPT_CHARS).collect());
                }
            }
            EventPayload::AssistantMessage(_)
            | EventPayload::ToolUse(_)
            | EventPayload::ToolResult(_) => self.message_count += 1,
            EventPayload::SessionTitle(t) => self.title = Some(t.title.clone()),
            EventPayload::SessionTag(t) => {
                let at = self.tags.binary_search(&t.tag);
                match (at, t.removed) {
                    (Err(i), false) => self.tags.insert(i, t.tag.clone()),
                    (Ok(i), true) => {
                        self.tags.remove(i);
                    }
                    _ => {}
                }
            }
            EventPayload::SessionFork(f) => {
                // A fork came into being when it was forked, not when its copied history began.
                self.created_at = event.ts.clone();
                self.parent_id = Some(f.parent_session_id.clone());
                self.fork_point.clone_from(&f.fork_point);
            }
            _ => {}
        }
    }
}

/// Folds a log's events into metadata.
pub fn fold(id: &SessionId, contents: &LogContents) -> SessionMetadata {
    let mut meta = SessionMetadata::empty(id.clone());
    for (_, event) in &contents.entries {
        meta.apply(event, 0);
    }
    meta.size_bytes = contents.good_len();
    meta
}

/// Whether an event is one of the conversation events counted by `message_count`.
pub fn is_conversation(event: &Event) -> bool {
    matches!(
        event.payload,
        EventPayload::UserMessage(_)
            | EventPayload::AssistantMessage(_)
            | EventPayload::ToolUse(_)
            | EventPayload::ToolResult(_)
    )
}

/// Microseconds since the Unix epoch of an RFC 3339 timestamp (0 when it cannot be read, which
/// decoding already rules out for logged events).
pub fn micros(ts: &str) -> i64 {
    parse_rfc3339(ts)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}
