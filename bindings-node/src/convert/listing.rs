//! A listing handed to JS as parts the facade assembles (`lib/convert.ts`), instead of its JSON
//! text for `JSON.parse`: the items' strings as one JS string that the facade slices (V8 shares a
//! slice's characters), their bounds and numbers as one `Float64Array`, and the listing's other
//! fields as small JSON text. The JS string is the listing's own buffer, not a copy, when every
//! item's strings are ASCII ranges of that one buffer (the common case): an external one-byte
//! string (`node_api_create_external_string_latin1`) that keeps the buffer alive until V8 lets it
//! go; otherwise the strings are copied into one string (one-byte when ASCII). (A slice
//! keeps the whole string alive: an item kept alone keeps its listing's strings.)
//!
//! The numbers, item after item: a mask of the fields present (bit 0 the title, then the
//! description, MIME type, size, annotations, audience, priority, `lastModified`), the start and
//! end of each string present (in UTF-16 units into the text) — the id, the name, the title, the
//! description, the MIME type, `lastModified` — then `size`, the audience (its length, then 0 for
//! `user`, 1 for `assistant`) and the priority, each when present.

use std::sync::Arc;

use mcplens::discovery::{Item, Listing, Role, Text};
use napi::bindgen_prelude::{Either, Float64Array};

/// A listing's parts.
#[napi_derive::napi(object, object_from_js = false)]
pub struct ListingParts {
    /// The listing's JSON text with no items (`items: []`, for the facade to fill in its place).
    pub head: String,
    /// The items' strings: the listing's buffer, or every string copied in order.
    #[napi(ts_type = "string")]
    pub text: Either<crate::SharedText, crate::JsonText>,
    /// Is `text` the listing's own buffer (not a copy)?
    pub shared: bool,
    /// Item count, then each item's numbers (above).
    pub numbers: Float64Array,
}

struct Parts {
    /// `None` when the strings are ranges of the shared buffer.
    text: Option<String>,
    /// The text's length in UTF-16 units.
    units: usize,
    numbers: Vec<f64>,
}

impl Parts {
    fn push(&mut self, s: &Text) {
        let Some(text) = &mut self.text else {
            let range = s.buffer().map_or(0..0, |(_, range)| range);
            return self.numbers.extend([range.start as f64, range.end as f64]);
        };
        text.push_str(s);
        let start = self.units;
        self.units += if s.is_ascii() { s.len() } else { s.encode_utf16().count() };
        self.numbers.extend([start as f64, self.units as f64]);
    }
}

/// The one buffer every string of `items` is an ASCII range of, if there is one (what else it holds
/// is never sliced: Latin-1 and ASCII agree below 0x80, so a range's bytes are its characters).
fn shared(items: &[Item]) -> Option<Arc<String>> {
    let buf = items.iter().flat_map(|i| i.texts().into_iter().flatten()).next()?.buffer()?.0;
    let ranges = |s: &Text| s.is_ascii() && s.buffer().is_some_and(|(b, _)| Arc::ptr_eq(b, buf));
    (!buf.is_empty() && items.iter().flat_map(|i| i.texts().into_iter().flatten()).all(ranges)).then(|| Arc::clone(buf))
}

/// The parts of `listing`.
pub fn parts(l: &mut Listing) -> ListingParts {
    let items = std::mem::take(&mut l.items);
    let head = l.to_json();
    l.items = items;
    let buffer = shared(&l.items);
    // The projected bytes count every kept string (and more): room for a copy at once.
    let mut p = Parts {
        text: buffer.is_none().then(|| String::with_capacity(l.diagnostics.bytes)),
        units: 0,
        numbers: Vec::with_capacity(1 + l.items.len() * 16),
    };
    p.numbers.push(l.items.len() as f64);
    for item in &l.items {
        let texts = item.texts();
        let (size, a) = match item {
            Item::Template(t) => (None, &t.annotations),
            Item::Resource(r) => (r.size, &r.annotations),
        };
        let a = a.as_ref();
        let of = |f: fn(&mcplens::discovery::Annotations) -> bool| a.is_some_and(f);
        let (audience, priority) = (of(|a| a.audience.is_some()), of(|a| a.priority.is_some()));
        let present = |at: usize| texts[at].is_some();
        let bits = [present(2), present(3), present(4), size.is_some(), a.is_some(), audience, priority, present(5)];
        p.numbers.push(bits.into_iter().enumerate().map(|(n, on)| u32::from(on) << n).sum::<u32>() as f64);
        for s in texts.into_iter().flatten() {
            p.push(s);
        }
        p.numbers.extend(size.map(|n| n as f64));
        if let Some(roles) = a.and_then(|a| a.audience.as_ref()) {
            p.numbers.push(roles.len() as f64);
            p.numbers.extend(roles.iter().map(|r| f64::from(u8::from(*r == Role::Assistant))));
        }
        p.numbers.extend(a.and_then(|a| a.priority));
    }
    let shared = buffer.is_some();
    let text = match buffer {
        Some(buffer) => Either::A(crate::SharedText(buffer)),
        None => Either::B(crate::JsonText(p.text.unwrap_or_default())),
    };
    ListingParts { head, text, shared, numbers: Float64Array::new(p.numbers) }
}
