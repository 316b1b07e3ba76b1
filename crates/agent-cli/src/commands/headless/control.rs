//! The SDK's stdio channel: JSON lines both ways (`../shared/compat/claude-agent-sdk.md` §2–§4).
//!
//! One task reads stdin: user messages and the SDK's control requests go to the session's
//! inbox in order; `control_response` lines answer the requests this side sent
//! (`can_use_tool`, `hook_callback`) and wake their waiters directly, so an answer is taken in
//! even while the session is busy running the tool call that asked. stdout carries only whole
//! JSON lines, each flushed; everything else goes to stderr.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use std::io::BufRead as _;
use tokio::sync::{mpsc, oneshot};

use crate::output;

/// What stdin brought the session.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A user message: its text (text blocks joined).
    User(String),
    /// A control request of the SDK: its `request_id` and `request` object.
    Control { id: String, request: Value },
    /// stdin closed.
    Closed,
}

/// The writing half, and the requests waiting for the SDK's answer.
#[derive(Clone, Default)]
pub(crate) struct Channel {
    inner: Arc<ChannelInner>,
}

#[derive(Default)]
struct ChannelInner {
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, String>>>>,
    next: AtomicU64,
    /// Round trips of answered requests: subtype and microseconds from the request written
    /// to its answer taken in (`AGENT_SDK_TIMINGS`).
    timings: Mutex<Vec<(String, u64)>>,
}

impl Channel {
    /// Writes one message as one line on stdout.
    pub(crate) fn send(&self, message: &Value) {
        let line = message.to_string();
        // The stdout lock, held for the whole line, keeps lines of other threads apart.
        let mut out = std::io::stdout().lock();
        // A closed stdout means the SDK went away; the session ends when stdin closes.
        let _ = out
            .write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
    }

