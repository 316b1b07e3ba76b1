//! Issue 13, classes 2 and 3: the read-only set is an allowlist of options per command, parsed
//! as the program parses them. Every option of every command's list is tried in its long,
//! `=`, separate-argument, attached and clustered forms (read-only), its abbreviated form
//! (never read-only: the program would complete it against its own whole table), and with a
//! file value outside the working directories (not read-only); every option left off a list
//! on purpose is tried in every spelling (never read-only).

use agent_core::permissions::{Behavior, PermissionMode};
use agent_core::programs::getopt::{Arity, OptTable, ValueKind};
use agent_core::programs::read_only::{COMMANDS, Operands};
use serde_json::json;

use crate::support::{check, engine};

fn read_only(cmd: &str) -> bool {
    let e = engine(json!({}), PermissionMode::Default);
    let d = check(&e, "Bash", cmd);
    d.behavior == Behavior::Allow && d.reason == "built-in read-only command"
}

/// Each option's spellings: (form, whether it should be read-only).
fn forms(table: &OptTable, value: &str) -> Vec<(String, bool)> {
    let partner = table
        .options
        .iter()
        .find(|o| o.arity == Arity::None && o.short.is_some())
        .and_then(|o| o.short);
    let mut out = Vec::new();
    for o in &table.options {
        let v = if o.value == ValueKind::ReadPath {
            "in.txt"
        } else {
            value
        };
        if let Some(c) = o.short {
            match o.arity {
                Arity::None => {
                    out.push((format!("-{c}"), true));
                    if let Some(p) = partner.filter(|p| *p != c) {
                        out.push((format!("-{p}{c}"), true));
                    }
                }
                Arity::Required => {
                    out.push((format!("-{c}{v}"), true));
                    out.push((format!("-{c} {v}"), true));
                    if let Some(p) = partner.filter(|p| *p != c) {
                        out.push((format!("-{p}{c}{v}"), true));
                        out.push((format!("-{p}{c} {v}"), true));
                    }
                    if o.value == ValueKind::ReadPath {
                        out.push((format!("-{c}/etc/passwd"), false));
                        out.push((format!("-{c} /etc/passwd"), false));
                    }
                }
                Arity::Optional => {
                    out.push((format!("-{c}"), true));
                    out.push((format!("-{c}{v}"), true));
                }
            }
        }
        for l in &o.long {
            match o.arity {
                Arity::None => out.push((format!("--{l}"), true)),
                Arity::Required => {
                    out.push((format!("--{l}={v}"), true));
                    out.push((format!("--{l} {v}"), true));
                    if o.value == ValueKind::ReadPath {
                        out.push((format!("--{l}=/etc/passwd"), false));
                        out.push((format!("--{l} /etc/passwd"), false));
                    }
                }
                Arity::Optional => {
                    out.push((format!("--{l}"), true));
                    out.push((format!("--{l}={v}"), true));
                }
            }
            // The abbreviated spelling, unless it is itself a listed name.
            let short: String = l
                .chars()
                .take(l.chars().count().saturating_sub(1))
                .collect();
            let listed = table
                .options
                .iter()
                .any(|x| x.long.contains(&short.as_str()));
            if short.len() >= 2 && !listed {
                out.push((format!("--{short}"), false));
            }
        }
    }
    out
}

fn operands(op: Operands) -> &'static str {
    match op {
        Operands::None | Operands::Format => "",
        Operands::Text => " a",
        Operands::Paths => " in.txt",
        Operands::PatternThenPaths => " -e pat in.txt",
    }
}

