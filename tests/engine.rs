//! The locking engine, natively and in the browser from one body: SQLite's
//! locks between independent connections, kills with crash recovery,
//! snapshots, and clear errors for bad use.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::store::{self, Conn, LockLevel, SqlValue, Store};
use replayground::Error;

fn store_with_table() -> Store {
    let store = Store::new("engine").unwrap();
    let setup = store.connect("main.db", "setup").unwrap();
    setup
        .execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)",
            &[],
        )
        .unwrap();
    store
}

fn ok(conn: &Conn, sql: &str) {
    conn.execute(sql, &[])
        .unwrap_or_else(|e| panic!("{} `{sql}`: {e}", conn.label()));
}

fn busy(conn: &Conn, sql: &str) {
    match conn.execute(sql, &[]) {
        Err(e) if e.is_busy() => {}
        other => panic!(
            "{} `{sql}`: expected SQLITE_BUSY, got {other:?}",
            conn.label()
        ),
    }
}

fn count(store: &Store) -> i64 {
    let reader = store.connect("main.db", "counter").unwrap();
    match reader.execute("SELECT count(*) FROM t", &[]).unwrap().rows[0][0] {
        SqlValue::Integer(n) => n,
        ref other => panic!("count(*) returned {other:?}"),
    }
}

#[test]
fn a_second_begin_immediate_is_refused_while_the_first_writes() {
    let store = store_with_table();
    let a = store.connect("main.db", "A").unwrap();
    let b = store.connect("main.db", "B").unwrap();
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('a')");
    assert_eq!(a.lock_level(), LockLevel::Reserved);
    busy(&b, "BEGIN IMMEDIATE");
    assert_eq!(b.lock_level(), LockLevel::None);
    ok(&a, "COMMIT");
    assert_eq!(a.lock_level(), LockLevel::None);
    ok(&b, "BEGIN IMMEDIATE");
    ok(&b, "COMMIT");
}

#[test]
fn readers_see_the_last_commit_and_a_reader_delays_the_writers_commit() {
    let store = store_with_table();
    let a = store.connect("main.db", "A").unwrap();
    let b = store.connect("main.db", "B").unwrap();
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('a')");
    ok(&b, "BEGIN");
    let seen = b.execute("SELECT count(*) FROM t", &[]).unwrap();
    assert_eq!(seen.rows, vec![vec![SqlValue::Integer(0)]]);
    assert_eq!(b.lock_level(), LockLevel::Shared);
    busy(&a, "COMMIT");
    assert_eq!(
        a.lock_level(),
        LockLevel::Pending,
        "the writer waits in PENDING"
    );
    ok(&b, "COMMIT");
    ok(&a, "COMMIT");
    assert_eq!(count(&store), 1);
}

#[test]
fn the_deferred_upgrade_deadlock_is_answered_with_busy() {
    let store = store_with_table();
    let a = store.connect("main.db", "A").unwrap();
    let b = store.connect("main.db", "B").unwrap();
    ok(&a, "BEGIN");
    ok(&b, "BEGIN");
    ok(&a, "SELECT count(*) FROM t");
    ok(&b, "SELECT count(*) FROM t");
    ok(&a, "INSERT INTO t (v) VALUES ('a')");
    busy(&b, "INSERT INTO t (v) VALUES ('b')");
    busy(&a, "COMMIT");
    // Neither can proceed until one gives up its transaction.
    ok(&b, "ROLLBACK");
    ok(&a, "COMMIT");
    assert_eq!(count(&store), 1);
}

#[test]
fn a_kill_between_insert_and_commit_leaves_no_trace() {
    let store = store_with_table();
    let mut a = store.connect("main.db", "A").unwrap();
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('lost')");
    a.kill().unwrap();
    assert!(!a.is_alive());
    let files: Vec<String> = store.files().into_iter().map(|(name, _)| name).collect();
    assert!(
        files.contains(&"main.db-journal".to_string()),
        "the dead transaction leaves its hot journal: {files:?}"
    );
    // Its locks vanished: another connection writes at once, after rolling back the journal.
    let b = store.connect("main.db", "B").unwrap();
    ok(&b, "BEGIN IMMEDIATE");
    ok(&b, "INSERT INTO t (v) VALUES ('kept')");
    ok(&b, "COMMIT");
    let rows = b.execute("SELECT v FROM t ORDER BY id", &[]).unwrap().rows;
    assert_eq!(rows, vec![vec![SqlValue::from("kept")]]);
    assert!(store
        .files()
        .iter()
        .all(|(name, _)| name != "main.db-journal"));
    let check = b.execute("PRAGMA integrity_check", &[]).unwrap().rows;
    assert_eq!(check, vec![vec![SqlValue::from("ok")]]);
}

