//! The mode matrix of claude-code.md §4: for each of the six modes, each clause that "still
//! applies" (or that a mode waives), one test named for its cell:
//! `<mode>__<clause>`. The expected behaviours are in one table per clause, so a row reads as
//! the specification's sentence for that clause.

use agent_core::permissions::Behavior::{self, Allow, Ask, Deny};
use agent_core::permissions::{
    HookDecision, PermissionEngine, PermissionMode, PreToolUseOutcome, ToolCall,
};
use agent_core::settings::Settings;
use serde_json::{Value, json};
use std::path::Path;

use crate::support::{CWD, HOME, input};

/// Allow rules that would approve every call below, so only the clause under test can stop it.
fn settings() -> Value {
    json!({"permissions": {
        "allow": ["Bash", "Read", "Edit", "Write", "AskUserQuestion", "mcp__srv__confirm", "WebFetch"],
        "ask": ["Bash(git push *)"],
        "deny": ["Bash(curl *)"]
    }})
}

fn engine_at(cwd: &Path, value: Value, mode: PermissionMode) -> PermissionEngine {
    let s = Settings::from_value(value, "matrix.json", cwd, Path::new(HOME)).unwrap();
    PermissionEngine::builder(cwd, HOME)
        .settings(&s)
        .mode(mode)
        .build()
        .unwrap()
}

fn decide(mode: PermissionMode, call: ToolCall, hook: PreToolUseOutcome) -> Behavior {
    engine_at(Path::new(CWD), settings(), mode)
        .check(&call, &hook)
        .behavior
}

fn call(tool: &str, arg: &str) -> ToolCall {
    ToolCall::new(tool, input(tool, arg))
}

fn hook(d: HookDecision) -> PreToolUseOutcome {
    PreToolUseOutcome {
        decision: Some(d),
        reason: Some("matrix hook".into()),
        updated_input: None,
    }
}

/// One clause: what a call gets in each mode.
fn clause(mode: PermissionMode) -> PermissionMode {
    mode
}

macro_rules! cells {
    ($( $clause:ident => |$m:ident| $body:expr, [$d:expr, $ae:expr, $pl:expr, $au:expr, $da:expr, $bp:expr]; )*) => {
        $(
            mod $clause {
                use super::*;
                fn run(mode: PermissionMode, want: Behavior) {
                    let $m = clause(mode);
                    let got: Behavior = $body;
                    assert_eq!(got, want, "{} in {mode:?}", stringify!($clause));
                }
                #[test] fn default() { run(PermissionMode::Default, $d) }
                #[test] fn accept_edits() { run(PermissionMode::AcceptEdits, $ae) }
                #[test] fn plan() { run(PermissionMode::Plan, $pl) }
                #[test] fn auto() { run(PermissionMode::Auto, $au) }
                #[test] fn dont_ask() { run(PermissionMode::DontAsk, $da) }
                #[test] fn bypass_permissions() { run(PermissionMode::BypassPermissions, $bp) }
            }
        )*
    };
}

