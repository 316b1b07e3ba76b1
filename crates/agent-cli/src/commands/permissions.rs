//! `agent permissions check`.

use agent_core::permissions::{PermissionEngine, PermissionMode, PreToolUseOutcome, ToolCall};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{absolute, load_settings};
use crate::cli::permissions::{CheckArgs, PermissionsCommand};
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: PermissionsCommand) -> Result<Exit> {
    match cmd {
        PermissionsCommand::Check(args) => check(args),
    }
}

fn check(args: CheckArgs) -> Result<Exit> {
    let input: Value = serde_json::from_str(&args.input)
        .with_context(|| format!("--input is not valid JSON ({:?}); pass one JSON object such as '{{\"command\":\"ls\"}}'", args.input))?;
    if !input.is_object() {
        bail!("--input must be a JSON object such as '{{\"command\":\"ls\"}}', got {input}");
    }
    if args.tool.trim().is_empty() {
        bail!("--tool must name a tool, e.g. Bash");
    }
    let loaded = load_settings(&args.settings)?;
    let (settings, home, cwd) = (loaded.settings, loaded.home, loaded.cwd);
    let requested = args
        .mode
        .as_deref()
        .map(str::parse::<PermissionMode>)
        .transpose()?;
    let mode = settings.mode(requested)?;
    let mut builder = PermissionEngine::builder(&cwd, &home)
        .settings(&settings)
        .mode(mode);
    for d in args.add_dirs {
        builder = builder.add_dir(absolute(d)?);
    }
    let engine = builder.build()?;
    let call = ToolCall::new(args.tool, input);
    let d = engine.check(&call, &PreToolUseOutcome::default());
    let out = json!({
        "decision": d.behavior.as_str(),
        "step": d.step.as_str(),
        "stepNumber": d.step.number(),
        "rule": d.rule.as_ref().map(|r| r.text.clone()),
        "ruleSource": d.rule.as_ref().map(|r| r.origin.to_string()),
        "reason": d.reason,
        "mode": mode.as_str(),
        "suggestions": d.suggestions,
    });
    output::stdout_line(&out.to_string());
    Ok(Exit::Success)
}
