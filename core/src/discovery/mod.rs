//! Sans-IO discovery: the [`Pager`] for `resources/list` and `resources/templates/list`.
//!
//! The pager never reads a clock and never does I/O. The host drives it:
//!
//! ```
//! use std::time::Duration;
//! use mcplens::discovery::{Limits, ListKind, Outcome, Pager};
//!
//! let pages = [
//!     r#"{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"files"}],"nextCursor":"p2"}"#,
//!     r#"{"resourceTemplates":[{"uriTemplate":"db://{table}/{id}","name":"rows"}]}"#,
//! ];
//! let now = Duration::ZERO; // any monotonic reading; the host's clock, passed in
//! let mut pager = Pager::new(ListKind::ResourceTemplates, "docs", true, Limits::default(), now)?;
//! let mut answers = pages.iter();
//! while let Some(request) = pager.poll_request() {
//!     // The host sends `request.method` with `request.params_json()` and waits at most
//!     // `pager.remaining(now)`; here the answers are canned.
//!     pager.handle_outcome(Outcome::Page(answers.next().unwrap()), now)?;
//! }
//! let listing = pager.finish()?;
//! assert_eq!(listing.items.len(), 2);
//! assert_eq!(listing.diagnostics.requests, 2);
//! # Ok::<(), mcplens::DiscoveryError>(())
//! ```
//!
//! Call order: [`Pager::new`] → loop { [`Pager::poll_request`] → [`Pager::handle_outcome`] } →
//! [`Pager::finish`]. `accept` must follow each request exactly once. Any failure ends the
//! traversal: no prefix of a failed traversal is ever returned.

mod item;
mod page;
mod text;

pub(crate) use page::replace_lone_surrogates;

use crate::error::ErrorCode;
use crate::millis;
use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use item::{Annotations, Diagnostics, Item, ListKind, Resource, ResourceTemplate, Role, Roles};
pub use page::is_rfc3339_date_time;
pub use text::{Text, Verbatim};

/// Bounds on one traversal. Every bound fails the whole traversal when crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Limits {
    /// Requests per traversal; page `max_pages` must end it (default 100, at least 1).
    pub max_pages: u32,
    /// Items per traversal, counted as the servers' array lengths; exactly `max_items` is
    /// allowed (default 10,000).
    pub max_items: usize,
    /// UTF-8 bytes of projected safe metadata: the sum of the compact JSON lengths of the kept
    /// items, `server` included; exactly `max_bytes` is allowed (default 1,000,000).
    pub max_bytes: usize,
    /// Time for the complete traversal (default 60 s); more than this fails.
    #[serde(rename = "deadlineMs", with = "millis")]
    pub deadline: Duration,
    /// What a repeated cursor does (default [`RepeatedCursors::ByEra`]).
    pub repeated_cursors: RepeatedCursors,
    /// The longest `nextCursor` accepted, in UTF-8 bytes (default 65,536): a longer one is
    /// `malformed_result`. It bounds what repeat detection keeps (at most [`KEPT_CURSORS`] cursors).
    pub max_cursor_bytes: usize,
}

/// What a cursor equal to one already sent in the same traversal does (a [`Limits`] setting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepeatedCursors {
    /// By the connection's protocol era ([`Pager::with_protocol_version`]): `Fail` on revisions up to
    /// 2025-11-25, `Follow` on 2026-07-28 and later, whose spec forbids any determination from a
    /// cursor's value beyond null or not. Without a protocol version: `Fail`.
    #[default]
    ByEra,
    /// Fail the traversal with `repeated_cursor`.
    Fail,
    /// Send it again: the page, item, byte and time bounds end the traversal; each repeat is
    /// counted in [`Diagnostics::repeated_cursors`].
    Follow,
}

impl crate::error::WireName for RepeatedCursors {
    const ALL: &'static [RepeatedCursors] = &[RepeatedCursors::ByEra, RepeatedCursors::Fail, RepeatedCursors::Follow];
}

/// How many of the most recent cursors repeat detection compares with (exactly, never a hash).
pub const KEPT_CURSORS: usize = 100;

/// The `_meta` keys of protocol 2026-07-28 (SEP-2575): a request's envelope, and the stream a
/// notification belongs to.
pub mod meta {
    /// The request's protocol version.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's `Implementation` (name, version).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The client's capabilities.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The id of the `subscriptions/listen` request whose stream carries a notification.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
}

/// A protocol revision's era, as far as the client's rules differ by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// Revisions up to 2025-11-25 (the `initialize` handshake).
    Legacy,
    /// 2026-07-28 and later: sessionless, `server/discover`, change notifications on
    /// `subscriptions/listen`, cursors followed whatever their value.
    Modern,
}

impl Era {
    /// The first revision of the modern era.
    pub const MODERN_FROM: &'static str = "2026-07-28";

