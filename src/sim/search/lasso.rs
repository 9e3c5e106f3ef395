//! A cycle a search found, made a lasso ([`Schedule::lasso`]): the steps
//! to a state and round the cycle until the run is back, exactly, in a
//! state it has been in.

use std::collections::HashMap;

use super::explorer::{Explorer, MAX_RUN_STEPS};
use super::walk::Cycle;
use crate::sim::scheduler::{RoundRobin, Scheduler};
use crate::sim::{Choice, Schedule};
use crate::{Error, Result};

/// The scheduler of [`Explorer::lasso`].
struct Lasso<'c> {
    cycle: &'c Cycle,
    /// The next step of the cycle's schedule to take.
    position: usize,
    /// For each attempt of the first round, the attempt that stands for it
    /// in this round (the identity until the run first comes back).
    stands_for: Vec<usize>,
    /// Whether the cycle could not be followed any more: round-robin since.
    off: bool,
}

impl Scheduler for Lasso<'_> {
    fn describe(&self) -> String {
        format!(
            "round the cycle after step {} of {}",
            self.cycle.from, self.cycle.schedule
        )
    }

    fn choose(&mut self, choice: &crate::sim::Choice<'_>) -> Result<usize> {
        let steps = self.cycle.schedule.steps();
        if !self.off {
            if self.position == steps.len() {
                // Round again: the attempt standing for `a` in the state the
                // run came back to stands for it in this round's state too.
                self.position = self.cycle.from;
                self.stands_for = self
                    .stands_for
                    .iter()
                    .map(|&a| {
                        self.cycle
                            .stands_for
                            .iter()
                            .position(|&b| b == a)
                            .unwrap_or(a)
                    })
                    .collect();
            }
            let attempt = steps[self.position];
            let pick = self.stands_for.get(attempt).copied().unwrap_or(attempt);
            if choice.runnable.contains(&pick) {
                self.position += 1;
                return Ok(pick);
            }
            self.off = true;
        }
        RoundRobin.choose(choice)
    }
}

impl Explorer {
    /// The failing run of a cycle, as a lasso ([`Schedule::lasso`]): the
    /// cycle's path, then round the cycle (each attempt of it standing for
    /// the one it did on the first round, as symmetry matched them) until
    /// the run is back, exactly, in a state it has been in. Its schedule.
    pub(crate) fn lasso(&self, cycle: &Cycle) -> Result<Schedule> {
        let mut scheduler = Lasso {
            cycle,
            position: 0,
            stands_for: (0..cycle.stands_for.len()).collect(),
            off: false,
        };
        let mut run = self.start(false)?;
        let mut seen = HashMap::from([(run.state_key(false), 0usize)]);
        let mut last = None;
        while !run.is_stopped() && run.steps() < MAX_RUN_STEPS {
            let runnable = run.runnable();
            let choice = Choice {
                runnable: &runnable,
                step: run.steps(),
                last,
                statuses: run.statuses(),
            };
            let pick = scheduler.choose(&choice)?;
            if scheduler.off {
                break;
            }
            run.step(pick)?;
            last = Some(pick);
            if let Some(&from) = seen.get(&run.state_key(false)) {
                return Ok(Schedule::lasso(run.schedule().steps().to_vec(), from));
            }
            seen.insert(run.state_key(false), run.steps());
        }
        Err(Error::Defect(format!(
            "a run of scenario {:?} came back to the state after step {} of {}, yet going round that cycle did not come back to a state it had been in: the state's key missed a difference",
            self.scenario_id(),
            cycle.from,
            cycle.schedule
        )))
    }
}
