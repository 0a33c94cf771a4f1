//! The host contract: what a binding would otherwise decide on its own about a tracker, decided
//! once here for Python and Node (pure: no clock, no thread, no I/O). The host vectors
//! (`tests/vectors/host/tracking_*`) replay each answer through both public APIs.
//!
//! - A tracker's options: the host's option JSON plus what the host supplies (the server's
//!   `serverInfo`, the `sdkLanguage` agentcat's own SDK for that language sends):
//!   [`TrackerConfig::for_host`].
//! - A time the host passes as a number (seconds or milliseconds): NaN and negative values are the
//!   caller's mistake for a timeout ([`timeout`]) and read as zero for a measured span
//!   ([`span`]); huge ones saturate, so `flush`/`shutdown` never overflow.
//! - The identify hook's answer ([`identity`]): a JSON object whose `id` and `name` are strings (or
//!   null or absent) and whose `data` is any JSON; `null` is nobody; anything else — a number, a
//!   list, an `id` that is not a string — is a failed identify (counted `unidentified`), never
//!   stringified.
//! - `isError` of a `tools/call` result when responses are not captured: the host passes the
//!   result's `isError` member alone (`{"isError": …}` as JSON text) and the core reads it as
//!   everywhere else: only the JSON `true` is a tool error (see [`Tracker::record`](crate::tracking::Tracker::record)).
//! - A host function that speaks JSON text: a callback exporter gets a batch as the JSON array of its
//!   events and fails it (permanently: it may have seen part of it) by returning an error
//!   ([`json_callback`]); a redact hook gets an event's strings as a JSON array and answers one of
//!   the same length, anything else failing the hook ([`json_string_hook`]).
//! - A tracking error as one JSON object ([`TrackingError::to_json`]): `{code, message, option?,
//!   pending?}`, for hosts whose errors cannot carry fields (napi), so `.option` comes from the
//!   core's typed error, never from its message.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use super::build::StringHook;
use super::config::TrackerConfig;
use super::event::{Identity, PeerInfo};
use super::export::{Batch, CallbackExporter, Exporter};
use super::ids::{parse_hex, TraceParent};
use crate::tracking::{ExportError, TrackingError};

/// A callback exporter from a host function of the batch's JSON text (the array of its events):
/// `Err(message)` counts the batch as failed, never retried (the host may have seen part of it).
pub fn json_callback(mut f: impl FnMut(String) -> Result<(), String> + Send + 'static) -> Box<dyn Exporter> {
    Box::new(CallbackExporter(move |batch: &Batch<'_>| {
        f(batch.to_json_array()).map_err(|m| ExportError::permanent(m, 0))
    }))
}

/// A redact hook from a host function of one event's strings as a JSON array: it answers a JSON
/// array of as many strings, in order; anything else (or `Err`) fails the hook.
pub fn json_string_hook(f: impl Fn(String) -> Result<String, String> + Send + Sync + 'static) -> StringHook {
    Arc::new(move |strings: &mut [String]| {
        let payload = serde_json::to_string(&*strings).map_err(|_| TrackingError::hook("unserializable strings"))?;
        let out: Vec<String> = serde_json::from_str(&f(payload).map_err(TrackingError::hook)?)
            .map_err(|_| TrackingError::hook("redact must return a string"))?;
        if out.len() != strings.len() {
            return Err(TrackingError::hook("redact answered for a different number of strings"));
        }
        for (s, o) in strings.iter_mut().zip(out) {
            *s = o;
        }
        Ok(())
    })
}

/// `value` in units of `1 / per_second` s (1.0: seconds; 1000.0: milliseconds) as a `Duration`;
/// `None` when NaN or negative; past `Duration`'s range (`+inf` included), `Duration::MAX`.
pub fn duration(value: f64, per_second: f64) -> Option<Duration> {
    if value.is_nan() || value < 0.0 {
        return None;
    }
    let nanos = (value * (1e9 / per_second)).round();
    Some(if nanos >= u64::MAX as f64 {
        Duration::try_from_secs_f64(value / per_second).unwrap_or(Duration::MAX)
    } else {
        Duration::from_nanos(nanos as u64)
    })
}

/// A `flush`/`shutdown` timeout the host passes (`option`: its name there, `timeout_seconds` or
/// `timeoutMs`): NaN or negative fails (`invalid_argument`); `+inf` waits without bound.
pub fn timeout(value: f64, per_second: f64, option: &str) -> Result<Duration, TrackingError> {
    duration(value, per_second).ok_or_else(|| TrackingError::invalid(option, "must be a non-negative number"))
}