    /// The era of a negotiated `protocol_version` (`YYYY-MM-DD`); a version that is not a date
    /// (or none: `""`) is legacy.
    pub fn of(protocol_version: &str) -> Era {
        let b = protocol_version.as_bytes();
        let date = b.len() == 10
            && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() });
        if date && protocol_version >= Era::MODERN_FROM {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pages: 100,
            max_items: 10_000,
            max_bytes: 1_000_000,
            deadline: Duration::from_secs(60),
            repeated_cursors: RepeatedCursors::ByEra,
            max_cursor_bytes: 65_536,
        }
    }
}

impl Limits {
    /// Checks the limits themselves: at least one page, a non-zero deadline, a cursor bound of at
    /// least one byte.
    pub fn validate(&self) -> Result<(), InvalidLimits> {
        if self.max_pages == 0 {
            return Err(InvalidLimits::NoPage);
        }
        if self.deadline.is_zero() {
            return Err(InvalidLimits::NoTime);
        }
        if self.max_cursor_bytes == 0 {
            return Err(InvalidLimits::NoCursorByte);
        }
        Ok(())
    }
}

/// Why [`Limits`] are not valid ([`Limits::validate`]); its code is `invalid_argument`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidLimits {
    /// `max_pages` is 0.
    #[error("max_pages must be at least 1")]
    NoPage,
    /// The deadline is zero.
    #[error("the deadline must be greater than zero")]
    NoTime,
    /// `max_cursor_bytes` is 0.
    #[error("max_cursor_bytes must be at least 1")]
    NoCursorByte,
}

impl InvalidLimits {
    /// `invalid_argument`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgument
    }

    /// The fixed text of [`Display`](std::fmt::Display), as a static string.
    pub fn reason(&self) -> &'static str {
        match self {
            InvalidLimits::NoPage => "max_pages must be at least 1",
            InvalidLimits::NoTime => "the deadline must be greater than zero",
            InvalidLimits::NoCursorByte => "max_cursor_bytes must be at least 1",
        }
    }
}

/// Does a server's `capabilities` object (as JSON text) declare `resources`? Only such servers
/// are asked to list anything. `"resources": null` or a non-object value does not count.
pub fn has_resources_capability(capabilities_json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(capabilities_json)
        .ok()
        .is_some_and(|c| c.get("resources").is_some_and(serde_json::Value::is_object))
}

/// Is a client initialized, and does its server declare `resources`? A client is initialized once
/// its host holds the server's capabilities: from the `initialize` result (protocol revisions
/// before 2026-07-28), or, on a sessionless 2026-07-28 connection, from the `server/discover`
/// result. `capabilities_json` is that object as JSON text — `None` (or `null`) while the client
/// has neither. Discovering, refreshing or watching over a client that is not initialized is the
/// caller's mistake: [`DiscoveryError::NotInitialized`] (`invalid_argument`), in every language —
/// never an empty listing.
pub fn initialized(server: &str, capabilities_json: Option<&str>) -> Result<bool, DiscoveryError> {
    match capabilities_json.map(str::trim) {
        None | Some("null") => Err(DiscoveryError::NotInitialized { server: server.to_owned() }),
        Some(caps) => Ok(has_resources_capability(caps)),
    }
}

/// The next request the host must send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The JSON-RPC method.
    pub method: &'static str,
    /// `None` on page 1 (send no `params` key at all); otherwise the exact cursor to send as
    /// `params: {"cursor": …}` and nothing else.
    pub cursor: Option<String>,
}

impl Request {
    /// The request's `params` as compact JSON text, or `None` when it must have no `params`.
    pub fn params_json(&self) -> Option<String> {
        self.cursor.as_ref().map(|c| serde_json::json!({ "cursor": c }).to_string())
    }
}

/// What happened to the request the host sent.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The JSON-RPC `result`, as the server sent it (JSON text).
    Page(&'a str),
    /// A JSON-RPC error response; only the code is kept (the message is server text).
    RpcError {
        /// The JSON-RPC error code.
        code: i64,
    },
    /// The host's typed client refused the result's shape (e.g. rmcp's `UnexpectedResponse`).
    Malformed,
    /// The transport failed (closed, send error, decode error).
    Transport,
    /// The host's timeout on the in-flight request fired (it was given `remaining(now)`).
    TimedOut,
    /// The answer was longer than the host's bound on one message (`max_bytes`) and was dropped
    /// unread (`mcplens proxy --max-message-bytes`).
    TooLarge {
        /// The bound, in bytes.
        max_bytes: usize,
    },
}

/// The JSON-RPC code both SDKs (Python `mcp`'s `CONNECTION_CLOSED`, the TypeScript SDK's
/// `ErrorCode.ConnectionClosed`) give the error they raise for a request whose connection closed.
pub const SDK_CONNECTION_CLOSED: i64 = -32000;

