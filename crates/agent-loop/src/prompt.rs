//! [`SystemPrompt`]: the system prompt of a session, built from what is true of it: the
//! instructions (ours, or the embedder's), the environment the model works in, and the
//! user's memory files.
//!
//! The prompt is rendered once, when the session starts, and stays the same for the whole
//! session so a provider's prompt cache keeps hitting: it holds the date, never the time,
//! and the permission mode the session started in.

use std::fmt::Write as _;
use std::path::PathBuf;

use agent_core::permissions::PermissionMode;

use crate::memory::Memory;

/// The instructions of a system prompt when none are given: what the agent is and how it
/// works with the tools and the permission gate. It claims nothing about where the agent runs;
/// [`SystemPrompt`] adds those facts (the folder, the shadow workspace, the mode, ...).
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a coding agent working in the user's project. \
Use the tools to read, search, edit and run commands in the working directory. Every tool call \
is checked against the user's permission rules and may be refused; when one is refused, do not \
retry it unchanged. Keep answers short and say what you changed.";

/// How many pending paths the prompt names before it says "and N more".
const STATUS_PATHS_SHOWN: usize = 10;

/// The system prompt of a session, as a builder: [`Self::render`] gives the text.
///
/// It is, in order: the instructions ([`Self::base`], default [`DEFAULT_SYSTEM_PROMPT`]), an
/// `# Environment` section with each fact that was given (the folder, the shadow workspace,
/// the OS, the date, the Git branch, the pending changes, the permission mode, where Bash
/// commands run), a `# Memory` section with the memory files, and the [`Self::append`] text.
/// A fact that was not given is not stated. [`Self::new`] fills in the OS and today's date
/// (UTC); everything else starts unset.
///
/// ```
/// use agent_core::permissions::PermissionMode;
/// use agent_loop::SystemPrompt;
///
/// let text = SystemPrompt::new()
///     .folder("/home/me/project")
///     .date("2026-08-22")
///     .git_branch("main")
///     .permission_mode(PermissionMode::AcceptEdits)
///     .append("Answer in French.")
///     .render();
/// assert!(text.contains("/home/me/project"));
/// assert!(text.contains("2026-08-22"));
/// assert!(text.contains("acceptEdits"));
/// assert!(text.ends_with("Answer in French."));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SystemPrompt {
    /// The instructions (`None`: [`DEFAULT_SYSTEM_PROMPT`]); the environment and memory
    /// follow them either way.
    pub base: Option<String>,
    /// Text added at the very end (after the memory files).
    pub append: Option<String>,
    /// The folder the user works in: the real one, never the shadow copy.
    pub folder: Option<PathBuf>,
    /// Whether the agent works in a shadow copy of [`Self::folder`].
    pub shadow_workspace: bool,
    /// Whether the copy's changes reach the folder at the end of each prompt without a review
    /// (a headless host such as the Claude Agent SDK, whose calls were approved one by one),
    /// rather than after the user reviews and commits them.
    pub applied_each_prompt: bool,
    /// The operating system (`linux`, `macos`, ...).
    pub os: Option<String>,
    /// Today's date, `YYYY-MM-DD`.
    pub date: Option<String>,
    /// The Git branch of the folder.
    pub git_branch: Option<String>,
    /// The paths the shadow holds changed since it was imported, not yet committed (`None`:
    /// not stated; empty: none).
    pub pending: Option<Vec<String>>,
    /// The permission mode the session starts in.
    pub permission_mode: Option<PermissionMode>,
    /// Where Bash commands run ([`agent_tools::Bash::placement`]).
    pub bash: Option<String>,
    /// The memory files.
    pub memory: Memory,
}

impl SystemPrompt {
    /// A prompt with the default instructions, this machine's OS and today's date (UTC).
    pub fn new() -> Self {
        Self {
            os: Some(std::env::consts::OS.to_owned()),
            date: Some(today()),
            ..Self::default()
        }
    }

    /// Replaces the default instructions (`None` restores them).
    pub fn base(mut self, base: impl Into<Option<String>>) -> Self {
        self.base = base.into();
        self
    }

    /// Adds text at the end.
    pub fn append(mut self, text: impl Into<String>) -> Self {
        self.append = Some(text.into());
        self
    }

    /// Sets the text added at the end (`None`: nothing).
    pub fn append_opt(mut self, text: Option<String>) -> Self {
        self.append = text;
        self
    }

    /// Names the user's folder (the real one).
    pub fn folder(mut self, folder: impl Into<PathBuf>) -> Self {
        self.folder = Some(folder.into());
        self
    }

    /// Says the agent works in a shadow copy of the folder.
    pub fn shadow_workspace(mut self, shadow: bool) -> Self {
        self.shadow_workspace = shadow;
        self
    }

    /// Says the shadow copy's changes are applied to the folder at the end of each prompt
    /// (no review), as a headless host does.
    pub fn applied_each_prompt(mut self, applied: bool) -> Self {
        self.applied_each_prompt = applied;
        self
    }

