//! The reductions of the exhaustive search change nothing it proves: on
//! every built-in (in both journal modes) and every design of the
//! conformance set, the verdict, the set of distinct final states and the
//! shortest counterexample are the same with every reduction, without each
//! one, and without any (where the unreduced search fits in its budget).
//! And a bug that one rare interleaving of commuting steps reaches is still
//! found with partial-order reduction on.

#![cfg(not(target_family = "wasm"))]

use std::collections::HashSet;

use replayground::catalog;
use replayground::search::Shard;
use replayground::search::{self, Explorer};
use replayground::search::{Dfs, Options};
use replayground::Scenario;

mod common;
use common::DESIGNS;

/// The runs a search may take here before it is left out of the comparison.
/// A debug build (`cargo test`) compares fewer; `scripts/test.sh` also runs
/// this file in release, where every configuration of the set is compared.
const BUDGET: u64 = if cfg!(debug_assertions) {
    1_500
} else {
    20_000
};

/// Whether this build compares every configuration (release) or every
/// reduction against the search without partial-order reduction (debug).
const FULL: bool = !cfg!(debug_assertions);

#[derive(Debug, PartialEq)]
struct Proof {
    violated: bool,
    final_states: HashSet<u64>,
    /// Steps of the shortest counterexample, and whether it is proved shortest.
    shortest: Option<(usize, bool)>,
    /// Whether some run went round for ever.
    loops: bool,
}

/// The search's proof, or `None` if it did not finish within the budget.
fn prove(explorer: &Explorer, options: Options) -> Option<(Proof, u64)> {
    prove_sliced(explorer, options, 5_000)
}

/// The proof of a search advanced `slice` runs at a time: the states it
/// explores may differ with the slicing (see `Dpor`'s rewinding), never
/// what it proves.
fn prove_sliced(explorer: &Explorer, options: Options, slice: u64) -> Option<(Proof, u64)> {
    let mut search = Dfs::new(Options {
        max_runs: Some(BUDGET),
        ..options
    });
    while !search.advance(explorer, slice).unwrap() {}
    // A run rewound to a checkpoint is in the state the checkpoint was
    // taken in (its key is checked each time).
    assert_eq!(
        search.rewind_misses(),
        0,
        "a rewound run was not in its state"
    );
    let report = explorer.report_search(&search, false).unwrap();
    if !report.complete {
        return None;
    }
    Some((
        Proof {
            violated: report.stats.violations > 0,
            final_states: search.final_states().clone(),
            shortest: report.counterexample.map(|c| (c.steps, c.shortest)),
            loops: report.stats.loops(),
        },
        report.stats.runs,
    ))
}

/// The proof of a search split across `workers` workers sharing a cache,
/// advanced a few runs each in turn (as threads would, in one order of
/// many), merged as the threads' and the page's workers' parts are.
fn prove_split(build: &dyn Fn() -> Box<dyn Scenario>, workers: usize, share: bool) -> Proof {
    let what = format!("split across {workers} workers");
    let (report, parts) = common::search_in_turn(&what, build, Options::default(), workers, share);
    Proof {
        violated: report.stats.violations > 0,
        final_states: parts
            .iter()
            .flat_map(|p| p.final_state_keys().unwrap())
            .collect(),
        shortest: report.counterexample.map(|c| (c.steps, c.shortest)),
        loops: report.stats.loops(),
    }
}

fn configurations() -> Vec<(&'static str, Options)> {
    let all = Options::default();
    // Not a reduction, but it must change nothing either: every run
    // replayed from the start instead of from the deepest checkpoint.
    let replaying = (
        "replaying every run from the start",
        Options {
            rewind: false,
            ..all
        },
    );
    if !FULL {
        return vec![
            ("every reduction", all),
            (
                "without partial-order reduction",
                Options {
                    partial_order: false,
                    ..all
                },
            ),
            replaying,
        ];
    }
    vec![
        ("every reduction", all),
        replaying,
        (
            "without state caching",
            Options {
                state_caching: false,
                ..all
            },
        ),
        (
            "without symmetry",
            Options {
                symmetry: false,
                ..all
            },
        ),
        (
            "without partial-order reduction",
            Options {
                partial_order: false,
                ..all
            },
        ),
        ("without any reduction", Options::NONE),
    ]
}

