//! `agent_net` (netfetch) against a loopback HTTP server that a test-only policy exempts
//! (`UrlPolicy::exempt_address`): an allowed URL is fetched and audited; private and loopback
//! addresses, domains outside the allow list and commands without a grant are refused with the
//! reason; every limit (response bytes, requests per command, total bytes, timeout, the
//! command's wall time, concurrency across a grant) is enforced; bad pointers are error codes,
//! never traps. A WAT guest drives the ABI directly; the last tests run the core-utils bundle's
//! real `fetch` through the toolbox (when `cargo xtask bundles` has built the registry).
//!
//! Nothing here leaves the machine: the only server is on 127.0.0.1, and the refused addresses
//! are refused before any connection.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a panic is a failure report; the skip note is for the reader"
)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_sandbox::settings::NetworkSettings;
use agent_sandbox::urls::{StaticResolver, UrlPolicy};
use agent_wasi::net::{self, NetErrorKind};
use agent_wasi::shell::ShellContext;
use agent_wasi::{
    CommandInput, CommandOutput, EXIT_WALL_TIME, LimitKind, Limits, NetAudit, NetGrant, NetLimits,
    PreparedModule, Runtime, RuntimeConfig,
};
use sha2::{Digest, Sha256};

/// What the loopback server saw.
#[derive(Default)]
struct Stats {
    requests: AtomicUsize,
    active: AtomicUsize,
    max_active: AtomicUsize,
}

/// A loopback HTTP/1.1 server, one thread per connection:
/// `/hello` (text), `/big` (10 000 bytes), `/status/404`, `/slow` (answers after 400 ms),
/// `/hang` (never answers), `/hop` (a redirect to 10.0.0.1).
struct Server {
    port: u16,
    stats: Arc<Stats>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stats = Arc::new(Stats::default());
        let shared = Arc::clone(&stats);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let stats = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &stats));
            }
        });
        Self { port, stats }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> usize {
        self.stats.requests.load(Ordering::SeqCst)
    }
}

