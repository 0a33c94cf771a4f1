//! Soak: a tracked rmcp server under steady load while its exporters hit faults.
//!
//! One test, alone in its binary (so that `/proc/self/status` is this run's memory), ignored by the
//! normal `cargo test`: `make test-soak` runs it briefly (`SOAK_SECONDS`, default 35 s of load),
//! `make soak` for 600 s. What it does:
//!
//! - A real rmcp server (`Soak`: tools/call `echo` and `fail`, resources/read `note://{k}`, payloads
//!   of 128 B to 2 KiB with secrets for redaction to find) and real rmcp clients, in process over
//!   tokio duplex pipes: `stats()` and the process's RSS are only readable in the tracker's process,
//!   and the pipes still run rmcp's JSON-RPC framing and serialization on both sides.
//! - Load at a fixed rate from `SOAK_CLIENTS` "main" connections plus two "control" connections,
//!   each `SOAK_RATE` requests/s (tools/call and resources/read, 1 in 16 a tool error, 1 in 16 a
//!   JSON-RPC error). Control connections are never tracked: they measure the machine's own noise
//!   while the main ones run tracked.
//! - Phase 0 (baseline): every connection untracked, no tracker at all. Then the main connections
//!   are reconnected to `Tracked` servers sharing one `Tracker` with three exporters: OTLP spans,
//!   OTLP metrics (to a loopback receiver written below) and JSONL. Then, per cycle:
//!   healthy → down (port closed) → slow (answers after the exporter timeout) → HTTP 500 → HTTP 429
//!   with `Retry-After` → recovered, while the JSONL path's parent is replaced by a regular file
//!   (ENOTDIR) during down/slow and the path becomes a symlink to `/dev/full` (ENOSPC) during
//!   500/429. (Running as root, chmod would not stop a write.)
//! - Checks: every response equals the untracked server's; `stats()` after `flush` satisfies
//!   `recorded = dropped + filtered + redaction_failed + queued + exported + dropped' + failed +
//!   pending` for every exporter, and `recorded` is exactly what the clients sent; what the
//!   receiver accepted and the JSONL files hold is exactly `exported`; no exporter panicked; every
//!   fault was hit; peak RSS growth stays under the configured bound plus a stated slack; per phase,
//!   tracked p99 ≤ max(3 × ref, ref + 5 ms) with ref = max(baseline p99, control p99 in that phase).

#![cfg(all(feature = "rmcp", feature = "otlp"))]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::TempDir;
use mcplens::rmcp::Tracked;
use mcplens::tracking::{
    Batch, Event, ExportError, ExportPolicy, Exporter, JsonlConfig, JsonlExporter, OtlpConfig, OtlpMetricsExporter,
    OtlpTracesExporter, Stats, Tracker, Transport,
};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::metrics::v1::metric;
use prost::Message;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ReadResourceRequestParams, ReadResourceResult,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::{Peer, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ErrorData, ServerHandler, ServiceError, ServiceExt};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Configuration.

/// The request-path queue: operations and bytes.
const QUEUE_EVENTS: usize = 2_000;
const QUEUE_BYTES: usize = 4 << 20;
/// Per exporter: batches, queue bound and retries (short backoffs so that outages overflow the
/// queue and exhaust retries within a phase: both `dropped` and `failed` get exercised).
const POLICY: ExportPolicy = ExportPolicy {
    max_events: 128,
    max_delay: Duration::from_millis(200),
    max_idle: Duration::from_millis(200),
    max_queued: 500,
    initial_backoff: Duration::from_millis(50),
    max_backoff: Duration::from_secs(1),
    max_attempts: 6,
};
const EXPORTERS: [&str; 3] = ["otlp", "otlp-metrics", "jsonl"];
/// The OTLP request timeout, and how long the "slow" receiver takes to answer (past it).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(2);
const SLOW_ANSWER: Duration = Duration::from_millis(2_500);
/// Rotate the JSONL file at this size (rotation runs during the soak too); keep every file.
const JSONL_ROTATE_BYTES: u64 = 1 << 20;
/// Memory the bound does not cover: allocator arenas and fragmentation, thread stacks, ureq and
/// rmcp buffers, the test's own bookkeeping (latencies, the receiver's id set: about 2 MiB per
/// 10 minutes of load).
const RSS_SLACK_BYTES: u64 = 32 << 20;
/// Request payload variants (the untracked server's answer to each is the reference).
const VARIANTS: usize = 32;
const CONTROL_CLIENTS: usize = 2;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const LONG: Duration = Duration::from_secs(60);

struct Config {
    /// Seconds of load in all (about: whole cycles).
    seconds: u64,
    phase: Duration,
    cycles: usize,
    clients: usize,
    rate: f64,
}

