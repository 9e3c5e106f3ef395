//! The engine of scenario files: each attempt runs its program of steps on
//! its own connection; the checks read the committed state and the
//! attempts' outcomes.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{
    ActionSpec, AttemptSpec, File, StepSpec, MAX_ATTEMPT_STEPS, MAX_STATEMENT_INSTRUCTIONS,
    MAX_VALUE_BYTES,
};
use crate::scenarios::params::Params;
use crate::sim::{
    Attempt, Check, Ended, Outcome, Progress, Scenario, SqlResult, StepCtx, StepReport,
};
use crate::storage::{is_interrupt, with_budget};
use crate::storage::{Conn, SqlValue, Store};
use crate::{Error, Result};

/// How many times `retry` may start a program again.
pub const MAX_RETRIES: u32 = 3;

/// A scenario file with its parameters resolved, ready to run.
pub struct FileScenario {
    file: Rc<File>,
    params: Params,
    /// Each database's file name ("app.db"), by database name.
    files: BTreeMap<String, &'static str>,
}

fn leak(text: String) -> &'static str {
    super::leak(&text)
}

impl FileScenario {
    /// The scenario of `file` with `params` (already checked).
    pub fn new(file: File, params: Params) -> Result<Self> {
        let files = file
            .databases
            .keys()
            .map(|name| (name.clone(), leak(format!("{name}.db"))))
            .collect();
        Ok(FileScenario {
            file: Rc::new(file),
            params,
            files,
        })
    }

    fn file_of(&self, database: &Option<String>) -> &'static str {
        match database {
            Some(name) => self.files[name],
            None => self.files.values().next().copied().unwrap_or("main.db"),
        }
    }

    fn replicas(&self, spec: &AttemptSpec) -> Result<usize> {
        Ok(match &spec.replicas {
            None => 1,
            Some(toml::Value::Integer(n)) => *n as usize,
            Some(toml::Value::String(name)) => self.whole_param(name)? as usize,
            Some(_) => 1,
        })
    }

    fn whole_param(&self, name: &str) -> Result<i64> {
        self.params
            .values()
            .get(name)
            .and_then(Value::as_i64)
            .ok_or_else(|| Error::invalid("scenario", format!("{name} is not a whole parameter")))
    }
}

impl Scenario for FileScenario {
    fn id(&self) -> &str {
        self.file.id()
    }

    fn params(&self) -> Map<String, Value> {
        self.params.values().clone()
    }

    fn setup(&self, store: &Store) -> Result<()> {
        for (name, database) in &self.file.databases {
            let conn = store.connect(self.files[name], "setup")?;
            conn.execute_batch(&database.schema).map_err(|e| {
                Error::invalid(
                    "scenario",
                    format!("the schema of database {name} failed: {e}"),
                )
            })?;
            conn.execute_batch(&database.seed).map_err(|e| {
                Error::invalid(
                    "scenario",
                    format!("the seed of database {name} failed: {e}"),
                )
            })?;
        }
        Ok(())
    }

    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>> {
        let mut attempts: Vec<Box<dyn Attempt>> = Vec::new();
        // Where each (unreplicated) role's attempt stands, for `after`.
        let mut position_of_role: BTreeMap<&str, usize> = BTreeMap::new();
        for (spec_index, spec) in self.file.attempts.iter().enumerate() {
            let after = match &spec.after {
                Some(role) => Some(*position_of_role.get(role.as_str()).ok_or_else(|| {
                    Error::invalid("scenario", format!("no earlier attempt has role {role}"))
                })?),
                None => None,
            };
            if let Some(role) = &spec.role {
                position_of_role.insert(role.as_str(), attempts.len());
            }
            let replicas = self.replicas(spec)?;
            let steps: Rc<[StepSpec]> = spec.steps.clone().into();
            let personal = steps.iter().any(|s| {
                s.sql
                    .as_deref()
                    .is_some_and(|sql| sql.contains(":attempt") || sql.contains(":label"))
            });
            for _ in 0..replicas {
                let index = attempts.len();
                let label = crate::sim::Schedule::letter(index).to_string();
                let mut class = std::hash::DefaultHasher::new();
                spec_index.hash(&mut class);
                if personal {
                    index.hash(&mut class);
                }
                attempts.push(Box::new(ProgramAttempt {
                    label,
                    index,
                    role: spec.role.clone(),
                    db: self.file_of(&spec.database),
                    steps: steps.clone(),
                    params: self.params.values().clone(),
                    class: class.finish(),
                    conn: None,
                    pc: 0,
                    captures: BTreeMap::new(),
                    retries: 0,
                    taken: 0,
                    over: false,
                    after,
                }));
            }
        }
        Ok(attempts)
    }

