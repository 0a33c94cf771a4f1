//! The catalog driver: [`CatalogDriver`] and its rmcp [`CatalogClientHandler`] (feature `rmcp`).
//! The documentation is on [`CatalogDriver`] (this module is private; its items are re-exported
//! from `mcplens::rmcp`).

use crate::error::ErrorCode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use ::rmcp::model::{ClientConfig, ServerNotification, SubscriptionFilter};
use ::rmcp::service::{ClientInitializeError, NotificationContext, RunningService};
use ::rmcp::transport::IntoTransport;
use ::rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use tokio::sync::{broadcast, oneshot, watch, Notify};

use super::{capabilities_json, fetch_page, protocol_version};
use crate::catalog::{
    Action, CallerId, Catalog, CatalogError, Disposition, Epoch, ListChanged, ListenClosed, Liveness, Notifications,
    Outcome, PairTraversal, Reason, RefreshConfig, Refresher, ServerStatus, TraversalError, TraversalId, Want,
};
use crate::discovery::{Diagnostics, DiscoveryError, Limits, Listing};
use crate::tool::{self, CallConfig, Input, ReadConfig, ServerCall, ToolError};

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
    /// Nothing came of it: the connection closed or was replaced, the server was removed, or two
    /// list_changed in a row outdated the traversals this call waited for.
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
    /// The server has no connection (it closed); the catalog recorded a `transport_error`.
    #[error("{message}")]
    NotConnected {
        /// The server.
        server: String,
        /// mcplens' message.
        message: String,
    },
}

impl RefreshError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            RefreshError::Catalog(e) => e.code(),
            RefreshError::Discovery(e) => e.code(),
            RefreshError::NotConnected { .. } => ErrorCode::TransportError,
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
    /// A `notifications/resources/list_changed` from `server` reached the refresher.
    ListChanged {
        /// The server.
        server: String,
        /// The refresher's decision.
        decision: ListChanged,
    },
    /// A traversal pair of `server` ended.
    Traversed {
        /// The server.
        server: String,
        /// What the refresher did with it.
        disposition: Disposition,
        /// The failure's code, when a traversal failed.
        error: Option<ErrorCode>,
    },
    /// `server`'s connection ended (closed, replaced, disabled): both lists were cleared.
    Invalidated {
        /// The server.
        server: String,
        /// Why.
        reason: Reason,
    },
    /// How `server`'s new connection learns of changes was decided ([`Refresher::watch`]), or
    /// changed to [`Notifications::NotOffered`] when the server answered the
    /// `subscriptions/listen` stream with -32601 or ended it while the connection stays
    /// ([`Refresher::handle_listen_closed`]: the pair is re-listed then).
    Watching {
        /// The server.
        server: String,
        /// Unasked (before 2026-07-28), on a listen stream, or not offered.
        notifications: Notifications,
    },
    /// `server` refused the `subscriptions/listen` stream (or it failed before the
    /// acknowledgement): no change notifications will arrive on this connection; its pair stays
    /// listed and refreshes still reach the server ([`Refresher::handle_listen_closed`]).
    ListenFailed {
        /// The server.
        server: String,
        /// `server_error` (with the JSON-RPC code) or `transport_error`.
        error: CatalogError,
    },
}

