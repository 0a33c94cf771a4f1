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

    /// The bytes its buffer holds (what this text keeps alive).
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.buf.as_ref().map_or(0, |b| b.capacity())
    }

    /// True when both are ranges of one buffer.
    #[cfg(test)]
    pub(crate) fn same_buffer(&self, other: &Text) -> bool {
        matches!((&self.buf, &other.buf), (Some(a), Some(b)) if Arc::ptr_eq(a, b))
    }

    /// The buffer this text is a range of — shared with its listing's other strings — and the
    /// range: a host that hands a listing's strings out without copying each (Node's one external
    /// string, sliced) keeps the buffer alive with a clone of the `Arc`.
    pub fn buffer(&self) -> Option<(&Arc<String>, Range<usize>)> {
        self.buf.as_ref().map(|b| (b, self.range.clone()))
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        debug_assert!(self.buf.is_some(), "a pending text never leaves the pager");
        self.buf.as_deref().map_or("", |b| &b[self.range.clone()])
    }
}

/// A string of a parsed page that the listing keeps exactly as the host lent it
/// ([`Pager::handle_parsed_page_noting`](super::Pager::handle_parsed_page_noting)): its range in the listing's text (what [`Text::buffer`]
/// gives for that string once the listing is finished) and the address of the host's UTF-8 it was
/// read from — meaningful only while the host's page lives, for the host to find its own string
/// object by (Python then hands that object out instead of a copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verbatim {
    /// The string's range in the listing's text.
    pub range: std::ops::Range<usize>,
    /// The address of the host's UTF-8 the string was read from.
    pub source: usize,
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
    use std::time::Duration;

    use super::*;
    use crate::discovery::{Item, Limits, ListKind, Outcome, Pager};

    #[test]
    fn a_listing_keeps_its_projected_text_never_its_pages() {
        keeps_only_the_projected_text(false);
    }

    #[test]
    fn a_listing_of_parsed_pages_gives_back_what_it_reserved() {
        // A parsed page reserves the byte budget for the listing's text: `finish` gives it back.
        keeps_only_the_projected_text(true);
    }

    /// Pages handed over as JSON text, or (`parsed`) as the host's parsed values.
    fn keeps_only_the_projected_text(parsed: bool) {
        // Three pages of ten resources, each item carrying 64 KiB of `_meta`: about 2 MB of pages.
        let meta = "m".repeat(64 * 1024);
        let mut pager = Pager::new(ListKind::Resources, "srv", true, Limits::default(), Duration::ZERO).unwrap();
        let mut page_bytes = 0;
        for page in 0..3 {
            pager.poll_request().unwrap();
            let items: Vec<String> = (0..10)
                .map(|i| format!(r#"{{"uri":"file:///{page}/{i}","name":"n{i}","_meta":{{"junk":"{meta}"}}}}"#))
                .collect();
            let next = if page < 2 { format!(r#","nextCursor":"c{page}""#) } else { String::new() };
            let text = format!(r#"{{"resources":[{}]{next}}}"#, items.join(","));
            page_bytes += text.len();
            if parsed {
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(pager.handle_parsed_page(value, Duration::ZERO), Ok(true), "a Value is JSON");
            } else {
                pager.handle_outcome(Outcome::Page(&text), Duration::ZERO).unwrap();
            }
        }
        let listing = pager.finish().unwrap();
        assert_eq!(listing.items.len(), 30);
        let Item::Resource(first) = &listing.items[0] else { panic!("a resource") };
        let kept = first.uri.buffer_capacity();
        // The server's name once, then each item's URI and name: nothing of the pages' `_meta`.
        let strings: usize = listing
            .resources()
            .map(|r| {
                assert!(
                    r.uri.same_buffer(&first.uri) && r.name.same_buffer(&first.uri) && r.server.same_buffer(&first.uri)
                );
                r.uri.len() + r.name.len()
            })
            .sum();
        assert_eq!(kept, "srv".len() + strings, "the buffer is exactly the kept strings");
        assert!(kept <= listing.diagnostics.bytes, "within the projected bytes the byte budget bounds");
        assert!(page_bytes > 30 * meta.len() && kept < 1_000);
    }

    #[test]
    fn an_audience_keeps_order_and_repeats_inline_and_past_its_inline_capacity() {
        use crate::discovery::Role;
        for n in [2, 16, 17, 40] {
            let roles: Vec<&str> = (0..n).map(|i| if i % 3 == 0 { "assistant" } else { "user" }).collect();
            let audience = serde_json::to_string(&roles).unwrap();
            let page = format!(
                r#"{{"resources":[{{"uri":"file:///a","name":"a","annotations":{{"audience":{audience}}}}}]}}"#
            );
            let mut pager = Pager::new(ListKind::Resources, "srv", true, Limits::default(), Duration::ZERO).unwrap();
            pager.poll_request().unwrap();
            pager.handle_outcome(Outcome::Page(&page), Duration::ZERO).unwrap();
            let listing = pager.finish().unwrap();
            let Item::Resource(r) = &listing.items[0] else { panic!("a resource") };
            let kept = r.annotations.as_ref().unwrap().audience.as_ref().unwrap();
            assert_eq!(kept.len(), n);
            assert_eq!(kept[0], Role::Assistant);
            assert_eq!(serde_json::to_string(kept).unwrap(), audience, "{n} roles serialize as the server's array");
            assert_eq!(listing.items[0].json_len(), serde_json::to_string(&listing.items[0]).unwrap().len());
        }
    }

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
        assert_eq!(Arc::strong_count(&buf), 3, "clones share the buffer");
        let mut sorted = [t.clone(), Text::from("a")];
        sorted.sort();
        assert_eq!(sorted[0], "a");
    }
}
