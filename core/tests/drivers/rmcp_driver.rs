//! The rmcp driver against real rmcp 3.x servers, in process over `tokio::io::duplex`.
//!
//! Two kinds of server:
//! - [`Catalog`]: an ordinary typed `ServerHandler` with paginated `resources/list` and
//!   `resources/templates/list` (what a well-behaved rmcp server looks like);
//! - [`Scripted`]: a `Service<RoleServer>` that answers both list methods from a script with any
//!   JSON (sloppy, endless, slow, failing) and logs every list request it receives, before any
//!   capability check; everything else (the `initialize` handshake) goes to a plain handler.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcplens::discovery::{Limits, ListKind, Support};
use mcplens::DiscoveryError;
use rmcp::model::{
    CacheScope, ClientNotification, ClientRequest, CustomResult, ErrorCode, ErrorData, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ProtocolVersion, Resource, ResourceTemplate, ServerCapabilities,
    ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{Peer, RoleClient, RoleServer, ServerHandler, Service, ServiceExt};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// What a server saw: the method and the cursor of each list request, in order.
type Log = Arc<Mutex<Vec<(&'static str, Option<String>)>>>;

fn seen(log: &Log) -> Vec<(&'static str, Option<String>)> {
    log.lock().unwrap().clone()
}

fn cursors(log: &Log) -> Vec<Option<String>> {
    seen(log).into_iter().map(|(_, c)| c).collect()
}

const TEMPLATES: &str = "resources/templates/list";
const RESOURCES: &str = "resources/list";

/// Serves `server` on one end of a duplex pipe and returns an initialized client on the other.
async fn connect<S: Service<RoleServer>>(server: S) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_io).await.expect("client handshake")
}

fn resources_capability() -> ServerCapabilities {
    ServerCapabilities::builder().enable_resources().build()
}

fn limits() -> Limits {
    Limits::default()
}

fn template(i: usize) -> ResourceTemplate {
    ResourceTemplate::new(format!("mem://t{i}/{{id}}"), format!("t{i}"))
}

fn resource(i: usize) -> Resource {
    Resource::new(format!("mem://r{i}"), format!("r{i}"))
}

/// Opaque cursors with bytes a lax client might normalize: they must come back unchanged.
fn cursor_for(prefix: &str, index: usize) -> String {
    format!("{prefix} é/+=={index}\u{2028} ")
}

fn index_of(prefix: &str, cursor: &str) -> usize {
    let rest = cursor.strip_prefix(&format!("{prefix} é/+==")).expect("a cursor we issued");
    rest.trim_end_matches(['\u{2028}', ' ']).parse().expect("a cursor we issued")
}

// --- Catalog: a typed ServerHandler --------------------------------------------------------------

#[derive(Clone)]
struct Catalog {
    templates: usize,
    resources: usize,
    page: usize,
    ttl_ms: Option<u64>,
    log: Log,
}

impl Catalog {
    fn new(templates: usize, resources: usize, page: usize) -> Catalog {
        Catalog { templates, resources, page, ttl_ms: None, log: Log::default() }
    }

    fn window(
        &self,
        method: &'static str,
        prefix: &str,
        n: usize,
        req: Option<PaginatedRequestParams>,
    ) -> (usize, usize, Option<String>) {
        let cursor = req.and_then(|p| p.cursor);
        self.log.lock().unwrap().push((method, cursor.clone()));
        let start = cursor.map_or(0, |c| index_of(prefix, &c));
        let end = (start + self.page).min(n);
        (start, end, (end < n).then(|| cursor_for(prefix, end)))
    }
}

impl ServerHandler for Catalog {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(resources_capability())
    }

    async fn list_resource_templates(
        &self,
        req: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (start, end, next) = self.window(TEMPLATES, "t", self.templates, req);
        let mut page = ListResourceTemplatesResult::with_all_items((start..end).map(template).collect());
        page.next_cursor = next;
        if let Some(ttl) = self.ttl_ms {
            page = page.with_ttl_ms(ttl).with_cache_scope(CacheScope::Public);
        }
        Ok(page)
    }

    async fn list_resources(
        &self,
        req: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (start, end, next) = self.window(RESOURCES, "r", self.resources, req);
        let mut page = ListResourcesResult::with_all_items((start..end).map(resource).collect());
        page.next_cursor = next;
        if let Some(ttl) = self.ttl_ms {
            page = page.with_ttl_ms(ttl).with_cache_scope(CacheScope::Public);
        }
        Ok(page)
    }
}

