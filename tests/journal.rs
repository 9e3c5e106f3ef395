//! Every scenario in both journal modes: SQLite's rollback journal (the
//! default, as the reference programs run) and WAL. The correct designs are
//! proved in both; the broken ones fail in both, each in its own way.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::file::JOURNAL_PARAM;
use replayground::search;
use replayground::search::Explorer;
use replayground::store::Journal;
use replayground::{Status, Verdict};
use serde_json::json;

fn explorer(id: &str, journal: Journal) -> Explorer {
    let params = json!({ JOURNAL_PARAM: journal.name() });
    Explorer::new(catalog::build_with(id, &params).unwrap()).unwrap()
}

#[test]
fn every_builtin_takes_the_journal_parameter_rollback_by_default() {
    for entry in catalog::all() {
        let param = entry
            .params
            .iter()
            .find(|p| p.name == JOURNAL_PARAM)
            .unwrap_or_else(|| panic!("{} has no journal parameter", entry.id));
        // Rollback, but for the designs about what WAL's synchronous = NORMAL
        // keeps of a commit when the power goes out.
        let default = if entry.id.ends_with("-power-loss") {
            "wal"
        } else {
            "rollback"
        };
        assert_eq!(param.default_value(), json!(default), "{}", entry.id);
        let explorer = Explorer::new(catalog::build(entry.id).unwrap()).unwrap();
        assert_eq!(explorer.params()[JOURNAL_PARAM], json!(default));
    }
}

#[test]
fn correct_designs_are_proved_and_broken_ones_fail_in_both_modes() {
    let mut proved = 0;
    let mut broken = 0;
    for entry in catalog::all() {
        for journal in [Journal::Rollback, Journal::Wal] {
            let report = explorer(entry.id, journal)
                .exhaustive(search::Options::default(), 100_000, |_| true)
                .unwrap();
            assert!(
                report.complete,
                "{} in {journal:?}: the search did not finish",
                entry.id
            );
            assert_eq!(
                report.counterexample.is_some(),
                entry.fails,
                "{} in {journal:?}: {:?}",
                entry.id,
                report.counterexample.as_ref().map(|c| &c.schedule)
            );
            if entry.fails {
                broken += 1;
            } else {
                proved += 1;
            }
        }
    }
    assert_eq!((proved, broken), (36, 20));
}

#[test]
fn the_deferred_begin_deadlocks_with_a_rollback_journal_and_goes_stale_in_wal() {
    let rollback = explorer("idem-deferred", Journal::Rollback)
        .exhaustive(search::Options::default(), 10_000, |_| true)
        .unwrap()
        .counterexample
        .expect("a counterexample");
    assert!(
        matches!(rollback.run.verdict, Verdict::Deadlock { .. }),
        "{:?}",
        rollback.run.verdict
    );
    let wal = explorer("idem-deferred", Journal::Wal)
        .exhaustive(search::Options::default(), 10_000, |_| true)
        .unwrap()
        .counterexample
        .expect("a counterexample");
    assert_eq!(
        wal.run.verdict,
        Verdict::Completed,
        "no deadlock in WAL mode"
    );
    let stale: Vec<&Status> = wal
        .run
        .statuses
        .iter()
        .filter(
            |s| matches!(s, Status::Failed { error, .. } if error.contains("SQLITE_BUSY_SNAPSHOT")),
        )
        .collect();
    assert_eq!(stale.len(), 1, "{:?}", wal.run.statuses);
    // The retry policy that fixes the deadlock fixes the stale snapshot too.
    let retry = explorer("idem-deferred-retry", Journal::Wal)
        .exhaustive(search::Options::default(), 10_000, |_| true)
        .unwrap();
    assert!(retry.counterexample.is_none());
}

#[test]
fn wal_searches_count_the_same_states_every_time() {
    // SQLite draws a WAL's salts at random; two searches of one scenario in
    // one process must still meet the same states.
    let figures = || {
        let report = explorer("idem-race", Journal::Wal)
            .exhaustive(search::Options::default(), 100_000, |_| true)
            .unwrap();
        (report.stats.runs, report.stats.distinct_states)
    };
    let first = figures();
    assert_eq!(first, figures());
    assert!(first.1 < 1_000, "{first:?}");
}

