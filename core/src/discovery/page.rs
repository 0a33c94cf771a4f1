//! One page in one pass: strict structure, lenient optional fields, projection, sanitizing and
//! byte counting.
//!
//! serde_json reads the page into typed visitors that borrow every string from the page text: no
//! `serde_json::Value`, no intermediate tree, no per-page vector of raw items. Each item is
//! validated, sanitized and projected into the pager's list as soon as its object ends, so a
//! string is copied once, into the item that keeps it. Its compact-JSON size is counted as it is
//! projected, without serializing: a string borrowed from the page had no escapes there (serde_json
//! hands out a slice only then, and raw controls are invalid JSON), so its JSON form is its bytes
//! in quotes; only strings that were unescaped or changed by sanitizing are scanned.
//!
//! Field values are dispatched on their JSON type (`deserialize_any`, the only serde entry that
//! reads a value whose type decides the rule), straight into the typed value the rule needs.
//!
//! The rules' precedence is the pager's (`Pager::handle_outcome`): an item that breaks the structure
//! (no string identifier or name) is recorded, not failed on, so a JSON or structure error later
//! in the page, the item bound and the result-level fields still come first. Items after it, and
//! items past the item bound, are parsed but not projected: the page fails either way. Problems
//! are static strings, never server text.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::item::{self, Annotations, Diagnostics, Item, ListKind, Resource, ResourceTemplate, Role, Roles};
use super::text::{Text, Verbatim};
use crate::sanitize;

/// A field as the rules see it.
#[derive(Debug, Default)]
pub(crate) enum Field<T> {
    /// The key is not there.
    #[default]
    Absent,
    /// The value has the type the rule reads.
    Valid(T),
    /// Any other value (lenient fields drop it and count the drop).
    Invalid,
}

/// The visitor methods for the JSON types a visitor does not read: the value is consumed and
/// becomes `$other`. Arrays are read one level deep (scalars parsed, containers skipped without
/// recursion), objects skipped: no nesting depth can fail the page through an optional field.
macro_rules! other_types {
    ($other:expr) => {
        other_types!($other; str unit bool num seq map);
    };
    ($other:expr; $($t:ident)*) => {
        $(other_types!(@$t $other);)*
    };
    (@str $other:expr) => {
        fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
    (@unit $other:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
    (@bool $other:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
    (@num $other:expr) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
    (@seq $other:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<Skip>()?.is_some() {}
            Ok($other)
        }
    };
    (@map $other:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($other)
        }
    };
}

/// The visitor methods for the JSON types a structural visitor refuses: the page fails with
/// `$why`.
macro_rules! refuse_types {
    ($why:expr; $($t:ident)*) => {
        $(refuse_types!(@$t $why);)*
    };
    (@str $why:expr) => {
        fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
    };
    (@unit $why:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
    };
    (@bool $why:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
    };
    (@num $why:expr) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(self.0.fail($why))
        }
    };
    (@seq $why:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(self.0.fail($why))
        }
    };
    (@map $why:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(self.0.fail($why))
        }
    };
}

/// An array element inside a value that is not read: scalars are parsed (so a number serde_json
/// cannot represent still fails the page, as anywhere else), containers skipped.
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Skip)
            }
            other_types!(Skip; str unit bool num map);
        }
        d.deserialize_any(V)
    }
}

/// A string field: borrowed from the page when it has no escapes.
struct Str<'a>(Field<Cow<'a, str>>);

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Field::Valid(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Field::Valid(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Field::Valid(Cow::Owned(v))))
            }
            other_types!(Str(Field::Invalid); unit bool num seq map);
        }
        d.deserialize_any(V)
    }
}

/// `nextCursor`: a string, or `null` (the end), or anything else.
struct Cursor<'a>(Field<Option<Cow<'a, str>>>);

impl<'de> de::Deserialize<'de> for Cursor<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cursor<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cursor(Field::Valid(Some(Cow::Borrowed(v)))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cursor(Field::Valid(Some(Cow::Owned(v.to_owned())))))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Cursor(Field::Valid(None)))
            }
            other_types!(Cursor(Field::Invalid); bool num seq map);
        }
        d.deserialize_any(V)
    }
}

/// An integer (`size`, `ttlMs`), including a whole-number float such as `3.0`: JSON Schema counts
/// it as an integer, and hosts whose SDK parses JSON first cannot tell the two apart.
struct Integer(Field<i128>);