#[test]
fn a_kill_with_a_spilled_cache_is_rolled_back_by_the_next_reader() {
    // A transaction too big for its page cache writes into the database file
    // before COMMIT; only the hot journal can undo that after a kill.
    let store = store_with_table();
    let mut a = store.connect("main.db", "A").unwrap();
    ok(&a, "PRAGMA cache_size = 2");
    ok(&a, "BEGIN IMMEDIATE");
    for _ in 0..200 {
        ok(&a, "INSERT INTO t (v) VALUES (printf('%.500c', 'x'))");
    }
    let before = store.file_bytes("main.db").unwrap().len();
    assert!(
        before > 8192,
        "the spill wrote pages into the database file ({before} bytes)"
    );
    a.kill().unwrap();
    assert_eq!(count(&store), 0);
    let b = store.connect("main.db", "B").unwrap();
    let check = b.execute("PRAGMA integrity_check", &[]).unwrap().rows;
    assert_eq!(check, vec![vec![SqlValue::from("ok")]]);
}

#[test]
fn a_kill_after_commit_loses_nothing() {
    let store = store_with_table();
    let mut a = store.connect("main.db", "A").unwrap();
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('committed')");
    ok(&a, "COMMIT");
    a.kill().unwrap();
    assert_eq!(count(&store), 1);
}

#[test]
fn a_killed_reader_releases_its_shared_lock() {
    let store = store_with_table();
    let a = store.connect("main.db", "A").unwrap();
    let mut b = store.connect("main.db", "B").unwrap();
    ok(&b, "BEGIN");
    ok(&b, "SELECT * FROM t");
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('a')");
    busy(&a, "COMMIT");
    b.kill().unwrap();
    ok(&a, "COMMIT");
    assert_eq!(count(&store), 1);
}

#[test]
fn a_snapshot_restores_every_file() {
    let store = store_with_table();
    let snapshot = store.snapshot();
    {
        let a = store.connect("main.db", "A").unwrap();
        ok(&a, "INSERT INTO t (v) VALUES ('after the snapshot')");
    }
    assert_eq!(count(&store), 1);
    store.restore(&snapshot).unwrap();
    assert_eq!(count(&store), 0);
    assert_eq!(store.files(), snapshot.files());
    // Restoring again is as cheap and as exact.
    store.restore(&snapshot).unwrap();
    assert_eq!(count(&store), 0);
}

#[test]
fn a_snapshot_taken_mid_transaction_is_a_crash_image() {
    let store = store_with_table();
    let a = store.connect("main.db", "A").unwrap();
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('in flight')");
    let image = store.snapshot();
    ok(&a, "COMMIT");
    drop(a);
    store.restore(&image).unwrap();
    assert_eq!(
        count(&store),
        0,
        "the hot journal in the image rolls the write back"
    );
}

#[test]
fn restoring_while_a_connection_is_mid_transaction_is_refused() {
    let store = store_with_table();
    let snapshot = store.snapshot();
    let a = store.connect("main.db", "A").unwrap();
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO t (v) VALUES ('a')");
    let error = store.restore(&snapshot).unwrap_err();
    assert!(
        error.to_string().contains("mid-transaction (A hold locks)"),
        "{error}"
    );
    ok(&a, "COMMIT");
    let error = store.restore(&snapshot).unwrap_err();
    assert!(
        error.to_string().contains("connections are open (A)"),
        "{error}"
    );
    drop(a);
    assert_eq!(count(&store), 1, "the refused restores changed nothing");
    store.restore(&snapshot).unwrap();
    assert_eq!(count(&store), 0);
}

#[test]
fn a_snapshot_of_another_store_is_refused() {
    let first = store_with_table();
    let second = store_with_table();
    let error = second.restore(&first.snapshot()).unwrap_err();
    assert!(error.to_string().contains("was taken of store"), "{error}");
}

