//! SQLite itself, natively and in the browser from one body: the version both
//! targets run, and two connections sharing one database.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::store::{self, LockLevel, SqlValue, Store};
use replayground::Error;

#[test]
fn both_targets_run_the_pinned_sqlite_release() {
    assert_eq!(store::sqlite_version(), store::SQLITE_VERSION);
    let versions = store::Versions::current();
    assert_eq!(versions.sqlite, store::SQLITE_VERSION);
    assert!(
        versions.sqlite_source_id.len() > 20,
        "source id: {}",
        versions.sqlite_source_id
    );
}

#[test]
fn a_write_through_one_connection_is_read_through_another_after_commit() {
    let trip = store::round_trip("hello from connection A").expect("round trip");
    assert_eq!(trip.written_id, 1);
    assert_eq!(trip.writer_lock, "RESERVED");
    assert!(trip.read_during_write.is_empty(), "{trip:?}");
    assert_eq!(trip.read_after_commit, vec!["hello from connection A"]);
}

#[test]
fn connections_of_one_store_share_rows_and_stores_are_separate() {
    let first = Store::new("first").unwrap();
    let second = Store::new("second").unwrap();
    let a = first.connect("main.db", "a").unwrap();
    a.execute("CREATE TABLE t (x INTEGER)", &[]).unwrap();
    a.execute("INSERT INTO t VALUES (7)", &[]).unwrap();
    let b = first.connect("main.db", "b").unwrap();
    let rows = b.execute("SELECT x FROM t", &[]).unwrap();
    assert_eq!(rows.rows, vec![vec![SqlValue::Integer(7)]]);
    let other = second.connect("main.db", "other").unwrap();
    let err = other.execute("SELECT x FROM t", &[]).unwrap_err();
    assert!(err.to_string().contains("no such table: t"), "{err}");
    assert_eq!(a.lock_level(), LockLevel::None);
}

#[test]
fn text_with_quotes_and_sql_is_stored_as_data() {
    let note = "'); DROP TABLE notes; -- \u{1F600}";
    let trip = store::round_trip(note).unwrap();
    assert_eq!(trip.read_after_commit, vec![note.to_string()]);
}

#[test]
fn empty_and_oversized_notes_are_rejected_with_a_sentence() {
    for note in [String::new(), "x".repeat(store::MAX_NOTE_CHARS + 1)] {
        match store::round_trip(&note) {
            Err(Error::InvalidInput { field, reason }) => {
                assert_eq!(field, "note");
                assert!(reason.contains("1 to 1000 characters"), "{reason}");
            }
            other => panic!("expected an invalid-input error, got {other:?}"),
        }
    }
}

#[test]
fn both_targets_run_sqlite_with_upstream_defaults() {
    let store = Store::new("defaults").unwrap();
    let conn = store.connect("main.db", "probe").unwrap();
    let pragma = |sql: &str| conn.execute(sql, &[]).unwrap().rows[0][0].clone();
    assert_eq!(pragma("PRAGMA page_size"), SqlValue::Integer(4096));
    assert_eq!(pragma("PRAGMA cache_size"), SqlValue::Integer(-2000));
    assert_eq!(pragma("PRAGMA foreign_keys"), SqlValue::Integer(0));
    assert_eq!(pragma("PRAGMA temp_store"), SqlValue::Integer(0));
    assert_eq!(pragma("PRAGMA journal_mode"), SqlValue::from("delete"));
}

#[test]
fn both_targets_compile_sqlite_with_the_same_features() {
    let store = Store::new("options").unwrap();
    let conn = store.connect("main.db", "probe").unwrap();
    let rows = conn.execute("PRAGMA compile_options", &[]).unwrap().rows;
    // The unix VFS's mmap ceiling on 64-bit Linux, so that `PRAGMA mmap_size`
    // answers alike (wasm32 would default to 0, a constant answer).
    assert!(
        rows.contains(&vec![SqlValue::from("MAX_MMAP_SIZE=0x7fff0000")]),
        "{rows:?}"
    );
    // URI filenames stay off (upstream's default; both crates turn them on):
    // a name in ATTACH is then a plain name the VFS keeps within the store.
    assert!(
        !rows
            .iter()
            .any(|r| matches!(&r[0], SqlValue::Text(t) if t.starts_with("USE_URI"))),
        "{rows:?}"
    );
    let mut features: Vec<String> = rows
        .into_iter()
        .filter_map(|r| match r.into_iter().next() {
            Some(SqlValue::Text(t)) if t.starts_with("OMIT_") || t.starts_with("ENABLE_") => {
                Some(t)
            }
            _ => None,
        })
        .collect();
    features.sort();
    assert_eq!(
        features,
        [
            "ENABLE_API_ARMOR",
            "OMIT_AUTOVACUUM",
            "OMIT_COMPLETE",
            "OMIT_DECLTYPE",
            "OMIT_DEPRECATED",
            "OMIT_GET_TABLE",
            "OMIT_INCRBLOB",
            "OMIT_JSON",
            "OMIT_LOAD_EXTENSION",
            "OMIT_SHARED_CACHE",
            "OMIT_TCL_VARIABLE",
            "OMIT_UTF16",
        ]
    );
}
