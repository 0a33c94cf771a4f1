//! Properties of the sanitizer and the RFC 6570 checker (the fuzz targets `sanitize` and
//! `uri_template` check the same ones; the checkers live in `core/fuzz/checks.rs`).
//!
//! - `label`/`text` output holds no forbidden code point (no control in labels; only `\n` and
//!   `\t` in text), is at most 2,048 characters, is valid UTF-8, and sanitizing it again changes
//!   nothing; a clean string comes back unchanged.
//! - `check_uri_template` never panics and agrees with an independent reference grammar, problem
//!   for problem; every template built from the grammar is accepted.
//!
//! Case counts are modest (256); `PROPTEST_CASES=10000 cargo test --test proptest_sanitize` digs
//! deeper.

#[allow(dead_code)]
use crate::checks;

use proptest::collection::vec;
use proptest::prelude::*;

/// Characters sanitizing cares about, mixed with arbitrary ones.
fn interesting_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => proptest::sample::select(vec![
            '\u{1B}', '[', ']', '\u{07}', '\n', '\t', '\r', '\u{0}', '\u{7F}', '\u{85}', '\u{90}', '\u{9B}', '\u{9C}',
            '\u{9D}', '\u{9F}', '\u{061C}', '\u{200B}', '\u{200E}', '\u{202E}', '\u{2060}', '\u{2066}', '\u{FEFF}',
            '\u{E0041}', '\u{E0100}', '\u{FDD0}', '\u{FFFE}', '\u{1FFFF}', '\u{FFFD}', '\u{FE0F}', 'é', '😀', '…',
            '\\', 'P', 'X', '^', '_', '(', 'B', 'm', ';', '1',
        ]),
        2 => any::<char>(),
        2 => proptest::char::range('a', 'z'),
    ]
}

fn interesting_string(max: usize) -> impl Strategy<Value = String> {
    vec(interesting_char(), 0..max).prop_map(String::from_iter)
}

/// A string around the 2,048-character cap, with a sequence to strip near the cut.
fn around_the_cap() -> impl Strategy<Value = String> {
    (2000usize..2100, interesting_string(12), proptest::char::range('a', 'z'), any::<bool>()).prop_map(
        |(n, tail, fill, wide)| {
            let fill = if wide { 'é' } else { fill };
            let mut s: String = std::iter::repeat_n(fill, n).collect();
            s.push_str(&tail);
            s
        },
    )
}

/// A syntactically valid RFC 6570 template (levels 1–4), built from the grammar.
fn valid_template() -> impl Strategy<Value = String> {
    let literal = prop_oneof![
        proptest::string::string_regex("[a-zA-Z0-9:/._~!$&()*+,;=@?#\\[\\]-]{1,8}").expect("regex"),
        Just("%41".to_owned()),
        Just("é".to_owned()),
        Just("\u{E000}".to_owned()),
    ];
    let varname = proptest::string::string_regex("[a-zA-Z0-9_]{1,4}(\\.[a-zA-Z0-9_]{1,3}){0,2}").expect("regex");
    let modifier = prop_oneof![Just(String::new()), Just("*".to_owned()), (1u32..=9999).prop_map(|n| format!(":{n}"))];
    let varspec = (varname, modifier).prop_map(|(n, m)| n + &m);
    let operator = proptest::sample::select(vec!["", "+", "#", ".", "/", ";", "?", "&"]);
    let expression = (operator, vec(varspec, 1..4)).prop_map(|(op, vars)| format!("{{{op}{}}}", vars.join(",")));
    vec(prop_oneof![literal, expression], 0..6).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]

    #[test]
    fn sanitizer_properties_on_any_string(s in any::<String>()) {
        checks::check_sanitized(&s);
    }

    #[test]
    fn sanitizer_properties_on_escapes_and_invisibles(s in interesting_string(64)) {
        checks::check_sanitized(&s);
    }

    #[test]
    fn sanitizer_properties_around_the_cap(s in around_the_cap()) {
        checks::check_sanitized(&s);
    }

    #[test]
    fn sanitizer_properties_on_arbitrary_bytes(data in vec(any::<u8>(), 0..256)) {
        checks::check_sanitize(&data);
    }

    #[test]
    fn template_checker_agrees_with_the_reference_on_any_string(s in any::<String>()) {
        checks::check_template(&s);
    }

    #[test]
    fn template_checker_agrees_with_the_reference_on_template_pieces(
        pieces in vec(proptest::sample::select(checks::TEMPLATE_PIECES.to_vec()), 0..16)
    ) {
        checks::check_template(&pieces.concat());
    }

    #[test]
    fn templates_from_the_grammar_are_accepted(t in valid_template()) {
        prop_assert_eq!(mcplens::template::check_uri_template(&t), Ok(()), "{:?}", t);
        checks::check_template(&t);
    }
}
