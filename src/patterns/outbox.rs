//! The transactional outbox and the idempotent inbox.
//!
//! The producer, the subscribers and the relay are programs of the `outbox`
//! library (`src/scenarios/builtin/outbox.lib.toml`); this module runs one
//! of them alone, as the JS session does, and reads the counts.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::sim::{Outcome, StepReport, MAX_ALONE_STEPS};
use crate::storage::{SqlValue, Store};
use crate::{Error, Result};

/// The library of the outbox and inbox scenarios.
pub const LIBRARY: &str = "outbox";
/// The producer's database.
pub const PRODUCER: &str = "producer.db";
/// The consumers' database.
pub const CONSUMER: &str = "consumer.db";

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

    /// The values the library's programs bind for this event (its payload
    /// is the library's `let`).
    fn values(&self) -> toml::Table {
        let mut with = toml::Table::new();
        with.insert("event_id".into(), self.event_id.as_str().into());
        with.insert("order_id".into(), self.order_id.as_str().into());
        with.insert("amount".into(), self.amount.into());
        with
    }
}

/// Creates both schemas in `store`.
pub fn setup(store: &Store) -> Result<()> {
    crate::format::setup_library(&crate::scenarios::CATALOG, store, LIBRARY)
}

/// A session's store: both schemas, made once (see [`super::SessionStore`]).
pub fn session(name: &str) -> Result<super::SessionStore> {
    super::SessionStore::new(name, LIBRARY)
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
        Some(other) => Err(Error::Defect(format!("{sql} returned {other:?}"))),
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

/// The committed counts of `store`: one query per database.
pub fn counts(store: &Store) -> Result<Counts> {
    let whole = |db: &str, sql: &str, params: &[SqlValue]| -> Result<Vec<i64>> {
        let conn = store.connect(db, "check")?;
        let rows = conn.execute(sql, params)?;
        let row = rows.rows.into_iter().next().unwrap_or_default();
        row.into_iter()
            .map(|v| match v {
                SqlValue::Integer(n) => Ok(n),
                other => Err(Error::Defect(format!("{sql} returned {other:?}"))),
            })
            .collect()
    };
    let producer = whole(
        PRODUCER,
        "SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM outbox), \
         (SELECT count(*) FROM outbox WHERE sent = 0)",
        &[],
    )?;
    let consumer = whole(
        CONSUMER,
        "SELECT (SELECT count(*) FROM inbox), \
         (SELECT count(*) FROM effects WHERE consumer_id = ?1), \
         (SELECT count(*) FROM effects WHERE consumer_id = ?2)",
        &[SUBSCRIBERS[0].into(), SUBSCRIBERS[1].into()],
    )?;
    let (&[orders, outbox, pending], &[inbox, first, second]) =
        (producer.as_slice(), consumer.as_slice())
    else {
        return Err(Error::Defect(format!(
            "unexpected counts {producer:?} {consumer:?}"
        )));
    };
    Ok(Counts {
        orders,
        outbox,
        pending,
        inbox,
        effects: [(SUBSCRIBERS[0], first), (SUBSCRIBERS[1], second)]
            .into_iter()
            .map(|(s, n)| (s.to_string(), n))
            .collect(),
    })
}

/// What one operation did when run alone: its outcome and its steps (the
/// counts are [`counts`]' to give: they scan tables that grow with every
/// operation, and a call should cost what its own transaction costs).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Done {
    /// How it ended.
    pub outcome: Outcome,
    /// Each step it took.
    pub steps: Vec<StepReport>,
}

fn alone(
    store: &Store,
    program: &str,
    label: &str,
    with: toml::Table,
    max_steps: usize,
) -> Result<Done> {
    let (outcome, steps) = crate::format::run_alone(
        &crate::scenarios::CATALOG,
        store,
        LIBRARY,
        program,
        label,
        with,
        0,
        max_steps,
    )?;
    Ok(Done { outcome, steps })
}

/// Creates an order and its event, alone.
pub fn create_order_alone(store: &Store, event: Event) -> Result<Done> {
    alone(
        store,
        "create-order",
        "producer",
        event.values(),
        MAX_ALONE_STEPS,
    )
}

/// Delivers `event` to `subscriber` through its inbox, alone.
pub fn deliver_alone(store: &Store, subscriber: &str, event: Event) -> Result<Done> {
    let mut with = event.values();
    with.insert("subscriber".into(), subscriber.into());
    alone(store, "deliver", "consumer", with, MAX_ALONE_STEPS)
}

/// Runs a relay until nothing is unsent, alone: as many steps as it needs
/// for every event pending when it starts.
pub fn relay_alone(store: &Store) -> Result<Done> {
    let pending = usize::try_from(counts(store)?.pending).unwrap_or(0);
    let max_steps = MAX_ALONE_STEPS.saturating_mul(pending + 1);
    alone(store, "relay", "relay", toml::Table::new(), max_steps)
}
