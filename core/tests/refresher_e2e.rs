//! End to end over stdio: the rmcp [`CatalogDriver`] against a real rmcp server in a child
//! process — this test binary, re-executed as the server (`harness = false`: `main` serves when
//! `MCPLENS_E2E_LOG` is set, else runs the scenarios). The issue's (a)–(e):
//!
//! (a) list_changed, then the next traversal fails: the previous listing is still served,
//!     `stale`, with the failure in the tool output; a reader polling the catalog during every
//!     refresh never sees the listing emptied;
//! (b) a second connection under the same name: the first one's listing is gone at once, its
//!     later list_changed and close change nothing, the second one's listing is served;
//! (c) ten concurrent `refresh()` calls: exactly one traversal pair;
//! (d) every server's own request log (each scenario's): no `resources/read`,
//!     `completion/complete`, `tools/call` or `prompts/get` — only the handshake, the two lists,
//!     `subscriptions/listen` and the test's own `test/control` requests;
//! (e) a server failing with a transient error is retried on the backoff schedule and recovers;
//! plus a 2026-07-28 connection, where the driver opens `subscriptions/listen`.
//!
//! The server is steered by the test's own `test/control` requests (a custom method, so the log
//! shows exactly what the catalog sent). No assertion is about time.

use std::collections::VecDeque;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcplens::catalog::{Disposition, Epoch, ListChanged, Notifications, Reason, RefreshConfig, Status};
use mcplens::discovery::Limits;
use mcplens::rmcp::{CatalogDriver, DriverEvent, RefreshOutcome};
use rmcp::model::{
    ClientNotification, ClientRequest, CustomRequest, CustomResult, ErrorCode, ErrorData, ProtocolVersion,
    ServerCapabilities, ServerConfig, ServerNotification, ServerResult, SubscriptionFilter,
};
use rmcp::service::SubscriptionSink;
use rmcp::service::{serve_client_with_lifecycle, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, Peer, RoleClient, RoleServer, ServerHandler, Service, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::broadcast;

const LOG_ENV: &str = "MCPLENS_E2E_LOG";
/// How the child server treats change notifications: "" (advertises `listChanged`, serves
/// `subscriptions/listen`), "unadvertised" (no `listChanged`, and `ttlMs: 0` on every page, as
/// Python `mcp` 2.3 and fastmcp 4 servers), "method_not_found" (advertises it, answers the
/// listen with -32601).
const MODE_ENV: &str = "MCPLENS_E2E_MODE";
const PAGE: usize = 2;

// ---------------------------------------------------------------------------------------------
// The server (child process)
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Book {
    templates: usize,
    resources: usize,
    /// What the next `resources/list` requests answer: "error" (JSON-RPC -32603) or "malformed".
    fail: VecDeque<String>,
    /// The 2026-07-28 `subscriptions/listen` stream, once opened.
    sink: Option<SubscriptionSink>,
    /// Ends that stream (its request answered) while the connection stays.
    end_listen: Option<tokio::sync::oneshot::Sender<()>>,
}

struct TestServer {
    log: PathBuf,
    book: Arc<Mutex<Book>>,
    inner: Listener,
}

/// The rmcp `ServerHandler` part: the handshake, `server/discover` and `subscriptions/listen`.
struct Listener {
    book: Arc<Mutex<Book>>,
    mode: String,
}

impl ServerHandler for Listener {
    fn get_info(&self) -> ServerConfig {
        let capabilities = match self.mode.as_str() {
            "unadvertised" => ServerCapabilities::builder().enable_resources().build(),
            _ => ServerCapabilities::builder().enable_resources().enable_resources_list_changed().build(),
        };
        ServerConfig::new(capabilities)
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let (end, ended) = tokio::sync::oneshot::channel();
        {
            let mut book = self.book.lock().unwrap();
            book.sink = Some(context.sink().clone());
            book.end_listen = Some(end);
        }
        tokio::select! {
            () = context.cancelled() => {}
            _ = ended => self.book.lock().unwrap().sink = None,
        }
        Ok(())
    }
}

impl TestServer {
    fn record(&self, method: &str) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("the log opens");
        writeln!(f, "{method}").expect("the log is writable");
    }

    fn list(&self, key: &str, cursor: Option<String>) -> Result<ServerResult, ErrorData> {
        let (count, fail) = {
            let mut book = self.book.lock().unwrap();
            let fail = if key == "resources" && cursor.is_none() { book.fail.pop_front() } else { None };
            (if key == "resources" { book.resources } else { book.templates }, fail)
        };
        match fail.as_deref() {
            Some("error") => return Err(ErrorData::new(ErrorCode(-32603), "scripted failure", None)),
            Some(_) => return Ok(ServerResult::CustomResult(CustomResult::new(json!({ key: "not a list" })))),
            None => {}
        }
        let start: usize = cursor.map_or(0, |c| c.parse().expect("a cursor we issued"));
        let end = (start + PAGE).min(count);
        let items: Vec<Value> = (start..end)
            .map(|i| match key {
                "resources" => json!({ "uri": format!("mem://r{i}"), "name": format!("r{i}") }),
                _ => json!({ "uriTemplate": format!("mem://t{i}/{{id}}"), "name": format!("t{i}") }),
            })
            .collect();
        let mut page = json!({ key: items });
        if self.inner.mode == "unadvertised" {
            page["ttlMs"] = json!(0);
        }
        if end < count {
            page["nextCursor"] = json!(end.to_string());
        }
        Ok(ServerResult::CustomResult(CustomResult::new(page)))
    }

    async fn control(&self, params: Value, peer: Peer<RoleServer>) -> Result<ServerResult, ErrorData> {
        let sink = {
            let mut book = self.book.lock().unwrap();
            if let Some(n) = params["templates"].as_u64() {
                book.templates = n as usize;
            }
            if let Some(n) = params["resources"].as_u64() {
                book.resources = n as usize;
            }
            for f in params["fail"].as_array().into_iter().flatten() {
                book.fail.push_back(f.as_str().unwrap().to_owned());
            }
            if params["endListen"] == true {
                let _ = book.end_listen.take().expect("a listen stream is open").send(());
            }
            book.sink.clone()
        };
        if params["notify"] == true {
            let sent = match sink {
                Some(sink) => sink
                    .send(ServerNotification::ResourceListChangedNotification(Default::default()))
                    .await
                    .map_err(|e| format!("{e:?}")),
                None => peer.notify_resource_list_changed().await.map_err(|e| format!("{e:?}")),
            };
            sent.map_err(|e| ErrorData::new(ErrorCode(-32603), e, None))?;
        }
        let listening = self.book.lock().unwrap().sink.is_some();
        Ok(ServerResult::CustomResult(CustomResult::new(json!({ "listening": listening }))))
    }
}

