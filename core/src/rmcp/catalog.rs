//! The catalog driver: [`CatalogDriver`] and its rmcp [`CatalogClientHandler`] (feature `rmcp`).
//! The documentation is on [`CatalogDriver`] (this module is private; its items are re-exported
//! from `mcplens::rmcp`).

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use ::rmcp::model::ClientConfig;
use ::rmcp::service::{ClientInitializeError, NotificationContext, RunningService};
use ::rmcp::transport::IntoTransport;
use ::rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use tokio::sync::{broadcast, oneshot, watch, Notify};

use super::list;
use crate::catalog::{Catalog, CatalogError, Completion, Failure, ListChanged, Reason, Status, Ticket};
use crate::discovery::{Diagnostics, DiscoveryError, Limits, ListKind, Listing};
use crate::tool::{self, Input, ToolError};

/// How many [`DriverEvent`]s a slow subscriber may fall behind before it lags.
const EVENT_CAPACITY: usize = 1024;

/// What a refresh call came to (the errors are in [`RefreshError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefreshOutcome {
    /// The cached pair was current: nothing was sent to the server.
    CacheHit,
    /// Both listings were committed to the catalog.
    Committed,
    /// The result was discarded: the server was invalidated (and no follow-up refresh committed
    /// in time for this call), reconfigured or removed while the traversals ran.
    Discarded,
}

/// Why a refresh call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RefreshError {
    /// The server is unknown to the driver (the message names the available servers).
    #[error(transparent)]
    Catalog(CatalogError),
    /// A traversal failed; the catalog recorded the failure and keeps the last good pair.
    #[error(transparent)]
    Discovery(DiscoveryError),
}

impl RefreshError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> &'static str {
        match self {
            RefreshError::Catalog(e) => e.code(),
            RefreshError::Discovery(e) => e.code(),
        }
    }
}

/// What the last committed refresh of a server counted, one [`Diagnostics`] per list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerDiagnostics {
    /// The `resources/list` traversal.
    pub resources: Diagnostics,
    /// The `resources/templates/list` traversal.
    pub templates: Diagnostics,
}

/// Something the driver did, for hosts that log or wait (see [`CatalogDriver::subscribe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverEvent {
    /// A `notifications/resources/list_changed` from `server` reached the catalog.
    ListChanged {
        /// The server.
        server: String,
        /// The core's coalescing decision.
        decision: ListChanged,
    },
    /// A refresh (both traversals) of `server` ended.
    RefreshCompleted {
        /// The server.
        server: String,
        /// The catalog's answer to the commit or failure.
        completion: Completion,
        /// The failure's code, when a traversal failed.
        error: Option<&'static str>,
    },
    /// `server`'s entries were invalidated by the driver.
    Invalidated {
        /// The server.
        server: String,
        /// Why.
        reason: Reason,
    },
}

