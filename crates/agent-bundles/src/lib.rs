//! Signed WASI tool bundles: every WASI command the agent runs comes from a bundle whose bytes
//! were verified.
//!
//! A bundle is a set of WebAssembly modules plus `manifest.json` ([`manifest`]): its name and
//! version, every asset with its sha256 and size, the commands and the module each runs, and an
//! optional ed25519 signature over the manifest's canonical JSON ([`canonical`],
//! [`manifest::Manifest::signed_payload`]). The format is the TypeScript SDK's (seed 004), so
//! a manifest signed there verifies here and ours there.
//!
//! The model, in the order things happen:
//! 1. [`registry::Registry`]: a static tree (`index.json`, `bundles/<name>/<version>/…`) in a
//!    directory or behind an http(s) URL.
//! 2. [`trust::TrustStore`]: which keys are trusted, and which registries they are official
//!    for. Official registries need a valid signature from a key official for them plus every
//!    sha256 and size; third-party registries need sha256 and size, and a signature only when
//!    the user configured keys for them ([`verify`]).
//! 3. [`store::BundleStore`]: the local cache. Installs verify before anything is written to
//!    the cache and are atomic; loads verify again, and a cache file changed on disk is
//!    re-fetched, never run ([`store::Resolver::load`]).
//! 4. [`keys`] and [`pack`]: making key pairs, manifests and registries.
//!
//! ```
//! use agent_bundles::{keys::KeyPair, manifest::Manifest, trust::RegistryPolicy, verify};
//!
//! let manifest = Manifest::parse(br#"{"name":"demo","version":"1.0.0",
//!     "assets":[{"path":"echo.wasm","size":0,
//!       "sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}],
//!     "commands":[{"name":"echo","modulePath":"echo.wasm"}]}"#)?;
//! let key = KeyPair::generate("me")?;
//! let signed = verify::sign_manifest(&manifest, &key);
//! let policy = RegistryPolicy {
//!     registry: "/srv/registry".into(), official: true, require_signature: true,
//!     keys: vec![key.public()],
//! };
//! assert!(verify::verify_manifest(&signed, &policy).is_ok());
//! assert!(verify::verify_manifest(&manifest, &policy).is_err()); // unsigned
//! verify::verify_asset(&signed.assets[0], b"")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod canonical;
pub mod digest;
pub mod keys;
pub mod manifest;
pub mod pack;
pub mod registry;
pub mod relpath;
pub mod store;
pub mod trust;
pub mod verify;
