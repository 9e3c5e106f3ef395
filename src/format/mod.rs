//! Scenarios as data: a scenario file a person writes, and the engine that
//! runs it.
//!
//! The file is TOML: SQL goes in multi-line strings without escaping,
//! comments are `#`, and a mistake is reported at its line and column. A
//! file declares its databases (schema and seed rows), its parameters (the
//! same declarations as the built-ins', [`crate::scenarios::Param`]), its
//! attempts (each a program of steps on its own connection, optionally
//! replicated N times), and its checks (SQL on the final state with the
//! expected answer, and conditions on the attempts' outcomes). See the
//! README's "Write your own scenario" for a walk-through and every field.
//!
//! This is the first slice of the format: the built-in catalog is not yet
//! written in it (see the README's status).

mod program;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::scenarios::params::{self, Param, Params};
use crate::sim::Scenario;
use crate::{Error, Result};

pub use program::FileScenario;

/// The longest scenario source accepted, in bytes.
pub const MAX_SOURCE_BYTES: usize = 256 * 1024;
/// The most attempts a file may run (the schedule codec's letters).
pub const MAX_ATTEMPTS: usize = 26;
/// The most steps one attempt's program may have.
pub const MAX_PROGRAM_STEPS: usize = 200;
/// The most steps one attempt may take in a run (loops end here).
pub const MAX_ATTEMPT_STEPS: usize = 1000;
/// The most SQLite VM instructions one statement of a file may run (an
/// endless recursive query ends here).
pub const MAX_STATEMENT_INSTRUCTIONS: u64 = 20_000_000;
/// The largest string or blob a file's SQL may make, in bytes.
pub const MAX_VALUE_BYTES: i32 = 16 << 20;

/// A scenario file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// A short id (letters, digits, dashes); the file name when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// The title.
    pub title: String,
    /// What the scenario shows, in a few sentences.
    #[serde(default)]
    pub explanation: String,
    /// Whether the design is meant to fail under some schedule.
    #[serde(default)]
    pub fails: bool,
    /// The parameters, by name.
    #[serde(default)]
    pub params: BTreeMap<String, ParamSpec>,
    /// The databases, by name (the file is `NAME.db`).
    pub databases: BTreeMap<String, Database>,
    /// The attempts, in order (the first is A).
    pub attempts: Vec<AttemptSpec>,
    /// The checks after every run.
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
    /// SQL checks that must hold on the committed state after every step.
    #[serde(default)]
    pub invariants: Vec<CheckSpec>,
}

/// A parameter's declaration in a file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ParamSpec {
    /// `whole`, `text` or `choice`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The default.
    pub default: toml::Value,
    /// One line on what it changes.
    #[serde(default)]
    pub meaning: String,
    /// Whole numbers: the smallest value.
    pub min: Option<i64>,
    /// Whole numbers: the largest value.
    pub max: Option<i64>,
    /// Text: the most characters.
    pub max_chars: Option<usize>,
    /// Choices: the names.
    pub options: Option<Vec<String>>,
}

/// A database of the scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    /// The schema, as SQL statements.
    #[serde(default)]
    pub schema: String,
    /// Rows to start from, as SQL statements.
    #[serde(default)]
    pub seed: String,
}

/// An attempt: a program of steps on its own connection.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptSpec {
    /// A word for what the attempt is ("client", "relay").
    #[serde(default)]
    pub role: Option<String>,
    /// How many copies race: a number, or the name of a whole parameter.
    #[serde(default)]
    pub replicas: Option<toml::Value>,
    /// The database its connection opens (the only one, when there is one).
    #[serde(default)]
    pub database: Option<String>,
    /// Starts only once the attempt with this role is over (a client's
    /// retry after its first request ended); that attempt comes earlier in
    /// the file and is not replicated.
    #[serde(default)]
    pub after: Option<String>,
    /// The program.
    pub steps: Vec<StepSpec>,
}

/// One step: a SQL statement or an action, and what to do with its result.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// The step's name (what a trace and a `goto` call it).
    pub name: String,
    /// One SQL statement; `:name` binds a parameter, a capture, or
    /// `:attempt` (0 for A), `:label` ("A"), `:now` (the virtual clock).
    #[serde(default)]
    pub sql: Option<String>,
    /// Or an action: `crash` (the attempt's process dies here) or
    /// `lose-reply` (the attempt ends, and its client never hears the answer).
    #[serde(default)]
    pub action: Option<String>,
    /// Keep the first column of the first row under this name (NULL if no row).
    #[serde(default)]
    pub capture: Option<String>,
    /// The sentence for the trace; `{name}` inserts a capture or parameter,
    /// `{label}` the attempt, `{rows}` the row count.
    #[serde(default)]
    pub note: Option<String>,
    /// What to do on each result.
    #[serde(default)]
    pub on: On,
}

