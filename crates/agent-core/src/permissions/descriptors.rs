//! Which files a command's redirects write, with its file descriptors followed in order.
//!
//! `> /dev/stdout` and `2> /dev/stderr` are harmless while descriptors 1 and 2 are still the
//! tool's own output. But opening `/dev/stdout`, `/dev/stderr`, `/dev/stdin`, `/dev/fd/N` or
//! `/proc/self/fd/N` *reopens* whatever descriptor N refers to at that moment, for writing:
//! after `1<x` (read-only), `1<>x` or `3<x`, the redirect `>/dev/stdout` or `>/dev/fd/3`
//! truncates and writes `x`. So a command's redirects are applied in order, tracking what each
//! descriptor refers to, and a write through such a name is a write of the file the descriptor
//! holds: no write when that is the tool's own output, a pipe or `/dev/null`; the file itself
//! when it is one; and the `/dev/…` name (a path outside the working directories, never
//! auto-approved) when the parse cannot tell.
//!
//! A command also inherits descriptors from around it: an enclosing group (`{ …; } 1<x`), the
//! command that runs it (`bash -c '…' 1<x`, `find … -exec … 1<x`), an earlier `exec 1<x`. So a
//! descriptor that any *other* command of the script points at a file is not known to be the
//! tool's own when a command starts ([`ScriptDescriptors`]); within the command it is followed
//! exactly.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::shell::{Redirect, RedirectOp, Word};

/// Targets that are never a file write (`> /dev/null`). `/dev/stdout` and `/dev/stderr` are
/// judged by the descriptor they reopen instead.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/tty"];

/// What a file descriptor refers to while a command's redirects are applied.
#[derive(Clone, Debug, PartialEq)]
enum Fd {
    /// What the tool started the command with: 1 and 2 are its own output.
    Inherited,
    /// A file a redirect named.
    File(Word),
    /// Something reopening cannot turn into a file write: a pipe, a here-document, a closed
    /// descriptor, `/dev/null`.
    Harmless,
    /// Not known before run time (a descriptor number or target only known then).
    Unknown,
}

/// The descriptor a `/dev/…` or `/proc/…` name reopens (`/dev/stdout` → 1, `/dev/fd/7` → 7),
/// after lexical normalisation (`//dev/./stdout` is `/dev/stdout`).
fn reopened_fd(path: &Path) -> Option<u32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))?;
    n.parse().ok()
}

/// The descriptor a redirect sets when none is written before its operator.
fn default_fd(op: RedirectOp) -> u32 {
    match op {
        RedirectOp::Read
        | RedirectOp::ReadWrite
        | RedirectOp::DuplicateInput
        | RedirectOp::HereDocument
        | RedirectOp::HereString => 0,
        RedirectOp::Write
        | RedirectOp::Append
        | RedirectOp::Clobber
        | RedirectOp::DuplicateOutput
        | RedirectOp::OutputAndError { .. } => 1,
    }
}

/// Descriptor numbers that the commands of a script point at files (or at something only
/// known at run time), with how many commands do so.
#[derive(Debug, Default)]
pub(crate) struct ScriptDescriptors {
    counts: HashMap<u32, usize>,
}

impl ScriptDescriptors {
    /// Collects the descriptors every command's redirects point at files.
    pub(crate) fn of<'a>(
        redirect_lists: impl IntoIterator<Item = &'a [Redirect]>,
        normalize: impl Fn(&str) -> Option<PathBuf>,
    ) -> Self {
        let mut counts = HashMap::new();
        for redirects in redirect_lists {
            for fd in apply(redirects, &|_| Fd::Inherited, &normalize).touched {
                *counts.entry(fd).or_insert(0) += 1;
            }
        }
        Self { counts }
    }
}

/// The files `redirects` (one command's, in bash's order) write, resolving `/dev/stdout`-like
/// targets through the descriptors. `normalize` turns a static target into the absolute
/// lexical path it opens (`None` when it cannot: the directory is only known at run time).
/// `script` says which descriptors other commands of the script point at files.
pub(crate) fn written_files(
    redirects: &[Redirect],
    normalize: impl Fn(&str) -> Option<PathBuf>,
    script: &ScriptDescriptors,
) -> Vec<Word> {
    let own = apply(redirects, &|_| Fd::Inherited, &normalize).touched;
    let start = |fd: u32| {
        let elsewhere =
            script.counts.get(&fd).copied().unwrap_or(0) > usize::from(own.contains(&fd));
        match fd {
            0..=2 if !elsewhere => Fd::Inherited,
            // The tool passes only 0, 1 and 2, but bash opens others the parse may not show
            // (`{fd}<x` allocates one from 10 up), so a higher one not set here is unknown.
            _ => Fd::Unknown,
        }
    };
    apply(redirects, &start, &normalize).writes
}

