//! A terminal for tests and benches: `agent` (or any program) on a new pseudo-terminal made
//! its controlling terminal (`setsid -c`, so a Ctrl-C typed there is a SIGINT), the screen
//! read by a thread (which answers cursor-position queries as a terminal does), and a loopback
//! model server speaking the OpenAI or the Anthropic wire format. Linux.

#![allow(
    dead_code,
    reason = "each test or bench that includes this uses part of it"
)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A loopback server answering the `k`-th POST (any path) with `body(k)`; returns its base URL
/// and the instants at which each answer was written.
pub fn serve_with(
    body: impl Fn(usize) -> Option<String> + Send + 'static,
) -> (String, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&sent);
    std::thread::spawn(move || {
        for (k, stream) in listener.incoming().enumerate() {
            let Some(body) = body(k) else { break };
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut req = vec![0; len];
            reader.read_exact(&mut req).unwrap();
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            record.lock().unwrap().push(Instant::now());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    (url, sent)
}

/// A loopback server answering each POST with the next of `bodies`.
pub fn serve(bodies: Vec<String>) -> String {
    serve_with(move |k| bodies.get(k).cloned()).0
}

/// One model turn, in either wire format.
pub enum Turn {
    /// A tool call: id, tool, input.
    Call(&'static str, &'static str, Value),
    /// A text answer.
    Text(String),
}

pub fn openai(turn: &Turn) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    match turn {
        Turn::Call(id, name, args) => {
            chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}),
                None,
            ) + &chunk(json!({}), Some("tool_calls"))
                + "data: [DONE]\n\n"
        }
        Turn::Text(t) => {
            chunk(json!({"role": "assistant", "content": t}), None)
                + &chunk(json!({}), Some("stop"))
                + "data: [DONE]\n\n"
        }
    }
}

pub fn anthropic(turn: &Turn) -> String {
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let start = ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg", "type": "message",
        "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    let (block, delta, stop) = match turn {
        Turn::Call(id, name, args) => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": args.to_string()}),
            "tool_use",
        ),
        Turn::Text(t) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": t}),
            "end_turn",
        ),
    };
    start
        + &ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        )
        + &ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        )
        + &ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        )
        + &ev(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 5}}),
        )
        + &ev("message_stop", json!({"type": "message_stop"}))
}

/// A terminal the test types into and reads from.
pub struct Terminal {
    writer: File,
    screen: Arc<Mutex<Vec<u8>>>,
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
        let screen = Arc::new(Mutex::new(Vec::new()));
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
                into.lock().unwrap().extend_from_slice(chunk);
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
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until the screen, after byte `from`, holds `what`; returns where it ends.
    pub fn wait_for(&self, what: &str, from: usize, within: Duration) -> usize {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if let Some(i) = screen.get(from..).and_then(|s| s.find(what)) {
                return from + i + what.len();
            }
            assert!(
                start.elapsed() < within,
                "`{what}` did not appear within {within:?}; the screen:\n{}",
                screen.get(from..).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The screen's length in bytes so far.
    pub fn len(&self) -> usize {
        self.screen.lock().unwrap().len()
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

pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}
