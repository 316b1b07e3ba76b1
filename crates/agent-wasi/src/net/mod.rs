//! `agent_net`: the host import through which a guest fetches a URL, the only way out of the
//! runner for a guest (WASI preview 1 gives it no sockets).
//!
//! A command gets the network only through a grant ([`crate::CommandInput::net`], a
//! [`NetGrant`]): without one every call fails with [`ERR_NOT_GRANTED`]. With one, each request
//! goes through agent-sandbox's SSRF-safe fetch (`agent_sandbox::urls::fetch`): the grant's
//! [`UrlPolicy`](agent_sandbox::urls::UrlPolicy) decides (allowed and denied domains; every
//! address a name resolves to must be public; the connection is pinned to the checked
//! addresses; every redirect hop is checked again), within the grant's [`NetLimits`] (time,
//! bytes, requests per command, requests in flight across the grant), and every request gets
//! one audit record ([`NetAudit`]), also emitted as a `tracing` event on the
//! `agent_wasi::audit` target.
//!
//! # The ABI (module `agent_net`)
//!
//! All arguments and results are `i32`. Pointers are offsets into the module's exported
//! `memory`; every range is checked against it, and a bad one is an error code, never a trap.
//! A negative result is an error code (the `ERR_*` constants); `error` then gives the message.
//!
//! | function | arguments | result |
//! |---|---|---|
//! | `fetch` | `url_ptr, url_len`: the URL, UTF-8 | a handle ≥ 0 for the complete response, or an error code |
//! | `status` | `handle` | the HTTP status (100–599), or an error code |
//! | `content_type` | `handle, buf_ptr, buf_len` | the `Content-Type` value's length in bytes (0: none); copies at most `buf_len` bytes of it |
//! | `read` | `handle, buf_ptr, buf_len` | bytes of the body copied into the buffer, 0 at its end, or an error code |
//! | `close` | `handle` | 0, or an error code; frees the response |
//! | `error` | `buf_ptr, buf_len` | the last error message's length in bytes (0: none yet); copies at most `buf_len` bytes of it |
//!
//! `fetch` is a GET (the only method), blocks until the whole body has arrived (bounded by the
//! limits) and follows redirects itself. A handle stays valid until `close` or the end of the
//! command. `content_type` and `error` return the full length even when the buffer is shorter
//! (call again with a larger one); a cut may end inside a UTF-8 character. `error` with a bad
//! buffer returns [`ERR_INVALID_ARGUMENT`] and keeps the message.

//!
//! The pieces: [`NetGrant`] and [`NetLimits`] (`grant.rs`: what a command may do, shared
//! concurrency slots), the per-command state that answers a `fetch` and keeps the handles and
//! audit records (`state.rs`), the transfer itself on a runtime of its own with a resolver
//! bounded by the request's time (`transfer.rs`), and the host functions of the ABI above
//! (`host.rs`).

mod grant;
mod host;
pub(crate) mod state;
mod transfer;

use std::time::Duration;

use serde::Serialize;
use wasmtime::Linker;

pub use grant::{AuditSink, NetAudit, NetGrant, NetLimits};

use crate::store::StoreState;

/// The import module's name.
pub const MODULE: &str = "agent_net";

/// The command has no network grant.
pub const ERR_NOT_GRANTED: i32 = -1;
/// A pointer or length outside the module's memory, a negative length, a URL that is not
/// UTF-8 or longer than [`MAX_URL_BYTES`], or no exported `memory`.
pub const ERR_INVALID_ARGUMENT: i32 = -2;
/// The URL policy refused the URL or a redirect hop (not http/https, a domain not allowed or
/// denied, a private or loopback address, a name that does not resolve).
pub const ERR_REFUSED: i32 = -3;
/// The command already made [`NetLimits::max_requests`] requests.
pub const ERR_TOO_MANY_REQUESTS: i32 = -4;
/// The body was longer than [`NetLimits::max_response_bytes`].
pub const ERR_RESPONSE_TOO_LARGE: i32 = -5;
/// The body would take the command past [`NetLimits::max_total_bytes`].
pub const ERR_TOTAL_BYTES: i32 = -6;
/// No complete response within [`NetLimits::timeout`].
pub const ERR_TIMEOUT: i32 = -7;
/// [`NetLimits::max_concurrent`] requests of the grant were in flight and none ended within
/// the timeout.
pub const ERR_BUSY: i32 = -8;
/// The transfer failed: connection refused or reset, TLS, a malformed response, too many
/// redirects.
pub const ERR_HTTP: i32 = -9;
/// No open response has this handle (never returned, or closed).
pub const ERR_BAD_HANDLE: i32 = -10;

