//! The working directories a script's relative paths (and `~+`, which is `$PWD`) can be
//! resolved from: the session's, and every directory `cd`, `pushd`, `env -C` or `sudo -D` can
//! move to. Each command is then checked from each of them.
//!
//! - A move to a static directory adds it, both as bash's `cd` spells it (`..` applied to the
//!   text, `cd -L`) and as the kernel resolves it (`cd -P`), from every directory known so far;
//!   with `CDPATH` set in the environment, a plain relative name is also taken from each of its
//!   entries.
//! - A move only known at run time (`cd "$d"`, `cd s*`, `cd -`, `cd ~-`, `cd ~user`) makes the
//!   working directory unknown: relative paths then could be anywhere.
//! - A move that may run more than once (inside a loop, a function, a subshell, a nested
//!   script: any command outside the top-level list) is applied again to every directory found
//!   until no new existing directory appears, at most [`MAX_ROUNDS`] times and up to
//!   [`MAX_DIRS`] directories; past that the working directory is unknown. A directory the
//!   script itself creates is not there yet when it is checked, so it is not followed on those
//!   later rounds (see the limits in docs/sandbox.md).
//! - `popd` and `pushd` without a directory return to a directory already visited.

use std::path::{Path, PathBuf};

use agent_core::programs::getopt::long_matches;
use agent_core::shell::wrappers::basename;
use agent_core::shell::{Origin, ParsedScript, SimpleCommand, Word};

use super::arguments::{Base, Candidate, candidates};
use crate::paths::{lexical, resolve};

/// Directories a script can move to before its working directory is called unknown.
pub(crate) const MAX_DIRS: usize = 32;
/// Times the moves that may repeat are applied again.
pub(crate) const MAX_ROUNDS: usize = 8;

/// The working directories of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WorkDirs {
    /// These directories (the session's first), as bash spells them.
    Known(Vec<PathBuf>),
    /// Only known at run time, for this reason.
    Unknown(String),
}

/// Where one move goes.
enum Target {
    /// The directory a word names.
    Word(Word),
    /// The home directory (`cd` alone).
    Home,
    /// Only known at run time, for this reason.
    Unknown(String),
}

struct Move<'a> {
    target: Target,
    /// Runs at most once: in the script's top-level list.
    once: bool,
    shown: &'a SimpleCommand,
}

/// The working directories `script` can resolve relative paths from, starting in `cwd`.
pub(crate) fn of(
    script: &ParsedScript,
    cwd: &Path,
    home: Option<&Path>,
    cdpath: &[PathBuf],
) -> WorkDirs {
    let moves: Vec<Move<'_>> = script.commands.iter().flat_map(moves).collect();
    if moves.is_empty() {
        return WorkDirs::Known(vec![cwd.to_path_buf()]);
    }
    let mut dirs = vec![cwd.to_path_buf()];
    let apply = |m: &Move<'_>, dirs: &[PathBuf]| -> Result<Vec<PathBuf>, String> {
        let mut out = Vec::new();
        for d in dirs {
            out.extend(destinations(m, d, home, cdpath)?);
        }
        Ok(out)
    };
    for m in &moves {
        match apply(m, &dirs) {
            Ok(new) => add(&mut dirs, new),
            Err(why) => return WorkDirs::Unknown(why),
        }
        if dirs.len() > MAX_DIRS {
            return WorkDirs::Unknown(format!(
                "the script can move to more than {MAX_DIRS} directories"
            ));
        }
    }
    if moves.iter().any(|m| !m.once) {
        let mut settled = false;
        for _ in 0..MAX_ROUNDS {
            let before = dirs.len();
            for m in &moves {
                match apply(m, &dirs) {
                    Ok(new) => add(&mut dirs, new.into_iter().filter(|d| d.is_dir()).collect()),
                    Err(why) => return WorkDirs::Unknown(why),
                }
            }
            if dirs.len() > MAX_DIRS {
                break;
            }
            if dirs.len() == before {
                settled = true;
                break;
            }
        }
        if !settled {
            return WorkDirs::Unknown(
                "the script's `cd` may run repeatedly, to more directories than can be followed"
                    .to_owned(),
            );
        }
    }
    WorkDirs::Known(dirs)
}

