//! `mcplens events summary|tail` on a known JSONL file gives known figures.

use std::path::PathBuf;
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events.jsonl")
}

fn mcplens(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcplens")).args(args).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn summary_json_gives_known_figures() {
    let (code, out, _) = mcplens(&["events", "summary", "--json", fixture().to_str().unwrap()]);
    assert_eq!(code, 0);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["events"], 35);
    assert_eq!(s["skippedLines"], 1);
    let calls = &s["byType"]["mcp:tools/call"];
    assert_eq!(calls["count"], 20);
    assert_eq!(calls["errors"], 2);
    assert_eq!(calls["errorRate"], 0.1);
    assert_eq!(
        (calls["p50Ms"].as_f64(), calls["p95Ms"].as_f64(), calls["p99Ms"].as_f64()),
        (Some(10.0), Some(19.0), Some(20.0))
    );
    let reads = &s["byType"]["mcp:resources/read"];
    assert_eq!((reads["count"].as_u64(), reads["errors"].as_u64()), (Some(14), Some(1)));
    let a = &s["byResource"]["file:///a.txt"];
    assert_eq!((a["count"].as_u64(), a["p50Ms"].as_f64(), a["p99Ms"].as_f64()), (Some(10), Some(0.5), Some(1.0)));
    let b = &s["byResource"]["file:///b\u{202e}.txt"];
    assert_eq!((b["count"].as_u64(), b["errorRate"].as_f64(), b["p95Ms"].as_f64()), (Some(4), Some(0.25), Some(8.0)));
    assert!(s["byResource"].get("echo").is_none(), "tool names are not resource URIs");
}

#[test]
fn summary_table_is_sanitized_and_readable() {
    let (code, out, _) = mcplens(&["events", "summary", fixture().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.starts_with("35 events\n1 lines were not events and were skipped\n"), "{out}");
    assert!(out.contains("mcp:tools/call"));
    assert!(out.contains("file:///b.txt"), "bidi control removed: {out}");
    assert!(!out.contains('\u{202e}'));
    let row = out.lines().find(|l| l.starts_with("mcp:tools/call")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols, ["mcp:tools/call", "20", "10.0%", "10.000", "19.000", "20.000"]);
}

#[test]
fn tail_prints_the_last_events() {
    let (code, out, _) = mcplens(&["events", "tail", "-n", "3", fixture().to_str().unwrap()]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].contains("mcp:resources/read") && lines[0].contains("error -32002"), "{out}");
    assert!(lines[1].contains("mcp:resources/templates/list") && lines[1].ends_with("ok"), "{out}");
    assert_eq!(lines[2], "(not an event)");
}

#[test]
fn missing_file_is_a_clear_error() {
    let (code, _, err) = mcplens(&["events", "summary", "/nonexistent/mcplens-events.jsonl"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error: io_error: cannot read /nonexistent/mcplens-events.jsonl"), "{err}");
}
