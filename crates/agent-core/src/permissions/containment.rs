//! What an approved command may do when it runs: the claim it was approved under, as
//! capabilities the runtime enforces.
//!
//! An auto-approval is a prediction ("this only reads inside the working directories", "this
//! only runs programs the rules name"). A [`Containment`] turns the prediction into limits the
//! Bash tool's backends hold the command to, so a wrong prediction fails the command instead of
//! doing harm:
//!
//! | approved as | writes | network | programs |
//! |---|---|---|---|
//! | the built-in read-only set, plan mode's read-only commands | none (read-only view) | none | only those the checker saw |
//! | allow rules (with read-only parts), acceptEdits' file commands, auto mode | inside the working directories | none | only those the checker saw |
//! | the user at the prompt, a hook, a policy, `bypassPermissions`, `autoAllowBashIfSandboxed` | no containment beyond the sandbox's own | the sandbox's | any |
//!
//! ```
//! use agent_core::permissions::{Behavior, PermissionEngine, PreToolUseOutcome, ToolCall, WriteScope};
//! use serde_json::json;
//!
//! let engine = PermissionEngine::builder("/repo", "/home/me").build()?;
//! let call = ToolCall::new("Bash", json!({"command": "ls | xargs wc -l"}));
//! let d = engine.check(&call, &PreToolUseOutcome::default());
//! assert_eq!(d.behavior, Behavior::Allow);
//! let c = d.containment.expect("an auto-approval is contained");
//! assert_eq!(c.writes, WriteScope::None);
//! assert_eq!(c.programs, ["ls", "wc", "xargs"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;

use serde::Serialize;

use crate::shell::ParsedScript;
use crate::shell::wrappers::basename;

/// Where a contained command may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum WriteScope {
    /// Nowhere: the workspace is mounted read-only.
    None,
    /// Inside the working directories (the workspace), nowhere else.
    WorkingDirs,
}

impl WriteScope {
    /// `none` or `workingDirs`, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::WorkingDirs => "workingDirs",
        }
    }
}

/// The capabilities a command was approved with; the Bash tool's backends enforce them and
/// record them in the tool's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Containment {
    /// The claim the approval was made under, in words (`built-in read-only command`, `allow
    /// rule \`Bash(npm test *)\``), for the result and for refusals.
    pub approved_as: String,
    /// Where it may write.
    pub writes: WriteScope,
    /// Whether it may use the network. Always `false` for a contained command today: no
    /// approval that is a prediction grants the network.
    pub network: bool,
    /// The only programs it may start (basenames, sorted): those the checker saw in the
    /// script, through wrappers. A launcher that can tell refuses any other.
    pub programs: Vec<String>,
}

impl Containment {
    /// The containment of a command approved as read-only.
    pub fn read_only(approved_as: impl Into<String>, script: &ParsedScript) -> Self {
        Self {
            approved_as: approved_as.into(),
            writes: WriteScope::None,
            network: false,
            programs: programs_seen(script),
        }
    }

    /// The containment of a command approved to write inside the working directories.
    pub fn working_dirs(approved_as: impl Into<String>, script: &ParsedScript) -> Self {
        Self {
            approved_as: approved_as.into(),
            writes: WriteScope::WorkingDirs,
            network: false,
            programs: programs_seen(script),
        }
    }

    /// Whether a program called `name` (as typed, possibly a path) may start.
    pub fn allows_program(&self, name: &str) -> bool {
        let base = basename(name);
        self.programs
            .binary_search_by(|p| p.as_str().cmp(base))
            .is_ok()
    }

    /// Why a program called `name` was not started, in words the model can act on.
    pub fn program_refusal(&self, name: &str) -> String {
        format!(
            "`{name}` was not started: this command was approved as {} for the programs {} only, and `{name}` was not among them (ask for the command to be approved as written)",
            self.approved_as,
            self.programs_text()
        )
    }

    /// Why a write was refused, in words the model can act on.
    pub fn write_refusal(&self, what: &str) -> String {
        format!(
            "cannot write {what}: this command was approved as {}, which runs with a read-only view of the workspace (ask for the command to be approved to write)",
            self.approved_as
        )
    }

    fn programs_text(&self) -> String {
        if self.programs.is_empty() {
            return "(none)".to_owned();
        }
        self.programs
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every program the checker saw in `script`: each command's name and the name of every
/// command a wrapper runs (`timeout 5 rm x` → `timeout`, `rm`), as basenames. `xargs` with no
/// command runs `echo`. Names not known before run time are left out (such a command is never
/// approved by a prediction, and the launcher then refuses whatever it turns out to be).
pub fn programs_seen(script: &ParsedScript) -> Vec<String> {
    let mut seen = BTreeSet::new();
    for cmd in &script.commands {
        let mut starts = vec![0];
        starts.extend(cmd.layers.iter().map(|l| l.inner));
        for start in starts {
            let Some(w) = cmd.words.get(start) else {
                continue;
            };
            if !w.is_static() {
                continue;
            }
            seen.insert(basename(&w.text).to_owned());
        }
        let innermost = cmd.words.get(cmd.effective_start());
        if innermost.is_some_and(|w| w.is_static() && basename(&w.text) == "xargs") {
            seen.insert("echo".to_owned());
        }
    }
    seen.remove("");
    seen.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell;

    fn seen(script: &str) -> Vec<String> {
        programs_seen(&shell::parse(script).expect("parses"))
    }

    #[test]
    fn programs_are_every_command_and_every_wrapped_command() {
        assert_eq!(
            seen("timeout 5 rm x; ls | wc -l"),
            ["ls", "rm", "timeout", "wc"]
        );
        assert_eq!(seen("/usr/bin/env A=1 git status"), ["env", "git"]);
        assert_eq!(seen("find . -exec cat {} +"), ["cat", "find"]);
        assert_eq!(seen("bash -c 'grep x y'"), ["bash", "grep"]);
    }

    #[test]
    fn bare_xargs_runs_echo() {
        assert_eq!(seen("ls | xargs"), ["echo", "ls", "xargs"]);
    }

    #[test]
    fn names_unknown_before_run_time_are_not_programs_seen() {
        assert_eq!(seen("$X a; ls"), ["ls"]);
    }

    #[test]
    fn a_program_is_allowed_by_its_basename_only_when_seen() {
        let c = Containment::read_only(
            "built-in read-only command",
            &shell::parse("ls | wc").expect("parses"),
        );
        assert!(c.allows_program("ls"));
        assert!(c.allows_program("/usr/bin/wc"));
        assert!(!c.allows_program("rm"));
        let why = c.program_refusal("rm");
        assert!(why.contains("`rm` was not started"), "{why}");
        assert!(why.contains("`ls`, `wc`"), "{why}");
    }
}
