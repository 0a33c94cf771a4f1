//! The HTTP client of `--url`: hyper, one keep-alive connection for every request of a session,
//! TLS by rustls without the platform's verifier.
//!
//! [`KeepAlive`] implements rmcp's [`StreamableHttpClient`] over hyper-util's pooled client
//! (HTTP/1.1) and hyper-rustls, trusting the roots of [`crate::tls`]. It sends the requests
//! rmcp's reqwest client sends and reads the answers as that client does — the `Accept`,
//! `Mcp-Session-Id`, `Last-Event-Id` and bearer headers; the caller's headers (`--header`),
//! reserved names refused; 401/403 challenges; 429 and 5xx as HTTP status errors; a session
//! answered 404 as expired; a rejected `server/discover` turned into a JSON-RPC error the
//! handshake can fall back from; [`StreamableHttpResponseLimits`] on JSON bodies, error bodies
//! and SSE events — with these differences:
//!
//! - a POST answered with an SSE stream is read to its end (the server closes the stream after
//!   the response) before the response reaches the caller, so the connection is back in the pool
//!   when the next request goes out — waiting at most [`STREAM_END`] for a server that keeps the
//!   stream open (rmcp's client keeps no idle connection, so each request opened its own);
//! - the standalone GET stream (for messages the server sends unprompted) is not opened: a
//!   listing has no use for them, and it would hold a second connection for the whole session.
//!   Resuming a response stream (`Last-Event-ID`) still works;
//! - an SSE event over the size limit ends the stream with an error that rmcp does not recognise
//!   as fatal, so it may try to resume the stream (bounded by its retry policy) before failing.
//!
//! Redirects follow rmcp's rule: only same-origin 307/308 (they keep the method and body), at
//! most [`MAX_REDIRECTS`] — a cross-origin redirect would replay the session id and the caller's
//! headers (the bearer token) to another host; any other redirect is answered as it came.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::ready;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{BoxStream, Stream, StreamExt, TryStreamExt};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, PROXY_AUTHORIZATION, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::{Body as _, Bytes, Incoming};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::route::Route;

/// How long a response stream may stay open after it delivered the response before the
/// response is handed on anyway (the connection is then not reused).
pub const STREAM_END: Duration = Duration::from_millis(250);

/// Redirects followed for one request.
pub const MAX_REDIRECTS: usize = 10;

/// rmcp's default limit on one SSE event (its constant is private).
const DEFAULT_MAX_SSE_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// The longest `Retry-After` value kept (as rmcp).
const MAX_RETRY_AFTER_BYTES: usize = 128;

/// What a failed read of an error body is reported as (as rmcp).
const BODY_READ_FAILURE: &str = "<failed to read response body>";

type SseStream = BoxStream<'static, Result<Sse, SseError>>;
type Outcome<T> = Result<T, StreamableHttpError<HttpError>>;

/// Why an HTTP exchange failed below the protocol (the `Client` case of rmcp's error).
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpError {
    /// The URL could not be parsed or used.
    Url(String),
    /// A header or the request could not be built.
    Request(http::Error),
    /// The message could not be encoded.
    Encode(serde_json::Error),
    /// Connecting (TCP, TLS) or sending the request failed, or the answer was not HTTP.
    Send(hyper_util::client::legacy::Error),
    /// Reading the response body failed.
    Body(hyper::Error),
    /// More than [`MAX_REDIRECTS`] redirects.
    TooManyRedirects,
    /// A 4xx or 5xx answer where none is expected.
    Status(StatusCode),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Url(e) => write!(f, "invalid URL: {e}"),
            HttpError::Request(e) => write!(f, "invalid request: {e}"),
            HttpError::Encode(e) => write!(f, "could not encode the message: {e}"),
            HttpError::Send(e) if e.is_connect() => f.write_str("could not connect"),
            HttpError::Send(_) => f.write_str("error sending request"),
            HttpError::Body(_) => f.write_str("error reading the response body"),
            HttpError::TooManyRedirects => write!(f, "more than {MAX_REDIRECTS} redirects"),
            HttpError::Status(status) => write!(f, "HTTP status {status}"),
        }
    }
}