/// Compares every configuration on one scenario; returns whether every one
/// was compared with the search with every reduction (the search without
/// any reduction finished within the budget).
fn same_proof_every_way(name: &str, build: &dyn Fn() -> Box<dyn Scenario>) -> bool {
    let started = std::time::Instant::now();
    let explorer = Explorer::new(build()).unwrap();
    let count = configurations().len();
    let mut configurations = configurations().into_iter();
    let (_, all) = configurations.next().unwrap();
    let (reference, runs) =
        prove(&explorer, all).unwrap_or_else(|| panic!("{name}: the reduced search must finish"));
    assert!(!reference.final_states.is_empty(), "{name}: no final state");
    // Advanced one run at a time (every run a new one, restored to its
    // checkpoint): the same proof.
    let (one_by_one, _) = prove_sliced(&explorer, all, 1)
        .unwrap_or_else(|| panic!("{name}: the search one run at a time must finish"));
    assert_eq!(
        one_by_one, reference,
        "{name}: advanced one run at a time, the proof differs"
    );
    // Split across workers: the same proof.
    for workers in if FULL { &[2, 3][..] } else { &[2][..] } {
        let workers = *workers;
        for share in [true, false] {
            let split = prove_split(build, workers, share);
            assert_eq!(
                split, reference,
                "{name}: split across {workers} workers (sharing a cache: {share}), the proof differs"
            );
        }
    }
    let mut compared = 0;
    for (what, options) in configurations {
        let Some((proof, other_runs)) = prove(&explorer, options) else {
            continue;
        };
        assert_eq!(
            proof.violated, reference.violated,
            "{name}: the verdict {what} differs"
        );
        // Partial-order reduction without state caching cannot tell a state
        // met again: it runs a loop to the step bound, where the run ends in
        // a state the others never reach (the verdict is the same).
        if reference.loops && options.partial_order && !options.state_caching {
            compared += 1;
            continue;
        }
        assert_eq!(
            proof.final_states.len(),
            reference.final_states.len(),
            "{name}: {what}, the final states differ ({other_runs} runs against {runs})"
        );
        assert_eq!(
            proof.final_states, reference.final_states,
            "{name}: {what}, the final states differ"
        );
        assert_eq!(
            proof.shortest, reference.shortest,
            "{name}: the shortest counterexample {what} differs"
        );
        compared += 1;
    }
    eprintln!(
        "{name}: {compared} compared, {runs} runs reduced, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    compared == count - 1
}

#[test]
fn every_builtin_proves_the_same_with_and_without_each_reduction() {
    let mut unreduced = 0;
    let mut scenarios_compared = 0;
    for entry in catalog::all() {
        for params in [serde_json::json!({}), serde_json::json!({"journal": "wal"})] {
            if catalog::build_with(entry.id, &params).is_err() {
                continue;
            }
            let name = format!("{} {params}", entry.id);
            let every_way =
                same_proof_every_way(&name, &|| catalog::build_with(entry.id, &params).unwrap());
            scenarios_compared += 1;
            if every_way {
                unreduced += 1;
            }
        }
    }
    eprintln!("{scenarios_compared} scenarios, {unreduced} also without any reduction");
    assert!(scenarios_compared >= 40, "{scenarios_compared} scenarios");
    // Most are small enough to search without any reduction too.
    if FULL {
        assert!(
            unreduced >= 30,
            "{unreduced} compared without any reduction"
        );
    }
}

#[test]
fn every_conformance_design_proves_the_same_with_and_without_each_reduction() {
    let mut unreduced = 0;
    for (name, source) in DESIGNS {
        let file = catalog::parse(source, name).unwrap();
        let every_way =
            same_proof_every_way(name, &|| file.build(&serde_json::Value::Null).unwrap());
        if every_way {
            unreduced += 1;
        }
    }
    eprintln!(
        "{} designs, {unreduced} also without any reduction",
        DESIGNS.len()
    );
    if FULL {
        assert!(
            unreduced >= 12,
            "{unreduced} compared without any reduction"
        );
    }
}

/// Three writers on three databases and a reader that reads two of them, one
/// at a time. The reader sees w2's write without w1's (as if w2 had come
/// first: a "torn" read) only if it reads `one` before w1 commits and `two`
/// after w2 commits: two races among steps that mostly commute, one order of
/// them among many. A third writer on its own database multiplies the orders.
const RARE: &str = r#"
title = "A torn read that one interleaving reaches"
fails = true

[databases.one]
schema = "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (0);"
[databases.two]
schema = "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (0);"
[databases.three]
schema = "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (0);"
[databases.seen]
schema = "CREATE TABLE seen (a INTEGER, b INTEGER);"

[[attempts]]
role = "w1"
steps = [
  { name = "begin", database = "one", sql = "BEGIN IMMEDIATE" },
  { name = "write", database = "one", sql = "UPDATE t SET v = 1" },
  { name = "commit", database = "one", sql = "COMMIT", on.ok = { finish = "written" } },
]

[[attempts]]
role = "w2"
steps = [
  { name = "begin", database = "two", sql = "BEGIN IMMEDIATE" },
  { name = "write", database = "two", sql = "UPDATE t SET v = 1" },
  { name = "commit", database = "two", sql = "COMMIT", on.ok = { finish = "written" } },
]

[[attempts]]
role = "noise"
steps = [
  { name = "begin", database = "three", sql = "BEGIN IMMEDIATE" },
  { name = "write 1", database = "three", sql = "UPDATE t SET v = v + 1" },
  { name = "write 2", database = "three", sql = "UPDATE t SET v = v + 1" },
  { name = "commit", database = "three", sql = "COMMIT", on.ok = { finish = "written" } },
]

[[attempts]]
role = "reader"
steps = [
  { name = "read one", database = "one", sql = "SELECT v FROM t", capture = "a" },
  { name = "read two", database = "two", sql = "SELECT v FROM t", capture = "b" },
  { name = "note", database = "seen", sql = "INSERT INTO seen VALUES (:a, :b)", on.ok = { finish = "read" } },
]

[[checks]]
name = "the reader never sees w2's write without w1's"
database = "seen"
sql = "SELECT count(*) FROM seen WHERE a = 0 AND b = 1"
expect = 0
"#;

#[test]
fn partial_order_reduction_still_finds_a_bug_one_rare_interleaving_reaches() {
    let file = catalog::parse(RARE, "rare").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let (reduced, reduced_runs) = prove(&explorer, Options::default()).unwrap();
    // State caching alone is exact and fits the budget (without it, the
    // 13 steps have over a million orders).
    let caching_only = Options {
        state_caching: true,
        ..Options::NONE
    };
    let (plain, plain_runs) = prove(&explorer, caching_only).unwrap();
    eprintln!("rare: {reduced_runs} runs reduced, {plain_runs} with state caching alone");
    assert!(plain.violated, "the planted bug is reachable");
    assert!(reduced.violated, "the reduced search finds it");
    assert_eq!(reduced, plain);
    assert!(
        reduced_runs * 5 < plain_runs,
        "the reduction is real: {reduced_runs} runs against {plain_runs}"
    );
}

/// Three producers and two relays (the benchmark's largest reach scenario),
/// where two mistakes each lost final states (2,948 of the 2,982 reached):
/// a relay waiting for the producers is let through by any release, even
/// on another database, so which release lets it through depends on the
/// order of steps that touch different databases (a release reads who is
/// blocked); and at a cut, a hidden step's race was reversed by its own
/// attempt, asleep there, instead of by the first step that can start the
/// reversed order. Release builds only (about 45 s): the searches run to
/// their end.
#[test]
fn a_waiting_relay_woken_by_any_release_loses_no_final_state() {
    if !FULL {
        return;
    }
    let source = include_str!("../src/scenarios/reach/three-producers-two-relays.toml");
    let file = catalog::parse(source, "three-producers-two-relays").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let complete = |options: Options, slice: u64| {
        let mut search = Dfs::new(options);
        while !search.advance(&explorer, slice).unwrap() {}
        assert!(explorer.report_search(&search, false).unwrap().complete);
        search.final_states().clone()
    };
    let reduced = complete(Options::default(), 50_000);
    let plain = complete(
        Options {
            partial_order: false,
            ..Options::default()
        },
        50_000,
    );
    assert_eq!(plain.len(), 2982);
    assert_eq!(reduced.len(), plain.len());
    assert_eq!(reduced, plain);
    // In the page's slices of 200 runs (each slice starts from a new run,
    // whose page caches differ: a few runs fewer, the same final states).
    assert_eq!(complete(Options::default(), 200), plain);
}

/// The same search split across two threads sharing a cache of finished
/// states (`replayground explore --workers 2`): the same final states and
/// verdict. Release builds only.
#[test]
fn a_search_split_across_threads_proves_the_same() {
    if !FULL {
        return;
    }
    let source = include_str!("../src/scenarios/reach/three-producers-two-relays.toml");
    let file = catalog::parse(source, "three-producers-two-relays").unwrap();
    let make = || Explorer::new(file.build(&serde_json::Value::Null)?);
    let explorer = make().unwrap();
    let whole = explorer
        .exhaustive(Options::default(), 50_000, |_| true)
        .unwrap();
    for workers in [2, 4] {
        let split = Explorer::exhaustive_parallel(make, Options::default(), workers).unwrap();
        assert!(split.complete);
        assert_eq!(
            split.stats.final_states, whole.stats.final_states,
            "{workers} workers"
        );
        assert_eq!(split.stats.violations > 0, whole.stats.violations > 0);
        assert!(split.reductions.contains(&search::Used::Split { workers }));
    }
}

/// A split search's report covers every shard or none: one shard's part
/// alone, or a part given twice, is refused, not reported as complete.
#[test]
fn parts_merge_only_whole() {
    let build = || catalog::build("idem-check-then-write").unwrap();
    let parts: Vec<_> = (0..2)
        .map(|index| {
            let explorer = Explorer::new(build()).unwrap();
            let mut search = Dfs::new(Options {
                shard: Some(Shard { index, count: 2 }),
                ..Options::default()
            });
            while !search.advance(&explorer, 100).unwrap() {}
            search.part()
        })
        .collect();
    let explorer = Explorer::new(build()).unwrap();
    let merged = explorer.report_parts(&parts, false).unwrap();
    assert!(merged.complete && merged.counterexample.is_some());
    for bad in [
        vec![parts[0].clone()],
        vec![parts[1].clone()],
        vec![parts[0].clone(), parts[0].clone()],
    ] {
        let error = explorer.report_parts(&bad, false).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "invalid parts: give either one whole search's part or every shard's part"
            ),
            "{error}"
        );
    }
}

