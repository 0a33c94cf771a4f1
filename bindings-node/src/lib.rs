//! Node binding for mcplens (napi-rs 3): the core's sans-IO discovery [`Pager`], the per-server
//! [`NativeCatalog`] and the listing tool, as JS classes and functions; server tracking (the core's
//! `Tracker`) as free functions over numeric handles (module [`tracking`]).
//!
//! This crate converts values and nothing else. Pages, limits, diagnostics and tool output cross
//! the boundary as JSON text; a finished traversal stays a Rust [`NativeListing`] so a catalog
//! commit takes the core's own listing (never re-validated); times cross as milliseconds of the
//! host's monotonic clock (`performance.now()`). Errors are thrown as JS `Error`s whose `code` is
//! the core's stable code (`deadline`, `unknown_server`, …); the facade in `lib/` rethrows them
//! as `McplensError`.
#![deny(clippy::all)]

use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use mcplens::catalog::{self, CatalogError, Paging, PairTraversal};
use mcplens::discovery::{self, DiscoveryError, Limits, ListKind, Outcome};
use mcplens::error::{parse_wire_name, wire_name, InvalidArgument};
use mcplens::tool::{self, ToolError};
use napi::bindgen_prelude::{Error, Float64ArraySlice, ToNapiValue, TypeName, Uint8ArraySlice, ValueType};
use napi::sys;
use napi_derive::napi;

pub mod cli;
pub mod convert;
pub mod read;
pub mod refresher;
pub mod template;
pub mod tracking;

/// The `code` of a thrown JS error: one of the core's stable codes.
pub struct Code(&'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// What every fallible export returns.
pub type Result<T> = std::result::Result<T, Error<Code>>;

fn discovery_error(e: DiscoveryError) -> Error<Code> {
    Error::new(Code(e.code().as_str()), e.to_string())
}

fn invalid_argument(server: &str, reason: &str) -> Error<Code> {
    invalid(InvalidArgument::new(server, reason))
}

/// The server's JSON-RPC error code in what the SDK reported (`SdkFailure::rpc_code`): null when
/// the failure is not one.
#[napi]
pub fn sdk_rpc_code(kind: String, code: Option<f64>, connection_held: Option<bool>) -> Result<Option<i64>> {
    Ok(discovery::SdkFailure::from_wire("", &kind, code, connection_held).map_err(invalid)?.rpc_code())
}

pub(crate) fn invalid(e: InvalidArgument) -> Error<Code> {
    Error::new(Code("invalid_argument"), e.to_string())
}

/// Host milliseconds (any epoch) → the core's monotonic `Duration`. Negative, NaN and
/// infinite readings are refused: they can only be a host bug.
fn instant(server: &str, now_ms: f64) -> Result<Duration> {
    if !now_ms.is_finite() || now_ms < 0.0 {
        return Err(invalid_argument(server, "`now` must be a finite, non-negative number of milliseconds"));
    }
    Ok(Duration::from_nanos((now_ms * 1e6).round() as u64))
}

/// JSON text handed to JS. serde_json writes non-ASCII characters as raw UTF-8, so most listings
/// are pure ASCII: those become one-byte JS strings by a plain copy (`napi_create_string_latin1`,
/// Latin-1 and ASCII agree below 0x80), skipping V8's UTF-8 decoding (about 2 ns/byte, 9 ms for a
/// 4 MB listing). Anything else goes through the UTF-8 path.
pub struct JsonText(pub(crate) String);

impl TypeName for JsonText {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for JsonText {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        if !val.0.is_ascii() {
            // SAFETY: forwarded as received from napi.
            return unsafe { String::to_napi_value(env, val.0) };
        }
        let mut out = std::ptr::null_mut();
        // SAFETY: `env` is napi's; the pointer and length describe `val.0`, alive for the call
        // (V8 copies the bytes).
        let status =
            unsafe { sys::napi_create_string_latin1(env, val.0.as_ptr().cast(), val.0.len() as isize, &mut out) };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_reason("failed to create a JS string"));
        }
        Ok(out)
    }
}

/// A JS string over a shared buffer, not a copy of it: an external one-byte string
/// (`node_api_create_external_string_latin1`) that holds a reference to the buffer until V8 lets
/// it go (at once when V8 chose to copy it). Its bytes read as Latin-1: only its ASCII ranges
/// read as the UTF-8 they are. The buffer is not empty.
pub struct SharedText(pub(crate) std::sync::Arc<String>);