impl Service<RoleServer> for TestServer {
    async fn handle_request(
        &self,
        request: ClientRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        self.record(request.method());
        match request {
            ClientRequest::ListResourcesRequest(r) => self.list("resources", r.params.and_then(|p| p.cursor)),
            ClientRequest::ListResourceTemplatesRequest(r) => {
                self.list("resourceTemplates", r.params.and_then(|p| p.cursor))
            }
            ClientRequest::CustomRequest(CustomRequest { method, params, .. }) if method == "test/control" => {
                self.control(params.unwrap_or_default(), cx.peer.clone()).await
            }
            // Refused before any acknowledgement, as a server without the method answers.
            ClientRequest::SubscriptionsListenRequest(_) if self.inner.mode == "method_not_found" => {
                Err(ErrorData::new(ErrorCode(-32601), "Method not found", None))
            }
            other => self.inner.handle_request(other, cx).await,
        }
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        cx: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.handle_notification(notification, cx).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.inner)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.inner)
    }
}

fn serve(log: PathBuf) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let book = Arc::new(Mutex::new(Book::default()));
        let mode = std::env::var(MODE_ENV).unwrap_or_default();
        let server = TestServer { log, book: book.clone(), inner: Listener { book, mode } };
        let running = server.serve((tokio::io::stdin(), tokio::io::stdout())).await.expect("the handshake");
        let _ = running.waiting().await;
    });
}

