//! Scenarios as data: a scenario file a person writes, and the engine that
//! runs it.
//!
//! The file is TOML: SQL goes in multi-line strings without escaping,
//! comments are `#`, and a mistake is reported at its line and column. A
//! file declares its databases (schema and seed rows), its parameters (the
//! same declarations as the built-ins', [`crate::params::Param`]), its
//! attempts (each a program of steps on its own connection, optionally
//! replicated N times), and its checks (SQL on the final state with the
//! expected answer, and conditions on the attempts' outcomes). See the
//! README's "Write your own scenario" for a walk-through and every field.
//!
//! This is the first slice of the format: the built-in catalog is not yet
//! written in it (see the README's status).

mod decode;
mod limits;
mod program;
mod sql;

use std::collections::BTreeMap;

use decode::{declaration, Decode};
use indexmap::IndexMap;
use serde_json::Value;

use crate::params::{self, Param, Params};
use crate::sim::Scenario;
use crate::storage::Journal;
use crate::{Error, Result};

pub use limits::*;
pub use program::FileScenario;
pub use sql::SqlMistake;

/// The parameter every scenario takes: its journal mode.
pub const JOURNAL_PARAM: &str = "journal";

/// What [`JOURNAL_PARAM`] changes, for people.
pub const JOURNAL_MEANING: &str = "the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer";

/// The journal mode parameter values select (the default if none does).
pub fn journal_of(values: &serde_json::Map<String, Value>) -> Journal {
    values
        .get(JOURNAL_PARAM)
        .and_then(Value::as_str)
        .and_then(Journal::parse)
        .unwrap_or_default()
}

/// Where the names a scenario file gives lead: the libraries it includes
/// (`include`) and the scenarios it runs before its attempts (`before`).
/// The catalog implements it for the built-ins
/// (`crate::scenarios::CATALOG`); the format itself knows no catalog.
pub trait Sources {
    /// Library `name`'s source text.
    fn library(&self, name: &str) -> Option<&'static str>;
    /// Every library's name, as a mistake names them.
    fn library_names(&self) -> Vec<&'static str>;
    /// Whether there is a scenario `id`.
    fn has_scenario(&self, id: &str) -> bool;
    /// Scenario `id`'s file, parsed.
    fn scenario(&self, id: &str) -> Option<std::rc::Rc<File>>;
}

/// The sources a file was parsed with: they last as long as the program
/// (a file keeps them to build what it runs `before`), and a file may be
/// built on any thread.
pub type SourcesRef = &'static (dyn Sources + Sync);

/// A scenario a file runs before its attempts (`before`): its id, and the
/// sources that have it, once the file is parsed.
#[derive(Clone)]
pub struct Before {
    /// The scenario's id, as the file names it.
    pub id: String,
    /// The sources that have it; `None` before parsing, or when none has.
    found: Option<SourcesRef>,
}

impl std::fmt::Debug for Before {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Before")
            .field("id", &self.id)
            .field("found", &self.found.is_some())
            .finish()
    }
}

impl Before {
    /// The scenario, built with its defaults.
    pub(crate) fn build(&self) -> Result<FileScenario> {
        let file = self
            .found
            .and_then(|sources| sources.scenario(&self.id))
            .ok_or_else(|| {
                Error::invalid(
                    "scenario",
                    format!(
                        "before names {}, which is not a built-in scenario",
                        params::quote(&self.id)
                    ),
                )
            })?;
        let params = Params::defaults(&file.declared_params()?);
        FileScenario::new(file, params)
    }
}

impl decode::Decode for Before {
    fn expected() -> &'static str {
        String::expected()
    }
    fn decode(value: &decode::Value<'_>) -> decode::Result<Self> {
        Ok(Before {
            id: String::decode(value)?,
            found: None,
        })
    }
}

declaration! {
    /// A scenario file, as written.
    #[derive(Debug, Clone)]
    pub struct File {
        /// A short id (letters, digits, dashes); the file name when absent.
        pub id: Option<String> = "id" (opt),
        /// The title.
        pub title: String = "title" (req),
        /// What the scenario shows, in a few sentences.
        pub explanation: String = "explanation" (default),
        /// Whether the design is meant to fail under some schedule.
        pub fails: bool = "fails" (default),
        /// Whether it may run although SQLite cannot prepare some of its
        /// statements (a step whose error is the point): see [`sql`].
        pub allow_sql_errors: bool = "allow-sql-errors" (default),
        /// The journal mode it runs in unless the `journal` parameter says
        /// otherwise: `rollback` (the default) or `wal`.
        pub journal: Option<String> = "journal" (opt),
        /// What changes in WAL mode, in a sentence or two (how a broken design
        /// fails there, when it is not as in rollback mode).
        pub wal_note: String = "wal-note" (default),
        /// The pattern it belongs to (`idempotency`, `outbox`, `inbox`, `custom`).
        pub pattern: Option<String> = "pattern" (opt),
        /// The reference program it reproduces, if any.
        pub suite: Option<String> = "suite" (opt),
        /// Whether it is one of the reference program's checks.
        pub reference: bool = "reference" (default),
        /// Libraries of the built-in catalog whose parameters, databases and
        /// programs this file uses (`idempotency`, `outbox`).
        pub include: Vec<String> = "include" (default),
        /// Built-in scenarios whose attempts run, in order and with their
        /// defaults, on the databases before this one's attempts start (a
        /// reference check that builds on the earlier ones).
        pub before: Vec<Before> = "before" (default),
        /// The parameters, by name, in the order people see them.
        pub params: IndexMap<String, ParamSpec> = "params" (default),
        /// The databases, by name (the file is `NAME.db`).
        pub databases: BTreeMap<String, Database> = "databases" (default),
        /// Programs attempts share, by name.
        pub programs: BTreeMap<String, ProgramSpec> = "programs" (default),
        /// Values each attempt computes once, before the run: SQL expressions
        /// over the parameters and the attempt's values (`:quantity`), in order.
        pub lets: IndexMap<String, String> = "let" (default),
        /// Named SQL queries checks use (`query = "counts"`).
        pub queries: BTreeMap<String, String> = "queries" (default),
        /// Values any program binds when neither the attempt nor a parameter
        /// gives them (`fail = 0`).
        pub defaults: toml::Table = "defaults" (default),
        /// What every step does on a `busy`, `constraint` or `error` it does not
        /// handle itself (`error = { finish = "error", result = "{error}" }`).
        pub on: On = "on" (default),
        /// The attempts, in order (the first is A).
        pub attempts: Vec<AttemptSpec> = "attempts" (req),
        /// The checks after every run.
        pub checks: Vec<CheckSpec> = "checks" (default),
        /// SQL checks that must hold on the committed state after every step.
        pub invariants: Vec<CheckSpec> = "invariants" (default),
    }
}

