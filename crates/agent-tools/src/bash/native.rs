//! The native backend: the host's `bash` (or `sh`) runs the command in the workspace, inside
//! agent-sandbox's OS sandbox (`bwrap` on Linux, `sandbox-exec` on macOS), which enforces the
//! wall time and a cancellation (killing everything the command started), CPU, memory and
//! output limits, a read-only system, the workspace as the only persistent writable place, a
//! private `/tmp`, the home directory hidden (toolchain homes bound back read-only), no
//! network, and an allowlisted environment.
//!
//! Where no OS sandbox can run (or the user's settings turned it off), what happens is the
//! backend's [`Unsandboxed`] rule: refuse (the default), run after the user approved that
//! very command ([`super::HostCommandPolicy`] makes the permission engine ask every time), or
//! run (the user's own `sandbox.failIfUnavailable: false`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_core::tools::ToolError;
use agent_sandbox::outer::{self, Ending, ExecError, ExecRequest, OuterSandbox, ResourceLimits};
use agent_sandbox::profile::ProfileTree;
use agent_sandbox::profile::env::EnvPlan;
use agent_sandbox::profile::host::{GitWorktrees, Host, SystemHost};
use agent_sandbox::profile::selection::{ProfilePlan, Selection, Workdir};

use agent_core::permissions::WriteScope;

use super::backend::{BashBackend, BashOutcome, BashRequest, enforced_words};

/// What the native backend does when the OS sandbox cannot contain a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsandboxed {
    /// Refuse to run it (deny by default).
    Refuse,
    /// Run it: the caller's permission engine asked the user about this very command
    /// ([`super::HostCommandPolicy`] installed).
    AfterApproval,
    /// Run it without asking: the user's own settings say `sandbox.failIfUnavailable: false`.
    Allowed,
}

/// The host shell under an outer sandbox.
pub struct NativeBackend {
    outer: Box<dyn OuterSandbox>,
    /// Why the OS sandbox cannot contain commands here, if it cannot (decided once).
    uncontained: Option<String>,
    tree: ProfileTree,
    unsandboxed: Unsandboxed,
    shell: PathBuf,
    output_bytes: u64,
    /// Set when the settings list domains a command may reach: the OS sandbox cannot hold a
    /// host process to a domain list, so host commands stay offline and say so.
    offline_note: Option<String>,
}

impl std::fmt::Debug for NativeBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeBackend")
            .field("outer", &self.outer.name())
            .field("shell", &self.shell)
            .finish_non_exhaustive()
    }
}

