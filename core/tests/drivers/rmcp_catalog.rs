//! The catalog driver against real rmcp 3.x servers, in process over `tokio::io::duplex`.
//!
//! Every server here is a [`Recorder`]: a `Service<RoleServer>` that answers both list methods
//! from a shared [`Book`] (the items, page size, scripted failures, an optional gate that holds
//! one list request until the test releases it) and records the method of **every** request it
//! receives, `initialize` included. No test asserts on time: they synchronize on the server's gate
//! (`Notify`) and on the driver's events; a generous guard turns a hang into a failure.

use std::borrow::Cow;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcplens::catalog::{Disposition, ListChanged, Reason, RefreshConfig, Status};
use mcplens::discovery::Limits;
use mcplens::rmcp::{CatalogDriver, Connection, DriverEvent, RefreshOutcome};
use rmcp::model::{
    ClientNotification, ClientRequest, CustomResult, ErrorCode, ErrorData, ProtocolVersion, ServerCapabilities,
    ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{Peer, RoleClient, RoleServer, ServerHandler, Service, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::{broadcast, Notify};

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

const TEMPLATES: &str = "resources/templates/list";
const RESOURCES: &str = "resources/list";

/// A test server's state, shared with the test.
struct Book {
    templates: Mutex<Vec<Value>>,
    resources: Mutex<Vec<Value>>,
    /// Items per page.
    page: usize,
    /// The method of every request received, in order.
    requests: Mutex<Vec<String>>,
    /// Fail the next this-many requests of each list with JSON-RPC error -32000.
    fail_templates: AtomicUsize,
    fail_resources: AtomicUsize,
    /// `ttlMs` on every page (0: none).
    ttl_ms: AtomicU64,
    /// Hold the next request of this list method until `release`.
    gate: Mutex<Option<&'static str>>,
    arrived: Notify,
    release: Notify,
}

impl Book {
    fn new(templates: Vec<Value>, resources: Vec<Value>, page: usize) -> Arc<Book> {
        Arc::new(Book {
            templates: Mutex::new(templates),
            resources: Mutex::new(resources),
            page,
            requests: Mutex::default(),
            fail_templates: AtomicUsize::new(0),
            fail_resources: AtomicUsize::new(0),
            ttl_ms: AtomicU64::new(0),
            gate: Mutex::default(),
            arrived: Notify::new(),
            release: Notify::new(),
        })
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// List requests of `method` so far.
    fn count(&self, method: &str) -> usize {
        self.requests.lock().unwrap().iter().filter(|m| *m == method).count()
    }

    /// List requests of both methods so far.
    fn lists(&self) -> usize {
        self.count(TEMPLATES) + self.count(RESOURCES)
    }

    fn set_templates(&self, items: Vec<Value>) {
        *self.templates.lock().unwrap() = items;
    }

    fn set_resources(&self, items: Vec<Value>) {
        *self.resources.lock().unwrap() = items;
    }

    fn hold_next(&self, method: &'static str) {
        *self.gate.lock().unwrap() = Some(method);
    }

    fn always_fail(&self) {
        self.fail_templates.store(usize::MAX, Ordering::SeqCst);
        self.fail_resources.store(usize::MAX, Ordering::SeqCst);
    }
}

/// Takes one scripted failure, if any is left.
fn take_failure(counter: &AtomicUsize) -> bool {
    counter.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
}

/// A plain handler for everything but the two list methods (the handshake, and the default
/// "method not found" for anything else).
struct Base(ServerConfig);

impl ServerHandler for Base {
    fn get_info(&self) -> ServerConfig {
        self.0.clone()
    }
}

struct Recorder {
    base: Base,
    book: Arc<Book>,
}

impl Recorder {
    async fn list(&self, method: &'static str, cursor: Option<String>) -> Result<ServerResult, ErrorData> {
        let (key, source) = match method {
            TEMPLATES => ("resourceTemplates", &self.book.templates),
            _ => ("resources", &self.book.resources),
        };
        // The items as they are when the request arrives (a held request answers with them).
        let items = source.lock().unwrap().clone();
        let held = {
            let mut gate = self.book.gate.lock().unwrap();
            (*gate == Some(method)).then(|| gate.take()).is_some()
        };
        if held {
            self.book.arrived.notify_one();
            self.book.release.notified().await;
        }
        let failing = match method {
            TEMPLATES => &self.book.fail_templates,
            _ => &self.book.fail_resources,
        };
        if take_failure(failing) {
            return Err(ErrorData::new(ErrorCode(-32000), "scripted failure", None));
        }
        let start: usize = cursor.map_or(0, |c| c.parse().expect("a cursor we issued"));
        let end = (start + self.book.page).min(items.len());
        let mut page = json!({ key: items[start..end] });
        if end < items.len() {
            page["nextCursor"] = json!(end.to_string());
        }
        let ttl = self.book.ttl_ms.load(Ordering::SeqCst);
        if ttl > 0 {
            page["ttlMs"] = json!(ttl);
        }
        Ok(ServerResult::CustomResult(CustomResult::new(page)))
    }
}

impl Service<RoleServer> for Recorder {
    async fn handle_request(
        &self,
        request: ClientRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        self.book.requests.lock().unwrap().push(request.method().to_owned());
        match request {
            ClientRequest::ListResourceTemplatesRequest(r) => {
                self.list(TEMPLATES, r.params.and_then(|p| p.cursor)).await
            }
            ClientRequest::ListResourcesRequest(r) => self.list(RESOURCES, r.params.and_then(|p| p.cursor)).await,
            ClientRequest::ReadResourceRequest(r) if r.params.uri.ends_with("/missing") => {
                Err(ErrorData::new(ErrorCode(-32002), format!("no {}", r.params.uri), None))
            }
            ClientRequest::ReadResourceRequest(r) => {
                let text = format!("body of {}\u{200b}\n", r.params.uri);
                let contents =
                    json!([{ "uri": r.params.uri, "mimeType": "text/plain", "text": text, "_meta": {"k": 1} }]);
                Ok(ServerResult::CustomResult(CustomResult::new(json!({ "contents": contents }))))
            }
            other => self.base.handle_request(other, cx).await,
        }
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

/// `resources` declared, `listChanged` not advertised.
fn resources_capability() -> ServerCapabilities {
    ServerCapabilities::builder().enable_resources().build()
}

fn templates(prefix: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({ "uriTemplate": format!("mem://{prefix}{i}/{{id}}"), "name": format!("{prefix}{i}") }))
        .collect()
}

fn resources(prefix: &str, n: usize) -> Vec<Value> {
    (0..n).map(|i| json!({ "uri": format!("mem://{prefix}{i}"), "name": format!("{prefix}{i}") })).collect()
}

type Server = RunningService<RoleServer, Recorder>;

/// Serves `book` on one end of a duplex pipe with `capabilities`; `client` does the client side.
async fn serve<C, F>(book: &Arc<Book>, capabilities: ServerCapabilities, client: C) -> (F::Output, Server)
where
    C: FnOnce(tokio::io::DuplexStream) -> F,
    F: Future,
{
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let recorder = Recorder { base: Base(ServerConfig::new(capabilities)), book: book.clone() };
    let server = tokio::spawn(async move { recorder.serve(server_io).await.expect("server handshake") });
    let client = client(client_io).await;
    (client, server.await.unwrap())
}

/// A server connected to `driver` as `name` through `CatalogDriver::connect`.
async fn connect(driver: &CatalogDriver, name: &str, book: &Arc<Book>) -> (Connection, Server) {
    connect_with(driver, name, book, resources_capability()).await
}

async fn connect_with(
    driver: &CatalogDriver,
    name: &str,
    book: &Arc<Book>,
    capabilities: ServerCapabilities,
) -> (Connection, Server) {
    let (conn, server) = serve(book, capabilities, |io| driver.connect(name, io)).await;
    (conn.expect("client handshake"), server)
}

/// A plain rmcp client (the caller manages the connection; the driver gets only the peer).
async fn plain_client(book: &Arc<Book>) -> (RunningService<RoleClient, ()>, Server) {
    let (client, server) = serve(book, resources_capability(), |io| ().serve(io)).await;
    (client.expect("client handshake"), server)
}

/// A driver whose retry timer never fires during a test (retries have tests of their own).
fn driver() -> CatalogDriver {
    let config = RefreshConfig {
        retry_base: Duration::from_secs(3600),
        retry_max: Duration::from_secs(3600),
        ..RefreshConfig::default()
    };
    CatalogDriver::with_config(Limits::default(), config)
}

/// Turns a hang into a failure; not a timing assertion.
async fn guard<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f).await.unwrap_or_else(|_| panic!("stuck: {what}"))
}

async fn next_event(events: &mut broadcast::Receiver<DriverEvent>, pred: impl Fn(&DriverEvent) -> bool) -> DriverEvent {
    guard("waiting for a driver event", async {
        loop {
            let event = events.recv().await.expect("driver events");
            if pred(&event) {
                return event;
            }
        }
    })
    .await
}

fn template_names(driver: &CatalogDriver, server: &str) -> Vec<String> {
    driver.read(|c| c.templates(Some(server))).unwrap().into_iter().map(|t| String::from(t.name)).collect()
}

fn resource_names(driver: &CatalogDriver, server: &str) -> Vec<String> {
    driver.read(|c| c.resources(Some(server))).unwrap().into_iter().map(|r| String::from(r.name)).collect()
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn tool_output(text: &str) -> Value {
    serde_json::from_str(text).expect("the tool returns JSON")
}

fn tool_names(output: &Value) -> Vec<String> {
    output["resourceTemplates"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

// ---------------------------------------------------------------------------------------------
// Cache
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn second_ensure_fresh_is_a_cache_hit_without_any_request() {
    let book = Book::new(templates("t", 5), resources("r", 3), 2);
    let driver = driver();
    let (_conn, _server) = connect(&driver, "docs", &book).await;

    assert_eq!(driver.ensure_fresh("docs").await, Ok(RefreshOutcome::Committed));
    // 3 template pages + 2 resource pages.
    assert_eq!((book.count(TEMPLATES), book.count(RESOURCES)), (3, 2));
    assert_eq!(template_names(&driver, "docs"), names("t", 5));

    assert_eq!(driver.ensure_fresh("docs").await, Ok(RefreshOutcome::CacheHit));
    let output = tool_output(&driver.call_tool("{}").await.unwrap());
    assert_eq!(tool_names(&output), names("t", 5));
    assert_eq!(driver.ensure_all_fresh().await, vec![("docs".to_owned(), Ok(RefreshOutcome::CacheHit))]);
    assert_eq!(book.lists(), 5, "a cache hit sends nothing");

    // An explicit refresh always traverses.
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));
    assert_eq!(book.lists(), 10);
}

#[tokio::test(start_paused = true)]
async fn ttl_expiry_makes_the_next_ensure_traverse_again() {
    let book = Book::new(templates("t", 1), vec![], 10);
    book.ttl_ms.store(1000, Ordering::SeqCst);
    let driver = driver();
    let (_conn, _server) = connect(&driver, "ttl", &book).await;

    assert_eq!(driver.ensure_fresh("ttl").await, Ok(RefreshOutcome::Committed));
    assert_eq!(book.lists(), 2);
    tokio::time::advance(Duration::from_millis(500)).await;
    assert_eq!(driver.ensure_fresh("ttl").await, Ok(RefreshOutcome::CacheHit));
    assert_eq!(book.lists(), 2);

    // Past its ttlMs the floor (minTtl, 10 s) still holds: the pair is ok (the status and the
    // refresher agree) and the next traversal waits.
    tokio::time::advance(Duration::from_millis(600)).await;
    assert_eq!(driver.status("ttl").unwrap().status, Status::Ok);
    assert_eq!(driver.ensure_fresh("ttl").await, Ok(RefreshOutcome::CacheHit));
    assert_eq!(book.lists(), 2);
    // Past the floor the pair is outdated (still listed), never stale; the next ensure traverses.
    tokio::time::advance(Duration::from_secs(9)).await;
    assert_eq!(driver.status("ttl").unwrap().status, Status::Outdated);
    assert_eq!(driver.ensure_fresh("ttl").await, Ok(RefreshOutcome::Committed));
    assert_eq!(book.lists(), 4);
    assert_eq!(driver.status("ttl").unwrap().status, Status::Ok);
}

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_transient_failure_is_retried_by_the_timer_and_recovers() {
    let book = Book::new(templates("t", 2), resources("r", 1), 10);
    book.fail_templates.store(2, Ordering::SeqCst);
    let driver = CatalogDriver::new(Limits::default());
    let (_conn, _server) = connect(&driver, "flaky", &book).await;
    let mut events = driver.subscribe();

    let err = driver.ensure_fresh("flaky").await.unwrap_err();
    assert_eq!(err.code(), "server_error");
    let status = driver.status("flaky").unwrap();
    assert_eq!(status.status, Status::Failed);
    assert_eq!(status.last_error.as_ref().unwrap().code, "server_error");
    // A tool call during the backoff is answered from the catalog: the failure is listed and
    // nothing is sent (the timer is what retries).
    let output = tool_output(&driver.call_tool("{}").await.unwrap());
    assert_eq!(output["failures"][0]["code"], "server_error");
    assert_eq!(book.count(TEMPLATES), 1);

    // The timer retries on its own (the paused clock jumps to it): once more failing, then good.
    let first = next_event(&mut events, |e| matches!(e, DriverEvent::Traversed { .. })).await;
    assert!(matches!(first, DriverEvent::Traversed { disposition: Disposition::Failed, .. }), "{first:?}");
    let failed = next_event(&mut events, |e| matches!(e, DriverEvent::Traversed { .. })).await;
    assert!(matches!(failed, DriverEvent::Traversed { disposition: Disposition::Failed, .. }), "{failed:?}");
    let good = next_event(&mut events, |e| matches!(e, DriverEvent::Traversed { .. })).await;
    assert!(matches!(good, DriverEvent::Traversed { disposition: Disposition::Committed, .. }), "{good:?}");
    let output = tool_output(&driver.call_tool("{}").await.unwrap());
    assert_eq!(tool_names(&output), names("t", 2));
    assert_eq!(output["failures"], json!([]));
    let status = driver.status("flaky").unwrap();
    assert_eq!((status.status, status.last_error), (Status::Ok, None));
    assert_eq!(book.count(TEMPLATES), 3);
}

#[tokio::test]
async fn either_list_failing_keeps_the_last_good_pair() {
    let book = Book::new(templates("old", 2), resources("old-r", 2), 10);
    let driver = driver();
    let (_conn, _server) = connect(&driver, "docs", &book).await;
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));

    // Resources succeed with new items, templates fail: neither new list is applied.
    book.set_templates(templates("new", 3));
    book.set_resources(resources("new-r", 3));
    book.fail_templates.store(1, Ordering::SeqCst);
    let before = book.count(RESOURCES);
    let err = driver.refresh("docs").await.unwrap_err();
    assert_eq!(err.code(), "server_error");
    assert_eq!(book.count(RESOURCES), before + 1, "resources were listed (and answered) this time");
    assert_eq!(template_names(&driver, "docs"), names("old", 2));
    assert_eq!(resource_names(&driver, "docs"), names("old-r", 2));
    let status = driver.status("docs").unwrap();
    assert_eq!(status.status, Status::Stale);
    assert_eq!(status.last_error.unwrap().code, "server_error");
    // Rendered from the catalog as it is, the tool lists the last good templates and the failure.
    let output = tool_output(&driver.read(|c| mcplens::tool::call(c, r#"{"server":"docs"}"#)).unwrap());
    assert_eq!(tool_names(&output), names("old", 2));
    assert_eq!(output["failures"][0]["server"], "docs");
    assert_eq!(output["failures"][0]["code"], "server_error");

    // Resources fail first: the templates are not even asked for, and the old pair stays.
    book.fail_resources.store(1, Ordering::SeqCst);
    let templates_before = book.count(TEMPLATES);
    assert_eq!(driver.refresh("docs").await.unwrap_err().code(), "server_error");
    assert_eq!(book.count(TEMPLATES), templates_before);
    assert_eq!(template_names(&driver, "docs"), names("old", 2));
    assert_eq!(resource_names(&driver, "docs"), names("old-r", 2));

    // And the next good refresh replaces both at once.
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));
    assert_eq!(template_names(&driver, "docs"), names("new", 3));
    assert_eq!(resource_names(&driver, "docs"), names("new-r", 3));
    assert_eq!(driver.status("docs").unwrap().status, Status::Ok);
}

// ---------------------------------------------------------------------------------------------
// Ordering: an older traversal never overwrites a newer state
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn list_changed_during_a_slow_refresh_discards_it_and_refreshes_once_more() {
    let book = Book::new(templates("old", 2), resources("r", 1), 10);
    let driver = driver();
    let (_conn, server) = connect(&driver, "docs", &book).await;
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));
    let mut events = driver.subscribe();

    // A refresh starts and its templates request is held (it will answer with the OLD list).
    book.hold_next(TEMPLATES);
    let slow = tokio::spawn({
        let driver = driver.clone();
        async move { driver.refresh("docs").await }
    });
    guard("the held request", book.arrived.notified()).await;

    // Meanwhile the server changes its templates and says so.
    book.set_templates(templates("new", 3));
    server.peer().notify_resource_list_changed().await.unwrap();
    let event = next_event(&mut events, |e| matches!(e, DriverEvent::ListChanged { .. })).await;
    assert_eq!(event, DriverEvent::ListChanged { server: "docs".to_owned(), decision: ListChanged::Queued });
    // The last good pair is still listed, marked outdated, while the refresh runs.
    assert_eq!(driver.status("docs").unwrap().status, Status::Outdated);
    assert_eq!(template_names(&driver, "docs"), names("old", 2));

    book.release.notify_one();
    assert_eq!(guard("the slow refresh", slow).await.unwrap(), Ok(RefreshOutcome::Committed));

    // The slow (old) result was discarded, and exactly one more refresh ran and committed.
    let traversed = |e: &DriverEvent| matches!(e, DriverEvent::Traversed { .. });
    let first = next_event(&mut events, traversed).await;
    assert!(matches!(first, DriverEvent::Traversed { disposition: Disposition::Discarded, .. }), "{first:?}");
    let second = next_event(&mut events, traversed).await;
    assert!(matches!(second, DriverEvent::Traversed { disposition: Disposition::Committed, .. }), "{second:?}");
    assert_eq!(template_names(&driver, "docs"), names("new", 3));
    assert_eq!(book.count(TEMPLATES), 3);
}

