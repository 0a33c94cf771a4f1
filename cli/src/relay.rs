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

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use mcplens::proxy::{cut, Proxy, ProxyAction, ProxyConfig, TrackRecord, TrackedId, Verdict};
use mcplens::tracking::{
    ExporterConfig, Hooks, JsonlConfig, Operation, OtlpConfig, Payload, RequestId, RpcError, Session, Tracker,
    TrackerConfig, Transport,
};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use crate::outcome::{exit, Stop};
use crate::upstream::{Ended, HttpUpstream};

mod stdio;

/// How long the server may take to exit after its stdin closed before its process group gets
/// SIGTERM.
pub const STDIN_GRACE: Duration = Duration::from_millis(100);

/// How long the server's process group may take to exit after SIGTERM before it gets SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(200);

/// How long the events queued may take to reach their exporters when the proxy is ended (before
/// the server is ended).
const TRACKER_FLUSH_AT_END: Duration = Duration::from_millis(250);

/// How long the tracker may take to deliver what is queued when the proxy ends.
const TRACKER_SHUTDOWN: Duration = Duration::from_secs(5);

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

/// Why the relay ended.
enum End {
    /// The host closed our stdin (or stopped reading our stdout).
    Host,
    /// The server closed its stdout (`None`: its exit status is the code), or the HTTP upstream
    /// ended.
    Upstream(Option<Ended>),
    /// SIGTERM or SIGINT: ended as when the host leaves; the exit code is 128 + the signal.
    Signal(u8),
}

/// SIGTERM and SIGINT, so a host that stops the proxy with a signal does not leave the server
/// running (a SIGKILL cannot be caught: the server then sees its stdin close).
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            child_process::own_signals();
            Signals { term: signal(SignalKind::terminate()).ok(), int: signal(SignalKind::interrupt()).ok() }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The exit code of the next signal (never resolves without one).
    async fn recv(&mut self) -> u8 {
        #[cfg(unix)]
        {
            async fn next(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                () = next(&mut self.term) => 128 + 15,
                () = next(&mut self.int) => 128 + 2,
            }
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &[u8]) -> std::io::Result<()> {
    w.write_all(line).await?;
    w.write_all(b"\n").await
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server's stderr: a duplicate of ours, so the server writes where the proxy does even when
/// our fd 2 is close-on-exec (Node marks fds 0–2 so: inherited as they are, the server of the npm
/// command would start with no stderr, and a Python server print its logs to stdout).
fn server_stderr() -> Stdio {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
            return Stdio::from(fd);
        }
    }
    Stdio::inherit()
}

/// Our stdin, read by a blocking thread. On Unix a duplicate of fd 0 read directly (no lock, no
/// buffer of std's), waiting in poll(2) when the host left it non-blocking.
fn host_input() -> Box<dyn Read + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() {
            return Box::new(unix_stdio::Waiting(std::fs::File::from(fd)));
        }
    }
    Box::new(std::io::stdin())
}

/// Our stdout, written by blocking threads (as [`host_input`]).
fn host_output() -> Box<dyn Write + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(unix_stdio::Waiting(std::fs::File::from(fd)));
        }
    }
    Box::new(std::io::stdout())
}

/// Our stdout for the HTTP relay's loop. A pipe or a socket (what hosts give: Node's
/// `child_process` a socket pair, others pipes) is written on the runtime's own thread,
/// non-blocking; anything else (a terminal, a file) through tokio's blocking stdout, whose every
/// flush is a hop to another thread and back.
fn host_writer() -> Box<dyn AsyncWrite + Send + Unpin> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(output) = unix_stdio::writer(std::io::stdout().as_fd()) {
            return output;
        }
    }
    Box::new(tokio::io::stdout())
}

#[cfg(unix)]
mod unix_stdio {
    use std::io::{self, Read, Write};
    use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
    use std::os::unix::fs::FileTypeExt;

    use tokio::io::AsyncWrite;

    enum Kind {
        Pipe(std::fs::File),
        Socket(std::os::unix::net::UnixStream),
    }

