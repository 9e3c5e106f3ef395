//! The words of the exhaustive searches ([`super::dfs`], [`super::dpor`],
//! [`super::split`]): what a search may do, its counters, a cycle it found,
//! what it has left, the runs that ended, and the replay of a branch's
//! prefix.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::explorer::Explorer;
use crate::sim::{Bound, Progress, Schedule};
use crate::Result;

/// Which part of a split search a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This worker's index, from 0.
    pub index: usize,
    /// How many workers share the search (1 to [`super::split::MAX_WORKERS`]).
    pub count: usize,
}

/// What the search may do.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Cut a path at a state already expanded.
    pub state_caching: bool,
    /// Try one of each group of interchangeable attempts.
    pub symmetry: bool,
    /// At most this many preemptions per run.
    pub preemption_bound: Option<u32>,
    /// Stop after this many runs.
    pub max_runs: Option<u64>,
    /// Explore one order of steps that commute (dynamic partial-order
    /// reduction with sleep sets; see [`super::dpor`]).
    pub partial_order: bool,
    /// This worker's part of a search split across several (see
    /// [`super::split`]); `None`: the whole search.
    pub shard: Option<Shard>,
    /// Reach a state to explore from by going back to the deepest earlier
    /// state of the run that was checkpointed (see [`crate::sim::Run::checkpoint`])
    /// and replaying the steps from there; off, every run replays its steps
    /// from the start. Not a reduction: it changes how fast a state is
    /// reached, not which are explored (only the partial-order search does it).
    pub rewind: bool,
    /// Keep a digest of each final state that does not depend on the
    /// machine ([`crate::sim::Run::final_digest`]), to compare the set of
    /// final states with a search elsewhere (the page's, the command
    /// line's): [`super::ExploreReport::final_digest`]. Costs a read of
    /// every table at each new final state.
    pub final_digests: bool,
}

impl Options {
    /// Every reduction off: each interleaving is run.
    pub const NONE: Options = Options {
        state_caching: false,
        symmetry: false,
        preemption_bound: None,
        max_runs: None,
        partial_order: false,
        shard: None,
        rewind: true,
        final_digests: false,
    };
}

impl Default for Options {
    fn default() -> Self {
        Options {
            state_caching: true,
            symmetry: true,
            preemption_bound: None,
            max_runs: None,
            partial_order: true,
            shard: None,
            rewind: true,
            final_digests: false,
        }
    }
}

/// The keys of the states along a path, each with its attempts' keys.
pub(super) type PathKeys = Vec<(u64, Vec<u64>)>;

/// Counters of a search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Runs started (each restores the store, or rewinds to a checkpoint,
    /// and replays a prefix).
    pub runs: u64,
    /// Runs that reached the end (every attempt over, or a deadlock).
    pub terminal_runs: u64,
    /// Steps taken, replays included.
    pub steps: u64,
    /// Distinct states expanded.
    pub distinct_states: u64,
    /// Distinct states runs ended in (attempts that are interchangeable
    /// counted as one, whichever reductions are on).
    pub final_states: u64,
    /// Terminal runs whose checks failed.
    pub violations: u64,
    /// Branches not explored because of the preemption bound.
    pub cut_by_bound: u64,
    /// The most steps any run took (replays included).
    pub max_depth: u64,
    /// Runs that came back to a state of their own path: schedules that can
    /// go round for ever, never completing (each is a violation, counted in
    /// `violations`; see [`Cycle`]).
    #[serde(default)]
    pub cycles: u64,
    /// Runs in which an attempt was stopped by its step bound ([`Bound::Steps`]).
    #[serde(default)]
    pub stopped_by_steps: u64,
    /// Runs in which a statement was stopped by its instruction budget
    /// ([`Bound::Instructions`]).
    #[serde(default)]
    pub stopped_by_instructions: u64,
    /// Runs stopped by a budget of the whole run, its instructions or its
    /// bytes ([`crate::sim::Budgets`]).
    #[serde(default)]
    pub stopped_by_run_budget: u64,
}

impl Stats {
    /// Whether some run looped (came back to a state of its own path, or
    /// ran into an attempt's step bound): then no count of interleavings
    /// bounds the design's.
    pub fn loops(&self) -> bool {
        self.cycles > 0 || self.stopped_by_steps > 0
    }