#[tokio::test]
async fn a_refresh_on_a_replaced_peer_cannot_overwrite_the_new_peers_result() {
    let old_book = Book::new(templates("old", 2), vec![], 10);
    let new_book = Book::new(templates("new", 3), vec![], 10);
    let (old_client, _old_server) = plain_client(&old_book).await;
    let (new_client, _new_server) = plain_client(&new_book).await;
    let driver = driver();
    driver.add_server("docs", old_client.peer().clone());

    old_book.hold_next(TEMPLATES);
    let slow = tokio::spawn({
        let driver = driver.clone();
        async move { driver.refresh("docs").await }
    });
    guard("the held request", old_book.arrived.notified()).await;

    // Reconfiguration: a new peer for the same server. The waiting caller is served over it (one
    // traversal, which a second caller joins).
    driver.add_server("docs", new_client.peer().clone());
    assert_eq!(driver.status("docs").unwrap().status, Status::Unknown);
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));
    assert_eq!(guard("the first caller", slow).await.unwrap(), Ok(RefreshOutcome::Committed));
    assert_eq!(template_names(&driver, "docs"), names("new", 3));
    assert_eq!(new_book.lists(), 2);

    // The old peer's traversal finishes afterwards, successfully, with the old list: ignored.
    let mut events = driver.subscribe();
    old_book.release.notify_one();
    let late = next_event(&mut events, |e| matches!(e, DriverEvent::Traversed { .. })).await;
    assert!(matches!(late, DriverEvent::Traversed { disposition: Disposition::Ignored, .. }), "{late:?}");
    assert_eq!(template_names(&driver, "docs"), names("new", 3));
    assert_eq!(driver.status("docs").unwrap().status, Status::Ok);
    assert_eq!(driver.servers(), ["docs"]);
}

