//! Seeded random scheduling: a uniform pick among the runnable attempts.
//! The same seed gives the same run natively and in the browser.

use super::Scheduler;
use crate::sim::Choice;
use crate::Result;

/// Uniformly random picks from a seeded generator.
#[derive(Debug, Clone)]
pub struct Random {
    seed: u64,
    rng: fastrand::Rng,
}

impl Random {
    /// A random scheduler from `seed`.
    pub fn new(seed: u64) -> Self {
        Random {
            seed,
            rng: fastrand::Rng::with_seed(seed),
        }
    }
}

impl Scheduler for Random {
    fn describe(&self) -> String {
        format!("random (seed {})", self.seed)
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize> {
        // u32 arithmetic: the same sequence on 32-bit wasm and 64-bit native.
        let n = choice.runnable.len() as u32;
        Ok(choice.runnable[self.rng.u32(..n) as usize])
    }
}
