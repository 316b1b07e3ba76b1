//! HTTP hooks: the input JSON is POSTed to a URL and a 2xx reply's body is read like a command
//! hook's stdout on exit 0. Non-2xx replies and connection errors are non-blocking (unless the
//! hook says `"onFailure": "block"`). Header values may read environment variables, but only
//! those the hook lists in `allowedEnvVars`; any other `$VAR` becomes empty, so a settings file
//! cannot exfiltrate the environment.
//!
//! The transport is a trait ([`HookHttpClient`]) so that agent-core stays free of an HTTP
//! stack: the `http` cargo feature provides [`ReqwestHookClient`] (rustls), and a host can
//! bring its own.

use std::time::Duration;

use super::protocol::{RawExit, RawRun};

/// At most this much of a reply body is read.
pub(crate) const MAX_BODY_BYTES: usize = 1 << 20;

/// One POST.
#[derive(Clone, Debug)]
pub struct HttpHookRequest<'a> {
    /// The URL.
    pub url: &'a str,
    /// Headers, already interpolated.
    pub headers: &'a [(String, String)],
    /// The JSON body.
    pub body: &'a [u8],
    /// The hook's timeout (the caller also enforces it).
    pub timeout: Duration,
    /// Read at most this many body bytes.
    pub max_body_bytes: usize,
}

/// A reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpHookReply {
    /// The status code.
    pub status: u16,
    /// The body (at most `max_body_bytes`).
    pub body: Vec<u8>,
}

/// Sends HTTP hook requests. Errors are one-line messages (connection refused, TLS, ...).
#[async_trait::async_trait]
pub trait HookHttpClient: Send + Sync {
    /// POSTs `request` with `Content-Type: application/json`.
    async fn post(&self, request: HttpHookRequest<'_>) -> Result<HttpHookReply, String>;
}

/// Replaces `$NAME` and `${NAME}` in `value`: names in `allowed` read `lookup`, every other name
/// becomes the empty string. `$$` is a literal `$`.
pub(crate) fn interpolate(
    value: &str,
    allowed: &[String],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let (name, tail) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => {
                    out.push('$');
                    rest = after;
                    continue;
                }
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
        } else if allowed.iter().any(|a| a == name) {
            out.push_str(&lookup(name).unwrap_or_default());
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Turns a reply (or a transport error) into a raw run for the protocol.
pub(crate) fn raw_from_reply(reply: Result<HttpHookReply, String>) -> RawRun {
    match reply {
        Ok(r) if (200..300).contains(&r.status) => RawRun {
            exit: RawExit::Code(0),
            stdout: String::from_utf8_lossy(&r.body).into_owned(),
            stderr: String::new(),
        },
        Ok(r) => {
            let body = String::from_utf8_lossy(&r.body);
            let first = body.trim().lines().next().unwrap_or("").trim();
            let first: String = first.chars().take(200).collect();
            RawRun {
                exit: RawExit::Failed(if first.is_empty() {
                    format!("replied HTTP {}", r.status)
                } else {
                    format!("replied HTTP {}: {first}", r.status)
                }),
                stdout: String::new(),
                stderr: String::new(),
            }
        }
        Err(e) => RawRun {
            exit: RawExit::Failed(format!("request failed: {e}")),
            stdout: String::new(),
            stderr: String::new(),
        },
    }
}

/// The built-in client (cargo feature `http`): reqwest with rustls, no redirects followed for
/// the POST, no cookies.
#[cfg(feature = "http")]
#[derive(Clone, Debug)]
pub struct ReqwestHookClient {
    client: reqwest::Client,
}

#[cfg(feature = "http")]
impl ReqwestHookClient {
    /// A client.
    ///
    /// # Errors
    /// When the TLS backend cannot be initialised.
    pub fn new() -> Result<Self, String> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agent-runtime-hooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map(|client| Self { client })
            .map_err(|e| format!("cannot build the HTTP client for http hooks: {e}"))
    }
}

#[cfg(feature = "http")]
#[async_trait::async_trait]
impl HookHttpClient for ReqwestHookClient {
    async fn post(&self, request: HttpHookRequest<'_>) -> Result<HttpHookReply, String> {
        let mut req = self
            .client
            .post(request.url)
            .timeout(request.timeout)
            .header("content-type", "application/json")
            .body(request.body.to_vec());
        for (k, v) in request.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let mut resp = req.send().await.map_err(|e| error_chain(&e))?;
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| error_chain(&e))? {
            let room = request.max_body_bytes.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= request.max_body_bytes {
                break;
            }
        }
        Ok(HttpHookReply { status, body })
    }
}

#[cfg(feature = "http")]
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_reads_only_allowed_names() {
        let env = |n: &str| match n {
            "TOKEN" => Some("t0k".to_owned()),
            "SECRET" => Some("s3cret".to_owned()),
            _ => None,
        };
        let allowed = vec!["TOKEN".to_owned()];
        let cases = [
            ("Bearer $TOKEN", "Bearer t0k"),
            ("Bearer ${TOKEN}!", "Bearer t0k!"),
            ("$SECRET", ""),
            ("x-${SECRET}-y", "x--y"),
            ("$$TOKEN", "$TOKEN"),
            ("cost: 5$", "cost: 5$"),
            ("${TOKEN", "${TOKEN"),
            ("$MISSING_BUT_UNLISTED", ""),
        ];
        for (input, want) in cases {
            assert_eq!(interpolate(input, &allowed, &env), want, "{input}");
        }
    }

    #[test]
    fn non_2xx_is_a_failure_and_2xx_is_stdout() {
        let ok = raw_from_reply(Ok(HttpHookReply {
            status: 200,
            body: b"{}".to_vec(),
        }));
        assert_eq!(ok.exit, RawExit::Code(0));
        let bad = raw_from_reply(Ok(HttpHookReply {
            status: 503,
            body: b"down\nmore".to_vec(),
        }));
        assert_eq!(bad.exit, RawExit::Failed("replied HTTP 503: down".into()));
    }
}