#[test]
fn killing_a_dead_connection_is_an_error_and_so_is_using_it() {
    let store = store_with_table();
    let mut a = store.connect("main.db", "A").unwrap();
    a.kill().unwrap();
    let again = a.kill().unwrap_err();
    assert_eq!(
        again.to_string(),
        "connection A is dead (it was killed); open a new connection to continue"
    );
    assert!(matches!(
        a.execute("SELECT 1", &[]),
        Err(Error::Dead { .. })
    ));
}

#[test]
fn an_unknown_store_is_a_clear_error() {
    let error = Store::open("no-such-store").err().expect("must fail");
    assert_eq!(
        error.to_string(),
        "no store named \"no-such-store\" exists on this thread; create one with Store::new"
    );
    let store = store_with_table();
    assert_eq!(Store::open(store.name()).unwrap().name(), store.name());
    // SQLite itself cannot open a file of a store that does not exist.
    let raw = rusqlite::Connection::open_with_flags(
        "file:/no-such-store/main.db?vfs=replayground",
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    );
    assert!(raw.is_err(), "opening a file of an unknown store must fail");
}

#[test]
fn bad_names_are_refused_before_anything_is_created() {
    for label in ["", "a/b", "../x", "x y", &"x".repeat(65)] {
        let error = Store::new(label).err().expect("must fail");
        assert!(
            error.to_string().starts_with("invalid store label"),
            "{error}"
        );
    }
    let store = Store::new("names").unwrap();
    for db in ["", "a/b", ".hidden", "x?vfs=unix"] {
        let error = store.connect(db, "A").err().expect("must fail");
        assert!(
            error.to_string().starts_with("invalid database name"),
            "{error}"
        );
    }
    assert!(store.files().is_empty());
}

#[test]
fn the_vfs_passes_the_rsqlite_vfs_test_suite() {
    store::run_rsqlite_vfs_test_suite().unwrap();
}

fn refused(conn: &Conn, sql: &str) -> Error {
    conn.execute(sql, &[])
        .err()
        .unwrap_or_else(|| panic!("{} `{sql}` must be refused", conn.label()))
}

fn one_value(conn: &Conn, sql: &str) -> SqlValue {
    let rows = conn
        .execute(sql, &[])
        .unwrap_or_else(|e| panic!("{} `{sql}`: {e}", conn.label()))
        .rows;
    assert_eq!(rows.len(), 1, "`{sql}` gave {rows:?}");
    rows[0][0].clone()
}

#[test]
fn journal_mode_wal_is_sqlites_wal_with_a_log_and_a_wal_index() {
    let store = store_with_table();
    let a = store.connect("main.db", "a").unwrap();
    // SQLite takes any case-insensitive prefix of "wal" ("w", "wa") as WAL.
    for sql in [
        "PRAGMA journal_mode = WAL",
        "pragma JOURNAL_MODE=wal",
        "PRAGMA journal_mode='Wal'",
        "PRAGMA  journal_mode  =  \"wal\"",
        "PRAGMA journal_mode(WAL)",
        "PRAGMA main.journal_mode=WAL",
        "PRAGMA journal_mode = w",
        "PRAGMA journal_mode = wa",
    ] {
        assert_eq!(one_value(&a, sql), SqlValue::from("wal"), "`{sql}`");
    }
    ok(&a, "INSERT INTO t (v) VALUES ('in the log')");
    let names: Vec<String> = store.files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["main.db", "main.db-shm", "main.db-wal"]);
    // A reader keeps its snapshot while a writer commits beside it.
    let b = store.connect("main.db", "b").unwrap();
    ok(&b, "BEGIN");
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM t"),
        SqlValue::Integer(1)
    );
    ok(&a, "INSERT INTO t (v) VALUES ('after the snapshot')");
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM t"),
        SqlValue::Integer(1)
    );
    assert!(
        b.shm_locks().describe().contains("READ"),
        "{:?}",
        b.shm_locks()
    );
    // ... and cannot write on it: SQLITE_BUSY_SNAPSHOT, not a wait.
    let error = refused(&b, "INSERT INTO t (v) VALUES ('stale')");
    assert_eq!(error.sqlite_code(), Some(517), "{error}");
    ok(&b, "ROLLBACK");
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM t"),
        SqlValue::Integer(2)
    );
    drop(b);
    drop(a);
    // The last connection checkpoints and deletes the log and the wal-index.
    let names: Vec<String> = store.files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["main.db"]);
    let c = store.connect("main.db", "c").unwrap();
    assert_eq!(one_value(&c, "PRAGMA journal_mode"), SqlValue::from("wal"));
    assert_eq!(
        one_value(&c, "SELECT count(*) FROM t"),
        SqlValue::Integer(2)
    );
}

