//! Why a provider call failed.

use std::time::Duration;

/// A failed provider call. [`ProviderError::kind`] is the machine-readable class written to
/// the session's `error` event.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Occurs when the provider is not configured (no API key, a bad base URL, ...).
    #[error("provider configuration: {0}")]
    Config(String),
    /// Occurs when the API answered with an error status (after retries, for retryable ones).
    #[error("{provider} returned HTTP {status}: {message}")]
    Status {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The API's error message (or the body's start).
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// Occurs when the connection failed (after retries).
    #[error("cannot reach {provider}: {message}")]
    Connection {
        /// The provider's name.
        provider: String,
        /// What failed.
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// Occurs when no byte arrived within the timeout.
    #[error("{provider} sent nothing for {:.0?}", .after)]
    Timeout {
        /// The provider's name.
        provider: String,
        /// How long it waited.
        after: Duration,
    },
    /// Occurs when the stream broke off or held something that is not the API's format: a
    /// malformed SSE line, an `error` event, invalid JSON, a stream that ended without its
    /// final event.
    #[error("{provider} stream: {message}")]
    Stream {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// Occurs when the response (not streamed) cannot be read.
    #[error("{provider} response: {message}")]
    InvalidResponse {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// Occurs when a scripted provider has no turn left.
    #[error("the scripted provider has no response left (it was given {0})")]
    ScriptExhausted(usize),
}

impl ProviderError {
    /// The class: `config`, `http_status`, `connection`, `timeout`, `stream`,
    /// `invalid_response`, `script_exhausted`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Config(_) => "config",
            Self::Status { .. } => "http_status",
            Self::Connection { .. } => "connection",
            Self::Timeout { .. } => "timeout",
            Self::Stream { .. } => "stream",
            Self::InvalidResponse { .. } => "invalid_response",
            Self::ScriptExhausted(_) => "script_exhausted",
        }
    }
}
