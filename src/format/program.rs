//! The engine of scenario files.
//!
//! Building a scenario compiles its file once: each attempt becomes an
//! [`Instance`] whose program is fully expanded (`use` inlined, names
//! filled in, `when` decided, every `goto` resolved to a step index), so a
//! run only moves a program counter. Each attempt runs its program on its
//! own connection per database; the checks read the committed state and
//! the attempts' outcomes.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::sql::Statement;
use super::{
    ActionSpec, AttemptSpec, CheckSpec, File, NoteSpec, StepSpec, MAX_ATTEMPT_STEPS,
    MAX_STATEMENT_INSTRUCTIONS, MAX_USE_DEPTH, MAX_VALUE_BYTES,
};
use crate::params::{quote, Params};
use crate::sim::{
    Attempt, Bound, Check, Declared, Ended, Outcome, Peer, Progress, Scenario, Schedule, SqlResult,
    Status, StepCtx, StepReport,
};
use crate::storage::{is_busy_snapshot, is_interrupt, with_budget};
use crate::storage::{Conn, Journal, LockLevel, SqlValue, Store};
use crate::{Error, Result};

/// How many times `retry` may start a program again.
pub const MAX_RETRIES: u32 = 3;

/// A scenario file with its parameters resolved, compiled, ready to run.
pub struct FileScenario {
    file: Rc<File>,
    params: Params,
    /// Each database's file name ("app.db"), in the file's database order.
    files: Rc<[&'static str]>,
    /// Each database's PRAGMAs, run when a connection opens.
    pragmas: Rc<[String]>,
    /// The attempts, compiled.
    instances: Vec<Rc<Instance>>,
    /// Which checks apply to these parameters (their `when`, decided once).
    checks_on: Vec<bool>,
    /// The label of a file's only attempt, given by the engine (a session's
    /// "request 3"), instead of the file's.
    label: Option<String>,
    /// How many steps an attempt may take ([`MAX_ATTEMPT_STEPS`] unless the
    /// engine runs it alone with another bound).
    max_steps: usize,
}

fn bad(why: String) -> Error {
    Error::invalid("scenario", why)
}

/// An expansion of a one-attempt file, kept with everything it read besides
/// the file: see [`FileScenario::expand`].
struct Kept {
    /// The file (kept alive here, so that its address is not reused).
    file: Rc<File>,
    /// The attempt's declaration within it, and the attempt's index.
    spec: usize,
    index: usize,
    /// Each value the expansion looked up (an attempt's value, a
    /// parameter, `attempt`, `label`), with what it found.
    read: Vec<(String, Option<SqlValue>)>,
    /// Each attempt name it asked for (`wait-while`), with the answer.
    asked: Vec<(String, Vec<usize>)>,
    steps: Rc<[Step]>,
}

/// How many expansions a thread keeps (the oldest goes first).
const MAX_EXPANSIONS: usize = 64;

thread_local! {
    /// Expansions of one-attempt files (see [`FileScenario::expand`]).
    static EXPANSIONS: std::cell::RefCell<Vec<Kept>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One attempt, compiled.
struct Instance {
    index: usize,
    label: String,
    role: Option<String>,
    kind: InstanceKind,
    /// The attempt's values (`with`), resolved.
    values: Vec<(String, SqlValue)>,
    class: u64,
    after: Option<usize>,
    crash: Option<Crash>,
    not_before: i64,
    /// The first step that is there (`when`), where the program starts.
    start: usize,
    /// How many steps it may take.
    max_steps: usize,
    params: Rc<Map<String, Value>>,
    files: Rc<[&'static str]>,
    pragmas: Rc<[String]>,
}

enum InstanceKind {
    Program(Rc<[Step]>),
    Clock {
        tick: i64,
        until: i64,
        hold: Option<(i64, usize)>,
    },
}

struct Crash {
    after: usize,
    name: String,
    result: Option<String>,
    note: String,
}

/// One step of an expanded program.
struct Step {
    name: String,
    kind: StepKind,
    db: usize,
    capture: Vec<String>,
    set: Vec<(String, SetValue)>,
    note: Option<NoteSpec>,
    phase: &'static str,
    because: Vec<(Vec<String>, String)>,
    on: Handlers,
    with: Vec<(String, SqlValue)>,
    /// The next step that is there.
    next: usize,
    /// Whether the step is there for this attempt (its `when`); a step
    /// that is not keeps its slot, and `next` and `goto` pass over it.
    present: bool,
    /// Whether the step handles its own errors (else the file's `on` does).
    own_errors: bool,
    /// The captures the program may still read from here on, before
    /// capturing them again (sorted): only these make two states differ.
    live: Vec<String>,
}

enum StepKind {
    Sql(String),
    Crash,
    LoseReply,
    Work,
    Fail,
}

enum SetValue {
    Template(String),
    Value(SqlValue),
}

#[derive(Default)]
struct Handlers {
    ok: Option<Act>,
    rows: Option<Act>,
    none: Option<Act>,
    cases: Vec<(String, Act)>,
    busy: Option<Act>,
    constraint: Option<Act>,
    error: Option<Act>,
}

impl Handlers {
    /// Every action, whatever it answers.
    fn acts(&self) -> impl Iterator<Item = &Act> {
        [
            &self.ok,
            &self.rows,
            &self.none,
            &self.busy,
            &self.constraint,
            &self.error,
        ]
        .into_iter()
        .flatten()
        .chain(self.cases.iter().map(|(_, a)| a))
    }
}

#[derive(Clone)]
enum Act {
    Next,
    Wait,
    Retry,
    Goto {
        target: usize,
        back_off: bool,
        log: Option<String>,
        wait_while: Vec<usize>,
    },
    Finish {
        kind: String,
        result: Option<String>,
        log: Option<String>,
        wait_while: Vec<usize>,
    },
    Fail(String),
    /// Only `wait-while`: stay while they run, else go on.
    WaitWhile(Vec<usize>),
}

/// A step before expansion: the spec, with the values of the `use` that
/// brought it in and the log that replaces its finishes.
struct RawStep<'a> {
    spec: &'a StepSpec,
    name: String,
    /// Its `id` for `goto`, filled in.
    id: Option<String>,
    /// The `when`s of the `use` steps that brought it in.
    conditions: Vec<String>,
    /// The `phase` of the `use` step that brought it in, which it takes.
    phase: Option<String>,
    with: Vec<(String, SqlValue)>,
    /// Inside a `use`: where its finishes go instead, and what they log.
    ret: Option<(usize, Option<String>)>,
}

/// `{name}` in `text` filled from `lookup` (unknown names stay as written).
/// Within a run, each value is charged to the run's budget of bytes before
/// it is copied in: past it the text is left unfinished (and the step that
/// wanted it is stopped: [`crate::storage::charge_bytes`]).
fn fill(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    fill_with(text, lookup, false)
}

/// The most characters of one value a note shows ([`fill_note`]).
const NOTE_VALUE_CHARS: usize = 200;
/// The most bytes of one note ([`fill_note`]).
const NOTE_BYTES: usize = 4096;

/// `{name}` in a note filled from `lookup`: a note is for a person and is
/// written only when a run is recorded, so it is not charged to the run
/// (a recorded run and the same run unrecorded spend the same); instead a
/// value longer than [`NOTE_VALUE_CHARS`] is cut (its length said, as the
/// page's table cells say it), and the note at [`NOTE_BYTES`].
fn fill_note(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    fill_with(text, lookup, true)
}

fn fill_with(text: &str, lookup: &dyn Fn(&str) -> Option<String>, note: bool) -> String {
    if !text.contains(['{', '}']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let brace = &rest[at..at + 1];
        let after = &rest[at + 1..];
        // `{{` and `}}` are a brace itself.
        if after.starts_with(brace) {
            out.push_str(brace);
            rest = &after[1..];
            continue;
        }
        if brace == "}" {
            out.push('}');
            rest = after;
            continue;
        }
        let Some(close) = after.find('}') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let name = &after[..close];
        match lookup(name) {
            Some(value) if note && value.chars().nth(NOTE_VALUE_CHARS).is_some() => {
                let cut: String = value.chars().take(NOTE_VALUE_CHARS).collect();
                let chars = value.chars().count();
                out.push_str(&format!(
                    "{cut}… ({} characters)",
                    crate::grouped(&chars.to_string())
                ));
            }
            Some(value) if note => out.push_str(&value),
            Some(value) if !crate::storage::charge_bytes(value.len()) => return out,
            Some(value) => out.push_str(&value),
            None => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
        }
        rest = &after[close + 1..];
        if note && out.len() > NOTE_BYTES {
            let mut end = NOTE_BYTES;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            out.push('…');
            return out;
        }
    }
    out.push_str(rest);
    out
}

/// A value as words.
fn words_of(value: &SqlValue) -> String {
    match value {
        SqlValue::Text(t) => t.clone(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(f) => f.to_string(),
        SqlValue::Null => "NULL".into(),
        SqlValue::Blob(_) => "a blob".into(),
    }
}

/// A TOML value as SQL binds it.
fn toml_sql(value: &toml::Value) -> Option<SqlValue> {
    match value {
        toml::Value::Integer(i) => Some(SqlValue::Integer(*i)),
        toml::Value::Float(f) => Some(SqlValue::Real(*f)),
        toml::Value::Boolean(b) => Some(SqlValue::Integer(i64::from(*b))),
        toml::Value::String(s) => Some(SqlValue::Text(s.clone())),
        _ => None,
    }
}

/// Parameter `name`'s value as SQL binds it (`:name`); the scenario's
/// parameters carry the file's `defaults` too, after the parameters.
fn param_value(params: &Map<String, Value>, name: &str) -> Option<SqlValue> {
    match params.get(name)? {
        Value::Number(n) => n.as_i64().map(SqlValue::Integer),
        Value::String(s) => Some(SqlValue::Text(s.clone())),
        _ => None,
    }
}

/// What `:name` is to attempt `index` labelled `label`: one of its values
/// (`with`, then `let`), `attempt`, `label`, or a parameter.
fn attempt_value(
    values: &[(String, SqlValue)],
    index: usize,
    label: &str,
    params: &Map<String, Value>,
    name: &str,
) -> Option<SqlValue> {
    values
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .or_else(|| match name {
            "attempt" => Some(SqlValue::Integer(index as i64)),
            "label" => Some(SqlValue::Text(label.to_string())),
            _ => param_value(params, name),
        })
}

/// `answer`, noted in `log` as what `name` gave the first time it is asked.
fn noted<T: Clone>(log: &std::cell::RefCell<Vec<(String, T)>>, name: &str, answer: T) -> T {
    let mut log = log.borrow_mut();
    if !log.iter().any(|(n, _)| n == name) {
        log.push((name.to_string(), answer.clone()));
    }
    answer
}

fn leak(text: String) -> &'static str {
    super::leak(&text)
}

/// Evaluates static SQL expressions (`when`, `until`) on a private store.
struct Evaluator {
    _store: Store,
    conn: Conn,
    /// What is known of each expression evaluated: the names it reads and,
    /// for one that can only depend on them (see [`Evaluator::pure`]), its
    /// latest results by their values.
    known: std::cell::RefCell<std::collections::HashMap<String, Known, foldhash::fast::FixedState>>,
}

/// What the evaluator keeps of one expression.
struct Known {
    /// Whether its value depends only on the values it reads.
    pure: bool,
    /// The names it reads, each once.
    reads: Vec<String>,
    /// Its latest results (oldest first), each with the values it read.
    results: Vec<(Vec<Option<SqlValue>>, SqlValue)>,
}

/// How many expressions an evaluator keeps (all are dropped when it is
/// full), the longest expression it keeps, how many results it keeps of
/// each, and the most bytes of text the values of one result may hold.
const MAX_KNOWN: usize = 4096;
const MAX_KNOWN_EXPRESSION: usize = 1024;
const MAX_RESULTS: usize = 16;
const MAX_RESULT_KEY: usize = 1024;
/// The most expressions [`Evaluator::warm`] computes in one statement.
const MAX_WARM: usize = 64;

/// Whether two values are the same value (a float by its bits: -0.0 is
/// not 0.0 to `printf`).
fn same_value(a: &Option<SqlValue>, b: &Option<SqlValue>) -> bool {
    match (a, b) {
        (Some(SqlValue::Real(x)), Some(SqlValue::Real(y))) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

thread_local! {
    /// One evaluator per thread, kept: static expressions only read (a
    /// `SELECT` of an expression changes nothing a later one could see), and
    /// its cached statements make compiling a scenario again cheap (a
    /// session compiles its attempt for every request).
    static EVALUATOR: std::cell::RefCell<Option<Rc<Evaluator>>> = const { std::cell::RefCell::new(None) };
}

impl Evaluator {
    fn new() -> Result<Rc<Self>> {
        if let Some(kept) = EVALUATOR.with(|e| e.borrow().clone()) {
            return Ok(kept);
        }
        let store = Store::new("expressions")?;
        let conn = store.connect("expressions.db", "expressions")?;
        conn.bound(MAX_VALUE_BYTES)?;
        let evaluator = Rc::new(Evaluator {
            _store: store,
            conn,
            known: Default::default(),
        });
        EVALUATOR.with(|e| *e.borrow_mut() = Some(Rc::clone(&evaluator)));
        Ok(evaluator)
    }

    /// The values pure `expression` reads, to key its result by, and its
    /// kept result for them (`None` for an expression whose result is not
    /// kept: impure, or too long).
    #[allow(clippy::type_complexity)]
    fn lookup(
        &self,
        expression: &str,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Option<(Vec<Option<SqlValue>>, Option<SqlValue>)> {
        if expression.len() > MAX_KNOWN_EXPRESSION {
            return None;
        }
        let mut known = self.known.borrow_mut();
        if !known.contains_key(expression) {
            if known.len() >= MAX_KNOWN {
                known.clear();
            }
            let mut names: Vec<String> = Vec::new();
            reads(expression, |name| {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            });
            known.insert(
                expression.to_string(),
                Known {
                    pure: Self::pure(expression),
                    reads: names,
                    results: Vec::new(),
                },
            );
        }
        let entry = known.get(expression).filter(|k| k.pure)?;
        let key: Vec<Option<SqlValue>> = entry.reads.iter().map(|n| bind(n)).collect();
        let size: usize = key
            .iter()
            .flatten()
            .map(|v| match v {
                SqlValue::Text(t) => t.len(),
                SqlValue::Blob(b) => b.len(),
                _ => 8,
            })
            .sum();
        if size > MAX_RESULT_KEY {
            return None;
        }
        let hit = entry
            .results
            .iter()
            .rev()
            .find(|(values, _)| {
                values.len() == key.len() && values.iter().zip(&key).all(|(a, b)| same_value(a, b))
            })
            .map(|(_, value)| value.clone());
        Some((key, hit))
    }

    /// Keeps `value`, `expression`'s result for the values `key`.
    fn keep(&self, expression: &str, key: Vec<Option<SqlValue>>, value: SqlValue) {
        if let Some(entry) = self.known.borrow_mut().get_mut(expression) {
            if entry.results.len() >= MAX_RESULTS {
                entry.results.remove(0);
            }
            entry.results.push((key, value));
        }
    }

    fn eval(
        &self,
        expression: &str,
        what: &dyn Fn() -> String,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<SqlValue> {
        let key = match self.lookup(expression, bind) {
            Some((_, Some(value))) => return Ok(value),
            Some((key, None)) => Some(key),
            None => None,
        };
        let sql = format!("SELECT ({expression})");
        match with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
            self.conn.execute_named(&sql, bind)
        }) {
            Ok((rows, _)) => {
                let value = rows
                    .rows
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(SqlValue::Null);
                if let Some(key) = key {
                    self.keep(expression, key, value.clone());
                }
                Ok(value)
            }
            Err(e) => Err(bad(format!(
                "{}: the expression {} failed: {}",
                what(),
                quote(expression),
                explain(&e)
            ))),
        }
    }

    /// Computes the pure `expressions` (all read through `bind`) whose
    /// results for their values are not kept yet in one statement, and keeps
    /// them: a session's request compiles a program of many `when`s that
    /// read its new key. Nothing else changes: an expression that fails
    /// here is left to [`Evaluator::eval`], which says why when it is needed.
    fn warm(&self, expressions: &[&str], bind: &dyn Fn(&str) -> Option<SqlValue>) {
        let mut missing: Vec<(&str, Vec<Option<SqlValue>>)> = Vec::new();
        for &expression in expressions {
            if missing.len() >= MAX_WARM || missing.iter().any(|(e, _)| *e == expression) {
                continue;
            }
            if let Some((key, None)) = self.lookup(expression, bind) {
                missing.push((expression, key));
            }
        }
        if missing.len() < 2 {
            return;
        }
        let columns: Vec<String> = missing.iter().map(|(e, _)| format!("({e})")).collect();
        let sql = format!("SELECT {}", columns.join(", "));
        let budget = MAX_STATEMENT_INSTRUCTIONS.saturating_mul(missing.len() as u64);
        let Ok((rows, _)) = with_budget(budget, || self.conn.execute_named(&sql, bind)) else {
            return;
        };
        let Some(row) = rows.rows.into_iter().next() else {
            return;
        };
        if row.len() != missing.len() {
            return;
        }
        for ((expression, key), value) in missing.into_iter().zip(row) {
            self.keep(expression, key, value);
        }
    }

    /// Whether `expression`'s value depends only on the values it reads:
    /// no parenthesis outside its quoted text (no function call, no
    /// subquery) and none of SQL's clock keywords anywhere. Such a result
    /// is kept and not computed again.
    fn pure(expression: &str) -> bool {
        let mut quote = None;
        let mut previous = 0;
        for c in expression.bytes() {
            match quote {
                // A doubled quote closes and reopens: the same answer.
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if matches!(c, b'\'' | b'"' | b'`') => quote = Some(c),
                None if c == b'[' => quote = Some(b']'),
                // A comment could hide a quote: not read, not kept.
                None if c == b'('
                    || (previous, c) == (b'-', b'-')
                    || (previous, c) == (b'/', b'*') =>
                {
                    return false
                }
                None => {}
            }
            previous = c;
        }
        !expression
            .as_bytes()
            .windows(8)
            .any(|w| w.eq_ignore_ascii_case(b"CURRENT_"))
    }

    fn truth(
        &self,
        expression: &str,
        what: &dyn Fn() -> String,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<bool> {
        Ok(match self.eval(expression, what, bind)? {
            SqlValue::Integer(i) => i != 0,
            SqlValue::Real(f) => f != 0.0,
            SqlValue::Null => false,
            SqlValue::Text(t) => t.parse::<f64>().is_ok_and(|f| f != 0.0),
            SqlValue::Blob(_) => false,
        })
    }

    /// A number: written as one, or an expression over the parameters.
    fn number(
        &self,
        value: &toml::Value,
        what: &dyn Fn() -> String,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<i64> {
        match value {
            toml::Value::Integer(i) => Ok(*i),
            toml::Value::String(expression) => match self.eval(expression, what, bind)? {
                SqlValue::Integer(i) => Ok(i),
                other => Err(bad(format!(
                    "{}: {} is {}, not a whole number",
                    what(),
                    quote(expression),
                    words_of(&other)
                ))),
            },
            _ => Err(bad(format!(
                "{}: give a whole number or an expression",
                what()
            ))),
        }
    }
}

impl FileScenario {
    /// The scenario of `file` with `params` (already checked), compiled.
    /// The file is shared, not copied: a built-in is built for every run
    /// session, sweep point and soak scenario.
    pub fn new(file: Rc<File>, params: Params) -> Result<Self> {
        Self::build(file, params, None, MAX_ATTEMPT_STEPS)
    }

    /// As [`FileScenario::new`], for a file of one attempt labelled `label`
    /// that may take up to `max_steps` steps (run alone).
    pub(crate) fn alone(
        file: Rc<File>,
        params: Params,
        label: &str,
        max_steps: usize,
    ) -> Result<Self> {
        Self::build(file, params, Some(label.to_string()), max_steps)
    }

    fn build(
        file: Rc<File>,
        params: Params,
        label: Option<String>,
        max_steps: usize,
    ) -> Result<Self> {
        let names: Vec<&String> = file.databases.keys().collect();
        let files: Rc<[&'static str]> = names
            .iter()
            .map(|name| leak(format!("{name}.db")))
            .collect();
        let pragmas: Rc<[String]> = file.databases.values().map(|d| d.pragmas.clone()).collect();
        // What programs bind by name: the parameters, then the defaults.
        let mut bound = params.values().clone();
        for (name, value) in &file.defaults {
            if bound.contains_key(name) {
                continue;
            }
            let value = match value {
                toml::Value::Integer(i) => Value::from(*i),
                toml::Value::String(s) => Value::from(s.as_str()),
                toml::Value::Boolean(b) => Value::from(i64::from(*b)),
                _ => return Err(bad(format!("defaults.{name} is a whole number or text"))),
            };
            bound.insert(name.clone(), value);
        }
        let shared_params = Rc::new(bound);
        let mut scenario = FileScenario {
            file,
            params,
            files,
            pragmas,
            instances: Vec::new(),
            checks_on: Vec::new(),
            label,
            max_steps,
        };
        // One private store evaluates every static expression of this build.
        let evaluator = Evaluator::new()?;
        scenario.instances = scenario.compile(&evaluator, &shared_params)?;
        for spec in &scenario.file.checks {
            let on = match &spec.when {
                Some(condition) => evaluator.truth(
                    condition,
                    &|| format!("check {}: when", quote(&spec.name)),
                    &|n| param_value(&shared_params, n),
                )?,
                None => true,
            };
            scenario.checks_on.push(on);
        }
        Ok(scenario)
    }

    /// Attempt `index`'s values (`with`, then `let`).
    pub(crate) fn values_of(&self, index: usize) -> Vec<(String, SqlValue)> {
        self.instances
            .get(index)
            .map(|i| i.values.clone())
            .unwrap_or_default()
    }

    fn db_index(&self, name: Option<&String>) -> usize {
        name.and_then(|n| self.file.databases.keys().position(|k| k == n))
            .unwrap_or(0)
    }

    fn whole_param(&self, name: &str) -> Result<i64> {
        self.params
            .values()
            .get(name)
            .and_then(Value::as_i64)
            .ok_or_else(|| bad(format!("{name} is not a whole parameter")))
    }

    fn replicas(&self, spec: &AttemptSpec) -> Result<usize> {
        Ok(match &spec.replicas {
            None => 1,
            Some(toml::Value::Integer(n)) => *n as usize,
            Some(toml::Value::String(name)) => self.whole_param(name)? as usize,
            Some(_) => 1,
        })
    }

    /// Compiles every attempt.
    fn compile(
        &self,
        evaluator: &Evaluator,
        params: &Rc<Map<String, Value>>,
    ) -> Result<Vec<Rc<Instance>>> {
        let file = &self.file;
        // Labels and roles first: `after`, `hold-for` and `wait-while` name them.
        let mut plan: Vec<(usize, String)> = Vec::new();
        for (spec_index, spec) in file.attempts.iter().enumerate() {
            let replicas = self.replicas(spec)?;
            for r in 0..replicas {
                let index = plan.len();
                let label = match (self.label.as_ref().or(spec.label.as_ref()), replicas) {
                    (Some(label), 1) => label.clone(),
                    (Some(label), _) => format!("{label}{}", r + 1),
                    (None, _) => Schedule::letter(index).to_string(),
                };
                plan.push((spec_index, label));
            }
        }
        if plan.len() > super::MAX_ATTEMPTS {
            return Err(bad(format!(
                "{} attempts; at most {} can race",
                plan.len(),
                super::MAX_ATTEMPTS
            )));
        }
        let named = |name: &str| -> Vec<usize> {
            plan.iter()
                .enumerate()
                .filter(|(_, (spec_index, label))| {
                    label == name || file.attempts[*spec_index].role.as_deref() == Some(name)
                })
                .map(|(i, _)| i)
                .collect()
        };
        // The lets that read no other let, computed together first for each
        // attempt (an event's ids from its suffix, for a session's call).
        let first_lets: Vec<&str> = file
            .lets
            .values()
            .filter(|expression| {
                let mut other_let = false;
                reads(expression, |n| other_let |= file.lets.contains_key(n));
                !other_let
            })
            .map(String::as_str)
            .collect();
        let mut instances = Vec::with_capacity(plan.len());
        for (index, (spec_index, label)) in plan.iter().enumerate() {
            let spec = &file.attempts[*spec_index];
            let what = format!("attempt {label}");
            let param_bind = |name: &str| param_value(params, name);
            let mut values: Vec<(String, SqlValue)> = Vec::new();
            for (name, value) in &spec.with {
                let resolved = match value {
                    toml::Value::String(s) if s.starts_with(':') => param_value(params, &s[1..])
                        .ok_or_else(|| {
                            bad(format!(
                                "{what}: with.{name} names {s}, which is not a parameter"
                            ))
                        })?,
                    other => toml_sql(other)
                        .ok_or_else(|| bad(format!("{what}: with.{name} is a number or text")))?,
                };
                values.push((name.clone(), resolved));
            }
            if spec.clock.is_none() {
                let lookup = |values: &[(String, SqlValue)], n: &str| {
                    attempt_value(values, index, label, params, n)
                };
                evaluator.warm(&first_lets, &|n| lookup(&values, n));
                for (name, expression) in &file.lets {
                    let value =
                        evaluator.eval(expression, &|| format!("{what}: let {name}"), &|n| {
                            lookup(&values, n)
                        })?;
                    values.push((name.clone(), value));
                }
            }
            let after = match &spec.after {
                Some(name) => Some(named(name).into_iter().find(|&i| i < index).ok_or_else(
                    || bad(format!("{what}: no earlier attempt is {}", quote(name))),
                )?),
                None => None,
            };
            let not_before = match &spec.not_before {
                Some(value) => {
                    evaluator
                        .number(value, &|| format!("{what}: not-before"), &|n| param_bind(n))?
                }
                None => i64::MIN,
            };
            let mut class = crate::sim::state_hasher();
            spec_index.hash(&mut class);
            after.hash(&mut class);
            for (name, value) in &values {
                name.hash(&mut class);
                hash_value(value, &mut class);
            }
            let kind = if let Some(clock) = &spec.clock {
                let until = evaluator.number(&clock.until, &|| format!("{what}: until"), &|n| {
                    param_bind(n)
                })?;
                let hold = match (&clock.hold_at, &clock.hold_for) {
                    (Some(at), Some(holder)) => Some((
                        evaluator.number(at, &|| format!("{what}: hold-at"), &|n| param_bind(n))?,
                        *named(holder)
                            .first()
                            .ok_or_else(|| bad(format!("{what}: hold-for names no attempt")))?,
                    )),
                    (None, None) => None,
                    _ => return Err(bad(format!("{what}: give hold-at and hold-for together"))),
                };
                (clock.tick, until, hold).hash(&mut class);
                InstanceKind::Clock {
                    tick: clock.tick,
                    until,
                    hold,
                }
            } else {
                let steps = self.expand(
                    evaluator, spec, index, label, &values, params, &named, &what,
                )?;
                let personal = steps.iter().any(|s| match &s.kind {
                    StepKind::Sql(sql) => sql.contains(":attempt") || sql.contains(":label"),
                    _ => false,
                });
                if personal {
                    index.hash(&mut class);
                }
                InstanceKind::Program(steps)
            };
            let crash = match &spec.crash_after {
                Some(crash) => {
                    let given = match &crash.steps {
                        toml::Value::String(name) => params.get(name).cloned(),
                        toml::Value::Integer(n) => Some(Value::from(*n)),
                        _ => None,
                    };
                    let after = match given.as_ref() {
                        Some(Value::Number(n)) => n.as_u64().map(|n| n as usize),
                        Some(Value::String(s)) if s == "none" => None,
                        Some(Value::String(s)) => Some(s.parse::<usize>().map_err(|_| {
                            bad(format!(
                                "{what}: crash-after: {} is neither a number of steps nor none",
                                quote(s)
                            ))
                        })?),
                        _ => None,
                    };
                    after.map(|after| Crash {
                        after,
                        name: crash.name.clone().unwrap_or_else(|| "crash".into()),
                        result: crash.result.clone(),
                        note: crash.note.clone().unwrap_or_else(|| {
                            "{label}'s process dies here: its locks vanish, and what it committed stays".into()
                        }),
                    })
                }
                None => None,
            };
            crash.as_ref().map(|c| c.after).hash(&mut class);
            let start = match &kind {
                InstanceKind::Program(steps) => first_present(steps, 0),
                InstanceKind::Clock { .. } => 0,
            };
            instances.push(Rc::new(Instance {
                index,
                label: label.clone(),
                role: spec.role.clone(),
                kind,
                values,
                class: class.finish(),
                after,
                crash,
                not_before,
                start,
                max_steps: self.max_steps,
                params: Rc::clone(params),
                files: Rc::clone(&self.files),
                pragmas: Rc::clone(&self.pragmas),
            }));
        }
        Ok(instances)
    }

    /// Expands attempt `spec`'s program: `use` inlined, names filled in,
    /// `when` decided, `goto` resolved.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &self,
        evaluator: &Evaluator,
        spec: &AttemptSpec,
        index: usize,
        label: &str,
        values: &[(String, SqlValue)],
        params: &Map<String, Value>,
        named: &dyn Fn(&str) -> Vec<usize>,
        what: &str,
    ) -> Result<Rc<[Step]>> {
        let file = &self.file;
        // What the expansion reads besides the file: the attempt's values,
        // `attempt`, `label` and the parameters.
        let dynamic =
            |name: &str| -> Option<SqlValue> { attempt_value(values, index, label, params, name) };
        // A file of one attempt that the engine builds again and again (a
        // session's requests) reuses an earlier expansion that read the same.
        let spec_at = std::ptr::from_ref(spec) as usize;
        if self.label.is_some() {
            let kept = EXPANSIONS.with(|e| {
                e.borrow()
                    .iter()
                    .rev()
                    .find(|k| {
                        Rc::ptr_eq(&k.file, file)
                            && k.spec == spec_at
                            && k.index == index
                            && k.read.iter().all(|(n, v)| same_value(&dynamic(n), v))
                            && k.asked.iter().all(|(n, answer)| named(n) == *answer)
                    })
                    .map(|k| Rc::clone(&k.steps))
            });
            if let Some(steps) = kept {
                return Ok(steps);
            }
        }
        let read: std::cell::RefCell<Vec<(String, Option<SqlValue>)>> = Default::default();
        let asked: std::cell::RefCell<Vec<(String, Vec<usize>)>> = Default::default();
        let dynamic = |name: &str| noted(&read, name, dynamic(name));
        let named = |name: &str| noted(&asked, name, named(name));
        // Whether a `when` evaluated could give another answer for the same
        // values (it calls a function): such an expansion is not kept.
        let mut impure = false;
        let mut raw: Vec<RawStep<'_>> = Vec::new();
        inline(
            file,
            file.steps_of(spec),
            &[],
            &[],
            None,
            None,
            0,
            &mut raw,
            what,
        )?;
        if raw.len() > super::MAX_PROGRAM_STEPS * 4 {
            return Err(bad(format!(
                "{what}: its program expands to {} steps; at most {} are run",
                raw.len(),
                super::MAX_PROGRAM_STEPS * 4
            )));
        }
        let default_db = self.db_index(spec.database.as_ref());
        let lookup_static = |with: &[(String, SqlValue)], name: &str| -> Option<SqlValue> {
            match with.iter().find(|(n, _)| n == name) {
                Some((_, value)) => Some(value.clone()),
                None => dynamic(name),
            }
        };
        let words_static = |with: &[(String, SqlValue)], name: &str| -> Option<String> {
            lookup_static(with, name).map(|v| words_of(&v))
        };
        // Names, with every value known before the run filled in.
        let names: Vec<String> = raw
            .iter()
            .map(|r| fill(&r.name, &|n| words_static(&r.with, n)))
            .collect();
        let ids: Vec<Option<String>> = raw
            .iter()
            .map(|r| {
                r.id.as_ref()
                    .map(|id| fill(id, &|n| words_static(&r.with, n)))
            })
            .collect();
        // The `when`s that read the same values, computed together first.
        let mut warmed: Vec<&[(String, SqlValue)]> = Vec::new();
        for r in &raw {
            if warmed.contains(&r.with.as_slice()) {
                continue;
            }
            warmed.push(&r.with);
            let conditions: Vec<&str> = raw
                .iter()
                .filter(|o| o.with == r.with)
                .flat_map(|o| o.conditions.iter().chain(&o.spec.when))
                .map(String::as_str)
                .collect();
            evaluator.warm(&conditions, &|n| lookup_static(&r.with, n));
        }
        let mut present = Vec::with_capacity(raw.len());
        for (r, name) in raw.iter().zip(&names) {
            let mut there = true;
            for condition in r.conditions.iter().chain(&r.spec.when) {
                if !there {
                    break;
                }
                impure |= !Evaluator::pure(condition);
                there = evaluator.truth(
                    condition,
                    &|| format!("{what}, step {}: when", quote(name)),
                    &|n| lookup_static(&r.with, n),
                )?;
            }
            present.push(there);
        }
        let first_present_at =
            |from: usize| -> usize { (from..raw.len()).find(|&i| present[i]).unwrap_or(raw.len()) };
        let target = |r: &RawStep<'_>, goto: &str, step: &str| -> Result<usize> {
            let goto = fill(goto, &|n| words_static(&r.with, n));
            ids.iter()
                .position(|id| id.as_deref() == Some(goto.as_str()))
                .or_else(|| names.iter().position(|n| *n == goto))
                .map(first_present_at)
                .ok_or_else(|| {
                    bad(format!(
                        "{what}, step {}: goes to {}, which is not a step of this attempt",
                        quote(step),
                        quote(&goto)
                    ))
                })
        };
        let resolve =
            |r: &RawStep<'_>, action: &Option<ActionSpec>, step: &str| -> Result<Option<Act>> {
                let Some(action) = action else {
                    return Ok(None);
                };
                Ok(Some(match action {
                    ActionSpec::Word(w) => match w.as_str() {
                        "wait" => Act::Wait,
                        "retry" => Act::Retry,
                        _ => Act::Next,
                    },
                    ActionSpec::Table(t) => {
                        let wait_while: Vec<usize> = match &t.wait_while {
                            // No attempt of that name: nothing to wait for.
                            Some(name) => named(name),
                            None => Vec::new(),
                        };
                        if let Some(goto) = &t.goto {
                            Act::Goto {
                                target: target(r, goto, step)?,
                                back_off: t.back_off,
                                log: t.log.clone(),
                                wait_while,
                            }
                        } else if let Some(kind) = &t.finish {
                            match &r.ret {
                                // Inside a `use`, finishing goes on after it.
                                Some((end, log)) => Act::Goto {
                                    target: first_present_at(*end),
                                    back_off: false,
                                    log: log.as_ref().map(|l| l.replace("{outcome}", kind)),
                                    wait_while,
                                },
                                None => Act::Finish {
                                    kind: kind.clone(),
                                    result: t.result.clone(),
                                    log: t.log.clone(),
                                    wait_while,
                                },
                            }
                        } else if let Some(why) = &t.fail {
                            Act::Fail(why.clone())
                        } else {
                            Act::WaitWhile(wait_while)
                        }
                    }
                }))
            };
        let mut steps = Vec::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            let s = r.spec;
            let name = &names[i];
            // A used program's `database` may be a template (`{sub}`).
            let db = match &s.database {
                None => default_db,
                Some(given) => {
                    let filled = fill(given, &|n| words_static(&r.with, n));
                    self.file
                        .databases
                        .keys()
                        .position(|k| *k == filled)
                        .ok_or_else(|| {
                            bad(format!(
                                "{what}, step {}: database {} is {}, which is not declared",
                                quote(name),
                                quote(given),
                                quote(&filled)
                            ))
                        })?
                }
            };
            let kind = match (&s.sql, s.action.as_deref()) {
                (Some(sql), _) => StepKind::Sql(sql.clone()),
                (None, Some("crash")) => StepKind::Crash,
                (None, Some("lose-reply")) => StepKind::LoseReply,
                (None, Some("fail")) => StepKind::Fail,
                _ => StepKind::Work,
            };
            let on = &s.on;
            let mut cases = Vec::new();
            for (value, action) in &on.cases {
                if let Some(act) = resolve(r, &Some(action.clone()), name)? {
                    cases.push((value.clone(), act));
                }
            }
            let set = s
                .set
                .iter()
                .map(|(k, v)| {
                    let value = match v {
                        toml::Value::String(t) => SetValue::Template(t.clone()),
                        other => SetValue::Value(toml_sql(other).unwrap_or(SqlValue::Null)),
                    };
                    (k.clone(), value)
                })
                .collect();
            // What the step does not handle, the file's `on` does.
            let fallback = &file.on;
            let (constraint, error) = match (&on.constraint, &on.error) {
                (None, None) => (&fallback.constraint, &fallback.error),
                (constraint, error) => (constraint, error),
            };
            let handlers = Handlers {
                ok: resolve(r, &on.ok, name)?,
                rows: resolve(r, &on.rows, name)?,
                none: resolve(r, &on.none, name)?,
                cases,
                busy: resolve(
                    r,
                    if on.busy.is_some() {
                        &on.busy
                    } else {
                        &fallback.busy
                    },
                    name,
                )?,
                constraint: resolve(r, constraint, name)?,
                error: resolve(r, error, name)?,
            };
            steps.push(Step {
                name: name.clone(),
                kind,
                db,
                capture: match &s.capture {
                    Some(super::Capture::One(n)) => vec![n.clone()],
                    Some(super::Capture::Many(list)) => list.clone(),
                    None => Vec::new(),
                },
                set,
                note: s.note.clone(),
                phase: leak(fill(
                    r.phase
                        .as_ref()
                        .or(s.phase.as_ref())
                        .map_or("running", |p| p),
                    &|n| words_static(&r.with, n),
                )),
                because: s
                    .because
                    .iter()
                    .map(|b| (b.peers_in.clone(), b.say.clone()))
                    .collect(),
                on: handlers,
                with: r.with.clone(),
                next: first_present_at(i + 1),
                present: present[i],
                live: Vec::new(),
                own_errors: on.constraint.is_some() || on.error.is_some(),
            });
        }
        let crash_note = spec
            .crash_after
            .as_ref()
            .and_then(|c| c.note.clone())
            .unwrap_or_default();
        let start = first_present(&steps, 0);
        liveness(&mut steps, &raw, start, &crash_note);
        let steps: Rc<[Step]> = steps.into();
        if self.label.is_some() && !impure {
            EXPANSIONS.with(|e| {
                let mut kept = e.borrow_mut();
                if kept.len() >= MAX_EXPANSIONS {
                    kept.remove(0);
                }
                kept.push(Kept {
                    file: Rc::clone(&self.file),
                    spec: spec_at,
                    index,
                    read: read.take(),
                    asked: asked.take(),
                    steps: Rc::clone(&steps),
                });
            });
        }
        Ok(steps)
    }
}

/// The names a text reads: `:name` and `{name}`.
fn reads<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    let bytes = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' || bytes[i] == b'{' {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len()
                && (ident(bytes[end]) || (bytes[i] == b'{' && bytes[end] == b'-'))
            {
                end += 1;
            }
            if end > start {
                each(&text[start..end]);
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
}

/// Which captures each step may still read before capturing them again
/// (a backward data-flow over the program's steps and jumps). Two states
/// of an attempt at the same step that differ only in dead captures behave
/// the same, so the explorer counts them once.
fn liveness(steps: &mut [Step], raw: &[RawStep<'_>], start: usize, crash_note: &str) {
    let n = steps.len();
    // Names as bit positions: the fixpoint runs over sets of them.
    let mut names: Vec<&str> = Vec::new();
    let mut position = std::collections::HashMap::<&str, usize>::new();
    let mut index_of = |name| {
        *position.entry(name).or_insert_with(|| {
            names.push(name);
            names.len() - 1
        })
    };
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut killed: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut crash_reads = Vec::new();
    reads(crash_note, |name| crash_reads.push(index_of(name)));
    for (i, step) in steps.iter().enumerate() {
        let uses = &mut before[i];
        if let StepKind::Sql(sql) = &step.kind {
            reads(sql, |name| uses.push(index_of(name)));
        }
        uses.extend_from_slice(&crash_reads);
        // The texts read after the step ran: its note, `set`s and actions.
        let mut texts: Vec<&str> = Vec::new();
        let mut read = |text| texts.push(text);
        if let Some(note) = &raw[i].spec.note {
            match note {
                NoteSpec::One(t) => read(t),
                NoteSpec::By(by) => by.values().for_each(|t| read(t)),
            }
        }
        for (_, value) in &step.set {
            if let SetValue::Template(t) = value {
                read(t);
            }
        }
        let mut next = vec![step.next];
        for act in step.on.acts() {
            match act {
                Act::Next | Act::WaitWhile(_) => next.push(step.next),
                Act::Wait => {}
                Act::Retry => next.push(start),
                Act::Goto { target, log, .. } => {
                    next.push(*target);
                    if let Some(l) = log {
                        read(l);
                    }
                }
                Act::Finish {
                    kind, result, log, ..
                } => {
                    read(kind);
                    if let Some(r) = result {
                        read(r);
                    }
                    if let Some(l) = log {
                        read(l);
                    }
                }
                Act::Fail(why) => read(why),
            }
        }
        next.retain(|&t| t < n);
        successors[i] = next;
        let uses = &mut after[i];
        for text in texts {
            reads(text, |name| uses.push(index_of(name)));
        }
        killed[i] = step
            .set
            .iter()
            .map(|(name, _)| name)
            .chain(&step.capture)
            .map(|name| index_of(name))
            .collect();
    }
    let width = names.len().div_ceil(64).max(1);
    let mut live = vec![0u64; n * width];
    let mut out = vec![0u64; width];
    let set = |bits: &mut [u64], i: usize| bits[i / 64] |= 1 << (i % 64);
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            out.iter_mut().for_each(|w| *w = 0);
            for &t in &successors[i] {
                for (o, l) in out.iter_mut().zip(&live[t * width..(t + 1) * width]) {
                    *o |= l;
                }
            }
            after[i].iter().for_each(|&b| set(&mut out, b));
            for &b in &killed[i] {
                out[b / 64] &= !(1 << (b % 64));
            }
            before[i].iter().for_each(|&b| set(&mut out, b));
            let mine = &mut live[i * width..(i + 1) * width];
            if *mine != *out {
                mine.copy_from_slice(&out);
                changed = true;
            }
        }
    }
    // Sorted names, so that each step's list comes out sorted.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_unstable_by_key(|&b| names[b]);
    let sorted: Vec<(usize, String)> = order
        .into_iter()
        .map(|b| (b, names[b].to_string()))
        .collect();
    for (i, step) in steps.iter_mut().enumerate() {
        let bits = &live[i * width..(i + 1) * width];
        step.live = sorted
            .iter()
            .filter(|(b, _)| bits[b / 64] & (1 << (b % 64)) != 0)
            .map(|(_, name)| name.clone())
            .collect();
    }
}

/// The first step at or after `from` that is there.
fn first_present(steps: &[Step], from: usize) -> usize {
    (from..steps.len())
        .find(|&i| steps[i].present)
        .unwrap_or(steps.len())
}

/// Appends `steps` to `out`, inlining each `use`.
#[allow(clippy::too_many_arguments)]
fn inline<'a>(
    file: &'a File,
    steps: &'a [StepSpec],
    with: &[(String, SqlValue)],
    conditions: &[String],
    phase: Option<&String>,
    ret: Option<(usize, Option<String>)>,
    depth: usize,
    out: &mut Vec<RawStep<'a>>,
    what: &str,
) -> Result<()> {
    if depth > MAX_USE_DEPTH {
        return Err(bad(format!(
            "{what}: use nests more than {MAX_USE_DEPTH} deep (does a program use itself?)"
        )));
    }
    for step in steps {
        if out.len() > super::MAX_PROGRAM_STEPS * 4 {
            return Ok(());
        }
        let fill_with = |text: &str, with: &[(String, SqlValue)]| {
            fill(text, &|n| {
                with.iter().find(|(k, _)| k == n).map(|(_, v)| words_of(v))
            })
        };
        match &step.use_program {
            Some(program) => {
                let inner = file
                    .programs
                    .get(program)
                    .map(|p| p.steps.as_slice())
                    .ok_or_else(|| bad(format!("{what}: no program {}", quote(program))))?;
                let mut inner_with: Vec<(String, SqlValue)> = Vec::new();
                for (k, v) in &step.with {
                    let value = toml_sql(v)
                        .ok_or_else(|| bad(format!("{what}: with.{k} is a number or text")))?;
                    inner_with.push((k.clone(), value));
                }
                inner_with.extend(with.iter().cloned());
                // Where the used steps end: counted by a dry expansion.
                let mut probe = Vec::new();
                inline(
                    file,
                    inner,
                    &inner_with,
                    &[],
                    None,
                    None,
                    depth + 1,
                    &mut probe,
                    what,
                )?;
                let end = out.len() + probe.len();
                // With a `log`, the used program's finishes go on after it
                // (a relay's delivery to one subscriber); without, they finish.
                let ret = step
                    .log
                    .as_ref()
                    .map(|l| (end, Some(fill_with(l, &inner_with))));
                let mut inner_conditions = conditions.to_vec();
                inner_conditions.extend(step.when.iter().cloned());
                inline(
                    file,
                    inner,
                    &inner_with,
                    &inner_conditions,
                    phase.or(step.phase.as_ref()),
                    ret,
                    depth + 1,
                    out,
                    what,
                )?;
            }
            None => out.push(RawStep {
                spec: step,
                name: fill_with(&step.name, with),
                id: step.id.as_ref().map(|id| fill_with(id, with)),
                conditions: conditions.to_vec(),
                phase: phase.cloned(),
                with: with.to_vec(),
                ret: ret.clone(),
            }),
        }
    }
    Ok(())
}

fn hash_value(value: &SqlValue, h: &mut impl Hasher) {
    match value {
        SqlValue::Null => 0u8.hash(h),
        SqlValue::Integer(i) => (1u8, i).hash(h),
        SqlValue::Real(f) => (2u8, f.to_bits()).hash(h),
        SqlValue::Text(t) => (3u8, t).hash(h),
        SqlValue::Blob(b) => (4u8, b).hash(h),
    }
}

impl Scenario for FileScenario {
    fn id(&self) -> &str {
        self.file.id()
    }

    fn declared(&self) -> Option<Declared> {
        let declared = self.file.declared_params().ok()?;
        self.params
            .changed(&declared)
            .is_empty()
            .then_some(if self.file.fails {
                Declared::Fails
            } else {
                Declared::Holds
            })
    }

    fn params(&self) -> Map<String, Value> {
        self.params.values().clone()
    }

    fn journal(&self) -> Journal {
        File::journal(&self.params)
    }

    fn setup(&self, store: &Store) -> Result<()> {
        let journal = self.journal();
        for (i, (name, database)) in self.file.databases.iter().enumerate() {
            let conn = store.connect(self.files[i], "setup")?;
            conn.execute(crate::storage::SCENARIO_PAGE_SIZE, &[])?;
            // Before the bounds: a scenario's own SQL may not change the mode.
            if journal != Journal::default() {
                conn.execute(journal.pragma(), &[])?;
            }
            conn.bound(MAX_VALUE_BYTES)?;
            with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                conn.execute_batch(&database.schema)
            })
            .map_err(|e| {
                bad(format!(
                    "the schema of database {name} failed: {}",
                    explain(&e)
                ))
            })?;
            with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                conn.execute_batch(&database.seed)
            })
            .map_err(|e| {
                bad(format!(
                    "the seed of database {name} failed: {}",
                    explain(&e)
                ))
            })?;
        }
        for prior in &self.file.before {
            let scenario = prior.build()?;
            crate::sim::run_in_order(&scenario, store)?;
        }
        Ok(())
    }

    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>> {
        Ok(self
            .instances
            .iter()
            .map(|instance| -> Box<dyn Attempt> {
                match instance.kind {
                    InstanceKind::Clock { .. } => Box::new(ClockAttempt {
                        instance: Rc::clone(instance),
                    }),
                    InstanceKind::Program(_) => Box::new(ProgramAttempt::new(Rc::clone(instance))),
                }
            })
            .collect())
    }

    fn databases(&self) -> Vec<&'static str> {
        self.files.to_vec()
    }

    fn pragmas(&self, db: &str) -> String {
        self.files
            .iter()
            .position(|f| *f == db)
            .map(|i| self.pragmas[i].clone())
            .unwrap_or_default()
    }

    fn has_invariants(&self) -> bool {
        !self.file.invariants.is_empty()
    }

    fn observes_end_of(&self, attempt: usize) -> bool {
        let Some(instance) = self.instances.get(attempt) else {
            return false;
        };
        self.file
            .checks
            .iter()
            .zip(&self.checks_on)
            .any(|(spec, on)| {
                *on && spec.after.as_deref().is_some_and(|label| {
                    // The first attempt the label or role names, as the checks find it.
                    self.instances
                        .iter()
                        .position(|i| i.label == label || i.role.as_deref() == Some(label))
                        .is_some_and(|i| std::ptr::eq(&self.instances[i], instance))
                })
            })
    }

    fn invariants(&self, committed: &Store) -> Result<Vec<Check>> {
        self.file
            .invariants
            .iter()
            .map(|spec| self.sql_check(spec, committed, None))
            .collect()
    }

    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>> {
        let mut checks = Vec::new();
        let params = self.params.values();
        let index_of = |label: &str| -> Option<usize> {
            self.instances
                .iter()
                .position(|i| i.label == label || i.role.as_deref() == Some(label))
        };
        for (spec, on) in self.file.checks.iter().zip(&self.checks_on) {
            if !on {
                continue;
            }
            let name = fill(&spec.name, &|n| {
                param_value(params, n).map(|v| words_of(&v))
            });
            if spec.sql.is_some() || spec.query.is_some() {
                let check = match &spec.after {
                    Some(label) => {
                        let at = index_of(label)
                            .map(|i| ended.store_at_end_of(i))
                            .transpose()?
                            .flatten();
                        match at {
                            Some(store) => self.sql_check(spec, &store, Some(ended))?,
                            None => Check::equal(
                                &name,
                                show(&expected_rows(spec.expect.as_ref())),
                                "never",
                            ),
                        }
                    }
                    None => self.sql_check(spec, ended.committed, Some(ended))?,
                };
                checks.push(Check { name, ..check });
            } else if let Some(label) = &spec.attempt {
                let index = index_of(label).unwrap_or(usize::MAX);
                if let Some(outcome) = &spec.outcome {
                    checks.push(Check::equal(&name, outcome, ended.kind(index)));
                }
                if let Some(result) = &spec.result {
                    // `{result_X}` is attempt X's result: "B replays A's".
                    let expected = fill(result, &|n| match n.strip_prefix("result_") {
                        Some(label) => Some(
                            index_of(label)
                                .and_then(|i| ended.result(i))
                                .unwrap_or("none")
                                .to_string(),
                        ),
                        None => param_value(params, n).map(|v| words_of(&v)),
                    });
                    let name = if spec.outcome.is_some() {
                        format!("{name}: result")
                    } else {
                        name.clone()
                    };
                    checks.push(Check::equal(
                        &name,
                        expected,
                        ended.result(index).unwrap_or("none"),
                    ));
                }
            } else if let Some(outcome) = &spec.outcome {
                let expected = match &spec.count {
                    Some(toml::Value::Integer(n)) => *n,
                    Some(toml::Value::String(text)) => {
                        let (param, offset) = super::count_expression(text).unwrap_or((text, 0));
                        self.whole_param(param)? + offset
                    }
                    _ => 0,
                };
                let actual = (0..ended.statuses.len())
                    .filter(|&i| ended.outcome(i).is_some_and(|o| &o.kind == outcome))
                    .count();
                checks.push(Check::equal(&name, expected, actual));
            } else if let Some(kinds) = &spec.same_result {
                let results: Vec<Option<&str>> = (0..ended.statuses.len())
                    .filter_map(|i| ended.outcome(i))
                    .filter(|o| kinds.contains(&o.kind))
                    .map(|o| o.result.as_deref())
                    .collect();
                let same = !results.is_empty() && results.iter().all(|r| *r == results[0]);
                checks.push(Check::equal(&name, true, same));
            }
        }
        Ok(checks)
    }
}

