//! The per-server catalog: the last complete resources + templates pair of every server, replaced
//! only by a complete, newer refresh.
//!
//! One state machine owns it: the [`Refresher`] (when to traverse which server: one traversal
//! pair in flight and one queued per server, joining, connection epochs, retry with backoff and
//! jitter, `ttlMs`, the shrink guard, commits). A [`Catalog`] is the state the refresher keeps and
//! the reads every host answers from — [`status`](Catalog::status),
//! [`templates`](Catalog::templates), [`resources`](Catalog::resources), the listing tools
//! ([`crate::tool`]) and [`match_uri`](Catalog::match_uri) — through
//! [`Refresher::catalog`]. Nothing else writes it: hosts that run their own traversals drive the
//! refresher (its [`Action::Traverse`] → a [`PairTraversal`] they perform → [`Refresher::handle_pair`]).
//!
//! A commit is discarded when its traversal began before the server's latest list_changed or
//! clearing: an older traversal never overwrites a newer state.

mod refresher;
mod routing;
mod shared;
mod traversal;
mod visibility;

pub use refresher::{
    advertises_list_changed, has_completions_capability, Action, CallerId, Disposition, Epoch, InvalidRefreshConfig,
    ListChanged, ListenClosed, Liveness, Notifications, Outcome, RefreshConfig, Refresher, TraversalError, TraversalId,
    Want,
};
pub use routing::{CatalogMatches, TemplateMatch, CATALOG_MATCH_STEPS};
pub use shared::{process_seed, SharedRefresher};
pub use traversal::{Paging, PairTraversal};
pub use visibility::{
    COMPLETE_TEMPLATE_TOOL, LIST_RESOURCES_TOOL, LIST_RESOURCE_TEMPLATES_TOOL, READ_RESOURCE_TOOL, RESOURCE_TOOLS,
};

use crate::error::ErrorCode;
use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::discovery::{DiscoveryError, ListKind, Listing, Resource, ResourceTemplate, Support};

/// The longest a `ttlMs` may keep an entry fresh.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The shortest `ttlMs` honoured by default (see [`Catalog::set_min_ttl`]): `ttlMs: 0` keeps a
/// pair current this long, so it costs at most one traversal pair per 10 s.
pub const DEFAULT_MIN_TTL: Duration = Duration::from_secs(10);

/// A server's catalog status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Never refreshed, or invalidated since: nothing cached.
    Unknown,
    /// The last refresh committed; the pair is current.
    Ok,
    /// The server does not declare the `resources` capability.
    Unsupported,
    /// The server announced a change (`list_changed`), or the pair's `ttlMs` ran out: the pair is
    /// still listed, and the next request refreshes it (it stays listed until a refresh that began
    /// after the change commits).
    Outdated,
    /// The last refresh failed and there is no earlier pair.
    Failed,
    /// The last refresh failed: the previous pair is kept (and listed), the failure reported.
    Stale,
}

/// Why a server's entries were invalidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// `notifications/resources/list_changed`: marks the pair outdated, keeps listing it.
    ListChanged,
    /// The connection closed.
    ConnectionClosed,
    /// The server's configuration changed.
    ConfigurationChanged,
    /// The server was disabled.
    Disabled,
    /// Anything else the host wants to invalidate for.
    Other,
}

impl crate::error::WireName for Reason {
    const ALL: &'static [Reason] =
        &[Reason::ListChanged, Reason::ConnectionClosed, Reason::ConfigurationChanged, Reason::Disabled, Reason::Other];
}

/// A failed refresh, as the catalog keeps it: a stable code and our own message (never server text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The stable error code.
    pub code: ErrorCode,
    /// The message (names the server and the bound).
    pub message: String,
}

impl From<&DiscoveryError> for Failure {
    fn from(e: &DiscoveryError) -> Self {
        Failure { code: e.code(), message: e.to_string() }
    }
}

/// One traversal pair's claim on a server's entry (the refresher's; see [`Catalog::begin_refresh`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ticket {
    server: String,
    seq: u64,
}

/// A snapshot of one server's entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The host's name for the server.
    pub server: String,
    /// The status at the time asked.
    pub status: Status,
    /// Commits so far (0 = never).
    pub generation: u64,
    /// The last failure, kept until the next successful commit.
    pub last_error: Option<Failure>,
    /// Cached resources.
    pub resources: usize,
    /// Cached templates.
    pub templates: usize,
    /// True while a refresh is running.
    pub refreshing: bool,
}

