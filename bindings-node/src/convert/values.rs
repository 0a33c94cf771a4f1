//! A page as the host's SDK parsed it (objects, arrays, strings, numbers, booleans, null), read in
//! place by the core's page rules through serde (`Pager::handle_parsed_page`): the node-api twin
//! of the Python binding's reader. It presents what `JSON.stringify` would write, exactly or not at
//! all: a key whose value is `undefined`, a function or a symbol is skipped, and such an element
//! is `null`, as there; anything the text would carry otherwise or not at all (a string with a
//! lone surrogate — any U+FFFD, as V8 writes one so —, a BigInt, a non-finite number, a `toJSON`
//! method, an object or array that is not plain, a throwing getter, nesting past the core's bound) is [`NotJson`], nothing is applied
//! and the host hands the page's text instead. (An own `toJSON` defined non-enumerable on a plain
//! object is not looked for.)
//!
//! Measured (`node_convert_values`): each property costs several node-api calls, so a page of
//! many short items reads slower in place than as text, one of long strings faster.
//!
//! Not napi's own `De`: it reads inherited keys, BigInts, buffers and `undefined` as JSON text
//! never would.

use std::cell::RefCell;
use std::{fmt, ptr};

use napi::sys::{self, napi_value, ValueType as T};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

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

/// A value nested deeper than this is declined: serde_json refuses the text past 128, and
/// declining early is safe (the page's text then decides).
const MAX_DEPTH: u32 = 120;

fn ok(status: sys::napi_status) -> Result<(), NotJson> {
    (status == sys::Status::napi_ok).then_some(()).ok_or(NotJson)
}

/// The output of one node-api call.
fn out<O>(mut o: O, call: impl FnOnce(&mut O) -> sys::napi_status) -> Result<O, NotJson> {
    ok(call(&mut o)).map(|()| o)
}

/// Reads `page` with `read` (the core's `handle_parsed_page`); a page declined midway leaves no
/// pending JS exception behind (a getter that threw: the text path meets it again).
pub(crate) fn read<R>(env: sys::napi_env, page: napi_value, read: impl FnOnce(Values<'_>) -> R) -> Result<R, NotJson> {
    let shared = Shared::new(env)?;
    let result = read(Values { shared: &shared, value: page, ty: None, depth: 0 });
    let mut e = ptr::null_mut();
    // SAFETY (every `unsafe` block below): node-api calls on the env and the live values of this
    // callback's scope, each output pointer a local. (With no exception pending, `e` is undefined.)
    unsafe { sys::napi_get_and_clear_last_exception(env, &mut e) };
    Ok(result)
}

/// What one page's read shares: the prototypes of a plain object and array, and one buffer for
/// strings (each is handed to the visitor before the next is read).
struct Shared {
    env: sys::napi_env,
    object: napi_value,
    array: napi_value,
    scratch: RefCell<Vec<u8>>,
}

impl Shared {
    fn new(env: sys::napi_env) -> Result<Shared, NotJson> {
        let mut s = Shared { env, object: ptr::null_mut(), array: ptr::null_mut(), scratch: Default::default() };
        let mut global = ptr::null_mut();
        ok(unsafe { sys::napi_get_global(env, &mut global) })?;
        s.object = s.prototype_of(global, c"Object")?;
        s.array = s.prototype_of(global, c"Array")?;
        s.scratch.borrow_mut().resize(1 << 16, 0);
        Ok(s)
    }

    /// `global[name].prototype`, declined when it has a `toJSON` (a polluted prototype).
    fn prototype_of(&self, global: napi_value, name: &std::ffi::CStr) -> Result<napi_value, NotJson> {
        let (mut class, mut proto, mut has) = (ptr::null_mut(), ptr::null_mut(), true);
        ok(unsafe { sys::napi_get_named_property(self.env, global, name.as_ptr(), &mut class) })?;
        ok(unsafe { sys::napi_get_named_property(self.env, class, c"prototype".as_ptr(), &mut proto) })?;
        ok(unsafe { sys::napi_has_named_property(self.env, proto, c"toJSON".as_ptr(), &mut has) })?;
        (!has).then_some(proto).ok_or(NotJson)
    }

    fn type_of(&self, v: napi_value) -> Result<sys::napi_valuetype, NotJson> {
        out(0, |t| unsafe { sys::napi_typeof(self.env, v, t) })
    }

    /// Is `v`'s prototype `expected` (`or_null`: or null)?
    fn is_plain(&self, v: napi_value, expected: napi_value, or_null: bool) -> Result<bool, NotJson> {
        let (mut proto, mut same) = (ptr::null_mut(), false);
        ok(unsafe { sys::napi_get_prototype(self.env, v, &mut proto) })?;
        ok(unsafe { sys::napi_strict_equals(self.env, proto, expected, &mut same) })?;
        Ok(same || or_null && self.type_of(proto)? == T::napi_null)
    }

    fn length(&self, array: napi_value) -> Result<u32, NotJson> {
        out(0, |len| unsafe { sys::napi_get_array_length(self.env, array, len) })
    }

    /// `f` of the string `v` as UTF-8, copied once into the scratch buffer.
    fn with_str<R>(&self, v: napi_value, f: impl FnOnce(&str) -> R) -> Result<R, NotJson> {
        let buf = &mut *self.scratch.borrow_mut();
        let mut len = 0;
        ok(unsafe { sys::napi_get_value_string_utf8(self.env, v, buf.as_mut_ptr().cast(), buf.len(), &mut len) })?;
        if len + 4 >= buf.len() {
            // Perhaps cut: sized from its UTF-16 length (at most 3 bytes per unit), read again.
            ok(unsafe { sys::napi_get_value_string_utf16(self.env, v, ptr::null_mut(), 0, &mut len) })?;
            buf.resize(len * 3 + 4, 0);
            ok(unsafe { sys::napi_get_value_string_utf8(self.env, v, buf.as_mut_ptr().cast(), buf.len(), &mut len) })?;
        }
        let s = std::str::from_utf8(&buf[..len]).map_err(|_| NotJson)?;
        if s.contains('\u{FFFD}') {
            return Err(NotJson); // perhaps a lone surrogate, which V8 wrote so (the text carries its escape)
        }
        Ok(f(s))
    }
}

/// One value, `depth` containers deep; `ty` its type when already known.
pub struct Values<'a> {
    shared: &'a Shared,
    value: napi_value,
    ty: Option<sys::napi_valuetype>,
    depth: u32,
}

