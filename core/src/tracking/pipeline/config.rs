//! [`TrackerConfig`]: the one configuration of a tracker, in every language. Rust's
//! [`TrackerBuilder`](crate::tracking::TrackerBuilder), Python's `Tracker(...)` and Node's `new Tracker({...})`
//! only convert their options into it; its defaults, validation (every error names the option as a
//! path into this JSON, code `invalid_argument`), exporter naming and project-id salting live here.
//! The shared vectors in `tests/vectors/tracking-config/` pin them in all three languages.
//!
//! ```json
//! {"enableTracing": true, "server": {"name": "notes", "version": "1.0"}, "projectId": null,
//!  "captureParameters": true, "captureResponses": true, "captureResourceText": false,
//!  "builtinRedaction": true, "limits": {"maxStringBytes": 32768, "maxDepth": 10,
//!  "maxBreadth": 100, "maxEventBytes": 102400}, "queueCapacity": 10000, "queueBytes": 67108864,
//!  "export": {"maxEvents": 512, "maxDelayMs": 1000, "maxIdleMs": 20, "maxQueued": 10000,
//!  "initialBackoffMs": 200, "maxBackoffMs": 30000, "maxAttempts": 8},
//!  "identifyMaxRecords": 1000, "identifyTimeoutMs": 5000, "dropTimeoutMs": 2000,
//!  "hookTimeoutMs": 5000, "callbackTimeoutMs": 30000,
//!  "sdkLanguage": "Rust", "seed": null,
//!  "exporters": [{"type": "jsonl", "path": "mcplens-events.jsonl"}]}
//! ```

use std::path::PathBuf;
use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::caps::PayloadLimits;
use super::event::{PeerInfo, Transport};
use super::export::ExportPolicy;
use crate::millis;
use crate::tracking::TrackingError;

/// `at.key`, or `key` at the top.
pub(crate) fn option_at(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// How long a session's records wait for the host's identify hook (see
/// [`Tracker::begin_identify`](crate::tracking::Tracker::begin_identify)). Past either bound, or when the
/// hook fails, they go on without an identity (counted as `unidentified`). In
/// [`TrackerConfig`] JSON: `identifyMaxRecords`, `identifyTimeoutMs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentifyLimits {
    /// Most records held per session (default 1,000).
    pub max_records: usize,
    /// Longest wait from the start of the identify call (default 5 s).
    pub timeout: Duration,
}

impl Default for IdentifyLimits {
    fn default() -> Self {
        IdentifyLimits { max_records: 1_000, timeout: Duration::from_secs(5) }
    }
}

/// A callback exporter: the host supplies the function when the tracker starts (see
/// [`Hooks::callbacks`](crate::tracking::Hooks)), one per `callback` entry, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallbackConfig {}

/// One exporter of a [`TrackerConfig`]: `{"type": "jsonl" | "otlp" | "mcpcat" | "callback",
/// "name"?: …, …its options}`. Without a name it is named after its type, and later ones of a
/// type get `-2`, `-3`, …; an OTLP exporter also has `{name}-metrics` (see [`TrackerConfig::names`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ExporterConfig {
    /// A JSONL file.
    Jsonl {
        /// Its name in `stats()`.
        name: Option<String>,
        /// The file and rotation.
        config: JsonlConfig,
    },
    /// OTLP/HTTP spans and metrics.
    #[cfg(feature = "otlp")]
    Otlp {
        /// Its name (the metrics exporter is `{name}-metrics`).
        name: Option<String>,
        /// The endpoint and options.
        config: OtlpConfig,
    },
    /// The agentcat (MCPcat) events API.
    #[cfg(feature = "mcpcat")]
    Mcpcat {
        /// Its name.
        name: Option<String>,
        /// The project and endpoint.
        config: McpcatConfig,
    },
    /// A host callback.
    Callback {
        /// Its name.
        name: Option<String>,
    },
}