// ---------------------------------------------------------------------------------------------
// The client side
// ---------------------------------------------------------------------------------------------

/// One server child process and its request log.
struct Child {
    log: PathBuf,
    mode: &'static str,
}

impl Child {
    fn new(name: &str) -> Child {
        Child::with_mode(name, "")
    }

    fn with_mode(name: &str, mode: &'static str) -> Child {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("refresher_e2e");
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join(format!("{name}.log"));
        let _ = std::fs::remove_file(&log);
        Child { log, mode }
    }

    fn transport(&self) -> TokioChildProcess {
        let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
        command.env(LOG_ENV, &self.log).env(MODE_ENV, self.mode);
        let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("spawn");
        transport
    }

    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    fn count(&self, method: &str) -> usize {
        self.requests().iter().filter(|m| *m == method).count()
    }

    /// (d): only the handshake, the two lists, `subscriptions/listen` and the test's own control.
    fn assert_only_discovery(&self) {
        let requests = self.requests();
        let allowed = [
            "initialize",
            "server/discover",
            "resources/list",
            "resources/templates/list",
            "subscriptions/listen",
            "test/control",
        ];
        let unexpected: Vec<&String> = requests.iter().filter(|m| !allowed.contains(&m.as_str())).collect();
        assert!(unexpected.is_empty(), "{}: unexpected requests {unexpected:?}", self.log.display());
        for forbidden in ["resources/read", "completion/complete", "tools/call", "prompts/get"] {
            assert!(!requests.iter().any(|m| m == forbidden), "{forbidden} was sent");
        }
    }
}

async fn control(peer: &Peer<RoleClient>, params: Value) -> Value {
    let result = peer
        .send_request(ClientRequest::CustomRequest(CustomRequest::new("test/control", Some(params))))
        .await
        .expect("test/control");
    serde_json::to_value(result).unwrap()
}

async fn next_event(events: &mut broadcast::Receiver<DriverEvent>, pred: impl Fn(&DriverEvent) -> bool) -> DriverEvent {
    loop {
        let event = events.recv().await.expect("driver events");
        if pred(&event) {
            return event;
        }
    }
}

fn traversed(disposition: Disposition) -> impl Fn(&DriverEvent) -> bool {
    move |e| matches!(e, DriverEvent::Traversed { disposition: d, .. } if *d == disposition)
}

fn template_count(driver: &CatalogDriver, server: &str) -> usize {
    driver.read(|c| c.templates(Some(server))).unwrap().len()
}

/// A driver whose timed retries never fire unless a scenario wants them.
fn driver(retry: Duration) -> CatalogDriver {
    let config = RefreshConfig { retry_base: retry, retry_max: retry * 8, ..RefreshConfig::default() };
    CatalogDriver::with_config(Limits::default(), config)
}

const NEVER: Duration = Duration::from_secs(3600);

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/// (a)
async fn list_changed_then_failure_keeps_the_listing() {
    let child = Child::new("a");
    let driver = driver(NEVER);
    let conn = driver.connect("s", child.transport()).await.unwrap();
    control(conn.peer(), json!({ "templates": 7, "resources": 3 })).await;
    assert_eq!(driver.refresh("s").await, Ok(RefreshOutcome::Committed));
    assert_eq!(template_count(&driver, "s"), 7);

    // A reader polls the catalog through every refresh that follows.
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let reader = tokio::spawn({
        let driver = driver.clone();
        async move {
            let mut seen = Vec::new();
            loop {
                seen.push(driver.read(|c| c.templates(Some("s"))).unwrap().len());
                if stopped.try_recv().is_ok() {
                    return seen;
                }
                tokio::task::yield_now().await;
            }
        }
    });

    let mut events = driver.subscribe();
    control(conn.peer(), json!({ "templates": 8, "fail": ["malformed"], "notify": true })).await;
    next_event(&mut events, traversed(Disposition::Failed)).await;
    let status = driver.status("s").unwrap();
    assert_eq!((status.status, status.templates), (Status::Stale, 7));
    let output: Value = serde_json::from_str(&driver.call_tool("{}").await.unwrap()).unwrap();
    assert_eq!(output["total"], 7, "the previous listing is still served");
    assert_eq!(output["failures"][0]["server"], "s");
    assert_eq!(output["failures"][0]["code"], "malformed_result");

    // A good list_changed refresh replaces it in one step.
    control(conn.peer(), json!({ "notify": true })).await;
    next_event(&mut events, traversed(Disposition::Committed)).await;
    assert_eq!(template_count(&driver, "s"), 8);
    stop.send(()).unwrap();
    let seen = reader.await.unwrap();
    assert!(seen.iter().all(|n| *n == 7 || *n == 8), "the reader saw the listing emptied or cut: {seen:?}");
    assert_eq!(seen.last(), Some(&8));
    conn.close();
    conn.closed().await;
    child.assert_only_discovery();
}

