//! The append-only `events.jsonl` of one session: reading it (whole, or backwards from the
//! tail without reading the rest), repairing a torn tail, and appending.
//!
//! A line is *complete* when it ends with `\n`. Readers only ever look at complete lines, so a
//! write in progress is invisible to them. A crash can leave a *torn tail*: bytes after the last
//! `\n`, or a last line that is not a valid event. Readers skip it and say so; the next writer
//! (who holds the session lock) moves it into `events.jsonl.corrupt` and truncates the log to the
//! last good line. A bad line anywhere else is corruption: it is reported with its line number and
//! never skipped.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use agent_core::events::{Event, EventError, decode_line};

use super::error::{Result, StoreError};
use super::id::SessionId;

/// The log's file name inside a session directory.
pub const LOG_FILE: &str = "events.jsonl";
/// Where torn tails are kept aside.
pub const CORRUPT_FILE: &str = "events.jsonl.corrupt";

/// The longest line a log may hold, in bytes, without its newline: 16 MiB. `append` refuses an
/// event that encodes longer, `import` refuses a longer line, and reading a log reports one as
/// corruption (naming its line) instead of holding it in memory whole. Large tool output belongs
/// in a file the event points to (the output caps spill long output to one).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The error of a line longer than [`MAX_LINE_BYTES`].
pub(crate) fn oversize_line(len: usize) -> String {
    format!(
        "the line is {len} bytes, more than the {MAX_LINE_BYTES} bytes (16 MiB, \
         MAX_LINE_BYTES) a log line may hold"
    )
}

fn oversize_error(len: usize) -> EventError {
    EventError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        oversize_line(len),
    ))
}

/// How durable an append is when it returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// `fdatasync` after every batch: the batch survives a crash of the process *and* of the
    /// machine (power loss). The default.
    #[default]
    Fsync,
    /// Written to the OS (one `write`) but not synced: survives a crash of the process, not of
    /// the machine. Much cheaper: about 25× on the machine of docs/benchmarks.md (it depends on
    /// the disk).
    Os,
}

/// A tail that was not a complete, valid event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// Byte offset where the torn part starts (the end of the last good line).
    pub offset: u64,
    /// How many bytes it has.
    pub len: u64,
}

/// A whole log read into memory.
#[derive(Debug, Default)]
pub struct LogContents {
    /// The complete, valid part of the file.
    pub text: String,
    /// Each event with its line's byte range in `text` (without the `\n`).
    pub entries: Vec<(Range<usize>, Event)>,
    /// A torn tail that was skipped, if any.
    pub torn: Option<TornTail>,
}

impl LogContents {
    /// The raw text of entry `i`'s line.
    pub fn line(&self, i: usize) -> &str {
        self.entries
            .get(i)
            .and_then(|(r, _)| self.text.get(r.clone()))
            .unwrap_or("")
    }

    /// Length in bytes of the good part (what an index should record as indexed).
    pub fn good_len(&self) -> u64 {
        self.text.len() as u64
    }
}

/// Reads the whole log of `id` at `path`.
///
/// # Errors
/// [`StoreError::Corrupt`] for a bad line that is not the last; I/O errors.
pub fn read_all(id: &SessionId, path: &Path) -> Result<LogContents> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| StoreError::io("cannot read", path, e))?;
    parse_all(id, path, bytes)
}

/// Parses log bytes (see [`read_all`]).
pub fn parse_all(id: &SessionId, path: &Path, mut bytes: Vec<u8>) -> Result<LogContents> {
    let total = bytes.len() as u64;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut torn = (complete < bytes.len()).then(|| TornTail {
        offset: complete as u64,
        len: total - complete as u64,
    });
    bytes.truncate(complete);
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // Find the line holding the bad byte, to report it (or treat it as torn if last).
            let bad = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let line_start = bytes[..bad]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let line_end = bytes[bad..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| bad + i + 1);
            if line_end == bytes.len() {
                let len = total - line_start as u64;
                let mut good = bytes;
                good.truncate(line_start);
                let mut contents = parse_all(id, path, good)?;
                contents.torn = Some(TornTail {
                    offset: line_start as u64,
                    len,
                });
                return Ok(contents);
            }
            let line = bytes[..line_start].iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(StoreError::Corrupt {
                id: id.clone(),
                path: path.to_owned(),
                line,
                source: EventError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the line is not UTF-8",
                )),
            });
        }
    };
    let mut entries = Vec::new();
    let mut start = 0usize;
    let mut line_no = 0usize;
    while start < text.len() {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        line_no += 1;
        let line = &text[start..end];
        if line.len() > MAX_LINE_BYTES {
            // Never written by this store, so not a torn write: corruption, wherever it is.
            return Err(StoreError::Corrupt {
                id: id.clone(),
                path: path.to_owned(),
                line: line_no,
                source: oversize_error(line.len()),
            });
        }
        if !line.trim().is_empty() {
            match decode_line(line) {
                Ok(event) => entries.push((start..end, event)),
                Err(source) if end + 1 >= text.len() => {
                    // The last line: torn by a crash. Skip it, say so.
                    let _ = source;
                    torn = Some(TornTail {
                        offset: start as u64,
                        len: total - start as u64,
                    });
                    let mut text = text;
                    text.truncate(start);
                    return Ok(LogContents {
                        text,
                        entries,
                        torn,
                    });
                }
                Err(source) => {
                    return Err(StoreError::Corrupt {
                        id: id.clone(),
                        path: path.to_owned(),
                        line: line_no,
                        source,
                    });
                }
            }
        }
        start = end + 1;
    }
    Ok(LogContents {
        text,
        entries,
        torn,
    })
}

