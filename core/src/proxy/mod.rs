//! The proxy's rules: [`Proxy`], one sans-IO machine between an MCP host and one upstream MCP
//! server, for `mcplens proxy` (the CLI is its driver).
//!
//! The host talks to the proxy as to the server; every JSON-RPC message is relayed unchanged
//! except what the proxy owns or must rewrite:
//!
//! - the `initialize` (or `server/discover`) result: when the upstream declares `resources` but no
//!   `tools`, `"tools":{"listChanged":true}` is spliced into its `capabilities` (every other byte
//!   kept), so the host asks for tools;
//! - `tools/list` results (first page only): the visible resource tools
//!   ([`Catalog::visible_tools`](crate::catalog::Catalog::visible_tools)), named with the
//!   configured prefix, are spliced at the end of `tools` (the upstream's tools are kept byte for
//!   byte); when the proxy added the `tools` capability, it answers `tools/list` itself;
//! - `tools/call` of those names: answered by the proxy from its catalog ([`crate::tool`]); a
//!   read goes upstream as `resources/read`, a completion as `completion/complete`
//!   ([`ServerCall`]);
//! - the proxy's own upstream requests (the [`Refresher`]'s traversals, reads): their ids are
//!   strings `"mcplens-proxy-N"` never in use by a host request in flight; a host request whose id
//!   equals one of the proxy's ids in flight is relayed under a fresh id (its answer mapped back),
//!   so ids never collide in either direction;
//! - `notifications/tools/list_changed` to the host when the proxy's tools appear or go after
//!   the host listed tools.
//!
//! An upstream `notifications/resources/list_changed` is relayed and refreshes the catalog
//! ([`Refresher::handle_list_changed`], as a watch does).
//!
//! On a 2026-07-28 connection (the host began with `server/discover`) the proxy speaks that
//! revision itself: its own requests carry the host's `_meta` envelope (protocol version, client
//! info and capabilities, as the host sent them with `server/discover`); its own results carry
//! `resultType` (and a `tools/list` it answers `ttlMs: 0`, `cacheScope: "private"`); the
//! upstream's name comes from the result's `_meta` serverInfo. Change notifications come only on
//! a `subscriptions/listen` stream, so the proxy opens its own (resources list changes only) when
//! the refresher says the upstream offers them ([`Notifications::Listening`]): everything
//! stamped with that stream's id (its acknowledgement, its notifications, its end) is the
//! proxy's and never reaches the host. A refusal goes to [`Refresher::handle_listen_closed`] (-32601:
//! not offered; any other: a [`ProxyAction::Notice`]), as does a stream that ends after its
//! acknowledgement (the upstream stays: the pair is re-listed). The host's own streams are relayed; its
//! `notifications/tools/list_changed` goes only on a stream of the host's that asked for
//! `toolsListChanged`, stamped with that stream's id. Every relayed host request whose method is
//! a tracked [`Method`] becomes a [`ProxyAction::Track`] when its answer comes back (client: the
//! host's `clientInfo`; server: the upstream's `serverInfo`, in [`ProxyAction::Initialized`]);
//! so do the proxy's own tool calls.
//!
//! Call order (quinn-proto's shape: events in, actions out, time passed in):
//!
//! ```text
//! proxy = Proxy::new(config)?
//! loop {
//!     line from the host      → match proxy.handle_host(line, now) { Forward → write line to upstream, Consumed → () }
//!     line from the upstream  → match proxy.handle_upstream(line, now) { Forward → write line to host, Consumed → () }
//!     proxy.poll_timeout() due → proxy.handle_timeout(now)
//!     while let Some(action) = proxy.poll_action() { ToHost / ToUpstream: write; Initialized / Track: the tracker }
//! }
//! ```
//!
//! A line is one JSON-RPC message (newline-delimited, as MCP's stdio transport frames them), given
//! without its newline. Lines that are not JSON objects (batches, garbage) are forwarded untouched
//! and not tracked: the peer decides what they are.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::catalog::{
    Action, CallerId, Epoch, ListenClosed, Liveness, Notifications, PairTraversal, RefreshConfig, Refresher,
    TraversalError, Want,
};
use crate::discovery::{meta, Era, Limits, Outcome};
use crate::error::ErrorCode;
use crate::tool::{
    self, CallConfig, CompleteConfig, CompleteInput, Input, ReadConfig, ReadInput, ServerCall, ToolError,
};
use crate::tracking::{Method, PeerInfo};

/// The default prefix of the proxy's tool names (`mcplens_ListMcpResourcesTool`, …).
pub const DEFAULT_TOOL_PREFIX: &str = "mcplens_";

/// The prefix of the ids of the proxy's own upstream requests.
pub const OWN_ID_PREFIX: &str = "mcplens-proxy-";

/// The longest tool-name prefix accepted (MCP tool names are at most 128 characters).
pub const MAX_TOOL_PREFIX: usize = 64;

/// The JSON-RPC error code of the answers the proxy gives the upstream's requests when the host
/// ends (the TypeScript SDK's `ConnectionClosed`).
pub const HOST_ENDED_CODE: i64 = -32000;

/// The most upstream requests to the host remembered as unanswered (the oldest is forgotten).
const MAX_UPSTREAM_REQUESTS: usize = 1024;

/// The capability spliced into an `initialize` result that declares `resources` but no `tools`.
const TOOLS_CAPABILITY: &str = r#""tools":{"listChanged":true}"#;

/// The notification sent to the host when the proxy's tools appear or go.
const TOOLS_LIST_CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

/// The proxy's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyConfig {
    /// Add the resource tools (`--no-tools`: false; relay and tracking only).
    pub tools: bool,
    /// Emit [`ProxyAction::Track`] (`--no-tracking`: false).
    pub tracking: bool,
    /// Prepended to the resource tools' names so they cannot collide with the upstream's.
    pub tool_prefix: String,
    /// The upstream's name in the catalog and the tools' output (default: its `serverInfo.name`,
    /// as a label).
    pub server: Option<String>,
    /// Bounds of each traversal.
    pub limits: Limits,
    /// The read tool's settings (output cap [`DEFAULT_READ_OUTPUT_CHARS`] by default:
    /// `--max-read-chars`).
    pub read: ReadConfig,
    /// The completion tool's settings.
    pub complete: CompleteConfig,
    /// The refresher's settings.
    pub refresh: RefreshConfig,
    /// Seeds the refresher's retry jitter.
    pub seed: u64,
    /// The longest message the driver relays, in bytes, either way (`--max-message-bytes`): a
    /// longer one is dropped unread, and the request it belongs to answered with an error
    /// ([`Proxy::handle_host_oversize`], [`Proxy::handle_upstream_oversize`]).
    pub max_message_bytes: usize,
}

/// The proxy's default read output cap ([`ProxyConfig::read`]), in characters: what every host
/// measured passes on to its model whole (Codex CLI keeps about 12,000 characters of a tool
/// result, Gemini CLI about 40,000; Claude Code shows the model a 2 KB preview, opencode a number
/// of lines: the note and sizes come first, so they see them). The bindings' tools, whose output
/// reaches the model directly, keep [`tool::MAX_OUTPUT_CHARS`].
pub const DEFAULT_READ_OUTPUT_CHARS: usize = 10_000;

/// The default [`ProxyConfig::max_message_bytes`]: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The JSON-RPC error code of the answers the proxy gives for a message dropped for its size
/// (JSON-RPC's "internal error": the message was valid, the proxy could not carry it).
pub const TOO_LARGE_CODE: i64 = -32603;

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            tools: true,
            tracking: true,
            tool_prefix: DEFAULT_TOOL_PREFIX.to_owned(),
            server: None,
            limits: Limits::default(),
            read: ReadConfig { max_output_chars: DEFAULT_READ_OUTPUT_CHARS, ..ReadConfig::default() },
            complete: CompleteConfig::default(),
            refresh: RefreshConfig::default(),
            seed: 0,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// Why a [`ProxyConfig`] is not valid; its code is `invalid_argument`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// A setting is out of its bounds (the message names it, never a value the user gave).
    #[error("invalid proxy setting: {reason}")]
    InvalidArgument {
        /// What is wrong (fixed text).
        reason: &'static str,
    },
}

