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
//! - **Resolve** finds a command by name across installed bundles: bundles named in the
//!   caller's order first, then the rest by name; the newest version of each.

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
        Ok(removed)
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

    /// A resolver over the installed bundles: those named in `order` first (in that order),
    /// then the others by name; the newest version of each.
    ///
    /// # Errors
    /// When the cache cannot be read.
    pub fn resolver(&self, order: &[String]) -> Result<Resolver, BundleError> {
        let mut newest: Vec<InstalledBundle> = Vec::new();
        for bundle in self.list()? {
            match newest
                .iter_mut()
                .find(|b| b.manifest.name == bundle.manifest.name)
            {
                Some(slot) => {
                    if compare_versions(&bundle.manifest.version, &slot.manifest.version).is_gt() {
                        *slot = bundle;
                    }
                }
                None => newest.push(bundle),
            }
        }
        newest.sort_by_key(|b| {
            (
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
        })
    }
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

/// Finds commands across installed bundles, in a fixed order.
#[derive(Clone, Debug)]
pub struct Resolver {
    store: BundleStore,
    bundles: Vec<InstalledBundle>,
}

/// Where a command comes from (not yet verified; see [`Resolver::load`]).
#[derive(Clone, Debug)]
pub struct Resolved<'a> {
    /// The bundle.
    pub bundle: &'a InstalledBundle,
    /// Its entry for the command.
    pub entry: &'a crate::manifest::CommandEntry,
}

impl Resolver {
    /// The bundles searched, in order.
    pub fn bundles(&self) -> &[InstalledBundle] {
        &self.bundles
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

    /// The first bundle providing `command`.
    ///
    /// # Errors
    /// [`BundleError::UnknownCommand`], listing what is installed.
    pub fn which(&self, command: &str) -> Result<Resolved<'_>, BundleError> {
        for bundle in &self.bundles {
            if let Some(entry) = bundle.manifest.command(command) {
                return Ok(Resolved { bundle, entry });
            }
        }
        let mut installed = self.commands();
        installed.sort();
        Err(BundleError::UnknownCommand {
            command: command.to_string(),
            installed: if installed.is_empty() {
                "none: install a bundle with `agent bundles install`".into()
            } else {
                installed.join(", ")
            },
        })
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