/// Catalog errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No such server in the catalog.
    #[error("Server \"{server}\" not found. Available servers: {}", if available.is_empty() { "(none)".to_owned() } else { available.join(", ") })]
    UnknownServer {
        /// The name asked for.
        server: String,
        /// The servers the catalog knows, sorted.
        available: Vec<String>,
    },
    /// A commit with listings of the wrong kind or for another server.
    #[error("server \"{server}\": {reason}")]
    InvalidArgument {
        /// The ticket's server.
        server: String,
        /// What was wrong (fixed text).
        reason: &'static str,
    },
    /// The `subscriptions/listen` stream of a watched 2026-07-28 connection was refused (a
    /// JSON-RPC error: `server_error`) or failed before the server acknowledged it
    /// (`transport_error`). See [`Refresher::handle_listen_closed`](refresher::Refresher::handle_listen_closed).
    #[error("server \"{server}\": subscriptions/listen failed {}", match rpc_code {
        Some(code) => format!("with JSON-RPC error {code}"),
        None => "before the server acknowledged it: the transport failed".to_owned(),
    })]
    ListenFailed {
        /// The watched server.
        server: String,
        /// The JSON-RPC error code of a refusal; `None` when the transport failed.
        rpc_code: Option<i64>,
    },
    /// A second refresher for a catalog that has one (a binding's handle): one machine drives a
    /// catalog.
    #[error("invalid argument: this catalog already has its refresher (one refresher drives a catalog)")]
    AlreadyDriven,
}

impl CatalogError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            CatalogError::UnknownServer { .. } => ErrorCode::UnknownServer,
            CatalogError::InvalidArgument { .. } | CatalogError::AlreadyDriven => ErrorCode::InvalidArgument,
            CatalogError::ListenFailed { rpc_code: Some(_), .. } => ErrorCode::ServerError,
            CatalogError::ListenFailed { rpc_code: None, .. } => ErrorCode::TransportError,
        }
    }

    /// The server the operation named (`None`: the error concerns no server).
    pub fn server(&self) -> Option<&str> {
        match self {
            CatalogError::UnknownServer { server, .. }
            | CatalogError::InvalidArgument { server, .. }
            | CatalogError::ListenFailed { server, .. } => Some(server),
            CatalogError::AlreadyDriven => None,
        }
    }

    /// The JSON-RPC error code of a `server_error`.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            CatalogError::ListenFailed { rpc_code, .. } => *rpc_code,
            _ => None,
        }
    }
}

#[derive(Debug)]
struct Pair {
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    unsupported: bool,
    /// When its `ttlMs` (never shorter than the catalog's floor) runs out.
    expires_at: Option<Duration>,
}

impl Pair {
    /// Has its `ttlMs` run out at `now`?
    fn expired(&self, now: Duration) -> bool {
        self.expires_at.is_some_and(|t| now >= t)
    }
}

#[derive(Debug)]
struct Entry {
    name: String,
    pair: Option<Pair>,
    generation: u64,
    last_error: Option<Failure>,
    /// The last refresh failed (while a pair may still be kept).
    failed: bool,
    /// The newest ticket issued (0 = none).
    latest_ticket: u64,
    /// The sequence number of the last invalidation (clearing, or list_changed).
    invalidated: u64,
    /// A list_changed came after the last refresh that applied: the pair is kept but outdated.
    outdated: bool,
    /// Whether the server declares the `resources` capability (`None`: not known).
    declares_resources: Option<bool>,
    /// The server's connection declares the `completions` capability.
    declares_completions: bool,
    /// A traversal pair holds the newest ticket (it began and has not ended).
    refreshing: bool,
}

impl Entry {
    fn new(name: &str) -> Entry {
        Entry {
            name: name.to_owned(),
            pair: None,
            generation: 0,
            last_error: None,
            failed: false,
            latest_ticket: 0,
            invalidated: 0,
            outdated: false,
            declares_resources: None,
            declares_completions: false,
            refreshing: false,
        }
    }

    /// Clears both lists at once (and what is known of the connection's capabilities).
    fn clear(&mut self, seq: u64) {
        self.invalidated = seq;
        self.pair = None;
        self.failed = false;
        self.outdated = false;
        self.declares_resources = None;
        self.declares_completions = false;
    }

