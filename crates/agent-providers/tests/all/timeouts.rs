//! Timeouts and connection failures, against a loopback server that stalls.

use std::time::{Duration, Instant};

use crate::support::{Part, Reply, TestServer, collect, config, fast_retry, fixture};
use agent_providers::{
    AnthropicProvider, Message, ModelRequest, OpenAiProvider, Provider, ProviderError,
    ProviderKind, StreamEvent,
};

fn request() -> ModelRequest {
    ModelRequest::new("m", vec![Message::user("hi")])
}

#[tokio::test]
async fn headers_that_never_come_are_a_timeout() {
    let server = TestServer::start(vec![
        Reply::sse(&fixture("anthropic/text.sse")).delay_headers(Duration::from_secs(3)),
    ])
    .await;
    let mut c = config(ProviderKind::Anthropic, server.url(""));
    c.retry = fast_retry(0);
    c.response_timeout = Duration::from_millis(100);
    let started = Instant::now();
    let error = AnthropicProvider::new(&c)
        .unwrap()
        .stream(&request())
        .await
        .err()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        matches!(&error, ProviderError::Timeout { provider, after } if provider == "anthropic" && *after == Duration::from_millis(100)),
        "{error:?}"
    );
    assert_eq!(error.kind(), "timeout");
}

#[tokio::test]
async fn a_header_timeout_is_retried() {
    let server = TestServer::start(vec![
        Reply::sse(&fixture("openai/text.sse")).delay_headers(Duration::from_secs(3)),
        Reply::sse(&fixture("openai/text.sse")),
    ])
    .await;
    let mut c = config(ProviderKind::OpenAi, server.url("/v1"));
    c.retry = fast_retry(1);
    c.response_timeout = Duration::from_millis(100);
    let response = OpenAiProvider::new(&c)
        .unwrap()
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(response.text(), "Hello, wörld! 🎉");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_idle_stream_is_a_timeout() {
    let body = fixture("anthropic/text.sse");
    let (first_half, _) = body.split_at(body.find("event: content_block_stop").unwrap());
    let server = TestServer::start(vec![
        Reply::sse(first_half).then(Part::Sleep(Duration::from_secs(3))),
    ])
    .await;
    let mut c = config(ProviderKind::Anthropic, server.url(""));
    c.idle_timeout = Duration::from_millis(150);
    let started = Instant::now();
    let stream = AnthropicProvider::new(&c)
        .unwrap()
        .stream(&request())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| matches!(e, StreamEvent::TextDelta(_)))
    );
    let error = error.unwrap();
    assert!(
        matches!(&error, ProviderError::Timeout { after, .. } if *after == Duration::from_millis(150)),
        "{error:?}"
    );
    // Once the response started it is not retried.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // A port nothing listens on: bind, note it, close.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let mut c = config(ProviderKind::OpenAiCompatible, format!("http://{addr}/v1"));
    c.retry = fast_retry(2);
    let error = OpenAiProvider::new(&c)
        .unwrap()
        .stream(&request())
        .await
        .err()
        .unwrap();
    match &error {
        ProviderError::Connection {
            provider, attempts, ..
        } => {
            assert_eq!(provider, "openai-compatible");
            assert_eq!(*attempts, 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(error.kind(), "connection");
}