    fn databases(&self) -> Vec<&'static str> {
        self.files.values().copied().collect()
    }

    fn has_invariants(&self) -> bool {
        !self.file.invariants.is_empty()
    }

    fn invariants(&self, committed: &Store) -> Result<Vec<Check>> {
        self.file
            .invariants
            .iter()
            .map(|spec| self.sql_check(spec, committed))
            .collect()
    }

    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>> {
        let mut checks = Vec::new();
        for spec in &self.file.checks {
            if spec.sql.is_some() {
                checks.push(self.sql_check(spec, ended.committed)?);
            } else if let Some(outcome) = &spec.outcome {
                let expected = match &spec.count {
                    Some(toml::Value::Integer(n)) => *n,
                    Some(toml::Value::String(text)) => {
                        let (name, offset) = super::count_expression(text).unwrap_or((text, 0));
                        self.whole_param(name)? + offset
                    }
                    _ => 0,
                };
                let actual = (0..ended.statuses.len())
                    .filter(|&i| ended.outcome(i).is_some_and(|o| &o.kind == outcome))
                    .count();
                checks.push(Check::equal(&spec.name, expected, actual));
            } else if let Some(kinds) = &spec.same_result {
                let results: Vec<Option<&str>> = (0..ended.statuses.len())
                    .filter_map(|i| ended.outcome(i))
                    .filter(|o| kinds.contains(&o.kind))
                    .map(|o| o.result.as_deref())
                    .collect();
                let same = !results.is_empty() && results.iter().all(|r| *r == results[0]);
                checks.push(Check::equal(&spec.name, true, same));
            }
        }
        Ok(checks)
    }
}

impl FileScenario {
    /// An SQL check: its query on `committed` against its `expect`.
    fn sql_check(&self, spec: &super::CheckSpec, committed: &Store) -> Result<Check> {
        let sql = spec.sql.as_deref().unwrap_or_default();
        let conn = committed.connect(self.file_of(&spec.database), "check")?;
        conn.bound(MAX_VALUE_BYTES)?;
        let bind = |name: &str| param_value(self.params.values(), name);
        let actual = match with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
            conn.execute_named(sql, &bind)
        }) {
            Ok((rows, _)) => Value::from(
                rows.rows
                    .iter()
                    .map(|r| Value::from(r.iter().map(sql_json).collect::<Vec<_>>()))
                    .collect::<Vec<_>>(),
            ),
            Err(e) => Value::from(format!("error: {}", explain(&e))),
        };
        let expected = expected_rows(spec.expect.as_ref().unwrap_or(&toml::Value::Integer(0)));
        Ok(Check::equal(&spec.name, show(&expected), show(&actual)))
    }
}

/// Parameter `name`'s value as SQL binds it (`:name`).
fn param_value(params: &Map<String, Value>, name: &str) -> Option<SqlValue> {
    match params.get(name)? {
        Value::Number(n) => n.as_i64().map(SqlValue::Integer),
        Value::String(s) => Some(SqlValue::Text(s.clone())),
        _ => None,
    }
}

/// A TOML `expect` as rows: a value is one row of one column, an array of
/// arrays is rows, an array of values is one row.
fn expected_rows(expect: &toml::Value) -> Value {
    let scalar = |v: &toml::Value| match v {
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::from(i64::from(*b)),
        toml::Value::String(s) if s == "NULL" => Value::Null,
        toml::Value::String(s) => Value::from(s.as_str()),
        other => Value::from(format!("{other:?}")),
    };
    match expect {
        toml::Value::Array(items) if items.iter().all(|i| i.is_array()) => Value::from(
            items
                .iter()
                .map(|row| {
                    Value::from(
                        row.as_array()
                            .map(|r| r.iter().map(scalar).collect::<Vec<_>>())
                            .unwrap_or_default(),
                    )
                })
                .collect::<Vec<_>>(),
        ),
        toml::Value::Array(items) => Value::from(vec![Value::from(
            items.iter().map(scalar).collect::<Vec<_>>(),
        )]),
        value => Value::from(vec![Value::from(vec![scalar(value)])]),
    }
}

