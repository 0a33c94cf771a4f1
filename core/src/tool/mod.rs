//! The model-facing resource tools: `ListMcpResourceTemplatesTool` and `ListMcpResourcesTool`
//! (the listings of the catalog's resource templates and concrete resources, here) and
//! `ReadMcpResourceTool` ([`read`]).
//!
//! The specs (name, description, input schema and its strict form, annotations) come from here so
//! every language ships the same text. [`render`] (templates) and [`render_resources`] turn a catalog and the
//! model's input into compact JSON:
//!
//! ```json
//! {"resourceTemplates":[…],"failures":[{"server":"…","code":"…","message":"…"}],"total":3,"nextOffset":2}
//! {"resources":[…],"failures":[…],"total":3,"nextOffset":2}
//! ```
//!
//! Both tools take the same input, page alike, report the same failures and share the cap.
//! Output over [`MAX_OUTPUT_CHARS`] characters is an `output_too_large` error with a hint to
//! filter or page — never truncated, never written anywhere. Rendering reads only the catalog:
//! it never reads a resource, expands a template or calls completion.

use std::time::Duration;

use crate::error::ErrorCode;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::catalog::{Catalog, CatalogError, Failure};
use crate::discovery::Listing;

mod common;
pub mod complete;
pub mod read;

pub use common::{ToolError, ToolSpec, MAX_OUTPUT_CHARS};
pub use complete::{CompleteCall, CompleteConfig, CompleteInput};
pub use read::{ReadCall, ReadConfig, ReadInput};

/// The templates tool's name.
pub const NAME: &str = crate::catalog::LIST_RESOURCE_TEMPLATES_TOOL;

/// The resources tool's name.
pub const RESOURCES_NAME: &str = crate::catalog::LIST_RESOURCES_TOOL;

/// `limit` when the input gives none.
pub const DEFAULT_LIMIT: usize = 100;

/// The largest `limit` accepted.
pub const MAX_LIMIT: usize = 1000;

/// The templates tool's description, shown to the model.
pub const DESCRIPTION: &str = "Lists the resource templates of the connected MCP servers. A resource template is an \
RFC 6570 URI template such as file:///{path}: fill in its variables to build a concrete URI, then read that URI with \
the MCP resource-reading tool, naming the same server. Each template has a \"server\" field. Use \"server\" to list \
one server's templates, and \"offset\"/\"limit\" to page: \"nextOffset\" is present when more templates remain. \
Servers whose templates could not be listed are reported in \"failures\"; servers that suggest values for their \
templates' variables are named in \"completion\" (ask them with the MCP template-completion tool). An empty listing \
means the connected servers offer no resource templates, not that a server has no tools.";

/// The resources tool's description, shown to the model.
pub const RESOURCES_DESCRIPTION: &str = "Lists the concrete resources of the connected MCP servers: each has a \
\"uri\" to read with the MCP resource-reading tool, naming the same server, a \"name\", and, when the server gives \
them, \"title\", \"description\", \"mimeType\" and \"size\" (bytes). Each resource has a \"server\" field. Use \
\"server\" to list one server's resources, and \"offset\"/\"limit\" to page: \"nextOffset\" is present when more \
resources remain. Servers whose resources could not be listed are reported in \"failures\". An empty listing means \
the connected servers offer no concrete resources, not that a server has no tools.";

/// The templates tool's spec.
pub fn spec() -> ToolSpec {
    tool_spec(NAME, DESCRIPTION, "templates", "List MCP resource templates")
}

/// The resources tool's spec.
pub fn resources_spec() -> ToolSpec {
    tool_spec(RESOURCES_NAME, RESOURCES_DESCRIPTION, "resources", "List MCP resources")
}

/// The spec of the resource tool named `name` (one of [`crate::catalog::RESOURCE_TOOLS`]).
pub fn spec_of(name: &str) -> Option<ToolSpec> {
    match name {
        NAME => Some(spec()),
        RESOURCES_NAME => Some(resources_spec()),
        read::NAME => Some(read::spec()),
        complete::NAME => Some(complete::spec()),
        _ => None,
    }
}