declaration! {
    /// A library of the built-in catalog: declarations scenario files include.
    #[derive(Debug, Clone)]
    pub struct Library {
        /// Parameter declarations a file takes by naming them (`params.key = {}`).
        pub params: IndexMap<String, ParamSpec> = "params" (default),
        /// Databases every including file has.
        pub databases: BTreeMap<String, Database> = "databases" (default),
        /// Programs every including file may run.
        pub programs: BTreeMap<String, ProgramSpec> = "programs" (default),
        /// Values every attempt computes (see [`File::lets`]).
        pub lets: IndexMap<String, String> = "let" (default),
        /// Named SQL queries for checks.
        pub queries: BTreeMap<String, String> = "queries" (default),
        /// Values programs bind when nothing else gives them.
        pub defaults: toml::Table = "defaults" (default),
        /// What steps do on results they do not handle (see [`File::on`]).
        pub on: On = "on" (default),
    }
}

declaration! {
    /// A parameter's declaration in a file. A file that includes a library may
    /// name a parameter the library declares and give only what it changes
    /// (`params.quantity = { default = 3 }`).
    #[derive(Debug, Clone, Default)]
    pub struct ParamSpec {
        /// `whole`, `text` or `choice`.
        pub kind: Option<String> = "type" (opt),
        /// The default.
        pub default: Option<toml::Value> = "default" (opt),
        /// One line on what it changes.
        pub meaning: Option<String> = "meaning" (opt),
        /// Whole numbers: the smallest value.
        pub min: Option<i64> = "min" (opt),
        /// Whole numbers: the largest value.
        pub max: Option<i64> = "max" (opt),
        /// Whole numbers: values are multiples of this.
        pub step: Option<i64> = "step" (opt),
        /// Whole numbers: the unit, for people ("seconds").
        pub unit: Option<String> = "unit" (opt),
        /// Whole numbers: the values worth trying, offered first.
        pub marks: Option<Vec<i64>> = "marks" (opt),
        /// Text: the most characters.
        pub max_chars: Option<usize> = "max-chars" (opt),
        /// Choices: the names.
        pub options: Option<Vec<String>> = "options" (opt),
    }
}

declaration! {
    /// A database of the scenario.
    #[derive(Debug, Clone)]
    pub struct Database {
        /// The schema, as SQL statements.
        pub schema: String = "schema" (default),
        /// Rows to start from, as SQL statements.
        pub seed: String = "seed" (default),
        /// PRAGMAs every attempt's connection runs when it opens (not a step):
        /// `PRAGMA foreign_keys = ON`, which SQLite keeps per connection.
        pub pragmas: String = "pragmas" (default),
    }
}

declaration! {
    /// A program: steps attempts run.
    #[derive(Debug, Clone)]
    pub struct ProgramSpec {
        /// The steps.
        pub steps: Vec<StepSpec> = "steps" (req),
    }
}

declaration! {
    /// An attempt: a program of steps on its own connection(s).
    #[derive(Debug, Clone)]
    pub struct AttemptSpec {
        /// A word for what the attempt is ("client", "relay").
        pub role: Option<String> = "role" (opt),
        /// Its label in traces ("relay", "P"); a letter by its position when absent.
        pub label: Option<String> = "label" (opt),
        /// How many copies race: a number, or the name of a whole parameter.
        pub replicas: Option<toml::Value> = "replicas" (opt),
        /// The database its steps use unless a step names another (the only
        /// one, when there is one).
        pub database: Option<String> = "database" (opt),
        /// Starts only once the attempt with this role or label is over (a
        /// client's retry that starts once its first request ended); that
        /// attempt comes earlier in the file and is not replicated.
        pub after: Option<String> = "after" (opt),
        /// The program, written here…
        pub steps: Vec<StepSpec> = "steps" (default),
        /// …or one of the file's (or an included library's) programs.
        pub program: Option<String> = "program" (opt),
        /// Values the program binds by name (`:key`), for this attempt: a
        /// number or text, or `":param"` for a parameter's value.
        pub with: toml::Table = "with" (default),
        /// The process dies after this many of its own steps.
        pub crash_after: Option<CrashSpec> = "crash-after" (opt),
        /// It takes no step before the virtual clock reaches this (a number,
        /// or an SQL expression over the parameters such as `":window"`).
        pub not_before: Option<toml::Value> = "not-before" (opt),
        /// Or it is the virtual clock itself.
        pub clock: Option<ClockSpec> = "clock" (opt),
    }
}

declaration! {
    /// A crash after a number of the attempt's own steps.
    #[derive(Debug, Clone)]
    pub struct CrashSpec {
        /// After how many steps: a number, or the parameter that says (a
        /// whole number, or a choice of numbers and `none`).
        pub steps: toml::Value = "steps" (req),
        /// The crash step's name.
        pub name: Option<String> = "name" (opt),
        /// The crashed outcome's result (an exit code).
        pub result: Option<String> = "result" (opt),
        /// The sentence for the trace.
        pub note: Option<String> = "note" (opt),
    }
}

declaration! {
    /// The virtual clock as an attempt: each of its steps advances time.
    #[derive(Debug, Clone)]
    pub struct ClockSpec {
        /// Seconds per step.
        pub tick: i64 = "tick" (req),
        /// It stops at this time (a number or an SQL expression over the parameters).
        pub until: toml::Value = "until" (req),
        /// It may not pass this time…
        pub hold_at: Option<toml::Value> = "hold-at" (opt),
        /// …while the attempt with this label or role is not over.
        pub hold_for: Option<String> = "hold-for" (opt),
    }
}

/// A step's capture: one name for the first column, or a name per column.
#[derive(Debug, Clone)]
pub enum Capture {
    /// The first column.
    One(String),
    /// The columns in order.
    Many(Vec<String>),
}

/// A step's sentence: one, or one per result (`rows`, `none`, `ok`, a case's value).
#[derive(Debug, Clone)]
pub enum NoteSpec {
    /// One sentence.
    One(String),
    /// By result.
    By(BTreeMap<String, String>),
}

declaration! {
    /// Why a step saw what it saw: the first entry whose phases some other
    /// attempt is in fills `{because}`.
    #[derive(Debug, Clone)]
    pub struct Because {
        /// Phases (or, for attempts that are over, outcomes) of other attempts;
        /// none: always (the last entry, what to say otherwise).
        pub peers_in: Vec<String> = "peers-in" (default),
        /// The words; `{peers}` names those attempts.
        pub say: String = "say" (req),
    }
}