/// A split search stopped early can go on from every shard's frontier; once
/// one shard was interrupted in the middle of a run (its caller's
/// `setInterrupt`), that run's branch is lost, so the merged report keeps no
/// frontier (nothing to continue from that would skip it), says why, and is
/// not complete.
#[test]
fn an_interrupted_shard_leaves_the_merged_search_without_a_frontier() {
    let build = || catalog::build("outbox-two-relays").unwrap();
    let explorer = Explorer::new(build()).unwrap();
    let parts: Vec<_> = (0..2)
        .map(|index| {
            let mut search = Dfs::new(Options {
                shard: Some(Shard { index, count: 2 }),
                ..Options::default()
            });
            assert!(
                !search.advance(&explorer, 3).unwrap(),
                "shard {index} ended in 3 runs"
            );
            search.part()
        })
        .collect();
    let stopped = explorer.report_parts(&parts, true).unwrap();
    assert!(stopped.frontier.is_some() && !stopped.complete);
    assert_eq!(stopped.bounded_by, Some(search::Bounded::Cancelled));
    let mut lost = parts.clone();
    lost[1].interrupted = true;
    let report = explorer.report_parts(&lost, true).unwrap();
    assert!(report.frontier.is_none(), "{:?}", report.frontier);
    assert!(!report.complete && report.cancelled);
    assert_eq!(report.bounded_by, Some(search::Bounded::Interrupted));
    // The flag crosses between workers with the part, and a part from
    // before it existed reads as not interrupted.
    let json = serde_json::to_value(&lost[1]).unwrap();
    assert_eq!(json["interrupted"], true);
    // Its reductions cross as data and come back as they were.
    let back: replayground::search::Part = serde_json::from_value(json.clone()).unwrap();
    assert!(!back.reductions.is_empty());
    assert_eq!(back.reductions, lost[1].reductions);
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("interrupted");
    let read: replayground::search::Part = serde_json::from_value(old).unwrap();
    assert!(!read.interrupted);
}

