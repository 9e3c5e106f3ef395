//! The shrinker: a failing run made the shortest failing run (or the
//! shortest lasso, for a run that goes round for ever) by a breadth-first
//! search over states within a budget, and explained.

use std::collections::{HashMap, HashSet, VecDeque};

use super::explorer::Explorer;
use super::report::Counterexample;
use crate::sim::{Run, Schedule};
use crate::{Error, Result};

/// The attempts of the shortest cycle from state `entry` back to itself in
/// the graph `next` (each state's steps: attempt, state they lead to).
fn shortest_cycle(next: &[Vec<(usize, usize)>], entry: usize) -> Option<Vec<usize>> {
    // How each state was first reached from `entry`: (state, attempt).
    let mut came: HashMap<usize, (usize, usize)> = HashMap::new();
    let mut queue = VecDeque::from([entry]);
    while let Some(state) = queue.pop_front() {
        for &(attempt, to) in &next[state] {
            if to == entry {
                let mut cycle = vec![attempt];
                let mut at = state;
                while at != entry {
                    let (from, step) = came[&at];
                    cycle.push(step);
                    at = from;
                }
                cycle.reverse();
                return Some(cycle);
            }
            if to != entry && !came.contains_key(&to) {
                came.insert(to, (state, attempt));
                queue.push_back(to);
            }
        }
    }
    None
}

/// Runs the breadth-first shrinker may spend.
pub(crate) const SHRINK_BUDGET: u64 = 20_000;

/// What the shrinker's runs may spend together, besides their number: as
/// much as four runs may each ([`crate::sim::BUDGETS`]). Runs of a hostile
/// design can each take a second or build tens of megabytes, and twenty
/// thousand of them would take hours; past this the counterexample is the
/// shortest failing run the search met.
pub(crate) const SHRINK_SPENT: crate::sim::Spent = crate::sim::Spent {
    instructions: 4 * crate::sim::BUDGETS.run_instructions,
    bytes: 4 * crate::sim::BUDGETS.run_bytes,
};

/// What the breadth-first shrinkers have spent of their budgets: runs,
/// steps ([`SHRINK_STEP_BUDGET`]) and what the runs spent ([`SHRINK_SPENT`]).
struct Shrink {
    budget: u64,
    runs: u64,
    steps: u64,
    spent: crate::sim::Spent,
}

impl Shrink {
    fn new(budget: u64) -> Self {
        Shrink {
            budget,
            runs: 0,
            steps: 0,
            spent: crate::sim::Spent::default(),
        }
    }

    /// A run of `explorer` replayed to the end of `prefix`; `None` once a
    /// budget is spent (then the shrinker proves nothing).
    fn replay<'e>(&mut self, explorer: &'e Explorer, prefix: &[usize]) -> Result<Option<Run<'e>>> {
        self.runs += 1;
        self.steps += prefix.len() as u64;
        if self.runs > self.budget || self.steps > SHRINK_STEP_BUDGET {
            return Ok(None);
        }
        let mut run = explorer.start(false)?;
        for &choice in prefix {
            run.step(choice)?;
        }
        self.spent.instructions += run.spent().instructions;
        self.spent.bytes += run.spent().bytes;
        let within = self.spent.instructions <= SHRINK_SPENT.instructions
            && self.spent.bytes <= SHRINK_SPENT.bytes;
        Ok(within.then_some(run))
    }
}

/// Steps the breadth-first shrinker may replay, all its runs together: each
/// run replays its prefix from the start, so a narrow, deep search (one
/// attempt looping to its step bound) would cost the square of its depth.
pub(crate) const SHRINK_STEP_BUDGET: u64 = 100_000;

impl Explorer {
    /// Shrinks a failing schedule to a shortest failing run (breadth-first
    /// over states, within a budget) and explains it.
    pub fn counterexample(&self, failing: &Schedule) -> Result<Counterexample> {
        let (schedule, shortest) = match self.shortest_failing(SHRINK_BUDGET)? {
            Some(shortest) => (shortest, true),
            // A run that goes round for ever, and no run that ends fails.
            None if failing.cycle_from().is_some() => match self.shortest_lasso(SHRINK_BUDGET)? {
                Some(shortest) => (shortest, true),
                None => (failing.clone(), false),
            },
            None => (failing.clone(), false),
        };
        let run = self.replay(&schedule, true)?;
        if run.passed {
            return Err(Error::Defect(format!(
                "the failing schedule {schedule} passed when replayed: the scenario is not deterministic"
            )));
        }
        Ok(Counterexample {
            schedule: run.schedule.clone(),
            steps: run.steps,
            shortest,
            failed_checks: run.failed_checks(),
            explanation: run.explanation(),
            run,
        })
    }

