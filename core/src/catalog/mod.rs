//! The per-server catalog: the last complete resources + templates pair of every server, replaced
//! only by a complete, newer refresh.
//!
//! Sans-IO and thread-safe (`&self` everywhere, one internal mutex): the host runs the two
//! traversals with its SDK and reports the outcome; time is passed in.
//!
//! Call order for one refresh:
//!
//! ```text
//! ticket = catalog.begin_refresh(server)            // newest ticket for that server
//! host: Pager traversals of resources/list and resources/templates/list
//! catalog.commit(&ticket, resources, templates, now) // both at once, or nothing
//!   or catalog.fail(&ticket, failure)               // previous pair kept (status stale)
//! → Completion { applied, refresh_again }            // refresh_again: a list_changed came in meanwhile
//! ```
//!
//! A commit is discarded when its ticket is older than the server's latest ticket or latest
//! invalidation: an older traversal never overwrites a newer state.
//!
//! `notifications/resources/list_changed` goes through [`Catalog::on_list_changed`], which marks the
//! pair outdated — still listed, status `outdated` — until a refresh that began after it commits
//! (or fails: the previous pair stays, `stale`), and decides the coalescing:
//!
//! ```text
//!             list_changed                      list_changed (any number)
//!   Idle ─────────────────────▶ Refreshing ─────────────────────▶ Refreshing+Queued
//!    ▲   (RefreshNow: host        │   ▲                                │
//!    │    calls begin_refresh)    │   └── completion, refresh_again ───┘
//!    └──── completion ────────────┘       (host calls begin_refresh once more)
//! ```
//!
//! Hosts that do not want to run that policy themselves drive a [`Refresher`]: the refresh state
//! machine (one traversal pair in flight and one queued per server, joining, connection epochs,
//! retry with backoff and jitter, `ttlMs`, the shrink guard) over this catalog.

mod refresher;
mod visibility;

pub use refresher::{
    advertises_list_changed, Action, CallerId, Disposition, Epoch, InvalidRefreshConfig, Notifications, Outcome,
    RefreshConfig, Refresher, TraversalError, TraversalId, Want,
};
pub use visibility::{LIST_RESOURCES_TOOL, LIST_RESOURCE_TEMPLATES_TOOL};

use crate::error::ErrorCode;
use std::collections::BTreeSet;
use std::sync::Mutex;
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

/// Proof that a refresh was started; hand it back to [`Catalog::commit`] or [`Catalog::fail`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    server: String,
    seq: u64,
}

impl Ticket {
    /// The server this ticket refreshes.
    pub fn server(&self) -> &str {
        &self.server
    }
}

/// What became of a commit or failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// False when the ticket was stale (a newer ticket or an invalidation came after it, or the
    /// server was removed): nothing changed.
    pub applied: bool,
    /// True when a list_changed arrived during the refresh: the host must start exactly one
    /// more refresh now.
    pub refresh_again: bool,
}

/// The core's answer to a list_changed notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListChanged {
    /// No refresh is running: start one now ([`Catalog::begin_refresh`]).
    RefreshNow,
    /// A refresh is running; one more will be requested when it completes.
    Queued,
    /// A refresh is running and one more is already queued: nothing to do.
    AlreadyQueued,
    /// The server is not in the catalog (never added, or removed): nothing to do. A late
    /// notification never brings a removed server back.
    Ignored,
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
    /// (`transport_error`). See [`Refresher::listen_failed`](refresher::Refresher::listen_failed).
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
}

