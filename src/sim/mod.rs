//! Attempts as step machines, run by an explicit, deterministic scheduler.
//!
//! An [`Attempt`] is one client (a request, a relay, a consumer) with its own
//! SQLite connection. Each call to [`Attempt::step`] runs exactly one SQL
//! statement on that connection, or one explicit non-SQL action (a crash, a
//! lost reply, a clock tick). A [`Run`] holds the attempts of one scenario
//! over one store and lets a scheduler pick, at every step, which runnable
//! attempt goes next. The run records the choices as a [`Schedule`] and, when
//! asked, a full [`TraceStep`] per step.

pub mod crash;
pub mod schedule;
pub mod scheduler;
pub mod search;
pub mod soak;
pub mod strategy;

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use serde::Serialize;

use crate::storage::footprint::{self, Footprint};
use crate::storage::{Conn, LockLevel, Rows, ShmLocks, Snapshot, SqlValue, Store};
use crate::{Error, Result};
pub use schedule::Schedule;

/// What one step did to its attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Progress {
    /// The attempt moved on to its next step.
    Progressed,
    /// SQLite answered BUSY: the attempt stays at this step and is not
    /// runnable until some connection releases a lock.
    Blocked,
    /// The attempt is over, with this outcome.
    Finished {
        /// The outcome the client saw.
        outcome: Outcome,
    },
    /// The attempt failed with an error it does not handle.
    Failed {
        /// The error.
        error: String,
        /// The bound that stopped it, if a bound did (then the run does not
        /// complete: see [`Bound`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        bound: Option<Bound>,
    },
}

/// A bound the engine sets on every run, so that every run ends. A run in
/// which an attempt is stopped by one has not completed: it is a violation,
/// whatever the scenario's own checks say (a livelock, a loop that never
/// ends), and the counterexample names the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Bound {
    /// An attempt took more steps than an attempt may take.
    Steps,
    /// A statement ran more SQLite instructions than a statement may run.
    Instructions,
    /// The run's statements together ran more SQLite instructions than a
    /// run may ([`Budgets::run_instructions`]).
    RunInstructions,
    /// The run built more bytes of values than a run may
    /// ([`Budgets::run_bytes`]).
    RunBytes,
}

/// What a run of a scenario may spend: every bound the engine puts on a
/// run, declared here once, reported with every search
/// ([`search::ExploreReport::budgets`]). A run that reaches one is stopped
/// with a sentence naming it and does not complete (a verdict, never
/// silence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budgets {
    /// Steps one attempt may take in a run (loops end here).
    pub attempt_steps: usize,
    /// SQLite VM instructions one statement may run.
    pub statement_instructions: u64,
    /// SQLite VM instructions the statements of one run may run together:
    /// a loop of slow statements ends here, within about a second or two.
    pub run_instructions: u64,
    /// Bytes of the largest string or blob a statement may make.
    pub value_bytes: u64,
    /// Bytes of values one run may build, all together: the rows its
    /// statements return and the text its templates fill in (notes,
    /// results, logs).
    pub run_bytes: u64,
    /// Bytes of committed tables a recorded run's trace may keep, every
    /// step together (a trace shows the tables after each step); past them
    /// a step's tables are left out, and the step says so.
    pub trace_bytes: u64,
    /// Bytes one file of a store (a database, its journal, its log) may
    /// hold: a write past them is SQLite's `SQLITE_FULL` ("database or disk
    /// is full").
    pub file_bytes: u64,
}

/// The budgets every run is held to.
pub const BUDGETS: Budgets = Budgets {
    attempt_steps: 1000,
    // An endless recursive query ends here.
    statement_instructions: 20_000_000,
    run_instructions: 50_000_000,
    value_bytes: 16 << 20,
    run_bytes: 32 << 20,
    trace_bytes: 16 << 20,
    file_bytes: crate::storage::vfs::MAX_FILE_BYTES as u64,
};

/// What a run has spent of its [`Budgets`] so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    /// SQLite VM instructions, all its statements together, counted a
    /// thousand at a time as SQLite's progress handler sees them: a
    /// statement of fewer than a thousand counts nothing (the step bound
    /// bounds how many of those a run takes).
    pub instructions: u64,
    /// Bytes of values it built.
    pub bytes: u64,
}

/// How an attempt ended, as its client saw it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// A short word: `created`, `replay`, `conflict`, `delivered`, `crashed`…
    pub kind: String,
    /// What the client received, as JSON text, if anything.
    pub result: Option<String>,
}

/// The outcome kind of an attempt whose process died ([`Outcome::is_crash`]).
pub const CRASHED: &str = "crashed";

impl Outcome {
    /// Whether it is the outcome of an attempt whose process died.
    pub fn is_crash(&self) -> bool {
        self.kind == CRASHED
    }

    /// An outcome without a result.
    pub fn new(kind: &str) -> Self {
        Outcome {
            kind: kind.to_string(),
            result: None,
        }
    }

    /// An outcome with a result.
    pub fn with_result(kind: &str, result: impl Into<String>) -> Self {
        Outcome {
            kind: kind.to_string(),
            result: Some(result.into()),
        }
    }
}

/// The result of a step's SQL statement.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SqlResult {
    /// The step ran no SQL.
    None,
    /// The statement succeeded.
    Rows {
        /// Column names.
        columns: Vec<String>,
        /// Result rows.
        rows: Vec<Vec<SqlValue>>,
        /// Rows changed.
        changes: u64,
    },
    /// SQLite answered `SQLITE_BUSY`.
    Busy,
    /// Any other error.
    Error {
        /// SQLite's extended result code, if SQLite produced the error.
        code: Option<i32>,
        /// The message.
        message: String,
    },
}

impl SqlResult {
    /// Converts a statement's result.
    pub fn from_result(result: &Result<Rows>) -> Self {
        match result {
            Ok(rows) => SqlResult::Rows {
                columns: rows.columns.clone(),
                rows: rows.rows.clone(),
                changes: rows.changes,
            },
            Err(e) if crate::storage::is_busy_snapshot(e) => SqlResult::Error {
                code: e.sqlite_code(),
                message: crate::storage::BUSY_SNAPSHOT.to_string(),
            },
            Err(e) if e.is_busy() => SqlResult::Busy,
            Err(e) => SqlResult::Error {
                code: e.sqlite_code(),
                message: e.to_string(),
            },
        }
    }
}

/// What an attempt reports about the step it just ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepReport {
    /// The step's name in the attempt's program ("read receipt").
    pub name: String,
    /// The SQL it ran, if any.
    pub sql: Option<String>,
    /// The database file the SQL ran on, when an attempt has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The SQL's parameters.
    pub params: Vec<SqlValue>,
    /// What the SQL returned.
    pub result: SqlResult,
    /// What the step did to the attempt.
    pub progress: Progress,
    /// One sentence saying what happened, for a person.
    pub note: String,
}

/// What an attempt sees of the others when it explains its step.
#[derive(Debug, Clone)]
pub struct Peer {
    /// The other attempt's index.
    pub index: usize,
    /// The other attempt's label.
    pub label: Rc<str>,
    /// A word for where it is in its program (an attempt's own vocabulary).
    pub phase: &'static str,
    /// Whether it has finished.
    pub finished: bool,
    /// The strongest lock its connections hold.
    pub lock: LockLevel,
    /// In WAL mode, the wal-index locks its connections hold.
    pub wal: ShmLocks,
}

impl Peer {
    /// Whether it is writing: it holds RESERVED or stronger, or in WAL mode
    /// the log's write lock.
    pub fn writing(&self) -> bool {
        self.lock >= LockLevel::Reserved || self.wal.exclusive & WAL_WRITE != 0
    }

