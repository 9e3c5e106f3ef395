//! Idempotency receipts: a key scoped to (tenant, operation, key) turns any
//! number of retries and racing requests into one logical action.
//!
//! [`Execute`] is one request as a step machine on its own connection, in the
//! correct design (check and write in one `BEGIN IMMEDIATE` transaction) or in
//! one of the designs that fail.

use std::hash::{Hash, Hasher};

use crate::sim::{Attempt, Outcome, Peer, Progress, SqlResult, StepCtx, StepReport};
use crate::storage::{Conn, LockLevel, Rows, SqlValue, Store};
use crate::{Error, Result};

/// The database file of the idempotency scenarios.
pub const DB: &str = "orders.db";

/// The reference schema, each choice with its reason.
pub const SCHEMA: &str = "
-- One row per applied business action. The id is what the client gets back,
-- so a replay must return the same id, never a new one.
CREATE TABLE effects (
    id INTEGER PRIMARY KEY,             -- rowid alias: stable, assigned by SQLite
    tenant TEXT NOT NULL,
    operation TEXT NOT NULL,
    -- The database refuses a non-positive quantity even if code forgets to.
    quantity INTEGER NOT NULL CHECK (quantity > 0)
);
-- One receipt per idempotency key, in its scope.
CREATE TABLE receipts (
    -- The scope: the same key from another tenant, or for another operation,
    -- is another request and must not replay this one's result.
    tenant TEXT NOT NULL,
    operation TEXT NOT NULL,
    request_key TEXT NOT NULL,
    -- Canonical JSON of the parameters: a reused key with other parameters
    -- is a conflict, not a replay.
    fingerprint TEXT NOT NULL,
    -- The response as first sent, replayed byte for byte.
    result TEXT NOT NULL,
    -- Retention: from this (virtual) second on, the key may create anew.
    expires_at INTEGER NOT NULL,
    -- At most one receipt per scope: the database, not the code, is the
    -- last guard against a second effect.
    PRIMARY KEY (tenant, operation, request_key)
);
";

/// How long a receipt is kept, in seconds (the reference's 60).
pub const RETENTION_SECONDS: i64 = 60;

/// The longest idempotency key accepted (Stripe's limit).
pub const MAX_KEY_CHARS: usize = 255;

/// Which design the request follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Design {
    /// Check and write in one `BEGIN IMMEDIATE` transaction.
    Correct,
    /// Check in one transaction, write in another (with `INSERT OR REPLACE`
    /// of the receipt, so the second writer does not even fail).
    CheckThenWrite,
    /// A deferred `BEGIN`: both requests read under SHARED, then each needs
    /// to upgrade, and neither can while the other holds SHARED.
    DeferredBegin,
    /// A deferred `BEGIN` with the retry policy SQLite requires: a BUSY on
    /// the upgrade rolls the whole transaction back and starts again.
    DeferredBeginRetry,
}

impl Design {
    fn begin(self) -> &'static str {
        match self {
            Design::Correct => "BEGIN IMMEDIATE",
            Design::CheckThenWrite | Design::DeferredBegin | Design::DeferredBeginRetry => "BEGIN",
        }
    }
}

/// One request's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// The tenant (already authenticated).
    pub tenant: String,
    /// The operation (already routed).
    pub operation: String,
    /// The idempotency key.
    pub key: String,
    /// The quantity ordered; the fingerprint covers it.
    pub quantity: i64,
    /// The virtual clock, in seconds.
    pub now: i64,
}

impl Request {
    /// Checks a request as a caller supplied it.
    pub fn validate(self) -> Result<Self> {
        for (field, value) in [("tenant", &self.tenant), ("operation", &self.operation)] {
            let chars = value.chars().count();
            if chars == 0 || chars > MAX_KEY_CHARS {
                return Err(Error::invalid(
                    field,
                    format!("use 1 to {MAX_KEY_CHARS} characters (got {chars})"),
                ));
            }
        }
        let chars = self.key.chars().count();
        if chars == 0 || chars > MAX_KEY_CHARS {
            return Err(Error::invalid(
                "key",
                format!("use 1 to {MAX_KEY_CHARS} characters, as Stripe limits keys (got {chars})"),
            ));
        }
        if self.quantity <= 0 {
            return Err(Error::invalid(
                "quantity",
                format!("must be a positive whole number (got {})", self.quantity),
            ));
        }
        if self.now < 0 {
            return Err(Error::invalid("now", "the clock starts at 0"));
        }
        Ok(self)
    }

