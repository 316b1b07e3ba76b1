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

use super::builtins::Builtin;
use super::cond::CondError;
use super::context::{ShellContext, ShellOutput};
use super::error::ShellError;
use super::expand::{ExpandError, Expander};
use super::glob;
use super::launch::Launch;
use super::options::ShellOptions;
use super::pipe::{PIPE_CAPACITY, PipeReader, pipe};
use super::plan::{
    AndOr, CaseArm, CaseNext, Command, Compound, Connector, Fd, Node, Pipeline, Plan, Redirect,
    Word,
};
use super::stage::StageRunner;
use super::stream::{Capture, Fds, SharedInput, Sink, Source};
use super::vars::Vars;
use super::workspace::{GuestPath, Mount, PathError, Workspace, lexical, strerror};

/// The exit status of a script stopped by its cancellation flag (as bash after SIGINT).
pub(crate) const CANCELLED_STATUS: i32 = 130;

/// What a command asks of the shell after it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on; the command's status.
    Status(i32),
    /// `exit N`: end the script (or, in a pipeline stage, that stage) with N.
    Exit(i32),
    /// `break N`: leave N enclosing loops (at least 1, at most the loops there are), the loop
    /// then having this status (0, or 1 after bash's "loop count out of range").
    Break(u32, i32),
    /// `continue N`: the next iteration of the Nth enclosing loop.
    Continue(u32),
    /// The script's cancellation flag was seen: stop everything.
    Cancelled,
}

