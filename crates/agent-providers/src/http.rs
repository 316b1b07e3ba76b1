//! The HTTP side shared by the adapters: building the client, sending a request with retries
//! and timeouts, and turning a streamed SSE body into [`StreamEvent`]s.
//!
//! Three timeouts apply: connecting (TCP + TLS, reqwest's `connect_timeout`), waiting for the
//! response headers from the start of the request ([`ProviderConfig::response_timeout`], a
//! `tokio::time::timeout` around `send`), and the silence between two body chunks
//! ([`ProviderConfig::idle_timeout`], a timeout around each chunk read). There is no overall
//! deadline: a long answer may stream for as long as chunks keep coming.

use std::collections::VecDeque;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tracing::{Instrument as _, Span, debug};

use crate::config::ProviderConfig;
use crate::error::ProviderError;
use crate::provider::EventStream;
use crate::retry::{Retry, RetryPolicy, announce, is_retryable_status, retry_after};
use crate::sse::{SseEvent, SseParser};
use crate::types::StreamEvent;

/// The most of an error body read (the message is near the start).
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Translates one API's SSE events into [`StreamEvent`]s.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one event, pushing what it completes to `out`; an `Err` is a
    /// [`ProviderError::Stream`] message and ends the stream.
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), String>;

    /// The body ended (cleanly): pushes what is left (the final `Done`, when the API allows
    /// an implicit end) or says why the stream is incomplete.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), String>;
}

/// The headers every streamed JSON call sends besides the provider's own: a JSON body, an SSE
/// answer.
pub(crate) fn json_sse_headers(headers: &mut HeaderMap) {
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        reqwest::header::ACCEPT,
        reqwest::header::HeaderValue::from_static("text/event-stream"),
    );
}

/// A reqwest client with the provider's retry policy and timeouts.
#[derive(Clone, Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    provider: &'static str,
    retry: RetryPolicy,
    response_timeout: Duration,
    idle_timeout: Duration,
}

impl Transport {
    /// A transport for `provider` configured by `config`.
    pub(crate) fn new(
        provider: &'static str,
        config: &ProviderConfig,
    ) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agent-runtime/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                ProviderError::Config(format!(
                    "cannot set up the HTTP client: {}",
                    error_chain(&e)
                ))
            })?;
        Ok(Self {
            client,
            provider,
            retry: config.retry,
            response_timeout: config.response_timeout,
            idle_timeout: config.idle_timeout,
        })
    }

    /// POSTs `body` to `url` and returns the response once its headers arrived with a 2xx
    /// status, retrying retryable statuses, connection failures and header timeouts.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Vec<u8>,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let can_retry = attempt <= self.retry.max_retries;
            let send = self
                .client
                .post(url)
                .headers(headers.clone())
                .body(body.clone())
                .send();
            let (failure, server_delay) = match tokio::time::timeout(self.response_timeout, send)
                .await
            {
                Err(_) => {
                    debug!(attempt, timeout = ?self.response_timeout, "no response headers in time");
                    if !can_retry {
                        return Err(ProviderError::Timeout {
                            provider: self.provider.to_owned(),
                            after: self.response_timeout,
                        });
                    }
                    ("header timeout".to_owned(), None)
                }
                Ok(Err(e)) => {
                    let message = error_chain(&e);
                    debug!(attempt, error = %message, "request failed before the response");
                    if !(can_retry && (e.is_connect() || e.is_timeout() || e.is_request())) {
                        return Err(ProviderError::Connection {
                            provider: self.provider.to_owned(),
                            message,
                            attempts: attempt,
                        });
                    }
                    (message, None)
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    debug!(attempt, status, "response headers");
                    if response.status().is_success() {
                        return Ok(response);
                    }
                    if !(can_retry && is_retryable_status(status)) {
                        let body = read_limited(response, self.response_timeout).await;
                        return Err(ProviderError::Status {
                            provider: self.provider.to_owned(),
                            status,
                            message: error_message(status, &body),
                            attempts: attempt,
                        });
                    }
                    (format!("HTTP {status}"), retry_after(response.headers()))
                }
            };
            let delay = self.retry.delay(attempt - 1, server_delay);
            debug!(attempt, reason = %failure, delay = ?delay, server_asked = server_delay.is_some(), "retrying");
            announce(&Retry {
                attempt,
                max_retries: self.retry.max_retries,
                delay,
                reason: failure,
            });
            tokio::time::sleep(delay).await;
        }
    }

    /// The events of a streamed SSE `response`, decoded by `decoder`, each read under `span`.
    /// One streamed call: `body` encoded as JSON, posted (with retries) inside a
    /// `provider_call` span, and its SSE body decoded by `decoder`.
    pub(crate) async fn call<D: Decoder>(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &impl serde::Serialize,
        model: &str,
        decoder: D,
    ) -> Result<EventStream, ProviderError> {
        let span = tracing::info_span!("provider_call", provider = self.provider, model = %model);
        let body = serde_json::to_vec(body).map_err(|e| {
            ProviderError::Config(format!("cannot encode the request as JSON: {e}"))
        })?;
        let response =
            tracing::Instrument::instrument(self.post(url, headers, body), span.clone()).await?;
        Ok(self.events(response, decoder, span))
    }

    pub(crate) fn events<D: Decoder>(
        &self,
        response: reqwest::Response,
        decoder: D,
        span: Span,
    ) -> EventStream {
        let state = StreamState {
            response,
            parser: SseParser::new(),
            decoder,
            pending: VecDeque::new(),
            finished: false,
            provider: self.provider,
            idle_timeout: self.idle_timeout,
        };
        let stream = futures_util::stream::unfold(state, move |mut state| {
            let span = span.clone();
            async move {
                loop {
                    if let Some(item) = state.pending.pop_front() {
                        return Some((item, state));
                    }
                    if state.finished {
                        return None;
                    }
                    state.read_more().await;
                }
            }
            .instrument(span)
        });
        Box::pin(stream)
    }
}

