//! `fetch`: GET one URL through the agent's network grant. This project's own code: a WASI
//! preview 1 guest has no sockets, so the only way out is the runner's `agent_net` host import
//! (docs/wasi.md, "Network: agent_net"), which checks the URL against the command's grant
//! (allowed domains, no private addresses), enforces its limits and audits every request.
//!
//! `fetch [-i] [-s] [-o FILE] URL`
//!
//! - The body goes to stdout, or to FILE with `-o FILE` (`-o -` is stdout). FILE is created only
//!   once the response has arrived, so a refused fetch leaves an existing file alone.
//! - `-i`, `--include`: print `HTTP <status>` and `Content-Type: <type>` lines and a blank line
//!   before the body (to the same place as the body).
//! - `-s`, `--silent`: do not print the `fetch: HTTP <status> from <url>` line for a status of
//!   400 or more (the exit status still says so). Refusals and errors are always printed.
//! - Only GET; no request headers, no body.
//!
//! Exit statuses (curl's numbers where curl has one):
//! - 0: a response with a status below 400 (the body is printed);
//! - 22: a status of 400 or more (the body is still printed, as the reason is often in it;
//!   like `curl --fail` otherwise);
//! - 28: the request timed out, or no slot of the grant's concurrency limit freed up in time;
//! - 63: the response was larger than the grant's per-response or per-command byte limit;
//! - 2: a usage error;
//! - 1: anything else: no network granted, the URL refused by the policy (private address,
//!   domain not allowed), the per-command request limit, a transport error, a write error. The
//!   reason is printed as `fetch: <reason>`.
//!
//! Outside the agent's runner (the native build the tests use) there is no `agent_net`, and every
//! fetch fails with `fetch: networking is only available inside the agent's WASI runner`, exit 1.

use std::ffi::OsString;
use std::io::{self, Write};

use crate::util::{self, HasArg, Item, LongOpt, long};

/// Exit status for an HTTP status of 400 or more (curl's `--fail`).
pub const EXIT_HTTP_ERROR: i32 = 22;
/// Exit status for a timeout, or no free concurrency slot in time (curl's timeout status).
pub const EXIT_TIMEOUT: i32 = 28;
/// Exit status for a response over the byte limits (curl's `--max-filesize` status).
pub const EXIT_TOO_LARGE: i32 = 63;
/// Exit status for a usage error.
pub const EXIT_USAGE: i32 = 2;

/// The `agent_net` error codes this command tells apart (the full list is in docs/wasi.md).
pub mod code {
    /// The response was larger than the per-response limit.
    pub const RESPONSE_TOO_LARGE: i32 = -5;
    /// The command's total byte limit was reached.
    pub const TOTAL_BYTES: i32 = -6;
    /// No complete response within the timeout.
    pub const TIMEOUT: i32 = -7;
    /// No concurrency slot freed up within the timeout.
    pub const BUSY: i32 = -8;
}

/// What an `agent_net` call that failed reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The negative error code.
    pub code: i32,
    /// The host's message (`agent_net.error`).
    pub message: String,
}

/// A response being read.
pub trait Body {
    /// The HTTP status.
    fn status(&self) -> u16;
    /// The `Content-Type`, if the response had one.
    fn content_type(&self) -> Option<String>;
    /// Reads the next bytes of the body into `buf`; 0 at the end.
    ///
    /// # Errors
    /// The host's failure.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Failure>;
}

/// Where requests go: `agent_net` inside the runner, something else in tests.
pub trait Net {
    /// GETs `url`.
    ///
    /// # Errors
    /// Why the request did not give a response.
    fn get(&mut self, url: &str) -> Result<Box<dyn Body>, Failure>;
}

const LONGS: &[LongOpt] = &[
    long("output", HasArg::Required, "o"),
    long("silent", HasArg::No, "s"),
    long("include", HasArg::No, "i"),
    long("help", HasArg::No, "help"),
];

const USAGE: &str = "Usage: fetch [-i] [-s] [-o FILE] URL\n\
GET URL through the agent's network grant and print the body.\n\n\
\x20 -o, --output=FILE  write the body to FILE instead of stdout\n\
\x20 -i, --include      print the status and content type before the body\n\
\x20 -s, --silent       no message for an HTTP status of 400 or more\n\n\
Exit status: 0 below 400, 22 for 400 or more, 28 timeout, 63 too large, 2 usage, 1 refused or failed.";

/// Entry point: `args[0]` is the program name.
pub fn main(args: Vec<OsString>) -> i32 {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    run(
        &args[1.min(args.len())..],
        &mut host::AgentNet,
        &mut out,
        &mut io::stderr(),
    )
}

