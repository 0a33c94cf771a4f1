//! Blocking HTTP for the exporters (ureq; one agent with a keep-alive pool per exporter).

use std::time::{Duration, SystemTime};

use crate::tracking::ExportError;

/// An HTTP poster.
#[derive(Debug, Clone)]
pub(crate) struct Poster {
    agent: ureq::Agent,
}

impl Poster {
    pub fn new(timeout: Duration) -> Poster {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(format!("mcplens/{}", crate::VERSION))
            .build();
        Poster { agent: config.into() }
    }

    /// POST `body`; `Ok` on 2xx. `delivered` is what the error reports as already delivered.
    pub fn post(
        &self,
        url: &str,
        content_type: &str,
        headers: &[(String, String)],
        body: &[u8],
        delivered: usize,
    ) -> Result<(), ExportError> {
        let mut req = self.agent.post(url).header("Content-Type", content_type);
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let fail = |message: String, retryable: bool, retry_after: Option<Duration>| {
            let e = if retryable {
                ExportError::retryable(message, delivered)
            } else {
                ExportError::permanent(message, delivered)
            };
            e.with_retry_after(retry_after)
        };
        match req.send(body) {
            Ok(resp) => {
                let status = resp.status().as_u16();
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| retry_after(v, SystemTime::now()));
                // Drain the body (bounded) so the connection can be reused.
                let mut body = resp.into_body();
                let _ = body.with_config().limit(64 * 1024).read_to_vec();
                match status {
                    200..=299 => Ok(()),
                    408 | 429 | 500..=599 => Err(fail(format!("HTTP status {status}"), true, retry_after)),
                    _ => Err(fail(format!("HTTP status {status}"), false, None)),
                }
            }
            Err(e) => {
                let (message, retryable) = describe(&e);
                Err(fail(message, retryable, None))
            }
        }
    }
}

/// A `Retry-After` value (delay-seconds or an HTTP date), as a wait from `now`.
fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A message that names the failure but never the URL (which may carry credentials).
fn describe(e: &ureq::Error) -> (String, bool) {
    match e {
        ureq::Error::Io(io) => (format!("I/O error: {}", io.kind()), true),
        ureq::Error::Timeout(t) => (format!("timed out ({t:?})"), true),
        ureq::Error::HostNotFound => ("host not found".to_owned(), true),
        ureq::Error::ConnectionFailed => ("connection failed".to_owned(), true),
        ureq::Error::BadUri(_) => ("invalid endpoint URL".to_owned(), false),
        ureq::Error::Protocol(_) => ("HTTP protocol error".to_owned(), true),
        ureq::Error::StatusCode(s) => (format!("HTTP status {s}"), *s >= 500 || *s == 429 || *s == 408),
        _ => ("HTTP request failed".to_owned(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2026 07:28:00 GMT").unwrap();
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(retry_after("Wed, 21 Oct 2026 07:28:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(retry_after("Wed, 21 Oct 2026 07:27:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-5", now), None);
    }
}
