//! An exhaustive search split across workers (threads natively, Web Workers
//! in the page), each with its own explorer, store and cache.
//!
//! The *top* of the tree is enumerated breadth-first, every interleaving of
//! its first steps (interchangeable attempts tried once, and each distinct
//! state kept once), until a level holds enough states for every worker to
//! have several. Each of those states is a *task*: everything reachable from
//! it is searched with partial-order reduction, as if it were the initial
//! state. Task `j` goes to worker `j mod n`; a worker searches its tasks one
//! after the other with one cache (odd workers last first, so that two
//! workers start far apart), and worker 0 also reports the runs that
//! ended within the top. Every run passes through a state of the last level
//! or ended before it, and each task's search reaches every state reachable
//! from its root (the search is sound from any state), so the union of the
//! workers' final states and verdicts is exactly one worker's. Counters are
//! summed: workers do not share caches, so a state reached from two tasks
//! on two workers is counted (and explored) twice.
//!
//! The top keeps each distinct state once, so a cycle whose states were
//! first reached along different prefixes closes on no prefix's own path
//! (a state met again is dropped as seen, not recognized as an ancestor).
//! Such a cycle may also lie above every task, unreachable from all of
//! them. So the top keeps its graph (every edge from a state it expanded,
//! to a state seen or not), and each of its strongly connected parts with a
//! cycle the top did not report becomes a task too: that task's search
//! starts on the cycle and finds it as any search does.
//!
//! A part's result ([`Part`]) is plain data, so that it can cross a thread or
//! a `postMessage`; [`super::Explorer::report_parts`] merges
//! them into one report.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::explorer::Explorer;
use super::report::Used;
use super::walk::{replay, Cycle, Endings, Frontier, Options, Shard, Stats};
use crate::sim::Schedule;
use crate::Result;

/// Tasks per worker the top is split into, at least: enough that uneven
/// tasks even out.
pub(crate) const TASKS_PER_WORKER: usize = 8;

/// The deepest the top goes.
const MAX_TOP_DEPTH: usize = 24;

/// The most workers a search is split across.
pub(crate) const MAX_WORKERS: usize = 16;

/// The top of the tree: the tasks, and what the runs that ended within it
/// found.
pub(super) struct Top {
    pub tasks: Vec<Vec<usize>>,
    pub stats: Stats,
    pub endings: Endings,
}

/// A state's key and its attempts' keys.
type StateKeys = (u64, Vec<u64>);

/// Enumerates the top of the tree until a level has at least `min_tasks`
/// states (or every run has ended).
pub(super) fn top(explorer: &Explorer, options: &Options, min_tasks: usize) -> Result<Top> {
    let mut stats = Stats::default();
    let mut endings = Endings::new(options);
    let mut seen = HashSet::new();
    // The top's graph: each expanded state's successors, and the prefix
    // that first reached each state; the states at which a cycle was found.
    let mut graph = Graph::default();
    // Each prefix with the keys of the states along it, the last included
    // (and their attempts' keys): a child back at one of them is a cycle.
    let mut level: Vec<(Vec<usize>, Vec<StateKeys>)> = vec![(Vec::new(), Vec::new())];
    for depth in 0..MAX_TOP_DEPTH {
        if level.len() >= min_tasks {
            break;
        }
        stats.max_depth = depth as u64;
        let mut next = Vec::new();
        for (prefix, path) in &level {
            let (run, counted) = replay(explorer, prefix, &mut stats)?;
            if run.is_stopped() {
                endings.record(&mut stats, explorer, &run, || counted)?;
                continue;
            }
            let choices = if options.symmetry {
                run.distinct_runnable()
            } else {
                run.runnable()
            };
            let mut path = path.clone();
            if path.is_empty() {
                path.push((run.state_key(options.symmetry), run.attempt_keys()));
            }
            let parent = path.last().expect("the state itself").0;
            graph.reached(parent, prefix);
            drop(run);
            for choice in choices {
                let mut child = prefix.clone();
                child.push(choice);
                let (run, counted) = replay(explorer, &child, &mut stats)?;
                let key = run.state_key(options.symmetry);
                graph.edge(parent, key);
                if let Some(from) = path.iter().position(|(k, _)| *k == key) {
                    graph.closed.insert(key);
                    let cycle =
                        Cycle::new(run.schedule(), from, &path[from].1, &run.attempt_keys())?;
                    endings.record_cycle(&mut stats, cycle);
                    continue;
                }
                if options.state_caching && !seen.insert(key) {
                    continue;
                }
                if run.is_stopped() {
                    endings.record(&mut stats, explorer, &run, || counted)?;
                } else {
                    let mut keys = path.clone();
                    keys.push((key, run.attempt_keys()));
                    next.push((child, keys));
                }
            }
        }
        if next.is_empty() {
            level = next;
            break;
        }
        level = next;
    }
    stats.distinct_states = seen.len() as u64;
    let mut tasks: Vec<Vec<usize>> = level.into_iter().map(|(prefix, _)| prefix).collect();
    tasks.extend(graph.unreported_cycles());
    Ok(Top {
        tasks,
        stats,
        endings,
    })
}

