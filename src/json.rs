//! Reading JSON values that callers send (the page, a link, the command
//! line): each reader checks one field's type and range and says, in a
//! sentence a person can act on, what is wrong. Ground level: every layer
//! may read its options with these.

use serde_json::{Map, Value};

use crate::params::{describe, quote};
use crate::{Error, Result};

/// The largest integer JavaScript represents exactly (2^53 - 1).
pub(crate) const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// The value as an object, or an error naming `what`.
pub(crate) fn object<'a>(value: &'a Value, what: &'static str) -> Result<&'a Map<String, Value>> {
    value
        .as_object()
        .ok_or_else(|| Error::invalid(what, format!("expected an object, got {}", describe(value))))
}

/// Fails on keys of `map` other than `allowed`.
pub(crate) fn only(map: &Map<String, Value>, allowed: &[&str], what: &'static str) -> Result<()> {
    for key in map.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(Error::invalid(
                what,
                format!(
                    "unknown field {}; expected {}",
                    quote(key),
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// An optional text field of 1 to `max` characters.
pub(crate) fn text(
    map: &Map<String, Value>,
    field: &'static str,
    max: usize,
) -> Result<Option<String>> {
    text_noted(map, field, max, "")
}

/// [`text`], with `why` (the limit's reason, "; …") told after a length
/// refused.
pub(crate) fn text_noted(
    map: &Map<String, Value>,
    field: &'static str,
    max: usize,
    why: &str,
) -> Result<Option<String>> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let chars = s.chars().count();
            if chars == 0 || chars > max {
                return Err(Error::invalid(
                    field,
                    format!("use 1 to {max} characters (got {chars}){why}"),
                ));
            }
            Ok(Some(s.clone()))
        }
        Some(other) => Err(Error::invalid(
            field,
            format!("expected a string, got {}", describe(other)),
        )),
    }
}

/// An optional true or false.
pub(crate) fn flag(map: &Map<String, Value>, field: &'static str) -> Result<Option<bool>> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(Error::invalid(
            field,
            format!("expected true or false, got {}", describe(other)),
        )),
    }
}

/// An optional whole number in `min..=max`.
pub(crate) fn whole(
    map: &Map<String, Value>,
    field: &'static str,
    min: i64,
    max: i64,
) -> Result<Option<i64>> {
    let value = match map.get(field) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let Value::Number(n) = value else {
        return Err(Error::invalid(
            field,
            format!("expected a whole number, got {}", describe(value)),
        ));
    };
    let whole = match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i,
        (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.3e18 => f as i64,
        (None, Some(f)) if f.fract() != 0.0 => {
            return Err(Error::invalid(
                field,
                format!("expected a whole number, got {f}"),
            ))
        }
        _ => {
            return Err(Error::invalid(
                field,
                format!("{n} is out of range ({min} to {max})"),
            ))
        }
    };
    if whole < min || whole > max {
        return Err(Error::invalid(
            field,
            format!("{whole} is out of range ({min} to {max})"),
        ));
    }
    Ok(Some(whole))
}
