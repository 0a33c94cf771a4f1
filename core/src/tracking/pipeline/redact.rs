//! Built-in redaction (pure): secrets in object keys, URIs, header lines, auth schemes, JWTs and
//! common API-key shapes are replaced with [`REDACTED`]. Runs on the worker, before the user's hooks.
//!
//! Rules (each has tests below and in `core/tests/tracking_redaction.rs`):
//! - **Keys.** A string value (or the strings of an array value) under a key that names a secret is
//!   replaced whole. Keys are compared lowercased with `-` and `_` removed: `authorization`,
//!   `proxyauthorization`, `cookie`, `setcookie`, `xapikey`, `apikey`, `token`, `secret`,
//!   `password`, `passwd`, `pwd`, `passphrase`, `privatekey`, `clientsecret`, `credential(s)`, and any key
//!   ending in `token`, `secret`, `password`, `apikey`, `accesskey`, `privatekey` or `passphrase`.
//! - **URIs** (`scheme://…`, anywhere in a string): the userinfo (`user:pass@`) and the values of
//!   secret query or fragment parameters (`token`, `access_token`, `key`, `api_key`, `sig`,
//!   `signature`, `secret`, `password`, `auth`, `X-Amz-Signature`, … and names ending in `token`,
//!   `secret`, `password`, `signature`, `key`).
//! - **Header lines** in text: the value after `Authorization:`, `Proxy-Authorization:`, `Cookie:`,
//!   `Set-Cookie:`, `X-Api-Key:`, `X-Auth-Token:` up to the end of the line.
//! - **Auth schemes**: the credential after `Bearer ` or `Basic ` (8 or more token characters).
//! - **JWTs**: `eyJ…` `.` `…` `.` `…` (three base64url segments).
//! - **API-key shapes**: `sk-…`, `sk_live_…`/`sk_test_…`/`rk_live_…`, `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_…`,
//!   `github_pat_…`, `glpat-…`, `xoxb-`/`xoxp-`/`xoxa-`/`xoxr-`/`xoxs-`/`xapp-…`, `AKIA…`/`ASIA…`,
//!   `AIza…`, `npm_…`, `hf_…`, `pypi-…`, each with a minimum length so ordinary words survive.

use std::borrow::Cow;

use serde_json::Value;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// `key` lowercased without `-` and `_`, in a stack buffer (keys over 64 bytes never match).
fn normalize_key(key: &str, buf: &mut [u8; 64]) -> Option<usize> {
    let mut n = 0;
    for b in key.bytes() {
        if b == b'-' || b == b'_' {
            continue;
        }
        *buf.get_mut(n)? = b.to_ascii_lowercase();
        n += 1;
    }
    Some(n)
}

/// The last two bytes of `key` lowercased, skipping `-` and `_`.
fn last_two(key: &str) -> Option<(u8, u8)> {
    let mut it = key.bytes().rev().filter(|&b| b != b'-' && b != b'_').map(|b| b.to_ascii_lowercase());
    let last = it.next()?;
    Some((it.next()?, last))
}

/// Whether an object key names a secret (see the module docs).
pub fn is_sensitive_key(key: &str) -> bool {
    // Every secret name (exact or suffix) ends in one of these pairs: most keys stop here.
    if !matches!(
        last_two(key),
        Some(
            (b'o', b'n')
                | (b'e', b'n')
                | (b'i', b'e')
                | (b's', b'e')
                | (b'e', b'y')
                | (b'e', b't')
                | (b'r', b'd')
                | (b'w', b'd')
                | (b'a', b'l')
                | (b'l', b's')
        )
    ) {
        return false;
    }
    let mut buf = [0u8; 64];
    let Some(n) = normalize_key(key, &mut buf) else { return false };
    let Ok(k) = std::str::from_utf8(&buf[..n]) else { return false };
    const EXACT: &[&str] = &[
        "authorization",
        "proxyauthorization",
        "cookie",
        "setcookie",
        "xapikey",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "privatekey",
        "clientsecret",
        "credential",
        "credentials",
    ];
    const SUFFIX: &[&str] = &["token", "secret", "password", "apikey", "accesskey", "privatekey", "passphrase"];
    EXACT.contains(&k) || SUFFIX.iter().any(|s| k.ends_with(s))
}

