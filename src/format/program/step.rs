//! One step of an attempt's program, in stages: the statement runs (a step
//! of SQL) or the action is taken, what the step keeps is kept, its handler
//! is chosen by what it answered, the handler or the step's kind decides
//! where the attempt goes, and the step is told in a sentence.

use std::rc::Rc;

use super::super::file::NoteSpec;
use super::super::limits::MAX_STATEMENT_INSTRUCTIONS;
use super::attempt::{Answer, ProgramAttempt};
use super::ir::{explain, Act, Instance, InstanceKind, SetValue, Step, StepKind};
use crate::params::quote;
use crate::sim::{Attempt, Bound, Ending, Outcome, Progress, SqlResult, StepCtx, StepReport};
use crate::storage::{is_busy_snapshot, is_interrupt, with_budget};
use crate::storage::{Journal, Rows, SqlValue};
use crate::Error;

/// What a step's statement did (a step without SQL answers `ok`).
struct Ran<'s> {
    answer: Answer,
    rows: Option<Rows>,
    /// The values it was bound to, for the trace.
    bound: Vec<SqlValue>,
    error: Option<Error>,
    sql: Option<&'s String>,
    /// The death armed inside the statement, if it came
    /// (`crash-at-sync`, `power-loss-at-sync`).
    died: Option<crate::storage::Death>,
    /// Or, when it did not: how many syncs the statement made (fewer than
    /// the death was armed at).
    missed: Option<u32>,
}

impl Ran<'_> {
    fn nothing() -> Self {
        Ran {
            answer: Answer::Ok,
            rows: None,
            bound: Vec::new(),
            error: None,
            sql: None,
            died: None,
            missed: None,
        }
    }

    /// The first value of the first row, as a handler's case reads it.
    fn case(&self) -> Option<String> {
        self.rows
            .as_ref()
            .and_then(|r| r.rows.first())
            .and_then(|r| r.first())
            .and_then(|v| match v {
                SqlValue::Text(t) => Some(t.clone()),
                SqlValue::Integer(i) => Some(i.to_string()),
                _ => None,
            })
    }

    /// Whether SQLite refused it a stale WAL snapshot.
    fn stale_snapshot(&self) -> bool {
        self.error.as_ref().is_some_and(is_busy_snapshot)
    }
}

/// Where the attempt goes after a step, and what its handler adds to the
/// step's sentence.
type Decided = (Progress, Option<String>);

