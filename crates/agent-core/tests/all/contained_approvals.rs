//! Issue 24 ("approved means contained"), part C, the engine's classes 1, 4, 5, 13, 14, 15 and
//! 18: inputs the engine auto-approved although bash then ran another program, wrote a file or
//! read outside. One test per class, several inputs each, every mode that could approve them.

use agent_core::permissions::Behavior::{self, Allow, Ask, Deny};
use agent_core::permissions::{
    HookDecision, PermissionEngine, PermissionMode, PreToolUseOutcome, SandboxState, Step, ToolCall,
};
use serde_json::json;
use std::path::Path;

use crate::support::{CWD, HOME, input, settings};

const MODES: [PermissionMode; 5] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::Auto,
    PermissionMode::DontAsk,
];

fn engine_at(cwd: &Path, allow: &[&str], mode: PermissionMode) -> PermissionEngine {
    let s = agent_core::settings::Settings::from_value(
        json!({"permissions": {"allow": allow}}),
        "contained.json",
        cwd,
        Path::new(HOME),
    )
    .unwrap();
    PermissionEngine::builder(cwd, HOME)
        .settings(&s)
        .mode(mode)
        .build()
        .unwrap()
}

fn bash(e: &PermissionEngine, cmd: &str) -> agent_core::permissions::PermissionDecision {
    e.check(
        &ToolCall::new("Bash", json!({ "command": cmd })),
        &PreToolUseOutcome::default(),
    )
}

/// Every way the engine could approve `cmd` without asking a person: the read-only set and
/// the mode in each mode, a hook's allow, an allow rule naming every program, a bare `Bash`
/// allow rule, and a sandbox that auto-allows Bash.
fn approvals(cmd: &str, allow: &[&str]) -> Vec<(String, Behavior)> {
    let cwd = Path::new(CWD);
    let mut out = Vec::new();
    for mode in MODES {
        let e = engine_at(cwd, &[], mode);
        out.push((format!("{mode:?}"), bash(&e, cmd).behavior));
    }
    let e = engine_at(cwd, allow, PermissionMode::Default);
    out.push(("allow rules".into(), bash(&e, cmd).behavior));
    let e = engine_at(cwd, &["Bash"], PermissionMode::Default);
    out.push(("`Bash` allowed".into(), bash(&e, cmd).behavior));
    let hook = PreToolUseOutcome {
        decision: Some(HookDecision::Allow),
        reason: Some("hook".into()),
        updated_input: None,
    };
    let e = engine_at(cwd, &[], PermissionMode::Default);
    let d = e.check(&ToolCall::new("Bash", json!({ "command": cmd })), &hook);
    out.push(("hook allow".into(), d.behavior));
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(json!({})))
        .sandbox(SandboxState {
            active: true,
            auto_allow_bash: true,
        })
        .build()
        .unwrap();
    out.push(("sandbox auto-allow".into(), bash(&e, cmd).behavior));
    out
}

fn assert_never_approved(cmd: &str, allow: &[&str]) {
    for (how, b) in approvals(cmd, allow) {
        assert_ne!(b, Allow, "{how}: {cmd:?} was approved");
    }
}

