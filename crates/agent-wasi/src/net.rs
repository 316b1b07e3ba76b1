//! `agent_net`: the host import through which a guest fetches a URL, the only way out of the
//! runner for a guest (WASI preview 1 gives it no sockets).
//!
//! A command gets the network only through a grant ([`crate::CommandInput::net`], a
//! [`NetGrant`]): without one every call fails with [`ERR_NOT_GRANTED`]. With one, each request
//! goes through agent-sandbox's SSRF-safe fetch (`agent_sandbox::urls::fetch`): the grant's
//! [`UrlPolicy`] decides (allowed and denied domains; every address a name resolves to must be
//! public; the connection is pinned to the checked addresses; every redirect hop is checked
//! again), within the grant's [`NetLimits`] (time, bytes, requests per command, requests in
//! flight across the grant), and every request gets one audit record ([`NetAudit`]), also
//! emitted as a `tracing` event on the `agent_wasi::audit` target.
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

use std::net::IpAddr;
use std::ops::Range;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_sandbox::urls::fetch::{FetchError, FetchLimits, FetchResponse, fetch};
use agent_sandbox::urls::{Resolver, SystemResolver, UrlPolicy};
use serde::Serialize;
use wasmtime::{Caller, Extern, Linker, Memory};

use crate::command::StoreState;
use crate::limits::LimitExceeded;

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

/// The limits of a [`NetGrant`].
///
/// Defaults ([`NetLimits::default`]): timeout [`DEFAULT_NET_TIMEOUT`], responses up to
/// [`DEFAULT_MAX_RESPONSE_BYTES`], [`DEFAULT_MAX_REQUESTS`] requests and
/// [`DEFAULT_MAX_TOTAL_BYTES`] per command, [`DEFAULT_MAX_CONCURRENT`] in flight per grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetLimits {
    /// Time for one request: waiting for a concurrency slot, resolving, connecting, every
    /// redirect hop and the whole body. Cut to what is left of the command's wall-time limit;
    /// when that cut is what runs out, the command is stopped with [`crate::EXIT_WALL_TIME`]
    /// as any command over its wall time. Otherwise the guest gets [`ERR_TIMEOUT`].
    pub timeout: Duration,
    /// Longest body of one response; a longer one is [`ERR_RESPONSE_TOO_LARGE`] (the guest
    /// gets no part of it).
    pub max_response_bytes: usize,
    /// Most `fetch` calls of one command, refused ones included; the next is
    /// [`ERR_TOO_MANY_REQUESTS`].
    pub max_requests: u32,
    /// Most body bytes one command may receive over all its requests; a response that would
    /// pass it is [`ERR_TOTAL_BYTES`].
    pub max_total_bytes: u64,
    /// Most requests in flight at once across every command run with this grant (and its
    /// clones); a request waits for a slot within its timeout, then fails with [`ERR_BUSY`].
    /// 0 counts as 1.
    pub max_concurrent: usize,
}

impl Default for NetLimits {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_NET_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_requests: DEFAULT_MAX_REQUESTS,
            max_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
        }
    }
}

impl NetLimits {
    /// Sets [`NetLimits::timeout`].
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`NetLimits::max_response_bytes`].
    #[must_use]
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Sets [`NetLimits::max_requests`].
    #[must_use]
    pub fn with_max_requests(mut self, requests: u32) -> Self {
        self.max_requests = requests;
        self
    }

    /// Sets [`NetLimits::max_total_bytes`].
    #[must_use]
    pub fn with_max_total_bytes(mut self, bytes: u64) -> Self {
        self.max_total_bytes = bytes;
        self
    }

    /// Sets [`NetLimits::max_concurrent`].
    #[must_use]
    pub fn with_max_concurrent(mut self, requests: usize) -> Self {
        self.max_concurrent = requests;
        self
    }
}

/// One request of a guest, for the audit log ([`crate::CommandMeta::net_requests`], the
/// grant's [`NetGrant::on_audit`] callback, and a `tracing` event `net.fetch` on the
/// `agent_wasi::audit` target).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NetAudit {
    /// The URL the guest asked for, as given.
    pub url: String,
    /// The URL of the response, after redirects (normalised), when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    /// The HTTP status, when a response arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Body bytes received.
    pub bytes: u64,
    /// From the `fetch` call to its return, in microseconds.
    pub duration_us: u64,
    /// Why the request failed or was refused; `None` when the guest got the response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<NetErrorKind>,
    /// The message the guest gets from `error` when it failed (the policy's reason for a
    /// refusal).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A callback receiving each [`NetAudit`] record as it is made.