// ---------------------------------------------------------------------------------------------
// list_changed
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn list_changed_storm_during_a_refresh_yields_exactly_one_more_refresh() {
    let book = Book::new(templates("t", 1), resources("r", 1), 10);
    let driver = driver();
    let (conn, server) = connect(&driver, "storm", &book).await;
    // The server never advertised listChanged; its notifications count all the same.
    let capabilities = &conn.peer().peer_info().unwrap().capabilities;
    assert_eq!(capabilities.resources.as_ref().unwrap().list_changed, None);
    let mut events = driver.subscribe();

    book.hold_next(RESOURCES);
    let running = tokio::spawn({
        let driver = driver.clone();
        async move { driver.refresh("storm").await }
    });
    guard("the held request", book.arrived.notified()).await;

    for _ in 0..50 {
        server.peer().notify_resource_list_changed().await.unwrap();
    }
    let mut decisions = Vec::new();
    while decisions.len() < 50 {
        if let DriverEvent::ListChanged { decision, .. } =
            next_event(&mut events, |e| matches!(e, DriverEvent::ListChanged { .. })).await
        {
            decisions.push(decision);
        }
    }
    assert_eq!(decisions[0], ListChanged::Queued);
    assert!(decisions[1..].iter().all(|d| *d == ListChanged::AlreadyQueued), "{decisions:?}");
    // Still only the held traversal's first request.
    assert_eq!(book.lists(), 1);

    book.release.notify_one();
    assert_eq!(guard("the refresh", running).await.unwrap(), Ok(RefreshOutcome::Committed));
    // The held traversal (2 requests) and exactly one more (2 requests).
    assert_eq!((book.count(RESOURCES), book.count(TEMPLATES)), (2, 2));
    let status = driver.status("storm").unwrap();
    assert_eq!((status.status, status.refreshing, status.generation), (Status::Ok, false, 1));
    // Nothing else is pending.
    assert_eq!(driver.ensure_fresh("storm").await, Ok(RefreshOutcome::CacheHit));
    assert_eq!(book.lists(), 4);
}

