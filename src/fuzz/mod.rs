//! The search checks itself: random small designs ([`design`]), each
//! explored under every configuration of the exhaustive search and compared
//! with the unreduced search.
//!
//! For each design the unreduced search (no state caching, no symmetry, no
//! partial-order reduction, one worker) is the reference: its verdict and
//! the **set** of its final states (each a state key: every file's bytes,
//! each attempt's outcome and what it ended with). Every other configuration
//! ([`configurations`]) must give the same verdict and the same set; the
//! sampled strategies (random and PCT, seeded) must end only in final
//! states of that set, and find a violation only where it found one. Every
//! failing schedule a configuration reports is replayed from a new explorer
//! (a fresh store) and must fail again. A design the unreduced search cannot
//! finish within its budget, or that the format refuses, is counted as such,
//! never compared in part.
//!
//! The first disagreement is shrunk ([`Design::smaller`]) while it still
//! disagrees, and written as a scenario file with the configuration and both
//! results in its header.

pub(crate) mod design;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::sim::scheduler::{Pct, Random};
use crate::sim::search::split::Part;
use crate::sim::search::{in_turn, Explorer, Options};
use crate::sim::Scenario;
use crate::{Error, Result};
pub(crate) use design::Design;

/// Runs, and steps, the unreduced search may take before a design is left
/// out as too large (counted, and said in the report).
pub const UNREDUCED_RUNS: u64 = 3_000;
pub const UNREDUCED_STEPS: u64 = 20_000;

/// Runs each sampled strategy takes per design.
const SAMPLED_RUNS: u64 = 20;

/// How a configuration searches.
#[derive(Debug, Clone, Copy)]
pub enum Search {
    /// One exhaustive search with these options.
    Whole(Options),
    /// Split across `workers` shards advanced in turn, sharing a cache of
    /// finished states or not.
    Split { workers: usize, share: bool },
    /// Seeded sampled runs: random picks, or PCT.
    Sampled { pct: bool },
}

/// A configuration the oracle compares: its name and how it searches.
pub type Configuration = (&'static str, Search);

/// The name of the configuration every other is compared with.
pub const UNREDUCED: &str = "no reduction";

/// Every configuration, the unreduced search first.
pub fn configurations() -> Vec<Configuration> {
    let all = Options::default();
    vec![
        (UNREDUCED, Search::Whole(Options::NONE)),
        ("default", Search::Whole(all)),
        (
            "without state caching",
            Search::Whole(Options {
                state_caching: false,
                ..all
            }),
        ),
        (
            "without symmetry",
            Search::Whole(Options {
                symmetry: false,
                ..all
            }),
        ),
        (
            "without partial-order reduction",
            Search::Whole(Options {
                partial_order: false,
                ..all
            }),
        ),
        (
            "replaying every run from the start",
            Search::Whole(Options {
                rewind: false,
                ..all
            }),
        ),
        (
            "1 worker sharing a cache",
            Search::Split {
                workers: 1,
                share: true,
            },
        ),
        (
            "2 workers sharing a cache",
            Search::Split {
                workers: 2,
                share: true,
            },
        ),
        (
            "2 workers",
            Search::Split {
                workers: 2,
                share: false,
            },
        ),
        (
            "3 workers sharing a cache",
            Search::Split {
                workers: 3,
                share: true,
            },
        ),
        (
            "3 workers",
            Search::Split {
                workers: 3,
                share: false,
            },
        ),
        ("random (seeded)", Search::Sampled { pct: false }),
        ("PCT (seeded)", Search::Sampled { pct: true }),
    ]
}

/// What a search proved of a design.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Proof {
    /// Whether some run violated the checks.
    pub violated: bool,
    /// The keys of the states runs ended in.
    pub final_states: BTreeSet<u64>,
    /// A failing schedule it reports, if any.
    pub counterexample: Option<String>,
    /// Whether some run went round for ever (a cycle, or an attempt stopped
    /// by its step bound): such a run has no final state to compare, and
    /// searches tell it in different ways.
    pub loops: bool,
}