impl ExporterConfig {
    /// A JSONL exporter.
    pub fn jsonl(config: JsonlConfig) -> ExporterConfig {
        ExporterConfig::Jsonl { name: None, config }
    }

    /// A callback exporter named `name` (or after its type).
    pub fn callback(name: Option<String>) -> ExporterConfig {
        ExporterConfig::Callback { name }
    }

    /// The `type` in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            ExporterConfig::Jsonl { .. } => "jsonl",
            #[cfg(feature = "otlp")]
            ExporterConfig::Otlp { .. } => "otlp",
            #[cfg(feature = "mcpcat")]
            ExporterConfig::Mcpcat { .. } => "mcpcat",
            ExporterConfig::Callback { .. } => "callback",
        }
    }

    /// The name given, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            ExporterConfig::Jsonl { name, .. } | ExporterConfig::Callback { name } => name.as_deref(),
            #[cfg(feature = "otlp")]
            ExporterConfig::Otlp { name, .. } => name.as_deref(),
            #[cfg(feature = "mcpcat")]
            ExporterConfig::Mcpcat { name, .. } => name.as_deref(),
        }
    }

    /// The same exporter under another name.
    pub fn named(mut self, n: impl Into<String>) -> ExporterConfig {
        let n = Some(n.into());
        match &mut self {
            ExporterConfig::Jsonl { name, .. } | ExporterConfig::Callback { name } => *name = n,
            #[cfg(feature = "otlp")]
            ExporterConfig::Otlp { name, .. } => *name = n,
            #[cfg(feature = "mcpcat")]
            ExporterConfig::Mcpcat { name, .. } => *name = n,
        }
        self
    }

    /// Check this exporter's options; `at`: its place (`exporters[2]`), for the error's path.
    pub fn check(&self, at: &str) -> Result<(), TrackingError> {
        if self.name().is_some_and(|n| n.is_empty() || n.len() > 64 || n.contains(char::is_control)) {
            return Err(TrackingError::invalid(option_at(at, "name"), "must be 1 to 64 characters, no controls"));
        }
        match self {
            ExporterConfig::Jsonl { config, .. } => {
                if config.path.as_os_str().is_empty() {
                    return Err(TrackingError::invalid(option_at(at, "path"), "must not be empty"));
                }
                Ok(())
            }
            #[cfg(feature = "otlp")]
            ExporterConfig::Otlp { config, .. } => {
                config.check(at)?;
                if !config.traces && !config.metrics {
                    return Err(TrackingError::invalid(option_at(at, "traces"), "sends neither traces nor metrics"));
                }
                Ok(())
            }
            #[cfg(feature = "mcpcat")]
            ExporterConfig::Mcpcat { config, .. } => config.check(at),
            ExporterConfig::Callback { .. } => Ok(()),
        }
    }

    /// From its JSON object (`at`: its place, for errors).
    pub fn from_value(v: Value, at: &str) -> Result<ExporterConfig, TrackingError> {
        let Value::Object(mut m) = v else {
            return Err(TrackingError::invalid(at, "must be an object with a \"type\""));
        };
        let kind = match m.remove("type") {
            Some(Value::String(k)) => k,
            _ => return Err(TrackingError::invalid(option_at(at, "type"), "must be jsonl, otlp, mcpcat or callback")),
        };
        let name = match m.remove("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(n)) => Some(n),
            Some(_) => return Err(TrackingError::invalid(option_at(at, "name"), "must be a string")),
        };
        let rest = Value::Object(m);
        fn parse<T: serde::de::DeserializeOwned>(v: Value, at: &str) -> Result<T, TrackingError> {
            serde_path_to_error::deserialize(v).map_err(|e| {
                let path = e.path().to_string();
                let key = if path == "." { String::new() } else { path };
                TrackingError::invalid(option_at(at, &key), e.into_inner().to_string())
            })
        }
        let config = match kind.as_str() {
            "jsonl" => ExporterConfig::Jsonl { name, config: parse(rest, at)? },
            #[cfg(feature = "otlp")]
            "otlp" => ExporterConfig::Otlp { name, config: parse(rest, at)? },
            #[cfg(feature = "mcpcat")]
            "mcpcat" => ExporterConfig::Mcpcat { name, config: parse(rest, at)? },
            "callback" => {
                let _: CallbackConfig = parse(rest, at)?;
                ExporterConfig::Callback { name }
            }
            other => {
                return Err(TrackingError::invalid(
                    option_at(at, "type"),
                    format!("unknown exporter type \"{other}\" (this build has: {})", KINDS.join(", ")),
                ))
            }
        };
        config.check(at)?;
        Ok(config)
    }

    fn to_value(&self) -> Value {
        let mut m = match self {
            ExporterConfig::Jsonl { config, .. } => to_map(config),
            #[cfg(feature = "otlp")]
            ExporterConfig::Otlp { config, .. } => to_map(config),
            #[cfg(feature = "mcpcat")]
            ExporterConfig::Mcpcat { config, .. } => to_map(config),
            ExporterConfig::Callback { .. } => Map::new(),
        };
        let mut out = Map::new();
        out.insert("type".to_owned(), Value::String(self.kind().to_owned()));
        if let Some(n) = self.name() {
            out.insert("name".to_owned(), Value::String(n.to_owned()));
        }
        out.append(&mut m);
        Value::Object(out)
    }

    /// The exporters it becomes: `(suffix, …)` (OTLP: spans, then `-metrics` when enabled).
    fn slots(&self) -> Vec<&'static str> {
        match self {
            #[cfg(feature = "otlp")]
            ExporterConfig::Otlp { config, .. } => {
                let mut v = Vec::new();
                if config.traces {
                    v.push("");
                }
                if config.metrics {
                    v.push("-metrics");
                }
                v
            }
            _ => vec![""],
        }
    }
}

