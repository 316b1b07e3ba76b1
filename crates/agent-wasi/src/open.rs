//! `path_open` that refuses special files.
//!
//! Opening a FIFO blocks until its other end is opened, and wasmtime-wasi 48 opens files on
//! the thread that runs the guest: a module that opens a FIFO in the workspace (`cat fifo`)
//! would hold that thread inside `open(2)`, where epoch interruption cannot reach, past its
//! wall-time limit and for good. This module shadows wasmtime-wasi's `path_open` with a
//! wrapper that first looks at what the path names (`path_filestat_get`, following symlinks as
//! the open would): a FIFO, a device or any other file that is neither a regular file, a
//! directory nor a symlink the open will not follow is refused with `ENOTSUP` ("Not
//! supported") and never opened. Everything else, a path that does not exist yet included,
//! goes to wasmtime-wasi's own `path_open`.
//!
//! The look and the open are two steps: a FIFO put in the path's place between them (by
//! something outside the sandbox; guests cannot make FIFOs) would still block. The shell's
//! own opens have no such gap (`shell/workspace.rs` opens without blocking, then checks).
//! docs/shell.md (Special files) has the decision.

use wasmtime::{AsContextMut, Caller, Extern, Linker};
use wasmtime_wasi::p1::types::{Errno, Fd, Filetype, Lookupflags};
use wasmtime_wasi::p1::wasi_snapshot_preview1::{self, WasiSnapshotPreview1};
use wiggle::{GuestMemory, GuestPtr};

use crate::store::StoreState;

/// Module name of WASI preview 1 imports.
const WASI_P1: &str = "wasi_snapshot_preview1";

/// `lookupflags::symlink_follow`.
const SYMLINK_FOLLOW: i32 = 1;

/// Replaces the linker's `path_open` (added by `wasmtime_wasi::p1::add_to_linker_sync`) with
/// the one that refuses special files.
pub(crate) fn shadow_path_open(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.func_wrap(WASI_P1, "path_open", path_open)?;
    linker.allow_shadowing(false);
    Ok(())
}

#[expect(
    clippy::too_many_arguments,
    reason = "the arguments of WASI preview 1's path_open, as the guest passes them"
)]
fn path_open(
    mut caller: Caller<'_, StoreState>,
    dirfd: i32,
    dirflags: i32,
    path: i32,
    path_len: i32,
    oflags: i32,
    fs_rights_base: i64,
    fs_rights_inheriting: i64,
    fdflags: i32,
    opened_fd: i32,
) -> wasmtime::Result<i32> {
    let Some(Extern::Memory(memory)) = caller.get_export("memory") else {
        wasmtime::bail!("missing required memory export");
    };
    let fuel = caller.as_context_mut().hostcall_fuel();
    let (bytes, state) = memory.data_and_store_mut(&mut caller);
    let wasi = &mut state.wasi;
    wasi.set_hostcall_fuel(fuel);
    let mut guest_memory = GuestMemory::Unshared(bytes);

    let follow = if dirflags & SYMLINK_FOLLOW != 0 {
        Lookupflags::SYMLINK_FOLLOW
    } else {
        Lookupflags::empty()
    };
    let name: GuestPtr<str> = GuestPtr::new((path.cast_unsigned(), path_len.cast_unsigned()));
    let stat = wasmtime_wasi::runtime::in_tokio(WasiSnapshotPreview1::path_filestat_get(
        wasi,
        &mut guest_memory,
        Fd::from(dirfd.cast_unsigned()),
        follow,
        name,
    ));
    // A failed look (nothing there yet, a bad descriptor, a socket wasmtime-wasi cannot
    // describe) is left to the open, which fails the same way or creates a regular file;
    // none of those blocks.
    if let Ok(stat) = stat
        && !opens_without_blocking(stat.filetype)
    {
        return Ok(Errno::Notsup as i32);
    }
    wasmtime_wasi::runtime::in_tokio(wasi_snapshot_preview1::path_open(
        wasi,
        &mut guest_memory,
        dirfd,
        dirflags,
        path,
        path_len,
        oflags,
        fs_rights_base,
        fs_rights_inheriting,
        fdflags,
        opened_fd,
    ))
}

/// Whether opening a file of this type cannot block: a regular file, a directory, or a symlink
/// (seen only when the open does not follow it, which then fails at once). FIFOs (`Unknown` in
/// preview 1) and devices can block.
fn opens_without_blocking(filetype: Filetype) -> bool {
    matches!(
        filetype,
        Filetype::RegularFile | Filetype::Directory | Filetype::SymbolicLink
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_directories_and_unfollowed_links_open() {
        for open in [
            Filetype::RegularFile,
            Filetype::Directory,
            Filetype::SymbolicLink,
        ] {
            assert!(opens_without_blocking(open), "{open:?}");
        }
        for refused in [
            Filetype::Unknown,
            Filetype::CharacterDevice,
            Filetype::BlockDevice,
            Filetype::SocketStream,
            Filetype::SocketDgram,
        ] {
            assert!(!opens_without_blocking(refused), "{refused:?}");
        }
    }
}
