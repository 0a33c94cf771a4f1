//! The stdio relay (`mcplens proxy -- <server command>`), in a bare relay's shape: one blocking
//! thread per direction reads a line, hands it to the machine and, when the machine says
//! [`Verdict::Forward`], writes it on at once, from the buffer it was read into. No task, no
//! channel and no wake-up beyond the bare relay's on a relayed line: the tokio loop's readiness
//! waits, task polls and channel hops cost more than the proxy's own work (measured: a relayed
//! call now makes the bare relay's two reads and two writes, and four `epoll_wait`s fewer).
//!
//! The machine sits behind one mutex; each side's writer behind its own, taken before the
//! machine's is let go, so lines leave in the order the machine decided them (always machine,
//! then host, then upstream: no lock waits on a later one's holder). Tracking records are queued
//! in that order too, with the machine held, and handed to the tracker once the lines are
//! written. A reader blocked on a full pipe holds only its side's writer: the other direction
//! goes on. The runtime's thread (the caller's) only waits: for a signal, for a side's end, and
//! for the machine's timer while one is armed.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mcplens::proxy::{Proxy, ProxyAction, TrackRecord, Verdict};
use mcplens::tracking::TrackerConfig;
use tokio::sync::{mpsc, Notify};

use super::common::{
    child_process, host_input, host_output, lock, server_stderr, sleep_until, End, Got, LineReader, Signals, Tracking,
    STDIN_GRACE, TERM_GRACE,
};
use crate::outcome::{exit, Stop};

/// Runs the relay to a stdio server until one side ends; returns how it ended and the server's
/// exit status (when it exited by itself).
pub(super) async fn run(
    proxy: Proxy,
    signals: &mut Signals,
    command: Vec<String>,
    tracker: Option<TrackerConfig>,
    max_message: usize,
) -> Result<(End, Option<ExitStatus>), Stop> {
    let (program, args) = command.split_first().ok_or_else(|| Stop::usage("no server command after `--`"))?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(server_stderr()).kill_on_drop(true);
    child_process::own_group(&mut command);
    let not_started = |e: io::Error| Stop {
        code: "transport_error",
        message: format!("could not start the server command: {}", e.kind()),
        exit: exit::CONNECT,
    };
    let mut child = command.spawn().map_err(not_started)?;
    let (to_server, from_server) = pipes::blocking(&mut child).map_err(not_started)?;
    let (ended_tx, mut ended) = mpsc::unbounded_channel();
    let relay = Arc::new(Relay {
        core: Mutex::new(Core { proxy, armed: None, closed: false }),
        host_out: Mutex::new(Output(Some(host_output()))),
        upstream_out: Mutex::new(Output(Some(Box::new(to_server)))),
        records: Mutex::new(VecDeque::new()),
        tracking: Tracking::new(tracker),
        rearm: Notify::new(),
        ended: ended_tx,
        t0: Instant::now(),
    });
    Arc::clone(&relay).spawn_reader(Side::Host, host_input(), max_message).map_err(not_started)?;
    Arc::clone(&relay).spawn_reader(Side::Upstream, Box::new(from_server), max_message).map_err(not_started)?;
    let end = relay.wait(signals, &mut ended).await;
    let status = relay.finish(&end, child).await;
    Ok((end, status))
}

/// Where a line came from.
#[derive(Clone, Copy)]
enum Side {
    Host,
    Upstream,
}

/// What the relay's threads share.
struct Relay {
    core: Mutex<Core>,
    host_out: Mutex<Output>,
    upstream_out: Mutex<Output>,
    /// Records in the machine's order, queued with the machine held and handed to the tracker
    /// after the turn's lines are written (never on a line's way).
    records: Mutex<VecDeque<TrackRecord>>,
    tracking: Tracking,
    /// The machine's timer moved earlier: the runtime's thread sleeps again.
    rearm: Notify,
    /// A side's end (the host's stdin or stdout, the server's stdout), for the runtime's thread.
    ended: mpsc::UnboundedSender<End>,
    t0: Instant,
}

/// The machine and what the relay keeps with it.
struct Core {
    proxy: Proxy,
    /// When the runtime's thread wakes for the machine's timer (`None`: it does not).
    armed: Option<Duration>,
    /// The relay is ending: lines read from now on are read through and left.
    closed: bool,
}

/// One side's writer (`None` once closed).
struct Output(Option<Box<dyn Write + Send>>);

