//! `agent keys ...` and `agent bundles ...` as a user drives them: a key, a signed registry,
//! install, which, tampering, official and third-party clashes, pins, each verb's exit codes;
//! and which Bash backend `agent demo` reports, with and without the core-utils bundle.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(root.join("modules/sub")).unwrap();
    std::fs::write(root.join("modules/tool.wasm"), b"\0asm\x01\0\0\0 tool").unwrap();
    std::fs::write(root.join("modules/sub/other.wasm"), vec![1u8; 5000]).unwrap();
    std::fs::write(
        root.join("spec.json"),
        r#"{"name":"demo","version":"0.2.0","commands":[
            {"name":"hello","modulePath":"tool.wasm","limits":{"wallMs":5000}},
            {"name":"[","modulePath":"tool.wasm"},
            {"name":"other","modulePath":"sub/other.wasm"}]}"#,
    )
    .unwrap();
    Env {
        _tmp: tmp,
        root,
        home,
    }
}

impl Env {
    fn agent(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_agent"))
            .args(args)
            .env("HOME", &self.home)
            .env("AGENT_HOME", self.home.join(".agent"))
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().to_string()
    }

    /// A key trusted as official for `registry`, and the signed bundle laid out there.
    fn signed_registry(&self) -> (String, String) {
        let key = self.agent(&[
            "keys",
            "generate",
            "--id",
            "dev",
            "--trust",
            "--official-for",
            "registry",
            "--json",
        ]);
        assert_eq!(key.code, 0, "{}", key.stderr);
        let public = key.json()["publicKey"].as_str().unwrap().to_string();
        let built = self.agent(&[
            "bundles",
            "build",
            "--spec",
            "spec.json",
            "--modules",
            "modules",
            "--registry",
            "registry",
            "--key",
            ".agent-key-path-placeholder",
        ]);
        assert_eq!(built.code, 2, "a missing key file is bad input");
        let key_file = self.home.join(".agent/keys/dev.jwk");
        let built = self.agent(&[
            "bundles",
            "build",
            "--spec",
            "spec.json",
            "--modules",
            "modules",
            "--registry",
            "registry",
            "--key",
            &key_file.to_string_lossy(),
        ]);
        assert_eq!(built.code, 0, "{}", built.stderr);
        assert!(
            built
                .stdout
                .starts_with("built demo@0.2.0: 3 commands, 2 assets"),
            "{}",
            built.stdout
        );
        (
            public,
            self.path("registry/bundles/demo/0.2.0/manifest.json"),
        )
    }
}

