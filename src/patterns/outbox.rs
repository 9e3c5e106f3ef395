//! The transactional outbox and the idempotent inbox.
//!
//! A producer writes an order and its outbox event in one transaction. A
//! relay reads unsent events, hands each to every subscriber, and marks it
//! sent. Each subscriber applies an event in one transaction together with an
//! inbox row keyed by (consumer_id, event_id), so a redelivered event is
//! skipped. The relay may die between any two of its steps; a restarted relay
//! delivers again, and the inbox absorbs the duplicate.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use serde::Serialize;

use crate::sim::{Attempt, Outcome, Progress, SqlResult, Status, StepCtx, StepReport};
use crate::storage::{Conn, Rows, SqlValue, Store};
use crate::{Error, Result};

/// The producer's database.
pub const PRODUCER: &str = "producer.db";
/// The consumers' database.
pub const CONSUMER: &str = "consumer.db";

/// The producer's schema, each choice with its reason.
pub const PRODUCER_SCHEMA: &str = "
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY NOT NULL,
    -- The database refuses an order without a positive amount.
    amount INTEGER NOT NULL CHECK (amount > 0)
);
-- The outbox: written in the same transaction as the order, so that an
-- order never exists without its event, nor an event without its order.
CREATE TABLE outbox (
    -- The id consumers deduplicate on: stable across every redelivery.
    event_id TEXT PRIMARY KEY NOT NULL,
    -- No event for an order that does not exist (foreign keys are enforced
    -- only on connections that turn them on: every producer connection does).
    order_id TEXT NOT NULL REFERENCES orders(order_id),
    -- Canonical JSON (sorted keys, no spaces): equal payloads are equal text.
    payload TEXT NOT NULL,
    -- The relay's progress: 0 until every subscriber has the event.
    sent INTEGER NOT NULL DEFAULT 0 CHECK (sent IN (0, 1))
);
";

/// The consumers' schema, each choice with its reason.
pub const CONSUMER_SCHEMA: &str = "
-- What each subscriber has applied. Deduplication is per subscriber: audit
-- and search each apply an event once, independently.
CREATE TABLE inbox (
    consumer_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    -- Kept to tell a true duplicate from an id reused with another payload.
    payload TEXT NOT NULL,
    -- When it was applied (virtual seconds), so that a retention job can
    -- prune old history; not in the reference, which keeps history forever.
    received_at INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_id, event_id)
);
-- The subscribers' business effects. Deliberately no unique key on
-- (consumer_id, event_id): the inbox alone deduplicates, so deleting its
-- history shows exactly what it was doing.
CREATE TABLE effects (
    effect_id INTEGER PRIMARY KEY,
    consumer_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    amount INTEGER NOT NULL
);
";

/// The subscribers the relay delivers to.
pub const SUBSCRIBERS: [&str; 2] = ["audit", "search"];

/// An event as the relay hands it over.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The event's id.
    pub event_id: String,
    /// The order it is about.
    pub order_id: String,
    /// The amount.
    pub amount: i64,
}

impl Event {
    /// The event for order `order:SUFFIX` with `amount`.
    pub fn for_order(suffix: &str, amount: i64) -> Self {
        Event {
            event_id: format!("order-created:{suffix}"),
            order_id: format!("order:{suffix}"),
            amount,
        }
    }

    /// The payload as canonical JSON: sorted keys, no spaces.
    pub fn payload(&self) -> String {
        let mut map = BTreeMap::new();
        map.insert("amount", serde_json::Value::from(self.amount));
        map.insert("order_id", serde_json::Value::from(self.order_id.clone()));
        serde_json::to_string(&map).unwrap_or_default()
    }

    /// Reads an event back from its id and canonical payload.
    pub fn parse(event_id: &str, payload: &str) -> Result<Self> {
        let value: serde_json::Value = serde_json::from_str(payload)
            .map_err(|e| Error::invalid("payload", format!("not JSON: {e}")))?;
        let object = crate::input::object(&value, "payload")?;
        let amount = crate::input::whole(object, "amount", 1, crate::input::MAX_SAFE_INTEGER)?
            .ok_or_else(|| Error::invalid("amount", "is required"))?;
        let order_id = crate::input::text(object, "order_id", 255)?
            .ok_or_else(|| Error::invalid("order_id", "is required"))?;
        Ok(Event {
            event_id: event_id.to_string(),
            order_id,
            amount,
        })
    }
}

/// Whether consumers deduplicate through their inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consumer {
    /// Inbox row and effect in one transaction: a redelivery is skipped.
    Inbox,
    /// The effect alone: every delivery applies again.
    NoInbox,
}

/// Creates both schemas in `store`.
pub fn setup(store: &Store) -> Result<()> {
    store
        .connect(PRODUCER, "setup")?
        .sqlite()?
        .execute_batch(PRODUCER_SCHEMA)?;
    store
        .connect(CONSUMER, "setup")?
        .sqlite()?
        .execute_batch(CONSUMER_SCHEMA)?;
    Ok(())
}