fn serve(mut stream: std::net::TcpStream, stats: &Stats) {
    let active = stats.active.fetch_add(1, Ordering::SeqCst) + 1;
    stats.max_active.fetch_max(active, Ordering::SeqCst);
    stats.requests.fetch_add(1, Ordering::SeqCst);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    let _ = reader.read_line(&mut first);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let (status, body, extra) = match path.as_str() {
        "/hello" => ("200 OK", "hello from loopback\n".to_owned(), ""),
        "/big" => ("200 OK", "x".repeat(10_000), ""),
        "/slow" => {
            std::thread::sleep(Duration::from_millis(400));
            ("200 OK", "slow\n".to_owned(), "")
        }
        "/hang" => {
            // Never answer; hold the connection until the client gives up.
            stats.active.fetch_sub(1, Ordering::SeqCst);
            let mut sink = [0u8; 64];
            while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
            return;
        }
        "/hop" => (
            "302 Found",
            String::new(),
            "Location: http://10.0.0.1/admin\r\n",
        ),
        _ => ("404 Not Found", "no such page\n".to_owned(), ""),
    };
    // Counted as done before the answer, so the next request a client makes after reading it
    // never overlaps this one in `max_active`.
    stats.active.fetch_sub(1, Ordering::SeqCst);
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A guest that fetches each of its arguments in turn: for each, the status as three digits
/// and a newline, then the body, on stdout. On the first error it writes `agent_net.error`'s
/// message to stderr and exits with the negated error code (3 for `ERR_REFUSED`, ...).
const GET: &str = r#"(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "agent_net" "fetch" (func $fetch (param i32 i32) (result i32)))
  (import "agent_net" "status" (func $status (param i32) (result i32)))
  (import "agent_net" "read" (func $read (param i32 i32 i32) (result i32)))
  (import "agent_net" "close" (func $close (param i32) (result i32)))
  (import "agent_net" "error" (func $error (param i32 i32) (result i32)))
  (memory (export "memory") 3)
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 16) (local.get $ptr))
    (i32.store (i32.const 20) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 16) (i32.const 1) (i32.const 24))))
  (func $strlen (param $p i32) (result i32) (local $n i32)
    (block $done (loop $next
      (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $next)))
    (local.get $n))
  (func $fail (param $code i32) (local $len i32)
    (local.set $len (call $error (i32.const 40000) (i32.const 1000)))
    (if (i32.gt_u (local.get $len) (i32.const 1000)) (then (local.set $len (i32.const 1000))))
    (i32.store8 (i32.add (i32.const 40000) (local.get $len)) (i32.const 10))
    (call $write (i32.const 2) (i32.const 40000) (i32.add (local.get $len) (i32.const 1)))
    (call $proc_exit (i32.sub (i32.const 0) (local.get $code))))
  (func $status_line (param $s i32)
    (i32.store8 (i32.const 41024) (i32.add (i32.const 48) (i32.div_u (local.get $s) (i32.const 100))))
    (i32.store8 (i32.const 41025)
      (i32.add (i32.const 48) (i32.rem_u (i32.div_u (local.get $s) (i32.const 10)) (i32.const 10))))
    (i32.store8 (i32.const 41026) (i32.add (i32.const 48) (i32.rem_u (local.get $s) (i32.const 10))))
    (i32.store8 (i32.const 41027) (i32.const 10))
    (call $write (i32.const 1) (i32.const 41024) (i32.const 4)))
  (func (export "_start")
    (local $argc i32) (local $i i32) (local $url i32) (local $h i32) (local $n i32) (local $s i32)
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (local.set $argc (i32.load (i32.const 0)))
    (drop (call $args_get (i32.const 64) (i32.const 4096)))
    (local.set $i (i32.const 1))
    (block $end (loop $each
      (br_if $end (i32.ge_u (local.get $i) (local.get $argc)))
      (local.set $url (i32.load (i32.add (i32.const 64) (i32.mul (local.get $i) (i32.const 4)))))
      (local.set $h (call $fetch (local.get $url) (call $strlen (local.get $url))))
      (if (i32.lt_s (local.get $h) (i32.const 0)) (then (call $fail (local.get $h))))
      (local.set $s (call $status (local.get $h)))
      (if (i32.lt_s (local.get $s) (i32.const 0)) (then (call $fail (local.get $s))))
      (call $status_line (local.get $s))
      (block $eof (loop $chunk
        (local.set $n (call $read (local.get $h) (i32.const 65536) (i32.const 65536)))
        (if (i32.lt_s (local.get $n) (i32.const 0)) (then (call $fail (local.get $n))))
        (br_if $eof (i32.eqz (local.get $n)))
        (call $write (i32.const 1) (i32.const 65536) (local.get $n))
        (br $chunk)))
      (if (i32.ne (call $close (local.get $h)) (i32.const 0)) (then (call $proc_exit (i32.const 100))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each)))))"#;

