//! [`Refresher`]: when to traverse which server, as one sans-IO state machine that owns its
//! [`Catalog`] (hosts read it through [`Refresher::catalog`]).
//!
//! Commands (`attach`, `detach`, `watch`, `request`) and events (`handle_list_changed`,
//! `handle_traversed`, `handle_listen_acknowledged`, `handle_listen_closed`, `handle_timeout`) go
//! in, actions come out (`poll_action`), and `poll_timeout` says when the host must call
//! `handle_timeout` next (the crate's one method dialect). Time and randomness are passed in: the machine reads no clock,
//! draws its jitter from a seeded generator, spawns nothing and does no I/O. The host (a driver)
//! performs the actions — runs the two traversals of a [`Action::Traverse`] over the connection
//! of that epoch, wakes the callers of an [`Action::Resolve`], arms one timer — and holds no rule
//! of its own.
//!
//! ```text
//! refresher = Refresher::new(config, seed)                    // owns an empty catalog
//! epoch = refresher.attach(server, declares_resources)       // a connection
//! caller = refresher.request(server, Want::Refresh, now)?     // a caller wants a listing
//! loop {
//!     while let Some(action) = refresher.poll_action() {
//!         Traverse { server, epoch, traversal } → run resources/list + resources/templates/list,
//!             then refresher.handle_traversed(traversal, Ok((&resources, &templates)) | Err(e), now)
//!         Resolve { callers, outcome, .. }      → wake those callers with the outcome
//!     }
//!     sleep until refresher.poll_timeout() (or the next event) → refresher.handle_timeout(now)
//! }
//! ```
//!
//! Rules (each pinned by `tests/vectors/refresher/`; written up in `docs/catalog.md`):
//!
//! - Per server at most one traversal pair in flight and at most one queued. A
//!   [`Want::Current`] or [`Want::Refresh`] caller joins the traversal in flight while it is still
//!   current, else the queued one; [`Want::Force`] and list_changed queue one more (once): any
//!   number of list_changed during a traversal give exactly one more.
//! - list_changed keeps the last good pair, status `outdated`, and makes the traversal in flight
//!   non-current: its result is discarded (it may predate the change) and its callers wait for the
//!   queued traversal (once; a caller already carried over is answered `discarded`).
//! - Connections have epochs. [`attach`](Refresher::attach) under a name that has a connection
//!   clears the old connection's pair first; every later event of an old epoch changes nothing.
//!   [`detach`](Refresher::detach), [`remove`](Refresher::remove) clear both lists at once.
//! - How a watch learns of changes ([`watch`](Refresher::watch) → [`Notifications`]): before
//!   2026-07-28 list_changed arrives unasked (advertised or not); on 2026-07-28 it comes only on a
//!   `subscriptions/listen` stream, which the host opens only when the server advertises
//!   `resources.listChanged`. Otherwise — or when the server answers the stream with -32601 — no
//!   change notifications will come (`not_offered`), and the watch stands without a stream.
//! - Any other refusal (or, before its acknowledgement, a failed) `subscriptions/listen` stream is
//!   an error for the watch alone ([`listen_closed`](Refresher::handle_listen_closed): `server_error` with
//!   the JSON-RPC code, or `transport_error`); the connection and its pair stay. After the
//!   acknowledgement its end re-lists the pair when the host knows the connection stays, and is
//!   the connection's end otherwise.
//! - A transient failure (`transport_error`, `deadline`, `server_error`) is retried on a timer:
//!   the n-th consecutive one waits a whole number of milliseconds drawn uniformly from
//!   `c − ⌊c/2⌋ ..= c`, `c = min(retry_max, retry_base · 2ⁿ⁻¹)` (equal jitter: the crate's one
//!   retry rule, [`crate::backoff`]). Any other failure waits for a list_changed, a new connection
//!   or an explicit request.
//! - [`Want::Current`] traverses only when the server has no pair yet (and no failure), is
//!   outdated, or its `ttlMs` ran out — counted from the commit and never shorter than
//!   `min_ttl`, so `ttlMs: 0` costs at most one traversal pair per `min_ttl`. A failed server is
//!   answered from the catalog until its retry, list_changed or an explicit refresh.
//! - Shrink guard, per list: a traversal that takes a list of at least `shrink_min_items` items to
//!   fewer than a tenth of them (0 included) is confirmed by one more traversal pair before
//!   anything commits; the confirming pair commits, whatever it holds.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Catalog, CatalogError, Failure, Reason, Ticket};
use crate::backoff::{Backoff, SplitMix64};
use crate::discovery::{DiscoveryError, Era, Listing, METHOD_NOT_FOUND};
use crate::error::ErrorCode;
use crate::millis;

