//! Registries (a directory and a loopback HTTP server), installs, the cache's re-verification,
//! resolution, removal and gc.

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

/// Two registries: `official/` (trusted as official for `key`) with `core-utils@0.1.0`
/// (cat, ls) and `z-official@1.0.0` (zed); `third/` (no keys: third-party) with
/// `a-tools@1.0.0` (cat, only-a, both), `a-tools@01.0.0` (cat: a version that compares
/// equal to `1.0.0` but is written differently) and `b-tools@1.0.0` (both, zed).
struct Clashing {
    _dir: tempfile::TempDir,
    official: PathBuf,
    third: PathBuf,
    store: BundleStore,
    trust_path: PathBuf,
    key: KeyPair,
}

fn clashing() -> Clashing {
    let dir = tempfile::tempdir().unwrap();
    let modules = dir.path().join("modules");
    std::fs::create_dir_all(&modules).unwrap();
    std::fs::write(modules.join("core.wasm"), b"\0asm official").unwrap();
    std::fs::write(modules.join("a.wasm"), b"\0asm third party a").unwrap();
    std::fs::write(modules.join("b.wasm"), b"\0asm third party b").unwrap();
    let key = KeyPair::generate("official-key").unwrap();
    let (official, third) = (dir.path().join("official"), dir.path().join("third"));
    for (spec, registry, sign) in [
        (
            json!({"name": "core-utils", "version": "0.1.0", "commands": [
                {"name": "cat", "modulePath": "core.wasm"},
                {"name": "ls", "modulePath": "core.wasm"}]}),
            &official,
            true,
        ),
        (
            json!({"name": "z-official", "version": "1.0.0", "commands": [
                {"name": "zed", "modulePath": "core.wasm"}]}),
            &official,
            true,
        ),
        (
            json!({"name": "a-tools", "version": "1.0.0", "commands": [
                {"name": "cat", "modulePath": "a.wasm"},
                {"name": "only-a", "modulePath": "a.wasm"},
                {"name": "both", "modulePath": "a.wasm"}]}),
            &third,
            false,
        ),
        (
            json!({"name": "a-tools", "version": "01.0.0", "commands": [
                {"name": "cat", "modulePath": "a.wasm"}]}),
            &third,
            false,
        ),
        (
            json!({"name": "b-tools", "version": "1.0.0", "commands": [
                {"name": "both", "modulePath": "b.wasm"},
                {"name": "zed", "modulePath": "b.wasm"}]}),
            &third,
            false,
        ),
    ] {
        let manifest = pack::build_manifest(&spec, &modules).unwrap();
        let manifest = if sign {
            verify::sign_manifest(&manifest, &key)
        } else {
            manifest
        };
        pack::publish(&manifest, &modules, registry).unwrap();
    }
    let c = Clashing {
        store: BundleStore::new(dir.path().join("cache")),
        trust_path: dir.path().join("trusted.json"),
        official,
        third,
        key,
        _dir: dir,
    };
    let trust = c.trust();
    let (off, thr) = (c.registry(&c.official), c.registry(&c.third));
    for (registry, name, version) in [
        (&thr, "a-tools", "1.0.0"),
        (&thr, "a-tools", "01.0.0"),
        (&thr, "b-tools", "1.0.0"),
        (&off, "core-utils", "0.1.0"),
        (&off, "z-official", "1.0.0"),
    ] {
        let outcome = c
            .store
            .install(registry, &trust, name, Some(version))
            .unwrap();
        assert_eq!(
            outcome.bundle.origin.official,
            registry.id() == off.id(),
            "{name}"
        );
    }
    c
}

impl Clashing {
    fn trust(&self) -> TrustStore {
        let mut trust = TrustStore::load(&self.trust_path).unwrap();
        trust.trust(
            &self.key.public(),
            &[registry_id(self.official.to_str().unwrap())],
            &[],
        );
        trust.save().unwrap();
        trust
    }

    fn registry(&self, dir: &Path) -> Registry {
        Registry::open(dir.to_str().unwrap()).unwrap()
    }
}