impl ProxyError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            ProxyError::InvalidArgument { .. } => ErrorCode::InvalidArgument,
        }
    }
}

impl ProxyConfig {
    /// Checks the settings: the prefix holds only `A-Z a-z 0-9 _ - .` and is at most
    /// [`MAX_TOOL_PREFIX`] bytes; the server name is not empty; limits, read and refresh settings
    /// within their own bounds.
    pub fn validate(&self) -> Result<(), ProxyError> {
        let bad = |reason| Err(ProxyError::InvalidArgument { reason });
        if self.tool_prefix.len() > MAX_TOOL_PREFIX {
            return bad("the tool prefix is longer than 64 bytes");
        }
        if !self.tool_prefix.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
            return bad("the tool prefix may hold only A-Z, a-z, 0-9, '_', '-' and '.'");
        }
        if self.max_message_bytes < 1024 {
            return bad("the message bound must be at least 1024 bytes");
        }
        if self.server.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return bad("the server name must not be empty");
        }
        if self.limits.validate().is_err() {
            return bad("the traversal limits are out of bounds");
        }
        if self.read.validate().is_err() {
            return bad("the read settings are out of bounds");
        }
        if self.complete.validate().is_err() {
            return bad("the completion settings are out of bounds");
        }
        if self.refresh.validate().is_err() {
            return bad("the refresh settings are out of bounds");
        }
        Ok(())
    }
}

/// What the driver does with the line it handed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub enum Verdict {
    /// Write it, unchanged, to the other side.
    Forward,
    /// The proxy took it (an answer may follow as a [`ProxyAction`]).
    Consumed,
}

/// A JSON-RPC request id, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrackedId {
    /// A number.
    Number(i64),
    /// A string (or any other id, as its JSON text).
    Text(String),
}

/// One request as the tracker records it (the driver turns it into an
/// [`Operation`](crate::tracking::Operation)).
#[derive(Debug, Clone, PartialEq)]
pub struct TrackRecord {
    /// The method.
    pub method: Method,
    /// The host's id.
    pub request_id: TrackedId,
    /// When the request came from the host (the driver's monotonic clock, as passed in).
    pub started: Duration,
    /// How long until its answer.
    pub duration: Duration,
    /// The request's `params` (JSON text), when it had some.
    pub params: Option<String>,
    /// The `result` (JSON text), when it succeeded.
    pub result: Option<String>,
    /// The JSON-RPC error (code, message), when it failed.
    pub error: Option<(i64, String)>,
}

/// What the driver must do.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProxyAction {
    /// Write this line to the host.
    ToHost(String),
    /// Write this line to the upstream.
    ToUpstream(String),
    /// The handshake finished: the upstream's `serverInfo`, the host's `clientInfo`, the protocol
    /// revision. Comes once (tracking or not), before the `initialize` request's
    /// [`ProxyAction::Track`].
    Initialized {
        /// The upstream's `serverInfo`.
        server: PeerInfo,
        /// The host's `clientInfo`.
        client: Option<PeerInfo>,
        /// The negotiated revision.
        protocol_version: Option<String>,
    },
    /// Record this request.
    Track(TrackRecord),
    /// Something the operator should know (the driver prints it; never sent to the host): the
    /// proxy's own `subscriptions/listen` stream was refused or ended.
    Notice(String),
}

/// One of the proxy's tools, as MCP's `tools/list` describes it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OwnTool {
    /// Its name in the core ([`crate::catalog::RESOURCE_TOOLS`]).
    #[serde(skip)]
    bare: &'static str,
    /// Its name now ([`own_tool_name`]).
    name: String,
    description: &'static str,
    input_schema: Value,
    annotations: Value,
}

impl OwnTool {
    fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a tool always serializes")
    }
}

/// The name of the proxy's tool `bare` when the upstream has the tools `taken`: `{prefix}{bare}`,
/// or, when the upstream has a tool of that name, the first of `{prefix}{bare}_2`,
/// `{prefix}{bare}_3`, … it has not. The upstream's tool keeps its name and is reached as it is:
/// a proxy tool never shadows or duplicates one.
pub fn own_tool_name(prefix: &str, bare: &str, taken: impl Fn(&str) -> bool) -> String {
    let name = format!("{prefix}{bare}");
    if !taken(&name) {
        return name;
    }
    (2u32..).map(|n| format!("{name}_{n}")).find(|n| !taken(n)).expect("a free name exists")
}

/// A JSON-RPC message, borrowed from its line.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

#[derive(Deserialize)]
struct ErrorObject {
    code: i64,
    #[serde(default)]
    message: String,
}

/// A host request relayed upstream, waiting for its answer.
#[derive(Debug)]
struct HostRequest {
    method: String,
    /// The id as the host sent it (JSON text).
    id: String,
    /// Relayed under another id (it collided with one of the proxy's): its answer is rewritten.
    remapped: bool,
    started: Duration,
    params: Option<String>,
    /// `tools/list` without a cursor: the resource tools are appended to its result.
    first_tools_page: bool,
}

/// A host `tools/call` the proxy answers.
#[derive(Debug)]
struct HostCall {
    id: String,
    started: Duration,
    params: Option<String>,
    kind: CallKind,
}

#[derive(Debug)]
enum CallKind {
    Listing {
        name: &'static str,
        input: Input,
    },
    /// A tool that asks the server (the read, the completion), with the model's input (JSON text):
    /// checked against the catalog once it is current.
    Server {
        name: &'static str,
        input: String,
    },
}

/// A host's `tools/list` held until the upstream's first listing ends: an upstream that declares
/// `completions` gets the completion tool once it lists a template, and hosts that list tools once
/// (and never again on `notifications/tools/list_changed`) would never see it otherwise.
#[derive(Debug)]
enum Parked {
    /// Relay this line upstream (the splice then sees the tools).
    Relay(String),
    /// The proxy answers the list itself (the upstream has no tools): the request's id and params.
    Answer { id: String, params: Option<String> },
}

/// What one of the proxy's own upstream requests is for.
#[derive(Debug)]
enum Own {
    Page {
        deadline: Duration,
    },
    /// The call and what it asks of the server, validated (boxed: the variants stay small).
    Call {
        call: Box<(HostCall, ServerCall)>,
        deadline: Duration,
    },
    /// The proxy's `subscriptions/listen` stream (2026-07-28): until the upstream acknowledges
    /// it, it has a deadline (the traversal deadline); after, none.
    Listen {
        ack_deadline: Option<Duration>,
    },
}

impl Own {
    fn deadline(&self) -> Option<Duration> {
        match self {
            Own::Page { deadline } | Own::Call { deadline, .. } => Some(*deadline),
            Own::Listen { ack_deadline } => *ack_deadline,
        }
    }
}