impl Proof {
    /// In words, for a report.
    pub fn describe(&self) -> String {
        format!(
            "{}, {} final states{}",
            if self.violated { "fails" } else { "holds" },
            self.final_states.len(),
            self.counterexample
                .as_ref()
                .map_or(String::new(), |c| format!(", failing schedule {c}"))
        )
    }
}

/// How a configuration disagreed with the unreduced search.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disagreement {
    /// The configuration.
    pub configuration: &'static str,
    /// What the unreduced search proved.
    pub unreduced: String,
    /// What the configuration proved, or the error it stopped with.
    pub other: String,
}

/// What the oracle says of one design.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Every configuration agreed on the verdict and the final states.
    Agreed,
    /// The design loops: every configuration that can see a cycle agreed on
    /// the verdict; those that cannot (without state caching, partial-order
    /// reduction runs each loop to the step bound) were not run.
    AgreedLooping,
    /// The unreduced search did not finish within [`UNREDUCED_RUNS`].
    TooLarge,
    /// The format refused the file (a generator's mistake, counted).
    Refused(String),
    /// A configuration disagreed.
    Disagreed(Disagreement),
}

/// Builds the design's scenario.
type Build<'a> = &'a dyn Fn() -> Result<Box<dyn Scenario>>;

/// Explores the design under every configuration.
pub fn judge(source: &str) -> Verdict {
    judge_with(source, &configurations())
}

/// Explores the design under `configurations`, the first of which must be
/// the unreduced search.
pub(crate) fn judge_with(source: &str, configurations: &[Configuration]) -> Verdict {
    let file = match crate::scenarios::parse(source, "fuzz") {
        Ok(file) => file,
        Err(e) => return Verdict::Refused(e.to_string()),
    };
    let build = || file.build(&serde_json::Value::Null);
    if let Err(e) = build() {
        return Verdict::Refused(e.to_string());
    }
    let mut configurations = configurations.iter();
    let Some(&(_, unreduced)) = configurations.next() else {
        return Verdict::Agreed;
    };
    let reference = match prove(&build, unreduced, UNREDUCED_RUNS) {
        Ok(Some(proof)) => proof,
        Ok(None) | Err(Error::OverBudget(_)) => return Verdict::TooLarge,
        Err(e) => {
            return Verdict::Disagreed(Disagreement {
                configuration: UNREDUCED,
                unreduced: "an error".into(),
                other: e.to_string(),
            })
        }
    };
    let disagree = |configuration, other: String| {
        Verdict::Disagreed(Disagreement {
            configuration,
            unreduced: reference.describe(),
            other,
        })
    };
    if let Err(e) = replays_failing(&build, &reference) {
        return disagree(UNREDUCED, e);
    }
    let looping = reference.loops;
    for &(name, search) in configurations {
        if looping && !sees_cycles(search) {
            continue;
        }
        // A reduced search takes fewer runs; a split one may repeat some.
        let budget = UNREDUCED_RUNS * 4;
        let proof = match prove(&build, search, budget) {
            Ok(Some(proof)) => proof,
            Ok(None) => return disagree(name, format!("did not finish in {budget} runs")),
            Err(e) => return disagree(name, format!("stopped with an error: {e}")),
        };
        let same_finals = looping || proof.final_states == reference.final_states;
        let agrees = match search {
            Search::Sampled { .. } => {
                (looping || proof.loops || proof.final_states.is_subset(&reference.final_states))
                    && (!proof.violated || reference.violated)
            }
            _ => proof.violated == reference.violated && same_finals,
        };
        if !agrees {
            return disagree(name, proof.describe());
        }
        if let Err(e) = replays_failing(&build, &proof) {
            return disagree(name, e);
        }
    }
    if looping {
        Verdict::AgreedLooping
    } else {
        Verdict::Agreed
    }
}