impl<'de> de::Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Integer;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Integer(Field::Valid(i128::from(v))))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Integer(Field::Valid(i128::from(v))))
            }
            fn visit_f64<E: de::Error>(self, f: f64) -> Result<Self::Value, E> {
                let whole = f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15;
                Ok(Integer(if whole { Field::Valid(f as i128) } else { Field::Invalid }))
            }
            other_types!(Integer(Field::Invalid); str unit bool seq map);
        }
        d.deserialize_any(V)
    }
}

/// Any number (`annotations.priority`).
struct Number(Field<f64>);

impl<'de> de::Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Number(Field::Valid(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Number(Field::Valid(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Number(Field::Valid(v)))
            }
            other_types!(Number(Field::Invalid); str unit bool seq map);
        }
        d.deserialize_any(V)
    }
}

/// `annotations.audience`: valid when it is an array of `"user"` / `"assistant"` only.
struct Audience(Field<Roles>);

impl<'de> de::Deserialize<'de> for Audience {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// One element: a role, or `None` for any other value (read one level deep).
        struct Element(Option<Role>);
        impl<'de> de::Deserialize<'de> for Element {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Element;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("any JSON value")
                    }
                    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                        Ok(Element(Role::parse(v)))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                        Ok(Element(Role::parse(v)))
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        Ok(Element(None))
                    }
                    other_types!(Element(None); unit bool num map);
                }
                d.deserialize_any(V)
            }
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Audience;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut roles = Some(Roles::default());
                while let Some(Element(role)) = seq.next_element::<Element>()? {
                    match (&mut roles, role) {
                        (Some(roles), Some(role)) => roles.push(role),
                        (roles, _) => *roles = None,
                    }
                }
                Ok(Audience(roles.map_or(Field::Invalid, Field::Valid)))
            }
            other_types!(Audience(Field::Invalid); str unit bool num map);
        }
        d.deserialize_any(V)
    }
}

/// `annotations`: an object of lenient fields, or any other value (dropped whole).
enum RawAnnotations<'a> {
    NotObject,
    Object { audience: Field<Roles>, priority: Field<f64>, last_modified: Field<Cow<'a, str>> },
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
                let (mut audience, mut priority, mut last_modified) = (Field::Absent, Field::Absent, Field::Absent);
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    let fresh = match &*key {
                        "audience" => read::<_, Audience>(&mut map, &mut audience)?,
                        "priority" => read::<_, Number>(&mut map, &mut priority)?,
                        "lastModified" => read::<_, Str<'de>>(&mut map, &mut last_modified)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            true
                        }
                    };
                    if !fresh {
                        return Err(de::Error::custom("duplicate key"));
                    }
                }
                Ok(RawAnnotations::Object { audience, priority, last_modified })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(RawAnnotations::NotObject)
            }
            other_types!(RawAnnotations::NotObject; str unit bool num);
        }
        d.deserialize_any(V)
    }
}

/// A value type read into a [`Field`].
trait FieldValue<'de>: de::Deserialize<'de> {
    type Out;
    fn field(self) -> Field<Self::Out>;
}

macro_rules! field_value {
    ($($t:ty => $out:ty),*) => {$(
        impl<'de> FieldValue<'de> for $t {
            type Out = $out;
            fn field(self) -> Field<$out> {
                self.0
            }
        }
    )*};
}

field_value!(Str<'de> => Cow<'de, str>, Cursor<'de> => Option<Cow<'de, str>>, Integer => i128, Number => f64, Audience => Roles);

/// Reads the value of a key into `slot`. Returns false, reading nothing, when the key was
/// already there (a duplicate key: the caller fails before looking at the value).
#[inline(always)]
fn read<'de, A: MapAccess<'de>, V: FieldValue<'de>>(map: &mut A, slot: &mut Field<V::Out>) -> Result<bool, A::Error> {
    if !matches!(slot, Field::Absent) {
        return Ok(false);
    }
    *slot = map.next_value::<V>()?.field();
    Ok(true)
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

/// The fields of one item as parsed, before the rules.
#[derive(Default)]
struct RawItem<'a> {
    id: Field<Cow<'a, str>>,
    name: Field<Cow<'a, str>>,
    title: Field<Cow<'a, str>>,
    description: Field<Cow<'a, str>>,
    mime_type: Field<Cow<'a, str>>,
    size: Field<i128>,
    annotations: Option<RawAnnotations<'a>>,
    ignored_keys: u32,
}