    /// Sets the OS.
    pub fn os(mut self, os: impl Into<String>) -> Self {
        self.os = Some(os.into());
        self
    }

    /// Sets the date (`YYYY-MM-DD`).
    pub fn date(mut self, date: impl Into<String>) -> Self {
        self.date = Some(date.into());
        self
    }

    /// Sets the Git branch.
    pub fn git_branch(mut self, branch: impl Into<String>) -> Self {
        self.git_branch = Some(branch.into());
        self
    }

    /// Sets the paths changed in the shadow and not yet committed.
    pub fn pending(mut self, paths: Vec<String>) -> Self {
        self.pending = Some(paths);
        self
    }

    /// Sets the permission mode the session starts in.
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = Some(mode);
        self
    }

    /// Says where Bash commands run.
    pub fn bash(mut self, placement: impl Into<String>) -> Self {
        self.bash = Some(placement.into());
        self
    }

    /// Sets the memory files.
    pub fn memory(mut self, memory: Memory) -> Self {
        self.memory = memory;
        self
    }

    /// The prompt's text.
    pub fn render(&self) -> String {
        let mut out = self
            .base
            .as_deref()
            .unwrap_or(DEFAULT_SYSTEM_PROMPT)
            .trim_end()
            .to_owned();
        let facts = self.facts();
        if !facts.is_empty() {
            section(&mut out, "# Environment\n");
            for f in facts {
                let _ = writeln!(out, "- {f}");
            }
        }
        if !self.memory.is_empty() {
            section(
                &mut out,
                "# Memory\nThe user's instruction files, in order; a later file is nearer to the working folder and wins where two disagree. Follow them.\n\n",
            );
            out.push_str(&self.memory.render());
        }
        if let Some(a) = self.append.as_deref().filter(|a| !a.trim().is_empty()) {
            section(&mut out, a.trim_end());
        }
        out.trim_end().to_owned()
    }

    /// The environment's facts, one line each.
    fn facts(&self) -> Vec<String> {
        let mut facts = Vec::new();
        if let Some(f) = &self.folder {
            facts.push(format!(
                "Working folder: {} (the user's folder; use its paths in tool calls)",
                f.display()
            ));
        }
        if self.shadow_workspace && self.applied_each_prompt {
            facts.push(
                "You work in a shadow copy of that folder: your edits and commands change the copy, and what changed is applied to the user's folder at the end of each prompt."
                    .to_owned(),
            );
        } else if self.shadow_workspace {
            facts.push(
                "You work in a shadow copy of that folder: your edits and commands change the copy, and reach the user's folder only after the user reviews and commits the change set."
                    .to_owned(),
            );
        }
        if let Some(os) = &self.os {
            facts.push(format!("OS: {os}"));
        }
        if let Some(d) = &self.date {
            facts.push(format!("Today's date: {d}"));
        }
        if let Some(b) = &self.git_branch {
            facts.push(format!("Git branch: {b}"));
        }
        if let Some(p) = &self.pending {
            facts.push(pending(p));
        }
        if let Some(m) = self.permission_mode {
            facts.push(format!(
                "Permission mode at the start of the session: {} ({})",
                m.as_str(),
                mode_meaning(m)
            ));
        }
        if let Some(b) = &self.bash {
            facts.push(format!("Bash: {}", b.trim()));
        }
        facts
    }
}

/// Starts a section after a blank line.
fn section(out: &mut String, text: &str) {
    out.truncate(out.trim_end().len());
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(text);
}

