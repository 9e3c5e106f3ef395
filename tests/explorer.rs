//! The scheduler and explorer, natively and in the browser from one body:
//! the correct design passes every schedule, the broken ones are caught with
//! a shortest counterexample that replays to the same failure, and every
//! recorded schedule replays to the same trace.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search;
use replayground::search::{ExploreReport, Explorer};
use replayground::store::LockLevel;
use replayground::{Manual, Pct, Random, RoundRobin, Scheduler};
use replayground::{Scenario, Schedule, Status, Verdict};

/// A scenario by id; "idem-race-2" is the race with two attempts.
fn scenario(id: &str) -> replayground::Result<Box<dyn Scenario>> {
    match id {
        "idem-race-2" => catalog::build_with("idem-race", &serde_json::json!({"attempts": 2})),
        _ => catalog::build(id),
    }
}

fn exhaustive(id: &str, options: search::Options) -> ExploreReport {
    let scenario = scenario(id).unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    explorer.exhaustive(options, 1000, |_| true).unwrap()
}

#[test]
fn the_correct_design_passes_every_schedule_of_eight_racing_requests() {
    let report = exhaustive("idem-race", search::Options::default());
    assert!(report.complete, "{:?}", report.bounded_by);
    assert!(report.counterexample.is_none());
    assert_eq!(report.stats.violations, 0);
    // One final state (one creator, seven replays) among dozens explored.
    assert_eq!(report.stats.final_states, 1, "{:?}", report.stats);
    assert!(report.stats.distinct_states > 50, "{:?}", report.stats);
    assert_eq!(report.naive_interleavings_uniform, "1.9e31");
}

#[test]
fn the_correct_design_and_the_retry_policy_pass_every_schedule_of_two() {
    for id in ["idem-race-2", "idem-deferred-retry"] {
        for options in [
            search::Options::default(),
            search::Options {
                state_caching: false,
                symmetry: false,
                ..search::Options::default()
            },
        ] {
            let report = exhaustive(id, options);
            assert!(report.complete, "{id}");
            assert!(
                report.counterexample.is_none(),
                "{id}: {:?}",
                report.counterexample
            );
        }
    }
}

/// The page lands on a design a newcomer can take in at a glance and whose
/// first search shows how it fails: declared to fail, two attempts, and a
/// shortest counterexample of a few steps.
#[test]
fn the_landing_scenario_is_short_and_broken() {
    let entry = catalog::entry(catalog::LANDING).unwrap();
    assert!(entry.fails, "{}", entry.id);
    let scenario = scenario(catalog::LANDING).unwrap();
    assert_eq!(scenario.attempts().unwrap().len(), 2);
    let report = Explorer::new(scenario)
        .unwrap()
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap();
    let counterexample = report.counterexample.expect("the landing design fails");
    assert!(counterexample.shortest);
    assert!(counterexample.steps <= 16, "{}", counterexample.steps);
}

#[test]
fn check_then_write_is_caught_with_a_shortest_counterexample_that_replays() {
    let scenario = scenario("idem-check-then-write").unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    let report = explorer
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap();
    let counterexample = report.counterexample.expect("the broken design is caught");
    assert!(counterexample.shortest);
    assert_eq!(counterexample.steps, 14, "{}", counterexample.schedule);
    let failed: Vec<&str> = counterexample
        .failed_checks
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert!(failed.contains(&"(effects, receipts)"), "{failed:?}");
    assert!(
        counterexample
            .failed_checks
            .iter()
            .any(|c| c.name == "(effects, receipts)" && c.actual == "(2, 1)"),
        "two effects for one key"
    );
    assert_eq!(counterexample.explanation.len(), 14);
    assert!(
        counterexample
            .explanation
            .iter()
            .any(|s| s.contains("found no receipt for key \"intent-a\" because A had")),
        "{:#?}",
        counterexample.explanation
    );

    // The schedule replays to the same failure, step by step.
    let schedule = Schedule::decode(&counterexample.schedule).unwrap();
    let replayed = explorer.replay(&schedule, true).unwrap();
    assert!(!replayed.passed);
    assert_eq!(replayed.failed_checks(), counterexample.failed_checks);
    assert_eq!(replayed.trace, counterexample.run.trace);

    // No shorter run fails: every shorter schedule prefix is not a failing run.
    let no_reduction = exhaustive(
        "idem-check-then-write",
        search::Options {
            state_caching: false,
            symmetry: false,
            ..search::Options::default()
        },
    );
    assert!(no_reduction.stats.violations > 0);
    assert!(
        no_reduction.stats.runs > report.stats.runs,
        "reductions cut runs"
    );
}

