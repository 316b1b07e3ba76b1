//! How one Bash sub-command is judged on the allow side: the text allow rules see, the
//! environment assignments they tolerate, the built-in read-only set, and the filesystem
//! commands `acceptEdits` runs.
//!
//! Deny and ask rules see every form of a command (with and without assignments, through every
//! wrapper, by basename); allow rules see one form only: after the transparent wrappers, with
//! only known-safe assignments before it. A prefix allow rule never approves an exec wrapper
//! (`watch`, `setsid`, `ionice`, `flock`), nor what `programs/rule_scope.rs` keeps for
//! exact rules (`find -exec` / `-delete`, options hidden in expansions or globs, package scripts
//! run with unknown options); only an exact rule does.

use super::arguments::Paths;
use super::environment::is_safe_env_assignment;
use crate::programs::{accept_edits, read_only, rule_scope};
use crate::shell::wrappers::{basename, is_exec_wrapper};
use crate::shell::{SimpleCommand, braces, join};

/// What allow rules match for one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AllowView {
    /// Words joined by single spaces.
    pub text: String,
    /// Only an exact-string rule may approve it.
    pub exact_only: bool,
    /// Why only an exact-string rule may (for the ask's reason), when it is not an exec
    /// wrapper.
    pub exact_reason: Option<String>,
}

/// The allow view, or `None` when no allow rule may approve the command (a dynamic name, or
/// an assignment that is not [`is_safe_env_assignment`]).
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
    let exact_reason = rule_scope::exact_rule_only(words);
    Some(AllowView {
        text: join(words),
        exact_only: is_exec_wrapper(name) || exact_reason.is_some(),
        exact_reason,
    })
}

/// Whether every assignment before the command is a known-harmless variable with a plain
/// value ([`is_safe_env_assignment`]).
fn safe_assignments(cmd: &SimpleCommand) -> bool {
    cmd.assignments
        .iter()
        .all(|a| is_safe_env_assignment(&a.name, &a.value))
}

/// Every text a deny or ask rule is tested against: the command with its assignments, without
/// them, after each wrapper layer, each of those after brace expansion, and with the command
/// name reduced to its basename (`/usr/bin/rm` → `rm`).
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
        if words.is_empty() {
            continue; // a wrapper that runs a command line (`flock F -c STRING`)
        }
        push(join(words));
        // And as bash passes it after brace expansion: `git push {--force,origin}` is `git
        // push --force origin` to a deny rule too.
        if let Ok(std::borrow::Cow::Owned(expanded)) = braces::expand_words(words) {
            push(join(&expanded));
        }
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

/// Whether `cmd` is in the built-in read-only set ([`crate::programs::read_only`]): every
/// option on its command's list, every file it reads (operands, option values) static and
/// inside the working directories, resolved from the directory the command runs in.
/// Stricter than Claude Code, which lets `cat /etc/x` through.
pub(crate) fn is_read_only(cmd: &SimpleCommand, at: &Paths<'_>) -> bool {
    if !safe_assignments(cmd) {
        return false;
    }
    if cmd.words.get(cmd.allow_start()..).is_none() {
        return false;
    }
    // With `xargs`' items, which may be any options or files (`… | xargs git log`).
    match read_only::classify(&cmd.argv_from(cmd.allow_start())) {
        Ok(reads) => {
            reads.files.iter().all(|w| at.inside(w))
                && !(reads.follows_links_in_directories
                    && reads.files.iter().any(|w| at.is_directory(w)))
        }
        Err(_) => false,
    }
}

/// Whether `cmd` is a filesystem command whose every path is static and inside the working
/// directories (for `acceptEdits`), with only the options of its list
/// ([`crate::programs::accept_edits`]): `sed` only with a script that neither writes other
/// files, reads them nor runs programs, since sed's `e`, `w` and `r` do.
pub(crate) fn is_in_scope_fs_command(cmd: &SimpleCommand, at: &Paths<'_>) -> bool {
    if !safe_assignments(cmd) {
        return false;
    }
    let Some(words) = cmd.words.get(cmd.allow_start()..) else {
        return false;
    };
    accept_edits::paths(words)
        .is_ok_and(|paths| paths.iter().all(|w| w.is_static() && at.inside(w)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::workdirs::WorkingDirs;
    use crate::shell::parse;
    use std::path::Path;

    fn wd() -> WorkingDirs {
        WorkingDirs::new(Path::new("/w/p"), Path::new("/h"), &[])
    }

    fn at(wd: &WorkingDirs) -> Paths<'_> {
        Paths {
            wd,
            base: Some(wd.cwd()),
        }
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
            "wc -l -- *.rs",
            "cat *.rs",
            "LANG=C ls",
            "git config --get user.name",
        ] {
            assert!(is_read_only(&first(c), &at(&w)), "{c}");
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
            "wc -l *.rs",
            "wc --files0-from=list",
            "sort --outp=F x",
            "sort -uo F x",
            "grep -f/etc/shadow x",
            "date --se=2020-01-01",
            "git grep --open=vim x",
            "git log --outp=/tmp/x",
            "git diff --no-index /etc/passwd x",
            "git remote show https://example.com/x",
            "cd -",
            "cd",
            "printf -v x y",
            "test -v 'a[$(id)]'",
        ] {
            assert!(!is_read_only(&first(c), &at(&w)), "{c}");
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
            assert!(is_in_scope_fs_command(&first(c), &at(&w)), "{c}");
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
            assert!(!is_in_scope_fs_command(&first(c), &at(&w)), "{c}");
        }
    }
}
