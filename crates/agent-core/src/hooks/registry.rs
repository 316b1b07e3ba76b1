//! The registry: in-process function hooks and configured handlers, per event, and `execute`,
//! which runs every matching hook concurrently, each to completion, and merges their results in
//! registration order.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde_json::{Map, Value};
use tracing::Instrument;

use super::caps::OutputCaps;
use super::command::{self, CommandSpec};
use super::config::{ConfiguredHook, HandlerConfig, HooksConfig};
use super::environment::HookEnvironment;
use super::event::{ALL_EVENTS, HookEvent};
use super::http::{self, HookHttpClient, HttpHookRequest};
use super::input::HookInput;
use super::matcher::Matcher;
use super::outcome::{Decision, HookOutcome};
use super::output::{HookOutput, StdoutKind};
use super::protocol::{self, OnFailure, RawExit, RawRun};
use crate::events::HookRun;
use crate::permissions::rules::{Parsed, parse_rule};
use crate::permissions::{PermissionEngine, RuleList, ToolCall};

/// The default per-hook timeout (DESIGN.md; Claude Code has used 600 s since v2.1.3).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// An error an in-process hook returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the registry keeps of an in-process hook: its output boxed, so the run's state stays
/// small while five or fifty of them are polled together.
type BoxedOutputFuture = Pin<Box<dyn Future<Output = Result<Box<HookOutput>, BoxError>> + Send>>;

type HookFn = Arc<dyn Fn(Arc<HookInput>) -> BoxedOutputFuture + Send + Sync>;

/// Runs handler kinds the registry cannot run itself (`prompt`, `agent`, `mcp_tool`):
/// agent-sessions supplies one that asks the model. Until a host registers one for a kind,
/// configuring a hook of that kind is an error at load time.
#[async_trait::async_trait]
pub trait HookExtension: Send + Sync {
    /// Runs one hook; an `Err` is a hook failure (non-blocking unless `onFailure: "block"`).
    async fn run(&self, hook: &ExtensionHook, input: &HookInput) -> Result<HookOutput, String>;
}

/// A hook handled by a [`HookExtension`].
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionHook {
    /// `prompt`, `agent` or `mcp_tool`.
    pub kind: String,
    /// The handler object as configured (`prompt`, `model`, `server`, `tool`, ...).
    pub fields: Map<String, Value>,
    /// Its timeout.
    pub timeout: Duration,
}

/// Options of an in-process hook.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOptions {
    /// A matcher (§5.2); `None` matches everything.
    pub matcher: Option<String>,
    /// An `if` permission rule (tool events only).
    pub condition: Option<String>,
    /// The timeout (default [`DEFAULT_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// A name for results and logs (default `function#<id>`).
    pub name: Option<String>,
}

impl HookOptions {
    /// Options with a matcher.
    pub fn matching(matcher: impl Into<String>) -> Self {
        Self {
            matcher: Some(matcher.into()),
            ..Self::default()
        }
    }

    /// Sets the timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the `if` rule.
    #[must_use]
    pub fn condition(mut self, rule: impl Into<String>) -> Self {
        self.condition = Some(rule.into());
        self
    }

    /// Sets the name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Identifies a registered hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HookId(pub u64);

/// Occurs when a hook cannot be registered; names the hook's source and what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {problem}")]
pub struct HookLoadError {
    /// Where the hook came from (`file#key`, or `registered in code`).
    pub origin: String,
    /// What is wrong.
    pub problem: String,
}

/// What one hook did.
#[derive(Clone, Debug, PartialEq)]
pub struct HookRunResult {
    /// The hook's id.
    pub id: HookId,
    /// The command line, URL or name.
    pub label: Arc<str>,
    /// `function`, `command`, `http`, `prompt`, ...
    pub kind: Arc<str>,
    /// Where it was configured.
    pub source: Arc<str>,
    /// The matcher it was registered with.
    pub matcher: Option<Arc<str>>,
    /// The exit code (command hooks; 0 for a 2xx HTTP reply).
    pub exit_code: Option<i32>,
    /// How long it ran.
    pub duration: Duration,
    /// Whether it ran out of time (and, for commands, its process group was killed).
    pub timed_out: bool,
    /// What went wrong, if anything.
    pub error: Option<String>,
    /// Whether it ran in the background (`async`); it cannot block.
    pub is_async: bool,
    /// What it decided (boxed: results move through the concurrent join several times).
    pub outcome: Box<HookOutcome>,
}

impl HookRunResult {
    /// The `hook.run` event for the session log.
    pub fn to_event(&self, event: HookEvent) -> HookRun {
        let outcome = if self.timed_out {
            "timeout".to_owned()
        } else if self.error.is_some() && self.outcome.decision == Decision::None {
            "error".to_owned()
        } else {
            self.outcome.decision.as_str().to_owned()
        };
        HookRun {
            event: event.as_str().to_owned(),
            matcher: self.matcher.as_deref().map(str::to_owned),
            outcome,
            duration_ms: u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            command: Some(self.label.to_string()),
        }
    }
}

/// The result of [`HookRegistry::execute`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookExecution {
    /// The merged outcome.
    pub outcome: HookOutcome,
    /// Each matching hook's own result, in registration order.
    pub runs: Vec<HookRunResult>,
}

