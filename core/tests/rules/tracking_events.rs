//! The pure half of tracking: golden events, the documented schema, redaction and payload caps.
//! Deterministic: a seeded id generator, fixed times, no threads.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use mcplens::tracking::ids::IdGen;
use mcplens::tracking::{
    string_hook, BuildConfig, ErrorInfo, ErrorKind, Event, EventBuilder, ExportError, Identity, Method, NotBuilt,
    Operation, Payload, PayloadLimits, PeerInfo, RequestId, RpcError, SessionInfo, SessionKey, TrackingError,
    Transport, Truncation, TruncationReason,
};
use serde_json::{json, Value};

const T0: u64 = 1_767_323_045_678; // 2026-01-02T03:04:05.678Z

fn op<'a>(method: Method, params: Payload<'a>, result: Payload<'a>) -> Operation<'a> {
    Operation {
        request_id: RequestId::Number(3),
        params,
        result,
        ..Operation::new(SessionKey(1), method, UNIX_EPOCH + Duration::from_millis(T0), Duration::from_micros(2_345))
    }
}

fn session() -> SessionInfo {
    SessionInfo {
        id: "ses_2fQzR0u6Yx6w1h6yH7rB1cP9aZk".into(),
        transport: Some(Transport::Stdio),
        client: Some(PeerInfo::new("claude-code", Some("2.1.0"))),
        protocol_version: Some("2025-06-18".into()),
        identity: None,
    }
}

fn config() -> BuildConfig {
    BuildConfig { server: Some(PeerInfo::new("notes-server", Some("0.3.0"))), ..BuildConfig::default() }
}

fn builder() -> EventBuilder {
    EventBuilder::new(config(), IdGen::seeded(42))
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tracking")
}

/// Compare with `tests/golden/tracking/<name>.json`; `MCPLENS_UPDATE_GOLDEN=1` rewrites it.
fn golden(name: &str, event: &Event) {
    let path = golden_dir().join(format!("{name}.json"));
    let got: Value = serde_json::to_value(event).unwrap();
    if std::env::var_os("MCPLENS_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing golden file {}", path.display()));
    let want: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(got, want, "{name}: got\n{}", serde_json::to_string_pretty(&got).unwrap());
    // And the event reads back as itself.
    let back: Event = serde_json::from_value(got).unwrap();
    assert_eq!(&back, event);
}

