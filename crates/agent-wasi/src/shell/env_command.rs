//! `env [OPTION]... [-] [NAME=VALUE]... COMMAND [ARG]...`, run by the shell itself: a WASI
//! guest cannot start another program, so when `env` is given a command the shell changes the
//! environment (and directory) as GNU env would and runs the command as it runs any other
//! (a verified module, or one of the commands the shell runs itself). Without a command, `env`
//! is the bundle's, which prints the environment.
//!
//! GNU coreutils' options: `-i` / `--ignore-environment` (and a lone `-`), `-u NAME` /
//! `--unset`, `-C DIR` / `--chdir`, `-v` / `--debug` (its trace on stderr), `-0` / `--null`
//! (refused with a command, as GNU does); the signal options (`--default-signal`,
//! `--ignore-signal`, `--block-signal`, `--list-signal-handling`) are accepted and do nothing:
//! no signals reach a command here. `-S` / `--split-string`, `-a` / `--argv0` and
//! `--env0-from` are refused. Options are read with agent-core's table of GNU env
//! ([`agent_core::programs::wrappers::ENV`]), the one the permission checker reads. Exit status: the
//! command's, 125 when env itself fails, 126 when the command cannot run, 127 when it is not
//! found.

use agent_core::programs::getopt_long::Options;
use agent_core::programs::wrappers::ENV;

/// env's own failures (a bad option, a bad name, a bad directory).
pub(crate) const EXIT_FAILURE: i32 = 125;

/// env's options: GNU coreutils' table, the one the permission checker reads env with.
const SPEC: Options = ENV.options;

/// What `env ARGS...` asks of the shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EnvCall {
    /// No command (or `--help` / `--version`): the bundle's `env` runs with these arguments.
    Bundle,
    /// Run a command in a changed environment.
    Run(EnvRun),
    /// env fails before running anything: the lines for stderr, and the status.
    Fail(Vec<String>, i32),
}

/// One change to the environment, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Change {
    Clear,
    Unset(String),
    Set(String, String),
}

/// A command to run in a changed environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EnvRun {
    changes: Vec<Change>,
    /// `-C DIR`, as given.
    pub chdir: Option<String>,
    /// `-v`: trace on stderr.
    pub debug: bool,
    /// The command and its arguments (never empty).
    pub argv: Vec<String>,
}

/// Parses `env`'s arguments (without `env` itself).
pub(crate) fn parse(args: &[String]) -> EnvCall {
    let mut changes = Vec::new();
    let mut chdir = None;
    let mut debug = false;
    let mut null = false;
    let mut bundle = false;
    let parsed = SPEC.parse_with(args, |name, value| {
        match name {
            "ignore-environment" => changes.push(Change::Clear),
            "unset" => {
                let name = value.unwrap_or_default();
                if name.is_empty() || name.contains('=') {
                    return Err(vec![format!(
                        "env: cannot unset '{name}': Invalid argument"
                    )]);
                }
                changes.push(Change::Unset(name));
            }
            "chdir" => chdir = value,
            "debug" => debug = true,
            "null" => null = true,
            "help" | "version" => bundle = true,
            "split-string" => {
                return Err(vec![
                    "env: -S (--split-string) is not supported by the agent's shell; write the command's words directly".to_owned(),
                ]);
            }
            "argv0" | "env0-from" => {
                return Err(vec![format!(
                    "env: --{name} is not supported by the agent's shell"
                )]);
            }
            // No signals reach a command here: nothing to change or list.
            _ => {}
        }
        Ok(())
    });
    let mut at = match parsed {
        Ok(at) => at,
        Err(lines) => return EnvCall::Fail(lines, EXIT_FAILURE),
    };
    if bundle {
        return EnvCall::Bundle;
    }
    if args.get(at).is_some_and(|a| a == "-") {
        changes.push(Change::Clear);
        at += 1;
    }
    while let Some((name, value)) = args.get(at).and_then(|a| a.split_once('=')) {
        // GNU sets a variable with an empty name without complaint; no program can read it.
        if !name.is_empty() {
            changes.push(Change::Set(name.to_owned(), value.to_owned()));
        }
        at += 1;
    }
    let argv = args[at.min(args.len())..].to_vec();
    if argv.is_empty() {
        if chdir.is_some() {
            return EnvCall::Fail(
                SPEC.usage("env: must specify command with --chdir (-C)".to_owned()),
                EXIT_FAILURE,
            );
        }
        return EnvCall::Bundle;
    }
    if null {
        return EnvCall::Fail(
            SPEC.usage("env: cannot specify --null (-0) with command".to_owned()),
            EXIT_FAILURE,
        );
    }
    EnvCall::Run(EnvRun {
        changes,
        chdir,
        debug,
        argv,
    })
}

