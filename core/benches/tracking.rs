//! Tracking benchmarks (run with `--all-features`):
//! - `record`: ns per call on the caller's thread, raw parts already at hand (params ~160 B and
//!   result ~230 B as JSON text), with a serde value, and with no payloads, in bursts of 2,000;
//! - `build`: one event built on the worker (parse, redact, cap, serialize);
//! - `export`: events/s end to end (record → worker → exporter → `flush`) to a JSONL file and to a
//!   loopback OTLP/HTTP receiver;
//! - then, outside criterion, the CPU time per event of the JSONL pipeline by thread (what one
//!   core spends per event, whatever else the machine runs), and the memory held while an OTLP
//!   receiver is down.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput};
use mcplens::tracking::ids::IdGen;
use mcplens::tracking::{
    BuildConfig, EventBuilder, ExportPolicy, JsonlConfig, Method, Operation, OtlpConfig, Payload, RequestId,
    SessionInfo, SessionKey, Tracker,
};
use serde_json::json;

const PARAMS: &str = r#"{"name":"search_notes","arguments":{"query":"quarterly revenue by region","limit":20,"include_archived":false,"tags":["finance","q3","emea"],"sort":"relevance"}}"#;
const RESULT: &str = r#"{"content":[{"type":"text","text":"Found 3 notes: Q3 revenue EMEA (note://812), Q3 revenue APAC (note://813), Q3 revenue AMER (note://814). The EMEA figure grew 12% year over year; see the attached breakdown."}],"isError":false}"#;

fn op(session: SessionKey, id: i64) -> Operation<'static> {
    Operation {
        request_id: RequestId::Number(id),
        params: Payload::Json(PARAMS),
        result: Payload::Json(RESULT),
        ..Operation::new(session, Method::ToolsCall, SystemTime::now(), Duration::from_micros(120))
    }
}

fn temp_dir() -> common::TempDir {
    common::TempDir::new("bench")
}

fn bench_record(c: &mut Criterion) {
    let dir = temp_dir();
    let t = Tracker::builder()
        .jsonl(JsonlConfig { max_file_bytes: 256 * 1024 * 1024, ..JsonlConfig::new(dir.path("record.jsonl")) })
        .build()
        .unwrap();
    let s = t.open_session(None, None);
    let value = json!({"name": "search_notes", "arguments": {"query": "quarterly revenue", "limit": 20}});
    let started = SystemTime::now();
    // Bursts of 2,000 calls (well within the queue bound, as a server sees them); the worker
    // catches up (flush) between bursts, outside the timing.
    const BURST: u64 = 2_000;
    let mut g = c.benchmark_group("record");
    g.throughput(Throughput::Elements(1));
    let mut id = 0;
    let mut burst = |iters: u64, one: &mut dyn FnMut(i64)| {
        let mut total = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let n = left.min(BURST);
            let start = Instant::now();
            for _ in 0..n {
                id += 1;
                one(id);
            }
            total += start.elapsed();
            left -= n;
            t.flush(Duration::from_secs(60)).unwrap();
        }
        total
    };
    g.bench_function(format!("json_text_params_{}B_result_{}B", PARAMS.len(), RESULT.len()), |b| {
        b.iter_custom(|iters| {
            burst(iters, &mut |id| {
                t.record(black_box(&Operation {
                    request_id: RequestId::Number(id),
                    params: Payload::Json(PARAMS),
                    result: Payload::Json(RESULT),
                    ..Operation::new(s.key(), Method::ToolsCall, started, Duration::from_micros(120))
                }));
            })
        })
    });
    g.bench_function("serde_value_params", |b| {
        b.iter_custom(|iters| {
            burst(iters, &mut |id| {
                t.record(black_box(&Operation {
                    request_id: RequestId::Number(id),
                    params: Payload::Value(&value),
                    ..Operation::new(s.key(), Method::ToolsCall, started, Duration::from_micros(120))
                }));
            })
        })
    });
    g.bench_function("no_payloads", |b| {
        b.iter_custom(|iters| {
            burst(iters, &mut |id| {
                t.record(black_box(&Operation {
                    request_id: RequestId::Number(id),
                    ..Operation::new(s.key(), Method::ToolsList, started, Duration::from_micros(120))
                }));
            })
        })
    });
    g.finish();
    let st = t.stats();
    eprintln!(
        "record: {} recorded, {} dropped by the request queue, {} exported",
        st.recorded, st.dropped, st.exporters[0].exported
    );
    t.shutdown(Duration::from_secs(60)).unwrap();
}

