//! MCP's names that every front door uses as they are: methods, notifications, `_meta` keys and
//! the 2026-07-28 HTTP routing headers. Written once here; the bindings export them (Python
//! `_core.PROTOCOL`, Node `protocol`) rather than retype them.

/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";

/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";

/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = crate::discovery::METHOD_NOT_FOUND;

/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";

/// `subscriptions/listen` (2026-07-28).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// `notifications/subscriptions/acknowledged` (2026-07-28): a listen stream is open.
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The `_meta` key naming the `subscriptions/listen` request whose stream carries a notification.
pub const SUBSCRIPTION_ID: &str = crate::discovery::meta::SUBSCRIPTION_ID;

pub use crate::discovery::SDK_CONNECTION_CLOSED;

/// The 2026-07-28 HTTP header naming a request's method (lower case, as `http` header names are).
pub const HEADER_MCP_METHOD: &str = "mcp-method";

/// The 2026-07-28 HTTP header naming a request's tool, prompt or resource.
pub const HEADER_MCP_NAME: &str = "mcp-name";

/// The 2026-07-28 HTTP header naming a request's protocol version (lower case).
pub const HEADER_MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The routing headers a 2026-07-28 request carries over HTTP, as that revision's transport asks:
/// [`HEADER_MCP_PROTOCOL_VERSION`] (its envelope's), [`HEADER_MCP_METHOD`], and [`HEADER_MCP_NAME`]
/// for `tools/call` and `prompts/get` (the name) and `resources/read` (the URI).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Routing {
    /// The envelope's `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// The request's method.
    pub method: String,
    /// The name or URI, as the header carries it ([`header_value`]).
    pub name: Option<String>,
}

/// The routing headers of one JSON-RPC message POSTed (a request or a notification with the
/// envelope): `None` for a message of an earlier revision (no envelope), an answer, or text that
/// is not a message. Each value is as a
/// header carries it ([`header_value`]); `Mcp-Param-*` headers (arguments a tool's schema marks
/// `x-mcp-header`) are not derived.
pub fn routing(message: &[u8]) -> Option<Routing> {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta")]
        meta: Meta<'a>,
        #[serde(borrow, default)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default)]
        uri: Option<std::borrow::Cow<'a, str>>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion")]
        protocol_version: std::borrow::Cow<'a, str>,
    }
    let r = serde_json::from_slice::<Request<'_>>(message).ok()?;
    let name = match r.method.as_ref() {
        "tools/call" | "prompts/get" => r.params.name,
        RESOURCES_READ => r.params.uri,
        _ => None,
    };
    Some(Routing {
        protocol_version: header_value(&r.params.meta.protocol_version),
        method: header_value(&r.method),
        name: name.map(|n| header_value(&n)),
    })
}

/// A value as a 2026-07-28 header carries it: verbatim when printable ASCII without leading or
/// trailing spaces (and not itself shaped like the wrapping), else `=?base64?…?=` (standard
/// alphabet, padded) over its UTF-8.
pub fn header_value(value: &str) -> String {
    use base64::Engine as _;
    let printable = value.bytes().all(|b| (0x20..0x7f).contains(&b)) && value.trim() == value;
    let wrapped_shape = value.starts_with("=?base64?") && value.ends_with("?=");
    if printable && !wrapped_shape {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2026_07_28_request_has_routing_headers() {
        let read = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"note://ä b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let r = routing(read.as_bytes()).unwrap();
        assert_eq!((r.protocol_version.as_str(), r.method.as_str()), ("2026-07-28", RESOURCES_READ));
        assert_eq!(r.name.as_deref(), Some("=?base64?bm90ZTovL8OkIGI=?="));
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let r = routing(call.as_bytes()).unwrap();
        assert_eq!((r.method.as_str(), r.name.as_deref()), ("tools/call", Some("echo")));
        let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(routing(list.as_bytes()).unwrap().name, None);
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(routing(progress.as_bytes()).unwrap().method, "notifications/progress");
        // Earlier revisions (no envelope), answers and broken text get none.
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            "{",
        ] {
            assert_eq!(routing(line.as_bytes()), None, "{line}");
        }
    }

    #[test]
    fn header_values_are_wrapped_when_not_printable_ascii() {
        assert_eq!(header_value("echo"), "echo");
        assert_eq!(header_value(" x"), "=?base64?IHg=?=");
        assert_eq!(header_value("x\n"), "=?base64?eAo=?=");
        assert_eq!(header_value("=?base64?eA==?="), "=?base64?PT9iYXNlNjQ/ZUE9PT89?=");
    }
}
