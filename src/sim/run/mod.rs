//! One run of a scenario: its attempts over a store, stepped one at a time,
//! with the trace, the invariants and the verdict.

mod state;

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use super::schedule;
use super::trace::{lost_rows, tables_size, volatile_rows, PowerLossView, Tables};
use super::{
    Attempt, Check, Ended, Ending, LockView, Outcome, Peer, Progress, RowChange, Scenario,
    Schedule, Spent, Status, StepCtx, StepReport, Table, TraceStep, Verdict, BUDGETS,
};
use crate::engines::{Engine, Faults, Moment, Opening, Session};
use crate::storage::footprint::{self, Footprint};
use crate::storage::{Death, LevelName, LockLevel, ShmLocks, SqlValue};
use crate::{Error, Result};
pub(crate) use state::Checkpoint;

/// Runs `scenario`'s attempts on `store` one after another, the lowest
/// runnable first, to completion (how a scenario's setup replays the
/// requests of the scenarios before it).
pub(crate) fn run_in_order(scenario: &dyn Scenario, store: &dyn Engine) -> Result<()> {
    let mut run = Run::start(scenario, store, false)?;
    while let Some(&next) = run.runnable().first() {
        run.step(next)?;
    }
    match run.verdict() {
        Some(Verdict::Completed) => Ok(()),
        other => Err(Error::Run(format!(
            "the earlier scenario {} did not complete in order: {other:?}",
            scenario.id()
        ))),
    }
}

/// The state a scheduler picks from: who can run, and who ran last.
#[derive(Debug, Clone)]
pub struct Choice<'a> {
    /// Indices of the runnable attempts, ascending.
    pub runnable: &'a [usize],
    /// The number of steps taken so far.
    pub step: usize,
    /// The attempt that took the previous step.
    pub last: Option<usize>,
    /// Every attempt's status.
    pub statuses: &'a [Status],
}

/// One run of a scenario: its attempts over a store, stepped one at a time.
pub struct Run<'s> {
    scenario: &'s dyn Scenario,
    engine: &'s dyn Engine,
    attempts: Vec<Box<dyn Attempt>>,
    statuses: Vec<Status>,
    choices: Vec<usize>,
    trace: Option<Vec<TraceStep>>,
    /// A scratch store the committed tables are read from when recording.
    observer: Option<Box<dyn Engine>>,
    /// The store's files when each attempt was over.
    at_end: Vec<Option<Moment>>,
    /// A hash of those files, for the attempts a check observes there.
    at_end_hash: Vec<Option<u64>>,
    /// What the last step touched, and the attempts it let run again.
    last_effects: (Footprint, Vec<usize>),
    /// The virtual clock, in seconds.
    clock: std::cell::Cell<i64>,
    /// Per invariant, the first step after which it did not hold and how.
    broken: Vec<Option<(usize, Check)>>,
    /// Every attempt's locks as [`Run::locks`] last read them: only a step
    /// or a crash changes them, and the search asks after every step.
    locks_now: std::cell::RefCell<Option<Rc<Locks>>>,
    /// Each attempt's own state hashed ([`Attempt::hash_state`]), while the
    /// attempt is unchanged: only its step, its crash and a restore change
    /// an attempt, and the search hashes every attempt after every step.
    state_hashes: Vec<std::cell::Cell<Option<u64>>>,
    /// Each attempt's copy ([`Attempt::save`]) while the attempt is
    /// unchanged, as the state hashes: a checkpoint after a step copies only
    /// the attempt that took it, and shares the others' with the one before.
    saved: Vec<std::cell::RefCell<Option<Rc<dyn std::any::Any>>>>,
    /// Each attempt's key ([`Run::attempt_key`]) while neither the attempt,
    /// its locks, its status nor its end changed: its own step, its crash
    /// or a restore, or another's step or crash that wakes it.
    keys: Vec<std::cell::Cell<Option<u64>>>,
    /// Each attempt's label, for its peers' explanations (shared, not
    /// copied at every step).
    labels: Vec<Rc<str>>,
    /// What it has spent of its [`BUDGETS`] (put back with the rest by a
    /// restore: a run rewound to a checkpoint has spent what it had then).
    spent: Spent,
    /// Bytes of tables its trace holds ([`crate::sim::Budgets::trace_bytes`]).
    trace_bytes: u64,
}