/// A guest that calls every function with bad pointers, lengths and handles; it exits with the
/// number of the first check that did not get the expected error code, 0 when all did.
const ABUSE: &str = r#"(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "agent_net" "fetch" (func $fetch (param i32 i32) (result i32)))
  (import "agent_net" "status" (func $status (param i32) (result i32)))
  (import "agent_net" "content_type" (func $content_type (param i32 i32 i32) (result i32)))
  (import "agent_net" "read" (func $read (param i32 i32 i32) (result i32)))
  (import "agent_net" "close" (func $close (param i32) (result i32)))
  (import "agent_net" "error" (func $error (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "\ff\fe")
  (func $expect (param $got i32) (param $want i32) (param $check i32)
    (if (i32.ne (local.get $got) (local.get $want)) (then (call $proc_exit (local.get $check)))))
  (func (export "_start")
    ;; a URL past the end of memory, across the 4 GiB boundary, of negative or huge length
    (call $expect (call $fetch (i32.const 65530) (i32.const 100)) (i32.const -2) (i32.const 1))
    (call $expect (call $fetch (i32.const -1) (i32.const 2)) (i32.const -2) (i32.const 2))
    (call $expect (call $fetch (i32.const 0) (i32.const -1)) (i32.const -2) (i32.const 3))
    (call $expect (call $fetch (i32.const 0) (i32.const 60000)) (i32.const -2) (i32.const 4))
    ;; a URL that is not UTF-8
    (call $expect (call $fetch (i32.const 100) (i32.const 2)) (i32.const -2) (i32.const 5))
    ;; handles never returned
    (call $expect (call $status (i32.const 0)) (i32.const -10) (i32.const 6))
    (call $expect (call $status (i32.const -1)) (i32.const -10) (i32.const 7))
    (call $expect (call $read (i32.const 3) (i32.const 0) (i32.const 16)) (i32.const -10) (i32.const 8))
    (call $expect (call $content_type (i32.const 0) (i32.const 0) (i32.const 16)) (i32.const -10) (i32.const 9))
    (call $expect (call $close (i32.const 0)) (i32.const -10) (i32.const 10))
    ;; a bad buffer for the message keeps the message
    (call $expect (call $error (i32.const 65535) (i32.const 2)) (i32.const -2) (i32.const 11))
    (if (i32.le_s (call $error (i32.const 0) (i32.const 0)) (i32.const 0))
      (then (call $proc_exit (i32.const 12))))))"#;

fn prepare(runtime: &Runtime, wat: &str) -> PreparedModule {
    let wasm = wat::parse_str(wat).unwrap();
    let sha: String = Sha256::digest(&wasm)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    runtime.prepare(&wasm, &sha).unwrap()
}

/// The runtime and the `GET` guest.
fn get_guest() -> (Runtime, PreparedModule) {
    let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
    let module = prepare(&runtime, GET);
    (runtime, module)
}

/// The test-only policy: no domain list, and the loopback address exempt so the test server can
/// be reached. Every other private address stays refused.
fn loopback_policy() -> UrlPolicy {
    UrlPolicy::new(&NetworkSettings::default()).exempt_address(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// A grant over `policy` whose audit records are also collected in the returned list.
fn grant_with_log(policy: UrlPolicy) -> (NetGrant, Arc<Mutex<Vec<NetAudit>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    let grant = NetGrant::new(policy).on_audit(move |record| {
        sink.lock().unwrap().push(record.clone());
    });
    (grant, log)
}

fn run(
    runtime: &Runtime,
    module: &PreparedModule,
    grant: Option<&NetGrant>,
    urls: &[String],
) -> CommandOutput {
    let workspace = tempfile::tempdir().unwrap();
    let mut input =
        CommandInput::new(std::iter::once("get".to_owned()).chain(urls.iter().cloned()));
    if let Some(grant) = grant {
        input = input.with_net(grant.clone());
    }
    runtime.run(module, input, workspace.path()).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The exit status the `GET` guest gives for an error code.
fn status_of(code: i32) -> i32 {
    -code
}

#[test]
fn an_allowed_url_is_fetched_and_audited() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, log) = grant_with_log(loopback_policy());
    let url = server.url("/hello");
    let out = run(&runtime, &module, Some(&grant), std::slice::from_ref(&url));
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "200\nhello from loopback\n");
    assert_eq!(server.requests(), 1);

    let records = &out.meta.net_requests;
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(record.url, url);
    assert_eq!(record.final_url.as_deref(), Some(url.as_str()));
    assert_eq!(record.status, Some(200));
    assert_eq!(record.bytes, 20);
    assert_eq!(record.error, None);
    assert_eq!(record.reason, None);
    // The same record went to the grant's callback.
    assert_eq!(*log.lock().unwrap(), *records);
    // And it serializes for the audit log.
    let json = serde_json::to_value(record).unwrap();
    assert_eq!(json["status"], 200);
    assert_eq!(json["bytes"], 20);
    assert!(json.get("error").is_none(), "{json}");

    // An HTTP error is a response like any other: the guest gets its status.
    let out = run(
        &runtime,
        &module,
        Some(&grant),
        &[server.url("/status/404")],
    );
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "404\nno such page\n");
    assert_eq!(out.meta.net_requests[0].status, Some(404));
}

