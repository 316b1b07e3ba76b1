//! What a command's wasmtime store holds: the WASI context, the limiter, the deadline and the
//! `agent_net` state. `command` builds it for one run; the host functions that shadow or add
//! WASI imports (`exit`, `net`, `open`, `poll`) and the linker in `runtime` read it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use wasmtime_wasi::p1::WasiP1Ctx;

use crate::limits::Limiter;
use crate::net::state::NetState;

/// Everything a command's [`wasmtime::Store`] holds.
pub(crate) struct StoreState {
    pub(crate) wasi: WasiP1Ctx,
    pub(crate) limiter: Limiter,
    /// When the wall-time limit runs out.
    pub(crate) deadline: Instant,
    pub(crate) wall_time: Duration,
    /// The caller's cancellation ([`crate::CommandInput::cancel`]).
    pub(crate) cancel: Option<Arc<AtomicBool>>,
    /// Origin of the guest's monotonic clock.
    pub(crate) clock_base: Instant,
    pub(crate) epoch_ticks: u64,
    /// The `agent_net` state.
    pub(crate) net: NetState,
}
