//! From raw parts to an [`Event`] (pure): parse, summarize, redact, hook, cap. The worker runs this
//! off the request path; tests and shared vectors run it directly with a seeded [`IdGen`].

use std::borrow::Cow;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::caps::{
    cap_value, cut_path, needs_cap, strip_binary, summarize_read_result, truncate_json_string, truncate_string,
    PayloadLimits,
};
use super::event::{
    is_sessionless, ErrorInfo, ErrorKind, Event, Identity, Json, Method, NameSource, PeerInfo, Transport, Truncation,
    TruncationReason,
};
use super::ids::{duration_ms, hex, rfc3339_millis, IdGen, TraceParent};
use super::redact::{redact_text, redact_value};
use super::scan::{scan, Kind, Scanned};
use crate::discovery::meta;
use crate::tracking::TrackingError;

/// Anything that can write itself as compact JSON (every `serde::Serialize` type can).
pub trait WriteJson {
    /// Append compact JSON to `out`.
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error>;
}

impl<T: Serialize + ?Sized> WriteJson for T {
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        serde_json::to_writer(out, self)
    }
}

/// A request's `params`, `_meta` or result, as the host has it at hand.
#[derive(Clone, Copy, Default)]
pub enum Payload<'a> {
    /// Nothing (no params, result not captured, …).
    #[default]
    None,
    /// JSON text, copied byte for byte into the queue (not parsed on the caller's thread).
    Json(&'a str),
    /// A serde_json value, written as compact JSON straight into the queue.
    Value(&'a Value),
    /// Any serializable value (e.g. an rmcp result), written as compact JSON straight into the queue.
    Serialize(&'a dyn WriteJson),
    /// The host left out a payload of this many bytes (too large to copy); the event lists the cut.
    Omitted(u64),
}

impl<'a> Payload<'a> {
    /// JSON text a host wrote, or nothing when it wrote none (JSON text is never empty).
    pub fn text(json: &'a str) -> Payload<'a> {
        if json.is_empty() {
            Payload::None
        } else {
            Payload::Json(json)
        }
    }
}

impl fmt::Debug for Payload<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::None => f.write_str("None"),
            Payload::Json(s) => write!(f, "Json({} bytes)", s.len()),
            Payload::Value(_) => f.write_str("Value(..)"),
            Payload::Serialize(_) => f.write_str("Serialize(..)"),
            Payload::Omitted(n) => write!(f, "Omitted({n})"),
        }
    }
}

impl Payload<'_> {
    /// Whether there is nothing.
    pub fn is_none(&self) -> bool {
        matches!(self, Payload::None)
    }
}

/// A JSON-RPC request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequestId<'a> {
    /// No id known.
    #[default]
    None,
    /// A numeric id.
    Number(i64),
    /// A string id.
    Text(&'a str),
}

/// A JSON-RPC error response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpcError<'a> {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The error message (redacted on the worker).
    pub message: &'a str,
}

/// A session handle's numeric key (see [`Tracker::open_session`](crate::tracking::Tracker::open_session)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SessionKey(pub u64);

/// One tracked request, as raw parts: what `Tracker::record` takes on the request path.
#[derive(Debug, Clone)]
pub struct Operation<'a> {
    /// The session (connection) it arrived on.
    pub session: SessionKey,
    /// The method.
    pub method: Method,
    /// The JSON-RPC id.
    pub request_id: RequestId<'a>,
    /// When the request started (wall clock).
    pub started_at: SystemTime,
    /// How long it took (monotonic).
    pub duration: Duration,
    /// The request `params` (with or without `_meta`).
    pub params: Payload<'a>,
    /// The request `_meta` object, when the host holds it apart from `params` (rmcp does); it is
    /// put back under `params._meta` unless `params` already has one.
    pub meta: Payload<'a>,
    /// The result, when the request succeeded and responses are captured (or for `tools/call`,
    /// where `isError` is read from it).
    pub result: Payload<'a>,
    /// The JSON-RPC error, when the request failed.
    pub error: Option<RpcError<'a>>,
    /// The host already knows the `tools/call` result has `isError: true` (needed when the result
    /// itself is not passed). Read for `tools/call` only.
    pub tool_error: bool,
    /// The span the host process already has for this request (its OpenTelemetry active span; the
    /// bindings look it up only when an OTLP exporter is configured): the event's span is its child
    /// in the same trace, and `INTERNAL` in OTLP. `params._meta.traceparent` is then not read (the
    /// host's span is the request's own, already under it).
    pub host_span: Option<TraceParent>,
}

