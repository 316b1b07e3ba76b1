//! An in-memory, bounded pipe between two pipeline stages.
//!
//! A writer blocks while the buffer is full; a reader blocks while it is empty. When every
//! writer is dropped the reader sees end of file; when the reader is dropped every write fails
//! with [`io::ErrorKind::BrokenPipe`], which is how `yes | head -1` ends: `head` exits, its end
//! of the pipe is dropped, and `yes` stops on its next write.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The pipe's buffer size (64 KiB, as a Linux pipe): large enough that a stage rarely waits on
/// the next, small enough that a pipeline's memory stays bounded whatever flows through it.
pub(crate) const PIPE_CAPACITY: usize = 64 * 1024;

struct State {
    buf: VecDeque<u8>,
    writers: usize,
    reader: bool,
}

struct Shared {
    state: Mutex<State>,
    capacity: usize,
    /// Signalled when bytes arrive or the last writer leaves.
    readable: Condvar,
    /// Signalled when room appears or the reader leaves.
    writable: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the buffer consistent (every update is a
        // single VecDeque call), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Creates a pipe holding at most `capacity` bytes in flight.
pub(crate) fn pipe(capacity: usize) -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            buf: VecDeque::new(),
            writers: 1,
            reader: true,
        }),
        capacity: capacity.max(1),
        readable: Condvar::new(),
        writable: Condvar::new(),
    });
    (
        PipeReader {
            shared: Arc::clone(&shared),
        },
        PipeWriter { shared },
    )
}

/// The read end of a [`pipe`].
pub(crate) struct PipeReader {
    shared: Arc<Shared>,
}

/// The write end of a [`pipe`]; clones share the pipe (`2>&1` into a pipe), and the reader sees
/// end of file once all of them are dropped.
pub(crate) struct PipeWriter {
    shared: Arc<Shared>,
}

impl Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let mut state = self.shared.lock();
        while state.buf.is_empty() && state.writers > 0 {
            state = self
                .shared
                .readable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let n = out.len().min(state.buf.len());
        for (slot, byte) in out.iter_mut().zip(state.buf.drain(..n)) {
            *slot = byte;
        }
        drop(state);
        self.shared.writable.notify_all();
        Ok(n)
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.reader = false;
        state.buf.clear();
        drop(state);
        self.shared.writable.notify_all();
    }
}

impl Write for PipeWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        let mut state = self.shared.lock();
        loop {
            if !state.reader {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the next command in the pipeline has exited",
                ));
            }
            if state.buf.len() < self.shared.capacity {
                break;
            }
            state = self
                .shared
                .writable
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let n = data.len().min(self.shared.capacity - state.buf.len());
        state.buf.extend(&data[..n]);
        drop(state);
        self.shared.readable.notify_all();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Clone for PipeWriter {
    fn clone(&self) -> Self {
        self.shared.lock().writers += 1;
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.writers -= 1;
        drop(state);
        self.shared.readable.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_flow_and_end_of_file_follows_the_last_writer() {
        let (mut r, mut w) = pipe(4);
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            w.write_all(b"hello, world").unwrap();
        });
        drop(w2);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        t.join().unwrap();
        assert_eq!(got, b"hello, world");
    }

    #[test]
    fn writes_fail_once_the_reader_is_gone() {
        let (r, mut w) = pipe(4);
        w.write_all(b"yyyy").unwrap();
        // The buffer is full: this write blocks until the reader goes, then fails.
        let t = std::thread::spawn(move || w.write(b"yy").map_err(|e| e.kind()));
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(r);
        assert_eq!(t.join().unwrap(), Err(io::ErrorKind::BrokenPipe));
    }

    #[test]
    fn the_buffer_is_bounded() {
        let (mut r, mut w) = pipe(8);
        assert_eq!(w.write(&[1; 20]).unwrap(), 8);
        let mut buf = [0; 3];
        assert_eq!(r.read(&mut buf).unwrap(), 3);
        assert_eq!(w.write(&[2; 20]).unwrap(), 3);
    }
}
