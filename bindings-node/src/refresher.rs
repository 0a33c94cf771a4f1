//! The core's refresh state machine for Node: [`NativeRefresher`]. Values are converted and
//! nothing else: ids are numbers, times are milliseconds of the host's monotonic clock, actions
//! cross as JSON text (the core's wire form).

use std::sync::{Arc, MutexGuard};

use mcplens::catalog::{Epoch, Refresher, TraversalError, TraversalId, Want};
use mcplens::error::{parse_wire_name, wire_name};
use napi::bindgen_prelude::BigInt;
use napi_derive::napi;

use crate::{catalog_error, instant, invalid, JsonText, NativeCatalog, Pager, Result};

/// The refresh state machine of a [`NativeCatalog`] (see `mcplens::catalog::Refresher`): one per
/// catalog.
#[napi]
pub struct NativeRefresher {
    machine: Arc<mcplens::catalog::SharedRefresher>,
}

#[napi]
impl NativeRefresher {
    /// The machine of `catalog`; `seed` feeds the retry jitter (default: the process's hash
    /// randomness). A catalog has one: a second is an `invalid_argument` error.
    #[napi(constructor)]
    pub fn new(catalog: &NativeCatalog, seed: Option<BigInt>) -> Result<Self> {
        catalog.machine.claim(seed.map(|s| s.get_u64().1)).map_err(catalog_error)?;
        Ok(NativeRefresher { machine: Arc::clone(&catalog.machine) })
    }

    /// Registers `server` without a connection (idempotent): listed, status `unknown`.
    #[napi]
    pub fn add_server(&mut self, server: String) {
        self.inner().add_server(&server);
    }

    /// Invalidates `server`: `list_changed`, `connection_closed`/`disabled` (its connection ends),
    /// or another reason (both lists cleared, the connection kept).
    #[napi]
    pub fn invalidate(&mut self, server: String, reason: String, now_ms: f64) -> Result<()> {
        let reason = parse_wire_name(&server, "reason", &reason).map_err(invalid)?;
        let now = instant(&server, now_ms)?;
        self.inner().invalidate(&server, reason, now);
        Ok(())
    }

    /// A connection of `server` (registering it): its epoch.
    #[napi]
    pub fn attach(&mut self, server: String, resources_capability: bool) -> i64 {
        self.inner().attach(&server, resources_capability).0 as i64
    }

    /// `attach` from the server's capabilities (JSON text): the core reads `resources` and
    /// `completions` from them.
    #[napi]
    pub fn attach_capabilities(&mut self, server: String, capabilities_json: String) -> i64 {
        self.inner().attach_capabilities(&server, &capabilities_json).0 as i64
    }

    /// Connection `epoch` of `server` ended: both lists cleared. False for an old epoch.
    #[napi]
    pub fn detach(&mut self, server: String, epoch: i64) -> bool {
        self.inner().detach(&server, Epoch(epoch as u64))
    }

    /// A watch of connection `epoch`, which negotiated `protocolVersion` and declared
    /// `capabilitiesJson`: `unsolicited` (before 2026-07-28), `listening` (open
    /// `subscriptions/listen`) or `not_offered` (2026-07-28 without `resources.listChanged`);
    /// null for an old epoch.
    #[napi]
    pub fn watch(
        &mut self,
        server: String,
        epoch: i64,
        protocol_version: String,
        capabilities_json: String,
    ) -> Option<String> {
        self.inner().watch(&server, Epoch(epoch as u64), &protocol_version, &capabilities_json).map(wire_name)
    }

    /// How the watch of `server`'s current connection learns of changes; null when unwatched.
    #[napi]
    pub fn notifications(&self, server: String) -> Option<String> {
        self.inner().notifications(&server).map(wire_name)
    }

    /// The server acknowledged the watch's `subscriptions/listen` stream; false for an old epoch
    /// or a watch that is not listening.
    #[napi]
    pub fn listen_acknowledged(&mut self, server: String, epoch: i64) -> bool {
        self.inner().handle_listen_acknowledged(&server, Epoch(epoch as u64))
    }

