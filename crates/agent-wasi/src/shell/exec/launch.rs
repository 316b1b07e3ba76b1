//! How the shell starts an external command line: a module from the bundles through the
//! [`StageRunner`], or one of the commands that start other commands, which a WASI guest cannot
//! do and the shell therefore runs itself: `xargs` (`xargs.rs`), `env` with a command
//! (`env_command.rs`), `timeout` (`timeout.rs`) and `find ... -exec` (`find_exec.rs`). They
//! nest (`timeout 5 env A=1 xargs ..`), and every command line they start is a verified module
//! with its limits and audit record, exactly like one the script names.

use std::io::Write;
use std::time::{Duration, Instant};

use super::Interpreter;
use crate::shell::env_command::{self, EnvCall, EnvRun};
use crate::shell::find_exec::{self, FindCall, FindExec};
use crate::shell::stage::Stage;
use crate::shell::state::{CANCELLED_STATUS, State};
use crate::shell::stream::{Capture, Fds, SharedInput, Sink, Source};
use crate::shell::timeout::{self, TimeoutRun};
use crate::shell::workspace::{GuestPath, strerror};
use crate::shell::xargs::{Io as XargsIo, Ran, xargs};

/// The most paths `find ... -exec` collects (NUL-separated bytes).
const FIND_OUTPUT_LIMIT: usize = 64 << 20;

/// The status of a command line the script may not start (bash's "cannot execute").
const EXIT_NOT_STARTED: i32 = 126;

/// The commands the shell runs itself, whatever the bundles provide.
const OWN: [&str; 3] = ["xargs", "env", "timeout"];

/// Where an external command line runs.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    /// The working directory.
    pub cwd: GuestPath,
    /// The environment, sorted by name.
    pub env: Vec<(String, String)>,
    /// When an enclosing `timeout` runs out.
    pub deadline: Option<Instant>,
}

impl Launch {
    /// A command the script names: the shell's directory and exported variables.
    pub fn of(state: &State) -> Self {
        Self {
            cwd: state.cwd.clone(),
            env: state.vars.env(),
            deadline: None,
        }
    }
}

/// Writes `lines` on `sink`; a failure to write is ignored (the status says what happened).
fn say(sink: &mut impl Write, lines: &[String]) {
    for line in lines {
        let _ignored = writeln!(sink, "{line}");
    }
}