/// The lenient fields a drop is counted under, in [`Counts::dropped`] order.
#[derive(Clone, Copy)]
enum Lenient {
    Title,
    Description,
    MimeType,
    Size,
    Annotations,
    Audience,
    Priority,
    LastModified,
}

const LENIENT_NAMES: [&str; 8] = [
    "title",
    "description",
    "mimeType",
    "size",
    "annotations",
    "annotations.audience",
    "annotations.priority",
    "annotations.lastModified",
];

/// What one page's items add to the diagnostics, merged by the pager once the page's fate is known.
#[derive(Default)]
pub(crate) struct Counts {
    ignored_keys: u64,
    sanitized_strings: u64,
    invalid_ids: u64,
    dropped: [u64; LENIENT_NAMES.len()],
}

impl Counts {
    fn drop_field(&mut self, field: Lenient) {
        self.dropped[field as usize] += 1;
    }

    /// Adds these counts to `diag`.
    pub(crate) fn merge_into(&self, kind: ListKind, diag: &mut Diagnostics) {
        diag.ignored_keys += self.ignored_keys;
        diag.sanitized_strings += self.sanitized_strings;
        if self.invalid_ids > 0 {
            *diag.dropped_items.entry(kind.invalid_id_reason()).or_default() += self.invalid_ids;
        }
        for (&n, name) in self.dropped.iter().zip(LENIENT_NAMES) {
            if n > 0 {
                *diag.dropped_fields.entry(name).or_default() += n;
            }
        }
    }
}

/// Counts a dropped result-level field (`ttlMs`, `cacheScope`).
pub(crate) fn drop_field(diag: &mut Diagnostics, field: &'static str) {
    *diag.dropped_fields.entry(field).or_default() += 1;
}

/// Where a page's items go: validated, sanitized, projected and counted as they are parsed.
pub(crate) struct Sink<'p> {
    kind: ListKind,
    server: &'p str,
    /// The compact JSON length of `server` (the same for every item).
    server_len: usize,
    /// How many more items the item bound allows.
    room: usize,
    /// The pager's items: this page's are appended (a failed traversal drops them all).
    items: &'p mut Vec<Item>,
    /// The listing's text: every kept string is appended once (it starts with `server`); the
    /// items' strings are pending ranges of it until the pager's `finish`.
    text: &'p mut String,
    /// Items in the page's array (the server's count, dropped items included).
    pub count: usize,
    /// Projected bytes of this page's kept items.
    pub bytes: usize,
    /// The first item without a string identifier or name.
    pub item_problem: Option<&'static str>,
    /// Drops and changes, counted over the items before `item_problem`.
    pub counts: Counts,
    /// The first structural problem of the page (fails the parse).
    problem: Option<&'static str>,
    /// The last kept `priority` (its bits) and its JSON length: pages tend to repeat one value.
    priority_len: Option<(u64, usize)>,
    /// Kept strings that are a host's own, unchanged, when the pager notes them
    /// ([`super::Pager::handle_parsed_page_noting`]).
    pub(crate) verbatim: Option<Vec<Verbatim>>,
    /// Only strings of at least this many bytes are noted.
    pub(crate) verbatim_min: usize,
    /// A borrowed string is a slice of the page's JSON text (false: of a host's parsed values,
    /// which may hold what JSON escapes).
    text_slices: bool,
}

/// A page's items as the sink counted them (see [`Sink`]'s fields of the same names).
pub(crate) struct Tally {
    pub count: usize,
    pub bytes: usize,
    pub item_problem: Option<&'static str>,
    pub counts: Counts,
}

