//! The agentcat (formerly MCPcat) events API exporter: `POST {base}/v1/public/events/`, one event
//! per request (the API takes one), snake_case body exactly as `agentcat-api` 1.0.2's
//! `PublishEventRequest` model defines it (a test validates it with an unknown key failing).
//!
//! Events whose type the model's `event_type` enum does not list (`mcp:subscriptions/listen`,
//! `mcp:server/discover`, `mcp:tasks/update`, `mcp:resources/directory/read`) are not sent: the
//! tracker counts them as this exporter's `skipped` (see [`Exporter::accepts`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::http::{check_url, Poster};
use super::{Batch, ExportItem, Exporter};
use crate::tracking::config::option_at;
use crate::tracking::event::{Event, Method};
use crate::tracking::{ExportError, TrackingError};

/// The API agentcat 2.1.0 sends to by default (`agentcat/modules/constants.py`, `AGENTCAT_API_URL`).
pub const DEFAULT_BASE_URL: &str = "https://api.agentcat.com";

/// The event types `agentcat-api` 1.0.2 accepts (`PublishEventRequest.event_type`'s enum), less
/// `agentcat:identify` (mcplens carries the identity on each event instead).
pub const ACCEPTED_EVENT_TYPES: [&str; 17] = [
    "mcp:ping",
    "mcp:initialize",
    "mcp:completion/complete",
    "mcp:logging/setLevel",
    "mcp:prompts/get",
    "mcp:prompts/list",
    "mcp:resources/list",
    "mcp:resources/templates/list",
    "mcp:resources/read",
    "mcp:resources/subscribe",
    "mcp:resources/unsubscribe",
    "mcp:tools/call",
    "mcp:tools/list",
    "mcp:tasks/get",
    "mcp:tasks/result",
    "mcp:tasks/list",
    "mcp:tasks/cancel",
];

/// Where and how to publish. In [`TrackerConfig`](crate::tracking::TrackerConfig) JSON:
/// `{"type": "mcpcat", "name"?, "projectId", "apiKey"?, "baseUrl", "timeoutMs"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct McpcatConfig {
    /// The API base URL (default [`DEFAULT_BASE_URL`]).
    pub base_url: String,
    /// The project the events belong to (`project_id`).
    pub project_id: String,
    /// Sent as `Authorization: Token <key>` when set (never logged, never in an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// `sdk_language` (the tracker sets it from [`TrackerConfig::sdk_language`](crate::tracking::TrackerConfig)).
    #[serde(skip)]
    pub sdk_language: String,
    /// Per-request timeout (default 10 s).
    #[serde(rename = "timeoutMs", with = "crate::millis")]
    pub timeout: Duration,
}

impl Default for McpcatConfig {
    fn default() -> Self {
        McpcatConfig::new("")
    }
}

impl McpcatConfig {
    /// The default configuration for a project.
    pub fn new(project_id: impl Into<String>) -> McpcatConfig {
        McpcatConfig {
            base_url: DEFAULT_BASE_URL.to_owned(),
            project_id: project_id.into(),
            api_key: None,
            sdk_language: "Rust".to_owned(),
            timeout: Duration::from_secs(10),
        }
    }

    /// The events endpoint.
    pub fn url(&self) -> String {
        format!("{}/v1/public/events/", self.base_url.trim_end_matches('/'))
    }

    /// Check the options (`at`: where the exporter sits in the configuration).
    pub fn check(&self, at: &str) -> Result<(), TrackingError> {
        check_url(at, "baseUrl", &self.base_url)?;
        if self.project_id.is_empty() {
            return Err(TrackingError::invalid(option_at(at, "projectId"), "must not be empty"));
        }
        if self.timeout.is_zero() {
            return Err(TrackingError::invalid(option_at(at, "timeoutMs"), "must be at least 1 ms"));
        }
        if self.api_key.as_deref().is_some_and(|k| k.is_empty() || k.contains(['\r', '\n'])) {
            return Err(TrackingError::invalid(option_at(at, "apiKey"), "must be a non-empty header value"));
        }
        Ok(())
    }
}

/// The request body: the fields of `PublishEventRequest` that mcplens fills, under the model's
/// names. `session_id` is always written: `null` for a sessionless (2026-07-28) request, as the
/// model says ("Null for stateless mode").
#[derive(Debug, Serialize)]
pub(crate) struct PublishEvent<'a> {
    id: &'a str,
    project_id: &'a str,
    session_id: Option<&'a str>,
    event_type: &'a str,
    timestamp: &'a str,
    duration: u64,
    is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    identify_actor_given_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    identify_actor_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    identify_data: Option<Value>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    tags: Map<String, Value>,
    sdk_language: &'a str,
    agentcat_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_version: Option<&'a str>,
}

