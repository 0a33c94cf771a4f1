//! One page: strict structure, lenient optional fields, projection and sanitizing.
//!
//! The page is parsed into borrowed loose values (no `serde_json::Value`), so the structure can
//! be checked strictly while optional fields are checked one by one. Problems are reported as
//! static strings, never with server text.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::item::{Annotations, Item, Resource, ResourceTemplate, Role};
use super::{Diagnostics, ListKind};
use crate::sanitize;

/// A JSON value as far as the projection needs to know it.
#[derive(Debug)]
pub(crate) enum Loose<'a> {
    Str(Cow<'a, str>),
    Null,
    /// A number that fits an `i64`/`u64` (kept as its value) …
    Int(i128),
    /// … or any other number.
    Float(f64),
    Bool,
    Arr(Vec<Loose<'a>>),
    Obj,
}

impl Loose<'_> {
    /// An integer, including a whole-number float such as `3.0` (JSON Schema counts it as an
    /// integer, and hosts whose SDK parses JSON first cannot tell the two apart).
    pub(crate) fn as_integer(&self) -> Option<i128> {
        match *self {
            Loose::Int(v) => Some(v),
            Loose::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => Some(f as i128),
            _ => None,
        }
    }
}

impl<'de> de::Deserialize<'de> for Loose<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Loose::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Loose::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Loose::Bool)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Loose::Int(v as i128))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Loose::Int(v as i128))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Loose::Float(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Only short arrays are of interest (audience); longer ones are consumed and marked.
        // Elements are read one level deep only (strings kept, anything else skipped without
        // recursion), so no nesting depth can fail the page through an optional field.
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Leaf<'de>>()? {
            out.push(v.0);
        }
        Ok(Loose::Arr(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Obj)
    }
}

/// An array element: a string, or anything else skipped without recursion.
struct Leaf<'a>(Loose<'a>);

impl<'de> de::Deserialize<'de> for Leaf<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Leaf<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Str(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Str(Cow::Owned(v.to_owned()))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Null))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Bool))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Obj))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Obj))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Leaf(Loose::Obj))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Leaf(Loose::Obj))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Leaf(Loose::Obj))
            }
        }
        d.deserialize_any(V)
    }
}

/// A map key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The raw fields of one item, before validation.
#[derive(Default)]
pub(crate) struct RawItem<'a> {
    id: Option<Loose<'a>>,
    name: Option<Loose<'a>>,
    title: Option<Loose<'a>>,
    description: Option<Loose<'a>>,
    mime_type: Option<Loose<'a>>,
    size: Option<Loose<'a>>,
    annotations: Option<RawAnnotations<'a>>,
    ignored_keys: u32,
}

pub(crate) enum RawAnnotations<'a> {
    NotObject,
    Obj { audience: Option<Loose<'a>>, priority: Option<Loose<'a>>, last_modified: Option<Loose<'a>> },
}

impl<'de> de::Deserialize<'de> for RawAnnotations<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawAnnotations<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("annotations")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut audience, mut priority, mut last_modified) = (None, None, None);
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    let slot = match &*k {
                        "audience" => &mut audience,
                        "priority" => &mut priority,
                        "lastModified" => &mut last_modified,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    if slot.is_some() {
                        return Err(de::Error::custom("duplicate key"));
                    }
                    *slot = Some(map.next_value::<Loose<'de>>()?);
                }
                Ok(RawAnnotations::Obj { audience, priority, last_modified })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(RawAnnotations::NotObject)
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(RawAnnotations::NotObject)
            }
        }
        d.deserialize_any(V)
    }
}

/// Shared parse context: which list, and the first structural problem found (static text only).
pub(crate) struct Ctx {
    pub kind: ListKind,
    pub problem: Cell<Option<&'static str>>,
}

impl Ctx {
    fn fail<E: de::Error>(&self, why: &'static str) -> E {
        if self.problem.get().is_none() {
            self.problem.set(Some(why));
        }
        E::custom(why)
    }
}

