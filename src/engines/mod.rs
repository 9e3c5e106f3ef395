//! The seam between the search and a database engine: what the attempt
//! interpreter and the run need of the database their attempts work on.
//!
//! Above it (the runs, the search, the format, the catalog) nothing names
//! rusqlite or the VFS store: an attempt holds [`Session`]s, one per
//! database it has opened, and asks them to run statements, to say what
//! they hold of their own (what the search's state must keep of them, or
//! "cannot"), and to die. Below it, each engine implements the traits:
//! SQLite over the VFS store ([`sqlite`]) first.
//!
//! Shaped as loom keeps its runtime private behind `loom::sync`, and as
//! turso's simulator drives its database through an `IO` trait: the code
//! above is written once against the seam; what differs by engine stays
//! behind it.

#[cfg(not(target_family = "wasm"))]
pub(crate) mod postgres;
pub(crate) mod sqlite;

pub(crate) use crate::storage::{
    Change, Counters, Death, EngineOptions, IoCall, LocalUse, LockLevel, Rows, ShmLocks, SqlValue,
    Synchronous,
};
use crate::Result;

/// How an attempt's session to one database is opened: everything the
/// engine sets on it before the attempt's first statement.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    /// The database (its file's name).
    pub(crate) db: &'a str,
    /// The attempt's label.
    pub(crate) label: &'a str,
    /// What its statements may use of the session's own state: a session
    /// is handed out as new to it.
    pub(crate) local: LocalUse,
    /// `PRAGMA synchronous` (SQLite), if the session's is to be set (a
    /// check's reader leaves it as it is).
    pub(crate) synchronous: Option<Synchronous>,
    /// The most bytes one value may take (a caller's SQL is bounded).
    pub(crate) max_value_bytes: i32,
    /// The database's own PRAGMAs, run when the session opens.
    pub(crate) pragmas: &'a str,
}

/// An engine's committed state at one moment (when an attempt was over),
/// kept to be read later ([`Engine::at`]); what it holds is the engine's.
pub(crate) type Moment = std::rc::Rc<dyn std::any::Any>;

/// A database engine as a run, its attempts and its checks see it: it
/// opens sessions, tells states apart, keeps moments to read later, and
/// where it can, injects the machine's faults and goes back to a state
/// without replaying ([`Checkpoints`]). (A check reads the committed state
/// through a session of its own.)
pub trait Engine {
    /// Opens a session as `opening` says.
    fn open(&self, opening: &Opening<'_>) -> Result<Box<dyn Session>>;
    /// Its faults (deaths at a sync, power loss, full disk, failing I/O),
    /// if it has them; `None`: a design that injects one cannot run on it.
    fn faults(&self) -> Option<&dyn Faults>;
    /// Creates database `db` run with `options`, and a session on it to
    /// write its schema and seed (its SQL bounded to values of at most
    /// `max_value_bytes`).
    fn create(
        &self,
        db: &str,
        options: EngineOptions,
        max_value_bytes: i32,
    ) -> Result<Box<dyn Session>>;
    /// Its checkpoints, if it can put its databases back as they were;
    /// `None`: the search reaches a state by replaying from the start.
    fn checkpoints(&self) -> Option<&dyn Checkpoints>;
    /// Whether sessions keep the rows they change (a recording run's).
    fn track_changes(&self, on: bool);
    /// Hashes what its databases hold into `into`, the same for the same
    /// contents whatever the path; `false` where it cannot (the run then
    /// tells its states apart by the path that led there: none is merged).
    fn digest(&self, into: &mut dyn std::hash::Hasher) -> bool;
    /// Its committed state now, kept to read later.
    fn moment(&self) -> Result<Moment>;
    /// An engine holding `moment`'s state, to read.
    fn at(&self, moment: &Moment) -> Result<Box<dyn Engine>>;
    /// A copy of its committed state (`durable`: what a power loss now
    /// would leave), to read without the locks its sessions hold.
    fn copy(&self, durable: bool) -> Result<Box<dyn Engine>>;
    /// As [`Engine::copy`], into `into`, a copy it made before (kept to be
    /// filled again at every step of a recording run).
    fn copy_into(&self, into: &dyn Engine, durable: bool) -> Result<()>;
    /// The databases it holds now, by name.
    fn databases(&self) -> Vec<String>;
    /// Itself, for an engine to find its own kind in what it is handed.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// An engine's way back to a state without replaying: its files as they
/// were, each open write transaction's journal set apart (SQLite's).
pub trait Checkpoints {
    /// Its databases now, and apart the `journals` named (the open write
    /// transactions', put back after they are redone: [`Checkpoints::put_back_missing`]).
    fn save(&self, journals: &[String])
        -> (Box<dyn std::any::Any>, Option<Box<dyn std::any::Any>>);
    /// Whether `saved` was saved by this engine.
    fn owns(&self, saved: &dyn std::any::Any) -> bool;
    /// Puts its databases back as `saved` holds them, `keep` excepted.
    fn rewind(&self, saved: &dyn std::any::Any, keep: &[String]) -> Result<()>;
    /// Runs `redo` with the pending faults set aside (a state's open
    /// transactions are redone as they were first done).
    fn without_faults(&self, redo: &mut dyn FnMut() -> Result<bool>) -> Result<bool>;
    /// Puts back each journal of `journals` the redo did not write.
    fn put_back_missing(&self, journals: &dyn std::any::Any) -> Result<()>;
}

impl Opening<'_> {
    /// A check's session on `db`: it reads the committed state, its SQL
    /// bounded as a caller's.
    pub(crate) fn reader(db: &str, max_value_bytes: i32) -> Opening<'_> {
        Opening {
            db,
            label: "check",
            local: LocalUse::WATCHED,
            synchronous: None,
            max_value_bytes,
            pragmas: "",
        }
    }
}

