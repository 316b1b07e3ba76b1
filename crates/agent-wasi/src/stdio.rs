//! The guest's stdin, stdout and stderr: what the caller hands over ([`Input`], [`Output`]) and
//! the wasmtime-wasi stream objects built from them.
//!
//! wasmtime-wasi 48 takes a guest's stdio as [`StdinStream`] / [`StdoutStream`] objects
//! (`wasmtime_wasi::cli`); preview 1's `fd_read`/`fd_write` reach them through the preview 2
//! [`InputStream`] / [`OutputStream`] each one hands out, in chunks of at most 4 KiB for writes.
//! Our implementations are synchronous (the runtime is built with
//! `allow_blocking_current_thread`) and always ready, so `poll_oneoff` on stdio never waits.

use std::fmt;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wasmtime_wasi::cli::{IsTerminal, StdinStream, StdoutStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

use crate::limits::{DEFAULT_OUTPUT_LIMIT, LimitExceeded, LimitKind};

/// Largest chunk handed to or taken from the guest in one stream operation.
const MAX_CHUNK: usize = 64 << 10;

/// `EPIPE` on every Unix (Linux, macOS, the BSDs). wasmtime-wasi maps an `io::Error` to a WASI
/// errno through its raw OS error, so a broken pipe must carry this number to reach the guest as
/// `EPIPE` rather than the generic `EIO`.
const EPIPE: i32 = 32;

/// The guest's standard input.
pub enum Input {
    /// No input: the first read returns end of file.
    Null,
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
    /// Read from this reader as the guest reads (in chunks of at most 64 KiB), until it returns
    /// `Ok(0)`. The seam for pipelines and `< file` redirects. A read that blocks holds the guest
    /// in that read: the wall-time limit applies again only once it returns, so hand over
    /// readers that end (a pipe whose writing side belongs to a stage with its own limits, a
    /// file).
    Reader(Box<dyn Read + Send>),
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("Null"),
            Self::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
            Self::Reader(_) => f.write_str("Reader(..)"),
        }
    }
}

/// Where the guest's standard output or standard error goes.
pub enum Output {
    /// Discarded (the guest's writes succeed). Bytes are still counted in
    /// [`crate::CommandMeta`].
    Null,
    /// Kept in memory and returned in [`crate::CommandOutput`], up to `limit` bytes. The write
    /// that crosses the limit stores what fits, sets the stream's `*_truncated` flag and stops the
    /// guest with [`crate::EXIT_OUTPUT`] (the guest does not get to handle an error: a command
    /// flooding its output ends at once instead of running on until its wall-time limit).
    Capture {
        /// Most bytes kept.
        limit: usize,
    },
    /// Streamed to this writer as the guest writes (each guest write is passed on, then
    /// flushed), never collected. The seam for pipelines and `> file` redirects: the shell runs
    /// `yes | head -1` as two commands on two threads joined by an in-memory pipe. A write that
    /// fails with [`io::ErrorKind::BrokenPipe`] makes the guest's write fail with `EPIPE` (and
    /// every later one), so `yes` ends once `head` has gone; any other error reaches the guest
    /// as the matching errno. The writer is dropped as soon as the guest ends, so the reading
    /// side sees end of file. Not capped: a cap belongs to whoever reads. A write that blocks
    /// holds the guest in that write (the wall-time limit applies again once it returns); a pipe
    /// whose reading side is another stage unblocks when that stage ends.
    Writer(Box<dyn Write + Send>),
}

impl Output {
    /// [`Output::Capture`] with the default limit, [`crate::DEFAULT_OUTPUT_LIMIT`] (1 MiB).
    pub fn capture() -> Self {
        Self::Capture {
            limit: DEFAULT_OUTPUT_LIMIT,
        }
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("Null"),
            Self::Capture { limit } => f.debug_struct("Capture").field("limit", limit).finish(),
            Self::Writer(_) => f.write_str("Writer(..)"),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind (a buffer, counters); keep going.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The guest's stdin as wasmtime-wasi sees it. Clones share one position, as the
/// [`StdinStream`] contract asks.
#[derive(Clone)]
pub(crate) struct InputSource {
    state: Arc<Mutex<InputState>>,
}

struct InputState {
    source: Source,
    bytes_read: u64,
}

enum Source {
    Empty,
    Bytes(Bytes),
    Reader(Box<dyn Read + Send>),
}

impl InputSource {
    pub(crate) fn new(input: Input) -> Self {
        let source = match input {
            Input::Null => Source::Empty,
            Input::Bytes(bytes) => Source::Bytes(Bytes::from(bytes)),
            Input::Reader(reader) => Source::Reader(reader),
        };
        Self {
            state: Arc::new(Mutex::new(InputState {
                source,
                bytes_read: 0,
            })),
        }
    }

    /// Bytes the guest has read so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        lock(&self.state).bytes_read
    }

    /// Reads at most `size` bytes; `Ok(None)` at end of input. Never returns an empty chunk for
    /// a non-zero `size` (preview 1 would report that as `EINTR`).
    fn read_chunk(&self, size: usize) -> io::Result<Option<Bytes>> {
        let size = size.min(MAX_CHUNK);
        let mut state = lock(&self.state);
        let chunk = match &mut state.source {
            Source::Empty => None,
            Source::Bytes(data) if data.is_empty() => None,
            Source::Bytes(data) => Some(data.split_to(size.min(data.len()))),
            Source::Reader(reader) => {
                let mut buf = vec![0; size];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) if size > 0 => break None,
                        Ok(n) => {
                            buf.truncate(n);
                            break Some(Bytes::from(buf));
                        }
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                        Err(err) => return Err(err),
                    }
                }
            }
        };
        if let Some(chunk) = &chunk {
            state.bytes_read += chunk.len() as u64;
        }
        Ok(chunk)
    }
}

