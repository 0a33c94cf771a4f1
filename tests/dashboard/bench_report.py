"""`make bench-report`: time and peak memory of `mcplens events report` on 1,000,000 events.

    python3 bench_report.py CLI [--events N] [--runs N]

Generates the events once (gen_events.py, seed 1; .build/bench-report/, regenerated when the
generator changes), then runs the release CLI's `events report` (and, side by side in the same
run, `events summary`, which keeps every duration and every URI) and prints for each run the wall
time and the peak resident memory of the process (getrusage of that child: ru_maxrss).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def measure(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds (user + system), peak RSS in MB) of one run of `cmd`."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args()
    out = ROOT / ".build" / "bench-report"
    out.mkdir(parents=True, exist_ok=True)
    events = out / f"events-{a.events}.jsonl"
    gen = HERE / "gen_events.py"
    if not events.exists() or events.stat().st_mtime < gen.stat().st_mtime:
        print(f"generating {a.events:,} events into {events} …", flush=True)
        cmd = [sys.executable, str(gen), str(events), "--events", str(a.events), "--bad-lines", "10"]
        subprocess.run(cmd, check=True)
    size = events.stat().st_size / 1e6
    print(f"events file: {a.events:,} events + 10 bad lines, {size:,.0f} MB ({events})")
    report = out / "report.html"
    for run in range(1, a.runs + 1):
        for name, cmd in [
            ("events report ", [a.cli, "events", "report", str(events), "-o", str(report), "--progress", "never"]),
            ("events summary", [a.cli, "events", "summary", str(events)]),
        ]:
            seconds, cpu, rss = measure(cmd)
            print(
                f"run {run}: {name}: {seconds:6.2f} s wall, {cpu:6.2f} s CPU ({a.events / cpu / 1e3:4.0f} k events/s, "
                f"{size / cpu:4.0f} MB/s of CPU), peak RSS {rss:6.1f} MB"
            )
    print(f"report: {report} ({report.stat().st_size / 1e3:,.0f} kB)")


if __name__ == "__main__":
    main()