impl FileScenario {
    /// Every statement the scenario can run: each database's pragmas, each
    /// attempt's steps (present for it or not: `when` decides per attempt),
    /// the checks (those that apply and those that do not) and their named
    /// queries, the invariants.
    pub(super) fn statements(&self) -> Vec<Statement> {
        let mut out = Vec::new();
        for (db, (name, database)) in self.file.databases.iter().enumerate() {
            if !database.pragmas.trim().is_empty() {
                out.push(Statement {
                    what: format!("the pragmas of database {name}"),
                    db,
                    sql: database.pragmas.clone(),
                    step: false,
                    pragmas: true,
                    near: Some(name.clone()),
                });
            }
        }
        for instance in &self.instances {
            let InstanceKind::Program(steps) = &instance.kind else {
                continue;
            };
            for step in steps.iter() {
                if let StepKind::Sql(sql) = &step.kind {
                    out.push(Statement {
                        what: format!("step {} of attempt {}", quote(&step.name), instance.label),
                        db: step.db,
                        sql: sql.clone(),
                        step: true,
                        pragmas: false,
                        near: Some(step.name.clone()),
                    });
                }
            }
        }
        let checks = self.file.checks.iter().map(|c| ("check", c));
        let invariants = self.file.invariants.iter().map(|c| ("invariant", c));
        for (kind, spec) in checks.chain(invariants) {
            let sql = match (&spec.sql, &spec.query) {
                (Some(sql), _) => sql.clone(),
                (None, Some(query)) => match self.file.queries.get(query) {
                    Some(sql) => sql.clone(),
                    None => continue,
                },
                (None, None) => continue,
            };
            // A named query's mistake is the query's, wherever it is used.
            let what = match &spec.query {
                Some(query) => format!("query {} (of {kind} {})", quote(query), quote(&spec.name)),
                None => format!("{kind} {}", quote(&spec.name)),
            };
            out.push(Statement {
                what,
                db: self.db_index(spec.database.as_ref()),
                sql,
                step: false,
                pragmas: false,
                near: Some(spec.query.clone().unwrap_or_else(|| spec.name.clone())),
            });
        }
        out
    }

