//! Which model provider and model a session uses: the command line first, then the settings
//! files that may grant, then the API keys in the environment.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::settings::Settings;
use agent_providers::{Provider, ProviderConfig, ProviderKind};
use anyhow::{Result, bail};
use serde_json::Value;

use crate::cli::run::SessionOptions;
use crate::output;

/// The default model of each provider (overridden by `--model` or the settings' `model`).
fn default_model(kind: ProviderKind) -> Option<&'static str> {
    match kind {
        ProviderKind::Anthropic => Some("claude-sonnet-4-5"),
        ProviderKind::OpenAi => Some("gpt-4.1"),
        ProviderKind::OpenAiCompatible => None,
    }
}

/// What the settings say about the provider: `"provider": "openai"` or `"provider": {"name":
/// "openai-compatible", "baseUrl": "http://localhost:11434/v1", "apiKeyEnv": "MY_KEY"}` (or
/// `"apiKey"` itself), and `"model"`; the last file that says wins. Only files that may grant
/// capabilities count: an untrusted project must not send your key to a server of its choosing.
/// Claude Code's files (`.claude/`) are not read for these: their `model` names a Claude model
/// by Claude Code's aliases (`opus`), which no provider API knows.
#[derive(Debug, Default)]
struct ProviderSettings {
    name: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
}

/// `own`: `$AGENT_HOME/settings.json` when `--setting-sources` left the user source out. The
/// provider and model are `agent`'s own configuration, which the SDK knows nothing of, so an
/// SDK caller's `setting_sources=[]` (about Claude Code's files) does not unset them; they are
/// read first, and any file that is loaded overrides them.
fn provider_settings(
    settings: &Settings,
    own: Option<(PathBuf, serde_json::Map<String, Value>)>,
) -> Result<ProviderSettings> {
    let mut out = ProviderSettings::default();
    let own_file = own.as_ref().map(|(p, v)| (p.as_path(), true, v));
    let files = settings
        .files
        .iter()
        .filter(|f| !f.claude)
        .map(|f| (f.path.as_path(), f.trusted, &f.value));
    for (path, trusted, value) in own_file.into_iter().chain(files) {
        let file = ProviderFile {
            path,
            trusted,
            value,
        };
        let where_ = file.path.display();
        if !file.trusted {
            if file.value.contains_key("provider") || file.value.contains_key("model") {
                output::warning(&format!(
                    "{where_}: provider and model settings skipped because this folder is not trusted"
                ));
            }
            continue;
        }
        match file.value.get("provider") {
            None => {}
            Some(Value::String(s)) => out.name = Some(s.clone()),
            Some(Value::Object(o)) => {
                let text = |key: &str| -> Result<Option<String>> {
                    match o.get(key) {
                        None => Ok(None),
                        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                        Some(_) => bail!("{where_}: provider.{key} must be a non-empty string"),
                    }
                };
                if let Some(n) = text("name")? {
                    out.name = Some(n);
                }
                if let Some(b) = text("baseUrl")? {
                    out.base_url = Some(b);
                }
                if let Some(k) = text("apiKey")? {
                    out.api_key = Some(k);
                }
                if let Some(var) = text("apiKeyEnv")? {
                    match std::env::var(&var) {
                        Ok(k) if !k.trim().is_empty() => out.api_key = Some(k),
                        _ => bail!(
                            "{where_}: provider.apiKeyEnv names {var}, which is not set; export it or remove the setting"
                        ),
                    }
                }
            }
            Some(other) => bail!(
                "{where_}: provider is {other}; use \"anthropic\", \"openai\", \"openai-compatible\" or {{\"name\": ..., \"baseUrl\": ..., \"apiKeyEnv\": ...}}"
            ),
        }
        if let Some(m) = file.value.get("model") {
            match m.as_str() {
                Some(m) => out.model = Some(m.to_owned()),
                None => bail!("{where_}: model is {m}; it must be a string"),
            }
        }
    }
    Ok(out)
}

/// One settings file as [`provider_settings`] reads it.
struct ProviderFile<'a> {
    path: &'a Path,
    trusted: bool,
    value: &'a serde_json::Map<String, Value>,
}

/// `$AGENT_HOME/settings.json`, read for its provider and model alone, when the settings'
/// sources leave the user's file out.
pub(crate) fn own_settings(
    loaded: &super::LoadedSettings,
) -> Result<Option<(PathBuf, serde_json::Map<String, Value>)>> {
    if loaded.sources.user {
        return Ok(None);
    }
    let path = super::agent_home()?.settings();
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(Some((path, map))),
        _ => bail!("{}: not a JSON object; fix or remove it", path.display()),
    }
}

/// The provider a session uses (`agent run`, `agent chat`, the headless mode), and the model.
pub(crate) fn provider(
    args: &SessionOptions,
    settings: &Settings,
    own: Option<(PathBuf, serde_json::Map<String, Value>)>,
) -> Result<(Arc<dyn Provider>, String)> {
    let set = provider_settings(settings, own)?;
    let name = match args.provider.clone().or(set.name) {
        Some(n) => n,
        None if std::env::var_os("ANTHROPIC_API_KEY").is_some_and(|k| !k.is_empty()) => {
            "anthropic".into()
        }
        None if std::env::var_os("OPENAI_API_KEY").is_some_and(|k| !k.is_empty()) => {
            "openai".into()
        }
        None => bail!(
            "no model provider is configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY), or pass --provider openai-compatible --base-url URL --model M for a local server; `agent demo` shows the whole loop offline without a key"
        ),
    };
    let kind: ProviderKind = name.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut config = ProviderConfig::from_env(kind);
    if let Some(b) = args.base_url.clone().or(set.base_url) {
        config = config.with_base_url(b);
    }
    if let Some(k) = set.api_key {
        config = config.with_api_key(k);
    }
    let model = match args.model.clone().or(set.model) {
        Some(m) => m,
        None => match default_model(kind) {
            Some(m) => m.to_owned(),
            None => bail!(
                "an openai-compatible server needs --model (the name the server knows, e.g. llama3.1)"
            ),
        },
    };
    let provider = agent_providers::build(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((provider, model))
}