    /// What it holds, in words ("SHARED and the WAL write lock").
    fn holds(&self) -> String {
        let mut parts = vec![level_name(self.lock)];
        let held = self.wal.shared | self.wal.exclusive;
        for (bit, words) in [
            (WAL_WRITE, "the WAL write lock"),
            (1 << 1, "the checkpoint lock"),
            (1 << 2, "the recovery lock"),
        ] {
            if held & bit != 0 {
                parts.push(words.to_string());
            }
        }
        if held & 0b1111_1000 != 0 {
            parts.push("a WAL snapshot".to_string());
        }
        match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => parts.join(""),
        }
    }
}

/// The wal-index lock of the log's one writer (slot 0).
const WAL_WRITE: u8 = 1;

/// Who holds a lock among `peers`, in words ("A holds RESERVED, B holds
/// SHARED"; in WAL mode "A holds SHARED and the WAL write lock").
pub fn locks_held(peers: &[Peer]) -> String {
    let holders: Vec<String> = peers
        .iter()
        .filter(|p| p.lock > LockLevel::None || !p.wal.is_empty())
        .map(|p| format!("{} holds {}", p.label, p.holds()))
        .collect();
    if holders.is_empty() {
        "another connection holds a lock".to_string()
    } else {
        holders.join(", ")
    }
}

/// Runs `scenario`'s attempts on `store` one after another, the lowest
/// runnable first, to completion (how a scenario's setup replays the
/// requests of the scenarios before it).
pub fn run_in_order(scenario: &dyn Scenario, store: &Store) -> Result<()> {
    let mut run = Run::start(scenario, store, false)?;
    while let Some(&next) = run.runnable().first() {
        run.step(next)?;
    }
    match run.verdict() {
        Some(Verdict::Completed) => Ok(()),
        other => Err(Error::Run(format!(
            "the earlier scenario {} did not complete in order: {other:?}",
            scenario.id()
        ))),
    }
}

/// What a step can use besides its own connection.
pub struct StepCtx<'a> {
    /// The store every attempt connects to.
    pub store: &'a Store,
    /// The other attempts, for explanations.
    pub peers: &'a [Peer],
    /// The run's virtual clock, in seconds; a clock attempt advances it.
    pub clock: &'a std::cell::Cell<i64>,
    /// Whether the report's words, SQL and rows are wanted (a recorded
    /// run); without, an attempt may leave them empty and only move on.
    pub narrate: bool,
}

impl StepCtx<'_> {
    /// The virtual time now, in seconds.
    pub fn now(&self) -> i64 {
        self.clock.get()
    }
}

/// One client with its own connection, as a step machine.
pub trait Attempt {
    /// The attempt's label ("A", "relay").
    fn label(&self) -> &str;

    /// Runs the next step. Must not panic on SQLite errors: they are results.
    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport;

    /// A word for where the attempt is in its program.
    fn phase(&self) -> &'static str;

    /// Hashes everything that determines the attempt's future: its position
    /// and everything it has read. The runner adds its lock levels. Of an
    /// attempt that saves itself ([`Attempt::save`]), only what the copy
    /// keeps: a restored attempt's hash is taken from the checkpoint.
    fn hash_state(&self, state: &mut dyn Hasher);

    /// Attempts with equal `class` and equal state behave identically, so
    /// the explorer need try only one of them (symmetry reduction).
    fn class(&self) -> u64;

    /// The connections the attempt holds, by database (`None`: not open),
    /// for lock levels and kills.
    fn connections(&self) -> &[Option<Conn>];

    /// Kills every connection of the attempt, as if its process died now.
    fn crash(&mut self);

    /// Whether the attempt is a process that can die (a clock is not).
    fn can_crash(&self) -> bool {
        true
    }

    /// An attempt that must be over before this one starts (a client's
    /// retry starts after its first request ended).
    fn waits_for(&self) -> Option<usize> {
        None
    }

    /// Whether the attempt may take its next step at virtual time `now`,
    /// given everyone's status: a redelivery due later, a clock that may not
    /// pass a deadline. A runnable attempt that is not ready is not offered
    /// to the scheduler.
    fn ready(&self, _now: i64, _statuses: &[Status]) -> bool {
        true
    }

    /// A copy of the attempt's own state, taken between steps, for
    /// [`Attempt::restore`]: which of its connections are open, and each
    /// open transaction as the statements it ran and the lock it holds (not
    /// what they cache). `None` when it cannot be copied: a transaction of
    /// its holds more than RESERVED (a commit under way may have written the
    /// database file), or the attempt keeps no copy of itself. The run
    /// shares the copy among its checkpoints until the attempt changes.
    fn save(&self) -> Option<Rc<dyn std::any::Any>> {
        None
    }

    /// Before the store's files are put back to a checkpoint where this
    /// attempt was as `saved` says: rolls back every transaction its
    /// connections have open, releasing their locks, but one that is the
    /// very transaction `saved` has open, with nothing done since (kept, as
    /// it is, locks and journal; [`Attempt::resume`] does not redo it).
    fn roll_back(&mut self, _saved: &dyn std::any::Any) {}

    /// Puts back a state [`Attempt::save`] gave (of this same attempt, in
    /// any run of the scenario), after [`Attempt::roll_back`] and the
    /// store's files were put back as they were then: the connections open
    /// then are open, their page caches holding no page the files no longer
    /// have, and no others. False when `saved` is not its.
    fn restore(&mut self, _saved: &dyn std::any::Any, _store: &Store) -> Result<bool> {
        Ok(false)
    }

    /// After [`Attempt::restore`], runs again the statements of the
    /// transactions its connections had open then: those that held no more
    /// than SHARED (`writers` false), or those that held RESERVED. The run
    /// redoes every reader's before any writer's, as they happened: a
    /// reader could start beside RESERVED, and a writer's commit that was
    /// refused must be refused again.
    fn resume(&mut self, _writers: bool) -> Result<()> {
        Ok(())
    }
}

/// Where an attempt is, as the runner sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Status {
    /// Can take a step.
    Runnable,
    /// Waiting for a lock to be released.
    Blocked,
    /// Not started: waiting for another attempt to be over.
    Waiting {
        /// The attempt it waits for.
        on: usize,
    },
    /// Over.
    Finished {
        /// The outcome.
        outcome: Outcome,
    },
    /// Failed with an unhandled error.
    Failed {
        /// The error.
        error: String,
        /// The bound that stopped it, if a bound did.
        #[serde(skip_serializing_if = "Option::is_none")]
        bound: Option<Bound>,
    },
}

impl Status {
    /// Whether the attempt is over (finished or failed).
    pub fn is_over(&self) -> bool {
        matches!(self, Status::Finished { .. } | Status::Failed { .. })
    }
}

/// One connection's lock after a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockView {
    /// The attempt owning the connection.
    pub attempt: String,
    /// Its lock level, written `NONE`, `SHARED`, `RESERVED`, `PENDING` or
    /// `EXCLUSIVE` in the JSON and the trace.
    #[serde(serialize_with = "serialize_level")]
    pub level: LockLevel,
    /// In WAL mode, its locks on the wal-index: `WRITE` (the one writer),
    /// `CKPT` (checkpointing), `RECOVER`, and `READ0`..`READ4` (the read
    /// slot its snapshot is pinned by); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wal: Vec<String>,
    /// In WAL mode, the snapshot it reads: the number of WAL frames it sees
    /// (0: the database file alone), while it holds a read slot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u32>,
    /// With a snapshot: how many frames the log holds now (more than the
    /// snapshot sees: the snapshot is stale, and its holder may not write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_frames: Option<u32>,
}