impl Interpreter<'_> {
    /// Whether `name` is a command the shell can start: one of its own or one a bundle
    /// provides.
    pub(super) fn is_command(&self, name: &str) -> bool {
        OWN.contains(&name) || (!name.is_empty() && self.runner.has_command(name))
    }

    /// Runs `argv`, whose name [`Self::is_command`] accepted, to its end; its exit status.
    pub(super) fn launch(&self, argv: Vec<String>, launch: &Launch, mut fds: Fds) -> i32 {
        if let Some(name) = argv.first()
            && !self.may_start(name)
        {
            let why = self
                .held
                .refusal
                .unwrap_or("it is not among the programs this script may start");
            fds.diagnose(&format!("{name}: not started: {why}"));
            return EXIT_NOT_STARTED;
        }
        match argv.first().map(String::as_str) {
            Some("xargs") => self.xargs(&argv[1..], launch, &mut fds),
            Some("timeout") => match timeout::parse(&argv[1..]) {
                Ok(run) => self.timeout(&run, launch, fds),
                Err(lines) => {
                    say(&mut fds.stderr, &lines);
                    timeout::EXIT_FAILURE
                }
            },
            Some("find") => match find_exec::parse(&argv[1..]) {
                FindCall::Exec(call) => self.find_exec(&call, launch, fds),
                FindCall::Fail(message) => {
                    say(&mut fds.stderr, &[message]);
                    1
                }
                FindCall::Bundle => self.stage(argv, launch, fds),
            },
            Some("env") => match env_command::parse(&argv[1..]) {
                EnvCall::Run(run) => self.env(&run, launch, fds),
                EnvCall::Fail(lines, status) => {
                    say(&mut fds.stderr, &lines);
                    status
                }
                EnvCall::Bundle => self.stage(argv, launch, fds),
            },
            _ => self.stage(argv, launch, fds),
        }
    }

    /// Whether the script may start `name` (its basename is among the programs it is held
    /// to, when it is held to some).
    fn may_start(&self, name: &str) -> bool {
        let Some(programs) = self.held.programs else {
            return true;
        };
        let base = name.rsplit('/').next().unwrap_or(name);
        programs.iter().any(|p| p == base)
    }

    /// Runs a module from the bundles.
    fn stage(&self, argv: Vec<String>, launch: &Launch, mut fds: Fds) -> i32 {
        let name = argv.first().map(String::as_str).unwrap_or_default();
        if name.is_empty() || !self.runner.has_command(name) {
            // Only `env` (printing) gets here unchecked, when no bundle has it.
            fds.diagnose(&format!("{name}: command not found"));
            return 127;
        }
        let wall_time = match launch.deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    // The enclosing `timeout` ran out between two commands: stopped at once.
                    return timeout::EXIT_TIMED_OUT;
                }
                Some(left)
            }
            None => None,
        };
        tracing::debug!(command = %name, args = argv.len() - 1, cwd = %launch.cwd.guest(), "shell: running a stage");
        self.runner.run_stage(Stage {
            stderr_is_stdout: fds.merged,
            mount: launch.cwd.mount().path(),
            cwd: launch.cwd.guest(),
            env: launch.env.clone(),
            argv,
            stdin: fds.stdin.into_reader(),
            stdout: fds.stdout.into_writer(),
            stderr: fds.stderr.into_writer(),
            wall_time,
            read_only: self.held.read_only,
            network: !self.held.offline,
        })
    }

    /// `env ... COMMAND`: the command in the changed environment and directory.
    fn env(&self, run: &EnvRun, launch: &Launch, mut fds: Fds) -> i32 {
        let (env, trace) = run.environment(&launch.env);
        if run.debug {
            say(&mut fds.stderr, &trace);
        }
        let mut inner = Launch {
            env,
            ..launch.clone()
        };
        if let Some(dir) = &run.chdir {
            let failed =
                |reason: String| format!("env: cannot change directory to '{dir}': {reason}");
            let target = match GuestPath::resolve(&launch.cwd, dir) {
                Ok(path) => match self.ws.is_dir(&path) {
                    Ok(true) => Ok(path),
                    Ok(false) => Err(failed("Not a directory".to_owned())),
                    Err(e) => Err(failed(strerror(&e))),
                },
                Err(e) => Err(failed(e.reason().to_owned())),
            };
            match target {
                Ok(path) => inner.cwd = path,
                Err(message) => {
                    say(&mut fds.stderr, &[message]);
                    return env_command::EXIT_FAILURE;
                }
            }
            if run.debug {
                say(&mut fds.stderr, &[format!("chdir:    '{dir}'")]);
            }
        }
        if run.debug {
            say(&mut fds.stderr, &run.executing());
        }
        let name = &run.argv[0];
        if !self.is_command(name) {
            say(
                &mut fds.stderr,
                &[format!("env: '{name}': No such file or directory")],
            );
            return 127;
        }
        self.launch(run.argv.clone(), &inner, fds)
    }

    /// `timeout DURATION COMMAND`: the command with a deadline.
    fn timeout(&self, run: &TimeoutRun, launch: &Launch, mut fds: Fds) -> i32 {
        let name = &run.argv[0];
        if !self.is_command(name) {
            say(
                &mut fds.stderr,
                &[format!(
                    "timeout: failed to run command '{name}': No such file or directory"
                )],
            );
            return 127;
        }
        let started = Instant::now();
        let cap = run.duration.map(|d| started + d);
        let deadline = match (launch.deadline, cap) {
            (Some(outer), Some(own)) => Some(outer.min(own)),
            (outer, own) => outer.or(own),
        };
        let inner = Launch {
            deadline,
            ..launch.clone()
        };
        let mut stderr = fds.stderr.try_clone().ok();
        let status = self.launch(run.argv.clone(), &inner, fds);
        // Whatever ran as long as the cap was stopped by it (a command ending by itself at
        // that very moment is indistinguishable, as with GNU's timer). The status may be a
        // nested command's (`timeout 1 xargs sleep`: xargs' 123), as GNU's is timeout's.
        let timed_out = run
            .duration
            .is_some_and(|d| started.elapsed() >= d.saturating_sub(Duration::from_millis(1)));
        if timed_out
            && run.verbose
            && let Some(err) = stderr.as_mut()
        {
            say(
                err,
                &[format!(
                    "timeout: sending signal {} to command '{name}'",
                    run.signal_name()
                )],
            );
        }
        run.status(status, timed_out)
    }

    /// `find ... -exec` (see `find_exec.rs`): the bundle's `find` lists the files, then each
    /// command line runs as the script would run it.
    fn find_exec(&self, call: &FindExec, launch: &Launch, mut fds: Fds) -> i32 {
        let found = Capture::new(FIND_OUTPUT_LIMIT);
        let Ok(stderr) = fds.stderr.try_clone() else {
            return 1;
        };
        let mut argv = vec!["find".to_owned()];
        argv.extend(call.find_args.iter().cloned());
        let listing = Fds {
            stdin: Source::Empty,
            stdout: Sink::Capture(std::sync::Arc::clone(&found)),
            stderr,
            merged: false,
        };
        let mut status = i32::from(self.stage(argv, launch, listing) != 0);
        let (bytes, truncated) = found.take();
        if truncated {
            say(
                &mut fds.stderr,
                &[format!(
                    "find: more than {} MiB of paths for -exec; narrow the search or use find ... -print0 | xargs -0",
                    FIND_OUTPUT_LIMIT >> 20
                )],
            );
            return 1;
        }
        let paths: Vec<(String, String)> = bytes
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| find_exec::placement(&String::from_utf8_lossy(p), call.in_dir))
            .collect();
        let input = match std::mem::replace(&mut fds.stdin, Source::Empty) {
            Source::Empty => None,
            Source::Script(shared) => Some(shared),
            other => Some(SharedInput::from_reader(other.into_reader())),
        };
        let name = call.command[0].clone();
        let lines: Vec<(&str, Vec<String>)> = if call.batch {
            call.batches(&paths)
                .into_iter()
                .map(|batch| {
                    let names: Vec<String> = batch.iter().map(|(_, arg)| arg.clone()).collect();
                    (batch[0].0.as_str(), call.many(&names))
                })
                .collect()
        } else {
            paths
                .iter()
                .map(|(dir, arg)| (dir.as_str(), call.one(arg)))
                .collect()
        };
        for (dir, line) in lines {
            if self.cancelled() {
                return CANCELLED_STATUS;
            }
            if !self.is_command(&name) {
                say(
                    &mut fds.stderr,
                    &[format!("find: '{name}': No such file or directory")],
                );
                // As any failure: it counts only for `{} +` (GNU findutils 4.9).
                if call.batch {
                    status = 1;
                }
                continue;
            }
            let mut place = launch.clone();
            if call.in_dir {
                match GuestPath::resolve(&launch.cwd, dir) {
                    Ok(path) => place.cwd = path,
                    Err(e) => {
                        say(&mut fds.stderr, &[format!("find: '{dir}': {}", e.reason())]);
                        status = 1;
                        continue;
                    }
                }
            }
            let (Ok(stdout), Ok(stderr)) = (fds.stdout.try_clone(), fds.stderr.try_clone()) else {
                return 1;
            };
            let command = Fds {
                stdin: input
                    .as_ref()
                    .map_or(Source::Empty, |s| Source::Script(s.clone())),
                stdout,
                stderr,
                merged: fds.merged,
            };
            let code = self.launch(line, &place, command);
            if call.batch && code != 0 {
                status = 1;
            }
        }
        status
    }

    /// `xargs ARGS...` (see `xargs.rs`): each command line it builds runs as an external
    /// command of the script, with an empty stdin and the command's stdout and stderr.
    fn xargs(&self, args: &[String], launch: &Launch, fds: &mut Fds) -> i32 {
        let mut diagnostics = match fds.stderr.try_clone() {
            Ok(sink) => sink,
            Err(e) => {
                fds.diagnose(&format!("xargs: cannot duplicate stderr: {}", strerror(&e)));
                return 1;
            }
        };
        let (stdout, stderr, merged) = (&fds.stdout, &fds.stderr, fds.merged);
        let cwd = &launch.cwd;
        let open = |path: &str| -> Result<Box<dyn std::io::Read + '_>, String> {
            let resolved = GuestPath::resolve(cwd, path)
                .map_err(|e| format!("Cannot open input file '{path}': {}", e.reason()))?;
            self.ws
                .open_read(&resolved)
                .map(|f| Box::new(f) as Box<dyn std::io::Read>)
                .map_err(|e| format!("Cannot open input file '{path}': {}", strerror(&e)))
        };
        let mut run = |argv: Vec<String>| -> Ran {
            let name = argv.first().map(String::as_str).unwrap_or_default();
            if !self.is_command(name) {
                return Ran::NotFound;
            }
            let (Ok(stdout), Ok(stderr)) = (stdout.try_clone(), stderr.try_clone()) else {
                return Ran::Status(126);
            };
            tracing::debug!(command = %name, args = argv.len() - 1, "shell: xargs runs a command line");
            let fds = Fds {
                stdin: Source::Empty,
                stdout,
                stderr,
                merged,
            };
            Ran::Status(self.launch(argv, launch, fds))
        };
        xargs(
            args,
            XargsIo {
                input: &mut fds.stdin,
                stderr: &mut diagnostics,
                open: &open,
                run: &mut run,
                cancelled: &|| self.cancelled(),
            },
        )
    }
}
