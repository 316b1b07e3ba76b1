//! Describing a provider: [`ProviderKind`], [`ProviderConfig`], [`ApiKey`] and
//! [`MaxTokensField`]. This module knows no adapter: the adapters read a [`ProviderConfig`],
//! and [`crate::build`] picks the adapter one names.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::ProviderError;
use crate::retry::RetryPolicy;

/// The environment variable that turns Anthropic prompt caching off (Claude Code's name).
const DISABLE_PROMPT_CACHING_ENV: &str = "DISABLE_PROMPT_CACHING";

/// Which API a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// The Anthropic Messages API (`anthropic`).
    Anthropic,
    /// OpenAI Chat Completions at api.openai.com (`openai`).
    OpenAi,
    /// A server speaking OpenAI Chat Completions: Ollama, vLLM, llama.cpp server, ...
    /// (`openai-compatible`). It needs a base URL; the API key is optional.
    OpenAiCompatible,
}

impl ProviderKind {
    /// Every kind, in the order the choices are listed.
    pub const ALL: [ProviderKind; 3] = [Self::Anthropic, Self::OpenAi, Self::OpenAiCompatible];

    /// The name used on the command line, in settings and as
    /// [`Provider::name`](crate::Provider::name): `anthropic`, `openai`, `openai-compatible`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
            Self::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The base URL used when none is configured (`None` for a compatible server, which
    /// must be given one).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Self::Anthropic => Some("https://api.anthropic.com"),
            Self::OpenAi => Some("https://api.openai.com/v1"),
            Self::OpenAiCompatible => None,
        }
    }

    /// The environment variable [`ProviderConfig::from_env`] reads the API key from.
    pub fn api_key_env(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
            // Never the OpenAI key: it must not go to whatever server a base URL names.
            Self::OpenAiCompatible => "OPENAI_COMPATIBLE_API_KEY",
        }
    }

    /// The environment variable [`ProviderConfig::from_env`] reads the base URL from.
    pub fn base_url_env(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_BASE_URL",
            Self::OpenAi => "OPENAI_BASE_URL",
            Self::OpenAiCompatible => "OPENAI_COMPATIBLE_BASE_URL",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = ProviderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let choices: Vec<&str> = Self::ALL.iter().map(|k| k.as_str()).collect();
                ProviderError::Config(format!(
                    "unknown provider {s:?}: choose one of {}",
                    choices.join(", ")
                ))
            })
    }
}

/// An API key. It prints as `ApiKey(****)` in `Debug` and `Display`, so it cannot end up in
/// a log or an error message by accident; [`ApiKey::expose`] is the one way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl From<&str> for ApiKey {
    fn from(key: &str) -> Self {
        Self(key.to_owned())
    }
}

/// OpenAI only: which request field carries
/// [`ModelRequest::max_tokens`](crate::ModelRequest::max_tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens`: what OpenAI wants (its reasoning models reject `max_tokens`).
    MaxCompletionTokens,
    /// `max_tokens`: what most compatible servers understand.
    MaxTokens,
}

impl MaxTokensField {
    /// The field's name in the request body.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::MaxCompletionTokens => "max_completion_tokens",
            Self::MaxTokens => "max_tokens",
        }
    }
}