/// Going back to a checkpoint instead of replaying every run from the start
/// takes a fraction of the steps and proves the same (two relays delivering
/// two events: 43,548 steps replayed from the start, about 10,400 rewound).
#[test]
fn rewinding_to_checkpoints_takes_a_fraction_of_the_steps() {
    let source = include_str!("../src/scenarios/reach/two-relays-two-events.toml");
    let file = catalog::parse(source, "two-relays-two-events").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let search = |rewind: bool| {
        let mut search = Dfs::new(Options {
            rewind,
            ..Options::default()
        });
        while !search.advance(&explorer, 5_000).unwrap() {}
        let report = explorer.report_search(&search, false).unwrap();
        assert!(report.complete);
        assert_eq!(search.rewind_misses(), 0);
        (report.stats.steps, search.final_states().clone())
    };
    let (rewound, finals) = search(true);
    let (replayed, replayed_finals) = search(false);
    assert_eq!(finals.len(), 72);
    assert_eq!(finals, replayed_finals);
    assert!(
        rewound * 3 < replayed,
        "{rewound} steps rewinding, {replayed} replaying"
    );
}

/// One shard of a search split across one worker is the whole search: its
/// part merges into the report the unsplit search gives (a built-in that
/// fails, one that holds, a livelock, a loop stopped by the step bound).
#[test]
fn a_single_shard_merges_as_the_unsplit_search() {
    let growing = r#"
title = "grows"
[databases.app]
schema = "CREATE TABLE t (id INTEGER PRIMARY KEY);"
[[attempts]]
steps = [ { name = "grow", sql = "INSERT INTO t DEFAULT VALUES", on.ok = { goto = "grow" } } ]
"#;
    type Build = Box<dyn Fn() -> Box<dyn Scenario>>;
    let builtin = |id: &'static str| -> Build { Box::new(move || catalog::build(id).unwrap()) };
    let file = |source: &'static str, name: &'static str| -> Build {
        Box::new(move || {
            catalog::parse(source, name)
                .unwrap()
                .build(&serde_json::Value::Null)
                .unwrap()
        })
    };
    let builds: Vec<(&str, Build)> = vec![
        ("idem-check-then-write", builtin("idem-check-then-write")),
        ("idem-race", builtin("idem-race")),
        (
            "after-you",
            file(include_str!("designs/after-you.toml"), "after-you"),
        ),
        ("growing", file(growing, "growing")),
    ];
    for (name, build) in builds {
        let explorer = Explorer::new(build()).unwrap();
        let mut shard = Dfs::new(Options {
            shard: Some(Shard { index: 0, count: 1 }),
            ..Options::default()
        });
        while !shard.advance(&explorer, 100).unwrap() {}
        let mut whole = Dfs::new(Options::default());
        let unsplit_explorer = Explorer::new(build()).unwrap();
        while !whole.advance(&unsplit_explorer, 100).unwrap() {}
        let merged = explorer.report_parts(&[shard.part()], false).unwrap();
        let unsplit = unsplit_explorer.report_search(&whole, false).unwrap();
        assert!(merged.complete, "{name}: {merged:#?}");
        assert_eq!(merged.stats, unsplit.stats, "{name}");
        assert_eq!(
            merged.counterexample.map(|c| c.schedule),
            unsplit.counterexample.map(|c| c.schedule),
            "{name}"
        );
    }
}

