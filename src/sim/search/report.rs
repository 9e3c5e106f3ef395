//! What a search reports: its counters, the counterexample explained, and
//! the figures of the interleavings a plain enumeration would face.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};

use super::explorer::RunResult;
use super::walk::{Frontier, Stats};
use crate::sim::{AsDeclared, Check};

/// Why a search did not cover every schedule. The JSON and the command
/// line write it as a sentence (its `Display`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bounded {
    /// Its caller cancelled it between runs.
    Cancelled,
    /// Its caller interrupted it in the middle of a run (`setInterrupt`):
    /// the run under way is lost with its branch.
    Interrupted,
    /// Its run budget was spent after this many runs.
    RunBudget {
        /// Runs made.
        runs: u64,
    },
    /// A preemption bound cut this many branches.
    PreemptionBound {
        /// Branches not explored.
        cut: u64,
    },
    /// A sampling strategy made this many runs.
    Sampled {
        /// The strategy's name.
        strategy: String,
        /// Runs made.
        runs: u64,
    },
}

impl fmt::Display for Bounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bounded::Cancelled => f.write_str("cancelled"),
            Bounded::Interrupted => f.write_str(
                "interrupted in the middle of a run (setInterrupt): the counts are of the runs that finished before it",
            ),
            Bounded::RunBudget { runs } => write!(f, "run budget of {runs} runs"),
            Bounded::PreemptionBound { cut } => {
                write!(f, "preemption bound ({cut} branches not explored)")
            }
            Bounded::Sampled { strategy, runs } => write!(
                f,
                "{strategy}: {runs} sampled run{}",
                if *runs == 1 { "" } else { "s" }
            ),
        }
    }
}

impl Serialize for Bounded {
    fn serialize<S: Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        out.collect_str(self)
    }
}

/// What an exhaustive search did to try fewer runs, or why it did not. A
/// part of a split search sends them to be merged as JSON (serde's
/// external tagging: `"symmetry"`, `{"split": {"workers": 2}}`, read without
/// the buffering an internal tag costs the module); a report writes each
/// as its words (its `Display`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Used {
    /// A state already explored is not explored again.
    StateCaching,
    /// Of interchangeable attempts, one is tried.
    Symmetry,
    /// Of the orders of steps that commute, one is tried.
    PartialOrder,
    /// Partial-order reduction was asked for and could not be used.
    NoPartialOrder {
        /// Why not.
        why: String,
    },
    /// At most this many preemptions per run.
    PreemptionBound {
        /// The bound.
        bound: u32,
    },
    /// The search was split across this many workers.
    Split {
        /// Workers.
        workers: usize,
    },
}

impl fmt::Display for Used {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Used::StateCaching => f.write_str("state caching"),
            Used::Symmetry => f.write_str("symmetry"),
            Used::PartialOrder => f.write_str("partial-order reduction (source sets, sleep sets)"),
            Used::NoPartialOrder { why } => write!(f, "no partial-order reduction: {why}"),
            Used::PreemptionBound { bound } => write!(f, "preemption bound {bound}"),
            Used::Split { workers } => write!(f, "split across {workers} workers"),
        }
    }
}

/// Each as its words.
fn as_words<S: Serializer>(used: &[Used], out: S) -> Result<S::Ok, S::Error> {
    out.collect_seq(used.iter().map(Used::to_string))
}

/// A failing run, shrunk and explained.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counterexample {
    /// Its schedule, encoded.
    pub schedule: String,
    /// Steps.
    pub steps: usize,
    /// Whether no failing run of the scenario is shorter (a breadth-first
    /// search proved it); otherwise it is the shortest failing run the
    /// search met, and a shorter one may exist.
    pub shortest: bool,
    /// The checks it fails.
    pub failed_checks: Vec<Check>,
    /// One sentence per step.
    pub explanation: Vec<String>,
    /// The run, with its trace.
    pub run: RunResult,
}

/// What a search found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExploreReport {
    /// The scenario's id.
    pub scenario: String,
    /// How runs were chosen.
    pub strategy: String,
    /// Whether every schedule was covered (exhaustive and unbounded).
    pub complete: bool,
    /// Why the search did not cover every schedule, if it did not.
    pub bounded_by: Option<Bounded>,
    /// Whether it was stopped by its caller (a cancel, an interrupt)
    /// before it was over.
    pub cancelled: bool,
    /// The search's counters.
    pub stats: Stats,
    /// The reductions an exhaustive search used, in words (and why
    /// partial-order reduction was not, when asked for and not usable).
    #[serde(serialize_with = "as_words")]
    pub reductions: Vec<Used>,
    /// Whether the figures below are upper bounds: some attempt cannot
    /// start at once ([`super::Explorer::starts_constrained`]).
    pub naive_is_upper_bound: bool,
    /// Whether some run looped ([`Stats::loops`]): then the design's
    /// interleavings are unbounded, whatever the figures below say of the
    /// runs' step counts.
    pub loops: bool,
    /// The number of interleavings plain enumeration would face, as text.
    pub naive_interleavings: String,
    /// Its base-10 logarithm.
    pub naive_interleavings_log10: f64,
    /// (NK)! / (K!)^N for N attempts of K steps, K the longest attempt's
    /// step count: the usual back-of-the-envelope figure, as text.
    pub naive_interleavings_uniform: String,
    /// The shortest (or first) failing run, if any.
    pub counterexample: Option<Counterexample>,
    /// What an exhaustive search stopped early had left to explore.
    pub frontier: Option<Frontier>,
    /// What each run was allowed to spend ([`crate::sim::BUDGETS`]); the runs
    /// a budget stopped are counted in `stats`.
    pub budgets: crate::sim::Budgets,
    /// When the search kept them ([`super::Options::final_digests`], the
    /// option `finalDigests`, `replayground explore --final-digest`): one
    /// digest of the set of final states, as 16 hexadecimal digits, that
    /// does not depend on the machine: each final state's committed tables
    /// and its attempts' statuses ([`crate::sim::Run::final_digest`]), the
    /// set's digests sorted and hashed again. Equal on the command line and
    /// in the page for the same set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_digest: Option<String>,
    /// How many workers the search was split across (1: not split); the
    /// counts of a split search are the workers' summed.
    pub workers: usize,
    /// The verdict beside what the scenario's author declared of it, if
    /// the declaration applies to these parameters.
    #[serde(flatten)]
    pub declaration: Option<AsDeclared>,
}

/// The number of interleavings of attempts taking `steps[i]` steps each:
/// (sum of steps)! / product of (steps[i]!), as a base-10 logarithm.
pub(crate) fn naive_interleavings_log10(steps: &[usize]) -> f64 {
    let log_factorial = |n: usize| (2..=n).map(|i| (i as f64).log10()).sum::<f64>();
    let total: usize = steps.iter().sum();
    log_factorial(total) - steps.iter().map(|&k| log_factorial(k)).sum::<f64>()
}

/// (NK)! / (K!)^N for `n` attempts of `k` steps each, as a base-10 logarithm.
pub(crate) fn uniform_interleavings_log10(n: usize, k: usize) -> f64 {
    naive_interleavings_log10(&vec![k; n])
}

/// Writes a base-10 logarithm as a readable number ("1.9e31" or "252").
pub(crate) fn format_log10(log10: f64) -> String {
    if log10 < 15.0 {
        // Whole numbers with thousands separators, as counts are shown.
        crate::grouped(&format!("{:.0}", 10f64.powf(log10)))
    } else {
        let exponent = log10.floor();
        format!("{:.1}e{}", 10f64.powf(log10 - exponent), exponent)
    }
}
