//! Schedulers: oracles that pick the next attempt among the runnable ones.
//!
//! The runtime ([`super::Run`]) decides who can run; a scheduler only chooses.
//! One strategy per file. Exhaustive search is not a per-step oracle: it
//! lives in [`super::search`].

pub(crate) mod manual;
pub(crate) mod pct;
pub(crate) mod random;
pub(crate) mod replay;
pub(crate) mod round_robin;

pub use manual::Manual;
pub use pct::Pct;
pub use random::Random;
pub(crate) use replay::Replay;
pub use round_robin::RoundRobin;

use super::Choice;
use crate::Result;

/// Picks the attempt that takes the next step.
pub trait Scheduler {
    /// A short description ("round-robin", "random seed 7").
    fn describe(&self) -> String;

    /// Returns one of `choice.runnable` (which is never empty).
    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize>;
}
