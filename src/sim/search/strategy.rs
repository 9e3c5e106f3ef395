//! How runs are chosen: one type for the command line, the JS exports, the
//! page and the soak. Front ends only parse into a [`Strategy`] (clap and
//! serde alike) and print what it reports; defaults, bounds and PCT's step
//! estimate live here and nowhere else.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::split::MAX_WORKERS;
use super::Shard;
use super::{ExploreReport, Explorer, Sampler};
use crate::sim::scheduler::{Pct, Random, RoundRobin, Scheduler};
use crate::sim::search;
use crate::{Error, Result};

/// Which way runs are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(not(target_family = "wasm"), derive(clap::ValueEnum))]
pub enum Kind {
    /// Every interleaving, depth first, with the reductions on.
    Exhaustive,
    /// One run, each attempt in turn.
    RoundRobin,
    /// Seeded uniform picks among the runnable attempts.
    Random,
    /// Probabilistic concurrency testing: random priorities, `depth - 1` changes.
    Pct,
}

impl Kind {
    /// Every kind, as named in JSON and on the command line.
    pub const ALL: [Kind; 4] = [Kind::Exhaustive, Kind::RoundRobin, Kind::Random, Kind::Pct];

    /// The kind's name.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Exhaustive => "exhaustive",
            Kind::RoundRobin => "round-robin",
            Kind::Random => "random",
            Kind::Pct => "pct",
        }
    }

    fn parse(text: &str) -> Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    "strategy",
                    format!(
                        "unknown strategy {}; use {}",
                        crate::params::quote(text),
                        Kind::ALL.map(Kind::name).join(", ")
                    ),
                )
            })
    }
}

/// A reduction of the exhaustive search, which can be turned off (to
/// compare, or to check that it changes no verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(not(target_family = "wasm"), derive(clap::ValueEnum))]
pub enum Reduction {
    /// A state already explored is not explored again.
    StateCaching,
    /// Of interchangeable attempts, one is tried.
    Symmetry,
    /// Of the orders of steps that commute, one is tried.
    PartialOrder,
}

impl Reduction {
    /// Every reduction, as named in JSON and on the command line.
    pub const ALL: [Reduction; 3] = [
        Reduction::StateCaching,
        Reduction::Symmetry,
        Reduction::PartialOrder,
    ];

    /// The reduction's name.
    pub const fn name(self) -> &'static str {
        match self {
            Reduction::StateCaching => "state-caching",
            Reduction::Symmetry => "symmetry",
            Reduction::PartialOrder => "partial-order",
        }
    }

    fn parse(text: &str) -> Result<Reduction> {
        Reduction::ALL
            .into_iter()
            .find(|r| r.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    "without",
                    format!(
                        "unknown reduction {}; use {}",
                        crate::params::quote(text),
                        Reduction::ALL.map(Reduction::name).join(", ")
                    ),
                )
            })
    }
}

/// The seed when none is given.
pub const DEFAULT_SEED: u64 = 1;
/// Sampled runs when no number is given.
pub(crate) const DEFAULT_RUNS: u64 = 1000;
/// The most runs one search may be asked for.
pub(crate) const MAX_RUNS: u64 = 10_000_000;
/// PCT's bug depth when none is given.
pub const DEFAULT_DEPTH: u32 = 3;
/// PCT's estimate of a run's length, in steps, which spreads its priority
/// change points (Burckhardt et al. take the run length k).
pub(crate) const PCT_STEP_ESTIMATE: usize = 64;

/// A strategy with its settings, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strategy {
    /// Which way.
    pub kind: Kind,
    /// The first run's seed (run `i` uses `seed + i`).
    pub seed: u64,
    /// Runs to sample, or the exhaustive search's run budget (`None`: unbounded).
    pub runs: Option<u64>,
    /// PCT's bug depth.
    pub depth: u32,
    /// Exhaustive search: at most this many preemptions per run.
    pub preemption_bound: Option<u32>,
    /// Exhaustive search: the reductions turned off (to compare).
    pub without: Without,
    /// Exhaustive search: this worker's part of a search split across
    /// several (`None`: the whole search).
    pub shard: Option<Shard>,
    /// Exhaustive search: keep a digest of the final states that does not
    /// depend on the machine ([`search::Options::final_digests`]).
    pub final_digests: bool,
}