/// The shell's state: variables, working directory, last status, loops being run.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub vars: Vars,
    pub cwd: GuestPath,
    pub status: i32,
    /// How many `for` / `while` / `until` loops enclose the command running (0 in a pipeline
    /// stage, as in bash's subshells).
    pub loops: u32,
    /// The options `set` changes.
    pub options: ShellOptions,
    /// How many places enclose the command where a failure does not end the script under
    /// `set -e` (a condition, a `&&` / `||` operand but the last, a negated pipeline).
    pub guarded: u32,
}

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

    fn compound(&self, compound: &Compound, state: &mut State, io: &Io) -> Flow {
        match compound {
            Compound::Group(body) => self.run_list(body, state, io),
            Compound::If {
                branches,
                otherwise,
            } => {
                for (condition, body) in branches {
                    match self.condition(condition, state, io) {
                        Flow::Status(0) => return self.run_list(body, state, io),
                        Flow::Status(_) => {}
                        other => return other,
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body, state, io),
                    None => Flow::Status(0),
                }
            }
            Compound::For { name, words, body } => {
                let values = {
                    let expander = self.expander(state);
                    match expander.words(words) {
                        Ok(values) => values,
                        Err(e) => {
                            io.diagnose(&e.message());
                            return expansion_failed(&e);
                        }
                    }
                };
                state.loops += 1;
                let flow = self.for_loop(name, &values, body, state, io);
                state.loops -= 1;
                flow
            }
            Compound::Loop {
                until,
                condition,
                body,
            } => {
                state.loops += 1;
                let flow = self.while_loop(*until, condition, body, state, io);
                state.loops -= 1;
                flow
            }
            Compound::Case { subject, arms } => self.case(subject, arms, state, io),
            Compound::Arith(text) => match arithmetic(text, state, io) {
                Some(value) => Flow::Status(i32::from(value == 0)),
                None => Flow::Status(1),
            },
            Compound::ArithFor {
                init,
                condition,
                update,
                body,
            } => {
                state.loops += 1;
                let flow = self.arith_for(init, condition, update, body, state, io);
                state.loops -= 1;
                flow
            }
            Compound::Test(cond) => match cond.eval(&self.expander(state)) {
                Ok(true) => Flow::Status(0),
                Ok(false) => Flow::Status(1),
                Err(CondError::Arithmetic(message)) => {
                    io.diagnose(&format!("[[: {message}"));
                    Flow::Status(1)
                }
                Err(CondError::Expand(e)) => {
                    io.diagnose(&e.message());
                    expansion_failed(&e)
                }
            },
        }
    }

    fn for_loop(
        &self,
        name: &str,
        values: &[String],
        body: &[AndOr],
        state: &mut State,
        io: &Io,
    ) -> Flow {
        let mut status = 0;
        for value in values {
            if self.cancelled() {
                return Flow::Cancelled;
            }
            if state.vars.set(name, value.clone()).is_err() {
                io.diagnose(&format!(
                    "{name}: the shell's variables would exceed {} bytes",
                    super::vars::MAX_VARIABLE_BYTES
                ));
                return Flow::Status(1);
            }
            match self.iteration(body, state, io) {
                Ok(s) => status = s,
                Err(flow) => return flow,
            }
        }
        Flow::Status(status)
    }

    /// Runs a loop's body once: `Ok(status)` to go on (a `continue` of this loop gives 0),
    /// `Err(flow)` to leave the loop with that flow (`break`, an outer `continue`, `exit`...).
    fn iteration(&self, body: &[AndOr], state: &mut State, io: &Io) -> Result<i32, Flow> {
        match self.run_list(body, state, io) {
            Flow::Status(s) => Ok(s),
            Flow::Break(n, status) => Err(leave(n, status)),
            Flow::Continue(n) if n > 1 => Err(Flow::Continue(n - 1)),
            Flow::Continue(_) => Ok(0),
            other => Err(other),
        }
    }

    /// `for ((INIT; CONDITION; UPDATE))`: an empty condition is true; an arithmetic error ends
    /// the loop with 1, as in bash.
    fn arith_for(
        &self,
        init: &Option<String>,
        condition: &Option<String>,
        update: &Option<String>,
        body: &[AndOr],
        state: &mut State,
        io: &Io,
    ) -> Flow {
        if let Some(text) = init
            && arithmetic(text, state, io).is_none()
        {
            return Flow::Status(1);
        }
        let mut status = 0;
        loop {
            if self.cancelled() {
                return Flow::Cancelled;
            }
            if let Some(text) = condition {
                match arithmetic(text, state, io) {
                    Some(0) => break,
                    Some(_) => {}
                    None => return Flow::Status(1),
                }
            }
            match self.iteration(body, state, io) {
                Ok(s) => status = s,
                Err(flow) => return flow,
            }
            if let Some(text) = update
                && arithmetic(text, state, io).is_none()
            {
                return Flow::Status(1);
            }
        }
        Flow::Status(status)
    }

    fn while_loop(
        &self,
        until: bool,
        condition: &[AndOr],
        body: &[AndOr],
        state: &mut State,
        io: &Io,
    ) -> Flow {
        let mut status = 0;
        loop {
            if self.cancelled() {
                return Flow::Cancelled;
            }
            match self.condition(condition, state, io) {
                Flow::Status(s) if (s == 0) == until => break,
                Flow::Status(_) => {}
                Flow::Break(n, status) => return leave(n, status),
                Flow::Continue(n) if n > 1 => return Flow::Continue(n - 1),
                Flow::Continue(_) => continue,
                other => return other,
            }
            match self.iteration(body, state, io) {
                Ok(s) => status = s,
                Err(flow) => return flow,
            }
        }
        Flow::Status(status)
    }

    /// `case`: the first arm with a matching pattern runs (then `;&` runs the next arm's list
    /// too, `;;&` goes on testing); the status is the last list's, 0 when none ran.
    fn case(&self, subject: &Word, arms: &[CaseArm], state: &mut State, io: &Io) -> Flow {
        let subject = match self.expander(state).single(subject) {
            Ok(s) => s,
            Err(e) => {
                io.diagnose(&e.message());
                return expansion_failed(&e);
            }
        };
        let mut status = 0;
        let mut fall_through = false;
        for arm in arms {
            // Patterns expand against the state as it is now (an arm before may have changed it).
            let expander = self.expander(state);
            let mut hit = fall_through;
            for pattern in &arm.patterns {
                if hit {
                    break;
                }
                match expander.pattern(pattern) {
                    Ok((bytes, active)) => {
                        hit = glob::pattern_matches(&bytes, &active, subject.as_bytes());
                    }
                    Err(e) => {
                        io.diagnose(&e.message());
                        return expansion_failed(&e);
                    }
                }
            }
            if !hit {
                continue;
            }
            status = match self.run_list(&arm.body, state, io) {
                Flow::Status(s) if !arm.body.is_empty() => s,
                Flow::Status(_) => 0,
                other => return other,
            };
            match arm.then {
                CaseNext::Stop => return Flow::Status(status),
                CaseNext::FallThrough => fall_through = true,
                CaseNext::TestNext => fall_through = false,
            }
        }
        Flow::Status(status)
    }

    /// Runs one simple command: expansion, redirects, assignments, then a built-in or an
    /// external command.
    fn command(&self, command: &Command, state: &mut State, mut fds: Fds) -> Flow {
        let argv = {
            let expander = self.expander(state);
            let argv = match expander.words(&command.words) {
                Ok(argv) => argv,
                Err(e) => {
                    fds.diagnose(&e.message());
                    return expansion_failed(&e);
                }
            };
            for redirect in &command.redirects {
                if let Err(failed) = self.redirect(redirect, &expander, &mut fds) {
                    fds.diagnose(&failed.message);
                    return failed.flow();
                }
            }
            argv
        };
        // `command [-p] NAME ARGS` runs NAME (there are no functions to bypass);
        // `command -v` / `-V` say what a name is.
        let argv = match argv.first().map(String::as_str) {
            Some("command") => match self.command_builtin(&argv[1..], &mut fds) {
                Ok(rest) => rest,
                Err(status) => return Flow::Status(status),
            },
            _ => argv,
        };
        let Some(name) = argv.first() else {
            // Assignments alone: they stay.
            for a in &command.assignments {
                if let Err(failed) = self.assign(state, &a.name, a.append, &a.value, false) {
                    fds.diagnose(&failed.message);
                    return failed.flow();
                }
            }
            trace(command, &argv, state, &mut fds);
            return Flow::Status(0);
        };
        // `A=1 cmd`: the assignments hold for this command only.
        let mut saved = Vec::with_capacity(command.assignments.len());
        for a in &command.assignments {
            saved.push((a.name.as_str(), state.vars.save(&a.name)));
            if let Err(failed) = self.assign(state, &a.name, a.append, &a.value, true) {
                fds.diagnose(&failed.message);
                restore(state, saved);
                return failed.flow();
            }
        }
        trace(command, &argv, state, &mut fds);
        let flow = if let Some(builtin) = Builtin::lookup(name) {
            builtin.run(&argv[1..], state, &mut fds, self.ws)
        } else if !self.is_command(name) {
            fds.diagnose(&format!("{name}: command not found"));
            Flow::Status(127)
        } else {
            Flow::Status(self.launch(argv, &Launch::of(state), fds))
        };
        restore(state, saved);
        flow
    }

    /// `command ARGS`: the command line to run, or (for `-v` / `-V`, or nothing to run) the
    /// status to end with. `-v NAME..` prints each name a built-in or a bundle provides and
    /// fails only when none is found; `-V` says `NAME is a shell builtin` / `NAME is NAME`.
    fn command_builtin(&self, args: &[String], fds: &mut Fds) -> Result<Vec<String>, i32> {
        let mut verbose = None;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
                break;
            };
            if arg == "--" {
                i += 1;
                break;
            }
            for flag in flags.chars() {
                match flag {
                    'p' => {}
                    'v' => verbose = Some(false),
                    'V' => verbose = Some(true),
                    _ => {
                        fds.diagnose(&format!(
                            "command: -{flag}: invalid option\ncommand: usage: command [-pVv] command [arg ...]"
                        ));
                        return Err(2);
                    }
                }
            }
            i += 1;
        }
        let rest = &args[i.min(args.len())..];
        let Some(long) = verbose else {
            return if rest.is_empty() {
                Err(0)
            } else {
                Ok(rest.to_vec())
            };
        };
        let mut out = String::new();
        let mut found = false;
        for name in rest {
            let builtin = Builtin::lookup(name).is_some();
            if builtin || self.is_command(name) {
                found = true;
                out.push_str(&match (long, builtin) {
                    (false, _) => format!("{name}\n"),
                    (true, true) => format!("{name} is a shell builtin\n"),
                    (true, false) => format!("{name} is {name}\n"),
                });
            } else if long {
                fds.diagnose(&format!("command: {name}: not found"));
            }
        }
        if std::io::Write::write_all(&mut fds.stdout, out.as_bytes()).is_err() {
            return Err(1);
        }
        Err(if found { 0 } else { 1 })
    }

    /// Applies one redirect to `fds`; the error is the message to print.
    ///
    /// `/dev/null`, `/dev/stdin`, `/dev/stdout` and `/dev/stderr` are the shell's own, as bash
    /// provides them where the system lacks them: the guest's `/dev` is the workspace's.
    fn redirect(
        &self,
        redirect: &Redirect,
        expander: &Expander<'_>,
        fds: &mut Fds,
    ) -> Result<(), Failed> {
        match redirect {
            Redirect::Read { target } => {
                let (name, target) = self.target(target, expander)?;
                match target {
                    Target::Device(Device::Null) => fds.stdin = Source::Empty,
                    Target::Device(Device::Stdin) => {}
                    Target::Device(device @ (Device::Stdout | Device::Stderr)) => {
                        return Err(format!(
                            "{name}: reading the shell's {} is not supported",
                            device.name()
                        )
                        .into());
                    }
                    Target::File(path) => {
                        let file = self
                            .ws
                            .open_read(&path)
                            .map_err(|e| format!("{name}: {}", strerror(&e)))?;
                        fds.stdin = Source::File(file);
                    }
                }
            }
            Redirect::Write { fd, target, append } => {
                let (name, path) = self.target(target, expander)?;
                let (sink, copy_of) = self.sink(&name, &path, *append, fds)?;
                set(fds, *fd, sink, copy_of);
            }
            Redirect::Dup { fd, to } => {
                let copy = duplicate(fds, *to)?;
                set(fds, *fd, copy, Some(*to));
            }
            Redirect::Both { target, append } => {
                let (name, path) = self.target(target, expander)?;
                let (sink, _) = self.sink(&name, &path, *append, fds)?;
                let copy = sink
                    .try_clone()
                    .map_err(|e| format!("{name}: {}", strerror(&e)))?;
                fds.stdout = copy;
                fds.stderr = sink;
                fds.merged = true;
            }
        }
        Ok(())
    }

    /// Opens `path` for writing, or the device it names; with the stream it is a copy of, for
    /// `/dev/stdout` and `/dev/stderr`.
    fn sink(
        &self,
        name: &str,
        target: &Target,
        append: bool,
        fds: &Fds,
    ) -> Result<(Sink, Option<Fd>), String> {
        match target {
            Target::Device(Device::Null) => Ok((Sink::Null, None)),
            Target::Device(Device::Stdout) => Ok((duplicate(fds, Fd::Stdout)?, Some(Fd::Stdout))),
            Target::Device(Device::Stderr) => Ok((duplicate(fds, Fd::Stderr)?, Some(Fd::Stderr))),
            Target::Device(Device::Stdin) => Err(format!(
                "{name}: writing the shell's stdin is not supported"
            )),
            Target::File(path) => self
                .ws
                .open_write(path, append)
                .map(|file| (Sink::File(file), None))
                .map_err(|e| format!("{name}: {}", strerror(&e))),
        }
    }

    /// Expands and performs one assignment; `export` marks the variable exported (a temporary
    /// assignment is in its command's environment). The error is the message to print.
    fn assign(
        &self,
        state: &mut State,
        name: &str,
        append: bool,
        value: &Word,
        export: bool,
    ) -> Result<(), Failed> {
        let expander = self.expander(state);
        let mut value = expander.single(value)?;
        if append {
            value.insert_str(0, state.vars.get(name).unwrap_or_default());
        }
        let set = if export {
            state.vars.set_exported(name, value)
        } else {
            state.vars.set(name, value)
        };
        set.map_err(|_| {
            Failed::from(format!(
                "{name}: the shell's variables would exceed {} bytes",
                super::vars::MAX_VARIABLE_BYTES
            ))
        })
    }

    /// Expands a redirect target to one of the shell's devices or one path inside the
    /// workspace.
    fn target(&self, word: &Word, expander: &Expander<'_>) -> Result<(String, Target), Failed> {
        let fields = expander.fields(word)?;
        let [name] = fields.as_slice() else {
            return Err(format!("{}: ambiguous redirect", word.source).into());
        };
        if name.is_empty() {
            return Err(": No such file or directory".to_owned().into());
        }
        if let Some(device) = Device::named(expander.cwd, name) {
            return Ok((name.clone(), Target::Device(device)));
        }
        let path = GuestPath::resolve(expander.cwd, name)
            .map_err(|e| format!("{name}: {}", e.reason()))?;
        Ok((name.clone(), Target::File(path)))
    }
}

