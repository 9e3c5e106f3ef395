//! The search: every interleaving of a scenario's attempts, or a sample of
//! them, and the shortest counterexample of a failing one.
//!
//! The explorer ([`explorer`]) runs a scenario under a scheduler; the
//! exhaustive search ([`dfs`], with partial-order reduction in [`dpor`] and
//! its split across workers in [`split`]) walks the tree of choices in
//! [`walk`]'s words; [`sample`] draws runs from a per-step scheduler
//! ([`crate::sim::scheduler`]); [`shrink`] and [`lasso`] make what failed the
//! shortest counterexample; [`report`] says what a search found.

pub(crate) mod cache;
pub(crate) mod dfs;
pub(crate) mod dpor;
pub(crate) mod explorer;
pub(crate) mod lasso;
pub(crate) mod live;
pub(crate) mod report;
pub(crate) mod sample;
pub(crate) mod shrink;
pub(crate) mod split;
pub(crate) mod strategy;
pub(crate) mod walk;

pub use dfs::Dfs;
#[cfg(target_family = "wasm")]
pub(crate) use explorer::explain;
pub(crate) use explorer::MAX_RUN_STEPS;
pub use explorer::{Explorer, RunResult};
pub use live::LiveRun;
pub(crate) use report::{format_log10, naive_interleavings_log10, uniform_interleavings_log10};
pub use report::{Bounded, Counterexample, ExploreReport, Used};
pub(crate) use sample::Sampler;
pub use walk::{Frontier, Options, Shard, Stats};

use crate::Result;
use split::Part;

/// What a search split across threads has done so far, and whether to
/// stop it ([`Explorer::exhaustive_parallel_watched`]).
#[cfg(not(target_family = "wasm"))]
#[derive(Debug, Default)]
pub struct Watch {
    /// Runs, every worker's.
    pub runs: std::sync::atomic::AtomicU64,
    /// Distinct states, every worker's (a state two workers both reached
    /// counts twice, as in the report).
    pub states: std::sync::atomic::AtomicU64,
    /// Set to stop every worker within a slice.
    pub stop: std::sync::atomic::AtomicBool,
}

impl Explorer {
    /// Searches every interleaving split across `workers` threads (see
    /// [`crate::sim::search::split`]), each with its own explorer made by
    /// `make` (an explorer, its store and connections stay on one thread);
    /// the report merges the workers' parts.
    #[cfg(not(target_family = "wasm"))]
    pub fn exhaustive_parallel<F>(
        make: F,
        options: Options,
        workers: usize,
    ) -> Result<ExploreReport>
    where
        F: Fn() -> Result<Explorer> + Sync,
    {
        Explorer::exhaustive_parallel_watched(make, options, workers, &Watch::default())
    }

