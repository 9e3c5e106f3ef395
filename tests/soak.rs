//! Every correct design under random and PCT schedules, every broken design
//! caught within the stated budget, natively and in the browser. A small
//! budget here; `replayground soak` runs a million schedules.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::soak::{soak_all, CATCH_BUDGET};
use replayground::store::Journal;

#[test]
fn correct_designs_never_fail_and_broken_ones_are_caught_within_the_budget() {
    let rows = soak_all(40, 7).unwrap();
    // Every scenario, in both journal modes.
    assert!(rows.len() >= 50);
    assert_eq!(
        rows.iter().filter(|r| r.journal == Journal::Wal).count(),
        rows.len() / 2
    );
    for row in &rows {
        assert!(row.ok, "{row:?}");
        if row.expected_to_fail {
            assert!(row.caught_at.is_some_and(|n| n <= CATCH_BUDGET), "{row:?}");
        } else {
            assert_eq!((row.runs, row.violations), (40, 0), "{row:?}");
        }
    }
}

#[test]
fn a_crash_at_every_step_of_every_scenario_loses_nothing_committed_and_keeps_nothing_uncommitted() {
    let reports = replayground::sweep::sweep_all().unwrap();
    let points: u64 = reports.iter().map(|r| r.crash_points).sum();
    assert!(points >= 500, "{points} crash points");
    assert!(reports
        .iter()
        .any(|r| r.journal == Journal::Wal && r.crash_points > 0));
    for report in &reports {
        assert!(report.violations.is_empty(), "{report:?}");
    }
}

#[test]
fn pooled_connections_never_serve_pages_of_another_run() {
    // Regression: reused connections once kept pages of an earlier run that
    // had reached the same change counter by another interleaving.
    let row = replayground::soak::soak_scenario("idem-scope", Journal::Rollback, 2000, 1).unwrap();
    assert_eq!(row.violations, 0, "{row:?}");
}
