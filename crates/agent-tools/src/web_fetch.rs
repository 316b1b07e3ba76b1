//! `WebFetch`: GETs a URL through agent-sandbox's SSRF-safe fetch (http/https only, every
//! redirect hop re-checked against private, loopback, link-local and other special addresses
//! and the domain lists, connections pinned to the checked addresses, no proxy, body capped)
//! and returns the page as Markdown.

use std::sync::Arc;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_sandbox::caps::floor_boundary;
use agent_sandbox::settings::NetworkSettings;
use agent_sandbox::urls::fetch::{FetchError, FetchLimits, fetch};
use agent_sandbox::urls::{Resolver, SystemResolver, UrlPolicy};
use serde_json::{Value, json};

use super::input::{object, str_field};
use super::markdown::html_to_markdown;

/// Markdown returned at most, in bytes (the rest is cut with a note).
pub const MAX_CONTENT_BYTES: usize = 100_000;

/// The `WebFetch` tool.
pub struct WebFetch {
    policy: UrlPolicy,
    resolver: Arc<dyn Resolver>,
    limits: FetchLimits,
}

impl std::fmt::Debug for WebFetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetch").finish_non_exhaustive()
    }
}

impl WebFetch {
    /// A WebFetch tool under the `sandbox.network` settings (domain lists), resolving names
    /// with the system resolver.
    pub fn new(network: &NetworkSettings) -> Self {
        Self {
            policy: UrlPolicy::new(network),
            resolver: Arc::new(SystemResolver),
            limits: FetchLimits::default(),
        }
    }

    /// Uses `policy` and `resolver` instead (tests pin names and exempt a loopback server).
    pub fn with_policy(mut self, policy: UrlPolicy, resolver: Arc<dyn Resolver>) -> Self {
        self.policy = policy;
        self.resolver = resolver;
        self
    }

    /// Sets the body and time limits.
    pub fn with_limits(mut self, limits: FetchLimits) -> Self {
        self.limits = limits;
        self
    }
}

#[async_trait::async_trait]
impl Tool for WebFetch {
    fn name(&self) -> &str {
        "WebFetch"
    }

    fn description(&self) -> &str {
        "Fetches a public http(s) URL and returns its content as Markdown (HTML converted, text \
         as is), at most 100 KB. Private, loopback and other internal addresses are refused, \
         at every redirect."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri"},
                "prompt": {"type": "string", "description": "What to look for in the page"}
            },
            "required": ["url", "prompt"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Network
    }

    fn is_read_only(&self) -> bool {
        true
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let url = str_field(&input, "url")?;
        let prompt = str_field(&input, "prompt")?;
        let resp = fetch(&self.policy, self.resolver.as_ref(), url, self.limits)
            .await
            .map_err(|e| match e {
                FetchError::Refused { .. } => ToolError::Sandbox(e.to_string()),
                other => ToolError::Execution(other.to_string()),
            })?;
        let ctype = resp.content_type.clone().unwrap_or_default();
        let lower = ctype.to_ascii_lowercase();
        let body = String::from_utf8_lossy(&resp.body);
        let content = if lower.contains("html") || (lower.is_empty() && body.contains("<html")) {
            html_to_markdown(&body)
        } else if lower.starts_with("text/")
            || lower.contains("json")
            || lower.contains("xml")
            || lower.contains("javascript")
            || lower.is_empty()
        {
            body.into_owned()
        } else {
            format!(
                "(binary content: {ctype}, {} bytes; not shown)",
                resp.body.len()
            )
        };
        let cut = content.len() > MAX_CONTENT_BYTES;
        let mut content = if cut {
            content[..floor_boundary(&content, MAX_CONTENT_BYTES)].to_owned()
        } else {
            content
        };
        if cut || resp.truncated {
            content.push_str("\n… (content cut; the page is longer)");
        }
        let failed = resp.status >= 400;
        Ok(ToolOutput {
            output: json!({
                "url": url,
                "finalUrl": resp.url,
                "status": resp.status,
                "contentType": resp.content_type,
                "bytes": resp.body.len(),
                "prompt": prompt,
                "content": content,
            }),
            is_error: failed,
        })
    }
}
