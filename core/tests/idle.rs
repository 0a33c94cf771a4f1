//! An idle tracker does not wake: once its records are built and exported, its worker sleeps until
//! the next record (or its one deadline, the end of the recycle linger) and its exporter thread
//! until a batch falls due. Read from the kernel's count of each thread's waits (Linux's
//! `voluntary_ctxt_switches`): a wake-up is one. In a process of its own, so that no other test's
//! tracker threads are counted.

#[cfg(target_os = "linux")]
#[test]
fn an_idle_tracker_does_not_wake() {
    use std::time::{Duration, SystemTime};

    use mcplens::tracking::{Batch, Method, Operation, Tracker};

    /// The waits so far of this process's threads named `name`.
    fn waits(name: &str) -> u64 {
        let mut n = 0;
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if comm.trim_end() != name {
                continue;
            }
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            n += status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .map_or(0, |v| v.trim().parse::<u64>().unwrap());
        }
        n
    }

    let tracker = Tracker::builder().callback("sink", |_: &Batch<'_>| Ok(())).build().unwrap();
    let session = tracker.open_session(None, None);
    assert!(tracker.record(&Operation::new(session.key(), Method::Ping, SystemTime::now(), Duration::from_micros(5))));
    tracker.flush(Duration::from_secs(10)).unwrap();
    let names = ["mcplens-tracker", "mcplens-export-sink"];
    let before = names.map(waits);
    // 600 ms of nothing: a worker that polled every 20 ms woke about 30 times in it, an exporter
    // thread that kept its queue's delays whenever the worker pushed. Now: the worker's round or
    // two after the flush, nothing else (its linger ends a second after the record).
    std::thread::sleep(Duration::from_millis(600));
    let woke = [0, 1].map(|i| waits(names[i]) - before[i]);
    assert!(woke[0] <= 3 && woke[1] <= 1, "wake-ups while idle (worker, exporter): {woke:?}");
    assert_eq!(tracker.stats().exporters[0].exported, 1);
}
