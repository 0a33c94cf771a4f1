//! The JSONL file exporter (the default): one event per line, appended, with size-based rotation.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::tracking::pipeline::config::JsonlConfig;
use crate::tracking::pipeline::export::{Batch, Exporter};
use crate::tracking::{ExportError, TrackingError};

/// Lines are grouped into `write` calls of at most this many bytes; a line is never split across
/// two calls (a longer line is written alone), so appends from several writers never interleave
/// within a line.
pub const WRITE_CHUNK: usize = 64 * 1024;

/// Appends events to a file as JSON lines.
#[derive(Debug)]
pub struct JsonlExporter {
    config: JsonlConfig,
    file: File,
    size: u64,
    buf: Vec<u8>,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> TrackingError {
    TrackingError::Io { what: format!("{what} {}", path.display()), source: e }
}

fn open_append(path: &Path) -> Result<(File, u64), TrackingError> {
    let file = OpenOptions::new().create(true).append(true).open(path).map_err(|e| io_err("opening", path, e))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok((file, size))
}

impl JsonlExporter {
    /// Open (create) the file now, so that a bad path fails when the tracker is built.
    pub fn open(config: JsonlConfig) -> Result<JsonlExporter, TrackingError> {
        let (file, size) = open_append(&config.path)?;
        Ok(JsonlExporter { config, file, size, buf: Vec::with_capacity(WRITE_CHUNK) })
    }

    fn rotated(&self, n: u32) -> PathBuf {
        let mut s = self.config.path.clone().into_os_string();
        s.push(format!(".{n}"));
        PathBuf::from(s)
    }

    /// Whether our handle still points at `path` (another writer may have rotated it).
    #[cfg(unix)]
    fn same_file(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(&self.config.path), self.file.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn same_file(&self) -> bool {
        fs::metadata(&self.config.path).is_ok()
    }

    fn rotate_if_needed(&mut self, incoming: usize) -> Result<(), TrackingError> {
        // A file moved or deleted under us (logrotate, a cleanup job): write to the path again,
        // rotation or not (one `stat` per batch).
        if !self.same_file() {
            (self.file, self.size) = open_append(&self.config.path)?;
        }
        let max = self.config.max_file_bytes;
        if max == 0 {
            return Ok(());
        }
        if self.size == 0 || self.size + incoming as u64 <= max {
            return Ok(());
        }
        // Re-read the size: another writer may have rotated or written meanwhile.
        self.size = fs::metadata(&self.config.path).map(|m| m.len()).unwrap_or(0);
        if self.size == 0 || self.size + incoming as u64 <= max {
            return Ok(());
        }
        let path = self.config.path.clone();
        if self.config.max_files == 0 {
            let _ = fs::remove_file(&path);
        } else {
            for n in (1..self.config.max_files).rev() {
                let from = self.rotated(n);
                if from.exists() {
                    let _ = fs::rename(&from, self.rotated(n + 1));
                }
            }
            fs::rename(&path, self.rotated(1)).map_err(|e| io_err("rotating", &path, e))?;
        }
        (self.file, self.size) = open_append(&path)?;
        Ok(())
    }

    fn write_buf(&mut self, delivered: usize) -> Result<(), ExportError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let fail = |e: TrackingError| ExportError::retryable(e.to_string(), delivered);
        self.rotate_if_needed(self.buf.len()).map_err(fail)?;
        self.file.write_all(&self.buf).map_err(|e| fail(io_err("writing", &self.config.path, e)))?;
        self.size += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl Exporter for JsonlExporter {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        self.buf.clear();
        let mut delivered = 0;
        let mut in_buf = 0;
        for line in batch.json_lines() {
            if !self.buf.is_empty() && self.buf.len() + line.len() + 1 > WRITE_CHUNK {
                self.write_buf(delivered)?;
                delivered += in_buf;
                in_buf = 0;
            }
            self.buf.extend_from_slice(line.as_bytes());
            self.buf.push(b'\n');
            in_buf += 1;
        }
        self.write_buf(delivered)?;
        Ok(())
    }

    fn shutdown(&mut self) {
        let _ = self.file.flush();
    }
}