#[test]
fn a_file_runs_in_the_mode_it_names_and_the_parameter_overrides_it() {
    let source = r#"
title = "journal probe"
journal = "wal"
[databases.main]
schema = "CREATE TABLE t (x)"
[[attempts]]
steps = [{ name = "write", sql = "INSERT INTO t VALUES (1)" }]
[[checks]]
name = "mode"
sql = "SELECT journal_mode FROM pragma_journal_mode"
expect = "wal"
"#;
    let file = catalog::parse(source, "probe").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    assert_eq!(explorer.params()[JOURNAL_PARAM], json!("wal"));
    let result = explorer.run(&mut replayground::RoundRobin, false).unwrap();
    assert!(result.passed, "{:?}", result.checks);
    let files: Vec<String> = explorer
        .initial_files()
        .unwrap()
        .into_iter()
        .map(|(name, bytes, _)| {
            // Byte 18 of a database header: 2 in WAL mode, 1 in rollback mode.
            format!("{name}:{}", bytes.get(18).copied().unwrap_or(0))
        })
        .collect();
    assert_eq!(files, ["main.db:2"]);
    let rollback =
        Explorer::new(file.build(&json!({ JOURNAL_PARAM: "rollback" })).unwrap()).unwrap();
    let result = rollback.run(&mut replayground::RoundRobin, false).unwrap();
    assert!(!result.passed, "the check must see the rollback journal");
    assert_eq!(
        result
            .checks
            .iter()
            .find(|c| c.name == "mode")
            .unwrap()
            .actual,
        "delete"
    );
}

#[test]
fn a_mode_that_is_not_one_and_a_parameter_named_journal_are_refused() {
    let base = "title = \"t\"\n[databases.main]\n[[attempts]]\nsteps = [{ name = \"s\", sql = \"SELECT 1\" }]\n";
    let error = catalog::parse(&format!("journal = \"memory\"\n{base}"), "t")
        .unwrap_err()
        .to_string();
    assert!(error.contains("rollback or wal"), "{error}");
    let error = catalog::parse(
        &format!("{base}[params.journal]\ntype = \"text\"\ndefault = \"x\"\n"),
        "t",
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("engine's parameter"), "{error}");
    let error = catalog::build_with("idem-race", &json!({ JOURNAL_PARAM: "truncate" }))
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("rollback") && error.contains("wal"),
        "{error}"
    );
}

#[test]
fn the_catalog_says_how_every_broken_design_fails_in_wal_mode() {
    for entry in catalog::all().iter().filter(|e| e.fails) {
        assert!(
            entry.wal_note.starts_with("In WAL mode")
                || entry.wal_note.starts_with("The same in WAL mode")
                // A design in WAL mode by default says what rollback mode changes.
                || entry.wal_note.starts_with("In rollback mode"),
            "{}: {:?}",
            entry.id,
            entry.wal_note
        );
    }
}

#[test]
fn a_journal_mode_set_by_pragma_is_refused_at_its_line_with_the_way_to_set_it() {
    let source = "title = \"t\"\n[databases.main]\npragmas = \"PRAGMA foreign_keys = ON; PRAGMA main.journal_mode = WAL\"\n[[attempts]]\nsteps = [{ name = \"s\", sql = \"SELECT 1\" }]\n";
    let error = catalog::parse(source, "t").unwrap_err().to_string();
    assert!(error.contains("line 3"), "{error}");
    assert!(
        error.contains("journal = \\\"wal\\\"") || error.contains("journal = \"wal\""),
        "{error}"
    );
    // Reading a refused PRAGMA is fine.
    let reading = source.replace("PRAGMA main.journal_mode = WAL", "PRAGMA journal_mode");
    assert!(catalog::parse(&reading, "t").is_ok());
}
