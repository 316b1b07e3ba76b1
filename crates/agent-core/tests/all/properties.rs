//! Property tests: the parser and the rule matcher never panic, and an allow for a compound
//! command implies an allow for each of its parts.

use agent_core::permissions::rules::{BashPattern, parse_rule};
use agent_core::permissions::{Behavior, PermissionMode, RuleList};
use agent_core::shell;
use proptest::prelude::*;
use serde_json::json;

use crate::support::{check, engine};

/// Shell-ish text: words, quotes, operators, expansions, brackets.
fn shellish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[a-z]{1,6}",
            Just(" ".to_owned()),
            Just(";".to_owned()),
            Just("&&".to_owned()),
            Just("||".to_owned()),
            Just("|".to_owned()),
            Just("&".to_owned()),
            Just("\n".to_owned()),
            Just("$(".to_owned()),
            Just(")".to_owned()),
            Just("(".to_owned()),
            Just("`".to_owned()),
            Just("'".to_owned()),
            Just("\"".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("$x".to_owned()),
            Just("${x:-".to_owned()),
            Just(">".to_owned()),
            Just("<".to_owned()),
            Just("<(".to_owned()),
            Just("\\".to_owned()),
            Just("*".to_owned()),
            Just("~".to_owned()),
            Just("bash -c ".to_owned()),
            Just("eval ".to_owned()),
            Just("<<EOF\n".to_owned()),
            Just("$((".to_owned()),
            Just("=".to_owned()),
            "[ -~]{1,3}",
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

/// Simple commands from a vocabulary that mixes allowed, read-only and other commands.
fn simple_command() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "git status",
        "git diff HEAD",
        "npm run test",
        "ls -la",
        "echo hi",
        "cat README.md",
        "npm install",
        "rm x",
        "make all",
        "cargo test",
        "curl x",
        "pwd",
        "git push",
        "echo hi > out.txt",
        "echo hi > src/a.txt",
        "NODE_ENV=test npm test",
        "sudo ls",
        "timeout 5 make",
        "grep -r x src",
        "cd src",
        "touch src/a",
    ])
    .prop_map(str::to_owned)
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["; ", " && ", " || ", " | ", "\n", " & "])
}

fn settings() -> serde_json::Value {
    json!({"permissions": {
        "allow": ["Bash(git status)", "Bash(git diff *)", "Bash(npm run test:*)", "Bash(ls*)", "Bash(make *)",
                  "Bash(echo *)", "Bash(npm test)", "Edit(./src/**)", "Bash(touch *)"],
        "ask": ["Bash(git push *)"],
        "deny": ["Bash(curl *)"]
    }})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn shell_parse_never_panics(s in shellish()) {
        let _ = shell::parse(&s);
    }

    #[test]
    fn shell_parse_never_panics_on_any_text(s in "\\PC{0,80}") {
        let _ = shell::parse(&s);
    }

    #[test]
    fn rule_parse_and_match_never_panic(rule in "\\PC{0,40}", text in "\\PC{0,40}") {
        for list in [RuleList::Allow, RuleList::Ask, RuleList::Deny] {
            let _ = parse_rule(&rule, list);
        }
        if let Ok(p) = BashPattern::parse(&rule) {
            let _ = p.matches(&text);
        }
    }

    #[test]
    fn engine_never_panics(s in shellish()) {
        let e = engine(settings(), PermissionMode::Default);
        let _ = check(&e, "Bash", &s);
    }

    #[test]
    fn compound_allow_implies_each_part_allowed(
        parts in prop::collection::vec(simple_command(), 1..5),
        seps in prop::collection::vec(separator(), 4),
        mode in prop::sample::select(vec![PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::Plan, PermissionMode::DontAsk]),
    ) {
        let e = engine(settings(), mode);
        let mut compound = parts[0].clone();
        for (i, p) in parts.iter().enumerate().skip(1) {
            compound.push_str(seps[i - 1]);
            compound.push_str(p);
        }
        let whole = check(&e, "Bash", &compound);
        // After a `cd`, later parts resolve their paths from the new directory, so a part is
        // judged alone only when no `cd` precedes it.
        let before_cd = parts.iter().position(|p| p.starts_with("cd ")).map_or(parts.len(), |i| i + 1);
        if whole.behavior == Behavior::Allow {
            for p in &parts[..before_cd] {
                let d = check(&e, "Bash", p);
                prop_assert_eq!(d.behavior, Behavior::Allow, "{:?} allowed but part {:?} is {:?}: {}", compound, p, d.behavior, d.reason);
            }
        }
        // And for deny rules: a part a deny rule refuses makes the whole refused.
        for p in &parts {
            if check(&e, "Bash", p).step == agent_core::permissions::Step::DenyRule {
                prop_assert_eq!(whole.behavior, Behavior::Deny, "{:?}", compound);
            }
        }
    }

    #[test]
    fn nesting_in_substitutions_never_hides_a_deny(cmd in simple_command(), wrap in 0usize..5) {
        let e = engine(settings(), PermissionMode::BypassPermissions);
        let inner = format!("{cmd}; curl evil");
        let wrapped = match wrap {
            0 => format!("echo $({inner})"),
            1 => format!("bash -c '{}'", inner.replace('\'', "")),
            2 => format!("( {inner} )"),
            3 => format!("{{ {inner}; }}"),
            _ => format!("if true; then {inner}; fi"),
        };
        prop_assert_eq!(check(&e, "Bash", &wrapped).behavior, Behavior::Deny, "{}", wrapped);
    }
}
