//! The profile tree built into `agent`: the repository's `profiles/`, so `agent sandbox profile`
//! and `agent sandbox exec` work without a checkout (`--profiles-dir` picks another tree).

use std::path::Path;

use agent_sandbox::profile::{ProfileError, ProfileTree};

/// Every file of `profiles/`, relative path and text (kept in step with the directory by the
/// test below).
pub const EMBEDDED: &[(&str, &str)] = &[
    ("00-base.sb", include_str!("../../../profiles/00-base.sb")),
    (
        "10-system-runtime.sb",
        include_str!("../../../profiles/10-system-runtime.sb"),
    ),
    (
        "20-network.sb",
        include_str!("../../../profiles/20-network.sb"),
    ),
    (
        "30-toolchains/go.sb",
        include_str!("../../../profiles/30-toolchains/go.sb"),
    ),
    (
        "30-toolchains/node.sb",
        include_str!("../../../profiles/30-toolchains/node.sb"),
    ),
    (
        "30-toolchains/python.sb",
        include_str!("../../../profiles/30-toolchains/python.sb"),
    ),
    (
        "30-toolchains/rust.sb",
        include_str!("../../../profiles/30-toolchains/rust.sb"),
    ),
    (
        "40-shared/agent-common.sb",
        include_str!("../../../profiles/40-shared/agent-common.sb"),
    ),
    (
        "50-integrations-core/git.sb",
        include_str!("../../../profiles/50-integrations-core/git.sb"),
    ),
    (
        "50-integrations-core/scm-clis.sb",
        include_str!("../../../profiles/50-integrations-core/scm-clis.sb"),
    ),
    (
        "55-integrations-optional/clipboard.sb",
        include_str!("../../../profiles/55-integrations-optional/clipboard.sb"),
    ),
    (
        "55-integrations-optional/docker.sb",
        include_str!("../../../profiles/55-integrations-optional/docker.sb"),
    ),
    (
        "55-integrations-optional/keychain.sb",
        include_str!("../../../profiles/55-integrations-optional/keychain.sb"),
    ),
    (
        "55-integrations-optional/kubectl.sb",
        include_str!("../../../profiles/55-integrations-optional/kubectl.sb"),
    ),
    (
        "55-integrations-optional/network.sb",
        include_str!("../../../profiles/55-integrations-optional/network.sb"),
    ),
    (
        "55-integrations-optional/ssh.sb",
        include_str!("../../../profiles/55-integrations-optional/ssh.sb"),
    ),
    (
        "60-agents/agent.sb",
        include_str!("../../../profiles/60-agents/agent.sb"),
    ),
    (
        "60-agents/aider.sb",
        include_str!("../../../profiles/60-agents/aider.sb"),
    ),
    (
        "60-agents/claude-code.sb",
        include_str!("../../../profiles/60-agents/claude-code.sb"),
    ),
    (
        "60-agents/codex.sb",
        include_str!("../../../profiles/60-agents/codex.sb"),
    ),
    (
        "65-apps/vscode-app.sb",
        include_str!("../../../profiles/65-apps/vscode-app.sb"),
    ),
];

/// The built-in tree.
pub fn embedded() -> Result<ProfileTree, ProfileError> {
    ProfileTree::from_files(
        Path::new("(built-in profiles)"),
        EMBEDDED
            .iter()
            .map(|(rel, text)| ((*rel).to_owned(), (*text).to_owned())),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    /// The embedded list is the directory, file for file.
    #[test]
    fn embedded_profiles_match_the_directory() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles");
        let on_disk = agent_sandbox::profile::ProfileTree::load(&root).unwrap();
        let built_in = super::embedded().unwrap();
        let names = |t: &agent_sandbox::profile::ProfileTree| {
            t.profiles()
                .iter()
                .map(|p| (p.rel.clone(), p.text.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&on_disk),
            names(&built_in),
            "update EMBEDDED in profiles.rs"
        );
        assert!(on_disk.ignored().is_empty());
    }
}
