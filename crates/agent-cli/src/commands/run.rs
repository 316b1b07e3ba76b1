//! `agent run "PROMPT"`: the agent on a real folder, through a real provider.
//!
//! The folder is imported into its shadow workspace (or the existing shadow is reused), the
//! agent works there through the full gate, the transcript streams live, and at the end the
//! change set is shown and applied only when confirmed (`--yes`, or `y` on a terminal).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use agent_core::events::{Event, EventPayload, TokenUsage};
use agent_loop::{Agent, AgentEvent, RunResult};
use agent_tools::Bash;
use agent_workspace::{ChangeSet, CommitOptions, Workspace, WorkspaceError};
use anyhow::Result;
use serde_json::{Value, json};

use super::drive::{drive_observed, join_background, run_exit};
use super::headless::stream::TurnEncoder;
use super::live::Live;
use super::open::{Opened, open};
use crate::cli::run::RunArgs;
use crate::exit::Exit;
use crate::output;

/// Runs the prompt, reviews the change set (and applies it when confirmed), and reports.
pub fn run(mut args: RunArgs) -> Result<Exit> {
    let Opened {
        runtime,
        store,
        mut agent,
        mut ws,
        root,
        shadow_root,
        bash,
        mut servers,
        mut live,
        ..
    } = open(&mut args.session, args.json || args.output_format.is_some())?;
    let mut encoder = TurnEncoder::new(
        agent.session_id().as_str(),
        agent.model(),
        args.include_partial_messages,
    );
    if args.output_format.as_deref() == Some("stream-json") {
        let facts = super::headless::init_facts(&agent, &root, &servers);
        output::stdout_line(&super::headless::stream::init_message(&facts).to_string());
    }
    let (result, session, model) = runtime.block_on(async {
        let ran = prompt(&args, &mut agent, &mut live, &bash, &mut encoder).await?;
        let id = agent.session_id().clone();
        let model = agent.model().to_owned();
        agent.close().await?;
        servers.shutdown().await;
        anyhow::Ok((ran, id, model))
    })?;
    if !args.json {
        super::cost::print_summary(&result.usage, &model);
    }
    let log = |payload: EventPayload| -> Result<()> {
        runtime.block_on(store.append(&session, vec![Event::new(0, None, payload)]))?;
        Ok(())
    };
    let reviewed = review(&args, &mut ws, &root, &log)?;
    runtime.block_on(store.close(&session))?;
    let ran = Ran {
        result: &result,
        model: &model,
        root: &root,
        shadow_root: &shadow_root,
    };
    report(&args, &encoder, &ran, &reviewed)?;
    Ok(run_exit(&result, reviewed.refused))
}

/// Runs the prompt to its end, the encoder seeing every event (the result sums usage and
/// denials; stream-json writes its messages as they come), and waits for Bash's background
/// commands, so the change set is the whole of what the run did.
async fn prompt(
    args: &RunArgs,
    agent: &mut Agent,
    live: &mut Live,
    bash: &Arc<Bash>,
    encoder: &mut TurnEncoder,
) -> Result<RunResult> {
    let quiet = args.json || args.output_format.is_some();
    let stream = args.output_format.as_deref() == Some("stream-json");
    let mut show = |e: &AgentEvent| {
        for m in encoder.encode(e) {
            if stream {
                output::stdout_line(&m.to_string());
            }
        }
    };
    let (result, _) = drive_observed(
        agent,
        &args.prompt,
        (!quiet).then_some(live),
        Some(&mut show),
    )
    .await?;
    join_background(bash, args.json).await?;
    Ok(result)
}

/// What the review at the end of a run came to.
struct Reviewed {
    /// The change set reviewed.
    set: ChangeSet,
    /// The commit's report, what refused it, or `null` when nothing was applied.
    commit: Value,
    /// Whether the commit was refused.
    refused: bool,
}

