//! Dynamic partial-order reduction: source sets with sleep sets (Abdulla,
//! Aronis, Jonsson and Sagonas, "Optimal dynamic partial order reduction",
//! POPL 2014, algorithm 1), on top of state caching and symmetry.
//!
//! # When two steps commute here
//!
//! Every step is recorded with its [`Footprint`]: the databases whose files
//! or locks it read and wrote (the VFS notes each operation; see
//! [`crate::storage::footprint`]), whether it looked at others' statuses or
//! locks, and whether its attempt is over. Two steps of different attempts
//! are *dependent* when one writes a database the other reads or writes
//! (taking SHARED is a read; any other lock, granted or refused, is a write;
//! so is every shared-memory call in WAL mode), or when one ends an attempt
//! and the other looked at statuses. A step whose attempt ends reads every
//! database when a check observes the committed state at that moment (an
//! `after` check). Everything else commutes: a step on another database, a
//! statement served from the connection's own cache, a read beside a read.
//!
//! - **BUSY**: a refused lock is a write of that database, so the step that
//!   was refused and the one holding the lock race, and the search also
//!   tries them the other way round. A blocked attempt runs again only after
//!   a step releases a lock or ends an attempt: that step happens before the
//!   retry (an edge of the happens-before order, as a lock release is before
//!   the acquisition it allows), the same for an attempt waiting for another
//!   to be over.
//! - **Kills** (a program's crash step) and **clock ticks** conflict with
//!   every step: a kill drops locks without the VFS seeing SQLite ask, and
//!   the time decides which attempts are ready.
//! - **Invariants**, checked after every step, observe every intermediate
//!   state: a scenario with invariants is searched without this reduction
//!   (the report says so), as is a search with a preemption bound.
//!
//! # The search
//!
//! Each run is a maximal execution. For every step it takes, earlier steps
//! of other attempts that are dependent and not ordered before it by
//! happens-before (vector clocks) *race* with it; at the state before the
//! earlier step, one of the attempts that could start the reversed order (the
//! initials of the events between them that do not depend on the earlier
//! one, and the later step) is added to that state's backtrack set, unless
//! one is there already. Explored attempts are put to sleep for their later
//! siblings while they stay independent of what is taken.
//!
//! **State caching** cuts a run at a state already explored, but only when
//! it was explored with no more attempts asleep than now (otherwise it is
//! explored again with the smaller sleep set). What the cut hides still
//! matters for the steps before the cut: every explored state keeps a summary
//! of the footprints of every step taken below it, per class of attempt;
//! at a cut, each attempt of that class is treated as if it took such a step
//! next, and races with earlier steps not ordered before it add backtrack
//! points as above (every attempt that could run there, conservatively). A
//! state reached again while its own exploration is still under way (a
//! cycle) counts as conflicting with everything.
//!
//! **Symmetry**: of two attempts with the same class, state, status and
//! locks, one is explored; the other's branch leads to the same state up to
//! a permutation. Its summary is applied to both.
//!
//! **Rewinding** (not a reduction: it changes how a state is reached, not
//! which): a node where two or more attempts are awake keeps a
//! [`Checkpoint`] of the run (its files, each attempt's state, each open
//! transaction's statements); a run for a new branch goes back to the
//! deepest one above the branch and replays only the steps below it,
//! instead of every step from the start (three producers and two relays:
//! 241,000 steps instead of 3.6 million). A run gone back is checked: its
//! state's key must be the node's, or it is replayed from the start
//! ([`Dpor::rewind_misses`]). Emptied page caches make the steps after a
//! rewind read what a warm cache would have served: their footprints can be
//! larger, never smaller (more steps conflict, which is sound), so the search
//! may explore a few more states than without (162,632 against 161,846
//! there). For the same reason the states explored (never the final states
//! nor the verdict) depend on where calls to [`Dpor::advance`] start: each
//! call starts from a new run, whose connections come from the pool with
//! other page caches than the last call's run had, so a page is read from
//! the file one step earlier or later (the states' keys agree; a footprint
//! moves one step): three producers and two relays take 74,311 runs and
//! 162,627 states in the page's slices of 200 runs, 74,316 and 162,632 in
//! one call. A connection keeps its cache when its file holds the bytes it
//! last read ([`crate::storage::Conn::forget_stale_cache`]), and a
//! transaction the run has open that is the checkpoint's own, with nothing
//! done since, is kept as it is rather than rolled back and redone.

