//! `make demo`: bounded resource discovery against two real rmcp servers, in process, no network.
//!
//! - `docs` lists templates and resources over several pages; one template carries sloppy
//!   optional fields, one name hides a right-to-left override and a title an ANSI escape.
//! - `hostile` answers every list page with the same `nextCursor`, forever.
//!
//! A [`CatalogDriver`] refreshes both; the example prints each server's status and diagnostics
//! and the `ListMcpResourceTemplatesTool` output, then `docs` changes its templates and sends
//! `notifications/resources/list_changed`, and the example prints the output after the refresh.
//!
//! Run: `cargo run -p mcplens --example discover --all-features`.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcplens::discovery::{Diagnostics, Limits};
use mcplens::rmcp::{CatalogDriver, DriverEvent, RefreshError};
use rmcp::model::{
    ClientNotification, ClientRequest, CustomResult, ErrorData, ProtocolVersion, ServerCapabilities, ServerConfig,
    ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{RoleServer, ServerHandler, Service, ServiceExt};
use serde_json::{json, Value};

/// The pages a well-behaved server serves, per list key.
struct Pages {
    templates: Vec<Vec<Value>>,
    resources: Vec<Vec<Value>>,
}

enum Behaviour {
    /// Serves `Pages`, with opaque cursors.
    Paged(Mutex<Pages>),
    /// Every page says "there is more, ask with this same cursor".
    RepeatCursor,
}

struct DemoServer {
    base: Base,
    behaviour: Arc<Behaviour>,
    list_requests: Arc<AtomicUsize>,
}

/// Everything but the two list methods (the `initialize` handshake).
struct Base(ServerConfig);

impl ServerHandler for Base {
    fn get_info(&self) -> ServerConfig {
        self.0.clone()
    }
}

impl DemoServer {
    fn page(&self, key: &str, cursor: Option<String>) -> Value {
        self.list_requests.fetch_add(1, Ordering::SeqCst);
        match &*self.behaviour {
            Behaviour::RepeatCursor => {
                let item = match key {
                    "resources" => json!({ "uri": "loop://r", "name": "r" }),
                    _ => json!({ "uriTemplate": "loop://{x}", "name": "x" }),
                };
                json!({ key: [item], "nextCursor": "again" })
            }
            Behaviour::Paged(pages) => {
                let pages = pages.lock().unwrap();
                let pages = if key == "resources" { &pages.resources } else { &pages.templates };
                let n: usize = cursor.and_then(|c| c.strip_prefix("page-").and_then(|n| n.parse().ok())).unwrap_or(0);
                let mut page = json!({ key: pages.get(n).cloned().unwrap_or_default() });
                if n + 1 < pages.len() {
                    page["nextCursor"] = json!(format!("page-{}", n + 1));
                }
                page
            }
        }
    }
}

impl Service<RoleServer> for DemoServer {
    async fn handle_request(
        &self,
        request: ClientRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let page = match request {
            ClientRequest::ListResourceTemplatesRequest(r) => {
                self.page("resourceTemplates", r.params.and_then(|p| p.cursor))
            }
            ClientRequest::ListResourcesRequest(r) => self.page("resources", r.params.and_then(|p| p.cursor)),
            other => return self.base.handle_request(other, cx).await,
        };
        // A custom result goes on the wire exactly as written, sloppy fields included.
        Ok(ServerResult::CustomResult(CustomResult::new(page)))
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

fn docs_pages() -> Pages {
    Pages {
        templates: vec![
            vec![
                json!({ "uriTemplate": "file:///{path}", "name": "files", "title": "Project files",
                        "description": "Any file of the project.\nRead-only.", "mimeType": "text/plain" }),
                json!({ "uriTemplate": "db://{table}/{id}", "name": "rows",
                        // Sloppy optional fields: dropped, the template kept.
                        "mimeType": 42, "annotations": { "audience": ["system"], "priority": 0.8 } }),
            ],
            vec![
                // A right-to-left override in a name, an ANSI colour escape in a title.
                json!({ "uriTemplate": "report://{year}", "name": "report\u{202E}fdp.exe",
                        "title": "\u{1b}[31mAnnual\u{1b}[0m report" }),
                json!({ "uriTemplate": "search://{?q,limit}", "name": "search", "_meta": { "x": 1 } }),
            ],
            vec![json!({ "uriTemplate": "git://{repo}/commits{/sha}", "name": "commits" })],
        ],
        resources: vec![
            vec![json!({ "uri": "file:///README.md", "name": "README.md", "mimeType": "text/markdown" })],
            vec![json!({ "uri": "file:///Cargo.toml", "name": "Cargo.toml", "size": 1024 })],
        ],
    }
}

fn changed_templates() -> Vec<Vec<Value>> {
    vec![
        vec![json!({ "uriTemplate": "file:///{path}", "name": "files", "title": "Project files" })],
        vec![json!({ "uriTemplate": "issues://{number}", "name": "issues", "description": "Issue by number" })],
    ]
}

/// Serves `behaviour` on one end of a duplex pipe; the driver connects on the other.
async fn start(
    driver: &CatalogDriver,
    name: &str,
    behaviour: Arc<Behaviour>,
) -> Result<
    (mcplens::rmcp::Connection, RunningService<RoleServer, DemoServer>, Arc<AtomicUsize>),
    Box<dyn std::error::Error>,
> {
    let list_requests = Arc::new(AtomicUsize::new(0));
    let server = DemoServer {
        base: Base(ServerConfig::new(ServerCapabilities::builder().enable_resources().build())),
        behaviour,
        list_requests: list_requests.clone(),
    };
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(async move { server.serve(server_io).await });
    let connection = driver.connect(name, client_io).await?;
    Ok((connection, server.await??, list_requests))
}

fn describe(label: &str, d: &Diagnostics) -> String {
    let mut parts =
        vec![format!("{label}: {} items, {} pages, {} requests, {} bytes", d.items, d.pages, d.requests, d.bytes)];
    if !d.dropped_fields.is_empty() {
        let fields: Vec<String> = d.dropped_fields.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        parts.push(format!("dropped fields: {}", fields.join(", ")));
    }
    if !d.dropped_items.is_empty() {
        let items: Vec<String> = d.dropped_items.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        parts.push(format!("dropped items: {}", items.join(", ")));
    }
    if d.sanitized_strings > 0 {
        parts.push(format!("sanitized strings: {}", d.sanitized_strings));
    }
    if d.ignored_keys > 0 {
        parts.push(format!("ignored keys: {}", d.ignored_keys));
    }
    parts.join("; ")
}

fn account(driver: &CatalogDriver, server: &str, error: Option<&RefreshError>) {
    let status = driver.status(server).expect("a registered server");
    let status_json = serde_json::to_value(status.status).expect("a status serializes");
    println!(
        "  {server}: status {}, {} templates, {} resources (generation {})",
        status_json.as_str().unwrap_or("?"),
        status.templates,
        status.resources,
        status.generation
    );
    if let Some(d) = driver.diagnostics(server) {
        println!("    {}", describe("templates", &d.templates));
        println!("    {}", describe("resources", &d.resources));
    }
    if let Some(e) = error {
        println!("    error {}: {e}", e.code());
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The whole demo is bounded: a hang would be a bug.
    tokio::time::timeout(Duration::from_secs(20), demo()).await.map_err(|_| "the demo did not finish in 20 s")?
}

async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "mcplens {} — bounded MCP resource discovery (two in-process rmcp servers, no network)\n",
        mcplens::VERSION
    );
    let driver = CatalogDriver::new(Limits::default());

    let docs = Arc::new(Behaviour::Paged(Mutex::new(docs_pages())));
    let (_docs_conn, docs_server, _) = start(&driver, "docs", docs.clone()).await?;
    let (_hostile_conn, _hostile_server, hostile_requests) =
        start(&driver, "hostile", Arc::new(Behaviour::RepeatCursor)).await?;

    println!("Refreshing both servers (resources/list + resources/templates/list, one transaction each):");
    for (server, result) in driver.ensure_all_fresh().await {
        account(&driver, &server, result.as_ref().err());
        if server == "hostile" {
            println!(
                "    the hostile server repeats its cursor forever: stopped after {} requests",
                hostile_requests.load(Ordering::SeqCst)
            );
        }
    }

    println!("\nListMcpResourceTemplatesTool {{}}:");
    println!("{}", driver.call_tool("{}").await?);

    println!("\n`docs` changes its templates and sends notifications/resources/list_changed");
    if let Behaviour::Paged(pages) = &*docs {
        pages.lock().unwrap().templates = changed_templates();
    }
    let mut events = driver.subscribe();
    docs_server.peer().notify_resource_list_changed().await?;
    loop {
        match events.recv().await? {
            DriverEvent::ListChanged { server, decision } => {
                let decision = serde_json::to_value(decision)?;
                println!("  core's decision for {server}: {}", decision.as_str().unwrap_or("?"));
            }
            DriverEvent::Traversed { server, disposition, error } if server == "docs" => {
                let disposition = serde_json::to_value(disposition)?;
                println!(
                    "  traversal of docs: {}{}",
                    disposition.as_str().unwrap_or("?"),
                    error.map(|e| format!(", error {e}")).unwrap_or_default()
                );
                if disposition != "confirming" {
                    break;
                }
            }
            _ => {}
        }
    }
    account(&driver, "docs", None);

    println!("\nListMcpResourceTemplatesTool {{\"server\":\"docs\"}}:");
    println!("{}", driver.call_tool(r#"{"server":"docs"}"#).await?);
    Ok(())
}