/// Reads one integer from `db` in the committed state of `store`.
pub fn scalar(store: &Store, db: &str, sql: &str, params: &[SqlValue]) -> Result<i64> {
    let conn = store.connect(db, "check")?;
    match conn
        .execute(sql, params)?
        .rows
        .first()
        .and_then(|r| r.first())
    {
        Some(SqlValue::Integer(n)) => Ok(*n),
        Some(SqlValue::Null) | None => Ok(0),
        Some(other) => Err(Error::Store(format!("{sql} returned {other:?}"))),
    }
}

/// Effects a subscriber applied for an event.
pub fn effect_count(store: &Store, subscriber: &str, event_id: &str) -> Result<i64> {
    scalar(
        store,
        CONSUMER,
        "SELECT count(*) FROM effects WHERE consumer_id = ?1 AND event_id = ?2",
        &[subscriber.into(), event_id.into()],
    )
}

/// The connections of one attempt, one per database, opened on first use.
struct Conns {
    label: String,
    open: Vec<Conn>,
    /// Producer connections turn foreign keys on first; this is the flag.
    fk_on: bool,
}

impl Conns {
    fn new(label: &str) -> Self {
        Conns {
            label: label.to_string(),
            open: Vec::new(),
            fk_on: false,
        }
    }

    fn exec(
        &mut self,
        ctx: &StepCtx<'_>,
        db: &str,
        sql: &str,
        params: &[SqlValue],
    ) -> Result<Rows> {
        let index = match self.open.iter().position(|c| c.db() == db) {
            Some(i) => i,
            None => {
                self.open.push(ctx.store.connect(db, &self.label)?);
                self.open.len() - 1
            }
        };
        self.open[index].execute(sql, params)
    }

    fn kill(&mut self) {
        for conn in &mut self.open {
            let _ = conn.kill();
        }
        self.open.clear();
    }

    fn close(&mut self) {
        self.open.clear();
        self.fk_on = false;
    }
}

/// One step's plan: its name, database, SQL and parameters (no SQL for an action).
struct Plan {
    name: String,
    db: &'static str,
    sql: Option<&'static str>,
    params: Vec<SqlValue>,
}

fn plan(
    name: impl Into<String>,
    db: &'static str,
    sql: Option<&'static str>,
    params: Vec<SqlValue>,
) -> Plan {
    Plan {
        name: name.into(),
        db,
        sql,
        params,
    }
}

/// Runs a planned step on `conns` and turns BUSY and errors into reports;
/// `advance` is called with the rows when the SQL succeeded (or had none).
fn run_step(
    conns: &mut Conns,
    ctx: &StepCtx<'_>,
    plan: Plan,
    advance: &mut dyn FnMut(Option<&Rows>) -> (Progress, String),
    on_error: &mut dyn FnMut(&Error) -> (Progress, String),
) -> StepReport {
    let label = conns.label.clone();
    let report = |result, progress, note| StepReport {
        name: plan.name.clone(),
        sql: plan.sql.map(str::to_string),
        params: plan.params.clone(),
        result,
        progress,
        note,
    };
    let Some(sql) = plan.sql else {
        let (progress, note) = advance(None);
        return report(SqlResult::None, progress, note);
    };
    if plan.db == PRODUCER && !conns.fk_on {
        // Foreign keys are per connection and off by default.
        if let Err(e) = conns.exec(ctx, PRODUCER, "PRAGMA foreign_keys = ON", &[]) {
            let (progress, note) = on_error(&e);
            return report(SqlResult::from_result(&Err(e)), progress, note);
        }
        conns.fk_on = true;
    }
    let result = conns.exec(ctx, plan.db, sql, &plan.params);
    let sql_result = SqlResult::from_result(&result);
    match &result {
        Ok(rows) => {
            let (progress, note) = advance(Some(rows));
            report(sql_result, progress, note)
        }
        Err(e) if e.is_busy() => {
            let note = format!(
                "{label} got SQLITE_BUSY at \"{}\" ({}) and waits for a lock to be released",
                plan.name,
                crate::sim::locks_held(ctx.peers)
            );
            report(sql_result, Progress::Blocked, note)
        }
        Err(e) => {
            let (progress, note) = on_error(e);
            report(sql_result, progress, note)
        }
    }
}

fn finished(kind: &str, result: Option<String>) -> Progress {
    Progress::Finished {
        outcome: Outcome {
            kind: kind.to_string(),
            result,
        },
    }
}

// ---------------------------------------------------------------- producer

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ProducerPhase {
    Begin,
    InsertOrder,
    InsertOutbox,
    Fail,
    Rollback,
    Commit,
    Done,
}

/// A producer creating an order and its outbox event in one transaction.
pub struct CreateOrder {
    conns: Conns,
    event: Event,
    fail: bool,
    after: Option<usize>,
    phase: ProducerPhase,
}