/// What a host's SDK reported for a request that brought no result: the facts a binding reads off
/// its SDK's answer or exception, before any decision. [`SdkFailure::outcome`] decides, once for
/// every binding (each kept the same table before: Python's `_mcp.py`, Node's `discovery.ts`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum SdkFailure {
    /// The server's JSON-RPC error answer, as the host saw it: its `code` member when a JSON
    /// number (`None`: absent, or another type).
    ErrorAnswer {
        /// The code.
        code: Option<f64>,
    },
    /// The SDK raised its protocol error (`McpError`) carrying `code`; `connection_held`: whether
    /// the SDK still holds its connection, when the host can tell (Node: a transport is set;
    /// Python's sessions cannot say: `None`).
    SdkError {
        /// The error's code.
        code: f64,
        /// The SDK still holds its connection.
        connection_held: Option<bool>,
    },
    /// The SDK's schema validation refused the result.
    SchemaRefused,
    /// The SDK raised anything else: a closed stream, an OS error.
    Lost,
}

impl SdkFailure {
    /// The facts from their wire names: `kind` is `error_answer`, `sdk_error`, `schema_refused`
    /// or `lost`; `code` is read by the first two (an `sdk_error` without one is `lost`). Any other
    /// kind is the host's mistake about `server` (`invalid_argument`, naming the four).
    pub fn from_wire(
        server: &str,
        kind: &str,
        code: Option<f64>,
        connection_held: Option<bool>,
    ) -> Result<SdkFailure, crate::error::InvalidArgument> {
        Ok(match kind {
            "error_answer" => SdkFailure::ErrorAnswer { code },
            "sdk_error" => match code {
                Some(code) => SdkFailure::SdkError { code, connection_held },
                None => SdkFailure::Lost,
            },
            "schema_refused" => SdkFailure::SchemaRefused,
            "lost" => SdkFailure::Lost,
            _ => {
                let why = "`kind` must be \"error_answer\", \"sdk_error\", \"schema_refused\" or \"lost\"";
                return Err(crate::error::InvalidArgument::new(server, why));
            }
        })
    }

    /// What the failure is to a traversal or a read. A code that is not an integer (in `i64`) is a
    /// malformed answer. An SDK error is the transport's when the SDK no longer holds its
    /// connection — or, when the host cannot tell, when its code is both SDKs' own "connection
    /// closed" ([`SDK_CONNECTION_CLOSED`]) — else the server's JSON-RPC error. A
    /// schema refusal is malformed; anything else the SDK raised, the transport's.
    pub fn outcome(self) -> Outcome<'static> {
        let integer = |code: f64| {
            (code.fract() == 0.0 && code >= i64::MIN as f64 && code < i64::MAX as f64).then_some(code as i64)
        };
        match self {
            SdkFailure::ErrorAnswer { code } => match code.and_then(integer) {
                Some(code) => Outcome::RpcError { code },
                None => Outcome::Malformed,
            },
            SdkFailure::SdkError { connection_held: Some(false), .. } => Outcome::Transport,
            SdkFailure::SdkError { code, connection_held } => match integer(code) {
                Some(SDK_CONNECTION_CLOSED) if connection_held.is_none() => Outcome::Transport,
                Some(code) => Outcome::RpcError { code },
                None => Outcome::Malformed,
            },
            SdkFailure::SchemaRefused => Outcome::Malformed,
            SdkFailure::Lost => Outcome::Transport,
        }
    }

    /// The server's JSON-RPC error code, when the failure is one ([`Outcome::RpcError`]).
    pub fn rpc_code(self) -> Option<i64> {
        match self.outcome() {
            Outcome::RpcError { code } => Some(code),
            _ => None,
        }
    }
}

/// An [`Outcome`] that owns its page: what a host holds between receiving an answer and handing
/// it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// [`Outcome::Page`].
    Page(String),
    /// [`Outcome::RpcError`].
    RpcError(i64),
    /// [`Outcome::Malformed`].
    Malformed,
    /// [`Outcome::Transport`].
    Transport,
    /// [`Outcome::TimedOut`].
    TimedOut,
    /// [`Outcome::TooLarge`].
    TooLarge(usize),
}

impl Outcome<'_> {
    /// The owned form.
    pub fn to_fetched(&self) -> Fetched {
        match *self {
            Outcome::Page(text) => Fetched::Page(text.to_owned()),
            Outcome::RpcError { code } => Fetched::RpcError(code),
            Outcome::Malformed => Fetched::Malformed,
            Outcome::Transport => Fetched::Transport,
            Outcome::TimedOut => Fetched::TimedOut,
            Outcome::TooLarge { max_bytes } => Fetched::TooLarge(max_bytes),
        }
    }
}

impl Fetched {
    /// The borrowed form.
    pub fn as_outcome(&self) -> Outcome<'_> {
        match self {
            Fetched::Page(text) => Outcome::Page(text),
            Fetched::RpcError(code) => Outcome::RpcError { code: *code },
            Fetched::Malformed => Outcome::Malformed,
            Fetched::Transport => Outcome::Transport,
            Fetched::TimedOut => Outcome::TimedOut,
            Fetched::TooLarge(max_bytes) => Outcome::TooLarge { max_bytes: *max_bytes },
        }
    }
}

/// Why a listing is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// The server was asked and answered every page.
    Listed,
    /// The server does not declare the `resources` capability: nothing was asked.
    NoCapability,
    /// `resources/templates/list` answered `-32601` (legacy server with no templates).
    MethodNotFound,
}

