//! Issue 13, class 1: text bash evaluates as code at run time (array subscripts, arithmetic on
//! variables, `${!x}`, `${x@P}`, names given to builtins, code variables) is never
//! auto-approved: in every form of `tests/data/runtime_eval_forms.txt`, in every position the
//! parser walks, in every mode, under allow rules naming every command involved.

use agent_core::permissions::{Behavior, PermissionMode};
use agent_core::shell::{self, IssueKind};
use serde_json::json;

use crate::support::{check, engine};

/// The forms, with `CMD` replaced by a harmless read-only command (so only the runtime
/// evaluation can make the call unsafe).
pub fn forms() -> Vec<String> {
    include_str!("../data/runtime_eval_forms.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("CMD", "id"))
        .collect()
}

fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Every position the parser walks: top level, lists, pipelines, compound commands,
/// substitutions, shell strings, and functions.
pub fn positions(form: &str) -> Vec<String> {
    vec![
        form.to_owned(),
        format!("true && {form}"),
        format!("true; {form}"),
        format!("{{ {form}; }}"),
        format!("( {form} )"),
        format!("if true; then {form}; fi"),
        format!("while false; do {form}; done"),
        format!("case x in x) {form};; esac"),
        format!("echo \"$({form})\""),
        format!("echo `{}`", form.replace('`', "\\`")),
        format!("cat <({form})"),
        format!("bash -c {}", single_quote(form)),
        format!("sh -c {}", single_quote(form)),
        format!("eval {}", single_quote(form)),
        format!("f() {{ {form}; }}"),
    ]
}

const ALLOW: &[&str] = &[
    "Bash",
    "test",
    "[",
    "printf",
    "echo",
    "read",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "mapfile",
    "readarray",
    "getopts",
    "unset",
    "wait",
    "bash",
    "sh",
    "eval",
    "compgen",
    "complete",
    "enable",
    "alias",
    "builtin",
    "command",
    "true",
    "cat",
    "id",
    "f",
];

#[test]
fn every_form_parses_with_a_runtime_eval_issue_in_every_position() {
    for form in forms() {
        for text in positions(&form) {
            let parsed = shell::parse(&text);
            let script = match parsed {
                Ok(s) => s,
                Err(_) => continue, // a parse error is refused anyway
            };
            assert!(
                script
                    .issues
                    .iter()
                    .any(|i| matches!(i.kind, IssueKind::RuntimeEval | IssueKind::DynamicScript)),
                "no runtime-eval issue for `{text}`: {:?}",
                script.issues
            );
        }
    }
}

#[test]
fn no_mode_and_no_allow_rule_auto_approves_a_runtime_eval_form() {
    let mut allow: Vec<String> = ALLOW
        .iter()
        .skip(1)
        .map(|n| format!("Bash({n} *)"))
        .collect();
    allow.push("Bash".to_owned());
    for rules in [allow.clone(), allow[..allow.len() - 1].to_vec(), Vec::new()] {
        for mode in PermissionMode::ALL {
            let e = engine(json!({"permissions": {"allow": rules}}), mode);
            for form in forms() {
                for text in positions(&form) {
                    let d = check(&e, "Bash", &text);
                    assert_ne!(
                        d.behavior,
                        Behavior::Allow,
                        "{mode:?} allowed `{text}` with {} allow rules: {}",
                        rules.len(),
                        d.reason
                    );
                }
            }
        }
    }
}

#[test]
fn inert_forms_stay_analysable() {
    for text in [
        "echo $((1 + 2))",
        "echo ${#a[@]} ${a[0]} ${a[@]} ${!a[@]} ${!pre*}",
        "echo ${y:1:2}",
        "test -v HOME",
        "[ -v name ]",
        "[[ -v name ]]",
        "[[ 1 -eq 2 ]]",
        "[ \"$x\" -eq 1 ]",
        "[ $# -gt 0 ]",
        "printf -v out '%s' x",
        "read -r line",
        "read -a arr",
        "declare x=1 y",
        "export PATH=/usr/bin",
        "export PATH=$PATH:/usr/local/bin",
        "local x=\"$1\" y=$(date)",
        "declare -r v=\"$HOME/x\"",
        "mapfile -t lines",
        "unset x",
        "trap - EXIT",
        "trap -p",
        "a[1]=2",
    ] {
        let s = shell::parse(text).unwrap();
        assert!(
            !s.issues.iter().any(|i| i.kind == IssueKind::RuntimeEval),
            "`{text}`: {:?}",
            s.issues
        );
    }
}

#[test]
fn trap_actions_are_walked_as_scripts() {
    let s = shell::parse("trap 'rm -rf x' EXIT").unwrap();
    assert!(s.commands.iter().any(|c| c.name() == Some("rm")));
    let e = engine(
        json!({"permissions": {"allow": ["Bash(trap *)"], "deny": ["Bash(rm *)"]}}),
        PermissionMode::Default,
    );
    assert_eq!(
        check(&e, "Bash", "trap 'rm -rf x' EXIT").behavior,
        Behavior::Deny
    );
}
