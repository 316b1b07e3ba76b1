//! `env`: print the environment, or a modified copy of it. This project's own code: uutils'
//! `env` does not build for WASI (it needs to execute programs and handle signals).
//!
//! `env [-i|-] [-0] [-u NAME]... [NAME=VALUE]...` prints the resulting environment as `NAME=VALUE`
//! lines (NUL-terminated with `-0`), in the order the process received it, a changed variable
//! keeping its place and a new one going last, as GNU does. A WASI guest cannot start another
//! program, so `env ... COMMAND [ARG]...` prints
//! `env: cannot run 'COMMAND': running other commands is not supported in this environment (the
//! agent's shell runs `env ... COMMAND` itself)` and exits 126: the agent's shell
//! (crates/agent-wasi/src/shell/env_command.rs) intercepts `env` with a command, so this is seen
//! only when the module is run directly (`agent exec -- env A=1 cmd`). Invalid options exit 125,
//! as in GNU env.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};

use crate::util::{self, HasArg, Item, LongOpt, long};

/// The exit status when the command cannot be run.
pub const EXIT_CANNOT_RUN: i32 = 126;
/// The exit status for env's own failures (bad option, bad name).
pub const EXIT_FAILURE: i32 = 125;

const LONGS: &[LongOpt] = &[
    long("ignore-environment", HasArg::No, "i"),
    long("null", HasArg::No, "0"),
    long("unset", HasArg::Required, "u"),
    long("chdir", HasArg::Required, "C"),
    long("debug", HasArg::No, "v"),
    long("help", HasArg::No, "help"),
    long("version", HasArg::No, "version"),
];

/// Entry point: `args[0]` is the program name.
pub fn main(args: Vec<OsString>) -> i32 {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let status = run(
        &args[1.min(args.len())..],
        vars,
        &mut out,
        &mut io::stderr(),
    );
    match out.flush() {
        Ok(()) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let _ = writeln!(io::stderr(), "env: write error: {}", util::io_msg(&e));
            EXIT_FAILURE
        }
    }
}

/// Runs env over the given starting environment. Returns the exit status.
pub fn run(
    args: &[OsString],
    mut vars: Vec<(OsString, OsString)>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    // GNU env stops option parsing at the first operand (a `NAME=VALUE` or the command).
    let items = match util::getopt(args, "i0u:C:v", LONGS, false) {
        Ok(i) => i,
        Err(m) => {
            let _ = writeln!(err, "env: {m}\nTry 'env --help' for more information.");
            return EXIT_FAILURE;
        }
    };
    let mut nul = false;
    let mut operands = Vec::new();
    for item in items {
        match item {
            Item::Operand(o) => operands.push(o),
            Item::Opt { key, val, .. } => match key {
                "i" => vars.clear(),
                "0" => nul = true,
                "u" => {
                    let name = val.unwrap_or_default();
                    let nb = util::os_bytes(&name);
                    if nb.is_empty() || nb.contains(&b'=') {
                        let _ = writeln!(
                            err,
                            "env: cannot unset '{}': Invalid argument",
                            name.to_string_lossy()
                        );
                        return EXIT_FAILURE;
                    }
                    vars.retain(|(k, _)| *k != name);
                }
                "C" => {
                    let dir = val.unwrap_or_default();
                    if let Err(e) = std::env::set_current_dir(&dir) {
                        let _ = writeln!(
                            err,
                            "env: cannot change directory to '{}': {}",
                            dir.to_string_lossy(),
                            util::io_msg(&e)
                        );
                        return EXIT_FAILURE;
                    }
                }
                "help" => {
                    let _ = writeln!(
                        out,
                        "Usage: env [OPTION]... [-] [NAME=VALUE]... [COMMAND [ARG]...]\n\
                         Set each NAME to VALUE in the environment and print it.\n\n\
                         \x20 -i, --ignore-environment  start with an empty environment\n\
                         \x20 -0, --null           end each output line with NUL, not newline\n\
                         \x20 -u, --unset=NAME     remove variable from the environment\n\n\
                         Running COMMAND is not supported in this environment."
                    );
                    return 0;
                }
                "version" => {
                    let _ = writeln!(out, "env (guest-coreutils) {}", env!("CARGO_PKG_VERSION"));
                    return 0;
                }
                _ => {}
            },
        }
    }
    let mut rest = operands.into_iter().peekable();
    // A lone `-` first means `-i`.
    if rest.peek().is_some_and(|o| o == "-") {
        vars.clear();
        rest.next();
    }
    for op in rest.by_ref() {
        let b = util::os_bytes(&op);
        let Some(eq) = b.iter().position(|&c| c == b'=').filter(|&p| p > 0) else {
            let _ = writeln!(
                err,
                "env: cannot run '{}': running other commands is not supported in this environment (the agent's shell runs `env ... COMMAND` itself)",
                op.to_string_lossy()
            );
            return EXIT_CANNOT_RUN;
        };
        let name = util::bytes_os(b[..eq].to_vec());
        let value = util::bytes_os(b[eq + 1..].to_vec());
        match vars.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = value,
            None => vars.push((name, value)),
        }
    }
    let end: &[u8] = if nul { b"\0" } else { b"\n" };
    for (k, v) in &vars {
        let line = [util::os_bytes(k), b"=", util::os_bytes(v), end].concat();
        if out.write_all(&line).is_err() {
            return EXIT_FAILURE;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(args: &[&str], vars: &[(&str, &str)]) -> (String, i32) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let vars = vars.iter().map(|(k, v)| (k.into(), v.into())).collect();
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = run(&args, vars, &mut out, &mut err);
        (String::from_utf8_lossy(&out).into_owned(), code)
    }

    #[test]
    fn prints_and_modifies() {
        let base = [("A", "1"), ("B", "2")];
        assert_eq!(env(&[], &base), ("A=1\nB=2\n".into(), 0));
        assert_eq!(env(&["-i"], &base), (String::new(), 0));
        assert_eq!(env(&["-"], &base), (String::new(), 0));
        assert_eq!(env(&["-u", "A"], &base), ("B=2\n".into(), 0));
        assert_eq!(env(&["A=9", "C=3"], &base), ("A=9\nB=2\nC=3\n".into(), 0));
        assert_eq!(env(&["-i", "X=1", "Y="], &base), ("X=1\nY=\n".into(), 0));
        assert_eq!(env(&["-0", "-i", "X=1"], &base), ("X=1\0".into(), 0));
    }

    #[test]
    fn commands_and_errors() {
        assert_eq!(env(&["true"], &[]).1, EXIT_CANNOT_RUN);
        assert_eq!(
            env(&["-i", "A=1", "ls", "-l"], &[]),
            (String::new(), EXIT_CANNOT_RUN)
        );
        assert_eq!(env(&["-u", "A=B"], &[]).1, EXIT_FAILURE);
        assert_eq!(env(&["-k"], &[]).1, EXIT_FAILURE);
        // Options end at the first operand: `-u` here is the command.
        assert_eq!(env(&["A=1", "-u", "A"], &[]).1, EXIT_CANNOT_RUN);
    }
}