// --- Scripted: any JSON, logged at the Service level ----------------------------------------------

/// A plain handler for everything but the two list methods (the handshake, pings).
struct Base(ServerConfig);

impl ServerHandler for Base {
    fn get_info(&self) -> ServerConfig {
        self.0.clone()
    }
}

/// The answer to the `n`-th (0-based) list request of `method` with `cursor`.
type Script = dyn Fn(&'static str, Option<&str>, usize) -> Result<Value, ErrorData> + Send + Sync;

struct Scripted {
    base: Base,
    script: Box<Script>,
    delay: Duration,
    log: Log,
    /// List requests whose `notifications/cancelled` arrived while they were being served.
    cancelled: Arc<AtomicUsize>,
}

impl Scripted {
    fn new(
        capabilities: ServerCapabilities,
        script: impl Fn(&'static str, Option<&str>, usize) -> Result<Value, ErrorData> + Send + Sync + 'static,
    ) -> Scripted {
        Scripted {
            base: Base(ServerConfig::new(capabilities)),
            script: Box::new(script),
            delay: Duration::ZERO,
            log: Log::default(),
            cancelled: Arc::default(),
        }
    }

    fn slow(mut self, delay: Duration) -> Scripted {
        self.delay = delay;
        self
    }
}

impl Service<RoleServer> for Scripted {
    async fn handle_request(
        &self,
        request: ClientRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let (method, cursor) = match &request {
            ClientRequest::ListResourceTemplatesRequest(r) => {
                (TEMPLATES, r.params.as_ref().and_then(|p| p.cursor.clone()))
            }
            ClientRequest::ListResourcesRequest(r) => (RESOURCES, r.params.as_ref().and_then(|p| p.cursor.clone())),
            _ => return self.base.handle_request(request, cx).await,
        };
        let n = {
            let mut log = self.log.lock().unwrap();
            log.push((method, cursor.clone()));
            log.iter().filter(|(m, _)| *m == method).count() - 1
        };
        if !self.delay.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(self.delay) => {}
                () = cx.ct.cancelled() => {
                    self.cancelled.fetch_add(1, Ordering::SeqCst);
                    return Err(ErrorData::internal_error("cancelled", None));
                }
            }
        }
        // A custom result goes on the wire exactly as the script wrote it.
        (self.script)(method, cursor.as_deref(), n).map(|v| ServerResult::CustomResult(CustomResult::new(v)))
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        cx: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.base.handle_notification(notification, cx).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.base)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.base)
    }
}

fn templates_page(range: std::ops::Range<usize>, next: Option<&str>) -> Value {
    let items: Vec<Value> =
        range.map(|i| json!({ "uriTemplate": format!("mem://t{i}/{{id}}"), "name": format!("t{i}") })).collect();
    match next {
        Some(c) => json!({ "resourceTemplates": items, "nextCursor": c }),
        None => json!({ "resourceTemplates": items }),
    }
}

fn template_names(listing: &mcplens::Listing) -> Vec<String> {
    listing.templates().map(|t| t.name.to_string()).collect()
}

fn template_uris(listing: &mcplens::Listing) -> Vec<String> {
    listing.templates().map(|t| t.uri_template.to_string()).collect()
}

fn peer(client: &RunningService<RoleClient, ()>) -> &Peer<RoleClient> {
    client.peer()
}

