//! Ids (`evt_…`, `ses_…`, W3C trace and span ids), the fast non-cryptographic generator behind them,
//! and RFC 3339 timestamps. Pure functions; the generator is seeded by its owner.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::backoff::SplitMix64;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Length of the base62 part of `evt_…`/`ses_…` ids (20 bytes, as a KSUID).
pub const ID_CHARS: usize = 27;

/// 20 bytes as 27 base62 characters, most significant first, zero-padded (the KSUID text form).
pub fn base62_20(bytes: &[u8; 20]) -> [u8; ID_CHARS] {
    // Five 32-bit limbs, big-endian; repeated division by 62.
    let mut limbs = [0u32; 5];
    for (i, l) in limbs.iter_mut().enumerate() {
        *l = u32::from_be_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    }
    let mut out = [b'0'; ID_CHARS];
    for slot in out.iter_mut().rev() {
        let mut rem: u64 = 0;
        for l in limbs.iter_mut() {
            let cur = (rem << 32) | u64::from(*l);
            *l = (cur / 62) as u32;
            rem = cur % 62;
        }
        *slot = BASE62[rem as usize];
    }
    out
}

fn prefixed(prefix: &str, bytes: &[u8; 20]) -> String {
    let mut s = String::with_capacity(prefix.len() + ID_CHARS);
    s.push_str(prefix);
    // base62 output is ASCII.
    s.extend(base62_20(bytes).iter().map(|&b| b as char));
    s
}

/// The session id derived from a transport session id (`Mcp-Session-Id`): `ses_` + base62 of the
/// first 20 bytes of `sha256(transport_id + ":" + project_id)` (`project_id` empty when unset).
/// Deterministic: the same transport session always gets the same id.
pub fn derive_session_id(transport_session_id: &str, project_id: Option<&str>) -> String {
    let mut h = Sha256::new();
    h.update(transport_session_id.as_bytes());
    h.update(b":");
    h.update(project_id.unwrap_or("").as_bytes());
    let digest = h.finalize();
    let mut b = [0u8; 20];
    b.copy_from_slice(&digest[..20]);
    prefixed("ses_", &b)
}

/// Whether `s` looks like an id this module makes (`prefix` + 27 base62 characters).
pub fn is_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|rest| rest.len() == ID_CHARS && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Event, session, trace and span ids, drawn from the crate's [`SplitMix64`]. Not cryptographic:
/// ids must be unique, not secret. Seeded by the caller (the tracker passes process randomness,
/// `runtime::entropy`; tests and golden files a constant).
#[derive(Debug, Clone)]
pub struct IdGen {
    rng: SplitMix64,
}

impl IdGen {
    /// A generator with this seed.
    pub fn seeded(seed: u64) -> IdGen {
        IdGen { rng: SplitMix64::new(seed) }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let r = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }

    /// `prefix` + 27 uniformly random base62 characters (6 random bits per character, values
    /// 62 and 63 rejected).
    fn random_id(&mut self, prefix: &str) -> String {
        let mut chars = [0u8; ID_CHARS];
        let mut n = 0;
        while n < ID_CHARS {
            let mut bits = self.next_u64();
            for _ in 0..10 {
                let v = (bits & 63) as usize;
                bits >>= 6;
                if v < 62 && n < ID_CHARS {
                    chars[n] = BASE62[v];
                    n += 1;
                }
            }
        }
        let mut s = String::with_capacity(prefix.len() + ID_CHARS);
        s.push_str(prefix);
        s.push_str(std::str::from_utf8(&chars).unwrap_or_default());
        s
    }

    /// `evt_` + 27 base62 characters.
    pub fn event_id(&mut self) -> String {
        self.random_id("evt_")
    }

    /// `ses_` + 27 base62 characters (a minted session id).
    pub fn session_id(&mut self) -> String {
        self.random_id("ses_")
    }

    /// A valid (non-zero) W3C trace id.
    pub fn trace_id(&mut self) -> [u8; 16] {
        loop {
            let mut b = [0u8; 16];
            self.fill(&mut b);
            if b != [0; 16] {
                return b;
            }
        }
    }

    /// A valid (non-zero) W3C span id.
    pub fn span_id(&mut self) -> [u8; 8] {
        loop {
            let b = self.next_u64().to_le_bytes();
            if b != [0; 8] {
                return b;
            }
        }
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for chunk in bytes.chunks(32) {
        let mut buf = [0u8; 64];
        for (pair, &b) in buf.chunks_exact_mut(2).zip(chunk) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 15)];
        }
        s.push_str(std::str::from_utf8(&buf[..2 * chunk.len()]).unwrap_or_default());
    }
    s
}

/// Parse lowercase/uppercase hex of exactly `N` bytes.
pub fn parse_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let b = s.as_bytes();
    if b.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        let hi = (b[2 * i] as char).to_digit(16)?;
        let lo = (b[2 * i + 1] as char).to_digit(16)?;
        *o = (hi * 16 + lo) as u8;
    }
    Some(out)
}

