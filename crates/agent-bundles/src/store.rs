//! The local cache of installed bundles: `<root>/<name>/<version>/` (root defaults to
//! `$AGENT_HOME/bundles`), each holding the manifest exactly as fetched, its assets, and
//! `origin.json` (the registry it came from).
//!
//! - **Install** is atomic: everything is downloaded into `<root>/.tmp/install-*`, the manifest
//!   and every asset verified there, then the directory is renamed into place. An interrupted
//!   download leaves no partial install (the temp directory is removed, or left for
//!   [`BundleStore::gc`] after a crash). Installs hold `<root>/.lock`, so concurrent installs
//!   of the same bundle (threads or processes) are safe: the second finds it installed.
//! - **Load** verifies again: the manifest's signature under the current trust store's policy
//!   for its registry, and the module's sha256 and size. A cache file changed on disk is
//!   refused; when its registry is reachable the bundle is re-fetched and verified, never run
//!   as it was.
//! - **Resolve** finds a command by name across installed bundles (the newest version of
//!   each): a pin (`<root>/pins.json`, [`BundleStore::pin`]) decides first; otherwise
//!   bundles installed as official win every name clash, and within each class (official,
//!   then third-party) the bundles named in the caller's order come first, then the rest by
//!   name. A third-party command that an official bundle also provides is refused unless
//!   pinned ([`Resolver::which`], [`Resolver::clashes`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::manifest::{CommandLimits, Manifest, ManifestError};
use crate::registry::{Registry, RegistryError, compare_versions};
use crate::relpath;
use crate::trust::TrustStore;
use crate::verify::{self, SignatureStatus, VerifyError};

/// The file beside each installed manifest naming where it came from.
pub const ORIGIN_FILE: &str = "origin.json";
/// The manifest's file name, in registries and in the cache.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The file in the store's root that pins commands to bundles: `{"pins": {"cat": "a-tools"}}`.
pub const PINS_FILE: &str = "pins.json";

/// Where an installed bundle came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    /// The registry's id.
    pub registry: String,
    /// Whether it was official at install time.
    pub official: bool,
    /// The key that signed it, when a signature was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// When it was installed (seconds since the Unix epoch).
    pub installed_at: u64,
}

/// An installed bundle.
#[derive(Clone, Debug)]
pub struct InstalledBundle {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// Where it came from.
    pub origin: Origin,
}

impl InstalledBundle {
    /// `name@version`.
    pub fn label(&self) -> String {
        format!("{}@{}", self.manifest.name, self.manifest.version)
    }
}

/// What an install did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallStatus {
    /// Newly installed.
    Installed,
    /// The same manifest was installed and verified already; nothing was fetched but the
    /// manifest.
    AlreadyInstalled,
    /// An installed copy that no longer verified (or differed) was replaced.
    Replaced,
}

/// The result of [`BundleStore::install`].
#[derive(Clone, Debug)]
pub struct InstallOutcome {
    /// The bundle as installed.
    pub bundle: InstalledBundle,
    /// What happened.
    pub status: InstallStatus,
    /// How the signature check went.
    pub signature: SignatureStatus,
    /// Asset bytes fetched.
    pub bytes_fetched: u64,
}

/// A command found and verified, ready to run.
#[derive(Clone, Debug)]
pub struct LoadedModule {
    /// The bundle's name.
    pub bundle: String,
    /// Its version.
    pub version: String,
    /// The command's name.
    pub command: String,
    /// The module file in the cache.
    pub path: PathBuf,
    /// Its verified bytes.
    pub bytes: std::sync::Arc<[u8]>,
    /// Its sha256 (as the manifest gives it, lowercase).
    pub sha256: String,
    /// The manifest's recommended limits for the command.
    pub limits: Option<CommandLimits>,
    /// How the manifest's signature checked out at load.
    pub signature: SignatureStatus,
    /// Whether the bundle had to be re-fetched because a cache file had changed.
    pub repaired: bool,
}

