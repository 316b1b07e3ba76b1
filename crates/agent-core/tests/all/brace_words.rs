//! Issue 24, class 8: a word with brace expansion is as many words as bash makes of it, and
//! each is checked: `cat {.,/}/etc/x` reads `//etc/x` too, so it is not a read-only command
//! inside the project, and a deny rule on the file sees it.

use agent_core::permissions::{Behavior, PermissionMode};
use serde_json::json;

use crate::support::{check, engine};

#[test]
fn every_alternative_of_a_brace_is_checked_as_a_file_read() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ] {
        let e = engine(json!({}), mode);
        for cmd in [
            "cat {.,/}/etc/passwd",
            "cat {in.txt,/etc/passwd}",
            "cat in{.txt,/../../x}",
            "cat {~,.}/.ssh/id_rsa",
            "head -n1 {a,../b}",
            "grep -f {/etc/passwd,} in.txt",
            "grep -f{/etc/passwd,x} in.txt",
            "grep x {/etc,.}/passwd",
            "wc -l {/etc/passwd,}",
            "diff {/etc/passwd,in.txt}",
            "git blame --contents={,/etc/passwd} in.txt",
            "sort --random-source={/etc/passwd,in.txt} in.txt",
            "find {.,/} -name x",
            "[ -f {/etc/passwd,} ]",
            "cd {/,.} && cat etc/passwd",
            // Braces whose alternatives are quoted are braces too.
            "cat {/etc/passwd,'x y'}",
            "cat {'/etc/passwd',x}",
        ] {
            assert_ne!(
                check(&e, "Bash", cmd).behavior,
                Behavior::Allow,
                "{mode:?}: {cmd:?}"
            );
        }
        for cmd in ["cat {a,b}.txt", "ls src/{a,b}", "wc -l -- {x,y}/z.rs"] {
            assert_eq!(
                check(&e, "Bash", cmd).behavior,
                Behavior::Allow,
                "{mode:?}: {cmd:?}"
            );
        }
    }
}

#[test]
fn a_deny_rule_sees_every_alternative_of_a_brace() {
    let e = engine(
        json!({"permissions": {"deny": ["Read(//etc/**)"], "allow": ["Bash(cat *)"]}}),
        PermissionMode::Default,
    );
    for cmd in [
        "cat {/etc/passwd,x}",
        "cat /{etc,tmp}/passwd",
        "cat {x,}/etc/passwd{,}",
    ] {
        let d = check(&e, "Bash", cmd);
        assert_eq!(d.behavior, Behavior::Deny, "{cmd:?}: {}", d.reason);
    }
}

#[test]
fn a_deny_rule_sees_the_command_after_brace_expansion() {
    let e = engine(
        json!({"permissions": {
            "deny": ["Bash(git push --force *)", "Bash(rm -rf *)"],
            "allow": ["Bash(git push *)", "Bash(rm *)"]
        }}),
        PermissionMode::Default,
    );
    for cmd in [
        "git push {--force,origin}",
        "git push --{force,verbose} origin",
        "timeout 5 git push {--force,} origin",
        "rm {-rf,x}",
        "sh {-c,'rm -rf x'}",
        "find . -name x {-exec,} rm -rf {} +",
        "find . {-execdir,} {rm,-rf} x \\;",
    ] {
        let d = check(&e, "Bash", cmd);
        assert_eq!(d.behavior, Behavior::Deny, "{cmd:?}: {}", d.reason);
    }
    assert_eq!(
        check(&e, "Bash", "git push {origin,main}").behavior,
        Behavior::Allow
    );
}
