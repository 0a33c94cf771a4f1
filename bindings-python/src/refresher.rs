//! The core's refresh state machine for Python: `mcplens.RefreshConfig` and `mcplens._core.Refresher`.
//!
//! Values are converted and nothing else: ids are ints, times are seconds on the caller's
//! monotonic clock (default `time.monotonic()`), actions come out as dicts with the core's wire
//! keys (`{"traverse": {...}}` / `{"resolve": {...}}`).

use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use mcplens::catalog::{self, Epoch, Liveness, RefreshConfig, Refresher, TraversalError, TraversalId, Want};
use mcplens::error::{parse_wire_name, wire_name};
use pyo3::prelude::*;

use crate::{catalog_error, duration, error, instant, parse_reason, pythonize, McplensError, PyCatalog, PyPager};

/// The refresher's settings (defaults: retries from 1 s doubling to 5 min, `ttlMs` honoured down to
/// 10 s, the shrink guard from 10 items).
#[pyclass(name = "RefreshConfig", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyRefreshConfig {
    pub(crate) inner: RefreshConfig,
}

getters! { PyRefreshConfig, |s| {
    retry_base_seconds: f64 = s.inner.retry_base.as_secs_f64();
    retry_max_seconds: f64 = s.inner.retry_max.as_secs_f64();
    min_ttl_seconds: f64 = s.inner.min_ttl.as_secs_f64();
    shrink_min_items: usize = s.inner.shrink_min_items;
}}

#[pymethods]
impl PyRefreshConfig {
    #[new]
    #[pyo3(signature = (*, retry_base_seconds = 1.0, retry_max_seconds = 300.0, min_ttl_seconds = 10.0, shrink_min_items = 10))]
    fn new(
        py: Python<'_>,
        retry_base_seconds: f64,
        retry_max_seconds: f64,
        min_ttl_seconds: f64,
        shrink_min_items: usize,
    ) -> PyResult<Self> {
        let invalid = |why: &str| {
            error::<McplensError>(py, format!("invalid refresh config: {why}"), "invalid_argument", None, None)
        };
        let seconds =
            |s: f64| duration(s).ok_or_else(|| invalid("times must be finite, non-negative numbers of seconds"));
        let inner = RefreshConfig {
            retry_base: seconds(retry_base_seconds)?,
            retry_max: seconds(retry_max_seconds)?,
            min_ttl: seconds(min_ttl_seconds)?,
            shrink_min_items,
        };
        inner.validate().map_err(|why| invalid(&why.to_string()))?;
        Ok(PyRefreshConfig { inner })
    }

    fn __repr__(&self) -> String {
        let c = self.inner;
        format!(
            "RefreshConfig(retry_base_seconds={:?}, retry_max_seconds={:?}, min_ttl_seconds={:?}, shrink_min_items={})",
            c.retry_base.as_secs_f64(),
            c.retry_max.as_secs_f64(),
            c.min_ttl.as_secs_f64(),
            c.shrink_min_items
        )
    }
}

/// The refresh state machine of a catalog (sans-IO): events in, actions out (`poll_actions`),
/// `poll_timeout` for the one timer; the catalog is its state. One per catalog: `mcplens.Catalog`
/// drives its own over `mcp` sessions.
#[pyclass(name = "Refresher", module = "mcplens._core", frozen)]
struct PyRefresher {
    machine: Arc<catalog::SharedRefresher>,
}

fn wire<'py, T: serde::Serialize>(py: Python<'py>, value: T) -> PyResult<Bound<'py, PyAny>> {
    pythonize(py, &value)
}

impl PyRefresher {
    fn lock(&self) -> MutexGuard<'_, Refresher> {
        self.machine.lock()
    }
}