#[test]
fn official_bundles_win_every_clash_whatever_their_names() {
    use agent_bundles::store::{OtherStatus, Resolution};
    let c = clashing();
    let trust = c.trust();
    let resolver = c.store.resolver(&[]).unwrap();
    // Official first (core-utils, z-official by name), then third-party by name.
    let order: Vec<String> = resolver.bundles().iter().map(|b| b.label()).collect();
    assert_eq!(
        order,
        [
            "core-utils@0.1.0",
            "z-official@1.0.0",
            "a-tools@1.0.0",
            "b-tools@1.0.0"
        ]
    );
    // `a-tools` sorts before `core-utils` by name, and still loses `cat`.
    let cat = resolver.which("cat").unwrap();
    assert_eq!(cat.bundle.label(), "core-utils@0.1.0");
    assert_eq!(cat.reason, Resolution::Official);
    assert_eq!(cat.others.len(), 1);
    assert_eq!(
        (cat.others[0].0.label(), cat.others[0].1),
        ("a-tools@1.0.0".to_string(), OtherStatus::Refused)
    );
    let why = cat.explain();
    assert!(
        why.starts_with("official; also in a-tools@1.0.0 (third-party): refused")
            && why.contains("`agent bundles pin cat a-tools`"),
        "{why}"
    );
    let loaded = resolver.load("cat", &trust, false).unwrap();
    assert_eq!(&*loaded.bytes, b"\0asm official");
    // Same for an official bundle whose name sorts after every third-party one.
    assert_eq!(
        resolver.which("zed").unwrap().bundle.label(),
        "z-official@1.0.0"
    );
    // A command only a third-party bundle provides resolves to it.
    let only = resolver.which("only-a").unwrap();
    assert_eq!(
        (only.bundle.label().as_str(), only.reason),
        ("a-tools@1.0.0", Resolution::ByName)
    );
    // load_all: every command from its winner.
    let all = resolver.load_all(&trust, false).unwrap();
    let got: Vec<(String, String)> = all
        .iter()
        .map(|m| (m.command.clone(), m.bundle.clone()))
        .collect();
    for (command, bundle) in [
        ("cat", "core-utils"),
        ("ls", "core-utils"),
        ("zed", "z-official"),
        ("only-a", "a-tools"),
        ("both", "a-tools"),
    ] {
        assert!(
            got.contains(&(command.into(), bundle.into())),
            "{command}: {got:?}"
        );
    }
    assert_eq!(got.len(), 5, "{got:?}");
    // The clashes, for install and list.
    let clashes = resolver.clashes();
    assert_eq!(
        clashes,
        [
            agent_bundles::store::Clash {
                command: "cat".into(),
                official: "core-utils@0.1.0".into(),
                third_party: vec!["a-tools@1.0.0".into()],
                pinned: None,
            },
            agent_bundles::store::Clash {
                command: "zed".into(),
                official: "z-official@1.0.0".into(),
                third_party: vec!["b-tools@1.0.0".into()],
                pinned: None,
            }
        ]
    );
}

