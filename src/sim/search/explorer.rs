//! The explorer: a scenario set up once in its own store, ready to run many
//! times under any scheduler, to replay a schedule (a lasso's cycle
//! included), and to give each run's result with its trace and verdict.

use serde::Serialize;

use crate::engines::sqlite::store_of;
use crate::sim::scheduler::{Replay, Scheduler};
use crate::sim::{AsDeclared, Check, Choice, Run, Scenario, Schedule, Status, TraceStep, Verdict};
use crate::storage::{Snapshot, Store};
use crate::{Error, Result};

/// No run of a scenario may take more steps than this: the engine's guard.
/// A scenario file never reaches it, since each of its attempts is stopped
/// by a bound of its own first (a verdict, [`crate::sim::Bound::Steps`]; see the
/// assertion beside `format::MAX_ATTEMPT_STEPS`).
pub(crate) const MAX_RUN_STEPS: usize = 30_000;

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
    /// What the run spent of its budgets ([`crate::sim::BUDGETS`]).
    pub spent: crate::sim::Spent,
    /// The full trace, when recorded.
    pub trace: Option<Vec<TraceStep>>,
    /// The run beside what the scenario's author declared of it, if the
    /// declaration applies to these parameters: a failing run shows a
    /// design fails; a passing one shows nothing of the others.
    #[serde(flatten)]
    pub declaration: Option<AsDeclared>,
    /// The key of the state it ended in (symmetric: see
    /// [`Run::state_key`]); a search's final states are these keys.
    #[serde(skip)]
    pub final_state: u64,
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
pub(crate) fn explain(trace: &[TraceStep], verdict: &Verdict) -> Vec<String> {
    let mut sentences: Vec<String> = trace
        .iter()
        .map(|step| {
            let note = &step.report.note;
            let names_itself = note
                .strip_prefix(step.label.as_str())
                .is_some_and(|rest| rest.starts_with([' ', '\'']));
            let lost = step.power_loss.as_ref().map_or(String::new(), |p| {
                let parts: Vec<String> = p
                    .lost
                    .iter()
                    .flat_map(|(db, tables)| {
                        tables.iter().map(move |(table, rows)| {
                            let n = rows.len();
                            format!("{n} row{} of {db} {table}", if n == 1 { "" } else { "s" })
                        })
                    })
                    .collect();
                if parts.is_empty() {
                    " (no committed row lost)".to_string()
                } else {
                    format!(" (lost: {})", parts.join(", "))
                }
            });
            let lost = lost
                + &step
                    .unreadable
                    .iter()
                    .map(|(db, error)| format!("; then {db} could not be read: {error}"))
                    .collect::<String>();
            if names_itself {
                format!("{}. {note}{lost}", step.index + 1)
            } else {
                format!("{}. {}: {note}{lost}", step.index + 1, step.label)
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

/// A scenario set up once in its own store, ready to run many times.
pub struct Explorer {
    pub(super) scenario: Box<dyn Scenario>,
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
        let durable = scenario.keeps_durability();
        Self::set_up(scenario, durable)
    }

    /// As [`Explorer::new`], but its store keeps durability whether or not
    /// the scenario can lose power, so that [`Run::power_loss`] can cut it
    /// between any two steps (the power-loss sweep).
    pub fn keeping_durability(scenario: Box<dyn Scenario>) -> Result<Self> {
        Self::set_up(scenario, true)
    }

    fn set_up(scenario: Box<dyn Scenario>, durable: bool) -> Result<Self> {
        let store = Store::new("scenario")?;
        // Footprints name databases by slot: the scenario's own first, in
        // its order, so that every explorer of it numbers them alike.
        store.assign_slots(scenario.databases());
        scenario.setup(&store)?;
        if durable {
            store.keep_durability();
        }
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

    /// Whether a power loss can happen in its runs (its store keeps what is
    /// durable apart from what is written).
    pub fn keeps_durability(&self) -> bool {
        self.store.keeps_durability()
    }

    /// The first action of the scenario that acts on a machine (a power
    /// loss, a full disk, an I/O error), if it has one: what no script on
    /// real files can do.
    pub fn machine_fault(&self) -> Option<&'static str> {
        self.scenario.machine_fault()
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

    /// Replays the schedule of `run`, a run of this explorer's that ended,
    /// from a store of its own made from the initial snapshot (new
    /// connections: nothing pooled, nothing an earlier run left), and checks
    /// that it ends where `run` ended: every step's attempt could take it,
    /// and the statuses and the state's key come out the same. A search
    /// rewinds, reuses connections and merges states; a run it explored
    /// that a fresh replay does not reproduce means some state it kept or
    /// merged was not the whole state (see [`Run::state_key`]). On in the
    /// test suite ([`check_runs`]).
    pub fn check_fresh(&self, run: &Run<'_>) -> Result<()> {
        let schedule = run.schedule();
        let store = Store::from_snapshot("fresh", &self.initial)?;
        let mut fresh = Run::start(self.scenario.as_ref(), &store, false)?;
        let differs = |what: String| {
            Error::Defect(format!(
                "the search's run {} of {} is not what a replay from a fresh store does: {what}",
                self.show_schedule(&schedule),
                self.scenario.id()
            ))
        };
        for (i, &attempt) in schedule.steps().iter().enumerate() {
            if !fresh.runnable().contains(&attempt) {
                return Err(differs(format!("its step {} cannot be taken", i + 1)));
            }
            fresh.step(attempt)?;
        }
        if fresh.statuses() != run.statuses() {
            return Err(differs(format!(
                "the attempts end {:?} instead of {:?}",
                fresh.statuses(),
                run.statuses()
            )));
        }
        if fresh.state_key(false) != run.state_key(false) {
            let (ran, replayed) = (store_of(run.engine())?, store_of(fresh.engine())?);
            let (files, fresh_files) = (ran.files(), replayed.files());
            let what = if files != fresh_files {
                format!("its files are {files:?} instead of {fresh_files:?}")
            } else if run.attempt_keys() != fresh.attempt_keys() {
                let differ: Vec<usize> = (0..run.attempt_keys().len())
                    .filter(|&i| run.attempt_keys()[i] != fresh.attempt_keys()[i])
                    .collect();
                format!("the state of attempts {differ:?} differs")
            } else {
                let differ: Vec<String> = files
                    .iter()
                    .filter(|(name, _)| ran.file_bytes(name) != replayed.file_bytes(name))
                    .map(|(name, _)| name.clone())
                    .collect();
                format!("the bytes of {differ:?} differ, or what the store keeps of them")
            };
            return Err(differs(format!("the state it ends in differs: {what}")));
        }
        Ok(())
    }

    /// The result of a stopped run: its verdict and checks.
    pub fn finish(&self, run: &Run<'_>, with_trace: bool) -> Result<RunResult> {
        let verdict = run.verdict().ok_or_else(|| {
            Error::Refused("the run is not over: some attempt can still take a step".into())
        })?;
        self.result(run, verdict, with_trace)
    }

    /// The result of a run with `verdict`: a run that goes round for ever
    /// ([`Verdict::Loops`]) fails its completion and has no end state for
    /// the scenario's checks to read.
    fn result(&self, run: &Run<'_>, verdict: Verdict, with_trace: bool) -> Result<RunResult> {
        // Before the checks, whose reading may change the files (a hot
        // journal rolled back).
        let final_state = run.state_key(true);
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
            final_state,
        })
    }

    /// Runs the scenario to the end under `scheduler`.
    pub fn run(&self, scheduler: &mut dyn Scheduler, record: bool) -> Result<RunResult> {
        let mut run = self.start(record)?;
        let mut last = None;
        while !run.is_stopped() {
            if run.steps() >= MAX_RUN_STEPS {
                return Err(Error::OverBudget(format!(
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
        if check_runs() {
            self.check_fresh(&run)?;
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

    pub(super) fn steps_per_attempt(&self, result: &RunResult) -> Result<Vec<usize>> {
        let schedule = self.parse_schedule(&result.schedule)?;
        let recorded = self.replay(&schedule, true)?;
        let mut counts = vec![0usize; recorded.labels.len()];
        for step in recorded.trace.iter().flatten() {
            if step.report.progress != crate::sim::Progress::Blocked {
                counts[step.attempt] += 1;
            }
        }
        Ok(counts)
    }
}

/// Whether searches replay every run they end from a fresh store
/// ([`Explorer::check_fresh`]): on in debug builds (every `cargo test` and
/// `wasm-pack test`), off in releases unless the native process's
/// `REPLAYGROUND_CHECK_RUNS` is `1` (the test command sets it for the
/// release steps that search).
pub(crate) fn check_runs() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    const UNREAD: u8 = 2;
    static CHECK_RUNS: AtomicU8 = AtomicU8::new(UNREAD);
    match CHECK_RUNS.load(Ordering::Relaxed) {
        UNREAD => {
            #[cfg(not(target_family = "wasm"))]
            let asked = std::env::var("REPLAYGROUND_CHECK_RUNS").is_ok_and(|v| v == "1");
            #[cfg(target_family = "wasm")]
            let asked = false;
            let on = cfg!(debug_assertions) || asked;
            CHECK_RUNS.store(u8::from(on), Ordering::Relaxed);
            on
        }
        on => on == 1,
    }
}

impl Drop for Explorer {
    fn drop(&mut self) {
        // Pooled connections hold the store alive; let them go.
        self.store.set_pooling(false);
    }
}
