//! Projected, sanitized items, and what a listing is made of: its [`ListKind`] and [`Diagnostics`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::text::Text;

/// Who an item is meant for (`annotations.audience`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

impl Role {
    pub(crate) fn parse(s: &str) -> Option<Role> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// An item's audience (`annotations.audience`): its roles in the server's order, repeats kept,
/// held inline up to 16 (no allocation per item; a longer list goes to the heap). Derefs to
/// `[Role]`; serializes as the array.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Roles(SmallVec<[Role; 16]>);

impl Roles {
    pub(crate) fn push(&mut self, role: Role) {
        self.0.push(role);
    }
}

impl std::ops::Deref for Roles {
    type Target = [Role];
    fn deref(&self) -> &[Role] {
        &self.0
    }
}

impl std::fmt::Debug for Roles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<Role>> for Roles {
    fn from(roles: Vec<Role>) -> Roles {
        Roles(SmallVec::from_vec(roles))
    }
}

impl FromIterator<Role> for Roles {
    fn from_iter<I: IntoIterator<Item = Role>>(roles: I) -> Roles {
        Roles(roles.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Roles {
    type Item = &'a Role;
    type IntoIter = std::slice::Iter<'a, Role>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl PartialEq<[Role]> for Roles {
    fn eq(&self, other: &[Role]) -> bool {
        *self.0 == *other
    }
}

impl<const N: usize> PartialEq<[Role; N]> for Roles {
    fn eq(&self, other: &[Role; N]) -> bool {
        *self.0 == *other
    }
}

impl Serialize for Roles {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.as_slice().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Roles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Roles, D::Error> {
        Vec::<Role>::deserialize(d).map(Roles::from)
    }
}

/// The kept annotations of an item; each field validated on its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// `"user"` / `"assistant"` only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub audience: Option<Roles>,
    /// A number in `0..=1`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub priority: Option<f64>,
    /// An ISO 8601 date-time with a time zone (RFC 3339), as the server sent it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_modified: Option<Text>,
}

impl Annotations {
    /// True when no field survived validation.
    pub fn is_empty(&self) -> bool {
        self.audience.is_none() && self.priority.is_none() && self.last_modified.is_none()
    }
}

/// A projected resource template (`resources/templates/list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The RFC 6570 URI template, exactly as the server sent it (never altered).
    pub uri_template: Text,
    /// Sanitized name.
    pub name: Text,
    /// Sanitized title.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<Text>,
    /// Sanitized description (keeps `\n` and `\t`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<Text>,
    /// Sanitized MIME type.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mime_type: Option<Text>,
    /// Kept annotations; absent when none survived.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub annotations: Option<Annotations>,
    /// The host's name for the server this item came from.
    pub server: Text,
}

/// A projected concrete resource (`resources/list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource URI, exactly as the server sent it (never altered).
    pub uri: Text,
    /// Sanitized name.
    pub name: Text,
    /// Sanitized title.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<Text>,
    /// Sanitized description (keeps `\n` and `\t`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<Text>,
    /// Sanitized MIME type.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mime_type: Option<Text>,
    /// Size in bytes, when the server gave a non-negative integer.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub size: Option<u64>,
    /// Kept annotations; absent when none survived.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub annotations: Option<Annotations>,
    /// The host's name for the server this item came from.
    pub server: Text,
}

/// One projected item of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Item {
    /// From `resources/templates/list`.
    Template(ResourceTemplate),
    /// From `resources/list`.
    Resource(Resource),
}

impl Item {
    /// The item's sanitized name.
    pub fn name(&self) -> &str {
        match self {
            Item::Template(t) => &t.name,
            Item::Resource(r) => &r.name,
        }
    }

    /// The item's server.
    pub fn server(&self) -> &str {
        match self {
            Item::Template(t) => &t.server,
            Item::Resource(r) => &r.server,
        }
    }

