//! Registries (a directory and a loopback HTTP server), installs, the cache's re-verification,
//! resolution, removal and gc.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agent_bundles::keys::KeyPair;
use agent_bundles::pack;
use agent_bundles::registry::Registry;
use agent_bundles::store::{BundleError, BundleStore, InstallStatus};
use agent_bundles::trust::{TrustStore, registry_id};
use agent_bundles::verify::{self, VerifyError};
use serde_json::json;

struct Fixture {
    _dir: tempfile::TempDir,
    registry: PathBuf,
    cache: PathBuf,
    trust_path: PathBuf,
    key: KeyPair,
}

/// A registry with `tools@1.0.0` (commands hello, bye) and `tools@1.1.0` (hello, bye, extra),
/// and `other@0.1.0` (hello), all signed by `key`.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("registry");
    let modules = dir.path().join("modules");
    std::fs::create_dir_all(modules.join("sub")).unwrap();
    std::fs::write(modules.join("one.wasm"), b"\0asm module one").unwrap();
    std::fs::write(modules.join("sub/two.wasm"), vec![7u8; 200_000]).unwrap();
    let key = KeyPair::generate("test-key").unwrap();
    let specs = [
        json!({"name": "tools", "version": "1.0.0", "commands": [
            {"name": "hello", "modulePath": "one.wasm"},
            {"name": "bye", "modulePath": "sub/two.wasm"}]}),
        json!({"name": "tools", "version": "1.1.0", "commands": [
            {"name": "hello", "modulePath": "one.wasm", "limits": {"wallMs": 1234}},
            {"name": "bye", "modulePath": "sub/two.wasm"},
            {"name": "extra", "modulePath": "one.wasm"}]}),
        json!({"name": "other", "version": "0.1.0", "commands": [
            {"name": "hello", "modulePath": "one.wasm"}]}),
    ];
    for spec in specs {
        let manifest = pack::build_manifest(&spec, &modules).unwrap();
        let signed = verify::sign_manifest(&manifest, &key);
        pack::publish(&signed, &modules, &registry).unwrap();
    }
    Fixture {
        cache: dir.path().join("cache"),
        trust_path: dir.path().join("trusted.json"),
        registry,
        key,
        _dir: dir,
    }
}

impl Fixture {
    fn trust_official(&self) -> TrustStore {
        let mut trust = TrustStore::load(&self.trust_path).unwrap();
        trust.trust(
            &self.key.public(),
            &[registry_id(self.registry.to_str().unwrap())],
            &[],
        );
        trust.save().unwrap();
        trust
    }

    fn store(&self) -> BundleStore {
        BundleStore::new(&self.cache)
    }

    fn registry(&self) -> Registry {
        Registry::open(self.registry.to_str().unwrap()).unwrap()
    }

    fn manifest_path(&self, name: &str, version: &str) -> PathBuf {
        self.registry
            .join("bundles")
            .join(name)
            .join(version)
            .join("manifest.json")
    }
}

fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            out.push(name.clone());
            if e.path().is_dir() {
                out.extend(tree(&e.path()).into_iter().map(|c| format!("{name}/{c}")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn install_from_a_directory_registry_then_resolve_and_load() {
    let f = fixture();
    let trust = f.trust_official();
    let store = f.store();
    let outcome = store.install(&f.registry(), &trust, "tools", None).unwrap();
    assert_eq!(outcome.status, InstallStatus::Installed);
    assert_eq!(
        outcome.bundle.manifest.version, "1.1.0",
        "newest from index.json"
    );
    assert!(outcome.bundle.origin.official);
    assert_eq!(outcome.bundle.origin.signed_by.as_deref(), Some("test-key"));
    assert_eq!(outcome.bytes_fetched, 200_000 + 15);

    let again = store
        .install(&f.registry(), &trust, "tools", Some("1.1.0"))
        .unwrap();
    assert_eq!(again.status, InstallStatus::AlreadyInstalled);
    assert_eq!(again.bytes_fetched, 0);

    store
        .install(&f.registry(), &trust, "tools", Some("1.0.0"))
        .unwrap();
    store.install(&f.registry(), &trust, "other", None).unwrap();
    let labels: Vec<String> = store.list().unwrap().iter().map(|b| b.label()).collect();
    assert_eq!(labels, ["other@0.1.0", "tools@1.0.0", "tools@1.1.0"]);

    // Default order: bundles by name, newest version each.
    let resolver = store.resolver(&[]).unwrap();
    assert_eq!(
        resolver.which("hello").unwrap().bundle.label(),
        "other@0.1.0"
    );
    assert_eq!(
        resolver.which("extra").unwrap().bundle.label(),
        "tools@1.1.0"
    );
    // A configured order wins.
    let resolver = store.resolver(&["tools".into()]).unwrap();
    let loaded = resolver.load("hello", &trust, true).unwrap();
    assert_eq!(
        (loaded.bundle.as_str(), loaded.version.as_str()),
        ("tools", "1.1.0")
    );
    assert_eq!(&*loaded.bytes, b"\0asm module one");
    assert_eq!(loaded.limits.unwrap().wall_ms, Some(1234));
    assert!(!loaded.repaired);

    let all = resolver.load_all(&trust, true).unwrap();
    let names: Vec<&str> = all.iter().map(|m| m.command.as_str()).collect();
    assert_eq!(names, ["hello", "bye", "extra"]);
    assert!(
        std::sync::Arc::ptr_eq(&all[0].bytes, &all[2].bytes),
        "one read per module"
    );
    assert_eq!(all[0].bundle, "tools");

    let err = resolver.which("nope").unwrap_err().to_string();
    assert_eq!(
        err,
        "nope: command not found in the installed bundles; installed commands: bye, extra, hello"
    );
}

#[test]
fn an_official_registry_refuses_unsigned_and_foreign_signed_manifests() {
    let f = fixture();
    let trust = f.trust_official();
    // Strip the signature of tools@1.0.0.
    let path = f.manifest_path("tools", "1.0.0");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("signature");
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    let err = f
        .store()
        .install(&f.registry(), &trust, "tools", Some("1.0.0"))
        .unwrap_err();
    assert!(
        matches!(&err, BundleError::Verify { error, .. } if matches!(**error, VerifyError::MissingSignature { .. })),
        "{err}"
    );
    // Signed by a key that is not trusted for this registry.
    let stranger = KeyPair::generate("stranger").unwrap();
    let manifest = agent_bundles::manifest::Manifest::from_value(value).unwrap();
    std::fs::write(
        &path,
        verify::sign_manifest(&manifest, &stranger).to_pretty_json(),
    )
    .unwrap();
    let err = f
        .store()
        .install(&f.registry(), &trust, "tools", Some("1.0.0"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown signature keyId `stranger`"),
        "{err}"
    );
    assert!(tree(&f.cache.join("tools")).is_empty(), "nothing installed");
}

#[test]
fn a_third_party_registry_needs_hashes_and_a_signature_only_with_configured_keys() {
    let f = fixture();
    let path = f.manifest_path("other", "0.1.0");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("signature");
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();

    let empty = TrustStore::load(&f.trust_path).unwrap();
    let outcome = f
        .store()
        .install(&f.registry(), &empty, "other", None)
        .unwrap();
    assert!(!outcome.bundle.origin.official);
    assert_eq!(outcome.bundle.origin.signed_by, None);

    // With a key configured for the registry, the same unsigned manifest is refused.
    let mut trust = TrustStore::load(&f.trust_path).unwrap();
    trust.trust(
        &f.key.public(),
        &[],
        &[registry_id(f.registry.to_str().unwrap())],
    );
    let other_cache = BundleStore::new(f.cache.with_extension("2"));
    let err = other_cache
        .install(&f.registry(), &trust, "other", None)
        .unwrap_err();
    assert!(
        err.to_string().contains("manifest signature required"),
        "{err}"
    );

    // A wrong hash in a third-party registry is refused, and nothing is installed.
    let asset = f.registry.join("bundles/tools/1.0.0/sub/two.wasm");
    let mut bytes = std::fs::read(&asset).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&asset, &bytes).unwrap();
    let err = BundleStore::new(f.cache.with_extension("3"))
        .install(&f.registry(), &empty, "tools", Some("1.0.0"))
        .unwrap_err();
    assert!(
        matches!(&err, BundleError::Verify { error, .. } if matches!(&**error, VerifyError::HashMismatch { path, .. } if path == "sub/two.wasm")),
        "{err}"
    );
    // A longer file is a size mismatch, found while streaming.
    bytes.push(0);
    std::fs::write(&asset, &bytes).unwrap();
    let err = BundleStore::new(f.cache.with_extension("3"))
        .install(&f.registry(), &empty, "tools", Some("1.0.0"))
        .unwrap_err();
    assert!(
        matches!(&err, BundleError::Verify { error, .. } if matches!(**error, VerifyError::SizeMismatch { .. })),
        "{err}"
    );
    assert!(tree(&f.cache.with_extension("3").join("tools")).is_empty());
    assert!(tree(&f.cache.with_extension("3").join(".tmp")).is_empty());
}

#[test]
fn a_registry_serving_another_bundle_at_a_path_is_refused() {
    let f = fixture();
    let trust = f.trust_official();
    let from = f.manifest_path("tools", "1.0.0");
    let to = f.manifest_path("tools", "1.1.0");
    std::fs::copy(&from, &to).unwrap();
    let err = f
        .store()
        .install(&f.registry(), &trust, "tools", Some("1.1.0"))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("serves tools@1.0.0 at bundles/tools/1.1.0/"),
        "{err}"
    );
}

#[test]
fn a_cache_file_changed_after_install_is_refused_and_refetched() {
    let f = fixture();
    let trust = f.trust_official();
    let store = f.store();
    store
        .install(&f.registry(), &trust, "tools", Some("1.0.0"))
        .unwrap();
    let cached = f.cache.join("tools/1.0.0/one.wasm");
    std::fs::write(&cached, b"\0asm module evil").unwrap();

    let resolver = store.resolver(&[]).unwrap();
    let loaded = resolver.load("hello", &trust, true).unwrap();
    assert!(loaded.repaired);
    assert_eq!(&*loaded.bytes, b"\0asm module one");
    assert_eq!(std::fs::read(&cached).unwrap(), b"\0asm module one");

    // With the registry gone, a changed file is refused, never returned.
    std::fs::write(&cached, b"\0asm module evil").unwrap();
    std::fs::remove_dir_all(&f.registry).unwrap();
    let err = resolver.load("hello", &trust, true).unwrap_err();
    assert!(matches!(err, BundleError::Tampered { .. }), "{err}");
    assert!(err.to_string().contains("changed after install"), "{err}");

    // A manifest edited in the cache fails its signature at load.
    let manifest_path = f.cache.join("tools/1.0.0/manifest.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    value["commands"][0]["limits"] = json!({"wallMs": 999_999_999});
    std::fs::write(&manifest_path, serde_json::to_vec(&value).unwrap()).unwrap();
    let err = store
        .resolver(&[])
        .unwrap()
        .load("bye", &trust, true)
        .unwrap_err();
    assert!(
        err.to_string().contains("invalid manifest signature"),
        "{err}"
    );
}

#[test]
fn concurrent_installs_of_one_bundle_are_safe() {
    let f = fixture();
    let trust = Arc::new(f.trust_official());
    let statuses: Vec<InstallStatus> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let trust = Arc::clone(&trust);
                let store = f.store();
                let registry = f.registry();
                s.spawn(move || {
                    store
                        .install(&registry, &trust, "tools", Some("1.1.0"))
                        .unwrap()
                        .status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == InstallStatus::Installed)
            .count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == InstallStatus::AlreadyInstalled)
            .count(),
        3
    );
    let loaded = f
        .store()
        .resolver(&[])
        .unwrap()
        .load("bye", &trust, true)
        .unwrap();
    assert_eq!(loaded.bytes.len(), 200_000);
}

#[test]
fn remove_and_gc() {
    let f = fixture();
    let trust = f.trust_official();
    let store = f.store();
    for v in ["1.0.0", "1.1.0"] {
        store
            .install(&f.registry(), &trust, "tools", Some(v))
            .unwrap();
    }
    store.install(&f.registry(), &trust, "other", None).unwrap();
    // Leftovers of an interrupted install and a broken directory.
    std::fs::create_dir_all(f.cache.join(".tmp/install-crashed")).unwrap();
    std::fs::create_dir_all(f.cache.join("tools/9.9.9")).unwrap();
    let report = store.gc().unwrap();
    assert_eq!(report.temp_dirs.len(), 1);
    assert_eq!(report.broken, [f.cache.join("tools/9.9.9")]);
    assert_eq!(report.superseded, ["tools@1.0.0"]);
    assert_eq!(store.remove("other", None).unwrap(), ["other@0.1.0"]);
    assert!(matches!(
        store.remove("other", None),
        Err(BundleError::NotInstalled(_))
    ));
    let labels: Vec<String> = store.list().unwrap().iter().map(|b| b.label()).collect();
    assert_eq!(labels, ["tools@1.1.0"]);
    assert!(store.install(&f.registry(), &trust, "../x", None).is_err());
}

/// A loopback HTTP/1.1 server for a directory. Paths in `cut` get a Content-Length of the
/// whole file but only half the body before the connection closes.
struct Server {
    base: String,
    stop: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
}

impl Server {
    fn start(root: PathBuf, cut: Vec<String>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let hits = Arc::new(AtomicUsize::new(0));
        let (stop2, hits2) = (Arc::clone(&stop), Arc::clone(&hits));
        listener.set_nonblocking(false).unwrap();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                hits2.fetch_add(1, Ordering::SeqCst);
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap_or(0);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let path = request_line
                    .split(' ')
                    .nth(1)
                    .unwrap_or("/")
                    .trim_start_matches('/')
                    .to_string();
                match std::fs::read(root.join(&path)) {
                    Ok(body) => {
                        let short = cut.iter().any(|c| path.ends_with(c.as_str()));
                        let sent = if short {
                            &body[..body.len() / 2]
                        } else {
                            &body[..]
                        };
                        let _ = write!(
                            conn,
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = conn.write_all(sent);
                    }
                    Err(_) => {
                        let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    }
                }
            }
        });
        Self { base, stop, hits }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(self.base.trim_start_matches("http://"));
    }
}

