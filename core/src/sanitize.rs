//! Untrusted text → safe text, and the RFC 6570 URI-template check.
//!
//! Every server string except the URI / URI template is untrusted: it is shown to a model and to
//! people. [`label`] (names, titles, MIME types) and [`text`] (descriptions) remove:
//!
//! - C0 and C1 controls (descriptions keep `\n` and `\t`; labels turn any run of controls into one
//!   space),
//! - ANSI/VT escape sequences, whole (CSI, OSC, DCS/SOS/PM/APC strings, two- and three-character
//!   escapes, and their 8-bit C1 forms),
//! - bidi controls (U+061C, U+200E/F, U+202A–202E, U+2066–2069),
//! - zero-width characters (U+200B–200D, U+2060, U+FEFF),
//! - tag characters (U+E0000–E007F) and the variation-selector supplement (U+E0100–E01EF),
//! - noncharacters (U+FDD0–FDEF and U+xFFFE/U+xFFFF in every plane),
//!
//! then cap the result at [`MAX_CHARS`] Unicode scalar values, cut on a char boundary and ending in
//! `…` when cut. Sanitizing is idempotent: sanitizing its own output changes nothing.
//!
//! Lone surrogates cannot occur in a Rust `str`; the discovery parser turns a `\uD800`-style escape
//! into U+FFFD before text reaches this module.
//!
//! URI templates are never changed: the template module's `check_uri_template` accepts or rejects
//! them whole, with [`check_uri_chars`] for the character rules.

use std::borrow::Cow;

/// The cap on a sanitized string, and on a URI template, in Unicode scalar values.
pub const MAX_CHARS: usize = 2048;

/// The mark that ends a string cut at [`MAX_CHARS`].
pub const ELLIPSIS: char = '…';

/// Sanitizes a single-line label: a name, title or MIME type. Any run of control characters
/// (including `\n` and `\t`) becomes one space.
#[inline]
pub fn label(s: &str) -> Cow<'_, str> {
    sanitize(s, Mode::Label)
}

/// Sanitizes free text: a description. `\n` and `\t` are kept; other controls are removed.
#[inline]
pub fn text(s: &str) -> Cow<'_, str> {
    sanitize(s, Mode::Text)
}

/// Sanitizes a resource's text content as [`text`] does, without the [`MAX_CHARS`] cap: the
/// read tool caps its whole output instead.
pub fn content(s: &str) -> Cow<'_, str> {
    if may_change(s.as_bytes(), Mode::Text) {
        let out = clean(s, Mode::Text);
        if out != s {
            return Cow::Owned(out);
        }
    }
    Cow::Borrowed(s)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Label,
    Text,
}

/// True when a byte can start a character that sanitizing may change. Every forbidden character
/// starts with a byte below 0x20, 0x7F, or one of the lead bytes C2 (U+0080–00BF), D8 (U+061C),
/// E2 (U+2000–2FFF), EF (U+F000–FFFF) or F0–F4 (planes 1–16). Lead bytes never occur as
/// continuation bytes, so a clean scan proves the string clean.
#[inline(always)]
fn candidate(b: u8) -> bool {
    // Non-short-circuit `|` keeps this branch-free, so the chunked scan below vectorises.
    (b < 0x20) | (b == 0x7F) | (b == 0xC2) | (b == 0xD8) | (b == 0xE2) | (b == 0xEF) | (b >= 0xF0)
}

/// In free text `\n` and `\t` are kept, so they are no candidates there.
#[inline(always)]
fn text_candidate(b: u8) -> bool {
    candidate(b) & (b != b'\n') & (b != b'\t')
}

/// True when sanitizing may change the bytes. Printable ASCII, the common case, is settled by one
/// branch-free pass that vectorises to a few instructions per 16 bytes; other text goes on to the
/// candidate scan.
fn may_change(bytes: &[u8], mode: Mode) -> bool {
    any_outside(bytes, 0x20, 0x7E)
        && match mode {
            Mode::Label => has_candidate(bytes, candidate),
            Mode::Text => has_candidate(bytes, text_candidate),
        }
}

