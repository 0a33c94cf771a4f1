//! `mcplens events report|serve`: the real binary on events files with known content.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events.jsonl")
}

fn mcplens(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcplens")).args(args).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// A fresh directory under the target dir (kept on failure, for a look).
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn event(kind: &str, ms: f64, session: &str, extra: &str) -> String {
    format!(
        "{{\"schema\":1,\"id\":\"evt_x\",\"type\":\"{kind}\",\"timestamp\":\"2026-11-29T10:00:00.000Z\",\"durationMs\":{ms},\
         \"sessionId\":\"{session}\",\"isError\":false,\"traceId\":\"0\",\"spanId\":\"0\",\"truncated\":[]{extra}}}\n"
    )
}

/// The `data-value` of the first element carrying `attr` (e.g. `data-metric="events"`) after
/// `after` (a unique anchor such as a row's `data-key`).
fn value_after(html: &str, after: &str, attr: &str) -> String {
    let start = html.find(after).unwrap_or_else(|| panic!("no {after} in the page"));
    let rest = &html[start..];
    let at = rest.find(attr).unwrap_or_else(|| panic!("no {attr} after {after}"));
    let v = &rest[at..];
    let v = &v[v.find("data-value=\"").unwrap() + 12..];
    v[..v.find('"').unwrap()].to_owned()
}

fn report_of(files: &[&Path], extra: &[&str]) -> (String, String) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = scratch(&format!("out-{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let out = dir.join("r.html");
    let mut args: Vec<String> = vec!["events".into(), "report".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["-o".to_owned(), out.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = mcplens(&args);
    assert_eq!(code, 0, "{err}");
    (std::fs::read_to_string(&out).unwrap(), err)
}

#[test]
fn report_figures_equal_those_of_events_summary() {
    let (html, err) = report_of(&[&fixture()], &[]);
    assert!(err.contains(": 35 events from 1 file (1 line was not events)"), "{err}");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"events\""), "35");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"sessions\""), "1");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"bad-lines\""), "1");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"span\""), "34000");
    let (_, summary, _) = mcplens(&["events", "summary", "--json", fixture().to_str().unwrap()]);
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    for (kind, f) in summary["byType"].as_object().unwrap() {
        let anchor = &html[html.find("id=\"methods\"").unwrap()..];
        let key = format!("data-key=\"{kind}\"");
        for (k, field) in
            [("count", "count"), ("errors", "errors"), ("p50", "p50Ms"), ("p95", "p95Ms"), ("p99", "p99Ms")]
        {
            let v: f64 = value_after(anchor, &key, &format!("data-k=\"{k}\"")).parse().unwrap();
            assert_eq!(v, f[field].as_f64().unwrap(), "{kind} {k}");
        }
    }
    // Per-URI rows (≤ 256 events each: exact) agree with the summary's by-resource figures.
    let anchor = &html[html.find("id=\"resources\"").unwrap()..];
    let v: f64 = value_after(anchor, "data-key=\"file:///a.txt\"", "data-k=\"p99\"").parse().unwrap();
    assert_eq!(v, summary["byResource"]["file:///a.txt"]["p99Ms"].as_f64().unwrap());
    // Every chart is there.
    for chart in ["over-time", "latency", "tools", "resources", "templates", "prompts", "errors", "clients"] {
        assert!(html.contains(&format!("<svg data-chart=\"{chart}\"")), "chart {chart}");
    }
    // Self-contained: no script, no external reference, a CSP that allows neither.
    assert!(!html.contains("<script"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("src="), "no external resource");
    assert!(html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""));
}