    /// The SQL statements SQLite cannot prepare, located in `source` (see
    /// [`super::sql`]).
    pub(super) fn sql_mistakes(&self, source: &str) -> Result<Vec<super::SqlMistake>> {
        super::sql::mistakes(
            &self.statements(),
            &self.files,
            |store| self.setup(store),
            source,
        )
    }
}

impl FileScenario {
    /// An SQL check: its query on `committed` against its `expect`; with
    /// `ended`, `:outcome_X` and `:result_X` bind attempt X's outcome and result.
    fn sql_check(
        &self,
        spec: &CheckSpec,
        committed: &Store,
        ended: Option<&Ended<'_>>,
    ) -> Result<Check> {
        let sql = match &spec.query {
            Some(name) => self.file.queries.get(name).map_or("", String::as_str),
            None => spec.sql.as_deref().unwrap_or_default(),
        };
        let db = self.db_index(spec.database.as_ref());
        let conn = committed.connect(self.files[db], "check")?;
        conn.bound(MAX_VALUE_BYTES)?;
        let bind = |name: &str| {
            if let Some(ended) = ended {
                let attempt = |label: &str| self.instances.iter().position(|i| i.label == label);
                if let Some(label) = name.strip_prefix("outcome_") {
                    return attempt(label).map(|i| SqlValue::Text(ended.kind(i)));
                }
                if let Some(label) = name.strip_prefix("result_") {
                    return attempt(label).map(|i| {
                        ended
                            .result(i)
                            .map_or(SqlValue::Null, |r| SqlValue::Text(r.to_string()))
                    });
                }
            }
            param_value(self.params.values(), name)
        };
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
        let expected = expected_rows(spec.expect.as_ref());
        Ok(Check::equal(&spec.name, show(&expected), show(&actual)))
    }
}

