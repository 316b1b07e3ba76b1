//! Export views of a session.
//!
//! `Jsonl` is the log itself. `Claude` is the transcript shape Claude Code writes under
//! `~/.claude/projects/` (compat/claude-code.md §6.3): one `user` or `assistant` line per
//! conversation event, chained through `uuid`/`parentUuid`, plus a first `summary` line with
//! the title (anchored at the last message) and `system` compact-boundary lines for
//! compactions. Hooks and tools that scan Claude Code transcripts (a `Stop` hook reading the
//! last assistant text, ccusage adding up tokens, claude-code-log rendering HTML) read it
//! unchanged.
//!
//! [`LocalStore::export`] renders a stored session in either format.

use agent_core::events::{Event, EventPayload, TokenUsage, rfc3339_millis};
use serde_json::{Map, Value, json};

use super::error::Result;
use super::id::SessionId;
use super::local::LocalStore;
use super::log;
use super::messages::output_text;
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

/// The transcript's `version`: the crate's own version, a plain semver (ccusage skips a line
/// whose `version` does not start with `N.N.N`).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Renders a session as a Claude Code transcript.
///
/// What readers of Claude Code transcripts need, and get (docs/sessions.md, Exports):
/// - each assistant line's `message` has `id`, `model` and `usage` in the Anthropic API's
///   snake_case (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`,
///   `cache_read_input_tokens`), and the line a `requestId`: one model answer's text and
///   tool-use lines share them, as Claude Code writes them, so ccusage counts each answer once
///   (it deduplicates on `message.id` + `requestId`);
/// - `timestamp` in UTC milliseconds, `version` a plain semver, `cwd` the real folder;
/// - a tool result's `content` is the text the model was sent, its structured output in
///   `toolUseResult` (as Claude Code keeps it);
/// - `isMeta: true` on text the runtime injected (hook context, notices).
///
/// A field whose value is unknown is left out rather than written as `null`: ccusage skips a
/// line with a null `model`, `cwd`, `version`, `sessionId` or `requestId`.
pub fn claude_transcript<'a>(
    meta: &SessionMetadata,
    events: impl IntoIterator<Item = &'a Event>,
) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    let mut model = meta.model.clone();
    for event in events {
        let timestamp = rfc3339_millis(&event.ts).unwrap_or_else(|| event.ts.clone());
        let envelope = |kind: &str, message: Value, parent: &Option<String>| {
            let mut line = Map::new();
            line.insert("parentUuid".into(), json!(parent));
            line.insert("isSidechain".into(), json!(false));
            line.insert("userType".into(), json!("external"));
            if let Some(cwd) = &meta.cwd {
                line.insert("cwd".into(), json!(cwd));
            }
            line.insert("sessionId".into(), json!(meta.id.as_str()));
            line.insert("version".into(), json!(VERSION));
            if let Some(branch) = &meta.git_branch {
                line.insert("gitBranch".into(), json!(branch));
            }
            line.insert("type".into(), json!(kind));
            line.insert("message".into(), message);
            line.insert("uuid".into(), json!(event.id.as_str()));
            line.insert("timestamp".into(), json!(timestamp));
            line
        };
        let assistant = |answer: Answer<'_>, content: Value, model: &Option<String>| {
            let mut message = Map::new();
            let id = answer.message_id.map_or_else(
                || format!("msg_{}", event.id.as_str().replace('-', "")),
                str::to_owned,
            );
            message.insert("id".into(), json!(id));
            message.insert("type".into(), json!("message"));
            message.insert("role".into(), json!("assistant"));
            if let Some(m) = answer.model.or(model.as_deref()) {
                message.insert("model".into(), json!(m));
            }
            message.insert("content".into(), content);
            if let Some(u) = answer.usage {
                message.insert(
                    "usage".into(),
                    json!({
                        "input_tokens": u.input_tokens,
                        "output_tokens": u.output_tokens,
                        "cache_creation_input_tokens": u.cache_creation_input_tokens,
                        "cache_read_input_tokens": u.cache_read_input_tokens,
                    }),
                );
            }
            let mut line = envelope("assistant", Value::Object(message), &parent);
            if let Some(r) = answer.request_id {
                line.insert("requestId".into(), json!(r));
            }
            line
        };
        let line = match &event.payload {
            EventPayload::SystemInit(init) => {
                if init.model.is_some() {
                    model.clone_from(&init.model);
                }
                None
            }
            EventPayload::UserMessage(m) => {
                let mut line =
                    envelope("user", json!({"role": "user", "content": m.text}), &parent);
                if event.extra.get("isMeta") == Some(&Value::Bool(true)) {
                    line.insert("isMeta".into(), Value::Bool(true));
                }
                Some(line)
            }
            EventPayload::AssistantMessage(m) => Some(assistant(
                Answer {
                    message_id: m.message_id.as_deref(),
                    request_id: m.request_id.as_deref(),
                    model: m.model.as_deref(),
                    usage: m.usage,
                },
                json!([{"type": "text", "text": m.text}]),
                &model,
            )),
            EventPayload::ToolUse(t) => Some(assistant(
                Answer {
                    message_id: t.message_id.as_deref(),
                    request_id: t.request_id.as_deref(),
                    model: t.model.as_deref(),
                    usage: t.usage,
                },
                json!([{"type": "tool_use", "id": t.tool_use_id, "name": t.name, "input": t.input}]),
                &model,
            )),
            EventPayload::ToolResult(r) => {
                let mut line = envelope(
                    "user",
                    json!({"role": "user", "content": [{
                        "type": "tool_result",
                        "tool_use_id": r.tool_use_id,
                        "content": output_text(&r.output),
                        "is_error": r.is_error,
                    }]}),
                    &parent,
                );
                line.insert("toolUseResult".into(), r.output.clone());
                Some(line)
            }
            // The title goes first, once, as Claude Code writes it (below).
            EventPayload::SessionTitle(_) => None,
            EventPayload::Compaction(c) => {
                let mut line = envelope("system", Value::Null, &parent);
                line.remove("message");
                line.insert("subtype".into(), json!("compact_boundary"));
                line.insert("content".into(), json!(c.summary));
                line.insert(
                    "compactMetadata".into(),
                    json!({"fromSeq": c.from_seq, "toSeq": c.to_seq}),
                );
                Some(line)
            }
            _ => None,
        };
        if let Some(line) = line {
            out += &Value::Object(line).to_string();
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

/// The fields one model answer gives each of its lines.
struct Answer<'a> {
    message_id: Option<&'a str>,
    request_id: Option<&'a str>,
    model: Option<&'a str>,
    usage: Option<TokenUsage>,
}
