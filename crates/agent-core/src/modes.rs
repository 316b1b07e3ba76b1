//! The six permission modes (Claude Code's, claude-code.md §4). A module of its own below
//! [`crate::tools`] and [`crate::permissions`]: a tool's context carries the mode, and the
//! permission engine decides by it; re-exported as `permissions::PermissionMode`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much the runtime may do without asking (Claude Code's modes, claude-code.md §4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Reads in the working directories, the built-in read-only commands and allow-rule matches
    /// run; everything else asks. Accepts the alias `manual`.
    #[default]
    Default,
    /// Read-only planning: edits and commands that are not read-only are denied.
    Plan,
    /// Like `default`, plus edits and filesystem commands (`mkdir touch rm rmdir mv cp sed`)
    /// inside the working directories.
    AcceptEdits,
    /// Everything runs except what the command classifier flags as dangerous, which asks.
    Auto,
    /// Never asks: what would ask is denied.
    DontAsk,
    /// Everything runs except deny rules, ask rules, critical-path `rm`, commands that cannot be
    /// analysed, and what a `PermissionPolicy` refuses.
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode, in documentation order.
    pub const ALL: [Self; 6] = [
        Self::Default,
        Self::Plan,
        Self::AcceptEdits,
        Self::Auto,
        Self::DontAsk,
        Self::BypassPermissions,
    ];

    /// The configuration name (`acceptEdits`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Plan => "plan",
            Self::AcceptEdits => "acceptEdits",
            Self::Auto => "auto",
            Self::DontAsk => "dontAsk",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Occurs when a mode name is not one of the six (or `manual`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown permission mode `{0}`; expected one of default, plan, acceptEdits, auto, dontAsk, bypassPermissions"
)]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "default" | "manual" => Self::Default,
            "plan" => Self::Plan,
            "acceptEdits" => Self::AcceptEdits,
            "auto" => Self::Auto,
            "dontAsk" => Self::DontAsk,
            "bypassPermissions" => Self::BypassPermissions,
            other => return Err(UnknownMode(other.to_owned())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in PermissionMode::ALL {
            assert_eq!(m.as_str().parse::<PermissionMode>().unwrap(), m);
        }
        assert_eq!(
            "manual".parse::<PermissionMode>().unwrap(),
            PermissionMode::Default
        );
        let err = "yolo".parse::<PermissionMode>().unwrap_err().to_string();
        assert!(err.contains("`yolo`") && err.contains("bypassPermissions"));
    }
}
