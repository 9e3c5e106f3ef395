//! The catalog: each scenario is a setup, attempts, checks and an explanation.

pub mod idempotency;
pub mod outbox;

use serde::{Deserialize, Serialize};

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
    /// The parameters it takes.
    pub params: &'static [&'static str],
    /// Whether it is one of the reference program's checks.
    pub reference: bool,
}

/// A scenario's parameters, as a caller (page, link, command line) gives them.
/// Every field is optional; a scenario rejects the ones it does not take.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// How many racing attempts.
    pub attempts: Option<u32>,
    /// The tenant.
    pub tenant: Option<String>,
    /// The idempotency key.
    pub key: Option<String>,
    /// The quantity ordered.
    pub quantity: Option<i64>,
    /// The virtual clock, in seconds.
    pub clock: Option<i64>,
    /// The response profile (`reference`, `ietf`, `stripe`, `powertools`).
    pub profile: Option<String>,
    /// Where a process dies.
    pub crash_point: Option<String>,
    /// How long inbox history is kept, in seconds.
    pub window: Option<i64>,
    /// The relay's maximum redelivery delay, in seconds.
    pub delay: Option<i64>,
}

impl Params {
    /// The names of the parameters that are set.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.attempts.is_some() {
            given.push("attempts");
        }
        if self.tenant.is_some() {
            given.push("tenant");
        }
        if self.key.is_some() {
            given.push("key");
        }
        if self.quantity.is_some() {
            given.push("quantity");
        }
        if self.clock.is_some() {
            given.push("clock");
        }
        if self.profile.is_some() {
            given.push("profile");
        }
        if self.crash_point.is_some() {
            given.push("crashPoint");
        }
        if self.window.is_some() {
            given.push("window");
        }
        if self.delay.is_some() {
            given.push("delay");
        }
        given
    }

    /// Fails if a parameter is set that `entry` does not take.
    pub fn check_for(&self, entry: &Entry) -> Result<()> {
        for name in self.given() {
            if !entry.params.contains(&name) {
                let takes = if entry.params.is_empty() {
                    "no parameters".to_string()
                } else {
                    entry.params.join(", ")
                };
                return Err(Error::invalid(
                    "params",
                    format!(
                        "scenario {} has no parameter {name:?}; it takes {takes}",
                        entry.id
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Every scenario the scheduler can run.
pub fn catalog() -> Vec<Entry> {
    let mut all = idempotency::entries();
    all.extend(outbox::entries());
    all
}

/// Builds a scenario by id with its default parameters.
pub fn build(id: &str) -> Result<Box<dyn Scenario>> {
    build_with(id, &Params::default())
}

/// Builds a scenario by id with `params`.
pub fn build_with(id: &str, params: &Params) -> Result<Box<dyn Scenario>> {
    let entry = catalog().into_iter().find(|e| e.id == id).ok_or_else(|| {
        let ids: Vec<&str> = catalog().iter().map(|e| e.id).collect();
        Error::invalid(
            "scenario",
            format!("unknown scenario {id:?}; known: {}", ids.join(", ")),
        )
    })?;
    params.check_for(&entry)?;
    match outbox::build(id, params) {
        Some(scenario) => scenario,
        None => idempotency::build(id, params),
    }
}
