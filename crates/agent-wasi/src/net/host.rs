//! The host functions of the `agent_net` ABI (the table in the module's documentation): each
//! checks the guest's pointers against its memory and answers from the command's
//! [`super::state::NetState`].

use std::ops::Range;

use wasmtime::{Caller, Extern, Memory};

use super::{ERR_INVALID_ARGUMENT, MAX_URL_BYTES, NetErrorKind};
use crate::store::StoreState;

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

pub(super) fn fetch(
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

pub(super) fn status(mut caller: Caller<'_, StoreState>, handle: i32) -> i32 {
    match caller.data_mut().net.response(handle) {
        Ok(response) => i32::from(response.status),
        Err(code) => code,
    }
}

pub(super) fn close(mut caller: Caller<'_, StoreState>, handle: i32) -> i32 {
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

pub(super) fn read(
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

pub(super) fn content_type(
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

pub(super) fn error(mut caller: Caller<'_, StoreState>, buf_ptr: i32, buf_len: i32) -> i32 {
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
}
