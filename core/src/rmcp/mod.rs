//! Async driver of the discovery [`Pager`] over an rmcp 3.x client (feature `rmcp`).
//!
//! [`list_resource_templates`], [`list_resources`] and the generic [`list`] run one complete,
//! bounded traversal of one server through an already initialized
//! [`Peer<RoleClient>`](::rmcp::Peer):
//!
//! - **Eligibility.** The server's capabilities come from
//!   [`Peer::peer_info`](::rmcp::Peer::peer_info), serialized to JSON and judged by the core's
//!   [`has_resources_capability`] (the rule is written once). A server without the `resources`
//!   capability (or a peer without server info, i.e. not initialized) gets the pager's empty
//!   [`Support::NoCapability`](crate::discovery::Support::NoCapability) listing and no request.
//!   See [`declares_resources`].
//! - **One request per page.** Page 1 carries no cursor; later pages carry exactly the cursor the
//!   pager hands out, byte for byte. rmcp's `list_all_*` helpers (which have no page, item, byte
//!   or loop bound) are never used. Note that rmcp itself adds `params._meta.progressToken` to
//!   every request it sends, page 1 included; there is no way to send a request without `params`
//!   through a `Peer`, so "no `params` key on page 1" holds only up to that `_meta`.
//! - **Deadline.** Every in-flight request is bounded by the pager's
//!   [`remaining`](Pager::remaining) time with [`tokio::time::timeout`], measured on a
//!   [`tokio::time::Instant`] taken when the traversal starts (so a paused tokio clock works). A
//!   request abandoned by the timeout (or by the caller dropping the future) is followed by a
//!   best-effort `notifications/cancelled`, so the server can stop working on it.
//! - **Errors.** A JSON-RPC error keeps its code ([`Outcome::RpcError`]; `-32601` on
//!   `resources/templates/list` is the legacy "no templates"), a page rmcp decoded as some other
//!   result type is [`Outcome::Malformed`], the timeout is [`Outcome::TimedOut`], and a closed or
//!   failed transport is [`Outcome::Transport`]. Every failure fails the whole traversal.
//!
//! # What the core sees: raw page or rmcp's typed page
//!
//! rmcp decodes every response *before* it knows which request it answers, into its untagged
//! `ServerResult` union, whose last variant is `CustomResult` (the raw JSON). rmcp's typed
//! `Peer::list_resource_templates` / `list_resources` then refuse anything but the expected
//! variant as `UnexpectedResponse`, and they consult rmcp's client response cache. This driver
//! does not call them: it sends the list method as a custom request
//! ([`ClientRequest::CustomRequest`](::rmcp::model::ClientRequest)) and inspects the
//! `ServerResult` itself:
//!
//! - the expected typed variant (`ListResourceTemplatesResult` / `ListResourcesResult`): the page
//!   was well-formed for rmcp; it is re-serialized with `serde_json` and handed to the pager. This
//!   is *rmcp's view* of the page, not the server's bytes: unknown keys are already dropped (so
//!   they do not show in `Diagnostics::ignored_keys`), `annotations.priority` went through an
//!   `f32` (about 7 significant digits survive: 0.123456789 arrives as 0.12345679), a negative
//!   `ttlMs` became 0 and `cacheScope: ""` became absent;
//! - `CustomResult` (rmcp's typed decode failed: `audience: ["system"]`, a negative or
//!   non-integer `size`, a non-string `nextCursor`, a missing `name`, an unknown `cacheScope`;
//!   a date-only `lastModified`, by contrast, is a plain string to rmcp and takes the typed
//!   route): this **is** the raw page, as parsed JSON (object key order aside), and the core
//!   applies its own lenient-optional / strict-structure rules to it exactly as it does for the
//!   Python and Node hosts — so a page with one bad optional field is kept, minus that field;
//! - `EmptyResult` (the result was exactly `{}`): passed on as `{}` (the pager rejects it);
//! - any other variant (the result also decoded as, e.g., a prompts list or a tool result): the
//!   server's page is lost inside rmcp, and the request counts as [`Outcome::Malformed`].
//!
//! So the raw page is reachable through rmcp 3.11 exactly when rmcp could not type it, which is
//! where leniency matters; well-formed pages reach the core as rmcp re-encodes them. A response
//! whose JSON rmcp cannot parse at all (e.g. a lone UTF-16 surrogate escape) never reaches the
//! driver: rmcp's byte-stream transports skip such a line, so the traversal ends at the deadline
//! (the core's surrogate repair only helps the Python and Node hosts).
//!
//! Because custom requests bypass rmcp's client response cache (SEP-2549 `ttlMs`), every page is
//! fetched from the server on every traversal, and the driver leaves the peer's cache
//! configuration, which the caller may rely on for other requests, untouched.
//!
//! ```no_run
//! # async fn demo(peer: &rmcp::Peer<rmcp::RoleClient>) -> Result<(), mcplens::DiscoveryError> {
//! use mcplens::discovery::Limits;
//!
//! let listing = mcplens::rmcp::list_resource_templates(peer, "docs", Limits::default()).await?;
//! for template in listing.templates() {
//!     println!("{}", template.uri_template);
//! }
//! # Ok(()) }
//! ```

