//! A registered hook: its id, matcher, `if` condition, handler (an in-process function, a
//! configured `command` / `http` handler, or an extension's) and dedup key; and the selection of
//! the registered hooks one input runs.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use super::condition::Condition;
use super::config::HandlerConfig;
use super::event::HookEvent;
use super::extension::{ExtensionHook, HookExtension};
use super::input::HookInput;
use super::matcher::Matcher;
use super::output::HookOutput;
use super::protocol::OnFailure;

/// An error an in-process hook returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the registry keeps of an in-process hook: its output boxed, so the run's state stays
/// small while five or fifty of them are polled together.
pub(super) type BoxedOutputFuture =
    Pin<Box<dyn Future<Output = Result<Box<HookOutput>, BoxError>> + Send>>;

pub(super) type HookFn = Arc<dyn Fn(Arc<HookInput>) -> BoxedOutputFuture + Send + Sync>;

/// Identifies a registered hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HookId(pub u64);

/// What runs when a hook runs.
pub(super) enum Handler {
    Function(HookFn),
    /// A `command` or `http` handler, as configured.
    Configured(HandlerConfig),
    Extension(Arc<dyn HookExtension>, ExtensionHook),
}

/// A registered hook, as the registry keeps it.
pub(super) struct Entry {
    pub(super) id: HookId,
    pub(super) event: HookEvent,
    pub(super) matcher_text: Option<Arc<str>>,
    pub(super) matcher: Matcher,
    pub(super) condition: Option<Condition>,
    pub(super) timeout: Duration,
    pub(super) on_failure: OnFailure,
    pub(super) is_async: bool,
    pub(super) handler: Handler,
    pub(super) kind: Arc<str>,
    pub(super) label: Arc<str>,
    pub(super) source: Arc<str>,
    pub(super) status_message: Option<String>,
    /// Identical handlers share a key and run once.
    pub(super) dedup: Option<String>,
    pub(super) plugin_root: Option<PathBuf>,
    pub(super) duplicate_of: Option<HookId>,
}

/// The hooks of `list` that run for `input`, in registration order: those whose matcher matches
/// (every hook on events without a matcher field) and whose `if` rule admits the input, an
/// identical configured handler only once.
pub(super) fn select<'a>(list: &'a [Arc<Entry>], input: &HookInput) -> Vec<&'a Arc<Entry>> {
    let value = input.matcher_value();
    let matcherless = input.event.matcher_field().is_none();
    let mut matched: Vec<&Arc<Entry>> = Vec::new();
    for e in list {
        if !(matcherless || e.matcher.matches(value)) {
            continue;
        }
        if let Some(c) = &e.condition
            && !c.admits(input)
        {
            continue;
        }
        if e.dedup.is_some() && matched.iter().any(|m| m.dedup == e.dedup) {
            continue;
        }
        matched.push(e);
    }
    matched
}