/// Something the store could not do.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// A manifest is malformed.
    #[error("{source_name}: {error}")]
    Manifest {
        /// Where it came from.
        source_name: String,
        /// The problem.
        error: ManifestError,
    },
    /// Verification failed.
    #[error("{label}: {error}")]
    Verify {
        /// `name@version`.
        label: String,
        /// The problem.
        error: Box<VerifyError>,
    },
    /// The registry failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The registry's manifest is for another bundle than asked.
    #[error(
        "the registry serves {found} at bundles/{asked}/; refusing a manifest whose name or version differs from its path"
    )]
    Mismatch {
        /// What was asked (`name/version`).
        asked: String,
        /// What the manifest says (`name@version`).
        found: String,
    },
    /// The registry lists no version of the bundle.
    #[error(
        "bundle `{0}` is not in the registry's index.json; `agent bundles install` needs NAME@VERSION or an index listing it"
    )]
    NotInIndex(String),
    /// Nothing installed by that name (and version).
    #[error("bundle {0} is not installed (see `agent bundles list`)")]
    NotInstalled(String),
    /// No installed bundle provides the command.
    #[error(
        "{command}: command not found in the installed bundles; installed commands: {installed}"
    )]
    UnknownCommand {
        /// The name asked for.
        command: String,
        /// The installed commands, comma-separated (or `none: install a bundle with agent bundles install`).
        installed: String,
    },
    /// A cache file changed and the bundle could not be re-fetched.
    #[error(
        "{label}: {error}; the cached copy was changed after install and re-fetching it from {registry} failed ({repair}); reinstall it with `agent bundles install {label} --registry REGISTRY`"
    )]
    Tampered {
        /// `name@version`.
        label: String,
        /// What was found.
        error: Box<VerifyError>,
        /// Its registry.
        registry: String,
        /// Why the repair failed.
        repair: String,
    },
    /// A name or version is not allowed.
    #[error("`{value}` must {why}")]
    BadName {
        /// The value.
        value: String,
        /// What it must be.
        why: &'static str,
    },
    /// The caller's order puts a third-party bundle before an official bundle that provides
    /// the same command: official bundles win every name clash, so the third-party command is
    /// refused rather than silently replaced.
    #[error(
        "{command}: third-party {third_party} would shadow the official {official}, which also provides it; official bundles win every name clash and --prefer does not change that. To run {third_party_name}'s {command}, pin it: `agent bundles pin {command} {third_party_name}` (undo with `agent bundles unpin {command}`)"
    )]
    Shadowed {
        /// The command.
        command: String,
        /// The third-party bundle (`name@version`).
        third_party: String,
        /// Its name alone.
        third_party_name: String,
        /// The official bundle that provides it (`name@version`).
        official: String,
    },
    /// A pin names a bundle that is not installed or no longer provides the command.
    #[error(
        "{command} is pinned to bundle {bundle}, which {why}; install it again (`agent bundles install {bundle} --registry DIR|URL`) or remove the pin (`agent bundles unpin {command}`)"
    )]
    PinBroken {
        /// The command.
        command: String,
        /// The bundle it is pinned to.
        bundle: String,
        /// What is wrong (`is not installed`, `does not provide it (its newest version ...)`).
        why: String,
    },
    /// A pin was asked for a bundle that does not provide the command.
    #[error(
        "bundle {bundle} does not provide {command}; the installed bundles that do: {providers}"
    )]
    NotProvided {
        /// The command.
        command: String,
        /// The bundle named.
        bundle: String,
        /// The bundles that provide it, comma-separated (or `none`).
        providers: String,
    },
    /// `unpin` of a command that is not pinned.
    #[error("{0} is not pinned (see `agent bundles list`)")]
    NotPinned(String),
    /// The pins file cannot be used; commands are not resolved until it is fixed.
    #[error(
        "{path}: {why}; it must be {{\"pins\": {{\"COMMAND\": \"BUNDLE\"}}}}: fix it, or remove it to drop every pin"
    )]
    Pins {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A bundle installed as official comes from a registry the trust store no longer makes
    /// official (its key was untrusted, or `origin.json` was edited).
    #[error(
        "{label} was installed as official from {registry}, which the trust store no longer makes official; trust its key again (`agent keys trust KEY --official-for {registry}`) or reinstall it (`agent bundles install {name} --registry {registry}`) so it is ranked as what it now is"
    )]
    NoLongerOfficial {
        /// `name@version`.
        label: String,
        /// The bundle's name.
        name: String,
        /// Its registry.
        registry: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What [`BundleStore::gc`] removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Temp directories of interrupted installs.
    pub temp_dirs: Vec<PathBuf>,
    /// Directories that are not whole installs (no readable manifest or origin).
    pub broken: Vec<PathBuf>,
    /// Older versions of bundles that have a newer one installed.
    pub superseded: Vec<String>,
}

/// The local bundle cache.
#[derive(Clone, Debug)]
pub struct BundleStore {
    root: PathBuf,
}