impl IsTerminal for InputSource {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for InputSource {
    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for InputSource {
    async fn ready(&mut self) {}
}

impl InputStream for InputSource {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        match self.read_chunk(size) {
            Ok(Some(chunk)) => Ok(chunk),
            Ok(None) => Err(StreamError::Closed),
            Err(err) => Err(StreamError::LastOperationFailed(wasmtime::Error::new(err))),
        }
    }
}

impl AsyncRead for InputSource {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Ready(self.read_chunk(buf.remaining()).map(|chunk| {
            if let Some(chunk) = chunk {
                buf.put_slice(&chunk);
            }
        }))
    }
}

/// The guest's stdout or stderr as wasmtime-wasi sees it. Clones share one state.
#[derive(Clone)]
pub(crate) struct OutputSink {
    state: Arc<Mutex<SinkState>>,
}

struct SinkState {
    /// [`LimitKind::Stdout`] or [`LimitKind::Stderr`]: which stream this is.
    stream: LimitKind,
    target: Target,
    /// Bytes accepted from the guest (kept, discarded or passed on).
    written: u64,
    truncated: bool,
}

enum Target {
    Null,
    Capture {
        buf: Vec<u8>,
        limit: usize,
    },
    /// `None` once the writer has been dropped: after a broken pipe or when the guest ended.
    Writer(Option<Box<dyn Write + Send>>),
}

/// Why a write to an [`OutputSink`] failed.
enum SinkError {
    /// The capture limit was crossed: stop the guest.
    Limit(LimitExceeded),
    /// The writer failed: the guest's write fails with this error's errno.
    Io(io::Error),
}

impl SinkError {
    fn into_stream_error(self) -> StreamError {
        match self {
            Self::Limit(limit) => StreamError::Trap(wasmtime::Error::new(limit)),
            Self::Io(err) => StreamError::LastOperationFailed(wasmtime::Error::new(err)),
        }
    }

    fn into_io_error(self) -> io::Error {
        match self {
            Self::Limit(limit) => io::Error::other(limit),
            Self::Io(err) => err,
        }
    }
}

fn broken_pipe() -> io::Error {
    if cfg!(unix) {
        io::Error::from_raw_os_error(EPIPE)
    } else {
        io::ErrorKind::BrokenPipe.into()
    }
}

/// What an [`OutputSink`] holds once the guest has ended.
pub(crate) struct SinkReport {
    pub(crate) captured: Vec<u8>,
    pub(crate) written: u64,
    pub(crate) truncated: bool,
}

impl OutputSink {
    /// `stream` is [`LimitKind::Stdout`] or [`LimitKind::Stderr`].
    pub(crate) fn new(output: Output, stream: LimitKind) -> Self {
        let target = match output {
            Output::Null => Target::Null,
            Output::Capture { limit } => Target::Capture {
                buf: Vec::new(),
                limit,
            },
            Output::Writer(writer) => Target::Writer(Some(writer)),
        };
        Self {
            state: Arc::new(Mutex::new(SinkState {
                stream,
                target,
                written: 0,
                truncated: false,
            })),
        }
    }

    fn write_bytes(&self, bytes: &[u8]) -> Result<(), SinkError> {
        let mut state = lock(&self.state);
        let state = &mut *state;
        match &mut state.target {
            Target::Null => {}
            Target::Capture { buf, limit } => {
                let room = limit.saturating_sub(buf.len());
                if bytes.len() > room {
                    buf.extend_from_slice(&bytes[..room]);
                    state.written += room as u64;
                    state.truncated = true;
                    return Err(SinkError::Limit(LimitExceeded::output(
                        state.stream,
                        *limit,
                    )));
                }
                buf.extend_from_slice(bytes);
            }
            Target::Writer(slot) => {
                let Some(writer) = slot.as_mut() else {
                    return Err(SinkError::Io(broken_pipe()));
                };
                if let Err(err) = writer.write_all(bytes) {
                    return Err(SinkError::Io(Self::writer_failed(slot, err)));
                }
            }
        }
        state.written += bytes.len() as u64;
        Ok(())
    }