/// The reductions a search goes without, one bit each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Without(u8);

impl Without {
    /// Every reduction on.
    pub const NOTHING: Without = Without(0);

    /// Every reduction off.
    pub fn everything() -> Without {
        Reduction::ALL.into_iter().collect()
    }

    /// Whether `reduction` is off.
    pub fn contains(self, reduction: Reduction) -> bool {
        self.0 & (1 << reduction as u8) != 0
    }

    /// The names of the reductions turned off.
    pub fn names(self) -> Vec<&'static str> {
        Reduction::ALL
            .into_iter()
            .filter(|&r| self.contains(r))
            .map(Reduction::name)
            .collect()
    }
}

impl FromIterator<Reduction> for Without {
    fn from_iter<I: IntoIterator<Item = Reduction>>(iter: I) -> Self {
        Without(iter.into_iter().fold(0, |bits, r| bits | 1 << r as u8))
    }
}

impl Strategy {
    /// A strategy of `kind` with every setting at its default.
    pub const fn of(kind: Kind) -> Strategy {
        Strategy {
            kind,
            seed: DEFAULT_SEED,
            runs: None,
            depth: DEFAULT_DEPTH,
            preemption_bound: None,
            without: Without::NOTHING,
            shard: None,
            final_digests: false,
        }
    }

    /// Checks the settings: a zero budget or an out-of-range depth is refused.
    pub fn checked(self) -> Result<Strategy> {
        if let Some(runs) = self.runs {
            if !(1..=MAX_RUNS).contains(&runs) {
                return Err(Error::invalid(
                    "runs",
                    format!("use 1 to {MAX_RUNS} (got {runs})"),
                ));
            }
        }
        if !(1..=10).contains(&self.depth) {
            return Err(Error::invalid(
                "depth",
                format!("use 1 to 10 (got {})", self.depth),
            ));
        }
        if self.seed > crate::json::MAX_SAFE_INTEGER as u64 {
            return Err(Error::invalid(
                "seed",
                format!("use 0 to 2^53 - 1 (got {})", self.seed),
            ));
        }
        Ok(self)
    }

    /// A strategy from JSON options (`strategy`, `seed`, `runs`, `depth`,
    /// `preemptionBound`, `without`: reductions' names, `shard`,
    /// `finalDigests`), `default` when
    /// `strategy` is absent. The caller has checked that no other field is
    /// present.
    pub fn from_json(options: &Map<String, Value>, default: Kind) -> Result<Strategy> {
        use crate::json::{text, whole, MAX_SAFE_INTEGER};
        let kind = match text(options, "strategy", 32)? {
            Some(name) => Kind::parse(&name)?,
            None => default,
        };
        Strategy {
            kind,
            seed: whole(options, "seed", 0, MAX_SAFE_INTEGER)?.map_or(DEFAULT_SEED, |s| s as u64),
            runs: whole(options, "runs", 1, MAX_RUNS as i64)?.map(|r| r as u64),
            depth: whole(options, "depth", 1, 10)?.map_or(DEFAULT_DEPTH, |d| d as u32),
            preemption_bound: whole(options, "preemptionBound", 0, 1000)?.map(|b| b as u32),
            without: without(options)?,
            shard: shard(options, kind)?,
            final_digests: crate::json::flag(options, "finalDigests")?.unwrap_or(false),
        }
        .checked()
    }

