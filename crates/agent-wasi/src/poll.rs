//! `poll_oneoff` bounded by the wall-time limit and the caller's cancellation.
//!
//! Epoch interruption stops a guest only while it runs wasm code. A guest that sleeps
//! (`poll_oneoff` with only clock subscriptions: `sleep`, `nanosleep`, `thread::sleep`) sits in
//! the host, where wasmtime-wasi 48 blocks the thread for the whole timeout, so `sleep 100000`
//! would hold a runner thread for a day whatever the limit. This module shadows wasmtime-wasi's
//! `poll_oneoff` with a wrapper that reads the subscriptions first: when every one of them is a
//! clock and the earliest would fire after the command's deadline, the wrapper sleeps until the
//! deadline and stops the guest with [`crate::EXIT_WALL_TIME`]. Otherwise it calls wasmtime-wasi's
//! own implementation, which then returns by the deadline: a clock fires before it, and any fd
//! subscription is ready at once (our stdio streams and files are always ready).
//!
//! The call goes through the function wasmtime-wasi's bindings generate
//! (`p1::wasi_snapshot_preview1::poll_oneoff`), the same one its linker entry calls, with the same
//! preparation (the guest's memory, the store's hostcall fuel). Calling the original linker entry
//! through a `Func` is not possible: a host function called from the host has no caller instance
//! and so no guest memory.

use std::time::{Duration, Instant, SystemTime};

use wasmtime::{AsContextMut, Caller, Extern, Linker};
use wasmtime_wasi::HostMonotonicClock;
use wasmtime_wasi::p1::wasi_snapshot_preview1::{self, WasiSnapshotPreview1};
use wiggle::GuestMemory;

use crate::limits::LimitExceeded;
use crate::store::StoreState;

/// Module name of WASI preview 1 imports.
const WASI_P1: &str = "wasi_snapshot_preview1";

/// Size of a preview 1 `subscription`, and offsets of the fields read here.
const SUBSCRIPTION_SIZE: u64 = 48;
const TAG_OFFSET: u64 = 8;
const CLOCK_ID_OFFSET: u64 = 16;
const CLOCK_TIMEOUT_OFFSET: u64 = 24;
const CLOCK_FLAGS_OFFSET: u64 = 40;
/// `eventtype::clock`.
const TAG_CLOCK: u8 = 0;
/// `clockid::realtime` and `clockid::monotonic`.
const CLOCK_REALTIME: u32 = 0;
const CLOCK_MONOTONIC: u32 = 1;
/// `subclockflags::subscription_clock_abstime`.
const ABSTIME: u16 = 1;

/// Replaces the linker's `poll_oneoff` (added by `wasmtime_wasi::p1::add_to_linker_sync`) with
/// the bounded one.
pub(crate) fn shadow_poll_oneoff(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.func_wrap(WASI_P1, "poll_oneoff", poll_oneoff)?;
    linker.allow_shadowing(false);
    Ok(())
}

fn poll_oneoff(
    mut caller: Caller<'_, StoreState>,
    subs: i32,
    events: i32,
    nsubscriptions: i32,
    nevents: i32,
) -> wasmtime::Result<i32> {
    let Some(Extern::Memory(memory)) = caller.get_export("memory") else {
        wasmtime::bail!("missing required memory export");
    };
    let fuel = caller.as_context_mut().hostcall_fuel();
    let (bytes, state) = memory.data_and_store_mut(&mut caller);

    let now = Instant::now();
    let left = state.deadline.saturating_duration_since(now);
    if let Some(wait) = clock_only_wait(bytes, subs, nsubscriptions, state.clock_base, now)
        && wait > left
    {
        if crate::cancel::sleep_until(now + left, state.cancel.as_deref()) {
            return Err(wasmtime::Error::new(crate::cancel::Cancelled));
        }
        return Err(wasmtime::Error::new(LimitExceeded::wall_time(
            state.wall_time,
        )));
    }

    // With a cancellation, a clock-only wait is slept here in slices that look at it; the
    // relative timeouts are then shortened by the time slept for wasmtime-wasi's own poll
    // (which finds the earliest due at once), and given back to the guest as they were.
    let mut shifted = Vec::new();
    if let Some(flag) = state.cancel.as_deref()
        && let Some(wait) = clock_only_wait(bytes, subs, nsubscriptions, state.clock_base, now)
    {
        if crate::cancel::sleep_until(now + wait, Some(flag)) {
            return Err(wasmtime::Error::new(crate::cancel::Cancelled));
        }
        shifted = shift_relative_clocks(bytes, subs, nsubscriptions, now.elapsed());
    }

    let wasi = &mut state.wasi;
    wasi.set_hostcall_fuel(fuel);
    let mut guest_memory = GuestMemory::Unshared(bytes);
    let result = wasmtime_wasi::runtime::in_tokio(wasi_snapshot_preview1::poll_oneoff(
        wasi,
        &mut guest_memory,
        subs,
        events,
        nsubscriptions,
        nevents,
    ));
    for (at, timeout) in shifted {
        write_u64(bytes, at, timeout);
    }
    result
}