impl BundleStore {
    /// A store rooted at `root` (created on first install).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Its root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn lock(&self) -> Result<File, BundleError> {
        std::fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ = std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(0o700));
        }
        let path = self.root.join(".lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        file.lock().map_err(io(&path))?;
        Ok(file)
    }

    /// Installs `name` at `version` (or the newest version the registry's index lists) from
    /// `registry`, verified under `trust`'s policy for it.
    ///
    /// # Errors
    /// Registry failures, malformed manifests, and each verification failure; nothing is left
    /// installed when one occurs.
    pub fn install(
        &self,
        registry: &Registry,
        trust: &TrustStore,
        name: &str,
        version: Option<&str>,
    ) -> Result<InstallOutcome, BundleError> {
        check(name)?;
        let version = match version {
            Some(v) => {
                check(v)?;
                v.to_string()
            }
            None => registry
                .index()?
                .latest(name)
                .map(str::to_string)
                .ok_or_else(|| BundleError::NotInIndex(name.to_string()))?,
        };
        let label = format!("{name}@{version}");
        let _span =
            tracing::info_span!("bundle.install", bundle = %label, registry = %registry.id())
                .entered();

        let manifest_bytes = registry.manifest_bytes(name, &version)?;
        let manifest = Manifest::parse(&manifest_bytes).map_err(|error| BundleError::Manifest {
            source_name: format!("{}/bundles/{name}/{version}/manifest.json", registry.id()),
            error,
        })?;
        if manifest.name != name || manifest.version != version {
            return Err(BundleError::Mismatch {
                asked: format!("{name}/{version}"),
                found: manifest.label(),
            });
        }
        let policy = trust.policy_for(registry.id());
        let signature =
            verify::verify_manifest(&manifest, &policy).map_err(|error| BundleError::Verify {
                label: label.clone(),
                error: Box::new(error),
            })?;

        let _lock = self.lock()?;
        let final_dir = self.root.join(name).join(&version);
        let mut replacing = false;
        if final_dir.exists() {
            match self.read_installed(&final_dir) {
                Ok(existing)
                    if existing.manifest.to_pretty_json() == manifest.to_pretty_json()
                        && existing.origin.registry == registry.id()
                        && verify_files(&existing).is_ok() =>
                {
                    return Ok(InstallOutcome {
                        bundle: existing,
                        status: InstallStatus::AlreadyInstalled,
                        signature,
                        bytes_fetched: 0,
                    });
                }
                _ => replacing = true,
            }
        }

        let tmp_root = self.root.join(".tmp");
        std::fs::create_dir_all(&tmp_root).map_err(io(&tmp_root))?;
        let staging = tempfile::Builder::new()
            .prefix("install-")
            .tempdir_in(&tmp_root)
            .map_err(io(&tmp_root))?;
        let mut fetched = 0u64;
        for asset in &manifest.assets {
            let dest = staging.path().join(&asset.path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let mut file = File::create(&dest).map_err(io(&dest))?;
            let got = registry
                .fetch_asset(name, &version, &asset.path, asset.size, &mut file)
                .map_err(|e| match e {
                    RegistryError::TooLarge { .. } => BundleError::Verify {
                        label: label.clone(),
                        error: Box::new(VerifyError::SizeMismatch {
                            path: asset.path.clone(),
                            expected: asset.size,
                            actual: asset.size + 1,
                        }),
                    },
                    other => BundleError::Registry(other),
                })?;
            verify::check_digest(asset, &got.sha256, got.size).map_err(|error| {
                BundleError::Verify {
                    label: label.clone(),
                    error: Box::new(error),
                }
            })?;
            file.sync_all().map_err(io(&dest))?;
            fetched += got.size;
        }
        let manifest_path = staging.path().join(MANIFEST_FILE);
        std::fs::write(&manifest_path, &manifest_bytes).map_err(io(&manifest_path))?;
        let origin = Origin {
            registry: registry.id().to_string(),
            official: policy.official,
            signed_by: match &signature {
                SignatureStatus::Verified { key_id } => Some(key_id.clone()),
                SignatureStatus::NotRequired { .. } => None,
            },
            installed_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        };
        let origin_path = staging.path().join(ORIGIN_FILE);
        let mut origin_text = serde_json::to_vec_pretty(&origin).unwrap_or_default();
        origin_text.push(b'\n');
        std::fs::write(&origin_path, origin_text).map_err(io(&origin_path))?;

        let parent = self.root.join(name);
        std::fs::create_dir_all(&parent).map_err(io(&parent))?;
        let staged = staging.keep();
        let mut old = None;
        if replacing && final_dir.exists() {
            let aside = tmp_root.join(format!(
                "old-{name}-{version}-{}",
                sha256_hex(staged.to_string_lossy().as_bytes())
                    .get(..12)
                    .unwrap_or("x")
            ));
            std::fs::rename(&final_dir, &aside).map_err(io(&final_dir))?;
            old = Some(aside);
        }
        if let Err(e) = std::fs::rename(&staged, &final_dir) {
            let _ = std::fs::remove_dir_all(&staged);
            if let Some(aside) = &old {
                let _ = std::fs::rename(aside, &final_dir);
            }
            return Err(io(&final_dir)(e));
        }
        if let Some(aside) = old {
            let _ = std::fs::remove_dir_all(aside);
        }
        tracing::info!(bundle = %label, bytes = fetched, "installed");
        Ok(InstallOutcome {
            bundle: InstalledBundle {
                dir: final_dir,
                manifest,
                origin,
            },
            status: if replacing {
                InstallStatus::Replaced
            } else {
                InstallStatus::Installed
            },
            signature,
            bytes_fetched: fetched,
        })
    }

    fn read_installed(&self, dir: &Path) -> Result<InstalledBundle, BundleError> {
        let manifest_path = dir.join(MANIFEST_FILE);
        let bytes = std::fs::read(&manifest_path).map_err(io(&manifest_path))?;
        let manifest = Manifest::parse(&bytes).map_err(|error| BundleError::Manifest {
            source_name: manifest_path.display().to_string(),
            error,
        })?;
        let origin_path = dir.join(ORIGIN_FILE);
        let origin_bytes = std::fs::read(&origin_path).map_err(io(&origin_path))?;
        let origin: Origin =
            serde_json::from_slice(&origin_bytes).map_err(|e| BundleError::Io {
                path: origin_path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            })?;
        Ok(InstalledBundle {
            dir: dir.to_path_buf(),
            manifest,
            origin,
        })
    }

    /// Every installed bundle, by name then version.
    ///
    /// # Errors
    /// When the root cannot be read (a missing root is an empty list). Directories that are not
    /// whole installs are skipped (see [`BundleStore::gc`]).
    pub fn list(&self) -> Result<Vec<InstalledBundle>, BundleError> {
        let mut out = Vec::new();
        let names = match std::fs::read_dir(&self.root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(io(&self.root)(e)),
        };
        for entry in names.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || relpath::check_component(&name).is_err() {
                continue;
            }
            let Ok(versions) = std::fs::read_dir(entry.path()) else {
                continue;
            };
            for v in versions.flatten() {
                let version = v.file_name().to_string_lossy().to_string();
                if relpath::check_component(&version).is_err() {
                    continue;
                }
                if let Ok(bundle) = self.read_installed(&v.path())
                    && bundle.manifest.name == name
                    && bundle.manifest.version == version
                {
                    out.push(bundle);
                }
            }
        }
        out.sort_by(|a, b| {
            a.manifest
                .name
                .cmp(&b.manifest.name)
                .then_with(|| compare_versions(&a.manifest.version, &b.manifest.version))
                // `1.0` and `01.0` compare equal; their text decides, never the directory order.
                .then_with(|| a.manifest.version.cmp(&b.manifest.version))
        });
        Ok(out)
    }

    /// Removes `name` (one version, or all of them); the labels removed.
    ///
    /// # Errors
    /// [`BundleError::NotInstalled`] when nothing matches.
    pub fn remove(&self, name: &str, version: Option<&str>) -> Result<Vec<String>, BundleError> {
        check(name)?;
        if let Some(v) = version {
            check(v)?;
        }
        let _lock = self.lock()?;
        let mut removed = Vec::new();
        for bundle in self.list()? {
            if bundle.manifest.name == name && version.is_none_or(|v| v == bundle.manifest.version)
            {
                std::fs::remove_dir_all(&bundle.dir).map_err(io(&bundle.dir))?;
                removed.push(bundle.label());
            }
        }
        let parent = self.root.join(name);
        let _ = std::fs::remove_dir(&parent);
        if removed.is_empty() {
            return Err(BundleError::NotInstalled(match version {
                Some(v) => format!("{name}@{v}"),
                None => name.to_string(),
            }));
        }
        // Pins to a bundle that is gone would make their commands fail; drop them (a version
        // that remains keeps its pins).
        if !self.list()?.iter().any(|b| b.manifest.name == name) {
            let mut pins = self.pins()?;
            let before = pins.len();
            pins.retain(|_, bundle| bundle != name);
            if pins.len() != before {
                self.write_pins(&pins)?;
            }
        }
        Ok(removed)
    }

    /// The pins: command name → bundle name (`<root>/pins.json`; none when the file is absent).
    ///
    /// # Errors
    /// [`BundleError::Pins`] when the file is not a valid pins file (commands are then not
    /// resolved: a pin decides which code runs, so a damaged file is not ignored).
    pub fn pins(&self) -> Result<BTreeMap<String, String>, BundleError> {
        let path = self.root.join(PINS_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(io(&path)(e)),
        };
        let bad = |why: String| BundleError::Pins {
            path: path.clone(),
            why,
        };
        let file: PinsFile =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not a pins file ({e})")))?;
        for (command, bundle) in &file.pins {
            relpath::check_command_name(command)
                .map_err(|why| bad(format!("the command name `{command}` must {why}")))?;
            relpath::check_component(bundle)
                .map_err(|why| bad(format!("the bundle name `{bundle}` must {why}")))?;
        }
        Ok(file.pins)
    }

    fn write_pins(&self, pins: &BTreeMap<String, String>) -> Result<(), BundleError> {
        let path = self.root.join(PINS_FILE);
        let mut text = serde_json::to_vec_pretty(&PinsFile { pins: pins.clone() })
            .map_err(|e| io(&path)(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        text.push(b'\n');
        let mut tmp = tempfile::Builder::new()
            .prefix(".pins-")
            .tempfile_in(&self.root)
            .map_err(io(&self.root))?;
        std::io::Write::write_all(&mut tmp, &text).map_err(io(tmp.path()))?;
        tmp.as_file().sync_all().map_err(io(&path))?;
        tmp.persist(&path).map_err(|e| io(&path)(e.error))?;
        Ok(())
    }

    /// Pins `command` to bundle `bundle` (its newest installed version): that bundle's
    /// command is used whatever else provides it, official bundles included. The bundle must
    /// be installed and provide the command. Returns the bundle it was pinned to before, if
    /// any.
    ///
    /// # Errors
    /// [`BundleError::BadName`], [`BundleError::NotInstalled`], [`BundleError::NotProvided`],
    /// and file errors.
    pub fn pin(&self, command: &str, bundle: &str) -> Result<Option<String>, BundleError> {
        relpath::check_command_name(command).map_err(|why| BundleError::BadName {
            value: command.to_string(),
            why,
        })?;
        check(bundle)?;
        let _lock = self.lock()?;
        let resolver = self.resolver(&[])?;
        let Some(target) = resolver.bundles.iter().find(|b| b.manifest.name == bundle) else {
            return Err(BundleError::NotInstalled(bundle.to_string()));
        };
        if target.manifest.command(command).is_none() {
            let providers: Vec<String> = resolver
                .providers(command)
                .iter()
                .map(|b| b.label())
                .collect();
            return Err(BundleError::NotProvided {
                command: command.to_string(),
                bundle: target.label(),
                providers: if providers.is_empty() {
                    "none".into()
                } else {
                    providers.join(", ")
                },
            });
        }
        let mut pins = self.pins()?;
        let before = pins.insert(command.to_string(), bundle.to_string());
        self.write_pins(&pins)?;
        tracing::info!(command, bundle, "pinned");
        Ok(before)
    }

    /// Removes the pin of `command`; the bundle it named.
    ///
    /// # Errors
    /// [`BundleError::NotPinned`] when it had none; file errors.
    pub fn unpin(&self, command: &str) -> Result<String, BundleError> {
        let _lock = self.lock()?;
        let mut pins = self.pins()?;
        let bundle = pins
            .remove(command)
            .ok_or_else(|| BundleError::NotPinned(command.to_string()))?;
        self.write_pins(&pins)?;
        tracing::info!(command, bundle, "unpinned");
        Ok(bundle)
    }

    /// Removes what interrupted installs left (`.tmp/*`), directories that are not whole
    /// installs, and versions superseded by a newer installed version of the same bundle.
    ///
    /// # Errors
    /// When something cannot be removed.
    pub fn gc(&self) -> Result<GcReport, BundleError> {
        let _lock = self.lock()?;
        let mut report = GcReport::default();
        let tmp = self.root.join(".tmp");
        if let Ok(rd) = std::fs::read_dir(&tmp) {
            for entry in rd.flatten() {
                let path = entry.path();
                std::fs::remove_dir_all(&path)
                    .or_else(|_| std::fs::remove_file(&path))
                    .map_err(io(&path))?;
                report.temp_dirs.push(path);
            }
        }
        if let Ok(names) = std::fs::read_dir(&self.root) {
            for entry in names.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if name.starts_with('.') || !entry.path().is_dir() {
                    continue;
                }
                let Ok(versions) = std::fs::read_dir(entry.path()) else {
                    continue;
                };
                for v in versions.flatten() {
                    let path = v.path();
                    let whole = self.read_installed(&path).is_ok_and(|b| {
                        b.manifest.name == name
                            && b.manifest.version == v.file_name().to_string_lossy()
                    });
                    if !whole {
                        std::fs::remove_dir_all(&path)
                            .or_else(|_| std::fs::remove_file(&path))
                            .map_err(io(&path))?;
                        report.broken.push(path);
                    }
                }
            }
        }
        let all = self.list()?;
        for bundle in &all {
            let newer = all.iter().any(|other| {
                other.manifest.name == bundle.manifest.name
                    && compare_versions(&other.manifest.version, &bundle.manifest.version).is_gt()
            });
            if newer {
                std::fs::remove_dir_all(&bundle.dir).map_err(io(&bundle.dir))?;
                report.superseded.push(bundle.label());
            }
        }
        Ok(report)
    }

    /// A resolver over the installed bundles (the newest version of each, ties between
    /// versions that compare equal broken by their text), in this order: bundles installed as
    /// official ([`Origin::official`]) before third-party ones; within each class those named
    /// in `order` (in that order), then the others by name (byte order). Pins
    /// ([`BundleStore::pins`]) are read now and decide before the order.
    ///
    /// # Errors
    /// When the cache cannot be read, or the pins file is damaged ([`BundleError::Pins`]).
    pub fn resolver(&self, order: &[String]) -> Result<Resolver, BundleError> {
        let mut newest: Vec<InstalledBundle> = Vec::new();
        for bundle in self.list()? {
            match newest
                .iter_mut()
                .find(|b| b.manifest.name == bundle.manifest.name)
            {
                Some(slot) => {
                    // `list` sorts by version, so the last of a name is its newest.
                    *slot = bundle;
                }
                None => newest.push(bundle),
            }
        }
        newest.sort_by_key(|b| {
            (
                !b.origin.official,
                order
                    .iter()
                    .position(|n| *n == b.manifest.name)
                    .unwrap_or(usize::MAX),
                b.manifest.name.clone(),
            )
        });
        Ok(Resolver {
            store: self.clone(),
            bundles: newest,
            order: order.to_vec(),
            pins: self.pins()?,
        })
    }
}