/// The refusal of model input a binding could not turn into JSON (a Python object the JSON model
/// cannot hold, a JavaScript `BigInt` or cycle): every tool answers it alike, and nothing is
/// sent. Bindings hand this over instead of a stand-in text the tools would parse.
pub fn not_json() -> ToolError {
    ToolError::InvalidArgument { reason: "the input is not a JSON object".to_owned() }
}

/// Every resource tool's spec, in [`crate::catalog::RESOURCE_TOOLS`] order: the tools an adapter
/// registers with a framework (which of them to offer at a step is [`Catalog::visible_tools`]'s).
pub fn specs() -> Vec<ToolSpec> {
    crate::catalog::RESOURCE_TOOLS.iter().filter_map(|name| spec_of(name)).collect()
}

fn tool_spec(name: &'static str, description: &'static str, items: &str, title: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        description,
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": format!("List only this server's {items}.")},
                "offset": {"type": "integer", "minimum": 0, "description": format!("Skip this many {items} (default 0).")},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                          "description": format!("Return at most this many {items} (default 100).")}
            },
            "additionalProperties": false
        }),
        title,
        true,
    )
}

/// The tool's input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Only this server.
    #[serde(default)]
    pub server: Option<String>,
    /// Items to skip.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Items to return.
    #[serde(default)]
    pub limit: Option<u64>,
}

impl Input {
    /// Parses the model's input (JSON text). `null` or `{}` means no filter, first page.
    pub fn from_json(text: &str) -> Result<Input, ToolError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|_| ToolError::InvalidArgument { reason: "the input is not a JSON object".to_owned() })?;
        Input::from_value(v)
    }

    /// Parses the model's input (a JSON value).
    pub fn from_value(v: Value) -> Result<Input, ToolError> {
        if v.is_null() {
            return Ok(Input::default());
        }
        if let Some(obj) = v.as_object() {
            for (key, max) in [("offset", None), ("limit", Some(MAX_LIMIT as u64))] {
                if let Some(x) = obj.get(key).filter(|x| !x.is_null()) {
                    let min = if key == "limit" { 1 } else { 0 };
                    let ok = x.as_u64().is_some_and(|n| n >= min && max.is_none_or(|m| n <= m));
                    if !ok {
                        let range =
                            max.map_or(format!("an integer ≥ {min}"), |m| format!("an integer from {min} to {m}"));
                        return Err(ToolError::InvalidArgument { reason: format!("\"{key}\" must be {range}") });
                    }
                }
            }
            if obj.get("server").is_some_and(|s| !s.is_string() && !s.is_null()) {
                return Err(ToolError::InvalidArgument { reason: "\"server\" must be a string".to_owned() });
            }
            if let Some(k) = obj.keys().find(|k| !matches!(k.as_str(), "server" | "offset" | "limit")) {
                let k: String = crate::sanitize::label(k).chars().take(64).collect();
                return Err(ToolError::InvalidArgument { reason: format!("unknown input field \"{k}\"") });
            }
        }
        serde_json::from_value(v)
            .map_err(|_| ToolError::InvalidArgument { reason: "the input is not an object".to_owned() })
    }
}

