//! What a hook returns: the JSON output of claude-code.md §5.6 (the union of Claude Code's fields
//! and document 000's `HookOutput`), checked against its schema.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::event::HookEvent;

/// A hook's JSON output. In-process hooks return it directly; command and HTTP hooks print it.
/// Every field is optional; unknown fields are kept in `extra` and ignored.
///
/// ```
/// use agent_core::hooks::{HookOutput, PermissionDecisionValue};
/// let out = HookOutput::deny("rm -rf is not allowed here");
/// let hso = out.hook_specific_output.as_ref().unwrap();
/// assert_eq!(hso.permission_decision, Some(PermissionDecisionValue::Deny));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    /// `false` stops the agent entirely; it takes precedence over every decision.
    #[serde(rename = "continue", default, skip_serializing_if = "Option::is_none")]
    pub continue_: Option<bool>,
    /// Shown to the user when `continue` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Accepted for compatibility; it has no effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppress_output: Option<bool>,
    /// A warning shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Top-level decision: `block` (every event that can block) or the deprecated `approve`
    /// (PreToolUse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<TopLevelDecision>,
    /// The reason for `decision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The event-specific part (boxed: it is large and often absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<Box<HookSpecificOutput>>,
    /// Document 000: attached information (shown like `systemMessage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Document 000: `true` blocks, like `decision: "block"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<bool>,
    /// Document 000: a notification for the host to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification: Option<HookNotification>,
    /// Document 000: a permission change the host may apply (passed through, not applied here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_update: Option<Value>,
    /// Document 000: a replacement tool input (same as `hookSpecificOutput.updatedInput`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Top-level `decision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopLevelDecision {
    /// Deprecated PreToolUse allow.
    Approve,
    /// Block (PreToolUse: deny).
    Block,
}

/// `hookSpecificOutput`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    /// Must name the event when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_event_name: Option<String>,
    /// PreToolUse: allow / deny / ask / defer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<PermissionDecisionValue>,
    /// PreToolUse: the reason (deny: shown to the model; allow/ask: to the user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    /// PreToolUse: replaces the whole tool input (an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Context for the model (PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// PermissionRequest: the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<PermissionRequestDecision>,
    /// PostToolUse: replaces the tool's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_tool_output: Option<Value>,
    /// PermissionDenied: ask the model to retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<bool>,
    /// UserPromptSubmit / SessionStart: a session title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_title: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A PreToolUse permission decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecisionValue {
    /// Skip the prompt (deny and ask rules still apply).
    Allow,
    /// Block the call.
    Deny,
    /// Prompt the user.
    Ask,
    /// Leave it to the host.
    Defer,
}

/// A PermissionRequest hook's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
pub enum PermissionRequestDecision {
    /// Approve.
    Allow {
        /// A replacement input (re-checked against deny rules).
        #[serde(
            default,
            rename = "updatedInput",
            skip_serializing_if = "Option::is_none"
        )]
        updated_input: Option<Value>,
        /// Permission updates (`addRules`, `setMode`, ...), as given.
        #[serde(
            default,
            rename = "updatedPermissions",
            skip_serializing_if = "Option::is_none"
        )]
        updated_permissions: Option<Vec<Value>>,
    },
    /// Refuse.
    Deny {
        /// Shown to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Stop the whole run.
        #[serde(default)]
        interrupt: bool,
    },
}

/// Document 000's notification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookNotification {
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Body.
    #[serde(default)]
    pub body: String,
    /// `info`, `warning` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

/// How a hook's stdout (or HTTP body) reads.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StdoutKind {
    /// Nothing but whitespace.
    Empty,
    /// Starts with `{` and is a schema-valid output.
    Json(Box<HookOutput>),
    /// Starts with `{` and is JSON, but not a valid output (the message says why).
    SchemaInvalid(String),
    /// Anything else, including invalid JSON (which is plain text, as in Claude Code).
    Plain(String),
}

impl StdoutKind {
    /// Classifies `stdout` for `event` (claude-code.md §5.5).
    pub fn classify(stdout: &str, event: HookEvent) -> Self {
        let trimmed = stdout.trim();
        if trimmed.is_empty() {
            return Self::Empty;
        }
        if !trimmed.starts_with('{') {
            return Self::Plain(trimmed.to_owned());
        }
        let Ok(value) = serde_json::from_str::<Value>(trimmed) else {
            return Self::Plain(trimmed.to_owned());
        };
        match HookOutput::from_value(value, event) {
            Ok(out) => Self::Json(Box::new(out)),
            Err(e) => Self::SchemaInvalid(e),
        }
    }

    /// The output, when it is schema-valid JSON.
    pub fn json(&self) -> Option<&HookOutput> {
        match self {
            Self::Json(o) => Some(o),
            _ => None,
        }
    }
}