/// The pins file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PinsFile {
    #[serde(default)]
    pins: BTreeMap<String, String>,
}

fn check(component: &str) -> Result<(), BundleError> {
    relpath::check_component(component).map_err(|why| BundleError::BadName {
        value: component.to_string(),
        why,
    })
}

fn verify_files(bundle: &InstalledBundle) -> Result<(), VerifyError> {
    for asset in &bundle.manifest.assets {
        let path = bundle.dir.join(&asset.path);
        let (sha, size) =
            crate::digest::sha256_file(&path).map_err(|_| VerifyError::SizeMismatch {
                path: asset.path.clone(),
                expected: asset.size,
                actual: 0,
            })?;
        verify::check_digest(asset, &sha, size)?;
    }
    Ok(())
}

/// Finds commands across installed bundles, in a fixed order (see [`BundleStore::resolver`]).
#[derive(Clone, Debug)]
pub struct Resolver {
    store: BundleStore,
    bundles: Vec<InstalledBundle>,
    order: Vec<String>,
    pins: BTreeMap<String, String>,
}

/// Why a command resolved to its bundle ([`Resolved::reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// The user pinned the command to this bundle ([`BundleStore::pin`]).
    Pinned,
    /// The bundle is official and the first official one providing it (in the caller's order,
    /// then by name).
    Official,
    /// No official bundle provides it; this third-party bundle is the first the caller's
    /// order names.
    Preferred,
    /// No official bundle provides it; this third-party bundle comes first by name.
    ByName,
}

