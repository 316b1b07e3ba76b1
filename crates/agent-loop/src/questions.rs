//! Permission questions as the session sees them: the loop wraps the host's [`Prompter`] so
//! every question asked (and its answer) becomes a `permission.question` event before the
//! call's `permission.decision`, and Notification hooks hear about each prompt.

use std::sync::{Arc, Mutex, PoisonError};

use agent_core::events::{EventPayload, PermissionQuestion};
use agent_core::hooks::{EventFields, HookContext, HookEvent, HookRegistry, NotificationInput};
use agent_core::permissions::{PermissionRequest, PromptAnswer, Prompter};
use serde_json::Map;

/// Side events produced while a tool call runs (questions, subagent starts and stops), keyed
/// by the call's `toolUseId`, for the loop to log before the call's result.
#[derive(Clone, Debug, Default)]
pub(crate) struct SideEvents(Arc<Mutex<Vec<(String, EventPayload)>>>);

impl SideEvents {
    pub(crate) fn push(&self, tool_use_id: &str, payload: EventPayload) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((tool_use_id.to_owned(), payload));
    }

    /// Takes the events of one call, in the order they happened.
    pub(crate) fn take(&self, tool_use_id: &str) -> Vec<EventPayload> {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (mine, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(id, _)| id == tool_use_id);
        *all = rest;
        mine.into_iter().map(|(_, p)| p).collect()
    }
}

/// The host's prompter, recorded.
pub(crate) struct RecordingPrompter {
    /// Shows the real folder instead of its shadow in the question.
    pub(crate) view: Option<agent_core::view::PathView>,
    pub(crate) inner: Arc<dyn Prompter>,
    pub(crate) side: SideEvents,
    pub(crate) hooks: Arc<HookRegistry>,
    pub(crate) context: HookContext,
}

#[async_trait::async_trait]
impl Prompter for RecordingPrompter {
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
        let shown;
        let request = match &self.view {
            Some(v) => {
                let mut r = request.clone();
                r.reason = v.to_shown(&r.reason);
                v.value_to_shown(&mut r.input);
                shown = r;
                &shown
            }
            None => request,
        };
        let key = request.tool_use_id.clone().unwrap_or_default();
        let question_id = format!("q_{}", uuid::Uuid::new_v4().simple());
        self.side.push(
            &key,
            EventPayload::PermissionQuestion(PermissionQuestion {
                question_id,
                tool_name: request.tool_name.clone(),
                prompt: request.reason.clone(),
            }),
        );
        if self.hooks.has_hooks(HookEvent::Notification) {
            let input = self.context.input(
                HookEvent::Notification,
                EventFields::Notification(NotificationInput {
                    message: format!("Permission needed to use {}", request.tool_name),
                    title: None,
                    notification_type: Some("permission_prompt".into()),
                    extra: Map::new(),
                }),
            );
            let run = self.hooks.execute(input).await;
            for r in &run.runs {
                self.side.push(
                    &key,
                    EventPayload::HookRun(r.to_event(HookEvent::Notification)),
                );
            }
        }
        let answer = self.inner.prompt(request).await;
        // An input the person edited names the real folder, as shown: back onto the shadow.
        match (&self.view, answer) {
            (Some(v), PromptAnswer::AllowOnce { updated_input }) => PromptAnswer::AllowOnce {
                updated_input: updated_input.map(|i| v.input_to_actual(&i).unwrap_or(i)),
            },
            (
                Some(v),
                PromptAnswer::AllowForSession {
                    scope,
                    updated_input,
                },
            ) => PromptAnswer::AllowForSession {
                scope,
                updated_input: updated_input.map(|i| v.input_to_actual(&i).unwrap_or(i)),
            },
            (_, answer) => answer,
        }
    }
}

/// A prompter that answers by a fixed policy: what `decide` returns for the request. The
/// demo's "user" and a convenient host for embedders that decide in code (the equivalent of
/// the Agent SDK's `canUseTool` callback).
pub struct PolicyPrompter<F> {
    decide: F,
}

impl<F> PolicyPrompter<F>
where
    F: Fn(&PermissionRequest) -> PromptAnswer + Send + Sync,
{
    /// A prompter answering with `decide`.
    pub fn new(decide: F) -> Self {
        Self { decide }
    }
}

impl<F> std::fmt::Debug for PolicyPrompter<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PolicyPrompter")
    }
}

#[async_trait::async_trait]
impl<F> Prompter for PolicyPrompter<F>
where
    F: Fn(&PermissionRequest) -> PromptAnswer + Send + Sync,
{
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
        (self.decide)(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::permissions::PermissionMode;
    use agent_core::view::PathView;
    use serde_json::json;

    /// Remembers the request it was asked and allows it with the input it is given.
    struct Person {
        asked: Mutex<Option<PermissionRequest>>,
        edited: serde_json::Value,
    }

    #[async_trait::async_trait]
    impl Prompter for Person {
        async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
            *self.asked.lock().unwrap() = Some(request.clone());
            PromptAnswer::AllowOnce {
                updated_input: Some(self.edited.clone()),
            }
        }
    }

    #[tokio::test]
    async fn a_question_shows_the_real_folder_and_an_edited_input_goes_back_to_the_shadow() {
        let person = Arc::new(Person {
            asked: Mutex::new(None),
            edited: json!({"file_path": "/r/app/b.py", "content": "x"}),
        });
        let recording = RecordingPrompter {
            view: Some(PathView::new("/r/app", "/s/ws/tree")),
            inner: person.clone(),
            side: SideEvents::default(),
            hooks: Arc::new(HookRegistry::new()),
            context: HookContext::new("s1".to_owned(), std::path::Path::new("/s/ws/tree")),
        };
        let request = PermissionRequest {
            tool_name: "Write".into(),
            input: json!({"file_path": "/s/ws/tree/a.py", "content": "x"}),
            reason: "/s/ws/tree/a.py is outside the rules".into(),
            suggestions: Vec::new(),
            tool_use_id: Some("t1".into()),
            mode: PermissionMode::Default,
        };
        let answer = recording.prompt(&request).await;
        let asked = person.asked.lock().unwrap().clone().unwrap();
        assert_eq!(asked.input["file_path"], "/r/app/a.py");
        assert_eq!(asked.reason, "/r/app/a.py is outside the rules");
        assert_eq!(
            answer,
            PromptAnswer::AllowOnce {
                updated_input: Some(json!({"file_path": "/s/ws/tree/b.py", "content": "x"}))
            }
        );
    }
}
