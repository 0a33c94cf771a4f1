//! The core's rules through its public API, as one test binary (one link instead of one per file):
//! the shared vectors, the properties and fuzz replays, the catalog, templates and tracking.

#[path = "../../fuzz/checks.rs"]
mod checks;
#[path = "../common/mod.rs"]
mod common;

mod catalog;
mod error_codes;
mod fuzz_findings;
mod fuzz_regressions;
mod proptest_pager;
mod proptest_sanitize;
mod proptest_tracking;
mod soak_findings;
mod templates;
mod tracking_delivery;
mod tracking_events;
mod tracking_vectors;
mod vectors;