/// Whether a URI query/fragment parameter name carries a secret.
pub fn is_secret_param(name: &str) -> bool {
    let mut buf = [0u8; 64];
    let Some(n) = normalize_key(name, &mut buf) else { return false };
    let Ok(k) = std::str::from_utf8(&buf[..n]) else { return false };
    const EXACT: &[&str] = &[
        "token",
        "key",
        "apikey",
        "sig",
        "signature",
        "secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "authorization",
        "credential",
        "xamzcredential",
        "xamzsignature",
        "xamzsecuritytoken",
        "xgoogsignature",
        "xgoogcredential",
        "sessionid",
    ];
    const SUFFIX: &[&str] = &["token", "secret", "password", "signature", "key"];
    EXACT.contains(&k)
        || SUFFIX.iter().any(|s| k.ends_with(s) && (k.len() == s.len() || name_has_separator_before(name, s.len())))
}

/// For suffix matches on parameter names: `api_key`, `access-token`, `accessToken`, but not
/// `monkey`: the suffix must start after a `_`/`-` or at a lower→upper case change.
fn name_has_separator_before(name: &str, suffix_len: usize) -> bool {
    let b = name.as_bytes();
    // Find where the suffix starts in the original name, skipping separators from the end.
    let mut letters = 0;
    let mut i = b.len();
    while i > 0 && letters < suffix_len {
        i -= 1;
        if b[i] != b'-' && b[i] != b'_' {
            letters += 1;
        }
    }
    if i == 0 {
        return true;
    }
    let prev = b[i - 1];
    prev == b'-' || prev == b'_' || (prev.is_ascii_lowercase() && b[i].is_ascii_uppercase())
}

/// Apply every built-in text rule to one string.
pub fn redact_text(s: &str) -> Cow<'_, str> {
    if !might_redact(s.as_bytes()) {
        return Cow::Borrowed(s);
    }
    apply_rules(s)
}

/// Every rule in turn (what [`redact_text`] does when [`might_redact`] says a rule may apply).
fn apply_rules(s: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(s);
    if let Some(r) = redact_uris(&out) {
        out = Cow::Owned(r);
    }
    if let Some(r) = redact_header_lines(&out) {
        out = Cow::Owned(r);
    }
    if let Some(r) = redact_tokens(&out) {
        out = Cow::Owned(r);
    }
    out
}

/// Byte classes for [`might_redact`] (and the token scan): a word byte (`[A-Za-z0-9_-]`), a byte a
/// secret token can start with, `:`, and the URI bytes `@`, `?`, `#`.
const C_WORD: u8 = 1;
const C_START: u8 = 2;
const C_COLON: u8 = 4;
const C_URI: u8 = 8;
/// Where a JSON string's contents stop: `"`, `\`, control characters.
const C_STOP: u8 = 16;

/// Whether a rule could change `s`: a single pass that never says no when [`redact_text`] would
/// change something (tests check it against the full rules). It looks for
/// - a secret token at a word start (exactly as the token rule does),
/// - a header name right before a `:` (as the header rule's own first check),
/// - a `://` together with a `@`, `?` or `#` (a URI without userinfo, query or fragment is left
///   as it is).
///
/// Most strings (names, prose, ids, plain URIs) have none of these, and are then known clean in
/// one pass instead of three.
pub(crate) fn might_redact(b: &[u8]) -> bool {
    clean_until::<false>(b, 0).is_none()
}

/// [`might_redact`] for the contents of a JSON string in escape-free JSON text, starting at
/// `from` (just after its opening quote), in the same pass that finds its end: `Some(i)` when no
/// rule applies, `i` being where the contents stop (a `"`, `\`, control character or the end of
/// `b`); `None` when a rule might apply. The rules see exactly the contents: every token and URI
/// part ends at a `"`, and no header name contains one.
pub(crate) fn clean_json_string(b: &[u8], from: usize) -> Option<usize> {
    clean_until::<true>(b, from)
}

