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

use crate::sim::scheduler::RoundRobin;
use crate::sim::search::Explorer;
use crate::sim::{Run, Verdict};
use crate::storage::{seeded_tearing, Death, EngineOptions, Journal, SqlValue, Store, Synchronous};
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
    let options = EngineOptions {
        journal,
        ..scenarios::default_options(id)?
    };
    let explorer = Explorer::new(scenarios::build_in(id, options)?)?;
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
        copy.copy_files_from(crate::engines::sqlite::store_of(run.engine())?)?;
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

/// What power losses after every step of one scenario left, in one journal
/// mode at one `synchronous` level.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PowerReport {
    /// The scenario.
    pub scenario: String,
    /// The journal mode it ran in.
    pub journal: Journal,
    /// The `synchronous` level its connections ran at.
    pub synchronous: Synchronous,
    /// Power losses tried: after each step of the round-robin run, whole
    /// (every file as last synced) and torn [`TEARINGS`] ways; and inside
    /// each step, at each sync its statement makes.
    pub power_losses: u64,
    /// Of them, those inside a statement (at one of its syncs).
    pub inside: u64,
    /// Of them, those after which a commit that had returned was gone.
    pub lost_commits: u64,
    /// Of them, those after which a database failed `PRAGMA integrity_check`.
    pub corrupt: u64,
    /// What went wrong first, in a sentence or two.
    pub examples: Vec<String>,
}

/// How many torn power losses each point tries, besides the whole one:
/// each sector written since the last sync kept or lost by a fixed
/// sequence of coin flips, the same in every run.
pub const TEARINGS: u64 = 4;

/// A power loss after each step of scenario `id`'s round-robin run, whole
/// and torn: what committed data it loses, and whether every database is
/// still sound.
pub(crate) fn power_sweep_scenario(
    id: &str,
    journal: Journal,
    synchronous: Synchronous,
) -> Result<PowerReport> {
    let options = EngineOptions {
        journal,
        synchronous,
    };
    let explorer = Explorer::keeping_durability(scenarios::build_in(id, options)?)?;
    let baseline = explorer.run(&mut RoundRobin, false)?;
    let choices = explorer
        .parse_schedule(&baseline.schedule)?
        .steps()
        .to_vec();
    let mut report = PowerReport {
        scenario: id.to_string(),
        journal,
        synchronous,
        power_losses: 0,
        inside: 0,
        lost_commits: 0,
        corrupt: 0,
        examples: Vec::new(),
    };
    for k in 1..=choices.len() {
        // Between steps: after step k, whole and torn.
        for tearing in 0..=TEARINGS {
            let mut run = explorer.start(false)?;
            for &choice in &choices[..k] {
                run.step(choice)?;
            }
            let before = run.committed_tables()?;
            // The point and the tearing seed the flips.
            let mut flip = seeded_tearing((k as u64) << 8 | tearing);
            let torn: Option<&mut dyn FnMut() -> bool> = (tearing > 0).then_some(&mut flip);
            run.power_loss(&[], torn)?;
            let how = if tearing == 0 {
                format!("whole power loss after step {k}")
            } else {
                format!("torn power loss (#{tearing}) after step {k}")
            };
            judge(&mut report, &run, &before, &how)?;
        }
        // Inside step k: at each sync its statement makes.
        let syncs = {
            let mut run = explorer.start(false)?;
            for &choice in &choices[..k - 1] {
                run.step(choice)?;
            }
            crate::engines::sqlite::store_of(run.engine())?.set_io_log(true);
            run.step(choices[k - 1])?;
            let log = crate::engines::sqlite::store_of(run.engine())?.take_io_log();
            crate::engines::sqlite::store_of(run.engine())?.set_io_log(false);
            log.iter().filter(|e| e.starts_with("sync ")).count()
        };
        for at in 1..=syncs {
            let mut run = explorer.start(false)?;
            for &choice in &choices[..k - 1] {
                run.step(choice)?;
            }
            // The step never returned: what was committed before it.
            let before = run.committed_tables()?;
            let at = u32::try_from(at).unwrap_or(u32::MAX);
            if run.step_dying(choices[k - 1], at, Death::Power(Vec::new()))? {
                report.inside += 1;
                judge(
                    &mut report,
                    &run,
                    &before,
                    &format!("power loss at sync {at} of step {k}"),
                )?;
            }
        }
    }
    Ok(report)
}