/// Keeps a [`Catalog`] of several rmcp servers current (feature `rmcp`).
///
/// [`CatalogDriver`] owns one rmcp client [`Peer`] per server name over one shared
/// [`Arc<Catalog>`]. It runs the two traversals of a refresh with [`list`] (resources, then
/// templates) and hands the core the outcome as one transaction: [`Catalog::commit`] of both
/// listings, or [`Catalog::fail`] with the first error (the catalog keeps the last good pair).
/// Every rule — which commit wins, what a failure keeps, how list_changed notifications are
/// coalesced — is the core's; the driver only does the I/O and the scheduling the core asks for.
///
/// ```no_run
/// # async fn demo(io: tokio::io::DuplexStream) -> Result<(), Box<dyn std::error::Error>> {
/// use mcplens::discovery::Limits;
/// use mcplens::rmcp::CatalogDriver;
///
/// let driver = CatalogDriver::new(Limits::default());
/// // Serves a `CatalogClientHandler` over the transport, registers the peer, watches the connection.
/// let _docs = driver.connect("docs", io).await?;
/// // What the model's `ListMcpResourceTemplatesTool` call returns (stale servers refreshed first).
/// let output = driver.call_tool(r#"{"server":"docs"}"#).await?;
/// println!("{output}");
/// # Ok(()) }
/// ```
///
/// # Servers and connections
///
/// - [`CatalogDriver::connect`] serves a [`CatalogClientHandler`] over a transport (the
///   `initialize` handshake), then [`attach`](CatalogDriver::attach)es the running service: the
///   driver registers its peer and takes the connection over (see *Connection closed* below).
/// - [`CatalogDriver::attach`] does the same for a `RunningService` the caller built from
///   [`CatalogDriver::client_handler`].
/// - [`CatalogDriver::add_server`] registers a bare [`Peer`] whose connection the caller keeps
///   managing. A [`CatalogClientHandler`] of this driver with the same server name still feeds its
///   list_changed notifications in; closure is the caller's to report, with
///   [`invalidate`](CatalogDriver::invalidate)`(name, Reason::ConnectionClosed)`.
///
/// Servers are listed by the tool in registration order. Registering a name again is a
/// **reconfiguration**: the new peer replaces the old one, the catalog entry is invalidated with
/// [`Reason::ConfigurationChanged`] (a refresh still running on the old peer is discarded by the
/// catalog), and a connection the driver owned for the old peer is closed. The server keeps its
/// place in the order. [`remove`](CatalogDriver::remove) forgets a server (catalog entry
/// included, so a refresh still running is discarded) and closes a connection the driver owned.
///
/// # Refreshes
///
/// - [`refresh`](CatalogDriver::refresh) always traverses;
///   [`ensure_fresh`](CatalogDriver::ensure_fresh) and
///   [`ensure_all_fresh`](CatalogDriver::ensure_all_fresh) traverse only when the server has no
///   current pair (status not `ok`/`unsupported`: never refreshed, invalidated, failed, stale, or
///   past its `ttlMs`); a cache hit sends nothing.
/// - Refreshes of one server (one connection) are **serialized**: each runs in its own spawned task
///   that holds the server's refresh lock (a fair tokio mutex) for the whole traversal pair, so a
///   caller that drops its future never leaves a ticket open. An ensure that finds a refresh
///   running waits for it and then decides.
/// - When a completion reports `refresh_again`, the task that ran it starts exactly one more
///   refresh (after releasing and re-taking the lock, so waiting callers are not starved by a
///   server that keeps notifying); that follow-up is skipped if another refresh has committed
///   meanwhile, which by the core's rule began after the notification.
/// - The awaited result is that of the caller's own refresh; when that one was discarded because
///   a list_changed arrived meanwhile, the caller also waits for the one follow-up refresh (but no
///   further, so a server that keeps notifying cannot hold a caller forever). Each traversal is
///   bounded by the driver's [`Limits`] (`deadline` included), so every wait is bounded.
/// - [`call_tool`](CatalogDriver::call_tool) parses the model's input, then ensures the selected
///   server (or every server) is fresh within the traversal bounds, then renders from the catalog
///   with [`tool::render`]. A `server` filter naming an unknown server refreshes nothing and
///   returns the core's `unknown_server` error.
///
/// # `notifications/resources/list_changed`
///
/// [`CatalogClientHandler::on_resource_list_changed`] calls [`Catalog::on_list_changed`] for its
/// server, whether or not the server advertised `resources.listChanged`, and acts on the core's
/// answer: [`ListChanged::RefreshNow`] spawns a refresh; [`ListChanged::Queued`] and
/// [`ListChanged::AlreadyQueued`] do nothing, because the running refresh's completion reports
/// `refresh_again` and the task that ran it starts exactly one more. rmcp runs each inbound
/// notification in its own task, so the driver takes the core's decision and marks the spawned
/// refresh as pending under one lock: a second notification that arrives before that refresh has
/// begun is already covered by it. A notification for a server the driver does not (or no longer)
/// hold is ignored. On a `2026-07-28` connection rmcp delivers list_changed notifications routed
/// to a `listen` subscription to that subscription, not to the handler; the driver opens none.
///
/// # Connection closed
///
/// rmcp 3.11 has no close callback on `Service`/`ClientHandler`, its
/// `RunningServiceCancellationToken` can only cancel (it cannot be awaited), and end-of-stream
/// does not cancel the service's external token. The serve loop's end is observable only through
/// [`RunningService::waiting`] (it resolves with `QuitReason::Closed` on end of stream and
/// `Cancelled` after a cancel) and, by polling, `Peer::is_transport_closed`. So a connection the
/// driver owns ([`connect`](CatalogDriver::connect) / [`attach`](CatalogDriver::attach)) is moved
/// into a watcher task that awaits `waiting()`; when it resolves, the driver invalidates the
/// server with [`Reason::ConnectionClosed`] — unless the server has been replaced or removed
/// since (connections are told apart by an id, so an old connection's closure never clears a new
/// one's entries). The [`Connection`] handle returned closes the connection on demand and tells
/// when it has closed. Later refreshes of a closed peer fail fast with `transport_error`.
///
/// One server's failure, closure or removal never touches another server's entries.
///
/// Cheap to clone: all clones drive the same catalog.
#[derive(Clone)]
pub struct CatalogDriver {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for CatalogDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogDriver")
            .field("servers", &self.servers())
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

struct Shared {
    catalog: Arc<Catalog>,
    limits: Limits,
    /// The catalog's clock: `now` is the time since this instant (a paused tokio clock works).
    epoch: tokio::time::Instant,
    state: Mutex<State>,
    events: broadcast::Sender<DriverEvent>,
}

#[derive(Default)]
struct State {
    /// Registration order.
    slots: Vec<Slot>,
    next_id: u64,
}

impl State {
    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn slot(&self, server: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == server)
    }

