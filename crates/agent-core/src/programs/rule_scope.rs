//! How far a prefix allow rule reaches. `Bash(git log *)` approves `git log` followed by the
//! words its `*` stands for, as written; the option checks ([`super::effects`]) then read those
//! words for options that write files or run programs. Some commands cannot be judged that way,
//! and only an exact-string rule (the command written out in full) approves them:
//!
//! - **A word that could be a hidden option**, for a program whose options are checked
//!   ([`super::effects::inspects_options`]): an unquoted expansion (`git log $X`, `git log
//!   $(echo --ext-diff)`: it may be any number of words), a quoted one whose first character
//!   is only known at run time (`git log "$X"`), a glob whose matches may start with `-`
//!   (`git log *` beside a file named `--output=.bashrc`, `find . -name *`), or an option
//!   whose name is not written out (`-$X`, `--$X`). After `--` such words are operands, except
//!   for `find`, whose expression has no end of options. `--format=$X` names its option, so
//!   only the value is unknown, and the effects judge it like any value. Braces are expanded
//!   first, so `git log {--output=F,}` is `git log --output=F`, checked as written.
//! - **`find` with an action that runs a program or writes** (`-exec`, `-execdir`, `-ok`,
//!   `-okdir`, `-delete`, `-fprint`, `-fprint0`, `-fprintf`, `-fls`), as Claude Code has it.
//! - **A package script run with an option off the harmless list**: `npm run`, `npm test`,
//!   `npm start`, ..., `npm exec`, `npx`, and pnpm's and yarn's `run`, `test`, `start`,
//!   `exec`, `dlx` accept only options known to change nothing about what runs (`--silent`,
//!   `--if-present`, ...). npm reads any `--key=value` as configuration, and keys such as
//!   `script-shell`, `node-options`, `userconfig` or `prefix` choose the program, the
//!   configuration file or the package whose scripts run: `Bash(npm run test *)` approves
//!   the test script, not `npm run test --prefix=/tmp/other`. What follows `--` goes to the
//!   script.

use std::sync::OnceLock;

use super::getopt::{OptTable, parse_args};
use crate::shell::Word;
use crate::shell::braces::{MAX_CHECKED_WORDS, expand_words};
use crate::shell::wrappers::basename;

/// `find` actions that run a program or write a file.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Package managers: the subcommands that run a package script or binary, and the options
/// known to change nothing about what runs (in [`OptTable::parse`]'s compact form).
const SCRIPT_RUNNERS: &[(&str, &[&str], &str)] = &[
    (
        "npm",
        &[
            "run",
            "run-script",
            "rum",
            "urn",
            "test",
            "tst",
            "t",
            "start",
            "stop",
            "restart",
            "exec",
            "x",
        ],
        "s|--silent q|--quiet --loglevel= d|--verbose --if-present --ignore-scripts \
         --foreground-scripts --no-foreground-scripts --color? --no-color --json \
         p|--parseable --no-update-notifier --no-fund --no-audit --no-progress",
    ),
    (
        "pnpm",
        &["run", "run-script", "test", "t", "start", "exec", "dlx"],
        "s|--silent --if-present --reporter= --loglevel= --color --no-color",
    ),
    (
        "yarn",
        &["run", "test", "start", "exec", "dlx"],
        "s|--silent --verbose --no-progress --json",
    ),
];

/// `npx` runs a package binary with every word it is given; its own options are npm's.
const NPX_SUBCOMMAND: &str = "exec";

fn runner_table(i: usize) -> Option<&'static OptTable> {
    static TABLES: OnceLock<Vec<OptTable>> = OnceLock::new();
    TABLES
        .get_or_init(|| {
            SCRIPT_RUNNERS
                .iter()
                .map(|(_, _, o)| OptTable::parse(o, false))
                .collect()
        })
        .get(i)
}