    /// Marks the pair outdated (kept and listed) after a list_changed.
    fn mark_changed(&mut self, seq: u64) {
        self.invalidated = seq;
        self.outdated = true;
    }

    fn status(&self, now: Duration) -> Status {
        match &self.pair {
            None if self.failed => Status::Failed,
            None => Status::Unknown,
            Some(_) if self.outdated => Status::Outdated,
            Some(p) if p.unsupported && !self.failed => Status::Unsupported,
            Some(_) if self.failed => Status::Stale,
            Some(p) if p.expired(now) => Status::Outdated,
            Some(_) => Status::Ok,
        }
    }
}

/// The per-server cache, kept by one [`Refresher`] (see the [module docs](self)): hosts read it
/// through [`Refresher::catalog`].
#[derive(Debug)]
pub struct Catalog {
    /// Registration order.
    entries: Vec<Entry>,
    seq: u64,
    /// Catalog-wide: bumped on every change of what is listed, a status or the visible tools.
    generation: u64,
    /// The shortest `ttlMs` honoured.
    min_ttl: Duration,
}

/// One server's cached templates, as the listing tool renders them.
#[derive(Debug, Clone)]
pub(crate) struct ServerView {
    pub name: String,
    pub templates: Vec<ResourceTemplate>,
    pub failure: Option<Failure>,
    /// The server offers completion of its templates ([`Catalog::offers_completion`]).
    pub completion: bool,
}

/// What became of a commit, failure or abandon: whether it applied (false when the ticket was
/// superseded, invalidated since it began, or its server removed).
pub(crate) type Applied = bool;

impl Catalog {
    /// An empty catalog whose `ttlMs` floor is `min_ttl`.
    pub(crate) fn new(min_ttl: Duration) -> Catalog {
        Catalog { entries: Vec::new(), seq: 0, generation: 0, min_ttl }
    }

