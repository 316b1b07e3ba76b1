//! The built-in commands: `cd`, `export`, `unset`, `exit`, `true`, `false`, `:`, `echo`, `pwd`,
//! `break`, `continue`, `read` (`read.rs`) and `set` (`options.rs`).
//! Each behaves as bash's does for the options listed in `docs/shell.md`, with bash's messages
//! and exit statuses.

use std::io::Write;

use super::state::{Flow, State};
use super::stream::Fds;
use super::vars::is_name;
use super::workspace::{GuestPath, Workspace, strerror};

/// A built-in command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    Cd,
    Export,
    Unset,
    Exit,
    True,
    False,
    Colon,
    Echo,
    Pwd,
    Break,
    Continue,
    Read,
    Set,
}

impl Builtin {
    /// The built-in called `name`, if there is one.
    pub fn lookup(name: &str) -> Option<Self> {
        Some(match name {
            "cd" => Self::Cd,
            "export" => Self::Export,
            "unset" => Self::Unset,
            "exit" => Self::Exit,
            "true" => Self::True,
            "false" => Self::False,
            ":" => Self::Colon,
            "echo" => Self::Echo,
            "pwd" => Self::Pwd,
            "break" => Self::Break,
            "continue" => Self::Continue,
            "read" => Self::Read,
            "set" => Self::Set,
            _ => return None,
        })
    }

    /// Runs the built-in with `args` (its name excluded).
    pub fn run(self, args: &[String], state: &mut State, fds: &mut Fds, ws: &Workspace) -> Flow {
        match self {
            Self::Cd => written(cd(args, state, fds, ws)),
            Self::Export => written(export(args, state, fds)),
            Self::Unset => Flow::Status(unset(args, state, fds)),
            Self::Exit => exit(args, state, fds),
            Self::True | Self::Colon => Flow::Status(0),
            Self::False => Flow::Status(1),
            Self::Echo => written(echo(args, fds)),
            Self::Pwd => written(pwd(args, state, fds)),
            Self::Break => loop_control("break", args, state, fds),
            Self::Continue => loop_control("continue", args, state, fds),
            Self::Read => Flow::Status(super::read::read(args, state, fds)),
            Self::Set => Flow::Status(super::options::set(
                args,
                &state.vars,
                &mut state.options,
                fds,
            )),
        }
    }
}

/// The status of a shell killed by SIGPIPE (128 + 13).
pub(crate) const SIGPIPE_STATUS: i32 = 141;

/// A writing built-in's status as a flow: [`SIGPIPE_STATUS`] (its reader is gone) ends the
/// shell running it, as SIGPIPE ends bash's subshell, so `while :; do echo y; done | head -1`
/// ends when `head` does; any other status goes on.
fn written(status: i32) -> Flow {
    if status == SIGPIPE_STATUS {
        Flow::Exit(SIGPIPE_STATUS)
    } else {
        Flow::Status(status)
    }
}

/// Writes `bytes` to stdout; a failure is reported as bash reports it and gives status 1, except
/// a reader that is gone: [`SIGPIPE_STATUS`], silently, as bash's SIGPIPE.
fn emit(name: &str, bytes: &[u8], fds: &mut Fds) -> i32 {
    match fds.stdout.write_all(bytes) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => SIGPIPE_STATUS,
        Err(e) => {
            fds.diagnose(&format!("{name}: write error: {}", strerror(&e)));
            1
        }
    }
}

/// `break [N]` / `continue [N]`, with bash's (5.2) answers to misuse: outside a loop a message
/// and status 0; `0` or less "loop count out of range", status 1, and the loop is left (as bash
/// does); a non-number ends the script with 128, two arguments with 1.
fn loop_control(name: &str, args: &[String], state: &State, fds: &mut Fds) -> Flow {
    let n = match args {
        [] => 1,
        [n] => match n.parse::<i64>() {
            Ok(n) if n >= 1 => u32::try_from(n).unwrap_or(u32::MAX),
            Ok(_) => {
                fds.diagnose(&format!("{name}: {n}: loop count out of range"));
                if state.loops == 0 {
                    return Flow::Status(1);
                }
                return Flow::Break(1, 1);
            }
            Err(_) => {
                fds.diagnose(&format!("{name}: {n}: numeric argument required"));
                return Flow::Exit(128);
            }
        },
        _ => {
            fds.diagnose(&format!("{name}: too many arguments"));
            return Flow::Exit(1);
        }
    };
    if state.loops == 0 {
        fds.diagnose(&format!(
            "{name}: only meaningful in a `for', `while', or `until' loop"
        ));
        return Flow::Status(0);
    }
    let n = n.min(state.loops);
    if name == "break" {
        Flow::Break(n, 0)
    } else {
        Flow::Continue(n)
    }
}