impl Config {
    fn from_env() -> Config {
        let env = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<f64>().ok());
        let seconds = env("SOAK_SECONDS").unwrap_or(35.0).max(1.0);
        // Seven phases at least (baseline + one cycle of six); longer runs repeat the cycle.
        let phase = (seconds / 7.0).clamp(4.0, 20.0);
        let cycles = (((seconds - phase) / (6.0 * phase)).round() as usize).max(1);
        Config {
            seconds: seconds as u64,
            phase: Duration::from_secs_f64(phase),
            cycles,
            clients: env("SOAK_CLIENTS").map_or(4, |c| c.max(1.0) as usize),
            rate: env("SOAK_RATE").unwrap_or(50.0).max(1.0),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Phases.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Baseline,
    Healthy,
    Down,
    Slow,
    Http500,
    Http429,
    Recovered,
}

const CYCLE: [Phase; 6] = [Phase::Healthy, Phase::Down, Phase::Slow, Phase::Http500, Phase::Http429, Phase::Recovered];

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Baseline => "0 baseline",
            Phase::Healthy => "1 healthy",
            Phase::Down => "2 down",
            Phase::Slow => "3 slow",
            Phase::Http500 => "4 http-500",
            Phase::Http429 => "5 http-429",
            Phase::Recovered => "6 recovered",
        }
    }

    fn mode(self) -> Mode {
        match self {
            Phase::Baseline | Phase::Healthy | Phase::Recovered => Mode::Healthy,
            Phase::Down => Mode::Down,
            Phase::Slow => Mode::Slow,
            Phase::Http500 => Mode::Status500,
            Phase::Http429 => Mode::Status429,
        }
    }

    fn jsonl(self) -> Fault {
        match self {
            Phase::Down | Phase::Slow => Fault::NotADir,
            Phase::Http500 | Phase::Http429 => Fault::DiskFull,
            _ => Fault::None,
        }
    }

    fn faults(self) -> &'static str {
        match self {
            Phase::Baseline => "no tracker",
            Phase::Healthy | Phase::Recovered => "-",
            Phase::Down => "otlp refused; jsonl ENOTDIR",
            Phase::Slow => "otlp > timeout; jsonl ENOTDIR",
            Phase::Http500 => "otlp 500; jsonl ENOSPC",
            Phase::Http429 => "otlp 429+Retry-After; jsonl ENOSPC",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The server and its requests.

#[derive(Clone, Default)]
struct Soak;

/// Secrets the load plants (a bearer token in payloads, a token in read URIs): never exported.
const PLANTED: [&str; 2] = ["sk-soak", "token=secret"];

fn has_planted(bytes: &[u8]) -> bool {
    PLANTED.iter().any(|p| bytes.windows(p.len()).any(|w| w == p.as_bytes()))
}

/// A deterministic payload of 128 B to 2 KiB, starting with a credential for redaction to find.
fn payload(k: usize) -> String {
    let len = 128usize << (k % 5);
    let mut s = format!("Authorization: Bearer sk-soak{k:04}abcdefghijklmnopqrstuv\n");
    let mut x = (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    while s.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push((b'a' + (x % 26) as u8) as char);
        if x.is_multiple_of(7) {
            s.push(' ');
        }
    }
    s
}

impl ServerHandler for Soak {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("soak", "1.0.0"))
    }

    async fn call_tool(
        &self,
        r: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = r.arguments.unwrap_or_default();
        match r.name.as_ref() {
            "echo" => {
                let text = args.get("text").and_then(Value::as_str).unwrap_or("");
                let n = args.get("n").and_then(Value::as_u64).unwrap_or(0);
                Ok(CallToolResult::success(vec![ContentBlock::text(format!("{n}:{text}"))]).into())
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("refused by design")]).into()),
            _ => Err(ErrorData::invalid_params("unknown tool", None)),
        }
    }

    async fn read_resource(
        &self,
        r: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let uri = r.uri.as_str();
        let id: Option<usize> =
            uri.strip_prefix("note://").and_then(|rest| rest.split('?').next()).and_then(|k| k.parse().ok());
        match id {
            Some(k) => {
                let text = payload(1_000 + k);
                Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
            }
            None => Err(ErrorData::resource_not_found("no such note", None)),
        }
    }
}

/// Request `k` (of [`VARIANTS`]); `Ok` holds the result or the JSON-RPC error as JSON text.
async fn send(peer: &Peer<RoleClient>, k: usize) -> Result<String, String> {
    let result = match k % 16 {
        14 => peer.call_tool(CallToolRequestParams::new("fail")).await.map(|r| serde_json::to_string(&r)),
        15 => peer
            .read_resource(ReadResourceRequestParams::new(format!("note://missing/{k}")))
            .await
            .map(|r| serde_json::to_string(&r)),
        _ if k.is_multiple_of(2) => {
            let mut args = serde_json::Map::new();
            args.insert("text".into(), payload(k).into());
            args.insert("n".into(), k.into());
            peer.call_tool(CallToolRequestParams::new("echo").with_arguments(args))
                .await
                .map(|r| serde_json::to_string(&r))
        }
        _ => peer
            .read_resource(ReadResourceRequestParams::new(format!("note://{k}?token=secret{k}&page=1")))
            .await
            .map(|r| serde_json::to_string(&r)),
    };
    match result {
        Ok(text) => text.map_err(|e| e.to_string()),
        Err(ServiceError::McpError(e)) => Ok(format!("error {}", serde_json::to_string(&e).unwrap())),
        Err(e) => Err(format!("request failed: {e}")),
    }
}

type Client = RunningService<RoleClient, ()>;

