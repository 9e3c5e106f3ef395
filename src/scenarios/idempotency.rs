//! The idempotency scenarios: the five checks of the reference program
//! (`idempotency-scope.py`) with its exact counts, the designs that fail,
//! and the response profiles side by side.
//!
//! The reference checks build on each other, as the reference's one database
//! does: each scenario's setup runs the requests of the earlier ones in
//! order, so its counts are the reference's cumulative counts.

use super::params::{Default, Param};
use super::shared;
use super::{Entry, Params};
use crate::patterns::idempotency::{
    self, counts_text, result_json, Design, Execute, Fault, Profile, Request, ERROR_RESULT,
};
use crate::sim::{Attempt, Check, Ended, Scenario, Schedule, Status};
use crate::storage::Store;
use crate::{Error, Result};

/// Which scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Race,
    Scope,
    Failure,
    LostReply,
    Retention,
    CheckThenWrite,
    Deferred,
    DeferredRetry,
    NoFingerprint,
    ReceiptLater,
    Profiles,
    InFlight,
}

/// A catalog entry and the scenario it builds.
struct Spec {
    kind: Kind,
    entry: Entry,
}

/// Where the process of `idem-receipt-later` dies.
const CRASH_POINT: Param = Param::choice(
    "crashPoint",
    &["before-receipt", "none"],
    "before-receipt",
    "where the process dies: between the effect's commit and the receipt's, or not at all",
);

/// The response profile, the IETF draft's by default.
const IETF_PROFILE: Param = shared::PROFILE.default_to(Default::Text("ietf"));

