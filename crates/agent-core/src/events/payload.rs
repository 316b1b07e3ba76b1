//! Typed payloads of the event types this version knows.
//!
//! Field names on the wire are camelCase. Optional fields are omitted when absent. Every struct
//! here tolerates unknown fields (they are kept by the codec in [`super::Event::extra`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `system.init`: the first event of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemInit {
    /// The session this log belongs to.
    pub session_id: String,
    /// Working directory the session started in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model name used by the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Names of the tools offered to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Permission mode at start (`default`, `plan`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The git branch checked out in `cwd` when the session started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
}

/// `user.message`: a prompt from the user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// The prompt text.
    pub text: String,
}

/// `assistant.delta`: a streamed fragment of an assistant message (optional in logs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantDelta {
    /// The text added by this fragment.
    pub text_delta: String,
}

/// Tokens one model answer used, as the provider reported them (the log's `usage` of
/// `assistant.message` and `tool.use`). Names are camelCase as everywhere in the log; the
/// Claude transcript export writes them in the Anthropic API's snake_case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Prompt tokens billed at the full rate (not read from or written to the cache).
    #[serde(default)]
    pub input_tokens: u64,
    /// Answer tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

/// `assistant.message`: a complete assistant message.
///
/// The answer fields (`messageId`, `requestId`, `model`, `usage`) are the same on every event
/// of one model answer (its `assistant.message` and its `tool.use`s); count an answer's usage
/// once per `messageId`. Logs written before they existed lack them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// The message text.
    pub text: String,
    /// The model answer this text belongs to: the provider's message id, else a generated
    /// `msg_…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The provider call that produced the answer (`req_…`, one per call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The model that answered, as the provider named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens the answer used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

impl AssistantMessage {
    /// A message of `text` with no answer fields.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

/// `tool.use`: the model asked for a tool call.
///
/// Carries the answer fields of [`AssistantMessage`] (the same values on every event of one
/// answer), so an answer made of tool calls alone still records its usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUse {
    /// Id pairing this call with its `tool.result`.
    pub tool_use_id: String,
    /// Canonical tool name, e.g. `Bash`.
    pub name: String,
    /// The tool input as the model produced it.
    pub input: Value,
    /// The model answer this call belongs to (see [`AssistantMessage::message_id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The provider call that produced the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens the answer used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

/// `tool.result`: the outcome of a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultEvent {
    /// Id of the `tool.use` this answers.
    pub tool_use_id: String,
    /// What the tool returned (text or structured JSON).
    pub output: Value,
    /// Whether the call failed.
    pub is_error: bool,
    /// Machine-readable error class, e.g. `permission_denied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Human-readable error message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// `permission.question`: the runtime asked the host (user) whether a call may run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionQuestion {
    /// Id pairing the question with its `permission.decision`.
    pub question_id: String,
    /// The tool the question is about.
    pub tool_name: String,
    /// The text shown to the user.
    pub prompt: String,
}

/// `permission.decision`: the permission engine's verdict on one call, with its provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDecisionEvent {
    /// Id of the question (or of the tool call when nothing was asked).
    pub question_id: String,
    /// Whether the call may run.
    pub allowed: bool,
    /// `allow`, `deny` or `ask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The evaluation step that decided, e.g. `deny_rule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The rule that decided, if one did, e.g. `Bash(rm *)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where that rule came from (`file#list[index]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_source: Option<String>,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `result`: the end of one agent run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultEvent {
    /// The final assistant text.
    pub final_text: String,
    /// Why the run stopped (`end_turn`, `max_turns`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Token usage as reported by the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// `hook.run`: one hook handler ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRun {
    /// Hook event name, e.g. `PreToolUse`.
    pub event: String,
    /// The matcher of the group the handler came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// What it decided (`allow`, `deny`, `none`, `error`, `timeout`, ...).
    pub outcome: String,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// The command or URL of the handler, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// `workspace.import`: a real folder was copied into the shadow workspace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceImport {
    /// The real folder that was imported.
    pub root: String,
    /// Number of files imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
}

/// `workspace.diff`: the change set of the shadow workspace at some point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceDiff {
    /// Paths added, relative to the workspace root.
    #[serde(default)]
    pub added: Vec<String>,
    /// Paths modified.
    #[serde(default)]
    pub modified: Vec<String>,
    /// Paths deleted.
    #[serde(default)]
    pub deleted: Vec<String>,
}