impl TypeName for SharedText {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for SharedText {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        debug_assert!(!val.0.is_empty());
        let (data, len) = (val.0.as_ptr(), val.0.len());
        let hint = Box::into_raw(Box::new(val.0));
        let (mut out, mut copied) = (std::ptr::null_mut(), false);
        // SAFETY: `env` is napi's; `data` and `len` describe the buffer `hint` holds a reference
        // to, which nothing mutates while it is shared; `release` lets it go once.
        let status = unsafe {
            sys::node_api_create_external_string_latin1(
                env,
                data.cast(),
                len as isize,
                Some(release),
                hint.cast(),
                &mut out,
                &mut copied,
            )
        };
        if status != sys::Status::napi_ok {
            // SAFETY: on failure V8 never calls the finalizer: the reference is let go here.
            drop(unsafe { Box::from_raw(hint) });
            return Err(napi::Error::from_reason("failed to create a JS string"));
        }
        Ok(out)
    }
}

/// V8 no longer needs a [`SharedText`]'s characters.
unsafe extern "C" fn release(_env: sys::node_api_basic_env, _data: *mut std::ffi::c_void, hint: *mut std::ffi::c_void) {
    // SAFETY: `hint` is the box `SharedText::to_napi_value` gave V8, handed back once.
    drop(unsafe { Box::from_raw(hint.cast::<std::sync::Arc<String>>()) });
}

/// The request the host must send next.
#[napi(object)]
pub struct Request {
    /// The JSON-RPC method.
    pub method: String,
    /// The request's `params` as JSON text; absent on page 1, where the request must carry no
    /// `params` key at all.
    pub params: Option<String>,
}

/// The sans-IO traversal of one list (`resources/list` or `resources/templates/list`) of one
/// server, or a refresher's traversal pair (`Pager.pair`).
///
/// Call order: `new Pager(…)` → loop { `nextRequest()` → send it, waiting at most
/// `remaining(now)` ms → one `accept*` call } → `finish()` (a pair: `NativeRefresher.traversed`).
/// Any failure ends the traversal (a pair keeps it: its `accept*` throw only on misuse).
#[napi]
pub struct Pager {
    /// `None` once `finish` has consumed the core pager, or the pair was handed back.
    inner: Option<Paging>,
    server: String,
}

/// `limitsJson` as the core's limits (missing keys take the defaults).
fn limits_of(server: &str, limits_json: Option<&str>) -> Result<Limits> {
    match limits_json {
        None => Ok(Limits::default()),
        Some(text) => serde_json::from_str::<Limits>(text).map_err(|_| {
            invalid_argument(
                server,
                "limits must be {maxPages, maxItems, maxBytes, deadlineMs, maxCursorBytes} with non-negative \
                 integers and repeatedCursors \"by_era\", \"fail\" or \"follow\"",
            )
        }),
    }
}

#[napi]
impl Pager {
    /// Starts a traversal. `kind` is `"resources"` or `"resource_templates"`; `limitsJson` is the
    /// JSON text of `{maxPages, maxItems, maxBytes, deadlineMs, repeatedCursors, maxCursorBytes}`
    /// (missing keys take the defaults); `nowMs` is the host's monotonic clock in milliseconds;
    /// `protocolVersion` the revision the connection negotiated (what a repeated cursor does by
    /// default). With `resourcesCapability` false no request is made and the listing is empty.
    #[napi(constructor)]
    pub fn new(
        kind: String,
        server: String,
        resources_capability: bool,
        limits_json: Option<String>,
        now_ms: f64,
        protocol_version: Option<String>,
    ) -> Result<Self> {
        let kind: ListKind = parse_wire_name(&server, "kind", &kind).map_err(invalid)?;
        let limits = limits_of(&server, limits_json.as_deref())?;
        let now = instant(&server, now_ms)?;
        let inner =
            discovery::Pager::new(kind, server.clone(), resources_capability, limits, now).map_err(discovery_error)?;
        let inner = inner.with_protocol_version(protocol_version.as_deref().unwrap_or_default());
        Ok(Pager { inner: Some(Paging::One(inner)), server })
    }

