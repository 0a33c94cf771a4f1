//! Python objects → compact JSON for the tracker's request path (`track()`): pydantic models by
//! their fields (each type classified once), dicts, lists, scalars, a fallback through pydantic's
//! own serializer — what the core's projection keeps of params and results
//! (`mcplens::tracking::Projection`), written without pydantic's `model_dump` + `json.dumps`.
//!
//! A converter written for speed (the glue budget's `convert` role): `make bench-python-tracking`
//! prints its row — `track()`'s added time per call with this writer against the same glue with
//! pydantic's serializer, `(pydantic)`, in the same run.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;

use mcplens::tracking::{write_json_str as write_str, Projection, RequestId};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

/// Deeper than this, a value is written as a marker string (the core caps depth far lower anyway).
const MAX_DEPTH: u32 = 64;

/// How values of one (non-builtin) type are written.
enum Kind {
    /// A pydantic model: its fields by alias, `None` fields left out, then its extras.
    Model { fields: Vec<(Py<PyString>, String)>, extra: bool },
    /// A pydantic `RootModel`: its `root`.
    Root,
    /// Written as `str(value)` (URLs).
    Str,
    /// An iterator or generator: never consumed; written as a marker.
    Opaque,
    /// Anything else: pydantic's own serializer (`pydantic_core.to_json`), else `str(value)`.
    Fallback,
}

/// A type (held, so that its address is never reused by another) and how to write its values.
type KindEntry = (Py<PyType>, Rc<Kind>);

thread_local! {
    /// Per type: how to write it. The type is held so its address is never reused by another.
    static KINDS: RefCell<HashMap<usize, KindEntry>> = RefCell::new(HashMap::new());
}

fn truthy(v: PyResult<Bound<'_, PyAny>>) -> bool {
    v.and_then(|v| v.is_truthy()).unwrap_or(false)
}

fn classify(py: Python<'_>, t: &Bound<'_, PyType>) -> Kind {
    if let Ok(fields) = t.getattr(intern!(py, "__pydantic_fields__")) {
        if let Ok(fields) = fields.cast::<PyDict>() {
            if truthy(t.getattr(intern!(py, "__pydantic_root_model__"))) {
                return Kind::Root;
            }
            // Custom serializers or computed fields: let pydantic do it.
            if let Ok(d) = t.getattr(intern!(py, "__pydantic_decorators__")) {
                for attr in ["field_serializers", "model_serializers", "computed_fields"] {
                    if truthy(d.getattr(attr)) {
                        return Kind::Fallback;
                    }
                }
            }
            let mut out = Vec::new();
            for (name, info) in fields.iter() {
                let Ok(name) = name.cast_into::<PyString>() else { return Kind::Fallback };
                if info.getattr(intern!(py, "exclude")).is_ok_and(|e| e.is(PyBool::new(py, true).as_any())) {
                    continue;
                }
                let alias = |attr: &Bound<'_, PyString>| -> Option<String> {
                    info.getattr(attr).ok().and_then(|a| a.extract::<Option<String>>().ok()).flatten()
                };
                let key = alias(intern!(py, "serialization_alias"))
                    .or_else(|| alias(intern!(py, "alias")))
                    .unwrap_or_else(|| name.to_string_lossy().into_owned());
                let Ok(key) = serde_json::to_string(&key) else { return Kind::Fallback };
                out.push((name.unbind(), key));
            }
            let extra = t
                .getattr(intern!(py, "model_config"))
                .and_then(|c| c.get_item("extra"))
                .and_then(|e| e.extract::<String>())
                .is_ok_and(|e| e == "allow");
            return Kind::Model { fields: out, extra };
        }
    }
    if t.hasattr(intern!(py, "__next__")).unwrap_or(false) {
        return Kind::Opaque;
    }
    let url = (|| -> PyResult<bool> {
        let networks = py.import("pydantic.networks")?;
        for base in ["_BaseUrl", "_BaseMultiHostUrl"] {
            if let Ok(b) = networks.getattr(base) {
                if t.is_subclass(&b)? {
                    return Ok(true);
                }
            }
        }
        let core = py.import("pydantic_core")?;
        for base in ["Url", "MultiHostUrl"] {
            if let Ok(b) = core.getattr(base) {
                if t.is_subclass(&b)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    })();
    if url.unwrap_or(false) {
        return Kind::Str;
    }
    Kind::Fallback
}

fn kind_of(py: Python<'_>, v: &Bound<'_, PyAny>) -> Rc<Kind> {
    let t = v.get_type();
    let key = t.as_ptr() as usize;
    if let Some(k) = KINDS.with(|m| m.borrow().get(&key).map(|(_, k)| k.clone())) {
        return k;
    }
    let k = Rc::new(classify(py, &t));
    KINDS.with(|m| m.borrow_mut().insert(key, (t.unbind(), k.clone())));
    k
}

fn write_pystr(out: &mut String, s: &Bound<'_, PyString>) {
    match s.to_str() {
        Ok(s) => write_str(out, s),
        // Lone surrogates: replaced, as everywhere else in mcplens.
        Err(_) => write_str(out, &s.to_string_lossy()),
    }
}

fn write_fallback(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>) {
    let json = (|| -> PyResult<Bound<'_, PyBytes>> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("by_alias", true)?;
        kwargs.set_item("exclude_none", true)?;
        let b = py.import(intern!(py, "pydantic_core"))?.getattr(intern!(py, "to_json"))?.call((v,), Some(&kwargs))?;
        Ok(b.cast_into::<PyBytes>()?)
    })();
    if let Ok(b) = &json {
        if let Ok(text) = std::str::from_utf8(b.as_bytes()) {
            out.push_str(text);
            return;
        }
    }
    match v.str() {
        Ok(s) => write_pystr(out, &s),
        Err(_) => out.push_str("null"),
    }
}