/// The proxy machine. See the [module docs](self).
#[derive(Debug)]
pub struct Proxy {
    config: ProxyConfig,
    refresher: Refresher,
    /// The resource tools: their MCP descriptions and their names now ([`own_tool_name`]), in
    /// [`crate::catalog::RESOURCE_TOOLS`] order.
    tools: Vec<OwnTool>,
    /// Each resource tool's first name (`{prefix}{bare}`), which every later one begins with: a
    /// `tools/call` whose params hold none of them names none of the proxy's tools.
    own_names: Vec<memchr::memmem::Finder<'static>>,
    /// What those names begin with, all of them (the prefix, unless it is empty): params without
    /// it hold none of them, in one search instead of one per tool.
    own_prefix: Option<memchr::memmem::Finder<'static>>,
    /// The upstream's tool names, from the `tools/list` pages relayed since the last first page.
    upstream_tools: std::collections::BTreeSet<String>,
    actions: VecDeque<ProxyAction>,
    /// Upstream id (JSON text) → the host request relayed under it.
    host_requests: BTreeMap<String, HostRequest>,
    /// Own request number → what it is for.
    own: BTreeMap<u64, Own>,
    next_own: u64,
    /// Listing calls waiting for the refresher.
    waiting: BTreeMap<CallerId, HostCall>,
    /// A host's first `tools/list`, held until the upstream's first listing: what to do with it
    /// then (see [`Parked`]).
    parked: BTreeMap<CallerId, Parked>,
    traversal: Option<PairTraversal>,
    /// Own requests held until the upstream is initialized.
    held: Vec<String>,
    client: Option<PeerInfo>,
    client_version: Option<String>,
    /// 2026-07-28: the host's `_meta` envelope from its `server/discover` (a JSON object's
    /// members, without braces), stamped on the proxy's own requests.
    envelope: Option<String>,
    protocol_version: String,
    server: Option<(String, Epoch)>,
    /// The upstream's capabilities (JSON text, from its `initialize` result).
    capabilities: Option<String>,
    /// The proxy added the `tools` capability: the upstream has no tools, `tools/list` is answered
    /// by the proxy.
    tools_added: bool,
    /// The host sent `notifications/initialized` (or the era has no such step).
    ready: bool,
    /// The tools the host was last shown (`None`: it never listed tools).
    announced: Option<&'static [&'static str]>,
    /// 2026-07-28: the proxy's own `subscriptions/listen` stream (its own request number).
    listen: Option<u64>,
    /// 2026-07-28: the host's open `subscriptions/listen` streams that asked for
    /// `toolsListChanged` (their ids, JSON text).
    host_tool_streams: Vec<String>,
    /// The upstream's requests to the host not answered yet (ids, JSON text, in arrival order):
    /// answered with an error when the host ends ([`Proxy::handle_host_end`]).
    upstream_requests: Vec<String>,
    /// Host requests answered with an error because a dropped message whose id could not be read
    /// was taken to be their answer (the only one in flight): their upstream ids, so a later real
    /// answer is dropped rather than answering the host twice (at most [`MAX_GUESSED`]).
    guessed: VecDeque<String>,
}

/// How many [`Proxy::handle_upstream_oversize`] guesses are remembered.
const MAX_GUESSED: usize = 64;

impl Proxy {
    /// A proxy with `config` (checked).
    pub fn new(config: ProxyConfig) -> Result<Proxy, ProxyError> {
        config.validate()?;
        let tools = crate::catalog::RESOURCE_TOOLS
            .iter()
            .map(|bare| {
                let spec = tool::spec_of(bare).expect("every resource tool has a spec");
                OwnTool {
                    bare,
                    name: format!("{}{}", config.tool_prefix, spec.name),
                    description: spec.description,
                    input_schema: one_server_schema(&spec.input_schema),
                    annotations: spec.annotations.clone(),
                }
            })
            .collect::<Vec<_>>();
        let own_names = tools.iter().map(|t| memchr::memmem::Finder::new(t.name.as_bytes()).into_owned()).collect();
        let common = tools.iter().map(|t| t.name.as_bytes()).reduce(|a, b| {
            let n = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            &a[..n]
        });
        let own_prefix = common.filter(|c| !c.is_empty()).map(|c| memchr::memmem::Finder::new(c).into_owned());
        Ok(Proxy {
            refresher: Refresher::new(config.refresh, config.seed),
            config,
            tools,
            own_names,
            own_prefix,
            upstream_tools: std::collections::BTreeSet::new(),
            actions: VecDeque::new(),
            host_requests: BTreeMap::new(),
            own: BTreeMap::new(),
            next_own: 0,
            waiting: BTreeMap::new(),
            parked: BTreeMap::new(),
            traversal: None,
            held: Vec::new(),
            client: None,
            client_version: None,
            envelope: None,
            protocol_version: String::new(),
            server: None,
            capabilities: None,
            tools_added: false,
            ready: false,
            announced: None,
            listen: None,
            host_tool_streams: Vec::new(),
            upstream_requests: Vec::new(),
            guessed: VecDeque::new(),
        })
    }

    /// The refresher (and through it the catalog) the proxy keeps.
    pub fn refresher(&self) -> &Refresher {
        &self.refresher
    }

    /// The upstream's name in the catalog, once it answered `initialize`.
    pub fn server(&self) -> Option<&str> {
        self.server.as_ref().map(|(s, _)| s.as_str())
    }

