//! `mcplens proxy --url`: the upstream over streamable HTTP, as lines for the relay.
//!
//! Each line from the host that the proxy forwards is POSTed as it is (bytes unchanged) with the
//! session's `Mcp-Session-Id` and `MCP-Protocol-Version`; the answer — a JSON body or an SSE
//! stream of messages — comes back to the relay as lines, one per message, each the server's
//! bytes with any raw CR/LF (whitespace between JSON tokens: JSON strings cannot hold them) turned
//! into spaces, since a line is the stdio framing. Once the handshake is done the standalone GET
//! stream carries what the server sends unprompted (a server answering it 405 offers none; it is
//! not reopened when it ends). The first message (the handshake) is answered before the next goes
//! out, so that every later one carries the session the server named; after that, a notification
//! (`notifications/initialized`, a cancellation) is accepted before the next message goes, and
//! requests go out concurrently, as an HTTP client's do (a long one holds nothing back), each
//! written to its connection before the next message goes (a cancellation cannot overtake it). A
//! request whose SSE stream ends before its answer is answered with a JSON-RPC error.
//!
//! A 2026-07-28 request (its `params._meta` names the protocol version) carries the routing
//! headers that revision's HTTP transport asks for, as the core derives them
//! ([`mcplens::protocol::routing`]).
//! That revision has no standalone GET stream: changes come on `subscriptions/listen`.
//!
//! A request the server answers with an HTTP error (other than the end of the session) is answered
//! to the host as a JSON-RPC error naming the status; a message over `--max-message-bytes`
//! ([`mcplens::proxy::DEFAULT_MAX_MESSAGE_BYTES`] by default: a JSON body, one SSE event) is
//! dropped and counted on stderr. The upstream ends — and with it the proxy — when the server
//! cannot be reached (exit 3 before it ever answered, 1 after) or answers 404 for the session
//! (exit 1). The proxy's end DELETEs the session.

use mcplens::protocol::{HEADER_MCP_METHOD, HEADER_MCP_NAME};
use mcplens::proxy::id_key;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Bytes, Incoming};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use tokio::sync::mpsc;

use crate::http::KeepAlive;
use crate::outcome::{exit, Stop};

/// How long the session's DELETE may take when the proxy ends.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long the proxy's end waits for the lines the host sent before it to leave (each request
/// written to its connection, each notification accepted).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Header names the proxy sets itself: `--header` may not give them.
const RESERVED: [&str; 6] =
    ["content-type", "accept", HEADER_SESSION_ID, HEADER_MCP_PROTOCOL_VERSION, HEADER_MCP_METHOD, HEADER_MCP_NAME];

/// The server's messages, one line each.
pub type Lines = mpsc::Receiver<Vec<u8>>;

/// Lines waiting each way: past them the sender waits (a host or server that outpaces the other
/// side is slowed down, not buffered without bound).
const WAITING: usize = 64;

/// Why the upstream ended: the exit code and what to print.
pub struct Ended {
    pub exit: u8,
    pub message: String,
}

/// The session: named by the server's first answer, its protocol by the handshake.
#[derive(Default)]
struct Session {
    id: Option<HeaderValue>,
    protocol: Option<HeaderValue>,
    /// The server answered once (a failure to reach it is then the end of a session, exit 1).
    answered: bool,
}

#[derive(Clone)]
struct Link {
    client: KeepAlive,
    url: Arc<str>,
    headers: Arc<HeaderMap>,
    session: Arc<Mutex<Session>>,
    lines: mpsc::Sender<Vec<u8>>,
    ended: mpsc::UnboundedSender<Ended>,
    max_message: usize,
}

/// The HTTP upstream: [`send`](Self::send) lines; the server's come out of the receivers given
/// by [`HttpUpstream::connect`].
pub struct HttpUpstream {
    link: Link,
    out: mpsc::Sender<Vec<u8>>,
    /// The task that sends `out`'s lines in order; it ends once `out` is closed and drained.
    dispatcher: tokio::task::JoinHandle<()>,
    listening: bool,
}

/// Parses `--header` values ("Name: value"), refusing the names the proxy sets itself.
pub fn headers(given: &[String]) -> Result<HeaderMap, Stop> {
    let mut map = HeaderMap::new();
    for h in given {
        let (name, value) = h.split_once(':').ok_or_else(|| Stop::usage("--header must look like \"Name: value\""))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| Stop::usage(format!("invalid header name \"{}\"", mcplens::sanitize::label(name.trim()))))?;
        if RESERVED.iter().any(|r| name.as_str().eq_ignore_ascii_case(r)) {
            return Err(Stop::usage(format!("--header {name}: the proxy sets it")));
        }
        let value = HeaderValue::from_str(value.trim())
            .map_err(|_| Stop::usage(format!("invalid value for header \"{name}\"")))?;
        map.append(name, value);
    }
    Ok(map)
}