const SPECS: &[Spec] = &[
    Spec {
        kind: Kind::Race,
        entry: Entry {
            id: "idem-race",
            pattern: "idempotency",
            suite: "idempotency",
            title: "1. Concurrent requests, one key",
            explanation: "Several clients (eight unless you change attempts) send the same request with the same idempotency key at once, each on its own \
                connection. Each checks for a receipt and writes the effect and the receipt in one BEGIN IMMEDIATE \
                transaction, so SQLite lets one writer in at a time: one request creates the effect and every other one \
                replays its result, identical to the byte. The explorer proves it for every interleaving, not just one.",
            fails: false,
            params: &[shared::ATTEMPTS, shared::TENANT, shared::KEY, shared::QUANTITY],
            reference: true,
        },
    },
    Spec {
        kind: Kind::Scope,
        entry: Entry {
            id: "idem-scope",
            pattern: "idempotency",
            suite: "idempotency",
            title: "2. Changed parameters conflict; scope separates",
            explanation: "The same key with another quantity is a conflict, not a replay: the stored fingerprint no longer \
                matches, and nothing is written. The same key from another tenant, for another operation, or another \
                key each create their own effect: a key's scope is (tenant, operation, key).",
            fails: false,
            params: &[shared::CONFLICTING_QUANTITY],
            reference: true,
        },
    },
    Spec {
        kind: Kind::Failure,
        entry: Entry {
            id: "idem-failure",
            pattern: "idempotency",
            suite: "idempotency",
            title: "3. A failure rolls back effect and receipt together",
            explanation: "The handler fails after inserting the effect and before inserting the receipt. Both were in one \
                transaction, so both vanish: no effect without its receipt. The client's retry then creates exactly one \
                effect.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::LostReply,
        entry: Entry {
            id: "idem-lost-reply",
            pattern: "idempotency",
            suite: "idempotency",
            title: "4. The reply is lost after the commit",
            explanation: "The request commits, then its reply is lost: the client cannot tell a lost request from a lost \
                reply, so it retries. The retry, on a fresh connection, finds the receipt and replays the committed \
                result instead of creating a second effect.",
            fails: false,
            params: &[],
            reference: true,
        },
    },
    Spec {
        kind: Kind::Retention,
        entry: Entry {
            id: "idem-retention",
            pattern: "idempotency",
            suite: "idempotency",
            title: "5. Retention on a virtual clock",
            explanation: "Receipts are kept for 60 seconds. At t = 59 the original key still replays the first result; at \
                t = 60, the explicit boundary, the same key creates a new effect with a new id. Move the clock to see \
                where deduplication ends: it lasts exactly as long as its receipt.",
            fails: false,
            params: &[shared::CLOCK.with_marks(&[0, 30, 58, 59, 60, 61, 90, 120])],
            reference: true,
        },
    },
    Spec {
        kind: Kind::CheckThenWrite,
        entry: Entry {
            id: "idem-check-then-write",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Broken: check in one transaction, write in another",
            explanation: "Each request checks for a receipt in one transaction and writes in a second one. Between the two, \
                the other request can check too: both find no receipt and both create an effect. The explorer finds the \
                interleaving: two effects for one key.",
            fails: true,
            params: &[],
            reference: false,
        },
    },
    Spec {
        kind: Kind::Deferred,
        entry: Entry {
            id: "idem-deferred",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Broken: a deferred BEGIN",
            explanation: "A deferred BEGIN takes no lock until the first read, so both requests read under SHARED. Then each \
                must upgrade to write; SQLite refuses both (SQLITE_BUSY) and neither can wait its way out: the \
                lock-upgrade deadlock. A busy timeout would only make both wait until it expires.",
            fails: true,
            params: &[],
            reference: false,
        },
    },
    Spec {
        kind: Kind::DeferredRetry,
        entry: Entry {
            id: "idem-deferred-retry",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Fixed: a deferred BEGIN with the right retry policy",
            explanation: "The same deferred BEGIN, but a BUSY on the upgrade rolls the whole transaction back, backs off \
                until the other writer is done, and retries from BEGIN. Retrying the failed statement alone would keep \
                the SHARED lock and deadlock again. Every interleaving ends with one effect.",
            fails: false,
            params: &[],
            reference: false,
        },
    },
    Spec {
        kind: Kind::NoFingerprint,
        entry: Entry {
            id: "idem-no-fingerprint",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Broken: no fingerprint",
            explanation: "The receipt stores no fingerprint of the parameters, so a request that reuses the key with another \
                quantity silently gets the old result: the client believes it ordered 3 and was charged for 2.",
            fails: true,
            params: &[shared::CONFLICTING_QUANTITY],
            reference: false,
        },
    },
    Spec {
        kind: Kind::ReceiptLater,
        entry: Entry {
            id: "idem-receipt-later",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Broken: the receipt in a second transaction",
            explanation: "The effect commits in one transaction and the receipt in a second. The process dies between them \
                (a real kill: its locks vanish, it writes nothing more). The retry finds no receipt and applies the effect \
                a second time. Set the crash point to none and the same design passes: the window is the bug.",
            fails: true,
            params: &[CRASH_POINT],
            reference: false,
        },
    },
    Spec {
        kind: Kind::Profiles,
        entry: Entry {
            id: "idem-profiles",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Response semantics: IETF draft, Stripe, AWS Powertools",
            explanation: "A request fails in its handler, the client retries, reuses the key with another quantity, and \
                finally sends a request without a key. The IETF Idempotency-Key draft refuses a missing key (400) and \
                a reused key with another payload (422); Stripe stores the first response, errors included, and replays \
                it for 24 hours; AWS Powertools deletes the record on an exception so the retry runs again, and keeps \
                records for 1 hour. Pick a profile and move the clock past its retention window.",
            fails: false,
            params: &[
                IETF_PROFILE,
                shared::CLOCK
                    .default_to(Default::Whole(30))
                    .with_marks(&[30, 3599, 3600, 86399, 86400, 100_000]),
            ],
            reference: false,
        },
    },
    Spec {
        kind: Kind::InFlight,
        entry: Entry {
            id: "idem-in-flight",
            pattern: "idempotency",
            suite: "idempotency",
            title: "Response semantics: a request still in flight (409)",
            explanation: "Most services do not hold a database lock while their handler runs (a payment call can take \
                seconds): they commit an in-progress record first, run the handler, then apply the effect and complete \
                the record. A second request with the same key arriving meanwhile finds it in flight: 409 Conflict in \
                the IETF draft, idempotency_key_in_use at Stripe, IdempotencyAlreadyInProgressError in AWS Powertools. \
                Still exactly one effect, under every interleaving.",
            fails: false,
            params: &[IETF_PROFILE],
            reference: false,
        },
    },
];

/// The catalog entries of this module.
pub fn entries() -> Vec<Entry> {
    SPECS.iter().map(|s| s.entry.clone()).collect()
}

/// Parameters with defaults filled in and validated.
#[derive(Debug, Clone)]
struct Resolved {
    attempts: usize,
    tenant: String,
    key: String,
    quantity: i64,
    clock: i64,
    profile: Profile,
    crash: bool,
}

impl Resolved {
    fn new(params: &Params) -> Result<Self> {
        let resolved = Resolved {
            attempts: params.whole_of(&shared::ATTEMPTS)? as usize,
            tenant: params.text_of(&shared::TENANT)?,
            key: params.text_of(&shared::KEY)?,
            quantity: params.whole_of(&shared::QUANTITY)?,
            clock: params.whole_of(&shared::CLOCK)?,
            profile: Profile::parse(&params.text_of(&shared::PROFILE)?)?,
            crash: params.text_of(&CRASH_POINT)? == "before-receipt",
        };
        // The request checks every field a caller may set.
        Request {
            tenant: resolved.tenant.clone(),
            operation: "web-order".to_string(),
            key: resolved.key.clone(),
            quantity: resolved.quantity,
            now: resolved.clock,
        }
        .validate()?;
        Ok(resolved)
    }
}

/// One idempotency scenario.
pub struct IdemScenario {
    id: &'static str,
    kind: Kind,
    given: Params,
    params: Resolved,
}

/// Builds the scenario `id` with `params`.
pub fn build(id: &str, params: &Params) -> Result<Box<dyn Scenario>> {
    let spec = SPECS
        .iter()
        .find(|s| s.entry.id == id)
        .ok_or_else(|| Error::invalid("scenario", format!("unknown scenario {id:?}")))?;
    Ok(Box::new(IdemScenario {
        id: spec.entry.id,
        kind: spec.kind,
        params: Resolved::new(params)?,
        given: params.clone(),
    }))
}

/// The reference scenarios whose requests run, in order, before `kind`'s.
fn priors(kind: Kind) -> &'static [Kind] {
    match kind {
        Kind::Scope | Kind::NoFingerprint => &[Kind::Race],
        Kind::Failure => &[Kind::Race, Kind::Scope],
        Kind::LostReply => &[Kind::Race, Kind::Scope, Kind::Failure],
        Kind::Retention => &[Kind::Race, Kind::Scope, Kind::Failure, Kind::LostReply],
        _ => &[],
    }
}