// ---------------------------------------------------------------------------------------------
// Traversal
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn paginated_templates_follow_the_exact_cursors_in_order() {
    let server = Catalog::new(8, 0, 3);
    let log = server.log.clone();
    let client = connect(server).await;

    let listing = mcplens::rmcp::list_resource_templates(peer(&client), "docs", limits()).await.unwrap();

    let expected: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
    assert_eq!(template_names(&listing), expected);
    assert_eq!(template_uris(&listing)[7], "mem://t7/{id}");
    assert!(listing.templates().all(|t| t.server == "docs"));
    assert_eq!(listing.kind, ListKind::ResourceTemplates);
    assert_eq!(listing.support, Support::Listed);
    assert_eq!((listing.diagnostics.requests, listing.diagnostics.pages, listing.diagnostics.items), (3, 3, 8));
    // Page 1 without a cursor, then the server's cursors byte for byte, nothing else.
    assert_eq!(cursors(&log), vec![None, Some(cursor_for("t", 3)), Some(cursor_for("t", 6))]);
    assert!(seen(&log).iter().all(|(m, _)| *m == TEMPLATES));
}

#[tokio::test]
async fn template_only_server_lists_templates_and_no_resources() {
    let server = Catalog::new(2, 0, 10);
    let log = server.log.clone();
    let client = connect(server).await;

    let templates = mcplens::rmcp::list_resource_templates(peer(&client), "tpl", limits()).await.unwrap();
    let resources = mcplens::rmcp::list_resources(peer(&client), "tpl", limits()).await.unwrap();

    assert_eq!(template_names(&templates), ["t0", "t1"]);
    assert_eq!(templates.support, Support::Listed);
    assert!(resources.items.is_empty());
    assert_eq!(resources.support, Support::Listed);
    assert_eq!(resources.kind, ListKind::Resources);
    assert_eq!(seen(&log), vec![(TEMPLATES, None), (RESOURCES, None)]);
}

#[tokio::test]
async fn mixed_server_lists_each_kind_with_its_own_method() {
    let server = Catalog::new(3, 5, 2);
    let log = server.log.clone();
    let client = connect(server).await;

    let resources = mcplens::rmcp::list(peer(&client), ListKind::Resources, "mixed", limits()).await.unwrap();
    let templates = mcplens::rmcp::list(peer(&client), ListKind::ResourceTemplates, "mixed", limits()).await.unwrap();

    let uris: Vec<&str> = resources.resources().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["mem://r0", "mem://r1", "mem://r2", "mem://r3", "mem://r4"]);
    assert_eq!(resources.templates().count(), 0);
    assert_eq!(template_names(&templates), ["t0", "t1", "t2"]);
    assert_eq!(templates.resources().count(), 0);
    assert_eq!(
        seen(&log),
        vec![
            (RESOURCES, None),
            (RESOURCES, Some(cursor_for("r", 2))),
            (RESOURCES, Some(cursor_for("r", 4))),
            (TEMPLATES, None),
            (TEMPLATES, Some(cursor_for("t", 2))),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Eligibility and JSON-RPC errors
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn server_without_resources_capability_gets_no_request() {
    // The script would answer if asked, so a driver that asks anyway yields a `Listed` listing.
    let server = Scripted::new(ServerCapabilities::builder().enable_tools().build(), |_, _, _| {
        Ok(json!({ "resourceTemplates": [], "resources": [] }))
    });
    let log = server.log.clone();
    let client = connect(server).await;
    assert!(!mcplens::rmcp::declares_resources(peer(&client)));

    let templates = mcplens::rmcp::list_resource_templates(peer(&client), "tools", limits()).await.unwrap();
    let resources = mcplens::rmcp::list_resources(peer(&client), "tools", limits()).await.unwrap();

    assert_eq!(templates.support, Support::NoCapability);
    assert_eq!(resources.support, Support::NoCapability);
    assert!(templates.items.is_empty() && resources.items.is_empty());
    assert_eq!(templates.diagnostics.requests, 0);
    assert_eq!(seen(&log), vec![]);
}

#[tokio::test]
async fn method_not_found_on_templates_is_an_empty_listing() {
    let server = Scripted::new(resources_capability(), |method, _, _| match method {
        TEMPLATES => Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "resources/templates/list", None)),
        _ => Ok(json!({ "resources": [{ "uri": "mem://a", "name": "a" }] })),
    });
    let log = server.log.clone();
    let client = connect(server).await;
    assert!(mcplens::rmcp::declares_resources(peer(&client)));

    let templates = mcplens::rmcp::list_resource_templates(peer(&client), "legacy", limits()).await.unwrap();
    assert_eq!(templates.support, Support::MethodNotFound);
    assert!(templates.items.is_empty());
    assert_eq!(templates.diagnostics.requests, 1);
    assert_eq!(seen(&log), vec![(TEMPLATES, None)]);

    let resources = mcplens::rmcp::list_resources(peer(&client), "legacy", limits()).await.unwrap();
    assert_eq!(resources.resources().count(), 1);
}

