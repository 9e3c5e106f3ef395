//! A design that never completes is a failing design, whatever way it is
//! searched: a livelock (a schedule that comes back to a state it was in), an
//! attempt that runs into its step bound, and a statement stopped by its
//! instruction budget each give a counterexample, a counter in the report
//! and a verdict "not as declared" for a design declared to hold. Checked by
//! every strategy, with and without the reductions, split across workers
//! natively, and through the JavaScript export in Chromium.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::search::Stats;
use replayground::search::{ExploreReport, Explorer};
use replayground::strategy::{Kind, Strategy, Without};
use replayground::Schedule;
use replayground::{Bound, Status, Verdict};

mod common;
use common::explorer;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use common::let_the_browser_run;

/// Two attempts that each wait for the other to go first: every schedule
/// goes round for ever (read-only: see the file).
const LIVELOCK: &str = include_str!("designs/after-you.toml");

/// One attempt that inserts a row and goes back: no state comes back (the
/// table grows), so only the step bound ends it.
const GROWING: &str = r#"
title = "grows for ever"
fails = false
[databases.app]
schema = "CREATE TABLE t (id INTEGER PRIMARY KEY);"
[[attempts]]
steps = [ { name = "grow", sql = "INSERT INTO t DEFAULT VALUES", on.ok = { goto = "grow" } } ]
"#;