/// The part of a log after its first `offset` bytes, for catching an index up with appends it
/// has not seen: `Ok(None)` when `offset` is not the end of a complete line whose event has id
/// `last_id` (the log is not the one the index knew; read it whole instead).
///
/// Byte ranges in the result are relative to `offset`, and its `torn` is relative to the file.
///
/// # Errors
/// I/O errors; [`StoreError::Corrupt`] with a line number counted from `offset` (callers that
/// report it read the whole log again to get the absolute number).
pub fn read_after(
    id: &SessionId,
    path: &Path,
    offset: u64,
    last_id: &str,
) -> Result<Option<LogContents>> {
    let mut file = File::open(path).map_err(|e| StoreError::io("cannot read", path, e))?;
    let len = file
        .metadata()
        .map_err(|e| StoreError::io("cannot read", path, e))?
        .len();
    if offset == 0 || offset > len {
        return Ok(None);
    }
    // The line that ends at `offset` must be the event the index saw last.
    let mut before = TailReader {
        id: id.clone(),
        path: path.to_owned(),
        file: file
            .try_clone()
            .map_err(|e| StoreError::io("cannot read", path, e))?,
        pos: offset,
        buf: Vec::new(),
        at_last_line: false,
        torn: None,
        good_len: offset,
    };
    before.read_chunk()?;
    if before.buf.last() != Some(&b'\n') {
        return Ok(None);
    }
    match before.prev_line()? {
        Some((_, line)) if line_has_id(&line, last_id) => {}
        _ => return Ok(None),
    }
    let mut rest = Vec::new();
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_to_end(&mut rest))
        .map_err(|e| StoreError::io("cannot read", path, e))?;
    let mut contents = parse_all(id, path, rest)?;
    if let Some(t) = &mut contents.torn {
        t.offset += offset;
    }
    Ok(Some(contents))
}

/// Whether a raw line decodes to an event with id `id`.
fn line_has_id(line: &[u8], id: &str) -> bool {
    std::str::from_utf8(line)
        .ok()
        .and_then(|text| decode_line(text).ok())
        .is_some_and(|e| e.id.as_str() == id)
}

/// Reads a log backwards, one complete line at a time, without reading the part before what is
/// asked for. Chunks of 64 KiB are read from the end.
pub struct TailReader {
    id: SessionId,
    path: PathBuf,
    file: File,
    /// Bytes of the file not yet handed out, before `buf`.
    pos: u64,
    /// Bytes read but not yet split into lines (the front of the unread region).
    buf: Vec<u8>,
    /// Whether the next line returned is the last line of the file.
    at_last_line: bool,
    /// The torn tail found, if any.
    torn: Option<TornTail>,
    /// Length of the good part of the log.
    good_len: u64,
}

const CHUNK: u64 = 64 * 1024;

impl TailReader {
    /// Opens the log at `path` for reading backwards.
    ///
    /// # Errors
    /// I/O errors.
    pub fn open(id: &SessionId, path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| StoreError::io("cannot read", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| StoreError::io("cannot read", path, e))?
            .len();
        let mut reader = Self {
            id: id.clone(),
            path: path.to_owned(),
            file,
            pos: len,
            buf: Vec::new(),
            at_last_line: true,
            torn: None,
            good_len: len,
        };
        // Drop bytes after the last newline: a write in progress, or a torn tail.
        let complete = reader.find_last_newline_end()?;
        if complete < len {
            reader.torn = Some(TornTail {
                offset: complete,
                len: len - complete,
            });
            reader.good_len = complete;
        }
        reader.buf.clear();
        reader.pos = complete;
        Ok(reader)
    }

