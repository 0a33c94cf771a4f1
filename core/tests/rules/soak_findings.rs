//! Minimal reproducers of tracking bugs found by the soak (`core/tests/soak.rs`), one test each
//! (each failed before its fix).

use crate::common;

use std::time::{Duration, SystemTime};

use common::TempDir;
use mcplens::tracking::{JsonlConfig, Method, Operation, Payload, RequestId, Tracker};

const LONG: Duration = Duration::from_secs(30);

fn record(t: &Tracker, id: i64) {
    let s = t.open_session(None, None);
    t.record(&Operation {
        request_id: RequestId::Number(id),
        params: Payload::Json(r#"{"name":"echo"}"#),
        ..Operation::new(s.key(), Method::ToolsCall, SystemTime::now(), Duration::from_micros(50))
    });
}

/// With rotation off (`max_file_bytes: 0`), the JSONL exporter never checks that its handle still
/// is the file at `path`: once the file is renamed or deleted (logrotate, a cleanup job, the
/// directory moved), every later event goes to the old inode (or to nowhere) and is still
/// counted as exported. With rotation on, the same exporter reopens the path (`same_file`).
#[test]

fn jsonl_without_rotation_reopens_a_replaced_file() {
    for max_file_bytes in [64 << 20, 0] {
        let dir = TempDir::new("finding-jsonl");
        let path = dir.path("events.jsonl");
        let t =
            Tracker::builder().jsonl(JsonlConfig { path: path.clone(), max_file_bytes, max_files: 5 }).build().unwrap();
        record(&t, 1);
        t.flush(LONG).unwrap();
        std::fs::remove_file(&path).unwrap(); // e.g. logrotate, or a cleanup job
        record(&t, 2);
        t.flush(LONG).unwrap();
        assert_eq!(t.stats().exporter("jsonl").unwrap().exported, 2);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            text.lines().count(),
            1,
            "max_file_bytes = {max_file_bytes}: the event exported after the file was removed is not in {}",
            path.display()
        );
        t.shutdown(LONG).unwrap();
    }
}

/// OTLP/HTTP: "the client SHOULD honour the waiting interval specified in the Retry-After header"
/// (429/503). The exporter drops the response headers and retries after its own backoff (50 ms
/// here), so a throttled batch burns through `max_attempts` in well under the interval the
/// receiver asked for and is then counted as failed.
#[cfg(feature = "otlp")]
#[test]

fn otlp_honours_retry_after() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::time::Instant;

    use mcplens::tracking::{ExportPolicy, OtlpConfig};

    // A receiver: the first request gets 429 with Retry-After: 2, the next ones 200.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Instant>();
    std::thread::spawn(move || {
        let mut n = 0;
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let mut w = conn.try_clone().unwrap();
            let mut r = BufReader::new(conn);
            loop {
                let mut len = 0usize;
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        if k.trim().eq_ignore_ascii_case("content-length") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    break;
                }
                let _ = tx.send(Instant::now());
                n += 1;
                let head = if n == 1 { "429 Too Many Requests\r\nRetry-After: 2" } else { "200 OK" };
                let resp = format!("HTTP/1.1 {head}\r\nContent-Length: 0\r\n\r\n");
                if w.write_all(resp.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });

    let mut otlp = OtlpConfig::new(format!("http://{addr}"));
    otlp.metrics = false;
    let policy = ExportPolicy {
        max_delay: Duration::ZERO,
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_secs(1),
        max_attempts: 5,
        ..ExportPolicy::default()
    };
    let t = Tracker::builder().export_policy(policy).otlp(otlp).build().unwrap();
    record(&t, 1);
    let first = rx.recv_timeout(LONG).expect("first request");
    let second = rx.recv_timeout(LONG).expect("the retry");
    let gap = second - first;
    assert!(gap >= Duration::from_millis(1_900), "retried {} ms after a 429 with Retry-After: 2", gap.as_millis());
    t.shutdown(LONG).unwrap();
}