/// The refresher's settings (all optional in JSON: `{retryBaseMs, retryMaxMs, minTtlMs,
/// shrinkMinItems}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RefreshConfig {
    /// The ceiling of the first retry after a transient failure (default 1 s); it doubles with
    /// every further consecutive failure.
    #[serde(rename = "retryBaseMs", with = "millis")]
    pub retry_base: Duration,
    /// The largest retry ceiling (default 5 min).
    #[serde(rename = "retryMaxMs", with = "millis")]
    pub retry_max: Duration,
    /// The shortest `ttlMs` honoured (default 10 s): an expiry sooner after the commit counts as
    /// this long after it, for deciding whether a [`Want::Current`] request traverses.
    #[serde(rename = "minTtlMs", with = "millis")]
    pub min_ttl: Duration,
    /// The shrink guard applies to lists of at least this many items (default 10;
    /// `usize::MAX` turns it off).
    pub shrink_min_items: usize,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        RefreshConfig {
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(300),
            min_ttl: super::DEFAULT_MIN_TTL,
            shrink_min_items: 10,
        }
    }
}

impl RefreshConfig {
    /// Checks the settings: a retry base of at least 1 ms, and a maximum not below it.
    pub fn validate(&self) -> Result<(), InvalidRefreshConfig> {
        if self.retry_base < Duration::from_millis(1) {
            return Err(InvalidRefreshConfig::RetryBaseUnderOneMillisecond);
        }
        if self.retry_max < self.retry_base {
            return Err(InvalidRefreshConfig::RetryMaxBelowBase);
        }
        Ok(())
    }
}

/// Why a [`RefreshConfig`] is not valid ([`RefreshConfig::validate`]); its code is
/// `invalid_argument`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidRefreshConfig {
    /// `retryBaseMs` is under 1.
    #[error("retryBaseMs must be at least 1")]
    RetryBaseUnderOneMillisecond,
    /// `retryMaxMs` is below `retryBaseMs`.
    #[error("retryMaxMs must not be below retryBaseMs")]
    RetryMaxBelowBase,
}

impl InvalidRefreshConfig {
    /// `invalid_argument`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgument
    }
}

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);
    };
}

id!(
    /// One connection of a server (from [`Refresher::attach`]); a new connection gets a new epoch.
    Epoch
);
id!(
    /// One traversal pair (from an [`Action::Traverse`]); hand it back to [`Refresher::handle_traversed`].
    TraversalId
);
id!(
    /// One caller's request (from [`Refresher::request`]), answered by an [`Action::Resolve`].
    CallerId
);

/// What a caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Want {
    /// A listing that is current: answered from the catalog unless the server has no pair yet, is
    /// outdated, or its `ttlMs` ran out (what a tool call asks for).
    Current,
    /// A traversal: joins the one in flight (while current) or the queued one, else starts one.
    Refresh,
    /// A traversal that begins after this request: joins the queued one, else queues one behind
    /// the one in flight, else starts one.
    Force,
}

impl crate::error::WireName for Want {
    const ALL: &'static [Want] = &[Want::Current, Want::Refresh, Want::Force];
}

/// What became of a caller's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Outcome {
    /// Nothing was traversed: the catalog's state answers.
    Cached,
    /// A traversal pair committed.
    Committed,
    /// The traversal failed, or no connection is attached; the catalog recorded the failure and
    /// keeps the previous pair (status `stale`), if any.
    Failed {
        /// The stable code and mcplens' message.
        failure: Failure,
        /// For `server_error`: the JSON-RPC error code.
        #[serde(skip_serializing_if = "Option::is_none")]
        rpc_code: Option<i64>,
    },
    /// Nothing came of it: the connection closed or was replaced, the server was removed, or the
    /// traversal was outdated twice by list_changed.
    Discarded,
}

/// What the host must do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Action {
    /// Run the traversal pair over the connection of `epoch`: perform a `PairTraversal` of
    /// `traversal` (`catalog::PairTraversal`), then hand it back with `Refresher::handle_pair`.
    Traverse {
        /// The server.
        server: String,
        /// The connection to use.
        epoch: Epoch,
        /// Hand this back.
        traversal: TraversalId,
    },
    /// Wake these callers with this outcome.
    Resolve {
        /// The server they asked about.
        server: String,
        /// The callers, in the order they asked.
        callers: Vec<CallerId>,
        /// What became of their request.
        outcome: Outcome,
        /// The traversal whose end this is (none for answers that traversed nothing).
        #[serde(skip_serializing_if = "Option::is_none")]
        traversal: Option<TraversalId>,
    },
}

