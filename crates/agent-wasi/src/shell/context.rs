//! What a script runs with ([`ShellContext`]) and what it leaves ([`ShellOutput`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::error::ShellError;

/// The default cap on each of the script's stdout and stderr (1 MiB). The agent's tool layer
/// applies its own, smaller inline limit; this one only bounds the shell's memory.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;

/// The world a script runs in.
#[derive(Clone, Debug)]
pub struct ShellContext {
    /// The workspace root on the host. Every path the script names (redirects, globs, `cd`)
    /// resolves inside it.
    pub workspace: PathBuf,
    /// The guest path the workspace root appears at, for the shell and every command it runs;
    /// `None` (the default): the workspace's canonical host path ([`crate::host_mount`]), so
    /// `pwd`, `$PWD` and the paths commands print are the host's own. `Some("/")` shows it as
    /// `/`. An absolute path outside the mount names nothing (`outside the workspace`).
    pub mount: Option<String>,
    /// The initial working directory, as a guest path: the mount or a directory below it
    /// (`/home/me/proj/src`; `/src` with the workspace at `/`). `None` (the default): the
    /// workspace root.
    pub cwd: Option<String>,
    /// The initial environment; every variable in it is exported.
    pub env: Vec<(String, String)>,
    /// The script's standard input, shared by the commands that read it.
    pub stdin: Vec<u8>,
    /// The most stdout bytes kept; the rest is dropped and flagged.
    pub stdout_limit: usize,
    /// The most stderr bytes kept; the rest is dropped and flagged.
    pub stderr_limit: usize,
    /// Set to `true` to stop the script before its next pipeline (checked between commands;
    /// the stage runner bounds each command itself).
    pub cancel: Option<Arc<AtomicBool>>,
    /// The workspace is read-only for the script and every command it runs: redirects that
    /// write fail with `Read-only file system`, and modules get a read-only preopen.
    pub read_only: bool,
    /// Whether commands may use the runner's network grant (default `true`); `false` runs
    /// every command without it.
    pub network: bool,
    /// The only programs the script may start (basenames), when limited: any other command
    /// line, however it is reached (`xargs`, `env`, `timeout`, `find -exec`), is refused with
    /// status 126 and [`ShellContext::refusal`]'s words. `None` (the default): any command.
    pub programs: Option<Vec<String>>,
    /// What a refused program's message says after the name (why it was not started).
    pub refusal: Option<String>,
}

impl ShellContext {
    /// A context on the host directory `workspace` with the defaults: the workspace mounted at
    /// its own canonical host path, the working directory at its root, an empty environment
    /// (no `HOME`, so `cd` alone fails as in bash), empty stdin, [`DEFAULT_OUTPUT_LIMIT`] for
    /// stdout and stderr, no cancellation.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            mount: None,
            cwd: None,
            env: Vec::new(),
            stdin: Vec::new(),
            stdout_limit: DEFAULT_OUTPUT_LIMIT,
            stderr_limit: DEFAULT_OUTPUT_LIMIT,
            cancel: None,
            read_only: false,
            network: true,
            programs: None,
            refusal: None,
        }
    }

    /// Makes the workspace read-only for the script and every command it runs.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Runs every command without the network.
    #[must_use]
    pub fn offline(mut self) -> Self {
        self.network = false;
        self
    }

    /// Limits the programs the script may start to `programs` (basenames); `why` is said of
    /// any other when it is refused (`approved as read-only for ls, wc only`).
    #[must_use]
    pub fn with_programs(mut self, programs: Vec<String>, why: impl Into<String>) -> Self {
        self.programs = Some(programs);
        self.refusal = Some(why.into());
        self
    }

    /// Mounts the workspace at the guest path `mount` (absolute; `/` for the workspace as the
    /// guest's whole file system) instead of its canonical host path.
    #[must_use]
    pub fn with_mount(mut self, mount: impl Into<String>) -> Self {
        self.mount = Some(mount.into());
        self
    }

    /// Sets the initial working directory (a guest path under the mount). Default: the
    /// workspace root.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The guest path the workspace appears at: [`ShellContext::mount`] normalized, or the
    /// workspace's canonical host path. This is what the script's `pwd` prints at the root;
    /// give it as `HOME` to make `cd` alone go there.
    ///
    /// # Errors
    /// [`ShellError::Mount`] when the mount given is not an absolute path without `.` and
    /// `..`; [`ShellError::Workspace`] when the workspace's real path cannot be found or is not
    /// UTF-8.
    pub fn mount_path(&self) -> Result<String, ShellError> {
        match &self.mount {
            Some(mount) => {
                crate::command::normalize_mount(mount).map_err(|reason| ShellError::Mount {
                    mount: mount.clone(),
                    reason,
                })
            }
            None => crate::host_mount(&self.workspace).map_err(|source| ShellError::Workspace {
                path: self.workspace.clone(),
                source,
            }),
        }
    }

    /// Sets the initial environment. Default empty.
    #[must_use]
    pub fn with_env<K: Into<String>, V: Into<String>>(
        mut self,
        env: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.env = env.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        self
    }

    /// Sets the script's stdin. Default empty.
    #[must_use]
    pub fn with_stdin(mut self, stdin: impl Into<Vec<u8>>) -> Self {
        self.stdin = stdin.into();
        self
    }

    /// Sets the stdout and stderr caps. Default [`DEFAULT_OUTPUT_LIMIT`] each.
    #[must_use]
    pub fn with_output_limits(mut self, stdout: usize, stderr: usize) -> Self {
        self.stdout_limit = stdout;
        self.stderr_limit = stderr;
        self
    }

    /// Sets a cancellation flag. Default none.
    #[must_use]
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

/// What a script produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellOutput {
    /// The status of the last command run, or the argument of `exit`; 130 when cancelled.
    pub exit_code: i32,
    /// Everything written to the script's stdout, up to the limit.
    pub stdout: Vec<u8>,
    /// Everything written to the script's stderr, up to the limit (the shell's own messages,
    /// such as `bash: x: command not found`, included).
    pub stderr: Vec<u8>,
    /// Whether stdout went over its limit.
    pub stdout_truncated: bool,
    /// Whether stderr went over its limit.
    pub stderr_truncated: bool,
    /// The working directory at the end, as a guest path (after `cd`).
    pub cwd: String,
    /// The exported variables at the end, sorted by name (after `export`).
    pub env: Vec<(String, String)>,
    /// Whether the script was stopped by the context's cancellation flag.
    pub cancelled: bool,
}
