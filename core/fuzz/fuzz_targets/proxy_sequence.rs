//! Fuzz target `proxy_sequence`: see `checks::check_proxy_sequence` for the properties.
#![no_main]

#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_proxy_sequence(data));
