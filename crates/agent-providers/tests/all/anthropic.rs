//! The Anthropic adapter against a loopback server speaking the Messages API's wire format.

use crate::support::{
    Part, Reply, TestServer, collect, config, fixture, prompt_cache, streamed_text,
};
use agent_providers::{
    AnthropicProvider, ContentBlock, Message, ModelRequest, Provider, ProviderError, ProviderKind,
    Role, StopReason, StreamEvent, ToolChoice, ToolSpec, Usage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

async fn provider(server: &TestServer) -> AnthropicProvider {
    AnthropicProvider::new(&config(ProviderKind::Anthropic, server.url(""))).unwrap()
}

fn request() -> ModelRequest {
    ModelRequest::new("claude-sonnet-4-5", vec![Message::user("hi")])
}

async fn run(replies: Vec<Reply>) -> (Vec<StreamEvent>, Option<ProviderError>, TestServer) {
    let server = TestServer::start(replies).await;
    let p = provider(&server).await;
    let stream = p.stream(&request()).await.unwrap();
    let (events, error) = collect(stream).await;
    (events, error, server)
}

fn done(events: &[StreamEvent]) -> &agent_providers::ModelResponse {
    match events.last() {
        Some(StreamEvent::Done(response)) => response,
        other => panic!("the last event is not Done: {other:?}"),
    }
}

#[tokio::test]
async fn text_only() {
    let (events, error, server) = run(vec![Reply::sse(&fixture("anthropic/text.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events[..2],
        [
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(", wörld! 🎉 日本".into()),
        ]
    );
    let response = done(&events);
    assert_eq!(response.id.as_deref(), Some("msg_01TextOnly"));
    assert_eq!(
        response.model.as_deref(),
        Some("claude-sonnet-4-5-20250929")
    );
    assert_eq!(
        response.content,
        vec![ContentBlock::text("Hello, wörld! 🎉 日本")]
    );
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.usage.input_tokens, 25);
    assert_eq!(response.usage.output_tokens, 15);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn text_only_with_crlf_line_endings_and_one_byte_chunks() {
    let body = fixture("anthropic/text.sse").replace('\n', "\r\n");
    let server = TestServer::start(vec![Reply::sse_in_pieces(&body, 1)]).await;
    let response = provider(&server).await.complete(&request()).await.unwrap();
    assert_eq!(response.text(), "Hello, wörld! 🎉 日本");
}

#[tokio::test]
async fn multi_tool_turn() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("anthropic/tools.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    let weather = ContentBlock::ToolUse {
        id: "toolu_01WeatherA".into(),
        name: "get_weather".into(),
        input: json!({"location": "San Francisco, CA", "unit": "celsius"}),
    };
    let read = ContentBlock::ToolUse {
        id: "toolu_01ReadB".into(),
        name: "read_file".into(),
        input: json!({"path": "src/main.rs", "lines": [1, 20]}),
    };
    assert_eq!(
        events[..4],
        [
            StreamEvent::TextDelta("I'll check the weather".into()),
            StreamEvent::TextDelta(" and read the file.".into()),
            StreamEvent::ToolUse(weather.clone()),
            StreamEvent::ToolUse(read.clone()),
        ]
    );
    let response = done(&events);
    assert_eq!(events.len(), 5);
    assert_eq!(
        response.content,
        vec![
            ContentBlock::text("I'll check the weather and read the file."),
            weather,
            read
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage.output_tokens, 89);
}

#[tokio::test]
async fn tool_use_with_invalid_json_keeps_the_raw_text() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture(
        "anthropic/invalid_tool_json.sse",
    ))])
    .await;
    assert!(error.is_none(), "{error:?}");
    let response = done(&events);
    let raw = "{\"path\": \"a.txt\", \"content\": \"unterminated";
    assert_eq!(
        response.content,
        vec![
            ContentBlock::ToolUse {
                id: "toolu_01Broken".into(),
                name: "write_file".into(),
                input: json!(raw),
            },
            ContentBlock::ToolUse {
                id: "toolu_01NoInput".into(),
                name: "list_files".into(),
                input: json!({}),
            },
        ]
    );
    assert!(
        response.content[0]
            .tool_input_error()
            .unwrap()
            .contains("not valid JSON")
    );
    assert_eq!(response.content[1].tool_input_error(), None);
}

