//! Idempotency receipts: a key scoped to (tenant, operation, key) turns any
//! number of retries and racing requests into one logical action.
//!
//! [`Execute`] is one request as a step machine on its own connection, in the
//! correct design (check and write in one `BEGIN IMMEDIATE` transaction) or in
//! one of the designs that fail, with an optional injected fault, under a
//! response [`Profile`].

use std::hash::{Hash, Hasher};

use serde::Serialize;

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

/// How long the reference keeps a receipt, in seconds.
pub const REFERENCE_RETENTION: i64 = 60;

/// The longest idempotency key, tenant or operation accepted (Stripe's key limit).
pub const MAX_KEY_CHARS: usize = 255;

/// Which design the request follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
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
    /// No fingerprint: any receipt for the key is replayed, whatever the
    /// parameters of the new request.
    NoFingerprint,
    /// The effect commits in one transaction and the receipt in a second:
    /// a crash between them leaves an effect without a receipt.
    ReceiptLater,
    /// An in-progress record committed first, a slow handler outside any
    /// transaction, then the effect and the completed receipt (how AWS
    /// Powertools and most HTTP services work): a second request arriving
    /// meanwhile sees the key in flight (409).
    InProgressRecord,
}

/// A fault injected into a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// None.
    None,
    /// The handler raises after inserting the effect, before the receipt.
    FailAfterEffect,
    /// The request commits, then its reply is lost on the way to the client.
    LoseReply,
    /// The process dies (a real kill of its connection) after the effect's
    /// transaction committed, before the receipt's (with [`Design::ReceiptLater`]).
    CrashBeforeReceipt,
}

/// How a service answers, after the published semantics it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The reference program: 60-second retention, failures roll back.
    Reference,
    /// The IETF `Idempotency-Key` HTTP header draft: 400 without a key, 409
    /// while the first request is in flight, 422 for a reused key with
    /// another payload; the retention period is the server's choice (24 h here).
    Ietf,
    /// Stripe: the first response is stored and replayed, errors included;
    /// keys are pruned after 24 hours; other parameters are an error (400).
    Stripe,
    /// AWS Lambda Powertools: an exception deletes the record so the retry
    /// runs again; records expire after 1 hour by default.
    Powertools,
}

/// Every profile's id, in [`Profile::ALL`]'s order.
pub const PROFILE_IDS: [&str; 4] = [
    Profile::ALL[0].id(),
    Profile::ALL[1].id(),
    Profile::ALL[2].id(),
    Profile::ALL[3].id(),
];

impl Profile {
    /// All profiles.
    pub const ALL: [Profile; 4] = [
        Profile::Reference,
        Profile::Ietf,
        Profile::Stripe,
        Profile::Powertools,
    ];

