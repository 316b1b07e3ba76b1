//! `mcpServers` parsing: transports, expansion, and errors that name the field.

use std::path::PathBuf;

use agent_mcp::{ConfigError, McpConfig, ServerConfig};
use serde_json::{Value, json};

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cret".into()),
        "HOME" => Some("/home/me".into()),
        "PORT" => Some("8080".into()),
        _ => None,
    }
}

fn parse(servers: Value) -> Result<McpConfig, ConfigError> {
    McpConfig::from_json_with_env(&json!({ "mcpServers": servers }), env)
}

fn error(servers: Value) -> (String, String) {
    let e = parse(servers).unwrap_err();
    (e.field().unwrap_or_default().to_owned(), e.to_string())
}

#[test]
fn stdio_and_http_servers() {
    let config = parse(json!({
        "files": {"command": "npx", "args": ["-y", "srv"], "env": {"A": "1"}, "cwd": "/tmp"},
        "typed": {"type": "stdio", "command": "srv"},
        "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "k"}}
    }))
    .unwrap();
    assert_eq!(config.servers.len(), 3);
    let ServerConfig::Stdio(files) = &config.servers["files"] else {
        panic!("files is not stdio")
    };
    assert_eq!(files.command, "npx");
    assert_eq!(files.args, ["-y", "srv"]);
    assert_eq!(files.env["A"], "1");
    assert_eq!(files.cwd, Some(PathBuf::from("/tmp")));
    let ServerConfig::Stdio(typed) = &config.servers["typed"] else {
        panic!("typed is not stdio")
    };
    assert!(typed.args.is_empty() && typed.env.is_empty() && typed.cwd.is_none());
    let ServerConfig::Http(web) = &config.servers["web"] else {
        panic!("web is not http")
    };
    assert_eq!(web.url, "https://example.com/mcp");
    assert_eq!(web.headers["X-Key"], "k");
    assert_eq!(config.servers["web"].transport(), "http");
}