/// Keeps a [`Catalog`] of several rmcp servers current (feature `rmcp`).
///
/// [`CatalogDriver`] performs the actions of the core's [`Refresher`] (every rule — joining,
/// queueing, connection epochs, retries with backoff, `ttlMs`, the shrink guard — is the
/// machine's; see `docs/catalog.md`) with rmcp's I/O: a [`Action::Traverse`] runs [`list`]
/// for resources, then templates, over the peer of that connection in a spawned task; an
/// [`Action::Resolve`] wakes the waiting callers; one timer task sleeps until
/// [`Refresher::poll_timeout`].
///
/// ```no_run
/// # async fn demo(io: tokio::io::DuplexStream) -> Result<(), Box<dyn std::error::Error>> {
/// use mcplens::discovery::Limits;
/// use mcplens::rmcp::CatalogDriver;
///
/// let driver = CatalogDriver::new(Limits::default());
/// // Serves a `CatalogClientHandler` over the transport, attaches the connection, watches it.
/// let _docs = driver.connect("docs", io).await?;
/// // What the model's `ListMcpResourceTemplatesTool` call returns (stale servers refreshed first).
/// let output = driver.call_tool(r#"{"server":"docs"}"#).await?;
/// println!("{output}");
/// # Ok(()) }
/// ```
///
/// # Servers and connections
///
/// - [`connect`](Self::connect) serves a [`CatalogClientHandler`] over a transport (the
///   `initialize` or `server/discover` handshake), then [`attach`](Self::attach)es the running
///   service: a new connection (epoch) of that server, which the driver owns and watches.
/// - [`add_server`](Self::add_server) attaches a bare [`Peer`] whose connection the caller keeps
///   managing; it reports the end with [`detach`](Self::detach)`(server, epoch, reason)`.
///
/// A new connection under a name that has one **replaces** it: the old pair is cleared at once,
/// a connection the driver owned for it is closed, and everything the old connection does later
/// (its close, its list_changed, a traversal finishing) changes nothing. Callers waiting on the
/// old connection are served over the new one. Servers are listed by the tool in the order they
/// were first attached.
///
/// # Refreshes
///
/// - [`refresh`](Self::refresh) asks for a traversal ([`Want::Refresh`]): it joins one in flight
///   (while no list_changed came during it), else the queued one, else starts one.
///   [`force_refresh`](Self::force_refresh) asks for one that begins after the call.
/// - [`ensure_fresh`](Self::ensure_fresh) / [`ensure_all_fresh`](Self::ensure_all_fresh)
///   ([`Want::Current`]) traverse only when the server has no pair yet, is outdated, or its
///   `ttlMs` ran out; a failed server is answered from the catalog until its retry.
/// - [`call_tool`](Self::call_tool) parses the model's input, ensures the selected server (or
///   every server) is current, then renders from the catalog with [`tool::render`].
///
/// # `notifications/resources/list_changed`
///
/// [`CatalogClientHandler::on_resource_list_changed`] hands each notification of its connection
/// to [`Refresher::handle_list_changed`], whether or not the server advertised `listChanged`. On a
/// `2026-07-28` connection rmcp routes list_changed only to a `subscriptions/listen`
/// subscription, so the driver opens one ([`Peer::listen`] with `resourcesListChanged`) for every
/// connection it attaches in that era; the subscription ending while the connection lives
/// detaches the server (changes would go unseen).
///
/// # Connection closed
///
/// rmcp 3.11 has no close callback on `Service`/`ClientHandler`; the serve loop's end is
/// observable through [`RunningService::waiting`]. So a connection the driver owns is moved into
/// a watcher task that awaits it and then detaches that epoch. The [`Connection`] handle closes
/// the connection on demand and tells when it has closed.
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
    limits: Limits,
    /// The catalog's clock: `now` is the time since this instant (a paused tokio clock works).
    clock: tokio::time::Instant,
    state: Mutex<State>,
    events: broadcast::Sender<DriverEvent>,
}

struct State {
    machine: Refresher,
    /// The current connection of every attached server.
    conns: HashMap<Epoch, Conn>,
    waiters: HashMap<CallerId, Waiter>,
    /// The armed timer: its deadline and task.
    timer: Option<(Duration, tokio::task::JoinHandle<()>)>,
    next_handler: u64,
}

/// A caller's reply channel.
type Waiter = oneshot::Sender<Result<RefreshOutcome, RefreshError>>;

/// One connection as the driver holds it.
struct Conn {
    server: String,
    peer: Peer<RoleClient>,
    /// The [`CatalogClientHandler`] whose notifications count (`None`: a caller-managed peer).
    handler: Option<u64>,
    /// The connection the driver owns, if any; dropping the `Conn` closes it.
    closer: Option<Arc<Closer>>,
    /// What the last committed refresh counted.
    diagnostics: Option<ServerDiagnostics>,
}

impl Drop for Conn {
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

impl CatalogDriver {
    /// A driver over a new, empty catalog; every traversal is bounded by `limits`.
    pub fn new(limits: Limits) -> CatalogDriver {
        CatalogDriver::with_config(limits, RefreshConfig::default())
    }