/// The part of the state graph the top expanded.
#[derive(Default)]
struct Graph {
    /// Each expanded state's successors, in the order met.
    successors: HashMap<u64, Vec<u64>>,
    /// The expanded states in the order met, each with the prefix that
    /// first reached it.
    expanded: Vec<(u64, Vec<usize>)>,
    /// The states a cycle the top reported goes back to.
    closed: HashSet<u64>,
}

impl Graph {
    /// Notes that `key`, reached by `prefix`, is expanded.
    fn reached(&mut self, key: u64, prefix: &[usize]) {
        if let std::collections::hash_map::Entry::Vacant(entry) = self.successors.entry(key) {
            entry.insert(Vec::new());
            self.expanded.push((key, prefix.to_vec()));
        }
    }

    fn edge(&mut self, from: u64, to: u64) {
        let successors = self.successors.entry(from).or_default();
        if !successors.contains(&to) {
            successors.push(to);
        }
    }

    /// The states reachable from `from` in one step or more.
    fn reachable(&self, from: u64) -> HashSet<u64> {
        let mut found = HashSet::new();
        let mut stack = vec![from];
        while let Some(key) = stack.pop() {
            for &next in self.successors.get(&key).map_or(&[][..], Vec::as_slice) {
                if found.insert(next) {
                    stack.push(next);
                }
            }
        }
        found
    }

    /// For each strongly connected part with a cycle that holds no state a
    /// reported cycle goes back to, the prefix of its first expanded state.
    fn unreported_cycles(&self) -> Vec<Vec<usize>> {
        let mut covered: HashSet<u64> = HashSet::new();
        let mut tasks = Vec::new();
        for (key, prefix) in &self.expanded {
            if covered.contains(key) {
                continue;
            }
            let below = self.reachable(*key);
            if !below.contains(key) {
                continue;
            }
            // Its part: the states below it that reach it back.
            let part: Vec<u64> = below
                .into_iter()
                .filter(|&k| k == *key || self.reachable(k).contains(key))
                .collect();
            let reported = part.iter().any(|k| self.closed.contains(k));
            covered.extend(part);
            if !reported {
                tasks.push(prefix.clone());
            }
        }
        tasks
    }
}