#[tokio::test]
async fn method_not_found_on_resources_is_a_server_error() {
    let server = Scripted::new(resources_capability(), |_, _, _| {
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "resources/list", None))
    });
    let client = connect(server).await;

    let err = mcplens::rmcp::list_resources(peer(&client), "legacy", limits()).await.unwrap_err();
    assert_eq!(err.code(), "server_error");
    assert_eq!(err.rpc_code(), Some(-32601));
}

#[tokio::test]
async fn other_rpc_error_keeps_its_code_and_fails_the_whole_traversal() {
    // Page 1 is fine, page 2 fails: no prefix is returned.
    let server = Scripted::new(resources_capability(), |_, cursor, _| match cursor {
        None => Ok(templates_page(0..2, Some("p2"))),
        Some(_) => Err(ErrorData::new(ErrorCode(-32042), "secret server text", None)),
    });
    let log = server.log.clone();
    let client = connect(server).await;

    let err = mcplens::rmcp::list_resource_templates(peer(&client), "flaky", limits()).await.unwrap_err();
    assert_eq!(err.code(), "server_error");
    assert_eq!(err.rpc_code(), Some(-32042));
    assert_eq!(err.server(), "flaky");
    assert!(!err.to_string().contains("secret"));
    assert_eq!(cursors(&log), vec![None, Some("p2".to_owned())]);
}

// ---------------------------------------------------------------------------------------------
// Bounds
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn same_next_cursor_forever_stops_at_the_first_repeat() {
    let server = Scripted::new(resources_capability(), |_, _, n| Ok(templates_page(n..n + 1, Some("same"))));
    let log = server.log.clone();
    let client = connect(server).await;

    let err = mcplens::rmcp::list_resource_templates(peer(&client), "loop", limits()).await.unwrap_err();
    assert_eq!(err.code(), "repeated_cursor");
    assert!(matches!(err, DiscoveryError::RepeatedCursor { .. }));
    assert!(!err.to_string().contains("same"));
    assert_eq!(cursors(&log), vec![None, Some("same".to_owned())]);
}

#[tokio::test]
async fn more_pages_than_max_pages_fails_after_exactly_max_pages_requests() {
    let server =
        Scripted::new(resources_capability(), |_, _, n| Ok(templates_page(n..n + 1, Some(&format!("p{}", n + 1)))));
    let log = server.log.clone();
    let client = connect(server).await;

    let limits = Limits { max_pages: 5, ..Limits::default() };
    let err = mcplens::rmcp::list_resource_templates(peer(&client), "endless", limits).await.unwrap_err();
    assert_eq!(err.code(), "page_limit");
    assert!(matches!(err, DiscoveryError::PageLimit { max: 5, .. }));
    let expected: Vec<Option<String>> = std::iter::once(None).chain((1..5).map(|i| Some(format!("p{i}")))).collect();
    assert_eq!(cursors(&log), expected);
}

#[tokio::test]
async fn exactly_max_pages_pages_is_allowed() {
    let server = Catalog::new(5, 0, 1);
    let log = server.log.clone();
    let client = connect(server).await;

    let limits = Limits { max_pages: 5, ..Limits::default() };
    let listing = mcplens::rmcp::list_resource_templates(peer(&client), "five", limits).await.unwrap();
    assert_eq!(listing.items.len(), 5);
    assert_eq!(seen(&log).len(), 5);
}

#[tokio::test]
async fn item_limit_is_enforced_through_the_driver() {
    let server = Catalog::new(10, 0, 4);
    let client = connect(server).await;

    let limits = Limits { max_items: 9, ..Limits::default() };
    let err = mcplens::rmcp::list_resource_templates(peer(&client), "many", limits).await.unwrap_err();
    assert_eq!(err.code(), "item_limit");
}

