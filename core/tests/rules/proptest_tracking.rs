//! Properties of event building (the fuzz target `tracking_event` checks the same ones; the
//! checkers live in `core/fuzz/checks.rs`):
//!
//! - building never panics; the event's JSON is one line, at most the event cap, and parses back
//!   to the same event;
//! - every payload string is within the string cap and no payload nests deeper than the depth cap;
//! - a secret planted as a bearer/basic credential, a JWT, a `?token=`/`X-Amz-Signature=` query
//!   parameter, URI userinfo, an `Authorization:`/`Cookie:` header line, an `sk-…` key or the value
//!   of a secret key never survives built-in redaction, wherever it sits (params, `_meta`, result,
//!   error message, identity, long strings cut by the caps);
//! - JSON text the builder keeps as is and the same payload as a parsed value give the same event.
//!
//! Case counts are modest (256); `PROPTEST_CASES=10000` digs deeper.

#[allow(dead_code)]
use crate::checks;

use checks::{Hook, Pay, Rid, TrackCase};
use mcplens::tracking::{Method, PayloadLimits};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Free text that can never imitate a planted secret (no `7`).
fn text(max: usize) -> impl Strategy<Value = String> {
    let c = prop_oneof![
        proptest::sample::select(vec![' ', '\n', ':', '/', '?', '&', '=', '@', '"', '\\', 'é', '\u{202E}', '.', '-']),
        any::<char>(),
        proptest::char::range('a', 'z'),
    ];
    vec(c, 0..max).prop_map(|cs| cs.into_iter().map(|c| if c == '7' { '8' } else { c }).collect())
}

/// A string that may carry a planted secret in any context, maybe deep inside a long string.
fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => text(16),
        3 => (text(6), 0..checks::PLANT_CONTEXTS, 0usize..100, text(6))
            .prop_map(|(a, ctx, n, b)| format!("{a}{}{b}", checks::planted(ctx, &checks::secret(n)))),
        1 => (0usize..70_000, 0..checks::PLANT_CONTEXTS, any::<prop::sample::Index>()).prop_map(|(len, ctx, at)| {
            let mut s = "x".repeat(len);
            s.insert_str(at.index(len + 1), &checks::planted(ctx, &checks::secret(0)));
            s
        }),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(vec![
            "uri", "name", "text", "blob", "type", "data", "contents", "content", "arguments", "_meta", "headers", "q",
            "max_tokens", "keyword",
        ])
        .prop_map(str::to_owned),
        2 => proptest::sample::select(vec![
            "password", "Authorization", "x-api-key", "apiKey", "client_secret", "githubToken", "Cookie",
        ])
        .prop_map(str::to_owned),
        1 => text(8),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        string().prop_map(Value::String),
    ];
    // A bare secret (no credential shape) is caught only as the value of a secret key: a string,
    // or the strings of an array.
    let secret_entry = (
        proptest::sample::select(vec![
            "password",
            "Authorization",
            "x-api-key",
            "apiKey",
            "client_secret",
            "githubToken",
            "Cookie",
            "DB_PASSWORD",
        ]),
        0usize..100,
        any::<bool>(),
    )
        .prop_map(|(k, n, many)| {
            let s = Value::String(checks::secret(n));
            (k.to_owned(), if many { Value::Array(vec![s.clone(), s]) } else { s })
        });
    leaf.prop_recursive(14, 256, 12, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            (vec((key(), inner), 0..8), proptest::option::of(secret_entry.clone())).prop_map(|(kv, secret)| {
                let mut m: Map<String, Value> = kv.into_iter().collect();
                if let Some((k, v)) = secret {
                    m.insert(k, v);
                }
                Value::Object(m)
            }),
            (0usize..300).prop_map(|n| Value::Array((0..n).map(Value::from).collect())),
        ]
    })
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        10 => (0u8..10).prop_map(|c| Method::from_code(c).expect("ten methods")),
        1 => "[a-z/_.\\-]{1,24}".prop_map(|n| Method::from_name(&n)),
    ]
}

/// Params shaped for the method (the resource name key, `_meta.traceparent`) or any value.
fn params(method: Method) -> impl Strategy<Value = Value> {
    let key = method.resource_name_key();
    prop_oneof![
        (string(), value(), proptest::option::of(string())).prop_map(move |(name, args, tp)| {
            let mut m = Map::new();
            if let Some(k) = key {
                m.insert(k.to_owned(), Value::String(name));
            }
            m.insert("arguments".into(), args);
            if let Some(tp) = tp {
                m.insert("_meta".into(), json!({ "traceparent": tp }));
            }
            Value::Object(m)
        }),
        value(),
    ]
}