    /// The exhaustive search's options.
    pub fn dfs_options(&self) -> search::Options {
        search::Options {
            state_caching: !self.without.contains(Reduction::StateCaching),
            symmetry: !self.without.contains(Reduction::Symmetry),
            partial_order: !self.without.contains(Reduction::PartialOrder),
            preemption_bound: self.preemption_bound,
            max_runs: self.runs,
            shard: self.shard,
            rewind: true,
            final_digests: self.final_digests,
        }
    }

    /// The strategy in words ("PCT (seed 7, depth 3)").
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Exhaustive => "exhaustive".to_string(),
            Kind::RoundRobin => "round-robin".to_string(),
            Kind::Random => format!("random (seed {})", self.seed),
            Kind::Pct => format!("PCT (seed {}, depth {})", self.seed, self.depth),
        }
    }

    /// The scheduler of sampled run `run` (0-based): run `i` of a random or
    /// PCT search uses seed `seed + i`.
    pub fn scheduler(&self, run: u64) -> Result<Box<dyn Scheduler>> {
        let seed = self.seed.wrapping_add(run);
        Ok(match self.kind {
            Kind::RoundRobin | Kind::Exhaustive => Box::new(RoundRobin),
            Kind::Random => Box::new(Random::new(seed)),
            Kind::Pct => Box::new(Pct::new(seed, self.depth, PCT_STEP_ESTIMATE)?),
        })
    }

    /// A resumable search with this strategy.
    pub fn search(&self) -> Search {
        match self.kind {
            Kind::Exhaustive => Search::Exhaustive(Box::new(search::Dfs::new(self.dfs_options()))),
            Kind::RoundRobin | Kind::Random | Kind::Pct => {
                let planned = match self.kind {
                    Kind::RoundRobin => 1,
                    _ => self.runs.unwrap_or(DEFAULT_RUNS),
                };
                let strategy = *self;
                Search::Sample(Box::new(Sampler::new(
                    &self.describe(),
                    planned,
                    move |i| strategy.scheduler(i),
                )))
            }
        }
    }
}

/// `shard`: `{ index, count }`, this worker's part of an exhaustive search
/// split across `count` workers, or absent.
fn shard(options: &Map<String, Value>, kind: Kind) -> Result<Option<Shard>> {
    use crate::json::{object, only, whole};
    let Some(value) = options.get("shard").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    if kind != Kind::Exhaustive {
        return Err(Error::invalid(
            "shard",
            "only an exhaustive search is split across workers",
        ));
    }
    let map = object(value, "shard")?;
    only(map, &["index", "count"], "shard")?;
    let count = whole(map, "count", 1, MAX_WORKERS as i64)?
        .ok_or_else(|| Error::invalid("shard", "count is required"))? as usize;
    let index = whole(map, "index", 0, count as i64 - 1)?
        .ok_or_else(|| Error::invalid("shard", "index is required"))? as usize;
    Ok(Some(Shard { index, count }))
}

/// `without`: an array of reductions' names (each at most once), or absent.
fn without(options: &Map<String, Value>) -> Result<Without> {
    let items = match options.get("without") {
        None | Some(Value::Null) => return Ok(Without::NOTHING),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Error::invalid(
                "without",
                format!(
                    "expected an array of reductions' names, got {}",
                    crate::params::describe(other)
                ),
            ))
        }
    };
    if items.len() > Reduction::ALL.len() {
        return Err(Error::invalid(
            "without",
            format!(
                "name each reduction at most once ({})",
                Reduction::ALL.map(Reduction::name).join(", ")
            ),
        ));
    }
    let mut off = Vec::new();
    for item in items {
        let Value::String(name) = item else {
            return Err(Error::invalid(
                "without",
                format!(
                    "expected a reduction's name, got {}",
                    crate::params::describe(item)
                ),
            ));
        };
        let reduction = Reduction::parse(name)?;
        if off.contains(&reduction) {
            return Err(Error::invalid(
                "without",
                format!("{} is named twice", reduction.name()),
            ));
        }
        off.push(reduction);
    }
    Ok(off.into_iter().collect())
}

