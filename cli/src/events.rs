//! `mcplens events summary|tail`: read a tracking JSONL file (schema in docs/events.md).
//!
//! Percentiles use the nearest-rank method: for q in (0, 1], the ⌈q·n⌉-th smallest duration.
//! Lines that are not events (not JSON, or without `type`/`durationMs`) are counted and reported,
//! never silently skipped. Every string shown goes through the core's sanitizer.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One event, as far as the summary needs it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventLine {
    #[serde(rename = "type")]
    kind: String,
    duration_ms: f64,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    resource_name: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    error: Option<ErrorPart>,
}

#[derive(Deserialize)]
struct ErrorPart {
    #[serde(default)]
    code: Option<i64>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

/// The figures of one group of events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// Events in the group.
    pub count: usize,
    /// Events with `isError`.
    pub errors: usize,
    /// `errors / count`.
    pub error_rate: f64,
    /// Nearest-rank percentiles of `durationMs`.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

/// The whole summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Events read.
    pub events: usize,
    /// Lines that were not events.
    pub skipped_lines: usize,
    /// Per event type (`mcp:tools/call`, …).
    pub by_type: BTreeMap<String, Figures>,
    /// Per resource URI (`resources/read`, `resources/subscribe`, `resources/unsubscribe`).
    pub by_resource: BTreeMap<String, Figures>,
}

#[derive(Default)]
struct Group {
    durations: Vec<f64>,
    errors: usize,
}

impl Group {
    fn add(&mut self, e: &EventLine) {
        self.durations.push(e.duration_ms);
        self.errors += usize::from(e.is_error);
    }

    fn figures(mut self) -> Figures {
        self.durations.sort_by(f64::total_cmp);
        let n = self.durations.len();
        let rank = |q: f64| nearest_rank(&self.durations, q);
        Figures {
            count: n,
            errors: self.errors,
            error_rate: self.errors as f64 / n as f64,
            p50_ms: rank(0.50),
            p95_ms: rank(0.95),
            p99_ms: rank(0.99),
        }
    }
}

/// The nearest-rank `q` percentile (q in (0, 1]) of sorted, non-empty `sorted`: the ⌈q·n⌉-th
/// smallest value. `events report` uses the same definition.
pub(crate) fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1]
}

/// Summarizes the events in `reader`.
pub fn summarize(reader: impl BufRead) -> std::io::Result<Summary> {
    let mut by_type: BTreeMap<String, Group> = BTreeMap::new();
    let mut by_resource: BTreeMap<String, Group> = BTreeMap::new();
    let (mut events, mut skipped) = (0, 0);
    for line in reader.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let Ok(e) = serde_json::from_str::<EventLine>(&line) else {
            skipped += 1;
            continue;
        };
        if !e.duration_ms.is_finite() {
            skipped += 1;
            continue;
        }
        events += 1;
        by_type.entry(e.kind.clone()).or_default().add(&e);
        let is_resource_op =
            matches!(e.kind.as_str(), "mcp:resources/read" | "mcp:resources/subscribe" | "mcp:resources/unsubscribe");
        if let (true, Some(uri)) = (is_resource_op, &e.resource_name) {
            by_resource.entry(uri.clone()).or_default().add(&e);
        }
    }
    Ok(Summary {
        events,
        skipped_lines: skipped,
        by_type: by_type.into_iter().map(|(k, g)| (k, g.figures())).collect(),
        by_resource: by_resource.into_iter().map(|(k, g)| (k, g.figures())).collect(),
    })
}

/// Prints the summary as two tables.
pub fn print_summary(out: &mut impl Write, s: &Summary) -> std::io::Result<()> {
    writeln!(out, "{} events", s.events)?;
    if s.skipped_lines > 0 {
        writeln!(out, "{} lines were not events and were skipped", s.skipped_lines)?;
    }
    for (title, groups) in [("EVENT TYPE", &s.by_type), ("RESOURCE URI", &s.by_resource)] {
        if groups.is_empty() {
            continue;
        }
        let names: Vec<String> = groups.keys().map(|k| mcplens::sanitize::label(k).into_owned()).collect();
        let w = names.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(title.len());
        writeln!(out)?;
        writeln!(
            out,
            "{title:<w$}  {:>7}  {:>7}  {:>10}  {:>10}  {:>10}",
            "COUNT", "ERRORS", "P50 MS", "P95 MS", "P99 MS"
        )?;
        for (name, f) in names.iter().zip(groups.values()) {
            writeln!(
                out,
                "{name:<w$}  {:>7}  {:>6.1}%  {:>10.3}  {:>10.3}  {:>10.3}",
                f.count,
                f.error_rate * 100.0,
                f.p50_ms,
                f.p95_ms,
                f.p99_ms
            )?;
        }
    }
    Ok(())
}

