//! Every check of `idempotency-scope.py`, with its counts, natively and in
//! the browser from one body; the designs that fail, caught by the explorer;
//! and the response profiles.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::idempotency::{self, Request, ERROR_RESULT};
use replayground::search;
use replayground::search::{ExploreReport, Explorer, RunResult};
use replayground::store::Store;
use replayground::RoundRobin;
use replayground::Schedule;

fn explorer(id: &str, params: serde_json::Value) -> Explorer {
    Explorer::new(catalog::build_with(id, &params).unwrap()).unwrap()
}

fn every_schedule(id: &str, params: serde_json::Value) -> ExploreReport {
    explorer(id, params)
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap()
}

fn one_run(id: &str, params: serde_json::Value) -> RunResult {
    explorer(id, params).run(&mut RoundRobin, true).unwrap()
}

fn actual(result: &RunResult, check: &str) -> String {
    result
        .checks
        .iter()
        .find(|c| c.name == check)
        .unwrap_or_else(|| panic!("no check {check:?} in {:?}", result.checks))
        .actual
        .clone()
}

/// The reference's five checks hold under every schedule, with its counts.
#[test]
fn the_five_reference_checks_hold_under_every_schedule_with_the_reference_counts() {
    let expected = [
        ("idem-race", "(1, 1)"),
        ("idem-scope", "(4, 4)"),
        ("idem-failure", "(5, 5)"),
        ("idem-lost-reply", "(6, 6)"),
        ("idem-retention", "(7, 6)"),
    ];
    for (id, counts) in expected {
        let report = every_schedule(id, serde_json::Value::Null);
        assert!(report.complete, "{id}");
        assert!(
            report.counterexample.is_none(),
            "{id}: {:?}",
            report.counterexample
        );
        let run = one_run(id, serde_json::Value::Null);
        assert!(run.passed, "{id}: {:?}", run.checks);
        assert_eq!(actual(&run, "(effects, receipts)"), counts, "{id}");
    }
}

#[test]
fn eight_racing_requests_give_one_created_seven_replays_and_identical_results() {
    let run = one_run("idem-race", serde_json::Value::Null);
    assert_eq!(actual(&run, "created"), "1");
    assert_eq!(actual(&run, "replay"), "7");
    assert_eq!(actual(&run, "all 8 results identical"), "true");
}

#[test]
fn changed_parameters_conflict_and_leave_the_counts_unchanged() {
    let run = one_run("idem-scope", serde_json::Value::Null);
    assert_eq!(
        actual(&run, "A: intent-a again with quantity 3"),
        "conflict"
    );
    assert_eq!(actual(&run, "(effects, receipts) after A"), "(1, 1)");
}

#[test]
fn a_failure_rolls_back_both_and_the_retry_creates_one() {
    let run = one_run("idem-failure", serde_json::Value::Null);
    assert_eq!(
        actual(&run, "(effects, receipts) after the rollback"),
        "(4, 4)"
    );
    assert_eq!(actual(&run, "B: the retry"), "created");
}

#[test]
fn a_lost_reply_is_replayed_on_a_fresh_connection() {
    let run = one_run("idem-lost-reply", serde_json::Value::Null);
    assert_eq!(actual(&run, "B: the retry on a fresh connection"), "replay");
    let check = run
        .checks
        .iter()
        .find(|c| c.name == "B replays A's committed result")
        .unwrap();
    assert!(
        check.pass && check.actual.contains("\"effect_id\":6"),
        "{check:?}"
    );
}

#[test]
fn the_retention_boundary_is_at_60_seconds() {
    let at = |clock: i64| one_run("idem-retention", serde_json::json!({"clock": clock}));
    let before = at(59);
    assert!(before.passed, "{:?}", before.checks);
    assert_eq!(actual(&before, "(effects, receipts)"), "(6, 6)");
    let boundary = at(60);
    assert!(boundary.passed);
    assert_eq!(actual(&boundary, "B at t=60: created"), "created");
    assert_eq!(actual(&boundary, "(effects, receipts)"), "(7, 6)");
    assert_eq!(
        actual(&boundary, "A replays the original result"),
        idempotency::result_json(1, 2)
    );
}

#[test]
fn each_failing_design_is_caught_with_a_replayable_counterexample() {
    for (id, failing_check) in [
        ("idem-check-then-write", "(effects, receipts)"),
        ("idem-deferred", "the run completes"),
        ("idem-no-fingerprint", "A: intent-a again with quantity 3"),
        ("idem-receipt-later", "(effects, receipts)"),
    ] {
        let explorer = explorer(id, serde_json::Value::Null);
        let report = explorer
            .exhaustive(search::Options::default(), 1000, |_| true)
            .unwrap();
        let c = report
            .counterexample
            .unwrap_or_else(|| panic!("{id} must be caught"));
        assert!(
            c.failed_checks.iter().any(|f| f.name == failing_check),
            "{id}: {:?}",
            c.failed_checks
        );
        assert_eq!(c.explanation.len(), c.steps, "{id}: one sentence per step");
        let replayed = explorer
            .replay(&Schedule::decode(&c.schedule).unwrap(), false)
            .unwrap();
        assert_eq!(replayed.failed_checks(), c.failed_checks, "{id}");
    }
}

