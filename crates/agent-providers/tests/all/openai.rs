//! The OpenAI adapter against a loopback server speaking Chat Completions' wire format.

use crate::support::{Reply, TestServer, collect, config, fixture, streamed_text};
use agent_providers::{
    ContentBlock, MaxTokensField, Message, ModelRequest, ModelResponse, OpenAiProvider, Provider,
    ProviderError, ProviderKind, Role, StopReason, StreamEvent, ToolChoice, ToolSpec, Usage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

fn openai(server: &TestServer) -> OpenAiProvider {
    OpenAiProvider::new(&config(ProviderKind::OpenAi, server.url("/v1"))).unwrap()
}

fn request() -> ModelRequest {
    ModelRequest::new("gpt-4o", vec![Message::user("hi")])
}

async fn run(replies: Vec<Reply>) -> (Vec<StreamEvent>, Option<ProviderError>, TestServer) {
    let server = TestServer::start(replies).await;
    let stream = openai(&server).stream(&request()).await.unwrap();
    let (events, error) = collect(stream).await;
    (events, error, server)
}

fn done(events: &[StreamEvent]) -> &ModelResponse {
    match events.last() {
        Some(StreamEvent::Done(response)) => response,
        other => panic!("the last event is not Done: {other:?}"),
    }
}

#[tokio::test]
async fn text() {
    let (events, error, server) = run(vec![Reply::sse(&fixture("openai/text.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events[..2],
        [
            StreamEvent::TextDelta("Hello".into()),
            StreamEvent::TextDelta(", wörld! 🎉".into()),
        ]
    );
    let response = done(&events);
    assert_eq!(events.len(), 3);
    assert_eq!(response.id.as_deref(), Some("chatcmpl-9Text"));
    assert_eq!(response.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(
        response.content,
        vec![ContentBlock::text("Hello, wörld! 🎉")]
    );
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.usage.input_tokens, 19);
    assert_eq!(response.usage.output_tokens, 10);
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn parallel_tool_calls_interleaved_by_index() {
    let (events, error, _server) =
        run(vec![Reply::sse(&fixture("openai/parallel_tools.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    let weather = ContentBlock::ToolUse {
        id: "call_WeatherA".into(),
        name: "get_weather".into(),
        input: json!({"city": "Paris"}),
    };
    let time = ContentBlock::ToolUse {
        id: "call_TimeB".into(),
        name: "get_time".into(),
        input: json!({"timezone": "Europe/Paris"}),
    };
    assert_eq!(
        events[..2],
        [
            StreamEvent::ToolUse(weather.clone()),
            StreamEvent::ToolUse(time.clone())
        ]
    );
    let response = done(&events);
    assert_eq!(response.content, vec![weather, time]);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage.output_tokens, 51);
}

#[tokio::test]
async fn usage_chunk_with_cached_tokens() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("openai/usage.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        done(&events).usage,
        Usage {
            input_tokens: 86,
            output_tokens: 300,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 1920,
        }
    );
    assert_eq!(done(&events).usage.context_tokens(), 2006);
}

#[tokio::test]
async fn length_stop() {
    let (events, _, _server) = run(vec![Reply::sse(&fixture("openai/length.sse"))]).await;
    assert_eq!(done(&events).stop_reason, StopReason::MaxTokens);
    assert_eq!(done(&events).usage, Usage::default());
}

#[tokio::test]
async fn content_filter_is_a_refusal() {
    let (events, _, _server) = run(vec![Reply::sse(&fixture("openai/content_filter.sse"))]).await;
    assert_eq!(done(&events).stop_reason, StopReason::Refusal);
    assert_eq!(done(&events).text(), "Here is");
}

#[tokio::test]
async fn a_refusal_delta_is_text_and_a_refusal() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("openai/refusal.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(streamed_text(&events), "I'm sorry, I can't help with that.");
    assert_eq!(done(&events).stop_reason, StopReason::Refusal);
    assert_eq!(done(&events).text(), "I'm sorry, I can't help with that.");
}

#[tokio::test]
async fn a_malformed_data_line_is_a_stream_error() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("openai/malformed.sse"))]).await;
    assert_eq!(events, vec![StreamEvent::TextDelta("hi".into())]);
    let error = error.unwrap();
    assert_eq!(error.kind(), "stream");
    assert!(
        error.to_string().contains("invalid JSON in the data line"),
        "{error}"
    );
}

#[tokio::test]
async fn an_error_object_in_the_stream_is_a_stream_error() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("openai/error.sse"))]).await;
    assert_eq!(streamed_text(&events), "Par");
    let error = error.unwrap();
    assert_eq!(error.kind(), "stream");
    assert!(
        error.to_string().contains("The server had an error"),
        "{error}"
    );
}