declaration! {
    /// One step: a SQL statement or an action, and what to do with its result.
    #[derive(Debug, Clone)]
    pub struct StepSpec {
        /// The step's name (what a trace and a `goto` call it).
        pub name: String = "name" (default),
        /// Another name for `goto`, where several steps share a name.
        pub id: Option<String> = "id" (opt),
        /// The step runs only for attempts where this SQL expression over the
        /// parameters and the attempt's values is true; otherwise it is not
        /// there (evaluated once, before the run).
        pub when: Option<String> = "when" (opt),
        /// One SQL statement; `:name` binds a capture, a value, a parameter,
        /// or `:attempt` (0 for A), `:label` ("A"), `:now` (the virtual clock).
        pub sql: Option<String> = "sql" (opt),
        /// Or an action: `crash` (the process dies here), `lose-reply` (the
        /// attempt ends and its client never hears the answer), `work` (it
        /// works outside the database: a handler, a call), `fail` (it fails
        /// here: the attempt fails unless `on.ok` says otherwise).
        pub action: Option<String> = "action" (opt),
        /// The database of the statement (the attempt's, when absent).
        pub database: Option<String> = "database" (opt),
        /// Keep columns of the first row under these names (NULL if no row).
        pub capture: Option<Capture> = "capture" (opt),
        /// Values to keep once the step is done (`{ kind = "error" }`).
        pub set: toml::Table = "set" (default),
        /// The sentence for the trace; `{name}` inserts a capture, value or
        /// parameter, `{label}` the attempt, `{rows}` the row count,
        /// `{because}` the first matching `because`.
        pub note: Option<NoteSpec> = "note" (opt),
        /// What the attempt is doing while this is its next step, for the
        /// others' `because`.
        pub phase: Option<String> = "phase" (opt),
        /// Explanations of what the step saw, by what the others are doing.
        pub because: Vec<Because> = "because" (default),
        /// What to do on each result.
        pub on: On = "on" (default),
        /// Or: the steps of another program, here (`{name}` in their names is
        /// filled from `with`).
        pub use_program: Option<String> = "use" (opt),
        /// Values for the used program's steps.
        pub with: toml::Table = "with" (default),
        /// With `use`: the used program's finishes do not end the attempt: they
        /// add this to its log (`{outcome}` is the outcome they would have
        /// had) and the attempt goes on after the `use`.
        pub log: Option<String> = "log" (opt),
    }
}

declaration! {
    /// What a step does on each kind of result. Absent: `ok`, `rows` and
    /// `none` go on to the next step, `busy` waits for the lock, `constraint`
    /// and `error` fail the attempt.
    #[derive(Debug, Clone, Default)]
    pub struct On {
        /// The statement succeeded (when neither `rows` nor `none` is given).
        pub ok: Option<ActionSpec> = "ok" (opt),
        /// It returned at least one row.
        pub rows: Option<ActionSpec> = "rows" (opt),
        /// It returned no row.
        pub none: Option<ActionSpec> = "none" (opt),
        /// The first column of the first row is one of these values.
        pub cases: BTreeMap<String, ActionSpec> = "cases" (default),
        /// SQLite answered BUSY.
        pub busy: Option<ActionSpec> = "busy" (opt),
        /// A constraint failed (UNIQUE, CHECK, FOREIGN KEY, NOT NULL).
        pub constraint: Option<ActionSpec> = "constraint" (opt),
        /// Any other error.
        pub error: Option<ActionSpec> = "error" (opt),
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionSpec {
    /// `"next"`, `"wait"` (busy only: stay until the lock is free), or
    /// `"retry"` (roll back and start the program again, at most 3 times).
    Word(String),
    /// `{ goto = "step" }`, `{ finish = "outcome", result = ":capture" }`
    /// or `{ fail = "why" }`.
    Table(ActionTable),
}

impl Decode for Capture {
    fn decode(value: &decode::Value<'_>) -> decode::Result<Self> {
        match value.get_ref() {
            toml::de::DeValue::String(_) => String::decode(value).map(Capture::One),
            toml::de::DeValue::Array(_) => Vec::decode(value).map(Capture::Many),
            _ => Err(decode::invalid_type(
                value,
                "a column's name or an array of names",
            )),
        }
    }
}

impl Decode for NoteSpec {
    fn decode(value: &decode::Value<'_>) -> decode::Result<Self> {
        match value.get_ref() {
            toml::de::DeValue::String(_) => String::decode(value).map(NoteSpec::One),
            toml::de::DeValue::Table(_) => BTreeMap::decode(value).map(NoteSpec::By),
            _ => Err(decode::invalid_type(
                value,
                "a sentence or a table of sentences by result",
            )),
        }
    }
}

impl Decode for ActionSpec {
    fn decode(value: &decode::Value<'_>) -> decode::Result<Self> {
        match value.get_ref() {
            toml::de::DeValue::String(_) => String::decode(value).map(ActionSpec::Word),
            toml::de::DeValue::Table(_) => ActionTable::decode(value).map(ActionSpec::Table),
            _ => Err(decode::invalid_type(value, "an action: a word or a table")),
        }
    }
}

declaration! {
    /// The table form of an action.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ActionTable {
        /// Jump to the step of this name (the first one there is).
        pub goto: Option<String> = "goto" (opt),
        /// End the attempt with this outcome.
        pub finish: Option<String> = "finish" (opt),
        /// The outcome's result: `:capture`, or text where `{name}` is filled in.
        pub result: Option<String> = "result" (opt),
        /// Fail the attempt with this reason.
        pub fail: Option<String> = "fail" (opt),
        /// With `goto`: then back off until no other attempt holds a write lock.
        pub back_off: bool = "back-off" (default),
        /// Instead, stay at this step while an attempt with this role or
        /// label is not over (a relay that polls while producers write).
        pub wait_while: Option<String> = "wait-while" (opt),
        /// Add this text to the attempt's log (`{log}` in results and notes).
        pub log: Option<String> = "log" (opt),
    }
}

declaration! {
    /// A check after a run.
    #[derive(Debug, Clone)]
    pub struct CheckSpec {
        /// What it checks, for people; `{name}` inserts a parameter. Derived
        /// from what it checks when absent ([`CheckSpec::derived_name`]).
        pub name: String = "name" (default),
        /// The check applies only when this SQL expression over the parameters is true.
        pub when: Option<String> = "when" (opt),
        /// SQL on the committed state (or `query`, one the file names)…
        pub sql: Option<String> = "sql" (opt),
        /// A named query instead of `sql`.
        pub query: Option<String> = "query" (opt),
        /// …of this database (the only one, when there is one)…
        pub database: Option<String> = "database" (opt),
        /// …as it was when the attempt of this label was over…
        pub after: Option<String> = "after" (opt),
        /// …must answer this: a value (one row, one column) or an array of rows.
        pub expect: Option<toml::Value> = "expect" (opt),
        /// Or: the attempt of this label…
        pub attempt: Option<String> = "attempt" (opt),
        /// …ended with this outcome (with `attempt`); or how many attempts
        /// ended with it (with `count`)…
        pub outcome: Option<String> = "outcome" (opt),
        /// …and this result (with `attempt`).
        pub result: Option<String> = "result" (opt),
        /// How many attempts ended with `outcome`.
        pub count: Option<toml::Value> = "count" (opt),
        /// Or: every attempt that ended with one of these outcomes got the same result.
        pub same_result: Option<Vec<String>> = "same-result" (opt),
    }
}

impl CheckSpec {
    /// A name for a check that gives none: what it checks, in short.
    fn derived_name(&self) -> String {
        let short = |text: &str| {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            match words.char_indices().nth(60) {
                Some((at, _)) => format!("{}…", &words[..at]),
                None => words,
            }
        };
        fn words(v: &toml::Value) -> String {
            match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Array(items) => format!(
                    "[{}]",
                    items.iter().map(words).collect::<Vec<_>>().join(", ")
                ),
                _ => "…".to_string(),
            }
        }
        let (expect, count) = (words, words);
        match (
            &self.sql,
            &self.query,
            &self.outcome,
            &self.attempt,
            &self.same_result,
        ) {
            (Some(sql), ..) | (None, Some(sql), ..) => {
                let of = self
                    .database
                    .as_ref()
                    .map(|db| format!(" (of {db})"))
                    .unwrap_or_default();
                match &self.expect {
                    Some(expected) => format!("{} is {}{of}", short(sql), expect(expected)),
                    None => format!("{}{of}", short(sql)),
                }
            }
            (None, None, Some(outcome), None, _) => match &self.count {
                Some(toml::Value::Integer(1)) => format!("1 attempt ends with {outcome}"),
                Some(n) => format!("{} attempts end with {outcome}", count(n)),
                None => format!("attempts end with {outcome}"),
            },
            (None, None, outcome, Some(attempt), _) => {
                let outcome = outcome.as_deref().unwrap_or("its outcome");
                match &self.result {
                    Some(result) => format!("{attempt} ends with {outcome}, result {result}"),
                    None => format!("{attempt} ends with {outcome}"),
                }
            }
            (None, None, None, None, Some(outcomes)) => {
                format!("the same result for {}", outcomes.join(", "))
            }
            _ => "a check with nothing to check".to_string(),
        }
    }
}