/// The exporter types of this build.
const KINDS: &[&str] = &[
    "jsonl",
    #[cfg(feature = "otlp")]
    "otlp",
    #[cfg(feature = "mcpcat")]
    "mcpcat",
    "callback",
];

fn to_map<T: Serialize>(v: &T) -> Map<String, Value> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

impl Serialize for ExporterConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ExporterConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ExporterConfig, D::Error> {
        ExporterConfig::from_value(Value::deserialize(d)?, "").map_err(|e| D::Error::custom(e.to_string()))
    }
}

/// The configuration of a [`Tracker`](crate::tracking::Tracker) (see the module docs for its JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TrackerConfig {
    /// `false`: nothing is recorded and no thread starts (`enable_tracing = False`).
    pub enable_tracing: bool,
    /// The server's `serverInfo`, for every event.
    pub server: Option<PeerInfo>,
    /// Salts session-id derivation; default: the first agentcat exporter's project.
    pub project_id: Option<String>,
    /// Keep request `params` (default true).
    pub capture_parameters: bool,
    /// Keep results (default true).
    pub capture_responses: bool,
    /// Keep `resources/read` text (default false; blobs never).
    pub capture_resource_text: bool,
    /// The built-in redaction rules (default true).
    pub builtin_redaction: bool,
    /// Payload caps.
    pub limits: PayloadLimits,
    /// Operations the request-path queue holds (default 10,000; drop-oldest beyond).
    pub queue_capacity: usize,
    /// Bytes the request-path queue holds (default 64 MiB); a payload over half of it is left out.
    pub queue_bytes: usize,
    /// Batching, per-exporter queue and retries.
    pub export: ExportPolicy,
    /// Most records of one session held while its identify hook runs (default 1,000).
    pub identify_max_records: usize,
    /// Longest they wait (default 5 s).
    #[serde(rename = "identifyTimeoutMs", with = "millis")]
    pub identify_timeout: Duration,
    /// How long dropping the last tracker handle waits for delivery (default 2 s).
    #[serde(rename = "dropTimeoutMs", with = "millis")]
    pub drop_timeout: Duration,
    /// Longest a redact hook may take on one event (default 5 s): past it the event is dropped
    /// (`redactionFailed`), and while that call still runs, later events are dropped at once.
    #[serde(rename = "hookTimeoutMs", with = "millis")]
    pub hook_timeout: Duration,
    /// Longest a host callback exporter may take on one batch (default 30 s): past it the batch
    /// counts as failed, and while that call still runs, later batches fail at once.
    #[serde(rename = "callbackTimeoutMs", with = "millis")]
    pub callback_timeout: Duration,
    /// What the agentcat exporter sends as `sdk_language` (default `Rust`; the bindings send what
    /// agentcat's own SDKs do: `Python 3.12`, `TypeScript`).
    pub sdk_language: String,
    /// A fixed seed for event, span, trace and minted session ids (tests, vectors).
    pub seed: Option<u64>,
    /// Where events go (default: one JSONL file, `./mcplens-events.jsonl`).
    pub exporters: Vec<ExporterConfig>,
}