impl HttpUpstream {
    /// The upstream at `url`, and the receivers of the server's lines and of its end.
    pub fn connect(
        url: &str,
        headers: HeaderMap,
        max_message: usize,
    ) -> Result<(HttpUpstream, Lines, mpsc::UnboundedReceiver<Ended>), Stop> {
        let parsed = url::Url::parse(url).map_err(|_| Stop::usage("--url is not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Stop::usage("--url must be http:// or https://"));
        }
        let extra = if parsed.scheme() == "https" { crate::tls::ssl_cert_file() } else { None };
        let tls = crate::tls::client_config(extra.as_deref()).map_err(|e| Stop::usage(e.to_string()))?;
        let (lines, lines_rx) = mpsc::channel(WAITING);
        let (ended, ended_rx) = mpsc::unbounded_channel();
        let link = Link {
            client: KeepAlive::new(tls),
            url: url.into(),
            headers: Arc::new(headers),
            session: Arc::default(),
            lines,
            ended,
            max_message,
        };
        let (out, mut out_rx) = mpsc::channel::<Vec<u8>>(WAITING);
        let dispatcher = link.clone();
        let dispatcher = tokio::spawn(async move {
            // The first message is answered (its headers name the session) before the next goes.
            if let Some(first) = out_rx.recv().await {
                if let Some(response) = dispatcher.post(&first).await {
                    tokio::spawn(dispatcher.clone().answer(first, response));
                }
            }
            while let Some(line) = out_rx.recv().await {
                let link = dispatcher.clone();
                if ends(&line).id.is_none() {
                    // A notification (`notifications/initialized`, a cancellation) is accepted
                    // before the next message goes: the server sees them in the host's order.
                    if let Some(response) = link.post(&line).await {
                        tokio::spawn(link.answer(line, response));
                    }
                    continue;
                }
                // A request is answered whenever the server answers (a long one must not hold
                // back the next, nor a cancellation of it); the next message leaves once the
                // connection has taken this one's body, so a cancellation cannot overtake it.
                let (taken, written) = tokio::sync::oneshot::channel();
                tokio::spawn(async move {
                    if let Some(response) = link.post_noting(&line, Some(taken)).await {
                        link.answer(line, response).await;
                    }
                });
                let _ = written.await;
            }
        });
        Ok((HttpUpstream { link, out, dispatcher, listening: false }, lines_rx, ended_rx))
    }

    /// Sends one line to the server.
    pub async fn send(&self, line: &[u8]) {
        let _ = self.out.send(line.to_vec()).await;
    }

    /// The handshake is done: later requests carry `protocol`, and the GET stream opens.
    pub fn initialized(&mut self, protocol: Option<&str>) {
        if let Some(value) = protocol.and_then(|p| HeaderValue::from_str(p).ok()) {
            lock(&self.link.session).protocol = Some(value);
        }
        let modern = protocol.is_some_and(|p| mcplens::discovery::Era::of(p) == mcplens::discovery::Era::Modern);
        if !modern && !std::mem::replace(&mut self.listening, true) {
            tokio::spawn(self.link.clone().listen());
        }
    }

    /// Ends the session: what the host sent before its end leaves first (a cancellation sent just
    /// before the host closed our stdin still reaches the server, within [`DRAIN_TIMEOUT`]; past it
    /// the rest is left and said on stderr), then the session is DELETEd (best effort).
    pub async fn close(self) {
        drop(self.out);
        if tokio::time::timeout(DRAIN_TIMEOUT, self.dispatcher).await.is_err() {
            eprintln!(
                "mcplens proxy: the server did not take what the host sent last within {} s: the session ends without the rest",
                DRAIN_TIMEOUT.as_secs()
            );
        }
        let Some(id) = lock(&self.link.session).id.clone() else { return };
        let mut headers = self.link.request_headers();
        headers.insert(HEADER_SESSION_ID, id);
        let delete = self.link.client.send(Method::DELETE, &self.link.url, headers, Bytes::new());
        let _ = tokio::time::timeout(DELETE_TIMEOUT, delete).await;
    }
}

impl Link {
    fn request_headers(&self) -> HeaderMap {
        let mut headers = (*self.headers).clone();
        let session = lock(&self.session);
        if let Some(id) = &session.id {
            headers.insert(HEADER_SESSION_ID, id.clone());
        }
        if let Some(protocol) = &session.protocol {
            headers.insert(HEADER_MCP_PROTOCOL_VERSION, protocol.clone());
        }
        headers
    }