/// Where in the source a problem is, and what it is.
fn at(source: &str, span: Option<std::ops::Range<usize>>, message: &str) -> Error {
    let (line, column) = span.map_or((1, 1), |span| sql::line_and_column(source, span.start));
    Error::invalid(
        "scenario",
        format!("line {line}, column {column}: {}", message.trim()),
    )
}

/// Where a problem found after parsing is: the first place in the source
/// of a name the message quotes, the last quoted first (in "step "read":
/// goes to "nowhere"", the missing target).
fn subject_span(source: &str, message: &str) -> Option<std::ops::Range<usize>> {
    // "[[checks]] number 2": the second such table.
    if let Some((table, rest)) = message.split_once("]] number ") {
        let header = format!("{}]]", &table[table.rfind("[[")?..]);
        let n: usize = rest
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        let at = source.match_indices(&header).nth(n.checked_sub(1)?)?.0;
        return Some(at..at + header.len());
    }
    let quoted: Vec<&str> = message.split('"').skip(1).step_by(2).collect();
    quoted
        .iter()
        .rev()
        .filter(|q| !q.is_empty() && !q.contains('…') && !q.contains('\\'))
        .find_map(|q| {
            let needle = format!("\"{q}\"");
            source
                .find(&needle)
                .map(|at| at + 1)
                .or_else(|| source.find(q))
                .map(|at| at..at + q.len())
        })
}

/// Parses and checks a scenario source; `fallback_id` names it when the
/// file gives no id. A statement SQLite cannot prepare is a mistake, at its
/// line and column, unless the file says `allow-sql-errors = true`.
pub fn parse(source: &str, fallback_id: &str, sources: SourcesRef) -> Result<File> {
    let (file, mistakes) = parse_listing_sql(source, fallback_id, sources)?;
    let refused = mistakes
        .iter()
        .find(|m| m.template)
        .or(match file.allow_sql_errors {
            true => None,
            false => mistakes.first(),
        });
    match refused {
        Some(first) => {
            let more = match mistakes.len() {
                1 => String::new(),
                n => format!(
                    " (and {} more SQL error{})",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ),
            };
            Err(Error::invalid("scenario", format!("{first}{more}")))
        }
        None => Ok(file),
    }
}

/// As [`parse`], returning the file with every statement SQLite cannot
/// prepare at the file's defaults (whether or not the file allows them).
pub fn parse_listing_sql(
    source: &str,
    fallback_id: &str,
    sources: SourcesRef,
) -> Result<(File, Vec<SqlMistake>)> {
    let (file, scenario) = parse_file(source, fallback_id, sources, true)?;
    // The trial scenario is dropped here, before the file is unshared.
    let mistakes = match scenario {
        Some(scenario) => scenario.sql_mistakes(source)?,
        None => Vec::new(),
    };
    Ok((file.unshared(), mistakes))
}

/// As [`parse`], without compiling the file at its defaults: for the
/// built-in files, which the tests compile at every pair of values, and
/// which every page reads at its start.
pub fn parse_builtin(source: &str, id: &str, sources: SourcesRef) -> Result<File> {
    Ok(parse_file(source, id, sources, false)?.0.unshared())
}

/// The file, shared with its trial scenario at its defaults when `trial`.
struct Parsed(std::rc::Rc<File>);

impl Parsed {
    /// The file, once its trial scenario is dropped (it is ours again, not
    /// copied).
    fn unshared(self) -> File {
        std::rc::Rc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }
}

fn parse_file(
    source: &str,
    fallback_id: &str,
    sources: SourcesRef,
    trial: bool,
) -> Result<(Parsed, Option<FileScenario>)> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(Error::invalid(
            "scenario",
            format!(
                "the source is {} bytes; at most {MAX_SOURCE_BYTES} are accepted",
                source.len()
            ),
        ));
    }
    let mut file: File =
        decode::from_str(source).map_err(|e| at(source, Some(e.span), &e.message))?;
    if file.id.is_none() {
        file.id = Some(fallback_id.to_string());
    }
    let located = |e: Error| match e {
        Error::InvalidInput { reason, .. } => at(source, subject_span(source, &reason), &reason),
        other => other,
    };
    file.merge_libraries(sources).map_err(located)?;
    for prior in file.before.iter_mut() {
        prior.found = sources.has_scenario(&prior.id).then_some(sources);
    }
    for check in file.checks.iter_mut().chain(file.invariants.iter_mut()) {
        if check.name.trim().is_empty() {
            check.name = check.derived_name();
        }
    }
    validate(&file).map_err(located)?;
    // Compiling with the defaults finds what only the whole program shows
    // (a `goto` to no step, a `when` that is not SQL).
    let declared = file.declared_params().map_err(located)?;
    let file = std::rc::Rc::new(file);
    if !trial {
        return Ok((Parsed(file), None));
    }
    let scenario = FileScenario::new(std::rc::Rc::clone(&file), Params::defaults(&declared))
        .map_err(located)?;
    Ok((Parsed(file), Some(scenario)))
}