/// True when a byte of `bytes` is outside `lo..=hi` (`1 <= lo <= hi <= 0x7E`): eight bytes at a
/// time (SWAR: a byte below `lo` borrows into its high bit, one above `hi` carries into it). In
/// instructions counted it beats the vectorised byte loop at every length this module sees: labels
/// are shorter than a vector loop's unrolled step.
#[inline(always)]
fn any_outside(bytes: &[u8], lo: u8, hi: u8) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte's high bit, once masked with HIGH: set when the byte is ASCII below `lo` (`x - lo`
    // borrows; `& !x` would clear what `| x` sets anyway), above `hi` (`x + 0x7F - hi` carries), or
    // not ASCII (`x`). The mask is applied once, to what every word added.
    let outside = |x: u64| x.wrapping_sub(ONES * u64::from(lo)) | x.wrapping_add(ONES * u64::from(0x7F - hi)) | x;
    let mut chunks = bytes.chunks_exact(8);
    let mut any = 0u64;
    for c in &mut chunks {
        any |= outside(u64::from_ne_bytes(c.try_into().expect("eight bytes")));
    }
    if !chunks.remainder().is_empty() {
        any |= outside(last_word(bytes));
    }
    any & HIGH != 0
}

/// A word of `bytes`' own bytes that holds the ones past the last whole eight: the last eight
/// (overlapping, which a test for any byte does not mind), or for fewer than eight, the first and
/// the last four (or the first, middle and last byte). No copy of a variable length (a call to
/// `memcpy` costs more than the test).
#[inline(always)]
fn last_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let four = |at: usize| u64::from(u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("four bytes")));
    match n {
        8.. => u64::from_ne_bytes(bytes[n - 8..].try_into().expect("eight bytes")),
        4..=7 => four(0) | four(n - 4) << 32,
        _ => {
            u64::from_ne_bytes([bytes[0], bytes[n / 2], bytes[n - 1], bytes[0], bytes[0], bytes[0], bytes[0], bytes[0]])
        }
    }
}

/// Chunked, branch-free scan (the early-exit form does not vectorise).
#[inline(always)]
fn has_candidate(bytes: &[u8], candidate: impl Fn(u8) -> bool) -> bool {
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        let mut any = 0u8;
        for &b in chunk {
            any |= u8::from(candidate(b));
        }
        if any != 0 {
            return true;
        }
    }
    chunks.remainder().iter().fold(0u8, |acc, &b| acc | u8::from(candidate(b))) != 0
}

/// True for characters removed from every untrusted string (controls aside).
pub fn is_forbidden_invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
        || is_noncharacter(c)
}

/// Unicode noncharacters: U+FDD0–FDEF and the last two code points of every plane.
pub fn is_noncharacter(c: char) -> bool {
    let u = c as u32;
    (0xFDD0..=0xFDEF).contains(&u) || (u & 0xFFFE) == 0xFFFE
}

/// The common case inline (printable ASCII within the cap: borrowed as it is), the rest apart.
#[inline(always)]
fn sanitize(s: &str, mode: Mode) -> Cow<'_, str> {
    if s.len() <= MAX_CHARS && !any_outside(s.as_bytes(), 0x20, 0x7E) {
        return Cow::Borrowed(s);
    }
    sanitize_other(s, mode)
}

#[inline(never)]
fn sanitize_other(s: &str, mode: Mode) -> Cow<'_, str> {
    if !may_change(s.as_bytes(), mode) && (s.len() <= MAX_CHARS || s.chars().count() <= MAX_CHARS) {
        return Cow::Borrowed(s);
    }
    let out = clean(s, mode);
    let out = cap(out);
    if out == s {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(out)
    }
}

const ESC: char = '\u{1B}';
const BEL: char = '\u{07}';