#[pymethods]
impl PyRefresher {
    /// The machine of `catalog` (with the catalog's `refresh` settings); `seed` feeds the retry
    /// jitter (default: the process's hash randomness). A catalog has one: a second raises
    /// `CatalogError` `invalid_argument`.
    #[new]
    #[pyo3(signature = (catalog, *, seed = None))]
    fn new(py: Python<'_>, catalog: PyRef<'_, PyCatalog>, seed: Option<u64>) -> PyResult<Self> {
        catalog.machine.claim(seed).map_err(|e| catalog_error(py, &e))?;
        Ok(PyRefresher { machine: Arc::clone(&catalog.machine) })
    }

    /// Registers `server` without a connection (idempotent): listed, status `unknown`.
    fn add_server(&self, server: &str) {
        self.lock().add_server(server);
    }

    /// Invalidates `server`: `"list_changed"` (a list_changed on its connection),
    /// `"connection_closed"`/`"disabled"` (its connection ends), any other reason clears both
    /// lists and keeps the connection.
    #[pyo3(signature = (server, reason = "other", now = None))]
    fn invalidate(&self, py: Python<'_>, server: &str, reason: &str, now: Option<f64>) -> PyResult<()> {
        let reason = parse_reason(py, server, reason)?;
        let now = instant(py, now)?;
        self.lock().invalidate(server, reason, now);
        Ok(())
    }

    /// A connection of `server` (registering it): its epoch. A connection already attached under
    /// that name is replaced (its pair cleared first).
    fn attach(&self, server: &str, resources_capability: bool) -> u64 {
        self.lock().attach(server, resources_capability).0
    }

    /// `attach` from the server's `capabilities` (JSON text): the core reads what it declares —
    /// `resources` and `completions` (the completion tool).
    fn attach_capabilities(&self, server: &str, capabilities: &str) -> u64 {
        self.lock().attach_capabilities(server, capabilities).0
    }

    /// Connection `epoch` of `server` ended (closed, disabled, replaced: every end clears alike):
    /// both lists cleared. False for an old epoch.
    fn detach(&self, server: &str, epoch: u64) -> bool {
        self.lock().detach(server, Epoch(epoch))
    }

    /// A watch of connection `epoch`, which negotiated `protocol_version` and declared
    /// `capabilities` (JSON text): `"unsolicited"` (before 2026-07-28), `"listening"` (open
    /// `subscriptions/listen`) or `"not_offered"` (2026-07-28 without `resources.listChanged`: no
    /// stream, no change notifications); `None` for an old epoch.
    fn watch(&self, server: &str, epoch: u64, protocol_version: &str, capabilities: &str) -> Option<String> {
        self.lock().watch(server, Epoch(epoch), protocol_version, capabilities).map(wire_name)
    }

    /// How the watch of `server`'s current connection learns of changes; `None` when unwatched.
    fn notifications(&self, server: &str) -> Option<String> {
        self.lock().notifications(server).map(wire_name)
    }

    /// The server acknowledged the watch's `subscriptions/listen` stream; False for an old epoch
    /// or a watch that is not listening.
    fn listen_acknowledged(&self, server: &str, epoch: u64) -> bool {
        self.lock().handle_listen_acknowledged(server, Epoch(epoch))
    }

    /// The watch's `subscriptions/listen` stream was refused (`rpc_code`) or ended (`None`), the
    /// host knowing its `connection` then (`"open"`, `"closed"`, `"unknown"`): the core's rule
    /// (`Refresher::handle_listen_closed`) answers `"not_offered"` (-32601 before the acknowledgement),
    /// `"relisting"` (ended after it, the connection open), `"detached"` (ended after it
    /// otherwise: the connection's end), or the `CatalogError` to raise from the watch (refused or
    /// failed before the acknowledgement); `None` for an old epoch or a watch not listening.
    #[pyo3(signature = (server, epoch, rpc_code = None, connection = "unknown", now = None))]
    fn listen_closed(
        &self,
        py: Python<'_>,
        server: &str,
        epoch: u64,
        rpc_code: Option<i64>,
        connection: &str,
        now: Option<f64>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let liveness: Liveness = parse_wire_name(server, "connection", connection)
            .map_err(|e| crate::invalid::<crate::CatalogError>(py, &e))?;
        let now = instant(py, now)?;
        Ok(match self.lock().handle_listen_closed(server, Epoch(epoch), rpc_code, liveness, now) {
            Ok(n) => n.map(|n| wire_name(n).into_pyobject(py).expect("a str").into_any().unbind()),
            Err(e) => Some(catalog_error(py, &e).into_value(py).into_any()),
        })
    }

