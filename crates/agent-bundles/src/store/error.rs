//! What the store could not do.

use std::path::{Path, PathBuf};

use crate::manifest::ManifestError;
use crate::registry::RegistryError;
use crate::verify::VerifyError;

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

/// Maps an I/O error on `path` to [`BundleError::Io`].
pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    }
}
