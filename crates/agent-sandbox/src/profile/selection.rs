//! From what the user asked for (a [`Selection`]) to what goes into the policy (a [`ProfilePlan`]):
//! which profiles, in which order and why, and the resolved directories.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::ProfileError;
use super::host::{GitWorktrees, Host};
use super::resolved::{builtin_candidates, home_candidates};
use super::tree::{Profile, ProfileStage, ProfileTree};
use crate::paths::lexical;

/// The base profile: its `HOME_DIR` and `WORK_DIR` placeholders are filled in, and its paths are
/// not resolved.
pub const BASE_PROFILE: &str = "00-base.sb";

/// `--enable` names that are not integrations.
pub const ALL_AGENTS: &str = "all-agents";
/// See [`ALL_AGENTS`].
pub const ALL_APPS: &str = "all-apps";

/// Which working directory gets the read-write grant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Workdir {
    /// The current directory (the default).
    #[default]
    Current,
    /// This directory (`--workdir DIR`; relative to the current directory).
    Path(PathBuf),
    /// None (`--workdir=` with an empty value).
    Disabled,
}

/// What to assemble: document 001's command-line selection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The working directory grant.
    pub workdir: Workdir,
    /// Extra read-write directories (`--add-dirs A:B`).
    pub add_dirs: Vec<PathBuf>,
    /// Extra read-only directories (`--add-dirs-ro C`).
    pub add_dirs_ro: Vec<PathBuf>,
    /// Features: optional integration names, agent or app profile names, `all-agents`,
    /// `all-apps` (`--enable F,G`).
    pub enable: Vec<String>,
    /// Profiles appended last (`--append-profile FILE`), in order.
    pub append_profiles: Vec<PathBuf>,
    /// The command that will run; its basename selects agent and app profiles (`--command`).
    pub command: Option<String>,
    /// The workdir is granted read-only: the command sees it but cannot change it (a Bash
    /// command approved as read-only runs so; see agent-core's `Containment`).
    pub workdir_read_only: bool,
}

/// Why a profile is in the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its stage is always included.
    Always,
    /// Named by `--enable`.
    Enabled,
    /// Selected by the command's basename.
    Command(String),
    /// `--enable=all-agents` / `all-apps`.
    All,
    /// Required (`$$require=`) by this profile.
    RequiredBy(String),
}

/// One selected profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The profile.
    pub profile: Profile,
    /// Why it was selected (the first reason found).
    pub reason: Reason,
}

/// A resolved directory grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirGrant {
    /// As given.
    pub given: PathBuf,
    /// Absolute, normalised, symlinks resolved.
    pub path: PathBuf,
    /// Whether it is a directory (granted as a `subpath`; anything else as a `literal`).
    pub is_dir: bool,
}

/// An appended profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// Its path.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// Everything the renderers need, resolved once.
#[derive(Clone, Debug)]
pub struct ProfilePlan {
    /// The profile tree's directory.
    pub tree_root: PathBuf,
    /// The selected profiles, in assembly order.
    pub parts: Vec<Part>,
    /// The home directory (replaces `HOME_DIR`).
    pub home: PathBuf,
    /// The working directory grant and where it came from.
    pub workdir: Option<(DirGrant, &'static str)>,
    /// Read-only directories.
    pub add_dirs_ro: Vec<DirGrant>,
    /// Read-write directories.
    pub add_dirs: Vec<DirGrant>,
    /// Profiles appended last.
    pub appended: Vec<Appended>,
    /// Optional integrations not included.
    pub excluded: Vec<String>,
    /// Tree entries that are not profiles.
    pub ignored: Vec<String>,
    /// The command's basename, if one was given.
    pub command: Option<String>,
    /// Paths the selected profiles grant that are symlinks on this machine, with their
    /// targets ([`super::resolved`]); the renderer adds a rule for each target.
    pub links: BTreeMap<PathBuf, PathBuf>,
    /// The workdir's Git worktree layout (empty without a workdir).
    pub worktrees: GitWorktrees,
    /// The workdir (and its shared Git directory) is read-only.
    pub workdir_read_only: bool,
}

impl ProfilePlan {
    /// Resolves `selection` against `tree`, reading machine facts from `host`.
    ///
    /// # Errors
    /// [`ProfileError::Selection`] for an unknown feature (the message lists the valid ones), a
    /// `require` naming a missing profile or forming a cycle, a grant of the filesystem root,
    /// a path that cannot be written into a policy, or an appended profile that cannot be read.
    pub fn resolve(
        tree: &ProfileTree,
        selection: &Selection,
        host: &dyn Host,
    ) -> Result<Self, ProfileError> {
        let home = host.home_dir()?;
        let cwd = host.current_dir()?;
        let profiles = tree.profiles();
        let command = selection
            .command
            .as_deref()
            .map(|c| c.rsplit('/').next().unwrap_or(c).to_owned())
            .filter(|c| !c.is_empty());

        let enabled = enabled_features(tree, &selection.enable)?;
        let chosen = chosen(profiles, &enabled, command.as_deref());

        let parts = with_requirements(tree, &chosen)?;
        let excluded = profiles
            .iter()
            .filter(|p| p.stage == ProfileStage::OptionalIntegrations)
            .filter(|p| !parts.iter().any(|part| part.profile.rel == p.rel))
            .map(|p| p.name.clone())
            .collect();

        let grant = |given: &Path| -> Result<DirGrant, ProfileError> {
            let path = host.resolve(&lexical(given, &cwd));
            check_grantable(given, &path)?;
            Ok(DirGrant {
                given: given.to_path_buf(),
                is_dir: host.is_dir(&path),
                path,
            })
        };
        let workdir = match &selection.workdir {
            Workdir::Current => Some((grant(&cwd)?, "current directory")),
            Workdir::Path(p) => Some((grant(p)?, "--workdir")),
            Workdir::Disabled => None,
        };
        let add_dirs_ro = selection
            .add_dirs_ro
            .iter()
            .map(|d| grant(d))
            .collect::<Result<Vec<_>, _>>()?;
        let add_dirs = selection
            .add_dirs
            .iter()
            .map(|d| grant(d))
            .collect::<Result<Vec<_>, _>>()?;
        let appended = read_appended(&selection.append_profiles, &cwd)?;
        check_policy_path(&home, "the home directory")?;
        let links = symlinks(&parts, &home, host);
        let worktrees = match &workdir {
            Some((g, _)) => {
                let w = host.git_worktrees(&g.path);
                let paths = w.common_dir.iter().chain(&w.linked);
                for p in paths {
                    check_policy_path(p, "a Git worktree path")?;
                }
                w
            }
            None => GitWorktrees::default(),
        };
        Ok(Self {
            tree_root: tree.root().to_path_buf(),
            parts,
            home,
            workdir,
            add_dirs_ro,
            add_dirs,
            appended,
            excluded,
            ignored: tree.ignored().to_vec(),
            command,
            links,
            worktrees,
            workdir_read_only: selection.workdir_read_only,
        })
    }