use std::time::Duration;

use ::rmcp::model::{
    CancelledNotificationParam, ClientRequest, CustomRequest, RequestId, ServerPeerInfo, ServerResult,
};
use ::rmcp::{Peer, RoleClient, ServiceError};

use crate::discovery::{has_resources_capability, DiscoveryError, Fetched, Limits, ListKind, Listing, Pager};
use crate::tool::{ReadCall, ServerCall, ToolError};

mod catalog;
mod client;
mod tracked;
pub use catalog::*;
pub use client::*;
pub use tracked::*;

/// Lists a server's resource templates (`resources/templates/list`), every page, within `limits`.
///
/// `server` is the host's name for the server (it appears in the listing and in errors). See the
/// [module docs](self) for the traversal rules.
pub async fn list_resource_templates(
    peer: &Peer<RoleClient>,
    server: &str,
    limits: Limits,
) -> Result<Listing, DiscoveryError> {
    list(peer, ListKind::ResourceTemplates, server, limits).await
}

/// Lists a server's concrete resources (`resources/list`), every page, within `limits`.
///
/// `server` is the host's name for the server (it appears in the listing and in errors). See the
/// [module docs](self) for the traversal rules.
pub async fn list_resources(peer: &Peer<RoleClient>, server: &str, limits: Limits) -> Result<Listing, DiscoveryError> {
    list(peer, ListKind::Resources, server, limits).await
}

/// Runs one complete traversal of `kind` on the server behind `peer`: the generic form of
/// [`list_resource_templates`] and [`list_resources`].
pub async fn list(
    peer: &Peer<RoleClient>,
    kind: ListKind,
    server: &str,
    limits: Limits,
) -> Result<Listing, DiscoveryError> {
    let start = tokio::time::Instant::now();
    let eligible = declares_resources(peer);
    let mut pager =
        Pager::new(kind, server, eligible, limits, Duration::ZERO)?.with_protocol_version(&protocol_version(peer));
    while let Some(request) = pager.poll_request() {
        let remaining = pager.remaining(start.elapsed());
        let fetched = fetch_page(peer, kind, request.cursor, remaining).await;
        pager.handle_outcome(fetched.as_outcome(), start.elapsed())?;
    }
    pager.finish()
}

/// Performs a validated `ReadMcpResourceTool` call over `peer` ([`perform`]).
pub async fn read_resource(peer: &Peer<RoleClient>, call: ReadCall) -> Result<String, ToolError> {
    perform(peer, ServerCall::Read(call)).await
}

/// Performs a validated call of a tool that asks the server (the read, the completion) over
/// `peer`: sends its method, waits at most its timeout, and renders the model's output (or the
/// tool error).
pub async fn perform(peer: &Peer<RoleClient>, call: ServerCall) -> Result<String, ToolError> {
    let params: serde_json::Value = serde_json::from_str(&call.params_json()).expect("the core writes JSON");
    let request = ClientRequest::CustomRequest(CustomRequest::new(call.method(), Some(params)));
    let fetched = match tokio::time::timeout(call.remaining(Duration::ZERO), send(peer, request)).await {
        Err(_elapsed) => Fetched::TimedOut,
        Ok(Err(error)) => from_service_error(error),
        Ok(Ok(ServerResult::ReadResourceResult(r))) => {
            serde_json::to_string(&r).map_or(Fetched::Malformed, Fetched::Page)
        }
        Ok(Ok(ServerResult::CompleteResult(r))) => serde_json::to_string(&r).map_or(Fetched::Malformed, Fetched::Page),
        Ok(Ok(ServerResult::CustomResult(raw))) => {
            serde_json::to_string(&raw.0).map_or(Fetched::Malformed, Fetched::Page)
        }
        Ok(Ok(_)) => Fetched::Malformed,
    };
    call.finish(fetched.as_outcome())
}

