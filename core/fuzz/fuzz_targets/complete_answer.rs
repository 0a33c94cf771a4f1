//! Fuzz target `complete_answer`: see `checks::check_complete_answer` for the properties.
#![no_main]

#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_complete_answer(data));