impl CreateOrder {
    /// Creates order `order:SUFFIX`; with `fail`, the producer fails before commit.
    pub fn new(label: &str, event: Event, fail: bool) -> Self {
        CreateOrder {
            conns: Conns::new(label),
            event,
            fail,
            after: None,
            phase: ProducerPhase::Begin,
        }
    }

    /// Starts once attempt `index` is over.
    pub fn after(mut self, index: usize) -> Self {
        self.after = Some(index);
        self
    }
}

impl Attempt for CreateOrder {
    fn label(&self) -> &str {
        &self.conns.label
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            ProducerPhase::Begin => "ready",
            ProducerPhase::Done => "done",
            _ => "writing the order",
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        state.write_u8(self.phase as u8);
    }

    fn class(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        ("create-order", &self.event, self.fail, self.after).hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conns.open.iter().collect()
    }

    fn crash(&mut self) {
        self.conns.kill();
    }

    fn waits_for(&self) -> Option<usize> {
        self.after
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let e = self.event.clone();
        let me = self.conns.label.clone();
        let p = match self.phase {
            ProducerPhase::Begin => plan("begin", PRODUCER, Some("BEGIN IMMEDIATE"), vec![]),
            ProducerPhase::InsertOrder => plan(
                "insert order",
                PRODUCER,
                Some("INSERT INTO orders (order_id, amount) VALUES (?1, ?2)"),
                vec![e.order_id.as_str().into(), e.amount.into()],
            ),
            ProducerPhase::InsertOutbox => plan(
                "insert outbox event",
                PRODUCER,
                Some("INSERT INTO outbox (event_id, order_id, payload) VALUES (?1, ?2, ?3)"),
                vec![
                    e.event_id.as_str().into(),
                    e.order_id.as_str().into(),
                    e.payload().as_str().into(),
                ],
            ),
            ProducerPhase::Fail => plan("producer fails", PRODUCER, None, vec![]),
            ProducerPhase::Rollback => plan("roll back", PRODUCER, Some("ROLLBACK"), vec![]),
            ProducerPhase::Commit => plan("commit", PRODUCER, Some("COMMIT"), vec![]),
            ProducerPhase::Done => plan("done", PRODUCER, None, vec![]),
        };
        let phase = self.phase;
        let fail = self.fail;
        let mut next = phase;
        let mut close = false;
        let mut advance = |_: Option<&Rows>| -> (Progress, String) {
            match phase {
                ProducerPhase::Begin => {
                    next = ProducerPhase::InsertOrder;
                    (
                        Progress::Progressed,
                        format!("{me} began a write transaction on the producer database"),
                    )
                }
                ProducerPhase::InsertOrder => {
                    next = ProducerPhase::InsertOutbox;
                    (
                        Progress::Progressed,
                        format!("{me} inserted {} (amount {})", e.order_id, e.amount),
                    )
                }
                ProducerPhase::InsertOutbox => {
                    next = if fail {
                        ProducerPhase::Fail
                    } else {
                        ProducerPhase::Commit
                    };
                    (
                        Progress::Progressed,
                        format!(
                            "{me} inserted outbox event {} in the same transaction",
                            e.event_id
                        ),
                    )
                }
                ProducerPhase::Fail => {
                    next = ProducerPhase::Rollback;
                    (
                        Progress::Progressed,
                        format!("{me} failed before committing (an injected failure)"),
                    )
                }
                ProducerPhase::Rollback => {
                    next = ProducerPhase::Done;
                    close = true;
                    (
                        finished("failed", None),
                        format!("{me} rolled back: neither the order nor its event exists"),
                    )
                }
                ProducerPhase::Commit => {
                    next = ProducerPhase::Done;
                    close = true;
                    (
                        finished("created", Some(e.event_id.clone())),
                        format!("{me} committed the order and its event together"),
                    )
                }
                ProducerPhase::Done => (
                    Progress::Failed {
                        error: "already over".into(),
                    },
                    format!("{me} is over"),
                ),
            }
        };
        let mut on_error = |err: &Error| -> (Progress, String) {
            (
                finished("error", Some(err.to_string())),
                format!("{me} failed: {err}"),
            )
        };
        let report = run_step(&mut self.conns, ctx, p, &mut advance, &mut on_error);
        self.phase = next;
        if close || matches!(report.progress, Progress::Finished { .. }) {
            self.phase = ProducerPhase::Done;
            self.conns.close();
        }
        report
    }
}

// ---------------------------------------------------------------- consumer steps

/// Where a delivery to one subscriber is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Delivery {
    Begin,
    ReadInbox,
    InsertInbox,
    InsertEffect,
    Fail,
    Rollback { kind: &'static str },
    Commit { kind: &'static str },
}

/// What a subscriber's delivery ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Delivered {
    Applied,
    Skipped,
    Rejected,
    Failed,
}

