//! The explorer: runs a scenario under a scheduler, replays schedules,
//! searches every interleaving, and turns a failing run into the shortest
//! counterexample with one sentence per step.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use super::scheduler::dfs::{self, Dfs};
use super::scheduler::split::{self, Part};
use super::scheduler::{Replay, RoundRobin, Scheduler};
use super::{AsDeclared, Check, Choice, Run, Scenario, Schedule, Status, TraceStep, Verdict};
use crate::storage::{Snapshot, Store};
use crate::{Error, Result};

/// No run of a scenario may take more steps than this: the engine's guard.
/// A scenario file never reaches it, since each of its attempts is stopped
/// by a bound of its own first (a verdict, [`super::Bound::Steps`]; see the
/// assertion beside `format::MAX_ATTEMPT_STEPS`).
pub const MAX_RUN_STEPS: usize = 30_000;

/// What a search interrupted in the middle of a run (`setInterrupt`) was
/// bounded by: the run under way is lost with its branch.
pub const INTERRUPTED: &str = "interrupted in the middle of a run (setInterrupt): the counts are of the runs that finished before it";

/// The outcome of one run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// The scenario's id.
    pub scenario: String,
    /// The parameter values the run used, by name.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The run's schedule, encoded.
    pub schedule: String,
    /// Steps taken.
    pub steps: usize,
    /// The attempts' labels.
    pub labels: Vec<String>,
    /// Why the run stopped.
    pub verdict: Verdict,
    /// How each attempt ended.
    pub statuses: Vec<Status>,
    /// Expected against actual, the run's completion first.
    pub checks: Vec<Check>,
    /// Whether every check passed.
    pub passed: bool,
    /// What the run spent of its budgets ([`super::BUDGETS`]).
    pub spent: super::Spent,
    /// The full trace, when recorded.
    pub trace: Option<Vec<TraceStep>>,
    /// The run beside what the scenario's author declared of it, if the
    /// declaration applies to these parameters: a failing run shows a
    /// design fails; a passing one shows nothing of the others.
    #[serde(flatten)]
    pub declaration: Option<AsDeclared>,
}

impl RunResult {
    /// One sentence per step ([`explain`]).
    pub fn explanation(&self) -> Vec<String> {
        explain(self.trace.as_deref().unwrap_or_default(), &self.verdict)
    }

    /// The checks that failed.
    pub fn failed_checks(&self) -> Vec<Check> {
        self.checks.iter().filter(|c| !c.pass).cloned().collect()
    }
}

/// One sentence per step of `trace`: "3. B read no receipt because A had
/// not committed". A sentence that names its attempt first is not prefixed
/// with the attempt again ("A: A began…"). A run that goes round for ever
/// ([`Verdict::Loops`]) ends with the steps that repeat.
pub fn explain(trace: &[TraceStep], verdict: &Verdict) -> Vec<String> {
    let mut sentences: Vec<String> = trace
        .iter()
        .map(|step| {
            let note = &step.report.note;
            let names_itself = note
                .strip_prefix(step.label.as_str())
                .is_some_and(|rest| rest.starts_with([' ', '\'']));
            if names_itself {
                format!("{}. {note}", step.index + 1)
            } else {
                format!("{}. {}: {note}", step.index + 1, step.label)
            }
        })
        .collect();
    if let (Verdict::Loops { from, to }, false) = (verdict, sentences.is_empty()) {
        sentences.push(if to - from == 1 {
            format!("Then step {to} again and again, for ever: the run never completes.")
        } else {
            format!(
                "Then steps {} to {to} again and again, for ever: the run never completes.",
                from + 1
            )
        });
    }
    sentences
}

/// A failing run, shrunk and explained.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counterexample {
    /// Its schedule, encoded.
    pub schedule: String,
    /// Steps.
    pub steps: usize,
    /// Whether no failing run of the scenario is shorter (a breadth-first
    /// search proved it); otherwise it is the first failing run found.
    pub shortest: bool,
    /// The checks it fails.
    pub failed_checks: Vec<Check>,
    /// One sentence per step.
    pub explanation: Vec<String>,
    /// The run, with its trace.
    pub run: RunResult,
}

