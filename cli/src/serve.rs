//! `mcplens events serve`: the report page, live, on a loopback address.
//!
//! One thread reads the files (the same pass as `events report`), then every [`POLL`] reads what
//! was appended (following rotation; a file truncated in place, or a templates list naming a new
//! template, makes it read everything again) and renders the page when the figures changed. The
//! HTTP side only hands out the latest rendering: `GET /` (the page), `/main` (its `<main>`, for
//! the page's script), `/version` (a number that changes with the figures) and `/live.js`.
//! Nothing else is served and nothing can be changed (other methods: 405). Requests whose `Host`
//! is not a loopback name are refused while bound to loopback (so a web page elsewhere cannot
//! read the events through DNS rebinding).
//!
//! Bound elsewhere (`--allow-remote`), every request needs the [`Token`]: 128 bits from the OS,
//! printed once in the URL, or the content of `--token-file`. It is accepted as `Authorization:
//! Bearer <token>`, as the cookie a first visit to `/?token=<token>` sets (`HttpOnly;
//! SameSite=Strict`, with a redirect that takes the token out of the address bar), compared in
//! constant time, and never logged; anything else is 401.

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};

use crate::report::files::{Change, FileSet};
use crate::report::{self, html, Options, Templates};

/// How often the files are read again.
pub const POLL: Duration = Duration::from_millis(500);

/// The script of the live page: every second, fetch `version`; when it changed, fetch `main` and
/// put it in place. Served as a file so that the page's CSP allows no inline script.
pub const LIVE_JS: &str = r##""use strict";
(() => {
  const root = document.documentElement;
  const badge = document.getElementById("live");
  async function tick() {
    try {
      const r = await fetch("version", { cache: "no-store" });
      const v = (await r.text()).trim();
      if (v !== root.dataset.version) {
        const m = await fetch("main", { cache: "no-store" });
        const html = await m.text();
        document.querySelector("main").innerHTML = html;
        root.dataset.version = m.headers.get("x-report-version") || v;
      }
      badge.textContent = "live";
      badge.style.background = "";
    } catch (e) {
      badge.textContent = "not connected";
      badge.style.background = "#e15759";
    }
    setTimeout(tick, 1000);
  }
  setTimeout(tick, 1000);
})();
"##;

/// The latest rendering.
#[derive(Debug, Clone)]
struct Snapshot {
    version: u64,
    page: Arc<str>,
    main: Arc<str>,
}

/// Why serving could not start.
#[derive(Debug)]
pub struct ServeError {
    /// Stable code (`address_in_use`, `invalid_argument`, `io_error`).
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

/// The cookie that carries the token after the first visit.
const COOKIE: &str = "mcplens_token";

/// The shortest token accepted from `--token-file`, in characters.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The secret a remote reader must present.
#[derive(Clone)]
pub struct Token {
    secret: Arc<str>,
    /// Generated here (and printed once in the URL), not read from a file.
    pub generated: bool,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)") // never logged
    }
}

impl Token {
    /// The token for serving: read from `file` (trimmed; at least [`MIN_TOKEN_CHARS`] visible
    /// ASCII characters), else generated from 128 bits of the OS's randomness when `remote`; none
    /// on loopback without a file.
    pub fn new(file: Option<&Path>, remote: bool) -> Result<Option<Token>, ServeError> {
        let invalid = |message: String| ServeError { code: "invalid_argument", message };
        if let Some(file) = file {
            let text = std::fs::read_to_string(file)
                .map_err(|e| invalid(format!("cannot read the token file {}: {}", file.display(), e.kind())))?;
            let secret = text.trim();
            if secret.chars().count() < MIN_TOKEN_CHARS || !secret.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(invalid(format!(
                    "the token in {} must be at least {MIN_TOKEN_CHARS} visible ASCII characters with no spaces",
                    file.display()
                )));
            }
            return Ok(Some(Token { secret: Arc::from(secret), generated: false }));
        }
        if !remote {
            return Ok(None);
        }
        let mut bits = [0u8; 16];
        getrandom::fill(&mut bits).map_err(|e| ServeError {
            code: "io_error",
            message: format!("no randomness from the OS for the token: {e}"),
        })?;
        use base64::Engine as _;
        let secret = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bits);
        Ok(Some(Token { secret: Arc::from(secret), generated: true }))
    }

    /// The token, to print once in the URL.
    pub fn reveal(&self) -> &str {
        &self.secret
    }

    /// Compares in time independent of where `given` first differs.
    fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.secret.as_bytes(), given.as_bytes());
        let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
        std::hint::black_box(diff) == 0 && a.len() == b.len()
    }
}