    fn slot_mut(&mut self, server: &str) -> Option<&mut Slot> {
        self.slots.iter_mut().find(|s| s.name == server)
    }

    fn unknown(&self, server: &str) -> CatalogError {
        let mut available: Vec<String> = self.slots.iter().map(|s| s.name.clone()).collect();
        available.sort();
        CatalogError::UnknownServer { server: server.to_owned(), available }
    }
}

/// One server as the driver holds it.
struct Slot {
    name: String,
    peer: Peer<RoleClient>,
    /// This registration's id: tells an old connection's refreshes and closure from the current's.
    conn: u64,
    /// The [`CatalogClientHandler`] whose notifications count (`None`: any of this driver's
    /// handlers with this server name).
    handler: Option<u64>,
    /// Held by the refresh running on this connection.
    serial: Arc<tokio::sync::Mutex<()>>,
    /// A list_changed refresh was spawned and has not begun yet.
    pending: bool,
    /// The connection the driver owns, if any; dropping the slot closes it.
    closer: Option<Arc<Closer>>,
    /// What the last committed refresh counted.
    diagnostics: Option<ServerDiagnostics>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(closer) = &self.closer {
            closer.close.notify_one();
        }
    }
}

struct Closer {
    close: Notify,
    closed: watch::Sender<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Traverse no matter what.
    Always,
    /// Traverse only when the server has no current pair.
    IfNeeded,
}

type Reply = oneshot::Sender<Result<RefreshOutcome, RefreshError>>;

impl CatalogDriver {
    /// A driver over a new, empty catalog; every traversal is bounded by `limits`.
    pub fn new(limits: Limits) -> CatalogDriver {
        CatalogDriver::with_catalog(Arc::new(Catalog::new()), limits)
    }

    /// A driver over an existing catalog (which may be shared with other readers). The driver
    /// passes its own clock as `now` (see [`now`](Self::now)); readers asking the catalog for a
    /// status should pass the same.
    pub fn with_catalog(catalog: Arc<Catalog>, limits: Limits) -> CatalogDriver {
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        CatalogDriver {
            shared: Arc::new(Shared {
                catalog,
                limits,
                epoch: tokio::time::Instant::now(),
                state: Mutex::new(State::default()),
                events,
            }),
        }
    }