    fn flush_writer(&self) -> Result<(), SinkError> {
        let mut state = lock(&self.state);
        if let Target::Writer(slot) = &mut state.target
            && let Some(writer) = slot.as_mut()
            && let Err(err) = writer.flush()
        {
            return Err(SinkError::Io(Self::writer_failed(slot, err)));
        }
        Ok(())
    }

    /// A broken pipe drops the writer (its reader is gone) and becomes `EPIPE` for the guest.
    fn writer_failed(slot: &mut Option<Box<dyn Write + Send>>, err: io::Error) -> io::Error {
        if err.kind() == io::ErrorKind::BrokenPipe {
            *slot = None;
            broken_pipe()
        } else {
            err
        }
    }

    /// Appends a line written by the host (a limit or trap message), past any capture limit: it
    /// must be seen even when the guest filled its stderr. Best effort for a writer.
    pub(crate) fn append_host_line(&self, line: &str) {
        let mut state = lock(&self.state);
        match &mut state.target {
            Target::Null => {}
            Target::Capture { buf, .. } => {
                buf.extend_from_slice(line.as_bytes());
                buf.push(b'\n');
            }
            Target::Writer(slot) => {
                if let Some(writer) = slot {
                    let _ = writer
                        .write_all(line.as_bytes())
                        .and_then(|()| writer.write_all(b"\n"))
                        .and_then(|()| writer.flush());
                }
            }
        }
    }

    /// Takes what was captured and drops the writer, so a pipe's reading side sees end of file
    /// even while wasmtime-wasi still holds clones of this sink.
    pub(crate) fn finish(&self) -> SinkReport {
        let mut state = lock(&self.state);
        let captured = match &mut state.target {
            Target::Null => Vec::new(),
            Target::Capture { buf, .. } => std::mem::take(buf),
            Target::Writer(slot) => {
                if let Some(mut writer) = slot.take() {
                    let _ = writer.flush();
                }
                Vec::new()
            }
        };
        SinkReport {
            captured,
            written: state.written,
            truncated: state.truncated,
        }
    }
}

impl IsTerminal for OutputSink {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputSink {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for OutputSink {
    async fn ready(&mut self) {}
}

impl OutputStream for OutputSink {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.write_bytes(&bytes)
            .map_err(SinkError::into_stream_error)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.flush_writer().map_err(SinkError::into_stream_error)
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(MAX_CHUNK)
    }
}

impl AsyncWrite for OutputSink {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(
            self.write_bytes(buf)
                .map(|()| buf.len())
                .map_err(SinkError::into_io_error),
        )
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.flush_writer().map_err(SinkError::into_io_error))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    #[test]
    fn capture_keeps_what_fits_and_reports_the_limit() {
        let sink = OutputSink::new(Output::Capture { limit: 5 }, LimitKind::Stdout);
        assert!(sink.write_bytes(b"abc").is_ok());
        let err = sink.write_bytes(b"defg").err().unwrap();
        assert!(matches!(
            err,
            SinkError::Limit(LimitExceeded {
                kind: LimitKind::Stdout,
                ..
            })
        ));
        sink.append_host_line("note");
        let report = sink.finish();
        assert_eq!(report.captured, b"abcdenote\n");
        assert_eq!(report.written, 5);
        assert!(report.truncated);
    }

    #[test]
    fn broken_pipe_becomes_epipe_and_stays() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sink = OutputSink::new(Output::Writer(Box::new(Closed)), LimitKind::Stdout);
        for _ in 0..2 {
            let Err(SinkError::Io(err)) = sink.write_bytes(b"y\n") else {
                panic!("expected an I/O error")
            };
            assert_eq!(err.raw_os_error(), Some(EPIPE));
        }
    }

    #[test]
    fn input_bytes_then_end_of_file() {
        let input = InputSource::new(Input::Bytes(b"hello".to_vec()));
        assert_eq!(input.read_chunk(3).unwrap().unwrap(), &b"hel"[..]);
        assert_eq!(input.read_chunk(10).unwrap().unwrap(), &b"lo"[..]);
        assert!(input.read_chunk(10).unwrap().is_none());
        assert_eq!(input.bytes_read(), 5);
        let reader = InputSource::new(Input::Reader(Box::new(&b"xy"[..])));
        assert_eq!(reader.read_chunk(10).unwrap().unwrap(), &b"xy"[..]);
        assert!(reader.read_chunk(10).unwrap().is_none());
    }
}