impl<'p> Sink<'p> {
    pub(crate) fn new(
        kind: ListKind,
        server: &'p str,
        server_len: usize,
        room: usize,
        items: &'p mut Vec<Item>,
        text: &'p mut String,
    ) -> Sink<'p> {
        debug_assert!(text.starts_with(server), "the listing's text starts with the server's name");
        Sink {
            kind,
            server,
            server_len,
            room,
            items,
            text,
            count: 0,
            bytes: 0,
            item_problem: None,
            counts: Counts::default(),
            problem: None,
            priority_len: None,
            verbatim: None,
            verbatim_min: 0,
            text_slices: true,
        }
    }

    /// The compact JSON length of a string as parsed: a slice of the page's text (no escapes
    /// there, so nothing to escape) is its bytes in quotes; any other is scanned.
    #[allow(clippy::ptr_arg)] // which variant the `Cow` is, is the point
    fn raw_len(&self, s: &Cow<'_, str>) -> usize {
        match s {
            Cow::Borrowed(b) if self.text_slices => b.len() + 2,
            _ => item::json_str_len(s),
        }
    }

    /// What the page's items counted, the sink given up (its borrows of the pager end).
    pub(crate) fn tally(self) -> Tally {
        Tally { count: self.count, bytes: self.bytes, item_problem: self.item_problem, counts: self.counts }
    }

    fn fail<E: de::Error>(&mut self, why: &'static str) -> E {
        self.problem.get_or_insert(why);
        E::custom(why)
    }

    /// Applies the item rules to one parsed item and keeps it when it survives.
    fn take(&mut self, r: &mut RawItem<'_>) {
        self.count += 1;
        // After a broken item, or past the item bound, the page fails whatever follows.
        if self.item_problem.is_some() || self.count > self.room {
            return;
        }
        let Field::Valid(id) = &r.id else {
            self.item_problem = Some(match self.kind {
                ListKind::ResourceTemplates => "an item has no string \"uriTemplate\"",
                ListKind::Resources => "an item has no string \"uri\"",
            });
            return;
        };
        let Field::Valid(name) = &r.name else {
            self.item_problem = Some("an item has no string \"name\"");
            return;
        };
        self.counts.ignored_keys += u64::from(r.ignored_keys);
        let id_ok = match self.kind {
            ListKind::ResourceTemplates => crate::template::check_uri_template(id).is_ok(),
            ListKind::Resources => !id.is_empty() && sanitize::check_uri_chars(id).is_ok(),
        };
        if !id_ok {
            self.counts.invalid_ids += 1;
            return;
        }
        let mut len = ObjectLen::default();
        len.field(self.kind.id_key(), self.raw_len(id));
        let name = self.clean(name, sanitize::label, &mut len, "name");
        let title = self.clean_opt(&r.title, Lenient::Title, sanitize::label, &mut len, "title");
        let description = self.clean_opt(&r.description, Lenient::Description, sanitize::text, &mut len, "description");
        let mime_type = self.clean_opt(&r.mime_type, Lenient::MimeType, sanitize::label, &mut len, "mimeType");
        let size = match (self.kind, &r.size) {
            (ListKind::ResourceTemplates, _) | (_, Field::Absent) => None,
            (_, &Field::Valid(v)) if (0..=i128::from(u64::MAX)).contains(&v) => {
                len.field("size", decimal_len(v as u64));
                Some(v as u64)
            }
            _ => {
                self.counts.drop_field(Lenient::Size);
                None
            }
        };
        let annotations = r.annotations.take().and_then(|a| self.annotations(a));
        if let Some((_, a_len)) = &annotations {
            len.field("annotations", *a_len);
        }
        len.field("server", self.server_len);
        let annotations = annotations.map(|(a, _)| a);
        let kept = self.keep(id);
        self.note(id, &kept);
        let id = kept;
        let server = Text::pending(0..self.server.len());
        let item = match self.kind {
            ListKind::ResourceTemplates => Item::Template(ResourceTemplate {
                uri_template: id,
                name,
                title,
                description,
                mime_type,
                annotations,
                server,
            }),
            ListKind::Resources => {
                Item::Resource(Resource { uri: id, name, title, description, mime_type, size, annotations, server })
            }
        };
        debug_assert_eq!(len.total(), item.json_len_on(Some(self.text)), "byte count without serializing");
        self.bytes += len.total();
        self.items.push(item);
    }

    /// Notes `kept` when it is `s`, a string the host lent, unchanged and long enough (see
    /// `verbatim`).
    #[allow(clippy::ptr_arg)] // which variant the `Cow` is, is the point
    fn note(&mut self, s: &Cow<'_, str>, kept: &Text) {
        match (&mut self.verbatim, s) {
            (Some(noted), Cow::Borrowed(b)) if b.len() >= self.verbatim_min => {
                noted.push(Verbatim { range: kept.range(), source: b.as_ptr() as usize });
            }
            _ => {}
        }
    }

    /// Appends `s` to the listing's text: its pending range there.
    fn keep(&mut self, s: &str) -> Text {
        let start = self.text.len();
        self.text.push_str(s);
        Text::pending(start..self.text.len())
    }

    /// Sanitizes a string and keeps it in the listing's text, counting a change and its JSON
    /// length.
    #[allow(clippy::ptr_arg)] // borrowed from the page or unescaped: `raw_len` reads which
    #[inline(always)] // four calls per item: the call costs more than the common case's work
    fn clean(
        &mut self,
        s: &Cow<'_, str>,
        sanitize: impl Fn(&str) -> Cow<'_, str>,
        len: &mut ObjectLen,
        key: &'static str,
    ) -> Text {
        let changed = match sanitize(s) {
            Cow::Borrowed(_) => None,
            Cow::Owned(o) => Some(o),
        };
        match changed {
            None => {
                len.field(key, self.raw_len(s));
                let kept = self.keep(s);
                self.note(s, &kept);
                kept
            }
            Some(o) => {
                self.counts.sanitized_strings += 1;
                len.field(key, item::json_str_len(&o));
                self.keep(&o)
            }
        }
    }

    fn clean_opt(
        &mut self,
        v: &Field<Cow<'_, str>>,
        field: Lenient,
        sanitize: impl Fn(&str) -> Cow<'_, str>,
        len: &mut ObjectLen,
        key: &'static str,
    ) -> Option<Text> {
        match v {
            Field::Absent => None,
            Field::Valid(s) => Some(self.clean(s, sanitize, len, key)),
            Field::Invalid => {
                self.counts.drop_field(field);
                None
            }
        }
    }

    /// The kept annotations and their JSON length; `None` when none survived.
    fn annotations(&mut self, a: RawAnnotations<'_>) -> Option<(Annotations, usize)> {
        let RawAnnotations::Object { audience, priority, last_modified } = a else {
            self.counts.drop_field(Lenient::Annotations);
            return None;
        };
        let mut out = Annotations::default();
        let mut len = ObjectLen::default();
        match audience {
            Field::Absent => {}
            Field::Valid(roles) => {
                let inner: usize = roles.iter().map(|r| if *r == Role::User { 6 } else { 11 }).sum();
                len.field("audience", 2 + inner + roles.len().saturating_sub(1));
                out.audience = Some(roles);
            }
            Field::Invalid => self.counts.drop_field(Lenient::Audience),
        }
        match priority {
            Field::Absent => {}
            Field::Valid(p) if (0.0..=1.0).contains(&p) => {
                let p_len = match self.priority_len {
                    Some((bits, n)) if bits == p.to_bits() => n,
                    _ => {
                        let n = item::f64_len(p);
                        self.priority_len = Some((p.to_bits(), n));
                        n
                    }
                };
                len.field("priority", p_len);
                out.priority = Some(p);
            }
            _ => self.counts.drop_field(Lenient::Priority),
        }
        match last_modified {
            Field::Valid(s) if is_rfc3339_date_time(&s) => {
                len.field("lastModified", self.raw_len(&s));
                out.last_modified = Some(self.keep(&s));
            }
            Field::Absent => {}
            _ => self.counts.drop_field(Lenient::LastModified),
        }
        (!out.is_empty()).then(|| (out, len.total()))
    }
}