/// A complete traversal's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// Which list.
    pub kind: ListKind,
    /// The host's name for the server.
    pub server: String,
    /// Projected, sanitized items in server order.
    pub items: Vec<Item>,
    /// Why the listing is what it is.
    pub support: Support,
    /// The smallest `ttlMs` any page gave (negative values count as 0); `None` when no page gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// The first page's `cacheScope`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<String>,
    /// What the traversal counted.
    pub diagnostics: Diagnostics,
}

impl Listing {
    /// An empty listing for a server without the `resources` capability.
    pub fn unsupported(kind: ListKind, server: impl Into<String>) -> Listing {
        Listing {
            kind,
            server: server.into(),
            items: Vec::new(),
            support: Support::NoCapability,
            ttl_ms: None,
            cache_scope: None,
            diagnostics: Diagnostics::default(),
        }
    }

    /// The templates of a `resources/templates/list` listing.
    pub fn templates(&self) -> impl Iterator<Item = &ResourceTemplate> {
        self.items.iter().filter_map(|i| match i {
            Item::Template(t) => Some(t),
            Item::Resource(_) => None,
        })
    }

    /// The resources of a `resources/list` listing.
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.items.iter().filter_map(|i| match i {
            Item::Resource(r) => Some(r),
            Item::Template(_) => None,
        })
    }

    /// The listing as compact JSON text (what bindings hand across their boundary).
    pub fn to_json(&self) -> String {
        // One allocation for the usual listing: the items' projected bytes, each item's `server`
        // member and separator, and the envelope (growing by doubling copied a 4 MB listing
        // about twice over).
        let per_item = self.server.len() + 16;
        let mut out = Vec::with_capacity(self.diagnostics.bytes + self.items.len() * per_item + 1024);
        serde_json::to_writer(&mut out, self).expect("a listing always serializes");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }
}

/// Why a traversal failed. Messages name the server, the list and the bound; never a cursor
/// or any text the server sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// A page broke the result schema.
    #[error("server \"{server}\": {method} returned a malformed result ({reason})", method = list.method())]
    MalformedResult {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// What was wrong (fixed text).
        reason: &'static str,
    },
    /// The server sent back a cursor it had already been sent.
    #[error("server \"{server}\": {method} repeated a cursor", method = list.method())]
    RepeatedCursor {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
    },
    /// More than `max_pages` requests would be needed.
    #[error("server \"{server}\": {method} exceeded the page limit ({max} requests)", method = list.method())]
    PageLimit {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// The bound.
        max: u32,
    },
    /// More than `max_items` items.
    #[error("server \"{server}\": {method} exceeded the item limit ({max} items)", method = list.method())]
    ItemLimit {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// The bound.
        max: usize,
    },
    /// More than `max_bytes` bytes of projected metadata.
    #[error("server \"{server}\": {method} exceeded the byte budget ({max} bytes of projected metadata)", method = list.method())]
    ByteLimit {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// The bound.
        max: usize,
    },
    /// The traversal took longer than the deadline.
    #[error("server \"{server}\": {method} exceeded the deadline ({} ms)", max.as_millis(), method = list.method())]
    Deadline {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// The bound.
        max: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("server \"{server}\": {method} failed with JSON-RPC error {code}", method = list.method())]
    ServerError {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// The JSON-RPC error code.
        code: i64,
    },
    /// The transport failed.
    #[error("server \"{server}\": {method} failed: the transport failed", method = list.method())]
    TransportError {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
    },
    /// An answer was longer than the host's bound on one message, and dropped unread.
    #[error("server \"{server}\": {method} answered with a message over {max_bytes} bytes (raise the bound with --max-message-bytes)", method = list.method())]
    MessageTooLarge {
        /// The host's name for the server.
        server: String,
        /// Which list.
        list: ListKind,
        /// The bound, in bytes.
        max_bytes: usize,
    },
    /// A limit itself is invalid.
    #[error("server \"{server}\": invalid limits: {reason}")]
    InvalidArgument {
        /// The host's name for the server.
        server: String,
        /// What is wrong (fixed text).
        reason: &'static str,
    },
    /// The client is not initialized ([`initialized`]): the caller's mistake.
    #[error(
        "server \"{server}\": invalid argument: the client is not initialized (no initialize result, nor a \
         server/discover result on a sessionless 2026-07-28 connection)"
    )]
    NotInitialized {
        /// The host's name for the server.
        server: String,
    },
    /// The host called the pager out of order (a bug in the host).
    #[error("server \"{server}\": pager used out of order: {reason}")]
    InvalidState {
        /// The host's name for the server.
        server: String,
        /// What was wrong (fixed text).
        reason: &'static str,
    },
}