    /// The shortest failing schedule, by breadth-first search over distinct
    /// states; `None` if none fails or the budget of runs, of steps
    /// ([`SHRINK_STEP_BUDGET`]) or of what they spend ([`SHRINK_SPENT`]),
    /// is spent first.
    pub fn shortest_failing(&self, budget: u64) -> Result<Option<Schedule>> {
        let mut queue: VecDeque<Vec<usize>> = VecDeque::from([Vec::new()]);
        let mut visited = HashSet::new();
        let mut shrink = Shrink::new(budget);
        while let Some(prefix) = queue.pop_front() {
            let Some(run) = shrink.replay(self, &prefix)? else {
                return Ok(None);
            };
            if !visited.insert(run.state_key(false)) {
                continue;
            }
            if run.is_stopped() {
                if !self.finish(&run, false)?.passed {
                    return Ok(Some(Schedule::new(prefix)));
                }
                continue;
            }
            for choice in run.runnable() {
                let mut next = prefix.clone();
                next.push(choice);
                queue.push_back(next);
            }
        }
        Ok(None)
    }

    /// The shortest run that goes round for ever ([`Schedule::lasso`]): the
    /// steps to a state plus a cycle back to it, fewest in all. The states
    /// reachable are enumerated breadth-first (exact keys), each with the
    /// shortest prefix that reaches it and the states each of its steps leads
    /// to; then, for each state in order of its depth, the shortest cycle
    /// through it, until no deeper state can do better. `None` if no run
    /// goes round, or the budget of runs, of steps ([`SHRINK_STEP_BUDGET`])
    /// or of what they spend ([`SHRINK_SPENT`]), is spent before every
    /// state is known.
    pub fn shortest_lasso(&self, budget: u64) -> Result<Option<Schedule>> {
        // Each state: the shortest prefix to it, and its steps (attempt,
        // state they lead to).
        let mut prefixes: Vec<Vec<usize>> = Vec::new();
        let mut next: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut ids: HashMap<u64, usize> = HashMap::new();
        let mut queue: VecDeque<(Vec<usize>, Option<usize>)> = VecDeque::from([(Vec::new(), None)]);
        let mut shrink = Shrink::new(budget);
        while let Some((prefix, parent)) = queue.pop_front() {
            let Some(run) = shrink.replay(self, &prefix)? else {
                return Ok(None);
            };
            let key = run.state_key(false);
            let known = ids.get(&key).copied();
            let id = known.unwrap_or(prefixes.len());
            if let (Some(parent), Some(&attempt)) = (parent, prefix.last()) {
                next[parent].push((attempt, id));
            }
            if known.is_some() {
                continue;
            }
            ids.insert(key, id);
            next.push(Vec::new());
            if !run.is_stopped() {
                for choice in run.runnable() {
                    let mut child = prefix.clone();
                    child.push(choice);
                    queue.push_back((child, Some(id)));
                }
            }
            prefixes.push(prefix);
        }
        // States were numbered in order of depth: a deeper entry to a cycle
        // (whose cycle is at least one step) cannot beat a lasso found.
        let mut best: Option<(usize, Vec<usize>)> = None;
        for (entry, prefix) in prefixes.iter().enumerate() {
            let shortest = best
                .as_ref()
                .map_or(usize::MAX, |(at, cycle)| prefixes[*at].len() + cycle.len());
            if prefix.len() + 1 >= shortest {
                break;
            }
            if let Some(cycle) = shortest_cycle(&next, entry) {
                if prefix.len() + cycle.len() < shortest {
                    best = Some((entry, cycle));
                }
            }
        }
        Ok(best.map(|(entry, cycle)| {
            let from = prefixes[entry].len();
            let mut steps = prefixes[entry].clone();
            steps.extend(cycle);
            Schedule::lasso(steps, from)
        }))
    }
}