/// Points `fd` at `sink`, which is a copy of the stream `copy_of` (if any), keeping track of
/// whether stdout and stderr now lead to the same place.
fn set(fds: &mut Fds, fd: Fd, sink: Sink, copy_of: Option<Fd>) {
    fds.merged = match copy_of {
        Some(other) if other != fd => true,
        Some(_) => fds.merged,
        None => false,
    };
    match fd {
        Fd::Stdout => fds.stdout = sink,
        Fd::Stderr => fds.stderr = sink,
    }
}

/// A second handle on the stream `fd` points to.
fn duplicate(fds: &Fds, fd: Fd) -> Result<Sink, String> {
    match fd {
        Fd::Stdout => fds.stdout.try_clone(),
        Fd::Stderr => fds.stderr.try_clone(),
    }
    .map_err(|e| format!("redirection error: cannot duplicate fd: {}", strerror(&e)))
}

/// What a redirect names: one of the shell's devices, or a file in the workspace.
enum Target {
    Device(Device),
    File(GuestPath),
}

/// The device files the shell provides itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Device {
    Null,
    Stdin,
    Stdout,
    Stderr,
}

impl Device {
    /// The device `name` names from `cwd` (`/dev/null`, or `null` in `/dev`), whatever the
    /// workspace's mount: the devices are the shell's, not the workspace's.
    fn named(cwd: &GuestPath, name: &str) -> Option<Self> {
        match lexical(cwd, name).as_str() {
            "/dev/null" => Some(Self::Null),
            "/dev/stdin" => Some(Self::Stdin),
            "/dev/stdout" => Some(Self::Stdout),
            "/dev/stderr" => Some(Self::Stderr),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Null => "/dev/null",
            Self::Stdin => "stdin",
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

/// Puts back the variables a temporary assignment changed, last first.
fn restore(state: &mut State, saved: Vec<(&str, super::vars::Saved)>) {
    for (name, old) in saved.into_iter().rev() {
        state.vars.restore(name, old);
    }
}

/// `set -x`: the command as it runs, on its stderr (`+ A=1 echo 'a b'`).
fn trace(command: &Command, argv: &[String], state: &State, fds: &mut Fds) {
    if !state.options.xtrace {
        return;
    }
    let mut line = String::from("+");
    for a in &command.assignments {
        let value = state.vars.get(&a.name).unwrap_or_default();
        line.push_str(&format!(" {}={}", a.name, super::options::quote(value)));
    }
    for word in argv {
        line.push(' ');
        line.push_str(&super::options::quote(word));
    }
    line.push('\n');
    let _ignored = std::io::Write::write_all(&mut fds.stderr, line.as_bytes());
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

/// Runs an arithmetic command's expression with the shell's variables; `None` after an error
/// (printed as bash does: `((: 1/0: division by 0`).
fn arithmetic(text: &str, state: &mut State, io: &Io) -> Option<i64> {
    match super::arith::execute(text, &mut state.vars, state.status) {
        Ok(value) => Some(value),
        Err(message) => {
            io.diagnose(&format!("((: {message}"));
            None
        }
    }
}

/// What a failed expansion does (see [`Failed::flow`]).
fn expansion_failed(e: &ExpandError) -> Flow {
    e.fatal_status().map_or(Flow::Status(1), Flow::Exit)
}

/// `break N` reaching a loop: it ends, and N - 1 more loops around it; a loop left by `break`
/// has the status of `break` (0, or 1 for an out-of-range count).
fn leave(n: u32, status: i32) -> Flow {
    if n > 1 {
        Flow::Break(n - 1, status)
    } else {
        Flow::Status(status)
    }
}