/// A power loss the search may place anywhere (a step of its own, between
/// any two of the others', killing whoever has a connection on its
/// machine): every reduction proves the same, in both journal modes and at
/// every `synchronous` level, and what is durable is part of each final
/// state (two levels reach different ones).
#[test]
fn a_power_loss_anywhere_proves_the_same_with_and_without_each_reduction() {
    let source = include_str!("designs/power-anywhere.toml");
    let file = catalog::parse(source, "power-anywhere").unwrap();
    let mut finals = Vec::new();
    for journal in ["rollback", "wal"] {
        for level in ["off", "normal", "full", "extra"] {
            let params = serde_json::json!({ "journal": journal, "synchronous": level });
            let name = format!("power-anywhere {journal} {level}");
            let build = || file.build(&params).unwrap();
            assert!(
                same_proof_every_way(&name, &build),
                "{name}: the unreduced search must fit its budget"
            );
            let explorer = Explorer::new(build()).unwrap();
            let (proof, _) = prove(&explorer, Options::default()).unwrap();
            assert!(
                proof.violated,
                "{name}: the power going out first loses both rows"
            );
            finals.push(proof.final_states.len());
        }
    }
    eprintln!("power-anywhere final states (rollback, wal × off, normal, full, extra): {finals:?}");
}

