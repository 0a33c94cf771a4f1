//! The tools that ask a server for Node (`mcplens::tool::ServerCall`: the read, the completion):
//! one call, sans-IO, with the same `remaining`/`accept*` calls as the `Pager` so the facade sends
//! it the same way; the tools' specs by name; either listing tool by name. Every rule is the core's.

use mcplens::discovery::{Fetched, Outcome, SdkFailure};
use mcplens::tool::{self, CallConfig, CompleteConfig, ReadConfig, ServerCall};
use napi_derive::napi;

use crate::{instant, tool_error, NativeCatalog, Result};

/// One model call of a tool that asks a server (`ReadMcpResourceTool`,
/// `CompleteMcpResourceTemplateTool`), validated against the catalog.
#[napi]
pub struct NativeToolCall {
    inner: ServerCall,
    fetched: Option<Fetched>,
}

#[napi]
impl NativeToolCall {
    /// Validates the model's input (JSON text) to tool `name` against `catalog` at `nowMs`, with
    /// that tool's settings (JSON text — the read's `{anyUri, maxOutputChars, timeoutMs}`, the
    /// completion's `{maxOutputChars, timeoutMs}`; missing keys take the defaults; none: the
    /// catalog's).
    #[napi(constructor)]
    pub fn new(
        catalog: &NativeCatalog,
        name: String,
        input_json: String,
        config_json: Option<String>,
        now_ms: f64,
    ) -> Result<Self> {
        let now = instant("", now_ms)?;
        let mut config = CallConfig { read: catalog.read, complete: catalog.complete };
        match config_json.as_deref() {
            Some(text) if name == tool::read::NAME => config.read = ReadConfig::from_json(text).map_err(tool_error)?,
            Some(text) => config.complete = CompleteConfig::from_json(text).map_err(tool_error)?,
            None => {}
        }
        let inner = ServerCall::new(catalog.lock().catalog(), &name, &input_json, &config, now).map_err(tool_error)?;
        Ok(NativeToolCall { inner, fetched: None })
    }

    /// The server to ask.
    #[napi(getter)]
    pub fn server(&self) -> String {
        self.inner.server().to_owned()
    }

    /// The JSON-RPC method (`resources/read`, `completion/complete`).
    #[napi(getter)]
    pub fn method(&self) -> String {
        self.inner.method().to_owned()
    }

    /// The request's params as JSON text.
    #[napi]
    pub fn params_json(&self) -> String {
        self.inner.params_json()
    }

    /// The JSON-RPC code accepted, if any.
    #[napi(getter)]
    pub fn rpc_code(&self) -> Option<i64> {
        match self.fetched {
            Some(Fetched::RpcError(code)) => Some(code),
            _ => None,
        }
    }

    /// Milliseconds the host may still wait for the answer at `nowMs`.
    #[napi]
    pub fn remaining(&self, now_ms: f64) -> Result<f64> {
        Ok(self.inner.remaining(instant(self.inner.server(), now_ms)?).as_secs_f64() * 1000.0)
    }

    /// The result, as JSON text.
    #[napi]
    pub fn accept_page(&mut self, page: String, _now_ms: f64) {
        self.fetched = Some(Fetched::Page(page));
    }

    /// What the SDK reported for the request instead of a result (`kind`: `error_answer`,
    /// `sdk_error`, `schema_refused`, `lost`), classified by the core (`SdkFailure`).
    #[napi]
    pub fn accept_failure(
        &mut self,
        kind: String,
        code: Option<f64>,
        connection_held: Option<bool>,
        _now_ms: f64,
    ) -> Result<()> {
        let failure =
            SdkFailure::from_wire(self.inner.server(), &kind, code, connection_held).map_err(crate::invalid)?;
        self.fetched = Some(failure.outcome().to_fetched());
        Ok(())
    }

    /// A JSON-RPC error answer (only the code is kept).
    #[napi]
    pub fn accept_rpc_error(&mut self, code: i64, _now_ms: f64) {
        self.fetched = Some(Fetched::RpcError(code));
    }

    /// The host's client refused the result's shape.
    #[napi]
    pub fn accept_malformed(&mut self, _now_ms: f64) {
        self.fetched = Some(Fetched::Malformed);
    }

    /// The transport failed (or no connection is attached).
    #[napi]
    pub fn accept_transport_error(&mut self, _now_ms: f64) {
        self.fetched = Some(Fetched::Transport);
    }

    /// The host's timeout (`remaining`) fired.
    #[napi]
    pub fn accept_timeout(&mut self, _now_ms: f64) {
        self.fetched = Some(Fetched::TimedOut);
    }

    /// The model's output for what was accepted (nothing accepted: a transport failure).
    #[napi]
    pub fn finish(&self) -> Result<String> {
        self.inner.finish(self.fetched.as_ref().map_or(Outcome::Transport, Fetched::as_outcome)).map_err(tool_error)
    }
}

/// Does the resource tool `name` ask a server (a `ToolCall`)? The listings do not.
#[napi]
pub fn asks_server(name: String) -> bool {
    ServerCall::asks_server(&name)
}

/// The spec of the resource tool named `name` as JSON text, or `null` for any other name.
#[napi]
pub fn tool_spec(name: String) -> Option<String> {
    tool::spec_of(&name).map(|s| s.to_json())
}

/// Every resource tool's spec, in the core's order (`mcplens::tool::specs`), as JSON text.
#[napi]
pub fn tool_specs() -> Vec<String> {
    tool::specs().iter().map(tool::ToolSpec::to_json).collect()
}

/// Throws the core's refusal of model input that cannot be JSON (`mcplens::tool::not_json`).
#[napi]
pub fn tool_input_not_json() -> Result<()> {
    Err(tool_error(tool::not_json()))
}

/// Either listing tool by name on the model's input (JSON text): the output JSON text.
#[napi]
pub fn call_listing_tool(catalog: &NativeCatalog, name: String, input_json: String) -> Result<String> {
    let input = tool::Input::from_json(&input_json).map_err(tool_error)?;
    tool::render_listing(catalog.lock().catalog(), &name, &input).map_err(tool_error)
}

/// The servers a call of the resource tool `name` on the model's input (JSON text) must see current
/// before it answers (`mcplens::tool::current_before`): `Catalog.callTool` makes them current first.
#[napi]
pub fn current_before(catalog: &NativeCatalog, name: String, input_json: String) -> Vec<String> {
    tool::current_before(catalog.lock().catalog(), &name, &input_json)
}

/// MCP's names the facade uses as they are (`mcplens::protocol`): written once, in the core.
#[napi(object)]
pub struct Protocol {
    /// `resources/read`.
    pub resources_read: String,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: String,
    /// `subscriptions/listen`.
    pub subscriptions_listen: String,
    /// `notifications/subscriptions/acknowledged`.
    pub subscriptions_acknowledged: String,
    /// The `_meta` key of a notification's `subscriptions/listen` stream.
    pub subscription_id: String,
    /// The 2026-07-28 HTTP header naming a request's method.
    pub header_mcp_method: String,
}

/// MCP's names, from the core.
#[napi]
pub fn protocol() -> Protocol {
    use mcplens::protocol as p;
    Protocol {
        resources_read: p::RESOURCES_READ.into(),
        resources_list_changed: p::RESOURCES_LIST_CHANGED.into(),
        subscriptions_listen: p::SUBSCRIPTIONS_LISTEN.into(),
        subscriptions_acknowledged: p::SUBSCRIPTIONS_ACKNOWLEDGED.into(),
        subscription_id: p::SUBSCRIPTION_ID.into(),
        header_mcp_method: p::HEADER_MCP_METHOD.into(),
    }
}
