//! Driving one prompt's run: its events streamed to the live transcript (or an observer),
//! Ctrl-C interrupting it cleanly, Bash's background commands waited for before a review, and the
//! exit status a run ends with.

use std::sync::Arc;

use agent_core::events::Event;
use agent_loop::{Agent, AgentEvent, RunResult, RunStopReason};
use agent_tools::Bash;
use anyhow::{Context, Result};
use futures_util::{FutureExt as _, StreamExt as _};

use super::live::Live;
use crate::exit::Exit;
use crate::output;

/// Streams one prompt's run to the terminal through `live` (or collects it quietly for
/// `--json` when `None`), with Ctrl-C interrupting it cleanly.
pub(crate) async fn drive(
    agent: &mut Agent,
    prompt: &str,
    live: Option<&mut Live>,
) -> Result<(RunResult, Vec<Event>)> {
    drive_observed(agent, prompt, live, None).await
}

/// [`drive`], with every event also shown to `observe` as it happens (headless output).
pub(crate) async fn drive_observed(
    agent: &mut Agent,
    prompt: &str,
    mut live: Option<&mut Live>,
    mut observe: Option<&mut (dyn FnMut(&AgentEvent) + Send)>,
) -> Result<(RunResult, Vec<Event>)> {
    let interrupt = agent.interrupter();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            super::live::ctrl_c_pressed();
            interrupt.interrupt();
            // A second Ctrl-C ends the process at once; the log stays readable (a call
            // without its result is answered when the session is resumed).
            if tokio::signal::ctrl_c().await.is_ok() {
                // MCP servers run in process groups of their own: no Ctrl-C reaches them, and
                // no destructor runs after `exit`, so they are ended here.
                agent_mcp::end_all_blocking();
                std::process::exit(130);
            }
        }
    });
    let mut logged = Vec::new();
    let mut result = None;
    {
        let mut stream = std::pin::pin!(agent.query(prompt).fuse());
        while let Some(item) = stream.next().await {
            // With what was sent along with it (the calls of one answer come together, so
            // the transcript can number them). The observer sees each event before the stream
            // is polled again: polling drives the loop on (a tool, the next model call), and
            // what the observer decides (an interrupt at --max-budget-usd) must come first.
            let first = item?;
            if let Some(observe) = observe.as_deref_mut() {
                observe(&first);
            }
            let mut batch = vec![first];
            while let Some(Some(more)) = stream.next().now_or_never() {
                let more = more?;
                if let Some(observe) = observe.as_deref_mut() {
                    observe(&more);
                }
                batch.push(more);
            }
            if let Some(live) = live.as_deref_mut() {
                live.show(&batch);
            }
            for event in batch {
                match event {
                    AgentEvent::Logged(e) => logged.push(e),
                    AgentEvent::Finished(r) => result = Some(r),
                    _ => {}
                }
            }
        }
    }
    if let Some(live) = live {
        live.finish();
    }
    ctrl_c.abort();
    let result = result.context("the run ended without a result")?;
    Ok((result, logged))
}

/// Waits for the background commands Bash started (each within its own timeout), so a review
/// taken after holds the whole of what they did.
pub(crate) async fn join_background(bash: &Arc<Bash>, quiet: bool) -> Result<()> {
    let waiting = bash.background_running();
    if waiting > 0 && !quiet {
        output::warning(&format!(
            "waiting for {waiting} background command(s) to finish before the review"
        ));
    }
    let joined = Arc::clone(bash);
    tokio::task::spawn_blocking(move || joined.wait_background()).await?;
    Ok(())
}

/// The exit status of a run: 130 interrupted; 1 an error, the turn limit reached, or the
/// commit refused; 0 otherwise.
pub(crate) fn run_exit(result: &RunResult, refused: bool) -> Exit {
    match result.stop_reason {
        RunStopReason::Interrupted => Exit::Code(130),
        RunStopReason::MaxTurns => Exit::Denied,
        _ if result.is_error || refused => Exit::Denied,
        _ => Exit::Success,
    }
}