/// How long delivery may take when a tracker ends with its process: dropping the last handle, and
/// the bindings' flush at exit ([`flush_at_exit`](super::flush_at_exit): Python `atexit`, Node
/// `beforeExit`), for all live trackers together.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(2);

/// The default [`TrackerConfig::hook_timeout`].
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(5);
/// The default [`TrackerConfig::callback_timeout`].
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            enable_tracing: true,
            server: None,
            project_id: None,
            capture_parameters: true,
            capture_responses: true,
            capture_resource_text: false,
            builtin_redaction: true,
            limits: PayloadLimits::default(),
            queue_capacity: 10_000,
            queue_bytes: 64 * 1024 * 1024,
            export: ExportPolicy::default(),
            identify_max_records: 1_000,
            identify_timeout: Duration::from_secs(5),
            drop_timeout: EXIT_TIMEOUT,
            hook_timeout: HOOK_TIMEOUT,
            callback_timeout: CALLBACK_TIMEOUT,
            sdk_language: "Rust".to_owned(),
            seed: None,
            exporters: Vec::new(),
        }
    }
}

impl TrackerConfig {
    /// From JSON text (unknown keys and wrong types fail, naming the option), then checked.
    pub fn from_json(text: &str) -> Result<TrackerConfig, TrackingError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let config: TrackerConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // An exporter's own error already names its option: keep it.
            let msg = inner.to_string();
            match msg.strip_prefix("invalid tracking option `") {
                Some(rest) => {
                    let (opt, reason) = rest.split_once("`: ").unwrap_or((rest, ""));
                    let reason = reason.split(" at line ").next().unwrap_or(reason);
                    TrackingError::invalid(option_at(&path, opt), reason)
                }
                None => {
                    let reason = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
                    TrackingError::invalid(if path == "." { String::new() } else { path }, reason)
                }
            }
        })?;
        de.end().map_err(|_| TrackingError::invalid("", "trailing characters after the configuration"))?;
        config.check()?;
        Ok(config)
    }

    /// As JSON text (the resolved form: every default filled in).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The identify bounds.
    pub fn identify_limits(&self) -> IdentifyLimits {
        IdentifyLimits { max_records: self.identify_max_records, timeout: self.identify_timeout }
    }

    /// The exporters, with the default JSONL file when none is configured.
    pub fn exporters_or_default(&self) -> Vec<ExporterConfig> {
        if self.exporters.is_empty() {
            vec![ExporterConfig::jsonl(JsonlConfig::default())]
        } else {
            self.exporters.clone()
        }
    }

    /// Check every option (the first problem found, naming its option).
    pub fn check(&self) -> Result<(), TrackingError> {
        let bad = |option: &str, reason: &str| Err(TrackingError::invalid(option, reason));
        if self.queue_capacity == 0 {
            return bad("queueCapacity", "must be at least 1");
        }
        if self.queue_bytes < 4096 {
            return bad("queueBytes", "must be at least 4096");
        }
        let p = &self.export;
        if p.max_events == 0 {
            return bad("export.maxEvents", "must be at least 1");
        }
        if p.max_queued == 0 {
            return bad("export.maxQueued", "must be at least 1");
        }
        if p.max_attempts == 0 {
            return bad("export.maxAttempts", "must be at least 1");
        }
        if p.initial_backoff > p.max_backoff {
            return bad("export.initialBackoffMs", "must not exceed export.maxBackoffMs");
        }
        let l = &self.limits;
        if l.max_string_bytes < 64 {
            return bad("limits.maxStringBytes", "must be at least 64");
        }
        if l.max_event_bytes < 4096 {
            return bad("limits.maxEventBytes", "must be at least 4096");
        }
        if l.max_breadth == 0 {
            return bad("limits.maxBreadth", "must be at least 1");
        }
        if l.max_depth == 0 {
            return bad("limits.maxDepth", "must be at least 1");
        }
        if self.identify_max_records == 0 {
            return bad("identifyMaxRecords", "must be at least 1");
        }
        if self.hook_timeout.is_zero() {
            return bad("hookTimeoutMs", "must be at least 1 ms");
        }
        if self.callback_timeout.is_zero() {
            return bad("callbackTimeoutMs", "must be at least 1 ms");
        }
        if self.project_id.as_deref() == Some("") {
            return bad("projectId", "must not be empty");
        }
        if self.server.as_ref().is_some_and(|s| s.name.is_empty()) {
            return bad("server.name", "must not be empty");
        }
        for (i, e) in self.exporters.iter().enumerate() {
            e.check(&format!("exporters[{i}]"))?;
        }
        self.names().map(|_| ())
    }

    /// The names of the exporters the configuration starts, in order (the default JSONL file
    /// when none is configured): an OTLP entry is two, `{name}` (spans) and `{name}-metrics`.
    /// Unnamed entries take their type's name, and later ones `-2`, `-3`, … (skipping names in
    /// use); two entries given the same name fail (`exporters[i].name`).
    pub fn names(&self) -> Result<Vec<String>, TrackingError> {
        let all = self.exporters_or_default();
        let mut taken: Vec<String> = Vec::new();
        for (i, e) in all.iter().enumerate() {
            if let Some(n) = e.name() {
                for suffix in e.slots() {
                    let full = format!("{n}{suffix}");
                    if taken.contains(&full) {
                        return Err(TrackingError::invalid(
                            format!("exporters[{i}].name"),
                            format!("two exporters are named \"{full}\""),
                        ));
                    }
                    taken.push(full);
                }
            }
        }
        let mut out = Vec::new();
        for e in &all {
            let base = match e.name() {
                Some(n) => n.to_owned(),
                None => {
                    let kind = e.kind();
                    let mut n = 1;
                    loop {
                        let candidate = if n == 1 { kind.to_owned() } else { format!("{kind}-{n}") };
                        let clash = |c: &str| taken.iter().any(|t| t == c);
                        if !clash(&candidate) && !clash(&format!("{candidate}-metrics")) {
                            for suffix in e.slots() {
                                taken.push(format!("{candidate}{suffix}"));
                            }
                            break candidate;
                        }
                        n += 1;
                    }
                }
            };
            out.extend(e.slots().into_iter().map(|suffix| format!("{base}{suffix}")));
        }
        Ok(out)
    }

    /// The project id that salts session ids: `projectId`, else the first agentcat exporter's.
    pub fn salt_project(&self) -> Option<&str> {
        if let Some(p) = self.project_id.as_deref() {
            return Some(p);
        }
        #[cfg(feature = "mcpcat")]
        for e in &self.exporters {
            if let ExporterConfig::Mcpcat { config, .. } = e {
                return Some(&config.project_id);
            }
        }
        None
    }

    /// The session id a connection with this transport session id (`Mcp-Session-Id`) gets: the
    /// same in every language and every tracker of the project.
    pub fn session_id_for(&self, transport_session_id: &str) -> String {
        super::ids::derive_session_id(transport_session_id, self.salt_project())
    }
}