/// Class 1: a variable the shell or programs read (`PATH`, `CDPATH`, `HOME`, `IFS`, `GIT_*`,
/// …), set in any form a script can set one, stops every approval but `bypassPermissions`;
/// lowercase shell variables and the known-harmless ones with plain values do not.
#[test]
fn a_variable_the_shell_or_programs_read_is_never_set_by_an_approved_command() {
    let allow = [
        "Bash(ls *)",
        "Bash(ls)",
        "Bash(cd *)",
        "Bash(git *)",
        "Bash(read *)",
        "Bash(export *)",
        "Bash(declare *)",
        "Bash(set *)",
        "Bash(shopt *)",
        "Bash(hash *)",
        "Bash(printf *)",
        "Bash(unset *)",
        "Bash(true)",
        "Bash(cat *)",
    ];
    for cmd in [
        "PATH=.; ls",
        "PATH=.:$PATH; ls",
        "CDPATH=/; cd tmp",
        "HOME=dot; git status",
        "HOME=/tmp; cat ~/x",
        "IFS=/; ls",
        "GIT_DIR=x; git status",
        "PAGER=sh; git log",
        "LD_PRELOAD=./x.so; ls",
        "FOO=1; ls",
        "for PATH in .; do ls; done",
        ": ${CDPATH:=/}; cd tmp",
        "ls ${PATH:=.}",
        "read PATH <<< .; ls",
        "printf -v PATH %s .; ls",
        "unset PATH; ls",
        "export GIT_DIR=x; git status",
        "export x=1; ls",
        "declare -x LD_PRELOAD=./x.so; ls",
        "set -a; x=1; ls",
        "set -o allexport; x=1; ls",
        "set -k; git diff GIT_EXTERNAL_DIFF=rm",
        "set -P; cd sub",
        "shopt -s cdable_vars; tmp=/tmp; cd tmp",
        "hash -p ./ls ls; ls",
        "coproc PATH { true; }; ls",
        "(PATH=.; ls)",
        "echo $(PATH=.; ls)",
        "bash -c 'PATH=.; ls'",
    ] {
        assert_never_approved(cmd, &allow);
    }
    let e = engine_at(Path::new(CWD), &[], PermissionMode::Default);
    for cmd in [
        "x=1; echo $x",
        "dir=src; echo $dir",
        "LANG=C; ls",
        "LC_ALL=C.UTF-8; ls",
        "for f in a b; do echo $f; done",
    ] {
        assert_eq!(bash(&e, cmd).behavior, Allow, "{cmd}");
    }
    // Shell options that change none of this stay with the rule that allows them.
    let e = engine_at(Path::new(CWD), &["Bash"], PermissionMode::Default);
    for cmd in [
        "set -euo pipefail; ls",
        "set -x; ls",
        "shopt -s nullglob dotglob; ls",
        "read -r line < f; echo $line",
        "DIR=build; mkdir -p $DIR",
    ] {
        let d = bash(&e, cmd);
        assert_eq!(
            d.behavior,
            if cmd.starts_with("DIR") { Ask } else { Allow },
            "{cmd}"
        );
    }
}

/// Class 1: `~` and `$HOME` are resolved with the session's home directory, so once the script
/// assigns HOME they are not resolvable and the command asks in every mode (a deny rule could
/// not be checked against them), `bypassPermissions` included.
#[test]
fn home_assigned_in_the_script_leaves_tilde_unresolved() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::BypassPermissions,
        PermissionMode::AcceptEdits,
    ] {
        let e = engine_at(Path::new(CWD), &["Bash"], mode);
        for cmd in [
            "HOME=/tmp; cat ~/x",
            "export HOME=/tmp; cat $HOME/x",
            "HOME=/tmp bash -c 'cat ~/x'",
            "for HOME in /tmp; do cat ~/x; done",
            "cat ~/x; HOME=/tmp",
        ] {
            let d = bash(&e, cmd);
            assert_eq!((d.behavior, d.step), (Ask, Step::Safety), "{mode:?} {cmd}");
        }
    }
}

