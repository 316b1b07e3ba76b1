//! `cargo xtask demo [-- ARGS]`: the README's main job, the whole stack on a fresh machine.
//!
//! 1. Builds the `agent` binary.
//! 2. When `$AGENT_HOME/bundles` (default `~/.agent/bundles`) holds no `core-utils` bundle,
//!    runs `cargo xtask bundles` (builds `guest/` for wasm32-wasip1, signs it with the local
//!    development key, lays out `target/bundles/registry`, verifies and installs it, compiling
//!    the modules); an installed one is used as it is.
//! 3. Checks that `grep` resolves to a verified module (`agent bundles which grep`), then runs
//!    `agent demo ARGS`, whose read-only Bash step then runs in the WASI shell (the demo says
//!    which backend ran).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::bundles;

/// The bundle the demo needs.
const BUNDLE: &str = "core-utils";

fn agent() -> Result<PathBuf> {
    let root = bundles::root()?;
    Ok(bundles::target_dir(&root).join("debug").join("agent"))
}

/// Whether `core-utils` is installed in the default store (`agent bundles list --json`).
fn installed(agent: &PathBuf) -> Result<bool> {
    let out = Command::new(agent)
        .args(["bundles", "list", "--json"])
        .output()
        .with_context(|| format!("cannot run {}", agent.display()))?;
    if !out.status.success() {
        bail!(
            "`agent bundles list --json` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list: serde_json::Value = serde_json::from_slice(&out.stdout)
        .context("`agent bundles list --json` did not print JSON")?;
    Ok(list
        .as_array()
        .is_some_and(|all| all.iter().any(|b| b["name"] == BUNDLE)))
}

/// `cargo xtask demo [-- ARGS]`: ARGS go to `agent demo` (`--dir DIR`, `--json`).
pub fn run(args: &[String]) -> Result<()> {
    let demo_args: Vec<&str> = match args.split_first() {
        Some((dashes, rest)) if dashes == "--" => rest.iter().map(String::as_str).collect(),
        Some((other, _)) => bail!(
            "unknown argument {other:?}; usage: cargo xtask demo [-- --dir DIR --json] (arguments after -- go to `agent demo`)"
        ),
        None => Vec::new(),
    };
    crate::cargo(&["build", "--locked", "-p", "agent-cli"])?;
    let agent = agent()?;
    if installed(&agent)? {
        eprintln!("xtask: {BUNDLE} is installed; using it (`cargo xtask bundles` rebuilds it)");
    } else {
        eprintln!(
            "xtask: no {BUNDLE} bundle installed; building, signing and installing it (cargo xtask bundles)"
        );
        bundles::run_bundles(&[])?;
    }
    let which = Command::new(&agent)
        .args(["bundles", "which", "grep"])
        .output()
        .with_context(|| format!("cannot run {}", agent.display()))?;
    if !which.status.success() {
        bail!(
            "the installed bundles do not give a verified `grep`, so the demo would not use the WASI shell: {}(reinstall it: cargo xtask bundles)",
            String::from_utf8_lossy(&which.stderr)
        );
    }
    eprint!("xtask: {}", String::from_utf8_lossy(&which.stdout));
    let mut all = vec!["demo"];
    all.extend(demo_args);
    eprintln!("xtask: agent {}", all.join(" "));
    let status = Command::new(&agent)
        .args(&all)
        .status()
        .with_context(|| format!("cannot run {}", agent.display()))?;
    if !status.success() {
        bail!("`agent {}` failed ({status})", all.join(" "));
    }
    Ok(())
}