fn clean(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    // For labels: a pending run of controls becomes one space at the next kept character.
    let mut pending_space = false;
    while let Some(c) = it.next() {
        match c {
            ESC => match it.peek().copied() {
                Some('[') => {
                    it.next();
                    skip_csi(&mut it);
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    it.next();
                    skip_string(&mut it);
                }
                Some('\u{20}'..='\u{2F}') => {
                    // nF escape: intermediates, then one final byte.
                    while matches!(it.peek(), Some('\u{20}'..='\u{2F}')) {
                        it.next();
                    }
                    if matches!(it.peek(), Some('\u{30}'..='\u{7E}')) {
                        it.next();
                    }
                }
                Some('\u{30}'..='\u{7E}') => {
                    it.next();
                }
                _ => {}
            },
            '\u{9B}' => skip_csi(&mut it),
            '\u{90}' | '\u{98}' | '\u{9D}' | '\u{9E}' | '\u{9F}' => skip_string(&mut it),
            '\n' | '\t' if mode == Mode::Text => {
                out.push(c);
            }
            c if c.is_control() => {
                if mode == Mode::Label {
                    pending_space = true;
                }
            }
            c if is_forbidden_invisible(c) => {}
            c => {
                if pending_space {
                    out.push(' ');
                    pending_space = false;
                }
                out.push(c);
            }
        }
    }
    if pending_space {
        out.push(' ');
    }
    out
}

/// Skips the rest of a CSI sequence: parameter bytes, intermediate bytes, one final byte.
fn skip_csi(it: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while matches!(it.peek(), Some('\u{30}'..='\u{3F}')) {
        it.next();
    }
    while matches!(it.peek(), Some('\u{20}'..='\u{2F}')) {
        it.next();
    }
    if matches!(it.peek(), Some('\u{40}'..='\u{7E}')) {
        it.next();
    }
}

/// Skips a control string (OSC, DCS, SOS, PM, APC) up to and including its terminator: BEL,
/// `ESC \` or the 8-bit ST (U+009C). An unterminated string runs to the end of the text.
fn skip_string(it: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = it.next() {
        match c {
            BEL | '\u{9C}' => return,
            ESC => {
                if it.peek() == Some(&'\\') {
                    it.next();
                }
                return;
            }
            _ => {}
        }
    }
}

fn cap(s: String) -> String {
    if s.len() <= MAX_CHARS {
        return s;
    }
    match s.char_indices().nth(MAX_CHARS) {
        None => s,
        Some(_) => {
            let (cut, _) = s.char_indices().nth(MAX_CHARS - 1).expect("over the cap");
            let mut out = String::with_capacity(cut + ELLIPSIS.len_utf8());
            out.push_str(&s[..cut]);
            out.push(ELLIPSIS);
            out
        }
    }
}

/// Why a URI template was refused: discovery drops and counts the item; the template module returns
/// it in its `InvalidTemplate` error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateProblem {
    /// Over [`MAX_CHARS`] characters.
    TooLong,
    /// Holds a control, whitespace, bidi, zero-width or other invisible character.
    ForbiddenChar,
    /// Not valid RFC 6570 (levels 1–4) syntax.
    Syntax,
}

/// A character no URI or URI template may hold: a control, whitespace, a bidi/zero-width/invisible
/// character, or U+FFFD (the mark of a lost encoding).
pub(crate) fn forbidden_in_uri(c: char) -> bool {
    c.is_control() || c.is_whitespace() || is_forbidden_invisible(c) || c == '\u{FFFD}'
}

