//! OTLP/HTTP (protobuf) exporters: one SERVER span per event, and the
//! `mcp.server.operation.duration` histogram, named after the OpenTelemetry MCP semantic
//! conventions. Messages come from `opentelemetry-proto`; encoding from `prost`.

use std::collections::BTreeMap;

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    metric, AggregationTemporality, Histogram, HistogramDataPoint, Metric, ResourceMetrics, ScopeMetrics,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{span, status, ResourceSpans, ScopeSpans, Span, SpanFlags, Status};
use serde_json::Value;

use super::config::OtlpConfig;
use super::event::{Event, Method};
use super::export::{Batch, ExportItem};
use super::ids::parse_hex;

/// The explicit bucket bounds (seconds) of `mcp.server.operation.duration`, as the semantic
/// conventions recommend.
pub const DURATION_BUCKETS: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

fn kv(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.into())) }),
        ..Default::default()
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope { name: "mcplens".to_owned(), version: crate::VERSION.to_owned(), ..Default::default() }
}

fn resource(config: &OtlpConfig, event: &Event) -> Resource {
    let service = config
        .service_name
        .clone()
        .or_else(|| event.server.as_ref().map(|s| s.name.clone()))
        .unwrap_or_else(|| "unknown_service".to_owned());
    let mut attributes = vec![
        kv("service.name", service),
        kv("telemetry.sdk.name", "mcplens"),
        kv("telemetry.sdk.language", "rust"),
        kv("telemetry.sdk.version", crate::VERSION),
    ];
    if config.service_name.is_none() {
        if let Some(v) = event.server.as_ref().and_then(|s| s.version.clone()) {
            attributes.push(kv("service.version", v));
        }
    }
    attributes.extend(config.resource_attributes.iter().map(|(k, v)| kv(k, v.clone())));
    Resource { attributes, ..Default::default() }
}

fn method_name(event: &Event) -> &str {
    event.method.name()
}

fn request_id_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The span name: `{mcp.method.name} {target}`, target = tool or prompt name (or, opted in, the URI).
pub(crate) fn span_name(event: &Event, include_uri: bool) -> String {
    let method = method_name(event);
    match (&event.method, &event.resource_name) {
        (Method::ToolsCall | Method::PromptsGet, Some(target)) => format!("{method} {target}"),
        (m, Some(uri)) if include_uri && m.names_a_uri() => format!("{method} {uri}"),
        _ => method.to_owned(),
    }
}

/// Attributes shared by spans and metric points (never the URI on metrics).
fn common_attributes(event: &Event, out: &mut Vec<KeyValue>) {
    out.push(kv("mcp.method.name", method_name(event)));
    if let Some(v) = &event.protocol_version {
        out.push(kv("mcp.protocol.version", v.clone()));
    }
    match (&event.method, &event.resource_name) {
        (Method::ToolsCall, Some(t)) => {
            out.push(kv("gen_ai.tool.name", t.clone()));
            out.push(kv("gen_ai.operation.name", "execute_tool"));
        }
        (Method::PromptsGet, Some(p)) => out.push(kv("gen_ai.prompt.name", p.clone())),
        _ => {}
    }
    if let Some(e) = &event.error {
        out.push(kv("error.type", e.kind.type_name()));
        if let Some(code) = e.kind.code() {
            out.push(kv("rpc.response.status_code", code.to_string()));
        }
    }
    if let Some(t) = event.transport.and_then(|t| t.network_transport()) {
        out.push(kv("network.transport", t));
    }
}

