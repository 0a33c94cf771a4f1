//! Replays every shared vector in `tests/vectors/discovery/` (format: `tests/vectors/README.md`).
//! Python and Node replay the same files and must agree.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcplens::catalog::{
    Action, Epoch, Liveness, PairTraversal, RefreshConfig, Refresher, TraversalError, TraversalId, Want,
};
use mcplens::discovery::{has_resources_capability, DiscoveryError, Item, Limits, ListKind, Listing, Outcome, Pager};
use mcplens::tool;
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

/// What one traversal over canned answers did.
struct Run {
    requests: Vec<Value>,
    used: usize,
    result: Result<Listing, DiscoveryError>,
    out_of_answers: bool,
}

/// How a page reaches the pager.
#[derive(Clone, Copy, PartialEq)]
enum Pages {
    /// As the answer's text.
    Text,
    /// Parsed first, as a host's SDK does (a page that is not valid JSON goes as its text): as
    /// the parsed value's JSON text (what a host that re-serializes hands over) ...
    Reserialized,
    /// ... or as the parsed value itself (`Pager::handle_parsed_page`).
    Parsed,
}

/// Drives a pager over the canned `answers` (the shared answer format).
/// One traversal over the answers; `version`: the negotiated protocol version (`""`: none).
fn drive(
    kind: ListKind,
    server: &str,
    (caps, version): (&Value, &str),
    limits: Limits,
    start: Duration,
    answers: &[Value],
    pages: Pages,
) -> Run {
    let mut now = start;
    let texts: Vec<Option<String>> = answers.iter().map(|a| a.get("synth").map(|s| synth(kind, s))).collect();
    let mut requests = Vec::new();
    let mut used = 0usize;
    let mut out_of_answers = false;
    let result = Pager::new(kind, server, has_resources_capability(&caps.to_string()), limits, now).and_then(|p| {
        let mut p = p.with_protocol_version(version);
        while let Some(req) = p.poll_request() {
            let mut r = json!({"method": req.method});
            if let Some(params) = req.params_json() {
                r["params"] = serde_json::from_str(&params).unwrap();
            }
            requests.push(r);
            let Some(a) = answers.get(used) else {
                out_of_answers = true;
                return p.finish();
            };
            if let Some(ms) = a.get("atMs").and_then(Value::as_u64) {
                now = Duration::from_millis(ms);
            }
            let text = match a.get("page") {
                Some(page) => Some(page.as_str().expect("page is JSON text")),
                None => texts[used].as_deref(),
            };
            let parsed = text.filter(|_| pages != Pages::Text).and_then(|t| serde_json::from_str::<Value>(t).ok());
            if let Some(value) = &parsed {
                used += 1;
                let accepted = match pages {
                    Pages::Parsed => {
                        p.handle_parsed_page(value, now).map(|applied| assert!(applied, "a Value is JSON"))
                    }
                    _ => p.handle_outcome(Outcome::Page(&value.to_string()), now),
                };
                if accepted.is_err() {
                    break;
                }
                continue;
            }
            let outcome = answer_outcome(a, text);
            used += 1;
            if p.handle_outcome(outcome, now).is_err() {
                break;
            }
        }
        p.finish()
    });
    Run { requests, used, result, out_of_answers }
}

/// One answer of the shared format as the outcome a host feeds (`text`: its page's text).
fn answer_outcome<'a>(a: &Value, text: Option<&'a str>) -> Outcome<'a> {
    if let Some(text) = text {
        Outcome::Page(text)
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
    }
}

