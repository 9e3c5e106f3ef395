//! Every check of `outbox-crash-replay.py`, with its counts, natively and in
//! the browser from one body; two relays; the crash-point sweep; retention.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::outbox::{self, Event};
use replayground::search;
use replayground::search::{ExploreReport, Explorer, RunResult};
use replayground::store::LockLevel;
use replayground::store::Store;
use replayground::RoundRobin;
use replayground::Schedule;
use replayground::{catalog, sweep::crash_sweep};

fn explorer(id: &str, params: serde_json::Value) -> Explorer {
    Explorer::new(catalog::build_with(id, &params).unwrap()).unwrap()
}

fn every_schedule(id: &str, params: serde_json::Value) -> ExploreReport {
    explorer(id, params)
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap()
}

fn one_run(id: &str) -> RunResult {
    explorer(id, serde_json::Value::Null)
        .run(&mut RoundRobin, true)
        .unwrap()
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

#[test]
fn the_seven_reference_checks_hold_with_the_reference_counts() {
    let expected: [(&str, &[(&str, &str)]); 7] = [
        (
            "outbox-producer-rollback",
            &[("orders", "0"), ("outbox", "0")],
        ),
        (
            "outbox-relay-crash",
            &[
                ("pending", "1"),
                ("audit effects", "1"),
                ("relay exit code", "exit 71"),
            ],
        ),
        (
            "outbox-redelivery",
            &[
                ("redelivery to audit", "order-created:001 audit skipped"),
                ("pending", "0"),
                ("audit effects", "1"),
            ],
        ),
        (
            "inbox-subscriber-scope",
            &[
                ("audit effects", "1"),
                ("search effects", "1"),
                ("S2: search, repeat", "skipped"),
            ],
        ),
        (
            "inbox-payload-conflict",
            &[
                ("C: same id, amount 999", "rejected"),
                ("audit total", "100"),
            ],
        ),
        (
            "inbox-consumer-rollback",
            &[
                ("inbox rows for the event after the failure", "0"),
                ("effects for the event after the failure", "0"),
                ("audit effects for the event", "1"),
            ],
        ),
        (
            "inbox-lost-history",
            &[("audit effects", "2"), ("search effects", "1")],
        ),
    ];
    for (id, checks) in expected {
        let report = every_schedule(id, serde_json::Value::Null);
        assert!(
            report.complete && report.counterexample.is_none(),
            "{id}: {:?}",
            report.counterexample
        );
        let run = one_run(id);
        assert!(run.passed, "{id}: {:?}", run.checks);
        for (name, value) in checks {
            assert_eq!(actual(&run, name), *value, "{id}: {name}");
        }
    }
}

#[test]
fn the_relay_is_really_killed_after_the_consumer_commit() {
    let run = one_run("outbox-relay-crash");
    let trace = run.trace.unwrap();
    let crash = trace
        .iter()
        .find(|s| s.report.name == "crash (exit 71)")
        .expect("a crash step");
    assert!(
        crash.locks.iter().all(|l| l.level == LockLevel::None),
        "its locks vanished: {:?}",
        crash.locks
    );
    let before = &trace[crash.index - 1];
    assert_eq!(before.report.name, "audit: commit");
}

#[test]
fn two_relays_deliver_twice_and_the_inbox_absorbs_it_under_every_schedule() {
    let report = every_schedule("outbox-two-relays", serde_json::Value::Null);
    assert!(report.complete && report.counterexample.is_none());
    let broken = explorer("outbox-two-relays-no-inbox", serde_json::Value::Null);
    let report = broken
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap();
    let c = report
        .counterexample
        .expect("without an inbox a duplicate delivery applies twice");
    assert!(
        c.failed_checks.iter().any(|f| f.actual == "2"),
        "{:?}",
        c.failed_checks
    );
    let replayed = broken
        .replay(&Schedule::decode(&c.schedule).unwrap(), false)
        .unwrap();
    assert_eq!(replayed.failed_checks(), c.failed_checks);
}

#[test]
fn the_crash_sweep_passes_at_every_point_with_an_inbox_and_names_the_failing_points_without() {
    let rows = crash_sweep("outbox-crash-sweep").unwrap();
    assert!(rows.len() >= 13, "{} crash points", rows.len());
    assert!(rows.iter().all(|r| r.passed), "{rows:#?}");
    let audit_commit = rows
        .iter()
        .find(|r| r.crash_point == "after step 6 (audit: commit)")
        .unwrap();
    assert_eq!(
        audit_commit.committed,
        "outbox sent=0, audit inbox=1 effects=1, search inbox=0 effects=0"
    );
    assert!(audit_commit.restart.contains("audit skipped"));

    let rows = crash_sweep("outbox-crash-sweep-no-inbox").unwrap();
    let failing: Vec<&str> = rows
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.crash_point.as_str())
        .collect();
    assert_eq!(
        failing,
        vec![
            "after step 4 (audit: commit)",
            "after step 5 (search: begin)",
            "after step 6 (search: apply effect)",
            "after step 7 (search: commit)",
        ]
    );
}

