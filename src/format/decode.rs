//! Reading a scenario file's declarations from TOML's parsed tables.
//!
//! The file is parsed by the `toml` crate into its tables of spanned values
//! ([`DeTable`]: each key and value keeps where it is in the source), and the
//! declarations are read from those tables here, by one small function per
//! type. Derived `Deserialize` would read them too, but it instantiates
//! toml's generic deserializer (its value, table and array deserializers and
//! their map and sequence accessors) once per declaration type: about 250 KB
//! of the module's code, which every visitor of the page downloads and which
//! a page compiles on its first scenario. These functions keep the same
//! rules (unknown keys are refused, absent optional keys take their
//! defaults) and say where a mistake is: the key for an unknown key, the
//! value for a value of the wrong type, the table for a missing key.
//!
//! A declaration is written once, with [`declaration!`]: the struct, its
//! fields' documentation, and each field's key and whether it is required.

use std::collections::BTreeMap;
use std::ops::Range;

use indexmap::IndexMap;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A value of the file, with where it is.
pub(super) type Value<'i> = Spanned<DeValue<'i>>;

/// A mistake in a declaration: what it is, and where.
#[derive(Debug)]
pub(super) struct Mistake {
    /// What is wrong (serde's wording, as the file format has always used).
    pub message: String,
    /// The bytes of the source it is about.
    pub span: Range<usize>,
}

/// What reading a declaration gives.
pub(super) type Result<T> = std::result::Result<T, Mistake>;

#[inline(never)]
fn mistake(span: Range<usize>, message: String) -> Mistake {
    Mistake { message, span }
}

/// A type a file's value is read as.
pub(super) trait Decode: Sized {
    /// What a value of the type is, for a message ("a string").
    fn expected() -> &'static str {
        "a table"
    }
    /// Reads `value`.
    fn decode(value: &Value<'_>) -> Result<Self>;
}

/// The message for a value of the wrong type.
#[inline(never)]
pub(super) fn invalid_type(value: &Value<'_>, expected: &str) -> Mistake {
    let found = match value.get_ref() {
        DeValue::String(s) => format!("string {}", serde_json::Value::from(s.as_ref())),
        DeValue::Integer(i) => format!("integer `{i}`"),
        DeValue::Float(f) => format!("floating point `{f}`"),
        DeValue::Boolean(b) => format!("boolean `{b}`"),
        DeValue::Datetime(d) => format!("datetime `{d}`"),
        DeValue::Array(_) => "sequence".to_string(),
        DeValue::Table(_) => "map".to_string(),
    };
    mistake(
        value.span(),
        format!("invalid type: {found}, expected {expected}"),
    )
}

/// The table `value` is, or the mistake of it not being one.
pub(super) fn table<'a, 'i>(value: &'a Value<'i>, expected: &str) -> Result<&'a DeTable<'i>> {
    match value.get_ref() {
        DeValue::Table(t) => Ok(t),
        _ => Err(invalid_type(value, expected)),
    }
}

/// A declaration's table, its keys checked against the ones it has.
pub(super) struct Fields<'a, 'i> {
    table: &'a DeTable<'i>,
    span: Range<usize>,
}

impl<'a, 'i> Fields<'a, 'i> {
    /// Reads `value` as a table whose keys are all among `keys`.
    pub(super) fn new(value: &'a Value<'i>, keys: &[&str]) -> Result<Self> {
        Self::of(table(value, "a table")?, value.span(), keys)
    }

