//! The exit-code and stdout protocol of claude-code.md §5.5 and the JSON semantics of §5.6:
//! how one hook's raw result becomes its [`HookOutcome`]. Pure functions, so the whole table is
//! tested without spawning anything.

use super::event::{DecisionControl, ExitTwo, HookEvent};
use super::outcome::{Decision, HookOutcome};
use super::output::{
    HookOutput, PermissionDecisionValue, PermissionRequestDecision, StdoutKind, TopLevelDecision,
};

/// How a hook ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawExit {
    /// It exited with this code (an HTTP hook's 2xx reply counts as 0).
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It could not be started (missing file, not executable, connection refused, non-2xx).
    Failed(String),
    /// It ran out of time and was killed.
    TimedOut,
}

/// A hook's raw result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRun {
    /// How it ended.
    pub exit: RawExit,
    /// Its stdout (or HTTP body), as text.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

/// What happens when a hook fails (exit other than 0 and 2 without valid JSON, failure to
/// start, timeout, schema-invalid JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// Proceed with a notice (Claude Code's behaviour).
    #[default]
    Continue,
    /// Block as if the hook had exited 2 (`"onFailure": "block"`, our extension).
    Block,
}

fn first_line(s: &str) -> &str {
    s.trim().lines().next().unwrap_or("").trim()
}

/// Interprets one run of the hook called `label` for `event`.
pub fn interpret(
    event: HookEvent,
    on_failure: OnFailure,
    label: &str,
    raw: &RawRun,
) -> HookOutcome {
    let failure = |what: String| fail(event, on_failure, label, what);
    match &raw.exit {
        RawExit::TimedOut => failure("timed out; its output was discarded".into()),
        RawExit::Failed(why) => failure(why.clone()),
        RawExit::Code(code @ (126 | 127)) => failure(format!(
            "could not run (exit {code}){}",
            colon(first_line(&raw.stderr))
        )),
        RawExit::Code(0) => match StdoutKind::classify(&raw.stdout, event) {
            StdoutKind::Empty => HookOutcome::default(),
            StdoutKind::Json(out) => from_output(event, label, &out),
            StdoutKind::SchemaInvalid(why) => {
                failure(format!("printed JSON that fails the hook schema: {why}"))
            }
            StdoutKind::Plain(text) => {
                let mut o = HookOutcome::default();
                if event.plain_stdout_is_context() {
                    o.additional_context.push(text);
                }
                o
            }
        },
        RawExit::Code(2) => exit_two(event, label, raw),
        RawExit::Code(code) if event.any_failure_blocks() => {
            let mut o = block(event, format!("hook failed (exit {code})"));
            if let Some(r) = nonempty(first_line(&raw.stderr)) {
                o.reason = Some(r);
            }
            o
        }
        other => {
            // A non-blocking error, unless stdout holds schema-valid JSON: then the JSON is
            // honoured and the exit code ignored.
            if let StdoutKind::Json(out) = StdoutKind::classify(&raw.stdout, event) {
                return from_output(event, label, &out);
            }
            let how = match other {
                RawExit::Signal(s) => format!("was killed by signal {s}"),
                RawExit::Code(c) => format!("failed (exit {c})"),
                _ => "failed".into(),
            };
            failure(format!("{how}{}", colon(first_line(&raw.stderr))))
        }
    }
}