#[test]
fn a_killed_wal_writer_leaves_the_log_for_the_next_connection_to_recover() {
    let store = store_with_table();
    let mut a = store.connect("main.db", "a").unwrap();
    ok(&a, "PRAGMA journal_mode = WAL");
    ok(&a, "PRAGMA wal_autocheckpoint = 0");
    ok(&a, "INSERT INTO t (v) VALUES ('committed')");
    ok(&a, "BEGIN");
    ok(&a, "INSERT INTO t (v) VALUES ('lost')");
    assert!(a.shm_locks().describe().contains("WRITE x"));
    a.kill().unwrap();
    // The dead connection deleted nothing and checkpointed nothing.
    let names: Vec<String> = store.files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["main.db", "main.db-shm", "main.db-wal"]);
    // Nobody maps the wal-index: the next connection rebuilds it from the log.
    let b = store.connect("main.db", "b").unwrap();
    assert_eq!(
        b.execute("SELECT v FROM t", &[]).unwrap().rows,
        vec![vec![SqlValue::from("committed")]]
    );
    assert_eq!(
        one_value(&b, "PRAGMA integrity_check"),
        SqlValue::from("ok")
    );
    ok(&b, "INSERT INTO t (v) VALUES ('next')");
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM t"),
        SqlValue::Integer(2)
    );
}

#[test]
fn wal_in_exclusive_locking_mode_and_a_kill_leave_the_database_readable() {
    // In locking_mode EXCLUSIVE SQLite keeps the wal-index in heap memory;
    // the log it leaves is recovered by the next connection all the same.
    let store = store_with_table();
    let mut a = store.connect("main.db", "a").unwrap();
    ok(&a, "PRAGMA locking_mode = EXCLUSIVE");
    assert_eq!(
        one_value(&a, "PRAGMA journal_mode = WAL"),
        SqlValue::from("wal")
    );
    ok(&a, "INSERT INTO t (v) VALUES ('committed')");
    ok(&a, "BEGIN");
    ok(&a, "INSERT INTO t (v) VALUES ('lost')");
    a.kill().unwrap();
    let b = store.connect("main.db", "b").unwrap();
    assert_eq!(
        b.execute("SELECT v FROM t", &[]).unwrap().rows,
        vec![vec![SqlValue::from("committed")]]
    );
    assert_eq!(one_value(&b, "PRAGMA journal_mode"), SqlValue::from("wal"));
    assert_eq!(
        one_value(&b, "PRAGMA integrity_check"),
        SqlValue::from("ok")
    );
}

#[test]
fn snapshots_carry_the_log_and_the_wal_index() {
    let store = store_with_table();
    let a = store.connect("main.db", "a").unwrap();
    ok(&a, "PRAGMA journal_mode = WAL");
    ok(&a, "PRAGMA wal_autocheckpoint = 0");
    ok(&a, "INSERT INTO t (v) VALUES ('one')");
    ok(&a, "INSERT INTO t (v) VALUES ('two')");
    // Taken mid-run: the image a crash would leave (the log, the wal-index).
    let snapshot = store.snapshot();
    let names: Vec<String> = snapshot.files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["main.db", "main.db-shm", "main.db-wal"]);
    let copy = Store::from_snapshot("copy", &snapshot).unwrap();
    let b = copy.connect("main.db", "b").unwrap();
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM t"),
        SqlValue::Integer(2)
    );
    ok(&b, "INSERT INTO t (v) VALUES ('three')");
    drop(b);
    // Equal bytes hash equal, the wal-index included.
    let hash = |s: &Store| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.hash_files(&mut h);
        std::hash::Hasher::finish(&h)
    };
    let again = Store::from_snapshot("again", &snapshot).unwrap();
    let other = Store::from_snapshot("other", &snapshot).unwrap();
    assert_eq!(hash(&again), hash(&other));
    assert_ne!(hash(&again), hash(&copy));
    // A restore puts the log and the wal-index back.
    copy.copy_files_from(&again).unwrap();
    let c = copy.connect("main.db", "c").unwrap();
    assert_eq!(
        one_value(&c, "SELECT count(*) FROM t"),
        SqlValue::Integer(2)
    );
}