impl File {
    /// The file's id.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or("scenario")
    }

    /// Completes the file with the libraries it includes: the parameters it
    /// names get the library's declaration for what they leave out; the
    /// libraries' databases and programs are added where the file has none
    /// of that name.
    fn merge_libraries(&mut self, sources: &dyn Sources) -> Result<()> {
        for name in self.include.clone() {
            if sources.library(&name).is_none() {
                return Err(Error::invalid(
                    "scenario",
                    format!(
                        "include names {}, which is not a library; use {}",
                        params::quote(&name),
                        sources.library_names().join(", ")
                    ),
                ));
            }
            let library = library(sources, &name)?;
            for (param, spec) in self.params.iter_mut() {
                if let Some(base) = library.params.get(param) {
                    spec.fill_from(base);
                }
            }
            for (db, spec) in library.databases {
                let mine = self.databases.entry(db).or_insert_with(|| spec.clone());
                if mine.schema.is_empty() {
                    mine.schema = spec.schema.clone();
                }
                if mine.pragmas.is_empty() {
                    mine.pragmas = spec.pragmas.clone();
                }
            }
            for (program, spec) in library.programs {
                self.programs.entry(program).or_insert(spec);
            }
            let mut lets = library.lets;
            for (name, expression) in std::mem::take(&mut self.lets) {
                lets.insert(name, expression);
            }
            self.lets = lets;
            for (name, sql) in library.queries {
                self.queries.entry(name).or_insert(sql);
            }
            for (name, value) in library.defaults {
                self.defaults.entry(name).or_insert(value);
            }
            let on = &mut self.on;
            on.busy = on.busy.take().or(library.on.busy);
            on.constraint = on.constraint.take().or(library.on.constraint);
            on.error = on.error.take().or(library.on.error);
        }
        Ok(())
    }

    /// The parameter declarations, as the engine's [`Param`]s, and last the
    /// engine's own: [`JOURNAL_PARAM`], which every scenario takes.
    pub fn declared_params(&self) -> Result<Vec<Param>> {
        let mut declared = self
            .params
            .iter()
            .map(|(name, spec)| {
                if name == JOURNAL_PARAM {
                    return Err(Error::invalid(
                        "scenario",
                        format!(
                            "{} is the engine's parameter, which every scenario takes; set its default with journal = \"wal\"",
                            params::quote(name)
                        ),
                    ));
                }
                spec.to_param(name)
            })
            .collect::<Result<Vec<Param>>>()?;
        let default = match self.journal.as_deref() {
            None => Journal::default(),
            Some(name) => Journal::parse(name).ok_or_else(|| {
                Error::invalid(
                    "scenario",
                    format!(
                        "journal = {} is not a journal mode; use {}",
                        params::quote(name),
                        Journal::NAMES.join(" or ")
                    ),
                )
            })?,
        };
        declared.push(Param::choice(
            JOURNAL_PARAM,
            Journal::NAMES,
            default.name(),
            JOURNAL_MEANING,
        ));
        Ok(declared)
    }

    /// The journal mode `params` select.
    pub fn journal(params: &Params) -> Journal {
        journal_of(params.values())
    }

    /// Builds the scenario with parameters given as JSON (null: defaults).
    pub fn build(&self, given: &Value) -> Result<Box<dyn Scenario>> {
        let declared = self.declared_params()?;
        let params = Params::parse(self.id(), &declared, given)?;
        Ok(Box::new(FileScenario::new(
            std::rc::Rc::new(self.clone()),
            params,
        )?))
    }

    /// The steps of attempt `spec`: its own, or its program's.
    pub(crate) fn steps_of<'a>(&'a self, spec: &'a AttemptSpec) -> &'a [StepSpec] {
        match &spec.program {
            Some(name) => self
                .programs
                .get(name)
                .map_or(&[][..], |p| p.steps.as_slice()),
            None => &spec.steps,
        }
    }
}

/// Library `name` of `sources`, parsed once per thread for each source
/// text (a session's every request builds its attempt from it).
fn library(sources: &dyn Sources, name: &str) -> Result<Library> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static PARSED: RefCell<HashMap<&'static str, Library>> = RefCell::new(HashMap::new());
    }
    let source = sources
        .library(name)
        .ok_or_else(|| Error::invalid("library", format!("no library {}", params::quote(name))))?;
    if let Some(parsed) = PARSED.with(|p| p.borrow().get(source).cloned()) {
        return Ok(parsed);
    }
    let parsed: Library = decode::from_str(source)
        .map_err(|e| Error::invalid("library", format!("library {name}: {}", e.message)))?;
    PARSED.with(|p| p.borrow_mut().insert(source, parsed.clone()));
    Ok(parsed)
}

/// Creates library `name`'s databases (their schemas) in `store`.
pub fn setup_library(
    sources: &dyn Sources,
    store: &crate::storage::Store,
    name: &str,
) -> Result<()> {
    for (db, spec) in library(sources, name)?.databases {
        store
            .connect(&format!("{db}.db"), "setup")?
            .execute_batch(&spec.schema)?;
    }
    Ok(())
}

/// The PRAGMAs every connection to library `name`'s database `db` runs.
pub fn library_pragmas(sources: &dyn Sources, name: &str, db: &str) -> Result<String> {
    library(sources, name)?
        .databases
        .get(db)
        .map(|d| d.pragmas.clone())
        .ok_or_else(|| Error::invalid("library", format!("{name} has no database {db}")))
}

/// The schema of library `name`'s database `db`.
pub fn library_schema(sources: &dyn Sources, name: &str, db: &str) -> Result<String> {
    library(sources, name)?
        .databases
        .remove(db)
        .map(|d| d.schema)
        .ok_or_else(|| Error::invalid("library", format!("{name} has no database {db}")))
}

/// What library `name`'s `let`s come to for an attempt with these values
/// (the rules of a response profile, as a table).
pub fn library_values(
    sources: &dyn Sources,
    name: &str,
    with: toml::Table,
) -> Result<Vec<(String, crate::storage::SqlValue)>> {
    let scenario = alone(sources, name, "values", "alone", &with, MAX_ATTEMPT_STEPS)?;
    Ok(scenario.values_of(0))
}