/// Async callers run commands with `spawn_blocking` (the Bash tool does): the fetch's own
/// runtime works there too.
#[test]
fn a_fetch_works_from_spawn_blocking() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, _) = grant_with_log(loopback_policy());
    let url = server.url("/hello");
    let outer = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = outer.block_on(async move {
        tokio::task::spawn_blocking(move || run(&runtime, &module, Some(&grant), &[url]))
            .await
            .unwrap()
    });
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "200\nhello from loopback\n");
}

#[test]
fn private_and_loopback_addresses_are_refused_with_the_reason() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, log) = grant_with_log(loopback_policy());
    for (url, why) in [
        ("http://10.0.0.1/", "private (10.0.0.0/8)"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "link-local (169.254.0.0/16)",
        ),
        ("http://192.168.1.1:8080/", "private (192.168.0.0/16)"),
        ("http://[::1]/", "loopback (::1/128)"),
        ("http://0x0a.1/", "private (10.0.0.0/8)"),
    ] {
        let out = run(&runtime, &module, Some(&grant), &[url.to_owned()]);
        assert_eq!(out.exit_code, status_of(net::ERR_REFUSED), "{url}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(why), "{url}: {stderr}");
        assert_eq!(out.meta.net_requests.len(), 1);
        assert_eq!(out.meta.net_requests[0].error, Some(NetErrorKind::Refused));
        assert_eq!(
            out.meta.net_requests[0].reason.as_deref(),
            Some(stderr.trim_end())
        );
    }
    assert_eq!(log.lock().unwrap().len(), 5);

    // A redirect to a private address is refused at that hop.
    let out = run(&runtime, &module, Some(&grant), &[server.url("/hop")]);
    assert_eq!(out.exit_code, status_of(net::ERR_REFUSED));
    assert!(
        text(&out.stderr).contains("fetch refused at http://10.0.0.1/admin"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.requests(), 1);

    // Without the test-only exemption, the loopback server itself is refused, unconnected.
    let strict = NetGrant::new(UrlPolicy::new(&NetworkSettings::default()));
    let out = run(&runtime, &module, Some(&strict), &[server.url("/hello")]);
    assert_eq!(out.exit_code, status_of(net::ERR_REFUSED));
    assert!(
        text(&out.stderr).contains("127.0.0.1, a loopback (127.0.0.0/8) address"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(server.requests(), 1);
}

#[test]
fn domains_outside_the_allow_list_are_refused() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let loopback = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    let resolver = StaticResolver {
        entries: HashMap::from([
            ("allowed.test".to_owned(), loopback.clone()),
            ("other.test".to_owned(), loopback),
        ]),
        offline: true,
    };
    let settings = NetworkSettings {
        allowed_domains: Some(vec!["allowed.test".to_owned()]),
        ..NetworkSettings::default()
    };
    let policy = UrlPolicy::new(&settings).exempt_address(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let grant = NetGrant::new(policy).with_resolver(Arc::new(resolver));

    let allowed = format!("http://allowed.test:{}/hello", server.port);
    let out = run(&runtime, &module, Some(&grant), &[allowed]);
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "200\nhello from loopback\n");

    let other = format!("http://other.test:{}/hello", server.port);
    let out = run(&runtime, &module, Some(&grant), &[other]);
    assert_eq!(out.exit_code, status_of(net::ERR_REFUSED));
    assert!(
        text(&out.stderr).contains("other.test is not in the allowed domains"),
        "{}",
        text(&out.stderr)
    );
    // The allow list applies to addresses too.
    let out = run(&runtime, &module, Some(&grant), &[server.url("/hello")]);
    assert_eq!(out.exit_code, status_of(net::ERR_REFUSED));
    assert!(text(&out.stderr).contains("127.0.0.1 is not in the allowed domains"));
    // Only the allowed request reached the server.
    assert_eq!(server.requests(), 1);
}

#[test]
fn without_a_grant_every_request_is_refused() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let out = run(&runtime, &module, None, &[server.url("/hello")]);
    assert_eq!(out.exit_code, status_of(net::ERR_NOT_GRANTED));
    assert_eq!(
        text(&out.stderr),
        "network is not granted to this command\n"
    );
    assert_eq!(out.meta.net_requests.len(), 1);
    assert_eq!(
        out.meta.net_requests[0].error,
        Some(NetErrorKind::NotGranted)
    );
    assert_eq!(server.requests(), 0);
}

#[test]
fn responses_over_the_byte_limit_are_refused() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, _) = grant_with_log(loopback_policy());
    let grant = grant.with_limits(NetLimits::default().with_max_response_bytes(1000));
    let out = run(&runtime, &module, Some(&grant), &[server.url("/big")]);
    assert_eq!(out.exit_code, status_of(net::ERR_RESPONSE_TOO_LARGE));
    assert_eq!(
        text(&out.stderr),
        "the response is larger than the limit of 1000 bytes\n"
    );
    assert!(out.stdout.is_empty());
    let record = &out.meta.net_requests[0];
    assert_eq!(record.error, Some(NetErrorKind::ResponseTooLarge));
    assert_eq!(record.status, Some(200));
    assert_eq!(record.bytes, 1000);

    // A body within the limit passes.
    let out = run(&runtime, &module, Some(&grant), &[server.url("/hello")]);
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
}

