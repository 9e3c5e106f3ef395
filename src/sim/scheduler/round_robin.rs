//! Round-robin: each runnable attempt in turn, starting after the last one.

use super::Scheduler;
use crate::sim::Choice;
use crate::Result;

/// Cycles through the attempts in index order.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin;

impl Scheduler for RoundRobin {
    fn describe(&self) -> String {
        "round-robin".to_string()
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize> {
        let after = choice.last.map_or(0, |last| last + 1);
        Ok(choice
            .runnable
            .iter()
            .copied()
            .find(|&i| i >= after)
            .unwrap_or(choice.runnable[0]))
    }
}
