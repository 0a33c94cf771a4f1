//! Fuzz target `tracking_event`: see `checks::check_tracking_event` for the properties.
#![no_main]

#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_tracking_event(data));