    /// A driver over a new, empty catalog, with the refresher's settings. The driver passes its
    /// own clock as `now` (see [`now`](Self::now)). The retry jitter is seeded from the
    /// process's hash randomness.
    pub fn with_config(limits: Limits, config: RefreshConfig) -> CatalogDriver {
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let machine = Refresher::new(config, crate::catalog::process_seed());
        let state = State { machine, conns: HashMap::new(), waiters: HashMap::new(), timer: None, next_handler: 0 };
        CatalogDriver {
            shared: Arc::new(Shared { limits, clock: tokio::time::Instant::now(), state: Mutex::new(state), events }),
        }
    }

    /// Reads the catalog this driver keeps current (under the driver's lock: keep `read` short,
    /// and do not call the driver from it).
    pub fn read<T>(&self, read: impl FnOnce(&Catalog) -> T) -> T {
        read(self.shared.lock().machine.catalog())
    }

    /// The bounds of every traversal.
    pub fn limits(&self) -> Limits {
        self.shared.limits
    }

    /// The catalog's clock reading now (what the driver passes as `now`).
    pub fn now(&self) -> Duration {
        self.shared.now()
    }

    /// The servers, in the order they were first attached.
    pub fn servers(&self) -> Vec<String> {
        self.read(Catalog::servers)
    }

    /// The peer of `server`'s current connection.
    pub fn peer(&self, server: &str) -> Option<Peer<RoleClient>> {
        let state = self.shared.lock();
        state.current(server).map(|c| c.peer.clone())
    }

    /// What the last committed refresh of `server` counted (dropped fields, sanitized strings,
    /// pages, …); `None` before the first commit on the current connection.
    pub fn diagnostics(&self, server: &str) -> Option<ServerDiagnostics> {
        self.shared.lock().current(server).and_then(|c| c.diagnostics.clone())
    }

    /// Subscribes to the driver's [`DriverEvent`]s (from now on).
    pub fn subscribe(&self) -> broadcast::Receiver<DriverEvent> {
        self.shared.events.subscribe()
    }

    /// A client handler for `server`, to serve over a transport and then
    /// [`attach`](Self::attach) (or use [`connect`](Self::connect), which does both).
    pub fn client_handler(&self, server: &str) -> CatalogClientHandler {
        let mut state = self.shared.lock();
        state.next_handler += 1;
        CatalogClientHandler {
            driver: Arc::downgrade(&self.shared),
            server: server.to_owned(),
            id: state.next_handler,
            config: ClientConfig::default(),
        }
    }

    /// Attaches `peer` as a new connection of `server`, managed by the caller: it reports the
    /// connection's end with [`detach`](Self::detach) and the returned epoch. A
    /// [`CatalogClientHandler`] of this driver named `server` that belongs to no other attached
    /// connection feeds its list_changed notifications in.
    pub fn add_server(&self, server: &str, peer: Peer<RoleClient>) -> Epoch {
        self.shared.attach(server, peer, None, None)
    }

