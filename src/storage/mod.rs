//! SQLite storage: stores of in-memory database files with SQLite's real
//! locking, and independent connections to them that can be killed.
//!
//! Every connection is independent, as the reference programs' connections
//! to one database file are: each has its own `sqlite3*` handle, takes
//! SQLite's locks through the [`vfs`], and sees the others' work only once it
//! is committed.

pub mod footprint;
pub mod locks;
pub mod shm;
pub mod vfs;

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};
use serde::{Deserialize, Serialize};

pub use locks::LockLevel;
pub use shm::ShmLocks;

/// What `SQLITE_BUSY_SNAPSHOT` means, for people.
pub const BUSY_SNAPSHOT: &str = "SQLITE_BUSY_SNAPSHOT: its read snapshot is older than the last commit, so it may not write; waiting cannot help, only ROLLBACK and a new transaction";

/// Whether SQLite answered `SQLITE_BUSY_SNAPSHOT`: in WAL mode, a read
/// transaction tried to write after another connection committed. Its
/// primary code is `SQLITE_BUSY`, but no lock release will let it through.
pub fn is_busy_snapshot(error: &Error) -> bool {
    error.sqlite_code() == Some(rusqlite::ffi::SQLITE_BUSY_SNAPSHOT)
}

/// How a database keeps its transactions atomic: SQLite's rollback journal
/// (the default, as the reference programs run) or its write-ahead log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Journal {
    /// `journal_mode = DELETE`: a writer locks readers out while it commits.
    #[default]
    Rollback,
    /// `journal_mode = WAL`: readers keep a snapshot beside one writer.
    Wal,
}

impl Journal {
    /// Every mode, by name (the order the page offers them in).
    pub const NAMES: &'static [&'static str] = &["rollback", "wal"];

    /// Its name in files, links and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Journal::Rollback => "rollback",
            Journal::Wal => "wal",
        }
    }

    /// The mode named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Journal> {
        match name {
            "rollback" => Some(Journal::Rollback),
            "wal" => Some(Journal::Wal),
            _ => None,
        }
    }

    /// The PRAGMA that puts a database in this mode (it persists in the
    /// file, so every connection opened later uses it).
    pub fn pragma(self) -> &'static str {
        match self {
            Journal::Rollback => "PRAGMA journal_mode = DELETE",
            Journal::Wal => "PRAGMA journal_mode = WAL",
        }
    }
}
/// The PRAGMA that gives a scenario's database its page size, run when the
/// database is created (before its journal mode and schema). Scenario
/// tables hold a few rows, and a search handles whole pages of them: it
/// copies every file at a checkpoint, hashes the changed ones at every
/// state, and a connection whose cache went stale reads its pages again.
/// SQLite's smallest page, 512 bytes, holds them as well as 4096 did, in an
/// eighth of the bytes: the search of three producers and two relays took
/// 14.1 instead of 18.1 billion instructions, with the same states.
pub const SCENARIO_PAGE_SIZE: &str = "PRAGMA page_size = 512";

use vfs::{ActiveConn, ConnId, StoreInner};

use crate::{Error, Result};

/// The SQLite release both targets are built from: rusqlite's bundled
/// amalgamation natively and sqlite-wasm-rs's in wasm. A test on each target
/// checks the running library against it, so the two cannot drift apart.
pub const SQLITE_VERSION: &str = "3.54.1";

/// The bytes SQLite holds now, every connection together
/// (`sqlite3_memory_used`; its heap is limited to
/// [`vfs::SQLITE_HEAP_LIMIT`]).
pub fn sqlite_memory_used() -> i64 {
    // SAFETY: a plain call that reads a counter.
    unsafe { rusqlite::ffi::sqlite3_memory_used() }
}

/// The version of the SQLite library actually linked into this build.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

/// Crate and SQLite versions, as reported by the page and `replayground version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Versions {
    /// This crate's version.
    pub replayground: &'static str,
    /// The running SQLite library's version.
    pub sqlite: &'static str,
    /// The running SQLite library's source id (check-in and date).
    pub sqlite_source_id: String,
}

impl Versions {
    /// The versions of this build.
    pub fn current() -> Self {
        let source_id = Connection::open_in_memory()
            .and_then(|c| c.query_row("SELECT sqlite_source_id()", [], |row| row.get(0)))
            .unwrap_or_else(|e| format!("unavailable ({e})"));
        Versions {
            replayground: crate::CRATE_VERSION,
            sqlite: sqlite_version(),
            sqlite_source_id: source_id,
        }
    }
}

/// A value SQLite stores or returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SqlValue {
    /// SQL NULL.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A 64-bit float.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl SqlValue {
    /// About how many bytes it takes: its text or bytes, and the value.
    pub fn size(&self) -> usize {
        std::mem::size_of::<SqlValue>()
            + match self {
                SqlValue::Text(t) => t.len(),
                SqlValue::Blob(b) => b.len(),
                _ => 0,
            }
    }
}

impl From<ValueRef<'_>> for SqlValue {
    fn from(value: ValueRef<'_>) -> Self {
        match value {
            ValueRef::Null => SqlValue::Null,
            ValueRef::Integer(i) => SqlValue::Integer(i),
            ValueRef::Real(f) => SqlValue::Real(f),
            ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
        }
    }
}

impl From<&str> for SqlValue {
    fn from(text: &str) -> Self {
        SqlValue::Text(text.to_string())
    }
}

impl From<i64> for SqlValue {
    fn from(i: i64) -> Self {
        SqlValue::Integer(i)
    }
}

impl ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            SqlValue::Null => ToSqlOutput::Owned(Value::Null),
            SqlValue::Integer(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            SqlValue::Real(f) => ToSqlOutput::Owned(Value::Real(*f)),
            SqlValue::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            SqlValue::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

/// What one SQL statement returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rows {
    /// Column names of the result (empty for statements without a result).
    pub columns: Vec<String>,
    /// The result rows.
    pub rows: Vec<Vec<SqlValue>>,
    /// Rows inserted, updated or deleted (0 for read-only statements).
    pub changes: u64,
    /// The connection's last inserted rowid after the statement.
    pub last_insert_rowid: i64,
}

