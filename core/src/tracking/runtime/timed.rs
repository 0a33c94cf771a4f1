//! Host hooks under a deadline, the same in every language: a redact hook
//! ([`TrackerConfig::hook_timeout`](crate::tracking::TrackerConfig::hook_timeout), per event) and a
//! callback exporter ([`TrackerConfig::callback_timeout`](crate::tracking::TrackerConfig::callback_timeout),
//! per batch) each run on a thread of their own, and the caller (the worker, the exporter's
//! thread) waits at most the timeout for the answer. Past it, the event is dropped
//! (`redactionFailed`) or the batch failed; while that call still runs, later ones fail at once
//! instead of queueing behind it. A hook that panics fails its call, and the next one runs.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use crate::tracking::pipeline::build::StringHook;
use crate::tracking::pipeline::event::Method;
use crate::tracking::pipeline::export::{Accepts, Batch, ExportItem, Exporter};
use crate::tracking::{ExportError, TrackingError};

type Job<I, O> = (I, SyncSender<Result<O, String>>);

/// Why a call has no answer (the function's own errors are in its answer).
const PANICKED: &str = "panicked";

/// One function run on its own thread, one call at a time, each answered within `timeout`.
struct Runner<I, O> {
    jobs: SyncSender<Job<I, O>>,
    busy: Arc<AtomicBool>,
    timeout: Duration,
}

impl<I: Send + 'static, O: Send + 'static> Runner<I, O> {
    fn start(
        name: &str,
        timeout: Duration,
        mut f: impl FnMut(I) -> O + Send + 'static,
    ) -> Result<Runner<I, O>, TrackingError> {
        let (jobs, rx) = sync_channel::<Job<I, O>>(1);
        let busy = Arc::new(AtomicBool::new(false));
        let done = busy.clone();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                // Ends when the runner is dropped (its sender with it).
                for (input, reply) in rx {
                    let out = catch_unwind(AssertUnwindSafe(|| f(input))).map_err(|_| PANICKED.to_owned());
                    done.store(false, Ordering::Release);
                    let _ = reply.try_send(out);
                }
            })
            .map_err(|e| TrackingError::Io { what: "starting a hook thread".to_owned(), source: e })?;
        Ok(Runner { jobs, busy, timeout })
    }

    /// Run `f(input)`: its answer, or why there is none (it panicked, it is late, or an earlier
    /// call is still running).
    fn call(&self, input: I) -> Result<O, String> {
        if self.busy.swap(true, Ordering::AcqRel) {
            return Err("is still running on an earlier call".to_owned());
        }
        let (reply, answer) = sync_channel(1);
        if self.jobs.send((input, reply)).is_err() {
            return Err("has stopped".to_owned());
        }
        match answer.recv_timeout(self.timeout) {
            Ok(out) => out,
            Err(RecvTimeoutError::Timeout) => Err(format!("did not answer within {} ms", self.timeout.as_millis())),
            Err(RecvTimeoutError::Disconnected) => Err("has stopped".to_owned()),
        }
    }
}

/// `hook` run under `timeout` per event.
pub(crate) fn string_hook(hook: StringHook, timeout: Duration) -> Result<StringHook, TrackingError> {
    let runner =
        Runner::start("mcplens-redact", timeout, move |mut strings: Vec<String>| hook(&mut strings).map(|()| strings))?;
    Ok(Arc::new(move |strings: &mut [String]| {
        let out =
            runner.call(strings.to_vec()).map_err(|why| TrackingError::hook(format!("the redact hook {why}")))??;
        if out.len() != strings.len() {
            return Err(TrackingError::hook("the redact hook answered for a different number of strings"));
        }
        for (s, o) in strings.iter_mut().zip(out) {
            *s = o;
        }
        Ok(())
    }))
}

/// `exporter` run under `timeout` per batch.
pub(crate) fn exporter(mut exporter: Box<dyn Exporter>, timeout: Duration) -> Result<Box<dyn Exporter>, TrackingError> {
    let accepts = Accepts::of(exporter.as_ref());
    let needs_tokens = exporter.needs_tokens();
    let runner = Runner::start("mcplens-callback", timeout, move |items: Vec<Arc<ExportItem>>| {
        exporter.export(&Batch::new(&items))
    })?;
    Ok(Box::new(Timed { runner, accepts, needs_tokens }))
}

struct Timed {
    runner: Runner<Vec<Arc<ExportItem>>, Result<(), ExportError>>,
    accepts: Accepts,
    needs_tokens: bool,
}

impl Exporter for Timed {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        match self.runner.call(batch.items().to_vec()) {
            Ok(answer) => answer,
            Err(why) if why == PANICKED => Err(ExportError::panicked()),
            Err(why) => Err(ExportError::permanent(format!("the callback exporter {why}"), 0)),
        }
    }

    fn accepts(&self, method: &Method) -> bool {
        self.accepts.contains(method)
    }

    fn needs_tokens(&self) -> bool {
        self.needs_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn hook(f: impl Fn(&mut [String]) -> Result<(), TrackingError> + Send + Sync + 'static) -> StringHook {
        Arc::new(f)
    }

    #[test]
    fn a_hook_past_its_timeout_fails_and_later_calls_fail_at_once_until_it_returns() {
        // The hook waits for the test's word: late exactly as long as the test says.
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let gate = std::sync::Mutex::new(gate);
        let (ran, runs) = std::sync::mpsc::channel::<()>();
        let slow = hook(move |s| {
            ran.send(()).unwrap();
            gate.lock().unwrap().recv().unwrap();
            s[0] = "late".into();
            Ok(())
        });
        let timed = string_hook(slow, Duration::from_millis(50)).unwrap();
        let mut strings = vec!["a".to_owned()];
        let err = timed(&mut strings).unwrap_err().to_string();
        assert!(err.contains("did not answer within 50 ms"), "{err}");
        assert_eq!(strings, ["a"], "nothing changed");
        let err = timed(&mut strings).unwrap_err().to_string();
        assert!(err.contains("still running on an earlier call"), "{err}");
        assert_eq!(runs.try_iter().count(), 1, "the second call did not run the hook");
        release.send(()).unwrap();
        // Once the late call returns, the next call runs the hook again.
        let t0 = Instant::now();
        while timed(&mut strings).is_err_and(|e| e.to_string().contains("still running")) {
            assert!(t0.elapsed() < Duration::from_secs(30), "the late call never returned");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(runs.try_iter().count(), 1, "ran again");
        release.send(()).unwrap();
    }

    #[test]
    fn a_quick_hook_answers_and_a_panicking_one_fails_its_call_only() {
        let timed = string_hook(
            hook(|s| {
                if s[0] == "boom" {
                    panic!("boom");
                }
                s[0] = s[0].to_uppercase();
                Ok(())
            }),
            Duration::from_secs(5),
        )
        .unwrap();
        let mut strings = vec!["boom".to_owned()];
        assert!(timed(&mut strings).unwrap_err().to_string().contains("panicked"));
        let mut strings = vec!["ok".to_owned()];
        timed(&mut strings).unwrap();
        assert_eq!(strings, ["OK"]);
    }
}