struct ItemSeed<'c>(&'c Ctx);

impl<'de> DeserializeSeed<'de> for ItemSeed<'_> {
    type Value = RawItem<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed<'_> {
    type Value = RawItem<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an item object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let id_key = self.0.kind.id_key();
        let mut item = RawItem::default();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let slot = match &*k {
                k if k == id_key => &mut item.id,
                "name" => &mut item.name,
                "title" => &mut item.title,
                "description" => &mut item.description,
                "mimeType" => &mut item.mime_type,
                "size" if self.0.kind == ListKind::Resources => &mut item.size,
                "annotations" => {
                    if item.annotations.is_some() {
                        return Err(self.0.fail("an item has a duplicate key"));
                    }
                    item.annotations = Some(map.next_value::<RawAnnotations<'de>>()?);
                    continue;
                }
                _ => {
                    item.ignored_keys += 1;
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(self.0.fail("an item has a duplicate key"));
            }
            *slot = Some(map.next_value::<Loose<'de>>()?);
        }
        Ok(item)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(self.0.fail("an item is not an object"))
    }
}

struct ItemsSeed<'c>(&'c Ctx);

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = Vec<RawItem<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = Vec<RawItem<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of items")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(ItemSeed(self.0))? {
            out.push(item);
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(self.0.fail("the item list is not an array"))
    }
}

/// A parsed page before projection.
pub(crate) struct RawPage<'a> {
    pub items: Vec<RawItem<'a>>,
    pub next_cursor: Option<Loose<'a>>,
    pub result_type: Option<Loose<'a>>,
    pub ttl_ms: Option<Loose<'a>>,
    pub cache_scope: Option<Loose<'a>>,
}

struct PageSeed<'c>(&'c Ctx);

impl<'de> DeserializeSeed<'de> for PageSeed<'_> {
    type Value = RawPage<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PageSeed<'_> {
    type Value = RawPage<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a result object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let list_key = self.0.kind.list_key();
        let mut items = None;
        let (mut next_cursor, mut result_type, mut ttl_ms, mut cache_scope) = (None, None, None, None);
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let slot = match &*k {
                k if k == list_key => {
                    if items.is_some() {
                        return Err(self.0.fail("the result has a duplicate key"));
                    }
                    items = Some(map.next_value_seed(ItemsSeed(self.0))?);
                    continue;
                }
                "nextCursor" => &mut next_cursor,
                "resultType" => &mut result_type,
                "ttlMs" => &mut ttl_ms,
                "cacheScope" => &mut cache_scope,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(self.0.fail("the result has a duplicate key"));
            }
            *slot = Some(map.next_value::<Loose<'de>>()?);
        }
        let Some(items) = items else {
            return Err(self.0.fail("the result has no item list"));
        };
        Ok(RawPage { items, next_cursor, result_type, ttl_ms, cache_scope })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(self.0.fail("the result is not an object"))
    }
}

/// Replaces every lone UTF-16 surrogate escape (`\uD800`…`\uDFFF` not part of a valid pair) with
/// `\uFFFD`. Returns `None` when the text has none (the common case: no copy).
pub(crate) fn replace_lone_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut first = text.find('\\')?; // memchr: pages without escapes cost one fast scan
    let hex4 = |i: usize| -> Option<u16> {
        let s = text.get(i..i + 4)?;
        u16::from_str_radix(s, 16).ok().filter(|_| s.bytes().all(|c| c.is_ascii_hexdigit()))
    };
    // Collect the byte offsets of lone-surrogate escapes (each 6 bytes long).
    let mut lone = Vec::new();
    let mut i = first;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2; // any other escape, including "\\"
            continue;
        }
        match hex4(i + 2) {
            Some(u @ 0xD800..=0xDBFF) => {
                let low = if b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') { hex4(i + 8) } else { None };
                if matches!(low, Some(0xDC00..=0xDFFF)) {
                    i += 12;
                } else {
                    let _ = u;
                    lone.push(i);
                    i += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                lone.push(i);
                i += 6;
            }
            _ => i += 2,
        }
    }
    if lone.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    first = 0;
    for at in lone {
        out.push_str(&text[first..at]);
        out.push_str("\\uFFFD");
        first = at + 6;
    }
    out.push_str(&text[first..]);
    Some(out)
}

