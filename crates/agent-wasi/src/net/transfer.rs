//! One transfer: agent-sandbox's SSRF-safe fetch on a runtime of its own, bounded by the
//! request's time, with a resolver that gives up when that time runs out.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_sandbox::urls::Resolver;
use agent_sandbox::urls::fetch::{FetchError, FetchLimits, FetchResponse, fetch};

use super::{NetErrorKind, NetGrant};

/// How the transfer ended.
pub(super) enum Transfer {
    Done(FetchResponse),
    TimedOut,
    Failed(NetErrorKind, String),
}

/// Runs the SSRF-safe fetch on a current-thread tokio runtime of its own, on this (the
/// runner's) thread, until `until`.
pub(super) fn transfer(grant: &NetGrant, url: &str, cap: usize, until: Instant) -> Transfer {
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