impl<'a> Operation<'a> {
    /// An operation with no id, payloads or error.
    pub fn new(session: SessionKey, method: Method, started_at: SystemTime, duration: Duration) -> Operation<'a> {
        Operation {
            session,
            method,
            request_id: RequestId::None,
            started_at,
            duration,
            params: Payload::None,
            meta: Payload::None,
            result: Payload::None,
            error: None,
            tool_error: false,
            host_span: None,
        }
    }
}

/// What the builder knows about the session of an operation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionInfo {
    /// `ses_…`.
    pub id: String,
    /// How the client connects.
    pub transport: Option<Transport>,
    /// The client's `clientInfo` (from `initialize`).
    pub client: Option<PeerInfo>,
    /// The negotiated protocol version.
    pub protocol_version: Option<String>,
    /// Who is behind the session.
    pub identity: Option<Identity>,
}

/// A user hook applied to the strings of an event (after the built-in rules), all of one event in
/// one call (one GIL acquisition, one JS round trip): it replaces each string in place. The order
/// is fixed: `resourceName`, `resourceUris`, the strings of `parameters`, of `response`,
/// `error.message`, the strings of `identity.data`, `identity.id`, `identity.name`. Not called
/// for an event without strings. An error (or a panic) drops the event and counts it.
pub type StringHook = Arc<dyn Fn(&mut [String]) -> Result<(), TrackingError> + Send + Sync>;

/// A [`StringHook`] from a function of one string (`redact(text) -> text`).
pub fn string_hook(f: impl Fn(&str) -> Result<String, TrackingError> + Send + Sync + 'static) -> StringHook {
    Arc::new(move |strings: &mut [String]| {
        for s in strings.iter_mut() {
            *s = f(s)?;
        }
        Ok(())
    })
}

/// The token estimate agentcat uses (`ceil(utf8_bytes / 3.5)`): of a `tools/call`'s raw
/// arguments (compact JSON) and of its result's text content blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Of the request's arguments, when it has any.
    pub input: Option<u64>,
    /// Of the result's text content, when it has a result.
    pub output: Option<u64>,
}

/// `ceil(bytes / 3.5)`.
pub fn estimate_tokens(bytes: usize) -> u64 {
    (bytes as u64 * 2).div_ceil(7)
}

fn tokens_of(op: &Operation<'_>) -> Tokens {
    let mut scratch = Vec::new();
    let input = parse_payload(&op.params, "", &mut scratch)
        .and_then(|p| p.get("arguments").filter(|a| !a.is_null()).map(|a| estimate_tokens(to_json(a).len())));
    let output = if op.error.is_some() {
        None
    } else {
        parse_payload(&op.result, "", &mut scratch).and_then(|r| {
            let blocks = r.get("content")?.as_array()?;
            let bytes = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text")?.as_str())
                .map(str::len)
                .sum();
            Some(estimate_tokens(bytes))
        })
    };
    Tokens { input, output }
}

/// A user hook applied to each whole event (after string redaction): `Ok(Some(event))` keeps the
/// (possibly changed) event, `Ok(None)` drops it (counted as filtered), an error or a panic drops it
/// (counted as a redaction failure). `schema`, `id`, `type`, `timestamp`, `sessionId`, `traceId`
/// and `spanId` are restored after the hook.
pub type EventHook = Arc<dyn Fn(Event) -> Result<Option<Event>, TrackingError> + Send + Sync>;

/// How events are built.
#[derive(Clone)]
pub struct BuildConfig {
    /// Keep the request `params` (default true).
    pub capture_parameters: bool,
    /// Keep results (default true).
    pub capture_responses: bool,
    /// Keep the text of `resources/read` contents (default false: size and SHA-256 only).
    pub capture_resource_text: bool,
    /// Apply the built-in redaction rules (default true).
    pub builtin_redaction: bool,
    /// Caps.
    pub limits: PayloadLimits,
    /// The server's `serverInfo`.
    pub server: Option<PeerInfo>,
    /// The user's string hook.
    pub redact_string: Option<StringHook>,
    /// The user's event hook.
    pub redact_event: Option<EventHook>,
    /// Estimate tokens (`Built::tokens`) for the agentcat exporter (default false).
    pub estimate_tokens: bool,
}

impl Default for BuildConfig {
    fn default() -> Self {
        BuildConfig {
            capture_parameters: true,
            capture_responses: true,
            capture_resource_text: false,
            builtin_redaction: true,
            limits: PayloadLimits::default(),
            server: None,
            redact_string: None,
            redact_event: None,
            estimate_tokens: false,
        }
    }
}

