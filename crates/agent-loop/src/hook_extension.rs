//! `prompt` and `agent` hooks (Claude Code's model-evaluated hooks), run through the loop's
//! provider: a [`ModelHooks`] registered on a `HookRegistry` for both kinds before a
//! configuration that uses them is loaded.
//!
//! - `prompt`: one provider call without tools. The hook's `prompt` (with `$ARGUMENTS`
//!   replaced by the hook input JSON; the input is appended when the prompt does not use it)
//!   asks the model for a verdict, `{"ok": true}` or `{"ok": false, "reason": "..."}`.
//! - `agent`: the same verdict, from a small agent that may use read-only tools (Read, Glob,
//!   Grep) in the session's working directory, for up to 10 turns (its own session, tagged
//!   `hook`).
//!
//! `ok: false` blocks what the event announces: a PreToolUse call is denied, a prompt,
//! a Stop or anything else gets `decision: "block"` with the reason. An answer that is not
//! such JSON is a hook failure (non-blocking unless the hook sets `"onFailure": "block"`).

use std::sync::Arc;

use agent_core::hooks::{ExtensionHook, HookEvent, HookExtension, HookInput, HookOutput};
use agent_providers::{Message, ModelRequest, Provider, ToolChoice};
use serde_json::Value;

use super::{Agent, AgentOptions};
use agent_store::SessionBackend;
use agent_tools::{Glob, Grep, Read, ToolState};

const VERDICT_SYSTEM: &str = "You evaluate a hook condition for a coding agent's runtime. Read the instructions and the hook input (JSON), then answer with one JSON object and nothing else: {\"ok\": true} when the condition is met and the action may proceed, or {\"ok\": false, \"reason\": \"<why, in one sentence>\"} when it must be blocked.";

/// Runs `prompt` and `agent` hooks with a provider.
pub struct ModelHooks {
    provider: Arc<dyn Provider>,
    model: String,
    store: Option<Arc<dyn SessionBackend>>,
}

impl std::fmt::Debug for ModelHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelHooks")
            .field("provider", &self.provider.name())
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ModelHooks {
    /// Hooks evaluated by `model` on `provider` (a hook's own `model` field wins). `agent`
    /// hooks also need a `store` for their sessions; without one they fail with a message.
    pub fn new(
        provider: Arc<dyn Provider>,
        model: impl Into<String>,
        store: Option<Arc<dyn SessionBackend>>,
    ) -> Self {
        Self {
            provider,
            model: model.into(),
            store,
        }
    }

    fn prompt_text(hook: &ExtensionHook, input: &HookInput) -> Result<String, String> {
        let prompt = hook
            .fields
            .get("prompt")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("a `{}` hook needs a `prompt` string", hook.kind))?;
        let json = input.to_json().to_string();
        Ok(if prompt.contains("$ARGUMENTS") {
            prompt.replace("$ARGUMENTS", &json)
        } else {
            format!("{prompt}\n\nHook input:\n{json}")
        })
    }
}

/// Reads `{"ok": bool, "reason"?: string}` out of the model's answer.
fn verdict(text: &str) -> Result<(bool, Option<String>), String> {
    let start = text.find('{');
    let end = text.rfind('}');
    let (Some(s), Some(e)) = (start, end) else {
        return Err(format!(
            "the model's answer is not a JSON verdict: {text:?}"
        ));
    };
    let v: Value = serde_json::from_str(&text[s..=e])
        .map_err(|err| format!("the model's verdict is not valid JSON ({err}): {text:?}"))?;
    let ok = v
        .get("ok")
        .and_then(Value::as_bool)
        .ok_or_else(|| format!("the model's verdict has no boolean `ok`: {v}"))?;
    Ok((
        ok,
        v.get("reason").and_then(Value::as_str).map(str::to_owned),
    ))
}

/// The hook output of a verdict for `event`.
fn output(event: HookEvent, ok: bool, reason: Option<String>) -> HookOutput {
    if ok {
        return HookOutput::default();
    }
    let reason = reason.unwrap_or_else(|| "the hook's condition was not met".into());
    if event == HookEvent::PreToolUse {
        HookOutput::deny(reason)
    } else {
        HookOutput::block(reason)
    }
}

#[async_trait::async_trait]
impl HookExtension for ModelHooks {
    async fn run(&self, hook: &ExtensionHook, input: &HookInput) -> Result<HookOutput, String> {
        let text = Self::prompt_text(hook, input)?;
        let model = hook
            .fields
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&self.model)
            .to_owned();
        let answer = match hook.kind.as_str() {
            "prompt" => {
                let mut request = ModelRequest::new(model, vec![Message::user(text)]);
                request.system = Some(VERDICT_SYSTEM.into());
                request.tool_choice = ToolChoice::None;
                request.max_tokens = 1024;
                let call = self.provider.complete(&request);
                tokio::time::timeout(hook.timeout, call)
                    .await
                    .map_err(|_| format!("the model did not answer within {:?}", hook.timeout))?
                    .map_err(|e| e.to_string())?
                    .text()
            }
            "agent" => {
                let store = self
                    .store
                    .clone()
                    .ok_or("`agent` hooks need a session store; this host has none")?;
                let state = ToolState::new();
                let mut options = AgentOptions::new(model).max_turns(10);
                options.system_prompt = Some(VERDICT_SYSTEM.into());
                let mut agent = Agent::builder(Arc::clone(&self.provider), store, &input.cwd)
                    .options(options)
                    .subagents(false)
                    .tool(Arc::new(Read::new(state.clone())))
                    .tool(Arc::new(Glob::default()))
                    .tool(Arc::new(Grep::default()))
                    .start()
                    .await
                    .map_err(|e| e.to_string())?;
                let run = tokio::time::timeout(hook.timeout, agent.prompt(&text)).await;
                let closed = agent.close().await;
                let result = run
                    .map_err(|_| format!("the agent did not finish within {:?}", hook.timeout))?
                    .map_err(|e| e.to_string())?;
                closed.map_err(|e| e.to_string())?;
                if result.is_error {
                    return Err(result.error.unwrap_or_else(|| "the agent failed".into()));
                }
                result.final_text
            }
            other => return Err(format!("model hooks do not run `{other}` hooks")),
        };
        let (ok, reason) = verdict(&answer)?;
        Ok(output(input.event, ok, reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_the_answer() {
        assert_eq!(verdict("{\"ok\": true}").unwrap(), (true, None));
        assert_eq!(
            verdict("Sure. {\"ok\": false, \"reason\": \"tests fail\"}").unwrap(),
            (false, Some("tests fail".into()))
        );
        assert!(verdict("yes").is_err());
        assert!(verdict("{\"fine\": 1}").is_err());
    }
}