    fn find(&self, server: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == server)
    }

    fn find_mut(&mut self, server: &str) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.name == server)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn unknown(&self, server: &str) -> CatalogError {
        let available: BTreeSet<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
        CatalogError::UnknownServer {
            server: server.to_owned(),
            available: available.into_iter().map(str::to_owned).collect(),
        }
    }

    /// Registers a server (idempotent). Servers are listed in registration order.
    pub(crate) fn add_server(&mut self, server: &str) {
        self.entry(server);
    }

    fn entry(&mut self, server: &str) -> &mut Entry {
        match self.entries.iter().position(|e| e.name == server) {
            Some(i) => &mut self.entries[i],
            None => {
                self.generation += 1;
                self.entries.push(Entry::new(server));
                self.entries.last_mut().expect("just pushed")
            }
        }
    }

    /// The registered servers, in registration order.
    pub fn servers(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    /// Starts a traversal pair of `server` (registering it if new): the server's newest ticket;
    /// any older ticket's commit will be discarded.
    pub(crate) fn begin_refresh(&mut self, server: &str) -> Ticket {
        let seq = self.next_seq();
        let e = self.entry(server);
        e.latest_ticket = seq;
        e.refreshing = true;
        Ticket { server: server.to_owned(), seq }
    }

    /// Applies a complete refresh: both listings at once. `now` starts the `ttlMs` clock.
    pub(crate) fn commit(
        &mut self,
        ticket: &Ticket,
        resources: &Listing,
        templates: &Listing,
        now: Duration,
    ) -> Result<Applied, CatalogError> {
        let refused = if resources.kind != ListKind::Resources || templates.kind != ListKind::ResourceTemplates {
            Some("commit takes a resources listing and a templates listing")
        } else if resources.server != ticket.server || templates.server != ticket.server {
            Some("the listings are for another server")
        } else {
            None
        };
        if let Some(reason) = refused {
            // The refresh ends as a failure, so the server is never left "refreshing".
            let e = CatalogError::InvalidArgument { server: ticket.server.clone(), reason };
            self.fail(ticket, Failure { code: e.code(), message: e.to_string() });
            return Err(e);
        }
        let min_ttl = self.min_ttl;
        let Some(e) = self.find_mut(&ticket.server) else { return Ok(false) };
        if !e.applies(ticket) {
            return Ok(false);
        }
        let ttl = [resources.ttl_ms, templates.ttl_ms].into_iter().flatten().min();
        let unsupported = resources.support == Support::NoCapability;
        e.pair = Some(Pair {
            resources: resources.resources().cloned().collect(),
            templates: templates.templates().cloned().collect(),
            unsupported,
            expires_at: ttl.map(|ms| now + Duration::from_millis(ms).max(min_ttl).min(MAX_TTL)),
        });
        e.generation += 1;
        e.failed = false;
        e.outdated = false;
        e.last_error = None;
        e.declares_resources = Some(!unsupported);
        self.generation += 1;
        Ok(true)
    }

    /// Records a failed refresh. The previous pair, if any, is kept (status `stale`).
    pub(crate) fn fail(&mut self, ticket: &Ticket, failure: Failure) -> Applied {
        let Some(e) = self.find_mut(&ticket.server) else { return false };
        if !e.applies(ticket) {
            return false;
        }
        e.failed = true;
        e.outdated = false;
        e.last_error = Some(failure);
        self.generation += 1;
        true
    }

    /// Ends a refresh that will not complete without changing any data.
    pub(crate) fn abandon(&mut self, ticket: &Ticket) {
        if let Some(e) = self.find_mut(&ticket.server).filter(|e| e.latest_ticket == ticket.seq) {
            e.refreshing = false;
        }
    }

    /// Invalidates `server`; a refresh in flight will be discarded. [`Reason::ListChanged`] marks
    /// the pair outdated (still listed until a newer refresh commits); every other reason clears
    /// resources and templates together at once. Unknown servers are ignored.
    pub(crate) fn invalidate(&mut self, server: &str, reason: Reason) {
        let seq = self.next_seq();
        if let Some(e) = self.find_mut(server) {
            match reason {
                Reason::ListChanged => e.mark_changed(seq),
                _ => e.clear(seq),
            }
            self.generation += 1;
        }
    }

    /// Forgets `server` entirely; its tickets become stale. Returns whether it was known.
    pub(crate) fn remove(&mut self, server: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.name != server);
        let removed = self.entries.len() != before;
        if removed {
            self.generation += 1;
        }
        removed
    }

    /// Forgets every server.
    pub(crate) fn clear(&mut self) {
        if !self.entries.is_empty() {
            self.entries.clear();
            self.generation += 1;
        }
    }

    /// Catalog-wide change counter: it moves on every change of what the catalog lists, of a
    /// server's status (commits, failures, invalidations, list_changed, servers added or removed)
    /// and of which tools [`visible_tools`](Self::visible_tools) names. A `ttlMs` running out
    /// does not move it (that is a matter of time, see [`status`](Self::status)). Hosts compare
    /// it with the value they last saw to learn that the tools they offer may have to change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Records whether `server` declares the `resources` capability (from its connection), so
    /// [`visible_tools`](Self::visible_tools) knows before the first refresh. A commit records it
    /// too; clearing the server forgets it. Unknown servers are ignored.
    pub(crate) fn declare_resources(&mut self, server: &str, declares: bool) {
        if let Some(e) = self.find_mut(server) {
            if e.declares_resources != Some(declares) {
                e.declares_resources = Some(declares);
                self.generation += 1;
            }
        }
    }

    /// The shortest `ttlMs` honoured (the refresher's [`RefreshConfig::min_ttl`]): a pair
    /// committed with a smaller `ttlMs` stays current this long.
    pub fn min_ttl(&self) -> Duration {
        self.min_ttl
    }

    /// Would a caller that wants a current listing of `server` ([`Want::Current`]) have it
    /// traversed at `now`? True when it has no pair and no failure, or is outdated (list_changed,
    /// or its `ttlMs` ran out). A failed server (with or without a kept pair) counts as current:
    /// it is answered from the catalog until a retry, list_changed or explicit refresh. The one
    /// freshness rule: the refresher decides [`Want::Current`] by it. An unknown server: true.
    pub fn needs_refresh(&self, server: &str, now: Duration) -> bool {
        let Some(e) = self.find(server) else { return true };
        match &e.pair {
            _ if e.outdated => true,
            None => !e.failed,
            Some(_) if e.failed => false,
            Some(p) => p.expired(now),
        }
    }

    /// `server`'s status at `now`.
    pub fn status(&self, server: &str, now: Duration) -> Result<ServerStatus, CatalogError> {
        let e = self.find(server).ok_or_else(|| self.unknown(server))?;
        Ok(ServerStatus {
            server: e.name.clone(),
            status: e.status(now),
            generation: e.generation,
            last_error: e.last_error.clone(),
            resources: e.pair.as_ref().map_or(0, |p| p.resources.len()),
            templates: e.pair.as_ref().map_or(0, |p| p.templates.len()),
            refreshing: e.refreshing,
        })
    }

    /// Cached templates (all servers in registration order, or one server).
    pub fn templates(&self, server: Option<&str>) -> Result<Vec<ResourceTemplate>, CatalogError> {
        Ok(self.select(server)?.flat_map(|e| e.pair.iter().flat_map(|p| p.templates.iter().cloned())).collect())
    }

    /// Cached resources (all servers in registration order, or one server).
    pub fn resources(&self, server: Option<&str>) -> Result<Vec<Resource>, CatalogError> {
        Ok(self.select(server)?.flat_map(|e| e.pair.iter().flat_map(|p| p.resources.iter().cloned())).collect())
    }

    /// The pair `server` holds: (resources, templates) counts, for the shrink guard.
    pub(crate) fn counts(&self, server: &str) -> Option<(usize, usize)> {
        self.find(server).and_then(|e| e.pair.as_ref()).map(|p| (p.resources.len(), p.templates.len()))
    }

    /// The servers the listing tool shows, with their templates and failures.
    pub(crate) fn views(&self, server: Option<&str>) -> Result<Vec<ServerView>, CatalogError> {
        let views = self
            .select(server)?
            .map(|e| ServerView {
                name: e.name.clone(),
                templates: e.pair.as_ref().map(|p| p.templates.clone()).unwrap_or_default(),
                failure: if e.failed { e.last_error.clone() } else { None },
                completion: e.offers_completion(),
            })
            .collect();
        Ok(views)
    }

    /// [`Catalog::views`] for the resources tool: each server's resources and failure.
    pub(crate) fn resource_views(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<(ServerView, Vec<Resource>)>, CatalogError> {
        let views = self
            .select(server)?
            .map(|e| {
                let view = ServerView {
                    name: e.name.clone(),
                    templates: Vec::new(),
                    failure: if e.failed { e.last_error.clone() } else { None },
                    completion: false,
                };
                (view, e.pair.as_ref().map(|p| p.resources.clone()).unwrap_or_default())
            })
            .collect();
        Ok(views)
    }

    /// Whether any server is known to declare the `resources` capability.
    pub(crate) fn any_declares_resources(&self) -> bool {
        self.entries.iter().any(|e| e.declares_resources == Some(true))
    }

    /// Whether any server offers completion ([`offers_completion`](Self::offers_completion)).
    pub(crate) fn any_offers_completion(&self) -> bool {
        self.entries.iter().any(Entry::offers_completion)
    }

    /// Records whether `server`'s connection declares the `completions` capability. Clearing the
    /// server forgets it. Unknown servers are ignored.
    pub(crate) fn declare_completions(&mut self, server: &str, declares: bool) {
        if let Some(e) = self.find_mut(server) {
            if e.declares_completions != declares {
                e.declares_completions = declares;
                self.generation += 1;
            }
        }
    }

    /// Does `server`'s connection declare the `completions` capability? (False for unknown
    /// servers.) Only such servers are asked `completion/complete`.
    pub fn declares_completions(&self, server: &str) -> bool {
        self.find(server).is_some_and(|e| e.declares_completions)
    }

    /// Does `server` offer completion of its templates: its connection declares `completions`
    /// and it lists at least one template? The listing tool names these servers, and the
    /// completion tool is visible while one exists.
    pub fn offers_completion(&self, server: &str) -> bool {
        self.find(server).is_some_and(Entry::offers_completion)
    }

    fn select<'a>(&'a self, server: Option<&str>) -> Result<impl Iterator<Item = &'a Entry>, CatalogError> {
        if let Some(s) = server {
            if self.find(s).is_none() {
                return Err(self.unknown(s));
            }
        }
        let server = server.map(str::to_owned);
        Ok(self.entries.iter().filter(move |e| server.as_ref().is_none_or(|s| *s == e.name)))
    }
}

impl Entry {
    fn offers_completion(&self) -> bool {
        self.declares_completions && self.pair.as_ref().is_some_and(|p| !p.templates.is_empty())
    }

    /// May `ticket` change this entry? Only the newest ticket, and only when no invalidation came
    /// after it began; either way a ticket that is the newest ends the running refresh.
    fn applies(&mut self, ticket: &Ticket) -> bool {
        if ticket.seq != self.latest_ticket {
            return false;
        }
        self.refreshing = false;
        ticket.seq > self.invalidated
    }
}