struct StreamState<D> {
    response: reqwest::Response,
    parser: SseParser,
    decoder: D,
    pending: VecDeque<Result<StreamEvent, ProviderError>>,
    finished: bool,
    provider: &'static str,
    idle_timeout: Duration,
}

impl<D: Decoder> StreamState<D> {
    /// Reads one chunk and queues what it completes; sets `finished` at the end.
    async fn read_more(&mut self) {
        let chunk = match tokio::time::timeout(self.idle_timeout, self.response.chunk()).await {
            Err(_) => {
                debug!(timeout = ?self.idle_timeout, "stream idle");
                return self.fail(ProviderError::Timeout {
                    provider: self.provider.to_owned(),
                    after: self.idle_timeout,
                });
            }
            Ok(Err(e)) => {
                let message = format!("the connection broke off mid-response: {}", error_chain(&e));
                return self.fail(self.stream_error(message));
            }
            Ok(Ok(chunk)) => chunk,
        };
        let mut out = Vec::new();
        let Some(bytes) = chunk else {
            let result = self.decoder.end(&mut out);
            self.finished = true;
            self.pending.extend(out.into_iter().map(Ok));
            if let Err(message) = result {
                let error = self.stream_error(message);
                self.pending.push_back(Err(error));
            }
            return;
        };
        for event in self.parser.feed(&bytes) {
            let result = self.decoder.event(event, &mut out);
            let done = out.iter().any(|e| matches!(e, StreamEvent::Done(_)));
            self.pending.extend(out.drain(..).map(Ok));
            if let Err(message) = result {
                let error = self.stream_error(message);
                return self.fail(error);
            }
            if done {
                if let Some(Ok(StreamEvent::Done(response))) = self.pending.back() {
                    debug!(stop_reason = response.stop_reason.as_str(), usage = ?response.usage, "stream complete");
                }
                self.finished = true;
                return;
            }
        }
    }

    fn stream_error(&self, message: String) -> ProviderError {
        ProviderError::Stream {
            provider: self.provider.to_owned(),
            message,
        }
    }

    fn fail(&mut self, error: ProviderError) {
        self.pending.push_back(Err(error));
        self.finished = true;
    }
}

/// Reads up to [`ERROR_BODY_LIMIT`] bytes of an error response (best effort).
async fn read_limited(mut response: reqwest::Response, timeout: Duration) -> String {
    let mut body = Vec::new();
    let read = async {
        while let Ok(Some(chunk)) = response.chunk().await {
            body.extend_from_slice(&chunk);
            if body.len() >= ERROR_BODY_LIMIT {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(timeout, read).await;
    body.truncate(ERROR_BODY_LIMIT);
    String::from_utf8_lossy(&body).into_owned()
}

/// The message of an error body: `error.message` (Anthropic and OpenAI), a string `error`
/// (Ollama), a top-level `message` (vLLM), else the body's start; with a hint for statuses
/// the user can fix.
pub(crate) fn error_message(status: u16, body: &str) -> String {
    let json: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = json.as_ref().and_then(|v| {
        let error = v.get("error");
        error
            .and_then(|e| e.get("message"))
            .and_then(|m| m.as_str())
            .or_else(|| error.and_then(|e| e.as_str()))
            .or_else(|| v.get("message").and_then(|m| m.as_str()))
            .map(str::to_owned)
    });
    let mut message = from_json.unwrap_or_else(|| {
        let trimmed = body.trim();
        if trimmed.is_empty() {
            "(empty body)".to_owned()
        } else {
            truncate(trimmed, 300)
        }
    });
    let hint = match status {
        401 | 403 => Some("check the API key"),
        404 => Some("check the model name and the base URL"),
        413 => Some("the request is too large; compact the conversation"),
        _ => None,
    };
    if let Some(hint) = hint {
        message.push_str(" (");
        message.push_str(hint);
        message.push(')');
    }
    message
}

/// `s` cut to at most `max` characters, with `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// An error and its sources, joined with `: ` (reqwest's own message is only the outer layer).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_from_the_common_body_shapes() {
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(
            error_message(401, anthropic),
            "invalid x-api-key (check the API key)"
        );
        let openai = r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":null}}"#;
        assert_eq!(error_message(429, openai), "Rate limit reached");
        assert_eq!(
            error_message(404, r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found (check the model name and the base URL)"
        );
        assert_eq!(
            error_message(400, r#"{"object":"error","message":"bad"}"#),
            "bad"
        );
        assert_eq!(
            error_message(502, "  <html>bad gateway</html> "),
            "<html>bad gateway</html>"
        );
        assert_eq!(error_message(500, ""), "(empty body)");
        assert_eq!(truncate("abcdef", 3), "abc…");
        assert_eq!(truncate("abc", 3), "abc");
    }
}