/// A search in progress: the exhaustive walk or a sampler.
pub enum Search {
    /// Every interleaving.
    Exhaustive(Box<search::Dfs>),
    /// Sampled runs.
    Sample(Box<Sampler<'static>>),
}

impl Search {
    /// Makes up to `runs` more runs; returns whether the search is over.
    pub fn advance(&mut self, explorer: &Explorer, runs: u64) -> Result<bool> {
        match self {
            Search::Exhaustive(search) => search.advance(explorer, runs),
            Search::Sample(sampler) => sampler.advance(explorer, runs),
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> search::Stats {
        match self {
            Search::Exhaustive(search) => search.stats(),
            Search::Sample(sampler) => sampler.stats(),
        }
    }

    /// Lets a search stopped by its budget or a cancel go on, for `runs`
    /// more runs or as many as its first budget. Returns whether anything is
    /// left to search.
    pub fn extend(&mut self, runs: Option<u64>) -> bool {
        match self {
            Search::Exhaustive(search) => search.extend(runs),
            Search::Sample(sampler) => sampler.extend(runs),
        }
    }

    /// The runs planned, when known (sampling).
    pub fn planned(&self) -> Option<u64> {
        match self {
            Search::Exhaustive(_) => None,
            Search::Sample(sampler) => Some(sampler.planned()),
        }
    }

    /// The report, once over or cancelled.
    pub fn report(&self, explorer: &Explorer, cancelled: bool) -> Result<ExploreReport> {
        match self {
            Search::Exhaustive(search) => explorer.report_search(search, cancelled),
            Search::Sample(sampler) => sampler.report(explorer, cancelled),
        }
    }

    /// Runs the search to its end.
    pub fn run_to_end(mut self, explorer: &Explorer) -> Result<ExploreReport> {
        while !self.advance(explorer, 10_000)? {}
        self.report(explorer, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Strategy> {
        Strategy::from_json(v.as_object().unwrap(), Kind::Exhaustive)
    }

    #[test]
    fn defaults_and_refusals() {
        let s = parse(json!({"strategy": "pct"})).unwrap();
        assert_eq!(
            (s.seed, s.depth, s.runs),
            (DEFAULT_SEED, DEFAULT_DEPTH, None)
        );
        assert_eq!(parse(json!({})).unwrap().kind, Kind::Exhaustive);
        for (given, expected) in [
            (json!({"runs": 0}), "invalid runs: 0 is out of range (1 to 10000000)"),
            (json!({"depth": 11}), "invalid depth: 11 is out of range (1 to 10)"),
            (
                json!({"strategy": "bfs"}),
                "invalid strategy: unknown strategy \"bfs\"; use exhaustive, round-robin, random, pct",
            ),
            (
                json!({"without": "symmetry"}),
                "invalid without: expected an array of reductions' names, got text",
            ),
            (
                json!({"without": ["dpor"]}),
                "invalid without: unknown reduction \"dpor\"; use state-caching, symmetry, partial-order",
            ),
            (
                json!({"without": ["symmetry", "symmetry"]}),
                "invalid without: symmetry is named twice",
            ),
            (
                json!({"without": [1]}),
                "invalid without: expected a reduction's name, got a number",
            ),
        ] {
            assert_eq!(parse(given).unwrap_err().to_string(), expected);
        }
        let off = parse(json!({"without": ["partial-order", "state-caching"]})).unwrap();
        assert_eq!(off.without.names(), ["state-caching", "partial-order"]);
        let options = off.dfs_options();
        assert!(!options.partial_order && !options.state_caching && options.symmetry);
        assert_eq!(
            parse(json!({"without": []})).unwrap().without,
            Without::NOTHING
        );
        let zero = Strategy {
            runs: Some(0),
            ..Strategy::of(Kind::Random)
        };
        assert_eq!(
            zero.checked().unwrap_err().to_string(),
            "invalid runs: use 1 to 10000000 (got 0)"
        );
    }
}
