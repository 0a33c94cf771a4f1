//! The event model (schema 1): what one tracked MCP request becomes. Field by field in
//! `docs/events.md`; a test keeps that table and this serializer in step.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// The version of the event schema written in every event's `schema` field.
pub const SCHEMA_VERSION: u32 = 1;

/// The MCP request an event records: one of the methods this crate knows (codes, [`Method::code`],
/// are stable: bindings pass them), or any other request method by its JSON-RPC name
/// ([`Method::Other`]), so a server's own methods and newer revisions' still make events.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Method {
    /// `initialize`
    Initialize,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/read`
    ResourcesRead,
    /// `resources/subscribe`
    ResourcesSubscribe,
    /// `resources/unsubscribe`
    ResourcesUnsubscribe,
    /// `resources/templates/list`
    ResourcesTemplatesList,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `ping`
    Ping,
    /// `completion/complete`
    CompletionComplete,
    /// `logging/setLevel`
    LoggingSetLevel,
    /// `tasks/get`
    TasksGet,
    /// `tasks/result`
    TasksResult,
    /// `tasks/list`
    TasksList,
    /// `tasks/cancel`
    TasksCancel,
    /// `tasks/update` (2026-07-28)
    TasksUpdate,
    /// `subscriptions/listen` (2026-07-28; replaces `resources/subscribe`)
    SubscriptionsListen,
    /// `server/discover` (2026-07-28; replaces the `initialize` handshake)
    ServerDiscover,
    /// `resources/directory/read` (2026-07-28)
    ResourcesDirectoryRead,
    /// Any other request method, by its name as [`Method::from_name`] keeps it (a name outside
    /// [`MAX_METHOD_NAME`] bytes of printable ASCII is [`INVALID_METHOD_NAME`]).
    Other(Box<str>),
}

/// The longest method name an event keeps.
pub const MAX_METHOD_NAME: usize = 128;

/// What [`Method::Other`] holds for a name that is empty, longer than [`MAX_METHOD_NAME`] bytes,
/// or has a character outside printable ASCII (or `"`, `\`): the client chose it, the event
/// does not carry it.
pub const INVALID_METHOD_NAME: &str = "(invalid)";

/// The code [`Method::Other`] travels under where bindings pass a number (its name beside it).
pub const OTHER_METHOD_CODE: u8 = u8::MAX;

/// [`Method::ALL`] in one place: indexing the `const` would build (and drop) all 21 on every
/// lookup, and lookups are on the request path.
static KNOWN: [Method; 21] = Method::ALL;

/// `(JSON-RPC name, event type)` of the known methods, in code order: the one table every lookup
/// reads.
const METHODS: [(&str, &str); 21] = [
    ("initialize", "mcp:initialize"),
    ("tools/list", "mcp:tools/list"),
    ("tools/call", "mcp:tools/call"),
    ("resources/list", "mcp:resources/list"),
    ("resources/read", "mcp:resources/read"),
    ("resources/subscribe", "mcp:resources/subscribe"),
    ("resources/unsubscribe", "mcp:resources/unsubscribe"),
    ("resources/templates/list", "mcp:resources/templates/list"),
    ("prompts/list", "mcp:prompts/list"),
    ("prompts/get", "mcp:prompts/get"),
    ("ping", "mcp:ping"),
    ("completion/complete", "mcp:completion/complete"),
    ("logging/setLevel", "mcp:logging/setLevel"),
    ("tasks/get", "mcp:tasks/get"),
    ("tasks/result", "mcp:tasks/result"),
    ("tasks/list", "mcp:tasks/list"),
    ("tasks/cancel", "mcp:tasks/cancel"),
    ("tasks/update", "mcp:tasks/update"),
    ("subscriptions/listen", "mcp:subscriptions/listen"),
    ("server/discover", "mcp:server/discover"),
    ("resources/directory/read", "mcp:resources/directory/read"),
];

/// Where an event's `resourceName` comes from in the request `params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameSource {
    /// No resource name.
    None,
    /// The top-level `uri` string (a resource URI).
    Uri,
    /// The top-level `name` string (a tool or prompt name).
    Name,
    /// `ref.uri` (a `ref/resource` reference) or `ref.name` (a `ref/prompt`): `completion/complete`.
    Ref,
    /// `notifications.resourceSubscriptions[]`: every URI goes to `resourceUris`.
    Subscriptions,
}

