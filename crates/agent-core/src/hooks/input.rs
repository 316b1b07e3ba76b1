//! What a hook receives: the common fields of claude-code.md §5.4 plus the event's own, as typed
//! Rust values and as the exact JSON a command hook reads on stdin.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::event::HookEvent;
use crate::permissions::PermissionMode;

/// The input of one hook event.
#[derive(Clone, Debug, PartialEq)]
pub struct HookInput {
    /// The event.
    pub event: HookEvent,
    /// The session id (also `CLAUDE_CODE_SESSION_ID` and `HOOK_SESSION_ID`).
    pub session_id: String,
    /// A Claude-compatible JSONL view of the session, when one is written.
    pub transcript_path: Option<PathBuf>,
    /// The session's current directory (hooks run here).
    pub cwd: PathBuf,
    /// The permission mode, on events that carry it.
    pub permission_mode: Option<PermissionMode>,
    /// The subagent's id, inside a subagent.
    pub agent_id: Option<String>,
    /// The subagent's type, inside a subagent.
    pub agent_type: Option<String>,
    /// The event's own fields.
    pub fields: EventFields,
}

/// The event-specific part of a [`HookInput`]. Every struct keeps fields it does not know in
/// `extra`, so input written by a newer host reaches scripts unchanged.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum EventFields {
    /// PreToolUse.
    ToolUse(ToolUseInput),
    /// PostToolUse.
    ToolResult(ToolResultInput),
    /// PostToolUseFailure.
    ToolFailure(ToolFailureInput),
    /// PermissionRequest.
    PermissionRequest(PermissionRequestInput),
    /// PermissionDenied.
    PermissionDenied(PermissionDeniedInput),
    /// UserPromptSubmit.
    Prompt(PromptInput),
    /// Stop and SubagentStop.
    Stop(StopInput),
    /// Notification.
    Notification(NotificationInput),
    /// PreCompact and PostCompact.
    Compact(CompactInput),
    /// SessionStart.
    SessionStart(SessionStartInput),
    /// SessionEnd.
    SessionEnd(SessionEndInput),
    /// Every other event: its fields as given.
    Other(Map<String, Value>),
}

