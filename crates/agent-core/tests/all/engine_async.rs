//! Steps 1, 5, 6 and 9: hook outcomes, policies, session grants, the prompter and the
//! PermissionRequest handler.

use std::sync::{Arc, Mutex};

use agent_core::permissions::{
    Behavior, CompositePolicy, FnPolicy, GrantScope, HookDecision, PermissionEngine,
    PermissionMode, PermissionRequest, PermissionRequestHandler, PolicyVerdict, PreToolUseOutcome,
    PromptAnswer, Prompter, ReadOnlyPolicy, Step, ToolCall, ToolNameAllowlistPolicy,
    ToolNameDenylistPolicy,
};
use serde_json::json;

use crate::support::{CWD, HOME, engine, input, settings};

fn bash(cmd: &str) -> ToolCall {
    ToolCall::new("Bash", input("Bash", cmd))
}

fn hook(decision: HookDecision) -> PreToolUseOutcome {
    PreToolUseOutcome {
        decision: Some(decision),
        reason: Some("hook says so".into()),
        updated_input: None,
    }
}

fn rules() -> serde_json::Value {
    json!({"permissions": {"allow": ["Bash(git status)"], "ask": ["Bash(git push *)"], "deny": ["Bash(curl *)"]}})
}

#[test]
fn hooks_run_in_every_mode_and_can_only_tighten() {
    for mode in PermissionMode::ALL {
        let e = engine(rules(), mode);
        // A hook deny wins over an allow rule and over bypassPermissions.
        let d = e.check(&bash("git status"), &hook(HookDecision::Deny));
        assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Hook), "{mode}");
        assert_eq!(d.reason, "hook says so");
        // A hook allow does not undo a deny rule (B6) ...
        let d = e.check(&bash("curl x"), &hook(HookDecision::Allow));
        assert_eq!(
            (d.behavior, d.step),
            (Behavior::Deny, Step::DenyRule),
            "{mode}"
        );
        // ... nor a hook ask (B7) ...
        let d = e.check(&bash("curl x"), &hook(HookDecision::Ask));
        assert_eq!(
            (d.behavior, d.step),
            (Behavior::Deny, Step::DenyRule),
            "{mode}"
        );
        // ... and an ask rule is a hard consent gate (B8).
        let d = e.check(&bash("git push"), &hook(HookDecision::Allow));
        let want = if mode == PermissionMode::DontAsk {
            Behavior::Deny
        } else {
            Behavior::Ask
        };
        assert_eq!((d.behavior, d.step), (want, Step::AskRule), "{mode}");
        // A hook allow cannot approve a critical rm.
        let d = e.check(&bash("rm -r /"), &hook(HookDecision::Allow));
        assert_eq!(d.step, Step::Safety, "{mode}");
        assert_ne!(d.behavior, Behavior::Allow, "{mode}");
    }
}

#[test]
fn hook_allow_and_ask_in_the_middle_of_the_order() {
    let e = engine(rules(), PermissionMode::Default);
    let d = e.check(&bash("npm install"), &hook(HookDecision::Allow));
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::HookAllow));
    let d = e.check(&bash("git status"), &hook(HookDecision::Ask));
    assert_eq!((d.behavior, d.step), (Behavior::Ask, Step::Hook));
    let d = e.check(&bash("git status"), &hook(HookDecision::Defer));
    assert_eq!((d.behavior, d.step), (Behavior::Ask, Step::Hook));
    let e = engine(rules(), PermissionMode::DontAsk);
    let d = e.check(&bash("npm install"), &hook(HookDecision::Allow));
    assert_eq!(
        (d.behavior, d.step),
        (Behavior::Allow, Step::HookAllow),
        "dontAsk honours a hook allow"
    );
}

#[test]
fn hook_updated_input_goes_through_every_later_step() {
    let e = engine(rules(), PermissionMode::Default);
    let outcome = PreToolUseOutcome {
        decision: Some(HookDecision::Allow),
        reason: None,
        updated_input: Some(json!({"command": "curl evil"})),
    };
    let d = e.check(&bash("git status"), &outcome);
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::DenyRule));
    let outcome = PreToolUseOutcome {
        decision: None,
        reason: None,
        updated_input: Some(json!({"command": "git status"})),
    };
    let d = e.check(&bash("npm install"), &outcome);
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::AllowRule));
    assert_eq!(d.updated_input, Some(json!({"command": "git status"})));
}

