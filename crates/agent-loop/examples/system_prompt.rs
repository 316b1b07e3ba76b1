//! The system prompt a session in a folder would start with: its memory files (`AGENTS.md`,
//! `CLAUDE.md` from the repository root down to the folder, and the user's own) and the
//! environment facts.
//!
//! `cargo run -p agent-loop --example system_prompt -- [FOLDER]` (default: the current
//! directory).

#![allow(clippy::print_stdout, reason = "an example prints what it does")]
#![allow(clippy::print_stderr, reason = "an example prints what it does")]

use agent_core::permissions::PermissionMode;
use agent_loop::SystemPrompt;
use agent_loop::memory::MemoryLoader;
use agent_workspace::import_root;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = match std::env::args_os().nth(1) {
        Some(f) => std::path::PathBuf::from(f),
        None => std::env::current_dir()?,
    };
    let folder = std::fs::canonicalize(folder)?;
    let (root, _) = import_root(&folder);
    let mut loader = MemoryLoader::new(&root, &folder);
    if let Some(home) = std::env::var_os("HOME") {
        let home = std::path::PathBuf::from(home);
        loader = loader.user_defaults(&home, &home.join(".agent"));
    }
    let memory = loader.load();
    for w in &memory.warnings {
        eprintln!("warning: {w}");
    }
    let mut prompt = SystemPrompt::new()
        .folder(&folder)
        .permission_mode(PermissionMode::Default)
        .memory(memory);
    if let Some(branch) = agent_store::git_branch(&folder) {
        prompt = prompt.git_branch(branch);
    }
    println!("{}", prompt.render());
    Ok(())
}