impl DiscoveryError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            DiscoveryError::MalformedResult { .. } => ErrorCode::MalformedResult,
            DiscoveryError::RepeatedCursor { .. } => ErrorCode::RepeatedCursor,
            DiscoveryError::PageLimit { .. } => ErrorCode::PageLimit,
            DiscoveryError::ItemLimit { .. } => ErrorCode::ItemLimit,
            DiscoveryError::ByteLimit { .. } => ErrorCode::ByteLimit,
            DiscoveryError::Deadline { .. } => ErrorCode::Deadline,
            DiscoveryError::ServerError { .. } => ErrorCode::ServerError,
            DiscoveryError::TransportError { .. } => ErrorCode::TransportError,
            DiscoveryError::MessageTooLarge { .. } => ErrorCode::MessageTooLarge,
            DiscoveryError::InvalidArgument { .. } | DiscoveryError::NotInitialized { .. } => {
                ErrorCode::InvalidArgument
            }
            DiscoveryError::InvalidState { .. } => ErrorCode::InvalidState,
        }
    }

    /// The server the error is about.
    pub fn server(&self) -> &str {
        match self {
            DiscoveryError::MalformedResult { server, .. }
            | DiscoveryError::RepeatedCursor { server, .. }
            | DiscoveryError::PageLimit { server, .. }
            | DiscoveryError::ItemLimit { server, .. }
            | DiscoveryError::ByteLimit { server, .. }
            | DiscoveryError::Deadline { server, .. }
            | DiscoveryError::ServerError { server, .. }
            | DiscoveryError::TransportError { server, .. }
            | DiscoveryError::MessageTooLarge { server, .. }
            | DiscoveryError::InvalidArgument { server, .. }
            | DiscoveryError::NotInitialized { server }
            | DiscoveryError::InvalidState { server, .. } => server,
        }
    }

    /// The JSON-RPC code of a `server_error`.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            DiscoveryError::ServerError { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

#[derive(Debug)]
enum State {
    /// A request is to be handed out.
    Ready,
    /// A request is in flight; `accept` must follow.
    Awaiting,
    Done,
    Failed(DiscoveryError),
}

/// The sans-IO traversal of one list of one server. See the [module docs](self) for the loop.
#[derive(Debug)]
pub struct Pager {
    kind: ListKind,
    server: String,
    /// The compact JSON length of `server`, part of every item's projected bytes.
    server_len: usize,
    limits: Limits,
    started: Duration,
    state: State,
    support: Support,
    /// The cursor to send next (`None` on page 1).
    cursor: Option<String>,
    /// The most recent distinct cursors sent (at most [`KEPT_CURSORS`], each within
    /// `max_cursor_bytes`), compared exactly.
    sent: VecDeque<String>,
    /// The connection's era ([`Pager::with_protocol_version`]).
    era: Era,
    /// Items counted against `max_items` (servers' array lengths).
    seen_items: usize,
    items: Vec<Item>,
    /// The listing's text, every string of `items` in one buffer: the server's name, then each
    /// kept string as it was projected ([`Text`]).
    text: String,
    ttl_ms: Option<u64>,
    cache_scope: Option<String>,
    diagnostics: Diagnostics,
}

/// The most a parsed page reserves ahead for the listing's text (see [`Pager::handle_parsed_page`]).
const PARSED_RESERVE: usize = 4 << 20;

impl Pager {
    /// Starts a traversal of `kind` on `server` at monotonic time `now` (any epoch; only
    /// differences matter). With `resources_capability == false` no request is made and the
    /// listing is empty with [`Support::NoCapability`].
    pub fn new(
        kind: ListKind,
        server: impl Into<String>,
        resources_capability: bool,
        limits: Limits,
        now: Duration,
    ) -> Result<Pager, DiscoveryError> {
        let server = server.into();
        if let Err(e) = limits.validate() {
            return Err(DiscoveryError::InvalidArgument { server, reason: e.reason() });
        }
        Ok(Pager {
            kind,
            server_len: item::json_str_len(&server),
            text: server.clone(),
            server,
            limits,
            started: now,
            state: if resources_capability { State::Ready } else { State::Done },
            support: if resources_capability { Support::Listed } else { Support::NoCapability },
            cursor: None,
            sent: VecDeque::new(),
            era: Era::Legacy,
            seen_items: 0,
            items: Vec::new(),
            ttl_ms: None,
            cache_scope: None,
            diagnostics: Diagnostics::default(),
        })
    }

    /// The protocol revision the connection negotiated: it decides what a repeated cursor does
    /// under [`RepeatedCursors::ByEra`] (the default). Without it the pager applies the legacy rule.
    pub fn with_protocol_version(mut self, protocol_version: &str) -> Pager {
        self.era = Era::of(protocol_version);
        self
    }

    /// Which list this pager reads.
    pub fn kind(&self) -> ListKind {
        self.kind
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The next request to send, or `None` when the traversal is over (call [`Pager::finish`]).
    pub fn poll_request(&mut self) -> Option<Request> {
        match self.state {
            State::Ready => {
                self.state = State::Awaiting;
                self.diagnostics.requests += 1;
                Some(Request { method: self.kind.method(), cursor: self.cursor.clone() })
            }
            _ => None,
        }
    }

    /// Time left for the whole traversal at `now`: the host's timeout for the in-flight request.
    pub fn remaining(&self, now: Duration) -> Duration {
        self.limits.deadline.saturating_sub(now.saturating_sub(self.started))
    }

    /// True once the traversal has finished or failed.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done | State::Failed(_))
    }