/// What a step does on each kind of result. Absent: `ok`, `rows` and
/// `none` go on to the next step, `busy` waits for the lock, `constraint`
/// and `error` fail the attempt.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct On {
    /// The statement succeeded (when neither `rows` nor `none` is given).
    pub ok: Option<ActionSpec>,
    /// It returned at least one row.
    pub rows: Option<ActionSpec>,
    /// It returned no row.
    pub none: Option<ActionSpec>,
    /// SQLite answered BUSY.
    pub busy: Option<ActionSpec>,
    /// A constraint failed (UNIQUE, CHECK, FOREIGN KEY, NOT NULL).
    pub constraint: Option<ActionSpec>,
    /// Any other error.
    pub error: Option<ActionSpec>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ActionSpec {
    /// `"next"`, `"wait"` (busy only: stay until the lock is free), or
    /// `"retry"` (roll back and start the program again, at most 3 times).
    Word(String),
    /// `{ goto = "step" }`, `{ finish = "outcome", result = ":capture" }`
    /// or `{ fail = "why" }`.
    Table(ActionTable),
}

/// The table form of an action.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionTable {
    /// Jump to the step of this name.
    pub goto: Option<String>,
    /// End the attempt with this outcome.
    pub finish: Option<String>,
    /// The outcome's result: text, or `:capture`.
    pub result: Option<String>,
    /// Fail the attempt with this reason.
    pub fail: Option<String>,
}

/// A check after a run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckSpec {
    /// What it checks, for people.
    pub name: String,
    /// SQL on the committed state…
    pub sql: Option<String>,
    /// …of this database (the only one, when there is one)…
    pub database: Option<String>,
    /// …must answer this: a value (one row, one column) or an array of rows.
    pub expect: Option<toml::Value>,
    /// Or: how many attempts ended with this outcome…
    pub outcome: Option<String>,
    /// …exactly.
    pub count: Option<toml::Value>,
    /// Or: every attempt that ended with one of these outcomes got the same result.
    pub same_result: Option<Vec<String>>,
}

/// Where in the source a problem is, and what it is.
fn at(source: &str, span: Option<std::ops::Range<usize>>, message: &str) -> Error {
    let (line, column) = span.map_or((1, 1), |span| {
        let before = &source[..span.start.min(source.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    });
    Error::invalid(
        "scenario",
        format!("line {line}, column {column}: {}", message.trim()),
    )
}

/// Parses and checks a scenario source; `fallback_id` names it when the
/// file gives no id.
pub fn parse(source: &str, fallback_id: &str) -> Result<File> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(Error::invalid(
            "scenario",
            format!(
                "the source is {} bytes; at most {MAX_SOURCE_BYTES} are accepted",
                source.len()
            ),
        ));
    }
    let mut file: File = toml::from_str(source).map_err(|e| {
        let message = e.message().to_string();
        at(source, e.span(), &message)
    })?;
    if file.id.is_none() {
        file.id = Some(fallback_id.to_string());
    }
    validate(&file).map_err(|e| match e {
        Error::InvalidInput { reason, .. } => {
            // Point at the first line naming the problem's subject, if any.
            at(source, None, &reason)
        }
        other => other,
    })?;
    Ok(file)
}

impl File {
    /// The file's id.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or("scenario")
    }

    /// The parameter declarations, as the engine's [`Param`]s.
    pub fn declared_params(&self) -> Result<Vec<Param>> {
        self.params
            .iter()
            .map(|(name, spec)| spec.to_param(name))
            .collect()
    }

    /// Builds the scenario with parameters given as JSON (null: defaults).
    pub fn build(&self, given: &Value) -> Result<Box<dyn Scenario>> {
        let declared = self.declared_params()?;
        let params = Params::parse(self.id(), &declared, given)?;
        Ok(Box::new(FileScenario::new(self.clone(), params)?))
    }
}