    /// Attaches the server of a running [`CatalogClientHandler`] (made by
    /// [`client_handler`](Self::client_handler)) and takes its connection over: a watcher task
    /// awaits [`RunningService::waiting`] and detaches the connection when it ends. Must be
    /// called within a tokio runtime.
    pub fn attach(&self, running: RunningService<RoleClient, CatalogClientHandler>) -> Connection {
        let server = running.service().server.clone();
        let handler = running.service().id;
        let (closed, closed_rx) = watch::channel(false);
        let closer = Arc::new(Closer { close: Notify::new(), closed });
        let peer = running.peer().clone();
        let epoch = self.shared.attach(&server, peer.clone(), Some(handler), Some(closer.clone()));

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
                shared.detach(&name, epoch, Reason::ConnectionClosed);
            }
            watched.closed.send_replace(true);
        });
        Connection { server, epoch, peer, closer, closed: closed_rx }
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

    /// Ends connection `epoch` of `server` (closed, disabled, …): both lists are cleared at once,
    /// waiting callers get [`RefreshOutcome::Discarded`]. False when `epoch` is not the current
    /// connection (nothing changes).
    pub fn detach(&self, server: &str, epoch: Epoch, reason: Reason) -> bool {
        self.shared.detach(server, epoch, reason)
    }

    /// Forgets `server`: its catalog entry goes, waiting callers get
    /// [`RefreshOutcome::Discarded`], and a connection the driver owned is closed. Returns
    /// whether the driver knew it.
    pub fn remove(&self, server: &str) -> bool {
        let (known, gone) = {
            let mut state = self.shared.lock();
            let known = state.machine.remove(server);
            let gone: Vec<Conn> = state.take_conns(server);
            self.shared.drain(&mut state, None);
            (known, gone)
        };
        drop(gone); // closes a connection the driver owned, outside the lock
        known
    }

    /// Invalidates `server` ([`Refresher::invalidate`]): [`Reason::ListChanged`] is a
    /// list_changed on its current connection; [`Reason::ConnectionClosed`] and
    /// [`Reason::Disabled`] detach the current connection; any other reason clears both lists and
    /// keeps the connection (the next request traverses).
    pub fn invalidate(&self, server: &str, reason: Reason) {
        let epoch = self.shared.lock().machine.epoch(server);
        match (reason, epoch) {
            (Reason::ListChanged, Some(epoch)) => self.shared.list_changed(server, epoch),
            (Reason::ConnectionClosed | Reason::Disabled, Some(epoch)) => {
                self.shared.detach(server, epoch, reason);
            }
            _ => {
                let mut state = self.shared.lock();
                state.machine.invalidate(server, reason, self.shared.now());
                self.shared.drain(&mut state, None);
            }
        }
    }

    /// Asks for a traversal of `server` ([`Want::Refresh`]) and waits for its result: committed,
    /// or the first error (the catalog keeps the last good pair).
    pub async fn refresh(&self, server: &str) -> Result<RefreshOutcome, RefreshError> {
        self.shared.request(server, Want::Refresh)?.await.unwrap_or(Ok(RefreshOutcome::Discarded))
    }

    /// Asks for a traversal of `server` that begins after this call ([`Want::Force`]).
    pub async fn force_refresh(&self, server: &str) -> Result<RefreshOutcome, RefreshError> {
        self.shared.request(server, Want::Force)?.await.unwrap_or(Ok(RefreshOutcome::Discarded))
    }

    /// Makes sure `server`'s listing is current ([`Want::Current`]); a cache hit sends nothing.
    pub async fn ensure_fresh(&self, server: &str) -> Result<RefreshOutcome, RefreshError> {
        self.shared.request(server, Want::Current)?.await.unwrap_or(Ok(RefreshOutcome::Discarded))
    }

    /// [`ensure_fresh`](Self::ensure_fresh) for every server, concurrently; the results in order.
    pub async fn ensure_all_fresh(&self) -> Vec<(String, Result<RefreshOutcome, RefreshError>)> {
        let asked: Vec<_> =
            self.servers().into_iter().map(|name| (name.clone(), self.shared.request(&name, Want::Current))).collect();
        let mut results = Vec::with_capacity(asked.len());
        for (name, asked) in asked {
            let result = match asked {
                Ok(reply) => reply.await.unwrap_or(Ok(RefreshOutcome::Discarded)),
                Err(e) => Err(e),
            };
            results.push((name, result));
        }
        results
    }

    /// The `ListMcpResourceTemplatesTool` call: parses `input_json`, ensures the selected server
    /// (or every server) is current, and renders from the catalog. A refresh failure does not
    /// fail the call: the server shows in `failures`, with its last good templates if any.
    pub async fn call_tool(&self, input_json: &str) -> Result<String, ToolError> {
        let input = Input::from_json(input_json)?;
        self.render_tool(&input).await
    }

    /// [`call_tool`](Self::call_tool) with parsed input.
    pub async fn render_tool(&self, input: &Input) -> Result<String, ToolError> {
        match input.server.as_deref() {
            Some(server) => {
                let _ = self.ensure_fresh(server).await;
            }
            None => {
                self.ensure_all_fresh().await;
            }
        }
        self.read(|catalog| tool::render(catalog, input))
    }

    /// Makes current what a call of the resource tool `name` authorizes against
    /// ([`tool::current_before`]); a refresh failure shows in the tool's answer, not here.
    async fn current_before(&self, name: &str, input_json: &str) {
        for server in self.read(|catalog| tool::current_before(catalog, name, input_json)) {
            let _ = self.ensure_fresh(&server).await;
        }
    }

    /// The `ReadMcpResourceTool` call: makes the named server current (as the listings do, so a
    /// listed URI reads on the first call), validates `input_json` against the catalog and `config`,
    /// reads over the server's current connection (`transport_error` without one) and renders the
    /// model's output ([`crate::tool::read`]).
    pub async fn call_read_tool(&self, input_json: &str, config: &ReadConfig) -> Result<String, ToolError> {
        let config = CallConfig { read: *config, ..CallConfig::default() };
        self.call_server_tool(tool::read::NAME, input_json, &config).await
    }

    /// A call of a tool that asks the server — `ReadMcpResourceTool` or
    /// `CompleteMcpResourceTemplateTool` ([`tool::ServerCall`]): makes the named server current,
    /// validates `input_json` against the catalog and `config`, asks over the server's current
    /// connection (`transport_error` without one) and renders the model's output.
    pub async fn call_server_tool(
        &self,
        name: &str,
        input_json: &str,
        config: &CallConfig,
    ) -> Result<String, ToolError> {
        self.current_before(name, input_json).await;
        let call = self.read(|catalog| ServerCall::new(catalog, name, input_json, config, Duration::ZERO))?;
        match self.peer(call.server()) {
            Some(peer) => super::perform(&peer, call).await,
            None => call.finish(crate::Outcome::Transport),
        }
    }

    /// How the watch of `server`'s current connection learns of changes (see [`Notifications`]):
    /// `None` when it has no connection.
    pub fn notifications(&self, server: &str) -> Option<Notifications> {
        self.shared.lock().machine.notifications(server)
    }

    /// [`Catalog::status`] at the driver's clock.
    pub fn status(&self, server: &str) -> Result<ServerStatus, CatalogError> {
        let now = self.shared.now();
        self.read(|catalog| catalog.status(server, now))
    }

    /// True while a traversal of `server` (or of any server) is in flight or queued.
    pub fn is_busy(&self, server: Option<&str>) -> bool {
        self.shared.lock().machine.is_busy(server)
    }
}

