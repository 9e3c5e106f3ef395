//! `replayground explore`: a scenario's interleavings searched, and any
//! counterexample reported.

use clap::Args;
use replayground::search::Explorer;
use replayground::strategy::{Kind as StrategyKind, Reduction, Strategy, Without};

use super::args::{Json, RunBudget, ScenarioArgs, StrategyArgs};
use super::progress::{search_with_progress, split_with_progress};
use super::text::{count, print_run};

// The arguments of `replayground explore`.
#[derive(Args)]
#[command(
    mut_arg("scenario", |scenario| scenario.help(
        "The scenario's id (see `replayground scenarios`) or a scenario file"
    )),
    mut_arg("params", |params| params.help(
        r#"The scenario's parameters as JSON, e.g. '{"profile":"stripe","clock":90000}'"#
    )),
)]
pub(super) struct Explore {
    #[command(flatten)]
    scenario: ScenarioArgs,
    #[command(flatten)]
    strategy: StrategyArgs<RunBudget>,
    /// Exhaustive search: at most this many preemptions per run.
    #[arg(long)]
    preemption_bound: Option<u32>,
    /// Exhaustive search without any reduction (slow; for comparison).
    #[arg(long)]
    no_reduction: bool,
    /// Exhaustive search without this reduction (repeatable; for comparison).
    #[arg(long, value_enum)]
    without: Vec<Reduction>,
    /// Exhaustive search: split it across this many threads (1 to 16;
    /// 0: one per core). Without a budget: a budget stops the
    /// search at a point that depends on each thread's speed.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=16))]
    workers: u16,
    /// Exhaustive search: print a digest of the set of final states that
    /// does not depend on the machine (their tables and outcomes), to
    /// compare with another search's, the page's included.
    #[arg(long)]
    final_digest: bool,
    #[command(flatten)]
    out: Json,
}

impl Explore {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let strategy = Strategy {
            preemption_bound: self.preemption_bound,
            without: if self.no_reduction {
                Without::everything()
            } else {
                self.without.into_iter().collect()
            },
            final_digests: self.final_digest,
            ..self.strategy.settings()
        };
        let workers = match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(16)),
            n => usize::from(n),
        };
        explore(&self.scenario, strategy, workers, self.out.json)
    }
}

fn explore(
    scenario: &ScenarioArgs,
    strategy: Strategy,
    workers: usize,
    json: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let strategy = strategy.checked()?;
    if workers > 1 && strategy.kind != StrategyKind::Exhaustive {
        return Err("invalid --workers: only the exhaustive search is split across threads".into());
    }
    if workers > 1 && strategy.runs.is_some() {
        return Err("invalid --workers: a run budget stops a split search at a point that depends on each thread's speed; use one worker with --runs".into());
    }
    let build = scenario.builder()?;
    let explorer = Explorer::new(build()?)?;
    let start = std::time::Instant::now();
    let report = if workers > 1 {
        let make = || build().and_then(Explorer::new);
        split_with_progress(make, strategy, workers)?
    } else {
        search_with_progress(&explorer, strategy)?
    };
    let elapsed = start.elapsed();
    let interrupted = report.cancelled;
    if json {
        let mut value = serde_json::to_value(&report)?;
        value["elapsedMs"] = serde_json::json!(elapsed.as_secs_f64() * 1000.0);
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        let s = &report.stats;
        println!("scenario {}  strategy {}", report.scenario, report.strategy);
        let states = if strategy.kind == StrategyKind::Exhaustive {
            format!(
                ", {}, {}",
                count(s.distinct_states, "distinct state"),
                count(s.final_states, "final state")
            )
        } else {
            String::new()
        };
        println!(
            "  {}, {}{states}, {} in {:.1} ms",
            count(s.runs, "run"),
            count(s.terminal_runs, "ending run"),
            count(s.steps, "step"),
            elapsed.as_secs_f64() * 1000.0
        );
        for (n, what) in [
            (
                s.stopped_by_steps,
                "an attempt took more than the steps an attempt may take",
            ),
            (
                s.stopped_by_instructions,
                "a statement ran more than the SQLite instructions a statement may run",
            ),
            (
                s.stopped_by_run_budget,
                "the run spent more than a whole run may (its SQLite instructions or its bytes of values)",
            ),
        ] {
            if n > 0 {
                println!("  {} stopped by a bound: {what}", count(n, "run"));
            }
        }
        if s.cycles > 0 {
            println!(
                "  {} came back to a state of {} own path: a schedule that can go round for ever, which never completes",
                count(s.cycles, "run"),
                if s.cycles == 1 { "its" } else { "their" }
            );
        }
        if let Some(digest) = &report.final_digest {
            println!("  final states' digest: {digest}");
        }
        if s.loops() {
            println!("  naive interleavings: unbounded (an attempt can loop)");
        } else {
            println!(
                "  naive interleavings: {}{} for these runs' step counts; {} as (NK)!/(K!)^N",
                if report.naive_is_upper_bound {
                    "at most "
                } else {
                    ""
                },
                report.naive_interleavings,
                report.naive_interleavings_uniform
            );
        }
        if !report.reductions.is_empty() {
            let words: Vec<String> = report.reductions.iter().map(ToString::to_string).collect();
            println!("  reductions: {}", words.join(", "));
        }
        match &report.bounded_by {
            None => println!("  complete: every schedule covered"),
            Some(reason) => println!("  bounded: {reason}"),
        }
        if let Some(f) = &report.frontier {
            println!(
                "  left: {} known branch(es), the shallowest from step {}; runs up to {} long so far",
                f.branches,
                f.shallowest + 1,
                count(s.max_depth, "step")
            );
        }
        if let Some(declaration) = &report.declaration {
            println!("  verdict: {}", declaration.verdict_as_declared);
        }
        match &report.counterexample {
            None => println!("  no violation found"),
            Some(c) => {
                let kind = if c.shortest {
                    "shortest"
                } else {
                    "shortest found; a shorter one may exist"
                };
                println!(
                    "  counterexample ({kind}, {}): {}",
                    count(c.steps as u64, "step"),
                    c.schedule
                );
                print_run(&c.run);
            }
        }
    }
    if report.counterexample.is_some() {
        return Err("a schedule violates the scenario's checks".into());
    }
    if interrupted {
        eprintln!(
            "replayground: interrupted (Ctrl-C); the lines above say what was covered. To go further, run it again with a budget (--runs N) or on every core (--workers 0)"
        );
        std::process::exit(130);
    }
    Ok(())
}
