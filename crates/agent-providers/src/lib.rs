//! Model providers for the agent runtime.
//!
//! The agent loop talks to a model through one trait, [`Provider`]: it sends a
//! provider-neutral [`ModelRequest`] (system prompt, [`Message`]s of [`ContentBlock`]s, the
//! [`ToolSpec`]s on offer) and reads back a stream of [`StreamEvent`]s: text as it arrives,
//! each tool call once its input is complete, and a final [`ModelResponse`] with the stop
//! reason and token usage. Adapters translate that to and from each API's wire format:
//!
//! - [`AnthropicProvider`]: the Anthropic Messages API (`POST /v1/messages`, streamed).
//! - [`OpenAiProvider`]: OpenAI Chat Completions (`POST /chat/completions`, streamed), at
//!   api.openai.com or any compatible server (Ollama, vLLM, llama.cpp server).
//! - [`ScriptedProvider`]: replays scripted responses through the same trait (the offline demo,
//!   tests and benchmarks).
//!
//! [`ProviderConfig`] describes which adapter to use and how (base URL, [`ApiKey`],
//! [`RetryPolicy`], timeouts); [`build`] turns it into an `Arc<dyn Provider>`. Both real
//! adapters read the response as Server-Sent Events with [`SseParser`]. Each call runs in an
//! `info` span `provider_call` (fields `provider`, `model`); status codes, attempts and retry
//! delays are logged at `debug`. Neither the key nor message bodies are ever logged.
//!
//! A provider retries what is safe to retry (429, 5xx, connection resets before the response
//! started, honouring `retry-after`) and reports everything else as one [`ProviderError`] whose
//! [`ProviderError::kind`] names the class. Dropping the stream cancels the request. A caller
//! that wants to show retries as they happen runs the call inside [`report_retries`].
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

mod anthropic;
mod config;
mod error;
mod http;
mod openai;
pub mod pricing;
mod provider;
mod retry;
mod scripted;
mod select;
mod sse;
mod types;

pub use anthropic::AnthropicProvider;
pub use config::{ApiKey, MaxTokensField, ProviderConfig, ProviderKind};
pub use error::ProviderError;
pub use openai::{OpenAiProvider, openai_context_window};
pub use provider::{EventStream, Provider};
pub use retry::{Retry, RetryObserver, RetryPolicy, is_retryable_status, report_retries};
pub use scripted::{ScriptedProvider, ScriptedTurn};
pub use select::build;
pub use sse::{SseEvent, SseParser};
pub use types::{
    ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason, StreamEvent, ToolChoice,
    ToolSpec, Usage,
};
