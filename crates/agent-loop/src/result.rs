//! How a run ended ([`RunResult`]) and why it stopped ([`RunStopReason`]): what
//! [`Agent::prompt`](crate::Agent::prompt) returns and
//! [`AgentEvent::Finished`](crate::AgentEvent::Finished) carries.

use agent_providers::Usage;
use serde::Serialize;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// The session the run wrote to.
    pub session_id: String,
    /// The final assistant text.
    pub final_text: String,
    /// Why it stopped (written as `end_turn`, `max_turns`, ... in the log and JSON).
    pub stop_reason: RunStopReason,
    /// Turns used: provider calls that could end in tool calls, as `max_turns` counts them
    /// (the summary call made when the limit is reached is not one).
    pub turns: u32,
    /// Tokens used by every call of the run.
    pub usage: Usage,
    /// Whether the run ended in an error (the provider failed; the log is still consistent).
    pub is_error: bool,
    /// The error, when there was one.
    pub error: Option<String>,
}

/// Why a run stopped. Not the model's own stop reason ([`agent_providers::StopReason`]): a
/// run also stops at the turn limit, on an interrupt, a hook or an error. Serialised, and
/// compared with text, as its `snake_case` name (`"end_turn"`), the name the log records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model stopped at one of its stop sequences.
    StopSequence,
    /// `max_turns` was used up; the last call asked for a summary.
    MaxTurns,
    /// The answer hit the output token limit.
    MaxTokens,
    /// The model refused.
    Refusal,
    /// The run was interrupted (Ctrl-C, an SDK's `interrupt`).
    Interrupted,
    /// A UserPromptSubmit hook blocked the prompt.
    PromptBlocked,
    /// A hook stopped the run (`continue: false`).
    HookStopped,
    /// The provider failed.
    Error,
}

impl RunStopReason {
    /// The name the log and the JSON outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EndTurn => "end_turn",
            Self::StopSequence => "stop_sequence",
            Self::MaxTurns => "max_turns",
            Self::MaxTokens => "max_tokens",
            Self::Refusal => "refusal",
            Self::Interrupted => "interrupted",
            Self::PromptBlocked => "prompt_blocked",
            Self::HookStopped => "hook_stopped",
            Self::Error => "error",
        }
    }
}

impl std::fmt::Display for RunStopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for RunStopReason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