impl Transport {
    /// The transport with this name (`stdio`, `http`, `memory`), as bindings pass it.
    pub fn from_name(name: &str) -> Result<Transport, TrackingError> {
        match name {
            "stdio" => Ok(Transport::Stdio),
            "http" => Ok(Transport::Http),
            "memory" => Ok(Transport::Memory),
            _ => Err(TrackingError::invalid("transport", "must be stdio, http or memory")),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Memory => "memory",
        }
    }

    /// The transport a host's transport object is, by its type's name, for a host that has the
    /// object but no better word for it (Node: the server's `transport.constructor.name`; an HTTP
    /// request says `http` itself): `stdio` in the name (any case) is stdio, then `memory` is
    /// memory, then `http` or `sse` is HTTP; anything else is not known (`None`: the events say
    /// no transport). Pinned by `tests/vectors/tracking-host/contract.json` (`transportNames`).
    pub fn from_type_name(type_name: &str) -> Option<Transport> {
        let name = type_name.to_ascii_lowercase();
        if name.contains("stdio") {
            Some(Transport::Stdio)
        } else if name.contains("memory") {
            Some(Transport::Memory)
        } else if name.contains("http") || name.contains("sse") {
            Some(Transport::Http)
        } else {
            None
        }
    }
}

/// Where and how the JSONL exporter writes. In [`TrackerConfig`](crate::tracking::TrackerConfig)
/// JSON: `{"type": "jsonl", "name"?, "path", "maxFileBytes", "maxFiles"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct JsonlConfig {
    /// The file (default `./mcplens-events.jsonl`). Created if missing, appended to otherwise.
    pub path: PathBuf,
    /// Rotate before the file would grow past this many bytes (default 64 MiB; 0 = never rotate).
    pub max_file_bytes: u64,
    /// Rotated files kept: `<path>.1` (newest) … `<path>.N` (default 5; 0 = the full file is deleted).
    pub max_files: u32,
}

