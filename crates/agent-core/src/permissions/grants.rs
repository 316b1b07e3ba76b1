//! Session grants: "ask once per session, then auto-allow" (seed 004's default), revocable and
//! resettable.
//!
//! A grant is scoped to a whole tool (`Bash`) or to a rule, usually the suggestion shown in the
//! prompt (`Bash(npm test *)`, `Edit(//repo/src/**)`). Grants are allow rules of the session
//! scope: they are checked at step 8, after deny and ask rules, safety checks, policies and the
//! mode, so they never approve what those refuse.

use std::sync::{Arc, PoisonError, RwLock};

use super::decision::{RuleList, RuleOrigin, Scope};
use super::rules::{Parsed, parse_rule};

/// What a grant covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GrantScope {
    /// Every call of one tool.
    Tool(String),
    /// Calls matching one rule, e.g. `Bash(npm test *)`.
    Rule(String),
}

impl GrantScope {
    /// The rule text this scope stands for.
    pub fn rule_text(&self) -> &str {
        match self {
            Self::Tool(t) | Self::Rule(t) => t,
        }
    }
}

/// Identifies one grant, for revoking it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GrantId(pub u64);

/// One active grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// Its id.
    pub id: GrantId,
    /// What it covers.
    pub scope: GrantScope,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    grants: Vec<Grant>,
    /// Bumped on every change, so engines can tell when to recompile.
    generation: u64,
}

/// The grants of one session. Cloning shares them (an `Arc` inside).
#[derive(Clone, Debug, Default)]
pub struct SessionGrants {
    inner: Arc<RwLock<Inner>>,
}

/// Occurs when a grant's rule does not parse, or is one allow lists ignore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot grant `{rule}`: {reason}")]
pub struct GrantError {
    /// The rule text.
    pub rule: String,
    /// What is wrong with it.
    pub reason: String,
}

impl SessionGrants {
    /// No grants.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a grant (an identical one is not added twice) and returns its id.
    ///
    /// # Errors
    /// [`GrantError`] when the scope's rule is malformed or would be ignored in an allow list.
    pub fn grant(&self, scope: GrantScope) -> Result<GrantId, GrantError> {
        match parse_rule(scope.rule_text(), RuleList::Allow) {
            Ok(Parsed::Rule(..)) => {}
            Ok(Parsed::Ignored(reason)) | Err(reason) => {
                return Err(GrantError {
                    rule: scope.rule_text().to_owned(),
                    reason,
                });
            }
        }
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(g) = inner.grants.iter().find(|g| g.scope == scope) {
            return Ok(g.id);
        }
        inner.next += 1;
        let id = GrantId(inner.next);
        inner.grants.push(Grant { id, scope });
        inner.generation += 1;
        Ok(id)
    }

    /// Removes one grant; returns whether it existed.
    pub fn revoke(&self, id: GrantId) -> bool {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        let before = inner.grants.len();
        inner.grants.retain(|g| g.id != id);
        let removed = inner.grants.len() != before;
        if removed {
            inner.generation += 1;
        }
        removed
    }

    /// Removes every grant.
    pub fn reset(&self) {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        inner.grants.clear();
        inner.generation += 1;
    }

    /// The active grants, oldest first.
    pub fn list(&self) -> Vec<Grant> {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .grants
            .clone()
    }

    /// A number that changes whenever the grants change.
    pub fn generation(&self) -> u64 {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .generation
    }

    /// The grants as allow-rule texts with their origins (scope `session`).
    pub(crate) fn rules(&self) -> Vec<(String, RuleOrigin)> {
        self.list()
            .into_iter()
            .enumerate()
            .map(|(index, g)| {
                (
                    g.scope.rule_text().to_owned(),
                    RuleOrigin {
                        scope: Scope::Session,
                        file: None,
                        list: RuleList::Allow,
                        index,
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_revoke_reset() {
        let g = SessionGrants::new();
        let a = g
            .grant(GrantScope::Rule("Bash(npm test *)".into()))
            .unwrap();
        let again = g
            .grant(GrantScope::Rule("Bash(npm test *)".into()))
            .unwrap();
        assert_eq!(a, again);
        let b = g.grant(GrantScope::Tool("WebFetch".into())).unwrap();
        assert_eq!(g.list().len(), 2);
        let before = g.generation();
        assert!(g.revoke(a));
        assert!(!g.revoke(a));
        assert!(g.generation() > before);
        assert_eq!(
            g.list(),
            vec![Grant {
                id: b,
                scope: GrantScope::Tool("WebFetch".into())
            }]
        );
        g.reset();
        assert!(g.list().is_empty());
    }

    #[test]
    fn bad_scopes_are_refused() {
        let g = SessionGrants::new();
        assert!(
            g.grant(GrantScope::Rule("Bash(".into()))
                .unwrap_err()
                .to_string()
                .contains("unbalanced")
        );
        assert!(g.grant(GrantScope::Rule("*".into())).is_err());
    }
}
