//! The catalog's sweeps, under one name: the crash-point sweep (here: a
//! scenario whose first attempt dies after a number of its own steps,
//! `crash-after = { steps = "crashPoint" }`, and whose second restarts it,
//! run once for every point, as a table); every built-in crashed at each of
//! its steps and its power lost at each sync ([`crash`]); every built-in
//! searched by each strategy ([`soak`]).

pub(crate) mod crash;
pub(crate) mod soak;

use serde::Serialize;

use crate::sim::scheduler::RoundRobin;
use crate::sim::search::Explorer;
use crate::sim::Status;
use crate::storage::{SqlValue, Store};
use crate::{Error, Result};

/// One row of the crash-point sweep.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepRow {
    /// How many steps ran before the kill (`None`: no crash).
    pub crash_after: Option<usize>,
    /// The crash point in words.
    pub crash_point: String,
    /// What was committed where when the process died.
    pub committed: String,
    /// What the restart did.
    pub restart: String,
    /// Whether the checks passed.
    pub passed: bool,
    /// The failed checks, if any.
    pub verdict: String,
}

/// The parameter that says where the first attempt dies.
pub(crate) const CRASH_POINT: &str = "crashPoint";

/// The committed state in words: the scenario's `state` query, run on its
/// first database with the others attached under their names.
fn committed_state(id: &str, store: &Store) -> Result<String> {
    let file = super::file(id)?;
    let Some(sql) = file.queries.get("state") else {
        return Ok("(the scenario declares no state query)".into());
    };
    let names: Vec<&String> = file.databases.keys().collect();
    let conn = store.connect(&format!("{}.db", names[0]), "sweep")?;
    for other in &names[1..] {
        conn.execute(&format!("ATTACH DATABASE '{other}.db' AS \"{other}\""), &[])?;
    }
    let rows = conn.execute(sql, &[])?;
    Ok(match rows.rows.first().and_then(|r| r.first()) {
        Some(SqlValue::Text(text)) => text.clone(),
        other => format!("{other:?}"),
    })
}

/// Kills scenario `id`'s first attempt after every possible number of its
/// steps, lets the second restart, and checks the result.
pub fn crash_sweep(id: &str) -> Result<Vec<SweepRow>> {
    let entry = super::entry(id)?;
    if !entry.params.iter().any(|p| p.name == CRASH_POINT) {
        return Err(Error::invalid(
            "scenario",
            format!("{id} has no {CRASH_POINT} to sweep"),
        ));
    }
    let with_crash_point = |point: &str| {
        super::Params::parse(
            entry.id,
            entry.params,
            &serde_json::json!({ CRASH_POINT: point }),
        )
    };
    // A run without a crash gives the first attempt's steps and their names.
    let explorer = Explorer::new(super::build_resolved(&entry, with_crash_point("none")?)?)?;
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
        let explorer = Explorer::new(super::build_resolved(&entry, params)?)?;
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
                let ended_at = run
                    .store_at_end_of(0)?
                    .ok_or_else(|| Error::Run("the crashed attempt did not end".into()))?;
                committed_state(id, crate::engines::sqlite::store_of(ended_at.as_ref())?)?
            }
        };
        let restart = match result.statuses.get(1) {
            Some(Status::Finished { outcome }) => outcome.result.clone().unwrap_or_default(),
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
