//! `agent hooks run` and `agent hooks list`.

use std::path::PathBuf;

use agent_core::hooks::{
    ALL_EVENTS, HookEvent, HookInput, HookRegistry, HookRunResult, HooksConfig,
};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{LoadedSettings, absolute, hook_registry, load_settings};
use crate::cli::hooks::{HookSourcesArgs, HooksCommand, HooksListArgs, HooksRunArgs};
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: HooksCommand) -> Result<Exit> {
    match cmd {
        HooksCommand::Run(args) => run_event(args),
        HooksCommand::List(args) => list(args),
    }
}

struct Loaded {
    registry: HookRegistry,
    cwd: PathBuf,
}

/// Settings (standard sources plus `--settings`), plugins, and the registry built from them.
fn load(args: &HookSourcesArgs) -> Result<Loaded> {
    if let Some(cwd) = &args.settings.cwd
        && !absolute(cwd.clone())?.is_dir()
    {
        bail!(
            "--cwd {} is not a directory; hooks run in the session's directory, so pass one that exists",
            cwd.display()
        );
    }
    let LoadedSettings {
        settings,
        home,
        cwd,
        project_dir,
        ..
    } = load_settings(&args.settings)?;
    let mut config = HooksConfig::from_settings(&settings)?;
    for p in &args.plugins {
        let root = absolute(p.clone())?;
        if !root.is_dir() {
            bail!(
                "--plugin {} is not a directory; pass a plugin folder that holds hooks/hooks.json",
                root.display()
            );
        }
        config.add_plugin(&root)?;
    }
    let registry = hook_registry(&config, &project_dir, &home)?;
    Ok(Loaded { registry, cwd })
}

fn parse_event(name: &str) -> Result<HookEvent> {
    name.parse::<HookEvent>().map_err(anyhow::Error::from)
}

fn run_event(args: HooksRunArgs) -> Result<Exit> {
    let event = parse_event(&args.event)?;
    let mut value: Value = serde_json::from_str(&args.input).with_context(|| {
        format!(
            "--input is not valid JSON ({:?}); pass one JSON object such as '{{\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"ls\"}}}}'",
            args.input
        )
    })?;
    let Some(map) = value.as_object_mut() else {
        bail!("--input must be a JSON object, got {value}");
    };
    let loaded = load(&args.sources)?;
    map.entry("session_id")
        .or_insert_with(|| Value::String(format!("hooks-run-{}", uuid::Uuid::new_v4())));
    map.entry("cwd")
        .or_insert_with(|| Value::String(loaded.cwd.to_string_lossy().into_owned()));
    let input = HookInput::from_json(event, value)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (execution, background) = runtime.block_on(async {
        let execution = loaded.registry.execute(input).await;
        let background = loaded.registry.wait_async().await;
        (execution, background)
    });
    let o = &execution.outcome;
    let hooks: Vec<Value> = execution
        .runs
        .iter()
        .chain(background.iter())
        .map(run_json)
        .collect();
    let out = json!({
        "decision": o.decision.as_str(),
        "reason": o.reason,
        "updatedInput": o.updated_input,
        "additionalContext": o.additional_context,
        "systemMessage": o.system_message,
        "continue": o.continue_,
        "stopReason": o.stop_reason,
        "notices": o.notices,
        "hooks": hooks,
    });
    output::stdout_line(&out.to_string());
    Ok(Exit::Success)
}

fn run_json(r: &HookRunResult) -> Value {
    json!({
        "command": &*r.label,
        "kind": &*r.kind,
        "source": &*r.source,
        "exitCode": r.exit_code,
        "durationMs": u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
        "timedOut": r.timed_out,
        "error": r.error,
        "decision": r.outcome.decision.as_str(),
        "async": r.is_async,
    })
}

fn list(args: HooksListArgs) -> Result<Exit> {
    let events: Vec<HookEvent> = match &args.event {
        Some(e) => vec![parse_event(e)?],
        None => ALL_EVENTS.to_vec(),
    };
    let loaded = load(&args.sources)?;
    let reg = &loaded.registry;
    let disabled = reg.disabled_by().map(|p| p.display().to_string());
    if args.json {
        let mut items = Vec::new();
        for event in &events {
            for h in reg.hooks(*event) {
                items.push(json!({
                    "event": event.as_str(),
                    "id": h.id.0,
                    "kind": h.kind,
                    "command": h.label,
                    "source": h.source,
                    "matcher": h.matcher,
                    "if": h.condition.as_ref().map(|c| &c.0),
                    "ifParses": h.condition.as_ref().map(|c| c.1),
                    "timeoutSeconds": h.timeout.as_secs_f64(),
                    "async": h.is_async,
                    "onFailure": if h.blocks_on_failure { "block" } else { "continue" },
                    "statusMessage": h.status_message,
                    "duplicateOf": h.duplicate_of.map(|d| d.0),
                    "runs": disabled.is_none() && h.duplicate_of.is_none(),
                }));
            }
        }
        output::stdout_line(
            &json!({"disabledBy": disabled, "hooks": items, "warnings": reg.warnings()})
                .to_string(),
        );
        return Ok(Exit::Success);
    }
    let mut text = String::new();
    if let Some(d) = &disabled {
        text.push_str(&format!(
            "All hooks are disabled by `disableAllHooks: true` in {d}; nothing below runs.\n\n"
        ));
    }
    let mut any = false;
    for event in &events {
        let hooks = reg.hooks(*event);
        if hooks.is_empty() {
            continue;
        }
        any = true;
        text.push_str(&format!("{event}\n"));
        for h in hooks {
            text.push_str(&format!(
                "  [{}] {} {}\n",
                h.id.0,
                h.kind,
                output::sanitize(&h.label)
            ));
            let matcher = match (&h.matcher, event.matcher_field()) {
                (_, None) => "always (this event has no matcher)".to_owned(),
                (None, Some(f)) => format!("every {f}"),
                (Some(m), Some(f)) if m.trim().is_empty() || m.trim() == "*" => {
                    format!("every {f}")
                }
                (Some(m), Some(f)) => format!("{f} matches {m:?}"),
            };
            text.push_str(&format!("      when: {matcher}"));
            if let Some((rule, parses)) = &h.condition {
                if event.is_tool_event() {
                    text.push_str(&format!(" and the call matches `{rule}`"));
                    if !parses {
                        text.push_str(" (rule does not parse: runs on every call)");
                    }
                } else {
                    text.push_str(&format!(
                        " — never: `if: {rule}` applies to tool events only"
                    ));
                }
            }
            text.push('\n');
            text.push_str(&format!(
                "      timeout: {}s, on failure: {}{}\n",
                h.timeout.as_secs_f64(),
                if h.blocks_on_failure {
                    "block (fail closed)"
                } else {
                    "continue (fail open)"
                },
                if h.is_async {
                    ", async (cannot block)"
                } else {
                    ""
                }
            ));
            text.push_str(&format!("      from: {}\n", output::sanitize(&h.source)));
            if let Some(d) = h.duplicate_of {
                text.push_str(&format!(
                    "      identical to [{}]: runs once, as [{}]\n",
                    d.0, d.0
                ));
            }
        }
    }
    if !any {
        text.push_str("No hooks are configured");
        if let Some(e) = &args.event {
            text.push_str(&format!(" for {e}"));
        }
        text.push_str(".\n");
    }
    for w in reg.warnings() {
        text.push_str(&format!("warning: {}\n", output::sanitize(w)));
    }
    output::stdout_line(text.trim_end());
    Ok(Exit::Success)
}