use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use super::explorer::{Explorer, MAX_RUN_STEPS};
use crate::sim::{Checkpoint, Progress, Run, Schedule};
use crate::storage::footprint::Footprint;
use crate::{Error, Result};

use super::cache::{add_to, is_subset, merge, SharedCache, Summary};
use super::walk::{replay, Cycle, Endings, Frontier, Options, Stats};

/// One step of the current run.
#[derive(Debug, Clone)]
struct Event {
    attempt: usize,
    footprint: Footprint,
    /// Whether it moved its attempt on (it was not refused a lock).
    progressed: bool,
    /// The attempts it let run again.
    woken: Vec<usize>,
    /// Its vector clock.
    clock: Vec<u32>,
}

/// A state on the current run.
#[derive(Debug)]
struct Node {
    key: u64,
    /// Runnable attempts here.
    enabled: Vec<usize>,
    /// Attempts not over here (runnable, blocked or waiting).
    live: Vec<usize>,
    /// Every attempt's key here (class, state, status, locks).
    keys: Vec<u64>,
    /// Attempts to explore from here (including those explored); grown
    /// only through [`Node::add_backtrack`].
    backtrack: Vec<usize>,
    /// How many of `enabled` are in `backtrack` (see [`Node::saturated`]).
    covered: usize,
    /// Explored from here: the attempt, its step's footprint and the summary
    /// of its subtree once finished.
    done: Vec<(usize, Footprint)>,
    /// Asleep here: the attempt and the footprint of its next step.
    sleep: Vec<(usize, Footprint)>,
    /// The step taken from here on the current run.
    taken: Option<Event>,
    /// Every attempt's vector clock here, after the steps above.
    clocks: Clocks,
    /// The union of everything below, per class.
    summary: Summary,
    /// The run's state here, when it can be gone back to without replaying
    /// the steps above (see [`Run::checkpoint`]).
    checkpoint: Option<Checkpoint>,
}

impl Node {
    /// Whether every runnable attempt is in its backtrack set: a race with
    /// its step can add nothing.
    /// (Asked for every node of the path at every race and cut: kept as a
    /// count rather than compared, 8 x 8 attempts at each node of the
    /// 8-attempt race.)
    fn saturated(&self) -> bool {
        debug_assert_eq!(
            self.covered == self.enabled.len(),
            self.enabled.iter().all(|a| self.backtrack.contains(a)),
            "a node's count of covered attempts is off"
        );
        self.covered == self.enabled.len()
    }

    /// Adds `attempt` to the backtrack set.
    fn add_backtrack(&mut self, attempt: usize) {
        if !self.backtrack.contains(&attempt) && self.enabled.contains(&attempt) {
            self.covered += 1;
        }
        self.backtrack.push(attempt);
    }

    /// The attempts of its backtrack set still to explore: not taken yet,
    /// not asleep.
    fn pending(&self) -> impl Iterator<Item = usize> + '_ {
        self.backtrack.iter().copied().filter(|&a| {
            !self.done.iter().any(|&(d, _)| d == a) && !self.sleep.iter().any(|&(s, _)| s == a)
        })
    }
}

/// What the cache knows of an explored state.
#[derive(Debug)]
struct Seen {
    /// The sleep set it was explored with (identities, sorted).
    sleep: Box<[u64]>,
    /// Its summary ([`Dpor::intern`]); `None` while its exploration is under way.
    summary: Option<Rc<Summary>>,
    /// The summary of an earlier exploration, while it is explored again.
    earlier: Option<Rc<Summary>>,
}

