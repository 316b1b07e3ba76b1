//! The registry: in-process function hooks and configured handlers, per event, and `execute`,
//! which runs every matching hook concurrently, each to completion, and merges their results in
//! registration order. Loading configured hooks is in `load.rs`, selecting the hooks an input
//! runs in `entry.rs`, running one hook in `run.rs`.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::caps::HookOutputCaps;
use super::condition::Condition;
use super::entry::{self, BoxError, BoxedOutputFuture, Entry, Handler, HookFn, HookId};
use super::environment::HookEnvironment;
use super::event::{ALL_EVENTS, HookEvent};
use super::extension::HookExtension;
use super::http::HookHttpClient;
use super::input::HookInput;
use super::matcher::Matcher;
use super::outcome::{Decision, HookOutcome};
use super::output::HookOutput;
use super::protocol::OnFailure;
use super::run::{HookRunResult, Runner};

/// The default per-hook timeout (DESIGN.md; Claude Code has used 600 s since v2.1.3).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// What a failure (an error, a panic, a timeout) does (default: block on PreToolUse and
    /// UserPromptSubmit, fail closed; a notice elsewhere).
    pub on_failure: Option<OnFailure>,
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

    /// Sets what a failure does.
    #[must_use]
    pub fn on_failure(mut self, on_failure: OnFailure) -> Self {
        self.on_failure = Some(on_failure);
        self
    }
}

/// Occurs when a hook cannot be registered; names the hook's source and what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {problem}")]
pub struct HookLoadError {
    /// Where the hook came from (`file#key`, or `registered in code`).
    pub origin: String,
    /// What is wrong.
    pub problem: String,
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
    pub(super) runner: Arc<Runner>,
    pub(super) extensions: HashMap<String, Arc<dyn HookExtension>>,
    pub(super) home: PathBuf,
    pub(super) default_timeout: Duration,
    pub(super) disabled_by: Option<PathBuf>,
    pub(super) warnings: Vec<String>,
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
                caps: HookOutputCaps::default(),
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
    pub(super) fn runner_mut(&mut self) -> &mut Runner {
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
    pub fn set_output_caps(&mut self, caps: HookOutputCaps) {
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

    pub(super) fn next(&mut self) -> HookId {
        self.next_id += 1;
        HookId(self.next_id)
    }

    pub(super) fn push(&mut self, mut e: Entry) {
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
            on_failure: options
                .on_failure
                .unwrap_or(if event.in_process_fails_closed() {
                    OnFailure::Block
                } else {
                    OnFailure::Continue
                }),
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
        let matched = entry::select(list, &input);
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
