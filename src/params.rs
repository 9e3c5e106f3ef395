//! Scenario parameters, declared once.
//!
//! Each catalog entry lists its parameters as [`Param`] declarations: name,
//! type and range, default and a one-line meaning. Everything else derives
//! from them: the parser every entry point uses ([`Params::parse`] for JSON
//! from the command line, the JS exports and the embeds; [`Params::parse_link`]
//! for a permalink's text values), the catalog the page builds its controls
//! from, and the TypeScript types ([`typescript`], checked in as
//! `src/params.d.ts` and kept in step by a test).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Error, Result};

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Kind {
    /// A whole number in `min..=max`, a multiple of `multiple_of`.
    #[serde(rename_all = "camelCase")]
    Whole {
        /// The smallest value.
        min: i64,
        /// The largest value.
        max: i64,
        /// Values must be multiples of this (1 for any whole number).
        multiple_of: i64,
        /// The unit, for people ("seconds", "" for none).
        unit: &'static str,
        /// Values worth trying first, in order (the page offers them on a
        /// slider); any other value in range is accepted too.
        marks: &'static [i64],
    },
    /// Text of 1 to `max_chars` characters, without control characters.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The most characters.
        max_chars: usize,
    },
    /// One of a fixed list of names.
    Choice {
        /// The names, in the order a person would list them.
        options: &'static [&'static str],
    },
}

/// A default value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Default {
    /// A whole number.
    Whole(i64),
    /// Text or a choice's name.
    Text(&'static str),
}

/// One parameter of a scenario, declared once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Param {
    /// The name in JSON, links and attributes (camelCase).
    pub name: &'static str,
    /// The values it takes.
    #[serde(flatten)]
    pub kind: Kind,
    /// The value when none is given.
    pub default: Default,
    /// One line on what it changes.
    pub meaning: &'static str,
}

impl Param {
    /// A whole-number parameter.
    pub const fn whole(
        name: &'static str,
        (min, max): (i64, i64),
        default: i64,
        meaning: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Whole {
                min,
                max,
                multiple_of: 1,
                unit: "",
                marks: &[],
            },
            default: Default::Whole(default),
            meaning,
        }
    }

    /// A text parameter of 1 to `max_chars` characters.
    pub const fn text(
        name: &'static str,
        max_chars: usize,
        default: &'static str,
        meaning: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Text { max_chars },
            default: Default::Text(default),
            meaning,
        }
    }

    /// A parameter that takes one of `options`.
    pub const fn choice(
        name: &'static str,
        options: &'static [&'static str],
        default: &'static str,
        meaning: &'static str,
    ) -> Param {
        Param {
            name,
            kind: Kind::Choice { options },
            default: Default::Text(default),
            meaning,
        }
    }

    /// The same parameter with another default.
    pub const fn default_to(mut self, default: Default) -> Param {
        self.default = default;
        self
    }

    /// The same whole-number parameter in `unit`, multiples of `multiple_of`.
    pub const fn in_steps_of(mut self, multiple_of: i64, unit: &'static str) -> Param {
        if let Kind::Whole {
            min, max, marks, ..
        } = self.kind
        {
            self.kind = Kind::Whole {
                min,
                max,
                multiple_of,
                unit,
                marks,
            };
        }
        self
    }

    /// The same whole-number parameter with values worth trying first.
    pub const fn with_marks(mut self, marks: &'static [i64]) -> Param {
        if let Kind::Whole {
            min,
            max,
            multiple_of,
            unit,
            ..
        } = self.kind
        {
            self.kind = Kind::Whole {
                min,
                max,
                multiple_of,
                unit,
                marks,
            };
        }
        self
    }

    /// Checks a JSON value against the declaration.
    pub fn check(&self, value: &Value) -> Result<Value> {
        let field = self.name;
        match self.kind {
            Kind::Whole {
                min,
                max,
                multiple_of,
                unit,
                ..
            } => {
                let n = whole_number(field, value)?;
                let unit = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                };
                if n < min || n > max {
                    return Err(Error::invalid(
                        field,
                        format!("{n} is out of range ({min} to {max}{unit})"),
                    ));
                }
                if n % multiple_of != 0 {
                    return Err(Error::invalid(
                        field,
                        format!("use a multiple of {multiple_of}{unit} (got {n})"),
                    ));
                }
                Ok(Value::from(n))
            }
            Kind::Text { max_chars } => {
                let Value::String(text) = value else {
                    return Err(Error::invalid(
                        field,
                        format!("expected text, got {}", describe(value)),
                    ));
                };
                check_text(field, text, max_chars, "")?;
                Ok(value.clone())
            }
            Kind::Choice { options } => {
                // A link gives every value as text; numbers name choices like "6" too.
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Number(n) => n.to_string(),
                    other => {
                        return Err(Error::invalid(
                            field,
                            format!(
                                "expected one of {}, got {}",
                                options.join(", "),
                                describe(other)
                            ),
                        ))
                    }
                };
                if !options.contains(&text.as_str()) {
                    return Err(Error::invalid(
                        field,
                        format!(
                            "unknown choice {}; use {}",
                            quote(&text),
                            options.join(", ")
                        ),
                    ));
                }
                Ok(Value::String(text))
            }
        }
    }

    /// Parses a link's text value as the declaration's type.
    pub fn parse_text(&self, text: &str) -> Result<Value> {
        match self.kind {
            Kind::Whole { .. } => {
                let n = text.trim().parse::<i64>().map_err(|_| {
                    Error::invalid(
                        self.name,
                        format!("expected a whole number, got {}", quote(text)),
                    )
                })?;
                self.check(&Value::from(n))
            }
            _ => self.check(&Value::String(text.to_string())),
        }
    }

    /// The default as JSON.
    pub fn default_value(&self) -> Value {
        match self.default {
            Default::Whole(n) => Value::from(n),
            Default::Text(text) => Value::from(text),
        }
    }
}