#[tokio::test]
async fn list_changed_while_idle_refreshes_in_the_background() {
    let book = Book::new(templates("old", 1), vec![], 10);
    let driver = driver();
    let (_conn, server) = connect(&driver, "docs", &book).await;
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));
    let mut events = driver.subscribe();

    book.set_templates(templates("new", 2));
    server.peer().notify_resource_list_changed().await.unwrap();
    let event = next_event(&mut events, |e| matches!(e, DriverEvent::ListChanged { .. })).await;
    assert_eq!(event, DriverEvent::ListChanged { server: "docs".to_owned(), decision: ListChanged::RefreshNow });
    let done = next_event(&mut events, |e| matches!(e, DriverEvent::Traversed { .. })).await;
    let DriverEvent::Traversed { disposition, error, .. } = done else { unreachable!() };
    assert!(disposition == Disposition::Committed && error.is_none());
    assert_eq!(template_names(&driver, "docs"), names("new", 2));
    assert_eq!(book.count(TEMPLATES), 2);
}

// ---------------------------------------------------------------------------------------------
// Lifecycle
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn connection_close_clears_that_servers_entries_only() {
    let a = Book::new(templates("a", 2), resources("ar", 1), 10);
    let b = Book::new(templates("b", 2), resources("br", 1), 10);
    let driver = driver();
    let (_conn_a, _server_a) = connect(&driver, "a", &a).await;
    let (conn_b, server_b) = connect(&driver, "b", &b).await;
    driver.ensure_all_fresh().await;
    assert_eq!(template_names(&driver, "b"), names("b", 2));
    let mut events = driver.subscribe();

    // The server goes away.
    server_b.cancel().await.unwrap();
    guard("the close", conn_b.closed()).await;
    assert!(conn_b.is_closed());
    let event = next_event(&mut events, |e| matches!(e, DriverEvent::Invalidated { .. })).await;
    assert_eq!(event, DriverEvent::Invalidated { server: "b".to_owned(), reason: Reason::ConnectionClosed });
    assert_eq!(driver.status("b").unwrap().status, Status::Unknown);
    assert!(template_names(&driver, "b").is_empty() && resource_names(&driver, "b").is_empty());
    assert_eq!(driver.diagnostics("b"), None);

    // The other server is untouched; the closed one now fails fast, listed as a failure.
    assert_eq!(template_names(&driver, "a"), names("a", 2));
    let output = tool_output(&driver.call_tool("{}").await.unwrap());
    assert_eq!(tool_names(&output), names("a", 2));
    assert_eq!(
        output["failures"],
        json!([{ "server": "b", "code": "transport_error", "message": "server \"b\": no connection is attached" }])
    );
    assert_eq!(a.lists(), 2);
}

