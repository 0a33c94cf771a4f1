//! Discovery: `Limits`, `Request`, `Pager`, `Listing` and its items, and the capability checks.

use std::collections::HashMap;

use mcplens::discovery::Text;

use crate::*;

/// The server's JSON-RPC error code in what the SDK reported (`SdkFailure::rpc_code`): `None`
/// when the failure is not one (the transport's, a malformed answer).
#[pyfunction]
#[pyo3(signature = (kind, code = None, connection_held = None))]
pub(crate) fn sdk_rpc_code(
    py: Python<'_>,
    kind: &str,
    code: Option<f64>,
    connection_held: Option<bool>,
) -> PyResult<Option<i64>> {
    let failure = discovery::SdkFailure::from_wire("", kind, code, connection_held);
    Ok(failure.map_err(|e| invalid::<DiscoveryError>(py, &e))?.rpc_code())
}

/// Bounds on one traversal (defaults: 100 pages, 10,000 items, 1,000,000 bytes, 60 s; repeated
/// cursors by protocol era; cursors up to 65,536 bytes).
#[pyclass(name = "Limits", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyLimits {
    pub(crate) inner: Limits,
}

getters! { PyLimits, |s| {
    max_pages: u32 = s.inner.max_pages;
    max_items: usize = s.inner.max_items;
    max_bytes: usize = s.inner.max_bytes;
    deadline_seconds: f64 = s.inner.deadline.as_secs_f64();
    /// `"by_era"` (default: fail before 2026-07-28, follow on it), `"fail"` or `"follow"`.
    repeated_cursors: String = wire_name(s.inner.repeated_cursors);
    max_cursor_bytes: usize = s.inner.max_cursor_bytes;
}}

#[pymethods]
impl PyLimits {
    #[new]
    #[pyo3(signature = (
        *, max_pages = 100, max_items = 10_000, max_bytes = 1_000_000, deadline_seconds = 60.0,
        repeated_cursors = "by_era", max_cursor_bytes = 65_536
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        max_pages: u32,
        max_items: usize,
        max_bytes: usize,
        deadline_seconds: f64,
        repeated_cursors: &str,
        max_cursor_bytes: usize,
    ) -> PyResult<Self> {
        let invalid =
            |why: &str| error::<McplensError>(py, format!("invalid limits: {why}"), "invalid_argument", None, None);
        let deadline = duration(deadline_seconds)
            .ok_or_else(|| invalid("deadline_seconds must be a finite, non-negative number"))?;
        let repeated_cursors =
            parse_wire_name("", "repeated_cursors", repeated_cursors).map_err(|e| invalid(&e.reason))?;
        let inner = Limits { max_pages, max_items, max_bytes, deadline, repeated_cursors, max_cursor_bytes };
        inner.validate().map_err(|why| invalid(&why.to_string()))?;
        Ok(PyLimits { inner })
    }

    fn __repr__(&self) -> String {
        format!(
            "Limits(max_pages={}, max_items={}, max_bytes={}, deadline_seconds={:?}, repeated_cursors={:?}, \
             max_cursor_bytes={})",
            self.inner.max_pages,
            self.inner.max_items,
            self.inner.max_bytes,
            self.inner.deadline.as_secs_f64(),
            wire_name(self.inner.repeated_cursors),
            self.inner.max_cursor_bytes,
        )
    }
}

/// The next request a host must send.
#[pyclass(name = "Request", module = "mcplens._core", frozen)]
pub(crate) struct PyRequest {
    pub(crate) inner: discovery::Request,
}

getters! { PyRequest, |s| {
    /// The JSON-RPC method.
    method: &'static str = s.inner.method;
    /// The exact cursor to send back (`None` on page 1).
    cursor: Option<&str> = s.inner.cursor.as_deref();
}}

#[pymethods]
impl PyRequest {
    /// The request's `params`: `None` on page 1 (send no `params` key), else `{"cursor": ...}`.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.cursor.as_deref().map(|c| pythonize(py, &serde_json::json!({ "cursor": c }))).transpose()
    }

    /// The request's `params` as compact JSON text, or `None`.
    fn params_json(&self) -> Option<String> {
        self.inner.params_json()
    }

    fn __repr__(&self) -> String {
        let page = if self.inner.cursor.is_some() { "next page" } else { "first page" };
        format!("<Request {} ({page})>", self.inner.method)
    }
}

