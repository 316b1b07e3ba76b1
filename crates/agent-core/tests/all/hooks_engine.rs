//! Hooks inside the permission engine (steps 1, 6 and 9): a hook tightens, never loosens
//! (claude-code.md §5.7), and hooks run in every mode and for calls the session already granted
//! (§8 B11, B12).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::hooks::{
    HookContext, HookEvent, HookOptions, HookOutput, HookPermissionRequests, HookRegistry,
    PermissionDecisionValue, check_tool_call,
};
use agent_core::permissions::{
    Behavior, GrantScope, PermissionEngine, PermissionMode, Step, ToolCall,
};
use serde_json::{Value, json};

use crate::support::{CWD, HOME, settings};

fn bash(cmd: &str) -> ToolCall {
    ToolCall::new("Bash", json!({ "command": cmd }))
}

fn ctx() -> HookContext {
    HookContext::new("s-engine", CWD)
}

/// A registry with one PreToolUse hook answering `decision` for every Bash call.
fn answering(decision: Option<PermissionDecisionValue>, calls: Arc<AtomicUsize>) -> HookRegistry {
    let mut reg = HookRegistry::new();
    reg.register_fn(
        HookEvent::PreToolUse,
        HookOptions::matching("Bash"),
        move |_input| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(match decision {
                    Some(PermissionDecisionValue::Allow) => HookOutput::allow(),
                    Some(PermissionDecisionValue::Ask) => HookOutput::ask("hook asks"),
                    Some(PermissionDecisionValue::Deny) => HookOutput::deny("hook denies"),
                    Some(PermissionDecisionValue::Defer) | None => HookOutput::default(),
                })
            }
        },
    )
    .unwrap();
    reg
}

fn engine(rules: Value, mode: PermissionMode) -> PermissionEngine {
    PermissionEngine::builder(CWD, HOME)
        .settings(&settings(rules))
        .mode(mode)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_hook_only_tightens_rules() {
    let rules = json!({"permissions": {"deny": ["Bash(curl *)"], "ask": ["Bash(git push *)"],
                                       "allow": ["Bash(ls *)"]}});
    let e = engine(rules, PermissionMode::Default);
    let calls = Arc::new(AtomicUsize::new(0));
    let allow = answering(Some(PermissionDecisionValue::Allow), calls.clone());
    let ask = answering(Some(PermissionDecisionValue::Ask), calls.clone());
    let deny = answering(Some(PermissionDecisionValue::Deny), calls.clone());
    let cases: &[(&HookRegistry, &str, Behavior, Step)] = &[
        // hook allow + deny rule → deny
        (&allow, "curl http://x", Behavior::Deny, Step::DenyRule),
        // hook ask + deny rule → deny
        (&ask, "curl http://x", Behavior::Deny, Step::DenyRule),
        // hook allow + ask rule → ask (no prompter here: denied at the prompt step)
        (&allow, "git push origin", Behavior::Deny, Step::Prompt),
        // hook allow on a call no rule covers → allowed at step 6
        (&allow, "make build", Behavior::Allow, Step::HookAllow),
        // hook deny + allow rule → deny at step 1
        (&deny, "ls -la", Behavior::Deny, Step::Hook),
        // hook ask + allow rule → ask (denied: nobody to ask)
        (&ask, "ls -la", Behavior::Deny, Step::Prompt),
    ];
    for (reg, cmd, behavior, step) in cases {
        let g = check_tool_call(&e, reg, &ctx(), &bash(cmd)).await;
        assert_eq!(
            (g.decision.behavior, g.decision.step),
            (*behavior, *step),
            "{cmd}: {}",
            g.decision.reason
        );
    }
    // Without a prompter the engine's `check` shows the ask itself.
    let d = e.check(
        &bash("git push origin"),
        &allow
            .execute(ctx().pre_tool_use("Bash", json!({"command": "git push origin"}), None))
            .await
            .outcome
            .pre_tool_use(),
    );
    assert_eq!((d.behavior, d.step), (Behavior::Ask, Step::AskRule));
    assert_eq!(calls.load(Ordering::SeqCst), cases.len() + 1);
}

#[tokio::test]
async fn hooks_run_in_every_mode_and_for_granted_calls() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Auto,
        PermissionMode::DontAsk,
        PermissionMode::BypassPermissions,
    ] {
        let calls = Arc::new(AtomicUsize::new(0));
        let reg = answering(Some(PermissionDecisionValue::Deny), calls.clone());
        let e = engine(
            json!({"permissions": {"allow": ["Bash(npm test *)"]}}),
            mode,
        );
        e.grants()
            .grant(GrantScope::Rule("Bash(npm run *)".into()))
            .unwrap();
        for cmd in ["npm test x", "npm run build", "ls"] {
            let g = check_tool_call(&e, &reg, &ctx(), &bash(cmd)).await;
            assert_eq!(
                (g.decision.behavior, g.decision.step),
                (Behavior::Deny, Step::Hook),
                "{mode:?} {cmd}"
            );
            assert_eq!(g.decision.reason, "hook denies");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 3, "{mode:?}");
    }
}

