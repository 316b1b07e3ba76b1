//! An SSRF-safe fetch (feature `fetch`), for the WebFetch tool and WASI netfetch: every hop is
//! checked with [`UrlPolicy`], the connection is pinned to the checked addresses, redirects are
//! followed by hand (at most [`MAX_REDIRECTS`]), no proxy is used, and the body is capped.

use std::time::Duration;

use super::check::{Resolver, UrlPolicy};
use crate::verdict::Verdict;

/// Redirect hops followed at most.
pub const MAX_REDIRECTS: usize = 10;

/// Limits of one fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchLimits {
    /// Body bytes read at most (the rest is dropped and `truncated` set).
    pub max_body_bytes: usize,
    /// Timeout of each hop.
    pub timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: 5 << 20,
            timeout: Duration::from_secs(30),
        }
    }
}

/// A fetched response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchResponse {
    /// The final URL after redirects.
    pub url: String,
    /// Its status.
    pub status: u16,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body (at most `max_body_bytes`).
    pub body: Vec<u8>,
    /// Whether the body was cut.
    pub truncated: bool,
    /// Every URL visited, first to last.
    pub hops: Vec<String>,
}

/// Why a fetch did not happen or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The policy refused a hop.
    #[error("fetch refused at {url}: {}", verdict.reason)]
    Refused {
        /// The hop.
        url: String,
        /// The verdict.
        verdict: Verdict,
    },
    /// More than [`MAX_REDIRECTS`] redirects.
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects,
    /// A transport error.
    #[error("fetch of {url} failed: {message}")]
    Http {
        /// The hop.
        url: String,
        /// The error.
        message: String,
    },
}

/// GETs `url`, checking and pinning every hop.
///
/// # Errors
/// [`FetchError`] when a hop is refused, redirects loop, or the transport fails.
pub async fn fetch(
    policy: &UrlPolicy,
    resolver: &dyn Resolver,
    url: &str,
    limits: FetchLimits,
) -> Result<FetchResponse, FetchError> {
    let mut current = url.to_owned();
    let mut hops = Vec::new();
    for _ in 0..=MAX_REDIRECTS {
        let v = policy.check(&current, resolver);
        let (Some(parsed), true) = (v.url.clone(), v.verdict.allowed) else {
            return Err(FetchError::Refused {
                url: current,
                verdict: v.verdict,
            });
        };
        hops.push(parsed.to_string());
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let http = |message: String| FetchError::Http {
            url: parsed.to_string(),
            message,
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(limits.timeout)
            .resolve_to_addrs(&host, &v.addrs)
            .build()
            .map_err(|e| http(e.to_string()))?;
        let mut resp = client
            .get(parsed.as_str())
            .send()
            .await
            .map_err(|e| http(e.to_string()))?;
        let status = resp.status();
        if status.is_redirection()
            && let Some(loc) = resp.headers().get(reqwest::header::LOCATION)
        {
            let loc = loc
                .to_str()
                .map_err(|_| http("redirect Location is not text".into()))?;
            current = parsed
                .join(loc)
                .map_err(|e| http(format!("bad redirect Location {loc:?}: {e}")))?
                .to_string();
            continue;
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = resp.chunk().await.map_err(|e| http(e.to_string()))? {
            let room = limits.max_body_bytes.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(FetchResponse {
            url: parsed.to_string(),
            status: status.as_u16(),
            content_type,
            body,
            truncated,
            hops,
        });
    }
    Err(FetchError::TooManyRedirects)
}
