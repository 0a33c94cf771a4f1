//! The MCPcat-compatible events API exporter: `POST {base}/v1/public/events/`, one event per
//! request (the API takes one), snake_case body as the `agentcat-api` `PublishEventRequest` model
//! defines it.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::http::{check_url, Poster};
use super::{Batch, Exporter};
use crate::tracking::event::Event;
use crate::tracking::TrackingError;

/// Where and how to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpcatConfig {
    /// The API base URL (default `https://api.mcpcat.io`).
    pub base_url: String,
    /// The project the events belong to (`project_id`).
    pub project_id: String,
    /// Sent as `Authorization: Token <key>` when set.
    pub api_key: Option<String>,
    /// `sdk_language` (default `rust`; bindings set `python`/`node`).
    pub sdk_language: String,
    /// Per-request timeout (default 10 s).
    pub timeout: Duration,
}

impl McpcatConfig {
    /// The default configuration for a project.
    pub fn new(project_id: impl Into<String>) -> McpcatConfig {
        McpcatConfig {
            base_url: "https://api.mcpcat.io".to_owned(),
            project_id: project_id.into(),
            api_key: None,
            sdk_language: "rust".to_owned(),
            timeout: Duration::from_secs(10),
        }
    }

    /// The events endpoint.
    pub fn url(&self) -> String {
        format!("{}/v1/public/events/", self.base_url.trim_end_matches('/'))
    }
}

/// The request body (the fields of `PublishEventRequest` that mcplens fills).
#[derive(Debug, Serialize)]
pub(crate) struct PublishEvent<'a> {
    id: &'a str,
    project_id: &'a str,
    session_id: &'a str,
    event_type: &'a str,
    timestamp: &'a str,
    duration: u64,
    is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<&'a str>,
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
    mcpcat_version: String,
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
pub(crate) fn body<'a>(config: &'a McpcatConfig, e: &'a Event) -> PublishEvent<'a> {
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
    PublishEvent {
        id: &e.id,
        project_id: &config.project_id,
        session_id: &e.session_id,
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
        parameters: as_object(e.parameters.as_ref().map(|j| j.value().into_owned())),
        response: as_object(e.response.as_ref().map(|j| j.value().into_owned())),
        identify_actor_given_id: e.identity.as_ref().and_then(|i| i.id.as_deref()),
        identify_actor_name: e.identity.as_ref().and_then(|i| i.name.as_deref()),
        identify_data: e.identity.as_ref().and_then(|i| as_object(i.data.clone())),
        tags,
        sdk_language: &config.sdk_language,
        mcpcat_version: format!("mcplens {}", crate::VERSION),
        server_name: e.server.as_ref().map(|s| s.name.as_str()),
        server_version: e.server.as_ref().and_then(|s| s.version.as_deref()),
        client_name: e.client.as_ref().map(|c| c.name.as_str()),
        client_version: e.client.as_ref().and_then(|c| c.version.as_deref()),
    }
}

/// Publishes each event to the MCPcat-compatible API.
#[derive(Debug)]
pub struct McpcatExporter {
    config: McpcatConfig,
    url: String,
    headers: Vec<(String, String)>,
    poster: Poster,
    buf: Vec<u8>,
}

impl McpcatExporter {
    /// An exporter for this configuration (the URL is checked now).
    pub fn new(name: &str, config: McpcatConfig) -> Result<McpcatExporter, TrackingError> {
        check_url("the MCPcat base URL", &config.base_url)?;
        if config.project_id.is_empty() {
            return Err(TrackingError::InvalidArgument { reason: "the MCPcat project id is empty".to_owned() });
        }
        let mut headers = Vec::new();
        if let Some(k) = &config.api_key {
            headers.push(("Authorization".to_owned(), format!("Token {k}")));
        }
        Ok(McpcatExporter {
            url: config.url(),
            poster: Poster::new(name, config.timeout),
            headers,
            config,
            buf: Vec::new(),
        })
    }
}

impl Exporter for McpcatExporter {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), TrackingError> {
        for (i, e) in batch.events().enumerate() {
            self.buf.clear();
            serde_json::to_writer(&mut self.buf, &body(&self.config, e)).map_err(|_| TrackingError::Export {
                exporter: "mcpcat".to_owned(),
                message: "JSON encoding failed".to_owned(),
                retryable: false,
                delivered: i,
                retry_after: None,
            })?;
            self.poster.post(&self.url, "application/json", &self.headers, &self.buf, i)?;
        }
        Ok(())
    }
}
