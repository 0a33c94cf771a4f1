//! `mcplens proxy` end to end: the test is the host (JSON-RPC lines on the proxy's stdin, read
//! from its stdout), the upstream a real server — the rmcp `test-server` example, and the Python
//! SDK's `fast_server.py` when its environment exists.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// How long a line may take to come: a bound so a broken proxy fails the test instead of hanging
/// it (nothing waits for it to pass).
const LINE_TIMEOUT: Duration = Duration::from_secs(60);

fn mcplens_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcplens")
}

fn test_server() -> String {
    let bin = Path::new(mcplens_bin());
    let path = bin.parent().unwrap().join("examples").join(format!("test-server{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} is missing: `cargo test -p mcplens-cli` builds it", path.display());
    path.to_string_lossy().into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcplens-proxy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A process we talk to over newline-delimited JSON-RPC.
struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Lines read that were not the answer waited for (notifications, server requests).
    others: Vec<String>,
}

impl Peer {
    fn spawn(program: &str, args: &[&str], dir: &Path) -> Peer {
        Peer::spawn_with(program, args, dir, Stdio::inherit())
    }

    fn spawn_with(program: &str, args: &[&str], dir: &Path, stderr: Stdio) -> Peer {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer { stdin: child.stdin.take(), child, lines, others: Vec::new() }
    }

    fn proxy(extra: &[&str], upstream: &[&str], dir: &Path) -> Peer {
        let mut args = vec!["proxy"];
        args.extend_from_slice(extra);
        args.push("--");
        args.extend_from_slice(upstream);
        Peer::spawn(mcplens_bin(), &args, dir)
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its answer's raw line.
    fn request_raw(&mut self, id: Value, method: &str, params: Option<Value>) -> String {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg.to_string());
        self.answer(&id)
    }

    fn request(&mut self, id: i64, method: &str, params: Option<Value>) -> Value {
        serde_json::from_str(&self.request_raw(json!(id), method, params)).unwrap()
    }

    /// The raw line answering `id` (other lines are kept in `others`).
    fn answer(&mut self, id: &Value) -> String {
        loop {
            let line = self.lines.recv_timeout(LINE_TIMEOUT).expect("an answer");
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if v.get("method").is_none() && v.get("id") == Some(id) {
                return line;
            }
            self.others.push(line);
        }
    }

    /// `initialize` (raw answer) and `notifications/initialized`.
    fn handshake(&mut self) -> String {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "proxy-test-host", "version": "3.1"}});
        let line = self.request_raw(json!(0), "initialize", Some(params));
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        line
    }

    fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", Some(json!({"name": name, "arguments": arguments})))
    }

    /// Closes stdin and waits for the exit code.
    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// The text of a tools/call result, parsed as JSON.
