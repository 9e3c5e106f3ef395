//! What a scenario file may ask for: every bound the format puts on a file
//! and on what its statements may run, read by every stage. The bounds of a
//! run are the engine's ([`crate::sim::BUDGETS`]); these derive from them.

/// The longest scenario source accepted, in bytes.
pub(crate) const MAX_SOURCE_BYTES: usize = 256 * 1024;
/// The most attempts a file may run (the schedule codec's letters).
pub const MAX_ATTEMPTS: usize = crate::sim::schedule::MAX_ATTEMPTS;
/// The most steps one attempt's program may have.
pub(crate) const MAX_PROGRAM_STEPS: usize = 200;
/// The most steps one attempt may take in a run (loops end here).
pub(crate) const MAX_ATTEMPT_STEPS: usize = crate::sim::BUDGETS.attempt_steps;
// An attempt is stopped at its step after the bound, so a run of a file takes
// at most this many steps: the bound of each attempt, a verdict, always comes
// before the engine's guard on a run, an error.
const _: () = assert!(MAX_ATTEMPTS * (MAX_ATTEMPT_STEPS + 1) <= crate::sim::search::MAX_RUN_STEPS);
/// The most SQLite VM instructions one statement of a file may run (an
/// endless recursive query ends here).
pub(crate) const MAX_STATEMENT_INSTRUCTIONS: u64 = crate::sim::BUDGETS.statement_instructions;
/// The largest string or blob a file's SQL may make, in bytes.
pub(crate) const MAX_VALUE_BYTES: i32 = crate::sim::BUDGETS.value_bytes as i32;
const _: () = assert!(crate::sim::BUDGETS.value_bytes <= i32::MAX as u64);
