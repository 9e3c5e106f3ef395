//! A recorded run kept alive between calls, for stepping by hand: a step
//! runs one statement (and whatever the scheduler does with it), however
//! long the run so far, instead of replaying every earlier step first.
//!
//! A run borrows its explorer's store and scenario ([`Run`]'s lifetime), so
//! the two live in one self-referential cell (`self_cell`: a small,
//! macro-rules crate, no procedural macros, miri-tested). The run is
//! dropped whenever it could differ from the replay of its choices (an
//! error in a step, an undo, new choices) and replayed from the start when
//! next asked for; a test compares every state it gives with such a replay.

use self_cell::self_cell;

use super::explorer::Explorer;
use crate::sim::Run;
use crate::{Error, Result};

/// The run, while it is kept.
type Slot<'a> = Option<Run<'a>>;

self_cell!(
    struct Cell {
        owner: Explorer,
        #[covariant]
        dependent: Slot,
    }
);

/// A recorded run of an explorer's scenario that stays alive between calls.
pub struct LiveRun {
    cell: Cell,
    /// The attempt of each step taken, in order.
    choices: Vec<usize>,
}

impl LiveRun {
    /// A run of `explorer`'s scenario at its start.
    pub fn new(explorer: Explorer) -> Self {
        LiveRun {
            cell: Cell::new(explorer, |_| None),
            choices: Vec::new(),
        }
    }

    /// The explorer (its store is the run's: see [`LiveRun::release`]).
    pub fn explorer(&self) -> &Explorer {
        self.cell.borrow_owner()
    }

    /// The attempt of each step taken.
    pub fn choices(&self) -> &[usize] {
        &self.choices
    }

    /// Calls `f` with the run at its choices (replayed from the start if it
    /// was not kept).
    pub fn with_run<T>(&mut self, f: impl FnOnce(&Explorer, &Run<'_>) -> Result<T>) -> Result<T> {
        let choices = &self.choices;
        self.cell.with_dependent_mut(|explorer, slot| {
            let run = kept(explorer, slot, choices)?;
            f(explorer, run)
        })
    }

    /// Lets `attempt` take the next step. After an error the run is as it
    /// was before (replayed when next asked for).
    pub fn step(&mut self, attempt: usize) -> Result<()> {
        let choices = &self.choices;
        self.cell.with_dependent_mut(|explorer, slot| {
            let run = kept(explorer, slot, choices)?;
            // Refused before anything runs: the run is unchanged.
            if !run.runnable().contains(&attempt) {
                return run.step(attempt).map(|_| ());
            }
            let stepped = run.step(attempt).map(|_| ());
            if stepped.is_err() {
                *slot = None;
            }
            stepped
        })?;
        self.choices.push(attempt);
        Ok(())
    }

    /// Takes back the last step (the run is replayed when next asked for).
    pub fn undo(&mut self) {
        self.release();
        self.choices.pop();
    }

    /// Replaces the steps with `choices`, which must all fit: otherwise
    /// nothing changes and the error says which step does not.
    pub fn set_choices(&mut self, choices: Vec<usize>) -> Result<()> {
        self.release();
        let previous = std::mem::replace(&mut self.choices, choices);
        if let Err(e) = self.with_run(|_, _| Ok(())) {
            self.release();
            self.choices = previous;
            return Err(e);
        }
        Ok(())
    }

    /// Drops the run, so that the explorer's store is free for another
    /// (it is replayed when next asked for).
    pub fn release(&mut self) {
        self.cell.with_dependent_mut(|_, slot| *slot = None);
    }
}

/// The run in `slot`, replayed from the start to `choices` if there is none.
fn kept<'s, 'e>(
    explorer: &'e Explorer,
    slot: &'s mut Slot<'e>,
    choices: &[usize],
) -> Result<&'s mut Run<'e>> {
    if slot.is_none() {
        let mut run = explorer.start(true)?;
        for (i, &choice) in choices.iter().enumerate() {
            run.step(choice).map_err(|e| {
                Error::invalid("schedule", format!("step {} does not fit: {e}", i + 1))
            })?;
        }
        *slot = Some(run);
    }
    Ok(slot.as_mut().expect("replayed above"))
}