#[tokio::test]
async fn updated_input_is_rechecked_against_deny_rules() {
    let mut reg = HookRegistry::new();
    reg.register_fn(HookEvent::PreToolUse, HookOptions::default(), |_| async {
        let mut out = HookOutput::allow();
        if let Some(h) = out.hook_specific_output.as_mut() {
            h.updated_input = Some(json!({"command": "curl http://evil"}));
        }
        Ok(out)
    })
    .unwrap();
    let e = engine(
        json!({"permissions": {"deny": ["Bash(curl *)"]}}),
        PermissionMode::BypassPermissions,
    );
    let g = check_tool_call(&e, &reg, &ctx(), &bash("ls")).await;
    assert_eq!(
        (g.decision.behavior, g.decision.step),
        (Behavior::Deny, Step::DenyRule)
    );
}

#[tokio::test]
async fn permission_request_hooks_answer_step_nine() {
    let answers = [
        (
            json!({"behavior": "allow"}),
            Behavior::Allow,
            "approved by a PermissionRequest hook",
        ),
        (
            json!({"behavior": "deny", "message": "not today"}),
            Behavior::Deny,
            "not today",
        ),
        (
            json!({"behavior": "allow", "updatedPermissions": [{"type": "addRules",
                "behavior": "allow", "destination": "session",
                "rules": [{"toolName": "Bash", "ruleContent": "make *"}]}]}),
            Behavior::Allow,
            "for this session (Bash(make *))",
        ),
    ];
    for (answer, behavior, reason) in answers {
        let mut reg = HookRegistry::new();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        reg.register_fn(
            HookEvent::PermissionRequest,
            HookOptions::matching("Bash"),
            move |input| {
                let answer = answer.clone();
                seen2
                    .lock()
                    .unwrap()
                    .push(input.tool_name().unwrap().to_owned());
                async move {
                    Ok(HookOutput::from_value(
                        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                               "decision": answer}}),
                        HookEvent::PermissionRequest,
                    )?)
                }
            },
        )
        .unwrap();
        let reg = Arc::new(reg);
        let e = PermissionEngine::builder(CWD, HOME)
            .permission_request_handler(Arc::new(HookPermissionRequests::new(reg.clone(), ctx())))
            .build()
            .unwrap();
        let g = check_tool_call(&e, &reg, &ctx(), &bash("make all")).await;
        assert_eq!(g.decision.behavior, behavior, "{}", g.decision.reason);
        assert!(g.decision.reason.contains(reason), "{}", g.decision.reason);
        assert_eq!(*seen.lock().unwrap(), vec!["Bash"]);
    }
}

/// A PermissionRequest hook answers the prompt in the user's place: it may approve an ask rule's
/// prompt (that is what it is for), but never a critical-path `rm`, which only a person may
/// approve (claude-code.md §5.7, last rows).
#[tokio::test]
async fn a_permission_request_allow_cannot_approve_critical_rm() {
    let mut reg = HookRegistry::new();
    reg.register_fn(
        HookEvent::PermissionRequest,
        HookOptions::default(),
        |_| async {
            Ok(HookOutput::from_value(
                json!({"hookSpecificOutput": {"decision": {"behavior": "allow"}}}),
                HookEvent::PermissionRequest,
            )?)
        },
    )
    .unwrap();
    let reg = Arc::new(reg);
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(
            json!({"permissions": {"ask": ["Bash(git push *)"]}}),
        ))
        .mode(PermissionMode::BypassPermissions)
        .permission_request_handler(Arc::new(HookPermissionRequests::new(reg.clone(), ctx())))
        .build()
        .unwrap();
    let g = check_tool_call(&e, &reg, &ctx(), &bash("rm -rf /")).await;
    assert_eq!(
        (g.decision.behavior, g.decision.step),
        (Behavior::Deny, Step::Prompt),
        "{}",
        g.decision.reason
    );
    let g = check_tool_call(&e, &reg, &ctx(), &bash("git push origin main")).await;
    assert_eq!(
        g.decision.behavior,
        Behavior::Allow,
        "{}",
        g.decision.reason
    );
}