/// A span the host measured, in milliseconds (a clock reading on the request path is never an
/// error): NaN or negative reads as zero.
pub fn span(ms: f64) -> Duration {
    duration(ms, 1000.0).unwrap_or_default()
}

/// The host's active span as a binding passes it: its trace id and span id in lowercase or
/// uppercase hex, 32 and 16 digits, one after the other. `None` for anything else, or an all-zero
/// id (an invalid span context).
pub fn span_context(hex: &str) -> Option<TraceParent> {
    let (trace, span) = (hex.get(..32)?, hex.get(32..)?);
    let trace_id = parse_hex::<16>(trace)?;
    let parent_span_id = parse_hex::<8>(span)?;
    (trace_id != [0; 16] && parent_span_id != [0; 8]).then_some(TraceParent { trace_id, parent_span_id, flags: 1 })
}

/// A wall-clock time the host passes as milliseconds since the Unix epoch (NaN or negative: the
/// epoch). Whole milliseconds and the fraction apart: `ms * 1e6` would lose the last nanoseconds
/// (f64 has 53 bits; Unix nanoseconds need 61).
pub fn unix_ms(ms: f64) -> SystemTime {
    if ms.is_nan() || ms <= 0.0 {
        return UNIX_EPOCH;
    }
    let whole = ms.trunc();
    let frac = Duration::from_nanos(((ms - whole) * 1e6).round() as u64);
    UNIX_EPOCH.checked_add(Duration::from_millis(whole as u64) + frac).unwrap_or(UNIX_EPOCH)
}

/// The identify hook's answer as JSON text: `Ok(None)` for `null` (nobody), `Ok(Some(_))` for an
/// object whose `id` and `name` are strings or null, `Err(())` for anything else (a failed identify).
#[allow(clippy::result_unit_err)]
pub fn identity(answer: &str) -> Result<Option<Identity>, ()> {
    let mut m = match serde_json::from_str::<Value>(answer) {
        Ok(Value::Null) => return Ok(None),
        Ok(Value::Object(m)) => m,
        _ => return Err(()),
    };
    let mut text = |k: &str| match m.remove(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(()),
    };
    let (id, name) = (text("id")?, text("name")?);
    Ok(Some(Identity { id, name, data: m.remove("data").filter(|d| !d.is_null()) }))
}

impl TrackerConfig {
    /// A binding's tracker configuration: its options as the core's JSON (`null` values take the
    /// defaults), the server's `serverInfo` when the host knows it, and the `sdkLanguage` agentcat's
    /// own SDK for that host sends (`Python 3.12`, `TypeScript`). Checked like
    /// [`TrackerConfig::from_json`].
    pub fn for_host(
        options: &str,
        server: Option<PeerInfo>,
        sdk_language: &str,
    ) -> Result<TrackerConfig, TrackingError> {
        let map = match serde_json::from_str::<Value>(options) {
            Ok(Value::Object(m)) => m.into_iter().filter(|(_, v)| !v.is_null()).collect::<Map<_, _>>(),
            _ => return Err(TrackingError::invalid("", "the options must be a JSON object")),
        };
        let mut config = TrackerConfig::from_json(&Value::Object(map).to_string())?;
        if server.is_some() {
            config.server = server;
            config.check()?;
        }
        config.sdk_language = sdk_language.to_owned();
        Ok(config)
    }
}