impl Delivered {
    fn word(self) -> &'static str {
        match self {
            Delivered::Applied => "applied",
            Delivered::Skipped => "skipped",
            Delivered::Rejected => "rejected",
            Delivered::Failed => "failed",
        }
    }
}

/// Plans the delivery step `phase` of `event` to `subscriber`.
fn delivery_plan(phase: &Delivery, subscriber: &str, event: &Event, now: i64) -> Plan {
    let who = |what: &str| format!("{subscriber}: {what}");
    match phase {
        Delivery::Begin => plan(who("begin"), CONSUMER, Some("BEGIN IMMEDIATE"), vec![]),
        Delivery::ReadInbox => plan(
            who("read inbox"),
            CONSUMER,
            Some("SELECT payload FROM inbox WHERE consumer_id = ?1 AND event_id = ?2"),
            vec![subscriber.into(), event.event_id.as_str().into()],
        ),
        Delivery::InsertInbox => plan(
            who("insert inbox row"),
            CONSUMER,
            Some("INSERT INTO inbox (consumer_id, event_id, payload, received_at) VALUES (?1, ?2, ?3, ?4)"),
            vec![
                subscriber.into(),
                event.event_id.as_str().into(),
                event.payload().as_str().into(),
                now.into(),
            ],
        ),
        Delivery::InsertEffect => plan(
            who("apply effect"),
            CONSUMER,
            Some("INSERT INTO effects (consumer_id, event_id, amount) VALUES (?1, ?2, ?3)"),
            vec![subscriber.into(), event.event_id.as_str().into(), event.amount.into()],
        ),
        Delivery::Fail => plan(who("consumer fails"), CONSUMER, None, vec![]),
        Delivery::Rollback { .. } => plan(who("roll back"), CONSUMER, Some("ROLLBACK"), vec![]),
        Delivery::Commit { .. } => plan(who("commit"), CONSUMER, Some("COMMIT"), vec![]),
    }
}

/// Moves a delivery on after its step succeeded. Returns the next phase (or
/// the end of the delivery) and the sentence for the step.
fn delivery_advance(
    phase: &Delivery,
    me: &str,
    subscriber: &str,
    event: &Event,
    rows: Option<&Rows>,
    design: Consumer,
    fail: bool,
) -> (std::result::Result<Delivery, Delivered>, String) {
    let id = &event.event_id;
    match phase {
        Delivery::Begin => (
            Ok(if design == Consumer::Inbox { Delivery::ReadInbox } else { Delivery::InsertEffect }),
            format!("{me} began {subscriber}'s transaction on the consumer database"),
        ),
        Delivery::ReadInbox => match rows.and_then(|r| r.rows.first()).and_then(|r| r.first()) {
            Some(SqlValue::Text(stored)) if *stored == event.payload() => (
                Ok(Delivery::Commit { kind: "skipped" }),
                format!("{me} found {id} in {subscriber}'s inbox with the same payload: a redelivery, to be skipped"),
            ),
            Some(SqlValue::Text(stored)) => (
                Ok(Delivery::Rollback { kind: "rejected" }),
                format!("{me} found {id} in {subscriber}'s inbox with another payload ({stored}): the same id reused, rejected"),
            ),
            _ => (
                Ok(Delivery::InsertInbox),
                format!("{me} found no {id} in {subscriber}'s inbox: first delivery"),
            ),
        },
        Delivery::InsertInbox => (
            Ok(Delivery::InsertEffect),
            format!("{me} recorded {id} in {subscriber}'s inbox (uncommitted)"),
        ),
        Delivery::InsertEffect => (
            Ok(if fail { Delivery::Fail } else { Delivery::Commit { kind: "applied" } }),
            format!("{me} applied {subscriber}'s effect for {id} (uncommitted)"),
        ),
        Delivery::Fail => (
            Ok(Delivery::Rollback { kind: "failed" }),
            format!("{me}'s {subscriber} consumer failed before committing (an injected failure)"),
        ),
        Delivery::Rollback { kind } => {
            let delivered = if *kind == "rejected" { Delivered::Rejected } else { Delivered::Failed };
            (
                Err(delivered),
                format!("{me} rolled back {subscriber}'s transaction: nothing of {id} was applied"),
            )
        }
        Delivery::Commit { kind } => {
            let delivered = if *kind == "skipped" { Delivered::Skipped } else { Delivered::Applied };
            let note = if delivered == Delivered::Skipped {
                format!("{me} committed nothing new: {subscriber} skipped {id}")
            } else if design == Consumer::Inbox {
                format!("{me} committed {subscriber}'s inbox row and effect for {id} together")
            } else {
                format!("{me} committed {subscriber}'s effect for {id} (no inbox: nothing remembers it)")
            };
            (Err(delivered), note)
        }
    }
}

// ---------------------------------------------------------------- consumer attempt

