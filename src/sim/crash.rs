//! A crash at every step of every scenario: after each step, the attempt
//! that took it is killed (its process dies: locks vanish, its open
//! transaction stays behind as a hot journal), and the others go on.
//!
//! At each crash point: the committed data seen by a fresh reader is the
//! same just before and just after the kill (nothing committed is lost,
//! nothing uncommitted survives); the run still completes (no one waits
//! forever on the dead); and every database passes `PRAGMA integrity_check`
//! after recovery.

use serde::Serialize;

use super::scheduler::RoundRobin;
use super::search::Explorer;
use super::Verdict;
use crate::storage::{Journal, SqlValue, Store};
use crate::{scenarios, Result};

/// What the crash sweep of one scenario found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CrashReport {
    /// The scenario.
    pub scenario: String,
    /// The journal mode it ran in.
    pub journal: Journal,
    /// Crash points tried.
    pub crash_points: u64,
    /// What went wrong, one sentence per violation.
    pub violations: Vec<String>,
}

/// Crashes each attempt of scenario `id`, in `journal` mode, after each of
/// its steps in the round-robin run, and checks what survives.
pub(crate) fn sweep_scenario(id: &str, journal: Journal) -> Result<CrashReport> {
    let params = serde_json::json!({ crate::format::JOURNAL_PARAM: journal.name() });
    let explorer = Explorer::new(scenarios::build_with(id, &params)?)?;
    let baseline = explorer.run(&mut RoundRobin, false)?;
    let choices = explorer
        .parse_schedule(&baseline.schedule)?
        .steps()
        .to_vec();
    let mut report = CrashReport {
        scenario: id.to_string(),
        journal,
        crash_points: 0,
        violations: Vec::new(),
    };
    for k in 1..=choices.len() {
        let mut run = explorer.start(false)?;
        for &choice in &choices[..k] {
            run.step(choice)?;
        }
        let victim = choices[k - 1];
        if run.statuses()[victim].is_over() || !run.can_crash(victim) {
            continue;
        }
        report.crash_points += 1;
        let label = run.labels()[victim].clone();
        let before = run.committed_tables()?;
        run.crash(victim)?;
        let after = run.committed_tables()?;
        if before != after {
            report.violations.push(format!(
                "killing {label} after step {k} changed the committed data"
            ));
        }
        while let Some(&next) = run.runnable().first() {
            run.step(next)?;
        }
        if let Some(Verdict::Deadlock { waits }) = run.verdict() {
            report.violations.push(format!(
                "after killing {label} at step {k} the run deadlocked: {}",
                waits.join("; ")
            ));
        }
        let copy = Store::new("after-crash")?;
        copy.copy_files_from(run.store())?;
        for db in run.databases() {
            if !copy.files().iter().any(|(name, _)| name == db) {
                continue;
            }
            let conn = copy.connect(db, "integrity")?;
            let rows = conn.execute("PRAGMA integrity_check", &[])?.rows;
            if rows != vec![vec![SqlValue::from("ok")]] {
                report.violations.push(format!(
                    "after killing {label} at step {k}, {db} fails its integrity check: {rows:?}"
                ));
            }
        }
    }
    Ok(report)
}

/// The crash sweep of every scenario of the catalog, in both journal modes.
pub fn sweep_all() -> Result<Vec<CrashReport>> {
    scenarios::catalog()
        .iter()
        .flat_map(|entry| [Journal::Rollback, Journal::Wal].map(|journal| (entry.id, journal)))
        .map(|(id, journal)| sweep_scenario(id, journal))
        .collect()
}