#[test]
fn preferring_a_third_party_bundle_over_an_official_one_is_refused() {
    let c = clashing();
    let resolver = c.store.resolver(&["a-tools".into()]).unwrap();
    let err = resolver.which("cat").unwrap_err();
    assert!(matches!(err, BundleError::Shadowed { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with(
            "cat: third-party a-tools@1.0.0 would shadow the official core-utils@0.1.0"
        ) && text.contains("`agent bundles pin cat a-tools`"),
        "{text}"
    );
    // Not loadable either way, and load_all stops there rather than run a guess.
    assert!(resolver.load("cat", &c.trust(), false).is_err());
    assert!(resolver.load_all(&c.trust(), false).is_err());
    // The preference still orders what does not clash with an official command.
    assert_eq!(
        resolver.which("only-a").unwrap().reason,
        agent_bundles::store::Resolution::Preferred
    );
    // Preferring the official bundle first is no clash.
    let resolver = c
        .store
        .resolver(&["core-utils".into(), "a-tools".into()])
        .unwrap();
    assert_eq!(
        resolver.which("cat").unwrap().bundle.label(),
        "core-utils@0.1.0"
    );
}

#[test]
fn between_third_party_bundles_the_order_then_the_name_decides() {
    use agent_bundles::store::Resolution;
    let c = clashing();
    let resolver = c.store.resolver(&[]).unwrap();
    let both = resolver.which("both").unwrap();
    assert_eq!(
        (both.bundle.label().as_str(), both.reason),
        ("a-tools@1.0.0", Resolution::ByName)
    );
    assert_eq!(
        both.others[0].1,
        agent_bundles::store::OtherStatus::Shadowed
    );
    let resolver = c.store.resolver(&["b-tools".into()]).unwrap();
    let both = resolver.which("both").unwrap();
    assert_eq!(
        (both.bundle.label().as_str(), both.reason),
        ("b-tools@1.0.0", Resolution::Preferred)
    );
    // Versions that compare equal (`1.0.0` and `01.0.0`) are ordered by their text, never by
    // the directory order: the newest is `1.0.0`.
    let labels: Vec<String> = c.store.list().unwrap().iter().map(|b| b.label()).collect();
    assert_eq!(
        labels,
        [
            "a-tools@01.0.0",
            "a-tools@1.0.0",
            "b-tools@1.0.0",
            "core-utils@0.1.0",
            "z-official@1.0.0"
        ]
    );
    for _ in 0..3 {
        assert_eq!(
            c.store.resolver(&[]).unwrap().bundles()[2].label(),
            "a-tools@1.0.0"
        );
    }
}

#[test]
fn a_pinned_third_party_command_runs_and_unpinning_restores_the_official_one() {
    use agent_bundles::store::{OtherStatus, Resolution};
    let c = clashing();
    let trust = c.trust();
    assert!(c.store.pins().unwrap().is_empty());
    assert_eq!(c.store.pin("cat", "a-tools").unwrap(), None);
    assert_eq!(
        std::fs::read_to_string(c.store.root().join("pins.json"))
            .unwrap()
            .trim(),
        "{\n  \"pins\": {\n    \"cat\": \"a-tools\"\n  }\n}"
    );
    let resolver = c.store.resolver(&[]).unwrap();
    let cat = resolver.which("cat").unwrap();
    assert_eq!(
        (cat.bundle.label().as_str(), cat.reason),
        ("a-tools@1.0.0", Resolution::Pinned)
    );
    assert_eq!(cat.others[0].0.label(), "core-utils@0.1.0");
    assert_eq!(cat.others[0].1, OtherStatus::Shadowed);
    assert!(
        cat.explain()
            .starts_with("pinned to a-tools (`agent bundles unpin cat` to undo)"),
        "{}",
        cat.explain()
    );
    assert_eq!(
        &*resolver.load("cat", &trust, false).unwrap().bytes,
        b"\0asm third party a"
    );
    // A pin also beats --prefer, and shows in the clashes.
    let preferring = c.store.resolver(&["core-utils".into()]).unwrap();
    assert_eq!(
        preferring.which("cat").unwrap().bundle.manifest.name,
        "a-tools"
    );
    assert_eq!(preferring.clashes()[0].pinned.as_deref(), Some("a-tools"));
    // Pinning over an existing pin says what it replaces.
    assert_eq!(
        c.store.pin("cat", "core-utils").unwrap().as_deref(),
        Some("a-tools")
    );
    assert_eq!(c.store.unpin("cat").unwrap(), "core-utils");
    assert!(matches!(
        c.store.unpin("cat"),
        Err(BundleError::NotPinned(_))
    ));
    assert_eq!(
        c.store
            .resolver(&[])
            .unwrap()
            .which("cat")
            .unwrap()
            .bundle
            .manifest
            .name,
        "core-utils"
    );

    // Refusals: a bundle that does not provide it, one not installed, bad names.
    let err = c.store.pin("ls", "a-tools").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bundle a-tools@1.0.0 does not provide ls; the installed bundles that do: core-utils@0.1.0"
    );
    assert!(matches!(
        c.store.pin("cat", "nope"),
        Err(BundleError::NotInstalled(_))
    ));
    assert!(matches!(
        c.store.pin("../cat", "a-tools"),
        Err(BundleError::BadName { .. })
    ));
    assert!(c.store.pins().unwrap().is_empty());
}

#[test]
fn a_broken_or_damaged_pin_fails_closed_and_removing_the_bundle_drops_its_pins() {
    let c = clashing();
    c.store.pin("cat", "a-tools").unwrap();
    c.store.pin("both", "b-tools").unwrap();
    // Removing a bundle drops the pins that named it (and only those).
    c.store.remove("a-tools", None).unwrap();
    let pins = c.store.pins().unwrap();
    assert_eq!(
        pins.into_iter().collect::<Vec<_>>(),
        [("both".to_string(), "b-tools".to_string())]
    );
    // A pin naming a bundle that is gone (edited by hand) is an error, never a fall-back.
    std::fs::write(
        c.store.root().join("pins.json"),
        r#"{"pins": {"cat": "gone"}}"#,
    )
    .unwrap();
    let resolver = c.store.resolver(&[]).unwrap();
    let err = resolver.which("cat").unwrap_err();
    assert!(matches!(err, BundleError::PinBroken { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("cat is pinned to bundle gone, which is not installed")
            && err.to_string().contains("`agent bundles unpin cat`"),
        "{err}"
    );
    // ... or a bundle whose newest version no longer provides the command.
    std::fs::write(
        c.store.root().join("pins.json"),
        r#"{"pins": {"cat": "b-tools"}}"#,
    )
    .unwrap();
    let err = c.store.resolver(&[]).unwrap().which("cat").unwrap_err();
    assert!(err.to_string().contains("no longer provides it"), "{err}");
    // A damaged pins file stops resolution with what to do.
    for bad in [
        "{",
        r#"{"pins": {"../x": "a"}}"#,
        r#"{"pins": {"cat": "a/b"}}"#,
        r#"{"pin": {}}"#,
    ] {
        std::fs::write(c.store.root().join("pins.json"), bad).unwrap();
        let err = c.store.resolver(&[]).unwrap_err();
        assert!(matches!(err, BundleError::Pins { .. }), "{bad}: {err}");
        assert!(
            err.to_string().contains("remove it to drop every pin"),
            "{err}"
        );
    }
}

#[test]
fn a_bundle_installed_as_official_whose_key_is_untrusted_is_refused() {
    let c = clashing();
    let mut trust = c.trust();
    assert!(trust.untrust("official-key"));
    let resolver = c.store.resolver(&[]).unwrap();
    let err = resolver.load("ls", &trust, false).unwrap_err();
    assert!(matches!(err, BundleError::NoLongerOfficial { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("core-utils@0.1.0 was installed as official from"),
        "{err}"
    );
    // A third-party bundle is unaffected.
    assert!(resolver.load("only-a", &trust, false).is_ok());
}
