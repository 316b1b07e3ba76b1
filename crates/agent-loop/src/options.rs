//! [`AgentOptions`]: what a run may do and how it manages its context.

use agent_store::SessionId;
use agent_store::recovery::ResumeOptions;

/// The share of the context window at which the conversation is compacted before the next
/// provider call (seed 003: 83.5 %).
pub const COMPACT_AT: f64 = 0.835;

/// The share of the context window one tool result may take; a larger result is replaced by
/// an error telling the model it was too large (seed 003: 80 %).
pub const TOOL_RESULT_BUDGET: f64 = 0.8;

/// Options of an [`super::Agent`]. `Default` gives a new session, 50 turns, 8,192 output
/// tokens, compaction at 83.5 % of the window and the 80 % tool-result rule.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The model name as the provider knows it.
    pub model: String,
    /// The system prompt (`None`: [`super::DEFAULT_SYSTEM_PROMPT`]).
    pub system_prompt: Option<String>,
    /// The most provider calls that may end in tool calls within one prompt; when they are used
    /// up, one last call without tools asks the model to summarise (stop reason `max_turns`).
    pub max_turns: u32,
    /// The most tokens one answer may have.
    pub max_tokens: u32,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Compact when the context reaches this share of the window.
    pub compact_at: f64,
    /// The share of the window one tool result may take.
    pub tool_result_budget: f64,
    /// The context window in tokens (`None`: what the provider reports for the model).
    pub context_window: Option<u64>,
    /// Which earlier session to pick up (by id, the most recent, fork, resume-at).
    pub resume: ResumeOptions,
    /// The id of a new session (`None`: a new UUID v7). Ignored when resuming.
    pub session_id: Option<SessionId>,
    /// Also log each streamed `assistant.delta` (off: the whole text is logged once).
    pub log_deltas: bool,
    /// Where to keep a Claude-Code-compatible transcript of the session (`<dir>/<id>.jsonl`,
    /// rewritten before hooks run) for hooks that read `transcript_path`. `None`: no
    /// transcript, and hooks get no `transcript_path`.
    pub transcript_dir: Option<std::path::PathBuf>,
    /// Run the read-only tools of one answer concurrently (the others always run one at a
    /// time, in order).
    pub parallel_read_only: bool,
    /// The real folder the working directory is a shadow of: tools get their path arguments
    /// moved from it onto the shadow, their results and permission prompts show it instead
    /// of the shadow, and the session records it as its `cwd` (`agent_core::view`). `None`:
    /// the working directory is shown as it is.
    pub view: Option<agent_core::view::PathView>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            model: String::new(),
            system_prompt: None,
            max_turns: 50,
            max_tokens: 8192,
            temperature: None,
            compact_at: COMPACT_AT,
            tool_result_budget: TOOL_RESULT_BUDGET,
            view: None,
            context_window: None,
            resume: ResumeOptions::default(),
            session_id: None,
            log_deltas: false,
            transcript_dir: None,
            parallel_read_only: true,
        }
    }
}

impl AgentOptions {
    /// Options for `model`, everything else default.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Sets the turn limit.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns;
        self
    }

    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets what to resume.
    pub fn resume(mut self, resume: ResumeOptions) -> Self {
        self.resume = resume;
        self
    }

    /// Sets the context window.
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }
}