#[test]
fn a_shared_memory_file_name_is_not_a_database_name() {
    let store = store_with_table();
    let a = store.connect("main.db", "a").unwrap();
    let error = refused(&a, "ATTACH 'main.db-shm' AS shm");
    assert!(error.to_string().contains("-shm"), "{error}");
    assert!(store.connect("other.db-shm", "b").is_err());
}

#[test]
fn mmap_size_answers_as_on_real_files() {
    // The unix VFS on 64-bit Linux: 0 by default, the limit set, at most
    // SQLITE_MAX_MMAP_SIZE (0x7fff0000), a negative size means the default.
    let store = store_with_table();
    let a = store.connect("main.db", "a").unwrap();
    let int = |sql: &str| one_value(&a, sql);
    assert_eq!(int("PRAGMA mmap_size"), SqlValue::Integer(0));
    assert_eq!(int("PRAGMA mmap_size = 65536"), SqlValue::Integer(65536));
    assert_eq!(int("PRAGMA main.mmap_size"), SqlValue::Integer(65536));
    assert_eq!(
        int("PRAGMA mmap_size = 1000000000000"),
        SqlValue::Integer(0x7fff_0000)
    );
    ok(&a, "INSERT INTO t (v) VALUES ('read back through xRead')");
    assert_eq!(int("SELECT count(*) FROM t"), SqlValue::Integer(1));
    assert_eq!(int("PRAGMA mmap_size = -1"), SqlValue::Integer(0));
    let b = store.connect("main.db", "b").unwrap();
    assert_eq!(one_value(&b, "PRAGMA mmap_size"), SqlValue::Integer(0));
}

#[test]
fn a_plain_name_attaches_a_file_of_the_same_store() {
    let store = store_with_table();
    let a = store.connect("main.db", "a").unwrap();
    ok(&a, "ATTACH 'aux.db' AS aux");
    ok(&a, "CREATE TABLE aux.u (x)");
    ok(&a, "INSERT INTO aux.u VALUES (1)");
    assert!(store.files().iter().any(|(name, _)| name == "aux.db"));
    // Another connection attaches the same file and sees the row.
    let b = store.connect("main.db", "b").unwrap();
    ok(&b, "ATTACH 'aux.db' AS other");
    assert_eq!(one_value(&b, "SELECT x FROM other.u"), SqlValue::Integer(1));
    // The attached file is locked like the main one: a writer there blocks
    // another writer there.
    ok(&a, "BEGIN IMMEDIATE");
    ok(&a, "INSERT INTO aux.u VALUES (2)");
    busy(&b, "INSERT INTO other.u VALUES (3)");
    ok(&a, "COMMIT");
    ok(&b, "INSERT INTO other.u VALUES (3)");
    assert_eq!(
        one_value(&a, "SELECT group_concat(x) FROM aux.u"),
        SqlValue::from("1,2,3")
    );
    // Attached files run in WAL mode too.
    assert_eq!(
        one_value(&a, "PRAGMA aux.journal_mode = WAL"),
        SqlValue::from("wal")
    );
    ok(&a, "INSERT INTO aux.u VALUES (4)");
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM other.u"),
        SqlValue::Integer(4)
    );
    assert!(store.files().iter().any(|(name, _)| name == "aux.db-shm"));
    ok(&a, "DETACH aux");
}

