//! The session's hooks as the loop runs them: each run logged (`hook.run`), its notices shown,
//! the context it gives injected for the model (capped), and the transcript hooks read kept
//! up to date.

use agent_core::events::{Event, EventPayload, UserMessage};
use agent_core::hooks::{
    Decision, EventFields, HookEvent, HookExecution, SessionEndInput, SessionStartInput,
};
use agent_providers::{ContentBlock, Role};
use serde_json::{Map, Value};

use crate::context::reminder;
use crate::error::AgentError;
use crate::events::{AgentEvent, Sink};
use crate::runner::Runner;

/// Hook output injected into the model's context is capped at this many characters.
pub const MAX_INJECTED_CHARS: usize = 10_000;

impl Runner {
    /// A `user.message` the runtime injected (hook context, notices to the model).
    pub(crate) fn meta_message(text: &str) -> Event {
        let mut e = Event::new(
            0,
            None,
            EventPayload::UserMessage(UserMessage {
                text: reminder(text),
            }),
        );
        e.extra.insert("isMeta".into(), Value::Bool(true));
        e
    }

    /// Rewrites the transcript hooks read (`transcript_path`) from the log, when one is kept.
    /// A failure is reported, not fatal: the hooks still run.
    pub(crate) async fn write_transcript(&self) {
        let Some(path) = &self.transcript else {
            return;
        };
        let text = match self
            .core
            .store
            .export(&self.session, agent_store::ExportFormat::Claude)
            .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "cannot export the transcript for hooks");
                return;
            }
        };
        let tmp = path.with_extension("jsonl.tmp");
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, text))
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            tracing::warn!(error = %e, path = %path.display(), "cannot write the transcript for hooks");
        }
    }

    /// Runs hooks of one event and logs what ran; returns the execution.
    pub(crate) async fn hooks(
        &self,
        sink: &Sink,
        event: HookEvent,
        fields: EventFields,
    ) -> Result<HookExecution, AgentError> {
        if !self.core.hooks.has_hooks(event) {
            return Ok(HookExecution::default());
        }
        self.write_transcript().await;
        let mut ctx = self.hook_ctx.clone();
        ctx.permission_mode = Some(self.executor.engine().mode());
        let run = self.core.hooks.execute(ctx.input(event, fields)).await;
        self.log(
            sink,
            run.runs
                .iter()
                .map(|r| EventPayload::HookRun(r.to_event(event)))
                .collect(),
        )
        .await?;
        for n in run
            .outcome
            .notices
            .iter()
            .chain(run.outcome.system_message.iter())
        {
            sink.send(AgentEvent::Notice(n.clone()));
        }
        Ok(run)
    }

    /// Context hooks gave for the model, capped.
    pub(crate) fn injected(run: &HookExecution) -> Option<String> {
        let text = run.outcome.additional_context.join("\n");
        if text.trim().is_empty() {
            return None;
        }
        Some(if text.chars().count() > MAX_INJECTED_CHARS {
            let cut: String = text.chars().take(MAX_INJECTED_CHARS).collect();
            format!("{cut}\n[hook output cut at {MAX_INJECTED_CHARS} characters]")
        } else {
            text
        })
    }

    /// Logs injected context as an `isMeta` user message and adds it to the history.
    pub(crate) async fn inject(&mut self, sink: &Sink, text: &str) -> Result<(), AgentError> {
        self.log_events(sink, vec![Self::meta_message(text)])
            .await?;
        self.history
            .push(Role::User, ContentBlock::text(reminder(text)));
        Ok(())
    }

    /// SessionStart hooks (`startup`, `resume` or `fork`); their context goes to the model.
    pub(crate) async fn session_start(
        &mut self,
        sink: &Sink,
        source: &str,
    ) -> Result<(), AgentError> {
        let run = self
            .hooks(
                sink,
                HookEvent::SessionStart,
                EventFields::SessionStart(SessionStartInput {
                    source: source.to_owned(),
                    model: Some(self.core.options.model.clone()),
                    extra: Map::new(),
                }),
            )
            .await?;
        if let Some(text) = Self::injected(&run) {
            self.inject(sink, &text).await?;
        }
        Ok(())
    }

    /// SessionEnd hooks.
    pub(crate) async fn session_end(&self, reason: &str) -> Result<(), AgentError> {
        self.hooks(
            &Sink::default(),
            HookEvent::SessionEnd,
            EventFields::SessionEnd(SessionEndInput {
                reason: reason.to_owned(),
                extra: Map::new(),
            }),
        )
        .await?;
        Ok(())
    }
}

/// Whether a merged hook decision blocks what its event announces.
pub(crate) fn blocks(d: Decision) -> bool {
    matches!(d, Decision::Block | Decision::Deny)
}