/// The sans-IO pager: `next_request()` → send it → `accept_*()` → … → `finish()`; or a refresher's
/// pair (`Pager.pair`), performed by the same loop and handed back to `Refresher.traversed`.
#[pyclass(name = "Pager", module = "mcplens._core")]
pub(crate) struct PyPager {
    pub(crate) inner: Option<Paging>,
    pub(crate) server: String,
    /// The pages' own long strings the listing keeps as lent, by the start of their range in the
    /// listing's text (`Pager::handle_parsed_page_noting`).
    lent: HashMap<usize, Py<PyString>>,
}

impl PyPager {
    fn pager(&mut self, py: Python<'_>) -> PyResult<&mut Paging> {
        let server = &self.server;
        self.inner.as_mut().ok_or_else(|| {
            let e = discovery::DiscoveryError::InvalidState {
                server: server.clone(),
                reason: "finish was already called, or the pair handed back",
            };
            discovery_error(py, &e)
        })
    }

    /// The pair this pager performs, taken (for `Refresher.traversed`).
    pub(crate) fn take_pair(&mut self, py: Python<'_>) -> PyResult<PairTraversal> {
        match self.inner.take() {
            Some(Paging::Pair(pair)) => Ok(pair),
            other => {
                self.inner = other;
                let reason = "not a refresher's pair (Pager.pair), or already handed back";
                let e = discovery::DiscoveryError::InvalidState { server: self.server.clone(), reason };
                Err(discovery_error(py, &e))
            }
        }
    }

    fn accept(&mut self, py: Python<'_>, outcome: Outcome<'_>, now: Option<f64>) -> PyResult<()> {
        let now = instant(py, now)?;
        let pager = self.pager(py)?;
        pager.handle_outcome(outcome, now).map_err(|e| discovery_error(py, &e))
    }
}

getters! { PyPager, |s| {
    /// `"resources"` or `"resource_templates"`: the list being read (a pair that ended: `None`).
    kind: Option<String> = s.inner.as_ref().map_or(Some(ListKind::Resources), Paging::kind).map(wire_name);
    server: &str = &s.server;
    /// True once the traversal (or the pair) has finished or failed.
    is_done: bool = s.inner.as_ref().is_none_or(Paging::is_done);
}}

#[pymethods]
impl PyPager {
    #[new]
    #[pyo3(signature = (kind, server, *, resources_capability = true, limits = None, now = None, protocol_version = ""))]
    fn new(
        py: Python<'_>,
        kind: &str,
        server: String,
        resources_capability: bool,
        limits: Option<PyRef<'_, PyLimits>>,
        now: Option<f64>,
        protocol_version: &str,
    ) -> PyResult<Self> {
        let kind = parse_wire_name(&server, "kind", kind).map_err(|e| invalid::<McplensError>(py, &e))?;
        let limits = limits.map(|l| l.inner).unwrap_or_default();
        let now = instant(py, now)?;
        let pager =
            Pager::new(kind, server.clone(), resources_capability, limits, now).map_err(|e| discovery_error(py, &e))?;
        Ok(PyPager {
            inner: Some(Paging::One(pager.with_protocol_version(protocol_version))),
            server,
            lent: HashMap::new(),
        })
    }

    /// The traversal pair of a refresher's `traverse` action (`traversal`, its server) over a
    /// connection whose server's `capabilities` are this JSON text (`None`: not initialized):
    /// resources, then templates, as the core decides. Perform it like a pager, then hand it back
    /// with `Refresher.traversed` (a pair handed back before it ended was abandoned).
    #[staticmethod]
    #[pyo3(signature = (traversal, server, *, capabilities, limits = None, now = None, protocol_version = ""))]
    fn pair(
        py: Python<'_>,
        traversal: u64,
        server: String,
        capabilities: Option<&str>,
        limits: Option<PyRef<'_, PyLimits>>,
        now: Option<f64>,
        protocol_version: &str,
    ) -> PyResult<Self> {
        let limits = limits.map(|l| l.inner).unwrap_or_default();
        let id = catalog::TraversalId(traversal);
        let pair = PairTraversal::new(id, &server, capabilities, limits, protocol_version, instant(py, now)?);
        Ok(PyPager { inner: Some(Paging::Pair(pair)), server, lent: HashMap::new() })
    }