#[tokio::test]
async fn closing_a_connection_from_the_client_side_invalidates_too() {
    let book = Book::new(templates("t", 1), vec![], 10);
    let driver = driver();
    let (conn, server) = connect(&driver, "docs", &book).await;
    driver.ensure_fresh("docs").await.unwrap();

    conn.close();
    guard("the close", conn.closed()).await;
    assert_eq!(driver.status("docs").unwrap().status, Status::Unknown);
    // The server saw the connection end.
    guard("the server's end", server.waiting()).await.unwrap();
}

#[tokio::test]
async fn reconfiguration_closes_the_old_connection_without_clearing_the_new_one() {
    let old_book = Book::new(templates("old", 1), vec![], 10);
    let new_book = Book::new(templates("new", 2), vec![], 10);
    let driver = driver();
    let (old_conn, old_server) = connect(&driver, "docs", &old_book).await;
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));
    let mut events = driver.subscribe();

    // The same server name, a new connection: a configuration change.
    let (_new_conn, _new_server) = connect(&driver, "docs", &new_book).await;
    let event = next_event(&mut events, |e| matches!(e, DriverEvent::Invalidated { .. })).await;
    assert_eq!(event, DriverEvent::Invalidated { server: "docs".to_owned(), reason: Reason::ConfigurationChanged });
    assert_eq!(driver.status("docs").unwrap().status, Status::Unknown);
    assert_eq!(driver.refresh("docs").await, Ok(RefreshOutcome::Committed));

    // The driver closed the old connection; its closure is not the new connection's.
    guard("the old connection's end", old_server.waiting()).await.unwrap();
    guard("the old close", old_conn.closed()).await;
    assert_eq!(driver.status("docs").unwrap().status, Status::Ok);
    assert_eq!(template_names(&driver, "docs"), names("new", 2));
    assert_eq!(driver.servers(), ["docs"]);
    assert_eq!(old_book.lists(), 2);
}