/// The servers a call of the resource tool `name` with the model's input must see current before
/// it answers — the listings render the catalog and the read authorizes against it, so a driver
/// makes these servers current (traversing only what is due) first, then calls the tool: a
/// listing filtered to one server, that server; an unfiltered listing, every server; the read and
/// the completion, the server it names. Input the tool refuses anyway, an unknown server or another tool: none.
pub fn current_before(catalog: &Catalog, name: &str, input_json: &str) -> Vec<String> {
    let known = |s: String| if catalog.servers().contains(&s) { vec![s] } else { Vec::new() };
    match name {
        NAME | RESOURCES_NAME => match Input::from_json(input_json) {
            Ok(Input { server: Some(s), .. }) => known(s),
            Ok(_) => catalog.servers(),
            Err(_) => Vec::new(),
        },
        crate::catalog::READ_RESOURCE_TOOL | crate::catalog::COMPLETE_TEMPLATE_TOOL => {
            match serde_json::from_str::<Value>(input_json) {
                Ok(Value::Object(o)) => match o.get("server") {
                    Some(Value::String(s)) => known(s.clone()),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// One failure row of the output.
#[derive(Serialize)]
struct FailureRow<'a> {
    server: &'a str,
    code: ErrorCode,
    message: &'a str,
}

/// Renders the templates tool's output for `input` from `catalog`'s current entries.
///
/// Order is deterministic: servers in registration order, each server's templates in the
/// server's order. Failures list the selected servers whose last refresh failed (their last
/// good templates, if any, are still listed).
pub fn render(catalog: &Catalog, input: &Input) -> Result<String, ToolError> {
    let views = catalog.views(input.server.as_deref()).map_err(ToolError::UnknownServer)?;
    let completion: Vec<String> = views.iter().filter(|v| v.completion).map(|v| v.name.clone()).collect();
    let servers = views.into_iter().map(|v| (v.name, v.templates, v.failure)).collect();
    render_page("resourceTemplates", servers, &completion, input)
}

/// [`render`] for one server without a catalog: its templates listing, or the failure that kept it
/// from being listed — what a model sees with only that server connected (the CLI's
/// `templates --json`).
pub fn render_one_server(
    server: &str,
    templates: Result<&Listing, &Failure>,
    input: &Input,
) -> Result<String, ToolError> {
    if let Some(asked) = input.server.as_deref().filter(|asked| *asked != server) {
        let e = CatalogError::UnknownServer { server: asked.to_owned(), available: vec![server.to_owned()] };
        return Err(ToolError::UnknownServer(e));
    }
    let (items, failure) = match templates {
        Ok(listing) => (listing.templates().cloned().collect(), None),
        Err(failure) => (Vec::new(), Some(failure.clone())),
    };
    render_page("resourceTemplates", vec![(server.to_owned(), items, failure)], &[], input)
}

/// Renders the resources tool's output: [`render`]'s twin over each server's concrete resources
/// (`uri, name, title?, description?, mimeType?, size?, annotations?, server`).
pub fn render_resources(catalog: &Catalog, input: &Input) -> Result<String, ToolError> {
    let views = catalog.resource_views(input.server.as_deref()).map_err(ToolError::UnknownServer)?;
    render_page(
        "resources",
        views.into_iter().map(|(v, resources)| (v.name, resources, v.failure)).collect(),
        &[],
        input,
    )
}

/// One page of either listing: `{key: [...], failures, completion?, total, nextOffset?}`, within
/// the cap; `completion` (the servers that offer completion of their templates) only when one does.
fn render_page<T: Serialize>(
    key: &'static str,
    servers: Vec<(String, Vec<T>, Option<Failure>)>,
    completion: &[String],
    input: &Input,
) -> Result<String, ToolError> {
    let all: Vec<&T> = servers.iter().flat_map(|(_, items, _)| items.iter()).collect();
    let total = all.len();
    let offset = usize::try_from(input.offset.unwrap_or(0)).unwrap_or(usize::MAX).min(total);
    let limit = input.limit.map_or(DEFAULT_LIMIT, |l| l as usize).clamp(1, MAX_LIMIT);
    let end = offset.saturating_add(limit).min(total);
    let page = &all[offset..end];
    let failures: Vec<FailureRow<'_>> = servers
        .iter()
        .filter_map(|(name, _, f)| f.as_ref().map(|f| FailureRow { server: name, code: f.code, message: &f.message }))
        .collect();

    let mut out = Vec::with_capacity(256 + page.len() * 256);
    let mut ser = serde_json::Serializer::new(&mut out);
    let mut map = ser.serialize_map(None).expect("writing to a Vec cannot fail");
    map.serialize_entry(key, page).expect("writing to a Vec cannot fail");
    map.serialize_entry("failures", &failures).expect("writing to a Vec cannot fail");
    if !completion.is_empty() {
        map.serialize_entry("completion", completion).expect("writing to a Vec cannot fail");
    }
    map.serialize_entry("total", &total).expect("writing to a Vec cannot fail");
    if end < total {
        map.serialize_entry("nextOffset", &end).expect("writing to a Vec cannot fail");
    }
    map.end().expect("writing to a Vec cannot fail");
    let text = String::from_utf8(out).expect("serde_json writes UTF-8");
    let chars = if text.len() <= MAX_OUTPUT_CHARS { text.len() } else { text.chars().count() };
    if chars > MAX_OUTPUT_CHARS {
        return Err(ToolError::OutputTooLarge { chars, max: MAX_OUTPUT_CHARS });
    }
    Ok(text)
}

/// [`render`] from the model's input as JSON text.
pub fn call(catalog: &Catalog, input_json: &str) -> Result<String, ToolError> {
    render(catalog, &Input::from_json(input_json)?)
}

/// Either listing tool by name ([`NAME`] or [`RESOURCES_NAME`]); any other name is
/// `invalid_argument` (the read tool is a [`ReadCall`]).
pub fn render_listing(catalog: &Catalog, name: &str, input: &Input) -> Result<String, ToolError> {
    match name {
        NAME => render(catalog, input),
        RESOURCES_NAME => render_resources(catalog, input),
        _ => Err(ToolError::InvalidArgument { reason: "not a listing tool of mcplens".to_owned() }),
    }
}

/// [`render_resources`] from the model's input as JSON text.
pub fn call_resources(catalog: &Catalog, input_json: &str) -> Result<String, ToolError> {
    render_resources(catalog, &Input::from_json(input_json)?)
}

/// The settings of the tools that call a server: the read's and the completion's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallConfig {
    /// [`ReadMcpResourceTool`](read)'s settings.
    pub read: ReadConfig,
    /// [`CompleteMcpResourceTemplateTool`](complete)'s settings.
    pub complete: CompleteConfig,
}

/// A model's call of a tool that asks a server (the read, the completion), validated against the
/// catalog and handed to the host to perform: send [`method`](Self::method) with
/// [`params_json`](Self::params_json) over [`server`](Self::server)'s connection, wait at most
/// [`remaining`](Self::remaining), then [`finish`](Self::finish) with what happened. The listing
/// tools ask no server: they are rendered from the catalog ([`render_listing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerCall {
    /// `ReadMcpResourceTool`.
    Read(ReadCall),
    /// `CompleteMcpResourceTemplateTool`.
    Complete(CompleteCall),
}

impl ServerCall {
    /// The model's call of tool `name` with its input (JSON text), validated against `catalog` at
    /// `now`; `invalid_argument` for a tool that asks no server.
    pub fn new(
        catalog: &Catalog,
        name: &str,
        input_json: &str,
        config: &CallConfig,
        now: Duration,
    ) -> Result<ServerCall, ToolError> {
        match name {
            read::NAME => ReadCall::from_json(catalog, input_json, &config.read, now).map(ServerCall::Read),
            complete::NAME => {
                CompleteCall::from_json(catalog, input_json, &config.complete, now).map(ServerCall::Complete)
            }
            _ => Err(ToolError::InvalidArgument { reason: "not a tool of mcplens that asks a server".to_owned() }),
        }
    }

    /// Does tool `name` ask a server (the host performs a [`ServerCall`])?
    pub fn asks_server(name: &str) -> bool {
        matches!(name, read::NAME | complete::NAME)
    }

    /// The JSON-RPC method to send.
    pub fn method(&self) -> &'static str {
        match self {
            ServerCall::Read(_) => ReadCall::METHOD,
            ServerCall::Complete(_) => CompleteCall::METHOD,
        }
    }

    /// The server to ask.
    pub fn server(&self) -> &str {
        match self {
            ServerCall::Read(c) => c.server(),
            ServerCall::Complete(c) => c.server(),
        }
    }

    /// The request's `params` as compact JSON text.
    pub fn params_json(&self) -> String {
        match self {
            ServerCall::Read(c) => c.params_json(),
            ServerCall::Complete(c) => c.params_json(),
        }
    }

    /// How long the host may still wait for the answer.
    pub fn remaining(&self, now: Duration) -> Duration {
        match self {
            ServerCall::Read(c) => c.remaining(now),
            ServerCall::Complete(c) => c.remaining(now),
        }
    }

    /// The model's output for what became of the request, or the tool error.
    pub fn finish(&self, outcome: crate::discovery::Outcome<'_>) -> Result<String, ToolError> {
        match self {
            ServerCall::Read(c) => c.finish(outcome),
            ServerCall::Complete(c) => c.finish(outcome),
        }
    }
}