#[tokio::test]
async fn a_stream_without_done_but_with_a_finish_reason_completes() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("openai/no_done.sse"))]).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(done(&events).text(), "Local answer.");
    assert_eq!(done(&events).stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn a_stream_with_neither_done_nor_finish_reason_is_an_error() {
    let (events, error, _server) = run(vec![Reply::sse(&fixture("openai/truncated.sse"))]).await;
    assert_eq!(streamed_text(&events), "Local ans");
    let error = error.unwrap();
    assert_eq!(error.kind(), "stream");
    assert!(
        error.to_string().contains("without a finish_reason"),
        "{error}"
    );
}

#[tokio::test]
async fn a_429_then_success() {
    let (events, error, server) = run(vec![
        Reply::json(
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
        )
        .header("retry-after-ms", "5"),
        Reply::sse(&fixture("openai/text.sse")),
    ])
    .await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(done(&events).text(), "Hello, wörld! 🎉");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_400_is_not_retried() {
    let server = TestServer::start(vec![Reply::json(
        400,
        r#"{"error":{"message":"Unsupported parameter: 'max_tokens'","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#,
    )])
    .await;
    let error = openai(&server).stream(&request()).await.err().unwrap();
    assert!(
        matches!(&error, ProviderError::Status { status: 400, attempts: 1, message, .. } if message.contains("Unsupported parameter")),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

fn tool_request() -> ModelRequest {
    let mut request = ModelRequest::new(
        "gpt-4o",
        vec![
            Message::user("What's the weather in Paris?"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Checking."),
                    ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: "get_weather".into(),
                        input: json!({"city": "Paris"}),
                    },
                    ContentBlock::ToolUse {
                        id: "call_2".into(),
                        name: "get_time".into(),
                        input: json!({}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "call_1".into(),
                        content: "18°C".into(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "call_2".into(),
                        content: "no clock".into(),
                        is_error: true,
                    },
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "call_3".into(),
                    name: "get_time".into(),
                    input: json!({"tz": "CET"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "call_3".into(),
                    content: "12:00".into(),
                    is_error: false,
                }],
            },
        ],
    );
    request.system = Some("Be brief.".into());
    request.tools = vec![ToolSpec {
        name: "get_weather".into(),
        description: "The weather.".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }]
    .into();
    request.max_tokens = 512;
    request
}

#[tokio::test]
async fn the_request_body_and_headers() {
    let server = TestServer::start(vec![Reply::sse(&fixture("openai/text.sse"))]).await;
    openai(&server).complete(&tool_request()).await.unwrap();
    let recorded = &server.requests()[0];
    assert_eq!(recorded.method, "POST");
    assert_eq!(recorded.path, "/v1/chat/completions");
    assert_eq!(recorded.header("authorization"), Some("Bearer test-key"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(
        recorded.body,
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What's the weather in Paris?"},
                {"role": "assistant", "content": "Checking.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: no clock"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_3", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":\"CET\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_3", "content": "12:00"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather",
                "description": "The weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }}],
            "tool_choice": "auto",
            "max_completion_tokens": 512,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn a_compatible_server_without_a_key() {
    let server = TestServer::start(vec![Reply::sse(&fixture("openai/no_done.sse"))]).await;
    let mut c = config(ProviderKind::OpenAiCompatible, server.url("/v1/"));
    c.api_key = None;
    c.include_usage = false;
    let p = OpenAiProvider::new(&c).unwrap();
    assert_eq!(p.name(), "openai-compatible");
    let mut request = tool_request();
    request.tool_choice = ToolChoice::None;
    request.temperature = Some(0.5);
    p.complete(&request).await.unwrap();
    let recorded = &server.requests()[0];
    assert_eq!(recorded.path, "/v1/chat/completions");
    assert_eq!(recorded.header("authorization"), None);
    let body = &recorded.body;
    assert_eq!(body["max_tokens"], json!(512));
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("stream_options").is_none());
    assert_eq!(body["tool_choice"], json!("none"));
    assert_eq!(body["temperature"], json!(0.5));
}

#[tokio::test]
async fn a_compatible_server_with_a_key_and_the_field_switched() {
    let server = TestServer::start(vec![Reply::sse(&fixture("openai/text.sse"))]).await;
    let mut c = config(ProviderKind::OpenAiCompatible, server.url("/v1"));
    c.max_tokens_field = Some(MaxTokensField::MaxCompletionTokens);
    OpenAiProvider::new(&c)
        .unwrap()
        .complete(&request())
        .await
        .unwrap();
    let recorded = &server.requests()[0];
    assert_eq!(recorded.header("authorization"), Some("Bearer test-key"));
    assert_eq!(recorded.body["max_completion_tokens"], json!(4096));
    assert_eq!(
        recorded.body["stream_options"],
        json!({"include_usage": true})
    );
    assert!(recorded.body.get("tools").is_none() && recorded.body.get("tool_choice").is_none());
}

#[tokio::test]
async fn context_windows() {
    let server = TestServer::start(vec![]).await;
    let p = openai(&server);
    assert_eq!(p.context_window("gpt-4o"), 128_000);
    assert_eq!(p.context_window("gpt-4.1"), 1_047_576);
    assert_eq!(p.context_window("some-local-model"), 128_000);
    let mut c = config(ProviderKind::OpenAiCompatible, server.url("/v1"));
    c.context_window = Some(32_768);
    assert_eq!(
        OpenAiProvider::new(&c).unwrap().context_window("gpt-4.1"),
        32_768
    );
}