/// Parses a page. On a structural problem returns the static reason.
pub(crate) fn parse<'a>(text: &'a str, ctx: &Ctx) -> Result<RawPage<'a>, &'static str> {
    let mut de = serde_json::Deserializer::from_str(text);
    let page = PageSeed(ctx).deserialize(&mut de).and_then(|p| de.end().map(|()| p));
    page.map_err(|_| ctx.problem.get().unwrap_or("the page is not valid JSON"))
}

/// The outcome of projecting one page's items.
pub(crate) struct Projected {
    pub items: Vec<Item>,
    pub bytes: usize,
}

/// Validates and projects the items of one page. A structural problem (missing or non-string
/// identifier or name) fails the page; lenient fields are dropped and counted.
pub(crate) fn project(
    kind: ListKind,
    server: &str,
    raw: Vec<RawItem<'_>>,
    diag: &mut Diagnostics,
) -> Result<Projected, &'static str> {
    let mut items = Vec::with_capacity(raw.len());
    let mut bytes = 0usize;
    for r in raw {
        let id = match r.id {
            Some(Loose::Str(s)) => s,
            _ => {
                return Err(match kind {
                    ListKind::ResourceTemplates => "an item has no string \"uriTemplate\"",
                    ListKind::Resources => "an item has no string \"uri\"",
                })
            }
        };
        let name = match r.name {
            Some(Loose::Str(s)) => s,
            _ => return Err("an item has no string \"name\""),
        };
        diag.ignored_keys += u64::from(r.ignored_keys);
        let id_ok = match kind {
            ListKind::ResourceTemplates => sanitize::check_uri_template(&id).is_ok(),
            ListKind::Resources => !id.is_empty() && sanitize::check_uri_chars(&id).is_ok(),
        };
        if !id_ok {
            *diag.dropped_items.entry(kind.invalid_id_reason()).or_default() += 1;
            continue;
        }
        let name = owned(sanitize::label(&name), diag);
        let title = opt_text(r.title, "title", sanitize::label, diag);
        let description = opt_text(r.description, "description", sanitize::text, diag);
        let mime_type = opt_text(r.mime_type, "mimeType", sanitize::label, diag);
        let annotations = r.annotations.and_then(|a| annotations(a, diag));
        let item = match kind {
            ListKind::ResourceTemplates => Item::Template(ResourceTemplate {
                uri_template: id.into_owned(),
                name,
                title,
                description,
                mime_type,
                annotations,
                server: server.to_owned(),
            }),
            ListKind::Resources => {
                let size = match r.size {
                    None => None,
                    Some(v) => match v.as_integer() {
                        Some(v) if (0..=i128::from(u64::MAX)).contains(&v) => Some(v as u64),
                        _ => {
                            drop_field(diag, "size");
                            None
                        }
                    },
                };
                Item::Resource(Resource {
                    uri: id.into_owned(),
                    name,
                    title,
                    description,
                    mime_type,
                    size,
                    annotations,
                    server: server.to_owned(),
                })
            }
        };
        bytes += item.json_len();
        items.push(item);
    }
    Ok(Projected { items, bytes })
}

fn owned(s: Cow<'_, str>, diag: &mut Diagnostics) -> String {
    match s {
        Cow::Borrowed(b) => b.to_owned(),
        Cow::Owned(o) => {
            diag.sanitized_strings += 1;
            o
        }
    }
}

