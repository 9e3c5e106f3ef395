//! One run: `replayground run` (or a pattern's reference checks),
//! `replayground replay` (a schedule step by step) and `replayground export`
//! (a schedule as a script that replays it on real SQLite).

use clap::Args;
use replayground::search::Explorer;
use replayground::store;
use replayground::strategy::{Kind as StrategyKind, Strategy};

use super::args::{Json, Params, ScheduledArgs, StrategyArgs};
use super::scenario;
use super::text::print_run;

// The arguments of `replayground run`.
#[derive(Args)]
#[command(
    mut_arg("params", |params| params.help(
        "The scenario's parameters as JSON (a single scenario only)"
    )),
    mut_arg("strategy", |strategy| strategy
        .help("How to choose the run's interleaving (a single scenario only)")
        .default_value("round-robin")),
)]
pub(super) struct Run {
    /// `idempotency`, `outbox`, a scenario id or a scenario file.
    target: String,
    #[command(flatten)]
    params: Params,
    #[command(flatten)]
    strategy: StrategyArgs,
    #[command(flatten)]
    out: Json,
}

impl Run {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        run_target(
            &self.target,
            &self.params,
            self.strategy.settings(),
            self.out.json,
        )
    }
}

// The arguments of `replayground replay`.
#[derive(Args)]
pub(super) struct Replay {
    #[command(flatten)]
    run: ScheduledArgs,
    #[command(flatten)]
    out: Json,
}

impl Replay {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let (explorer, schedule) = self.run.explorer_and_schedule()?;
        let result = explorer.replay(&schedule, true)?;
        if self.out.json {
            println!("{}", serde_json::to_string_pretty(&result)?);
        } else {
            print_run(&result);
        }
        if !result.passed {
            return Err("the run fails its checks".into());
        }
        Ok(())
    }
}

// The arguments of `replayground export`.
#[derive(Args)]
#[command(mut_arg("schedule", |schedule| schedule.help(
    "The schedule, as `explore` prints it (e.g. A6B3AB4)"
)))]
pub(super) struct Export {
    #[command(flatten)]
    run: ScheduledArgs,
    /// A Python script using only the standard library's sqlite3 (the default).
    #[arg(long, conflicts_with = "rust")]
    python: bool,
    /// A Rust test using rusqlite (put it in a crate's tests/ folder).
    #[arg(long)]
    rust: bool,
}

impl Export {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let (explorer, schedule) = self.run.explorer_and_schedule()?;
        let text = if self.rust {
            replayground::reproduce::rust(&explorer, &schedule)?
        } else {
            replayground::reproduce::python(&explorer, &schedule)?
        };
        print!("{text}");
        Ok(())
    }
}

/// `replayground run`: a pattern's reference checks, or one scenario.
fn run_target(
    target: &str,
    params: &Params,
    strategy: Strategy,
    json: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    use replayground::catalog;
    use replayground::search;
    use replayground::RoundRobin;
    let pattern_ids: Vec<&str> = catalog::all()
        .into_iter()
        .filter(|e| e.reference && e.suite == target)
        .map(|e| e.id)
        .collect();
    if pattern_ids.is_empty() {
        let strategy = strategy.checked()?;
        if strategy.kind == StrategyKind::Exhaustive {
            return Err(
                "run makes one run; use `replayground explore` to search every interleaving".into(),
            );
        }
        let explorer = Explorer::new(scenario::build(target, params.json())?)?;
        let result = explorer.run(strategy.scheduler(0)?.as_mut(), true)?;
        if json {
            println!("{}", serde_json::to_string_pretty(&result)?);
        } else {
            print_run(&result);
        }
        return if result.passed {
            Ok(())
        } else {
            Err("the run fails its checks".into())
        };
    }
    if params.json().is_some() {
        return Err(
            "--params applies to a single scenario, not to a pattern's reference checks".into(),
        );
    }
    if !json {
        println!("SQLite {}", store::sqlite_version());
    }
    let mut all_passed = true;
    let mut results = Vec::new();
    for id in pattern_ids {
        let entry = catalog::all()
            .into_iter()
            .find(|e| e.id == id)
            .expect("listed");
        let scenario = catalog::build(id)?;
        let explorer = Explorer::new(scenario)?;
        let report = explorer.exhaustive(search::Options::default(), 10_000, |_| true)?;
        let sample = explorer.run(&mut RoundRobin, false)?;
        let passed = report.counterexample.is_none() && report.complete && sample.passed;
        all_passed &= passed;
        if !json {
            let mark = if passed { "PASS" } else { "FAIL" };
            println!(
                "[{mark}] {}: every one of its schedules checked ({} runs, {} distinct states)",
                entry.title, report.stats.runs, report.stats.distinct_states
            );
            for check in &sample.checks {
                let mark = if check.pass { "ok" } else { "FAIL" };
                println!(
                    "       [{mark}] {}: expected {}, actual {}",
                    check.name, check.expected, check.actual
                );
            }
            if let Some(c) = &report.counterexample {
                println!("       counterexample {}:", c.schedule);
                for line in &c.explanation {
                    println!("         {line}");
                }
            }
        }
        results.push(serde_json::json!({
            "scenario": id, "title": entry.title, "passed": passed,
            "exhaustive": report, "checks": sample.checks,
        }));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else if all_passed {
        println!("PASS: every reference check holds under every schedule");
    }
    if all_passed {
        Ok(())
    } else {
        Err("a reference check failed".into())
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};
    use replayground::strategy::Kind as StrategyKind;

    /// `run` rewords `--strategy` and gives it a default of its own, by name
    /// (clap's checks do not read defaults): the name must be a strategy's.
    #[test]
    fn run_makes_a_round_robin_run_by_default() {
        let command = super::Run::augment_args(clap::Command::new("run"));
        let matches = command.try_get_matches_from(["run", "idem-race"]).unwrap();
        let run = super::Run::from_arg_matches(&matches).unwrap();
        assert!(run.strategy.strategy == StrategyKind::RoundRobin);
    }
}
