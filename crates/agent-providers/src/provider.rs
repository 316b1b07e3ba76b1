//! The [`Provider`] trait.

use std::pin::Pin;

use futures_util::{Stream, StreamExt as _};

use crate::error::ProviderError;
use crate::types::{ModelRequest, ModelResponse, StreamEvent};

/// The stream of one call: text deltas and tool calls as they complete, then
/// [`StreamEvent::Done`]. Dropping it cancels the request.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send>>;

/// A model behind an API.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// A short name for messages and logs: `anthropic`, `openai`, `openai-compatible`,
    /// `scripted`.
    fn name(&self) -> &str;

    /// The context window of `model`, in tokens (what compaction measures against).
    fn context_window(&self, model: &str) -> u64 {
        let _ = model;
        200_000
    }

    /// Starts a call and returns its stream once the API accepted it (retrying what is safe
    /// to retry before that).
    ///
    /// # Errors
    /// A [`ProviderError`] when the call could not be started.
    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, ProviderError>;

    /// Runs a call to its end and returns the whole response.
    ///
    /// # Errors
    /// A [`ProviderError`] when the call failed or the stream ended without a response.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        let mut stream = self.stream(request).await?;
        while let Some(event) = stream.next().await {
            if let StreamEvent::Done(response) = event? {
                return Ok(response);
            }
        }
        Err(ProviderError::Stream {
            provider: self.name().to_owned(),
            message: "the stream ended before the response was complete".into(),
        })
    }
}