cells! {
    // Columns: default, acceptEdits, plan, auto, dontAsk, bypassPermissions.
    deny_rule_still_denies => |m| decide(m, call("Bash", "curl https://x"), PreToolUseOutcome::default()),
        [Deny, Deny, Deny, Deny, Deny, Deny];
    deny_rule_beats_hook_allow => |m| decide(m, call("Bash", "curl https://x"), hook(HookDecision::Allow)),
        [Deny, Deny, Deny, Deny, Deny, Deny];
    ask_rule_still_asks => |m| decide(m, call("Bash", "git push origin"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    ask_rule_beats_hook_allow => |m| decide(m, call("Bash", "git push origin"), hook(HookDecision::Allow)),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    hook_deny_still_denies => |m| decide(m, call("Read", "src/a.rs"), hook(HookDecision::Deny)),
        [Deny, Deny, Deny, Deny, Deny, Deny];
    hook_ask_still_asks => |m| decide(m, call("Read", "src/a.rs"), hook(HookDecision::Ask)),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_of_cwd_asks => |m| decide(m, call("Bash", "rm -rf ."), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_of_a_parent_asks => |m| decide(m, call("Bash", "rm -rf .."), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_of_pwd_asks => |m| decide(m, call("Bash", "rm -rf \"$PWD\""), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_of_pwd_substitution_asks => |m| decide(m, call("Bash", "rm -rf \"$(pwd)\""), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_of_tilde_plus_asks => |m| decide(m, call("Bash", "rm -rf ~+/"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_of_home_asks => |m| decide(m, call("Bash", "rm -rf ~"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    critical_rm_beats_hook_allow => |m| decide(m, call("Bash", "rm -rf /"), hook(HookDecision::Allow)),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    ask_user_question_is_never_auto_approved => |m| decide(m, call("AskUserQuestion", "{\"questions\":[]}"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    user_interaction_mcp_tool_is_never_auto_approved => |m| decide(m, call("mcp__srv__confirm", "{}").with_user_interaction(true), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    protected_path_write_asks_except_in_bypass => |m| decide(m, call("Edit", ".git/config"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Allow];
    protected_path_redirect_asks_except_in_bypass => |m| decide(m, call("Bash", "echo x > .bashrc"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Allow];
    protected_path_option_write_asks_except_in_bypass => |m| decide(m, call("Bash", "git log --output=.bashrc"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Allow];
    program_running_option_asks_except_in_bypass => |m| decide(m, call("Bash", "git -c core.pager=sh log"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Allow];
    runtime_evaluation_asks_in_every_mode => |m| decide(m, call("Bash", "test -v 'a[$(id)]'"), PreToolUseOutcome::default()),
        [Ask, Ask, Ask, Ask, Deny, Ask];
    reads_inside_the_working_directories_run => |m| decide(m, call("Read", "src/a.rs"), PreToolUseOutcome::default()),
        [Allow, Allow, Allow, Allow, Allow, Allow];
    read_only_commands_run => |m| decide(m, call("Bash", "git status"), PreToolUseOutcome::default()),
        [Allow, Allow, Allow, Allow, Allow, Allow];
}

/// Mode behaviour without allow rules: what each mode itself decides.
fn bare(mode: PermissionMode, tool: &str, arg: &str) -> Behavior {
    engine_at(Path::new(CWD), json!({}), mode)
        .check(&call(tool, arg), &PreToolUseOutcome::default())
        .behavior
}

cells! {
    edit_inside_without_a_rule => |m| bare(m, "Edit", "src/a.rs"),
        [Ask, Allow, Deny, Allow, Deny, Allow];
    edit_outside_without_a_rule => |m| bare(m, "Edit", "/srv/elsewhere/a.rs"),
        [Ask, Ask, Deny, Ask, Deny, Allow];
    read_outside_without_a_rule => |m| bare(m, "Read", "/srv/elsewhere/a.rs"),
        [Ask, Ask, Ask, Allow, Deny, Allow];
    shell_write_without_a_rule => |m| bare(m, "Bash", "touch src/new.rs"),
        [Ask, Allow, Deny, Allow, Deny, Allow];
}

/// A file-path allow rule on a symlink needs both the link and its target to match; a deny
/// fires on either.
fn through_symlink(mode: PermissionMode, rules: Value, tool: &str) -> Behavior {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret"), "k").unwrap();
    std::os::unix::fs::symlink(root.join("outside/secret"), proj.join("link")).unwrap();
    engine_at(&proj, rules, mode)
        .check(
            &call(tool, &proj.join("link").display().to_string()),
            &PreToolUseOutcome::default(),
        )
        .behavior
}

cells! {
    symlink_read_allow_needs_the_target_too => |m| through_symlink(m, json!({"permissions": {"allow": ["Read(./link)"]}}), "Read"),
        [Ask, Ask, Ask, Allow, Deny, Allow];
    symlink_edit_allow_needs_the_target_too => |m| through_symlink(m, json!({"permissions": {"allow": ["Edit(./link)"]}}), "Edit"),
        [Ask, Ask, Deny, Ask, Deny, Allow];
    symlink_deny_on_the_target_fires => |m| through_symlink(m, json!({"permissions": {"deny": ["Read(//**/outside/secret)"]}}), "Read"),
        [Deny, Deny, Deny, Deny, Deny, Deny];
}