pub(crate) fn drop_field(diag: &mut Diagnostics, field: &'static str) {
    *diag.dropped_fields.entry(field).or_default() += 1;
}

fn opt_text(
    v: Option<Loose<'_>>,
    field: &'static str,
    clean: fn(&str) -> Cow<'_, str>,
    diag: &mut Diagnostics,
) -> Option<String> {
    match v {
        None => None,
        Some(Loose::Str(s)) => Some(owned(clean(&s), diag)),
        Some(_) => {
            drop_field(diag, field);
            None
        }
    }
}

fn annotations(a: RawAnnotations<'_>, diag: &mut Diagnostics) -> Option<Annotations> {
    let RawAnnotations::Obj { audience, priority, last_modified } = a else {
        drop_field(diag, "annotations");
        return None;
    };
    let mut out = Annotations::default();
    if let Some(v) = audience {
        let roles = match v {
            Loose::Arr(xs) => xs
                .iter()
                .map(|x| match x {
                    Loose::Str(s) => Role::parse(s),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        match roles {
            Some(r) => out.audience = Some(r),
            None => drop_field(diag, "annotations.audience"),
        }
    }
    if let Some(v) = priority {
        let p = match v {
            Loose::Int(i) => Some(i as f64),
            Loose::Float(f) => Some(f),
            _ => None,
        };
        match p.filter(|p| (0.0..=1.0).contains(p)) {
            Some(p) => out.priority = Some(p),
            None => drop_field(diag, "annotations.priority"),
        }
    }
    if let Some(v) = last_modified {
        match v {
            Loose::Str(s) if is_rfc3339_date_time(&s) => out.last_modified = Some(s.into_owned()),
            _ => drop_field(diag, "annotations.lastModified"),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// RFC 3339 `date-time` (ISO 8601 with a time zone): `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
/// `T`/`Z` may be lower case, as RFC 3339 allows. Calendar ranges are checked (leap seconds
/// allowed as `:60`), days against the month and leap years.
pub fn is_rfc3339_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0, |a, d| a * 10 + u32::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) =
        (num(0..4), num(5..7), num(8..10), num(11..13), num(14..16), num(17..19))
    else {
        return false;
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return false;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || min > 59 || sec > 60 {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let (Some(oh), Some(om)) = (num(i + 1..i + 3), num(i + 4..i + 6)) else { return false };
            b.get(i + 3) == Some(&b':') && i + 6 == b.len() && oh <= 23 && om <= 59
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times() {
        for ok in [
            "2025-01-01T00:00:00Z",
            "2024-02-29T23:59:60.123+05:30",
            "2025-01-01t00:00:00z",
            "2025-12-31T10:00:00-00:00",
        ] {
            assert!(is_rfc3339_date_time(ok), "{ok}");
        }
        for bad in [
            "2025-01-12",
            "2025-01-01T00:00:00",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-01-01 00:00:00Z",
            "2025-01-01T24:00:00Z",
            "2025-01-01T00:00:00.Z",
            "2025-01-01T00:00:00+0530",
            "2025-01-01T00:00:00Zjunk",
            "yesterday",
        ] {
            assert!(!is_rfc3339_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        assert_eq!(replace_lone_surrogates(r#"{"a":"x"}"#), None);
        assert_eq!(replace_lone_surrogates(r#""\ud83d\ude00""#), None);
        assert_eq!(replace_lone_surrogates(r#""\\ud800""#), None);
        assert_eq!(replace_lone_surrogates(r#""a\ud800b""#).as_deref(), Some(r#""a\uFFFDb""#));
        assert_eq!(replace_lone_surrogates(r#""\udc00\ud800""#).as_deref(), Some(r#""\uFFFD\uFFFD""#));
        assert_eq!(replace_lone_surrogates(r#""\ud800\u0041""#).as_deref(), Some(r#""\uFFFD\u0041""#));
    }
}