    /// Answers an SDK control request with success.
    pub(crate) fn respond(&self, request_id: &str, response: Value) {
        self.send(&json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response},
        }));
    }

    /// Answers an SDK control request with an error (the SDK raises it in the caller).
    pub(crate) fn respond_error(&self, request_id: &str, error: &str) {
        self.send(&json!({
            "type": "control_response",
            "response": {"subtype": "error", "request_id": request_id, "error": error},
        }));
    }

    /// Sends a control request to the SDK and waits for its answer: `Ok(response)` or
    /// `Err(error text)` (the callback raised, the request was cancelled, or stdin closed).
    pub(crate) async fn request(&self, request: Value) -> Result<Value, String> {
        let n = self.inner.next.fetch_add(1, Ordering::SeqCst) + 1;
        let id = format!("agent_req_{n}");
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), tx);
        let subtype = request
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let sent = std::time::Instant::now();
        self.send(&json!({"type": "control_request", "request_id": id, "request": request}));
        let answer = rx
            .await
            .unwrap_or_else(|_| Err("the SDK closed the connection before answering".into()));
        let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.inner
            .timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((subtype, micros));
        answer
    }

    /// The round trips recorded since the last call: subtype and microseconds.
    pub(crate) fn take_timings(&self) -> Vec<(String, u64)> {
        std::mem::take(
            &mut *self
                .inner
                .timings
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Cancels every request still waiting: the SDK is told (`control_cancel_request`) and
    /// each waiter gets `Err(reason)`.
    pub(crate) fn cancel_pending(&self, reason: &str) {
        let pending: Vec<_> = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for (id, tx) in pending {
            self.send(&json!({"type": "control_cancel_request", "request_id": id}));
            let _ = tx.send(Err(reason.to_owned()));
        }
    }

    fn answer(&self, response: &Value) {
        let Some(id) = response.get("request_id").and_then(Value::as_str) else {
            output::warning("a control_response without request_id was ignored");
            return;
        };
        let waiter = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        let Some(tx) = waiter else {
            // Answered after it was cancelled (an interrupt): nothing waits any more.
            return;
        };
        let result = match response.get("subtype").and_then(Value::as_str) {
            Some("error") => Err(response
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the SDK's callback failed")
                .to_owned()),
            _ => Ok(response.get("response").cloned().unwrap_or(json!({}))),
        };
        let _ = tx.send(result);
    }

    /// Reads stdin to its end: user messages and control requests into `inbox`, answers to
    /// this side's requests to their waiters. A line that is not JSON is reported on stderr
    /// and skipped (one bad line must not end the session).
    ///
    /// Blocking: runs on a thread of its own, started before the async runtime exists (the
    /// `initialize` request must be read before the session is built, since the hooks it
    /// registers are part of it).
    pub(crate) fn read_stdin(self, inbox: mpsc::UnboundedSender<Inbound>) {
        let stdin = std::io::stdin();
        let mut lines = stdin.lock().lines();
        loop {
            let line = match lines.next() {
                Some(Ok(l)) => l,
                None => break,
                Some(Err(e)) => {
                    output::warning(&format!("cannot read stdin: {e}"));
                    break;
                }
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let value: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(e) => {
                    output::warning(&format!(
                        "stdin: a line that is not JSON was skipped ({e}): {}",
                        output::sanitize(&line.chars().take(120).collect::<String>())
                    ));
                    continue;
                }
            };
            match value.get("type").and_then(Value::as_str) {
                Some("user") => match user_text(&value) {
                    Some(text) => {
                        let _ = inbox.send(Inbound::User(text));
                    }
                    None => output::warning(
                        "stdin: a user message without text content was skipped (message.content must be a string or text blocks)",
                    ),
                },
                Some("control_request") => {
                    let id = value
                        .get("request_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let request = value.get("request").cloned().unwrap_or(json!({}));
                    let _ = inbox.send(Inbound::Control { id, request });
                }
                Some("control_response") => {
                    if let Some(r) = value.get("response") {
                        self.answer(r);
                    }
                }
                // The SDK gave up on a request of ours: nothing to do until it answers.
                Some("control_cancel_request") | Some("keep_alive") => {}
                other => output::warning(&format!(
                    "stdin: a message of type {} was skipped",
                    other.unwrap_or("(none)")
                )),
            }
        }
        self.cancel_pending("stdin closed");
        let _ = inbox.send(Inbound::Closed);
    }
}

/// The text of a user message: `message.content` as a string, or its text blocks joined
/// (other blocks, such as images, are not supported and are left out).
fn user_text(value: &Value) -> Option<String> {
    let content = value.get("message")?.get("content")?;
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if texts.len() < blocks.len() {
                output::warning(
                    "a user message's non-text blocks (images, documents) are not supported and were left out",
                );
            }
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_message_is_its_text_or_its_text_blocks_joined() {
        let s = json!({"type":"user","message":{"role":"user","content":"hi"}});
        assert_eq!(user_text(&s).as_deref(), Some("hi"));
        let blocks = json!({"type":"user","message":{"role":"user","content":[
            {"type":"text","text":"a"},{"type":"text","text":"b"}]}});
        assert_eq!(user_text(&blocks).as_deref(), Some("a\nb"));
        let none = json!({"type":"user","message":{"role":"user","content":[{"type":"image"}]}});
        assert_eq!(user_text(&none), None);
    }

    #[tokio::test]
    async fn an_answer_wakes_the_request_that_waits_for_it() {
        let channel = Channel::default();
        let waiting = {
            let c = channel.clone();
            tokio::spawn(async move { c.request(json!({"subtype": "can_use_tool"})).await })
        };
        // The request is registered before it is written; wait until it is.
        while channel
            .inner
            .pending
            .lock()
            .map(|p| p.is_empty())
            .unwrap_or(true)
        {
            tokio::task::yield_now().await;
        }
        channel.answer(&json!({"subtype":"success","request_id":"agent_req_1","response":{"behavior":"allow"}}));
        let got = waiting.await.map_err(|e| e.to_string());
        assert_eq!(got, Ok(Ok(json!({"behavior": "allow"}))));
    }

    #[tokio::test]
    async fn cancelling_fails_every_waiting_request() {
        let channel = Channel::default();
        let waiting = {
            let c = channel.clone();
            tokio::spawn(async move { c.request(json!({"subtype": "hook_callback"})).await })
        };
        while channel
            .inner
            .pending
            .lock()
            .map(|p| p.is_empty())
            .unwrap_or(true)
        {
            tokio::task::yield_now().await;
        }
        channel.cancel_pending("interrupted");
        let got = waiting.await.map_err(|e| e.to_string());
        assert_eq!(got, Ok(Err("interrupted".to_owned())));
    }
}