/// One statement that would never end, with an error handler that would
/// call its failure a success: the budget stops it before any handler.
const ENDLESS_QUERY: &str = r#"
title = "an endless query"
fails = false
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [ { name = "count", sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", on.error = { finish = "done" }, on.rows = { finish = "done" } } ]
"#;

/// The counter of `stats` the design must raise.
type Counter = fn(&Stats) -> u64;

/// Each design, with the counter an exhaustive search raises and the one a
/// sampled run raises (a sampler does not look for cycles: a livelock runs
/// into the step bound).
fn cases() -> [(&'static str, &'static str, Counter, Counter); 3] {
    let cycles: Counter = |s| s.cycles;
    let steps: Counter = |s| s.stopped_by_steps;
    let instructions: Counter = |s| s.stopped_by_instructions;
    [
        ("livelock", LIVELOCK, cycles, steps),
        ("growing", GROWING, steps, steps),
        ("endless-query", ENDLESS_QUERY, instructions, instructions),
    ]
}

/// What every report of a never-completing design declared to hold shows.
fn assert_caught(name: &str, how: &str, report: &ExploreReport, counter: Counter) {
    let context = format!("{name} by {how}: {report:#?}");
    assert!(counter(&report.stats) >= 1, "{context}");
    assert!(report.stats.violations >= 1, "{context}");
    let declaration = report.declaration.as_ref().expect(&context);
    assert_eq!(declaration.as_declared, Some(false), "{context}");
    assert!(
        declaration.verdict_as_declared.contains("declared to hold"),
        "{context}"
    );
    let counterexample = report.counterexample.as_ref().expect(&context);
    assert!(
        counterexample
            .failed_checks
            .iter()
            .any(|c| c.name == "the run completes"),
        "{context}"
    );
    // A search that saw the run come back to a state shows it as a lasso:
    // the steps to the state, then the cycle, once (not the run unrolled to
    // the step bound).
    if report.stats.cycles > 0 {
        let lasso = Schedule::decode(&counterexample.schedule).expect(&context);
        let from = lasso.cycle_from().expect(&context);
        assert!(lasso.len() <= 4, "{context}");
        assert!(
            matches!(counterexample.run.verdict, Verdict::Loops { from: f, to } if f == from && to == lasso.len()),
            "{context}"
        );
        assert!(
            counterexample.failed_checks[0]
                .actual
                .starts_with("goes round for ever"),
            "{context}"
        );
    }
}

/// The counterexample replays, and the replay fails the same way.
fn assert_replays(name: &str, explorer: &Explorer, report: &ExploreReport) {
    let schedule = &report.counterexample.as_ref().unwrap().schedule;
    let run = explorer
        .replay(&Schedule::decode(schedule).unwrap(), false)
        .unwrap();
    assert!(!run.passed, "{name}: {run:#?}");
    assert!(!run.checks[0].pass, "{name}: {:?}", run.checks[0]);
    assert_eq!(run.declaration.unwrap().as_declared, Some(false), "{name}");
}

/// Searches design `case` of [`cases`] with `kind` (`None`: exhaustively
/// without any reduction) and checks the report and its counterexample.
fn search_and_check(case: usize, kind: Option<Kind>) {
    let (name, source, searched, sampled) = cases()[case];
    let explorer = explorer(source, name);
    let strategy = match kind {
        Some(Kind::Exhaustive) => Strategy::of(Kind::Exhaustive),
        // The endless query costs a second a run: one run shows it.
        Some(kind) => Strategy {
            runs: Some(1),
            ..Strategy::of(kind)
        },
        None => Strategy {
            without: Without::everything(),
            ..Strategy::of(Kind::Exhaustive)
        },
    };
    let report = strategy.search().run_to_end(&explorer).unwrap();
    let (how, counter) = match kind {
        Some(Kind::Exhaustive) => ("exhaustive", searched),
        Some(kind) => (kind.name(), sampled),
        None => ("exhaustive without reductions", searched),
    };
    assert_caught(name, how, &report, counter);
    assert_replays(name, &explorer, &report);
}

/// One test per design and strategy: a test in Chromium runs on the page's
/// thread, which must answer the test runner within seconds.
/// In Chromium each test first lets the browser run, as the runner only
/// yields between tests that wait for something.
#[cfg(not(target_family = "wasm"))]
macro_rules! searched_by_every_strategy {
    ($($test:ident: $case:expr, $kind:expr;)*) => {
        $(
            #[test]
            fn $test() {
                search_and_check($case, $kind);
            }
        )*
    };
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
macro_rules! searched_by_every_strategy {
    ($($test:ident: $case:expr, $kind:expr;)*) => {
        $(
            #[test]
            async fn $test() {
                let_the_browser_run().await;
                search_and_check($case, $kind);
            }
        )*
    };
}

searched_by_every_strategy! {
    livelock_exhaustive: 0, Some(Kind::Exhaustive);
    livelock_round_robin: 0, Some(Kind::RoundRobin);
    livelock_random: 0, Some(Kind::Random);
    livelock_pct: 0, Some(Kind::Pct);
    livelock_without_reductions: 0, None;
    growing_exhaustive: 1, Some(Kind::Exhaustive);
    growing_round_robin: 1, Some(Kind::RoundRobin);
    growing_random: 1, Some(Kind::Random);
    growing_pct: 1, Some(Kind::Pct);
    growing_without_reductions: 1, None;
    endless_query_exhaustive: 2, Some(Kind::Exhaustive);
    endless_query_round_robin: 2, Some(Kind::RoundRobin);
    endless_query_random: 2, Some(Kind::Random);
    endless_query_pct: 2, Some(Kind::Pct);
    endless_query_without_reductions: 2, None;
}

/// Every strategy has its test above.
#[test]
fn every_strategy_has_its_tests() {
    assert_eq!(Kind::ALL.len(), 4);
}

/// An attempt stopped by its step bound says so in its status, and the run
/// does not complete.
#[test]
fn a_stopped_attempt_names_its_bound() {
    let explorer = explorer(GROWING, "growing");
    let run = explorer.run(&mut replayground::RoundRobin, false).unwrap();
    assert!(
        matches!(
            &run.statuses[0],
            Status::Failed {
                bound: Some(Bound::Steps),
                ..
            }
        ),
        "{:?}",
        run.statuses
    );
    assert!(run.checks[0].actual.starts_with("stopped by a bound: A "));
}

#[cfg(not(target_family = "wasm"))]
#[test]
fn a_search_split_across_workers_finds_them_too() {
    for (name, source, counter, _) in cases() {
        let strategy = Strategy::of(Kind::Exhaustive);
        let report =
            Explorer::exhaustive_parallel(|| Ok(explorer(source, name)), strategy.dfs_options(), 2)
                .unwrap();
        assert_caught(name, "two workers", &report, counter);
        assert_eq!(report.workers, 2, "{name}");
        assert_replays(name, &explorer(source, name), &report);
    }
}

/// `exploreScenario` on design `case` of [`cases`]: its report names the
/// bound's counter (JSON `field`) and the verdict against the declaration.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
fn explored_by_the_javascript_export(case: usize, field: &str) {
    use wasm_bindgen::JsValue;
    let (name, source, _, _) = cases()[case];
    let id =
        js_sys::JSON::parse(&serde_json::json!({ "source": source, "name": name }).to_string())
            .unwrap();
    let report = replayground::wasm::explore_scenario(id, JsValue::UNDEFINED).expect("explores");
    let report: serde_json::Value =
        serde_json::from_str(&String::from(js_sys::JSON::stringify(&report).unwrap())).unwrap();
    assert!(
        report["stats"][field].as_u64().unwrap() >= 1,
        "{name}: {report}"
    );
    assert_eq!(report["asDeclared"], false, "{name}: {report}");
    assert!(
        report["verdictAsDeclared"]
            .as_str()
            .unwrap()
            .contains("declared to hold"),
        "{name}: {report}"
    );
    assert!(report["counterexample"].is_object(), "{name}: {report}");
    if field == "cycles" {
        assert_eq!(
            report["counterexample"]["run"]["verdict"]["kind"], "loops",
            "{name}: {report}"
        );
        assert!(
            report["counterexample"]["schedule"]
                .as_str()
                .unwrap()
                .ends_with(')'),
            "{name}: {report}"
        );
    }
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[test]
async fn the_javascript_export_reports_a_livelock() {
    let_the_browser_run().await;
    explored_by_the_javascript_export(0, "cycles");
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[test]
async fn the_javascript_export_reports_a_step_bound() {
    let_the_browser_run().await;
    explored_by_the_javascript_export(1, "stoppedBySteps");
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[test]
async fn the_javascript_export_reports_an_instruction_budget() {
    let_the_browser_run().await;
    explored_by_the_javascript_export(2, "stoppedByInstructions");
}

/// The counterexample of a design that goes round for ever is the shortest
/// lasso, not the first the search found: here the search goes down A's
/// steps first and finds A spinning after two inserts (`A2(A)`), while B
/// spins from the start (`(B)`). The search itself keeps the cycle with the
/// shortest way round among those it met (it kept the first), and the
/// shrinker proves it shortest.
#[test]
fn the_counterexample_of_a_livelock_is_the_shortest_lasso() {
    let source = r#"
title = "two loops"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
label = "A"
steps = [
  { name = "one", sql = "INSERT INTO t VALUES (1)" },
  { name = "two", sql = "INSERT INTO t VALUES (2)" },
  { name = "spin", sql = "SELECT 1", on.rows = { goto = "spin" } },
]
[[attempts]]
label = "B"
steps = [ { name = "wait", sql = "SELECT 1 FROM t WHERE 0", on.none = { goto = "wait" } } ]
"#;
    let explorer = explorer(source, "two-loops");
    let report = Strategy::of(Kind::Exhaustive)
        .search()
        .run_to_end(&explorer)
        .unwrap();
    let counterexample = report.counterexample.unwrap();
    assert_eq!(counterexample.schedule, "(B)");
    assert!(counterexample.shortest);
    // The search keeps (B), not the first lasso it found, A2(A).
    let mut search = replayground::search::Dfs::new(Strategy::of(Kind::Exhaustive).dfs_options());
    while !search.advance(&explorer, 100).unwrap() {}
    let kept = search.violation().unwrap();
    assert_eq!(kept.to_string(), "(B)");
    assert!(search.stats().cycles > 1, "{:?}", search.stats());
    // A budget too small to know every state proves nothing.
    assert_eq!(explorer.shortest_lasso(1).unwrap(), None);
}

/// The search assumes no fairness: a poll loop written with `goto` fails
/// (the poller may spin while the producer never runs); written with
/// `wait-while`, the poller waits for the producer, and the design holds.
#[test]
fn a_poll_loop_is_a_cycle_unless_it_waits_while_the_producer_runs() {
    let spinning = r#"
title = "a poller"
fails = false
[databases.app]
schema = "CREATE TABLE ready (x);"
[[attempts]]
label = "P"
steps = [ { name = "produce", sql = "INSERT INTO ready VALUES (1)", on.ok = { finish = "produced" } } ]
[[attempts]]
label = "C"
steps = [ { name = "poll", sql = "SELECT 1 FROM ready", on.none = { goto = "poll" }, on.rows = { finish = "consumed" } } ]
"#;
    let report = Strategy::of(Kind::Exhaustive)
        .search()
        .run_to_end(&explorer(spinning, "spinning"))
        .unwrap();
    assert!(report.stats.cycles >= 1, "{report:#?}");
    assert_eq!(report.declaration.unwrap().as_declared, Some(false));
    // The poller spins alone from the start: C, for ever.
    assert_eq!(report.counterexample.unwrap().schedule, "(C)");
    let waiting = spinning.replace(
        r#"on.none = { goto = "poll" }"#,
        r#"on.none = { goto = "poll", wait-while = "P" }"#,
    );
    let report = Strategy::of(Kind::Exhaustive)
        .search()
        .run_to_end(&explorer(&waiting, "waiting"))
        .unwrap();
    assert!(
        report.complete && report.counterexample.is_none(),
        "{report:#?}"
    );
    assert_eq!(report.stats.cycles, 0);
    assert_eq!(report.declaration.unwrap().as_declared, Some(true));
}

/// A search keeps the shortest failing run it met, not the first: one
/// stopped by its budget, whose shrinker could not prove a shortest, showed
/// a first violation of 46 steps when shorter ones had been met (issue 68).
/// Here the first found takes 5 steps (A runs first), a later one 2.
#[test]
fn a_search_keeps_the_shortest_failing_run_it_met() {
    let source = r#"
title = "a long and a short way to fail"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
label = "A"
steps = [
  { name = "look", sql = "SELECT 1 FROM t", on.rows = { finish = "early" }, on.none = "next" },
  { name = "think", sql = "SELECT 1" },
  { name = "think again", sql = "SELECT 2" },
  { name = "write", sql = "INSERT INTO t VALUES ('a')", on.ok = { finish = "wrote" } },
]
[[attempts]]
label = "B"
steps = [ { name = "write", sql = "INSERT INTO t VALUES ('b')", on.ok = { finish = "wrote" } } ]
[[checks]]
outcome = "wrote"
count = 1
[[checks]]
outcome = "early"
count = 0
"#;
    let explorer = explorer(source, "long-and-short");
    let unreduced = Strategy {
        without: Without::everything(),
        ..Strategy::of(Kind::Exhaustive)
    };
    for strategy in [Strategy::of(Kind::Exhaustive), unreduced] {
        let mut search = replayground::search::Dfs::new(strategy.dfs_options());
        while !search.advance(&explorer, 100).unwrap() {}
        let kept = search.violation().unwrap();
        assert_eq!(explorer.show_schedule(kept), "BA");
    }
}
