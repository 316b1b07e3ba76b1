//! Loading configured hooks (the `hooks` blocks of settings files and plugin `hooks.json`
//! files, as a [`HooksConfig`]) into a [`HookRegistry`]: each handler becomes a registered hook,
//! or the whole configuration is refused with a [`HookLoadError`] naming its source.

use std::sync::Arc;

use serde_json::Value;

use super::condition::Condition;
use super::config::{ConfiguredHook, HandlerConfig, HooksConfig};
use super::entry::{Entry, Handler};
use super::extension::ExtensionHook;
#[cfg(feature = "http")]
use super::http;
use super::matcher::Matcher;
use super::registry::{HookLoadError, HookRegistry};

impl HookRegistry {
    /// Registers every hook of `config` (after any registered before).
    ///
    /// # Errors
    /// [`HookLoadError`] for a matcher that does not compile, or a handler kind this host
    /// cannot run (`prompt`/`agent`/`mcp_tool` without an extension, `http` without a client).
    /// Nothing of `config` is registered then.
    pub fn load(&mut self, config: &HooksConfig) -> Result<(), HookLoadError> {
        let previous = self.runner.environment.clone();
        if config.environment.set_by.is_some() || config.environment.scrub_secrets {
            self.runner_mut().environment = config.environment.clone();
        }
        let mut staged = Vec::with_capacity(config.hooks.len());
        for hook in &config.hooks {
            match self.entry_for(hook) {
                Ok(e) => staged.push(e),
                Err(e) => {
                    self.runner_mut().environment = previous;
                    return Err(e);
                }
            }
        }
        self.warnings.extend(config.warnings.iter().cloned());
        if let Some(d) = &config.disabled_by {
            self.disabled_by = Some(d.clone());
        }
        for e in staged {
            self.push(e);
        }
        Ok(())
    }

    fn entry_for(&mut self, hook: &ConfiguredHook) -> Result<Entry, HookLoadError> {
        let source = hook.source.to_string();
        let err = |problem: String| HookLoadError {
            origin: source.clone(),
            problem,
        };
        let matcher = Matcher::new(hook.matcher.as_deref()).map_err(&err)?;
        let timeout = hook.timeout.unwrap_or(self.default_timeout);
        let (handler, dedup) = match &hook.handler {
            HandlerConfig::Command {
                command,
                args,
                shell,
            } => (
                Handler::Configured(hook.handler.clone()),
                format!(
                    "command\0{command}\0{:?}\0{shell:?}\0{:?}",
                    args, hook.source.plugin_root
                ),
            ),
            HandlerConfig::Http {
                url,
                headers,
                allowed_env_vars,
            } => {
                self.ensure_http_client().map_err(&err)?;
                for name in allowed_env_vars {
                    if self.runner.environment.withholds(name) {
                        self.warnings.push(format!(
                            "{source}: `allowedEnvVars` names {name}, which hookEnvironment.scrubSecrets withholds, so its headers read it as empty; add it to hookEnvironment.passthrough to send it"
                        ));
                    }
                }
                (
                    Handler::Configured(hook.handler.clone()),
                    format!("http\0{url}\0{headers:?}"),
                )
            }
            HandlerConfig::Extension { kind, fields } => {
                let Some(ext) = self.extensions.get(kind) else {
                    return Err(err(format!(
                        "hook type \"{kind}\" is not supported by this host: {kind} hooks are run by a host with a model (agent-loop); use a \"command\" or \"http\" hook here"
                    )));
                };
                (
                    Handler::Extension(
                        ext.clone(),
                        ExtensionHook {
                            kind: kind.clone(),
                            fields: fields.clone(),
                            timeout,
                        },
                    ),
                    format!("{kind}\0{}", Value::Object(fields.clone())),
                )
            }
        };
        let condition = hook.condition.as_deref().map(|text| {
            let (c, warning) = Condition::new(text, &self.runner.project_dir, &self.home);
            if let Some(w) = warning {
                self.warnings.push(format!("{source}: {w}"));
            }
            c
        });
        if condition.is_some() && !hook.event.is_tool_event() {
            self.warnings.push(format!(
                "{source}: `if` on {} means this hook never runs (`if` applies to tool events only)",
                hook.event
            ));
        }
        Ok(Entry {
            id: self.next(),
            event: hook.event,
            matcher_text: hook.matcher.as_deref().map(Arc::from),
            matcher,
            condition,
            timeout,
            on_failure: hook.on_failure,
            is_async: hook.is_async,
            kind: hook.handler.kind().into(),
            label: hook.handler.label().into(),
            handler,
            source: source.into(),
            status_message: hook.status_message.clone(),
            dedup: Some(dedup),
            plugin_root: hook.source.plugin_root.clone(),
            duplicate_of: None,
        })
    }

    fn ensure_http_client(&mut self) -> Result<(), String> {
        if self.runner.http.is_some() {
            return Ok(());
        }
        #[cfg(feature = "http")]
        {
            let client = http::ReqwestHookClient::new()?;
            self.runner_mut().http = Some(Arc::new(client));
            Ok(())
        }
        #[cfg(not(feature = "http"))]
        Err("http hooks need an HTTP client: enable agent-core's `http` feature or call HookRegistry::set_http_client".into())
    }
}