#[test]
fn a_deferred_begin_deadlocks_and_the_verdict_names_who_waits_for_whom() {
    let report = exhaustive("idem-deferred", search::Options::default());
    let counterexample = report.counterexample.expect("the deadlock is found");
    match &counterexample.run.verdict {
        Verdict::Deadlock { waits } => {
            assert_eq!(
                waits,
                &vec![
                    "A (holds PENDING) waits for B (holds SHARED)".to_string(),
                    "B (holds SHARED) waits for A (holds PENDING)".to_string(),
                ]
            );
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
    assert_eq!(counterexample.steps, 8);
}

#[test]
fn every_recorded_random_and_pct_run_replays_to_the_same_trace() {
    for id in ["idem-race", "idem-check-then-write", "idem-deferred-retry"] {
        let scenario = scenario(id).unwrap();
        let explorer = Explorer::new(scenario).unwrap();
        for seed in 0..25u64 {
            let mut schedulers: Vec<Box<dyn Scheduler>> = vec![
                Box::new(Random::new(seed)),
                Box::new(Pct::new(seed, 3, 40).unwrap()),
            ];
            for scheduler in &mut schedulers {
                let first = explorer.run(scheduler.as_mut(), true).unwrap();
                let schedule = Schedule::decode(&first.schedule).unwrap();
                let again = explorer.replay(&schedule, true).unwrap();
                assert_eq!(first.trace, again.trace, "{id} {}", scheduler.describe());
                assert_eq!(first.checks, again.checks);
                assert_eq!(schedule.encode(), first.schedule);
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let scenario = scenario("idem-race").unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    let a = explorer.run(&mut Random::new(42), false).unwrap();
    let b = explorer.run(&mut Random::new(42), false).unwrap();
    let c = explorer.run(&mut Random::new(43), false).unwrap();
    assert_eq!(a.schedule, b.schedule);
    assert_ne!(a.schedule, c.schedule, "another seed, another interleaving");
    let rr = explorer.run(&mut RoundRobin, false).unwrap();
    assert!(rr.schedule.starts_with("ABCDEFGH"), "{}", rr.schedule);
}

#[test]
fn a_trace_shows_sql_locks_changed_rows_and_committed_tables() {
    let scenario = scenario("idem-race-2").unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    let mut manual = Manual::new([0, 1, 0, 0, 0, 0, 1, 1, 1]);
    let result = explorer.run(&mut manual, true).unwrap();
    assert!(result.passed, "{:?}", result.checks);
    let trace = result.trace.unwrap();
    assert_eq!(trace[0].report.sql.as_deref(), Some("BEGIN IMMEDIATE"));
    assert_eq!(trace[0].locks[0].level, LockLevel::Reserved);
    assert!(matches!(
        trace[1].report.progress,
        replayground::Progress::Blocked
    ));
    assert!(
        trace[1].report.note.contains("SQLITE_BUSY"),
        "{}",
        trace[1].report.note
    );
    let insert = &trace[3];
    assert_eq!(insert.report.name, "insert effect");
    assert_eq!(insert.changes.len(), 1);
    assert_eq!(insert.changes[0].table, "effects");
    assert_eq!(insert.changes[0].op, replayground::store::ChangeOp::Insert);
    // Not committed yet: the committed tables are still empty.
    assert!(insert.tables["orders.db"]["effects"].rows.is_empty());
    let commit = &trace[5];
    assert_eq!(commit.tables["orders.db"]["effects"].rows.len(), 1);
    assert_eq!(commit.locks[0].level, LockLevel::None);
    assert!(matches!(
        &result.statuses[1],
        Status::Finished { outcome } if outcome.kind == "replay"
    ));
}

#[test]
fn schedules_that_do_not_fit_give_clear_errors() {
    let scenario = scenario("idem-race-2").unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    let error = |text: &str| {
        explorer
            .replay(&Schedule::decode(text).unwrap(), false)
            .unwrap_err()
            .to_string()
    };
    assert!(
        error("Z").contains("step 1 names attempt Z, but this scenario has attempts A to B"),
        "{}",
        error("Z")
    );
    assert!(
        error("AB").contains("ends after 2 steps"),
        "{}",
        error("AB")
    );
    assert!(
        error("A9B9").contains("which cannot run then"),
        "{}",
        error("A9B9")
    );
    let good = explorer.run(&mut RoundRobin, false).unwrap().schedule;
    assert!(error(&format!("{good}A")).contains("the run ended after"));
    // And the explorer still works afterwards: nothing was left half-done.
    assert!(explorer.run(&mut RoundRobin, false).unwrap().passed);
}

#[test]
fn manual_picks_of_an_attempt_that_cannot_run_are_refused() {
    let scenario = scenario("idem-race-2").unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    let mut run = explorer.start(false).unwrap();
    run.step(0).unwrap();
    run.step(1).unwrap(); // B is refused the lock and blocks
    let error = run.step(1).unwrap_err().to_string();
    assert_eq!(
        error,
        "invalid attempt: B cannot take a step now (runnable: A)"
    );
    assert!(run.step(7).is_err());
}

#[test]
fn bounded_searches_say_so() {
    let bounded = exhaustive(
        "idem-check-then-write",
        search::Options {
            preemption_bound: Some(0),
            ..search::Options::default()
        },
    );
    assert!(!bounded.complete);
    assert!(matches!(
        bounded.bounded_by,
        Some(search::Bounded::PreemptionBound { cut }) if cut > 0
    ));
    // The check-then-write race needs a preemption: with none allowed it is missed.
    assert!(bounded.counterexample.is_none());

    let budget = exhaustive(
        "idem-race",
        search::Options {
            max_runs: Some(3),
            ..search::Options::default()
        },
    );
    assert!(!budget.complete);
    assert_eq!(budget.stats.runs, 3);
    assert_eq!(
        budget.bounded_by,
        Some(search::Bounded::RunBudget { runs: 3 })
    );
    // The JSON and the command line write it as a sentence.
    assert_eq!(
        serde_json::to_value(&budget).unwrap()["boundedBy"],
        "run budget of 3 runs"
    );
    assert!(!budget.cancelled);

    let scenario = scenario("idem-race").unwrap();
    let explorer = Explorer::new(scenario).unwrap();
    let cancelled = explorer
        .exhaustive(search::Options::default(), 5, |_| false)
        .unwrap();
    assert_eq!(cancelled.bounded_by, Some(search::Bounded::Cancelled));
    assert!(cancelled.cancelled);
    assert_eq!(cancelled.stats.runs, 5);
}

#[test]
fn an_unknown_scenario_is_a_clear_error() {
    let error = catalog::build("nope").err().unwrap().to_string();
    assert!(error.starts_with("invalid scenario: unknown scenario \"nope\"; known: idem-race"));
}

/// A search stopped by its budget, or cancelled, and then continued slice by
/// slice covers exactly what one uninterrupted search covers: the same runs,
/// states, final states and counterexample. Before it is over it says what is
/// left; once over, nothing is left to continue.
#[test]
fn a_stopped_search_continues_where_it_stopped() {
    for id in [
        "outbox-two-relays-no-inbox",
        "inbox-retention",
        "idem-check-then-write",
    ] {
        for partial_order in [true, false] {
            let options = search::Options {
                partial_order,
                ..search::Options::default()
            };
            let explorer = Explorer::new(scenario(id).unwrap()).unwrap();
            let mut whole = search::Dfs::new(options);
            while !whole.advance(&explorer, 1000).unwrap() {}
            let whole_report = explorer.report_search(&whole, false).unwrap();
            assert!(whole_report.complete && whole_report.frontier.is_none());

            let mut budgeted = search::Dfs::new(search::Options {
                max_runs: Some(2),
                ..options
            });
            let mut stops = 0;
            loop {
                while !budgeted.advance(&explorer, 1).unwrap() {}
                let report = explorer.report_search(&budgeted, false).unwrap();
                if report.complete {
                    assert!(!budgeted.extend(None), "{id}: nothing is left");
                    break;
                }
                stops += 1;
                assert_eq!(
                    report.bounded_by,
                    Some(search::Bounded::RunBudget {
                        runs: report.stats.runs
                    })
                );
                let frontier = report.frontier.expect("a stopped search says what is left");
                assert!(frontier.branches >= 1);
                assert!(frontier.shallowest < report.stats.max_depth);
                // Every other stop goes on with its first budget; the
                // others for three more runs.
                assert!(budgeted.extend(if stops % 2 == 0 { None } else { Some(3) }));
            }
            let report = explorer.report_search(&budgeted, false).unwrap();
            assert!(stops >= 2, "{id}: {stops} stops");
            assert_eq!(
                report.stats, whole_report.stats,
                "{id} (partial order {partial_order})"
            );
            assert_eq!(budgeted.final_states(), whole.final_states(), "{id}");
            assert_eq!(
                report.counterexample.map(|c| c.schedule),
                whole_report.counterexample.map(|c| c.schedule),
                "{id}"
            );
        }
    }
}

#[test]
fn a_cancelled_search_continues_to_the_same_end() {
    let explorer = Explorer::new(scenario("outbox-two-relays-no-inbox").unwrap()).unwrap();
    let mut whole = search::Dfs::new(search::Options::default());
    while !whole.advance(&explorer, 1000).unwrap() {}
    let mut search = search::Dfs::new(search::Options::default());
    // Cancelled before its first run: everything is left.
    let report = explorer.report_search(&search, true).unwrap();
    assert_eq!(report.bounded_by, Some(search::Bounded::Cancelled));
    assert_eq!(
        report.frontier,
        Some(search::Frontier {
            branches: 1,
            shallowest: 0
        })
    );
    assert!(search.advance(&explorer, 3).is_ok());
    let report = explorer.report_search(&search, true).unwrap();
    assert!(report.frontier.is_some());
    // A search without a budget goes on to its end.
    assert!(search.extend(None));
    while !search.advance(&explorer, 7).unwrap() {}
    assert_eq!(search.stats(), whole.stats());
    assert_eq!(search.final_states(), whole.final_states());
    assert!(!search.extend(Some(5)));
}

/// A search's counts do not depend on the explorer's history: its pooled
/// connections (reused from earlier runs) make every step touch what a new
/// connection's would (opening reads the database header), so the same
/// search on a fresh explorer and on one already used finds the same races.
#[test]
fn a_search_counts_the_same_on_a_fresh_explorer_and_a_used_one() {
    for id in ["idem-check-then-write", "outbox-two-relays"] {
        let explorer = Explorer::new(scenario(id).unwrap()).unwrap();
        let counts: Vec<search::Stats> = (0..2)
            .map(|_| {
                let mut search = search::Dfs::new(search::Options::default());
                while !search.advance(&explorer, 1000).unwrap() {}
                search.stats()
            })
            .collect();
        assert_eq!(counts[0], counts[1], "{id}");
    }
}

/// The footprints of one run of `id`, step by step (round-robin).
#[cfg(not(target_family = "wasm"))]
fn footprints(id: &str) -> Vec<String> {
    let explorer = Explorer::new(scenario(id).unwrap()).unwrap();
    let mut run = explorer.start(false).unwrap();
    let mut seen = Vec::new();
    while let Some(&next) = run.runnable().first() {
        run.step(next).unwrap();
        seen.push(format!("{:?}", run.last_effects()));
    }
    seen
}

/// Footprints cross between workers (the page's split search sends what a
/// shard finished, summaries of footprints included, to the others): two
/// explorers of one scenario number its databases alike, whatever their
/// thread ran before. (Numbered per thread, the page's first worker, which
/// had loaded other scenarios, read another worker's footprints with
/// databases swapped, and its split search lost 10 of 2,982 final states.)
#[cfg(not(target_family = "wasm"))]
#[test]
fn explorers_number_databases_alike_whatever_their_thread_ran_before() {
    let fresh = std::thread::spawn(|| footprints("outbox-two-relays"))
        .join()
        .unwrap();
    let used = std::thread::spawn(|| {
        // Other scenarios, with other databases, first.
        footprints("idem-race-2");
        footprints("inbox-retention");
        footprints("outbox-two-relays")
    })
    .join()
    .unwrap();
    assert!(fresh.len() > 10);
    assert_eq!(fresh, used);
}

/// A run put back to a checkpoint of an earlier state (what the exhaustive
/// search does instead of replaying from the start) is in that state, and
/// goes on as the run that took it did, rewound in place or in a new run:
/// also from states where a relay's transaction was open (its statements are
/// redone).
#[test]
fn a_run_rewound_to_a_checkpoint_goes_on_as_it_did() {
    let explorer = Explorer::new(scenario("outbox-two-relays").unwrap()).unwrap();
    let mut run = explorer.start(false).unwrap();
    let mut checkpoints = Vec::new();
    let mut schedule = Vec::new();
    let mut in_transaction = 0;
    while !run.is_stopped() {
        let checkpoint = run
            .checkpoint()
            .expect("no commit is under way between steps");
        if run.lock_levels().iter().any(|l| *l != LockLevel::None) {
            in_transaction += 1;
        }
        checkpoints.push((schedule.len(), run.state_key(false), checkpoint));
        // Round-robin: each attempt in turn, so that transactions overlap.
        let runnable = run.runnable();
        let pick = runnable[schedule.len() % runnable.len()];
        run.step(pick).unwrap();
        schedule.push(pick);
    }
    let end = run.state_key(false);
    assert!(
        checkpoints.len() >= 10 && in_transaction >= 5,
        "{} checkpoints, {in_transaction} with a transaction open",
        checkpoints.len()
    );
    let go_on = |run: &mut replayground::Run<'_>, from: usize| {
        for &attempt in &schedule[from..] {
            run.step(attempt).unwrap();
        }
        assert!(run.is_stopped());
        run.state_key(false)
    };
    for (at, key, checkpoint) in &checkpoints {
        assert!(run.restore(checkpoint).unwrap());
        assert_eq!(run.state_key(false), *key, "rewound in place to step {at}");
        assert_eq!(go_on(&mut run, *at), end, "from step {at}, in place");
    }
    drop(run);
    for (at, key, checkpoint) in &checkpoints {
        let mut fresh = explorer.start(false).unwrap();
        assert!(fresh.restore(checkpoint).unwrap());
        assert_eq!(
            fresh.state_key(false),
            *key,
            "a new run rewound to step {at}"
        );
        assert_eq!(go_on(&mut fresh, *at), end, "from step {at}, a new run");
    }
    // A checkpoint of another scenario's run is not this run's.
    let other = Explorer::new(scenario("idem-race").unwrap()).unwrap();
    let foreign = other.start(false).unwrap().checkpoint().unwrap();
    assert!(!explorer.start(false).unwrap().restore(&foreign).unwrap());
}

/// No checkpoint is taken while a commit is under way: a writer refused
/// EXCLUSIVE by a reader keeps PENDING, and going back to that state by
/// redoing its statements could not be trusted. Every state before it has
/// one (two deferred requests, each in turn, until one holds PENDING).
#[test]
fn no_checkpoint_is_taken_while_a_commit_waits_for_a_reader() {
    let explorer = Explorer::new(scenario("idem-deferred").unwrap()).unwrap();
    let mut run = explorer.start(false).unwrap();
    let mut turn = 0;
    while !run.lock_levels().iter().any(|l| *l > LockLevel::Reserved) {
        assert!(
            !run.is_stopped() && turn < 40,
            "no commit waited for a reader"
        );
        assert!(run.checkpoint().is_some(), "after {turn} steps");
        let runnable = run.runnable();
        run.step(runnable[turn % runnable.len()]).unwrap();
        turn += 1;
    }
    assert!(run.checkpoint().is_none());
}

#[test]
fn the_warm_up_searches_a_shard_in_slices_until_its_time_is_up() {
    // No time to spend: one slice of 200 runs.
    let stats = replayground::benchmark::warm_up(0.0, &|| 0.0).unwrap();
    assert_eq!(stats.runs, 200);
    assert!(stats.distinct_states > 0 && stats.violations == 0);
    // A clock that moves one millisecond per reading, and three to spend:
    // three slices.
    let now = std::cell::Cell::new(0.0);
    let clock = || {
        now.set(now.get() + 1.0);
        now.get()
    };
    let stats = replayground::benchmark::warm_up(3.0, &clock).unwrap();
    assert_eq!(stats.runs, 600);
}