/// Everything needed to build a provider. Start from [`ProviderConfig::new`] or
/// [`ProviderConfig::from_env`] and change fields.
///
/// HTTP: connections use rustls; no cookies are kept; redirects are not followed (an API does
/// not redirect, and the key must not follow one); proxies are reqwest's default, that is the
/// `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` / `NO_PROXY` environment variables.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderConfig {
    /// Which API.
    pub kind: ProviderKind,
    /// The API's base URL (`https://api.anthropic.com`, `https://api.openai.com/v1`,
    /// `http://localhost:11434/v1`, ...); `None` for the kind's default.
    pub base_url: Option<String>,
    /// The API key (required for `anthropic` and `openai`, optional for a compatible server).
    pub api_key: Option<ApiKey>,
    /// How failed calls are retried.
    pub retry: RetryPolicy,
    /// The longest wait for a TCP + TLS connection (default 30 s).
    pub connect_timeout: Duration,
    /// The longest wait for the response headers, from the start of the request (connecting
    /// included) (default 120 s).
    pub response_timeout: Duration,
    /// The longest silence between two chunks of a streamed response (default 300 s).
    pub idle_timeout: Duration,
    /// Overrides every model's context window, in tokens.
    pub context_window: Option<u64>,
    /// OpenAI only: the request field for the output limit. `None` means
    /// `max_completion_tokens` for `openai` and `max_tokens` for a compatible server.
    pub max_tokens_field: Option<MaxTokensField>,
    /// OpenAI only: send `stream_options: {"include_usage": true}` so the stream ends with a
    /// usage chunk (default on; turn it off for a compatible server that rejects the field,
    /// at the cost of usage being reported as zero).
    pub include_usage: bool,
    /// Anthropic only: mark prompt-cache breakpoints (`cache_control`) where Claude Code puts
    /// them: the last tool, the system prompt and the last two user turns (default on; off
    /// with `DISABLE_PROMPT_CACHING=1`, as in Claude Code). OpenAI caches prompt prefixes by
    /// itself and needs no marks.
    pub prompt_caching: bool,
}