/// How a request presented the token.
enum Presented {
    /// As a bearer token or the cookie.
    Held,
    /// In the URL's query: set the cookie and send the reader to the URL without it.
    InUrl,
    /// Not at all, or a wrong one.
    No,
}

fn presented<B>(req: &Request<B>, token: &Token) -> Presented {
    let headers = req.headers();
    let bearer = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| token.matches(t.trim()));
    let cookie = headers.get_all(hyper::header::COOKIE).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(';').filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('=')).any(|t| token.matches(t))
    });
    if bearer || cookie {
        return Presented::Held;
    }
    let query = req.uri().query().unwrap_or("");
    if url::form_urlencoded::parse(query.as_bytes()).any(|(k, v)| k == "token" && token.matches(&v)) {
        return Presented::InUrl;
    }
    Presented::No
}

/// Binds `addr` (loopback unless `allow_remote`); the caller prints the URL, then calls [`run`].
pub fn bind(ip: IpAddr, port: u16, allow_remote: bool) -> Result<TcpListener, ServeError> {
    if !ip.is_loopback() && !allow_remote {
        return Err(ServeError {
            code: "invalid_argument",
            message: format!(
                "refusing to serve on {ip}: it is not a loopback address, and the page shows every tool name, URI and \
                 error message in the events to whoever can reach it; pass --allow-remote to do it anyway"
            ),
        });
    }
    let addr = SocketAddr::new(ip, port);
    TcpListener::bind(addr).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => ServeError {
            code: "address_in_use",
            message: format!("cannot listen on {addr}: the port is already in use (choose another with --port, or 0 for any free port)"),
        },
        kind => ServeError { code: "io_error", message: format!("cannot listen on {addr}: {kind}") },
    })
}

