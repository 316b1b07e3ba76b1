//! Running one registered hook: an in-process function, a command, an HTTP request or an
//! extension, each under its timeout, its result turned into a [`HookRunResult`] (the outcome by
//! the exit-code and stdout rules of [`protocol`], context and messages capped).

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use tracing::Instrument;

use super::caps::HookOutputCaps;
use super::command::{self, CommandSpec};
use super::config::HandlerConfig;
use super::entry::{Entry, Handler, HookFn, HookId};
use super::environment::HookEnvironment;
use super::event::HookEvent;
use super::http::{self, HookHttpClient, HttpHookRequest};
use super::input::HookInput;
use super::outcome::{Decision, HookOutcome};
use super::output::StdoutKind;
use super::protocol::{self, RawExit, RawRun};
use crate::events::HookRun;

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

/// What every run needs besides its entry; shared with background (`async`) runs.
#[derive(Clone)]
pub(super) struct Runner {
    pub(super) http: Option<Arc<dyn HookHttpClient>>,
    pub(super) caps: HookOutputCaps,
    pub(super) project_dir: PathBuf,
    pub(super) environment: HookEnvironment,
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
    pub(super) async fn run(
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
