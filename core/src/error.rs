//! [`ErrorCode`]: the one table of stable codes every error type of the crate reports
//! (`docs/errors.md`). Codes travel as this value — from a traversal to the refresher, into the
//! catalog's failures — and become text only at a language boundary or on the wire.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A stable snake_case error code, the same in Rust, Python and Node.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order of `docs/errors.md`.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code's text (its wire form).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)*
                }
            }
        }

        impl FromStr for ErrorCode {
            type Err = UnknownCode;

            fn from_str(s: &str) -> Result<ErrorCode, UnknownCode> {
                match s {
                    $($name => Ok(ErrorCode::$variant),)*
                    _ => Err(UnknownCode),
                }
            }
        }
    };
}

codes! {
    /// A page broke the result schema (structure, cursor type, `resultType`, cursor length).
    MalformedResult = "malformed_result",
    /// `nextCursor` repeated one already sent (revisions before 2026-07-28, or `repeatedCursors: fail`).
    RepeatedCursor = "repeated_cursor",
    /// A traversal needed more requests than `maxPages`.
    PageLimit = "page_limit",
    /// A traversal saw more items than `maxItems`.
    ItemLimit = "item_limit",
    /// The projected bytes passed `maxBytes`.
    ByteLimit = "byte_limit",
    /// A traversal (or a request in it) ran past its deadline.
    Deadline = "deadline",
    /// The server answered with a JSON-RPC error (the code is kept).
    ServerError = "server_error",
    /// The transport failed (or no connection is attached).
    TransportError = "transport_error",
    /// A message (an answer, a request) was longer than the bound on one message (`mcplens proxy
    /// --max-message-bytes`): dropped unread.
    MessageTooLarge = "message_too_large",
    /// An argument the caller passed is not valid.
    InvalidArgument = "invalid_argument",
    /// A state machine was called out of order.
    InvalidState = "invalid_state",
    /// The server is not in the catalog.
    UnknownServer = "unknown_server",
    /// A tool's output would pass its cap.
    OutputTooLarge = "output_too_large",
    /// The read tool's URI is neither a resource the server listed nor fits one of its templates;
    /// the completion tool's URI template is not one the server listed.
    UnlistedUri = "unlisted_uri",
    /// The server does not offer what was asked (completion: it does not declare `completions`,
    /// or answered -32601).
    NotOffered = "not_offered",
    /// Not a valid RFC 6570 URI template.
    InvalidUriTemplate = "invalid_uri_template",
    /// A value cannot be expanded into its variable.
    InvalidValue = "invalid_value",
    /// A prefix modifier on a composite value.
    PrefixOnComposite = "prefix_on_composite",
    /// Template matching gave up (too many ways to split the URI).
    MatchLimit = "match_limit",
    /// A file could not be read or written.
    IoError = "io_error",
    /// A wait (flush, shutdown) ran out of time.
    Timeout = "timeout",
    /// A user hook (redaction, identify) failed.
    HookFailed = "hook_failed",
    /// An exporter gave up on a batch.
    ExportFailed = "export_failed",
    /// An exporter panicked.
    ExporterPanicked = "exporter_panicked",
}

impl ErrorCode {
    /// A failure that may pass by itself (retried on a timer by the refresher).
    pub const fn is_transient(self) -> bool {
        matches!(self, ErrorCode::TransportError | ErrorCode::Deadline | ErrorCode::ServerError)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// An argument a host's caller passed is not valid (code `invalid_argument`): the one message shape
/// every binding raises for its own argument checks — `server "docs": invalid argument: <reason>`,
/// or `invalid argument: <reason>` when the call names no server (then the error has no server:
/// `None` in Python, `undefined` in Node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidArgument {
    /// The server the call named, if any.
    pub server: Option<String>,
    /// What is wrong (fixed text, never the caller's value).
    pub reason: String,
}

/// What a host's caller handed a binding that it cannot use: the reasons of those
/// `invalid_argument` errors ([`InvalidArgument::misuse`]), the same text in every language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Misuse {
    /// A session the binding's SDK must have entered (Python: `async with`) before it is used.
    SessionNotEntered,
    /// `watch` over an object that is not an SDK client (nothing to chain notifications onto).
    NotAnSdkClient,
}