#[test]
fn golden_tools_call() {
    let params = json!({
        "name": "echo",
        "arguments": {"text": "hi"},
        "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "progressToken": 1}
    });
    let result = r#"{"content":[{"type":"text","text":"hi"}]}"#;
    let e =
        builder().build(&op(Method::ToolsCall, Payload::Value(&params), Payload::Json(result)), &session()).unwrap();
    assert_eq!(e.event.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(e.event.parent_span_id.as_deref(), Some("00f067aa0ba902b7"));
    golden("tools_call", &e.event);
}

#[test]
fn golden_tools_call_tool_error() {
    let result = r#"{"content":[{"type":"text","text":"division by zero"}],"isError":true}"#;
    let e = builder()
        .build(
            &op(
                Method::ToolsCall,
                Payload::Json(r#"{"name":"divide","arguments":{"a":1,"b":0}}"#),
                Payload::Json(result),
            ),
            &session(),
        )
        .unwrap();
    assert!(e.event.is_error);
    assert_eq!(e.event.error.as_ref().unwrap().kind, ErrorKind::Tool);
    golden("tools_call_tool_error", &e.event);
}

#[test]
fn golden_resources_read_text_and_blob() {
    let result = json!({"contents": [
        {"uri": "note://1", "mimeType": "text/markdown", "text": "# Hello\n"},
        {"uri": "note://1/attachment", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
    ]});
    let e = builder()
        .build(&op(Method::ResourcesRead, Payload::Json(r#"{"uri":"note://1"}"#), Payload::Value(&result)), &session())
        .unwrap();
    assert_eq!(e.event.resource_name.as_deref(), Some("note://1"));
    golden("resources_read", &e.event);
}

#[test]
fn golden_resources_read_error() {
    let mut o =
        op(Method::ResourcesRead, Payload::Json(r#"{"uri":"https://files.example/r?sig=s3cr3t&v=2"}"#), Payload::None);
    o.error = Some(RpcError { code: -32002, message: "Resource not found: https://files.example/r?sig=s3cr3t&v=2" });
    let e = builder().build(&o, &session()).unwrap();
    assert_eq!(e.event.resource_name.as_deref(), Some("https://files.example/r?sig=[REDACTED]&v=2"));
    assert_eq!(
        e.event.error,
        Some(ErrorInfo {
            kind: ErrorKind::Rpc(-32002),
            message: "Resource not found: https://files.example/r?sig=[REDACTED]&v=2".into()
        })
    );
    golden("resources_read_error", &e.event);
}

#[test]
fn golden_initialize() {
    let params = r#"{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"inspector","version":"0.9"}}"#;
    let result = r#"{"protocolVersion":"2025-06-18","capabilities":{"resources":{"subscribe":true}},"serverInfo":{"name":"notes-server","version":"0.3.0"}}"#;
    let fresh = SessionInfo { id: "ses_2fQzR0u6Yx6w1h6yH7rB1cP9aZk".into(), ..SessionInfo::default() };
    let e = builder().build(&op(Method::Initialize, Payload::Json(params), Payload::Json(result)), &fresh).unwrap();
    assert_eq!(e.event.client, Some(PeerInfo::new("inspector", Some("0.9"))));
    assert_eq!(e.event.protocol_version.as_deref(), Some("2025-06-18"));
    golden("initialize", &e.event);
}

#[test]
fn golden_prompts_get_and_lists() {
    let mut b = builder();
    let e = b
        .build(
            &op(
                Method::PromptsGet,
                Payload::Json(r#"{"name":"summarize","arguments":{"topic":"q3"}}"#),
                Payload::Json(r#"{"messages":[{"role":"user","content":{"type":"text","text":"Summarize q3"}}]}"#),
            ),
            &session(),
        )
        .unwrap();
    assert_eq!(e.event.resource_name.as_deref(), Some("summarize"));
    golden("prompts_get", &e.event);
    let e = b
        .build(
            &Operation {
                request_id: RequestId::Text("req-9"),
                ..op(
                    Method::ResourcesTemplatesList,
                    Payload::None,
                    Payload::Json(r#"{"resourceTemplates":[{"uriTemplate":"note://{id}","name":"notes"}]}"#),
                )
            },
            &session(),
        )
        .unwrap();
    assert_eq!(e.event.resource_name, None);
    golden("resources_templates_list", &e.event);
}

// ---------------------------------------------------------------------------------------------
// The documented schema matches the serializer.

fn full_event() -> Event {
    Event {
        schema: 1,
        id: "evt_x".into(),
        method: Method::ToolsCall,
        timestamp: "2026-01-02T03:04:05.678Z".into(),
        duration_ms: 1.0,
        session_id: Some("ses_x".into()),
        request_id: Some(json!(1)),
        protocol_version: Some("2025-06-18".into()),
        client: Some(PeerInfo::new("c", Some("1"))),
        server: Some(PeerInfo::new("s", Some("1"))),
        transport: Some(Transport::Http),
        resource_name: Some("t".into()),
        resource_uris: vec!["u".into()],
        parameters: Some(json!({}).into()),
        response: Some(json!({}).into()),
        is_error: true,
        error: Some(ErrorInfo { kind: ErrorKind::Rpc(-1), message: "m".into() }),
        identity: Some(Identity { id: Some("u".into()), name: Some("n".into()), data: Some(json!({})) }),
        trace_id: "0".repeat(32),
        span_id: "0".repeat(16),
        parent_span_id: Some("0".repeat(16)),
        truncated: vec![Truncation { path: "/p".into(), reason: TruncationReason::Depth, original_bytes: Some(1) }],
    }
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// The field names of the table that follows `heading` in docs/events.md (rows "| `name` | …").
fn documented(doc: &str, heading: &str) -> BTreeSet<String> {
    let start = doc.find(heading).unwrap_or_else(|| panic!("docs/events.md has no heading {heading:?}"));
    let rest = &doc[start + heading.len()..];
    let mut out = BTreeSet::new();
    let mut in_table = false;
    for line in rest.lines() {
        let l = line.trim();
        if l.starts_with('|') {
            in_table = true;
            if let Some(name) = l.trim_start_matches('|').trim().strip_prefix('`').and_then(|s| s.split('`').next()) {
                out.insert(name.to_owned());
            }
        } else if in_table || l.starts_with('#') {
            break;
        }
    }
    out
}

#[test]
fn docs_match_the_serializer() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/events.md")).unwrap();
    let v = serde_json::to_value(full_event()).unwrap();
    assert_eq!(documented(&doc, "## Fields"), keys(&v), "top-level fields");
    assert_eq!(documented(&doc, "### `client`, `server`"), keys(&v["client"]));
    assert_eq!(documented(&doc, "### `error`"), keys(&v["error"]));
    assert_eq!(documented(&doc, "### `identity`"), keys(&v["identity"]));
    assert_eq!(documented(&doc, "### `truncated[]`"), keys(&v["truncated"][0]));
    // Every documented event type and truncation reason exists.
    for m in Method::ALL {
        assert!(doc.contains(&format!("`{}`", m.event_type())), "{} undocumented", m.event_type());
    }
    for r in ["string_length", "depth", "breadth", "event_size", "payload_size", "invalid_json"] {
        let parsed: TruncationReason = serde_json::from_value(json!(r)).unwrap();
        assert_eq!(serde_json::to_value(parsed).unwrap(), json!(r));
        assert!(doc.contains(&format!("`{r}`")), "{r} undocumented");
    }
}

#[test]
fn error_codes_are_documented() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/errors.md")).unwrap();
    let section = &doc[doc.find("## Tracking").expect("a Tracking section")..];
    let errors = [
        TrackingError::invalid("queueCapacity", "x"),
        TrackingError::Io { what: String::new(), source: std::io::Error::other("x") },
        TrackingError::Timeout { pending: 1, waited: Duration::ZERO },
        TrackingError::hook("x"),
    ];
    for e in errors {
        assert!(section.contains(&format!("`{}`", e.code())), "{} undocumented", e.code());
    }
    for e in [ExportError::permanent("x", 0), ExportError::panicked()] {
        assert!(section.contains(&format!("`{}`", e.code())), "{} undocumented", e.code());
    }
}

// ---------------------------------------------------------------------------------------------
// Redaction.

#[test]
fn redaction_of_headers_uris_and_nested_params() {
    let params = json!({
        "uri": "https://api.example.com/v1/doc?id=7&access_token=abc&api_key=k1",
        "_meta": {"headers": {"Authorization": "Bearer sk-live-abcdefghijklmnop", "Cookie": "sid=1", "User-Agent": "x"}},
        "arguments": {"config": {"db": {"password": "hunter2", "host": "db"}}, "note": "call me with ghp_0123456789abcdefghijklmnopqrstuvwxyz"}
    });
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";
    let result = json!({"contents": [{"uri": "https://user:pw@h.example/x?token=t", "text": jwt}]});
    let mut b = EventBuilder::new(BuildConfig { capture_resource_text: true, ..config() }, IdGen::seeded(1));
    let e = b
        .build(&op(Method::ResourcesRead, Payload::Value(&params), Payload::Value(&result)), &session())
        .unwrap()
        .event;
    let p = e.parameters.unwrap().into_value();
    assert_eq!(p["uri"], "https://api.example.com/v1/doc?id=7&access_token=[REDACTED]&api_key=[REDACTED]");
    assert_eq!(
        e.resource_name.as_deref(),
        Some("https://api.example.com/v1/doc?id=7&access_token=[REDACTED]&api_key=[REDACTED]")
    );
    assert_eq!(
        p["_meta"]["headers"],
        json!({"Authorization": "[REDACTED]", "Cookie": "[REDACTED]", "User-Agent": "x"})
    );
    assert_eq!(p["arguments"]["config"]["db"], json!({"password": "[REDACTED]", "host": "db"}));
    assert_eq!(p["arguments"]["note"], "call me with [REDACTED]");
    let c = &e.response.unwrap().into_value()["contents"][0];
    assert_eq!(c["uri"], "https://[REDACTED]@h.example/x?token=[REDACTED]");
    assert_eq!(c["text"], "[REDACTED]");
    // The digest is of the original bytes, not of the redacted text.
    assert_eq!(c["textBytes"], jwt.len() as u64);
}

#[test]
fn builtin_redaction_can_be_turned_off() {
    let mut b = EventBuilder::new(BuildConfig { builtin_redaction: false, ..config() }, IdGen::seeded(1));
    let e = b
        .build(&op(Method::ResourcesRead, Payload::Json(r#"{"uri":"x://h?token=t"}"#), Payload::None), &session())
        .unwrap();
    assert_eq!(e.event.resource_name.as_deref(), Some("x://h?token=t"));
}

#[test]
fn user_hooks() {
    let strings =
        BuildConfig { redact_string: Some(string_hook(|s: &str| Ok(s.replace("alice", "[user]")))), ..config() };
    let mut b = EventBuilder::new(strings, IdGen::seeded(1));
    let e = b
        .build(&op(Method::ResourcesRead, Payload::Json(r#"{"uri":"mail://alice/inbox"}"#), Payload::None), &session())
        .unwrap();
    assert_eq!(e.event.resource_name.as_deref(), Some("mail://[user]/inbox"));
    assert_eq!(e.event.parameters.unwrap().into_value()["uri"], "mail://[user]/inbox");

    let failing =
        BuildConfig { redact_string: Some(string_hook(|_: &str| Err(TrackingError::hook("no")))), ..config() };
    let r = EventBuilder::new(failing, IdGen::seeded(1))
        .build(&op(Method::ToolsList, Payload::Json(r#"{"cursor":"c"}"#), Payload::None), &session());
    assert!(matches!(r, Err(NotBuilt::HookFailed(_))));

    let panicking = BuildConfig { redact_string: Some(string_hook(|_: &str| panic!("hook bug"))), ..config() };
    let r = EventBuilder::new(panicking, IdGen::seeded(1))
        .build(&op(Method::ToolsList, Payload::Json(r#"{"a":"b"}"#), Payload::None), &session());
    assert!(matches!(r, Err(NotBuilt::HookFailed(_))));

    let dropping = BuildConfig {
        redact_event: Some(std::sync::Arc::new(|e: Event| Ok((e.method != Method::ToolsList).then_some(e)))),
        ..config()
    };
    let mut b = EventBuilder::new(dropping, IdGen::seeded(1));
    assert!(matches!(
        b.build(&op(Method::ToolsList, Payload::None, Payload::None), &session()),
        Err(NotBuilt::Filtered)
    ));
    assert!(b.build(&op(Method::PromptsList, Payload::None, Payload::None), &session()).is_ok());

    // System fields survive an event hook; other changes stay.
    let meddling = BuildConfig {
        redact_event: Some(std::sync::Arc::new(|mut e: Event| {
            e.id = "evt_forged".into();
            e.session_id = Some("ses_forged".into());
            e.parameters = None;
            Ok(Some(e))
        })),
        ..config()
    };
    let e = EventBuilder::new(meddling, IdGen::seeded(1))
        .build(&op(Method::ToolsList, Payload::Json(r#"{"cursor":"c"}"#), Payload::None), &session())
        .unwrap()
        .event;
    assert!(e.id.starts_with("evt_") && e.id != "evt_forged");
    assert_eq!(e.session_id, Some(session().id));
    assert_eq!(e.parameters, None);
}

// ---------------------------------------------------------------------------------------------
// Payload caps.

#[test]
fn ten_megabyte_blob_read_becomes_a_small_event() {
    // 10 MiB of bytes, base64-encoded (about 13.3 MiB of JSON text).
    let raw_len = 10 * 1024 * 1024;
    let chunk = "QUJD".repeat(1024); // "ABC" x 1024 per 4 KiB of base64
    let blob = chunk.repeat(raw_len / 3072 + 1);
    let blob = &blob[..(raw_len / 3) * 4];
    let result = format!(
        r#"{{"contents":[{{"uri":"file:///big.bin","mimeType":"application/octet-stream","blob":"{blob}"}}]}}"#
    );
    let e = builder()
        .build(
            &op(Method::ResourcesRead, Payload::Json(r#"{"uri":"file:///big.bin"}"#), Payload::Json(&result)),
            &session(),
        )
        .unwrap();
    assert!(e.json.len() < 1200, "event is {} bytes", e.json.len());
    let c = &e.event.response.as_ref().unwrap().value()["contents"][0];
    assert_eq!(c["blobBytes"], (raw_len / 3 * 3) as u64);
    assert_eq!(c["sha256"].as_str().unwrap().len(), 64);
    assert!(c.get("blob").is_none());
    assert!(e.event.truncated.is_empty(), "{:?}", e.event.truncated);
}

#[test]
fn long_strings_depth_breadth_and_event_size() {
    let long = "a".repeat(40 * 1024);
    let mut deep = json!("bottom");
    for _ in 0..15 {
        deep = json!({ "d": deep });
    }
    let wide: Vec<u32> = (0..150).collect();
    let params = json!({"name": "t", "arguments": {"long": long, "deep": deep, "wide": wide}});
    let e = builder().build(&op(Method::ToolsCall, Payload::Value(&params), Payload::None), &session()).unwrap().event;
    let args = &e.parameters.as_ref().unwrap().value()["arguments"];
    let s = args["long"].as_str().unwrap();
    assert!(s.len() <= 32 * 1024 && s.ends_with("…[truncated: 40960 bytes]"), "{}", s.len());
    assert_eq!(args["wide"].as_array().unwrap().len(), 101);
    let reasons: Vec<(&str, TruncationReason)> = e.truncated.iter().map(|t| (t.path.as_str(), t.reason)).collect();
    assert!(reasons.contains(&("/parameters/arguments/long", TruncationReason::StringLength)), "{reasons:?}");
    assert!(reasons.contains(&("/parameters/arguments/wide", TruncationReason::Breadth)), "{reasons:?}");
    assert!(reasons
        .iter()
        .any(|(p, r)| p.starts_with("/parameters/arguments/deep/d/d") && *r == TruncationReason::Depth));
    let long_str = e.truncated.iter().find(|t| t.path == "/parameters/arguments/long").unwrap();
    assert_eq!(long_str.original_bytes, Some(40 * 1024));

    // Four strings of 30 KB each fit the string cap but not the 100 KB event cap.
    let s30 = "b".repeat(30 * 1024);
    let params = json!({"name": "t", "arguments": {"a": s30, "b": s30, "c": s30, "d": s30}});
    let built = builder().build(&op(Method::ToolsCall, Payload::Value(&params), Payload::None), &session()).unwrap();
    assert!(built.json.len() <= 100 * 1024, "{}", built.json.len());
    assert!(built.event.truncated.iter().any(|t| t.reason == TruncationReason::EventSize));
}

#[test]
fn capture_switches() {
    let cfg = BuildConfig { capture_parameters: false, capture_responses: false, ..config() };
    let mut b = EventBuilder::new(cfg, IdGen::seeded(1));
    let o = Operation {
        tool_error: true,
        ..op(
            Method::ToolsCall,
            Payload::Json(r#"{"name":"t","arguments":{"x":1}}"#),
            Payload::Json(r#"{"content":[]}"#),
        )
    };
    let e = b.build(&o, &session()).unwrap().event;
    assert_eq!(e.parameters, None);
    assert_eq!(e.response, None);
    assert_eq!(e.resource_name.as_deref(), Some("t"));
    assert!(e.is_error);
}

#[test]
fn limits_are_configurable() {
    let cfg = BuildConfig { limits: PayloadLimits { max_string_bytes: 100, ..PayloadLimits::default() }, ..config() };
    let params = json!({"name": "t", "arguments": {"s": "x".repeat(500)}});
    let e = EventBuilder::new(cfg, IdGen::seeded(1))
        .build(&op(Method::ToolsCall, Payload::Value(&params), Payload::None), &session())
        .unwrap()
        .event;
    assert!(e.parameters.unwrap().into_value()["arguments"]["s"].as_str().unwrap().len() <= 100);
}

#[test]
fn payloads_kept_as_text_match_the_parsed_path() {
    // A string hook that changes nothing forces every payload through parse → walk → serialize;
    // without it, clean payloads are kept as text. Both must give the same events.
    let cases: &[(Method, &str, &str)] = &[
        (
            Method::ToolsCall,
            r#"{"name":"echo","arguments":{"text":"hi","n":[1,2,3]}}"#,
            r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
        ),
        (Method::ToolsCall, r#"{"name":"t","arguments":{"password":"p"}}"#, r#"{"content":[]}"#),
        (
            Method::ToolsCall,
            r#"{"name":"t","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#,
            r#"{"content":[{"type":"text","text":"x"}],"isError":true}"#,
        ),
        (
            Method::ToolsCall,
            r#"{"name":"t","arguments":{"u":"see https://h/x?token=1"}}"#,
            r#"{"content":[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}]}"#,
        ),
        (
            Method::ToolsCall,
            r#"{"name":"t","arguments":{"s":"line\nbreak \u00e9"}}"#,
            r#"{"structuredContent":{"k":"Bearer abcdefghijkl"}}"#,
        ),
        (Method::ResourcesRead, r#"{"uri":"note://1"}"#, r#"{"contents":[{"uri":"note://1","text":"hello"}]}"#),
        (Method::ResourcesSubscribe, r#"{"uri":"note://1"}"#, r#"{}"#),
        (Method::PromptsGet, r#"{"name":"p","arguments":{"a":"b"}}"#, r#"{"messages":[]}"#),
        (
            Method::ResourcesList,
            r#"{"cursor":"abc"}"#,
            r#"{"resources":[{"uri":"a://b","name":"n"}],"nextCursor":"c"}"#,
        ),
        (Method::ToolsList, r#"[1,2]"#, r#""odd""#),
        (Method::ToolsList, r#"{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":1}}}}}}}}}}}"#, r#"{}"#),
        (Method::ToolsCall, r#"{"name":5}"#, r#"{"isError":"yes"}"#),
    ];
    let slow_cfg = BuildConfig { redact_string: Some(string_hook(|s: &str| Ok(s.to_owned()))), ..config() };
    let wide = format!("[{}]", (0..150).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let mut all: Vec<(Method, String, String)> =
        cases.iter().map(|(m, p, r)| (m.clone(), p.to_string(), r.to_string())).collect();
    all.push((Method::ToolsList, format!(r#"{{"list":{wide}}}"#), wide.clone()));
    for (method, params, result) in &all {
        let o = op(method.clone(), Payload::Json(params), Payload::Json(result));
        let fast = EventBuilder::new(config(), IdGen::seeded(9)).build(&o, &session()).unwrap();
        let slow = EventBuilder::new(slow_cfg.clone(), IdGen::seeded(9)).build(&o, &session()).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&fast.json).unwrap(),
            serde_json::from_str::<Value>(&slow.json).unwrap(),
            "{method:?} {params} {result}"
        );
        assert_eq!(fast.event, slow.event);
    }
    // The first case is kept as text; the second (a secret key) is not.
    let o = op(Method::ToolsCall, Payload::Json(all[0].1.as_str()), Payload::Json(all[0].2.as_str()));
    let e = EventBuilder::new(config(), IdGen::seeded(9)).build(&o, &session()).unwrap().event;
    assert_eq!(e.parameters.as_ref().unwrap().as_raw(), Some(all[0].1.as_str()));
    assert_eq!(e.response.as_ref().unwrap().as_raw(), Some(all[0].2.as_str()));
    let o = op(Method::ToolsCall, Payload::Json(all[1].1.as_str()), Payload::None);
    let e = EventBuilder::new(config(), IdGen::seeded(9)).build(&o, &session()).unwrap().event;
    assert_eq!(e.parameters.as_ref().unwrap().as_raw(), None);
}

/// The one-pass check that keeps payload text as it is: more shapes near its edges (numbers,
/// whitespace, duplicate and mistyped peeked keys, `_meta`, exactly-at-the-cap depth and breadth,
/// strings that look like but are not secrets, and ones that are). Each gives the same event as
/// the full path, and the plain ones are really kept as text.
#[test]
fn payloads_kept_as_text_match_the_parsed_path_at_the_edges() {
    let depth10 = r#"{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":1}}}}}}}}}}"#;
    let breadth100 = format!("{{\"l\":[{}]}}", (0..100).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let breadth101 = format!("{{\"l\":[{}]}}", (0..101).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    // (method, params, result, both kept as text)
    let cases: Vec<(Method, String, String, bool)> = vec![
        (
            Method::ToolsCall,
            r#"{"name":"search_notes","arguments":{"query":"quarterly revenue by region","limit":20,"include_archived":false,"tags":["finance","q3","emea"],"sort":"relevance"}}"#.into(),
            r#"{"content":[{"type":"text","text":"Found 3 notes: Q3 revenue EMEA (note://812), see https://example.com/a/b and ask: why"}],"isError":false}"#.into(),
            true,
        ),
        (Method::ToolsCall, r#" { "name" : "t" , "arguments" : { "n" : -0.5 , "z" : 0 } } "#.into(), "{}".into(), true),
        (Method::ToolsCall, r#"{"name":"t","arguments":{"n":1e3,"m":2E-2}}"#.into(), r#"{"isError":null}"#.into(), false),
        (Method::ToolsCall, r#"{"name":"a","name":"b"}"#.into(), r#"{"isError":false,"isError":true}"#.into(), false),
        (Method::ToolsCall, r#"{"name":["t"]}"#.into(), r#"{"isError":0}"#.into(), false),
        (
            Method::ToolsCall,
            r#"{"name":"t","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#.into(),
            r#"{"content":[]}"#.into(),
            true,
        ),
        (Method::ToolsCall, r#"{"name":"t","_meta":{"traceparent":7}}"#.into(), "{}".into(), false),
        (Method::ToolsCall, r#"{"name":"t","_meta":{},"_meta":{"traceparent":"x"}}"#.into(), "{}".into(), false),
        (Method::ToolsCall, r#"{"name":"t","_meta":null}"#.into(), "{}".into(), false),
        (Method::ToolsList, depth10.into(), breadth100.clone(), true),
        (Method::ToolsList, format!(r#"{{"x":{depth10}}}"#), breadth101.clone(), false),
        (Method::ToolsList, breadth100.clone(), "{}".into(), true),
        (Method::ToolsList, breadth101, "{}".into(), false),
        (Method::ResourcesRead, r#"{"uri":"file:///notes/a%20b.md"}"#.into(), r#"{"contents":[]}"#.into(), false),
        (Method::ResourcesRead, r#"{"uri":"https://h/x?sig=abc&a=1"}"#.into(), r#"{"contents":[]}"#.into(), false),
        (Method::ResourcesRead, r#"{"uri":"postgres://u:p@db/app"}"#.into(), r#"{"contents":[]}"#.into(), false),
        (Method::ResourcesSubscribe, r#"{"uri":"note://1"}"#.into(), "{}".into(), true),
        (Method::ResourcesSubscribe, r#"{"uri":"note://1#frag"}"#.into(), "{}".into(), false),
        (Method::PromptsGet, r#"{"name":"p","arguments":{"note":"cookie: a=1"}}"#.into(), "{}".into(), false),
        (Method::PromptsGet, r#"{"name":"p","arguments":{"note":"the cookie jar: empty"}}"#.into(), "{}".into(), true),
        (Method::PromptsGet, r#"{"name":"p","arguments":{"k":"ghp_0123456789abcdefghijklmnopqrstuvwxyz"}}"#.into(), "{}".into(), false),
        (Method::PromptsGet, r#"{"name":"p","arguments":{"k":"ghp_short skies bearer of news"}}"#.into(), "{}".into(), true),
        (Method::PromptsGet, r#"{"name":"p","arguments":{"accessToken":5,"monkey":"x"}}"#.into(), "{}".into(), false),
        (Method::ToolsCall, r#"{"name":"t"}"#.into(), r#"{"content":[{"type":"audio","data":"aGk="}]}"#.into(), false),
        (Method::ToolsCall, r#"{"name":"t"}"#.into(), r#"{"content":[{"type":"text","text":"a blob of text"}]}"#.into(), true),
        (Method::ToolsCall, r#"{"name":"t"}"#.into(), r#"{"content":[{"type":"text","text":"blob"}]}"#.into(), false),
        (Method::ToolsCall, r#"{"name":"t","arguments":{"s":"tab	inside"}}"#.into(), "{}".into(), false),
        (Method::ToolsCall, r#"{"name":"t","arguments":{"s":"é ü 😀 \u00e9"}}"#.into(), "{}".into(), false),
        (Method::ToolsCall, r#"{"name":"t","arguments":{"s":"é ü 😀"}}"#.into(), "{}".into(), true),
        (Method::ToolsCall, r#"{"name":"t"} x"#.into(), r#"{"a":1}}"#.into(), false),
    ];
    let slow_cfg = BuildConfig { redact_string: Some(string_hook(|s: &str| Ok(s.to_owned()))), ..config() };
    for (method, params, result, kept) in &cases {
        let o = op(method.clone(), Payload::Json(params), Payload::Json(result));
        let fast = EventBuilder::new(config(), IdGen::seeded(9)).build(&o, &session()).unwrap();
        let slow = EventBuilder::new(slow_cfg.clone(), IdGen::seeded(9)).build(&o, &session()).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&fast.json).unwrap(),
            serde_json::from_str::<Value>(&slow.json).unwrap(),
            "{method:?} {params} {result}"
        );
        assert_eq!(fast.event, slow.event, "{method:?} {params} {result}");
        if *kept {
            let e = &fast.event;
            assert_eq!(e.parameters.as_ref().and_then(|p| p.as_raw()), Some(params.trim()), "{params}");
            if *method != Method::ResourcesRead {
                assert_eq!(e.response.as_ref().and_then(|p| p.as_raw()), Some(result.trim()), "{result}");
            }
        }
    }
}

/// Every event's JSON line is exactly what serde_json writes for the event (the builder writes it
/// directly), on the kept-as-text path, the parsed path, errors, hooks and cuts.
#[test]
fn event_json_is_the_serde_serialization() {
    let hooked = BuildConfig {
        redact_event: Some(std::sync::Arc::new(|mut e: Event| {
            e.duration_ms = f64::NAN;
            e.request_id = Some(json!({"odd": ["id", 1]}));
            e.identity = Some(Identity { id: Some("u\u{1}\"".into()), name: None, data: Some(json!([1, "two"])) });
            Ok(Some(e))
        })),
        ..config()
    };
    let limits = PayloadLimits { max_string_bytes: 64, max_event_bytes: 4096, ..PayloadLimits::default() };
    let long = "x\u{7f}\"\\ é".repeat(40);
    let params_v = json!({"name": "t", "arguments": {"s": long, "deep": [[[[[[[[[[[[1]]]]]]]]]]]]}});
    let params_t = params_v.to_string();
    let cases: Vec<(BuildConfig, Operation<'_>)> = vec![
        (config(), op(Method::ToolsCall, Payload::Json(r#"{"name":"echo"}"#), Payload::Json(r#"{"content":[]}"#))),
        (config(), op(Method::ToolsCall, Payload::Value(&params_v), Payload::Json(r#"{"isError":true}"#))),
        (BuildConfig { limits, ..config() }, op(Method::ToolsCall, Payload::Json(&params_t), Payload::Omitted(9))),
        (hooked, op(Method::ResourcesRead, Payload::Json(r#"{"uri":"a://b?token=x"}"#), Payload::None)),
        (
            config(),
            Operation {
                request_id: RequestId::Text("r\n1"),
                error: Some(RpcError { code: -32002, message: "not found: \u{0}\t\"x\"" }),
                ..op(Method::PromptsGet, Payload::Json("{bad"), Payload::None)
            },
        ),
    ];
    for (cfg, o) in cases {
        let built = EventBuilder::new(cfg, IdGen::seeded(3)).build(&o, &session()).unwrap();
        assert_eq!(built.json, serde_json::to_string(&built.event).unwrap());
    }
}

/// DESIGN: cursors never appear in errors, logs or telemetry. A list request's `cursor` and its
/// result's `nextCursor` are hidden whatever the payload form and redaction settings.
#[test]
fn cursors_never_reach_an_event() {
    let params = json!({"cursor": "c-PLANTED-1"});
    let result =
        json!({"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "note"}], "nextCursor": "c-PLANTED-2"});
    let (p, r) = (params.to_string(), result.to_string());
    for builtin_redaction in [true, false] {
        for (params, result) in
            [(Payload::Json(&p), Payload::Json(&r)), (Payload::Value(&params), Payload::Value(&result))]
        {
            for method in
                [Method::ResourcesTemplatesList, Method::ResourcesList, Method::ToolsList, Method::PromptsList]
            {
                let config = BuildConfig { builtin_redaction, ..config() };
                let built =
                    EventBuilder::new(config, IdGen::seeded(1)).build(&op(method, params, result), &session()).unwrap();
                assert!(!built.json.contains("c-PLANTED"), "{}", built.json);
                let e = built.event;
                assert_eq!(e.parameters.unwrap().value()["cursor"], json!("[REDACTED]"));
                let response = e.response.unwrap().value().into_owned();
                assert_eq!(response["nextCursor"], json!("[REDACTED]"));
                assert_eq!(response["resourceTemplates"][0]["name"], json!("note"), "the rest is kept");
            }
        }
    }
}
