//! Where a command's three standard streams lead: the script's captured output, a file in the
//! workspace, a pipe to the next stage, or the script's stdin.

use std::fs::File;
use std::io::{self, Cursor, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};

use super::pipe::{PipeReader, PipeWriter};

/// The script's stdout or stderr: kept up to a byte limit, the rest counted as truncated.
/// Writes past the limit still succeed, so a command never fails or stops because the shell's
/// caller asked for less output.
#[derive(Debug)]
pub(crate) struct Capture {
    state: Mutex<CaptureState>,
}

#[derive(Debug)]
struct CaptureState {
    data: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Capture {
    /// An empty capture keeping at most `limit` bytes.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(CaptureState {
                data: Vec::new(),
                limit,
                truncated: false,
            }),
        })
    }

    fn append(&self, bytes: &[u8]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let room = state.limit.saturating_sub(state.data.len());
        if bytes.len() > room {
            state.truncated = true;
        }
        let keep = bytes.len().min(room);
        state.data.extend_from_slice(&bytes[..keep]);
    }

    /// The bytes kept and whether any were dropped.
    pub fn take(&self) -> (Vec<u8>, bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (std::mem::take(&mut state.data), state.truncated)
    }
}

/// An input shared by every command that reads it: the script's stdin, or the stdin of a
/// compound command (`{ head -1; cat; } < f`, `for ..; done` in a pipeline). What one command
/// reads, the next one does not see (as with a file offset or a pipe in bash).
#[derive(Clone)]
pub(crate) struct SharedInput(Arc<Mutex<Box<dyn Read + Send>>>);

impl std::fmt::Debug for SharedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedInput")
    }
}

impl SharedInput {
    /// A shared reader over `bytes`.
    pub fn new(bytes: Vec<u8>) -> Self {
        Self::from_reader(Box::new(Cursor::new(bytes)))
    }

    /// A shared handle on `reader`.
    pub fn from_reader(reader: Box<dyn Read + Send>) -> Self {
        Self(Arc::new(Mutex::new(reader)))
    }
}

impl Read for SharedInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .read(buf)
    }
}

/// Where a command reads its stdin from.
pub(crate) enum Source {
    /// Nothing (`< /dev/null`).
    Empty,
    /// The script's stdin.
    Script(SharedInput),
    /// A file opened by `< file`.
    File(File),
    /// The previous stage of a pipeline.
    Pipe(PipeReader),
}

impl Source {
    /// The stream as the stage runner takes it.
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        match self {
            Self::Empty => Box::new(io::empty()),
            Self::Script(input) => Box::new(input),
            Self::File(file) => Box::new(file),
            Self::Pipe(pipe) => Box::new(pipe),
        }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Empty => Ok(0),
            Self::Script(input) => input.read(buf),
            Self::File(file) => file.read(buf),
            Self::Pipe(pipe) => pipe.read(buf),
        }
    }
}

/// Where a command writes its stdout or stderr.
pub(crate) enum Sink {
    /// Nowhere (`> /dev/null`).
    Null,
    /// The script's captured stdout or stderr.
    Capture(Arc<Capture>),
    /// A file opened by `>`, `>>`, `&>` ...
    File(File),
    /// The next stage of a pipeline.
    Pipe(PipeWriter),
}

impl Sink {
    /// A second handle on the same destination (what `2>&1` makes); for a file it shares the
    /// offset, as `dup` does.
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Self::Null => Self::Null,
            Self::Capture(c) => Self::Capture(Arc::clone(c)),
            Self::File(f) => Self::File(f.try_clone()?),
            Self::Pipe(p) => Self::Pipe(p.clone()),
        })
    }

    /// Writes a shell diagnostic line, `bash: MESSAGE`. A failure to write it is ignored:
    /// there is nowhere else to report it, and the exit status already says the command failed.
    pub fn diagnose(&mut self, message: &str) {
        let line = format!("bash: {message}\n");
        let _ignored = self.write_all(line.as_bytes());
    }

    /// The stream as the stage runner takes it.
    pub fn into_writer(self) -> Box<dyn Write + Send> {
        match self {
            Self::Null => Box::new(io::sink()),
            Self::Capture(c) => Box::new(CaptureWriter(c)),
            Self::File(f) => Box::new(f),
            Self::Pipe(p) => Box::new(p),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Null => Ok(buf.len()),
            Self::Capture(c) => {
                c.append(buf);
                Ok(buf.len())
            }
            Self::File(f) => f.write(buf),
            Self::Pipe(p) => p.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Null | Self::Capture(_) | Self::Pipe(_) => Ok(()),
            Self::File(f) => f.flush(),
        }
    }
}

/// A [`Capture`] as a writer.
struct CaptureWriter(Arc<Capture>);

impl Write for CaptureWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A command's three streams.
pub(crate) struct Fds {
    pub stdin: Source,
    pub stdout: Sink,
    pub stderr: Sink,
    /// stdout and stderr lead to the same place (`2>&1`, `>&2`, `&>`, `|&`).
    pub merged: bool,
}

impl Fds {
    /// Writes a shell diagnostic (`bash: x: No such file or directory`) on stderr.
    pub fn diagnose(&mut self, message: &str) {
        self.stderr.diagnose(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_up_to_its_limit() {
        let c = Capture::new(5);
        let mut w = Sink::Capture(Arc::clone(&c)).into_writer();
        w.write_all(b"abc").unwrap();
        w.write_all(b"defg").unwrap();
        assert_eq!(c.take(), (b"abcde".to_vec(), true));
    }

    #[test]
    fn shared_input_is_consumed_once() {
        let input = SharedInput::new(b"abcdef".to_vec());
        let mut a = input.clone();
        let mut b = input;
        let mut buf = [0; 4];
        assert_eq!(a.read(&mut buf).unwrap(), 4);
        let mut rest = Vec::new();
        b.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"ef");
    }
}