impl CatalogError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            CatalogError::UnknownServer { .. } => ErrorCode::UnknownServer,
            CatalogError::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            CatalogError::ListenFailed { rpc_code: Some(_), .. } => ErrorCode::ServerError,
            CatalogError::ListenFailed { rpc_code: None, .. } => ErrorCode::TransportError,
        }
    }

    /// The server the operation named.
    pub fn server(&self) -> &str {
        match self {
            CatalogError::UnknownServer { server, .. }
            | CatalogError::InvalidArgument { server, .. }
            | CatalogError::ListenFailed { server, .. } => server,
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
    refreshing: bool,
    queued: bool,
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
            refreshing: false,
            queued: false,
        }
    }

    /// Clears both lists at once (and what is known of the connection's capabilities).
    fn clear(&mut self, seq: u64) {
        self.invalidated = seq;
        self.pair = None;
        self.failed = false;
        self.outdated = false;
        self.declares_resources = None;
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

#[derive(Debug)]
struct Inner {
    /// Registration order.
    entries: Vec<Entry>,
    seq: u64,
    /// Catalog-wide: bumped on every change of what is listed, a status or the visible tools.
    generation: u64,
    /// The shortest `ttlMs` honoured.
    min_ttl: Duration,
}

impl Default for Inner {
    fn default() -> Self {
        Inner { entries: Vec::new(), seq: 0, generation: 0, min_ttl: DEFAULT_MIN_TTL }
    }
}

impl Inner {
    fn find(&self, server: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == server)
    }

    fn find_mut(&mut self, server: &str) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.name == server)
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

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// A change readers may want to see (see [`Catalog::generation`]).
    fn changed(&mut self) {
        self.generation += 1;
    }

    fn unknown(&self, server: &str) -> CatalogError {
        let available: BTreeSet<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
        CatalogError::UnknownServer {
            server: server.to_owned(),
            available: available.into_iter().map(str::to_owned).collect(),
        }
    }
}

/// The per-server cache. See the [module docs](self).
#[derive(Debug, Default)]
pub struct Catalog {
    inner: Mutex<Inner>,
}

