//! Verdicts and their provenance.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// What happens to a tool call. Ordered by strictness (`Allow < Ask < Deny`), so the strictest of
/// several verdicts is their `max()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Behavior {
    /// The call runs.
    Allow,
    /// The user (or the host's prompter) must be asked.
    Ask,
    /// The call does not run; the reason goes back to the model.
    Deny,
}

impl Behavior {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for Behavior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The evaluation step that decided, numbered as in DESIGN.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// 1. A PreToolUse hook denied, deferred or forced a prompt.
    Hook,
    /// 2. A deny rule matched.
    DenyRule,
    /// 3. An ask rule matched.
    AskRule,
    /// 4. A safety check: protected path, critical-path `rm`, or a command that cannot be
    ///    analysed.
    Safety,
    /// 5. A `PermissionPolicy` decided.
    Policy,
    /// 6. A PreToolUse hook allowed.
    HookAllow,
    /// 7. The permission mode decided.
    Mode,
    /// 8. An allow rule, the built-in read-only set, or a session grant allowed.
    AllowRule,
    /// 9. The ask was resolved (PermissionRequest hook, prompter, `dontAsk`, no prompter,
    ///    `autoAllowBashIfSandboxed`), or is still open.
    Prompt,
}

impl Step {
    /// The step's number in DESIGN.md's evaluation order.
    pub fn number(self) -> u8 {
        match self {
            Self::Hook => 1,
            Self::DenyRule => 2,
            Self::AskRule => 3,
            Self::Safety => 4,
            Self::Policy => 5,
            Self::HookAllow => 6,
            Self::Mode => 7,
            Self::AllowRule => 8,
            Self::Prompt => 9,
        }
    }

    /// The snake_case name used in JSON output and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hook => "hook",
            Self::DenyRule => "deny_rule",
            Self::AskRule => "ask_rule",
            Self::Safety => "safety",
            Self::Policy => "policy",
            Self::HookAllow => "hook_allow",
            Self::Mode => "mode",
            Self::AllowRule => "allow_rule",
            Self::Prompt => "prompt",
        }
    }
}

/// Which list a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleList {
    /// `permissions.allow`
    Allow,
    /// `permissions.ask`
    Ask,
    /// `permissions.deny`
    Deny,
}

impl RuleList {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// Where settings come from, lowest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `~/.agent/settings.json` (or `~/.claude/settings.json`).
    User,
    /// `<project>/.agent/settings.json`.
    Project,
    /// `<project>/.agent/settings.local.json`.
    Local,
    /// A `--settings FILE` or settings given in code.
    Cli,
    /// Rules added for this session only (grants, SDK options).
    Session,
}

impl Scope {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
            Self::Cli => "cli",
            Self::Session => "session",
        }
    }
}

/// Where one rule came from: the file, list and index a user can go and edit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleOrigin {
    /// The settings scope.
    pub scope: Scope,
    /// The file, when the rule came from one.
    pub file: Option<PathBuf>,
    /// The list the rule is in.
    pub list: RuleList,
    /// Its index in that list.
    pub index: usize,
}

impl fmt::Display for RuleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{}#", file.display())?,
            None => write!(f, "{}:", self.scope.as_str())?,
        }
        write!(f, "permissions.{}[{}]", self.list.as_str(), self.index)
    }
}

/// A rule that decided, with its text and origin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    /// The rule as written, e.g. `Bash(rm *)`.
    pub text: String,
    /// Where it was written.
    pub origin: RuleOrigin,
}

/// The permission engine's verdict on one call, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PermissionDecision {
    /// Allow, ask or deny.
    pub behavior: Behavior,
    /// The step that decided.
    pub step: Step,
    /// The rule that decided, when one did.
    pub rule: Option<RuleRef>,
    /// Why, in words a user can act on.
    pub reason: String,
    /// The input the call will run with, when a hook, policy or prompt replaced it.
    pub updated_input: Option<Value>,
    /// Rules that would allow this call, for an ask prompt or a deny message.
    pub suggestions: Vec<String>,
    /// Whether the user asked to stop the whole run (a prompter's deny with `interrupt`).
    pub interrupt: bool,
    /// For a Bash command allowed on a prediction (the read-only set, allow rules, a mode),
    /// the capabilities it was approved with, which the Bash tool enforces when it runs;
    /// `None` when a person, a hook or a policy approved it as written (the sandbox's own
    /// limits still apply).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containment: Option<super::Containment>,
    /// For a Bash call, the command's text and the one parse the decision was made on; the
    /// Bash tool checks and runs that parse when the command it gets is that text (it parses
    /// anew only when a hook or the user changed the command).
    #[serde(skip)]
    pub prepared: Option<std::sync::Arc<crate::shell::Prepared>>,
    /// Set for asks that neither a hook nor a PermissionRequest handler may approve (critical
    /// `rm`); only the prompter can.
    #[serde(skip)]
    pub(crate) hooks_cannot_allow: bool,
}

impl PermissionDecision {
    pub(crate) fn new(behavior: Behavior, step: Step, reason: impl Into<String>) -> Self {
        Self {
            behavior,
            step,
            rule: None,
            reason: reason.into(),
            updated_input: None,
            suggestions: Vec::new(),
            interrupt: false,
            containment: None,
            prepared: None,
            hooks_cannot_allow: false,
        }
    }

    pub(crate) fn with_rule(mut self, rule: Option<RuleRef>) -> Self {
        self.rule = rule;
        self
    }

    pub(crate) fn contained(mut self, containment: super::Containment) -> Self {
        self.containment = Some(containment);
        self
    }

    /// Whether the call may run.
    pub fn is_allowed(&self) -> bool {
        self.behavior == Behavior::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_wins_with_max() {
        assert_eq!(
            [Behavior::Allow, Behavior::Deny, Behavior::Ask]
                .into_iter()
                .max(),
            Some(Behavior::Deny)
        );
        assert!(Behavior::Allow < Behavior::Ask);
    }

    #[test]
    fn steps_are_numbered_as_designed() {
        let steps = [
            Step::Hook,
            Step::DenyRule,
            Step::AskRule,
            Step::Safety,
            Step::Policy,
            Step::HookAllow,
            Step::Mode,
            Step::AllowRule,
            Step::Prompt,
        ];
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(usize::from(s.number()), i + 1);
        }
    }

    #[test]
    fn origin_display_points_at_the_rule() {
        let o = RuleOrigin {
            scope: Scope::Project,
            file: Some(PathBuf::from("/p/.agent/settings.json")),
            list: RuleList::Deny,
            index: 2,
        };
        assert_eq!(o.to_string(), "/p/.agent/settings.json#permissions.deny[2]");
    }
}