fn clean_until<const JSON: bool>(b: &[u8], from: usize) -> Option<usize> {
    let mut scheme = false;
    let mut uri_part = false;
    let mut i = from;
    while i < b.len() {
        let class = CLASS[usize::from(b[i])];
        if class & C_WORD != 0 {
            // A word start (the scan always stands at one here): the token rule's only places.
            if class & C_START != 0
                && b.len() - i >= MIN_TOKEN
                && token_pair(b[i], b[i + 1])
                && token_at(b, i).is_some()
            {
                return None;
            }
            // The rest of the word: four bytes at a time while they are all word bytes.
            i += 1;
            while let Some(w) = b.get(i..i + 4) {
                let all = CLASS[usize::from(w[0])]
                    & CLASS[usize::from(w[1])]
                    & CLASS[usize::from(w[2])]
                    & CLASS[usize::from(w[3])];
                if all & C_WORD == 0 {
                    break;
                }
                i += 4;
            }
            while i < b.len() && CLASS[usize::from(b[i])] & C_WORD != 0 {
                i += 1;
            }
            continue;
        }
        if class & (C_COLON | C_URI | C_STOP) != 0 {
            if JSON && class & C_STOP != 0 {
                break;
            }
            if class & C_COLON != 0 {
                if b.get(i + 1..i + 3) == Some(b"//") {
                    scheme = true;
                }
                // Every header name ends in `on:`, `ie:`, `ey:` or `en:`.
                if i > 1
                    && matches!(
                        (b[i - 2] | 0x20, b[i - 1] | 0x20),
                        (b'o', b'n') | (b'i', b'e') | (b'e', b'y') | (b'e', b'n')
                    )
                    && header_named(b, i)
                {
                    return None;
                }
            }
            if class & C_URI != 0 {
                uri_part = true;
            }
        }
        i += 1;
    }
    if scheme && uri_part {
        None
    } else {
        Some(i)
    }
}

/// Whether a header name of [`HEADER_NAMES`] (with its colon) ends at `colon`.
fn header_named(b: &[u8], colon: usize) -> bool {
    HEADER_NAMES
        .iter()
        .any(|h| colon + 1 >= h.len() && b[colon + 1 - h.len()..=colon].eq_ignore_ascii_case(h.as_bytes()))
}

fn is_uri_end(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'>' | b'`' | b'\\') || b < 0x20 || b == 0x7f
}