impl std::error::Error for HttpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // hyper-util's own text ("client error (Connect)") says no more than ours.
            HttpError::Send(e) => std::error::Error::source(e),
            HttpError::Body(e) => Some(e),
            _ => None,
        }
    }
}

fn client_error(e: impl Into<http::Error>) -> StreamableHttpError<HttpError> {
    StreamableHttpError::Client(HttpError::Request(e.into()))
}

/// hyper's pooled client with keep-alive connections (see the module docs).
#[derive(Clone)]
pub struct KeepAlive {
    client: Client<HttpsConnector<Route>, Taken>,
    proxies: Arc<Matcher>,
}

/// A request body that says when the connection has taken it: hyper drops a body once it has
/// written it (or once the request failed), so the drop is the signal.
struct Taken {
    body: Full<Bytes>,
    taken: Option<tokio::sync::oneshot::Sender<()>>,
}

impl hyper::body::Body for Taken {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        if let Some(taken) = self.taken.take() {
            let _ = taken.send(());
        }
    }
}

impl KeepAlive {
    /// A client for http:// and https:// URLs; `tls` is whom https:// trusts. Proxies come from
    /// the environment ([`crate::route`]).
    pub fn new(tls: rustls::ClientConfig) -> KeepAlive {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        let proxies = Arc::new(Matcher::from_env());
        let route = Route::new(tcp, proxies.clone());
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http().enable_http1().wrap_connector(route);
        let client = Client::builder(TokioExecutor::new()).pool_timer(TokioTimer::new()).build(connector);
        KeepAlive { client, proxies }
    }

    /// Sends the request, following same-origin 307/308 redirects. Credentials in the URL
    /// (`https://user:pass@host/…`) become a Basic `Authorization` unless one is set.
    pub(crate) async fn send(
        &self,
        method: Method,
        uri: &str,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<Incoming>, HttpError> {
        self.send_noting(method, uri, headers, body, None).await
    }

    /// [`KeepAlive::send`], and `taken` fires once the connection has taken the first request's
    /// body (written it, or failed): what the caller sends after that reaches the server after it.
    pub(crate) async fn send_noting(
        &self,
        method: Method,
        uri: &str,
        mut headers: HeaderMap,
        body: Bytes,
        mut taken: Option<tokio::sync::oneshot::Sender<()>>,
    ) -> Result<Response<Incoming>, HttpError> {
        let mut first = url::Url::parse(uri).map_err(|e| HttpError::Url(e.to_string()))?;
        if let Some(credentials) = take_credentials(&mut first) {
            if !headers.contains_key(AUTHORIZATION) {
                headers.insert(AUTHORIZATION, credentials);
            }
        }
        let mut url = first.clone();
        let mut redirects = 0;
        loop {
            url.set_fragment(None);
            let mut request = Request::builder()
                .method(method.clone())
                .uri(url.as_str())
                .body(Taken { body: Full::new(body.clone()), taken: taken.take() })
                .map_err(HttpError::Request)?;
            *request.headers_mut() = headers.clone();
            if url.scheme() == "http" {
                // Sent to the proxy in absolute form: its credentials go with the request.
                if let Some(auth) = self.proxies.intercept(request.uri()).as_ref().and_then(|p| p.basic_auth()) {
                    request.headers_mut().insert(PROXY_AUTHORIZATION, auth.clone());
                }
            }
            let response = self.client.request(request).await.map_err(HttpError::Send)?;
            let Some(next) = redirect_target(&first, &url, &response) else { return Ok(response) };
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(HttpError::TooManyRedirects);
            }
            url = next;
        }
    }
}

