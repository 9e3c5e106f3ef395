//! The built-ins that teach what `synchronous` promises when the power goes
//! out, natively and in the browser from one body: each fails as declared,
//! exhaustively, with a counterexample that narrates the power loss in one
//! sentence; its fix holds; and over both journal modes and every level,
//! what SQLite documents: WAL keeps a returned commit at FULL and EXTRA,
//! rollback mode only at EXTRA.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search::{self, Explorer};
use replayground::Schedule;
use serde_json::json;

const DESIGNS: [&str; 2] = ["idem-power-loss", "outbox-power-loss"];

/// Whether the exhaustive search of `id` with `params` finds a
/// counterexample (it must cover every schedule).
fn fails(id: &str, params: serde_json::Value) -> bool {
    let explorer = Explorer::new(catalog::build_with(id, &params).unwrap()).unwrap();
    let report = explorer
        .exhaustive(search::Options::default(), 10_000, |_| true)
        .unwrap();
    assert!(report.complete, "{id} {params}: every schedule covered");
    report.counterexample.is_some()
}

#[test]
fn the_power_loss_designs_fail_as_declared_and_their_fixes_hold() {
    for id in DESIGNS {
        let entry = catalog::entry(id).unwrap();
        assert!(entry.fails, "{id} is declared to fail");
        assert!(fails(id, serde_json::Value::Null), "{id} fails by default");
        // The fix: FULL in WAL mode.
        assert!(
            !fails(id, json!({ "synchronous": "full" })),
            "{id} holds at FULL"
        );
    }
}

#[test]
fn what_each_level_keeps_is_what_sqlite_documents() {
    for id in DESIGNS {
        let mut lost = Vec::new();
        for journal in ["rollback", "wal"] {
            for level in ["off", "normal", "full", "extra"] {
                if fails(id, json!({ "journal": journal, "synchronous": level })) {
                    lost.push(format!("{journal} {level}"));
                }
            }
        }
        assert_eq!(
            lost,
            [
                "rollback off",
                "rollback normal",
                // The journal's deletion is not durable: it comes back.
                "rollback full",
                "wal off",
                "wal normal"
            ],
            "{id}"
        );
    }
}

#[test]
fn the_counterexample_narrates_the_power_loss_in_one_sentence() {
    for id in DESIGNS {
        let explorer = Explorer::new(catalog::build(id).unwrap()).unwrap();
        let report = explorer
            .exhaustive(search::Options::default(), 10_000, |_| true)
            .unwrap();
        let schedule = Schedule::decode(&report.counterexample.unwrap().schedule).unwrap();
        let run = explorer.replay(&schedule, true).unwrap();
        let notes: Vec<String> = run
            .trace
            .unwrap()
            .iter()
            .filter(|step| step.label == "power")
            .map(|step| step.report.note.clone())
            .collect();
        assert_eq!(notes.len(), 1, "{id}: {notes:?}");
        let note = &notes[0];
        assert!(note.contains("lost power"), "{id}: {note}");
        assert_eq!(note.matches(". ").count(), 0, "{id}: one sentence: {note}");
        assert!(!run.passed, "{id}: the counterexample fails its checks");
    }
}

#[test]
fn a_power_loss_kills_whoever_had_a_connection_on_that_machine() {
    // The power goes out while A is inside its transaction: A dies with
    // it (outcome crashed), its transaction is gone, and C, on another
    // machine, commits.
    let source = include_str!("designs/power-anywhere.toml");
    let file = catalog::parse(source, "power-anywhere").unwrap();
    let explorer = Explorer::new(file.build(&json!({ "synchronous": "full" })).unwrap()).unwrap();
    // A begins and inserts; B waits for A's lock; C commits; the power goes.
    let run = explorer
        .replay(&Schedule::decode("AABCD").unwrap(), true)
        .unwrap();
    let endings: Vec<String> = run
        .statuses
        .iter()
        .map(|s| serde_json::to_value(s).unwrap()["outcome"]["kind"].to_string())
        .collect();
    assert_eq!(
        endings,
        ["\"crashed\"", "\"crashed\"", "\"committed\"", "\"done\""],
        "{:?}",
        run.statuses
    );
    let trace = run.trace.unwrap();
    let tables = &trace.last().unwrap().tables;
    assert_eq!(tables["app.db"]["t"].rows.len(), 0, "{tables:?}");
    assert_eq!(tables["other.db"]["t"].rows.len(), 1, "{tables:?}");
}