/// The API's object fields take objects: anything else is wrapped as `{"value": …}`.
fn as_object(v: Option<Value>) -> Option<Value> {
    match v {
        None => None,
        Some(Value::Object(m)) => Some(Value::Object(m)),
        Some(other) => {
            let mut m = Map::new();
            m.insert("value".to_owned(), other);
            Some(Value::Object(m))
        }
    }
}

/// A tag value: at most 200 characters, no newline.
fn tag(v: &str) -> Option<Value> {
    (!v.contains(['\n', '\r'])).then(|| Value::String(v.chars().take(200).collect()))
}

/// The snake_case body for one event.
pub(crate) fn body<'a>(config: &'a McpcatConfig, item: &'a ExportItem) -> PublishEvent<'a> {
    let e: &Event = &item.event;
    let mut tags = Map::new();
    if let Some(t) = e.protocol_version.as_deref().and_then(tag) {
        tags.insert("mcplens.protocol_version".to_owned(), t);
    }
    if let Some(id) = &e.request_id {
        let text = match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Some(t) = tag(&text) {
            tags.insert("mcplens.request_id".to_owned(), t);
        }
    }
    tags.insert("mcplens.trace_id".to_owned(), Value::String(e.trace_id.clone()));
    let tokens = item.tokens.unwrap_or_default();
    PublishEvent {
        id: &e.id,
        project_id: &config.project_id,
        session_id: e.session_id.as_deref(),
        event_type: &e.event_type,
        timestamp: &e.timestamp,
        duration: e.duration_ms.round().max(0.0) as u64,
        is_error: e.is_error,
        error: e.error.as_ref().map(|err| {
            let mut m = Map::new();
            m.insert("message".to_owned(), Value::String(err.message.clone()));
            m.insert("type".to_owned(), Value::String(err.kind.clone()));
            if let Some(c) = err.code {
                m.insert("code".to_owned(), Value::from(c));
            }
            Value::Object(m)
        }),
        resource_name: e.resource_name.as_deref(),
        input_tokens: tokens.input,
        output_tokens: tokens.output,
        parameters: as_object(e.parameters.as_ref().map(|j| j.value().into_owned())),
        response: as_object(e.response.as_ref().map(|j| j.value().into_owned())),
        identify_actor_given_id: e.identity.as_ref().and_then(|i| i.id.as_deref()),
        identify_actor_name: e.identity.as_ref().and_then(|i| i.name.as_deref()),
        identify_data: e.identity.as_ref().and_then(|i| as_object(i.data.clone())),
        tags,
        sdk_language: &config.sdk_language,
        agentcat_version: format!("mcplens {}", crate::VERSION),
        server_name: e.server.as_ref().map(|s| s.name.as_str()),
        server_version: e.server.as_ref().and_then(|s| s.version.as_deref()),
        client_name: e.client.as_ref().map(|c| c.name.as_str()),
        client_version: e.client.as_ref().and_then(|c| c.version.as_deref()),
    }
}

/// The body of one event as JSON text (what the exporter posts; for tests and tools).
pub fn body_json(config: &McpcatConfig, item: &ExportItem) -> String {
    // Plain data with string keys: serializing cannot fail.
    serde_json::to_string(&body(config, item)).unwrap_or_default()
}

/// Publishes each event to the agentcat-compatible API.
#[derive(Debug)]
pub struct McpcatExporter {
    config: McpcatConfig,
    url: String,
    headers: Vec<(String, String)>,
    poster: Poster,
    buf: Vec<u8>,
}

impl McpcatExporter {
    /// An exporter for this configuration (the options are checked now).
    pub fn new(config: McpcatConfig) -> Result<McpcatExporter, TrackingError> {
        config.check("")?;
        let mut headers = Vec::new();
        if let Some(k) = &config.api_key {
            headers.push(("Authorization".to_owned(), format!("Token {k}")));
        }
        Ok(McpcatExporter { url: config.url(), poster: Poster::new(config.timeout), headers, config, buf: Vec::new() })
    }
}

impl Exporter for McpcatExporter {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        for (i, item) in batch.items().iter().enumerate() {
            self.buf.clear();
            serde_json::to_writer(&mut self.buf, &body(&self.config, item))
                .map_err(|_| ExportError::permanent("JSON encoding failed", i))?;
            self.poster.post(&self.url, "application/json", &self.headers, &self.buf, i)?;
        }
        Ok(())
    }

    fn accepts(&self, method: Method) -> bool {
        ACCEPTED_EVENT_TYPES.contains(&method.event_type())
    }

    fn needs_tokens(&self) -> bool {
        true
    }
}