/// One line of `tail` output for an event line (or the reason it is not one).
fn tail_line(line: &str) -> String {
    match serde_json::from_str::<EventLine>(line) {
        Ok(e) => {
            let status = if e.is_error {
                match e.error {
                    Some(ErrorPart { code: Some(c), .. }) => format!("error {c}"),
                    Some(ErrorPart { kind: Some(k), .. }) => format!("error {}", mcplens::sanitize::label(&k)),
                    _ => "error".to_owned(),
                }
            } else {
                "ok".to_owned()
            };
            let name = e.resource_name.as_deref().map(mcplens::sanitize::label).unwrap_or_default();
            format!(
                "{}  {}  {}  {:.3} ms  {status}",
                mcplens::sanitize::label(e.timestamp.as_deref().unwrap_or("-")),
                mcplens::sanitize::label(&e.kind),
                if name.is_empty() { "-" } else { &name },
                e.duration_ms
            )
        }
        Err(_) => "(not an event)".to_owned(),
    }
}

/// Prints the last `n` events of `path`; with `follow`, keeps printing events appended later
/// (a file that shrinks — rotated — is read again from its start). Never returns when following.
pub fn tail(out: &mut impl Write, path: &Path, n: usize, follow: bool) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for l in &lines[lines.len().saturating_sub(n)..] {
        writeln!(out, "{}", tail_line(l))?;
    }
    out.flush()?;
    if !follow {
        return Ok(());
    }
    let mut pos = text.len() as u64;
    let mut pending = String::new();
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if len < pos {
            // Rotated or truncated: start over on the new file.
            file = match File::open(path) {
                Ok(f) => f,
                Err(_) => continue,
            };
            pos = 0;
            pending.clear();
        }
        if len == pos {
            continue;
        }
        file.seek(SeekFrom::Start(pos))?;
        let mut chunk = String::new();
        let read = BufReader::new(&mut file).read_to_string(&mut chunk)?;
        pos += read as u64;
        pending.push_str(&chunk);
        while let Some(i) = pending.find('\n') {
            let line: String = pending.drain(..=i).collect();
            if !line.trim().is_empty() {
                writeln!(out, "{}", tail_line(line.trim_end()))?;
            }
        }
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_and_error_rates() {
        let mut text = String::new();
        for i in 1..=100 {
            let err = i % 10 == 0;
            text.push_str(&format!(
                "{{\"type\":\"mcp:tools/call\",\"durationMs\":{i}.0,\"isError\":{err},\"resourceName\":\"echo\"}}\n"
            ));
        }
        text.push_str(
            "{\"type\":\"mcp:resources/read\",\"durationMs\":2.5,\"isError\":false,\"resourceName\":\"file:///a\"}\n",
        );
        text.push_str(
            "{\"type\":\"mcp:resources/read\",\"durationMs\":0.5,\"isError\":true,\"resourceName\":\"file:///a\"}\n",
        );
        text.push_str("not json\n\n{\"type\":\"x\"}\n");
        let s = summarize(text.as_bytes()).unwrap();
        assert_eq!(s.events, 102);
        assert_eq!(s.skipped_lines, 2);
        let t = &s.by_type["mcp:tools/call"];
        assert_eq!((t.count, t.errors), (100, 10));
        assert_eq!((t.p50_ms, t.p95_ms, t.p99_ms), (50.0, 95.0, 99.0));
        assert!((t.error_rate - 0.1).abs() < 1e-12);
        let r = &s.by_resource["file:///a"];
        assert_eq!((r.count, r.errors, r.p50_ms, r.p99_ms), (2, 1, 0.5, 2.5));
        assert!(!s.by_resource.contains_key("echo"), "tool names are not resource URIs");
    }
}
