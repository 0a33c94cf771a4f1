//! Connecting to the server under test: spawn a stdio server or open a streamable HTTP session,
//! then run the handshake — `server/discover`, or `initialize` for a server that predates
//! 2026-07-28 — bounded by the connect timeout.
//!
//! Nothing the server sends is printed from here unsanitized: handshake failures are described
//! with our own text, and a stdio server's stderr is captured (never passed through) so the last
//! lines can be shown, sanitized, when the server could not be reached.

use mcplens::ErrorCode;
use std::collections::HashMap;
use std::error::Error as _;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcplens::rmcp::DeclaredClient;
use rmcp::model::ProtocolVersion;
use rmcp::model::{ClientCapabilities, ClientConfig, ClientJsonRpcMessage, Implementation};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess, Transport};
use rmcp::RoleClient;
use tokio::io::AsyncReadExt;

/// Where the server is.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A stdio server: the program and its arguments.
    Stdio(Vec<String>),
    /// A streamable HTTP server, with extra request headers.
    Http { url: String, headers: Vec<(String, String)> },
}

/// A connection failure: the stable code and our own one-line explanation.
#[derive(Debug)]
pub struct ConnectError {
    pub code: ErrorCode,
    pub message: String,
    /// The last lines a stdio server wrote to stderr, sanitized.
    pub stderr_tail: Vec<String>,
}

/// List requests sent so far, per list method (for the progress line).
#[derive(Debug, Default)]
pub struct RequestCounter {
    resources: AtomicU32,
    templates: AtomicU32,
}

impl RequestCounter {
    /// Requests of `method` sent so far.
    pub fn sent(&self, method: &str) -> u32 {
        match method {
            "resources/list" => self.resources.load(Ordering::Relaxed),
            "resources/templates/list" => self.templates.load(Ordering::Relaxed),
            _ => 0,
        }
    }

    fn count(&self, message: &ClientJsonRpcMessage) {
        if let ClientJsonRpcMessage::Request(request) = message {
            match request.request.method() {
                "resources/list" => self.resources.fetch_add(1, Ordering::Relaxed),
                "resources/templates/list" => self.templates.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            };
        }
    }
}

/// A transport that counts the list requests going out; everything else passes through.
struct Counting<T> {
    inner: T,
    counter: Arc<RequestCounter>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Counting<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.counter.count(&item);
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The last bytes a stdio server wrote to stderr.
#[derive(Debug, Default)]
struct Tail(Vec<u8>);

/// Raw stderr kept (the end of it).
const TAIL_BYTES: usize = 16 * 1024;
/// At most this many of the last non-empty lines are shown: enough for a Node or Python stack
/// whose cause ("Cannot find module …") sits above a dozen frames …
pub const TAIL_LINES: usize = 40;
/// … and at most this many characters in all, each line cut at [`TAIL_LINE_CHARS`].
pub const TAIL_CHARS: usize = 4_000;
const TAIL_LINE_CHARS: usize = 300;

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        if self.0.len() > TAIL_BYTES {
            let cut = self.0.len() - TAIL_BYTES;
            self.0.drain(..cut);
        }
    }

    /// The last non-empty lines, sanitized by the core and cut short, within [`TAIL_LINES`] and
    /// [`TAIL_CHARS`]; the first line says how many earlier lines were left out, if any.
    fn lines(&self) -> Vec<String> {
        let text = String::from_utf8_lossy(&self.0);
        let lines: Vec<String> = text
            .lines()
            .map(|l| cut(&mcplens::sanitize::label(l), TAIL_LINE_CHARS))
            .filter(|l| !l.trim().is_empty())
            .collect();
        let (mut kept, mut chars) = (0, 0);
        for line in lines.iter().rev() {
            let n = line.chars().count();
            if kept == TAIL_LINES - 1 || chars + n > TAIL_CHARS {
                break;
            }
            kept += 1;
            chars += n;
        }
        let skipped = lines.len() - kept;
        let mut tail: Vec<String> = lines.into_iter().skip(skipped).collect();
        if skipped > 0 || self.0.len() == TAIL_BYTES {
            tail.insert(0, "(earlier lines not shown)".to_owned());
        }
        tail
    }
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// An initialized client session.
pub struct Connection {
    service: RunningService<RoleClient, DeclaredClient>,
    /// List requests sent so far.
    pub requests: Arc<RequestCounter>,
}

impl Connection {
    /// The peer to run traversals on.
    pub fn peer(&self) -> &rmcp::Peer<RoleClient> {
        self.service.peer()
    }

    /// The protocol revision the session speaks (negotiated by `initialize` or
    /// `server/discover`).
    pub fn protocol_version(&self) -> Option<String> {
        self.service.peer().peer_info().map(|info| info.protocol_version.as_str().to_owned())
    }

