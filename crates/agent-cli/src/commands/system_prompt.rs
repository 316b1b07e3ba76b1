//! The system prompt of `agent run` and `agent chat`: the default instructions (or the
//! caller's), the facts of the session (the real folder, the shadow workspace and its pending
//! changes, the OS, the date, the Git branch, the permission mode, where Bash commands run) and
//! the memory files (docs/agent.md, "The system prompt").

use std::path::Path;

use agent_loop::SystemPrompt;
use agent_loop::memory::MemoryLoader;
use agent_tools::Bash;
use agent_workspace::Workspace;
use anyhow::Result;

use super::LoadedSettings;
use crate::output;

/// What the prompt says beyond the facts: `base` replaces the default instructions, `append`
/// is added at the end (`--system-prompt` / `--append-system-prompt` when a verb offers them).
#[derive(Clone, Debug, Default)]
pub(crate) struct PromptText {
    pub(crate) base: Option<String>,
    pub(crate) append: Option<String>,
    /// The change set is applied at the end of each prompt (the SDK transport).
    pub(crate) applied_each_prompt: bool,
}

/// The session's prompt: `folder` is the real folder the session starts in, `root` the real
/// folder imported (its repository), `fresh` whether the shadow was imported just now (then
/// nothing is pending). The memory files are read from the real folder; their warnings go to
/// stderr. The permission mode is filled in when the agent starts (the mode it really starts
/// in).
pub(crate) fn session_prompt(
    text: PromptText,
    loaded: &LoadedSettings,
    folder: &Path,
    root: &Path,
    ws: &Workspace,
    fresh: bool,
    bash: &Bash,
) -> Result<SystemPrompt> {
    let memory = MemoryLoader::new(root, folder)
        .user_defaults(&loaded.home, super::agent_home()?.root())
        .claude(loaded.sources.claude)
        .load();
    for w in &memory.warnings {
        output::warning(w);
    }
    let pending = if fresh {
        Vec::new()
    } else {
        ws.status()?.touched()
    };
    let mut prompt = SystemPrompt::new()
        .base(text.base)
        .append_opt(text.append)
        .folder(folder)
        .shadow_workspace(true)
        .applied_each_prompt(text.applied_each_prompt)
        .pending(pending)
        .bash(bash.placement())
        .memory(memory);
    if let Some(b) = agent_store::git_branch(folder) {
        prompt = prompt.git_branch(b);
    }
    Ok(prompt)
}