/// A TOML `expect` as rows: a value is one row of one column, an array of
/// arrays is rows, an array of values is one row.
fn expected_rows(expect: Option<&toml::Value>) -> Value {
    let scalar = |v: &toml::Value| match v {
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::from(i64::from(*b)),
        toml::Value::String(s) if s == "NULL" => Value::Null,
        toml::Value::String(s) => Value::from(s.as_str()),
        other => Value::from(format!("{other:?}")),
    };
    match expect {
        None => Value::Null,
        Some(toml::Value::Array(items)) if items.iter().all(|i| i.is_array()) => Value::from(
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
        Some(toml::Value::Array(items)) => Value::from(vec![Value::from(
            items.iter().map(scalar).collect::<Vec<_>>(),
        )]),
        Some(value) => Value::from(vec![Value::from(vec![scalar(value)])]),
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

/// Rows for people: `2` or `(1, 1)` for one value, JSON otherwise.
fn show(rows: &Value) -> String {
    match rows.as_array().map(Vec::as_slice) {
        Some([row]) => match row.as_array().map(Vec::as_slice) {
            Some([Value::String(text)]) => text.clone(),
            Some([one]) => one.to_string(),
            _ => row.to_string(),
        },
        _ => rows.to_string(),
    }
}

/// One attempt of a file: a program counter over its steps, what it
/// captured, and a connection per database.
struct ProgramAttempt {
    instance: Rc<Instance>,
    conns: Vec<Option<Conn>>,
    state: AttemptState,
    /// Per database, whether a rewind keeps the transaction it has open:
    /// the very one the checkpoint has, with nothing done since.
    kept: Vec<bool>,
}

/// What a program attempt is, apart from its connections: all a
/// checkpoint keeps of it ([`Attempt::save`]).
struct AttemptState {
    pc: usize,
    /// Shared with the checkpoints that saved them, until changed.
    captures: Rc<BTreeMap<String, SqlValue>>,
    log: Rc<Vec<String>>,
    retries: u32,
    /// Steps taken, blocked ones included (loops end at a bound).
    taken: usize,
    /// Steps that were not blocked (for `crash-after`).
    done_steps: usize,
    /// How it ended, once over.
    over: Option<&'static str>,
    /// What the step being taken saw: rows changed, the virtual time, and
    /// the error, if any.
    changes: u64,
    now: i64,
    error: String,
    /// The rowid the connection inserted last (`{rowid}`).
    rowid: i64,
    /// Per database, the statements its connection ran in the transaction
    /// it has open (the step's index and the values bound), to run them
    /// again on a rewound run ([`Attempt::resume`]).
    open_work: Vec<Rc<Work>>,
    /// Per database, the lock that transaction held when saved (a
    /// rewound run's: the lock to take back).
    levels: Vec<LockLevel>,
}

impl Clone for AttemptState {
    fn clone(&self) -> Self {
        AttemptState {
            pc: self.pc,
            captures: Rc::clone(&self.captures),
            log: Rc::clone(&self.log),
            retries: self.retries,
            taken: self.taken,
            done_steps: self.done_steps,
            over: self.over,
            changes: self.changes,
            now: self.now,
            error: self.error.clone(),
            rowid: self.rowid,
            open_work: self.open_work.clone(),
            levels: self.levels.clone(),
        }
    }

    /// Field by field, keeping this state's allocations: a rewound run
    /// takes back every attempt's state at every rewind.
    fn clone_from(&mut self, source: &Self) {
        let AttemptState {
            pc,
            captures,
            log,
            retries,
            taken,
            done_steps,
            over,
            changes,
            now,
            error,
            rowid,
            open_work,
            levels,
        } = source;
        self.pc = *pc;
        self.captures.clone_from(captures);
        self.log.clone_from(log);
        self.retries = *retries;
        self.taken = *taken;
        self.done_steps = *done_steps;
        self.over = *over;
        self.changes = *changes;
        self.now = *now;
        self.error.clone_from(error);
        self.rowid = *rowid;
        self.open_work.clone_from(open_work);
        self.levels.clone_from(levels);
    }
}

impl AttemptState {
    /// Database `db`'s connection has no transaction open: no work to redo.
    fn forget_work(&mut self, db: usize) {
        if !self.open_work[db].is_empty() {
            self.open_work[db] = Rc::default();
        }
    }
}

/// The statements a transaction ran: each step's index and its values bound.
type Work = Vec<(usize, Vec<SqlValue>)>;

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

impl Answer {
    fn word(self) -> &'static str {
        match self {
            Answer::Ok => "ok",
            Answer::Rows => "rows",
            Answer::None => "none",
            Answer::Busy => "busy",
            Answer::Constraint => "constraint",
            Answer::Error => "error",
        }
    }
}

impl ProgramAttempt {
    fn new(instance: Rc<Instance>) -> Self {
        let databases = instance.files.len();
        ProgramAttempt {
            state: AttemptState {
                pc: instance.start,
                open_work: vec![Rc::default(); databases],
                levels: vec![LockLevel::None; databases],
                captures: Rc::default(),
                log: Rc::default(),
                retries: 0,
                taken: 0,
                done_steps: 0,
                over: None,
                changes: 0,
                now: 0,
                error: String::new(),
                rowid: 0,
            },
            instance,
            conns: (0..databases).map(|_| None).collect(),
            kept: vec![false; databases],
        }
    }

    fn steps(&self) -> &[Step] {
        match &self.instance.kind {
            InstanceKind::Program(steps) => steps,
            InstanceKind::Clock { .. } => &[],
        }
    }

    fn bind(&self, step: &Step, name: &str, now: i64) -> Option<SqlValue> {
        if let Some(value) = self.state.captures.get(name) {
            return Some(value.clone());
        }
        if let Some((_, v)) = step
            .with
            .iter()
            .chain(&self.instance.values)
            .find(|(n, _)| n == name)
        {
            return Some(v.clone());
        }
        match name {
            "attempt" => return Some(SqlValue::Integer(self.instance.index as i64)),
            "label" => return Some(SqlValue::Text(self.instance.label.clone())),
            "now" => return Some(SqlValue::Integer(now)),
            _ => {}
        }
        param_value(&self.instance.params, name)
    }

    fn log_text(&self) -> String {
        if self.state.log.is_empty() {
            "nothing".to_string()
        } else {
            self.state.log.join(", ")
        }
    }

    /// `{name}` in a template: a capture, a value, a parameter, `{label}`,
    /// `{role}`, `{rows}`, `{log}`, `{because}`, `{error}`.
    fn words(&self, step: &Step, template: &str, extra: &dyn Fn(&str) -> Option<String>) -> String {
        fill(template, &|name| self.word(step, name, extra))
    }

    /// A note's words: as [`Self::words`], through [`fill_note`].
    fn note_words(
        &self,
        step: &Step,
        template: &str,
        extra: &dyn Fn(&str) -> Option<String>,
    ) -> String {
        fill_note(template, &|name| self.word(step, name, extra))
    }

    /// What `{name}` stands for in a template of `step`.
    fn word(
        &self,
        step: &Step,
        name: &str,
        extra: &dyn Fn(&str) -> Option<String>,
    ) -> Option<String> {
        extra(name).or_else(|| match name {
            "label" => Some(self.instance.label.clone()),
            "role" => Some(
                self.instance
                    .role
                    .clone()
                    .unwrap_or_else(|| "attempt".into()),
            ),
            "log" => Some(self.log_text()),
            "changes" => Some(self.state.changes.to_string()),
            "now" => Some(self.state.now.to_string()),
            "error" => Some(self.state.error.clone()),
            "rowid" => Some(self.state.rowid.to_string()),
            _ => self.bind(step, name, self.state.now).map(|v| words_of(&v)),
        })
    }

    /// The outcome's result: `:capture` reads a capture (NULL: no result),
    /// anything else is text with `{name}` filled in.
    fn result_of(&self, step: &Step, result: &Option<String>) -> Option<String> {
        let result = result.as_ref()?;
        match result.strip_prefix(':') {
            Some(name) => match self.bind(step, name, 0) {
                None | Some(SqlValue::Null) => None,
                Some(SqlValue::Text(t)) => Some(t),
                Some(other) => Some(sql_json(&other).to_string()),
            },
            None => Some(self.words(step, result, &|_| None)),
        }
    }

    fn clear(&mut self) {
        if !self.state.captures.is_empty() {
            self.state.captures = Rc::default();
        }
    }

    fn goto(&mut self, target: usize) -> (Progress, Option<String>) {
        if target == self.instance.start {
            // Going back to the start forgets what the program read.
            self.clear();
        }
        self.state.pc = target;
        if self.state.pc >= self.steps().len() {
            return self.finish(Outcome::new("done"));
        }
        (Progress::Progressed, None)
    }

    fn finish(&mut self, outcome: Outcome) -> (Progress, Option<String>) {
        self.end(&outcome.kind);
        (Progress::Finished { outcome }, None)
    }

    fn finish_failed(&mut self, why: String) -> (Progress, Option<String>) {
        self.finish_stopped(why, None)
    }

    /// The attempt is over, failed, or stopped by `bound`.
    /// The attempt stopped because its step ran past a budget of the whole
    /// run ([`crate::sim::BUDGETS`]).
    fn stopped_by_run_budget(&mut self) -> (Progress, Option<String>) {
        let budgets = crate::sim::BUDGETS;
        match crate::storage::run_budget_out() {
            Some(crate::storage::RunBudget::Bytes) => self.finish_stopped(
                format!(
                    "built more bytes of values than a run may ({} MiB: the rows its statements return and the text its templates fill in, all together), and was stopped",
                    budgets.run_bytes >> 20
                ),
                Some(Bound::RunBytes),
            ),
            _ => self.finish_stopped(
                format!(
                    "ran a statement past the SQLite instructions a whole run may run ({} million, every statement together), which was stopped",
                    budgets.run_instructions / 1_000_000
                ),
                Some(Bound::RunInstructions),
            ),
        }
    }

    fn finish_stopped(&mut self, why: String, bound: Option<Bound>) -> (Progress, Option<String>) {
        self.end("failed");
        (
            Progress::Failed {
                error: why.clone(),
                bound,
            },
            Some(format!("fails: {why}")),
        )
    }

    /// The attempt is over: its connections close (an open transaction
    /// rolls back, as when a client returns its connection).
    fn end(&mut self, kind: &str) {
        self.state.over = Some(super::leak(kind));
        for conn in &mut self.conns {
            *conn = None;
        }
    }

    /// Whether the attempt may leave this step (no attempt of `wait_while`
    /// still runs); if so, its `log` line is written.
    fn leave(
        &mut self,
        ctx: &StepCtx<'_>,
        step: &Step,
        wait_while: &[usize],
        log: &Option<String>,
    ) -> bool {
        if Self::waiting_on(ctx, wait_while) {
            return false;
        }
        if let Some(log) = log {
            let entry = self.words(step, log, &|_| None);
            Rc::make_mut(&mut self.state.log).push(entry);
        }
        true
    }

    fn waiting_on(ctx: &StepCtx<'_>, attempts: &[usize]) -> bool {
        // What it decides depends on whether they are over.
        let mask = attempts.iter().fold(0u32, |m, &a| m | 1 << (a % 32));
        crate::storage::footprint::read_status(mask);
        ctx.peers
            .iter()
            .any(|p| attempts.contains(&p.index) && !p.finished)
    }

    /// Applies `action`; returns the progress and words added to the note.
    fn apply(
        &mut self,
        step: &Step,
        action: &Act,
        ctx: &StepCtx<'_>,
    ) -> (Progress, Option<String>) {
        match action {
            Act::Wait => (Progress::Blocked, None),
            Act::Next => self.goto(step.next),
            Act::Retry => {
                for conn in self.conns.iter().flatten() {
                    let _ = conn.execute("ROLLBACK", &[]);
                }
                self.state.retries += 1;
                if self.state.retries > MAX_RETRIES {
                    return self.finish_failed(format!("gave up after {MAX_RETRIES} retries"));
                }
                self.clear();
                self.state.pc = self.instance.start;
                (
                    Progress::Progressed,
                    Some(format!(
                        "rolls back and starts again (retry {})",
                        self.state.retries
                    )),
                )
            }
            Act::WaitWhile(attempts) => {
                if Self::waiting_on(ctx, attempts) {
                    (Progress::Blocked, None)
                } else {
                    self.goto(step.next)
                }
            }
            Act::Goto {
                target,
                back_off,
                log,
                wait_while,
            } => {
                if !self.leave(ctx, step, wait_while, log) {
                    return (Progress::Blocked, None);
                }
                let moved = self.goto(*target);
                if *back_off && matches!(moved.0, Progress::Progressed) {
                    // What it decides depends on every peer's locks.
                    crate::storage::footprint::read_all();
                    let writing = ctx.peers.iter().any(Peer::writing);
                    if writing {
                        return (Progress::Blocked, None);
                    }
                }
                moved
            }
            Act::Finish {
                kind,
                result,
                log,
                wait_while,
            } => {
                if !self.leave(ctx, step, wait_while, log) {
                    return (Progress::Blocked, None);
                }
                let result = self.result_of(step, result);
                let kind = self.words(step, kind, &|_| None);
                self.finish(Outcome { kind, result })
            }
            Act::Fail(why) => {
                let why = self.words(step, why, &|_| None);
                self.finish_failed(why)
            }
        }
    }

    fn connection(&mut self, ctx: &StepCtx<'_>, db: usize) -> Result<&Conn> {
        self.open(ctx.store, db)?;
        Ok(self.conns[db].as_ref().expect("opened"))
    }

    /// Opens its connection to database `db`, unless it is open.
    fn open(&mut self, store: &Store, db: usize) -> Result<()> {
        if self.conns[db].is_none() {
            let file = self.instance.files[db];
            let conn = store.connect(file, &self.instance.label)?;
            conn.bound(MAX_VALUE_BYTES)?;
            let pragmas = &self.instance.pragmas[db];
            if !pragmas.trim().is_empty() {
                conn.apply_pragmas(pragmas)?;
            }
            self.conns[db] = Some(conn);
        }
        Ok(())
    }

    /// The words `{because}` stands for.
    fn because(step: &Step, peers: &[Peer]) -> String {
        for (phases, say) in &step.because {
            if phases.is_empty() {
                return say.clone();
            }
            let who: Vec<&str> = peers
                .iter()
                .filter(|p| phases.iter().any(|ph| ph == p.phase))
                .map(|p| &*p.label)
                .collect();
            if !who.is_empty() {
                return say.replace("{peers}", &who.join(" and "));
            }
        }
        String::new()
    }
}

impl Attempt for ProgramAttempt {
    fn label(&self) -> &str {
        &self.instance.label
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        // The instance is shared (`Rc`): holding it apart from `self` lets
        // the step be read while the attempt changes.
        let instance = Rc::clone(&self.instance);
        let InstanceKind::Program(steps) = &instance.kind else {
            unreachable!("program attempts are built from programs")
        };
        let label = instance.label.as_str();
        self.state.taken += 1;
        if self.state.over.is_some() || self.state.pc >= steps.len() {
            return StepReport {
                database: None,
                name: "over".into(),
                sql: None,
                params: vec![],
                result: SqlResult::None,
                progress: Progress::Failed {
                    error: "the attempt is already over".into(),
                    bound: None,
                },
                note: format!("{label} is already over"),
            };
        }
        let step = &steps[self.state.pc];
        let report = |sql: Option<String>, params, result, progress, note| StepReport {
            database: sql.as_ref().map(|_| instance.files[step.db].to_string()),
            name: step.name.clone(),
            sql,
            params,
            result,
            progress,
            note,
        };
        if self.state.taken > instance.max_steps {
            let max = instance.max_steps;
            let (progress, _) = self.finish_stopped(
                format!("took more than {max} steps: its program may loop for ever"),
                Some(Bound::Steps),
            );
            let note = format!("{label} stops: more than {max} steps");
            return report(None, vec![], SqlResult::None, progress, note);
        }
        if let Some(crash) = &instance.crash {
            if crash.after == self.state.done_steps {
                self.crash();
                self.state.over = Some(crate::sim::CRASHED);
                let outcome = Outcome {
                    kind: crate::sim::CRASHED.into(),
                    result: crash.result.clone(),
                };
                let note = self.note_words(step, &crash.note, &|_| None);
                return StepReport {
                    database: None,
                    name: crash.name.clone(),
                    sql: None,
                    params: vec![],
                    result: SqlResult::None,
                    progress: Progress::Finished { outcome },
                    note,
                };
            }
        }
        let (answer, result, rows, bound, error, sql) = match &step.kind {
            StepKind::Sql(sql) => {
                let now = ctx.now();
                let (mut bound, outcome) = match self.connection(ctx, step.db) {
                    Ok(_) => {
                        let conn = self.conns[step.db].as_ref().expect("opened");
                        if !conn.in_transaction() {
                            self.state.forget_work(step.db);
                        }
                        with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                            conn.execute_named_bound(sql, &|name| self.bind(step, name, now))
                        })
                    }
                    Err(e) => (Vec::new(), Err(e)),
                };
                // The work of the transaction it has open, to redo it. A
                // statement refused a lock (BUSY) left nothing behind, and
                // redone it might be granted what it was refused: left out.
                let in_transaction = self.conns[step.db]
                    .as_ref()
                    .is_some_and(Conn::in_transaction);
                let refused = outcome.as_ref().is_err_and(Error::is_busy);
                if !in_transaction {
                    self.state.forget_work(step.db);
                } else if !refused && !ctx.narrate {
                    // A run that narrates is recorded, and a recorded run is
                    // never checkpointed: only the others keep the work. Their
                    // reports leave the values bound out.
                    let values = std::mem::take(&mut bound);
                    Rc::make_mut(&mut self.state.open_work[step.db]).push((self.state.pc, values));
                }
                match outcome {
                    Ok(rows) => {
                        let answer = if !rows.rows.is_empty() {
                            Answer::Rows
                        } else if !rows.columns.is_empty() {
                            Answer::None
                        } else {
                            Answer::Ok
                        };
                        (answer, SqlResult::None, Some(rows), bound, None, Some(sql))
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
                        (answer, SqlResult::None, None, bound, Some(e), Some(sql))
                    }
                }
            }
            _ => (Answer::Ok, SqlResult::None, None, vec![], None, None),
        };
        self.state.changes = rows.as_ref().map_or(0, |r| r.changes);
        if let Some(rows) = &rows {
            self.state.rowid = rows.last_insert_rowid;
        }
        self.state.now = ctx.now();
        self.state.error = error.as_ref().map(explain).unwrap_or_default();
        if let Some(rows) = &rows {
            let first = rows.rows.first();
            for (i, name) in step.capture.iter().enumerate() {
                let value = first
                    .and_then(|r| r.get(i))
                    .cloned()
                    .unwrap_or(SqlValue::Null);
                let captures = Rc::make_mut(&mut self.state.captures);
                match captures.get_mut(name) {
                    Some(slot) => *slot = value,
                    None => {
                        captures.insert(name.clone(), value);
                    }
                }
            }
        }
        let case = rows
            .as_ref()
            .and_then(|r| r.rows.first())
            .and_then(|r| r.first())
            .and_then(|v| match v {
                SqlValue::Text(t) => Some(t.clone()),
                SqlValue::Integer(i) => Some(i.to_string()),
                _ => None,
            });
        let on = &step.on;
        let chosen = match answer {
            Answer::Rows => case
                .as_ref()
                .and_then(|c| on.cases.iter().find(|(v, _)| v == c).map(|(_, a)| a))
                .or(on.rows.as_ref())
                .or(on.ok.as_ref()),
            Answer::None => on.none.as_ref().or(on.ok.as_ref()),
            Answer::Ok => on.ok.as_ref(),
            Answer::Busy => on.busy.as_ref(),
            Answer::Constraint => on.constraint.as_ref().or(on.error.as_ref()),
            Answer::Error => on.error.as_ref(),
        }
        .cloned();
        // What the step keeps, before the action reads it.
        if !matches!(answer, Answer::Busy) || chosen.is_some() {
            for (name, value) in &step.set {
                let value = match value {
                    SetValue::Value(v) => v.clone(),
                    SetValue::Template(t) => SqlValue::Text(self.words(step, t, &|_| None)),
                };
                Rc::make_mut(&mut self.state.captures).insert(name.clone(), value);
            }
        }
        let row_count = rows.as_ref().map_or(0, |r| r.rows.len());
        let error_text = error.as_ref().map(explain).unwrap_or_default();
        let (progress, extra) = match (&chosen, &step.kind, answer) {
            // A statement stopped by its instruction budget did not answer:
            // no handler of the design's applies, and the run does not
            // complete (a recursive query that never ends is a verdict).
            // So is a step that ran past what the whole run may spend.
            _ if crate::storage::run_budget_out().is_some() => self.stopped_by_run_budget(),
            _ if error.as_ref().is_some_and(is_interrupt) => self.finish_stopped(
                format!(
                    "ran a statement of more than {MAX_STATEMENT_INSTRUCTIONS} SQLite instructions, which was stopped: it may loop for ever"
                ),
                Some(Bound::Instructions),
            ),
            (Some(action), _, _) => self.apply(step, action, ctx),
            (None, StepKind::Crash, _) => {
                self.crash();
                self.state.over = Some(crate::sim::CRASHED);
                (
                    Progress::Finished {
                        outcome: Outcome::new(crate::sim::CRASHED),
                    },
                    None,
                )
            }
            (None, StepKind::LoseReply, _) => self.finish(Outcome::new("reply-lost")),
            (None, StepKind::Fail, _) => {
                self.finish_failed(format!("it fails at {}", quote(&step.name)))
            }
            // A stale snapshot in WAL mode cannot be waited out: SQLite's
            // busy handler is not even called; only a new transaction helps.
            (None, _, Answer::Busy) if error.as_ref().is_some_and(is_busy_snapshot) => {
                self.finish_failed(error_text.clone())
            }
            // BUSY waits by default: the attempt stays at this step.
            (None, _, Answer::Busy) => (Progress::Blocked, None),
            (None, _, Answer::Constraint | Answer::Error) => self.finish_failed(error_text.clone()),
            (None, _, _) => self.goto(step.next),
        };
        // A handler that built more than the run may hold is stopped too.
        let (progress, extra) = match progress {
            Progress::Failed { bound: Some(_), .. } => (progress, extra),
            _ if crate::storage::run_budget_out().is_some() => self.stopped_by_run_budget(),
            _ => (progress, extra),
        };
        if progress != Progress::Blocked {
            self.state.done_steps += 1;
        }
        let peers = ctx.peers;
        let extras = |name: &str| match name {
            "rows" => Some(row_count.to_string()),
            "because" => Some(Self::because(step, peers)),
            // A stale snapshot is refused whoever holds what: say so.
            "locks" if error.as_ref().is_some_and(is_busy_snapshot) => {
                Some("its snapshot is older than the last commit: SQLITE_BUSY_SNAPSHOT".to_string())
            }
            "locks" => Some(crate::sim::locks_held(peers)),
            // The lock a writer holds, by journal mode.
            "write lock" => Some(
                match super::journal_of(&self.instance.params) {
                    Journal::Rollback => "RESERVED",
                    Journal::Wal => "the WAL write lock",
                }
                .to_string(),
            ),
            _ => None,
        };
        let waiting = progress == Progress::Blocked && answer != Answer::Busy;
        let template = match &step.note {
            Some(NoteSpec::One(t)) => Some(t.as_str()),
            Some(NoteSpec::By(by)) => waiting
                .then(|| by.get("wait"))
                .flatten()
                .or_else(|| case.as_ref().and_then(|c| by.get(c)))
                .or_else(|| by.get(answer.word()))
                .or_else(|| by.get("ok"))
                .map(String::as_str),
            None => None,
        };
        if !ctx.narrate {
            // Nobody reads this step's words, SQL or rows: only move on.
            return report(None, Vec::new(), SqlResult::None, progress, String::new());
        }
        // What the trace shows of the statement's result.
        let result = match (&rows, &error) {
            (Some(rows), _) => SqlResult::Rows {
                columns: rows.columns.clone(),
                rows: rows.rows.clone(),
                changes: rows.changes,
            },
            (None, Some(e)) => SqlResult::from_result(&Err(Error::duplicate(e))),
            (None, None) => result,
        };
        let sql = sql.cloned();
        let blocked_by_busy = progress == Progress::Blocked && answer == Answer::Busy;
        // A single sentence tells what the step does when it works; an error
        // nobody handles is told as it is.
        let stale = chosen.is_none() && error.as_ref().is_some_and(is_busy_snapshot);
        let unhandled = !step.own_errors
            && (matches!(answer, Answer::Constraint | Answer::Error) || stale)
            && matches!(step.note, Some(NoteSpec::One(_)));
        let template = template.filter(|_| !unhandled);
        let mut note = match template {
            Some(template) if !blocked_by_busy => self.note_words(step, template, &extras),
            _ if blocked_by_busy => format!(
                "{label} got SQLITE_BUSY at \"{}\" ({}) and waits for a lock to be released",
                step.name,
                crate::sim::locks_held(ctx.peers)
            ),
            _ => {
                let what = match &result {
                    SqlResult::Rows { rows, .. } if rows.len() == 1 => "1 row".to_string(),
                    SqlResult::Rows { rows, .. } if !rows.is_empty() => {
                        format!("{} rows", rows.len())
                    }
                    SqlResult::Rows { changes, .. } if *changes > 0 => format!("{changes} changed"),
                    // A query that answered nothing (its `on.none` ran).
                    SqlResult::Rows { columns, .. } if !columns.is_empty() => "no row".into(),
                    SqlResult::Error { message, .. } => message.clone(),
                    SqlResult::None => match &step.kind {
                        StepKind::Crash => "its process dies: its locks vanish, its open transaction is left for recovery".into(),
                        StepKind::LoseReply => "its reply is lost: whatever it committed stays, but its client never hears the answer".into(),
                        _ => "done".into(),
                    },
                    _ => "ok".into(),
                };
                format!("{label} ran \"{}\": {what}", step.name)
            }
        };
        if stale {
            note = format!(
                "{label} ran \"{}\" and fails: {}",
                step.name,
                crate::storage::BUSY_SNAPSHOT
            );
        } else if let (Some(extra), None) = (extra, template) {
            note = format!("{note}; {label} {extra}");
        }
        report(sql, bound, result, progress, note)
    }

    fn phase(&self) -> &'static str {
        match self.state.over {
            Some(kind) => kind,
            None => self
                .steps()
                .get(self.state.pc)
                .map_or("running", |s| s.phase),
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        let mut h = crate::sim::state_hasher();
        self.state.pc.hash(&mut h);
        self.state.over.hash(&mut h);
        self.state.retries.hash(&mut h);
        if self.state.over.is_none() {
            let live = self
                .steps()
                .get(self.state.pc)
                .map_or(&[][..], |s| s.live.as_slice());
            // Both are sorted by name: one merge of the two.
            let mut live = live.iter().peekable();
            for (name, value) in self.state.captures.iter() {
                while live.next_if(|l| *l < name).is_some() {}
                if live.next_if(|l| *l == name).is_some() {
                    name.hash(&mut h);
                    hash_value(value, &mut h);
                }
            }
        }
        self.state.log.hash(&mut h);
        if let Some(crash) = &self.instance.crash {
            crash
                .after
                .saturating_sub(self.state.done_steps)
                .hash(&mut h);
        }
        state.write_u64(h.finish());
    }

    fn class(&self) -> u64 {
        self.instance.class
    }

    fn connections(&self) -> &[Option<Conn>] {
        &self.conns
    }

    fn crash(&mut self) {
        for conn in self.conns.iter_mut().flatten() {
            let _ = conn.kill();
        }
        for conn in &mut self.conns {
            *conn = None;
        }
        self.state.over = Some(crate::sim::CRASHED);
    }

    fn waits_for(&self) -> Option<usize> {
        self.instance.after
    }

    fn ready(&self, now: i64, _statuses: &[Status]) -> bool {
        now >= self.instance.not_before
    }

    fn save(&self) -> Option<Rc<dyn std::any::Any>> {
        // Each open transaction is kept as the work it did, with the lock
        // it holds: none, SHARED or RESERVED (a commit under way, or a
        // transaction holding more, may have written the database file).
        let mut state = self.state.clone();
        for (db, conn) in self.conns.iter().enumerate() {
            match conn {
                Some(conn) if conn.in_transaction() => {
                    let level = conn.lock_level();
                    if level > LockLevel::Reserved {
                        return None;
                    }
                    state.levels[db] = level;
                }
                _ => {
                    state.forget_work(db);
                    state.levels[db] = LockLevel::None;
                }
            }
        }
        Some(Rc::new(Saved {
            instance: Rc::clone(&self.instance),
            open: self.conns.iter().map(Option::is_some).collect(),
            state,
        }))
    }

    fn roll_back(&mut self, saved: &dyn std::any::Any) {
        let saved = saved
            .downcast_ref::<Saved>()
            .filter(|s| Rc::ptr_eq(&s.instance, &self.instance));
        for (db, slot) in self.conns.iter_mut().enumerate() {
            // The same transaction as the checkpoint's, nothing done since
            // (its work is the very list the checkpoint holds) and the same
            // lock: kept as it is, instead of rolled back and redone.
            let same = saved.is_some_and(|saved| {
                !saved.state.open_work[db].is_empty()
                    && Rc::ptr_eq(&saved.state.open_work[db], &self.state.open_work[db])
                    && slot.as_ref().is_some_and(|c| {
                        c.in_transaction() && c.lock_level() == saved.state.levels[db]
                    })
            });
            self.kept[db] = same;
            if !same && slot.as_ref().is_some_and(|c| c.roll_back().is_err()) {
                // It could not roll back: closing it does.
                *slot = None;
            }
        }
    }

    fn restore(&mut self, saved: &dyn std::any::Any, store: &Store) -> Result<bool> {
        let Some(saved) = saved.downcast_ref::<Saved>() else {
            return Ok(false);
        };
        if !Rc::ptr_eq(&saved.instance, &self.instance) {
            return Ok(false);
        }
        self.state.clone_from(&saved.state);
        for (db, &open) in saved.open.iter().enumerate() {
            match &self.conns[db] {
                Some(_) if self.kept[db] => {}
                Some(conn) if open => conn.forget_stale_cache()?,
                // The pool empties the cache of what it hands out.
                None if open => self.open(store, db)?,
                _ => self.conns[db] = None,
            }
        }
        Ok(true)
    }

    fn resume(&mut self, writers: bool) -> Result<()> {
        let InstanceKind::Program(steps) = &self.instance.kind else {
            return Ok(());
        };
        for (db, work) in self.state.open_work.iter().enumerate() {
            let writer = self.state.levels[db] == LockLevel::Reserved;
            if work.is_empty() || writer != writers || self.kept[db] {
                continue;
            }
            let conn = self.conns[db]
                .as_ref()
                .ok_or_else(|| Error::Defect("a transaction to redo has no connection".into()))?;
            for (index, values) in work.iter() {
                let Some(StepKind::Sql(sql)) = steps.get(*index).map(|s| &s.kind) else {
                    return Err(Error::Defect(
                        "a transaction to redo names no statement".into(),
                    ));
                };
                // Its errors (BUSY on a commit, a constraint) are the ones
                // it met the first time; the run's key tells if not.
                let _ = with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                    conn.execute_discarding(sql, values)
                });
            }
        }
        Ok(())
    }
}