    /// The profile's id.
    pub const fn id(self) -> &'static str {
        match self {
            Profile::Reference => "reference",
            Profile::Ietf => "ietf",
            Profile::Stripe => "stripe",
            Profile::Powertools => "powertools",
        }
    }

    /// Parses a profile id (one of [`PROFILE_IDS`]).
    pub fn parse(id: &str) -> Result<Self> {
        Profile::ALL
            .into_iter()
            .find(|p| p.id() == id)
            .ok_or_else(|| {
                Error::invalid(
                    "profile",
                    format!(
                        "unknown profile {}; use {}",
                        crate::scenarios::params::quote(id),
                        PROFILE_IDS.join(", ")
                    ),
                )
            })
    }

    /// How long a receipt is kept, in seconds.
    pub fn retention(self) -> i64 {
        match self {
            Profile::Reference => REFERENCE_RETENTION,
            Profile::Ietf | Profile::Stripe => 24 * 3600,
            Profile::Powertools => 3600,
        }
    }

    /// Whether a failed request's error response is stored and replayed.
    pub fn stores_errors(self) -> bool {
        self == Profile::Stripe
    }

    /// Whether a request without a key is refused (rather than executed
    /// without idempotency).
    pub fn requires_key(self) -> bool {
        self == Profile::Ietf
    }

    /// The HTTP status (or the library's answer) for an outcome kind.
    pub fn response(self, kind: &str) -> &'static str {
        match (self, kind) {
            (_, "created") => "201 Created",
            (_, "replay") => "the stored response, replayed",
            (Profile::Ietf, "conflict") => "422 Unprocessable Content",
            (Profile::Stripe, "conflict") => "400 idempotency_error",
            (Profile::Powertools, "conflict") => "IdempotencyValidationError",
            (_, "conflict") => "conflict",
            (Profile::Ietf | Profile::Reference, "in-flight") => "409 Conflict",
            (Profile::Stripe, "in-flight") => "409 idempotency_key_in_use",
            (Profile::Powertools, "in-flight") => "IdempotencyAlreadyInProgressError",
            (Profile::Ietf, "missing-key") => "400 Bad Request",
            (_, "missing-key") => "executed without idempotency",
            (Profile::Stripe, "error") => "402 card_declined (stored; retries replay it)",
            (Profile::Powertools, "error") => {
                "the exception; the record is deleted, a retry runs again"
            }
            (_, "error") => "500; nothing is stored, a retry runs again",
            _ => "",
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
    /// The idempotency key; empty for a request sent without one.
    pub key: String,
    /// The quantity ordered; the fingerprint covers it.
    pub quantity: i64,
    /// The virtual clock, in seconds.
    pub now: i64,
}

/// Checks one text field of a request.
fn check_text(field: &'static str, value: &str, what: &str) -> Result<()> {
    crate::scenarios::params::check_text(field, value, MAX_KEY_CHARS, what)
}

impl Request {
    /// The reference's request: north / web-order / `key`, quantity 2.
    pub fn reference(key: &str, quantity: i64, now: i64) -> Self {
        Request {
            tenant: "north".to_string(),
            operation: "web-order".to_string(),
            key: key.to_string(),
            quantity,
            now,
        }
    }

    /// Checks a request as a caller supplied it.
    pub fn validate(self) -> Result<Self> {
        check_text("tenant", &self.tenant, "")?;
        check_text("operation", &self.operation, "")?;
        check_text("key", &self.key, ", as Stripe limits keys")?;
        if self.quantity <= 0 {
            return Err(Error::invalid(
                "quantity",
                format!("must be a positive whole number (got {})", self.quantity),
            ));
        }
        if !(0..=MAX_CLOCK).contains(&self.now) {
            return Err(Error::invalid(
                "now",
                format!("use 0 to {MAX_CLOCK} seconds"),
            ));
        }
        Ok(self)
    }

    /// Canonical JSON of the parameters the key covers.
    pub fn fingerprint(&self) -> String {
        format!("{{\"quantity\":{}}}", self.quantity)
    }

    fn scope(&self) -> Vec<SqlValue> {
        vec![
            self.tenant.as_str().into(),
            self.operation.as_str().into(),
            self.key.as_str().into(),
        ]
    }
}

/// The latest virtual time accepted, in seconds (ten years).
pub const MAX_CLOCK: i64 = 10 * 365 * 24 * 3600;

/// Where a request is in its program.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Phase {
    RejectMissingKey,
    InsertMarker,
    CommitMarker,
    Handler,
    BeginEffect,
    CompleteReceipt {
        result: String,
    },
    Begin,
    ReadReceipt,
    EndCheck,
    BeginWrite,
    Savepoint,
    DeleteExpired,
    InsertEffect,
    InjectFailure,
    RollbackFailure,
    RollbackToSavepoint,
    InsertReceipt {
        result: String,
        kind: &'static str,
    },
    Commit {
        result: String,
        kind: &'static str,
    },
    CommitEffect {
        result: String,
    },
    Crash,
    BeginReceipt {
        result: String,
    },
    Answer {
        kind: &'static str,
        result: Option<String>,
    },
    LoseReply {
        result: String,
    },
    RollbackRetry,
    Crashed,
    Done,
}