fn colon(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

fn nonempty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// The outcome of a failed hook: a notice, or a block with `onFailure: "block"` (and for
/// in-process hooks on PreToolUse and UserPromptSubmit).
pub fn fail(event: HookEvent, on_failure: OnFailure, label: &str, what: String) -> HookOutcome {
    match on_failure {
        OnFailure::Continue => HookOutcome {
            notices: vec![format!("hook `{label}` {what}; continuing (fail open)")],
            ..HookOutcome::default()
        },
        OnFailure::Block => block(
            event,
            format!("hook `{label}` {what}, and a failure of this hook blocks (fail closed)"),
        ),
    }
}

/// A blocking outcome for `event`: deny for tool calls and permission requests, block for
/// events that can block, and `continue: false` (stop the agent) for events that cannot.
pub fn block(event: HookEvent, reason: String) -> HookOutcome {
    let mut o = HookOutcome::default();
    match event.decision_control() {
        DecisionControl::PermissionDecision => o.decision = Decision::Deny,
        DecisionControl::PermissionRequest => {
            o.decision = Decision::Deny;
            o.permission_request = Some(PermissionRequestDecision::Deny {
                message: Some(reason.clone()),
                interrupt: false,
            });
        }
        _ if event.exit_two().blocks() => o.decision = Decision::Block,
        _ => {
            o.continue_ = false;
            o.stop_reason = Some(reason.clone());
        }
    }
    o.reason = Some(reason);
    o
}

fn exit_two(event: HookEvent, label: &str, raw: &RawRun) -> HookOutcome {
    let kind = StdoutKind::classify(&raw.stdout, event);
    let json = kind.json();
    let stderr = nonempty(&raw.stderr);
    match event.exit_two() {
        // The flow continues unchanged (PermissionRequest, PermissionDenied, Notification).
        ExitTwo::Ignored => return HookOutcome::default(),
        // Nothing to block: stderr is shown to the user; the JSON is still read.
        ExitTwo::ShownToUser => {
            let mut o =
                json.map_or_else(HookOutcome::default, |out| from_output(event, label, out));
            if let Some(s) = stderr {
                o.notices.push(format!("hook `{label}` exited 2: {s}"));
            }
            return o;
        }
        _ => {}
    }
    // Exit 2 wins over any JSON decision; the JSON reason, if any, is the message.
    let mut o = json.map_or_else(HookOutcome::default, |out| from_output(event, label, out));
    // The JSON `reason`, or a PreToolUse deny's `permissionDecisionReason` (an allow's reason
    // is not a block message).
    let json_reason = json.and_then(|out| {
        out.reason.clone().or_else(|| {
            out.hook_specific_output
                .as_ref()
                .filter(|h| h.permission_decision == Some(PermissionDecisionValue::Deny))
                .and_then(|h| h.permission_decision_reason.clone())
        })
    });
    let reason = json_reason
        .or(stderr)
        .unwrap_or_else(|| format!("blocked by a {event} hook (exit 2)"));
    let b = block(event, reason);
    o.decision = b.decision;
    o.reason = b.reason;
    o.permission_request = b.permission_request;
    o.updated_input = None;
    o
}

/// Applies a schema-valid JSON output (§5.6) of the hook called `label` for `event`.
pub(crate) fn from_output(event: HookEvent, label: &str, out: &HookOutput) -> HookOutcome {
    let mut o = HookOutcome::default();
    if out.continue_ == Some(false) {
        o.continue_ = false;
        o.stop_reason.clone_from(&out.stop_reason);
    }
    o.system_message = out.system_message.clone().or_else(|| out.message.clone());
    o.notifications.extend(out.notification.clone());
    o.permission_updates.extend(out.permission_update.clone());
    let hso = out.hook_specific_output.as_ref();
    let blocked = out.decision == Some(TopLevelDecision::Block) || out.block == Some(true);
    match event.decision_control() {
        DecisionControl::PermissionDecision => {
            if let Some(d) = hso.and_then(|h| h.permission_decision) {
                o.decision = match d {
                    PermissionDecisionValue::Allow => Decision::Allow,
                    PermissionDecisionValue::Deny => Decision::Deny,
                    PermissionDecisionValue::Ask => Decision::Ask,
                    PermissionDecisionValue::Defer => Decision::Defer,
                };
                o.reason = hso.and_then(|h| h.permission_decision_reason.clone());
            } else if blocked {
                o.decision = Decision::Deny;
                o.reason.clone_from(&out.reason);
            } else if out.decision == Some(TopLevelDecision::Approve) {
                o.decision = Decision::Allow;
                o.reason.clone_from(&out.reason);
            }
            if o.decision == Decision::Deny && o.reason.is_none() {
                o.reason = out.message.clone();
            }
            o.updated_input = hso
                .and_then(|h| h.updated_input.clone())
                .or_else(|| out.updated_input.clone());
            if out.extra.contains_key("permissionDecision") {
                o.notices.push(format!(
                    "hook `{label}` printed a top-level `permissionDecision`, which is not a decision; put it inside `hookSpecificOutput` (see claude-code#4669)"
                ));
            }
        }
        DecisionControl::PermissionRequest => {
            if let Some(d) = hso.and_then(|h| h.decision.clone()) {
                match &d {
                    PermissionRequestDecision::Allow { updated_input, .. } => {
                        o.decision = Decision::Allow;
                        o.updated_input.clone_from(updated_input);
                    }
                    PermissionRequestDecision::Deny { message, .. } => {
                        o.decision = Decision::Deny;
                        o.reason.clone_from(message);
                    }
                }
                o.permission_request = Some(d);
            } else if blocked {
                let reason = out.reason.clone().or_else(|| out.message.clone());
                o.decision = Decision::Deny;
                o.permission_request = Some(PermissionRequestDecision::Deny {
                    message: reason.clone(),
                    interrupt: false,
                });
                o.reason = reason;
            }
        }
        DecisionControl::Block => {
            if blocked {
                o.decision = Decision::Block;
                o.reason = out.reason.clone().or_else(|| out.message.clone());
                if o.reason.is_none() {
                    o.reason = Some(format!("blocked by a {event} hook"));
                }
            }
            o.updated_tool_output = hso.and_then(|h| h.updated_tool_output.clone());
        }
        DecisionControl::Retry => {
            o.retry = hso.and_then(|h| h.retry).unwrap_or(false);
        }
        DecisionControl::None => {}
    }
    if let Some(ctx) = hso.and_then(|h| h.additional_context.clone()) {
        o.additional_context.push(ctx);
    }
    o.session_title = hso.and_then(|h| h.session_title.clone());
    o
}
