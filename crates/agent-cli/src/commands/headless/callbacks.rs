//! The SDK's callbacks as parts of the session: its `can_use_tool` callback is the permission
//! prompter (step 9 of the gate), and the hooks it registers in `initialize` are hooks of the
//! session, matched here with the settings files' matcher rules and run by a `hook_callback`
//! request.

use std::time::Duration;

use agent_core::hooks::{HookEvent, HookOptions, HookOutput, HookRegistry, OnFailure};
use agent_core::permissions::{GrantScope, PermissionRequest, PromptAnswer, Prompter};
use agent_core::view::PathView;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::control::Channel;

/// Asks the SDK's `can_use_tool` callback (`--permission-prompt-tool stdio`).
pub(crate) struct SdkPrompter {
    pub(crate) channel: Channel,
}

#[async_trait::async_trait]
impl Prompter for SdkPrompter {
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
        let suggestions: Vec<Value> = request
            .suggestions
            .iter()
            .map(|rule| {
                json!({
                    "type": "addRules",
                    "rules": [rule_value(rule)],
                    "behavior": "allow",
                    "destination": "session",
                })
            })
            .collect();
        let asked = self
            .channel
            .request(json!({
                "subtype": "can_use_tool",
                "tool_name": request.tool_name,
                "input": request.input,
                "permission_suggestions": suggestions,
                "blocked_path": null,
                "decision_reason": request.reason,
                "tool_use_id": request.tool_use_id,
            }))
            .await;
        answer(asked, &request.input)
    }
}

/// A rule's text as the SDK's `{"toolName", "ruleContent"?}`.
fn rule_value(rule: &str) -> Value {
    match rule.split_once('(') {
        Some((tool, rest)) if rest.ends_with(')') => {
            json!({"toolName": tool, "ruleContent": &rest[..rest.len() - 1]})
        }
        _ => json!({"toolName": rule}),
    }
}

/// The rule text of an SDK rule value.
fn rule_text(rule: &Value) -> Option<String> {
    let tool = rule.get("toolName")?.as_str()?;
    Some(match rule.get("ruleContent").and_then(Value::as_str) {
        Some(c) if !c.is_empty() => format!("{tool}({c})"),
        _ => tool.to_owned(),
    })
}

/// The callback's answer as the engine's: allow (with `updatedInput`, and a session grant for
/// the first allow rule of `updatedPermissions`), deny (its message to the model; `interrupt`
/// stops the run), or an error, which denies.
fn answer(asked: Result<Value, String>, original: &Value) -> PromptAnswer {
    let response = match asked {
        Ok(r) => r,
        Err(e) => {
            return PromptAnswer::Deny {
                message: format!("the SDK's permission callback failed: {e}"),
                interrupt: false,
            };
        }
    };
    match response.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let updated_input = response
                .get("updatedInput")
                .filter(|v| v.is_object() && *v != original)
                .cloned();
            let grant = response
                .get("updatedPermissions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|u| {
                    u.get("type").and_then(Value::as_str) == Some("addRules")
                        && u.get("behavior").and_then(Value::as_str) == Some("allow")
                })
                .flat_map(|u| {
                    u.get("rules")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default()
                })
                .find_map(|r| rule_text(&r));
            match grant {
                Some(rule) => PromptAnswer::AllowForSession {
                    scope: GrantScope::Rule(rule),
                    updated_input,
                },
                None => PromptAnswer::AllowOnce { updated_input },
            }
        }
        Some("deny") => PromptAnswer::Deny {
            message: response
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or("denied by the SDK's permission callback")
                .to_owned(),
            interrupt: response.get("interrupt").and_then(Value::as_bool) == Some(true),
        },
        _ => PromptAnswer::Deny {
            message: format!(
                "the SDK's permission callback answered neither allow nor deny: {response}"
            ),
            interrupt: false,
        },
    }
}

