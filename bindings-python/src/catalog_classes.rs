//! The catalog: `Catalog`, its `ServerStatus` and `Failure`, and the resource tools' `ToolSpec`.

use crate::*;

/// A failed refresh as the catalog keeps it: a stable code and mcplens' own message.
#[pyclass(name = "Failure", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyFailure {
    pub(crate) inner: catalog::Failure,
}

getters! { PyFailure, |s| {
    code: &str = s.inner.code.as_str();
    message: &str = &s.inner.message;
}}

#[pymethods]
impl PyFailure {
    fn __repr__(&self) -> String {
        format!("Failure(code={:?}, message={:?})", self.inner.code, self.inner.message)
    }
}

/// A snapshot of one server's catalog entry.
#[pyclass(name = "ServerStatus", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyServerStatus {
    pub(crate) inner: ServerStatus,
}

getters! { PyServerStatus, |s| {
    server: &str = &s.inner.server;
    /// `"unknown"`, `"ok"`, `"unsupported"`, `"outdated"`, `"failed"` or `"stale"`.
    status: String = wire_name(s.inner.status);
    /// Commits so far (0 = never).
    generation: u64 = s.inner.generation;
    /// The last failure, kept until the next successful commit.
    last_error: Option<PyFailure> = s.inner.last_error.clone().map(|inner| PyFailure { inner });
    /// Cached resources.
    resources: usize = s.inner.resources;
    /// Cached templates.
    templates: usize = s.inner.templates;
    /// True while a refresh is running.
    refreshing: bool = s.inner.refreshing;
}}

#[pymethods]
impl PyServerStatus {
    /// The snapshot as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("ServerStatus({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

pub(crate) fn parse_reason(py: Python<'_>, server: &str, reason: &str) -> PyResult<Reason> {
    parse_wire_name(server, "reason", reason).map_err(|e| invalid::<CatalogError>(py, &e))
}

/// The per-server catalog: what its refresh machine (`mcplens._core.Refresher`, one per catalog)
/// keeps, and the reads every host answers from. `now` is seconds on any monotonic clock
/// (default: `time.monotonic()`). `mcplens.Catalog` drives it over `mcp` sessions.
#[pyclass(name = "Catalog", module = "mcplens._core", frozen, subclass)]
pub(crate) struct PyCatalog {
    /// The one machine that owns the catalog's state; `Refresher` shares it (one driver).
    pub(crate) machine: Arc<catalog::SharedRefresher>,
    pub(crate) limits: Option<PyLimits>,
    /// The read tool's settings.
    pub(crate) read: tool::ReadConfig,
    /// The completion tool's settings.
    pub(crate) complete: tool::CompleteConfig,
}

impl PyCatalog {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Refresher> {
        // No Python code runs under it, so it never waits on the GIL.
        self.machine.lock()
    }
}

getters! { PyCatalog, |s| {
    /// Catalog-wide change counter: compare it with the last value seen to learn of a change.
    generation: u64 = s.lock().catalog().generation();
    /// The bounds of every traversal a refresh runs (None: the defaults).
    limits: Option<PyLimits> = s.limits.clone();
    /// The read tool's settings.
    read: read::PyReadConfig = read::PyReadConfig { inner: s.read };
    /// The completion tool's settings.
    complete: read::PyCompleteConfig = read::PyCompleteConfig { inner: s.complete };
}}

#[pymethods]
impl PyCatalog {
    #[new]
    #[pyo3(signature = (limits = None, *, refresh = None, read = None, complete = None))]
    fn new(
        limits: Option<PyRef<'_, PyLimits>>,
        refresh: Option<PyRef<'_, refresher::PyRefreshConfig>>,
        read: Option<PyRef<'_, read::PyReadConfig>>,
        complete: Option<PyRef<'_, read::PyCompleteConfig>>,
    ) -> Self {
        let config = refresh.map(|r| r.inner).unwrap_or_default();
        PyCatalog {
            machine: Arc::new(catalog::SharedRefresher::new(config)),
            limits: limits.map(|l| l.clone()),
            read: read.map(|r| r.inner).unwrap_or_default(),
            complete: complete.map(|c| c.inner).unwrap_or_default(),
        }
    }

    /// The resource tools to offer the model now: three while a server declares `resources`, and
    /// the completion tool too while a server offers completion.
    fn visible_tools(&self) -> Vec<&'static str> {
        self.lock().catalog().visible_tools().to_vec()
    }

    /// The registered servers, in registration order.
    fn servers(&self) -> Vec<String> {
        self.lock().catalog().servers()
    }