    /// A duplicate of `fd` when it is a pipe or a Unix socket.
    fn kind(fd: BorrowedFd<'_>) -> Option<Kind> {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        let file_type = file.metadata().ok()?.file_type();
        if file_type.is_fifo() {
            Some(Kind::Pipe(file))
        } else if file_type.is_socket() {
            let socket = std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(file));
            socket.set_nonblocking(true).ok()?;
            Some(Kind::Socket(socket))
        } else {
            None
        }
    }

    pub fn writer(fd: BorrowedFd<'_>) -> Option<Box<dyn AsyncWrite + Send + Unpin>> {
        Some(match kind(fd)? {
            Kind::Pipe(file) => Box::new(tokio::net::unix::pipe::Sender::from_file(file).ok()?),
            Kind::Socket(socket) => Box::new(tokio::net::UnixStream::from_std(socket).ok()?),
        })
    }

    /// A host's fd used blocking. Its open file is the host's too, so its mode is the host's: a
    /// read or write that would block waits in poll(2) rather than fail.
    pub struct Waiting(pub std::fs::File);

    impl Waiting {
        fn wait(&self, events: libc::c_short) -> io::Result<()> {
            let mut fd = libc::pollfd { fd: self.0.as_fd().as_raw_fd(), events, revents: 0 };
            // SAFETY: one pollfd, alive for the call.
            if unsafe { libc::poll(&mut fd, 1, -1) } < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            Ok(())
        }
    }

    impl Read for Waiting {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                match self.0.read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait(libc::POLLIN)?,
                    other => return other,
                }
            }
        }
    }

    impl Write for Waiting {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            loop {
                match self.0.write(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait(libc::POLLOUT)?,
                    other => return other,
                }
            }
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
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

/// A line read: a message with its `\n` (one is added to a last line without it), or what was
/// kept of one over the bound.
enum Got<'a> {
    Message(&'a [u8]),
    Dropped { head: Vec<u8>, tail: Vec<u8> },
}

/// A line buffer's capacity kept between lines (a longer one's is given back).
const LINE_KEPT: usize = 1 << 20;

/// Newline-delimited lines of a blocking reader. A line over `max` bytes is never held whole:
/// its first and last bytes are kept, the rest read through and dropped.
struct LineReader<R> {
    r: BufReader<R>,
    max: usize,
    buf: Vec<u8>,
}

impl<R: Read> LineReader<R> {
    fn new(r: R, max: usize) -> LineReader<R> {
        LineReader { r: BufReader::new(r), max, buf: Vec::new() }
    }

    /// The next line (`None`: the end, or a read error).
    fn next(&mut self) -> Option<Got<'_>> {
        if self.buf.capacity() > LINE_KEPT {
            self.buf = Vec::new();
        }
        self.buf.clear();
        match (&mut self.r).take(self.max as u64 + 1).read_until(b'\n', &mut self.buf) {
            Ok(0) | Err(_) => None,
            Ok(_) if self.buf.last() != Some(&b'\n') && self.buf.len() > self.max => Some(self.drop_rest()),
            Ok(_) => {
                if self.buf.last() != Some(&b'\n') {
                    self.buf.push(b'\n');
                }
                Some(Got::Message(&self.buf))
            }
        }
    }

    /// Over the bound: the rest of the line is read in pieces of the bound, kept by none but its
    /// last bytes.
    fn drop_rest(&mut self) -> Got<'static> {
        let head = self.buf[..self.buf.len().min(cut::KEPT)].to_vec();
        let mut tail = self.buf[self.buf.len().saturating_sub(cut::KEPT)..].to_vec();
        loop {
            self.buf.clear();
            match (&mut self.r).take(self.max as u64 + 1).read_until(b'\n', &mut self.buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let ended = self.buf.last() == Some(&b'\n');
                    if ended {
                        self.buf.pop();
                    }
                    tail.extend_from_slice(&self.buf);
                    tail.drain(..tail.len().saturating_sub(cut::KEPT));
                    if ended {
                        break;
                    }
                }
            }
        }
        Got::Dropped { head, tail }
    }
}

/// The tracker, started once the upstream named itself; shared by the relay's threads.
struct Tracking {
    /// `None`: `--no-tracking`, or already started.
    config: Mutex<Option<TrackerConfig>>,
    tracker: OnceLock<(Tracker, Session)>,
    wall0: SystemTime,
}

impl Tracking {
    /// Its clock: records are stamped from the machine's time, `SystemTime::now()` being that
    /// time's zero (take both at once).
    fn new(config: Option<TrackerConfig>) -> Tracking {
        Tracking { config: Mutex::new(config), tracker: OnceLock::new(), wall0: SystemTime::now() }
    }