    /// The catalog this driver keeps current.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.shared.catalog
    }

    /// The bounds of every traversal.
    pub fn limits(&self) -> Limits {
        self.shared.limits
    }

    /// The catalog's clock reading now (what the driver passes as `now`).
    pub fn now(&self) -> Duration {
        self.shared.now()
    }

    /// The servers, in registration order.
    pub fn servers(&self) -> Vec<String> {
        self.shared.lock().slots.iter().map(|s| s.name.clone()).collect()
    }

    /// The peer registered for `server`.
    pub fn peer(&self, server: &str) -> Option<Peer<RoleClient>> {
        self.shared.lock().slot(server).map(|s| s.peer.clone())
    }

    /// What the last committed refresh of `server` counted (dropped fields, sanitized strings,
    /// pages, …); `None` before the first commit on the current registration.
    pub fn diagnostics(&self, server: &str) -> Option<ServerDiagnostics> {
        self.shared.lock().slot(server).and_then(|s| s.diagnostics.clone())
    }

    /// Subscribes to the driver's [`DriverEvent`]s (from now on).
    pub fn subscribe(&self) -> broadcast::Receiver<DriverEvent> {
        self.shared.events.subscribe()
    }

    /// A client handler for `server`, to serve over a transport and then
    /// [`attach`](Self::attach) (or use [`connect`](Self::connect), which does both).
    pub fn client_handler(&self, server: &str) -> CatalogClientHandler {
        let id = self.shared.lock().next_id();
        CatalogClientHandler {
            driver: Arc::downgrade(&self.shared),
            server: server.to_owned(),
            id,
            config: ClientConfig::default(),
        }
    }

    /// Registers `server` with a peer whose connection the caller manages (registration order is
    /// the tool's order). Registering a known name again is a reconfiguration: the catalog entry
    /// is invalidated with [`Reason::ConfigurationChanged`] and a connection the driver owned for
    /// the old peer is closed. Closure of this peer's connection is the caller's to report with
    /// [`invalidate`](Self::invalidate)`(server, Reason::ConnectionClosed)`.
    pub fn add_server(&self, server: &str, peer: Peer<RoleClient>) {
        self.shared.register(server, peer, None, None);
    }

    /// Registers the server of a running [`CatalogClientHandler`] (made by
    /// [`client_handler`](Self::client_handler)) and takes its connection over: a watcher task
    /// awaits [`RunningService::waiting`] and invalidates the server with
    /// [`Reason::ConnectionClosed`] when the connection ends. Must be called within a tokio
    /// runtime. The handler must come from this driver: only its notifications reach this
    /// driver, and only its id is accepted for this registration.
    pub fn attach(&self, running: RunningService<RoleClient, CatalogClientHandler>) -> Connection {
        let server = running.service().server.clone();
        let handler = running.service().id;
        let (closed, closed_rx) = watch::channel(false);
        let closer = Arc::new(Closer { close: Notify::new(), closed });
        let peer = running.peer().clone();
        let conn = self.shared.register(&server, peer.clone(), Some(handler), Some(closer.clone()));

        let shared = Arc::downgrade(&self.shared);
        let token = running.cancellation_token();
        let watched = closer.clone();
        let name = server.clone();
        tokio::spawn(async move {
            let waiting = running.waiting();
            tokio::pin!(waiting);
            tokio::select! {
                _ = &mut waiting => {}
                () = watched.close.notified() => {
                    token.cancel();
                    let _ = waiting.await;
                }
            }
            if let Some(shared) = shared.upgrade() {
                shared.connection_closed(&name, conn);
            }
            watched.closed.send_replace(true);
        });
        Connection { server, peer, closer, closed: closed_rx }
    }

    /// Connects to `server` over `transport` with a [`CatalogClientHandler`] (the `initialize`
    /// handshake), then [`attach`](Self::attach)es the connection.
    pub async fn connect<T, E, A>(&self, server: &str, transport: T) -> Result<Connection, ClientInitializeError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = self.client_handler(server).serve(transport).await?;
        Ok(self.attach(running))
    }

    /// Forgets `server`: its catalog entry goes (a refresh still running is discarded) and a
    /// connection the driver owned is closed. Returns whether the driver knew it.
    pub fn remove(&self, server: &str) -> bool {
        let mut state = self.shared.lock();
        let Some(i) = state.slots.iter().position(|s| s.name == server) else { return false };
        let slot = state.slots.remove(i);
        self.shared.catalog.remove(server);
        drop(state);
        drop(slot);
        true
    }

    /// Invalidates `server`'s entries (both lists) for `reason`; a refresh still running is
    /// discarded. Unknown servers are ignored.
    pub fn invalidate(&self, server: &str, reason: Reason) {
        let mut state = self.shared.lock();
        if let Some(slot) = state.slot_mut(server) {
            slot.diagnostics = None;
            self.shared.catalog.invalidate(server, reason);
            self.shared.emit(DriverEvent::Invalidated { server: server.to_owned(), reason });
        }
    }

    /// Refreshes `server` now: both traversals, committed as one transaction, or the first error
    /// (the catalog keeps the last good pair). Waits for a refresh already running first.
    pub async fn refresh(&self, server: &str) -> Result<RefreshOutcome, RefreshError> {
        self.shared.start(server, Mode::Always)?.await.unwrap_or(Ok(RefreshOutcome::Discarded))
    }

    /// Refreshes `server` only if it has no current pair; a cache hit sends nothing. Waits for a
    /// refresh already running first.
    pub async fn ensure_fresh(&self, server: &str) -> Result<RefreshOutcome, RefreshError> {
        self.shared.start(server, Mode::IfNeeded)?.await.unwrap_or(Ok(RefreshOutcome::Discarded))
    }

    /// [`ensure_fresh`](Self::ensure_fresh) for every server, concurrently; the results in
    /// registration order.
    pub async fn ensure_all_fresh(&self) -> Vec<(String, Result<RefreshOutcome, RefreshError>)> {
        let started: Vec<_> =
            self.servers().into_iter().map(|name| (name.clone(), self.shared.start(&name, Mode::IfNeeded))).collect();
        let mut results = Vec::with_capacity(started.len());
        for (name, started) in started {
            let result = match started {
                Ok(reply) => reply.await.unwrap_or(Ok(RefreshOutcome::Discarded)),
                Err(e) => Err(e),
            };
            results.push((name, result));
        }
        results
    }

    /// The `ListMcpResourceTemplatesTool` call: parses `input_json`, ensures the selected server
    /// (or every server) is fresh, and renders from the catalog. A refresh failure does not fail
    /// the call: the server shows in `failures`, with its last good templates if any.
    pub async fn call_tool(&self, input_json: &str) -> Result<String, ToolError> {
        let input = Input::from_json(input_json)?;
        self.render_tool(&input).await
    }

    /// [`call_tool`](Self::call_tool) with parsed input.
    pub async fn render_tool(&self, input: &Input) -> Result<String, ToolError> {
        match input.server.as_deref() {
            Some(server) => {
                if let Ok(reply) = self.shared.start(server, Mode::IfNeeded) {
                    let _ = reply.await;
                }
            }
            None => {
                self.ensure_all_fresh().await;
            }
        }
        tool::render(&self.shared.catalog, input)
    }

    /// [`Catalog::status`] at the driver's clock.
    pub fn status(&self, server: &str) -> Result<crate::catalog::ServerStatus, CatalogError> {
        self.shared.catalog.status(server, self.shared.now())
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update under this lock is a plain assignment sequence: a poisoned lock is sound.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn emit(&self, event: DriverEvent) {
        // No subscriber is fine.
        let _ = self.events.send(event);
    }

    fn register(&self, server: &str, peer: Peer<RoleClient>, handler: Option<u64>, closer: Option<Arc<Closer>>) -> u64 {
        let mut state = self.lock();
        let conn = state.next_id();
        let slot = Slot {
            name: server.to_owned(),
            peer,
            conn,
            handler,
            serial: Arc::default(),
            pending: false,
            closer,
            diagnostics: None,
        };
        let old = match state.slots.iter().position(|s| s.name == server) {
            Some(i) => {
                let old = std::mem::replace(&mut state.slots[i], slot);
                self.catalog.invalidate(server, Reason::ConfigurationChanged);
                self.emit(DriverEvent::Invalidated { server: server.to_owned(), reason: Reason::ConfigurationChanged });
                Some(old)
            }
            None => {
                state.slots.push(slot);
                self.catalog.add_server(server);
                None
            }
        };
        drop(state);
        // Closes a connection the driver owned for the old peer.
        drop(old);
        conn
    }

    /// The watcher saw connection `conn` of `server` end.
    fn connection_closed(&self, server: &str, conn: u64) {
        let mut state = self.lock();
        if let Some(slot) = state.slot_mut(server).filter(|s| s.conn == conn) {
            slot.diagnostics = None;
            self.catalog.invalidate(server, Reason::ConnectionClosed);
            self.emit(DriverEvent::Invalidated { server: server.to_owned(), reason: Reason::ConnectionClosed });
        }
    }

    /// A list_changed from `server`, received by handler `handler`.
    fn list_changed(self: &Arc<Self>, server: &str, handler: u64) {
        let mut state = self.lock();
        let Some(slot) = state.slot_mut(server) else { return };
        if slot.handler.is_some_and(|h| h != handler) {
            return;
        }
        let decision = self.catalog.on_list_changed(server);
        self.emit(DriverEvent::ListChanged { server: server.to_owned(), decision });
        if decision == ListChanged::RefreshNow && !slot.pending {
            slot.pending = true;
            self.spawn_chain(slot, Mode::IfNeeded, None);
        }
    }

    /// Starts a refresh of `server` in its own task; the receiver gets the caller's result.
    fn start(
        self: &Arc<Self>,
        server: &str,
        mode: Mode,
    ) -> Result<oneshot::Receiver<Result<RefreshOutcome, RefreshError>>, RefreshError> {
        let state = self.lock();
        let Some(slot) = state.slot(server) else { return Err(RefreshError::Catalog(state.unknown(server))) };
        let (tx, rx) = oneshot::channel();
        self.spawn_chain(slot, mode, Some(tx));
        Ok(rx)
    }

    fn spawn_chain(self: &Arc<Self>, slot: &Slot, mode: Mode, reply: Option<Reply>) {
        let chain = Chain {
            shared: self.clone(),
            server: slot.name.clone(),
            conn: slot.conn,
            serial: slot.serial.clone(),
            mode,
            reply,
        };
        tokio::spawn(chain.run());
    }
}

