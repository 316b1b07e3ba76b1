//! Agent loop figures (issue: "loop overhead per turn excluding provider time, scripted provider,
//! 100 tools registered, 3 tool calls per turn: median ≤ 1 ms; time from the provider's first
//! streamed byte to the first event the caller sees ≤ 1 ms"), each next to a baseline measured
//! in the same run:
//!
//! - `turn_overhead_os` / `turn_overhead_fsync`: one `Agent::prompt` whose model asks for 3 tool
//!   calls and then answers, that is 2 provider calls + 3 tool calls through the gate
//!   (PreToolUse hooks, permission engine, the tool, PostToolUse hooks) + the 12 events of the
//!   run logged in 7 appends; 100 tools registered (3 cheap read-only `Echo` tools the model
//!   calls, 97 dummies with distinct schemas), the 3 allowed by rules. With `Durability::Os`,
//!   then with the default durability (`fdatasync` per append). The baselines do the least such
//!   a prompt must do: the same 3 `Tool::call`s made directly and the same 12 events appended
//!   straight to the same store in the same 7 batches.
//! - `first_event_latency`: from the moment a provider's stream yields its first text delta (the
//!   provider stamps the instant right before) to the moment the caller of `Agent::query`
//!   receives it as `AgentEvent::TextDelta`. The stream then pauses once, as a network stream
//!   does while the next bytes are in flight. `first_event_latency_answer_ready`: the stream holds
//!   the whole answer at once; the loop yields after each fragment it passes on, so the caller
//!   still sees the first one before the rest is read. The baseline reads the same stream directly.
//!
//! The scripted model is [`Replay`], not `ScriptedProvider`: `ScriptedProvider` keeps a copy of
//! every request it is sent (100 tool schemas and the whole history), which is provider time,
//! and which took more than the loop itself here (about 2.0 ms per prompt against 0.8 ms, before the loop shared its tool specs).
//! Every agent (and baseline session) is replaced by a fresh one after 20 prompts, so the
//! conversation sent with each call stays between 0 and ~160 messages.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

use std::collections::VecDeque;
use std::hint::black_box;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_core::events::{Event, EventPayload};
use agent_core::permissions::{PermissionEngine, PermissionEngineBuilder, RuleList};
use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use agent_loop::{Agent, AgentEvent, AgentOptions};
use agent_providers::{
    ContentBlock, EventStream, Message, ModelRequest, ModelResponse, Provider, ProviderError,
    ScriptedTurn, StopReason, StreamEvent, Usage,
};
use agent_store::{
    Durability, LoadRange, NewSession, SessionBackend, SessionId, SessionStore, StoreOptions,
};
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt as _;
use serde_json::{Value, json};

/// Prompts per session before the agent is replaced by a fresh one.
const PROMPTS_PER_SESSION: u64 = 20;

/// A cheap read-only tool: returns its input.
struct Echo(String);

#[async_trait::async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> &str {
        "Returns its input."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(input))
    }
}

/// A registered tool the model never calls, with a schema of its own.
struct Dummy {
    name: String,
    description: String,
    schema: Value,
}

#[async_trait::async_trait]
impl Tool for Dummy {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> Value {
        self.schema.clone()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    async fn call(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

/// 100 tools: `Echo0`..`Echo2`, then 97 dummies.
fn tools() -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = (0..3)
        .map(|i| Arc::new(Echo(format!("Echo{i}"))) as Arc<dyn Tool>)
        .collect();
    tools.extend((3..100).map(|i| {
        Arc::new(Dummy {
            name: format!("Dummy{i:03}"),
            description: format!("Dummy tool number {i}: takes a path and a count, does nothing."),
            schema: json!({
                "type": "object",
                "properties": {
                    format!("path_{i}"): {"type": "string", "description": "A file"},
                    format!("count_{i}"): {"type": "integer", "minimum": 0},
                },
                "required": [format!("path_{i}")],
            }),
        }) as Arc<dyn Tool>
    }));
    tools
}

fn permissions(project: &Path) -> PermissionEngineBuilder {
    let mut b = PermissionEngine::builder(project, project.join("home"));
    for i in 0..3 {
        b = b.rule(RuleList::Allow, &format!("Echo{i}")).unwrap();
    }
    b
}

/// The model's first answer: three tool calls.
fn three_calls() -> ScriptedTurn {
    ScriptedTurn::tools(
        None,
        vec![
            ("toolu_0", "Echo0", json!({"text": "call 0"})),
            ("toolu_1", "Echo1", json!({"text": "call 1"})),
            ("toolu_2", "Echo2", json!({"text": "call 2"})),
        ],
    )
}

/// The model's second answer: text that ends the turn.
fn answer() -> ScriptedTurn {
    ScriptedTurn::text("done")
}

/// Replays scripted turns like `ScriptedProvider` (text as one delta, then each tool call, then
/// `Done`), but keeps no copy of the requests: its time per call is ~0.
#[derive(Default)]
struct Replay {
    turns: Mutex<VecDeque<ModelResponse>>,
}

impl Replay {
    fn push(&self, turns: impl IntoIterator<Item = ScriptedTurn>) {
        let mut queue = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        for t in turns {
            let ScriptedTurn::Respond(r) = t else {
                panic!("Replay only replays answers")
            };
            queue.push_back(r);
        }
    }
}

#[async_trait::async_trait]
impl Provider for Replay {
    fn name(&self) -> &str {
        "replay"
    }

