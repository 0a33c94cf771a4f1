//! Core bugs the fuzz targets and proptest properties found, one minimal test each (each failed
//! before its fix; the doc comment says what was wrong and how it was fixed).

use std::time::{Duration, UNIX_EPOCH};

use mcplens::tracking::ids::IdGen;
use mcplens::tracking::{
    BuildConfig, EventBuilder, Identity, Method, Operation, Payload, PeerInfo, RequestId, SessionInfo, SessionKey,
};
use serde_json::{json, Value};

fn op<'a>(method: Method, params: Payload<'a>, result: Payload<'a>) -> Operation<'a> {
    Operation {
        request_id: RequestId::Number(1),
        params,
        result,
        ..Operation::new(
            SessionKey(1),
            method,
            UNIX_EPOCH + Duration::from_secs(1_767_323_045),
            Duration::from_micros(9),
        )
    }
}

fn session() -> SessionInfo {
    SessionInfo { id: "ses_2fQzR0u6Yx6w1h6yH7rB1cP9aZk".into(), ..SessionInfo::default() }
}

fn build(o: &Operation<'_>, s: &SessionInfo) -> mcplens::tracking::Built {
    EventBuilder::new(BuildConfig::default(), IdGen::seeded(7)).build(o, s).expect("an event")
}

/// Events are capped at 100 KiB, but the request id, the client's `clientInfo` (from the session
/// or from `initialize` params), the protocol version and the identity's id and name are never
/// cut, so one long client-controlled string makes the event as large as it likes.
///
/// Fixed: every client-, host- or hook-chosen string outside the payloads (request id, client and
/// server info, protocol version, identity id and name, error kind, parent span id) is cut to
/// `max_string_bytes` like `resourceName`, and cut further by the event-size cap.
#[test]
fn uncapped_event_fields() {
    let long = "x".repeat(200_000);
    // A JSON-RPC string id is the client's choice.
    let mut o = op(Method::ToolsList, Payload::None, Payload::None);
    o.request_id = RequestId::Text(&long);
    let built = build(&o, &session());
    assert!(built.json.len() <= 100 * 1024, "request id: event of {} bytes", built.json.len());

    // So is `clientInfo` in `initialize`.
    let params = json!({"protocolVersion": long, "clientInfo": {"name": long, "version": long}}).to_string();
    let built = build(&op(Method::Initialize, Payload::Json(&params), Payload::None), &session());
    assert!(built.json.len() <= 100 * 1024, "clientInfo: event of {} bytes", built.json.len());

    let s = SessionInfo {
        client: Some(PeerInfo::new(long.clone(), Some(&long))),
        identity: Some(Identity { id: Some(long.clone()), name: Some(long.clone()), data: None }),
        ..session()
    };
    let built = build(&op(Method::ToolsList, Payload::None, Payload::None), &s);
    assert!(built.json.len() <= 100 * 1024, "session: event of {} bytes", built.json.len());
}

/// An array over the breadth cap keeps 100 items and one `[truncated: N more items]` marker. A
/// payload passed as a value (`Payload::Value`/`Serialize`, e.g. rmcp's `Tracked` wrapper), or as
/// JSON text longer than the string cap + 1 KiB, is capped twice (before redaction with slack, then
/// exactly), and the second pass counts the first pass's marker as an item: 150 items say
/// "1 more items" instead of "50 more items" (objects likewise: "1 more keys").
///
/// Fixed: the pass before redaction cuts strings only; depth and breadth are cut once, after
/// redaction. The event-size cap's tighter pass reads an earlier marker's count where that pass
/// listed a breadth cut (`event_size_recut_keeps_the_counts`).
#[test]
fn breadth_marker_counts_the_marker() {
    let params = json!({"name": "t", "arguments": {"items": (0..150).collect::<Vec<_>>()}});
    let built = build(&op(Method::ToolsCall, Payload::Value(&params), Payload::None), &session());
    let items = built.event.parameters.as_ref().expect("parameters").value()["arguments"]["items"].clone();
    assert_eq!(items[100], json!("[truncated: 50 more items]"));
}