fn file_mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn keys_generate_list_trust_untrust() {
    let e = env();
    let run = e.agent(&["keys", "generate", "--id", "k1", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    let private = PathBuf::from(v["privateKeyFile"].as_str().unwrap());
    assert_eq!(file_mode(&private), 0o600);
    assert_eq!(v["publicKey"].as_str().unwrap().len(), 43);
    // Never overwritten; bad ids refused.
    assert_eq!(e.agent(&["keys", "generate", "--id", "k1"]).code, 2);
    let bad = e.agent(&["keys", "generate", "--id", "../x"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("key id `../x` must"), "{}", bad.stderr);

    assert_eq!(
        e.agent(&["keys", "list", "--json"]).json(),
        serde_json::json!([])
    );
    let pub_file = private.with_file_name("k1.pub.jwk");
    let trusted = e.agent(&[
        "keys",
        "trust",
        &pub_file.to_string_lossy(),
        "--registry",
        "https://Third.Example/r/",
    ]);
    assert_eq!(trusted.code, 0, "{}", trusted.stderr);
    let listed = e.agent(&["keys", "list", "--json"]).json();
    assert_eq!(listed[0]["keyId"], "k1");
    assert_eq!(listed[0]["registries"][0], "https://third.example/r");
    let by_value = e.agent(&[
        "keys",
        "trust",
        &format!("k2={}", v["publicKey"].as_str().unwrap()),
        "--official-for",
        "https://reg.example",
    ]);
    assert_eq!(by_value.code, 0, "{}", by_value.stderr);
    assert_eq!(e.agent(&["keys", "trust", "k3=not-a-key"]).code, 2);
    assert_eq!(e.agent(&["keys", "untrust", "k2"]).code, 0);
    assert_eq!(e.agent(&["keys", "untrust", "k2"]).code, 1);
    let text = e.agent(&["keys", "list"]);
    assert!(text.stdout.starts_with("k1 "), "{}", text.stdout);
    assert!(
        text.stdout.contains("required by: https://third.example/r"),
        "{}",
        text.stdout
    );
}

#[test]
fn build_verify_install_which_and_tampering() {
    let e = env();
    let (public, manifest) = e.signed_registry();

    // verify: valid with the trust store, with an explicit key, signature only.
    let ok = e.agent(&["bundles", "verify", "--manifest", &manifest]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(
        ok.stdout
            .starts_with("valid: demo@0.2.0 (signed by dev; 2 assets"),
        "{}",
        ok.stdout
    );
    let explicit = e.agent(&[
        "bundles",
        "verify",
        "--manifest",
        &manifest,
        "--key",
        &format!("dev={public}"),
        "--signature-only",
        "--json",
    ]);
    assert_eq!(explicit.code, 0, "{}", explicit.stderr);
    assert_eq!(explicit.json()["signature"]["keyId"], "dev");
    // The wrong key: invalid, exit 1, with the reason.
    let other = e
        .agent(&[
            "keys", "generate", "--id", "other", "--out", "keys", "--json",
        ])
        .json();
    let wrong = e.agent(&[
        "bundles",
        "verify",
        "--manifest",
        &manifest,
        "--key",
        &format!("other={}", other["publicKey"].as_str().unwrap()),
    ]);
    assert_eq!(wrong.code, 1);
    assert!(
        wrong.stderr.contains("unknown signature keyId `dev`"),
        "{}",
        wrong.stderr
    );
    // Bad input: exit 2.
    assert_eq!(
        e.agent(&["bundles", "verify", "--manifest", "missing.json"])
            .code,
        2
    );
    assert_eq!(
        e.agent(&[
            "bundles",
            "verify",
            "--manifest",
            &manifest,
            "--key",
            "nokey"
        ])
        .code,
        2
    );
    std::fs::write(e.root.join("notjson.json"), "{").unwrap();
    assert_eq!(
        e.agent(&["bundles", "verify", "--manifest", "notjson.json"])
            .code,
        2
    );

    // install, list, which.
    let installed = e.agent(&[
        "bundles",
        "install",
        "demo",
        "--registry",
        "registry",
        "--json",
    ]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    let v = installed.json();
    assert_eq!(
        (v["status"].as_str(), v["official"].as_bool()),
        (Some("installed"), Some(true))
    );
    assert_eq!(v["signature"]["keyId"], "dev");
    let again = e.agent(&[
        "bundles",
        "install",
        "demo@0.2.0",
        "--registry",
        "registry",
        "--json",
    ]);
    assert_eq!(again.json()["status"], "already-installed");
    let listed = e.agent(&["bundles", "list", "--json"]).json();
    assert_eq!(
        listed[0]["commands"],
        serde_json::json!(["hello", "[", "other"])
    );
    let which = e.agent(&["bundles", "which", "[", "--json"]);
    assert_eq!(which.code, 0, "{}", which.stderr);
    let w = which.json();
    assert_eq!(w["bundle"], "demo");
    assert!(
        w["module"]
            .as_str()
            .unwrap()
            .ends_with("demo/0.2.0/tool.wasm")
    );
    let unknown = e.agent(&["bundles", "which", "nope"]);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.stderr.contains(
            "nope: command not found in the installed bundles; installed commands: [, hello, other"
        ),
        "{}",
        unknown.stderr
    );

    // A cached module changed on disk: refused as it is, re-fetched and verified.
    let cached = e.home.join(".agent/bundles/demo/0.2.0/tool.wasm");
    std::fs::write(&cached, b"evil").unwrap();
    let repaired = e.agent(&["bundles", "which", "hello", "--json"]);
    assert_eq!(repaired.code, 0, "{}", repaired.stderr);
    assert_eq!(repaired.json()["repaired"], true);
    assert_eq!(std::fs::read(&cached).unwrap(), b"\0asm\x01\0\0\0 tool");

    // A registry asset changed after signing: the install is refused, nothing is written.
    std::fs::write(
        e.root.join("registry/bundles/demo/0.2.0/sub/other.wasm"),
        vec![2u8; 5000],
    )
    .unwrap();
    let refused = e.agent(&[
        "bundles",
        "install",
        "demo",
        "--registry",
        "registry",
        "--store",
        "store2",
    ]);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("sha256 mismatch for `sub/other.wasm`"),
        "{}",
        refused.stderr
    );
    assert!(!e.root.join("store2/demo").exists());
    let verify = e.agent(&["bundles", "verify", "--manifest", &manifest, "--json"]);
    assert_eq!(verify.code, 1);
    assert!(
        verify.json()["reason"]
            .as_str()
            .unwrap()
            .contains("sha256 mismatch")
    );

    // Bad input to install: exit 2.
    assert_eq!(
        e.agent(&["bundles", "install", "demo", "--registry", "nowhere"])
            .code,
        2
    );
    assert_eq!(
        e.agent(&["bundles", "install", "../demo", "--registry", "registry"])
            .code,
        2
    );

    // remove, gc.
    let removed = e.agent(&["bundles", "remove", "demo@0.2.0"]);
    assert_eq!(
        (removed.code, removed.stdout.trim()),
        (0, "removed demo@0.2.0")
    );
    assert_eq!(e.agent(&["bundles", "remove", "demo"]).code, 1);
    let gc = e.agent(&["bundles", "gc", "--json"]);
    assert_eq!(gc.code, 0, "{}", gc.stderr);
    assert!(
        e.agent(&["bundles", "list"])
            .stdout
            .starts_with("no bundles installed")
    );
}

#[test]
fn an_unsigned_manifest_from_an_official_registry_is_refused() {
    let e = env();
    let (_, manifest) = e.signed_registry();
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("signature");
    std::fs::write(&manifest, value.to_string()).unwrap();
    let refused = e.agent(&["bundles", "install", "demo", "--registry", "registry"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("manifest signature required"),
        "{}",
        refused.stderr
    );
    // `sign` puts a signature back, and the install goes through.
    let signed = e.agent(&[
        "bundles",
        "sign",
        "--manifest",
        &manifest,
        "--key",
        &e.home.join(".agent/keys/dev.jwk").to_string_lossy(),
    ]);
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    assert_eq!(
        e.agent(&["bundles", "install", "demo", "--registry", "registry"])
            .code,
        0
    );
}

#[test]
fn every_bundles_and_keys_verb_has_help_with_an_example() {
    let e = env();
    for verb in [
        &["bundles", "build"][..],
        &["bundles", "sign"],
        &["bundles", "verify"],
        &["bundles", "install"],
        &["bundles", "list"],
        &["bundles", "remove"],
        &["bundles", "which"],
        &["bundles", "pin"],
        &["bundles", "unpin"],
        &["bundles", "gc"],
        &["keys", "generate"],
        &["keys", "list"],
        &["keys", "trust"],
        &["keys", "untrust"],
    ] {
        let mut args = verb.to_vec();
        args.push("--help");
        let run = e.agent(&args);
        assert_eq!(run.code, 0, "{verb:?}");
        assert!(run.stdout.contains("Example"), "{verb:?}: {}", run.stdout);
        assert!(run.stdout.contains("Exit codes"), "{verb:?}");
    }
}

impl Env {
    /// `core-utils@0.1.0` (cat, ls) signed into `official-reg` by a key trusted as official
    /// for it; `a-tools@1.0.0` (cat, only-a) unsigned in `third-reg` (third-party).
    fn clashing_registries(&self) {
        let key = self.agent(&[
            "keys",
            "generate",
            "--id",
            "dev",
            "--trust",
            "--official-for",
            "official-reg",
        ]);
        assert_eq!(key.code, 0, "{}", key.stderr);
        std::fs::write(
            self.root.join("core.json"),
            r#"{"name":"core-utils","version":"0.1.0","commands":[
                {"name":"cat","modulePath":"tool.wasm"},{"name":"ls","modulePath":"tool.wasm"}]}"#,
        )
        .unwrap();
        std::fs::write(
            self.root.join("a.json"),
            r#"{"name":"a-tools","version":"1.0.0","commands":[
                {"name":"cat","modulePath":"sub/other.wasm"},
                {"name":"only-a","modulePath":"sub/other.wasm"}]}"#,
        )
        .unwrap();
        let key_file = self.home.join(".agent/keys/dev.jwk");
        for args in [
            &[
                "--spec",
                "core.json",
                "--registry",
                "official-reg",
                "--key",
                &key_file.to_string_lossy(),
            ][..],
            &["--spec", "a.json", "--registry", "third-reg"],
        ] {
            let mut all = vec!["bundles", "build", "--modules", "modules"];
            all.extend_from_slice(args);
            let built = self.agent(&all);
            assert_eq!(built.code, 0, "{}", built.stderr);
        }
    }
}

