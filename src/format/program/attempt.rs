//! An attempt running its program: one step at a time, on its own
//! connection per database.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use super::super::limits::{MAX_STATEMENT_INSTRUCTIONS, MAX_VALUE_BYTES};
use super::ir::{
    fill, fill_note, hash_value, param_value, sql_json, words_of, Act, Instance, InstanceKind,
    Step, StepKind,
};
use super::MAX_RETRIES;
use crate::engines::{Engine, Opening, Session};
use crate::sim::{Attempt, Bound, Ending, Outcome, Peer, Progress, Status, StepCtx, StepReport};
use crate::storage::with_budget;
use crate::storage::{LockLevel, SqlValue};
use crate::{Error, Result};

/// One attempt of a file: a program counter over its steps, what it
/// captured, and a connection per database.
pub(super) struct ProgramAttempt {
    pub(super) instance: Rc<Instance>,
    pub(super) conns: Vec<Option<Box<dyn Session>>>,
    pub(super) state: AttemptState,
    /// Per database, whether a rewind keeps the transaction it has open:
    /// the very one the checkpoint has, with nothing done since.
    pub(super) kept: Vec<bool>,
}

/// What a program attempt is, apart from its connections: all a
/// checkpoint keeps of it ([`Attempt::save`]).
pub(super) struct AttemptState {
    pub(super) pc: usize,
    /// Shared with the checkpoints that saved them, until changed.
    pub(super) captures: Rc<BTreeMap<String, SqlValue>>,
    pub(super) log: Rc<Vec<String>>,
    pub(super) retries: u32,
    /// Steps taken, blocked ones included (loops end at a bound).
    pub(super) taken: usize,
    /// Steps that were not blocked (for `crash-after`).
    pub(super) done_steps: usize,
    /// How it ended, once over.
    pub(super) over: Option<&'static str>,
    /// What the step being taken saw: rows changed, the virtual time, and
    /// the error, if any.
    pub(super) changes: u64,
    pub(super) now: i64,
    pub(super) error: String,
    /// The rowid the connection inserted last (`{rowid}`).
    pub(super) rowid: i64,
    /// Per database, the statements its connection ran in the transaction
    /// it has open (the step's index and the values bound), to run them
    /// again on a rewound run ([`Attempt::resume`]).
    pub(super) open_work: Vec<Rc<Work>>,
    /// Per database, the lock that transaction held when saved (a
    /// rewound run's: the lock to take back).
    pub(super) levels: Vec<LockLevel>,
}

impl Clone for AttemptState {
    fn clone(&self) -> Self {
        AttemptState {
            pc: self.pc,
            captures: Rc::clone(&self.captures),
            log: Rc::clone(&self.log),
            retries: self.retries,
            taken: self.taken,
            done_steps: self.done_steps,
            over: self.over,
            changes: self.changes,
            now: self.now,
            error: self.error.clone(),
            rowid: self.rowid,
            open_work: self.open_work.clone(),
            levels: self.levels.clone(),
        }
    }

    /// Field by field, keeping this state's allocations: a rewound run
    /// takes back every attempt's state at every rewind.
    fn clone_from(&mut self, source: &Self) {
        let AttemptState {
            pc,
            captures,
            log,
            retries,
            taken,
            done_steps,
            over,
            changes,
            now,
            error,
            rowid,
            open_work,
            levels,
        } = source;
        self.pc = *pc;
        self.captures.clone_from(captures);
        self.log.clone_from(log);
        self.retries = *retries;
        self.taken = *taken;
        self.done_steps = *done_steps;
        self.over = *over;
        self.changes = *changes;
        self.now = *now;
        self.error.clone_from(error);
        self.rowid = *rowid;
        self.open_work.clone_from(open_work);
        self.levels.clone_from(levels);
    }
}

impl AttemptState {
    /// Database `db`'s connection has no transaction open: no work to redo.
    pub(super) fn forget_work(&mut self, db: usize) {
        if !self.open_work[db].is_empty() {
            self.open_work[db] = Rc::default();
        }
    }
}

/// The statements a transaction ran: each step's index and its values bound.
pub(super) type Work = Vec<(usize, Vec<SqlValue>)>;

/// Which result a statement gave, for `on`.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Answer {
    Ok,
    Rows,
    None,
    Busy,
    Constraint,
    Error,
}

