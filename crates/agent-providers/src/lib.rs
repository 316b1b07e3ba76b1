//! Model providers for the agent runtime.
//!
//! The agent loop talks to a model through one trait, [`Provider`]: it sends a
//! provider-neutral [`ModelRequest`] (system prompt, [`Message`]s of [`ContentBlock`]s, the
//! [`ToolSpec`]s on offer) and reads back a stream of [`StreamEvent`]s: text as it arrives,
//! each tool call once its input is complete, and a final [`ModelResponse`] with the stop
//! reason and token usage. Adapters translate that to and from each API's wire format:
//!
//! - [`ScriptedProvider`]: replays scripted responses through the same trait (the offline demo,
//!   tests and benchmarks).
//!
//! A provider retries what is safe to retry (429, 5xx, connection resets before the response
//! started, honouring `retry-after`) and reports everything else as one [`ProviderError`] whose
//! [`ProviderError::kind`] names the class. Dropping the stream cancels the request.
//!
//! ```
//! use agent_providers::{ModelRequest, Provider, ScriptedProvider, ScriptedTurn};
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! let provider = ScriptedProvider::new(vec![ScriptedTurn::text("Hello!")]);
//! let request = ModelRequest::new("scripted", vec![agent_providers::Message::user("hi")]);
//! let response = provider.complete(&request).await.unwrap();
//! assert_eq!(response.text(), "Hello!");
//! # });
//! ```

mod error;
mod provider;
mod scripted;
mod types;

pub use error::ProviderError;
pub use provider::{EventStream, Provider};
pub use scripted::{ScriptedProvider, ScriptedTurn};
pub use types::{
    ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason, StreamEvent,
    ToolChoice, ToolSpec, Usage,
};