/// Serve `server` over an in-process pipe and connect an rmcp client to it.
async fn connect<S: rmcp::Service<RoleServer> + Send + 'static>(server: S) -> (Client, tokio::task::JoinHandle<()>) {
    let (srv_io, cli_io) = tokio::io::duplex(256 * 1024);
    let srv = tokio::spawn(async move {
        if let Ok(running) = server.serve(srv_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(cli_io).await.expect("client connects");
    (client, srv)
}

async fn disconnect(conns: Vec<(Client, tokio::task::JoinHandle<()>)>) {
    for (client, srv) in conns {
        let _ = client.cancel().await;
        let _ = srv.await;
    }
}

// ---------------------------------------------------------------------------------------------
// Load.

struct Load {
    /// The row (cycle × phase) requests are counted in; `rows` = between phases (not counted).
    row: Arc<AtomicUsize>,
    rows: usize,
    rate: f64,
    expected: Arc<Vec<String>>,
    /// Every client fires at `epoch + period × slot / slots + n × period`: the same schedule in
    /// every phase, and no two clients at once.
    epoch: tokio::time::Instant,
    slots: usize,
}

#[derive(Default)]
struct TaskLog {
    /// Latency in µs per row (the last entry: between phases).
    lat: Vec<Vec<u32>>,
    /// (row, what went wrong)
    errors: Vec<(usize, String)>,
    sent: u64,
}

/// Send requests at a fixed rate until `stop`; each response is compared with the untracked one.
async fn drive(peer: Peer<RoleClient>, slot: usize, load: Arc<Load>, stop: Arc<AtomicBool>) -> TaskLog {
    let period = Duration::from_secs_f64(1.0 / load.rate);
    let start = load.epoch + period.mul_f64(slot as f64 / load.slots as f64);
    let mut tick = tokio::time::interval_at(start, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut log = TaskLog { lat: vec![Vec::new(); load.rows + 1], ..TaskLog::default() };
    let mut k = slot * 5;
    loop {
        tick.tick().await;
        if stop.load(Ordering::Acquire) {
            return log;
        }
        let row = load.row.load(Ordering::Acquire).min(load.rows);
        let v = k % VARIANTS;
        k += 1;
        let t0 = Instant::now();
        let got = tokio::time::timeout(REQUEST_TIMEOUT, send(&peer, v)).await;
        log.lat[row].push(t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
        log.sent += 1;
        match got {
            Ok(Ok(text)) if text == load.expected[v] => {}
            Ok(Ok(text)) => log.errors.push((row, format!("variant {v}: differs from untracked: {:.200}", text))),
            Ok(Err(e)) => log.errors.push((row, format!("variant {v}: {e}"))),
            Err(_) => log.errors.push((row, format!("variant {v}: no answer in {REQUEST_TIMEOUT:?}"))),
        }
    }
}

struct Group {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<TaskLog>>,
    conns: Vec<(Client, tokio::task::JoinHandle<()>)>,
}

impl Group {
    /// Load from these connections, in schedule slots `first_slot..`.
    fn start(conns: Vec<(Client, tokio::task::JoinHandle<()>)>, first_slot: usize, load: &Arc<Load>) -> Group {
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = conns
            .iter()
            .enumerate()
            .map(|(i, (client, _))| {
                tokio::spawn(drive(client.peer().clone(), first_slot + i, load.clone(), stop.clone()))
            })
            .collect();
        Group { stop, tasks, conns }
    }

    async fn stop(self) -> Vec<TaskLog> {
        self.stop.store(true, Ordering::Release);
        let mut logs = Vec::new();
        for t in self.tasks {
            logs.push(t.await.expect("load task"));
        }
        disconnect(self.conns).await;
        logs
    }
}

// ---------------------------------------------------------------------------------------------
// A fault-injecting OTLP/HTTP receiver on 127.0.0.1 (std only).

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Mode {
    Healthy = 0,
    /// Nothing listens: connections are refused; open connections are closed.
    Down = 1,
    /// Answers 200 after the exporter's timeout.
    Slow = 2,
    Status500 = 3,
    /// 429 with `Retry-After: 1`.
    Status429 = 4,
}

impl Mode {
    fn from_u8(v: u8) -> Mode {
        [Mode::Healthy, Mode::Down, Mode::Slow, Mode::Status500, Mode::Status429][v as usize]
    }
}

#[derive(Default)]
struct RxState {
    /// Hashes of `mcplens.event.id` of the spans answered 200 in time.
    span_ids: HashSet<u64>,
    spans: u64,
    /// Sum of histogram point counts answered 200 in time.
    points: u64,
    /// Requests answered 200 after the exporter's timeout (slow mode; not counted above).
    late: u64,
    undecodable: u64,
    answered: BTreeMap<u16, u64>,
    last_429: HashMap<String, Instant>,
    gaps_429: Vec<Duration>,
    /// Requests whose body held a planted secret.
    leaks: u64,
}

struct RxShared {
    mode: AtomicU8,
    closing: AtomicBool,
    state: Mutex<RxState>,
}

struct Receiver {
    addr: SocketAddr,
    shared: Arc<RxShared>,
    acceptor: Option<(Arc<AtomicBool>, thread::JoinHandle<()>)>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(RxShared {
            mode: AtomicU8::new(Mode::Healthy as u8),
            closing: AtomicBool::new(false),
            state: Mutex::default(),
        });
        let mut r = Receiver { addr, shared, acceptor: None };
        r.listen(listener);
        r
    }

    fn listen(&mut self, listener: TcpListener) {
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sh) = (stop.clone(), self.shared.clone());
        let t = thread::spawn(move || {
            while !st.load(Ordering::Acquire) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let sh = sh.clone();
                        thread::spawn(move || serve(conn, &sh));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
            // Dropping the listener closes the port.
        });
        self.acceptor = Some((stop, t));
    }

    fn set_mode(&mut self, mode: Mode) {
        self.shared.mode.store(mode as u8, Ordering::Release);
        if mode == Mode::Down {
            if let Some((stop, t)) = self.acceptor.take() {
                stop.store(true, Ordering::Release);
                t.join().unwrap();
            }
        } else if self.acceptor.is_none() {
            let mut tries = 0;
            let listener = loop {
                match TcpListener::bind(self.addr) {
                    Ok(l) => break l,
                    Err(e) if tries < 200 => {
                        tries += 1;
                        if tries == 200 {
                            panic!("cannot listen on {} again: {e}", self.addr);
                        }
                        thread::sleep(Duration::from_millis(25));
                    }
                    Err(e) => panic!("cannot listen on {} again: {e}", self.addr),
                }
            };
            self.listen(listener);
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::Release);
        if let Some((stop, t)) = self.acceptor.take() {
            stop.store(true, Ordering::Release);
            let _ = t.join();
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Read one request (path, body); `None` when the connection ends or the receiver goes down.
fn read_request(conn: &mut TcpStream, buf: &mut Vec<u8>, sh: &RxShared) -> Option<(String, Vec<u8>)> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = find(buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            let len: usize = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                buf.drain(..end + 4 + len);
                return Some((path, body));
            }
        }
        if sh.closing.load(Ordering::Acquire) || sh.mode.load(Ordering::Acquire) == Mode::Down as u8 {
            return None;
        }
        match conn.read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return None,
        }
    }
}

fn answer(conn: &mut TcpStream, code: u16, extra: &str) -> bool {
    let reason = match code {
        200 => "OK",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    };
    let head =
        format!("HTTP/1.1 {code} {reason}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n{extra}\r\n");
    conn.write_all(head.as_bytes()).and_then(|()| conn.flush()).is_ok()
}

fn hash_id(id: &str) -> u64 {
    let mut h = DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// What a request carries: event ids of spans, or the count of histogram points.
fn decode(path: &str, body: &[u8]) -> Option<(Vec<u64>, u64)> {
    if path.ends_with("/v1/traces") {
        let req = ExportTraceServiceRequest::decode(body).ok()?;
        let mut ids = Vec::new();
        for sp in req.resource_spans.iter().flat_map(|rs| &rs.scope_spans).flat_map(|ss| &ss.spans) {
            let id = sp.attributes.iter().find(|kv| kv.key == "mcplens.event.id").and_then(|kv| {
                match kv.value.as_ref()?.value.as_ref()? {
                    any_value::Value::StringValue(s) => Some(s.as_str()),
                    _ => None,
                }
            })?;
            ids.push(hash_id(id));
        }
        Some((ids, 0))
    } else if path.ends_with("/v1/metrics") {
        let req = ExportMetricsServiceRequest::decode(body).ok()?;
        let mut points = 0;
        for m in req.resource_metrics.iter().flat_map(|rm| &rm.scope_metrics).flat_map(|sm| &sm.metrics) {
            if let Some(metric::Data::Histogram(h)) = &m.data {
                points += h.data_points.iter().map(|p| p.count).sum::<u64>();
            }
        }
        Some((Vec::new(), points))
    } else {
        None
    }
}

fn serve(mut conn: TcpStream, sh: &RxShared) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_nodelay(true);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(20)));
    let mut buf = Vec::new();
    while let Some((path, body)) = read_request(&mut conn, &mut buf, sh) {
        let mode = Mode::from_u8(sh.mode.load(Ordering::Acquire));
        let code = match mode {
            Mode::Down => return,
            Mode::Healthy | Mode::Slow => 200,
            Mode::Status500 => 500,
            Mode::Status429 => 429,
        };
        if mode == Mode::Slow {
            let until = Instant::now() + SLOW_ANSWER;
            while Instant::now() < until {
                if sh.closing.load(Ordering::Acquire) {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        let decoded = if mode == Mode::Healthy { decode(&path, &body) } else { None };
        // What a 200 accepts is recorded before the answer goes: the exporter counts it exported
        // the moment the answer arrives, and the test may read these figures right after (the
        // final flush); recorded after the answer, a last batch could be missing from them.
        let mut new_ids = Vec::new(); // the ids this request adds (undone if its answer fails)
        if let Some((ids, points)) = &decoded {
            let mut st = sh.state.lock().unwrap();
            st.spans += ids.len() as u64;
            new_ids = ids.iter().copied().filter(|id| st.span_ids.insert(*id)).collect();
            st.points += points;
        }
        let extra = if code == 429 { "Retry-After: 1\r\n" } else { "" };
        let ok = answer(&mut conn, code, extra);
        let leaked = has_planted(&body);
        let mut st = sh.state.lock().unwrap();
        st.leaks += u64::from(leaked);
        *st.answered.entry(code).or_default() += 1;
        if code == 429 {
            let now = Instant::now();
            if let Some(prev) = st.last_429.insert(path.clone(), now) {
                st.gaps_429.push(now - prev);
            }
        }
        if !ok {
            // The exporter never got the 200: what it would have accepted is not accepted.
            if let Some((ids, points)) = &decoded {
                st.spans -= ids.len() as u64;
                for id in &new_ids {
                    st.span_ids.remove(id);
                }
                st.points -= points;
            }
            return;
        }
        match mode {
            Mode::Slow => st.late += 1,
            Mode::Healthy if decoded.is_none() => st.undecodable += 1,
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JSONL faults.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    /// The file's directory is moved away and a regular file takes its place (ENOTDIR).
    NotADir,
    /// The path is a symlink to /dev/full (ENOSPC); the file it was is kept aside.
    DiskFull,
}

struct JsonlFiles {
    dir: PathBuf,
    away: PathBuf,
    path: PathBuf,
    saved: usize,
    fault: Fault,
}

impl JsonlFiles {
    fn set(&mut self, fault: Fault) {
        if fault == self.fault {
            return;
        }
        match self.fault {
            Fault::None => {}
            Fault::NotADir => {
                std::fs::remove_file(&self.dir).unwrap();
                std::fs::rename(&self.away, &self.dir).unwrap();
            }
            Fault::DiskFull => {
                if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&self.path).unwrap();
                }
            }
        }
        match fault {
            Fault::None => {}
            Fault::NotADir => {
                std::fs::rename(&self.dir, &self.away).unwrap();
                std::fs::File::create_new(&self.dir).unwrap();
            }
            Fault::DiskFull => loop {
                // Keep the file aside (the exporter may recreate it meanwhile: then again).
                if std::fs::symlink_metadata(&self.path).is_ok() {
                    self.saved += 1;
                    let _ = std::fs::rename(&self.path, self.dir.join(format!("saved-{}.jsonl", self.saved)));
                }
                match std::os::unix::fs::symlink("/dev/full", &self.path) {
                    Ok(()) => break,
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                    Err(e) => panic!("symlink to /dev/full: {e}"),
                }
            },
        }
        self.fault = fault;
    }

    /// Every line in every file (current, rotated, kept aside).
    fn lines(&self) -> (u64, HashSet<u64>, usize, usize) {
        let (mut n, mut ids, mut files, mut max_line) = (0u64, HashSet::new(), 0, 0);
        for entry in std::fs::read_dir(&self.dir).unwrap() {
            let p = entry.unwrap().path();
            if !std::fs::symlink_metadata(&p).unwrap().is_file() {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(text.is_empty() || text.ends_with('\n'), "{} ends within a line", p.display());
            for line in text.lines() {
                assert!(!has_planted(line.as_bytes()), "{}: a planted secret was written", p.display());
                let e: Event =
                    serde_json::from_str(line).unwrap_or_else(|err| panic!("{}: bad line: {err}", p.display()));
                ids.insert(hash_id(&e.id));
                max_line = max_line.max(line.len());
                n += 1;
            }
        }
        (n, ids, files, max_line)
    }
}

// ---------------------------------------------------------------------------------------------
// Exporters, observed: each real exporter wrapped to note its errors (per row) and any panic.

#[derive(Default)]
struct ErrLog {
    counts: Mutex<BTreeMap<(usize, &'static str, String), u64>>,
    panics: AtomicU64,
}

struct Observed<E> {
    name: &'static str,
    inner: E,
    row: Arc<AtomicUsize>,
    log: Arc<ErrLog>,
}

/// A short name for an exporter error (never the URL or path).
fn kind_of(e: &ExportError) -> String {
    let m = e.to_string();
    let lower = m.to_lowercase();
    let known = [
        ("connection refused", "refused"),
        ("connection failed", "refused"),
        ("timed out", "timeout"),
        ("http status 500", "500"),
        ("http status 429", "429"),
        ("os error 20)", "ENOTDIR"),
        ("os error 28)", "ENOSPC"),
        ("os error 2)", "ENOENT"),
        ("connection reset", "reset"),
        ("unexpected end of file", "eof"),
        ("broken pipe", "broken-pipe"),
        ("protocol error", "protocol"),
    ];
    match known.iter().find(|(needle, _)| lower.contains(needle)) {
        Some((_, k)) => (*k).to_owned(),
        None => format!("{}: {}", e.code(), m.rsplit("): ").next().unwrap_or(&m)),
    }
}

fn observed<E: Exporter>(name: &'static str, inner: E, row: &Arc<AtomicUsize>, log: &Arc<ErrLog>) -> Observed<E> {
    Observed { name, inner, row: row.clone(), log: log.clone() }
}

impl<E: Exporter> Exporter for Observed<E> {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        let row = self.row.load(Ordering::Acquire);
        match catch_unwind(AssertUnwindSafe(|| self.inner.export(batch))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                *self.log.counts.lock().unwrap().entry((row, self.name, kind_of(&e))).or_default() += 1;
                Err(e)
            }
            Err(panic) => {
                self.log.panics.fetch_add(1, Ordering::AcqRel);
                resume_unwind(panic)
            }
        }
    }

    fn shutdown(&mut self) {
        self.inner.shutdown();
    }
}

// ---------------------------------------------------------------------------------------------
// Figures.

fn proc_kb(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn mib(kb: u64) -> String {
    format!("{:.1}", kb as f64 / 1024.0)
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn ms(us: u32) -> String {
    format!("{:.2}", f64::from(us) / 1000.0)
}

/// `recorded = dropped + filtered + redaction_failed + queued + exported + dropped' + failed + pending`.
fn unaccounted(s: &Stats) -> Vec<String> {
    s.exporters
        .iter()
        .filter_map(|e| {
            let sum =
                s.dropped + s.filtered + s.redaction_failed + s.queued + e.exported + e.dropped + e.failed + e.pending;
            (sum != s.recorded).then(|| format!("{}: recorded {} but the counters add up to {sum}", e.name, s.recorded))
        })
        .collect()
}

struct RowInfo {
    cycle: usize,
    phase: Phase,
    main: Vec<u32>,
    control: Vec<u32>,
    errors: usize,
    rss_kb: u64,
    stats: Option<Stats>,
}

fn counters(s: &Option<Stats>, name: &str) -> String {
    match s.as_ref().and_then(|s| s.exporter(name)) {
        Some(e) => format!("{}/{}/{}/{}", e.exported, e.dropped, e.failed, e.pending),
        None => "-".to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// The soak.

#[test]
#[ignore = "soak: run by `make test-soak` (short) and `make soak` (long)"]
fn tracking_under_faults() {
    let cfg = Config::from_env();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(soak(cfg));
}

async fn soak(cfg: Config) {
    let wall = Instant::now();
    let mut rows: Vec<(usize, Phase)> = vec![(0, Phase::Baseline)];
    for c in 1..=cfg.cycles {
        rows.extend(CYCLE.iter().map(|&p| (c, p)));
    }
    let between = rows.len();
    let row = Arc::new(AtomicUsize::new(between));
    eprintln!(
        "soak: {} s requested: phases of {:.1} s, {} cycle(s); {} main + {CONTROL_CLIENTS} control clients at {} req/s each",
        cfg.seconds,
        cfg.phase.as_secs_f64(),
        cfg.cycles,
        cfg.clients,
        cfg.rate
    );

    // The reference answers: the untracked server's, one per variant.
    let (probe, probe_srv) = connect(Soak).await;
    let mut expected = Vec::new();
    for v in 0..VARIANTS {
        expected.push(send(probe.peer(), v).await.expect("untracked request"));
    }
    disconnect(vec![(probe, probe_srv)]).await;
    let load = Arc::new(Load {
        row: row.clone(),
        rows: between,
        rate: cfg.rate,
        expected: Arc::new(expected),
        epoch: tokio::time::Instant::now(),
        slots: cfg.clients + CONTROL_CLIENTS,
    });

    // Phase 0: everything untracked.
    let mut control_conns = Vec::new();
    for _ in 0..CONTROL_CLIENTS {
        control_conns.push(connect(Soak).await);
    }
    let control = Group::start(control_conns, cfg.clients, &load);
    let mut plain = Vec::new();
    for _ in 0..cfg.clients {
        plain.push(connect(Soak).await);
    }
    let baseline = Group::start(plain, 0, &load);
    tokio::time::sleep(Duration::from_secs(2)).await; // warm-up, not counted
    row.store(0, Ordering::Release);
    tokio::time::sleep(cfg.phase).await;
    row.store(between, Ordering::Release);
    let mut row_rss = vec![proc_kb("VmRSS:"); rows.len()];
    let mut row_stats: Vec<Option<Stats>> = vec![None; rows.len()];
    let mut main_logs = baseline.stop().await;

    // The tracker: OTLP spans + metrics to the receiver, JSONL into a directory we can break.
    let tmp = TempDir::new("soak");
    let dir = tmp.path("jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files =
        JsonlFiles { away: tmp.path("jsonl.away"), path: dir.join("events.jsonl"), dir, saved: 0, fault: Fault::None };
    let mut receiver = Receiver::start();
    let mut otlp = OtlpConfig::new(receiver.url());
    otlp.timeout = EXPORT_TIMEOUT;
    let jsonl = JsonlConfig { path: files.path.clone(), max_file_bytes: JSONL_ROTATE_BYTES, max_files: 1_000 };
    let log = Arc::new(ErrLog::default());
    let tracker = Tracker::builder()
        .server("soak", Some("1.0.0"))
        .queue(QUEUE_EVENTS, QUEUE_BYTES)
        .export_policy(POLICY)
        .drop_timeout(LONG)
        .exporter("otlp", observed("otlp", OtlpTracesExporter::new(otlp.clone()).unwrap(), &row, &log))
        .exporter("otlp-metrics", observed("otlp-metrics", OtlpMetricsExporter::new(otlp).unwrap(), &row, &log))
        .exporter("jsonl", observed("jsonl", JsonlExporter::open(jsonl).unwrap(), &row, &log))
        .build()
        .unwrap();

    // Memory from here on: reset the peak (Linux ≥ 4.0; otherwise the peak since start is used).
    let hwm_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before_kb = proc_kb("VmRSS:");

    let mut tracked_conns = Vec::new();
    for _ in 0..cfg.clients {
        tracked_conns.push(connect(Tracked::new(Soak, tracker.clone()).with_transport(Transport::Memory)).await);
    }
    let tracked = Group::start(tracked_conns, 0, &load);
    // The queues' bounds in events, sampled every 50 ms.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (t, on) = (tracker.clone(), sampling.clone());
        tokio::spawn(async move {
            let mut peak: (u64, BTreeMap<String, u64>) = Default::default();
            while on.load(Ordering::Acquire) {
                let s = t.stats();
                peak.0 = peak.0.max(s.queued);
                for e in s.exporters {
                    let p = peak.1.entry(e.name).or_default();
                    *p = (*p).max(e.pending);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            peak
        })
    };
    // Row 0 is the untracked baseline, measured before.
    for (i, &(_, phase)) in rows.iter().enumerate().filter(|&(i, _)| i > 0) {
        receiver.set_mode(phase.mode());
        files.set(phase.jsonl());
        row.store(i, Ordering::Release);
        tokio::time::sleep(cfg.phase).await;
        row_rss[i] = proc_kb("VmRSS:");
        row_stats[i] = Some(tracker.stats());
    }
    row.store(between, Ordering::Release);
    sampling.store(false, Ordering::Release);
    let (peak_queued, peak_pending) = sampler.await.unwrap();
    let tracked_logs = tracked.stop().await;
    let sent_tracked: u64 = tracked_logs.iter().map(|l| l.sent).sum();
    let control_logs = control.stop().await;

    // Deliver what is left (the receiver and the disk are healthy again), then stop.
    let flushed = tracker.flush(LONG);
    let after_flush = tracker.stats();
    let shut = tracker.shutdown(LONG);
    let after_shutdown = tracker.stats();
    let peak_kb = proc_kb("VmHWM:");
    let end_kb = proc_kb("VmRSS:");
    let load_secs = wall.elapsed().as_secs_f64();

    // ----- Figures.
    main_logs.extend(tracked_logs);
    let mut infos: Vec<RowInfo> = rows
        .iter()
        .enumerate()
        .map(|(i, &(cycle, phase))| RowInfo {
            cycle,
            phase,
            main: Vec::new(),
            control: Vec::new(),
            errors: 0,
            rss_kb: row_rss[i],
            stats: row_stats[i].clone(),
        })
        .collect();
    let mut errors = Vec::new();
    for (logs, is_main) in [(&main_logs, true), (&control_logs, false)] {
        for l in logs {
            for (i, lat) in l.lat.iter().enumerate().take(between) {
                if is_main {
                    infos[i].main.extend_from_slice(lat);
                } else {
                    infos[i].control.extend_from_slice(lat);
                }
            }
            for (i, e) in &l.errors {
                if let Some(info) = infos.get_mut(*i) {
                    info.errors += 1;
                }
                errors.push(format!("row {i}: {e}"));
            }
        }
    }
    for info in &mut infos {
        info.main.sort_unstable();
        info.control.sort_unstable();
    }
    let mut base = infos[0].main.clone();
    base.extend_from_slice(&infos[0].control);
    base.sort_unstable();
    let p99_base = percentile(&base, 0.99);

    let mut out = String::new();
    let _ = writeln!(out, "\n== soak: tracked rmcp server under exporter faults");
    let _ = writeln!(
        out,
        "   {} main + {CONTROL_CLIENTS} control clients × {} req/s, phases of {:.1} s × {} cycle(s); \
         queue {QUEUE_EVENTS} ops / {} MiB, exporter queue {} + batch {}, backoff {:?}..{:?} × {} attempts, OTLP timeout {:?}",
        cfg.clients,
        cfg.rate,
        cfg.phase.as_secs_f64(),
        cfg.cycles,
        QUEUE_BYTES >> 20,
        POLICY.max_queued,
        POLICY.max_events,
        POLICY.initial_backoff,
        POLICY.max_backoff,
        POLICY.max_attempts,
        EXPORT_TIMEOUT
    );
    let _ = writeln!(
        out,
        "{:<2} {:<12} {:<34} {:>6} {:>4} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>21} {:>21} {:>21}",
        "c",
        "phase",
        "faults",
        "reqs",
        "err",
        "p50 ms",
        "p99 ms",
        "ctl p99",
        "limit",
        "RSS MiB",
        "recorded",
        "otlp e/d/f/p",
        "metrics e/d/f/p",
        "jsonl e/d/f/p"
    );
    let mut slow_rows = Vec::new();
    for info in &infos {
        let p99 = percentile(&info.main, 0.99);
        let ctl = percentile(&info.control, 0.99);
        let limit = if info.phase == Phase::Baseline {
            None
        } else {
            let reference = p99_base.max(ctl);
            Some((3 * reference).max(reference + 5_000))
        };
        if let Some(limit) = limit {
            if p99 > limit {
                slow_rows.push(format!(
                    "cycle {} {}: p99 {} ms > limit {} ms (baseline p99 {} ms, control p99 {} ms)",
                    info.cycle,
                    info.phase.name(),
                    ms(p99),
                    ms(limit),
                    ms(p99_base),
                    ms(ctl)
                ));
            }
        }
        let _ = writeln!(
            out,
            "{:<2} {:<12} {:<34} {:>6} {:>4} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>21} {:>21} {:>21}",
            info.cycle,
            info.phase.name(),
            info.phase.faults(),
            info.main.len(),
            info.errors,
            ms(percentile(&info.main, 0.5)),
            ms(p99),
            ms(ctl),
            limit.map_or("-".to_owned(), ms),
            mib(info.rss_kb),
            info.stats.as_ref().map_or("-".to_owned(), |s| s.recorded.to_string()),
            counters(&info.stats, "otlp"),
            counters(&info.stats, "otlp-metrics"),
            counters(&info.stats, "jsonl"),
        );
    }
    let _ = writeln!(
        out,
        "   (e/d/f/p = exported/dropped/failed/pending at the end of the phase; reqs, p50, p99: main clients)"
    );

    // Exporter errors per phase.
    let counts = log.counts.lock().unwrap().clone();
    let _ = writeln!(out, "exporter errors seen (retried or counted):");
    // Row 0 is the untracked baseline (no exporters).
    for (i, &(cycle, phase)) in rows.iter().enumerate().filter(|&(i, _)| i > 0) {
        let mut line = String::new();
        for name in EXPORTERS {
            let kinds: Vec<String> = counts
                .iter()
                .filter(|((r, n, _), _)| *r == i && *n == name)
                .map(|((_, _, k), c)| format!("{k}×{c}"))
                .collect();
            if !kinds.is_empty() {
                let _ = write!(line, "  {name}: {}", kinds.join(", "));
            }
        }
        let _ = writeln!(
            out,
            "   c{cycle} {:<12}{}",
            phase.name(),
            if line.is_empty() { "  none".to_owned() } else { line }
        );
    }

    // Receiver and JSONL.
    let rx = receiver.shared.state.lock().unwrap();
    let (lines, line_ids, nfiles, max_line) = files.lines();
    let mut gaps: Vec<Duration> = rx.gaps_429.clone();
    gaps.sort_unstable();
    let early = gaps.iter().filter(|g| **g < Duration::from_secs(1)).count();
    let _ = writeln!(
        out,
        "receiver: answered {:?}; spans accepted {} ({} distinct), histogram points {}, late answers {}",
        rx.answered,
        rx.spans,
        rx.span_ids.len(),
        rx.points,
        rx.late,
    );
    let _ = writeln!(
        out,
        "429 + Retry-After: 1 s: {early} of {} follow-up requests came sooner than 1 s (median gap {} ms)",
        gaps.len(),
        gaps.get(gaps.len() / 2).map_or(0, Duration::as_millis)
    );
    let _ = writeln!(
        out,
        "jsonl: {lines} lines ({} distinct events) in {nfiles} files, longest {max_line} B",
        line_ids.len()
    );
    let _ = writeln!(
        out,
        "queues (sampled every 50 ms): request path peak {peak_queued} ops (bound 2 × {QUEUE_EVENTS}: waiting + \
         being built), per exporter peak {peak_pending:?} events (bound {} + {} in flight)",
        POLICY.max_queued, POLICY.max_events
    );
    let _ = writeln!(out, "after flush:    {after_flush:?}");
    let _ = writeln!(out, "after shutdown: {after_shutdown:?}");

    // Memory: the request queue (two buffers, each within twice the bytes it holds) plus the
    // events that exporter queues, in-flight batches and the builder's free list can hold,
    // at most 3 × exporters × (queue + batch) items of at most twice the longest line + 2 KiB.
    let items = 3 * EXPORTERS.len() * (POLICY.max_queued + POLICY.max_events);
    let item_bytes = 2 * max_line as u64 + 2048;
    let bound = 4 * QUEUE_BYTES as u64 + items as u64 * item_bytes;
    let growth_kb = peak_kb.saturating_sub(rss_before_kb);
    let _ = writeln!(
        out,
        "memory: RSS {} MiB before tracking, peak {} MiB{}, {} MiB at the end; growth {} MiB ≤ bound {} MiB \
         (4 × {} MiB queue + {items} items × {item_bytes} B) + slack {} MiB",
        mib(rss_before_kb),
        mib(peak_kb),
        if hwm_reset { "" } else { " (since start: clear_refs unavailable)" },
        mib(end_kb),
        mib(growth_kb),
        mib(bound / 1024),
        QUEUE_BYTES >> 20,
        mib(RSS_SLACK_BYTES / 1024),
    );
    let _ =
        writeln!(out, "p99: baseline {} ms (main + control, untracked); wall time {:.1} s", ms(p99_base), load_secs);
    eprintln!("{out}");

    // ----- Checks.
    let mut failures: Vec<String> = Vec::new();
    if !errors.is_empty() {
        failures.push(format!(
            "{} requests failed or differed, e.g. {:?}",
            errors.len(),
            &errors[..errors.len().min(5)]
        ));
    }
    let expected_recorded = sent_tracked + cfg.clients as u64; // + one initialize per connection
    if let Err(e) = &flushed {
        failures.push(format!("flush with healthy exporters failed: {e}"));
    }
    if let Err(e) = &shut {
        failures.push(format!("shutdown failed: {e}"));
    }
    for (when, s) in [("after flush", &after_flush), ("after shutdown", &after_shutdown)] {
        for u in unaccounted(s) {
            failures.push(format!("{when}: {u}"));
        }
        if s.recorded != expected_recorded {
            failures.push(format!(
                "{when}: recorded {} but the clients sent {expected_recorded} tracked requests",
                s.recorded
            ));
        }
        if s.queued != 0 || s.exporters.iter().any(|e| e.pending != 0) {
            failures.push(format!("{when}: still queued or pending: {s:?}"));
        }
    }
    if after_flush != after_shutdown {
        failures.push("shutdown changed the counters after a complete flush".to_owned());
    }
    let exported = |name: &str| after_shutdown.exporter(name).map_or(0, |e| e.exported);
    if rx.span_ids.len() as u64 != exported("otlp") {
        failures.push(format!(
            "the receiver accepted {} distinct spans but otlp counts {} exported",
            rx.span_ids.len(),
            exported("otlp")
        ));
    }
    if rx.points != exported("otlp-metrics") {
        failures.push(format!(
            "the receiver accepted {} histogram points but otlp-metrics counts {} exported",
            rx.points,
            exported("otlp-metrics")
        ));
    }
    if rx.leaks != 0 {
        failures.push(format!("{} OTLP requests carried a planted secret", rx.leaks));
    }
    if rx.undecodable != 0 {
        failures.push(format!("{} OTLP requests did not decode", rx.undecodable));
    }
    if lines != exported("jsonl") || line_ids.len() as u64 != lines {
        failures.push(format!(
            "the JSONL files hold {lines} lines ({} distinct) but jsonl counts {} exported",
            line_ids.len(),
            exported("jsonl")
        ));
    }
    if peak_queued > 2 * QUEUE_EVENTS as u64 {
        failures.push(format!("the request-path queue held {peak_queued} operations"));
    }
    for (name, p) in &peak_pending {
        if *p > (POLICY.max_queued + POLICY.max_events) as u64 {
            failures.push(format!("{name} held {p} events, over its bound"));
        }
    }
    let panics = log.panics.load(Ordering::Acquire);
    if panics != 0 {
        failures.push(format!("exporters panicked {panics} times"));
    }
    // Every fault was really hit (otherwise this soak tested nothing).
    let seen = |exporter: &str, kind: &str| counts.keys().any(|(_, n, k)| *n == exporter && k == kind);
    for (exporter, kind) in [
        ("otlp", "refused"),
        ("otlp", "timeout"),
        ("otlp", "500"),
        ("otlp", "429"),
        ("otlp-metrics", "refused"),
        ("jsonl", "ENOTDIR"),
        ("jsonl", "ENOSPC"),
    ] {
        if !seen(exporter, kind) {
            failures.push(format!("{exporter} never hit {kind}"));
        }
    }
    if growth_kb * 1024 > bound + RSS_SLACK_BYTES {
        failures.push(format!(
            "peak RSS grew {} MiB, over the bound {} MiB + slack {} MiB",
            mib(growth_kb),
            mib(bound / 1024),
            mib(RSS_SLACK_BYTES / 1024)
        ));
    }
    // Over several cycles, memory at the end of each must not creep up.
    let recovered: Vec<u64> = infos.iter().filter(|i| i.phase == Phase::Recovered).map(|i| i.rss_kb).collect();
    if let (Some(first), Some(last)) = (recovered.first(), recovered.last()) {
        if last.saturating_sub(*first) * 1024 > RSS_SLACK_BYTES {
            failures.push(format!("RSS crept from {} MiB to {} MiB over the cycles", mib(*first), mib(*last)));
        }
    }
    failures.extend(slow_rows);
    drop(rx);
    assert!(failures.is_empty(), "soak failed:\n  {}", failures.join("\n  "));
}
