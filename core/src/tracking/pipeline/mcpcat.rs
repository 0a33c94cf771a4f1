//! The agentcat (formerly MCPcat) events API exporter: `POST {base}/v1/public/events/`, one event
//! per request (the API takes one), snake_case body exactly as `agentcat-api` 1.0.2's
//! `PublishEventRequest` model defines it (a test validates it with an unknown key failing).
//!
//! Events whose type the model's `event_type` enum does not list (`mcp:subscriptions/listen`,
//! `mcp:server/discover`, `mcp:tasks/update`, `mcp:resources/directory/read`) are not sent: the
//! tracker counts them as this exporter's `skipped` (see [`Exporter::accepts`]).

use serde::Serialize;
use serde_json::{Map, Value};

use super::config::McpcatConfig;
use super::event::Event;
use super::export::ExportItem;

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

/// The request body: the fields of `PublishEventRequest` that mcplens fills, under the model's
/// names. `session_id` is always written: `null` for a sessionless (2026-07-28) request, as the
/// model says ("Null for stateless mode").
#[derive(Debug, Serialize)]
pub(crate) struct PublishEvent<'a> {
    id: &'a str,
    project_id: &'a str,
    session_id: Option<&'a str>,
    event_type: std::borrow::Cow<'a, str>,
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
        event_type: e.method.event_type(),
        timestamp: &e.timestamp,
        duration: e.duration_ms.round().max(0.0) as u64,
        is_error: e.is_error,
        error: e.error.as_ref().map(|err| {
            let mut m = Map::new();
            m.insert("message".to_owned(), Value::String(err.message.clone()));
            m.insert("type".to_owned(), Value::String(err.kind.type_name().into_owned()));
            if let Some(c) = err.kind.code() {
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