    /// The next request to send, or `None` when the traversal is over (call `finish()`).
    fn next_request(&mut self) -> Option<PyRequest> {
        self.inner.as_mut()?.poll_request().map(|inner| PyRequest { inner })
    }

    /// Seconds left for the whole traversal at `now`: the timeout for the in-flight request.
    #[pyo3(signature = (now = None))]
    fn remaining(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<f64> {
        let now = instant(py, now)?;
        Ok(self.pager(py)?.remaining(now).as_secs_f64())
    }

    /// Feeds the JSON-RPC `result` exactly as the server sent it (JSON text, `str` or UTF-8 `bytes`).
    #[pyo3(signature = (page, now = None))]
    fn accept_page(&mut self, py: Python<'_>, page: &Bound<'_, PyAny>, now: Option<f64>) -> PyResult<()> {
        let now = instant(py, now)?;
        let text = json_text(page)?;
        let pager = self.pager(py)?;
        let result = match text {
            Some(text) => py.detach(|| pager.handle_outcome(Outcome::Page(text), now)),
            None => pager.handle_outcome(Outcome::Malformed, now),
        };
        result.map_err(|e| discovery_error(py, &e))
    }

    /// Feeds the JSON-RPC `result` as the host's SDK parsed it (dicts, lists, strings, numbers,
    /// booleans, `None`), read in place by the same rules as its JSON text. `False`: nothing was
    /// applied, as the page holds a value JSON text carries otherwise (a lone surrogate, an integer
    /// past 64 bits, a non-finite float, another type): hand its text to `accept_page`.
    #[pyo3(signature = (page, now = None))]
    fn accept_page_parsed(&mut self, py: Python<'_>, page: &Bound<'_, PyAny>, now: Option<f64>) -> PyResult<bool> {
        let now = instant(py, now)?;
        let kept = convert::values::Kept::default();
        let mut noted = Vec::new();
        let read = self.pager(py)?.handle_parsed_page_noting(
            convert::values::Values::of(page, &kept),
            now,
            &mut noted,
            convert::values::LONG,
        );
        if read.is_err() {
            self.lent.clear(); // the traversal failed: its listing is gone
        }
        for v in noted {
            if let Some(s) = kept.lent(v.source) {
                self.lent.insert(v.range.start, s.unbind());
            }
        }
        read.map_err(|e| discovery_error(py, &e))
    }

    /// Feeds what the SDK reported for a request that brought no result, as facts the core
    /// classifies (`SdkFailure`): `kind` `"error_answer"` (the server's error answer; `code` its
    /// code), `"sdk_error"` (the SDK's protocol error with `code`; `connection_held` when the host
    /// can tell), `"schema_refused"` or `"lost"` (anything else the SDK raised).
    #[pyo3(signature = (kind, code = None, connection_held = None, now = None))]
    fn accept_failure(
        &mut self,
        py: Python<'_>,
        kind: &str,
        code: Option<f64>,
        connection_held: Option<bool>,
        now: Option<f64>,
    ) -> PyResult<()> {
        let failure = discovery::SdkFailure::from_wire(&self.server, kind, code, connection_held)
            .map_err(|e| invalid::<DiscoveryError>(py, &e))?;
        self.accept(py, failure.outcome(), now)
    }

    /// Feeds a JSON-RPC error response (only the code is kept: the message is server text).
    #[pyo3(signature = (code, now = None))]
    fn accept_rpc_error(&mut self, py: Python<'_>, code: i64, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::RpcError { code }, now)
    }

    /// The transport failed (closed, send error, decode error).
    #[pyo3(signature = (now = None))]
    fn accept_transport_error(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::Transport, now)
    }

