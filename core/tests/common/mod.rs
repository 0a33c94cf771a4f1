//! Test helpers: a loopback HTTP/1.1 receiver (std only) that records every request.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

/// One received request.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
}

/// A loopback receiver on 127.0.0.1. `status` is what it answers (200 by default); set it to 503
/// to simulate an outage that still accepts connections.
pub struct Receiver {
    pub addr: SocketAddr,
    state: Arc<(Mutex<State>, Condvar)>,
    status: Arc<AtomicU16>,
    stop: Arc<AtomicBool>,
}

impl Receiver {
    /// Listen on a free port.
    pub fn start() -> Receiver {
        Receiver::start_on(TcpListener::bind("127.0.0.1:0").expect("bind"))
    }

    /// Listen on this address (e.g. one that was down before).
    pub fn start_at(addr: SocketAddr) -> Receiver {
        Receiver::start_on(TcpListener::bind(addr).expect("bind again"))
    }

    fn start_on(listener: TcpListener) -> Receiver {
        let addr = listener.local_addr().unwrap();
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let status = Arc::new(AtomicU16::new(200));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let state = state.clone();
            let status = status.clone();
            let stop = stop.clone();
            thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let state = state.clone();
                    let status = status.clone();
                    thread::spawn(move || serve(conn, state, status));
                }
            });
        }
        Receiver { addr, state, status, stop }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set_status(&self, status: u16) {
        self.status.store(status, Ordering::Release);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.0.lock().unwrap().received.clone()
    }

    /// Stop accepting (connections already open are served until the client closes them).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(self.addr);
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(conn: TcpStream, state: Arc<(Mutex<State>, Condvar)>, status: Arc<AtomicU16>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_owned();
        let path = parts.next().unwrap_or("").to_owned();
        let mut headers = Vec::new();
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.parse().unwrap_or(0);
                }
                headers.push((k, v));
            }
        }
        let mut body = vec![0u8; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let code = status.load(Ordering::Acquire);
        if code == 200 {
            let (m, cv) = &*state;
            m.lock().unwrap().received.push(Received { method, path, headers, body });
            cv.notify_all();
        }
        let reason = if code == 200 { "OK" } else { "Service Unavailable" };
        let resp =
            format!("HTTP/1.1 {code} {reason}\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{{}}");
        if writer.write_all(resp.as_bytes()).is_err() {
            return;
        }
    }
}

/// A free port on 127.0.0.1 with nothing listening (connections are refused).
pub fn dead_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// A temporary directory removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::AtomicU64;
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "mcplens-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
