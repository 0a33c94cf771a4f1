//! `mcplens proxy`: the driver of the core's [`Proxy`] machine between a host (our stdin and
//! stdout) and a stdio server (the command after `--`) or a streamable-HTTP one (`--url`,
//! [`crate::upstream`]).
//!
//! It spawns the server (or opens the HTTP upstream), reads newline-delimited JSON-RPC from both
//! sides, hands each line to the machine and writes it on unchanged when the machine says
//! [`Verdict::Forward`], performs the machine's actions (lines to either side, tracking records,
//! notices to stderr), reads the clock and arms the machine's timer. Every rule is the core's. The
//! server's stderr is the proxy's (inherited).
//!
//! A stdio server is relayed by blocking threads, one per direction ([`stdio`]: the hot path,
//! in a bare relay's shape); an HTTP upstream by one loop on the runtime's thread, the host's
//! lines read by a thread of their own ([`run_http`]).
//!
//! Ends, as hosts end their servers (`docs/proxy.md`): the host closing our stdin (exit code 0),
//! SIGTERM (143) or SIGINT (130) first write the events queued (a host may SIGKILL the proxy
//! 1.5 ms later), then answer the server's requests to the host still unanswered with an error
//! (so a server waiting on one can exit), close the server's stdin, and end the server's process
//! group: SIGTERM after [`STDIN_GRACE`], SIGKILL after [`TERM_GRACE`] more. The server runs in a
//! process group of its own, with the proxy's stderr, and (Linux) a parent-death SIGKILL, so even
//! a SIGKILLed proxy leaves no server behind. The server ending (its stdout closed) ends the proxy
//! with the server's exit code (1 when it was killed by a signal). An HTTP upstream's end is
//! described in [`crate::upstream`]; the proxy's end DELETEs its session.

use std::path::PathBuf;
use std::time::Instant;

use mcplens::proxy::{Proxy, ProxyAction, ProxyConfig, TrackRecord, Verdict};
use mcplens::tracking::{ExporterConfig, JsonlConfig, OtlpConfig, TrackerConfig};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use crate::outcome::{exit, Stop};
use crate::upstream::HttpUpstream;

mod common;
mod stdio;

use common::{host_input, sleep_until, End, Got, LineReader, Signals, Tracking};

/// The server: a command run over stdio, or a streamable-HTTP URL with extra headers.
pub enum Target {
    Command(Vec<String>),
    Url { url: String, headers: http::HeaderMap },
}

/// What the command line asked for.
pub struct Options {
    pub target: Target,
    pub config: ProxyConfig,
    /// `None`: `--no-tracking`.
    pub tracker: Option<TrackerConfig>,
    /// The longest message relayed (bytes): a longer line, either way, is dropped and said.
    pub max_message: usize,
}

/// Resolves the tracker configuration: `--config FILE` (the JSON of the core's `TrackerConfig`),
/// and, when the configuration names no exporter, `--events FILE` (JSONL) and `--otlp URL`.
pub fn tracker_config(
    config: Option<&PathBuf>,
    events: Option<&PathBuf>,
    otlp: Option<&str>,
) -> Result<TrackerConfig, Stop> {
    let mut c = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Stop {
                code: "io_error",
                message: format!("cannot read {}: {}", path.display(), e.kind()),
                exit: exit::USAGE,
            })?;
            TrackerConfig::from_json(&text).map_err(|e| Stop::usage(format!("--config: {e}")))?
        }
        None => TrackerConfig::default(),
    };
    if (events.is_some() || otlp.is_some()) && !c.exporters.is_empty() {
        return Err(Stop::usage("--events or --otlp and a --config that names exporters: give them in one place"));
    }
    if let Some(path) = events {
        c.exporters.push(ExporterConfig::jsonl(JsonlConfig::new(path)));
    }
    if let Some(url) = otlp {
        let parsed = url::Url::parse(url).map_err(|_| Stop::usage("--otlp is not a URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Stop::usage("--otlp must be http:// or https://"));
        }
        c.exporters.push(ExporterConfig::Otlp { name: None, config: OtlpConfig::new(url) });
    }
    Ok(c)
}

/// Runs the proxy until one side ends; returns the exit code.
pub async fn run(options: Options) -> Result<u8, Stop> {
    let proxy = Proxy::new(options.config).map_err(|e| Stop::usage(e.to_string()))?;
    // Before the server starts: a signal from then on ends both.
    let mut signals = Signals::new();
    let tracker = options.tracker;
    let (end, status) = match options.target {
        Target::Command(command) => stdio::run(proxy, &mut signals, command, tracker, options.max_message).await?,
        Target::Url { url, headers } => {
            (run_http(proxy, &mut signals, &url, headers, tracker, options.max_message).await?, None)
        }
    };
    Ok(match end {
        End::Host => exit::OK,
        End::Signal(code) => code,
        End::Upstream(Some(ended)) => {
            eprintln!("error: {}", ended.message);
            ended.exit
        }
        End::Upstream(None) => {
            status.and_then(|s| s.code()).map_or(exit::FAILED, |c| u8::try_from(c).unwrap_or(exit::FAILED))
        }
    })
}

