//! What the resource tools share: their spec's shape, their errors and the output cap.

use serde::Serialize;
use serde_json::{json, Value};

use crate::catalog::CatalogError;
use crate::error::ErrorCode;

/// The cap on the rendered output, in Unicode scalar values.
pub const MAX_OUTPUT_CHARS: usize = 100_000;

/// The tool's description and schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// [`NAME`](super::NAME), or another tool's name.
    pub name: &'static str,
    /// [`DESCRIPTION`](super::DESCRIPTION), or another tool's description.
    pub description: &'static str,
    /// The JSON schema of the input.
    pub input_schema: Value,
    /// The same schema in the strict form some hosts require (OpenAI's strict function calling,
    /// the OpenAI Agents SDK's default): every property listed in `required`, each optional one
    /// typed to also accept `null` (which the tool reads as absent).
    pub strict_input_schema: Value,
    /// MCP tool annotations (`readOnlyHint: true`).
    pub annotations: Value,
    /// Hosts that defer rarely used tools (loaded on demand) should defer this one.
    pub deferred: bool,
}

impl ToolSpec {
    pub(crate) fn new(
        name: &'static str,
        description: &'static str,
        input_schema: Value,
        title: &str,
        deferred: bool,
    ) -> ToolSpec {
        ToolSpec {
            name,
            description,
            strict_input_schema: strict(&input_schema),
            input_schema,
            annotations: json!({"title": title, "readOnlyHint": true, "openWorldHint": false}),
            deferred,
        }
    }

    /// The spec as compact JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("the spec always serializes")
    }
}

/// `schema`'s strict form: every property required, the optional ones also `null`.
fn strict(schema: &Value) -> Value {
    let mut out = schema.clone();
    let required: Vec<Value> = schema["required"].as_array().cloned().unwrap_or_default();
    if let Some(props) = out["properties"].as_object_mut() {
        for (key, prop) in props.iter_mut() {
            if !required.iter().any(|r| r == key.as_str()) {
                if let Some(t) = prop["type"].as_str() {
                    prop["type"] = json!([t, "null"]);
                }
            }
        }
        let all: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        out["required"] = Value::Array(all);
    }
    out
}

/// A tool's settings from JSON text (`null`: the defaults), or `invalid_argument` saying `expected`;
/// the caller then checks their bounds.
pub(crate) fn settings_from_json<T: serde::de::DeserializeOwned + Default>(
    text: &str,
    expected: &str,
) -> Result<T, ToolError> {
    let settings: Option<T> =
        serde_json::from_str(text).map_err(|_| ToolError::InvalidArgument { reason: expected.to_owned() })?;
    Ok(settings.unwrap_or_default())
}

/// Tool errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The `server` filter names no server of the catalog.
    #[error(transparent)]
    UnknownServer(CatalogError),
    /// The rendered output would exceed [`MAX_OUTPUT_CHARS`].
    #[error("The listing is {chars} characters, over the {max}-character limit. Filter by \"server\" or page with a smaller \"limit\" and \"offset\".")]
    OutputTooLarge {
        /// The size the output would have had.
        chars: usize,
        /// The cap.
        max: usize,
    },
    /// The input does not match the schema.
    #[error("invalid input: {reason}")]
    InvalidArgument {
        /// What is wrong.
        reason: String,
    },
    /// The read tool's URI is neither a resource the server listed nor fits one of its templates.
    #[error("The URI is not a resource server \"{server}\" listed, nor does it fit one of its resource templates. Read a URI from ListMcpResourcesTool, or fill in a template from ListMcpResourceTemplatesTool, of the same server.")]
    UnlistedUri {
        /// The server named.
        server: String,
    },
    /// The read tool's server has no listing to check the URI against: it was never listed, its
    /// listing failed with nothing kept, or it offers no resources.
    #[error("{}", no_listing_message(server, *status, failure.as_deref()))]
    NoListing {
        /// The server named.
        server: String,
        /// Its status when the read was refused (`unknown`, `failed` or `unsupported`).
        status: crate::catalog::Status,
        /// The listing's failure message (our own text), when it failed.
        failure: Option<String>,
    },
    /// Matching the read tool's URI against the server's templates gave up.
    #[error("Matching the URI against server \"{server}\"'s resource templates gave up (too many ways to split it). Read a URI from ListMcpResourcesTool, or a simpler filling of a template.")]
    MatchLimit {
        /// The server named.
        server: String,
    },
    /// The server answered the read with a JSON-RPC error (only its code is kept).
    #[error("Server \"{server}\" could not read the resource: JSON-RPC error {code}{}.", if *not_found { " (resource not found)" } else { "" })]
    ReadFailed {
        /// The server read from.
        server: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The code is the specification's "resource not found".
        not_found: bool,
    },
    /// The transport failed during the read (or no connection is attached).
    #[error("Server \"{server}\" could not be reached to read the resource (the transport failed).")]
    ReadTransport {
        /// The server read from.
        server: String,
    },
    /// The read took longer than its timeout.
    #[error("Server \"{server}\" did not answer the read within {} ms.", max.as_millis())]
    ReadDeadline {
        /// The server read from.
        server: String,
        /// The timeout.
        max: std::time::Duration,
    },
    /// The read's answer was longer than the bound on one message, and dropped unread.
    #[error("Server \"{server}\" answered the read with a message over {max_bytes} bytes, which was dropped (the bound is set with --max-message-bytes). Read a smaller resource.")]
    ReadTooLarge {
        /// The server read from.
        server: String,
        /// The bound, in bytes.
        max_bytes: usize,
    },
    /// The completion tool's server does not offer completion: it does not declare the
    /// `completions` capability, or it answered -32601.
    #[error("Server \"{server}\" does not offer completion of its resource templates. Fill the template from a resource it lists (ListMcpResourcesTool) instead.")]
    NotOffered {
        /// The server named.
        server: String,
    },
    /// The completion tool's URI template is not one the server listed.
    #[error("The URI template is not one server \"{server}\" listed. Give a template exactly as ListMcpResourceTemplatesTool lists it for that server.")]
    UnlistedTemplate {
        /// The server named.
        server: String,
    },
    /// The server answered the completion with a JSON-RPC error (only its code is kept).
    #[error("Server \"{server}\" could not complete the template's variable: JSON-RPC error {code}.")]
    CompleteFailed {
        /// The server asked.
        server: String,
        /// The JSON-RPC error code.
        code: i64,
    },
    /// The transport failed during the completion (or no connection is attached).
    #[error("Server \"{server}\" could not be reached to complete the template's variable (the transport failed).")]
    CompleteTransport {
        /// The server asked.
        server: String,
    },
    /// The completion took longer than its timeout.
    #[error("Server \"{server}\" did not answer the completion within {} ms.", max.as_millis())]
    CompleteDeadline {
        /// The server asked.
        server: String,
        /// The timeout.
        max: std::time::Duration,
    },
    /// The completion's answer was longer than the bound, and refused unread.
    #[error("Server \"{server}\" answered the completion with a message over {max_bytes} bytes, which was refused.")]
    CompleteTooLarge {
        /// The server asked.
        server: String,
        /// The bound, in bytes.
        max_bytes: usize,
    },
    /// The completion's result broke the schema.
    #[error("Server \"{server}\" answered the completion with a malformed result ({reason}).")]
    CompleteMalformed {
        /// The server asked.
        server: String,
        /// What was wrong (fixed text).
        reason: &'static str,
    },
    /// The read's result broke the schema.
    #[error("Server \"{server}\" answered the read with a malformed result ({reason}).")]
    ReadMalformed {
        /// The server read from.
        server: String,
        /// What was wrong (fixed text).
        reason: &'static str,
    },
}

