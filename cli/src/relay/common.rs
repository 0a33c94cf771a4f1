//! What both relays use (the stdio one in [`super::stdio`], the HTTP one in [`super::run_http`]):
//! how the relay ended, the signals that end it, the host's stdin and stdout, the line reader with
//! the oversize rule, the tracker the relay records to, and the server process's place in the OS.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use mcplens::proxy::{cut, TrackRecord, TrackedId};
use mcplens::tracking::{Hooks, Operation, Payload, RequestId, RpcError, Session, Tracker, TrackerConfig, Transport};

use crate::upstream::Ended;

/// How long the server may take to exit after its stdin closed before its process group gets
/// SIGTERM.
pub(super) const STDIN_GRACE: Duration = Duration::from_millis(100);

/// How long the server's process group may take to exit after SIGTERM before it gets SIGKILL.
pub(super) const TERM_GRACE: Duration = Duration::from_millis(200);

/// How long the events queued may take to reach their exporters when the proxy is ended (before
/// the server is ended).
pub(super) const TRACKER_FLUSH_AT_END: Duration = Duration::from_millis(250);

/// How long the tracker may take to deliver what is queued when the proxy ends.
pub(super) const TRACKER_SHUTDOWN: Duration = Duration::from_secs(5);

/// Why the relay ended.
pub(super) enum End {
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
pub(super) struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(super) fn new() -> Signals {
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
    pub(super) async fn recv(&mut self) -> u8 {
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

pub(super) async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server's stderr: a duplicate of ours, so the server writes where the proxy does even when
/// our fd 2 is close-on-exec (Node marks fds 0–2 so: inherited as they are, the server of the npm
/// command would start with no stderr, and a Python server print its logs to stdout).
pub(super) fn server_stderr() -> Stdio {
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
pub(super) fn host_input() -> Box<dyn Read + Send> {
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
pub(super) fn host_output() -> Box<dyn Write + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(unix_stdio::Waiting(std::fs::File::from(fd)));
        }
    }
    Box::new(std::io::stdout())
}

#[cfg(unix)]
pub(super) mod unix_stdio {
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

/// A line read: a message with its `\n` (one is added to a last line without it), or what was
/// kept of one over the bound.
pub(super) enum Got<'a> {
    Message(&'a [u8]),
    Dropped { head: Vec<u8>, tail: Vec<u8> },
}

/// A line buffer's capacity kept between lines (a longer one's is given back).
pub(super) const LINE_KEPT: usize = 1 << 20;

/// Newline-delimited lines of a blocking reader. A line over `max` bytes is never held whole:
/// its first and last bytes are kept, the rest read through and dropped.
pub(super) struct LineReader<R> {
    r: BufReader<R>,
    max: usize,
    buf: Vec<u8>,
}

impl<R: Read> LineReader<R> {
    pub(super) fn new(r: R, max: usize) -> LineReader<R> {
        LineReader { r: BufReader::new(r), max, buf: Vec::new() }
    }

    /// The next line (`None`: the end, or a read error).
    pub(super) fn next(&mut self) -> Option<Got<'_>> {
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
    pub(super) fn drop_rest(&mut self) -> Got<'static> {
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
pub(super) struct Tracking {
    /// `None`: `--no-tracking`, or already started.
    config: Mutex<Option<TrackerConfig>>,
    tracker: OnceLock<(Tracker, Session)>,
    wall0: SystemTime,
}

impl Tracking {
    /// Its clock: records are stamped from the machine's time, `SystemTime::now()` being that
    /// time's zero (take both at once).
    pub(super) fn new(config: Option<TrackerConfig>) -> Tracking {
        Tracking { config: Mutex::new(config), tracker: OnceLock::new(), wall0: SystemTime::now() }
    }

    pub(super) fn start(
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

    pub(super) fn record(&self, r: &TrackRecord) {
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
    pub(super) fn flush(&self) {
        if let Some((tracker, _)) = self.tracker.get() {
            if let Err(e) = tracker.flush(TRACKER_FLUSH_AT_END) {
                eprintln!("mcplens proxy: {}: {e}", e.code());
            }
        }
    }

    /// Closes the session and shuts the tracker down (once: the relay ends once).
    pub(super) fn stop(&self) {
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
pub(super) mod child_process {
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