fn decimal_len(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The length of a compact JSON object, field by field: each field with the `{` or `,` before it.
#[derive(Default)]
struct ObjectLen {
    n: usize,
}

impl ObjectLen {
    fn field(&mut self, key: &str, value_len: usize) {
        self.n += key.len() + 4 + value_len; // ,"key":value
    }

    fn total(&self) -> usize {
        if self.n == 0 {
            2
        } else {
            self.n + 1
        } // and the closing brace
    }
}

/// The keys an item's projection reads.
#[derive(Clone, Copy)]
enum ItemKey {
    UriTemplate,
    Uri,
    Name,
    Title,
    Description,
    MimeType,
    Size,
    Annotations,
    Other,
}

impl ItemKey {
    /// By length, then by text (one comparison per key, not one per candidate).
    #[inline(always)]
    fn of(key: &str) -> ItemKey {
        let is = |name: &str, k: ItemKey| if key == name { k } else { ItemKey::Other };
        match key.len() {
            3 => is("uri", ItemKey::Uri),
            4 if key.as_bytes()[0] == b'n' => is("name", ItemKey::Name),
            4 => is("size", ItemKey::Size),
            5 => is("title", ItemKey::Title),
            8 => is("mimeType", ItemKey::MimeType),
            11 => match key.as_bytes()[0] {
                b'u' => is("uriTemplate", ItemKey::UriTemplate),
                b'd' => is("description", ItemKey::Description),
                _ => is("annotations", ItemKey::Annotations),
            },
            _ => ItemKey::Other,
        }
    }
}

/// One item: fields read by key, each value into the type its rule reads.
struct ItemSeed<'s, 'p>(&'s mut Sink<'p>);

impl<'de> DeserializeSeed<'de> for ItemSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an item object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let kind = self.0.kind;
        let mut item = RawItem::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let fresh = match ItemKey::of(&key) {
                ItemKey::UriTemplate if kind == ListKind::ResourceTemplates => {
                    read::<_, Str<'de>>(&mut map, &mut item.id)?
                }
                ItemKey::Uri if kind == ListKind::Resources => read::<_, Str<'de>>(&mut map, &mut item.id)?,
                ItemKey::Name => read::<_, Str<'de>>(&mut map, &mut item.name)?,
                ItemKey::Title => read::<_, Str<'de>>(&mut map, &mut item.title)?,
                ItemKey::Description => read::<_, Str<'de>>(&mut map, &mut item.description)?,
                ItemKey::MimeType => read::<_, Str<'de>>(&mut map, &mut item.mime_type)?,
                ItemKey::Size if kind == ListKind::Resources => read::<_, Integer>(&mut map, &mut item.size)?,
                ItemKey::Annotations => {
                    if item.annotations.is_some() {
                        return Err(self.0.fail("an item has a duplicate key"));
                    }
                    item.annotations = Some(map.next_value::<RawAnnotations<'de>>()?);
                    true
                }
                _ => {
                    item.ignored_keys += 1;
                    map.next_value::<IgnoredAny>()?;
                    true
                }
            };
            if !fresh {
                return Err(self.0.fail("an item has a duplicate key"));
            }
        }
        self.0.take(&mut item);
        Ok(())
    }
    refuse_types!("an item is not an object"; str unit bool num seq);
}