impl State {
    fn current(&self, server: &str) -> Option<&Conn> {
        self.machine.epoch(server).and_then(|e| self.conns.get(&e))
    }

    /// Takes every connection of `server` out of the map (to drop outside the lock).
    fn take_conns(&mut self, server: &str) -> Vec<Conn> {
        let epochs: Vec<Epoch> = self.conns.iter().filter(|(_, c)| c.server == server).map(|(e, _)| *e).collect();
        epochs.into_iter().filter_map(|e| self.conns.remove(&e)).collect()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update under this lock is a plain assignment sequence: a poisoned lock is sound.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> Duration {
        self.clock.elapsed()
    }

    fn emit(&self, event: DriverEvent) {
        // No subscriber is fine.
        let _ = self.events.send(event);
    }

    fn attach(
        self: &Arc<Self>,
        server: &str,
        peer: Peer<RoleClient>,
        handler: Option<u64>,
        closer: Option<Arc<Closer>>,
    ) -> Epoch {
        let (version, capabilities) = peer.peer_info().map_or_else(Default::default, |info| {
            let version = serde_json::to_value(&info.protocol_version).ok();
            let version = version.as_ref().and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
            (version, serde_json::to_string(&info.capabilities).unwrap_or_default())
        });
        let (epoch, old) = {
            let mut state = self.lock();
            let replaced = state.machine.epoch(server).is_some();
            let epoch = state.machine.attach_capabilities(server, &capabilities);
            let notifications = state.machine.watch(server, epoch, &version, &capabilities);
            let old = state.take_conns(server);
            let listen = (notifications == Some(Notifications::Listening))
                .then(|| peer.clone())
                .zip(tokio::runtime::Handle::try_current().ok());
            state.conns.insert(epoch, Conn { server: server.to_owned(), peer, handler, closer, diagnostics: None });
            if replaced {
                self.emit(DriverEvent::Invalidated { server: server.to_owned(), reason: Reason::ConfigurationChanged });
            }
            if let Some(notifications) = notifications {
                self.emit(DriverEvent::Watching { server: server.to_owned(), notifications });
            }
            self.drain(&mut state, None);
            if let Some((peer, runtime)) = listen {
                runtime.spawn(listen_changes(Arc::downgrade(self), server.to_owned(), epoch, peer));
            }
            (epoch, old)
        };
        drop(old); // closes a connection the driver owned for the old peer, outside the lock
        epoch
    }

    fn detach(self: &Arc<Self>, server: &str, epoch: Epoch, reason: Reason) -> bool {
        let gone = {
            let mut state = self.lock();
            if !state.machine.detach(server, epoch) {
                return false;
            }
            self.emit(DriverEvent::Invalidated { server: server.to_owned(), reason });
            let gone = state.conns.remove(&epoch);
            self.drain(&mut state, None);
            gone
        };
        drop(gone);
        true
    }

    /// The listen stream of connection `epoch` was refused or ended ([`Refresher::handle_listen_closed`]).
    fn handle_listen_closed(self: &Arc<Self>, server: &str, epoch: Epoch, rpc_code: Option<i64>, liveness: Liveness) {
        let gone = {
            let mut state = self.lock();
            let now = self.now();
            let server = server.to_owned();
            let gone = match state.machine.handle_listen_closed(&server, epoch, rpc_code, liveness, now) {
                Ok(Some(ListenClosed::NotOffered | ListenClosed::Relisting)) => {
                    self.emit(DriverEvent::Watching { server, notifications: Notifications::NotOffered });
                    None
                }
                Ok(Some(ListenClosed::Detached)) => {
                    self.emit(DriverEvent::Invalidated { server, reason: Reason::ConnectionClosed });
                    state.conns.remove(&epoch)
                }
                Ok(_) => None,
                Err(error) => {
                    self.emit(DriverEvent::ListenFailed { server, error });
                    None
                }
            };
            self.drain(&mut state, None);
            gone
        };
        drop(gone); // closes a connection the driver owned, outside the lock
    }

    /// A list_changed from `server` on connection `epoch`.
    fn list_changed(self: &Arc<Self>, server: &str, epoch: Epoch) {
        let mut state = self.lock();
        let decision = state.machine.handle_list_changed(server, epoch, self.now());
        self.emit(DriverEvent::ListChanged { server: server.to_owned(), decision });
        self.drain(&mut state, None);
    }

    /// A list_changed delivered by handler `handler` named `server`: the connection it belongs to,
    /// else a caller-managed current connection of that name.
    fn handler_list_changed(self: &Arc<Self>, server: &str, handler: u64) {
        let epoch = {
            let state = self.lock();
            let own = state.conns.iter().find(|(_, c)| c.handler == Some(handler)).map(|(e, _)| *e);
            own.or_else(|| {
                state.machine.epoch(server).filter(|e| state.conns.get(e).is_some_and(|c| c.handler.is_none()))
            })
        };
        match epoch {
            Some(epoch) => self.list_changed(server, epoch),
            // A replaced connection's handler, or an unknown server.
            None => self.emit(DriverEvent::ListChanged { server: server.to_owned(), decision: ListChanged::Ignored }),
        }
    }

    /// A caller asks; the receiver gets the answer.
    fn request(
        self: &Arc<Self>,
        server: &str,
        want: Want,
    ) -> Result<oneshot::Receiver<Result<RefreshOutcome, RefreshError>>, RefreshError> {
        let mut state = self.lock();
        let id = state.machine.request(server, want, self.now()).map_err(RefreshError::Catalog)?;
        let (tx, rx) = oneshot::channel();
        state.waiters.insert(id, tx);
        self.drain(&mut state, None);
        Ok(rx)
    }

    /// Performs the machine's actions, then arms the timer. `failed`: the error of the traversal
    /// just reported, for its callers.
    fn drain(self: &Arc<Self>, state: &mut State, failed: Option<(TraversalId, &DiscoveryError)>) {
        let runtime = tokio::runtime::Handle::try_current().ok();
        while let Some(action) = state.machine.poll_action() {
            match action {
                Action::Traverse { server, epoch, traversal } => {
                    let peer = state.conns.get(&epoch).map(|c| c.peer.clone());
                    match (&runtime, peer) {
                        (Some(runtime), Some(peer)) => {
                            // Built inside the task: a future dropped unpolled (the runtime shutting
                            // down) must not report from within this lock.
                            let shared = self.clone();
                            runtime.spawn(async move {
                                Traversal { shared, server, epoch, id: traversal, done: false }.run(peer).await;
                            });
                        }
                        // No runtime to run it on (the host's runtime is gone): it cannot happen.
                        _ => {
                            state.machine.handle_traversed(traversal, Err(TraversalError::Abandoned), self.now());
                        }
                    }
                }
                Action::Resolve { server, callers, outcome, traversal } => {
                    let answer = match outcome {
                        Outcome::Cached => Ok(RefreshOutcome::CacheHit),
                        Outcome::Committed => Ok(RefreshOutcome::Committed),
                        Outcome::Discarded => Ok(RefreshOutcome::Discarded),
                        Outcome::Failed { failure, .. } => match failed {
                            Some((id, e)) if Some(id) == traversal => Err(RefreshError::Discovery(e.clone())),
                            _ => Err(RefreshError::NotConnected { server, message: failure.message }),
                        },
                    };
                    for caller in callers {
                        if let Some(waiter) = state.waiters.remove(&caller) {
                            let _ = waiter.send(answer.clone());
                        }
                    }
                }
            }
        }
        self.arm(state);
    }

    /// One timer for the whole machine: re-armed whenever `poll_timeout` moves.
    fn arm(self: &Arc<Self>, state: &mut State) {
        let due = state.machine.poll_timeout();
        if state.timer.as_ref().map(|(at, _)| *at) == due {
            return;
        }
        if let Some((_, task)) = state.timer.take() {
            task.abort();
        }
        let (Some(at), Ok(runtime)) = (due, tokio::runtime::Handle::try_current()) else { return };
        let shared = Arc::downgrade(self);
        let deadline = self.clock + at;
        let task = runtime.spawn(async move {
            tokio::time::sleep_until(deadline).await;
            if let Some(shared) = shared.upgrade() {
                let mut state = shared.lock();
                if state.timer.as_ref().is_some_and(|(due, _)| *due == at) {
                    state.timer = None;
                }
                state.machine.handle_timeout(shared.now());
                shared.drain(&mut state, None);
            }
        });
        state.timer = Some((at, task));
    }
}

/// One [`Action::Traverse`], run in its own task. Dropped before it reports (runtime shutdown),
/// it reports itself abandoned.
struct Traversal {
    shared: Arc<Shared>,
    server: String,
    epoch: Epoch,
    id: TraversalId,
    done: bool,
}

impl Traversal {
    /// Performs the core's pair over `peer`.
    async fn traverse(&self, peer: &Peer<RoleClient>) -> Result<(Listing, Listing), DiscoveryError> {
        let shared = &self.shared;
        let (caps, version) = (capabilities_json(peer), protocol_version(peer));
        let mut pair =
            PairTraversal::new(self.id, &self.server, caps.as_deref(), shared.limits, &version, shared.now());
        while let Some(request) = pair.poll_request() {
            let kind = pair.kind().expect("a pair that asks reads a list");
            let fetched = fetch_page(peer, kind, request.cursor, pair.remaining(shared.now())).await;
            // A failure ends the pair, which keeps it.
            let _ = pair.handle_outcome(fetched.as_outcome(), shared.now());
        }
        pair.finish().expect("a pair that asks nothing more has ended")
    }

