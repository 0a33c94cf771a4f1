//! Replays every committed fuzz input through the fuzz targets' own checks, under plain
//! `cargo test` (no fuzz toolchain): the seed corpus in `core/fuzz/seeds/<target>/` and every
//! crash reproducer in `core/fuzz/regressions/<target>/` (see `core/fuzz/README.md`).

#[allow(dead_code)]
use crate::checks;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        for entry in entries {
            let path = entry.expect("a readable directory").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no committed inputs for fuzz target {target}");
    let mut failures = Vec::new();
    for path in &files {
        let data = std::fs::read(path).expect("a readable input");
        if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
            failures.push(path.display().to_string());
        }
    }
    assert!(
        failures.is_empty(),
        "{target}: {} of {} inputs fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn page() {
    replay("page", checks::check_page);
}

#[test]
fn pager_sequence() {
    replay("pager_sequence", checks::check_pager_sequence);
}

#[test]
fn sanitize() {
    replay("sanitize", checks::check_sanitize);
}

#[test]
fn uri_template() {
    replay("uri_template", checks::check_uri_template);
}

#[test]
fn template() {
    replay("template", checks::check_template_ops);
}

#[test]
fn tracking_event() {
    replay("tracking_event", checks::check_tracking_event);
}

#[test]
fn proxy_sequence() {
    replay("proxy_sequence", checks::check_proxy_sequence);
}

#[test]
fn complete_answer() {
    replay("complete_answer", checks::check_complete_answer);
}
