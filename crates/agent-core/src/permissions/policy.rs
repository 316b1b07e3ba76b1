//! `PermissionPolicy`: an embedder's own constraints, evaluated at step 5 in every mode —
//! including `bypassPermissions`, which is how an embedder keeps even that mode inside bounds.
//!
//! A policy returns `Some(verdict)` to decide or `None` to pass. The built-in policies only
//! restrict (they return a deny or nothing), so composing them never grants more than the rest
//! of the engine would; a closure policy may also allow, or allow with a rewritten input.
//!
//! ```
//! use agent_core::permissions::{CompositePolicy, PermissionPolicy, PolicyVerdict, ReadOnlyPolicy,
//!     ToolCall, ToolNameDenylistPolicy};
//! use serde_json::json;
//!
//! let policy = CompositePolicy::new(vec![
//!     Box::new(ToolNameDenylistPolicy::new(["Bash"])),
//!     Box::new(ReadOnlyPolicy),
//! ]);
//! let call = ToolCall::new("Write", json!({"file_path": "/tmp/x", "content": ""}));
//! assert!(matches!(policy.evaluate(&call), Some(PolicyVerdict::Deny(_))));
//! assert!(policy.evaluate(&ToolCall::new("Read", json!({"file_path": "/tmp/x"}))).is_none());
//! ```

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;

use super::request::ToolCall;

/// A policy's verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum PolicyVerdict {
    /// Run the call.
    Allow,
    /// Run the call with this input instead (re-checked against deny and ask rules and the
    /// safety checks before it runs).
    AllowWithInput(Value),
    /// Refuse the call, with the reason given to the model.
    Deny(String),
    /// Ask the user, with this reason (a warning), whatever the mode, the allow rules, the
    /// session grants or a hook would say; in `dontAsk` or with nobody to ask, refuse. Used for
    /// what must never happen silently, e.g. a host command that would run without the OS
    /// sandbox.
    Ask(String),
}

/// An embedder's constraint on tool calls.
pub trait PermissionPolicy: Send + Sync {
    /// The verdict on one call, or `None` to pass it on.
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict>;

    /// A short name for decisions and logs.
    fn name(&self) -> &str {
        "policy"
    }
}

impl fmt::Debug for dyn PermissionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PermissionPolicy({})", self.name())
    }
}

/// Denies every tool not named in the list; passes the others on.
#[derive(Clone, Debug)]
pub struct ToolNameAllowlistPolicy {
    allowed: HashSet<String>,
}

impl ToolNameAllowlistPolicy {
    /// Only these tools may run.
    pub fn new<I, S>(allowed: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allowed: allowed.into_iter().map(Into::into).collect(),
        }
    }
}

impl PermissionPolicy for ToolNameAllowlistPolicy {
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict> {
        (!self.allowed.contains(&call.tool_name)).then(|| {
            let mut names: Vec<&str> = self.allowed.iter().map(String::as_str).collect();
            names.sort_unstable();
            PolicyVerdict::Deny(format!(
                "tool `{}` is not in this agent's allowlist ({})",
                call.tool_name,
                names.join(", ")
            ))
        })
    }

    fn name(&self) -> &str {
        "tool-allowlist"
    }
}

/// Denies every tool named in the list; passes the others on.
#[derive(Clone, Debug)]
pub struct ToolNameDenylistPolicy {
    denied: HashSet<String>,
}

impl ToolNameDenylistPolicy {
    /// These tools may not run.
    pub fn new<I, S>(denied: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            denied: denied.into_iter().map(Into::into).collect(),
        }
    }
}

impl PermissionPolicy for ToolNameDenylistPolicy {
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict> {
        self.denied.contains(&call.tool_name).then(|| {
            PolicyVerdict::Deny(format!(
                "tool `{}` is denied by this agent's policy",
                call.tool_name
            ))
        })
    }

    fn name(&self) -> &str {
        "tool-denylist"
    }
}

/// Denies every tool that is not read-only ([`ToolCall::read_only`]); passes read-only ones on.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOnlyPolicy;