impl fmt::Debug for BuildConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuildConfig")
            .field("capture_parameters", &self.capture_parameters)
            .field("capture_responses", &self.capture_responses)
            .field("capture_resource_text", &self.capture_resource_text)
            .field("builtin_redaction", &self.builtin_redaction)
            .field("limits", &self.limits)
            .field("server", &self.server)
            .field("redact_string", &self.redact_string.is_some())
            .field("redact_event", &self.redact_event.is_some())
            .finish()
    }
}

/// A built event and its JSON line (camelCase, no trailing newline).
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// The event.
    pub event: Event,
    /// Its compact JSON.
    pub json: String,
    /// The token estimate, for `tools/call` when [`BuildConfig::estimate_tokens`] is on.
    pub tokens: Option<Tokens>,
    /// The event's span is a child of the host's own span ([`Operation::host_span`]).
    pub under_host_span: bool,
}

/// Why an operation produced no event.
#[derive(Debug)]
pub enum NotBuilt {
    /// The event hook returned `None`.
    Filtered,
    /// A hook failed or panicked.
    HookFailed(TrackingError),
}

fn parse_payload(p: &Payload<'_>, what: &str, cuts: &mut Vec<Truncation>) -> Option<Value> {
    let parsed = match p {
        Payload::None => return None,
        Payload::Json(s) => serde_json::from_str::<Value>(s),
        Payload::Value(v) => Ok((*v).clone()),
        Payload::Serialize(w) => {
            let mut buf = Vec::new();
            match w.write_json(&mut buf) {
                Ok(()) => serde_json::from_slice::<Value>(&buf),
                Err(e) => Err(e),
            }
        }
        Payload::Omitted(n) => {
            cuts.push(Truncation {
                path: format!("/{what}"),
                reason: TruncationReason::PayloadSize,
                original_bytes: Some(*n),
            });
            return None;
        }
    };
    match parsed {
        Ok(v) => Some(v),
        Err(_) => {
            cuts.push(Truncation {
                path: format!("/{what}"),
                reason: TruncationReason::InvalidJson,
                original_bytes: None,
            });
            None
        }
    }
}

fn call_guarded<T>(f: impl FnOnce() -> Result<T, TrackingError>) -> Result<T, TrackingError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(TrackingError::Hook { message: "the hook panicked".to_owned() }),
    }
}

/// Every string inside a value, in document order (object values in key order).
fn strings_of<'v>(v: &'v mut Value, out: &mut Vec<&'v mut String>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter_mut().for_each(|x| strings_of(x, out)),
        Value::Object(m) => m.values_mut().for_each(|x| strings_of(x, out)),
        _ => {}
    }
}

/// Hand the strings to the hook in one call and put its answers back.
fn run_string_hook(hook: &StringHook, mut slots: Vec<&mut String>) -> Result<(), TrackingError> {
    if slots.is_empty() {
        return Ok(());
    }
    let mut texts: Vec<String> = slots.iter_mut().map(|s| std::mem::take(&mut **s)).collect();
    call_guarded(|| hook(&mut texts))?;
    for (slot, t) in slots.into_iter().zip(texts) {
        *slot = t;
    }
    Ok(())
}

fn redact_opt_string(s: &mut Option<String>) {
    if let Some(x) = s {
        if let std::borrow::Cow::Owned(r) = redact_text(x) {
            *x = r;
        }
    }
}

/// The first text block of a tool result (its error message when `isError`).
fn tool_error_message(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|b| (b.get("type")?.as_str()? == "text").then(|| b.get("text")?.as_str())?))
        .unwrap_or("tool error")
        .to_owned()
}

/// What a paging cursor becomes in an event (whatever the redaction settings).
pub const CURSOR_MARKER: &str = "[REDACTED]";

/// Cursors are opaque server state that may carry positions, filters or credentials: a request's
/// `params.cursor` and a result's `nextCursor` never reach an event.
fn hide_cursor(v: &mut Option<Value>, key: &str) {
    if let Some(Value::Object(m)) = v {
        if let Some(c) = m.get_mut(key) {
            *c = Value::String(CURSOR_MARKER.to_owned());
        }
    }
}

/// The slack allowed before redaction, so that a secret straddling the string cap is still seen
/// whole; the exact cap applies after the hooks.
const PRE_CAP_SLACK: usize = 1024;

/// Builds events from operations. Pure: ids come from the generator it owns, times from the
/// operation.
#[derive(Debug, Clone)]
pub struct EventBuilder {
    config: BuildConfig,
    ids: IdGen,
}