#[test]
fn a_death_inside_a_commit_reaches_sqlite_s_recovery_paths() {
    // The process dies, or the power goes out, at each sync of a COMMIT
    // (FULL): the next connection finds a hot journal or a log to recover.
    // The COMMIT never returned, so either answer is right; which one is
    // SQLite's: once a WAL's commit frame is written, a killed process has
    // committed (the operating system keeps the frame), a power cut has not.
    let source = include_str!("designs/inside-commit.toml");
    let file = catalog::parse(source, "inside-commit").unwrap();
    let mut seen = Vec::new();
    for journal in ["rollback", "wal"] {
        for kind in ["at", "power"] {
            for at in ["1", "2", "3"] {
                let explorer = Explorer::new(
                    file.build(&json!({ "journal": journal, kind: at }))
                        .unwrap(),
                )
                .unwrap();
                let run = explorer.run(&mut replayground::RoundRobin, false).unwrap();
                let outcome = |i: usize| {
                    let s = serde_json::to_value(&run.statuses[i]).unwrap();
                    s["outcome"]["kind"].as_str().unwrap().to_string()
                        + &s["outcome"]["result"]
                            .as_str()
                            .map(|r| format!(" {r}"))
                            .unwrap_or_default()
                };
                seen.push(format!(
                    "{journal} {kind} {at}: {}, {}",
                    outcome(0),
                    outcome(1)
                ));
            }
        }
    }
    assert_eq!(
        seen,
        [
            // Journal synced, header synced, database synced: a hot journal
            // rolls the transaction back in every case.
            "rollback at 1: crashed, counted 1",
            "rollback at 2: crashed, counted 1",
            "rollback at 3: crashed, counted 1",
            "rollback power 1: crashed, counted 1",
            "rollback power 2: crashed, counted 1",
            "rollback power 3: crashed, counted 1",
            // The log's header, then its frames: the kill after the commit
            // frame was written leaves it committed; the power cut does not.
            "wal at 1: crashed, counted 1",
            "wal at 2: crashed, counted 2",
            // A WAL commit at FULL makes two syncs: there is no third.
            "wal at 3: committed, counted 2",
            "wal power 1: crashed, counted 1",
            "wal power 2: crashed, counted 1",
            "wal power 3: committed, counted 2",
        ]
    );
    // Armed past the statement's last sync, the step says so.
    let explorer =
        Explorer::new(file.build(&json!({ "journal": "wal", "at": "3" })).unwrap()).unwrap();
    let run = explorer.run(&mut replayground::RoundRobin, true).unwrap();
    let note = &run.trace.unwrap()[2].report.note;
    assert!(
        note.ends_with("made 2 syncs, fewer than the 3 its death was armed at: nothing died"),
        "{note}"
    );
}

#[test]
fn torn_writes_in_a_scenario_corrupt_only_without_syncs() {
    // A power-loss step with `torn = "tearing"`: the writes not yet synced
    // kept or lost 512 bytes at a time, by the Nth fixed sequence of coin
    // flips. At OFF some tearings break the database (and the run says
    // which database could not be read, rather than stopping); at NORMAL
    // and FULL none does.
    let source = include_str!("designs/torn.toml");
    let file = catalog::parse(source, "torn").unwrap();
    for level in ["off", "normal", "full"] {
        let mut broken = 0;
        for tearing in 1..=16 {
            let explorer = Explorer::new(
                file.build(&json!({ "synchronous": level, "tearing": tearing }))
                    .unwrap(),
            )
            .unwrap();
            let run = explorer.run(&mut replayground::RoundRobin, true).unwrap();
            let sound = run
                .checks
                .iter()
                .find(|c| c.name == "the database is sound")
                .unwrap();
            if !sound.pass {
                broken += 1;
            }
        }
        match level {
            "off" => assert!(broken > 0, "{level}: some tearing breaks the database"),
            _ => assert_eq!(broken, 0, "{level}: no tearing breaks the database"),
        }
    }
}