impl Answer {
    pub(super) fn word(self) -> &'static str {
        match self {
            Answer::Ok => "ok",
            Answer::Rows => "rows",
            Answer::None => "none",
            Answer::Busy => "busy",
            Answer::Constraint => "constraint",
            Answer::Error => "error",
        }
    }
}

impl ProgramAttempt {
    pub(super) fn new(instance: Rc<Instance>) -> Self {
        let databases = instance.files.len();
        ProgramAttempt {
            state: AttemptState {
                pc: instance.start,
                open_work: vec![Rc::default(); databases],
                levels: vec![LockLevel::None; databases],
                captures: Rc::default(),
                log: Rc::default(),
                retries: 0,
                taken: 0,
                done_steps: 0,
                over: None,
                changes: 0,
                now: 0,
                error: String::new(),
                rowid: 0,
            },
            instance,
            conns: (0..databases).map(|_| None).collect(),
            kept: vec![false; databases],
        }
    }

    pub(super) fn steps(&self) -> &[Step] {
        match &self.instance.kind {
            InstanceKind::Program(steps) => steps,
            InstanceKind::Clock { .. } => &[],
        }
    }

    pub(super) fn bind(&self, step: &Step, name: &str, now: i64) -> Option<SqlValue> {
        if let Some(value) = self.state.captures.get(name) {
            return Some(value.clone());
        }
        if let Some((_, v)) = step
            .with
            .iter()
            .chain(&self.instance.values)
            .find(|(n, _)| n == name)
        {
            return Some(v.clone());
        }
        match name {
            "attempt" => return Some(SqlValue::Integer(self.instance.index as i64)),
            "label" => return Some(SqlValue::Text(self.instance.label.clone())),
            "now" => return Some(SqlValue::Integer(now)),
            _ => {}
        }
        param_value(&self.instance.params, name)
    }

    pub(super) fn log_text(&self) -> String {
        if self.state.log.is_empty() {
            "nothing".to_string()
        } else {
            self.state.log.join(", ")
        }
    }

    /// `{name}` in a template: a capture, a value, a parameter, `{label}`,
    /// `{role}`, `{rows}`, `{log}`, `{because}`, `{error}`.
    pub(super) fn words(
        &self,
        step: &Step,
        template: &str,
        extra: &dyn Fn(&str) -> Option<String>,
    ) -> String {
        fill(template, &|name| self.word(step, name, extra))
    }

    /// A note's words: as [`Self::words`], through [`fill_note`].
    pub(super) fn note_words(
        &self,
        step: &Step,
        template: &str,
        extra: &dyn Fn(&str) -> Option<String>,
    ) -> String {
        fill_note(template, &|name| self.word(step, name, extra))
    }

    /// What `{name}` stands for in a template of `step`.
    pub(super) fn word(
        &self,
        step: &Step,
        name: &str,
        extra: &dyn Fn(&str) -> Option<String>,
    ) -> Option<String> {
        extra(name).or_else(|| match name {
            "label" => Some(self.instance.label.clone()),
            "role" => Some(
                self.instance
                    .role
                    .clone()
                    .unwrap_or_else(|| "attempt".into()),
            ),
            "log" => Some(self.log_text()),
            "changes" => Some(self.state.changes.to_string()),
            "now" => Some(self.state.now.to_string()),
            "error" => Some(self.state.error.clone()),
            "rowid" => Some(self.state.rowid.to_string()),
            _ => self.bind(step, name, self.state.now).map(|v| words_of(&v)),
        })
    }

    /// The outcome's result: `:capture` reads a capture (NULL: no result),
    /// anything else is text with `{name}` filled in.
    pub(super) fn result_of(&self, step: &Step, result: &Option<String>) -> Option<String> {
        let result = result.as_ref()?;
        match result.strip_prefix(':') {
            Some(name) => match self.bind(step, name, 0) {
                None | Some(SqlValue::Null) => None,
                Some(SqlValue::Text(t)) => Some(t),
                Some(other) => Some(sql_json(&other).to_string()),
            },
            None => Some(self.words(step, result, &|_| None)),
        }
    }

    pub(super) fn clear(&mut self) {
        if !self.state.captures.is_empty() {
            self.state.captures = Rc::default();
        }
    }

    pub(super) fn goto(&mut self, target: usize) -> (Progress, Option<String>) {
        if target == self.instance.start {
            // Going back to the start forgets what the program read.
            self.clear();
        }
        self.state.pc = target;
        if self.state.pc >= self.steps().len() {
            return self.finish(Outcome::new(super::DONE));
        }
        (Progress::Progressed, None)
    }