/// Where the JSONL exporter writes when no path is given (relative to the working directory).
pub const DEFAULT_JSONL_PATH: &str = "mcplens-events.jsonl";

impl Default for JsonlConfig {
    fn default() -> Self {
        JsonlConfig { path: PathBuf::from(DEFAULT_JSONL_PATH), max_file_bytes: 64 * 1024 * 1024, max_files: 5 }
    }
}

impl JsonlConfig {
    /// The default configuration, writing to `path`.
    pub fn new(path: impl Into<PathBuf>) -> JsonlConfig {
        JsonlConfig { path: path.into(), ..JsonlConfig::default() }
    }
}

#[cfg(feature = "otlp")]
/// Where and how to send OTLP. In [`TrackerConfig`](crate::tracking::TrackerConfig) JSON:
/// `{"type": "otlp", "name"?, "endpoint", "headers": [[k, v], …], "timeoutMs", "traces",
/// "metrics", "spanNameIncludesUri", "serviceName", "resourceAttributes": [[k, v], …]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct OtlpConfig {
    /// The OTLP/HTTP base URL (default `http://localhost:4318`); spans go to `{endpoint}/v1/traces`
    /// and metrics to `{endpoint}/v1/metrics`.
    pub endpoint: String,
    /// Extra request headers (e.g. an API key for a hosted backend).
    pub headers: Vec<(String, String)>,
    /// Per-request timeout (default 10 s).
    #[serde(rename = "timeoutMs", with = "crate::millis")]
    pub timeout: Duration,
    /// Send spans (default true).
    pub traces: bool,
    /// Send the duration histogram (default true).
    pub metrics: bool,
    /// Opt in to `{method} {uri}` span names for resource operations (default false: the URI is
    /// only an attribute, never in the span name).
    pub span_name_includes_uri: bool,
    /// `service.name` (default: the server's name, else `unknown_service`).
    pub service_name: Option<String>,
    /// Extra resource attributes.
    pub resource_attributes: Vec<(String, String)>,
}