/// Does the server behind `peer` declare the `resources` capability? `false` when the peer has
/// no server info (not initialized). The rule is the core's [`has_resources_capability`],
/// applied to the capabilities as rmcp holds them.
pub fn declares_resources(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| capabilities_declare_resources(&info))
}

/// The capabilities of the server behind `peer` as JSON text (`None` before initialize).
pub(crate) fn capabilities_json(peer: &Peer<RoleClient>) -> Option<String> {
    peer.peer_info().and_then(|info| serde_json::to_string(&info.capabilities).ok())
}

/// The protocol revision `peer`'s connection negotiated (empty before initialize).
pub(crate) fn protocol_version(peer: &Peer<RoleClient>) -> String {
    peer.peer_info().map(|info| info.protocol_version.as_str().to_owned()).unwrap_or_default()
}

fn capabilities_declare_resources(info: &ServerPeerInfo) -> bool {
    serde_json::to_string(&info.capabilities).is_ok_and(|json| has_resources_capability(&json))
}

/// Sends one list request and waits at most `remaining` for its answer.
pub(crate) async fn fetch_page(
    peer: &Peer<RoleClient>,
    kind: ListKind,
    cursor: Option<String>,
    remaining: Duration,
) -> Fetched {
    if remaining.is_zero() {
        return Fetched::TimedOut;
    }
    let params = cursor.map(|c| serde_json::json!({ "cursor": c }));
    let request = ClientRequest::CustomRequest(CustomRequest::new(kind.method(), params));
    match tokio::time::timeout(remaining, send(peer, request)).await {
        Err(_elapsed) => Fetched::TimedOut,
        Ok(Err(error)) => from_service_error(error),
        Ok(Ok(result)) => from_result(kind, result),
    }
}

/// Sends `request` and awaits its response; if this future is dropped while the response is
/// awaited (timeout or caller), the server is told with `notifications/cancelled`.
async fn send(peer: &Peer<RoleClient>, request: ClientRequest) -> Result<ServerResult, ServiceError> {
    let handle = peer.send_request_with_option(request, Default::default()).await?;
    let mut guard = CancelOnDrop { peer, id: Some(handle.id.clone()) };
    let result = handle.await_response().await;
    guard.id = None;
    result
}

struct CancelOnDrop<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        // Drop cannot await: send the notification from a detached task. Best effort: without a
        // runtime (the caller's runtime is shutting down) there is nobody left to tell.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let params =
                    CancelledNotificationParam::new(Some(id), Some("request abandoned by the caller".to_owned()));
                let _ = peer.notify_cancelled(params).await;
            });
        }
    }
}

fn from_service_error(error: ServiceError) -> Fetched {
    match error {
        ServiceError::McpError(e) => Fetched::RpcError(i64::from(e.code.0)),
        ServiceError::UnexpectedResponse => Fetched::Malformed,
        ServiceError::Timeout { .. } => Fetched::TimedOut,
        _ => Fetched::Transport,
    }
}

fn from_result(kind: ListKind, result: ServerResult) -> Fetched {
    let text = match (kind, result) {
        (ListKind::ResourceTemplates, ServerResult::ListResourceTemplatesResult(page)) => serde_json::to_string(&page),
        (ListKind::Resources, ServerResult::ListResourcesResult(page)) => serde_json::to_string(&page),
        (_, ServerResult::CustomResult(raw)) => serde_json::to_string(&raw.0),
        (_, ServerResult::EmptyResult(empty)) => serde_json::to_string(&empty),
        _ => return Fetched::Malformed,
    };
    text.map_or(Fetched::Malformed, Fetched::Page)
}
