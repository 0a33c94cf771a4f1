//! The hostile-server matrix from Rust: the rmcp [`CatalogDriver`] over rmcp's child-process
//! transport against `tests/servers/hostile/server.py` (Python 3, standard library), one row per
//! case of `tests/servers/hostile/cases.json` (the table the Python and Node runners read too).
//!
//! Each case: refresh once against the well-formed server, then again against the misbehaving
//! one; the outcome must be the table's code (or `ok`) within the deadline plus slack, this
//! process's peak RSS (`VmHWM`, reset per case) must grow by at most the table's bound, and after
//! a failure the previous good templates must survive. Rows are written to
//! `.build/hostile/rust.json` for `tests/servers/hostile/summary.py`. Needs `python3` on `PATH`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcplens::catalog::Status;
use mcplens::discovery::Limits;
use mcplens::rmcp::{CatalogDriver, RefreshError, RefreshOutcome};
use rmcp::transport::TokioChildProcess;
use serde_json::{json, Value};

const SERVER: &str = "hostile";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository root").to_path_buf()
}

fn table() -> Value {
    let path = root().join("tests/servers/hostile/cases.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("cases.json")).expect("cases.json is JSON")
}

/// `VmRSS` / `VmHWM` of this process in KiB (0 without /proc).
fn rss_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Resets the peak-RSS mark to the current RSS (Linux `clear_refs` 5); returns the RSS in KiB.
fn reset_peak_rss() -> u64 {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    rss_kb("VmRSS")
}

/// Traversals of `method` the server saw (requests without a cursor), from its `--log`.
fn traversals(log: &Path, method: &str) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["method"] == method && e["cursor"] == false)
        .count()
}

struct Row {
    json: Value,
    failures: Vec<String>,
}