/// A `&'static str` for `text`: declarations are `'static` in the built-in
/// catalog. Each distinct text is kept once (interned), so parsing the same
/// file again, as an editor does on every change, keeps nothing new.
// The next slice makes declarations own their text (see the README status).
pub(crate) fn leak(text: &str) -> &'static str {
    use std::cell::RefCell;
    use std::collections::HashSet;
    thread_local! {
        static INTERNED: RefCell<HashSet<&'static str>> = RefCell::new(HashSet::new());
    }
    INTERNED.with(|set| {
        let mut set = set.borrow_mut();
        if let Some(existing) = set.get(text) {
            return *existing;
        }
        let kept: &'static str = Box::leak(text.to_string().into_boxed_str());
        set.insert(kept);
        kept
    })
}

impl ParamSpec {
    fn to_param(&self, name: &str) -> Result<Param> {
        let bad = |why: String| Error::invalid("params", format!("parameter {name}: {why}"));
        let meaning = leak(&self.meaning);
        let name = leak(name);
        match self.kind.as_str() {
            "whole" => {
                let default = self.default.as_integer().ok_or_else(|| {
                    bad("the default of a whole parameter is a whole number".into())
                })?;
                let (min, max) = (
                    self.min.unwrap_or(0),
                    self.max.unwrap_or(i64::from(i32::MAX)),
                );
                if !(min..=max).contains(&default) {
                    return Err(bad(format!(
                        "the default {default} is not in {min} to {max}"
                    )));
                }
                Ok(Param::whole(name, (min, max), default, meaning))
            }
            "text" => {
                let default = self
                    .default
                    .as_str()
                    .ok_or_else(|| bad("the default of a text parameter is text".into()))?;
                Ok(Param::text(
                    name,
                    self.max_chars.unwrap_or(255),
                    leak(default),
                    meaning,
                ))
            }
            "choice" => {
                let options = self
                    .options
                    .as_ref()
                    .filter(|o| !o.is_empty())
                    .ok_or_else(|| bad("a choice needs options = [\"…\", …]".into()))?;
                let default = self
                    .default
                    .as_str()
                    .filter(|d| options.iter().any(|o| o == d))
                    .ok_or_else(|| bad("the default must be one of the options".into()))?;
                Ok(Param::choice(
                    name,
                    leak_options(options),
                    leak(default),
                    meaning,
                ))
            }
            other => Err(bad(format!(
                "unknown type {}; use whole, text or choice",
                params::quote(other)
            ))),
        }
    }
}

/// Interned option lists (see [`leak`]).
fn leak_options(options: &[String]) -> &'static [&'static str] {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static LISTS: RefCell<HashMap<Vec<String>, &'static [&'static str]>> = RefCell::new(HashMap::new());
    }
    LISTS.with(|lists| {
        let mut lists = lists.borrow_mut();
        if let Some(existing) = lists.get(options) {
            return *existing;
        }
        let kept: Vec<&'static str> = options.iter().map(|o| leak(o)).collect();
        let kept: &'static [&'static str] = Box::leak(kept.into_boxed_slice());
        lists.insert(options.to_vec(), kept);
        kept
    })
}

/// A count written as `NAME`, `NAME - N` or `NAME + N` (a whole
/// parameter and an offset): "every other request replays" is `attempts - 1`.
pub(crate) fn count_expression(text: &str) -> Option<(&str, i64)> {
    let text = text.trim();
    let (name, offset) = match text.find(['+', '-']) {
        Some(at) => {
            let n: i64 = text[at + 1..].trim().parse().ok()?;
            let n = if text.as_bytes()[at] == b'-' { -n } else { n };
            (text[..at].trim(), n)
        }
        None => (text, 0),
    };
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some((name, offset))
}