/// A scenario's parameters with defaults filled in, each checked against
/// its declaration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params(Map<String, Value>);

impl Params {
    /// Every declared parameter at its default.
    pub fn defaults(declared: &[Param]) -> Params {
        // Inserted one by one (here and below): collecting into the map
        // would sort the entries first, a stable sort compiled for each
        // kind of entry the module collects.
        let mut values = Map::new();
        for p in declared {
            values.insert(p.name.to_string(), p.default_value());
        }
        Params(values)
    }

    /// Values bound by name as they are, for an attempt the engine builds
    /// itself (a session's request), not for what a caller gave.
    pub(crate) fn bound(values: Map<String, Value>) -> Params {
        Params(values)
    }

    /// `given` (a JSON object, or null for none) checked against `declared`
    /// for scenario `scenario`; absent fields keep their defaults.
    pub fn parse(scenario: &str, declared: &[Param], given: &Value) -> Result<Params> {
        let mut params = Params::defaults(declared);
        let map = match given {
            Value::Null => return Ok(params),
            Value::Object(map) => map,
            other => {
                return Err(Error::invalid(
                    "params",
                    format!("expected an object, got {}", describe(other)),
                ))
            }
        };
        for (name, value) in map {
            let param = find(scenario, declared, name)?;
            if value.is_null() {
                continue;
            }
            params.0.insert(param.name.to_string(), param.check(value)?);
        }
        Ok(params)
    }

    /// Parses one link value (`name=text`) into `self`.
    pub fn set_from_link(
        &mut self,
        scenario: &str,
        declared: &[Param],
        name: &str,
        text: &str,
    ) -> Result<()> {
        let param = find(scenario, declared, name)?;
        let value = param.parse_text(text)?;
        self.0.insert(param.name.to_string(), value);
        Ok(())
    }

    /// The value of `param`: the one given or defaulted for this scenario
    /// when it declares `param`, else `param`'s own default (a scenario that
    /// does not take a parameter runs with that fixed value).
    pub fn value_of(&self, param: &Param) -> Value {
        self.0
            .get(param.name)
            .cloned()
            .unwrap_or_else(|| param.default_value())
    }

    /// A whole-number parameter's value (see [`Params::value_of`]).
    pub fn whole_of(&self, param: &Param) -> Result<i64> {
        self.value_of(param)
            .as_i64()
            .ok_or_else(|| mistyped(param.name))
    }