/// The item array: each element projected as soon as it is read.
struct ItemsSeed<'s, 'p>(&'s mut Sink<'p>);

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of items")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(ItemSeed(&mut *self.0))?.is_some() {}
        Ok(())
    }
    refuse_types!("the item list is not an array"; str unit bool num map);
}

/// The result-level fields of a page (its items went to the [`Sink`]).
pub(crate) struct Page<'a> {
    pub next_cursor: Field<Option<Cow<'a, str>>>,
    pub result_type: Field<Cow<'a, str>>,
    pub ttl_ms: Field<i128>,
    pub cache_scope: Field<Cow<'a, str>>,
}

struct PageSeed<'s, 'p>(&'s mut Sink<'p>);

impl<'de> DeserializeSeed<'de> for PageSeed<'_, '_> {
    type Value = Page<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PageSeed<'_, '_> {
    type Value = Page<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a result object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let list_key = self.0.kind.list_key();
        let mut has_items = false;
        let mut page = Page {
            next_cursor: Field::Absent,
            result_type: Field::Absent,
            ttl_ms: Field::Absent,
            cache_scope: Field::Absent,
        };
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let fresh = match &*key {
                k if k == list_key => {
                    if has_items {
                        return Err(self.0.fail("the result has a duplicate key"));
                    }
                    has_items = true;
                    map.next_value_seed(ItemsSeed(&mut *self.0))?;
                    true
                }
                "nextCursor" => read::<_, Cursor<'de>>(&mut map, &mut page.next_cursor)?,
                "resultType" => read::<_, Str<'de>>(&mut map, &mut page.result_type)?,
                "ttlMs" => read::<_, Integer>(&mut map, &mut page.ttl_ms)?,
                "cacheScope" => read::<_, Str<'de>>(&mut map, &mut page.cache_scope)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    true
                }
            };
            if !fresh {
                return Err(self.0.fail("the result has a duplicate key"));
            }
        }
        if !has_items {
            return Err(self.0.fail("the result has no item list"));
        }
        Ok(page)
    }
    refuse_types!("the result is not an object"; str unit bool num seq);
}

/// Parses a page, projecting its items into `sink`. On a structural problem returns the static
/// reason.
pub(crate) fn parse<'a>(text: &'a str, sink: &mut Sink<'_>) -> Result<Page<'a>, &'static str> {
    let mut de = serde_json::Deserializer::from_str(text);
    let page = PageSeed(&mut *sink).deserialize(&mut de).and_then(|p| de.end().map(|()| p));
    page.map_err(|_| sink.problem.unwrap_or("the page is not valid JSON"))
}

