//! Why the agent could not start or run.

use agent_store::StoreError;

/// Why the agent could not start or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Occurs when the session store fails.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Occurs when the options are inconsistent.
    #[error("{0}")]
    Options(String),
}
