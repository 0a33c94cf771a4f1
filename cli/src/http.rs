//! The HTTP client of `--url`: one keep-alive connection for every request of a session.
//!
//! rmcp's default reqwest client keeps no idle connection (`pool_max_idle_per_host(0)`), so each
//! request opened a new TCP connection. [`KeepAlive`] is reqwest with its connection pool, and
//! two changes so the pool can reuse one connection:
//!
//! - a POST answered with an SSE stream is read to its end (the server closes the stream after
//!   the response) before the response reaches the caller, so the connection is back in the pool
//!   when the next request goes out — waiting at most [`STREAM_END`] for a server that keeps the
//!   stream open;
//! - the standalone GET stream (for messages the server sends unprompted) is not opened: a
//!   listing has no use for them, and it would hold a second connection for the whole session.
//!   Resuming a response stream (`Last-Event-ID`) still works.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// How long a response stream may stay open after it delivered the response before the
/// response is handed on anyway (the connection is then not reused).
pub const STREAM_END: Duration = Duration::from_millis(250);

type SseStream = BoxStream<'static, Result<Sse, SseError>>;
type Outcome<T> = Result<T, StreamableHttpError<reqwest::Error>>;

/// reqwest with keep-alive connections (see the module docs).
#[derive(Clone)]
pub struct KeepAlive(reqwest::Client);

impl KeepAlive {
    /// rmcp's redirect rule: only same-origin 307/308 (they keep the method and body), at most 10
    /// hops — a cross-origin redirect would replay the session id and the caller's headers (the
    /// bearer token) to another host.
    pub fn new() -> KeepAlive {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder().redirect(redirects).tcp_nodelay(true).build();
        KeepAlive(client.unwrap_or_default())
    }
}

impl StreamableHttpClient for KeepAlive {
    type Error = reqwest::Error;

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
        let response = self
            .0
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await?;
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
        self.0.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Outcome<SseStream> {
        if last_event_id.is_none() {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        self.0.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
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
        if last_event_id.is_none() {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
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
