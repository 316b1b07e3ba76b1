//! Issue 13, class 5: files written through options of known programs are checked like
//! redirects (protected paths, out-of-scope writes), even when an allow rule matches the
//! command, and program-running options make the call ask. A deliberate step beyond Claude
//! Code, which checks redirects only.

use agent_core::permissions::{Behavior, PermissionMode, Step};
use serde_json::json;

use crate::support::{HOME, asked_under, check, engine};

/// (allow rule, command template with `T` for the written file), every spelling.
const WRITES: &[(&str, &str)] = &[
    ("Bash(git log *)", "git log --output=T"),
    ("Bash(git log *)", "git log --output T"),
    ("Bash(git log *)", "git log --outp=T"),
    ("Bash(git log *)", "git log --outp T"),
    ("Bash(git log *)", "git log -p --output=T"),
    ("Bash(git diff *)", "git diff --out=T"),
    ("Bash(sort *)", "sort -o T in.txt"),
    ("Bash(sort *)", "sort -oT in.txt"),
    ("Bash(sort *)", "sort -uo T in.txt"),
    ("Bash(sort *)", "sort -uoT in.txt"),
    ("Bash(sort *)", "sort --output=T in.txt"),
    ("Bash(sort *)", "sort --outp=T in.txt"),
    ("Bash(sort *)", "sort --output T in.txt"),
    ("Bash(sort *)", "sort in.txt -o T"),
    ("Bash(tree *)", "tree -o T"),
    ("Bash(tree *)", "tree -oT"),
    ("Bash(tree *)", "tree -ao T"),
    ("Bash(cp *)", "cp -t T a"),
    ("Bash(cp *)", "cp -tT a"),
    ("Bash(cp *)", "cp --target-directory=T a"),
    ("Bash(cp *)", "cp --target=T a"),
    ("Bash(mv *)", "mv -t T a"),
    ("Bash(install *)", "install -t T a"),
    ("Bash(tee *)", "tee T"),
    ("Bash(dd *)", "dd if=in.txt of=T"),
    ("Bash(tar *)", "tar -cf T a"),
    ("Bash(tar *)", "tar -c -f T a"),
    ("Bash(tar *)", "tar --create --file=T a"),
    ("Bash(tar *)", "tar cf T a"),
    ("Bash(tar *)", "tar -czf T a"),
    ("Bash(curl *)", "curl -o T https://example.com"),
    ("Bash(curl *)", "curl -oT https://example.com"),
    ("Bash(curl *)", "curl --output T https://example.com"),
    ("Bash(curl *)", "curl --out=T https://example.com"),
    ("Bash(curl *)", "curl -D T https://example.com"),
    ("Bash(curl *)", "curl -c T https://example.com"),
    ("Bash(wget *)", "wget -O T https://example.com"),
    ("Bash(wget *)", "wget -OT https://example.com"),
    (
        "Bash(wget *)",
        "wget --output-document=T https://example.com",
    ),
    ("Bash(wget *)", "wget -o T https://example.com"),
];

#[test]
fn protected_files_written_through_options_are_never_approved_by_an_allow_rule() {
    for (rule, template) in WRITES {
        for target in ["~/.bashrc", ".git/config", ".bashrc", "sub/.npmrc"] {
            let cmd = template.replace('T', target);
            for mode in [PermissionMode::Default, PermissionMode::AcceptEdits] {
                let e = engine(json!({"permissions": {"allow": [rule]}}), mode);
                let d = check(&e, "Bash", &cmd);
                assert_ne!(
                    d.behavior,
                    Behavior::Allow,
                    "{mode:?} {rule}: {cmd:?}: {}",
                    d.reason
                );
            }
            let e = engine(
                json!({"permissions": {"allow": [rule]}}),
                PermissionMode::DontAsk,
            );
            assert_eq!(
                check(&e, "Bash", &cmd).behavior,
                Behavior::Deny,
                "dontAsk {cmd:?}"
            );
        }
    }
}

#[test]
fn files_written_through_options_outside_the_working_directories_ask() {
    for (rule, template) in WRITES {
        for target in ["/etc/x", "../elsewhere/x", &format!("{HOME}/x")] {
            let cmd = template.replace('T', target);
            let e = engine(
                json!({"permissions": {"allow": [rule]}}),
                PermissionMode::AcceptEdits,
            );
            let d = check(&e, "Bash", &cmd);
            assert_ne!(d.behavior, Behavior::Allow, "{rule}: {cmd:?}: {}", d.reason);
        }
    }
}