async fn run_case(table: &Value, case: &Value) -> Row {
    let name = case["case"].as_str().expect("a case name");
    let setting = |key: &str| case.get(key).or_else(|| table["defaults"].get(key)).cloned().unwrap_or(Value::Null);
    // `expect`, or the Rust override: one outcome, or any of several.
    let expect: Vec<String> = match case.get("expect_rust").unwrap_or(&case["expect"]) {
        Value::Array(a) => a.iter().map(|x| x.as_str().expect("a code").to_owned()).collect(),
        x => vec![x.as_str().expect("a code").to_owned()],
    };
    let deadline = Duration::from_millis(setting("deadlineMs").as_u64().expect("deadlineMs"));
    let slack = Duration::from_millis(setting("slackMs").as_u64().expect("slackMs"));
    let mut limits = Limits { deadline, ..Limits::default() };
    if let Some(n) = case.pointer("/limits/maxPages").and_then(Value::as_u64) {
        limits.max_pages = n as u32;
    }
    if let Some(n) = case.pointer("/limits/maxBytes").and_then(Value::as_u64) {
        limits.max_bytes = n as usize;
    }
    let log = std::env::temp_dir().join(format!("mcplens-hostile-{}-{name}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);

    let mut command = tokio::process::Command::new("python3");
    command.arg(root().join("tests/servers/hostile/server.py")).args(["--case", name, "--log"]).arg(&log);
    let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().expect("python3 runs");
    let driver = CatalogDriver::new(limits);
    let connection = driver.connect(SERVER, transport).await.expect("initialize");
    driver.refresh(SERVER).await.expect("the first refresh is good");
    let good: Vec<String> = table["goodTemplates"]
        .as_array()
        .expect("goodTemplates")
        .iter()
        .map(|t| t.as_str().unwrap_or("").to_owned())
        .collect();

    let rss_before = reset_peak_rss();
    let started = Instant::now();
    let outcome = tokio::time::timeout(deadline + slack + Duration::from_secs(10), driver.refresh(SERVER)).await;
    let elapsed = started.elapsed();
    let growth_mb = rss_kb("VmHWM").saturating_sub(rss_before) as f64 / 1024.0;
    let status = driver.status(SERVER).expect("a known server");
    let templates = driver.read(|c| c.templates(Some(SERVER))).expect("a known server");
    let storm_traversals = traversals(&log, "resources/templates/list");
    connection.close();
    let _ = std::fs::remove_file(&log);

    let (got, error) = match &outcome {
        Err(_) => ("hung".to_owned(), None),
        Ok(Ok(RefreshOutcome::Committed)) => ("ok".to_owned(), None),
        Ok(Ok(RefreshOutcome::Discarded)) => ("discarded".to_owned(), None),
        Ok(Ok(other)) => (format!("{other:?}"), None),
        Ok(Err(e)) => (e.code().to_string(), Some(e.clone())),
    };
    let mut failures = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(format!("{name}: {what}"));
        }
    };
    check(expect.contains(&got), format!("got {got}, expected {}", expect.join(" or ")));
    check(elapsed <= deadline + slack, format!("took {} ms", elapsed.as_millis()));
    let max_growth = setting("maxRssGrowthMb").as_f64().expect("maxRssGrowthMb");
    check(growth_mb <= max_growth, format!("peak RSS grew {growth_mb:.0} MB"));
    let uris: Vec<String> = templates.iter().map(|t| t.uri_template.to_string()).collect();
    if let Some(e) = &error {
        if let (RefreshError::Discovery(d), Some(code)) = (e, case.get("rpcCode").and_then(Value::as_i64)) {
            check(d.rpc_code() == Some(code), format!("rpc code {:?}", d.rpc_code()));
        }
        // Fail closed: the previous good pair survives (or the closed connection invalidated it),
        // never a prefix of the failed traversal.
        if status.status == Status::Stale || case["closes"] != true {
            check(status.status == Status::Stale, format!("status {:?}", status.status));
            check(status.last_error.as_ref().map(|f| f.code.as_str()) == Some(got.as_str()), "last error".into());
            check(uris == good, format!("templates {uris:?}"));
        } else {
            check(matches!(status.status, Status::Unknown | Status::Failed) && uris.is_empty(), format!("{status:?}"));
        }
    } else if got == "discarded" {
        // The closed connection invalidated the server: nothing cached, never a prefix.
        check(case["closes"] == true, "discarded without a close".into());
        check(matches!(status.status, Status::Unknown | Status::Failed) && uris.is_empty(), format!("{status:?}"));
    } else if got == "ok" {
        check(status.status == Status::Ok, format!("status {:?}", status.status));
        check(Some(templates.len() as u64) == case["templates"].as_u64(), format!("{} templates", templates.len()));
        for t in &templates {
            let n = t.name.chars().count().max(t.description.as_deref().unwrap_or("").chars().count());
            check(n <= 2048, format!("a string of {n} characters"));
        }
    }
    if case["storm"] == true {
        check(storm_traversals == 3, format!("{storm_traversals} templates traversals, expected 3"));
    }
    let mut json = json!({
        "case": name, "expect": expect.join("|"), "got": got, "passed": failures.is_empty(),
        "elapsedMs": elapsed.as_millis() as u64, "rssGrowthMb": (growth_mb * 10.0).round() / 10.0,
    });
    if case["storm"] == true {
        json["traversals"] = json!(storm_traversals);
    }
    Row { json, failures }
}

#[test]
fn hostile_matrix() {
    let table = table();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for case in table["cases"].as_array().expect("cases") {
        let row = runtime.block_on(run_case(&table, case));
        eprintln!("{}", row.json);
        failures.extend(row.failures);
        rows.push(row.json);
    }
    let out = std::env::var_os("MCPLENS_HOSTILE_RESULTS").map_or_else(|| root().join(".build/hostile"), PathBuf::from);
    std::fs::create_dir_all(&out).expect("results directory");
    let results = json!({"column": "rust", "rows": rows});
    std::fs::write(out.join("rust.json"), serde_json::to_string_pretty(&results).expect("JSON") + "\n").expect("write");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
