//! Manual scheduling: the caller names each attempt in turn (the page's step
//! buttons, or a test that spells a schedule out).

use std::collections::VecDeque;

use super::Scheduler;
use crate::sim::{Choice, Schedule};
use crate::{Error, Result};

/// Takes the attempts a person picked, in order.
#[derive(Debug, Clone, Default)]
pub struct Manual {
    queue: VecDeque<usize>,
}

impl Manual {
    /// A scheduler that will pick `picks` in order.
    pub fn new(picks: impl IntoIterator<Item = usize>) -> Self {
        Manual {
            queue: picks.into_iter().collect(),
        }
    }

    /// Queues the next pick.
    pub fn push(&mut self, attempt: usize) {
        self.queue.push_back(attempt);
    }
}

impl Scheduler for Manual {
    fn describe(&self) -> String {
        "manual".to_string()
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize> {
        let pick = self
            .queue
            .pop_front()
            .ok_or_else(|| Error::invalid("pick", "no attempt was picked for the next step"))?;
        if choice.runnable.contains(&pick) {
            Ok(pick)
        } else {
            Err(Error::invalid(
                "pick",
                format!("attempt {} cannot take a step now", Schedule::letter(pick)),
            ))
        }
    }
}