pub type AuditSink = Arc<dyn Fn(&NetAudit) + Send + Sync>;

/// Network access for commands: the URL policy, the limits, where audit records go, and the
/// concurrency slots shared by every command run with it (and its clones).
///
/// Cheap to clone; clones share the concurrency slots.
#[derive(Clone)]
pub struct NetGrant {
    policy: Arc<UrlPolicy>,
    resolver: Arc<dyn Resolver>,
    limits: NetLimits,
    audit: Option<AuditSink>,
    slots: Arc<Slots>,
}

impl std::fmt::Debug for NetGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetGrant")
            .field("policy", &self.policy)
            .field("limits", &self.limits)
            .field("audit", &self.audit.is_some())
            .finish_non_exhaustive()
    }
}

impl NetGrant {
    /// A grant for the URLs `policy` allows (build it from the sandbox's network settings with
    /// `UrlPolicy::new`; private and loopback addresses stay refused unless the policy exempts
    /// one), with [`NetLimits::default`], the system resolver, and no audit callback.
    pub fn new(policy: UrlPolicy) -> Self {
        Self {
            policy: Arc::new(policy),
            resolver: Arc::new(SystemResolver),
            limits: NetLimits::default(),
            audit: None,
            slots: Arc::new(Slots::default()),
        }
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: NetLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Resolves host names with `resolver` instead of the system's (a resolution that takes
    /// longer than the request's time left fails the request).
    #[must_use]
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Calls `sink` with every request's audit record, on the thread that runs the command.
    #[must_use]
    pub fn on_audit(mut self, sink: impl Fn(&NetAudit) + Send + Sync + 'static) -> Self {
        self.audit = Some(Arc::new(sink));
        self
    }

    /// The limits.
    pub fn limits(&self) -> &NetLimits {
        &self.limits
    }

    /// The URL policy.
    pub fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    /// Requests of this grant (and its clones) in flight now.
    pub fn in_flight(&self) -> usize {
        *self
            .slots
            .in_use
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The concurrency slots of a grant.
#[derive(Debug, Default)]
struct Slots {
    in_use: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    /// Takes a slot, waiting until `until` for one when `max` are in use.
    fn acquire(self: &Arc<Self>, max: usize, until: Instant) -> Option<SlotGuard> {
        let mut in_use = self.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if *in_use < max {
                *in_use += 1;
                return Some(SlotGuard(Arc::clone(self)));
            }
            let left = until
                .checked_duration_since(Instant::now())
                .filter(|left| !left.is_zero())?;
            in_use = self
                .freed
                .wait_timeout(in_use, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// A slot taken; given back on drop.
struct SlotGuard(Arc<Slots>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut in_use = self.0.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        *in_use = in_use.saturating_sub(1);
        drop(in_use);
        self.0.freed.notify_all();
    }
}

/// A response the guest reads.
struct Response {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
    /// Bytes of `body` already read.
    pos: usize,
}

/// The network state of one command (in its store).
pub(crate) struct NetState {
    grant: Option<NetGrant>,
    /// Index = handle; `None` once closed. Handles are never reused.
    handles: Vec<Option<Response>>,
    requests: u64,
    total_bytes: u64,
    last_error: String,
    /// The audit records of this command.
    pub(crate) records: Vec<NetAudit>,
}

/// One `fetch` call being answered.
struct Call {
    url: String,
    started: Instant,
    /// Whether it gets an audit record (see [`NetState::fetch`]).
    audited: bool,
}

/// How the transfer ended.
enum Transfer {
    Done(FetchResponse),
    TimedOut,
    Failed(NetErrorKind, String),
}

impl NetState {
    pub(crate) fn new(grant: Option<NetGrant>) -> Self {
        Self {
            grant,
            handles: Vec::new(),
            requests: 0,
            total_bytes: 0,
            last_error: String::new(),
            records: Vec::new(),
        }
    }

    /// Sets the last error and returns its code.
    fn fail(&mut self, kind: NetErrorKind, message: String) -> i32 {
        self.last_error = message;
        kind.code()
    }

    /// Records one request: the command's records, the grant's callback, a `tracing` event.
    fn audit(&mut self, call: &Call, audit: NetAudit) {
        if !call.audited {
            return;
        }
        tracing::info!(
            target: "agent_wasi::audit",
            url = %audit.url,
            final_url = audit.final_url.as_deref().unwrap_or(""),
            status = audit.status.unwrap_or(0),
            bytes = audit.bytes,
            duration_us = audit.duration_us,
            error = audit.error.map_or("", NetErrorKind::name),
            reason = audit.reason.as_deref().unwrap_or(""),
            "net.fetch"
        );
        if let Some(sink) = self.grant.as_ref().and_then(|g| g.audit.as_ref()) {
            sink(&audit);
        }
        self.records.push(audit);
    }

    /// Fails `call` with `kind`: the last error, its audit record, its code.
    fn refuse(
        &mut self,
        call: &Call,
        kind: NetErrorKind,
        reason: String,
        response: Option<&FetchResponse>,
    ) -> i32 {
        let audit = NetAudit {
            url: call.url.clone(),
            final_url: response.map(|r| r.url.clone()),
            status: response.map(|r| r.status),
            bytes: response.map_or(0, |r| r.body.len() as u64),
            duration_us: micros(call.started.elapsed()),
            error: Some(kind),
            reason: Some(reason.clone()),
        };
        self.audit(call, audit);
        self.fail(kind, reason)
    }

    /// The command's wall time ran out during `call`: audited, and the guest is stopped.
    fn stopped(&mut self, call: &Call, wall_time: Duration) -> wasmtime::Result<i32> {
        let reason = format!(
            "the command's wall-time limit of {} ms ran out during the request; the command was stopped",
            wall_time.as_millis()
        );
        self.refuse(call, NetErrorKind::Timeout, reason, None);
        Err(wasmtime::Error::new(LimitExceeded::wall_time(wall_time)))
    }

    /// `agent_net.fetch`. Every call counts as a request and gets one audit record, refused
    /// ones included, except calls past `max_requests + 1`: they are refused without a record,
    /// so a guest looping on a refusal cannot flood the audit log.
    fn fetch(
        &mut self,
        url: String,
        deadline: Instant,
        wall_time: Duration,
    ) -> wasmtime::Result<i32> {
        let started = Instant::now();
        self.requests = self.requests.saturating_add(1);
        let limits = self
            .grant
            .as_ref()
            .map_or_else(NetLimits::default, |g| g.limits);
        let call = Call {
            url,
            started,
            audited: self.requests <= u64::from(limits.max_requests).saturating_add(1),
        };
        let Some(grant) = self.grant.clone() else {
            let reason = "network is not granted to this command".to_owned();
            return Ok(self.refuse(&call, NetErrorKind::NotGranted, reason, None));
        };
        if self.requests > u64::from(limits.max_requests) {
            let reason = format!(
                "request limit reached: a command may make at most {} requests",
                limits.max_requests
            );
            return Ok(self.refuse(&call, NetErrorKind::TooManyRequests, reason, None));
        }
        let left = deadline.saturating_duration_since(started);
        if left.is_zero() {
            return self.stopped(&call, wall_time);
        }
        let cut = left < limits.timeout;
        let budget = limits.timeout.min(left);
        let until = started.checked_add(budget).unwrap_or(deadline);
        let remaining = limits.max_total_bytes.saturating_sub(self.total_bytes);
        if remaining == 0 {
            let reason = format!(
                "byte limit reached: the command already received {} bytes, its limit",
                self.total_bytes
            );
            return Ok(self.refuse(&call, NetErrorKind::TotalBytes, reason, None));
        }
        let cap = usize::try_from(remaining)
            .unwrap_or(usize::MAX)
            .min(limits.max_response_bytes);
        let max_concurrent = limits.max_concurrent.max(1);
        let Some(slot) = grant.slots.acquire(max_concurrent, until) else {
            if cut {
                return self.stopped(&call, wall_time);
            }
            let reason = format!(
                "{max_concurrent} requests were already in flight (the concurrency limit) and none ended within {} ms",
                budget.as_millis()
            );
            return Ok(self.refuse(&call, NetErrorKind::Busy, reason, None));
        };
        let transfer = transfer(&grant, &call.url, cap, until);
        drop(slot);
        match transfer {
            Transfer::Done(response) => {
                self.total_bytes = self.total_bytes.saturating_add(response.body.len() as u64);
                if response.truncated {
                    let (kind, reason) = if cap < limits.max_response_bytes {
                        (
                            NetErrorKind::TotalBytes,
                            format!(
                                "byte limit reached: the response would take the command past {} bytes received",
                                limits.max_total_bytes
                            ),
                        )
                    } else {
                        (
                            NetErrorKind::ResponseTooLarge,
                            format!(
                                "the response is larger than the limit of {} bytes",
                                limits.max_response_bytes
                            ),
                        )
                    };
                    return Ok(self.refuse(&call, kind, reason, Some(&response)));
                }
                let Ok(handle) = i32::try_from(self.handles.len()) else {
                    let reason = "too many responses for one command".to_owned();
                    return Ok(self.refuse(
                        &call,
                        NetErrorKind::TooManyRequests,
                        reason,
                        Some(&response),
                    ));
                };
                let audit = NetAudit {
                    url: call.url.clone(),
                    final_url: Some(response.url.clone()),
                    status: Some(response.status),
                    bytes: response.body.len() as u64,
                    duration_us: micros(call.started.elapsed()),
                    error: None,
                    reason: None,
                };
                self.audit(&call, audit);
                self.handles.push(Some(Response {
                    status: response.status,
                    content_type: response.content_type,
                    body: response.body,
                    pos: 0,
                }));
                Ok(handle)
            }
            Transfer::TimedOut if cut => self.stopped(&call, wall_time),
            Transfer::TimedOut => {
                let reason = format!(
                    "no complete response from {} within {} ms",
                    call.url,
                    budget.as_millis()
                );
                Ok(self.refuse(&call, NetErrorKind::Timeout, reason, None))
            }
            Transfer::Failed(kind, reason) => Ok(self.refuse(&call, kind, reason, None)),
        }
    }

    /// The open response `handle`, or [`ERR_BAD_HANDLE`] (and the last error set).
    fn response(&mut self, handle: i32) -> Result<&mut Response, i32> {
        let index = usize::try_from(handle)
            .ok()
            .filter(|&i| self.handles.get(i).is_some_and(Option::is_some));
        let Some(index) = index else {
            return Err(self.fail(
                NetErrorKind::BadHandle,
                format!("no open response has handle {handle}"),
            ));
        };
        self.handles
            .get_mut(index)
            .and_then(Option::as_mut)
            .ok_or(ERR_BAD_HANDLE)
    }
}

/// Runs the SSRF-safe fetch on a current-thread tokio runtime of its own, on this (the
/// runner's) thread, until `until`.
fn transfer(grant: &NetGrant, url: &str, cap: usize, until: Instant) -> Transfer {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            return Transfer::Failed(
                NetErrorKind::Http,
                format!("cannot start the network runtime: {err}"),
            );
        }
    };
    let resolver = DeadlineResolver {
        inner: Arc::clone(&grant.resolver),
        until,
    };
    let budget = until.saturating_duration_since(Instant::now());
    // agent-sandbox's per-hop timeout is a backstop: the overall one below fires first.
    let limits = FetchLimits {
        max_body_bytes: cap,
        timeout: budget.saturating_add(Duration::from_secs(1)),
    };
    let policy = &*grant.policy;
    let result = runtime.block_on(async {
        tokio::time::timeout(budget, fetch(policy, &resolver, url, limits)).await
    });
    // Nothing of the request outlives it (a connection task, a blocking resolution).
    runtime.shutdown_background();
    match result {
        Err(_elapsed) => Transfer::TimedOut,
        Ok(Ok(response)) => Transfer::Done(response),
        // A failure at the very end of the budget is the budget's doing (a resolution cut by
        // `DeadlineResolver`, say).
        Ok(Err(_)) if Instant::now() >= until => Transfer::TimedOut,
        Ok(Err(err @ FetchError::Refused { .. })) => {
            Transfer::Failed(NetErrorKind::Refused, err.to_string())
        }
        Ok(Err(err)) => Transfer::Failed(NetErrorKind::Http, err.to_string()),
    }
}

/// A resolver bounded by the request's time: the system resolver cannot be interrupted, so it
/// runs on a thread of its own and is abandoned when the time runs out.
struct DeadlineResolver {
    inner: Arc<dyn Resolver>,
    until: Instant,
}

impl Resolver for DeadlineResolver {
    fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        let (tx, rx) = mpsc::channel();
        let inner = Arc::clone(&self.inner);
        let name = host.to_owned();
        std::thread::Builder::new()
            .name("agent-wasi-resolve".to_owned())
            .spawn(move || {
                let _ = tx.send(inner.resolve(&name));
            })
            .map_err(|err| format!("cannot resolve {host}: {err}"))?;
        let left = self.until.saturating_duration_since(Instant::now());
        rx.recv_timeout(left)
            .unwrap_or_else(|_| Err(format!("resolving {host} took longer than the time left")))
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Adds the `agent_net` functions to the runner's linker.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.func_wrap(MODULE, "fetch", host_fetch)?;
    linker.func_wrap(MODULE, "status", host_status)?;
    linker.func_wrap(MODULE, "content_type", host_content_type)?;
    linker.func_wrap(MODULE, "read", host_read)?;
    linker.func_wrap(MODULE, "close", host_close)?;
    linker.func_wrap(MODULE, "error", host_error)?;
    Ok(())
}

/// The module's exported memory.
fn memory(caller: &mut Caller<'_, StoreState>) -> Option<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory),
        _ => None,
    }
}

/// `ptr..ptr + len` when it lies inside a memory of `size` bytes (`ptr` is unsigned, as wasm32
/// addresses are; a negative `len` is not a length).
fn guest_range(ptr: i32, len: i32, size: usize) -> Option<Range<usize>> {
    let start = usize::try_from(ptr.cast_unsigned()).ok()?;
    let len = usize::try_from(len).ok()?;
    let end = start.checked_add(len)?;
    (end <= size).then_some(start..end)
}

const NO_MEMORY: &str = "the module exports no memory named `memory`";

fn host_fetch(
    mut caller: Caller<'_, StoreState>,
    url_ptr: i32,
    url_len: i32,
) -> wasmtime::Result<i32> {
    let url = match memory(&mut caller) {
        None => Err(NO_MEMORY.to_owned()),
        Some(memory) => {
            let data = memory.data(&caller);
            if usize::try_from(url_len).is_ok_and(|len| len > MAX_URL_BYTES) {
                Err(format!("the URL is longer than {MAX_URL_BYTES} bytes"))
            } else {
                guest_range(url_ptr, url_len, data.len())
                    .and_then(|range| data.get(range))
                    .ok_or_else(|| {
                        format!(
                            "the URL ({url_len} bytes at {url_ptr:#x}) is not inside the module's memory"
                        )
                    })
                    .and_then(|bytes| {
                        String::from_utf8(bytes.to_vec())
                            .map_err(|_| "the URL is not UTF-8".to_owned())
                    })
            }
        }
    };
    let state = caller.data_mut();
    match url {
        Ok(url) => {
            let (deadline, wall_time) = (state.deadline, state.wall_time);
            state.net.fetch(url, deadline, wall_time)
        }
        Err(message) => Ok(state.net.fail(NetErrorKind::InvalidArgument, message)),
    }
}

fn host_status(mut caller: Caller<'_, StoreState>, handle: i32) -> i32 {
    match caller.data_mut().net.response(handle) {
        Ok(response) => i32::from(response.status),
        Err(code) => code,
    }
}

fn host_close(mut caller: Caller<'_, StoreState>, handle: i32) -> i32 {
    let net = &mut caller.data_mut().net;
    if let Err(code) = net.response(handle) {
        return code;
    }
    if let Some(slot) = usize::try_from(handle)
        .ok()
        .and_then(|i| net.handles.get_mut(i))
    {
        *slot = None;
    }
    0
}

fn host_read(mut caller: Caller<'_, StoreState>, handle: i32, buf_ptr: i32, buf_len: i32) -> i32 {
    let Some(memory) = memory(&mut caller) else {
        let net = &mut caller.data_mut().net;
        return net.fail(NetErrorKind::InvalidArgument, NO_MEMORY.to_owned());
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let net = &mut state.net;
    let Some(dest) = guest_range(buf_ptr, buf_len, data.len()).and_then(|r| data.get_mut(r)) else {
        return net.fail(
            NetErrorKind::InvalidArgument,
            format!(
                "the buffer ({buf_len} bytes at {buf_ptr:#x}) is not inside the module's memory"
            ),
        );
    };
    let response = match net.response(handle) {
        Ok(response) => response,
        Err(code) => return code,
    };
    let rest = response.body.get(response.pos..).unwrap_or_default();
    let n = rest.len().min(dest.len());
    if let (Some(to), Some(from)) = (dest.get_mut(..n), rest.get(..n)) {
        to.copy_from_slice(from);
    }
    response.pos += n;
    // At most `buf_len`, an i32.
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Copies at most `buf_len` bytes of `text` to the guest's buffer; returns `text`'s length, or
/// [`ERR_INVALID_ARGUMENT`] for a bad buffer.
fn copy_text(data: &mut [u8], buf_ptr: i32, buf_len: i32, text: &[u8]) -> Result<i32, ()> {
    let dest = guest_range(buf_ptr, buf_len, data.len())
        .and_then(|r| data.get_mut(r))
        .ok_or(())?;
    let n = text.len().min(dest.len());
    if let (Some(to), Some(from)) = (dest.get_mut(..n), text.get(..n)) {
        to.copy_from_slice(from);
    }
    Ok(i32::try_from(text.len()).unwrap_or(i32::MAX))
}

fn host_content_type(
    mut caller: Caller<'_, StoreState>,
    handle: i32,
    buf_ptr: i32,
    buf_len: i32,
) -> i32 {
    let Some(memory) = memory(&mut caller) else {
        let net = &mut caller.data_mut().net;
        return net.fail(NetErrorKind::InvalidArgument, NO_MEMORY.to_owned());
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    let net = &mut state.net;
    let content_type = match net.response(handle) {
        Ok(response) => response.content_type.clone().unwrap_or_default(),
        Err(code) => return code,
    };
    copy_text(data, buf_ptr, buf_len, content_type.as_bytes()).unwrap_or_else(|()| {
        net.fail(
            NetErrorKind::InvalidArgument,
            format!(
                "the buffer ({buf_len} bytes at {buf_ptr:#x}) is not inside the module's memory"
            ),
        )
    })
}

fn host_error(mut caller: Caller<'_, StoreState>, buf_ptr: i32, buf_len: i32) -> i32 {
    let Some(memory) = memory(&mut caller) else {
        return ERR_INVALID_ARGUMENT;
    };
    let (data, state) = memory.data_and_store_mut(&mut caller);
    copy_text(data, buf_ptr, buf_len, state.net.last_error.as_bytes())
        .unwrap_or(ERR_INVALID_ARGUMENT)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    #[test]
    fn guest_ranges_are_bounds_checked() {
        assert_eq!(guest_range(0, 4, 4), Some(0..4));
        assert_eq!(guest_range(4, 0, 4), Some(4..4));
        assert_eq!(guest_range(1, 4, 4), None);
        assert_eq!(guest_range(0, -1, 4), None);
        assert_eq!(guest_range(-1, 1, 1 << 20), None);
        assert_eq!(
            guest_range(i32::MAX, i32::MAX, usize::MAX),
            Some(0x7fff_ffff..0xffff_fffe)
        );
    }

    #[test]
    fn texts_are_cut_to_the_buffer_and_report_their_length() {
        let mut memory = [0u8; 8];
        assert_eq!(copy_text(&mut memory, 2, 3, b"hello"), Ok(5));
        assert_eq!(&memory, b"\0\0hel\0\0\0");
        assert_eq!(copy_text(&mut memory, 6, 3, b"x"), Err(()));
    }

    #[test]
    fn error_codes_round_trip() {
        for code in -10..=-1 {
            let kind = NetErrorKind::from_code(code).unwrap();
            assert_eq!(kind.code(), code);
        }
        assert_eq!(NetErrorKind::from_code(0), None);
        assert_eq!(NetErrorKind::from_code(-11), None);
    }

    #[test]
    fn slots_wait_then_give_up() {
        let slots = Arc::new(Slots::default());
        let first = slots.acquire(1, Instant::now()).unwrap();
        let started = Instant::now();
        assert!(
            slots
                .acquire(1, started + Duration::from_millis(30))
                .is_none()
        );
        assert!(started.elapsed() >= Duration::from_millis(30));
        let waiter = {
            let slots = Arc::clone(&slots);
            std::thread::spawn(move || {
                slots
                    .acquire(1, Instant::now() + Duration::from_secs(10))
                    .is_some()
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        drop(first);
        assert!(waiter.join().unwrap());
        assert_eq!(*slots.in_use.lock().unwrap(), 0);
    }
}