impl LockView {
    /// What attempt `label` holds through its connections `conns`.
    fn of(label: &str, conns: &[&Conn]) -> LockView {
        let level = conns
            .iter()
            .map(|c| c.lock_level())
            .max()
            .unwrap_or(LockLevel::None);
        let mut wal = Vec::new();
        let mut snapshot = None;
        let mut log_frames = None;
        for conn in conns {
            let shm = conn.shm_locks();
            for (i, name) in crate::storage::shm::SLOT_NAMES.iter().enumerate() {
                let bit = 1u8 << i;
                if (shm.shared | shm.exclusive) & bit != 0 && !wal.iter().any(|w| w == name) {
                    wal.push((*name).to_string());
                }
            }
            if snapshot.is_none() {
                snapshot = conn.read_snapshot();
                log_frames = snapshot.and_then(|_| conn.log_frames());
            }
        }
        LockView {
            attempt: label.to_string(),
            level,
            wal,
            snapshot,
            log_frames,
        }
    }
}

/// A row changed by a step, as the stepping connection sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RowChange {
    /// The database file.
    pub db: String,
    /// The table.
    pub table: String,
    /// What the step did to the row (`insert`, `update`, `delete`).
    pub op: crate::storage::ChangeOp,
    /// The rowid.
    pub rowid: i64,
}

/// One step of a recorded run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceStep {
    /// Step number, from 0.
    pub index: usize,
    /// The attempt that stepped (its index).
    pub attempt: usize,
    /// The attempt's label.
    pub label: String,
    /// What the attempt reported.
    #[serde(flatten)]
    pub report: StepReport,
    /// Every attempt's locks after the step.
    pub locks: Vec<LockView>,
    /// Rows the step changed.
    pub changes: Vec<RowChange>,
    /// Committed contents of every table after the step, by database and
    /// table (empty when left out: see `tables_left_out`).
    pub tables: BTreeMap<String, BTreeMap<String, Table>>,
    /// Whether the tables were left out because the trace already held
    /// what a recorded run may keep of them ([`Budgets::trace_bytes`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tables_left_out: bool,
}

/// About how many bytes the values of `tables` take (each database's
/// tables by name), to hold them to [`Budgets::trace_bytes`].
pub fn tables_size(tables: &BTreeMap<String, BTreeMap<String, Table>>) -> u64 {
    tables
        .values()
        .flat_map(BTreeMap::values)
        .flat_map(|t| &t.rows)
        .flatten()
        .map(|v| v.size() as u64)
        .sum()
}

/// A table's committed rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows in rowid order.
    pub rows: Vec<Vec<SqlValue>>,
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Verdict {
    /// Every attempt is over.
    Completed,
    /// Unfinished attempts remain and none can run.
    Deadlock {
        /// Who waits for whom, one sentence per blocked attempt.
        waits: Vec<String>,
    },
    /// The run goes round for ever: after step `to` it is back in the state
    /// it was in after step `from` (0: at the start), and can take steps
    /// `from + 1` to `to` again and again ([`Schedule::lasso`]).
    Loops {
        /// Steps before the cycle.
        from: usize,
        /// Steps up to the end of the first round.
        to: usize,
    },
}

/// A scenario's check after a run: expected against actual.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// The expected value, as text.
    pub expected: String,
    /// The actual value, as text.
    pub actual: String,
    /// Whether they agree.
    pub pass: bool,
}

impl Check {
    /// A check comparing two displayable values.
    pub fn equal(name: &str, expected: impl ToString, actual: impl ToString) -> Self {
        let (expected, actual) = (expected.to_string(), actual.to_string());
        Check {
            name: name.to_string(),
            pass: expected == actual,
            expected,
            actual,
        }
    }
}

/// Whether an attempt's locks `after` a step are weaker than `before` it: its
/// strongest level lowered, or a wal-index lock let go.
fn released(before: &[(LockLevel, ShmLocks)], after: &[(LockLevel, ShmLocks)]) -> bool {
    let slots = |locks| {
        let wal = wal_held(locks);
        wal.shared | wal.exclusive
    };
    strongest(after) < strongest(before) || slots(before) & !slots(after) != 0
}

/// The strongest level an attempt's connections hold.
fn strongest(locks: &[(LockLevel, ShmLocks)]) -> LockLevel {
    locks
        .iter()
        .map(|(l, _)| *l)
        .max()
        .unwrap_or(LockLevel::None)
}

/// The wal-index locks an attempt's connections hold together.
fn wal_held(locks: &[(LockLevel, ShmLocks)]) -> ShmLocks {
    locks
        .iter()
        .fold(ShmLocks::default(), |all, (_, shm)| all.union(*shm))
}

/// A scenario the scheduler can run: a store set up once, a set of attempts,
/// and the checks that must hold when they are over.
pub trait Scenario {
    /// A stable, URL-safe id.
    fn id(&self) -> &str;
    /// The parameter values it runs with, by name (defaults filled in).
    fn params(&self) -> serde_json::Map<String, serde_json::Value>;
    /// Creates the schema and any rows the attempts start from, in the
    /// scenario's journal mode.
    fn setup(&self, store: &Store) -> Result<()>;
    /// The journal mode its databases run in.
    fn journal(&self) -> crate::storage::Journal {
        crate::storage::Journal::default()
    }
    /// Fresh attempts, in their order (attempt 0 is `A`).
    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>>;
    /// The database files whose tables a trace shows.
    fn databases(&self) -> Vec<&'static str>;
    /// The PRAGMAs every attempt's connection to `db` runs when it opens.
    fn pragmas(&self, _db: &str) -> String {
        String::new()
    }
    /// The checks after a run.
    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>>;
    /// Whether the scenario has invariants to check after every step.
    fn has_invariants(&self) -> bool {
        false
    }
    /// Whether a check reads the committed state as it was when attempt
    /// `attempt` was over (so the moment it ends is observed).
    fn observes_end_of(&self, _attempt: usize) -> bool {
        true
    }
    /// The invariants, evaluated on the committed state `committed` (one
    /// check each, in a fixed order).
    fn invariants(&self, _committed: &Store) -> Result<Vec<Check>> {
        Ok(Vec::new())
    }
    /// What its author declared of it (`fails`), when the declaration
    /// applies to the parameters it runs with: a declaration is of the
    /// default parameters.
    fn declared(&self) -> Option<Declared> {
        None
    }
}

/// What a scenario's author declared: that some schedule breaks it, or
/// that none does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Declared {
    /// `fails = true`: some schedule violates its checks.
    Fails,
    /// `fails = false` (the default): no schedule does.
    Holds,
}

impl Declared {
    /// Whether a verdict agrees with the declaration: `failed`, whether a
    /// failing run was found; `proved`, whether every schedule was covered.
    /// `None` when the verdict cannot tell (no failing run found by a
    /// search that did not cover every schedule).
    pub fn agrees(self, failed: bool, proved: bool) -> Option<bool> {
        match (failed, proved) {
            (true, _) => Some(self == Declared::Fails),
            (false, true) => Some(self == Declared::Holds),
            (false, false) => None,
        }
    }

    /// A verdict judged against the declaration.
    pub fn judge(self, failed: bool, proved: bool) -> AsDeclared {
        AsDeclared {
            declared: self,
            as_declared: self.agrees(failed, proved),
            verdict_as_declared: self.describe(failed, proved),
        }
    }