#[tokio::test]
async fn max_tokens_stop() {
    let (events, error, _server) =
        run(vec![Reply::sse(&fixture("anthropic/max_tokens.sse"))]).await;
    assert!(error.is_none());
    assert_eq!(done(&events).stop_reason, StopReason::MaxTokens);
    assert_eq!(done(&events).text(), "Once upon a time, there was a");
}

#[tokio::test]
async fn refusal_stop() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("anthropic/refusal.sse"))]).await;
    assert!(error.is_none());
    assert_eq!(done(&events).stop_reason, StopReason::Refusal);
}

#[tokio::test]
async fn usage_with_cache_tokens() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("anthropic/usage.sse"))]).await;
    assert!(error.is_none());
    let response = done(&events);
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 21,
            output_tokens: 57,
            cache_creation_input_tokens: 1024,
            cache_read_input_tokens: 30500,
        }
    );
    assert_eq!(response.usage.context_tokens(), 31_545);
    assert_eq!(response.stop_reason, StopReason::StopSequence);
}

/// The first two requests of a session with a long system prompt and a tool: the first
/// answer is a tool call, the second request adds it and its result.
async fn two_turns(caching: bool) -> (Vec<serde_json::Value>, TestServer) {
    let server = TestServer::start(vec![
        Reply::sse(&fixture("anthropic/tools.sse")),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    let mut config = config(ProviderKind::Anthropic, server.url(""));
    config.prompt_caching = caching;
    let p = AnthropicProvider::new(&config).unwrap();
    let mut request = ModelRequest::new("claude-sonnet-4-5", vec![Message::user("weather?")]);
    request.system = Some("You are a careful agent. ".repeat(400));
    request.tools = vec![ToolSpec {
        name: "get_weather".into(),
        description: "The weather of a city.".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }]
    .into();
    let first = p.complete(&request).await.unwrap();
    request.messages.push(Message {
        role: Role::Assistant,
        content: first.tool_uses().cloned().collect(),
    });
    for call in first.tool_uses() {
        let ContentBlock::ToolUse { id, .. } = call else {
            unreachable!()
        };
        request.messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: "sunny".into(),
                is_error: false,
            }],
        });
    }
    p.complete(&request).await.unwrap();
    let bodies = server.requests().into_iter().map(|r| r.body).collect();
    (bodies, server)
}

#[tokio::test]
async fn a_second_turn_carries_cache_breakpoints_and_reads_the_prefix_the_first_wrote() {
    let (bodies, _server) = two_turns(true).await;
    let second = &bodies[1];
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(second["tools"][0]["cache_control"], ephemeral);
    assert_eq!(second["system"][0]["cache_control"], ephemeral);
    let marked: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["content"].as_array().unwrap().last().unwrap()["cache_control"] == ephemeral)
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(marked, ["user", "user"], "the last two user turns");
    // As the API counts them: the second request reads all that the first wrote.
    let mut cache = prompt_cache::PromptCache::new();
    let (a, b) = (cache.usage(&bodies[0]), cache.usage(&bodies[1]));
    assert_eq!(a.cache_read_input_tokens, 0);
    assert!(
        a.cache_creation_input_tokens >= prompt_cache::MIN_CACHEABLE_TOKENS,
        "{a:?}"
    );
    assert_eq!(
        b.cache_read_input_tokens, a.cache_creation_input_tokens,
        "{b:?}"
    );
    assert!(
        b.cache_creation_input_tokens > 0,
        "the new turn is written: {b:?}"
    );
    assert!(
        b.billed_equivalent() < 0.5 * b.prompt_tokens() as f64,
        "{b:?}"
    );
}

