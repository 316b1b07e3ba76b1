//! The stream-json messages: what a run looks like to the Claude Agent SDK's message parser
//! (`system`/`init`, `assistant`, `user` tool results, `stream_event`, `result`), built from
//! the agent's [`AgentEvent`]s. `agent run --output-format stream-json` and the SDK transport
//! write the same lines.
//!
//! Shapes follow `../shared/compat/claude-agent-sdk.md` §4.4: every required key of each
//! message type is always present (a missing one ends the SDK caller's stream).

use std::collections::HashMap;
use std::time::Instant;

use agent_core::events::{Event, EventPayload};
use agent_loop::{AgentEvent, RunResult, RunStopReason};
use agent_providers::Usage;
use serde_json::{Value, json};

/// What `system`/`init` reports about the session.
#[derive(Clone, Debug, Default)]
pub(crate) struct InitFacts {
    pub(crate) session_id: String,
    /// The real folder (never the shadow).
    pub(crate) cwd: String,
    pub(crate) model: String,
    pub(crate) tools: Vec<String>,
    pub(crate) permission_mode: String,
    /// MCP servers: name and `connected` / `failed`.
    pub(crate) mcp_servers: Vec<(String, String)>,
}

/// This runtime's version, in the init message's `claude_code_version` (the SDK reads an
/// x.y.z there; it is ours, not a Claude Code version we pretend to be).
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `system`/`init` message.
pub(crate) fn init_message(facts: &InitFacts) -> Value {
    json!({
        "type": "system",
        "subtype": "init",
        "session_id": facts.session_id,
        "uuid": agent_core::events::EventId::new().as_str(),
        "cwd": facts.cwd,
        "model": facts.model,
        "tools": facts.tools,
        "permissionMode": facts.permission_mode,
        "mcp_servers": facts
            .mcp_servers
            .iter()
            .map(|(name, status)| json!({"name": name, "status": status}))
            .collect::<Vec<_>>(),
        "slash_commands": [],
        "apiKeySource": "none",
        "output_style": "default",
        "skills": [],
        "plugins": [],
        "claude_code_version": VERSION,
        "agent_version": VERSION,
    })
}

/// Turns one prompt's [`AgentEvent`]s into stream-json messages, and sums what its `result`
/// reports.
pub(crate) struct TurnEncoder {
    session_id: String,
    model: String,
    started: Instant,
    /// Milliseconds spent waiting for the provider (from the first streamed byte of each
    /// answer back to the call; approximated by the time between the previous event and an
    /// answer's first logged event).
    api_ms: u128,
    last_mark: Instant,
    partial: bool,
    /// `tool.use` id → (name, input), for `permission_denials`.
    calls: HashMap<String, (String, Value)>,
    denials: Vec<Value>,
    /// Usage summed over the model answers (each answer counted once, by message id).
    usage: Usage,
    counted: std::collections::HashSet<String>,
    /// Whether any text streamed since the last logged answer (for `stream_event` blocks).
    streaming: bool,
}

impl TurnEncoder {
    /// An encoder for one prompt of `session_id` answered by `model`; `partial`: also emit
    /// `stream_event` messages for streamed text.
    pub(crate) fn new(session_id: &str, model: &str, partial: bool) -> Self {
        let now = Instant::now();
        Self {
            session_id: session_id.to_owned(),
            model: model.to_owned(),
            started: now,
            api_ms: 0,
            last_mark: now,
            partial,
            calls: HashMap::new(),
            denials: Vec::new(),
            usage: Usage::default(),
            counted: std::collections::HashSet::new(),
            streaming: false,
        }
    }

    /// The usage summed so far.
    pub(crate) fn usage(&self) -> &Usage {
        &self.usage
    }

