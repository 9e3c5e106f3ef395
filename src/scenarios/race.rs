//! Requests racing with one idempotency key: the reference's eight independent
//! connections released together, and the designs that fail under a race.

use super::Entry;
use crate::patterns::idempotency::{self, Design, Execute, Request};
use crate::sim::{Attempt, Check, Scenario, Schedule, Status};
use crate::storage::Store;
use crate::Result;

/// N requests with the same key and parameters, released together.
pub struct Race {
    id: &'static str,
    attempts: usize,
    design: Design,
}

const ENTRIES: [(&str, usize, Design, &str, &str); 5] = [
    (
        "idempotency-race",
        8,
        Design::Correct,
        "Eight requests, one key",
        "Eight clients send the same request with the same idempotency key at once, each on its own \
         connection. Each checks for a receipt and writes the effect and the receipt in one BEGIN \
         IMMEDIATE transaction, so SQLite lets one writer in at a time: one request creates the effect \
         and seven replay its result. The explorer proves it for every interleaving.",
    ),
    (
        "idempotency-race-2",
        2,
        Design::Correct,
        "Two requests, one key",
        "The correct design with two racing requests: small enough to step through by hand.",
    ),
    (
        "idempotency-race-check-then-write",
        2,
        Design::CheckThenWrite,
        "Broken: check in one transaction, write in another",
        "Each request checks for a receipt in one transaction and writes in a second one. Between the \
         two, the other request can check too: both find no receipt and both create an effect. The \
         explorer finds the interleaving: two effects for one key.",
    ),
    (
        "idempotency-race-deferred",
        2,
        Design::DeferredBegin,
        "Broken: a deferred BEGIN",
        "A deferred BEGIN takes no lock until the first read, so both requests read under SHARED. Then \
         each must upgrade to write; SQLite refuses both (SQLITE_BUSY) and neither can wait its way \
         out: the lock-upgrade deadlock.",
    ),
    (
        "idempotency-race-deferred-retry",
        2,
        Design::DeferredBeginRetry,
        "Fixed: a deferred BEGIN with the right retry policy",
        "The same deferred BEGIN, but a BUSY on the upgrade rolls the transaction back and retries from \
         BEGIN, releasing SHARED so the other request can commit. Every interleaving ends with one \
         effect, at the cost of a retry.",
    ),
];

/// The catalog entries of this module.
pub fn entries() -> Vec<Entry> {
    ENTRIES
        .iter()
        .map(|&(id, _, design, title, explanation)| Entry {
            id,
            title,
            explanation,
            fails: matches!(design, Design::CheckThenWrite | Design::DeferredBegin),
        })
        .collect()
}

/// The scenario with this id, if it is one of this module's.
pub fn build(id: &str) -> Option<Box<dyn Scenario>> {
    ENTRIES
        .iter()
        .find(|entry| entry.0 == id)
        .map(|&(id, attempts, design, _, _)| {
            Box::new(Race {
                id,
                attempts,
                design,
            }) as Box<dyn Scenario>
        })
}

fn request() -> Request {
    Request {
        tenant: "north".to_string(),
        operation: "web-order".to_string(),
        key: "intent-a".to_string(),
        quantity: 2,
        now: 0,
    }
}

impl Scenario for Race {
    fn id(&self) -> &str {
        self.id
    }

    fn setup(&self, store: &Store) -> Result<()> {
        idempotency::setup(store)
    }

    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>> {
        Ok((0..self.attempts)
            .map(|i| {
                let label = Schedule::letter(i).to_string();
                Box::new(Execute::new(&label, request(), self.design)) as Box<dyn Attempt>
            })
            .collect())
    }

    fn databases(&self) -> Vec<&'static str> {
        vec![idempotency::DB]
    }

    fn checks(&self, committed: &Store, statuses: &[Status]) -> Result<Vec<Check>> {
        let outcome = |kind: &str| {
            statuses
                .iter()
                .filter(|s| matches!(s, Status::Finished { outcome } if outcome.kind == kind))
                .count()
        };
        let results: Vec<&Option<String>> = statuses
            .iter()
            .filter_map(|s| match s {
                Status::Finished { outcome } => Some(&outcome.result),
                _ => None,
            })
            .collect();
        let identical = results.windows(2).all(|w| w[0] == w[1]) && results.len() == statuses.len();
        let (effects, receipts) = idempotency::counts(committed)?;
        Ok(vec![
            Check::equal("created", 1, outcome("created")),
            Check::equal("replay", self.attempts - 1, outcome("replay")),
            Check::equal("all results identical", true, identical),
            Check::equal(
                "(effects, receipts)",
                "(1, 1)",
                format!("({effects}, {receipts})"),
            ),
        ])
    }
}