    /// A text or choice parameter's value (see [`Params::value_of`]).
    pub fn text_of(&self, param: &Param) -> Result<String> {
        match self.value_of(param) {
            Value::String(text) => Ok(text),
            _ => Err(mistyped(param.name)),
        }
    }

    /// The values that differ from the defaults of `declared`, as a link or
    /// an embed would carry them.
    pub fn changed(&self, declared: &[Param]) -> Map<String, Value> {
        let mut changed = Map::new();
        for p in declared {
            if let Some(value) = self.0.get(p.name).filter(|v| **v != p.default_value()) {
                changed.insert(p.name.to_string(), value.clone());
            }
        }
        changed
    }

    /// Every value, by name.
    pub fn values(&self) -> &Map<String, Value> {
        &self.0
    }
}

fn find<'a>(scenario: &str, declared: &'a [Param], name: &str) -> Result<&'a Param> {
    declared.iter().find(|p| p.name == name).ok_or_else(|| {
        let takes = if declared.is_empty() {
            "no parameters".to_string()
        } else {
            declared
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        Error::invalid(
            "params",
            format!(
                "scenario {scenario} has no parameter {}; it takes {takes}",
                quote(name)
            ),
        )
    })
}

fn mistyped(name: &str) -> Error {
    Error::Defect(format!(
        "the scenario reads parameter {name} as another type than it declares (a bug in the catalog)"
    ))
}

/// Checks text a caller gave: 1 to `max_chars` characters (`what` adds to
/// the sentence, e.g. ", as Stripe limits keys") and no control characters.
pub(crate) fn check_text(
    field: &'static str,
    text: &str,
    max_chars: usize,
    what: &str,
) -> Result<()> {
    let chars = text.chars().count();
    if chars == 0 || chars > max_chars {
        return Err(Error::invalid(
            field,
            format!("use 1 to {max_chars} characters{what} (got {chars})"),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(Error::invalid(field, "control characters are not allowed"));
    }
    Ok(())
}

/// A whole number from JSON (integers, or floats with no fraction).
pub(crate) fn whole_number(field: &'static str, value: &Value) -> Result<i64> {
    let Value::Number(n) = value else {
        return Err(Error::invalid(
            field,
            format!("expected a whole number, got {}", describe(value)),
        ));
    };
    if let Some(i) = n.as_i64() {
        return Ok(i);
    }
    match n.as_f64() {
        Some(f) if f.fract() != 0.0 => Err(Error::invalid(
            field,
            format!("expected a whole number, got {f}"),
        )),
        Some(f) if f.abs() < 9.2e18 => Ok(f as i64),
        _ => Err(Error::invalid(field, format!("{n} is out of range"))),
    }
}

/// What kind of JSON value this is, for messages.
pub(crate) fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The most characters of a caller's text quoted back in a message.
pub(crate) const QUOTE_CHARS: usize = 40;

/// `text` quoted for a message, cut to [`QUOTE_CHARS`] characters.
pub(crate) fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        format!("{head:?}… ({} characters)", text.chars().count())
    } else {
        format!("{head:?}")
    }
}

/// How [`declared_names`] begins a list, after "; ": the names it quotes
/// are not where a problem is ([`crate::format`] places a message at the
/// last name it quotes before them).
pub(crate) const DECLARED: &str = "the declared ";

/// The most names [`declared_names`] lists.
const NAMES_LISTED: usize = 8;