/// One subscriber consuming one event, on its own connection.
pub struct Consume {
    conns: Conns,
    subscriber: String,
    event: Event,
    design: Consumer,
    fail: bool,
    after: Option<usize>,
    phase: Option<Delivery>,
}

impl Consume {
    /// `subscriber` consumes `event`; with `fail`, it fails before commit.
    pub fn new(label: &str, subscriber: &str, event: Event, fail: bool) -> Self {
        Consume {
            conns: Conns::new(label),
            subscriber: subscriber.to_string(),
            event,
            design: Consumer::Inbox,
            fail,
            after: None,
            phase: Some(Delivery::Begin),
        }
    }

    /// Starts once attempt `index` is over.
    pub fn after(mut self, index: usize) -> Self {
        self.after = Some(index);
        self
    }
}

impl Attempt for Consume {
    fn label(&self) -> &str {
        &self.conns.label
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            None => "done",
            Some(Delivery::Begin) => "ready",
            Some(_) => "consuming",
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        let mut h = std::hash::DefaultHasher::new();
        self.phase.hash(&mut h);
        state.write_u64(h.finish());
    }

    fn class(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        (
            "consume",
            &self.subscriber,
            &self.event,
            self.fail,
            self.after,
        )
            .hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conns.open.iter().collect()
    }

    fn crash(&mut self) {
        self.conns.kill();
    }

    fn waits_for(&self) -> Option<usize> {
        self.after
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let Some(phase) = self.phase.clone() else {
            return StepReport {
                name: "done".into(),
                sql: None,
                params: vec![],
                result: SqlResult::None,
                progress: Progress::Failed {
                    error: "already over".into(),
                },
                note: format!("{} is over", self.conns.label),
            };
        };
        let (me, sub, event, design, fail) = (
            self.conns.label.clone(),
            self.subscriber.clone(),
            self.event.clone(),
            self.design,
            self.fail,
        );
        let p = delivery_plan(&phase, &sub, &event, ctx.now());
        let mut next = Some(phase.clone());
        let mut advance = |rows: Option<&Rows>| -> (Progress, String) {
            let (moved, note) = delivery_advance(&phase, &me, &sub, &event, rows, design, fail);
            match moved {
                Ok(n) => {
                    next = Some(n);
                    (Progress::Progressed, note)
                }
                Err(delivered) => {
                    next = None;
                    (finished(delivered.word(), None), note)
                }
            }
        };
        let mut on_error = |err: &Error| -> (Progress, String) {
            (
                finished("error", Some(err.to_string())),
                format!("{me} failed: {err}"),
            )
        };
        let report = run_step(&mut self.conns, ctx, p, &mut advance, &mut on_error);
        self.phase = match report.progress {
            Progress::Finished { .. } | Progress::Failed { .. } => None,
            Progress::Blocked => Some(phase),
            Progress::Progressed => next,
        };
        if self.phase.is_none() {
            self.conns.close();
        }
        report
    }
}

// ---------------------------------------------------------------- relay

/// Where the relay is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum RelayPhase {
    ReadUnsent,
    Deliver {
        event: Event,
        subscriber: usize,
        step: Delivery,
    },
    MarkSent {
        event: Event,
    },
    Crash,
    Done,
}

/// The relay: reads the oldest unsent event, delivers it to each subscriber
/// (running the subscriber's inbox transaction), marks it sent, and goes on
/// until nothing is unsent. It can be told to die after a given number of its
/// own steps: a real kill of both its connections.
pub struct Relay {
    conns: Conns,
    subscribers: Vec<String>,
    design: Consumer,
    crash_after: Option<usize>,
    steps_taken: usize,
    after: Option<usize>,
    due: i64,
    producers: Vec<usize>,
    phase: RelayPhase,
    delivered: Vec<String>,
}

impl Relay {
    /// A relay delivering to `subscribers`.
    pub fn new(label: &str, subscribers: &[&str], design: Consumer) -> Self {
        Relay {
            conns: Conns::new(label),
            subscribers: subscribers.iter().map(|s| s.to_string()).collect(),
            design,
            crash_after: None,
            steps_taken: 0,
            after: None,
            due: 0,
            producers: Vec::new(),
            phase: RelayPhase::ReadUnsent,
            delivered: Vec::new(),
        }
    }

    /// Dies (as its process would: `_exit`) after `steps` of its own steps.
    pub fn crash_after(mut self, steps: Option<usize>) -> Self {
        self.crash_after = steps;
        self
    }

    /// Starts once attempt `index` is over.
    pub fn after(mut self, index: usize) -> Self {
        self.after = Some(index);
        self
    }

    /// Keeps polling (waits instead of stopping) while any of these
    /// producer attempts is unfinished, as a long-running relay would.
    pub fn polling_for(mut self, producers: &[usize]) -> Self {
        self.producers = producers.to_vec();
        self
    }

    /// Does not start before virtual time `due`.
    pub fn due_at(mut self, due: i64) -> Self {
        self.due = due;
        self
    }

