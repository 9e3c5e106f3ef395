//! `replayground sweep`: a crash after every step, and what survives it.

use clap::Args;

use super::args::{self, Json};

// The arguments of `replayground sweep`.
#[derive(Args)]
#[command(mut_arg("json", args::instead_of_a_table))]
pub(super) struct Sweep {
    /// Subscribers without an inbox (to see which crash points fail).
    #[arg(long)]
    no_inbox: bool,
    /// Instead: crash every attempt of every scenario after each of its
    /// steps and check what survives.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    out: Json,
}

impl Sweep {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        if self.all {
            every_scenario(self.out.json)
        } else {
            outbox_relay(self.no_inbox, self.out.json)
        }
    }
}

/// `--all`: every attempt of every scenario crashed after each of its steps.
fn every_scenario(json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let reports = replayground::sweep::sweep_all()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        println!("| scenario | journal | crash points | violations |");
        println!("|---|---|---|---|");
        for r in &reports {
            let v = if r.violations.is_empty() {
                "none".to_string()
            } else {
                r.violations.join("; ")
            };
            println!(
                "| {} | {} | {} | {v} |",
                r.scenario,
                r.journal.name(),
                r.crash_points
            );
        }
    }
    let points: u64 = reports.iter().map(|r| r.crash_points).sum();
    let bad: usize = reports.iter().map(|r| r.violations.len()).sum();
    println!(
        "{points} crash points in {} scenarios, {bad} violations (each scenario in both journal modes)",
        reports.len() / 2
    );
    if bad > 0 {
        return Err(
            "a crash lost committed data, kept uncommitted data, or broke a database".into(),
        );
    }
    Ok(())
}

/// The outbox relay killed after every possible step and restarted.
fn outbox_relay(no_inbox: bool, json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let id = if no_inbox {
        "outbox-crash-sweep-no-inbox"
    } else {
        "outbox-crash-sweep"
    };
    let rows = replayground::sweep::crash_sweep(id)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "| crash point | committed when the relay died | what the restart did | verdict |"
        );
        println!("|---|---|---|---|");
        for row in &rows {
            println!(
                "| {} | {} | {} | {} |",
                row.crash_point, row.committed, row.restart, row.verdict
            );
        }
    }
    let failing = rows.iter().filter(|r| !r.passed).count();
    if failing > 0 {
        return Err(format!("{failing} of {} crash points fail", rows.len()).into());
    }
    Ok(())
}
