//! Selecting the adapter: [`build`] makes the provider a [`ProviderConfig`] names. The one
//! module that knows every adapter; the adapters themselves know only the configuration.

use std::sync::Arc;

use crate::anthropic::AnthropicProvider;
use crate::config::{ProviderConfig, ProviderKind};
use crate::error::ProviderError;
use crate::openai::OpenAiProvider;
use crate::provider::Provider;

/// Builds the provider `config` describes.
///
/// # Errors
/// [`ProviderError::Config`] when the key is missing (for `anthropic` and `openai`), the base
/// URL is not an http(s) URL with a host, or the HTTP client cannot be set up.
pub fn build(config: &ProviderConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(match config.kind {
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config)?),
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            Arc::new(OpenAiProvider::new(config)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApiKey;

    #[test]
    fn api_keys_are_never_printed() {
        let key = ApiKey::new("sk-ant-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(****)");
        assert_eq!(key.to_string(), "ApiKey(****)");
        let config = ProviderConfig::new(ProviderKind::Anthropic).with_api_key(key);
        let debug = format!("{config:?} {config:#?}");
        assert!(!debug.contains("secret"), "{debug}");
        let provider = build(&config).unwrap();
        assert_eq!(provider.name(), "anthropic");
        let config = ProviderConfig::new(ProviderKind::OpenAi).with_api_key("sk-secret-456");
        let provider = OpenAiProvider::new(&config).unwrap();
        assert!(!format!("{provider:?}").contains("secret"));
        let provider = AnthropicProvider::new(
            &ProviderConfig::new(ProviderKind::Anthropic).with_api_key("k-secret"),
        )
        .unwrap();
        assert!(!format!("{provider:?}").contains("secret"));
    }

    #[test]
    fn a_missing_key_says_which_variable_to_set() {
        for (kind, var) in [
            (ProviderKind::Anthropic, "ANTHROPIC_API_KEY"),
            (ProviderKind::OpenAi, "OPENAI_API_KEY"),
        ] {
            let err = build(&ProviderConfig::new(kind)).err().unwrap();
            assert_eq!(err.kind(), "config");
            let msg = err.to_string();
            assert!(msg.contains(var) && msg.contains("agent demo"), "{msg}");
        }
        // A compatible server needs a base URL but no key.
        let err = build(&ProviderConfig::new(ProviderKind::OpenAiCompatible))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("base URL") && err.contains("OPENAI_COMPATIBLE_BASE_URL"),
            "{err}"
        );
        let ok = ProviderConfig::new(ProviderKind::OpenAiCompatible)
            .with_base_url("http://127.0.0.1:8080/v1/");
        assert_eq!(build(&ok).unwrap().name(), "openai-compatible");
        assert_eq!(ok.resolved_base_url().unwrap(), "http://127.0.0.1:8080/v1");
    }
}