/// Runs one SQL statement to completion on `connection` and collects its rows.
///
/// Exactly one statement: a second one after `;` is an error, so that a step
/// is always one statement.
pub fn run_sql(connection: &Connection, sql: &str, params: &[SqlValue]) -> Result<Rows> {
    let mut statement = connection.prepare_cached(sql)?;
    collect_rows(connection, &mut statement, params)
}

/// Runs a prepared statement with `params` and collects its rows.
fn collect_rows(
    connection: &Connection,
    statement: &mut rusqlite::CachedStatement<'_>,
    params: &[SqlValue],
) -> Result<Rows> {
    let columns: Vec<String> = statement.column_names().map(String::from).collect();
    // `changes()` keeps the count of the connection's last INSERT, UPDATE
    // or DELETE: a statement that changed nothing (a SELECT, BEGIN, COMMIT)
    // must not report it, as the total tells.
    let total_before = connection.total_changes();
    let mut rows = Vec::new();
    {
        let mut cursor = statement.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = cursor.next()? {
            // Each value's bytes are charged to the run before it is copied.
            let mut size = 0;
            for i in 0..columns.len() {
                size += match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        t.len()
                    }
                    _ => 0,
                } + std::mem::size_of::<SqlValue>();
            }
            if !charge_bytes(size) {
                return Err(Error::OverBudget(
                    "the rows it returned would exceed the run's budget of bytes".into(),
                ));
            }
            let values = (0..columns.len())
                .map(|i| row.get_ref(i).map(SqlValue::from))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.push(values);
        }
    }
    Ok(Rows {
        columns,
        rows,
        changes: if connection.total_changes() == total_before {
            0
        } else {
            connection.changes()
        },
        last_insert_rowid: connection.last_insert_rowid(),
    })
}

/// Runs one SQL statement whose parameters are named (`:name`, `@name`,
/// `$name`), each bound through `bind`; returns the rows and the values
/// bound, in order. A name `bind` does not know is an error that names it.
pub fn run_sql_named(
    connection: &Connection,
    sql: &str,
    bind: &dyn Fn(&str) -> Option<SqlValue>,
) -> Result<(Rows, Vec<SqlValue>)> {
    let (values, rows) = run_sql_named_bound(connection, sql, bind);
    Ok((rows?, values))
}

/// As [`run_sql_named`], keeping the values bound when the statement then
/// fails (a BUSY statement was bound before SQLite refused it).
pub fn run_sql_named_bound(
    connection: &Connection,
    sql: &str,
    bind: &dyn Fn(&str) -> Option<SqlValue>,
) -> (Vec<SqlValue>, Result<Rows>) {
    let mut values = Vec::new();
    let rows = bind_and_run(connection, sql, bind, &mut values);
    (values, rows)
}

fn bind_and_run(
    connection: &Connection,
    sql: &str,
    bind: &dyn Fn(&str) -> Option<SqlValue>,
    values: &mut Vec<SqlValue>,
) -> Result<Rows> {
    let mut statement = connection.prepare_cached(sql)?;
    values.reserve(statement.parameter_count());
    for i in 1..=statement.parameter_count() {
        let name = statement
            .parameter_name(i)
            .map(|n| &n[1..])
            .ok_or_else(|| {
                Error::invalid(
                    "sql",
                    format!("parameter {i} has no name: write :name, not ?"),
                )
            })?;
        values.push(bind(name).ok_or_else(|| {
            Error::invalid(
                "sql",
                format!(
                    "nothing is called :{name} (no parameter, capture or built-in of that name)"
                ),
            )
        })?);
    }
    collect_rows(connection, &mut statement, values)
}