#[cfg(feature = "otlp")]
impl Default for OtlpConfig {
    fn default() -> Self {
        OtlpConfig {
            endpoint: "http://localhost:4318".to_owned(),
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            traces: true,
            metrics: true,
            span_name_includes_uri: false,
            service_name: None,
            resource_attributes: Vec::new(),
        }
    }
}

#[cfg(feature = "otlp")]
impl OtlpConfig {
    /// The default configuration with this base endpoint.
    pub fn new(endpoint: impl Into<String>) -> OtlpConfig {
        OtlpConfig { endpoint: endpoint.into(), ..OtlpConfig::default() }
    }

    pub(crate) fn url(&self, signal: &str) -> String {
        format!("{}/v1/{signal}", self.endpoint.trim_end_matches('/'))
    }

    /// Check the options (`at`: where the exporter sits in the configuration, for the error's
    /// option path).
    pub fn check(&self, at: &str) -> Result<(), TrackingError> {
        check_url(at, "endpoint", &self.endpoint)?;
        if self.timeout.is_zero() {
            return Err(TrackingError::invalid(
                crate::tracking::pipeline::config::option_at(at, "timeoutMs"),
                "must be at least 1 ms",
            ));
        }
        Ok(())
    }
}

#[cfg(feature = "mcpcat")]
/// The API agentcat 2.1.0 sends to by default (`agentcat/modules/constants.py`, `AGENTCAT_API_URL`).
pub const DEFAULT_BASE_URL: &str = "https://api.agentcat.com";

#[cfg(feature = "mcpcat")]
/// Where and how to publish. In [`TrackerConfig`](crate::tracking::TrackerConfig) JSON:
/// `{"type": "mcpcat", "name"?, "projectId", "apiKey"?, "baseUrl", "timeoutMs"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct McpcatConfig {
    /// The API base URL (default [`DEFAULT_BASE_URL`]).
    pub base_url: String,
    /// The project the events belong to (`project_id`).
    pub project_id: String,
    /// Sent as `Authorization: Token <key>` when set (never logged, never in an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// `sdk_language` (the tracker sets it from [`TrackerConfig::sdk_language`](crate::tracking::TrackerConfig)).
    #[serde(skip)]
    pub sdk_language: String,
    /// Per-request timeout (default 10 s).
    #[serde(rename = "timeoutMs", with = "crate::millis")]
    pub timeout: Duration,
}

#[cfg(feature = "mcpcat")]
impl Default for McpcatConfig {
    fn default() -> Self {
        McpcatConfig::new("")
    }
}

#[cfg(feature = "mcpcat")]
impl McpcatConfig {
    /// The default configuration for a project.
    pub fn new(project_id: impl Into<String>) -> McpcatConfig {
        McpcatConfig {
            base_url: DEFAULT_BASE_URL.to_owned(),
            project_id: project_id.into(),
            api_key: None,
            sdk_language: "Rust".to_owned(),
            timeout: Duration::from_secs(10),
        }
    }

    /// The events endpoint.
    pub fn url(&self) -> String {
        format!("{}/v1/public/events/", self.base_url.trim_end_matches('/'))
    }

