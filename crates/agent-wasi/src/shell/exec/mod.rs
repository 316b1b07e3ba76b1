//! The interpreter: runs a [`Plan`] with bash's semantics for the supported subset.
//!
//! `;` runs in sequence, `&&` / `||` short-circuit on the status, `$?` is the status of the last
//! pipeline, a pipeline's status is its last stage's (no `pipefail`) and `!` negates it. A
//! pipeline of several stages runs each stage on its own thread with its own copy of the
//! shell's state, connected by in-memory pipes, so built-ins there (`cd x | cat`) do not change
//! the shell, as in bash's subshells. A single command runs on the calling thread and its
//! built-ins do; so do compound commands (`{ ..; }`, `if`, `for`, `while`, `until`, `case`),
//! whose commands share the compound's redirected streams.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::context::{ShellContext, ShellOutput};
use super::error::ShellError;
use super::expand::{ExpandError, Expander};
use super::options::ShellOptions;
use super::pipe::{PIPE_CAPACITY, PipeReader, pipe};
use super::plan::{AndOr, Connector, Node, Pipeline, Plan};
use super::stage::StageRunner;
use super::state::{CANCELLED_STATUS, Flow, State};
use super::stream::{Capture, Fds, SharedInput, Sink, Source};
use super::vars::Vars;
use super::workspace::{GuestPath, Mount, PathError, Workspace, strerror};

mod command;
mod compound;
mod launch;
mod redirect;

/// The streams a list of commands runs with: the script's own, or a compound command's after
/// its redirects. Every command gets copies (`Io::fds`).
struct Io {
    /// `None`: empty (`< /dev/null`).
    stdin: Option<SharedInput>,
    stdout: Sink,
    stderr: Sink,
    merged: bool,
}

impl Io {
    /// The streams of a compound command; its stdin becomes shared by the commands inside.
    fn from_fds(fds: Fds) -> Self {
        let stdin = match fds.stdin {
            Source::Empty => None,
            Source::Script(shared) => Some(shared),
            other => Some(SharedInput::from_reader(other.into_reader())),
        };
        Self {
            stdin,
            stdout: fds.stdout,
            stderr: fds.stderr,
            merged: fds.merged,
        }
    }

    /// A command's copy of the streams.
    fn fds(&self) -> std::io::Result<Fds> {
        Ok(Fds {
            stdin: self
                .stdin
                .as_ref()
                .map_or(Source::Empty, |s| Source::Script(s.clone())),
            stdout: self.stdout.try_clone()?,
            stderr: self.stderr.try_clone()?,
            merged: self.merged,
        })
    }

    /// Writes a shell diagnostic on these streams' stderr.
    fn diagnose(&self, message: &str) {
        if let Ok(mut err) = self.stderr.try_clone() {
            err.diagnose(message);
        }
    }
}

pub(super) struct Interpreter<'a> {
    pub(super) ws: &'a Workspace,
    pub(super) runner: &'a dyn StageRunner,
    cancel: Option<&'a AtomicBool>,
    /// What every command it starts is held to (read-only view, network, programs).
    pub(super) held: Held<'a>,
}

/// The limits a contained script's commands run under (see [`ShellContext::read_only`],
/// [`ShellContext::network`], [`ShellContext::programs`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Held<'a> {
    pub(super) read_only: bool,
    pub(super) offline: bool,
    pub(super) programs: Option<&'a [String]>,
    pub(super) refusal: Option<&'a str>,
}

