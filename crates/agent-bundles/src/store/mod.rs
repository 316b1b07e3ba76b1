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

mod error;
mod install;
mod pins;
mod resolve;

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::manifest::{CommandLimits, Manifest};
use crate::registry::compare_versions;
use crate::relpath;
use crate::verify::{self, SignatureStatus, VerifyError};

pub use self::error::BundleError;
use self::error::io;
pub use self::resolve::{Clash, OtherStatus, Resolution, Resolved, Resolver};

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
