//! A sandbox verdict: allowed or not, why, and which setting decided.

use serde::Serialize;

/// The answer of every check in this crate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Whether the operation may go ahead.
    pub allowed: bool,
    /// Why, in words a user can act on.
    pub reason: String,
    /// The setting or built-in rule that decided, e.g. `deniedCommands: rm`,
    /// `allowedWritePaths: /project/build`, `built-in: filesystem root`.
    pub rule: Option<String>,
}

impl Verdict {
    /// An allow.
    pub fn allow(reason: impl Into<String>, rule: Option<String>) -> Self {
        Self {
            allowed: true,
            reason: reason.into(),
            rule,
        }
    }

    /// A denial.
    pub fn deny(reason: impl Into<String>, rule: Option<String>) -> Self {
        Self {
            allowed: false,
            reason: reason.into(),
            rule,
        }
    }
}