    /// The verdict and the declaration, in words: "fails, as declared",
    /// "holds, but this design is declared to fail".
    pub fn describe(self, failed: bool, proved: bool) -> String {
        let verdict = match (failed, proved) {
            (true, _) => "fails",
            (false, true) => "holds",
            (false, false) => "no violation found, not every schedule covered",
        };
        let declared = match self {
            Declared::Fails => "declared to fail",
            Declared::Holds => "declared to hold",
        };
        match self.agrees(failed, proved) {
            Some(true) => format!("{verdict}, as declared"),
            Some(false) => format!("{verdict}, but this design is {declared}"),
            None => format!("{verdict}: this design is {declared}"),
        }
    }
}

/// A verdict beside its scenario's declaration (JSON: `declared`,
/// `asDeclared`, `verdictAsDeclared`, flattened into the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AsDeclared {
    /// What the author declared.
    pub declared: Declared,
    /// Whether the verdict agrees (`None` when it cannot tell: see
    /// [`Declared::agrees`]).
    pub as_declared: Option<bool>,
    /// Both in words ([`Declared::describe`]).
    pub verdict_as_declared: String,
}

/// What a scenario's checks see of a run that stopped.
pub struct Ended<'a> {
    /// A copy of the run's store: reading it takes no lock the attempts hold.
    pub committed: &'a Store,
    /// Every attempt's status.
    pub statuses: &'a [Status],
    /// The store's files when each attempt was over.
    pub at_end: &'a [Option<Rc<Snapshot>>],
}

impl Ended<'_> {
    /// The outcome of attempt `index`, if it finished.
    pub fn outcome(&self, index: usize) -> Option<&Outcome> {
        match self.statuses.get(index) {
            Some(Status::Finished { outcome }) => Some(outcome),
            _ => None,
        }
    }

    /// The kind of attempt `index`'s outcome, or how it did not finish.
    pub fn kind(&self, index: usize) -> String {
        match self.statuses.get(index) {
            Some(Status::Finished { outcome }) => outcome.kind.clone(),
            Some(Status::Failed { error, .. }) => format!("failed: {error}"),
            Some(_) => "not finished".to_string(),
            None => "no such attempt".to_string(),
        }
    }

    /// The result of attempt `index`'s outcome.
    pub fn result(&self, index: usize) -> Option<&str> {
        self.outcome(index).and_then(|o| o.result.as_deref())
    }

    /// A store holding the committed state as it was when attempt `index`
    /// was over (`None` if it never was).
    pub fn store_at_end_of(&self, index: usize) -> Result<Option<Store>> {
        match self.at_end.get(index) {
            Some(Some(snapshot)) => Ok(Some(Store::from_snapshot("at-end", snapshot)?)),
            _ => Ok(None),
        }
    }
}

/// The state a scheduler picks from: who can run, and who ran last.
#[derive(Debug, Clone)]
pub struct Choice<'a> {
    /// Indices of the runnable attempts, ascending.
    pub runnable: &'a [usize],
    /// The number of steps taken so far.
    pub step: usize,
    /// The attempt that took the previous step.
    pub last: Option<usize>,
    /// Every attempt's status.
    pub statuses: &'a [Status],
}

/// One run of a scenario: its attempts over a store, stepped one at a time.
pub struct Run<'s> {
    scenario: &'s dyn Scenario,
    store: &'s Store,
    attempts: Vec<Box<dyn Attempt>>,
    statuses: Vec<Status>,
    choices: Vec<usize>,
    trace: Option<Vec<TraceStep>>,
    /// A scratch store the committed tables are read from when recording.
    observer: Option<Store>,
    /// The store's files when each attempt was over.
    at_end: Vec<Option<Rc<Snapshot>>>,
    /// A hash of those files, for the attempts a check observes there.
    at_end_hash: Vec<Option<u64>>,
    /// What the last step touched, and the attempts it let run again.
    last_effects: (Footprint, Vec<usize>),
    /// The virtual clock, in seconds.
    clock: std::cell::Cell<i64>,
    /// Per invariant, the first step after which it did not hold and how.
    broken: Vec<Option<(usize, Check)>>,
    /// Every attempt's locks as [`Run::locks`] last read them: only a step
    /// or a crash changes them, and the search asks after every step.
    locks_now: std::cell::RefCell<Option<Rc<Locks>>>,
    /// Each attempt's own state hashed ([`Attempt::hash_state`]), while the
    /// attempt is unchanged: only its step, its crash and a restore change
    /// an attempt, and the search hashes every attempt after every step.
    state_hashes: Vec<std::cell::Cell<Option<u64>>>,
    /// Each attempt's copy ([`Attempt::save`]) while the attempt is
    /// unchanged, as the state hashes: a checkpoint after a step copies only
    /// the attempt that took it, and shares the others' with the one before.
    saved: Vec<std::cell::RefCell<Option<Rc<dyn std::any::Any>>>>,
    /// Each attempt's key ([`Run::attempt_key`]) while neither the attempt,
    /// its locks, its status nor its end changed: its own step, its crash
    /// or a restore, or another's step or crash that wakes it.
    keys: Vec<std::cell::Cell<Option<u64>>>,
    /// Each attempt's label, for its peers' explanations (shared, not
    /// copied at every step).
    labels: Vec<Rc<str>>,
    /// What it has spent of its [`BUDGETS`] (put back with the rest by a
    /// restore: a run rewound to a checkpoint has spent what it had then).
    spent: Spent,
    /// Bytes of tables its trace holds ([`Budgets::trace_bytes`]).
    trace_bytes: u64,
}

/// The hasher of state keys (see [`crate::storage::vfs::fixed_hasher`]).
pub use crate::storage::vfs::fixed_hasher as state_hasher;

/// Every lock each attempt holds, connection by connection (see [`Run::locks`]).
pub type Locks = Vec<Vec<(LockLevel, ShmLocks)>>;

/// A run's whole state between two steps, to go back to without replaying
/// the steps that led there (see [`Run::checkpoint`]).
pub struct Checkpoint {
    files: Snapshot,
    attempts: Vec<Rc<dyn std::any::Any>>,
    /// Each attempt's own state hashed, where the run had it then: an
    /// attempt's [`Attempt::hash_state`] reads only what its copy keeps.
    hashes: Vec<Option<u64>>,
    /// Every attempt's locks and key, where the run knew them then (each a
    /// function of what a restore puts back; debug builds check both
    /// against a fresh reading after every restore).
    locks: Option<Rc<Locks>>,
    keys: Vec<Option<u64>>,
    statuses: Vec<Status>,
    choices: Vec<usize>,
    at_end: Vec<Option<Rc<Snapshot>>>,
    at_end_hash: Vec<Option<u64>>,
    clock: i64,
    broken: Vec<Option<(usize, Check)>>,
    spent: Spent,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("steps", &self.choices.len())
            .field("files", &self.files.files())
            .finish_non_exhaustive()
    }
}

/// A lock level as SQLite's documentation writes it: `RESERVED`.
fn level_name(level: LockLevel) -> String {
    format!("{level:?}").to_uppercase()
}

fn serialize_level<S: serde::Serializer>(level: &LockLevel, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(&level_name(*level))
}

