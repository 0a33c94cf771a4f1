//! The HTTP exporters against a loopback receiver: OTLP/HTTP protobuf decoded with the official
//! messages (opentelemetry-proto), and the MCPcat-compatible events API.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use common::{dead_addr, Receiver};
use mcplens::tracking::{
    ExportPolicy, McpcatConfig, Method, Operation, OtlpConfig, Payload, PeerInfo, RequestId, RpcError, Tracker,
    Transport,
};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::trace::v1::{span, status, Span};
use prost::Message;
use serde_json::Value;

const LONG: Duration = Duration::from_secs(60);

fn fast_policy() -> ExportPolicy {
    ExportPolicy {
        max_delay: Duration::ZERO,
        initial_backoff: Duration::from_millis(2),
        max_backoff: Duration::from_millis(50),
        max_attempts: 1_000_000,
        ..ExportPolicy::default()
    }
}

fn attrs(kvs: &[KeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| {
            let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(any_value::Value::StringValue(s)) => s.clone(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), v)
        })
        .collect()
}

fn spans(receiver: &Receiver) -> Vec<(BTreeMap<String, String>, Span)> {
    let mut out = Vec::new();
    for r in receiver.received().iter().filter(|r| r.path == "/v1/traces") {
        assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
        let req = ExportTraceServiceRequest::decode(r.body.as_slice()).expect("valid protobuf");
        for rs in req.resource_spans {
            let res = attrs(&rs.resource.unwrap().attributes);
            for ss in rs.scope_spans {
                assert_eq!(ss.scope.as_ref().unwrap().name, "mcplens");
                for sp in ss.spans {
                    out.push((res.clone(), sp));
                }
            }
        }
    }
    out
}

fn session_tracker(receiver_url: &str) -> Tracker {
    let mut otlp = OtlpConfig::new(receiver_url);
    otlp.headers.push(("x-api-key".into(), "k".into()));
    Tracker::builder().server("notes-server", Some("0.3.0")).export_policy(fast_policy()).otlp(otlp).build().unwrap()
}