/// Class 18: a variable that makes a known program run another program gets the answer of
/// the equivalent option (`GIT_EXTERNAL_DIFF=rm git diff` as `git -c diff.external=rm diff`):
/// only known-harmless names with plain values may stand before an approved command, in any
/// form that puts them into its environment.
#[test]
fn an_environment_variable_is_refused_like_the_option_it_stands_for() {
    let allow = [
        "Bash(git *)",
        "Bash(npm test)",
        "Bash(less *)",
        "Bash(env *)",
        "Bash(sudo *)",
        "Bash(ls *)",
        "Bash(date *)",
    ];
    for cmd in [
        "GIT_EXTERNAL_DIFF=rm git diff",
        "GIT_PAGER=sh git log",
        "PAGER=sh git log",
        "GIT_EDITOR=x git commit",
        "GIT_SSH_COMMAND=x git fetch",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=sh git log",
        "GIT_CONFIG_PARAMETERS=\"'core.pager'='sh'\" git log",
        "GIT_DIR=sub git status",
        "GIT_EXEC_PATH=. git status",
        "LESSOPEN='|sh x' less f",
        "env GIT_EXTERNAL_DIFF=rm git diff",
        "env -u X GIT_PAGER=sh git log",
        "sudo LD_PRELOAD=./x.so ls",
        "npm_config_script_shell=./x npm test",
        "x=1 ls",
        "LANG=/tmp/x ls",
        "TZ=/etc/shadow date",
        "NODE_ENV=$(id) npm test",
    ] {
        assert_never_approved(cmd, &allow);
    }
    let e = engine_at(Path::new(CWD), &allow, PermissionMode::Default);
    let option = bash(&e, "git -c diff.external=rm diff");
    let variable = bash(&e, "GIT_EXTERNAL_DIFF=rm git diff");
    assert_eq!(
        (option.behavior, option.step),
        (variable.behavior, variable.step)
    );
    let e = engine_at(Path::new(CWD), &allow, PermissionMode::DontAsk);
    assert_eq!(bash(&e, "GIT_PAGER=sh git log").behavior, Deny);
    let e = engine_at(Path::new(CWD), &allow, PermissionMode::Default);
    for cmd in [
        "NODE_ENV=test npm test",
        "LANG=C git log",
        "NO_COLOR=1 git diff",
        "TZ=Europe/Paris date +%H",
        "env LC_ALL=C ls",
    ] {
        assert_eq!(bash(&e, cmd).behavior, Allow, "{cmd}");
    }
}

/// Class 4: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` reopen, for
/// writing, whatever their descriptor holds; only the tool's own output is exempt.
#[test]
fn a_redirect_through_a_reopened_descriptor_writes_the_file_it_holds() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ] {
        let e = engine_at(Path::new(CWD), &[], mode);
        for cmd in [
            "echo evil 1<x >/dev/stdout",
            "echo evil 1<x >/dev/fd/1",
            "echo evil 1<x >/proc/self/fd/1",
            "echo evil 2<x 2>/dev/stderr",
            "echo evil 3<x >/dev/fd/3",
            "echo evil {fd}<x >/dev/fd/11",
            "echo evil 1<x 2>&1 2>/dev/stderr",
            "echo evil 1<>x",
            "{ echo evil >/dev/stdout; } 1<x",
            "bash -c 'echo evil >/dev/stdout' 1<x",
            "exec 1<x; echo evil >/dev/stdout",
        ] {
            assert_ne!(bash(&e, cmd).behavior, Allow, "{mode:?} {cmd}");
        }
        for cmd in [
            "echo hi >/dev/stdout",
            "echo oops >/dev/stderr",
            "ls >/dev/null 2>&1",
            "echo x 2>&1 >/dev/stdout",
        ] {
            assert_eq!(bash(&e, cmd).behavior, Allow, "{mode:?} {cmd}");
        }
    }
    // A protected file reopened for writing is a protected write, even in acceptEdits.
    let e = engine_at(Path::new(CWD), &[], PermissionMode::AcceptEdits);
    for cmd in [
        "echo x 2<.git/config 2>/dev/stderr",
        "echo x 1<.bashrc >/dev/stdout",
        "echo x 3<.git/hooks/pre-commit >/dev/fd/3",
    ] {
        let d = bash(&e, cmd);
        assert_eq!((d.behavior, d.step), (Ask, Step::Safety), "{cmd}");
    }
}