    /// The same for a table at `span`.
    pub(super) fn of(table: &'a DeTable<'i>, span: Range<usize>, keys: &[&str]) -> Result<Self> {
        if let Some((key, _)) = table
            .iter()
            .find(|(k, _)| !keys.contains(&k.get_ref().as_ref()))
        {
            let expected = match keys {
                [] => "there are no fields".to_string(),
                [one] => format!("expected `{one}`"),
                _ => format!(
                    "expected one of {}",
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            return Err(mistake(
                key.span(),
                format!("unknown field `{}`, {expected}", key.get_ref()),
            ));
        }
        Ok(Fields { table, span })
    }

    /// The value of `key`. Not inlined: the lookup (a hash of the key) is
    /// the same for every field of every declaration.
    #[inline(never)]
    fn get(&self, key: &str) -> Option<&'a Value<'i>> {
        self.table.get(key)
    }

    #[inline(never)]
    fn missing(&self, key: &str) -> Mistake {
        mistake(self.span.clone(), format!("missing field `{key}`"))
    }

    /// A key the table must have. Its type's placeholder if it has not, or
    /// once `failed` holds a mistake (the first is kept): a declaration is
    /// built whole and then refused, so that no field's value is dropped on
    /// the way out of every later field (drop code for each field at each
    /// place an earlier one could fail).
    pub(super) fn req<T: Required>(&self, key: &str, failed: &mut Option<Mistake>) -> T {
        if failed.is_some() {
            return T::placeholder();
        }
        let result = match self.get(key) {
            Some(value) => T::decode(value),
            None => Err(self.missing(key)),
        };
        keep(result, failed).unwrap_or_else(T::placeholder)
    }

    /// A key the table may have.
    pub(super) fn opt<T: Decode>(&self, key: &str, failed: &mut Option<Mistake>) -> Option<T> {
        if failed.is_some() {
            return None;
        }
        match self.get(key) {
            Some(value) => keep(T::decode(value), failed),
            None => None,
        }
    }

    /// A key the table may have, its type's default when it has not.
    pub(super) fn default<T: Decode + Default>(
        &self,
        key: &str,
        failed: &mut Option<Mistake>,
    ) -> T {
        self.opt(key, failed).unwrap_or_default()
    }
}

/// The value of `result`, or `None` with its mistake kept in `failed`.
/// Nothing more is read once a mistake is kept (`req` and `opt` look first).
fn keep<T>(result: Result<T>, failed: &mut Option<Mistake>) -> Option<T> {
    result.map_err(|m| *failed = Some(m)).ok()
}

/// A type a declaration may require: what stands in for it in a declaration
/// being refused.
pub(super) trait Required: Decode {
    /// A value never seen: the declaration it is in is refused.
    fn placeholder() -> Self;
}

impl Required for String {
    fn placeholder() -> Self {
        String::new()
    }
}

impl Required for i64 {
    fn placeholder() -> Self {
        0
    }
}

impl<T: Decode> Required for Vec<T> {
    fn placeholder() -> Self {
        Vec::new()
    }
}

impl Required for toml::Value {
    fn placeholder() -> Self {
        toml::Value::Boolean(false)
    }
}

/// Declares a struct of the file format and how it is read: each field is
/// followed by its key and `(req)`, `(opt)` (an `Option`, `None` when
/// absent) or `(default)` (the type's default when absent).
macro_rules! declaration {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                pub $field:ident : $ty:ty = $key:literal ($how:ident),
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $(
                $(#[$field_meta])*
                pub $field: $ty,
            )*
        }

        impl $crate::format::decode::Decode for $name {
            fn decode(value: &$crate::format::decode::Value<'_>) -> $crate::format::decode::Result<Self> {
                let fields = $crate::format::decode::Fields::new(value, &[$($key),*])?;
                let mut failed = None;
                let read = $name {
                    $($field: fields.$how($key, &mut failed),)*
                };
                match failed {
                    None => Ok(read),
                    Some(mistake) => Err(mistake),
                }
            }
        }
    };
}
pub(crate) use declaration;

impl Decode for String {
    fn expected() -> &'static str {
        "a string"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        match value.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(invalid_type(value, Self::expected())),
        }
    }
}

impl Decode for bool {
    fn expected() -> &'static str {
        "a boolean"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        match value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            _ => Err(invalid_type(value, Self::expected())),
        }
    }
}

/// An integer of the file, in range of `i64` (the range TOML's integers have).
fn integer(value: &Value<'_>, expected: &str) -> Result<i64> {
    match value.get_ref() {
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map_err(|_| mistake(value.span(), format!("integer `{i}` is out of range"))),
        _ => Err(invalid_type(value, expected)),
    }
}

impl Decode for i64 {
    fn expected() -> &'static str {
        "i64"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        integer(value, Self::expected())
    }
}

impl Decode for usize {
    fn expected() -> &'static str {
        "usize"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        let n = integer(value, Self::expected())?;
        usize::try_from(n).map_err(|_| {
            mistake(
                value.span(),
                format!("invalid value: integer `{n}`, expected usize"),
            )
        })
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn expected() -> &'static str {
        "a sequence"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        match value.get_ref() {
            DeValue::Array(items) => items.iter().map(T::decode).collect(),
            _ => Err(invalid_type(value, Self::expected())),
        }
    }
}

impl<T: Decode> Decode for IndexMap<String, T> {
    fn expected() -> &'static str {
        "a map"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        table(value, Self::expected())?
            .iter()
            .map(|(k, v)| Ok((k.get_ref().to_string(), T::decode(v)?)))
            .collect()
    }
}

impl<T: Decode> Decode for BTreeMap<String, T> {
    fn expected() -> &'static str {
        "a map"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        // Inserted one by one: collecting would sort the entries first, with
        // a stable sort compiled once per value type.
        let mut out = BTreeMap::new();
        for (k, v) in table(value, Self::expected())? {
            out.insert(k.get_ref().to_string(), T::decode(v)?);
        }
        Ok(out)
    }
}