    /// The server's `serverInfo.name`, sanitized as a label; `None` when it is empty.
    pub fn server_name(&self) -> Option<String> {
        let info = self.service.peer().peer_info()?;
        let name = mcplens::sanitize::label(&info.server_info.as_ref()?.name);
        let name = name.trim();
        (!name.is_empty()).then(|| name.to_owned())
    }

    /// Ends the session: closes the transport (a stdio server sees end of input and is killed if
    /// it does not exit) within a short bound.
    pub async fn close(mut self) {
        let _ = self.service.close_with_timeout(Duration::from_millis(500)).await;
    }
}

/// Which protocol revisions the handshake offers.
#[derive(Debug, Clone, Default)]
pub enum Protocol {
    /// `server/discover` with the revisions that have no `initialize` (2026-07-28), as that
    /// revision specifies; a server that answers it with a JSON-RPC error (it predates it) gets
    /// the `initialize` handshake offering the latest revision that has one (2025-11-25).
    #[default]
    Auto,
    /// This revision only: `initialize` if it has one, else `server/discover`.
    Only(ProtocolVersion),
}

impl Protocol {
    /// Parses `--protocol-version`: `auto` or a revision rmcp knows.
    pub fn parse(value: &str) -> Result<Protocol, String> {
        if value == "auto" {
            return Ok(Protocol::Auto);
        }
        ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .find(|v| v.as_str() == value)
            .map(|v| Protocol::Only(v.clone()))
            .ok_or_else(|| {
                let known: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS.iter().map(|v| v.as_str()).collect();
                format!("--protocol-version must be auto or one of {}", known.join(", "))
            })
    }

    /// The client's `initialize` parameters and how the session starts.
    fn lifecycle(&self) -> (ClientConfig, ClientLifecycleMode) {
        let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("mcplens", mcplens::VERSION));
        match self {
            Protocol::Auto => {
                let mut modern: Vec<ProtocolVersion> =
                    ProtocolVersion::KNOWN_VERSIONS.iter().filter(|v| !v.has_initialize()).cloned().collect();
                modern.reverse(); // newest first
                let legacy = ProtocolVersion::LATEST_WITH_INITIALIZE;
                (
                    config.with_protocol_version(legacy.clone()),
                    ClientLifecycleMode::Auto { preferred_versions: modern, legacy_version: Some(legacy) },
                )
            }
            Protocol::Only(v) if v.has_initialize() => {
                (config.with_protocol_version(v.clone()), ClientLifecycleMode::Initialize)
            }
            Protocol::Only(v) => (config, ClientLifecycleMode::Discover { preferred_versions: vec![v.clone()] }),
        }
    }

    /// The request that opens the session, for messages (`auto` opens with `server/discover`;
    /// a failed `initialize` after it is reported by [`ClientInitializeError::LegacyFallbackFailed`]).
    fn first_request(&self) -> &'static str {
        match self {
            Protocol::Only(v) if v.has_initialize() => "initialize",
            _ => "server/discover",
        }
    }
}

/// Connects to `endpoint` and runs the handshake within `timeout`.
pub async fn connect(
    endpoint: &Endpoint,
    server: &str,
    protocol: &Protocol,
    timeout: Duration,
) -> Result<Connection, ConnectError> {
    let counter = Arc::new(RequestCounter::default());
    let start = Start { who: format!("server \"{server}\""), protocol: protocol.clone(), timeout };
    match endpoint {
        Endpoint::Stdio(command) => connect_stdio(command, &start, counter).await,
        Endpoint::Http { url, headers } => connect_http(url, headers, &start, counter).await,
    }
}

/// How the handshake runs: who it is with (for messages), what it offers, how long it may take.
struct Start {
    who: String,
    protocol: Protocol,
    timeout: Duration,
}

async fn connect_stdio(
    command: &[String],
    start: &Start,
    counter: Arc<RequestCounter>,
) -> Result<Connection, ConnectError> {
    let (program, args) = command.split_first().expect("clap requires a command");
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).kill_on_drop(true);
    let (transport, stderr) =
        TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().map_err(|e| ConnectError {
            code: ErrorCode::TransportError,
            message: format!("could not start \"{}\": {e}", mcplens::sanitize::label(program)),
            stderr_tail: Vec::new(),
        })?;
    let tail = Arc::new(Mutex::new(Tail::default()));
    let drain = stderr.map(|mut stderr| {
        let tail = tail.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.lock().unwrap_or_else(|p| p.into_inner()).push(&buf[..n]);
            }
        })
    });
    let transport = Counting { inner: transport, counter: counter.clone() };
    let result = handshake(transport, start).await;
    match result {
        Ok(service) => Ok(Connection { service, requests: counter }),
        Err((code, message)) => {
            // Give the server a moment to finish writing why it stopped.
            if let Some(drain) = drain {
                let _ = tokio::time::timeout(Duration::from_millis(500), drain).await;
            }
            let stderr_tail = tail.lock().unwrap_or_else(|p| p.into_inner()).lines();
            Err(ConnectError { code, message, stderr_tail })
        }
    }
}