    /// Feeds the answer to the request from [`Pager::poll_request`], received at `now`.
    pub fn handle_outcome(&mut self, outcome: Outcome<'_>, now: Duration) -> Result<(), DiscoveryError> {
        self.expect_answer()?;
        let result = self.accept_inner(outcome, now);
        self.settle(result)
    }

    /// [`Pager::handle_outcome`] with a page the host holds as its own parsed values instead of JSON text
    /// (Python's dicts, lists and strings, say), read through the serde deserializer `page`: the
    /// same rules, with the same outcome, as the page's JSON text. Returns `Ok(false)`, having
    /// applied nothing, when `page` meets a value it cannot present as a JSON value (a string with
    /// a lone surrogate, an integer past 64 bits): the host then hands the page's JSON text to
    /// [`Pager::handle_outcome`].
    pub fn handle_parsed_page<'de, D: serde::Deserializer<'de>>(
        &mut self,
        page: D,
        now: Duration,
    ) -> Result<bool, DiscoveryError> {
        self.parsed_page(page, now, None)
    }

    /// [`Pager::handle_parsed_page`], noting in `noted` every string of at least `min_len` bytes
    /// that the listing keeps exactly as `page` lent it (`visit_borrowed_str`): its range in the
    /// listing's text and the address of the host's UTF-8 ([`Verbatim`]). Noted only for a page
    /// that was applied; a host that hands out only its long strings as its own says how long.
    pub fn handle_parsed_page_noting<'de, D: serde::Deserializer<'de>>(
        &mut self,
        page: D,
        now: Duration,
        noted: &mut Vec<Verbatim>,
        min_len: usize,
    ) -> Result<bool, DiscoveryError> {
        self.parsed_page(page, now, Some((noted, min_len)))
    }

    fn parsed_page<'de, D: serde::Deserializer<'de>>(
        &mut self,
        page: D,
        now: Duration,
        noted: Option<(&mut Vec<Verbatim>, usize)>,
    ) -> Result<bool, DiscoveryError> {
        self.expect_answer()?;
        if let Err(e) = self.check_deadline(now) {
            return self.settle(Err(e)).map(|()| true);
        }
        let text_before = self.text.len();
        // The listing's kept strings are never longer than its byte budget; a host's values do not
        // say how long they are, so the text is given that capacity once (up to `PARSED_RESERVE`:
        // address space, touched only as it is written, and `finish` gives back what was not)
        // instead of growing, and being copied, as the strings come.
        let capacity = self.limits.max_bytes.min(PARSED_RESERVE);
        self.text.reserve(capacity.saturating_sub(self.text.len()));
        let noting = noted.as_ref().map(|(_, min_len)| *min_len);
        let ((parsed, kept), before, room, tally) = self.project(|sink| {
            sink.verbatim = noting.map(|_| Vec::new());
            sink.verbatim_min = noting.unwrap_or(0);
            (page::parse_from(page, sink), sink.verbatim.take())
        });
        let result = match parsed {
            Err(None) => {
                // Nothing applied: the host hands the text instead.
                self.items.truncate(before);
                self.text.truncate(text_before);
                return Ok(false);
            }
            Err(Some(why)) => Err(self.malformed(why)),
            Ok(raw) => self.apply_page(raw, tally, before, room, false),
        };
        let applied = result.is_ok();
        self.settle(result)?;
        if let (true, Some((noted, _)), Some(kept)) = (applied, noted, kept) {
            noted.extend(kept);
        }
        Ok(true)
    }

    fn check_deadline(&self, now: Duration) -> Result<(), DiscoveryError> {
        if now.saturating_sub(self.started) > self.limits.deadline {
            return Err(self.deadline());
        }
        Ok(())
    }

