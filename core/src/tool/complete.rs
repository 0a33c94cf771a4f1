//! `CompleteMcpResourceTemplateTool`: the model asks a server which values fit a variable of one of
//! its resource templates (MCP `completion/complete` with a `ref/resource` reference), bounded.
//!
//! Sans-IO, like [`ReadCall`](super::ReadCall): [`CompleteCall::new`] validates the model's input
//! against the catalog and the [`CompleteConfig`] (no request is made for input it refuses); the
//! host sends [`CompleteCall::METHOD`] with [`params_json`](CompleteCall::params_json) over the
//! server's connection, waits at most [`remaining`](CompleteCall::remaining), and hands what
//! happened to [`CompleteCall::finish`], which renders the model's output or the tool error:
//!
//! ```text
//! {"server":"docs","uriTemplate":"docs://{project}/{page}","variable":"page","values":["intro","install"],"total":12,"hasMore":true,"omitted":{"unsafe":1}}
//! ```
//!
//! - Only a server that declares the `completions` capability is asked, and only about a template
//!   it listed (as listed), one of that template's variables, with other variables of the same
//!   template as context. `-32601` is `not_offered`.
//! - What the server answers is as untrusted as the rest: at most [`MAX_VALUES`] values are kept
//!   (the rest cut and counted); a value that is not a string, is longer than
//!   [`MAX_VALUE_CHARS`], or that sanitizing would change is **dropped and counted**, never
//!   altered (an altered value would name another resource); `total` is kept only as a
//!   non-negative integer and `hasMore` only as a boolean (otherwise ignored and named under
//!   `ignored`); an answer over [`MAX_ANSWER_BYTES`] is refused whole.
//! - The output is one line of compact JSON within [`CompleteConfig::max_output_chars`]: values
//!   past the cap are cut from the end and counted.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ToolError, ToolSpec};
use crate::catalog::Catalog;
use crate::discovery::Outcome;
use crate::sanitize;

/// The completion tool's name.
pub const NAME: &str = crate::catalog::COMPLETE_TEMPLATE_TOOL;

/// The completion tool's description, shown to the model.
pub const DESCRIPTION: &str = "Suggests values for a variable of a resource template of a connected MCP server \
that offers completion (the template listing names those servers under \"completion\"). Give the server's name as \
\"server\", the template exactly as listed as \"uriTemplate\", the variable's name as \"variable\", what you have of \
its value so far as \"value\" (may be empty), and values already chosen for the template's other variables as \
\"arguments\". Returns JSON with the suggested \"values\" (at most 100), \"total\" and \"hasMore\" when the server \
says, and \"omitted\" counting values left out. Fill the template with a value and read it with ReadMcpResourceTool.";

/// The spec's limit on the values of one answer: the rest are cut and counted.
pub const MAX_VALUES: usize = 100;

/// The longest value kept, in Unicode scalar values (a longer one is dropped and counted).
pub const MAX_VALUE_CHARS: usize = 1024;

/// The longest answer read, in bytes (a longer one is refused whole: `message_too_large`).
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// How long a completion may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The default cap on the output, in Unicode scalar values.
pub const DEFAULT_OUTPUT_CHARS: usize = 10_000;

/// The completion tool's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CompleteConfig {
    /// The cap on the rendered output, in Unicode scalar values (default 10,000; 1,000 to 100,000).
    pub max_output_chars: usize,
    /// How long the completion may take (default 10 s; at most 600 s).
    #[serde(rename = "timeoutMs", with = "crate::millis")]
    pub timeout: Duration,
}

impl Default for CompleteConfig {
    fn default() -> CompleteConfig {
        CompleteConfig { max_output_chars: DEFAULT_OUTPUT_CHARS, timeout: DEFAULT_TIMEOUT }
    }
}

impl CompleteConfig {
    /// Checks the bounds: `maxOutputChars` from 1,000 to 100,000, `timeoutMs` from 1 to 600,000.
    pub fn validate(&self) -> Result<(), ToolError> {
        let reason = if !(1_000..=super::MAX_OUTPUT_CHARS).contains(&self.max_output_chars) {
            "maxOutputChars must be from 1000 to 100000"
        } else if self.timeout.is_zero() || self.timeout > super::read::MAX_TIMEOUT {
            "timeoutMs must be from 1 to 600000"
        } else {
            return Ok(());
        };
        Err(invalid(&format!("completion settings: {reason}")))
    }