/// `workspace.commit`: a reviewed change set was applied to the real folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceCommit {
    /// Paths written to the real folder.
    #[serde(default)]
    pub applied: Vec<String>,
    /// Paths refused because they changed in the real folder since import.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
}

/// `compaction`: earlier events were summarised for the provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    /// The summary that replaces the range.
    pub summary: String,
    /// First `seq` of the replaced range (inclusive).
    pub from_seq: u64,
    /// Last `seq` of the replaced range (inclusive).
    pub to_seq: u64,
}

/// `subagent.start`: a subagent was spawned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStart {
    /// Id of the subagent.
    pub agent_id: String,
    /// Its type, e.g. `general-purpose`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The prompt it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// `subagent.stop`: a subagent finished.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentStop {
    /// Id of the subagent.
    pub agent_id: String,
    /// Its final text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_text: Option<String>,
}

/// `error`: something failed outside a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEvent {
    /// What went wrong.
    pub message: String,
    /// Machine-readable class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

/// `session.title`: the session was given a title (rename). The latest one wins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTitle {
    /// The new title.
    pub title: String,
}

/// `session.tag`: a tag was added to (or, with `removed: true`, taken off) the session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTag {
    /// The tag.
    pub tag: String,
    /// `true` when the tag is removed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

/// `session.fork`: this session was forked from another; written as the first event after the
/// copied history, so the parent and fork point can be rebuilt from the log alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFork {
    /// The session the history was copied from.
    pub parent_session_id: String,
    /// Id of the last event copied (`null` when nothing was copied).
    #[serde(default)]
    pub fork_point: Option<String>,
    /// `seq` of the last event copied (0 when nothing was copied).
    pub fork_seq: u64,
}

/// The payload of an event, by type.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum EventPayload {
    /// `system.init`
    SystemInit(SystemInit),
    /// `user.message`
    UserMessage(UserMessage),
    /// `assistant.delta`
    AssistantDelta(AssistantDelta),
    /// `assistant.message`
    AssistantMessage(AssistantMessage),
    /// `tool.use`
    ToolUse(ToolUse),
    /// `tool.result`
    ToolResult(ToolResultEvent),
    /// `permission.question`
    PermissionQuestion(PermissionQuestion),
    /// `permission.decision`
    PermissionDecision(PermissionDecisionEvent),
    /// `hook.run`
    HookRun(HookRun),
    /// `workspace.import`
    WorkspaceImport(WorkspaceImport),
    /// `workspace.diff`
    WorkspaceDiff(WorkspaceDiff),
    /// `workspace.commit`
    WorkspaceCommit(WorkspaceCommit),
    /// `compaction`
    Compaction(Compaction),
    /// `subagent.start`
    SubagentStart(SubagentStart),
    /// `subagent.stop`
    SubagentStop(SubagentStop),
    /// `error`
    Error(ErrorEvent),
    /// `result`
    Result(ResultEvent),
    /// `session.title`
    SessionTitle(SessionTitle),
    /// `session.tag`
    SessionTag(SessionTag),
    /// `session.fork`
    SessionFork(SessionFork),
    /// A type this version does not know. Its fields live in [`super::Event::extra`].
    Unknown {
        /// The `type` as written in the log.
        type_name: String,
    },
}