    fn start(
        &self,
        server: mcplens::tracking::PeerInfo,
        client: Option<mcplens::tracking::PeerInfo>,
        protocol: Option<&str>,
    ) {
        let Some(mut config) = lock(&self.config).take() else { return };
        config.server = Some(server);
        match Tracker::start(config, Hooks::default()) {
            Ok(tracker) => {
                let session = tracker.open_session(None, Some(Transport::Stdio));
                tracker.set_session_client(&session, client, protocol);
                let _ = self.tracker.set((tracker, session));
            }
            // The relay goes on without tracking; the host's connection is not ours to break.
            Err(e) => eprintln!("mcplens proxy: tracking is off: {}: {e}", e.code()),
        }
    }

    fn record(&self, r: &TrackRecord) {
        let Some((tracker, session)) = self.tracker.get() else { return };
        let op = Operation {
            request_id: match &r.request_id {
                TrackedId::Number(n) => RequestId::Number(*n),
                TrackedId::Text(s) => RequestId::Text(s),
            },
            params: r.params.as_deref().map_or(Payload::None, Payload::text),
            result: r.result.as_deref().map_or(Payload::None, Payload::text),
            error: r.error.as_ref().map(|(code, message)| RpcError { code: *code, message }),
            ..Operation::new(session.key(), r.method.clone(), self.wall0 + r.started, r.duration)
        };
        tracker.record(&op);
    }

    /// Delivers what is queued (bounded by [`TRACKER_FLUSH_AT_END`]).
    fn flush(&self) {
        if let Some((tracker, _)) = self.tracker.get() {
            if let Err(e) = tracker.flush(TRACKER_FLUSH_AT_END) {
                eprintln!("mcplens proxy: {}: {e}", e.code());
            }
        }
    }

    /// Closes the session and shuts the tracker down (once: the relay ends once).
    fn stop(&self) {
        if let Some((tracker, session)) = self.tracker.get() {
            tracker.close_session(session);
            if let Err(e) = tracker.shutdown(TRACKER_SHUTDOWN) {
                eprintln!("mcplens proxy: {}: {e}", e.code());
            }
        }
    }
}

/// The server process's place in the OS: its own process group, a parent-death signal, and
/// the signals that end the group.
mod child_process {
    /// How the server's process group is ended.
    pub enum Ending {
        Terminate,
        Kill,
    }

    /// The server starts in a process group of its own (the proxy ends the whole group, so a
    /// wrapper's children go too) and, on Linux, is SIGKILLed when the proxy dies (even by
    /// SIGKILL, which the proxy cannot catch). macOS has no parent-death signal: there a killed
    /// proxy's server sees its stdin's end. Windows: the server is killed with the proxy's handle
    /// (`kill_on_drop`), its own children are not.
    pub fn own_group(command: &mut tokio::process::Command) {
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(target_os = "linux")]
        {
            // SAFETY: the closure runs in the child between fork and exec and calls only
            // async-signal-safe functions (prctl, getppid).
            let parent = std::process::id() as libc::pid_t;
            unsafe {
                command.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The proxy died before the signal was armed.
                    if libc::getppid() != parent {
                        return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
                    }
                    Ok(())
                });
            }
        }
        #[cfg(not(unix))]
        let _ = command;
    }

    /// Sends SIGTERM or SIGKILL to the server's process group (it leads it).
    pub fn signal_group(child: &tokio::process::Child, ending: Ending) {
        #[cfg(unix)]
        if let Some(pid) = child.id().and_then(|p| libc::pid_t::try_from(p).ok()) {
            let sig = match ending {
                Ending::Terminate => libc::SIGTERM,
                Ending::Kill => libc::SIGKILL,
            };
            // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
            unsafe {
                libc::kill(-pid, sig);
            }
        }
        #[cfg(not(unix))]
        let _ = (child, ending);
    }

    /// SIGTERM and SIGINT are the command's own: a handler the host runtime installed before us
    /// is set back to the default before ours is installed. Node's handler resets the terminal
    /// and re-raises the signal to itself, expecting the default action; chained behind ours (as
    /// the signal registry chains the handler it finds) it re-raised the signal into our handler
    /// forever, and the npm command never ended.
    #[cfg(unix)]
    pub fn own_signals() {
        for sig in [libc::SIGTERM, libc::SIGINT] {
            // SAFETY: sigaction(2) reads the current disposition into a zeroed struct; signal(2)
            // sets the default; no handler of ours is involved.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction != libc::SIG_DFL
                    && old.sa_sigaction != libc::SIG_IGN
                {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
        }
    }
}