/// Why only an exact-string allow rule may approve the command `words` (name first, after the
/// transparent wrappers), or `None` when a prefix rule may.
pub(crate) fn exact_rule_only(words: &[Word]) -> Option<String> {
    let Ok(words) = expand_words(words) else {
        return Some(format!(
            "its braces make more than {MAX_CHECKED_WORDS} words, too many to check one by one"
        ));
    };
    let head = words.first().filter(|w| w.is_static())?;
    let name = basename(&head.text);
    let args = &words[1..];
    if name == "find"
        && let Some(a) = args
            .iter()
            .find(|w| FIND_ACTIONS.contains(&w.text.as_str()))
    {
        return Some(format!(
            "`find {}` runs a program or writes files, which only an exact-string rule approves",
            a.text
        ));
    }
    if super::effects::inspects_options(name) {
        let options_end = name != "find";
        for w in args {
            if options_end && w.is_static() && w.text == "--" {
                break;
            }
            if may_be_an_option(w) {
                return Some(format!(
                    "`{}` is only known at run time and could be an option of `{name}` that writes a file or runs a program, which the option checks cannot read",
                    w.raw
                ));
            }
        }
    }
    script_run(name, args)
}

/// Whether the word's value, only known at run time, could be an option (or several words).
fn may_be_an_option(w: &Word) -> bool {
    if w.splits {
        return true;
    }
    if !w.dynamic && !w.glob {
        return false;
    }
    let unknown = |s: &str| s.contains(['$', '`', '*', '?', '[']);
    let t = w.text.as_str();
    if t.starts_with(['$', '`', '*', '?', '[']) {
        return true;
    }
    if !t.starts_with('-') {
        return false;
    }
    // `--name=…` with the name written out: only the value is unknown.
    match t.strip_prefix("--").and_then(|l| l.split_once('=')) {
        Some((name, _)) => unknown(name),
        None => true,
    }
}

/// A package script or binary run with an option off its runner's harmless list.
fn script_run(name: &str, args: &[Word]) -> Option<String> {
    let (i, sub) = if name == "npx" {
        (0, NPX_SUBCOMMAND)
    } else {
        let i = SCRIPT_RUNNERS.iter().position(|(n, _, _)| *n == name)?;
        let sub = args.iter().find(|w| !w.text.starts_with('-'))?;
        (i, sub.text.as_str())
    };
    let (_, subs, _) = SCRIPT_RUNNERS.get(i)?;
    if !subs.contains(&sub) {
        return None;
    }
    let table = runner_table(i)?;
    parse_args(table, args).err().map(|e| {
        format!(
            "`{name} {sub}`: {e}; a package manager's options can choose the shell, configuration or package a script runs with, so a rule for the script approves only the options known to change nothing"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<Word> {
        crate::shell::parse(cmd).unwrap().commands.remove(0).words
    }

    #[test]
    fn runner_tables_parse() {
        for i in 0..SCRIPT_RUNNERS.len() {
            assert!(runner_table(i).is_some_and(|t| !t.options.is_empty()));
        }
    }

    #[test]
    fn hidden_options_need_an_exact_rule() {
        for cmd in [
            "git log $X",
            "git log \"$X\"",
            "git log --patch $(echo --ext-diff)",
            "git log \"$(echo --output=x)\"",
            "git log *",
            "git log -$X",
            "git log --$X=y",
            "git log {--output=F,} -$Y",
            "git log --format=$FMT",
            "find . {-delete,}",
            "find . -name x {-exec,} rm -rf {} +",
            "find . -name *",
            "find . -- $X",
            "sort -o$X in",
            "npm run test --prefix=/tmp/x",
            "npm run test -C /tmp/x",
            "npm test --userconfig x",
            "npm run test --ignore-scripts=false",
            "npm run test $X",
            "npx --node-options=--require=x cowsay",
            "pnpm run test --dir /tmp",
            "yarn test --cwd /tmp",
        ] {
            assert!(exact_rule_only(&words(cmd)).is_some(), "{cmd}");
        }
        for cmd in [
            "git log --oneline -5",
            "git log --format=\"$FMT\"",
            "git log -- $X",
            "git log -- *",
            "git log src/*.rs",
            "git commit -m \"fix: $X\"",
            "find . -name '*.rs'",
            "cargo test $X",
            "npm run test",
            "npm run test --silent -- --watch $X",
            "npm install --save-dev x",
            "npm run build --if-present",
            "yarn add x",
        ] {
            assert_eq!(exact_rule_only(&words(cmd)), None, "{cmd}");
        }
    }
}
