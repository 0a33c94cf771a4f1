//! Fuzz target `pager_sequence`: see `checks::check_pager_sequence` for the properties.
#![no_main]

#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_pager_sequence(data));