#[test]
fn planted_html_script_and_bidi_text_is_never_live() {
    let dir = scratch("planted");
    let f = dir.join("e.jsonl");
    let planted = [
        ("tool", "<script>alert('tool')</script>"),
        ("uri", "x://a/\"><img src=x onerror=alert(1)>"),
        ("message", "<svg onload=alert(2)>boom</svg>\u{202e}cba"),
        ("client", "</td><iframe srcdoc='<script>alert(3)</script>'>\u{2066}"),
        ("prompt", "'; alert(4); '\u{200b}"),
    ];
    let mut text = String::new();
    let client = serde_json::json!({ "name": planted[3].1, "version": "<i>1</i>" }).to_string();
    text += &event(
        "mcp:tools/call",
        1.0,
        "ses_<a>",
        &format!(",\"resourceName\":{},\"client\":{client}", serde_json::json!(planted[0].1)),
    );
    text +=
        &event("mcp:resources/read", 2.0, "ses_a", &format!(",\"resourceName\":{}", serde_json::json!(planted[1].1)));
    text += &event(
        "mcp:tools/call",
        3.0,
        "ses_a",
        &format!(
            ",\"resourceName\":\"t\",\"error\":{{\"type\":\"tool_error\",\"message\":{}}}",
            serde_json::json!(planted[2].1)
        ),
    )
    .replace("\"isError\":false", "\"isError\":true");
    text += &event("mcp:prompts/get", 4.0, "ses_a", &format!(",\"resourceName\":{}", serde_json::json!(planted[4].1)));
    text += &event("<b>mcp:odd</b>", 5.0, "ses_a", "");
    text += &event(
        "mcp:resources/templates/list",
        1.0,
        "ses_a",
        ",\"response\":{\"resourceTemplates\":[{\"uriTemplate\":\"<script>{x}\"}]}",
    );
    std::fs::write(&f, text).unwrap();
    let (html, _) = report_of(&[&f], &[]);
    for (what, raw) in planted {
        assert!(!html.contains(raw), "{what} appears unescaped");
    }
    for live in ["<script", "<img", "<svg onload", "<iframe", "<b>", "<i>", "</td><iframe"] {
        assert!(!html.contains(live), "{live} is live in the page");
    }
    for bidi in ['\u{202e}', '\u{2066}', '\u{200b}'] {
        assert!(!html.contains(bidi), "{bidi:?} reached the page");
    }
    for shown in [
        "&lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;",
        "x://a/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;",
        "&lt;svg onload=alert(2)&gt;boom&lt;/svg&gt;cba",
        "&lt;b&gt;mcp:odd&lt;/b&gt;",
    ] {
        assert!(html.contains(shown), "{shown} is shown as text");
    }
}

#[test]
fn rotated_and_multiple_files_are_read_together_and_bad_lines_counted() {
    let dir = scratch("rotated");
    let base = dir.join("mcplens-events.jsonl");
    let other = dir.join("other.jsonl");
    let with = |n: u32| dir.join(format!("mcplens-events.jsonl.{n}"));
    std::fs::write(with(2), event("mcp:tools/list", 1.0, "ses_1", "")).unwrap();
    std::fs::write(with(1), event("mcp:tools/list", 2.0, "ses_2", "") + "garbage\n").unwrap();
    std::fs::write(&base, event("mcp:tools/list", 3.0, "ses_3", "") + "{\"type\":\"mcp:tools/list\"}\n").unwrap();
    std::fs::write(&other, event("mcp:tools/list", 4.0, "ses_1", "") + &event("mcp:tools/list", 5.0, "ses_4", ""))
        .unwrap();
    // A file named twice (and a rotated sibling named too) is read once.
    let (html, err) = report_of(&[&base, &other, &with(1)], &[]);
    assert!(err.contains(": 5 events from 4 files (2 lines were not events)"), "{err}");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"events\""), "5");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"sessions\""), "4");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"bad-lines\""), "2");
    let p50: f64 = value_after(&html, "data-key=\"mcp:tools/list\"", "data-k=\"p50\"").parse().unwrap();
    assert_eq!(p50, 3.0);
    let files = &html[html.find("id=\"sources\"").unwrap()..];
    let order: Vec<usize> =
        ["mcplens-events.jsonl.2<", "mcplens-events.jsonl.1<", "mcplens-events.jsonl<", "other.jsonl<"]
            .iter()
            .map(|f| files.find(f).unwrap_or_else(|| panic!("{f} listed")))
            .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "oldest first: {order:?}");
    assert!(files.contains(&format!("{}:2</td><td>not JSON", with(1).display())), "bad line shown with its place");
    assert!(files.contains(":2</td><td>not an event (a field is missing or of the wrong type)"));
    let (html, err) = report_of(&[&base], &["--no-rotated"]);
    assert!(err.contains(": 1 events from 1 file (1 line was not events)"), "{err}");
    assert_eq!(value_after(&html, "id=\"overview\"", "data-metric=\"events\""), "1");
}