fn letter(i: usize) -> String {
    Schedule::letter(i).to_string()
}

fn boxed(attempt: Execute) -> Box<dyn Attempt> {
    Box::new(attempt)
}

impl IdemScenario {
    fn with_defaults(kind: Kind) -> Result<Self> {
        let spec = SPECS
            .iter()
            .find(|s| s.kind == kind)
            .expect("every kind has a spec");
        Ok(IdemScenario {
            id: spec.entry.id,
            kind,
            params: Resolved::new(&Params::defaults(spec.entry.params))?,
            given: Params::defaults(spec.entry.params),
        })
    }

    fn request(&self, key: &str, quantity: i64, now: i64) -> Request {
        Request {
            tenant: self.params.tenant.clone(),
            ..Request::reference(key, quantity, now)
        }
    }
}

impl Scenario for IdemScenario {
    fn id(&self) -> &str {
        self.id
    }

    fn params(&self) -> serde_json::Map<String, serde_json::Value> {
        self.given.values().clone()
    }

    fn setup(&self, store: &Store) -> Result<()> {
        idempotency::setup(store)?;
        for &prior in priors(self.kind) {
            crate::sim::run_in_order(&IdemScenario::with_defaults(prior)?, store)?;
        }
        Ok(())
    }

    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>> {
        let p = &self.params;
        let key = p.key.as_str();
        Ok(match self.kind {
            Kind::Race => (0..p.attempts)
                .map(|i| {
                    boxed(Execute::new(
                        &letter(i),
                        self.request(key, p.quantity, 0),
                        Design::Correct,
                    ))
                })
                .collect(),
            Kind::Scope => {
                let base = |tenant: &str, operation: &str, key: &str| Request {
                    tenant: tenant.to_string(),
                    operation: operation.to_string(),
                    key: key.to_string(),
                    quantity: 2,
                    now: 1,
                };
                vec![
                    boxed(Execute::new(
                        "A",
                        Request {
                            quantity: p.quantity,
                            ..base("north", "web-order", "intent-a")
                        },
                        Design::Correct,
                    )),
                    boxed(
                        Execute::new("B", base("south", "web-order", "intent-a"), Design::Correct)
                            .after(0),
                    ),
                    boxed(
                        Execute::new(
                            "C",
                            base("north", "batch-order", "intent-a"),
                            Design::Correct,
                        )
                        .after(0),
                    ),
                    boxed(
                        Execute::new("D", base("north", "web-order", "intent-b"), Design::Correct)
                            .after(0),
                    ),
                ]
            }
            Kind::Failure => vec![
                boxed(
                    Execute::new(
                        "A",
                        Request::reference("rolled-back", 1, 2),
                        Design::Correct,
                    )
                    .with_fault(Fault::FailAfterEffect),
                ),
                boxed(
                    Execute::new(
                        "B",
                        Request::reference("rolled-back", 1, 2),
                        Design::Correct,
                    )
                    .after(0),
                ),
            ],
            Kind::LostReply => vec![
                boxed(
                    Execute::new(
                        "A",
                        Request::reference("committed-no-reply", 1, 3),
                        Design::Correct,
                    )
                    .with_fault(Fault::LoseReply),
                ),
                boxed(
                    Execute::new(
                        "B",
                        Request::reference("committed-no-reply", 1, 3),
                        Design::Correct,
                    )
                    .after(0),
                ),
            ],
            Kind::Retention => vec![
                boxed(Execute::new(
                    "A",
                    Request::reference("intent-a", 2, 59),
                    Design::Correct,
                )),
                boxed(
                    Execute::new(
                        "B",
                        Request::reference("intent-a", 2, p.clock),
                        Design::Correct,
                    )
                    .after(0),
                ),
            ],
            Kind::CheckThenWrite | Kind::Deferred | Kind::DeferredRetry => {
                let design = match self.kind {
                    Kind::CheckThenWrite => Design::CheckThenWrite,
                    Kind::Deferred => Design::DeferredBegin,
                    _ => Design::DeferredBeginRetry,
                };
                (0..2)
                    .map(|i| {
                        boxed(Execute::new(
                            &letter(i),
                            Request::reference("intent-a", 2, 0),
                            design,
                        ))
                    })
                    .collect()
            }
            Kind::NoFingerprint => vec![boxed(Execute::new(
                "A",
                Request::reference("intent-a", p.quantity, 1),
                Design::NoFingerprint,
            ))],
            Kind::ReceiptLater => {
                let fault = if p.crash {
                    Fault::CrashBeforeReceipt
                } else {
                    Fault::None
                };
                vec![
                    boxed(
                        Execute::new(
                            "A",
                            Request::reference("intent-a", 2, 0),
                            Design::ReceiptLater,
                        )
                        .with_fault(fault),
                    ),
                    boxed(
                        Execute::new(
                            "B",
                            Request::reference("intent-a", 2, 0),
                            Design::ReceiptLater,
                        )
                        .after(0),
                    ),
                ]
            }
            Kind::InFlight => (0..2)
                .map(|i| {
                    boxed(
                        Execute::new(
                            &letter(i),
                            Request::reference("pay-2", 2, 0),
                            Design::InProgressRecord,
                        )
                        .with_profile(p.profile),
                    )
                })
                .collect(),
            Kind::Profiles => {
                let profile = p.profile;
                vec![
                    boxed(
                        Execute::new("A", Request::reference("pay-1", 2, 0), Design::Correct)
                            .with_fault(Fault::FailAfterEffect)
                            .with_profile(profile),
                    ),
                    boxed(
                        Execute::new(
                            "B",
                            Request::reference("pay-1", 2, p.clock),
                            Design::Correct,
                        )
                        .with_profile(profile)
                        .after(0),
                    ),
                    boxed(
                        Execute::new(
                            "C",
                            Request::reference("pay-1", 3, p.clock),
                            Design::Correct,
                        )
                        .with_profile(profile)
                        .after(1),
                    ),
                    boxed(
                        Execute::new("D", Request::reference("", 2, p.clock), Design::Correct)
                            .with_profile(profile)
                            .after(2),
                    ),
                ]
            }
        })
    }

