//! SQLite itself, natively and in the browser from one body: the version both
//! targets run, and two connections sharing one database.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::storage::{self, SharedMemory};
use replayground::Error;

#[test]
fn both_targets_run_the_pinned_sqlite_release() {
    assert_eq!(storage::sqlite_version(), storage::SQLITE_VERSION);
    let versions = storage::Versions::current();
    assert_eq!(versions.sqlite, storage::SQLITE_VERSION);
    assert!(
        versions.sqlite_source_id.len() > 20,
        "source id: {}",
        versions.sqlite_source_id
    );
}

#[test]
fn a_write_through_one_connection_is_read_through_another_after_commit() {
    let trip = storage::round_trip("hello from connection A").expect("round trip");
    assert_eq!(trip.written_id, 1);
    assert!(trip.read_before_write.is_empty(), "{trip:?}");
    assert_eq!(trip.read_after_commit, vec!["hello from connection A"]);
}

#[test]
fn connections_of_one_store_share_rows_and_stores_are_separate() {
    let first = SharedMemory::create("first").unwrap();
    let second = SharedMemory::create("second").unwrap();
    let a = first.connect().unwrap();
    a.execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7);")
        .unwrap();
    let b = first.connect().unwrap();
    let x: i64 = b.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
    assert_eq!(x, 7);
    let other = second.connect().unwrap();
    let err = other.query_row("SELECT x FROM t", [], |r| r.get::<_, i64>(0));
    assert!(err.is_err(), "another store must not see table t");
}

#[test]
fn text_with_quotes_and_sql_is_stored_as_data() {
    let note = "'); DROP TABLE notes; -- \u{1F600}";
    let trip = storage::round_trip(note).unwrap();
    assert_eq!(trip.read_after_commit, vec![note.to_string()]);
}

#[test]
fn empty_and_oversized_notes_are_rejected_with_a_sentence() {
    for note in [String::new(), "x".repeat(storage::MAX_NOTE_CHARS + 1)] {
        match storage::round_trip(&note) {
            Err(Error::InvalidInput { field, reason }) => {
                assert_eq!(field, "note");
                assert!(reason.contains("1 to 1000 characters"), "{reason}");
            }
            other => panic!("expected an invalid-input error, got {other:?}"),
        }
    }
}
