//! Replay of an encoded schedule, step by step; a schedule that no longer
//! fits the scenario is a clear error.

use super::Scheduler;
use crate::sim::{Choice, Schedule};
use crate::{Error, Result};

/// Follows a recorded schedule exactly.
#[derive(Debug, Clone)]
pub(crate) struct Replay {
    schedule: Schedule,
    position: usize,
    /// The letters its mistakes name attempts with (their own when empty).
    letters: Vec<char>,
}

impl Replay {
    /// Replays `schedule` from its first step.
    pub(crate) fn new(schedule: Schedule) -> Self {
        Replay {
            schedule,
            position: 0,
            letters: Vec::new(),
        }
    }

    /// As [`Replay::new`], its mistakes naming attempts with `letters` (the
    /// scenario's: [`Schedule::letters_for`]).
    pub(crate) fn with_letters(schedule: Schedule, letters: &[char]) -> Self {
        Replay {
            letters: letters.to_vec(),
            ..Replay::new(schedule)
        }
    }

    /// The letter attempt `index` goes by.
    fn letter(&self, index: usize) -> char {
        self.letters
            .get(index)
            .copied()
            .unwrap_or_else(|| Schedule::letter(index))
    }

    /// Whether every step of the schedule was taken.
    pub(crate) fn is_exhausted(&self) -> bool {
        self.position >= self.schedule.len()
    }
}

impl Scheduler for Replay {
    fn describe(&self) -> String {
        format!("replay of {}", self.schedule)
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize> {
        let letters = |indices: &[usize]| {
            indices
                .iter()
                .map(|&i| self.letter(i).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(&pick) = self.schedule.steps().get(self.position) else {
            return Err(Error::invalid(
                "schedule",
                format!(
                    "it ends after {} steps, but attempts {} can still run: it does not fit this scenario",
                    self.schedule.len(),
                    letters(choice.runnable)
                ),
            ));
        };
        if pick >= choice.statuses.len() {
            return Err(Error::invalid(
                "schedule",
                format!(
                    "step {} names attempt {}, but this scenario has attempts {}",
                    self.position + 1,
                    self.letter(pick),
                    match choice.statuses.len() {
                        // Their own letters: a range; labels: each of them.
                        n if (0..n).all(|i| self.letter(i) == Schedule::letter(i)) => {
                            format!("A to {}", Schedule::letter(n - 1))
                        }
                        n => letters(&(0..n).collect::<Vec<_>>()),
                    }
                ),
            ));
        }
        if !choice.runnable.contains(&pick) {
            return Err(Error::invalid(
                "schedule",
                format!(
                    "step {} names attempt {}, which cannot run then (runnable: {}): it does not fit this scenario",
                    self.position + 1,
                    self.letter(pick),
                    letters(choice.runnable)
                ),
            ));
        }
        self.position += 1;
        Ok(pick)
    }
}