/// Serves until the process is stopped.
pub fn run(
    listener: TcpListener,
    set: FileSet,
    options: Options,
    templates: Templates,
    token: Option<Token>,
    runtime: &tokio::runtime::Runtime,
) -> Result<(), ServeError> {
    let io = |e: std::io::Error| ServeError { code: "io_error", message: e.to_string() };
    let empty = report::Stats::new(options.clone(), templates.clone());
    let main: Arc<str> = Arc::from(html::main(&empty, &[]));
    let snapshot = Arc::new(Mutex::new(Snapshot {
        version: 0,
        page: Arc::from(html::page(&main, &[], html::Mode::Live { version: 0 })),
        main,
    }));
    let loopback = listener.local_addr().map_err(io)?.ip().is_loopback();
    let reader = snapshot.clone();
    std::thread::Builder::new()
        .name("mcplens-serve-reader".into())
        .spawn(move || watch(set, options, templates, &reader))
        .map_err(io)?;
    listener.set_nonblocking(true).map_err(io)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(io)?;
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let snapshot = snapshot.clone();
            let token = token.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let snap = snapshot.lock().map(|s| s.clone()).ok();
                    let answer = respond(&req, snap, loopback, token.as_ref());
                    async move { Ok::<_, std::convert::Infallible>(answer) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// Reads the files forever, publishing a new snapshot whenever the figures change.
fn watch(set: FileSet, options: Options, templates: Templates, out: &Mutex<Snapshot>) {
    let fresh = set.clone();
    let mut set = set;
    let mut version = 0u64;
    let mut stats: Option<report::Stats> = None;
    let mut known = templates.clone();
    let mut last_error: Option<String> = None;
    loop {
        let changed = match stats.as_mut() {
            None => match report::collect(&mut set, &options, known.clone(), true, |t| {
                crate::progress::Bar::new(false, Duration::ZERO, "", t)
            }) {
                Ok(s) if s.templates_changed => {
                    known = s.templates.clone();
                    set = fresh.clone();
                    continue;
                }
                Ok(s) => {
                    stats = Some(s);
                    true
                }
                Err(e) => {
                    // Said once per distinct error; tried again at every poll.
                    let message = e.to_string();
                    if last_error.as_deref() != Some(message.as_str()) {
                        eprintln!("error: io_error: {message} (trying again)");
                        last_error = Some(message);
                    }
                    false
                }
            },
            Some(s) => {
                let paths = set.paths(false).unwrap_or_default();
                match set.read_new(&paths, true, &mut |l, f, n| s.add_line(l, f, n), &mut |_| {}) {
                    Ok(Change::Shrank) => {
                        stats = None;
                        set = fresh.clone();
                        continue;
                    }
                    Ok(Change::Grew) if s.templates_changed => {
                        // Reads before the new template was known were grouped without it.
                        known = s.templates.clone();
                        stats = None;
                        set = fresh.clone();
                        continue;
                    }
                    Ok(Change::Grew) => true,
                    _ => false,
                }
            }
        };
        if changed {
            if let Some(s) = &stats {
                version += 1;
                let files = set.files();
                let main: Arc<str> = Arc::from(html::main(s, &files));
                let page = Arc::from(html::page(&main, &files, html::Mode::Live { version }));
                if let Ok(mut snap) = out.lock() {
                    *snap = Snapshot { version, page, main };
                }
            }
        }
        std::thread::sleep(POLL);
    }
}

/// Whether a `Host` header names a loopback host.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn respond<B>(
    req: &Request<B>,
    snap: Option<Snapshot>,
    loopback: bool,
    token: Option<&Token>,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, kind: &str, body: Bytes| {
        Response::builder()
            .status(status)
            .header("content-type", kind)
            .header("cache-control", "no-store")
            .header("x-content-type-options", "nosniff")
            .header("referrer-policy", "no-referrer")
            .body(Full::new(body))
            .expect("static headers are valid")
    };
    let text = |status: StatusCode, body: &'static str| {
        reply(status, "text/plain; charset=utf-8", Bytes::from_static(body.as_bytes()))
    };
    if loopback {
        let host = req.headers().get(hyper::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !loopback_host(host) {
            return text(
                StatusCode::FORBIDDEN,
                "forbidden: this server answers only requests addressed to a loopback host\n",
            );
        }
    }
    if let Some(token) = token {
        match presented(req, token) {
            Presented::Held => {}
            Presented::InUrl => {
                let mut r = text(StatusCode::SEE_OTHER, "see the same page without the token in its URL\n");
                let cookie = format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", token.reveal());
                let location = req.uri().path().to_owned();
                for (name, value) in [(hyper::header::SET_COOKIE, cookie), (hyper::header::LOCATION, location)] {
                    if let Ok(v) = hyper::header::HeaderValue::from_str(&value) {
                        r.headers_mut().insert(name, v);
                    }
                }
                return r;
            }
            Presented::No => {
                let mut r = text(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized: open the URL with the token that `mcplens events serve` printed, or send \
                     Authorization: Bearer <token>\n",
                );
                r.headers_mut().insert("www-authenticate", hyper::header::HeaderValue::from_static("Bearer"));
                return r;
            }
        }
    }
    if req.method() != hyper::Method::GET && req.method() != hyper::Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "read-only: GET only\n");
        r.headers_mut().insert("allow", hyper::header::HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let Some(snap) = snap else { return text(StatusCode::INTERNAL_SERVER_ERROR, "internal error\n") };
    let html = "text/html; charset=utf-8";
    match req.uri().path() {
        "/" => reply(StatusCode::OK, html, Bytes::from(snap.page.to_string())),
        "/main" => {
            let mut r = reply(StatusCode::OK, html, Bytes::from(snap.main.to_string()));
            r.headers_mut().insert("x-report-version", hyper::header::HeaderValue::from(snap.version));
            r
        }
        "/version" => reply(StatusCode::OK, "text/plain; charset=utf-8", Bytes::from(format!("{}\n", snap.version))),
        "/live.js" => reply(StatusCode::OK, "text/javascript; charset=utf-8", Bytes::from_static(LIVE_JS.as_bytes())),
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_pass() {
        for ok in ["127.0.0.1:8765", "localhost:1", "LOCALHOST", "[::1]:80", "127.0.0.2"] {
            assert!(loopback_host(ok), "{ok}");
        }
        for bad in ["evil.example:8765", "10.0.0.1:80", "", "[2001:db8::1]:80", "localhost.evil.example"] {
            assert!(!loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn the_token_compares_whole() {
        let t = Token { secret: Arc::from("abcdefghijklmnop"), generated: false };
        assert!(t.matches("abcdefghijklmnop"));
        for wrong in ["", "abcdefghijklmno", "abcdefghijklmnopq", "abcdefghijklmnoq", "Abcdefghijklmnop"] {
            assert!(!t.matches(wrong), "{wrong}");
        }
        assert_eq!(format!("{t:?}"), "Token(…)");
        let generated = Token::new(None, true).unwrap().unwrap();
        assert!(generated.generated && generated.reveal().len() == 22, "128 bits in base64url");
        assert_ne!(generated.reveal(), Token::new(None, true).unwrap().unwrap().reveal());
        assert!(Token::new(None, false).unwrap().is_none(), "loopback without a file: no token");
    }

    #[test]
    fn non_loopback_needs_the_flag() {
        let e = bind("0.0.0.0".parse().unwrap(), 0, false).unwrap_err();
        assert_eq!(e.code, "invalid_argument");
        assert!(e.message.contains("--allow-remote"), "{}", e.message);
    }
}
