//! The interactive session on a real terminal: `agent` alone, driven through a
//! pseudo-terminal (`setsid -c` makes it the session's controlling terminal, so a Ctrl-C typed
//! there is a SIGINT, as for a person) against a loopback model server speaking the OpenAI and
//! the Anthropic wire formats: a prompt and its streamed answer, an Edit approval answered `a`
//! (the second Edit is not asked), `/diff`, a Ctrl-C during `sleep 30` that returns to the
//! prompt within 3 s with no process left, `/commit`, `/exit` with status 0, and no colour
//! under `NO_COLOR=1`. Linux (bubblewrap runs the host command); skipped elsewhere.

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a panic is a failure report; the skip note is for the reader"
)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A loopback server answering each POST with the next body (any path).
fn serve(bodies: Vec<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (body, stream) in bodies.into_iter().zip(listener.incoming()) {
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
            let _ = stream.write_all(body.as_bytes());
        }
    });
    url
}

/// One model turn, in either wire format.
enum Turn {
    Call(&'static str, &'static str, Value),
    Text(&'static str),
}

fn openai(turn: &Turn) -> String {
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

fn anthropic(turn: &Turn) -> String {
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
struct Terminal {
    writer: File,
    screen: Arc<Mutex<Vec<u8>>>,
    child: Child,
}

impl Terminal {
    /// Starts `agent` with `args` on a new pseudo-terminal as its controlling terminal.
    fn start(home: &Path, cwd: &Path, args: &[String], env: &[(&str, &str)]) -> Self {
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
            .arg(env!("CARGO_BIN_EXE_agent"))
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

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until the screen, after byte `from`, holds `what`; returns where it ends.
    fn wait_for(&self, what: &str, from: usize, within: Duration) -> usize {
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

    fn type_in(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }
}

/// Whether a process whose command line holds `marker` is alive.
fn running(marker: &str) -> bool {
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

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

fn session(wire: &str) {
    if !(on_path("bwrap") && on_path("setsid")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap and setsid are needed (.ci/run installs bubblewrap)"
        );
        eprintln!("skipped: bwrap or setsid missing");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let settings = root.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Bash(sleep *)"]}, "bash": {"backend": "native"}})
            .to_string(),
    )
    .unwrap();
    let marker = format!("30.{}", std::process::id());
    let turns = [
        Turn::Call("t1", "Read", json!({"file_path": "a.txt"})),
        Turn::Call(
            "t2",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ),
        Turn::Call(
            "t3",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "three"}),
        ),
        Turn::Text("Edited a.txt twice."),
        Turn::Call("t4", "Bash", json!({"command": "sleep MARKER"})),
    ];
    let bodies: Vec<String> = turns
        .iter()
        .map(|t| {
            let body = if wire == "openai" {
                openai(t)
            } else {
                anthropic(t)
            };
            body.replace("MARKER", &marker)
        })
        .collect();
    let url = serve(bodies);
    // `agent` alone with session options: the interactive session on a terminal.
    let mut args: Vec<String> = vec!["--settings".into(), settings.display().to_string()];
    let mut env = vec![("NO_COLOR", "1")];
    if wire == "openai" {
        args.extend([
            "--provider".into(),
            "openai-compatible".into(),
            "--base-url".into(),
            format!("{url}/v1"),
            "--model".into(),
            "m".into(),
        ]);
    } else {
        args.extend([
            "--provider".into(),
            "anthropic".into(),
            "--base-url".into(),
            url,
        ]);
        env.push(("ANTHROPIC_API_KEY", "test-key"));
    }
    let mut t = Terminal::start(&home, &project, &args, &env);
    let long = Duration::from_secs(60);
    let at = t.wait_for("/help for the commands", 0, long);

    t.type_in("please edit a.txt\r");
    let at = t.wait_for("[a] this session", at, long);
    t.type_in("a\r");
    let at = t.wait_for("Edited a.txt twice.", at, long);
    assert_eq!(
        t.screen()[at..].matches("[a] this session").count(),
        0,
        "the second Edit was asked again"
    );
    let at = t.wait_for("› ", at, long);

    t.type_in("/diff\r");
    let at = t.wait_for("+three", at, long);

    t.type_in("now wait\r");
    let at = t.wait_for("sleep", at, long);
    let started = Instant::now();
    while !running(&format!("sleep {marker}")) {
        assert!(started.elapsed() < long, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pressed = Instant::now();
    t.type_in("\x03");
    let at = t.wait_for("› ", at, Duration::from_secs(10));
    let back = pressed.elapsed();
    assert!(
        back < Duration::from_secs(3),
        "Ctrl-C took {back:?} to give the prompt back"
    );
    assert!(
        !running(&format!("sleep {marker}")),
        "the command outlived Ctrl-C"
    );

    t.type_in("/commit\r");
    let at = t.wait_for("[y/N]", at, long);
    t.type_in("y\r");
    let at = t.wait_for("committed 1 path(s)", at, long);
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "three\n"
    );

    t.type_in("/exit\r");
    let _ = t.wait_for("", at, long);
    let started = Instant::now();
    let status = loop {
        if let Some(s) = t.child.try_wait().unwrap() {
            break s;
        }
        assert!(started.elapsed() < long, "the session did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{}", t.screen());
    let screen = t.screen();
    // Colour is a Select Graphic Rendition sequence (`ESC [ ... m`); the line editor's own
    // cursor movements are not colour.
    let sgr = screen.match_indices("\x1b[").any(|(i, _)| {
        screen[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ';')
            .count()
            .checked_add(i + 2)
            .and_then(|end| screen.get(end..end + 1))
            == Some("m")
    });
    assert!(!sgr, "colour under NO_COLOR=1:\n{screen:?}");
    assert!(
        !screen.contains("/workspaces/"),
        "the shadow's path was shown:\n{screen}"
    );
    if std::env::var_os("SHOW_SCREEN").is_some() {
        eprintln!("{screen}");
    }
}

#[test]
fn a_terminal_session_over_the_openai_wire_format() {
    session("openai");
}

#[test]
fn a_terminal_session_over_the_anthropic_wire_format() {
    session("anthropic");
}