    /// Canonical JSON of the parameters the key covers.
    pub fn fingerprint(&self) -> String {
        format!("{{\"quantity\":{}}}", self.quantity)
    }

    fn scope(&self) -> [SqlValue; 3] {
        [
            self.tenant.as_str().into(),
            self.operation.as_str().into(),
            self.key.as_str().into(),
        ]
    }
}

/// Where a request is in its program.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Phase {
    Begin,
    ReadReceipt,
    /// The check transaction of [`Design::CheckThenWrite`] ends.
    EndCheck,
    /// Begin the write transaction of [`Design::CheckThenWrite`].
    BeginWrite,
    DeleteExpired,
    InsertEffect,
    InsertReceipt {
        effect_id: i64,
    },
    Commit {
        effect_id: i64,
    },
    /// End a transaction that wrote nothing, then answer.
    Answer(Answer),
    /// Roll back after a BUSY upgrade, then start again.
    RollbackRetry,
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Answer {
    Replay(String),
    Conflict,
}

/// One idempotent request on its own connection.
pub struct Execute {
    label: String,
    request: Request,
    design: Design,
    phase: Phase,
    /// What the request read: `None` before reading.
    found: Option<Option<(String, String, i64)>>,
    conn: Option<Conn>,
    retries: u32,
}

impl Execute {
    /// A request labelled `label` (its connection opens at its first step).
    pub fn new(label: &str, request: Request, design: Design) -> Self {
        Execute {
            label: label.to_string(),
            request,
            design,
            phase: Phase::Begin,
            found: None,
            conn: None,
            retries: 0,
        }
    }

    fn report(
        &self,
        name: &str,
        sql: Option<&str>,
        params: &[SqlValue],
        result: SqlResult,
        progress: Progress,
        note: String,
    ) -> StepReport {
        StepReport {
            name: name.to_string(),
            sql: sql.map(str::to_string),
            params: params.to_vec(),
            result,
            progress,
            note,
        }
    }

    fn sql(&mut self, ctx: &StepCtx<'_>, sql: &str, params: &[SqlValue]) -> Result<Rows> {
        if self.conn.is_none() {
            self.conn = Some(ctx.store.connect(DB, &self.label)?);
        }
        self.conn
            .as_ref()
            .expect("just opened")
            .execute(sql, params)
    }

    /// Ends the request: closes its connection and reports the outcome.
    fn finish(&mut self, outcome: Outcome) -> Progress {
        self.phase = Phase::Done;
        self.conn = None;
        Progress::Finished { outcome }
    }

    fn holders(peers: &[Peer]) -> String {
        let holders: Vec<String> = peers
            .iter()
            .filter(|p| p.lock > LockLevel::None)
            .map(|p| {
                format!(
                    "{} holds {}",
                    p.label,
                    format!("{:?}", p.lock).to_uppercase()
                )
            })
            .collect();
        if holders.is_empty() {
            "another connection holds a lock".to_string()
        } else {
            holders.join(", ")
        }
    }

    /// Why a read found no receipt although others are on their way.
    fn cause_of_absence(peers: &[Peer]) -> String {
        let writing: Vec<&str> = peers
            .iter()
            .filter(|p| matches!(p.phase, "wrote effect" | "wrote receipt" | "committing"))
            .map(|p| p.label.as_str())
            .collect();
        let checked: Vec<&str> = peers
            .iter()
            .filter(|p| matches!(p.phase, "checked, will write" | "writing"))
            .map(|p| p.label.as_str())
            .collect();
        if !writing.is_empty() {
            format!(" because {} had not committed yet", writing.join(" and "))
        } else if !checked.is_empty() {
            format!(
                " because {} had checked but not yet written its receipt",
                checked.join(" and ")
            )
        } else {
            String::new()
        }
    }