    /// POSTs `line`; the response once its headers came, or `None` when the upstream ended.
    async fn post(&self, line: &[u8]) -> Option<http::Response<Incoming>> {
        self.post_noting(line, None).await
    }

    /// [`Link::post`], firing `taken` once the connection has taken the body.
    async fn post_noting(
        &self,
        line: &[u8],
        taken: Option<tokio::sync::oneshot::Sender<()>>,
    ) -> Option<http::Response<Incoming>> {
        let mut headers = self.request_headers();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_MIME_TYPE));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        routing_headers(line, &mut headers);
        match self.client.send_noting(Method::POST, &self.url, headers, Bytes::copy_from_slice(line), taken).await {
            Ok(response) => {
                let mut session = lock(&self.session);
                session.answered = true;
                // Only an accepted message opens a session (a refusal may name one it dropped).
                if session.id.is_none() && response.status().is_success() {
                    session.id = response.headers().get(HEADER_SESSION_ID).cloned();
                }
                Some(response)
            }
            Err(e) => {
                self.unreachable(&e);
                None
            }
        }
    }

    fn unreachable(&self, e: &crate::http::HttpError) {
        let answered = lock(&self.session).answered;
        let _ = self.ended.send(Ended {
            exit: if answered { exit::FAILED } else { exit::CONNECT },
            message: format!("transport_error: the server could not be reached: {}", error_kind(e)),
        });
    }

    /// Relays the server's answer to `line`.
    async fn answer(self, line: Vec<u8>, response: http::Response<Incoming>) {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && lock(&self.session).id.is_some() {
            let _ = self.ended.send(Ended {
                exit: exit::FAILED,
                message: "transport_error: the server ended the session (HTTP 404)".to_owned(),
            });
            return;
        }
        if !status.is_success() {
            if let Some(error) = http_error_answer(&line, status) {
                let _ = self.lines.send(error).await;
            }
            return;
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return;
        }
        if is(&response, EVENT_STREAM_MIME_TYPE) {
            // The request's own stream: when it ends before the answer, the host still gets one.
            let asked = request_id(&line);
            let answered = self.relay_events(response, asked.as_deref()).await;
            if let (Some(_), false) = (&asked, answered) {
                if let Some(error) = error_answer(&line, "the server's event stream ended before it answered") {
                    let _ = self.lines.send(error).await;
                }
            }
        } else if is(&response, JSON_MIME_TYPE) {
            match http_body_util::Limited::new(response.into_body(), self.max_message).collect().await {
                Ok(body) => {
                    let _ = self.lines.send(one_line(body.to_bytes().to_vec())).await;
                }
                Err(_) => {
                    let max = self.max_message;
                    eprintln!("mcplens proxy: a response of the server was dropped (over {max} bytes, or cut)")
                }
            }
        }
    }

    /// The standalone GET stream, for as long as the server keeps it.
    async fn listen(self) {
        let mut headers = self.request_headers();
        headers.insert(ACCEPT, HeaderValue::from_static(EVENT_STREAM_MIME_TYPE));
        if let Ok(response) = self.client.send(Method::GET, &self.url, headers, Bytes::new()).await {
            if response.status().is_success() && is(&response, EVENT_STREAM_MIME_TYPE) {
                self.relay_events(response, None).await;
            }
        }
    }

    /// Relays the stream's messages; true when one of them answered `asked` (a request id, JSON
    /// text).
    async fn relay_events(&self, response: http::Response<Incoming>, asked: Option<&str>) -> bool {
        let mut answered = false;
        let mut events = crate::http::bounded_sse_stream(crate::http::body_stream(response), self.max_message);
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    let message = event.event.as_deref().is_none_or(|e| e == "message");
                    if let Some(data) = event.data.filter(|d| message && !d.is_empty()) {
                        if let Some(asked) = asked.filter(|_| !answered) {
                            let cut = ends(data.as_bytes());
                            answered = !cut.method && cut.id.is_some_and(|id| id_key(&id) == id_key(asked));
                        }
                        let _ = self.lines.send(one_line(data.into_bytes())).await;
                    }
                }
                Err(e) => {
                    eprintln!("mcplens proxy: an event stream of the server ended: {e}");
                    break;
                }
            }
        }
        answered
    }
}

/// The 2026-07-28 routing headers of a request `line` whose `params._meta` names its protocol
/// version (see the module docs); nothing for any other line.
/// The 2026-07-28 routing headers of `line` ([`mcplens::protocol::routing`]), when it has them.
fn routing_headers(line: &[u8], headers: &mut HeaderMap) {
    let Some(r) = mcplens::protocol::routing(line) else { return };
    let (Ok(version), Ok(method)) = (HeaderValue::from_str(&r.protocol_version), HeaderValue::from_str(&r.method))
    else {
        return;
    };
    headers.insert(HEADER_MCP_PROTOCOL_VERSION, version);
    headers.insert(HEADER_MCP_METHOD, method);
    if let Some(value) = r.name.and_then(|n| HeaderValue::from_str(&n).ok()) {
        headers.insert(HEADER_MCP_NAME, value);
    }
}