/// One server's cached templates, as the listing tool renders them.
#[derive(Debug, Clone)]
pub(crate) struct ServerView {
    pub name: String,
    pub templates: Vec<ResourceTemplate>,
    pub failure: Option<Failure>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave an entry half-updated (every update is a
        // single assignment sequence without fallible steps), so a poisoned lock is still sound.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a server (idempotent). Servers are listed in registration order.
    pub fn add_server(&self, server: &str) {
        self.lock().entry(server);
    }

    /// The registered servers, in registration order.
    pub fn servers(&self) -> Vec<String> {
        self.lock().entries.iter().map(|e| e.name.clone()).collect()
    }

    /// Starts a refresh of `server` (registering it if new). The returned ticket is the
    /// server's newest: any older ticket's commit will be discarded.
    pub fn begin_refresh(&self, server: &str) -> Ticket {
        let mut inner = self.lock();
        let seq = inner.next_seq();
        let e = inner.entry(server);
        e.latest_ticket = seq;
        e.refreshing = true;
        Ticket { server: server.to_owned(), seq }
    }

    /// Applies a complete refresh: both listings at once. `now` starts the `ttlMs` clock.
    pub fn commit(
        &self,
        ticket: &Ticket,
        resources: &Listing,
        templates: &Listing,
        now: Duration,
    ) -> Result<Completion, CatalogError> {
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
        let mut inner = self.lock();
        if let Some(c) = inner.find_mut(&ticket.server).map_or(Some(discarded()), |e| superseded(e, ticket)) {
            return Ok(c);
        }
        let ttl = [resources.ttl_ms, templates.ttl_ms].into_iter().flatten().min();
        let min_ttl = inner.min_ttl;
        let Some(e) = inner.find_mut(&ticket.server) else { return Ok(discarded()) };
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
        let c = finish(e);
        inner.changed();
        Ok(c)
    }

    /// Records a failed refresh. The previous pair, if any, is kept (status `stale`).
    pub fn fail(&self, ticket: &Ticket, failure: Failure) -> Completion {
        let mut inner = self.lock();
        let Some(e) = inner.find_mut(&ticket.server) else { return discarded() };
        if let Some(c) = superseded(e, ticket) {
            return c;
        }
        e.failed = true;
        e.outdated = false;
        e.last_error = Some(failure);
        let c = finish(e);
        inner.changed();
        c
    }

    /// Ends a refresh that will not complete (cancelled, or its task dropped) without changing
    /// any data. A queued refresh is still handed out (`refresh_again`).
    pub fn abandon(&self, ticket: &Ticket) -> Completion {
        let mut inner = self.lock();
        let Some(e) = inner.find_mut(&ticket.server) else { return discarded() };
        if ticket.seq != e.latest_ticket {
            return discarded();
        }
        Completion { applied: false, ..finish(e) }
    }

    /// Invalidates `server`; a refresh in flight will be discarded. [`Reason::ListChanged`] marks
    /// the pair outdated (still listed until a newer refresh commits); every other reason clears
    /// resources and templates together at once. Unknown servers are ignored.
    pub fn invalidate(&self, server: &str, reason: Reason) {
        let mut inner = self.lock();
        let seq = inner.next_seq();
        if let Some(e) = inner.find_mut(server) {
            match reason {
                Reason::ListChanged => e.mark_changed(seq),
                _ => e.clear(seq),
            }
            inner.changed();
        }
    }

    /// A `notifications/resources/list_changed` from `server`: marks the pair outdated (kept and
    /// listed), then decides whether the host starts a refresh now. A burst during a running
    /// refresh yields exactly one more.
    ///
    /// On [`ListChanged::RefreshNow`] the host calls [`Catalog::begin_refresh`] before it handles
    /// the next notification (single-threaded hosts do so naturally; a multi-threaded host holds
    /// its own per-server guard). A [`Refresher`] makes these decisions itself.
    pub fn on_list_changed(&self, server: &str) -> ListChanged {
        let mut inner = self.lock();
        let seq = inner.next_seq();
        let Some(e) = inner.find_mut(server) else { return ListChanged::Ignored };
        e.mark_changed(seq);
        let decision = match (e.refreshing, e.queued) {
            (false, _) => ListChanged::RefreshNow,
            (true, false) => {
                e.queued = true;
                ListChanged::Queued
            }
            (true, true) => ListChanged::AlreadyQueued,
        };
        inner.changed();
        decision
    }

    /// Forgets `server` entirely; its tickets become stale. Returns whether it was known.
    pub fn remove(&self, server: &str) -> bool {
        let mut inner = self.lock();
        let before = inner.entries.len();
        inner.entries.retain(|e| e.name != server);
        let removed = inner.entries.len() != before;
        if removed {
            inner.changed();
        }
        removed
    }

    /// Forgets every server.
    pub fn clear(&self) {
        let mut inner = self.lock();
        if !inner.entries.is_empty() {
            inner.entries.clear();
            inner.changed();
        }
    }

    /// Catalog-wide change counter: it moves on every change of what the catalog lists, of a
    /// server's status (commits, failures, invalidations, list_changed, servers added or removed)
    /// and of which tools [`visible_tools`](Self::visible_tools) names. A `ttlMs` running out
    /// does not move it (that is a matter of time, see [`status`](Self::status)). Hosts compare
    /// it with the value they last saw to learn that the tools they offer may have to change.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Records whether `server` declares the `resources` capability (from its `initialize` or
    /// `server/discover` result), so [`visible_tools`](Self::visible_tools) knows before the
    /// first refresh. A commit records it too; clearing the server forgets it. Unknown servers
    /// are ignored.
    pub fn declare_resources(&self, server: &str, declares: bool) {
        let mut inner = self.lock();
        if let Some(e) = inner.find_mut(server) {
            if e.declares_resources != Some(declares) {
                e.declares_resources = Some(declares);
                inner.changed();
            }
        }
    }

    /// The shortest `ttlMs` honoured (default [`DEFAULT_MIN_TTL`]; a [`Refresher`] sets its
    /// [`RefreshConfig::min_ttl`]): a pair committed with a smaller `ttlMs` stays current this long.
    /// Applies to later commits.
    pub fn set_min_ttl(&self, min_ttl: Duration) {
        self.lock().min_ttl = min_ttl;
    }

    /// Is `server`'s pair current at `now` for a caller that wants a current listing: false when it
    /// has no pair and no failure, is outdated (list_changed, or its `ttlMs` ran out). A failed
    /// server (with or without a kept pair) counts as current: it is answered from the catalog
    /// until a retry, list_changed or explicit refresh.
    pub(crate) fn wants_traversal(&self, server: &str, now: Duration) -> bool {
        let inner = self.lock();
        let Some(e) = inner.find(server) else { return true };
        match &e.pair {
            _ if e.outdated => true,
            None => !e.failed,
            Some(_) if e.failed => false,
            Some(p) => p.expired(now),
        }
    }

    /// `server`'s status at `now`.
    pub fn status(&self, server: &str, now: Duration) -> Result<ServerStatus, CatalogError> {
        let inner = self.lock();
        let e = inner.find(server).ok_or_else(|| inner.unknown(server))?;
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

    /// True when `server` has no current pair at `now` (unknown, outdated, failed, stale or
    /// expired): the host should refresh before serving. A running refresh does not count (it
    /// may already be outdated by an invalidation); hosts serialize refreshes per server
    /// themselves.
    pub fn needs_refresh(&self, server: &str, now: Duration) -> bool {
        let inner = self.lock();
        inner.find(server).is_none_or(|e| !matches!(e.status(now), Status::Ok | Status::Unsupported))
    }

    /// Cached templates (all servers in registration order, or one server).
    pub fn templates(&self, server: Option<&str>) -> Result<Vec<ResourceTemplate>, CatalogError> {
        let inner = self.lock();
        let mut out = Vec::new();
        for e in select(&inner, server)? {
            out.extend(e.pair.iter().flat_map(|p| p.templates.iter().cloned()));
        }
        Ok(out)
    }

    /// Cached resources (all servers in registration order, or one server).
    pub fn resources(&self, server: Option<&str>) -> Result<Vec<Resource>, CatalogError> {
        let inner = self.lock();
        let mut out = Vec::new();
        for e in select(&inner, server)? {
            out.extend(e.pair.iter().flat_map(|p| p.resources.iter().cloned()));
        }
        Ok(out)
    }

    /// The servers the listing tool shows, with their templates and failures.
    pub(crate) fn views(&self, server: Option<&str>) -> Result<Vec<ServerView>, CatalogError> {
        let inner = self.lock();
        let views = select(&inner, server)?
            .map(|e| ServerView {
                name: e.name.clone(),
                templates: e.pair.as_ref().map(|p| p.templates.clone()).unwrap_or_default(),
                failure: if e.failed { e.last_error.clone() } else { None },
            })
            .collect();
        Ok(views)
    }

    /// [`Catalog::views`] for the resources tool: each server's resources and failure.
    pub(crate) fn resource_views(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<(ServerView, Vec<Resource>)>, CatalogError> {
        let inner = self.lock();
        let views = select(&inner, server)?
            .map(|e| {
                let view = ServerView {
                    name: e.name.clone(),
                    templates: Vec::new(),
                    failure: if e.failed { e.last_error.clone() } else { None },
                };
                (view, e.pair.as_ref().map(|p| p.resources.clone()).unwrap_or_default())
            })
            .collect();
        Ok(views)
    }
}

fn select<'a>(inner: &'a Inner, server: Option<&str>) -> Result<impl Iterator<Item = &'a Entry>, CatalogError> {
    if let Some(s) = server {
        if inner.find(s).is_none() {
            return Err(inner.unknown(s));
        }
    }
    let server = server.map(str::to_owned);
    Ok(inner.entries.iter().filter(move |e| server.as_ref().is_none_or(|s| *s == e.name)))
}

/// `None` when the ticket may apply. A ticket superseded by a newer one changes nothing; the
/// newest ticket outdated by an invalidation changes no data but still ends the running refresh
/// (and hands out a queued one).
fn superseded(e: &mut Entry, ticket: &Ticket) -> Option<Completion> {
    if ticket.seq != e.latest_ticket {
        return Some(discarded());
    }
    if ticket.seq <= e.invalidated {
        let c = finish(e);
        return Some(Completion { applied: false, ..c });
    }
    None
}

fn discarded() -> Completion {
    Completion { applied: false, refresh_again: false }
}

/// Ends the running refresh; hands out the queued one, if any.
fn finish(e: &mut Entry) -> Completion {
    e.refreshing = false;
    let again = std::mem::take(&mut e.queued);
    Completion { applied: true, refresh_again: again }
}