impl HookOutput {
    /// A PreToolUse deny with a reason for the model.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::permission(PermissionDecisionValue::Deny, Some(reason.into()))
    }

    /// A PreToolUse allow.
    pub fn allow() -> Self {
        Self::permission(PermissionDecisionValue::Allow, None)
    }

    /// A PreToolUse ask with a reason for the user.
    pub fn ask(reason: impl Into<String>) -> Self {
        Self::permission(PermissionDecisionValue::Ask, Some(reason.into()))
    }

    /// A top-level `decision: "block"` (UserPromptSubmit, Stop, PostToolUse, ...).
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            decision: Some(TopLevelDecision::Block),
            reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Context for the model.
    pub fn context(text: impl Into<String>) -> Self {
        Self {
            hook_specific_output: Some(Box::new(HookSpecificOutput {
                additional_context: Some(text.into()),
                ..HookSpecificOutput::default()
            })),
            ..Self::default()
        }
    }

    fn permission(decision: PermissionDecisionValue, reason: Option<String>) -> Self {
        Self {
            hook_specific_output: Some(Box::new(HookSpecificOutput {
                hook_event_name: Some(HookEvent::PreToolUse.as_str().into()),
                permission_decision: Some(decision),
                permission_decision_reason: reason,
                ..HookSpecificOutput::default()
            })),
            ..Self::default()
        }
    }

    /// Reads and validates a JSON output for `event`.
    ///
    /// # Errors
    /// A message saying which field breaks the schema (wrong type, unknown decision, an
    /// `updatedInput` that is not an object, a `hookEventName` naming another event).
    pub fn from_value(value: Value, event: HookEvent) -> Result<Self, String> {
        let out: Self = serde_json::from_value(value).map_err(|e| e.to_string())?;
        out.validate(event)?;
        Ok(out)
    }

    /// Checks the parts serde cannot: see [`Self::from_value`].
    ///
    /// # Errors
    /// A message naming the field.
    pub fn validate(&self, event: HookEvent) -> Result<(), String> {
        if let Some(v) = &self.updated_input
            && !v.is_object()
        {
            return Err(format!("`updatedInput` must be an object, got {v}"));
        }
        if let Some(h) = &self.hook_specific_output {
            if let Some(name) = &h.hook_event_name
                && name != event.as_str()
            {
                return Err(format!(
                    "`hookSpecificOutput.hookEventName` is {name:?} but the event is {event}"
                ));
            }
            if let Some(v) = &h.updated_input
                && !v.is_object()
            {
                return Err(format!(
                    "`hookSpecificOutput.updatedInput` must be an object, got {v}"
                ));
            }
            if let Some(PermissionRequestDecision::Allow {
                updated_input: Some(v),
                ..
            }) = &h.decision
                && !v.is_object()
            {
                return Err(format!(
                    "`hookSpecificOutput.decision.updatedInput` must be an object, got {v}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classify_follows_section_5_5() {
        let e = HookEvent::PreToolUse;
        assert_eq!(StdoutKind::classify("  \n", e), StdoutKind::Empty);
        assert_eq!(
            StdoutKind::classify("hello", e),
            StdoutKind::Plain("hello".into())
        );
        assert_eq!(
            StdoutKind::classify("{not json", e),
            StdoutKind::Plain("{not json".into())
        );
        assert!(matches!(
            StdoutKind::classify(r#"{"continue": "no"}"#, e),
            StdoutKind::SchemaInvalid(_)
        ));
        assert!(matches!(
            StdoutKind::classify(
                r#"{"hookSpecificOutput": {"permissionDecision": "maybe"}}"#,
                e
            ),
            StdoutKind::SchemaInvalid(_)
        ));
        assert!(matches!(
            StdoutKind::classify(r#"{"hookSpecificOutput": {"hookEventName": "Stop"}}"#, e),
            StdoutKind::SchemaInvalid(_)
        ));
        let ok = StdoutKind::classify(
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}, "x": 1}"#,
            e,
        );
        assert_eq!(
            ok.json()
                .and_then(|o| o.hook_specific_output.as_ref())
                .and_then(|h| h.permission_decision),
            Some(PermissionDecisionValue::Deny)
        );
    }

    #[test]
    fn permission_request_decisions_parse() {
        let out = HookOutput::from_value(
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "no", "interrupt": true}}}),
            HookEvent::PermissionRequest,
        )
        .unwrap();
        assert_eq!(
            out.hook_specific_output.unwrap().decision,
            Some(PermissionRequestDecision::Deny {
                message: Some("no".into()),
                interrupt: true
            })
        );
        assert!(
            HookOutput::from_value(
                json!({"hookSpecificOutput": {"decision": {"behavior": "maybe"}}}),
                HookEvent::PermissionRequest
            )
            .is_err()
        );
    }
}