impl Resolution {
    /// A word for output: `pinned`, `official`, `preferred`, `by-name`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pinned => "pinned",
            Self::Official => "official",
            Self::Preferred => "preferred",
            Self::ByName => "by-name",
        }
    }
}

/// What became of another bundle that provides a resolved command ([`Resolved::others`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherStatus {
    /// A third-party command an official bundle also provides: refused, runnable only by
    /// pinning it.
    Refused,
    /// Comes later in the order (or the command is pinned elsewhere).
    Shadowed,
}

impl OtherStatus {
    /// A word for output: `refused`, `shadowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refused => "refused",
            Self::Shadowed => "shadowed",
        }
    }
}

/// Where a command comes from (not yet verified; see [`Resolver::load`]).
#[derive(Clone, Debug)]
pub struct Resolved<'a> {
    /// The bundle.
    pub bundle: &'a InstalledBundle,
    /// Its entry for the command.
    pub entry: &'a crate::manifest::CommandEntry,
    /// Why this bundle.
    pub reason: Resolution,
    /// Every other installed bundle that provides the command, in resolution order, and what
    /// became of it.
    pub others: Vec<(&'a InstalledBundle, OtherStatus)>,
}

impl Resolved<'_> {
    /// One sentence on why the command resolved here and what else provides it, ending with
    /// how to change it: for `agent bundles which`.
    pub fn explain(&self) -> String {
        let command = &self.entry.name;
        let class = |b: &InstalledBundle| {
            if b.origin.official {
                "official"
            } else {
                "third-party"
            }
        };
        let mut out = match self.reason {
            Resolution::Pinned => format!(
                "pinned to {} (`agent bundles unpin {command}` to undo)",
                self.bundle.manifest.name
            ),
            Resolution::Official => "official".to_string(),
            Resolution::Preferred => {
                "third-party, first in the --prefer order (no official bundle provides it)"
                    .to_string()
            }
            Resolution::ByName => {
                "third-party, first by name (no official bundle provides it)".to_string()
            }
        };
        for (other, status) in &self.others {
            let name = &other.manifest.name;
            out.push_str(&match status {
                OtherStatus::Refused => format!(
                    "; also in {} ({}): refused, official bundles win every name clash (`agent bundles pin {command} {name}` to use it)",
                    other.label(),
                    class(other)
                ),
                OtherStatus::Shadowed => format!(
                    "; also in {} ({}): not used (`agent bundles pin {command} {name}` to use it)",
                    other.label(),
                    class(other)
                ),
            });
        }
        out
    }
}

