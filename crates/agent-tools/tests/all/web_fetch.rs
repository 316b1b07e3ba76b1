//! WebFetch (issue 15) against a loopback HTTP server: HTML comes back as Markdown, the policy
//! refuses internal addresses (also at a redirect hop) unless the host exempts one, bodies are
//! capped, HTTP errors are marked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::Arc;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolOutput};
use agent_sandbox::settings::NetworkSettings;
use agent_sandbox::urls::{StaticResolver, UrlPolicy};
use agent_tools::WebFetch;
use serde_json::{Value, json};

/// Serves `count` requests: `/page` (HTML), `/text` (plain), `/missing` (404), `/hop` (a
/// redirect to 10.0.0.1).
fn server(count: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(count) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            loop {
                let mut l = String::new();
                if reader.read_line(&mut l).unwrap() == 0 || l == "\r\n" {
                    break;
                }
            }
            let path = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (status, ctype, body, extra) = match path.as_str() {
                "/page" => (
                    "200 OK",
                    "text/html; charset=utf-8",
                    "<html><head><script>x()</script></head><body><h2>Docs</h2><p>Use <code>cargo</code> &amp; <a href=\"/next\">next</a>.</p></body></html>".to_owned(),
                    String::new(),
                ),
                "/text" => ("200 OK", "text/plain", "plain text\n".repeat(20_000), String::new()),
                "/hop" => (
                    "302 Found",
                    "text/plain",
                    String::new(),
                    "Location: http://10.0.0.1/admin\r\n".to_owned(),
                ),
                _ => ("404 Not Found", "text/plain", "nope".to_owned(), String::new()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn tool(exempt: bool) -> WebFetch {
    let mut policy = UrlPolicy::new(&NetworkSettings::default());
    if exempt {
        policy = policy.exempt_address(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    let resolver = StaticResolver {
        entries: HashMap::from([(
            "site.test".to_owned(),
            vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        )]),
        offline: true,
    };
    WebFetch::new(&NetworkSettings::default()).with_policy(policy, Arc::new(resolver))
}

fn call(t: &WebFetch, input: Value) -> Result<ToolOutput, ToolError> {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path(), "s1", "toolu_1");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(t.call(input, &ctx))
}

#[test]
fn html_comes_back_as_markdown() {
    let port = server(1);
    let out = call(
        &tool(true),
        json!({"url": format!("http://site.test:{port}/page"), "prompt": "what tool?"}),
    )
    .unwrap();
    assert!(!out.is_error);
    assert_eq!(out.output["status"], 200);
    assert_eq!(out.output["prompt"], "what tool?");
    assert_eq!(
        out.output["content"],
        "## Docs\n\nUse `cargo` & [next](/next).\n"
    );
}

#[test]
fn long_bodies_are_cut_and_errors_marked() {
    let port = server(2);
    let t = tool(true);
    let out = call(
        &t,
        json!({"url": format!("http://site.test:{port}/text"), "prompt": "p"}),
    )
    .unwrap();
    let content = out.output["content"].as_str().unwrap();
    assert!(content.len() < 100_100 && content.ends_with("(content cut; the page is longer)"));
    let out = call(
        &t,
        json!({"url": format!("http://site.test:{port}/missing"), "prompt": "p"}),
    )
    .unwrap();
    assert!(out.is_error);
    assert_eq!(out.output["status"], 404);
}

#[test]
fn internal_addresses_are_refused_at_every_hop() {
    let port = server(1);
    // Loopback without the host's exemption.
    let err = call(
        &tool(false),
        json!({"url": format!("http://site.test:{port}/page"), "prompt": "p"}),
    )
    .unwrap_err();
    assert_eq!(err.error_type(), "sandbox_denied", "{err}");
    // A redirect to a private address.
    let err = call(
        &tool(true),
        json!({"url": format!("http://site.test:{port}/hop"), "prompt": "p"}),
    )
    .unwrap_err();
    assert_eq!(err.error_type(), "sandbox_denied", "{err}");
    assert!(err.to_string().contains("10.0.0.1"), "{err}");
    for url in [
        "file:///etc/passwd",
        "http://169.254.169.254/latest/meta-data",
        "ftp://site.test/x",
    ] {
        let err = call(&tool(true), json!({"url": url, "prompt": "p"})).unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "{url}: {err}");
    }
}
