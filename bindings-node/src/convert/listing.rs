//! A listing handed to JS as parts the facade assembles (`lib/convert.ts`), instead of its JSON
//! text for `JSON.parse`: the items' strings as one JS string (one copy; a one-byte JS string when
//! ASCII) that the facade slices (V8 shares a slice's characters), their bounds and numbers as one
//! `Float64Array`, and the listing's other fields as small JSON text. (A slice keeps the whole
//! text alive: an item kept alone keeps its listing's strings.)
//!
//! The numbers, item after item: a mask of the fields present (bit 0 the title, then the
//! description, MIME type, size, annotations, audience, priority, `lastModified`), the end of each
//! string present (in UTF-16 units into the text; its start is the previous end) — the id, the
//! name, the title, the description, the MIME type — then `size`, the audience (its length, then 0 for
//! `user`, 1 for `assistant`), the priority and the end of `lastModified`, each when present.

use mcplens::discovery::{Item, Listing, Role};
use napi::bindgen_prelude::Float64Array;

/// A listing's parts.
#[napi_derive::napi(object, object_from_js = false)]
pub struct ListingParts {
    /// The listing's JSON text with no items (`items: []`, for the facade to fill in its place).
    pub head: String,
    /// Every string of every item, in order.
    #[napi(ts_type = "string")]
    pub text: crate::JsonText,
    /// Item count, then each item's numbers (above).
    pub numbers: Float64Array,
}

struct Parts {
    text: String,
    /// The text's length in UTF-16 units.
    units: usize,
    numbers: Vec<f64>,
}

impl Parts {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.units += if s.is_ascii() { s.len() } else { s.encode_utf16().count() };
        self.numbers.push(self.units as f64);
    }
}

/// The parts of `listing`.
pub fn parts(l: &mut Listing) -> ListingParts {
    let items = std::mem::take(&mut l.items);
    let head = l.to_json();
    l.items = items;
    // The projected bytes count every kept string (and more): room for the text at once.
    let mut p = Parts {
        text: String::with_capacity(l.diagnostics.bytes),
        units: 0,
        numbers: Vec::with_capacity(1 + l.items.len() * 10),
    };
    p.numbers.push(l.items.len() as f64);
    for item in &l.items {
        let (id, name, title, description, mime_type, size, annotations) = match item {
            Item::Template(t) => {
                (&t.uri_template, &t.name, &t.title, &t.description, &t.mime_type, None, &t.annotations)
            }
            Item::Resource(r) => (&r.uri, &r.name, &r.title, &r.description, &r.mime_type, r.size, &r.annotations),
        };
        let a = annotations.as_ref();
        let of = |f: fn(&mcplens::discovery::Annotations) -> bool| a.is_some_and(f);
        let (audience, priority) = (of(|a| a.audience.is_some()), of(|a| a.priority.is_some()));
        let bits = [title.is_some(), description.is_some(), mime_type.is_some(), size.is_some(), a.is_some()];
        let bits = bits.into_iter().chain([audience, priority, of(|a| a.last_modified.is_some())]);
        p.numbers.push(bits.enumerate().map(|(n, on)| u32::from(on) << n).sum::<u32>() as f64);
        for s in [Some(id), Some(name), title.as_ref(), description.as_ref(), mime_type.as_ref()].into_iter().flatten()
        {
            p.push(s);
        }
        p.numbers.extend(size.map(|n| n as f64));
        if let Some(a) = a {
            if let Some(roles) = &a.audience {
                p.numbers.push(roles.len() as f64);
                p.numbers.extend(roles.iter().map(|r| f64::from(u8::from(*r == Role::Assistant))));
            }
            p.numbers.extend(a.priority);
            if let Some(t) = &a.last_modified {
                p.push(t);
            }
        }
    }
    ListingParts { head, text: crate::JsonText(p.text), numbers: Float64Array::new(p.numbers) }
}
