//! One writer per session: an exclusive `flock` on the session's `lock` file, which also records
//! the holder's pid so a refused writer can say who holds it.
//!
//! The lock belongs to the open file: it is released when the [`SessionLock`] is dropped or when
//! the process dies, however it dies, so a crash never leaves a session locked. Readers never
//! take it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::error::{Result, StoreError};
use super::id::SessionId;

/// The file name of the lock inside a session directory.
pub const LOCK_FILE: &str = "lock";

/// A held writer lock. Dropping it releases the lock.
#[derive(Debug)]
pub struct SessionLock {
    _file: File,
}

impl SessionLock {
    /// Takes the lock of the session in `dir` without waiting.
    ///
    /// # Errors
    /// [`StoreError::Busy`] with the holder's pid when another open file holds it (another
    /// process, or another store in this process); I/O errors otherwise.
    pub fn acquire(id: &SessionId, dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let mut file = open_lock_file(&path)?;
        if !try_lock(&file).map_err(|e| StoreError::io("cannot lock", &path, e))? {
            let mut pid = String::new();
            // The holder wrote its pid after locking; an empty file means it is about to.
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim();
            return Err(StoreError::Busy {
                id: id.clone(),
                pid: if pid.is_empty() {
                    "unknown".into()
                } else {
                    pid.to_owned()
                },
            });
        }
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            write!(file, "{}", std::process::id())
        };
        write(&mut file).map_err(|e| StoreError::io("cannot write", &path, e))?;
        Ok(Self { _file: file })
    }

    /// Whether some open file holds the lock of the session in `dir` right now (a probe: takes
    /// and releases it when free).
    pub fn is_held(dir: &Path) -> bool {
        let path = dir.join(LOCK_FILE);
        match open_lock_file(&path) {
            Ok(file) => !matches!(try_lock(&file), Ok(true)),
            Err(_) => false,
        }
    }
}

fn open_lock_file(path: &Path) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map_err(|e| StoreError::io("cannot open", path, e))
}

/// Tries to take an exclusive lock; `Ok(false)` when it is held elsewhere (`flock` on Unix).
fn try_lock(file: &File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}