impl ProgramAttempt {
    /// Runs the attempt's next step ([`Attempt::step`]).
    pub(super) fn next_step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        // The instance is shared (`Rc`): holding it apart from `self` lets
        // the step be read while the attempt changes.
        let instance = Rc::clone(&self.instance);
        let InstanceKind::Program(steps) = &instance.kind else {
            unreachable!("program attempts are built from programs")
        };
        self.state.taken += 1;
        if self.state.over.is_some() || self.state.pc >= steps.len() {
            return already_over(&instance.label);
        }
        let step = &steps[self.state.pc];
        if self.state.taken > instance.max_steps {
            let max = instance.max_steps;
            let (progress, _) = self.finish_stopped(
                format!("took more than {max} steps: its program may loop for ever"),
                Some(Bound::Steps),
            );
            let note = format!("{} stops: more than {max} steps", instance.label);
            return report(
                &instance,
                step,
                None,
                vec![],
                SqlResult::None,
                progress,
                note,
            );
        }
        if let Some(crash) = &instance.crash {
            if crash.after == self.state.done_steps {
                Attempt::crash(self);
                let outcome = Outcome::ended(Ending::Crashed, crash.result.clone());
                return StepReport {
                    database: None,
                    name: crash.name.clone(),
                    sql: None,
                    params: vec![],
                    result: SqlResult::None,
                    progress: Progress::Finished { outcome },
                    note: self.note_words(step, &crash.note, &|_| None),
                };
            }
        }
        let mut ran = match &step.kind {
            StepKind::Sql(sql) => self.run_sql(step, sql, ctx),
            _ => Ran::nothing(),
        };
        if let Some(death) = ran.died.take() {
            return self.died_inside(&instance, step, &ran, &death, ctx);
        }
        self.keep(step, &ran, ctx);
        let case = ran.case();
        let chosen = handler(step, ran.answer, case.as_deref());
        // What the step sets, before the handler reads it.
        if !matches!(ran.answer, Answer::Busy) || chosen.is_some() {
            self.set(step);
        }
        let (progress, mut extra) = self.decide(step, &ran, chosen, ctx);
        if let (Some(made), Some((at, _))) = (ran.missed, &step.dies_at_sync) {
            // Armed past the statement's last sync: said, not silent.
            let said = format!(
                "made {made} sync{}, fewer than the {at} its death was armed at: nothing died",
                if made == 1 { "" } else { "s" }
            );
            extra = Some(match extra {
                Some(words) => format!("{words}; {said}"),
                None => said,
            });
        }
        if progress != Progress::Blocked {
            self.state.done_steps += 1;
        }
        if !ctx.narrate {
            // Nobody reads this step's words, SQL or rows: only move on.
            return report(
                &instance,
                step,
                None,
                vec![],
                SqlResult::None,
                progress,
                String::new(),
            );
        }
        // What the trace shows of the statement's result (the sentence reads it too).
        let result = match (ran.rows.take(), &ran.error) {
            (Some(rows), _) => SqlResult::Rows {
                columns: rows.columns,
                rows: rows.rows,
                changes: rows.changes,
            },
            (None, Some(e)) => SqlResult::from_result(&Err(Error::duplicate(e))),
            (None, None) => SqlResult::None,
        };
        let note = self.tell(step, &ran, &result, chosen, &progress, extra, case, ctx);
        let sql = ran.sql.cloned();
        report(&instance, step, sql, ran.bound, result, progress, note)
    }

    /// Runs a step's statement on its database's connection (opened if it
    /// is not), within the statement's instruction budget, and keeps the
    /// work of the transaction it has open, to redo it after a rewind.
    fn run_sql<'s>(&mut self, step: &Step, sql: &'s String, ctx: &StepCtx<'_>) -> Ran<'s> {
        let now = ctx.now();
        let mut died = None;
        let mut missed = None;
        let (mut bound, outcome) = match self.connection(ctx, step.db) {
            Ok(_) => {
                let conn = self.conns[step.db].as_ref().expect("opened");
                if !conn.in_transaction() {
                    self.state.forget_work(step.db);
                }
                // A death inside the statement, at its Nth sync: armed for
                // this statement only.
                let armed = match &step.dies_at_sync {
                    Some((at, death)) => ctx.faults().map(|faults| {
                        faults.arm(conn.id(), *at, death.clone());
                        Some(faults)
                    }),
                    None => Ok(None),
                };
                match armed {
                    Ok(armed) => {
                        let outcome = with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                            conn.execute_named_bound(sql, &|name| self.bind(step, name, now))
                        });
                        if let Some(faults) = armed {
                            match faults.disarm() {
                                Ok(death) => died = Some(death),
                                Err(made) => missed = Some(made),
                            }
                        }
                        outcome
                    }
                    // Not run: the engine cannot do what the step asks.
                    Err(e) => (Vec::new(), Err(e)),
                }
            }
            Err(e) => (Vec::new(), Err(e)),
        };
        // The work of the transaction it has open, to redo it. A statement
        // refused a lock (BUSY) left nothing behind, and redone it might be
        // granted what it was refused: left out.
        let in_transaction = self.conns[step.db]
            .as_ref()
            .is_some_and(|c| c.in_transaction());
        let refused = outcome.as_ref().is_err_and(Error::is_busy);
        if !in_transaction {
            self.state.forget_work(step.db);
        } else if !refused {
            // Kept in every run: the state's key holds it. A run that does
            // not narrate leaves the values bound out of its report.
            let values = if ctx.narrate {
                bound.clone()
            } else {
                std::mem::take(&mut bound)
            };
            Rc::make_mut(&mut self.state.open_work[step.db]).push((self.state.pc, values));
        }
        let (answer, rows, error) = match outcome {
            Ok(rows) => {
                let answer = if !rows.rows.is_empty() {
                    Answer::Rows
                } else if !rows.columns.is_empty() {
                    Answer::None
                } else {
                    Answer::Ok
                };
                (answer, Some(rows), None)
            }
            Err(e) => {
                let answer = if e.is_busy() {
                    Answer::Busy
                } else if e.is_constraint() {
                    Answer::Constraint
                } else {
                    Answer::Error
                };
                (answer, None, Some(e))
            }
        };
        Ran {
            answer,
            rows,
            bound,
            error,
            sql: Some(sql),
            died,
            missed,
        }
    }

    /// What every step keeps of its statement: the rows it changed, the
    /// rowid it inserted, the time, its error, and its captures.
    fn keep(&mut self, step: &Step, ran: &Ran<'_>, ctx: &StepCtx<'_>) {
        self.state.changes = ran.rows.as_ref().map_or(0, |r| r.changes);
        if let Some(rows) = &ran.rows {
            self.state.rowid = rows.last_insert_rowid;
        }
        self.state.now = ctx.now();
        self.state.error = ran.error.as_ref().map(explain).unwrap_or_default();
        let Some(rows) = &ran.rows else { return };
        let first = rows.rows.first();
        for (i, name) in step.capture.iter().enumerate() {
            let value = first
                .and_then(|r| r.get(i))
                .cloned()
                .unwrap_or(SqlValue::Null);
            let captures = Rc::make_mut(&mut self.state.captures);
            match captures.get_mut(name) {
                Some(slot) => *slot = value,
                None => {
                    captures.insert(name.clone(), value);
                }
            }
        }
    }

    /// The values the step sets (`set`).
    fn set(&mut self, step: &Step) {
        for (name, value) in &step.set {
            let value = match value {
                SetValue::Value(v) => v.clone(),
                SetValue::Template(t) => SqlValue::Text(self.words(step, t, &|_| None)),
            };
            Rc::make_mut(&mut self.state.captures).insert(name.clone(), value);
        }
    }

    /// Where the attempt goes: a budget that stopped the step first, then
    /// the handler chosen, then what a step of its kind does unhandled.
    fn decide(
        &mut self,
        step: &Step,
        ran: &Ran<'_>,
        chosen: Option<&Act>,
        ctx: &StepCtx<'_>,
    ) -> Decided {
        let decided = if crate::storage::run_budget_out().is_some() {
            // A statement stopped by its instruction budget did not answer:
            // no handler of the design's applies, and the run does not
            // complete (a recursive query that never ends is a verdict). So
            // is a step that ran past what the whole run may spend.
            self.stopped_by_run_budget()
        } else if ran.error.as_ref().is_some_and(is_interrupt) {
            self.finish_stopped(
                format!(
                    "ran a statement of more than {MAX_STATEMENT_INSTRUCTIONS} SQLite instructions, which was stopped: it may loop for ever"
                ),
                Some(Bound::Instructions),
            )
        } else if let Some(action) = chosen {
            self.apply(step, action, ctx)
        } else {
            match &step.kind {
                StepKind::Sql(_) => self.unhandled(step, ran),
                StepKind::Crash => self.crash_here(),
                StepKind::LoseReply => self.finish(Outcome::ended(Ending::ReplyLost, None)),
                StepKind::Work => self.goto(step.next),
                StepKind::Fail => self.finish_failed(format!("it fails at {}", quote(&step.name))),
                StepKind::PowerLoss(files, tearing) => {
                    let mut flip = crate::storage::seeded_tearing(u64::from(*tearing));
                    let torn: Option<&mut dyn FnMut() -> bool> =
                        (*tearing > 0).then_some(&mut flip);
                    match ctx.faults().and_then(|f| f.power_loss(files, torn)) {
                        // Whoever had a connection there (this attempt too)
                        // is dead: the run sees to it after the step.
                        Ok(_) => self.goto(step.next),
                        Err(e) => self.finish_failed(e.to_string()),
                    }
                }
                StepKind::DiskFull(files, full) => match ctx.faults() {
                    Ok(faults) => {
                        faults.set_disk_full(files, *full);
                        self.goto(step.next)
                    }
                    Err(e) => self.finish_failed(e.to_string()),
                },
                StepKind::IoError(files, call) => match ctx.faults() {
                    Ok(faults) => {
                        faults.fail_next(files, *call);
                        self.goto(step.next)
                    }
                    Err(e) => self.finish_failed(e.to_string()),
                },
            }
        };
        // A handler that built more than the run may hold is stopped too.
        match decided.0 {
            Progress::Failed { bound: Some(_), .. } => decided,
            _ if crate::storage::run_budget_out().is_some() => self.stopped_by_run_budget(),
            _ => decided,
        }
    }

    /// A statement's answer that no handler of the step's takes: BUSY
    /// waits, an error fails the attempt, anything else goes on.
    fn unhandled(&mut self, step: &Step, ran: &Ran<'_>) -> Decided {
        match ran.answer {
            // A stale snapshot in WAL mode cannot be waited out: SQLite's
            // busy handler is not even called; only a new transaction helps.
            Answer::Busy if ran.stale_snapshot() => self.finish_failed(error_text(ran)),
            // BUSY waits by default: the attempt stays at this step.
            Answer::Busy => (Progress::Blocked, None),
            Answer::Constraint | Answer::Error => self.finish_failed(error_text(ran)),
            Answer::Ok | Answer::Rows | Answer::None => self.goto(step.next),
        }
    }

    /// The statement's death came inside it, at its armed sync: the process
    /// (or its machine's power) is gone; the attempt is over, crashed.
    fn died_inside(
        &mut self,
        instance: &Instance,
        step: &Step,
        ran: &Ran<'_>,
        death: &crate::storage::Death,
        ctx: &StepCtx<'_>,
    ) -> StepReport {
        Attempt::crash(self);
        let at = step.dies_at_sync.as_ref().map_or(0, |(at, _)| *at);
        let what = match death {
            crate::storage::Death::Process => format!(
                "{}'s process died at sync {at} of {}: its locks vanish, and what it had written stays for the next connection to recover",
                instance.label,
                quote(&step.name)
            ),
            crate::storage::Death::Power(files) => format!(
                "the power went out at sync {at} of {}'s {} on the machine holding {}: what was not synced is gone",
                instance.label,
                quote(&step.name),
                machine(files)
            ),
        };
        let outcome = Outcome::ended(Ending::Crashed, None);
        report(
            instance,
            step,
            ran.sql.filter(|_| ctx.narrate).cloned(),
            Vec::new(),
            SqlResult::None,
            Progress::Finished { outcome },
            if ctx.narrate { what } else { String::new() },
        )
    }

    /// A `crash` step: the process dies here.
    fn crash_here(&mut self) -> Decided {
        Attempt::crash(self);
        let outcome = Outcome::ended(Ending::Crashed, None);
        (Progress::Finished { outcome }, None)
    }

    /// The step in a sentence: its note, or what happened when it has none
    /// (or an error nobody handles), and what its handler adds.
    #[allow(clippy::too_many_arguments)]
    fn tell(
        &self,
        step: &Step,
        ran: &Ran<'_>,
        result: &SqlResult,
        chosen: Option<&Act>,
        progress: &Progress,
        extra: Option<String>,
        case: Option<String>,
        ctx: &StepCtx<'_>,
    ) -> String {
        let label = self.instance.label.as_str();
        let peers = ctx.peers;
        let row_count = match result {
            SqlResult::Rows { rows, .. } => rows.len(),
            _ => 0,
        };
        let stale_snapshot = ran.stale_snapshot();
        let extras = |name: &str| match name {
            "rows" => Some(row_count.to_string()),
            "because" => Some(Self::because(step, peers)),
            // A stale snapshot is refused whoever holds what: say so.
            "locks" if stale_snapshot => {
                Some("its snapshot is older than the last commit: SQLITE_BUSY_SNAPSHOT".to_string())
            }
            "locks" => Some(crate::sim::locks_held(peers)),
            // The lock a writer holds, by journal mode.
            "write lock" => Some(
                match self.instance.options.journal {
                    Journal::Rollback => "RESERVED",
                    Journal::Wal => "the WAL write lock",
                }
                .to_string(),
            ),
            _ => None,
        };
        let answer = ran.answer;
        let waiting = *progress == Progress::Blocked && answer != Answer::Busy;
        let blocked_by_busy = *progress == Progress::Blocked && answer == Answer::Busy;
        let template = match &step.note {
            Some(NoteSpec::One(t)) => Some(t.as_str()),
            Some(NoteSpec::By(by)) => waiting
                .then(|| by.get("wait"))
                .flatten()
                .or_else(|| case.as_ref().and_then(|c| by.get(c)))
                .or_else(|| by.get(answer.word()))
                .or_else(|| by.get("ok"))
                .map(String::as_str),
            None => None,
        };
        // A single sentence tells what the step does when it works; an error
        // nobody handles is told as it is.
        let stale = chosen.is_none() && stale_snapshot;
        let failed = matches!(answer, Answer::Constraint | Answer::Error);
        // One sentence written for a step that works does not tell a BUSY
        // a handler took, nor an error nobody handles: told as they are.
        let one = matches!(step.note, Some(NoteSpec::One(_)));
        let unhandled = one
            && ((!step.own_errors && (failed || stale))
                || (answer == Answer::Busy && chosen.is_some() && !blocked_by_busy));
        let template = template.filter(|_| !unhandled);
        // What the handler did with a BUSY or an error, when the sentence
        // is not the design's own: the step's sentence tells both.
        let extra = extra.or_else(|| {
            (template.is_none() && (failed || answer == Answer::Busy))
                .then(|| chosen.and_then(|act| self.handled_words(act, progress)))
                .flatten()
        });
        let mut note = match template {
            Some(template) if !blocked_by_busy => self.note_words(step, template, &extras),
            _ if blocked_by_busy => format!(
                "{label} got SQLITE_BUSY at \"{}\" ({}) and waits for a lock to be released",
                step.name,
                crate::sim::locks_held(peers)
            ),
            _ if answer == Answer::Busy => format!(
                "{label} ran \"{}\": SQLITE_BUSY ({})",
                step.name,
                crate::sim::locks_held(peers)
            ),
            _ => format!(
                "{label} ran \"{}\": {}",
                step.name,
                what_happened(step, result)
            ),
        };
        if stale {
            note = format!(
                "{label} ran \"{}\" and fails: {}",
                step.name,
                crate::storage::BUSY_SNAPSHOT
            );
        } else if let (Some(extra), None) = (extra, template) {
            note = format!("{note}; {label} {extra}");
        }
        note
    }
}