impl<'s> Run<'s> {
    /// Starts a run on `store`, which must hold the scenario's set-up state
    /// and no open connection. With `record`, every step is traced in full.
    pub fn start(scenario: &'s dyn Scenario, store: &'s Store, record: bool) -> Result<Self> {
        let attempts = scenario.attempts()?;
        if attempts.is_empty() || attempts.len() > schedule::MAX_ATTEMPTS {
            return Err(Error::invalid(
                "attempts",
                format!("a scenario has 1 to {} attempts", schedule::MAX_ATTEMPTS),
            ));
        }
        store.set_track_changes(record);
        let mut statuses = Vec::with_capacity(attempts.len());
        for (i, attempt) in attempts.iter().enumerate() {
            statuses.push(match attempt.waits_for() {
                None => Status::Runnable,
                Some(on) if on < attempts.len() && on != i => Status::Waiting { on },
                Some(on) => {
                    return Err(Error::invalid(
                        "attempts",
                        format!(
                            "attempt {} cannot wait for attempt {}",
                            Schedule::letter(i),
                            Schedule::letter(on)
                        ),
                    ))
                }
            });
        }
        let at_end = vec![None; attempts.len()];
        let at_end_hash = vec![None; attempts.len()];
        let state_hashes = vec![std::cell::Cell::new(None); attempts.len()];
        let keys = vec![std::cell::Cell::new(None); attempts.len()];
        let labels = attempts.iter().map(|a| Rc::from(a.label())).collect();
        let saved = (0..attempts.len())
            .map(|_| std::cell::RefCell::new(None))
            .collect();
        Ok(Run {
            scenario,
            store,
            attempts,
            statuses,
            choices: Vec::new(),
            trace: record.then(Vec::new),
            observer: if record {
                Some(Store::new("observer")?)
            } else {
                None
            },
            at_end,
            at_end_hash,
            last_effects: (Footprint::default(), Vec::new()),
            clock: std::cell::Cell::new(0),
            broken: Vec::new(),
            locks_now: std::cell::RefCell::new(None),
            state_hashes,
            saved,
            keys,
            labels,
            spent: Spent::default(),
            trace_bytes: 0,
        })
    }

    /// What it has spent of its [`BUDGETS`] so far.
    pub fn spent(&self) -> Spent {
        self.spent
    }

    /// Evaluates the scenario's invariants on the committed state after
    /// step `index` and keeps the first failure of each.
    fn check_invariants(&mut self, index: usize) -> Result<()> {
        if !self.scenario.has_invariants() {
            return Ok(());
        }
        let copy = Store::new("invariants")?;
        copy.copy_files_from(self.store)?;
        let checks = self.scenario.invariants(&copy)?;
        if self.broken.len() < checks.len() {
            self.broken.resize(checks.len(), None);
        }
        for (slot, check) in self.broken.iter_mut().zip(checks) {
            if slot.is_none() && !check.pass {
                *slot = Some((index, check));
            }
        }
        Ok(())
    }

    /// A store holding the committed state as it was when attempt `index`
    /// was over (`None` if it is not over).
    pub fn store_at_end_of(&self, index: usize) -> Result<Option<Store>> {
        match self.at_end.get(index) {
            Some(Some(snapshot)) => Ok(Some(Store::from_snapshot("at-end", snapshot)?)),
            _ => Ok(None),
        }
    }

    /// Whether attempt `index` is a process that can die.
    pub fn can_crash(&self, index: usize) -> bool {
        self.attempts.get(index).is_some_and(|a| a.can_crash())
    }