    /// Adds the counters of another part of the same search (the distinct
    /// final states excepted: only their keys can be merged).
    pub(crate) fn add(&mut self, other: &Stats) {
        let Stats {
            runs,
            terminal_runs,
            steps,
            distinct_states,
            final_states: _,
            violations,
            cut_by_bound,
            max_depth,
            cycles,
            stopped_by_steps,
            stopped_by_instructions,
            stopped_by_run_budget,
        } = *other;
        self.runs += runs;
        self.terminal_runs += terminal_runs;
        self.steps += steps;
        self.distinct_states += distinct_states;
        self.violations += violations;
        self.cut_by_bound += cut_by_bound;
        self.max_depth = self.max_depth.max(max_depth);
        self.cycles += cycles;
        self.stopped_by_steps += stopped_by_steps;
        self.stopped_by_instructions += stopped_by_instructions;
        self.stopped_by_run_budget += stopped_by_run_budget;
    }

    /// Counts the bounds that stopped attempts of a run that ended with
    /// `statuses`.
    pub(crate) fn count_bounds(&mut self, statuses: &[crate::sim::Status]) {
        let stopped_by = |wanted: Bound| {
            statuses.iter().any(|status| {
                matches!(status, crate::sim::Status::Failed { bound: Some(b), .. } if *b == wanted)
            })
        };
        self.stopped_by_steps += u64::from(stopped_by(Bound::Steps));
        self.stopped_by_instructions += u64::from(stopped_by(Bound::Instructions));
        self.stopped_by_run_budget +=
            u64::from(stopped_by(Bound::RunInstructions) || stopped_by(Bound::RunBytes));
    }
}

/// A run that came back to a state it had been in: from there it can take
/// the same steps again and again, for ever. The search cuts it there; its
/// counterexample is the run that goes round until it is back, exactly, in a
/// state it has been in ([`super::Explorer::lasso`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cycle {
    /// The run's schedule up to the state it came back to.
    pub schedule: Schedule,
    /// How many of its steps lead to that state the first time: the cycle
    /// is `schedule[from..]`.
    pub from: usize,
    /// For each attempt of the state the run came back to, the attempt of
    /// the first visit it stands for (the identity, unless symmetry found
    /// the two states equal up to a permutation of interchangeable attempts).
    pub stands_for: Vec<usize>,
}

impl Cycle {
    /// The cycle of a run at a state whose attempts' keys are `now`, back at
    /// the state after `from` steps whose attempts' keys were `then`.
    pub(crate) fn new(schedule: Schedule, from: usize, then: &[u64], now: &[u64]) -> Result<Cycle> {
        let mut taken = vec![false; then.len()];
        let stands_for = now
            .iter()
            .map(|key| {
                let j = (0..then.len()).find(|&j| !taken[j] && then[j] == *key)?;
                taken[j] = true;
                Some(j)
            })
            .collect::<Option<Vec<usize>>>()
            .filter(|m| m.len() == then.len())
            .ok_or_else(|| {
                crate::Error::Defect(format!(
                    "a run came back to the state after step {from} of {schedule}, but its attempts do not match that state's"
                ))
            })?;
        Ok(Cycle {
            schedule,
            from,
            stands_for,
        })
    }
}

/// What an unfinished exhaustive search has still to explore: the branches
/// it knows of (partial-order reduction may find more below them), and how
/// deep the shallowest one starts. Every schedule that agrees with the
/// explored ones on their first `shallowest` steps has been covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frontier {
    /// Branches known to be left.
    pub branches: u64,
    /// The step at which the shallowest of them leaves the explored runs.
    pub shallowest: u64,
}

/// Starts a run and replays `prefix`, counting the run and its steps in
/// `stats`; returns the run and the steps each attempt took (blocked steps
/// not counted).
pub(super) fn replay<'e>(
    explorer: &'e Explorer,
    prefix: &[usize],
    stats: &mut Stats,
) -> Result<(crate::sim::Run<'e>, Vec<usize>)> {
    stats.runs += 1;
    let mut run = explorer.start(false)?;
    let mut counted = vec![0usize; run.statuses().len()];
    for &attempt in prefix {
        if run.step(attempt)? != Progress::Blocked {
            counted[attempt] += 1;
        }
        stats.steps += 1;
    }
    Ok((run, counted))
}

