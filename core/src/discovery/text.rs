//! [`Text`]: a string of a listing, a range of the one buffer its listing's text is kept in.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Range};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A string of a projected item (a name, a URI, a description, ...): a range of one shared
/// buffer. A traversal copies every kept string once, into one buffer for the whole listing,
/// instead of allocating a `String` per field; the items share that buffer, and a clone only
/// counts a reference.
///
/// The buffer holds only the projected, sanitized text of the listing's items (never the raw
/// pages), so what a listing keeps is bounded by its byte budget ([`Limits::max_bytes`]). An item
/// kept alone keeps its whole listing's buffer.
///
/// `Text` derefs to `str`, compares, hashes, orders, prints and serializes as its string.
/// `String::from(text)` (or `text.to_string()`) gives an owned `String`; `Text::from("…")` a
/// `Text` of its own.
///
/// [`Limits::max_bytes`]: super::Limits::max_bytes
#[derive(Clone)]
pub struct Text {
    /// `None` only inside the pager, while the listing's buffer still grows ([`Text::pending`]).
    buf: Option<Arc<String>>,
    range: Range<usize>,
}

impl Text {
    /// `range` of `buf` (on `char` boundaries).
    pub(crate) fn shared(buf: &Arc<String>, range: Range<usize>) -> Text {
        debug_assert!(buf.get(range.clone()).is_some(), "a range of the buffer on char boundaries");
        Text { buf: Some(Arc::clone(buf)), range }
    }

    /// `range` of a buffer that is still growing: the pager's items until it moves them onto the
    /// listing's buffer ([`Text::shared`]); it reads as `""` until then, and never leaves the pager.
    pub(crate) fn pending(range: Range<usize>) -> Text {
        Text { buf: None, range }
    }

    /// This text's range, to be moved onto its final buffer with [`Text::shared`].
    pub(crate) fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        debug_assert!(self.buf.is_some(), "a pending text never leaves the pager");
        self.buf.as_deref().map_or("", |b| &b[self.range.clone()])
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::from("")
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text { buf: Some(Arc::new(s.to_owned())), range: 0..s.len() }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        let len = s.len();
        Text { buf: Some(Arc::new(s)), range: 0..len }
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.as_str().to_owned()
    }
}

impl From<&Text> for String {
    fn from(t: &Text) -> String {
        t.as_str().to_owned()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Text) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_reads_compares_and_serializes_as_its_string() {
        let buf = Arc::new(String::from("srvname"));
        let t = Text::shared(&buf, 3..7);
        assert_eq!(t, "name");
        assert_eq!(&*t, "name");
        assert_eq!(t, Text::from("name"));
        assert_eq!(String::from(&t), "name");
        assert_eq!(t.to_string(), "name");
        assert_eq!(format!("{t:?}"), "\"name\"");
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"name\"");
        assert_eq!(serde_json::from_str::<Text>("\"name\"").unwrap(), t);
        let mut set = std::collections::HashSet::new();
        set.insert(t.clone());
        assert!(set.contains("name"));
        let mut sorted = [t.clone(), Text::from("a")];
        sorted.sort();
        assert_eq!(sorted[0], "a");
        assert_eq!(Arc::strong_count(&buf), 3, "clones share the buffer");
    }
}