#[test]
fn requests_per_command_are_limited() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, log) = grant_with_log(loopback_policy());
    let grant = grant.with_limits(NetLimits::default().with_max_requests(2));
    let url = server.url("/hello");
    let out = run(
        &runtime,
        &module,
        Some(&grant),
        &[url.clone(), url.clone(), url],
    );
    assert_eq!(out.exit_code, status_of(net::ERR_TOO_MANY_REQUESTS));
    assert_eq!(text(&out.stdout), "200\nhello from loopback\n".repeat(2));
    assert!(
        text(&out.stderr).contains("at most 2 requests"),
        "{}",
        text(&out.stderr)
    );
    let errors: Vec<_> = out.meta.net_requests.iter().map(|r| r.error).collect();
    assert_eq!(errors, [None, None, Some(NetErrorKind::TooManyRequests)]);
    assert_eq!(log.lock().unwrap().len(), 3);
    assert_eq!(server.requests(), 2);

    // The limit is per command: the next command starts again.
    let out = run(&runtime, &module, Some(&grant), &[server.url("/hello")]);
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
}

#[test]
fn total_bytes_per_command_are_limited() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, _) = grant_with_log(loopback_policy());
    let grant = grant.with_limits(NetLimits::default().with_max_total_bytes(15_000));
    let big = server.url("/big");
    let out = run(&runtime, &module, Some(&grant), &[big.clone(), big]);
    assert_eq!(out.exit_code, status_of(net::ERR_TOTAL_BYTES));
    assert_eq!(out.stdout.len(), 4 + 10_000);
    assert!(
        text(&out.stderr).contains("past 15000 bytes"),
        "{}",
        text(&out.stderr)
    );
    let records = &out.meta.net_requests;
    assert_eq!(records[0].bytes, 10_000);
    assert_eq!(records[1].error, Some(NetErrorKind::TotalBytes));
    assert_eq!(records[1].bytes, 5_000);
}