    fn databases(&self) -> Vec<&'static str> {
        vec![idempotency::DB]
    }

    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>> {
        let counts = counts_text(ended.committed)?;
        let counts_when = |i: usize| -> Result<String> {
            match ended.store_at_end_of(i)? {
                Some(store) => counts_text(&store),
                None => Ok("never".to_string()),
            }
        };
        let p = &self.params;
        Ok(match self.kind {
            Kind::Race => {
                let of_kind =
                    |kind: &str| (0..p.attempts).filter(|&i| ended.kind(i) == kind).count();
                let results: Vec<Option<&str>> = (0..p.attempts).map(|i| ended.result(i)).collect();
                let identical = results.iter().all(|r| r.is_some() && *r == results[0]);
                vec![
                    Check::equal("created", 1, of_kind("created")),
                    Check::equal("replay", p.attempts - 1, of_kind("replay")),
                    Check::equal(
                        &format!("all {} results identical", p.attempts),
                        true,
                        identical,
                    ),
                    Check::equal("(effects, receipts)", "(1, 1)", counts),
                ]
            }
            Kind::Scope => {
                let conflict = if p.quantity == 2 {
                    "replay"
                } else {
                    "conflict"
                };
                vec![
                    Check::equal(
                        &format!("A: intent-a again with quantity {}", p.quantity),
                        conflict,
                        ended.kind(0),
                    ),
                    Check::equal("(effects, receipts) after A", "(1, 1)", counts_when(0)?),
                    Check::equal("B: tenant south", "created", ended.kind(1)),
                    Check::equal("C: operation batch-order", "created", ended.kind(2)),
                    Check::equal("D: key intent-b", "created", ended.kind(3)),
                    Check::equal("(effects, receipts)", "(4, 4)", counts),
                ]
            }
            Kind::Failure => vec![
                Check::equal("A: failure after the effect insert", "error", ended.kind(0)),
                Check::equal(
                    "(effects, receipts) after the rollback",
                    "(4, 4)",
                    counts_when(0)?,
                ),
                Check::equal("B: the retry", "created", ended.kind(1)),
                Check::equal("(effects, receipts)", "(5, 5)", counts),
            ],
            Kind::LostReply => vec![
                Check::equal("A: committed, reply lost", "reply-lost", ended.kind(0)),
                Check::equal(
                    "B: the retry on a fresh connection",
                    "replay",
                    ended.kind(1),
                ),
                Check::equal(
                    "B replays A's committed result",
                    ended.result(0).unwrap_or("none"),
                    ended.result(1).unwrap_or("none"),
                ),
                Check::equal("(effects, receipts)", "(6, 6)", counts),
            ],
            Kind::Retention => {
                let original = result_json(1, 2);
                // The first receipt was written at t=0 and expires at t=60.
                let expired = p.clock >= idempotency::REFERENCE_RETENTION;
                let mut checks = vec![
                    Check::equal("A at t=59: replay", "replay", ended.kind(0)),
                    Check::equal(
                        "A replays the original result",
                        &original,
                        ended.result(0).unwrap_or("none"),
                    ),
                ];
                if expired {
                    checks.push(Check::equal(
                        &format!("B at t={}: created", p.clock),
                        "created",
                        ended.kind(1),
                    ));
                    checks.push(Check::equal(
                        "B's effect is new",
                        true,
                        ended.result(1).is_some_and(|r| r != original),
                    ));
                    checks.push(Check::equal("(effects, receipts)", "(7, 6)", counts));
                } else {
                    checks.push(Check::equal(
                        &format!("B at t={}: replay", p.clock),
                        "replay",
                        ended.kind(1),
                    ));
                    checks.push(Check::equal("(effects, receipts)", "(6, 6)", counts));
                }
                checks
            }
            Kind::CheckThenWrite | Kind::Deferred | Kind::DeferredRetry => {
                let of_kind = |kind: &str| (0..2).filter(|&i| ended.kind(i) == kind).count();
                vec![
                    Check::equal("created", 1, of_kind("created")),
                    Check::equal("replay", 1, of_kind("replay")),
                    Check::equal("(effects, receipts)", "(1, 1)", counts),
                ]
            }
            Kind::NoFingerprint => vec![
                Check::equal(
                    &format!("A: intent-a again with quantity {}", p.quantity),
                    if p.quantity == 2 {
                        "replay"
                    } else {
                        "conflict"
                    },
                    ended.kind(0),
                ),
                Check::equal(
                    &format!("A's answer is for quantity {}", p.quantity),
                    true,
                    ended
                        .result(0)
                        .is_some_and(|r| r.contains(&format!("\"quantity\":{}", p.quantity))),
                ),
            ],
            Kind::ReceiptLater => vec![
                Check::equal("B: the retry", "replay", ended.kind(1)),
                Check::equal("(effects, receipts)", "(1, 1)", counts),
            ],
            Kind::Profiles => profile_checks(p.profile, p.clock, ended, counts)?,
            Kind::InFlight => {
                let kinds = [ended.kind(0), ended.kind(1)];
                let created = kinds.iter().filter(|k| *k == "created").count();
                let others_fine = kinds
                    .iter()
                    .all(|k| matches!(k.as_str(), "created" | "replay" | "in-flight"));
                vec![
                    Check::equal("created", 1, created),
                    Check::equal("the other request: replay or in flight", true, others_fine),
                    Check::equal("(effects, receipts)", "(1, 1)", counts),
                ]
            }
        })
    }
}