/// A command provided both by an official bundle and by third-party ones
/// ([`Resolver::clashes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clash {
    /// The command.
    pub command: String,
    /// The official bundle that provides it and wins (`name@version`).
    pub official: String,
    /// The third-party bundles that also provide it (`name@version`, in resolution order).
    pub third_party: Vec<String>,
    /// The bundle (name) it is pinned to, if any: then the pin decides.
    pub pinned: Option<String>,
}

impl Resolver {
    /// The bundles searched, in order.
    pub fn bundles(&self) -> &[InstalledBundle] {
        &self.bundles
    }

    /// The pins in force: command name → bundle name.
    pub fn pins(&self) -> &BTreeMap<String, String> {
        &self.pins
    }

    /// Every command name available, in resolution order, each once.
    pub fn commands(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for b in &self.bundles {
            for c in &b.manifest.commands {
                if !out.contains(&c.name) {
                    out.push(c.name.clone());
                }
            }
        }
        out
    }

    /// The bundles providing `command`, in resolution order (pins aside).
    pub fn providers(&self, command: &str) -> Vec<&InstalledBundle> {
        self.bundles
            .iter()
            .filter(|b| b.manifest.command(command).is_some())
            .collect()
    }

    fn position(&self, bundle: &InstalledBundle) -> usize {
        self.order
            .iter()
            .position(|n| *n == bundle.manifest.name)
            .unwrap_or(usize::MAX)
    }