/// A registered hook, as [`HookRegistry::hooks`] lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct HookInfo {
    /// Its id.
    pub id: HookId,
    /// The event.
    pub event: HookEvent,
    /// `function`, `command`, `http`, ...
    pub kind: String,
    /// The command line, URL or name.
    pub label: String,
    /// Where it came from.
    pub source: String,
    /// The matcher.
    pub matcher: Option<String>,
    /// The `if` rule, and whether it parsed (an unparseable rule lets the hook run always).
    pub condition: Option<(String, bool)>,
    /// The timeout.
    pub timeout: Duration,
    /// Whether it runs in the background.
    pub is_async: bool,
    /// Whether a failure blocks.
    pub blocks_on_failure: bool,
    /// The spinner text.
    pub status_message: Option<String>,
    /// When an identical handler registered earlier runs instead of this one.
    pub duplicate_of: Option<HookId>,
}

struct Condition {
    text: String,
    /// `None` when the rule does not parse: the hook then always runs (fail open, §5.1).
    engine: Option<PermissionEngine>,
}

impl Condition {
    fn new(text: &str, cwd: &Path, home: &Path) -> (Self, Option<String>) {
        let built = match parse_rule(text, RuleList::Deny) {
            Ok(Parsed::Rule(..)) => PermissionEngine::builder(cwd, home)
                .rule(RuleList::Deny, text)
                .and_then(|b| b.build().map_err(|e| e.to_string())),
            Ok(Parsed::Ignored(why)) => Err(why),
            Err(e) => Err(e),
        };
        match built {
            Ok(engine) => (
                Self {
                    text: text.to_owned(),
                    engine: Some(engine),
                },
                None,
            ),
            Err(e) => (
                Self {
                    text: text.to_owned(),
                    engine: None,
                },
                Some(format!(
                    "`if` rule {text:?} does not parse ({e}); the hook runs on every call (fail open)"
                )),
            ),
        }
    }

    /// Whether the hook runs for `input`: never on events that are not about one tool call;
    /// on tool events when the rule matches, or when the call cannot be analysed.
    fn admits(&self, input: &HookInput) -> bool {
        if !input.event.is_tool_event() {
            return false;
        }
        let Some(engine) = &self.engine else {
            return true;
        };
        let (Some(tool), Some(tool_input)) = (input.tool_name(), input.tool_input()) else {
            return true;
        };
        let call = ToolCall::new(tool, tool_input.clone());
        engine.deny_rules_match(&call).unwrap_or(true)
    }
}

enum Handler {
    Function(HookFn),
    /// A `command` or `http` handler, as configured.
    Configured(HandlerConfig),
    Extension(Arc<dyn HookExtension>, ExtensionHook),
}

struct Entry {
    id: HookId,
    event: HookEvent,
    matcher_text: Option<Arc<str>>,
    matcher: Matcher,
    condition: Option<Condition>,
    timeout: Duration,
    on_failure: OnFailure,
    is_async: bool,
    handler: Handler,
    kind: Arc<str>,
    label: Arc<str>,
    source: Arc<str>,
    status_message: Option<String>,
    /// Identical handlers share a key and run once.
    dedup: Option<String>,
    plugin_root: Option<PathBuf>,
    duplicate_of: Option<HookId>,
}

