//! When and how long to wait before trying a call again.
//!
//! A call is retried on HTTP 408, 409, 429, 500, 502, 503, 504 and 529, and on connection
//! failures and timeouts that happen before the response headers arrived. Nothing else is
//! retried: a 400, 401, 403, 404 or 422 would fail the same way again, and once the response
//! started, the model's output cannot be taken back.
//!
//! The wait is the server's `retry-after-ms` or `retry-after` (seconds or an HTTP date) when it
//! sent one, capped at [`RetryPolicy::max_delay`]; otherwise exponential backoff with full
//! jitter: a uniformly random delay between zero and `base_delay * 2^retry`, capped at
//! `max_delay`.
//!
//! Whoever waits on a call can hear about each retry before its wait starts: run the call
//! inside [`report_retries`], and the observer gets a [`Retry`] (which attempt, how long the
//! wait, after what failure). The agent loop turns these into `AgentEvent::Retry`, which the
//! CLI shows as "retrying in 2 s after HTTP 503". The observer is scoped to the future (a
//! tokio task-local), so a provider that wraps another still reports its retries.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

/// How often and how patiently a call is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 4, so at most 5 attempts).
    pub max_retries: u32,
    /// The backoff's scale: the first retry waits up to this long (default 500 ms).
    pub base_delay: Duration,
    /// The longest wait, also for a server's `retry-after` (default 30 s).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The upper bound of the backoff before retry number `retry` (0 for the first retry):
    /// `base_delay * 2^retry`, capped at `max_delay`.
    pub fn backoff_ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// How long to wait before retry number `retry` (0 for the first retry): the server's
    /// `retry_after` capped at `max_delay` when given, otherwise a full-jitter backoff.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(after) => after.min(self.max_delay),
            None => jitter(self.backoff_ceiling(retry)),
        }
    }
}

/// One retry about to happen: reported to the observer of [`report_retries`] before the wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// The attempt that failed (1 for the first call).
    pub attempt: u32,
    /// The most retries the policy allows ([`RetryPolicy::max_retries`]).
    pub max_retries: u32,
    /// How long the provider waits before the next attempt.
    pub delay: Duration,
    /// What failed, in words: `HTTP 503`, `header timeout`, or the connection error.
    pub reason: String,
}

/// Hears about each [`Retry`] of the calls made inside [`report_retries`].
pub type RetryObserver = Arc<dyn Fn(&Retry) + Send + Sync>;

tokio::task_local! {
    static OBSERVER: RetryObserver;
}

/// Runs `call` (a provider call, e.g. `provider.stream(&request)`) with `observer` hearing
/// about each retry the provider makes while `call` runs, before each wait.
pub async fn report_retries<F: Future>(observer: RetryObserver, call: F) -> F::Output {
    OBSERVER.scope(observer, call).await
}

/// Tells the observer of the current [`report_retries`] scope, if any, about `retry`.
pub(crate) fn announce(retry: &Retry) {
    let _ = OBSERVER.try_with(|observer| observer(retry));
}

/// Whether an HTTP status is worth retrying: 408, 409, 429, 500, 502, 503, 504 and 529
/// (Anthropic's "overloaded").
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// The wait a response asks for: `retry-after-ms` (milliseconds), else `retry-after` (whole
/// seconds or an HTTP date). `None` when neither is present or readable.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let ms = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| Duration::from_secs_f64(ms.min(1e12) / 1000.0));
    ms.or_else(|| {
        headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()))
    })
}

/// Reads a `retry-after` value: delay-seconds, or an HTTP date (RFC 9110 §5.6.7: the
/// IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` every current server sends, or one of the two
/// obsolete forms) counted from `now` (a date in the past means "now").
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A uniformly random duration in `[0, ceiling]`, from std's randomly keyed hasher.
fn jitter(ceiling: Duration) -> Duration {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 {
        return Duration::ZERO;
    }
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    let random = hasher.finish();
    // Scale the 64 random bits onto [0, nanos] without modulo bias worth speaking of.
    let scaled = (u128::from(random) * (u128::from(nanos) + 1)) >> 64;
    Duration::from_nanos(u64::try_from(scaled).unwrap_or(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn defaults() {
        let p = RetryPolicy::default();
        assert_eq!(p.max_retries, 4);
        assert_eq!(p.base_delay, Duration::from_millis(500));
        assert_eq!(p.max_delay, Duration::from_secs(30));
        assert_eq!(RetryPolicy::never().max_retries, 0);
    }

    #[test]
    fn backoff_grows_exponentially_and_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff_ceiling(0), Duration::from_millis(500));
        assert_eq!(p.backoff_ceiling(1), Duration::from_secs(1));
        assert_eq!(p.backoff_ceiling(3), Duration::from_secs(4));
        assert_eq!(p.backoff_ceiling(10), Duration::from_secs(30));
        assert_eq!(p.backoff_ceiling(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn jittered_delays_stay_in_range_and_vary() {
        let p = RetryPolicy::default();
        let delays: Vec<_> = (0..200).map(|_| p.delay(2, None)).collect();
        assert!(delays.iter().all(|d| *d <= Duration::from_secs(2)));
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(distinct.len() > 150, "jitter is not random: {distinct:?}");
        let mean = delays.iter().sum::<Duration>() / 200;
        assert!(mean > Duration::from_millis(600) && mean < Duration::from_millis(1400));
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            p.delay(0, Some(Duration::from_secs(3600))),
            Duration::from_secs(30)
        );
        assert_eq!(p.delay(3, Some(Duration::ZERO)), Duration::ZERO);
    }

    #[test]
    fn retryable_statuses() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 413, 422, 501] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn retry_after_header_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", UNIX_EPOCH),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Tue, 29 Feb 2028 12:00:00 GMT", UNIX_EPOCH),
            Some(Duration::from_secs(1_835_438_400))
        );
        for bad in [
            "",
            "-1",
            "1.5",
            "soon",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad}");
        }
    }

    #[test]
    fn retry_after_ms_takes_precedence() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        h.insert("retry-after-ms", HeaderValue::from_static("junk"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
    }
}