/// A refresher's traversal pair over the canned answers of a `{"resources", "templates"}` step
/// (each `{"capabilities"?, "answers"}`): the core's [`PairTraversal`] asks, the runner answers each
/// request from the list of its kind; every answer must be used. The resources capabilities say
/// whether the server declares `resources`.
fn perform_pair(id: TraversalId, server: &str, step: &Value, start: Duration) -> PairTraversal {
    let caps = step["resources"].get("capabilities").cloned().unwrap_or(json!({"resources": {}}));
    let mut now = start;
    let mut pair = PairTraversal::new(id, server, Some(&caps.to_string()), Limits::default(), "", now);
    let mut used = [0usize; 2];
    while pair.poll_request().is_some() {
        let kind = pair.kind().expect("a pair that asks reads a list");
        let (i, key) = if kind == ListKind::Resources { (0, "resources") } else { (1, "templates") };
        let a = step[key]["answers"].get(used[i]).unwrap_or_else(|| panic!("{server}: out of {key} answers"));
        used[i] += 1;
        if let Some(ms) = a.get("atMs").and_then(Value::as_u64) {
            now = Duration::from_millis(ms);
        }
        let synth = a.get("synth").map(|spec| synth(kind, spec));
        let text = a.get("page").map(|p| p.as_str().expect("page is JSON text")).or(synth.as_deref());
        pair.handle_outcome(answer_outcome(a, text), now).expect("a request was in flight");
    }
    for (i, key) in [(0, "resources"), (1, "templates")] {
        let given = step[key]["answers"].as_array().map_or(0, Vec::len);
        assert_eq!(used[i], given, "{server}: {key} answers do not match the requests");
    }
    pair
}

fn kind_of(name: &str) -> ListKind {
    match name {
        "resources" => ListKind::Resources,
        "resource_templates" => ListKind::ResourceTemplates,
        other => panic!("unknown kind {other}"),
    }
}