/// (b)
async fn second_connection_replaces_the_first() {
    let (one, two) = (Child::new("b1"), Child::new("b2"));
    let driver = driver(NEVER);
    // The first connection is the caller's (so it stays open after the replacement), with this
    // driver's handler: its list_changed still reaches the driver.
    let first = driver.client_handler("s").serve(one.transport()).await.unwrap();
    let epoch_one: Epoch = driver.add_server("s", first.peer().clone());
    control(first.peer(), json!({ "templates": 3 })).await;
    assert_eq!(driver.refresh("s").await, Ok(RefreshOutcome::Committed));
    assert_eq!(template_count(&driver, "s"), 3);

    let second = driver.connect("s", two.transport()).await.unwrap();
    assert_eq!(template_count(&driver, "s"), 0, "the first connection's listing is gone at once");
    assert_eq!(driver.status("s").unwrap().status, Status::Unknown);
    control(second.peer(), json!({ "templates": 5 })).await;

    // The first connection's list_changed and close change nothing.
    let mut events = driver.subscribe();
    control(first.peer(), json!({ "templates": 4, "notify": true })).await;
    let ignored = next_event(&mut events, |e| matches!(e, DriverEvent::ListChanged { .. })).await;
    assert_eq!(ignored, DriverEvent::ListChanged { server: "s".to_owned(), decision: ListChanged::Ignored });
    assert!(!driver.detach("s", epoch_one, Reason::ConnectionClosed));
    first.cancel().await.unwrap();

    let output: Value = serde_json::from_str(&driver.call_tool(r#"{"server":"s"}"#).await.unwrap()).unwrap();
    assert_eq!(output["total"], 5, "the second connection's listing is served");
    assert_eq!(one.count("resources/templates/list"), 2, "one traversal of the first server (2 pages)");
    second.close();
    second.closed().await;
    one.assert_only_discovery();
    two.assert_only_discovery();
}

/// (c)
async fn ten_concurrent_refreshes_traverse_once() {
    let child = Child::new("c");
    let driver = driver(NEVER);
    let conn = driver.connect("s", child.transport()).await.unwrap();
    control(conn.peer(), json!({ "templates": 5, "resources": 1 })).await;
    // Current-thread runtime: the ten tasks all ask before the traversal task runs.
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let driver = driver.clone();
            tokio::spawn(async move { driver.refresh("s").await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap(), Ok(RefreshOutcome::Committed));
    }
    // One traversal pair: 1 resources page, 3 template pages.
    assert_eq!((child.count("resources/list"), child.count("resources/templates/list")), (1, 3));
    assert_eq!(driver.status("s").unwrap().generation, 1);
    conn.close();
    conn.closed().await;
    child.assert_only_discovery();
}

/// (e)
async fn transient_failures_are_retried_until_they_recover() {
    let child = Child::new("e");
    // A small base so the scenario is short; the schedule itself is pinned by the vectors.
    let driver = driver(Duration::from_millis(20));
    let conn = driver.connect("s", child.transport()).await.unwrap();
    control(conn.peer(), json!({ "templates": 2, "fail": ["error", "error"] })).await;
    let mut events = driver.subscribe();
    assert_eq!(driver.refresh("s").await.unwrap_err().code(), "server_error");
    assert_eq!(driver.status("s").unwrap().status, Status::Failed);
    next_event(&mut events, traversed(Disposition::Failed)).await; // the caller's
    next_event(&mut events, traversed(Disposition::Failed)).await; // the first timed retry
    next_event(&mut events, traversed(Disposition::Committed)).await; // the second: recovered
    let status = driver.status("s").unwrap();
    assert_eq!((status.status, status.templates, status.last_error), (Status::Ok, 2, None));
    assert_eq!(child.count("resources/list"), 3);
    conn.close();
    conn.closed().await;
    child.assert_only_discovery();
}

/// A 2026-07-28 connection of `child` attached to `driver` as "s", one template committed, once the
/// server holds the driver's listen stream.
async fn listening_with_one_template(child: &Child, driver: &CatalogDriver) -> mcplens::rmcp::Connection {
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let running = serve_client_with_lifecycle(driver.client_handler("s"), child.transport(), mode).await.unwrap();
    assert_eq!(running.peer().peer_info().unwrap().protocol_version, ProtocolVersion::V_2026_07_28);
    let conn = driver.attach(running);
    control(conn.peer(), json!({ "templates": 1 })).await;
    assert_eq!(driver.refresh("s").await, Ok(RefreshOutcome::Committed));
    while control(conn.peer(), json!({})).await["listening"] != true {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    conn
}

/// 2026-07-28: the driver opens `subscriptions/listen`; list_changed arrives through it.
async fn modern_era_listens_for_changes() {
    let child = Child::new("modern");
    let driver = driver(NEVER);
    let conn = listening_with_one_template(&child, &driver).await;
    let mut events = driver.subscribe();
    control(conn.peer(), json!({ "templates": 3, "notify": true })).await;
    next_event(&mut events, traversed(Disposition::Committed)).await;
    assert_eq!(template_count(&driver, "s"), 3);
    conn.close();
    conn.closed().await;
    assert_eq!(child.count("subscriptions/listen"), 1);
    child.assert_only_discovery();
}

/// 2026-07-28: the server ends the listen stream while the connection stays (the peer's transport
/// lives): the watch stands without a stream and the pair is re-listed at once, since a change may
/// have gone unheard (`Refresher::handle_listen_closed` with `Liveness::Open`); closing still clears it.
/// Before, the driver detached the live connection: both lists cleared, nothing re-listed.
async fn modern_era_listen_ended_by_the_server_relists() {
    let child = Child::new("modern");
    let driver = driver(NEVER);
    let conn = listening_with_one_template(&child, &driver).await;
    let mut events = driver.subscribe();
    control(conn.peer(), json!({ "templates": 2, "endListen": true })).await;
    let watched = |e: &DriverEvent| matches!(e, DriverEvent::Watching { .. } | DriverEvent::Invalidated { .. });
    assert_eq!(
        next_event(&mut events, watched).await,
        DriverEvent::Watching { server: "s".to_owned(), notifications: Notifications::NotOffered }
    );
    next_event(&mut events, traversed(Disposition::Committed)).await;
    assert_eq!(template_count(&driver, "s"), 2);
    assert_eq!(
        (driver.status("s").unwrap().status, driver.notifications("s")),
        (Status::Ok, Some(Notifications::NotOffered))
    );
    conn.close();
    conn.closed().await;
    assert_eq!(driver.status("s").unwrap().status, Status::Unknown);
    assert_eq!(child.count("subscriptions/listen"), 1);
    child.assert_only_discovery();
}

/// 2026-07-28 with a server that does not advertise `resources.listChanged` (as Python `mcp` 2.3
/// and fastmcp 4 servers; `ttlMs: 0` too): the watch stands without a stream, none is opened; a
/// refresh commits with status `ok`; closing still clears the pair.
async fn modern_era_without_list_changed_opens_no_stream() {
    let child = Child::with_mode("unadvertised", "unadvertised");
    let driver = driver(NEVER);
    let mut events = driver.subscribe();
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let running = serve_client_with_lifecycle(driver.client_handler("s"), child.transport(), mode).await.unwrap();
    assert_eq!(running.peer().peer_info().unwrap().protocol_version, ProtocolVersion::V_2026_07_28);
    let conn = driver.attach(running);
    let watching = next_event(&mut events, |e| matches!(e, DriverEvent::Watching { .. })).await;
    assert_eq!(watching, DriverEvent::Watching { server: "s".to_owned(), notifications: Notifications::NotOffered });
    assert_eq!(driver.notifications("s"), Some(Notifications::NotOffered));
    control(conn.peer(), json!({ "templates": 3 })).await;
    assert_eq!(driver.refresh("s").await, Ok(RefreshOutcome::Committed));
    let status = driver.status("s").unwrap();
    assert_eq!((status.status, status.templates, status.last_error), (Status::Ok, 3, None));
    conn.close();
    conn.closed().await;
    assert_eq!(driver.status("s").unwrap().status, Status::Unknown);
    assert_eq!(child.count("subscriptions/listen"), 0);
    child.assert_only_discovery();
}

/// 2026-07-28, `listChanged` advertised but the listen answered -32601: not offered, not a
/// failure; the pair stays and refreshes go on.
async fn modern_era_listen_method_not_found_is_not_offered() {
    let child = Child::with_mode("method_not_found", "method_not_found");
    let driver = driver(NEVER);
    let mut events = driver.subscribe();
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let running = serve_client_with_lifecycle(driver.client_handler("s"), child.transport(), mode).await.unwrap();
    let conn = driver.attach(running);
    let watching = |n| DriverEvent::Watching { server: "s".to_owned(), notifications: n };
    let is_watching = |e: &DriverEvent| matches!(e, DriverEvent::Watching { .. } | DriverEvent::ListenFailed { .. });
    assert_eq!(next_event(&mut events, is_watching).await, watching(Notifications::Listening));
    assert_eq!(next_event(&mut events, is_watching).await, watching(Notifications::NotOffered));
    control(conn.peer(), json!({ "templates": 1 })).await;
    assert_eq!(driver.refresh("s").await, Ok(RefreshOutcome::Committed));
    assert_eq!(driver.status("s").unwrap().status, Status::Ok);
    conn.close();
    conn.closed().await;
    assert_eq!(child.count("subscriptions/listen"), 1);
    child.assert_only_discovery();
}

type Scenario = fn() -> Pin<Box<dyn Future<Output = ()>>>;

fn main() {
    if let Some(log) = std::env::var_os(LOG_ENV) {
        return serve(PathBuf::from(log));
    }
    let scenarios: [(&str, Scenario); 8] = [
        ("a_list_changed_then_failure_keeps_the_listing", || Box::pin(list_changed_then_failure_keeps_the_listing())),
        ("b_second_connection_replaces_the_first", || Box::pin(second_connection_replaces_the_first())),
        ("c_ten_concurrent_refreshes_traverse_once", || Box::pin(ten_concurrent_refreshes_traverse_once())),
        ("e_transient_failures_are_retried_until_they_recover", || {
            Box::pin(transient_failures_are_retried_until_they_recover())
        }),
        ("modern_era_listens_for_changes", || Box::pin(modern_era_listens_for_changes())),
        ("modern_era_listen_ended_by_the_server_relists", || Box::pin(modern_era_listen_ended_by_the_server_relists())),
        ("modern_era_without_list_changed_opens_no_stream", || {
            Box::pin(modern_era_without_list_changed_opens_no_stream())
        }),
        ("modern_era_listen_method_not_found_is_not_offered", || {
            Box::pin(modern_era_listen_method_not_found_is_not_offered())
        }),
    ];
    // Not a skipped test: `.skip(1)` drops the program name; the rest are the test-name filters.
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let selected: Vec<_> =
        scenarios.iter().filter(|(name, _)| filter.is_empty() || filter.iter().any(|f| name.contains(f))).collect();
    println!("running {} scenarios", selected.len());
    for (name, scenario) in selected {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // Turns a hang into a failure; not a timing assertion.
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(60), scenario()).await.unwrap_or_else(|_| panic!("{name}: stuck"))
        });
        println!("scenario {name} ... ok");
    }
}
