//! What a script runs with ([`ShellContext`]) and what it leaves ([`ShellOutput`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The default cap on each of the script's stdout and stderr (1 MiB). The agent's tool layer
/// applies its own, smaller inline limit; this one only bounds the shell's memory.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;

/// The world a script runs in.
#[derive(Clone, Debug)]
pub struct ShellContext {
    /// The workspace root on the host. Every path the script names (redirects, globs, `cd`)
    /// resolves inside it; the guest sees it as `/`.
    pub workspace: PathBuf,
    /// The initial working directory, as a guest path (`/`, `/src`).
    pub cwd: String,
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
}

impl ShellContext {
    /// A context on the host directory `workspace` with the defaults: working directory `/`
    /// (the workspace root), an empty environment (no `HOME`, so `cd` alone fails as in bash),
    /// empty stdin, [`DEFAULT_OUTPUT_LIMIT`] for stdout and stderr, no cancellation.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            cwd: "/".to_owned(),
            env: Vec::new(),
            stdin: Vec::new(),
            stdout_limit: DEFAULT_OUTPUT_LIMIT,
            stderr_limit: DEFAULT_OUTPUT_LIMIT,
            cancel: None,
        }
    }

    /// Sets the initial working directory (a guest path). Default `/`.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = cwd.into();
        self
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