thread_local! {
    /// Progress-handler calls left to the statement now running (each call
    /// is 1,000 SQLite VM instructions); unbounded outside [`with_budget`].
    static VM_BUDGET: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
    /// What is left of the budget of the run whose step is running
    /// ([`with_run_budget`]); unbounded outside one.
    static RUN_LEFT: std::cell::Cell<RunLeft> = const { std::cell::Cell::new(RunLeft::UNBOUNDED) };
    /// Which of the run's budgets ran out during the step running, if one did.
    static RUN_OUT: std::cell::Cell<Option<RunBudget>> = const { std::cell::Cell::new(None) };
    /// The caller's way of asking the engine to stop, if it gave one
    /// ([`set_interrupt`]).
    static INTERRUPT: std::cell::RefCell<Option<Rc<dyn Fn() -> bool>>> = const { std::cell::RefCell::new(None) };
    /// Whether a statement was stopped because the caller asked.
    static INTERRUPTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Gives the engine a way to hear a caller that wants it to stop: `asks`
/// answers whether it does (read every thousand SQLite instructions of a
/// statement and before every step of a run). `None` removes it.
pub fn set_interrupt(asks: Option<Rc<dyn Fn() -> bool>>) {
    INTERRUPT.with(|i| *i.borrow_mut() = asks);
}

/// Whether the caller asks the engine to stop now.
pub fn interrupt_asked() -> bool {
    let asks = INTERRUPT.with(|i| i.borrow().clone());
    asks.is_some_and(|asks| asks())
}

/// Of the engine's frequent checks (before every step of a run, every
/// thousand SQLite instructions), how many pass between two askings of the
/// caller: in the browser each asking reads the caller's flag through
/// JavaScript, which asked at every check cost the page's search about 4%
/// of its runs (measured 2026-12-05); one in 32 is still heard within a
/// fraction of a millisecond.
const ASK_EVERY: u32 = 32;

thread_local! {
    /// Checks left before the caller is asked again ([`ASK_EVERY`]).
    static UNTIL_ASKED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// [`interrupt_asked`], asked at one frequent check in [`ASK_EVERY`].
pub(crate) fn interrupt_due() -> bool {
    let due = UNTIL_ASKED.with(|left| match left.get() {
        0 => {
            left.set(ASK_EVERY - 1);
            true
        }
        n => {
            left.set(n - 1);
            false
        }
    });
    due && interrupt_asked()
}

/// Whether a statement was stopped because the caller asked, since the
/// last call (which clears it).
pub fn take_interrupted() -> bool {
    INTERRUPTED.with(|i| i.replace(false))
}

/// What is left of a run's budget while one of its steps runs.
#[derive(Debug, Clone, Copy)]
struct RunLeft {
    /// Progress-handler calls (1,000 SQLite VM instructions each).
    ticks: u64,
    /// Bytes of values the step may still build.
    bytes: u64,
}

impl RunLeft {
    const UNBOUNDED: RunLeft = RunLeft {
        ticks: u64::MAX,
        bytes: u64::MAX,
    };
}

/// A budget of a whole run, all its statements and values together
/// ([`crate::sim::Budgets`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunBudget {
    /// SQLite VM instructions, every statement of the run together.
    Instructions,
    /// Bytes of the values the run builds: rows its statements return and
    /// the text its templates fill in.
    Bytes,
}

/// SQLite calls this every 1,000 VM instructions on a bounded connection;
/// a non-zero answer interrupts the statement (`SQLITE_INTERRUPT`).
extern "C" fn spend_budget(_: *mut std::ffi::c_void) -> std::ffi::c_int {
    if interrupt_due() {
        INTERRUPTED.with(|i| i.set(true));
        return 1;
    }
    let run_out = RUN_LEFT.with(|left| {
        let mut now = left.get();
        match now.ticks {
            0 => true,
            u64::MAX => false,
            n => {
                now.ticks = n - 1;
                left.set(now);
                false
            }
        }
    });
    if run_out {
        RUN_OUT.with(|out| out.set(Some(RunBudget::Instructions)));
        return 1;
    }
    VM_BUDGET.with(|left| match left.get() {
        0 => 1,
        n => {
            left.set(n - 1);
            0
        }
    })
}

/// Runs `work`, one step of a run, with `instructions` SQLite VM
/// instructions (every statement on a bounded connection together) and
/// `bytes` of values left to the run; returns what it returned and what it
/// spent of each. A statement past the instructions is interrupted, as one
/// past its own budget is ([`with_budget`]); values past the bytes are not
/// built ([`charge_bytes`]). [`run_budget_out`] tells which ran out.
pub fn with_run_budget<T>(
    instructions: u64,
    bytes: u64,
    work: impl FnOnce() -> T,
) -> (T, u64, u64) {
    let start = RunLeft {
        ticks: instructions / 1000,
        bytes,
    };
    RUN_LEFT.with(|left| left.set(start));
    RUN_OUT.with(|out| out.set(None));
    let result = work();
    let end = RUN_LEFT.with(|left| left.replace(RunLeft::UNBOUNDED));
    (
        result,
        (start.ticks - end.ticks) * 1000,
        start.bytes - end.bytes,
    )
}

/// Which budget of the run ran out during the step that just ran (under
/// [`with_run_budget`]), if one did.
pub fn run_budget_out() -> Option<RunBudget> {
    RUN_OUT.with(std::cell::Cell::get)
}

/// Charges `bytes` of a value about to be built to the run whose step is
/// running: false (and the run's bytes budget marked spent) if they do not
/// fit, and then the value must not be built. Always true outside a run.
pub fn charge_bytes(bytes: usize) -> bool {
    let fits = RUN_LEFT.with(|left| {
        let mut now = left.get();
        if now.bytes == u64::MAX {
            return true;
        }
        match now.bytes.checked_sub(bytes as u64) {
            Some(rest) => {
                now.bytes = rest;
                left.set(now);
                true
            }
            None => {
                now.bytes = 0;
                left.set(now);
                false
            }
        }
    });
    if !fits {
        RUN_OUT.with(|out| out.set(Some(RunBudget::Bytes)));
    }
    fits
}

/// PRAGMAs a scenario's SQL may not set: they would change how the engine
/// stores, locks or waits (a busy timeout would sleep instead of answering
/// BUSY to the scheduler), or let it rewrite the schema's bytes.
pub const DENIED_PRAGMAS: &[&str] = &[
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "hard_heap_limit",
    "journal_mode",
    "journal_size_limit",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "page_size",
    "schema_version",
    "soft_heap_limit",
    "temp_store",
    "threads",
    "wal_autocheckpoint",
    "wal_checkpoint",
    "writable_schema",
];

/// PRAGMAs that set a flag of the connection and nothing else: running one
/// again with the same value changes nothing but the prepared statements.
/// (`defer_foreign_keys` is not one: it resets at every commit.)
pub const FLAG_PRAGMAS: &[&str] = &[
    "automatic_index",
    "cell_size_check",
    "foreign_keys",
    "ignore_check_constraints",
    "query_only",
    "recursive_triggers",
    "reverse_unordered_selects",
    "trusted_schema",
];

/// Whether `statement` is `PRAGMA flag = value` (or `PRAGMA flag(value)`)
/// with a flag of [`FLAG_PRAGMAS`] and a plain word or number as its value.
fn is_flag_pragma(statement: &str) -> bool {
    let words: String = statement
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let Some(rest) = words.strip_prefix("pragma") else {
        return false;
    };
    let (name, value) = match rest.split_once('=') {
        Some((name, value)) => (name, value),
        None => match rest.strip_suffix(')').and_then(|r| r.split_once('(')) {
            Some((name, value)) => (name, value),
            None => return false,
        },
    };
    FLAG_PRAGMAS.contains(&name)
        && !value.is_empty()
        && value.chars().all(|c| c.is_ascii_alphanumeric())
}

thread_local! {
    /// The PRAGMA the authorizer refused last, for the error's sentence.
    static DENIED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// SQLite's authorizer on a bounded connection: refuses setting the
/// [`DENIED_PRAGMAS`] (reading them is fine), and `wal_checkpoint` at all.
extern "C" fn authorize(
    _: *mut std::ffi::c_void,
    action: std::ffi::c_int,
    first: *const std::ffi::c_char,
    second: *const std::ffi::c_char,
    _: *const std::ffi::c_char,
    _: *const std::ffi::c_char,
) -> std::ffi::c_int {
    if action != rusqlite::ffi::SQLITE_PRAGMA || first.is_null() {
        return rusqlite::ffi::SQLITE_OK;
    }
    // SAFETY: SQLite passes NUL-terminated strings that live for this call.
    let name = unsafe { std::ffi::CStr::from_ptr(first) }
        .to_string_lossy()
        .to_ascii_lowercase();
    let sets = !second.is_null() || name == "wal_checkpoint";
    if sets && DENIED_PRAGMAS.contains(&name.as_str()) {
        DENIED.with(|d| *d.borrow_mut() = Some(name));
        return rusqlite::ffi::SQLITE_DENY;
    }
    rusqlite::ffi::SQLITE_OK
}

/// The sentence for a statement the authorizer refused, if it was one.
pub fn refusal(error: &Error) -> Option<String> {
    let denied = error
        .sqlite_code()
        .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_AUTH);
    if !denied {
        return None;
    }
    let name = DENIED.with(|d| d.borrow().clone()).unwrap_or_default();
    Some(format!(
        "PRAGMA {name} may not be set in a scenario: it would change how the engine stores, locks or waits (refused: {})",
        DENIED_PRAGMAS.join(", ")
    ))
}

/// Runs `work` with every statement on a bounded connection (see
/// [`Conn::bound`]) limited to about `instructions` SQLite VM instructions.
pub fn with_budget<T>(instructions: u64, work: impl FnOnce() -> T) -> T {
    VM_BUDGET.with(|left| left.set(instructions / 1000));
    let result = work();
    VM_BUDGET.with(|left| left.set(u64::MAX));
    result
}

/// Whether an error is SQLite's answer to a statement that ran out of its budget.
pub fn is_interrupt(error: &Error) -> bool {
    error
        .sqlite_code()
        .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_INTERRUPT)
}