#[test]
fn a_short_inbox_retention_loses_a_late_redelivery_and_a_long_one_does_not() {
    let report = every_schedule("inbox-retention", serde_json::Value::Null);
    let c = report
        .counterexample
        .expect("the explorer finds the redelivery after pruning");
    assert!(
        c.explanation
            .iter()
            .any(|s| s.contains("pruned 1 inbox row")),
        "{:#?}",
        c.explanation
    );
    assert!(c
        .failed_checks
        .iter()
        .any(|f| f.name == "audit effects" && f.actual == "2"));
    let remedy = every_schedule("inbox-retention-remedy", serde_json::Value::Null);
    assert!(remedy.complete && remedy.counterexample.is_none());
    // The boundary: history kept for exactly the delay plus a tick is enough.
    let enough = every_schedule(
        "inbox-retention",
        serde_json::json!({"window": 1200, "delay": 900}),
    );
    assert!(
        enough.counterexample.is_none(),
        "{:?}",
        enough.counterexample
    );
}

#[test]
fn outbox_parameters_are_validated() {
    let error = |id: &str, params: serde_json::Value| {
        catalog::build_with(id, &params).err().unwrap().to_string()
    };
    assert!(error(
        "outbox-crash-sweep",
        serde_json::json!({"crashPoint": "soon"})
    )
    .starts_with("invalid crashPoint: unknown choice \"soon\"; use 0, 1, 2"));
    assert!(error("inbox-retention", serde_json::json!({"window": 301}))
        .starts_with("invalid window: use a multiple of 300 seconds"));
    assert!(
        error("outbox-redelivery", serde_json::json!({"window": 300}))
            .starts_with("invalid params: scenario outbox-redelivery has no parameter \"window\"")
    );
}

#[test]
fn single_operations_run_alone_and_refused_ones_write_nothing() {
    let store = Store::new("outbox-alone").unwrap();
    outbox::setup(&store).unwrap();
    let event = Event::for_order("a", 100);
    assert_eq!(
        outbox::create_order_alone(&store, event.clone())
            .unwrap()
            .outcome
            .kind,
        "created"
    );
    outbox::relay_alone(&store).unwrap();
    let counts = outbox::counts(&store).unwrap();
    assert_eq!(counts.pending, 0);
    assert_eq!(counts.effects["audit"], 1);
    let again = outbox::deliver_alone(&store, "audit", event.clone()).unwrap();
    assert_eq!(again.outcome.kind, "skipped");
    let conflict = outbox::deliver_alone(
        &store,
        "audit",
        Event {
            amount: 999,
            ..event.clone()
        },
    )
    .unwrap();
    assert_eq!(conflict.outcome.kind, "rejected");
    // A duplicate order id violates the primary key: an error, nothing written.
    let before = (
        store.file_bytes(outbox::PRODUCER),
        store.file_bytes(outbox::CONSUMER),
    );
    let duplicate = outbox::create_order_alone(&store, event).unwrap();
    assert_eq!(duplicate.outcome.kind, "error");
    assert_eq!(
        (
            store.file_bytes(outbox::PRODUCER),
            store.file_bytes(outbox::CONSUMER)
        ),
        before
    );
}

