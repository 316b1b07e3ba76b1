//! Issue 24, class 12: sed is read as sed reads it. The script is every `-e` /
//! `--expression` (or else the first operand), each checked for `e`, `w`, `W`, `r`, `R`,
//! `s///e` and `s///w`; a script from `-f` or only known at run time cannot be checked; a
//! `-i` suffix names a backup file that is written too. And class 7 on the `acceptEdits`
//! side: its filesystem commands take only the options of their lists, so `cp -L` (which
//! copies what the links in a tree lead to) is asked about.

use agent_core::permissions::{Behavior, PermissionMode, Step};
use serde_json::json;

use crate::support::{allowed_under, asked_under, check, engine};

fn accept_edits(cmd: &str) -> Behavior {
    check(&engine(json!({}), PermissionMode::AcceptEdits), "Bash", cmd).behavior
}

#[test]
fn accept_edits_runs_sed_only_with_scripts_that_edit_text() {
    for cmd in [
        "sed -i -e 's/a/b/w /tmp/x' f.txt",
        "sed -i --expression='1e id' f.txt",
        "sed -i --expression '1e id' f.txt",
        "sed -i -e s/a/b/ -e 'w out.txt' f.txt",
        "sed -ni 's/a/b/w /tmp/x' f.txt",
        "sed -i 's/[/]/x/w /tmp/y' f.txt",
        "sed -i 's/a/b/;e id' f.txt",
        "sed -i 's/x/id/e' f.txt",
        "sed -n -i 'r /etc/passwd' f.txt",
        "sed -i '$R /etc/shadow' f.txt",
        "sed -i '1W out' f.txt",
        "sed -i -f script.sed f.txt",
        "sed -i --file=script.sed f.txt",
        "sed -i \"s/a/$X/\" f.txt",
        "sed --posix -i s/a/b/ f.txt",
        "sed -i --follow-symlinks s/a/b/ f.txt",
        "sed -i'/tmp/*' s/a/b/ f.txt",
        "sed '-i/tmp/*' s/a/b/ f.txt",
        "sed -i'bak/*' s/a/b/ f.txt",
        "sed --in-place=/../x s/a/b/ f.txt",
        "sed --in-place='*' s/a/b/ f.txt",
        "sed -i s/a/b/ /tmp/f.txt",
    ] {
        assert_eq!(accept_edits(cmd), Behavior::Ask, "{cmd:?}");
    }
    for cmd in [
        "sed -i s/a/b/g f.txt",
        "sed -i -e s/a/b/ -e s/c/d/ f.txt",
        "sed -i.bak 's/a/b/' f.txt",
        "sed -ie 's/a/b/' f.txt",
        "sed -i -E 's/(a|b)+/x/g' f.txt",
        "sed -i '/^#/d' f.txt",
        "sed -n '1,5p' f.txt",
        "sed -i 's/a\\/b/c/' f.txt",
        "sed -i 's/[/]/x/' f.txt",
        "sed -i '$a footer; w x' f.txt",
    ] {
        assert_eq!(accept_edits(cmd), Behavior::Allow, "{cmd:?}");
    }
}

#[test]
fn files_sed_edits_or_backs_up_are_checked_as_writes() {
    // Protected files, as the file edited (however the options are spelled) or as a backup.
    for cmd in [
        "sed -ni s/a/b/p .bashrc",
        "sed -i --expression=s/a/b/ .bashrc",
        "sed -si s/a/b/ f.txt .git/config",
        "sed -i'rc' s/a/b/ .bash",
        "sed --in-place=rc s/a/b/ .bash",
        "sed -i'.git/*' s/a/b/ config",
        // GNU sed puts the whole file name in place of `*`: the backup is `.git/config`.
        "sed -i'.*' s/a/b/ git/config",
    ] {
        for mode in [PermissionMode::AcceptEdits, PermissionMode::Default] {
            let e = engine(json!({"permissions": {"allow": ["Bash(sed *)"]}}), mode);
            let d = check(&e, "Bash", cmd);
            assert_eq!(
                (d.behavior, d.step),
                (Behavior::Ask, Step::Safety),
                "{mode:?} {cmd:?}: {}",
                d.reason
            );
        }
    }
}

#[test]
fn sed_scripts_that_run_write_or_read_ask_whatever_rule_allowed_sed() {
    for (cmd, step) in [
        ("sed 's/a/b/e' f.txt", Step::Safety),
        ("sed -e '1e id' f.txt", Step::Safety),
        ("sed --expression='e' f.txt", Step::Safety),
        ("sed -n -e p -e 's/x/y/e' f.txt", Step::Safety),
        ("sed -f script.sed f.txt", Step::Safety),
        ("sed \"s/a/$X/\" f.txt", Step::Safety),
        ("sed 'w ~/.bashrc' f.txt", Step::Safety),
        ("sed -e p -e 'w .git/config' f.txt", Step::Safety),
        ("sed 's/a/b/w /tmp/out' f.txt", Step::Prompt),
        ("sed 'r /etc/passwd' f.txt", Step::Prompt),
        ("sed -e p -e '1R /etc/shadow' f.txt", Step::Prompt),
    ] {
        asked_under("Bash(sed *)", cmd, step);
    }
    for cmd in ["sed -n '/x/p' f.txt", "sed -e s/a/b/ -e s/c/d/ f.txt"] {
        allowed_under("Bash(sed *)", cmd);
    }
}

#[test]
fn accept_edits_runs_filesystem_commands_only_with_listed_options() {
    for cmd in [
        "cp -rL src dst",
        "cp -R -L src dst",
        "cp -Lr src dst",
        "cp --dereference -r src dst",
        "cp -r --deref src dst",
        "cp -l a b",
        "cp -s a b",
        "cp -al src dst",
        "cp -b a b",
        "cp --suffix=x a b",
        "cp --copy-contents -r a b",
        "mv -S .x a b",
        "mv --backup a b",
        "rm --no-preserve-root -rf x",
        "touch -r /etc/passwd x",
        "cp $X a b",
    ] {
        assert_eq!(accept_edits(cmd), Behavior::Ask, "{cmd:?}");
    }
    for cmd in [
        "cp -r src dst",
        "cp -a src dst",
        "cp -rH src dst",
        "cp -R -P a b",
        "cp -- a b",
        "mkdir -p a/b",
        "touch -r in.txt out.txt",
        "rm -rf build",
        "rmdir -p a/b",
        "mv -f a b",
    ] {
        assert_eq!(accept_edits(cmd), Behavior::Allow, "{cmd:?}");
    }
}