fn bench_build(c: &mut Criterion) {
    let mut b = EventBuilder::new(BuildConfig::default(), IdGen::seeded(1));
    let session = SessionInfo { id: "ses_2fQzR0u6Yx6w1h6yH7rB1cP9aZk".into(), ..SessionInfo::default() };
    let o = op(SessionKey(1), 1);
    let mut g = c.benchmark_group("build");
    g.throughput(Throughput::Elements(1));
    g.bench_function("tools_call_event", |bench| bench.iter(|| b.build(black_box(&o), &session).unwrap().json.len()));
    g.finish();
}

/// Record `n` operations and flush: events/s through the whole pipeline.
fn pipeline(t: &Tracker, n: u64) -> Duration {
    let s = t.open_session(None, None);
    let start = Instant::now();
    for i in 0..n {
        t.record(&op(s.key(), i as i64));
    }
    t.flush(Duration::from_secs(600)).unwrap();
    start.elapsed()
}

fn bench_export(c: &mut Criterion) {
    const N: u64 = 50_000;
    // Large enough that nothing is dropped: the throughput is of delivered events.
    let policy = ExportPolicy { max_queued: N as usize, ..ExportPolicy::default() };
    let mut g = c.benchmark_group("export");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));

    let dir = temp_dir();
    let t = Tracker::builder()
        .queue(N as usize, 256 * 1024 * 1024)
        .export_policy(policy)
        .jsonl(JsonlConfig { max_file_bytes: 0, ..JsonlConfig::new(dir.path("export.jsonl")) })
        .build()
        .unwrap();
    g.bench_function(format!("jsonl_{N}_events"), |b| b.iter_custom(|iters| (0..iters).map(|_| pipeline(&t, N)).sum()));
    let st = t.stats();
    assert_eq!(st.dropped + st.exporters[0].dropped + st.exporters[0].failed, 0, "{st:?}");
    t.shutdown(Duration::from_secs(60)).unwrap();

    let receiver = common::Receiver::start();
    let mut otlp = OtlpConfig::new(receiver.base_url());
    otlp.metrics = false;
    let t = Tracker::builder().queue(N as usize, 256 * 1024 * 1024).export_policy(policy).otlp(otlp).build().unwrap();
    g.bench_function(format!("otlp_loopback_spans_{N}_events"), |b| {
        b.iter_custom(|iters| (0..iters).map(|_| pipeline(&t, N)).sum())
    });
    let st = t.stats();
    assert_eq!(st.dropped + st.exporters[0].dropped + st.exporters[0].failed, 0, "{st:?}");
    t.shutdown(Duration::from_secs(60)).unwrap();
    g.finish();
}

/// CPU time (user + system, in clock ticks of 10 ms) of a thread, from its `/proc/…/stat`.
fn stat_ticks(stat: &str) -> Option<u64> {
    // Fields after the `(comm)`: state is the 1st, utime the 12th, stime the 13th.
    let f: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// CPU ticks of this process's threads whose name starts with `prefix`.
fn ticks_of(prefix: &str) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return 0 };
    dir.filter_map(|e| {
        let p = e.ok()?.path();
        let name = std::fs::read_to_string(p.join("comm")).ok()?;
        if !name.starts_with(prefix) {
            return None;
        }
        stat_ticks(&std::fs::read_to_string(p.join("stat")).ok()?)
    })
    .sum()
}

