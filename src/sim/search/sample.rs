//! Search by sampling: runs under a scheduler of the strategy's (seeded
//! random, PCT…) until a run fails or the runs asked for are done.

use super::explorer::Explorer;
use super::report::{
    format_log10, naive_interleavings_log10, uniform_interleavings_log10, Bounded, ExploreReport,
};
use super::walk::Stats;
use crate::sim::scheduler::Scheduler;
use crate::sim::Schedule;
use crate::Result;

/// A resumable search by sampling: each run gets a scheduler from `make(i)`
/// (seeded random, PCT…); it stops at the first failing run.
pub struct Sampler<'m> {
    name: String,
    planned: u64,
    /// The runs first planned.
    budget: u64,
    make: Box<dyn FnMut(u64) -> Result<Box<dyn Scheduler>> + 'm>,
    stats: Stats,
    failing: Option<Schedule>,
    /// Naive interleaving counts (per-attempt and uniform), from the first run.
    naive: Option<(f64, f64)>,
}

impl<'m> Sampler<'m> {
    /// A search named `name` of up to `planned` runs.
    pub fn new(
        name: &str,
        planned: u64,
        make: impl FnMut(u64) -> Result<Box<dyn Scheduler>> + 'm,
    ) -> Self {
        Sampler {
            name: name.to_string(),
            planned,
            budget: planned,
            make: Box::new(make),
            stats: Stats::default(),
            failing: None,
            naive: None,
        }
    }

    /// Whether every planned run was made, or one failed.
    pub fn is_done(&self) -> bool {
        self.stats.runs >= self.planned || self.failing.is_some()
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The runs planned.
    pub fn planned(&self) -> u64 {
        self.planned
    }

    /// Plans `runs` more runs, or as many as first planned (none once a
    /// run has failed: the search is over). Returns whether it will go on.
    pub fn extend(&mut self, runs: Option<u64>) -> bool {
        if self.failing.is_some() {
            return false;
        }
        let more = runs.unwrap_or(self.budget);
        self.planned = self.planned.max(self.stats.runs).saturating_add(more);
        true
    }

    /// Makes up to `runs` more runs. Returns whether the search is done.
    pub fn advance(&mut self, explorer: &Explorer, runs: u64) -> Result<bool> {
        let end = self.stats.runs.saturating_add(runs).min(self.planned);
        while self.stats.runs < end && self.failing.is_none() {
            let mut scheduler = (self.make)(self.stats.runs)?;
            let result = explorer.run(scheduler.as_mut(), false)?;
            if self.naive.is_none() {
                let counts = explorer.steps_per_attempt(&result)?;
                let longest = counts.iter().copied().max().unwrap_or(0);
                self.naive = Some((
                    naive_interleavings_log10(&counts),
                    uniform_interleavings_log10(counts.len(), longest),
                ));
            }
            self.stats.runs += 1;
            self.stats.terminal_runs += 1;
            self.stats.count_bounds(&result.statuses);
            self.stats.steps += result.steps as u64;
            if !result.passed {
                self.stats.violations += 1;
                self.failing = Some(explorer.parse_schedule(&result.schedule)?);
            }
        }
        Ok(self.is_done())
    }

    /// The search's report, its counterexample shrunk and explained.
    pub fn report(&self, explorer: &Explorer, cancelled: bool) -> Result<ExploreReport> {
        let (log10, uniform) = self.naive.unwrap_or((0.0, 0.0));
        let counterexample = self
            .failing
            .as_ref()
            .map(|s| explorer.counterexample(s))
            .transpose()?;
        Ok(ExploreReport {
            final_digest: None,
            budgets: crate::sim::BUDGETS,
            workers: 1,
            cancelled,
            scenario: explorer.scenario_id().to_string(),
            strategy: self.name.clone(),
            complete: false,
            bounded_by: Some(if cancelled {
                Bounded::Cancelled
            } else {
                Bounded::Sampled {
                    strategy: self.name.clone(),
                    runs: self.stats.runs,
                }
            }),
            stats: self.stats,
            reductions: Vec::new(),
            loops: self.stats.loops(),
            naive_is_upper_bound: explorer.starts_constrained(),
            naive_interleavings: format_log10(log10),
            naive_interleavings_log10: log10,
            naive_interleavings_uniform: format_log10(uniform),
            declaration: explorer
                .scenario
                .declared()
                .map(|d| d.judge(counterexample.is_some(), false)),
            counterexample,
            frontier: None,
        })
    }
}

impl Explorer {
    /// Runs `runs` runs, each with a scheduler from `make(i)`; stops at the
    /// first failing run and explains it.
    pub fn sample<'m>(
        &self,
        strategy: &str,
        runs: u64,
        make: impl FnMut(u64) -> Result<Box<dyn Scheduler>> + 'm,
    ) -> Result<ExploreReport> {
        let mut sampler = Sampler::new(strategy, runs, make);
        sampler.advance(self, u64::MAX)?;
        sampler.report(self, false)
    }
}
