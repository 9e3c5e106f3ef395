//! Reading JavaScript values into JSON without running a caller's code
//! unguarded.
//!
//! A JavaScript exception that crosses a wasm frame unwinds past Rust: the
//! `&mut self` borrow of the exported object stays taken ("recursive use of
//! an object detected"), the shadow stack pointer is not restored, and after
//! enough of them the module traps. So nothing here calls a JavaScript
//! function that could throw except through imports marked `catch`, and no
//! getter runs at all: objects are read through property descriptors, and
//! an accessor property is refused. Only plain data is taken: object
//! literals (or `Object.create(null)`), arrays, strings, finite numbers and
//! booleans. Sizes are checked before anything is copied.

use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::Error;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = Reflect, js_name = getPrototypeOf, catch)]
    fn get_prototype_of(target: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = Reflect, js_name = ownKeys, catch)]
    fn own_keys(target: &JsValue) -> Result<js_sys::Array, JsValue>;
    #[wasm_bindgen(js_namespace = Reflect, js_name = getOwnPropertyDescriptor, catch)]
    fn own_property_descriptor(target: &JsValue, key: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = Reflect, js_name = get, catch)]
    fn get(target: &JsValue, key: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = Array, js_name = isArray, catch)]
    fn is_array(value: &JsValue) -> Result<bool, JsValue>;
}

/// The deepest nesting accepted in an input.
pub(crate) const MAX_DEPTH: usize = 8;
/// The most entries an input object or array may have.
pub(crate) const MAX_ENTRIES: u32 = 256;
/// The longest string accepted, in UTF-16 code units (1 MiB of them).
pub(crate) const MAX_STRING_UNITS: u32 = 1 << 20;

fn bad(reason: impl std::fmt::Display) -> Error {
    Error::invalid("input", reason)
}

/// Why reading a value failed, without quoting the caller's thrown value
/// at length.
fn threw(what: &str, thrown: &JsValue) -> Error {
    let detail = thrown
        .dyn_ref::<js_sys::Error>()
        .and_then(|e| {
            // `message` of a real Error is an own data property; read it guarded.
            get(e, &JsValue::from_str("message")).ok()?.as_string()
        })
        .map(|m| format!(": {}", crate::params::quote(&m)))
        .unwrap_or_default();
    bad(format!(
        "{what} threw an exception{detail}; pass plain data"
    ))
}

/// The prototypes plain data has.
struct Prototypes {
    object: JsValue,
    array: JsValue,
}

impl Prototypes {
    fn new() -> Result<Prototypes, Error> {
        let of = |v: &JsValue| get_prototype_of(v).map_err(|e| threw("Reflect.getPrototypeOf", &e));
        Ok(Prototypes {
            object: of(&js_sys::Object::new().into())?,
            array: of(&js_sys::Array::new().into())?,
        })
    }
}

/// Converts a JavaScript value to JSON, refusing what JSON cannot hold or
/// what is not plain data; never lets a caller's exception through.
pub fn js_to_json(value: &JsValue) -> Result<Value, Error> {
    thread_local! {
        /// Read once: `Object.prototype` and `Array.prototype` cannot be
        /// replaced (both properties are read-only and not configurable).
        static PROTOTYPES: std::cell::OnceCell<Prototypes> = const { std::cell::OnceCell::new() };
    }
    PROTOTYPES.with(|p| {
        let kept = match p.get() {
            Some(kept) => kept,
            None => {
                let made = Prototypes::new()?;
                p.get_or_init(|| made)
            }
        };
        convert(value, 0, kept)
    })
}

fn convert(value: &JsValue, depth: usize, protos: &Prototypes) -> Result<Value, Error> {
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested more than {MAX_DEPTH} levels deep")));
    }
    if value.is_undefined() || value.is_null() {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = value.as_f64() {
        if !n.is_finite() {
            return Err(bad(format!("numbers must be finite (got {n})")));
        }
        if n.fract() == 0.0 && n.abs() <= 9.0e15 {
            return Ok(Value::from(n as i64));
        }
        return serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| bad(format!("{n} is not a JSON number")));
    }
    if value.is_string() {
        return string(value).map(Value::String);
    }
    if value.is_bigint() {
        return Err(bad("BigInt is not accepted; use a number"));
    }
    if value.is_function() || value.is_symbol() {
        return Err(bad("expected plain data, got a function or a symbol"));
    }
    if !value.is_object() {
        return Err(bad("unsupported value"));
    }
    let proto = get_prototype_of(value).map_err(|e| threw("reading the object", &e))?;
    if proto == protos.array {
        // A Proxy of an array has Array.prototype too; isArray tells them
        // apart only for revoked ones, which throw (and are refused).
        is_array(value).map_err(|e| threw("reading the array", &e))?;
        return array(value, depth, protos);
    }
    if proto.is_null() || proto == protos.object {
        return object(value, depth, protos);
    }
    Err(bad(format!(
        "expected plain data (an object literal or an array), got {}",
        kind_of(&proto)
    )))
}