/// The hasher of state keys (see [`crate::storage::vfs::fixed_hasher`]).
pub(crate) use crate::storage::vfs::fixed_hasher as state_hasher;

/// Every lock each attempt holds, connection by connection (see
/// [`Run::locks`]): one vector for every attempt, each attempt's connections
/// a stretch of it (a run copies it at every step).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Locks {
    cells: Vec<(LockLevel, ShmLocks)>,
    /// Where each attempt's stretch of `cells` ends.
    ends: Vec<usize>,
}

impl Locks {
    /// Appends the next attempt's locks.
    fn push(&mut self, locks: impl IntoIterator<Item = (LockLevel, ShmLocks)>) {
        self.cells.extend(locks);
        self.ends.push(self.cells.len());
    }

    /// Each attempt's locks, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[(LockLevel, ShmLocks)]> {
        (0..self.ends.len()).map(|i| &self[i])
    }

    /// Replaces attempt `attempt`'s locks with `locks` (in place when they
    /// are as many as before, as they are unless a connection opened or
    /// closed).
    fn replace(&mut self, attempt: usize, locks: impl Iterator<Item = (LockLevel, ShmLocks)>) {
        let start = self.start(attempt);
        let end = self.ends[attempt];
        let mut at = start;
        for lock in locks {
            if at < end {
                self.cells[at] = lock;
            } else {
                self.cells.insert(at, lock);
            }
            at += 1;
        }
        if at < end {
            self.cells.drain(at..end);
        }
        if at != end {
            for e in &mut self.ends[attempt..] {
                *e = *e + at - end;
            }
        }
    }

    fn start(&self, attempt: usize) -> usize {
        attempt.checked_sub(1).map_or(0, |i| self.ends[i])
    }
}

impl std::ops::Index<usize> for Locks {
    type Output = [(LockLevel, ShmLocks)];

    fn index(&self, attempt: usize) -> &Self::Output {
        &self.cells[self.start(attempt)..self.ends[attempt]]
    }
}

impl<'s> Run<'s> {
    /// Starts a run on `store`, which must hold the scenario's set-up state
    /// and no open connection. With `record`, every step is traced in full.
    pub fn start(scenario: &'s dyn Scenario, engine: &'s dyn Engine, record: bool) -> Result<Self> {
        let attempts = scenario.attempts()?;
        if attempts.is_empty() || attempts.len() > schedule::MAX_ATTEMPTS {
            return Err(Error::invalid(
                "attempts",
                format!("a scenario has 1 to {} attempts", schedule::MAX_ATTEMPTS),
            ));
        }
        engine.track_changes(record);
        let mut statuses = Vec::with_capacity(attempts.len());
        for (i, attempt) in attempts.iter().enumerate() {
            statuses.push(match attempt.waits_for() {
                None => Status::Runnable,
                Some(on) if on < attempts.len() && on != i => Status::Waiting { on },
                Some(on) => {
                    return Err(Error::invalid(
                        "attempts",
                        format!(
                            "attempt {} cannot wait for attempt {}",
                            Schedule::letter(i),
                            Schedule::letter(on)
                        ),
                    ))
                }
            });
        }
        let at_end = vec![None; attempts.len()];
        let at_end_hash = vec![None; attempts.len()];
        let state_hashes = vec![std::cell::Cell::new(None); attempts.len()];
        let keys = vec![std::cell::Cell::new(None); attempts.len()];
        let labels = attempts.iter().map(|a| Rc::from(a.label())).collect();
        let saved = (0..attempts.len())
            .map(|_| std::cell::RefCell::new(None))
            .collect();
        Ok(Run {
            scenario,
            engine,
            attempts,
            statuses,
            choices: Vec::new(),
            trace: record.then(Vec::new),
            observer: if record {
                Some(engine.copy(false)?)
            } else {
                None
            },
            at_end,
            at_end_hash,
            last_effects: (Footprint::default(), Vec::new()),
            clock: std::cell::Cell::new(0),
            broken: Vec::new(),
            locks_now: std::cell::RefCell::new(None),
            state_hashes,
            saved,
            keys,
            labels,
            spent: Spent::default(),
            trace_bytes: 0,
        })
    }