impl EventBuilder {
    /// A builder with this configuration and id generator.
    pub fn new(config: BuildConfig, ids: IdGen) -> EventBuilder {
        EventBuilder { config, ids }
    }

    /// The configuration.
    pub fn config(&self) -> &BuildConfig {
        &self.config
    }

    /// A payload's text, when it can be kept as it is (see [`scan`](super::scan)): never with a user
    /// string hook (it must see every string).
    fn scan<'t>(&self, text: &'t str, kind: Kind) -> Option<Scanned<'t>> {
        let cfg = &self.config;
        if cfg.redact_string.is_some() {
            return None;
        }
        scan(text, kind, &cfg.limits, cfg.builtin_redaction)
    }

    /// Build the event of one operation.
    pub fn build(&mut self, op: &Operation<'_>, session: &SessionInfo) -> Result<Built, NotBuilt> {
        let cfg = &self.config;
        let limits = cfg.limits;
        let mut cuts: Vec<Truncation> = Vec::new();

        let tokens = (cfg.estimate_tokens && op.method == Method::ToolsCall).then(|| tokens_of(op));
        let source = op.method.name_source();

        // Fast path: a payload that needs no change keeps its text (no parse, walk or re-serialize).
        let fast_params = match op.params {
            Payload::Json(t)
                if op.meta.is_none()
                    && op.method != Method::Initialize
                    && matches!(source, NameSource::None | NameSource::Uri | NameSource::Name) =>
            {
                self.scan(t, Kind::Params)
            }
            _ => None,
        };

        // Parameters: always read (resource name, trace context), kept only when captured.
        let mut params = if fast_params.is_some() { None } else { parse_payload(&op.params, "parameters", &mut cuts) };
        if let Some(meta) = parse_payload(&op.meta, "parameters/_meta", &mut cuts) {
            match &mut params {
                Some(Value::Object(m)) => {
                    m.entry("_meta").or_insert(meta);
                }
                None => {
                    let mut m = Map::new();
                    m.insert("_meta".to_owned(), meta);
                    params = Some(Value::Object(m));
                }
                Some(_) => {}
            }
        }
        let mut resource_uris: Vec<String> = Vec::new();
        let mut client = session.client.clone();
        let mut protocol_version = session.protocol_version.clone();
        let (trace_parent, mut resource_name) = match &fast_params {
            Some(peek) => (
                peek.traceparent.and_then(TraceParent::parse),
                match source {
                    NameSource::Uri => peek.uri.map(str::to_owned),
                    NameSource::Name => peek.name.map(str::to_owned),
                    _ => None,
                },
            ),
            None => {
                let meta = params.as_ref().and_then(|p| p.get("_meta"));
                let meta_str = |k: &str| meta?.get(k)?.as_str();
                // 2026-07-28 requests say their revision and client in `_meta` (SEP-2575): each
                // request's own wins over the session's.
                if let Some(v) = meta_str(meta::PROTOCOL_VERSION) {
                    protocol_version = Some(v.to_owned());
                }
                if let Some(c) = meta.and_then(|m| m.get(meta::CLIENT_INFO)) {
                    if let Ok(info) = PeerInfo::deserialize(c) {
                        client = Some(info);
                    }
                }
                let str_at = |v: Option<&Value>, k: &str| v?.get(k)?.as_str().map(str::to_owned);
                let p = params.as_ref();
                let name = match source {
                    NameSource::Uri => str_at(p, "uri"),
                    NameSource::Name => str_at(p, "name"),
                    NameSource::Ref => {
                        let r = p.and_then(|p| p.get("ref"));
                        str_at(r, "uri").or_else(|| str_at(r, "name"))
                    }
                    NameSource::Subscriptions => {
                        let uris = p
                            .and_then(|p| p.get("notifications")?.get("resourceSubscriptions")?.as_array().cloned())
                            .unwrap_or_default();
                        resource_uris = uris.into_iter().filter_map(|u| u.as_str().map(str::to_owned)).collect();
                        None
                    }
                    NameSource::None => None,
                };
                (meta_str("traceparent").and_then(TraceParent::parse), name)
            }
        };
        let mut fast_params = fast_params.map(|peek| peek.raw);
        if op.method == Method::Initialize {
            if let Some(p) = &params {
                if client.is_none() {
                    client = p.get("clientInfo").and_then(|c| serde_json::from_value::<PeerInfo>(c.clone()).ok());
                }
                if protocol_version.is_none() {
                    protocol_version = p.get("protocolVersion").and_then(Value::as_str).map(str::to_owned);
                }
            }
        }
        if !cfg.capture_parameters {
            params = None;
            fast_params = None;
        }

        // Result or error.
        let mut error = op.error.map(|e| ErrorInfo { kind: ErrorKind::Rpc(e.code), message: e.message.to_owned() });
        let mut response = None;
        let mut fast_result = None;
        if error.is_none() && cfg.capture_responses && !op.tool_error {
            if let Payload::Json(t) = op.result {
                if !matches!(op.method, Method::ResourcesRead | Method::Initialize) {
                    fast_result = self.scan(t, Kind::Result).filter(|r| r.is_error != Some(true)).map(|r| r.raw);
                }
            }
        }
        if error.is_none() && fast_result.is_none() {
            let result = parse_payload(&op.result, "response", &mut cuts);
            // Only a `tools/call` result is a tool error (a host's `tool_error` on another method,
            // or an `isError` in another result, is not: one rule whatever the host passes).
            let is_tool_error = op.method == Method::ToolsCall
                && (op.tool_error
                    || result.as_ref().and_then(|r| r.get("isError")).and_then(Value::as_bool) == Some(true));
            if is_tool_error {
                // Responses not captured: its content is not kept, nor is its text the message.
                let message = result
                    .as_ref()
                    .filter(|_| cfg.capture_responses)
                    .map(tool_error_message)
                    .unwrap_or_else(|| "tool error".to_owned());
                error = Some(ErrorInfo { kind: ErrorKind::Tool, message });
            }
            if op.method == Method::Initialize {
                if let Some(v) = result.as_ref().and_then(|r| r.get("protocolVersion")).and_then(Value::as_str) {
                    protocol_version = Some(v.to_owned());
                }
            }
            if cfg.capture_responses {
                response = result.map(|r| match op.method {
                    Method::ResourcesRead => summarize_read_result(r, cfg.capture_resource_text),
                    _ => strip_binary(r),
                });
            } else {
                cuts.retain(|c| !c.path.starts_with("/response"));
            }
        }
        hide_cursor(&mut params, "cursor");
        hide_cursor(&mut response, "nextCursor");
        let mut identity = session.identity.clone();

        // Strings cut first with slack, so that redaction and hooks never walk huge strings (a
        // payload whose whole text is shorter cannot hold one); depth and breadth are cut once,
        // after redaction, whatever form the host passed the payload in.
        let pre_max = limits.max_string_bytes + PRE_CAP_SLACK;
        let pre = PayloadLimits { max_string_bytes: pre_max, max_depth: usize::MAX, max_breadth: usize::MAX, ..limits };
        let may_be_long = |p: &Payload<'_>| match p {
            Payload::Json(s) => s.len() > pre_max,
            Payload::None | Payload::Omitted(_) => false,
            Payload::Value(_) | Payload::Serialize(_) => true,
        };
        let long_params = may_be_long(&op.params) || may_be_long(&op.meta);
        let long_response = may_be_long(&op.result);
        let mut path = String::new(); // allocated only when something is cut
        for (name, v, check) in [
            ("/parameters", params.as_mut(), long_params),
            ("/response", response.as_mut(), long_response),
            ("/identity/data", identity.as_mut().and_then(|i| i.data.as_mut()), true),
        ] {
            if let Some(v) = v.filter(|v| check && needs_cap(v, 0, &pre)) {
                path.clear();
                path.push_str(name);
                cap_value(v, &mut path, 0, &pre, &[], &mut cuts);
            }
        }
        if let Some(e) = &mut error {
            truncate_string(&mut e.message, limits.max_string_bytes + PRE_CAP_SLACK);
        }
        for r in resource_name.iter_mut().chain(resource_uris.iter_mut()) {
            truncate_string(r, limits.max_string_bytes + PRE_CAP_SLACK);
        }
        if resource_uris.len() > limits.max_breadth {
            resource_uris.truncate(limits.max_breadth);
            cuts.push(Truncation {
                path: "/resourceUris".to_owned(),
                reason: TruncationReason::Breadth,
                original_bytes: None,
            });
        }

        // Built-in redaction, then the user's string hook.
        if cfg.builtin_redaction {
            redact_opt_string(&mut resource_name);
            for u in &mut resource_uris {
                if let std::borrow::Cow::Owned(r) = redact_text(u) {
                    *u = r;
                }
            }
            for v in [params.as_mut(), response.as_mut(), identity.as_mut().and_then(|i| i.data.as_mut())]
                .into_iter()
                .flatten()
            {
                redact_value(v);
            }
            if let Some(e) = &mut error {
                if let std::borrow::Cow::Owned(r) = redact_text(&e.message) {
                    e.message = r;
                }
            }
            if let Some(i) = &mut identity {
                redact_opt_string(&mut i.name);
            }
        }
        if let Some(hook) = &cfg.redact_string {
            let mut slots: Vec<&mut String> = Vec::new();
            slots.extend(resource_name.as_mut());
            slots.extend(resource_uris.iter_mut());
            for v in [params.as_mut(), response.as_mut()].into_iter().flatten() {
                strings_of(v, &mut slots);
            }
            if let Some(e) = &mut error {
                slots.push(&mut e.message);
            }
            if let Some(i) = &mut identity {
                if let Some(d) = &mut i.data {
                    strings_of(d, &mut slots);
                }
                slots.extend(i.id.as_mut());
                slots.extend(i.name.as_mut());
            }
            run_string_hook(hook, slots).map_err(NotBuilt::HookFailed)?;
        }

        let trace_parent = op.host_span.or(trace_parent);
        let trace_id = trace_parent.map(|t| t.trace_id).unwrap_or_else(|| self.ids.trace_id());
        let span_id = self.ids.span_id();
        let mut event = Event {
            schema: super::event::SCHEMA_VERSION,
            id: self.ids.event_id(),
            method: op.method.clone(),
            timestamp: rfc3339_millis(op.started_at),
            duration_ms: duration_ms(op.duration),
            // A sessionless revision's request belongs to no session.
            session_id: match &protocol_version {
                Some(v) if is_sessionless(v) => None,
                _ => Some(session.id.clone()),
            },
            request_id: match op.request_id {
                RequestId::None => None,
                RequestId::Number(n) => Some(Value::from(n)),
                RequestId::Text(s) => Some(Value::String(s.to_owned())),
            },
            protocol_version,
            client,
            server: cfg.server.clone(),
            transport: session.transport,
            resource_name,
            resource_uris,
            parameters: fast_params.map(Json::from_raw).or(params.map(Json::from)),
            response: fast_result.map(Json::from_raw).or(response.map(Json::from)),
            is_error: error.is_some(),
            error,
            identity,
            trace_id: hex(&trace_id),
            span_id: hex(&span_id),
            parent_span_id: trace_parent.map(|t| hex(&t.parent_span_id)),
            truncated: Vec::new(),
        };

        if let Some(hook) = &cfg.redact_event {
            let keep = (
                event.schema,
                event.id.clone(),
                event.method.clone(),
                event.timestamp.clone(),
                event.session_id.clone(),
                event.trace_id.clone(),
                event.span_id.clone(),
            );
            match call_guarded(|| hook(event)) {
                Ok(Some(mut e)) => {
                    (e.schema, e.id, e.method, e.timestamp, e.session_id, e.trace_id, e.span_id) = keep;
                    event = e;
                }
                Ok(None) => return Err(NotBuilt::Filtered),
                Err(e) => return Err(NotBuilt::HookFailed(e)),
            }
        }

        // Exact caps, then the event-size cap.
        cap_all(&mut event.parameters, &mut event.response, &mut event.identity, &limits, &[], &mut cuts);
        for_each_text(&mut event, |path, s| {
            if let Some(n) = truncate_string(s, limits.max_string_bytes) {
                cuts.push(Truncation {
                    path: path.into(),
                    reason: TruncationReason::StringLength,
                    original_bytes: Some(n as u64),
                });
            }
        });
        dedupe(&mut cuts);
        let hook_cuts = std::mem::take(&mut event.truncated);
        cuts.extend(hook_cuts.into_iter().map(|c| Truncation { path: cut_path(&c.path), ..c }));
        event.truncated = cuts;
        let json = fit_event(&mut event, &limits);
        Ok(Built { event, json, tokens, under_host_span: op.host_span.is_some() })
    }
}

