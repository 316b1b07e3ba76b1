//! What a running agent tells its caller ([`AgentEvent`]), and how a run is interrupted
//! ([`Interrupt`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_core::events::Event;
use agent_core::tools::CancellationFlag;
use tokio::sync::{Notify, mpsc};

use super::result::RunResult;

/// One thing the caller of [`super::Agent::query`] sees, in the order it happened.
#[derive(Clone, Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "each event is moved once through the caller's channel; boxing `Logged` would change the pattern every caller matches"
)]
pub enum AgentEvent {
    /// An event appended to the session log (`user.message`, `tool.use`, `tool.result`,
    /// `permission.decision`, `hook.run`, `compaction`, `error`, `result`, ...), with its `seq`.
    Logged(Event),
    /// A fragment of the assistant's answer, as soon as the provider streamed it (not logged;
    /// the whole text is logged as `assistant.message`).
    TextDelta(String),
    /// A notice for the user: a hook's `systemMessage`, a hook that failed.
    Notice(String),
    /// The provider call failed in a way worth retrying and is tried again after
    /// [`agent_providers::Retry::delay`] (not logged: a retry that succeeds leaves no trace in
    /// the conversation; one that runs out ends the run with an `error` event). The CLI shows
    /// it as "retrying in 2 s after HTTP 503".
    Retry(agent_providers::Retry),
    /// The run ended; the last event of a run.
    Finished(RunResult),
}

/// Where a run sends its [`AgentEvent`]s: nowhere ([`super::Agent::prompt`]) or a channel
/// ([`super::Agent::query`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Sink(Option<mpsc::UnboundedSender<AgentEvent>>);

impl Sink {
    pub(crate) fn channel(tx: mpsc::UnboundedSender<AgentEvent>) -> Self {
        Self(Some(tx))
    }

    pub(crate) fn send(&self, event: AgentEvent) {
        if let Some(tx) = &self.0 {
            // A caller that dropped the stream no longer listens; the run still completes
            // and is logged.
            let _ = tx.send(event);
        }
    }

    pub(crate) fn is_listening(&self) -> bool {
        self.0.as_ref().is_some_and(|tx| !tx.is_closed())
    }
}

/// Interrupts a run (Ctrl-C in the CLI): the provider call in flight is dropped; running tool
/// calls see their cancellation flag and stop (Bash ends every process the command started,
/// host or WASI), each getting a `cancelled` result that says it was cancelled by the user
/// after it started, for how long it ran and what was ended (a call still running
/// [`super::CANCEL_GRACE`] later is abandoned and says so; one that completed anyway keeps
/// its result); calls not yet started get a `cancelled` "not run" result; and the run ends with
/// stop reason `interrupted`, leaving a log that resumes cleanly. Background Bash commands are
/// not stopped. Cloneable and usable from any thread.
#[derive(Clone, Debug, Default)]
pub struct Interrupt {
    inner: Arc<InterruptInner>,
}

#[derive(Debug, Default)]
struct InterruptInner {
    set: AtomicBool,
    notify: Notify,
    flag: std::sync::Mutex<CancellationFlag>,
}

impl Interrupt {
    /// A handle that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Interrupts the current run.
    pub fn interrupt(&self) {
        self.inner.set.store(true, Ordering::SeqCst);
        self.inner
            .flag
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .cancel();
        self.inner.notify.notify_waiters();
    }

    /// Whether the current run was interrupted.
    pub fn is_set(&self) -> bool {
        self.inner.set.load(Ordering::SeqCst)
    }

    /// Clears the handle for the next run, with a fresh cancellation flag for its tools.
    pub(crate) fn reset(&self) -> CancellationFlag {
        self.inner.set.store(false, Ordering::SeqCst);
        let fresh = CancellationFlag::new();
        *self
            .inner
            .flag
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh.clone();
        fresh
    }

    /// Resolves once the run is interrupted (at once when it already is).
    pub(crate) async fn wait(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}