#[test]
fn policies_constrain_even_bypass_permissions() {
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(rules()))
        .mode(PermissionMode::BypassPermissions)
        .policy(Box::new(ReadOnlyPolicy))
        .build()
        .unwrap();
    let d = e.check(&bash("npm install"), &PreToolUseOutcome::default());
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Policy));
    assert!(d.reason.contains("read-only"), "{}", d.reason);
    let d = e.check(
        &ToolCall::new("Read", input("Read", "/etc/passwd")),
        &PreToolUseOutcome::default(),
    );
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::Mode));
    // A policy deny also tightens an ask into a deny: the user is not asked to approve what
    // the embedder forbids.
    let d = e.check(&bash("git push"), &PreToolUseOutcome::default());
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Policy));
}

#[test]
fn policy_chain_allow_deny_and_rewrite() {
    let composite = CompositePolicy::new(vec![
        Box::new(ToolNameDenylistPolicy::new(["WebFetch"])),
        Box::new(ToolNameAllowlistPolicy::new(["Bash", "Read", "Write"])),
    ]);
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(rules()))
        .policy(Box::new(composite))
        .policy(Box::new(FnPolicy::new("sandbox-writes", |c: &ToolCall| {
            (c.tool_name == "Write").then(|| {
                PolicyVerdict::AllowWithInput(
                    json!({"file_path": "/srv/agent-fixture/proj/out/x", "content": ""}),
                )
            })
        })))
        .policy(Box::new(FnPolicy::new("allow-make", |c: &ToolCall| {
            (c.input["command"] == "make").then_some(PolicyVerdict::Allow)
        })))
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    let d = e.check(
        &ToolCall::new("WebFetch", input("WebFetch", "https://x.org")),
        &none,
    );
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Policy));
    let d = e.check(&ToolCall::new("Glob", input("Glob", ".")), &none);
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Policy));
    let d = e.check(&bash("make"), &none);
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::Policy));
    let d = e.check(
        &ToolCall::new("Write", input("Write", "/tmp/anything")),
        &none,
    );
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::Policy));
    assert_eq!(
        d.updated_input.unwrap()["file_path"],
        "/srv/agent-fixture/proj/out/x"
    );
    // A deny rule still beats a policy allow (step 2 before step 5).
    let d = e.check(&bash("curl x"), &none);
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::DenyRule));
}

#[test]
fn a_rewritten_input_is_rechecked() {
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(
            json!({"permissions": {"deny": ["Edit(//etc/**)"]}}),
        ))
        .policy(Box::new(FnPolicy::new("evil", |_| {
            Some(PolicyVerdict::AllowWithInput(
                json!({"file_path": "/etc/passwd", "content": ""}),
            ))
        })))
        .build()
        .unwrap();
    let d = e.check(
        &ToolCall::new("Write", input("Write", "a.txt")),
        &PreToolUseOutcome::default(),
    );
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::DenyRule));
}

/// Answers every prompt from a script and records the requests.
struct ScriptedPrompter {
    answers: Mutex<Vec<PromptAnswer>>,
    seen: Mutex<Vec<PermissionRequest>>,
}

#[async_trait::async_trait]
impl Prompter for ScriptedPrompter {
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
        self.seen.lock().unwrap().push(request.clone());
        self.answers.lock().unwrap().remove(0)
    }
}

fn prompter(answers: Vec<PromptAnswer>) -> Arc<ScriptedPrompter> {
    Arc::new(ScriptedPrompter {
        answers: Mutex::new(answers),
        seen: Mutex::new(Vec::new()),
    })
}