/// The same operation gives different events depending on whether the host passed its payload as
/// JSON text (Python, Node) or as a value (Rust/rmcp): besides the marker count above, a value is
/// cut (depth) before redaction and text after, so `{"password": [..]}` past the depth cap reads
/// `[REDACTED]` from one host and `[truncated: nested deeper than N]` from another, and
/// `originalBytes` of a cut string is its size before redaction from one and after from the other.
/// DESIGN.md: "Rust, Python and Node give identical results on the same input".
///
/// Fixed: one cap order for every form (strings with slack, redaction, then exact caps), and the
/// pre-redaction string cut decided by the values' contents, `identity.data` included.
#[test]
fn payload_form_changes_capped_events() {
    let both = |config: BuildConfig, v: &Value, s: &SessionInfo| {
        let text = v.to_string();
        let mut events = [Payload::Json(&text), Payload::Value(v)].map(|p| {
            let built = EventBuilder::new(config.clone(), IdGen::seeded(7))
                .build(&op(Method::ToolsList, p, Payload::None), s)
                .expect("an event");
            serde_json::from_str::<Value>(&built.json).expect("JSON")
        });
        let [a, b] = std::mem::take(&mut events);
        assert_eq!(a, b, "JSON text vs value");
    };
    // Depth cap before or after redaction.
    let limits = mcplens::tracking::PayloadLimits { max_depth: 1, ..Default::default() };
    both(BuildConfig { limits, ..BuildConfig::default() }, &json!({"password": [null]}), &session());
    // `originalBytes` before or after redaction (the identity is capped with the payloads).
    let limits = mcplens::tracking::PayloadLimits { max_string_bytes: 64, ..Default::default() };
    let data = json!([format!(" Bearer abcdefghijklmnop {}", "x".repeat(1070))]);
    let s = SessionInfo { identity: Some(Identity { id: None, name: None, data: Some(data) }), ..session() };
    both(BuildConfig { limits, ..BuildConfig::default() }, &json!({}), &s);
}

/// A payload the builder keeps as the host's JSON text keeps the host's whitespace, newlines
/// included, so one event becomes several JSONL lines (and `ExportItem::json` is documented as
/// "compact, no newline"). Any host that passes pretty-printed JSON (`json.dumps(indent=2)`,
/// `JSON.stringify(v, null, 2)`, `serde_json::to_string_pretty`) splits its events.
///
/// Fixed: the fast path keeps text only when the whitespace inside it is spaces.
#[test]
fn kept_json_text_keeps_its_newlines() {
    let params = "{\n  \"name\": \"echo\",\n  \"arguments\": {\"q\": 1}\n}";
    let built = build(&op(Method::ToolsCall, Payload::Json(params), Payload::None), &session());
    assert!(!built.json.contains('\n'), "an event is one line: {}", built.json);
}

/// Caps skip every value under a key named `…` (the key the breadth cut adds), so a payload that
/// uses that key itself escapes the string, depth and breadth caps (only the 100 KiB event cap
/// still applies).
///
/// Fixed: caps walk every key; a payload key named `…` in an object over the breadth cap counts
/// among the cut keys.
#[test]
fn a_key_named_like_the_marker_escapes_the_caps() {
    let params = json!({"name": "t", "arguments": {"…": "x".repeat(50_000)}}).to_string();
    let built = build(&op(Method::ToolsCall, Payload::Json(&params), Payload::None), &session());
    let v = built.event.parameters.as_ref().expect("parameters").value()["arguments"]["…"].clone();
    assert!(v.as_str().expect("a string").len() <= 32 * 1024, "{} bytes kept", v.as_str().unwrap_or("").len());
}