/// Whether a configuration tells a run that goes round for ever by coming
/// back to a state: every exhaustive search but partial-order reduction
/// without state caching, which runs each loop to the step bound (as long a
/// search as the unreduced one is short).
fn sees_cycles(search: Search) -> bool {
    match search {
        Search::Whole(options) => options.state_caching || !options.partial_order,
        Search::Split { .. } | Search::Sampled { .. } => true,
    }
}

/// Replays the proof's failing schedule on a new explorer: it must fail.
fn replays_failing(build: Build<'_>, proof: &Proof) -> std::result::Result<(), String> {
    let Some(schedule) = &proof.counterexample else {
        return Ok(());
    };
    let replayed = (|| {
        let explorer = Explorer::new(build()?)?;
        explorer.replay(&explorer.parse_schedule(schedule)?, false)
    })();
    match replayed {
        Ok(run) if !run.passed => Ok(()),
        Ok(_) => Err(format!(
            "its failing schedule {schedule} passed when replayed"
        )),
        Err(e) => Err(format!(
            "its failing schedule {schedule} did not replay: {e}"
        )),
    }
}

/// What `search` proves of the design, or `None` if it did not finish in
/// `budget` runs.
fn prove(build: Build<'_>, search: Search, budget: u64) -> Result<Option<Proof>> {
    let parts = match search {
        Search::Whole(options) => split(build, options, 1, false, budget)?,
        Search::Split { workers, share } => {
            split(build, Options::default(), workers, share, budget)?
        }
        Search::Sampled { pct } => return sampled(build, pct).map(Some),
    };
    let Some(parts) = parts else {
        return Ok(None);
    };
    let mut proof = Proof {
        violated: false,
        final_states: BTreeSet::new(),
        counterexample: None,
        loops: false,
    };
    for part in &parts {
        proof.violated |= part.stats.violations > 0;
        proof.loops |= part.stats.loops();
        proof.final_states.extend(part.final_state_keys()?);
        if proof.counterexample.is_none() {
            proof.counterexample.clone_from(&part.violation);
        }
    }
    Ok(Some(proof))
}

/// The parts of a search split across `workers` (1: a search of its own,
/// with a shard only if it shares a cache), advanced a few runs each in
/// turn as threads or the page's workers would be; `None` if together they
/// took more than `budget` runs.
fn split(
    build: Build<'_>,
    options: Options,
    workers: usize,
    share: bool,
    budget: u64,
) -> Result<Option<Vec<Part>>> {
    let options = Options {
        max_runs: Some(budget),
        ..options
    };
    let too_many = |total: &crate::sim::search::Stats| {
        total.runs > budget || total.steps > budget * (UNREDUCED_STEPS / UNREDUCED_RUNS)
    };
    let explorer = || Explorer::new(build()?);
    let Some((_, parts)) = in_turn(&explorer, options, workers, share, 7, &too_many)? else {
        return Ok(None);
    };
    if parts.iter().any(|p| p.budget_spent || p.frontier.is_some()) {
        return Ok(None);
    }
    Ok(Some(parts))
}

/// Seeded sampled runs: their final states and the first that failed.
fn sampled(build: Build<'_>, pct: bool) -> Result<Proof> {
    let explorer = Explorer::new(build()?)?;
    let mut proof = Proof {
        violated: false,
        final_states: BTreeSet::new(),
        counterexample: None,
        loops: false,
    };
    for seed in 1..=SAMPLED_RUNS {
        let run = if pct {
            explorer.run(&mut Pct::new(seed, 3, 64)?, false)?
        } else {
            explorer.run(&mut Random::new(seed), false)?
        };
        proof.loops |= run.statuses.iter().any(|s| {
            matches!(
                s,
                crate::sim::Status::Failed {
                    bound: Some(crate::sim::Bound::Steps),
                    ..
                }
            )
        });
        proof.final_states.insert(run.final_state);
        if !run.passed {
            proof.violated = true;
            if proof.counterexample.is_none() {
                proof.counterexample = Some(run.schedule);
            }
        }
    }
    Ok(proof)
}