/// One SERVER span for one event.
pub(crate) fn span_of(item: &ExportItem, include_uri: bool) -> Span {
    let e = &item.event;
    let mut attributes = Vec::with_capacity(12);
    common_attributes(e, &mut attributes);
    // Never on a sessionless (2026-07-28) request: its event has no session id.
    if let Some(id) = &e.session_id {
        attributes.push(kv("mcp.session.id", id.clone()));
    }
    if let Some(id) = &e.request_id {
        attributes.push(kv("jsonrpc.request.id", request_id_text(id)));
    }
    if let Some(uri) = &e.resource_name {
        if e.method.names_a_uri() {
            attributes.push(kv("mcp.resource.uri", uri.clone()));
        }
    }
    if let [uri] = e.resource_uris.as_slice() {
        attributes.push(kv("mcp.resource.uri", uri.clone()));
    }
    attributes.push(kv("mcplens.event.id", e.id.clone()));
    let parent = e.parent_span_id.as_deref().and_then(parse_hex::<8>);
    // A parent from `_meta.traceparent` is the client's (remote; this span is the SERVER span). A
    // host span is this process's own SERVER span for the request: this one is INTERNAL under it.
    let mut flags = SpanFlags::ContextHasIsRemoteMask as u32;
    if parent.is_some() && !item.under_host_span {
        flags |= SpanFlags::ContextIsRemoteMask as u32;
    }
    let kind = if item.under_host_span { span::SpanKind::Internal } else { span::SpanKind::Server };
    let status = match &e.error {
        Some(err) => {
            Status { code: status::StatusCode::Error as i32, message: err.message.chars().take(256).collect() }
        }
        None => Status::default(),
    };
    let start = item.started_unix_nanos;
    Span {
        trace_id: parse_hex::<16>(&e.trace_id).map(|t| t.to_vec()).unwrap_or_default(),
        span_id: parse_hex::<8>(&e.span_id).map(|s| s.to_vec()).unwrap_or_default(),
        parent_span_id: parent.map(|p| p.to_vec()).unwrap_or_default(),
        flags,
        name: span_name(e, include_uri),
        kind: kind as i32,
        start_time_unix_nano: start,
        end_time_unix_nano: start.saturating_add(item.duration.as_nanos().min(u128::from(u64::MAX)) as u64),
        attributes,
        status: Some(status),
        ..Default::default()
    }
}

/// Spans are grouped by the server's name and version.
type ServerKey = Option<(String, Option<String>)>;

/// The trace request for a batch: spans grouped by resource (server).
pub fn traces_request(config: &OtlpConfig, batch: &Batch<'_>) -> ExportTraceServiceRequest {
    let mut groups: Vec<(ServerKey, ResourceSpans)> = Vec::new();
    for item in batch.items() {
        let key = item.event.server.as_ref().map(|s| (s.name.clone(), s.version.clone()));
        let at = match groups.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                groups.push((
                    key,
                    ResourceSpans {
                        resource: Some(resource(config, &item.event)),
                        scope_spans: vec![ScopeSpans { scope: Some(scope()), ..Default::default() }],
                        ..Default::default()
                    },
                ));
                groups.len() - 1
            }
        };
        groups[at].1.scope_spans[0].spans.push(span_of(item, config.span_name_includes_uri));
    }
    ExportTraceServiceRequest { resource_spans: groups.into_iter().map(|(_, r)| r).collect() }
}