    async fn run(mut self, peer: Peer<RoleClient>) {
        let result = self.traverse(&peer).await;
        self.done = true;
        let shared = self.shared.clone();
        let mut state = shared.lock();
        let now = shared.now();
        let (disposition, error) = match &result {
            Ok((resources, templates)) => {
                let d = state.machine.handle_traversed(self.id, Ok((resources, templates)), now);
                if d == Disposition::Committed {
                    if let Some(conn) = state.conns.get_mut(&self.epoch) {
                        let diagnostics = ServerDiagnostics {
                            resources: resources.diagnostics.clone(),
                            templates: templates.diagnostics.clone(),
                        };
                        conn.diagnostics = Some(diagnostics);
                    }
                }
                (d, None)
            }
            Err(e) => (state.machine.handle_traversed(self.id, Err(TraversalError::from(e)), now), Some(e.code())),
        };
        shared.emit(DriverEvent::Traversed { server: self.server.clone(), disposition, error });
        let failed = result.as_ref().err().map(|e| (self.id, e));
        shared.drain(&mut state, failed);
    }
}

impl Drop for Traversal {
    fn drop(&mut self) {
        if !self.done {
            let mut state = self.shared.lock();
            state.machine.handle_traversed(self.id, Err(TraversalError::Abandoned), self.shared.now());
            self.shared.drain(&mut state, None);
        }
    }
}

/// The `subscriptions/listen` stream of a 2026-07-28 connection whose server advertises
/// `resources.listChanged`: each resources list_changed goes to the refresher; how the stream's
/// refusal or end is taken is [`Refresher::handle_listen_closed`]'s rule (this task has no caller to fail:
/// a failure is a [`DriverEvent::ListenFailed`]).
async fn listen_changes(shared: Weak<Shared>, server: String, epoch: Epoch, peer: Peer<RoleClient>) {
    let filter = SubscriptionFilter::builder().resources_list_changed().build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(e) => {
            let rpc_code = match e {
                ServiceError::McpError(e) => Some(i64::from(e.code.0)),
                _ => None,
            };
            if let Some(shared) = shared.upgrade() {
                shared.handle_listen_closed(&server, epoch, rpc_code, Liveness::Unknown);
            }
            return;
        }
    };
    if let Some(shared) = shared.upgrade() {
        shared.lock().machine.handle_listen_acknowledged(&server, epoch);
    }
    while let Ok(Some(notification)) = subscription.next().await {
        let Some(shared) = shared.upgrade() else { return };
        if matches!(notification, ServerNotification::ResourceListChangedNotification(_)) {
            shared.list_changed(&server, epoch);
        }
    }
    if let Some(shared) = shared.upgrade() {
        let liveness = if peer.is_transport_closed() { Liveness::Closed } else { Liveness::Open };
        shared.handle_listen_closed(&server, epoch, None, liveness);
    }
}