impl Method {
    /// Every known method, in code order.
    pub const ALL: [Method; 21] = [
        Method::Initialize,
        Method::ToolsList,
        Method::ToolsCall,
        Method::ResourcesList,
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::ResourcesTemplatesList,
        Method::PromptsList,
        Method::PromptsGet,
        Method::Ping,
        Method::CompletionComplete,
        Method::LoggingSetLevel,
        Method::TasksGet,
        Method::TasksResult,
        Method::TasksList,
        Method::TasksCancel,
        Method::TasksUpdate,
        Method::SubscriptionsListen,
        Method::ServerDiscover,
        Method::ResourcesDirectoryRead,
    ];

    /// The method of a request with this JSON-RPC name: a known one, or [`Method::Other`] (with
    /// [`INVALID_METHOD_NAME`] for a name an event cannot carry).
    pub fn from_name(name: &str) -> Method {
        Method::known(name).unwrap_or_else(|| {
            let fits = !name.is_empty()
                && name.len() <= MAX_METHOD_NAME
                && name.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\');
            Method::Other(if fits { name } else { INVALID_METHOD_NAME }.into())
        })
    }

    /// The known method with this JSON-RPC name.
    pub fn known(name: &str) -> Option<Method> {
        METHODS.iter().position(|(n, _)| *n == name).map(|i| KNOWN[i].clone())
    }

    /// The known method with this numeric code ([`Method::code`]), for bindings that pass a number.
    pub fn from_code(code: u8) -> Option<Method> {
        KNOWN.get(usize::from(code)).cloned()
    }

    /// Its stable code; [`OTHER_METHOD_CODE`] for [`Method::Other`].
    pub fn code(&self) -> u8 {
        match self {
            Method::Initialize => 0,
            Method::ToolsList => 1,
            Method::ToolsCall => 2,
            Method::ResourcesList => 3,
            Method::ResourcesRead => 4,
            Method::ResourcesSubscribe => 5,
            Method::ResourcesUnsubscribe => 6,
            Method::ResourcesTemplatesList => 7,
            Method::PromptsList => 8,
            Method::PromptsGet => 9,
            Method::Ping => 10,
            Method::CompletionComplete => 11,
            Method::LoggingSetLevel => 12,
            Method::TasksGet => 13,
            Method::TasksResult => 14,
            Method::TasksList => 15,
            Method::TasksCancel => 16,
            Method::TasksUpdate => 17,
            Method::SubscriptionsListen => 18,
            Method::ServerDiscover => 19,
            Method::ResourcesDirectoryRead => 20,
            Method::Other(_) => OTHER_METHOD_CODE,
        }
    }

    /// The JSON-RPC method name.
    pub fn name(&self) -> &str {
        match self {
            Method::Other(name) => name,
            known => METHODS[usize::from(known.code())].0,
        }
    }

    /// The event `type`: `mcp:` followed by the method name.
    pub fn event_type(&self) -> Cow<'static, str> {
        match self {
            Method::Other(name) => Cow::Owned(format!("mcp:{name}")),
            known => Cow::Borrowed(METHODS[usize::from(known.code())].1),
        }
    }

    /// The method of an event `type` (`mcp:tools/call` → `tools/call`); `None` without the `mcp:`
    /// prefix.
    pub fn from_event_type(event_type: &str) -> Option<Method> {
        event_type.strip_prefix("mcp:").map(Method::from_name)
    }

    /// Which top-level `params` key names the event's `resourceName`, when it is one: the URI for
    /// read/subscribe/unsubscribe/directory read, the tool name for `tools/call`, the prompt name
    /// for `prompts/get`. (`completion/complete` and `subscriptions/listen` name theirs deeper.)
    pub fn resource_name_key(&self) -> Option<&'static str> {
        match self.name_source() {
            NameSource::Uri => Some("uri"),
            NameSource::Name => Some("name"),
            _ => None,
        }
    }

    pub(crate) fn name_source(&self) -> NameSource {
        match self {
            Method::ResourcesRead
            | Method::ResourcesSubscribe
            | Method::ResourcesUnsubscribe
            | Method::ResourcesDirectoryRead => NameSource::Uri,
            Method::ToolsCall | Method::PromptsGet => NameSource::Name,
            Method::CompletionComplete => NameSource::Ref,
            Method::SubscriptionsListen => NameSource::Subscriptions,
            _ => NameSource::None,
        }
    }

    /// The top-level `params` keys the event reads when parameters are not captured (the resource
    /// name's source and `_meta`): a host may pass only these then.
    pub fn params_read(&self) -> &'static [&'static str] {
        match self.name_source() {
            NameSource::Uri => &["uri", "_meta"],
            NameSource::Name => &["name", "_meta"],
            NameSource::Ref => &["ref", "_meta"],
            NameSource::Subscriptions => &["notifications", "_meta"],
            NameSource::None => &["_meta"],
        }
    }

    /// What of a request's `params` a host passes to [`Tracker::record`](crate::tracking::Tracker::record):
    /// all of them when parameters are captured, else only the keys the event reads
    /// ([`params_read`](Self::params_read)).
    pub fn params_projection(&self, capture_parameters: bool) -> Projection {
        if capture_parameters {
            Projection::Whole
        } else {
            Projection::Keys(self.params_read())
        }
    }

    /// What of a request's result a host passes to [`Tracker::record`](crate::tracking::Tracker::record):
    /// all of it when responses are captured; otherwise a `tools/call` result's `isError` alone
    /// (the event reads it: only the JSON `true` is a tool error), and nothing of any other.
    pub fn result_projection(&self, capture_responses: bool) -> Projection {
        match self {
            _ if capture_responses => Projection::Whole,
            Method::ToolsCall => Projection::Keys(&["isError"]),
            _ => Projection::Nothing,
        }
    }

    /// Whether `resourceName` is a resource URI (`mcp.resource.uri` in OpenTelemetry).
    pub fn names_a_uri(&self) -> bool {
        self.name_source() == NameSource::Uri
    }
}