/// A directory of in-memory database files (and their rollback journals)
/// that independent connections open by name, with SQLite's locks between
/// them. Stays on the thread that created it.
pub struct Store {
    inner: Rc<StoreInner>,
    last_restored: std::cell::RefCell<Option<Snapshot>>,
}

/// The bytes of every file of a [`Store`] at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    store: String,
    files: BTreeMap<String, Rc<vfs::Image>>,
}

impl Snapshot {
    /// Whether it is the very same snapshot (not merely equal bytes).
    pub fn same_as(&self, other: &Snapshot) -> bool {
        self.store == other.store
            && self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|((a, x), (b, y))| a == b && Rc::ptr_eq(x, y))
    }

    /// Whether it was taken of `store`.
    pub fn is_of(&self, store: &Store) -> bool {
        self.store == store.inner.name
    }

    /// The same files but those named.
    pub fn without(&self, names: &[String]) -> Snapshot {
        let mut files = self.files.clone();
        files.retain(|name, _| !names.contains(name));
        Snapshot {
            store: self.store.clone(),
            files,
        }
    }

    /// The files it holds, with their sizes in bytes.
    pub fn files(&self) -> Vec<(String, usize)> {
        self.files
            .iter()
            .map(|(name, bytes)| (name.clone(), bytes.len()))
            .collect()
    }
}

/// Checks a store label or a database file name (the names the VFS accepts).
fn check_name(field: &'static str, name: &str) -> Result<()> {
    if vfs::is_store_file_name(name) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!(
                "{name:?} is not usable: use 1 to 64 ASCII letters, digits, '-', '_' or '.', not starting with '.' nor ending in '-shm'"
            ),
        ))
    }
}

impl Store {
    /// Creates an empty store; `label` starts its unique name.
    pub fn new(label: &str) -> Result<Store> {
        check_name("store label", label)?;
        vfs::ensure_registered().map_err(Error::System)?;
        Ok(Store {
            inner: StoreInner::create(label),
            last_restored: Default::default(),
        })
    }

    /// A new store holding copies of a snapshot's files (of any store).
    pub fn from_snapshot(label: &str, snapshot: &Snapshot) -> Result<Store> {
        let store = Store::new(label)?;
        if let Some(source) = StoreInner::find(&snapshot.store) {
            store
                .inner
                .assign_slots(source.slot_names().iter().map(String::as_str));
        }
        store.inner.restore_files(&snapshot.files);
        Ok(store)
    }

    /// Another handle on the store named `name` (as [`Store::name`] gave it).
    pub fn open(name: &str) -> Result<Store> {
        StoreInner::find(name)
            .map(|inner| Store {
                inner,
                last_restored: Default::default(),
            })
            .ok_or_else(|| {
                Error::Refused(format!(
                    "no store named {name:?} exists on this thread; create one with Store::new"
                ))
            })
    }

    /// The store's unique name on this thread.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Opens a new, independent connection to database `db` of this store
    /// (created empty if it does not exist). `label` names the connection in
    /// traces and errors.
    pub fn connect(&self, db: &str, label: &str) -> Result<Conn> {
        Conn::open(&self.inner, db, label)
    }