/// A full disk the search may place anywhere: every reduction proves the
/// same, in both journal modes. Going back to a checkpoint taken after the
/// disk filled up, the search redoes the open transactions as they were
/// first done (before the disk was full); redone under the full disk, a
/// write failed and the locks differed from the checkpoint's, with
/// partial-order reduction in rollback mode.
#[test]
fn a_full_disk_anywhere_proves_the_same_with_and_without_each_reduction() {
    let source = include_str!("designs/disk-anywhere.toml");
    let file = catalog::parse(source, "disk-anywhere").unwrap();
    for journal in ["rollback", "wal"] {
        let params = serde_json::json!({ "journal": journal });
        let name = format!("disk-anywhere {journal}");
        let build = || file.build(&params).unwrap();
        assert!(
            same_proof_every_way(&name, &build),
            "{name}: the unreduced search must fit its budget"
        );
    }
}

/// Designs a configuration once called wrong ([`common::SOUNDNESS_DESIGNS`]):
/// every configuration proves the same, the set of final states included
/// (but for runs that go round for ever), and the verdict is the one each
/// file declares.
#[test]
fn every_soundness_design_proves_the_same_with_and_without_each_reduction() {
    for (name, source) in common::SOUNDNESS_DESIGNS {
        let file = catalog::parse(source, name).unwrap();
        let build = || file.build(&serde_json::Value::Null).unwrap();
        assert!(
            same_proof_every_way(name, &build),
            "{name}: the unreduced search must fit its budget"
        );
        let declared = build().declared().expect("each declares its verdict");
        let explorer = Explorer::new(build()).unwrap();
        let (proof, _) = prove(&explorer, Options::default()).unwrap();
        assert_eq!(
            declared.agrees(proof.violated, true),
            Some(true),
            "{name}: the verdict is not the one it declares"
        );
    }
}
