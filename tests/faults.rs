//! I/O faults on the VFS, natively and in the browser from one body: a
//! full disk and a failing write or sync, where SQLite really meets them;
//! and the built-in whose COMMIT fails on a full disk.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search::{self, Explorer};
use replayground::store::{IoCall, SqlValue, Store};
use serde_json::json;

/// A store with an empty table `t`, in `journal` mode.
fn store(journal: &str) -> Store {
    let store = Store::new("faults").unwrap();
    let setup = store.connect("main.db", "setup").unwrap();
    setup
        .execute(&format!("PRAGMA journal_mode = {journal}"), &[])
        .unwrap();
    setup
        .execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)",
            &[],
        )
        .unwrap();
    drop(setup);
    store
}

fn count(store: &Store) -> SqlValue {
    let c = store.connect("main.db", "count").unwrap();
    c.execute("SELECT count(*) FROM t", &[]).unwrap().rows[0][0].clone()
}

/// A transaction of one row whose COMMIT meets `fault` (set up by the
/// closure); what COMMIT answered (its extended code), and whether the
/// transaction was still open after it.
fn commit_meeting(journal: &str, fault: impl Fn(&Store)) -> (Option<i32>, bool, Store) {
    let store = store(journal);
    let c = store.connect("main.db", "c").unwrap();
    c.execute("BEGIN IMMEDIATE", &[]).unwrap();
    c.execute("INSERT INTO t (v) VALUES ('x')", &[]).unwrap();
    fault(&store);
    let code = c.execute("COMMIT", &[]).err().and_then(|e| e.sqlite_code());
    let open = c.in_transaction();
    if open {
        c.execute("ROLLBACK", &[]).unwrap();
    }
    drop(c);
    (code, open, store)
}

#[test]
fn a_commit_on_a_full_disk_fails_and_sqlite_rolls_it_back() {
    for journal in ["DELETE", "WAL"] {
        let (code, open, store) = commit_meeting(journal, |s| s.set_disk_full(&[], true));
        // SQLITE_FULL, and the transaction is over (rolled back).
        assert_eq!((code, open), (Some(13), false), "{journal}");
        assert_eq!(count(&store), SqlValue::Integer(0), "{journal}");
        // Room again: the same transaction commits.
        store.set_disk_full(&[], false);
        let c = store.connect("main.db", "again").unwrap();
        c.execute("INSERT INTO t (v) VALUES ('y')", &[]).unwrap();
        drop(c);
        assert_eq!(count(&store), SqlValue::Integer(1), "{journal}");
    }
}

#[test]
fn a_failing_write_or_sync_fails_the_commit_once() {
    for journal in ["DELETE", "WAL"] {
        for (call, expected) in [(IoCall::Write, 778), (IoCall::Sync, 1034)] {
            let (code, _, store) = commit_meeting(journal, |s| s.fail_next(&[], call));
            assert_eq!(code, Some(expected), "{journal} {call:?}");
            // Only the next call fails: the database is sound, and the next
            // transaction commits.
            let c = store.connect("main.db", "after").unwrap();
            let check = c.execute("PRAGMA integrity_check", &[]).unwrap().rows;
            assert_eq!(
                check,
                vec![vec![SqlValue::from("ok")]],
                "{journal} {call:?}"
            );
            c.execute("INSERT INTO t (v) VALUES ('y')", &[]).unwrap();
            drop(c);
            let SqlValue::Integer(n) = count(&store) else {
                panic!("a count")
            };
            assert!((1..=2).contains(&n), "{journal} {call:?}: {n} rows");
        }
    }
}

#[test]
fn a_full_disk_fails_a_write_that_grows_a_file_and_only_on_its_machine() {
    // The journal and the database already hold their pages: an update of
    // one row in place needs the journal to grow, which fails; reads work.
    let store = store("DELETE");
    let c = store.connect("main.db", "c").unwrap();
    c.execute("INSERT INTO t (v) VALUES ('x')", &[]).unwrap();
    store.set_disk_full(&["main.db".to_string()], true);
    let err = c.execute("UPDATE t SET v = 'y'", &[]).unwrap_err();
    assert_eq!(err.sqlite_code(), Some(13), "{err}");
    assert_eq!(
        c.execute("SELECT v FROM t", &[]).unwrap().rows,
        vec![vec![SqlValue::from("x")]]
    );
    // Another machine's disk is not this one's.
    store.set_disk_full(&["main.db".to_string()], false);
    store.set_disk_full(&["other.db".to_string()], true);
    c.execute("UPDATE t SET v = 'y'", &[]).unwrap();
}

#[test]
fn the_blind_commit_retry_fails_as_declared_and_starting_over_holds() {
    let search = |params: serde_json::Value| {
        let explorer =
            Explorer::new(catalog::build_with("idem-disk-full", &params).unwrap()).unwrap();
        let report = explorer
            .exhaustive(search::Options::default(), 10_000, |_| true)
            .unwrap();
        assert!(report.complete);
        report.counterexample.map(|c| c.schedule)
    };
    assert!(catalog::entry("idem-disk-full").unwrap().fails);
    for journal in ["rollback", "wal"] {
        let broken = search(json!({ "journal": journal }));
        assert!(broken.is_some(), "{journal}: the blind retry is caught");
        let fixed = search(json!({ "journal": journal, "onCommitError": "start-over" }));
        assert_eq!(fixed, None, "{journal}: starting over holds");
    }
}

#[test]
fn a_fault_step_is_refused_with_a_sentence_when_miswritten() {
    let design = |step: &str| {
        format!(
            "title = \"faults\"\n[databases.app]\nschema = \"CREATE TABLE t (x);\"\n[[attempts]]\nsteps = [ {step} ]\n"
        )
    };
    for (step, says) in [
        (
            r#"{ name = "e", action = "io-error" }"#,
            "says which call fails",
        ),
        (
            r#"{ name = "e", action = "io-error", call = "read" }"#,
            "is not a call that can fail",
        ),
        (
            r#"{ name = "e", action = "disk-full", call = "sync" }"#,
            "this step is not one",
        ),
        (
            r#"{ name = "e", action = "disk-full", databases = ["nope"] }"#,
            "not declared",
        ),
        (
            r#"{ name = "e", sql = "SELECT 1", databases = ["app"] }"#,
            "databases names the machine",
        ),
    ] {
        let error = catalog::parse(&design(step), "faults")
            .and_then(|f| f.build(&serde_json::Value::Null).map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(error.contains(says), "{step}: {error}");
    }
}
