//! The outbox and inbox scenarios: the seven checks of the reference program
//! (`outbox-crash-replay.py`) with its exact counts, two relays racing, the
//! crash-point sweep, and inbox retention on a virtual clock.
//!
//! As in the reference, the checks build on one producer database and one
//! consumer database: each scenario's setup runs the attempts of the earlier
//! ones in order.

use serde::Serialize;

use super::params::{Default, Param};
use super::{Entry, Params};
use crate::patterns::outbox::{
    self, effect_count, scalar, Clock, Consume, Consumer, CreateOrder, Event, HistoryJob, Relay,
    CONSUMER, PRODUCER, SUBSCRIBERS,
};
use crate::sim::explore::Explorer;
use crate::sim::scheduler::RoundRobin;
use crate::sim::{Attempt, Check, Ended, Run, Scenario, Status};
use crate::storage::Store;
use crate::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ProducerRollback,
    RelayCrash,
    Redelivery,
    SubscriberScope,
    PayloadConflict,
    ConsumerRollback,
    LostHistory,
    TwoRelays(Consumer),
    CrashSweep(Consumer),
    Retention { remedy: bool },
}

/// A catalog entry and the scenario it builds.
struct Spec {
    kind: Kind,
    entry: Entry,
}

/// The relay's steps up to and including the audit consumer's commit: the
/// reference's crash point.
const AFTER_AUDIT_COMMIT: usize = 6;

/// Where the relay of `outbox-crash-sweep` dies: after that many of its steps.
const CRASH_POINT_INBOX: Param = Param::choice(
    "crashPoint",
    &[
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "none",
    ],
    "6",
    "how many of its steps the relay takes before it is killed (none: it is not)",
);

/// The same for the relay of `outbox-crash-sweep-no-inbox`, which has fewer steps.
const CRASH_POINT_NO_INBOX: Param = Param::choice(
    "crashPoint",
    &["0", "1", "2", "3", "4", "5", "6", "7", "8", "none"],
    "6",
    "how many of its steps the relay takes before it is killed (none: it is not)",
);

/// A duration on the retention scenarios' clock: whole ticks up to a day,
/// with the values worth trying marked.
const fn duration(name: &'static str, default: i64, meaning: &'static str) -> Param {
    Param::whole(name, (TICK, 24 * 3600), default, meaning)
        .in_steps_of(TICK, "seconds")
        .with_marks(&[300, 600, 900, 1200, 1800, 3600, 7200])
}

/// How long the inbox keeps history.
const WINDOW: Param = duration(
    "window",
    300,
    "how long the inbox keeps an event's row before the retention job prunes it",
);

/// The relay's longest redelivery delay.
const DELAY: Param = duration(
    "delay",
    900,
    "the longest a restarted relay may wait before it redelivers",
);