    /// Projects a page's items into the listing with `parse` (of its text, or of a host's values):
    /// what `parse` returned, the item count before the page, the item room it had, and what its
    /// items counted.
    fn project<R>(&mut self, parse: impl FnOnce(&mut page::Sink<'_>) -> R) -> (R, usize, usize, page::Tally) {
        let before = self.items.len();
        let room = self.limits.max_items.saturating_sub(self.seen_items);
        let mut sink = page::Sink::new(self.kind, &self.server, self.server_len, room, &mut self.items, &mut self.text);
        let parsed = parse(&mut sink);
        (parsed, before, room, sink.tally())
    }

    fn expect_answer(&self) -> Result<(), DiscoveryError> {
        match self.state {
            State::Awaiting => Ok(()),
            State::Failed(ref e) => Err(e.clone()),
            _ => Err(self.error_state("accept without a request in flight")),
        }
    }

    /// The state after an answer: ready for the next request, done, or failed.
    fn settle(&mut self, result: Result<bool, DiscoveryError>) -> Result<(), DiscoveryError> {
        match result {
            Ok(done) => {
                self.state = if done { State::Done } else { State::Ready };
                Ok(())
            }
            Err(e) => {
                // Nothing half-applied: a failed traversal keeps no items, nor their text.
                self.items = Vec::new();
                self.text = String::new();
                self.state = State::Failed(e.clone());
                Err(e)
            }
        }
    }

    /// Returns `Ok(true)` when the traversal is complete.
    fn accept_inner(&mut self, outcome: Outcome<'_>, now: Duration) -> Result<bool, DiscoveryError> {
        self.check_deadline(now)?;
        let text = match outcome {
            Outcome::Page(text) => text,
            Outcome::RpcError { code }
                if code == METHOD_NOT_FOUND
                    && self.kind == ListKind::ResourceTemplates
                    && self.diagnostics.pages == 0 =>
            {
                self.support = Support::MethodNotFound;
                return Ok(true);
            }
            Outcome::RpcError { code } => {
                return Err(DiscoveryError::ServerError { server: self.server.clone(), list: self.kind, code })
            }
            Outcome::Malformed => return Err(self.malformed("the host's client refused the result")),
            Outcome::Transport => {
                return Err(DiscoveryError::TransportError { server: self.server.clone(), list: self.kind })
            }
            Outcome::TimedOut => return Err(self.deadline()),
            Outcome::TooLarge { max_bytes } => {
                return Err(DiscoveryError::MessageTooLarge { server: self.server.clone(), list: self.kind, max_bytes })
            }
        };
        let fixed = page::replace_lone_surrogates(text);
        let text = fixed.as_deref().unwrap_or(text);
        // The page's kept strings are never longer than the page, nor than the byte budget left.
        self.text.reserve(text.len().min(self.limits.max_bytes.saturating_sub(self.diagnostics.bytes)));
        // Parsing projects the items into `self.items` as it goes; a failure below fails the
        // traversal, and `accept` then drops every item.
        let (parsed, before, room, tally) = self.project(|sink| page::parse(text, sink));
        let raw = parsed.map_err(|why| self.malformed(why))?;
        self.apply_page(raw, tally, before, room, fixed.is_some())
    }

    /// The rules after a page's items are projected: the item bound, the result's own fields, the
    /// items' structure and byte budget, the cursor. `fixed`: the page's text had lone surrogates
    /// replaced. Returns `Ok(true)` when the traversal is complete.
    fn apply_page(
        &mut self,
        raw: page::Page<'_>,
        tally: page::Tally,
        before: usize,
        room: usize,
        fixed: bool,
    ) -> Result<bool, DiscoveryError> {
        let page::Tally { count, bytes, item_problem, counts } = tally;

        // 1. Item bound, on the server's array length, before anything else.
        if count > room {
            return Err(DiscoveryError::ItemLimit {
                server: self.server.clone(),
                list: self.kind,
                max: self.limits.max_items,
            });
        }
        self.seen_items += count;

        // 2. Result-level fields.
        match &raw.result_type {
            page::Field::Absent => {}
            page::Field::Valid(s) if s == "complete" => {}
            _ => return Err(self.malformed("the result is not complete (resultType)")),
        }
        let next = match raw.next_cursor {
            page::Field::Absent | page::Field::Valid(None) => None,
            page::Field::Valid(Some(s)) => {
                if fixed && s.contains('\u{FFFD}') {
                    return Err(self.malformed("nextCursor cannot be sent back exactly"));
                }
                Some(s.into_owned())
            }
            page::Field::Invalid => return Err(self.malformed("nextCursor is not a string")),
        };
        match raw.ttl_ms {
            page::Field::Absent => {}
            page::Field::Valid(v) => {
                let v = v.clamp(0, i128::from(u64::MAX)) as u64;
                self.ttl_ms = Some(self.ttl_ms.map_or(v, |t| t.min(v)));
            }
            page::Field::Invalid => page::drop_field(&mut self.diagnostics, "ttlMs"),
        }
        match raw.cache_scope {
            page::Field::Absent => {}
            page::Field::Valid(s)
                if !s.is_empty()
                    && s.len() <= 32
                    && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-') =>
            {
                self.cache_scope.get_or_insert_with(|| s.into_owned());
            }
            _ => page::drop_field(&mut self.diagnostics, "cacheScope"),
        }

        // 3. Items: strict structure (the first broken item fails the page, with what the items
        // before it counted), lenient optional fields, the byte budget.
        counts.merge_into(self.kind, &mut self.diagnostics);
        if let Some(why) = item_problem {
            return Err(self.malformed(why));
        }
        if self.diagnostics.bytes + bytes > self.limits.max_bytes {
            return Err(DiscoveryError::ByteLimit {
                server: self.server.clone(),
                list: self.kind,
                max: self.limits.max_bytes,
            });
        }
        self.diagnostics.bytes += bytes;
        self.diagnostics.items += self.items.len() - before;
        self.diagnostics.pages += 1;

        // 4. Cursor rules: end, length, repeat, page bound.
        let Some(cursor) = next else { return Ok(true) };
        if cursor.len() > self.limits.max_cursor_bytes {
            return Err(self.malformed("nextCursor is longer than the cursor bound (maxCursorBytes)"));
        }
        let repeated = self.sent.contains(&cursor);
        if repeated {
            let follow = match self.limits.repeated_cursors {
                RepeatedCursors::ByEra => self.era == Era::Modern,
                RepeatedCursors::Fail => false,
                RepeatedCursors::Follow => true,
            };
            if !follow {
                return Err(DiscoveryError::RepeatedCursor { server: self.server.clone(), list: self.kind });
            }
            self.diagnostics.repeated_cursors += 1;
        }
        if self.diagnostics.requests >= self.limits.max_pages {
            return Err(DiscoveryError::PageLimit {
                server: self.server.clone(),
                list: self.kind,
                max: self.limits.max_pages,
            });
        }
        if !repeated {
            if self.sent.len() == KEPT_CURSORS {
                self.sent.pop_front();
            }
            self.sent.push_back(cursor.clone());
        }
        self.cursor = Some(cursor);
        Ok(false)
    }

    /// The listing of a complete traversal, or the error that ended it.
    pub fn finish(self) -> Result<Listing, DiscoveryError> {
        match self.state {
            State::Done => Ok(Listing {
                kind: self.kind,
                server: self.server,
                items: {
                    let mut items = self.items;
                    if !items.is_empty() {
                        // The items' pending strings move onto the listing's one buffer, no
                        // longer than its text.
                        let mut text = self.text;
                        text.shrink_to_fit();
                        let buf = std::sync::Arc::new(text);
                        items.iter_mut().for_each(|item| item.rebase(&buf));
                    }
                    items
                },
                support: self.support,
                ttl_ms: self.ttl_ms,
                cache_scope: self.cache_scope,
                diagnostics: self.diagnostics,
            }),
            State::Failed(e) => Err(e),
            State::Ready | State::Awaiting => {
                Err(DiscoveryError::InvalidState { server: self.server, reason: "finish before the traversal ended" })
            }
        }
    }

    /// The diagnostics so far (also available after a failure, for telemetry).
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    fn malformed(&self, reason: &'static str) -> DiscoveryError {
        DiscoveryError::MalformedResult { server: self.server.clone(), list: self.kind, reason }
    }

    fn deadline(&self) -> DiscoveryError {
        DiscoveryError::Deadline { server: self.server.clone(), list: self.kind, max: self.limits.deadline }
    }

    fn error_state(&self, reason: &'static str) -> DiscoveryError {
        DiscoveryError::InvalidState { server: self.server.clone(), reason }
    }
}

#[cfg(test)]
mod sdk_failure_tests {
    use super::{Outcome, SdkFailure};

