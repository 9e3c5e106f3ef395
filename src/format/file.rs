//! A scenario file as written: its declarations (what the TOML may say,
//! each field once, read by [`decode`](super::decode)), where the names it
//! gives lead ([`Sources`]), and the parameter every scenario takes.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde_json::Value;

use super::decode::{self, declaration, Decode};
use crate::params::{self, Param};
use crate::storage::{EngineOptions, Journal, Synchronous};
use crate::{Error, Result};

/// The parameter every scenario takes: its journal mode.
pub const JOURNAL_PARAM: &str = "journal";

/// What [`JOURNAL_PARAM`] changes, for people.
pub(crate) const JOURNAL_MEANING: &str = "the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer";

/// The parameter every scenario takes: its `PRAGMA synchronous`.
pub const SYNCHRONOUS_PARAM: &str = "synchronous";

/// What [`SYNCHRONOUS_PARAM`] changes, for people.
pub(crate) const SYNCHRONOUS_MEANING: &str = "PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted)";

/// The engine's own parameters, which every scenario takes, in the order
/// they are listed after a scenario's own.
pub const ENGINE_PARAMS: [&str; 2] = [JOURNAL_PARAM, SYNCHRONOUS_PARAM];

/// The engine's options parameter values select (each the default where
/// none does): the one place they are read from parameters.
pub(crate) fn engine_options(values: &serde_json::Map<String, Value>) -> EngineOptions {
    let named = |name: &str| values.get(name).and_then(Value::as_str);
    EngineOptions {
        journal: named(JOURNAL_PARAM)
            .and_then(Journal::parse)
            .unwrap_or_default(),
        synchronous: named(SYNCHRONOUS_PARAM)
            .and_then(Synchronous::parse)
            .unwrap_or_default(),
    }
}

/// `params` showing `options` (what a run's parameters, its trace and its
/// link say): the one place they are written as parameters.
pub(crate) fn showing(
    params: &crate::params::Params,
    options: EngineOptions,
) -> crate::params::Params {
    let mut values = params.values().clone();
    values.insert(JOURNAL_PARAM.into(), options.journal.name().into());
    values.insert(SYNCHRONOUS_PARAM.into(), options.synchronous.name().into());
    crate::params::Params::bound(values)
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
pub(crate) type SourcesRef = &'static (dyn Sources + Sync);

/// A scenario a file runs before its attempts (`before`): its id, and the
/// sources that have it, once the file is parsed.
#[derive(Clone)]
pub struct Before {
    /// The scenario's id, as the file names it.
    pub id: String,
    /// The sources that have it; `None` before parsing, or when none has.
    pub(in crate::format) found: Option<SourcesRef>,
}

impl std::fmt::Debug for Before {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Before")
            .field("id", &self.id)
            .field("found", &self.found.is_some())
            .finish()
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
    #[derive(Debug, Clone, Default)]
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
        /// The `synchronous` level it runs at unless the `synchronous`
        /// parameter says otherwise: `off`, `normal`, `full` (the default)
        /// or `extra`.
        pub synchronous: Option<String> = "synchronous" (opt),
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
        /// Libraries written in the file itself (`[libraries.NAME]`, as
        /// "Edit a copy" writes a built-in's): `include` takes the file's own
        /// before the catalog's of that name.
        pub libraries: IndexMap<String, Library> = "libraries" (default),
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
    #[derive(Debug, Clone, Default)]
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
    #[derive(Debug, Clone, Default)]
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
        /// here: the attempt fails unless `on.ok` says otherwise),
        /// `power-loss` (the machine holding `databases` loses power: what
        /// was not synced is lost, and every attempt with a connection open
        /// there dies), `disk-full` and `disk-space` (its disk fills up: a
        /// write that would grow a file fails with `SQLITE_FULL`; or has
        /// room again), `io-error` (the next `call` on its files fails).
        pub action: Option<String> = "action" (opt),
        /// With a machine's action (`power-loss`, `disk-full`, `disk-space`,
        /// `io-error`): the databases of that machine (every database when
        /// absent).
        pub databases: Vec<String> = "databases" (default),
        /// With `io-error`: which call fails, `write` or `sync`.
        pub call: Option<String> = "call" (opt),
        /// With `power-loss`: which tearing of the writes not yet synced
        /// (a number, or the parameter that gives one): 0, the default,
        /// loses them all; N keeps or loses each 512-byte piece by the Nth
        /// fixed sequence of coin flips.
        pub torn: Option<toml::Value> = "torn" (opt),
        /// With `sql`: the attempt's process dies inside the statement, at
        /// its Nth sync (a number, or the parameter that says: a whole
        /// number, or `none`), before that sync completes.
        pub crash_at_sync: Option<toml::Value> = "crash-at-sync" (opt),
        /// With `sql`: the power goes out inside the statement, at its Nth
        /// sync, on the machine holding `databases` (every database when
        /// absent).
        pub power_loss_at_sync: Option<toml::Value> = "power-loss-at-sync" (opt),
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
    pub(in crate::format) fn derived_name(&self) -> String {
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
    pub(in crate::format) fn fill_from(&mut self, base: &ParamSpec) {
        macro_rules! fill {
            ($($field:ident),*) => {$(
                if self.$field.is_none() {
                    self.$field = base.$field.clone();
                }
            )*};
        }
        fill!(kind, default, meaning, min, max, step, unit, marks, max_chars, options);
    }

    pub(in crate::format) fn to_param(&self, name: &str) -> Result<Param> {
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

    pub(in crate::format) fn is_whole(&self) -> bool {
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
pub(crate) const ACTIONS: [&str; 8] = [
    "crash",
    "lose-reply",
    "work",
    "fail",
    "power-loss",
    "disk-full",
    "disk-space",
    "io-error",
];

/// The actions that act on a machine (its `databases`).
pub(crate) const MACHINE_ACTIONS: [&str; 4] = ["power-loss", "disk-full", "disk-space", "io-error"];

/// How deeply `use` may nest.
pub(crate) const MAX_USE_DEPTH: usize = 8;