    /// The store the run works on.
    pub fn store(&self) -> &'s Store {
        self.store
    }

    /// The database files of the run's scenario.
    pub fn databases(&self) -> Vec<&'static str> {
        self.scenario.databases()
    }

    /// The virtual time, in seconds.
    pub fn now(&self) -> i64 {
        self.clock.get()
    }

    /// Indices of the attempts that can take a step, ascending.
    pub fn runnable(&self) -> Vec<usize> {
        let now = self.clock.get();
        (0..self.attempts.len())
            .filter(|&i| {
                matches!(self.statuses[i], Status::Runnable)
                    && self.attempts[i].ready(now, &self.statuses)
            })
            .collect()
    }

    /// Every attempt's status.
    pub fn statuses(&self) -> &[Status] {
        &self.statuses
    }

    /// The attempts' labels.
    pub fn labels(&self) -> Vec<String> {
        self.attempts
            .iter()
            .map(|a| a.label().to_string())
            .collect()
    }

    /// The choices made so far.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.choices.clone())
    }

    /// The number of steps taken.
    pub fn steps(&self) -> usize {
        self.choices.len()
    }

    /// The trace so far, if the run records one.
    pub fn trace(&self) -> Option<&[TraceStep]> {
        self.trace.as_deref()
    }

    /// Whether no attempt can take a step (all over, or deadlocked).
    pub fn is_stopped(&self) -> bool {
        self.runnable().is_empty()
    }

    /// The lock level of each attempt (the strongest of its connections).
    pub fn lock_levels(&self) -> Vec<LockLevel> {
        self.locks().iter().map(|l| strongest(l)).collect()
    }

    /// Every lock each attempt holds, connection by connection: the level on
    /// the database file and, in WAL mode, the shared-memory locks.
    pub fn locks(&self) -> Rc<Locks> {
        if let Some(known) = self.locks_now.borrow().as_ref() {
            return Rc::clone(known);
        }
        let read = Rc::new(self.read_locks());
        *self.locks_now.borrow_mut() = Some(Rc::clone(&read));
        read
    }

    /// Every attempt's locks after attempt `stepped` took a step from
    /// `before`: a step changes its own attempt's locks and no other's (a
    /// connection's locks change only by its own calls, and a crash is not a
    /// step), so only those are read again.
    fn locks_after_step(&self, before: &Locks, stepped: usize) -> Rc<Locks> {
        let mut locks = before.clone();
        let conns: Vec<&Conn> = self.attempts[stepped]
            .connections()
            .iter()
            .flatten()
            .collect();
        let levels = Conn::lock_levels(&conns);
        locks[stepped] = conns
            .iter()
            .zip(levels)
            .map(|(c, level)| (level, c.shm_locks()))
            .collect();
        debug_assert_eq!(
            locks,
            self.read_locks(),
            "a step changed another attempt's locks"
        );
        let locks = Rc::new(locks);
        *self.locks_now.borrow_mut() = Some(Rc::clone(&locks));
        locks
    }

    fn read_locks(&self) -> Locks {
        let all: Vec<&Conn> = self
            .attempts
            .iter()
            .flat_map(|a| a.connections().iter().flatten())
            .collect();
        let mut levels = Conn::lock_levels(&all).into_iter();
        self.attempts
            .iter()
            .map(|a| {
                a.connections()
                    .iter()
                    .flatten()
                    .map(|c| (levels.next().unwrap_or(LockLevel::None), c.shm_locks()))
                    .collect()
            })
            .collect()
    }

    /// Hashes the whole state: the store's bytes and every attempt's state,
    /// status and lock. With `symmetric`, interchangeable attempts (same
    /// class, same state) are hashed as a multiset, so permutations of them
    /// count as one state.
    pub fn state_key(&self, symmetric: bool) -> u64 {
        self.state_key_with(symmetric, self.attempt_keys())
    }

    /// [`Run::state_key`] from the attempts' keys ([`Run::attempt_keys`]).
    pub fn state_key_with(&self, symmetric: bool, mut parts: Vec<u64>) -> u64 {
        let mut hasher = state_hasher();
        self.store.hash_files(&mut hasher);
        self.clock.get().hash(&mut hasher);
        if symmetric {
            parts.sort_unstable();
        }
        parts.hash(&mut hasher);
        // A path that broke an invariant differs from one that did not.
        for slot in &self.broken {
            slot.is_some().hash(&mut hasher);
        }
        hasher.finish()
    }

    /// Hashes one attempt's class, state, status and locks (`locks`, the
    /// run's own: [`Run::locks`]).
    fn attempt_key(&self, index: usize, locks: &[(LockLevel, ShmLocks)]) -> u64 {
        if let Some(known) = self.keys[index].get() {
            debug_assert_eq!(
                known,
                self.hash_attempt(index, locks),
                "attempt {index}'s key changed while it was kept"
            );
            return known;
        }
        let key = self.hash_attempt(index, locks);
        self.keys[index].set(Some(key));
        key
    }

    fn hash_attempt(&self, index: usize, locks: &[(LockLevel, ShmLocks)]) -> u64 {
        let attempt = self.attempts[index].as_ref();
        let mut hasher = state_hasher();
        attempt.class().hash(&mut hasher);
        let own = match self.state_hashes[index].get() {
            Some(known) => known,
            None => {
                let mut own = state_hasher();
                attempt.hash_state(&mut own);
                let own = own.finish();
                self.state_hashes[index].set(Some(own));
                own
            }
        };
        own.hash(&mut hasher);
        // The strongest level; then, in WAL mode, the wal-index locks of
        // each connection that holds any.
        (strongest(locks) as u8).hash(&mut hasher);
        for (_, shm) in locks.iter().filter(|(_, shm)| !shm.is_empty()) {
            shm.hash(&mut hasher);
        }
        // What a check will read of the moment it ended.
        self.at_end_hash[index].hash(&mut hasher);
        match &self.statuses[index] {
            Status::Runnable => 0u8.hash(&mut hasher),
            Status::Blocked => 1u8.hash(&mut hasher),
            Status::Waiting { on } => {
                4u8.hash(&mut hasher);
                on.hash(&mut hasher);
            }
            Status::Finished { outcome } => {
                2u8.hash(&mut hasher);
                outcome.hash(&mut hasher);
            }
            Status::Failed { error, bound } => {
                3u8.hash(&mut hasher);
                error.hash(&mut hasher);
                bound.hash(&mut hasher);
            }
        }
        hasher.finish()
    }

    /// Forgets what was kept of attempt `index` while it was unchanged (its
    /// state hash, its copy): it took a step, crashed or was restored.
    fn changed(&self, index: usize) {
        self.state_hashes[index].set(None);
        self.keys[index].set(None);
        self.saved[index].borrow_mut().take();
    }

    /// Every attempt's key: its class, state, status and locks hashed (see
    /// [`Run::attempt_key`]). Equal keys in one run mean interchangeable attempts.
    pub fn attempt_keys(&self) -> Vec<u64> {
        let locks = self.locks();
        (0..self.attempts.len())
            .map(|i| self.attempt_key(i, &locks[i]))
            .collect()
    }

    /// Attempt `index`'s class: attempts of one class run the same program.
    pub fn class_of(&self, index: usize) -> u64 {
        self.attempts.get(index).map_or(0, |a| a.class())
    }

    /// The runnable attempts, keeping one of each group of interchangeable
    /// ones (same class, state, status and lock).
    pub fn distinct_runnable(&self) -> Vec<usize> {
        let locks = self.locks();
        let mut seen = Vec::new();
        let mut distinct = Vec::new();
        for i in self.runnable() {
            let key = self.attempt_key(i, &locks[i]);
            if !seen.contains(&key) {
                seen.push(key);
                distinct.push(i);
            }
        }
        distinct
    }

    fn peers(&self, except: usize, locks: &[Vec<(LockLevel, ShmLocks)>]) -> Vec<Peer> {
        self.attempts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != except)
            .map(|(i, a)| Peer {
                index: i,
                label: Rc::clone(&self.labels[i]),
                phase: a.phase(),
                finished: self.statuses[i].is_over(),
                lock: strongest(&locks[i]),
                wal: wal_held(&locks[i]),
            })
            .collect()
    }

    fn runnable_labels(&self) -> String {
        let labels: Vec<&str> = self
            .runnable()
            .into_iter()
            .map(|i| self.attempts[i].label())
            .collect();
        if labels.is_empty() {
            "none".to_string()
        } else {
            labels.join(", ")
        }
    }

    /// Lets attempt `attempt` take its next step; returns its progress.
    pub fn step(&mut self, attempt: usize) -> Result<Progress> {
        if !self.runnable().contains(&attempt) {
            let Some(known) = self.attempts.get(attempt) else {
                let name = u8::try_from(attempt).ok().filter(|&i| i < 26).map_or_else(
                    || format!("#{attempt}"),
                    |i| char::from(b'A' + i).to_string(),
                );
                return Err(Error::invalid(
                    "attempt",
                    format!(
                        "there is no attempt {name}: this scenario has attempts {}",
                        self.labels().join(", ")
                    ),
                ));
            };
            return Err(Error::invalid(
                "attempt",
                format!(
                    "{} cannot take a step now (runnable: {})",
                    known.label(),
                    self.runnable_labels()
                ),
            ));
        }
        let before = self.locks();
        let peers = self.peers(attempt, &before);
        let ctx = StepCtx {
            store: self.store,
            peers: &peers,
            clock: &self.clock,
            narrate: self.trace.is_some(),
        };
        let time = self.clock.get();
        // Attempts are at most 26 (schedule::MAX_ATTEMPTS): one bit each.
        let idle_before: u64 = self
            .statuses
            .iter()
            .enumerate()
            .filter(|(_, s)| !matches!(s, Status::Runnable))
            .fold(0, |bits, (i, _)| bits | 1 << i);
        // A caller that wants the engine back is heard before each step,
        // and inside a long statement (which SQLite then stops): the run
        // is abandoned, and nothing of it counts.
        if crate::storage::interrupt_due() {
            return Err(Error::Interrupted);
        }
        crate::storage::take_interrupted();
        footprint::begin();
        let (report, instructions, bytes) = crate::storage::with_run_budget(
            BUDGETS
                .run_instructions
                .saturating_sub(self.spent.instructions),
            BUDGETS.run_bytes.saturating_sub(self.spent.bytes),
            || self.attempts[attempt].step(&ctx),
        );
        self.spent.instructions += instructions;
        self.spent.bytes += bytes;
        if crate::storage::take_interrupted() {
            footprint::end();
            return Err(Error::Interrupted);
        }
        self.changed(attempt);
        let mut touched = footprint::end();
        if self.clock.get() != time {
            touched.global = true;
        }
        self.choices.push(attempt);
        self.statuses[attempt] = match &report.progress {
            Progress::Progressed => Status::Runnable,
            Progress::Blocked => Status::Blocked,
            Progress::Finished { outcome } => Status::Finished {
                outcome: outcome.clone(),
            },
            Progress::Failed { error, bound } => Status::Failed {
                error: error.clone(),
                bound: *bound,
            },
        };
        let after = self.locks_after_step(&before, attempt);
        // A released lock (or an attempt that is over) may let the blocked ones through.
        let released = before.iter().zip(after.iter()).any(|(b, a)| released(b, a))
            || self.statuses[attempt].is_over();
        if released {
            // Whom it lets through depends on who is blocked now (it writes
            // those it lets through, below).
            touched.reads_blocked = u32::MAX;
            for (i, status) in self.statuses.iter_mut().enumerate() {
                if *status == Status::Blocked && i != attempt {
                    *status = Status::Runnable;
                }
            }
        }
        if self.statuses[attempt] == Status::Blocked {
            // Blocked now, it waits for the next release: which release lets
            // it through depends on the order.
            touched.writes_blocked |= 1 << attempt;
        }
        if self.statuses[attempt].is_over() {
            self.at_end[attempt] = Some(Rc::new(self.store.snapshot()));
            // Its status changes what waiters and status readers see.
            touched.writes_status |= 1 << attempt;
            if self.scenario.observes_end_of(attempt) {
                // A check reads the whole committed state as of now.
                touched.reads = u64::MAX;
                let mut hasher = state_hasher();
                self.store.hash_files(&mut hasher);
                self.at_end_hash[attempt] = Some(hasher.finish());
            }
            for status in self.statuses.iter_mut() {
                if *status == (Status::Waiting { on: attempt }) {
                    *status = Status::Runnable;
                }
            }
        }
        let woken: Vec<usize> = (0..self.statuses.len())
            .filter(|&i| {
                i != attempt
                    && matches!(self.statuses[i], Status::Runnable)
                    && idle_before & (1 << i) != 0
            })
            .collect();
        for &i in &woken {
            touched.writes_blocked |= 1 << i;
            self.keys[i].set(None);
        }
        self.last_effects = (touched, woken);
        self.check_invariants(self.choices.len() - 1)?;
        let progress = report.progress.clone();
        if self.trace.is_some() {
            let changes = self.attempts[attempt]
                .connections()
                .iter()
                .flatten()
                .flat_map(|c| {
                    let db = c.db().to_string();
                    c.take_changes().into_iter().map(move |ch| RowChange {
                        db: db.clone(),
                        table: ch.table,
                        op: ch.op,
                        rowid: ch.rowid,
                    })
                })
                .collect();
            let mut step = TraceStep {
                index: self.choices.len() - 1,
                attempt,
                label: self.attempts[attempt].label().to_string(),
                report,
                locks: self
                    .attempts
                    .iter()
                    .map(|a| {
                        let conns: Vec<&Conn> = a.connections().iter().flatten().collect();
                        LockView::of(a.label(), &conns)
                    })
                    .collect(),
                changes,
                tables: BTreeMap::new(),
                tables_left_out: true,
            };
            if self.trace_bytes < BUDGETS.trace_bytes {
                let tables = self.committed_tables()?;
                self.trace_bytes += tables_size(&tables);
                if self.trace_bytes <= BUDGETS.trace_bytes {
                    step.tables = tables;
                    step.tables_left_out = false;
                }
            }
            if let Some(trace) = &mut self.trace {
                trace.push(step);
            }
        }
        Ok(progress)
    }

    /// The run's state now, if it can be put back ([`Run::restore`]) without
    /// replaying its steps: every attempt's own state, the store's files,
    /// and each open transaction as the statements it ran. A transaction
    /// holding more than RESERVED (a commit under way) may have written the
    /// database file: then none is taken. A writer's journal is left out
    /// (redoing its statements writes it again); a hot journal a killed
    /// connection left is kept. Not in WAL mode (a connection remembers the
    /// wal-index it last read), nor while recording.
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        if self.trace.is_some() || self.scenario.journal() == crate::storage::Journal::Wal {
            return None;
        }
        let attempts = self
            .attempts
            .iter()
            .zip(&self.saved)
            .map(|(attempt, kept)| {
                if let Some(saved) = kept.borrow().as_ref() {
                    return Some(Rc::clone(saved));
                }
                let saved = attempt.save()?;
                *kept.borrow_mut() = Some(Rc::clone(&saved));
                Some(saved)
            })
            .collect::<Option<Vec<_>>>()?;
        let (journals, strongest) = self.writers_journals();
        if strongest > LockLevel::Reserved {
            return None;
        }
        let files = self.store.snapshot();
        Some(Checkpoint {
            files: if journals.is_empty() {
                files
            } else {
                files.without(&journals)
            },
            attempts,
            hashes: self.state_hashes.iter().map(std::cell::Cell::get).collect(),
            locks: self.locks_now.borrow().clone(),
            keys: self.keys.iter().map(std::cell::Cell::get).collect(),
            statuses: self.statuses.clone(),
            choices: self.choices.clone(),
            at_end: self.at_end.clone(),
            at_end_hash: self.at_end_hash.clone(),
            clock: self.clock.get(),
            broken: self.broken.clone(),
            spent: self.spent,
        })
    }

    /// Goes back to `checkpoint`, taken of a run of the same scenario on the
    /// same store: every attempt's connections roll back what they have
    /// open, the files are put back, each attempt takes back its state and
    /// the connections it had, and the transactions open then are redone
    /// (the readers', then the writers'). False when the checkpoint
    /// is not of this scenario's attempts; after `false` or an error the run
    /// is in no defined state and must not be stepped.
    pub fn restore(&mut self, checkpoint: &Checkpoint) -> Result<bool> {
        if self.trace.is_some()
            || checkpoint.attempts.len() != self.attempts.len()
            || !checkpoint.files.is_of(self.store)
        {
            return Ok(false);
        }
        // An attempt that has not changed since the copy the checkpoint
        // holds was taken (nor been restored since to another) is as it was
        // then: the steps since were others'. Its open transactions stay as
        // they are (each holds its lock since before the checkpoint, so no
        // one committed to that database since); its other connections'
        // page caches are checked below, as every connection's is after a
        // rewind (without that check the three-producer search split four
        // ways found false violations: a relay read another branch's rows).
        let unchanged: Vec<bool> = self
            .saved
            .iter()
            .zip(&checkpoint.attempts)
            .map(|(kept, saved)| kept.borrow().as_ref().is_some_and(|k| Rc::ptr_eq(k, saved)))
            .collect();
        // The others go back: rolled back, restored, their transactions redone.
        let rewound: Vec<usize> = (0..self.attempts.len())
            .filter(|&i| !unchanged[i])
            .collect();
        for attempt in 0..self.attempts.len() {
            self.changed(attempt);
        }
        for &i in &rewound {
            self.attempts[i].roll_back(checkpoint.attempts[i].as_ref());
        }
        self.locks_now.take();
        // The journals of the write transactions kept open stay.
        let (kept, _) = self.writers_journals();
        self.store.rewind(&checkpoint.files, &kept)?;
        for &i in &rewound {
            if !self.attempts[i].restore(checkpoint.attempts[i].as_ref(), self.store)? {
                return Ok(false);
            }
        }
        // An unchanged attempt's connection outside a transaction may hold
        // a page cache that a later branch would leave stale under the same
        // change counter ([`crate::storage::Conn::forget_stale_cache`]).
        for (attempt, _) in self.attempts.iter().zip(&unchanged).filter(|(_, &u)| u) {
            for conn in attempt.connections().iter().flatten() {
                if !conn.in_transaction() {
                    conn.forget_stale_cache()?;
                }
            }
        }
        for writers in [false, true] {
            for &i in &rewound {
                self.attempts[i].resume(writers)?;
            }
        }
        self.statuses.clone_from(&checkpoint.statuses);
        self.choices.clone_from(&checkpoint.choices);
        self.at_end.clone_from(&checkpoint.at_end);
        self.at_end_hash.clone_from(&checkpoint.at_end_hash);
        self.clock.set(checkpoint.clock);
        self.broken.clone_from(&checkpoint.broken);
        self.spent = checkpoint.spent;
        self.last_effects = (Footprint::default(), Vec::new());
        debug_assert!(
            checkpoint
                .locks
                .as_ref()
                .is_none_or(|locks| **locks == self.read_locks()),
            "the locks differ from the checkpoint's"
        );
        *self.locks_now.borrow_mut() = checkpoint.locks.clone();
        // Each attempt is as the checkpoint saved it (the search checks the
        // run's state key after a restore, and starts anew if not).
        for (kept, saved) in self.saved.iter().zip(&checkpoint.attempts) {
            *kept.borrow_mut() = Some(Rc::clone(saved));
        }
        for (index, hash) in checkpoint.hashes.iter().enumerate() {
            debug_assert!(
                hash.is_none_or(|hash| {
                    let mut own = state_hasher();
                    self.attempts[index].hash_state(&mut own);
                    own.finish() == hash
                }),
                "attempt {index}'s state differs from the checkpoint's"
            );
            self.state_hashes[index].set(*hash);
        }
        // Checked against a fresh hash when next asked, in debug builds
        // ([`Run::attempt_key`]).
        for (kept, key) in self.keys.iter().zip(&checkpoint.keys) {
            kept.set(*key);
        }
        Ok(true)
    }

    /// The journals of the connections that hold RESERVED or more (each is
    /// its write transaction's own), and the strongest lock any holds.
    fn writers_journals(&self) -> (Vec<String>, LockLevel) {
        let mut journals = Vec::new();
        let mut strongest = LockLevel::None;
        for (attempt, levels) in self.attempts.iter().zip(self.locks().iter()) {
            for (conn, (level, _)) in attempt.connections().iter().flatten().zip(levels) {
                strongest = strongest.max(*level);
                if *level >= LockLevel::Reserved {
                    journals.push(conn.journal());
                }
            }
        }
        (journals, strongest)
    }

    /// What the last step touched (see [`footprint`]), and the attempts it
    /// let run again (blocked on a lock, or waiting for it to be over): their
    /// next steps happen after it.
    pub fn last_effects(&self) -> &(Footprint, Vec<usize>) {
        &self.last_effects
    }

    /// Kills attempt `attempt` now, between steps, as if its process died:
    /// its locks vanish, its uncommitted work stays behind as a hot journal,
    /// and it is over (outcome `crashed`).
    pub fn crash(&mut self, attempt: usize) -> Result<()> {
        if self.statuses.get(attempt).is_none_or(Status::is_over)
            || !self.attempts[attempt].can_crash()
        {
            return Err(Error::invalid(
                "attempt",
                format!("attempt {attempt} is not running"),
            ));
        }
        self.attempts[attempt].crash();
        self.changed(attempt);
        self.locks_now.take();
        self.statuses[attempt] = Status::Finished {
            outcome: Outcome::new(CRASHED),
        };
        self.at_end[attempt] = Some(Rc::new(self.store.snapshot()));
        if self.scenario.observes_end_of(attempt) {
            let mut hasher = state_hasher();
            self.store.hash_files(&mut hasher);
            self.at_end_hash[attempt] = Some(hasher.finish());
        }
        for (i, status) in self.statuses.iter_mut().enumerate() {
            if i != attempt
                && (*status == Status::Blocked || *status == (Status::Waiting { on: attempt }))
            {
                *status = Status::Runnable;
                self.keys[i].set(None);
            }
        }
        Ok(())
    }

    /// The committed contents of the scenario's databases: read from a copy
    /// of the store's files, where SQLite rolls back any hot journal, so the
    /// attempts' own connections and locks are not disturbed.
    pub fn committed_tables(&self) -> Result<BTreeMap<String, BTreeMap<String, Table>>> {
        let owned;
        let observer = match &self.observer {
            Some(store) => store,
            None => {
                owned = Store::new("observer")?;
                &owned
            }
        };
        observer.copy_files_from(self.store)?;
        let mut out = BTreeMap::new();
        for db in self.scenario.databases() {
            let mut tables = BTreeMap::new();
            if observer.files().iter().any(|(name, _)| name == db) {
                let conn = observer.connect(db, "observer")?;
                let names = conn.execute(
                    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                    &[],
                )?;
                for row in names.rows {
                    if let Some(SqlValue::Text(name)) = row.into_iter().next() {
                        let rows = conn.execute(
                            &format!(
                                "SELECT * FROM \"{}\" ORDER BY rowid",
                                name.replace('"', "\"\"")
                            ),
                            &[],
                        )?;
                        tables.insert(
                            name,
                            Table {
                                columns: rows.columns,
                                rows: rows.rows,
                            },
                        );
                    }
                }
            }
            out.insert(db.to_string(), tables);
        }
        Ok(out)
    }

    /// Why the run stopped, or `None` while some attempt can still run.
    pub fn verdict(&self) -> Option<Verdict> {
        if !self.is_stopped() {
            return None;
        }
        if self.statuses.iter().all(Status::is_over) {
            return Some(Verdict::Completed);
        }
        let now = self.clock.get();
        let levels = self.lock_levels();
        let waits = self
            .statuses
            .iter()
            .enumerate()
            .filter(|&(i, s)| {
                matches!(s, Status::Blocked | Status::Waiting { .. })
                    || (*s == Status::Runnable && !self.attempts[i].ready(now, &self.statuses))
            })
            .map(|(i, _)| {
                let holders: Vec<String> = levels
                    .iter()
                    .enumerate()
                    .filter(|&(j, level)| j != i && *level > LockLevel::None)
                    .map(|(j, level)| {
                        format!(
                            "{} (holds {})",
                            self.attempts[j].label(),
                            level_name(*level)
                        )
                    })
                    .collect();
                format!(
                    "{} (holds {}) waits for {}",
                    self.attempts[i].label(),
                    level_name(levels[i]),
                    if holders.is_empty() {
                        "a lock no attempt holds".to_string()
                    } else {
                        holders.join(" and ")
                    }
                )
            })
            .collect();
        Some(Verdict::Deadlock { waits })
    }

    /// The scenario's checks on the committed state the run left.
    pub fn checks(&self) -> Result<Vec<Check>> {
        let idle = self.statuses.iter().all(Status::is_over)
            && self.lock_levels().iter().all(|l| *l == LockLevel::None);
        let mut checks = if idle {
            // Nobody holds a lock or a connection: the run's own store is the
            // committed state, and a fresh reader there rolls back any hot journal.
            self.scenario.checks(&Ended {
                committed: self.store,
                statuses: &self.statuses,
                at_end: &self.at_end,
            })?
        } else {
            let copy = Store::new("checks")?;
            copy.copy_files_from(self.store)?;
            self.scenario.checks(&Ended {
                committed: &copy,
                statuses: &self.statuses,
                at_end: &self.at_end,
            })?
        };
        // Each invariant: held after every step, or the first step it broke.
        if self.scenario.has_invariants() {
            let copy = Store::new("invariants")?;
            copy.copy_files_from(self.store)?;
            for (i, check) in self.scenario.invariants(&copy)?.into_iter().enumerate() {
                let name = format!("after every step: {}", check.name);
                checks.push(match self.broken.get(i).cloned().flatten() {
                    None => Check {
                        name,
                        actual: check.expected.clone(),
                        ..check
                    },
                    Some((step, broken)) => Check {
                        name,
                        expected: broken.expected,
                        actual: format!("{} after step {}", broken.actual, step + 1),
                        pass: false,
                    },
                });
            }
        }
        Ok(checks)
    }
}