    /// Keeps idle connections (no transaction, no lock) when they are
    /// dropped and hands them out again to [`Store::connect`], so that a
    /// scenario run many times does not open and parse the schema anew.
    ///
    /// A connection taken from the pool has its page cache emptied first,
    /// unless the file is unchanged since it last read it: two runs can
    /// reach the same file change counter with different contents, so the
    /// counter alone cannot tell its cached pages are stale.
    /// The schema cache is kept, so this is only for stores whose schema does
    /// not change between runs (what [`crate::sim::search::Explorer`] does:
    /// every run restores the same snapshot, and scenarios run no DDL).
    /// Restoring another snapshot empties the pool. Turning pooling off
    /// empties it too, and must be done before the store is dropped (pooled
    /// connections keep it alive).
    pub fn set_pooling(&self, on: bool) {
        self.inner.pooling.set(on);
        if !on {
            let idle: Vec<_> = self.inner.pool.borrow_mut().drain(..).collect();
            drop(idle);
        }
    }

    /// Pools idle connections as [`Store::set_pooling`] does, but a reused
    /// connection keeps its page cache: for a store whose files only
    /// SQLite writes (never [`Store::restore`]d), where the file change
    /// counter SQLite checks at the start of every transaction tells a
    /// stale cache. A session's store is such a store.
    pub fn set_pooling_keeping_caches(&self) {
        self.inner.pool_keeps_caches.set(true);
        self.set_pooling(true);
    }

    /// Makes connections opened from now on record the rows each of their
    /// statements changes (see [`Conn::take_changes`]). Off by default: the
    /// explorer runs without it.
    pub fn set_track_changes(&self, on: bool) {
        self.inner.track_changes.set(on);
    }

    /// Hashes the name and bytes of every file: equal hashes, equal stores.
    pub fn hash_files(&self, state: &mut dyn std::hash::Hasher) {
        self.inner.hash_files(state);
    }

    /// The store's files with their sizes in bytes, in name order.
    pub fn files(&self) -> Vec<(String, usize)> {
        self.inner.file_names()
    }

    /// The bytes of one file, if the store holds it.
    pub fn file_bytes(&self, name: &str) -> Option<Vec<u8>> {
        self.inner.file_bytes(name)
    }

    /// Copies the bytes of every file. Taken while a transaction is open, it
    /// is the image a crash at that moment would leave (a hot journal included).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            store: self.inner.name.clone(),
            files: self.inner.snapshot_files(),
        }
    }

    /// Replaces this store's files with copies of `other`'s, as they are now
    /// (hot journals included). Refused while a connection is open here.
    pub fn copy_files_from(&self, other: &Store) -> Result<()> {
        let open = self.inner.open_conns();
        if !open.is_empty() || self.inner.open_handles() > 0 {
            return Err(Error::Refused(format!(
                "cannot replace the files of store {:?} while connections are open ({})",
                self.inner.name,
                open.join(", ")
            )));
        }
        self.inner.restore_files(&other.inner.snapshot_files());
        // Its databases keep their footprint slots here.
        self.inner
            .assign_slots(other.inner.slot_names().iter().map(String::as_str));
        Ok(())
    }

    /// Numbers these databases' footprint slots first, in this order (an
    /// explorer names its scenario's databases before anything runs).
    pub fn assign_slots<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        self.inner.assign_slots(names);
    }

    /// Puts every file back as it was in `snapshot`.
    ///
    /// Refused while any connection is open on the store: an open connection
    /// would keep its page cache of the replaced files, and one in the middle
    /// of a transaction would hold locks on files that no longer exist.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<()> {
        if snapshot.store != self.inner.name {
            return Err(Error::Refused(format!(
                "the snapshot was taken of store {:?}, not {:?}",
                snapshot.store, self.inner.name
            )));
        }
        let holders = self.inner.lock_holders();
        if !holders.is_empty() {
            return Err(Error::Refused(format!(
                "cannot restore a snapshot while connections are mid-transaction ({} hold locks); finish or kill them first",
                holders.join(", ")
            )));
        }
        let open = self.inner.open_conns();
        if !open.is_empty() || self.inner.open_handles() > 0 {
            return Err(Error::Refused(format!(
                "cannot restore a snapshot while connections are open ({}); close them first",
                open.join(", ")
            )));
        }
        let same = self
            .last_restored
            .borrow()
            .as_ref()
            .is_some_and(|last| last.same_as(snapshot));
        // Caches kept across reuse would not see that the files changed.
        if !same || self.inner.pool_keeps_caches.get() {
            let idle: Vec<_> = self.inner.pool.borrow_mut().drain(..).collect();
            drop(idle);
            *self.last_restored.borrow_mut() = Some(snapshot.clone());
        }
        self.inner.restore_files(&snapshot.files);
        Ok(())
    }

    /// Puts every file back as it was in `snapshot`, as [`Store::restore`]
    /// does, while connections are open, but the files named in `keep`,
    /// which stay as they are: for an explorer going back to a state of a
    /// run, whose connections are then those of that state. Locks stay as
    /// they are: the caller has released every lock but those of the
    /// transactions it keeps open (and their journals, in `keep`), which
    /// the snapshot's files must leave as they are. Each connection kept
    /// must forget a stale page cache ([`Conn::forget_stale_cache`]) before
    /// it reads again; the schema must be the one every snapshot of the
    /// store shares. The pool is kept whatever snapshot was restored before
    /// (it does the same for each connection it hands out).
    pub fn rewind(&self, snapshot: &Snapshot, keep: &[String]) -> Result<()> {
        if snapshot.store != self.inner.name || self.inner.pool_keeps_caches.get() {
            return self.restore(snapshot);
        }
        self.inner.rewind_files(&snapshot.files, keep);
        Ok(())
    }
}

/// A connection's rusqlite handle (see [`Conn::sqlite`]); derefs to
/// [`rusqlite::Connection`].
pub struct SqliteRef<'a> {
    sqlite: &'a Connection,
    _active: ActiveConn,
}

impl std::ops::Deref for SqliteRef<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.sqlite
    }
}

/// What a statement did to a row (serialized `insert`, `update`, `delete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeOp {
    Insert,
    Update,
    Delete,
}

/// A row a statement changed, as SQLite's update hook reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// What it did.
    pub op: ChangeOp,
    /// The table.
    pub table: String,
    /// The row's rowid.
    pub rowid: i64,
}