fn cap_all(
    params: &mut Option<Json>,
    response: &mut Option<Json>,
    identity: &mut Option<Identity>,
    limits: &PayloadLimits,
    earlier: &[Truncation],
    cuts: &mut Vec<Truncation>,
) {
    let mut path = String::new(); // allocated only when something is cut
    let values = [
        ("/parameters", params.as_mut().and_then(Json::as_value_mut)),
        ("/response", response.as_mut().and_then(Json::as_value_mut)),
        ("/identity/data", identity.as_mut().and_then(|i| i.data.as_mut())),
    ];
    for (name, v) in values {
        if let Some(v) = v {
            if !needs_cap(v, 0, limits) {
                continue;
            }
            path.clear();
            path.push_str(name);
            cap_value(v, &mut path, 0, limits, earlier, cuts);
        }
    }
}

/// Call `f` on each string of the event outside its payloads that a client, the host or a hook
/// chose, with its JSON Pointer: the string caps apply to them as to payload strings.
fn for_each_text(e: &mut Event, mut f: impl FnMut(Cow<'static, str>, &mut String)) {
    let mut f = |p: &'static str, s: &mut String| f(Cow::Borrowed(p), s);
    if let Some(er) = &mut e.error {
        f("/error/message", &mut er.message);
    }
    if let Some(r) = &mut e.resource_name {
        f("/resourceName", r);
    }
    // One pointer for all of them: the list is short and `truncated` says which part was cut.
    for u in e.resource_uris.iter_mut() {
        f("/resourceUris", u);
    }
    if let Some(Value::String(id)) = &mut e.request_id {
        f("/requestId", id);
    }
    if let Some(v) = &mut e.protocol_version {
        f("/protocolVersion", v);
    }
    for (name, version, peer) in
        [("/client/name", "/client/version", &mut e.client), ("/server/name", "/server/version", &mut e.server)]
    {
        if let Some(p) = peer {
            f(name, &mut p.name);
            if let Some(v) = &mut p.version {
                f(version, v);
            }
        }
    }
    if let Some(i) = &mut e.identity {
        if let Some(id) = &mut i.id {
            f("/identity/id", id);
        }
        if let Some(n) = &mut i.name {
            f("/identity/name", n);
        }
    }
    if let Some(p) = &mut e.parent_span_id {
        f("/parentSpanId", p);
    }
}

/// One entry per (path, reason): the first (which saw the original size) wins.
fn dedupe(cuts: &mut Vec<Truncation>) {
    if cuts.len() < 2 {
        return;
    }
    let mut seen = std::collections::HashSet::new();
    cuts.retain(|c| seen.insert((c.path.clone(), c.reason)));
}

/// Most `truncated` entries kept; the rest are summarized in one entry at `/truncated`.
const MAX_CUTS: usize = 100;

/// Serialize, shrinking the event until it fits `max_event_bytes`: tighter payload caps, then
/// payloads replaced by markers, then shorter strings, then fewer `truncated` entries.
fn fit_event(event: &mut Event, limits: &PayloadLimits) -> String {
    if event.truncated.len() > MAX_CUTS {
        event.truncated.truncate(MAX_CUTS);
        event.truncated.push(cuts_summary());
    }
    let max = limits.max_event_bytes.max(4096);
    let mut json = event.to_json();
    if json.len() <= max {
        return json;
    }
    // 1. Tighter caps on the payloads.
    let tight = PayloadLimits {
        max_string_bytes: 1024.min(limits.max_string_bytes),
        max_depth: 5.min(limits.max_depth),
        max_breadth: 20.min(limits.max_breadth),
        max_event_bytes: max,
    };
    let earlier = event.truncated.clone();
    // A payload kept as the host's text is within the normal caps, not these: cut it as a value.
    for j in [event.parameters.as_mut(), event.response.as_mut()].into_iter().flatten() {
        j.value_mut();
    }
    let mut cuts = Vec::new();
    cap_all(&mut event.parameters, &mut event.response, &mut event.identity, &tight, &earlier, &mut cuts);
    for c in cuts {
        event.truncated.push(Truncation { reason: TruncationReason::EventSize, ..c });
    }
    dedupe(&mut event.truncated);
    json = event.to_json();
    // 2. Then drop whole parts, largest offenders first; the entries under a dropped part go too.
    for part in ["/response", "/parameters", "/identity/data"] {
        if json.len() <= max {
            return json;
        }
        let dropped = match part {
            "/response" => replace_with_marker(&mut event.response),
            "/parameters" => replace_with_marker(&mut event.parameters),
            _ => event.identity.as_mut().and_then(|i| i.data.take()).map(|d| to_json(&d).len() as u64),
        };
        if let Some(n) = dropped {
            event.truncated.retain(|c| !(c.path.starts_with(part) && c.path[part.len()..].starts_with('/')));
            event.truncated.push(Truncation {
                path: part.to_owned(),
                reason: TruncationReason::EventSize,
                original_bytes: Some(n),
            });
            json = event.to_json();
        }
    }
    // 3. Then shorter strings, measured as JSON (escapes count).
    for bound in [1024, 128] {
        if json.len() <= max {
            return json;
        }
        let mut cuts = Vec::new();
        if matches!(event.request_id, Some(Value::Array(_) | Value::Object(_))) {
            // Only an event hook can put a container there.
            event.request_id = Some(Value::String("[truncated: over the event size cap]".to_owned()));
            cuts.push(Truncation {
                path: "/requestId".to_owned(),
                reason: TruncationReason::EventSize,
                original_bytes: None,
            });
        }
        for_each_text(event, |path, s| {
            if let Some(n) = truncate_json_string(s, bound) {
                cuts.push(Truncation {
                    path: path.into_owned(),
                    reason: TruncationReason::EventSize,
                    original_bytes: Some(n as u64),
                });
            }
        });
        event.truncated.extend(cuts);
        dedupe(&mut event.truncated);
        json = event.to_json();
    }
    // 4. Last, only as many `truncated` entries as fit, and one that says some were left out.
    if json.len() > max {
        let mut over = json.len() - max + to_json(&cuts_summary()).len() + 1;
        while over > 0 {
            let Some(c) = event.truncated.pop() else { break };
            over = over.saturating_sub(to_json(&c).len() + 1);
        }
        event.truncated.push(cuts_summary());
        json = event.to_json();
    }
    json
}

/// The entry that stands for `truncated` entries left out.
fn cuts_summary() -> Truncation {
    Truncation { path: "/truncated".to_owned(), reason: TruncationReason::Breadth, original_bytes: None }
}

fn replace_with_marker(v: &mut Option<Json>) -> Option<u64> {
    let old = v.take()?;
    let n = old.json_len() as u64;
    *v = Some(Json::from(Value::String(format!("[truncated: {n} bytes, over the event size cap]"))));
    Some(n)
}

fn to_json<T: Serialize + ?Sized>(v: &T) -> String {
    // Serializing plain data (strings, numbers, maps with string keys) cannot fail.
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::UNIX_EPOCH;

    fn op<'a>(method: Method, params: Payload<'a>, result: Payload<'a>) -> Operation<'a> {
        Operation {
            params,
            result,
            request_id: RequestId::Number(7),
            ..Operation::new(
                SessionKey(1),
                method,
                UNIX_EPOCH + Duration::from_secs(1_767_323_045),
                Duration::from_micros(1500),
            )
        }
    }

    fn session() -> SessionInfo {
        SessionInfo { id: "ses_000000000000000000000000001".into(), ..SessionInfo::default() }
    }

    #[test]
    fn tool_error_from_result() {
        let mut b = EventBuilder::new(BuildConfig::default(), IdGen::seeded(1));
        let r = r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#;
        let built =
            b.build(&op(Method::ToolsCall, Payload::Json(r#"{"name":"echo"}"#), Payload::Json(r)), &session()).unwrap();
        let e = built.event;
        assert!(e.is_error);
        assert_eq!(e.error.unwrap(), ErrorInfo { kind: ErrorKind::Tool, message: "boom".into() });
        assert_eq!(e.resource_name.as_deref(), Some("echo"));
        assert_eq!(e.duration_ms, 1.5);
    }

    #[test]
    fn rpc_error_and_invalid_json() {
        let mut b = EventBuilder::new(BuildConfig::default(), IdGen::seeded(1));
        let mut o = op(Method::ResourcesRead, Payload::Json("{not json"), Payload::None);
        o.error = Some(RpcError { code: -32002, message: "Resource not found: https://x/y?token=abc" });
        let e = b.build(&o, &session()).unwrap().event;
        let err = e.error.unwrap();
        assert_eq!(err.kind, ErrorKind::Rpc(-32002));
        assert_eq!((err.kind.code(), err.kind.type_name().as_ref()), (Some(-32002), "-32002"));
        assert_eq!(err.message, "Resource not found: https://x/y?token=[REDACTED]");
        assert_eq!(e.truncated[0].reason, TruncationReason::InvalidJson);
        assert!(e.resource_name.is_none());
    }

    #[test]
    fn event_size_cap() {
        let limits = PayloadLimits { max_event_bytes: 8192, ..PayloadLimits::default() };
        let mut b = EventBuilder::new(BuildConfig { limits, ..BuildConfig::default() }, IdGen::seeded(1));
        let big: Vec<String> = (0..90).map(|i| format!("{i}-{}", "x".repeat(500))).collect();
        let params = json!({"name": "t", "arguments": {"items": big}});
        let built = b.build(&op(Method::ToolsCall, Payload::Value(&params), Payload::None), &session()).unwrap();
        assert!(built.json.len() <= 8192, "{}", built.json.len());
        assert!(built.event.truncated.iter().any(|c| c.reason == TruncationReason::EventSize));
        assert_eq!(serde_json::from_str::<Event>(&built.json).unwrap(), built.event);
    }
}