/// Why a traversal pair did not produce two listings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraversalError {
    /// It failed (the first error, resources first).
    Failed {
        /// The stable code and mcplens' message.
        failure: Failure,
        /// For `server_error`: the JSON-RPC error code.
        rpc_code: Option<i64>,
    },
    /// It will not complete (cancelled, the host's task ended): nothing is recorded.
    Abandoned,
}

impl From<&DiscoveryError> for TraversalError {
    fn from(e: &DiscoveryError) -> Self {
        TraversalError::Failed { failure: Failure::from(e), rpc_code: e.rpc_code() }
    }
}

/// What [`Refresher::handle_traversed`] did with a traversal's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Both listings committed.
    Committed,
    /// The shrink guard tripped: one more traversal pair confirms before anything commits.
    Confirming,
    /// The failure was recorded (the previous pair kept).
    Failed,
    /// Outdated (a list_changed came during it), abandoned, or refused by the catalog: no data
    /// changed.
    Discarded,
    /// Not a traversal in flight (an old connection's, a removed server's, or unknown).
    Ignored,
}

/// How change notifications reach a watch of one connection (what [`Refresher::watch`] decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notifications {
    /// Protocol revisions before 2026-07-28: the server sends `notifications/resources/list_changed`
    /// unasked, whether or not it advertises `listChanged` (FastMCP sends it without advertising).
    /// There is nothing to open.
    Unsolicited,
    /// 2026-07-28, the server advertises `resources.listChanged`: they come on a
    /// `subscriptions/listen` stream, which the host opens now; the server's acknowledgement goes
    /// to [`Refresher::handle_listen_acknowledged`], the stream's end (or refusal) to
    /// [`Refresher::handle_listen_closed`].
    Listening,
    /// 2026-07-28, the server does not offer them: it does not advertise `resources.listChanged`,
    /// or it answered the stream with -32601 (method not found). None will come; the watch stands
    /// without a stream, the pair is kept current by requests and its `ttlMs`, and the
    /// connection's end still clears it.
    NotOffered,
}

/// What a host knows of a connection when its `subscriptions/listen` stream closed
/// ([`Refresher::handle_listen_closed`]). Wire names `open`, `closed`, `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Liveness {
    /// Still open: the host holds the transport and sees it live (a proxy's upstream).
    Open,
    /// Closed.
    Closed,
    /// The host cannot tell (an SDK client over HTTP learns the server went away from the stream).
    Unknown,
}

impl crate::error::WireName for Liveness {
    const ALL: &'static [Liveness] = &[Liveness::Open, Liveness::Closed, Liveness::Unknown];
}

/// What became of a watch whose `subscriptions/listen` stream closed ([`Refresher::handle_listen_closed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ListenClosed {
    /// Refused with -32601 before the acknowledgement: the server offers no change notifications;
    /// the watch stands without a stream ([`Notifications::NotOffered`]).
    NotOffered,
    /// Ended after the acknowledgement on a connection that stays: the watch stands without a
    /// stream and the pair is being re-listed (a change may have gone unheard).
    Relisting,
    /// Ended after the acknowledgement, and the connection with it: both lists cleared.
    Detached,
}

/// Do the server's capabilities (its `initialize` or `server/discover` result's `capabilities`, as
/// JSON text) declare `completions` (an object)? Only such servers are asked `completion/complete`.
pub fn has_completions_capability(capabilities_json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(capabilities_json)
        .ok()
        .is_some_and(|c| c.get("completions").is_some_and(serde_json::Value::is_object))
}

/// Do the server's capabilities (its `initialize` or `server/discover` result's `capabilities`, as
/// JSON text) advertise `resources.listChanged: true`?
pub fn advertises_list_changed(capabilities_json: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(capabilities_json)
        .is_ok_and(|c| c.pointer("/resources/listChanged") == Some(&serde_json::Value::Bool(true)))
}

/// What became of a `notifications/resources/list_changed` ([`Refresher::handle_list_changed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListChanged {
    /// No traversal was in flight: one starts now.
    RefreshNow,
    /// A traversal is in flight (its result will be discarded): one more is queued behind it.
    Queued,
    /// A traversal is in flight and one more is already queued: nothing more to do.
    AlreadyQueued,
    /// Not the server's current connection (an old one's, or the server is unknown or removed):
    /// nothing changes. A late notification never brings a removed server back.
    Ignored,
}