#[test]
fn a_server_that_never_answers_times_out() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, _) = grant_with_log(loopback_policy());
    let grant = grant.with_limits(NetLimits::default().with_timeout(Duration::from_millis(300)));
    let started = Instant::now();
    let out = run(&runtime, &module, Some(&grant), &[server.url("/hang")]);
    let took = started.elapsed();
    assert_eq!(
        out.exit_code,
        status_of(net::ERR_TIMEOUT),
        "{}",
        text(&out.stderr)
    );
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        text(&out.stderr).contains("no complete response"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.meta.net_requests[0].error, Some(NetErrorKind::Timeout));
    assert_eq!(out.meta.limit_hit, None);
}

#[test]
fn the_commands_wall_time_bounds_a_fetch() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let (grant, _) = grant_with_log(loopback_policy());
    let workspace = tempfile::tempdir().unwrap();
    let input = CommandInput::new(["get".to_owned(), server.url("/hang")])
        .with_net(grant)
        .with_limits(Limits::default().with_wall_time(Duration::from_millis(400)));
    let started = Instant::now();
    let out = runtime.run(&module, input, workspace.path()).unwrap();
    let took = started.elapsed();
    assert_eq!(out.exit_code, EXIT_WALL_TIME, "{}", text(&out.stderr));
    assert_eq!(out.meta.limit_hit, Some(LimitKind::WallTime));
    assert!(took < Duration::from_secs(5), "{took:?}");
    let record = &out.meta.net_requests[0];
    assert_eq!(record.error, Some(NetErrorKind::Timeout));
    assert!(
        record
            .reason
            .as_deref()
            .unwrap()
            .contains("wall-time limit"),
        "{record:?}"
    );
}

#[test]
fn concurrency_is_limited_across_the_commands_of_a_grant() {
    let server = Server::start();
    let (runtime, module) = get_guest();
    let runtime = Arc::new(runtime);
    let (grant, _) = grant_with_log(loopback_policy());
    let grant = grant.with_limits(NetLimits::default().with_max_concurrent(1));

    // Three commands at once, one request in flight at a time: all succeed, one by one.
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let (runtime, module, grant) = (Arc::clone(&runtime), module.clone(), grant.clone());
            let url = server.url("/slow");
            std::thread::spawn(move || run(&runtime, &module, Some(&grant), &[url]))
        })
        .collect();
    for thread in threads {
        let out = thread.join().unwrap();
        assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "200\nslow\n");
    }
    assert_eq!(server.requests(), 3);
    assert_eq!(server.stats.max_active.load(Ordering::SeqCst), 1);
    assert_eq!(grant.in_flight(), 0);

    // While one request holds the only slot, a request with a short timeout gives up: busy.
    let holder = {
        let (runtime, module, grant) = (Arc::clone(&runtime), module.clone(), grant.clone());
        let url = server.url("/slow");
        std::thread::spawn(move || run(&runtime, &module, Some(&grant), &[url]))
    };
    let waited = Instant::now();
    while grant.in_flight() == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "the request never started"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // Other limits, the same slots: the holder runs with a clone of this grant.
    let impatient = grant.with_limits(
        NetLimits::default()
            .with_max_concurrent(1)
            .with_timeout(Duration::from_millis(50)),
    );
    let out = run(&runtime, &module, Some(&impatient), &[server.url("/hello")]);
    assert_eq!(
        out.exit_code,
        status_of(net::ERR_BUSY),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("concurrency limit"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.meta.net_requests[0].error, Some(NetErrorKind::Busy));
    let held = holder.join().unwrap();
    assert_eq!(held.exit_code, 0, "{}", text(&held.stderr));
}

