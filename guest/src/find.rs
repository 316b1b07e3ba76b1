//! `find`: this project's own implementation of the common GNU findutils `find` (uutils
//! findutils has no WASI build in a released version).
//!
//! Starting points are the arguments before the first one that begins with `-` or is `(` or `!`
//! (default `.`). Expression: tests `-name -iname -path -ipath -wholename -iwholename -regex
//! -iregex -type -empty -newer -size -mtime -mmin -true -false`, actions `-print -print0 -printf
//! -prune -quit -delete`, options `-maxdepth -mindepth -depth -regextype -xdev -mount -noleaf
//! -follow`, operators `( ) ! -not -a -and -o -or ,` with GNU precedence (`!` binds tightest, then
//! `-a` (also implicit), then `-o`, then `,`). When the expression has no action other than
//! `-prune`, `-print` is applied to everything it matches. `-exec`, `-execdir`, `-ok` and `-okdir`
//! are rejected: a WASI guest cannot start other programs (the agent's shell runs `find ...
//! -exec` itself, with this find listing the files: crates/agent-wasi/src/shell/find_exec.rs).
//!
//! Order: a directory is listed before its entries (after them with `-depth` or `-delete`), and
//! the entries of a directory are visited **sorted by name** (bytewise). GNU find uses the
//! directory's own order, which depends on the file system, so the output matches GNU's only up
//! to that order. Symbolic links are not followed (`-P`) unless `-L`/`-follow` is given; `-H`
//! follows those on the command line.
//!
//! Exit status: 0, or 1 when any error occurred (a missing starting point, an unreadable
//! directory, a bad expression).

mod entry;
mod expr;
mod parse;
mod walk;

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::time::SystemTime;

use crate::util;

use walk::Find;

/// Global options collected while parsing.
#[derive(Debug, Clone, Copy)]
struct Globals {
    maxdepth: usize,
    mindepth: usize,
    depth_first: bool,
    follow: Follow,
}

/// Which symbolic links are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    Never,
    CommandLine,
    Always,
}

/// Entry point: `args[0]` is the program name.
pub fn main(args: Vec<OsString>) -> i32 {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let status = run(&args[1.min(args.len())..], &mut out, &mut io::stderr());
    match out.flush() {
        Ok(()) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let _ = writeln!(io::stderr(), "find: write error: {}", util::io_msg(&e));
            1
        }
    }
}

/// Runs find with the arguments after the program name. Returns the exit status.
pub fn run(args: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut i = 0;
    let mut follow = Follow::Never;
    while let Some(a) = args.get(i) {
        match a.to_str() {
            Some("-P") => follow = Follow::Never,
            Some("-L") => follow = Follow::Always,
            Some("-H") => follow = Follow::CommandLine,
            Some("--help") => {
                let _ = writeln!(
                    out,
                    "Usage: find [-H] [-L] [-P] [starting-point...] [expression]"
                );
                return 0;
            }
            Some("--version") => {
                let _ = writeln!(out, "find (guest-coreutils) {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            Some("--") => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    let mut paths: Vec<Vec<u8>> = Vec::new();
    while let Some(a) = args.get(i) {
        let b = util::os_bytes(a);
        if (b.first() == Some(&b'-') && b.len() > 1) || b == b"(" || b == b"!" {
            break;
        }
        paths.push(b.to_vec());
        i += 1;
    }
    if paths.is_empty() {
        paths.push(b".".to_vec());
    }
    let parsed = match parse::parse_expression(&args[i..], follow) {
        Ok(parsed) => parsed,
        Err(m) => {
            let _ = writeln!(err, "find: {m}");
            return 1;
        }
    };
    let mut f = Find {
        g: parsed.globals,
        expr: parsed.expr,
        default_print: !parsed.has_action,
        out,
        err,
        now: SystemTime::now(),
        failed: false,
        quit: false,
        pruned: false,
    };
    for path in &paths {
        if path.is_empty() {
            f.error(path, &io::Error::from(io::ErrorKind::NotFound));
            continue;
        }
        if let Err(e) = f.visit(path, path, 0) {
            let _ = writeln!(f.err, "find: write error: {}", util::io_msg(&e));
            return 1;
        }
        if f.quit {
            break;
        }
    }
    i32::from(f.failed)
}

#[cfg(test)]
mod tests;