    fn plan(&self, now: i64) -> Plan {
        match &self.phase {
            RelayPhase::ReadUnsent => plan(
                "read unsent",
                PRODUCER,
                Some(
                    "SELECT event_id, payload FROM outbox WHERE sent = 0 ORDER BY event_id LIMIT 1",
                ),
                vec![],
            ),
            RelayPhase::Deliver {
                event,
                subscriber,
                step,
            } => delivery_plan(step, &self.subscribers[*subscriber], event, now),
            RelayPhase::MarkSent { event } => plan(
                "mark sent",
                PRODUCER,
                Some("UPDATE outbox SET sent = 1 WHERE event_id = ?1"),
                vec![event.event_id.as_str().into()],
            ),
            RelayPhase::Crash => plan("crash (exit 71)", PRODUCER, None, vec![]),
            RelayPhase::Done => plan("done", PRODUCER, None, vec![]),
        }
    }
}

impl Attempt for Relay {
    fn label(&self) -> &str {
        &self.conns.label
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            RelayPhase::ReadUnsent => "relaying",
            RelayPhase::Deliver { .. } => "delivering",
            RelayPhase::MarkSent { .. } => "delivered, not yet marked",
            RelayPhase::Crash => "dying",
            RelayPhase::Done => "done",
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        let mut h = std::hash::DefaultHasher::new();
        self.phase.hash(&mut h);
        self.crash_after
            .map(|c| c.saturating_sub(self.steps_taken))
            .hash(&mut h);
        state.write_u64(h.finish());
    }

    fn class(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        (
            "relay",
            &self.subscribers,
            self.design,
            self.crash_after,
            self.after,
            self.due,
        )
            .hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conns.open.iter().collect()
    }

    fn crash(&mut self) {
        self.conns.kill();
    }

    fn waits_for(&self) -> Option<usize> {
        self.after
    }

    fn ready(&self, now: i64, _statuses: &[Status]) -> bool {
        now >= self.due
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let producers_busy = self.producers.iter().any(|&p| {
            ctx.peers
                .iter()
                .any(|peer| peer.index == p && !peer.finished)
        });
        if self.crash_after == Some(self.steps_taken) && self.phase != RelayPhase::Done {
            self.phase = RelayPhase::Crash;
        }
        let phase = self.phase.clone();
        let p = self.plan(ctx.now());
        let me = self.conns.label.clone();
        let subscribers = self.subscribers.clone();
        let design = self.design;
        let mut next = phase.clone();
        let mut kill = false;
        let mut delivered_word: Option<String> = None;
        let delivered_so_far = self.delivered.clone();
        let mut advance = |rows: Option<&Rows>| -> (Progress, String) {
            match &phase {
                RelayPhase::ReadUnsent => {
                    let row = rows.and_then(|r| r.rows.first()).cloned();
                    match row.as_deref() {
                        Some([SqlValue::Text(id), SqlValue::Text(payload)]) => {
                            match Event::parse(id, payload) {
                                Ok(event) => {
                                    next = RelayPhase::Deliver {
                                        event,
                                        subscriber: 0,
                                        step: Delivery::Begin,
                                    };
                                    (Progress::Progressed, format!("{me} read unsent event {id}"))
                                }
                                Err(e) => (
                                    finished("error", Some(e.to_string())),
                                    format!("{me} read an event it cannot parse: {e}"),
                                ),
                            }
                        }
                        _ if producers_busy => (
                            Progress::Blocked,
                            format!("{me} found no unsent event yet and waits for the producers"),
                        ),
                        _ => {
                            next = RelayPhase::Done;
                            let summary = if delivered_so_far.is_empty() {
                                "nothing".to_string()
                            } else {
                                delivered_so_far.join(", ")
                            };
                            (
                                finished("done", Some(summary.clone())),
                                format!(
                                    "{me} found no unsent event and stops (delivered: {summary})"
                                ),
                            )
                        }
                    }
                }
                RelayPhase::Deliver {
                    event,
                    subscriber,
                    step,
                } => {
                    let sub = &subscribers[*subscriber];
                    let (moved, note) =
                        delivery_advance(step, &me, sub, event, rows, design, false);
                    match moved {
                        Ok(n) => {
                            next = RelayPhase::Deliver {
                                event: event.clone(),
                                subscriber: *subscriber,
                                step: n,
                            }
                        }
                        Err(delivered) => {
                            delivered_word =
                                Some(format!("{} {sub} {}", event.event_id, delivered.word()));
                            next = if subscriber + 1 < subscribers.len() {
                                RelayPhase::Deliver {
                                    event: event.clone(),
                                    subscriber: subscriber + 1,
                                    step: Delivery::Begin,
                                }
                            } else {
                                RelayPhase::MarkSent {
                                    event: event.clone(),
                                }
                            };
                        }
                    }
                    (Progress::Progressed, note)
                }
                RelayPhase::MarkSent { event } => {
                    next = RelayPhase::ReadUnsent;
                    (
                        Progress::Progressed,
                        format!("{me} marked {} sent", event.event_id),
                    )
                }
                RelayPhase::Crash => {
                    kill = true;
                    next = RelayPhase::Done;
                    (
                        finished("crashed", Some("exit 71".to_string())),
                        format!("{me}'s process died (exit 71): its locks vanish, nothing more of it is written, and what it committed stays"),
                    )
                }
                RelayPhase::Done => (
                    Progress::Failed {
                        error: "already over".into(),
                    },
                    format!("{me} is over"),
                ),
            }
        };
        let mut on_error = |err: &Error| -> (Progress, String) {
            (
                finished("error", Some(err.to_string())),
                format!("{me} failed: {err}"),
            )
        };
        let report = run_step(&mut self.conns, ctx, p, &mut advance, &mut on_error);
        if report.progress != Progress::Blocked {
            self.steps_taken += 1;
            self.phase = next;
        }
        if let Some(word) = delivered_word {
            self.delivered.push(word);
        }
        if kill {
            self.conns.kill();
        } else if matches!(report.progress, Progress::Finished { .. }) {
            self.phase = RelayPhase::Done;
            self.conns.close();
        }
        report
    }
}

