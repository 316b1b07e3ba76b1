//! Export views of a session.
//!
//! `Jsonl` is the log itself. `Claude` is the transcript shape Claude Code writes under
//! `~/.claude/projects/` (compat/claude-code.md §6.3): one `user` or `assistant` line per
//! conversation event, chained through `uuid`/`parentUuid`, plus a first `summary` line with the title (anchored at the last message) and
//! `system` compact-boundary lines for compactions. Hooks and tools that scan Claude Code
//! transcripts (for example a `Stop` hook reading the last assistant text) read it unchanged.
//!
//! [`LocalStore::export`] renders a stored session in either format.

use agent_core::events::{Event, EventPayload};
use serde_json::{Value, json};

use super::error::Result;
use super::id::SessionId;
use super::local::LocalStore;
use super::log;
use super::metadata::{SessionMetadata, fold};

/// The export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// The events JSONL, byte for byte (what `import` reads).
    Jsonl,
    /// A Claude-Code-compatible transcript JSONL.
    Claude,
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "jsonl" => Ok(Self::Jsonl),
            "claude" => Ok(Self::Claude),
            other => Err(format!(
                "unknown export format `{other}`; use `jsonl` or `claude`"
            )),
        }
    }
}

impl LocalStore {
    /// The session as text: its log's lines verbatim (`Jsonl`, unknown events included), or a
    /// Claude-Code-compatible transcript (`Claude`).
    ///
    /// # Errors
    /// As [`LocalStore::load`].
    pub fn export(&self, id: &SessionId, format: ExportFormat) -> Result<String> {
        let path = self.require(id)?;
        let contents = log::read_all(id, &path)?;
        match format {
            ExportFormat::Jsonl => Ok(contents.text),
            ExportFormat::Claude => {
                let meta = fold(id, &contents);
                Ok(claude_transcript(
                    &meta,
                    contents.entries.iter().map(|(_, e)| e),
                ))
            }
        }
    }
}

/// The version string written in the transcript's `version` field.
const VERSION: &str = concat!("agent-runtime/", env!("CARGO_PKG_VERSION"));

/// Renders a session as a Claude Code transcript.
pub fn claude_transcript<'a>(
    meta: &SessionMetadata,
    events: impl IntoIterator<Item = &'a Event>,
) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    let mut model = meta.model.clone();
    for event in events {
        let envelope = |kind: &str, message: Value, parent: &Option<String>| {
            let mut line = json!({
                "type": kind,
                "uuid": event.id.as_str(),
                "parentUuid": parent,
                "sessionId": meta.id.as_str(),
                "timestamp": event.ts,
                "cwd": meta.cwd,
                "version": VERSION,
                "isSidechain": false,
                "userType": "external",
                "message": message,
            });
            if let (Some(branch), Some(obj)) = (&meta.git_branch, line.as_object_mut()) {
                obj.insert("gitBranch".into(), Value::String(branch.clone()));
            }
            line
        };
        let assistant = |content: Value, model: &Option<String>| {
            json!({
                "id": format!("msg_{}", event.id.as_str().replace('-', "")),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
            })
        };
        let line = match &event.payload {
            EventPayload::SystemInit(init) => {
                if init.model.is_some() {
                    model.clone_from(&init.model);
                }
                None
            }
            EventPayload::UserMessage(m) => Some(envelope(
                "user",
                json!({"role": "user", "content": m.text}),
                &parent,
            )),
            EventPayload::AssistantMessage(m) => Some(envelope(
                "assistant",
                assistant(json!([{"type": "text", "text": m.text}]), &model),
                &parent,
            )),
            EventPayload::ToolUse(t) => Some(envelope(
                "assistant",
                assistant(
                    json!([{"type": "tool_use", "id": t.tool_use_id, "name": t.name, "input": t.input}]),
                    &model,
                ),
                &parent,
            )),
            EventPayload::ToolResult(r) => {
                let content = match &r.output {
                    Value::String(s) => Value::String(s.clone()),
                    other => Value::String(other.to_string()),
                };
                Some(envelope(
                    "user",
                    json!({"role": "user", "content": [{
                        "type": "tool_result",
                        "tool_use_id": r.tool_use_id,
                        "content": content,
                        "is_error": r.is_error,
                    }]}),
                    &parent,
                ))
            }
            // The title goes first, once, as Claude Code writes it (below).
            EventPayload::SessionTitle(_) => None,
            EventPayload::Compaction(c) => {
                let mut line = envelope("system", Value::Null, &parent);
                if let Some(obj) = line.as_object_mut() {
                    obj.remove("message");
                    obj.insert("subtype".into(), json!("compact_boundary"));
                    obj.insert("content".into(), json!(c.summary));
                    obj.insert(
                        "compactMetadata".into(),
                        json!({"fromSeq": c.from_seq, "toSeq": c.to_seq}),
                    );
                }
                Some(line)
            }
            _ => None,
        };
        if let Some(line) = line {
            out += &line.to_string();
            out.push('\n');
            parent = Some(event.id.0.clone());
        }
    }
    // Claude Code puts `summary` lines at the top of the file, anchored at the last message.
    match &meta.title {
        Some(title) => {
            let summary = json!({"type": "summary", "summary": title, "leafUuid": parent});
            format!("{summary}\n{out}")
        }
        None => out,
    }
}