    /// As [`Explorer::exhaustive_parallel`], counting the workers' runs and
    /// distinct states into `watch` as they go (for a progress display on
    /// another thread), and stopping every worker within a slice once
    /// `watch.stop` is set: the report then says `cancelled`.
    #[cfg(not(target_family = "wasm"))]
    pub fn exhaustive_parallel_watched<F>(
        make: F,
        options: Options,
        workers: usize,
        watch: &Watch,
    ) -> Result<ExploreReport>
    where
        F: Fn() -> Result<Explorer> + Sync,
    {
        use std::sync::atomic::Ordering;
        let count = workers.clamp(1, split::MAX_WORKERS);
        let cache = std::sync::Arc::new(cache::SharedCache::default());
        let parts = std::thread::scope(|scope| {
            let handles = (0..count)
                .map(|index| {
                    let make = &make;
                    let cache = cache.clone();
                    std::thread::Builder::new()
                        .name(format!("search-{index}"))
                        .stack_size(16 << 20)
                        .spawn_scoped(scope, move || -> Result<Part> {
                            let explorer = make()?;
                            let shard = Shard { index, count };
                            let mut search = Dfs::new(Options {
                                shard: Some(shard),
                                ..options
                            });
                            search.share(cache);
                            let mut counted = (0, 0);
                            loop {
                                let done = search.advance(&explorer, 200)?;
                                let stats = search.stats();
                                watch
                                    .runs
                                    .fetch_add(stats.runs - counted.0, Ordering::Relaxed);
                                watch.states.fetch_add(
                                    stats.distinct_states - counted.1,
                                    Ordering::Relaxed,
                                );
                                counted = (stats.runs, stats.distinct_states);
                                if done || watch.stop.load(Ordering::Relaxed) {
                                    break;
                                }
                            }
                            Ok(search.part())
                        })
                        .map_err(|e| {
                            crate::Error::System(format!("cannot start a search thread: {e}"))
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .map_err(|_| crate::Error::Defect("a search thread panicked".to_string()))?
                })
                .collect::<Result<Vec<Part>>>()
        })?;
        make()?.report_parts(&parts, watch.stop.load(Ordering::Relaxed))
    }

    /// Searches every interleaving with the given reductions, at most
    /// `slice` runs at a time, calling `progress` after each slice; a
    /// `false` from `progress` cancels the search.
    pub fn exhaustive(
        &self,
        options: Options,
        slice: u64,
        mut progress: impl FnMut(&Stats) -> bool,
    ) -> Result<ExploreReport> {
        let mut search = Dfs::new(options);
        let mut cancelled = false;
        while !search.advance(self, slice.max(1))? {
            if !progress(&search.stats()) {
                cancelled = true;
                break;
            }
        }
        self.report_search(&search, cancelled)
    }

    /// The report of a search, with its counterexample shrunk and explained.
    pub fn report_search(&self, search: &Dfs, cancelled: bool) -> Result<ExploreReport> {
        self.report_parts(&[search.part()], cancelled)
    }

    /// The report of a search done in parts (one per worker: see
    /// [`crate::sim::search::split`]), merged.
    pub fn report_parts(&self, parts: &[Part], cancelled: bool) -> Result<ExploreReport> {
        let merged = split::merge(parts)?;
        let stats = merged.stats;
        let counts = merged.steps_per_attempt.as_deref().unwrap_or(&[]);
        let log10 = naive_interleavings_log10(counts);
        let uniform_log10 =
            uniform_interleavings_log10(counts.len(), counts.iter().copied().max().unwrap_or(0));
        let bounded_by = if merged.interrupted {
            Some(Bounded::Interrupted)
        } else if cancelled {
            Some(Bounded::Cancelled)
        } else if merged.budget_spent {
            Some(Bounded::RunBudget { runs: stats.runs })
        } else if merged.cut_by_bound {
            Some(Bounded::PreemptionBound {
                cut: stats.cut_by_bound,
            })
        } else {
            None
        };
        // A search stopped on a preemption bound is over, not paused: only
        // a budget or a cancel leaves branches to continue from.
        let frontier = if bounded_by.is_some() {
            merged.frontier
        } else {
            None
        };
        let counterexample = merged
            .violation
            .as_ref()
            .map(|s| self.counterexample(s))
            .transpose()?;
        let mut reductions = merged.reductions;
        if parts.len() > 1 {
            reductions.push(Used::Split {
                workers: parts.len(),
            });
        }
        Ok(ExploreReport {
            budgets: crate::sim::BUDGETS,
            workers: parts.len(),
            cancelled: cancelled || merged.interrupted,
            scenario: self.scenario.id().to_string(),
            strategy: "exhaustive".to_string(),
            declaration: self
                .scenario
                .declared()
                .map(|d| d.judge(counterexample.is_some(), bounded_by.is_none())),
            complete: bounded_by.is_none(),
            bounded_by,
            stats,
            reductions,
            loops: stats.loops(),
            naive_is_upper_bound: self.starts_constrained(),
            naive_interleavings: format_log10(log10),
            naive_interleavings_log10: log10,
            naive_interleavings_uniform: format_log10(uniform_log10),
            counterexample,
            frontier,
            final_digest: merged.final_digests.map(|digests| {
                let mut bytes = Vec::with_capacity(digests.len() * 8);
                for digest in &digests {
                    bytes.extend_from_slice(&digest.to_le_bytes());
                }
                format!("{:016x}", crate::sim::run::fnv1a(&bytes))
            }),
        })
    }
}

/// A search with `options` split across `workers` shards (1: the whole
/// search, a shard of one if it shares a cache), each with its own explorer
/// from `explorer`, sharing a cache of finished states if `share`, advanced
/// `slice` runs each in turn as threads or the page's workers would be (in
/// one order of many, the same every time): the shards' explorers and
/// parts, or `None` once `enough` says the summed counters are too many.
/// The soundness fuzzer and the tests compare it with a whole search.
#[allow(clippy::type_complexity)]
pub fn in_turn(
    explorer: &dyn Fn() -> Result<Explorer>,
    options: Options,
    workers: usize,
    share: bool,
    slice: u64,
    enough: &dyn Fn(&Stats) -> bool,
) -> Result<Option<(Vec<Explorer>, Vec<Part>)>> {
    let cache = std::sync::Arc::new(cache::SharedCache::default());
    let mut explorers = Vec::with_capacity(workers);
    let mut searches = Vec::with_capacity(workers);
    for index in 0..workers {
        let shard = (workers > 1 || share).then_some(Shard {
            index,
            count: workers,
        });
        let mut search = Dfs::new(Options { shard, ..options });
        if share {
            search.share(cache.clone());
        }
        explorers.push(explorer()?);
        searches.push(search);
    }
    let mut done = vec![false; workers];
    while done.iter().any(|d| !d) {
        for (i, search) in searches.iter_mut().enumerate() {
            if !done[i] {
                done[i] = search.advance(&explorers[i], slice)?;
            }
        }
        let mut total = Stats::default();
        for search in &searches {
            total.add(&search.stats());
        }
        if enough(&total) {
            return Ok(None);
        }
    }
    let parts = searches.iter().map(Dfs::part).collect();
    Ok(Some((explorers, parts)))
}