#[tokio::test]
async fn ask_once_per_session_then_allow_revocable_and_resettable() {
    let p = prompter(vec![
        PromptAnswer::AllowForSession {
            scope: GrantScope::Rule("Bash(npm test *)".into()),
            updated_input: None,
        },
        PromptAnswer::Deny {
            message: "no".into(),
            interrupt: false,
        },
        PromptAnswer::AllowForSession {
            scope: GrantScope::Tool("WebFetch".into()),
            updated_input: None,
        },
    ]);
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(rules()))
        .prompter(p.clone())
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    let d = e.decide(&bash("npm test -- --watch"), &none).await;
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::Prompt));
    assert!(
        p.seen.lock().unwrap()[0]
            .suggestions
            .contains(&"Bash(npm test *)".to_owned())
    );
    // Asked once; now granted for the session, scoped by the rule.
    let d = e.decide(&bash("npm test"), &none).await;
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::AllowRule));
    assert!(d.reason.contains("session grant"), "{}", d.reason);
    assert_eq!(p.seen.lock().unwrap().len(), 1);
    // The grant is scoped: other commands still ask (and this one is denied by the user).
    let d = e.decide(&bash("npm install"), &none).await;
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Prompt));
    // A grant never beats a deny rule.
    e.grants().grant(GrantScope::Tool("Bash".into())).unwrap();
    let d = e.decide(&bash("curl x"), &none).await;
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::DenyRule));
    // Revoke and reset.
    let grants = e.grants().list();
    assert_eq!(grants.len(), 2);
    assert!(e.grants().revoke(grants[0].id));
    let d = e.check(&bash("npm test"), &none);
    assert_eq!(
        d.behavior,
        Behavior::Allow,
        "still covered by the Bash tool grant"
    );
    e.grants().reset();
    let d = e.check(&bash("npm test"), &none);
    assert_eq!(d.behavior, Behavior::Ask);
    // Tool-scoped grant.
    let call = ToolCall::new("WebFetch", input("WebFetch", "https://example.org"));
    assert_eq!(e.decide(&call, &none).await.behavior, Behavior::Allow);
    let d = e.check(
        &ToolCall::new("WebFetch", input("WebFetch", "https://other.org")),
        &none,
    );
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::AllowRule));
}

#[tokio::test]
async fn no_prompter_means_deny_with_a_suggestion() {
    let e = engine(rules(), PermissionMode::Default);
    let d = e
        .decide(&bash("npm install x"), &PreToolUseOutcome::default())
        .await;
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::Prompt));
    assert!(d.reason.contains("Bash(npm install *)"), "{}", d.reason);
}

#[tokio::test]
async fn prompter_rewrite_is_rechecked_and_interrupt_is_kept() {
    let p = prompter(vec![
        PromptAnswer::AllowOnce {
            updated_input: Some(json!({"command": "curl evil"})),
        },
        PromptAnswer::Deny {
            message: "stop everything".into(),
            interrupt: true,
        },
    ]);
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(rules()))
        .prompter(p)
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    let d = e.decide(&bash("npm install"), &none).await;
    assert_eq!((d.behavior, d.step), (Behavior::Deny, Step::DenyRule));
    let d = e.decide(&bash("npm install"), &none).await;
    assert!(d.interrupt && d.behavior == Behavior::Deny);
}

struct HookHandler(PromptAnswer);

#[async_trait::async_trait]
impl PermissionRequestHandler for HookHandler {
    async fn on_request(&self, _: &PermissionRequest) -> Option<PromptAnswer> {
        Some(self.0.clone())
    }
}

#[tokio::test]
async fn permission_request_handler_answers_before_the_prompter_but_not_for_critical_rm() {
    let p = prompter(vec![PromptAnswer::Deny {
        message: "user said no".into(),
        interrupt: false,
    }]);
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(rules()))
        .permission_request_handler(Arc::new(HookHandler(PromptAnswer::AllowOnce {
            updated_input: None,
        })))
        .prompter(p.clone())
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    let d = e.decide(&bash("npm install"), &none).await;
    assert_eq!((d.behavior, d.step), (Behavior::Allow, Step::Prompt));
    assert!(d.reason.contains("PermissionRequest hook"));
    assert!(p.seen.lock().unwrap().is_empty());
    let d = e.decide(&bash("rm -r /"), &none).await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(
        d.reason.contains("user said no"),
        "the prompter, not the hook, decided: {}",
        d.reason
    );
}

#[test]
fn sandbox_auto_allow_for_bash() {
    use agent_core::permissions::SandboxState;
    let sandboxed = |mode| {
        PermissionEngine::builder(CWD, HOME)
            .settings(&settings(json!({"permissions": {"ask": ["Bash", "Bash(git push *)"], "deny": ["Bash(curl *)"]}})))
            .mode(mode)
            .sandbox(SandboxState { active: true, auto_allow_bash: true })
            .build()
            .unwrap()
    };
    let none = PreToolUseOutcome::default();
    let e = sandboxed(PermissionMode::Default);
    let d = e.check(&bash("npm install"), &none);
    assert_eq!(
        (d.behavior, d.step),
        (Behavior::Allow, Step::Prompt),
        "bare Bash ask skipped: {}",
        d.reason
    );
    assert_eq!(
        e.check(&bash("git push"), &none).step,
        Step::AskRule,
        "content ask rules still apply"
    );
    assert_eq!(e.check(&bash("curl x"), &none).behavior, Behavior::Deny);
    assert_eq!(e.check(&bash("rm -r /"), &none).step, Step::Safety);
    let e = sandboxed(PermissionMode::Plan);
    assert_eq!(
        e.check(&bash("npm install"), &none).step,
        Step::AskRule,
        "plan keeps the bare ask"
    );
}