/// What of a value (a request's `params`, its result) a host passes to the tracker: the rest is
/// never read, so a host need not copy or serialize it ([`Method::params_projection`],
/// [`Method::result_projection`]). One rule for every binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Projection {
    /// All of it.
    Whole,
    /// An object with only these of its top-level keys (those it has); a value that is not an
    /// object (an array, a string, a number, a boolean, null) passes as nothing.
    Keys(&'static [&'static str]),
    /// Nothing.
    Nothing,
}

impl Projection {
    /// The projection as JSON, for hosts that take it as data: `null` (whole), the list of keys,
    /// or `false` (nothing).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Projection::Whole => serde_json::Value::Null,
            Projection::Keys(keys) => keys.iter().map(|k| serde_json::Value::from(*k)).collect(),
            Projection::Nothing => serde_json::Value::Bool(false),
        }
    }
}

/// An event's `type`, `mcp:<method>`, as its [`Method`].
mod event_type {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Method;

    pub fn serialize<S: Serializer>(m: &Method, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&m.event_type())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Method, D::Error> {
        let t = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Method::from_event_type(&t).ok_or_else(|| serde::de::Error::custom("type does not start with mcp:"))
    }
}

/// The first protocol revision without sessions (no `initialize`, no `Mcp-Session-Id`).
pub const SESSIONLESS_SINCE: &str = "2026-07-28";

/// Whether a protocol version (`YYYY-MM-DD`) belongs to a sessionless revision: its events carry
/// no session id anywhere.
pub fn is_sessionless(protocol_version: &str) -> bool {
    let b = protocol_version.as_bytes();
    let dated = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
    dated && protocol_version >= SESSIONLESS_SINCE
}

/// A JSON payload of an event (`parameters`, `response`): a value, or, when nothing in it had to
/// change (no redaction, no cap, no binary), the compact text the host passed, kept as it was.
/// Both serialize to the same JSON; [`value`](Json::value) reads either.
#[derive(Clone)]
pub struct Json(Repr);

#[derive(Clone)]
enum Repr {
    Value(Value),
    /// Compact JSON text the builder's scan found valid (see `tracking::scan`).
    Raw(Box<str>),
}

impl Json {
    /// Text already checked to be valid JSON (the builder's scan).
    pub(crate) fn from_raw(raw: &str) -> Json {
        Json(Repr::Raw(raw.into()))
    }