impl TrackingError {
    /// `{"code", "message", "option"?, "pending"?}`: the error whole, for hosts whose errors carry
    /// no fields of their own (Node's napi errors carry a code and a message).
    pub fn to_json(&self) -> String {
        let mut v = json!({"code": self.code().as_str(), "message": self.to_string()});
        if let Some(o) = self.option() {
            v["option"] = json!(o);
        }
        if let TrackingError::Timeout { pending, .. } = self {
            v["pending"] = json!(pending);
        }
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_span_is_two_non_zero_hex_ids() {
        let ok = span_context("4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(ok.is_none(), "a trace id alone is not a span");
        let s = span_context("4BF92F3577B34DA6A3CE929D0E0E473600f067aa0ba902b7").unwrap();
        assert_eq!((s.trace_id[0], s.parent_span_id[7]), (0x4b, 0xb7));
        for bad in [
            "00000000000000000000000000000000", /* zero trace */
            "4bf92f3577b34da6a3ce929d0e0e4736zzf067aa0ba902b7",
            "4bf92f3577b34da6a3ce929d0e0e47360000000000000000",
            "4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b7ff",
            "",
        ] {
            let bad = if bad.len() == 32 { format!("{bad}00f067aa0ba902b7") } else { bad.to_owned() };
            assert!(span_context(&bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn durations_never_overflow_and_refuse_nan_and_negatives() {
        assert_eq!(duration(1.5, 1.0), Some(Duration::from_millis(1500)));
        assert_eq!(duration(0.001, 1000.0), Some(Duration::from_micros(1)));
        assert_eq!(duration(f64::INFINITY, 1.0), Some(Duration::MAX));
        assert_eq!(duration(1e300, 1000.0), Some(Duration::MAX));
        assert_eq!(duration(-1.0, 1.0), None);
        assert_eq!(duration(f64::NAN, 1000.0), None);
        let e = timeout(-5.0, 1000.0, "timeoutMs").unwrap_err();
        assert_eq!((e.code().as_str(), e.option()), ("invalid_argument", Some("timeoutMs")));
        assert_eq!(span(f64::NAN), Duration::ZERO);
        assert_eq!(span(-3.0), Duration::ZERO);
        assert_eq!(unix_ms(-1.0), UNIX_EPOCH);
        let t = unix_ms(1_767_323_045_683.5);
        assert_eq!(t.duration_since(UNIX_EPOCH).unwrap().as_nanos(), 1_767_323_045_683_500_000);
    }

    #[test]
    fn identity_answers() {
        assert_eq!(identity("null"), Ok(None));
        let i = identity(r#"{"id":"u1","name":null,"data":{"plan":"pro"},"other":1}"#).unwrap().unwrap();
        assert_eq!((i.id.as_deref(), i.name, i.data), (Some("u1"), None, Some(json!({"plan": "pro"}))));
        assert_eq!(identity("{}"), Ok(Some(Identity::default())));
        for bad in [r#"{"id":42}"#, r#"{"name":{"first":"a"}}"#, r#"{"id":true}"#, "[1]", "7", "\"u1\"", "not json"] {
            assert_eq!(identity(bad), Err(()), "{bad}");
        }
    }

    #[test]
    fn json_string_hooks_answer_as_many_strings() {
        let upper = json_string_hook(|json| Ok(json.to_uppercase()));
        let mut strings = vec!["a".to_owned(), "b\"c".to_owned()];
        upper(&mut strings).unwrap();
        assert_eq!(strings, ["A", "B\"C"]);
        for answer in [r#"["x"]"#, "[1, 2]", "not json"] {
            let hook = json_string_hook(move |_| Ok(answer.to_owned()));
            assert_eq!(hook(&mut strings).unwrap_err().code().as_str(), "hook_failed", "{answer}");
        }
        let failing = json_string_hook(|_| Err("no answer from JS within 5000 ms".to_owned()));
        assert!(failing(&mut strings).unwrap_err().to_string().contains("no answer"));
    }

    #[test]
    fn host_configuration() {
        let c =
            TrackerConfig::for_host(r#"{"queueCapacity":null,"captureResponses":false}"#, None, "TypeScript").unwrap();
        assert_eq!((c.queue_capacity, c.capture_responses, c.sdk_language.as_str()), (10_000, false, "TypeScript"));
        let server = Some(PeerInfo::new("", None));
        let e = TrackerConfig::for_host("{}", server, "Python 3.12").unwrap_err();
        assert_eq!(e.option(), Some("server.name"));
        let e = TrackerConfig::for_host(r#"{"queueCapacity":0}"#, None, "x").unwrap_err();
        let v: Value = serde_json::from_str(&e.to_json()).unwrap();
        assert_eq!(v, json!({"code": "invalid_argument", "option": "queueCapacity", "message": e.to_string()}));
        let t = TrackingError::Timeout { pending: 3, waited: Duration::from_millis(5) };
        let v: Value = serde_json::from_str(&t.to_json()).unwrap();
        assert_eq!((v["code"].as_str(), v["pending"].as_u64()), (Some("timeout"), Some(3)));
        assert!(TrackerConfig::for_host("[]", None, "x").is_err());
    }
}