impl NativeBackend {
    /// Runs commands through `outer` with the policy assembled from `tree` (the workspace as
    /// the workdir); `unsandboxed` says what happens where `outer` cannot run (it is probed
    /// once, here) or is the `none` backend (the settings turned the OS sandbox off).
    pub fn new(outer: Box<dyn OuterSandbox>, tree: ProfileTree, unsandboxed: Unsandboxed) -> Self {
        let shell = ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("/bin/sh"));
        let uncontained = if outer.name() == "none" {
            Some("the OS sandbox is turned off (sandbox.enabled: false)".to_owned())
        } else {
            outer.probe().err().map(|u| u.to_string())
        };
        Self {
            outer,
            uncontained,
            tree,
            unsandboxed,
            shell,
            output_bytes: 4 << 20,
            offline_note: None,
        }
    }

    /// Says, in the tool's description and in every host command's result, that the domains
    /// the settings allow (`sandbox.network.allowedDomains`) are not reachable from host
    /// commands: the OS sandbox has no filter that could hold a host process to a domain list,
    /// so host commands run without a network (the WASI shell's `fetch` and WebFetch reach
    /// those domains).
    pub fn with_domains_listed(mut self, listed: bool) -> Self {
        self.offline_note = listed.then(|| {
            "host commands have no network even for sandbox.network.allowedDomains (the OS sandbox cannot limit a host process to a domain list); the WASI shell's `fetch` and WebFetch reach those domains".to_owned()
        });
        self
    }

    /// The outer sandbox's name.
    pub fn outer_name(&self) -> &'static str {
        self.outer.name()
    }

    /// Why commands would run without the OS sandbox here, if they would.
    pub fn uncontained(&self) -> Option<&str> {
        self.uncontained.as_deref()
    }

    /// The OS sandbox's policy for `request`: its directory is the workdir (read-only for a
    /// read-only approval). In a shadow workspace (`request.view`), the whole shadow is
    /// granted too when the command starts in a subfolder of it, and the real repository's
    /// object store read-only, so the shadow's Git (which borrows the real objects through
    /// `objects/info/alternates`) can read history. That path is found from the real folder,
    /// never from the alternates file, which the agent can edit.
    fn plan(&self, request: &BashRequest, read_only: bool) -> Result<ProfilePlan, ToolError> {
        let mut selection = Selection {
            workdir: Workdir::Path(request.cwd.clone()),
            command: Some("bash".into()),
            workdir_read_only: read_only,
            ..Selection::default()
        };
        if let Some(view) = &request.view
            && request.cwd.starts_with(view.actual())
        {
            if request.cwd != view.actual() {
                let root = view.actual().to_path_buf();
                if read_only {
                    selection.add_dirs_ro.push(root);
                } else {
                    selection.add_dirs.push(root);
                }
            }
            selection.add_dirs_ro.extend(real_objects(view.shown()));
        }
        ProfilePlan::resolve(&self.tree, &selection, &SystemHost)
            .map_err(|e| ToolError::Sandbox(format!("cannot assemble the sandbox policy: {e}")))
    }
}

/// The object store of the Git repository at `real` (its `.git/objects`, or a linked
/// worktree's common directory's), canonical; `None` when `real` is no repository's root.
fn real_objects(real: &Path) -> Option<PathBuf> {
    let git_dir = match GitWorktrees::discover(real).common_dir {
        Some(common) => common,
        None => real.join(".git"),
    };
    std::fs::canonicalize(git_dir.join("objects"))
        .ok()
        .filter(|o| o.is_dir())
}

