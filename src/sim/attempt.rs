//! An attempt as the runner sees it: the step machine a client is, what one
//! step reports, and how an attempt ends.

use std::hash::Hasher;
use std::rc::Rc;

use serde::Serialize;

use super::Bound;
use crate::engines::{Engine, Faults, Session};
use crate::storage::{LevelName, LockLevel, Rows, ShmLocks, SqlValue};
use crate::Result;

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

/// How an attempt ended, as its client saw it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// A short word: `created`, `replay`, `conflict`, `delivered`, `crashed`…
    /// (a program's own words, but for the engine's endings: see `ending`).
    pub kind: String,
    /// What the client received, as JSON text, if anything.
    pub result: Option<String>,
    /// How it ended, of the endings the engine itself makes (absent from
    /// the JSON for a program's own `finish`).
    #[serde(skip_serializing_if = "Ending::is_returned")]
    pub ending: Ending,
}

/// The endings the engine itself makes, apart from a program's own words:
/// what the page, the export and the checks recognise an outcome by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Ending {
    /// The program finished (`finish = "…"`), its own word the kind.
    #[default]
    Returned,
    /// The attempt's process died (a `crash` step, `crash-after`, a kill):
    /// kind `crashed`.
    Crashed,
    /// The work was done but the reply never reached the client
    /// (`lose-reply`): kind `reply-lost`.
    ReplyLost,
}

impl Ending {
    /// Whether it is a program's own ending.
    pub fn is_returned(&self) -> bool {
        *self == Ending::Returned
    }

    /// The outcome word of an ending the engine makes.
    fn word(self) -> Option<&'static str> {
        match self {
            Ending::Returned => None,
            Ending::Crashed => Some(CRASHED),
            Ending::ReplyLost => Some(REPLY_LOST),
        }
    }
}

/// The outcome kind of an attempt whose process died ([`Ending::Crashed`]).
pub(crate) const CRASHED: &str = "crashed";

/// The outcome kind of an attempt whose client never heard the answer
/// ([`Ending::ReplyLost`]).
pub(crate) const REPLY_LOST: &str = "reply-lost";

/// The outcome kinds the engine makes, whatever a program says.
pub(crate) const ENGINE_OUTCOMES: [&str; 2] = [CRASHED, REPLY_LOST];

impl Outcome {
    /// Whether it is the outcome of an attempt whose process died.
    pub fn is_crash(&self) -> bool {
        self.ending == Ending::Crashed
    }

    /// A program's own ending, without a result.
    pub fn new(kind: &str) -> Self {
        Outcome {
            kind: kind.to_string(),
            result: None,
            ending: Ending::Returned,
        }
    }

    /// A program's own ending, with a result.
    pub fn with_result(kind: &str, result: impl Into<String>) -> Self {
        Outcome {
            kind: kind.to_string(),
            result: Some(result.into()),
            ending: Ending::Returned,
        }
    }

    /// An ending the engine makes (its kind is the ending's word), with the
    /// result a program gave for it, if any.
    pub fn ended(ending: Ending, result: Option<String>) -> Self {
        Outcome {
            kind: ending.word().unwrap_or_default().to_string(),
            result,
            ending,
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
        let mut parts = vec![self.lock.name().to_string()];
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
pub(crate) fn locks_held(peers: &[Peer]) -> String {
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

impl StepCtx<'_> {
    /// The engine's faults, or why a step that injects one cannot run on it.
    pub fn faults(&self) -> Result<&dyn Faults> {
        crate::engines::faults_of(self.engine)
    }
}

/// What a step can use besides its own connection.
pub struct StepCtx<'a> {
    /// The engine every attempt opens its sessions on.
    pub engine: &'a dyn Engine,
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

    /// Hashes everything that determines the attempt's future: its position,
    /// everything it has read that it may still use, and what its
    /// connections hold that a later statement can see (an open
    /// transaction, counters it reads). The runner adds its lock levels. Of
    /// an attempt that saves itself ([`Attempt::save`]), only what the copy
    /// keeps: a restored attempt's hash is taken from the checkpoint.
    fn hash_state(&self, state: &mut dyn Hasher);

    /// Whether it holds state that [`Attempt::hash_state`] cannot hash (a
    /// connection's TEMP tables): the run's key then keeps the whole path
    /// that led there, so that the state is merged with no other.
    fn opaque(&self) -> bool {
        false
    }

    /// Attempts with equal `class` and equal state behave identically, so
    /// the explorer need try only one of them (symmetry reduction).
    fn class(&self) -> u64;

    /// The connections the attempt holds, by database (`None`: not open),
    /// for lock levels and kills.
    fn connections(&self) -> &[Option<Box<dyn Session>>];

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
    fn restore(&mut self, _saved: &dyn std::any::Any, _engine: &dyn Engine) -> Result<bool> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::Opening;

    use crate::engines::{Checkpoints, Moment};
    use crate::storage::{EngineOptions, Store};

    /// The VFS store without its faults, as a re-execution engine over
    /// real files is.
    struct WithoutFaults(Store);

    impl Engine for WithoutFaults {
        fn open(&self, opening: &Opening<'_>) -> Result<Box<dyn Session>> {
            self.0.open(opening)
        }
        fn faults(&self) -> Option<&dyn Faults> {
            None
        }
        fn create(&self, db: &str, options: EngineOptions, max: i32) -> Result<Box<dyn Session>> {
            self.0.create(db, options, max)
        }
        fn checkpoints(&self) -> Option<&dyn Checkpoints> {
            None
        }
        fn track_changes(&self, on: bool) {
            self.0.track_changes(on);
        }
        fn digest(&self, _into: &mut dyn Hasher) -> bool {
            false
        }
        fn moment(&self) -> Result<Moment> {
            self.0.moment()
        }
        fn at(&self, moment: &Moment) -> Result<Box<dyn Engine>> {
            self.0.at(moment)
        }
        fn copy(&self, durable: bool) -> Result<Box<dyn Engine>> {
            self.0.copy(durable)
        }
        fn copy_into(&self, into: &dyn Engine, durable: bool) -> Result<()> {
            self.0.copy_into(into, durable)
        }
        fn databases(&self) -> Vec<String> {
            self.0.databases()
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    /// A step that injects a fault on an engine without any is told why,
    /// in a sentence; the store's engine has them.
    #[test]
    fn an_engine_without_faults_refuses_a_fault_with_a_sentence() {
        let clock = std::cell::Cell::new(0);
        let without = WithoutFaults(Store::new("without-faults").unwrap());
        let ctx = StepCtx {
            engine: &without,
            peers: &[],
            clock: &clock,
            narrate: false,
        };
        let refused = ctx.faults().err().expect("no faults");
        assert!(
            refused
                .to_string()
                .contains("cannot inject the machine's faults"),
            "{refused}"
        );
        let store = crate::storage::Store::new("faults").unwrap();
        let ctx = StepCtx {
            engine: &store,
            ..ctx
        };
        assert!(ctx.faults().is_ok());
    }
}