/// Registers the hooks of an `initialize` request (`{"PreToolUse": [{"matcher": "Bash",
/// "hookCallbackIds": ["hook_0"], "timeout": 10, "onFailure": "block"}], …}`) in `registry`.
/// Inputs reach the SDK with the real folder's paths (`view`), as the model sees them.
///
/// # Errors
/// A malformed entry, or a matcher that does not compile.
pub(crate) fn register_hooks(
    registry: &mut HookRegistry,
    hooks: &Value,
    channel: &Channel,
    view: Option<&PathView>,
) -> Result<usize> {
    let Some(events) = hooks.as_object() else {
        return Ok(0);
    };
    let mut count = 0;
    for (name, matchers) in events {
        // An event this runtime does not have is skipped, not fatal: the SDK may know newer
        // events than this runtime.
        let Ok(event) = name.parse::<HookEvent>() else {
            crate::output::warning(&format!(
                "initialize: the SDK registered hooks for {name}, an event agent does not have; they never run"
            ));
            continue;
        };
        let Some(matchers) = matchers.as_array() else {
            bail!("initialize: hooks.{name} must be a list of matchers");
        };
        for m in matchers {
            let ids = m
                .get("hookCallbackIds")
                .and_then(Value::as_array)
                .with_context(|| format!("initialize: hooks.{name}[]: no hookCallbackIds"))?;
            let mut options = HookOptions {
                matcher: m
                    .get("matcher")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
                ..HookOptions::default()
            };
            if let Some(t) = m.get("timeout").and_then(Value::as_f64)
                && t > 0.0
            {
                options.timeout = Some(Duration::from_secs_f64(t));
            }
            match m.get("onFailure").and_then(Value::as_str) {
                Some("continue") => options.on_failure = Some(OnFailure::Continue),
                // The SDK reads any other value as "block".
                Some(_) => options.on_failure = Some(OnFailure::Block),
                None => {}
            }
            for id in ids {
                let Some(id) = id.as_str() else {
                    bail!("initialize: hooks.{name}[]: a hookCallbackId is not a string");
                };
                let channel = channel.clone();
                let view = view.cloned();
                let id = id.to_owned();
                registry.register_fn(
                    event,
                    options.clone().name(format!("sdk:{id}")),
                    move |input| {
                        let channel = channel.clone();
                        let view = view.clone();
                        let id = id.clone();
                        async move {
                            let mut value = input.to_json();
                            if let Some(v) = &view {
                                v.value_to_shown(&mut value);
                            }
                            let tool_use_id = value.get("tool_use_id").cloned();
                            let answered = channel
                                .request(json!({
                                    "subtype": "hook_callback",
                                    "callback_id": id,
                                    "input": value,
                                    "tool_use_id": tool_use_id,
                                }))
                                .await
                                .map_err(|e| format!("the SDK's hook callback {id} failed: {e}"))?;
                            let output = HookOutput::from_value(answered, event)
                                .map_err(|e| format!("the SDK's hook callback {id}: {e}"))?;
                            Ok::<_, agent_core::hooks::BoxError>(output)
                        }
                    },
                )?;
                count += 1;
            }
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allow_with_the_same_input_runs_the_call_as_asked() {
        let input = json!({"command": "ls"});
        let got = answer(
            Ok(json!({"behavior": "allow", "updatedInput": {"command": "ls"}})),
            &input,
        );
        assert_eq!(
            got,
            PromptAnswer::AllowOnce {
                updated_input: None
            }
        );
    }

    #[test]
    fn an_allow_with_a_new_input_runs_the_new_input() {
        let got = answer(
            Ok(json!({"behavior": "allow", "updatedInput": {"command": "ls -la"}})),
            &json!({"command": "ls"}),
        );
        assert_eq!(
            got,
            PromptAnswer::AllowOnce {
                updated_input: Some(json!({"command": "ls -la"}))
            }
        );
    }

    #[test]
    fn an_allow_with_a_session_rule_becomes_a_grant() {
        let got = answer(
            Ok(
                json!({"behavior": "allow", "updatedInput": {}, "updatedPermissions": [
                {"type": "addRules", "destination": "session", "behavior": "allow",
                 "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}]}]}),
            ),
            &json!({}),
        );
        assert_eq!(
            got,
            PromptAnswer::AllowForSession {
                scope: GrantScope::Rule("Bash(npm test *)".into()),
                updated_input: None
            }
        );
    }

    #[test]
    fn a_deny_carries_its_message_and_interrupt() {
        let got = answer(
            Ok(json!({"behavior": "deny", "message": "no", "interrupt": true})),
            &json!({}),
        );
        assert_eq!(
            got,
            PromptAnswer::Deny {
                message: "no".into(),
                interrupt: true
            }
        );
    }

    #[test]
    fn a_failed_callback_denies() {
        let got = answer(Err("boom".into()), &json!({}));
        assert!(matches!(got, PromptAnswer::Deny { message, .. } if message.contains("boom")));
    }

    #[test]
    fn hooks_of_an_unknown_event_are_skipped_and_the_others_registered() {
        let mut registry = HookRegistry::new();
        let hooks = json!({
            "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 5}],
            "SomeFutureEvent": [{"matcher": null, "hookCallbackIds": ["hook_2"]}],
            "Stop": [{"matcher": null, "hookCallbackIds": ["hook_3"], "onFailure": "block"}],
        });
        let n = register_hooks(&mut registry, &hooks, &Channel::default(), None).unwrap();
        assert_eq!(n, 3);
        assert_eq!(registry.hooks(HookEvent::PreToolUse).len(), 2);
        assert_eq!(registry.hooks(HookEvent::Stop).len(), 1);
    }

    #[test]
    fn a_malformed_hook_entry_is_an_error() {
        let mut registry = HookRegistry::new();
        let hooks = json!({"PreToolUse": [{"matcher": "Bash"}]});
        let err = register_hooks(&mut registry, &hooks, &Channel::default(), None).unwrap_err();
        assert!(err.to_string().contains("hookCallbackIds"), "{err}");
    }

    #[test]
    fn suggestions_are_sdk_rule_values() {
        assert_eq!(
            rule_value("Bash(npm test *)"),
            json!({"toolName": "Bash", "ruleContent": "npm test *"})
        );
        assert_eq!(rule_value("Edit"), json!({"toolName": "Edit"}));
    }
}