    fn busy_or_error(
        &mut self,
        name: &str,
        sql: &str,
        params: &[SqlValue],
        result: &Result<Rows>,
        peers: &[Peer],
    ) -> Option<StepReport> {
        let error = result.as_ref().err()?;
        let sql_result = SqlResult::from_result(result);
        if error.is_busy() {
            let in_upgrade = matches!(self.phase, Phase::InsertEffect | Phase::DeleteExpired)
                && self.design == Design::DeferredBeginRetry;
            if in_upgrade {
                self.phase = Phase::RollbackRetry;
                return Some(self.report(
                    name,
                    Some(sql),
                    params,
                    sql_result,
                    Progress::Progressed,
                    format!(
                        "{} could not upgrade its read to a write ({}): waiting cannot help while it holds SHARED, so it will roll back and retry",
                        self.label,
                        Self::holders(peers)
                    ),
                ));
            }
            let note = format!(
                "{} got SQLITE_BUSY at \"{name}\" ({}) and waits for a lock to be released",
                self.label,
                Self::holders(peers)
            );
            return Some(self.report(name, Some(sql), params, sql_result, Progress::Blocked, note));
        }
        let message = error.to_string();
        let progress = self.finish(Outcome::with_result("error", message.clone()));
        Some(self.report(
            name,
            Some(sql),
            params,
            sql_result,
            progress,
            format!("{} failed at \"{name}\": {message}", self.label),
        ))
    }
}

impl Attempt for Execute {
    fn label(&self) -> &str {
        &self.label
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            Phase::Begin => "ready",
            Phase::ReadReceipt => "in transaction",
            Phase::EndCheck => "checked",
            Phase::BeginWrite => "checked, will write",
            Phase::DeleteExpired | Phase::InsertEffect => match self.design {
                Design::CheckThenWrite => "writing",
                _ => "read, will write",
            },
            Phase::InsertReceipt { .. } => "wrote effect",
            Phase::Commit { .. } => "wrote receipt",
            Phase::Answer(_) => "answering",
            Phase::RollbackRetry => "rolling back",
            Phase::Done => "done",
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        let mut h = std::hash::DefaultHasher::new();
        self.phase.hash(&mut h);
        self.found.hash(&mut h);
        state.write_u64(h.finish());
    }

