//! The `if` condition of a hook: a permission rule (`Bash(git push *)`) a tool call must match
//! for the hook to run. On events that are not about one tool call the hook never runs; a rule
//! that does not parse lets it run on every call (fail open).

use std::path::Path;

use super::input::HookInput;
use crate::permissions::rules::{Parsed, parse_rule};
use crate::permissions::{PermissionEngine, RuleList, ToolCall};

pub(super) struct Condition {
    pub(super) text: String,
    /// `None` when the rule does not parse: the hook then always runs (fail open, §5.1).
    pub(super) engine: Option<PermissionEngine>,
}

impl Condition {
    pub(super) fn new(text: &str, cwd: &Path, home: &Path) -> (Self, Option<String>) {
        let built = match parse_rule(text, RuleList::Deny) {
            Ok(Parsed::Rule(..)) => PermissionEngine::builder(cwd, home)
                .rule(RuleList::Deny, text)
                .and_then(|b| b.build().map_err(|e| e.to_string())),
            Ok(Parsed::Ignored(why)) => Err(why),
            Err(e) => Err(e),
        };
        match built {
            Ok(engine) => (
                Self {
                    text: text.to_owned(),
                    engine: Some(engine),
                },
                None,
            ),
            Err(e) => (
                Self {
                    text: text.to_owned(),
                    engine: None,
                },
                Some(format!(
                    "`if` rule {text:?} does not parse ({e}); the hook runs on every call (fail open)"
                )),
            ),
        }
    }

    /// Whether the hook runs for `input`: never on events that are not about one tool call;
    /// on tool events when the rule matches, or when the call cannot be analysed.
    pub(super) fn admits(&self, input: &HookInput) -> bool {
        if !input.event.is_tool_event() {
            return false;
        }
        let Some(engine) = &self.engine else {
            return true;
        };
        let (Some(tool), Some(tool_input)) = (input.tool_name(), input.tool_input()) else {
            return true;
        };
        let call = ToolCall::new(tool, tool_input.clone());
        engine.deny_rules_match(&call).unwrap_or(true)
    }
}
