//! `replayground soak`: every scenario under many random and PCT schedules.

use clap::Args;
use replayground::soak::{soak_scenario, SoakRow, CATCH_BUDGET};
use replayground::store::Journal;

use super::args::{self, Json};

// The arguments of `replayground soak`.
#[derive(Args)]
#[command(mut_arg("json", args::instead_of_a_table))]
pub(super) struct Soak {
    /// Schedules in all, split over the correct scenarios.
    #[arg(long, default_value_t = 1_000_000)]
    runs: u64,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    out: Json,
}

impl Soak {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        if self.runs == 0 {
            return Err("invalid --runs: use at least 1".into());
        }
        soak(self.runs, self.seed, self.out.json)
    }
}

/// `replayground soak`: many schedules of every scenario, on every core.
fn soak(runs: u64, seed: u64, json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let catalog = replayground::catalog::all();
    // Every scenario in both journal modes; the runs are shared out
    // among the correct designs' pairs.
    let modes = [Journal::Rollback, Journal::Wal];
    let correct = catalog.iter().filter(|e| !e.fails).count().max(1) as u64;
    let per_scenario = runs.div_ceil(correct * modes.len() as u64);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ids: Vec<(&'static str, Journal)> = catalog
        .iter()
        .flat_map(|e| modes.map(|journal| (e.id, journal)))
        .collect();
    let start = std::time::Instant::now();
    // Stores are per thread: each worker builds its own scenarios.
    let mut rows: Vec<SoakRow> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let ids = &ids;
                scope.spawn(move || {
                    ids.iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == t)
                        .map(|(_, (id, journal))| {
                            soak_scenario(id, *journal, per_scenario, seed)
                                .map_err(|e| e.to_string())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err("a soak thread panicked".to_string())])
            })
            .collect::<Result<Vec<_>, String>>()
    })?;
    rows.sort_by_key(|r| {
        ids.iter()
            .position(|(id, journal)| *id == r.scenario && *journal == r.journal)
    });
    let elapsed = start.elapsed().as_secs_f64();
    let total: u64 = rows.iter().map(|r| r.runs).sum();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "runs": total, "seconds": elapsed, "catchBudget": CATCH_BUDGET, "rows": rows,
            }))?
        );
    } else {
        println!("| scenario | journal | design | runs | violations | verdict |");
        println!("|---|---|---|---|---|---|");
        for r in &rows {
            let design = if r.expected_to_fail {
                "broken"
            } else {
                "correct"
            };
            let verdict = match (r.expected_to_fail, r.ok) {
                (false, true) => "no violation".to_string(),
                (false, false) => format!(
                    "VIOLATED by {}",
                    r.first_failing_schedule.as_deref().unwrap_or("?")
                ),
                (true, true) => format!(
                    "caught at run {} ({})",
                    r.caught_at.unwrap_or(0),
                    r.first_failing_schedule.as_deref().unwrap_or("")
                ),
                (true, false) => format!("NOT caught within {CATCH_BUDGET} runs"),
            };
            println!(
                "| {} | {} | {design} | {} | {} | {verdict} |",
                r.scenario,
                r.journal.name(),
                r.runs,
                r.violations
            );
        }
        println!("{total} schedules in {elapsed:.1} s on {threads} threads");
    }
    if rows.iter().all(|r| r.ok) {
        Ok(())
    } else {
        Err("the soak found a problem".into())
    }
}