    async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, ProviderError> {
        let response = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .ok_or(ProviderError::ScriptExhausted(0))?;
        let mut items: Vec<Result<StreamEvent, ProviderError>> = response
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(Ok(StreamEvent::TextDelta(text.clone()))),
                ContentBlock::ToolUse { .. } => Some(Ok(StreamEvent::ToolUse(b.clone()))),
                ContentBlock::ToolResult { .. } => None,
            })
            .collect();
        items.push(Ok(StreamEvent::Done(response)));
        Ok(Box::pin(futures_util::stream::iter(items)))
    }
}

/// A multi-threaded runtime, as most hosts run.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An agent that is replaced by a fresh one (new session) every [`PROMPTS_PER_SESSION`]
/// prompts, outside the measured time.
struct Rotating {
    provider: Arc<dyn Provider>,
    store: Arc<SessionStore>,
    project: tempfile::TempDir,
    agent: Option<Agent>,
    prompts: u64,
}

impl Rotating {
    fn new(provider: Arc<dyn Provider>, store: Arc<SessionStore>) -> Self {
        Self {
            provider,
            store,
            project: tempfile::tempdir().unwrap(),
            agent: None,
            prompts: 0,
        }
    }

    /// The agent for the next prompt.
    async fn agent(&mut self) -> &mut Agent {
        if self.prompts.is_multiple_of(PROMPTS_PER_SESSION)
            && let Some(old) = self.agent.take()
        {
            old.close().await.unwrap();
        }
        self.prompts += 1;
        if self.agent.is_none() {
            let agent = Agent::builder(
                Arc::clone(&self.provider),
                self.store.clone(),
                self.project.path(),
            )
            .options(AgentOptions::new("scripted"))
            .permissions(permissions(self.project.path()))
            .tools(tools())
            .subagents(false)
            .start()
            .await
            .unwrap();
            assert_eq!(agent.tool_names().len(), 100);
            self.agent = Some(agent);
        }
        self.agent.as_mut().unwrap()
    }

    async fn close(mut self) {
        if let Some(a) = self.agent.take() {
            a.close().await.unwrap();
        }
    }
}

async fn open_store(root: &Path, durability: Durability) -> Arc<SessionStore> {
    Arc::new(
        SessionStore::open(StoreOptions::new(root).durability(durability))
            .await
            .unwrap(),
    )
}

/// The events one prompt logs, in the batches the loop appends them in: consecutive
/// `tool.use`s together, a `permission.decision` with its `tool.result`, the rest alone.
fn batches(log: &[Event]) -> Vec<Vec<Event>> {
    let mut out: Vec<Vec<Event>> = Vec::new();
    let mut prev: Option<&EventPayload> = None;
    for e in log {
        let joins = matches!(
            (prev, &e.payload),
            (Some(EventPayload::ToolUse(_)), EventPayload::ToolUse(_))
                | (
                    Some(EventPayload::PermissionDecision(_)),
                    EventPayload::ToolResult(_)
                )
        );
        match out.last_mut() {
            Some(last) if joins => last.push(e.clone()),
            _ => out.push(vec![e.clone()]),
        }
        prev = Some(&e.payload);
    }
    out
}

/// A fresh copy of `e` for appending (the store assigns `seq`; a new id and timestamp).
fn fresh(e: &Event) -> Event {
    let mut copy = Event::new(0, None, e.payload.clone());
    copy.extra = e.extra.clone();
    copy
}