/// A resumable search with partial-order reduction.
pub(crate) struct Dpor {
    options: Options,
    path: Vec<Node>,
    /// By state key: the keys are hashes already, so the map hashes them
    /// with foldhash's fast fixed hasher rather than SipHash.
    visited: HashMap<u64, Seen, foldhash::fast::FixedState>,
    /// Every summary the cache holds, each kept once: states share few
    /// (three producers and two relays: 162,632 states, 491 summaries), and
    /// a smaller cache is quicker to grow and to fill.
    summaries: HashSet<Rc<Summary>, foldhash::fast::FixedState>,
    stats: Stats,
    endings: Endings,
    /// The states still to search from, each given by the steps that reach
    /// it from the start (one, the initial state, unless the search is split
    /// across workers: see [`super::split`]).
    roots: VecDeque<Vec<usize>>,
    /// The state the current tree grows from, and the steps each attempt
    /// took to reach it (blocked steps not counted).
    root: Vec<usize>,
    root_counted: Vec<usize>,
    /// The cache of finished states shared with other workers, if any.
    shared: Option<std::sync::Arc<SharedCache>>,
    /// Prefer the last runnable attempt over the first (so that workers
    /// sharing a cache start in different parts of the tree).
    reverse: bool,
    /// See [`Dpor::rewind_misses`].
    rewind_misses: u64,
    /// Every attempt's class (the same in every state of a scenario).
    classes: Vec<u64>,
    /// Buffers [`Dpor::reverse`], [`Dpor::hide`] and [`Dpor::hidden`] reuse: they run at
    /// every race and cut (about 1,300 times in a search of the 8-attempt
    /// race), where a new vector each time is an allocation each time.
    scratch: Scratch,
}

/// See [`Dpor::scratch`].
#[derive(Debug, Default)]
struct Scratch {
    initials: Vec<usize>,
    races: Vec<usize>,
    /// [`Dpor::reverse`]'s steps between two that race (their nodes).
    between: Vec<usize>,
    /// [`Dpor::hide`]'s hidden steps: each attempt and its footprint.
    hidden: Vec<(usize, Footprint)>,
}

impl Dpor {
    /// A search from the scenario's initial state.
    pub(crate) fn new(options: Options) -> Self {
        Self::from_roots(
            options,
            vec![Vec::new()],
            Stats::default(),
            Endings::new(&options),
        )
    }