impl EnvRun {
    /// The command's environment from `env` (the one env was given), sorted by name; with the
    /// `-v` trace lines for the changes.
    pub fn environment(&self, env: &[(String, String)]) -> (Vec<(String, String)>, Vec<String>) {
        let mut env = env.to_vec();
        let mut trace = Vec::new();
        for change in &self.changes {
            match change {
                Change::Clear => {
                    env.clear();
                    trace.push("cleaning environ".to_owned());
                }
                Change::Unset(name) => {
                    env.retain(|(n, _)| n != name);
                    trace.push(format!("unset:    {name}"));
                }
                Change::Set(name, value) => {
                    env.retain(|(n, _)| n != name);
                    env.push((name.clone(), value.clone()));
                    trace.push(format!("setenv:   {name}={value}"));
                }
            }
        }
        env.sort();
        (env, trace)
    }

    /// The `-v` trace of the command about to run.
    pub fn executing(&self) -> Vec<String> {
        let mut lines = vec![format!("executing: {}", self.argv[0])];
        lines.extend(
            self.argv
                .iter()
                .enumerate()
                .map(|(i, a)| format!("   arg[{i}]= '{a}'")),
        );
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str]) -> EnvCall {
        parse(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    fn run(args: &[&str]) -> EnvRun {
        match call(args) {
            EnvCall::Run(run) => run,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn without_a_command_the_bundle_prints() {
        assert_eq!(call(&[]), EnvCall::Bundle);
        assert_eq!(call(&["-i", "A=1"]), EnvCall::Bundle);
        assert_eq!(call(&["-0", "-u", "X"]), EnvCall::Bundle);
        assert_eq!(call(&["--help", "x"]), EnvCall::Bundle);
    }

    #[test]
    fn the_environment_changes_in_order() {
        let base = vars(&[("A", "1"), ("B", "2"), ("PWD", "/")]);
        let r = run(&["-u", "B", "C=3", "A=x", "cmd", "D=4"]);
        assert_eq!(r.argv, ["cmd", "D=4"]);
        let (env, trace) = r.environment(&base);
        assert_eq!(env, vars(&[("A", "x"), ("C", "3"), ("PWD", "/")]));
        assert_eq!(trace, ["unset:    B", "setenv:   C=3", "setenv:   A=x"]);
        let (env, _) = run(&["-i", "A=2", "cmd"]).environment(&base);
        assert_eq!(env, vars(&[("A", "2")]));
        let (env, _) = run(&["-", "cmd"]).environment(&base);
        assert!(env.is_empty());
        let r = run(&["A=1", "-i", "cmd"]);
        assert_eq!(r.argv, ["-i", "cmd"], "-i after an operand is the command");
        assert_eq!(r.environment(&base).0.len(), 3);
    }

    #[test]
    fn options_and_their_errors() {
        let r = run(&["-v", "-C", "sub", "--", "ls", "-l"]);
        assert_eq!((r.debug, r.chdir.as_deref()), (true, Some("sub")));
        assert_eq!(
            r.executing(),
            ["executing: ls", "   arg[0]= 'ls'", "   arg[1]= '-l'"]
        );
        let fail = |args: &[&str]| match call(args) {
            EnvCall::Fail(lines, status) => (lines[0].clone(), status),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            fail(&["-u", "a=b", "true"]),
            ("env: cannot unset 'a=b': Invalid argument".to_owned(), 125)
        );
        assert_eq!(
            fail(&["-0", "true"]).0,
            "env: cannot specify --null (-0) with command"
        );
        assert_eq!(
            fail(&["-C", "x"]).0,
            "env: must specify command with --chdir (-C)"
        );
        assert_eq!(fail(&["-u"]).0, "env: option requires an argument -- 'u'");
        assert!(fail(&["-S", "echo a", "x"]).0.contains("not supported"));
        assert!(fail(&["-a", "name", "true"]).0.contains("not supported"));
        assert!(fail(&["--env0-from=f", "true"]).0.contains("not supported"));
        assert_eq!(
            fail(&["--i", "true"]).0,
            "env: option '--i' is ambiguous; possibilities: '--ignore-environment' '--ignore-signal'"
        );
        // Abbreviations, as GNU reads them (and the permission checker).
        assert_eq!(run(&["--u", "X", "rm", "x"]).argv, ["rm", "x"]);
        assert_eq!(run(&["--ch=sub", "ls"]).chdir.as_deref(), Some("sub"));
        assert!(matches!(
            call(&["--default-signal", "true"]),
            EnvCall::Run(_)
        ));
    }
}