/// Runs `fetch` with `args` (without the program name) over `net`. Returns the exit status.
pub fn run(args: &[OsString], net: &mut dyn Net, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let items = match util::getopt(args, "o:si", LONGS, true) {
        Ok(items) => items,
        Err(m) => {
            let _ = writeln!(err, "fetch: {m}\nTry 'fetch --help' for more information.");
            return EXIT_USAGE;
        }
    };
    let (mut output, mut silent, mut include) = (None, false, false);
    let mut urls = Vec::new();
    for item in items {
        match item {
            Item::Operand(url) => urls.push(url),
            Item::Opt { key, val, .. } => match key {
                "o" => output = val.filter(|v| v != "-"),
                "s" => silent = true,
                "i" => include = true,
                "help" => {
                    let _ = writeln!(out, "{USAGE}");
                    return 0;
                }
                _ => {}
            },
        }
    }
    let url = match urls.as_slice() {
        [url] => url.to_string_lossy().into_owned(),
        [] => return usage(err, "missing URL"),
        _ => return usage(err, "one URL at a time"),
    };
    let mut body = match net.get(&url) {
        Ok(body) => body,
        Err(failure) => return failed(err, &failure),
    };
    let mut file;
    let sink: &mut dyn Write = match &output {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => {
                file = io::BufWriter::new(f);
                &mut file
            }
            Err(e) => {
                let _ = writeln!(
                    err,
                    "fetch: cannot write '{}': {}",
                    path.to_string_lossy(),
                    util::io_msg(&e)
                );
                return 1;
            }
        },
        None => out,
    };
    let status = body.status();
    match copy(&mut *body, sink, include) {
        Ok(()) => {}
        Err(Copy::Net(failure)) => return failed(err, &failure),
        Err(Copy::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(Copy::Write(e)) => {
            let _ = writeln!(err, "fetch: write error: {}", util::io_msg(&e));
            return 1;
        }
    }
    if status >= 400 {
        if !silent {
            let _ = writeln!(err, "fetch: HTTP {status} from {url}");
        }
        return EXIT_HTTP_ERROR;
    }
    0
}

fn usage(err: &mut dyn Write, problem: &str) -> i32 {
    let _ = writeln!(
        err,
        "fetch: {problem}\nTry 'fetch --help' for more information."
    );
    EXIT_USAGE
}

/// Prints the failure and returns its exit status.
fn failed(err: &mut dyn Write, failure: &Failure) -> i32 {
    let _ = writeln!(err, "fetch: {}", failure.message);
    match failure.code {
        code::TIMEOUT | code::BUSY => EXIT_TIMEOUT,
        code::RESPONSE_TOO_LARGE | code::TOTAL_BYTES => EXIT_TOO_LARGE,
        _ => 1,
    }
}

/// Why copying the body stopped.
enum Copy {
    Net(Failure),
    Write(io::Error),
}

fn copy(body: &mut dyn Body, sink: &mut dyn Write, include: bool) -> Result<(), Copy> {
    if include {
        let mut head = format!("HTTP {}\n", body.status());
        if let Some(ct) = body.content_type() {
            head.push_str(&format!("Content-Type: {ct}\n"));
        }
        head.push('\n');
        sink.write_all(head.as_bytes()).map_err(Copy::Write)?;
    }
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = body.read(&mut buf).map_err(Copy::Net)?;
        if n == 0 {
            break;
        }
        sink.write_all(&buf[..n.min(buf.len())])
            .map_err(Copy::Write)?;
    }
    sink.flush().map_err(Copy::Write)
}

/// The `agent_net` import, inside the runner.
#[cfg(target_os = "wasi")]
#[allow(
    unsafe_code,
    reason = "calling the runner's agent_net import is an FFI call; each call's safety is argued where it is made"
)]
mod host {
    use super::{Body, Failure, Net};

    #[link(wasm_import_module = "agent_net")]
    unsafe extern "C" {
        #[link_name = "fetch"]
        fn net_fetch(url_ptr: *const u8, url_len: usize) -> i32;
        #[link_name = "status"]
        fn net_status(handle: i32) -> i32;
        #[link_name = "content_type"]
        fn net_content_type(handle: i32, buf_ptr: *mut u8, buf_len: usize) -> i32;
        #[link_name = "read"]
        fn net_read(handle: i32, buf_ptr: *mut u8, buf_len: usize) -> i32;
        #[link_name = "error"]
        fn net_error(buf_ptr: *mut u8, buf_len: usize) -> i32;
        #[link_name = "close"]
        fn net_close(handle: i32) -> i32;
    }