/// What one worker's search found, as plain data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Which part of a split search it is (`None`: the whole search).
    pub shard: Option<Shard>,
    /// Its counters.
    pub stats: Stats,
    /// The keys of the states its runs ended in, each as 16 hexadecimal
    /// digits, one after the other (a key does not fit a JavaScript number,
    /// and one string crosses to another worker in one piece).
    pub final_states: String,
    /// The digests of its final states ([`crate::sim::Run::final_digest`]),
    /// as `final_states` gives keys, when the search kept them.
    #[serde(default)]
    pub final_digests: Option<String>,
    /// Its first failing run, encoded.
    pub violation: Option<String>,
    /// Steps each attempt took in its first complete run.
    pub steps_per_attempt: Option<Vec<usize>>,
    /// The reductions it used, in words.
    pub reductions: Vec<Used>,
    /// Whether a run budget stopped it before it was complete.
    pub budget_spent: bool,
    /// Whether a preemption bound cut branches.
    pub cut_by_bound: bool,
    /// What it had left, if it stopped early.
    pub frontier: Option<Frontier>,
    /// Whether its caller interrupted it in the middle of a run
    /// (`setInterrupt`): that run's branch is lost, so what the search had
    /// left is not known and the merged search cannot go on.
    #[serde(default)]
    pub interrupted: bool,
}

impl Part {
    /// Checks a part that came from outside (a worker's message): keys in
    /// hexadecimal, a schedule that decodes.
    pub fn validate(&self) -> Result<()> {
        self.final_state_keys()?;
        self.final_digests()?;
        if let Some(violation) = &self.violation {
            Schedule::decode(violation)?;
        }
        Ok(())
    }

    /// The keys of its final states.
    pub fn final_state_keys(&self) -> Result<Vec<u64>> {
        words(
            &self.final_states,
            "finalStates is not a list of state keys",
        )
    }

    /// The digests of its final states, if kept.
    pub fn final_digests(&self) -> Result<Option<Vec<u64>>> {
        self.final_digests
            .as_deref()
            .map(|text| words(text, "finalDigests is not a list of digests"))
            .transpose()
    }
}