/// A program attempt's state between steps, without its connections (see
/// [`Attempt::save`]).
struct Saved {
    instance: Rc<Instance>,
    open: Vec<bool>,
    state: AttemptState,
}

/// The virtual clock: each step advances time by its tick, up to its end;
/// it may not pass its hold time while the attempt it holds for runs (a
/// relay's longest redelivery delay).
struct ClockAttempt {
    instance: Rc<Instance>,
}

impl ClockAttempt {
    fn parts(&self) -> (i64, i64, Option<(i64, usize)>) {
        match self.instance.kind {
            InstanceKind::Clock { tick, until, hold } => (tick, until, hold),
            InstanceKind::Program(_) => (1, 0, None),
        }
    }
}

impl Attempt for ClockAttempt {
    fn label(&self) -> &str {
        &self.instance.label
    }

    fn phase(&self) -> &'static str {
        "ticking"
    }

    fn hash_state(&self, _state: &mut dyn Hasher) {}

    fn class(&self) -> u64 {
        self.instance.class
    }

    fn connections(&self) -> &[Option<Conn>] {
        &[]
    }

    fn crash(&mut self) {}

    fn can_crash(&self) -> bool {
        false
    }

    fn save(&self) -> Option<Rc<dyn std::any::Any>> {
        // A clock keeps no state of its own: the run keeps the time.
        Some(Rc::new(Rc::clone(&self.instance)))
    }

    fn restore(&mut self, saved: &dyn std::any::Any, _store: &Store) -> Result<bool> {
        Ok(saved
            .downcast_ref::<Rc<Instance>>()
            .is_some_and(|instance| Rc::ptr_eq(instance, &self.instance)))
    }

    fn ready(&self, now: i64, statuses: &[Status]) -> bool {
        let (tick, until, hold) = self.parts();
        let next = now + tick;
        let held = hold.is_some_and(|(at, holder)| {
            next > at && !statuses.get(holder).is_some_and(Status::is_over)
        });
        next <= until && !held
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let (tick, until, _) = self.parts();
        let now = ctx.now() + tick;
        ctx.clock.set(now);
        let progress = if now + tick > until {
            Progress::Finished {
                outcome: Outcome::with_result("stopped", now.to_string()),
            }
        } else {
            Progress::Progressed
        };
        StepReport {
            database: None,
            name: format!("tick to t={now}"),
            sql: None,
            params: vec![],
            result: SqlResult::None,
            progress,
            note: format!("time passes: t={now}"),
        }
    }
}