fn tool_output(result: &Value) -> Value {
    assert!(result["result"].get("isError").is_none(), "{result}");
    serde_json::from_str(result["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// The read tool's output: its header line (JSON) and the text of its first content (after the
/// first separator line).
fn read_output(result: &Value) -> (Value, String) {
    assert!(result["result"].get("isError").is_none(), "{result}");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    let (header, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first = rest.split_once('\n').map_or("", |(separator, body)| {
        assert!(separator.starts_with("--- content 1 text ("), "{separator}");
        body.split("\n--- content ").next().unwrap_or(body)
    });
    (serde_json::from_str(header).unwrap(), first.to_owned())
}

/// One HTTP/1.1 request off `stream`: its head (as text) and its Content-Length bytes of body;
/// `None` once the client closed the connection.
fn read_http_request(stream: &mut std::net::TcpStream) -> Option<(String, Vec<u8>)> {
    use std::io::Read;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).unwrap_or(0) == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .unwrap_or(0usize);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    Some((head, body))
}

fn events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn relays_the_servers_bytes_and_adds_the_resource_tools() {
    let dir = temp_dir("rmcp");
    let server = test_server();
    let upstream = [server.as_str(), "--templates", "3", "--resources", "2", "--sloppy"];

    // The same requests, straight to the server.
    let mut direct = Peer::spawn(upstream[0], &upstream[1..], &dir);
    let direct_init = direct.handshake();
    let direct_templates = direct.request_raw(json!("t-1"), "resources/templates/list", None);
    assert_eq!(direct.close(), 0);

    let mut host = Peer::proxy(&["--events", "events.jsonl"], &upstream, &dir);
    let init = host.handshake();
    // The one rewrite of the handshake: the tools capability, spliced in; every other byte kept.
    assert!(!direct_init.contains(r#""tools""#), "{direct_init}");
    assert_eq!(
        init,
        direct_init.replacen(r#""capabilities":{"#, r#""capabilities":{"tools":{"listChanged":true},"#, 1)
    );
    // A result the proxy does not own: the server's bytes, unchanged.
    let templates = host.request_raw(json!("t-1"), "resources/templates/list", None);
    assert_eq!(templates, direct_templates);

    // The server has no tools: the list is the proxy's resource tools.
    let list = host.request(1, "tools/list", None);
    assert_eq!(
        tool_names(&list),
        ["mcplens_ListMcpResourceTemplatesTool", "mcplens_ListMcpResourcesTool", "mcplens_ReadMcpResourceTool"]
    );
    let out = tool_output(&host.call(2, "mcplens_ListMcpResourceTemplatesTool", json!({})));
    let uris: Vec<&str> =
        out["resourceTemplates"].as_array().unwrap().iter().map(|t| t["uriTemplate"].as_str().unwrap()).collect();
    // The sloppy server's invalid template is dropped, its hostile name sanitized.
    assert_eq!(uris, ["mem://t0/{id}", "mem://t1/{id}", "mem://t2/{id}", "sloppy://{id}", "evil://{x}"]);
    assert_eq!(out["resourceTemplates"][4]["name"], "evilfdp.exe");
    assert_eq!(out["resourceTemplates"][0]["server"], "test-server");
    let out = tool_output(&host.call(3, "mcplens_ListMcpResourcesTool", json!({"limit": 1})));
    assert_eq!((out["resources"][0]["uri"].as_str(), out["nextOffset"].as_u64()), (Some("mem://r0"), Some(1)));
    // The test server cannot read: the read goes upstream, and its JSON-RPC error is a tool error.
    let read = host.call(4, "mcplens_ReadMcpResourceTool", json!({"server": "test-server", "uri": "mem://t1/42"}));
    assert_eq!(read["result"]["isError"], true, "{read}");
    let text = read["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("error: server_error: ") && !text.contains("mem://"), "{text}");

    // The host's ids never collide with the proxy's own upstream requests: a host request under
    // the id the proxy's next own request would take (three were sent: two lists, one read), and,
    // while it may still be in flight, a read that makes the proxy send one.
    host.send(r#"{"jsonrpc":"2.0","id":"mcplens-proxy-4","method":"resources/list"}"#);
    let read = host.call(5, "mcplens_ReadMcpResourceTool", json!({"server": "test-server", "uri": "mem://r1"}));
    assert!(read["result"]["content"][0]["text"].as_str().unwrap().starts_with("error: server_error: "), "{read}");
    let theirs = match host.others.pop() {
        Some(line) => line,
        None => host.answer(&json!("mcplens-proxy-4")),
    };
    let theirs: Value = serde_json::from_str(&theirs).unwrap();
    assert_eq!(theirs["id"], "mcplens-proxy-4");
    assert_eq!(theirs["result"]["resources"][0]["uri"], "mem://r0", "{theirs}");
    assert!(host.others.is_empty(), "{:?}", host.others);

    assert_eq!(host.close(), 0);
    let events = events(&dir.join("events.jsonl"));
    let mut types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    // The last two answers may come in either order.
    types[6..].sort_unstable();
    assert_eq!(
        types,
        [
            "mcp:initialize",
            "mcp:resources/templates/list",
            "mcp:tools/list",
            "mcp:tools/call",
            "mcp:tools/call",
            "mcp:tools/call",
            "mcp:resources/list",
            "mcp:tools/call"
        ]
    );
    for e in &events {
        assert_eq!(e["client"], json!({"name": "proxy-test-host", "version": "3.1"}));
        assert_eq!(e["server"], json!({"name": "test-server", "version": "0.0.0"}));
    }
    assert_eq!(events[3]["resourceName"], "mcplens_ListMcpResourceTemplatesTool");
    assert_eq!(events[5]["isError"], true);
    assert!(events.iter().any(|e| e["requestId"] == "mcplens-proxy-4" && e["type"] == "mcp:resources/list"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn no_tools_relays_only_and_no_tracking_writes_nothing() {
    let dir = temp_dir("flags");
    let server = test_server();
    let mut host = Peer::proxy(&["--no-tools", "--events", "events.jsonl"], &[&server], &dir);
    let init: Value = serde_json::from_str(&host.handshake()).unwrap();
    assert!(init["result"]["capabilities"].get("tools").is_none(), "{init}");
    let list = host.request(1, "tools/list", None);
    assert_eq!(list["error"]["code"], -32601, "{list}");
    assert_eq!(host.close(), 0);
    assert_eq!(events(&dir.join("events.jsonl")).len(), 2);

    let mut host = Peer::proxy(&["--no-tracking", "--server", "docs"], &[&server], &dir);
    host.handshake();
    assert_eq!(tool_names(&host.request(1, "tools/list", None)).len(), 3);
    // `--server` names the server in the tools' output (and in what they accept).
    let out = tool_output(&host.call(2, "mcplens_ListMcpResourcesTool", json!({"server": "docs"})));
    assert_eq!(out["resources"][0]["server"], "docs");
    assert_eq!(host.close(), 0);
    assert!(!dir.join("mcplens-events.jsonl").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[cfg(target_os = "linux")]
fn the_hosts_end_ends_the_upstream_and_the_upstreams_end_ends_the_proxy() {
    let dir = temp_dir("ends");
    let server = test_server();
    // An upstream that ignores the end of its input (`--hang`): the proxy kills it. It says its
    // pid on stderr, which is the proxy's.
    let script = format!("echo $$ >&2; exec {server} --hang");
    let mut child = Command::new(mcplens_bin())
        .args(["proxy", "--no-tracking", "--", "sh", "-c", &script])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pid = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut pid).unwrap();
    let pid = pid.trim().to_owned();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    // The proxy reaped it before exiting: nothing is left under that pid (or it is another
    // process's, which cannot be our sleeping server).
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&cmdline).contains("--hang"), "the upstream outlived the proxy");

    // SIGTERM to the proxy: the same end (exit 128 + 15), the server gone with it.
    let mut child = Command::new(mcplens_bin())
        .args(["proxy", "--no-tracking", "--", "sh", "-c", &script])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pid = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut pid).unwrap();
    let pid = pid.trim().to_owned();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    // Held until the proxy has exited: `Child::wait` closes a stdin it still holds before it
    // waits, and that end of input could reach the proxy before the signal does (exit 0).
    let stdin = child.stdin.take();
    assert_eq!(child.wait().unwrap().code(), Some(143));
    drop(stdin);
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&cmdline).contains("--hang"), "the upstream outlived the proxy");

    // The upstream exits first (code 7, before any handshake): so does the proxy, with its code.
    let mut host = Peer::proxy(&["--no-tracking"], &[&server, "--crash"], &dir);
    assert_eq!(host.child.wait().unwrap().code(), Some(7));
    drop(host.stdin.take());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_flags_and_commands_fail_with_stable_codes() {
    let out = Command::new(mcplens_bin()).args(["proxy", "--tool-prefix", "a b", "--", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: invalid_argument: ") && !stderr.contains("a b"), "{stderr}");
    let out = Command::new(mcplens_bin())
        .args(["proxy", "--no-tracking", "--", "/nonexistent/server-with-secret-token"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: transport_error: ") && !stderr.contains("secret"), "{stderr}");
    // --url: exclusive with a command; --header only with it, never one the proxy sets; --otlp a URL.
    for args in [
        &["proxy", "--url", "http://127.0.0.1:9/mcp", "--", "x"][..],
        &["proxy", "-H", "X-Key: 1", "--", "x"],
        &["proxy", "--url", "http://127.0.0.1:9/mcp", "-H", "Mcp-Session-Id: stolen"],
        &["proxy", "--url", "ftp://127.0.0.1/mcp"],
        &["proxy", "--otlp", "ftp://collector", "--", "x"],
        &["proxy", "--otlp", "http://collector:4318", "--no-tracking", "--", "x"],
        &["proxy", "--max-message-bytes", "1023", "--", "x"],
        &["proxy", "--max-message-bytes", "-1", "--", "x"],
    ] {
        let out = Command::new(mcplens_bin()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("stolen"));
    }
}

/// `--url` to a port where nothing listens: the host's `initialize` cannot go anywhere, and the
/// proxy ends with exit 3 (`transport_error`), the URL's credentials never printed.
#[test]
fn an_unreachable_url_ends_the_proxy_with_exit_3() {
    let dir = temp_dir("unreachable");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener); // nothing listens there now
    let url = format!("http://user:secret@127.0.0.1:{port}/mcp");
    let mut host = Peer::spawn(mcplens_bin(), &["proxy", "--no-tracking", "--url", &url], &dir);
    host.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}"#);
    let out = host.child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    std::fs::remove_dir_all(&dir).ok();
}

/// `--otlp URL`: the proxy's events go out as OTLP/HTTP protobuf spans to `URL/v1/traces` (a
/// loopback receiver that answers 200 and keeps what it got).
#[test]
fn otlp_exports_the_proxys_events_as_spans() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, Vec<u8>)>::new()));
    let keep = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let keep = keep.clone();
            std::thread::spawn(move || loop {
                let Some((head, body)) = read_http_request(&mut stream) else { return };
                keep.lock().unwrap().push((head.lines().next().unwrap_or("").to_owned(), body));
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap();
            });
        }
    });
    let dir = temp_dir("otlp");
    let mut host = Peer::proxy(&["--no-tools", "--otlp", &endpoint], &[&test_server()], &dir);
    host.handshake();
    host.request(1, "resources/list", None);
    assert_eq!(host.close(), 0);
    let received = received.lock().unwrap();
    let traces: Vec<&Vec<u8>> =
        received.iter().filter(|(line, _)| line.starts_with("POST /v1/traces ")).map(|(_, body)| body).collect();
    assert!(!traces.is_empty(), "no spans: {:?}", received.iter().map(|(l, _)| l).collect::<Vec<_>>());
    let spans = traces.iter().flat_map(|b| b.iter().copied()).collect::<Vec<u8>>();
    assert!(spans.windows(14).any(|w| w == b"resources/list"), "the span names the method");
    assert!(!dir.join("mcplens-events.jsonl").exists(), "--otlp alone writes no JSONL");
    std::fs::remove_dir_all(&dir).ok();
}

/// The Python SDK's `fast_server.py` (tools, a resource, a template, list_changed on a tool call),
/// under the `.build/venv-mcp2` interpreter (or `MCPLENS_PROXY_PYTHON`); skipped, and said so,
/// when neither exists.
#[test]
fn a_python_sdk_server_through_the_proxy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = std::env::var("MCPLENS_PROXY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".build/venv-mcp2/bin/python"));
    if !python.exists() {
        let required = std::env::var("MCPLENS_REQUIRE_PYTHON_SERVERS").is_ok_and(|v| v == "1");
        assert!(!required, "{} is missing", python.display());
        eprintln!("did not run against the Python SDK: {} is missing", python.display());
        return;
    }
    let server = root.join("bindings-python/tests/servers/fast_server.py");
    let dir = temp_dir("python");
    let (py, script) = (python.to_string_lossy().into_owned(), server.to_string_lossy().into_owned());
    let mut host = Peer::proxy(&["--events", "events.jsonl", "--tool-prefix", "lens_"], &[&py, &script], &dir);
    let init: Value = serde_json::from_str(&host.handshake()).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "fast");

    // The server's own tool first, then the proxy's.
    let names = tool_names(&host.request(1, "tools/list", None));
    assert_eq!(
        names,
        ["add_template", "lens_ListMcpResourceTemplatesTool", "lens_ListMcpResourcesTool", "lens_ReadMcpResourceTool"]
    );
    let out = tool_output(&host.call(2, "lens_ListMcpResourceTemplatesTool", json!({})));
    assert_eq!(out["resourceTemplates"][0]["uriTemplate"], "file:///{path}");
    let out = tool_output(&host.call(3, "lens_ListMcpResourcesTool", json!({})));
    assert_eq!(out["resources"][0]["uri"], "docs://guide");
    // Reads: a listed resource, and a template filled in.
    let (head, text) =
        read_output(&host.call(4, "lens_ReadMcpResourceTool", json!({"server": "fast", "uri": "docs://guide"})));
    assert_eq!((head["contents"][0]["textChars"].as_u64(), text.as_str()), (Some(5), "guide"));
    let uri = "file:///today.txt";
    let (_, text) = read_output(&host.call(5, "lens_ReadMcpResourceTool", json!({"server": "fast", "uri": uri})));
    assert_eq!(text, "today.txt");

    // The server's tool adds a template and says so: the notification is relayed, the catalog
    // refreshes, and the next listing has it.
    let added = host.call(6, "add_template", json!({"name": "x"}));
    assert_eq!(added["result"]["content"][0]["text"], "added", "{added}");
    assert!(host.others.iter().any(|l| l.contains("notifications/resources/list_changed")), "{:?}", host.others);
    let out = tool_output(&host.call(7, "lens_ListMcpResourceTemplatesTool", json!({})));
    let uris: Vec<&str> =
        out["resourceTemplates"].as_array().unwrap().iter().map(|t| t["uriTemplate"].as_str().unwrap()).collect();
    assert!(uris.contains(&"note://x/{id}"), "{uris:?}");

    assert_eq!(host.close(), 0);
    let events = events(&dir.join("events.jsonl"));
    let tools: Vec<&str> = events.iter().filter_map(|e| e["resourceName"].as_str()).collect();
    assert_eq!(
        tools,
        [
            "lens_ListMcpResourceTemplatesTool",
            "lens_ListMcpResourcesTool",
            "lens_ReadMcpResourceTool",
            "lens_ReadMcpResourceTool",
            "add_template",
            "lens_ListMcpResourceTemplatesTool"
        ]
    );
    assert!(events.iter().all(|e| e["server"]["name"] == "fast" && e["client"]["name"] == "proxy-test-host"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The adversarial stdio server (`tests/servers/hostile/server.py`, standard library only) through
/// the proxy, every list misbehaving from the first traversal: the proxy answers every listing
/// call with a bounded result naming the failure, relays the server's notifications, and keeps
/// relaying after it.
#[test]
fn a_hostile_upstream_never_breaks_the_proxy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let server = root.join("tests/servers/hostile/server.py").to_string_lossy().into_owned();
    let dir = temp_dir("hostile");
    // (case, proxy flags, what the templates listing says: a failure code, or "ok:N" templates)
    let cases: &[(&str, &[&str], &str)] = &[
        ("good", &[], "ok:2"),
        ("repeat_cursor", &[], "repeated_cursor"),
        ("cycle_cursor", &[], "repeated_cursor"),
        ("growing_cursor", &["--max-pages", "10"], "page_limit"),
        ("huge_string", &["--deadline-ms", "15000"], "ok:1"),
        ("huge_page", &["--deadline-ms", "15000", "--max-bytes", "500000"], "byte_limit"),
        ("many_items", &["--deadline-ms", "15000"], "item_limit"),
        ("deep_meta", &[], "ok:1"),
        ("deeper_meta", &[], "ok:1"),
        ("lone_surrogate", &[], "ok:1"),
        ("lone_surrogate_cursor", &[], "malformed_result"),
        ("invalid_utf8", &[], "malformed_result"),
        ("wrong_id", &["--deadline-ms", "1000"], "deadline"),
        ("never_respond", &["--deadline-ms", "1000"], "deadline"),
        ("list_changed_storm", &["--deadline-ms", "5000"], "ok:2"),
        ("mnf_templates", &[], "ok:0"),
        ("mnf_resources", &[], "server_error"),
    ];
    let mut seen = Vec::new();
    for (case, flags, _) in cases {
        let mut args = vec!["--no-tracking"];
        args.extend_from_slice(flags);
        let mut host = Peer::proxy(&args, &["python3", &server, "--case", case, "--good", "0"], &dir);
        host.handshake();
        let result = host.call(1, "mcplens_ListMcpResourceTemplatesTool", json!({"server": "hostile"}));
        let text = result["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text.chars().count() <= mcplens::tool::MAX_OUTPUT_CHARS, "{case}");
        let got = match serde_json::from_str::<Value>(&text) {
            Ok(out) => match out["failures"][0]["code"].as_str() {
                Some(code) => code.to_owned(),
                None => format!("ok:{}", out["resourceTemplates"].as_array().unwrap().len()),
            },
            Err(_) => text.clone(),
        };
        // The relay goes on: a ping reaches the server and comes back.
        let pong = host.request(2, "ping", None);
        assert!(pong.get("result").is_some(), "{case}: {pong}");
        if *case == "list_changed_storm" {
            let storm = host.others.iter().filter(|l| l.contains("notifications/resources/list_changed")).count();
            assert!(storm > 0, "{case}: the notifications are relayed");
        }
        assert_eq!(host.close(), 0, "{case}");
        seen.push((*case, got));
    }
    let expected: Vec<(&str, String)> = cases.iter().map(|(c, _, e)| (*c, (*e).to_owned())).collect();
    assert_eq!(seen, expected);

    // The server ends mid-page: so does the proxy, with the server's exit code; no answer comes.
    let mut host =
        Peer::proxy(&["--no-tracking"], &["python3", &server, "--case", "disconnect_mid_page", "--good", "0"], &dir);
    host.handshake();
    host.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourceTemplatesTool"}}"#,
    );
    // server.py ends with `os._exit(0)`.
    assert_eq!(host.child.wait().unwrap().code(), Some(0));
    // What the server wrote before it ended (half a page, never a whole message) is relayed as
    // it came; the proxy itself answers nothing once its server is gone.
    let rest: Vec<String> = host.lines.iter().collect();
    assert!(rest.iter().all(|l| serde_json::from_str::<Value>(l).is_err()), "{rest:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The completion tool through the installed binary: an upstream that declares `completions`
/// (the hostile server, `--completions`) gives the host a fourth tool, named under `completion` in
/// the listing; its answers come back bounded and sanitized, a server that never answers is a
/// `deadline`, and a template it did not list is refused without a request.
#[test]
fn completions_through_the_proxy_are_bounded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let server = root.join("tests/servers/hostile/server.py").to_string_lossy().into_owned();
    let dir = temp_dir("complete");
    let mut host = Peer::proxy(&["--no-tracking"], &["python3", &server, "--case", "good", "--completions"], &dir);
    host.handshake();
    let listing = tool_output(&host.call(1, "mcplens_ListMcpResourceTemplatesTool", json!({})));
    assert_eq!(listing["completion"], json!(["hostile"]));
    let tools = host.request(2, "tools/list", None);
    assert!(tool_names(&tools).contains(&"mcplens_CompleteMcpResourceTemplateTool".to_owned()), "{tools}");
    let ask = |value: &str| json!({"uriTemplate": "file:///{path}", "variable": "path", "value": value});
    let many = tool_output(&host.call(3, "mcplens_CompleteMcpResourceTemplateTool", ask("many")));
    assert_eq!(many["values"].as_array().unwrap().len(), 100);
    assert_eq!((&many["total"], &many["omitted"]), (&json!(10_000), &json!({"cut": 9_900})));
    let evil = tool_output(&host.call(4, "mcplens_CompleteMcpResourceTemplateTool", ask("evil")));
    assert_eq!((&evil["values"], &evil["omitted"]), (&json!(["fine"]), &json!({"unsafe": 4})));
    let refused =
        host.call(5, "mcplens_CompleteMcpResourceTemplateTool", json!({"uriTemplate": "x://{y}", "variable": "y"}));
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("error: unlisted_uri: "), "{text}");
    let pong = host.request(6, "ping", None);
    assert!(pong.get("result").is_some(), "{pong}");
    assert_eq!(host.close(), 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// A message over `--max-message-bytes`, either way, is never held whole: it is dropped, and the
/// request it belongs to is answered at once with an error naming the bound and the flag (before,
/// the proxy's listing waited for its deadline and the host's request was never answered).
#[test]
fn a_message_over_the_bound_answers_its_request() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let server = root.join("tests/servers/hostile/server.py").to_string_lossy().into_owned();
    let dir = temp_dir("bound");
    let stderr = dir.join("stderr.txt");
    let args = ["proxy", "--no-tracking", "--max-message-bytes", "100000", "--deadline-ms", "60000", "--"];
    let upstream = ["python3", &server, "--case", "huge_string", "--good", "0"];
    let args: Vec<&str> = args.iter().chain(upstream.iter()).copied().collect();
    let mut host = Peer::spawn_with(mcplens_bin(), &args, &dir, std::fs::File::create(&stderr).unwrap().into());
    host.handshake();
    // The server's 10 MB templates page is dropped: the listing fails with message_too_large now,
    // not at its (60 s) deadline.
    let result = host.call(1, "mcplens_ListMcpResourceTemplatesTool", json!({}));
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    let failure = &serde_json::from_str::<Value>(text).unwrap()["failures"][0];
    assert_eq!(failure["code"], "message_too_large", "{text}");
    assert!(failure["message"].as_str().unwrap().contains("--max-message-bytes"), "{text}");
    // The host's own request for that page: its answer is dropped, and an error answers it.
    let answer = host.request(2, "resources/templates/list", None);
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("100000 bytes") && message.contains("--max-message-bytes"), "{message}");
    // A request of the host's over the bound never reaches the server; the proxy answers it.
    let pad = "x".repeat(200_000);
    let answer = host.request(3, "ping", Some(json!({"pad": pad})));
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(host.request(4, "ping", None).get("result").is_some());
    assert_eq!(host.close(), 0);
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(!said.contains("xxxx"), "{said}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A Python `mcp` client as the host (`tests/hosts/python_host.py`), the Python SDK's
/// `fast_server.py` as the server; skipped, and said so, without the `.build/venv-mcp2`
/// interpreter (or `MCPLENS_PROXY_PYTHON`).
#[test]
fn a_python_sdk_client_as_the_host() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = std::env::var("MCPLENS_PROXY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".build/venv-mcp2/bin/python"));
    if !python.exists() {
        let required = std::env::var("MCPLENS_REQUIRE_PYTHON_SERVERS").is_ok_and(|v| v == "1");
        assert!(!required, "{} is missing", python.display());
        eprintln!("did not run the Python host: {} is missing", python.display());
        return;
    }
    let dir = temp_dir("python-host");
    let host = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/python_host.py");
    let server = root.join("bindings-python/tests/servers/fast_server.py");
    let out = Command::new(&python)
        .arg(&host)
        .arg(mcplens_bin())
        .arg(dir.join("events.jsonl"))
        .arg("--")
        .arg(&python)
        .arg(&server)
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok", "{stderr}");
    let events = events(&dir.join("events.jsonl"));
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "mcp:initialize",
            "mcp:tools/list",
            "mcp:tools/call",
            "mcp:resources/read",
            "mcp:resources/templates/list",
            "mcp:tools/call",
            "mcp:tools/call",
            "mcp:tools/call"
        ]
    );
    assert!(events.iter().all(|e| e["client"]["name"] == "mcp" && e["server"]["name"] == "fast"));
    assert_eq!(events[3]["resourceName"], "docs://guide");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--url`: a POST whose SSE stream ends before the answer (the server's process died, a proxy
/// cut it) still gets the host an answer: a JSON-RPC error saying so. Before, the request hung.
#[test]
fn a_post_stream_that_ends_unanswered_still_answers_the_host() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // The server takes its time to accept notifications/initialized; the next message must not
    // arrive before (messages leave in the host's order).
    let initialized = Arc::new(AtomicBool::new(false));
    let in_order = Arc::new(AtomicBool::new(false));
    let (init_seen, order_seen) = (initialized.clone(), in_order.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let (initialized, in_order) = (init_seen.clone(), order_seen.clone());
            std::thread::spawn(move || {
                let Some((head, body)) = read_http_request(&mut stream) else { return };
                let head = head.to_ascii_lowercase();
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let reply = match (head.split(' ').next(), message["method"].as_str(), message.get("id")) {
                    (Some("post"), Some("initialize"), Some(id)) => {
                        let result = json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-06-18",
                            "capabilities": {"tools": {}}, "serverInfo": {"name": "dropper", "version": "1"}}})
                        .to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n\
                             Content-Length: {}\r\nConnection: close\r\n\r\n{result}",
                            result.len()
                        )
                    }
                    // The tool call's stream opens, says something else, then ends unanswered.
                    (Some("post"), Some(_), Some(_)) => {
                        in_order.store(initialized.load(Ordering::SeqCst), Ordering::SeqCst);
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                         Connection: close\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\
                         \"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n"
                            .to_owned()
                    }
                    (Some("post"), method, _) => {
                        if method == Some("notifications/initialized") {
                            std::thread::sleep(std::time::Duration::from_millis(300));
                            // Accepted from here on: set before the answer goes, or the next POST
                            // (sent once the answer came) could be read before the flag is.
                            initialized.store(true, Ordering::SeqCst);
                            let _ = stream
                                .write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                            return;
                        }
                        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
                    }
                    _ => "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                };
                let _ = stream.write_all(reply.as_bytes());
            });
        }
    });
    let dir = temp_dir("sse-drop");
    let mut host = Peer::spawn(mcplens_bin(), &["proxy", "--no-tracking", "--no-tools", "--url", &url], &dir);
    host.handshake();
    let answer = host.request(2, "tools/call", Some(json!({"name": "slow", "arguments": {}})));
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert_eq!(answer["error"]["message"], "the server's event stream ended before it answered");
    assert!(host.others.iter().any(|l| l.contains("working")), "what the stream said was relayed: {:?}", host.others);
    assert!(
        in_order.load(Ordering::SeqCst),
        "the request reached the server before notifications/initialized was accepted"
    );
    assert_eq!(host.close(), 0);
}

/// `--url`: a cancellation sent right after its request reaches the server after it. Requests go
/// out concurrently (each on a connection of its own when none is idle), so before the next
/// message waited for the connection to take the request's body, the cancellation's POST — sent
/// at once by the same loop — was often connected and read first.
#[test]
fn a_cancellation_never_overtakes_its_request_over_url() {
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // What the server read, by the order in which it accepted the connections (a new one for each
    // message: every answer closes its connection).
    let seen: Arc<Mutex<Vec<(usize, Value)>>> = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for (accepted, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { break };
            let record = record.clone();
            std::thread::spawn(move || {
                let Some((head, body)) = read_http_request(&mut stream) else { return };
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let reply = match (head.split(' ').next(), message["method"].as_str(), message.get("id")) {
                    (Some("POST"), Some(method), Some(id)) => {
                        let result = if method == "initialize" {
                            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                "serverInfo": {"name": "ordered", "version": "1"}})
                        } else {
                            json!({"content": []})
                        };
                        let result = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n\
                             Content-Length: {}\r\nConnection: close\r\n\r\n{result}",
                            result.len()
                        )
                    }
                    (Some("POST"), Some(_), None) => {
                        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
                    }
                    _ => "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                };
                record.lock().unwrap().push((accepted, message));
                let _ = stream.write_all(reply.as_bytes());
            });
        }
    });
    let dir = temp_dir("cancel-order");
    let mut host = Peer::spawn(mcplens_bin(), &["proxy", "--no-tracking", "--no-tools", "--url", &url], &dir);
    host.handshake();
    // Eight requests, each followed at once by its cancellation, in one write.
    let pairs: Vec<String> = (10..18)
        .map(|id| {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "slow", "arguments": {}}});
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the user stopped it"}});
            format!("{call}\n{cancel}")
        })
        .collect();
    host.send(&pairs.join("\n"));
    // The answers, in whatever order they come.
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 8 {
        let line = host.lines.recv_timeout(LINE_TIMEOUT).expect("an answer");
        let message: Value = serde_json::from_str(&line).unwrap();
        answered.extend(message["id"].as_i64().filter(|id| (10..18).contains(id)));
    }
    assert_eq!(host.close(), 0);
    let seen = seen.lock().unwrap().clone();
    for id in 10..18 {
        let at = |wanted: &dyn Fn(&Value) -> bool| {
            seen.iter().find(|(_, m)| wanted(m)).map(|(accepted, _)| *accepted).expect("the server saw it")
        };
        let request = at(&|m| m["id"] == id);
        let cancellation = at(&|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == id);
        assert!(request < cancellation, "the cancellation of {id} reached the server first: {seen:?}");
    }
}

/// What a [`slow_to_accept`] server took in, in the order it finished reading each: (HTTP method,
/// message).
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;

/// A streamable-HTTP server that answers `initialize`, never answers a call, and accepts a
/// cancellation only after `accept_after`: its URL and what it took in.
fn slow_to_accept(accept_after: Duration) -> (String, Seen) {
    use std::sync::Arc;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let record = record.clone();
            std::thread::spawn(move || {
                let Some((head, body)) = read_http_request(&mut stream) else { return };
                let verb = head.split(' ').next().unwrap_or_default().to_owned();
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let reply = match (message["method"].as_str(), message.get("id")) {
                    (Some("initialize"), Some(id)) => {
                        let result = json!({"jsonrpc": "2.0", "id": id, "result": {
                            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "slow-to-accept", "version": "1"}}})
                        .to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\n\
                             Content-Length: {}\r\nConnection: close\r\n\r\n{result}",
                            result.len()
                        )
                    }
                    // The call is never answered (the host does not wait for it).
                    (Some(_), Some(_)) => {
                        record.lock().unwrap().push((verb, message));
                        std::thread::sleep(Duration::from_secs(30));
                        return;
                    }
                    (Some(method), None) => {
                        if method == "notifications/cancelled" {
                            std::thread::sleep(accept_after);
                        }
                        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
                    }
                    _ => "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                };
                record.lock().unwrap().push((verb, message));
                let _ = stream.write_all(reply.as_bytes());
            });
        }
    });
    (url, seen)
}

/// A host that sends a cancellation and closes our stdin at once (it is done) has it delivered:
/// the proxy's end waits for what the host sent before it to be accepted, then DELETEs the
/// session — here with a server slow to accept notifications, which the proxy used to leave behind.
#[test]
fn the_hosts_last_messages_reach_the_server_before_the_session_ends_over_url() {
    let (url, seen) = slow_to_accept(Duration::from_millis(300));
    let dir = temp_dir("last-messages");
    let mut host = Peer::spawn(mcplens_bin(), &["proxy", "--no-tracking", "--no-tools", "--url", &url], &dir);
    host.handshake();
    host.send(&call_and_cancel(7));
    assert_eq!(host.close(), 0);
    let seen = seen.lock().unwrap().clone();
    let at = |wanted: &dyn Fn(&(String, Value)) -> bool| seen.iter().position(wanted);
    let cancellation = at(&|(_, m)| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == 7)
        .unwrap_or_else(|| panic!("the cancellation never reached the server: {seen:?}"));
    let delete = at(&|(verb, _)| verb == "DELETE").unwrap_or_else(|| panic!("no DELETE: {seen:?}"));
    assert!(cancellation < delete, "the session ended before the cancellation was accepted: {seen:?}");
}

/// A server that does not accept what the host sent last within the proxy's 2 s does not hold its
/// end: the session is DELETEd and the proxy says on stderr that it ended without the rest.
#[test]
fn a_server_that_never_accepts_the_last_messages_is_said_on_stderr_over_url() {
    let (url, seen) = slow_to_accept(Duration::from_secs(30));
    let dir = temp_dir("never-accepted");
    let stderr = std::fs::File::create(dir.join("stderr")).unwrap();
    let args = ["proxy", "--no-tracking", "--no-tools", "--url", &url];
    let mut host = Peer::spawn_with(mcplens_bin(), &args, &dir, Stdio::from(stderr));
    host.handshake();
    host.send(&call_and_cancel(8));
    assert_eq!(host.close(), 0);
    let said = std::fs::read_to_string(dir.join("stderr")).unwrap();
    assert!(said.contains("the session ends without the rest"), "{said}");
    assert!(seen.lock().unwrap().iter().any(|(verb, _)| verb == "DELETE"), "the session is DELETEd");
}

/// A call to `slow` with id `id`, then its cancellation, in one write.
fn call_and_cancel(id: i64) -> String {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "slow", "arguments": {}}});
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the host is leaving"}});
    format!("{call}\n{cancel}")
}