/// How many steps an attempt run alone may take per unit of its work (a
/// request; one event of a relay) before it is taken for a program that
/// does not end.
pub const MAX_ALONE_STEPS: usize = 256;

/// Runs one attempt alone on `store` to its end, at virtual time `now`:
/// its outcome and every step's report. More than `max_steps` steps are
/// an error.
pub fn run_alone(
    store: &Store,
    attempt: &mut dyn Attempt,
    now: i64,
    max_steps: usize,
) -> Result<(Outcome, Vec<StepReport>)> {
    let clock = std::cell::Cell::new(now);
    let ctx = StepCtx {
        store,
        peers: &[],
        clock: &clock,
        narrate: true,
    };
    let mut steps = Vec::new();
    loop {
        let report = attempt.step(&ctx);
        let progress = report.progress.clone();
        steps.push(report);
        match progress {
            Progress::Finished { outcome } => return Ok((outcome, steps)),
            Progress::Failed { error, .. } => return Err(Error::Run(error)),
            Progress::Blocked => {
                return Err(Error::Run(format!(
                    "{} was refused a lock although it runs alone",
                    attempt.label()
                )))
            }
            Progress::Progressed if steps.len() > max_steps => {
                return Err(Error::Run(format!(
                    "{} did not finish in {max_steps} steps",
                    attempt.label()
                )))
            }
            Progress::Progressed => {}
        }
    }
}