    /// The strings a host hands out of the item, in this order: the id, the name, the title, the
    /// description, the MIME type and the annotations' `lastModified`, each when present.
    pub fn texts(&self) -> [Option<&Text>; 6] {
        let (id, name, title, description, mime_type, annotations) = match self {
            Item::Template(t) => (&t.uri_template, &t.name, &t.title, &t.description, &t.mime_type, &t.annotations),
            Item::Resource(r) => (&r.uri, &r.name, &r.title, &r.description, &r.mime_type, &r.annotations),
        };
        let last_modified = annotations.as_ref().and_then(|a| a.last_modified.as_ref());
        [Some(id), Some(name), title.as_ref(), description.as_ref(), mime_type.as_ref(), last_modified]
    }

    /// Moves every string of the item onto `buf`, the listing's buffer (the pager builds items
    /// on [`Text::pending`] ranges while the buffer still grows).
    pub(crate) fn rebase(&mut self, buf: &std::sync::Arc<String>) {
        let on = |t: &mut Text| *t = Text::shared(buf, t.range());
        let (id, name, title, description, mime_type, annotations, server) = match self {
            Item::Template(t) => (
                &mut t.uri_template,
                &mut t.name,
                &mut t.title,
                &mut t.description,
                &mut t.mime_type,
                &mut t.annotations,
                &mut t.server,
            ),
            Item::Resource(r) => (
                &mut r.uri,
                &mut r.name,
                &mut r.title,
                &mut r.description,
                &mut r.mime_type,
                &mut r.annotations,
                &mut r.server,
            ),
        };
        on(id);
        on(name);
        on(server);
        title.iter_mut().chain(description.iter_mut()).chain(mime_type.iter_mut()).for_each(on);
        if let Some(lm) = annotations.as_mut().and_then(|a| a.last_modified.as_mut()) {
            on(lm);
        }
    }

    /// The UTF-8 length of this item's compact JSON (`serde_json::to_string(item).len()`),
    /// computed without serializing: the unit of the byte budget.
    pub fn json_len(&self) -> usize {
        self.json_len_on(None)
    }

    /// [`Item::json_len`] with the strings read from `text` when given (an item the pager is
    /// still building: its strings are ranges of the listing's growing text).
    pub(crate) fn json_len_on(&self, text: Option<&str>) -> usize {
        let s = |t: &Text| -> usize {
            json_str_len(match text {
                Some(text) => &text[t.range()],
                None => t,
            })
        };
        let mut n = 2; // {}
        let mut fields = 0usize;
        let mut field = |key: &str, value_len: usize| {
            fields += 1;
            n += key.len() + 3 + value_len; // "key":value
        };
        let (a, server) = match self {
            Item::Template(t) => {
                field("uriTemplate", s(&t.uri_template));
                field("name", s(&t.name));
                opt_str(&mut field, "title", t.title.as_ref().map(s));
                opt_str(&mut field, "description", t.description.as_ref().map(s));
                opt_str(&mut field, "mimeType", t.mime_type.as_ref().map(s));
                (&t.annotations, &t.server)
            }
            Item::Resource(r) => {
                field("uri", s(&r.uri));
                field("name", s(&r.name));
                opt_str(&mut field, "title", r.title.as_ref().map(s));
                opt_str(&mut field, "description", r.description.as_ref().map(s));
                opt_str(&mut field, "mimeType", r.mime_type.as_ref().map(s));
                if let Some(size) = r.size {
                    field("size", decimal_len(size));
                }
                (&r.annotations, &r.server)
            }
        };
        if let Some(a) = a {
            field("annotations", annotations_len(a, a.last_modified.as_ref().map(s)));
        }
        field("server", s(server));
        n + fields.saturating_sub(1) // commas
    }
}

fn opt_str(field: &mut impl FnMut(&str, usize), key: &str, len: Option<usize>) {
    if let Some(len) = len {
        field(key, len);
    }
}