async fn connect_http(
    url: &str,
    headers: &[(String, String)],
    start: &Start,
    counter: Arc<RequestCounter>,
) -> Result<Connection, ConnectError> {
    let usage = |message: String| ConnectError { code: ErrorCode::InvalidArgument, message, stderr_tail: Vec::new() };
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            if let Some(token) = value.strip_prefix("Bearer ") {
                config = config.auth_header(token.trim());
                continue;
            }
        }
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| usage(format!("invalid header name \"{}\"", mcplens::sanitize::label(name))))?;
        let value =
            http::HeaderValue::from_str(value).map_err(|_| usage(format!("invalid value for header \"{name}\"")))?;
        custom.insert(name, value);
    }
    if !custom.is_empty() {
        config = config.custom_headers(custom);
    }
    // Trust is read for https:// only: a broken SSL_CERT_FILE does not stop a plain-HTTP session
    // (redirects keep the origin, so the scheme never changes).
    let https = url::Url::parse(url).is_ok_and(|u| u.scheme() == "https");
    let extra = if https { crate::tls::ssl_cert_file() } else { None };
    let tls = crate::tls::client_config(extra.as_deref()).map_err(|e| usage(e.to_string()))?;
    let transport = Counting {
        inner: StreamableHttpClientTransport::with_client(crate::http::KeepAlive::new(tls), config),
        counter: counter.clone(),
    };
    match handshake(transport, start).await {
        Ok(service) => Ok(Connection { service, requests: counter }),
        Err((code, message)) => Err(ConnectError { code, message, stderr_tail: Vec::new() }),
    }
}

async fn handshake<T>(
    transport: T,
    start: &Start,
) -> Result<RunningService<RoleClient, DeclaredClient>, (ErrorCode, String)>
where
    T: Transport<RoleClient> + 'static,
{
    let (config, lifecycle) = start.protocol.lifecycle();
    let who = &start.who;
    match tokio::time::timeout(start.timeout, DeclaredClient(config).serve_with_lifecycle(transport, lifecycle)).await {
        Err(_) => Err((
            ErrorCode::Deadline,
            format!("{who} did not complete the handshake within {} ms", start.timeout.as_millis()),
        )),
        Ok(Err(e)) => Err((ErrorCode::TransportError, describe_init_error(&e, who, start.protocol.first_request()))),
        Ok(Ok(service)) => Ok(service),
    }
}

/// Our own text for a failed handshake: rmcp's messages may quote what the server sent, so only
/// fixed text, JSON-RPC codes and (sanitized) transport errors are shown.
fn describe_init_error(e: &ClientInitializeError, who: &str, request: &str) -> String {
    match e {
        ClientInitializeError::ConnectionClosed(_) => {
            format!("{who} closed the connection during the handshake")
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("{who} refused {request} with JSON-RPC error {}", data.code.0)
        }
        ClientInitializeError::TransportError { error, .. }
            if error.error.downcast_ref::<std::io::Error>().is_some_and(|e| {
                matches!(e.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::UnexpectedEof)
            }) =>
        {
            // A stdio server that exited before answering: the same story as `ConnectionClosed`,
            // whichever side noticed first.
            format!("{who} closed the connection during the handshake")
        }
        ClientInitializeError::TransportError { error, .. } => {
            // The error and its causes (e.g. "could not connect" → "tcp connect error" →
            // "Connection refused", or → "invalid peer certificate: UnknownIssuer"), without
            // rmcp's transport type name; sanitized and cut, since an HTTP error may quote the
            // server.
            let mut detail = error.error.to_string();
            let mut source = match error.error.downcast_ref::<StreamableHttpError<crate::http::HttpError>>() {
                Some(StreamableHttpError::Client(e)) => e.source(),
                _ => error.error.source(),
            };
            while let Some(cause) = source {
                let text = cause.to_string();
                if !detail.contains(&text) {
                    detail.push_str(": ");
                    detail.push_str(&text);
                }
                source = cause.source();
            }
            format!(
                "the transport to {who} failed during the handshake: {}",
                cut(&mcplens::sanitize::label(&detail), 300)
            )
        }
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
            format!("{who} supports no protocol version mcplens offered")
        }
        // `server/discover` was refused and so was `initialize`: the second failure says why.
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            describe_init_error(fallback, who, "initialize")
        }
        _ => format!("{who} answered {request} with something that is not its result"),
    }
}
