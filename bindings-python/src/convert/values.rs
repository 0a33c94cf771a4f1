//! A page as the host's SDK parsed it (dicts, lists, strings, numbers, booleans, `None`), read in
//! place by the core's page rules through serde (`Pager::handle_parsed_page`). Only JSON's own values:
//! anything else (a lone surrogate, an integer past 64 bits, a non-finite float, a tuple, a
//! non-string key, any other type) is [`NotJson`], and the host hands the page's text instead.
//!
//! Not pythonize's `Depythonizer`: it looks every dict up for dataclass fields first, an
//! AttributeError raised and cleared per object before Python 3.13, which made a 10,000-item page
//! slower than its JSON text; it also reads sets, bytes and mappings that JSON text cannot hold.
//!
//! Every string is lent to the core for the whole read (`visit_borrowed_str`: a key or a value is
//! never copied into a `String` of its own): the objects a dict or list hands out are kept in an
//! [`Arena`] the caller owns until the page is read, so the UTF-8 their strings lend lives as long.
//! A long string (at least [`LONG`] bytes) is also found by the address of its UTF-8 ([`Kept::lent`]):
//! the core notes the strings it keeps as lent by that address, and the listing hands out the
//! page's own object for them instead of a copy, as the SDK's models do.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use typed_arena::Arena;

/// A value JSON text cannot hold as it is.
#[derive(Debug)]
pub struct NotJson;

impl fmt::Display for NotJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a JSON value")
    }
}

impl std::error::Error for NotJson {}

impl de::Error for NotJson {
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotJson
    }
}

/// A value nested deeper than this is declined: JSON text may nest less deep (serde_json refuses
/// past 128), and declining early is safe (the page's text then decides).
const MAX_DEPTH: u32 = 120;

/// A string this long or longer is found again by its address (and only such strings are noted by
/// the core): a shorter one costs less to copy than its bookkeeping (`make bench-python`: with 64
/// the 200-character descriptions of its S workload read slower than as text).
pub const LONG: usize = 1024;

/// The objects a page's containers handed out while it is read, and its long strings by the
/// address of their UTF-8 (see the module docs).
#[derive(Default)]
pub struct Kept<'py> {
    arena: Arena<Bound<'py, PyAny>>,
    long: RefCell<HashMap<usize, Bound<'py, PyString>>>,
}

impl<'py> Kept<'py> {
    /// The page's long string whose UTF-8 the core read at `address`.
    pub fn lent(&self, address: usize) -> Option<Bound<'py, PyString>> {
        self.long.borrow().get(&address).cloned()
    }
}

/// One parsed value, `depth` containers deep; what it holds is kept in `kept` (`'de` long).
pub struct Values<'de, 'py> {
    value: &'de Bound<'py, PyAny>,
    kept: &'de Kept<'py>,
    depth: u32,
}

impl<'de, 'py> Values<'de, 'py> {
    /// A page's top-level value; `kept` (an empty arena) lives until the page is read.
    pub fn of(value: &'de Bound<'py, PyAny>, kept: &'de Kept<'py>) -> Self {
        Values { value, kept, depth: 0 }
    }
}

impl<'de> Deserializer<'de> for Values<'de, '_> {
    type Error = NotJson;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NotJson> {
        let (o, kept, depth) = (self.value, self.kept, self.depth + 1);
        if depth > MAX_DEPTH {
            return Err(NotJson);
        }
        if let Ok(s) = o.cast::<PyString>() {
            let text = s.to_str().map_err(|_| NotJson)?;
            if text.len() >= LONG {
                kept.long.borrow_mut().insert(text.as_ptr() as usize, s.clone());
            }
            visitor.visit_borrowed_str(text)
        } else if let Ok(d) = o.cast::<PyDict>() {
            visitor.visit_map(Map { entries: d.iter(), value: None, kept, depth })
        } else if let Ok(l) = o.cast::<PyList>() {
            visitor.visit_seq(Seq { list: l, at: 0, kept, depth })
        } else if o.is_none() {
            visitor.visit_unit()
        } else if let Ok(b) = o.cast::<PyBool>() {
            visitor.visit_bool(b.is_true())
        } else if let Ok(i) = o.cast::<PyInt>() {
            // As JSON text reads: a non-negative integer unsigned, a negative one signed.
            match i.extract::<i64>() {
                Ok(n) if n >= 0 => visitor.visit_u64(n as u64),
                Ok(n) => visitor.visit_i64(n),
                Err(_) => visitor.visit_u64(i.extract::<u64>().map_err(|_| NotJson)?),
            }
        } else if let Ok(f) = o.cast::<PyFloat>() {
            match f.value() {
                v if v.is_finite() => visitor.visit_f64(v),
                _ => Err(NotJson),
            }
        } else {
            Err(NotJson)
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct Map<'de, 'py> {
    entries: pyo3::types::dict::BoundDictIterator<'py>,
    value: Option<Bound<'py, PyAny>>,
    kept: &'de Kept<'py>,
    depth: u32,
}

impl<'de> MapAccess<'de> for Map<'de, '_> {
    type Error = NotJson;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, NotJson> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        if !key.is_instance_of::<PyString>() {
            return Err(NotJson);
        }
        self.value = Some(value);
        let key = self.kept.arena.alloc(key);
        seed.deserialize(Values { value: key, kept: self.kept, depth: self.depth }).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, NotJson> {
        let value = self.kept.arena.alloc(self.value.take().ok_or(NotJson)?);
        seed.deserialize(Values { value, kept: self.kept, depth: self.depth })
    }
}

struct Seq<'a, 'de, 'py> {
    list: &'a Bound<'py, PyList>,
    at: usize,
    kept: &'de Kept<'py>,
    depth: u32,
}

impl<'de> SeqAccess<'de> for Seq<'_, 'de, '_> {
    type Error = NotJson;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, NotJson> {
        if self.at >= self.list.len() {
            return Ok(None);
        }
        let item = self.kept.arena.alloc(self.list.get_item(self.at).map_err(|_| NotJson)?);
        self.at += 1;
        seed.deserialize(Values { value: item, kept: self.kept, depth: self.depth }).map(Some)
    }
}