    /// The host's timeout on the in-flight request (given `remaining()`) fired.
    #[pyo3(signature = (now = None))]
    fn accept_timeout(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::TimedOut, now)
    }

    /// The host's typed client refused the result's shape.
    #[pyo3(signature = (now = None))]
    fn accept_malformed(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::Malformed, now)
    }

    /// What the traversal has counted so far (also after a failure).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.inner.as_ref().and_then(Paging::diagnostics) {
            Some(d) => pythonize(py, d),
            None => Ok(PyDict::new(py).into_any()),
        }
    }

    /// The listing of a complete traversal; raises the error that ended a failed one.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyListing> {
        let Paging::One(_) = self.pager(py)? else {
            let reason = "a pair is handed back to its refresher (Refresher.traversed), not finished";
            let e = discovery::DiscoveryError::InvalidState { server: self.server.clone(), reason };
            return Err(discovery_error(py, &e));
        };
        let Some(Paging::One(pager)) = self.inner.take() else { unreachable!("checked above") };
        let listing = pager.finish().map_err(|e| discovery_error(py, &e))?;
        PyListing::new(py, listing, &mut std::mem::take(&mut self.lent))
    }

    fn __repr__(&self) -> String {
        format!("<Pager {} server={:?} done={}>", self.kind().unwrap_or_default(), self.server, self.is_done())
    }
}

/// A complete, projected, sanitized listing of one server.
#[pyclass(name = "Listing", module = "mcplens._core", frozen)]
pub(crate) struct PyListing {
    pub(crate) inner: Listing,
    pub(crate) items: Py<PyTuple>,
}

impl PyListing {
    /// The listing's items, each handed the pages' own strings of `lent` it kept as lent.
    fn new(py: Python<'_>, inner: Listing, lent: &mut HashMap<usize, Py<PyString>>) -> PyResult<Self> {
        let items = inner.items.iter().map(|item| item_object(py, item, lent)).collect::<PyResult<Vec<_>>>()?;
        let items = PyTuple::new(py, items)?.unbind();
        Ok(PyListing { inner, items })
    }
}

fn item_object<'py>(
    py: Python<'py>,
    item: &Item,
    lent: &mut HashMap<usize, Py<PyString>>,
) -> PyResult<Bound<'py, PyAny>> {
    // The id, name, title, description and MIME type (`Lent`'s slots).
    let lent = Lent::of(py, item.texts().into_iter().take(5), lent);
    Ok(match item {
        Item::Template(t) => Bound::new(py, PyResourceTemplate { inner: t.clone(), lent })?.into_any(),
        Item::Resource(r) => Bound::new(py, PyResource { inner: r.clone(), lent })?.into_any(),
    })
}

/// The page's own string objects for an item's strings it kept as lent — its id, name, title,
/// description and MIME type, each when lent — handed out instead of a copy of each.
#[derive(Default)]
pub(crate) struct Lent(Option<Box<[Option<Py<PyString>>; 5]>>);

impl Lent {
    fn of<'a>(
        py: Python<'_>,
        strings: impl Iterator<Item = Option<&'a Text>>,
        lent: &mut HashMap<usize, Py<PyString>>,
    ) -> Lent {
        if lent.is_empty() {
            return Lent(None);
        }
        let mut own: [Option<Py<PyString>>; 5] = Default::default();
        for (slot, text) in own.iter_mut().zip(strings) {
            let Some((_, range)) = text.and_then(Text::buffer) else { continue };
            // The object is the string's only when it reads the same (a range is noted once).
            *slot = lent
                .remove(&range.start)
                .filter(|s| s.bind(py).to_str().is_ok_and(|s| s == text.map_or("", |t| t.as_str())));
        }
        Lent(own.iter().any(Option::is_some).then(|| Box::new(own)))
    }

    /// Field `at`'s string: the page's own object, or a new one of `s`.
    fn get<'py>(&self, py: Python<'py>, at: usize, s: &str) -> Bound<'py, PyString> {
        match self.0.as_ref().and_then(|own| own[at].as_ref()) {
            Some(own) => own.bind(py).clone(),
            None => PyString::new(py, s),
        }
    }
}

getters! { PyListing, |s| {
    /// `"resources"` or `"resource_templates"`.
    kind: String = wire_name(s.inner.kind);
    server: &str = &s.inner.server;
    /// `"listed"`, `"no_capability"` or `"method_not_found"`.
    support: String = wire_name(s.inner.support);
    ttl_ms: Option<u64> = s.inner.ttl_ms;
    cache_scope: Option<&str> = s.inner.cache_scope.as_deref();
}}

#[pymethods]
impl PyListing {
    /// The items, in server order.
    #[getter]
    fn items(&self, py: Python<'_>) -> Py<PyTuple> {
        self.items.clone_ref(py)
    }