/// What a search found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExploreReport {
    /// The scenario's id.
    pub scenario: String,
    /// How runs were chosen.
    pub strategy: String,
    /// Whether every schedule was covered (exhaustive and unbounded).
    pub complete: bool,
    /// Why the search did not cover every schedule, if it did not.
    pub bounded_by: Option<String>,
    /// Whether it was stopped by its caller (a cancel, an interrupt)
    /// before it was over.
    pub cancelled: bool,
    /// The search's counters.
    pub stats: dfs::Stats,
    /// The reductions an exhaustive search used, in words (and why
    /// partial-order reduction was not, when asked for and not usable).
    pub reductions: Vec<String>,
    /// Whether the figures below are upper bounds: some attempt cannot
    /// start at once ([`Explorer::starts_constrained`]).
    pub naive_is_upper_bound: bool,
    /// Whether some run looped ([`dfs::Stats::loops`]): then the design's
    /// interleavings are unbounded, whatever the figures below say of the
    /// runs' step counts.
    pub loops: bool,
    /// The number of interleavings plain enumeration would face, as text.
    pub naive_interleavings: String,
    /// Its base-10 logarithm.
    pub naive_interleavings_log10: f64,
    /// (NK)! / (K!)^N for N attempts of K steps, K the longest attempt's
    /// step count: the usual back-of-the-envelope figure, as text.
    pub naive_interleavings_uniform: String,
    /// The shortest (or first) failing run, if any.
    pub counterexample: Option<Counterexample>,
    /// What an exhaustive search stopped early had left to explore.
    pub frontier: Option<dfs::Frontier>,
    /// What each run was allowed to spend ([`super::BUDGETS`]); the runs
    /// a budget stopped are counted in `stats`.
    pub budgets: super::Budgets,
    /// How many workers the search was split across (1: not split); the
    /// counts of a split search are the workers' summed.
    pub workers: usize,
    /// The verdict beside what the scenario's author declared of it, if
    /// the declaration applies to these parameters.
    #[serde(flatten)]
    pub declaration: Option<AsDeclared>,
}

/// The number of interleavings of attempts taking `steps[i]` steps each:
/// (sum of steps)! / product of (steps[i]!), as a base-10 logarithm.
pub fn naive_interleavings_log10(steps: &[usize]) -> f64 {
    let log_factorial = |n: usize| (2..=n).map(|i| (i as f64).log10()).sum::<f64>();
    let total: usize = steps.iter().sum();
    log_factorial(total) - steps.iter().map(|&k| log_factorial(k)).sum::<f64>()
}

/// (NK)! / (K!)^N for `n` attempts of `k` steps each, as a base-10 logarithm.
pub fn uniform_interleavings_log10(n: usize, k: usize) -> f64 {
    naive_interleavings_log10(&vec![k; n])
}

/// Writes a base-10 logarithm as a readable number ("1.9e31" or "252").
pub fn format_log10(log10: f64) -> String {
    if log10 < 15.0 {
        // Whole numbers with thousands separators, as counts are shown.
        crate::grouped(&format!("{:.0}", 10f64.powf(log10)))
    } else {
        let exponent = log10.floor();
        format!("{:.1}e{}", 10f64.powf(log10 - exponent), exponent)
    }
}