/// `last_modified`: the JSON length of `a.last_modified`.
fn annotations_len(a: &Annotations, last_modified: Option<usize>) -> usize {
    let mut n = 2;
    let mut fields = 0;
    if let Some(aud) = &a.audience {
        fields += 1;
        let inner: usize = aud.iter().map(|r| if *r == Role::User { 6 } else { 11 }).sum();
        n += "audience".len() + 3 + 2 + inner + aud.len().saturating_sub(1);
    }
    if let Some(p) = a.priority {
        fields += 1;
        n += "priority".len() + 3 + f64_len(p);
    }
    if let Some(lm) = last_modified {
        fields += 1;
        n += "lastModified".len() + 3 + lm;
    }
    n + if fields > 0 { fields - 1 } else { 0 }
}

/// Length of a finite f64 as serde_json writes it.
pub(crate) fn f64_len(p: f64) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    serde_json::to_writer(&mut c, &p).expect("writing a number to a counter cannot fail");
    c.0
}

fn decimal_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Length of `s` as a JSON string literal, quotes included, with serde_json's escaping.
pub(crate) fn json_str_len(s: &str) -> usize {
    let mut n = s.len() + 2;
    // Branch-free OR-reduction (vectorises); the exact pass runs only for strings with escapes.
    let needs = s.as_bytes().iter().fold(0u8, |acc, &b| acc | u8::from((b < 0x20) | (b == b'"') | (b == b'\\')));
    if needs == 0 {
        return n;
    }
    for &b in s.as_bytes() {
        if b < 0x20 || b == b'"' || b == b'\\' {
            n += match b {
                b'"' | b'\\' | b'\n' | b'\t' | b'\r' | 0x08 | 0x0C => 1,
                _ => 5,
            };
        }
    }
    n
}

/// Which list a traversal reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListKind {
    /// `resources/list`: concrete resources.
    Resources,
    /// `resources/templates/list`: resource templates.
    ResourceTemplates,
}

impl crate::error::WireName for ListKind {
    const ALL: &'static [ListKind] = &[ListKind::Resources, ListKind::ResourceTemplates];
}

impl ListKind {
    /// The JSON-RPC method.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Resources => "resources/list",
            ListKind::ResourceTemplates => "resources/templates/list",
        }
    }

    /// The result's array key.
    pub fn list_key(self) -> &'static str {
        match self {
            ListKind::Resources => "resources",
            ListKind::ResourceTemplates => "resourceTemplates",
        }
    }

    pub(crate) fn id_key(self) -> &'static str {
        match self {
            ListKind::Resources => "uri",
            ListKind::ResourceTemplates => "uriTemplate",
        }
    }

    pub(crate) fn invalid_id_reason(self) -> &'static str {
        match self {
            ListKind::Resources => "invalid_uri",
            ListKind::ResourceTemplates => "invalid_uri_template",
        }
    }
}

/// What a traversal counted. Carries no cursor, URI, name or description.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    /// Requests sent.
    pub requests: u32,
    /// Pages accepted.
    pub pages: u32,
    /// Items kept.
    pub items: usize,
    /// Projected bytes of the kept items (the byte budget's unit).
    pub bytes: usize,
    /// Optional fields dropped because they were invalid, by field (`title`, `description`,
    /// `mimeType`, `size`, `annotations`, `annotations.audience`, `annotations.priority`,
    /// `annotations.lastModified`, `ttlMs`, `cacheScope`).
    pub dropped_fields: BTreeMap<&'static str, u64>,
    /// Items dropped, by reason (`invalid_uri_template`, `invalid_uri`).
    pub dropped_items: BTreeMap<&'static str, u64>,
    /// Strings that sanitizing changed.
    pub sanitized_strings: u64,
    /// Item keys outside the projection (`_meta`, `icons`, unknown keys) left out.
    pub ignored_keys: u64,
    /// Cursors followed although already sent ([`RepeatedCursors::Follow`](super::RepeatedCursors::Follow)).
    pub repeated_cursors: u32,
}