// ---------------------------------------------------------------- history and time

/// A history job: one DELETE on the consumers' inbox, then it is over.
/// [`HistoryJob::delete`] removes one subscriber's row for one event (as the
/// reference does by hand, to show what the inbox was doing);
/// [`HistoryJob::prune`], a retention job, waits until the clock reaches its
/// window and removes every row older than the window.
pub struct HistoryJob {
    conns: Conns,
    job: Job,
    after: Option<usize>,
    done: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Job {
    Delete {
        subscriber: String,
        event_id: String,
    },
    Prune {
        window: i64,
    },
}

impl HistoryJob {
    /// Deletes `subscriber`'s inbox row for `event_id` once attempt `after` is over.
    pub fn delete(label: &str, subscriber: &str, event_id: &str, after: Option<usize>) -> Self {
        HistoryJob {
            conns: Conns::new(label),
            job: Job::Delete {
                subscriber: subscriber.to_string(),
                event_id: event_id.to_string(),
            },
            after,
            done: false,
        }
    }

    /// A retention job: once the clock reaches `window`, it prunes inbox
    /// rows older than `window` seconds.
    pub fn prune(label: &str, window: i64) -> Self {
        HistoryJob {
            conns: Conns::new(label),
            job: Job::Prune { window },
            after: None,
            done: false,
        }
    }
}

impl Attempt for HistoryJob {
    fn label(&self) -> &str {
        &self.conns.label
    }

    fn phase(&self) -> &'static str {
        match (&self.job, self.done) {
            (_, true) => "done",
            (Job::Delete { .. }, false) => "ready",
            (Job::Prune { .. }, false) => "waiting for its window",
        }
    }

    fn hash_state(&self, state: &mut dyn Hasher) {
        state.write_u8(u8::from(self.done));
    }

    fn class(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        ("history-job", &self.job, self.after).hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        self.conns.open.iter().collect()
    }

    fn crash(&mut self) {
        self.conns.kill();
    }

    fn waits_for(&self) -> Option<usize> {
        self.after
    }

    fn ready(&self, now: i64, _statuses: &[Status]) -> bool {
        match self.job {
            Job::Prune { window } => now >= window,
            Job::Delete { .. } => true,
        }
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let me = self.conns.label.clone();
        let now = ctx.now();
        let (p, kind) = match &self.job {
            Job::Delete {
                subscriber,
                event_id,
            } => (
                plan(
                    "delete inbox history",
                    CONSUMER,
                    Some("DELETE FROM inbox WHERE consumer_id = ?1 AND event_id = ?2"),
                    vec![subscriber.as_str().into(), event_id.as_str().into()],
                ),
                "deleted",
            ),
            Job::Prune { window } => (
                plan(
                    "prune inbox history",
                    CONSUMER,
                    Some("DELETE FROM inbox WHERE received_at <= ?1"),
                    vec![(now - window).into()],
                ),
                "pruned",
            ),
        };
        let job = self.job.clone();
        let mut advance = |rows: Option<&Rows>| -> (Progress, String) {
            let n = rows.map_or(0, |r| r.changes);
            let note = match &job {
                Job::Delete { subscriber, event_id } => format!(
                    "{me} deleted {n} inbox row(s) of {subscriber} for {event_id}: from now on {subscriber} cannot recognise {event_id}"
                ),
                Job::Prune { window } => format!(
                    "{me} pruned {n} inbox row(s) received at or before t={} (now t={now})",
                    now - window
                ),
            };
            (finished(kind, Some(n.to_string())), note)
        };
        let mut on_error = |err: &Error| -> (Progress, String) {
            (
                finished("error", Some(err.to_string())),
                format!("{me} failed: {err}"),
            )
        };
        let report = run_step(&mut self.conns, ctx, p, &mut advance, &mut on_error);
        if matches!(report.progress, Progress::Finished { .. }) {
            self.done = true;
            self.conns.close();
        }
        report
    }
}