    pub(super) fn finish(&mut self, outcome: Outcome) -> (Progress, Option<String>) {
        self.end(&outcome.kind);
        (Progress::Finished { outcome }, None)
    }

    pub(super) fn finish_failed(&mut self, why: String) -> (Progress, Option<String>) {
        self.finish_stopped(why, None)
    }

    /// The attempt is over, failed, or stopped by `bound`.
    /// The attempt stopped because its step ran past a budget of the whole
    /// run ([`crate::sim::BUDGETS`]).
    pub(super) fn stopped_by_run_budget(&mut self) -> (Progress, Option<String>) {
        let budgets = crate::sim::BUDGETS;
        match crate::storage::run_budget_out() {
            Some(crate::storage::RunBudget::Bytes) => self.finish_stopped(
                format!(
                    "built more bytes of values than a run may ({} MiB: the rows its statements return and the text its templates fill in, all together), and was stopped",
                    budgets.run_bytes >> 20
                ),
                Some(Bound::RunBytes),
            ),
            _ => self.finish_stopped(
                format!(
                    "ran a statement past the SQLite instructions a whole run may run ({} million, every statement together), which was stopped",
                    budgets.run_instructions / 1_000_000
                ),
                Some(Bound::RunInstructions),
            ),
        }
    }

    pub(super) fn finish_stopped(
        &mut self,
        why: String,
        bound: Option<Bound>,
    ) -> (Progress, Option<String>) {
        self.end("failed");
        (
            Progress::Failed {
                error: why.clone(),
                bound,
            },
            Some(format!("fails: {why}")),
        )
    }

    /// The attempt is over: its connections close (an open transaction
    /// rolls back, as when a client returns its connection).
    pub(super) fn end(&mut self, kind: &str) {
        self.state.over = Some(super::super::file::leak(kind));
        for conn in &mut self.conns {
            *conn = None;
        }
    }

    /// Whether the attempt may leave this step (no attempt of `wait_while`
    /// still runs); if so, its `log` line is written.
    pub(super) fn leave(
        &mut self,
        ctx: &StepCtx<'_>,
        step: &Step,
        wait_while: &[usize],
        log: &Option<String>,
    ) -> bool {
        if Self::waiting_on(ctx, wait_while) {
            return false;
        }
        if let Some(log) = log {
            let entry = self.words(step, log, &|_| None);
            Rc::make_mut(&mut self.state.log).push(entry);
        }
        true
    }

    pub(super) fn waiting_on(ctx: &StepCtx<'_>, attempts: &[usize]) -> bool {
        // What it decides depends on whether they are over.
        let mask = attempts.iter().fold(0u32, |m, &a| m | 1 << (a % 32));
        crate::storage::footprint::read_status(mask);
        ctx.peers
            .iter()
            .any(|p| attempts.contains(&p.index) && !p.finished)
    }

    /// Applies `action`; returns the progress and words added to the note.
    pub(super) fn apply(
        &mut self,
        step: &Step,
        action: &Act,
        ctx: &StepCtx<'_>,
    ) -> (Progress, Option<String>) {
        match action {
            Act::Wait => (Progress::Blocked, None),
            Act::Next => self.goto(step.next),
            Act::Retry => {
                for conn in self.conns.iter().flatten() {
                    let _ = conn.execute("ROLLBACK", &[]);
                }
                self.state.retries += 1;
                if self.state.retries > MAX_RETRIES {
                    return self.finish_failed(format!("gave up after {MAX_RETRIES} retries"));
                }
                self.clear();
                self.state.pc = self.instance.start;
                (
                    Progress::Progressed,
                    Some(format!(
                        "rolls back and starts again (retry {})",
                        self.state.retries
                    )),
                )
            }
            Act::WaitWhile(attempts) => {
                if Self::waiting_on(ctx, attempts) {
                    (Progress::Blocked, None)
                } else {
                    self.goto(step.next)
                }
            }
            Act::Goto {
                target,
                back_off,
                log,
                wait_while,
            } => {
                if !self.leave(ctx, step, wait_while, log) {
                    return (Progress::Blocked, None);
                }
                let moved = self.goto(*target);
                if *back_off && matches!(moved.0, Progress::Progressed) {
                    // What it decides depends on every peer's locks.
                    crate::storage::footprint::read_all();
                    let writing = ctx.peers.iter().any(Peer::writing);
                    if writing {
                        return (Progress::Blocked, None);
                    }
                }
                moved
            }
            Act::Finish {
                kind,
                result,
                log,
                wait_while,
            } => {
                if !self.leave(ctx, step, wait_while, log) {
                    return (Progress::Blocked, None);
                }
                let result = self.result_of(step, result);
                let kind = self.words(step, kind, &|_| None);
                // A lost reply's step ends the attempt in the program's own
                // words, and the engine knows how it ended.
                let ending = match step.kind {
                    StepKind::LoseReply => Ending::ReplyLost,
                    _ => Ending::Returned,
                };
                self.finish(Outcome {
                    kind,
                    result,
                    ending,
                })
            }
            Act::Fail(why) => {
                let why = self.words(step, why, &|_| None);
                self.finish_failed(why)
            }
        }
    }