impl Decode for toml::Value {
    fn expected() -> &'static str {
        "any valid TOML value"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        Ok(match value.get_ref() {
            DeValue::String(s) => toml::Value::String(s.to_string()),
            DeValue::Integer(_) => toml::Value::Integer(integer(value, Self::expected())?),
            DeValue::Float(f) => toml::Value::Float(
                f.as_str()
                    .parse()
                    .map_err(|_| mistake(value.span(), format!("invalid floating point `{f}`")))?,
            ),
            DeValue::Boolean(b) => toml::Value::Boolean(*b),
            DeValue::Datetime(d) => toml::Value::Datetime(*d),
            DeValue::Array(items) => toml::Value::Array(
                items
                    .iter()
                    .map(toml::Value::decode)
                    .collect::<Result<_>>()?,
            ),
            DeValue::Table(_) => toml::Value::Table(toml::Table::decode(value)?),
        })
    }
}

impl Decode for toml::Table {
    fn expected() -> &'static str {
        "a map"
    }
    fn decode(value: &Value<'_>) -> Result<Self> {
        let mut out = toml::Table::new();
        for (k, v) in table(value, Self::expected())? {
            out.insert(k.get_ref().to_string(), toml::Value::decode(v)?);
        }
        Ok(out)
    }
}

/// Parses `source` and reads it as a `T`. A syntax error is toml's (its
/// message and where it is).
pub(super) fn from_str<T: Decode>(source: &str) -> Result<T> {
    let document = DeTable::parse(source).map_err(|e| Mistake {
        message: e.message().to_string(),
        span: e.span().unwrap_or(0..0),
    })?;
    let span = document.span();
    T::decode(&Spanned::new(span, DeValue::Table(document.into_inner())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{ActionSpec, Capture, File, NoteSpec};

    /// The message and the text at the mistake's place.
    fn mistake_of(source: &str) -> (String, String) {
        let m = from_str::<File>(source).unwrap_err();
        (m.message, source[m.span].to_string())
    }

    const HEAD: &str =
        "title = \"t\"\n[[attempts]]\nsteps = [{ name = \"s\", sql = \"SELECT 1\" }]\n";

    #[test]
    fn every_kind_of_field_is_read() {
        let source = format!(
            "{HEAD}crash-after = {{ steps = 2, name = \"die\" }}\nnot-before = \":window\"\n\
             with = {{ n = 3, f = 1.5, on = true, day = 1979-05-27, list = [1, \"a\"] }}\n\
             [[attempts]]\nreplicas = 2\nsteps = [\n\
             {{ name = \"a\", sql = \"SELECT 1, 2\", capture = [\"x\", \"y\"], note = {{ rows = \"r\", none = \"n\" }}, on.rows = {{ goto = \"b\", back-off = true }}, on.none = \"next\" }},\n\
             {{ name = \"b\", sql = \"SELECT 1\", capture = \"z\", note = \"said\" }},\n]\n\
             [params.n]\ntype = \"whole\"\ndefault = 2\nmarks = [1, 2]\nmax-chars = 4\n"
        );
        let file: File = from_str(&source).unwrap();
        assert_eq!(file.title, "t");
        let a = &file.attempts[0];
        assert_eq!(
            a.crash_after.as_ref().unwrap().steps,
            toml::Value::Integer(2)
        );
        assert_eq!(a.crash_after.as_ref().unwrap().name.as_deref(), Some("die"));
        assert_eq!(a.not_before, Some(toml::Value::String(":window".into())));
        assert_eq!(a.with["n"], toml::Value::Integer(3));
        assert_eq!(a.with["f"], toml::Value::Float(1.5));
        assert_eq!(a.with["on"], toml::Value::Boolean(true));
        assert_eq!(
            a.with["day"].as_datetime().unwrap().to_string(),
            "1979-05-27"
        );
        assert_eq!(
            a.with["list"],
            toml::Value::Array(vec![1.into(), "a".into()])
        );
        let b = &file.attempts[1];
        assert_eq!(b.replicas, Some(toml::Value::Integer(2)));
        let steps = &b.steps;
        assert!(matches!(&steps[0].capture, Some(Capture::Many(c)) if c == &["x", "y"]));
        assert!(
            matches!(&steps[0].note, Some(NoteSpec::By(n)) if n["rows"] == "r" && n["none"] == "n")
        );
        assert!(
            matches!(&steps[0].on.rows, Some(ActionSpec::Table(t)) if t.goto.as_deref() == Some("b") && t.back_off)
        );
        assert_eq!(steps[0].on.none, Some(ActionSpec::Word("next".into())));
        assert!(matches!(&steps[1].capture, Some(Capture::One(c)) if c == "z"));
        assert!(matches!(&steps[1].note, Some(NoteSpec::One(n)) if n == "said"));
        let n = &file.params["n"];
        assert_eq!(n.kind.as_deref(), Some("whole"));
        assert_eq!(n.marks, Some(vec![1, 2]));
        assert_eq!(n.max_chars, Some(4));
        // Absent keys take their defaults.
        assert!(!file.fails && file.explanation.is_empty() && file.checks.is_empty());
        assert!(steps[1].on.rows.is_none() && !file.attempts[0].steps.is_empty());
    }

    #[test]
    fn unknown_keys_are_refused_where_they_are_written() {
        let (message, at) = mistake_of(&format!("{HEAD}crash_after = 2\n"));
        assert!(
            message.starts_with("unknown field `crash_after`, expected one of `role`, `label`"),
            "{message}"
        );
        assert_eq!(at, "crash_after");
        let (message, at) = mistake_of(&HEAD.replace("sql =", "sqll ="));
        assert!(message.starts_with("unknown field `sqll`"), "{message}");
        assert_eq!(at, "sqll");
        let (message, at) =
            mistake_of(&HEAD.replace("name = \"s\",", "name = \"s\", on = { okk = \"next\" },"));
        assert!(
            message.starts_with("unknown field `okk`, expected one of `ok`, `rows`"),
            "{message}"
        );
        assert_eq!(at, "okk");
        // One key allowed: said as such.
        let (message, _) = mistake_of(&format!("{HEAD}[programs.p]\nsteps = []\nname = \"x\"\n"));
        assert_eq!(message, "unknown field `name`, expected `steps`");
    }

    #[test]
    fn values_of_the_wrong_type_are_refused_where_they_are_written() {
        for (source, expected, at) in [
            (HEAD.replace("title = \"t\"", "title = 5"), "invalid type: integer `5`, expected a string", "5"),
            (format!("{HEAD}label = [\"a\"]\n"), "invalid type: sequence, expected a string", "[\"a\"]"),
            (format!("fails = \"yes\"\n{HEAD}"), "invalid type: string \"yes\", expected a boolean", "\"yes\""),
            (format!("{HEAD}steps = \"s\"\n"), "", ""),
            (format!("{HEAD}clock = {{ tick = 1.5, until = 9 }}\n"), "invalid type: floating point `1.5`, expected i64", "1.5"),
            (format!("{HEAD}[params.n]\nmax-chars = -1\n"), "invalid value: integer `-1`, expected usize", "-1"),
            (HEAD.replace("name = \"s\",", "name = \"s\", capture = 3,"), "invalid type: integer `3`, expected a column's name or an array of names", "3"),
            (HEAD.replace("name = \"s\",", "name = \"s\", note = true,"), "invalid type: boolean `true`, expected a sentence or a table of sentences by result", "true"),
            (HEAD.replace("name = \"s\",", "name = \"s\", on.ok = [],"), "invalid type: sequence, expected an action: a word or a table", "[]"),
            (HEAD.replace("name = \"s\",", "name = \"s\", on.ok = { goto = 1 },"), "invalid type: integer `1`, expected a string", "1"),
            (format!("databases = 3\n{HEAD}"), "invalid type: integer `3`, expected a map", "3"),
            (format!("{HEAD}with = 3\n"), "invalid type: integer `3`, expected a map", "3"),
        ] {
            if expected.is_empty() {
                // A key given twice is TOML's own mistake.
                assert!(from_str::<File>(&source).is_err());
                continue;
            }
            let (message, text) = mistake_of(&source);
            assert_eq!(message, expected, "{source}");
            assert_eq!(text, at, "{source}");
        }
    }

    #[test]
    fn missing_keys_are_said_at_their_table() {
        let (message, _) = mistake_of("[[attempts]]\nsteps = []\n");
        assert_eq!(message, "missing field `title`");
        let (message, _) = mistake_of("title = \"t\"\n");
        assert_eq!(message, "missing field `attempts`");
        // Of two mistakes, the one of the field declared first is said.
        let (message, at) = mistake_of("fails = 1\ntitle = 5\n");
        assert_eq!(message, "invalid type: integer `5`, expected a string");
        assert_eq!(at, "5");
        let (message, at) = mistake_of(
            "title = \"t\"\n[[attempts]]\nsteps = [{ name = \"s\", sql = \"SELECT 1\", because = [{ peers-in = [\"x\"] }] }]\n",
        );
        assert_eq!(message, "missing field `say`");
        assert_eq!(at, "{ peers-in = [\"x\"] }");
        let (message, at) = mistake_of(&format!("{HEAD}clock = {{ tick = 1 }}\n"));
        assert_eq!(message, "missing field `until`");
        assert_eq!(at, "{ tick = 1 }");
    }

    #[test]
    fn syntax_errors_are_toml_s_own() {
        let m = from_str::<File>("title = \n").unwrap_err();
        assert!(!m.message.is_empty());
        assert!(m.span.start <= 8, "{:?}", m.span);
    }
}