/// Parses a page the host holds as its own parsed values, read through `de` (any serde
/// deserializer: Python's dicts and lists, say), with the same visitors as its JSON text.
/// `Err(Some(why))`: the page breaks a rule, as its text would. `Err(None)`: `de` could not present
/// a value as a JSON value (the host then hands the page's text instead).
pub(crate) fn parse_from<'de, D: Deserializer<'de>>(
    de: D,
    sink: &mut Sink<'_>,
) -> Result<Page<'de>, Option<&'static str>> {
    sink.text_slices = false;
    PageSeed(&mut *sink).deserialize(de).map_err(|_| sink.problem)
}

/// Replaces every lone UTF-16 surrogate escape (`\uD800`…`\uDFFF` not part of a valid pair) with
/// `\uFFFD`. Returns `None` when the text has none (the common case: no copy). Jumps from one
/// backslash to the next (memchr): a page without escapes costs one vectorised scan.
pub(crate) fn replace_lone_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let hex4 = |i: usize| -> Option<u16> {
        let s = b.get(i..i + 4)?;
        s.iter().all(u8::is_ascii_hexdigit).then(|| s.iter().fold(0u16, |a, &d| (a << 4) | hex_digit(d)))
    };
    // The byte offsets of lone-surrogate escapes (each 6 bytes long).
    let mut lone = Vec::new();
    let mut i = memchr::memchr(b'\\', b)?;
    loop {
        // `b[i]` is a backslash that starts an escape.
        let step = match (b.get(i + 1), hex4(i + 2)) {
            (Some(b'u'), Some(0xD800..=0xDBFF)) => {
                let low = if b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') { hex4(i + 8) } else { None };
                if matches!(low, Some(0xDC00..=0xDFFF)) {
                    12
                } else {
                    lone.push(i);
                    6
                }
            }
            (Some(b'u'), Some(0xDC00..=0xDFFF)) => {
                lone.push(i);
                6
            }
            _ => 2, // any other escape, including "\\"
        };
        match b.get(i + step..).and_then(|rest| memchr::memchr(b'\\', rest)) {
            Some(next) => i += step + next,
            None => break,
        }
    }
    if lone.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for at in lone {
        out.push_str(&text[from..at]);
        out.push_str("\\uFFFD");
        from = at + 6;
    }
    out.push_str(&text[from..]);
    Some(out)
}

fn hex_digit(d: u8) -> u16 {
    u16::from(match d {
        b'0'..=b'9' => d - b'0',
        b'a'..=b'f' => d - b'a' + 10,
        _ => d - b'A' + 10,
    })
}

