//! A profile tree on disk, in document 001's stage layout.

use std::path::{Path, PathBuf};

use super::ProfileError;
use super::metadata::Metadata;

/// Which stage a profile belongs to, and so how it is selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProfileStage {
    /// A `*.sb` file at the top of the tree (`00-base.sb`, `10-system-runtime.sb`,
    /// `20-network.sb`): always included.
    Root,
    /// `30-toolchains/`: always included.
    Toolchains,
    /// `40-shared/`: always included.
    Shared,
    /// `50-integrations-core/`: always included.
    CoreIntegrations,
    /// `55-integrations-optional/`: `--enable` or a `require`.
    OptionalIntegrations,
    /// `60-agents/`: the command's basename, `--enable=all-agents`, or a `require`.
    Agents,
    /// `65-apps/`: the command's basename, `--enable=all-apps`, or a `require`.
    Apps,
}

impl ProfileStage {
    /// The stage directories, in order.
    pub const DIRS: [(&'static str, ProfileStage); 6] = [
        ("30-toolchains", ProfileStage::Toolchains),
        ("40-shared", ProfileStage::Shared),
        ("50-integrations-core", ProfileStage::CoreIntegrations),
        (
            "55-integrations-optional",
            ProfileStage::OptionalIntegrations,
        ),
        ("60-agents", ProfileStage::Agents),
        ("65-apps", ProfileStage::Apps),
    ];

    /// Whether every profile of the stage is included.
    pub fn always(self) -> bool {
        matches!(
            self,
            ProfileStage::Root
                | ProfileStage::Toolchains
                | ProfileStage::Shared
                | ProfileStage::CoreIntegrations
        )
    }
}

/// One `.sb` file of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Its path relative to the tree, `/`-separated (`30-toolchains/rust.sb`).
    pub rel: String,
    /// Its stage.
    pub stage: ProfileStage,
    /// The file stem (`rust`): the feature name of an optional integration.
    pub name: String,
    /// Its text.
    pub text: String,
    /// Its metadata.
    pub meta: Metadata,
}

impl Profile {
    /// Whether the command basename `command` selects this agent or app profile: one of its
    /// `$$command=` aliases, or its file stem when it declares none (compared lowercased, as
    /// Agent Safehouse does).
    pub fn matches_command(&self, command: &str) -> bool {
        let command = command.to_lowercase();
        if self.meta.commands.is_empty() {
            self.name.to_lowercase() == command
        } else {
            self.meta.commands.contains(&command)
        }
    }

    /// Whether this optional integration can only be injected by a `require`.
    pub fn inject_only(&self) -> bool {
        self.meta.inject_only
            || (self.stage == ProfileStage::OptionalIntegrations && self.name == "keychain")
    }
}

/// A loaded profile tree: every profile in assembly order (stage, then `LC_ALL=C` byte order of
/// the file name within the stage).
#[derive(Clone, Debug)]
pub struct ProfileTree {
    root: PathBuf,
    profiles: Vec<Profile>,
    ignored: Vec<String>,
}

impl ProfileTree {
    /// Loads the tree at `root`. Files other than `*.sb` and unknown directories are listed by
    /// [`Self::ignored`], not loaded.
    ///
    /// # Errors
    /// [`ProfileError::Tree`] when `root` or a file in it cannot be read, or a profile is not
    /// UTF-8.
    pub fn load(root: &Path) -> Result<Self, ProfileError> {
        let mut files = Vec::new();
        let mut ignored = Vec::new();
        for (name, path, is_dir) in sorted_entries(root)? {
            if is_dir {
                if ProfileStage::DIRS.iter().any(|(d, _)| *d == name) {
                    for (file, fpath, sub_dir) in sorted_entries(&path)? {
                        if sub_dir {
                            ignored.push(format!("{name}/{file}"));
                        } else {
                            files.push((format!("{name}/{file}"), read_text(&fpath)?));
                        }
                    }
                } else {
                    ignored.push(format!("{name}/"));
                }
            } else {
                files.push((name, read_text(&path)?));
            }
        }
        let mut tree = Self::from_files(root, files)?;
        tree.ignored.extend(ignored);
        tree.ignored.sort();
        Ok(tree)
    }

    /// A tree from `(relative path, text)` pairs (a tree embedded in a program); `root` names
    /// it in messages. Paths are `NAME.sb` at the top or `STAGE-DIR/NAME.sb`; anything else is
    /// listed by [`Self::ignored`].
    ///
    /// # Errors
    /// [`ProfileError::Tree`] when no top-level profile is among them.
    pub fn from_files(
        root: &Path,
        files: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ProfileError> {
        let mut profiles = Vec::new();
        let mut ignored = Vec::new();
        for (rel, text) in files {
            let (dir, file) = match rel.split_once('/') {
                Some((d, f)) => (Some(d), f),
                None => (None, rel.as_str()),
            };
            let stage = match dir {
                None => Some(ProfileStage::Root),
                Some(d) => ProfileStage::DIRS
                    .iter()
                    .find(|(n, _)| *n == d)
                    .map(|(_, s)| *s),
            };
            match stage {
                Some(stage) if file.ends_with(".sb") && !file.contains('/') => {
                    profiles.push(Profile {
                        meta: Metadata::parse(&text),
                        name: file.trim_end_matches(".sb").to_owned(),
                        rel,
                        stage,
                        text,
                    });
                }
                _ => ignored.push(rel),
            }
        }
        if !profiles.iter().any(|p| p.stage == ProfileStage::Root) {
            return Err(ProfileError::Tree(format!(
                "{} holds no top-level .sb profile (such as 00-base.sb); is it a profile tree?",
                root.display()
            )));
        }
        // ProfileStage order, then the file names' bytes within a stage (`LC_ALL=C sort`).
        profiles.sort_by(|a, b| {
            a.stage
                .cmp(&b.stage)
                .then_with(|| a.rel.as_bytes().cmp(b.rel.as_bytes()))
        });
        ignored.sort();
        Ok(Self {
            root: root.to_path_buf(),
            profiles,
            ignored,
        })
    }

    /// The tree's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every profile, in assembly order.
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// Entries that are not profiles (other files, unknown directories).
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }

    /// The profile at `rel` (`55-integrations-optional/docker.sb`).
    pub fn get(&self, rel: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.rel == rel)
    }
}

fn read_text(path: &Path) -> Result<String, ProfileError> {
    let bytes = std::fs::read(path)
        .map_err(|e| ProfileError::Tree(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes)
        .map_err(|_| ProfileError::Tree(format!("{} is not UTF-8 text", path.display())))
}

/// Directory entries sorted by their names' bytes (`LC_ALL=C sort`), with whether each is a
/// directory (following symlinks).
fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf, bool)>, ProfileError> {
    let read = std::fs::read_dir(dir).map_err(|e| {
        ProfileError::Tree(format!(
            "cannot read the profile directory {}: {e}",
            dir.display()
        ))
    })?;
    let mut out = Vec::new();
    for entry in read {
        let entry =
            entry.map_err(|e| ProfileError::Tree(format!("cannot list {}: {e}", dir.display())))?;
        let path = entry.path();
        let Ok(name) = entry.file_name().into_string() else {
            return Err(ProfileError::Tree(format!(
                "{} has a name that is not UTF-8",
                path.display()
            )));
        };
        if name.starts_with('.') {
            continue;
        }
        let is_dir = path.is_dir();
        out.push((name, path, is_dir));
    }
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}