    /// The torn tail skipped, once known (after the first line was returned).
    pub fn torn(&self) -> Option<&TornTail> {
        self.torn.as_ref()
    }

    /// Length in bytes of the good part of the log (known once the first line was returned).
    pub fn good_len(&self) -> u64 {
        self.good_len
    }

    /// The offset just after the last `\n` (0 when there is none). Scans back chunk by chunk
    /// without keeping what it passed, so a long torn tail costs no memory.
    fn find_last_newline_end(&mut self) -> Result<u64> {
        loop {
            if let Some(i) = self.buf.iter().rposition(|&b| b == b'\n') {
                return Ok(self.pos + i as u64 + 1);
            }
            if self.pos == 0 {
                return Ok(0);
            }
            self.buf.clear();
            self.read_chunk()?;
        }
    }

    /// [`StoreError::Corrupt`] for a line longer than [`MAX_LINE_BYTES`] holding byte `at`.
    fn oversize(&mut self, at: u64, len: usize) -> Result<StoreError> {
        let line = self.line_number_at(at)?;
        Ok(StoreError::Corrupt {
            id: self.id.clone(),
            path: self.path.clone(),
            line,
            source: oversize_error(len),
        })
    }

    /// Reads the chunk before `pos` into the front of `buf`: [`CHUNK`] bytes, or as many as
    /// `buf` holds already when that is more, so a long line costs linear time, not quadratic.
    fn read_chunk(&mut self) -> Result<()> {
        let n = CHUNK.max(self.buf.len() as u64).min(self.pos);
        let start = self.pos - n;
        let mut chunk = vec![0u8; n as usize];
        self.file
            .seek(SeekFrom::Start(start))
            .and_then(|_| self.file.read_exact(&mut chunk))
            .map_err(|e| StoreError::io("cannot read", &self.path, e))?;
        chunk.extend_from_slice(&self.buf);
        self.buf = chunk;
        self.pos = start;
        Ok(())
    }

    /// The previous complete line as (byte offset, text), or `None` at the start of the file.
    fn prev_line(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        loop {
            // buf holds [pos, pos+buf.len()), which ends with '\n' (or is empty).
            if self.buf.is_empty() && self.pos == 0 {
                return Ok(None);
            }
            let body_end = self.buf.len().saturating_sub(1);
            if let Some(i) = self.buf[..body_end].iter().rposition(|&b| b == b'\n') {
                let line = self.buf[i + 1..body_end].to_vec();
                let offset = self.pos + i as u64 + 1;
                self.buf.truncate(i + 1);
                return Ok(Some((offset, line)));
            }
            if self.pos == 0 {
                let line = self.buf[..body_end].to_vec();
                self.buf.clear();
                return Ok(Some((0, line)));
            }
            if body_end > MAX_LINE_BYTES {
                // Its start is further back still: stop before holding more of it.
                let end = self.pos + body_end as u64;
                return Err(self.oversize(end, body_end)?);
            }
            self.read_chunk()?;
        }
    }

    /// The previous event with its raw line, or `None` at the start.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] (with the exact line number) for a bad line that is not the
    /// last one of the file; I/O errors.
    pub fn prev(&mut self) -> Result<Option<(Event, String)>> {
        loop {
            let Some((offset, bytes)) = self.prev_line()? else {
                return Ok(None);
            };
            if bytes.len() > MAX_LINE_BYTES {
                return Err(self.oversize(offset, bytes.len())?);
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let was_last = std::mem::replace(&mut self.at_last_line, false);
            let decoded = String::from_utf8(bytes)
                .map_err(|_| {
                    EventError::Io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "the line is not UTF-8",
                    ))
                })
                .and_then(|text| decode_line(&text).map(|e| (e, text)));
            match decoded {
                Ok(pair) => return Ok(Some(pair)),
                Err(_) if was_last => {
                    let end = self.good_len;
                    self.torn = Some(TornTail {
                        offset,
                        len: self.torn.as_ref().map_or(0, |t| t.len) + (end - offset),
                    });
                    self.good_len = offset;
                }
                Err(source) => {
                    let line = self.line_number_at(offset)?;
                    return Err(StoreError::Corrupt {
                        id: self.id.clone(),
                        path: self.path.clone(),
                        line,
                        source,
                    });
                }
            }
        }
    }

    /// 1-based line number of the line holding byte `offset` (counts the newlines before it,
    /// a chunk at a time; error path only).
    fn line_number_at(&mut self, offset: u64) -> Result<usize> {
        let mut newlines = 0;
        let mut chunk = vec![0u8; CHUNK as usize];
        let mut done = 0u64;
        self.file
            .seek(SeekFrom::Start(0))
            .map_err(|e| StoreError::io("cannot read", &self.path, e))?;
        while done < offset {
            let n = CHUNK.min(offset - done) as usize;
            self.file
                .read_exact(&mut chunk[..n])
                .map_err(|e| StoreError::io("cannot read", &self.path, e))?;
            newlines += chunk[..n].iter().filter(|&&b| b == b'\n').count();
            done += n as u64;
        }
        Ok(newlines + 1)
    }
}