/// The user name and password of `url`, removed from it, as a Basic `Authorization` value
/// (percent-decoded, as reqwest did).
fn take_credentials(url: &mut url::Url) -> Option<HeaderValue> {
    use base64::Engine as _;
    use percent_encoding::percent_decode_str;
    if url.username().is_empty() && url.password().is_none() {
        return None;
    }
    let user = percent_decode_str(url.username()).decode_utf8_lossy().into_owned();
    let password = url.password().map(|p| percent_decode_str(p).decode_utf8_lossy().into_owned());
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let plain = format!("{user}:{}", password.unwrap_or_default());
    let encoded = base64::engine::general_purpose::STANDARD.encode(plain);
    let mut value = HeaderValue::try_from(format!("Basic {encoded}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// Where a response redirects to, if it is a redirect this client follows: 307 or 308 with a
/// `Location` on the origin of the first request.
fn redirect_target<B>(first: &url::Url, current: &url::Url, response: &Response<B>) -> Option<url::Url> {
    if !matches!(response.status(), StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT) {
        return None;
    }
    let location = std::str::from_utf8(response.headers().get(LOCATION)?.as_bytes()).ok()?;
    let next = current.join(location).ok()?;
    (next.origin() == first.origin()).then_some(next)
}

/// The headers every request starts with: the bearer token, then the caller's (reserved names
/// refused; `MCP-Protocol-Version` is let through, rmcp sets it after the handshake).
fn base_headers(auth_token: Option<String>, custom_headers: HashMap<HeaderName, HeaderValue>) -> Outcome<HeaderMap> {
    let mut headers = HeaderMap::new();
    if let Some(token) = auth_token {
        let mut value = HeaderValue::try_from(format!("Bearer {token}")).map_err(client_error)?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in custom_headers {
        let reserved =
            ["accept", HEADER_SESSION_ID, HEADER_LAST_EVENT_ID].iter().any(|r| name.as_str().eq_ignore_ascii_case(r));
        if reserved && !name.as_str().eq_ignore_ascii_case(HEADER_MCP_PROTOCOL_VERSION) {
            return Err(StreamableHttpError::ReservedHeaderConflict(name.to_string()));
        }
        headers.append(name, value);
    }
    Ok(headers)
}

fn insert(headers: &mut HeaderMap, name: &'static str, value: &str) -> Outcome<()> {
    headers.insert(name, HeaderValue::from_str(value).map_err(client_error)?);
    Ok(())
}

fn accept_both(headers: &mut HeaderMap) {
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream, application/json"));
}

/// Compares the media type of a `Content-Type` value (case-insensitive, parameters ignored).
fn media_type_is(value: &[u8], expected: &str) -> bool {
    value
        .split(|byte| *byte == b';')
        .next()
        .and_then(|essence| std::str::from_utf8(essence).ok())
        .is_some_and(|essence| essence.trim_matches([' ', '\t']).eq_ignore_ascii_case(expected))
}

/// A 401 or 403 with a `WWW-Authenticate` challenge, as rmcp reports it.
fn auth_challenge(status: StatusCode, headers: &HeaderMap) -> Option<StreamableHttpError<HttpError>> {
    let header = headers.get(WWW_AUTHENTICATE)?;
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return None;
    }
    let Ok(header) = header.to_str() else {
        return Some(StreamableHttpError::UnexpectedServerResponse(Cow::from("invalid www-authenticate header value")));
    };
    Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_owned()))
    } else {
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(header.to_owned(), scope_of(header)))
    })
}

/// The `scope=` parameter of a challenge, quoted or not.
fn scope_of(header: &str) -> Option<String> {
    let start = header.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let value = &header[start..];
    if let Some(quoted) = value.strip_prefix('"') {
        return quoted.find('"').map(|end| quoted[..end].to_owned());
    }
    let end = value.find(|c: char| c == ',' || c == ';' || c.is_whitespace()).unwrap_or(value.len());
    (end > 0).then(|| value[..end].to_owned())
}

/// 429 and 5xx answers as body-free status errors.
fn http_status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .filter(|value| value.as_bytes().len() <= MAX_RETRY_AFTER_BYTES)
        .and_then(|value| std::str::from_utf8(value.as_bytes()).ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

pub(crate) fn body_stream(
    response: Response<Incoming>,
) -> impl Stream<Item = Result<Bytes, HttpError>> + Send + 'static {
    http_body_util::BodyExt::into_data_stream(response.into_body()).map_err(HttpError::Body)
}