/// The review: the change set is pinned down (paths, kinds, hashes) and logged before it is
/// shown, and the commit, when confirmed, applies exactly that review.
fn review(
    args: &RunArgs,
    ws: &mut Workspace,
    root: &Path,
    log: &dyn Fn(EventPayload) -> Result<()>,
) -> Result<Reviewed> {
    let review = ws.review()?;
    let set = review.changes().clone();
    log(EventPayload::WorkspaceDiff(set.event()))?;
    let mut reviewed = Reviewed {
        set,
        commit: json!(null),
        refused: false,
    };
    if reviewed.set.is_empty() || args.no_commit || !confirmed(args, ws, &reviewed.set, root)? {
        return Ok(reviewed);
    }
    match ws.commit_review(&review, &CommitOptions::default()) {
        Ok(report) => {
            log(EventPayload::WorkspaceCommit(report.event()))?;
            reviewed.commit = serde_json::to_value(&report)?;
        }
        Err(WorkspaceError::Conflicts(conflicts)) => {
            log(EventPayload::WorkspaceCommit(
                agent_workspace::CommitReport::refused_event(&conflicts),
            ))?;
            reviewed.refused = true;
            reviewed.commit = json!({"refused": conflicts});
        }
        Err(WorkspaceError::ChangedSinceReview(paths)) => {
            output::warning(&WorkspaceError::ChangedSinceReview(paths.clone()).to_string());
            reviewed.refused = true;
            reviewed.commit = json!({"changedSinceReview": paths});
        }
        Err(e) => return Err(e.into()),
    }
    Ok(reviewed)
}

/// Whether to apply the change set: `--yes`; on a terminal (without `--json`), the change set
/// and its diffs are shown and the answer is asked; otherwise no.
fn confirmed(args: &RunArgs, ws: &Workspace, set: &ChangeSet, root: &Path) -> Result<bool> {
    if args.yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() || args.json {
        return Ok(false);
    }
    output::stdout_line("");
    super::workspace::print_set(set);
    for (_, text) in ws.diff(None)? {
        output::stdout_text(&crate::colour::Palette::for_stdout().diff(&text));
    }
    Ok(super::workspace::confirm(&format!("Apply these changes to {}?", root.display())).is_ok())
}

/// What a run produced, for its report.
struct Ran<'a> {
    result: &'a RunResult,
    model: &'a str,
    /// The real folder.
    root: &'a Path,
    shadow_root: &'a Path,
}

/// The end of the output: the headless result (`--output-format`), the JSON object
/// (`--json`), or a line on what waits in the shadow or why the commit was refused.
fn report(args: &RunArgs, encoder: &TurnEncoder, ran: &Ran<'_>, reviewed: &Reviewed) -> Result<()> {
    let Reviewed {
        set,
        commit,
        refused,
    } = reviewed;
    let result = ran.result;
    if let Some(format) = &args.output_format {
        let mut message = encoder.result(result, ran.model, false);
        if let Some(obj) = message.as_object_mut() {
            obj.insert("changes".into(), serde_json::to_value(&set.changes)?);
            obj.insert("commit".into(), commit.clone());
        }
        match format.as_str() {
            "text" => output::stdout_line(&result.final_text),
            _ => output::stdout_line(&message.to_string()),
        }
    } else if args.json {
        output::stdout_line(
            &json!({
                "sessionId": result.session_id,
                "finalText": result.final_text,
                "stopReason": result.stop_reason,
                "turns": result.turns,
                "usage": TokenUsage::from(result.usage),
                "costUsd": super::cost::cost_usd(&result.usage, ran.model),
                "error": result.error,
                "real": ran.root,
                "shadow": ran.shadow_root,
                "changes": set.changes,
                "commit": commit,
            })
            .to_string(),
        );
    } else if !set.is_empty() && commit.is_null() {
        output::stdout_line(&format!(
            "{} change(s) wait in the shadow workspace: review with `agent workspace diff --workspace {}`, apply with `agent workspace commit --workspace {}`",
            set.changes.len(),
            ran.root.display(),
            ran.root.display()
        ));
    } else if *refused {
        output::warning(
            "the commit was refused: files changed in the real folder since import, or in the shadow since the review (nothing was applied)",
        );
    }
    Ok(())
}