impl Output {
    /// Writes the line forwarded (with its `\n`), then the machine's lines; `Err` once the side
    /// is gone.
    fn write(&mut self, forward: Option<&[u8]>, lines: &[u8]) -> io::Result<()> {
        let Some(w) = &mut self.0 else { return Err(io::ErrorKind::BrokenPipe.into()) };
        if let Some(line) = forward {
            w.write_all(line)?;
        }
        if !lines.is_empty() {
            w.write_all(lines)?;
        }
        w.flush()
    }
}

/// What one event made the relay write and record.
#[derive(Default)]
struct Turn<'a> {
    /// The line forwarded (with its `\n`): to the host when it came from the upstream, and back.
    forward: Option<(Side, &'a [u8])>,
    /// The machine's lines to each side, each with its `\n`.
    to_host: Vec<u8>,
    to_upstream: Vec<u8>,
    /// Records were queued.
    tracked: bool,
}

impl Turn<'_> {
    fn forward_to(&self, side: Side) -> Option<&[u8]> {
        match (self.forward, side) {
            (Some((Side::Upstream, line)), Side::Host) | (Some((Side::Host, line)), Side::Upstream) => Some(line),
            _ => None,
        }
    }
}

fn push_line(out: &mut Vec<u8>, line: &str) {
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
}

impl Relay {
    /// Reads `input`'s lines on a thread of its own until its end, each handled as it comes.
    fn spawn_reader(self: Arc<Self>, from: Side, input: Box<dyn io::Read + Send>, max: usize) -> io::Result<()> {
        let name = match from {
            Side::Host => "mcplens-host",
            Side::Upstream => "mcplens-server",
        };
        std::thread::Builder::new().name(name.into()).spawn(move || {
            let mut lines = LineReader::new(input, max);
            while let Some(line) = lines.next() {
                self.turn(from, line);
            }
            let _ = self.ended.send(match from {
                Side::Host => End::Host,
                Side::Upstream => End::Upstream(None),
            });
        })?;
        Ok(())
    }

    /// One line read (with its `\n`): the machine's verdict, then its actions performed.
    fn turn(&self, from: Side, line: Got<'_>) {
        let mut core = lock(&self.core);
        if core.closed {
            return;
        }
        let now = self.t0.elapsed();
        let forward = match line {
            Got::Message(line) => {
                let message = &line[..line.len() - 1];
                let verdict = match from {
                    Side::Host => core.proxy.handle_host(message, now),
                    Side::Upstream => core.proxy.handle_upstream(message, now),
                };
                (verdict == Verdict::Forward).then_some((from, line))
            }
            Got::Dropped { head, tail } => {
                match from {
                    Side::Host => core.proxy.handle_host_oversize(&head, &tail, now),
                    Side::Upstream => core.proxy.handle_upstream_oversize(&head, &tail, now),
                }
                None
            }
        };
        self.perform(core, Turn { forward, ..Turn::default() });
    }

    /// The machine's timer: runs it when due (a deadline armed earlier may be gone since).
    fn timeout(&self) {
        let mut core = lock(&self.core);
        let now = self.t0.elapsed();
        if core.closed || core.proxy.poll_timeout().is_none_or(|at| at > now) {
            return;
        }
        core.proxy.handle_timeout(now);
        self.perform(core, Turn::default());
    }

    /// Drains the machine's actions into `turn`, then writes it: each side's writer taken before
    /// the machine is let go; records handed to the tracker last.
    fn perform(&self, mut core: MutexGuard<'_, Core>, mut turn: Turn<'_>) {
        let mut records = None;
        while let Some(action) = core.proxy.poll_action() {
            match action {
                ProxyAction::ToHost(line) => push_line(&mut turn.to_host, &line),
                ProxyAction::ToUpstream(line) => push_line(&mut turn.to_upstream, &line),
                ProxyAction::Initialized { server, client, protocol_version } => {
                    self.tracking.start(server, client, protocol_version.as_deref())
                }
                ProxyAction::Track(record) => {
                    records.get_or_insert_with(|| lock(&self.records)).push_back(record);
                    turn.tracked = true;
                }
                ProxyAction::Notice(message) => eprintln!("mcplens proxy: {message}"),
                other => eprintln!("mcplens proxy: an action this build does not perform: {other:?}"),
            }
        }
        drop(records);
        self.rearm(&mut core);
        let to_host = turn.forward_to(Side::Host);
        let to_upstream = turn.forward_to(Side::Upstream);
        let host = (to_host.is_some() || !turn.to_host.is_empty()).then(|| lock(&self.host_out));
        let upstream = (to_upstream.is_some() || !turn.to_upstream.is_empty()).then(|| lock(&self.upstream_out));
        drop(core);
        if let Some(mut out) = host {
            if out.write(to_host, &turn.to_host).is_err() {
                let _ = self.ended.send(End::Host);
            }
        }
        if let Some(mut out) = upstream {
            // A server gone is seen when its stdout ends.
            let _ = out.write(to_upstream, &turn.to_upstream);
        }
        if turn.tracked {
            self.record_queued();
        }
    }