/// What a search keeps of the runs that ended: their final states, the
/// first that failed, and how many steps each attempt took in the first.
#[derive(Debug, Default)]
pub(super) struct Endings {
    finals: HashSet<u64>,
    /// The final states' digests, when kept ([`Options::final_digests`]).
    digests: Option<std::collections::BTreeSet<u64>>,
    /// The shortest failing run found, the first of the shortest: a search
    /// stopped by its budget, whose shrinker could not prove a shortest,
    /// shows the shortest it met rather than the first.
    violation: Option<Schedule>,
    steps_per_attempt: Option<Vec<usize>>,
    /// The cycle found with the shortest way round it, while that way is
    /// shorter than the failing run kept, until it is unrolled
    /// ([`Endings::settle`]: its lasso is at least that long).
    cycle: Option<Cycle>,
}

impl Endings {
    /// Nothing recorded yet; keeping digests if `options` ask for them.
    pub(super) fn new(options: &Options) -> Self {
        Endings {
            digests: options.final_digests.then(Default::default),
            ..Endings::default()
        }
    }

    /// Records the run `run`, which has stopped; `counted` gives the steps
    /// each attempt took (blocked steps not counted), asked for once.
    pub(super) fn record(
        &mut self,
        stats: &mut Stats,
        explorer: &Explorer,
        run: &crate::sim::Run<'_>,
        counted: impl FnOnce() -> Vec<usize>,
    ) -> Result<()> {
        stats.terminal_runs += 1;
        if super::explorer::check_runs() {
            explorer.check_fresh(run)?;
        }
        stats.count_bounds(run.statuses());
        if self.finals.insert(run.state_key(true)) {
            if let Some(digests) = &mut self.digests {
                digests.insert(run.final_digest()?);
            }
        }
        stats.final_states = self.finals.len() as u64;
        if self.steps_per_attempt.is_none() {
            self.steps_per_attempt = Some(counted());
        }
        if !explorer.finish(run, false)?.passed {
            stats.violations += 1;
            if self
                .violation
                .as_ref()
                .is_none_or(|v| run.steps() < v.len())
            {
                self.violation = Some(run.schedule());
            }
        }
        Ok(())
    }

    /// Records a run that came back to a state of its own path: a
    /// violation (the run never completes), unrolled at [`Endings::settle`].
    pub(super) fn record_cycle(&mut self, stats: &mut Stats, cycle: Cycle) {
        stats.cycles += 1;
        stats.violations += 1;
        let length = cycle.schedule.len();
        let shorter = self.violation.as_ref().is_none_or(|v| length < v.len())
            && self
                .cycle
                .as_ref()
                .is_none_or(|c| length < c.schedule.len());
        if shorter {
            self.cycle = Some(cycle);
        }
    }

    /// Turns a cycle recorded into the failing run that goes round it (no
    /// run of the explorer may be under way: this one restores its store).
    pub(super) fn settle(&mut self, explorer: &Explorer) -> Result<()> {
        if let Some(cycle) = self.cycle.take() {
            let lasso = explorer.lasso(&cycle)?;
            if self
                .violation
                .as_ref()
                .is_none_or(|v| lasso.len() < v.len())
            {
                self.violation = Some(lasso);
            }
        }
        Ok(())
    }

    /// The keys of the final states (symmetric).
    pub(super) fn finals(&self) -> &HashSet<u64> {
        &self.finals
    }

    /// The final states' digests, if kept.
    pub(super) fn digests(&self) -> Option<&std::collections::BTreeSet<u64>> {
        self.digests.as_ref()
    }

    /// The shortest failing run found (the first of the shortest).
    pub(super) fn violation(&self) -> Option<&Schedule> {
        self.violation.as_ref()
    }

    /// Steps per attempt in the first run that ended.
    pub(super) fn steps_per_attempt(&self) -> Option<&[usize]> {
        self.steps_per_attempt.as_deref()
    }
}