/// Runs one case; returns a list of mismatches.
fn run_case(case: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let kind = kind_of(case["kind"].as_str().unwrap());
    let server = case["server"].as_str().unwrap_or("srv");
    let caps = case.get("capabilities").cloned().unwrap_or(json!({"resources": {}}));
    let limits: Limits = serde_json::from_value(case.get("limits").cloned().unwrap_or(json!({}))).unwrap();
    let start = Duration::from_millis(case["startMs"].as_u64().unwrap_or(0));
    let expect = &case["expect"];
    let answers = case["answers"].as_array().cloned().unwrap_or_default();
    let version = case["protocolVersion"].as_str().unwrap_or_default();
    let Run { requests, used, result, out_of_answers, .. } =
        drive(kind, server, (&caps, version), limits, start, &answers, Pages::Text);
    if out_of_answers {
        bad.push(format!("ran out of answers at request {}", used + 1));
    }
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

/// Runs `run` on every vector of `tests/vectors/<sub>/` (at least `minimum` of them); fails with
/// every mismatch.
fn replay(sub: &str, minimum: usize, run: fn(&Value) -> Vec<String>) {
    let dir = vectors_dir(sub);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    assert!(files.len() >= minimum, "only {} {sub} vectors", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        assert_eq!(case["name"].as_str(), f.file_stem().and_then(|s| s.to_str()), "name must match the file");
        for b in run(&case) {
            failures.push(format!("{}: {b}", f.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn discovery_vectors() {
    replay("discovery", 60, run_case);
}

/// A page handed over as the host's parsed values (`Pager::handle_parsed_page`) ends every discovery
/// vector exactly as the same values' JSON text does: requests, items, diagnostics, errors.
#[test]
fn discovery_vectors_as_parsed_values() {
    replay("discovery", 60, |case| {
        let kind = kind_of(case["kind"].as_str().unwrap());
        let server = case["server"].as_str().unwrap_or("srv");
        let caps = case.get("capabilities").cloned().unwrap_or(json!({"resources": {}}));
        let version = case["protocolVersion"].as_str().unwrap_or_default();
        let start = Duration::from_millis(case["startMs"].as_u64().unwrap_or(0));
        let answers = case["answers"].as_array().cloned().unwrap_or_default();
        let run = |pages| {
            let limits: Limits = serde_json::from_value(case.get("limits").cloned().unwrap_or(json!({}))).unwrap();
            let r = drive(kind, server, (&caps, version), limits, start, &answers, pages);
            let result = match r.result {
                Ok(listing) => serde_json::to_value(&listing).unwrap(),
                Err(e) => json!({"error": e.code(), "message": e.to_string()}),
            };
            json!({"requests": r.requests, "used": r.used, "result": result})
        };
        let (text, parsed) = (run(Pages::Reserialized), run(Pages::Parsed));
        if text == parsed {
            Vec::new()
        } else {
            vec![format!("as text {text}\n  as parsed values {parsed}")]
        }
    });
}

/// A host's values over a `Value`, declining (as a host's deserializer does with what JSON text
/// carries otherwise) at the string `"<decline>"`.
struct Declining<'a>(&'a Value);

impl<'de> serde::Deserializer<'de> for Declining<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        use serde::de::value::{MapDeserializer, SeqDeserializer};
        match self.0 {
            Value::String(s) if s == "<decline>" => Err(serde::de::Error::custom("not JSON")),
            Value::String(s) => v.visit_str(s),
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => v.visit_u64(u),
                (_, Some(i)) => v.visit_i64(i),
                _ => v.visit_f64(n.as_f64().unwrap()),
            },
            Value::Array(a) => v.visit_seq(SeqDeserializer::new(a.iter().map(Declining))),
            Value::Object(m) => v.visit_map(MapDeserializer::new(m.iter().map(|(k, x)| (k.as_str(), Declining(x))))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> serde::de::IntoDeserializer<'de, serde::de::value::Error> for Declining<'_> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// A page the host's deserializer cannot present as JSON values (past an item it already read) is
/// declined with nothing applied: the same request then goes as text, and the listing holds that
/// text's items only, once.
#[test]
fn a_declined_parsed_page_applies_nothing() {
    let mut p = Pager::new(ListKind::ResourceTemplates, "srv", true, Limits::default(), Duration::ZERO).unwrap();
    p.poll_request().unwrap();
    let declined = json!({"resourceTemplates": [
        {"uriTemplate": "a://{x}", "name": "a", "description": "kept once"},
        {"uriTemplate": "b://{x}", "name": "b", "_meta": {"x": "<decline>"}},
    ]});
    assert_eq!(p.handle_parsed_page(Declining(&declined), Duration::ZERO), Ok(false));
    assert!(!p.is_done());
    assert_eq!(p.diagnostics().pages, 0);
    let text = r#"{"resourceTemplates": [{"uriTemplate": "c://{x}", "name": "c", "description": "as text"}]}"#;
    p.handle_outcome(Outcome::Page(text), Duration::ZERO).unwrap();
    let listing = p.finish().unwrap();
    let got = serde_json::to_value(&listing.items).unwrap();
    assert_eq!(got, json!([{"uriTemplate": "c://{x}", "name": "c", "description": "as text", "server": "srv"}]));
    assert_eq!(listing.diagnostics.items, 1);
}

/// A parsed page's strings that the listing keeps exactly as lent are noted with the host's
/// address (`handle_parsed_page_noting`): not a sanitized one, a normalized one or a dropped item's,
/// none shorter than the host asks for, and nothing for a page that failed; each noted range is its
/// item's string in the listing.
#[test]
fn a_parsed_page_notes_the_strings_kept_as_lent() {
    let page = json!({"resourceTemplates": [
        {"uriTemplate": "a://{x}", "name": "a", "title": "T\u{7}", "description": "kept as lent",
         "annotations": {"lastModified": "2025-01-01T00:00:00Z"}},
        {"uriTemplate": "bad {", "name": "dropped", "description": "never kept"},
    ], "nextCursor": "c"});
    let mut p = Pager::new(ListKind::ResourceTemplates, "srv", true, Limits::default(), Duration::ZERO).unwrap();
    let mut noted = Vec::new();
    p.poll_request().unwrap();
    assert_eq!(p.handle_parsed_page_noting(&page, Duration::ZERO, &mut noted, 0), Ok(true));
    let lent = |pointer: &str| page.pointer(pointer).and_then(Value::as_str).unwrap().as_ptr() as usize;
    let sources: Vec<usize> = noted.iter().map(|v| v.source).collect();
    let first = "/resourceTemplates/0";
    let want: Vec<usize> =
        ["name", "description", "uriTemplate"].iter().map(|k| lent(&format!("{first}/{k}"))).collect();
    assert_eq!(sources, want, "the name, the description and the id, in the order kept");
    // Asked for strings of at least 12 bytes, only the description ("kept as lent") is noted.
    let mut p = Pager::new(ListKind::ResourceTemplates, "srv", true, Limits::default(), Duration::ZERO).unwrap();
    let mut long = Vec::new();
    p.poll_request().unwrap();
    assert_eq!(p.handle_parsed_page_noting(&page, Duration::ZERO, &mut long, 12), Ok(true));
    assert_eq!(long.iter().map(|v| v.source).collect::<Vec<_>>(), [want[1]]);
    // A page that fails (its item has no name) notes nothing.
    p.poll_request().unwrap();
    let failing = json!({"resourceTemplates": [{"uriTemplate": "b://{x}", "description": "lost"}]});
    let mut after_failure = noted.clone();
    assert!(p.handle_parsed_page_noting(&failing, Duration::ZERO, &mut after_failure, 0).is_err());
    assert_eq!(after_failure, noted);
    // Noted ranges are the listing's strings (a pager that finishes).
    let mut p = Pager::new(ListKind::ResourceTemplates, "srv", true, Limits::default(), Duration::ZERO).unwrap();
    let (mut noted, last) = (Vec::new(), json!({"resourceTemplates": page["resourceTemplates"]}));
    p.poll_request().unwrap();
    assert_eq!(p.handle_parsed_page_noting(&last, Duration::ZERO, &mut noted, 0), Ok(true));
    let listing = p.finish().unwrap();
    let Item::Template(t) = &listing.items[0] else { panic!("a template") };
    let ranges = [&t.name, t.description.as_ref().unwrap(), &t.uri_template].map(|s| s.buffer().unwrap().1);
    assert_eq!(noted.iter().map(|v| v.range.clone()).collect::<Vec<_>>(), ranges);
}

/// The catalog format drives the refresh machine, which owns the catalog. `refresh` completes the
/// server's traversal in flight (one `begin` started, a list_changed started, or a queued one that
/// followed), else attaches the server if it has no connection (declaring `resources` unless the
/// vector's capabilities lack it) and asks for a traversal, then completes it: both traversals,
/// then `traversed`, whose disposition is compared (with the failure's code when it failed).
fn run_catalog_case(case: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    // The traversal in flight per server, from the machine's Traverse actions.
    let mut pending: HashMap<String, TraversalId> = HashMap::new();
    let mut now = Duration::ZERO;
    for (i, op) in case["ops"].as_array().unwrap().iter().enumerate() {
        if let Some(ms) = op.get("atMs").and_then(Value::as_u64) {
            now = Duration::from_millis(ms);
        }
        let server = op["server"].as_str().unwrap_or_default();
        let mut check = |what: &str, got: Value| {
            if op.get("expect") != Some(&got) {
                bad.push(format!("op {i} ({what}): got {got}, want {}", op.get("expect").unwrap_or(&Value::Null)));
            }
        };
        let epoch = machine.epoch(server).unwrap_or(Epoch(0));
        match op["op"].as_str().unwrap() {
            "add" => machine.add_server(server),
            "begin" => {
                if machine.epoch(server).is_none() {
                    machine.attach_capabilities(server, &capabilities(op));
                }
                machine.request(server, Want::Refresh, now).unwrap();
            }
            "refresh" => {
                if !pending.contains_key(server) {
                    if machine.epoch(server).is_none() {
                        machine.attach_capabilities(server, &capabilities(op));
                    }
                    machine.request(server, Want::Refresh, now).unwrap();
                    take_traversals(&mut machine, &mut pending);
                }
                let traversal = pending.remove(server).expect("a traversal in flight");
                let result = perform_pair(traversal, server, op, now).finish().expect("the answers end the pair");
                let failure = result.as_ref().err().map(DiscoveryError::code);
                let result = result.as_ref().map(|(r, t)| (r, t)).map_err(TraversalError::from);
                let disposition = machine.handle_traversed(traversal, result, now);
                let mut got = json!({ "disposition": disposition });
                if let Some(code) = failure.filter(|_| disposition == mcplens::catalog::Disposition::Failed) {
                    got["failure"] = json!(code);
                }
                check("refresh", got);
            }
            "abandon" => {
                let traversal = pending.remove(server).expect("a traversal in flight");
                check(
                    "abandon",
                    json!({ "disposition": machine.handle_traversed(traversal, Err(TraversalError::Abandoned), now) }),
                );
            }
            "listChanged" => check("listChanged", json!(machine.handle_list_changed(server, epoch, now))),
            "invalidate" => {
                let reason = serde_json::from_value(op["reason"].clone()).unwrap();
                machine.invalidate(server, reason, now);
            }
            "remove" => check("remove", json!(machine.remove(server))),
            "clear" => machine.clear(),
            "needsRefresh" => check("needsRefresh", json!(machine.catalog().needs_refresh(server, now))),
            "status" => match machine.catalog().status(server, now) {
                Ok(s) => check("status", status_value(&s)),
                Err(e) => check_error(&mut bad, i, op, e.code().as_str(), &e.to_string()),
            },
            "tool" => match tool::Input::from_value(op["input"].clone())
                .and_then(|inp| tool::render(machine.catalog(), &inp))
            {
                Ok(text) => check("tool", json!(text)),
                Err(e) => check_error(&mut bad, i, op, e.code().as_str(), &e.to_string()),
            },
            "resourcesTool" => {
                match tool::Input::from_value(op["input"].clone())
                    .and_then(|inp| tool::render_resources(machine.catalog(), &inp))
                {
                    Ok(text) => check("resourcesTool", json!(text)),
                    Err(e) => check_error(&mut bad, i, op, e.code().as_str(), &e.to_string()),
                }
            }
            "read" | "complete" => call_op(&mut bad, i, op, machine.catalog(), now),
            "visible" => check("visible", json!(machine.catalog().visible_tools())),
            "matchUri" => match machine.catalog().match_uri(op["uri"].as_str().unwrap()) {
                Ok(found) => check("matchUri", serde_json::to_value(&found).unwrap()),
                Err(e) => check_error(&mut bad, i, op, e.code().as_str(), &e.to_string()),
            },
            other => panic!("unknown op {other}"),
        }
        take_traversals(&mut machine, &mut pending);
    }
    bad
}

/// A `read` op (`tests/vectors/README.md`, "read_tool"): validate, check the request, finish it with
/// the vector's outcome.
/// A `read` or `complete` op: the model's call validated into the core's [`tool::ServerCall`] (its
/// request checked), finished with the vector's outcome.
fn call_op(bad: &mut Vec<String>, i: usize, op: &Value, catalog: &mcplens::Catalog, now: Duration) {
    let name = if op["op"] == "read" { tool::read::NAME } else { tool::complete::NAME };
    let mut config = tool::CallConfig::default();
    let configured = match op.get("config").map(Value::to_string) {
        Some(c) if name == tool::read::NAME => tool::ReadConfig::from_json(&c).map(|c| config.read = c),
        Some(c) => tool::CompleteConfig::from_json(&c).map(|c| config.complete = c),
        None => Ok(()),
    };
    let call = configured.and_then(|()| tool::ServerCall::new(catalog, name, &op["input"].to_string(), &config, now));
    let result = call.and_then(|call| {
        let request = match &call {
            tool::ServerCall::Read(read) => {
                json!({"server": call.server(), "uri": read.uri(), "params": call.params_json()})
            }
            _ => json!({"server": call.server(), "method": call.method(), "params": call.params_json()}),
        };
        if op.get("expectRequest") != Some(&request) {
            bad.push(format!("op {i}: request {request}, want {}", op["expectRequest"]));
        }
        if let Some(ms) = op.get("timeoutMs") {
            expect(bad, i, "timeoutMs", json!(call.remaining(now).as_millis() as u64), Some(ms));
        }
        let outcome = &op["outcome"];
        let text = match (outcome.get("result"), outcome.get("resultText")) {
            (Some(r), _) => r.to_string(),
            (None, Some(t)) => t.as_str().unwrap().to_owned(),
            _ => String::new(),
        };
        call.finish(if !text.is_empty() {
            Outcome::Page(&text)
        } else if let Some(code) = outcome.get("rpcError").and_then(Value::as_i64) {
            Outcome::RpcError { code }
        } else if outcome.get("transport").is_some() {
            Outcome::Transport
        } else if outcome.get("timedOut").is_some() {
            Outcome::TimedOut
        } else {
            Outcome::Malformed
        })
    });
    match result {
        Ok(text) if op.get("expect") == Some(&json!(text)) => {}
        Ok(text) => bad.push(format!("op {i} (call): got {text}, want {}", op.get("expect").unwrap_or(&Value::Null))),
        Err(e) => check_error(bad, i, op, e.code().as_str(), &e.to_string()),
    }
}

/// A catalog vector's server's capabilities as JSON text (its resources' `capabilities`, default
/// `{"resources": {}}`): the runner attaches it with them.
fn capabilities(op: &Value) -> String {
    op["resources"].get("capabilities").cloned().unwrap_or(json!({"resources": {}})).to_string()
}

/// Drains the machine's actions, keeping each server's newest traversal in flight.
fn take_traversals(machine: &mut Refresher, pending: &mut HashMap<String, TraversalId>) {
    while let Some(action) = machine.poll_action() {
        if let Action::Traverse { server, traversal, .. } = action {
            pending.insert(server, traversal);
        }
    }
}

fn check_error(bad: &mut Vec<String>, i: usize, op: &Value, code: &str, message: &str) {
    if op["expectError"].as_str() != Some(code) {
        bad.push(format!("op {i}: error {code} ({message}), want {}", op["expectError"]));
    }
    if let Some(want) = op.get("expectMessage").and_then(Value::as_str) {
        if message != want {
            bad.push(format!("op {i}: message {message:?}, want {want:?}"));
        }
    }
}

#[test]
fn catalog_vectors() {
    replay("catalog", 30, run_catalog_case);
}

/// `ListMcpResourcesTool` and `Catalog::match_uri`, in the catalog format.
#[test]
fn catalog_tool_vectors() {
    replay("catalog_tools", 15, run_catalog_case);
}

/// `ReadMcpResourceTool`, in the catalog format.
#[test]
fn read_tool_vectors() {
    replay("read_tool", 20, run_catalog_case);
}

#[test]
fn complete_tool_vectors() {
    replay("complete_tool", 10, run_catalog_case);
}

/// One traversal pair of a refresher vector: both listings, or the first error (resources
/// first; `templates` is absent after a resources failure), or abandoned.
/// A status as the catalog vectors compare it (`lastError` reduced to its code, no `server`).
fn status_value(s: &mcplens::catalog::ServerStatus) -> Value {
    let mut v = serde_json::to_value(s).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("server");
    obj.insert("lastError".into(), s.last_error.as_ref().map(|f| json!(f.code)).unwrap_or(Value::Null));
    v
}

fn expect(bad: &mut Vec<String>, i: usize, what: &str, got: Value, want: Option<&Value>) {
    if want != Some(&got) {
        bad.push(format!("step {i} ({what}): got {got}, want {}", want.unwrap_or(&Value::Null)));
    }
}

fn run_refresher_case(case: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let config: RefreshConfig = serde_json::from_value(case.get("config").cloned().unwrap_or(json!({}))).unwrap();
    let mut machine = Refresher::new(config, case["seed"].as_u64().unwrap_or(0));
    let mut callers: HashMap<u64, String> = HashMap::new();
    let mut traversals: HashMap<u64, String> = HashMap::new();
    let mut now = Duration::ZERO;
    for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        if let Some(ms) = step.get("atMs").and_then(Value::as_u64) {
            now = Duration::from_millis(ms);
        }
        let s = |key: &str| step[key].as_str().unwrap_or_default().to_owned();
        let bad = &mut bad;
        if step.get("attach").is_some() {
            let epoch = machine.attach(&s("attach"), step["resources"].as_bool().unwrap());
            expect(bad, i, "attach", json!(epoch), step.get("epoch"));
        } else if step.get("detach").is_some() {
            let detached = machine.detach(&s("detach"), Epoch(step["epoch"].as_u64().unwrap()));
            expect(bad, i, "detach", json!(detached), step.get("detached"));
        } else if step.get("request").is_some() {
            let want: Want = serde_json::from_value(step["want"].clone()).unwrap();
            match machine.request(&s("request"), want, now) {
                Ok(id) => {
                    expect(bad, i, "request", json!(step.get("expectError").is_some()), Some(&json!(false)));
                    callers.insert(id.0, s("caller"));
                }
                Err(e) => check_error(bad, i, step, e.code().as_str(), &e.to_string()),
            }
        } else if step.get("watch").is_some() {
            let epoch = Epoch(step["epoch"].as_u64().unwrap());
            let caps = step["capabilities"].to_string();
            let got = machine.watch(&s("watch"), epoch, &s("protocolVersion"), &caps);
            expect(bad, i, "watch", json!(got), step.get("notifications"));
        } else if step.get("listenAcknowledged").is_some() {
            let epoch = Epoch(step["epoch"].as_u64().unwrap());
            let got = machine.handle_listen_acknowledged(&s("listenAcknowledged"), epoch);
            expect(bad, i, "listenAcknowledged", json!(got), step.get("acknowledged"));
        } else if step.get("listenClosed").is_some() {
            let epoch = Epoch(step["epoch"].as_u64().unwrap());
            let liveness: Liveness = serde_json::from_value(step["liveness"].clone()).unwrap();
            match machine.handle_listen_closed(&s("listenClosed"), epoch, step["rpcCode"].as_i64(), liveness, now) {
                Err(e) => {
                    check_error(bad, i, step, e.code().as_str(), &e.to_string());
                    expect(bad, i, "rpcCode", json!(e.rpc_code()), step.get("rpcCode"));
                }
                Ok(closed) => {
                    expect(bad, i, "listenClosed", json!(null), step.get("expectError"));
                    expect(bad, i, "listenClosed", json!(closed), step.get("closed"));
                }
            }
        } else if step.get("listChanged").is_some() {
            let epoch = Epoch(step["epoch"].as_u64().unwrap());
            let decision = machine.handle_list_changed(&s("listChanged"), epoch, now);
            expect(bad, i, "listChanged", serde_json::to_value(decision).unwrap(), step.get("decision"));
        } else if let Some(id) = step.get("traversed").and_then(Value::as_u64) {
            // The server is the one its Traverse action named (any name for an unknown traversal).
            let server = traversals.get(&id).cloned().unwrap_or_else(|| "a".to_owned());
            let disposition = if step.get("abandoned").is_some() {
                // Handed back with its first request unanswered: the host stopped performing it.
                let caps = Some(r#"{"resources":{}}"#);
                let mut pair = PairTraversal::new(TraversalId(id), &server, caps, Limits::default(), "", now);
                assert!(pair.poll_request().is_some());
                machine.handle_pair(pair, now)
            } else {
                machine.handle_pair(perform_pair(TraversalId(id), &server, step, now), now)
            };
            expect(bad, i, "traversed", serde_json::to_value(disposition).unwrap(), step.get("disposition"));
        } else if step.get("timeout").is_some() {
            machine.handle_timeout(now);
        } else if step.get("remove").is_some() {
            expect(bad, i, "remove", json!(machine.remove(&s("remove"))), step.get("removed"));
        } else if step.get("clear").is_some() {
            machine.clear();
        }
        if let Some(want) = step.get("actions") {
            let mut got = Vec::new();
            while let Some(action) = machine.poll_action() {
                if let Action::Traverse { server, traversal, .. } = &action {
                    traversals.insert(traversal.0, server.clone());
                }
                let mut v = serde_json::to_value(&action).unwrap();
                if let Some(list) = v.pointer_mut("/resolve/callers") {
                    *list = list.as_array().unwrap().iter().map(|c| json!(callers[&c.as_u64().unwrap()])).collect();
                }
                got.push(v);
            }
            expect(bad, i, "actions", Value::Array(got), Some(want));
        }
        if let Some(want) = step.get("timeoutMs") {
            let got = json!(machine.poll_timeout().map(|t| t.as_millis() as u64));
            expect(bad, i, "timeoutMs", got, Some(want));
        }
        for (server, want) in step.get("status").and_then(Value::as_object).into_iter().flatten() {
            let got = status_value(&machine.catalog().status(server, now).unwrap());
            expect(bad, i, &format!("status {server}"), got, Some(want));
        }
        if let Some(input) = step.get("tool") {
            let text =
                tool::Input::from_value(input.clone()).and_then(|inp| tool::render(machine.catalog(), &inp)).unwrap();
            expect(bad, i, "tool", json!(text), step.get("expect"));
        }
        if let Some(want) = step.get("visible") {
            expect(bad, i, "visible", json!(machine.catalog().visible_tools()), Some(want));
        }
        for (server, want) in step.get("watching").and_then(Value::as_object).into_iter().flatten() {
            expect(bad, i, &format!("watching {server}"), json!(machine.notifications(server)), Some(want));
        }
    }
    bad
}

#[test]
fn refresher_vectors() {
    replay("refresher", 40, run_refresher_case);
}

/// The host vectors the Rust API can take as they are: what an SDK reported instead of a result
/// (`sdk_failure_*`), fed to a pager's first page — the same table the Python and Node replays
/// check through their public APIs. (The other host vectors are the bindings' own arguments.)
fn run_host_case(case: &Value) -> Vec<String> {
    let call = &case["call"];
    if call["op"] != "sdk_failure" {
        return Vec::new();
    }
    let want = &case["expectError"];
    let server = call["server"].as_str().unwrap();
    let kind = call["kind"].as_str().unwrap();
    let (code, held) = (call["code"].as_f64(), call["connectionHeld"].as_bool());
    let got = match mcplens::discovery::SdkFailure::from_wire(server, kind, code, held) {
        Err(e) => json!({"code": "invalid_argument", "server": server, "message": e.to_string()}),
        Ok(failure) => {
            let mut p = Pager::new(ListKind::Resources, server, true, Limits::default(), Duration::ZERO).unwrap();
            assert!(p.poll_request().is_some());
            match p.handle_outcome(failure.outcome(), Duration::ZERO) {
                Ok(()) => json!(null),
                Err(e) => json!({"code": e.code().as_str(), "server": server, "message": e.to_string()}),
            }
        }
    };
    if &got == want {
        Vec::new()
    } else {
        vec![format!("got {got}, want {want}")]
    }
}

#[test]
fn host_vectors_the_rust_api_takes() {
    let sdk_failures = std::fs::read_dir(vectors_dir("host"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("sdk_failure_"))
        .count();
    assert!(sdk_failures >= 8, "only {sdk_failures} sdk_failure host vectors");
    replay("host", 17, run_host_case);
}