    /// Parses and checks settings from JSON text (`{"maxOutputChars","timeoutMs"}`, each optional;
    /// `null` means the defaults).
    pub fn from_json(text: &str) -> Result<CompleteConfig, ToolError> {
        let expected = "completion settings: expected {maxOutputChars?: integer, timeoutMs?: integer}";
        let config: CompleteConfig = super::common::settings_from_json(text, expected)?;
        config.validate()?;
        Ok(config)
    }
}

/// The completion tool's spec.
pub fn spec() -> ToolSpec {
    let input_schema = serde_json::json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The server, as the listings name it."},
            "uriTemplate": {"type": "string", "description": "A resource template of that server, exactly as listed."},
            "variable": {"type": "string", "description": "The template variable to suggest values for."},
            "value": {"type": "string", "description": "What you have of the variable's value so far (may be empty)."},
            "arguments": {
                "type": "object",
                "description": "Values already chosen for the template's other variables.",
                "additionalProperties": {"type": "string"}
            }
        },
        "required": ["server", "uriTemplate", "variable"],
        "additionalProperties": false
    });
    let mut spec = ToolSpec::new(NAME, DESCRIPTION, input_schema, "Complete an MCP resource template", true);
    // Strict function calling (OpenAI's) allows no open-ended object: there `arguments` is a list
    // of `{name, value}` pairs, which the tool reads as the same map.
    spec.strict_input_schema["properties"]["arguments"] = serde_json::json!({
        "type": ["array", "null"],
        "description": "Values already chosen for the template's other variables.",
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
            "required": ["name", "value"],
            "additionalProperties": false
        }
    });
    spec
}

/// The completion tool's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteInput {
    /// The server to ask.
    pub server: String,
    /// One of its templates, as listed.
    pub uri_template: String,
    /// The variable to complete.
    pub variable: String,
    /// What the model has of its value so far.
    pub value: String,
    /// Values chosen for the template's other variables.
    pub arguments: BTreeMap<String, String>,
}

impl CompleteInput {
    /// Parses the model's input (JSON text).
    pub fn from_json(text: &str) -> Result<CompleteInput, ToolError> {
        let v: Value = serde_json::from_str(text).map_err(|_| invalid("the input is not a JSON object"))?;
        CompleteInput::from_value(v)
    }

    /// Parses the model's input (a JSON value): an object with the strings `server`, `uriTemplate`
    /// and `variable`, optionally `value` (a string) and `arguments` (an object of strings, or —
    /// the strict schema's form — a list of `{name, value}` strings, each name once); `null` for an
    /// optional one means absent.
    pub fn from_value(v: Value) -> Result<CompleteInput, ToolError> {
        let Value::Object(mut obj) = v else { return Err(invalid("the input is not an object")) };
        if let Some(k) = obj.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            let k: String = sanitize::label(k).chars().take(64).collect();
            return Err(invalid(&format!("unknown input field \"{k}\"")));
        }
        let mut string = |key: &str, required: bool| match obj.remove(key) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) if !required => Ok(String::new()),
            None | Some(Value::Null) => Err(invalid(&format!("\"{key}\" is required"))),
            Some(_) => Err(invalid(&format!("\"{key}\" must be a string"))),
        };
        let (server, uri_template) = (string("server", true)?, string("uriTemplate", true)?);
        let (variable, value) = (string("variable", true)?, string("value", false)?);
        let arguments = match obj.remove("arguments") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(m)) => m
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k, s)),
                    _ => Err(invalid("\"arguments\" must map variable names to strings")),
                })
                .collect::<Result<_, _>>()?,
            Some(Value::Array(pairs)) => {
                let mut map = BTreeMap::new();
                for pair in pairs {
                    let Value::Object(mut pair) = pair else { return Err(pairs_invalid()) };
                    let (Some(Value::String(name)), Some(Value::String(value)), 0) =
                        (pair.remove("name"), pair.remove("value"), pair.len())
                    else {
                        return Err(pairs_invalid());
                    };
                    if map.insert(name, value).is_some() {
                        return Err(invalid("\"arguments\" must name each variable once"));
                    }
                }
                map
            }
            Some(_) => return Err(invalid("\"arguments\" must be an object")),
        };
        Ok(CompleteInput { server, uri_template, variable, value, arguments })
    }
}

