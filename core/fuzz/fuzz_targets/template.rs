//! Fuzz target `template`: see `checks::check_template_ops` for the properties.
#![no_main]

#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_template_ops(data));
