//! One simple command: its words expanded, its redirects and assignments applied, then a
//! built-in, `command`, or an external command line.

use super::launch::Launch;
use super::{Failed, Interpreter, expansion_failed};
use crate::shell::builtins::Builtin;
use crate::shell::options::quote;
use crate::shell::plan::{Command, Word};
use crate::shell::state::{Flow, State};
use crate::shell::stream::Fds;
use crate::shell::vars::{MAX_VARIABLE_BYTES, Saved};

impl Interpreter<'_> {
    /// Runs one simple command: expansion, redirects, assignments, then a built-in or an
    /// external command.
    pub(super) fn command(&self, command: &Command, state: &mut State, mut fds: Fds) -> Flow {
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
                MAX_VARIABLE_BYTES
            ))
        })
    }
}

/// Puts back the variables a temporary assignment changed, last first.
fn restore(state: &mut State, saved: Vec<(&str, Saved)>) {
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
        line.push_str(&format!(" {}={}", a.name, quote(value)));
    }
    for word in argv {
        line.push(' ');
        line.push_str(&quote(word));
    }
    line.push('\n');
    let _ignored = std::io::Write::write_all(&mut fds.stderr, line.as_bytes());
}