impl Misuse {
    /// The reason, as the error message gives it.
    pub const fn reason(self) -> &'static str {
        match self {
            Misuse::SessionNotEntered => "the session must be entered",
            Misuse::NotAnSdkClient => {
                "watch needs an MCP SDK client (1.x or v2; no notification handler map to chain onto)"
            }
        }
    }
}

impl InvalidArgument {
    /// The error of a [`Misuse`] about `server` (`""`: the call names no server).
    pub fn misuse(server: &str, misuse: Misuse) -> InvalidArgument {
        InvalidArgument::new(server, misuse.reason())
    }

    /// `reason` about `server` (`""`: the call names no server).
    pub fn new(server: &str, reason: impl Into<String>) -> InvalidArgument {
        InvalidArgument { server: (!server.is_empty()).then(|| server.to_owned()), reason: reason.into() }
    }

    /// `invalid_argument`.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgument
    }
}

/// A core enum a host passes by its wire name (`"list_changed"`, `"refresh"`, `"resources"`): every
/// value, so that a refusal can list them. Parsed by [`parse_wire_name`], shown by [`wire_name`].
pub trait WireName: Serialize + serde::de::DeserializeOwned + Copy + 'static {
    /// Every value, in the order a refusal lists them.
    const ALL: &'static [Self];
}

impl WireName for Misuse {
    const ALL: &'static [Misuse] = &[Misuse::SessionNotEntered, Misuse::NotAnSdkClient];
}

/// A value's wire name: its serde name (`"resource_templates"`, `"no_capability"`, ...).
pub fn wire_name<T: Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// The value a host named by `text` for its argument `argument` in a call about `server` (`""`: the
/// call names none); else the `invalid_argument` that lists every name — the same message in every
/// language, never the host's text: `` `reason` must be "list_changed", ... or "other" ``.
pub fn parse_wire_name<T: WireName>(server: &str, argument: &str, text: &str) -> Result<T, InvalidArgument> {
    T::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(text)).map_err(|_| {
        let names: Vec<String> = T::ALL.iter().map(|v| format!("\"{}\"", wire_name(*v))).collect();
        let (last, rest) = names.split_last().expect("an enum has a value");
        let list = if rest.is_empty() { last.clone() } else { format!("{} or {last}", rest.join(", ")) };
        InvalidArgument::new(server, format!("`{argument}` must be {list}"))
    })
}

impl fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.server {
            Some(server) => write!(f, "server \"{server}\": invalid argument: {}", self.reason),
            None => write!(f, "invalid argument: {}", self.reason),
        }
    }
}

impl std::error::Error for InvalidArgument {}

/// A text that is not one of the codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an mcplens error code")]
pub struct UnknownCode;

#[cfg(test)]
mod tests {
    use super::{parse_wire_name, wire_name, ErrorCode, Misuse, WireName};
    use crate::catalog::{Reason, Want};
    use crate::ListKind;

    fn round_trips<T: WireName + PartialEq + std::fmt::Debug>() {
        let mut seen = std::collections::HashSet::new();
        for &v in T::ALL {
            let name = wire_name(v);
            assert!(seen.insert(name.clone()), "{name} twice");
            assert_eq!(parse_wire_name::<T>("", "x", &name), Ok(v));
        }
    }

    #[test]
    fn wire_names_parse_back_and_a_refusal_lists_them_without_the_text() {
        round_trips::<Reason>();
        round_trips::<Want>();
        round_trips::<ListKind>();
        round_trips::<Misuse>();
        round_trips::<crate::discovery::RepeatedCursors>();
        let e = parse_wire_name::<Reason>("docs", "reason", "Other\u{202e}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "server \"docs\": invalid argument: `reason` must be \"list_changed\", \"connection_closed\", \
             \"configuration_changed\", \"disabled\" or \"other\""
        );
        let e = parse_wire_name::<ListKind>("", "kind", "tools").unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: `kind` must be \"resources\" or \"resource_templates\"");
        assert_eq!(e.server, None);
    }

    #[test]
    fn every_code_round_trips_through_its_text_and_serde() {
        for &code in ErrorCode::ALL {
            assert_eq!(code.as_str().parse::<ErrorCode>(), Ok(code));
            assert_eq!(serde_json::to_string(&code).unwrap(), format!("\"{code}\""));
        }
        assert!("no_such_code".parse::<ErrorCode>().is_err());
        assert_eq!(ErrorCode::ALL.len(), 24);
    }
}
