//! The catalog: each scenario is a setup, attempts, checks and an explanation.

pub mod idempotency;
pub mod outbox;
pub mod params;

use serde::Serialize;
use serde_json::Value;

pub use params::{Param, Params};

use crate::sim::Scenario;
use crate::{Error, Result};

/// A catalog entry, as the page and the command line list it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The id to run it by.
    pub id: &'static str,
    /// The pattern it belongs to (`idempotency`, `outbox`, `inbox`).
    pub pattern: &'static str,
    /// The reference program it comes from (`idempotency` or `outbox`).
    pub suite: &'static str,
    /// A title.
    pub title: &'static str,
    /// What the scenario shows and what it proves, in a few sentences.
    pub explanation: &'static str,
    /// Whether the design is expected to fail under some schedule.
    pub fails: bool,
    /// The parameters it takes, each declared once.
    pub params: &'static [Param],
    /// Whether it is one of the reference program's checks.
    pub reference: bool,
}

/// The libraries of the built-in catalog: parameters, databases and
/// programs that scenario files include by name.
pub const LIBRARIES: &[(&str, &str)] = &[
    ("idempotency", include_str!("builtin/idempotency.lib.toml")),
    ("outbox", include_str!("builtin/outbox.lib.toml")),
];

/// The built-in scenarios written as files, by id.
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("idem-race", include_str!("builtin/idem-race.toml")),
    ("idem-scope", include_str!("builtin/idem-scope.toml")),
    ("idem-failure", include_str!("builtin/idem-failure.toml")),
    ("idem-lost-reply", include_str!("builtin/idem-lost-reply.toml")),
    ("idem-retention", include_str!("builtin/idem-retention.toml")),
    ("idem-check-then-write", include_str!("builtin/idem-check-then-write.toml")),
    ("idem-deferred", include_str!("builtin/idem-deferred.toml")),
    ("idem-deferred-retry", include_str!("builtin/idem-deferred-retry.toml")),
    ("idem-no-fingerprint", include_str!("builtin/idem-no-fingerprint.toml")),
    ("idem-receipt-later", include_str!("builtin/idem-receipt-later.toml")),
    ("idem-profiles", include_str!("builtin/idem-profiles.toml")),
    ("idem-in-flight", include_str!("builtin/idem-in-flight.toml")),
    ("outbox-producer-rollback", include_str!("builtin/outbox-producer-rollback.toml")),
    ("outbox-relay-crash", include_str!("builtin/outbox-relay-crash.toml")),
    ("outbox-redelivery", include_str!("builtin/outbox-redelivery.toml")),
    ("inbox-subscriber-scope", include_str!("builtin/inbox-subscriber-scope.toml")),
    ("inbox-payload-conflict", include_str!("builtin/inbox-payload-conflict.toml")),
    ("inbox-consumer-rollback", include_str!("builtin/inbox-consumer-rollback.toml")),
    ("inbox-lost-history", include_str!("builtin/inbox-lost-history.toml")),
    ("outbox-two-relays", include_str!("builtin/outbox-two-relays.toml")),
    ("outbox-two-relays-no-inbox", include_str!("builtin/outbox-two-relays-no-inbox.toml")),
    ("outbox-crash-sweep", include_str!("builtin/outbox-crash-sweep.toml")),
    ("outbox-crash-sweep-no-inbox", include_str!("builtin/outbox-crash-sweep-no-inbox.toml")),
    ("inbox-retention", include_str!("builtin/inbox-retention.toml")),
    ("inbox-retention-remedy", include_str!("builtin/inbox-retention-remedy.toml")),
];

/// The source of library `name`.
pub fn library_source(name: &str) -> Option<&'static str> {
    LIBRARIES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The source of built-in scenario `id`, if it is written as a file.
pub fn builtin_source(id: &str) -> Option<&'static str> {
    BUILTIN_FILES
        .iter()
        .find(|(n, _)| *n == id)
        .map(|(_, s)| *s)
        .or_else(|| catalog().iter().any(|e| e.id == id).then_some(""))
}

/// Every scenario the scheduler can run.
pub fn catalog() -> Vec<Entry> {
    let mut all = idempotency::entries();
    all.extend(outbox::entries());
    all
}

/// The TypeScript declarations of every scenario's parameters, generated
/// from the declarations (a test keeps the file current).
pub const PARAMS_TYPESCRIPT: &str = include_str!("../params.d.ts");

/// The catalog entry of scenario `id`, or an error listing the known ones.
pub fn entry(id: &str) -> Result<Entry> {
    catalog().into_iter().find(|e| e.id == id).ok_or_else(|| {
        let ids: Vec<&str> = catalog().iter().map(|e| e.id).collect();
        Error::invalid(
            "scenario",
            format!(
                "unknown scenario {}; known: {}",
                params::quote(id),
                ids.join(", ")
            ),
        )
    })
}

/// Builds a scenario by id with its default parameters.
pub fn build(id: &str) -> Result<Box<dyn Scenario>> {
    build_with(id, &Value::Null)
}

/// Builds a scenario by id with parameters given as JSON (an object, or
/// null for the defaults), checked against the scenario's declarations.
pub fn build_with(id: &str, given: &Value) -> Result<Box<dyn Scenario>> {
    let entry = entry(id)?;
    let params = Params::parse(entry.id, entry.params, given)?;
    build_resolved(&entry, params)
}

/// Builds a scenario from parameters already checked against its declarations.
pub fn build_resolved(entry: &Entry, params: Params) -> Result<Box<dyn Scenario>> {
    match outbox::build(entry.id, &params) {
        Some(scenario) => scenario,
        None => idempotency::build(entry.id, &params),
    }
}

/// Parameters every scenario that takes them shares; a scenario may give
/// one another default with [`Param::default_to`].
pub mod shared {
    use super::params::{Default, Param};
    use crate::patterns::idempotency::{MAX_CLOCK, MAX_KEY_CHARS, PROFILE_IDS};

    /// The most clients the race takes (the exhaustive search's reach).
    pub const MAX_RACE_ATTEMPTS: i64 = 8;
    /// How many clients race.
    pub const ATTEMPTS: Param = Param::whole(
        "attempts",
        (1, MAX_RACE_ATTEMPTS),
        8,
        "how many clients send the request at once, each on its own connection",
    );
    /// The tenant of the racing requests.
    pub const TENANT: Param = Param::text(
        "tenant",
        MAX_KEY_CHARS,
        "north",
        "the tenant the requests come from (part of the key's scope)",
    );
    /// The idempotency key.
    pub const KEY: Param = Param::text(
        "key",
        MAX_KEY_CHARS,
        "intent-a",
        "the idempotency key the client sends",
    );
    /// The quantity ordered.
    pub const QUANTITY: Param = Param::whole(
        "quantity",
        (1, crate::input::MAX_SAFE_INTEGER),
        2,
        "the quantity ordered; the receipt's fingerprint covers it",
    );
    /// The virtual clock.
    pub const CLOCK: Param = Param::whole(
        "clock",
        (0, MAX_CLOCK),
        60,
        "the virtual clock when the request arrives",
    )
    .in_steps_of(1, "seconds");
    /// The response profile.
    pub const PROFILE: Param = Param::choice(
        "profile",
        &PROFILE_IDS,
        "reference",
        "whose rules answer replays, conflicts and errors",
    );
    /// A quantity that conflicts with the reference's 2 by default.
    pub const CONFLICTING_QUANTITY: Param = QUANTITY.default_to(Default::Whole(3));
}