/// `engine`'s faults, or why a step or a sweep that injects one cannot
/// run on it.
pub(crate) fn faults_of(engine: &dyn Engine) -> Result<&dyn Faults> {
    engine.faults().ok_or_else(|| {
        crate::Error::Refused(
            "this engine cannot inject the machine's faults (a death at a sync, a power loss, a full disk, a failing write): run the design on SQLite's"
                .to_string(),
        )
    })
}

/// The machine's faults an engine injects where a step asks.
pub trait Faults {
    /// Arms a death at session `session`'s `at`th sync, for its next
    /// statement only.
    fn arm(&self, session: u64, at: u32, death: Death);
    /// Disarms what [`Faults::arm`] armed: the death if it fired, else
    /// how many syncs the statement made.
    fn disarm(&self) -> std::result::Result<Death, u32>;
    /// A power loss of the machines of `databases` (torn: each sector
    /// written since a sync kept when `torn` answers true): how many
    /// sessions died.
    fn power_loss(
        &self,
        databases: &[String],
        torn: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<usize>;
    /// The disk of `databases` full, or not.
    fn set_disk_full(&self, databases: &[String], full: bool);
    /// The next `call` on a file of `databases` fails.
    fn fail_next(&self, databases: &[String], call: IoCall);
    /// Arms a death at the `at`th sync of whichever session makes it.
    fn arm_any(&self, at: u32, death: Death);
    /// Disarms what [`Faults::arm_any`] armed: the death, if it came.
    fn disarm_any(&self) -> Option<Death>;
    /// How many power losses it has had.
    fn power_losses(&self) -> u64;
    /// Whether it keeps what is durable apart from what is written (a
    /// power loss can happen).
    fn keeps_durability(&self) -> bool;
}

/// A source of named parameters' values: a statement's `:name` asks it.
pub(crate) type Bind<'a> = &'a dyn Fn(&str) -> Option<SqlValue>;

/// One attempt's session with one database: SQLite's connection, a
/// PostgreSQL backend. It runs statements one at a time, answers what the
/// search's state must keep of it, and can be killed as its process would
/// be.
pub trait Session {
    /// Its id, unique among the sessions of its thread.
    fn id(&self) -> u64;

    /// Runs one statement to completion: its rows, or the engine's answer
    /// (a lock refused, a constraint, an error), typed on [`crate::Error`].
    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<Rows>;
    /// As [`Session::execute`], its rows not kept: a statement redone for
    /// what it does to the session (its locks, its transaction).
    fn execute_discarding(&self, sql: &str, params: &[SqlValue]) -> Result<()>;
    /// Runs one statement with named parameters, and gives the values it
    /// bound even when it fails.
    fn execute_named_bound(&self, sql: &str, bind: Bind<'_>) -> (Vec<SqlValue>, Result<Rows>);
    /// Prepares a statement without running it: the engine's refusal (a
    /// syntax error, a table it does not know) is what `check` reports.
    fn prepare(&self, sql: &str) -> Result<()>;
    /// Runs several statements, each to completion (a schema, a seed).
    fn execute_batch(&self, sql: &str) -> Result<()>;
    /// Runs a database's PRAGMAs as they run when a session opens.
    fn apply_pragmas(&self, sql: &str) -> Result<()>;
    /// Whether a transaction is open on it.
    fn in_transaction(&self) -> bool;
    /// Rolls back its open transaction, if any (whether there was one).
    fn roll_back(&self) -> Result<bool>;
    /// Whether its engine killed it under its owner (a power loss): it can
    /// only be dropped or killed now.
    fn lost_power(&self) -> bool;
    /// Kills it as if its process died: its locks go at once, and nothing
    /// it would still write reaches the database.
    fn kill(&mut self) -> Result<()>;

    /// What it holds of its own beyond the database's files, which the
    /// search's state must keep (SQLite's rule: [`crate::storage::local_use`]):
    /// whether a statement may have left something there (TEMP objects, an
    /// attached database, a PRAGMA).
    fn holds_local_state(&self) -> bool;
    /// That state as bytes, or `None` where it cannot be read back.
    fn local_image(&self) -> Option<Vec<u8>>;
    /// Whether [`Session::local_image`] can read that state back.
    fn local_state_known(&self) -> bool;
    /// Whether it has read the database's schema.
    fn schema_loaded(&self) -> bool;
    /// Reads the schema as its first statement needing it would; false
    /// where it declines (see [`crate::storage::Conn::load_schema`]).
    fn load_schema(&self) -> Result<bool>;
    /// Its counters (`last_insert_rowid()`, `changes()`, `total_changes()`).
    fn counters(&self) -> Counters;
    /// Puts back its `last_insert_rowid()` (a rewound session's).
    fn set_last_insert_rowid(&self, rowid: i64);
    /// Forgets what it cached of a database a rewind replaced.
    fn forget_stale_cache(&self) -> Result<()>;

    /// The lock it holds on its database.
    fn lock_level(&self) -> LockLevel;
    /// Its locks on the database's shared memory (WAL mode; none else).
    fn shm_locks(&self) -> ShmLocks;
    /// In WAL mode: the frames the log holds now.
    fn log_frames(&self) -> Option<u32>;
    /// In WAL mode, while it reads: the snapshot it reads, in frames.
    fn read_snapshot(&self) -> Option<u32>;
    /// The database it opened (its file's name).
    fn db(&self) -> &str;
    /// The name of its database's rollback journal.
    fn journal(&self) -> String;
    /// The rows it changed since it was last asked, if its engine tracks
    /// them (a recording run's).
    fn take_changes(&self) -> Vec<Change>;
}