impl PermissionPolicy for ReadOnlyPolicy {
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict> {
        (!call.read_only).then(|| {
            PolicyVerdict::Deny(format!(
                "tool `{}` can change things and this agent is read-only",
                call.tool_name
            ))
        })
    }

    fn name(&self) -> &str {
        "read-only"
    }
}

/// Evaluates policies in order: the first deny wins at once; otherwise the first allow (or
/// allow-with-input) wins; if every policy passes, so does the composite.
#[derive(Debug, Default)]
pub struct CompositePolicy {
    policies: Vec<Box<dyn PermissionPolicy>>,
}

impl CompositePolicy {
    /// A composite of `policies`, evaluated in order.
    pub fn new(policies: Vec<Box<dyn PermissionPolicy>>) -> Self {
        Self { policies }
    }
}

impl PermissionPolicy for CompositePolicy {
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict> {
        let mut allow = None;
        for p in &self.policies {
            match p.evaluate(call) {
                Some(PolicyVerdict::Deny(r)) => return Some(PolicyVerdict::Deny(r)),
                Some(v) if allow.is_none() => allow = Some(v),
                _ => {}
            }
        }
        allow
    }

    fn name(&self) -> &str {
        "composite"
    }
}

/// A policy written as a closure.
pub struct FnPolicy<F> {
    name: String,
    f: F,
}

impl<F> FnPolicy<F>
where
    F: Fn(&ToolCall) -> Option<PolicyVerdict> + Send + Sync,
{
    /// A policy named `name` that calls `f`.
    pub fn new(name: impl Into<String>, f: F) -> Self {
        Self {
            name: name.into(),
            f,
        }
    }
}

impl<F> PermissionPolicy for FnPolicy<F>
where
    F: Fn(&ToolCall) -> Option<PolicyVerdict> + Send + Sync,
{
    fn evaluate(&self, call: &ToolCall) -> Option<PolicyVerdict> {
        (self.f)(call)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str) -> ToolCall {
        ToolCall::new(name, json!({}))
    }

    #[test]
    fn builtins_only_restrict() {
        let allow = ToolNameAllowlistPolicy::new(["Read", "Grep"]);
        assert_eq!(allow.evaluate(&call("Read")), None);
        assert!(
            matches!(allow.evaluate(&call("Bash")), Some(PolicyVerdict::Deny(r)) if r.contains("Grep, Read"))
        );
        let deny = ToolNameDenylistPolicy::new(["Bash"]);
        assert!(matches!(
            deny.evaluate(&call("Bash")),
            Some(PolicyVerdict::Deny(_))
        ));
        assert_eq!(deny.evaluate(&call("Read")), None);
        assert!(matches!(
            ReadOnlyPolicy.evaluate(&call("Edit")),
            Some(PolicyVerdict::Deny(_))
        ));
        assert_eq!(ReadOnlyPolicy.evaluate(&call("Glob")), None);
    }

    #[test]
    fn composite_short_circuits_on_deny() {
        let c = CompositePolicy::new(vec![
            Box::new(FnPolicy::new("allow-all", |_| Some(PolicyVerdict::Allow))),
            Box::new(ToolNameDenylistPolicy::new(["Bash"])),
        ]);
        assert!(matches!(
            c.evaluate(&call("Bash")),
            Some(PolicyVerdict::Deny(_))
        ));
        assert_eq!(c.evaluate(&call("Read")), Some(PolicyVerdict::Allow));
        let none = CompositePolicy::new(vec![Box::new(ReadOnlyPolicy)]);
        assert_eq!(none.evaluate(&call("Read")), None);
    }

    #[test]
    fn closures_can_rewrite_input() {
        let p = FnPolicy::new("redirect", |c: &ToolCall| {
            (c.tool_name == "Write")
                .then(|| PolicyVerdict::AllowWithInput(json!({"file_path": "/safe/x"})))
        });
        assert_eq!(
            p.evaluate(&call("Write")),
            Some(PolicyVerdict::AllowWithInput(
                json!({"file_path": "/safe/x"})
            ))
        );
        assert_eq!(p.name(), "redirect");
    }
}