    // SAFETY (every call below): the host only reads `len` bytes at a pointer taken from a live
    // `&str`, or writes at most `len` bytes at a pointer taken from a live `&mut [u8]` of that
    // length, checking both against the linear memory; it keeps no pointer after returning and
    // touches no other guest memory. Calls with only integers touch no guest memory at all.

    /// The message of the last failed call.
    fn last_error(code: i32) -> Failure {
        let mut buf = vec![0u8; 512];
        // SAFETY: see above.
        let mut n = unsafe { net_error(buf.as_mut_ptr(), buf.len()) };
        if let Ok(len) = usize::try_from(n)
            && len > buf.len()
        {
            buf.resize(len, 0);
            // SAFETY: see above.
            n = unsafe { net_error(buf.as_mut_ptr(), buf.len()) };
        }
        let len = usize::try_from(n).unwrap_or(0).min(buf.len());
        let message = match String::from_utf8_lossy(&buf[..len]).into_owned() {
            m if m.is_empty() => format!("the network call failed (error {code})"),
            m => m,
        };
        Failure { code, message }
    }

    /// `agent_net` itself.
    pub struct AgentNet;

    impl Net for AgentNet {
        fn get(&mut self, url: &str) -> Result<Box<dyn Body>, Failure> {
            // SAFETY: see above.
            let handle = unsafe { net_fetch(url.as_ptr(), url.len()) };
            if handle < 0 {
                return Err(last_error(handle));
            }
            // SAFETY: see above.
            let status = unsafe { net_status(handle) };
            let response = Response { handle };
            let status = u16::try_from(status).map_err(|_| last_error(status))?;
            Ok(Box::new(Fetched { response, status }))
        }
    }

    /// An open handle, closed on drop.
    struct Response {
        handle: i32,
    }

    impl Drop for Response {
        fn drop(&mut self) {
            // SAFETY: see above.
            let _ = unsafe { net_close(self.handle) };
        }
    }

    struct Fetched {
        response: Response,
        status: u16,
    }

    impl Body for Fetched {
        fn status(&self) -> u16 {
            self.status
        }

        fn content_type(&self) -> Option<String> {
            let mut buf = vec![0u8; 256];
            // SAFETY: see above.
            let mut n =
                unsafe { net_content_type(self.response.handle, buf.as_mut_ptr(), buf.len()) };
            if let Ok(len) = usize::try_from(n)
                && len > buf.len()
            {
                buf.resize(len, 0);
                // SAFETY: see above.
                n = unsafe { net_content_type(self.response.handle, buf.as_mut_ptr(), buf.len()) };
            }
            let len = usize::try_from(n)
                .ok()
                .filter(|&len| len > 0)?
                .min(buf.len());
            Some(String::from_utf8_lossy(&buf[..len]).into_owned())
        }

        fn read(&mut self, buf: &mut [u8]) -> Result<usize, Failure> {
            // SAFETY: see above.
            let n = unsafe { net_read(self.response.handle, buf.as_mut_ptr(), buf.len()) };
            usize::try_from(n).map_err(|_| last_error(n))
        }
    }
}

/// Outside the runner: no network at all.
#[cfg(not(target_os = "wasi"))]
mod host {
    use super::{Body, Failure, Net};

    /// Stands in for `agent_net` in the native build.
    pub struct AgentNet;