    /// The messages one event becomes (often none: hook runs, permission decisions and the
    /// log's bookkeeping are not part of the SDK's conversation).
    pub(crate) fn encode(&mut self, event: &AgentEvent) -> Vec<Value> {
        match event {
            AgentEvent::TextDelta(text) => {
                if !self.streaming {
                    self.api_ms += self.last_mark.elapsed().as_millis();
                    self.last_mark = Instant::now();
                }
                let mut out = Vec::new();
                if self.partial {
                    if !self.streaming {
                        out.push(self.stream_event(json!({
                            "type": "content_block_start",
                            "index": 0,
                            "content_block": {"type": "text", "text": ""},
                        })));
                    }
                    out.push(self.stream_event(json!({
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text},
                    })));
                }
                self.streaming = true;
                out
            }
            AgentEvent::Logged(e) => self.logged(e),
            _ => Vec::new(),
        }
    }

    fn stream_event(&self, event: Value) -> Value {
        json!({
            "type": "stream_event",
            "uuid": agent_core::events::EventId::new().as_str(),
            "session_id": self.session_id,
            "event": event,
            "parent_tool_use_id": null,
        })
    }

    /// The fields of one logged model answer's event: its message id, model and usage (the
    /// loop records them on `assistant.message` and `tool.use`); each answer's usage is added
    /// to the prompt's sum once.
    fn answer_fields(&mut self, e: &Event) -> (String, String, Option<Usage>) {
        let (message_id, model, usage) = match &e.payload {
            EventPayload::AssistantMessage(m) => {
                (m.message_id.as_deref(), m.model.as_deref(), m.usage)
            }
            EventPayload::ToolUse(t) => (t.message_id.as_deref(), t.model.as_deref(), t.usage),
            _ => (None, None, None),
        };
        let id = message_id.map_or_else(
            || format!("msg_{}", e.id.as_str().replace('-', "")),
            str::to_owned,
        );
        let model = model.unwrap_or(&self.model).to_owned();
        let usage = usage.map(Usage::from);
        if let Some(u) = &usage
            && self.counted.insert(id.clone())
        {
            self.usage.add(u);
        }
        (id, model, usage)
    }

    fn assistant(&mut self, e: &Event, block: Value) -> Vec<Value> {
        if !self.streaming {
            self.api_ms += self.last_mark.elapsed().as_millis();
        }
        self.streaming = false;
        self.last_mark = Instant::now();
        let (id, model, usage) = self.answer_fields(e);
        let mut message = json!({
            "id": id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": null,
        });
        // The Anthropic API's snake_case names, as `Usage` serialises them.
        if let (Some(u), Some(m)) = (usage, message.as_object_mut()) {
            m.insert("usage".into(), json!(u));
        }
        vec![json!({
            "type": "assistant",
            "message": message,
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": e.id.as_str(),
        })]
    }

    fn logged(&mut self, e: &Event) -> Vec<Value> {
        match &e.payload {
            EventPayload::AssistantMessage(m) => {
                self.assistant(e, json!({"type": "text", "text": m.text}))
            }
            EventPayload::ToolUse(t) => {
                self.calls
                    .insert(t.tool_use_id.clone(), (t.name.clone(), t.input.clone()));
                self.assistant(
                    e,
                    json!({"type": "tool_use", "id": t.tool_use_id, "name": t.name, "input": t.input}),
                )
            }
            EventPayload::ToolResult(r) => {
                self.last_mark = Instant::now();
                if r.error_type.as_deref() == Some("permission_denied")
                    && let Some((name, input)) = self.calls.get(&r.tool_use_id)
                {
                    self.denials.push(json!({
                        "tool_name": name,
                        "tool_use_id": r.tool_use_id,
                        "tool_input": input,
                    }));
                }
                let text = agent_loop::output_text(&r.output);
                vec![json!({
                    "type": "user",
                    "message": {"role": "user", "content": [{
                        "type": "tool_result",
                        "tool_use_id": r.tool_use_id,
                        "content": text,
                        "is_error": r.is_error,
                    }]},
                    "parent_tool_use_id": null,
                    "session_id": self.session_id,
                    "uuid": e.id.as_str(),
                    "tool_use_result": r.output,
                })]
            }
            _ => Vec::new(),
        }
    }

    /// The `result` message of the run: subtype from the stop reason, usage and cost summed
    /// over the run's answers; `budget_exceeded` turns it into `error_max_budget_usd`.
    pub(crate) fn result(&self, r: &RunResult, model: &str, budget_exceeded: bool) -> Value {
        let (subtype, is_error) = match r.stop_reason {
            _ if budget_exceeded => ("error_max_budget_usd", true),
            RunStopReason::MaxTurns => ("error_max_turns", true),
            RunStopReason::Error | RunStopReason::Interrupted => ("error_during_execution", true),
            _ => ("success", r.is_error),
        };
        // The loop's own sum when the events carried none (an older provider adapter).
        let usage = if self.counted.is_empty() {
            r.usage
        } else {
            self.usage
        };
        let cost = agent_providers::pricing::price(model).map_or(0.0, |p| p.cost(&usage));
        let mut out = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": self.started.elapsed().as_millis() as u64,
            "duration_api_ms": self.api_ms as u64,
            "num_turns": r.turns,
            "result": r.final_text,
            "stop_reason": r.stop_reason,
            "session_id": r.session_id,
            "total_cost_usd": cost,
            "usage": usage,
            "modelUsage": {
                model: {
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "cacheReadInputTokens": usage.cache_read_input_tokens,
                    "cacheCreationInputTokens": usage.cache_creation_input_tokens,
                    "costUSD": cost,
                }
            },
            "permission_denials": self.denials,
            "uuid": agent_core::events::EventId::new().as_str(),
        });
        if let Some(obj) = out.as_object_mut() {
            if let Some(e) = &r.error {
                obj.insert("errors".into(), json!([e]));
            }
            if r.stop_reason == RunStopReason::Interrupted {
                obj.insert("terminal_reason".into(), json!("aborted_tools"));
            }
        }
        out
    }
}