#[tokio::test]
async fn remove_forgets_the_server_and_closes_its_connection() {
    let a = Book::new(templates("a", 1), vec![], 10);
    let b = Book::new(templates("b", 1), vec![], 10);
    let driver = driver();
    let (_conn_a, _server_a) = connect(&driver, "a", &a).await;
    let (conn_b, server_b) = connect(&driver, "b", &b).await;
    driver.ensure_all_fresh().await;

    assert!(driver.remove("b"));
    assert!(!driver.remove("b"));
    assert_eq!(driver.servers(), ["a"]);
    assert_eq!(driver.servers(), ["a"]);
    guard("the server's end", server_b.waiting()).await.unwrap();
    guard("the close", conn_b.closed()).await;

    let output = tool_output(&driver.call_tool("{}").await.unwrap());
    assert_eq!(tool_names(&output), names("a", 1));
    assert_eq!(driver.ensure_fresh("b").await.unwrap_err().code(), "unknown_server");
    // The old connection's closure did not touch anything.
    assert_eq!(driver.status("a").unwrap().status, Status::Ok);
}

#[tokio::test]
async fn remove_during_a_refresh_discards_it() {
    let book = Book::new(templates("t", 2), vec![], 10);
    let (client, _server) = plain_client(&book).await;
    let driver = driver();
    driver.add_server("docs", client.peer().clone());

    book.hold_next(TEMPLATES);
    let running = tokio::spawn({
        let driver = driver.clone();
        async move { driver.refresh("docs").await }
    });
    guard("the held request", book.arrived.notified()).await;
    assert!(driver.remove("docs"));
    // The connection stays up (the caller owns it): the traversal completes with data.
    book.release.notify_one();
    assert_eq!(guard("the refresh", running).await.unwrap(), Ok(RefreshOutcome::Discarded));
    assert_eq!(book.count(TEMPLATES), 1);
    assert!(driver.servers().is_empty(), "a discarded refresh does not re-register the server");
    assert_eq!(driver.status("docs").unwrap_err().code(), "unknown_server");
}

// ---------------------------------------------------------------------------------------------
// Several servers and the tool
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn one_broken_server_never_touches_another() {
    let good = Book::new(templates("g", 2), resources("gr", 1), 10);
    let broken = Book::new(templates("b", 2), resources("br", 1), 10);
    let tools_only = Book::new(templates("x", 1), vec![], 10);
    let driver = driver();
    let (_c1, _s1) = connect(&driver, "good", &good).await;
    let (_c2, _s2) = connect(&driver, "broken", &broken).await;
    let (_c3, _s3) =
        connect_with(&driver, "tools", &tools_only, ServerCapabilities::builder().enable_tools().build()).await;

    // Both good first; then "broken" breaks and is refreshed.
    driver.ensure_all_fresh().await;
    broken.always_fail();
    driver.invalidate("broken", Reason::Other);
    let results = driver.ensure_all_fresh().await;
    assert_eq!(results[0], ("good".to_owned(), Ok(RefreshOutcome::CacheHit)));
    assert_eq!(results[1].1.as_ref().unwrap_err().code(), "server_error");
    assert_eq!(results[2], ("tools".to_owned(), Ok(RefreshOutcome::CacheHit)));

    assert_eq!(driver.status("good").unwrap().status, Status::Ok);
    assert_eq!(driver.status("broken").unwrap().status, Status::Failed);
    assert_eq!(driver.status("tools").unwrap().status, Status::Unsupported);
    assert_eq!(tools_only.lists(), 0, "a server without the resources capability is never asked");
    let output = tool_output(&driver.call_tool("{}").await.unwrap());
    assert_eq!(tool_names(&output), names("g", 2));
    assert_eq!(output["failures"].as_array().unwrap().len(), 1);
    assert_eq!(output["failures"][0]["server"], "broken");
    assert_eq!(output["failures"][0]["code"], "server_error");
    assert_eq!(output["total"], 2);
    // Byte-identical output for the same catalog.
    assert_eq!(driver.call_tool("{}").await.unwrap(), driver.call_tool("{}").await.unwrap());
}