    /// The value (parsed on demand when the payload was kept as text).
    pub fn value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Repr::Value(v) => Cow::Borrowed(v),
            Repr::Raw(r) => Cow::Owned(serde_json::from_str(r).unwrap_or(Value::Null)),
        }
    }

    /// The value, for changing it (a payload kept as text is parsed once, here).
    pub fn value_mut(&mut self) -> &mut Value {
        if let Repr::Raw(r) = &self.0 {
            self.0 = Repr::Value(serde_json::from_str(r).unwrap_or(Value::Null));
        }
        match &mut self.0 {
            Repr::Value(v) => v,
            Repr::Raw(_) => unreachable!("converted above"),
        }
    }

    /// The value, owned.
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(v) => v,
            Repr::Raw(r) => serde_json::from_str(&r).unwrap_or(Value::Null),
        }
    }

    /// The text as the host passed it, when the payload was kept as text.
    pub fn as_raw(&self) -> Option<&str> {
        match &self.0 {
            Repr::Raw(r) => Some(r),
            Repr::Value(_) => None,
        }
    }

    /// The value when it is one (not kept as text): what caps and redaction may change.
    pub(crate) fn as_value_mut(&mut self) -> Option<&mut Value> {
        match &mut self.0 {
            Repr::Value(v) => Some(v),
            Repr::Raw(_) => None,
        }
    }

    /// Its size as compact JSON.
    pub(crate) fn json_len(&self) -> usize {
        match &self.0 {
            Repr::Raw(r) => r.len(),
            Repr::Value(v) => serde_json::to_string(v).map_or(0, |s| s.len()),
        }
    }
}

impl From<Value> for Json {
    fn from(v: Value) -> Json {
        Json(Repr::Value(v))
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Json) -> bool {
        self.value() == other.value()
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        *self.value() == *other
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Value(v) => write!(f, "{v}"),
            Repr::Raw(r) => f.write_str(r),
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Value(v) => v.serialize(s),
            // Checked when it was kept, so this cannot fail; serde_json writes it as it is.
            Repr::Raw(r) => match serde_json::from_str::<&RawValue>(r) {
                Ok(raw) => raw.serialize(s),
                Err(e) => Err(serde::ser::Error::custom(e)),
            },
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        Value::deserialize(d).map(Json::from)
    }
}

/// How the client reaches the server, when the host knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Standard input/output of a child process (`network.transport = pipe`).
    Stdio,
    /// Streamable HTTP or SSE (`network.transport = tcp`).
    Http,
    /// In the same process (no `network.transport`).
    Memory,
}

impl Transport {
    /// The OpenTelemetry `network.transport` value, if any.
    pub fn network_transport(self) -> Option<&'static str> {
        match self {
            Transport::Stdio => Some("pipe"),
            Transport::Http => Some("tcp"),
            Transport::Memory => None,
        }
    }
}

/// A client's or server's implementation info (`clientInfo` / `serverInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeerInfo {
    /// `name`.
    pub name: String,
    /// `version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl PeerInfo {
    /// Name and optional version.
    pub fn new(name: impl Into<String>, version: Option<&str>) -> PeerInfo {
        PeerInfo { name: name.into(), version: version.map(str::to_owned) }
    }
}

/// Who is behind a session, as the host's identify hook said.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    /// The host's stable id for the user or agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Free-form data (redacted and capped like `parameters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// What kind of failure an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A `tools/call` result with `isError: true`: `"type": "tool_error"`, no `code`.
    Tool,
    /// A JSON-RPC error with this code: `"code"`, and `"type"` the code as a decimal string (the
    /// OpenTelemetry `error.type`).
    Rpc(i64),
}

impl ErrorKind {
    /// The JSON-RPC error code; `None` for a tool error.
    pub fn code(self) -> Option<i64> {
        match self {
            ErrorKind::Tool => None,
            ErrorKind::Rpc(code) => Some(code),
        }
    }

    /// The event's `error.type` (and OpenTelemetry's `error.type`).
    pub fn type_name(self) -> Cow<'static, str> {
        match self {
            ErrorKind::Tool => Cow::Borrowed("tool_error"),
            ErrorKind::Rpc(code) => Cow::Owned(code.to_string()),
        }
    }
}

/// Why an operation failed: `{"code"?, "type", "message"}` in the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// A tool error or a JSON-RPC error (its code).
    pub kind: ErrorKind,
    /// The error message (redacted; for a tool error, the result's first text block).
    pub message: String,
}

/// `ErrorInfo` as the event writes it.
#[derive(Serialize, Deserialize)]
struct ErrorWire<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<i64>,
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    message: Cow<'a, str>,
}

impl Serialize for ErrorInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let wire =
            ErrorWire { code: self.kind.code(), kind: self.kind.type_name(), message: Cow::Borrowed(&self.message) };
        wire.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ErrorInfo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ErrorInfo, D::Error> {
        let w = ErrorWire::deserialize(d)?;
        let kind = match (w.kind.as_ref(), w.code) {
            ("tool_error", None) => ErrorKind::Tool,
            (t, code) => match t.parse::<i64>() {
                Ok(n) if code.is_none_or(|c| c == n) => ErrorKind::Rpc(n),
                _ => return Err(serde::de::Error::custom("error.type is neither tool_error nor its code")),
            },
        };
        Ok(ErrorInfo { kind, message: w.message.into_owned() })
    }
}

