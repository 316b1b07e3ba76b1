//! What a failed MCP connection or request means, in words a user can act on: rmcp's errors
//! name its internal types (`Transport [rmcp::transport::worker::WorkerTransport<…>] error:
//! Client error: …`), so the failures are read here (connection refused, an HTTP status, a
//! response that is not MCP, a closed connection) and said plainly, with what to check.

use std::error::Error as StdError;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The streamable HTTP transport's error, as this crate builds it (reqwest's client).
type HttpError = StreamableHttpError<reqwest::Error>;

/// Why the `initialize` handshake failed. `url` is the endpoint of an http server.
pub(crate) fn initialize(e: &ClientInitializeError, url: Option<&str>) -> String {
    match e {
        ClientInitializeError::TransportError { error, .. } => transport(error, url),
        ClientInitializeError::ConnectionClosed(_) => match url {
            Some(url) => format!(
                "the connection to {url} closed before the server answered `initialize`; check that the URL is the server's MCP endpoint"
            ),
            None => "the server closed its output before answering `initialize` (did it exit? see its stderr below)".to_owned(),
        },
        ClientInitializeError::JsonRpcError(data) => format!(
            "the server refused `initialize`: {} (JSON-RPC error {})",
            data.message, data.code.0
        ),
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => format!(
            "the server speaks no MCP protocol version this client knows ({e}); update the server"
        ),
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => format!(
            "the server's answer to `initialize` is not what MCP specifies; is it an MCP server? ({})",
            first_line(&e.to_string())
        ),
        other => first_line(&other.to_string()),
    }
}

/// Why a request to a connected server failed.
pub(crate) fn request(e: &ServiceError, url: Option<&str>) -> String {
    match e {
        ServiceError::McpError(data) => format!(
            "the server answered with an error: {} (JSON-RPC error {})",
            data.message, data.code.0
        ),
        ServiceError::TransportSend(error) => transport(error, url),
        ServiceError::TransportClosed => {
            "the connection to the server is closed (did the server exit?)".to_owned()
        }
        ServiceError::UnexpectedResponse => {
            "the server's answer is not the response MCP specifies for this request".to_owned()
        }
        other => first_line(&other.to_string()),
    }
}

/// A transport's failure: for the streamable HTTP transport, what went wrong on the wire;
/// otherwise the underlying error without the transport's type name.
fn transport(error: &DynamicTransportError, url: Option<&str>) -> String {
    match error.error.downcast_ref::<HttpError>() {
        Some(http) => http_failure(http, url.unwrap_or("the server")),
        None => first_line(&error.error.to_string()),
    }
}

fn http_failure(e: &HttpError, url: &str) -> String {
    match e {
        StreamableHttpError::Client(e) => client_failure(e, url),
        StreamableHttpError::HttpStatus(s) => status(s.status, url),
        StreamableHttpError::AuthRequired(_) => status(401, url),
        StreamableHttpError::InsufficientScope(_) => status(403, url),
        StreamableHttpError::SessionExpired => format!(
            "{url} no longer knows this session (HTTP 404); restart the session to reconnect"
        ),
        StreamableHttpError::UnexpectedContentType(kind) => format!(
            "{url} did not answer like an MCP server (content type {}, expected application/json or text/event-stream); check that the URL is the server's MCP endpoint",
            kind.as_deref().unwrap_or("missing")
        ),
        // rmcp reports a status it has no variant for as `HTTP 404 Not Found: <body>`.
        StreamableHttpError::UnexpectedServerResponse(body) if status_of(body).is_some() => {
            status(status_of(body).unwrap_or_default(), url)
        }
        StreamableHttpError::UnexpectedServerResponse(body) => format!(
            "{url} answered something that is not MCP JSON-RPC ({}); check that the URL is the server's MCP endpoint",
            first_line(body)
        ),
        StreamableHttpError::Deserialize(e) => format!(
            "{url} answered something that is not MCP JSON-RPC ({e}); check that the URL is the server's MCP endpoint"
        ),
        StreamableHttpError::UnexpectedEndOfStream => {
            format!("{url} closed its answer before it was complete; try again")
        }
        StreamableHttpError::Io(e) => format!("reading from {url} failed: {e}"),
        StreamableHttpError::ResponseBodyTooLarge { max_size } => {
            format!("{url} sent an answer larger than {max_size} bytes")
        }
        other => format!(
            "talking to {url} failed: {}",
            first_line(&other.to_string())
        ),
    }
}

/// reqwest's failure: cannot connect, timed out, an HTTP status, or a broken response.
fn client_failure(e: &reqwest::Error, url: &str) -> String {
    if let Some(code) = e.status() {
        return status(code.as_u16(), url);
    }
    let cause = root_cause(e);
    if e.is_connect() {
        format!(
            "cannot connect to {url}: {cause}; check that the server is running and the URL (host and port) is right"
        )
    } else if e.is_timeout() {
        format!("{url} did not answer in time ({cause})")
    } else if e.is_body() || e.is_decode() {
        format!("the answer of {url} could not be read: {cause}")
    } else if cause.contains("closed") {
        format!(
            "{url} closed the connection without answering ({cause}); check that the server is healthy and the URL is its MCP endpoint"
        )
    } else {
        format!("the request to {url} failed: {cause}")
    }
}

/// An HTTP status, with what it usually means for an MCP endpoint.
fn status(code: u16, url: &str) -> String {
    let reason = reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let what = match code {
        401 | 403 => format!(
            "{url} refused the request: authorization is missing or not enough; give the token in the server's `headers` (e.g. \"Authorization\": \"Bearer ${{TOKEN}}\"); OAuth sign-in is not supported"
        ),
        404 => format!(
            "there is no MCP endpoint at {url}; check the URL's path (streamable HTTP servers often use /mcp)"
        ),
        405 => format!(
            "{url} does not accept MCP requests (POST); check that it is the streamable HTTP endpoint, not a legacy SSE one"
        ),
        429 => format!("{url} is rate limiting; try again later"),
        500..=599 => format!("{url} failed on its side; see the server's logs, or try again later"),
        _ => format!("{url} refused the request"),
    };
    format!("HTTP {code} {reason}: {what}").replace(" :", ":")
}

/// The status code of rmcp's `HTTP <code> <reason>: <body>` text.
fn status_of(text: &str) -> Option<u16> {
    let code = text.strip_prefix("HTTP ")?.get(..3)?;
    code.parse().ok().filter(|c| (100..600).contains(c))
}

/// The innermost cause of an error (`Connection refused (os error 111)` rather than `error
/// sending request`).
fn root_cause(e: &(dyn StdError + 'static)) -> String {
    let mut current = e;
    while let Some(next) = current.source() {
        current = next;
    }
    first_line(&current.to_string())
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}