/// The virtual clock: each step advances time by `tick` seconds, up to
/// `until`; it may not pass `deadline` while attempt `holder` is unfinished
/// (a relay's maximum redelivery delay).
pub struct Clock {
    tick: i64,
    until: i64,
    deadline: Option<(i64, usize)>,
    label: String,
}

impl Clock {
    /// A clock ticking `tick` seconds at a time up to `until`.
    pub fn new(tick: i64, until: i64) -> Self {
        Clock {
            tick,
            until,
            deadline: None,
            label: "clock".to_string(),
        }
    }

    /// Time may not pass `deadline` before attempt `holder` is over.
    pub fn deadline(mut self, deadline: i64, holder: usize) -> Self {
        self.deadline = Some((deadline, holder));
        self
    }
}

impl Attempt for Clock {
    fn label(&self) -> &str {
        &self.label
    }

    fn phase(&self) -> &'static str {
        "ticking"
    }

    fn hash_state(&self, _state: &mut dyn Hasher) {}

    fn class(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        ("clock", self.tick, self.until, self.deadline).hash(&mut h);
        h.finish()
    }

    fn connections(&self) -> Vec<&Conn> {
        Vec::new()
    }

    fn crash(&mut self) {}

    fn can_crash(&self) -> bool {
        false
    }

    fn ready(&self, now: i64, statuses: &[Status]) -> bool {
        let next = now + self.tick;
        let held = self.deadline.is_some_and(|(deadline, holder)| {
            next > deadline && !statuses.get(holder).is_some_and(Status::is_over)
        });
        next <= self.until && !held
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let now = ctx.now() + self.tick;
        ctx.clock.set(now);
        let progress = if now + self.tick > self.until {
            finished("stopped", Some(now.to_string()))
        } else {
            Progress::Progressed
        };
        StepReport {
            name: format!("tick to t={now}"),
            sql: None,
            params: vec![],
            result: SqlResult::None,
            progress,
            note: format!("time passes: t={now}"),
        }
    }
}

/// The committed counts of both databases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Orders.
    pub orders: i64,
    /// Outbox events.
    pub outbox: i64,
    /// Outbox events not yet marked sent.
    pub pending: i64,
    /// Inbox rows, all subscribers.
    pub inbox: i64,
    /// Effects per subscriber.
    pub effects: BTreeMap<String, i64>,
}

/// The committed counts of `store`.
pub fn counts(store: &Store) -> Result<Counts> {
    let mut effects = BTreeMap::new();
    for sub in SUBSCRIBERS {
        effects.insert(
            sub.to_string(),
            scalar(
                store,
                CONSUMER,
                "SELECT count(*) FROM effects WHERE consumer_id = ?1",
                &[sub.into()],
            )?,
        );
    }
    Ok(Counts {
        orders: scalar(store, PRODUCER, "SELECT count(*) FROM orders", &[])?,
        outbox: scalar(store, PRODUCER, "SELECT count(*) FROM outbox", &[])?,
        pending: scalar(
            store,
            PRODUCER,
            "SELECT count(*) FROM outbox WHERE sent = 0",
            &[],
        )?,
        inbox: scalar(store, CONSUMER, "SELECT count(*) FROM inbox", &[])?,
        effects,
    })
}

/// What one operation did when run alone.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Done {
    /// How it ended.
    pub outcome: Outcome,
    /// Each step it took.
    pub steps: Vec<StepReport>,
    /// The counts after it.
    pub counts: Counts,
}

fn done(store: &Store, (outcome, steps): (Outcome, Vec<StepReport>)) -> Result<Done> {
    Ok(Done {
        outcome,
        steps,
        counts: counts(store)?,
    })
}

/// Creates an order and its event, alone.
pub fn create_order_alone(store: &Store, event: Event) -> Result<Done> {
    let mut attempt = CreateOrder::new("producer", event, false);
    done(store, crate::sim::run_alone(store, &mut attempt, 0)?)
}

/// Delivers `event` to `subscriber` through its inbox, alone.
pub fn deliver_alone(store: &Store, subscriber: &str, event: Event) -> Result<Done> {
    let mut attempt = Consume::new("consumer", subscriber, event, false);
    done(store, crate::sim::run_alone(store, &mut attempt, 0)?)
}

/// Runs a relay until nothing is unsent, alone.
pub fn relay_alone(store: &Store) -> Result<Done> {
    let mut attempt = Relay::new("relay", &SUBSCRIBERS, Consumer::Inbox);
    done(store, crate::sim::run_alone(store, &mut attempt, 0)?)
}