/// Why a part of an event was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncationReason {
    /// A string over the per-string cap (32 KB by default), cut with a marker.
    StringLength,
    /// Nesting deeper than the depth cap, replaced with a marker.
    Depth,
    /// An array or object with more entries than the breadth cap; the rest replaced with a marker.
    Breadth,
    /// The event was over the event cap (100 KB by default) and this part was shrunk or removed.
    EventSize,
    /// The payload was too large to queue and never reached the worker.
    PayloadSize,
    /// The payload was not valid JSON.
    InvalidJson,
}

/// One cut, at a JSON Pointer (RFC 6901) into the event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// Where (`/parameters/arguments/text`, `/response`, …).
    pub path: String,
    /// Why.
    pub reason: TruncationReason,
    /// The size of what was there before, in bytes, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_bytes: Option<u64>,
}

/// One tracked MCP request (schema 1). See `docs/events.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Always [`SCHEMA_VERSION`].
    pub schema: u32,
    /// `evt_` + 27 base62 characters, unique per event.
    pub id: String,
    /// The request's method: `type` in the event, `mcp:<method>` (`mcp:resources/read`).
    #[serde(rename = "type", with = "event_type")]
    pub method: Method,
    /// When the request started: RFC 3339, UTC, milliseconds (`2026-01-02T03:04:05.678Z`).
    pub timestamp: String,
    /// How long the request took, in milliseconds (microsecond resolution).
    pub duration_ms: f64,
    /// `ses_` + 27 base62 characters, one per connection; absent on requests of a sessionless
    /// revision (2026-07-28 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The JSON-RPC request id (number or string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<Value>,
    /// The negotiated protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The client's `clientInfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<PeerInfo>,
    /// The server's `serverInfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<PeerInfo>,
    /// The transport, when the host knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<Transport>,
    /// The URI (read/subscribe/unsubscribe), tool name (`tools/call`) or prompt name (`prompts/get`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// The resource URIs a `subscriptions/listen` request names (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_uris: Vec<String>,
    /// The request `params` (redacted, capped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Json>,
    /// The result (redacted, capped; `resources/read` contents summarized); absent when responses are
    /// not captured or the request failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Json>,
    /// Whether the request failed (JSON-RPC error, or a tool result with `isError: true`).
    pub is_error: bool,
    /// The failure, when `isError`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Who is behind the session, when the host identified it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// W3C trace id (32 lowercase hex): the host span's ([`Operation::host_span`](crate::tracking::Operation::host_span)),
    /// else the caller's from `params._meta.traceparent`, else fresh.
    pub trace_id: String,
    /// W3C span id of this operation (16 lowercase hex).
    pub span_id: String,
    /// The host span's id, else the caller's span id from `params._meta.traceparent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<String>,
    /// Every cut made to fit the caps (empty when nothing was cut).
    pub truncated: Vec<Truncation>,
}