    /// Check the options (`at`: where the exporter sits in the configuration).
    pub fn check(&self, at: &str) -> Result<(), TrackingError> {
        check_url(at, "baseUrl", &self.base_url)?;
        if self.project_id.is_empty() {
            return Err(TrackingError::invalid(option_at(at, "projectId"), "must not be empty"));
        }
        if self.timeout.is_zero() {
            return Err(TrackingError::invalid(option_at(at, "timeoutMs"), "must be at least 1 ms"));
        }
        if self.api_key.as_deref().is_some_and(|k| k.is_empty() || k.contains(['\r', '\n'])) {
            return Err(TrackingError::invalid(option_at(at, "apiKey"), "must be a non-empty header value"));
        }
        Ok(())
    }
}

#[cfg(any(feature = "otlp", feature = "mcpcat"))]
/// Check an endpoint URL early (at build time); `at`: where the exporter sits in the
/// configuration (`exporters[1]`), `key`: the option (`endpoint`).
pub(crate) fn check_url(at: &str, key: &str, url: &str) -> Result<(), TrackingError> {
    let ok = (url.starts_with("http://") || url.starts_with("https://"))
        && url.parse::<ureq::http::Uri>().is_ok_and(|u| u.host().is_some());
    if !ok {
        return Err(TrackingError::invalid(option_at(at, key), "must be an http(s) URL with a host"));
    }
    #[cfg(not(feature = "tls"))]
    if url.starts_with("https://") {
        return Err(TrackingError::invalid(
            option_at(at, key),
            "is https but mcplens was built without the `tls` feature",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_by_type_name_as_the_host_contract_says() {
        let contract: Value =
            serde_json::from_str(include_str!("../../../../tests/vectors/tracking-host/contract.json")).unwrap();
        let cases = contract["transportNames"].as_array().unwrap();
        assert!(cases.len() >= 6);
        for c in cases {
            let got = Transport::from_type_name(c["typeName"].as_str().unwrap()).map(Transport::name);
            assert_eq!(got, c["transport"].as_str(), "{c}");
        }
    }

    fn names(json: &str) -> Result<Vec<String>, String> {
        TrackerConfig::from_json(json).and_then(|c| c.names()).map_err(|e| e.option().unwrap_or("").to_owned())
    }

    #[test]
    fn defaults_and_round_trip() {
        let c = TrackerConfig::from_json("{}").unwrap();
        assert_eq!(c, TrackerConfig::default());
        assert_eq!(TrackerConfig::from_json(&c.to_json()).unwrap(), c);
        assert_eq!(c.names().unwrap(), ["jsonl"]);
    }

    #[test]
    fn naming_and_duplicates() {
        let two = r#"{"exporters":[{"type":"jsonl","path":"a"},{"type":"jsonl","path":"b"},{"type":"callback"}]}"#;
        assert_eq!(names(two).unwrap(), ["jsonl", "jsonl-2", "callback"]);
        let clash = r#"{"exporters":[{"type":"callback","name":"x"},{"type":"callback","name":"x"}]}"#;
        assert_eq!(names(clash).unwrap_err(), "exporters[1].name");
        let skip = r#"{"exporters":[{"type":"callback","name":"callback"},{"type":"callback"}]}"#;
        assert_eq!(names(skip).unwrap(), ["callback", "callback-2"]);
    }

    #[test]
    fn errors_name_the_option() {
        assert_eq!(names(r#"{"queueCapacity":0}"#).unwrap_err(), "queueCapacity");
        assert_eq!(names(r#"{"queueCapacity":-1}"#).unwrap_err(), "queueCapacity");
        assert_eq!(names(r#"{"nope":1}"#).unwrap_err(), "nope");
        assert_eq!(names(r#"{"limits":{"maxStringBytes":1}}"#).unwrap_err(), "limits.maxStringBytes");
        assert_eq!(names(r#"{"exporters":[{"type":"carrier-pigeon"}]}"#).unwrap_err(), "exporters[0].type");
        assert_eq!(names(r#"{"exporters":[{"type":"jsonl","pth":"x"}]}"#).unwrap_err(), "exporters[0].pth");
    }
}