impl ProgramAttempt {
    /// What a handler did, in a few words after the attempt's label ("goes
    /// to \"begin\"", "finishes: conflict"), or None where the step's
    /// progress says it already (a wait, a retry).
    fn handled_words(&self, act: &Act, progress: &Progress) -> Option<String> {
        match (act, progress) {
            (_, Progress::Blocked) => None,
            (_, Progress::Finished { outcome }) => Some(format!("finishes: {}", outcome.kind)),
            (_, Progress::Failed { error, .. }) => Some(format!("fails: {error}")),
            (Act::Goto { target, .. }, _) => Some(match self.steps().get(*target) {
                Some(to) => format!("goes to {}", quote(&to.name)),
                None => "goes on".into(),
            }),
            (Act::Next | Act::WaitWhile(_), _) => Some(match self.steps().get(self.state.pc) {
                Some(to) => format!("goes on to {}", quote(&to.name)),
                None => "goes on".into(),
            }),
            _ => None,
        }
    }
}

/// The handler of a step for what it answered: a case of the first value,
/// then the handler of the answer, then `ok`'s where it stands for it.
fn handler<'s>(step: &'s Step, answer: Answer, case: Option<&str>) -> Option<&'s Act> {
    let on = &step.on;
    match answer {
        Answer::Rows => case
            .and_then(|c| on.cases.iter().find(|(v, _)| v == c).map(|(_, a)| a))
            .or(on.rows.as_ref())
            .or(on.ok.as_ref()),
        Answer::None => on.none.as_ref().or(on.ok.as_ref()),
        Answer::Ok => on.ok.as_ref(),
        Answer::Busy => on.busy.as_ref(),
        Answer::Constraint => on.constraint.as_ref().or(on.error.as_ref()),
        Answer::Error => on.error.as_ref(),
    }
}