    /// The next action, if any. Drain them after every event.
    pub fn poll_action(&mut self) -> Option<ProxyAction> {
        self.actions.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due next.
    pub fn poll_timeout(&self) -> Option<Duration> {
        // Ends of the proxy's own requests; an answer that comes after is dropped (its id is the
        // proxy's, no longer in flight).
        self.own.values().filter_map(Own::deadline).chain(self.refresher.poll_timeout()).min()
    }

    /// Time has come: the proxy's own requests past their deadline time out; due retries start.
    pub fn handle_timeout(&mut self, now: Duration) {
        let due: Vec<u64> =
            self.own.iter().filter(|(_, o)| o.deadline().is_some_and(|d| d <= now)).map(|(n, _)| *n).collect();
        for n in due {
            let own = self.own.remove(&n).expect("listed above");
            if matches!(own, Own::Listen { .. }) {
                // Not acknowledged in time: the upstream may still hold it.
                self.send_own(cancelled(n));
            }
            self.own_answer(own, Outcome::TimedOut, now);
        }
        self.refresher.handle_timeout(now);
        self.drain(now);
    }

    /// A line from the host, at `now`.
    pub fn handle_host(&mut self, line: &[u8], now: Duration) -> Verdict {
        let Some(msg) = parse(line) else { return Verdict::Forward };
        let verdict = match (&msg.method, msg.id) {
            (Some(method), Some(id)) => self.host_request(method, id, msg.params, line, now),
            (Some(method), None) if method == "notifications/cancelled" && self.cancel(msg.params) => Verdict::Consumed,
            (Some(method), None) if method == "notifications/cancelled" => match self.remapped_cancel(msg.params) {
                Some(line) => {
                    self.actions.push_back(ProxyAction::ToUpstream(line));
                    Verdict::Consumed
                }
                None => Verdict::Forward,
            },
            (Some(method), None) => {
                if method == "notifications/initialized" && !self.ready {
                    self.ready = true;
                    // Relayed first: the held requests follow it (the driver writes actions after).
                    self.actions.extend(self.held.drain(..).map(ProxyAction::ToUpstream));
                }
                Verdict::Forward
            }
            // An answer to a request of the upstream's: relayed.
            (None, id) => {
                if let Some(id) = id {
                    let key = id_key(id.get());
                    self.upstream_requests.retain(|r| id_key(r) != key);
                }
                Verdict::Forward
            }
        };
        self.drain(now);
        verdict
    }

    /// The host is gone (its stdin closed, or a signal): every request the upstream sent the host
    /// that is still unanswered is answered with an error ([`HOST_ENDED_CODE`]) as
    /// [`ProxyAction::ToUpstream`] lines, so an upstream waiting on one (a `roots/list`, an
    /// elicitation) can end when its stdin closes. Nothing else is sent after.
    pub fn handle_host_end(&mut self, _now: Duration) {
        for id in std::mem::take(&mut self.upstream_requests) {
            let line = error_line(&id, HOST_ENDED_CODE, "Connection closed: the host ended the session");
            self.actions.push_back(ProxyAction::ToUpstream(line));
        }
        self.held.clear();
    }

    /// A message from the host longer than [`ProxyConfig::max_message_bytes`] was dropped; `head`
    /// and `tail` are its first and last bytes (at most [`cut::KEPT`] each). A request whose id
    /// can be read is answered with an error naming the bound and the flag (it never reaches the
    /// upstream); anything else is said on stderr ([`ProxyAction::Notice`]).
    pub fn handle_host_oversize(&mut self, head: &[u8], tail: &[u8], now: Duration) {
        let cut = cut::read(head, tail);
        match cut.id.filter(|_| cut.method) {
            Some(id) => self.actions.push_back(ProxyAction::ToHost(too_large_answer(
                &id,
                "request",
                self.config.max_message_bytes,
            ))),
            None => self.notice_dropped("host"),
        }
        self.drain(now);
    }

    /// A message from the upstream longer than [`ProxyConfig::max_message_bytes`] was dropped;
    /// `head` and `tail` are its first and last bytes (at most [`cut::KEPT`] each). The request
    /// it answers gets an answer still: a host request an error naming the bound and the flag
    /// (tracked as failed), one of the proxy's own requests [`Outcome::TooLarge`] (a read fails
    /// with `message_too_large`). When its id cannot be read, the one request in flight is taken
    /// to be the one. An upstream request is answered upstream with the same error.
    pub fn handle_upstream_oversize(&mut self, head: &[u8], tail: &[u8], now: Duration) {
        let max = self.config.max_message_bytes;
        let cut = cut::read(head, tail);
        if cut.method {
            match cut.id {
                Some(id) => self.actions.push_back(ProxyAction::ToUpstream(too_large_answer(&id, "request", max))),
                None => self.notice_dropped("server"),
            }
            self.drain(now);
            return;
        }
        let guess = cut.id.is_none();
        let id = cut.id.or_else(|| match (self.host_requests.len(), self.own.len()) {
            (1, 0) => self.host_requests.keys().next().cloned(),
            (0, 1) => self.own.keys().next().map(|n| own_id(*n)),
            _ => None,
        });
        let Some(id) = id.map(|i| id_key(&i).into_owned()) else {
            self.notice_dropped("server");
            self.drain(now);
            return;
        };
        if let Some(n) = own_number(&id).filter(|_| !self.host_requests.contains_key(&id)) {
            if let Some(own) = self.own.remove(&n) {
                self.own_answer(own, Outcome::TooLarge { max_bytes: max }, now);
            }
        } else if let Some(mut request) = self.host_requests.remove(&id) {
            if guess {
                if self.guessed.len() == MAX_GUESSED {
                    self.guessed.pop_front();
                }
                self.guessed.push_back(id.clone());
            }
            let message = too_large_message("answer", max);
            self.actions.push_back(ProxyAction::ToHost(error_line(&request.id, TOO_LARGE_CODE, &message)));
            self.track_answer(&mut request, None, Some((TOO_LARGE_CODE, message)), now);
        } else {
            self.notice_dropped("server");
        }
        self.drain(now);
    }

    /// Records the answer to a relayed host request (when tracking): its result or its error.
    /// The request's params go into the record (it is answered: nothing reads them after).
    fn track_answer(
        &mut self,
        request: &mut HostRequest,
        result: Option<String>,
        error: Option<(i64, String)>,
        now: Duration,
    ) {
        if self.config.tracking {
            self.actions.push_back(ProxyAction::Track(TrackRecord {
                method: Method::from_name(&request.method),
                request_id: tracked_id(&request.id),
                started: request.started,
                duration: now.saturating_sub(request.started),
                params: request.params.take(),
                result,
                error,
            }));
        }
    }

    fn notice_dropped(&mut self, from: &str) {
        self.actions.push_back(ProxyAction::Notice(format!(
            "a message from the {from} over {} bytes was dropped (raise the bound with --max-message-bytes)",
            self.config.max_message_bytes
        )));
    }

    /// A host `notifications/cancelled` for one of the proxy's tool calls: the call is dropped
    /// unanswered (as the specification asks), and a read in flight is cancelled upstream. False
    /// when it names no such call (it is relayed).
    fn cancel(&mut self, params: Option<&RawValue>) -> bool {
        #[derive(Deserialize)]
        struct Cancelled<'a> {
            #[serde(borrow, rename = "requestId")]
            request_id: &'a RawValue,
        }
        let Some(c) = params.and_then(|p| serde_json::from_str::<Cancelled<'_>>(p.get()).ok()) else { return false };
        let id = id_key(c.request_id.get());
        if let Some(caller) = self.waiting.iter().find(|(_, call)| id_key(&call.id) == id).map(|(k, _)| *k) {
            self.waiting.remove(&caller);
            return true;
        }
        let read = self
            .own
            .iter()
            .find(|(_, o)| matches!(o, Own::Call { call, .. } if id_key(&call.0.id) == id))
            .map(|(n, _)| *n);
        let Some(n) = read else { return false };
        self.own.remove(&n);
        self.send_own(cancelled(n));
        true
    }

    /// A host `notifications/cancelled` for a request relayed under another id (its id collided):
    /// the line to send upstream instead, naming the id the upstream knows. `None` when the id
    /// it names went upstream as the host sent it (or is not in flight): relayed unchanged.
    fn remapped_cancel(&self, params: Option<&RawValue>) -> Option<String> {
        let mut params: serde_json::Map<String, Value> = serde_json::from_str(params?.get()).ok()?;
        let id = serde_json::to_string(params.get("requestId")?).ok()?;
        let id = id_key(&id);
        if self.host_requests.get(id.as_ref()).is_some_and(|r| !r.remapped) {
            return None;
        }
        let upstream = self.host_requests.iter().find(|(_, r)| r.remapped && id_key(&r.id) == id).map(|(u, _)| u)?;
        params.insert("requestId".to_owned(), serde_json::from_str(upstream).ok()?);
        let message = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params});
        Some(message.to_string())
    }

    fn host_request(
        &mut self,
        method: &str,
        id: &RawValue,
        params: Option<&RawValue>,
        line: &[u8],
        now: Duration,
    ) -> Verdict {
        if method == "tools/call" && self.config.tools {
            match self.own_tool_call(id, params, now) {
                Some((call, None)) => {
                    self.start_call(call, now);
                    return Verdict::Consumed;
                }
                Some((call, Some(e))) => {
                    self.answer_call(call, Err(e), now);
                    return Verdict::Consumed;
                }
                None => {}
            }
        }
        let first_list = method == "tools/list" && !params.is_some_and(has_cursor);
        let caller = if first_list { self.first_listing(now) } else { None };
        if method == "tools/list" && self.tools_added {
            // The upstream has no tools: the list is the proxy's alone.
            match caller {
                Some(caller) => {
                    let parked = Parked::Answer { id: id.get().to_owned(), params: params.map(|p| p.get().to_owned()) };
                    self.parked.insert(caller, parked);
                }
                None => self.answer_tools_list(id, params, now),
            }
            return Verdict::Consumed;
        }
        let tracked = self.config.tracking;
        let first_tools_page = method == "tools/list" && !params.is_some_and(has_cursor);
        let mut request = HostRequest {
            method: method.to_owned(),
            id: id.get().to_owned(),
            remapped: false,
            started: now,
            params: params.filter(|_| tracked).map(|p| p.get().to_owned()),
            first_tools_page,
        };
        if method == "initialize" {
            if let Some(p) = params {
                let init: InitializeParams = serde_json::from_str(p.get()).unwrap_or_default();
                self.client = init.client_info.map(|c| PeerInfo::new(c.name, c.version.as_deref()));
                self.client_version = init.protocol_version;
            }
        } else if method == "server/discover" {
            self.discover_envelope(params);
        } else if method == "subscriptions/listen" && params.is_some_and(asks_tools_list_changed) {
            self.host_tool_streams.push(id.get().to_owned());
        }
        let key = id_key(id.get()).into_owned();
        if self.host_requests.contains_key(&key)
            || self.guessed.contains(&key)
            || own_number(&key).is_some_and(|n| self.own.contains_key(&n))
        {
            // The id is in use upstream (one of the proxy's, a host request still in flight, or
            // one answered on a guess whose real answer may still come): relayed under a fresh
            // one, the answer mapped back.
            let upstream_id = own_id(self.next_own_id());
            if let Some(text) = rewrite_id(line, &upstream_id) {
                request.remapped = true;
                self.host_requests.insert(upstream_id, request);
                match caller {
                    Some(caller) => drop(self.parked.insert(caller, Parked::Relay(text))),
                    None => self.actions.push_back(ProxyAction::ToUpstream(text)),
                }
                return Verdict::Consumed;
            }
        }
        self.host_requests.insert(key, request);
        match caller {
            Some(caller) => {
                self.parked.insert(caller, Parked::Relay(String::from_utf8_lossy(line).into_owned()));
                Verdict::Consumed
            }
            None => Verdict::Forward,
        }
    }

    /// The caller to wait on before answering a host's first `tools/list`: the upstream declares
    /// `completions` and has no listing yet (one is asked for). `None`: answer it now.
    fn first_listing(&mut self, now: Duration) -> Option<CallerId> {
        let (server, _) = self.server.clone()?;
        let catalog = self.refresher.catalog();
        let unknown = catalog.status(&server, now).is_ok_and(|s| s.status == crate::catalog::Status::Unknown);
        if !(self.config.tools && catalog.declares_completions(&server) && unknown) {
            return None;
        }
        self.refresher.request(&server, Want::Current, now).ok()
    }

    /// A `tools/call` of one of the proxy's tools (visible now): what it asks (or why it cannot
    /// be done), or `None` to relay it.
    fn own_tool_call(
        &self,
        id: &RawValue,
        params: Option<&RawValue>,
        now: Duration,
    ) -> Option<(HostCall, Option<ToolError>)> {
        #[derive(Deserialize)]
        struct CallParams<'a> {
            #[serde(borrow)]
            name: std::borrow::Cow<'a, str>,
            // Parsed only for the proxy's own tools.
            #[serde(default, borrow)]
            arguments: Option<&'a RawValue>,
        }
        let params = params?;
        // A call that cannot name one of the proxy's tools is relayed without reading its params:
        // a name of theirs begins with one of `own_names`, which is in the text as written unless
        // the host escaped a character of it (params with an escape are read to be sure).
        let text = params.get();
        let (bytes, escaped) = (text.as_bytes(), memchr::memchr(b'\\', text.as_bytes()).is_some());
        let named = |f: &memchr::memmem::Finder<'_>| f.find(bytes).is_some();
        let may_name_own = escaped || (self.own_prefix.as_ref().is_none_or(named) && self.own_names.iter().any(named));
        if !may_name_own {
            return None;
        }
        let p: CallParams<'_> = serde_json::from_str(text).ok()?;
        // A name the upstream's tools have is the upstream's, always.
        if self.upstream_tools.contains(p.name.as_ref()) {
            return None;
        }
        let bare = self.tools.iter().find(|t| t.name == p.name)?.bare;
        let name = *self.refresher.catalog().visible_tools().iter().find(|t| **t == bare)?;
        let mut arguments = match p.arguments {
            Some(raw) => serde_json::from_str(raw.get()).ok()?,
            None => Value::Null,
        };
        // One server: a read or completion that names none asks it (the host knows it by its own
        // name).
        if let (Value::Object(args), Some((server, _))) = (&mut arguments, &self.server) {
            if ServerCall::asks_server(name) && args.get("server").is_none_or(Value::is_null) {
                args.insert("server".to_owned(), Value::String(server.clone()));
            }
        }
        let mut call = HostCall {
            id: id.get().to_owned(),
            started: now,
            params: self.config.tracking.then(|| text.to_owned()),
            kind: CallKind::Listing { name, input: Input::default() },
        };
        // Input the tool refuses anyway is answered at once, before the catalog is made current.
        let kind = if name == tool::read::NAME {
            let input = arguments.to_string();
            ReadInput::from_value(arguments).map(|_| CallKind::Server { name, input })
        } else if name == tool::complete::NAME {
            let input = arguments.to_string();
            CompleteInput::from_value(arguments).map(|_| CallKind::Server { name, input })
        } else {
            Input::from_value(arguments).map(|input| CallKind::Listing { name, input })
        };
        match kind {
            Ok(kind) => {
                call.kind = kind;
                Some((call, None))
            }
            Err(e) => Some((call, Some(e))),
        }
    }

    /// A listing or a read waits until the catalog is current (a read's URI is checked against
    /// it), then goes on in [`continue_call`](Self::continue_call).
    fn start_call(&mut self, call: HostCall, now: Duration) {
        let requested = match self.server.clone() {
            Some((server, _)) => self.refresher.request(&server, Want::Current, now).ok(),
            None => None,
        };
        match requested {
            Some(caller) => {
                self.waiting.insert(caller, call);
            }
            None => self.continue_call(call, now),
        }
    }

    /// The catalog is as current as it gets: a listing is rendered, a read checked and sent.
    fn continue_call(&mut self, call: HostCall, now: Duration) {
        match &call.kind {
            CallKind::Listing { name, input } => {
                let out = tool::render_listing(self.refresher.catalog(), name, input);
                self.answer_call(call, out, now);
            }
            CallKind::Server { name, input } => {
                let config = CallConfig { read: self.config.read, complete: self.config.complete };
                match ServerCall::new(self.refresher.catalog(), name, input, &config, now) {
                    Ok(asked) => {
                        let params = asked.params_json();
                        let deadline = now.saturating_add(asked.remaining(now));
                        let n = self.next_own_id();
                        let line = self.own_request(n, asked.method(), Some(&params));
                        self.own.insert(n, Own::Call { call: Box::new((call, asked)), deadline });
                        self.send_own(line);
                    }
                    Err(e) => self.answer_call(call, Err(e), now),
                }
            }
        }
    }

    /// Answers a proxy tool call to the host (and tracks it).
    fn answer_call(&mut self, call: HostCall, out: Result<String, ToolError>, now: Duration) {
        let (text, is_error) = match out {
            Ok(text) => (text, false),
            Err(e) => (format!("error: {}: {}", e.code(), e), true),
        };
        let mut result = json!({"content": [{"type": "text", "text": text}]});
        if is_error {
            result["isError"] = Value::Bool(true);
        }
        if self.modern() {
            result["resultType"] = Value::from("complete");
        }
        let result = result.to_string();
        self.actions
            .push_back(ProxyAction::ToHost(format!(r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#, call.id, result)));
        if self.config.tracking {
            self.actions.push_back(ProxyAction::Track(TrackRecord {
                method: Method::ToolsCall,
                request_id: tracked_id(&call.id),
                started: call.started,
                duration: now.saturating_sub(call.started),
                params: call.params,
                result: Some(result),
                error: None,
            }));
        }
    }

    /// `tools/list` for an upstream without tools: the visible resource tools (first page only).
    fn answer_tools_list(&mut self, id: &RawValue, params: Option<&RawValue>, now: Duration) {
        let visible = self.refresher.catalog().visible_tools();
        self.announced = Some(visible);
        let ours: Vec<String> = if params.is_some_and(has_cursor) {
            Vec::new()
        } else {
            self.tools.iter().filter(|t| visible.contains(&t.bare)).map(OwnTool::to_json).collect()
        };
        let result = if self.modern() {
            format!(r#"{{"tools":[{}],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}"#, ours.join(","))
        } else {
            format!(r#"{{"tools":[{}]}}"#, ours.join(","))
        };
        self.actions.push_back(ProxyAction::ToHost(format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
            id.get(),
            result
        )));
        if self.config.tracking {
            self.actions.push_back(ProxyAction::Track(TrackRecord {
                method: Method::ToolsList,
                request_id: tracked_id(id.get()),
                started: now,
                duration: Duration::ZERO,
                params: params.map(|p| p.get().to_owned()),
                result: Some(result),
                error: None,
            }));
        }
    }

    /// A line from the upstream, at `now`.
    pub fn handle_upstream(&mut self, line: &[u8], now: Duration) -> Verdict {
        let Some(msg) = parse(line) else { return self.unreadable_answer(line, now) };
        let verdict = match (&msg.method, msg.id) {
            (None, Some(id)) => self.upstream_answer(id, &msg, line, now),
            (Some(method), None) => {
                let ours = self.listen.is_some_and(|n| subscription_id(msg.params).is_some_and(|id| id == own_id(n)));
                if method == crate::protocol::RESOURCES_LIST_CHANGED {
                    if let Some((server, epoch)) = self.server.clone() {
                        self.refresher.handle_list_changed(&server, epoch, now);
                    }
                } else if ours && method == crate::protocol::SUBSCRIPTIONS_ACKNOWLEDGED {
                    if let Some(Own::Listen { ack_deadline }) = self.listen.and_then(|n| self.own.get_mut(&n)) {
                        *ack_deadline = None;
                        if let Some((server, epoch)) = &self.server {
                            self.refresher.handle_listen_acknowledged(server, *epoch);
                        }
                    }
                }
                if ours {
                    Verdict::Consumed
                } else {
                    Verdict::Forward
                }
            }
            // The upstream's own requests (sampling, roots, ping, elicitation): relayed.
            (Some(_), Some(id)) => {
                if self.upstream_requests.len() >= MAX_UPSTREAM_REQUESTS {
                    self.upstream_requests.remove(0);
                }
                self.upstream_requests.push(id.get().to_owned());
                Verdict::Forward
            }
            (None, None) => Verdict::Forward,
        };
        self.drain(now);
        verdict
    }

    /// A line from the upstream that is not a JSON object (or not UTF-8): relayed, unless it is
    /// an answer under one of the proxy's ids (then it is a malformed answer, never the host's).
    fn unreadable_answer(&mut self, line: &[u8], now: Duration) -> Verdict {
        let lossy = String::from_utf8_lossy(line);
        let Some(n) = parse(lossy.as_bytes()).and_then(|m| m.id).and_then(|id| own_number(id.get())) else {
            return Verdict::Forward;
        };
        if self.host_requests.contains_key(&own_id(n)) {
            return Verdict::Forward;
        }
        if let Some(own) = self.own.remove(&n) {
            self.own_answer(own, Outcome::Malformed, now);
        }
        self.drain(now);
        Verdict::Consumed
    }

    fn upstream_answer(&mut self, id: &RawValue, msg: &Envelope<'_>, line: &[u8], now: Duration) -> Verdict {
        let key = id_key(id.get());
        let key = key.as_ref();
        if let Some(n) = own_number(key).filter(|_| !self.host_requests.contains_key(key)) {
            // One of the proxy's ids: its answer, or a stray (late, repeated, wrong) one, dropped.
            if let Some(own) = self.own.remove(&n) {
                let outcome = match (&msg.result, &msg.error) {
                    (Some(r), _) => Outcome::Page(r.get()),
                    (None, Some(e)) => Outcome::RpcError { code: e.code },
                    (None, None) => Outcome::Malformed,
                };
                self.own_answer(own, outcome, now);
            }
            return Verdict::Consumed;
        }
        let Some(mut request) = self.host_requests.remove(key) else {
            if let Some(at) = self.guessed.iter().position(|g| g == key) {
                // Its request was already answered: the dropped message was another's.
                self.guessed.remove(at);
                self.actions.push_back(ProxyAction::Notice(
                    "an answer came for a request already answered with the error of a message dropped for its size \
                     (whose id could not be read): dropped, so the host gets one answer"
                        .to_owned(),
                ));
                return Verdict::Consumed;
            }
            return Verdict::Forward;
        };
        if request.method == "subscriptions/listen" {
            self.host_tool_streams.retain(|s| *s != request.id);
        }
        let mut rewritten: Option<String> = None;
        if let Some(result) = msg.result {
            if matches!(request.method.as_str(), "initialize" | "server/discover") {
                rewritten = self.initialized(line, result, &request, now);
            } else if request.method == "tools/list" && self.config.tools {
                let renamed = self.note_upstream_tools(result, request.first_tools_page);
                if request.first_tools_page {
                    rewritten = self.append_tools(line, result);
                } else if renamed && self.announced.is_some() && !self.modern() {
                    // A later page named one of the proxy's tools: the host lists again.
                    self.actions.push_back(ProxyAction::ToHost(TOOLS_LIST_CHANGED.to_owned()));
                }
            }
        }
        let (result, error) =
            (msg.result.map(|r| r.get().to_owned()), msg.error.as_ref().map(|e| (e.code, e.message.clone())));
        self.track_answer(&mut request, result, error, now);
        if request.remapped {
            let text = rewritten.as_deref().map_or(line, str::as_bytes);
            let back = rewrite_id(text, &request.id).unwrap_or_else(|| String::from_utf8_lossy(text).into_owned());
            self.push_to_host_before_tracks(back);
            return Verdict::Consumed;
        }
        match rewritten {
            Some(text) => {
                self.push_to_host_before_tracks(text);
                Verdict::Consumed
            }
            None => Verdict::Forward,
        }
    }

    /// Queues a line for the host ahead of the track records just queued (answers first).
    fn push_to_host_before_tracks(&mut self, text: String) {
        let at =
            self.actions.iter().rposition(|a| !matches!(a, ProxyAction::Track(_) | ProxyAction::Initialized { .. }));
        let at = at.map_or(0, |i| i + 1);
        self.actions.insert(at, ProxyAction::ToHost(text));
    }

    /// The `initialize` result: attach the upstream, tell the driver who is who, and add the
    /// `tools` capability when the upstream declares resources without tools.
    fn initialized(&mut self, line: &[u8], result: &RawValue, request: &HostRequest, now: Duration) -> Option<String> {
        #[derive(Deserialize)]
        struct InitResult<'a> {
            #[serde(borrow, default)]
            capabilities: Option<&'a RawValue>,
            #[serde(default, rename = "serverInfo")]
            server_info: Option<Info>,
            #[serde(default, rename = "protocolVersion")]
            protocol_version: Option<String>,
            #[serde(default, rename = "_meta")]
            meta: Option<ResultMeta>,
        }
        #[derive(Deserialize)]
        struct ResultMeta {
            #[serde(default, rename = "io.modelcontextprotocol/serverInfo")]
            server_info: Option<Info>,
        }
        let init: InitResult<'_> = serde_json::from_str(result.get()).ok()?;
        let caps = init.capabilities?;
        let declares_resources = crate::discovery::has_resources_capability(caps.get());
        let declares_tools = serde_json::from_str::<Value>(caps.get()).is_ok_and(|c| c.get("tools").is_some());
        // 2026-07-28: no protocolVersion in the result (the host's envelope named it), serverInfo
        // in its `_meta`.
        let protocol_version = init.protocol_version.or(self.client_version.clone());
        self.protocol_version = protocol_version.clone().unwrap_or_default();
        let info = init.server_info.or(init.meta.and_then(|m| m.server_info)).unwrap_or_default();
        let name = match &self.config.server {
            Some(s) => s.clone(),
            None => Some(crate::sanitize::label(&info.name).trim().to_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "upstream".to_owned()),
        };
        if self.server.is_none() {
            let epoch = self.refresher.attach_capabilities(&name, caps.get());
            let notifications = self.refresher.watch(&name, epoch, &self.protocol_version, caps.get());
            self.server = Some((name, epoch));
            self.capabilities = Some(caps.get().to_owned());
            if notifications == Some(Notifications::Listening) && self.envelope.is_some() {
                self.open_listen(now);
            }
        }
        if request.method == "server/discover" {
            self.ready = true;
            self.actions.extend(self.held.drain(..).map(ProxyAction::ToUpstream));
        }
        // With or without tracking: an HTTP upstream's driver needs the protocol revision.
        let server = if info.name.is_empty() { "upstream".to_owned() } else { info.name.clone() };
        self.actions.push_back(ProxyAction::Initialized {
            server: PeerInfo::new(server, info.version.as_deref()),
            client: self.client.clone(),
            protocol_version,
        });
        if !(self.config.tools && declares_resources) || declares_tools {
            return None;
        }
        let text = std::str::from_utf8(line).ok()?;
        let at = offset_in(text, caps.get())?;
        self.tools_added = true;
        let body = caps.get()[1..caps.get().len() - 1].trim();
        let insert = if body.is_empty() { TOOLS_CAPABILITY.to_owned() } else { format!("{TOOLS_CAPABILITY},") };
        Some(format!("{}{}{}", &text[..at + 1], insert, &text[at + 1..]))
    }

    /// Keeps the upstream's tool names from a `tools/list` page (`first`: a new listing starts)
    /// and renames the proxy's tools that collide ([`own_tool_name`]), saying so once on stderr
    /// ([`ProxyAction::Notice`]). True when a name changed.
    fn note_upstream_tools(&mut self, result: &RawValue, first: bool) -> bool {
        #[derive(Deserialize)]
        struct Page {
            tools: Vec<Named>,
        }
        #[derive(Deserialize)]
        struct Named {
            name: String,
        }
        let Ok(page) = serde_json::from_str::<Page>(result.get()) else { return false };
        if first {
            self.upstream_tools.clear();
        }
        self.upstream_tools.extend(page.tools.into_iter().map(|t| t.name));
        let mut changed = false;
        for t in &mut self.tools {
            let spec_name = tool::spec_of(t.bare).map_or(t.bare, |s| s.name);
            let name = own_tool_name(&self.config.tool_prefix, spec_name, |n| self.upstream_tools.contains(n));
            if name != t.name {
                if name != format!("{}{spec_name}", self.config.tool_prefix) {
                    self.actions.push_back(ProxyAction::Notice(format!(
                        "the server has a tool named {}{spec_name}: the proxy's is {name} (choose the prefix of the \
                         proxy's tools with --tool-prefix)",
                        self.config.tool_prefix
                    )));
                }
                t.name = name;
                changed = true;
            }
        }
        changed
    }

    /// A `tools/list` result with the visible resource tools spliced at the end of `tools`.
    fn append_tools(&mut self, line: &[u8], result: &RawValue) -> Option<String> {
        #[derive(Deserialize)]
        struct ToolsResult<'a> {
            #[serde(borrow)]
            tools: &'a RawValue,
        }
        let visible = self.refresher.catalog().visible_tools();
        self.announced = Some(visible);
        if visible.is_empty() {
            return None;
        }
        let r: ToolsResult<'_> = serde_json::from_str(result.get()).ok()?;
        let existing: Vec<&RawValue> = serde_json::from_str(r.tools.get()).ok()?;
        let text = std::str::from_utf8(line).ok()?;
        let at = offset_in(text, r.tools.get())? + r.tools.get().len() - 1; // the closing `]`
        let ours: Vec<String> = self.tools.iter().filter(|t| visible.contains(&t.bare)).map(OwnTool::to_json).collect();
        let sep = if existing.is_empty() { "" } else { "," };
        Some(format!("{}{}{}{}", &text[..at], sep, ours.join(","), &text[at..]))
    }

    /// What became of one of the proxy's own requests.
    fn own_answer(&mut self, own: Own, outcome: Outcome<'_>, now: Duration) {
        match own {
            Own::Call { call, .. } => {
                let (call, asked) = *call;
                let out = asked.finish(outcome);
                self.answer_call(call, out, now);
            }
            Own::Page { .. } => self.page_answer(outcome, now),
            Own::Listen { ack_deadline } => self.listen_answer(ack_deadline.is_none(), outcome, now),
        }
    }

    /// 2026-07-28: the upstream offers resource change notifications; they come only on a
    /// `subscriptions/listen` stream, which the proxy opens for itself.
    fn open_listen(&mut self, now: Duration) {
        let n = self.next_own_id();
        let params = r#"{"notifications":{"resourcesListChanged":true}}"#;
        let line = self.own_request(n, "subscriptions/listen", Some(params));
        let ack_deadline = Some(now.saturating_add(self.config.limits.deadline));
        self.own.insert(n, Own::Listen { ack_deadline });
        self.listen = Some(n);
        self.send_own(line);
    }

    /// The proxy's listen stream ended (`acked`: after its acknowledgement) or was refused; the
    /// upstream stays ([`Refresher::handle_listen_closed`] decides).
    fn listen_answer(&mut self, acked: bool, outcome: Outcome<'_>, now: Duration) {
        self.listen = None;
        let Some((server, epoch)) = self.server.clone() else { return };
        if !acked && matches!(outcome, Outcome::Page(_)) {
            // A result with no acknowledgement before it: the stream opened already closed.
            self.refresher.handle_listen_acknowledged(&server, epoch);
        }
        let code = match outcome {
            Outcome::RpcError { code } => Some(code),
            _ => None,
        };
        match self.refresher.handle_listen_closed(&server, epoch, code, Liveness::Open, now) {
            Ok(Some(ListenClosed::Relisting)) => self.actions.push_back(ProxyAction::Notice(format!(
                "the change notifications of {server} ended (subscriptions/listen closed): its resources are \
                 listed again now, then when they are asked for and out of date"
            ))),
            Ok(_) => {}
            Err(e) => self.actions.push_back(ProxyAction::Notice(format!("{}: {e}", e.code()))),
        }
    }

    /// 2026-07-28: keeps the envelope of the host's `server/discover` (its protocol version,
    /// client info and capabilities) for the proxy's own requests, and the host's identity.
    fn discover_envelope(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        struct Discover<'a> {
            #[serde(borrow, rename = "_meta")]
            meta: Envelope2026<'a>,
        }
        #[derive(Deserialize)]
        struct Envelope2026<'a> {
            #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
            protocol_version: String,
            #[serde(borrow, default, rename = "io.modelcontextprotocol/clientInfo")]
            client_info: Option<&'a RawValue>,
            #[serde(borrow, default, rename = "io.modelcontextprotocol/clientCapabilities")]
            client_capabilities: Option<&'a RawValue>,
        }
        let Some(d) = params.and_then(|p| serde_json::from_str::<Discover<'_>>(p.get()).ok()) else { return };
        let m = d.meta;
        let mut envelope = format!("\"{}\":{}", meta::PROTOCOL_VERSION, json!(m.protocol_version));
        if let Some(info) = m.client_info {
            envelope.push_str(&format!(",\"{}\":{}", meta::CLIENT_INFO, info.get()));
            if let Ok(c) = serde_json::from_str::<Info>(info.get()) {
                self.client = Some(PeerInfo::new(c.name, c.version.as_deref()));
            }
        }
        let capabilities = m.client_capabilities.map_or("{}", RawValue::get);
        envelope.push_str(&format!(",\"{}\":{capabilities}", meta::CLIENT_CAPABILITIES));
        self.client_version = Some(m.protocol_version);
        self.envelope = Some(envelope);
    }

    /// The connection speaks 2026-07-28 (or later).
    fn modern(&self) -> bool {
        Era::of(&self.protocol_version) == Era::Modern
    }

    /// One of the proxy's own requests: on a 2026-07-28 connection its params carry the host's
    /// envelope in `_meta`.
    fn own_request(&self, n: u64, method: &str, params: Option<&str>) -> String {
        let id = own_id(n);
        let envelope = self.envelope.as_deref().filter(|_| self.modern());
        match (params, envelope) {
            (Some(p), Some(e)) => {
                let rest = p.trim_start().strip_prefix('{').unwrap_or("}").trim_start();
                let sep = if rest.starts_with('}') { "" } else { "," };
                let params = format!(r#"{{"_meta":{{{e}}}{sep}{rest}"#);
                request_line(&id, method, Some(&params))
            }
            (None, Some(e)) => request_line(&id, method, Some(&format!(r#"{{"_meta":{{{e}}}}}"#))),
            (p, None) => request_line(&id, method, p),
        }
    }

    fn page_answer(&mut self, outcome: Outcome<'_>, now: Duration) {
        let Some(t) = self.traversal.as_mut() else { return };
        // A failure ends the pair (it keeps it); an answer without a request in flight is not one.
        let _ = t.handle_outcome(outcome, now);
        self.advance(now);
    }

    /// Sends the pair's next page request, or hands the ended pair back.
    fn advance(&mut self, now: Duration) {
        let Some(t) = self.traversal.as_mut() else { return };
        if let Some(req) = t.poll_request() {
            let deadline = now.saturating_add(t.remaining(now));
            let params = req.params_json();
            let n = self.next_own_id();
            self.own.insert(n, Own::Page { deadline });
            let line = self.own_request(n, req.method, params.as_deref());
            self.send_own(line);
        } else if t.is_done() {
            let pair = self.traversal.take().expect("checked above");
            self.refresher.handle_pair(pair, now);
        }
    }

    /// Performs the refresher's actions and tells the host when the proxy's tools changed.
    fn drain(&mut self, now: Duration) {
        while let Some(action) = self.refresher.poll_action() {
            match action {
                Action::Traverse { server, epoch, traversal } => {
                    if let Some(old) = self.traversal.take() {
                        self.refresher.handle_traversed(old.id(), Err(TraversalError::Abandoned), now);
                    }
                    if self.server.as_ref().map(|(_, e)| *e) != Some(epoch) {
                        self.refresher.handle_traversed(traversal, Err(TraversalError::Abandoned), now);
                        continue;
                    }
                    let (caps, limits, version) =
                        (self.capabilities.as_deref(), self.config.limits, &self.protocol_version);
                    let pair = PairTraversal::new(traversal, &server, caps, limits, version, now);
                    self.traversal = Some(pair);
                    self.advance(now);
                }
                Action::Resolve { callers, .. } => {
                    for caller in callers {
                        if let Some(call) = self.waiting.remove(&caller) {
                            self.continue_call(call, now);
                        }
                        match self.parked.remove(&caller) {
                            Some(Parked::Relay(line)) => self.send_own(line),
                            Some(Parked::Answer { id, params }) => {
                                let id = RawValue::from_string(id).expect("a host id is JSON");
                                let params = params.map(|p| RawValue::from_string(p).expect("host params are JSON"));
                                self.answer_tools_list(&id, params.as_deref(), now);
                            }
                            None => {}
                        }
                    }
                }
            }
        }
        if let Some(shown) = self.announced {
            let visible = self.refresher.catalog().visible_tools();
            if visible != shown && self.config.tools {
                self.announced = Some(visible);
                if !self.modern() {
                    self.actions.push_back(ProxyAction::ToHost(TOOLS_LIST_CHANGED.to_owned()));
                }
                // 2026-07-28: only on the host's streams that asked for it, stamped with their id.
                for stream in &self.host_tool_streams {
                    let line = format!(
                        r#"{{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{{"_meta":{{"{}":{stream}}}}}}}"#,
                        meta::SUBSCRIPTION_ID
                    );
                    self.actions.push_back(ProxyAction::ToHost(line));
                }
            }
        }
    }

    fn next_own_id(&mut self) -> u64 {
        loop {
            self.next_own += 1;
            let n = self.next_own;
            // Never an id a host request in flight uses.
            if !self.host_requests.contains_key(&own_id(n)) {
                return n;
            }
        }
    }

    fn send_own(&mut self, line: String) {
        if self.ready {
            self.actions.push_back(ProxyAction::ToUpstream(line));
        } else {
            self.held.push(line);
        }
    }
}

#[derive(Deserialize, Default)]
struct Info {
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    #[serde(default)]
    client_info: Option<Info>,
    #[serde(default)]
    protocol_version: Option<String>,
}

/// A tool's input schema as the proxy offers it: it serves one server, so `server` is never
/// required (the model may leave it out; a name other than the server's is still refused).
fn one_server_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) else { return schema };
    let before = required.len();
    required.retain(|r| r != "server");
    if required.len() == before {
        return schema;
    }
    if let Some(server) = schema.pointer_mut("/properties/server/description") {
        *server = Value::from(
            "Optional: this proxy serves one server. When given, the server's name as the listings name it.",
        );
    }
    schema
}

fn parse(line: &[u8]) -> Option<Envelope<'_>> {
    let text = std::str::from_utf8(line).ok()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// The error message of a dropped message's request: what was dropped (`"answer"`, `"request"`),
/// the bound and the flag.
fn too_large_message(what: &str, max: usize) -> String {
    format!("mcplens proxy: the {what} was over {max} bytes and was dropped (raise the bound with --max-message-bytes)")
}

/// The error answer for the request `id` (JSON text) whose message was dropped for its size.
fn too_large_answer(id: &str, what: &str, max: usize) -> String {
    error_line(id, TOO_LARGE_CODE, &too_large_message(what, max))
}

/// A JSON-RPC error answer line.
fn error_line(id: &str, code: i64, message: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{}}}}}"#, json!(message))
}

