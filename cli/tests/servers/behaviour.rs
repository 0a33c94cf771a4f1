//! The test server's behaviour, shared by the stdio test server (`examples/test-server`, built
//! from `tests/servers/test_server.rs`) and the in-process streamable HTTP server of the tests.
//!
//! Pages are built as raw JSON so the stdio server can put anything on the wire (sloppy fields
//! included); the HTTP server, which rmcp only offers for typed handlers, serves the clean pages.

#![allow(dead_code)] // each includer uses part of it

use std::borrow::Cow;
use std::time::Duration;

use rmcp::model::{
    ClientNotification, ClientRequest, CustomResult, ErrorCode, ErrorData, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler, Service};
use serde_json::{json, Value};

/// What the server does; parsed from command-line flags.
#[derive(Debug, Clone)]
pub struct Options {
    /// Well-formed templates (`mem://t{i}/{id}`).
    pub templates: usize,
    /// Well-formed resources (`mem://r{i}`).
    pub resources: usize,
    /// Items per page (0: everything on one page).
    pub page_size: usize,
    /// Plants problems: an invalid URI template / URI, invalid optional fields, strings that
    /// sanitizing changes, keys outside the projection.
    pub sloppy: bool,
    /// `resources/list` answers every page with the same `nextCursor`.
    pub repeat_cursor: bool,
    /// The server does not declare the `resources` capability.
    pub no_resources: bool,
    /// `resources/templates/list` answers with this JSON-RPC error.
    pub templates_error: Option<i32>,
    /// Sleep this long before answering each list page.
    pub delay: Duration,
    /// Its `serverInfo.name` (default `test-server`).
    pub name: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            templates: 3,
            resources: 2,
            page_size: 0,
            sloppy: false,
            repeat_cursor: false,
            no_resources: false,
            templates_error: None,
            delay: Duration::ZERO,
            name: "test-server".to_owned(),
        }
    }
}

impl Options {
    /// Parses `--templates N --resources N --page-size N --sloppy --repeat-cursor
    /// --no-resources --templates-error CODE --delay-ms N --name NAME`.
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options::default();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--templates" => o.templates = number(value()?)?,
                "--resources" => o.resources = number(value()?)?,
                "--page-size" => o.page_size = number(value()?)?,
                "--sloppy" => o.sloppy = true,
                "--repeat-cursor" => o.repeat_cursor = true,
                "--no-resources" => o.no_resources = true,
                "--templates-error" => {
                    o.templates_error = Some(value()?.parse().map_err(|_| "bad --templates-error".to_owned())?)
                }
                "--delay-ms" => o.delay = Duration::from_millis(number(value()?)? as u64),
                "--name" => o.name = value()?.clone(),
                other => return Err(format!("unknown flag {other}")),
            }
        }
        Ok(o)
    }

    fn capabilities(&self) -> ServerCapabilities {
        if self.no_resources {
            ServerCapabilities::builder().enable_tools().build()
        } else {
            ServerCapabilities::builder().enable_resources().build()
        }
    }

    fn items(&self, key: &str) -> Vec<Value> {
        let mut items: Vec<Value> = if key == "resources" {
            (0..self.resources)
                .map(|i| {
                    json!({ "uri": format!("mem://r{i}"), "name": format!("r{i}"),
                "mimeType": "text/plain", "description": format!("Resource number {i}") })
                })
                .collect()
        } else {
            (0..self.templates)
                .map(|i| {
                    json!({ "uriTemplate": format!("mem://t{i}/{{id}}"), "name": format!("t{i}"),
                "mimeType": "application/json", "description": format!("Template number {i}.\nSecond line.") })
                })
                .collect()
        };
        if self.sloppy {
            if key == "resources" {
                items.push(json!({ "uri": "file:///with space", "name": "spaced" }));
                items.push(json!({ "uri": "mem://negative", "name": "negative", "size": -1 }));
            } else {
                items.push(json!({ "uriTemplate": "bad/{unclosed", "name": "broken" }));
                items.push(json!({ "uriTemplate": "sloppy://{id}", "name": "sloppy", "mimeType": 42,
                    "annotations": { "audience": ["system"], "priority": 2 } }));
                items.push(json!({ "uriTemplate": "evil://{x}", "name": "evil\u{202E}fdp.exe",
                    "description": "\u{1b}[31mred\u{1b}[0m alert", "_meta": { "k": 1 }, "icons": [] }));
            }
        }
        items
    }

    /// The page answering `cursor` (opaque: `"{key} page {n} ✓"`).
    pub fn page(&self, key: &str, cursor: Option<&str>) -> Value {
        let items = self.items(key);
        if key == "resources" && self.repeat_cursor {
            return json!({ key: items, "nextCursor": "same again" });
        }
        let size = if self.page_size == 0 { items.len().max(1) } else { self.page_size };
        let n: usize = cursor
            .and_then(|c| c.strip_prefix(&format!("{key} page ")))
            .and_then(|c| c.strip_suffix(" ✓"))
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let start = (n * size).min(items.len());
        let end = (start + size).min(items.len());
        let mut page = json!({ key: items[start..end].to_vec() });
        if end < items.len() {
            page["nextCursor"] = json!(format!("{key} page {} ✓", n + 1));
        }
        page
    }

    async fn answer(&self, key: &str, cursor: Option<&str>) -> Result<Value, ErrorData> {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        if key == "resourceTemplates" {
            if let Some(code) = self.templates_error {
                return Err(ErrorData::new(ErrorCode(code), "templates are broken today", None));
            }
        }
        Ok(self.page(key, cursor))
    }
}

fn number(s: &str) -> Result<usize, String> {
    s.parse().map_err(|_| format!("not a number: {s}"))
}

/// The typed handler: the `initialize` handshake, and (for the HTTP server) typed list pages.
#[derive(Debug, Clone)]
pub struct Typed(pub Options);

impl ServerHandler for Typed {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(self.0.capabilities()).with_server_info(Implementation::new(self.0.name.clone(), "0.0.0"))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let page = self.0.answer("resourceTemplates", cursor.as_deref()).await?;
        serde_json::from_value(page).map_err(|_| ErrorData::internal_error("not a typed page", None))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let page = self.0.answer("resources", cursor.as_deref()).await?;
        serde_json::from_value(page).map_err(|_| ErrorData::internal_error("not a typed page", None))
    }
}

/// The raw server: list pages go on the wire exactly as built, sloppy fields included.
pub struct Raw(pub Typed);

impl Service<RoleServer> for Raw {
    async fn handle_request(
        &self,
        request: ClientRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let (key, cursor) = match &request {
            ClientRequest::ListResourceTemplatesRequest(r) => {
                ("resourceTemplates", r.params.as_ref().and_then(|p| p.cursor.clone()))
            }
            ClientRequest::ListResourcesRequest(r) => ("resources", r.params.as_ref().and_then(|p| p.cursor.clone())),
            _ => return self.0.handle_request(request, cx).await,
        };
        if self.0 .0.no_resources {
            return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method().to_owned(), None));
        }
        let page = self.0 .0.answer(key, cursor.as_deref()).await?;
        Ok(ServerResult::CustomResult(CustomResult::new(page)))
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        cx: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.0.handle_notification(notification, cx).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}