const FIELDS: [&str; 5] = ["server", "uriTemplate", "variable", "value", "arguments"];

fn pairs_invalid() -> ToolError {
    invalid("\"arguments\" as a list must hold {name, value} pairs of strings")
}

fn invalid(reason: &str) -> ToolError {
    ToolError::InvalidArgument { reason: reason.to_owned() }
}

/// One completion, validated: what the host sends, and the rendering of what came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteCall {
    input: CompleteInput,
    config: CompleteConfig,
    deadline: Duration,
}

impl CompleteCall {
    /// The JSON-RPC method the host sends.
    pub const METHOD: &'static str = crate::protocol::COMPLETION_COMPLETE;

    /// Validates `input` against `catalog` at `now` (the host's monotonic clock): the server is in
    /// the catalog and declares `completions`; the template is one it listed, exactly; the variable
    /// is one of the template's; every argument names another of its variables; the value and
    /// each argument are at most [`MAX_VALUE_CHARS`] characters. Refusals name the rule and the
    /// server, never a value.
    pub fn new(
        catalog: &Catalog,
        input: &CompleteInput,
        config: &CompleteConfig,
        now: Duration,
    ) -> Result<CompleteCall, ToolError> {
        config.validate()?;
        let server = input.server.as_str();
        catalog.status(server, now).map_err(ToolError::UnknownServer)?;
        if !catalog.declares_completions(server) {
            return Err(ToolError::NotOffered { server: server.to_owned() });
        }
        let listed = catalog.templates(Some(server)).map_err(ToolError::UnknownServer)?;
        if !listed.iter().any(|t| t.uri_template == input.uri_template) {
            return Err(ToolError::UnlistedTemplate { server: server.to_owned() });
        }
        let variables = crate::template::variables(&input.uri_template)
            .map_err(|_| ToolError::UnlistedTemplate { server: server.to_owned() })?;
        let named = |name: &str| variables.iter().any(|v| v.name == name);
        if !named(&input.variable) {
            return Err(invalid("\"variable\" is not a variable of the template"));
        }
        if input.arguments.keys().any(|k| k == &input.variable || !named(k)) {
            return Err(invalid("\"arguments\" must name the template's other variables"));
        }
        let too_long = |s: &String| s.chars().count() > MAX_VALUE_CHARS;
        if too_long(&input.value) || input.arguments.values().any(too_long) {
            return Err(invalid("\"value\" and each argument must be at most 1024 characters"));
        }
        Ok(CompleteCall { input: input.clone(), config: *config, deadline: now.saturating_add(config.timeout) })
    }

    /// [`CompleteCall::new`] from the model's input as JSON text.
    pub fn from_json(
        catalog: &Catalog,
        input_json: &str,
        config: &CompleteConfig,
        now: Duration,
    ) -> Result<CompleteCall, ToolError> {
        CompleteCall::new(catalog, &CompleteInput::from_json(input_json)?, config, now)
    }

    /// The server to ask.
    pub fn server(&self) -> &str {
        &self.input.server
    }

    /// The template whose variable is completed.
    pub fn uri_template(&self) -> &str {
        &self.input.uri_template
    }