/// 64-bit words written as 16 hexadecimal digits each, one after the other.
fn words(text: &str, what: &str) -> Result<Vec<u64>> {
    let bad = || crate::Error::invalid("part", what);
    let text = text.as_bytes();
    if text.len() % 16 != 0 {
        return Err(bad());
    }
    text.chunks(16)
        .map(|word| {
            std::str::from_utf8(word)
                .ok()
                .and_then(|w| u64::from_str_radix(w, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

/// `words` as [`words`] reads them.
fn hex_words<'a>(words: impl IntoIterator<Item = &'a u64>) -> String {
    words.into_iter().map(|w| format!("{w:016x}")).collect()
}

impl Endings {
    /// These endings as a part's fields: final state keys, their digests
    /// if kept, violation, steps per attempt.
    pub(super) fn to_part_fields(&self) -> PartFields {
        let mut finals: Vec<u64> = self.finals().iter().copied().collect();
        finals.sort_unstable();
        PartFields {
            final_states: hex_words(&finals),
            final_digests: self.digests().map(hex_words),
            violation: self.violation().map(Schedule::encode),
            steps_per_attempt: self.steps_per_attempt().map(<[usize]>::to_vec),
        }
    }
}

/// What a part holds of its endings ([`Endings::to_part_fields`]).
pub(super) struct PartFields {
    pub final_states: String,
    pub final_digests: Option<String>,
    pub violation: Option<String>,
    pub steps_per_attempt: Option<Vec<usize>>,
}

/// The parts merged: counters summed (final states counted once across
/// parts), the shortest violation (then the first in text order), the first
/// part's steps per attempt.
pub(crate) struct Merged {
    pub stats: Stats,
    pub violation: Option<Schedule>,
    pub steps_per_attempt: Option<Vec<usize>>,
    pub reductions: Vec<Used>,
    pub budget_spent: bool,
    pub cut_by_bound: bool,
    pub frontier: Option<Frontier>,
    /// Whether a part was interrupted in the middle of a run.
    pub interrupted: bool,
    /// The final states' digests, each once, if every part kept them.
    pub final_digests: Option<std::collections::BTreeSet<u64>>,
}

/// Merges the parts of one search: one whole search, or every shard of a
/// split one, each once.
pub(crate) fn merge(parts: &[Part]) -> Result<Merged> {
    let whole = matches!(parts, [Part { shard: None, .. }]);
    let mut indices: Vec<Option<usize>> = parts
        .iter()
        .map(|p| p.shard.filter(|s| s.count == parts.len()).map(|s| s.index))
        .collect();
    indices.sort_unstable();
    let every_shard = indices
        .iter()
        .enumerate()
        .all(|(i, &index)| index == Some(i));
    if !whole && !every_shard {
        return Err(crate::Error::invalid(
            "parts",
            "give either one whole search's part or every shard's part, each once",
        ));
    }
    let mut stats = Stats::default();
    let mut finals = HashSet::new();
    let mut digests = Some(std::collections::BTreeSet::new());
    let mut violation: Option<Schedule> = None;
    let mut frontier: Option<Frontier> = None;
    // One part's lost branch leaves the whole search without a frontier:
    // going on from the others' would skip it.
    let interrupted = parts.iter().any(|p| p.interrupted);
    for part in parts {
        part.validate()?;
        let s = &part.stats;
        stats.add(s);
        finals.extend(part.final_state_keys()?);
        digests = match (digests, part.final_digests()?) {
            (Some(mut all), Some(own)) => {
                all.extend(own);
                Some(all)
            }
            _ => None,
        };
        if let Some(v) = &part.violation {
            let v = Schedule::decode(v)?;
            let better = violation
                .as_ref()
                .is_none_or(|best| (v.len(), v.encode()) < (best.len(), best.encode()));
            if better {
                violation = Some(v);
            }
        }
        if let Some(f) = part.frontier.filter(|_| !interrupted) {
            frontier = Some(match frontier {
                None => f,
                Some(g) => Frontier {
                    branches: g.branches + f.branches,
                    shallowest: g.shallowest.min(f.shallowest),
                },
            });
        }
    }
    stats.final_states = finals.len() as u64;
    let mut reductions: Vec<Used> = Vec::new();
    for part in parts {
        for r in &part.reductions {
            if !reductions.contains(r) {
                reductions.push(r.clone());
            }
        }
    }
    Ok(Merged {
        stats,
        violation,
        steps_per_attempt: parts.iter().find_map(|p| p.steps_per_attempt.clone()),
        reductions,
        budget_spent: parts.iter().any(|p| p.budget_spent),
        cut_by_bound: parts.iter().any(|p| p.cut_by_bound),
        frontier,
        interrupted,
        final_digests: digests,
    })
}

#[cfg(test)]
mod tests {
    use super::Graph;

    fn graph(edges: &[(u64, u64)]) -> Graph {
        let mut graph = Graph::default();
        for &(from, to) in edges {
            graph.reached(from, &[from as usize]);
            graph.edge(from, to);
        }
        graph
    }

    #[test]
    fn a_cycle_the_top_did_not_report_becomes_one_task() {
        // 1 -> 2 -> 3 -> 2, 1 -> 4 (a task): one part with a cycle, {2, 3},
        // whose first expanded state is 2.
        let g = graph(&[(1, 2), (1, 4), (2, 3), (3, 2)]);
        assert_eq!(g.unreported_cycles(), vec![vec![2]]);
        // Two separate cycles: one task each; a self-loop is a cycle.
        let g = graph(&[(1, 2), (2, 1), (1, 3), (3, 3)]);
        assert_eq!(g.unreported_cycles(), vec![vec![1], vec![3]]);
    }

    #[test]
    fn no_task_for_a_graph_without_cycles_or_a_cycle_reported() {
        // A diamond has no cycle.
        let g = graph(&[(1, 2), (1, 3), (2, 4), (3, 4)]);
        assert!(g.unreported_cycles().is_empty());
        let mut g = graph(&[(1, 2), (2, 3), (3, 2)]);
        g.closed.insert(3);
        assert!(g.unreported_cycles().is_empty());
    }
}