/// Runs `plan` in `ctx`.
pub(crate) fn run(
    plan: &Plan,
    ctx: &ShellContext,
    runner: &dyn StageRunner,
) -> Result<ShellOutput, ShellError> {
    let mut ws = Workspace::open(&ctx.workspace).map_err(|source| ShellError::Workspace {
        path: ctx.workspace.clone(),
        source,
    })?;
    if ctx.read_only {
        ws = ws.into_read_only();
    }
    let mount_path = ctx.mount_path()?;
    let mount = Mount::new(&mount_path).map_err(|reason| ShellError::Mount {
        mount: mount_path.clone(),
        reason,
    })?;
    let root = GuestPath::root(&mount);
    let cwd = match &ctx.cwd {
        None => root,
        Some(given) => {
            let cwd_error = |reason: &str| ShellError::Cwd {
                cwd: given.clone(),
                reason: reason.to_owned(),
                mount: mount_path.clone(),
            };
            if !given.starts_with('/') {
                return Err(cwd_error("it is not absolute"));
            }
            let cwd = GuestPath::resolve(&root, given).map_err(|e| {
                cwd_error(match e {
                    PathError::Escape => "it climbs above the workspace root",
                    PathError::Outside => "it is outside the workspace",
                })
            })?;
            match ws.is_dir(&cwd) {
                Ok(true) => cwd,
                Ok(false) => return Err(cwd_error("not a directory")),
                Err(e) => return Err(cwd_error(&strerror(&e))),
            }
        }
    };
    let mut vars = Vars::default();
    let too_large = |_| ShellError::Environment {
        limit: super::vars::MAX_VARIABLE_BYTES,
    };
    for (name, value) in &ctx.env {
        vars.set_exported(name, value.clone()).map_err(too_large)?;
    }
    vars.set_exported("PWD", cwd.guest()).map_err(too_large)?;
    let mut state = State {
        vars,
        cwd,
        status: 0,
        loops: 0,
        options: ShellOptions::default(),
        guarded: 0,
    };
    let stdout = Capture::new(ctx.stdout_limit);
    let stderr = Capture::new(ctx.stderr_limit);
    let io = Io {
        stdin: Some(SharedInput::new(ctx.stdin.clone())),
        stdout: Sink::Capture(Arc::clone(&stdout)),
        stderr: Sink::Capture(Arc::clone(&stderr)),
        merged: false,
    };
    let interpreter = Interpreter {
        ws: &ws,
        runner,
        cancel: ctx.cancel.as_deref(),
        held: Held {
            read_only: ctx.read_only,
            offline: !ctx.network,
            programs: ctx.programs.as_deref(),
            refusal: ctx.refusal.as_deref(),
        },
    };
    let ended = interpreter.run_list(&plan.items, &mut state, &io);
    drop(io);
    let (stdout, stdout_truncated) = stdout.take();
    let (stderr, stderr_truncated) = stderr.take();
    let (exit_code, cancelled) = match ended {
        Flow::Cancelled => (CANCELLED_STATUS, true),
        Flow::Exit(code) => (code, false),
        // `break` / `continue` reaching the top were refused by the builtins (no loop).
        Flow::Status(_) | Flow::Break(..) | Flow::Continue(_) => (state.status, false),
    };
    Ok(ShellOutput {
        exit_code,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        cwd: state.cwd.guest(),
        env: state.vars.env(),
        cancelled,
    })
}