    impl Net for AgentNet {
        fn get(&mut self, _url: &str) -> Result<Box<dyn Body>, Failure> {
            Err(Failure {
                code: -1,
                message: "networking is only available inside the agent's WASI runner".to_owned(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        status: u16,
        body: Vec<u8>,
        fail_read: bool,
    }

    impl Body for Fake {
        fn status(&self) -> u16 {
            self.status
        }

        fn content_type(&self) -> Option<String> {
            Some("text/plain".to_owned())
        }

        fn read(&mut self, buf: &mut [u8]) -> Result<usize, Failure> {
            if self.fail_read {
                return Err(Failure {
                    code: -10,
                    message: "no open response with handle 0".to_owned(),
                });
            }
            let n = buf.len().min(self.body.len()).min(3);
            buf[..n].copy_from_slice(&self.body[..n]);
            self.body.drain(..n);
            Ok(n)
        }
    }

    enum Answer {
        Body(u16, &'static str, bool),
        Fail(i32, &'static str),
    }

    struct FakeNet {
        answer: Answer,
        urls: Vec<String>,
    }

    impl Net for FakeNet {
        fn get(&mut self, url: &str) -> Result<Box<dyn Body>, Failure> {
            self.urls.push(url.to_owned());
            match self.answer {
                Answer::Body(status, body, fail_read) => Ok(Box::new(Fake {
                    status,
                    body: body.as_bytes().to_vec(),
                    fail_read,
                })),
                Answer::Fail(code, message) => Err(Failure {
                    code,
                    message: message.to_owned(),
                }),
            }
        }
    }

    fn fetch(args: &[&str], answer: Answer) -> (i32, String, String, Vec<String>) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let mut net = FakeNet {
            answer,
            urls: Vec::new(),
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut net, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
            net.urls,
        )
    }

    #[test]
    fn prints_the_body() {
        let (code, out, err, urls) = fetch(
            &["http://a.test/x"],
            Answer::Body(200, "hello world\n", false),
        );
        assert_eq!((code, out.as_str(), err.as_str()), (0, "hello world\n", ""));
        assert_eq!(urls, ["http://a.test/x"]);
    }

    #[test]
    fn include_prints_status_and_type_first() {
        let (code, out, _, _) = fetch(&["-i", "http://a.test/"], Answer::Body(201, "ok", false));
        assert_eq!(code, 0);
        assert_eq!(out, "HTTP 201\nContent-Type: text/plain\n\nok");
    }

    #[test]
    fn http_errors_exit_22_with_the_body() {
        let (code, out, err, _) = fetch(&["http://a.test/"], Answer::Body(404, "not here", false));
        assert_eq!((code, out.as_str()), (EXIT_HTTP_ERROR, "not here"));
        assert_eq!(err, "fetch: HTTP 404 from http://a.test/\n");
        let (code, _, err, _) = fetch(&["-s", "http://a.test/"], Answer::Body(500, "boom", false));
        assert_eq!((code, err.as_str()), (EXIT_HTTP_ERROR, ""));
    }

    #[test]
    fn refusals_print_the_hosts_reason() {
        let (code, out, err, _) = fetch(
            &["http://10.0.0.1/"],
            Answer::Fail(-3, "fetch refused at http://10.0.0.1/: 10.0.0.1 is private"),
        );
        assert_eq!((code, out.as_str()), (1, ""));
        assert_eq!(
            err,
            "fetch: fetch refused at http://10.0.0.1/: 10.0.0.1 is private\n"
        );
        let (code, ..) = fetch(&["http://a.test/"], Answer::Fail(code::TIMEOUT, "slow"));
        assert_eq!(code, EXIT_TIMEOUT);
        let (code, ..) = fetch(&["http://a.test/"], Answer::Fail(code::BUSY, "busy"));
        assert_eq!(code, EXIT_TIMEOUT);
        let (code, ..) = fetch(
            &["http://a.test/"],
            Answer::Fail(code::RESPONSE_TOO_LARGE, "big"),
        );
        assert_eq!(code, EXIT_TOO_LARGE);
        let (code, ..) = fetch(&["http://a.test/"], Answer::Fail(code::TOTAL_BYTES, "big"));
        assert_eq!(code, EXIT_TOO_LARGE);
        let (code, _, err, _) = fetch(&["http://a.test/"], Answer::Body(200, "x", true));
        assert_eq!(
            (code, err.as_str()),
            (1, "fetch: no open response with handle 0\n")
        );
    }

    #[test]
    fn usage_errors() {
        let (code, _, err, urls) = fetch(&[], Answer::Body(200, "", false));
        assert_eq!(code, EXIT_USAGE);
        assert!(err.starts_with("fetch: missing URL\n"), "{err}");
        assert!(urls.is_empty());
        let (code, _, err, _) = fetch(&["http://a/", "http://b/"], Answer::Body(200, "", false));
        assert_eq!(code, EXIT_USAGE);
        assert!(err.starts_with("fetch: one URL at a time\n"), "{err}");
        let (code, ..) = fetch(&["-x", "http://a/"], Answer::Body(200, "", false));
        assert_eq!(code, EXIT_USAGE);
        let (code, out, ..) = fetch(&["--help"], Answer::Body(200, "", false));
        assert_eq!(code, 0);
        assert!(out.starts_with("Usage: fetch"), "{out}");
    }

    #[test]
    fn output_file_is_written_only_after_a_response() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("page.html");
        std::fs::write(&file, "keep").unwrap();
        let path = file.to_string_lossy().into_owned();
        let (code, ..) = fetch(&["-o", &path, "http://a.test/"], Answer::Fail(-3, "no"));
        assert_eq!(code, 1);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
        let (code, out, ..) = fetch(
            &["http://a.test/", "--output", &path],
            Answer::Body(200, "<p>new</p>", false),
        );
        assert_eq!((code, out.as_str()), (0, ""));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "<p>new</p>");
    }

    #[test]
    fn natively_there_is_no_network() {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = run(
            &[OsString::from("http://example.com/")],
            &mut host::AgentNet,
            &mut out,
            &mut err,
        );
        assert_eq!(code, 1);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "fetch: networking is only available inside the agent's WASI runner\n"
        );
    }
}