#[test]
fn otlp_spans_and_histogram_follow_the_semantic_conventions() {
    let receiver = Receiver::start();
    let t = session_tracker(&receiver.base_url());
    let s = t.open_session(Some("http-1"), Some(Transport::Http));
    t.set_session_client(&s, Some(PeerInfo::new("inspector", Some("1"))), Some("2025-06-18"));
    let now = SystemTime::now();
    let ms = Duration::from_millis;
    let op = |method, id: i64, params: &'static str, dur| Operation {
        request_id: RequestId::Number(id),
        params: Payload::Json(params),
        ..Operation::new(s.key(), method, now, dur)
    };
    t.record(&Operation {
        result: Payload::Json(r#"{"content":[{"type":"text","text":"hi"}]}"#),
        ..op(
            Method::ToolsCall,
            1,
            r#"{"name":"echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#,
            ms(3),
        )
    });
    t.record(&Operation {
        result: Payload::Json(r#"{"content":[{"type":"text","text":"bad"}],"isError":true}"#),
        ..op(Method::ToolsCall, 2, r#"{"name":"divide"}"#, ms(30))
    });
    t.record(&Operation {
        error: Some(RpcError { code: -32002, message: "Resource not found" }),
        ..op(Method::ResourcesRead, 3, r#"{"uri":"file:///secret.txt?token=abc"}"#, ms(15))
    });
    t.record(&op(Method::PromptsGet, 4, r#"{"name":"summarize"}"#, ms(1)));
    t.record(&op(Method::ResourcesList, 5, "{}", ms(700)));
    t.flush(LONG).unwrap();
    let st = t.stats();
    assert_eq!(st.exporter("otlp").unwrap().exported, 5, "{st:?}");
    assert_eq!(st.exporter("otlp-metrics").unwrap().exported, 5, "{st:?}");

    let got = spans(&receiver);
    assert_eq!(got.len(), 5);
    assert!(receiver.received().iter().all(|r| r.header("x-api-key") == Some("k")));
    let by_id: BTreeMap<String, &(BTreeMap<String, String>, Span)> =
        got.iter().map(|x| (attrs(&x.1.attributes)["jsonrpc.request.id"].clone(), x)).collect();
    for (res, sp) in &got {
        assert_eq!(res["service.name"], "notes-server");
        assert_eq!(res["service.version"], "0.3.0");
        assert_eq!(res["telemetry.sdk.name"], "mcplens");
        assert_eq!(sp.kind, span::SpanKind::Server as i32);
        assert_eq!(sp.trace_id.len(), 16);
        assert_eq!(sp.span_id.len(), 8);
        let a = attrs(&sp.attributes);
        assert_eq!(a["mcp.session.id"], s.id());
        assert_eq!(a["mcp.protocol.version"], "2025-06-18");
        assert_eq!(a["network.transport"], "tcp");
        assert!(sp.end_time_unix_nano > sp.start_time_unix_nano);
    }

    // tools/call with a caller's traceparent: named after the tool, child of the caller's span.
    let (_, call) = by_id["1"];
    assert_eq!(call.name, "tools/call echo");
    assert_eq!(call.trace_id, hex("4bf92f3577b34da6a3ce929d0e0e4736"));
    assert_eq!(call.parent_span_id, hex("00f067aa0ba902b7"));
    assert_eq!(call.flags & 0x300, 0x300, "remote parent");
    let a = attrs(&call.attributes);
    assert_eq!(a["mcp.method.name"], "tools/call");
    assert_eq!(a["gen_ai.tool.name"], "echo");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert!(!a.contains_key("error.type"));
    assert_eq!(call.status.as_ref().unwrap().code, status::StatusCode::Unset as i32);
    assert_eq!(call.end_time_unix_nano - call.start_time_unix_nano, 3_000_000);

    // A tool error.
    let (_, err) = by_id["2"];
    assert!(err.parent_span_id.is_empty());
    let a = attrs(&err.attributes);
    assert_eq!(a["error.type"], "tool_error");
    assert!(!a.contains_key("rpc.response.status_code"));
    assert_eq!(err.status.as_ref().unwrap().code, status::StatusCode::Error as i32);

    // resources/read: the URI is an attribute (redacted), never in the span name.
    let (_, read) = by_id["3"];
    assert_eq!(read.name, "resources/read");
    let a = attrs(&read.attributes);
    assert_eq!(a["mcp.resource.uri"], "file:///secret.txt?token=[REDACTED]");
    assert_eq!(a["error.type"], "-32002");
    assert_eq!(a["rpc.response.status_code"], "-32002");

    let (_, prompt) = by_id["4"];
    assert_eq!(prompt.name, "prompts/get summarize");
    assert_eq!(attrs(&prompt.attributes)["gen_ai.prompt.name"], "summarize");
    assert_eq!(by_id["5"].1.name, "resources/list");

    // The histogram: one point per attribute set, no URI, buckets per the conventions.
    let mut points = Vec::new();
    for r in receiver.received().iter().filter(|r| r.path == "/v1/metrics") {
        let req = ExportMetricsServiceRequest::decode(r.body.as_slice()).unwrap();
        for rm in req.resource_metrics {
            for sm in rm.scope_metrics {
                for m in sm.metrics {
                    assert_eq!(m.name, "mcp.server.operation.duration");
                    assert_eq!(m.unit, "s");
                    let Some(metric::Data::Histogram(h)) = m.data else { panic!("not a histogram") };
                    assert_eq!(h.aggregation_temporality, 1, "delta");
                    points.extend(h.data_points);
                }
            }
        }
    }
    let total: u64 = points.iter().map(|p| p.count).sum();
    assert_eq!(total, 5);
    for p in &points {
        let a = attrs(&p.attributes);
        assert!(a.contains_key("mcp.method.name"));
        assert!(!a.contains_key("mcp.resource.uri"));
        assert!(!a.contains_key("mcp.session.id"));
        assert_eq!(p.explicit_bounds, mcplens::tracking::export::DURATION_BUCKETS.to_vec());
        assert_eq!(p.bucket_counts.iter().sum::<u64>(), p.count);
    }
    let list = points.iter().find(|p| attrs(&p.attributes)["mcp.method.name"] == "resources/list").unwrap();
    assert_eq!(list.bucket_counts[6], 1, "0.7 s falls in (0.5, 1]");
    let methods: BTreeSet<String> = points.iter().map(|p| attrs(&p.attributes)["mcp.method.name"].clone()).collect();
    assert_eq!(methods.len(), 4);
    t.shutdown(LONG).unwrap();
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn otlp_outage_then_recovery_every_event_accounted() {
    // Phase 1: nothing listens (connection refused). Phase 2: the receiver answers 503.
    // Phase 3: it answers 200. Events keep arriving throughout.
    let addr = dead_addr();
    let mut otlp = OtlpConfig::new(format!("http://{addr}"));
    otlp.metrics = false;
    otlp.timeout = Duration::from_secs(5);
    let policy = ExportPolicy { max_queued: 2_000, ..fast_policy() };
    let t = Tracker::builder().export_policy(policy).otlp(otlp).build().unwrap();
    let s = t.open_session(None, None);
    let mut recorded = 0;
    let mut record_many = |n: usize| {
        for _ in 0..n {
            recorded += 1;
            t.record(&Operation {
                request_id: RequestId::Number(recorded),
                params: Payload::Json(r#"{"uri":"note://1"}"#),
                ..Operation::new(s.key(), Method::ResourcesRead, SystemTime::now(), Duration::from_micros(40))
            });
        }
    };
    record_many(5_000);
    let st = t.stats();
    assert!(st.exporters[0].pending <= 2_000 + 512, "memory bounded while down: {st:?}");
    let receiver = Receiver::start_at(addr);
    receiver.set_status(503);
    record_many(5_000);
    receiver.set_status(200);
    record_many(5_000);
    t.flush(LONG).unwrap();
    let st = t.stats();
    let e = &st.exporters[0];
    assert_eq!(st.recorded, 15_000);
    assert_eq!((e.failed, e.pending, st.queued), (0, 0, 0), "{st:?}");
    assert_eq!(st.recorded, st.dropped + e.exported + e.dropped, "{st:?}");
    let received: usize = spans_count(&receiver);
    assert_eq!(received as u64, e.exported, "every event counted as exported reached the receiver");
    assert!(e.exported > 0, "{st:?}");
    let newest = spans(&receiver).iter().any(|(_, sp)| attrs(&sp.attributes)["jsonrpc.request.id"] == "15000");
    assert!(newest, "drop-oldest keeps the newest");
    t.shutdown(LONG).unwrap();
}

fn spans_count(receiver: &Receiver) -> usize {
    receiver
        .received()
        .iter()
        .filter(|r| r.path == "/v1/traces")
        .map(|r| {
            let req = ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap();
            req.resource_spans.iter().flat_map(|rs| &rs.scope_spans).map(|ss| ss.spans.len()).sum::<usize>()
        })
        .sum()
}

#[test]
fn otlp_rejects_bad_endpoints_at_build() {
    let err = Tracker::builder().otlp(OtlpConfig::new("localhost:4318")).build().unwrap_err();
    assert_eq!(err.code(), "invalid_argument");
}

#[test]
fn mcpcat_events_api_body_is_snake_case() {
    let receiver = Receiver::start();
    let mut cfg = McpcatConfig::new("proj_123");
    cfg.base_url = receiver.base_url();
    cfg.api_key = Some("tok".into());
    let t = Tracker::builder()
        .server("notes-server", Some("0.3.0"))
        .export_policy(fast_policy())
        .mcpcat(cfg)
        .build()
        .unwrap();
    let s = t.open_session(None, Some(Transport::Stdio));
    t.set_session_client(&s, Some(PeerInfo::new("inspector", Some("1"))), Some("2025-06-18"));
    t.record(&Operation {
        request_id: RequestId::Text("r-1"),
        params: Payload::Json(r#"{"uri":"note://1"}"#),
        result: Payload::Json(r#"{"contents":[{"uri":"note://1","text":"hello"}]}"#),
        ..Operation::new(s.key(), Method::ResourcesRead, SystemTime::now(), Duration::from_micros(2_600))
    });
    t.record(&Operation {
        params: Payload::Json(r#"{"name":"divide"}"#),
        error: Some(RpcError { code: -32603, message: "internal" }),
        ..Operation::new(s.key(), Method::ToolsCall, SystemTime::now(), Duration::from_micros(100))
    });
    t.flush(LONG).unwrap();
    assert_eq!(t.stats().exporters[0].exported, 2);
    let got = receiver.received();
    assert_eq!(got.len(), 2, "one POST per event");
    for r in &got {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/public/events/");
        assert_eq!(r.header("authorization"), Some("Token tok"));
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    let bodies: Vec<Value> = got.iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect();
    let read = bodies.iter().find(|b| b["event_type"] == "mcp:resources/read").unwrap();
    assert_eq!(read["project_id"], "proj_123");
    assert_eq!(read["session_id"], s.id());
    assert_eq!(read["resource_name"], "note://1");
    assert_eq!(read["duration"], 3);
    assert_eq!(read["is_error"], false);
    assert_eq!(read["parameters"]["uri"], "note://1");
    assert_eq!(read["response"]["contents"][0]["textBytes"], 5);
    assert_eq!(read["server_name"], "notes-server");
    assert_eq!(read["server_version"], "0.3.0");
    assert_eq!(read["client_name"], "inspector");
    assert_eq!(read["client_version"], "1");
    assert_eq!(read["sdk_language"], "Rust");
    assert_eq!(read["tags"]["mcplens.request_id"], "r-1");
    assert!(read["id"].as_str().unwrap().starts_with("evt_"));
    assert!(read["timestamp"].as_str().unwrap().ends_with('Z'));
    let keys: Vec<&str> = read.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(keys.iter().all(|k| !k.chars().any(|c| c.is_ascii_uppercase())), "{keys:?}");
    let call = bodies.iter().find(|b| b["event_type"] == "mcp:tools/call").unwrap();
    assert_eq!(call["is_error"], true);
    assert_eq!(call["error"]["code"], -32603);
    assert_eq!(call["error"]["message"], "internal");
    assert_eq!(call["resource_name"], "divide");
    t.shutdown(LONG).unwrap();
}

/// agentcat-api 1.0.2 compatibility: the body's keys are the model's own (no `mcpcat_version`),
/// `input_tokens`/`output_tokens` are agentcat's estimate, a sessionless (2026-07-28) request has
/// `session_id: null`, and event types outside the model's enum are skipped, counted, with the
/// accounting identity exact.
#[test]
fn agentcat_body_tokens_sessionless_and_skipped_types() {
    let receiver = Receiver::start();
    let mut cfg = McpcatConfig::new("proj_1");
    cfg.base_url = receiver.base_url();
    assert_eq!(McpcatConfig::new("p").base_url, "https://api.agentcat.com", "agentcat 2.1.0's default");
    let t = Tracker::builder().export_policy(fast_policy()).mcpcat(cfg).build().unwrap();
    let s = t.open_session(Some("abc"), Some(Transport::Http));
    let modern = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
    let args = r#"{"text":"héllo wörld"}"#;
    let call = format!(r#"{{"name":"echo","arguments":{args},"_meta":{modern}}}"#);
    t.record(&Operation {
        params: Payload::Json(&call),
        result: Payload::Json(r#"{"content":[{"type":"text","text":"héllo wörld"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}"#),
        ..Operation::new(s.key(), Method::ToolsCall, SystemTime::now(), Duration::from_micros(100))
    });
    for m in [Method::SubscriptionsListen, Method::ServerDiscover] {
        let p = format!(r#"{{"_meta":{modern}}}"#);
        t.record(&Operation {
            params: Payload::Json(&p),
            ..Operation::new(s.key(), m, SystemTime::now(), Duration::ZERO)
        });
    }
    t.record(&Operation { ..Operation::new(s.key(), Method::Ping, SystemTime::now(), Duration::ZERO) });
    t.flush(LONG).unwrap();
    let st = t.stats();
    let e = &st.exporters[0];
    assert_eq!((e.exported, e.skipped), (2, 2), "{st:?}");
    assert_eq!(
        st.recorded,
        st.dropped
            + st.filtered
            + st.redaction_failed
            + st.queued
            + e.exported
            + e.dropped
            + e.failed
            + e.skipped
            + e.pending
    );
    let bodies: Vec<Value> = receiver.received().iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect();
    let types: Vec<&str> = bodies.iter().map(|b| b["event_type"].as_str().unwrap()).collect();
    assert_eq!(types, ["mcp:tools/call", "mcp:ping"]);
    let call = &bodies[0];
    assert_eq!(call["session_id"], Value::Null, "sessionless");
    assert!(call.as_object().unwrap().contains_key("session_id"), "written as null, not left out");
    // ceil(bytes / 3.5) of the raw arguments (compact JSON) and of the text blocks (not the image).
    assert_eq!(call["input_tokens"], (args.len() as u64 * 2).div_ceil(7));
    assert_eq!(call["output_tokens"], ("héllo wörld".len() as u64 * 2).div_ceil(7));
    assert_eq!(call["agentcat_version"], format!("mcplens {}", mcplens::VERSION));
    assert_eq!(bodies[1]["session_id"], Value::String(s.id().to_owned()), "a legacy request keeps its session");
    assert!(bodies[1].get("input_tokens").is_none());
    const MODEL: [&str; 28] = [
        "id",
        "project_id",
        "session_id",
        "actor_id",
        "event_id",
        "event_type",
        "is_error",
        "error",
        "resource_name",
        "duration",
        "input_tokens",
        "output_tokens",
        "timestamp",
        "user_intent",
        "parameters",
        "response",
        "identify_actor_given_id",
        "identify_actor_name",
        "identify_data",
        "tags",
        "properties",
        "ip_address",
        "sdk_language",
        "agentcat_version",
        "server_name",
        "server_version",
        "client_name",
        "client_version",
    ];
    for b in &bodies {
        for k in b.as_object().unwrap().keys() {
            assert!(MODEL.contains(&k.as_str()), "{k} is not a PublishEventRequest field");
        }
    }
    t.shutdown(LONG).unwrap();
    receiver.stop();
}

/// An exporter's error names the failure (an HTTP status, an I/O error kind), never the endpoint
/// URL (which may carry credentials), a header or the payload: hosts that wrap exporters to log
/// their errors log nothing secret.
#[test]
fn export_errors_never_name_the_url_a_header_or_the_payload() {
    use mcplens::tracking::ids::IdGen;
    use mcplens::tracking::{
        Batch, BuildConfig, EventBuilder, ExportItem, Exporter, McpcatExporter, OtlpTracesExporter, SessionInfo,
    };
    use std::sync::Arc;

    let params = r#"{"name":"PLANTED-PAYLOAD"}"#;
    let op = Operation {
        params: Payload::Json(params),
        ..Operation::new(Default::default(), Method::ToolsCall, SystemTime::now(), Duration::from_micros(5))
    };
    let session = SessionInfo { id: "ses_0".into(), ..SessionInfo::default() };
    let built = EventBuilder::new(BuildConfig::default(), IdGen::seeded(1)).build(&op, &session).unwrap();
    let items = [Arc::new(ExportItem::new(built.event, 0, Duration::from_micros(5)))];
    let batch = Batch::new(&items);

    let failing = Receiver::start();
    failing.set_status(500);
    let dead = dead_addr();
    for base in [format!("http://{dead}"), failing.base_url()] {
        let url = base.replacen("http://", "http://user:PLANTED-PASSWORD@", 1) + "/x?key=PLANTED-KEY";
        let header = ("Authorization".to_owned(), "Bearer PLANTED-HEADER".to_owned());
        let mut otlp = OtlpConfig::new(url.clone());
        otlp.headers = vec![header.clone()];
        otlp.timeout = Duration::from_secs(5);
        let mut mcpcat = McpcatConfig::new("proj_PLANTED-PROJECT");
        mcpcat.base_url = url.clone();
        mcpcat.api_key = Some("PLANTED-API-KEY".to_owned());
        let errors = [
            OtlpTracesExporter::new(otlp).unwrap().export(&batch).unwrap_err(),
            McpcatExporter::new(mcpcat).unwrap().export(&batch).unwrap_err(),
        ];
        for e in errors {
            let text = format!("{e} {e:?}");
            assert!(!text.contains("PLANTED"), "{text}");
            assert!(
                text.contains("I/O error") || text.contains("connection") || text.contains("HTTP status 500"),
                "{text}"
            );
        }
    }
    failing.stop();
}
