//! The bounds every run is held to, declared once.

use serde::Serialize;

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