/// Shortens every relative clock subscription's timeout by `by` (the time already waited),
/// returning where each one is and its value before, to be written back.
fn shift_relative_clocks(
    memory: &mut [u8],
    subs: i32,
    nsubscriptions: i32,
    by: Duration,
) -> Vec<(u64, u64)> {
    let base = u64::from(subs.cast_unsigned());
    let mut before = Vec::new();
    for index in 0..u64::from(nsubscriptions.cast_unsigned()) {
        let Some(at) = index
            .checked_mul(SUBSCRIPTION_SIZE)
            .and_then(|o| base.checked_add(o))
        else {
            break;
        };
        let relative = read_u16(memory, at + CLOCK_FLAGS_OFFSET).is_some_and(|f| f & ABSTIME == 0);
        if let (true, Some(timeout)) = (relative, read_u64(memory, at + CLOCK_TIMEOUT_OFFSET)) {
            write_u64(
                memory,
                at + CLOCK_TIMEOUT_OFFSET,
                timeout.saturating_sub(nanos(by)),
            );
            before.push((at + CLOCK_TIMEOUT_OFFSET, timeout));
        }
    }
    before
}

fn write_u64(memory: &mut [u8], at: u64, value: u64) {
    if let Some(slot) = usize::try_from(at)
        .ok()
        .and_then(|start| memory.get_mut(start..start.checked_add(8)?))
    {
        slot.copy_from_slice(&value.to_le_bytes());
    }
}