/// CPU ticks of the calling thread.
fn own_ticks() -> u64 {
    std::fs::read_to_string("/proc/thread-self/stat").ok().and_then(|s| stat_ticks(&s)).unwrap_or(0)
}

/// CPU time per event of the JSONL pipeline, by thread: 10 rounds of 50,000 operations recorded
/// and flushed, as in `export/jsonl`. Their sum is what one core spends per event, which the wall
/// clock figures above only show when the machine has cores to spare.
fn jsonl_cpu_per_event() {
    const N: u64 = 50_000;
    const ROUNDS: u64 = 10;
    let dir = temp_dir();
    let policy = ExportPolicy { max_queued: N as usize, ..ExportPolicy::default() };
    let t = Tracker::builder()
        .queue(N as usize, 256 * 1024 * 1024)
        .export_policy(policy)
        .jsonl(JsonlConfig {
            max_file_bytes: 64 * 1024 * 1024,
            max_files: 1,
            ..JsonlConfig::new(dir.path("cpu.jsonl"))
        })
        .build()
        .unwrap();
    let ticks = || [own_ticks(), ticks_of("mcplens-tracker"), ticks_of("mcplens-export")];
    let before = ticks();
    let mut wall = Duration::ZERO;
    for _ in 0..ROUNDS {
        wall += pipeline(&t, N);
    }
    let after = ticks();
    let st = t.stats();
    assert_eq!(st.dropped + st.exporters[0].dropped + st.exporters[0].failed, 0, "{st:?}");
    t.shutdown(Duration::from_secs(60)).unwrap();
    let events = (ROUNDS * N) as f64;
    let us = |i: usize| after[i].saturating_sub(before[i]) as f64 * 10_000.0 / events;
    let (rec, builder, exporter) = (us(0), us(1), us(2));
    let total = rec + builder + exporter;
    println!(
        "JSONL pipeline CPU per event ({events} events): recording thread {rec:.2} µs, builder {builder:.2} µs, \
         exporter {exporter:.2} µs; total {total:.2} µs = {:.0} events per CPU-second (wall {:.0} events/s)",
        1e6 / total,
        events / wall.as_secs_f64(),
    );
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0))
        })
        .unwrap_or(0)
}

/// Memory while the OTLP receiver is down: 200,000 operations at full speed into the default
/// bounds (10,000 queued per exporter), nothing listening.
fn memory_while_down() {
    let addr = common::dead_addr();
    let mut otlp = OtlpConfig::new(format!("http://{addr}"));
    otlp.metrics = false;
    let policy = ExportPolicy { max_attempts: 1_000_000, ..ExportPolicy::default() };
    let t = Tracker::builder().export_policy(policy).otlp(otlp).drop_timeout(Duration::ZERO).build().unwrap();
    let s = t.open_session(None, None);
    let before = rss_kib();
    let mut peak = before;
    let start = Instant::now();
    for i in 0..200_000 {
        t.record(&op(s.key(), i));
        if i % 10_000 == 0 {
            peak = peak.max(rss_kib());
        }
    }
    let elapsed = start.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    peak = peak.max(rss_kib());
    let st = t.stats();
    println!(
        "memory while the OTLP receiver is down: RSS {before} KiB before, peak {peak} KiB (+{} KiB) after 200000 records \
         in {:.0} ms ({:.0} ns/record); exporter pending {} (bound 10000 + one batch), dropped {} + {} at the request queue",
        peak.saturating_sub(before),
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_nanos() as f64 / 200_000.0,
        st.exporters[0].pending,
        st.exporters[0].dropped,
        st.dropped,
    );
    let _ = t.shutdown(Duration::ZERO);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_record(&mut c);
    bench_build(&mut c);
    bench_export(&mut c);
    jsonl_cpu_per_event();
    memory_while_down();
    c.final_summary();
}