/// A resumable search by sampling: each run gets a scheduler from `make(i)`
/// (seeded random, PCT…); it stops at the first failing run.
pub struct Sampler<'m> {
    name: String,
    planned: u64,
    /// The runs first planned.
    budget: u64,
    make: Box<dyn FnMut(u64) -> Result<Box<dyn Scheduler>> + 'm>,
    stats: dfs::Stats,
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
            stats: dfs::Stats::default(),
            failing: None,
            naive: None,
        }
    }

    /// Whether every planned run was made, or one failed.
    pub fn is_done(&self) -> bool {
        self.stats.runs >= self.planned || self.failing.is_some()
    }

    /// The counters so far.
    pub fn stats(&self) -> dfs::Stats {
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
            budgets: super::BUDGETS,
            workers: 1,
            cancelled,
            scenario: explorer.scenario_id().to_string(),
            strategy: self.name.clone(),
            complete: false,
            bounded_by: Some(if cancelled {
                "cancelled".to_string()
            } else {
                let runs = self.stats.runs;
                format!(
                    "{}: {runs} sampled run{}",
                    self.name,
                    if runs == 1 { "" } else { "s" }
                )
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

/// A scenario set up once in its own store, ready to run many times.
pub struct Explorer {
    scenario: Box<dyn Scenario>,
    store: Store,
    initial: Snapshot,
    /// The letters its schedules are written in ([`Schedule::letters_for`]).
    letters: Vec<char>,
    /// Whether some attempt cannot start at once ([`Explorer::starts_constrained`]).
    constrained: bool,
}

impl Explorer {
    /// Sets the scenario up and snapshots its initial state.
    pub fn new(scenario: Box<dyn Scenario>) -> Result<Self> {
        let store = Store::new("scenario")?;
        // Footprints name databases by slot: the scenario's own first, in
        // its order, so that every explorer of it numbers them alike.
        store.assign_slots(scenario.databases());
        scenario.setup(&store)?;
        let initial = store.snapshot();
        // Every run restores this same snapshot, so idle connections can be reused.
        store.set_pooling(true);
        let mut explorer = Explorer {
            scenario,
            store,
            initial,
            letters: Vec::new(),
            constrained: false,
        };
        // What the initial state says of the attempts, read once.
        let (labels, constrained) = {
            let run = explorer.start(false)?;
            (run.labels(), run.runnable().len() < run.statuses().len())
        };
        explorer.letters = Schedule::letters_for(&labels);
        explorer.constrained = constrained;
        Ok(explorer)
    }

    /// The parameter values the scenario runs with, by name.
    pub fn params(&self) -> serde_json::Map<String, serde_json::Value> {
        self.scenario.params()
    }

    /// The database files as the scenario's setup left them, before any
    /// attempt ran, with the PRAGMAs each attempt's connection runs.
    pub fn initial_files(&self) -> Result<Vec<(String, Vec<u8>, String)>> {
        let store = Store::from_snapshot("initial", &self.initial)?;
        Ok(self
            .scenario
            .databases()
            .into_iter()
            .map(|db| {
                (
                    db.to_string(),
                    store.file_bytes(db).unwrap_or_default(),
                    self.scenario.pragmas(db),
                )
            })
            .collect())
    }

    /// The scenario's id.
    pub fn scenario_id(&self) -> &str {
        self.scenario.id()
    }

    /// The letter each attempt goes by in schedules ([`Schedule::letters_for`]).
    pub fn schedule_letters(&self) -> &[char] {
        &self.letters
    }

    /// A schedule as this scenario's traces name its attempts (`P2C3` where
    /// labels are single letters: [`Schedule::letters_for`]).
    pub fn show_schedule(&self, schedule: &Schedule) -> String {
        schedule.encode_with(&self.letters)
    }

    /// Parses a schedule written with this scenario's labels or with its
    /// attempts' own letters ([`Schedule::decode_with`]).
    pub fn parse_schedule(&self, text: &str) -> Result<Schedule> {
        Schedule::decode_with(text, &self.letters)
    }

    /// Whether some attempt cannot start at once (it runs `after` another,
    /// or not before a time): then the interleavings of the runs' step
    /// counts are more than the design allows, an upper bound.
    pub fn starts_constrained(&self) -> bool {
        self.constrained
    }

    /// Whether the scenario checks invariants after every step.
    pub fn has_invariants(&self) -> bool {
        self.scenario.has_invariants()
    }

    /// Restores the initial state and starts a run. The previous run must
    /// have been dropped.
    pub fn start(&self, record: bool) -> Result<Run<'_>> {
        self.store.restore(&self.initial)?;
        Run::start(self.scenario.as_ref(), &self.store, record)
    }

    /// The result of a stopped run: its verdict and checks.
    pub fn finish(&self, run: &Run<'_>, with_trace: bool) -> Result<RunResult> {
        let verdict = run.verdict().ok_or_else(|| {
            Error::Store("the run is not over: some attempt can still take a step".into())
        })?;
        self.result(run, verdict, with_trace)
    }

    /// The result of a run with `verdict`: a run that goes round for ever
    /// ([`Verdict::Loops`]) fails its completion and has no end state for
    /// the scenario's checks to read.
    fn result(&self, run: &Run<'_>, verdict: Verdict, with_trace: bool) -> Result<RunResult> {
        // An attempt a bound stopped did not complete, whatever else holds.
        let labels = run.labels();
        let stopped: Vec<String> = run
            .statuses()
            .iter()
            .zip(&labels)
            .filter_map(|(status, label)| match status {
                Status::Failed {
                    error,
                    bound: Some(_),
                } => Some(format!("{label} {error}")),
                _ => None,
            })
            .collect();
        let actual = match &verdict {
            Verdict::Completed if stopped.is_empty() => "completed".to_string(),
            Verdict::Completed => format!("stopped by a bound: {}", stopped.join("; ")),
            Verdict::Deadlock { waits } => format!("deadlock: {}", waits.join("; ")),
            Verdict::Loops { from, to } => format!(
                "goes round for ever: after step {to} it is back in the state {}",
                if *from == 0 {
                    "it started in".to_string()
                } else {
                    format!("after step {from}")
                }
            ),
        };
        let mut checks = vec![Check::equal("the run completes", "completed", actual)];
        if !matches!(verdict, Verdict::Loops { .. }) {
            checks.extend(run.checks()?);
        }
        let passed = checks.iter().all(|c| c.pass);
        Ok(RunResult {
            scenario: self.scenario.id().to_string(),
            params: self.scenario.params(),
            schedule: self.show_schedule(&match verdict {
                Verdict::Loops { from, .. } => {
                    Schedule::lasso(run.schedule().steps().to_vec(), from)
                }
                _ => run.schedule(),
            }),
            steps: run.steps(),
            labels,
            verdict,
            statuses: run.statuses().to_vec(),
            checks,
            passed,
            spent: run.spent(),
            trace: if with_trace {
                run.trace().map(<[TraceStep]>::to_vec)
            } else {
                None
            },
            declaration: self.scenario.declared().map(|d| d.judge(!passed, false)),
        })
    }

    /// Runs the scenario to the end under `scheduler`.
    pub fn run(&self, scheduler: &mut dyn Scheduler, record: bool) -> Result<RunResult> {
        let mut run = self.start(record)?;
        let mut last = None;
        while !run.is_stopped() {
            if run.steps() >= MAX_RUN_STEPS {
                return Err(Error::Store(format!(
                    "the run exceeded {MAX_RUN_STEPS} steps; an attempt may loop forever"
                )));
            }
            let runnable = run.runnable();
            let choice = Choice {
                runnable: &runnable,
                step: run.steps(),
                last,
                statuses: run.statuses(),
            };
            let pick = scheduler.choose(&choice)?;
            run.step(pick)?;
            last = Some(pick);
        }
        self.finish(&run, record)
    }

    /// Replays an encoded schedule exactly; it must fit the scenario step
    /// for step and end where the run ends.
    pub fn replay(&self, schedule: &Schedule, record: bool) -> Result<RunResult> {
        if let Some(from) = schedule.cycle_from() {
            return self.replay_lasso(schedule, from, record);
        }
        let mut replay = Replay::with_letters(schedule.clone(), &self.letters);
        let result = self.run(&mut replay, record)?;
        if !replay.is_exhausted() {
            return Err(Error::invalid(
                "schedule",
                format!(
                    "the run ended after {} steps but the schedule has {}: it does not fit this scenario",
                    result.steps,
                    schedule.len()
                ),
            ));
        }
        Ok(result)
    }

    /// Replays a run that goes round for ever ([`Schedule::lasso`]): its
    /// steps, each fitting the scenario, must bring it back to the state it
    /// was in after the first `from`.
    fn replay_lasso(&self, schedule: &Schedule, from: usize, record: bool) -> Result<RunResult> {
        let mut run = self.start(record)?;
        let mut start = (from == 0).then(|| run.state_key(false));
        for (i, &attempt) in schedule.steps().iter().enumerate() {
            let runnable = run.runnable();
            if !runnable.contains(&attempt) {
                let letters: Vec<String> = runnable
                    .iter()
                    .map(|&a| {
                        self.letters
                            .get(a)
                            .copied()
                            .unwrap_or(Schedule::letter(a))
                            .to_string()
                    })
                    .collect();
                return Err(Error::invalid(
                    "schedule",
                    format!(
                        "step {} names attempt {}, which cannot run then (runnable: {}): it does not fit this scenario",
                        i + 1,
                        self.letters.get(attempt).copied().unwrap_or(Schedule::letter(attempt)),
                        if letters.is_empty() { "none".to_string() } else { letters.join(", ") }
                    ),
                ));
            }
            run.step(attempt)?;
            if i + 1 == from {
                start = Some(run.state_key(false));
            }
        }
        if start != Some(run.state_key(false)) {
            return Err(Error::invalid(
                "schedule",
                format!(
                    "after its {} the run is not back in the state it was in {}, where its cycle starts: it does not fit this scenario",
                    match schedule.len() {
                        1 => "1 step".to_string(),
                        n => format!("{n} steps"),
                    },
                    match from {
                        0 => "at the start".to_string(),
                        from => format!("after step {from}"),
                    }
                ),
            ));
        }
        self.looping(&run, from, record)
    }

    /// The result of `run`, which is back after its last step in the state
    /// it was in after step `from` ([`Verdict::Loops`]; not checked here).
    pub fn looping(&self, run: &Run<'_>, from: usize, with_trace: bool) -> Result<RunResult> {
        let to = run.steps();
        self.result(run, Verdict::Loops { from, to }, with_trace)
    }

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

    fn steps_per_attempt(&self, result: &RunResult) -> Result<Vec<usize>> {
        let schedule = self.parse_schedule(&result.schedule)?;
        let recorded = self.replay(&schedule, true)?;
        let mut counts = vec![0usize; recorded.labels.len()];
        for step in recorded.trace.iter().flatten() {
            if step.report.progress != super::Progress::Blocked {
                counts[step.attempt] += 1;
            }
        }
        Ok(counts)
    }

    /// Searches every interleaving split across `workers` threads (see
    /// [`crate::sim::scheduler::split`]), each with its own explorer made by
    /// `make` (an explorer, its store and connections stay on one thread);
    /// the report merges the workers' parts.
    #[cfg(not(target_family = "wasm"))]
    pub fn exhaustive_parallel<F>(
        make: F,
        options: dfs::Options,
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
        options: dfs::Options,
        workers: usize,
        watch: &Watch,
    ) -> Result<ExploreReport>
    where
        F: Fn() -> Result<Explorer> + Sync,
    {
        use std::sync::atomic::Ordering;
        let count = workers.clamp(1, split::MAX_WORKERS);
        let cache = std::sync::Arc::new(crate::sim::scheduler::dpor::SharedCache::default());
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
                            let shard = split::Shard { index, count };
                            let mut search = Dfs::new(dfs::Options {
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
                        .map_err(|e| Error::Store(format!("cannot start a search thread: {e}")))
                })
                .collect::<Result<Vec<_>>>()?;
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .map_err(|_| Error::Store("a search thread panicked".to_string()))?
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
        options: dfs::Options,
        slice: u64,
        mut progress: impl FnMut(&dfs::Stats) -> bool,
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
    /// [`crate::sim::scheduler::split`]), merged.
    pub fn report_parts(&self, parts: &[Part], cancelled: bool) -> Result<ExploreReport> {
        let merged = split::merge(parts)?;
        let stats = merged.stats;
        let counts = merged.steps_per_attempt.as_deref().unwrap_or(&[]);
        let log10 = naive_interleavings_log10(counts);
        let uniform_log10 =
            uniform_interleavings_log10(counts.len(), counts.iter().copied().max().unwrap_or(0));
        let bounded_by = if merged.interrupted {
            Some(INTERRUPTED.to_string())
        } else if cancelled {
            Some("cancelled".to_string())
        } else if merged.budget_spent {
            Some(format!("run budget of {} runs", stats.runs))
        } else if merged.cut_by_bound {
            Some(format!(
                "preemption bound ({} branches not explored)",
                stats.cut_by_bound
            ))
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
            reductions.push(format!("split across {} workers", parts.len()));
        }
        Ok(ExploreReport {
            budgets: super::BUDGETS,
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
        })
    }

    /// The failing run of a cycle, as a lasso ([`Schedule::lasso`]): the
    /// cycle's path, then round the cycle (each attempt of it standing for
    /// the one it did on the first round, as symmetry matched them) until
    /// the run is back, exactly, in a state it has been in. Its schedule.
    pub(crate) fn lasso(&self, cycle: &dfs::Cycle) -> Result<Schedule> {
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
        Err(Error::Store(format!(
            "a run of scenario {:?} came back to the state after step {} of {}, yet going round that cycle did not come back to a state it had been in: the state's key missed a difference",
            self.scenario_id(),
            cycle.from,
            cycle.schedule
        )))
    }

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
            return Err(Error::Store(format!(
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

impl Drop for Explorer {
    fn drop(&mut self) {
        // Pooled connections hold the store alive; let them go.
        self.store.set_pooling(false);
    }
}

/// Runs the breadth-first shrinker may spend.
pub const SHRINK_BUDGET: u64 = 20_000;

/// What the shrinker's runs may spend together, besides their number: as
/// much as four runs may each ([`super::BUDGETS`]). Runs of a hostile
/// design can each take a second or build tens of megabytes, and twenty
/// thousand of them would take hours; past this the counterexample is the
/// first found.
pub const SHRINK_SPENT: super::Spent = super::Spent {
    instructions: 4 * super::BUDGETS.run_instructions,
    bytes: 4 * super::BUDGETS.run_bytes,
};

/// What the breadth-first shrinkers have spent of their budgets: runs,
/// steps ([`SHRINK_STEP_BUDGET`]) and what the runs spent ([`SHRINK_SPENT`]).
struct Shrink {
    budget: u64,
    runs: u64,
    steps: u64,
    spent: super::Spent,
}

impl Shrink {
    fn new(budget: u64) -> Self {
        Shrink {
            budget,
            runs: 0,
            steps: 0,
            spent: super::Spent::default(),
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
pub const SHRINK_STEP_BUDGET: u64 = 100_000;

/// The scheduler of [`Explorer::lasso`].
struct Lasso<'c> {
    cycle: &'c dfs::Cycle,
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

    fn choose(&mut self, choice: &super::Choice<'_>) -> Result<usize> {
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