fn result(method: Method) -> impl Strategy<Value = Value> {
    let read = vec((string(), proptest::option::of(string()), any::<bool>()), 0..3).prop_map(|contents| {
        let contents: Vec<Value> = contents
            .into_iter()
            .map(|(uri, text, blob)| match (text, blob) {
                (Some(t), false) => json!({"uri": uri, "mimeType": "text/plain", "text": t}),
                _ => json!({"uri": uri, "blob": "QUJDRA=="}),
            })
            .collect();
        json!({ "contents": contents })
    });
    let tool = (string(), any::<bool>()).prop_map(|(t, e)| {
        json!({"content": [{"type": "text", "text": t}, {"type": "image", "data": "QUJD", "mimeType": "image/png"}], "isError": e})
    });
    match method {
        Method::ResourcesRead => prop_oneof![3 => read, 1 => value()].boxed(),
        Method::ToolsCall => prop_oneof![3 => tool, 1 => value()].boxed(),
        _ => value().boxed(),
    }
}

/// A payload as JSON text (compact, pretty, or with a `\u` escape that forces the slow path), as
/// a value, left out, or invalid JSON.
fn pay(v: impl Strategy<Value = Value>) -> impl Strategy<Value = Pay> {
    (v, 0u8..10, vec(any::<u8>(), 0..32)).prop_map(|(v, how, junk)| match how {
        0 => Pay::None,
        1 => Pay::Omitted(u64::from(junk.len() as u32) << 20),
        2 => Pay::Json(checks::lossy(&junk)),
        3 | 4 => Pay::Value(v),
        5 => Pay::Json(serde_json::to_string_pretty(&v).expect("JSON")),
        6 => Pay::Json(serde_json::to_string(&v).expect("JSON").replace("\"a", "\"\\u0061")),
        _ => Pay::Json(serde_json::to_string(&v).expect("JSON")),
    })
}

fn limits() -> impl Strategy<Value = PayloadLimits> {
    (prop_oneof![64usize..700, 64usize..40_000], 1usize..12, 1usize..120, prop_oneof![0usize..20_000, Just(102_400)])
        .prop_map(|(max_string_bytes, max_depth, max_breadth, max_event_bytes)| PayloadLimits {
            max_string_bytes,
            max_depth,
            max_breadth,
            max_event_bytes,
        })
}

fn case() -> impl Strategy<Value = TrackCase> {
    method().prop_flat_map(|method| {
        let ids = prop_oneof![Just(Rid::None), any::<i64>().prop_map(Rid::Number), text(12).prop_map(Rid::Text)];
        let session = (
            proptest::option::of((text(12), proptest::option::of(text(6)))),
            proptest::option::of(Just("2025-06-18".to_owned())),
            proptest::option::of((
                proptest::option::of(text(12)),
                proptest::option::of(string()),
                proptest::option::of(value()),
            )),
        );
        (
            (
                Just(method.clone()),
                (any::<[bool; 3]>(), proptest::bool::weighted(0.9)).prop_map(|([a, b, c], d)| [a, b, c, d]),
                limits(),
                ids,
            ),
            (
                pay(params(method.clone())),
                prop_oneof![3 => Just(Pay::None), 1 => pay(value())],
                pay(result(method)),
                proptest::option::of((any::<i16>().prop_map(i64::from), string())),
                proptest::bool::weighted(0.1),
            ),
            session,
            prop_oneof![2 => Just(Hook::None), 1 => Just(Hook::Identity), 1 => Just(Hook::FailsSometimes)],
        )
            .prop_map(
                |(
                    (method, flags, limits, request_id),
                    (params, meta, result, error, tool_error),
                    (client, protocol_version, identity),
                    hook,
                )| TrackCase {
                    method,
                    flags,
                    limits,
                    request_id,
                    params,
                    meta,
                    result,
                    error,
                    tool_error,
                    client,
                    protocol_version,
                    identity,
                    hook,
                    planted: 0,
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]

    #[test]
    fn events_are_capped_redacted_and_round_trip(c in case()) {
        checks::check_track(&c);
    }

    #[test]
    fn fuzz_style_operations_too(data in vec(any::<u8>(), 0..2048)) {
        checks::check_tracking_event(&data);
    }

    #[test]
    fn a_planted_secret_never_survives_in_any_context(
        ctx in 0..checks::PLANT_CONTEXTS,
        before in text(12),
        after in text(12),
        filler in prop_oneof![Just(0usize), 30_000usize..36_000],
        method in method(),
    ) {
        let s = format!("{before}{}{after}", checks::planted(ctx, &checks::secret(1)));
        let long = format!("{}{s}", "y".repeat(filler));
        let v = json!({"uri": s, "name": s, "arguments": {"q": long, "list": [s]}, "_meta": {"progressToken": s}});
        let case = TrackCase {
            method,
            flags: [true, true, true, true],
            limits: PayloadLimits::default(),
            request_id: Rid::Number(1),
            params: Pay::Json(v.to_string()),
            meta: Pay::None,
            result: Pay::Value(json!({"content": [{"type": "text", "text": s}], "contents": [{"uri": s, "text": s}]})),
            error: Some((-32000, s.clone())),
            tool_error: false,
            client: None,
            protocol_version: None,
            identity: Some((None, Some(s.clone()), Some(json!({"note": s})))),
            hook: Hook::None,
            planted: 1,
        };
        checks::check_track(&case);
    }
}