    fn outcome(kind: &str, code: Option<f64>, held: Option<bool>) -> String {
        format!("{:?}", SdkFailure::from_wire("s", kind, code, held).ok().map(SdkFailure::outcome))
    }

    #[test]
    fn one_table_for_what_an_sdk_reports() {
        let rpc = |code| format!("{:?}", Some(Outcome::RpcError { code }));
        let (transport, malformed) =
            (format!("{:?}", Some(Outcome::Transport)), format!("{:?}", Some(Outcome::Malformed)));
        assert_eq!(outcome("error_answer", Some(-32601.0), None), rpc(-32601));
        assert_eq!(outcome("error_answer", Some(1.5), None), malformed);
        assert_eq!(outcome("error_answer", None, None), malformed);
        assert_eq!(outcome("error_answer", Some(1e300), None), malformed);
        // The SDKs' own "connection closed": the transport's when the host cannot tell, the
        // server's when the SDK still holds its connection (a server may answer -32000).
        assert_eq!(outcome("sdk_error", Some(-32000.0), None), transport);
        assert_eq!(outcome("sdk_error", Some(-32000.0), Some(true)), rpc(-32000));
        assert_eq!(outcome("sdk_error", Some(-32603.0), None), rpc(-32603));
        assert_eq!(outcome("sdk_error", Some(-32603.0), Some(false)), transport);
        assert_eq!(outcome("sdk_error", Some(0.5), Some(true)), malformed);
        assert_eq!(outcome("sdk_error", None, Some(true)), transport);
        assert_eq!(outcome("schema_refused", None, None), malformed);
        assert_eq!(outcome("lost", Some(3.0), None), transport);
        assert_eq!(outcome("other", None, None), "None");
        let refused = SdkFailure::from_wire("docs", "timeout", None, None).unwrap_err();
        assert_eq!(
            refused.to_string(),
            r#"server "docs": invalid argument: `kind` must be "error_answer", "sdk_error", "schema_refused" or "lost""#
        );
        assert_eq!(SdkFailure::SdkError { code: -32602.0, connection_held: None }.rpc_code(), Some(-32602));
        assert_eq!(SdkFailure::SchemaRefused.rpc_code(), None);
    }
}
