//! [`Tracked`]: an rmcp server service that records every tracked request with a
//! [`Tracker`](crate::tracking::Tracker) and returns the inner service's results untouched.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime};

use rmcp::model::{ClientNotification, ClientRequest, NumberOrString, ProtocolVersion, ServerConfig, ServerResult};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, Service};

use crate::tracking::{
    Method, Operation, Payload, PeerInfo, RequestId, RpcError, Session, Tracker, Transport, WriteJson,
};

/// Wraps an rmcp server service (any `ServerHandler`, or another `Service<RoleServer>`) so that
/// every tracked request ([`Method::ALL`]: `initialize`, `ping`, `tools/*`, `resources/*`,
/// `prompts/*`, `completion/complete`, `logging/setLevel`, `tasks/*`, and protocol 2026-07-28's
/// `server/discover`, `subscriptions/listen`, `resources/directory/read`) is recorded. A 2026-07-28
/// request says its revision in `_meta` (SEP-2575); its event carries no session id.
///
/// One `Tracked` serves one connection (rmcp's `serve` consumes the service; streamable HTTP builds
/// one service per session): its session id is derived from the `Mcp-Session-Id` header when the
/// transport puts the HTTP request parts in the request extensions, and minted otherwise. The inner
/// service's results and errors are returned as they are; its `get_info` and
/// `supported_protocol_versions` are forwarded.
///
/// ```no_run
/// # use mcplens::rmcp::Tracked;
/// # use mcplens::tracking::Tracker;
/// # async fn run<S: rmcp::ServerHandler>(server: S, io: tokio::io::DuplexStream) -> anyhow_free::Result {
/// use rmcp::ServiceExt;
/// let tracker = Tracker::builder().server("my-server", Some("1.0")).build()?;
/// let running = Tracked::new(server, tracker.clone()).serve(io).await?;
/// running.waiting().await?;
/// tracker.shutdown(std::time::Duration::from_secs(5))?;
/// # Ok(()) }
/// # mod anyhow_free { pub type Result = std::result::Result<(), Box<dyn std::error::Error>>; }
/// ```
pub struct Tracked<S> {
    inner: S,
    tracker: Tracker,
    transport: Option<Transport>,
    session: OnceLock<Session>,
    client_known: AtomicBool,
}

impl<S> Tracked<S> {
    /// Track `inner` with `tracker` (a clone; trackers are cheap to clone).
    pub fn new(inner: S, tracker: Tracker) -> Tracked<S> {
        Tracked { inner, tracker, transport: None, session: OnceLock::new(), client_known: AtomicBool::new(false) }
    }

    /// Say how clients reach this server (`network.transport` in OpenTelemetry). HTTP is detected
    /// by itself when the request parts are available.
    pub fn with_transport(mut self, transport: Transport) -> Tracked<S> {
        self.transport = Some(transport);
        self
    }

    /// The inner service.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The session of this connection, once the first request has arrived.
    pub fn session(&self) -> Option<&Session> {
        self.session.get()
    }

    fn session_for(&self, cx: &RequestContext<RoleServer>) -> &Session {
        self.session.get_or_init(|| {
            let parts = cx.extensions.get::<http::request::Parts>();
            let header = parts.and_then(|p| p.headers.get("mcp-session-id")).and_then(|v| v.to_str().ok());
            let transport = self.transport.or(parts.map(|_| Transport::Http));
            self.tracker.open_session(header, transport)
        })
    }

    fn note_client(&self, session: &Session, cx: &RequestContext<RoleServer>) {
        if self.client_known.load(Ordering::Relaxed) {
            return;
        }
        if let Some(info) = cx.peer.peer_info() {
            let client = PeerInfo::new(info.client_info.name.clone(), Some(info.client_info.version.as_str()));
            self.tracker.set_session_client(session, Some(client), Some(info.protocol_version.as_str()));
            self.client_known.store(true, Ordering::Relaxed);
        }
    }
}

impl<S> Drop for Tracked<S> {
    fn drop(&mut self) {
        if let Some(s) = self.session.get() {
            self.tracker.close_session(s);
        }
    }
}

fn json_text(b: &[u8]) -> Payload<'_> {
    match std::str::from_utf8(b) {
        Ok(s) if !s.is_empty() => Payload::Json(s),
        _ => Payload::None,
    }
}

/// The request's `params` as a serializable value (its `_meta` is in the context).
fn params_of(request: &ClientRequest) -> Option<&dyn WriteJson> {
    Some(match request {
        ClientRequest::InitializeRequest(r) => &r.params,
        ClientRequest::CallToolRequest(r) => &r.params,
        ClientRequest::ReadResourceRequest(r) => &r.params,
        ClientRequest::SubscribeRequest(r) => &r.params,
        ClientRequest::UnsubscribeRequest(r) => &r.params,
        ClientRequest::GetPromptRequest(r) => &r.params,
        ClientRequest::ListToolsRequest(r) => r.params.as_ref()?,
        ClientRequest::ListResourcesRequest(r) => r.params.as_ref()?,
        ClientRequest::ListResourceTemplatesRequest(r) => r.params.as_ref()?,
        ClientRequest::ListPromptsRequest(r) => r.params.as_ref()?,
        ClientRequest::CompleteRequest(r) => &r.params,
        ClientRequest::SetLevelRequest(r) => &r.params,
        ClientRequest::SubscriptionsListenRequest(r) => &r.params,
        ClientRequest::GetTaskRequest(r) => &r.params,
        ClientRequest::UpdateTaskRequest(r) => &r.params,
        ClientRequest::CancelTaskRequest(r) => &r.params,
        ClientRequest::ReadResourceDirectoryRequest(r) => &r.params,
        // `tasks/result`, `tasks/list` (no typed request in rmcp 3.11).
        ClientRequest::CustomRequest(r) => r.params.as_ref()?,
        _ => return None,
    })
}

impl<S: Service<RoleServer>> Service<RoleServer> for Tracked<S> {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        if !self.tracker.is_enabled() {
            return self.inner.handle_request(request, context).await;
        }
        let method = Method::from_name(request.method());
        let session = self.session_for(&context).clone();
        if method != Method::Initialize {
            self.note_client(&session, &context);
        }
        // The request and context move into the inner service: keep what the event needs.
        let mut params = Vec::new();
        if let Some(p) = params_of(&request) {
            if p.write_json(&mut params).is_err() {
                params.clear();
            }
        }
        let mut meta = Vec::new();
        if !context.meta.is_empty() && serde_json::to_writer(&mut meta, &context.meta).is_err() {
            meta.clear();
        }
        let id_text;
        let request_id = match &context.id {
            NumberOrString::Number(n) => RequestId::Number(*n),
            NumberOrString::String(s) => {
                id_text = s.clone();
                RequestId::Text(&id_text)
            }
        };
        let started_at = SystemTime::now();
        let t0 = Instant::now();
        let result = self.inner.handle_request(request, context).await;
        let duration = t0.elapsed();

        let mut op = Operation {
            request_id,
            params: json_text(&params),
            meta: json_text(&meta),
            ..Operation::new(session.key(), method, started_at, duration)
        };
        match &result {
            Ok(r) => {
                op.tool_error = matches!(r, ServerResult::CallToolResult(c) if c.is_error == Some(true));
                op.result = Payload::Serialize(r);
            }
            Err(e) => op.error = Some(RpcError { code: i64::from(e.code.0), message: &e.message }),
        }
        self.tracker.record(&op);
        result
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.handle_notification(notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }
}
