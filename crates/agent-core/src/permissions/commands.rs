//! How one Bash sub-command is judged on the allow side: the text allow rules see, the
//! environment assignments they tolerate, the built-in read-only set, and the filesystem
//! commands `acceptEdits` runs.
//!
//! Deny and ask rules see every form of a command (with and without assignments, through every
//! wrapper, by basename); allow rules see one form only: after the transparent wrappers, with
//! only known-safe assignments before it. A prefix allow rule never approves an exec wrapper
//! (`watch`, `setsid`, `ionice`, `flock`) or `find -exec` / `-delete`; only an exact rule does.

use super::request::{PATTERN_OPTIONS, positionals, positionals_with};
use super::workdirs::WorkingDirs;
use crate::shell::wrappers::{EXEC_WRAPPERS, basename};
use crate::shell::{SimpleCommand, Word, join};

/// Variables an allow rule matches past (`NODE_ENV=test npm test`). Any other assignment before
/// a command means allow rules do not match it (claude-code.md §3.2 item 3).
pub const SAFE_ENV_VARS: &[&str] = &[
    "NODE_ENV",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "TERM",
    "TZ",
    "CI",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
];

/// What allow rules match for one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AllowView {
    /// Words joined by single spaces.
    pub text: String,
    /// Only an exact-string rule may approve it.
    pub exact_only: bool,
}

/// The allow view, or `None` when no allow rule may approve the command (a dynamic name, or
/// an assignment of a variable not in [`SAFE_ENV_VARS`]).
pub(crate) fn allow_view(cmd: &SimpleCommand) -> Option<AllowView> {
    if !safe_assignments(cmd) {
        return None;
    }
    let words = cmd.words.get(cmd.allow_start()..)?;
    let head = words.first()?;
    if !head.is_static() {
        return None;
    }
    let name = basename(&head.text);
    let exact_only = EXEC_WRAPPERS.contains(&name)
        || (name == "find" && words.iter().any(|w| is_find_action(&w.text)));
    Some(AllowView {
        text: join(words),
        exact_only,
    })
}

fn safe_assignments(cmd: &SimpleCommand) -> bool {
    cmd.assignments
        .iter()
        .all(|a| SAFE_ENV_VARS.contains(&a.name.as_str()) && a.value.is_static())
}

fn is_find_action(arg: &str) -> bool {
    matches!(
        arg,
        "-exec"
            | "-execdir"
            | "-ok"
            | "-okdir"
            | "-delete"
            | "-fprint"
            | "-fprint0"
            | "-fprintf"
            | "-fls"
    )
}

/// Every text a deny or ask rule is tested against: the command with its assignments, without
/// them, after each wrapper layer, and each of those with the command name reduced to its
/// basename (`/usr/bin/rm` → `rm`).
pub(crate) fn deny_views(cmd: &SimpleCommand) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(2 + cmd.layers.len());
    if cmd.words.is_empty() {
        return out;
    }
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    if !cmd.assignments.is_empty() {
        let assigns: Vec<String> = cmd
            .assignments
            .iter()
            .map(|a| format!("{}={}", a.name, a.value.text))
            .collect();
        push(format!("{} {}", assigns.join(" "), cmd.text_from(0)));
    }
    let starts = std::iter::once(0).chain(cmd.layers.iter().map(|l| l.inner));
    for start in starts {
        let words = &cmd.words[start..];
        push(join(words));
        if let Some(head) = words.first() {
            let base = basename(&head.text);
            if base.len() != head.text.len() && !base.is_empty() {
                let mut rest = join(&words[1..]);
                if !rest.is_empty() {
                    rest.insert(0, ' ');
                }
                push(format!("{base}{rest}"));
            }
        }
    }
    out
}

/// Commands that only read, and run without asking in every mode unless a deny or ask rule
/// matches (claude-code.md §3.2 item 7). Their file arguments must be inside the working
/// directories (stricter than Claude Code, which lets `cat /etc/x` through).
const READ_ONLY_NO_FILES: &[&str] = &[
    "echo", "printf", "pwd", "true", "false", "whoami", "uname", "which", "basename", "dirname",
    "date", "id", "hostname", "nproc", "seq", "test", "[",
];
const READ_ONLY_FILES: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "stat",
    "du",
    "diff",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "tree",
    "sort",
    "cut",
    "nl",
    "tac",
    "realpath",
    "readlink",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "cksum",
    "file",
];
/// Commands that can write when given a glob or some options; an unquoted glob makes them ask.
const WRITE_CAPABLE: &[&str] = &["find", "sort", "sed", "git"];
/// Options that make an otherwise read-only command write or run something.
const WRITING_OPTIONS: &[(&str, &[&str])] = &[
    ("sort", &["-o", "--output"]),
    ("tree", &["-o"]),
    ("rg", &["--pre"]),
    ("date", &["-s", "--set"]),
    ("file", &["-C", "--compile", "-m", "-f"]),
    ("hostname", &[]),
];