    /// `server`'s status at `now`; `CatalogError` `unknown_server` for a server never added.
    #[pyo3(signature = (server, now = None))]
    fn status(&self, py: Python<'_>, server: &str, now: Option<f64>) -> PyResult<PyServerStatus> {
        let now = instant(py, now)?;
        let status = self.lock().catalog().status(server, now);
        status.map(|inner| PyServerStatus { inner }).map_err(|e| catalog_error(py, &e))
    }

    /// Would a request for a current listing of `server` traverse at `now` (no pair yet, outdated
    /// by list_changed, or its `ttlMs` ran out)? A failed server is answered from the catalog.
    #[pyo3(signature = (server, now = None))]
    fn needs_refresh(&self, py: Python<'_>, server: &str, now: Option<f64>) -> PyResult<bool> {
        let now = instant(py, now)?;
        Ok(self.lock().catalog().needs_refresh(server, now))
    }

    /// Cached templates: every server's in registration order, or one server's.
    #[pyo3(signature = (server = None))]
    fn templates(&self, py: Python<'_>, server: Option<&str>) -> PyResult<Vec<PyResourceTemplate>> {
        let templates = self.lock().catalog().templates(server).map_err(|e| catalog_error(py, &e))?;
        Ok(templates.into_iter().map(|inner| PyResourceTemplate { inner, lent: Default::default() }).collect())
    }

    /// Cached resources: every server's in registration order, or one server's.
    #[pyo3(signature = (server = None))]
    fn resources(&self, py: Python<'_>, server: Option<&str>) -> PyResult<Vec<PyResource>> {
        let resources = self.lock().catalog().resources(server).map_err(|e| catalog_error(py, &e))?;
        Ok(resources.into_iter().map(|inner| PyResource { inner, lent: Default::default() }).collect())
    }

    /// Answers `ListMcpResourceTemplatesTool`: `arguments` is the model's input (a dict, its JSON
    /// text, or None). Returns the compact JSON output; raises `ToolError` (`unknown_server`,
    /// `invalid_argument`, `output_too_large`: never truncated).
    #[pyo3(signature = (arguments = None))]
    fn call_list_templates_tool(&self, py: Python<'_>, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        self.call_listing_tool(py, tool::NAME, arguments)
    }

    /// Answers `ListMcpResourcesTool`, the concrete-resources twin (same input, paging, failures, cap).
    #[pyo3(signature = (arguments = None))]
    fn call_list_resources_tool(&self, py: Python<'_>, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        self.call_listing_tool(py, tool::RESOURCES_NAME, arguments)
    }

    /// Answers either listing tool by `name` (`invalid_argument` for any other name).
    #[pyo3(signature = (name, arguments = None))]
    fn call_listing_tool(&self, py: Python<'_>, name: &str, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        let input = template::tool_input(py, arguments)?;
        py.detach(|| tool::render_listing(self.lock().catalog(), name, &input))
            .map_err(|e| tool_error(py, &e, input.server.as_deref()))
    }

    /// Every cached template `uri` fits: `{"matches": [{"server", "uri_template", "name", "values"}],
    /// "skipped": n}`, most specific first (see `docs/templates.md`).
    fn match_uri<'py>(&self, py: Python<'py>, uri: &str) -> PyResult<Bound<'py, PyAny>> {
        template::match_uri(py, &self.machine, uri)
    }

    fn __repr__(&self) -> String {
        format!("<Catalog servers={:?}>", self.servers())
    }
}

/// A resource tool's spec, from the core: the same text in every language.
#[pyclass(name = "ToolSpec", module = "mcplens._core", frozen)]
pub(crate) struct PyToolSpec {
    pub(crate) inner: tool::ToolSpec,
}

getters! { PyToolSpec, |s| {
    name: &'static str = s.inner.name;
    description: &'static str = s.inner.description;
    /// Hosts that load rarely used tools on demand should defer this one.
    deferred: bool = s.inner.deferred;
}}

#[pymethods]
impl PyToolSpec {
    /// The JSON schema of the input (a fresh dict on each access).
    #[getter]
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.input_schema)
    }

    /// The input schema in the strict form (every property required; optional ones also `null`).
    #[getter]
    fn strict_input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.strict_input_schema)
    }

    /// MCP tool annotations (`readOnlyHint: true`; a fresh dict on each access).
    #[getter]
    fn annotations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.annotations)
    }

    /// The spec with wire (camelCase) keys: `name`, `description`, `inputSchema`, `strictInputSchema`, `annotations`, `deferred`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    /// The spec as compact JSON text (byte-identical in every language).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    fn __repr__(&self) -> String {
        format!("<ToolSpec {}>", self.inner.name)
    }
}