/// An error in words; an interrupted or refused statement, or a stale WAL
/// snapshot, says why.
fn explain(error: &Error) -> String {
    if let Some(sentence) = crate::storage::refusal(error) {
        sentence
    } else if is_busy_snapshot(error) {
        crate::storage::BUSY_SNAPSHOT.to_string()
    } else if is_interrupt(error) {
        format!(
            "the statement ran more than {MAX_STATEMENT_INSTRUCTIONS} SQLite instructions and was stopped; it may loop for ever"
        )
    } else {
        error.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::Evaluator;

    /// A result is kept only for an expression that cannot call a function
    /// or read the clock; text in quotes says nothing either way, and a
    /// comment (which could hide a quote) makes it not kept.
    #[test]
    fn only_expressions_of_their_values_are_kept() {
        for pure in [
            ":key <> ''",
            "CASE :profile WHEN 'stripe' THEN '402 card_declined (stored)' ELSE 'ok' END",
            r#"'{"quantity":' || :quantity || '}'"#,
            r#""odd(name" = 1"#,
            "[odd(name] = 1",
        ] {
            assert!(Evaluator::pure(pure), "{pure}");
        }
        for impure in [
            "random() > 0",
            ":a + (SELECT 1)",
            "'(' || random()",
            "CURRENT_TIMESTAMP",
            "'current_date'",
            ":a -- it's\n + random()",
            ":a /* it's */ + random()",
            "'it''s' || abs(:a)",
        ] {
            assert!(!Evaluator::pure(impure), "{impure}");
        }
    }
}
