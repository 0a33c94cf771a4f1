//! A page as the host's SDK parsed it, handed over as a tape (`lib/convert-tape.ts`'s `withTape`)
//! and read in place by the core's page rules through serde (`Pager::handle_parsed_page`), instead
//! of its `JSON.stringify`'d text: the JS walk writes every string's UTF-8 into one byte buffer
//! (`TextEncoder.encodeInto`, one copy; short strings joined and encoded a batch at a time) and the
//! page's shape into one `Float64Array`, so the page crosses node-api once (a reader calling
//! node-api per property was slower than the text on pages of many short items). What
//! `JSON.stringify` writes is what the tape holds, exactly or not at all (the walk declines
//! otherwise; see `withTape`).
//!
//! The tape, after its first entry (how many UTF-16 units its strings hold in all), value after
//! value: `0` null, `1` false, `2` true, `3` then the number, `4` then the string's end (its
//! start is the previous string's end), `5` then an array's length and its elements, `6` then an
//! object's entry count and, per entry, its key's end and its value. A string's end counts UTF-16
//! units from the first string's start (what the walk knows without encoding): when the bytes
//! are ASCII, a unit is a byte. A number is an integer (read as JSON text reads one: unsigned
//! when not negative) when it is one and safe; past 2^53 `JSON.stringify` writes digits that read
//! back as another integer, and the walk declines it.
//!
//! Declined here, nothing applied (the host hands the text instead): a U+FFFD anywhere in the
//! bytes (how `encodeInto` writes a lone surrogate, which the text carries as its escape), a
//! string that ends inside a character (two lone surrogates of neighbouring strings, joined), an
//! entry that is not one of the above, nesting past [`MAX_DEPTH`].
//!
//! Measured: row `node_convert_page` (`make bench-node`), the traversal with pages as tapes ÷ the
//! same traversal with pages as text, in the same rounds.

use serde::de::value::{BorrowedStrDeserializer, Error};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// Not a JSON value as `JSON.stringify` would write it: declined.
fn not_json() -> Error {
    Error::custom("not a JSON value")
}

/// A value nested deeper than this is declined: serde_json refuses the text past 128, and
/// declining early is safe (the page's text then decides).
const MAX_DEPTH: u32 = 120;

/// The largest integer a tape holds as one (2^53 − 1).
const SAFE: f64 = 9_007_199_254_740_991.0;

/// The tape being read: where the next entry and the next string start (in bytes, and in
/// UTF-16 units).
pub struct Tape<'de> {
    text: &'de str,
    ascii: bool,
    tape: &'de [f64],
    at: usize,
    from: usize,
    units: usize,
}

/// A whole, non-negative number of the tape as a `usize`.
fn whole(n: f64) -> Option<usize> {
    ((0.0..=SAFE).contains(&n) && n == (n as usize) as f64).then_some(n as usize)
}

impl<'de> Tape<'de> {
    /// The tape over `bytes` (the strings) and `tape`; `None` when `bytes` is not UTF-8 or holds a
    /// U+FFFD.
    pub fn of(bytes: &'de [u8], tape: &'de [f64]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        let ascii = whole(*tape.first()?)? == text.len();
        let tape = Tape { text, ascii, tape, at: 1, from: 0, units: 0 };
        memchr::memmem::find(bytes, "\u{FFFD}".as_bytes()).is_none().then_some(tape)
    }

    /// The page: the tape's first value.
    pub fn value(&mut self) -> Value<'_, 'de> {
        Value { tape: self, depth: 0 }
    }

    fn next(&mut self) -> Result<f64, Error> {
        let v = *self.tape.get(self.at).ok_or_else(not_json)?;
        self.at += 1;
        Ok(v)
    }

    fn count(&mut self) -> Result<usize, Error> {
        // Every element takes one entry at least: a count past what is left is not a tape.
        whole(self.next()?).filter(|&n| n <= self.tape.len() - self.at).ok_or_else(not_json)
    }

    /// The next string: its end, read off the tape; its start, the previous string's end.
    fn str(&mut self) -> Result<&'de str, Error> {
        let end = whole(self.next()?).ok_or_else(not_json)?;
        let (mut at, mut units) = if self.ascii { (end, end) } else { (self.from, self.units) };
        let mut chars = self.text.get(self.from..).ok_or_else(not_json)?.chars();
        while units < end {
            let c = chars.next().ok_or_else(not_json)?;
            (at, units) = (at + c.len_utf8(), units + c.len_utf16());
        }
        // Ending inside a character (a surrogate pair joined from two strings) is not a tape.
        let s = self.text.get(self.from..at).filter(|_| units == end).ok_or_else(not_json)?;
        (self.from, self.units) = (at, end);
        Ok(s)
    }
}

/// One value of the tape, `depth` containers deep.
pub struct Value<'a, 'de> {
    tape: &'a mut Tape<'de>,
    depth: u32,
}

impl<'de> Deserializer<'de> for Value<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let (tape, depth) = (self.tape, self.depth + 1);
        if depth > MAX_DEPTH {
            return Err(not_json());
        }
        match tape.next()? {
            0.0 => visitor.visit_unit(),
            1.0 => visitor.visit_bool(false),
            2.0 => visitor.visit_bool(true),
            3.0 => match tape.next()? {
                // As JSON text reads a safe integer: unsigned when not negative (-0 is "0").
                n if (0.0..=SAFE).contains(&n) && n == (n as u64) as f64 => visitor.visit_u64(n as u64),
                n if (-SAFE..0.0).contains(&n) && n == (n as i64) as f64 => visitor.visit_i64(n as i64),
                n if n.is_finite() && n.abs() < SAFE && n != (n as i64) as f64 => visitor.visit_f64(n),
                _ => Err(not_json()),
            },
            4.0 => visitor.visit_borrowed_str(tape.str()?),
            5.0 => visitor.visit_seq(Within { left: tape.count()?, tape, depth }),
            6.0 => visitor.visit_map(Within { left: tape.count()?, tape, depth }),
            _ => Err(not_json()),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// An array's elements or an object's entries: `left` more, `depth` containers deep.
struct Within<'a, 'de> {
    tape: &'a mut Tape<'de>,
    left: usize,
    depth: u32,
}

impl<'de> SeqAccess<'de> for Within<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        let Some(left) = self.left.checked_sub(1) else { return Ok(None) };
        self.left = left;
        seed.deserialize(Value { tape: self.tape, depth: self.depth }).map(Some)
    }
}

impl<'de> MapAccess<'de> for Within<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some(left) = self.left.checked_sub(1) else { return Ok(None) };
        self.left = left;
        let key = self.tape.str()?;
        seed.deserialize(BorrowedStrDeserializer::new(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(Value { tape: self.tape, depth: self.depth })
    }
}