type ChangeLog = Arc<Mutex<Vec<Change>>>;

/// How many prepared statements a connection keeps for reuse.
const STATEMENT_CACHE: usize = 128;

/// One independent SQLite connection to a database of a [`Store`].
pub struct Conn {
    id: ConnId,
    label: String,
    db: String,
    store: Rc<StoreInner>,
    sqlite: Option<Connection>,
    changes: Option<ChangeLog>,
    /// Whether [`Conn::bound`] set its bounds (a pooled connection keeps them).
    bounded: std::cell::Cell<bool>,
    /// The flag PRAGMAs it ran last (a pooled connection keeps them).
    flags: std::cell::RefCell<String>,
}

/// Empties connection `sqlite`'s page caches (of every database it has
/// attached), so that its next reads take every page from the files.
///
/// Without a transaction open this is `SQLITE_FCNTL_RESET_CACHE`, which
/// drops the pages and keeps their memory for the next reads, as SQLite does
/// when it sees another connection changed a file. `sqlite3_db_release_memory`
/// (used with a transaction open, where the file control does nothing) also
/// frees each cache's bulk allocation, which the next read allocates again
/// (the three-producer search, which rewinds tens of thousands of times:
/// 2.6 -> 2.5 s natively).
fn empty_page_cache(sqlite: &rusqlite::Connection) -> Result<()> {
    use rusqlite::ffi;
    if !sqlite.is_autocommit() {
        return Ok(sqlite.release_memory()?);
    }
    // SAFETY: the handle is this live connection's; `sqlite3_db_name` gives
    // its schemas' names (index 1 is `temp`, private to the connection and
    // never a file of the store) until it returns null, and the file control
    // takes no argument.
    unsafe {
        let db = sqlite.handle();
        for index in (0..).filter(|&i| i != 1) {
            let name = ffi::sqlite3_db_name(db, index);
            if name.is_null() {
                break;
            }
            let code = ffi::sqlite3_file_control(
                db,
                name,
                ffi::SQLITE_FCNTL_RESET_CACHE,
                std::ptr::null_mut(),
            );
            if code != ffi::SQLITE_OK {
                return Err(Error::System(format!(
                    "cannot empty the page cache ({code})"
                )));
            }
        }
    }
    Ok(())
}

impl Conn {
    fn open(store: &Rc<StoreInner>, db: &str, label: &str) -> Result<Conn> {
        check_name("database name", db)?;
        if label.is_empty() || label.chars().count() > 64 {
            return Err(Error::invalid("connection label", "use 1 to 64 characters"));
        }
        if store.pooling.get() && !store.track_changes.get() {
            let mut pool = store.pool.borrow_mut();
            if let Some(i) = pool.iter().position(|p| p.db == db) {
                let pooled = pool.swap_remove(i);
                drop(pool);
                // Its page cache may hold pages of another run with the same
                // change counter (interleavings differ): empty it, so that the
                // next read takes every page from the file.
                if !store.pool_keeps_caches.get() && !store.cache_is_current(pooled.id, db) {
                    let _active = ActiveConn::set(pooled.id);
                    empty_page_cache(&pooled.sqlite)?;
                }
                store.add_conn(pooled.id, label);
                // Opening reads the database header (the pager's page size,
                // without a lock); a pooled connection does what a new one
                // would, so that a step's footprint does not depend on
                // whether the pool had a connection to hand out.
                footprint::read(store.slot(db), footprint::Part::Data);
                return Ok(Conn {
                    id: pooled.id,
                    label: label.to_string(),
                    db: db.to_string(),
                    store: store.clone(),
                    sqlite: Some(pooled.sqlite),
                    changes: None,
                    bounded: std::cell::Cell::new(pooled.bounded),
                    flags: std::cell::RefCell::new(pooled.flags),
                });
            }
        }
        let id = vfs::next_id();
        store.add_conn(id, label);
        // A plain name, not a URI: the VFS places it in the store of the
        // active connection (this one), and the connection's ATTACH names are
        // plain names too (no SQLITE_OPEN_URI; both builds have URIs off).
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let changes = store.track_changes.get().then(ChangeLog::default);
        let opened = {
            let _active = ActiveConn::set(id);
            Connection::open_with_flags_and_vfs(db, flags, vfs::VFS_NAME).and_then(|mut c| {
                // No busy handler: BUSY comes back at once and the scheduler
                // decides who runs next (rusqlite's default would wait 5 s).
                c.busy_timeout(Duration::ZERO)?;
                // rusqlite keeps 16 statements by default; a scenario's
                // program, or the expressions a build evaluates, have more,
                // and a cache smaller than the working set prepares every
                // statement anew each time it runs.
                c.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
                if let Some(log) = &changes {
                    let log = log.clone();
                    c.update_hook(Some(move |action, _db: &str, table: &str, rowid| {
                        let op = match action {
                            rusqlite::hooks::Action::SQLITE_INSERT => ChangeOp::Insert,
                            rusqlite::hooks::Action::SQLITE_UPDATE => ChangeOp::Update,
                            rusqlite::hooks::Action::SQLITE_DELETE => ChangeOp::Delete,
                            // The hook reports nothing else.
                            _ => return,
                        };
                        if let Ok(mut log) = log.lock() {
                            log.push(Change {
                                op,
                                table: table.to_string(),
                                rowid,
                            });
                        }
                    }))?;
                }
                Ok(c)
            })
        };
        match opened {
            Ok(sqlite) => Ok(Conn {
                id,
                label: label.to_string(),
                db: db.to_string(),
                store: store.clone(),
                sqlite: Some(sqlite),
                changes,
                bounded: std::cell::Cell::new(false),
                flags: std::cell::RefCell::new(String::new()),
            }),
            Err(e) => {
                store.remove_conn(id);
                Err(e.into())
            }
        }
    }

    /// The connection's id, unique on its thread.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The connection's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The database file this connection opened.
    pub fn db(&self) -> &str {
        &self.db
    }