    pub(super) fn connection(&mut self, ctx: &StepCtx<'_>, db: usize) -> Result<&dyn Session> {
        self.open(ctx.engine, db)?;
        Ok(self.conns[db].as_deref().expect("opened"))
    }

    /// Opens its connection to database `db`, unless it is open.
    pub(super) fn open(&mut self, engine: &dyn Engine, db: usize) -> Result<()> {
        if self.conns[db].is_none() {
            self.conns[db] = Some(engine.open(&Opening {
                db: self.instance.files[db],
                label: &self.instance.label,
                local: self.instance.local,
                synchronous: Some(self.instance.options.synchronous),
                max_value_bytes: MAX_VALUE_BYTES,
                pragmas: &self.instance.pragmas[db],
            })?);
        }
        Ok(())
    }

    /// Whether what `conn` holds of its own can be copied and put back:
    /// nothing a step left in it (TEMP tables, attached databases, a
    /// PRAGMA's setting), and, for a program that reads `changes()`, no row
    /// changed yet (those counters cannot be set back).
    pub(super) fn restorable(&self, conn: &dyn Session) -> bool {
        #[cfg(test)]
        if crate::reintroduced::on(crate::reintroduced::Bug::InheritedConnection) {
            return true;
        }
        let counted = self.instance.local.reads_changes && conn.counters().total > 0;
        !(conn.holds_local_state() || counted)
    }

    /// The words `{because}` stands for.
    pub(super) fn because(step: &Step, peers: &[Peer]) -> String {
        for (phases, say) in &step.because {
            if phases.is_empty() {
                return say.clone();
            }
            let who: Vec<&str> = peers
                .iter()
                .filter(|p| phases.iter().any(|ph| ph == p.phase))
                .map(|p| &*p.label)
                .collect();
            if !who.is_empty() {
                return say.replace("{peers}", &who.join(" and "));
            }
        }
        String::new()
    }
}

impl Attempt for ProgramAttempt {
    fn label(&self) -> &str {
        &self.instance.label
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        self.next_step(ctx)
    }

    fn phase(&self) -> &'static str {
        match self.state.over {
            Some(kind) => kind,
            None => self
                .steps()
                .get(self.state.pc)
                .map_or("running", |s| s.phase),
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        let mut h = crate::sim::state_hasher();
        self.state.pc.hash(&mut h);
        self.state.over.hash(&mut h);
        self.state.retries.hash(&mut h);
        if self.state.over.is_none() {
            let live = self
                .steps()
                .get(self.state.pc)
                .map_or(&[][..], |s| s.live.as_slice());
            // Both are sorted by name: one merge of the two.
            let mut live = live.iter().peekable();
            for (name, value) in self.state.captures.iter() {
                while live.next_if(|l| *l < name).is_some() {}
                if live.next_if(|l| *l == name).is_some() {
                    name.hash(&mut h);
                    hash_value(value, &mut h);
                }
            }
        }
        self.state.log.hash(&mut h);
        // What its connections hold that a later statement can see: an open
        // transaction, even one holding no lock (a deferred BEGIN, a read
        // refused), as the statements it ran; the counters it reads.
        let local = self.instance.local;
        #[cfg(test)]
        let conns = if crate::reintroduced::on(crate::reintroduced::Bug::KeyWithoutConnection) {
            &[][..]
        } else {
            &self.conns[..]
        };
        #[cfg(not(test))]
        let conns = &self.conns[..];
        for (db, conn) in conns.iter().enumerate() {
            let Some(conn) = conn else { continue };
            if conn.in_transaction() {
                db.hash(&mut h);
                for (index, values) in self.state.open_work[db].iter() {
                    index.hash(&mut h);
                    values.len().hash(&mut h);
                    for value in values {
                        hash_value(value, &mut h);
                    }
                }
            }
            if local.schema_matters() {
                // Whether its next statement reads the schema first (taking
                // SHARED, meeting BUSY) or prepares from the one it has (a
                // table that does not exist: an error, with no lock): see
                // `LocalUse::schema_state`.
                conn.schema_loaded().hash(&mut h);
            }
            if local.leaves {
                // Its TEMP objects, read back (what cannot be: `opaque`).
                conn.local_image().hash(&mut h);
            }
            if local.reads_rowid || local.reads_changes {
                let counters = conn.counters();
                if local.reads_rowid {
                    counters.rowid.hash(&mut h);
                }
                if local.reads_changes {
                    (counters.changes, counters.total).hash(&mut h);
                }
            }
        }
        if local.reads_rowid {
            // `{rowid}`: the engine's copy, kept when a statement fails.
            self.state.rowid.hash(&mut h);
        }
        if let Some(crash) = &self.instance.crash {
            crash
                .after
                .saturating_sub(self.state.done_steps)
                .hash(&mut h);
        }
        state.write_u64(h.finish());
    }