#[test]
fn a_third_party_command_never_silently_replaces_an_official_one() {
    let e = env();
    e.clashing_registries();
    let core = e.agent(&[
        "bundles",
        "install",
        "core-utils",
        "--registry",
        "official-reg",
        "--json",
    ]);
    assert_eq!(core.code, 0, "{}", core.stderr);
    assert_eq!(core.json()["official"], true);
    assert_eq!(core.json()["clashes"], serde_json::json!([]));

    // Installing the third-party bundle says which commands stay official, and how to pin.
    let third = e.agent(&[
        "bundles",
        "install",
        "a-tools",
        "--registry",
        "third-reg",
        "--json",
    ]);
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert_eq!(third.json()["official"], false);
    assert_eq!(
        third.json()["clashes"],
        serde_json::json!([{"command": "cat", "official": "core-utils@0.1.0",
            "thirdParty": ["a-tools@1.0.0"], "pinned": null, "resolvesTo": "core-utils@0.1.0"}])
    );
    assert!(
        third.stderr.contains(
            "agent: warning: a-tools@1.0.0 is third-party and provides cat, which the official core-utils@0.1.0 already provides: these stay official, and a-tools's are refused unless you pin them (`agent bundles pin cat a-tools`)"
        ),
        "{}",
        third.stderr
    );

    // `a-tools` sorts first by name; the official `cat` still wins, and `which` says why.
    let which = e.agent(&["bundles", "which", "cat"]);
    assert_eq!(which.code, 0, "{}", which.stderr);
    assert!(
        which.stdout.starts_with("cat: core-utils@0.1.0 ")
            && which.stdout.contains(
                "\n  why: official; also in a-tools@1.0.0 (third-party): refused, official bundles win every name clash (`agent bundles pin cat a-tools` to use it)"
            ),
        "{}",
        which.stdout
    );
    let v = e.agent(&["bundles", "which", "cat", "--json"]).json();
    assert_eq!(
        (&v["bundle"], &v["reason"], &v["official"]),
        (&"core-utils".into(), &"official".into(), &true.into())
    );
    assert_eq!(
        v["others"],
        serde_json::json!([{"bundle": "a-tools@1.0.0", "official": false, "status": "refused",
            "pin": "agent bundles pin cat a-tools"}])
    );
    let only = e.agent(&["bundles", "which", "only-a", "--json"]).json();
    assert_eq!(
        (&only["bundle"], &only["reason"]),
        (&"a-tools".into(), &"by-name".into())
    );

    // --prefer cannot put the third-party one first: refused, naming both and the pin.
    let preferred = e.agent(&["bundles", "which", "cat", "--prefer", "a-tools"]);
    assert_eq!(preferred.code, 1);
    assert!(
        preferred
            .stderr
            .contains("cat: third-party a-tools@1.0.0 would shadow the official core-utils@0.1.0")
            && preferred.stderr.contains("`agent bundles pin cat a-tools`"),
        "{}",
        preferred.stderr
    );

    // list shows what is refused.
    let listed = e.agent(&["bundles", "list"]);
    assert!(
        listed.stdout.contains(
            "  refused (an official bundle provides them; `agent bundles pin COMMAND a-tools` to use one): cat"
        ),
        "{}",
        listed.stdout
    );
    let listed = e.agent(&["bundles", "list", "--json"]).json();
    assert_eq!(listed[0]["name"], "a-tools");
    assert_eq!(listed[0]["refused"], serde_json::json!(["cat"]));
    assert_eq!(listed[1]["refused"], serde_json::json!([]));
}