/// One refresh and the follow-ups the core asks for, run in its own task.
struct Chain {
    shared: Arc<Shared>,
    server: String,
    conn: u64,
    serial: Arc<tokio::sync::Mutex<()>>,
    mode: Mode,
    reply: Option<Reply>,
}

enum Begun {
    /// The cached pair is current.
    Fresh,
    /// Go: traverse this peer, then complete this ticket.
    Go(Peer<RoleClient>, Ticket),
    /// The registration is gone (removed or replaced).
    Gone,
}

impl Chain {
    async fn run(mut self) {
        let mut follow_up = false;
        loop {
            // Held for one traversal pair, released before a follow-up so that callers waiting
            // for this server get their turn even while a server keeps notifying.
            let serialized = self.serial.clone().lock_owned().await;
            let (peer, ticket) = match self.begin(follow_up) {
                Begun::Fresh => return self.answer(Ok(RefreshOutcome::CacheHit)),
                Begun::Gone => return self.answer(Ok(RefreshOutcome::Discarded)),
                Begun::Go(peer, ticket) => (peer, ticket),
            };
            let (result, completion) = self.refresh_once(&peer, ticket).await;
            drop(serialized);
            // The caller's own refresh, or its one follow-up when its result was discarded by a
            // list_changed.
            if follow_up || result != Ok(RefreshOutcome::Discarded) || !completion.refresh_again {
                self.answer(result);
            }
            if !completion.refresh_again {
                return;
            }
            follow_up = true;
        }
    }

