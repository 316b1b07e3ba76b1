//! Machine-read metadata in profile comments: `$$key=value$$` or `$$key$$` on a `;` comment
//! line (document 001). Human-facing comments such as `;; Requires: x` are not read.
//!
//! | key | meaning |
//! |---|---|
//! | `require=STAGE/NAME.sb[,STAGE/NAME.sb...]` | selecting this profile selects those too (transitively); a comma-separated list, each entry trimmed and lowercased, as Agent Safehouse's generator reads it |
//! | `command=a,b` | agent and app profiles: the command basenames that select it, trimmed and lowercased (default: the lowercased file stem) |
//! | `exec-env-default=NAME=VALUE` | Agent Safehouse: an environment default for the wrapped command; read and kept, not part of the policy |
//! | `inject-only` | an optional integration that `--enable` cannot name; only a `require` brings it in (`keychain.sb` is always treated so, as in document 001) |
//! | `linux-ro=PATH`, `linux-rw=PATH` | the Linux rendering binds PATH read-only / read-write when the profile is selected (`HOME/...` is under the home directory) |
//! | `linux-tmpfs=PATH` | the Linux rendering mounts a fresh, empty, writable tmpfs at PATH: a cache a tool must write, thrown away when the command ends |
//! | `linux-network` | the Linux rendering keeps the network namespace when the profile is selected |
//!
//! Unknown keys are kept and ignored, so newer trees load in older builds.

/// The metadata of one profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `require=` targets, relative to the profile tree, in source order.
    pub requires: Vec<String>,
    /// `command=` basenames.
    pub commands: Vec<String>,
    /// `inject-only`.
    pub inject_only: bool,
    /// `exec-env-default=NAME=VALUE` entries, as written (Agent Safehouse trees).
    pub exec_env_defaults: Vec<String>,
    /// `linux-ro=` paths.
    pub linux_ro: Vec<String>,
    /// `linux-rw=` paths.
    pub linux_rw: Vec<String>,
    /// `linux-tmpfs=` paths.
    pub linux_tmpfs: Vec<String>,
    /// `linux-network`.
    pub linux_network: bool,
    /// Keys this build does not know, as written.
    pub unknown: Vec<String>,
}

impl Metadata {
    /// Reads every `$$...$$` token of the comment lines of `text`.
    pub fn parse(text: &str) -> Self {
        let mut m = Self::default();
        for line in text.lines() {
            let line = line.trim_start();
            if !line.starts_with(';') {
                continue;
            }
            let mut rest = line;
            while let Some(start) = rest.find("$$") {
                let after = &rest[start + 2..];
                let Some(end) = after.find("$$") else { break };
                m.add(after[..end].trim());
                rest = &after[end + 2..];
            }
        }
        m
    }

    fn add(&mut self, token: &str) {
        let (key, value) = token.split_once('=').unwrap_or((token, ""));
        let value = value.trim();
        match key.trim() {
            "require" if !value.is_empty() => self.requires.extend(csv(value)),
            "command" => self.commands.extend(csv(value)),
            "exec-env-default" if !value.is_empty() => {
                self.exec_env_defaults.push(value.to_owned());
            }
            "inject-only" => self.inject_only = true,
            "linux-ro" if !value.is_empty() => self.linux_ro.push(value.to_owned()),
            "linux-rw" if !value.is_empty() => self.linux_rw.push(value.to_owned()),
            "linux-tmpfs" if !value.is_empty() => self.linux_tmpfs.push(value.to_owned()),
            "linux-network" => self.linux_network = true,
            _ => self.unknown.push(token.to_owned()),
        }
    }
}

/// A comma-separated metadata value: each entry trimmed and lowercased, empty entries dropped
/// (Agent Safehouse's generator reads `require` and `command` lists so).
fn csv(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tokens_from_comment_lines_only() {
        let m = Metadata::parse(
            ";; $$require=55-integrations-optional/a.sb$$ $$require=55-integrations-optional/b.sb$$\n\
             ;; $$command=claude, claude-code$$\n;; $$inject-only$$\n;; $$linux-rw=HOME/.x$$\n;; $$linux-tmpfs=HOME/.t$$\n\
             ;; $$linux-network$$ $$future=1$$\n(allow file-read* (literal \"$$require=no$$\"))\n\
             ;; Requires: human only\n",
        );
        assert_eq!(
            m.requires,
            [
                "55-integrations-optional/a.sb",
                "55-integrations-optional/b.sb"
            ]
        );
        assert_eq!(m.commands, ["claude", "claude-code"]);
        assert!(m.inject_only && m.linux_network);
        assert_eq!(m.linux_rw, ["HOME/.x"]);
        assert_eq!(m.linux_tmpfs, ["HOME/.t"]);
        assert_eq!(m.unknown, ["future=1"]);
    }

    #[test]
    fn require_and_command_lists_are_split_trimmed_and_lowercased() {
        let m = Metadata::parse(
            ";; $$require=55-integrations-optional/a.sb, 55-integrations-optional/B.sb ,,60-agents/c.sb$$\n\
             ;; $$command=Claude , claude-code$$\n;; $$exec-env-default=X_MODE=off$$\n",
        );
        assert_eq!(
            m.requires,
            [
                "55-integrations-optional/a.sb",
                "55-integrations-optional/b.sb",
                "60-agents/c.sb"
            ]
        );
        assert_eq!(m.commands, ["claude", "claude-code"]);
        assert_eq!(m.exec_env_defaults, ["X_MODE=off"]);
    }
}
