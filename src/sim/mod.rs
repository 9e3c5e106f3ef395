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
mod run;
mod scenario;
pub(crate) mod schedule;
pub(crate) mod scheduler;
pub(crate) mod search;
mod trace;

pub(crate) use attempt::{locks_held, Attempt, Peer, StepCtx, CRASHED, ENGINE_OUTCOMES};
pub use attempt::{Ending, Outcome, Progress, SqlResult, Status, StepReport};
pub(crate) use budget::Spent;
pub use budget::{Bound, Budgets, BUDGETS};
pub(crate) use run::{run_alone, run_in_order, state_hasher, Checkpoint, Choice};
pub use run::{Run, MAX_ALONE_STEPS};
pub(crate) use scenario::Ended;
pub use scenario::{AsDeclared, Check, Declared, Scenario, Verdict};
pub use schedule::Schedule;
#[cfg(target_family = "wasm")]
pub(crate) use trace::tables_size;
pub use trace::TraceStep;
pub(crate) use trace::{LockView, RowChange, Table};
