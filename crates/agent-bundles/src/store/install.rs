//! Installing a bundle: fetched and verified in a staging directory, then renamed into place.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{
    BundleError, BundleStore, InstallOutcome, InstallStatus, InstalledBundle, MANIFEST_FILE,
    ORIGIN_FILE, Origin, check, io, verify_files,
};
use crate::digest::sha256_hex;
use crate::manifest::Manifest;
use crate::registry::{Registry, RegistryError};
use crate::trust::TrustStore;
use crate::verify::{self, SignatureStatus, VerifyError};

/// A manifest fetched from a registry and verified under its policy, before anything is
/// downloaded.
struct Fetched {
    /// `name@version`.
    label: String,
    version: String,
    /// The manifest exactly as fetched (it is stored as is).
    bytes: Vec<u8>,
    manifest: Manifest,
    signature: SignatureStatus,
    /// Whether the registry's policy makes its bundles official.
    official: bool,
}

impl BundleStore {
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
        let fetched = fetch_manifest(registry, trust, name, version, label)?;

        let _lock = self.lock()?;
        let final_dir = self.root.join(name).join(&fetched.version);
        let mut replacing = false;
        if final_dir.exists() {
            match self.read_installed(&final_dir) {
                Ok(existing)
                    if existing.manifest.to_pretty_json() == fetched.manifest.to_pretty_json()
                        && existing.origin.registry == registry.id()
                        && verify_files(&existing).is_ok() =>
                {
                    return Ok(InstallOutcome {
                        bundle: existing,
                        status: InstallStatus::AlreadyInstalled,
                        signature: fetched.signature,
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
        let bytes_fetched = download_assets(registry, name, &fetched, staging.path())?;
        let origin = write_records(registry, &fetched, staging.path())?;

        let parent = self.root.join(name);
        std::fs::create_dir_all(&parent).map_err(io(&parent))?;
        move_into_place(
            staging.keep(),
            &final_dir,
            replacing,
            &tmp_root,
            name,
            &fetched,
        )?;
        tracing::info!(bundle = %fetched.label, bytes = bytes_fetched, "installed");
        Ok(InstallOutcome {
            bundle: InstalledBundle {
                dir: final_dir,
                manifest: fetched.manifest,
                origin,
            },
            status: if replacing {
                InstallStatus::Replaced
            } else {
                InstallStatus::Installed
            },
            signature: fetched.signature,
            bytes_fetched,
        })
    }
}

/// Fetches the manifest of `name` at `version`, checks it names that bundle, and verifies its
/// signature under `trust`'s policy for the registry.
fn fetch_manifest(
    registry: &Registry,
    trust: &TrustStore,
    name: &str,
    version: String,
    label: String,
) -> Result<Fetched, BundleError> {
    let bytes = registry.manifest_bytes(name, &version)?;
    let manifest = Manifest::parse(&bytes).map_err(|error| BundleError::Manifest {
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
    Ok(Fetched {
        label,
        version,
        bytes,
        manifest,
        signature,
        official: policy.official,
    })
}

/// Downloads every asset of the manifest into `staging`, each checked against its size and
/// sha256 as it arrives; the bytes fetched.
fn download_assets(
    registry: &Registry,
    name: &str,
    fetched: &Fetched,
    staging: &Path,
) -> Result<u64, BundleError> {
    let label = &fetched.label;
    let mut total = 0u64;
    for asset in &fetched.manifest.assets {
        let dest = staging.join(&asset.path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let mut file = File::create(&dest).map_err(io(&dest))?;
        let got = registry
            .fetch_asset(name, &fetched.version, &asset.path, asset.size, &mut file)
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
        total += got.size;
    }
    Ok(total)
}

/// Writes the manifest as fetched and `origin.json` (where it came from, who signed it, when)
/// into `staging`; the origin.
fn write_records(
    registry: &Registry,
    fetched: &Fetched,
    staging: &Path,
) -> Result<Origin, BundleError> {
    let manifest_path = staging.join(MANIFEST_FILE);
    std::fs::write(&manifest_path, &fetched.bytes).map_err(io(&manifest_path))?;
    let origin = Origin {
        registry: registry.id().to_string(),
        official: fetched.official,
        signed_by: match &fetched.signature {
            SignatureStatus::Verified { key_id } => Some(key_id.clone()),
            SignatureStatus::NotRequired { .. } => None,
        },
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let origin_path = staging.join(ORIGIN_FILE);
    let mut origin_text = serde_json::to_vec_pretty(&origin).unwrap_or_default();
    origin_text.push(b'\n');
    std::fs::write(&origin_path, origin_text).map_err(io(&origin_path))?;
    Ok(origin)
}

/// Renames the staged directory to `final_dir`; a version being replaced is moved aside
/// first and put back if the rename fails, so the cache never holds half of either.
fn move_into_place(
    staged: PathBuf,
    final_dir: &Path,
    replacing: bool,
    tmp_root: &Path,
    name: &str,
    fetched: &Fetched,
) -> Result<(), BundleError> {
    let mut old = None;
    if replacing && final_dir.exists() {
        let aside = tmp_root.join(format!(
            "old-{name}-{}-{}",
            fetched.version,
            sha256_hex(staged.to_string_lossy().as_bytes())
                .get(..12)
                .unwrap_or("x")
        ));
        std::fs::rename(final_dir, &aside).map_err(io(final_dir))?;
        old = Some(aside);
    }
    if let Err(e) = std::fs::rename(&staged, final_dir) {
        let _ = std::fs::remove_dir_all(&staged);
        if let Some(aside) = &old {
            let _ = std::fs::rename(aside, final_dir);
        }
        return Err(io(final_dir)(e));
    }
    if let Some(aside) = old {
        let _ = std::fs::remove_dir_all(aside);
    }
    Ok(())
}
