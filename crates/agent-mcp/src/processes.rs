//! The processes of stdio servers and how they end. Each server starts in a process group of
//! its own (so a Ctrl-C at the terminal reaches the runtime, not the servers, and a launcher
//! such as `npx` and the server it starts are one group), under agent-core's one containment
//! runner ([`ProcessTree`]), which also finds what left the group. Ending a server is polite
//! first: SIGTERM to the group and every process of the tree, up to [`STOP_GRACE`] for them to
//! exit, then SIGKILL for what is left. A registry of the running servers lets a host that is
//! about to exit without running destructors (`std::process::exit`) end them all first
//! ([`end_all_blocking`]).

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use agent_core::process::ProcessTree;

/// How long a server's processes have to exit after SIGTERM before they are killed.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// Every stdio server's processes that may still run.
static RUNNING: Mutex<Vec<Weak<Mutex<Option<ProcessTree>>>>> = Mutex::new(Vec::new());

/// The processes of one stdio server (empty for an http server, or once ended).
#[derive(Debug, Default)]
pub(crate) struct ServerProcesses(Arc<Mutex<Option<ProcessTree>>>);

impl ServerProcesses {
    /// The processes of `tree`, registered so that [`end_all_blocking`] finds them.
    pub(crate) fn new(tree: ProcessTree) -> Self {
        let this = Self(Arc::new(Mutex::new(Some(tree))));
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|w| w.strong_count() > 0);
        running.push(Arc::downgrade(&this.0));
        this
    }

    fn take(&self) -> Option<ProcessTree> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Ends them: SIGTERM, up to [`STOP_GRACE`], then SIGKILL (and reaping). Idempotent.
    pub(crate) async fn end(&self) {
        if let Some(mut tree) = self.take() {
            tree.end_gracefully(STOP_GRACE).await;
        }
    }

    /// Ends them without waiting (for `Drop`): SIGTERM now, and SIGKILL after [`STOP_GRACE`]
    /// from a thread of its own; killed at once when no thread can be started.
    pub(crate) fn end_in_background(&self) {
        let Some(mut tree) = self.take() else {
            return;
        };
        tree.terminate();
        let spawned = std::thread::Builder::new()
            .name("mcp-server-end".into())
            .spawn(move || tree.end_gracefully_blocking(STOP_GRACE));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start a thread to end an MCP server; killing it now");
        }
        // When the thread could not start, the tree it was given is dropped with the error,
        // which kills every process at once.
    }
}

/// Ends every stdio server of this process that may still run, and waits (at most about
/// [`STOP_GRACE`] and agent-core's cleanup budget): SIGTERM to all of them at once, then
/// SIGKILL to what is left. For a host about to exit without running destructors (a second
/// Ctrl-C that calls `std::process::exit`); the servers' connections are not closed first.
pub fn end_all_blocking() {
    let trees: Vec<ProcessTree> = {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running
            .drain(..)
            .filter_map(|w| w.upgrade())
            .filter_map(|t| t.lock().unwrap_or_else(PoisonError::into_inner).take())
            .collect()
    };
    for tree in &trees {
        tree.terminate();
    }
    let deadline = std::time::Instant::now() + STOP_GRACE;
    while trees.iter().any(ProcessTree::any_running) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for mut tree in trees {
        tree.end_blocking();
    }
}