/// RFC 3339 `date-time` (ISO 8601 with a time zone): `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
/// `T`/`Z` may be lower case, as RFC 3339 allows. Calendar ranges are checked (leap seconds
/// allowed as `:60`), days against the month and leap years.
#[inline]
pub fn is_rfc3339_date_time(s: &str) -> bool {
    let Some((head, rest)) = s.as_bytes().split_first_chunk::<19>() else {
        return false;
    };
    // `YYYY-MM-DDTHH:MM:SS` as three words (the last overlaps the second): each byte XOR its
    // pattern byte is 0 for a separator and the digit's value for a digit (`T` is lowered first).
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("eight bytes"));
    let d0 = word(0) ^ u64::from_le_bytes(*b"0000-00-");
    let d1 = (word(8) | 0x20 << 16) ^ u64::from_le_bytes(*b"00t00:00");
    let d2 = (word(11) ^ u64::from_le_bytes(*b"00000:00")) & 0xFFFF_FF00_0000_0000; // `:SS` only
    let bad = |d: u64, seps: u64, digits: u64| {
        // A digit's value is at most 9: no high nibble, before or after adding 6. A carry out of a
        // byte comes only from a byte that already failed.
        (d & seps) | ((d | d.wrapping_add(digits & 0x0606_0606_0606_0606)) & digits & 0xF0F0_F0F0_F0F0_F0F0)
    };
    if bad(d0, 0xFF00_00FF_0000_0000, 0x00FF_FF00_FFFF_FFFF)
        | bad(d1, 0x0000_FF00_00FF_0000, 0xFFFF_00FF_FF00_FFFF)
        | bad(d2, 0x0000_FF00_0000_0000, 0xFFFF_0000_0000_0000)
        != 0
    {
        return false;
    }
    // Every byte now holds its digit (a separator 0): ten times a byte plus the next is the
    // two-digit number starting there, for every pair at once (at most 99: no carry).
    let pairs = |d: u64| d.wrapping_mul(10) + (d >> 8);
    let (p0, p1, p2) = (pairs(d0), pairs(d1), pairs(d2));
    let at = |p: u64, byte: u32| u32::from((p >> (8 * byte)) as u8);
    let (month, day, hour, min, sec) = (at(p0, 5), at(p1, 0), at(p1, 3), at(p1, 6), at(p2, 6));
    if !(1..=12).contains(&month) || day == 0 || hour > 23 || min > 59 || sec > 60 {
        return false;
    }
    // Every month has 28 days; past them, the month's length (and February's, the year's).
    if day > 28 {
        let year = at(p0, 0) * 100 + at(p0, 2);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let days = match month {
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => 31,
        };
        if day > days {
            return false;
        }
    }
    // Then the fraction and the offset: `Z` alone is the common case.
    let rest = match rest {
        [b'Z' | b'z'] => return true,
        [b'.', frac @ ..] => {
            let n = frac.iter().take_while(|b| b.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            &frac[n..]
        }
        _ => rest,
    };
    match *rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h0 @ b'0'..=b'9', h1 @ b'0'..=b'9', b':', m0 @ b'0'..=b'9', b'0'..=b'9'] => {
            (h0, h1) <= (b'2', b'3') && m0 <= b'5'
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as first written (byte by byte): the reference the word-wise check is compared with.
    fn reference(s: &str) -> bool {
        let b = s.as_bytes();
        // `YYYY-MM-DDTHH:MM:SS`, then the fraction and the offset.
        let Some(&[c0, c1, y0, y1, b'-', m0, m1, b'-', d0, d1, t, h0, h1, b':', n0, n1, b':', s0, s1]) = b.get(..19)
        else {
            return false;
        };
        if b.len() < 20 || !matches!(t, b'T' | b't') {
            return false;
        }
        let digits = [c0, c1, y0, y1, m0, m1, d0, d1, h0, h1, n0, n1, s0, s1];
        if !digits.iter().all(u8::is_ascii_digit) {
            return false;
        }
        let pair = |x: u8, y: u8| u32::from(x - b'0') * 10 + u32::from(y - b'0');
        let (century, yy, month, day, hour, min, sec) =
            (pair(c0, c1), pair(y0, y1), pair(m0, m1), pair(d0, d1), pair(h0, h1), pair(n0, n1), pair(s0, s1));
        let year = century * 100 + yy;
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
        // Two ASCII digits at `i`, as a number; `None` past the end or on anything else.
        let two = |i: usize| match *b.get(i..i + 2)? {
            [x @ b'0'..=b'9', y @ b'0'..=b'9'] => Some(pair(x, y)),
            _ => None,
        };
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
                let (Some(oh), Some(om)) = (two(i + 1), two(i + 4)) else { return false };
                b.get(i + 3) == Some(&b':') && i + 6 == b.len() && oh <= 23 && om <= 59
            }
            _ => false,
        }
    }

    #[test]
    fn date_times_as_the_reference_reads_them() {
        // Every byte of a few date-times replaced by each of a set of bytes, and every length cut.
        let seeds = ["2024-02-29T23:59:60.123+05:30", "2025-01-01T00:00:00Z", "1900-02-29t12:30:45-23:59"];
        let bytes = b"0123456789:-+.TtZz /\x7f\xc3";
        let mut checked = 0;
        for seed in seeds {
            for at in 0..seed.len() {
                for &b in bytes {
                    let mut v = seed.as_bytes().to_vec();
                    v[at] = b;
                    let Ok(s) = std::str::from_utf8(&v) else { continue };
                    assert_eq!(is_rfc3339_date_time(s), reference(s), "{s:?}");
                    checked += 1;
                }
            }
            for end in 0..=seed.len() {
                assert_eq!(is_rfc3339_date_time(&seed[..end]), reference(&seed[..end]), "{:?}", &seed[..end]);
            }
        }
        for y in [1900, 2000, 2023, 2024] {
            for m in 0..=13 {
                for d in 0..=32 {
                    let s = format!("{y:04}-{m:02}-{d:02}T00:00:00Z");
                    assert_eq!(is_rfc3339_date_time(&s), reference(&s), "{s}");
                }
            }
        }
        assert!(checked > 1000);
    }

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