#[test]
fn report_to_stdout_and_errors() {
    let (code, out, _) = mcplens(&["events", "report", fixture().to_str().unwrap(), "-o", "-"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("<!DOCTYPE html>") && out.ends_with("</html>\n"));
    let (code, _, err) = mcplens(&["events", "report", "/nonexistent/e.jsonl", "-o", "-"]);
    assert_eq!((code, err.as_str()), (1, "error: io_error: cannot read /nonexistent/e.jsonl: entity not found\n"));
    let (code, _, err) = mcplens(&["events", "report", fixture().to_str().unwrap(), "--top", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn progress_bar_on_request() {
    let dir = scratch("progress");
    let f = dir.join("e.jsonl");
    let text: String = (0..3000).map(|i| event("mcp:tools/list", f64::from(i), "ses_a", "")).collect();
    std::fs::write(&f, text).unwrap();
    let out = dir.join("r.html");
    let (code, _, err) =
        mcplens(&["events", "report", f.to_str().unwrap(), "-o", out.to_str().unwrap(), "--progress", "always"]);
    assert_eq!(code, 0);
    let frame = err.split("\r\x1b[2K").nth(1).unwrap_or_else(|| panic!("no progress frame: {err:?}"));
    assert!(frame.starts_with("reading events [") && frame.contains("% ") && frame.contains(" MB "), "{frame:?}");
    assert!(err.contains("\r\x1b[2K") && err.trim_end().ends_with(" s"), "erased, then the account: {err:?}");
    let (_, _, err) =
        mcplens(&["events", "report", f.to_str().unwrap(), "-o", out.to_str().unwrap(), "--progress", "never"]);
    assert!(!err.contains('\x1b'));
}

/// A running `mcplens events serve` (killed on drop).
struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(files: &[&Path]) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcplens"));
    cmd.args(["events", "serve", "--port", "0"]).args(files).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.strip_prefix("serving http://127.0.0.1:").unwrap_or_else(|| panic!("{line}"));
    let port = url[..url.find('/').unwrap()].parse().unwrap();
    assert!(line.ends_with("/ (read-only; Ctrl-C to stop)\n"), "{line}");
    Served { child, port }
}

/// One HTTP/1.1 request; (status, headers, body).
fn http(port: u16, method: &str, path: &str, host: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// Waits (up to a minute: the machine may be busy) until `f` holds.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn serve_is_live_read_only_and_loopback_only() {
    let dir = scratch("serve");
    let f = dir.join("e.jsonl");
    std::fs::write(&f, event("mcp:tools/list", 1.0, "ses_a", "")).unwrap();
    let s = serve(&[&f]);
    let host = format!("127.0.0.1:{}", s.port);
    eventually("the first reading", || http(s.port, "GET", "/version", &host).2.trim() != "0");
    let (status, head, page) = http(s.port, "GET", "/", &host);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html; charset=utf-8"));
    assert!(
        page.contains("script-src 'self'; connect-src 'self'") && page.contains("<script src=\"live.js\"></script>")
    );
    assert_eq!(value_after(&page, "id=\"overview\"", "data-metric=\"events\""), "1");
    let (status, _, js) = http(s.port, "GET", "/live.js", &host);
    assert!(status == 200 && js.contains("fetch(\"version\""));
    let version = http(s.port, "GET", "/version", &host).2;
    // Appended events show up, also across a rotation.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&f)
        .unwrap()
        .write_all(event("mcp:tools/list", 2.0, "ses_b", "").as_bytes())
        .unwrap();
    eventually("the appended event", || http(s.port, "GET", "/version", &host).2 != version);
    let (_, head, main) = http(s.port, "GET", "/main", &host);
    assert!(head.contains("x-report-version:"));
    assert_eq!(value_after(&main, "id=\"overview\"", "data-metric=\"events\""), "2");
    std::fs::rename(&f, dir.join("e.jsonl.1")).unwrap();
    std::fs::write(&f, event("mcp:tools/list", 3.0, "ses_c", "")).unwrap();
    eventually("the event after rotation", || {
        value_after(&http(s.port, "GET", "/main", &host).2, "id=\"overview\"", "data-metric=\"events\"") == "3"
    });
    // A templates list naming a new template: everything is read again with it.
    let listing = ",\"response\":{\"resourceTemplates\":[{\"uriTemplate\":\"note://{id}\",\"name\":\"n\"}]}";
    std::fs::OpenOptions::new()
        .append(true)
        .open(&f)
        .unwrap()
        .write_all(event("mcp:resources/templates/list", 1.0, "ses_c", listing).as_bytes())
        .unwrap();
    eventually("the new template", || {
        let main = http(s.port, "GET", "/main", &host).2;
        value_after(&main, "id=\"templates-known\"", "data-value") == "1"
            && value_after(&main, "id=\"overview\"", "data-metric=\"events\"") == "4"
    });
    // Read-only, nothing else served, loopback names only.
    assert_eq!(http(s.port, "POST", "/", &host).0, 405);
    assert_eq!(http(s.port, "GET", "/etc/passwd", &host).0, 404);
    assert_eq!(http(s.port, "GET", "/", "evil.example").0, 403);
    assert_eq!(http(s.port, "GET", "/", &format!("localhost:{}", s.port)).0, 200);
}

/// One HTTP/1.1 request with extra header lines; (status, headers, body).
fn http_with(port: u16, path: &str, extra: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: reader.example\r\n{extra}Connection: close\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    (head[9..12].parse().unwrap(), head.to_owned(), body.to_owned())
}

/// Bound beyond loopback, the page is locked: no token or a wrong one is 401; the token printed
/// once in the URL opens it and sets an HttpOnly, SameSite=Strict cookie the live page's polling
/// carries; a bearer token works for scripts; the token is never written to stderr.
#[test]
fn serve_beyond_loopback_needs_the_token() {
    let dir = scratch("serve-remote");
    let f = dir.join("e.jsonl");
    std::fs::write(&f, event("mcp:tools/list", 1.0, "ses_a", "")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcplens"));
    cmd.args(["events", "serve", "--port", "0", "--bind", "0.0.0.0", "--allow-remote"])
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let rest = line.strip_prefix("serving http://0.0.0.0:").unwrap_or_else(|| panic!("{line}"));
    let (port, rest) = rest.split_once("/?token=").unwrap_or_else(|| panic!("the token in the URL: {line}"));
    let port: u16 = port.parse().unwrap();
    let (token, tail) = rest.split_once(' ').unwrap();
    assert_eq!((token.len(), tail), (22, "(read-only; Ctrl-C to stop)\n"), "{line}");
    let served = Served { child, port };

    for (path, extra) in [
        ("/", String::new()),
        ("/version", String::new()),
        ("/?token=wrong", String::new()),
        ("/", "Authorization: Bearer wrong\r\n".to_owned()),
        ("/", format!("Authorization: Bearer {}x\r\n", token)),
        ("/", format!("Cookie: mcplens_token={}\r\n", &token[..21])),
    ] {
        let (status, head, _) = http_with(port, path, &extra);
        assert_eq!(status, 401, "{path} {extra}");
        assert!(head.to_ascii_lowercase().contains("www-authenticate: bearer"), "{head}");
    }
    let (status, head, _) = http_with(port, &format!("/?token={token}"), "");
    assert_eq!(status, 303, "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("location: /\r\n"), "{head}");
    let cookie = head.lines().find_map(|l| l.strip_prefix("set-cookie: ").or_else(|| l.strip_prefix("Set-Cookie: ")));
    assert_eq!(cookie, Some(format!("mcplens_token={token}; HttpOnly; SameSite=Strict; Path=/").as_str()));
    let with_cookie = format!("Cookie: theme=dark; mcplens_token={token}\r\n");
    let (status, _, page) = http_with(port, "/", &with_cookie);
    assert!(status == 200 && page.contains("<script src=\"live.js\"></script>"), "{status}");
    // The live page's polling: the same-origin fetches carry the cookie.
    eventually("the first reading", || http_with(port, "/version", &with_cookie).2.trim() != "0");
    assert_eq!(http_with(port, "/main", &with_cookie).0, 200);
    let bearer = format!("Authorization: Bearer {token}\r\n");
    assert_eq!(http_with(port, "/version", &bearer).0, 200);

    let mut served = served;
    let _ = served.child.kill();
    let _ = served.child.wait();
    let mut err = String::new();
    served.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("holds the token") && !err.contains(token), "{err}");
}

/// `--token-file`: its token (not printed) is required, even on loopback; a short one is refused
/// without echoing it.
#[test]
fn serve_takes_the_token_from_a_file() {
    let dir = scratch("serve-token-file");
    let f = dir.join("e.jsonl");
    std::fs::write(&f, event("mcp:tools/list", 1.0, "ses_a", "")).unwrap();
    let short = dir.join("short");
    std::fs::write(&short, "tooshort\n").unwrap();
    let (code, out, err) = mcplens(&["events", "serve", "--token-file", short.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("at least 16 visible ASCII characters") && !err.contains("tooshort"), "{err}");

    let file = dir.join("token");
    std::fs::write(&file, "  correct-horse-battery-staple\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcplens"));
    cmd.args(["events", "serve", "--port", "0", "--token-file", file.to_str().unwrap()])
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(!line.contains("correct-horse") && line.contains("token in --token-file required"), "{line}");
    let port: u16 = line["serving http://127.0.0.1:".len()..].split('/').next().unwrap().parse().unwrap();
    let s = Served { child, port };
    let host = format!("127.0.0.1:{}", s.port);
    assert_eq!(http(s.port, "GET", "/", &host).0, 401);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    write!(c, "GET / HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer correct-horse-battery-staple\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = String::new();
    c.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
}

#[test]
fn serve_says_when_the_port_is_taken() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (code, _, err) = mcplens(&["events", "serve", "--port", &port, fixture().to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "error: address_in_use: cannot listen on 127.0.0.1:{port}: the port is already in use (choose another with \
             --port, or 0 for any free port)\n"
        )
    );
}

#[test]
fn serve_binds_nothing_but_loopback_without_the_flag() {
    let (code, out, err) = mcplens(&["events", "serve", "--bind", "0.0.0.0", fixture().to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with("error: invalid_argument: refusing to serve on 0.0.0.0: it is not a loopback address")
            && err.contains("pass --allow-remote"),
        "{err}"
    );
}

/// Completions by resource template: how often each template's variables were completed, and how
/// often a read of that template followed in the same session (a prompt's completion, an error,
/// another session's read, or a read of another template does not count).
#[test]
fn completions_by_template_and_the_reads_they_led_to() {
    let dir = scratch("completions");
    let f = dir.join("e.jsonl");
    let templates = dir.join("templates.txt");
    std::fs::write(&templates, "notes://{folder}/{name}\ndocs://{page}\n").unwrap();
    let complete = |session: &str, name: &str, error: bool| {
        let line = event("mcp:completion/complete", 2.0, session, &format!(",\"resourceName\":\"{name}\""));
        if error {
            line.replace("\"isError\":false", "\"isError\":true")
        } else {
            line
        }
    };
    let read =
        |session: &str, uri: &str| event("mcp:resources/read", 3.0, session, &format!(",\"resourceName\":\"{uri}\""));
    let lines = [
        complete("ses_a", "notes://{folder}/{name}", false),
        complete("ses_a", "notes://{folder}/{name}", false),
        read("ses_a", "notes://work/launch"),
        complete("ses_b", "notes://{folder}/{name}", false),
        read("ses_c", "notes://work/launch"),
        complete("ses_b", "docs://{page}", true),
        read("ses_b", "docs://intro"),
        complete("ses_b", "a-prompt", false),
    ];
    std::fs::write(&f, lines.concat()).unwrap();
    let (html, _) = report_of(&[&f], &["--templates", templates.to_str().unwrap()]);
    let notes = "data-key=\"notes://{folder}/{name}\"";
    assert_eq!(value_after(&html, notes, "data-k=\"count\""), "3");
    assert_eq!(value_after(&html, notes, "data-k=\"read\""), "1");
    let docs = "data-key=\"docs://{page}\"";
    assert_eq!(value_after(&html, docs, "data-k=\"count\""), "1");
    assert_eq!(value_after(&html, docs, "data-k=\"errors\""), "1");
    assert_eq!(value_after(&html, docs, "data-k=\"read\""), "0");
    assert!(!html[html.find("id=\"completions\"").unwrap()..].split("</section>").next().unwrap().contains("a-prompt"));
}
