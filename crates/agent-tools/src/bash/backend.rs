//! The seam between the Bash tool and what runs the command: the host's shell under the outer
//! sandbox ([`super::native::NativeBackend`]) or agent-wasi's `Shell(script)` over the installed
//! bundles ([`super::wasi::WasiBackend`], with the `wasi` feature).

use std::path::PathBuf;
use std::time::Duration;

use agent_core::permissions::{Containment, WriteScope};
use agent_core::tools::{CancellationFlag, ToolError};

/// One command to run.
#[derive(Clone, Debug)]
pub struct BashRequest {
    /// The shell text.
    pub command: String,
    /// The directory it runs in (the workspace root).
    pub cwd: PathBuf,
    /// How long it may run; its whole process group is killed after.
    pub timeout: Duration,
    /// What the command was approved to do, when the approval was a prediction: the backend
    /// holds it to that (read-only view, no network, only the programs the checker saw) as
    /// far as it can, and says what it enforced in [`BashOutcome::enforced`].
    pub containment: Option<Containment>,
    /// The command's text and the one parse the permission decision was made on (or made by
    /// the tool when the decision carried none for this text): the WASI shell compiles its
    /// plan from it, so what runs is the tree that was decided.
    pub prepared: Option<std::sync::Arc<agent_core::shell::Prepared>>,
    /// The real folder the workspace is a shadow of (`ToolContext::view`): a backend that can
    /// (the WASI shell) shows the shadow at the real folder's path.
    pub view: Option<agent_core::view::PathView>,
    /// Set when a person cancels the call (Ctrl-C): the backend stops the command at once,
    /// ending every process it started (the native backend kills its whole process group,
    /// the WASI shell stops the running command and starts no other), and reports
    /// [`BashOutcome::cancelled`]. A background command gets a flag of its own that nothing
    /// sets: Ctrl-C of the turn does not stop it.
    pub cancellation: CancellationFlag,
}

/// How it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BashOutcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code, when the command exited by itself.
    pub exit_code: Option<i32>,
    /// Whether it was stopped (timeout, output limit, signal).
    pub interrupted: bool,
    /// What stopped it, when something did.
    pub stopped_by: Option<String>,
    /// Whether it was stopped because [`BashRequest::cancellation`] was set (then
    /// `interrupted` is set too, and `stopped_by` says what was ended).
    pub cancelled: bool,
    /// One audit record per command the backend ran (argv, exit status, duration, bytes),
    /// when it knows them (the WASI backend does); they go into the tool's result.
    pub commands: Vec<serde_json::Value>,
    /// What ran the script: `wasi` (the in-process WASI shell), `sandbox` (the host's bash
    /// inside the OS sandbox) or `host` (the host's bash without an OS sandbox, after the
    /// user approved exactly that).
    pub backend: String,
    /// Why the script went where it went, when it was routed (`python3` is not a bundle
    /// command, ...), and what enforced it.
    pub notes: Vec<String>,
    /// What of [`BashRequest::containment`] the backend enforced, in words (`the workspace
    /// was read-only`, `no network`, `only these programs could start: ls, wc`), and what it
    /// could not.
    pub enforced: Vec<String>,
}

/// Runs Bash commands.
pub trait BashBackend: Send + Sync {
    /// `native` or `wasi`.
    fn name(&self) -> &'static str;

    /// Runs `request` to its end (or its timeout, or its cancellation). Blocking: the tool
    /// calls it on a blocking thread.
    ///
    /// # Errors
    /// A [`ToolError`] when the command could not be started (the sandbox is unavailable, ...).
    fn run(&self, request: &BashRequest) -> Result<BashOutcome, ToolError>;

    /// A warning when `command` would run on the host **without** the OS sandbox (none can
    /// run here, or the settings turned it off) once approved, `None` when it would run
    /// contained (in the WASI shell, or in the OS sandbox) or not at all (a backend that
    /// refuses unsandboxed commands). The Bash tool's [`super::HostCommandPolicy`] asks the
    /// user every time this says so.
    fn unsandboxed(&self, command: &str) -> Option<String> {
        let _ = command;
        None
    }

    /// What the model should know about where its commands run, for the tool's description.
    fn describe(&self) -> String {
        String::new()
    }

    /// Where commands run, in a sentence or two for the system prompt (which scripts go where,
    /// under which sandbox, with which network); empty when the backend does not say.
    fn placement(&self) -> String {
        String::new()
    }

    /// Where `command` would run, in a few words for a person approving it (`None`: the
    /// backend has only one place).
    fn where_it_runs(&self, command: &str) -> Option<String> {
        let _ = command;
        None
    }
}

/// What `containment` asks of a backend, as the words [`BashOutcome::enforced`] records;
/// `programs` says whether the backend held the script to the programs list.
pub fn enforced_words(containment: &Containment, programs: bool) -> Vec<String> {
    let mut out = vec![match containment.writes {
        WriteScope::None => "the workspace was read-only".to_owned(),
        WriteScope::WorkingDirs => "writes only inside the workspace".to_owned(),
    }];
    if !containment.network {
        out.push("no network".to_owned());
    }
    if programs {
        out.push(format!(
            "only these programs could start: {}",
            containment.programs.join(", ")
        ));
    } else {
        out.push(
            "programs started were not limited (the host's shell cannot be held to a list; the read-only view and the missing network still hold)"
                .to_owned(),
        );
    }
    out
}