/// What every run needs besides its entry; shared with background (`async`) runs.
#[derive(Clone)]
struct Runner {
    http: Option<Arc<dyn HookHttpClient>>,
    caps: OutputCaps,
    project_dir: PathBuf,
    environment: HookEnvironment,
}

/// The hooks of a session. Register everything first (`&mut self`), then share it (`Arc`) and
/// call [`Self::execute`] from anywhere; it needs a tokio runtime with the time, I/O and
/// process drivers enabled.
///
/// ```
/// use agent_core::hooks::{HookContext, HookOptions, HookOutput, HookRegistry, HookEvent, Decision};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut hooks = HookRegistry::new();
/// hooks.register_fn(HookEvent::PreToolUse, HookOptions::matching("Bash"), |input| async move {
///     let cmd = input.tool_input().and_then(|i| i["command"].as_str()).unwrap_or("");
///     Ok(if cmd.contains("rm -rf") { HookOutput::deny("no rm -rf here") } else { HookOutput::default() })
/// })?;
/// let ctx = HookContext::new("session-1", "/repo");
/// let run = hooks.execute(ctx.pre_tool_use("Bash", json!({"command": "rm -rf /"}), None)).await;
/// assert_eq!(run.outcome.decision, Decision::Deny);
/// assert_eq!(run.outcome.reason.as_deref(), Some("no rm -rf here"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct HookRegistry {
    entries: Vec<Vec<Arc<Entry>>>,
    next_id: u64,
    runner: Arc<Runner>,
    extensions: HashMap<String, Arc<dyn HookExtension>>,
    home: PathBuf,
    default_timeout: Duration,
    disabled_by: Option<PathBuf>,
    warnings: Vec<String>,
    pending: Mutex<Vec<tokio::task::JoinHandle<HookRunResult>>>,
}

impl std::fmt::Debug for HookRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRegistry")
            .field("hooks", &self.entries.iter().map(Vec::len).sum::<usize>())
            .field("disabled_by", &self.disabled_by)
            .finish_non_exhaustive()
    }
}

impl Default for HookRegistry {
    fn default() -> Self {
        Self::new()
    }
}

fn event_index(event: HookEvent) -> usize {
    ALL_EVENTS.iter().position(|e| *e == event).unwrap_or(0)
}