/// Userinfo and secret query/fragment parameters in every `scheme://…` of `s`.
/// The next `://` at or after `from` (a colon search, then two bytes).
fn find_scheme_sep(b: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(rel) = b.get(at..)?.iter().position(|&c| c == b':') {
        let i = at + rel;
        if b.get(i + 1..i + 3) == Some(b"//") {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

fn redact_uris(s: &str) -> Option<String> {
    let b = s.as_bytes();
    find_scheme_sep(b, 0)?;
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes of `s` already handled
    let mut search = 0;
    while let Some(sep) = find_scheme_sep(b, search) {
        // Scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), directly before "://".
        let mut start = sep;
        while start > 0 && (b[start - 1].is_ascii_alphanumeric() || matches!(b[start - 1], b'+' | b'-' | b'.')) {
            start -= 1;
        }
        while start < sep && !b[start].is_ascii_alphabetic() {
            start += 1;
        }
        let mut end = sep + 3;
        while end < b.len() && !is_uri_end(b[end]) {
            end += 1;
        }
        search = end.max(sep + 3);
        if start == sep || start < copied {
            continue;
        }
        if let Some(r) = redact_one_uri(&s[start..end]) {
            let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
            o.push_str(&s[copied..start]);
            o.push_str(&r);
            copied = end;
        }
    }
    out.map(|mut o| {
        o.push_str(&s[copied..]);
        o
    })
}

/// One URI (`scheme://authority[/path][?query][#fragment]`); `None` when nothing changes.
pub fn redact_one_uri(uri: &str) -> Option<String> {
    let sep = uri.find("://")?;
    let auth_start = sep + 3;
    let auth_end = uri[auth_start..].find(['/', '?', '#']).map_or(uri.len(), |i| auth_start + i);
    if !uri[auth_start..auth_end].contains('@') && !uri[auth_end..].contains(['?', '#']) {
        return None; // no userinfo, no parameters: nothing to redact
    }
    let mut changed = false;
    let mut out = String::with_capacity(uri.len());
    out.push_str(&uri[..auth_start]);
    let authority = &uri[auth_start..auth_end];
    match authority.rfind('@') {
        Some(at) if at > 0 => {
            out.push_str(REDACTED);
            out.push_str(&authority[at..]);
            changed = true;
        }
        _ => out.push_str(authority),
    }
    let rest = &uri[auth_end..];
    // Path, then `?query`, then `#fragment`; parameters in both query and fragment.
    let q = rest.find(['?', '#']).unwrap_or(rest.len());
    out.push_str(&rest[..q]);
    let mut tail = &rest[q..];
    while !tail.is_empty() {
        let delim = &tail[..1];
        out.push_str(delim);
        let body_end = if delim == "?" { tail[1..].find('#').map_or(tail.len(), |i| i + 1) } else { tail.len() };
        let body = &tail[1..body_end];
        let mut first = true;
        for pair in body.split('&') {
            if !first {
                out.push('&');
            }
            first = false;
            match pair.split_once('=') {
                Some((name, value)) if !value.is_empty() && is_secret_param(&percent_decode_name(name)) => {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(REDACTED);
                    changed = true;
                }
                _ => out.push_str(pair),
            }
        }
        tail = &tail[body_end..];
    }
    changed.then_some(out)
}

/// Parameter names are compared after decoding `%5F` (`_`), `%2D` (`-`) and `+`.
fn percent_decode_name(name: &str) -> Cow<'_, str> {
    if !name.contains('%') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = ((b[i + 1] as char).to_digit(16), (b[i + 2] as char).to_digit(16)) {
                let c = (h * 16 + l) as u8;
                if c.is_ascii() {
                    out.push(c as char);
                    i += 3;
                    continue;
                }
            }
        }
        // Non-ASCII bytes are copied as they are (whole chars, since we only skip ASCII escapes).
        let ch = name[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8();
    }
    Cow::Owned(out)
}

const HEADER_NAMES: &[&str] =
    &["proxy-authorization:", "authorization:", "set-cookie:", "cookie:", "x-api-key:", "x-auth-token:"];

/// `Authorization: …` (and friends) up to the end of the line.
fn redact_header_lines(s: &str) -> Option<String> {
    // Every header line has a colon right after its name: look only there.
    let b = s.as_bytes();
    if !s.match_indices(':').any(|(i, _)| header_named(b, i)) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    let mut changed = false;
    while i < b.len() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-' || b[i - 1] == b'_');
        if boundary {
            if let Some(h) = HEADER_NAMES.iter().find(|h| starts_with_ignore_ascii_case(&b[i..], h.as_bytes())) {
                let mut v = i + h.len();
                while v < b.len() && (b[v] == b' ' || b[v] == b'\t') {
                    v += 1;
                }
                let mut e = v;
                while e < b.len() && b[e] != b'\n' && b[e] != b'\r' {
                    e += 1;
                }
                if e > v && &s[v..e] != REDACTED {
                    out.push_str(&s[copied..v]);
                    out.push_str(REDACTED);
                    copied = e;
                    changed = true;
                }
                i = e.max(i + 1);
                continue;
            }
        }
        i += 1;
    }
    changed.then(|| {
        out.push_str(&s[copied..]);
        out
    })
}

