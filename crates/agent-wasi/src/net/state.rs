//! [`NetState`]: the network side of one command (in its store): the grant, the open
//! responses by handle, the counts its limits apply to, the last error, the audit records.

use std::time::{Duration, Instant};

use agent_sandbox::urls::fetch::FetchResponse;

use super::transfer::{Transfer, transfer};
use super::{ERR_BAD_HANDLE, NetAudit, NetErrorKind, NetGrant, NetLimits};
use crate::limits::LimitExceeded;

/// A response the guest reads.
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) content_type: Option<String>,
    pub(super) body: Vec<u8>,
    /// Bytes of `body` already read.
    pub(super) pos: usize,
}

/// The network state of one command (in its store).
pub(crate) struct NetState {
    grant: Option<NetGrant>,
    /// Index = handle; `None` once closed. Handles are never reused.
    pub(super) handles: Vec<Option<Response>>,
    requests: u64,
    total_bytes: u64,
    pub(super) last_error: String,
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
    pub(super) fn fail(&mut self, kind: NetErrorKind, message: String) -> i32 {
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
    pub(super) fn fetch(
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
    pub(super) fn response(&mut self, handle: i32) -> Result<&mut Response, i32> {
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

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