impl ProviderConfig {
    /// A configuration of `kind` with defaults: no base URL (the kind's default), no key,
    /// [`RetryPolicy::default`], 30 s to connect, 120 s for the headers, 300 s between chunks.
    pub fn new(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: None,
            api_key: None,
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(30),
            response_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(300),
            context_window: None,
            max_tokens_field: None,
            include_usage: true,
            prompt_caching: true,
        }
    }

    /// The defaults of [`ProviderConfig::new`] with the key and base URL from the environment:
    /// `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` for `anthropic`, `OPENAI_API_KEY` /
    /// `OPENAI_BASE_URL` for `openai`, `OPENAI_COMPATIBLE_API_KEY` / `OPENAI_COMPATIBLE_BASE_URL` for
    /// `openai-compatible` (its own variables, so an OpenAI key is never sent to another server).
    /// `DISABLE_PROMPT_CACHING` set to anything but `0` or `false` turns
    /// [`ProviderConfig::prompt_caching`] off. Empty variables count as unset.
    pub fn from_env(kind: ProviderKind) -> Self {
        Self::from_lookup(kind, |name| std::env::var(name).ok())
    }

    /// [`ProviderConfig::from_env`] reading variables through `lookup`.
    pub(crate) fn from_lookup(kind: ProviderKind, lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let mut config = Self::new(kind);
        config.api_key = get(kind.api_key_env()).map(ApiKey::from);
        config.base_url = get(kind.base_url_env());
        config.prompt_caching = get(DISABLE_PROMPT_CACHING_ENV)
            .is_none_or(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false"));
        config
    }

    /// The same configuration with `base_url`.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The same configuration with `key`.
    pub fn with_api_key(mut self, key: impl Into<ApiKey>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The same configuration with `retry`.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The base URL to use, validated (http or https, with a host, no query or fragment) and
    /// without a trailing `/`.
    pub(crate) fn resolved_base_url(&self) -> Result<String, ProviderError> {
        let raw = match (&self.base_url, self.kind.default_base_url()) {
            (Some(url), _) => url.trim().to_owned(),
            (None, Some(default)) => default.to_owned(),
            (None, None) => {
                return Err(ProviderError::Config(format!(
                    "the {} provider needs a base URL: set {} or configure one (for example \
                     http://localhost:11434/v1 for Ollama)",
                    self.kind,
                    self.kind.base_url_env()
                )));
            }
        };
        validate_base_url(&raw)
    }

    /// The API key, or a [`ProviderError::Config`] saying which variable to set.
    pub(crate) fn required_key(&self) -> Result<&ApiKey, ProviderError> {
        match &self.api_key {
            Some(key) if !key.expose().trim().is_empty() => Ok(key),
            _ => Err(ProviderError::Config(format!(
                "no API key for the {} provider: set {} (or run `agent demo`, which needs no key)",
                self.kind,
                self.kind.api_key_env()
            ))),
        }
    }
}

fn validate_base_url(raw: &str) -> Result<String, ProviderError> {
    let bad = |why: &str| {
        ProviderError::Config(format!(
            "the base URL {raw:?} {why}: give an http(s) URL such as https://api.anthropic.com \
             or http://localhost:11434/v1"
        ))
    };
    let url = reqwest::Url::parse(raw).map_err(|e| bad(&format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("is not http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("has a query or fragment"));
    }
    Ok(raw.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.as_str().parse::<ProviderKind>().unwrap(), kind);
            assert_eq!(kind.to_string(), kind.as_str());
        }
        let err = "gemini".parse::<ProviderKind>().unwrap_err().to_string();
        assert!(
            err.contains("\"gemini\"") && err.contains("anthropic, openai, openai-compatible"),
            "{err}"
        );
    }

    fn config_for(kind: ProviderKind) -> ProviderConfig {
        ProviderConfig::new(kind).with_api_key("k-secret")
    }

    #[test]
    fn from_env_reads_the_kinds_variables() {
        let env = |name: &str| match name {
            "ANTHROPIC_API_KEY" => Some("a-key".to_owned()),
            "OPENAI_API_KEY" => Some("o-key".to_owned()),
            "OPENAI_BASE_URL" => Some("https://proxy.example/v1".to_owned()),
            "OPENAI_COMPATIBLE_API_KEY" => Some("c-key".to_owned()),
            "OPENAI_COMPATIBLE_BASE_URL" => Some("http://localhost:11434/v1".to_owned()),
            "ANTHROPIC_BASE_URL" => Some("  ".to_owned()),
            _ => None,
        };
        let a = ProviderConfig::from_lookup(ProviderKind::Anthropic, env);
        assert_eq!(a.api_key.as_ref().map(ApiKey::expose), Some("a-key"));
        assert_eq!(a.base_url, None);
        assert_eq!(a.resolved_base_url().unwrap(), "https://api.anthropic.com");
        let o = ProviderConfig::from_lookup(ProviderKind::OpenAiCompatible, env);
        assert_eq!(o.api_key.as_ref().map(ApiKey::expose), Some("c-key"));
        assert_eq!(o.resolved_base_url().unwrap(), "http://localhost:11434/v1");
        let none = ProviderConfig::from_lookup(ProviderKind::OpenAi, |_| None);
        assert_eq!(none, ProviderConfig::new(ProviderKind::OpenAi));
    }

    #[test]
    fn disable_prompt_caching_turns_the_breakpoints_off() {
        let with = |value: &str| {
            let value = value.to_owned();
            ProviderConfig::from_lookup(ProviderKind::Anthropic, move |name| {
                (name == "DISABLE_PROMPT_CACHING").then(|| value.clone())
            })
            .prompt_caching
        };
        assert!(ProviderConfig::new(ProviderKind::Anthropic).prompt_caching);
        assert!(!with("1"));
        assert!(!with("true"));
        assert!(with("0"));
        assert!(with("false"));
        assert!(with(""), "empty counts as unset");
    }

    #[test]
    fn base_urls_are_validated() {
        for bad in [
            "api.anthropic.com",
            "ftp://example.com",
            "file:///etc/passwd",
            "http://",
            "https://x.test/v1?key=1",
            "not a url",
        ] {
            let err = config_for(ProviderKind::Anthropic)
                .with_base_url(bad)
                .resolved_base_url()
                .unwrap_err();
            assert_eq!(err.kind(), "config", "{bad}");
            assert!(err.to_string().contains("http(s) URL"), "{err}");
        }
        assert_eq!(
            config_for(ProviderKind::OpenAi)
                .with_base_url("https://proxy.example.com/openai/v1/")
                .resolved_base_url()
                .unwrap(),
            "https://proxy.example.com/openai/v1"
        );
    }
}