/// The append side of a log. Owned by whoever holds the session lock.
#[derive(Debug)]
pub struct LogWriter {
    path: PathBuf,
    file: File,
    len: u64,
}

impl LogWriter {
    /// Opens the log at `path` for appending, after setting aside a torn tail (moved into
    /// `events.jsonl.corrupt` next to it, then cut off). The caller must hold the session lock.
    ///
    /// # Errors
    /// I/O errors.
    pub fn open(id: &SessionId, path: &Path) -> Result<(Self, Option<TornTail>)> {
        let mut tail = TailReader::open(id, path)?;
        // Look at the last line: a bad one is torn too.
        let _ = tail.prev()?;
        let torn = tail.torn().cloned();
        let good_len = tail.good_len();
        drop(tail);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| StoreError::io("cannot open", path, e))?;
        if let Some(t) = &torn {
            set_aside(path, &file, t)?;
            file.set_len(good_len)
                .and_then(|()| file.sync_data())
                .map_err(|e| StoreError::io("cannot truncate the torn tail of", path, e))?;
            tracing::warn!(
                log = %path.display(),
                offset = t.offset,
                bytes = t.len,
                "a torn tail was set aside in events.jsonl.corrupt"
            );
        }
        Ok((
            Self {
                path: path.to_owned(),
                file,
                len: good_len,
            },
            torn,
        ))
    }

    /// The log's length in bytes (all complete lines).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the log is empty.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends complete lines (`bytes` must end with `\n`) in one write, then syncs as asked. On
    /// a failed write the log is cut back to where it was, so it never holds half a batch.
    ///
    /// # Errors
    /// I/O errors (disk full, ...).
    pub fn append(&mut self, bytes: &[u8], durability: Durability) -> Result<()> {
        let result = self
            .file
            .seek(SeekFrom::Start(self.len))
            .and_then(|_| self.file.write_all(bytes));
        if let Err(e) = result {
            let _ = self.file.set_len(self.len);
            return Err(StoreError::io("cannot append to", &self.path, e));
        }
        if durability == Durability::Fsync
            && let Err(e) = self.file.sync_data()
        {
            let _ = self.file.set_len(self.len);
            return Err(StoreError::io("cannot sync", &self.path, e));
        }
        self.len += bytes.len() as u64;
        Ok(())
    }
}

/// Appends the torn bytes to `events.jsonl.corrupt` with a header line saying where they were.
fn set_aside(path: &Path, file: &File, torn: &TornTail) -> Result<()> {
    let mut bytes = vec![0u8; torn.len as usize];
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(torn.offset))
        .and_then(|_| reader.read_exact(&mut bytes))
        .map_err(|e| StoreError::io("cannot read the torn tail of", path, e))?;
    let corrupt = path.with_file_name(CORRUPT_FILE);
    let mut out = create_private(&corrupt, true)?;
    let header = format!(
        "# set aside {} from byte {} of {} ({} bytes):\n",
        agent_core::events::now_rfc3339(),
        torn.offset,
        LOG_FILE,
        torn.len
    );
    out.write_all(header.as_bytes())
        .and_then(|()| out.write_all(&bytes))
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.sync_data())
        .map_err(|e| StoreError::io("cannot write", &corrupt, e))
}