/// A string, its size checked before it is copied.
fn string(value: &JsValue) -> Result<String, Error> {
    let js: &js_sys::JsString = value.unchecked_ref();
    let units = js.length();
    if units > MAX_STRING_UNITS {
        return Err(bad(format!(
            "text may hold at most {MAX_STRING_UNITS} characters (got {units})"
        )));
    }
    if !js.is_valid_utf16() {
        return Err(bad("text contains a lone surrogate (invalid UTF-16)"));
    }
    Ok(value.as_string().unwrap_or_default())
}

/// "a Map", "a Date", "an instance of Order": the constructor's name when it
/// can be read without running the caller's code unguarded.
fn kind_of(proto: &JsValue) -> String {
    let name = get(proto, &JsValue::from_str("constructor"))
        .ok()
        .filter(|c| c.is_function())
        .and_then(|c| get(&c, &JsValue::from_str("name")).ok())
        .and_then(|n| n.as_string())
        .filter(|n| !n.is_empty());
    match name {
        Some(name) => {
            let name = crate::params::quote(&name);
            let name = name.trim_matches('"');
            let article = if name.starts_with(['A', 'E', 'I', 'O']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {name}")
        }
        None => "an object with a custom prototype".to_string(),
    }
}

/// The value of an own data property, `None` when absent (or, with
/// `enumerable_only`, not enumerable); an accessor is refused.
fn own_data(
    target: &JsValue,
    key: &JsValue,
    name: &str,
    enumerable_only: bool,
) -> Result<Option<JsValue>, Error> {
    let descriptor = own_property_descriptor(target, key)
        .map_err(|e| threw(&format!("reading field {}", quote(name)), &e))?;
    if descriptor.is_undefined() {
        return Ok(None);
    }
    let field = |f: Field| {
        DESCRIPTOR_FIELDS
            .with(|names| get(&descriptor, &names[f as usize]))
            .map_err(|e| threw(&format!("reading field {}", quote(name)), &e))
    };
    if !field(Field::Get)?.is_undefined() || !field(Field::Set)?.is_undefined() {
        return Err(bad(format!(
            "field {} is a getter or setter; pass plain data",
            quote(name)
        )));
    }
    if enumerable_only && field(Field::Enumerable)?.as_bool() != Some(true) {
        return Ok(None);
    }
    field(Field::Value).map(Some)
}

/// The fields of a property descriptor that [`own_data`] reads.
#[derive(Clone, Copy)]
enum Field {
    Get,
    Set,
    Enumerable,
    Value,
}

thread_local! {
    /// Their names as JavaScript strings, made once: every field of every
    /// argument reads up to four of them.
    static DESCRIPTOR_FIELDS: [JsValue; 4] =
        ["get", "set", "enumerable", "value"].map(JsValue::from_str);
}

fn quote(name: &str) -> String {
    crate::params::quote(name)
}

fn array(value: &JsValue, depth: usize, protos: &Prototypes) -> Result<Value, Error> {
    // An array's `length` is an own data property that is not enumerable.
    let length = own_data(value, &JsValue::from_str("length"), "length", false)?
        .and_then(|l| l.as_f64())
        .ok_or_else(|| bad("an array without a length"))?;
    if length > f64::from(MAX_ENTRIES) {
        return Err(bad(format!(
            "arrays may hold at most {MAX_ENTRIES} items (got {length})"
        )));
    }
    let mut items = Vec::with_capacity(length as usize);
    for i in 0..length as u32 {
        let item =
            own_data(value, &JsValue::from(i), &i.to_string(), false)?.unwrap_or(JsValue::NULL);
        items.push(convert(&item, depth + 1, protos)?);
    }
    Ok(Value::Array(items))
}

fn object(value: &JsValue, depth: usize, protos: &Prototypes) -> Result<Value, Error> {
    let keys = own_keys(value).map_err(|e| threw("listing the object's fields", &e))?;
    if keys.length() > MAX_ENTRIES {
        return Err(bad(format!(
            "objects may hold at most {MAX_ENTRIES} fields (got {})",
            keys.length()
        )));
    }
    let mut map = Map::new();
    for key in keys.iter() {
        if !key.is_string() {
            return Err(bad(
                "field names must be strings (got a symbol key); pass plain data",
            ));
        }
        let name = string(&key)?;
        let Some(item) = own_data(value, &key, &name, true)? else {
            continue;
        };
        if item.is_undefined() {
            continue;
        }
        map.insert(name, convert(&item, depth + 1, protos)?);
    }
    Ok(Value::Object(map))
}