/// A W3C `traceparent` (`00-<trace id>-<parent id>-<flags>`), parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// Trace id (never all zero).
    pub trace_id: [u8; 16],
    /// The caller's span id (never all zero).
    pub parent_span_id: [u8; 8],
    /// Trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Parse a `traceparent` header value; `None` when it is not valid (version `ff`, zero ids,
    /// wrong lengths, non-hex). Future versions are read by their first four fields.
    pub fn parse(s: &str) -> Option<TraceParent> {
        let s = s.trim();
        let mut parts = s.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let parent = parts.next()?;
        let flags = parts.next()?;
        if version.len() != 2 || version.eq_ignore_ascii_case("ff") || parse_hex::<1>(version).is_none() {
            return None;
        }
        if version == "00" && parts.next().is_some() {
            return None;
        }
        let trace_id = parse_hex::<16>(trace)?;
        let parent_span_id = parse_hex::<8>(parent)?;
        let flags = parse_hex::<1>(flags)?[0];
        if trace_id == [0; 16] || parent_span_id == [0; 8] {
            return None;
        }
        Some(TraceParent { trace_id, parent_span_id, flags })
    }
}

/// Milliseconds as a float with nanosecond resolution (`durationMs`): a request that took time
/// never reads 0 (at microsecond resolution a sub-microsecond handler did).
pub fn duration_ms(d: Duration) -> f64 {
    (d.as_nanos() as f64) / 1e6
}

/// RFC 3339 UTC with milliseconds (`2026-01-02T03:04:05.678Z`) for a time since the Unix epoch
/// (times before 1970 are written as 1970-01-01T00:00:00.000Z).
pub fn rfc3339_millis(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let millis = since.subsec_millis();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    let digits = |out: &mut [u8], mut v: u64| {
        for slot in out.iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    // Years fit in four digits until 9999 (u64 seconds since 1970 reach further; they wrap here).
    let mut b = *b"0000-00-00T00:00:00.000Z";
    digits(&mut b[0..4], y as u64);
    digits(&mut b[5..7], u64::from(m));
    digits(&mut b[8..10], u64::from(d));
    digits(&mut b[11..13], rem / 3600);
    digits(&mut b[14..16], (rem % 3600) / 60);
    digits(&mut b[17..19], rem % 60);
    digits(&mut b[20..23], u64::from(millis));
    std::str::from_utf8(&b).unwrap_or_default().to_owned()
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so leap days fall at the end of each 400-year era.
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1
    let mp = (5 * doy + 2) / 153; // month from March = 0
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Unix nanoseconds of a time (0 before the epoch).
pub fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map(|d| d.as_nanos().min(u128::from(u64::MAX)) as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base62_matches_ksuid_shape() {
        assert_eq!(&base62_20(&[0; 20]), b"000000000000000000000000000");
        // 2^160 - 1 = "aWgEPTl1tmebfsQzFP4bxwgy80V" in KSUID's alphabet.
        assert_eq!(&base62_20(&[0xff; 20]), b"aWgEPTl1tmebfsQzFP4bxwgy80V");
        let mut one = [0u8; 20];
        one[19] = 61;
        assert_eq!(&base62_20(&one), b"00000000000000000000000000z");
    }

    #[test]
    fn derived_session_ids_are_deterministic_and_well_formed() {
        let a = derive_session_id("abc", None);
        assert_eq!(a, derive_session_id("abc", None));
        assert_ne!(a, derive_session_id("abd", None));
        assert_ne!(a, derive_session_id("abc", Some("proj")));
        assert!(is_id(&a, "ses_"), "{a}");
    }

    #[test]
    fn generated_ids_are_well_formed() {
        let mut g = IdGen::seeded(7);
        let e = g.event_id();
        assert!(is_id(&e, "evt_"), "{e}");
        assert_ne!(e, g.event_id());
        assert!(is_id(&g.session_id(), "ses_"));
        assert_ne!(g.trace_id(), [0; 16]);
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_767_323_045_678);
        assert_eq!(rfc3339_millis(t), "2026-01-02T03:04:05.678Z");
        // Leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339_millis(t), "2000-02-29T00:00:00.000Z");
        assert_eq!(duration_ms(Duration::from_micros(1_234_567)), 1234.567);
    }

    #[test]
    fn traceparent() {
        let tp = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(hex(&tp.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&tp.parent_span_id), "00f067aa0ba902b7");
        assert_eq!(tp.flags, 1);
        assert!(TraceParent::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none());
        assert!(TraceParent::parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").is_none());
        assert!(TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7").is_none());
        assert!(TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x").is_none());
        assert!(TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x").is_some());
        assert!(TraceParent::parse("zz").is_none());
    }
}