/// The character rules shared by URIs and URI templates: at most [`MAX_CHARS`] characters, none
/// [`forbidden_in_uri`].
pub fn check_uri_chars(t: &str) -> Result<(), TemplateProblem> {
    // Printable ASCII without the space (0x21..=0x7E), the common case, breaks none of the rules:
    // one branch-free pass that vectorises; other text goes on to the character check.
    if t.len() <= MAX_CHARS && !any_outside(t.as_bytes(), 0x21, 0x7E) {
        return Ok(());
    }
    if t.len() > MAX_CHARS && t.chars().count() > MAX_CHARS {
        return Err(TemplateProblem::TooLong);
    }
    if t.chars().any(forbidden_in_uri) {
        return Err(TemplateProblem::ForbiddenChar);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_outside_finds_every_byte_outside_its_range_at_every_position() {
        for (lo, hi) in [(0x20, 0x7E), (0x21, 0x7E)] {
            for len in (1..=20).chain([63, 64, 65, 200]) {
                for pos in 0..len {
                    for b in 0..=255u8 {
                        let mut bytes = vec![b'a'; len];
                        bytes[pos] = b;
                        assert_eq!(
                            any_outside(&bytes, lo, hi),
                            !(lo..=hi).contains(&b),
                            "{lo:#x}..={hi:#x} {len} {pos} {b:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(label("hello world"), Cow::Borrowed(_)));
        assert!(matches!(text("a\nb\tc é ✓ 😀"), Cow::Borrowed(_)));
    }

    #[test]
    fn labels_collapse_control_runs_to_one_space() {
        assert_eq!(label("a\n\r\tb"), "a b");
        assert_eq!(label("a\u{85}b"), "a b");
        assert_eq!(text("a\r\nb\u{0}c"), "a\nbc");
    }

    #[test]
    fn escapes_are_removed_whole() {
        assert_eq!(text("x\u{1b}[31;1mred\u{1b}[0m"), "xred");
        assert_eq!(text("x\u{1b}]8;;http://e\u{7}link\u{1b}]8;;\u{1b}\\"), "xlink");
        assert_eq!(text("\u{9b}2Jclear"), "clear");
        assert_eq!(text("a\u{1b}(Bb"), "ab");
        assert_eq!(text("a\u{1b}cb"), "ab");
    }

    #[test]
    fn invisible_characters_are_removed() {
        for c in [
            '\u{061C}',
            '\u{200B}',
            '\u{200E}',
            '\u{202E}',
            '\u{2066}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{E0041}',
            '\u{E0100}',
            '\u{FDD0}',
            '\u{1FFFF}',
        ] {
            let s = format!("a{c}b");
            assert_eq!(label(&s), "ab", "{:04X}", c as u32);
        }
        assert_eq!(label("😀\u{FE0F}"), "😀\u{FE0F}", "basic variation selectors stay");
    }

    #[test]
    fn cap_cuts_on_char_boundary_with_ellipsis_and_is_idempotent() {
        let ascii = "a".repeat(3000);
        let out = label(&ascii);
        assert_eq!(out.chars().count(), MAX_CHARS);
        assert!(out.ends_with(ELLIPSIS));
        assert_eq!(label(&out), out);
        let multi = "é".repeat(2048);
        assert!(matches!(label(&multi), Cow::Borrowed(_)));
        let multi = "é".repeat(2049);
        assert_eq!(label(&multi).chars().count(), MAX_CHARS);
    }

    #[test]
    fn every_scalar_value_agrees_with_the_candidate_scan() {
        // A character that sanitizing changes must start with a candidate byte.
        for u in 0..=0x10FFFFu32 {
            let Some(c) = char::from_u32(u) else { continue };
            if c.is_control() || is_forbidden_invisible(c) {
                let mut buf = [0u8; 4];
                let b = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(candidate(b), "U+{u:04X} escapes the scan");
            }
        }
    }

    #[test]
    fn the_ascii_fast_path_of_the_uri_character_check_agrees_with_the_character_rule() {
        for b in 0u8..=0x7F {
            let c = char::from(b);
            let rule = !(c.is_control() || c.is_whitespace());
            for s in [format!("{c}"), format!("file:///{c}/x"), format!("{}{c}", "a".repeat(40))] {
                assert_eq!(check_uri_chars(&s).is_ok(), rule, "byte {b:#04x} in {s:?}");
            }
        }
        assert_eq!(check_uri_chars(&"a".repeat(MAX_CHARS)), Ok(()));
        assert_eq!(check_uri_chars(&"a".repeat(MAX_CHARS + 1)), Err(TemplateProblem::TooLong));
    }
}
