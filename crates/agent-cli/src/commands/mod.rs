//! One module per verb.

pub mod permissions;
pub mod trust;

use std::path::PathBuf;

use anyhow::{Context, Result};

/// The home directory (`$HOME`).
pub fn home_dir() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("$HOME is not set; set it to your home directory")
}

/// `$AGENT_HOME`, or `~/.agent`.
pub fn agent_home() -> Result<PathBuf> {
    match std::env::var_os("AGENT_HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h)),
        None => Ok(home_dir()?.join(".agent")),
    }
}

/// Makes `p` absolute against the process's current directory, without touching the disk.
pub fn absolute(p: PathBuf) -> Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p);
    }
    Ok(std::env::current_dir()
        .context("cannot read the current directory")?
        .join(p))
}