#[tokio::test]
async fn server_filter_lists_and_refreshes_only_that_server() {
    let a = Book::new(templates("a", 2), vec![], 10);
    let b = Book::new(templates("b", 3), vec![], 10);
    let driver = driver();
    let (_ca, _sa) = connect(&driver, "a", &a).await;
    let (_cb, _sb) = connect(&driver, "b", &b).await;

    let output = tool_output(&driver.call_tool(r#"{"server":"b"}"#).await.unwrap());
    assert_eq!(tool_names(&output), names("b", 3));
    assert!(output["resourceTemplates"].as_array().unwrap().iter().all(|t| t["server"] == "b"));
    assert_eq!(output["total"], 3);
    assert_eq!(a.lists(), 0, "the filter refreshes only the selected server");
    assert_eq!(b.lists(), 2);

    // Registration order, paging across servers.
    let output = tool_output(&driver.call_tool(r#"{"offset":1,"limit":2}"#).await.unwrap());
    assert_eq!(tool_names(&output), ["a1", "b0"]);
    assert_eq!(output["nextOffset"], 3);
}

#[tokio::test]
async fn missing_server_names_the_available_servers_and_sends_nothing() {
    let a = Book::new(templates("a", 1), vec![], 10);
    let b = Book::new(templates("b", 1), vec![], 10);
    let driver = driver();
    // Registered b first: the list of available servers is sorted anyway.
    let (_cb, _sb) = connect(&driver, "b", &b).await;
    let (_ca, _sa) = connect(&driver, "a", &a).await;

    let err = driver.call_tool(r#"{"server":"nope"}"#).await.unwrap_err();
    assert_eq!(err.code(), "unknown_server");
    assert_eq!(err.to_string(), "Server \"nope\" not found. Available servers: a, b");
    let err = driver.refresh("nope").await.unwrap_err();
    assert_eq!(err.code(), "unknown_server");
    assert_eq!(err.to_string(), "Server \"nope\" not found. Available servers: a, b");
    assert_eq!(driver.call_tool(r#"{"limit":0}"#).await.unwrap_err().code(), "invalid_argument");
    assert_eq!(a.lists() + b.lists(), 0);
}

#[tokio::test]
async fn output_over_the_cap_is_an_error_not_a_truncation() {
    let description = "d".repeat(150);
    let items: Vec<Value> = (0..1000)
        .map(|i| json!({ "uriTemplate": format!("mem://t{i}/{{id}}"), "name": format!("t{i}"), "description": description }))
        .collect();
    let book = Book::new(items, vec![], 100);
    let driver = driver();
    let (_conn, _server) = connect(&driver, "big", &book).await;

    let err = driver.call_tool(r#"{"limit":1000}"#).await.unwrap_err();
    assert_eq!(err.code(), "output_too_large");
    assert!(err.to_string().contains("Filter by \"server\" or page"), "{err}");
    let output = driver.call_tool(r#"{"limit":100}"#).await.unwrap();
    assert!(output.chars().count() <= mcplens::tool::MAX_OUTPUT_CHARS);
    let output = tool_output(&output);
    assert_eq!(output["resourceTemplates"].as_array().unwrap().len(), 100);
    assert_eq!((output["total"].as_u64(), output["nextOffset"].as_u64()), (Some(1000), Some(100)));
    assert_eq!(book.lists(), 11, "one traversal: 10 template pages and 1 resource page");
}

// ---------------------------------------------------------------------------------------------
// No automatic reads
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn discovery_and_rendering_never_read_complete_or_expand() {
    let items = vec![
        json!({ "uriTemplate": "file:///{path}", "name": "files" }),
        json!({ "uriTemplate": "db://{table}/{id}", "name": "rows", "description": "Rows" }),
    ];
    let book = Book::new(items, resources("r", 2), 1);
    let driver = driver();
    let (conn, server) = connect(&driver, "docs", &book).await;

    driver.ensure_all_fresh().await;
    for input in ["{}", "null", r#"{"server":"docs"}"#, r#"{"offset":1,"limit":1}"#] {
        driver.call_tool(input).await.unwrap();
    }
    driver.refresh("docs").await.unwrap();
    let mut events = driver.subscribe();
    server.peer().notify_resource_list_changed().await.unwrap();
    next_event(&mut events, |e| matches!(e, DriverEvent::Traversed { .. })).await;
    driver.call_tool("{}").await.unwrap();
    conn.close();
    guard("the close", conn.closed()).await;

    let requests = book.requests();
    let allowed = ["initialize", RESOURCES, TEMPLATES];
    let unexpected: Vec<&String> = requests.iter().filter(|m| !allowed.contains(&m.as_str())).collect();
    assert!(unexpected.is_empty(), "unexpected requests: {unexpected:?}");
    for forbidden in ["resources/read", "completion/complete", "resources/subscribe"] {
        assert!(!requests.iter().any(|m| m == forbidden), "{forbidden} was sent");
    }
    assert_eq!(requests.iter().filter(|m| *m == "initialize").count(), 1);
    // Three traversals: 2 template pages + 2 resource pages each.
    assert_eq!(book.lists(), 12);
}

/// `ReadMcpResourceTool` over rmcp: a filled-in template is read and rendered by the core; an
/// unlisted URI is refused before anything is sent; a server's -32002 is a tool error.
#[tokio::test]
async fn the_read_tool_reads_over_the_current_connection() {
    let book = Book::new(templates("t", 1), resources("r", 1), 10);
    let driver = driver();
    let (_conn, _server) = connect(&driver, "docs", &book).await;
    driver.ensure_all_fresh().await;
    let config = mcplens::tool::ReadConfig::default();

    let output = driver.call_read_tool(r#"{"server":"docs","uri":"mem://t0/7"}"#, &config).await.unwrap();
    assert_eq!(
        output,
        "{\"removedChars\":1,\"server\":\"docs\",\"uri\":\"mem://t0/7\",\"contents\":[{\"uri\":\"mem://t0/7\",\"mimeType\":\"text/plain\",\"textChars\":19}]}\n--- content 1 text (19 of 19 characters) ---\nbody of mem://t0/7\n"
    );
    let output = driver.call_read_tool(r#"{"server":"docs","uri":"mem://r0"}"#, &config).await.unwrap();
    assert!(output.contains("body of mem://r0"), "{output}");

    let reads = book.count("resources/read");
    let err = driver.call_read_tool(r#"{"server":"docs","uri":"mem://elsewhere"}"#, &config).await.unwrap_err();
    assert_eq!((err.code().as_str(), err.server()), ("unlisted_uri", Some("docs")));
    assert!(!err.to_string().contains("elsewhere"), "a refusal never echoes the URI: {err}");
    assert_eq!(book.count("resources/read"), reads, "nothing sent for a refused URI");

    let any = mcplens::tool::ReadConfig { any_uri: true, ..config };
    let err = driver.call_read_tool(r#"{"server":"docs","uri":"mem://x/missing"}"#, &any).await.unwrap_err();
    assert_eq!((err.code().as_str(), err.rpc_code()), ("server_error", Some(-32002)));
    assert!(err.to_string().ends_with("JSON-RPC error -32002 (resource not found)."), "{err}");
}

/// The first call is a read of a URI the model knows: the read makes the server current before it
/// authorizes (as the listings do), so a listed URI reads at once.
#[tokio::test]
async fn a_read_before_any_listing_makes_the_server_current_first() {
    let book = Book::new(templates("t", 1), resources("r", 1), 10);
    let driver = driver();
    let (_conn, _server) = connect(&driver, "docs", &book).await;
    let config = mcplens::tool::ReadConfig::default();
    let output = driver.call_read_tool(r#"{"server":"docs","uri":"mem://r0"}"#, &config).await.unwrap();
    assert!(output.contains("body of mem://r0"), "{output}");
    assert_eq!(book.count("resources/read"), 1);
    assert_eq!(driver.status("docs").unwrap().status, Status::Ok);
}

/// The tool's output is what the catalog holds, from a peer the caller manages.
#[tokio::test]
async fn add_server_with_a_caller_managed_peer_works_like_connect() {
    let book = Book::new(templates("t", 2), vec![], 10);
    let (client, _server) = plain_client(&book).await;
    let peer: Peer<RoleClient> = client.peer().clone();
    let driver = driver();
    driver.add_server("docs", peer);
    let output = driver.call_tool("{}").await.unwrap();
    assert_eq!(
        output,
        r#"{"resourceTemplates":[{"uriTemplate":"mem://t0/{id}","name":"t0","server":"docs"},{"uriTemplate":"mem://t1/{id}","name":"t1","server":"docs"}],"failures":[],"total":2}"#
    );
    let diagnostics = driver.diagnostics("docs").unwrap();
    assert_eq!((diagnostics.templates.items, diagnostics.resources.items), (2, 0));
}

// ---------------------------------------------------------------------------------------------
// Tool visibility
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn visible_tools_follow_the_attached_servers_capabilities() {
    let docs = Book::new(templates("t", 1), vec![], 10);
    let tools_only = Book::new(vec![], vec![], 10);
    let driver = driver();
    assert!(driver.read(|c| c.visible_tools()).is_empty());
    let tools = ServerCapabilities::builder().enable_tools().build();
    let (_c1, _s1) = connect_with(&driver, "tools", &tools_only, tools).await;
    assert!(driver.read(|c| c.visible_tools()).is_empty(), "a server without resources shows no listing tool");

    let seen = driver.read(|c| c.generation());
    let (conn, _s2) = connect(&driver, "docs", &docs).await;
    assert_ne!(driver.read(|c| c.generation()), seen, "the host learns of the change from the generation");
    assert_eq!(
        driver.read(|c| c.visible_tools()),
        ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"]
    );
    assert_eq!(docs.lists(), 0, "known from the handshake, before any traversal");

    let seen = driver.read(|c| c.generation());
    conn.close();
    guard("the close", conn.closed()).await;
    assert_ne!(driver.read(|c| c.generation()), seen);
    assert!(driver.read(|c| c.visible_tools()).is_empty(), "a closed connection no longer counts");
}

/// A server's `roots/list` (and `elicitation/create`) to a client that does not declare them is
/// answered -32601, as the SDK clients answer (rmcp's default answers an empty list): through the
/// driver's connection and a plain [`DeclaredClient`]; a client that declares roots gets the
/// empty list.
#[tokio::test]
#[allow(deprecated)] // roots: SEP-2577 deprecates them; earlier revisions' servers still ask
async fn requests_the_client_does_not_declare_are_method_not_found() {
    use mcplens::rmcp::DeclaredClient;
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
    let not_found = |r: Result<rmcp::model::ListRootsResult, rmcp::ServiceError>| match r {
        Err(rmcp::ServiceError::McpError(e)) => e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        _ => false,
    };
    let book = Book::new(templates("t", 1), vec![], 10);
    let driver = driver();
    let (_conn, server) = connect(&driver, "docs", &book).await;
    assert!(not_found(guard("roots/list", server.peer().list_roots()).await), "the driver's connection");

    let (client, server) = serve(&book, resources_capability(), |io| DeclaredClient::default().serve(io)).await;
    let _client = client.expect("client handshake");
    assert!(not_found(guard("roots/list", server.peer().list_roots()).await), "a plain DeclaredClient");

    let roots = ClientCapabilities::builder().enable_roots().build();
    let declared = DeclaredClient(ClientConfig::new(roots, Implementation::new("t", "1")));
    let (client, server) = serve(&book, resources_capability(), |io| declared.serve(io)).await;
    let _client = client.expect("client handshake");
    let listed = guard("roots/list", server.peer().list_roots()).await.expect("declared: answered");
    assert!(listed.roots.is_empty());
}