    /// Whether the selection allows the network (a selected profile says `linux-network`).
    pub fn network(&self) -> bool {
        self.parts.iter().any(|p| p.profile.meta.linux_network)
    }

    /// The writable directories: add-dirs, then the workdir unless it is read-only.
    pub fn writable(&self) -> impl Iterator<Item = &DirGrant> {
        self.add_dirs.iter().chain(
            self.workdir
                .as_ref()
                .filter(|_| !self.workdir_read_only)
                .map(|(g, _)| g),
        )
    }
}

/// The profiles selected before their requirements: those always included, the enabled
/// integrations, and the agent and app profiles enabled or matching `command`.
fn chosen(
    profiles: &[Profile],
    enabled: &BTreeSet<String>,
    command: Option<&str>,
) -> Vec<(usize, Reason)> {
    let mut chosen: Vec<(usize, Reason)> = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        let reason = match p.stage {
            s if s.always() => Some(Reason::Always),
            ProfileStage::OptionalIntegrations => {
                enabled.contains(&p.name).then_some(Reason::Enabled)
            }
            ProfileStage::Agents | ProfileStage::Apps => {
                let all = if p.stage == ProfileStage::Agents {
                    ALL_AGENTS
                } else {
                    ALL_APPS
                };
                if enabled.contains(all) {
                    Some(Reason::All)
                } else if enabled.contains(&p.name) {
                    Some(Reason::Enabled)
                } else {
                    command
                        .filter(|c| p.matches_command(c))
                        .map(|c| Reason::Command(c.to_owned()))
                }
            }
            _ => None,
        };
        if let Some(r) = reason {
            chosen.push((i, r));
        }
    }
    chosen
}

/// The parts of the policy: `chosen` and, transitively, what they require, in the tree's
/// order.
fn with_requirements(
    tree: &ProfileTree,
    chosen: &[(usize, Reason)],
) -> Result<Vec<Part>, ProfileError> {
    let profiles = tree.profiles();
    // Requirements, transitively, with cycle detection over the whole require graph
    // reachable from what is selected.
    let mut included: Vec<Option<Reason>> = vec![None; profiles.len()];
    for (i, r) in chosen {
        included[*i] = Some(r.clone());
    }
    let mut state = vec![Visit::New; profiles.len()];
    let mut stack = Vec::new();
    for (i, _) in chosen {
        visit(tree, *i, &mut state, &mut stack, &mut included)?;
    }

    let parts: Vec<Part> = profiles
        .iter()
        .zip(included)
        .filter_map(|(p, r)| {
            r.map(|reason| Part {
                profile: p.clone(),
                reason,
            })
        })
        .collect();
    Ok(parts)
}

