//! The seam between the shell and whatever runs external commands (the wasmtime runner in
//! production, host processes or fakes in tests).
//!
//! The shell does everything bash does around a command: expansion, redirects, pipes,
//! built-ins, `$?`. For each external command it first asks [`StageRunner::has_command`]; when
//! the answer is no it prints `bash: NAME: command not found` itself and the status is 127, as
//! in bash. Otherwise it hands a [`Stage`] to [`StageRunner::run_stage`], which runs the command
//! to its end.
//!
//! Streams are plain [`Read`] / [`Write`] boxes. Behind them may be the script's captured
//! output, a file in the workspace, or an in-memory pipe to the next stage of a pipeline. Two
//! rules keep pipelines working:
//! - A write may fail with [`std::io::ErrorKind::BrokenPipe`] once the next stage has exited;
//!   the runner should then end the command (as SIGPIPE would), so `yes | head -1` ends.
//! - The runner must drop all three streams before `run_stage` returns: the next stage sees end
//!   of file only when the last writer is gone.
//!
//! Reads may block until the previous stage writes; stages of one pipeline run on their own
//! threads, so a runner may block freely.

use std::fmt;
use std::io::{Read, Write};
use std::time::Duration;

/// Runs external commands for the shell.
pub trait StageRunner: Send + Sync {
    /// Whether a command called `name` exists (for the wasmtime runner: an installed bundle
    /// provides it). `name` is `argv[0]` after expansion, exactly as typed; it may contain `/`.
    fn has_command(&self, name: &str) -> bool;

    /// Runs one external command to its end and returns its exit status: 0–255 as the command
    /// exited, 126 when it exists but cannot run, 128 + N when a limit ended it like signal N
    /// (the runner writes its own diagnostic on the stage's stderr in those cases).
    fn run_stage(&self, stage: Stage) -> i32;
}

/// One external command, ready to run.
pub struct Stage {
    /// The command name as typed after expansion, then its arguments.
    pub argv: Vec<String>,
    /// The guest path the workspace root appears at (`/`, or its own host path such as
    /// `/home/me/proj`): where a WASI runner preopens it, and how a host runner maps guest paths
    /// back to the workspace.
    pub mount: String,
    /// The working directory as a guest path: the mount or a directory below it
    /// (`/home/me/proj/sub`; `/sub` with the workspace at `/`).
    pub cwd: String,
    /// The environment: the shell's exported variables plus the command's own assignments
    /// (`A=1 cmd`), sorted by name.
    pub env: Vec<(String, String)>,
    /// Standard input.
    pub stdin: Box<dyn Read + Send>,
    /// Standard output.
    pub stdout: Box<dyn Write + Send>,
    /// Standard error.
    pub stderr: Box<dyn Write + Send>,
    /// Whether stderr leads where stdout does (`2>&1`, `>&2`, `&>`, `|&`). A WASI guest writes
    /// both in program order and can ignore this; a runner that pumps a host process's two
    /// outputs on separate threads should give the process one pipe for both instead, or the
    /// order of their lines is lost.
    pub stderr_is_stdout: bool,
    /// A wall-time cap for this command on top of the runner's own limits (what `timeout
    /// DURATION COMMAND` asks for), `None` for none. A runner stops the command when it runs
    /// out, as its own wall-time limit does: the status is 124.
    pub wall_time: Option<Duration>,
    /// The workspace is read-only for this command (a WASI runner preopens it read-only).
    pub read_only: bool,
    /// Whether the command may use the runner's network grant.
    pub network: bool,
}

impl fmt::Debug for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stage")
            .field("argv", &self.argv)
            .field("mount", &self.mount)
            .field("cwd", &self.cwd)
            .field("env", &self.env)
            .field("stderr_is_stdout", &self.stderr_is_stdout)
            .field("wall_time", &self.wall_time)
            .field("read_only", &self.read_only)
            .field("network", &self.network)
            .finish_non_exhaustive()
    }
}
