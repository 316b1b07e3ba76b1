//! [`NetGrant`]: what a command may fetch (the URL policy, the resolver), within which
//! [`NetLimits`], where its [`NetAudit`] records go, and the concurrency slots its clones share.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_sandbox::urls::{Resolver, SystemResolver, UrlPolicy};
use serde::Serialize;

use super::{
    DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES, DEFAULT_NET_TIMEOUT, NetErrorKind,
};
#[cfg(doc)]
use super::{
    ERR_BUSY, ERR_RESPONSE_TOO_LARGE, ERR_TIMEOUT, ERR_TOO_MANY_REQUESTS, ERR_TOTAL_BYTES,
};

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
    pub(super) policy: Arc<UrlPolicy>,
    pub(super) resolver: Arc<dyn Resolver>,
    pub(super) limits: NetLimits,
    pub(super) audit: Option<AuditSink>,
    pub(super) slots: Arc<Slots>,
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
pub(super) struct Slots {
    in_use: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    /// Takes a slot, waiting until `until` for one when `max` are in use.
    pub(super) fn acquire(self: &Arc<Self>, max: usize, until: Instant) -> Option<SlotGuard> {
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
pub(super) struct SlotGuard(Arc<Slots>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut in_use = self.0.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        *in_use = in_use.saturating_sub(1);
        drop(in_use);
        self.0.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

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