fn sql_json(value: &SqlValue) -> Value {
    match value {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => Value::from(*i),
        SqlValue::Real(f) => Value::from(*f),
        SqlValue::Text(t) => Value::from(t.as_str()),
        SqlValue::Blob(b) => Value::from(format!(
            "x'{}'",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        )),
    }
}

/// Rows for people: `2` for one value, JSON otherwise.
fn show(rows: &Value) -> String {
    match rows.as_array().map(Vec::as_slice) {
        Some([row]) => match row.as_array().map(Vec::as_slice) {
            Some([one]) => one.to_string(),
            _ => row.to_string(),
        },
        _ => rows.to_string(),
    }
}

/// One attempt of a file: a program counter over its steps, its captures,
/// and its connection.
struct ProgramAttempt {
    label: String,
    index: usize,
    role: Option<String>,
    db: &'static str,
    steps: Rc<[StepSpec]>,
    params: Map<String, Value>,
    class: u64,
    conn: Option<Conn>,
    pc: usize,
    captures: BTreeMap<String, SqlValue>,
    retries: u32,
    taken: usize,
    over: bool,
    /// The attempt that must be over before this one starts.
    after: Option<usize>,
}

/// Which result a statement gave, for `on`.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    Ok,
    Rows,
    None,
    Busy,
    Constraint,
    Error,
}

impl ProgramAttempt {
    fn bind(&self, name: &str, now: i64) -> Option<SqlValue> {
        if let Some(value) = self.captures.get(name) {
            return Some(value.clone());
        }
        match name {
            "attempt" => return Some(SqlValue::Integer(self.index as i64)),
            "label" => return Some(SqlValue::Text(self.label.clone())),
            "now" => return Some(SqlValue::Integer(now)),
            _ => {}
        }
        param_value(&self.params, name)
    }

    /// `{name}` in a note: a capture, a parameter, `{label}`, `{role}`, `{rows}`.
    fn words(&self, template: &str, rows: usize) -> String {
        let mut out = String::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                out.push_str(&rest[open..]);
                return out;
            };
            let name = &after[..close];
            let value = match name {
                "label" => self.label.clone(),
                "role" => self.role.clone().unwrap_or_else(|| "attempt".into()),
                "rows" => rows.to_string(),
                _ => match self.bind(name, 0) {
                    Some(SqlValue::Text(t)) => t,
                    Some(SqlValue::Integer(i)) => i.to_string(),
                    Some(SqlValue::Real(f)) => f.to_string(),
                    Some(SqlValue::Null) => "NULL".into(),
                    Some(SqlValue::Blob(_)) => "a blob".into(),
                    None => format!("{{{name}}}"),
                },
            };
            out.push_str(&value);
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// The outcome's result: `:capture` reads a capture, anything else is text.
    fn result_of(&self, result: &Option<String>) -> Option<String> {
        let result = result.as_ref()?;
        match result.strip_prefix(':') {
            Some(name) => self.bind(name, 0).map(|v| match v {
                SqlValue::Text(t) => t,
                other => sql_json(&other).to_string(),
            }),
            None => Some(result.clone()),
        }
    }

    /// Applies `action` after a step; returns the progress and a sentence
    /// added to the note when the action is not plain "next".
    fn apply(&mut self, action: &ActionSpec) -> (Progress, Option<String>) {
        match action {
            ActionSpec::Word(w) if w == "wait" => (Progress::Blocked, None),
            ActionSpec::Word(w) if w == "retry" => {
                if let Some(conn) = &self.conn {
                    let _ = conn.execute("ROLLBACK", &[]);
                }
                self.retries += 1;
                if self.retries > MAX_RETRIES {
                    return self.finish_failed(format!("gave up after {MAX_RETRIES} retries"));
                }
                self.pc = 0;
                (
                    Progress::Progressed,
                    Some(format!(
                        "rolls back and starts again (retry {})",
                        self.retries
                    )),
                )
            }
            ActionSpec::Word(_) => self.next(),
            ActionSpec::Table(t) => {
                if let Some(target) = &t.goto {
                    self.pc = self
                        .steps
                        .iter()
                        .position(|s| &s.name == target)
                        .unwrap_or(self.steps.len());
                    (Progress::Progressed, Some(format!("goes to \"{target}\"")))
                } else if let Some(kind) = &t.finish {
                    let result = self.result_of(&t.result);
                    self.end();
                    let outcome = Outcome {
                        kind: kind.clone(),
                        result,
                    };
                    (Progress::Finished { outcome }, None)
                } else {
                    let why = t.fail.clone().unwrap_or_default();
                    self.finish_failed(why)
                }
            }
        }
    }