/// Writes what of `v` the core's projection passes (`mcplens::tracking::Projection`): all of it,
/// an object's listed keys (a value that is not an object passes as nothing), or nothing.
pub(crate) fn write_projected(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>, projection: Projection) {
    match projection {
        Projection::Whole => write_value(py, out, v, 0, None),
        Projection::Keys(keys) if !is_json_non_object(v) => write_value(py, out, v, 0, Some(keys)),
        _ => {}
    }
}

/// Whether `v` is written as a JSON value other than an object (what a projection to keys drops).
fn is_json_non_object(v: &Bound<'_, PyAny>) -> bool {
    v.is_none()
        || v.is_instance_of::<PyString>()
        || v.is_instance_of::<PyBool>()
        || v.is_instance_of::<PyInt>()
        || v.is_instance_of::<PyFloat>()
        || v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
}

/// Writes `v` as compact JSON. `only`: at the top level, keep only these keys (when parameters are
/// not captured, the core still needs the resource name and `_meta`).
pub(crate) fn write_value(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>, depth: u32, only: Option<&[&str]>) {
    if depth > MAX_DEPTH {
        write_str(out, "[not serialized: nested too deep]");
        return;
    }
    if let Ok(s) = v.cast_exact::<PyString>() {
        write_pystr(out, s);
    } else if let Ok(d) = v.cast::<PyDict>() {
        out.push('{');
        let mut first = true;
        for (k, x) in d.iter() {
            // A key that is not a str is written as `str(key)`, and never kept under `only`.
            let key = match k.cast_into::<PyString>() {
                Ok(ks) => ks,
                Err(_) if only.is_some() => continue,
                Err(e) => match e.into_inner().str() {
                    Ok(ks) => ks,
                    Err(_) => continue,
                },
            };
            if !only.is_none_or(|o| key.to_str().is_ok_and(|s| o.contains(&s))) {
                continue;
            }
            member(py, out, &mut first, &key, &x, depth);
        }
        out.push('}');
    } else if v.is_none() {
        out.push_str("null");
    } else if let Ok(b) = v.cast_exact::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if let Ok(i) = v.cast::<PyInt>() {
        if let Ok(n) = i.extract::<i64>() {
            let _ = write!(out, "{n}");
        } else if let Ok(n) = i.extract::<u64>() {
            let _ = write!(out, "{n}");
        } else {
            // A big int: its decimal digits are a JSON number.
            match i.str() {
                Ok(s) => out.push_str(&s.to_string_lossy()),
                Err(_) => out.push_str("null"),
            }
        }
    } else if let Ok(l) = v.cast::<PyList>() {
        write_seq(py, out, l.iter(), depth);
    } else if let Ok(s) = v.cast::<PyString>() {
        write_pystr(out, s);
    } else if let Ok(f) = v.cast::<PyFloat>() {
        let x = f.value();
        if x.is_finite() {
            // `Debug` is the shortest round-trip form (`2.5`, `1e300`): valid JSON.
            let _ = write!(out, "{x:?}");
        } else {
            out.push_str("null");
        }
    } else if let Ok(t) = v.cast::<PyTuple>() {
        write_seq(py, out, t.iter(), depth);
    } else {
        write_object(py, out, v, depth, only);
    }
}