/// What applying a command's redirects did.
struct Applied {
    /// Files written, in order.
    writes: Vec<Word>,
    /// Descriptors pointed at a file or at something only known at run time.
    touched: Vec<u32>,
}

/// Applies `redirects` in order from the descriptors `start` gives.
fn apply(
    redirects: &[Redirect],
    start: &dyn Fn(u32) -> Fd,
    normalize: &dyn Fn(&str) -> Option<PathBuf>,
) -> Applied {
    let mut fds: HashMap<u32, Fd> = HashMap::new();
    let get = |fds: &HashMap<u32, Fd>, n: u32| fds.get(&n).cloned().unwrap_or_else(|| start(n));
    let mut writes = Vec::new();
    let mut touched = Vec::new();
    let mut set = |fds: &mut HashMap<u32, Fd>, n: u32, f: Fd| {
        if matches!(f, Fd::File(_) | Fd::Unknown) && !touched.contains(&n) {
            touched.push(n);
        }
        fds.insert(n, f);
    };
    for r in redirects {
        let fd =
            r.fd.and_then(|n| u32::try_from(n).ok())
                .unwrap_or_else(|| default_fd(r.op));
        let Some(target) = &r.target else {
            // Process substitution: a pipe.
            set(&mut fds, fd, Fd::Harmless);
            continue;
        };
        // Opens `target`: what the descriptor then holds, and the file written (if `writes`).
        let open = |fds: &HashMap<u32, Fd>, writes_to: bool, out: &mut Vec<Word>| -> Fd {
            let path = (!target.dynamic && !target.glob)
                .then(|| normalize(&target.text))
                .flatten();
            if let Some(n) = path.as_deref().and_then(reopened_fd) {
                let held = get(fds, n);
                if writes_to {
                    match &held {
                        Fd::Inherited if n == 1 || n == 2 => {}
                        Fd::Harmless => {}
                        Fd::File(w) => out.push(w.clone()),
                        Fd::Inherited | Fd::Unknown => out.push(target.clone()),
                    }
                }
                return held;
            }
            if path
                .as_deref()
                .and_then(Path::to_str)
                .is_some_and(|p| HARMLESS_TARGETS.contains(&p))
            {
                return Fd::Harmless;
            }
            if writes_to {
                out.push(target.clone());
            }
            if target.dynamic {
                Fd::Unknown
            } else {
                Fd::File(target.clone())
            }
        };
        match r.op {
            RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::ReadWrite => {
                let held = open(&fds, true, &mut writes);
                set(&mut fds, fd, held);
            }
            RedirectOp::OutputAndError { .. } => {
                let held = open(&fds, true, &mut writes);
                set(&mut fds, 1, held.clone());
                set(&mut fds, 2, held);
            }
            RedirectOp::Read => {
                let held = open(&fds, false, &mut writes);
                set(&mut fds, fd, held);
            }
            RedirectOp::HereDocument | RedirectOp::HereString => set(&mut fds, fd, Fd::Harmless),
            RedirectOp::DuplicateInput | RedirectOp::DuplicateOutput => {
                let text = target.text.as_str();
                if target.dynamic {
                    // `>&$fd`: any descriptor, or (for `>&`) a file.
                    if r.op == RedirectOp::DuplicateOutput {
                        writes.push(target.clone());
                    }
                    set(&mut fds, fd, Fd::Unknown);
                } else if text == "-" {
                    set(&mut fds, fd, Fd::Harmless);
                } else if let Ok(from) = text.trim_end_matches('-').parse::<u32>() {
                    // `N>&M` copies M, access mode included; `N>&M-` also closes M.
                    let held = get(&fds, from);
                    set(&mut fds, fd, held);
                    if text.ends_with('-') {
                        set(&mut fds, from, Fd::Harmless);
                    }
                } else if r.op == RedirectOp::DuplicateOutput {
                    // `>&FILE` is `&>FILE`.
                    let held = open(&fds, true, &mut writes);
                    set(&mut fds, 1, held.clone());
                    set(&mut fds, 2, held);
                } else {
                    set(&mut fds, fd, Fd::Unknown);
                }
            }
        }
    }
    Applied { writes, touched }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    fn normalize(t: &str) -> Option<PathBuf> {
        let p = if t.starts_with('/') {
            PathBuf::from(t)
        } else {
            Path::new("/w").join(t)
        };
        Some(crate::paths::normalize(&p))
    }

    /// The files each command of `script` writes, with the script's other commands around it.
    fn writes_in(script: &str) -> Vec<Vec<String>> {
        let parsed = parse(script).unwrap();
        let fds = ScriptDescriptors::of(
            parsed.commands.iter().map(|c| c.redirects.as_slice()),
            normalize,
        );
        parsed
            .commands
            .iter()
            .map(|c| {
                written_files(&c.redirects, normalize, &fds)
                    .into_iter()
                    .map(|w| w.text)
                    .collect()
            })
            .collect()
    }

    fn writes(script: &str) -> Vec<String> {
        writes_in(script).concat()
    }

    #[test]
    fn the_tools_own_output_is_no_file_write() {
        for s in [
            "echo x >/dev/stdout",
            "echo x 2>/dev/stderr",
            "echo x >/dev/stderr",
            "echo x >/dev/fd/1",
            "echo x 2>/proc/self/fd/2",
            "echo x >//dev/./stdout",
            "echo x >/dev/null 2>&1",
            "echo x 2>&1 >/dev/stdout",
            "echo x 1</dev/null >/dev/stdout",
            "echo x 1<<<y >/dev/stdout",
            "echo x 1>&- >/dev/stdout",
            "echo x 3>/dev/null >/dev/fd/3",
            "echo x >/dev/tty",
            "ls >/dev/null; echo x >/dev/stdout",
            "ls 3</dev/null; echo done >/dev/stderr",
        ] {
            assert_eq!(writes(s), Vec::<String>::new(), "{s}");
        }
    }

    #[test]
    fn a_reopened_descriptor_writes_the_file_it_holds() {
        for (s, expected) in [
            ("echo evil 1<x >/dev/stdout", vec!["x"]),
            ("echo x 2<.git/config 2>/dev/stderr", vec![".git/config"]),
            ("echo x 1<x >/dev/fd/1", vec!["x"]),
            ("echo x 1<x >/proc/self/fd/1", vec!["x"]),
            ("echo x 1<x 2>&1 2>/dev/stderr", vec!["x"]),
            ("echo x 3<x >/dev/fd/3", vec!["x"]),
            ("echo x 4<x 3<&4 >/dev/fd/3", vec!["x"]),
            ("echo x 3<x 1<&3 >/dev/stdout", vec!["x"]),
            ("echo x 1<>x", vec!["x"]),
            ("echo x 1<>x >/dev/stdout", vec!["x", "x"]),
            ("echo x 0<x >/dev/stdin", vec!["x"]),
            ("echo x >log 2>/dev/stdout", vec!["log", "log"]),
            ("echo x >&log", vec!["log"]),
        ] {
            assert_eq!(writes(s), expected, "{s}");
        }
    }

    /// Descriptors set around a command (an enclosing group, the shell that runs a string,
    /// an earlier `exec`) are not the tool's own when it starts.
    #[test]
    fn a_descriptor_set_around_the_command_is_no_exemption() {
        for (s, expected) in [
            ("{ echo evil >/dev/stdout; } 1<x", "/dev/stdout"),
            ("( echo evil >/dev/stdout ) 1<x", "/dev/stdout"),
            (
                "if true; then echo evil >/dev/stdout; fi 1<x",
                "/dev/stdout",
            ),
            ("f() { echo evil >/dev/stdout; }; f 1<x", "/dev/stdout"),
            ("bash -c 'echo evil >/dev/stdout' 1<x", "/dev/stdout"),
            ("exec 1<x; echo evil >/dev/stdout", "/dev/stdout"),
            ("exec 3<x; echo evil >/dev/fd/3", "/dev/fd/3"),
            (
                "find . -exec sh -c 'echo >/dev/stderr' \\; 2<x",
                "/dev/stderr",
            ),
        ] {
            let all = writes(s);
            assert!(all.iter().any(|w| w == expected), "{s}: {all:?}");
        }
    }

    #[test]
    fn a_descriptor_only_known_at_run_time_is_no_exemption() {
        assert_eq!(writes("echo x >/dev/stdin"), ["/dev/stdin"]);
        assert_eq!(writes("echo x 1>&$fd >/dev/stdout"), ["$fd", "/dev/stdout"]);
        assert_eq!(writes("echo x 1<$f >/dev/stdout"), ["/dev/stdout"]);
        assert_eq!(writes("echo x >&$f"), ["$f"]);
        // Bash may hold descriptors the parse does not show (`{fd}<x` takes 10 and up).
        assert_eq!(writes("echo x >/dev/fd/9"), ["/dev/fd/9"]);
        assert_eq!(writes("echo x {fd}<x >/dev/fd/11"), ["/dev/fd/11"]);
    }
}