/// The key of a JSON-RPC id: ids equal as JSON values have equal keys (`1e3`, `1000.0` and
/// `1000`; `"\u0061"` and `"a"`), so an upstream that writes back the id it parsed, in its own
/// notation, is still matched to the request. Plain integers and strings without escapes (what
/// hosts send) are their own key.
pub fn id_key(raw: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let b = raw.as_bytes();
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    let plain_int =
        !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) && (digits == b"0" || digits[0] != b'0');
    let plain_str = b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' && !b[1..b.len() - 1].contains(&b'\\');
    if (plain_int && raw != "-0") || plain_str {
        return Cow::Borrowed(raw);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Number(n)) => match n.as_f64() {
            // Integral values within f64's exact range print as integers.
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Cow::Owned(format!("{}", f as i64)),
            _ => Cow::Owned(n.to_string()),
        },
        Ok(v) => Cow::Owned(v.to_string()),
        Err(_) => Cow::Borrowed(raw),
    }
}

/// `notifications/cancelled` for own request `n`.
fn cancelled(n: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#, own_id(n))
}

/// The `subscriptions/listen` stream a notification's `params._meta` names (its id, JSON text).
fn subscription_id(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct P<'a> {
        #[serde(borrow, rename = "_meta")]
        meta: M<'a>,
    }
    #[derive(Deserialize)]
    struct M<'a> {
        #[serde(borrow, rename = "io.modelcontextprotocol/subscriptionId")]
        id: &'a RawValue,
    }
    serde_json::from_str::<P<'_>>(params?.get()).ok().map(|p| p.meta.id.get().to_owned())
}

