//! A terminal for tests and benches: `agent` (or any program) on a new pseudo-terminal made
//! its controlling terminal (`setsid -c`, so a Ctrl-C typed there is a SIGINT), the screen
//! read by a thread (which answers cursor-position queries as a terminal does). Linux.

#![allow(
    dead_code,
    reason = "each test or bench that includes this uses part of it"
)]

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A terminal the test types into and reads from.
pub struct Terminal {
    writer: File,
    /// What was shown, and a signal for each chunk added.
    screen: Arc<(Mutex<Vec<u8>>, Condvar)>,
    /// The program.
    pub child: Child,
}

impl Terminal {
    /// Starts `program` with `args` on a new pseudo-terminal as its controlling terminal.
    pub fn start(
        program: &Path,
        home: &Path,
        cwd: &Path,
        args: &[String],
        env: &[(&str, &str)],
    ) -> Self {
        use rustix::fs::{Mode, OFlags};
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY,
            Mode::empty(),
        )
        .unwrap();
        rustix::termios::tcsetwinsize(
            &slave,
            rustix::termios::Winsize {
                ws_row: 40,
                ws_col: 160,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .unwrap();
        let slave = File::from(slave);
        let mut command = Command::new("setsid");
        command
            .arg("-c")
            .arg(program)
            .args(args)
            .current_dir(cwd)
            .env("AGENT_HOME", home)
            .env("HOME", home)
            .env("TERM", "xterm")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_COMPATIBLE_API_KEY")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().unwrap();
        let master = File::from(master);
        let writer = master.try_clone().unwrap();
        let screen = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let into = Arc::clone(&screen);
        let mut answer = master.try_clone().unwrap();
        let mut reader = master;
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                // A cursor-position query gets an answer, as a terminal gives.
                if chunk.windows(4).any(|w| w == b"\x1b[6n") {
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
                into.0.lock().unwrap().extend_from_slice(chunk);
                into.1.notify_all();
            }
        });
        Self {
            writer,
            screen,
            child,
        }
    }

    /// Everything shown so far.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.0.lock().unwrap()).into_owned()
    }

    /// Waits until the screen, after byte `from`, holds `what`; returns where it ends. Woken
    /// by each chunk the terminal shows, so the moment it returns is the moment `what` was
    /// read (to within the reader thread's hand-over).
    pub fn wait_for(&self, what: &str, from: usize, within: Duration) -> usize {
        let start = Instant::now();
        let needle = what.as_bytes();
        if needle.is_empty() {
            return from;
        }
        let (lock, shown) = &*self.screen;
        let mut screen = lock.lock().unwrap();
        loop {
            if let Some(i) = screen
                .get(from..)
                .and_then(|s| s.windows(needle.len()).position(|w| w == needle))
            {
                return from + i + needle.len();
            }
            let waited = start.elapsed();
            assert!(
                waited < within,
                "`{what}` did not appear within {within:?}; the screen:\n{}",
                String::from_utf8_lossy(screen.get(from..).unwrap_or_default())
            );
            screen = shown.wait_timeout(screen, within - waited).unwrap().0;
        }
    }

    /// The screen's length in bytes so far.
    pub fn len(&self) -> usize {
        self.screen.0.lock().unwrap().len()
    }

    /// Types `text`.
    pub fn type_in(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }
}

/// Whether a process whose command line holds `marker` is alive.
pub fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
            .unwrap_or(false)
    })
}