/// The seed of design `index` of a fuzzing run seeded `seed`: each design
/// is made again from the two numbers alone.
pub fn design_seed(seed: u64, index: u64) -> u64 {
    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ index.wrapping_add(1).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

/// Design `index` of a fuzzing run seeded `seed`.
pub(crate) fn design(seed: u64, index: u64) -> Design {
    Design::random(&mut fastrand::Rng::with_seed(design_seed(seed, index)))
}

/// Design `index` of a fuzzing run seeded `seed`, as a scenario file.
pub fn design_source(seed: u64, index: u64) -> String {
    design(seed, index).to_toml(&format!(
        "Design {index} of `replayground fuzz --seed {seed}`.\n"
    ))
}

/// A disagreement found, shrunk.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// Which design of the run (from 0).
    pub index: u64,
    /// The smallest design that still disagrees, as a scenario file whose
    /// header says how it was found and what disagreed.
    pub file: String,
    /// How the smallest design disagrees.
    pub disagreement: Disagreement,
    /// Designs tried while shrinking.
    pub shrink_tries: u64,
}

/// What a fuzzing run covered.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The run's seed.
    pub seed: u64,
    /// Designs generated.
    pub designs: u64,
    /// Designs compared under every configuration.
    pub compared: u64,
    /// Designs that loop, compared on their verdict under every
    /// configuration that can see a cycle (not "without state caching").
    pub looping: u64,
    /// Designs the unreduced search could not finish within its budget.
    pub too_large: u64,
    /// Designs the format refused.
    pub refused: u64,
    /// The configurations each compared design was explored under.
    pub configurations: Vec<&'static str>,
    /// The first disagreement, shrunk (the run stops there).
    pub found: Option<Found>,
}

/// Generates and judges designs `0, 1, …` of the run seeded `seed` until
/// `more(designs so far)` says no or a configuration disagrees; `progress`
/// sees the report after each design.
pub fn fuzz(
    seed: u64,
    more: &mut dyn FnMut(u64) -> bool,
    progress: &mut dyn FnMut(&Report),
) -> Report {
    let configurations = configurations();
    let mut report = Report {
        seed,
        configurations: configurations.iter().map(|(name, _)| *name).collect(),
        ..Report::default()
    };
    while more(report.designs) {
        let index = report.designs;
        let design = design(seed, index);
        report.designs += 1;
        match judge_with(&design.to_toml(""), &configurations) {
            Verdict::Agreed => report.compared += 1,
            Verdict::AgreedLooping => report.looping += 1,
            Verdict::TooLarge => report.too_large += 1,
            Verdict::Refused(_) => report.refused += 1,
            Verdict::Disagreed(disagreement) => {
                report.found = Some(shrink(seed, index, design, disagreement, &configurations));
                progress(&report);
                break;
            }
        }
        progress(&report);
    }
    report
}

/// The most designs the shrinker tries.
const SHRINK_TRIES: u64 = 2_000;

/// Shrinks `design` while it still disagrees (in any configuration: a
/// smaller design that disagrees elsewhere is as good a report).
fn shrink(
    seed: u64,
    index: u64,
    mut design: Design,
    mut disagreement: Disagreement,
    configurations: &[Configuration],
) -> Found {
    let mut tries = 0;
    'smaller: while tries < SHRINK_TRIES {
        for candidate in design.smaller() {
            tries += 1;
            if let Verdict::Disagreed(d) = judge_with(&candidate.to_toml(""), configurations) {
                design = candidate;
                disagreement = d;
                continue 'smaller;
            }
            if tries >= SHRINK_TRIES {
                break;
            }
        }
        break;
    }
    let header = format!(
        "Found by `replayground fuzz --seed {seed}`: design {index}, shrunk in {tries} tries.\n\
         Configuration \"{}\" disagrees with the unreduced search.\n\
         unreduced: {}\n\
         {}: {}\n",
        disagreement.configuration,
        disagreement.unreduced,
        disagreement.configuration,
        disagreement.other
    );
    Found {
        index,
        file: design.to_toml(&header),
        disagreement,
        shrink_tries: tries,
    }
}