#[test]
fn a_kill_reaches_the_attached_files_locks_and_pending_writes() {
    let store = store_with_table();
    let mut a = store.connect("main.db", "a").unwrap();
    ok(&a, "ATTACH 'aux.db' AS aux");
    ok(&a, "CREATE TABLE aux.u (x)");
    ok(&a, "PRAGMA aux.cache_size = 2");
    ok(&a, "BEGIN");
    ok(&a, "INSERT INTO t (v) VALUES ('main')");
    for _ in 0..40 {
        ok(&a, "INSERT INTO aux.u VALUES (printf('%.800c', 'a'))");
    }
    a.kill().unwrap();
    let b = store.connect("main.db", "b").unwrap();
    ok(&b, "ATTACH 'aux.db' AS aux");
    // The kill released a's lock on aux.db (its cache had spilled there with
    // an EXCLUSIVE lock) and b rolls the hot journal back.
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM aux.u"),
        SqlValue::Integer(0)
    );
    assert_eq!(
        one_value(&b, "SELECT count(*) FROM t"),
        SqlValue::Integer(0)
    );
    assert_eq!(
        one_value(&b, "PRAGMA aux.integrity_check"),
        SqlValue::from("ok")
    );
    ok(&b, "INSERT INTO aux.u VALUES (1)");
}

#[test]
fn names_that_would_leave_the_store_are_refused() {
    let store = store_with_table();
    let other = Store::new("other").unwrap();
    other.connect("main.db", "other").unwrap();
    let a = store.connect("main.db", "a").unwrap();
    for name in [
        format!("/{}/main.db", other.name()),
        format!("/{}/aux.db", store.name()),
        "/tmp/replayground-escape.db".to_string(),
        "../aux.db".to_string(),
        "sub/aux.db".to_string(),
        "..".to_string(),
        ".hidden".to_string(),
        "file:aux.db?vfs=unix".to_string(),
        "file:/tmp/replayground-escape.db?vfs=unix".to_string(),
        "file:aux.db?vfs=memdb".to_string(),
        "file:aux.db".to_string(),
    ] {
        let error = refused(&a, &format!("ATTACH '{name}' AS x"));
        assert_eq!(error.sqlite_code(), Some(14), "{name}: {error}");
    }
    // Also when the name is computed, and for VACUUM INTO.
    let error = refused(&a, "ATTACH 'file:' || 'aux.db?vfs=unix' AS x");
    assert_eq!(error.sqlite_code(), Some(14), "{error}");
    let error = refused(
        &a,
        "VACUUM INTO 'file:/tmp/replayground-escape.db?vfs=unix'",
    );
    assert_eq!(error.sqlite_code(), Some(14), "{error}");
    assert!(!std::path::Path::new("/tmp/replayground-escape.db").exists());
    let names: Vec<String> = store.files().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["main.db"]);
    assert_eq!(other.files().len(), 1);
}

/// Two histories from one snapshot can leave different rows under the same
/// file change counter, which is all SQLite checks before it trusts its page
/// cache: a connection that read one history and is kept across a rewind to
/// the other must forget its cache, and does (`Conn::forget_stale_cache`);
/// one that skips it reads the rows of a history that no longer exists.
#[test]
fn a_connection_kept_across_a_rewind_forgets_a_stale_cache() {
    let store = Store::new("stale-cache").unwrap();
    let setup = store.connect("db", "setup").unwrap();
    setup
        .execute_batch("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('start');")
        .unwrap();
    drop(setup);
    let start = store.snapshot();
    let read = |conn: &Conn| match &conn.execute("SELECT v FROM t", &[]).unwrap().rows[0][0] {
        SqlValue::Text(text) => text.clone(),
        other => panic!("{other:?}"),
    };
    let writer = store.connect("db", "writer").unwrap();
    let careful = store.connect("db", "careful").unwrap();
    let careless = store.connect("db", "careless").unwrap();
    // History one: 'one' committed, read (and cached) by both readers.
    writer.execute("UPDATE t SET v = 'one'", &[]).unwrap();
    assert_eq!(read(&careful), "one");
    assert_eq!(read(&careless), "one");
    // Back to the start; history two commits 'two' (the same counter).
    store.rewind(&start, &[]).unwrap();
    writer.forget_stale_cache().unwrap();
    writer.execute("UPDATE t SET v = 'two'", &[]).unwrap();
    careful.forget_stale_cache().unwrap();
    assert_eq!(read(&careful), "two");
    assert_eq!(
        read(&careless),
        "one",
        "SQLite trusted a cache of the other history"
    );
    // A file unchanged since a connection read it keeps its cache: still right.
    let two = store.snapshot();
    store.rewind(&two, &[]).unwrap();
    careful.forget_stale_cache().unwrap();
    assert_eq!(read(&careful), "two");
}