    /// `server`'s current connection, if any.
    fn epoch(&self, server: &str) -> Option<u64> {
        self.lock().epoch(server).map(|e| e.0)
    }

    /// A list_changed on connection `epoch`: `"refresh_now"`, `"queued"`, `"already_queued"` or
    /// `"ignored"`.
    #[pyo3(signature = (server, epoch, now = None))]
    fn on_list_changed<'py>(
        &self,
        py: Python<'py>,
        server: &str,
        epoch: u64,
        now: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = instant(py, now)?;
        wire(py, self.lock().handle_list_changed(server, Epoch(epoch), now))
    }

    /// A caller wants `server`'s listing (`want`: `"current"`, `"refresh"` or `"force"`): its id,
    /// answered by a `resolve` action.
    #[pyo3(signature = (server, want = "refresh", now = None))]
    fn request(&self, py: Python<'_>, server: &str, want: &str, now: Option<f64>) -> PyResult<u64> {
        let want: Want =
            parse_wire_name(server, "want", want).map_err(|e| crate::invalid::<crate::CatalogError>(py, &e))?;
        let now = instant(py, now)?;
        let id = self.lock().request(server, want, now).map_err(|e| catalog_error(py, &e))?;
        Ok(id.0)
    }

    /// A pair (`Pager.pair`) handed back, performed: `"committed"`, `"confirming"`, `"failed"`,
    /// `"discarded"` (also a pair handed back before it ended: abandoned) or `"ignored"`.
    #[pyo3(signature = (pair, now = None))]
    fn traversed<'py>(
        &self,
        py: Python<'py>,
        mut pair: PyRefMut<'py, PyPager>,
        now: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pair = pair.take_pair(py)?;
        let now = instant(py, now)?;
        wire(py, self.lock().handle_pair(pair, now))
    }

    /// Traversal `traversal` will not complete (cancelled, the host failed).
    #[pyo3(signature = (traversal, now = None))]
    fn traversal_abandoned<'py>(
        &self,
        py: Python<'py>,
        traversal: u64,
        now: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let now = instant(py, now)?;
        wire(py, self.lock().handle_traversed(TraversalId(traversal), Err(TraversalError::Abandoned), now))
    }

    /// Starts the retries that are due at `now`.
    #[pyo3(signature = (now = None))]
    fn handle_timeout(&self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        let now = instant(py, now)?;
        self.lock().handle_timeout(now);
        Ok(())
    }

    /// Every pending action, in order (drain after every event).
    fn poll_actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let actions: Vec<catalog::Action> = std::iter::from_fn(|| self.lock().poll_action()).collect();
        wire(py, actions)
    }

    /// When `handle_timeout` is due next (seconds on the caller's clock), or None.
    fn poll_timeout(&self) -> Option<f64> {
        self.lock().poll_timeout().map(|t: Duration| t.as_secs_f64())
    }

    /// True while a traversal of `server` (or of any server) is in flight or queued.
    #[pyo3(signature = (server = None))]
    fn is_busy(&self, server: Option<&str>) -> bool {
        self.lock().is_busy(server)
    }

    /// Forgets `server` (catalog entry included); its callers are answered `discarded`.
    fn remove(&self, server: &str) -> bool {
        self.lock().remove(server)
    }

    /// Forgets every server.
    fn clear(&self) {
        self.lock().clear();
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRefreshConfig>()?;
    m.add_class::<PyRefresher>()?;
    Ok(())
}