    /// The name of its database's rollback journal.
    pub fn journal(&self) -> String {
        format!("{}-journal", self.db)
    }

    /// The rows changed since the last call, if the store tracks changes.
    pub fn take_changes(&self) -> Vec<Change> {
        self.changes
            .as_ref()
            .and_then(|log| log.lock().ok().map(|mut log| std::mem::take(&mut *log)))
            .unwrap_or_default()
    }

    /// Whether the connection is still alive (not killed).
    pub fn is_alive(&self) -> bool {
        self.sqlite.is_some()
    }

    /// The lock each of `conns` holds on its database, as
    /// [`Conn::lock_level`] gives it one by one. Connections of another
    /// store are asked their own.
    pub fn lock_levels(conns: &[&Conn]) -> Vec<LockLevel> {
        let Some(first) = conns.first() else {
            return Vec::new();
        };
        if conns.iter().any(|c| !Rc::ptr_eq(&c.store, &first.store)) {
            return conns.iter().map(|c| c.lock_level()).collect();
        }
        let pairs: Vec<(ConnId, &str)> = conns.iter().map(|c| (c.id, c.db.as_str())).collect();
        first.store.lock_levels(&pairs)
    }

    /// The lock this connection holds on its database.
    pub fn lock_level(&self) -> LockLevel {
        self.store.lock_level(self.id, &self.db)
    }

    /// The locks this connection holds on its database's WAL shared memory
    /// (none in a rollback journal mode).
    pub fn shm_locks(&self) -> shm::ShmLocks {
        self.store.shm_locks(self.id, &self.db)
    }

    /// In WAL mode: how many frames the log of its database holds now (the
    /// wal-index header's `mxFrame`).
    pub fn log_frames(&self) -> Option<u32> {
        self.store.log_frames(&self.db)
    }

    /// In WAL mode, while it holds a read slot: the snapshot it reads, as
    /// the number of WAL frames it sees (the slot's read mark; 0 for the
    /// database file alone).
    pub fn read_snapshot(&self) -> Option<u32> {
        let slot = (0..5).find(|i| self.shm_locks().shared & (1 << (3 + i)) != 0)?;
        if slot == 0 {
            return Some(0);
        }
        self.store.read_mark(&self.db, slot)
    }