    /// A search of everything reachable from each of `roots` (states given
    /// by the steps that reach them), one after the other, sharing one
    /// cache; it starts with the counters and endings of the search that
    /// found the roots.
    pub(super) fn from_roots(
        options: Options,
        roots: Vec<Vec<usize>>,
        stats: Stats,
        endings: Endings,
    ) -> Self {
        Dpor {
            options,
            path: Vec::new(),
            visited: HashMap::default(),
            summaries: HashSet::default(),
            stats,
            endings,
            roots: roots.into(),
            root: Vec::new(),
            root_counted: Vec::new(),
            shared: None,
            reverse: false,
            rewind_misses: 0,
            classes: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// Shares finished states with other workers through `cache`.
    pub(super) fn share(&mut self, cache: std::sync::Arc<SharedCache>, reverse: bool) {
        self.shared = Some(cache);
        self.reverse = reverse;
    }

    /// What the runs that ended found.
    pub(super) fn endings(&self) -> &Endings {
        &self.endings
    }

    /// The counters so far.
    pub(crate) fn stats(&self) -> Stats {
        self.stats
    }

    /// The keys of the states runs ended in.
    pub(crate) fn final_states(&self) -> &HashSet<u64> {
        self.endings.finals()
    }

    /// The shortest failing run found (the first of the shortest), if any.
    pub(crate) fn violation(&self) -> Option<&Schedule> {
        self.endings.violation()
    }

    /// Steps each attempt took in the first complete run.
    pub(crate) fn steps_per_attempt(&self) -> Option<&[usize]> {
        self.endings.steps_per_attempt()
    }

    /// Whether the whole reduced tree has been explored, or the budget spent.
    pub(crate) fn is_done(&self) -> bool {
        (self.path.is_empty() && self.roots.is_empty()) || self.budget_spent()
    }

    /// Whether the run budget stopped the search.
    pub(crate) fn budget_spent(&self) -> bool {
        self.options
            .max_runs
            .is_some_and(|max| self.stats.runs >= max)
    }

    /// Sets the run budget (a search stopped by it continues).
    pub(crate) fn set_max_runs(&mut self, max: u64) {
        self.options.max_runs = Some(max);
    }

    /// What is left to explore: the attempts in backtrack sets not yet
    /// taken nor asleep, on the current run.
    pub(crate) fn frontier(&self) -> Option<Frontier> {
        let pending = |node: &Node| node.pending().count() as u64;
        let on_path = self
            .path
            .iter()
            .position(|n| pending(n) > 0)
            .map(|i| self.root.len() + i);
        let shallowest = on_path.or_else(|| self.roots.iter().map(Vec::len).min())?;
        Some(Frontier {
            branches: self.path.iter().map(pending).sum::<u64>() + self.roots.len() as u64,
            shallowest: shallowest as u64,
        })
    }

    /// Whether the budget stopped the search before it was complete.
    pub(crate) fn is_bounded(&self) -> bool {
        self.budget_spent() && self.frontier().is_some()
    }

    /// Explores up to `runs` more runs. Returns whether the search is done.
    pub(crate) fn advance(&mut self, explorer: &Explorer, runs: u64) -> Result<bool> {
        let mut left = runs;
        // The last run, kept to be rewound to a checkpoint for the next.
        let mut last: Option<Run<'_>> = None;
        while left > 0 && !self.is_done() {
            left -= 1;
            if self.path.is_empty() {
                // Its connections go back to the pool before the store is reset.
                drop(last.take());
                let root = self.roots.pop_front().expect("a root, as not done");
                let (mut run, counted) = replay(explorer, &root, &mut self.stats)?;
                self.root = root;
                self.root_counted = counted;
                self.visit(explorer, &mut run)?;
                self.walk(explorer, &mut run)?;
                last = Some(run);
                continue;
            }
            // The deepest state with an attempt left to explore.
            let Some((depth, attempt)) = self.next_branch() else {
                continue;
            };
            self.stats.runs += 1;
            let mut run = self.reach(explorer, last.take(), depth)?;
            self.take(explorer, &mut run, attempt)?;
            self.walk(explorer, &mut run)?;
            last = Some(run);
        }
        // Its connections go back to the pool before a cycle's run resets the store.
        drop(last);
        self.endings.settle(explorer)?;
        Ok(self.is_done())
    }

    /// A run in the state of the path's node `depth`: `last` (or a new run)
    /// rewound to the deepest checkpoint at or above it, then the steps from
    /// there; without a checkpoint, a new run replaying every step from the
    /// start. A rewound run is checked: its state's key must be the node's.
    fn reach<'e>(
        &mut self,
        explorer: &'e Explorer,
        last: Option<Run<'e>>,
        depth: usize,
    ) -> Result<Run<'e>> {
        let deepest = (0..=depth)
            .rev()
            .find(|&i| self.path[i].checkpoint.is_some());
        let mut from = None;
        if let Some(at) = deepest {
            let mut run = match last {
                Some(run) => run,
                None => explorer.start(false)?,
            };
            let checkpoint = self.path[at].checkpoint.as_ref().expect("found above");
            // A restore may decline (a connection whose own state cannot be
            // put back): the run then starts anew, as it does after a miss,
            // which is a restore that claimed success and was wrong.
            match run.restore(checkpoint) {
                Ok(true)
                    if run.state_key_with(self.options.symmetry, &run.attempt_keys())
                        == self.path[at].key =>
                {
                    from = Some((at, run));
                }
                Ok(false) => {}
                _ => self.rewind_misses += 1,
            }
        } else {
            drop(last);
        }
        let (at, mut run) = match from {
            Some(found) => found,
            None => {
                let mut run = explorer.start(false)?;
                for &attempt in &self.root {
                    run.step(attempt)?;
                    self.stats.steps += 1;
                }
                (0, run)
            }
        };
        for node in &self.path[at..depth] {
            let event = node
                .taken
                .as_ref()
                .expect("a node above the deepest has a step");
            run.step(event.attempt)?;
            self.stats.steps += 1;
        }
        Ok(run)
    }

    /// How many times a run rewound to a checkpoint was not in the state the
    /// checkpoint was taken in (and was replayed from the start instead):
    /// none, unless something a checkpoint does not keep changed the run.
    pub(crate) fn rewind_misses(&self) -> u64 {
        self.rewind_misses
    }