#[test]
fn no_servers_is_an_empty_config() {
    assert!(McpConfig::from_json(&json!({})).unwrap().is_empty());
    assert!(
        McpConfig::from_json(&json!({"mcpServers": {}}))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn variables_are_expanded_everywhere() {
    let config = parse(json!({
        "s": {"command": "${HOME}/bin/srv", "args": ["--port=${PORT}", "${MISSING:-dflt}", "$HOME"],
              "env": {"TOKEN": "${TOKEN}", "LEVEL": "${LEVEL:-info}"}, "cwd": "${HOME}/work"},
        "h": {"type": "http", "url": "http://localhost:${PORT}/mcp",
              "headers": {"Authorization": "Bearer ${TOKEN}"}}
    }))
    .unwrap();
    let ServerConfig::Stdio(s) = &config.servers["s"] else {
        panic!()
    };
    assert_eq!(s.command, "/home/me/bin/srv");
    assert_eq!(s.args, ["--port=8080", "dflt", "$HOME"]);
    assert_eq!(s.env["TOKEN"], "s3cret");
    assert_eq!(s.env["LEVEL"], "info");
    assert_eq!(s.cwd, Some(PathBuf::from("/home/me/work")));
    let ServerConfig::Http(h) = &config.servers["h"] else {
        panic!()
    };
    assert_eq!(h.url, "http://localhost:8080/mcp");
    assert_eq!(h.headers["Authorization"], "Bearer s3cret");
}

#[test]
fn each_error_names_its_field() {
    let cases: &[(Value, &str, &str)] = &[
        (
            json!({"bad name": {"command": "x"}}),
            "mcpServers.bad name",
            "letters, digits",
        ),
        (
            json!({"a.b": {"command": "x"}}),
            "mcpServers.a.b",
            "rename the server",
        ),
        (json!({"s": "npx"}), "mcpServers.s", "must be an object"),
        (json!({"s": {}}), "mcpServers.s", "neither \"command\""),
        (
            json!({"s": {"type": "stdio"}}),
            "mcpServers.s.command",
            "is missing",
        ),
        (
            json!({"s": {"command": 3}}),
            "mcpServers.s.command",
            "must be a string",
        ),
        (
            json!({"s": {"command": " "}}),
            "mcpServers.s.command",
            "is empty",
        ),
        (
            json!({"s": {"command": "x", "args": "a b"}}),
            "mcpServers.s.args",
            "array of strings",
        ),
        (
            json!({"s": {"command": "x", "args": ["a", 1]}}),
            "mcpServers.s.args[1]",
            "must be a string",
        ),
        (
            json!({"s": {"command": "x", "env": {"A": 1}}}),
            "mcpServers.s.env.A",
            "must be a string",
        ),
        (
            json!({"s": {"command": "x", "env": []}}),
            "mcpServers.s.env",
            "must be an object",
        ),
        (
            json!({"s": {"command": "x", "cwd": 1}}),
            "mcpServers.s.cwd",
            "must be a string",
        ),
        (
            json!({"s": {"command": "x", "args": ["${NOPE}"]}}),
            "mcpServers.s.args[0]",
            "NOPE is not set",
        ),
        (
            json!({"github": {"type": "http", "url": "ftp://x"}}),
            "mcpServers.github.url",
            "must be an http(s) URL",
        ),
        (
            json!({"github": {"type": "http", "url": "api.github.com"}}),
            "mcpServers.github.url",
            "must be an http(s) URL",
        ),
        (
            json!({"s": {"type": "http"}}),
            "mcpServers.s.url",
            "is missing",
        ),
        (
            json!({"s": {"type": "http", "url": "http://x", "headers": {"A": "${NOPE}"}}}),
            "mcpServers.s.headers.A",
            "NOPE is not set",
        ),
        (
            json!({"s": {"type": "http", "url": "http://x", "headers": {"bad header": "v"}}}),
            "mcpServers.s.headers.bad header",
            "not a valid HTTP header name",
        ),
        (
            json!({"s": {"type": "http", "url": "http://x", "headers": {"A": "a\nb"}}}),
            "mcpServers.s.headers.A",
            "line breaks",
        ),
        (
            json!({"s": {"url": "http://x"}}),
            "mcpServers.s.type",
            "needs \"type\": \"http\"",
        ),
        (
            json!({"s": {"type": "ws", "url": "ws://x"}}),
            "mcpServers.s.type",
            "unknown transport \"ws\"",
        ),
        (
            json!({"s": {"type": 1}}),
            "mcpServers.s.type",
            "must be a string",
        ),
    ];
    for (servers, field, message) in cases {
        let (got_field, text) = error(servers.clone());
        assert_eq!(&got_field, field, "{servers}: {text}");
        assert!(text.starts_with(&format!("{field}: ")), "{servers}: {text}");
        assert!(text.contains(message), "{servers}: {text}");
    }
    let e = McpConfig::from_json(&json!({"mcpServers": []})).unwrap_err();
    assert_eq!(e.field(), Some("mcpServers"));
    let e = McpConfig::from_json(&json!([1])).unwrap_err();
    assert!(e.to_string().contains("must be a JSON object"), "{e}");
}

#[test]
fn sse_is_refused_with_a_hint() {
    let (field, text) = error(json!({"old": {"type": "sse", "url": "https://x/sse"}}));
    assert_eq!(field, "mcpServers.old.type");
    assert!(text.contains("not supported"), "{text}");
    assert!(text.contains("\"type\": \"http\""), "{text}");
}

#[test]
fn one_bad_server_fails_the_whole_config() {
    let e = parse(json!({
        "good": {"command": "srv"},
        "zbad": {"type": "http", "url": "nope"}
    }))
    .unwrap_err();
    assert_eq!(e.field(), Some("mcpServers.zbad.url"));
}

#[test]
fn load_reads_a_file_and_names_it_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"s": {"command": "srv", "cwd": "tools"}, "t": {"command": "srv", "cwd": "/abs"}}}"#,
    )
    .unwrap();
    let config = McpConfig::load(&path).unwrap();
    let ServerConfig::Stdio(s) = &config.servers["s"] else {
        panic!()
    };
    assert_eq!(s.cwd, Some(dir.path().join("tools")));
    let ServerConfig::Stdio(t) = &config.servers["t"] else {
        panic!()
    };
    assert_eq!(t.cwd, Some(PathBuf::from("/abs")));

    std::fs::write(
        &path,
        r#"{"mcpServers": {"gh": {"type": "http", "url": "x"}}}"#,
    )
    .unwrap();
    let text = McpConfig::load(&path).unwrap_err().to_string();
    assert!(
        text.starts_with(&format!("{}: mcpServers.gh.url: ", path.display())),
        "{text}"
    );

    std::fs::write(&path, "{not json").unwrap();
    let e = McpConfig::load(&path).unwrap_err();
    assert!(matches!(e, ConfigError::Json { .. }), "{e}");
    assert!(e.to_string().contains("not valid JSON"), "{e}");

    let e = McpConfig::load(dir.path().join("missing.json")).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }), "{e}");
}

