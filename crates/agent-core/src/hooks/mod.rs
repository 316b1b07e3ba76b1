//! Lifecycle hooks, compatible with Claude Code's: existing hook scripts run unchanged, and
//! embedders register in-process hooks beside them.
//!
//! # The model
//! - [`HookEvent`]: 31 events (document 000's 23 plus Claude Code's newer ones), each knowing
//!   what its matcher tests, what exit code 2 does and which JSON decisions it reads.
//! - [`HookInput`]: the common fields (`session_id`, `transcript_path`, `cwd`,
//!   `permission_mode`, `hook_event_name`) plus the event's own, typed, and as wire JSON.
//! - [`HooksConfig`]: the `hooks` blocks of settings files and plugin `hooks/hooks.json` files,
//!   each handler carrying its source (`file#hooks.PreToolUse[0].hooks[1]`), and the
//!   [`HookEnvironment`] (`hookEnvironment`: whether secrets are scrubbed from hooks'
//!   environment).
//! - [`HookRegistry`]: function hooks and configured `command` / `http` handlers (plus
//!   `prompt` / `agent` through a [`HookExtension`] a host provides); [`HookRegistry::execute`]
//!   runs every matching hook concurrently and returns a [`HookExecution`]: one merged
//!   [`HookOutcome`] (deny > defer > ask > allow, any block wins, deterministic) and each
//!   hook's [`HookRunResult`].
//! - Command hooks run in their own process group; when a run ends (exit or timeout) every
//!   process it started is killed, on Linux also those that left the group or the session
//!   (the runtime is a child subreaper while hooks run and scans `/proc`; `tree.rs`).
//! - [`protocol`]: the exit-code and stdout rules (exit 0 JSON or text, exit 2 blocks, anything
//!   else fails open unless `"onFailure": "block"`), as pure functions.
//! - [`check_tool_call`] and [`HookPermissionRequests`]: the hooks' place in the permission
//!   engine (steps 1, 6 and 9). A hook can tighten a decision, never loosen a deny or ask rule.
//!
//! ```
//! use agent_core::hooks::{HookContext, HookEvent, HookRegistry, HooksConfig, Decision};
//! use agent_core::settings::Settings;
//! use serde_json::json;
//! use std::path::Path;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let settings = Settings::from_value(json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
//!     "hooks": [{"type": "command", "command": "echo 'no network here' >&2; exit 2",
//!                "if": "Bash(curl *)"}]}]}}), "example", Path::new("/"), Path::new("/"))?;
//! let mut hooks = HookRegistry::new();
//! hooks.load(&HooksConfig::from_settings(&settings)?)?;
//! let ctx = HookContext::new("s1", std::env::temp_dir());
//! let run = hooks.execute(ctx.pre_tool_use("Bash", json!({"command": "ls && curl x"}), None)).await;
//! assert_eq!(run.outcome.decision, Decision::Deny);
//! assert_eq!(run.outcome.reason.as_deref(), Some("no network here"));
//! let run = hooks.execute(ctx.pre_tool_use("Bash", json!({"command": "ls"}), None)).await;
//! assert!(run.runs.is_empty()); // the `if` rule did not match: the hook did not run
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod caps;
mod command;
mod condition;
mod config;
mod entry;
mod environment;
mod event;
mod extension;
mod gate;
mod http;
mod input;
mod load;
mod matcher;
mod outcome;
mod output;
pub mod protocol;
mod registry;
mod run;

pub use caps::HookOutputCaps;
pub use config::HookShell;
pub use config::{ConfiguredHook, HandlerConfig, HookConfigError, HookSource, HooksConfig};
pub use entry::{BoxError, HookId};
pub(crate) use environment::HOOK_ENVIRONMENT_KEY;
pub use environment::HookEnvironment;
pub(crate) use environment::parse as parse_hook_environment;
pub use event::{ALL_EVENTS, DecisionControl, ExitTwo, HookEvent, UnknownEvent};
pub use extension::{ExtensionHook, HookExtension};
pub use gate::{GatedDecision, HookPermissionRequests, check_tool_call};
#[cfg(feature = "http")]
pub use http::ReqwestHookClient;
pub use http::{HookHttpClient, HttpHookReply, HttpHookRequest};
pub use input::{
    CompactInput, EventFields, HookContext, HookInput, InputError, NotificationInput,
    PermissionDeniedInput, PermissionRequestInput, PromptInput, SessionEndInput, SessionStartInput,
    StopInput, ToolFailureInput, ToolResultInput, ToolUseInput,
};
pub use matcher::Matcher;
pub use outcome::{Decision, HookOutcome};
pub use output::{
    HookNotification, HookOutput, HookSpecificOutput, PermissionDecisionValue,
    PermissionRequestDecision, TopLevelDecision,
};
pub use protocol::OnFailure;
pub use registry::{
    DEFAULT_TIMEOUT, HookExecution, HookInfo, HookLoadError, HookOptions, HookRegistry,
};
pub use run::HookRunResult;