fn add(dirs: &mut Vec<PathBuf>, new: Vec<PathBuf>) {
    for d in new {
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
}

/// The directories one move leads to from `from`.
fn destinations(
    m: &Move<'_>,
    from: &Path,
    home: Option<&Path>,
    cdpath: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    let unknown = |what: &str| {
        format!(
            "`{}` moves to a directory only known at run time ({what}), so relative paths cannot be checked",
            m.shown
        )
    };
    let word = match &m.target {
        Target::Unknown(what) => return Err(unknown(what)),
        Target::Home => {
            return home
                .map(|h| vec![h.to_path_buf()])
                .ok_or_else(|| unknown("the home directory is not known"));
        }
        Target::Word(w) => w,
    };
    let base = Base {
        cwd: Some(from),
        home,
    };
    let mut spelled = Vec::new();
    for c in candidates(word, base) {
        match c {
            Candidate::Path(p) => spelled.push(p),
            Candidate::Pattern(_) | Candidate::Unknown(_) => {
                return Err(unknown(&word.raw));
            }
        }
    }
    // `CDPATH` is searched for a relative name that does not start with `.` or `..`.
    let t = word.text.as_str();
    if word.is_static()
        && !t.starts_with(['/', '~'])
        && !(t == "." || t == ".." || t.starts_with("./") || t.starts_with("../"))
    {
        for entry in cdpath {
            spelled.push(from.join(entry).join(t));
        }
    }
    let mut out = Vec::new();
    for p in spelled {
        let logical = lexical(&p, from);
        if let Ok(physical) = resolve(&p)
            && physical != logical
        {
            out.push(physical);
        }
        out.push(logical);
    }
    Ok(out)
}

/// The moves of one command: `cd`, `pushd`, and the directory options of `env` and `sudo`
/// layers.
fn moves(cmd: &SimpleCommand) -> Vec<Move<'_>> {
    let once = cmd.origin == Origin::TopLevel && cmd.depth == 0;
    let mut out = Vec::new();
    let mv = |target| Move {
        target,
        once,
        shown: cmd,
    };
    // Wrapper layers: `env -C DIR`, `sudo -D DIR`.
    let mut start = 0;
    for layer in &cmd.layers {
        let words = cmd.words.get(start + 1..layer.inner).unwrap_or(&[]);
        let (short, long) = match layer.wrapper {
            "env" => ("C", "chdir"),
            "sudo" => ("D", "chdir"),
            _ => ("", ""),
        };
        if !short.is_empty() {
            for t in option_values(words, short, long) {
                out.push(mv(t));
            }
        }
        start = layer.inner;
    }
    let words = cmd.effective_words();
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return out;
    };
    let args = &words[1..];
    match basename(&head.text) {
        "cd" | "pushd" => {
            let mut operands = args.iter().skip_while(|w| {
                let t = w.text.as_str();
                w.is_static()
                    && t.len() > 1
                    && t.starts_with('-')
                    && t != "--"
                    && t[1..].chars().all(|c| "LPe@n".contains(c))
            });
            let first = operands.next();
            let operand = match first {
                Some(w) if w.text == "--" => operands.next(),
                other => other,
            };
            let pushd = head.text.ends_with("pushd");
            match operand {
                None if pushd => {} // swaps with a directory already visited
                None => out.push(mv(Target::Home)),
                Some(w) if w.text == "-" && !pushd => {
                    out.push(mv(Target::Unknown("`cd -` returns to $OLDPWD".into())));
                }
                Some(w)
                    if pushd
                        && w.is_static()
                        && w.text.len() > 1
                        && w.text.starts_with(['+', '-'])
                        && w.text[1..].bytes().all(|b| b.is_ascii_digit()) => {}
                Some(w) => out.push(mv(Target::Word(w.clone()))),
            }
        }
        _ => {}
    }
    out
}

/// An option value attached to its option's word (`-C/x`, `--chdir=/x`).
fn attached(w: &Word, value: &str) -> Word {
    Word {
        text: value.to_owned(),
        home: false,
        ..w.clone()
    }
}

/// The values of the short option `short` / long option `long` among a wrapper's options.
fn option_values(words: &[Word], short: &str, long: &str) -> Vec<Target> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        i += 1;
        let t = w.text.as_str();
        if !w.is_static() {
            out.push(Target::Unknown(format!(
                "`{}` could be a directory option",
                w.raw
            )));
            continue;
        }
        if t.starts_with("--") {
            if long_matches(t, long) {
                if let Some((_, v)) = t.split_once('=') {
                    out.push(Target::Word(attached(w, v)));
                } else if let Some(v) = words.get(i) {
                    i += 1;
                    out.push(Target::Word(v.clone()));
                }
            }
            continue;
        }
        if t.len() > 1
            && t.starts_with('-')
            && let Some(at) = t.find(short)
        {
            let rest = &t[at + short.len()..];
            if !rest.is_empty() {
                out.push(Target::Word(attached(w, rest)));
            } else if let Some(v) = words.get(i) {
                i += 1;
                out.push(Target::Word(v.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(script: &str, cwd: &Path) -> WorkDirs {
        of(
            &agent_core::shell::parse(script).unwrap(),
            cwd,
            Some(Path::new("/home/u")),
            &[],
        )
    }

    #[test]
    fn moves_add_the_directories_they_lead_to() {
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(w.join("sub")).unwrap();
        assert_eq!(dirs("ls", &w), WorkDirs::Known(vec![w.clone()]));
        assert_eq!(
            dirs("cd sub && cat x", &w),
            WorkDirs::Known(vec![w.clone(), w.join("sub")])
        );
        assert_eq!(
            dirs("cd /etc; cat shadow", &w),
            WorkDirs::Known(vec![w.clone(), PathBuf::from("/etc")])
        );
        assert_eq!(
            dirs("cd", &w),
            WorkDirs::Known(vec![w.clone(), PathBuf::from("/home/u")])
        );
        assert_eq!(
            dirs("(cd sub && cat x)", &w),
            WorkDirs::Known(vec![w.clone(), w.join("sub")])
        );
        for s in [
            "env -C /etc cat shadow",
            "env --chdir=/etc cat shadow",
            "env -C/etc cat shadow",
        ] {
            // agent-core does not see through a wrapper that changes directory (the command
            // is not analysable, so the checker refuses it); should it ever peel one, its
            // directory is a place the command runs.
            let parsed = agent_core::shell::parse(s).unwrap();
            assert!(
                !parsed.is_fully_analysed()
                    || dirs(s, &w) == WorkDirs::Known(vec![w.clone(), PathBuf::from("/etc")]),
                "{s}"
            );
        }
        for s in [
            "cd \"$d\" && cat x",
            "cd s* && cat x",
            "cd - && cat x",
            "cd ~- && cat x",
            "cd ~root && cat x",
        ] {
            assert!(matches!(dirs(s, &w), WorkDirs::Unknown(_)), "{s}");
        }
        // `cd ..` in a loop climbs to the root.
        let WorkDirs::Known(up) = dirs("for i in 1 2; do cd ..; done", &w) else {
            panic!("unknown")
        };
        assert!(up.contains(&PathBuf::from("/")), "{up:?}");
    }
}