    /// Pops finished states off the current run until one has an attempt to
    /// explore; returns its depth and that attempt (`None` when the search
    /// is over).
    fn next_branch(&mut self) -> Option<(usize, usize)> {
        loop {
            let node = self.path.last_mut()?;
            node.taken = None;
            let symmetry = self.options.symmetry;
            let Some(attempt) = node.pending().next() else {
                self.finish_node();
                continue;
            };
            let twin = node
                .done
                .iter()
                .find(|&&(d, _)| symmetry && node.keys[d] == node.keys[attempt])
                .copied();
            let Some((_, footprint)) = twin else {
                return Some((self.path.len() - 1, attempt));
            };
            // Its branch is the explored twin's up to a permutation: what
            // was found below applies to every attempt of the class.
            node.done.push((attempt, footprint));
            let summary = node.summary.clone();
            self.hide(&summary);
        }
    }

    /// The last node is explored: its summary goes to the cache and to its
    /// parent, and it leaves the path.
    fn finish_node(&mut self) {
        let node = self.path.pop().expect("a node to finish");
        let identities = self.sleep_identities(&node);
        if let Some(seen) = self.visited.get_mut(&node.key) {
            if seen.summary.is_none() {
                // Explored again with a smaller sleep set: what is asleep
                // in both is what neither exploration took.
                if !seen.sleep.is_empty() {
                    let both: Vec<u64> = seen
                        .sleep
                        .iter()
                        .copied()
                        .filter(|id| identities.contains(id))
                        .collect();
                    seen.sleep = both.into();
                }
                let mut summary = seen
                    .earlier
                    .take()
                    .map(Rc::unwrap_or_clone)
                    .unwrap_or_default();
                merge(&mut summary, &node.summary);
                if let Some(shared) = &self.shared {
                    shared.publish(node.key, &seen.sleep, &summary);
                }
                let summary = self.intern(summary);
                if let Some(seen) = self.visited.get_mut(&node.key) {
                    seen.summary = Some(summary);
                }
            }
        }
        if let Some(parent) = self.path.last_mut() {
            merge(&mut parent.summary, &node.summary);
        }
    }

    /// The one copy of `summary` the cache keeps.
    fn intern(&mut self, summary: Summary) -> Rc<Summary> {
        if let Some(known) = self.summaries.get(&summary) {
            return Rc::clone(known);
        }
        let summary = Rc::new(summary);
        self.summaries.insert(Rc::clone(&summary));
        summary
    }

