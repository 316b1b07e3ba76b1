//! The event catalogue: every lifecycle event a hook can attach to, what its matcher is tested
//! against, and what its exit code 2 and its JSON output may do.

use std::fmt;
use std::str::FromStr;

/// A lifecycle event. Wire and configuration names are Claude Code's PascalCase (`PreToolUse`);
/// [`FromStr`] also accepts document 000's camelCase (`preToolUse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before a tool call's permission check and execution. Exit 2 blocks the call.
    PreToolUse,
    /// After a tool succeeded. Exit 2 shows stderr to the model next to the result.
    PostToolUse,
    /// After a tool failed.
    PostToolUseFailure,
    /// After a batch of parallel tool calls. Exit 2 stops the loop before the next model call.
    PostToolBatch,
    /// A notification (permission prompt idle, agent idle, ...). Cannot block.
    Notification,
    /// The user submitted a prompt. Exit 2 blocks and erases it.
    UserPromptSubmit,
    /// A `/command` expands. Exit 2 blocks the expansion.
    UserPromptExpansion,
    /// A session starts, resumes, is cleared, compacts or forks. Plain stdout becomes context.
    SessionStart,
    /// The session ends.
    SessionEnd,
    /// The main agent finished a turn. Exit 2 keeps it running.
    Stop,
    /// A turn ended with an API error.
    StopFailure,
    /// A subagent was spawned.
    SubagentStart,
    /// A subagent finished. Exit 2 keeps it running.
    SubagentStop,
    /// Before the conversation is compacted. Exit 2 blocks the compaction.
    PreCompact,
    /// After the conversation was compacted.
    PostCompact,
    /// A permission prompt is about to be shown. Exit 2 is ignored; JSON may answer it.
    PermissionRequest,
    /// The auto-mode classifier denied a call.
    PermissionDenied,
    /// Agent initialisation or maintenance.
    Setup,
    /// A task was created. Exit 2 refuses it.
    TaskCreated,
    /// A task completed. Exit 2 refuses the completion.
    TaskCompleted,
    /// A settings file changed. Exit 2 blocks the change.
    ConfigChange,
    /// The working directory changed.
    CwdChanged,
    /// A watched file changed.
    FileChanged,
    /// A team member became idle. Exit 2 keeps it working.
    TeammateIdle,
    /// A worktree is being created. Any non-zero exit fails the creation.
    WorktreeCreate,
    /// A worktree was removed.
    WorktreeRemove,
    /// Instruction files were loaded.
    InstructionsLoaded,
    /// A directory was added to the session.
    DirectoryAdded,
    /// An MCP server asks the user for input. Exit 2 declines.
    Elicitation,
    /// The user answered an MCP elicitation. Exit 2 blocks the answer.
    ElicitationResult,
    /// A message is about to be displayed.
    MessageDisplay,
}

/// What exit code 2 of a command hook does on an event (claude-code.md §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitTwo {
    /// Blocks the tool call; the reason goes to the model (PreToolUse).
    BlocksToolCall,
    /// The tool already ran: the reason is shown to the model next to its result.
    FeedbackToModel,
    /// Blocks (and erases) the user's prompt; the reason is shown to the user only.
    BlocksPrompt,
    /// Keeps the agent (or subagent) running, with the reason as its next instruction.
    ContinuesAgent,
    /// Blocks the action the event announces (compaction, config change, ...).
    BlocksAction,
    /// Nothing is blocked; stderr is shown to the user.
    ShownToUser,
    /// Ignored: the flow continues unchanged.
    Ignored,
}

impl ExitTwo {
    /// Whether exit 2 (or a JSON block) stops something on this event.
    pub fn blocks(self) -> bool {
        !matches!(self, Self::ShownToUser | Self::Ignored)
    }
}

/// Which JSON decision fields an event reads (claude-code.md §5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionControl {
    /// `hookSpecificOutput.permissionDecision` allow / deny / ask / defer (and the deprecated
    /// top-level `decision: approve|block`).
    PermissionDecision,
    /// `hookSpecificOutput.decision` `{behavior: allow|deny, ...}`.
    PermissionRequest,
    /// Top-level `decision: "block"` with `reason`.
    Block,
    /// `hookSpecificOutput.retry`.
    Retry,
    /// No decision; universal fields only.
    None,
}

