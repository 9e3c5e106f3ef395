//! Attempts as step machines, run by an explicit, deterministic scheduler.
//!
//! An [`Attempt`] is one client (a request, a relay, a consumer) with its own
//! SQLite connection. Each call to [`Attempt::step`] runs exactly one SQL
//! statement on that connection, or one explicit non-SQL action (a crash, a
//! lost reply, a clock tick). A [`Run`] holds the attempts of one scenario
//! over one store and lets a scheduler pick, at every step, which runnable
//! attempt goes next. The run records the choices as a [`Schedule`] and, when
//! asked, a full [`TraceStep`] per step.

mod attempt;
mod budget;
pub mod crash;
mod run;
mod scenario;
pub mod schedule;
pub mod scheduler;
pub mod search;
pub mod soak;
pub mod strategy;
mod trace;

pub use attempt::{
    locks_held, Attempt, Ending, Outcome, Peer, Progress, SqlResult, Status, StepCtx, StepReport,
    CRASHED,
};
pub use budget::{Bound, Budgets, Spent, BUDGETS};
pub use run::{
    run_alone, run_in_order, state_hasher, Checkpoint, Choice, Locks, Run, MAX_ALONE_STEPS,
};
pub use scenario::{AsDeclared, Check, Declared, Ended, Scenario, Verdict};
pub use schedule::Schedule;
pub use trace::{tables_size, LockView, RowChange, Table, TraceStep};