impl HookRegistry {
    /// An empty registry: project directory = the process's current directory, default timeout
    /// 60 s, output caps of 10,000 characters spilled under the temporary directory.
    pub fn new() -> Self {
        let project_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map_or_else(|| PathBuf::from("/"), PathBuf::from);
        Self {
            entries: ALL_EVENTS.iter().map(|_| Vec::new()).collect(),
            next_id: 0,
            runner: Arc::new(Runner {
                http: None,
                caps: OutputCaps::default(),
                project_dir,
                environment: HookEnvironment::default(),
            }),
            extensions: HashMap::new(),
            home,
            default_timeout: DEFAULT_TIMEOUT,
            disabled_by: None,
            warnings: Vec::new(),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// The shared run settings, copied first if a background run still holds them.
    fn runner_mut(&mut self) -> &mut Runner {
        Arc::make_mut(&mut self.runner)
    }

    /// Sets `CLAUDE_PROJECT_DIR` (and the directory `if` rules resolve paths against). Set it
    /// before loading hooks.
    pub fn set_project_dir(&mut self, dir: impl Into<PathBuf>) {
        self.runner_mut().project_dir = dir.into();
    }

    /// Sets the home directory `~` in `if` rules means.
    pub fn set_home(&mut self, home: impl Into<PathBuf>) {
        self.home = home.into();
    }

    /// Sets the timeout of hooks that do not set one.
    pub fn set_default_timeout(&mut self, timeout: Duration) {
        self.default_timeout = timeout;
    }

    /// Sets the output caps.
    pub fn set_output_caps(&mut self, caps: OutputCaps) {
        self.runner_mut().caps = caps;
    }

    /// Sets the client `http` hooks use.
    pub fn set_http_client(&mut self, client: Arc<dyn HookHttpClient>) {
        self.runner_mut().http = Some(client);
    }

    /// Sets what environment hooks see (the `hookEnvironment` setting; [`Self::load`] sets it
    /// from the settings when they say anything about it). Set it before loading hooks, so that
    /// `http` hooks whose `allowedEnvVars` it withholds are warned about.
    pub fn set_environment(&mut self, environment: HookEnvironment) {
        self.runner_mut().environment = environment;
    }

    /// What environment hooks see.
    pub fn environment(&self) -> &HookEnvironment {
        &self.runner.environment
    }

    /// Lets `kind` hooks (`prompt`, `agent`, `mcp_tool`) run through `extension`.
    pub fn set_extension(&mut self, kind: &str, extension: Arc<dyn HookExtension>) {
        self.extensions.insert(kind.to_owned(), extension);
    }

    /// The file whose `disableAllHooks` turned every hook off.
    pub fn disabled_by(&self) -> Option<&Path> {
        self.disabled_by.as_deref()
    }

    /// What was skipped or is suspicious (unparseable `if` rules, ignored matchers, ...).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn next(&mut self) -> HookId {
        self.next_id += 1;
        HookId(self.next_id)
    }

    /// Registers every hook of `config` (after any registered before).
    ///
    /// # Errors
    /// [`HookLoadError`] for a matcher that does not compile, or a handler kind this host
    /// cannot run (`prompt`/`agent`/`mcp_tool` without an extension, `http` without a client).
    /// Nothing of `config` is registered then.
    pub fn load(&mut self, config: &HooksConfig) -> Result<(), HookLoadError> {
        let previous = self.runner.environment.clone();
        if config.environment.set_by.is_some() || config.environment.scrub_secrets {
            self.runner_mut().environment = config.environment.clone();
        }
        let mut staged = Vec::with_capacity(config.hooks.len());
        for hook in &config.hooks {
            match self.entry_for(hook) {
                Ok(e) => staged.push(e),
                Err(e) => {
                    self.runner_mut().environment = previous;
                    return Err(e);
                }
            }
        }
        self.warnings.extend(config.warnings.iter().cloned());
        if let Some(d) = &config.disabled_by {
            self.disabled_by = Some(d.clone());
        }
        for e in staged {
            self.push(e);
        }
        Ok(())
    }

    fn entry_for(&mut self, hook: &ConfiguredHook) -> Result<Entry, HookLoadError> {
        let source = hook.source.to_string();
        let err = |problem: String| HookLoadError {
            origin: source.clone(),
            problem,
        };
        let matcher = Matcher::new(hook.matcher.as_deref()).map_err(&err)?;
        let timeout = hook.timeout.unwrap_or(self.default_timeout);
        let (handler, dedup) = match &hook.handler {
            HandlerConfig::Command {
                command,
                args,
                shell,
            } => (
                Handler::Configured(hook.handler.clone()),
                format!(
                    "command\0{command}\0{:?}\0{shell:?}\0{:?}",
                    args, hook.source.plugin_root
                ),
            ),
            HandlerConfig::Http {
                url,
                headers,
                allowed_env_vars,
            } => {
                self.ensure_http_client().map_err(&err)?;
                for name in allowed_env_vars {
                    if self.runner.environment.withholds(name) {
                        self.warnings.push(format!(
                            "{source}: `allowedEnvVars` names {name}, which hookEnvironment.scrubSecrets withholds, so its headers read it as empty; add it to hookEnvironment.passthrough to send it"
                        ));
                    }
                }
                (
                    Handler::Configured(hook.handler.clone()),
                    format!("http\0{url}\0{headers:?}"),
                )
            }
            HandlerConfig::Extension { kind, fields } => {
                let Some(ext) = self.extensions.get(kind) else {
                    return Err(err(format!(
                        "hook type \"{kind}\" is not supported by this host: {kind} hooks are run by a host with a model (agent-sessions); use a \"command\" or \"http\" hook here"
                    )));
                };
                (
                    Handler::Extension(
                        ext.clone(),
                        ExtensionHook {
                            kind: kind.clone(),
                            fields: fields.clone(),
                            timeout,
                        },
                    ),
                    format!("{kind}\0{}", Value::Object(fields.clone())),
                )
            }
        };
        let condition = hook.condition.as_deref().map(|text| {
            let (c, warning) = Condition::new(text, &self.runner.project_dir, &self.home);
            if let Some(w) = warning {
                self.warnings.push(format!("{source}: {w}"));
            }
            c
        });
        if condition.is_some() && !hook.event.is_tool_event() {
            self.warnings.push(format!(
                "{source}: `if` on {} means this hook never runs (`if` applies to tool events only)",
                hook.event
            ));
        }
        Ok(Entry {
            id: self.next(),
            event: hook.event,
            matcher_text: hook.matcher.as_deref().map(Arc::from),
            matcher,
            condition,
            timeout,
            on_failure: hook.on_failure,
            is_async: hook.is_async,
            kind: hook.handler.kind().into(),
            label: hook.handler.label().into(),
            handler,
            source: source.into(),
            status_message: hook.status_message.clone(),
            dedup: Some(dedup),
            plugin_root: hook.source.plugin_root.clone(),
            duplicate_of: None,
        })
    }

    fn ensure_http_client(&mut self) -> Result<(), String> {
        if self.runner.http.is_some() {
            return Ok(());
        }
        #[cfg(feature = "http")]
        {
            let client = http::ReqwestHookClient::new()?;
            self.runner_mut().http = Some(Arc::new(client));
            Ok(())
        }
        #[cfg(not(feature = "http"))]
        Err("http hooks need an HTTP client: enable agent-core's `http` feature or call HookRegistry::set_http_client".into())
    }

    fn push(&mut self, mut e: Entry) {
        let list = &mut self.entries[event_index(e.event)];
        if let Some(key) = &e.dedup {
            e.duplicate_of = list
                .iter()
                .find(|o| o.dedup.as_ref() == Some(key))
                .map(|o| o.id);
        }
        list.push(Arc::new(e));
    }

    /// Registers an in-process hook. It receives the input and returns a [`HookOutput`]; an
    /// error, a panic or a timeout blocks on PreToolUse and UserPromptSubmit (fail closed) and
    /// is a notice elsewhere.
    ///
    /// # Errors
    /// [`HookLoadError`] when the matcher does not compile.
    pub fn register_fn<F, Fut>(
        &mut self,
        event: HookEvent,
        options: HookOptions,
        f: F,
    ) -> Result<HookId, HookLoadError>
    where
        F: Fn(Arc<HookInput>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HookOutput, BoxError>> + Send + 'static,
    {
        let matcher =
            Matcher::new(options.matcher.as_deref()).map_err(|problem| HookLoadError {
                origin: "registered in code".into(),
                problem,
            })?;
        let id = self.next();
        let label = options.name.unwrap_or_else(|| format!("function#{}", id.0));
        let condition = options.condition.as_deref().map(|text| {
            let (c, warning) = Condition::new(text, &self.runner.project_dir, &self.home);
            if let Some(w) = warning {
                self.warnings.push(format!("{label}: {w}"));
            }
            c
        });
        let f: HookFn = Arc::new(move |input| {
            let fut = f(input);
            Box::pin(async move { fut.await.map(Box::new) }) as BoxedOutputFuture
        });
        self.push(Entry {
            id,
            event,
            matcher_text: options.matcher.as_deref().map(Arc::from),
            matcher,
            condition,
            timeout: options.timeout.unwrap_or(self.default_timeout),
            on_failure: if event.in_process_fails_closed() {
                OnFailure::Block
            } else {
                OnFailure::Continue
            },
            is_async: false,
            handler: Handler::Function(f),
            kind: "function".into(),
            label: label.into(),
            source: "registered in code".into(),
            status_message: None,
            dedup: None,
            plugin_root: None,
            duplicate_of: None,
        });
        Ok(id)
    }

    /// Removes a hook. Returns whether it existed.
    pub fn unregister(&mut self, id: HookId) -> bool {
        for list in &mut self.entries {
            if let Some(i) = list.iter().position(|e| e.id == id) {
                list.remove(i);
                return true;
            }
        }
        false
    }

    /// Every registered hook of `event`, in registration order.
    pub fn hooks(&self, event: HookEvent) -> Vec<HookInfo> {
        self.entries[event_index(event)]
            .iter()
            .map(|e| HookInfo {
                id: e.id,
                event: e.event,
                kind: e.kind.to_string(),
                label: e.label.to_string(),
                source: e.source.to_string(),
                matcher: e.matcher_text.as_deref().map(str::to_owned),
                condition: e
                    .condition
                    .as_ref()
                    .map(|c| (c.text.clone(), c.engine.is_some())),
                timeout: e.timeout,
                is_async: e.is_async,
                blocks_on_failure: e.on_failure == OnFailure::Block,
                status_message: e.status_message.clone(),
                duplicate_of: e.duplicate_of,
            })
            .collect()
    }

    /// Whether any hook is registered for `event` (and hooks are not disabled).
    pub fn has_hooks(&self, event: HookEvent) -> bool {
        self.disabled_by.is_none() && !self.entries[event_index(event)].is_empty()
    }

    /// Runs every hook matching `input` concurrently, each to completion (or its timeout), and
    /// merges their outcomes in registration order. Identical configured handlers run once.
    /// Background (`async`) hooks are started and left running; collect them with
    /// [`Self::wait_async`].
    pub async fn execute(&self, input: HookInput) -> HookExecution {
        let event = input.event;
        let list = &self.entries[event_index(event)];
        if self.disabled_by.is_some() || list.is_empty() {
            return HookExecution::default();
        }
        let value = input.matcher_value();
        let matcherless = event.matcher_field().is_none();
        let mut matched: Vec<&Arc<Entry>> = Vec::new();
        for e in list {
            if !(matcherless || e.matcher.matches(value)) {
                continue;
            }
            if let Some(c) = &e.condition
                && !c.admits(&input)
            {
                continue;
            }
            if e.dedup.is_some() && matched.iter().any(|m| m.dedup == e.dedup) {
                continue;
            }
            matched.push(e);
        }
        if matched.is_empty() {
            return HookExecution::default();
        }
        let json: Option<Arc<[u8]>> = matched
            .iter()
            .any(|e| !matches!(e.handler, Handler::Function(_)))
            .then(|| Arc::from(serde_json::to_vec(&input.to_json()).unwrap_or_default()));
        let input = Arc::new(input);
        let mut sync = Vec::with_capacity(matched.len());
        for e in matched {
            if e.is_async {
                let runner = self.runner.clone();
                let entry = Arc::clone(e);
                let input = input.clone();
                let json = json.clone();
                let handle = tokio::spawn(async move {
                    let mut r = runner.run(&entry, &input, json.as_deref()).await;
                    r.is_async = true;
                    // A background hook cannot block or change the call.
                    r.outcome.decision = Decision::None;
                    r.outcome.reason = None;
                    r.outcome.updated_input = None;
                    r.outcome.permission_request = None;
                    r
                });
                self.pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(handle);
            } else {
                sync.push(self.runner.run(e, &input, json.as_deref()));
            }
        }
        let runs = futures_util::future::join_all(sync).await;
        let outcome = HookOutcome::merge(runs.iter().map(|r| &*r.outcome));
        HookExecution { outcome, runs }
    }

    /// Waits for every background (`async`) hook started so far and returns their results;
    /// their context and messages are for the next turn.
    pub async fn wait_async(&self) -> Vec<HookRunResult> {
        let handles: Vec<_> =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            if let Ok(r) = h.await {
                out.push(r);
            }
        }
        out
    }
}

fn raw_error(event: HookEvent, raw: &RawRun, timeout: Duration) -> Option<String> {
    let first = raw.stderr.trim().lines().next().unwrap_or("").trim();
    let with = |s: String| {
        if first.is_empty() {
            s
        } else {
            format!("{s}: {first}")
        }
    };
    match &raw.exit {
        RawExit::TimedOut => Some(format!("timed out after {}", secs(timeout))),
        RawExit::Failed(m) => Some(m.clone()),
        RawExit::Signal(s) => Some(with(format!("killed by signal {s}"))),
        RawExit::Code(0) => match StdoutKind::classify(&raw.stdout, event) {
            StdoutKind::SchemaInvalid(why) => Some(format!("invalid JSON output: {why}")),
            _ => None,
        },
        RawExit::Code(2) => None,
        RawExit::Code(c) => Some(with(format!("exit {c}"))),
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

impl Runner {
    fn env(&self, entry: &Entry, input: &HookInput) -> Vec<(String, String)> {
        let cwd = input.cwd.to_string_lossy().into_owned();
        let project = self.project_dir.to_string_lossy().into_owned();
        let mut env = vec![
            ("HOOK_EVENT".to_owned(), input.event.as_str().to_owned()),
            ("HOOK_SESSION_ID".to_owned(), input.session_id.clone()),
            ("HOOK_CWD".to_owned(), cwd),
            ("CLAUDE_PROJECT_DIR".to_owned(), project),
            (
                "CLAUDE_CODE_SESSION_ID".to_owned(),
                input.session_id.clone(),
            ),
        ];
        if let Some(t) = input.tool_name() {
            env.push(("HOOK_TOOL_NAME".to_owned(), t.to_owned()));
        }
        if let Some(root) = &entry.plugin_root {
            env.push((
                "CLAUDE_PLUGIN_ROOT".to_owned(),
                root.to_string_lossy().into_owned(),
            ));
        }
        env
    }

    fn span(entry: &Entry, event: HookEvent) -> tracing::Span {
        tracing::info_span!(
            "hook",
            event = event.as_str(),
            kind = &*entry.kind,
            hook = &*entry.label,
            source = &*entry.source
        )
    }

    /// Runs one hook. In-process hooks run in a small future; process and network hooks in a
    /// boxed one, so that a batch of in-process hooks stays cheap to poll and move.
    async fn run(
        &self,
        entry: &Entry,
        input: &Arc<HookInput>,
        json: Option<&[u8]>,
    ) -> HookRunResult {
        match &entry.handler {
            Handler::Function(f) => {
                let span = Self::span(entry, input.event);
                self.run_function(entry, f, input).instrument(span).await
            }
            _ => {
                let span = Self::span(entry, input.event);
                Box::pin(self.run_external(entry, input, json).instrument(span)).await
            }
        }
    }

    async fn run_function(
        &self,
        entry: &Entry,
        f: &HookFn,
        input: &Arc<HookInput>,
    ) -> HookRunResult {
        let event = input.event;
        let start = Instant::now();
        let label: &str = &entry.label;
        let mut fut = std::pin::pin!(AssertUnwindSafe(f(input.clone())).catch_unwind());
        // Most in-process hooks finish on their first poll: the timer is armed only if not.
        let first = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await;
        let result = match first {
            Poll::Ready(r) => Ok(r),
            Poll::Pending => tokio::time::timeout(entry.timeout, fut).await,
        };
        let (what, timed_out) = match result {
            Ok(Ok(Ok(out))) => match out.validate(event) {
                Ok(()) => {
                    let o = protocol::from_output(event, label, &out);
                    return self.finish(entry, o, None, false, None, start);
                }
                Err(e) => (format!("returned an invalid output: {e}"), false),
            },
            Ok(Ok(Err(e))) => (format!("returned an error: {e}"), false),
            Ok(Err(_)) => ("panicked".to_owned(), false),
            Err(_) => (format!("timed out after {}", secs(entry.timeout)), true),
        };
        let o = protocol::fail(event, entry.on_failure, label, what.clone());
        self.finish(entry, o, None, timed_out, Some(what), start)
    }

    async fn run_external(
        &self,
        entry: &Entry,
        input: &Arc<HookInput>,
        json: Option<&[u8]>,
    ) -> HookRunResult {
        let event = input.event;
        let start = Instant::now();
        let label: &str = &entry.label;
        let body = json.unwrap_or_default();
        let raw = match &entry.handler {
            Handler::Function(f) => return self.run_function(entry, f, input).await,
            Handler::Extension(ext, hook) => {
                let (outcome, timed_out, error) =
                    match tokio::time::timeout(entry.timeout, ext.run(hook, input)).await {
                        Ok(Ok(out)) => match out.validate(event) {
                            Ok(()) => (protocol::from_output(event, label, &out), false, None),
                            Err(e) => {
                                let what = format!("returned an invalid output: {e}");
                                let o =
                                    protocol::fail(event, entry.on_failure, label, what.clone());
                                (o, false, Some(what))
                            }
                        },
                        Ok(Err(e)) => {
                            let what = format!("failed: {e}");
                            let o = protocol::fail(event, entry.on_failure, label, what.clone());
                            (o, false, Some(what))
                        }
                        Err(_) => {
                            let what = format!("timed out after {}", secs(entry.timeout));
                            let o = protocol::fail(event, entry.on_failure, label, what.clone());
                            (o, true, Some(what))
                        }
                    };
                return self.finish(entry, outcome, None, timed_out, error, start);
            }
            Handler::Configured(HandlerConfig::Command {
                command,
                args,
                shell,
            }) => {
                let env = self.env(entry, input);
                let mut subs = vec![(
                    "CLAUDE_PROJECT_DIR",
                    self.project_dir.to_string_lossy().into_owned(),
                )];
                if let Some(root) = &entry.plugin_root {
                    subs.push(("CLAUDE_PLUGIN_ROOT", root.to_string_lossy().into_owned()));
                }
                let spec = CommandSpec {
                    command,
                    args: args.as_deref(),
                    shell: *shell,
                    cwd: &input.cwd,
                    env: &env,
                    environment: &self.environment,
                    substitutions: &subs,
                };
                command::run(&spec, body, entry.timeout).await
            }
            Handler::Configured(HandlerConfig::Http {
                url,
                headers,
                allowed_env_vars,
            }) => self.post(entry, url, headers, allowed_env_vars, body).await,
            Handler::Configured(HandlerConfig::Extension { kind, .. }) => RawRun {
                exit: RawExit::Failed(format!("no extension runs \"{kind}\" hooks")),
                stdout: String::new(),
                stderr: String::new(),
            },
        };
        let outcome = protocol::interpret(event, entry.on_failure, label, &raw);
        let code = match raw.exit {
            RawExit::Code(c) => Some(c),
            _ => None,
        };
        let error = raw_error(event, &raw, entry.timeout);
        self.finish(
            entry,
            outcome,
            code,
            raw.exit == RawExit::TimedOut,
            error,
            start,
        )
    }

    /// One HTTP hook request, as a raw run (a 2xx reply is exit 0 with the body as stdout).
    async fn post(
        &self,
        entry: &Entry,
        url: &str,
        headers: &[(String, String)],
        allowed_env_vars: &[String],
        body: &[u8],
    ) -> RawRun {
        let failed = |exit: RawExit| RawRun {
            exit,
            stdout: String::new(),
            stderr: String::new(),
        };
        let Some(client) = &self.http else {
            return failed(RawExit::Failed("no HTTP client is configured".into()));
        };
        // `allowedEnvVars` opens a variable to the headers; scrubbing closes secrets again
        // unless they are passed through.
        let lookup = |name: &str| {
            if self.environment.withholds(name) {
                None
            } else {
                std::env::var(name).ok()
            }
        };
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.clone(), http::interpolate(v, allowed_env_vars, &lookup)))
            .collect();
        let req = HttpHookRequest {
            url,
            headers: &headers,
            body,
            timeout: entry.timeout,
            max_body_bytes: http::MAX_BODY_BYTES,
        };
        match tokio::time::timeout(entry.timeout, client.post(req)).await {
            Ok(reply) => http::raw_from_reply(reply),
            Err(_) => failed(RawExit::TimedOut),
        }
    }

    fn finish(
        &self,
        entry: &Entry,
        mut outcome: HookOutcome,
        exit_code: Option<i32>,
        timed_out: bool,
        error: Option<String>,
        start: Instant,
    ) -> HookRunResult {
        outcome.additional_context = std::mem::take(&mut outcome.additional_context)
            .into_iter()
            .map(|c| self.caps.apply(c))
            .collect();
        outcome.system_message = outcome.system_message.take().map(|m| self.caps.apply(m));
        let duration = start.elapsed();
        tracing::debug!(
            decision = outcome.decision.as_str(),
            exit_code,
            timed_out,
            duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            error = error.as_deref(),
            "hook finished"
        );
        HookRunResult {
            id: entry.id,
            label: entry.label.clone(),
            kind: entry.kind.clone(),
            source: entry.source.clone(),
            matcher: entry.matcher_text.clone(),
            exit_code,
            duration,
            timed_out,
            error,
            is_async: entry.is_async,
            outcome: Box::new(outcome),
        }
    }
}