    /// The traversal pair of a refresher's `traverse` action (`traversal`, its server) over a
    /// connection whose server's capabilities are `capabilitiesJson` (`null`: not initialized):
    /// resources, then templates, as the core decides. Hand it back to `NativeRefresher.traversed`.
    #[napi(factory)]
    pub fn pair(
        traversal: i64,
        server: String,
        capabilities_json: Option<String>,
        limits_json: Option<String>,
        now_ms: f64,
        protocol_version: Option<String>,
    ) -> Result<Self> {
        let limits = limits_of(&server, limits_json.as_deref())?;
        let now = instant(&server, now_ms)?;
        let id = mcplens::catalog::TraversalId(traversal as u64);
        let version = protocol_version.as_deref().unwrap_or_default();
        let pair = PairTraversal::new(id, &server, capabilities_json.as_deref(), limits, version, now);
        Ok(Pager { inner: Some(Paging::Pair(pair)), server })
    }

    /// The list being read (`resources` or `resource_templates`); `null` once a pair ended.
    #[napi(getter)]
    pub fn kind(&self) -> Option<String> {
        self.inner.as_ref().map_or(Some(ListKind::Resources), Paging::kind).map(wire_name)
    }

    /// The server's name.
    #[napi(getter)]
    pub fn server(&self) -> String {
        self.server.clone()
    }

    /// The next request to send, or `null` when the traversal is over (call `finish`).
    #[napi]
    pub fn next_request(&mut self) -> Option<Request> {
        let request = self.inner.as_mut()?.poll_request()?;
        Some(Request { method: request.method.to_owned(), params: request.params_json() })
    }

    /// Milliseconds left for the whole traversal at `nowMs`: the timeout of the in-flight request.
    #[napi]
    pub fn remaining(&self, now_ms: f64) -> Result<f64> {
        let now = instant(&self.server, now_ms)?;
        Ok(self.pager()?.remaining(now).as_nanos() as f64 / 1e6)
    }

    /// True once the traversal has finished or failed.
    #[napi]
    pub fn is_done(&self) -> bool {
        self.inner.as_ref().is_none_or(Paging::is_done)
    }

    /// The JSON-RPC `result` of the request, as JSON text exactly as the server sent it.
    #[napi]
    pub fn accept_page(&mut self, page: String, now_ms: f64) -> Result<()> {
        self.accept(Outcome::Page(&page), now_ms)
    }

    /// The JSON-RPC `result` as the SDK parsed it, handed over as a tape (`lib/convert-tape.ts`'s
    /// `withTape`: its strings' UTF-8 in `bytes`, its shape in `tape`) and read in place by the
    /// same rules as its JSON text (`convert::tape`). `false`: nothing was applied (a U+FFFD in its
    /// strings, say): hand its text to `acceptPage`.
    #[napi]
    pub fn accept_page_tape(
        &mut self,
        bytes: Uint8ArraySlice<'_>,
        tape: Float64ArraySlice<'_>,
        now_ms: f64,
    ) -> Result<bool> {
        let now = instant(&self.server, now_ms)?;
        let pager = self.inner.as_mut().ok_or_else(|| finished(&self.server))?;
        let Some(mut tape) = convert::tape::Tape::of(&bytes, &tape) else { return Ok(false) };
        pager.handle_parsed_page(tape.value(), now).map_err(discovery_error)
    }

    /// What the SDK reported for the request instead of a result (`kind`: `error_answer`,
    /// `sdk_error`, `schema_refused`, `lost`), classified by the core (`SdkFailure`).
    #[napi]
    pub fn accept_failure(
        &mut self,
        kind: String,
        code: Option<f64>,
        connection_held: Option<bool>,
        now_ms: f64,
    ) -> Result<()> {
        let failure = discovery::SdkFailure::from_wire(&self.server, &kind, code, connection_held).map_err(invalid)?;
        self.accept(failure.outcome(), now_ms)
    }

    /// The server answered with a JSON-RPC error (only its code is used).
    #[napi]
    pub fn accept_rpc_error(&mut self, code: i64, now_ms: f64) -> Result<()> {
        self.accept(Outcome::RpcError { code }, now_ms)
    }

    /// The host's client refused the result's shape.
    #[napi]
    pub fn accept_malformed(&mut self, now_ms: f64) -> Result<()> {
        self.accept(Outcome::Malformed, now_ms)
    }

    /// The transport failed (closed, send error).
    #[napi]
    pub fn accept_transport_error(&mut self, now_ms: f64) -> Result<()> {
        self.accept(Outcome::Transport, now_ms)
    }