impl BashBackend for NativeBackend {
    fn name(&self) -> &'static str {
        "native"
    }

    fn unsandboxed(&self, _command: &str) -> Option<String> {
        match (&self.uncontained, self.unsandboxed) {
            // Refuse: nothing to ask about, the run refuses and says why.
            (Some(why), Unsandboxed::AfterApproval) => Some(format!(
                "this command would run on the host WITHOUT the OS sandbox ({why}): it could read and write anything you can, outside the workspace too; approve only if you trust it (set sandbox.failIfUnavailable to false in your own settings to stop asking)"
            )),
            _ => None,
        }
    }

    fn describe(&self) -> String {
        match &self.uncontained {
            None => format!(
                "Host commands run in the host's bash inside the OS sandbox ({}): the workspace is the only writable place that persists, /tmp is private, the home directory is hidden (toolchains are readable), there is no network{}, and the environment holds only PATH, HOME, the locale and toolchain variables.",
                self.outer.name(),
                self.offline_note
                    .as_ref()
                    .map_or_else(String::new, |n| format!(" ({n})"))
            ),
            Some(why) if self.unsandboxed == Unsandboxed::Allowed => format!(
                "Host commands run in the host's bash WITHOUT an OS sandbox ({why}), as the user's settings allow."
            ),
            Some(why) => format!(
                "Host commands run in the host's bash WITHOUT an OS sandbox ({why}); each one needs the user's approval."
            ),
        }
    }

    fn placement(&self) -> String {
        match (&self.uncontained, self.unsandboxed) {
            (None, _) => format!(
                "the host's bash inside the OS sandbox ({}): no network, only the workspace writable",
                self.outer.name()
            ),
            (Some(why), Unsandboxed::Allowed) => format!(
                "the host's bash WITHOUT an OS sandbox ({why}), with the user's files and network, as the user's settings allow"
            ),
            (Some(why), Unsandboxed::AfterApproval) => format!(
                "the host's bash WITHOUT an OS sandbox ({why}), each command only after the user approves it"
            ),
            (Some(why), Unsandboxed::Refuse) => {
                format!("nowhere: they are refused, as no OS sandbox can run here ({why})")
            }
        }
    }

    fn run(&self, request: &BashRequest) -> Result<BashOutcome, ToolError> {
        let read_only = request
            .containment
            .as_ref()
            .is_some_and(|c| c.writes == WriteScope::None);
        let plan = self.plan(request, read_only)?;
        let limits = ResourceLimits {
            wall: Some(request.timeout),
            output_bytes: self.output_bytes,
            ..ResourceLimits::default()
        };
        let exec = ExecRequest {
            plan,
            env: EnvPlan::sanitize(&SystemHost.vars(), &[]),
            command: vec![
                self.shell.display().to_string(),
                "-c".into(),
                request.command.clone(),
            ],
            limits,
            fail_if_unavailable: true,
        };
        let none = agent_sandbox::outer::NoneBackend;
        let (outer, backend): (&dyn OuterSandbox, &str) = match (
            &self.uncontained,
            self.unsandboxed,
        ) {
            (None, _) => (self.outer.as_ref(), "sandbox"),
            (Some(why), Unsandboxed::Refuse) => {
                return Err(ToolError::Sandbox(format!(
                    "{why}; host commands do not run without it (the user can set sandbox.failIfUnavailable to false in their own settings)"
                )));
            }
            (Some(_), Unsandboxed::AfterApproval | Unsandboxed::Allowed) => (&none, "host"),
        };
        let cancellation = &request.cancellation;
        let out =
            outer::run_cancellable(outer, &exec, &|| cancellation.is_cancelled()).map_err(|e| {
                match e {
                    ExecError::Unavailable(u) => ToolError::Sandbox(u.to_string()),
                    other => ToolError::Execution(other.to_string()),
                }
            })?;
        let (interrupted, stopped_by) = match &out.audit.ending {
            Ending::Exited { .. } => (false, None),
            Ending::Signaled { signal } => (true, Some(format!("killed by signal {signal}"))),
            Ending::WallTimeout => (
                true,
                Some(format!(
                    "timed out after {} ms; the command and everything it started were killed",
                    request.timeout.as_millis()
                )),
            ),
            Ending::Cancelled => (
                true,
                Some(format!(
                    "cancelled by the user after {} ms; the command and every process it started were killed",
                    out.audit.duration_ms
                )),
            ),
            Ending::OutputLimit => (
                true,
                Some(format!(
                    "stopped after {} bytes of output",
                    self.output_bytes
                )),
            ),
        };
        let enforced = match (&request.containment, &self.uncontained) {
            (None, _) => Vec::new(),
            (Some(c), None) => {
                let mut words = enforced_words(c, false);
                if out.audit.network && !c.network {
                    words.push("the network was NOT off: the sandbox's profiles enable it".into());
                }
                words
            }
            (Some(_), Some(why)) => vec![format!(
                "nothing of the approval's limits was enforced: the command ran without the OS sandbox ({why})"
            )],
        };
        Ok(BashOutcome {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            exit_code: out.code(),
            interrupted,
            stopped_by,
            cancelled: out.audit.ending == Ending::Cancelled,
            commands: Vec::new(),
            backend: backend.to_owned(),
            notes: match &self.uncontained {
                None => vec![format!(
                    "contained by the OS sandbox ({}): {} mounts, network {}",
                    out.audit.backend,
                    out.audit.mounts.len(),
                    if out.audit.network { "on" } else { "off" }
                )],
                Some(why) => vec![format!("ran WITHOUT the OS sandbox: {why}")],
            }
            .into_iter()
            .chain(
                self.offline_note
                    .clone()
                    .filter(|_| self.uncontained.is_none()),
            )
            .collect(),
            enforced,
        })
    }
}

/// The default wall time of a command: two minutes (Claude Code's).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest a command may be given: ten minutes.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