#[tokio::test(start_paused = true)]
async fn server_slower_than_the_deadline_fails_with_deadline_and_is_cancelled() {
    let server_sleep = Duration::from_secs(30);
    let server = Scripted::new(resources_capability(), |_, _, _| Ok(templates_page(0..1, None))).slow(server_sleep);
    let log = server.log.clone();
    let cancelled = server.cancelled.clone();
    let client = connect(server).await;

    let limits = Limits { deadline: Duration::from_millis(200), ..Limits::default() };
    let wall = std::time::Instant::now();
    let start = tokio::time::Instant::now();
    let err = mcplens::rmcp::list_resource_templates(peer(&client), "slow", limits).await.unwrap_err();
    let took = start.elapsed();

    assert_eq!(err.code(), "deadline");
    assert!(matches!(err, DiscoveryError::Deadline { max, .. } if max == Duration::from_millis(200)));
    assert!(took < server_sleep / 2, "returned after {took:?}, the server sleeps {server_sleep:?}");
    assert!(wall.elapsed() < Duration::from_secs(20), "generous wall-clock bound");
    assert_eq!(seen(&log).len(), 1);

    // The abandoned request is cancelled on the server (`notifications/cancelled`).
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(cancelled.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn deadline_covers_the_whole_traversal_not_each_request() {
    // Each page takes 80 ms, well under the 200 ms deadline on its own; the third cannot finish.
    let server = Scripted::new(resources_capability(), |_, _, n| Ok(templates_page(n..n + 1, Some(&format!("p{n}")))))
        .slow(Duration::from_millis(80));
    let log = server.log.clone();
    let client = connect(server).await;

    let limits = Limits { deadline: Duration::from_millis(200), ..Limits::default() };
    let err = mcplens::rmcp::list_resource_templates(peer(&client), "slowish", limits).await.unwrap_err();
    assert_eq!(err.code(), "deadline");
    assert_eq!(seen(&log).len(), 3);
}

// ---------------------------------------------------------------------------------------------
// Cache, transport, raw pages
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn rmcp_response_cache_is_not_used() {
    let mut server = Catalog::new(4, 0, 2);
    server.ttl_ms = Some(600_000);
    let log = server.log.clone();
    let client = connect(server).await;

    let first = mcplens::rmcp::list_resource_templates(peer(&client), "cached", limits()).await.unwrap();
    let second = mcplens::rmcp::list_resource_templates(peer(&client), "cached", limits()).await.unwrap();

    assert_eq!(first, second);
    assert_eq!(first.ttl_ms, Some(600_000));
    assert_eq!(first.cache_scope.as_deref(), Some("public"));
    // Two traversals of two pages: four server hits.
    let page1_then_2 = [None, Some(cursor_for("t", 2))];
    assert_eq!(cursors(&log), [page1_then_2.clone(), page1_then_2].concat());
}

#[tokio::test]
async fn closed_transport_is_a_transport_error() {
    let server = Catalog::new(1, 0, 1);
    let log = server.log.clone();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server_task = tokio::spawn(async move { server.serve(server_io).await.unwrap() });
    let client = ().serve(client_io).await.unwrap();
    let running_server = server_task.await.unwrap();
    running_server.cancel().await.unwrap();

    let err = mcplens::rmcp::list_resource_templates(peer(&client), "gone", limits()).await.unwrap_err();
    assert_eq!(err.code(), "transport_error");
    assert_eq!(seen(&log), vec![]);
}

#[tokio::test]
async fn invalid_limits_send_nothing() {
    let server = Catalog::new(1, 0, 1);
    let log = server.log.clone();
    let client = connect(server).await;

    let limits = Limits { max_pages: 0, ..Limits::default() };
    let err = mcplens::rmcp::list_resource_templates(peer(&client), "x", limits).await.unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
    assert_eq!(seen(&log), vec![]);
}

/// A page rmcp's typed client refuses (`audience: ["system"]` is not an rmcp `Role`) reaches the
/// core raw, and the core keeps the item minus the bad field.
#[tokio::test]
async fn page_rmcp_cannot_type_reaches_the_core_raw_and_is_judged_leniently() {
    let server = Scripted::new(resources_capability(), |_, _, _| {
        Ok(json!({
            "resourceTemplates": [
                { "uriTemplate": "mem://a/{id}", "name": "a", "annotations": { "audience": ["system"], "priority": 0.5 },
                  "x-unknown": 1 },
                { "uriTemplate": "mem://b/{id}", "name": "b", "size": "big" }
            ],
            "cacheScope": "shared"
        }))
    });
    let client = connect(server).await;

    let listing = mcplens::rmcp::list_resource_templates(peer(&client), "sloppy", limits()).await.unwrap();
    assert_eq!(template_names(&listing), ["a", "b"]);
    let a = listing.templates().next().unwrap();
    let annotations = a.annotations.as_ref().unwrap();
    assert_eq!(annotations.audience, None);
    assert_eq!(annotations.priority, Some(0.5));
    assert_eq!(listing.diagnostics.dropped_fields.get("annotations.audience"), Some(&1));
    // Unknown keys were seen, so the page was not re-encoded by rmcp.
    assert!(listing.diagnostics.ignored_keys >= 1);
    assert_eq!(listing.cache_scope.as_deref(), Some("shared"));
}

#[tokio::test]
async fn broken_pages_are_malformed_results() {
    let pages = [
        json!({ "resourceTemplates": "nope" }),
        json!({}),
        json!({ "resourceTemplates": [{ "name": "no template" }] }),
        json!({ "resourceTemplates": [], "nextCursor": 5 }),
        json!({ "resourceTemplates": [], "resultType": "input_required" }),
        // Also a valid prompts list: rmcp decodes it as one and the page is lost inside rmcp.
        json!({ "resourceTemplates": [], "prompts": [] }),
    ];
    for page in pages {
        let answer = page.clone();
        let server = Scripted::new(resources_capability(), move |_, _, _| Ok(answer.clone()));
        let client = connect(server).await;
        let err = mcplens::rmcp::list_resource_templates(peer(&client), "bad", limits()).await.unwrap_err();
        assert_eq!(err.code(), "malformed_result", "page {page}");
    }
}

#[tokio::test]
async fn empty_string_cursor_is_a_real_cursor() {
    let server = Scripted::new(resources_capability(), |_, cursor, _| match cursor {
        None => Ok(templates_page(0..1, Some(""))),
        Some("") => Ok(templates_page(1..2, None)),
        Some(_) => Err(ErrorData::internal_error("unexpected cursor", None)),
    });
    let log = server.log.clone();
    let client = connect(server).await;

    let listing = mcplens::rmcp::list_resource_templates(peer(&client), "empty", limits()).await.unwrap();
    assert_eq!(template_names(&listing), ["t0", "t1"]);
    assert_eq!(cursors(&log), vec![None, Some(String::new())]);
}

/// A page rmcp *can* type reaches the core as rmcp re-encodes it (documented in the driver):
/// unknown keys are already gone, `priority` went through an `f32`, a negative `ttlMs` is 0.
/// The core still judges the optional fields (a date-only `lastModified` is a plain string to
/// rmcp and is dropped by the core).
#[tokio::test]
async fn page_rmcp_can_type_reaches_the_core_as_rmcp_typed_it() {
    let server = Scripted::new(resources_capability(), |_, _, _| {
        Ok(json!({
            "resourceTemplates": [{
                "uriTemplate": "mem://a/{id}", "name": "a", "x-unknown": 1,
                "annotations": { "priority": 0.123456789, "lastModified": "2025-01-01" }
            }],
            "ttlMs": -5
        }))
    });
    let client = connect(server).await;

    let listing = mcplens::rmcp::list_resource_templates(peer(&client), "typed", limits()).await.unwrap();
    let a = listing.templates().next().unwrap();
    let annotations = a.annotations.as_ref().unwrap();
    assert_eq!(annotations.priority, Some(0.12345679));
    assert_eq!(annotations.last_modified, None);
    assert_eq!(listing.diagnostics.dropped_fields.get("annotations.lastModified"), Some(&1));
    assert_eq!(listing.diagnostics.ignored_keys, 0);
    assert_eq!(listing.ttl_ms, Some(0));
}
