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
//! let call = ToolCall::new("Bash", json!({"command": "cat src/main.rs | wc -l"}));
//! let d = engine.check(&call, &PreToolUseOutcome::default());
//! assert_eq!(d.behavior, Behavior::Allow);
//! let c = d.containment.expect("an auto-approval is contained");
//! assert_eq!(c.writes, WriteScope::None);
//! assert_eq!(c.programs, ["cat", "wc"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;

use serde::Serialize;

use super::request::{BashSubject, PathArg, Via};
use super::workdirs::ResolvedPath;
use crate::shell::wrappers::basename;
use crate::shell::{ParsedScript, Word};

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

/// A file a Bash command names, as the engine resolved it for its decision
/// ([`super::PreparedCall::files_seen`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSeen {
    /// The word that names it (`out.txt`, `"$F"`, `*.log`), as the parse read it.
    pub word: Word,
    /// The path the engine judged: absolute, from where the command runs, normalised
    /// lexically and, when symlinks make a difference, resolved. `None` when only known at run
    /// time (a variable, a glob, a relative path after a `cd` to somewhere unknown, `~` after
    /// the script assigns `HOME`): the engine does not auto-approve on such a path.
    pub path: Option<ResolvedPath>,
    /// Whether the command writes it (else it reads it).
    pub writes: bool,
    /// Whether the shell opens it for a redirect (else a program opens it, named as an operand
    /// or an option's value).
    pub redirect: bool,
}

/// Every file of `subject`, reads then writes.
pub(crate) fn files_seen(subject: &BashSubject) -> Vec<FileSeen> {
    let seen = |arg: &PathArg, writes: bool| FileSeen {
        word: arg.word.clone(),
        path: arg
            .path
            .clone()
            .filter(|_| arg.is_static() && !(arg.word.home && subject.home_unknown.is_some())),
        writes,
        redirect: arg.via == Via::Redirect,
    };
    let reads = subject.reads.iter().map(|a| seen(a, false));
    reads
        .chain(subject.writes.iter().map(|a| seen(a, true)))
        .collect()
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

    #[test]
    fn files_seen_are_the_engines_reads_and_writes_resolved() {
        let engine = crate::permissions::PermissionEngine::builder("/repo", "/home/me")
            .build()
            .expect("builds");
        let files = |cmd: &str| -> Vec<(String, Option<String>, bool, bool)> {
            engine
                .prepare(crate::permissions::ToolCall::new(
                    "Bash",
                    serde_json::json!({ "command": cmd }),
                ))
                .files_seen()
                .into_iter()
                .map(|f| {
                    let path = f.path.map(|p| p.lexical.display().to_string());
                    (f.word.raw, path, f.writes, f.redirect)
                })
                .collect()
        };
        let one = |w: &str, p: Option<&str>, writes: bool, redirect: bool| {
            (w.to_owned(), p.map(str::to_owned), writes, redirect)
        };
        assert_eq!(
            files("cat a < b > c"),
            [
                one("b", Some("/repo/b"), false, true),
                one("a", Some("/repo/a"), false, false),
                one("c", Some("/repo/c"), true, true)
            ]
        );
        assert_eq!(
            files("cd sub && rm x"),
            [one("x", Some("/repo/sub/x"), true, false)]
        );
        // Only known at run time: no path.
        assert_eq!(
            files("cat \"$F\" > *.log"),
            [
                one("\"$F\"", None, false, false),
                one("*.log", None, true, true)
            ]
        );
        assert!(
            engine
                .prepare(crate::permissions::ToolCall::new(
                    "Read",
                    serde_json::json!({ "file_path": "/repo/a" }),
                ))
                .files_seen()
                .is_empty()
        );
    }
}