    /// What it has spent of its [`BUDGETS`] so far.
    pub fn spent(&self) -> Spent {
        self.spent
    }

    /// Evaluates the scenario's invariants on the committed state after
    /// step `index` and keeps the first failure of each.
    fn check_invariants(&mut self, index: usize) -> Result<()> {
        if !self.scenario.has_invariants() {
            return Ok(());
        }
        let copy = self.engine.copy(false)?;
        let checks = self.scenario.invariants(copy.as_ref())?;
        if self.broken.len() < checks.len() {
            self.broken.resize(checks.len(), None);
        }
        for (slot, check) in self.broken.iter_mut().zip(checks) {
            if slot.is_none() && !check.pass {
                *slot = Some((index, check));
            }
        }
        Ok(())
    }

    /// A store holding the committed state as it was when attempt `index`
    /// was over (`None` if it is not over).
    pub fn store_at_end_of(&self, index: usize) -> Result<Option<Box<dyn Engine>>> {
        match self.at_end.get(index) {
            Some(Some(moment)) => Ok(Some(self.engine.at(moment)?)),
            _ => Ok(None),
        }
    }

    /// Whether attempt `index` is a process that can die.
    pub fn can_crash(&self, index: usize) -> bool {
        self.attempts.get(index).is_some_and(|a| a.can_crash())
    }

    /// The digest of what the engine's databases hold, or where it cannot
    /// give one, of the path that led there (no two states are merged).
    pub(crate) fn digest(&self) -> u64 {
        let mut hasher = state_hasher();
        if !self.engine.digest(&mut hasher) {
            self.choices.hash(&mut hasher);
        }
        hasher.finish()
    }