/// A scenario of one attempt running library `name`'s `program` with `with`.
///
/// The file is built, merged with its library and validated once per
/// thread for each (library, program, names of the values); its attempt
/// takes each value from the parameter of the same name (`with.key =
/// ":key"`), so a session's every request only compiles the attempt.
fn alone(
    sources: &dyn Sources,
    name: &str,
    program: &str,
    label: &str,
    with: &toml::Table,
    max_steps: usize,
) -> Result<FileScenario> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    // The library by its source text (two sources may name two libraries
    // alike).
    type Key = (&'static str, String, Vec<String>);
    thread_local! {
        static TEMPLATES: RefCell<HashMap<Key, std::rc::Rc<File>>> = RefCell::new(HashMap::new());
    }
    let mut values = serde_json::Map::new();
    for (k, v) in with {
        let value = match v {
            toml::Value::Integer(i) => serde_json::Value::from(*i),
            toml::Value::String(s) => serde_json::Value::from(s.as_str()),
            _ => {
                return Err(Error::invalid(
                    "with",
                    format!("{k} is a whole number or text"),
                ))
            }
        };
        values.insert(k.clone(), value);
    }
    let source = sources
        .library(name)
        .ok_or_else(|| Error::invalid("library", format!("no library {}", params::quote(name))))?;
    let key: Key = (source, program.to_string(), with.keys().cloned().collect());
    let kept = TEMPLATES.with(|t| t.borrow().get(&key).cloned());
    let file = match kept {
        Some(file) => file,
        None => {
            let file = std::rc::Rc::new(alone_file(sources, name, program, with.keys())?);
            TEMPLATES.with(|t| t.borrow_mut().insert(key, std::rc::Rc::clone(&file)));
            file
        }
    };
    FileScenario::alone(file, Params::bound(values), label, max_steps)
}

/// The file of [`alone`]: one attempt whose values are parameters.
///
/// Written as TOML text and parsed as every file is (`decode` reads toml's
/// parsed tables, so text is the one way in; a session builds it once per
/// program and names, see `alone`).
fn alone_file<'a>(
    sources: &dyn Sources,
    name: &str,
    program: &str,
    names: impl Iterator<Item = &'a String>,
) -> Result<File> {
    // A TOML basic string: a JSON string is one (the same escapes). The
    // names here are the engine's own, but quoted properly all the same.
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    let lib = library(sources, name)?;
    let mut text = format!(
        "id = \"alone\"\ntitle = \"alone\"\ninclude = [{}]\n[[attempts]]\nlabel = \"alone\"\n",
        quoted(name)
    );
    if lib.programs.contains_key(program) {
        text.push_str(&format!("program = {}\n", quoted(program)));
    } else {
        // Only the values: one step that does nothing.
        text.push_str("steps = [{ name = \"values\", action = \"work\" }]\n");
    }
    let with: Vec<String> = names
        .map(|n| format!("{} = {}", quoted(n), quoted(&format!(":{n}"))))
        .collect();
    text.push_str(&format!("with = {{ {} }}\n", with.join(", ")));
    let mut file: File =
        decode::from_str(&text).map_err(|e| Error::invalid("scenario", e.message))?;
    file.merge_libraries(sources)?;
    validate(&file)?;
    Ok(file)
}

/// Runs library `name`'s `program` alone on `store` (whose databases the
/// library made), labelled `label`, with `with`, at virtual time `now`:
/// its outcome and every step's report.
// The library is its sources and its name (two arguments): the next step of
// the format's pipeline runs a library program without this door.
#[allow(clippy::too_many_arguments)]
pub fn run_alone(
    sources: &dyn Sources,
    store: &crate::storage::Store,
    name: &str,
    program: &str,
    label: &str,
    with: toml::Table,
    now: i64,
    max_steps: usize,
) -> Result<(crate::sim::Outcome, Vec<crate::sim::StepReport>)> {
    let scenario = alone(sources, name, program, label, &with, max_steps)?;
    let mut attempts = scenario.attempts()?;
    let attempt = attempts
        .first_mut()
        .ok_or_else(|| Error::Defect("no attempt".into()))?;
    crate::sim::run_alone(store, attempt.as_mut(), now, max_steps)
}

/// A `&'static str` for `text`: declarations are `'static` in the built-in
/// catalog. Each distinct text is kept once (interned), so parsing the same
/// file again, as an editor does on every change, keeps nothing new.
// The next slice makes declarations own their text (see the README status).
pub fn leak(text: &str) -> &'static str {
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

/// Interned lists of whole numbers (see [`leak`]).
fn leak_marks(marks: &[i64]) -> &'static [i64] {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static LISTS: RefCell<HashMap<Vec<i64>, &'static [i64]>> = RefCell::new(HashMap::new());
    }
    LISTS.with(|lists| {
        let mut lists = lists.borrow_mut();
        if let Some(existing) = lists.get(marks) {
            return *existing;
        }
        let kept: &'static [i64] = Box::leak(marks.to_vec().into_boxed_slice());
        lists.insert(marks.to_vec(), kept);
        kept
    })
}

impl ParamSpec {
    /// Takes what this declaration leaves out from `base`.
    fn fill_from(&mut self, base: &ParamSpec) {
        macro_rules! fill {
            ($($field:ident),*) => {$(
                if self.$field.is_none() {
                    self.$field = base.$field.clone();
                }
            )*};
        }
        fill!(kind, default, meaning, min, max, step, unit, marks, max_chars, options);
    }