#[derive(Debug, Clone, Copy)]
struct Waiter {
    id: CallerId,
    /// Already moved once from an outdated traversal to the queued one.
    carried: bool,
}

#[derive(Debug)]
struct Flight {
    id: TraversalId,
    epoch: Epoch,
    ticket: Ticket,
    /// No list_changed since it began: its result may commit.
    current: bool,
    /// The shrink guard's second traversal pair.
    confirming: bool,
    callers: Vec<Waiter>,
}

#[derive(Debug)]
struct Slot {
    name: String,
    epoch: Option<Epoch>,
    flight: Option<Flight>,
    /// A traversal to start when the one in flight ends, with its callers.
    queued: Option<Vec<Waiter>>,
    /// When the timed retry is due.
    retry_at: Option<Duration>,
    /// Consecutive transient failures.
    failures: u32,
    /// How the current connection's watch learns of changes (`None`: not watched).
    notifications: Option<Notifications>,
    /// The watch's `subscriptions/listen` stream was acknowledged by the server.
    acknowledged: bool,
}

/// The refresh state machine. See the [module docs](self).
#[derive(Debug)]
pub struct Refresher {
    /// The state this machine keeps (nothing else writes it).
    catalog: Catalog,
    config: RefreshConfig,
    /// The retry jitter.
    rng: SplitMix64,
    /// Attach order.
    slots: Vec<Slot>,
    actions: VecDeque<Action>,
    last_epoch: u64,
    last_traversal: u64,
    last_caller: u64,
}

impl Refresher {
    /// A refresher over a new, empty catalog whose `ttlMs` floor is `config.min_ttl`. `seed`
    /// feeds the retry jitter (hosts pass OS randomness; tests a constant, so every retry time is
    /// exact).
    pub fn new(config: RefreshConfig, seed: u64) -> Refresher {
        Refresher {
            catalog: Catalog::new(config.min_ttl),
            config,
            rng: SplitMix64::new(seed),
            slots: Vec::new(),
            actions: VecDeque::new(),
            last_epoch: 0,
            last_traversal: 0,
            last_caller: 0,
        }
    }

