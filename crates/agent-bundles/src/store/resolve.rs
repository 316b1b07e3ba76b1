//! Resolving a command name to the installed bundle that provides it, and loading its module.

use std::collections::BTreeMap;

use super::{BundleError, BundleStore, InstalledBundle, LoadedModule, io};
use crate::registry::Registry;
use crate::trust::TrustStore;
use crate::verify::{self, SignatureStatus, VerifyError};

impl BundleStore {
    /// A resolver over the installed bundles (the newest version of each, ties between
    /// versions that compare equal broken by their text), in this order: bundles installed as
    /// official ([`Origin::official`](super::Origin::official)) before third-party ones; within each class those named
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
        let (_, asset, _) = self.checked_asset(command, trust, require_signature)?;
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
        let span =
            tracing::debug_span!("bundle.load", bundle = tracing::field::Empty, command).entered();
        let (resolved, asset, signature) = self.checked_asset(command, trust, require_signature)?;
        let bundle = resolved.bundle;
        let label = bundle.label();
        span.record("bundle", tracing::field::display(&label));
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

    /// `command` resolved, its bundle's manifest checked ([`Self::check_manifest`]), and the
    /// manifest's entry for the command's module: what [`Resolver::load`] and
    /// [`Resolver::module_sha256`] both start from.
    fn checked_asset(
        &self,
        command: &str,
        trust: &TrustStore,
        require_signature: bool,
    ) -> Result<(Resolved<'_>, &crate::manifest::Asset, SignatureStatus), BundleError> {
        let resolved = self.which(command)?;
        let signature = self.check_manifest(resolved.bundle, trust, require_signature)?;
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
        Ok((resolved, asset, signature))
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