fn is(response: &http::Response<Incoming>, mime: &str) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case(mime)))
}

/// One stdio line of a message: raw CR and LF (between JSON tokens) become spaces.
fn one_line(mut bytes: Vec<u8>) -> Vec<u8> {
    for b in &mut bytes {
        if *b == b'\n' || *b == b'\r' {
            *b = b' ';
        }
    }
    bytes
}

/// The JSON-RPC error answering `line` (a request) that the server answered with HTTP `status`;
/// `None` for a notification or a response.
fn http_error_answer(line: &[u8], status: StatusCode) -> Option<Vec<u8>> {
    error_answer(line, &format!("the server answered HTTP {}", status.as_u16()))
}

/// A JSON-RPC error (`-32603`, `message`) answering `line` when it is a request; `None` otherwise.
fn error_answer(line: &[u8], message: &str) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<serde_json::Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    let probe: Probe = serde_json::from_slice(line).ok()?;
    let id = probe.id.filter(|id| id.is_string() || id.is_number())?;
    probe.method?;
    let error = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32603, "message": message } });
    Some(error.to_string().into_bytes())
}

/// The id (JSON text) of `line` when it is a request.
fn request_id(line: &[u8]) -> Option<String> {
    let cut = ends(line);
    cut.id.filter(|_| cut.method)
}

/// What a message's first and last bytes tell of it (`mcplens::proxy::cut`).
fn ends(message: &[u8]) -> mcplens::proxy::cut::Cut {
    use mcplens::proxy::cut::{read, KEPT};
    read(&message[..message.len().min(KEPT)], &message[message.len().saturating_sub(KEPT)..])
}

fn error_kind(e: &crate::http::HttpError) -> String {
    // The error's own text, which names no URL or header (hyper's kinds).
    mcplens::sanitize::label(&e.to_string()).into_owned()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_one_line_with_its_bytes_otherwise_kept() {
        let pretty = b"{\r\n  \"id\": 1,\n  \"result\": {\"text\": \"a\\nb\"}\n}".to_vec();
        let line = one_line(pretty);
        assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["result"]["text"], "a\nb");
    }

    #[test]
    fn an_http_error_answers_requests_only() {
        let answer = http_error_answer(br#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#, StatusCode::BAD_GATEWAY);
        let value: serde_json::Value = serde_json::from_slice(&answer.unwrap()).unwrap();
        assert_eq!(value["id"], "x");
        assert_eq!(value["error"]["message"], "the server answered HTTP 502");
        assert!(http_error_answer(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            StatusCode::BAD_GATEWAY
        )
        .is_none());
        assert!(http_error_answer(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, StatusCode::BAD_GATEWAY).is_none());
    }

    #[test]
    fn a_2026_07_28_request_carries_its_routing_headers() {
        let mut h = HeaderMap::new();
        let read = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"note://ä b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        routing_headers(read.as_bytes(), &mut h);
        assert_eq!(h[HEADER_MCP_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(h[HEADER_MCP_METHOD], "resources/read");
        let wrapped = h[HEADER_MCP_NAME].to_str().unwrap();
        let payload = wrapped.strip_prefix("=?base64?").unwrap().strip_suffix("?=").unwrap();
        use base64::Engine as _;
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(payload).unwrap(), "note://ä b".as_bytes());
        let mut h = HeaderMap::new();
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        routing_headers(call.as_bytes(), &mut h);
        assert_eq!(
            (h[HEADER_MCP_METHOD].to_str().unwrap(), h[HEADER_MCP_NAME].to_str().unwrap()),
            ("tools/call", "echo")
        );
        // Earlier revisions (no envelope) and notifications get none.
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            let mut h = HeaderMap::new();
            routing_headers(line.as_bytes(), &mut h);
            assert!(h.is_empty(), "{line}");
        }
    }

    #[test]
    fn the_proxys_own_headers_cannot_be_given() {
        assert!(headers(&["Authorization: Bearer t".to_owned()]).is_ok());
        for reserved in
            ["Mcp-Session-Id: x", "accept: */*", "Content-Type: text/plain", "mcp-protocol-version: 1", "Mcp-Method: x"]
        {
            assert_eq!(headers(&[reserved.to_owned()]).unwrap_err().exit, exit::USAGE, "{reserved}");
        }
        assert!(headers(&["no colon".to_owned()]).is_err());
    }
}