    /// The engine's faults, or why it has none.
    fn faults(&self) -> Result<&'s dyn Faults> {
        crate::engines::faults_of(self.engine)
    }

    /// Whether a power loss can happen on the engine: it keeps what is
    /// durable apart from what is written.
    pub(crate) fn keeps_durability(&self) -> bool {
        self.engine.faults().is_some_and(Faults::keeps_durability)
    }

    /// How many power losses the engine has had.
    fn power_losses(&self) -> u64 {
        self.engine.faults().map_or(0, Faults::power_losses)
    }

    /// The engine the run works on.
    pub fn engine(&self) -> &'s dyn Engine {
        self.engine
    }

    /// The database files of the run's scenario.
    pub fn databases(&self) -> Vec<&'static str> {
        self.scenario.databases()
    }

    /// The virtual time, in seconds.
    pub fn now(&self) -> i64 {
        self.clock.get()
    }

    /// Indices of the attempts that can take a step, ascending.
    pub fn runnable(&self) -> Vec<usize> {
        (0..self.attempts.len())
            .filter(|&i| self.can_step(i))
            .collect()
    }

    /// Whether attempt `attempt` can take a step (see [`Run::runnable`]).
    fn can_step(&self, attempt: usize) -> bool {
        self.statuses
            .get(attempt)
            .is_some_and(|s| matches!(s, Status::Runnable))
            && self.attempts[attempt].ready(self.clock.get(), &self.statuses)
    }

    /// Every attempt's status.
    pub fn statuses(&self) -> &[Status] {
        &self.statuses
    }

    /// The attempts' labels.
    pub fn labels(&self) -> Vec<String> {
        self.attempts
            .iter()
            .map(|a| a.label().to_string())
            .collect()
    }

    /// The choices made so far.
    pub fn schedule(&self) -> Schedule {
        Schedule::new(self.choices.clone())
    }

    /// The number of steps taken.
    pub fn steps(&self) -> usize {
        self.choices.len()
    }

    /// The trace so far, if the run records one.
    pub fn trace(&self) -> Option<&[TraceStep]> {
        self.trace.as_deref()
    }

    /// Whether no attempt can take a step (all over, or deadlocked).
    pub fn is_stopped(&self) -> bool {
        !(0..self.attempts.len()).any(|i| self.can_step(i))
    }

    fn peers(&self, except: usize, locks: &Locks) -> Vec<Peer> {
        self.attempts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != except)
            .map(|(i, a)| Peer {
                index: i,
                label: Rc::clone(&self.labels[i]),
                phase: a.phase(),
                finished: self.statuses[i].is_over(),
                lock: strongest(&locks[i]),
                wal: wal_held(&locks[i]),
            })
            .collect()
    }

    fn runnable_labels(&self) -> String {
        let labels: Vec<&str> = self
            .runnable()
            .into_iter()
            .map(|i| self.attempts[i].label())
            .collect();
        if labels.is_empty() {
            "none".to_string()
        } else {
            labels.join(", ")
        }
    }

    /// Lets attempt `attempt` take its next step; returns its progress.
    pub fn step(&mut self, attempt: usize) -> Result<Progress> {
        if !self.can_step(attempt) {
            let Some(known) = self.attempts.get(attempt) else {
                let name = u8::try_from(attempt).ok().filter(|&i| i < 26).map_or_else(
                    || format!("#{attempt}"),
                    |i| char::from(b'A' + i).to_string(),
                );
                return Err(Error::invalid(
                    "attempt",
                    format!(
                        "there is no attempt {name}: this scenario has attempts {}",
                        self.labels().join(", ")
                    ),
                ));
            };
            return Err(Error::invalid(
                "attempt",
                format!(
                    "{} cannot take a step now (runnable: {})",
                    known.label(),
                    self.runnable_labels()
                ),
            ));
        }
        let before = self.locks();
        let peers = self.peers(attempt, &before);
        let ctx = StepCtx {
            engine: self.engine,
            peers: &peers,
            clock: &self.clock,
            narrate: self.trace.is_some(),
        };
        let time = self.clock.get();
        let power_losses_before = self.power_losses();
        // Attempts are at most 26 (schedule::MAX_ATTEMPTS): one bit each.
        let idle_before: u64 = self
            .statuses
            .iter()
            .enumerate()
            .filter(|(_, s)| !matches!(s, Status::Runnable))
            .fold(0, |bits, (i, _)| bits | 1 << i);
        // A caller that wants the engine back is heard before each step,
        // and inside a long statement (which SQLite then stops): the run
        // is abandoned, and nothing of it counts.
        if crate::storage::interrupt_due() {
            return Err(Error::Interrupted);
        }
        crate::storage::take_interrupted();
        footprint::begin();
        let (report, instructions, bytes) = crate::storage::with_run_budget(
            BUDGETS
                .run_instructions
                .saturating_sub(self.spent.instructions),
            BUDGETS.run_bytes.saturating_sub(self.spent.bytes),
            || self.attempts[attempt].step(&ctx),
        );
        self.spent.instructions += instructions;
        self.spent.bytes += bytes;
        if crate::storage::take_interrupted() {
            footprint::end();
            return Err(Error::Interrupted);
        }
        self.changed(attempt);
        let mut touched = footprint::end();
        if self.clock.get() != time {
            touched.global = true;
        }
        self.choices.push(attempt);
        self.statuses[attempt] = match &report.progress {
            Progress::Progressed => Status::Runnable,
            Progress::Blocked => Status::Blocked,
            Progress::Finished { outcome } => Status::Finished {
                outcome: outcome.clone(),
            },
            Progress::Failed { error, bound } => Status::Failed {
                error: error.clone(),
                bound: *bound,
            },
        };
        let mut lost = before.clone();
        if touched.global {
            for victim in self.crash_power_victims()? {
                // Its connections are gone, and their locks with them.
                Rc::make_mut(&mut lost).replace(victim, std::iter::empty());
            }
        }
        let after = self.locks_after_step(&lost, attempt);
        // A released lock (or an attempt that is over) may let the blocked ones through.
        let released = before.iter().zip(after.iter()).any(|(b, a)| released(b, a))
            || self.statuses[attempt].is_over();
        if released {
            // Whom it lets through depends on who is blocked now (it writes
            // those it lets through, below).
            touched.reads_blocked = u32::MAX;
            for (i, status) in self.statuses.iter_mut().enumerate() {
                if *status == Status::Blocked && i != attempt {
                    *status = Status::Runnable;
                }
            }
        }
        if self.statuses[attempt] == Status::Blocked {
            // Blocked now, it waits for the next release: which release lets
            // it through depends on the order.
            touched.writes_blocked |= 1 << attempt;
        }
        if self.statuses[attempt].is_over() {
            self.at_end[attempt] = Some(self.engine.moment()?);
            // Its status changes what waiters and status readers see.
            touched.writes_status |= 1 << attempt;
            if self.scenario.observes_end_of(attempt) {
                // A check reads the whole committed state as of now.
                touched.reads = u64::MAX;
                self.at_end_hash[attempt] = Some(self.digest());
            }
            for status in self.statuses.iter_mut() {
                if *status == (Status::Waiting { on: attempt }) {
                    *status = Status::Runnable;
                }
            }
        }
        let woken: Vec<usize> = (0..self.statuses.len())
            .filter(|&i| {
                i != attempt
                    && matches!(self.statuses[i], Status::Runnable)
                    && idle_before & (1 << i) != 0
            })
            .collect();
        for &i in &woken {
            touched.writes_blocked |= 1 << i;
            self.keys[i].set(None);
        }
        self.last_effects = (touched, woken);
        self.check_invariants(self.choices.len() - 1)?;
        let progress = report.progress.clone();
        if self.trace.is_some() {
            let changes = self.attempts[attempt]
                .connections()
                .iter()
                .flatten()
                .flat_map(|c| {
                    let db = c.db().to_string();
                    c.take_changes().into_iter().map(move |ch| RowChange {
                        db: db.clone(),
                        table: ch.table,
                        op: ch.op,
                        rowid: ch.rowid,
                    })
                })
                .collect();
            let mut step = TraceStep {
                index: self.choices.len() - 1,
                attempt,
                label: self.attempts[attempt].label().to_string(),
                report,
                locks: self
                    .attempts
                    .iter()
                    .map(|a| {
                        let conns: Vec<&dyn Session> = a
                            .connections()
                            .iter()
                            .flatten()
                            .map(|c| c.as_ref())
                            .collect();
                        LockView::of(a.label(), &conns)
                    })
                    .collect(),
                changes,
                tables: BTreeMap::new(),
                tables_left_out: true,
                volatile: BTreeMap::new(),
                power_loss: None,
                unreadable: BTreeMap::new(),
            };
            if self.trace_bytes < BUDGETS.trace_bytes {
                let (tables, unreadable) = self.tables_readable(false)?;
                step.unreadable = unreadable;
                self.trace_bytes += tables_size(&tables);
                if self.trace_bytes <= BUDGETS.trace_bytes {
                    if self.keeps_durability() {
                        let (durable, _) = self.tables_readable(true)?;
                        step.volatile = volatile_rows(&tables, &durable);
                    }
                    if self.power_losses() != power_losses_before {
                        let before = self
                            .trace
                            .as_ref()
                            .and_then(|t| t.last())
                            .map(|s| &s.tables);
                        step.power_loss = Some(PowerLossView {
                            lost: before.map(|b| lost_rows(b, &tables)).unwrap_or_default(),
                        });
                    }
                    step.tables = tables;
                    step.tables_left_out = false;
                }
            }
            if let Some(trace) = &mut self.trace {
                trace.push(step);
            }
        }
        Ok(progress)
    }

    /// What the last step touched (see [`footprint`]), and the attempts it
    /// let run again (blocked on a lock, or waiting for it to be over): their
    /// next steps happen after it.
    pub fn last_effects(&self) -> &(Footprint, Vec<usize>) {
        &self.last_effects
    }

    /// Kills attempt `attempt` now, between steps, as if its process died:
    /// its locks vanish, its uncommitted work stays behind as a hot journal,
    /// and it is over (outcome `crashed`).
    pub fn crash(&mut self, attempt: usize) -> Result<()> {
        if self.statuses.get(attempt).is_none_or(Status::is_over)
            || !self.attempts[attempt].can_crash()
        {
            return Err(Error::invalid(
                "attempt",
                format!("attempt {attempt} is not running"),
            ));
        }
        self.mark_crashed(attempt)
    }

    /// Attempt `attempt` is dead (its process or its machine): its
    /// connections are killed, and it is over, crashed, whatever its last
    /// step said.
    fn mark_crashed(&mut self, attempt: usize) -> Result<()> {
        self.attempts[attempt].crash();
        self.changed(attempt);
        self.locks_now.take();
        self.statuses[attempt] = Status::Finished {
            outcome: Outcome::ended(Ending::Crashed, None),
        };
        self.at_end[attempt] = Some(self.engine.moment()?);
        if self.scenario.observes_end_of(attempt) {
            self.at_end_hash[attempt] = Some(self.digest());
        }
        for (i, status) in self.statuses.iter_mut().enumerate() {
            if i != attempt
                && (*status == Status::Blocked || *status == (Status::Waiting { on: attempt }))
            {
                *status = Status::Runnable;
                self.keys[i].set(None);
            }
        }
        Ok(())
    }

    /// After a power loss: every attempt with a connection on a machine
    /// that lost power dies with it. Returns those attempts.
    fn crash_power_victims(&mut self) -> Result<Vec<usize>> {
        let victims: Vec<usize> = (0..self.attempts.len())
            .filter(|&i| {
                !self.statuses[i].is_over()
                    && self.attempts[i]
                        .connections()
                        .iter()
                        .flatten()
                        .any(|c| c.lost_power())
            })
            .collect();
        for &victim in &victims {
            self.crash(victim)?;
        }
        Ok(victims)
    }

    /// Lets attempt `attempt` take its next step, with a death armed at the
    /// `at`th sync it makes (see [`Store::arm_any`]): the power-loss sweep's
    /// points inside a statement. Returns whether the death came; if it
    /// did, the attempt is over, crashed, whatever its step answered.
    pub fn step_dying(&mut self, attempt: usize, at: u32, death: Death) -> Result<bool> {
        let faults = self.faults()?;
        faults.arm_any(at, death);
        let stepped = self.step(attempt);
        let fired = faults.disarm_any().is_some();
        stepped?;
        let crashed =
            matches!(&self.statuses[attempt], Status::Finished { outcome } if outcome.is_crash());
        if fired && !crashed {
            self.mark_crashed(attempt)?;
        }
        Ok(fired)
    }

    /// The power goes out now, between steps, on the machine holding
    /// `databases` (every database if empty): what was not synced is lost
    /// (with `torn`, each sector written since a file's last sync is kept
    /// when it answers true), and every attempt with a connection there
    /// dies. Refused unless the scenario's store keeps durability.
    pub fn power_loss(
        &mut self,
        databases: &[String],
        torn: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<()> {
        self.faults()?.power_loss(databases, torn)?;
        self.locks_now.take();
        for i in self.crash_power_victims()? {
            self.changed(i);
        }
        Ok(())
    }

    /// The committed contents of the scenario's databases: read from a copy
    /// of the store's files, where SQLite rolls back any hot journal, so the
    /// attempts' own connections and locks are not disturbed.
    pub fn committed_tables(&self) -> Result<BTreeMap<String, BTreeMap<String, Table>>> {
        self.tables_seen(false)
    }

    /// A digest of the run's end that does not depend on the machine (the
    /// state key does: its hasher folds differently on 32-bit targets): the
    /// committed tables of every database (or why SQLite cannot read one)
    /// and every attempt's status, the statuses of attempts of one class
    /// taken as a multiset, as the symmetric state key takes them. Equal
    /// keys give equal digests; the digest forgets what the key holds
    /// beyond that (a file's free pages, an attempt's captures). It lets
    /// the page's search and the command line's compare their sets of final
    /// states.
    pub fn final_digest(&self) -> Result<u64> {
        let (tables, unreadable) = self.tables_readable(false)?;
        let mut statuses: Vec<String> = self
            .statuses
            .iter()
            .map(serde_json::to_string)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::Defect(format!("a status as JSON: {e}")))?;
        // Within each class (the first attempt of it names it), the
        // statuses sorted and dealt back in the attempts' order.
        let classes: Vec<u64> = (0..statuses.len()).map(|i| self.class_of(i)).collect();
        for (first, &class) in classes.iter().enumerate() {
            if classes[..first].contains(&class) {
                continue;
            }
            let members: Vec<usize> = (first..classes.len())
                .filter(|&i| classes[i] == class)
                .collect();
            let mut own: Vec<String> = members.iter().map(|&i| statuses[i].clone()).collect();
            own.sort_unstable();
            for (&i, status) in members.iter().zip(own) {
                statuses[i] = status;
            }
        }
        let text = serde_json::to_string(&(&tables, &unreadable, &statuses))
            .map_err(|e| Error::Defect(format!("a final state as JSON: {e}")))?;
        Ok(fnv1a(text.as_bytes()))
    }

    /// The committed contents a power loss now would leave (see
    /// [`Store::copy_durable_files_from`]); `None` unless the store keeps
    /// durability.
    pub fn durable_tables(&self) -> Result<Option<BTreeMap<String, BTreeMap<String, Table>>>> {
        if !self.keeps_durability() {
            return Ok(None);
        }
        self.tables_seen(true).map(Some)
    }

    /// The committed tables of a copy of the store's files, or of what a
    /// power loss would leave of them (`durable`). A database SQLite cannot
    /// read (a power loss with `synchronous = OFF` tore it) is an error.
    fn tables_seen(&self, durable: bool) -> Result<BTreeMap<String, BTreeMap<String, Table>>> {
        let (tables, mut unreadable) = self.tables_readable(durable)?;
        match unreadable.pop_first() {
            None => Ok(tables),
            Some((db, error)) => Err(Error::invalid(
                "database",
                format!("{db} cannot be read: {error}"),
            )),
        }
    }

    /// The committed tables of the databases SQLite can read, and for each
    /// it cannot, why (a torn database: "database disk image is malformed").
    fn tables_readable(&self, durable: bool) -> Result<(Tables, BTreeMap<String, String>)> {
        let owned;
        let observer = match &self.observer {
            Some(observer) => {
                self.engine.copy_into(observer.as_ref(), durable)?;
                observer.as_ref()
            }
            None => {
                owned = self.engine.copy(durable)?;
                owned.as_ref()
            }
        };
        let present = observer.databases();
        let mut out = BTreeMap::new();
        let mut unreadable = BTreeMap::new();
        for db in self.scenario.databases() {
            if !present.iter().any(|name| name == db) {
                out.insert(db.to_string(), BTreeMap::new());
                continue;
            }
            let conn = observer.open(&Opening::reader(db, i32::MAX))?;
            match read_tables(conn.as_ref()) {
                Ok(tables) => {
                    out.insert(db.to_string(), tables);
                }
                Err(e) => {
                    unreadable.insert(db.to_string(), e.to_string());
                }
            }
        }
        Ok((out, unreadable))
    }

    /// Why the run stopped, or `None` while some attempt can still run.
    pub fn verdict(&self) -> Option<Verdict> {
        if !self.is_stopped() {
            return None;
        }
        if self.statuses.iter().all(Status::is_over) {
            return Some(Verdict::Completed);
        }
        let now = self.clock.get();
        let levels = self.lock_levels();
        let waits = self
            .statuses
            .iter()
            .enumerate()
            .filter(|&(i, s)| {
                matches!(s, Status::Blocked | Status::Waiting { .. })
                    || (*s == Status::Runnable && !self.attempts[i].ready(now, &self.statuses))
            })
            .map(|(i, _)| {
                let holders: Vec<String> = levels
                    .iter()
                    .enumerate()
                    .filter(|&(j, level)| j != i && *level > LockLevel::None)
                    .map(|(j, level)| {
                        format!("{} (holds {})", self.attempts[j].label(), level.name())
                    })
                    .collect();
                format!(
                    "{} (holds {}) waits for {}",
                    self.attempts[i].label(),
                    levels[i].name(),
                    if holders.is_empty() {
                        "a lock no attempt holds".to_string()
                    } else {
                        holders.join(" and ")
                    }
                )
            })
            .collect();
        Some(Verdict::Deadlock { waits })
    }

    /// The scenario's checks on the committed state the run left.
    pub fn checks(&self) -> Result<Vec<Check>> {
        let idle = self.statuses.iter().all(Status::is_over)
            && self.lock_levels().iter().all(|l| *l == LockLevel::None);
        let mut checks = if idle {
            // Nobody holds a lock or a connection: the run's own store is the
            // committed state, and a fresh reader there rolls back any hot journal.
            self.scenario.checks(&Ended {
                committed: self.engine,
                statuses: &self.statuses,
                at_end: &self.at_end,
            })?
        } else {
            let copy = self.engine.copy(false)?;
            self.scenario.checks(&Ended {
                committed: copy.as_ref(),
                statuses: &self.statuses,
                at_end: &self.at_end,
            })?
        };
        // Each invariant: held after every step, or the first step it broke.
        if self.scenario.has_invariants() {
            let copy = self.engine.copy(false)?;
            for (i, check) in self
                .scenario
                .invariants(copy.as_ref())?
                .into_iter()
                .enumerate()
            {
                let name = format!("after every step: {}", check.name);
                checks.push(match self.broken.get(i).cloned().flatten() {
                    None => Check {
                        name,
                        actual: check.expected.clone(),
                        ..check
                    },
                    Some((step, broken)) => Check {
                        name,
                        expected: broken.expected,
                        actual: format!("{} after step {}", broken.actual, step + 1),
                        pass: false,
                    },
                });
            }
        }
        Ok(checks)
    }
}

