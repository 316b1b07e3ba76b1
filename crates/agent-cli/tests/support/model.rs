//! The loopback model server the CLI tests and benches run `agent` against: it answers each
//! POST (any path) with the next reply, in the OpenAI or the Anthropic streaming wire format,
//! and the helpers that write those replies. Included with `#[path]` by each test file (and
//! the session bench), so there is one of it.

#![allow(
    dead_code,
    reason = "each test or bench that includes this uses part of it"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

/// A loopback server answering the `k`-th POST with `reply(k)` (`None`: it stops): an SSE
/// body, or `STATUS nnn` for that HTTP status (with `retry-after: 0` and a JSON error body).
/// Returns its base URL (no path) and the instants at which each reply was written.
pub fn serve_with(
    reply: impl Fn(usize) -> Option<String> + Send + 'static,
) -> (String, Arc<Mutex<Vec<Instant>>>) {
    let (url, sent, _) = serve_recording(reply);
    (url, sent)
}

/// The bodies of the requests a server answered, in order.
pub type Requests = Arc<Mutex<Vec<Value>>>;

/// [`serve_with`], also keeping the body of each request it answered (JSON, or a string when
/// the body is not JSON), in order.
pub fn serve_recording(
    reply: impl Fn(usize) -> Option<String> + Send + 'static,
) -> (String, Arc<Mutex<Vec<Instant>>>, Requests) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let bodies = Arc::clone(&requests);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&sent);
    std::thread::spawn(move || {
        for (k, stream) in listener.incoming().enumerate() {
            let Some(reply) = reply(k) else { break };
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
            bodies.lock().unwrap().push(
                serde_json::from_slice(&req)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req).into_owned())),
            );
            let response = match reply.strip_prefix("STATUS ") {
                Some(code) => {
                    let body =
                        r#"{"error":{"message":"the server is busy","type":"server_error"}}"#;
                    format!(
                        "HTTP/1.1 {code} Oops\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                }
                None => format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{reply}"
                ),
            };
            record.lock().unwrap().push(Instant::now());
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (url, sent, requests)
}

/// A loopback server answering each POST with the next of `replies`; returns its OpenAI base
/// URL (`http://127.0.0.1:PORT/v1`).
pub fn serve(replies: Vec<String>) -> String {
    format!("{}/v1", serve_with(move |k| replies.get(k).cloned()).0)
}

/// One OpenAI streaming chunk.
pub fn chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

/// An OpenAI answer making the tool `calls` (id, name, input), in this order.
pub fn calls(calls: &[(&str, &str, Value)]) -> String {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            json!({"index": i, "id": id, "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    chunk(json!({"role": "assistant", "tool_calls": tool_calls}), None)
        + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

/// An OpenAI answer making one tool call.
pub fn call(id: &str, name: &str, args: &Value) -> String {
    calls(&[(id, name, args.clone())])
}

/// An OpenAI answer that is text.
pub fn text(text: &str) -> String {
    chunk(json!({"role": "assistant", "content": text}), None)
        + &chunk(json!({}), Some("stop"))
        + "data: [DONE]\n\n"
}

/// One model turn, in either wire format.
pub enum Turn {
    /// A tool call: id, tool, input.
    Call(&'static str, &'static str, Value),
    /// A text answer.
    Text(String),
}

/// `turn` in the OpenAI wire format.
pub fn openai(turn: &Turn) -> String {
    match turn {
        Turn::Call(id, name, args) => call(id, name, args),
        Turn::Text(t) => text(t),
    }
}

/// `turn` in the Anthropic wire format.
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

/// Whether `program` is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}
