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

use std::net::{IpAddr, SocketAddr, TcpListener};
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
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let snap = snapshot.lock().map(|s| s.clone()).ok();
                    async move { Ok::<_, std::convert::Infallible>(respond(&req, snap, loopback)) }
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

fn respond<B>(req: &Request<B>, snap: Option<Snapshot>, loopback: bool) -> Response<Full<Bytes>> {
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
    fn non_loopback_needs_the_flag() {
        let e = bind("0.0.0.0".parse().unwrap(), 0, false).unwrap_err();
        assert_eq!(e.code, "invalid_argument");
        assert!(e.message.contains("--allow-remote"), "{}", e.message);
    }
}