impl EventPayload {
    /// Every type name this version knows, in documentation order.
    pub const KNOWN_TYPES: &'static [&'static str] = &[
        "system.init",
        "user.message",
        "assistant.delta",
        "assistant.message",
        "tool.use",
        "tool.result",
        "permission.question",
        "permission.decision",
        "hook.run",
        "workspace.import",
        "workspace.diff",
        "workspace.commit",
        "compaction",
        "subagent.start",
        "subagent.stop",
        "error",
        "result",
        "session.title",
        "session.tag",
        "session.fork",
    ];

    /// The wire name of the type.
    pub fn type_name(&self) -> &str {
        match self {
            Self::SystemInit(_) => "system.init",
            Self::UserMessage(_) => "user.message",
            Self::AssistantDelta(_) => "assistant.delta",
            Self::AssistantMessage(_) => "assistant.message",
            Self::ToolUse(_) => "tool.use",
            Self::ToolResult(_) => "tool.result",
            Self::PermissionQuestion(_) => "permission.question",
            Self::PermissionDecision(_) => "permission.decision",
            Self::HookRun(_) => "hook.run",
            Self::WorkspaceImport(_) => "workspace.import",
            Self::WorkspaceDiff(_) => "workspace.diff",
            Self::WorkspaceCommit(_) => "workspace.commit",
            Self::Compaction(_) => "compaction",
            Self::SubagentStart(_) => "subagent.start",
            Self::SubagentStop(_) => "subagent.stop",
            Self::Error(_) => "error",
            Self::Result(_) => "result",
            Self::SessionTitle(_) => "session.title",
            Self::SessionTag(_) => "session.tag",
            Self::SessionFork(_) => "session.fork",
            Self::Unknown { type_name } => type_name,
        }
    }

    /// Serialises the payload's own fields (without `type`) to a JSON object.
    pub(crate) fn to_fields(&self) -> Result<serde_json::Map<String, Value>, serde_json::Error> {
        let value = match self {
            Self::SystemInit(p) => serde_json::to_value(p)?,
            Self::UserMessage(p) => serde_json::to_value(p)?,
            Self::AssistantDelta(p) => serde_json::to_value(p)?,
            Self::AssistantMessage(p) => serde_json::to_value(p)?,
            Self::ToolUse(p) => serde_json::to_value(p)?,
            Self::ToolResult(p) => serde_json::to_value(p)?,
            Self::PermissionQuestion(p) => serde_json::to_value(p)?,
            Self::PermissionDecision(p) => serde_json::to_value(p)?,
            Self::HookRun(p) => serde_json::to_value(p)?,
            Self::WorkspaceImport(p) => serde_json::to_value(p)?,
            Self::WorkspaceDiff(p) => serde_json::to_value(p)?,
            Self::WorkspaceCommit(p) => serde_json::to_value(p)?,
            Self::Compaction(p) => serde_json::to_value(p)?,
            Self::SubagentStart(p) => serde_json::to_value(p)?,
            Self::SubagentStop(p) => serde_json::to_value(p)?,
            Self::Error(p) => serde_json::to_value(p)?,
            Self::Result(p) => serde_json::to_value(p)?,
            Self::SessionTitle(p) => serde_json::to_value(p)?,
            Self::SessionTag(p) => serde_json::to_value(p)?,
            Self::SessionFork(p) => serde_json::to_value(p)?,
            Self::Unknown { .. } => Value::Object(serde_json::Map::new()),
        };
        match value {
            Value::Object(map) => Ok(map),
            // Every payload above is a struct, which serde_json always renders as an object.
            other => {
                let mut map = serde_json::Map::new();
                map.insert("value".into(), other);
                Ok(map)
            }
        }
    }

    /// Builds the typed payload of `type_name` from the line's remaining fields.
    pub(crate) fn from_fields(
        type_name: &str,
        fields: &serde_json::Map<String, Value>,
    ) -> Result<Self, serde_json::Error> {
        fn de<T: serde::de::DeserializeOwned>(
            fields: &serde_json::Map<String, Value>,
        ) -> Result<T, serde_json::Error> {
            // Straight from the borrowed fields: no copy of the map on the way.
            T::deserialize(serde::de::value::MapDeserializer::new(fields.iter().map(
                |(k, v)| {
                    (
                        serde::de::value::BorrowedStrDeserializer::new(k.as_str()),
                        v,
                    )
                },
            )))
        }
        Ok(match type_name {
            "system.init" => Self::SystemInit(de(fields)?),
            "user.message" => Self::UserMessage(de(fields)?),
            "assistant.delta" => Self::AssistantDelta(de(fields)?),
            "assistant.message" => Self::AssistantMessage(de(fields)?),
            "tool.use" => Self::ToolUse(de(fields)?),
            "tool.result" => Self::ToolResult(de(fields)?),
            "permission.question" => Self::PermissionQuestion(de(fields)?),
            "permission.decision" => Self::PermissionDecision(de(fields)?),
            "hook.run" => Self::HookRun(de(fields)?),
            "workspace.import" => Self::WorkspaceImport(de(fields)?),
            "workspace.diff" => Self::WorkspaceDiff(de(fields)?),
            "workspace.commit" => Self::WorkspaceCommit(de(fields)?),
            "compaction" => Self::Compaction(de(fields)?),
            "subagent.start" => Self::SubagentStart(de(fields)?),
            "subagent.stop" => Self::SubagentStop(de(fields)?),
            "error" => Self::Error(de(fields)?),
            "result" => Self::Result(de(fields)?),
            "session.title" => Self::SessionTitle(de(fields)?),
            "session.tag" => Self::SessionTag(de(fields)?),
            "session.fork" => Self::SessionFork(de(fields)?),
            other => Self::Unknown {
                type_name: other.to_owned(),
            },
        })
    }
}