#[test]
fn pin_unpin_and_what_list_and_remove_say_about_pins() {
    let e = env();
    e.clashing_registries();
    for (name, registry) in [("core-utils", "official-reg"), ("a-tools", "third-reg")] {
        let run = e.agent(&["bundles", "install", name, "--registry", registry]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let pinned = e.agent(&["bundles", "pin", "cat", "a-tools"]);
    assert_eq!(pinned.code, 0, "{}", pinned.stderr);
    assert_eq!(
        pinned.stdout.trim(),
        "pinned cat to a-tools@1.0.0 (third-party); it now runs instead of the official core-utils@0.1.0; `agent bundles unpin cat` to undo"
    );
    assert_eq!(
        serde_json::from_str::<Value>(
            &std::fs::read_to_string(e.home.join(".agent/bundles/pins.json")).unwrap()
        )
        .unwrap(),
        serde_json::json!({"pins": {"cat": "a-tools"}})
    );
    let which = e.agent(&["bundles", "which", "cat", "--json"]).json();
    assert_eq!(
        (&which["bundle"], &which["reason"]),
        (&"a-tools".into(), &"pinned".into())
    );
    assert_eq!(which["others"][0]["status"], "shadowed");
    let text = e.agent(&["bundles", "which", "cat"]).stdout;
    assert!(
        text.contains("why: pinned to a-tools (`agent bundles unpin cat` to undo); also in core-utils@0.1.0 (official)"),
        "{text}"
    );
    let listed = e.agent(&["bundles", "list"]).stdout;
    assert!(listed.contains("  pinned here: cat"), "{listed}");
    assert!(
        listed.contains("pins:\n  cat -> a-tools (a-tools@1.0.0)"),
        "{listed}"
    );
    assert!(!listed.contains("refused"), "{listed}");
    let listed = e.agent(&["bundles", "list", "--json"]).json();
    assert_eq!(listed[0]["pinned"], serde_json::json!(["cat"]));

    // Installing again with the pin in place says the pin decides.
    let again = e.agent(&["bundles", "install", "a-tools", "--registry", "third-reg"]);
    assert!(
        again.stderr.contains(
            "cat are pinned to a-tools, so a-tools@1.0.0's replace the official core-utils@0.1.0's"
        ),
        "{}",
        again.stderr
    );

    // Refusals: exit 1 when the bundle cannot serve it, 2 for bad names.
    let no = e.agent(&["bundles", "pin", "ls", "a-tools"]);
    assert_eq!(no.code, 1);
    assert!(
        no.stderr.contains("bundle a-tools@1.0.0 does not provide ls; the installed bundles that do: core-utils@0.1.0"),
        "{}",
        no.stderr
    );
    assert_eq!(e.agent(&["bundles", "pin", "cat", "nope"]).code, 1);
    assert_eq!(e.agent(&["bundles", "pin", "../cat", "a-tools"]).code, 2);

    let unpinned = e.agent(&["bundles", "unpin", "cat"]);
    assert_eq!(unpinned.code, 0, "{}", unpinned.stderr);
    assert_eq!(
        unpinned.stdout.trim(),
        "unpinned cat (was a-tools); it now resolves to core-utils@0.1.0"
    );
    let twice = e.agent(&["bundles", "unpin", "cat"]);
    assert_eq!(twice.code, 1);
    assert!(
        twice.stderr.contains("cat is not pinned"),
        "{}",
        twice.stderr
    );

    // Removing a bundle drops its pins, and says so.
    assert_eq!(e.agent(&["bundles", "pin", "cat", "a-tools"]).code, 0);
    let removed = e.agent(&["bundles", "remove", "a-tools"]);
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert!(
        removed.stdout.contains("unpinned cat (it named a-tools)"),
        "{}",
        removed.stdout
    );
    assert_eq!(
        e.agent(&["bundles", "which", "cat", "--json"]).json()["bundle"],
        "core-utils"
    );

    // A damaged pins file: resolution stops with what to do; list still lists.
    std::fs::write(e.home.join(".agent/bundles/pins.json"), "{").unwrap();
    let broken = e.agent(&["bundles", "which", "cat"]);
    assert_eq!(broken.code, 2);
    assert!(
        broken.stderr.contains("remove it to drop every pin"),
        "{}",
        broken.stderr
    );
    let listed = e.agent(&["bundles", "list"]);
    assert_eq!(listed.code, 0);
    assert!(
        listed.stdout.starts_with("core-utils@0.1.0"),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stderr.contains("pins are not shown"),
        "{}",
        listed.stderr
    );
}

#[test]
fn installing_an_official_bundle_over_a_third_party_one_says_which_wins() {
    let e = env();
    e.clashing_registries();
    let third = e.agent(&[
        "bundles",
        "install",
        "a-tools",
        "--registry",
        "third-reg",
        "--json",
    ]);
    assert_eq!(third.json()["clashes"], serde_json::json!([]));
    let core = e.agent(&[
        "bundles",
        "install",
        "core-utils",
        "--registry",
        "official-reg",
        "--json",
    ]);
    assert_eq!(core.code, 0, "{}", core.stderr);
    assert_eq!(core.json()["clashes"][0]["command"], "cat");
    assert_eq!(core.json()["clashes"][0]["resolvesTo"], "core-utils@0.1.0");
    assert!(
        core.stderr.contains(
            "agent: warning: core-utils@0.1.0 is official and provides cat, which third-party a-tools@1.0.0 also provides: official bundles win every name clash, so these stay official and a-tools's are refused unless pinned (`agent bundles pin cat a-tools`)"
        ),
        "{}",
        core.stderr
    );
}

/// The built core-utils registry (`cargo xtask bundles`), or `None` when it is not built (CI
/// builds it before the tests, so there it must exist).
fn core_utils_registry() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let registry = target.join("bundles/registry");
    if registry.join("index.json").exists() {
        return Some(registry);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: `cargo xtask ci` builds it before the tests",
        registry.display()
    );
    None
}

#[test]
fn the_demo_says_which_bash_backend_ran_and_uses_the_wasi_bundle_when_installed() {
    let e = env();
    // No bundle: not the WASI shell (the host's bash in the OS sandbox, or, where none can
    // run, declined by the demo's policy), and the demo says which.
    let demo = e.agent(&["demo", "--json", "--dir", &e.path("demo-1")]);
    assert_eq!(demo.code, 0, "{}", demo.stderr);
    let bash = &demo.json()["bash"];
    assert!(
        ["sandbox", "host", "not-run"].contains(&bash["backend"].as_str().unwrap()),
        "{bash}"
    );
    assert_eq!(bash["commands"], serde_json::json!([]), "{bash}");
    let Some(registry) = core_utils_registry() else {
        eprintln!("skipped the WASI half: run `cargo xtask bundles` first");
        return;
    };
    let installed = e.agent(&[
        "bundles",
        "install",
        "core-utils",
        "--registry",
        &registry.to_string_lossy(),
    ]);
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    // With it: the read-only grep runs in the WASI shell, from the bundle.
    let demo = e.agent(&["demo", "--json", "--dir", &e.path("demo-2")]);
    assert_eq!(demo.code, 0, "{}", demo.stderr);
    let bash = &demo.json()["bash"];
    assert_eq!(bash["backend"], "wasi", "{bash}");
    assert_eq!(bash["commands"][0]["command"], "grep", "{bash}");
    assert!(
        bash["commands"][0]["bundle"]
            .as_str()
            .unwrap()
            .starts_with("core-utils@"),
        "{bash}"
    );
    let text = e.agent(&["demo", "--dir", &e.path("demo-3")]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .contains("Bash backend: wasi. The read-only command ran in the WASI shell"),
        "{}",
        text.stdout
    );
}