    fn class(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        self.request.hash(&mut h);
        self.design.hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conn.iter().collect()
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let scope = self.request.scope();
        let key = self.request.key.clone();
        let me = self.label.clone();
        match self.phase.clone() {
            Phase::Begin => {
                let sql = self.design.begin();
                let result = self.sql(ctx, sql, &[]);
                if let Some(report) = self.busy_or_error("begin", sql, &[], &result, ctx.peers) {
                    return report;
                }
                self.phase = Phase::ReadReceipt;
                let note = if sql == "BEGIN IMMEDIATE" {
                    format!("{me} began a write transaction and holds RESERVED: other writers must wait")
                } else {
                    format!("{me} began a deferred transaction: it takes no lock until it reads")
                };
                self.report(
                    "begin",
                    Some(sql),
                    &[],
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    note,
                )
            }
            Phase::ReadReceipt => {
                let sql = "SELECT fingerprint, result, expires_at FROM receipts WHERE tenant = ?1 AND operation = ?2 AND request_key = ?3";
                let result = self.sql(ctx, sql, &scope);
                if let Some(report) =
                    self.busy_or_error("read receipt", sql, &scope, &result, ctx.peers)
                {
                    return report;
                }
                let rows = result.as_ref().map(|r| r.rows.clone()).unwrap_or_default();
                let found = rows.first().and_then(|row| match row.as_slice() {
                    [SqlValue::Text(f), SqlValue::Text(r), SqlValue::Integer(e)] => {
                        Some((f.clone(), r.clone(), *e))
                    }
                    _ => None,
                });
                self.found = Some(found.clone());
                let (next, note) = match &found {
                    Some((fingerprint, stored, expires)) if *expires > self.request.now => {
                        if *fingerprint != self.request.fingerprint() {
                            (
                                Phase::Answer(Answer::Conflict),
                                format!(
                                    "{me} found a receipt for key {key:?} made with other parameters ({fingerprint}): a conflict, not a replay"
                                ),
                            )
                        } else {
                            (
                                Phase::Answer(Answer::Replay(stored.clone())),
                                format!("{me} found the receipt for key {key:?} and will replay its stored result {stored}"),
                            )
                        }
                    }
                    Some((_, _, expires)) => (
                        Phase::DeleteExpired,
                        format!(
                            "{me} found a receipt for key {key:?} that expired at t={expires} (now t={}): the key may create anew",
                            self.request.now
                        ),
                    ),
                    None => (
                        if self.design == Design::CheckThenWrite {
                            Phase::EndCheck
                        } else {
                            Phase::InsertEffect
                        },
                        format!(
                            "{me} found no receipt for key {key:?}{}",
                            Self::cause_of_absence(ctx.peers)
                        ),
                    ),
                };
                self.phase = next;
                self.report(
                    "read receipt",
                    Some(sql),
                    &scope,
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    note,
                )
            }
            Phase::EndCheck => {
                let sql = "COMMIT";
                let result = self.sql(ctx, sql, &[]);
                if let Some(report) = self.busy_or_error("end check", sql, &[], &result, ctx.peers)
                {
                    return report;
                }
                self.phase = Phase::BeginWrite;
                self.report(
                    "end check",
                    Some(sql),
                    &[],
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    format!("{me} ended its check transaction: nothing stops another request from checking the same key now"),
                )
            }
            Phase::BeginWrite => {
                let sql = "BEGIN IMMEDIATE";
                let result = self.sql(ctx, sql, &[]);
                if let Some(report) =
                    self.busy_or_error("begin write", sql, &[], &result, ctx.peers)
                {
                    return report;
                }
                self.phase = Phase::InsertEffect;
                self.report(
                    "begin write",
                    Some(sql),
                    &[],
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    format!("{me} began its write transaction, trusting a check that may be stale"),
                )
            }
            Phase::DeleteExpired => {
                let sql = "DELETE FROM receipts WHERE tenant = ?1 AND operation = ?2 AND request_key = ?3";
                let result = self.sql(ctx, sql, &scope);
                if let Some(report) =
                    self.busy_or_error("delete expired receipt", sql, &scope, &result, ctx.peers)
                {
                    return report;
                }
                self.phase = Phase::InsertEffect;
                self.report(
                    "delete expired receipt",
                    Some(sql),
                    &scope,
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    format!("{me} deleted the expired receipt for key {key:?}"),
                )
            }
            Phase::InsertEffect => {
                let sql = "INSERT INTO effects (tenant, operation, quantity) VALUES (?1, ?2, ?3)";
                let params = [
                    scope[0].clone(),
                    scope[1].clone(),
                    self.request.quantity.into(),
                ];
                let result = self.sql(ctx, sql, &params);
                if let Some(report) =
                    self.busy_or_error("insert effect", sql, &params, &result, ctx.peers)
                {
                    return report;
                }
                let effect_id = result
                    .as_ref()
                    .map(|r| r.last_insert_rowid)
                    .unwrap_or_default();
                self.phase = Phase::InsertReceipt { effect_id };
                self.report(
                    "insert effect",
                    Some(sql),
                    &params,
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    format!(
                        "{me} inserted effect {effect_id}, not yet visible to other connections"
                    ),
                )
            }
            Phase::InsertReceipt { effect_id } => {
                let sql = if self.design == Design::CheckThenWrite {
                    "INSERT OR REPLACE INTO receipts VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                } else {
                    "INSERT INTO receipts VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                };
                let params = [
                    scope[0].clone(),
                    scope[1].clone(),
                    scope[2].clone(),
                    self.request.fingerprint().as_str().into(),
                    result_json(effect_id, self.request.quantity)
                        .as_str()
                        .into(),
                    (self.request.now + RETENTION_SECONDS).into(),
                ];
                let result = self.sql(ctx, sql, &params);
                if let Some(report) =
                    self.busy_or_error("insert receipt", sql, &params, &result, ctx.peers)
                {
                    return report;
                }
                self.phase = Phase::Commit { effect_id };
                let replaced = if self.design == Design::CheckThenWrite {
                    " (OR REPLACE: any receipt another request wrote meanwhile is overwritten)"
                } else {
                    ""
                };
                self.report(
                    "insert receipt",
                    Some(sql),
                    &params,
                    SqlResult::from_result(&result),
                    Progress::Progressed,
                    format!("{me} inserted the receipt for key {key:?} pointing at effect {effect_id}{replaced}"),
                )
            }
            Phase::Commit { effect_id } => {
                let sql = "COMMIT";
                let result = self.sql(ctx, sql, &[]);
                if let Some(report) = self.busy_or_error("commit", sql, &[], &result, ctx.peers) {
                    return report;
                }
                let answer = result_json(effect_id, self.request.quantity);
                let progress = self.finish(Outcome::with_result("created", answer.clone()));
                self.report(
                    "commit",
                    Some(sql),
                    &[],
                    SqlResult::from_result(&result),
                    progress,
                    format!("{me} committed effect {effect_id} and its receipt together and answers created {answer}"),
                )
            }
            Phase::Answer(answer) => {
                let sql = "COMMIT";
                let result = self.sql(ctx, sql, &[]);
                if let Some(report) = self.busy_or_error("answer", sql, &[], &result, ctx.peers) {
                    return report;
                }
                let (outcome, note) = match answer {
                    Answer::Replay(stored) => (
                        Outcome::with_result("replay", stored.clone()),
                        format!("{me} wrote nothing and answers replay {stored}"),
                    ),
                    Answer::Conflict => (
                        Outcome::new("conflict"),
                        format!(
                            "{me} wrote nothing and answers conflict (HTTP 422 in the IETF draft)"
                        ),
                    ),
                };
                let progress = self.finish(outcome);
                self.report(
                    "answer",
                    Some(sql),
                    &[],
                    SqlResult::from_result(&result),
                    progress,
                    note,
                )
            }
            Phase::RollbackRetry => {
                let sql = "ROLLBACK";
                let result = self.sql(ctx, sql, &[]);
                if let Some(report) =
                    self.busy_or_error("roll back to retry", sql, &[], &result, ctx.peers)
                {
                    return report;
                }
                self.phase = Phase::Begin;
                self.found = None;
                self.retries += 1;
                // Back off until the writer is done: retrying while it still
                // holds its lock would only meet BUSY again.
                let writers: Vec<&str> = ctx
                    .peers
                    .iter()
                    .filter(|p| p.lock >= LockLevel::Reserved)
                    .map(|p| p.label.as_str())
                    .collect();
                let (progress, wait) = if writers.is_empty() {
                    (Progress::Progressed, String::new())
                } else {
                    (
                        Progress::Blocked,
                        format!(
                            " and backs off until {} has finished writing",
                            writers.join(" and ")
                        ),
                    )
                };
                self.report(
                    "roll back to retry",
                    Some(sql),
                    &[],
                    SqlResult::from_result(&result),
                    progress,
                    format!("{me} rolled back, releasing its SHARED lock so the other writer can commit{wait}; then it starts over"),
                )
            }
            Phase::Done => {
                let progress = Progress::Failed {
                    error: "the request is already over".to_string(),
                };
                self.report(
                    "done",
                    None,
                    &[],
                    SqlResult::None,
                    progress,
                    format!("{me} is already over"),
                )
            }
        }
    }
}

/// The response a client gets for a created effect.
pub fn result_json(effect_id: i64, quantity: i64) -> String {
    format!("{{\"effect_id\":{effect_id},\"quantity\":{quantity}}}")
}

/// Creates the schema in `store`.
pub fn setup(store: &Store) -> Result<()> {
    let conn = store.connect(DB, "setup")?;
    conn.sqlite()?.execute_batch(SCHEMA)?;
    Ok(())
}

/// (effects, receipts) as the committed state of `store` has them.
pub fn counts(store: &Store) -> Result<(i64, i64)> {
    let conn = store.connect(DB, "counts")?;
    let rows = conn.execute(
        "SELECT (SELECT count(*) FROM effects), (SELECT count(*) FROM receipts)",
        &[],
    )?;
    match rows.rows.first().map(Vec::as_slice) {
        Some([SqlValue::Integer(e), SqlValue::Integer(r)]) => Ok((*e, *r)),
        other => Err(Error::Store(format!("unexpected counts {other:?}"))),
    }
}