    fn next(&mut self) -> (Progress, Option<String>) {
        self.pc += 1;
        if self.pc >= self.steps.len() {
            self.end();
            return (
                Progress::Finished {
                    outcome: Outcome::new("done"),
                },
                None,
            );
        }
        (Progress::Progressed, None)
    }

    fn finish_failed(&mut self, why: String) -> (Progress, Option<String>) {
        self.end();
        (
            Progress::Failed { error: why.clone() },
            Some(format!("fails: {why}")),
        )
    }

    /// The attempt is over: its connection closes (an open transaction
    /// rolls back, as when a client returns its connection).
    fn end(&mut self) {
        self.over = true;
        self.conn = None;
    }
}

impl Attempt for ProgramAttempt {
    fn label(&self) -> &str {
        &self.label
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        // The program is shared (`Rc`): holding it apart from `self` lets
        // the step be read while the attempt changes.
        let steps = Rc::clone(&self.steps);
        let step = &steps[self.pc.min(steps.len() - 1)];
        let report = |sql: Option<String>, params, result, progress, note| StepReport {
            name: step.name.clone(),
            sql,
            params,
            result,
            progress,
            note,
        };
        self.taken += 1;
        if self.taken > MAX_ATTEMPT_STEPS {
            let (progress, _) = self.finish_failed(format!(
                "took more than {MAX_ATTEMPT_STEPS} steps: its program may loop for ever"
            ));
            let note = format!("{} stops: more than {MAX_ATTEMPT_STEPS} steps", self.label);
            return report(None, vec![], SqlResult::None, progress, note);
        }
        if step.action.as_deref() == Some("lose-reply") {
            self.end();
            let note = format!(
                "{}'s reply is lost: whatever it committed stays, but its client never hears the answer",
                self.label
            );
            return report(
                None,
                vec![],
                SqlResult::None,
                Progress::Finished {
                    outcome: Outcome::new("reply-lost"),
                },
                note,
            );
        }
        if step.action.as_deref() == Some("crash") {
            self.crash();
            let note = format!("{}'s process dies here: its locks vanish, its open transaction is left for recovery", self.label);
            return report(
                None,
                vec![],
                SqlResult::None,
                Progress::Finished {
                    outcome: Outcome::new("crashed"),
                },
                note,
            );
        }
        let sql = step.sql.as_deref().unwrap_or_default();
        if self.conn.is_none() {
            match ctx
                .store
                .connect(self.db, &self.label)
                .and_then(|conn| conn.bound(MAX_VALUE_BYTES).map(|()| conn))
            {
                Ok(conn) => self.conn = Some(conn),
                Err(e) => {
                    let (progress, _) = self.finish_failed(format!("cannot open {}: {e}", self.db));
                    return report(
                        Some(sql.to_string()),
                        vec![],
                        SqlResult::None,
                        progress,
                        format!("{} cannot connect", self.label),
                    );
                }
            }
        }
        let now = ctx.now();
        let outcome = {
            let conn = self.conn.as_ref().expect("opened above");
            with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                conn.execute_named(sql, &|name| self.bind(name, now))
            })
        };
        // The result for the trace, and the rows kept for captures and notes.
        let (answer, result, rows, bound, error) = match outcome {
            Ok((rows, bound)) => {
                let answer = if !rows.rows.is_empty() {
                    Answer::Rows
                } else if !rows.columns.is_empty() {
                    Answer::None
                } else {
                    Answer::Ok
                };
                let result = SqlResult::Rows {
                    columns: rows.columns.clone(),
                    rows: rows.rows.clone(),
                    changes: rows.changes,
                };
                (answer, result, Some(rows), bound, None)
            }
            Err(e) => {
                let answer = if e.is_busy() {
                    Answer::Busy
                } else if e
                    .sqlite_code()
                    .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_CONSTRAINT)
                {
                    Answer::Constraint
                } else {
                    Answer::Error
                };
                let result = SqlResult::from_result(&Err(clone_error(&e)));
                (answer, result, None, vec![], Some(e))
            }
        };
        if let (Some(name), Some(rows)) = (&step.capture, &rows) {
            let value = rows
                .rows
                .first()
                .and_then(|r| r.first())
                .cloned()
                .unwrap_or(SqlValue::Null);
            match self.captures.get_mut(name) {
                Some(slot) => *slot = value,
                None => {
                    self.captures.insert(name.clone(), value);
                }
            }
        }
        let on = &step.on;
        let chosen = match answer {
            Answer::Rows => on.rows.as_ref().or(on.ok.as_ref()),
            Answer::None => on.none.as_ref().or(on.ok.as_ref()),
            Answer::Ok => on.ok.as_ref(),
            Answer::Busy => on.busy.as_ref(),
            Answer::Constraint => on.constraint.as_ref().or(on.error.as_ref()),
            Answer::Error => on.error.as_ref(),
        };
        let row_count = rows.as_ref().map_or(0, |r| r.rows.len());
        let (progress, extra) = match (chosen, answer) {
            (Some(action), _) => self.apply(action),
            // BUSY waits by default: the attempt stays at this step.
            (None, Answer::Busy) => (Progress::Blocked, None),
            (None, Answer::Constraint | Answer::Error) => {
                let why = error.as_ref().map(explain).unwrap_or_default();
                self.finish_failed(why)
            }
            (None, _) => self.next(),
        };
        let mut note = match (&step.note, &progress) {
            (_, Progress::Blocked) => format!(
                "{} got SQLITE_BUSY at \"{}\" ({}) and waits for a lock to be released",
                self.label,
                step.name,
                crate::sim::locks_held(ctx.peers)
            ),
            (Some(template), _) => self.words(template, row_count),
            (None, _) => {
                let what = match &result {
                    SqlResult::Rows { rows, .. } if rows.len() == 1 => "1 row".to_string(),
                    SqlResult::Rows { rows, .. } if !rows.is_empty() => {
                        format!("{} rows", rows.len())
                    }
                    SqlResult::Rows { changes, .. } if *changes > 0 => format!("{changes} changed"),
                    SqlResult::Error { message, .. } => message.clone(),
                    _ => "ok".into(),
                };
                format!("{} ran \"{}\": {what}", self.label, step.name)
            }
        };
        if let Some(extra) = extra {
            note = format!("{note}; {} {extra}", self.label);
        }
        report(Some(sql.to_string()), bound, result, progress, note)
    }

    fn phase(&self) -> &'static str {
        if self.over {
            "over"
        } else {
            "running"
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        let mut h = std::hash::DefaultHasher::new();
        self.pc.hash(&mut h);
        self.over.hash(&mut h);
        self.retries.hash(&mut h);
        for (name, value) in &self.captures {
            name.hash(&mut h);
            match value {
                SqlValue::Null => 0u8.hash(&mut h),
                SqlValue::Integer(i) => (1u8, i).hash(&mut h),
                SqlValue::Real(f) => (2u8, f.to_bits()).hash(&mut h),
                SqlValue::Text(t) => (3u8, t).hash(&mut h),
                SqlValue::Blob(b) => (4u8, b).hash(&mut h),
            }
        }
        state.write_u64(h.finish());
    }

    fn class(&self) -> u64 {
        self.class
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conn.iter().collect()
    }

    fn crash(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            let _ = conn.kill();
        }
        self.conn = None;
        self.over = true;
    }

    fn waits_for(&self) -> Option<usize> {
        self.after
    }
}

/// An error in words; an interrupted statement says why it was stopped.
fn explain(error: &Error) -> String {
    if is_interrupt(error) {
        format!(
            "the statement ran more than {MAX_STATEMENT_INSTRUCTIONS} SQLite instructions and was stopped; it may loop for ever"
        )
    } else {
        error.to_string()
    }
}

/// A copy of an error for the trace (errors are not `Clone`).
fn clone_error(e: &Error) -> Error {
    match e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(code, message)) => {
            Error::Sqlite(rusqlite::Error::SqliteFailure(*code, message.clone()))
        }
        other => Error::Store(other.to_string()),
    }
}