#[test]
fn bad_pointers_lengths_and_handles_are_error_codes_not_traps() {
    let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
    let module = prepare(&runtime, ABUSE);
    let (grant, log) = grant_with_log(loopback_policy());
    let workspace = tempfile::tempdir().unwrap();
    let out = runtime
        .run(
            &module,
            CommandInput::new(["abuse"]).with_net(grant),
            workspace.path(),
        )
        .unwrap();
    assert_eq!(out.exit_code, 0, "check {} failed", out.exit_code);
    assert_eq!(out.meta.trap, None);
    // Calls with unusable arguments are not requests.
    assert!(out.meta.net_requests.is_empty());
    assert!(log.lock().unwrap().is_empty());
}

/// The toolbox over the installed core-utils bundle, when the registry has been built with
/// `fetch` in it.
fn toolbox_with_fetch(dir: &Path) -> Option<agent_wasi::toolbox::Toolbox> {
    let toolbox = crate::support::toolbox(dir)?;
    if !toolbox.has("fetch") {
        assert!(
            std::env::var_os("CI").is_none(),
            "the bundle registry has no `fetch`: rebuild it with `cargo xtask bundles`"
        );
        eprintln!("skipped: the registry predates `fetch`; run `cargo xtask bundles`");
        return None;
    }
    Some(toolbox)
}

#[test]
fn the_fetch_command_runs_through_the_grant() {
    let dir = tempfile::tempdir().unwrap();
    let Some(toolbox) = toolbox_with_fetch(dir.path()) else {
        return;
    };
    let server = Server::start();
    let (grant, log) = grant_with_log(loopback_policy());
    let toolbox = toolbox.with_network(grant);
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let exec = |argv: &[&str]| {
        toolbox
            .exec(
                argv.iter().map(|a| (*a).to_owned()).collect(),
                "/",
                Vec::new(),
                agent_wasi::Input::Null,
                1 << 20,
                &workspace,
            )
            .unwrap()
    };

    let out = exec(&["fetch", &server.url("/hello")]);
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello from loopback\n");
    let meta = out.meta.as_ref().unwrap();
    assert_eq!(meta.net_requests.len(), 1);
    assert_eq!(meta.net_requests[0].status, Some(200));

    let out = exec(&["fetch", "-i", "-o", "page.txt", &server.url("/hello")]);
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(workspace.join("page.txt")).unwrap(),
        "HTTP 200\nContent-Type: text/plain\n\nhello from loopback\n"
    );

    let out = exec(&["fetch", &server.url("/status/404")]);
    assert_eq!(out.exit_code, 22);
    assert_eq!(text(&out.stdout), "no such page\n");
    assert!(text(&out.stderr).contains("fetch: HTTP 404 from"));

    let out = exec(&["fetch", "http://169.254.169.254/latest/meta-data/"]);
    assert_eq!(out.exit_code, 1);
    assert!(
        text(&out.stderr).starts_with("fetch: fetch refused at http://169.254.169.254/"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("link-local"));

    // Each shell stage gets the grant too.
    let ctx = ShellContext::new(&workspace);
    let run = toolbox
        .shell(&format!("fetch {} | wc -c", server.url("/big")), &ctx)
        .unwrap();
    assert_eq!(run.output.exit_code, 0, "{}", text(&run.output.stderr));
    assert_eq!(text(&run.output.stdout).trim(), "10000");

    let urls: Vec<String> = log.lock().unwrap().iter().map(|r| r.url.clone()).collect();
    assert_eq!(urls.len(), 5, "{urls:?}");
    assert_eq!(server.requests(), 4);
}

#[test]
fn the_fetch_command_without_a_grant_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(toolbox) = toolbox_with_fetch(dir.path()) else {
        return;
    };
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let out = toolbox
        .exec(
            vec!["fetch".to_owned(), "http://example.com/".to_owned()],
            "/",
            Vec::new(),
            agent_wasi::Input::Null,
            1 << 20,
            &workspace,
        )
        .unwrap();
    assert_eq!(out.exit_code, 1);
    assert_eq!(
        text(&out.stderr),
        "fetch: network is not granted to this command\n"
    );
}