/// PreToolUse: a tool call about to be checked and run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolUseInput {
    /// The tool, e.g. `Bash`.
    pub tool_name: String,
    /// Its input, e.g. `{"command": "ls"}`.
    pub tool_input: Value,
    /// The model's tool-use id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// PostToolUse: a tool call that succeeded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResultInput {
    /// The tool.
    pub tool_name: String,
    /// Its input.
    pub tool_input: Value,
    /// What it returned (for Bash `{stdout, stderr, interrupted, isImage}`).
    #[serde(default)]
    pub tool_response: Value,
    /// The model's tool-use id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// How long the tool ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// PostToolUseFailure: a tool call that failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolFailureInput {
    /// The tool.
    pub tool_name: String,
    /// Its input.
    pub tool_input: Value,
    /// The model's tool-use id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The error message.
    #[serde(default)]
    pub error: String,
    /// Whether the user interrupted it.
    #[serde(default)]
    pub is_interrupt: bool,
    /// How long the tool ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// PermissionRequest: the engine is about to ask about a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequestInput {
    /// The tool.
    pub tool_name: String,
    /// The input it would run with.
    pub tool_input: Value,
    /// `updatedPermissions`-shaped suggestions (claude-code.md §5.6).
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// PermissionDenied: a call was denied without asking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionDeniedInput {
    /// The tool.
    pub tool_name: String,
    /// Its input.
    pub tool_input: Value,
    /// The model's tool-use id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Why it was denied.
    #[serde(default)]
    pub reason: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// UserPromptSubmit: the user's prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptInput {
    /// The prompt text.
    pub prompt: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Stop and SubagentStop: the agent finished a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopInput {
    /// True when the agent is already continuing because of a Stop hook (avoid loops).
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The last assistant message's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// The subagent's own transcript (SubagentStop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_transcript_path: Option<PathBuf>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Notification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NotificationInput {
    /// The message.
    pub message: String,
    /// A title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `permission_prompt`, `idle_prompt`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// PreCompact and PostCompact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactInput {
    /// `manual` or `auto`.
    pub trigger: String,
    /// The user's `/compact` instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SessionStart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionStartInput {
    /// `startup`, `resume`, `clear`, `compact` or `fork`.
    pub source: String,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SessionEnd.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionEndInput {
    /// `clear`, `resume`, `logout`, `prompt_input_exit` or `other`.
    pub reason: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Occurs when a JSON hook input does not fit its event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("hook input for {event}: {problem}")]
pub struct InputError {
    /// The event.
    pub event: HookEvent,
    /// What is wrong, e.g. "missing field `tool_name`".
    pub problem: String,
}

/// The session facts every hook input carries; build one per session and derive each event's
/// input from it.
#[derive(Clone, Debug, PartialEq)]
pub struct HookContext {
    /// The session id.
    pub session_id: String,
    /// The transcript path, when one is written.
    pub transcript_path: Option<PathBuf>,
    /// The current directory.
    pub cwd: PathBuf,
    /// The permission mode.
    pub permission_mode: Option<PermissionMode>,
    /// The subagent's id, when the hooks run inside a subagent.
    pub agent_id: Option<String>,
    /// The subagent's type, when the hooks run inside a subagent.
    pub agent_type: Option<String>,
}

impl HookContext {
    /// A context for session `session_id` in `cwd`.
    pub fn new(session_id: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            session_id: session_id.into(),
            transcript_path: None,
            cwd: cwd.into(),
            permission_mode: None,
            agent_id: None,
            agent_type: None,
        }
    }

    /// The input of `event` with `fields`.
    pub fn input(&self, event: HookEvent, fields: EventFields) -> HookInput {
        HookInput {
            event,
            session_id: self.session_id.clone(),
            transcript_path: self.transcript_path.clone(),
            cwd: self.cwd.clone(),
            permission_mode: self.permission_mode,
            agent_id: self.agent_id.clone(),
            agent_type: self.agent_type.clone(),
            fields,
        }
    }

    /// A PreToolUse input.
    pub fn pre_tool_use(
        &self,
        tool_name: impl Into<String>,
        tool_input: Value,
        tool_use_id: Option<String>,
    ) -> HookInput {
        self.input(
            HookEvent::PreToolUse,
            EventFields::ToolUse(ToolUseInput {
                tool_name: tool_name.into(),
                tool_input,
                tool_use_id,
                extra: Map::new(),
            }),
        )
    }

    /// A UserPromptSubmit input.
    pub fn user_prompt_submit(&self, prompt: impl Into<String>) -> HookInput {
        self.input(
            HookEvent::UserPromptSubmit,
            EventFields::Prompt(PromptInput {
                prompt: prompt.into(),
                extra: Map::new(),
            }),
        )
    }
}

impl HookInput {
    /// The tool name, on tool events.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.fields {
            EventFields::ToolUse(f) => Some(&f.tool_name),
            EventFields::ToolResult(f) => Some(&f.tool_name),
            EventFields::ToolFailure(f) => Some(&f.tool_name),
            EventFields::PermissionRequest(f) => Some(&f.tool_name),
            EventFields::PermissionDenied(f) => Some(&f.tool_name),
            EventFields::Other(m) => m.get("tool_name").and_then(Value::as_str),
            _ => None,
        }
    }

    /// The tool input, on tool events.
    pub fn tool_input(&self) -> Option<&Value> {
        match &self.fields {
            EventFields::ToolUse(f) => Some(&f.tool_input),
            EventFields::ToolResult(f) => Some(&f.tool_input),
            EventFields::ToolFailure(f) => Some(&f.tool_input),
            EventFields::PermissionRequest(f) => Some(&f.tool_input),
            EventFields::PermissionDenied(f) => Some(&f.tool_input),
            EventFields::Other(m) => m.get("tool_input"),
            _ => None,
        }
    }

    /// The value the event's matcher is tested against (see [`HookEvent::matcher_field`]).
    pub fn matcher_value(&self) -> Option<&str> {
        let field = self.event.matcher_field()?;
        match (&self.fields, field) {
            (_, "tool_name") => self.tool_name(),
            (_, "agent_type") => self.agent_type.as_deref(),
            (EventFields::SessionStart(f), _) => Some(&f.source),
            (EventFields::SessionEnd(f), _) => Some(&f.reason),
            (EventFields::Notification(f), _) => f.notification_type.as_deref(),
            (EventFields::Compact(f), _) => Some(&f.trigger),
            (EventFields::Other(m), field) => m.get(field).and_then(Value::as_str),
            _ => None,
        }
    }

    /// The JSON a command or HTTP hook receives: common fields first, then the event's.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("session_id".into(), Value::String(self.session_id.clone()));
        if let Some(t) = &self.transcript_path {
            m.insert(
                "transcript_path".into(),
                Value::String(t.to_string_lossy().into_owned()),
            );
        }
        m.insert(
            "cwd".into(),
            Value::String(self.cwd.to_string_lossy().into_owned()),
        );
        if let Some(mode) = self.permission_mode {
            m.insert(
                "permission_mode".into(),
                Value::String(mode.as_str().into()),
            );
        }
        m.insert(
            "hook_event_name".into(),
            Value::String(self.event.as_str().into()),
        );
        for (k, v) in [
            ("agent_id", &self.agent_id),
            ("agent_type", &self.agent_type),
        ] {
            if let Some(v) = v {
                m.insert(k.into(), Value::String(v.clone()));
            }
        }
        let own = match &self.fields {
            EventFields::ToolUse(f) => serde_json::to_value(f),
            EventFields::ToolResult(f) => serde_json::to_value(f),
            EventFields::ToolFailure(f) => serde_json::to_value(f),
            EventFields::PermissionRequest(f) => serde_json::to_value(f),
            EventFields::PermissionDenied(f) => serde_json::to_value(f),
            EventFields::Prompt(f) => serde_json::to_value(f),
            EventFields::Stop(f) => serde_json::to_value(f),
            EventFields::Notification(f) => serde_json::to_value(f),
            EventFields::Compact(f) => serde_json::to_value(f),
            EventFields::SessionStart(f) => serde_json::to_value(f),
            EventFields::SessionEnd(f) => serde_json::to_value(f),
            EventFields::Other(f) => Ok(Value::Object(f.clone())),
        };
        // Serialising these plain structs cannot fail; an empty object is the safe fallback.
        if let Ok(Value::Object(own)) = own {
            for (k, v) in own {
                m.entry(k).or_insert(v);
            }
        }
        Value::Object(m)
    }

    /// Reads a hook input in the wire format (as `agent hooks run --input` takes it). The common
    /// fields `session_id` and `cwd` are required; `hook_event_name`, when present, must name
    /// `event`.
    ///
    /// # Errors
    /// [`InputError`] naming the field that is missing or has the wrong type.
    pub fn from_json(event: HookEvent, value: Value) -> Result<Self, InputError> {
        let err = |problem: String| InputError { event, problem };
        let Value::Object(mut m) = value else {
            return Err(err("must be a JSON object".into()));
        };
        let mut take_str = |key: &str, required: bool| -> Result<Option<String>, InputError> {
            match m.remove(key) {
                None | Some(Value::Null) if !required => Ok(None),
                None | Some(Value::Null) => Err(err(format!("missing field `{key}`"))),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(err(format!("`{key}` must be a string, got {other}"))),
            }
        };
        let session_id = take_str("session_id", true)?.unwrap_or_default();
        let cwd = PathBuf::from(take_str("cwd", true)?.unwrap_or_default());
        let transcript_path = take_str("transcript_path", false)?.map(PathBuf::from);
        let permission_mode = take_str("permission_mode", false)?
            .map(|s| s.parse::<PermissionMode>())
            .transpose()
            .map_err(|e| err(format!("`permission_mode`: {e}")))?;
        let agent_id = take_str("agent_id", false)?;
        let agent_type = take_str("agent_type", false)?;
        if let Some(name) = take_str("hook_event_name", false)?
            && name != event.as_str()
        {
            return Err(err(format!(
                "`hook_event_name` is {name:?} but the event is {event}; drop the field or make them agree"
            )));
        }
        let rest = Value::Object(m);
        let typed = |r: Result<EventFields, serde_json::Error>| r.map_err(|e| err(e.to_string()));
        let fields = match event {
            HookEvent::PreToolUse => typed(serde_json::from_value(rest).map(EventFields::ToolUse))?,
            HookEvent::PostToolUse => {
                typed(serde_json::from_value(rest).map(EventFields::ToolResult))?
            }
            HookEvent::PostToolUseFailure => {
                typed(serde_json::from_value(rest).map(EventFields::ToolFailure))?
            }
            HookEvent::PermissionRequest => {
                typed(serde_json::from_value(rest).map(EventFields::PermissionRequest))?
            }
            HookEvent::PermissionDenied => {
                typed(serde_json::from_value(rest).map(EventFields::PermissionDenied))?
            }
            HookEvent::UserPromptSubmit => {
                typed(serde_json::from_value(rest).map(EventFields::Prompt))?
            }
            HookEvent::Stop | HookEvent::SubagentStop => {
                typed(serde_json::from_value(rest).map(EventFields::Stop))?
            }
            HookEvent::Notification => {
                typed(serde_json::from_value(rest).map(EventFields::Notification))?
            }
            HookEvent::PreCompact | HookEvent::PostCompact => {
                typed(serde_json::from_value(rest).map(EventFields::Compact))?
            }
            HookEvent::SessionStart => {
                typed(serde_json::from_value(rest).map(EventFields::SessionStart))?
            }
            HookEvent::SessionEnd => {
                typed(serde_json::from_value(rest).map(EventFields::SessionEnd))?
            }
            _ => match rest {
                Value::Object(m) => EventFields::Other(m),
                _ => EventFields::Other(Map::new()),
            },
        };
        if let Some(input) = match &fields {
            EventFields::ToolUse(f) => Some(&f.tool_input),
            EventFields::PermissionRequest(f) => Some(&f.tool_input),
            _ => None,
        } && !input.is_object()
        {
            return Err(err(format!("`tool_input` must be an object, got {input}")));
        }
        Ok(Self {
            event,
            session_id,
            transcript_path,
            cwd,
            permission_mode,
            agent_id,
            agent_type,
            fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_json_round_trips_with_unknown_fields() {
        let v = json!({
            "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/repo",
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1",
            "effort": {"level": "high"}
        });
        let input = HookInput::from_json(HookEvent::PreToolUse, v.clone()).unwrap();
        assert_eq!(input.tool_name(), Some("Bash"));
        assert_eq!(input.matcher_value(), Some("Bash"));
        assert_eq!(input.to_json(), v);
    }

    #[test]
    fn bad_inputs_name_the_field() {
        let e = HookInput::from_json(
            HookEvent::PreToolUse,
            json!({"session_id": "s", "cwd": "/"}),
        )
        .unwrap_err();
        assert!(e.problem.contains("tool_name"), "{e}");
        let e = HookInput::from_json(
            HookEvent::PreToolUse,
            json!({"session_id": "s", "cwd": "/", "tool_name": "Bash", "tool_input": "ls"}),
        )
        .unwrap_err();
        assert!(e.problem.contains("must be an object"), "{e}");
        let e = HookInput::from_json(
            HookEvent::Stop,
            json!({"session_id": "s", "cwd": "/", "hook_event_name": "PreToolUse"}),
        )
        .unwrap_err();
        assert!(e.problem.contains("hook_event_name"), "{e}");
        let e = HookInput::from_json(HookEvent::Stop, json!({"cwd": "/"})).unwrap_err();
        assert!(e.problem.contains("session_id"), "{e}");
    }

    #[test]
    fn matcher_values_per_event() {
        let s = HookInput::from_json(
            HookEvent::SessionStart,
            json!({"session_id": "s", "cwd": "/", "source": "resume"}),
        )
        .unwrap();
        assert_eq!(s.matcher_value(), Some("resume"));
        let c = HookInput::from_json(
            HookEvent::ConfigChange,
            json!({"session_id": "s", "cwd": "/", "source": "user_settings"}),
        )
        .unwrap();
        assert_eq!(c.matcher_value(), Some("user_settings"));
        let stop =
            HookInput::from_json(HookEvent::Stop, json!({"session_id": "s", "cwd": "/"})).unwrap();
        assert_eq!(stop.matcher_value(), None);
    }
}
