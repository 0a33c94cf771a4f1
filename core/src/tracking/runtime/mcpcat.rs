//! The MCPcat-compatible exporter: each event's request body
//! ([`pipeline::mcpcat`](crate::tracking::pipeline::mcpcat)) POSTed as JSON.

use super::http::Poster;
use crate::tracking::pipeline::config::McpcatConfig;
use crate::tracking::pipeline::event::Method;
use crate::tracking::pipeline::export::{Batch, Exporter};
use crate::tracking::pipeline::mcpcat::{body, ACCEPTED_EVENT_TYPES};
use crate::tracking::{ExportError, TrackingError};

/// Publishes each event to the agentcat-compatible API.
#[derive(Debug)]
pub struct McpcatExporter {
    config: McpcatConfig,
    url: String,
    headers: Vec<(String, String)>,
    poster: Poster,
    buf: Vec<u8>,
}

impl McpcatExporter {
    /// An exporter for this configuration (the options are checked now).
    pub fn new(config: McpcatConfig) -> Result<McpcatExporter, TrackingError> {
        config.check("")?;
        let mut headers = Vec::new();
        if let Some(k) = &config.api_key {
            headers.push(("Authorization".to_owned(), format!("Token {k}")));
        }
        Ok(McpcatExporter { url: config.url(), poster: Poster::new(config.timeout), headers, config, buf: Vec::new() })
    }
}

impl Exporter for McpcatExporter {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        for (i, item) in batch.items().iter().enumerate() {
            self.buf.clear();
            serde_json::to_writer(&mut self.buf, &body(&self.config, item))
                .map_err(|_| ExportError::permanent("JSON encoding failed", i))?;
            self.poster.post(&self.url, "application/json", &self.headers, &self.buf, i)?;
        }
        Ok(())
    }

    fn accepts(&self, method: &Method) -> bool {
        ACCEPTED_EVENT_TYPES.contains(&method.event_type().as_ref())
    }

    fn needs_tokens(&self) -> bool {
        true
    }
}