impl Event {
    /// Its compact JSON: the bytes `serde_json::to_string` gives (a test checks it), written
    /// directly (constant keys, payloads kept as text copied as they are).
    pub(crate) fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.json_capacity());
        self.write_json(&mut out);
        out
    }

    /// A capacity that usually holds the whole event.
    fn json_capacity(&self) -> usize {
        let json = |j: &Option<Json>| match j.as_ref().map(|j| &j.0) {
            Some(Repr::Raw(r)) => r.len(),
            Some(Repr::Value(_)) => 256,
            None => 0,
        };
        // The keys, punctuation and numbers of an event take about 330 bytes; its strings are
        // counted (an estimate short of a 600-byte event grew and copied it once per event).
        let peer =
            |p: &Option<PeerInfo>| p.as_ref().map_or(0, |p| p.name.len() + p.version.as_ref().map_or(0, String::len));
        let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        384 + self.id.len()
            + self.timestamp.len()
            + text(&self.session_id)
            + text(&self.protocol_version)
            + peer(&self.client)
            + peer(&self.server)
            + self.trace_id.len()
            + self.span_id.len()
            + text(&self.parent_span_id)
            + self.resource_name.as_ref().map_or(0, String::len)
            + self.resource_uris.iter().map(|u| u.len() + 3).sum::<usize>()
            + json(&self.parameters)
            + json(&self.response)
            + self.error.as_ref().map_or(0, |e| e.message.len() + 32)
            + 64 * self.truncated.len()
    }

    /// Append its compact JSON, field by field as the derived `Serialize` writes it.
    pub(crate) fn write_json(&self, out: &mut String) {
        out.push_str("{\"schema\":");
        write_num(out, &self.schema);
        out.push_str(",\"id\":");
        write_str(out, &self.id);
        out.push_str(",\"type\":");
        write_str(out, &self.method.event_type());
        out.push_str(",\"timestamp\":");
        write_str(out, &self.timestamp);
        out.push_str(",\"durationMs\":");
        write_num(out, &self.duration_ms);
        if let Some(v) = &self.session_id {
            out.push_str(",\"sessionId\":");
            write_str(out, v);
        }
        if let Some(v) = &self.request_id {
            out.push_str(",\"requestId\":");
            match v {
                Value::Number(n) => write_num(out, n),
                Value::String(s) => write_str(out, s),
                v => write_value(out, v),
            }
        }
        if let Some(v) = &self.protocol_version {
            out.push_str(",\"protocolVersion\":");
            write_str(out, v);
        }
        if let Some(p) = &self.client {
            out.push_str(",\"client\":");
            write_peer(out, p);
        }
        if let Some(p) = &self.server {
            out.push_str(",\"server\":");
            write_peer(out, p);
        }
        if let Some(t) = self.transport {
            out.push_str(",\"transport\":");
            out.push_str(match t {
                Transport::Stdio => "\"stdio\"",
                Transport::Http => "\"http\"",
                Transport::Memory => "\"memory\"",
            });
        }
        if let Some(r) = &self.resource_name {
            out.push_str(",\"resourceName\":");
            write_str(out, r);
        }
        if !self.resource_uris.is_empty() {
            out.push_str(",\"resourceUris\":[");
            for (n, u) in self.resource_uris.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_str(out, u);
            }
            out.push(']');
        }
        if let Some(j) = &self.parameters {
            out.push_str(",\"parameters\":");
            write_payload(out, j);
        }
        if let Some(j) = &self.response {
            out.push_str(",\"response\":");
            write_payload(out, j);
        }
        out.push_str(if self.is_error { ",\"isError\":true" } else { ",\"isError\":false" });
        if let Some(e) = &self.error {
            out.push_str(",\"error\":{");
            if let Some(code) = e.kind.code() {
                out.push_str("\"code\":");
                write_num(out, &code);
                out.push(',');
            }
            out.push_str("\"type\":");
            write_str(out, &e.kind.type_name());
            out.push_str(",\"message\":");
            write_str(out, &e.message);
            out.push('}');
        }
        if let Some(i) = &self.identity {
            out.push_str(",\"identity\":{");
            let mut first = true;
            let mut key = |out: &mut String, k: &str| {
                if !std::mem::take(&mut first) {
                    out.push(',');
                }
                out.push_str(k);
            };
            if let Some(v) = &i.id {
                key(out, "\"id\":");
                write_str(out, v);
            }
            if let Some(v) = &i.name {
                key(out, "\"name\":");
                write_str(out, v);
            }
            if let Some(v) = &i.data {
                key(out, "\"data\":");
                write_value(out, v);
            }
            out.push('}');
        }
        out.push_str(",\"traceId\":");
        write_str(out, &self.trace_id);
        out.push_str(",\"spanId\":");
        write_str(out, &self.span_id);
        if let Some(v) = &self.parent_span_id {
            out.push_str(",\"parentSpanId\":");
            write_str(out, v);
        }
        out.push_str(",\"truncated\":[");
        for (n, t) in self.truncated.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str("{\"path\":");
            write_str(out, &t.path);
            out.push_str(",\"reason\":\"");
            out.push_str(match t.reason {
                TruncationReason::StringLength => "string_length\"",
                TruncationReason::Depth => "depth\"",
                TruncationReason::Breadth => "breadth\"",
                TruncationReason::EventSize => "event_size\"",
                TruncationReason::PayloadSize => "payload_size\"",
                TruncationReason::InvalidJson => "invalid_json\"",
            });
            if let Some(n) = t.original_bytes {
                out.push_str(",\"originalBytes\":");
                write_num(out, &n);
            }
            out.push('}');
        }
        out.push_str("]}");
    }
}