/// One idempotent request on its own connection.
pub struct Execute {
    label: String,
    request: Request,
    design: Design,
    fault: Fault,
    profile: Profile,
    after: Option<usize>,
    phase: Phase,
    /// What the request read: `None` before reading.
    found: Option<Option<(String, String, i64)>>,
    conn: Option<Conn>,
}

/// The step to run: its name, and its SQL if it has any.
struct Plan {
    name: &'static str,
    sql: Option<&'static str>,
    params: Vec<SqlValue>,
}

impl Execute {
    /// A request labelled `label` (its connection opens at its first step).
    pub fn new(label: &str, request: Request, design: Design) -> Self {
        Execute {
            label: label.to_string(),
            request,
            design,
            fault: Fault::None,
            profile: Profile::Reference,
            after: None,
            phase: Phase::Begin,
            found: None,
            conn: None,
        }
    }

    /// Injects `fault`.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }

    /// Answers after `profile`'s semantics.
    pub fn with_profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        if self.request.key.is_empty() && profile.requires_key() {
            self.phase = Phase::RejectMissingKey;
        }
        self
    }

    /// Starts only once attempt `index` is over.
    pub fn after(mut self, index: usize) -> Self {
        self.after = Some(index);
        self
    }

    fn keyless(&self) -> bool {
        self.request.key.is_empty()
    }

    fn plan(&self) -> Plan {
        let scope = self.request.scope();
        let plan =
            |name, sql: Option<&'static str>, params: Vec<SqlValue>| Plan { name, sql, params };
        match &self.phase {
            Phase::RejectMissingKey => plan("reject: no key", None, vec![]),
            Phase::Begin => plan("begin", Some(self.begin_sql()), vec![]),
            Phase::ReadReceipt => plan(
                "read receipt",
                Some("SELECT fingerprint, result, expires_at FROM receipts WHERE tenant = ?1 AND operation = ?2 AND request_key = ?3"),
                scope,
            ),
            Phase::EndCheck => plan("end check", Some("COMMIT"), vec![]),
            Phase::BeginWrite => plan("begin write", Some("BEGIN IMMEDIATE"), vec![]),
            Phase::Savepoint => plan("savepoint before the handler", Some("SAVEPOINT handler"), vec![]),
            Phase::DeleteExpired => plan(
                "delete expired receipt",
                Some("DELETE FROM receipts WHERE tenant = ?1 AND operation = ?2 AND request_key = ?3"),
                scope,
            ),
            Phase::InsertEffect => plan(
                "insert effect",
                Some("INSERT INTO effects (tenant, operation, quantity) VALUES (?1, ?2, ?3)"),
                vec![scope[0].clone(), scope[1].clone(), self.request.quantity.into()],
            ),
            Phase::InjectFailure => plan("handler fails", None, vec![]),
            Phase::InsertMarker => {
                let mut params = scope.clone();
                params.push(self.request.fingerprint().as_str().into());
                params.push(IN_PROGRESS.into());
                params.push((self.request.now + self.profile.retention()).into());
                plan(
                    "insert in-progress record",
                    Some("INSERT INTO receipts VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
                    params,
                )
            }
            Phase::CommitMarker => plan("commit the record", Some("COMMIT"), vec![]),
            Phase::Handler => plan("handler runs (slow, outside any transaction)", None, vec![]),
            Phase::BeginEffect => plan("begin effect", Some("BEGIN IMMEDIATE"), vec![]),
            Phase::CompleteReceipt { result } => {
                let mut params = scope.clone();
                params.push(result.as_str().into());
                plan(
                    "complete the record",
                    Some("UPDATE receipts SET result = ?4 WHERE tenant = ?1 AND operation = ?2 AND request_key = ?3"),
                    params,
                )
            }
            Phase::RollbackFailure => plan("roll back the failure", Some("ROLLBACK"), vec![]),
            Phase::RollbackToSavepoint => plan("undo the handler's writes", Some("ROLLBACK TO handler"), vec![]),
            Phase::InsertReceipt { result, .. } => {
                let mut params = scope;
                params.push(self.request.fingerprint().as_str().into());
                params.push(result.as_str().into());
                params.push((self.request.now + self.profile.retention()).into());
                plan(
                    "insert receipt",
                    Some(if self.design == Design::CheckThenWrite {
                        "INSERT OR REPLACE INTO receipts VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                    } else {
                        "INSERT INTO receipts VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                    }),
                    params,
                )
            }
            Phase::Commit { .. } | Phase::CommitEffect { .. } => plan("commit", Some("COMMIT"), vec![]),
            Phase::Crash => plan("crash", None, vec![]),
            Phase::BeginReceipt { .. } => plan("begin receipt", Some("BEGIN IMMEDIATE"), vec![]),
            Phase::Answer { .. } => plan("answer", Some("COMMIT"), vec![]),
            Phase::LoseReply { .. } => plan("reply lost", None, vec![]),
            Phase::RollbackRetry => plan("roll back to retry", Some("ROLLBACK"), vec![]),
            Phase::Crashed | Phase::Done => plan("done", None, vec![]),
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

    /// Ends the request: closes its connection (gracefully) and reports.
    fn finish(&mut self, outcome: Outcome) -> Progress {
        self.phase = Phase::Done;
        self.conn = None;
        Progress::Finished { outcome }
    }

    /// Why a read found no receipt although others are on their way.
    fn cause_of_absence(peers: &[Peer]) -> String {
        let named = |phases: &[&str]| -> Vec<&str> {
            peers
                .iter()
                .filter(|p| phases.contains(&p.phase))
                .map(|p| p.label.as_str())
                .collect()
        };
        let writing = named(&["wrote effect", "wrote receipt"]);
        let checked = named(&["checked", "checked, will write", "writing"]);
        let crashed = named(&["crashed before its receipt"]);
        if !writing.is_empty() {
            format!(" because {} had not committed yet", writing.join(" and "))
        } else if !checked.is_empty() {
            format!(
                " because {} had checked but not yet written its receipt",
                checked.join(" and ")
            )
        } else if !crashed.is_empty() {
            format!(
                " because {} committed its effect but died before writing the receipt",
                crashed.join(" and ")
            )
        } else {
            String::new()
        }
    }

    /// Moves on after the step's SQL succeeded (or after a non-SQL step);
    /// returns the progress and the sentence explaining the step.
    fn advance(&mut self, rows: Option<&Rows>, ctx: &StepCtx<'_>) -> (Progress, String) {
        let me = self.label.clone();
        let key = self.request.key.clone();
        let quantity = self.request.quantity;
        let keyless = self.keyless();
        match self.phase.clone() {
            Phase::RejectMissingKey => {
                let progress = self.finish(Outcome::with_result("missing-key", "{\"status\":400}"));
                (progress, format!("{me} sent no Idempotency-Key: refused with 400 before touching the database"))
            }
            Phase::Begin => {
                self.phase = if keyless {
                    Phase::InsertEffect
                } else {
                    Phase::ReadReceipt
                };
                let note = match self.begin_sql() {
                    "BEGIN IMMEDIATE" => format!("{me} began a write transaction and holds RESERVED: other writers must wait"),
                    _ => format!("{me} began a deferred transaction: it takes no lock until it reads"),
                };
                (Progress::Progressed, note)
            }
            Phase::ReadReceipt => {
                let found =
                    rows.and_then(|r| r.rows.first())
                        .and_then(|row| match row.as_slice() {
                            [SqlValue::Text(f), SqlValue::Text(r), SqlValue::Integer(e)] => {
                                Some((f.clone(), r.clone(), *e))
                            }
                            _ => None,
                        });
                self.found = Some(found.clone());
                let valid = found
                    .as_ref()
                    .filter(|(_, _, expires)| *expires > self.request.now);
                let note;
                self.phase = match (valid, &found) {
                    (Some((fingerprint, stored, _)), _)
                        if stored == IN_PROGRESS && *fingerprint == self.request.fingerprint() =>
                    {
                        note = format!(
                            "{me} found key {key:?} in flight: the first request has not finished ({})",
                            self.profile.response("in-flight")
                        );
                        Phase::Answer {
                            kind: "in-flight",
                            result: None,
                        }
                    }
                    (Some((fingerprint, stored, _)), _) => {
                        if self.design != Design::NoFingerprint
                            && *fingerprint != self.request.fingerprint()
                        {
                            note = format!("{me} found a receipt for key {key:?} made with other parameters ({fingerprint}): a conflict, not a replay");
                            Phase::Answer {
                                kind: "conflict",
                                result: None,
                            }
                        } else if *fingerprint != self.request.fingerprint() {
                            note = format!("{me} found a receipt for key {key:?} and, checking no fingerprint, replays {stored} although it asked for quantity {quantity}");
                            Phase::Answer {
                                kind: "replay",
                                result: Some(stored.clone()),
                            }
                        } else {
                            note = format!("{me} found the receipt for key {key:?} and will replay its stored result {stored}");
                            Phase::Answer {
                                kind: "replay",
                                result: Some(stored.clone()),
                            }
                        }
                    }
                    (None, Some((_, _, expires))) => {
                        note = format!(
                            "{me} found a receipt for key {key:?} that expired at t={expires} (now t={}): the key may create anew",
                            self.request.now
                        );
                        Phase::DeleteExpired
                    }
                    (None, None) => {
                        note = format!(
                            "{me} found no receipt for key {key:?}{}",
                            Self::cause_of_absence(ctx.peers)
                        );
                        if self.design == Design::CheckThenWrite {
                            Phase::EndCheck
                        } else if self.design == Design::InProgressRecord {
                            Phase::InsertMarker
                        } else if self.profile.stores_errors() {
                            Phase::Savepoint
                        } else {
                            Phase::InsertEffect
                        }
                    }
                };
                (Progress::Progressed, note)
            }
            Phase::EndCheck => {
                self.phase = Phase::BeginWrite;
                (Progress::Progressed, format!("{me} ended its check transaction: nothing stops another request from checking the same key now"))
            }
            Phase::BeginWrite => {
                self.phase = Phase::InsertEffect;
                (
                    Progress::Progressed,
                    format!("{me} began its write transaction, trusting a check that may be stale"),
                )
            }
            Phase::Savepoint => {
                self.phase = Phase::InsertEffect;
                (Progress::Progressed, format!("{me} set a savepoint so that a failing handler can be undone while its error response is kept"))
            }
            Phase::DeleteExpired => {
                self.phase = if self.profile.stores_errors() {
                    Phase::Savepoint
                } else {
                    Phase::InsertEffect
                };
                (
                    Progress::Progressed,
                    format!("{me} deleted the expired receipt for key {key:?}"),
                )
            }
            Phase::InsertEffect => {
                let effect_id = rows.map(|r| r.last_insert_rowid).unwrap_or_default();
                let result = result_json(effect_id, quantity);
                self.phase = if self.fault == Fault::FailAfterEffect {
                    Phase::InjectFailure
                } else if keyless {
                    Phase::Commit {
                        result,
                        kind: "created",
                    }
                } else if self.design == Design::ReceiptLater {
                    Phase::CommitEffect { result }
                } else if self.design == Design::InProgressRecord {
                    Phase::CompleteReceipt { result }
                } else {
                    Phase::InsertReceipt {
                        result,
                        kind: "created",
                    }
                };
                (
                    Progress::Progressed,
                    format!(
                        "{me} inserted effect {effect_id}, not yet visible to other connections"
                    ),
                )
            }
            Phase::InsertMarker => {
                self.phase = Phase::CommitMarker;
                (
                    Progress::Progressed,
                    format!("{me} recorded key {key:?} as in progress"),
                )
            }
            Phase::CommitMarker => {
                self.phase = Phase::Handler;
                (Progress::Progressed, format!("{me} committed the in-progress record: other requests with key {key:?} now see it in flight"))
            }
            Phase::Handler => {
                self.phase = Phase::BeginEffect;
                (
                    Progress::Progressed,
                    format!("{me}'s handler does its slow work (a payment call) holding no lock"),
                )
            }
            Phase::BeginEffect => {
                self.phase = Phase::InsertEffect;
                (Progress::Progressed, format!("{me} began the transaction that applies the effect and completes the record"))
            }
            Phase::CompleteReceipt { result } => {
                self.phase = Phase::Commit {
                    result: result.clone(),
                    kind: "created",
                };
                (
                    Progress::Progressed,
                    format!("{me} completed the record for key {key:?} with {result}"),
                )
            }
            Phase::InjectFailure => {
                self.phase = if self.profile.stores_errors() {
                    Phase::RollbackToSavepoint
                } else {
                    Phase::RollbackFailure
                };
                (Progress::Progressed, format!("{me}'s handler failed after inserting the effect, before the receipt (an injected failure)"))
            }
            Phase::RollbackFailure => {
                let progress = self.finish(Outcome::with_result(
                    "error",
                    "{\"error\":\"injected failure\"}",
                ));
                let tail = if self.profile == Profile::Powertools {
                    ": like Powertools deleting the record on an exception, nothing remains, so a retry runs again"
                } else {
                    ": the effect and the receipt vanish together, so a retry runs again"
                };
                (progress, format!("{me} rolled back{tail}"))
            }
            Phase::RollbackToSavepoint => {
                self.phase = Phase::InsertReceipt {
                    result: ERROR_RESULT.to_string(),
                    kind: "error",
                };
                (Progress::Progressed, format!("{me} undid the handler's effect but keeps the transaction to store the error response"))
            }
            Phase::InsertReceipt { result, kind } => {
                self.phase = Phase::Commit {
                    result: result.clone(),
                    kind,
                };
                let replaced = if self.design == Design::CheckThenWrite {
                    " (OR REPLACE: a receipt another request wrote meanwhile is overwritten)"
                } else {
                    ""
                };
                (
                    Progress::Progressed,
                    format!("{me} inserted the receipt for key {key:?} holding {result}{replaced}"),
                )
            }
            Phase::Commit { result, kind } => {
                if self.fault == Fault::LoseReply {
                    self.phase = Phase::LoseReply {
                        result: result.clone(),
                    };
                    return (Progress::Progressed, format!("{me} committed: {result} is durable, and the reply leaves for the client"));
                }
                let note = match (kind, keyless) {
                    (_, true) => format!("{me} committed an effect without a receipt (no key, no idempotency) and answers {result}"),
                    ("error", _) => format!("{me} committed the error response as the key's receipt: retries will replay {result}"),
                    _ if self.design == Design::ReceiptLater => format!("{me} committed the receipt in its own transaction and answers created {result}"),
                    _ => format!("{me} committed the effect and its receipt together and answers created {result}"),
                };
                let progress = self.finish(Outcome::with_result(kind, result));
                (progress, note)
            }
            Phase::CommitEffect { result } => {
                self.phase = if self.fault == Fault::CrashBeforeReceipt {
                    Phase::Crash
                } else {
                    Phase::BeginReceipt {
                        result: result.clone(),
                    }
                };
                (Progress::Progressed, format!("{me} committed the effect alone: until the receipt commits, a retry cannot know it happened"))
            }
            Phase::Crash => {
                // A real kill: the connection's locks vanish and it writes nothing more.
                if let Some(conn) = self.conn.as_mut() {
                    let _ = conn.kill();
                }
                self.phase = Phase::Crashed;
                self.conn = None;
                let progress = Progress::Finished {
                    outcome: Outcome::new("crashed"),
                };
                (progress, format!("{me}'s process died before writing the receipt: its effect is committed, its key unrecorded"))
            }
            Phase::BeginReceipt { result } => {
                self.phase = Phase::InsertReceipt {
                    result,
                    kind: "created",
                };
                (
                    Progress::Progressed,
                    format!("{me} began a second transaction for the receipt"),
                )
            }
            Phase::Answer { kind, result } => {
                let note = match (kind, &result) {
                    ("replay", Some(stored)) => {
                        format!("{me} wrote nothing and answers replay {stored}")
                    }
                    ("in-flight", _) => format!(
                        "{me} wrote nothing and answers {}",
                        self.profile.response("in-flight")
                    ),
                    _ => format!(
                        "{me} wrote nothing and answers conflict ({})",
                        self.profile.response("conflict")
                    ),
                };
                if self.fault == Fault::LoseReply {
                    if let Some(stored) = result {
                        self.phase = Phase::LoseReply { result: stored };
                        return (Progress::Progressed, note);
                    }
                }
                let outcome = match result {
                    Some(stored) => Outcome::with_result(kind, stored),
                    None => Outcome::new(kind),
                };
                let progress = self.finish(outcome);
                (progress, note)
            }
            Phase::LoseReply { result } => {
                let progress = self.finish(Outcome::with_result("reply-lost", result.clone()));
                (progress, format!("{me}'s reply {result} was lost on the way: the client never saw it and will retry"))
            }
            Phase::RollbackRetry => {
                self.phase = Phase::Begin;
                self.found = None;
                // Back off until the writer is done: retrying while it still
                // holds its lock would only meet BUSY again.
                let writers: Vec<&str> = ctx
                    .peers
                    .iter()
                    .filter(|p| p.lock >= LockLevel::Reserved)
                    .map(|p| p.label.as_str())
                    .collect();
                if writers.is_empty() {
                    (
                        Progress::Progressed,
                        format!("{me} rolled back, releasing its SHARED lock; then it starts over"),
                    )
                } else {
                    (
                        Progress::Blocked,
                        format!(
                            "{me} rolled back, releasing its SHARED lock so the other writer can commit, and backs off until {} has finished writing; then it starts over",
                            writers.join(" and ")
                        ),
                    )
                }
            }
            Phase::Crashed | Phase::Done => (
                Progress::Failed {
                    error: "the request is already over".to_string(),
                },
                format!("{me} is already over"),
            ),
        }
    }

    /// How the design begins its (first) transaction.
    fn begin_sql(&self) -> &'static str {
        match self.design {
            Design::CheckThenWrite | Design::DeferredBegin | Design::DeferredBeginRetry => "BEGIN",
            _ => "BEGIN IMMEDIATE",
        }
    }
}

/// The result an in-progress record holds until its request completes.
pub const IN_PROGRESS: &str = "{\"status\":\"in-progress\"}";

/// The error response Stripe-style services store: a declined payment.
pub const ERROR_RESULT: &str = "{\"status\":402,\"error\":\"card_declined\"}";

impl Attempt for Execute {
    fn label(&self) -> &str {
        &self.label
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            Phase::RejectMissingKey | Phase::Begin => "ready",
            Phase::InsertMarker | Phase::CommitMarker => "recording in-progress",
            Phase::Handler | Phase::BeginEffect => "in flight",
            Phase::CompleteReceipt { .. } => "wrote effect",
            Phase::ReadReceipt => "in transaction",
            Phase::EndCheck => "checked",
            Phase::BeginWrite => "checked, will write",
            Phase::Savepoint | Phase::DeleteExpired | Phase::InsertEffect => match self.design {
                Design::CheckThenWrite => "writing",
                _ => "read, will write",
            },
            Phase::InjectFailure | Phase::RollbackFailure | Phase::RollbackToSavepoint => "failing",
            Phase::InsertReceipt { .. } | Phase::CommitEffect { .. } => "wrote effect",
            Phase::Commit { .. } => "wrote receipt",
            Phase::Crash => "committed its effect",
            Phase::Crashed => "crashed before its receipt",
            Phase::BeginReceipt { .. } => "writing its receipt",
            Phase::Answer { .. } | Phase::LoseReply { .. } => "answering",
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
        self.fault.hash(&mut h);
        self.profile.hash(&mut h);
        self.after.hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conn.iter().collect()
    }

    fn crash(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            let _ = conn.kill();
        }
        self.conn = None;
        self.phase = Phase::Crashed;
    }

    fn waits_for(&self) -> Option<usize> {
        self.after
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let plan = self.plan();
        let report = |result, progress, note| StepReport {
            name: plan.name.to_string(),
            sql: plan.sql.map(str::to_string),
            params: plan.params.clone(),
            result,
            progress,
            note,
        };
        let Some(sql) = plan.sql else {
            let (progress, note) = self.advance(None, ctx);
            return report(SqlResult::None, progress, note);
        };
        let result = self.sql(ctx, sql, &plan.params);
        let sql_result = SqlResult::from_result(&result);
        match &result {
            Ok(rows) => {
                let (progress, note) = self.advance(Some(rows), ctx);
                report(sql_result, progress, note)
            }
            Err(e) if e.is_busy() => {
                let upgrading = matches!(
                    self.phase,
                    Phase::InsertEffect | Phase::DeleteExpired | Phase::Savepoint
                ) && self.design == Design::DeferredBeginRetry;
                if upgrading {
                    self.phase = Phase::RollbackRetry;
                    let note = format!(
                        "{} could not upgrade its read to a write ({}): waiting cannot help while it holds SHARED, so it will roll back and retry",
                        self.label,
                        crate::sim::locks_held(ctx.peers)
                    );
                    return report(sql_result, Progress::Progressed, note);
                }
                let note = format!(
                    "{} got SQLITE_BUSY at \"{}\" ({}) and waits for a lock to be released",
                    self.label,
                    plan.name,
                    crate::sim::locks_held(ctx.peers)
                );
                report(sql_result, Progress::Blocked, note)
            }
            Err(e) => {
                let message = e.to_string();
                let note = format!("{} failed at \"{}\": {message}", self.label, plan.name);
                let progress = self.finish(Outcome::with_result("error", message));
                report(sql_result, progress, note)
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

/// "(effects, receipts)" as text, the way the reference prints counts.
pub fn counts_text(store: &Store) -> Result<String> {
    let (effects, receipts) = counts(store)?;
    Ok(format!("({effects}, {receipts})"))
}

/// What one request did when run alone: its outcome, its steps, and the counts after.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Executed {
    /// How it ended.
    pub outcome: Outcome,
    /// Each step it took.
    pub steps: Vec<StepReport>,
    /// Effects after it.
    pub effects: i64,
    /// Receipts after it.
    pub receipts: i64,
}

/// Runs one request (correct design) alone on `store` to its end.
pub fn execute_alone(store: &Store, label: &str, request: Request) -> Result<Executed> {
    let request = request.validate()?;
    let now = request.now;
    let mut attempt = Execute::new(label, request, Design::Correct);
    let (outcome, steps) = crate::sim::run_alone(store, &mut attempt, now)?;
    let (effects, receipts) = counts(store)?;
    Ok(Executed {
        outcome,
        steps,
        effects,
        receipts,
    })
}