impl ToolError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            ToolError::UnknownServer(e) => e.code(),
            ToolError::OutputTooLarge { .. } => ErrorCode::OutputTooLarge,
            ToolError::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            ToolError::UnlistedUri { .. } | ToolError::NoListing { .. } | ToolError::UnlistedTemplate { .. } => {
                ErrorCode::UnlistedUri
            }
            ToolError::NotOffered { .. } => ErrorCode::NotOffered,
            ToolError::CompleteFailed { .. } => ErrorCode::ServerError,
            ToolError::CompleteTransport { .. } => ErrorCode::TransportError,
            ToolError::CompleteDeadline { .. } => ErrorCode::Deadline,
            ToolError::CompleteMalformed { .. } => ErrorCode::MalformedResult,
            ToolError::CompleteTooLarge { .. } => ErrorCode::MessageTooLarge,
            ToolError::MatchLimit { .. } => ErrorCode::MatchLimit,
            ToolError::ReadFailed { .. } => ErrorCode::ServerError,
            ToolError::ReadTransport { .. } => ErrorCode::TransportError,
            ToolError::ReadDeadline { .. } => ErrorCode::Deadline,
            ToolError::ReadMalformed { .. } => ErrorCode::MalformedResult,
            ToolError::ReadTooLarge { .. } => ErrorCode::MessageTooLarge,
        }
    }

    /// The server the error is about: the read's, or the unknown one the input named.
    pub fn server(&self) -> Option<&str> {
        match self {
            ToolError::UnknownServer(e) => e.server(),
            ToolError::UnlistedUri { server }
            | ToolError::NoListing { server, .. }
            | ToolError::MatchLimit { server }
            | ToolError::ReadFailed { server, .. }
            | ToolError::ReadTransport { server }
            | ToolError::ReadDeadline { server, .. }
            | ToolError::ReadMalformed { server, .. }
            | ToolError::ReadTooLarge { server, .. }
            | ToolError::NotOffered { server }
            | ToolError::UnlistedTemplate { server }
            | ToolError::CompleteFailed { server, .. }
            | ToolError::CompleteTransport { server }
            | ToolError::CompleteDeadline { server, .. }
            | ToolError::CompleteTooLarge { server, .. }
            | ToolError::CompleteMalformed { server, .. } => Some(server),
            ToolError::OutputTooLarge { .. } | ToolError::InvalidArgument { .. } => None,
        }
    }

    /// The JSON-RPC code of a read the server refused.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            ToolError::ReadFailed { code, .. } | ToolError::CompleteFailed { code, .. } => Some(*code),
            _ => None,
        }
    }
}

fn no_listing_message(server: &str, status: crate::catalog::Status, failure: Option<&str>) -> String {
    use crate::catalog::Status;
    match (status, failure) {
        (Status::Unsupported, _) => format!("Server \"{server}\" offers no resources (it does not declare the resources capability)."),
        (_, Some(why)) => format!(
            "Server \"{server}\"'s resources could not be listed, so the URI cannot be checked against them. The listing failed: {why}"
        ),
        _ => format!(
            "Server \"{server}\" has no listing of its resources yet, so the URI cannot be checked against them. Try again once ListMcpResourcesTool lists the server."
        ),
    }
}