/// A host's `subscriptions/listen` params ask for `toolsListChanged`.
fn asks_tools_list_changed(params: &RawValue) -> bool {
    serde_json::from_str::<Value>(params.get())
        .is_ok_and(|p| p.pointer("/notifications/toolsListChanged") == Some(&Value::Bool(true)))
}

fn has_cursor(params: &RawValue) -> bool {
    serde_json::from_str::<Value>(params.get()).is_ok_and(|p| p.get("cursor").is_some_and(|c| !c.is_null()))
}

/// The JSON text of own request `n`'s id.
fn own_id(n: u64) -> String {
    format!("\"{OWN_ID_PREFIX}{n}\"")
}

/// The number of an own request's id (JSON text), if it is one.
fn own_number(id: &str) -> Option<u64> {
    id.strip_prefix('"')?.strip_suffix('"')?.strip_prefix(OWN_ID_PREFIX)?.parse().ok()
}

fn request_line(id: &str, method: &str, params: Option<&str>) -> String {
    match params {
        Some(p) => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{p}}}"#),
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#),
    }
}

fn tracked_id(id: &str) -> TrackedId {
    match id.parse::<i64>() {
        Ok(n) => TrackedId::Number(n),
        Err(_) => TrackedId::Text(serde_json::from_str::<String>(id).unwrap_or_else(|_| id.to_owned())),
    }
}

/// Where `inner` (a borrowed slice of `outer`) starts in `outer`.
fn offset_in(outer: &str, inner: &str) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start + inner.len() <= outer.len()).then_some(start)
}

/// `line` with its top-level `id` replaced by `id` (JSON text); every other byte kept.
fn rewrite_id(line: &[u8], id: &str) -> Option<String> {
    let text = std::str::from_utf8(line).ok()?;
    let msg: Envelope<'_> = serde_json::from_str(text).ok()?;
    let old = msg.id?;
    let at = offset_in(text, old.get())?;
    Some(format!("{}{}{}", &text[..at], id, &text[at + old.get().len()..]))
}

pub mod cut;

#[cfg(test)]
mod tests;