/// The relay to a streamable-HTTP upstream: one loop on the runtime's thread (the upstream's
/// requests are tasks of it); the host's lines come from a reader thread.
async fn run_http(
    mut proxy: Proxy,
    signals: &mut Signals,
    url: &str,
    headers: http::HeaderMap,
    tracker: Option<TrackerConfig>,
    max_message: usize,
) -> Result<End, Stop> {
    let (mut upstream, mut upstream_lines, mut http_ended) = HttpUpstream::connect(url, headers, max_message)?;
    let mut host_lines = host_lines(max_message);
    let mut host_out = BufWriter::new(host_writer());

    let t0 = Instant::now();
    let tracking = Tracking::new(tracker);
    // Requests to record once this turn's lines are written: the tracker's worker then wakes
    // after the host (or the server) has its bytes, not in between on a busy machine.
    let mut answered: Vec<TrackRecord> = Vec::new();

    let end = loop {
        let timer = proxy.poll_timeout().map(|d| tokio::time::Instant::from_std(t0 + d));
        let mut host_gone = false;
        tokio::select! {
            code = signals.recv() => break End::Signal(code),
            line = host_lines.recv() => match line {
                Some(Line::Message(line)) => {
                    if proxy.handle_host(&line, t0.elapsed()) == Verdict::Forward {
                        upstream.send(&line).await;
                    }
                }
                Some(Line::Dropped { head, tail }) => proxy.handle_host_oversize(&head, &tail, t0.elapsed()),
                None => break End::Host,
            },
            line = upstream_lines.recv() => match line {
                Some(line) => {
                    if proxy.handle_upstream(&line, t0.elapsed()) == Verdict::Forward {
                        host_gone |= write_line(&mut host_out, &line).await.is_err();
                    }
                }
                None => break End::Upstream(None),
            },
            Some(ended) = http_ended.recv() => break End::Upstream(Some(ended)),
            () = sleep_until(timer), if timer.is_some() => proxy.handle_timeout(t0.elapsed()),
        }
        while let Some(action) = proxy.poll_action() {
            match action {
                ProxyAction::ToHost(line) => host_gone |= write_line(&mut host_out, line.as_bytes()).await.is_err(),
                ProxyAction::ToUpstream(line) => upstream.send(line.as_bytes()).await,
                ProxyAction::Initialized { server, client, protocol_version } => {
                    upstream.initialized(protocol_version.as_deref());
                    tracking.start(server, client, protocol_version.as_deref())
                }
                ProxyAction::Track(record) => answered.push(record),
                ProxyAction::Notice(message) => eprintln!("mcplens proxy: {message}"),
                other => eprintln!("mcplens proxy: an action this build does not perform: {other:?}"),
            }
        }
        host_gone |= host_out.flush().await.is_err();
        for record in answered.drain(..) {
            tracking.record(&record);
        }
        if host_gone {
            break End::Host;
        }
    };
    let _ = host_out.flush().await;
    // What is queued is written before anything else: a host may SIGKILL the proxy at once.
    tracking.flush();
    if !matches!(end, End::Upstream(_)) {
        // The server's requests to the host that will never be answered now are answered with
        // an error, so a server waiting on one can end.
        proxy.handle_host_end(t0.elapsed());
        while let Some(action) = proxy.poll_action() {
            if let ProxyAction::ToUpstream(line) = action {
                upstream.send(line.as_bytes()).await;
            }
        }
    }
    upstream.close().await;
    tracking.stop();
    Ok(end)
}

async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &[u8]) -> std::io::Result<()> {
    w.write_all(line).await?;
    w.write_all(b"\n").await
}

/// Our stdout for the HTTP relay's loop. A pipe or a socket (what hosts give: Node's
/// `child_process` a socket pair, others pipes) is written on the runtime's own thread,
/// non-blocking; anything else (a terminal, a file) through tokio's blocking stdout, whose every
/// flush is a hop to another thread and back.
fn host_writer() -> Box<dyn AsyncWrite + Send + Unpin> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(output) = common::unix_stdio::writer(std::io::stdout().as_fd()) {
            return output;
        }
    }
    Box::new(tokio::io::stdout())
}

/// A line the HTTP relay's loop gets: a message (without its `\n`), or what was kept of one over
/// the bound (its first and last bytes, at most [`cut::KEPT`] each), which the proxy answers for.
enum Line {
    Message(Vec<u8>),
    Dropped { head: Vec<u8>, tail: Vec<u8> },
}

/// How many lines wait between the host's reader and the HTTP relay's loop: past it the reader
/// stops reading, and the writer on the other end of the pipe waits (backpressure, not memory).
const LINES_WAITING: usize = 64;

/// The host's lines for the HTTP relay's loop, read on a thread of their own.
fn host_lines(max: usize) -> mpsc::Receiver<Line> {
    let (tx, rx) = mpsc::channel(LINES_WAITING);
    let read = move || {
        let mut lines = LineReader::new(host_input(), max);
        while let Some(got) = lines.next() {
            let line = match got {
                Got::Message(line) => Line::Message(line[..line.len() - 1].to_vec()),
                Got::Dropped { head, tail } => Line::Dropped { head, tail },
            };
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    };
    // Without the thread the receiver ends at once, as when the host closes our stdin.
    let _ = std::thread::Builder::new().name("mcplens-host".into()).spawn(read);
    rx
}