    /// The host's timeout on the in-flight request (given `remaining(now)`) fired.
    #[napi]
    pub fn accept_timeout(&mut self, now_ms: f64) -> Result<()> {
        self.accept(Outcome::TimedOut, now_ms)
    }

    /// The listing of a complete traversal, or throws the error that ended it. The pager cannot
    /// be used afterwards.
    #[napi]
    pub fn finish(&mut self) -> Result<NativeListing> {
        match self.inner.take() {
            Some(Paging::One(pager)) => pager.finish().map(|inner| NativeListing { inner }).map_err(discovery_error),
            Some(pair) => {
                self.inner = Some(pair);
                Err(discovery_error(discovery::DiscoveryError::InvalidState {
                    server: self.server.clone(),
                    reason: "a pair is handed back to its refresher (traversed), not finished",
                }))
            }
            None => Err(self.finished()),
        }
    }

    /// The diagnostics so far as JSON text (also after a failure, for telemetry).
    #[napi]
    pub fn diagnostics(&self) -> Result<String> {
        let diagnostics = self.pager()?.diagnostics().cloned().unwrap_or_default();
        Ok(serde_json::to_string(&diagnostics).expect("diagnostics always serialize"))
    }

    fn pager(&self) -> Result<&Paging> {
        self.inner.as_ref().ok_or_else(|| self.finished())
    }

    /// The pair this pager performs, taken (for `NativeRefresher.traversed`).
    pub(crate) fn take_pair(&mut self) -> Result<PairTraversal> {
        match self.inner.take() {
            Some(Paging::Pair(pair)) => Ok(pair),
            other => {
                self.inner = other;
                Err(discovery_error(discovery::DiscoveryError::InvalidState {
                    server: self.server.clone(),
                    reason: "not a refresher's pair (Pager.pair), or already handed back",
                }))
            }
        }
    }

    fn accept(&mut self, outcome: Outcome<'_>, now_ms: f64) -> Result<()> {
        let now = instant(&self.server, now_ms)?;
        let pager = self.inner.as_mut().ok_or_else(|| finished(&self.server))?;
        pager.handle_outcome(outcome, now).map_err(discovery_error)
    }

    fn finished(&self) -> Error<Code> {
        finished(&self.server)
    }
}

fn finished(server: &str) -> Error<Code> {
    Error::new(Code("invalid_state"), format!("server \"{server}\": pager used out of order: already finished"))
}

/// A complete traversal's listing, kept in Rust: a catalog commit takes it as is.
#[napi]
pub struct NativeListing {
    inner: discovery::Listing,
}

#[napi]
impl NativeListing {
    /// The listing as JSON text (`{kind, server, items, support, ttlMs?, cacheScope?, diagnostics}`).
    #[napi(ts_return_type = "string")]
    pub fn to_json(&self) -> JsonText {
        JsonText(self.inner.to_json())
    }

    /// The listing as the parts `lib/convert.ts` assembles (`convert::listing`).
    #[napi]
    pub fn to_parts(&mut self) -> convert::listing::ListingParts {
        convert::listing::parts(&mut self.inner)
    }
}

fn catalog_error(e: CatalogError) -> Error<Code> {
    Error::new(Code(e.code().as_str()), e.to_string())
}

fn tool_error(e: ToolError) -> Error<Code> {
    Error::new(Code(e.code().as_str()), e.to_string())
}

/// Every stable error code, in the order of `docs/errors.md`.
#[napi]
pub fn error_codes() -> Vec<&'static str> {
    mcplens::ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}

/// The core's per-server catalog (see `mcplens::catalog`): the state its refresh machine keeps
/// (one [`refresher::NativeRefresher`] per catalog) and the reads every host answers from.
#[napi]
pub struct NativeCatalog {
    /// The one machine that owns the catalog's state; the refresher shares it (one driver).
    machine: Arc<catalog::SharedRefresher>,
    /// The read tool's settings.
    read: tool::ReadConfig,
    /// The completion tool's settings.
    complete: tool::CompleteConfig,
}

impl NativeCatalog {
    fn lock(&self) -> MutexGuard<'_, catalog::Refresher> {
        self.machine.lock() // JS is single-threaded: it is never contended
    }
}

