//! A recorded run kept alive between calls, for stepping by hand: a step
//! runs one statement (and whatever the scheduler does with it), however
//! long the run so far, instead of replaying every earlier step first.
//! Going back (an undo, a jump to an earlier step, a schedule that shares
//! the first steps) rewinds the run to a checkpoint ([`Run::checkpoint`],
//! with each connection's own state, as the search rewinds) and steps on
//! from there; only where no checkpoint can be taken (WAL mode) or a
//! rewound run is not in its checkpoint's state is it replayed from the
//! start.
//!
//! A run borrows its explorer's store and scenario ([`Run`]'s lifetime), so
//! the two live in one self-referential cell (`self_cell`: a small,
//! macro-rules crate, no procedural macros, miri-tested). A test compares
//! every state a kept or rewound run gives with a replay from the start.

use self_cell::self_cell;

use super::explorer::Explorer;
use crate::sim::{Checkpoint, Run};
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

/// Checkpoints are kept after each of the last `RECENT` steps, and after
/// every `SPACING`th step before those: an undo rewinds one step, a jump
/// steps at most `SPACING - 1` statements on from its checkpoint, and a long
/// run keeps a sixteenth of its states.
const RECENT: usize = 32;
const SPACING: usize = 16;

/// A recorded run of an explorer's scenario that stays alive between calls.
pub struct LiveRun {
    cell: Cell,
    /// The attempt of each step taken, in order.
    choices: Vec<usize>,
    /// The steps the checkpoints were taken along (those of the kept run,
    /// while there is one).
    along: Vec<usize>,
    /// The run's state after its first `i` steps along `along`, where one
    /// was taken and kept, with the state's key then.
    checkpoints: Vec<Option<(Checkpoint, u64)>>,
    /// Rewinds that did not give the checkpoint's state (the run was then
    /// replayed from the start).
    misses: usize,
}

/// A run's state key, as a rewind is checked by ([`Run::state_key`]).
fn key(run: &Run<'_>) -> u64 {
    run.state_key(false)
}

impl LiveRun {
    /// A run of `explorer`'s scenario at its start.
    pub fn new(explorer: Explorer) -> Self {
        LiveRun {
            cell: Cell::new(explorer, |_| None),
            choices: Vec::new(),
            along: Vec::new(),
            checkpoints: Vec::new(),
            misses: 0,
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

    /// How many rewinds to a checkpoint did not give its state, so that the
    /// run was replayed from the start instead: none, unless something a
    /// checkpoint does not keep changed the run.
    pub fn rewind_misses(&self) -> usize {
        self.misses
    }

    /// How many checkpoints are kept.
    pub fn checkpoints(&self) -> usize {
        self.checkpoints.iter().flatten().count()
    }

    /// Calls `f` with the run at its choices.
    pub fn with_run<T>(&mut self, f: impl FnOnce(&Explorer, &Run<'_>) -> Result<T>) -> Result<T> {
        let path = std::mem::take(&mut self.choices);
        let reached = self.reach(&path);
        self.choices = path;
        reached.map_err(|(_, e)| e)?;
        self.cell
            .with_dependent_mut(|explorer, slot| f(explorer, slot.as_ref().expect("reached above")))
    }

    /// Lets `attempt` take the next step. After an error the run is as it
    /// was before.
    pub fn step(&mut self, attempt: usize) -> Result<()> {
        let mut path = self.choices.clone();
        path.push(attempt);
        self.reach(&path).map_err(|(_, e)| e)?;
        self.choices = path;
        Ok(())
    }

    /// Takes back the last step.
    pub fn undo(&mut self) {
        self.choices.pop();
    }

    /// Replaces the steps with `choices`, which must all fit: otherwise
    /// nothing changes and the error says which step does not.
    pub fn set_choices(&mut self, choices: Vec<usize>) -> Result<()> {
        self.reach(&choices).map_err(|(i, e)| match e {
            Error::Interrupted => e,
            e => Error::invalid("schedule", format!("step {} does not fit: {e}", i + 1)),
        })?;
        self.choices = choices;
        Ok(())
    }

    /// Drops the run, so that the explorer's store is free for another (the
    /// run is rewound or replayed when next asked for).
    pub fn release(&mut self) {
        self.cell.with_dependent_mut(|_, slot| *slot = None);
    }

    /// Brings the kept run to `path`'s steps: on from where it is if that is
    /// on the way, else from the deepest checkpoint on the way, else from
    /// the start. After an error (with the index of the step that gave it)
    /// the run is where it stopped on the way to `path`, or dropped if that
    /// step's state is not defined.
    fn reach(&mut self, path: &[usize]) -> std::result::Result<(), (usize, Error)> {
        let common = self
            .along
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        self.checkpoints.truncate(common + 1);
        self.along.truncate(common);
        let (checkpoints, along, misses) =
            (&mut self.checkpoints, &mut self.along, &mut self.misses);
        let start = |e| (common, e);
        self.cell.with_dependent_mut(|explorer, slot| {
            // The kept run is along `along` as it was: past the way to
            // `path` if it went further than `common`.
            if slot.is_none() || slot.as_ref().is_some_and(|run| run.steps() > common) {
                rewind(explorer, slot, checkpoints, misses).map_err(start)?;
            }
            let run = slot.as_mut().expect("kept above");
            along.truncate(run.steps());
            checkpoints.truncate(run.steps() + 1);
            if checkpoints.is_empty() {
                checkpoints.push(run.checkpoint().map(|c| (c, key(run))));
            }
            for (i, &attempt) in path.iter().enumerate().skip(run.steps()) {
                // Refused before anything runs: the run is unchanged.
                if !run.runnable().contains(&attempt) {
                    return run.step(attempt).map(|_| ()).map_err(|e| (i, e));
                }
                if let Err(e) = run.step(attempt) {
                    *slot = None;
                    return Err((i, e));
                }
                along.push(attempt);
                keep(checkpoints, run);
            }
            Ok(())
        })
    }
}

/// Takes a checkpoint of `run` (one step on from the last) and lets go of
/// the one that is no longer recent, unless it falls on the spacing.
fn keep(checkpoints: &mut Vec<Option<(Checkpoint, u64)>>, run: &Run<'_>) {
    checkpoints.push(run.checkpoint().map(|c| (c, key(run))));
    let steps = checkpoints.len() - 1;
    if let Some(old) = steps.checked_sub(RECENT) {
        if old % SPACING != 0 {
            checkpoints[old] = None;
        }
    }
}

/// Puts the run in `slot` (or a new one) in the state of the deepest
/// checkpoint, or at the start if there is none or the rewound run is not in
/// its state (a miss).
fn rewind<'e>(
    explorer: &'e Explorer,
    slot: &mut Slot<'e>,
    checkpoints: &[Option<(Checkpoint, u64)>],
    misses: &mut usize,
) -> Result<()> {
    if let Some((checkpoint, expected)) = checkpoints.iter().rev().flatten().next() {
        let mut run = match slot.take() {
            Some(run) => run,
            None => explorer.start(true)?,
        };
        // A restore may decline (a connection whose own state cannot be
        // put back); one that claims success in another state is a miss.
        match run.restore(checkpoint) {
            Ok(true) if key(&run) == *expected => {
                *slot = Some(run);
                return Ok(());
            }
            Ok(false) => {}
            _ => *misses += 1,
        }
    }
    *slot = None;
    *slot = Some(explorer.start(true)?);
    Ok(())
}