/// The whole body, refused past `max_size` bytes (a `Content-Length` over it is refused unread).
async fn read_bounded_body<S>(stream: S, content_length: Option<u64>, max_size: usize) -> Outcome<Vec<u8>>
where
    S: Stream<Item = Result<Bytes, HttpError>>,
{
    if content_length.is_some_and(|length| length > max_size as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size });
    }
    futures::pin_mut!(stream);
    let mut body = Vec::new();
    while let Some(chunk) = stream.try_next().await.map_err(StreamableHttpError::Client)? {
        if chunk.len() > max_size - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max_size` bytes of a body, for a diagnostic; the rest is not read.
async fn read_truncated_body<S>(stream: S, max_size: usize) -> Outcome<Vec<u8>>
where
    S: Stream<Item = Result<Bytes, HttpError>>,
{
    futures::pin_mut!(stream);
    let mut body = Vec::new();
    while body.len() < max_size {
        let Some(chunk) = stream.try_next().await.map_err(StreamableHttpError::Client)? else { break };
        let count = chunk.len().min(max_size - body.len());
        body.extend_from_slice(&chunk[..count]);
    }
    Ok(body)
}

fn truncated_read_failure(max_error_response_size: usize) -> String {
    BODY_READ_FAILURE[..BODY_READ_FAILURE.len().min(max_error_response_size)].to_owned()
}

/// A sessionless `server/discover` refused with a 4xx (not 401/403): the server's JSON-RPC error,
/// or `invalid_request` when the body has none, with the request's id so the handshake can
/// classify it and fall back to `initialize` (rmcp's rule; its function is private).
fn legacy_discover_response(
    message: &ClientJsonRpcMessage,
    session_was_attached: bool,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    if session_was_attached
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else { return None };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(format!("server/discover rejected with HTTP {status}: {body}"), None),
    };
    Some(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::error(error, Some(request.id.clone())), None))
}

/// A JSON body that failed to parse as a JSON-RPC message: the error and a short preview.
fn json_rpc_parse_error_message(err: &serde_json::Error, body: &[u8]) -> String {
    const PREVIEW: usize = 256;
    let lossy = String::from_utf8_lossy(body);
    let mut end = lossy.len().min(PREVIEW);
    while !lossy.is_char_boundary(end) {
        end -= 1;
    }
    let preview = if body.is_empty() { "<empty>" } else { &lossy[..end] };
    format!("could not parse JSON response as ServerJsonRpcMessage: {err}: {preview}")
}

impl StreamableHttpClient for KeepAlive {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<StreamableHttpPostResponse> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Outcome<StreamableHttpPostResponse> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Outcome<StreamableHttpPostResponse> {
        let body = serde_json::to_vec(&message).map_err(|e| StreamableHttpError::Client(HttpError::Encode(e)))?;
        let mut headers = base_headers(auth_header, custom_headers)?;
        accept_both(&mut headers);
        let session_was_attached = session_id.is_some();
        if let Some(session_id) = session_id {
            insert(&mut headers, HEADER_SESSION_ID, &session_id)?;
        }
        if !headers.contains_key(CONTENT_TYPE) {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_MIME_TYPE));
        }
        let response =
            self.send(Method::POST, &uri, headers, Bytes::from(body)).await.map_err(StreamableHttpError::Client)?;
        let response = read_post_response(response, &message, session_was_attached, limits).await?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(read_to_end_after_response(stream), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<()> {
        let mut headers = base_headers(auth_header, custom_headers)?;
        insert(&mut headers, HEADER_SESSION_ID, &session_id)?;
        let response =
            self.send(Method::DELETE, &uri, headers, Bytes::new()).await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(()); // the server does not end sessions
        }
        if status.is_client_error() || status.is_server_error() {
            return Err(StreamableHttpError::Client(HttpError::Status(status)));
        }
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<SseStream> {
        let max = DEFAULT_MAX_SSE_EVENT_SIZE;
        self.get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth_header, custom_headers, max).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Outcome<SseStream> {
        // The standalone stream is not opened (module docs); resuming one is.
        let Some(last_event_id) = last_event_id else { return Err(StreamableHttpError::ServerDoesNotSupportSse) };
        let mut headers = base_headers(auth_header, custom_headers)?;
        accept_both(&mut headers);
        if let Some(session_id) = session_id {
            insert(&mut headers, HEADER_SESSION_ID, &session_id)?;
        }
        insert(&mut headers, HEADER_LAST_EVENT_ID, &last_event_id)?;
        let response =
            self.send(Method::GET, &uri, headers, Bytes::new()).await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(error) = auth_challenge(status, response.headers()) {
            return Err(error);
        }
        if let Some(error) = http_status_error(status, response.headers()) {
            return Err(error.into());
        }
        if status.is_client_error() || status.is_server_error() {
            return Err(StreamableHttpError::Client(HttpError::Status(status)));
        }
        match response.headers().get(CONTENT_TYPE) {
            Some(ct)
                if media_type_is(ct.as_bytes(), EVENT_STREAM_MIME_TYPE)
                    || media_type_is(ct.as_bytes(), JSON_MIME_TYPE) => {}
            other => {
                let found = other.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned());
                return Err(StreamableHttpError::UnexpectedContentType(found));
            }
        }
        Ok(bounded_sse_stream(body_stream(response), max_sse_event_size))
    }
}

/// The answer to a POST, read as rmcp's reqwest client reads it.
async fn read_post_response(
    response: Response<Incoming>,
    message: &ClientJsonRpcMessage,
    session_was_attached: bool,
    limits: StreamableHttpResponseLimits,
) -> Outcome<StreamableHttpPostResponse> {
    let status = response.status();
    if let Some(error) = auth_challenge(status, response.headers()) {
        return Err(error);
    }
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if status == StatusCode::NOT_FOUND && session_was_attached {
        return Err(StreamableHttpError::SessionExpired);
    }
    let content_type =
        response.headers().get(CONTENT_TYPE).map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned());
    let is_json = content_type.as_deref().is_some_and(|ct| media_type_is(ct.as_bytes(), JSON_MIME_TYPE));
    // Rate limits and non-JSON failures return unread; JSON server failures are read to keep
    // their JSON-RPC error.
    let status_error = match (http_status_error(status, response.headers()), is_json) {
        (Some(error), is_json) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => return Err(error.into()),
        (error, _) => error,
    };
    let content_length = response.body().size_hint().exact();
    let session_id = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
    // A POST of a notification, response or error leaves nothing outstanding.
    let awaits_no_response = matches!(
        message,
        ClientJsonRpcMessage::Notification(_) | ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_)
    );
    if status.is_success() && content_length == Some(0) && awaits_no_response {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if !status.is_success() {
        let is_auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let max_error = limits.max_error_response_size;
        let body = if is_json && !is_auth_failure {
            match read_bounded_body(body_stream(response), content_length, limits.max_json_response_size).await {
                Ok(raw) => {
                    let full = String::from_utf8_lossy(&raw);
                    if let Ok(error @ JsonRpcMessage::Error(_)) = serde_json::from_str::<ServerJsonRpcMessage>(&full) {
                        if let Some(response) = legacy_discover_response(message, session_was_attached, status, &full) {
                            return Ok(response);
                        }
                        return Ok(StreamableHttpPostResponse::Json(error, session_id));
                    }
                    String::from_utf8_lossy(&raw[..raw.len().min(max_error)]).into_owned()
                }
                Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                    return Err(status_error.map(StreamableHttpError::from).unwrap_or(error));
                }
                Err(StreamableHttpError::Client(_)) => truncated_read_failure(max_error),
                Err(error) => return Err(error),
            }
        } else {
            match read_truncated_body(body_stream(response), max_error).await {
                Ok(prefix) => String::from_utf8_lossy(&prefix).into_owned(),
                Err(StreamableHttpError::Client(_)) => truncated_read_failure(max_error),
                Err(error) => return Err(error),
            }
        };
        if let Some(response) = legacy_discover_response(message, session_was_attached, status, &body) {
            return Ok(response);
        }
        if let Some(error) = status_error {
            return Err(error.into());
        }
        return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}: {body}"))));
    }
    match content_type.as_deref() {
        Some(ct) if media_type_is(ct.as_bytes(), EVENT_STREAM_MIME_TYPE) => Ok(StreamableHttpPostResponse::Sse(
            bounded_sse_stream(body_stream(response), limits.max_sse_event_size),
            session_id,
        )),
        Some(ct) if media_type_is(ct.as_bytes(), JSON_MIME_TYPE) => {
            let body = read_bounded_body(body_stream(response), content_length, limits.max_json_response_size).await?;
            match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session_id)),
                // Nothing awaited: an unusable body is as good as 202.
                Err(_) if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
                Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(json_rpc_parse_error_message(
                    &e, &body,
                )))),
            }
        }
        // Neither JSON nor SSE: fine when nothing is awaited (some servers answer 200 to
        // `notifications/initialized`).
        _ if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
        _ => Err(StreamableHttpError::UnexpectedContentType(content_type)),
    }
}

/// Why the byte stream under an SSE stream ended with an error.
#[derive(Debug)]
enum SseBodyError {
    Http(HttpError),
    EventTooLarge { max_size: usize },
}

impl std::fmt::Display for SseBodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseBodyError::Http(e) => e.fmt(f),
            SseBodyError::EventTooLarge { max_size } => {
                write!(f, "SSE event exceeded the maximum size of {max_size} bytes")
            }
        }
    }
}

impl std::error::Error for SseBodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SseBodyError::Http(e) => e.source(),
            SseBodyError::EventTooLarge { .. } => None,
        }
    }
}

/// Counts the bytes an SSE parser keeps for the current event (as rmcp's limiter: field lines
/// plus a newline each, comments not counted, a blank line ends the event).
#[derive(Debug)]
struct SseEventSize {
    max_size: usize,
    retained: usize,
    line: usize,
    line_is_comment: bool,
    after_cr: bool,
}

impl SseEventSize {
    fn new(max_size: usize) -> SseEventSize {
        SseEventSize { max_size, retained: 0, line: 0, line_is_comment: false, after_cr: false }
    }

    /// Whether the event stays within the limit after `chunk`.
    fn observe(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    if self.line == 0 {
                        self.retained = 0;
                    } else if !self.line_is_comment {
                        self.retained = self.retained.saturating_add(self.line).saturating_add(1);
                    }
                    self.line = 0;
                    self.line_is_comment = false;
                    self.after_cr = byte == b'\r';
                }
                _ => {
                    if self.line == 0 {
                        self.line_is_comment = byte == b':';
                    }
                    self.line = self.line.saturating_add(1);
                }
            }
            if self.retained.saturating_add(self.line) > self.max_size {
                return false;
            }
        }
        true
    }
}

/// SSE events parsed from `bytes`, the stream ending with an error at the first event over
/// `max_event_size` bytes.
pub(crate) fn bounded_sse_stream<S>(bytes: S, max_event_size: usize) -> SseStream
where
    S: Stream<Item = Result<Bytes, HttpError>> + Send + 'static,
{
    let bounded = bytes.scan((SseEventSize::new(max_event_size), false), |(size, failed), chunk| {
        if *failed {
            return ready(None);
        }
        let item = match chunk {
            Ok(chunk) if size.observe(&chunk) => Ok(chunk),
            Ok(_) => Err(SseBodyError::EventTooLarge { max_size: size.max_size }),
            Err(e) => Err(SseBodyError::Http(e)),
        };
        *failed = item.is_err();
        ready(Some(item))
    });
    sse_stream::SseStream::from_bytes_stream(bounded).boxed()
}

/// Whether an SSE event carries a JSON-RPC response or error (an `id`, no `method`).
fn is_response(event: &Result<Sse, SseError>) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<serde::de::IgnoredAny>,
        method: Option<serde::de::IgnoredAny>,
    }
    let Ok(Sse { data: Some(data), .. }) = event else { return false };
    serde_json::from_str::<Probe>(data).is_ok_and(|p| p.id.is_some() && p.method.is_none())
}

/// `stream`, except that an event carrying a response is held until the stream ends (or the
/// next event arrives, or [`STREAM_END`] passes).
fn read_to_end_after_response(stream: SseStream) -> SseStream {
    futures::stream::unfold(Some((stream, None)), |state| async move {
        let (mut stream, ahead) = state?;
        if let Some(event) = ahead {
            return Some((event, Some((stream, None))));
        }
        let event = stream.next().await?;
        let mut ahead = None;
        if is_response(&event) {
            match tokio::time::timeout(STREAM_END, stream.next()).await {
                Ok(None) => return Some((event, None)),
                Ok(next) => ahead = next,
                Err(_still_open) => {}
            }
        }
        Some((event, Some((stream, ahead))))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_compare_the_essence() {
        assert!(media_type_is(b"Application/JSON; charset=utf-8", JSON_MIME_TYPE));
        assert!(media_type_is(b" text/event-stream ", EVENT_STREAM_MIME_TYPE));
        assert!(!media_type_is(b"application/json-patch+json", JSON_MIME_TYPE));
        assert!(!media_type_is(b"", JSON_MIME_TYPE));
    }

    #[test]
    fn url_credentials_become_basic_authorization() {
        let mut url = url::Url::parse("https://us%40er:p%3Ass@h.example/mcp").unwrap();
        let value = take_credentials(&mut url).unwrap();
        assert_eq!(value, "Basic dXNAZXI6cDpzcw=="); // us@er:p:ss
        assert!(value.is_sensitive());
        assert_eq!(url.as_str(), "https://h.example/mcp");
        assert_eq!(take_credentials(&mut url), None);
        let mut url = url::Url::parse("https://user@h.example/mcp").unwrap();
        assert_eq!(take_credentials(&mut url).unwrap(), "Basic dXNlcjo="); // user:
    }

    #[test]
    fn redirects_followed_are_same_origin_307_and_308() {
        let first = url::Url::parse("https://h.example/mcp").unwrap();
        let redirect = |status: u16, location: &str| {
            let response = Response::builder().status(status).header(LOCATION, location).body(()).unwrap();
            redirect_target(&first, &first, &response).map(|u| u.to_string())
        };
        assert_eq!(redirect(307, "/v2/mcp").as_deref(), Some("https://h.example/v2/mcp"));
        assert_eq!(redirect(308, "https://h.example:443/x").as_deref(), Some("https://h.example/x"));
        assert_eq!(redirect(302, "/v2/mcp"), None); // would turn the POST into a GET
        assert_eq!(redirect(307, "https://other.example/mcp"), None);
        assert_eq!(redirect(307, "http://h.example/mcp"), None); // another scheme is another origin
        assert_eq!(redirect(307, "https://h.example:8443/mcp"), None);
    }

    #[test]
    fn reserved_headers_are_refused() {
        for name in ["accept", "mcp-session-id", "last-event-id"] {
            let headers = HashMap::from([(HeaderName::from_static(name), HeaderValue::from_static("x"))]);
            assert!(matches!(base_headers(None, headers), Err(StreamableHttpError::ReservedHeaderConflict(_))));
        }
        let headers = HashMap::from([
            (HeaderName::from_static("mcp-protocol-version"), HeaderValue::from_static("2025-11-25")),
            (HeaderName::from_static("x-test"), HeaderValue::from_static("1")),
        ]);
        let map = base_headers(Some("t0ken".into()), headers).unwrap();
        assert_eq!(map[AUTHORIZATION], "Bearer t0ken");
        assert!(map[AUTHORIZATION].is_sensitive());
        assert_eq!(map["x-test"], "1");
    }

    #[test]
    fn challenge_scope() {
        assert_eq!(scope_of(r#"Bearer error="insufficient_scope", scope="a b""#).as_deref(), Some("a b"));
        assert_eq!(scope_of("Bearer Scope=read:data, x=1").as_deref(), Some("read:data"));
        assert_eq!(scope_of("Bearer realm=x"), None);
    }

    #[test]
    fn sse_event_size_counts_retained_bytes() {
        let mut size = SseEventSize::new(12);
        assert!(size.observe(b": comment\r\n")); // not kept
        assert!(size.observe(b"data: 12345\r\n\r\n")); // 11 bytes and a newline; the event ends
        assert!(!size.observe(b"data: 1\ndata: 2\n")); // 8 kept, then 8 + 7 > 12
        let mut size = SseEventSize::new(12);
        assert!(!size.observe(b"data: 123456\n")); // 12 + 1
    }

    #[tokio::test]
    async fn sse_stream_ends_at_an_oversized_event() {
        let chunks: Vec<Result<Bytes, HttpError>> =
            vec![Ok(Bytes::from_static(b"data: {}\n\n")), Ok(Bytes::from_static(b"data: 0123456789abcdef\n\n"))];
        let events: Vec<_> = bounded_sse_stream(futures::stream::iter(chunks), 16).collect().await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0].as_ref().unwrap().data.as_deref(), Some("{}"));
        assert!(events[1].as_ref().unwrap_err().to_string().contains("maximum size of 16 bytes"), "{events:?}");
    }
}