#[tokio::test]
async fn with_prompt_caching_off_no_block_is_marked_and_every_token_is_billed_in_full() {
    let (bodies, _server) = two_turns(false).await;
    for body in &bodies {
        assert!(!body.to_string().contains("cache_control"), "{body}");
        assert!(
            body["system"].is_array(),
            "the system prompt is still a block list"
        );
    }
    let mut cache = prompt_cache::PromptCache::new();
    for body in &bodies {
        let u = cache.usage(body);
        assert_eq!(u.input_tokens, u.prompt_tokens(), "{u:?}");
    }
}

#[tokio::test]
async fn a_malformed_data_line_is_a_stream_error_naming_the_line() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("anthropic/malformed.sse"))]).await;
    assert!(events.iter().all(|e| !matches!(e, StreamEvent::Done(_))));
    let error = error.unwrap();
    assert_eq!(error.kind(), "stream");
    let message = error.to_string();
    assert!(
        message.contains("invalid JSON in the data line") && message.contains("oops"),
        "{message}"
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_it_and_is_not_retried() {
    let (events, error, server) = run(vec![
        Reply::sse(&fixture("anthropic/error_event.sse")),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    assert_eq!(events, vec![StreamEvent::TextDelta("Partial".into())]);
    let error = error.unwrap();
    assert_eq!(error.kind(), "stream");
    let message = error.to_string();
    assert!(
        message.contains("overloaded_error: Overloaded"),
        "{message}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_an_error() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("anthropic/cut.sse"))]).await;
    assert_eq!(streamed_text(&events), "Half an ans");
    let message = error.unwrap().to_string();
    assert!(message.contains("ended before message_stop"), "{message}");
}

#[tokio::test]
async fn a_connection_dropped_mid_body_is_a_stream_error() {
    let body = fixture("anthropic/text.sse");
    let (first_half, _) = body.split_at(body.find("event: content_block_stop").unwrap());
    let reply = Reply::sse(first_half).then(Part::Cut);
    let (events, error, server) = run(vec![reply, Reply::sse(&body)]).await;
    assert_eq!(streamed_text(&events), "Hello, wörld! 🎉 日本");
    let error = error.unwrap();
    assert_eq!(error.kind(), "stream");
    // The response had started: not retried.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_429_with_retry_after_zero_is_retried() {
    let (events, error, server) = run(vec![
        Reply::json(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
        )
        .header("retry-after", "0"),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(done(&events).text(), "Hello, wörld! 🎉 日本");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn each_retry_is_reported_to_the_observer_before_its_wait() {
    let server = TestServer::start(vec![
        Reply::json(
            503,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#,
        )
        .header("retry-after", "0"),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    let p = provider(&server).await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = std::sync::Arc::clone(&seen);
    let observer: agent_providers::RetryObserver =
        std::sync::Arc::new(move |r: &agent_providers::Retry| into.lock().unwrap().push(r.clone()));
    let stream = agent_providers::report_retries(observer, p.stream(&request()))
        .await
        .unwrap();
    let (_, error) = collect(stream).await;
    assert!(error.is_none(), "{error:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![agent_providers::Retry {
            attempt: 1,
            max_retries: 2,
            delay: std::time::Duration::ZERO,
            reason: "HTTP 503".into(),
        }]
    );
    // Outside the scope nobody hears: a plain call still retries silently.
    let (_, error, _) = run(vec![
        Reply::json(503, "{}").header("retry-after", "0"),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    assert!(error.is_none(), "{error:?}");
}

#[tokio::test]
async fn a_500_then_success() {
    let (events, error, server) = run(vec![
        Reply::json(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(done(&events).stop_reason, StopReason::EndTurn);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_connection_closed_before_the_headers_is_retried() {
    let (events, error, server) = run(vec![
        Reply::hang_up(),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    assert!(error.is_none(), "{error:?}");
    assert!(matches!(events.last(), Some(StreamEvent::Done(_))));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_401_is_not_retried_and_carries_the_api_message() {
    let server = TestServer::start(vec![
        Reply::json(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        ),
        Reply::sse(&fixture("anthropic/text.sse")),
    ])
    .await;
    let error = provider(&server)
        .await
        .stream(&request())
        .await
        .err()
        .unwrap();
    match &error {
        ProviderError::Status {
            provider,
            status,
            message,
            attempts,
        } => {
            assert_eq!(provider, "anthropic");
            assert_eq!(*status, 401);
            assert!(message.contains("invalid x-api-key"), "{message}");
            assert_eq!(*attempts, 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(error.kind(), "http_status");
    assert!(!error.to_string().contains("test-key"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retries_run_out() {
    let overloaded = Reply::json(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    );
    let server = TestServer::start(vec![overloaded.clone(), overloaded.clone(), overloaded]).await;
    let error = provider(&server)
        .await
        .stream(&request())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, ProviderError::Status { status: 529, attempts: 3, message, .. } if message == "Overloaded"),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn the_request_body_and_headers() {
    let server = TestServer::start(vec![Reply::sse(&fixture("anthropic/text.sse"))]).await;
    let p = provider(&server).await;
    let mut request = ModelRequest::new(
        "claude-sonnet-4-5",
        vec![
            Message::user("List the files."),
            Message::user("Then read main.rs."),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Listing."),
                    ContentBlock::ToolUse {
                        id: "toolu_1".into(),
                        name: "ls".into(),
                        input: json!({"path": "."}),
                    },
                    ContentBlock::ToolUse {
                        id: "toolu_2".into(),
                        name: "read".into(),
                        input: json!("{bad json"),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "main.rs".into(),
                    is_error: false,
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "toolu_2".into(),
                    content: "the tool input is not valid JSON".into(),
                    is_error: true,
                }],
            },
        ],
    );
    request.system = Some("You are terse.".into());
    request.tools = vec![ToolSpec {
        name: "ls".into(),
        description: "Lists files.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }]
    .into();
    request.tool_choice = ToolChoice::None;
    request.max_tokens = 1024;
    request.temperature = Some(0.25);
    p.complete(&request).await.unwrap();

    let recorded = &server.requests()[0];
    assert_eq!(recorded.method, "POST");
    assert_eq!(recorded.path, "/v1/messages");
    assert_eq!(recorded.header("x-api-key"), Some("test-key"));
    assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(recorded.header("authorization"), None);
    assert_eq!(
        recorded.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "List the files."},
                    {"type": "text", "text": "Then read main.rs.", "cache_control": {"type": "ephemeral"}},
                ]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Listing."},
                    {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
                    {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "main.rs", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "the tool input is not valid JSON", "is_error": true, "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [{
                "name": "ls",
                "description": "Lists files.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"},
            }],
            "tool_choice": {"type": "none"},
            "temperature": 0.25,
            "stream": true,
        })
    );
}

#[tokio::test]
async fn no_tools_means_no_tools_or_tool_choice() {
    let server = TestServer::start(vec![Reply::sse(&fixture("anthropic/text.sse"))]).await;
    provider(&server).await.complete(&request()).await.unwrap();
    let body = &server.requests()[0].body;
    assert!(
        body.get("tools").is_none()
            && body.get("tool_choice").is_none()
            && body.get("system").is_none()
    );
    assert!(body.get("temperature").is_none());
}

#[tokio::test]
async fn context_window() {
    let server = TestServer::start(vec![]).await;
    let p = provider(&server).await;
    assert_eq!(p.context_window("claude-sonnet-4-5"), 200_000);
    let mut c = config(ProviderKind::Anthropic, server.url(""));
    c.context_window = Some(1_000_000);
    let p = AnthropicProvider::new(&c).unwrap();
    assert_eq!(p.context_window("claude-sonnet-4-5"), 1_000_000);
}