#[test]
fn a_crash_between_effect_and_receipt_doubles_the_effect_and_without_it_the_design_holds() {
    let crashed = one_run("idem-receipt-later", serde_json::Value::Null);
    assert_eq!(actual(&crashed, "(effects, receipts)"), "(2, 1)");
    let trace = crashed.trace.unwrap();
    assert!(trace.iter().any(|s| s.report.name == "crash"));
    let no_crash = every_schedule(
        "idem-receipt-later",
        serde_json::json!({"crashPoint": "none"}),
    );
    assert!(no_crash.complete && no_crash.counterexample.is_none());
}

#[test]
fn the_no_fingerprint_design_hands_a_changed_request_the_old_result() {
    let run = one_run("idem-no-fingerprint", serde_json::Value::Null);
    assert_eq!(actual(&run, "A: intent-a again with quantity 3"), "replay");
    assert_eq!(actual(&run, "A's answer is for quantity 3"), "no");
}

#[test]
fn the_deferred_begin_retry_policy_holds_under_every_schedule() {
    let report = every_schedule("idem-deferred-retry", serde_json::Value::Null);
    assert!(report.complete && report.counterexample.is_none());
}

#[test]
fn each_profile_behaves_as_published_inside_and_beyond_its_retention() {
    for profile in ["reference", "ietf", "stripe", "powertools"] {
        for clock in [30, 4000, 100_000] {
            let params = serde_json::json!({"profile": profile, "clock": clock});
            let report = every_schedule("idem-profiles", params.clone());
            assert!(
                report.counterexample.is_none(),
                "{profile} at {clock}: {:?}",
                report.counterexample
            );
            let run = one_run("idem-profiles", params);
            let b = actual(&run, &format!("B: retry at t={clock}"));
            let d = actual(&run, "D: no key");
            match (profile, clock) {
                ("stripe", 30 | 4000) => {
                    assert_eq!(b, "replay");
                    assert_eq!(actual(&run, "B replays the stored error"), ERROR_RESULT);
                }
                _ => assert_eq!(b, "created", "{profile} at {clock}"),
            }
            assert_eq!(
                d,
                if profile == "ietf" {
                    "missing-key"
                } else {
                    "created"
                }
            );
        }
    }
}

#[test]
fn scenario_parameters_are_validated_before_anything_runs() {
    let error = |id: &str, params: serde_json::Value| {
        catalog::build_with(id, &params)
            .err()
            .expect("must fail")
            .to_string()
    };
    assert_eq!(
        error("idem-race", serde_json::json!({"attempts": 17})),
        "invalid attempts: 17 is out of range (1 to 16)"
    );
    assert_eq!(
        error("idem-race", serde_json::json!({"clock": 5})),
        "invalid params: scenario idem-race has no parameter \"clock\"; it takes attempts, tenant, key, quantity, journal, synchronous"
    );
    assert!(
        error("idem-race", serde_json::json!({"key": String::new()}))
            .starts_with("invalid key: use 1 to 255 characters")
    );
    assert!(
        error("idem-race", serde_json::json!({"key": "k".repeat(256)}))
            .starts_with("invalid key: use 1 to 255 characters")
    );
    assert!(error("idem-race", serde_json::json!({"quantity": 0}))
        .starts_with("invalid quantity: 0 is out of range (1 to 9007199254740991)"));
    assert!(
        error("idem-profiles", serde_json::json!({"profile": "paypal"})).starts_with(
            "invalid profile: unknown choice \"paypal\"; use reference, ietf, stripe, powertools"
        )
    );
    assert!(error(
        "idem-receipt-later",
        serde_json::json!({"crashPoint": "later"})
    )
    .starts_with("invalid crashPoint"));
}

#[test]
fn user_chosen_tenant_and_key_run_the_race_and_are_stored_as_text() {
    let tenant = "<img src=x onerror=alert(1)>";
    let key = "'; DROP TABLE receipts; --";
    let run = one_run(
        "idem-race",
        serde_json::json!({"attempts": 3, "tenant": tenant, "key": key}),
    );
    assert!(run.passed, "{:?}", run.checks);
    let last = run.trace.unwrap().pop().unwrap();
    let receipts = &last.tables["orders.db"]["receipts"];
    assert_eq!(receipts.rows[0][0], tenant.into());
    assert_eq!(receipts.rows[0][2], key.into());
}