/// The pending-changes fact, naming at most [`STATUS_PATHS_SHOWN`] paths.
fn pending(paths: &[String]) -> String {
    if paths.is_empty() {
        return "Pending changes: none (the copy matches the user's folder)".to_owned();
    }
    let mut s = format!(
        "Pending changes: {} path(s) changed in the copy by earlier sessions and not yet committed: {}",
        paths.len(),
        paths
            .iter()
            .take(STATUS_PATHS_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );
    if paths.len() > STATUS_PATHS_SHOWN {
        let _ = write!(s, " and {} more", paths.len() - STATUS_PATHS_SHOWN);
    }
    s
}

/// What a permission mode means for the model, in a few words.
fn mode_meaning(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => {
            "reads and allowed calls run; edits and other commands ask the user first"
        }
        PermissionMode::Plan => {
            "read-only planning: edits and commands that change anything are refused"
        }
        PermissionMode::AcceptEdits => {
            "edits in the working folders run without asking; other commands ask the user first"
        }
        PermissionMode::Auto => {
            "calls run unless a classifier flags them as dangerous, then the user is asked"
        }
        PermissionMode::DontAsk => "nobody is asked: what the rules do not allow is refused",
        PermissionMode::BypassPermissions => {
            "calls run without asking, except what the rules deny or mark to ask"
        }
    }
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

/// The `YYYY-MM-DD` date of `days` since 1970-01-01 (proleptic Gregorian; Howard Hinnant's
/// `civil_from_days`).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryFile, MemoryScope};

    #[test]
    fn without_facts_the_prompt_is_the_default_instructions() {
        assert_eq!(SystemPrompt::default().render(), DEFAULT_SYSTEM_PROMPT);
    }

    #[test]
    fn new_states_this_os_and_a_date_but_no_time() {
        let text = SystemPrompt::new().render();
        assert!(
            text.contains(&format!("OS: {}", std::env::consts::OS)),
            "{text}"
        );
        let date = text
            .lines()
            .find_map(|l| l.strip_prefix("- Today's date: "))
            .unwrap();
        assert_eq!(date.len(), 10, "{date}");
        assert!(date.starts_with("20"), "{date}");
    }

    #[test]
    fn the_prompt_is_the_same_when_rendered_twice() {
        let p = SystemPrompt::new().folder("/p").git_branch("main");
        assert_eq!(p.render(), p.render());
    }

    #[test]
    fn civil_dates_are_right_across_leap_years() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_686), "2026-08-21");
        assert_eq!(civil_date(20_513), "2026-03-01");
    }

    #[test]
    fn a_headless_host_that_applies_each_prompt_says_so() {
        let reviewed = SystemPrompt::default().shadow_workspace(true).render();
        assert!(
            reviewed.contains("after the user reviews and commits"),
            "{reviewed}"
        );
        let applied = SystemPrompt::default()
            .shadow_workspace(true)
            .applied_each_prompt(true)
            .render();
        assert!(applied.contains("at the end of each prompt"), "{applied}");
        assert!(!applied.contains("reviews and commits"), "{applied}");
    }

    #[test]
    fn each_fact_given_is_stated() {
        let text = SystemPrompt::default()
            .folder("/home/me/real")
            .shadow_workspace(true)
            .os("linux")
            .date("2026-08-22")
            .git_branch("feature/x")
            .pending(vec![])
            .permission_mode(PermissionMode::Plan)
            .bash("Every script runs in the host's bash inside the OS sandbox (bwrap).")
            .render();
        for expected in [
            "# Environment",
            "- Working folder: /home/me/real",
            "shadow copy of that folder",
            "reach the user's folder only after the user reviews and commits",
            "- OS: linux",
            "- Today's date: 2026-08-22",
            "- Git branch: feature/x",
            "- Pending changes: none",
            "- Permission mode at the start of the session: plan (read-only planning",
            "- Bash: Every script runs in the host's bash inside the OS sandbox (bwrap).",
        ] {
            assert!(
                text.contains(expected),
                "{expected:?} missing from:\n{text}"
            );
        }
        assert!(text.starts_with(DEFAULT_SYSTEM_PROMPT));
    }

    #[test]
    fn a_fact_not_given_is_not_stated() {
        let text = SystemPrompt::default().folder("/p").render();
        for absent in [
            "OS:",
            "Today's date",
            "Git branch",
            "Pending",
            "Permission",
            "Bash:",
        ] {
            assert!(!text.contains(absent), "{absent:?} in:\n{text}");
        }
        assert!(!text.contains("shadow copy"), "{text}");
    }

    #[test]
    fn every_mode_is_named_with_its_meaning() {
        for m in PermissionMode::ALL {
            let text = SystemPrompt::default().permission_mode(m).render();
            assert!(
                text.contains(&format!("session: {} (", m.as_str())),
                "{text}"
            );
        }
    }

    #[test]
    fn pending_changes_name_ten_paths_then_count_the_rest() {
        let paths: Vec<String> = (0..12).map(|i| format!("f{i}.rs")).collect();
        let text = SystemPrompt::default().pending(paths).render();
        assert!(text.contains("12 path(s) changed"), "{text}");
        assert!(text.contains("f9.rs and 2 more"), "{text}");
        assert!(!text.contains("f10.rs"), "{text}");
    }

    #[test]
    fn base_replaces_the_instructions_and_append_comes_last_after_memory() {
        let memory = Memory {
            files: vec![MemoryFile {
                path: "/p/AGENTS.md".into(),
                scope: MemoryScope::Project,
                text: "Use tabs.\n".into(),
                truncated: false,
            }],
            warnings: Vec::new(),
        };
        let text = SystemPrompt::default()
            .base(Some("You review code.".to_owned()))
            .git_branch("main")
            .memory(memory)
            .append("Be brief.")
            .render();
        assert!(
            text.starts_with("You review code.\n\n# Environment"),
            "{text}"
        );
        assert!(!text.contains(DEFAULT_SYSTEM_PROMPT), "{text}");
        let memory_at = text.find("# Memory").unwrap();
        let file_at = text
            .find("Contents of /p/AGENTS.md (project instructions")
            .unwrap();
        assert!(memory_at < file_at);
        assert!(text.find("Use tabs.").unwrap() > file_at);
        assert!(text.ends_with("\n\nBe brief."), "{text}");
    }
}
