//! A loopback HTTP/1.1 server for the provider tests: it answers each request with the next
//! scripted [`Reply`] (status, headers, a chunked body written piece by piece with optional
//! pauses, or a connection cut) and records every request it read.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_providers::{
    EventStream, ProviderConfig, ProviderError, ProviderKind, RetryPolicy, StreamEvent,
};
use futures_util::StreamExt as _;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

pub mod prompt_cache;

/// One piece of a response body.
#[derive(Clone, Debug)]
pub enum Part {
    /// Bytes sent as one HTTP chunk.
    Bytes(Vec<u8>),
    /// A pause before the next piece.
    Sleep(Duration),
    /// The connection is closed here, without the body's terminating chunk.
    Cut,
}

/// A scripted response.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// A pause before the status line is written.
    pub header_delay: Duration,
    /// Close the connection without answering at all.
    pub hang_up: bool,
    pub parts: Vec<Part>,
}

impl Reply {
    /// A 200 `text/event-stream` response sending `body` in pieces of `piece` bytes.
    pub fn sse_in_pieces(body: &str, piece: usize) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            header_delay: Duration::ZERO,
            hang_up: false,
            parts: body
                .as_bytes()
                .chunks(piece)
                .map(|c| Part::Bytes(c.to_vec()))
                .collect(),
        }
    }

    /// A 200 `text/event-stream` response sending `body` in pieces of 7 bytes (so lines,
    /// JSON and UTF-8 characters are split between chunks).
    pub fn sse(body: &str) -> Self {
        Self::sse_in_pieces(body, 7)
    }

    /// A response with a JSON `body`.
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            header_delay: Duration::ZERO,
            hang_up: false,
            parts: vec![Part::Bytes(body.as_bytes().to_vec())],
        }
    }

    /// Closes the connection after reading the request, without a response.
    pub fn hang_up() -> Self {
        Self {
            hang_up: true,
            ..Self::json(200, "")
        }
    }

    /// The same reply with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply with a pause before the headers.
    pub fn delay_headers(mut self, by: Duration) -> Self {
        self.header_delay = by;
        self
    }

    /// The same reply with `part` appended to the body.
    pub fn then(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }
}

/// A request the server read.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
}

impl Recorded {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The server; it runs until the test's runtime ends.
pub struct TestServer {
    pub addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    /// Starts a server answering with `replies`, in order (then 500s).
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let recorded = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let recorded = Arc::clone(&recorded);
                let replies = Arc::clone(&replies);
                tokio::spawn(async move {
                    let _ = serve(socket, recorded, replies).await;
                });
            }
        });
        Self { addr, requests }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests read so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let header_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let path = request_line.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    recorded.lock().unwrap().push(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let reply = replies.lock().unwrap().pop_front().unwrap_or_else(|| {
        Reply::json(
            500,
            r#"{"error":{"message":"the test server has no reply left"}}"#,
        )
    });
    if reply.hang_up {
        return Ok(());
    }
    tokio::time::sleep(reply.header_delay).await;
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    for part in reply.parts {
        match part {
            Part::Bytes(bytes) => {
                if bytes.is_empty() {
                    continue;
                }
                socket
                    .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
                    .await?;
                socket.write_all(&bytes).await?;
                socket.write_all(b"\r\n").await?;
                socket.flush().await?;
            }
            Part::Sleep(d) => tokio::time::sleep(d).await,
            Part::Cut => return Ok(()),
        }
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.flush().await?;
    socket.shutdown().await
}

/// A fixture file's text (`tests/fixtures/NAME`).
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fast retry policy for tests: `retries` retries, 1–20 ms apart.
pub fn fast_retry(retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries: retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
    }
}

/// A configuration of `kind` for `base_url` with key `test-key` and fast retries.
pub fn config(kind: ProviderKind, base_url: String) -> ProviderConfig {
    let mut config = ProviderConfig::new(kind)
        .with_base_url(base_url)
        .with_api_key("test-key")
        .with_retry(fast_retry(2));
    config.response_timeout = Duration::from_secs(5);
    config.idle_timeout = Duration::from_secs(5);
    config
}

/// Every item of a stream: the events, and the error it ended with, if any.
pub async fn collect(mut stream: EventStream) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => {
                assert!(stream.next().await.is_none(), "items after an error");
                return (events, Some(error));
            }
        }
    }
    (events, None)
}

/// The text deltas of `events`, joined.
pub fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}
