//! Replays the shared tracking vectors: `tests/vectors/tracking/*.json` (one operation in → the
//! exact event line out) and `tests/vectors/tracking-config/*.json` (options in → exporter names,
//! the session id a transport session gets, or the error). Python and Node replay the same files
//! through their public trackers and must produce the same bytes (format:
//! `tests/vectors/README.md`).
//!
//! `MCPLENS_BLESS=1` writes the event lines of cases marked `unblessed` (new cases from
//! `tests/vectors/gen_tracking.py`); review them before committing.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use common::TempDir;
use mcplens::tracking::{
    string_hook, ExporterConfig, Hooks, Identity, JsonlConfig, Method, Operation, Payload, PeerInfo, RequestId,
    RpcError, Tracker, TrackerConfig, TrackingError, Transport,
};
use serde_json::{json, Map, Value};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors").join(sub)
}

fn cases(sub: &str) -> Vec<(PathBuf, Value, String)> {
    let mut out: Vec<(PathBuf, Value, String)> = std::fs::read_dir(dir(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let v = serde_json::from_str(&text).unwrap();
            (p, v, text)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// JSON text without the whitespace between tokens, keys in the order written (what a host's
/// serializer hands the core: the vector files are indented).
fn compact(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let (mut in_str, mut escaped) = (false, false);
    for c in raw.chars() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The raw text of `operation.<key>` in the file, compact, in the file's key order.
fn raw_payload(file: &str, key: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Case<'a> {
        #[serde(borrow)]
        operation: std::collections::HashMap<&'a str, &'a serde_json::value::RawValue>,
    }
    let case: Case<'_> = serde_json::from_str(file).unwrap();
    case.operation.get(key).map(|r| compact(r.get()))
}

/// The runners' named redact hooks (each language implements the same few).
pub fn redact_hook(name: &str) -> impl Fn(&str) -> Result<String, TrackingError> + Send + Sync + 'static {
    assert_eq!(name, "mask-digits", "unknown redact hook {name}");
    |s: &str| Ok(s.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect())
}

/// Run one event vector (`file`: its text); the JSONL lines the tracker wrote.
fn run_event_case(case: &Value, file: &str, tmp: &TempDir) -> Vec<String> {
    let path = tmp.path(&format!("{}.jsonl", case["name"].as_str().unwrap()));
    let mut options = case.get("options").cloned().unwrap_or(json!({}));
    let o = options.as_object_mut().unwrap();
    o.insert("seed".into(), case["seed"].clone());
    o.insert("server".into(), case["server"].clone());
    let mut config = TrackerConfig::from_json(&options.to_string()).unwrap();
    config.exporters = vec![ExporterConfig::jsonl(JsonlConfig::new(&path))];
    let mut hooks = Hooks::default();
    if let Some(name) = case.get("redact").and_then(Value::as_str) {
        hooks.redact_strings = Some(string_hook(redact_hook(name)));
    }
    let t = Tracker::start(config, hooks).unwrap();
    let s = &case["session"];
    let transport = s.get("transport").and_then(Value::as_str).map(|n| Transport::from_name(n).unwrap());
    let session = t.open_session(s.get("transportSessionId").and_then(Value::as_str), transport);
    let client: Option<PeerInfo> = s.get("client").map(|c| serde_json::from_value(c.clone()).unwrap());
    let version = s.get("protocolVersion").and_then(Value::as_str);
    if client.is_some() || version.is_some() {
        t.set_session_client(&session, client, version);
    }
    if let Some(i) = s.get("identity") {
        t.begin_identify(&session);
        t.resolve_identity(&session, Some(serde_json::from_value::<Identity>(i.clone()).unwrap()));
    }
    let op = &case["operation"];
    let method = Method::from_name(op["method"].as_str().unwrap());
    let started = UNIX_EPOCH + Duration::from_millis(op["startedAtMs"].as_u64().unwrap());
    let duration = Duration::from_micros(op["durationUs"].as_u64().unwrap());
    let request_id = match op.get("requestId") {
        Some(Value::Number(n)) => RequestId::Number(n.as_i64().unwrap()),
        Some(Value::String(s)) => RequestId::Text(s),
        _ => RequestId::None,
    };
    let params = raw_payload(file, "params");
    let result = raw_payload(file, "result");
    let mut rec = Operation {
        request_id,
        params: params.as_deref().map_or(Payload::None, Payload::Json),
        ..Operation::new(session.key(), method, started, duration)
    };
    if let Some(e) = op.get("error") {
        rec.error = Some(RpcError { code: e["code"].as_i64().unwrap(), message: e["message"].as_str().unwrap() });
    } else if let Some(r) = &result {
        rec.result = Payload::Json(r);
        rec.tool_error = op["result"].get("isError") == Some(&json!(true));
    }
    t.record(&rec);
    t.flush(Duration::from_secs(30)).unwrap();
    t.shutdown(Duration::from_secs(30)).unwrap();
    match std::fs::read_to_string(&path) {
        Ok(text) => text.lines().map(str::to_owned).collect(),
        Err(_) => Vec::new(),
    }
}

/// `fields`: each key's value must equal the event's (`null`: the key is absent).
fn check_fields(name: &str, fields: &Map<String, Value>, event: &Value) {
    for (k, want) in fields {
        let got = event.get(k).cloned().unwrap_or(Value::Null);
        assert_eq!(&got, want, "{name}: field {k}");
    }
}

#[test]
fn tracking_event_vectors() {
    let tmp = TempDir::new("tracking-vectors");
    let bless = std::env::var_os("MCPLENS_BLESS").is_some();
    let all = cases("tracking");
    assert!(all.len() >= 40, "{} vectors", all.len());
    let mut methods = std::collections::BTreeSet::new();
    for (path, case, text) in all {
        let name = case["name"].as_str().unwrap();
        assert_eq!(path.file_stem().unwrap(), name);
        methods.insert(case["operation"]["method"].as_str().unwrap().to_owned());
        let lines = run_event_case(&case, &text, &tmp);
        assert!(lines.len() <= 1, "{name}: {lines:?}");
        let got = lines.first().cloned();
        if let Some(line) = &got {
            let event: Value = serde_json::from_str(line).unwrap();
            check_fields(name, case["fields"].as_object().unwrap(), &event);
        }
        if case.get("unblessed").is_some() {
            assert!(bless, "{name} has no expected event yet: run with MCPLENS_BLESS=1 and review it");
            // The generator's layout stays: only its last two lines change.
            let marker = "\"expect\": null,\n \"unblessed\": true";
            assert!(text.contains(marker), "{name}: written by gen_tracking.py?");
            let expect = serde_json::to_string(&got.map_or(Value::Null, Value::String)).unwrap();
            std::fs::write(&path, text.replace(marker, &format!("\"expect\": {expect}"))).unwrap();
            continue;
        }
        assert_eq!(got.as_deref(), case["expect"].as_str(), "{name}");
    }
    let all_methods: std::collections::BTreeSet<String> = Method::ALL.iter().map(|m| m.name().to_owned()).collect();
    let others = methods.iter().filter(|m| Method::known(m).is_none()).count();
    methods.retain(|m| Method::known(m).is_some());
    assert_eq!(methods, all_methods, "every known method has a vector");
    assert!(others >= 2, "a request method the core does not know has vectors (a name kept, one not)");
}

#[test]
fn tracking_config_vectors() {
    let all = cases("tracking-config");
    assert!(all.len() >= 10, "{} config vectors", all.len());
    for (_, case, _) in all {
        let name = case["name"].as_str().unwrap();
        let got = TrackerConfig::from_json(&case["options"].to_string()).and_then(|c| c.names().map(|n| (c, n)));
        match (&got, case.get("expectError")) {
            (Err(e), Some(want)) => {
                assert_eq!(e.code().as_str(), want["code"], "{name}");
                assert_eq!(e.option(), want["option"].as_str(), "{name}: {e}");
            }
            (Ok((config, names)), None) => {
                let want = &case["expect"];
                assert_eq!(names, &serde_json::from_value::<Vec<String>>(want["exporters"].clone()).unwrap(), "{name}");
                if let Some(sid) = want.get("sessionId") {
                    let t = case["transportSessionId"].as_str().unwrap();
                    assert_eq!(config.session_id_for(t), sid.as_str().unwrap(), "{name}");
                    // A tracker gives the same id to a session opened with that transport id.
                    let disabled = TrackerConfig { enable_tracing: false, ..config.clone() };
                    let tracker = Tracker::start(disabled, Hooks::default()).unwrap();
                    assert_eq!(tracker.open_session(Some(t), None).id(), sid.as_str().unwrap(), "{name}");
                }
                if let Some(resolved) = want.get("config") {
                    let full: Value = serde_json::from_str(&config.to_json()).unwrap();
                    for (k, v) in resolved.as_object().unwrap() {
                        assert_eq!(&full[k], v, "{name}: {k}");
                    }
                }
            }
            (got, want) => panic!("{name}: got {got:?}, expected error {want:?}"),
        }
    }
}

#[test]
fn a_tracker_refuses_a_configuration_the_vectors_refuse() {
    // The same check runs when a tracker starts, whatever the host.
    let err = Tracker::start(TrackerConfig { queue_capacity: 0, ..TrackerConfig::default() }, Hooks::default());
    assert_eq!(err.unwrap_err().option(), Some("queueCapacity"));
    let err = Tracker::start(
        TrackerConfig { exporters: vec![ExporterConfig::callback(None)], ..TrackerConfig::default() },
        Hooks::default(),
    );
    assert_eq!(err.unwrap_err().option(), Some("exporters"), "one function per callback exporter");
}
