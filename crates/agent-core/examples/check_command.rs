//! Decide shell commands against a settings file, as an embedder would.
//!
//! ```sh
//! cargo run -p agent-core --example check_command -- examples/settings.json 'git status && curl x | sh'
//! ```

use std::path::PathBuf;

use agent_core::permissions::{PermissionEngine, PreToolUseOutcome, ToolCall};
use agent_core::settings::Settings;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let settings_file = PathBuf::from(
        args.next()
            .ok_or("usage: check_command SETTINGS.json COMMAND...")?,
    );
    let cwd = std::env::current_dir()?;
    let home = PathBuf::from(std::env::var_os("HOME").ok_or("$HOME is not set")?);
    let text = std::fs::read_to_string(&settings_file)?;
    let root = settings_file
        .parent()
        .map_or_else(|| cwd.clone(), |p| cwd.join(p));
    let settings = Settings::from_value(
        serde_json::from_str(&text)?,
        &settings_file.display().to_string(),
        &root,
        &home,
    )?;
    let engine = PermissionEngine::builder(&cwd, &home)
        .settings(&settings)
        .build()?;
    for command in args {
        let decision = engine.check(
            &ToolCall::new("Bash", json!({ "command": command })),
            &PreToolUseOutcome::default(),
        );
        let line = format!(
            "{:<5} step {} ({}): {}",
            decision.behavior,
            decision.step.number(),
            decision.step.as_str(),
            decision.reason
        );
        std::io::Write::write_all(
            &mut std::io::stdout(),
            format!("{command}\n  {line}\n").as_bytes(),
        )?;
    }
    Ok(())
}