/// Checks what the TOML types cannot: references between parts of the file.
fn validate(file: &File) -> Result<()> {
    let bad = |why: String| Error::invalid("scenario", why);
    let id = file.id();
    if id.is_empty()
        || id.len() > 64
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(bad(format!(
            "the id {} must be 1 to 64 letters, digits, dashes or underscores",
            params::quote(id)
        )));
    }
    if file.databases.is_empty() {
        return Err(bad("declare at least one database: [databases.NAME]".into()));
    }
    for name in file.databases.keys() {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(format!(
                "the database name {} must be letters, digits, dashes or underscores",
                params::quote(name)
            )));
        }
    }
    file.declared_params()?;
    if file.attempts.is_empty() {
        return Err(bad("declare at least one attempt: [[attempts]]".into()));
    }
    let database_of = |given: &Option<String>, what: &str| -> Result<()> {
        match given {
            Some(name) if !file.databases.contains_key(name) => Err(bad(format!(
                "{what} names database {}, which is not declared",
                params::quote(name)
            ))),
            None if file.databases.len() > 1 => Err(bad(format!(
                "{what} must say which database (there are {})",
                file.databases.len()
            ))),
            _ => Ok(()),
        }
    };
    for (i, attempt) in file.attempts.iter().enumerate() {
        let what = format!("attempt {}", i + 1);
        database_of(&attempt.database, &what)?;
        if attempt.steps.is_empty() || attempt.steps.len() > MAX_PROGRAM_STEPS {
            return Err(bad(format!(
                "{what} must have 1 to {MAX_PROGRAM_STEPS} steps"
            )));
        }
        if let Some(replicas) = &attempt.replicas {
            match replicas {
                toml::Value::Integer(n) if (1..=MAX_ATTEMPTS as i64).contains(n) => {}
                toml::Value::String(name)
                    if file.params.get(name).is_some_and(|p| p.kind == "whole") => {}
                _ => {
                    return Err(bad(format!(
                        "{what}: replicas is a number from 1 to {MAX_ATTEMPTS} or the name of a whole parameter"
                    )))
                }
            }
        }
        if let Some(role) = &attempt.after {
            let earlier = file.attempts[..i]
                .iter()
                .filter(|a| a.role.as_ref() == Some(role));
            let single = |a: &&AttemptSpec| {
                a.replicas.is_none()
                    || a.replicas.as_ref().and_then(toml::Value::as_integer) == Some(1)
            };
            let found: Vec<&AttemptSpec> = earlier.collect();
            if found.len() != 1 || !found.iter().all(single) {
                return Err(bad(format!(
                    "{what}: after = {} must name the role of exactly one earlier attempt that is not replicated",
                    params::quote(role)
                )));
            }
        }
        let names: Vec<&str> = attempt.steps.iter().map(|s| s.name.as_str()).collect();
        for step in &attempt.steps {
            let what = format!("{what}, step {}", params::quote(&step.name));
            match (&step.sql, step.action.as_deref()) {
                (Some(_), None) | (None, Some("crash" | "lose-reply")) => {}
                (None, Some(other)) => {
                    return Err(bad(format!(
                        "{what}: unknown action {}; use crash or lose-reply",
                        params::quote(other)
                    )))
                }
                _ => return Err(bad(format!("{what}: give either sql or action"))),
            }
            let on = &step.on;
            for (kind, action) in [
                ("ok", &on.ok),
                ("rows", &on.rows),
                ("none", &on.none),
                ("busy", &on.busy),
                ("constraint", &on.constraint),
                ("error", &on.error),
            ] {
                let Some(action) = action else { continue };
                match action {
                    ActionSpec::Word(w) if w == "next" || w == "retry" => {}
                    ActionSpec::Word(w) if w == "wait" && kind == "busy" => {}
                    ActionSpec::Word(w) => {
                        return Err(bad(format!(
                            "{what}: on.{kind} = {} is not an action; use \"next\", \"retry\"{}, {{ goto = … }}, {{ finish = … }} or {{ fail = … }}",
                            params::quote(w),
                            if kind == "busy" { ", \"wait\"" } else { "" }
                        )))
                    }
                    ActionSpec::Table(t) => {
                        let given = [t.goto.is_some(), t.finish.is_some(), t.fail.is_some()]
                            .iter()
                            .filter(|g| **g)
                            .count();
                        if given != 1 || (t.result.is_some() && t.finish.is_none()) {
                            return Err(bad(format!(
                                "{what}: on.{kind} takes exactly one of goto, finish (with an optional result) or fail"
                            )));
                        }
                        if let Some(target) = &t.goto {
                            if !names.contains(&target.as_str()) {
                                return Err(bad(format!(
                                    "{what}: on.{kind} goes to {}, which is not a step of this attempt",
                                    params::quote(target)
                                )));
                            }
                        }
                    }
                }
            }
        }
    }
    let total: usize = file
        .attempts
        .iter()
        .map(|a| match &a.replicas {
            Some(toml::Value::Integer(n)) => *n as usize,
            Some(toml::Value::String(name)) => file
                .params
                .get(name)
                .and_then(|p| p.max)
                .map_or(MAX_ATTEMPTS, |m| m.max(1) as usize),
            _ => 1,
        })
        .sum();
    if total > MAX_ATTEMPTS {
        return Err(bad(format!(
            "the attempts may number up to {total}; at most {MAX_ATTEMPTS} can race (bound the replicas parameter's max)"
        )));
    }
    for invariant in &file.invariants {
        let what = format!("invariant {}", params::quote(&invariant.name));
        if invariant.sql.is_none()
            || invariant.expect.is_none()
            || invariant.outcome.is_some()
            || invariant.same_result.is_some()
        {
            return Err(bad(format!(
                "{what}: an invariant is sql with expect (it is checked after every step)"
            )));
        }
        database_of(&invariant.database, &what)?;
    }
    for check in &file.checks {
        let what = format!("check {}", params::quote(&check.name));
        match (&check.sql, &check.outcome, &check.same_result) {
            (Some(_), None, None) => {
                database_of(&check.database, &what)?;
                if check.expect.is_none() {
                    return Err(bad(format!("{what}: an sql check needs expect = …")));
                }
            }
            (None, Some(_), None) => {
                let counts = match &check.count {
                    Some(toml::Value::Integer(_)) => true,
                    Some(toml::Value::String(text)) => count_expression(text)
                        .is_some_and(|(name, _)| file.params.get(name).is_some_and(|p| p.kind == "whole")),
                    _ => false,
                };
                if !counts {
                    return Err(bad(format!(
                        "{what}: an outcome check needs count = a number, or a whole parameter's name with an optional offset (\"attempts - 1\")"
                    )));
                }
            }
            (None, None, Some(list)) if !list.is_empty() => {}
            _ => {
                return Err(bad(format!(
                    "{what}: give exactly one of sql (with expect), outcome (with count) or same-result"
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
title = "Two writers"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
replicas = 2
steps = [ { name = "write", sql = "INSERT INTO t VALUES (:attempt)" } ]
[[checks]]
name = "two rows"
sql = "SELECT count(*) FROM t"
expect = 2
"#;

    #[test]
    fn a_minimal_file_parses() {
        let file = parse(MINIMAL, "two-writers").unwrap();
        assert_eq!(file.id(), "two-writers");
        assert_eq!(file.attempts[0].steps[0].name, "write");
    }

    #[test]
    fn mistakes_are_reported_at_their_line_and_column() {
        let source = "title = \"x\"\n[databases.app]\nschema = 5\n";
        let error = parse(source, "x").unwrap_err().to_string();
        assert!(
            error.starts_with("invalid scenario: line 3, column 10: "),
            "{error}"
        );
        let error = parse("title = \"x\"\n[databases.app]\nnope = 1\n", "x")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("line 3, column 1: unknown field `nope`"),
            "{error}"
        );
        let unknown_goto = MINIMAL.replace(
            "sql = \"INSERT INTO t VALUES (:attempt)\"",
            "sql = \"SELECT 1\", on.none = { goto = \"nowhere\" }",
        );
        let error = parse(&unknown_goto, "x").unwrap_err().to_string();
        assert!(
            error.contains("goes to \"nowhere\", which is not a step"),
            "{error}"
        );
    }

    #[test]
    fn counts_name_a_parameter_with_an_offset() {
        assert_eq!(count_expression("attempts - 1"), Some(("attempts", -1)));
        assert_eq!(count_expression("attempts+2"), Some(("attempts", 2)));
        assert_eq!(count_expression("attempts"), Some(("attempts", 0)));
        assert_eq!(count_expression("attempts - x"), None);
        assert_eq!(count_expression("- 1"), None);
    }

    #[test]
    fn parsing_the_same_file_again_keeps_no_new_text() {
        let a = leak("a parameter's meaning");
        let b = leak(&String::from("a parameter's meaning"));
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn huge_sources_and_too_many_attempts_are_refused() {
        let huge = format!("title = \"{}\"", "x".repeat(MAX_SOURCE_BYTES));
        assert!(parse(&huge, "x")
            .unwrap_err()
            .to_string()
            .contains("at most"));
        let many = MINIMAL.replace("replicas = 2", "replicas = 27");
        assert!(parse(&many, "x")
            .unwrap_err()
            .to_string()
            .contains("replicas"));
    }
}