    /// The request's `params` as compact JSON text: `{"ref": {"type": "ref/resource", "uri"},
    /// "argument": {"name", "value"}, "context"?: {"arguments"}}`.
    pub fn params_json(&self) -> String {
        #[derive(Serialize)]
        struct Params<'a> {
            r#ref: Reference<'a>,
            argument: Argument<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            context: Option<Context<'a>>,
        }
        #[derive(Serialize)]
        struct Reference<'a> {
            r#type: &'static str,
            uri: &'a str,
        }
        #[derive(Serialize)]
        struct Argument<'a> {
            name: &'a str,
            value: &'a str,
        }
        #[derive(Serialize)]
        struct Context<'a> {
            arguments: &'a BTreeMap<String, String>,
        }
        let input = &self.input;
        serde_json::to_string(&Params {
            r#ref: Reference { r#type: "ref/resource", uri: &input.uri_template },
            argument: Argument { name: &input.variable, value: &input.value },
            context: (!input.arguments.is_empty()).then_some(Context { arguments: &input.arguments }),
        })
        .expect("the params always serialize")
    }

    /// How long the host may still wait for the answer.
    pub fn remaining(&self, now: Duration) -> Duration {
        self.deadline.saturating_sub(now)
    }

    /// The model's output for what became of the request: the values, or the tool error
    /// (`not_offered`, `server_error`, `transport_error`, `deadline`, `malformed_result`,
    /// `message_too_large`).
    pub fn finish(&self, outcome: Outcome<'_>) -> Result<String, ToolError> {
        let server = self.input.server.clone();
        match outcome {
            Outcome::Page(text) if text.len() > MAX_ANSWER_BYTES => {
                Err(ToolError::CompleteTooLarge { server, max_bytes: MAX_ANSWER_BYTES })
            }
            Outcome::Page(text) => self.render(text),
            Outcome::RpcError { code: crate::protocol::METHOD_NOT_FOUND } => Err(ToolError::NotOffered { server }),
            Outcome::RpcError { code } => Err(ToolError::CompleteFailed { server, code }),
            Outcome::Transport => Err(ToolError::CompleteTransport { server }),
            Outcome::TimedOut => Err(ToolError::CompleteDeadline { server, max: self.config.timeout }),
            Outcome::TooLarge { max_bytes } => Err(ToolError::CompleteTooLarge { server, max_bytes }),
            Outcome::Malformed => {
                Err(ToolError::CompleteMalformed { server, reason: "the host's client refused the result" })
            }
        }
    }

    fn render(&self, text: &str) -> Result<String, ToolError> {
        let malformed = || ToolError::CompleteMalformed {
            server: self.input.server.clone(),
            reason: "expected {completion: {values: [...]}}",
        };
        let fixed = crate::discovery::replace_lone_surrogates(text);
        let mut raw: Map<String, Value> =
            serde_json::from_str(fixed.as_deref().unwrap_or(text)).map_err(|_| malformed())?;
        let Some(Value::Object(mut completion)) = raw.remove("completion") else { return Err(malformed()) };
        let Some(Value::Array(values)) = completion.remove("values") else { return Err(malformed()) };
        let mut omitted = Omitted::default();
        let mut kept = Vec::new();
        for value in values {
            match value {
                Value::String(s) if s.chars().count() > MAX_VALUE_CHARS => omitted.too_long += 1,
                Value::String(s) if sanitize::label(&s) != s.as_str() => omitted.r#unsafe += 1,
                Value::String(_) if kept.len() == MAX_VALUES => omitted.cut += 1,
                Value::String(s) => kept.push(s),
                _ => omitted.not_string += 1,
            }
        }
        let mut ignored = Vec::new();
        let total = match completion.remove("total") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
            Some(_) => {
                ignored.push("total");
                None
            }
        };
        let has_more = match completion.remove("hasMore") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(b),
            Some(_) => {
                ignored.push("hasMore");
                None
            }
        };
        let mut out = Output {
            server: &self.input.server,
            uri_template: &self.input.uri_template,
            variable: &self.input.variable,
            values: kept,
            total,
            has_more,
            omitted,
            ignored,
        };
        // Within the cap: values cut from the end (each cut one counted).
        loop {
            let rendered = serde_json::to_string(&out).expect("the output always serializes");
            if rendered.chars().count() <= self.config.max_output_chars || out.values.is_empty() {
                return Ok(rendered);
            }
            out.values.pop();
            out.omitted.cut += 1;
        }
    }
}

/// Values left out of the output, by why.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Omitted {
    #[serde(skip_serializing_if = "is_zero")]
    cut: usize,
    #[serde(skip_serializing_if = "is_zero")]
    not_string: usize,
    #[serde(skip_serializing_if = "is_zero")]
    too_long: usize,
    #[serde(skip_serializing_if = "is_zero")]
    r#unsafe: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Omitted {
    fn is_empty(&self) -> bool {
        self.cut + self.not_string + self.too_long + self.r#unsafe == 0
    }
}

/// The model's output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Output<'a> {
    server: &'a str,
    uri_template: &'a str,
    variable: &'a str,
    values: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    has_more: Option<bool>,
    #[serde(skip_serializing_if = "Omitted::is_empty")]
    omitted: Omitted,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ignored: Vec<&'static str>,
}
