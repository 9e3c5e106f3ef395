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
    /// With --all: cut the power after each step of every scenario instead
    /// (whole, and torn four ways), in both journal modes at every
    /// synchronous level, and check what SQLite documents: no level but OFF
    /// corrupts a database, and WAL at FULL or EXTRA, or rollback at EXTRA,
    /// loses no commit that returned.
    #[arg(long, requires = "all")]
    power_loss: bool,
    #[command(flatten)]
    out: Json,
}

impl Sweep {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        if self.power_loss {
            power_losses(self.out.json)
        } else if self.all {
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

/// `--all --power-loss`: the power cut after every step of every scenario.
fn power_losses(json: bool) -> Result<(), Box<dyn std::error::Error>> {
    use replayground::store::{Journal, Synchronous};
    use replayground::sweep::{documented, PowerReport};
    let reports = replayground::sweep::power_sweep_all()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    }
    let mut broken = Vec::new();
    if !json {
        println!("| journal | synchronous | scenarios | power losses | inside a statement | lost a returned commit | corrupt | SQLite documents |");
        println!("|---|---|---|---|---|---|---|---|");
    }
    for journal in [Journal::Rollback, Journal::Wal] {
        for name in Synchronous::NAMES {
            let level = Synchronous::parse(name).expect("a level's own name");
            let these: Vec<&PowerReport> = reports
                .iter()
                .filter(|r| r.journal == journal && r.synchronous == level)
                .collect();
            let sum = |f: fn(&PowerReport) -> u64| these.iter().map(|r| f(r)).sum::<u64>();
            let (losses, inside, lost, corrupt) = (
                sum(|r| r.power_losses),
                sum(|r| r.inside),
                sum(|r| r.lost_commits),
                sum(|r| r.corrupt),
            );
            let (may_lose, may_corrupt) = documented(journal, level);
            let promise = match (may_lose, may_corrupt) {
                (true, true) => "no promise",
                (true, false) => "consistent; the last commits may be lost",
                _ => "consistent and durable",
            };
            if !json {
                println!(
                    "| {} | {name} | {} | {losses} | {inside} | {lost} | {corrupt} | {promise} |",
                    journal.name(),
                    these.len()
                );
            }
            for r in these {
                if (r.lost_commits > 0 && !may_lose) || (r.corrupt > 0 && !may_corrupt) {
                    broken.push(format!(
                        "{} ({} {name}): {}",
                        r.scenario,
                        journal.name(),
                        r.examples.join("; ")
                    ));
                }
            }
        }
    }
    let total: u64 = reports.iter().map(|r| r.power_losses).sum();
    println!(
        "{total} power losses in {} scenarios, each in both journal modes at every synchronous level: {} against what SQLite documents",
        reports.len() / (2 * Synchronous::NAMES.len()),
        broken.len()
    );
    if !broken.is_empty() {
        return Err(format!(
            "a power loss did what SQLite documents it cannot: {}",
            broken.join("; ")
        )
        .into());
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
