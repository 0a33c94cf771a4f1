//! The progress line on stderr while a traversal runs: a spinner, the list requests sent so far
//! and the elapsed time. Drawn only when stderr is a terminal (or `--progress always`), and only
//! once a traversal has taken longer than a moment; erased before anything else is printed.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::connect::RequestCounter;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
pub const FIRST_DRAW: Duration = Duration::from_millis(200);
/// When a server still starting is said.
pub const STARTING_DRAW: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(100);

/// A running progress line; [`Progress::finish`] erases it.
pub struct Progress {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts the line for a traversal of `method` on `server` (does nothing when disabled).
    pub fn start(enabled: bool, server: &str, method: &'static str, counter: Arc<RequestCounter>) -> Progress {
        let label = format!("{server}: {method}");
        let first = counter.sent(method);
        Progress::spawn(enabled, FIRST_DRAW, move |elapsed| {
            let pages = counter.sent(method).saturating_sub(first);
            let unit = if pages == 1 { "page" } else { "pages" };
            format!("{label}: {pages} {unit} requested, {:.1} s", elapsed.as_secs_f64())
        })
    }

    /// Starts the line for a server that is slow to start: `starting <server>…` once the
    /// handshake has taken [`STARTING_DRAW`] (some servers take seconds; without it the screen
    /// stays blank).
    pub fn starting(enabled: bool, server: &str) -> Progress {
        let label = format!("starting {server}…");
        Progress::spawn(enabled, STARTING_DRAW, move |elapsed| format!("{label} {:.0} s", elapsed.as_secs_f64()))
    }

    fn spawn(enabled: bool, first_draw: Duration, text: impl Fn(Duration) -> String + Send + 'static) -> Progress {
        if !enabled {
            return Progress { stop: None, task: None };
        }
        let (stop, mut stopped) = oneshot::channel::<()>();
        let width = terminal_size::terminal_size_of(std::io::stderr()).map_or(80, |(w, _)| usize::from(w.0));
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let mut drawn = false;
            let mut frame = 0usize;
            let mut wait = first_draw;
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    _ = tokio::time::sleep(wait) => {}
                }
                wait = TICK;
                let text = format!("{} {}", FRAMES[frame % FRAMES.len()], text(started.elapsed()));
                // One terminal line, or erasing it would leave the wrapped part behind.
                let text: String = text.chars().take(width.saturating_sub(1)).collect();
                let line = format!("\r\x1b[2K{text}");
                frame += 1;
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(line.as_bytes());
                let _ = err.flush();
                drawn = true;
            }
            if drawn {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(b"\r\x1b[2K");
                let _ = err.flush();
            }
        });
        Progress { stop: Some(stop), task: Some(task) }
    }

    /// Stops and erases the line.
    pub async fn finish(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// A progress bar on stderr for reading files (`events report`): drawn only when enabled, first
/// after `first_draw` ([`FIRST_DRAW`] on a terminal, at once with `--progress always`), then at
/// most every [`TICK`]; erased by [`Bar::finish`].
pub struct Bar {
    enabled: bool,
    label: &'static str,
    total: u64,
    done: u64,
    started: Instant,
    next_draw: Instant,
    drawn: bool,
    width: usize,
}

impl Bar {
    /// A bar for `total` bytes.
    pub fn new(enabled: bool, first_draw: Duration, label: &'static str, total: u64) -> Bar {
        let started = Instant::now();
        let width = terminal_size::terminal_size_of(std::io::stderr()).map_or(80, |(w, _)| usize::from(w.0));
        Bar { enabled, label, total, done: 0, started, next_draw: started + first_draw, drawn: false, width }
    }

    /// `bytes` more read, `lines` read in all so far.
    pub fn advance(&mut self, bytes: u64, lines: u64) {
        self.done += bytes;
        if !self.enabled || !lines.is_multiple_of(1024) {
            return;
        }
        let now = Instant::now();
        if now < self.next_draw {
            return;
        }
        self.next_draw = now + TICK;
        let frac = if self.total == 0 { 1.0 } else { (self.done as f64 / self.total as f64).min(1.0) };
        let cells = 24usize;
        let full = (frac * cells as f64) as usize;
        let text = format!(
            "{} [{}{}] {:>3.0}%  {:.1}/{:.1} MB  {lines} lines  {:.1} s",
            self.label,
            "#".repeat(full),
            "-".repeat(cells - full),
            frac * 100.0,
            self.done as f64 / 1e6,
            self.total as f64 / 1e6,
            self.started.elapsed().as_secs_f64()
        );
        let text: String = text.chars().take(self.width.saturating_sub(1)).collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        self.drawn = true;
    }

    /// Erases the bar.
    pub fn finish(self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
