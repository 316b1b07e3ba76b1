//! `proc_exit` with the whole range of POSIX exit statuses.
//!
//! wasmtime-wasi 48 treats a `proc_exit` status of 126 or more as a trap, which would make a
//! guest unable to report what GNU tools report with those statuses: `env` and `nice` return 126
//! when they cannot run a command and 127 when it does not exist, `timeout` 124 and 125. The
//! guests are the project's own coreutils, checked against GNU, so the runner accepts every status
//! a POSIX parent can see, 0 to 255, and keeps a trap ([`crate::EXIT_TRAP`]) for larger ones
//! (POSIX would silently keep the low 8 bits, turning `exit(256)` into success).
//!
//! A guest can therefore exit with the same status as one of the host's limits;
//! [`crate::CommandMeta::limit_hit`] and [`crate::CommandMeta::trap`] say which happened.

use wasmtime::Linker;
use wasmtime_wasi::I32Exit;

use crate::store::StoreState;

/// Largest status `proc_exit` accepts.
const MAX_STATUS: u32 = 255;

/// Replaces the linker's `proc_exit` (added by `wasmtime_wasi::p1::add_to_linker_sync`).
pub(crate) fn shadow_proc_exit(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.func_wrap(
        "wasi_snapshot_preview1",
        "proc_exit",
        |status: i32| -> wasmtime::Result<()> {
            let status = status.cast_unsigned();
            if status > MAX_STATUS {
                wasmtime::bail!(
                    "proc_exit with status {status}, outside 0..=255 (a POSIX parent would see {})",
                    status & 0xff
                );
            }
            // Within 0..=255, so the conversion is exact.
            Err(I32Exit(status.cast_signed()).into())
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
