//! The hooks' place in the permission engine (DESIGN.md steps 1, 6 and 9): PreToolUse hooks run
//! for every call in every mode, before the engine, and their merged outcome is the engine's
//! [`PreToolUseOutcome`]; PermissionRequest hooks answer the engine's asks before the prompter.
//! A hook can only tighten: deny rules, ask rules and safety checks still apply after a hook's
//! allow (claude-code.md §5.7).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::event::HookEvent;
use super::input::{EventFields, HookContext, PermissionRequestInput};
use super::output::PermissionRequestDecision;
use super::registry::{HookExecution, HookRegistry};
use crate::permissions::{
    GrantScope, PermissionDecision, PermissionEngine, PermissionRequest, PermissionRequestHandler,
    PreToolUseOutcome, PromptAnswer, ToolCall,
};

/// The decision for one tool call and what its PreToolUse hooks did.
#[derive(Clone, Debug)]
pub struct GatedDecision {
    /// The engine's decision.
    pub decision: PermissionDecision,
    /// The PreToolUse hooks' runs and merged outcome (context for the model, notices, and
    /// `continue: false`, which the loop must honour by stopping).
    pub hooks: HookExecution,
}

/// Runs PreToolUse hooks for `call`, then the engine's nine steps with their outcome. The
/// hooks run whatever the mode and whatever the session has granted (claude-code.md §8 B11,
/// B12). Build the engine with a [`HookPermissionRequests`] handler so step 9 asks
/// PermissionRequest hooks too.
pub async fn check_tool_call(
    engine: &PermissionEngine,
    hooks: &HookRegistry,
    context: &HookContext,
    call: &ToolCall,
) -> GatedDecision {
    let mut ctx = context.clone();
    ctx.permission_mode = Some(engine.mode());
    let input = ctx.pre_tool_use(
        call.tool_name.clone(),
        call.input.clone(),
        call.tool_use_id.clone(),
    );
    let run = hooks.execute(input).await;
    let outcome: PreToolUseOutcome = run.outcome.pre_tool_use();
    let decision = engine.decide(call, &outcome).await;
    GatedDecision {
        decision,
        hooks: run,
    }
}

/// Answers the engine's asks through PermissionRequest hooks (step 9). A hook's allow never
/// overrides a deny rule or an ask rule's consent gate: the engine re-checks it.
#[derive(Clone, Debug)]
pub struct HookPermissionRequests {
    registry: Arc<HookRegistry>,
    context: HookContext,
}

impl HookPermissionRequests {
    /// A handler for one session.
    pub fn new(registry: Arc<HookRegistry>, context: HookContext) -> Self {
        Self { registry, context }
    }
}

/// `Bash(npm test *)` → `{"toolName": "Bash", "ruleContent": "npm test *"}`.
fn rule_value(rule: &str) -> Value {
    match rule.split_once('(') {
        Some((tool, rest)) if rest.ends_with(')') => {
            json!({"toolName": tool, "ruleContent": &rest[..rest.len() - 1]})
        }
        _ => json!({"toolName": rule}),
    }
}

/// The session grant a hook's `updatedPermissions` asks for: the first `addRules` with
/// behaviour `allow` and destination `session`.
fn session_grant(perms: Option<&Vec<Value>>) -> Option<GrantScope> {
    perms?.iter().find_map(|p| {
        if p.get("type")?.as_str()? != "addRules"
            || p.get("behavior")?.as_str()? != "allow"
            || p.get("destination")
                .and_then(Value::as_str)
                .unwrap_or("session")
                != "session"
        {
            return None;
        }
        let rule = p.get("rules")?.as_array()?.first()?;
        let tool = rule.get("toolName")?.as_str()?;
        Some(match rule.get("ruleContent").and_then(Value::as_str) {
            Some(content) => GrantScope::Rule(format!("{tool}({content})")),
            None => GrantScope::Tool(tool.to_owned()),
        })
    })
}

#[async_trait::async_trait]
impl PermissionRequestHandler for HookPermissionRequests {
    async fn on_request(&self, request: &PermissionRequest) -> Option<PromptAnswer> {
        if !self.registry.has_hooks(HookEvent::PermissionRequest) {
            return None;
        }
        let mut ctx = self.context.clone();
        ctx.permission_mode = Some(request.mode);
        let suggestions = request
            .suggestions
            .iter()
            .map(|r| {
                json!({"type": "addRules", "rules": [rule_value(r)], "behavior": "allow", "destination": "session"})
            })
            .collect();
        let input = ctx.input(
            HookEvent::PermissionRequest,
            EventFields::PermissionRequest(PermissionRequestInput {
                tool_name: request.tool_name.clone(),
                tool_input: request.input.clone(),
                permission_suggestions: suggestions,
                extra: Map::new(),
            }),
        );
        let run = self.registry.execute(input).await;
        match run.outcome.permission_request? {
            PermissionRequestDecision::Allow {
                updated_input,
                updated_permissions,
            } => Some(match session_grant(updated_permissions.as_ref()) {
                Some(scope) => PromptAnswer::AllowForSession {
                    scope,
                    updated_input,
                },
                None => PromptAnswer::AllowOnce { updated_input },
            }),
            PermissionRequestDecision::Deny { message, interrupt } => Some(PromptAnswer::Deny {
                message: message.unwrap_or_else(|| "denied by a PermissionRequest hook".into()),
                interrupt,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_from_updated_permissions() {
        let perms = vec![
            json!({"type": "setMode", "mode": "acceptEdits"}),
            json!({"type": "addRules", "behavior": "allow", "destination": "session",
                   "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}]}),
        ];
        assert_eq!(
            session_grant(Some(&perms)),
            Some(GrantScope::Rule("Bash(npm test *)".into()))
        );
        let other = vec![json!({"type": "addRules", "behavior": "allow",
            "destination": "localSettings", "rules": [{"toolName": "Read"}]})];
        assert_eq!(session_grant(Some(&other)), None);
        assert_eq!(
            rule_value("Bash(git *)"),
            json!({"toolName": "Bash", "ruleContent": "git *"})
        );
        assert_eq!(rule_value("Read"), json!({"toolName": "Read"}));
    }
}