    fn to_param(&self, name: &str) -> Result<Param> {
        let bad = |why: String| Error::invalid("params", format!("parameter {name}: {why}"));
        let meaning = leak(self.meaning.as_deref().unwrap_or_default());
        let name = leak(name);
        let default = self
            .default
            .as_ref()
            .ok_or_else(|| bad("give it a default".into()))?;
        match self.kind.as_deref().unwrap_or_default() {
            "whole" => {
                let default = default.as_integer().ok_or_else(|| {
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
                let step = self.step.unwrap_or(1);
                if step < 1 || default % step != 0 {
                    return Err(bad(format!(
                        "step must be a whole number from 1 that divides the default (got {step})"
                    )));
                }
                let mut param = Param::whole(name, (min, max), default, meaning);
                if step != 1 || self.unit.is_some() {
                    param = param.in_steps_of(step, leak(self.unit.as_deref().unwrap_or_default()));
                }
                if let Some(marks) = &self.marks {
                    if marks
                        .iter()
                        .any(|m| !(min..=max).contains(m) || m % step != 0)
                    {
                        return Err(bad(format!(
                            "every mark must be a value it takes ({min} to {max}, in steps of {step})"
                        )));
                    }
                    param = param.with_marks(leak_marks(marks));
                }
                Ok(param)
            }
            "text" => {
                let default = default
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
                let default = default
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

    fn is_whole(&self) -> bool {
        self.kind.as_deref() == Some("whole")
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

/// The actions a step may take.
pub(crate) const ACTIONS: [&str; 4] = ["crash", "lose-reply", "work", "fail"];

/// How deeply `use` may nest.
pub(crate) const MAX_USE_DEPTH: usize = 8;

/// Checks what the TOML types cannot: references between parts of the file.
/// The first PRAGMA among `pragmas` that sets one the engine refuses
/// ([`crate::storage::DENIED_PRAGMAS`]), found before the run would refuse it.
fn denied_pragma(pragmas: &str) -> Option<String> {
    pragmas.split(';').find_map(|statement| {
        let text = statement.trim().to_ascii_lowercase();
        let rest = text.strip_prefix("pragma")?.trim_start();
        let end = rest
            .find(|c: char| c == '=' || c == '(' || c.is_whitespace())
            .unwrap_or(rest.len());
        let (qualified, after) = rest.split_at(end);
        let name = qualified.rsplit('.').next().unwrap_or(qualified);
        let sets = after.trim_start().starts_with(['=', '(']);
        (sets && crate::storage::DENIED_PRAGMAS.contains(&name)).then(|| name.to_string())
    })
}

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
    for (name, database) in &file.databases {
        if let Some(pragma) = denied_pragma(&database.pragmas) {
            let hint = if pragma == "journal_mode" {
                "; set the mode with journal = \"wal\" at the top of the file (every scenario also takes it as its journal parameter)"
            } else {
                ""
            };
            return Err(bad(format!(
                "database {}: its pragmas set {}, which this engine keeps to itself (it changes how databases are stored, locked or waited for){hint}",
                params::quote(name),
                params::quote(&pragma)
            )));
        }
    }
    for prior in &file.before {
        if prior.found.is_none() {
            return Err(bad(format!(
                "before names {}, which is not a built-in scenario",
                params::quote(&prior.id)
            )));
        }
    }
    file.declared_params()?;
    if file.attempts.is_empty() {
        return Err(bad("declare at least one attempt: [[attempts]]".into()));
    }
    let database = |given: Option<&String>, what: &str, required: bool| -> Result<()> {
        match given {
            Some(name) if !file.databases.contains_key(name) => Err(bad(format!(
                "{what} names database {}, which is not declared",
                params::quote(name)
            ))),
            None if required && file.databases.len() > 1 => Err(bad(format!(
                "{what} must say which database (there are {})",
                file.databases.len()
            ))),
            _ => Ok(()),
        }
    };
    let whole_param = |name: &str| file.params.get(name).is_some_and(ParamSpec::is_whole);
    let names_attempt = |name: &str, before: usize| {
        file.attempts[..before]
            .iter()
            .any(|a| a.role.as_deref() == Some(name) || a.label.as_deref() == Some(name))
    };
    for (name, program) in &file.programs {
        check_steps(
            file,
            &format!("program {}", params::quote(name)),
            &program.steps,
        )?;
    }
    // Attempts are named as traces name them: by label, else by the letter
    // of their first replica (while replicas before them are numbers).
    let mut first_letter = Some(0usize);
    for (i, attempt) in file.attempts.iter().enumerate() {
        let what = match (&attempt.label, first_letter) {
            (Some(label), _) => format!("attempt {}", params::quote(label)),
            (None, Some(index)) => format!("attempt {}", crate::sim::Schedule::letter(index)),
            (None, None) => format!("the attempts table number {}", i + 1),
        };
        first_letter = match (&attempt.replicas, first_letter) {
            (None, Some(index)) => Some(index + 1),
            (Some(toml::Value::Integer(n)), Some(index)) => {
                usize::try_from(*n).ok().map(|n| index + n.max(1))
            }
            _ => None,
        };
        if let Some(label) = &attempt.label {
            if label.is_empty() || label.chars().count() > 32 || label.chars().any(char::is_control)
            {
                return Err(bad(format!("{what}: a label is 1 to 32 characters")));
            }
        }
        if let Some(clock) = &attempt.clock {
            if clock.tick < 1 || !attempt.steps.is_empty() || attempt.program.is_some() {
                return Err(bad(format!(
                    "{what}: a clock ticks by a whole number from 1 and has no steps"
                )));
            }
            if let Some(holder) = &clock.hold_for {
                if !file
                    .attempts
                    .iter()
                    .any(|a| a.role.as_ref() == Some(holder) || a.label.as_ref() == Some(holder))
                {
                    return Err(bad(format!(
                        "{what}: hold-for names {}, which no attempt is",
                        params::quote(holder)
                    )));
                }
            }
            continue;
        }
        let needs_database = file
            .steps_of(attempt)
            .iter()
            .any(|s| s.sql.is_some() && s.database.is_none());
        database(attempt.database.as_ref(), &what, needs_database)?;
        match (&attempt.program, attempt.steps.is_empty()) {
            (Some(name), true) => {
                if !file.programs.contains_key(name) {
                    return Err(bad(format!(
                        "{what}: program {} is not declared",
                        params::quote(name)
                    )));
                }
            }
            (None, false) => {
                if attempt.steps.len() > MAX_PROGRAM_STEPS {
                    return Err(bad(format!(
                        "{what} must have 1 to {MAX_PROGRAM_STEPS} steps"
                    )));
                }
                check_steps(file, &what, &attempt.steps)?;
            }
            _ => {
                return Err(bad(format!(
                    "{what}: give either steps or program (1 to {MAX_PROGRAM_STEPS} steps)"
                )))
            }
        }
        if let Some(replicas) = &attempt.replicas {
            match replicas {
                toml::Value::Integer(n) if (1..=MAX_ATTEMPTS as i64).contains(n) => {}
                toml::Value::String(name) if whole_param(name) => {}
                _ => {
                    return Err(bad(format!(
                        "{what}: replicas is a number from 1 to {MAX_ATTEMPTS} or the name of a whole parameter"
                    )))
                }
            }
        }
        if let Some(crash) = &attempt.crash_after {
            match &crash.steps {
                toml::Value::Integer(n) if *n >= 0 => {}
                toml::Value::String(name) if file.params.contains_key(name) => {}
                _ => {
                    return Err(bad(format!(
                        "{what}: crash-after.steps is a number of steps or the name of a parameter"
                    )))
                }
            }
        }
        if let Some(role) = &attempt.after {
            let found: Vec<&AttemptSpec> = file.attempts[..i]
                .iter()
                .filter(|a| a.role.as_ref() == Some(role) || a.label.as_ref() == Some(role))
                .collect();
            let single = |a: &&AttemptSpec| {
                a.replicas.is_none()
                    || a.replicas.as_ref().and_then(toml::Value::as_integer) == Some(1)
            };
            if found.len() != 1 || !found.iter().all(single) || !names_attempt(role, i) {
                return Err(bad(format!(
                    "{what}: after = {} must name the role or label of exactly one earlier attempt that is not replicated",
                    params::quote(role)
                )));
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
    let labelled = |label: &str| {
        file.attempts
            .iter()
            .any(|a| a.label.as_deref() == Some(label) || a.role.as_deref() == Some(label))
            || (label.len() == 1
                && label.as_bytes()[0].is_ascii_uppercase()
                && usize::from(label.as_bytes()[0] - b'A') < total)
    };
    // A name derived from what is checked may say nothing of where it is:
    // then the table is named by its place ([`subject_span`] finds it).
    let named = |kind: &str, table: &str, i: usize, check: &CheckSpec| {
        if check.name == check.derived_name() {
            format!(
                "{kind} {} ([[{table}]] number {})",
                params::quote(&check.name),
                i + 1
            )
        } else {
            format!("{kind} {}", params::quote(&check.name))
        }
    };
    for (i, invariant) in file.invariants.iter().enumerate() {
        let what = named("invariant", "invariants", i, invariant);
        if invariant.sql.is_none()
            || invariant.expect.is_none()
            || invariant.outcome.is_some()
            || invariant.same_result.is_some()
            || invariant.attempt.is_some()
            || invariant.after.is_some()
        {
            return Err(bad(format!(
                "{what}: an invariant is sql with expect (it is checked after every step)"
            )));
        }
        database(invariant.database.as_ref(), &what, true)?;
    }
    for (i, check) in file.checks.iter().enumerate() {
        let what = named("check", "checks", i, check);
        if let Some(query) = &check.query {
            if check.sql.is_some() || !file.queries.contains_key(query) {
                return Err(bad(format!(
                    "{what}: query names {}, which is not one of the file's queries (and then give no sql)",
                    params::quote(query)
                )));
            }
        }
        for label in [&check.attempt, &check.after].into_iter().flatten() {
            if !labelled(label) {
                return Err(bad(format!(
                    "{what}: no attempt is labelled {}",
                    params::quote(label)
                )));
            }
        }
        let sql = check.sql.as_ref().or(check.query.as_ref());
        match (sql, &check.outcome, &check.same_result, &check.attempt) {
            (Some(_), None, None, None) => {
                database(check.database.as_ref(), &what, true)?;
                if check.expect.is_none() {
                    return Err(bad(format!("{what}: an sql check needs expect = …")));
                }
            }
            (None, _, None, Some(_)) if check.outcome.is_some() || check.result.is_some() => {}
            (None, Some(_), None, None) => {
                let counts = match &check.count {
                    Some(toml::Value::Integer(_)) => true,
                    Some(toml::Value::String(text)) => {
                        count_expression(text).is_some_and(|(name, _)| whole_param(name))
                    }
                    _ => false,
                };
                if !counts {
                    return Err(bad(format!(
                        "{what}: an outcome check needs count = a number, or a whole parameter's name with an optional offset (\"attempts - 1\")"
                    )));
                }
            }
            (None, None, Some(list), None) if !list.is_empty() => {}
            _ => {
                return Err(bad(format!(
                    "{what}: give exactly one of sql or query (with expect), outcome (with count), attempt (with outcome or result) or same-result"
                )))
            }
        }
    }
    Ok(())
}

/// Checks one program's steps.
fn check_steps(file: &File, what: &str, steps: &[StepSpec]) -> Result<()> {
    let bad = |why: String| Error::invalid("scenario", why);
    if steps.is_empty() || steps.len() > MAX_PROGRAM_STEPS {
        return Err(bad(format!(
            "{what} must have 1 to {MAX_PROGRAM_STEPS} steps"
        )));
    }
    for step in steps {
        let what = format!("{what}, step {}", params::quote(&step.name));
        // A template (`{sub}`) is checked once filled, where it is used.
        if let Some(database) = step.database.as_ref().filter(|d| !d.contains('{')) {
            if !file.databases.contains_key(database) {
                return Err(bad(format!(
                    "{what} names database {}, which is not declared",
                    params::quote(database)
                )));
            }
        }
        match (&step.sql, step.action.as_deref(), &step.use_program) {
            (Some(_), None, None) => {}
            (None, Some(action), None) if ACTIONS.contains(&action) => {}
            (None, Some(other), None) => {
                return Err(bad(format!(
                    "{what}: unknown action {}; use {}",
                    params::quote(other),
                    ACTIONS.join(", ")
                )))
            }
            (None, None, Some(program)) => {
                if !file.programs.contains_key(program) {
                    return Err(bad(format!(
                        "{what}: use names program {}, which is not declared",
                        params::quote(program)
                    )));
                }
                continue;
            }
            _ => return Err(bad(format!("{what}: give one of sql, action or use"))),
        }
        if step.name.is_empty() {
            return Err(bad(format!("{what}: every step has a name")));
        }
        let on = &step.on;
        let listed = [
            ("ok", &on.ok),
            ("rows", &on.rows),
            ("none", &on.none),
            ("busy", &on.busy),
            ("constraint", &on.constraint),
            ("error", &on.error),
        ];
        let cases = on.cases.iter().map(|(k, v)| (k.as_str(), Some(v)));
        for (kind, action) in listed.iter().map(|(k, a)| (*k, a.as_ref())).chain(cases) {
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
                    let bare_wait = given == 0 && t.wait_while.is_some();
                    if (given != 1 && !bare_wait)
                        || (t.result.is_some() && t.finish.is_none())
                        || (t.back_off && t.goto.is_none())
                    {
                        return Err(bad(format!(
                            "{what}: on.{kind} takes exactly one of goto (with an optional back-off), finish (with an optional result) or fail"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No library and no scenario: these files name none.
    struct Nothing;

    impl Sources for Nothing {
        fn library(&self, _: &str) -> Option<&'static str> {
            None
        }
        fn library_names(&self) -> Vec<&'static str> {
            Vec::new()
        }
        fn has_scenario(&self, _: &str) -> bool {
            false
        }
        fn scenario(&self, _: &str) -> Option<std::rc::Rc<File>> {
            None
        }
    }

    fn parse(source: &str, id: &str) -> Result<File> {
        super::parse(source, id, &Nothing)
    }

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

    /// Static expressions are computed once per set of values they read,
    /// except those that call a function or read the clock.
    #[test]
    fn a_let_that_calls_a_function_is_computed_for_every_build() {
        let source = r#"
title = "Lets"
[databases.app]
schema = "CREATE TABLE t (x);"
[let]
doubled = ":n * 2"
drawn = "abs(random())"
[[attempts]]
with = { n = 3 }
steps = [ { name = "write", sql = "INSERT INTO t VALUES (:doubled)" } ]
[[attempts]]
with = { n = 4 }
steps = [ { name = "write", sql = "INSERT INTO t VALUES (:doubled)" } ]
"#;
        let file = std::rc::Rc::new(parse(source, "lets").unwrap());
        let value = |scenario: &FileScenario, attempt: usize, name: &str| {
            scenario
                .values_of(attempt)
                .into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .unwrap()
        };
        let mut drawn = std::collections::HashSet::new();
        for _ in 0..5 {
            let built = FileScenario::new(file.clone(), Params::defaults(&[])).unwrap();
            assert_eq!(
                value(&built, 0, "doubled"),
                crate::storage::SqlValue::Integer(6)
            );
            assert_eq!(
                value(&built, 1, "doubled"),
                crate::storage::SqlValue::Integer(8)
            );
            drawn.insert(format!("{:?}", value(&built, 0, "drawn")));
        }
        assert!(drawn.len() > 1, "random() was drawn once: {drawn:?}");
    }

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
        // Found after parsing, it is still shown where it is written.
        let line = unknown_goto
            .lines()
            .position(|l| l.contains("nowhere"))
            .unwrap()
            + 1;
        assert!(error.contains(&format!("line {line}, column ")), "{error}");
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