    /// The watch's `subscriptions/listen` stream was refused (`rpc_code`) or ended (`null`), the
    /// host knowing its `connection` then (`open`, `closed`, `unknown`): the core's rule answers
    /// `{closed: 'not_offered' | 'relisting' | 'detached'}`, or `{code, message}` to fail the watch
    /// with (`server_error` / `transport_error`); null for an old epoch or a watch not listening.
    #[napi]
    pub fn listen_closed(
        &mut self,
        server: String,
        epoch: i64,
        rpc_code: Option<i64>,
        connection: String,
        now_ms: f64,
    ) -> Result<Option<ListenFailure>> {
        let liveness = parse_wire_name(&server, "connection", &connection).map_err(invalid)?;
        let now = instant(&server, now_ms)?;
        Ok(match self.inner().handle_listen_closed(&server, Epoch(epoch as u64), rpc_code, liveness, now) {
            Ok(n) => n.map(|n| ListenFailure { closed: Some(wire_name(n)), code: None, message: None }),
            Err(e) => {
                Some(ListenFailure { closed: None, code: Some(e.code().to_string()), message: Some(e.to_string()) })
            }
        })
    }

    /// `server`'s current connection, if any.
    #[napi]
    pub fn epoch(&self, server: String) -> Option<i64> {
        self.inner().epoch(&server).map(|e| e.0 as i64)
    }

    /// A list_changed on connection `epoch`: `refresh_now`, `queued`, `already_queued` or `ignored`.
    #[napi]
    pub fn on_list_changed(&mut self, server: String, epoch: i64, now_ms: f64) -> Result<String> {
        let now = instant(&server, now_ms)?;
        Ok(wire_name(self.inner().handle_list_changed(&server, Epoch(epoch as u64), now)))
    }

    /// A caller wants `server`'s listing (`want`: `current`, `refresh` or `force`): its id.
    #[napi]
    pub fn request(&mut self, server: String, want: String, now_ms: f64) -> Result<i64> {
        let want: Want = parse_wire_name(&server, "want", &want).map_err(invalid)?;
        let now = instant(&server, now_ms)?;
        self.inner().request(&server, want, now).map(|id| id.0 as i64).map_err(catalog_error)
    }

    /// A pair (`Pager.pair`) handed back: ended (`committed`, `failed`…) or not (abandoned).
    #[napi]
    pub fn traversed(&mut self, pair: &mut Pager, now_ms: f64) -> Result<String> {
        let pair = pair.take_pair()?;
        let now = instant("", now_ms)?;
        Ok(wire_name(self.inner().handle_pair(pair, now)))
    }

    /// Traversal `traversal` will not complete.
    #[napi]
    pub fn traversal_abandoned(&mut self, traversal: i64, now_ms: f64) -> Result<String> {
        let now = instant("", now_ms)?;
        Ok(wire_name(self.inner().handle_traversed(TraversalId(traversal as u64), Err(TraversalError::Abandoned), now)))
    }

    /// Starts the retries due at `nowMs`.
    #[napi]
    pub fn handle_timeout(&mut self, now_ms: f64) -> Result<()> {
        self.inner().handle_timeout(instant("", now_ms)?);
        Ok(())
    }

    /// Every pending action, as a JSON array (`{"traverse": …}` / `{"resolve": …}`).
    #[napi(ts_return_type = "string")]
    pub fn poll_actions(&mut self) -> JsonText {
        let actions: Vec<_> = std::iter::from_fn(|| self.inner().poll_action()).collect();
        JsonText(serde_json::to_string(&actions).expect("actions always serialize"))
    }

    /// When `handleTimeout` is due next (milliseconds of the host's clock), or null.
    #[napi]
    pub fn poll_timeout(&self) -> Option<f64> {
        self.inner().poll_timeout().map(|t| t.as_nanos() as f64 / 1e6)
    }

    /// True while a traversal of `server` (or of any server) is in flight or queued.
    #[napi]
    pub fn is_busy(&self, server: Option<String>) -> bool {
        self.inner().is_busy(server.as_deref())
    }

    /// Forgets `server` (catalog entry included).
    #[napi]
    pub fn remove(&mut self, server: String) -> bool {
        self.inner().remove(&server)
    }

    /// Forgets every server.
    #[napi]
    pub fn clear(&mut self) {
        self.inner().clear();
    }

    fn inner(&self) -> MutexGuard<'_, Refresher> {
        self.machine.lock()
    }
}

/// A closed watch stream (`NativeRefresher.listenClosed`): what became of the watch (`closed`),
/// or the core's failure (`code`, `message`).
#[napi(object)]
pub struct ListenFailure {
    /// `not_offered` (-32601 before the acknowledgement: the watch stands), `relisting` (ended
    /// after it, the connection open) or `detached` (ended after it: the connection's end).
    pub closed: Option<String>,
    /// `server_error` or `transport_error`.
    pub code: Option<String>,
    /// The core's message (names the server and the JSON-RPC code).
    pub message: Option<String>,
}