    fn class(&self) -> u64 {
        self.instance.class
    }

    fn opaque(&self) -> bool {
        #[cfg(test)]
        if crate::reintroduced::on(crate::reintroduced::Bug::KeyWithoutConnection) {
            return false;
        }
        self.conns.iter().flatten().any(|c| !c.local_state_known())
    }

    fn connections(&self) -> &[Option<Box<dyn Session>>] {
        &self.conns
    }

    fn crash(&mut self) {
        for conn in self.conns.iter_mut().flatten() {
            let _ = conn.kill();
        }
        for conn in &mut self.conns {
            *conn = None;
        }
        self.state.over = Some(crate::sim::CRASHED);
    }

    fn waits_for(&self) -> Option<usize> {
        self.instance.after
    }

    fn ready(&self, now: i64, _statuses: &[Status]) -> bool {
        now >= self.instance.not_before
    }

    fn save(&self) -> Option<Rc<dyn std::any::Any>> {
        // Each open transaction is kept as the work it did, with the lock
        // it holds: none, SHARED or RESERVED (a commit under way, or a
        // transaction holding more, may have written the database file).
        // Nor a connection holding what cannot be put back: state of its
        // own (TEMP tables), or counters it reads that a new connection would
        // not have (the rowid alone is set back).
        if !self
            .conns
            .iter()
            .flatten()
            .all(|c| self.restorable(c.as_ref()))
        {
            return None;
        }
        let mut state = self.state.clone();
        for (db, conn) in self.conns.iter().enumerate() {
            match conn {
                Some(conn) if conn.in_transaction() => {
                    let level = conn.lock_level();
                    if level > LockLevel::Reserved {
                        return None;
                    }
                    state.levels[db] = level;
                }
                _ => {
                    state.forget_work(db);
                    state.levels[db] = LockLevel::None;
                }
            }
        }
        Some(Rc::new(Saved {
            instance: Rc::clone(&self.instance),
            open: self.conns.iter().map(Option::is_some).collect(),
            // Read only for the programs that can see them.
            rowids: self
                .conns
                .iter()
                .map(|c| match c {
                    Some(c) if self.instance.local.reads_rowid => c.counters().rowid,
                    _ => 0,
                })
                .collect(),
            schemas: self
                .conns
                .iter()
                .map(|c| {
                    self.instance.local.schema_matters()
                        && c.as_ref().is_some_and(|c| c.schema_loaded())
                })
                .collect(),
            state,
        }))
    }