const SPECS: &[Spec] = &[
    Spec {
        kind: Kind::ProducerRollback,
        entry: Entry {
            id: "outbox-producer-rollback",
            pattern: "outbox",
            suite: "outbox",
            title: "1. The producer fails before its commit",
            explanation: "The order and its outbox event are written in one transaction. The producer fails before \
                committing: neither exists. There is no order without its event, and no event to deliver for an \
                order that never happened.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::RelayCrash,
        entry: Entry {
            id: "outbox-relay-crash",
            pattern: "outbox",
            suite: "outbox",
            title: "2. The relay dies after the consumer committed",
            explanation: "The relay reads the unsent event, and the audit consumer applies it and commits. Then the relay's \
                process dies (a real kill, exit 71) before it marks the event sent. The event is still pending, and \
                audit has applied it once: the producer cannot know the delivery happened.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::Redelivery,
        entry: Entry {
            id: "outbox-redelivery",
            pattern: "outbox",
            suite: "outbox",
            title: "3. Redelivery is skipped by the inbox",
            explanation: "A restarted relay delivers the pending event again. Audit's inbox holds the event id with the \
                same payload, so audit skips it; the relay then marks the event sent. At-least-once delivery plus an \
                idempotent inbox: the effect happened once.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::SubscriberScope,
        entry: Entry {
            id: "inbox-subscriber-scope",
            pattern: "inbox",
            suite: "outbox",
            title: "4. Each subscriber deduplicates for itself",
            explanation: "Search, an independent subscriber, applies the same event once and skips the repeat: the inbox \
                key is (consumer_id, event_id), so audit having it says nothing about search.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::PayloadConflict,
        entry: Entry {
            id: "inbox-payload-conflict",
            pattern: "inbox",
            suite: "outbox",
            title: "5. The same event id with another payload is rejected",
            explanation: "An event arrives with a known id but amount 999. The inbox kept the payload, so this is not a \
                duplicate but a conflict: it is rejected and audit's total stays 100.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::ConsumerRollback,
        entry: Entry {
            id: "inbox-consumer-rollback",
            pattern: "inbox",
            suite: "outbox",
            title: "6. A consumer failure rolls back inbox row and effect",
            explanation: "The consumer fails after recording the event and applying its effect, before commit: both roll \
                back together, so the inbox does not claim an effect that never happened. The retry applies it once.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::LostHistory,
        entry: Entry {
            id: "inbox-lost-history",
            pattern: "inbox",
            suite: "outbox",
            title: "7. Deduplication lasts only as long as its history",
            explanation: "Audit's inbox history for the old event is deleted, then the old event is replayed: audit applies \
                it a second time, while search, whose history is intact, still has one. The inbox is exactly as good as \
                the history it keeps.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::TwoRelays(Consumer::Inbox),
        entry: Entry {
            id: "outbox-two-relays",
            pattern: "outbox",
            suite: "outbox",
            title: "Two relays, one outbox",
            explanation: "A producer creates an order while two relay instances poll the same outbox. Both can read the same \
                unsent event and deliver it: duplicate delivery is normal. The subscribers' inboxes absorb it, under \
                every interleaving.",
            fails: false,
            params: &[],
            reference: false,
        },
    },
    Spec {
        kind: Kind::TwoRelays(Consumer::NoInbox),
        entry: Entry {
            id: "outbox-two-relays-no-inbox",
            pattern: "outbox",
            suite: "outbox",
            title: "Broken: two relays and no inbox",
            explanation: "The same two relays, but the subscribers apply every delivery: the explorer finds the interleaving \
                where both relays deliver one event and a subscriber applies it twice.",
            fails: true,
            params: &[],
            reference: false,
        },
    },
    Spec {
        kind: Kind::CrashSweep(Consumer::Inbox),
        entry: Entry {
            id: "outbox-crash-sweep",
            pattern: "outbox",
            suite: "outbox",
            title: "The relay killed at any step, then restarted",
            explanation: "Pick the crash point: the relay dies after that many of its steps (inside a subscriber's \
                transaction, between subscribers, before marking sent) and a new relay starts. Whatever was committed \
                stays, whatever was not rolls back, and the inbox makes the restart safe at every point.",
            fails: false,
            params: &[CRASH_POINT_INBOX],
            reference: false,
        },
    },
    Spec {
        kind: Kind::CrashSweep(Consumer::NoInbox),
        entry: Entry {
            id: "outbox-crash-sweep-no-inbox",
            pattern: "outbox",
            suite: "outbox",
            title: "Broken: the relay killed and restarted, no inbox",
            explanation: "The same crash and restart with subscribers that keep no inbox: at every crash point after a \
                subscriber committed, the restart applies the event to it a second time.",
            fails: true,
            params: &[CRASH_POINT_NO_INBOX],
            reference: false,
        },
    },
    Spec {
        kind: Kind::Retention { remedy: false },
        entry: Entry {
            id: "inbox-retention",
            pattern: "inbox",
            suite: "outbox",
            title: "Broken: inbox history kept 5 minutes, redelivery within 15",
            explanation: "Audit applied the event at t=0 and the relay died before marking it sent; a restarted relay may \
                redeliver any time within its maximum delay (15 minutes). A retention job prunes inbox history older than \
                the window (5 minutes, the deduplication interval of Amazon SQS FIFO queues). The explorer finds the \
                redelivery that arrives after the history was pruned: applied twice.",
            fails: true,
            params: &[WINDOW, DELAY],
            reference: false,
        },
    },
    Spec {
        kind: Kind::Retention { remedy: true },
        entry: Entry {
            id: "inbox-retention-remedy",
            pattern: "inbox",
            suite: "outbox",
            title: "Fixed: history kept longer than the longest redelivery delay",
            explanation: "The same relay and pruner, with history kept for an hour: longer than the relay's maximum \
                redelivery delay, so every redelivery still finds its inbox row, under every interleaving.",
            fails: false,
            params: &[WINDOW.default_to(Default::Whole(3600)), DELAY],
            reference: false,
        },
    },
];

/// The catalog entries of this module.
pub fn entries() -> Vec<Entry> {
    SPECS.iter().map(|s| s.entry.clone()).collect()
}

/// One outbox or inbox scenario.
pub struct OutboxScenario {
    id: &'static str,
    kind: Kind,
    given: Params,
    crash_after: Option<usize>,
    window: i64,
    delay: i64,
}

/// The tick of the retention scenarios' clock, in seconds.
pub const TICK: i64 = 300;

/// Builds scenario `id` with `params`, if it is one of this module's.
pub fn build(id: &str, params: &Params) -> Option<Result<Box<dyn Scenario>>> {
    let spec = SPECS.iter().find(|s| s.entry.id == id)?;
    Some(make(spec, params).map(|s| Box::new(s) as Box<dyn Scenario>))
}

fn make(spec: &Spec, params: &Params) -> Result<OutboxScenario> {
    let crash_after = match params.text_of(&CRASH_POINT_INBOX)?.as_str() {
        "none" => None,
        steps => Some(steps.parse::<usize>().map_err(|_| {
            Error::invalid("crashPoint", format!("{steps:?} is not a number of steps"))
        })?),
    };
    Ok(OutboxScenario {
        id: spec.entry.id,
        kind: spec.kind,
        given: params.clone(),
        crash_after,
        window: params.whole_of(&WINDOW)?,
        delay: params.whole_of(&DELAY)?,
    })
}

fn priors(kind: Kind) -> &'static [Kind] {
    use Kind::*;
    match kind {
        RelayCrash => &[ProducerRollback],
        Redelivery => &[ProducerRollback, RelayCrash],
        SubscriberScope => &[ProducerRollback, RelayCrash, Redelivery],
        PayloadConflict => &[ProducerRollback, RelayCrash, Redelivery, SubscriberScope],
        ConsumerRollback => &[
            ProducerRollback,
            RelayCrash,
            Redelivery,
            SubscriberScope,
            PayloadConflict,
        ],
        LostHistory => &[
            ProducerRollback,
            RelayCrash,
            Redelivery,
            SubscriberScope,
            PayloadConflict,
            ConsumerRollback,
        ],
        _ => &[],
    }
}

fn boxed(a: impl Attempt + 'static) -> Box<dyn Attempt> {
    Box::new(a)
}

fn first() -> Event {
    Event::for_order("001", 100)
}

fn second() -> Event {
    Event::for_order("002", 100)
}

/// Inserts an order and its unsent event directly (a committed producer).
fn seed_order(store: &Store, event: &Event) -> Result<()> {
    let conn = store.connect(PRODUCER, "seed")?;
    conn.execute(
        "INSERT INTO orders (order_id, amount) VALUES (?1, ?2)",
        &[event.order_id.as_str().into(), event.amount.into()],
    )?;
    conn.execute(
        "INSERT INTO outbox (event_id, order_id, payload) VALUES (?1, ?2, ?3)",
        &[
            event.event_id.as_str().into(),
            event.order_id.as_str().into(),
            event.payload().as_str().into(),
        ],
    )?;
    Ok(())
}

impl Scenario for OutboxScenario {
    fn id(&self) -> &str {
        self.id
    }

    fn params(&self) -> serde_json::Map<String, serde_json::Value> {
        self.given.values().clone()
    }

    fn setup(&self, store: &Store) -> Result<()> {
        outbox::setup(store)?;
        for &prior in priors(self.kind) {
            let spec = SPECS
                .iter()
                .find(|s| s.kind == prior)
                .expect("every kind has a spec");
            crate::sim::run_in_order(&make(spec, &Params::defaults(spec.entry.params))?, store)?;
        }
        match self.kind {
            Kind::CrashSweep(_) => seed_order(store, &first())?,
            Kind::Retention { .. } => {
                // Audit applied the event at t=0; the relay died before marking it sent.
                seed_order(store, &first())?;
                let conn = store.connect(CONSUMER, "seed")?;
                let e = first();
                conn.execute(
                    "INSERT INTO inbox (consumer_id, event_id, payload, received_at) VALUES ('audit', ?1, ?2, 0)",
                    &[e.event_id.as_str().into(), e.payload().as_str().into()],
                )?;
                conn.execute(
                    "INSERT INTO effects (consumer_id, event_id, amount) VALUES ('audit', ?1, ?2)",
                    &[e.event_id.as_str().into(), e.amount.into()],
                )?;
            }
            _ => {}
        }
        Ok(())
    }

    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>> {
        Ok(match self.kind {
            Kind::ProducerRollback => vec![boxed(CreateOrder::new(
                "P",
                Event::for_order("rollback", 100),
                true,
            ))],
            Kind::RelayCrash => vec![
                boxed(CreateOrder::new("P", first(), false)),
                boxed(
                    Relay::new("relay", &["audit"], Consumer::Inbox)
                        .crash_after(Some(AFTER_AUDIT_COMMIT))
                        .after(0),
                ),
            ],
            Kind::Redelivery => vec![boxed(Relay::new("relay", &["audit"], Consumer::Inbox))],
            Kind::SubscriberScope => vec![
                boxed(Consume::new("S1", "search", first(), false)),
                boxed(Consume::new("S2", "search", first(), false).after(0)),
            ],
            Kind::PayloadConflict => vec![boxed(Consume::new(
                "C",
                "audit",
                Event::for_order("001", 999),
                false,
            ))],
            Kind::ConsumerRollback => vec![
                boxed(CreateOrder::new("P", second(), false)),
                boxed(Consume::new("C1", "audit", second(), true).after(0)),
                boxed(Consume::new("C2", "audit", second(), false).after(1)),
            ],
            Kind::LostHistory => vec![
                boxed(HistoryJob::delete("D", "audit", &first().event_id, None)),
                boxed(Consume::new("C", "audit", first(), false).after(0)),
            ],
            Kind::TwoRelays(design) => vec![
                boxed(CreateOrder::new("P", first(), false)),
                boxed(Relay::new("R1", &SUBSCRIBERS, design).polling_for(&[0])),
                boxed(Relay::new("R2", &SUBSCRIBERS, design).polling_for(&[0])),
            ],
            Kind::CrashSweep(design) => vec![
                boxed(Relay::new("relay", &SUBSCRIBERS, design).crash_after(self.crash_after)),
                boxed(Relay::new("restart", &SUBSCRIBERS, design).after(0)),
            ],
            Kind::Retention { .. } => vec![
                boxed(Clock::new(TICK, self.window.max(self.delay) + TICK).deadline(self.delay, 2)),
                boxed(HistoryJob::prune("pruner", self.window)),
                boxed(Relay::new("relay", &["audit"], Consumer::Inbox)),
            ],
        })
    }

    fn databases(&self) -> Vec<&'static str> {
        vec![PRODUCER, CONSUMER]
    }

    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>> {
        let s = ended.committed;
        let orders = |store: &Store| scalar(store, PRODUCER, "SELECT count(*) FROM orders", &[]);
        let outbox_rows =
            |store: &Store| scalar(store, PRODUCER, "SELECT count(*) FROM outbox", &[]);
        let pending = |store: &Store| {
            scalar(
                store,
                PRODUCER,
                "SELECT count(*) FROM outbox WHERE sent = 0",
                &[],
            )
        };
        let e1 = first().event_id;
        let e2 = second().event_id;
        Ok(match self.kind {
            Kind::ProducerRollback => vec![
                Check::equal("P: producer failure", "failed", ended.kind(0)),
                Check::equal("orders", 0, orders(s)?),
                Check::equal("outbox", 0, outbox_rows(s)?),
            ],
            Kind::RelayCrash => vec![
                Check::equal("relay", "crashed", ended.kind(1)),
                Check::equal(
                    "relay exit code",
                    "exit 71",
                    ended.result(1).unwrap_or("none"),
                ),
                Check::equal("pending", 1, pending(s)?),
                Check::equal("audit effects", 1, effect_count(s, "audit", &e1)?),
            ],
            Kind::Redelivery => vec![
                Check::equal(
                    "redelivery to audit",
                    format!("{e1} audit skipped"),
                    ended.result(0).unwrap_or("none"),
                ),
                Check::equal("pending", 0, pending(s)?),
                Check::equal("audit effects", 1, effect_count(s, "audit", &e1)?),
            ],
            Kind::SubscriberScope => vec![
                Check::equal("S1: search, first delivery", "applied", ended.kind(0)),
                Check::equal("S2: search, repeat", "skipped", ended.kind(1)),
                Check::equal("audit effects", 1, effect_count(s, "audit", &e1)?),
                Check::equal("search effects", 1, effect_count(s, "search", &e1)?),
            ],
            Kind::PayloadConflict => vec![
                Check::equal("C: same id, amount 999", "rejected", ended.kind(0)),
                Check::equal("audit effects", 1, effect_count(s, "audit", &e1)?),
                Check::equal(
                    "audit total",
                    100,
                    scalar(
                        s,
                        CONSUMER,
                        "SELECT sum(amount) FROM effects WHERE consumer_id = 'audit'",
                        &[],
                    )?,
                ),
            ],
            Kind::ConsumerRollback => {
                let at_failure = ended
                    .store_at_end_of(1)?
                    .ok_or_else(|| Error::Store("C1 did not finish".into()))?;
                vec![
                    Check::equal("C1: failure before commit", "failed", ended.kind(1)),
                    Check::equal(
                        "inbox rows for the event after the failure",
                        0,
                        scalar(
                            &at_failure,
                            CONSUMER,
                            "SELECT count(*) FROM inbox WHERE event_id = ?1",
                            &[e2.as_str().into()],
                        )?,
                    ),
                    Check::equal(
                        "effects for the event after the failure",
                        0,
                        effect_count(&at_failure, "audit", &e2)?,
                    ),
                    Check::equal("C2: the retry", "applied", ended.kind(2)),
                    Check::equal(
                        "audit effects for the event",
                        1,
                        effect_count(s, "audit", &e2)?,
                    ),
                ]
            }
            Kind::LostHistory => vec![
                Check::equal(
                    "C: old event replayed without history",
                    "applied",
                    ended.kind(1),
                ),
                Check::equal("audit effects", 2, effect_count(s, "audit", &e1)?),
                Check::equal("search effects", 1, effect_count(s, "search", &e1)?),
            ],
            Kind::TwoRelays(_) => {
                let mut checks = vec![Check::equal("pending", 0, pending(s)?)];
                for event in [&e1] {
                    for sub in SUBSCRIBERS {
                        checks.push(Check::equal(
                            &format!("{sub} effects for {event}"),
                            1,
                            effect_count(s, sub, event)?,
                        ));
                    }
                }
                checks
            }
            Kind::CrashSweep(_) => {
                let mut checks = vec![Check::equal("pending", 0, pending(s)?)];
                for sub in SUBSCRIBERS {
                    checks.push(Check::equal(
                        &format!("{sub} effects"),
                        1,
                        effect_count(s, sub, &e1)?,
                    ));
                }
                checks
            }
            Kind::Retention { .. } => vec![
                Check::equal("audit effects", 1, effect_count(s, "audit", &e1)?),
                Check::equal("pending", 0, pending(s)?),
            ],
        })
    }
}

/// One row of the crash-point sweep.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepRow {
    /// How many relay steps ran before the kill (`None`: no crash).
    pub crash_after: Option<usize>,
    /// The crash point in words.
    pub crash_point: String,
    /// What was committed where when the relay died.
    pub committed: String,
    /// What the restarted relay did.
    pub restart: String,
    /// Whether each subscriber applied the event exactly once and it ended sent.
    pub passed: bool,
    /// The failed checks, if any.
    pub verdict: String,
}

fn committed_state(store: &Store) -> Result<String> {
    let e1 = first().event_id;
    let sent = scalar(
        store,
        PRODUCER,
        "SELECT count(*) FROM outbox WHERE sent = 1",
        &[],
    )?;
    let mut parts = vec![format!("outbox sent={sent}")];
    for sub in SUBSCRIBERS {
        let inbox = scalar(
            store,
            CONSUMER,
            "SELECT count(*) FROM inbox WHERE consumer_id = ?1 AND event_id = ?2",
            &[sub.into(), e1.as_str().into()],
        )?;
        parts.push(format!(
            "{sub} inbox={inbox} effects={}",
            effect_count(store, sub, &e1)?
        ));
    }
    Ok(parts.join(", "))
}

/// Kills the relay after every possible number of its steps, restarts it,
/// and checks the result: the crash-point sweep, as a table.
pub fn crash_sweep(design: Consumer) -> Result<Vec<SweepRow>> {
    let id = match design {
        Consumer::Inbox => "outbox-crash-sweep",
        Consumer::NoInbox => "outbox-crash-sweep-no-inbox",
    };
    let spec = SPECS.iter().find(|s| s.entry.id == id).expect("listed");
    // A run without a crash gives the relay's steps and their names.
    let with_crash_point = |point: &str| {
        Params::parse(
            spec.entry.id,
            spec.entry.params,
            &serde_json::json!({ "crashPoint": point }),
        )
    };
    let clean = with_crash_point("none")?;
    let explorer = Explorer::new(Box::new(make(spec, &clean)?))?;
    let baseline = explorer.run(&mut RoundRobin, true)?;
    let names: Vec<String> = baseline
        .trace
        .iter()
        .flatten()
        .filter(|s| s.attempt == 0)
        .map(|s| s.report.name.clone())
        .collect();
    let mut rows = Vec::new();
    for k in (0..names.len()).map(Some).chain([None]) {
        let params = with_crash_point(&k.map_or("none".to_string(), |k| k.to_string()))?;
        let explorer = Explorer::new(Box::new(make(spec, &params)?))?;
        let mut run = explorer.start(false)?;
        while let Some(&next) = run.runnable().first() {
            run.step(next)?;
        }
        let result = explorer.finish(&run, false)?;
        let crash_point = match k {
            None => "no crash".to_string(),
            Some(0) => "before its first step".to_string(),
            Some(k) => format!("after step {k} ({})", names[k - 1]),
        };
        let committed = match k {
            None => "everything".to_string(),
            Some(_) => {
                let ended_at = run_end_snapshot(&run, 0)?;
                committed_state(&ended_at)?
            }
        };
        let restart = match &result.statuses[1] {
            Status::Finished { outcome } => outcome.result.clone().unwrap_or_default(),
            other => format!("{other:?}"),
        };
        let failed: Vec<String> = result
            .failed_checks()
            .iter()
            .map(|c| format!("{}: expected {}, got {}", c.name, c.expected, c.actual))
            .collect();
        rows.push(SweepRow {
            crash_after: k,
            crash_point,
            committed,
            restart: if restart.is_empty() {
                "nothing to deliver".into()
            } else {
                restart
            },
            passed: result.passed,
            verdict: if failed.is_empty() {
                "pass".into()
            } else {
                format!("FAIL: {}", failed.join("; "))
            },
        });
    }
    Ok(rows)
}

fn run_end_snapshot(run: &Run<'_>, attempt: usize) -> Result<Store> {
    run.store_at_end_of(attempt)?
        .ok_or_else(|| Error::Store("the relay did not end".into()))
}