/// Longest URL `fetch` accepts, in bytes.
pub const MAX_URL_BYTES: usize = 8192;

/// Default [`NetLimits::timeout`]: 30 s.
pub const DEFAULT_NET_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`NetLimits::max_response_bytes`]: 5 MiB, as agent-sandbox's fetch.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 5 << 20;
/// Default [`NetLimits::max_requests`]: 32 per command.
pub const DEFAULT_MAX_REQUESTS: u32 = 32;
/// Default [`NetLimits::max_total_bytes`]: 20 MiB per command.
pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 20 << 20;
/// Default [`NetLimits::max_concurrent`]: 4 requests in flight per grant.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;

/// Why an `agent_net` call failed: the error codes as a type, for audit records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum NetErrorKind {
    /// [`ERR_NOT_GRANTED`].
    NotGranted,
    /// [`ERR_INVALID_ARGUMENT`].
    InvalidArgument,
    /// [`ERR_REFUSED`].
    Refused,
    /// [`ERR_TOO_MANY_REQUESTS`].
    TooManyRequests,
    /// [`ERR_RESPONSE_TOO_LARGE`].
    ResponseTooLarge,
    /// [`ERR_TOTAL_BYTES`].
    TotalBytes,
    /// [`ERR_TIMEOUT`] (also recorded when the command's wall-time limit stopped it during a
    /// request).
    Timeout,
    /// [`ERR_BUSY`].
    Busy,
    /// [`ERR_HTTP`].
    Http,
    /// [`ERR_BAD_HANDLE`].
    BadHandle,
}

impl NetErrorKind {
    /// The error code a guest sees.
    pub const fn code(self) -> i32 {
        match self {
            Self::NotGranted => ERR_NOT_GRANTED,
            Self::InvalidArgument => ERR_INVALID_ARGUMENT,
            Self::Refused => ERR_REFUSED,
            Self::TooManyRequests => ERR_TOO_MANY_REQUESTS,
            Self::ResponseTooLarge => ERR_RESPONSE_TOO_LARGE,
            Self::TotalBytes => ERR_TOTAL_BYTES,
            Self::Timeout => ERR_TIMEOUT,
            Self::Busy => ERR_BUSY,
            Self::Http => ERR_HTTP,
            Self::BadHandle => ERR_BAD_HANDLE,
        }
    }

    /// A short name for logs: `not-granted`, `invalid-argument`, `refused`,
    /// `too-many-requests`, `response-too-large`, `total-bytes`, `timeout`, `busy`, `http`,
    /// `bad-handle`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::NotGranted => "not-granted",
            Self::InvalidArgument => "invalid-argument",
            Self::Refused => "refused",
            Self::TooManyRequests => "too-many-requests",
            Self::ResponseTooLarge => "response-too-large",
            Self::TotalBytes => "total-bytes",
            Self::Timeout => "timeout",
            Self::Busy => "busy",
            Self::Http => "http",
            Self::BadHandle => "bad-handle",
        }
    }

    /// The kind of an error code, if it is one.
    pub const fn from_code(code: i32) -> Option<Self> {
        Some(match code {
            ERR_NOT_GRANTED => Self::NotGranted,
            ERR_INVALID_ARGUMENT => Self::InvalidArgument,
            ERR_REFUSED => Self::Refused,
            ERR_TOO_MANY_REQUESTS => Self::TooManyRequests,
            ERR_RESPONSE_TOO_LARGE => Self::ResponseTooLarge,
            ERR_TOTAL_BYTES => Self::TotalBytes,
            ERR_TIMEOUT => Self::Timeout,
            ERR_BUSY => Self::Busy,
            ERR_HTTP => Self::Http,
            ERR_BAD_HANDLE => Self::BadHandle,
            _ => return None,
        })
    }
}

/// Adds the `agent_net` functions to the runner's linker.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.func_wrap(MODULE, "fetch", host::fetch)?;
    linker.func_wrap(MODULE, "status", host::status)?;
    linker.func_wrap(MODULE, "content_type", host::content_type)?;
    linker.func_wrap(MODULE, "read", host::read)?;
    linker.func_wrap(MODULE, "close", host::close)?;
    linker.func_wrap(MODULE, "error", host::error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    #[test]
    fn error_codes_round_trip() {
        for code in -10..=-1 {
            let kind = NetErrorKind::from_code(code).unwrap();
            assert_eq!(kind.code(), code);
        }
        assert_eq!(NetErrorKind::from_code(0), None);
        assert_eq!(NetErrorKind::from_code(-11), None);
    }
}