#[test]
fn files_written_through_options_inside_are_approved_as_edits() {
    for (rule, template) in WRITES {
        if rule.contains("tee") || template.starts_with("tar cf") {
            continue;
        }
        let cmd = template.replace('T', "out.txt");
        let e = engine(
            json!({"permissions": {"allow": [rule]}}),
            PermissionMode::AcceptEdits,
        );
        let d = check(&e, "Bash", &cmd);
        assert_eq!(d.behavior, Behavior::Allow, "{rule}: {cmd:?}: {}", d.reason);
        // In default mode the write needs an Edit rule, as a redirect would.
        let e = engine(
            json!({"permissions": {"allow": [rule, "Edit(./out.txt)"]}}),
            PermissionMode::Default,
        );
        assert_eq!(check(&e, "Bash", &cmd).behavior, Behavior::Allow, "{cmd:?}");
    }
}

#[test]
fn program_running_options_ask_whatever_rule_allowed_the_program() {
    for (rule, cmd) in [
        ("Bash(git log *)", "git log --ext-diff"),
        ("Bash(git diff *)", "git diff --ext"),
        ("Bash(git log *)", "git log --textconv"),
        ("Bash(git log *)", "git log --textc"),
        (
            "Bash(npm run test *)",
            "npm run test --script-shell=/tmp/x.sh",
        ),
        (
            "Bash(npm run test *)",
            "npm run test --script-shell /tmp/x.sh",
        ),
        ("Bash(git *)", "git -c core.pager=x log"),
        ("Bash(git *)", "git -c core.fsmonitor=x status"),
        ("Bash(git *)", "git -c alias.x=!y x"),
        ("Bash(git *)", "git -ccore.sshCommand=x fetch"),
        ("Bash(git *)", "git --config-env=core.pager=P log"),
        ("Bash(git *)", "git fetch --upload-pack=x"),
        ("Bash(git *)", "git rebase --exec x"),
        ("Bash(git *)", "git rebase -x x"),
        ("Bash(git *)", "git grep -O x"),
        ("Bash(git *)", "git grep --open=x y"),
        ("Bash(rg *)", "rg --pre x y"),
        ("Bash(rg *)", "rg -z y"),
        ("Bash(sort *)", "sort --compress-program=x in.txt"),
        ("Bash(tar *)", "tar -xf a.tar --to-command=x"),
        ("Bash(tar *)", "tar -cf a.tar -I x a"),
        ("Bash(rsync *)", "rsync -e x a b"),
        ("Bash(date *)", "date -s 2020-01-01"),
        ("Bash(date *)", "date --se=2020-01-01"),
    ] {
        asked_under(rule, cmd, Step::Safety);
    }
    // Exactly spelled options that merely share a prefix are not taken for them.
    let e = engine(
        json!({"permissions": {"allow": ["Bash(git *)"]}}),
        PermissionMode::Default,
    );
    for cmd in [
        "git diff --text",
        "git -c color.ui=never log",
        "git log --stat",
    ] {
        assert_eq!(check(&e, "Bash", cmd).behavior, Behavior::Allow, "{cmd:?}");
    }
}

/// Issue 24, classes 10 and 11: files a command reads although no operand names them as a
/// plain file (`git diff` given a path outside the work tree switches to `--no-index`; a
/// checksum `--check` reads every file its list names) are checked like reads through
/// options, whatever rule allowed the program.
#[test]
fn reads_outside_through_git_diff_or_a_checksum_list_ask_under_an_allow_rule() {
    for (rule, cmd) in [
        ("Bash(git diff *)", "git diff /etc/passwd in.txt"),
        ("Bash(git diff *)", "git diff ../../x in.txt"),
        ("Bash(git diff *)", "git diff --no-index /etc/passwd in.txt"),
        ("Bash(git diff *)", "git diff --stat ~/.ssh/id_rsa in.txt"),
        ("Bash(git *)", "git -C /etc diff passwd group"),
        ("Bash(git *)", "git --work-tree=/ diff etc/passwd x"),
        ("Bash(md5sum *)", "md5sum -c sums.txt"),
        ("Bash(sha256sum *)", "sha256sum --check sums.txt"),
        ("Bash(sha256sum *)", "sha256sum --ch sums.txt"),
        ("Bash(b2sum *)", "b2sum -c sums.txt"),
        ("Bash(cksum *)", "cksum --check sums.txt"),
        ("Bash(md5sum *)", "md5sum -bc sums.txt"),
    ] {
        for mode in [PermissionMode::Default, PermissionMode::AcceptEdits] {
            let e = engine(json!({"permissions": {"allow": [rule]}}), mode);
            let d = check(&e, "Bash", cmd);
            assert_ne!(
                d.behavior,
                Behavior::Allow,
                "{mode:?} {rule}: {cmd:?}: {}",
                d.reason
            );
        }
    }
    for (rule, cmd) in [
        ("Bash(git diff *)", "git diff HEAD~1 -- src"),
        ("Bash(git diff *)", "git diff main..feature"),
        ("Bash(md5sum *)", "md5sum a.txt b.txt"),
    ] {
        let e = engine(
            json!({"permissions": {"allow": [rule]}}),
            PermissionMode::Default,
        );
        assert_eq!(check(&e, "Bash", cmd).behavior, Behavior::Allow, "{cmd:?}");
    }
}
