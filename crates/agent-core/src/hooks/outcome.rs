//! One hook's verdict and the merged outcome of every hook of one event: deny > defer > ask >
//! allow, any block wins, `updatedInput` from the last hook in registration order, context from
//! all of them. The merge depends only on registration order, never on which hook finished first.

use serde::Serialize;
use serde_json::Value;

use super::output::{HookNotification, PermissionRequestDecision};
use crate::permissions::{HookDecision, PreToolUseOutcome};

/// A hook's decision, or the merged one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// No opinion.
    #[default]
    None,
    /// Allow the tool call (PreToolUse) or approve the request (PermissionRequest).
    Allow,
    /// Ask the user.
    Ask,
    /// Leave the decision to the host.
    Defer,
    /// Refuse the tool call or the permission request.
    Deny,
    /// Block what the event announces (a prompt, the end of a turn, a compaction, ...).
    Block,
}

impl Decision {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Defer => "defer",
            Self::Deny => "deny",
            Self::Block => "block",
        }
    }

    /// Precedence: deny and block > defer > ask > allow > none.
    pub fn rank(self) -> u8 {
        match self {
            Self::None => 0,
            Self::Allow => 1,
            Self::Ask => 2,
            Self::Defer => 3,
            Self::Deny | Self::Block => 4,
        }
    }
}

/// What one hook decided, or what all hooks of an event decided together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HookOutcome {
    /// The decision.
    pub decision: Decision,
    /// Why (the JSON `reason` / `permissionDecisionReason`, or stderr on exit 2).
    pub reason: Option<String>,
    /// A replacement for the whole tool input.
    pub updated_input: Option<Value>,
    /// A PermissionRequest answer (with its `updatedPermissions`).
    pub permission_request: Option<PermissionRequestDecision>,
    /// Context for the model, from every hook in registration order.
    pub additional_context: Vec<String>,
    /// Warnings for the user.
    pub system_message: Option<String>,
    /// `false` stops the agent.
    #[serde(rename = "continue")]
    pub continue_: bool,
    /// Shown to the user when `continue` is false.
    pub stop_reason: Option<String>,
    /// PostToolUse: a replacement tool output.
    pub updated_tool_output: Option<Value>,
    /// PermissionDenied: ask the model to retry.
    pub retry: bool,
    /// A session title.
    pub session_title: Option<String>,
    /// Document 000 notifications.
    pub notifications: Vec<HookNotification>,
    /// Document 000 permission updates, passed through for the host.
    pub permission_updates: Vec<Value>,
    /// Non-blocking problems (a hook that failed, printed invalid JSON, timed out, ...), each
    /// naming the hook; a host shows them as "hook error" notices.
    pub notices: Vec<String>,
}

impl Default for HookOutcome {
    fn default() -> Self {
        Self {
            decision: Decision::None,
            reason: None,
            updated_input: None,
            permission_request: None,
            additional_context: Vec::new(),
            system_message: None,
            continue_: true,
            stop_reason: None,
            updated_tool_output: None,
            retry: false,
            session_title: None,
            notifications: Vec::new(),
            permission_updates: Vec::new(),
            notices: Vec::new(),
        }
    }
}

fn join(slot: &mut Option<String>, more: &Option<String>, sep: &str) {
    if let Some(m) = more {
        match slot {
            Some(s) if !s.is_empty() => {
                s.push_str(sep);
                s.push_str(m);
            }
            _ => *slot = Some(m.clone()),
        }
    }
}

