//! Compaction: when the context passes the threshold (or on `/compact`), PreCompact hooks, a
//! summarising call without tools, a `compaction` event replacing the conversation so far,
//! PostCompact hooks.

use std::time::Instant;

use agent_core::events::{Compaction, ErrorEvent, Event, EventPayload};
use agent_core::hooks::{CompactInput, EventFields, HookEvent};
use agent_providers::{ContentBlock, Role, ToolChoice};
use serde_json::{Map, json};

use crate::context::fixed_tokens;
use crate::error::AgentError;
use crate::events::Sink;
use crate::runner::{RunState, Runner};

impl Runner {
    /// Compacts when the context is past the threshold: PreCompact hooks, a summarising call
    /// without tools, a `compaction` event replacing everything so far, PostCompact hooks.
    pub(crate) async fn compact_if_needed(
        &mut self,
        sink: &Sink,
        state: &mut RunState,
    ) -> Result<(), AgentError> {
        let window = self.window();
        let fixed = *self
            .fixed
            .get_or_init(|| fixed_tokens(self.system(), &self.specs));
        let used = self.history.tokens(fixed);
        let threshold = (window as f64 * self.core.options.compact_at) as u64;
        if used < threshold || self.history.len() < 2 {
            return Ok(());
        }
        self.compact(sink, state, "auto", None).await
    }

    /// Compacts the conversation now (`trigger`: `auto` or `manual`).
    pub(crate) async fn compact(
        &mut self,
        sink: &Sink,
        state: &mut RunState,
        trigger: &str,
        instructions: Option<String>,
    ) -> Result<(), AgentError> {
        let fields = || {
            EventFields::Compact(CompactInput {
                trigger: trigger.to_owned(),
                custom_instructions: instructions.clone(),
                extra: Map::new(),
            })
        };
        self.hooks(sink, HookEvent::PreCompact, fields()).await?;
        let started = Instant::now();
        let mut request = self.request(ToolChoice::None);
        let mut ask = "Summarise the conversation so far for your own later use: the user's goals and instructions, what was done (files read and changed, commands run and their results), decisions and their reasons, and what remains to do. Be complete and concrete; this summary replaces the conversation.".to_owned();
        if let Some(i) = &instructions {
            ask.push_str("\n\nFocus: ");
            ask.push_str(i);
        }
        match request.messages.last_mut() {
            Some(last) if last.role == Role::User => {
                last.content.push(ContentBlock::text(ask));
            }
            _ => request.messages.push(agent_providers::Message::user(ask)),
        }
        let summary = match self.core.provider.complete(&request).await {
            Ok(r) => {
                state.usage.add(&r.usage);
                r.text()
            }
            Err(e) => {
                // Compaction failing is not fatal: go on with the full history and say so.
                self.log(
                    sink,
                    vec![EventPayload::Error(ErrorEvent {
                        message: format!("compaction failed: {e}"),
                        error_type: Some("compaction_failed".into()),
                    })],
                )
                .await?;
                return Ok(());
            }
        };
        let loaded = self.core.store.metadata(&self.session).await?;
        let to_seq = loaded.last_seq;
        let from_seq = self.first_conversation_seq().await?.unwrap_or(1);
        let mut e = Event::new(
            0,
            None,
            EventPayload::Compaction(Compaction {
                summary: summary.clone(),
                from_seq,
                to_seq,
            }),
        );
        e.extra.insert("trigger".into(), json!(trigger));
        e.extra.insert(
            "durationMs".into(),
            json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
        );
        self.log_events(sink, vec![e]).await?;
        self.history.replace_with_summary(&summary);
        self.hooks(sink, HookEvent::PostCompact, fields()).await?;
        Ok(())
    }

    /// The `seq` of the first conversation event not already replaced by a compaction.
    pub(crate) async fn first_conversation_seq(&self) -> Result<Option<u64>, AgentError> {
        let messages = self.core.store.messages(&self.session, None).await?;
        Ok(messages.first().map(|m| match m.content {
            agent_store::Content::Summary { from_seq, .. } => from_seq,
            _ => m.seq,
        }))
    }
}