fn turn_benches(c: &mut Criterion, rt: &tokio::runtime::Runtime, tmp: &Path) {
    let mut g = c.benchmark_group("agent");
    // The events of one prompt, recorded once, for the baselines.
    let sample: Vec<Vec<Event>> = rt.block_on(async {
        let store = open_store(&tmp.join("sample"), Durability::Os).await;
        let provider = Arc::new(Replay::default());
        provider.push([three_calls(), answer()]);
        let mut r = Rotating::new(provider, store.clone());
        let agent = r.agent().await;
        agent.prompt("go").await.unwrap();
        let id = agent.session_id().clone();
        let log = store.load(&id, LoadRange::default()).await.unwrap().events;
        r.close().await;
        let first = log
            .iter()
            .position(|e| matches!(e.payload, EventPayload::UserMessage(_)))
            .unwrap();
        batches(&log[first..])
    });
    assert_eq!(
        sample.iter().map(Vec::len).collect::<Vec<_>>(),
        [1, 3, 2, 2, 2, 1, 1],
        "user, 3 tool.use, 3 × (decision + result), answer, result"
    );

    for (name, durability) in [
        ("turn_overhead_os", Durability::Os),
        ("turn_overhead_fsync", Durability::Fsync),
    ] {
        let store = rt.block_on(open_store(&tmp.join(name), durability));
        let provider = Arc::new(Replay::default());
        let mut r = Rotating::new(provider.clone(), store);
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let agent = r.agent().await;
                        provider.push([three_calls(), answer()]);
                        let start = Instant::now();
                        let result = agent.prompt("go").await.unwrap();
                        total += start.elapsed();
                        assert_eq!((result.turns, result.stop_reason.as_str()), (2, "end_turn"));
                    }
                    total
                })
            });
        });
        rt.block_on(r.close());

        let base = name.replace("turn_overhead", "turn_baseline_direct_calls_and_appends");
        let store = rt.block_on(open_store(&tmp.join(&base), durability));
        let echo: Vec<Echo> = (0..3).map(|i| Echo(format!("Echo{i}"))).collect();
        let ctx = ToolContext::new(tmp, "bench", "toolu_bench");
        let mut session: Option<SessionId> = None;
        let mut n = 0u64;
        g.bench_function(&base, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        if n.is_multiple_of(PROMPTS_PER_SESSION) {
                            if let Some(old) = session.take() {
                                store.close(&old).await.unwrap();
                            }
                            let meta = store.create(NewSession::default()).await.unwrap();
                            session = Some(meta.id);
                        }
                        n += 1;
                        let id = session.as_ref().unwrap();
                        let start = Instant::now();
                        let outputs = futures_util::future::join_all(
                            echo.iter()
                                .enumerate()
                                .map(|(i, t)| t.call(json!({"text": format!("call {i}")}), &ctx)),
                        )
                        .await;
                        for batch in &sample {
                            store
                                .append(id, batch.iter().map(fresh).collect())
                                .await
                                .unwrap();
                        }
                        total += start.elapsed();
                        black_box(outputs);
                    }
                    total
                })
            });
        });
        if let Some(old) = session.take() {
            rt.block_on(store.close(&old)).unwrap();
        }
    }
    g.finish();
}

/// A provider whose stream stamps the instant right before it yields its first text delta.
struct Stamping {
    stamp: Arc<Mutex<Option<Instant>>>,
    /// Pause once after the first delta (the next bytes are still in flight).
    pause: bool,
}

impl Stamping {
    fn new(pause: bool) -> Self {
        Self {
            stamp: Arc::default(),
            pause,
        }
    }

    fn take(&self) -> Instant {
        self.stamp
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap()
    }
}

#[async_trait::async_trait]
impl Provider for Stamping {
    fn name(&self) -> &str {
        "stamping"
    }

    async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, ProviderError> {
        let stamp = Arc::clone(&self.stamp);
        let first = futures_util::stream::once(async move {
            *stamp.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            Ok(StreamEvent::TextDelta("Hello".into()))
        });
        // `Pending` once (waking itself at once), yielding nothing.
        let pause = futures_util::stream::iter(self.pause.then_some(()))
            .then(|()| tokio::task::yield_now())
            .filter_map(|()| async { None });
        let rest = futures_util::stream::iter([
            Ok(StreamEvent::TextDelta(", world.".into())),
            Ok(StreamEvent::Done(ModelResponse {
                id: None,
                model: Some("stamping".into()),
                content: vec![ContentBlock::text("Hello, world.")],
                stop_reason: StopReason::EndTurn,
                usage: Usage::default(),
            })),
        ]);
        Ok(Box::pin(first.chain(pause).chain(rest)))
    }
}

fn latency_benches(c: &mut Criterion, rt: &tokio::runtime::Runtime, tmp: &Path) {
    let mut g = c.benchmark_group("agent");
    for (name, pause) in [
        ("first_event_latency", true),
        ("first_event_latency_answer_ready", false),
    ] {
        let store = rt.block_on(open_store(&tmp.join(name), Durability::Os));
        let provider = Arc::new(Stamping::new(pause));
        let mut r = Rotating::new(provider.clone(), store);
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let agent = r.agent().await;
                        let mut events = Box::pin(agent.query("hi"));
                        let mut seen: Option<Instant> = None;
                        let mut text = String::new();
                        while let Some(e) = events.next().await {
                            if let AgentEvent::TextDelta(d) = e.unwrap() {
                                seen.get_or_insert_with(Instant::now);
                                text.push_str(&d);
                            }
                        }
                        drop(events);
                        assert_eq!(text, "Hello, world.");
                        total += seen.unwrap().duration_since(provider.take());
                    }
                    total
                })
            });
        });
        rt.block_on(r.close());
    }

    let provider = Stamping::new(true);
    let request = ModelRequest::new("stamping", vec![Message::user("hi")]);
    g.bench_function("first_event_baseline_bare_stream", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut stream = provider.stream(&request).await.unwrap();
                    let first = stream.next().await;
                    let seen = Instant::now();
                    assert!(matches!(first, Some(Ok(StreamEvent::TextDelta(_)))));
                    total += seen.duration_since(provider.take());
                    while stream.next().await.is_some() {}
                }
                total
            })
        });
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime();
    turn_benches(c, &rt, tmp.path());
    latency_benches(c, &rt, tmp.path());
}

criterion_group!(agent, benches);
criterion_main!(agent);