/// The appended profiles (`--append-profile`), read (relative paths from `cwd`).
fn read_appended(paths: &[PathBuf], cwd: &Path) -> Result<Vec<Appended>, ProfileError> {
    paths
        .iter()
        .map(|p| {
            let path = lexical(p, cwd);
            std::fs::read_to_string(&path)
                .map(|text| Appended {
                    path: path.clone(),
                    text,
                })
                .map_err(|e| {
                    ProfileError::Selection(format!(
                        "cannot read the appended profile {}: {e}",
                        path.display()
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()
}

/// The symlinks among the paths the selected profiles name (beyond the base profile), each
/// with its target, so the policy grants both.
fn symlinks(parts: &[Part], home: &Path, host: &dyn Host) -> BTreeMap<PathBuf, PathBuf> {
    let mut links = BTreeMap::new();
    for part in parts.iter().filter(|p| p.profile.rel != BASE_PROFILE) {
        let text = &part.profile.text;
        let builtin = builtin_candidates(text).into_iter().map(|(_, p)| p);
        let homed = home_candidates(text)
            .into_iter()
            .map(|(_, _, rel)| format!("{}{rel}", home.display()));
        for path in builtin.chain(homed).map(PathBuf::from) {
            if links.contains_key(&path) || !host.exists(&path) {
                continue;
            }
            let target = host.resolve(&path);
            if target != path && check_policy_path(&target, "a symlink target").is_ok() {
                links.insert(path, target);
            }
        }
    }
    links
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    Active,
    Done,
}

fn visit(
    tree: &ProfileTree,
    i: usize,
    state: &mut [Visit],
    stack: &mut Vec<usize>,
    included: &mut [Option<Reason>],
) -> Result<(), ProfileError> {
    let profiles = tree.profiles();
    match state[i] {
        Visit::Done => return Ok(()),
        Visit::Active => {
            let start = stack.iter().position(|&s| s == i).unwrap_or(0);
            let mut cycle: Vec<&str> = stack[start..]
                .iter()
                .map(|&s| profiles[s].rel.as_str())
                .collect();
            cycle.push(profiles[i].rel.as_str());
            return Err(ProfileError::Selection(format!(
                "profiles require each other in a cycle: {}; remove one of the $$require=$$ lines",
                cycle.join(" → ")
            )));
        }
        Visit::New => {}
    }
    state[i] = Visit::Active;
    stack.push(i);
    for req in &profiles[i].meta.requires {
        let Some(j) = profiles.iter().position(|p| &p.rel == req) else {
            return Err(ProfileError::Selection(format!(
                "{} requires {req}, which is not in the profile tree {}",
                profiles[i].rel,
                tree.root().display()
            )));
        };
        if included[j].is_none() {
            included[j] = Some(Reason::RequiredBy(profiles[i].rel.clone()));
        }
        visit(tree, j, state, stack, included)?;
    }
    stack.pop();
    state[i] = Visit::Done;
    Ok(())
}

/// The `--enable` names, validated: each must name an optional integration that may be
/// enabled, an agent or app profile, `all-agents` or `all-apps`.
fn enabled_features(
    tree: &ProfileTree,
    names: &[String],
) -> Result<BTreeSet<String>, ProfileError> {
    let mut valid: Vec<&str> = vec![ALL_AGENTS, ALL_APPS];
    valid.extend(
        tree.profiles()
            .iter()
            .filter(|p| {
                matches!(p.stage, ProfileStage::Agents | ProfileStage::Apps)
                    || (p.stage == ProfileStage::OptionalIntegrations && !p.inject_only())
            })
            .map(|p| p.name.as_str()),
    );
    valid.sort_unstable();
    valid.dedup();
    let mut out = BTreeSet::new();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        if name.is_empty() {
            continue;
        }
        if valid.contains(&name) {
            out.insert(name.to_owned());
            continue;
        }
        if name == "wide-read" {
            return Err(ProfileError::Selection(
                "`wide-read` (Agent Safehouse's read grant on `/`) is not supported: the filesystem \
                 root is never granted; name the directories with --add-dirs-ro instead"
                    .into(),
            ));
        }
        let why = match tree
            .profiles()
            .iter()
            .find(|p| p.name == name && p.stage == ProfileStage::OptionalIntegrations)
        {
            Some(_) => format!(
                "`{name}` cannot be enabled by name: it is injected only when a selected profile requires it"
            ),
            None => format!("unknown feature `{name}`"),
        };
        return Err(ProfileError::Selection(format!(
            "{why}; valid features: {}",
            valid.join(", ")
        )));
    }
    Ok(out)
}

fn check_grantable(given: &Path, resolved: &Path) -> Result<(), ProfileError> {
    if resolved == Path::new("/") {
        return Err(ProfileError::Selection(format!(
            "{} is the filesystem root, which is never granted; name the directories the command needs",
            given.display()
        )));
    }
    check_policy_path(resolved, "a granted directory")
}

/// A path must be UTF-8 without control characters to be written into a policy.
fn check_policy_path(path: &Path, what: &str) -> Result<(), ProfileError> {
    match path.to_str() {
        Some(s) if !s.chars().any(char::is_control) => Ok(()),
        _ => Err(ProfileError::Selection(format!(
            "{what} {} contains characters a policy cannot hold (not UTF-8, or control characters)",
            path.display()
        ))),
    }
}
