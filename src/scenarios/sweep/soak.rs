//! Invariants under many schedules: every scenario whose design is correct
//! runs under seeded random and PCT schedules (alternating) and must never
//! fail a check; every broken design must be caught within a stated budget.

use serde::Serialize;

use crate::scenarios;
use crate::sim::search::strategy::{Kind, Strategy};
use crate::sim::search::Explorer;
use crate::storage::{EngineOptions, Journal};
use crate::Result;

/// Runs a broken design gets before it must have failed.
pub const CATCH_BUDGET: u64 = 1000;

/// What one scenario did under the soak.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SoakRow {
    /// The scenario.
    pub scenario: String,
    /// The journal mode it ran in.
    pub journal: Journal,
    /// Whether its design is expected to fail.
    pub expected_to_fail: bool,
    /// Runs made.
    pub runs: u64,
    /// Runs whose checks failed.
    pub violations: u64,
    /// For a broken design, the run (1-based) that first failed.
    pub caught_at: Option<u64>,
    /// The first failing schedule, if any.
    pub first_failing_schedule: Option<String>,
    /// Whether the scenario behaved as expected.
    pub ok: bool,
}

/// Runs `runs` schedules of scenario `id` in `journal` mode (alternating
/// random and PCT from `seed`); a broken design stops at its first failure
/// or at [`CATCH_BUDGET`].
pub fn soak_scenario(id: &str, journal: Journal, runs: u64, seed: u64) -> Result<SoakRow> {
    let entry = scenarios::catalog()
        .into_iter()
        .find(|e| e.id == id)
        .ok_or_else(|| crate::Error::invalid("scenario", format!("unknown scenario {id:?}")))?;
    let options = EngineOptions {
        journal,
        ..scenarios::default_options(id)?
    };
    let explorer = Explorer::new(scenarios::build_in(id, options)?)?;
    let budget = if entry.fails {
        CATCH_BUDGET.min(runs.max(1))
    } else {
        runs
    };
    let mut row = SoakRow {
        scenario: id.to_string(),
        journal,
        expected_to_fail: entry.fails,
        runs: 0,
        violations: 0,
        caught_at: None,
        first_failing_schedule: None,
        ok: false,
    };
    for i in 0..budget {
        let kind = if i % 2 == 0 { Kind::Random } else { Kind::Pct };
        let mut scheduler = Strategy {
            seed,
            ..Strategy::of(kind)
        }
        .scheduler(i / 2)?;
        let result = explorer.run(scheduler.as_mut(), false)?;
        row.runs += 1;
        if !result.passed {
            row.violations += 1;
            if row.first_failing_schedule.is_none() {
                row.first_failing_schedule = Some(result.schedule.clone());
                row.caught_at = Some(row.runs);
            }
            if entry.fails {
                break;
            }
        }
    }
    row.ok = if entry.fails {
        row.caught_at.is_some()
    } else {
        row.violations == 0
    };
    Ok(row)
}

/// Soaks every scenario of the catalog in both journal modes:
/// `runs_per_scenario` for each correct design, up to [`CATCH_BUDGET`] for
/// each broken one.
pub fn soak_all(runs_per_scenario: u64, seed: u64) -> Result<Vec<SoakRow>> {
    scenarios::catalog()
        .iter()
        .flat_map(|entry| [Journal::Rollback, Journal::Wal].map(|journal| (entry.id, journal)))
        .map(|(id, journal)| soak_scenario(id, journal, runs_per_scenario, seed))
        .collect()
}