/// Counts one power loss of `run` (the committed data was `before`):
/// whether a database is broken, else whether a returned commit is gone.
fn judge(report: &mut PowerReport, run: &Run<'_>, before: &Tables, how: &str) -> Result<()> {
    report.power_losses += 1;
    let copy = Store::new("after-power-loss")?;
    copy.copy_files_from(crate::engines::sqlite::store_of(run.engine())?)?;
    let mut broken = Vec::new();
    for db in run.databases() {
        if !copy.files().iter().any(|(name, _)| name == db) {
            continue;
        }
        let conn = copy.connect(db, "integrity")?;
        match conn.execute("PRAGMA integrity_check", &[]) {
            Ok(rows) if rows.rows == vec![vec![SqlValue::from("ok")]] => {}
            Ok(rows) => broken.push(format!("{db}: {:?}", rows.rows)),
            Err(e) => broken.push(format!("{db}: {e}")),
        }
    }
    if !broken.is_empty() {
        report.corrupt += 1;
        if report.examples.len() < 3 {
            report
                .examples
                .push(format!("a {how} broke {}", broken.join(", ")));
        }
        return Ok(());
    }
    if lost_something(before, &run.committed_tables()?) {
        report.lost_commits += 1;
        if report.examples.len() < 3 {
            report
                .examples
                .push(format!("a {how} lost a commit that had returned"));
        }
    }
    Ok(())
}

/// Whether `after` lacks a row `before` had, or a table: a commit that had
/// returned is gone (a row it changed counts as lost). Rows only in `after`
/// are not counted: a power loss only ever goes back in time.
fn lost_something(before: &Tables, after: &Tables) -> bool {
    before.iter().any(|(db, tables)| {
        tables.iter().any(|(name, table)| {
            let Some(now) = after.get(db).and_then(|t| t.get(name)) else {
                return true;
            };
            table.rows.iter().any(|row| !now.rows.contains(row))
        })
    })
}

/// Every database's committed tables, by name.
type Tables =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, crate::sim::Table>>;

/// The power-loss sweep of every scenario of the catalog, in both journal
/// modes at every `synchronous` level.
pub fn power_sweep_all() -> Result<Vec<PowerReport>> {
    let mut reports = Vec::new();
    for journal in [Journal::Rollback, Journal::Wal] {
        for name in Synchronous::NAMES {
            let level = Synchronous::parse(name).expect("a level's own name");
            for entry in scenarios::catalog() {
                reports.push(power_sweep_scenario(entry.id, journal, level)?);
            }
        }
    }
    Ok(reports)
}

/// What SQLite documents a power loss may do at `synchronous` level
/// `level` in `journal` mode: (whether a commit that returned may be lost,
/// whether a database may be corrupted). OFF promises nothing; NORMAL keeps
/// a database consistent but, in WAL mode, not the last commits; FULL in
/// rollback mode does not sync the directory after deleting the journal,
/// which can come back and roll the last commit back (what EXTRA adds).
pub fn documented(journal: Journal, level: Synchronous) -> (bool, bool) {
    match (journal, level) {
        (_, Synchronous::Off) => (true, true),
        (_, Synchronous::Normal) => (true, false),
        (Journal::Rollback, Synchronous::Full) => (true, false),
        (Journal::Wal, Synchronous::Full) | (_, Synchronous::Extra) => (false, false),
    }
}