impl HookOutcome {
    /// Merges per-hook outcomes given in registration order.
    pub fn merge<'a>(outcomes: impl IntoIterator<Item = &'a HookOutcome>) -> HookOutcome {
        let outcomes: Vec<&HookOutcome> = outcomes.into_iter().collect();
        let mut out = HookOutcome::default();
        let top = outcomes
            .iter()
            .map(|o| o.decision)
            .max_by_key(|d| d.rank())
            .unwrap_or_default();
        // Deny and block share a rank; on one event only one of them can occur, but prefer
        // the first in registration order if both do.
        let winner = outcomes
            .iter()
            .map(|o| o.decision)
            .find(|d| d.rank() == top.rank() && *d != Decision::None)
            .unwrap_or(Decision::None);
        out.decision = winner;
        for o in &outcomes {
            if o.decision == winner && winner != Decision::None {
                join(&mut out.reason, &o.reason, "; ");
            }
            if o.updated_input.is_some() {
                out.updated_input.clone_from(&o.updated_input);
            }
            match (&out.permission_request, &o.permission_request) {
                (_, None) | (Some(PermissionRequestDecision::Deny { .. }), _) => {}
                (_, Some(p)) => out.permission_request = Some(p.clone()),
            }
            out.additional_context
                .extend(o.additional_context.iter().cloned());
            join(&mut out.system_message, &o.system_message, "\n");
            if !o.continue_ {
                out.continue_ = false;
                join(&mut out.stop_reason, &o.stop_reason, "; ");
            }
            if o.updated_tool_output.is_some() {
                out.updated_tool_output.clone_from(&o.updated_tool_output);
            }
            out.retry |= o.retry;
            if o.session_title.is_some() {
                out.session_title.clone_from(&o.session_title);
            }
            out.notifications.extend(o.notifications.iter().cloned());
            out.permission_updates
                .extend(o.permission_updates.iter().cloned());
            out.notices.extend(o.notices.iter().cloned());
        }
        out
    }

    /// The PreToolUse part the permission engine reads (steps 1, 6 and 9). A block counts as a
    /// deny; `continue: false` also denies the call (the agent is stopping).
    pub fn pre_tool_use(&self) -> PreToolUseOutcome {
        let decision = match self.decision {
            Decision::None => None,
            Decision::Allow => Some(HookDecision::Allow),
            Decision::Ask => Some(HookDecision::Ask),
            Decision::Defer => Some(HookDecision::Defer),
            Decision::Deny | Decision::Block => Some(HookDecision::Deny),
        };
        let (decision, reason) = if self.continue_ {
            (decision, self.reason.clone())
        } else {
            (
                Some(HookDecision::Deny),
                Some(
                    self.stop_reason
                        .clone()
                        .unwrap_or_else(|| "a hook stopped the agent (continue: false)".into()),
                ),
            )
        };
        PreToolUseOutcome {
            decision,
            reason,
            updated_input: self.updated_input.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(decision: Decision, reason: &str) -> HookOutcome {
        HookOutcome {
            decision,
            reason: Some(reason.into()),
            ..HookOutcome::default()
        }
    }

    #[test]
    fn precedence_is_deny_defer_ask_allow() {
        let cases = [
            (vec![Decision::Allow, Decision::Ask], Decision::Ask),
            (vec![Decision::Ask, Decision::Defer], Decision::Defer),
            (
                vec![Decision::Allow, Decision::Deny, Decision::Defer],
                Decision::Deny,
            ),
            (vec![Decision::None, Decision::Allow], Decision::Allow),
            (vec![Decision::None], Decision::None),
            (vec![], Decision::None),
        ];
        for (inputs, want) in cases {
            let outs: Vec<_> = inputs.iter().map(|d| with(*d, d.as_str())).collect();
            let m = HookOutcome::merge(&outs);
            assert_eq!(m.decision, want, "{inputs:?}");
            if want != Decision::None {
                assert_eq!(m.reason.as_deref(), Some(want.as_str()));
            }
        }
    }

    #[test]
    fn last_updated_input_in_registration_order_and_all_context() {
        let a = HookOutcome {
            updated_input: Some(json!({"command": "a"})),
            additional_context: vec!["one".into()],
            ..HookOutcome::default()
        };
        let b = HookOutcome {
            updated_input: Some(json!({"command": "b"})),
            additional_context: vec!["two".into()],
            continue_: false,
            stop_reason: Some("stop".into()),
            ..HookOutcome::default()
        };
        let m = HookOutcome::merge([&a, &b]);
        assert_eq!(m.updated_input, Some(json!({"command": "b"})));
        assert_eq!(m.additional_context, vec!["one", "two"]);
        assert!(!m.continue_);
        let m = HookOutcome::merge([&b, &a]);
        assert_eq!(m.updated_input, Some(json!({"command": "a"})));
        assert_eq!(m.pre_tool_use().decision, Some(HookDecision::Deny));
    }

    #[test]
    fn permission_request_deny_wins() {
        let allow = HookOutcome {
            permission_request: Some(PermissionRequestDecision::Allow {
                updated_input: None,
                updated_permissions: None,
            }),
            ..HookOutcome::default()
        };
        let deny = HookOutcome {
            permission_request: Some(PermissionRequestDecision::Deny {
                message: Some("no".into()),
                interrupt: false,
            }),
            ..HookOutcome::default()
        };
        let m = HookOutcome::merge([&deny, &allow]);
        assert!(matches!(
            m.permission_request,
            Some(PermissionRequestDecision::Deny { .. })
        ));
    }
}