#[test]
fn code_rules_and_relative_cwd() {
    let e = PermissionEngine::builder(CWD, HOME)
        .rule(agent_core::permissions::RuleList::Allow, "Bash(make *)")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(
        e.check(&bash("make all"), &PreToolUseOutcome::default())
            .behavior,
        Behavior::Allow
    );
    assert!(PermissionEngine::builder("relative", HOME).build().is_err());
    assert!(
        PermissionEngine::builder(CWD, HOME)
            .rule(agent_core::permissions::RuleList::Deny, "Bash(")
            .is_err()
    );
}

#[test]
fn prepared_calls_decide_like_fresh_ones() {
    let e = engine(rules(), PermissionMode::Default);
    for cmd in [
        "git status",
        "git status; curl x",
        "npm install",
        "git push",
        "rm -r /",
        "echo \"x",
    ] {
        let call = bash(cmd);
        let prepared = e.prepare(call.clone());
        let none = PreToolUseOutcome::default();
        assert_eq!(
            e.check_prepared(&prepared, &none),
            e.check(&call, &none),
            "{cmd}"
        );
        // A hook's updatedInput is prepared anew rather than using the stale parse.
        let rewrite = PreToolUseOutcome {
            decision: None,
            reason: None,
            updated_input: Some(json!({"command": "curl x"})),
        };
        assert_eq!(
            e.check_prepared(&prepared, &rewrite).step,
            Step::DenyRule,
            "{cmd}"
        );
    }
}

/// A policy's `Ask` asks every time, whatever the mode, an allow rule, a hook's allow or a
/// session grant would say; dontAsk and no prompter refuse.
#[tokio::test]
async fn a_policy_ask_is_asked_every_time_in_every_mode() {
    let always = || {
        Box::new(FnPolicy::new("host", |c: &ToolCall| {
            (c.tool_name == "Bash").then(|| PolicyVerdict::Ask("would run unsandboxed".into()))
        }))
    };
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
        PermissionMode::Auto,
    ] {
        let e = PermissionEngine::builder(CWD, HOME)
            .settings(&settings(rules()))
            .mode(mode)
            .policy(always())
            .build()
            .unwrap();
        for outcome in [PreToolUseOutcome::default(), hook(HookDecision::Allow)] {
            let d = e.check(&bash("git status"), &outcome);
            assert_eq!(
                (d.behavior, d.step),
                (Behavior::Ask, Step::Policy),
                "{mode:?}"
            );
            assert!(d.reason.contains("would run unsandboxed"), "{}", d.reason);
        }
    }
    let e = PermissionEngine::builder(CWD, HOME)
        .mode(PermissionMode::DontAsk)
        .policy(always())
        .build()
        .unwrap();
    assert_eq!(
        e.check(&bash("ls"), &PreToolUseOutcome::default()).behavior,
        Behavior::Deny
    );
    // Approved "for the session", it still asks the next time.
    let p = prompter(vec![
        PromptAnswer::AllowForSession {
            scope: GrantScope::Tool("Bash".into()),
            updated_input: None,
        },
        PromptAnswer::Deny {
            message: "no".into(),
            interrupt: false,
        },
    ]);
    let e = PermissionEngine::builder(CWD, HOME)
        .policy(always())
        .prompter(p.clone())
        .build()
        .unwrap();
    let none = PreToolUseOutcome::default();
    assert_eq!(e.decide(&bash("ls"), &none).await.behavior, Behavior::Allow);
    assert_eq!(e.decide(&bash("ls"), &none).await.behavior, Behavior::Deny);
    assert_eq!(p.seen.lock().unwrap().len(), 2);
    // Without a prompter: refused.
    let e = PermissionEngine::builder(CWD, HOME)
        .policy(always())
        .build()
        .unwrap();
    assert_eq!(e.decide(&bash("ls"), &none).await.behavior, Behavior::Deny);
}