    fn sleep_identities(&self, node: &Node) -> Vec<u64> {
        let mut ids: Vec<u64> = node
            .sleep
            .iter()
            .map(|&(a, _)| {
                if self.options.symmetry {
                    node.keys[a]
                } else {
                    node.keys[a] ^ (a as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                }
            })
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Takes a step of `attempt` from the last node and pushes the state it
    /// leads to (or settles it: a cut, a terminal state).
    fn take(&mut self, explorer: &Explorer, run: &mut Run<'_>, attempt: usize) -> Result<()> {
        let depth = self.path.len() - 1;
        let mut clocks = self.path[depth].clocks.clone();
        let progressed = run.step(attempt)? != Progress::Blocked;
        self.stats.steps += 1;
        let (footprint, woken) = run.last_effects().clone();
        // This step's clock, and the earlier steps it races with: those it
        // depends on that do not happen before it through a later one
        // (walking back, each dependency joins the clock first).
        let mut clock = clocks.row(attempt).to_vec();
        let mut races = std::mem::take(&mut self.scratch.races);
        races.clear();
        for (i, node) in self.path[..depth].iter().enumerate().rev() {
            let earlier = node.taken.as_ref().expect("a step on the path");
            if earlier.attempt == attempt || !earlier.footprint.conflicts(&footprint) {
                continue;
            }
            if earlier.clock[earlier.attempt] > clock[earlier.attempt] {
                races.push(i);
                join(&mut clock, &earlier.clock);
            }
        }
        clock[attempt] += 1;
        let event = Event {
            attempt,
            footprint,
            progressed,
            woken,
            clock,
        };
        for &i in &races {
            self.reverse(i, depth, &event, false);
        }
        self.scratch.races = races;
        clocks.row_mut(attempt).copy_from_slice(&event.clock);
        for &w in &event.woken {
            join(clocks.row_mut(w), &event.clock);
        }
        // A step that ends other attempts (a power loss kills every attempt
        // with a connection on its machine) races with each one's next step,
        // which no later step of this run can show, since it never comes:
        // each of them that could run here is explored here too. (Found
        // when a split search, whose odd workers take the last runnable
        // attempt first, took the power loss before a commit and never
        // tried the commit first.)
        let node = self.path.last_mut().expect("a node");
        let statuses = run.statuses();
        #[cfg(test)]
        let statuses = if crate::reintroduced::on(crate::reintroduced::Bug::KillWithoutRace) {
            &[][..]
        } else {
            statuses
        };
        for k in 0..node.live.len().min(statuses.len()) {
            let other = node.live[k];
            if other != attempt && statuses[other].is_over() && node.enabled.contains(&other) {
                node.add_backtrack(other);
            }
        }
        // The child's sleep set: what slept here or was explored here, and
        // stays independent of this step.
        let mut sleep: Vec<(usize, Footprint)> = node
            .sleep
            .iter()
            .chain(node.done.iter())
            .filter(|(a, f)| *a != attempt && !f.conflicts(&event.footprint))
            .copied()
            .collect();
        sleep.dedup_by_key(|(a, _)| *a);
        node.done.push((attempt, event.footprint));
        let class = self.classes[attempt];
        add_to(&mut node.summary, class, event.footprint);
        node.taken = Some(event);
        self.push(explorer, run, sleep, clocks)
    }

    /// A race between the step at `i` and `event` (taken at `depth`, or,
    /// `hidden`, a step below a cut whose clock is only known to be at least
    /// `event.clock`): adds to the backtrack set at `i` an attempt that starts
    /// the reversed order.
    fn reverse(&mut self, i: usize, depth: usize, event: &Event, hidden: bool) {
        if self.path[i].saturated() {
            return;
        }
        let earlier = self.path[i].taken.as_ref().expect("a step on the path");
        let (p, mark) = (earlier.attempt, earlier.clock[earlier.attempt]);
        // The steps between that do not happen after the earlier one (their
        // nodes' indices), then the later step: their initials can start
        // the reversed order.
        let mut between = std::mem::take(&mut self.scratch.between);
        between.clear();
        between.extend((i + 1..depth).filter(|&k| {
            self.path[k]
                .taken
                .as_ref()
                .is_some_and(|e| e.clock[p] < mark)
        }));
        // A hidden step may follow any of the steps between (its clock is
        // not known): it is an initial only if there are none; otherwise
        // the first of them is one, and starts the reversed order as well.
        let with_event = !hidden || between.is_empty();
        let path = &self.path;
        let step = |k: usize| -> &Event {
            match between.get(k) {
                Some(&n) => path[n].taken.as_ref().expect("a step on the path"),
                None => event,
            }
        };
        let count = between.len() + usize::from(with_event);
        let initials = &mut self.scratch.initials;
        initials.clear();
        for k in 0..count {
            let e = step(k);
            let preceded = (0..k).any(|j| {
                let m = step(j);
                e.clock[m.attempt] >= m.clock[m.attempt]
            });
            if !preceded && !initials.contains(&e.attempt) {
                initials.push(e.attempt);
            }
        }
        self.scratch.between = between;
        let initials = &self.scratch.initials;
        let node = &mut self.path[i];
        if initials.iter().any(|a| node.backtrack.contains(a)) {
            return;
        }
        let pick = if initials.contains(&event.attempt) {
            Some(event.attempt)
        } else {
            initials.first().copied()
        };
        match pick.filter(|a| node.enabled.contains(a)) {
            Some(a) => node.add_backtrack(a),
            None => {
                for k in 0..node.enabled.len() {
                    let a = node.enabled[k];
                    if !node.backtrack.contains(&a) {
                        node.add_backtrack(a);
                    }
                }
            }
        }
    }

    /// Treats attempt `attempt`, whose clock is `clock`, as taking a step
    /// with `footprint` after the path (a step a cut hides): every earlier
    /// conflicting step not ordered before it races with it.
    fn hidden(&mut self, attempt: usize, clock: &[u32], footprint: &Footprint) {
        let depth = self.path.len() - 1;
        let mut races = std::mem::take(&mut self.scratch.races);
        races.clear();
        races.extend((0..depth).filter(|&i| {
            !self.path[i].saturated()
                && self.path[i].taken.as_ref().is_some_and(|earlier| {
                    earlier.attempt != attempt
                        && earlier.clock[earlier.attempt] > clock[earlier.attempt]
                        && earlier.footprint.conflicts(footprint)
                })
        }));
        if races.is_empty() {
            self.scratch.races = races;
            return;
        }
        let event = Event {
            attempt,
            footprint: *footprint,
            progressed: true,
            woken: Vec::new(),
            clock: clock.to_vec(),
        };
        for &i in &races {
            self.reverse(i, depth, &event, true);
        }
        self.scratch.races = races;
    }

    /// Settles the state `run` is in, reached from the last node (or the
    /// initial state): a violation, a cut or a new node on the path.
    fn push(
        &mut self,
        explorer: &Explorer,
        run: &mut Run<'_>,
        sleep: Vec<(usize, Footprint)>,
        clocks: Clocks,
    ) -> Result<()> {
        let keys = run.attempt_keys();
        // Read at each root: a class is fixed for the attempt's life.
        if self.path.is_empty() {
            self.classes = (0..keys.len()).map(|i| run.class_of(i)).collect();
        }
        let enabled = run.runnable();
        let live = (0..keys.len())
            .filter(|&i| !run.statuses()[i].is_over())
            .collect();
        let node = Node {
            key: run.state_key_with(self.options.symmetry, &keys),
            enabled,
            live,
            keys,
            backtrack: Vec::new(),
            covered: 0,
            done: Vec::new(),
            sleep,
            taken: None,
            clocks,
            summary: Vec::new(),
            checkpoint: None,
        };
        self.path.push(node);
        let depth = self.path.len() - 1;
        self.stats.max_depth = self.stats.max_depth.max((self.root.len() + depth) as u64);
        if self.options.state_caching {
            let identities = self.sleep_identities(&self.path[depth]);
            let key = self.path[depth].key;
            match self.visited.get_mut(&key) {
                // Under way: a cycle, back to a state of this very path.
                Some(seen) if seen.summary.is_none() => {
                    let from = self.path[..depth]
                        .iter()
                        .rposition(|n| n.key == key)
                        .ok_or_else(|| {
                            Error::Defect(
                                "a state under way is not on the search's path".to_string(),
                            )
                        })?;
                    let cycle = Cycle::new(
                        run.schedule(),
                        self.root.len() + from,
                        &self.path[from].keys,
                        &self.path[depth].keys,
                    )?;
                    self.endings.record_cycle(&mut self.stats, cycle);
                    self.cut(None);
                    return Ok(());
                }
                Some(seen) if is_subset(&seen.sleep, &identities) => {
                    let summary = seen.summary.clone();
                    self.cut(summary);
                    return Ok(());
                }
                Some(seen) => {
                    // Fewer attempts asleep now: explore it again.
                    seen.earlier = seen.summary.take();
                }
                None => {
                    // Another worker may have explored it completely.
                    let shared = self.shared.as_ref();
                    if let Some(summary) = shared.and_then(|s| s.get(key, &identities)) {
                        self.cut(Some(Rc::new(summary)));
                        return Ok(());
                    }
                    self.visited.insert(
                        key,
                        Seen {
                            sleep: identities.into(),
                            summary: None,
                            earlier: None,
                        },
                    );
                    self.stats.distinct_states = self.visited.len() as u64;
                }
            }
        }
        // Stopped: no attempt can take a step.
        if self.path[depth].enabled.is_empty() {
            let (path, root) = (&self.path, &self.root_counted);
            self.endings
                .record(&mut self.stats, explorer, run, || counted(path, root))?;
            self.finish_node();
            return Ok(());
        }
        // A run comes back here only for another branch: a state with one
        // attempt awake has none.
        let node = &self.path[depth];
        let awake = node
            .enabled
            .iter()
            .filter(|&&a| !node.sleep.iter().any(|&(s, _)| s == a))
            .count();
        if self.options.rewind && awake > 1 {
            self.path[depth].checkpoint = run.checkpoint();
        }
        Ok(())
    }

    /// Every attempt not over at the last node is treated as taking, after
    /// the path, the steps `summary` lists for its class.
    fn hide(&mut self, summary: &Summary) {
        let node = self.path.last_mut().expect("a node");
        let clocks = std::mem::take(&mut node.clocks);
        let node = self.path.last().expect("a node");
        let classes = &self.classes;
        let mut pairs = std::mem::take(&mut self.scratch.hidden);
        pairs.clear();
        pairs.extend(summary.iter().flat_map(|&(class, footprint)| {
            node.live
                .iter()
                .filter(move |&&a| classes[a] == class)
                .map(move |&a| (a, footprint))
        }));
        for &(a, footprint) in &pairs {
            self.hidden(a, clocks.row(a), &footprint);
        }
        self.scratch.hidden = pairs;
        self.path.last_mut().expect("a node").clocks = clocks;
    }

    /// A cut at the last node: the hidden steps (its summary, or everything
    /// for a state still being explored) race with the path; the node leaves.
    fn cut(&mut self, summary: Option<Rc<Summary>>) {
        let summary = summary.unwrap_or_else(|| {
            let node = self.path.last().expect("a node");
            let mut all = Summary::new();
            for &a in &node.live {
                add_to(&mut all, self.classes[a], Footprint::GLOBAL);
            }
            Rc::new(all)
        });
        self.hide(&summary);
        self.path.pop();
        if let Some(parent) = self.path.last_mut() {
            merge(&mut parent.summary, &summary);
        }
    }

    /// Goes forward from the last node, taking the first attempt each time,
    /// until the run is cut, ends, or every runnable attempt is asleep.
    fn walk(&mut self, explorer: &Explorer, run: &mut Run<'_>) -> Result<()> {
        loop {
            let Some(node) = self.path.last_mut() else {
                return Ok(());
            };
            if node.taken.is_some() || node.enabled.is_empty() {
                return Ok(());
            }
            if self.path.len() > MAX_RUN_STEPS {
                return Err(Error::OverBudget(format!(
                    "a run of scenario {:?} exceeded {MAX_RUN_STEPS} steps; an attempt may loop forever",
                    explorer.scenario_id(),
                )));
            }
            // Continue the last attempt first, as the plain search does.
            let depth = self.path.len() - 1;
            let last = depth
                .checked_sub(1)
                .and_then(|d| self.path[d].taken.as_ref())
                .map(|e| e.attempt);
            let node = self.path.last_mut().expect("a node");
            let awake = |a: &usize| !node.sleep.iter().any(|(s, _)| s == a);
            let reverse = self.reverse;
            let first = last
                .filter(|l| node.enabled.contains(l) && awake(l))
                .or_else(|| {
                    if reverse {
                        node.enabled.iter().rev().copied().find(|a| awake(a))
                    } else {
                        node.enabled.iter().copied().find(|a| awake(a))
                    }
                });
            let Some(first) = first else {
                // Every runnable attempt sleeps: all that follows was explored.
                self.finish_node();
                return Ok(());
            };
            node.add_backtrack(first);
            self.take(explorer, run, first)?;
        }
    }

    /// The first node: the initial state.
    fn visit(&mut self, explorer: &Explorer, run: &mut Run<'_>) -> Result<()> {
        let attempts = run.statuses().len();
        let clocks = Clocks::new(attempts);
        self.push(explorer, run, Vec::new(), clocks)
    }
}

/// Steps each attempt took on `path` after the root, where they had taken
/// `root` steps, blocked steps not counted.
fn counted(path: &[Node], root: &[usize]) -> Vec<usize> {
    let mut counted = root.to_vec();
    for event in path.iter().filter_map(|n| n.taken.as_ref()) {
        if event.progressed {
            counted[event.attempt] += 1;
        }
    }
    counted
}

/// Every attempt's vector clock, in one allocation (a node copies its
/// parent's at every step).
#[derive(Debug, Clone, Default)]
struct Clocks {
    attempts: usize,
    cells: Vec<u32>,
}

impl Clocks {
    fn new(attempts: usize) -> Self {
        Clocks {
            attempts,
            cells: vec![0; attempts * attempts],
        }
    }

    fn row(&self, attempt: usize) -> &[u32] {
        &self.cells[attempt * self.attempts..(attempt + 1) * self.attempts]
    }

    fn row_mut(&mut self, attempt: usize) -> &mut [u32] {
        &mut self.cells[attempt * self.attempts..(attempt + 1) * self.attempts]
    }
}

fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}