/// Whether an attempt's locks `after` a step are weaker than `before` it: its
/// strongest level lowered, or a wal-index lock let go.
fn released(before: &[(LockLevel, ShmLocks)], after: &[(LockLevel, ShmLocks)]) -> bool {
    let slots = |locks| {
        let wal = wal_held(locks);
        wal.shared | wal.exclusive
    };
    strongest(after) < strongest(before) || slots(before) & !slots(after) != 0
}

/// The strongest level an attempt's connections hold.
fn strongest(locks: &[(LockLevel, ShmLocks)]) -> LockLevel {
    locks
        .iter()
        .map(|(l, _)| *l)
        .max()
        .unwrap_or(LockLevel::None)
}

/// The wal-index locks an attempt's connections hold together.
fn wal_held(locks: &[(LockLevel, ShmLocks)]) -> ShmLocks {
    locks
        .iter()
        .fold(ShmLocks::default(), |all, (_, shm)| all.union(*shm))
}

/// How many steps an attempt run alone may take per unit of its work (a
/// request; one event of a relay) before it is taken for a program that
/// does not end.
pub const MAX_ALONE_STEPS: usize = 256;

/// Runs one attempt alone on `store` to its end, at virtual time `now`:
/// its outcome and every step's report. More than `max_steps` steps are
/// an error.
pub(crate) fn run_alone(
    store: &dyn Engine,
    attempt: &mut dyn Attempt,
    now: i64,
    max_steps: usize,
) -> Result<(Outcome, Vec<StepReport>)> {
    let clock = std::cell::Cell::new(now);
    let ctx = StepCtx {
        engine: store,
        peers: &[],
        clock: &clock,
        narrate: true,
    };
    let mut steps = Vec::new();
    loop {
        let report = attempt.step(&ctx);
        let progress = report.progress.clone();
        steps.push(report);
        match progress {
            Progress::Finished { outcome } => return Ok((outcome, steps)),
            Progress::Failed { error, .. } => return Err(Error::Run(error)),
            Progress::Blocked => {
                return Err(Error::Run(format!(
                    "{} was refused a lock although it runs alone",
                    attempt.label()
                )))
            }
            Progress::Progressed if steps.len() > max_steps => {
                return Err(Error::Run(format!(
                    "{} did not finish in {max_steps} steps",
                    attempt.label()
                )))
            }
            Progress::Progressed => {}
        }
    }
}

/// The 64-bit FNV-1a hash of `bytes`: the same on every machine.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Every table of `conn`'s database with its rows, by name.
fn read_tables(conn: &dyn Session) -> Result<BTreeMap<String, Table>> {
    let mut tables = BTreeMap::new();
    let names = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        &[],
    )?;
    for row in names.rows {
        if let Some(SqlValue::Text(name)) = row.into_iter().next() {
            let rows = conn.execute(
                &format!(
                    "SELECT * FROM \"{}\" ORDER BY rowid",
                    name.replace('"', "\"\"")
                ),
                &[],
            )?;
            tables.insert(
                name,
                Table {
                    columns: rows.columns,
                    rows: rows.rows,
                },
            );
        }
    }
    Ok(tables)
}
