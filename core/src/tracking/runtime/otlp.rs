//! The OTLP/HTTP exporters: the encoded requests ([`pipeline::otlp`](crate::tracking::pipeline::otlp))
//! POSTed as protobuf.

use std::time::SystemTime;

use prost::Message;

use super::http::Poster;
use crate::tracking::pipeline::config::OtlpConfig;
use crate::tracking::pipeline::export::{Batch, Exporter};
use crate::tracking::pipeline::ids::unix_nanos;
use crate::tracking::pipeline::otlp::{metrics_request, traces_request};
use crate::tracking::{ExportError, TrackingError};

/// Sends spans to `{endpoint}/v1/traces`.
#[derive(Debug)]
pub struct OtlpTracesExporter {
    config: OtlpConfig,
    url: String,
    poster: Poster,
    buf: Vec<u8>,
}

impl OtlpTracesExporter {
    /// An exporter for this configuration (the URL is checked now).
    pub fn new(config: OtlpConfig) -> Result<OtlpTracesExporter, TrackingError> {
        config.check("")?;
        let url = config.url("traces");
        Ok(OtlpTracesExporter { poster: Poster::new(config.timeout), url, config, buf: Vec::new() })
    }
}

impl Exporter for OtlpTracesExporter {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        let req = traces_request(&self.config, batch);
        self.buf.clear();
        req.encode(&mut self.buf).map_err(|_| ExportError::permanent("protobuf encoding failed", 0))?;
        self.poster.post(&self.url, "application/x-protobuf", &self.config.headers, &self.buf, 0)
    }
}

/// Sends the duration histogram to `{endpoint}/v1/metrics` (delta temporality, one request per batch).
#[derive(Debug)]
pub struct OtlpMetricsExporter {
    config: OtlpConfig,
    url: String,
    poster: Poster,
    last_end: Option<u64>,
    buf: Vec<u8>,
}

impl OtlpMetricsExporter {
    /// An exporter for this configuration (the URL is checked now).
    pub fn new(config: OtlpConfig) -> Result<OtlpMetricsExporter, TrackingError> {
        config.check("")?;
        let url = config.url("metrics");
        Ok(OtlpMetricsExporter { poster: Poster::new(config.timeout), url, config, last_end: None, buf: Vec::new() })
    }
}

impl Exporter for OtlpMetricsExporter {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        let now = unix_nanos(SystemTime::now());
        let earliest = batch.items().iter().map(|i| i.started_unix_nanos).min().unwrap_or(now);
        let start = self.last_end.unwrap_or(earliest).min(earliest);
        let now = now.max(start);
        let req = metrics_request(&self.config, batch, start, now);
        self.buf.clear();
        req.encode(&mut self.buf).map_err(|_| ExportError::permanent("protobuf encoding failed", 0))?;
        self.poster.post(&self.url, "application/x-protobuf", &self.config.headers, &self.buf, 0)?;
        self.last_end = Some(now);
        Ok(())
    }
}