fn starts_with_ignore_ascii_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay[..needle.len()].eq_ignore_ascii_case(needle)
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn is_cred(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

fn run(b: &[u8], from: usize, pred: impl Fn(u8) -> bool) -> usize {
    let mut e = from;
    while e < b.len() && pred(b[e]) {
        e += 1;
    }
    e
}

/// `(prefix, body predicate, minimum body length, exact body length)`.
type KeyShape = (&'static str, fn(u8) -> bool, usize, Option<usize>);

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn alnum_us(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn alnum_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// Grouped by first byte (see [`shapes_starting_with`]).
const KEY_SHAPES: &[KeyShape] = &[
    ("sk_live_", alnum, 16, None),
    ("sk_test_", alnum, 16, None),
    ("sk-", is_b64url, 20, None),
    ("rk_live_", alnum, 16, None),
    ("rk_test_", alnum, 16, None),
    ("github_pat_", alnum_us, 30, None),
    ("ghp_", alnum, 30, None),
    ("gho_", alnum, 30, None),
    ("ghu_", alnum, 30, None),
    ("ghs_", alnum, 30, None),
    ("ghr_", alnum, 30, None),
    ("glpat-", is_b64url, 20, None),
    ("xoxb-", alnum_dash, 10, None),
    ("xoxp-", alnum_dash, 10, None),
    ("xoxa-", alnum_dash, 10, None),
    ("xoxr-", alnum_dash, 10, None),
    ("xoxs-", alnum_dash, 10, None),
    ("xapp-", alnum_dash, 10, None),
    ("AKIA", upper_digit, 16, Some(16)),
    ("ASIA", upper_digit, 16, Some(16)),
    ("AIza", is_b64url, 35, Some(35)),
    ("npm_", alnum, 36, Some(36)),
    ("hf_", alnum, 30, None),
    ("pypi-", is_b64url, 50, None),
];

/// The key shapes whose prefix starts with `first`.
fn shapes_starting_with(first: u8) -> &'static [KeyShape] {
    match first {
        b's' => &KEY_SHAPES[0..3],
        b'r' => &KEY_SHAPES[3..5],
        b'g' => &KEY_SHAPES[5..12],
        b'x' => &KEY_SHAPES[12..18],
        b'A' => &KEY_SHAPES[18..21],
        b'n' => &KEY_SHAPES[21..22],
        b'h' => &KEY_SHAPES[22..23],
        b'p' => &KEY_SHAPES[23..24],
        _ => &[],
    }
}

fn has(rest: &[u8], lit: &[u8]) -> bool {
    rest.len() >= lit.len() && rest.iter().zip(lit).all(|(a, b)| a == b)
}

/// The shortest span [`token_at`] can match from its start: `basic ` and 8 credential bytes (every
/// key shape is longer; a test checks it).
const MIN_TOKEN: usize = 14;

/// Whether a secret token can start with these two bytes (a quick test before [`token_at`]'s
/// full one; every pair its rules accept passes).
#[inline]
fn token_pair(first: u8, second: u8) -> bool {
    match first {
        b'b' | b'B' => matches!(second | 0x20, b'e' | b'a'),
        b'e' => second == b'y',
        b's' | b'r' => second == b'k',
        b'g' => matches!(second, b'i' | b'h' | b'l'),
        b'x' => matches!(second, b'o' | b'a'),
        b'A' => matches!(second, b'K' | b'S' | b'I'),
        b'n' => second == b'p',
        b'h' => second == b'f',
        b'p' => second == b'y',
        _ => false,
    }
}

/// The span of a secret token starting at `i` (a word boundary), if one starts there.
fn token_at(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if !token_pair(b[i], *b.get(i + 1)?) {
        return None;
    }
    let rest = &b[i..];
    match b[i] {
        // Bearer / Basic credentials: keep the scheme, redact the credential.
        b'b' | b'B' => {
            for scheme in [&b"bearer "[..], &b"basic "[..]] {
                if starts_with_ignore_ascii_case(rest, scheme) {
                    let v = run(b, i + scheme.len(), |c| c == b' ');
                    let e = run(b, v, is_cred);
                    if e - v >= 8 && &b[v..e] != REDACTED.as_bytes() {
                        return Some((v, e));
                    }
                }
            }
            None
        }
        // JWT: three base64url segments, the first starting with `eyJ` (`{"`).
        b'e' => {
            if !has(rest, b"eyJ") {
                return None;
            }
            let e1 = run(b, i, is_b64url);
            if e1 - i >= 10 && e1 < b.len() && b[e1] == b'.' {
                let e2 = run(b, e1 + 1, is_b64url);
                if e2 - e1 > 4 && e2 < b.len() && b[e2] == b'.' {
                    let e3 = run(b, e2 + 1, is_b64url);
                    return Some((i, e3));
                }
            }
            None
        }
        first => {
            for &(prefix, body, min, exact) in shapes_starting_with(first) {
                let p = prefix.as_bytes();
                if !has(rest, p) {
                    continue;
                }
                let v = i + p.len();
                let e = run(b, v, body);
                let n = e - v;
                let ends_clean = e == b.len() || !is_word(b[e]);
                let ok = match exact {
                    Some(x) => n == x && ends_clean,
                    None => n >= min && ends_clean,
                };
                if ok {
                    return Some((i, e));
                }
            }
            None
        }
    }
}

/// Byte classes (see [`C_WORD`] and the others).
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            t[c] |= C_WORD;
        }
        if matches!(b, b'b' | b'B' | b'e' | b's' | b'r' | b'g' | b'x' | b'A' | b'n' | b'h' | b'p') {
            t[c] |= C_START;
        }
        if b == b':' {
            t[c] |= C_COLON;
        }
        if matches!(b, b'@' | b'?' | b'#') {
            t[c] |= C_URI;
        }
        if b < 0x20 || b == b'"' || b == b'\\' {
            t[c] |= C_STOP;
        }
        c += 1;
    }
    t
};