    fn roll_back(&mut self, saved: &dyn std::any::Any) {
        let saved = saved
            .downcast_ref::<Saved>()
            .filter(|s| Rc::ptr_eq(&s.instance, &self.instance));
        for (db, slot) in self.conns.iter_mut().enumerate() {
            // The same transaction as the checkpoint's, nothing done since
            // (its work is the very list the checkpoint holds) and the same
            // lock, at least SHARED: kept as it is, instead of rolled back
            // and redone. (Without a lock, a statement refused since may
            // have filled its page cache in the branch left, where others
            // committed: under the same change counter in the next branch,
            // it would read those pages.)
            let same = saved.is_some_and(|saved| {
                !saved.state.open_work[db].is_empty()
                    && Rc::ptr_eq(&saved.state.open_work[db], &self.state.open_work[db])
                    && saved.state.levels[db] > LockLevel::None
                    && slot.as_ref().is_some_and(|c| {
                        c.in_transaction() && c.lock_level() == saved.state.levels[db]
                    })
            });
            self.kept[db] = same;
            if !same && slot.as_ref().is_some_and(|c| c.roll_back().is_err()) {
                // It could not roll back: closing it does.
                *slot = None;
            }
        }
    }

    fn restore(&mut self, saved: &dyn std::any::Any, engine: &dyn Engine) -> Result<bool> {
        let Some(saved) = saved.downcast_ref::<Saved>() else {
            return Ok(false);
        };
        if !Rc::ptr_eq(&saved.instance, &self.instance) {
            return Ok(false);
        }
        self.state.clone_from(&saved.state);
        for (db, &open) in saved.open.iter().enumerate() {
            // One that read the schema since, where the checkpoint's had
            // not: SQLite cannot be made to forget it as if new (the text
            // encoding stays fixed, so a query with no FROM no longer reads
            // the schema: a fuzzer's find), so a new connection instead.
            let read_since = self.instance.local.schema_matters()
                && !saved.schemas[db]
                && self.conns[db]
                    .as_ref()
                    .is_some_and(|c| !self.kept[db] && !c.in_transaction() && c.schema_loaded());
            if read_since && open {
                self.conns[db] = None;
            }
            match &self.conns[db] {
                Some(_) if self.kept[db] => {}
                // What it did since cannot be undone: a new one (it had
                // none of it at the checkpoint, or there would be none).
                Some(conn) if open && !self.restorable(conn.as_ref()) => {
                    self.conns[db] = None;
                    self.open(engine, db)?;
                }
                Some(conn) if open => conn.forget_stale_cache()?,
                // The pool empties the cache of what it hands out.
                None if open => self.open(engine, db)?,
                _ => self.conns[db] = None,
            }
            #[cfg(test)]
            if crate::reintroduced::on(crate::reintroduced::Bug::InheritedConnection) {
                continue;
            }
            if let Some(conn) = self.conns[db]
                .as_ref()
                .filter(|_| self.instance.local.reads_rowid)
            {
                conn.set_last_insert_rowid(saved.rowids[db]);
            }
            if let Some(conn) = self.conns[db]
                .as_ref()
                .filter(|_| self.instance.local.schema_matters())
            {
                // Whether it has read the schema, as it had: one read since
                // is a new connection (above), one it had is read again
                // (outside a transaction; otherwise, or if reading it could
                // change the files, the run starts anew).
                let same = match (conn.schema_loaded(), saved.schemas[db]) {
                    (false, true) => conn.load_schema()?,
                    (loaded, had) => loaded == had,
                };
                if !same {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    fn resume(&mut self, writers: bool) -> Result<()> {
        let InstanceKind::Program(steps) = &self.instance.kind else {
            return Ok(());
        };
        for (db, work) in self.state.open_work.iter().enumerate() {
            let writer = self.state.levels[db] == LockLevel::Reserved;
            if work.is_empty() || writer != writers || self.kept[db] {
                continue;
            }
            let conn = self.conns[db]
                .as_ref()
                .ok_or_else(|| Error::Defect("a transaction to redo has no connection".into()))?;
            for (index, values) in work.iter() {
                let Some(StepKind::Sql(sql)) = steps.get(*index).map(|s| &s.kind) else {
                    return Err(Error::Defect(
                        "a transaction to redo names no statement".into(),
                    ));
                };
                // Its errors (BUSY on a commit, a constraint) are the ones
                // it met the first time; the run's key tells if not.
                let _ = with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                    conn.execute_discarding(sql, values)
                });
            }
        }
        Ok(())
    }
}

/// A program attempt's state between steps, without its connections (see
/// [`Attempt::save`]).
pub(super) struct Saved {
    pub(super) instance: Rc<Instance>,
    pub(super) open: Vec<bool>,
    /// Each connection's `last_insert_rowid()` (0 where none is open).
    pub(super) rowids: Vec<i64>,
    /// Whether each connection had loaded its schema.
    pub(super) schemas: Vec<bool>,
    pub(super) state: AttemptState,
}