    fn answer(&mut self, result: Result<RefreshOutcome, RefreshError>) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(result);
        }
    }

    /// Under the driver lock: is the registration still current, is a traversal needed, and if
    /// so the ticket (taken under the same lock as the membership check, so a removed server is
    /// never re-registered by `begin_refresh`).
    fn begin(&self, follow_up: bool) -> Begun {
        let shared = &self.shared;
        let mut state = shared.lock();
        let Some(slot) = state.slot_mut(&self.server) else { return Begun::Gone };
        if slot.conn != self.conn {
            if follow_up {
                // The core asked this chain for one more refresh: the current connection does it.
                slot.pending = true;
                shared.spawn_chain(slot, Mode::IfNeeded, None);
            }
            return Begun::Gone;
        }
        // Whatever begins now starts after every notification received so far.
        slot.pending = false;
        // A follow-up is skipped when another refresh committed since: a commit applies only if
        // its ticket is newer than the latest invalidation, so it already saw the change.
        if self.mode == Mode::IfNeeded || follow_up {
            let current = shared
                .catalog
                .status(&self.server, shared.now())
                .is_ok_and(|s| matches!(s.status, Status::Ok | Status::Unsupported));
            if current {
                return Begun::Fresh;
            }
        }
        Begun::Go(slot.peer.clone(), shared.catalog.begin_refresh(&self.server))
    }

    /// Both traversals, then the commit or failure.
    async fn refresh_once(
        &self,
        peer: &Peer<RoleClient>,
        ticket: Ticket,
    ) -> (Result<RefreshOutcome, RefreshError>, Completion) {
        let shared = &self.shared;
        let mut guard = TicketGuard { catalog: &shared.catalog, ticket: Some(ticket) };
        let traversed = traverse(peer, &self.server, shared.limits).await;
        let ticket = guard.ticket.take().expect("taken once");
        let (result, completion, error) = match traversed {
            Ok((resources, templates)) => {
                match shared.catalog.commit(&ticket, &resources, &templates, shared.now()) {
                    Ok(c) if c.applied => {
                        let mut state = shared.lock();
                        if let Some(slot) = state.slot_mut(&self.server).filter(|s| s.conn == self.conn) {
                            slot.diagnostics = Some(ServerDiagnostics {
                                resources: resources.diagnostics,
                                templates: templates.diagnostics,
                            });
                        }
                        (Ok(RefreshOutcome::Committed), c, None)
                    }
                    Ok(c) => (Ok(RefreshOutcome::Discarded), c, None),
                    Err(e) => {
                        // Cannot happen (the listings are this server's, of the right kinds);
                        // still end the ticket so the server is never stuck "refreshing".
                        let failure = Failure { code: e.code().to_owned(), message: e.to_string() };
                        let c = shared.catalog.fail(&ticket, failure);
                        (Err(RefreshError::Catalog(e)), c, None)
                    }
                }
            }
            Err(e) => {
                let c = shared.catalog.fail(&ticket, Failure::from(&e));
                let code = e.code();
                let result = if c.applied { Err(RefreshError::Discovery(e)) } else { Ok(RefreshOutcome::Discarded) };
                (result, c, Some(code))
            }
        };
        shared.emit(DriverEvent::RefreshCompleted { server: self.server.clone(), completion, error });
        (result, completion)
    }
}