    /// The bundle that provides `command`: the one it is pinned to; else the first official
    /// bundle providing it (official bundles win every name clash); else the first
    /// third-party one (the caller's order, then by name).
    ///
    /// # Errors
    /// [`BundleError::UnknownCommand`], listing what is installed;
    /// [`BundleError::PinBroken`] when the pinned bundle is gone or no longer provides it
    /// (never a fall-back: the pin said which code runs); [`BundleError::Shadowed`] when the
    /// caller's order puts a third-party bundle providing it before the official one that
    /// wins (the third-party command is refused unless pinned).
    pub fn which(&self, command: &str) -> Result<Resolved<'_>, BundleError> {
        let providers = self.providers(command);
        if let Some(pinned) = self.pins.get(command) {
            let Some(bundle) = self.bundles.iter().find(|b| b.manifest.name == *pinned) else {
                return Err(BundleError::PinBroken {
                    command: command.to_string(),
                    bundle: pinned.clone(),
                    why: "is not installed".into(),
                });
            };
            let Some(entry) = bundle.manifest.command(command) else {
                return Err(BundleError::PinBroken {
                    command: command.to_string(),
                    bundle: pinned.clone(),
                    why: format!(
                        "no longer provides it ({} has no such command)",
                        bundle.label()
                    ),
                });
            };
            let others = providers
                .iter()
                .filter(|b| b.manifest.name != *pinned)
                .map(|b| (*b, OtherStatus::Shadowed))
                .collect();
            return Ok(Resolved {
                bundle,
                entry,
                reason: Resolution::Pinned,
                others,
            });
        }
        let Some(first) = providers.first().copied() else {
            let mut installed = self.commands();
            installed.sort();
            return Err(BundleError::UnknownCommand {
                command: command.to_string(),
                installed: if installed.is_empty() {
                    "none: install a bundle with `agent bundles install`".into()
                } else {
                    installed.join(", ")
                },
            });
        };
        let reason = if first.origin.official {
            // A third-party bundle the caller put before the official winner would have
            // replaced it under the plain order: refuse it loudly rather than run either
            // silently.
            if let Some(preferred) = providers
                .iter()
                .find(|b| !b.origin.official && self.position(b) < self.position(first))
            {
                return Err(BundleError::Shadowed {
                    command: command.to_string(),
                    third_party: preferred.label(),
                    third_party_name: preferred.manifest.name.clone(),
                    official: first.label(),
                });
            }
            Resolution::Official
        } else if self.position(first) != usize::MAX {
            Resolution::Preferred
        } else {
            Resolution::ByName
        };
        let others = providers[1..]
            .iter()
            .map(|b| {
                let status = if first.origin.official && !b.origin.official {
                    OtherStatus::Refused
                } else {
                    OtherStatus::Shadowed
                };
                (*b, status)
            })
            .collect();
        let entry = first
            .manifest
            .command(command)
            .ok_or_else(|| BundleError::UnknownCommand {
                command: command.to_string(),
                installed: String::new(),
            })?;
        Ok(Resolved {
            bundle: first,
            entry,
            reason,
            others,
        })
    }

    /// Every command that an official bundle and a third-party bundle both provide, by
    /// command name: the official one wins unless the command is pinned.
    pub fn clashes(&self) -> Vec<Clash> {
        let mut names = self.commands();
        names.sort();
        let mut out = Vec::new();
        for command in names {
            let providers = self.providers(&command);
            let Some(official) = providers.iter().find(|b| b.origin.official) else {
                continue;
            };
            let third_party: Vec<String> = providers
                .iter()
                .filter(|b| !b.origin.official)
                .map(|b| b.label())
                .collect();
            if third_party.is_empty() {
                continue;
            }
            out.push(Clash {
                official: official.label(),
                third_party,
                pinned: self.pins.get(&command).cloned(),
                command,
            });
        }
        out
    }

    /// Resolves `command` and checks its manifest as [`Resolver::load`] does (the signature
    /// under `trust`'s current policy, and a signature at all when `require_signature`), without
    /// reading the module: the module's sha256 as that manifest gives it (lowercase). For a
    /// runner that keeps what it made from verified bytes under their sha256 (compiled code) and
    /// can skip reading and hashing the module when it has them; else [`Resolver::load`].
    ///
    /// # Errors
    /// As [`Resolver::load`], except that the module file is not read, so a changed or missing
    /// module is not noticed (nor repaired) here.
    pub fn module_sha256(
        &self,
        command: &str,
        trust: &TrustStore,
        require_signature: bool,
    ) -> Result<String, BundleError> {
        let resolved = self.which(command)?;
        self.check_manifest(resolved.bundle, trust, require_signature)?;
        let asset = resolved
            .bundle
            .manifest
            .asset(&resolved.entry.module_path)
            .ok_or_else(|| BundleError::Verify {
                label: resolved.bundle.label(),
                error: Box::new(VerifyError::SizeMismatch {
                    path: resolved.entry.module_path.clone(),
                    expected: 0,
                    actual: 0,
                }),
            })?;
        Ok(asset.sha256.to_ascii_lowercase())
    }

    /// Resolves `command` and loads its module, verified: the manifest's signature under
    /// `trust`'s current policy for the bundle's registry (and a signature at all when
    /// `require_signature`), then the module's size and sha256. A module whose bytes changed
    /// on disk is re-fetched from its registry and verified; it is never returned as it was.
    ///
    /// # Errors
    /// Unknown commands, verification failures, and [`BundleError::Tampered`] when a changed
    /// file could not be re-fetched.
    pub fn load(
        &self,
        command: &str,
        trust: &TrustStore,
        require_signature: bool,
    ) -> Result<LoadedModule, BundleError> {
        let resolved = self.which(command)?;
        let bundle = resolved.bundle;
        let label = bundle.label();
        let _span = tracing::debug_span!("bundle.load", bundle = %label, command).entered();
        let signature = self.check_manifest(bundle, trust, require_signature)?;
        let asset = bundle
            .manifest
            .asset(&resolved.entry.module_path)
            .ok_or_else(|| BundleError::Verify {
                label: label.clone(),
                error: Box::new(VerifyError::SizeMismatch {
                    path: resolved.entry.module_path.clone(),
                    expected: 0,
                    actual: 0,
                }),
            })?;
        let path = bundle.dir.join(&asset.path);
        let read = std::fs::read(&path);
        let problem = match &read {
            Ok(bytes) => verify::verify_asset(asset, bytes).err(),
            Err(_) => Some(VerifyError::SizeMismatch {
                path: asset.path.clone(),
                expected: asset.size,
                actual: 0,
            }),
        };
        let (bytes, repaired) = match (read, problem) {
            (Ok(bytes), None) => (bytes, false),
            (_, Some(error)) => {
                tracing::warn!(bundle = %label, %error, "cached module changed; re-fetching");
                let bytes = self.repair(bundle, trust, &asset.path, error)?;
                (bytes, true)
            }
            (Err(e), None) => return Err(io(&path)(e)),
        };
        Ok(LoadedModule {
            bundle: bundle.manifest.name.clone(),
            version: bundle.manifest.version.clone(),
            command: command.to_string(),
            path,
            bytes: bytes.into(),
            sha256: asset.sha256.to_ascii_lowercase(),
            limits: resolved.entry.limits,
            signature,
            repaired,
        })
    }

    /// Loads every command the resolver can reach (each module read and verified once, shared
    /// by the commands that use it), in resolution order; a command shadowed by an earlier
    /// bundle is left out. What a runner does at start-up.
    ///
    /// # Errors
    /// As [`Resolver::load`], for the first command that fails.
    pub fn load_all(
        &self,
        trust: &TrustStore,
        require_signature: bool,
    ) -> Result<Vec<LoadedModule>, BundleError> {
        let mut out: Vec<LoadedModule> = Vec::new();
        for name in self.commands() {
            let resolved = self.which(&name)?;
            let shared = out.iter().find(|m| {
                m.bundle == resolved.bundle.manifest.name
                    && m.version == resolved.bundle.manifest.version
                    && m.path == resolved.bundle.dir.join(&resolved.entry.module_path)
            });
            let module = match shared {
                Some(m) => LoadedModule {
                    command: name.clone(),
                    limits: resolved.entry.limits,
                    ..m.clone()
                },
                None => self.load(&name, trust, require_signature)?,
            };
            out.push(module);
        }
        Ok(out)
    }

    fn check_manifest(
        &self,
        bundle: &InstalledBundle,
        trust: &TrustStore,
        require_signature: bool,
    ) -> Result<SignatureStatus, BundleError> {
        let policy = trust.policy_for(&bundle.origin.registry);
        let label = bundle.label();
        if bundle.origin.official && !policy.official {
            // It was ranked before third-party bundles for being official; it no longer is.
            return Err(BundleError::NoLongerOfficial {
                label,
                name: bundle.manifest.name.clone(),
                registry: bundle.origin.registry.clone(),
            });
        }
        let status = if require_signature && !policy.require_signature {
            verify::verify_signature_with(&bundle.manifest, &trust.all_keys(), &policy.registry)
        } else {
            verify::verify_manifest(&bundle.manifest, &policy)
        };
        status.map_err(|error| BundleError::Verify {
            label,
            error: Box::new(error),
        })
    }

    fn repair(
        &self,
        bundle: &InstalledBundle,
        trust: &TrustStore,
        asset_path: &str,
        error: VerifyError,
    ) -> Result<Vec<u8>, BundleError> {
        let label = bundle.label();
        let tampered = |repair: String| BundleError::Tampered {
            label: label.clone(),
            error: Box::new(error.clone()),
            registry: bundle.origin.registry.clone(),
            repair,
        };
        let registry =
            Registry::open(&bundle.origin.registry).map_err(|e| tampered(e.to_string()))?;
        let outcome = self
            .store
            .install(
                &registry,
                trust,
                &bundle.manifest.name,
                Some(&bundle.manifest.version),
            )
            .map_err(|e| tampered(e.to_string()))?;
        let asset = outcome.bundle.manifest.asset(asset_path).ok_or_else(|| {
            tampered(format!(
                "the registry's manifest no longer lists {asset_path}"
            ))
        })?;
        let path = outcome.bundle.dir.join(asset_path);
        let bytes = std::fs::read(&path).map_err(|e| tampered(e.to_string()))?;
        verify::verify_asset(asset, &bytes).map_err(|e| tampered(e.to_string()))?;
        Ok(bytes)
    }
}