impl<'de> Deserializer<'de> for Values<'_> {
    type Error = NotJson;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, NotJson> {
        let (s, v, depth) = (self.shared, self.value, self.depth + 1);
        match self.ty.map_or_else(|| s.type_of(v), Ok)? {
            T::napi_string => s.with_str(v, |text| visitor.visit_str(text))?,
            T::napi_number => {
                let n = out(0.0, |n| unsafe { sys::napi_get_value_double(s.env, v, n) })?;
                // As the text reads: a whole number below 1e21 is written as an integer, which
                // serde_json reads unsigned, or signed when negative, as long as it fits.
                let whole = n.fract() == 0.0 && n.abs() < 1e21;
                match n {
                    _ if !n.is_finite() => Err(NotJson), // the text has null
                    _ if whole && (0.0..18_446_744_073_709_551_616.0).contains(&n) => visitor.visit_u64(n as u64),
                    _ if whole && (-9_223_372_036_854_775_808.0..0.0).contains(&n) => visitor.visit_i64(n as i64),
                    _ => visitor.visit_f64(n),
                }
            }
            T::napi_boolean => visitor.visit_bool(out(false, |b| unsafe { sys::napi_get_value_bool(s.env, v, b) })?),
            // An array's element, or the page itself (written `null`); an object's key skips them.
            T::napi_null | T::napi_undefined | T::napi_function | T::napi_symbol => visitor.visit_unit(),
            T::napi_object if depth <= MAX_DEPTH => {
                let array = out(false, |a| unsafe { sys::napi_is_array(s.env, v, a) })?;
                // Else a Date, a Map, a boxed string, a class's instance…: its text differs, or may.
                if !s.is_plain(v, if array { s.array } else { s.object }, !array)? {
                    return Err(NotJson);
                } else if array {
                    return visitor.visit_seq(Seq { shared: s, array: v, at: 0, len: s.length(v)?, depth });
                }
                let mut keys = ptr::null_mut();
                ok(unsafe {
                    sys::napi_get_all_property_names(
                        s.env,
                        v,
                        sys::KeyCollectionMode::own_only,
                        sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                        sys::KeyConversion::numbers_to_strings,
                        &mut keys,
                    )
                })?;
                let len = s.length(keys)?;
                visitor.visit_map(Map { shared: s, object: v, keys, at: 0, len, value: None, depth })
            }
            _ => Err(NotJson), // a BigInt (the text throws), an external, nesting too deep
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// An object's own enumerable string keys, in their order (`JSON.stringify`'s).
struct Map<'a> {
    shared: &'a Shared,
    object: napi_value,
    keys: napi_value,
    at: u32,
    len: u32,
    value: Option<(napi_value, sys::napi_valuetype)>,
    depth: u32,
}

impl<'de> MapAccess<'de> for Map<'_> {
    type Error = NotJson;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, NotJson> {
        let s = self.shared;
        while self.at < self.len {
            let (mut key, mut value) = (ptr::null_mut(), ptr::null_mut());
            ok(unsafe { sys::napi_get_element(s.env, self.keys, self.at, &mut key) })?;
            self.at += 1;
            ok(unsafe { sys::napi_get_property(s.env, self.object, key, &mut value) })?;
            let ty = s.type_of(value)?;
            let skipped = matches!(ty, T::napi_undefined | T::napi_function | T::napi_symbol);
            if skipped && (ty != T::napi_function || !s.with_str(key, |k| k == "toJSON")?) {
                continue;
            }
            if skipped {
                return Err(NotJson); // a toJSON method: the text is what it returns
            }
            self.value = Some((value, ty));
            return seed
                .deserialize(Values { shared: s, value: key, ty: Some(T::napi_string), depth: self.depth })
                .map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, NotJson> {
        let (value, ty) = self.value.take().ok_or(NotJson)?;
        seed.deserialize(Values { shared: self.shared, value, ty: Some(ty), depth: self.depth })
    }
}

struct Seq<'a> {
    shared: &'a Shared,
    array: napi_value,
    at: u32,
    len: u32,
    depth: u32,
}

impl<'de> SeqAccess<'de> for Seq<'_> {
    type Error = NotJson;

    fn next_element_seed<E: DeserializeSeed<'de>>(&mut self, seed: E) -> Result<Option<E::Value>, NotJson> {
        if self.at >= self.len {
            return Ok(None);
        }
        let mut item = ptr::null_mut();
        ok(unsafe { sys::napi_get_element(self.shared.env, self.array, self.at, &mut item) })?;
        self.at += 1;
        seed.deserialize(Values { shared: self.shared, value: item, ty: None, depth: self.depth }).map(Some)
    }
}