/// Ends a ticket whose traversal was abandoned (the task was dropped, e.g. at runtime shutdown),
/// so the server never stays "refreshing".
struct TicketGuard<'a> {
    catalog: &'a Catalog,
    ticket: Option<Ticket>,
}

impl Drop for TicketGuard<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.catalog.abandon(&ticket);
        }
    }
}

/// Resources, then templates; the first error fails the pair.
async fn traverse(peer: &Peer<RoleClient>, server: &str, limits: Limits) -> Result<(Listing, Listing), DiscoveryError> {
    let resources = list(peer, ListKind::Resources, server, limits).await?;
    let templates = list(peer, ListKind::ResourceTemplates, server, limits).await?;
    Ok((resources, templates))
}

/// A connection the driver owns (from [`CatalogDriver::connect`] or [`CatalogDriver::attach`]).
///
/// Dropping the handle leaves the connection open; it closes on [`close`](Self::close), when
/// the server is removed from or replaced in the driver, or when the driver is dropped.
#[derive(Debug)]
pub struct Connection {
    server: String,
    peer: Peer<RoleClient>,
    closer: Arc<Closer>,
    closed: watch::Receiver<bool>,
}

impl std::fmt::Debug for Closer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Closer").field("closed", &*self.closed.borrow()).finish()
    }
}

impl Connection {
    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The client peer (for the host's other requests, e.g. `resources/read`).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Asks the connection to close; [`closed`](Self::closed) tells when it has.
    pub fn close(&self) {
        self.closer.close.notify_one();
    }

    /// True once the connection has ended and the driver has invalidated the server.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Waits until the connection has ended and the driver has invalidated the server.
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        // The sender lives in the watcher task until after it sends `true`.
        let _ = closed.wait_for(|c| *c).await;
    }
}

/// The rmcp client handler of one server of a [`CatalogDriver`] (made by
/// [`CatalogDriver::client_handler`]): turns `notifications/resources/list_changed` into the
/// core's [`Catalog::on_list_changed`] and the coalesced refresh it asks for, whether or not the
/// server advertised `listChanged`. Holds the driver weakly.
#[derive(Debug, Clone)]
pub struct CatalogClientHandler {
    driver: Weak<Shared>,
    server: String,
    id: u64,
    config: ClientConfig,
}

impl CatalogClientHandler {
    /// The server this handler's notifications are about.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Sends `config` (client info and capabilities) in `initialize` instead of rmcp's default.
    pub fn with_config(mut self, config: ClientConfig) -> CatalogClientHandler {
        self.config = config;
        self
    }
}

impl ClientHandler for CatalogClientHandler {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(shared) = self.driver.upgrade() {
            shared.list_changed(&self.server, self.id);
        }
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}