fn cd(args: &[String], state: &mut State, fds: &mut Fds, ws: &Workspace) -> i32 {
    let mut operands = args.iter().map(String::as_str).peekable();
    while let Some(&a) = operands.peek() {
        match a {
            "-L" | "-P" | "-e" | "-@" | "-LP" | "-PL" => {
                operands.next();
            }
            "--" => {
                operands.next();
                break;
            }
            _ => break,
        }
    }
    let operands: Vec<&str> = operands.collect();
    if operands.len() > 1 {
        fds.diagnose("cd: too many arguments");
        return 1;
    }
    let mut print = false;
    let target = match operands.first() {
        None => match state.vars.get("HOME") {
            Some(home) => home.to_owned(),
            None => {
                fds.diagnose("cd: HOME not set");
                return 1;
            }
        },
        Some(&"-") => match state.vars.get("OLDPWD") {
            Some(old) => {
                print = true;
                old.to_owned()
            }
            None => {
                fds.diagnose("cd: OLDPWD not set");
                return 1;
            }
        },
        Some(t) => (*t).to_owned(),
    };
    if target.is_empty() {
        return 0;
    }
    let path = match GuestPath::resolve(&state.cwd, &target) {
        Ok(path) => path,
        Err(e) => {
            fds.diagnose(&format!("cd: {target}: {}", e.reason()));
            return 1;
        }
    };
    match ws.is_dir(&path) {
        Ok(true) => {}
        Ok(false) => {
            fds.diagnose(&format!("cd: {target}: Not a directory"));
            return 1;
        }
        Err(e) => {
            fds.diagnose(&format!("cd: {target}: {}", strerror(&e)));
            return 1;
        }
    }
    let old = state.cwd.guest();
    let new = path.guest();
    // Both values are short guest paths; the variable table has room for them unless it is
    // full, in which case the variables keep their old values and the directory still changes.
    let _ignored = state.vars.set_exported("OLDPWD", old);
    let _ignored = state.vars.set("PWD", new.clone());
    state.cwd = path;
    if print {
        return emit("cd", format!("{new}\n").as_bytes(), fds);
    }
    0
}

fn export(args: &[String], state: &mut State, fds: &mut Fds) -> i32 {
    let mut unexport = false;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "--" => {
                rest = tail;
                break;
            }
            "-n" | "-np" | "-pn" => unexport = true,
            "-p" => {}
            opt if opt.starts_with('-') && opt.len() > 1 => {
                fds.diagnose(&format!("export: {opt}: invalid option"));
                fds.diagnose("export: usage: export [-fn] [name[=value] ...] or export -p");
                return 2;
            }
            _ => break,
        }
        rest = tail;
    }
    if rest.is_empty() {
        let mut out = String::new();
        for (name, value) in state.vars.exported() {
            match value {
                Some(v) => out.push_str(&format!("declare -x {name}=\"{}\"\n", escape(v))),
                None => out.push_str(&format!("declare -x {name}\n")),
            }
        }
        return emit("export", out.as_bytes(), fds);
    }
    let mut status = 0;
    for arg in rest {
        let (name, value, append) = match arg.split_once('=') {
            Some((name, value)) => match name.strip_suffix('+') {
                Some(name) => (name, Some(value), true),
                None => (name, Some(value), false),
            },
            None => (arg.as_str(), None, false),
        };
        if !is_name(name) {
            fds.diagnose(&format!("export: `{arg}': not a valid identifier"));
            status = 1;
            continue;
        }
        if let Some(value) = value {
            let value = if append {
                format!("{}{value}", state.vars.get(name).unwrap_or_default())
            } else {
                value.to_owned()
            };
            if state.vars.set(name, value).is_err() {
                fds.diagnose(&format!("export: {name}: the shell's variables are full"));
                status = 1;
                continue;
            }
        }
        if unexport {
            state.vars.unexport(name);
        } else {
            state.vars.export(name);
        }
    }
    status
}

/// Escapes a value for `declare -x NAME="..."`.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn unset(args: &[String], state: &mut State, fds: &mut Fds) -> i32 {
    let mut functions = false;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "--" => {
                rest = tail;
                break;
            }
            "-v" => functions = false,
            "-f" => functions = true,
            opt if opt.starts_with('-') && opt.len() > 1 => {
                fds.diagnose(&format!("unset: {opt}: invalid option"));
                fds.diagnose("unset: usage: unset [-f] [-v] [-n] [name ...]");
                return 2;
            }
            _ => break,
        }
        rest = tail;
    }
    if functions {
        // There are no functions to remove.
        return 0;
    }
    let mut status = 0;
    for name in rest {
        if is_name(name) {
            state.vars.unset(name);
        } else {
            fds.diagnose(&format!("unset: `{name}': not a valid identifier"));
            status = 1;
        }
    }
    status
}