#[test]
fn a_bad_server_is_skipped_and_the_others_are_kept() {
    let partial = McpConfig::parse(
        &json!({"mcpServers": {
            "good": {"command": "srv", "args": ["${MISSING:-fallback}"]},
            "unset": {"command": "srv", "args": ["${NOPE}"]},
            "old": {"type": "sse", "url": "https://x/sse"},
            "web": {"type": "http", "url": "http://h/mcp", "headers": {"A": "${NOPE}"}},
            "weird": 3,
            "also_good": {"type": "http", "url": "http://localhost:${PORT}/mcp"}
        }}),
        Some(std::path::Path::new("/p/.mcp.json")),
        env,
    )
    .unwrap();
    let kept: Vec<&str> = partial.config.servers.keys().map(String::as_str).collect();
    assert_eq!(kept, ["also_good", "good"]);
    let ServerConfig::Stdio(good) = &partial.config.servers["good"] else {
        panic!()
    };
    assert_eq!(good.args, ["fallback"], "${{VAR:-default}} still expands");
    let mut skipped: Vec<(String, String)> = partial
        .skipped
        .iter()
        .map(|s| (s.server.clone(), s.to_string()))
        .collect();
    skipped.sort();
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["old", "unset", "web", "weird"]);
    for (name, text) in &skipped {
        assert!(
            text.starts_with(&format!("MCP server `{name}` is skipped")),
            "{text}"
        );
        assert!(text.contains("/p/.mcp.json: mcpServers."), "{text}");
    }
    let text = |name: &str| skipped.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert!(
        text("unset").contains("NOPE is not set; set it"),
        "{}",
        text("unset")
    );
    assert!(
        text("web").contains("mcpServers.web.headers.A"),
        "{}",
        text("web")
    );
    assert!(
        text("old").contains("\"type\": \"http\""),
        "{}",
        text("old")
    );
    assert!(
        text("weird").contains("must be an object"),
        "{}",
        text("weird")
    );
}

#[test]
fn load_partial_keeps_the_good_servers_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"s": {"command": "srv", "cwd": "tools"}, "bad": {"type": "sse", "url": "http://x/sse"}}}"#,
    )
    .unwrap();
    let partial = McpConfig::load_partial(&path).unwrap();
    let ServerConfig::Stdio(s) = &partial.config.servers["s"] else {
        panic!()
    };
    assert_eq!(s.cwd, Some(dir.path().join("tools")));
    assert_eq!(partial.skipped.len(), 1);
    assert_eq!(partial.skipped[0].server, "bad");
    assert!(
        partial.skipped[0]
            .error
            .to_string()
            .starts_with(&format!("{}: mcpServers.bad.type: ", path.display()))
    );
}
