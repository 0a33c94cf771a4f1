//! The TCP leg of `--url`: straight to the server, or through the HTTP proxy the environment
//! names, as reqwest (the CLI's client before) and curl read it: `HTTPS_PROXY`, `HTTP_PROXY`,
//! `ALL_PROXY` (or lower case) and `NO_PROXY` (hyper-util's matcher, the one reqwest uses;
//! `HTTP_PROXY` is ignored under CGI, when `REQUEST_METHOD` is set). The platform's proxy settings
//! are not read (on macOS they need the SystemConfiguration framework).
//!
//! An https:// destination goes through an HTTP `CONNECT` tunnel (TLS then runs end to end,
//! above this layer); an http:// one is sent to the proxy in absolute form, with the proxy's
//! credentials from its URL (`http://user:pass@proxy:3128`) as `Proxy-Authorization`. Only
//! http:// proxies are supported: a `socks5://` or `https://` proxy URL fails the connection
//! with a message saying so.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Uri;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_service::Service;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Connects to a destination directly or through the environment's proxy.
#[derive(Clone)]
pub struct Route {
    tcp: HttpConnector,
    proxies: Arc<Matcher>,
}

impl Route {
    /// `tcp` connects; `proxies` says which destinations go through which proxy.
    pub fn new(tcp: HttpConnector, proxies: Arc<Matcher>) -> Route {
        Route { tcp, proxies }
    }
}

impl Service<Uri> for Route {
    type Response = Tcp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Tcp, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(())) // HttpConnector is always ready
    }

    fn call(&mut self, destination: Uri) -> Self::Future {
        let mut tcp = self.tcp.clone();
        let proxy = self.proxies.intercept(&destination);
        Box::pin(async move {
            let Some(proxy) = proxy else {
                return Ok(Tcp { io: tcp.call(destination).await?, proxied: false });
            };
            if proxy.uri().scheme_str() != Some("http") {
                let scheme = proxy.uri().scheme_str().unwrap_or("none");
                return Err(format!("proxy scheme \"{scheme}\" is not supported (only http:// proxies)").into());
            }
            if destination.scheme_str() == Some("https") {
                let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                Ok(Tcp { io: tunnel.call(destination).await?, proxied: false })
            } else {
                Ok(Tcp { io: tcp.call(proxy.uri().clone()).await?, proxied: true })
            }
        })
    }
}

/// A TCP connection; `proxied` when it is to a proxy that takes absolute-form requests.
pub struct Tcp {
    io: TokioIo<TcpStream>,
    proxied: bool,
}

impl Connection for Tcp {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.proxied)
    }
}

impl hyper::rt::Read for Tcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Tcp {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}
