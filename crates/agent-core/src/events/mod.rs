//! The session log's vocabulary: an append-only sequence of [`Event`]s.
//!
//! Every session is a JSONL file of events; the log is the source of truth and everything else
//! (the provider-facing conversation, metadata, indexes) is derived from it. Each line is one
//! JSON object: the common envelope (`v`, `seq`, `id`, `parent`, `ts`, `type`) followed by the
//! fields of the event's payload, named in camelCase as in the TypeScript SDK this format
//! shares with (seed 004), so that its logs and ours read each other.
//!
//! Forward compatibility is a hard rule: reading an event of an unknown `type`, or a known event
//! with fields this version does not know, never fails. Unknown types decode to
//! [`EventPayload::Unknown`] and unknown fields are kept in [`Event::extra`]; both are written
//! back unchanged by [`encode_line`]. The schema is documented in `docs/events.md`.
//!
//! ```
//! use agent_core::events::{decode_line, encode_line, Event, EventPayload, UserMessage};
//!
//! let event = Event::new(1, None, EventPayload::UserMessage(UserMessage { text: "hi".into() }));
//! let line = encode_line(&event)?;
//! let back = decode_line(&line)?;
//! assert_eq!(back, event);
//!
//! // A line written by a newer version keeps what this version does not understand.
//! let future = r#"{"v":1,"seq":2,"id":"e2","parent":null,"ts":"2026-01-01T00:00:00Z","type":"tool.progress","percent":50}"#;
//! let event = decode_line(future)?;
//! assert!(matches!(event.payload, EventPayload::Unknown { .. }));
//! assert_eq!(encode_line(&event)?, future);
//! # Ok::<(), agent_core::events::EventError>(())
//! ```

mod codec;
mod envelope;
mod payload;

pub use codec::{EventError, JsonlReader, decode_line, encode_line};
pub use envelope::{
    EVENT_FORMAT_VERSION, Event, EventId, now_rfc3339, parse_rfc3339, rfc3339_millis,
};
pub use payload::{
    AssistantDelta, AssistantMessage, Compaction, ErrorEvent, EventPayload, HookRun,
    PermissionDecisionEvent, PermissionQuestion, ResultEvent, SessionFork, SessionTag,
    SessionTitle, SubagentStart, SubagentStop, SystemInit, TokenUsage, ToolResultEvent, ToolUse,
    UserMessage, WorkspaceCommit, WorkspaceDiff, WorkspaceImport,
};