/// Whether `cmd` is in the built-in read-only set.
pub(crate) fn is_read_only(cmd: &SimpleCommand, wd: &WorkingDirs) -> bool {
    if !safe_assignments(cmd) {
        return false;
    }
    let Some(words) = cmd.words.get(cmd.allow_start()..) else {
        return false;
    };
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return false;
    };
    // A path-qualified name (`./ls`) may be anything.
    let name = head.text.as_str();
    let args = &words[1..];
    if WRITE_CAPABLE.contains(&name) && args.iter().any(|w| w.glob) {
        return false;
    }
    if let Some((_, bad)) = WRITING_OPTIONS.iter().find(|(n, _)| *n == name) {
        if name == "hostname" && !args.is_empty() {
            return false; // `hostname NAME` sets it
        }
        if args.iter().any(|w| {
            bad.iter()
                .any(|b| w.text == *b || w.text.starts_with(&format!("{b}=")))
        }) {
            return false;
        }
    }
    if READ_ONLY_NO_FILES.contains(&name) {
        return true;
    }
    if READ_ONLY_FILES.contains(&name) {
        if name == "find" && args.iter().any(|w| is_find_action(&w.text)) {
            return false;
        }
        let files = if matches!(name, "grep" | "egrep" | "fgrep" | "rg") {
            let files = positionals_with(words, PATTERN_OPTIONS);
            let explicit = args
                .iter()
                .any(|w| matches!(w.text.as_str(), "-e" | "-f" | "--regexp" | "--file"));
            if explicit {
                files
            } else {
                files.get(1..).unwrap_or(&[]).to_vec()
            }
        } else {
            positionals(words)
        };
        return files.iter().all(|w| inside(w, wd));
    }
    match name {
        "cd" => args.len() == 1 && inside(&args[0], wd),
        "git" => is_read_only_git(args),
        _ => false,
    }
}

/// A static word naming a path inside the working directories (globs are fine for readers).
fn inside(word: &Word, wd: &WorkingDirs) -> bool {
    !word.dynamic && wd.contains(&wd.resolve(&word.text))
}

/// Read-only git: `status`, `diff`, `log`, `show`, `blame`, listing forms of `branch`, `tag`,
/// `remote`, `config --get`, ... Global options other than `--no-pager` ask (`-c` can set
/// `core.pager` or `core.fsmonitor` to any program), as do `--output` and `--ext-diff`, and
/// `git grep -O` (opens a pager program).
fn is_read_only_git(args: &[Word]) -> bool {
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        if first.text == "--no-pager" {
            rest = tail;
        } else {
            break;
        }
    }
    let Some((sub, sub_args)) = rest.split_first() else {
        return false;
    };
    if sub_args.iter().any(|w| {
        !w.is_static()
            || w.text.starts_with("--output")
            || w.text == "--ext-diff"
            || w.text == "--textconv"
            || w.text.starts_with("--open-files-in-pager")
            || w.text.starts_with("-O")
    }) {
        return false;
    }
    let positional = sub_args.iter().filter(|w| !w.text.starts_with('-')).count();
    match sub.text.as_str() {
        "status" | "diff" | "log" | "show" | "blame" | "rev-parse" | "ls-files" | "describe"
        | "shortlog" | "grep" | "ls-tree" | "cat-file" | "show-ref" | "rev-list" | "merge-base" => {
            true
        }
        "branch" => {
            positional == 0
                && sub_args.iter().all(|w| {
                    matches!(
                        w.text.as_str(),
                        "-a" | "-r"
                            | "-l"
                            | "--list"
                            | "-v"
                            | "-vv"
                            | "--all"
                            | "--show-current"
                            | "--remotes"
                    )
                })
        }
        "tag" => {
            positional == 0
                && sub_args
                    .iter()
                    .all(|w| matches!(w.text.as_str(), "-l" | "--list"))
        }
        "remote" => {
            sub_args.iter().all(|w| w.text == "-v")
                || matches!(
                    sub_args.first().map(|w| w.text.as_str()),
                    Some("show" | "get-url")
                )
        }
        "reflog" => sub_args.is_empty() || sub_args[0].text == "show",
        "stash" => matches!(
            sub_args.first().map(|w| w.text.as_str()),
            Some("list" | "show")
        ),
        "config" => sub_args.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "--get" | "--get-all" | "--list" | "-l" | "--get-regexp"
            )
        }),
        _ => false,
    }
}