/// Bearer/Basic credentials, JWTs and API-key shapes.
fn redact_tokens(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    let mut prev_word = false;
    while i < b.len() {
        let class = CLASS[usize::from(b[i])];
        if class & C_START != 0 && !prev_word {
            if let Some((from, to)) = token_at(b, i) {
                let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
                o.push_str(&s[copied..from]);
                o.push_str(REDACTED);
                copied = to;
                i = to.max(i + 1);
                prev_word = i > 0 && CLASS[usize::from(b[i - 1])] & C_WORD != 0;
                continue;
            }
        }
        prev_word = class & C_WORD != 0;
        i += 1;
    }
    out.map(|mut o| {
        o.push_str(&s[copied..]);
        o
    })
}

/// Apply the built-in rules to every string of a JSON value in place, including sensitive keys.
pub fn redact_value(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Cow::Owned(r) = redact_text(s) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_value),
        Value::Object(m) => {
            for (k, val) in m.iter_mut() {
                if is_sensitive_key(k) {
                    match val {
                        Value::String(s) if s != REDACTED => *s = REDACTED.to_owned(),
                        Value::Array(items) => {
                            for it in items.iter_mut() {
                                match it {
                                    Value::String(s) => *s = REDACTED.to_owned(),
                                    other => redact_value(other),
                                }
                            }
                        }
                        other => redact_value(other),
                    }
                } else {
                    redact_value(val);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(s: &str) -> String {
        redact_text(s).into_owned()
    }

    #[test]
    fn uris() {
        assert_eq!(r("file:///tmp/a.txt"), "file:///tmp/a.txt");
        assert_eq!(
            r("https://api.example.com/v1/x?token=abc123&page=2"),
            "https://api.example.com/v1/x?token=[REDACTED]&page=2"
        );
        assert_eq!(
            r("see s3://b/k?X-Amz-Signature=ff00&X-Amz-Credential=AK%2F1 now"),
            "see s3://b/k?X-Amz-Signature=[REDACTED]&X-Amz-Credential=[REDACTED] now"
        );
        assert_eq!(r("postgres://admin:hunter2@db:5432/app"), "postgres://[REDACTED]@db:5432/app");
        assert_eq!(r("https://h/cb#access_token=xyz&state=1"), "https://h/cb#access_token=[REDACTED]&state=1");
        assert_eq!(
            r("db://rows?apiKey=1&monkey=2&api_key=3"),
            "db://rows?apiKey=[REDACTED]&monkey=2&api_key=[REDACTED]"
        );
        assert_eq!(r("x://h/p?sig=&a=b"), "x://h/p?sig=&a=b");
        assert_eq!(r("://nothing"), "://nothing");
    }

    #[test]
    fn headers_and_schemes() {
        assert_eq!(r("Authorization: Bearer abc.def.ghi\nX: 1"), "Authorization: [REDACTED]\nX: 1");
        assert_eq!(r("cookie: a=b; c=d"), "cookie: [REDACTED]");
        assert_eq!(r("use bearer abcdefgh1234 please"), "use bearer [REDACTED] please");
        assert_eq!(r("Basic dXNlcjpwYXNz"), "Basic [REDACTED]");
        assert_eq!(r("a bearer of news"), "a bearer of news");
    }

    #[test]
    fn tokens() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(r(&format!("t={jwt};")), "t=[REDACTED];");
        assert_eq!(r("key sk-abcdefghijklmnopqrstuvwxyz012345 end"), "key [REDACTED] end");
        assert_eq!(r("AKIAIOSFODNN7EXAMPLE"), "[REDACTED]");
        assert_eq!(r("AKIAIOSFODNN7EXAMPLEX"), "AKIAIOSFODNN7EXAMPLEX");
        assert_eq!(r("ghp_0123456789abcdefghijklmnopqrstuvwxyz"), "[REDACTED]");
        assert_eq!(r("xoxb-1234567890-abcdef"), "[REDACTED]");
        assert_eq!(r("ask-me sk-short"), "ask-me sk-short");
        assert_eq!(r("the skies"), "the skies");
    }

    #[test]
    fn values() {
        let mut v = json!({
            "headers": {"Authorization": "Bearer x", "Cookie": ["a=1", "b=2"], "Accept": "*/*"},
            "arguments": {"password": "p", "max_tokens": 5, "nested": [{"apiKey": "k"}], "q": "ok"},
            "uri": "https://h/x?token=t"
        });
        redact_value(&mut v);
        assert_eq!(
            v,
            json!({
                "headers": {"Authorization": REDACTED, "Cookie": [REDACTED, REDACTED], "Accept": "*/*"},
                "arguments": {"password": REDACTED, "max_tokens": 5, "nested": [{"apiKey": REDACTED}], "q": "ok"},
                "uri": "https://h/x?token=[REDACTED]"
            })
        );
    }

    /// `might_redact` never says no where a rule applies: strings made of fragments near and on
    /// each rule's edges, glued at random.
    #[test]
    fn prefilter_never_misses() {
        const FRAGMENTS: &[&str] = &[
            " ",
            "\n",
            "\t",
            "\"",
            "x",
            "a-",
            "_",
            ":",
            "//",
            "://",
            "?",
            "#",
            "@",
            "&",
            "=",
            "/",
            ".",
            "https",
            "note",
            "s3",
            "token",
            "sig",
            "key",
            "monkey",
            "api_key",
            "user:pw",
            "Authorization",
            "authorization:",
            "Cookie",
            "cookie:",
            "set-cookie:",
            "X-Api-Key:",
            "x-auth-token:",
            "proxy-",
            "Bearer ",
            "basic ",
            "bearer",
            "abcdefgh",
            "abc",
            "eyJ",
            "eyJhbGciOiJIUzI1NiJ9",
            "eyJzdWIiOiIx",
            "sk-",
            "sk_live_",
            "rk_test_",
            "ghp_",
            "github_pat_",
            "glpat-",
            "xoxb-",
            "xapp-",
            "AKIA",
            "ASIA",
            "AIza",
            "npm_",
            "hf_",
            "pypi-",
            "0123456789",
            "ABCDEFGHIJ",
            "abcdefghijklmnopqrstuvwxyz",
            "é",
            "[REDACTED]",
            "%5F",
            "X-Amz-Signature",
        ];
        let mut rng = crate::tracking::pipeline::ids::IdGen::seeded(7);
        let mut checked = 0;
        for _ in 0..200_000 {
            let n = 1 + (rng.next_u64() % 12) as usize;
            let s: String = (0..n).map(|_| FRAGMENTS[(rng.next_u64() % FRAGMENTS.len() as u64) as usize]).collect();
            let full = apply_rules(&s);
            if !might_redact(s.as_bytes()) {
                assert!(matches!(full, Cow::Borrowed(_)), "missed: {s:?} -> {full:?}");
                checked += 1;
            }
            assert_eq!(redact_text(&s), full, "{s:?}");
            // In JSON text: the same answer on the contents, and the right end.
            let json = format!("{{\"k\":\"{s}\",\"x\":\"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx.abc\"}}");
            let contents_end = 6 + s.bytes().position(|c| c < 0x20 || c == b'"' || c == b'\\').unwrap_or(s.len());
            match clean_json_string(json.as_bytes(), 6) {
                Some(end) => {
                    assert_eq!(end, contents_end, "{s:?}");
                    assert!(!might_redact(&json.as_bytes()[6..end]), "{s:?}");
                }
                None => assert!(might_redact(&json.as_bytes()[6..contents_end]), "{s:?}"),
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn header_name_endings() {
        for h in HEADER_NAMES {
            let b = h.as_bytes();
            let n = b.len();
            assert!(matches!((b[n - 3], b[n - 2]), (b'o', b'n') | (b'i', b'e') | (b'e', b'y') | (b'e', b'n')), "{h}");
        }
    }

    #[test]
    fn no_token_is_shorter_than_the_minimum() {
        for (prefix, _, min, exact) in KEY_SHAPES {
            assert!(prefix.len() + exact.unwrap_or(*min) >= MIN_TOKEN, "{prefix}");
        }
        // The shortest JWT (segments of 10 and 4, an empty third) and the shortest credential.
        let jwt = "eyJhbGciOi.abcd.";
        assert_eq!(redact_text(jwt), REDACTED);
        assert!(jwt.len() >= MIN_TOKEN);
        assert_eq!(redact_text(&jwt[1..]), &jwt[1..]);
        assert_eq!(redact_text("eyJhbGciO.abcd."), "eyJhbGciO.abcd.");
        assert_eq!(redact_text("eyJhbGciOi.abc."), "eyJhbGciOi.abc.");
        let basic = "Basic abcdefgh";
        assert_eq!(basic.len(), MIN_TOKEN);
        assert_eq!(redact_text(basic), "Basic [REDACTED]");
        assert_eq!(redact_text("bearer abcdefgh"), "bearer [REDACTED]");
        assert_eq!(redact_text("Basic abcdefg"), "Basic abcdefg");
    }

    #[test]
    fn token_pairs_admit_every_shape() {
        for (prefix, ..) in KEY_SHAPES {
            let p = prefix.as_bytes();
            assert!(token_pair(p[0], p[1]), "{prefix}");
            assert!(shapes_starting_with(p[0]).iter().any(|s| s.0 == *prefix), "{prefix}");
        }
        for p in ["bearer ", "Bearer ", "BEARER ", "basic ", "Basic ", "bAsIc ", "eyJ"] {
            let p = p.as_bytes();
            assert!(token_pair(p[0], p[1]));
        }
    }

    /// The pair filter in `is_sensitive_key` changes no answer.
    #[test]
    fn sensitive_keys_as_without_the_filter() {
        fn reference(key: &str) -> bool {
            let mut buf = [0u8; 64];
            let Some(n) = normalize_key(key, &mut buf) else { return false };
            let Ok(k) = std::str::from_utf8(&buf[..n]) else { return false };
            const EXACT: &[&str] = &[
                "authorization",
                "proxyauthorization",
                "cookie",
                "setcookie",
                "xapikey",
                "apikey",
                "token",
                "secret",
                "password",
                "passwd",
                "pwd",
                "passphrase",
                "privatekey",
                "clientsecret",
                "credential",
                "credentials",
            ];
            const SUFFIX: &[&str] = &["token", "secret", "password", "apikey", "accesskey", "privatekey", "passphrase"];
            EXACT.contains(&k) || SUFFIX.iter().any(|s| k.ends_with(s))
        }
        let parts = [
            "",
            "-",
            "_",
            "x",
            "X",
            "a",
            "Authorization",
            "proxy",
            "cookie",
            "Set",
            "api",
            "KEY",
            "Token",
            "secret",
            "PASS",
            "word",
            "passwd",
            "pwd",
            "phrase",
            "private",
            "client",
            "credential",
            "s",
            "access",
            "name",
            "é",
            "ON",
            "en",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    let k = format!("{a}{b}{c}");
                    assert_eq!(is_sensitive_key(&k), reference(&k), "{k}");
                }
            }
        }
    }

    #[test]
    fn key_rules() {
        for k in ["Authorization", "x-api-key", "access_token", "githubToken", "client_secret", "DB_PASSWORD"] {
            assert!(is_sensitive_key(k), "{k}");
        }
        for k in ["name", "uri", "max_tokens", "tokens", "keyword", "description"] {
            assert!(!is_sensitive_key(k), "{k}");
        }
    }
}
