//! The native backend: the host's `bash` (or `sh`) runs the command in the workspace, through
//! agent-sandbox's outer sandbox (`none`, `bwrap` or `sandbox-exec`), which enforces the wall
//! time (killing the whole process group), CPU, memory and output limits, and, with `bwrap`,
//! a read-only system, a writable workspace only and no network unless a profile grants it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_core::tools::ToolError;
use agent_sandbox::outer::{self, Ending, ExecError, ExecRequest, Limits, OuterSandbox};
use agent_sandbox::profile::ProfileTree;
use agent_sandbox::profile::env::EnvPlan;
use agent_sandbox::profile::host::{Host, SystemHost};
use agent_sandbox::profile::selection::{Plan, Selection, Workdir};

use super::backend::{BashBackend, BashOutcome, BashRequest};

/// The host shell under an outer sandbox.
pub struct NativeBackend {
    outer: Box<dyn OuterSandbox>,
    tree: ProfileTree,
    fail_if_unavailable: bool,
    shell: PathBuf,
    output_bytes: u64,
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
    /// the workdir). `fail_if_unavailable` false lets a command run without the OS sandbox
    /// when `outer` cannot run here (settings `sandbox.failIfUnavailable`).
    pub fn new(outer: Box<dyn OuterSandbox>, tree: ProfileTree, fail_if_unavailable: bool) -> Self {
        let shell = ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("/bin/sh"));
        Self {
            outer,
            tree,
            fail_if_unavailable,
            shell,
            output_bytes: 4 << 20,
        }
    }

    /// The outer sandbox's name.
    pub fn outer_name(&self) -> &'static str {
        self.outer.name()
    }

    fn plan(&self, cwd: &Path) -> Result<Plan, ToolError> {
        let selection = Selection {
            workdir: Workdir::Path(cwd.to_path_buf()),
            command: Some("bash".into()),
            ..Selection::default()
        };
        Plan::resolve(&self.tree, &selection, &SystemHost)
            .map_err(|e| ToolError::Sandbox(format!("cannot assemble the sandbox policy: {e}")))
    }
}

impl BashBackend for NativeBackend {
    fn name(&self) -> &'static str {
        "native"
    }

    fn run(&self, request: &BashRequest) -> Result<BashOutcome, ToolError> {
        let plan = self.plan(&request.cwd)?;
        let limits = Limits {
            wall: Some(request.timeout),
            output_bytes: self.output_bytes,
            ..Limits::default()
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
            fail_if_unavailable: self.fail_if_unavailable,
        };
        let out = outer::run(self.outer.as_ref(), &exec).map_err(|e| match e {
            ExecError::Unavailable(u) => ToolError::Sandbox(format!(
                "{u} (or set sandbox.failIfUnavailable to false to run without the OS sandbox)"
            )),
            other => ToolError::Execution(other.to_string()),
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
            Ending::OutputLimit => (
                true,
                Some(format!(
                    "stopped after {} bytes of output",
                    self.output_bytes
                )),
            ),
        };
        Ok(BashOutcome {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            exit_code: out.code(),
            interrupted,
            stopped_by,
            commands: Vec::new(),
        })
    }
}

/// The default wall time of a command: two minutes (Claude Code's).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest a command may be given: ten minutes.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
