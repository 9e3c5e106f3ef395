//! The catalog: each scenario is a setup, attempts, checks and an explanation.

pub mod race;

use serde::Serialize;

use crate::sim::Scenario;
use crate::{Error, Result};

/// A catalog entry, as the page and the command line list it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The id to run it by.
    pub id: &'static str,
    /// A title.
    pub title: &'static str,
    /// What the pattern is and what the scenario proves, in a few sentences.
    pub explanation: &'static str,
    /// Whether the design is expected to fail under some schedule.
    pub fails: bool,
}

/// Every scenario the scheduler can run.
pub fn catalog() -> Vec<Entry> {
    race::entries()
}

/// Builds a scenario by id.
pub fn build(id: &str) -> Result<Box<dyn Scenario>> {
    race::build(id).ok_or_else(|| {
        let ids: Vec<&str> = catalog().iter().map(|e| e.id).collect();
        Error::invalid(
            "scenario",
            format!("unknown scenario {id:?}; known: {}", ids.join(", ")),
        )
    })
}
