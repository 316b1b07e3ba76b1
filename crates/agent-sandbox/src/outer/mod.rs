//! The outer sandbox: running a real command inside the OS-level policy (document 004's adapter
//! contract), with resource limits and an audit record.
//!
//! Backends implement [`OuterSandbox`]: [`NoneBackend`] (no OS sandbox, limits only),
//! [`BwrapBackend`] (Linux bubblewrap) and [`SandboxExecBackend`] (macOS `sandbox-exec`). [`run`]
//! probes the backend, and when it cannot work here fails with what is missing and how to fix
//! it, or, only when the settings say so (`failIfUnavailable: false`), runs the command without
//! the OS sandbox and records that in the audit.
//!
//! ResourceLimits are set by a `/bin/sh` trampoline (`ulimit -t/-v/-f`, then `exec`) so no unsafe code
//! runs between fork and exec; wall time, output size and a cancellation ([`run_cancellable`])
//! are enforced by the runner, which kills the whole process group. Without `--unshare-pid`
//! (the `none` backend) a process that leaves the group can outlive the command: that is what
//! the OS backends are for.

mod backends;
mod run;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

pub use backends::{BwrapBackend, NoneBackend, SandboxExecBackend, backend_named};
pub use run::{run, run_cancellable};

use crate::profile::bwrap::Mount;
use crate::profile::env::EnvPlan;
use crate::profile::selection::ProfilePlan;

/// Resource limits of one run. `None` leaves a limit as inherited.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceLimits {
    /// Wall-clock time; the process group is killed when it passes.
    pub wall: Option<Duration>,
    /// CPU time in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
    /// Address space in bytes (`RLIMIT_AS`).
    pub address_space: Option<u64>,
    /// Largest file the command may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size: Option<u64>,
    /// Output kept (stdout and stderr together); the process group is killed when it passes.
    pub output_bytes: u64,
}

impl Default for ResourceLimits {
    /// 10 minutes wall, 5 minutes CPU, 4 GiB address space, 1 GiB files, 1 MiB output.
    fn default() -> Self {
        Self {
            wall: Some(Duration::from_secs(600)),
            cpu_seconds: Some(300),
            address_space: Some(4 << 30),
            file_size: Some(1 << 30),
            output_bytes: 1 << 20,
        }
    }
}

/// What to run, and how.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    /// The resolved policy selection.
    pub plan: ProfilePlan,
    /// The environment the command gets.
    pub env: EnvPlan,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Resource limits.
    pub limits: ResourceLimits,
    /// Whether an unavailable backend is an error (`true`, the default) or means running
    /// without the OS sandbox (`false`, recorded in the audit).
    pub fail_if_unavailable: bool,
}

/// A backend cannot run on this machine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the {backend} sandbox is unavailable: {missing}; {fix}")]
pub struct Unavailable {
    /// The backend.
    pub backend: &'static str,
    /// What is missing.
    pub missing: String,
    /// How to fix it.
    pub fix: String,
}

/// Why a command could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The backend cannot run here and the settings require it.
    #[error("{0} (or set sandbox.failIfUnavailable to false to run unsandboxed)")]
    Unavailable(#[from] Unavailable),
    /// The request is invalid (an empty command, ...).
    #[error("{0}")]
    Invalid(String),
    /// Starting or waiting for the process failed.
    #[error("cannot run the sandboxed command: {0}")]
    Io(#[from] std::io::Error),
}

/// A command line produced by a backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapped {
    /// The program to start.
    pub program: String,
    /// Its arguments (the command included).
    pub args: Vec<String>,
    /// What the backend mounts.
    pub mounts: Vec<Mount>,
    /// Whether the command has network access.
    pub network: bool,
    /// A policy file the backend reads, kept until the command ends.
    pub policy_file: Option<PathBuf>,
}

/// An OS sandbox backend.
pub trait OuterSandbox: Send + Sync {
    /// Its name (`none`, `bwrap`, `sandbox-exec`).
    fn name(&self) -> &'static str;

    /// Whether it can run on this machine.
    ///
    /// # Errors
    /// [`Unavailable`] saying what is missing and how to fix it.
    fn probe(&self) -> Result<(), Unavailable>;

    /// The command line that runs `request.command` under the policy.
    ///
    /// # Errors
    /// [`ExecError`] when the policy cannot be prepared (a policy file cannot be written).
    fn wrap(&self, request: &ExecRequest) -> Result<Wrapped, ExecError>;
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Ending {
    /// The process exited with this code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// The process was killed by this signal (`SIGXCPU` / `SIGKILL` when a limit hit).
    Signaled {
        /// The signal number.
        signal: i32,
    },
    /// The wall-time limit passed; the process group was killed.
    WallTimeout,
    /// The output limit passed; the process group was killed.
    OutputLimit,
    /// The run was cancelled ([`run_cancellable`]); the process group was killed.
    Cancelled,
}

/// What was run, where, with what, and how it ended.
#[derive(Clone, Debug, Serialize)]
pub struct AuditRecord {
    /// The backend that ran the command (`none` when it fell back).
    pub backend: String,
    /// The backend that was asked for.
    pub requested_backend: String,
    /// Set when the command ran without the OS sandbox because the requested one was
    /// unavailable and the settings allowed that: why.
    pub unsandboxed: Option<String>,
    /// The command.
    pub command: Vec<String>,
    /// The full command line started (trampoline, backend, command).
    pub argv: Vec<String>,
    /// The workdir.
    pub workdir: Option<PathBuf>,
    /// What was mounted.
    pub mounts: Vec<Mount>,
    /// Whether the network was reachable.
    pub network: bool,
    /// Environment variable names passed.
    pub env_kept: Vec<String>,
    /// Environment variable names dropped as secrets.
    pub env_dropped: Vec<String>,
    /// The limits applied.
    pub limits: ResourceLimits,
    /// What was denied or cut: limits hit, output dropped.
    pub denied: Vec<String>,
    /// How it ended.
    pub ending: Ending,
    /// Wall time taken, in milliseconds.
    pub duration_ms: u64,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct ExecOutcome {
    /// The captured standard output (at most the output limit, with stderr).
    pub stdout: Vec<u8>,
    /// The captured standard error.
    pub stderr: Vec<u8>,
    /// The audit record.
    pub audit: AuditRecord,
}

impl ExecOutcome {
    /// The exit code, when the process exited by itself.
    pub fn code(&self) -> Option<i32> {
        match self.audit.ending {
            Ending::Exited { code } => Some(code),
            _ => None,
        }
    }
}