/// A number, through serde_json (its formatting; `NaN` and infinities as `null`), via a stack
/// buffer.
fn write_num<T: Serialize + ?Sized>(out: &mut String, v: &T) {
    const CAP: usize = 48;
    let mut buf = [0u8; CAP];
    let mut w: &mut [u8] = &mut buf;
    let ok = serde_json::to_writer(&mut w, v).is_ok();
    let n = CAP - w.len();
    match std::str::from_utf8(&buf[..n]) {
        Ok(text) if ok => out.push_str(text),
        _ => write_value(out, v),
    }
}

/// A free-form value, through serde_json.
fn write_value<T: Serialize + ?Sized>(out: &mut String, v: &T) {
    // Serializing plain data cannot fail.
    out.push_str(&serde_json::to_string(v).unwrap_or_default());
}

fn write_payload(out: &mut String, j: &Json) {
    match &j.0 {
        Repr::Raw(r) => out.push_str(r),
        Repr::Value(v) => write_value(out, v),
    }
}

fn write_peer(out: &mut String, p: &PeerInfo) {
    out.push_str("{\"name\":");
    write_str(out, &p.name);
    if let Some(v) = &p.version {
        out.push_str(",\"version\":");
        write_str(out, v);
    }
    out.push('}');
}

/// How serde_json escapes each byte in a string: 0 = as it is, else the escape letter (`u` for
/// `\u00XX`).
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = b'u';
        c += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Writes `s` as a JSON string, escaped exactly as serde_json escapes it (for hosts that write
/// their own values as JSON text, such as the Python binding's request-path serializer).
pub fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push('"');
    let mut start = 0;
    loop {
        // The next byte to escape (`"`, `\\`, control characters: exactly the ESCAPE bytes).
        let i = find_stop(b, start);
        let Some(&c) = b.get(i) else { break };
        // `i` is at an ASCII byte, so a char boundary.
        out.push_str(&s[start..i]);
        out.push('\\');
        match ESCAPE[usize::from(c)] {
            b'u' => {
                out.push_str("u00");
                out.push(char::from(HEX[usize::from(c >> 4)]));
                out.push(char::from(HEX[usize::from(c & 15)]));
            }
            esc => out.push(char::from(esc)),
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The first byte at or after `from` that is `"`, `\` or a control character (where a JSON
/// string ends or needs an escape), or `b.len()`. Eight bytes at a time.
pub(crate) fn find_stop(b: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `v` that is zero / below 0x20. A borrow can only set bits above
    // a true hit, so the lowest bit set (bytes read little-endian) is the first true hit.
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let hits = |x: u64| {
        zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS)
    };
    let word = |chunk: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        u64::from_le_bytes(w)
    };
    let mut i = from;
    // Long strings (a resource's text, a description): 32 bytes at a time while none stops, four
    // independent words per step (each word's test is exact: no hit, no bit set).
    while let Some(chunk) = b.get(i..i + 32) {
        if hits(word(&chunk[..8])) | hits(word(&chunk[8..16])) | hits(word(&chunk[16..24])) | hits(word(&chunk[24..]))
            != 0
        {
            break;
        }
        i += 32;
    }
    while let Some(chunk) = b.get(i..i + 8) {
        let hit = hits(word(chunk));
        if hit != 0 {
            return i + (hit.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !STOP[usize::from(b[i])] {
        i += 1;
    }
    i
}

/// Bytes that end (or spoil) a string's fast scan: `"`, `\` and control characters.
const STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = c < 0x20 || c == b'"' as usize || c == b'\\' as usize;
        c += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn projections_pass_what_the_event_reads() {
        let call = Method::ToolsCall;
        assert_eq!(call.params_projection(true), Projection::Whole);
        assert_eq!(call.params_projection(false), Projection::Keys(&["name", "_meta"]));
        assert_eq!(Method::ResourcesRead.params_projection(false), Projection::Keys(&["uri", "_meta"]));
        assert_eq!(Method::from_name("x/custom").params_projection(false), Projection::Keys(&["_meta"]));
        assert_eq!(call.result_projection(true), Projection::Whole);
        assert_eq!(call.result_projection(false), Projection::Keys(&["isError"]));
        assert_eq!(Method::ResourcesRead.result_projection(false), Projection::Nothing);
        let as_json: Vec<_> = [Projection::Whole, Projection::Keys(&["isError"]), Projection::Nothing]
            .iter()
            .map(Projection::to_json)
            .collect();
        assert_eq!(as_json, [json!(null), json!(["isError"]), json!(false)]);
    }

    fn sample() -> Event {
        Event {
            schema: SCHEMA_VERSION,
            id: "evt_3b8uVMqyfTKMm6bsqsIbjuT0x8y".into(),
            method: Method::ToolsCall,
            timestamp: "2026-01-02T03:04:05.678Z".into(),
            duration_ms: 2.345,
            session_id: Some("ses_2fQzR0u6Yx6w1h6yH7rB1cP9aZk".into()),
            request_id: None,
            protocol_version: None,
            client: None,
            server: None,
            transport: None,
            resource_name: None,
            resource_uris: Vec::new(),
            parameters: None,
            response: None,
            is_error: false,
            error: None,
            identity: None,
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            span_id: "00f067aa0ba902b7".into(),
            parent_span_id: None,
            truncated: Vec::new(),
        }
    }

    #[test]
    fn direct_json_is_what_serde_writes() {
        let all_bytes: String = (0u8..0x80).map(char::from).chain("é€😀\u{7f}".chars()).collect();
        let mut events = vec![sample()];
        let mut e = sample();
        e.request_id = Some(json!("a\"b"));
        e.protocol_version = Some("2025-06-18".into());
        e.client = Some(PeerInfo::new("c\\l", Some("1")));
        e.server = Some(PeerInfo::new("srv", None));
        e.resource_name = Some(all_bytes.clone());
        e.resource_uris = vec!["a://1".into(), all_bytes.clone()];
        e.parameters = Some(Json::from_raw(r#"{"name":"x","arguments":{"a":[1, 2]}}"#));
        e.response = Some(Json::from(json!({"k": all_bytes, "n": 1.5, "z": null})));
        e.is_error = true;
        e.error = Some(ErrorInfo { kind: ErrorKind::Rpc(-32002), message: "line\nbreak\t\u{1}".into() });
        e.identity = Some(Identity { id: Some("u1".into()), name: None, data: Some(json!({"plan": "pro"})) });
        e.parent_span_id = Some("00f067aa0ba902b7".into());
        e.truncated = vec![
            Truncation {
                path: "/parameters/a~1b".into(),
                reason: TruncationReason::StringLength,
                original_bytes: Some(9),
            },
            Truncation { path: "/response".into(), reason: TruncationReason::EventSize, original_bytes: None },
        ];
        events.push(e.clone());
        for t in [Transport::Stdio, Transport::Http, Transport::Memory] {
            events.push(Event { transport: Some(t), ..sample() });
        }
        for reason in [
            TruncationReason::Depth,
            TruncationReason::Breadth,
            TruncationReason::PayloadSize,
            TruncationReason::InvalidJson,
        ] {
            events.push(Event {
                truncated: vec![Truncation { path: String::new(), reason, original_bytes: None }],
                ..sample()
            });
        }
        events.push(Event { request_id: Some(json!(7)), duration_ms: f64::NAN, session_id: None, ..sample() });
        events.push(Event { duration_ms: 1e21, identity: Some(Identity::default()), ..sample() });
        events.push(Event {
            duration_ms: 120.0,
            identity: Some(Identity { name: Some("n".into()), ..Identity::default() }),
            ..sample()
        });
        events.push(Event { error: Some(ErrorInfo { kind: ErrorKind::Tool, message: String::new() }), ..sample() });
        for e in &events {
            assert_eq!(e.to_json(), serde_json::to_string(e).unwrap());
        }
    }

    #[test]
    fn sessionless_revisions() {
        assert!(is_sessionless("2026-07-28"));
        assert!(is_sessionless("2027-01-01"));
        assert!(!is_sessionless("2025-11-25"));
        assert!(!is_sessionless("DRAFT-2026-v1"));
        assert!(!is_sessionless("2026-07-2x"));
    }

    #[test]
    fn method_names_round_trip() {
        for (i, m) in Method::ALL.iter().enumerate() {
            assert_eq!(Method::from_name(m.name()), *m);
            assert_eq!(Method::known(m.name()).as_ref(), Some(m));
            assert_eq!(Method::from_event_type(&m.event_type()).as_ref(), Some(m));
            assert_eq!(Method::from_code(i as u8).as_ref(), Some(m));
            assert_eq!(usize::from(m.code()), i);
        }
        assert_eq!(Method::known("notifications/initialized"), None);
        let other = Method::from_name("acme/search");
        assert_eq!((other.name(), other.event_type().as_ref()), ("acme/search", "mcp:acme/search"));
        assert_eq!((other.code(), Method::from_event_type("mcp:acme/search")), (OTHER_METHOD_CODE, Some(other)));
        assert_eq!(Method::from_event_type("acme/search"), None);
        assert_eq!(Method::from_code(Method::ALL.len() as u8), None);
    }
}