/// How long the poll would wait if every subscription is a valid clock subscription:
/// the time until the earliest one fires (`Duration::MAX` when it is out of range). `None` when
/// the poll has an fd subscription, an unknown clock, no subscriptions, or lies outside memory;
/// wasmtime-wasi then returns at once (with events or an error).
fn clock_only_wait(
    memory: &[u8],
    subs: i32,
    nsubscriptions: i32,
    clock_base: Instant,
    now: Instant,
) -> Option<Duration> {
    let base = u64::from(subs.cast_unsigned());
    let count = u64::from(nsubscriptions.cast_unsigned());
    if count == 0 {
        return None;
    }
    let mut earliest = Duration::MAX;
    for index in 0..count {
        let at = base.checked_add(index.checked_mul(SUBSCRIPTION_SIZE)?)?;
        if read_u8(memory, at + TAG_OFFSET)? != TAG_CLOCK {
            return None;
        }
        let id = read_u32(memory, at + CLOCK_ID_OFFSET)?;
        let timeout = read_u64(memory, at + CLOCK_TIMEOUT_OFFSET)?;
        let absolute = read_u16(memory, at + CLOCK_FLAGS_OFFSET)? & ABSTIME != 0;
        let relative_ns = match (id, absolute) {
            (CLOCK_REALTIME | CLOCK_MONOTONIC, false) => timeout,
            (CLOCK_REALTIME, true) => {
                let since_epoch = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default();
                timeout.saturating_sub(nanos(since_epoch))
            }
            (CLOCK_MONOTONIC, true) => {
                timeout.saturating_sub(nanos(now.saturating_duration_since(clock_base)))
            }
            _ => return None,
        };
        earliest = earliest.min(Duration::from_nanos(relative_ns));
    }
    Some(earliest)
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

fn read_array<const N: usize>(memory: &[u8], at: u64) -> Option<[u8; N]> {
    let start = usize::try_from(at).ok()?;
    memory.get(start..start.checked_add(N)?)?.try_into().ok()
}

fn read_u8(memory: &[u8], at: u64) -> Option<u8> {
    read_array::<1>(memory, at).map(|[byte]| byte)
}

fn read_u16(memory: &[u8], at: u64) -> Option<u16> {
    read_array(memory, at).map(u16::from_le_bytes)
}

fn read_u32(memory: &[u8], at: u64) -> Option<u32> {
    read_array(memory, at).map(u32::from_le_bytes)
}

fn read_u64(memory: &[u8], at: u64) -> Option<u64> {
    read_array(memory, at).map(u64::from_le_bytes)
}

/// The guest's monotonic clock: nanoseconds since `base`, the start of the command. Supplied
/// instead of wasmtime-wasi's default so [`clock_only_wait`] knows the origin of absolute
/// monotonic timeouts.
pub(crate) struct RunClock {
    pub(crate) base: Instant,
}

impl HostMonotonicClock for RunClock {
    fn resolution(&self) -> u64 {
        1
    }

    fn now(&self) -> u64 {
        nanos(self.base.elapsed())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    fn subscription(tag: u8, id: u32, timeout: u64, flags: u16) -> [u8; 48] {
        let mut sub = [0u8; 48];
        sub[8] = tag;
        sub[16..20].copy_from_slice(&id.to_le_bytes());
        sub[24..32].copy_from_slice(&timeout.to_le_bytes());
        sub[40..42].copy_from_slice(&flags.to_le_bytes());
        sub
    }

    #[test]
    fn earliest_relative_clock_wins() {
        let now = Instant::now();
        let mut memory = vec![0u8; 8];
        memory.extend_from_slice(&subscription(TAG_CLOCK, CLOCK_MONOTONIC, 5_000_000_000, 0));
        memory.extend_from_slice(&subscription(TAG_CLOCK, CLOCK_REALTIME, 2_000, 0));
        let wait = clock_only_wait(&memory, 8, 2, now, now).unwrap();
        assert_eq!(wait, Duration::from_nanos(2_000));
    }

    #[test]
    fn absolute_monotonic_counts_from_the_clock_base() {
        let base = Instant::now();
        let now = base + Duration::from_secs(3);
        let memory = subscription(TAG_CLOCK, CLOCK_MONOTONIC, 10_000_000_000, ABSTIME);
        let wait = clock_only_wait(&memory, 0, 1, base, now).unwrap();
        assert_eq!(wait, Duration::from_secs(7));
    }

    #[test]
    fn fd_subscriptions_unknown_clocks_and_bad_pointers_are_left_to_wasmtime_wasi() {
        let now = Instant::now();
        let mut memory = subscription(TAG_CLOCK, CLOCK_MONOTONIC, 1, 0).to_vec();
        memory.extend_from_slice(&subscription(1, 0, 0, 0));
        assert_eq!(clock_only_wait(&memory, 0, 2, now, now), None);
        let cputime = subscription(TAG_CLOCK, 2, 1, 0);
        assert_eq!(clock_only_wait(&cputime, 0, 1, now, now), None);
        assert_eq!(clock_only_wait(&cputime, 40, 1, now, now), None);
        assert_eq!(clock_only_wait(&cputime, 0, 0, now, now), None);
        assert_eq!(clock_only_wait(&cputime, -1, 1, now, now), None);
    }

    #[test]
    fn waited_time_comes_off_relative_clocks_only_and_goes_back() {
        let mut memory = subscription(TAG_CLOCK, CLOCK_MONOTONIC, 5_000, 0).to_vec();
        memory.extend_from_slice(&subscription(TAG_CLOCK, CLOCK_MONOTONIC, 9_000, ABSTIME));
        let before = memory.clone();
        let shifted = shift_relative_clocks(&mut memory, 0, 2, Duration::from_nanos(7_000));
        assert_eq!(read_u64(&memory, CLOCK_TIMEOUT_OFFSET), Some(0));
        assert_eq!(read_u64(&memory, 48 + CLOCK_TIMEOUT_OFFSET), Some(9_000));
        for (at, timeout) in shifted {
            write_u64(&mut memory, at, timeout);
        }
        assert_eq!(memory, before);
    }
}