/// The metrics request for a batch: one delta histogram point per attribute set, covering
/// `[start, now]`.
pub fn metrics_request(
    config: &OtlpConfig,
    batch: &Batch<'_>,
    start_unix_nanos: u64,
    now_unix_nanos: u64,
) -> ExportMetricsServiceRequest {
    struct Acc {
        count: u64,
        sum: f64,
        min: f64,
        max: f64,
        buckets: [u64; DURATION_BUCKETS.len() + 1],
    }
    let mut points: BTreeMap<Vec<(String, String)>, Acc> = BTreeMap::new();
    let mut first: Option<&ExportItem> = None;
    for item in batch.items() {
        first.get_or_insert(item);
        let mut attrs = Vec::new();
        common_attributes(&item.event, &mut attrs);
        let key: Vec<(String, String)> = attrs
            .into_iter()
            .map(|kv| {
                let v = match kv.value.and_then(|v| v.value) {
                    Some(any_value::Value::StringValue(s)) => s,
                    _ => String::new(),
                };
                (kv.key, v)
            })
            .collect();
        let secs = item.duration.as_secs_f64();
        let acc = points.entry(key).or_insert(Acc {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            buckets: [0; DURATION_BUCKETS.len() + 1],
        });
        acc.count += 1;
        acc.sum += secs;
        acc.min = acc.min.min(secs);
        acc.max = acc.max.max(secs);
        let b = DURATION_BUCKETS.iter().position(|&bound| secs <= bound).unwrap_or(DURATION_BUCKETS.len());
        acc.buckets[b] += 1;
    }
    let data_points = points
        .into_iter()
        .map(|(attrs, acc)| HistogramDataPoint {
            attributes: attrs.into_iter().map(|(k, v)| kv(&k, v)).collect(),
            start_time_unix_nano: start_unix_nanos,
            time_unix_nano: now_unix_nanos,
            count: acc.count,
            sum: Some(acc.sum),
            bucket_counts: acc.buckets.to_vec(),
            explicit_bounds: DURATION_BUCKETS.to_vec(),
            min: Some(acc.min),
            max: Some(acc.max),
            ..Default::default()
        })
        .collect();
    let metric = Metric {
        name: "mcp.server.operation.duration".to_owned(),
        description: "Duration of MCP requests handled by the server".to_owned(),
        unit: "s".to_owned(),
        data: Some(metric::Data::Histogram(Histogram {
            data_points,
            aggregation_temporality: AggregationTemporality::Delta as i32,
        })),
        ..Default::default()
    };
    let res = match first {
        Some(item) => resource(config, &item.event),
        None => Resource::default(),
    };
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(res),
            scope_metrics: vec![ScopeMetrics { scope: Some(scope()), metrics: vec![metric], ..Default::default() }],
            ..Default::default()
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracking::pipeline::ids::hex;
    use crate::tracking::{BuildConfig, EventBuilder, Operation, Payload, SessionInfo, SessionKey};
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn under_a_host_span_the_span_is_internal_and_its_child() {
        use crate::tracking::pipeline::ids::TraceParent;
        let host = TraceParent { trace_id: [0xab; 16], parent_span_id: [0xcd; 8], flags: 1 };
        let caller =
            r#"{"uri":"note://1","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#;
        let session = SessionInfo { id: "ses_1".into(), ..SessionInfo::default() };
        let mut b = EventBuilder::new(BuildConfig::default(), crate::tracking::pipeline::ids::IdGen::seeded(1));
        for (host_span, trace, parent, kind, remote) in [
            (None, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", span::SpanKind::Server, true),
            (Some(host), &"ab".repeat(16)[..], &"cd".repeat(8)[..], span::SpanKind::Internal, false),
        ] {
            let op = Operation {
                params: Payload::Json(caller),
                host_span,
                ..Operation::new(SessionKey(1), Method::ResourcesRead, UNIX_EPOCH, Duration::from_millis(1))
            };
            let built = b.build(&op, &session).unwrap();
            assert_eq!(built.under_host_span, host_span.is_some());
            assert_eq!((built.event.trace_id.as_str(), built.event.parent_span_id.as_deref()), (trace, Some(parent)));
            let mut item = ExportItem::new(built.event, 0, Duration::from_millis(1));
            if built.under_host_span {
                item = item.with_host_span();
            }
            let s = span_of(&item, false);
            assert_eq!(
                (s.kind, hex(&s.trace_id), hex(&s.parent_span_id)),
                (kind as i32, trace.to_owned(), parent.to_owned())
            );
            assert_eq!(s.flags & SpanFlags::ContextIsRemoteMask as u32 != 0, remote);
        }
    }

    fn span_attributes(params: &str) -> Vec<String> {
        let op = Operation {
            params: Payload::Json(params),
            ..Operation::new(SessionKey(1), Method::ResourcesRead, UNIX_EPOCH, Duration::from_millis(1))
        };
        let session = SessionInfo { id: "ses_1".into(), ..SessionInfo::default() };
        let built = EventBuilder::new(BuildConfig::default(), crate::tracking::pipeline::ids::IdGen::seeded(1))
            .build(&op, &session)
            .unwrap();
        let item = ExportItem::new(built.event, 0, Duration::from_millis(1));
        span_of(&item, false).attributes.into_iter().map(|kv| kv.key).collect()
    }

    #[test]
    fn no_session_id_on_a_2026_07_28_span() {
        let legacy = span_attributes(r#"{"uri":"note://1"}"#);
        assert!(legacy.contains(&"mcp.session.id".to_owned()));
        let modern =
            span_attributes(r#"{"uri":"note://1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert!(!modern.contains(&"mcp.session.id".to_owned()), "{modern:?}");
        assert!(modern.contains(&"mcp.resource.uri".to_owned()));
        assert!(modern.contains(&"mcp.protocol.version".to_owned()));
    }
}