/// When params arrive as JSON text, the fast path reads `name`, `uri` and `_meta.traceparent` with
/// a derived `Deserialize`, which also accepts an array by position: params `["evil-tool"]` name the
/// resource `evil-tool` (and a third element `{"traceparent": …}` sets the trace parent), while
/// the same params as a value (Rust hosts) have no resource name.
///
/// Fixed: the fast-path scanner (`core/src/tracking/pipeline/scan.rs`) reads an object only.
#[test]
fn array_params_name_the_resource() {
    let built = build(&op(Method::ToolsCall, Payload::Json(r#"["evil-tool"]"#), Payload::None), &session());
    assert_eq!(built.event.resource_name, None);
}

/// The event-size cap shrinks payloads, `resourceName` and `error.message`, but never `truncated`:
/// up to 100 entries whose JSON Pointer paths hold the payload's keys, which no cap cuts. A key of
/// 150 KB above a string that gets cut gives a 150 KB path, so the event stays over 100 KiB even
/// after `parameters` is replaced by its marker (whose cut entries still point into it).
///
/// Fixed: paths are cut to 512 bytes; the entries under a part replaced by its marker are dropped;
/// the event-size cap's last step keeps only as many entries as fit, plus one at `/truncated`.
#[test]
fn truncation_paths_escape_the_event_cap() {
    let key = "k".repeat(150_000);
    let params = json!({"name": "t", "arguments": {key: "x".repeat(40_000)}}).to_string();
    let built = build(&op(Method::ToolsCall, Payload::Json(&params), Payload::None), &session());
    assert!(built.json.len() <= 100 * 1024, "event of {} bytes", built.json.len());
}

/// The string caps count UTF-8 bytes of text, the event cap bytes of JSON. JSON escaping makes a
/// control character six bytes (`\u0001`), so the event-size cap's last step, which cuts
/// `resourceName` and `error.message` to 1 KiB of text, can leave 6 KiB each: at the smallest
/// allowed event cap (4,096 bytes) one error message of control characters keeps the event over it
/// (at the 100 KiB default, the unescaped fields of `uncapped_event_fields` do).
///
/// Fixed: the event-size cap's string steps (1 KiB, then 128 bytes) measure JSON bytes.
#[test]
fn escaping_is_not_counted() {
    let limits = mcplens::tracking::PayloadLimits { max_event_bytes: 4096, ..Default::default() };
    let message = "\u{1}".repeat(3000);
    let mut o = op(Method::ToolsCall, Payload::Json(r#"{"name":"t"}"#), Payload::None);
    o.error = Some(mcplens::tracking::RpcError { code: -32000, message: &message });
    let built = EventBuilder::new(BuildConfig { limits, ..BuildConfig::default() }, IdGen::seeded(7))
        .build(&o, &session())
        .expect("an event");
    assert!(built.json.len() <= 4096, "event of {} bytes", built.json.len());
}

/// The event-size cap re-cuts payloads with tighter caps; an array or object the exact caps had
/// already cut must still say how many entries the payload really had beyond those kept.
#[test]
fn event_size_recut_keeps_the_counts() {
    let items: Vec<String> = (0..150).map(|i| format!("{i}-{}", "x".repeat(2000))).collect();
    let keys: serde_json::Map<String, Value> = (0..150).map(|i| (format!("k{i:03}"), json!(i))).collect();
    let params = json!({"name": "t", "arguments": {"items": items, "keys": keys}});
    for payload in [Payload::Value(&params), Payload::Json(&params.to_string())] {
        let built = build(&op(Method::ToolsCall, payload, Payload::None), &session());
        assert!(built.json.len() <= 100 * 1024, "event of {} bytes", built.json.len());
        let p = built.event.parameters.as_ref().expect("parameters").value().into_owned();
        assert_eq!(p["arguments"]["items"][20], json!("[truncated: 130 more items]"), "{p}");
        assert_eq!(p["arguments"]["keys"]["…"], json!("[truncated: 130 more keys]"), "{p}");
    }
}

/// Found after the fixes above: a payload kept as the host's text (within the normal caps) skipped
/// the event-size cap's tighter pass, which cuts values only, so the same payload as text and as a
/// value gave different events (a marker counting 34,571 bytes against 1,035).
///
/// Fixed: the event-size cap turns kept text into a value before its tighter pass.
#[test]
fn kept_text_takes_the_event_size_recut() {
    let limits = mcplens::tracking::PayloadLimits { max_event_bytes: 8192, ..Default::default() };
    let params = json!({"name": "x".repeat(20_000), "arguments": {"a": "y".repeat(2000)}});
    let text = params.to_string();
    let [a, b] = [Payload::Json(&text), Payload::Value(&params)].map(|p| {
        let built = EventBuilder::new(BuildConfig { limits, ..BuildConfig::default() }, IdGen::seeded(7))
            .build(&op(Method::PromptsGet, p, Payload::None), &session())
            .expect("an event");
        assert!(built.json.len() <= 8192, "event of {} bytes", built.json.len());
        built.json
    });
    assert_eq!(a, b);
}