/// A statement's error, explained.
fn error_text(ran: &Ran<'_>) -> String {
    ran.error.as_ref().map(explain).unwrap_or_default()
}

/// The machine holding `files`, in words.
fn machine(files: &[String]) -> String {
    if files.is_empty() {
        "every database".into()
    } else {
        files.join(", ")
    }
}

/// What a step did, in a few words, for a step without a sentence of its own.
fn what_happened(step: &Step, result: &SqlResult) -> String {
    match result {
        SqlResult::Rows { rows, .. } if rows.len() == 1 => "1 row".to_string(),
        SqlResult::Rows { rows, .. } if !rows.is_empty() => format!("{} rows", rows.len()),
        SqlResult::Rows { changes, .. } if *changes > 0 => format!("{changes} changed"),
        // A query that answered nothing (its `on.none` ran).
        SqlResult::Rows { columns, .. } if !columns.is_empty() => "no row".into(),
        SqlResult::Error { message, .. } => message.clone(),
        SqlResult::None => match &step.kind {
            StepKind::Crash => "its process dies: its locks vanish, its open transaction is left for recovery".into(),
            StepKind::LoseReply => "its reply is lost: whatever it committed stays, but its client never hears the answer".into(),
            StepKind::PowerLoss(files, _) if files.is_empty() => "the power goes out: every file is left as it was last synced, and every connection dies".into(),
            StepKind::PowerLoss(files, _) => format!(
                "the power goes out on the machine holding {}: its files are left as they were last synced, and its connections die",
                files.join(", ")
            ),
            StepKind::DiskFull(files, true) => format!("the disk of {} is full: a write that would grow a file fails with SQLITE_FULL", machine(files)),
            StepKind::DiskFull(files, false) => format!("the disk of {} has room again", machine(files)),
            StepKind::IoError(files, call) => format!(
                "the next {} on a file of {} fails with an I/O error",
                match call {
                    crate::storage::IoCall::Write => "write",
                    crate::storage::IoCall::Sync => "sync",
                },
                machine(files)
            ),
            _ => "done".into(),
        },
        _ => "ok".into(),
    }
}

/// A step's report.
fn report(
    instance: &Instance,
    step: &Step,
    sql: Option<String>,
    params: Vec<SqlValue>,
    result: SqlResult,
    progress: Progress,
    note: String,
) -> StepReport {
    StepReport {
        database: sql.as_ref().map(|_| instance.files[step.db].to_string()),
        name: step.name.clone(),
        sql,
        params,
        result,
        progress,
        note,
    }
}

/// The report of a step asked of an attempt that is over.
fn already_over(label: &str) -> StepReport {
    StepReport {
        database: None,
        name: "over".into(),
        sql: None,
        params: vec![],
        result: SqlResult::None,
        progress: Progress::Failed {
            error: "the attempt is already over".into(),
            bound: None,
        },
        note: format!("{label} is already over"),
    }
}