/// Creates (or with `append`, opens for appending) a file readable only by its owner (0600).
pub fn create_private(path: &Path, append: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    if append {
        options.append(true).create(true);
    } else {
        options.write(true).create_new(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map_err(|e| StoreError::io("cannot create", path, e))
}

/// Writes `bytes` as the new file `path` atomically: a temporary file beside it, synced, then
/// renamed over, then the directory synced. A crash leaves either nothing or the whole file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("jsonl.tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut file = create_private(&tmp, false)?;
    file.write_all(bytes)
        .and_then(|()| file.sync_data())
        .map_err(|e| StoreError::io("cannot write", &tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| StoreError::io("cannot rename into place", path, e))?;
    if let Some(dir) = path.parent() {
        sync_dir(dir);
    }
    Ok(())
}

/// Syncs a directory's entries (best effort: not every platform can open a directory).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::events::{EventPayload, UserMessage, encode_line};

    fn ev(seq: u64, text: &str) -> String {
        let e = Event::new(
            seq,
            None,
            EventPayload::UserMessage(UserMessage { text: text.into() }),
        );
        encode_line(&e).unwrap() + "\n"
    }

    fn id() -> SessionId {
        SessionId::parse("s").unwrap()
    }

    #[test]
    fn tail_reader_walks_back_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let big = "x".repeat(3000);
        let mut text = String::new();
        for i in 1..=100 {
            text += &ev(i, &format!("{i} {big}"));
        }
        std::fs::write(&path, &text).unwrap();
        let mut r = TailReader::open(&id(), &path).unwrap();
        let mut seqs = vec![];
        while let Some((e, _)) = r.prev().unwrap() {
            seqs.push(e.seq);
        }
        assert_eq!(seqs, (1..=100).rev().collect::<Vec<_>>());
        assert!(r.torn().is_none());
    }

    #[test]
    fn torn_tails_are_skipped_by_readers_and_set_aside_by_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let good = ev(1, "a") + &ev(2, "b");
        for torn in ["{\"v\":1,\"se", "{\"v\":1}\n", "garbage\n{\"v\""] {
            std::fs::write(&path, format!("{good}{torn}")).unwrap();
            let all = read_all(&id(), &path).unwrap();
            assert_eq!(all.entries.len(), 2, "{torn}");
            assert_eq!(all.torn.as_ref().unwrap().offset, good.len() as u64);
            let mut r = TailReader::open(&id(), &path).unwrap();
            assert_eq!(r.prev().unwrap().unwrap().0.seq, 2, "{torn}");
            assert_eq!(r.torn().unwrap().offset, good.len() as u64, "{torn}");
            let (w, t) = LogWriter::open(&id(), &path).unwrap();
            assert_eq!(t.unwrap().len, torn.len() as u64);
            assert_eq!(w.len(), good.len() as u64);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), good);
            let kept = std::fs::read_to_string(dir.path().join(CORRUPT_FILE)).unwrap();
            assert!(kept.contains(torn), "{kept}");
        }
    }

    #[test]
    fn a_bad_line_in_the_middle_is_reported_with_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        std::fs::write(&path, ev(1, "a") + "not json\n" + &ev(3, "c")).unwrap();
        let err = read_all(&id(), &path).unwrap_err().to_string();
        assert!(err.contains("line 2 of"), "{err}");
        let mut r = TailReader::open(&id(), &path).unwrap();
        assert_eq!(r.prev().unwrap().unwrap().0.seq, 3);
        let err = r.prev().unwrap_err().to_string();
        assert!(err.contains("line 2 of"), "{err}");
        // A writer does not touch it.
        let (_, torn) = LogWriter::open(&id(), &path).unwrap();
        assert!(torn.is_none());
    }

    #[test]
    fn non_utf8_in_the_middle_is_corruption_at_the_end_torn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let mut bytes = ev(1, "a").into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        bytes.extend_from_slice(ev(3, "c").as_bytes());
        std::fs::write(&path, &bytes).unwrap();
        assert!(
            read_all(&id(), &path)
                .unwrap_err()
                .to_string()
                .contains("line 2")
        );
        let mut bytes = ev(1, "a").into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        std::fs::write(&path, &bytes).unwrap();
        let all = read_all(&id(), &path).unwrap();
        assert_eq!(all.entries.len(), 1);
        assert!(all.torn.is_some());
    }

    #[test]
    fn append_writes_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        std::fs::write(&path, "").unwrap();
        let (mut w, _) = LogWriter::open(&id(), &path).unwrap();
        assert!(w.is_empty());
        w.append(ev(1, "a").as_bytes(), Durability::Fsync).unwrap();
        w.append(ev(2, "b").as_bytes(), Durability::Os).unwrap();
        let all = read_all(&id(), &path).unwrap();
        assert_eq!(all.entries.len(), 2);
        assert_eq!(w.len(), all.good_len());
    }
}