/// The filesystem commands `acceptEdits` runs inside the working directories.
const ACCEPT_EDITS_COMMANDS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// Whether `cmd` is a filesystem command whose every path is static and inside the working
/// directories (for `acceptEdits`). `sed` qualifies only for a plain `s/…/…/flags` script, since
/// sed's `e` and `w` commands run programs and write files.
pub(crate) fn is_in_scope_fs_command(cmd: &SimpleCommand, wd: &WorkingDirs) -> bool {
    if !safe_assignments(cmd) {
        return false;
    }
    let Some(words) = cmd.words.get(cmd.allow_start()..) else {
        return false;
    };
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return false;
    };
    let name = head.text.as_str();
    if !ACCEPT_EDITS_COMMANDS.contains(&name) {
        return false;
    }
    let mut files = positionals(words);
    if name == "sed" {
        let Some((script, rest)) = files.split_first() else {
            return false;
        };
        if !script.is_static() || !is_plain_substitution(&script.text) {
            return false;
        }
        files = rest.to_vec();
    }
    !files.is_empty()
        && files
            .iter()
            .all(|w| w.is_static() && wd.contains(&wd.resolve(&w.text)))
}

/// `s<d>pattern<d>replacement<d>flags` with flags among `g`, `i`, `I`, `p` and digits.
fn is_plain_substitution(script: &str) -> bool {
    let mut chars = script.chars();
    if chars.next() != Some('s') {
        return false;
    }
    let Some(delim) = chars.next() else {
        return false;
    };
    if delim.is_alphanumeric() || delim == '\\' || delim == '\n' {
        return false;
    }
    let body: String = chars.collect();
    let parts: Vec<&str> = body.split(delim).collect();
    parts.len() == 3
        && !parts[0].contains('\\')
        && !parts[1].contains('\\')
        && parts[2]
            .chars()
            .all(|c| matches!(c, 'g' | 'i' | 'I' | 'p') || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;
    use std::path::Path;

    fn wd() -> WorkingDirs {
        WorkingDirs::new(Path::new("/w/p"), Path::new("/h"), &[])
    }

    fn first(cmd: &str) -> SimpleCommand {
        parse(cmd).unwrap().commands.remove(0)
    }

    #[test]
    fn views() {
        assert_eq!(
            allow_view(&first("timeout 5 npm test")).unwrap().text,
            "npm test"
        );
        assert_eq!(
            allow_view(&first("NODE_ENV=test npm test")).unwrap().text,
            "npm test"
        );
        assert_eq!(allow_view(&first("EVIL=1 npm test")), None);
        assert_eq!(allow_view(&first("sudo rm x")).unwrap().text, "sudo rm x");
        assert!(allow_view(&first("watch ls")).unwrap().exact_only);
        assert!(allow_view(&first("find . -delete")).unwrap().exact_only);
        assert_eq!(allow_view(&first("$x y")), None);
        assert_eq!(
            deny_views(&first("FOO=1 sudo /bin/rm -rf x")),
            [
                "FOO=1 sudo /bin/rm -rf x",
                "sudo /bin/rm -rf x",
                "/bin/rm -rf x",
                "rm -rf x"
            ]
        );
    }

    #[test]
    fn read_only_set() {
        let w = wd();
        for c in [
            "ls",
            "ls -la src",
            "cat README.md",
            "grep -r foo src",
            "grep -A 3 foo src",
            "rg -g '*.rs' foo",
            "grep /etc src",
            "git status",
            "git --no-pager log -5",
            "git diff HEAD~1",
            "git branch",
            "cd src",
            "echo hi",
            "find . -name '*.rs'",
            "wc -l *.rs",
            "LANG=C ls",
            "git config --get user.name",
        ] {
            assert!(is_read_only(&first(c), &w), "{c}");
        }
        for c in [
            "cat /etc/passwd",
            "ls ~",
            "rm x",
            "git push",
            "git -c core.pager=sh log",
            "git diff --output=x",
            "find . -delete",
            "find . -exec rm {} ;",
            "find *.rs",
            "sort -o out in",
            "cd /",
            "git branch -D x",
            "FOO=1 ls",
            "./ls",
            "cat $X",
            "git grep -Ovim x",
            "rg --pre sh x",
        ] {
            assert!(!is_read_only(&first(c), &w), "{c}");
        }
    }

    #[test]
    fn accept_edits_commands() {
        let w = wd();
        for c in [
            "mkdir -p src/a",
            "touch a b",
            "rm -rf build",
            "mv a b",
            "cp a b",
            "sed -i s/a/b/g f.txt",
        ] {
            assert!(is_in_scope_fs_command(&first(c), &w), "{c}");
        }
        for c in [
            "rm -rf /tmp/x",
            "cp /etc/passwd .",
            "mkdir $X",
            "sed -i 's/a/b/e' f",
            "sed -i 'w /tmp/x' f",
            "chmod 777 x",
            "rm *.o",
        ] {
            assert!(!is_in_scope_fs_command(&first(c), &w), "{c}");
        }
    }
}
