//! Node binding for mcplens (napi-rs 3): the core's sans-IO discovery [`Pager`] as a JS class.
//!
//! This crate converts values and nothing else. Pages, limits, listings and diagnostics cross
//! the boundary as JSON text; times cross as milliseconds of the host's monotonic clock
//! (`performance.now()`). Errors are thrown as JS `Error`s whose `code` is the core's stable
//! code (`deadline`, `server_error`, …); the facade in `lib/` rethrows them as `McplensError`.
#![deny(clippy::all)]

use std::time::Duration;

use mcplens::discovery::{self, DiscoveryError, Limits, ListKind, Outcome};
use napi::bindgen_prelude::Error;
use napi_derive::napi;

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
    Error::new(Code(e.code()), e.to_string())
}

fn invalid_argument(server: &str, reason: &str) -> Error<Code> {
    Error::new(Code("invalid_argument"), format!("server \"{server}\": invalid argument: {reason}"))
}

/// Host milliseconds (any epoch) → the core's monotonic `Duration`. Negative, NaN and
/// infinite readings are refused: they can only be a host bug.
fn instant(server: &str, now_ms: f64) -> Result<Duration> {
    if !now_ms.is_finite() || now_ms < 0.0 {
        return Err(invalid_argument(server, "`now` must be a finite, non-negative number of milliseconds"));
    }
    Ok(Duration::from_nanos((now_ms * 1e6).round() as u64))
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
/// server.
///
/// Call order: `new Pager(…)` → loop { `nextRequest()` → send it, waiting at most
/// `remaining(now)` ms → one `accept*` call } → `finish()`. Any failure ends the traversal.
#[napi]
pub struct Pager {
    /// `None` once `finish` has consumed the core pager.
    inner: Option<discovery::Pager>,
    server: String,
}

#[napi]
impl Pager {
    /// Starts a traversal. `kind` is `"resources"` or `"resource_templates"`; `limitsJson` is the
    /// JSON text of `{maxPages, maxItems, maxBytes, deadlineMs}` (missing keys take the defaults);
    /// `nowMs` is the host's monotonic clock in milliseconds. With `resourcesCapability` false no
    /// request is made and the listing is empty.
    #[napi(constructor)]
    pub fn new(
        kind: String,
        server: String,
        resources_capability: bool,
        limits_json: Option<String>,
        now_ms: f64,
    ) -> Result<Self> {
        let kind: ListKind = serde_json::from_value(serde_json::Value::String(kind))
            .map_err(|_| invalid_argument(&server, "`kind` must be \"resources\" or \"resource_templates\""))?;
        let limits = match limits_json.as_deref() {
            None => Limits::default(),
            Some(text) => serde_json::from_str::<Limits>(text).map_err(|_| {
                invalid_argument(
                    &server,
                    "limits must be {maxPages, maxItems, maxBytes, deadlineMs} with non-negative integers",
                )
            })?,
        };
        let now = instant(&server, now_ms)?;
        let inner =
            discovery::Pager::new(kind, server.clone(), resources_capability, limits, now).map_err(discovery_error)?;
        Ok(Pager { inner: Some(inner), server })
    }

    /// The server's name.
    #[napi(getter)]
    pub fn server(&self) -> String {
        self.server.clone()
    }

    /// The next request to send, or `null` when the traversal is over (call `finish`).
    #[napi]
    pub fn next_request(&mut self) -> Option<Request> {
        let request = self.inner.as_mut()?.next_request()?;
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
        self.inner.as_ref().is_none_or(discovery::Pager::is_done)
    }

    /// The JSON-RPC `result` of the request, as JSON text exactly as the server sent it.
    #[napi]
    pub fn accept_page(&mut self, page: String, now_ms: f64) -> Result<()> {
        self.accept(Outcome::Page(&page), now_ms)
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

    /// The listing of a complete traversal as JSON text, or throws the error that ended it.
    /// The pager cannot be used afterwards.
    #[napi]
    pub fn finish(&mut self) -> Result<String> {
        let pager = self.inner.take().ok_or_else(|| self.finished())?;
        pager.finish().map(|listing| listing.to_json()).map_err(discovery_error)
    }

    /// The diagnostics so far as JSON text (also after a failure, for telemetry).
    #[napi]
    pub fn diagnostics(&self) -> Result<String> {
        let diagnostics = self.pager()?.diagnostics();
        Ok(serde_json::to_string(diagnostics).expect("diagnostics always serialize"))
    }

    fn pager(&self) -> Result<&discovery::Pager> {
        self.inner.as_ref().ok_or_else(|| self.finished())
    }

    fn accept(&mut self, outcome: Outcome<'_>, now_ms: f64) -> Result<()> {
        let now = instant(&self.server, now_ms)?;
        let pager = self.inner.as_mut().ok_or_else(|| finished(&self.server))?;
        pager.accept(outcome, now).map_err(discovery_error)
    }

    fn finished(&self) -> Error<Code> {
        finished(&self.server)
    }
}

fn finished(server: &str) -> Error<Code> {
    Error::new(Code("invalid_state"), format!("server \"{server}\": pager used out of order: already finished"))
}

/// Does a server's `capabilities` object (JSON text) declare `resources`?
#[napi]
pub fn has_resources_capability(capabilities_json: String) -> bool {
    discovery::has_resources_capability(&capabilities_json)
}

/// The version of the core (one version for every mcplens package).
#[napi]
pub fn core_version() -> &'static str {
    mcplens::VERSION
}