#[napi]
impl NativeCatalog {
    /// An empty catalog; `configJson`: the refresher's settings `{retryBaseMs, retryMaxMs,
    /// minTtlMs, shrinkMinItems}`, `readJson`: the read tool's `{anyUri, maxOutputChars,
    /// timeoutMs}`, `completeJson`: the completion tool's `{maxOutputChars, timeoutMs}` (missing
    /// keys take the defaults).
    #[napi(constructor)]
    pub fn new(config_json: Option<String>, read_json: Option<String>, complete_json: Option<String>) -> Result<Self> {
        let config: catalog::RefreshConfig = match config_json.as_deref() {
            None => catalog::RefreshConfig::default(),
            Some(text) => serde_json::from_str(text).map_err(|_| {
                invalid_argument("", "refresh options must be {retryBaseMs, retryMaxMs, minTtlMs, shrinkMinItems}")
            })?,
        };
        config.validate().map_err(|why| invalid_argument("", &why.to_string()))?;
        let machine = Arc::new(catalog::SharedRefresher::new(config));
        let read = read_json.as_deref().map_or(Ok(tool::ReadConfig::default()), tool::ReadConfig::from_json);
        let complete =
            complete_json.as_deref().map_or(Ok(tool::CompleteConfig::default()), tool::CompleteConfig::from_json);
        Ok(NativeCatalog { machine, read: read.map_err(tool_error)?, complete: complete.map_err(tool_error)? })
    }

    /// The resource tools to offer the model now: three while a server declares `resources`, and
    /// the completion tool too while a server offers completion.
    #[napi]
    pub fn visible_tools(&self) -> Vec<&'static str> {
        self.lock().catalog().visible_tools().to_vec()
    }

    /// Catalog-wide change counter: compare it with the last value seen to learn of a change.
    #[napi]
    pub fn generation(&self) -> f64 {
        self.lock().catalog().generation() as f64
    }

    /// The registered servers, in registration order.
    #[napi]
    pub fn servers(&self) -> Vec<String> {
        self.lock().catalog().servers()
    }

    /// `server`'s status at `nowMs`, as JSON text.
    #[napi]
    pub fn status(&self, server: String, now_ms: f64) -> Result<String> {
        let now = instant(&server, now_ms)?;
        let status = self.lock().catalog().status(&server, now).map_err(catalog_error)?;
        Ok(serde_json::to_string(&status).expect("a status always serializes"))
    }

    /// Would a request for a current listing of `server` traverse at `nowMs`?
    #[napi]
    pub fn needs_refresh(&self, server: String, now_ms: f64) -> Result<bool> {
        let now = instant(&server, now_ms)?;
        Ok(self.lock().catalog().needs_refresh(&server, now))
    }

    /// Cached templates (all servers, or one) as JSON text.
    #[napi(ts_return_type = "string")]
    pub fn templates(&self, server: Option<String>) -> Result<JsonText> {
        let templates = self.lock().catalog().templates(server.as_deref()).map_err(catalog_error)?;
        Ok(JsonText(serde_json::to_string(&templates).expect("templates always serialize")))
    }

    /// Cached resources (all servers, or one) as JSON text.
    #[napi(ts_return_type = "string")]
    pub fn resources(&self, server: Option<String>) -> Result<JsonText> {
        let resources = self.lock().catalog().resources(server.as_deref()).map_err(catalog_error)?;
        Ok(JsonText(serde_json::to_string(&resources).expect("resources always serialize")))
    }
}

/// Does a server's `capabilities` object (JSON text) declare `resources`?
#[napi]
pub fn has_resources_capability(capabilities_json: String) -> bool {
    discovery::has_resources_capability(&capabilities_json)
}

/// Is a client initialized (its server's capabilities as JSON text; `null`: not yet), and does its
/// server declare `resources`? An `invalid_argument` error when not initialized.
#[napi]
pub fn initialized(server: String, capabilities_json: String) -> Result<bool> {
    discovery::initialized(&server, Some(&capabilities_json)).map_err(discovery_error)
}

/// The message of a misuse (`session_not_entered`, `not_an_sdk_client`) about
/// `server` (`''`: none): the core's `invalid_argument` text.
#[napi]
pub fn misuse_message(misuse: String, server: String) -> Result<String> {
    let m = parse_wire_name(&server, "misuse", &misuse).map_err(invalid)?;
    Ok(InvalidArgument::misuse(&server, m).to_string())
}

/// The version of the core (one version for every mcplens package).
#[napi]
pub fn core_version() -> &'static str {
    mcplens::VERSION
}
