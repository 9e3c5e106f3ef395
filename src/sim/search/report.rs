//! What a search reports: its counters, the counterexample explained, and
//! the figures of the interleavings a plain enumeration would face.

use serde::Serialize;

use super::explorer::RunResult;
use super::walk::{Frontier, Stats};
use crate::sim::{AsDeclared, Check};

/// What a search interrupted in the middle of a run (`setInterrupt`) was
/// bounded by: the run under way is lost with its branch.
pub const INTERRUPTED: &str = "interrupted in the middle of a run (setInterrupt): the counts are of the runs that finished before it";

/// A failing run, shrunk and explained.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counterexample {
    /// Its schedule, encoded.
    pub schedule: String,
    /// Steps.
    pub steps: usize,
    /// Whether no failing run of the scenario is shorter (a breadth-first
    /// search proved it); otherwise it is the first failing run found.
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
    pub bounded_by: Option<String>,
    /// Whether it was stopped by its caller (a cancel, an interrupt)
    /// before it was over.
    pub cancelled: bool,
    /// The search's counters.
    pub stats: Stats,
    /// The reductions an exhaustive search used, in words (and why
    /// partial-order reduction was not, when asked for and not usable).
    pub reductions: Vec<String>,
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
pub fn naive_interleavings_log10(steps: &[usize]) -> f64 {
    let log_factorial = |n: usize| (2..=n).map(|i| (i as f64).log10()).sum::<f64>();
    let total: usize = steps.iter().sum();
    log_factorial(total) - steps.iter().map(|&k| log_factorial(k)).sum::<f64>()
}

/// (NK)! / (K!)^N for `n` attempts of `k` steps each, as a base-10 logarithm.
pub fn uniform_interleavings_log10(n: usize, k: usize) -> f64 {
    naive_interleavings_log10(&vec![k; n])
}

/// Writes a base-10 logarithm as a readable number ("1.9e31" or "252").
pub fn format_log10(log10: f64) -> String {
    if log10 < 15.0 {
        // Whole numbers with thousands separators, as counts are shown.
        crate::grouped(&format!("{:.0}", 10f64.powf(log10)))
    } else {
        let exponent = log10.floor();
        format!("{:.1}e{}", 10f64.powf(log10 - exponent), exponent)
    }
}