/// A connection the driver owns (from [`CatalogDriver::connect`] or [`CatalogDriver::attach`]).
///
/// Dropping the handle leaves the connection open; it closes on [`close`](Self::close), when
/// the server is removed from or replaced in the driver, or when the driver is dropped.
#[derive(Debug)]
pub struct Connection {
    server: String,
    epoch: Epoch,
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

    /// This connection's epoch.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The client peer (for the host's other requests, e.g. `resources/read`).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Asks the connection to close; [`closed`](Self::closed) tells when it has.
    pub fn close(&self) {
        self.closer.close.notify_one();
    }

    /// True once the connection has ended and the driver has detached it.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Waits until the connection has ended and the driver has detached it.
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        // The sender lives in the watcher task until after it sends `true`.
        let _ = closed.wait_for(|c| *c).await;
    }
}

/// The rmcp client handler of one connection of a [`CatalogDriver`] (made by
/// [`CatalogDriver::client_handler`]): hands `notifications/resources/list_changed` of its
/// connection to the refresher, whether or not the server advertised `listChanged`. Holds the
/// driver weakly.
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
            shared.handler_list_changed(&self.server, self.id);
        }
    }

    #[allow(deprecated)] // roots: SEP-2577 deprecates them; earlier revisions' servers still ask
    async fn list_roots(
        &self,
        _context: ::rmcp::service::RequestContext<RoleClient>,
    ) -> Result<::rmcp::model::ListRootsResult, ::rmcp::model::ErrorData> {
        super::answer_roots(&self.config)
    }

    async fn create_elicitation(
        &self,
        _request: ::rmcp::model::ElicitRequestParams,
        _context: ::rmcp::service::RequestContext<RoleClient>,
    ) -> Result<::rmcp::model::ElicitResult, ::rmcp::model::ErrorData> {
        super::answer_elicitation(&self.config)
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}