#[test]
fn every_listed_option_in_every_spelling() {
    let mut failures = Vec::new();
    let mut tried = 0;
    for c in COMMANDS {
        let table = OptTable::parse(c.options, c.numeric);
        for name in c.names {
            for (form, want) in forms(&table, "1") {
                let cmd = format!("{name} {form}{}", operands(c.operands));
                tried += 1;
                if read_only(&cmd) != want {
                    failures.push(format!("{cmd:?}: expected read-only = {want}"));
                }
            }
        }
    }
    assert!(tried > 1500, "only {tried} forms");
    assert!(
        failures.is_empty(),
        "{} of {tried}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_git_subcommand_option_in_every_spelling() {
    let mut failures = Vec::new();
    let mut tried = 0;
    for (names, text) in agent_core::programs::git_read_only_subcommands() {
        let text: &'static str = Box::leak(text.into_boxed_str());
        let table = OptTable::parse(text, false);
        for name in names {
            for (form, want) in forms(&table, "1") {
                // `branch`/`tag` take operands only with --list; pass none.
                let cmd = format!("git {name} {form}");
                tried += 1;
                if read_only(&cmd) != want {
                    failures.push(format!("{cmd:?}: expected read-only = {want}"));
                }
            }
        }
    }
    assert!(tried > 800, "only {tried} forms");
    assert!(
        failures.is_empty(),
        "{} of {tried}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Options left off the lists on purpose, each as (command, long name, short letter, a
/// no-argument short option of the same command to cluster with).
const FORBIDDEN: &[(&str, &str, Option<char>, char)] = &[
    ("sort", "output", Some('o'), 'u'),
    ("sort", "compress-program", None, 'u'),
    ("sort", "files0-from", None, 'u'),
    ("sort", "temporary-directory", Some('T'), 'u'),
    ("wc", "files0-from", None, 'l'),
    ("du", "files0-from", None, 's'),
    ("date", "set", Some('s'), 'u'),
    ("date", "file", Some('f'), 'u'),
    ("file", "magic-file", Some('m'), 'b'),
    ("file", "compile", Some('C'), 'b'),
    ("file", "files-from", Some('f'), 'b'),
    ("file", "uncompress", Some('z'), 'b'),
    ("diff", "from-file", None, 'q'),
    ("diff", "to-file", None, 'q'),
    ("diff", "paginate", Some('l'), 'q'),
    ("tree", "", Some('o'), 'a'),
    ("rg", "pre", None, 'i'),
    ("rg", "search-zip", Some('z'), 'i'),
    ("rg", "hostname-bin", None, 'i'),
    ("ls", "nonexistent-option", Some('j'), 'l'),
    // Issue 24, class 7: they follow symbolic links while they walk directories.
    ("ls", "dereference", Some('L'), 'l'),
    ("grep", "dereference-recursive", Some('R'), 'i'),
    ("du", "dereference", Some('L'), 's'),
    ("rg", "follow", Some('L'), 'i'),
    ("tree", "", Some('l'), 'a'),
    // Issue 24, class 11: they read every file the checksum list names.
    ("md5sum", "check", Some('c'), 'b'),
    ("sha256sum", "check", Some('c'), 'b'),
    ("sha1sum", "check", Some('c'), 'z'),
    ("cksum", "check", Some('c'), 'z'),
];

#[test]
fn options_left_off_the_lists_are_refused_in_every_spelling() {
    for (cmd, long, short, partner) in FORBIDDEN {
        let mut spellings = Vec::new();
        if !long.is_empty() {
            for n in [long.len(), long.len().div_ceil(2).max(3)] {
                let l = &long[..n.min(long.len())];
                spellings.push(format!("--{l}=x"));
                spellings.push(format!("--{l} x"));
                spellings.push(format!("--{l}"));
            }
        }
        if let Some(c) = short {
            for f in [
                format!("-{c}x"),
                format!("-{c} x"),
                format!("-{partner}{c} x"),
                format!("-{partner}{c}x"),
                format!("-{c}"),
            ] {
                spellings.push(f);
            }
        }
        for s in spellings {
            for text in [format!("{cmd} {s} in.txt"), format!("{cmd} in.txt {s}")] {
                assert!(!read_only(&text), "{text:?} is read-only");
            }
        }
    }
}

#[test]
fn git_options_that_write_run_or_change_the_repository_are_refused() {
    for text in [
        "git log --output=x",
        "git log --outp=x",
        "git log --output x",
        "git diff --ext-diff",
        "git diff --ext",
        "git log --textconv",
        "git diff -Oorder.txt",
        "git diff --no-index a b",
        "git grep -O x",
        "git grep -Ovim x",
        "git grep --open-files-in-pager=vim x",
        "git grep --open=vim x",
        "git -c core.pager=sh log",
        "git -ccore.pager=sh log",
        "git --config-env=core.pager=X log",
        "git -C / status",
        "git --git-dir=/etc status",
        "git --work-tree=/ status",
        "git --exec-path=/tmp status",
        "git remote show origin",
        "git remote show https://example.com/r",
        "git remote add x y",
        "git branch newbranch",
        "git tag v1",
        "git config core.pager sh",
        "git stash",
        "git log $X",
        "git log \"$X\"",
        "git status *",
        // Issue 24, class 10: `git diff` given a path outside the work tree is `--no-index`.
        "git diff /etc/passwd x",
        "git diff ../../x y",
        "git diff --stat ~/.ssh/id_rsa x",
        "git log -- /etc/passwd",
        "git show HEAD -- ../x",
        "git log -- \"$X\"",
        "git diff \"$X\" y",
        "git stash show -p /etc/passwd",
    ] {
        assert!(!read_only(text), "{text:?} is read-only");
    }
    for text in [
        "git log -- src",
        "git diff HEAD~1 -- src/a.rs",
        "git diff main..feature",
        "git show HEAD:src/a.rs",
        "git remote show -n origin",
        "git branch --list 'feat*'",
        "git config --get user.name",
        "git --no-pager log --oneline -5",
        "git -P diff --stat",
    ] {
        assert!(read_only(text), "{text:?} is not read-only");
    }
}

#[test]
fn words_only_known_at_run_time_never_stand_where_options_are_read() {
    for text in [
        "wc $X",
        "wc \"$X\"",
        "sort $(cat opts) x",
        "cat $F",
        "head -n $N x",
        "ls `echo -R`",
        "printf \"$f\" x",
        "[ \"$a\" \"$b\" ]",
        "[ $x = y ]",
        "find $D -name x",
        "wc *",
        "sort *.txt",
        // A file named `-RL`, `-R` or `-c` would make these follow links out or read the
        // files a list names (issue 24, classes 7 and 11).
        "ls *",
        "grep x *",
        "md5sum *",
        "sort -k * x",
    ] {
        assert!(!read_only(text), "{text:?} is read-only");
    }
    for text in [
        "echo $X",
        "head -n \"$N\" x",
        "printf '%s\\n' $X",
        "[ -n \"$x\" ]",
        "[ \"$a\" = b ]",
        "cat -- in.txt",
        "wc -l -- *.txt",
        "ls -- *",
        "grep x -- *",
        "cat *.rs",
    ] {
        assert!(read_only(text), "{text:?} is not read-only");
    }
}

/// docs/permissions.md and docs/sandbox.md list every command's allowed options; they must be
/// the table the code uses. Regenerate with
/// `AGENT_WRITE_DOCS=1 cargo test -p agent-core read_only_table_in_docs`.
#[test]
fn read_only_table_in_docs() {
    for doc in ["permissions.md", "sandbox.md"] {
        let path = format!("{}/../../docs/{doc}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = (
            "<!-- read-only-table:begin -->\n",
            "<!-- read-only-table:end -->",
        );
        let start = text.find(begin).expect("the begin marker") + begin.len();
        let stop = text.find(end).expect("the end marker");
        let table = agent_core::programs::read_only::markdown_table();
        if std::env::var_os("AGENT_WRITE_DOCS").is_some() {
            let updated = format!("{}{table}{}", &text[..start], &text[stop..]);
            std::fs::write(&path, updated).unwrap();
            continue;
        }
        assert_eq!(
            &text[start..stop],
            table,
            "docs/{doc} is stale: regenerate it"
        );
    }
}