    /// The catalog it keeps current: what every host reads (statuses, listings, the tools).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Seeds the retry jitter anew (a binding that made the machine before its host chose a seed).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = SplitMix64::new(seed);
    }

    /// Registers `server` in the catalog without a connection (idempotent): it is listed (status
    /// `unknown`), and a request for it is answered with a `transport_error` until one is
    /// attached.
    pub fn add_server(&mut self, server: &str) {
        self.catalog.add_server(server);
    }

    /// Invalidates `server` for `reason`: [`Reason::ListChanged`] is a list_changed on its current
    /// connection ([`on_list_changed`](Self::handle_list_changed)); [`Reason::ConnectionClosed`] and
    /// [`Reason::Disabled`] end its current connection ([`detach`](Self::detach)); any other
    /// reason clears both lists at once and keeps the connection: a traversal in flight is
    /// discarded (its callers carried to a new one, once), and the next request traverses.
    /// Unknown servers are ignored.
    pub fn invalidate(&mut self, server: &str, reason: Reason, now: Duration) {
        let Some(i) = self.find(server) else {
            self.catalog.invalidate(server, reason);
            return;
        };
        match (reason, self.slots[i].epoch) {
            (Reason::ListChanged, Some(epoch)) => {
                self.handle_list_changed(server, epoch, now);
            }
            (Reason::ConnectionClosed | Reason::Disabled, Some(epoch)) => {
                self.detach(server, epoch);
            }
            _ => {
                self.catalog.invalidate(server, Reason::Other);
                let slot = &mut self.slots[i];
                if let Some(flight) = &mut slot.flight {
                    flight.current = false;
                    if slot.queued.is_none() && !flight.callers.is_empty() {
                        slot.queued = Some(Vec::new());
                    }
                }
            }
        }
    }

    /// The settings.
    pub fn config(&self) -> RefreshConfig {
        self.config
    }

    /// A connection to `server` (registering the server in the catalog if new). A connection
    /// already attached under that name is replaced: its pair is cleared first, its traversal's
    /// result and every later event of it will be ignored, and the callers waiting on it are
    /// served by a traversal over the new connection. `declares_resources`: the server's
    /// capabilities include `resources` (see [`Catalog::visible_tools`]). Nothing is traversed
    /// until someone asks (or a list_changed comes).
    pub fn attach(&mut self, server: &str, declares_resources: bool) -> Epoch {
        self.last_epoch += 1;
        let epoch = Epoch(self.last_epoch);
        let i = match self.find(server) {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    name: server.to_owned(),
                    epoch: None,
                    flight: None,
                    queued: None,
                    retry_at: None,
                    failures: 0,
                    notifications: None,
                    acknowledged: false,
                });
                self.slots.len() - 1
            }
        };
        let waiters = if self.slots[i].epoch.is_some() { self.end_connection(i) } else { Vec::new() };
        self.catalog.add_server(server);
        self.catalog.declare_resources(server, declares_resources);
        let slot = &mut self.slots[i];
        slot.epoch = Some(epoch);
        slot.failures = 0;
        slot.notifications = None;
        slot.acknowledged = false;
        if !waiters.is_empty() {
            self.start(i, waiters);
        }
        epoch
    }

    /// [`attach`](Self::attach) from the server's capabilities (its `initialize` result's, or
    /// `server/discover`'s, as JSON text): the core reads what it declares — `resources` (the
    /// resource tools) and `completions` (the completion tool, [`Catalog::offers_completion`]).
    pub fn attach_capabilities(&mut self, server: &str, capabilities_json: &str) -> Epoch {
        let epoch = self.attach(server, crate::discovery::has_resources_capability(capabilities_json));
        self.catalog.declare_completions(server, has_completions_capability(capabilities_json));
        epoch
    }

    /// The connection of `epoch` ended (closed, disabled, replaced: every end clears alike): both
    /// lists are cleared at once and the callers waiting on it are answered `discarded`. Returns
    /// false (and changes nothing) when `epoch` is not the server's current connection.
    pub fn detach(&mut self, server: &str, epoch: Epoch) -> bool {
        let Some(i) = self.find(server).filter(|&i| self.slots[i].epoch == Some(epoch)) else { return false };
        let waiters = self.end_connection(i);
        self.slots[i].epoch = None;
        self.slots[i].failures = 0;
        self.slots[i].notifications = None;
        self.slots[i].acknowledged = false;
        self.resolve(i, waiters, Outcome::Discarded, None);
        true
    }

    /// A host watches connection `epoch` of `server`, which negotiated `protocol_version` and
    /// declared `capabilities_json` (its capabilities as JSON text): how change notifications will
    /// reach it. Before 2026-07-28 they arrive unasked ([`Notifications::Unsolicited`]); on
    /// 2026-07-28 the host opens a `subscriptions/listen` stream only for a server that advertises
    /// `resources.listChanged` ([`Notifications::Listening`]), else the watch stands without one
    /// ([`Notifications::NotOffered`]). `None` (and nothing changes) for an old epoch.
    pub fn watch(
        &mut self,
        server: &str,
        epoch: Epoch,
        protocol_version: &str,
        capabilities_json: &str,
    ) -> Option<Notifications> {
        let i = self.find(server).filter(|&i| self.slots[i].epoch == Some(epoch))?;
        let notifications = match Era::of(protocol_version) {
            Era::Legacy => Notifications::Unsolicited,
            Era::Modern if advertises_list_changed(capabilities_json) => Notifications::Listening,
            Era::Modern => Notifications::NotOffered,
        };
        self.slots[i].notifications = Some(notifications);
        self.slots[i].acknowledged = false;
        Some(notifications)
    }

    /// How the watch of `server`'s current connection learns of changes (`None`: no connection,
    /// or it is not watched).
    pub fn notifications(&self, server: &str) -> Option<Notifications> {
        self.find(server).and_then(|i| self.slots[i].notifications)
    }

    /// The server acknowledged the `subscriptions/listen` stream a host opened to watch connection
    /// `epoch` (2026-07-28): from here on the stream's end is [`listen_closed`](Self::handle_listen_closed)
    /// after the acknowledgement. False (and nothing changes) for an old epoch or a watch that is
    /// not listening.
    pub fn handle_listen_acknowledged(&mut self, server: &str, epoch: Epoch) -> bool {
        let Some(i) = self.find(server).filter(|&i| self.slots[i].epoch == Some(epoch)) else { return false };
        let listening = self.slots[i].notifications == Some(Notifications::Listening);
        self.slots[i].acknowledged |= listening;
        listening
    }

    /// The `subscriptions/listen` stream of the watch of connection `epoch` closed: refused with
    /// `rpc_code` (the answer's JSON-RPC code), failed (`None`: the transport, or ended with no
    /// error), with what the host knows of the connection then (`connection`). The rule, in one
    /// place for every host:
    ///
    /// - **Before the acknowledgement**, -32601 (method not found) means the server does not
    ///   offer change notifications: [`ListenClosed::NotOffered`], the watch stands without a
    ///   stream. Anything else is the error the host fails the watch with: `server_error` (with
    ///   the code) or `transport_error`, naming the server ([`CatalogError::ListenFailed`]); the
    ///   watch is no longer watching. The connection stays attached and its pair listed
    ///   (refreshes still reach the server); its closing still clears both lists.
    /// - **After it**, on a connection the host knows is still open ([`Liveness::Open`]: a proxy's
    ///   upstream, an rmcp peer whose transport lives): changes are no longer heard, so the watch
    ///   stands without a stream and, since one may have gone unheard, the pair is re-listed as
    ///   after a list_changed ([`ListenClosed::Relisting`]; from then on requests and `ttlMs` keep
    ///   it current). On a connection that closed, or one whose state the host cannot see
    ///   ([`Liveness::Closed`], [`Liveness::Unknown`]: an SDK client's stream ending is how it
    ///   learns the server went away), it is the connection's end: [`detach`](Self::detach)
    ///   ([`ListenClosed::Detached`]).
    ///
    /// `Ok(None)` (and nothing changes) for an old epoch, or a watch that was not listening.
    pub fn handle_listen_closed(
        &mut self,
        server: &str,
        epoch: Epoch,
        rpc_code: Option<i64>,
        connection: Liveness,
        now: Duration,
    ) -> Result<Option<ListenClosed>, CatalogError> {
        let Some(i) = self.find(server).filter(|&i| self.slots[i].epoch == Some(epoch)) else { return Ok(None) };
        if self.slots[i].notifications != Some(Notifications::Listening) {
            return Ok(None);
        }
        if std::mem::take(&mut self.slots[i].acknowledged) {
            if connection != Liveness::Open {
                self.detach(server, epoch);
                return Ok(Some(ListenClosed::Detached));
            }
            self.slots[i].notifications = Some(Notifications::NotOffered);
            self.handle_list_changed(server, epoch, now);
            return Ok(Some(ListenClosed::Relisting));
        }
        if rpc_code == Some(METHOD_NOT_FOUND) {
            self.slots[i].notifications = Some(Notifications::NotOffered);
            return Ok(Some(ListenClosed::NotOffered));
        }
        self.slots[i].notifications = None; // the watch failed: it is not watching
        Err(CatalogError::ListenFailed { server: server.to_owned(), rpc_code })
    }

    /// The server's current connection, if any.
    pub fn epoch(&self, server: &str) -> Option<Epoch> {
        self.find(server).and_then(|i| self.slots[i].epoch)
    }

    /// A `notifications/resources/list_changed` on connection `epoch` of `server`: the pair is
    /// kept (status `outdated`) and a traversal starts now, or one is queued behind the one in
    /// flight (whose result will be discarded). Notifications of an old connection are
    /// [`ListChanged::Ignored`].
    pub fn handle_list_changed(&mut self, server: &str, epoch: Epoch, now: Duration) -> ListChanged {
        let _ = now;
        let Some(i) = self.find(server).filter(|&i| self.slots[i].epoch == Some(epoch)) else {
            return ListChanged::Ignored;
        };
        self.catalog.invalidate(server, Reason::ListChanged);
        let slot = &mut self.slots[i];
        let Some(flight) = &mut slot.flight else {
            self.start(i, Vec::new());
            return ListChanged::RefreshNow;
        };
        flight.current = false;
        if slot.queued.is_some() {
            ListChanged::AlreadyQueued
        } else {
            slot.queued = Some(Vec::new());
            ListChanged::Queued
        }
    }

    /// A caller wants `server`'s listing. An [`Action::Resolve`] naming the returned id answers
    /// it (at once when nothing needs traversing). A server the catalog does not know is an
    /// `unknown_server` error; one without a connection is answered with a `transport_error`
    /// failure (recorded in the catalog).
    pub fn request(&mut self, server: &str, want: Want, now: Duration) -> Result<CallerId, CatalogError> {
        self.last_caller += 1;
        let id = CallerId(self.last_caller);
        let waiter = Waiter { id, carried: false };
        let attached = self.find(server).filter(|&i| self.slots[i].epoch.is_some());
        let Some(i) = attached else {
            let known = self.catalog.status(server, now)?;
            let failure = Failure {
                code: ErrorCode::TransportError,
                message: format!("server \"{}\": no connection is attached", known.server),
            };
            let ticket = self.catalog.begin_refresh(server);
            self.catalog.fail(&ticket, failure.clone());
            self.push_resolve(server, vec![id], Outcome::Failed { failure, rpc_code: None }, None);
            return Ok(id);
        };
        if want == Want::Current && !self.wants_traversal(server, now) {
            self.push_resolve(server, vec![id], Outcome::Cached, None);
            return Ok(id);
        }
        let slot = &mut self.slots[i];
        match (&mut slot.flight, want) {
            (None, _) => self.start(i, vec![waiter]),
            (Some(flight), Want::Current | Want::Refresh) if flight.current => flight.callers.push(waiter),
            (Some(_), _) => slot.queued.get_or_insert_with(Vec::new).push(waiter),
        }
        Ok(id)
    }

    /// The result of traversal `traversal`: both listings, or why not. Returns what became of it.
    pub fn handle_traversed(
        &mut self,
        traversal: TraversalId,
        result: Result<(&Listing, &Listing), TraversalError>,
        now: Duration,
    ) -> Disposition {
        let Some(i) = self.slots.iter().position(|s| s.flight.as_ref().is_some_and(|f| f.id == traversal)) else {
            return Disposition::Ignored;
        };
        let flight = self.slots[i].flight.take().expect("found above");
        let disposition = match result {
            _ if !flight.current => self.discard(i, flight),
            Err(TraversalError::Abandoned) => self.discard(i, flight),
            Ok((resources, templates)) => {
                if !flight.confirming && self.shrinks(i, resources, templates) {
                    self.last_traversal += 1;
                    let id = TraversalId(self.last_traversal);
                    let server = self.slots[i].name.clone();
                    self.actions.push_back(Action::Traverse { server, epoch: flight.epoch, traversal: id });
                    self.slots[i].flight = Some(Flight { id, confirming: true, ..flight });
                    return Disposition::Confirming;
                }
                match self.catalog.commit(&flight.ticket, resources, templates, now) {
                    Ok(true) => {
                        let slot = &mut self.slots[i];
                        slot.failures = 0;
                        slot.retry_at = None;
                        self.resolve(i, flight.callers, Outcome::Committed, Some(flight.id));
                        Disposition::Committed
                    }
                    Ok(false) => self.discard(i, flight),
                    Err(e) => {
                        // The catalog refused the listings and recorded that as the failure.
                        let failure = Failure { code: e.code(), message: e.to_string() };
                        self.resolve(i, flight.callers, Outcome::Failed { failure, rpc_code: None }, Some(flight.id));
                        Disposition::Failed
                    }
                }
            }
            Err(TraversalError::Failed { failure, rpc_code }) => {
                if !self.catalog.fail(&flight.ticket, failure.clone()) {
                    self.discard(i, flight)
                } else {
                    if failure.code.is_transient() && self.slots[i].queued.is_none() {
                        let delay = self.backoff(i);
                        self.slots[i].retry_at = Some(now + delay);
                    }
                    self.resolve(i, flight.callers, Outcome::Failed { failure, rpc_code }, Some(flight.id));
                    Disposition::Failed
                }
            }
        };
        if self.slots[i].flight.is_none() {
            if let Some(waiters) = self.slots[i].queued.take() {
                self.start(i, waiters);
            }
        }
        disposition
    }

    /// Time has come ([`poll_timeout`](Self::poll_timeout)): starts the retries that are due.
    pub fn handle_timeout(&mut self, now: Duration) {
        for i in 0..self.slots.len() {
            let slot = &mut self.slots[i];
            if slot.retry_at.is_some_and(|at| at <= now) {
                slot.retry_at = None;
                if slot.flight.is_none() && slot.epoch.is_some() {
                    self.start(i, Vec::new());
                }
            }
        }
    }

    /// The next action, if any. Drain them after every event.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due next (the earliest retry), if ever.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.slots.iter().filter_map(|s| s.retry_at).min()
    }

    /// True while a traversal of `server` (or of any server) is in flight or queued.
    pub fn is_busy(&self, server: Option<&str>) -> bool {
        self.slots
            .iter()
            .filter(|s| server.is_none_or(|name| s.name == name))
            .any(|s| s.flight.is_some() || s.queued.is_some())
    }

    /// Forgets `server` (its catalog entry included); its callers are answered `discarded`.
    /// Returns whether it was known.
    pub fn remove(&mut self, server: &str) -> bool {
        let had_slot = match self.find(server) {
            Some(i) => {
                let waiters = self.waiters(i);
                self.resolve(i, waiters, Outcome::Discarded, None);
                self.slots.remove(i);
                true
            }
            None => false,
        };
        self.catalog.remove(server) || had_slot
    }

    /// Forgets every server.
    pub fn clear(&mut self) {
        for i in 0..self.slots.len() {
            let waiters = self.waiters(i);
            self.resolve(i, waiters, Outcome::Discarded, None);
        }
        self.slots.clear();
        self.catalog.clear();
    }

    // --- internals ---

    fn find(&self, server: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.name == server)
    }

    /// Starts a traversal pair of slot `i` for `callers`.
    fn start(&mut self, i: usize, callers: Vec<Waiter>) {
        self.last_traversal += 1;
        let id = TraversalId(self.last_traversal);
        let slot = &mut self.slots[i];
        let epoch = slot.epoch.expect("only attached servers traverse");
        let ticket = self.catalog.begin_refresh(&slot.name);
        slot.flight = Some(Flight { id, epoch, ticket, current: true, confirming: false, callers });
        slot.retry_at = None;
        self.actions.push_back(Action::Traverse { server: slot.name.clone(), epoch, traversal: id });
    }

    /// Ends a flight without data: its callers move to the queued traversal once, else are
    /// answered `discarded`.
    fn discard(&mut self, i: usize, flight: Flight) -> Disposition {
        self.catalog.abandon(&flight.ticket);
        let slot = &mut self.slots[i];
        let mut dropped = Vec::new();
        for w in flight.callers {
            match &mut slot.queued {
                Some(queued) if !w.carried => queued.push(Waiter { carried: true, ..w }),
                _ => dropped.push(w),
            }
        }
        self.resolve(i, dropped, Outcome::Discarded, Some(flight.id));
        Disposition::Discarded
    }

    /// Ends slot `i`'s connection: clears its pair, ends its flight and queue; returns their callers.
    fn end_connection(&mut self, i: usize) -> Vec<Waiter> {
        let waiters = self.waiters(i);
        let slot = &mut self.slots[i];
        if let Some(flight) = slot.flight.take() {
            self.catalog.abandon(&flight.ticket);
        }
        slot.retry_at = None;
        self.catalog.invalidate(&slot.name, Reason::ConnectionClosed);
        waiters
    }

    /// Takes every caller waiting on slot `i` (in flight, then queued).
    fn waiters(&mut self, i: usize) -> Vec<Waiter> {
        let slot = &mut self.slots[i];
        let mut out = slot.flight.as_mut().map(|f| std::mem::take(&mut f.callers)).unwrap_or_default();
        out.extend(slot.queued.take().unwrap_or_default());
        out
    }

    fn resolve(&mut self, i: usize, callers: Vec<Waiter>, outcome: Outcome, traversal: Option<TraversalId>) {
        if !callers.is_empty() {
            let server = self.slots[i].name.clone();
            self.push_resolve(&server, callers.iter().map(|w| w.id).collect(), outcome, traversal);
        }
    }

    fn push_resolve(&mut self, server: &str, callers: Vec<CallerId>, outcome: Outcome, traversal: Option<TraversalId>) {
        self.actions.push_back(Action::Resolve { server: server.to_owned(), callers, outcome, traversal });
    }

    /// Does a [`Want::Current`] request of `server` need a traversal at `now`?
    fn wants_traversal(&self, server: &str, now: Duration) -> bool {
        self.catalog.needs_refresh(server, now)
    }

    /// The shrink guard: does either list fall from `shrink_min_items` or more to under a tenth?
    fn shrinks(&self, i: usize, resources: &Listing, templates: &Listing) -> bool {
        let Some((kept_resources, kept_templates)) = self.catalog.counts(&self.slots[i].name) else { return false };
        let trips = |before: usize, after: usize| before >= self.config.shrink_min_items && after * 10 < before;
        trips(kept_resources, resources.items.len()) || trips(kept_templates, templates.items.len())
    }

    /// The next retry delay of slot `i` ([`crate::backoff`]'s rule), counting this failure.
    fn backoff(&mut self, i: usize) -> Duration {
        let slot = &mut self.slots[i];
        slot.failures = slot.failures.saturating_add(1);
        let schedule = Backoff { base: self.config.retry_base, max: self.config.retry_max };
        schedule.delay(slot.failures, &mut self.rng)
    }
}