fn exit(args: &[String], state: &State, fds: &mut Fds) -> Flow {
    let args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    };
    match args {
        [] => Flow::Exit(state.status),
        [n] => match n.trim().parse::<i64>() {
            Ok(code) => Flow::Exit(i32::try_from(code.rem_euclid(256)).unwrap_or(255)),
            Err(_) => {
                fds.diagnose(&format!("exit: {n}: numeric argument required"));
                Flow::Exit(2)
            }
        },
        _ => {
            // bash 5.2 complains and still exits, with 1.
            fds.diagnose("exit: too many arguments");
            Flow::Exit(1)
        }
    }
}

fn pwd(args: &[String], state: &State, fds: &mut Fds) -> i32 {
    for a in args {
        match a.as_str() {
            "-L" | "-P" | "-LP" | "-PL" => {}
            "--" => break,
            opt if opt.starts_with('-') && opt.len() > 1 => {
                fds.diagnose(&format!("pwd: {opt}: invalid option"));
                fds.diagnose("pwd: usage: pwd [-LP]");
                return 2;
            }
            _ => break,
        }
    }
    emit("pwd", format!("{}\n", state.cwd.guest()).as_bytes(), fds)
}

fn echo(args: &[String], fds: &mut Fds) -> i32 {
    let mut newline = true;
    let mut escapes = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(flags) = a.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.bytes().all(|b| matches!(b, b'n' | b'e' | b'E')) {
            break;
        }
        for b in flags.bytes() {
            match b {
                b'n' => newline = false,
                b'e' => escapes = true,
                _ => escapes = false,
            }
        }
        i += 1;
    }
    let mut out = Vec::new();
    for (k, a) in args[i..].iter().enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        if escapes {
            if echo_escapes(a, &mut out) {
                return emit("echo", &out, fds);
            }
        } else {
            out.extend_from_slice(a.as_bytes());
        }
    }
    if newline {
        out.push(b'\n');
    }
    emit("echo", &out, fds)
}

/// Appends `arg` with `echo -e` escapes decoded; true when `\c` ends the output.
fn echo_escapes(arg: &str, out: &mut Vec<u8>) -> bool {
    let b = arg.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let e = b[i + 1];
        i += 2;
        let simple = match e {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'e' | b'E' => Some(0x1b),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' => Some(b'\\'),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        match e {
            b'c' => return true,
            b'0' | b'x' => {
                let (radix, max) = if e == b'0' { (8, 3) } else { (16, 2) };
                let mut value = 0u32;
                let mut taken = 0;
                while taken < max
                    && let Some(d) = b.get(i).and_then(|c| char::from(*c).to_digit(radix))
                {
                    value = value * radix + d;
                    i += 1;
                    taken += 1;
                }
                if e == b'x' && taken == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(u8::try_from(value & 0xff).unwrap_or(0));
                }
            }
            b'u' | b'U' => {
                let max = if e == b'u' { 4 } else { 8 };
                let mut value = 0u32;
                let mut taken = 0;
                while taken < max
                    && let Some(d) = b.get(i).and_then(|c| char::from(*c).to_digit(16))
                {
                    value = value.saturating_mul(16).saturating_add(d);
                    i += 1;
                    taken += 1;
                }
                match char::from_u32(value).filter(|_| taken > 0) {
                    Some(c) => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    None => {
                        out.push(b'\\');
                        out.push(e);
                    }
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo_e(arg: &str) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let stop = echo_escapes(arg, &mut out);
        (out, stop)
    }

    #[test]
    fn echo_escapes_decode_like_bash() {
        assert_eq!(echo_e("a\\tb\\n"), (b"a\tb\n".to_vec(), false));
        assert_eq!(echo_e("\\0101\\x41\\x"), (b"AA\\x".to_vec(), false));
        assert_eq!(echo_e("a\\cb"), (b"a".to_vec(), true));
        assert_eq!(echo_e("\\q\\\\"), (b"\\q\\".to_vec(), false));
        assert_eq!(echo_e("\\u00e9"), ("é".as_bytes().to_vec(), false));
        assert_eq!(echo_e("x\\"), (b"x\\".to_vec(), false));
    }

    #[test]
    fn export_escapes_values() {
        assert_eq!(escape("a\"b$c`d\\"), "a\\\"b\\$c\\`d\\\\");
    }
}