/// One `"key":value` member of an object (a comma before all but the first).
fn member(
    py: Python<'_>,
    out: &mut String,
    first: &mut bool,
    key: &Bound<'_, PyString>,
    v: &Bound<'_, PyAny>,
    depth: u32,
) {
    if !std::mem::take(first) {
        out.push(',');
    }
    write_pystr(out, key);
    out.push(':');
    write_value(py, out, v, depth + 1, None);
}

fn write_seq<'py>(py: Python<'py>, out: &mut String, items: impl Iterator<Item = Bound<'py, PyAny>>, depth: u32) {
    out.push('[');
    for (i, x) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_value(py, out, &x, depth + 1, None);
    }
    out.push(']');
}

fn write_object(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>, depth: u32, only: Option<&[&str]>) {
    match &*kind_of(py, v) {
        Kind::Root => match v.getattr(intern!(py, "root")) {
            Ok(root) => write_value(py, out, &root, depth + 1, only),
            Err(_) => out.push_str("null"),
        },
        Kind::Model { fields, extra } => {
            let Ok(dict) = v.getattr(intern!(py, "__dict__")) else {
                write_fallback(py, out, v);
                return;
            };
            let Ok(dict) = dict.cast::<PyDict>() else {
                write_fallback(py, out, v);
                return;
            };
            out.push('{');
            let mut first = true;
            for (name, key) in fields {
                if only.is_some_and(|o| !o.iter().any(|k| key.get(1..key.len() - 1) == Some(*k))) {
                    continue;
                }
                let Ok(Some(x)) = dict.get_item(name.bind(py)) else { continue };
                if x.is_none() {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(key);
                out.push(':');
                write_value(py, out, &x, depth + 1, None);
            }
            if *extra {
                if let Ok(extras) = v.getattr(intern!(py, "__pydantic_extra__")) {
                    if let Ok(extras) = extras.cast::<PyDict>() {
                        for (k, x) in extras.iter() {
                            let Ok(k) = k.cast::<PyString>() else { continue };
                            if x.is_none() || only.is_some_and(|o| !k.to_str().is_ok_and(|s| o.contains(&s))) {
                                continue;
                            }
                            member(py, out, &mut first, k, &x, depth);
                        }
                    }
                }
            }
            out.push('}');
        }
        Kind::Str => match v.str() {
            Ok(s) => write_pystr(out, &s),
            Err(_) => out.push_str("null"),
        },
        Kind::Opaque => {
            let name = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            write_str(out, &format!("[not serialized: {name}]"));
        }
        Kind::Fallback => write_fallback(py, out, v),
    }
}

pub(crate) fn request_id<'a>(v: &'a Bound<'_, PyAny>) -> RequestId<'a> {
    if let Ok(s) = v.cast::<PyString>() {
        return s.to_str().map(RequestId::Text).unwrap_or_default();
    }
    if v.cast::<PyBool>().is_err() {
        if let Ok(n) = v.extract::<i64>() {
            return RequestId::Number(n);
        }
    }
    RequestId::None
}