#[test]
fn install_over_http_from_a_loopback_registry() {
    let f = fixture();
    let server = Server::start(f.registry.clone(), vec![]);
    let registry = Registry::open(&format!("{}/", server.base)).unwrap();
    assert_eq!(registry.id(), server.base);
    let mut trust = TrustStore::load(&f.trust_path).unwrap();
    trust.trust(&f.key.public(), std::slice::from_ref(&server.base), &[]);
    let outcome = f.store().install(&registry, &trust, "tools", None).unwrap();
    assert_eq!(outcome.bundle.label(), "tools@1.1.0");
    assert_eq!(outcome.bundle.origin.registry, server.base);
    assert!(
        server.hits.load(Ordering::SeqCst) >= 4,
        "index, manifest, two assets"
    );
    let err = f
        .store()
        .install(&registry, &trust, "missing", Some("1.0.0"))
        .unwrap_err();
    assert!(
        err.to_string().starts_with("not found in the registry"),
        "{err}"
    );

    // Repair goes back to the HTTP registry.
    std::fs::write(f.cache.join("tools/1.1.0/one.wasm"), b"changed").unwrap();
    let loaded = f
        .store()
        .resolver(&[])
        .unwrap()
        .load("extra", &trust, true)
        .unwrap();
    assert!(loaded.repaired);
}

#[test]
fn an_interrupted_download_leaves_no_partial_install() {
    let f = fixture();
    let server = Server::start(f.registry.clone(), vec!["sub/two.wasm".into()]);
    let registry = Registry::open(&server.base).unwrap();
    let trust = TrustStore::load(&f.trust_path).unwrap();
    let err = f
        .store()
        .install(&registry, &trust, "tools", Some("1.0.0"))
        .unwrap_err();
    assert!(
        err.to_string().contains("transfer failed") || err.to_string().contains("size mismatch"),
        "{err}"
    );
    assert!(!f.cache.join("tools/1.0.0").exists());
    assert!(
        tree(&f.cache.join(".tmp")).is_empty(),
        "{:?}",
        tree(&f.cache)
    );
    assert!(f.store().list().unwrap().is_empty());
}