/// The expected behaviour of each profile, written out by hand from the
/// published semantics (not computed by the code under test).
fn profile_checks(
    profile: Profile,
    clock: i64,
    ended: &Ended<'_>,
    counts: String,
) -> Result<Vec<Check>> {
    let within = clock < profile.retention();
    let (b, c, d, expected_counts) = match (profile, within) {
        // The failure left nothing: B creates, C conflicts with B's receipt, D has no key.
        (Profile::Ietf, _) => ("created", "conflict", "missing-key", "(1, 1)"),
        (Profile::Reference | Profile::Powertools, _) => {
            ("created", "conflict", "created", "(2, 1)")
        }
        // The stored error is replayed while it lives; C's other quantity conflicts with it.
        (Profile::Stripe, true) => ("replay", "conflict", "created", "(1, 1)"),
        // Past 24 h the stored error has expired: B runs again.
        (Profile::Stripe, false) => ("created", "conflict", "created", "(2, 1)"),
    };
    let mut checks = vec![
        Check::equal("A: the handler fails", "error", ended.kind(0)),
        Check::equal(&format!("B: retry at t={clock}"), b, ended.kind(1)),
        Check::equal(&format!("C: other quantity at t={clock}"), c, ended.kind(2)),
        Check::equal("D: no key", d, ended.kind(3)),
        Check::equal("(effects, receipts)", expected_counts, counts),
    ];
    if profile == Profile::Stripe && within {
        checks.push(Check::equal(
            "B replays the stored error",
            ERROR_RESULT,
            ended.result(1).unwrap_or("none"),
        ));
    }
    Ok(checks)
}

/// The status of every attempt as "A created, B replay, ...".
pub fn summary(statuses: &[Status]) -> String {
    statuses
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Status::Finished { outcome } => format!("{} {}", letter(i), outcome.kind),
            other => format!("{} {other:?}", letter(i)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
