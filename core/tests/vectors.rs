//! Replays every shared vector in `tests/vectors/discovery/` (format: `tests/vectors/README.md`).
//! Python and Node replay the same files and must agree.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcplens::discovery::{has_resources_capability, Limits, ListKind, Outcome, Pager};
use serde_json::{json, Value};

fn vectors_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors").join(sub)
}

fn synth(kind: ListKind, spec: &Value) -> String {
    let count = spec["count"].as_u64().unwrap();
    let start = spec["start"].as_u64().unwrap_or(0);
    let items: Vec<Value> = (start..start + count)
        .map(|n| match kind {
            ListKind::ResourceTemplates => {
                json!({"uriTemplate": format!("mem://item/{n}/{{id}}"), "name": format!("item-{n}")})
            }
            ListKind::Resources => json!({"uri": format!("mem://item/{n}"), "name": format!("item-{n}")}),
        })
        .collect();
    let mut page = serde_json::Map::new();
    page.insert(kind.list_key().into(), Value::Array(items));
    if let Some(c) = spec.get("nextCursor") {
        page.insert("nextCursor".into(), c.clone());
    }
    Value::Object(page).to_string()
}

/// Runs one case; returns a list of mismatches.
fn run_case(case: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let kind = match case["kind"].as_str().unwrap() {
        "resources" => ListKind::Resources,
        "resource_templates" => ListKind::ResourceTemplates,
        other => panic!("unknown kind {other}"),
    };
    let server = case["server"].as_str().unwrap_or("srv");
    let caps = case.get("capabilities").cloned().unwrap_or(json!({"resources": {}}));
    let limits: Limits = serde_json::from_value(case.get("limits").cloned().unwrap_or(json!({}))).unwrap();
    let mut now = Duration::from_millis(case["startMs"].as_u64().unwrap_or(0));
    let expect = &case["expect"];

    let answers: Vec<&Value> = case["answers"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
    let mut texts = Vec::new(); // keep synthesized pages alive
    for a in &answers {
        texts.push(a.get("synth").map(|s| synth(kind, s)));
    }

    let mut requests = Vec::new();
    let mut used = 0usize;
    let result =
        Pager::new(kind, server, has_resources_capability(&caps.to_string()), limits, now).and_then(|mut p| {
            while let Some(req) = p.next_request() {
                let mut r = json!({"method": req.method});
                if let Some(params) = req.params_json() {
                    r["params"] = serde_json::from_str(&params).unwrap();
                }
                requests.push(r);
                let Some(a) = answers.get(used) else {
                    bad.push(format!("ran out of answers at request {}", used + 1));
                    return p.finish();
                };
                if let Some(ms) = a.get("atMs").and_then(Value::as_u64) {
                    now = Duration::from_millis(ms);
                }
                let outcome = if let Some(page) = a.get("page") {
                    Outcome::Page(page.as_str().expect("page is JSON text"))
                } else if a.get("synth").is_some() {
                    Outcome::Page(texts[used].as_deref().unwrap())
                } else if let Some(e) = a.get("rpcError") {
                    Outcome::RpcError { code: e["code"].as_i64().unwrap() }
                } else if a.get("transport").is_some() {
                    Outcome::Transport
                } else if a.get("timedOut").is_some() {
                    Outcome::TimedOut
                } else if a.get("malformed").is_some() {
                    Outcome::Malformed
                } else {
                    panic!("unknown answer {a}");
                };
                used += 1;
                if p.accept(outcome, now).is_err() {
                    break;
                }
            }
            p.finish()
        });
    if used != answers.len() {
        bad.push(format!("used {used} of {} answers", answers.len()));
    }
    if let Some(want) = expect.get("requests") {
        if &Value::Array(requests.clone()) != want {
            bad.push(format!("requests: got {}, want {want}", Value::Array(requests)));
        }
    }
    match (&result, expect.get("error").and_then(Value::as_str)) {
        (Ok(_), Some(code)) => bad.push(format!("expected error {code}, got success")),
        (Err(e), None) => bad.push(format!("unexpected error {} ({e})", e.code())),
        (Err(e), Some(code)) => {
            if e.code() != code {
                bad.push(format!("error: got {} ({e}), want {code}", e.code()));
            }
            let msg = e.to_string();
            if !msg.contains(server) {
                bad.push(format!("error message does not name the server: {msg}"));
            }
            for s in secrets(case) {
                if msg.contains(&s) {
                    bad.push(format!("error message leaks {s:?}: {msg}"));
                }
            }
        }
        (Ok(listing), None) => {
            let got = serde_json::to_value(listing).unwrap();
            if let Some(items) = expect.get("items") {
                if &got["items"] != items {
                    bad.push(format!("items: got {}, want {items}", got["items"]));
                }
            }
            if let Some(n) = expect.get("itemCount") {
                if got["items"].as_array().unwrap().len() as u64 != n.as_u64().unwrap() {
                    bad.push(format!("itemCount: got {}, want {n}", got["items"].as_array().unwrap().len()));
                }
            }
            for key in ["support", "ttlMs", "cacheScope", "diagnostics"] {
                if let Some(want) = expect.get(key) {
                    let g = got.get(key).unwrap_or(&Value::Null);
                    if g != want {
                        bad.push(format!("{key}: got {g}, want {want}"));
                    }
                }
            }
            let sum: usize = listing.items.iter().map(|i| serde_json::to_string(i).unwrap().len()).sum();
            if sum != listing.diagnostics.bytes {
                bad.push(format!(
                    "byte accounting: items serialize to {sum}, diagnostics say {}",
                    listing.diagnostics.bytes
                ));
            }
        }
    }
    bad
}

/// Every cursor in the answers, plus `expect.secrets`: none may appear in an error message.
fn secrets(case: &Value) -> Vec<String> {
    let mut out: Vec<String> = case["expect"]["secrets"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    for a in case["answers"].as_array().into_iter().flatten() {
        let cursor = if let Some(p) = a.get("page").and_then(Value::as_str) {
            serde_json::from_str::<Value>(p)
                .ok()
                .and_then(|v| v.get("nextCursor").and_then(Value::as_str).map(str::to_owned))
        } else {
            a.get("synth").and_then(|s| s.get("nextCursor")).and_then(Value::as_str).map(str::to_owned)
        };
        out.extend(cursor.filter(|c| c.len() >= 3));
    }
    out
}

#[test]
fn discovery_vectors() {
    let dir = vectors_dir("discovery");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    assert!(files.len() >= 60, "only {} discovery vectors", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        assert_eq!(case["name"].as_str(), f.file_stem().and_then(|s| s.to_str()), "name must match the file");
        for b in run_case(&case) {
            failures.push(format!("{}: {b}", f.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}
