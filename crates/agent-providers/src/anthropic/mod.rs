//! [`AnthropicProvider`]: the Anthropic Messages API (`POST /v1/messages`, streamed).
//!
//! Two halves, one file each: [`request`] turns a [`ModelRequest`] into the API's request body
//! (merged turns, tool results first, prompt-cache breakpoints), and [`stream`] decodes the
//! API's stream events into [`StreamEvent`](crate::StreamEvent)s. This file holds the provider
//! itself: its headers and the call through the shared [`Transport`].

mod request;
mod stream;

use std::fmt;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::config::{ProviderConfig, ProviderKind};
use crate::error::ProviderError;
use crate::http::Transport;
use crate::provider::{EventStream, Provider};
use crate::types::ModelRequest;
use request::request_body;
use stream::AnthropicDecoder;

const NAME: &str = "anthropic";

/// A model behind the Anthropic Messages API.
pub struct AnthropicProvider {
    transport: Transport,
    url: String,
    headers: HeaderMap,
    context_window: Option<u64>,
    prompt_caching: bool,
}

impl AnthropicProvider {
    /// The `anthropic-version` header sent.
    pub const API_VERSION: &'static str = "2023-06-01";
    /// The context window reported for every model (the 1M-token window is opt-in per
    /// request; this adapter does not opt in). [`ProviderConfig::context_window`] overrides it.
    pub const CONTEXT_WINDOW: u64 = 200_000;

    /// A provider configured by `config` (its kind must be `anthropic`).
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the key is missing or unusable, the base URL is invalid
    /// or the kind is not `anthropic`.
    pub fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        if config.kind != ProviderKind::Anthropic {
            return Err(ProviderError::Config(format!(
                "an Anthropic provider cannot be built from a {} configuration",
                config.kind
            )));
        }
        let url = format!("{}/v1/messages", config.resolved_base_url()?);
        let key = config.required_key()?;
        let mut key_value = HeaderValue::from_str(key.expose()).map_err(|_| {
            ProviderError::Config(
                "the Anthropic API key holds characters an HTTP header cannot carry: check \
                 ANTHROPIC_API_KEY"
                    .into(),
            )
        })?;
        key_value.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), key_value);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(Self::API_VERSION),
        );
        crate::http::json_sse_headers(&mut headers);
        Ok(Self {
            transport: Transport::new(NAME, config)?,
            url,
            headers,
            context_window: config.context_window,
            prompt_caching: config.prompt_caching,
        })
    }
}

impl fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("url", &self.url)
            .field("api_key", &"ApiKey(****)")
            .field("context_window", &self.context_window)
            .field("prompt_caching", &self.prompt_caching)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        NAME
    }

    fn context_window(&self, _model: &str) -> u64 {
        self.context_window.unwrap_or(Self::CONTEXT_WINDOW)
    }

    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, ProviderError> {
        self.transport
            .call(
                &self.url,
                &self.headers,
                &request_body(request, self.prompt_caching),
                &request.model,
                AnthropicDecoder::default(),
            )
            .await
    }
}