/// Every event, in catalogue order.
pub const ALL_EVENTS: &[HookEvent] = &[
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::PostToolUseFailure,
    HookEvent::PostToolBatch,
    HookEvent::Notification,
    HookEvent::UserPromptSubmit,
    HookEvent::UserPromptExpansion,
    HookEvent::SessionStart,
    HookEvent::SessionEnd,
    HookEvent::Stop,
    HookEvent::StopFailure,
    HookEvent::SubagentStart,
    HookEvent::SubagentStop,
    HookEvent::PreCompact,
    HookEvent::PostCompact,
    HookEvent::PermissionRequest,
    HookEvent::PermissionDenied,
    HookEvent::Setup,
    HookEvent::TaskCreated,
    HookEvent::TaskCompleted,
    HookEvent::ConfigChange,
    HookEvent::CwdChanged,
    HookEvent::FileChanged,
    HookEvent::TeammateIdle,
    HookEvent::WorktreeCreate,
    HookEvent::WorktreeRemove,
    HookEvent::InstructionsLoaded,
    HookEvent::DirectoryAdded,
    HookEvent::Elicitation,
    HookEvent::ElicitationResult,
    HookEvent::MessageDisplay,
];

impl HookEvent {
    /// The wire name (`PreToolUse`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::PostToolBatch => "PostToolBatch",
            Self::Notification => "Notification",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::UserPromptExpansion => "UserPromptExpansion",
            Self::SessionStart => "SessionStart",
            Self::SessionEnd => "SessionEnd",
            Self::Stop => "Stop",
            Self::StopFailure => "StopFailure",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::PreCompact => "PreCompact",
            Self::PostCompact => "PostCompact",
            Self::PermissionRequest => "PermissionRequest",
            Self::PermissionDenied => "PermissionDenied",
            Self::Setup => "Setup",
            Self::TaskCreated => "TaskCreated",
            Self::TaskCompleted => "TaskCompleted",
            Self::ConfigChange => "ConfigChange",
            Self::CwdChanged => "CwdChanged",
            Self::FileChanged => "FileChanged",
            Self::TeammateIdle => "TeammateIdle",
            Self::WorktreeCreate => "WorktreeCreate",
            Self::WorktreeRemove => "WorktreeRemove",
            Self::InstructionsLoaded => "InstructionsLoaded",
            Self::DirectoryAdded => "DirectoryAdded",
            Self::Elicitation => "Elicitation",
            Self::ElicitationResult => "ElicitationResult",
            Self::MessageDisplay => "MessageDisplay",
        }
    }

    /// Whether the event is one of the 23 of document 000 (the SDK's own catalogue).
    pub fn in_sdk_catalogue(self) -> bool {
        !matches!(
            self,
            Self::PostToolBatch
                | Self::UserPromptExpansion
                | Self::StopFailure
                | Self::InstructionsLoaded
                | Self::DirectoryAdded
                | Self::Elicitation
                | Self::ElicitationResult
                | Self::MessageDisplay
        )
    }

    /// Whether the event concerns one tool call (the `if` field applies only to these).
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            Self::PreToolUse
                | Self::PostToolUse
                | Self::PostToolUseFailure
                | Self::PermissionRequest
                | Self::PermissionDenied
        )
    }

    /// The input field a matcher is tested against; `None` when the event has no matcher (its
    /// hooks always fire and a configured matcher is ignored).
    pub fn matcher_field(self) -> Option<&'static str> {
        Some(match self {
            Self::PreToolUse
            | Self::PostToolUse
            | Self::PostToolUseFailure
            | Self::PermissionRequest
            | Self::PermissionDenied => "tool_name",
            Self::SessionStart => "source",
            Self::SessionEnd => "reason",
            Self::Notification => "notification_type",
            Self::SubagentStart | Self::SubagentStop => "agent_type",
            Self::PreCompact | Self::PostCompact | Self::Setup => "trigger",
            Self::ConfigChange => "source",
            Self::InstructionsLoaded => "load_reason",
            Self::StopFailure => "error_type",
            Self::UserPromptExpansion => "command_name",
            Self::Elicitation | Self::ElicitationResult => "mcp_server_name",
            Self::FileChanged => "file_name",
            Self::DirectoryAdded => "source",
            Self::UserPromptSubmit
            | Self::Stop
            | Self::PostToolBatch
            | Self::TeammateIdle
            | Self::TaskCreated
            | Self::TaskCompleted
            | Self::WorktreeCreate
            | Self::WorktreeRemove
            | Self::MessageDisplay
            | Self::CwdChanged => return None,
        })
    }

    /// What exit code 2 does on this event.
    pub fn exit_two(self) -> ExitTwo {
        match self {
            Self::PreToolUse => ExitTwo::BlocksToolCall,
            Self::PostToolUse | Self::PostToolUseFailure => ExitTwo::FeedbackToModel,
            Self::UserPromptSubmit | Self::UserPromptExpansion => ExitTwo::BlocksPrompt,
            Self::Stop | Self::SubagentStop | Self::TeammateIdle => ExitTwo::ContinuesAgent,
            Self::PreCompact
            | Self::PostToolBatch
            | Self::ConfigChange
            | Self::TaskCreated
            | Self::TaskCompleted
            | Self::WorktreeCreate
            | Self::Elicitation
            | Self::ElicitationResult => ExitTwo::BlocksAction,
            Self::PermissionRequest | Self::PermissionDenied | Self::Notification => {
                ExitTwo::Ignored
            }
            Self::SessionStart
            | Self::SessionEnd
            | Self::StopFailure
            | Self::SubagentStart
            | Self::PostCompact
            | Self::Setup
            | Self::CwdChanged
            | Self::FileChanged
            | Self::WorktreeRemove
            | Self::InstructionsLoaded
            | Self::DirectoryAdded
            | Self::MessageDisplay => ExitTwo::ShownToUser,
        }
    }

    /// Which JSON decision fields the event reads.
    pub fn decision_control(self) -> DecisionControl {
        match self {
            Self::PreToolUse => DecisionControl::PermissionDecision,
            Self::PermissionRequest => DecisionControl::PermissionRequest,
            Self::PermissionDenied => DecisionControl::Retry,
            e if e.exit_two().blocks() => DecisionControl::Block,
            _ => DecisionControl::None,
        }
    }

    /// Whether plain (non-JSON) stdout on exit 0 is added to the model's context.
    pub fn plain_stdout_is_context(self) -> bool {
        matches!(
            self,
            Self::UserPromptSubmit | Self::UserPromptExpansion | Self::SessionStart
        )
    }

    /// Whether an in-process hook that fails (error, panic, timeout) blocks instead of being
    /// ignored (DESIGN.md: in-process hooks fail closed on these events, as the Agent SDK's
    /// callbacks do).
    pub fn in_process_fails_closed(self) -> bool {
        matches!(self, Self::PreToolUse | Self::UserPromptSubmit)
    }

    /// Whether any non-zero exit (not only 2) blocks (`WorktreeCreate`).
    pub fn any_failure_blocks(self) -> bool {
        self == Self::WorktreeCreate
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Occurs when an event name is not in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook event {0:?}; expected one of: {list}", list = ALL_EVENTS.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", "))]
pub struct UnknownEvent(pub String);

impl FromStr for HookEvent {
    type Err = UnknownEvent;

    /// Accepts the PascalCase wire name and document 000's camelCase spelling.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL_EVENTS
            .iter()
            .copied()
            .find(|e| {
                let name = e.as_str();
                name == s || {
                    let mut c = s.chars();
                    let mut n = name.chars();
                    matches!((c.next(), n.next()), (Some(a), Some(b)) if a == b.to_ascii_lowercase())
                        && c.as_str() == n.as_str()
                }
            })
            .ok_or_else(|| UnknownEvent(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_both_spellings() {
        assert_eq!(ALL_EVENTS.len(), 31);
        assert_eq!(
            ALL_EVENTS.iter().filter(|e| e.in_sdk_catalogue()).count(),
            23
        );
        for e in ALL_EVENTS {
            assert_eq!(e.as_str().parse::<HookEvent>(), Ok(*e));
            let mut camel = e.as_str().to_owned();
            camel[..1].make_ascii_lowercase();
            assert_eq!(camel.parse::<HookEvent>(), Ok(*e));
        }
        assert!("pretooluse".parse::<HookEvent>().is_err());
        assert!("Pre".parse::<HookEvent>().is_err());
    }

    #[test]
    fn capabilities() {
        assert_eq!(HookEvent::PreToolUse.exit_two(), ExitTwo::BlocksToolCall);
        assert!(!HookEvent::PermissionRequest.exit_two().blocks());
        assert_eq!(HookEvent::Stop.decision_control(), DecisionControl::Block);
        assert_eq!(
            HookEvent::SessionStart.decision_control(),
            DecisionControl::None
        );
        assert_eq!(HookEvent::Stop.matcher_field(), None);
        assert_eq!(HookEvent::PostToolUse.matcher_field(), Some("tool_name"));
    }
}