/// Class 5: a glob read by a read-only command is expanded against the file system when the
/// call is decided; a match that leads outside the working directories (a symlink), or an
/// expansion too large to check, is not auto-approved.
#[test]
fn a_glob_is_checked_against_every_file_it_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    let outside = root.join("outside");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::create_dir_all(proj.join("many")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("k"), "TOP secret").unwrap();
    std::fs::write(proj.join("in.txt"), "x").unwrap();
    std::fs::write(proj.join("src/a.rs"), "x").unwrap();
    std::os::unix::fs::symlink(outside.join("k"), proj.join("secret")).unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("src/dir")).unwrap();
    for i in 0..1_001 {
        std::fs::write(proj.join(format!("many/f{i}")), "").unwrap();
    }
    for mode in [
        PermissionMode::Default,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ] {
        let e = engine_at(&proj, &[], mode);
        for cmd in [
            "cat sec*",
            "grep TOP *",
            "head -n1 s?cret",
            "cat [s]ecret",
            "wc -l -- *",
            "ls *",
            "cat src/*/k",
            "grep -r TOP src/d*",
            "cat many/*",
            "ls .*",
        ] {
            assert_ne!(bash(&e, cmd).behavior, Allow, "{mode:?} {cmd}");
        }
        for cmd in ["cat in*", "cat src/*.rs", "ls src/*.rs", "wc -l -- i?.txt"] {
            assert_eq!(bash(&e, cmd).behavior, Allow, "{mode:?} {cmd}");
        }
    }
}

/// Class 13: a command that makes a link (hard or symbolic) to a protected path is a write of
/// that path, so acceptEdits asks before the link can be written as an ordinary file.
#[test]
fn linking_a_protected_path_is_a_protected_write() {
    let e = engine_at(Path::new(CWD), &[], PermissionMode::AcceptEdits);
    for cmd in [
        "cp -l .git/config cfg && echo x > cfg",
        "cp -s .git/config cfg",
        "cp -al .git g2",
        "cp --link .git/config cfg",
        "cp --symbolic-link .git/config cfg",
        "cp -rs .git g2",
        "ln .git/config cfg",
        "ln -s .git/config cfg",
        "ln -sf ../proj/.bashrc cfg",
        "link .git/config cfg",
        "mv .git/config cfg",
        "cd .git && cp -l config ../cfg",
    ] {
        let d = bash(&e, cmd);
        assert_eq!((d.behavior, d.step), (Ask, Step::Safety), "{cmd}");
    }
    for cmd in ["cp a b", "cp -r src dst"] {
        assert_eq!(bash(&e, cmd).behavior, Allow, "{cmd}");
    }
}

/// Class 14: protected names are compared as a case-insensitive file system (macOS, Windows)
/// opens them, for edit tools and shell writes alike.
#[test]
fn a_protected_name_in_another_case_is_still_protected() {
    let e = engine_at(Path::new(CWD), &[], PermissionMode::AcceptEdits);
    for cmd in [
        "echo x > .Git/config",
        "echo x > .GIT/hooks/pre-commit",
        "echo x >> .BASHRC",
        "echo x >> .Bashrc",
        "touch .VSCODE/settings.json",
        "echo x > .git./config",
        "echo x > GIT~1/config",
    ] {
        let d = bash(&e, cmd);
        assert_eq!((d.behavior, d.step), (Ask, Step::Safety), "{cmd}");
    }
    for path in [".Git/config", ".BASHRC", ".Claude/settings.json"] {
        let d = e.check(
            &ToolCall::new("Write", input("Write", path)),
            &PreToolUseOutcome::default(),
        );
        assert_eq!((d.behavior, d.step), (Ask, Step::Safety), "{path}");
    }
}

/// Class 15: git run in another directory than the session's (where a repository made of
/// plain files may name programs in its config) is not a built-in read-only command.
#[test]
fn git_in_another_directory_is_not_read_only() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ] {
        let e = engine_at(Path::new(CWD), &[], mode);
        for cmd in [
            "cd sub && git status",
            "cd sub; git log",
            "(cd sub; git log)",
            "pushd sub; git log",
            "cd sub && popd && git status",
            "cd .. && git status",
            "cd sub && /usr/bin/git status",
            "git -C sub status",
            "git --git-dir=sub status",
            "git --work-tree=sub status",
            "bash -c 'cd sub && git status'",
        ] {
            assert_ne!(bash(&e, cmd).behavior, Allow, "{mode:?} {cmd}");
        }
        for cmd in [
            "git status",
            "cd . && git status",
            "cd src/.. && git log",
            "cd src && ls",
        ] {
            assert_eq!(bash(&e, cmd).behavior, Allow, "{mode:?} {cmd}");
        }
    }
}
