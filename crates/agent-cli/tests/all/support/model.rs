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

#[path = "../../../../agent-providers/tests/support/prompt_cache.rs"]
pub mod prompt_cache;

use prompt_cache::{CacheUsage, PromptCache};

/// A loopback server answering the `k`-th POST with `reply(k)` (`None`: it stops): an SSE
/// body, or `STATUS nnn` for that HTTP status (with `retry-after: 0` and a JSON error body).
/// Returns its base URL (no path) and the instants at which each reply was written.
pub fn serve_with(
    reply: impl Fn(usize) -> Option<String> + Send + 'static,
) -> (String, Arc<Mutex<Vec<Instant>>>) {
    serve_requests(move |k, _| reply(k))
}

/// The bodies of the requests a server answered, in order.
pub type Requests = Arc<Mutex<Vec<Value>>>;

/// [`serve_with`], also keeping the body of each request it answered (JSON, or a string when
/// the body is not JSON), in order.
pub fn serve_recording(
    reply: impl Fn(usize) -> Option<String> + Send + 'static,
) -> (String, Arc<Mutex<Vec<Instant>>>, Requests) {
    let requests: Requests = Arc::new(Mutex::new(Vec::new()));
    let bodies = Arc::clone(&requests);
    let (url, sent) = serve_requests(move |k, body| {
        bodies.lock().unwrap().push(body.clone());
        reply(k)
    });
    (url, sent, requests)
}

/// [`serve_with`], the reply also seeing the request's body (as JSON; `Null` when it is not).
pub fn serve_requests(
    mut reply: impl FnMut(usize, &Value) -> Option<String> + Send + 'static,
) -> (String, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&sent);
    std::thread::spawn(move || {
        for (k, stream) in listener.incoming().enumerate() {
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
            let body: Value = serde_json::from_slice(&req).unwrap_or(Value::Null);
            let Some(reply) = reply(k, &body) else { break };
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
    (url, sent)
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
    let usage = CacheUsage {
        input_tokens: 10,
        ..CacheUsage::default()
    };
    anthropic_reply(turn, "msg", "claude-x", usage, 5)
}

/// `turn` in the Anthropic wire format as message `id` of `model`, reporting `usage` and
/// `output_tokens` as the API does (the prompt's tokens in `message_start`, the answer's in
/// `message_delta`).
pub fn anthropic_reply(
    turn: &Turn,
    id: &str,
    model: &str,
    usage: CacheUsage,
    output_tokens: u64,
) -> String {
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let start = ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message",
        "role": "assistant", "model": model, "content": [], "stop_reason": null,
        "usage": {"input_tokens": usage.input_tokens,
                  "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                  "cache_read_input_tokens": usage.cache_read_input_tokens,
                  "output_tokens": 1}}}),
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
                   "usage": {"output_tokens": output_tokens}}),
        )
        + &ev("message_stop", json!({"type": "message_stop"}))
}

/// What the Anthropic server of [`serve_anthropic`] reported for one request.
#[derive(Clone, Debug)]
pub struct Reported {
    /// The request body.
    pub request: Value,
    /// The message id of the answer.
    pub message_id: String,
    /// The model named in the answer (the request's).
    pub model: String,
    /// The prompt's tokens, as the API's prompt cache splits them.
    pub usage: CacheUsage,
    /// The answer's tokens.
    pub output_tokens: u64,
}

/// A loopback server speaking the Anthropic Messages API that reports usage as the real API
/// would: each request's prompt tokens split into uncached input, cache writes and cache
/// reads by a model of the API's prompt caching ([`prompt_cache`]), the answer's tokens
/// counted from its text or tool input. It answers the `k`-th request with `turns[k]`.
/// Returns its base URL (no path) and what it reported, request by request.
pub fn serve_anthropic(turns: Vec<Turn>) -> (String, Arc<Mutex<Vec<Reported>>>) {
    let reported = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&reported);
    let mut cache = PromptCache::new();
    let (url, _) = serve_requests(move |k, request| {
        let turn = turns.get(k)?;
        let usage = cache.usage(request);
        let output_tokens = prompt_cache::tokens(&match turn {
            Turn::Call(_, _, args) => args.to_string(),
            Turn::Text(t) => t.clone(),
        });
        let model = request["model"].as_str().unwrap_or("claude-x").to_owned();
        let message_id = format!("msg_loopback_{k}");
        let reply = anthropic_reply(turn, &message_id, &model, usage, output_tokens);
        log.lock().unwrap().push(Reported {
            request: request.clone(),
            message_id,
            model,
            usage,
            output_tokens,
        });
        Some(reply)
    });
    (url, reported)
}

/// Whether `program` is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}