    /// Hands the queued records to the tracker, in the machine's order: a turn on the other
    /// thread may have queued after this one's and be here first, so the queue stays held while
    /// they are recorded (recording never waits on I/O).
    fn record_queued(&self) {
        let mut records = lock(&self.records);
        while let Some(record) = records.pop_front() {
            self.tracking.record(&record);
        }
    }

    /// Wakes the runtime's thread only when the machine's next deadline is earlier than the one
    /// it sleeps until (a later one: it wakes early, finds nothing due, and sleeps again).
    fn rearm(&self, core: &mut Core) {
        if let Some(next) = core.proxy.poll_timeout() {
            if core.armed.is_none_or(|armed| next < armed) {
                core.armed = Some(next);
                self.rearm.notify_one();
            }
        }
    }

    /// The runtime's thread: waits for a signal or a side's end, running the machine's timer.
    async fn wait(&self, signals: &mut Signals, ended: &mut mpsc::UnboundedReceiver<End>) -> End {
        loop {
            let at = {
                let mut core = lock(&self.core);
                core.armed = core.proxy.poll_timeout();
                core.armed.map(|d| tokio::time::Instant::from_std(self.t0 + d))
            };
            tokio::select! {
                code = signals.recv() => return End::Signal(code),
                Some(end) = ended.recv() => return end,
                () = self.rearm.notified() => {}
                () = sleep_until(at), if at.is_some() => self.timeout(),
            }
        }
    }

    /// Ends the relay: what is queued goes to the exporters; unless the server ended, its
    /// requests to the host still unanswered are answered with an error; then the server ends.
    async fn finish(&self, end: &End, child: tokio::process::Child) -> Option<ExitStatus> {
        lock(&self.core).closed = true;
        self.record_queued();
        // What is queued is written before anything else: a host may SIGKILL the proxy at once.
        self.tracking.flush();
        if !matches!(end, End::Upstream(_)) {
            let mut lines = Vec::new();
            let mut core = lock(&self.core);
            core.proxy.handle_host_end(self.t0.elapsed());
            while let Some(action) = core.proxy.poll_action() {
                if let ProxyAction::ToUpstream(line) = action {
                    push_line(&mut lines, &line);
                }
            }
            drop(core);
            let _ = lock(&self.upstream_out).write(None, &lines);
        }
        let stdin = lock(&self.upstream_out).0.take();
        let status = close(child, stdin).await;
        self.tracking.stop();
        status
    }
}

/// Ends the server: its stdin closed; its process group SIGTERMed after [`STDIN_GRACE`] and
/// SIGKILLed after [`TERM_GRACE`] more. Its exit status, if it exited by itself.
async fn close(mut child: tokio::process::Child, stdin: Option<Box<dyn Write + Send>>) -> Option<ExitStatus> {
    drop(stdin);
    if let Ok(status) = tokio::time::timeout(STDIN_GRACE, child.wait()).await {
        return status.ok();
    }
    child_process::signal_group(&child, child_process::Ending::Terminate);
    if let Ok(status) = tokio::time::timeout(TERM_GRACE, child.wait()).await {
        return status.ok();
    }
    child_process::signal_group(&child, child_process::Ending::Kill);
    let _ = child.kill().await;
    None
}

/// The server's stdin and stdout as blocking files (taken from the child, out of the runtime).
mod pipes {
    use std::fs::File;
    use std::io;

    pub fn blocking(child: &mut tokio::process::Child) -> io::Result<(File, File)> {
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        #[cfg(unix)]
        return Ok((File::from(stdin.into_owned_fd()?), File::from(stdout.into_owned_fd()?)));
        #[cfg(windows)]
        return Ok((File::from(stdin.into_owned_handle()?), File::from(stdout.into_owned_handle()?)));
    }
}