    /// What the traversal counted (camelCase keys, as the core reports them).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.diagnostics)
    }

    /// The listing as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    /// The listing as compact JSON text.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    fn __len__(&self) -> usize {
        self.inner.items.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.items.bind(py).as_any().try_iter().map(Bound::into_any)
    }

    fn __repr__(&self) -> String {
        let (kind, server, n, support) = (self.kind(), &self.inner.server, self.inner.items.len(), self.support());
        format!("<Listing {kind} server={server:?} items={n} support={support}>")
    }
}

/// An item's string getters: each hands out the page's own object when the item kept it as lent
/// ([`Lent`]), else a new string. `$id` is the item's identifier (`uri_template` or `uri`).
macro_rules! lent_getters {
    ($class:ty, $id:ident) => {
        #[pymethods]
        impl $class {
            #[getter]
            fn $id<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
                self.lent.get(py, 0, &self.inner.$id)
            }

            #[getter]
            fn name<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
                self.lent.get(py, 1, &self.inner.name)
            }

            #[getter]
            fn title<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyString>> {
                self.inner.title.as_deref().map(|s| self.lent.get(py, 2, s))
            }

            #[getter]
            fn description<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyString>> {
                self.inner.description.as_deref().map(|s| self.lent.get(py, 3, s))
            }

            #[getter]
            fn mime_type<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyString>> {
                self.inner.mime_type.as_deref().map(|s| self.lent.get(py, 4, s))
            }
        }
    };
}

/// The kept annotations of an item.
#[pyclass(name = "Annotations", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyAnnotations {
    pub(crate) inner: Annotations,
}

getters! { PyAnnotations, |s| {
    priority: Option<f64> = s.inner.priority;
    last_modified: Option<&str> = s.inner.last_modified.as_deref();
}}

#[pymethods]
impl PyAnnotations {
    /// `("user", "assistant")` subset, or None.
    #[getter]
    fn audience<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner.audience.as_ref().map(|a| PyTuple::new(py, a.iter().map(wire_name))).transpose()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("Annotations({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

pub(crate) fn annotations(a: &Option<Annotations>) -> Option<PyAnnotations> {
    a.as_ref().map(|a| PyAnnotations { inner: a.clone() })
}

/// A projected, sanitized resource template (`resources/templates/list`).
#[pyclass(name = "ResourceTemplate", module = "mcplens._core", frozen, eq)]
pub(crate) struct PyResourceTemplate {
    pub(crate) inner: discovery::ResourceTemplate,
    pub(crate) lent: Lent,
}

impl PartialEq for PyResourceTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

getters! { PyResourceTemplate, |s| {
    annotations: Option<PyAnnotations> = annotations(&s.inner.annotations);
    server: &str = &s.inner.server;
}}

lent_getters!(PyResourceTemplate, uri_template);

#[pymethods]
impl PyResourceTemplate {
    /// The item as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("ResourceTemplate({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

/// A projected, sanitized concrete resource (`resources/list`).
#[pyclass(name = "Resource", module = "mcplens._core", frozen, eq)]
pub(crate) struct PyResource {
    pub(crate) inner: discovery::Resource,
    pub(crate) lent: Lent,
}

impl PartialEq for PyResource {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

getters! { PyResource, |s| {
    size: Option<u64> = s.inner.size;
    annotations: Option<PyAnnotations> = annotations(&s.inner.annotations);
    server: &str = &s.inner.server;
}}

lent_getters!(PyResource, uri);

#[pymethods]
impl PyResource {
    /// The item as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("Resource({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

/// Does a server's `capabilities` object (JSON text) declare `resources`?
#[pyfunction]
pub(crate) fn has_resources_capability(capabilities_json: &str) -> bool {
    discovery::has_resources_capability(capabilities_json)
}

/// Is a client initialized (its server's capabilities as JSON text; None or "null": not yet), and
/// does its server declare `resources`? `DiscoveryError` `invalid_argument` when not initialized.
#[pyfunction]
#[pyo3(signature = (server, capabilities_json))]
pub(crate) fn initialized(py: Python<'_>, server: &str, capabilities_json: Option<&str>) -> PyResult<bool> {
    discovery::initialized(server, capabilities_json).map_err(|e| discovery_error(py, &e))
}
