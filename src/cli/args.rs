//! The arguments several subcommands take, each declared once here: a
//! subcommand flattens the struct (`#[command(flatten)]`). Where a
//! subcommand's help words an argument for itself, or gives it another
//! default, its own struct says so (`#[command(mut_arg(…))]`); the flag, its
//! type and how it is read stay these.

use clap::{Arg, Args};
use replayground::search::Explorer;
use replayground::strategy::{self, Kind as StrategyKind, Strategy};
use replayground::Scenario;
use replayground::Schedule;

use super::scenario;

/// `--json`: the output as one JSON document.
#[derive(Args)]
pub(super) struct Json {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The help of `--json` for a subcommand whose text is a table
/// (`#[command(mut_arg("json", args::instead_of_a_table))]`).
pub(super) fn instead_of_a_table(json: Arg) -> Arg {
    json.help("Print JSON instead of a table")
}

/// A scenario, by a built-in's id or a scenario file, and its parameters.
#[derive(Args)]
pub(super) struct ScenarioArgs {
    /// The scenario's id or a scenario file.
    pub scenario: String,
    #[command(flatten)]
    pub params: Params,
}

impl ScenarioArgs {
    /// What builds the scenario, as often as asked ([`scenario::builder`]).
    pub(super) fn builder(
        &self,
    ) -> Result<
        impl Fn() -> replayground::Result<Box<dyn Scenario>> + Sync,
        Box<dyn std::error::Error>,
    > {
        scenario::builder(&self.scenario, self.params.json())
    }

    /// The scenario built once, in an explorer.
    pub(super) fn explorer(&self) -> Result<Explorer, Box<dyn std::error::Error>> {
        Ok(Explorer::new(self.builder()?()?)?)
    }
}

/// `--params`: a scenario's parameters as JSON.
#[derive(Args)]
pub(super) struct Params {
    /// The scenario's parameters as JSON.
    #[arg(long)]
    params: Option<String>,
}

impl Params {
    /// The JSON given, if any.
    pub(super) fn json(&self) -> Option<&str> {
        self.params.as_deref()
    }
}

/// A run of a scenario named by its schedule.
#[derive(Args)]
pub(super) struct ScheduledArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// The schedule, as `explore` prints it (e.g. A3B2A).
    pub schedule: String,
}

impl ScheduledArgs {
    /// The scenario's explorer and the schedule read with its attempts' letters.
    pub(super) fn explorer_and_schedule(
        &self,
    ) -> Result<(Explorer, Schedule), Box<dyn std::error::Error>> {
        let explorer = self.scenario.explorer()?;
        let schedule = explorer.parse_schedule(&self.schedule)?;
        Ok((explorer, schedule))
    }
}

/// How runs are chosen: the strategy, and the settings of the random and
/// PCT ones. `B` is the budget of runs, where the subcommand takes one
/// ([`RunBudget`]; its `--runs` comes between `--seed` and `--depth`).
#[derive(Args)]
pub(super) struct StrategyArgs<B: Args + Budget = NoBudget> {
    /// How to choose runs.
    #[arg(long, value_enum, default_value_t = StrategyKind::Exhaustive)]
    pub strategy: StrategyKind,
    /// Seed of the random and PCT strategies.
    #[arg(long, default_value_t = strategy::DEFAULT_SEED)]
    pub seed: u64,
    #[command(flatten)]
    pub budget: B,
    /// PCT's bug depth.
    #[arg(long, default_value_t = strategy::DEFAULT_DEPTH)]
    pub depth: u32,
}

impl<B: Args + Budget> StrategyArgs<B> {
    /// The strategy these settings give, every other one at its default.
    pub(super) fn settings(&self) -> Strategy {
        Strategy {
            seed: self.seed,
            runs: self.budget.runs(),
            depth: self.depth,
            ..Strategy::of(self.strategy)
        }
    }
}

/// A subcommand's budget of runs, if it takes one.
pub(super) trait Budget {
    fn runs(&self) -> Option<u64>;
}

/// `--runs`: at most this many runs.
#[derive(Args)]
pub(super) struct RunBudget {
    /// Runs for sampling strategies (default 1000); run budget for exhaustive search.
    #[arg(long)]
    pub runs: Option<u64>,
}

impl Budget for RunBudget {
    fn runs(&self) -> Option<u64> {
        self.runs
    }
}

/// No budget of runs.
#[derive(Args)]
pub(super) struct NoBudget {}

impl Budget for NoBudget {
    fn runs(&self) -> Option<u64> {
        None
    }
}