impl Interpreter<'_> {
    /// What expansion reads now: the state's variables, `$?` and working directory.
    fn expander<'s>(&'s self, state: &'s State) -> Expander<'s> {
        Expander {
            vars: &state.vars,
            status: state.status,
            ws: self.ws,
            cwd: &state.cwd,
            nounset: state.options.nounset,
        }
    }

    pub(super) fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Runs the and-or lists of a script or a compound command's body; its status is the last
    /// pipeline's. Any flow other than a status (`exit`, `break`, `continue`, cancellation)
    /// ends the list and goes up to whoever handles it.
    fn run_list(&self, items: &[AndOr], state: &mut State, io: &Io) -> Flow {
        for item in items {
            let pipelines = std::iter::once((None, &item.first))
                .chain(item.rest.iter().map(|(c, p)| (Some(*c), p)));
            let last = item.rest.len();
            let mut failed_last = false;
            for (k, (connector, pipeline)) in pipelines.enumerate() {
                let runs = match connector {
                    None => true,
                    Some(Connector::And) => state.status == 0,
                    Some(Connector::Or) => state.status != 0,
                };
                if !runs {
                    continue;
                }
                if self.cancelled() {
                    return Flow::Cancelled;
                }
                // `set -e` lets a `&&` / `||` operand but the last and a negated pipeline fail.
                let guarded = k < last || pipeline.negated;
                state.guarded += u32::from(guarded);
                let flow = self.pipeline(pipeline, state, io);
                state.guarded -= u32::from(guarded);
                match flow {
                    Flow::Status(s) => failed_last = !guarded && s != 0,
                    other => return other,
                }
            }
            if failed_last && state.options.errexit && state.guarded == 0 {
                return Flow::Exit(state.status);
            }
        }
        Flow::Status(state.status)
    }

    /// Runs the condition of an `if` / `while` / `until`, where `set -e` lets failures be.
    fn condition(&self, items: &[AndOr], state: &mut State, io: &Io) -> Flow {
        state.guarded += 1;
        let flow = self.run_list(items, state, io);
        state.guarded -= 1;
        flow
    }

    fn pipeline(&self, pipeline: &Pipeline, state: &mut State, io: &Io) -> Flow {
        let flow = match pipeline.stages.as_slice() {
            [only] => match io.fds() {
                Ok(fds) => self.node(only, state, fds),
                Err(e) => {
                    io.diagnose(&format!("cannot duplicate a stream: {}", strerror(&e)));
                    Flow::Status(1)
                }
            },
            stages => Flow::Status(self.stages(stages, state, io)),
        };
        match flow {
            Flow::Exit(code) => {
                state.status = code;
                Flow::Exit(code)
            }
            Flow::Status(status) => {
                let status = if pipeline.negated {
                    i32::from(status == 0)
                } else {
                    status
                };
                state.status = status;
                Flow::Status(status)
            }
            Flow::Break(_, status) => {
                state.status = status;
                flow
            }
            Flow::Continue(_) => {
                state.status = 0;
                flow
            }
            Flow::Cancelled => Flow::Cancelled,
        }
    }

    /// Runs the stages of a pipeline concurrently; the status is the last stage's.
    fn stages(&self, stages: &[Node], state: &State, io: &Io) -> i32 {
        let mut previous: Option<PipeReader> = None;
        let mut all_fds = Vec::with_capacity(stages.len());
        for i in 0..stages.len() {
            let stdin = match previous.take() {
                Some(reader) => Source::Pipe(reader),
                None => io
                    .stdin
                    .as_ref()
                    .map_or(Source::Empty, |s| Source::Script(s.clone())),
            };
            let stdout = if i + 1 == stages.len() {
                io.stdout.try_clone()
            } else {
                let (reader, writer) = pipe(PIPE_CAPACITY);
                previous = Some(reader);
                Ok(Sink::Pipe(writer))
            };
            match (stdout, io.stderr.try_clone()) {
                (Ok(stdout), Ok(stderr)) => all_fds.push(Fds {
                    stdin,
                    stdout,
                    stderr,
                    merged: false,
                }),
                (Err(e), _) | (_, Err(e)) => {
                    io.diagnose(&format!("cannot duplicate a stream: {}", strerror(&e)));
                    return 1;
                }
            }
        }
        std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(stages.len());
            for (node, fds) in stages.iter().zip(all_fds) {
                let mut own = state.clone();
                // A stage is a subshell: the loops around the pipeline are not its own.
                own.loops = 0;
                let spawned = std::thread::Builder::new()
                    .name("shell-stage".to_owned())
                    .spawn_scoped(scope, move || match self.node(node, &mut own, fds) {
                        Flow::Status(s) | Flow::Exit(s) => s,
                        Flow::Break(_, s) => s,
                        Flow::Continue(_) => 0,
                        Flow::Cancelled => CANCELLED_STATUS,
                    });
                handles.push(spawned);
            }
            let mut status = 0;
            let mut failed = 0;
            for handle in handles {
                status = match handle {
                    Ok(h) => h.join().unwrap_or_else(|_| {
                        io.diagnose("a pipeline stage failed unexpectedly");
                        1
                    }),
                    Err(e) => {
                        io.diagnose(&format!("cannot start a pipeline stage: {e}"));
                        1
                    }
                };
                if status != 0 {
                    failed = status;
                }
            }
            // `set -o pipefail`: the last stage that failed.
            if state.options.pipefail {
                failed
            } else {
                status
            }
        })
    }

    /// Runs one stage: a simple command, or a compound command with its redirects.
    fn node(&self, node: &Node, state: &mut State, mut fds: Fds) -> Flow {
        let (compound, redirects) = match node {
            Node::Simple(command) => return self.command(command, state, fds),
            Node::Compound(compound, redirects) => (compound, redirects),
        };
        {
            let expander = self.expander(state);
            for redirect in redirects {
                if let Err(failed) = self.redirect(redirect, &expander, &mut fds) {
                    fds.diagnose(&failed.message);
                    return failed.flow();
                }
            }
        }
        let io = Io::from_fds(fds);
        self.compound(compound, state, &io)
    }
}

/// A command that could not start (a failed expansion or redirect): the message to print, and
/// whether it ends the script.
pub(crate) struct Failed {
    pub message: String,
    /// The status the script ends with, when the failure ends it (an arithmetic error, a
    /// `${NAME:?}`).
    pub fatal: Option<i32>,
}

impl From<String> for Failed {
    fn from(message: String) -> Self {
        Self {
            message,
            fatal: None,
        }
    }
}

impl From<ExpandError> for Failed {
    fn from(e: ExpandError) -> Self {
        Self {
            message: e.message(),
            fatal: e.fatal_status(),
        }
    }
}

impl Failed {
    /// What the shell does next: end the script, or fail the command with 1.
    pub fn flow(&self) -> Flow {
        self.fatal.map_or(Flow::Status(1), Flow::Exit)
    }
}

/// What a failed expansion does (see [`Failed::flow`]).
pub(super) fn expansion_failed(e: &ExpandError) -> Flow {
    e.fatal_status().map_or(Flow::Status(1), Flow::Exit)
}