/// A relay delivers every pending event, however many there are: it used
/// to stop at 256 steps (21 events) with "relay did not finish", and then
/// at the 1,000 steps a program may take in a scenario (83 events).
#[test]
fn a_session_relay_delivers_every_pending_event() {
    let session = outbox::session("outbox-many").unwrap();
    for i in 0..120 {
        let created = outbox::create_order_alone(&session, Event::for_order(&i.to_string(), 5));
        assert_eq!(created.unwrap().outcome.kind, "created");
    }
    let relayed = outbox::relay_alone(&session).unwrap();
    assert_eq!(relayed.outcome.kind, "done");
    let counts = outbox::counts(&session).unwrap();
    assert_eq!(counts.pending, 0);
    assert_eq!(counts.outbox, 120);
    assert_eq!(counts.effects["audit"], 120);
    assert_eq!(counts.effects["search"], 120);
    assert_eq!(counts.inbox, 240);
}

/// Programs run alone reuse an earlier expansion only when its `when`s come
/// out the same: the same program with and without an inbox, alternately.
#[test]
fn a_program_run_alone_follows_its_whens_each_time() {
    let session = outbox::session("outbox-whens").unwrap();
    let deliver = |event: &str, inbox: i64| {
        let mut with = toml::Table::new();
        with.insert("event_id".into(), event.into());
        with.insert("order_id".into(), "order:1".into());
        with.insert("amount".into(), 5.into());
        with.insert("subscriber".into(), "audit".into());
        with.insert("inbox".into(), inbox.into());
        let (outcome, steps) = replayground::file::run_alone(
            &replayground::catalog::CATALOG,
            &session,
            "outbox",
            "deliver",
            "x",
            with,
            0,
            replayground::MAX_ALONE_STEPS,
        )
        .unwrap();
        let names: Vec<String> = steps.into_iter().map(|s| s.name).collect();
        (outcome.kind, names)
    };
    for round in 0..3 {
        let (kind, names) = deliver(&format!("with-{round}"), 1);
        assert_eq!(kind, "applied");
        assert!(
            names.contains(&"audit: read inbox".to_string()),
            "{names:?}"
        );
        let (kind, names) = deliver(&format!("without-{round}"), 0);
        assert_eq!(kind, "applied");
        assert!(!names.iter().any(|n| n.contains("inbox")), "{names:?}");
        // The same event again: skipped with the inbox, applied twice without.
        assert_eq!(deliver(&format!("with-{round}"), 1).0, "skipped");
        assert_eq!(deliver(&format!("without-{round}"), 0).0, "applied");
    }
}

/// The crash points a scenario declares are exactly the points the sweep
/// visits: the page's list offers every one and nothing else.
#[test]
fn declared_crash_points_are_the_sweeps_points() {
    use replayground::parameters::Kind;
    for id in ["outbox-crash-sweep", "outbox-crash-sweep-no-inbox"] {
        let entry = catalog::entry(id).unwrap();
        let declared = entry
            .params
            .iter()
            .find(|p| p.name == "crashPoint")
            .unwrap();
        let Kind::Choice { options } = declared.kind else {
            panic!("{id}: crashPoint is a choice");
        };
        let swept: Vec<String> = crash_sweep(id)
            .unwrap()
            .iter()
            .map(|row| {
                row.crash_after
                    .map_or("none".to_string(), |k| k.to_string())
            })
            .collect();
        assert_eq!(options, swept, "{id}");
    }
}

/// An expansion is reused only when everything it read is the same: the
/// step names read the subscriber, so alternating subscribers gets each its
/// own names, every time.
#[test]
fn programs_run_alone_are_named_for_what_they_read_each_time() {
    let session = outbox::session("outbox-names").unwrap();
    for round in 0..3 {
        for subscriber in ["audit", "search"] {
            let event = Event::for_order(&format!("{subscriber}-{round}"), 5);
            let done = outbox::deliver_alone(&session, subscriber, event).unwrap();
            assert_eq!(done.outcome.kind, "applied");
            assert!(
                done.steps
                    .iter()
                    .all(|s| s.name.starts_with(&format!("{subscriber}: "))),
                "{:?}",
                done.steps.iter().map(|s| &s.name).collect::<Vec<_>>()
            );
        }
    }
    let counts = outbox::counts(&session).unwrap();
    assert_eq!((counts.effects["audit"], counts.effects["search"]), (3, 3));
}