/// What a message says after a name that is not declared: the names that
/// are, closest to `given` first (by edit distance, on their first 64
/// characters), at most [`NAMES_LISTED`], each quoted: `the declared ones
/// are "check-and-write", "write-only"`.
pub(crate) fn declared_names<'a>(given: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let head = |s: &str| s.chars().take(64).collect::<String>();
    let given = head(given);
    let mut names: Vec<(usize, &str)> = names
        .into_iter()
        .map(|name| (strsim::levenshtein(&given, &head(name)), name))
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    let more = names.len().saturating_sub(NAMES_LISTED);
    let listed: Vec<String> = names
        .iter()
        .take(NAMES_LISTED)
        .map(|(_, name)| quote(name))
        .collect();
    match (listed.len(), more) {
        (0, _) => "none is declared".to_string(),
        (1, _) => format!("{DECLARED}one is {}", listed[0]),
        (_, 0) => format!("{DECLARED}ones are {}, closest first", listed.join(", ")),
        _ => format!(
            "{DECLARED}ones are {} and {more} more, closest first",
            listed.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_names_come_closest_first() {
        assert_eq!(
            declared_names("check-and-write", ["answer", "check-then-write", "request"]),
            r#"the declared ones are "check-then-write", "answer", "request", closest first"#
        );
        assert_eq!(declared_names("x", []), "none is declared");
        assert_eq!(declared_names("x", ["y"]), r#"the declared one is "y""#);
        let many: Vec<String> = (0..12).map(|i| format!("p{i:02}")).collect();
        let text = declared_names("p11", many.iter().map(String::as_str));
        assert!(
            text.starts_with(r#"the declared ones are "p11", "p01""#),
            "{text}"
        );
        assert!(text.ends_with("and 4 more, closest first"), "{text}");
    }

    const DECLARED: &[Param] = &[
        Param::whole("attempts", (1, 8), 8, "racing attempts"),
        Param::text("tenant", 255, "north", "the tenant"),
        Param::choice("profile", &["reference", "ietf"], "reference", "profile"),
        Param::whole("window", (300, 86_400), 300, "window").in_steps_of(300, "seconds"),
    ];

    #[test]
    fn defaults_fill_what_is_not_given() {
        let p = Params::parse("s", DECLARED, &json!({"attempts": 3})).unwrap();
        assert_eq!(p.whole_of(&DECLARED[0]).unwrap(), 3);
        assert_eq!(p.text_of(&DECLARED[1]).unwrap(), "north");
        assert_eq!(
            p.changed(DECLARED),
            json!({"attempts": 3}).as_object().unwrap().clone()
        );
        assert!(p.text_of(&DECLARED[0]).is_err());
        // A parameter the scenario does not declare runs at its own default.
        let other = Param::whole("delay", (1, 10), 7, "not declared here");
        assert_eq!(p.whole_of(&other).unwrap(), 7);
    }

    #[test]
    fn every_kind_refuses_what_it_does_not_take() {
        for (given, expected) in [
            (json!({"attempts": 9}), "invalid attempts: 9 is out of range (1 to 8)"),
            (json!({"attempts": 2.5}), "invalid attempts: expected a whole number, got 2.5"),
            (json!({"attempts": "2"}), "invalid attempts: expected a whole number, got text"),
            (json!({"tenant": ""}), "invalid tenant: use 1 to 255 characters (got 0)"),
            (json!({"tenant": "a\u{7}"}), "invalid tenant: control characters are not allowed"),
            (json!({"profile": "aws"}), "invalid profile: unknown choice \"aws\"; use reference, ietf"),
            (json!({"window": 301}), "invalid window: use a multiple of 300 seconds (got 301)"),
            (json!({"delay": 1}), "invalid params: scenario s has no parameter \"delay\"; it takes attempts, tenant, profile, window"),
            (json!([1]), "invalid params: expected an object, got an array"),
        ] {
            let text = Params::parse("s", DECLARED, &given).unwrap_err().to_string();
            assert_eq!(text, expected);
        }
    }

    #[test]
    fn link_text_is_parsed_as_the_declared_type() {
        let mut p = Params::defaults(DECLARED);
        p.set_from_link("s", DECLARED, "attempts", " 4").unwrap();
        p.set_from_link("s", DECLARED, "tenant", "4").unwrap();
        assert_eq!(p.whole_of(&DECLARED[0]).unwrap(), 4);
        assert_eq!(p.text_of(&DECLARED[1]).unwrap(), "4");
        let e = p
            .set_from_link("s", DECLARED, "attempts", "many")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid attempts: expected a whole number, got \"many\""
        );
    }

    #[test]
    fn quotes_are_short() {
        let long = "x".repeat(10 << 20);
        let q = quote(&long);
        assert!(q.len() < 80, "{q}");
        assert!(q.ends_with("(10485760 characters)"));
        assert_eq!(quote("ab"), "\"ab\"");
    }
}
