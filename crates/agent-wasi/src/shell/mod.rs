//! `Shell(script)`: a restricted bash, parsed by the project's shell parser and run command by
//! command through a [`StageRunner`].
//!
//! The script is compiled into a [`Plan`] before anything runs, from the lowered shell tree of
//! `agent_core::shell::parse_script` (one parse, the one the permission checker reads too; this
//! crate does not call brush-parser itself), and every construct
//! outside the supported subset is refused with [`ShellError::Unsupported`], naming the
//! construct and its line and column. The subset: pipelines (`|`, `|&`, `!`), lists (`;`,
//! newlines, `&&`, `||`), redirects (`<`, `>`, `>>`, `>|`, `2>`, `2>>`, `2>&1`, `>&2`, `&>`,
//! `&>>`), quoting (`'..'`, `".."`, `\`, `$'..'`), brace expansion (`{a,b}`, `{1..5}`),
//! `$NAME`, `${NAME}`, the `${NAME<op>..}` operators (`${X:-d}`, `${F%.txt}`, `${S//a/b}`,
//! `${#X}`, ...), `$?`, arithmetic (`$((..))`, `((..))`, `for ((..))`), assignments (`A=1`,
//! `A=1 cmd`), globs (`*`, `?`, `[..]`) against the workspace, the compound commands `{ ..; }`,
//! `if`, `for NAME in ..`, `while`, `until`, `case` and `[[ .. ]]` (with redirects, and as
//! pipeline stages), and the built-ins `cd`, `export`, `unset`, `exit`, `true`, `false`, `:`,
//! `echo`, `pwd`, `break`, `continue`, `read`, `set` (`-e -u -x -o pipefail`), `command`, plus
//! `xargs`, `env COMMAND`, `timeout` and `find .. -exec`, which the shell runs itself because a
//! guest cannot start commands. Subshells, command substitution, here-documents, functions, arrays,
//! process substitution and background jobs are refused. `docs/shell.md` has the full grammar,
//! the refused constructs and every decision.
//!
//! [`route`] (and [`Plan::route`]) answers, without running anything, whether this shell can run
//! a script at all: the syntax inside the subset, and every program it can start a built-in or
//! a bundle command whose name the text tells ([`Route`]).
//!
//! The script runs with bash's semantics for that subset: exit statuses (127 for a command not
//! found, 1 for a failed redirect), word splitting on `$IFS`, glob sorting as with `LC_ALL=C`.
//! The workspace appears at a mount: by default its own canonical host path, so `pwd` and the
//! paths commands print are the ones the host's tools use (`ShellContext::with_mount("/")`
//! shows it as `/`). Every path the script names resolves inside it; one that climbs above its
//! root is refused with `Permission denied`, an absolute one elsewhere with `outside the
//! workspace`. External commands go to the [`StageRunner`]; the stages of a pipeline run
//! concurrently, connected by bounded in-memory pipes.
//!
//! ```
//! use agent_wasi::shell::{run_script, ShellContext, Stage, StageRunner};
//!
//! /// Knows one command, `upper`, which upper-cases its stdin.
//! struct Upper;
//! impl StageRunner for Upper {
//!     fn has_command(&self, name: &str) -> bool {
//!         name == "upper"
//!     }
//!     fn run_stage(&self, mut stage: Stage) -> i32 {
//!         let mut text = String::new();
//!         if stage.stdin.read_to_string(&mut text).is_err() {
//!             return 1;
//!         }
//!         match stage.stdout.write_all(text.to_uppercase().as_bytes()) {
//!             Ok(()) => 0,
//!             Err(_) => 1,
//!         }
//!     }
//! }
//! # use std::io::{Read, Write};
//!
//! let workspace = std::env::temp_dir();
//! let ctx = ShellContext::new(&workspace).with_env([("NAME", "world")]);
//! let out = run_script("echo \"hello, $NAME\" | upper; nope || echo $?", &ctx, &Upper)?;
//! assert_eq!(out.stdout, b"HELLO, WORLD\n127\n");
//! assert_eq!(out.stderr, b"bash: nope: command not found\n");
//! assert_eq!(out.exit_code, 0);
//! # Ok::<(), agent_wasi::shell::ShellError>(())
//! ```

mod arith;
mod builtins;
mod cond;
mod context;
mod env_command;
mod error;
mod exec;
mod expand;
mod find_exec;
mod glob;
mod options;
mod param;
mod parse;
mod pipe;
mod plan;
mod read;
mod route;
mod stage;
mod state;
mod stream;
mod timeout;
mod vars;
mod word;
mod workspace;
mod xargs;

pub use context::{DEFAULT_OUTPUT_LIMIT, ShellContext, ShellOutput};
pub use error::{Position, ShellError};
pub use plan::Plan;
pub use route::{Route, route, route_compiled};
pub use stage::{Stage, StageRunner};

/// Parses `script` and runs it.
///
/// # Errors
/// [`ShellError::Parse`] or [`ShellError::Unsupported`] when the script is refused (nothing
/// runs); [`ShellError::Workspace`], [`ShellError::Mount`] or [`ShellError::Cwd`] when the
/// context is unusable. Failures of the commands themselves are exit statuses, not errors.
pub fn run_script(
    script: &str,
    ctx: &ShellContext,
    runner: &dyn StageRunner,
) -> Result<ShellOutput, ShellError> {
    Plan::parse(script)?.run(ctx, runner)
}

impl Plan {
    /// Runs the plan.
    ///
    /// # Errors
    /// [`ShellError::Workspace`] when the workspace root cannot be opened (or, for the default
    /// mount, its real path found), [`ShellError::Mount`] when the context's mount is not an
    /// absolute path, [`ShellError::Cwd`] when the context's working directory is not a
    /// directory inside the workspace.
    pub fn run(
        &self,
        ctx: &ShellContext,
        runner: &dyn StageRunner,
    ) -> Result<ShellOutput, ShellError> {
        exec::run(self, ctx, runner)
    }
}

#[cfg(test)]
mod tests;