/// A statement that changes no row reports no change, even on a session's
/// reused connection whose last INSERT changed one (BEGIN used to report it).
#[test]
fn a_begin_reports_no_change_on_a_reused_connection() {
    let session = idempotency::session("changes").unwrap();
    for key in ["a", "b", "a"] {
        let done =
            idempotency::execute_alone(&session, "r", Request::reference(key, 2, 0)).unwrap();
        for step in &done.steps {
            let sql = step.sql.as_deref().unwrap_or_default();
            if sql.starts_with("BEGIN") || sql.starts_with("COMMIT") || sql.starts_with("SELECT") {
                let result = serde_json::to_value(&step.result).unwrap();
                let changes = result.get("changes").and_then(|c| c.as_u64()).unwrap_or(0);
                assert_eq!(changes, 0, "{} ({key}): {result}", step.name);
            }
        }
    }
}

#[test]
fn a_single_request_runs_alone_and_bad_ones_write_nothing() {
    let store = Store::new("single").unwrap();
    idempotency::setup(&store).unwrap();
    let request = Request::reference("k1", 2, 0);
    let first = idempotency::execute_alone(&store, "one", request.clone()).unwrap();
    assert_eq!(first.outcome.kind, "created");
    assert_eq!(idempotency::counts(&store).unwrap(), (1, 1));
    let again = idempotency::execute_alone(&store, "two", request).unwrap();
    assert_eq!(again.outcome.kind, "replay");
    let before = store.file_bytes(idempotency::DB).unwrap();
    for bad in [
        Request::reference("", 2, 0),
        Request::reference(&"k".repeat(256), 2, 0),
        Request::reference("k2", 0, 0),
        Request::reference("k2", -1, 0),
        Request::reference("k2", 2, -5),
    ] {
        assert!(idempotency::execute_alone(&store, "bad", bad).is_err());
    }
    assert_eq!(
        store.file_bytes(idempotency::DB).unwrap(),
        before,
        "nothing written"
    );
}

#[test]
fn a_request_arriving_while_the_first_is_in_flight_gets_the_profiles_409() {
    for (profile, note) in [
        ("ietf", "409 Conflict"),
        ("stripe", "409 idempotency_key_in_use"),
        ("powertools", "IdempotencyAlreadyInProgressError"),
    ] {
        let params = serde_json::json!({"profile": profile});
        let report = every_schedule("idem-in-flight", params.clone());
        assert!(
            report.complete && report.counterexample.is_none(),
            "{profile}"
        );
        let during = explorer("idem-in-flight", params)
            .replay(&Schedule::decode("A5B3A4").unwrap(), true)
            .unwrap();
        assert!(during.passed);
        assert_eq!(actual(&during, "created"), "1");
        let b_answer = &during.trace.as_ref().unwrap()[7];
        assert_eq!(b_answer.label, "B");
        assert!(
            b_answer.report.note.ends_with(note),
            "{}",
            b_answer.report.note
        );
    }
}

/// Requests with and without a key, alternately, on one session's store:
/// the program of each is decided by its own key (an expansion is reused
/// only when what it was decided by is the same), so only keyed requests
/// write receipts and a keyed one sent again replays. (The session refuses
/// a request without a key; the library's program takes one.)
#[test]
fn requests_run_alone_with_and_without_a_key_each_run_their_own_steps() {
    let session = idempotency::session("keyed-and-not").unwrap();
    let request = |key: &str| {
        let mut with = toml::Table::new();
        with.insert("tenant".into(), "north".into());
        with.insert("operation".into(), "web-order".into());
        with.insert("key".into(), key.into());
        with.insert("quantity".into(), 2.into());
        let (outcome, steps) = replayground::file::run_alone(
            &replayground::catalog::CATALOG,
            &session,
            "idempotency",
            "request",
            "r",
            with,
            0,
            replayground::MAX_ALONE_STEPS,
        )
        .unwrap();
        let names: Vec<String> = steps.into_iter().map(|s| s.name).collect();
        (outcome.kind, names)
    };
    for round in 0..3_i64 {
        let (kind, names) = request(&format!("k{round}"));
        assert_eq!(kind, "created");
        assert!(names.contains(&"insert receipt".to_string()), "{names:?}");
        let (kind, names) = request("");
        assert_eq!(kind, "created");
        assert!(!names.iter().any(|n| n.contains("receipt")), "{names:?}");
        assert_eq!(request(&format!("k{round}")).0, "replay");
        assert_eq!(
            idempotency::counts(&session).unwrap(),
            (2 * (round + 1), round + 1)
        );
    }
}

/// The profiles table is the library's `let`s evaluated for each profile
/// alone (no request): every `let` must be computable from the defaults.
#[test]
fn the_profiles_table_gives_each_profiles_rules() {
    let profiles = idempotency::profiles().unwrap();
    let ids: Vec<&str> = profiles.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["reference", "ietf", "stripe", "powertools"]);
    let retention: Vec<i64> = profiles.iter().map(|p| p.retention_seconds).collect();
    assert_eq!(retention, [60, 86400, 86400, 3600]);
    assert!(profiles[1].requires_key && !profiles[0].requires_key);
    assert!(profiles[2].stores_errors && !profiles[3].stores_errors);
}