    /// The underlying rusqlite connection, while the connection is alive.
    ///
    /// While the returned guard lives, the VFS attributes the files SQLite
    /// opens to this connection (its journals, attached databases): hold it
    /// only for calls on this connection.
    pub fn sqlite(&self) -> Result<SqliteRef<'_>> {
        let sqlite = self.sqlite.as_ref().ok_or_else(|| Error::Dead {
            connection: self.label.clone(),
        })?;
        Ok(SqliteRef {
            sqlite,
            _active: ActiveConn::set(self.id),
        })
    }

    /// Runs one SQL statement to completion (see [`run_sql`]).
    pub fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<Rows> {
        let sqlite = self.sqlite()?;
        run_sql(&sqlite, sql, params)
    }

    /// Runs one SQL statement to completion, as [`Conn::execute`], without
    /// collecting its rows: a statement redone for its effect on the
    /// connection (its locks, its transaction), whose result is known.
    pub fn execute_discarding(&self, sql: &str, params: &[SqlValue]) -> Result<()> {
        let sqlite = self.sqlite()?;
        let mut statement = sqlite.prepare_cached(sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        while rows.next()?.is_some() {}
        Ok(())
    }

    /// Runs one SQL statement with named parameters (see [`run_sql_named`]).
    pub fn execute_named(
        &self,
        sql: &str,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<(Rows, Vec<SqlValue>)> {
        let sqlite = self.sqlite()?;
        run_sql_named(&sqlite, sql, bind)
    }

    /// As [`Conn::execute_named`], keeping the values bound when the
    /// statement fails.
    pub fn execute_named_bound(
        &self,
        sql: &str,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> (Vec<SqlValue>, Result<Rows>) {
        match self.sqlite() {
            Ok(sqlite) => run_sql_named_bound(&sqlite, sql, bind),
            Err(e) => (Vec::new(), Err(e)),
        }
    }

    /// Bounds what one statement on this connection may cost, for SQL a
    /// caller wrote: statements run under [`with_budget`] are interrupted
    /// past their VM instructions, and no string or blob may exceed
    /// `max_bytes` (so `randomblob(1e9)` cannot exhaust memory), and the
    /// [`DENIED_PRAGMAS`] cannot be set.
    pub fn bound(&self, max_bytes: i32) -> Result<()> {
        // Once per connection: setting an authorizer expires every prepared
        // statement, and a pooled connection keeps its statements across runs.
        if self.bounded.get() {
            return Ok(());
        }
        let sqlite = self.sqlite()?;
        // SAFETY: the handle is this live connection's; the handler is a
        // plain function with no user data.
        unsafe {
            rusqlite::ffi::sqlite3_progress_handler(
                sqlite.handle(),
                1000,
                Some(spend_budget),
                std::ptr::null_mut(),
            );
        }
        sqlite.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, max_bytes)?;
        // SAFETY: as above; the authorizer is a plain function.
        let code = unsafe {
            rusqlite::ffi::sqlite3_set_authorizer(
                sqlite.handle(),
                Some(authorize),
                std::ptr::null_mut(),
            )
        };
        if code != rusqlite::ffi::SQLITE_OK {
            return Err(Error::System(format!("cannot set the authorizer ({code})")));
        }
        self.bounded.set(true);
        Ok(())
    }

    /// Runs a database's PRAGMAs on this connection. PRAGMAs that only set
    /// one of the connection's flags ([`FLAG_PRAGMAS`]) last as long as the
    /// connection, and setting one expires every prepared statement: a
    /// pooled connection that ran the same text before does not run it
    /// again. Anything else (which may write the file) always runs.
    pub fn apply_pragmas(&self, sql: &str) -> Result<()> {
        let only_flags = sql
            .split(';')
            .all(|s| s.trim().is_empty() || is_flag_pragma(s));
        if only_flags && *self.flags.borrow() == sql {
            return Ok(());
        }
        self.execute_batch(sql)?;
        *self.flags.borrow_mut() = if only_flags {
            sql.to_string()
        } else {
            String::new()
        };
        Ok(())
    }

    /// Empties its page cache, so that its next read takes every page from
    /// the file, unless the file holds the very bytes it held when this
    /// connection last gave up its locks: for a connection whose files were
    /// put back to other bytes ([`Store::rewind`]), which the file change
    /// counter might not tell (two branches of a search can leave different
    /// bytes under one counter).
    pub fn forget_stale_cache(&self) -> Result<()> {
        if self.store.cache_is_current(self.id, &self.db) {
            return Ok(());
        }
        empty_page_cache(&*self.sqlite()?)
    }

    /// Whether it has a transaction open (it is alive and not in autocommit).
    pub fn in_transaction(&self) -> bool {
        self.sqlite.as_ref().is_some_and(|c| !c.is_autocommit())
    }

    /// Ends the transaction it has open, if any, rolling it back (its locks
    /// are released). Whether it had one.
    pub fn roll_back(&self) -> Result<bool> {
        let sqlite = self.sqlite()?;
        if sqlite.is_autocommit() {
            return Ok(false);
        }
        // Prepared once per connection: a search rolls back at every rewind.
        sqlite.prepare_cached("ROLLBACK")?.execute([])?;
        Ok(true)
    }

    /// Runs several SQL statements (a schema, seed rows).
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        let sqlite = self.sqlite()?;
        Ok(sqlite.execute_batch(sql)?)
    }

    /// Kills the connection as if its process called `_exit`: its locks
    /// vanish at once, and nothing it would still write reaches the store
    /// (not even the rollback SQLite attempts when the handle closes), so an
    /// open transaction leaves its hot journal for the next connection.
    pub fn kill(&mut self) -> Result<()> {
        let sqlite = self.sqlite.take().ok_or_else(|| Error::Dead {
            connection: self.label.clone(),
        })?;
        self.store.kill(self.id);
        let _active = ActiveConn::set(self.id);
        if let Err((sqlite, _)) = sqlite.close() {
            // Only outstanding statements make close fail: the dead handle is
            // leaked (safe: it is never used again), and what its files held
            // in the store goes as a dead process's descriptors do.
            std::mem::forget(sqlite);
            self.store.close_all_of(self.id);
        }
        Ok(())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let poolable = self.store.pooling.get()
            && self.changes.is_none()
            && !self.store.is_killed(self.id)
            && self.store.pool.borrow().len() < 16;
        if poolable {
            // A run left before its end (a search cut it): roll back, as
            // closing would, and keep the connection with its statements.
            let _ = self.roll_back();
        }
        let reusable = poolable
            && self.sqlite.as_ref().is_some_and(Connection::is_autocommit)
            && self.lock_level() == LockLevel::None;
        if reusable {
            if let Some(sqlite) = self.sqlite.take() {
                self.store.pool.borrow_mut().push(vfs::Pooled {
                    id: self.id,
                    db: self.db.clone(),
                    sqlite,
                    bounded: self.bounded.get(),
                    flags: self.flags.take(),
                });
                self.store.remove_conn(self.id);
                return;
            }
        }
        if let Some(sqlite) = self.sqlite.take() {
            // A graceful close: SQLite rolls back an open transaction.
            let _active = ActiveConn::set(self.id);
            if let Err((sqlite, _)) = sqlite.close() {
                std::mem::forget(sqlite);
            }
        }
        self.store.remove_conn(self.id);
    }
}

/// What [`round_trip`] saw through connection B around connection A's write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundTrip {
    /// The SQLite version that ran it.
    pub sqlite_version: &'static str,
    /// The row id connection A's insert got.
    pub written_id: i64,
    /// What B read while A's transaction was open and uncommitted.
    pub read_during_write: Vec<String>,
    /// A's lock while its transaction was open.
    pub writer_lock: String,
    /// What B read after A committed.
    pub read_after_commit: Vec<String>,
}

/// The longest note [`round_trip`] accepts, in characters.
pub const MAX_NOTE_CHARS: usize = 1000;

/// Writes `note` through connection A and reads through connection B of a
/// fresh store: while A's transaction is open B still reads the old rows
/// (none), and once A has committed B reads the note.
pub fn round_trip(note: &str) -> Result<RoundTrip> {
    let chars = note.chars().count();
    if chars == 0 || chars > MAX_NOTE_CHARS {
        return Err(Error::invalid(
            "note",
            format!("use 1 to {MAX_NOTE_CHARS} characters (got {chars})"),
        ));
    }
    let store = Store::new("round-trip")?;
    let a = store.connect("notes.db", "A")?;
    let b = store.connect("notes.db", "B")?;
    a.execute(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
        &[],
    )?;
    a.execute("BEGIN IMMEDIATE", &[])?;
    let inserted = a.execute("INSERT INTO notes (body) VALUES (?1)", &[note.into()])?;
    let writer_lock = format!("{:?}", a.lock_level()).to_uppercase();
    let read_during_write = read_notes(&b)?;
    a.execute("COMMIT", &[])?;
    let read_after_commit = read_notes(&b)?;
    Ok(RoundTrip {
        sqlite_version: sqlite_version(),
        written_id: inserted.last_insert_rowid,
        read_during_write,
        writer_lock,
        read_after_commit,
    })
}

fn read_notes(connection: &Conn) -> Result<Vec<String>> {
    let rows = connection.execute("SELECT body FROM notes ORDER BY id", &[])?;
    Ok(rows
        .rows
        .into_iter()
        .map(|row| match row.into_iter().next() {
            Some(SqlValue::Text(text)) => text,
            other => format!("{other:?}"),
        })
        .collect())
}
