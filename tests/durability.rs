//! Power loss on the VFS, natively and in the browser from one body: what
//! each `synchronous` level keeps of a transaction whose `COMMIT` returned,
//! in both journal modes, with whole and with torn writes; what SQLite
//! documents is what the store shows.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::store::{SqlValue, Store};

const LEVELS: [&str; 4] = ["OFF", "NORMAL", "FULL", "EXTRA"];

/// A store with table `t` holding rows 1 and 2, durable, in `journal` mode.
fn store(journal: &str) -> Store {
    let store = Store::new("power").unwrap();
    let setup = store.connect("main.db", "setup").unwrap();
    setup
        .execute(&format!("PRAGMA journal_mode = {journal}"), &[])
        .unwrap();
    for sql in [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)",
        "INSERT INTO t (v) VALUES ('one'), ('two')",
    ] {
        setup.execute(sql, &[]).unwrap();
    }
    drop(setup);
    store.keep_durability();
    store
}

/// What a fresh connection finds: the ids of `t`, and `PRAGMA integrity_check`.
fn after(store: &Store) -> (Vec<i64>, String) {
    let reader = store.connect("main.db", "after").unwrap();
    let check = match reader.execute("PRAGMA integrity_check", &[]) {
        Ok(rows) => format!("{:?}", rows.rows[0][0]),
        Err(e) => e.to_string(),
    };
    let ids = match reader.execute("SELECT id FROM t ORDER BY id", &[]) {
        Ok(rows) => rows
            .rows
            .iter()
            .map(|r| match r[0] {
                SqlValue::Integer(i) => i,
                _ => -1,
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    (ids, check)
}

const OK: &str = "Text(\"ok\")";

/// Commits `sql` (several rows, spread over pages) at `level`, then the
/// power goes out with writes kept or lost as `torn` says.
fn commit_then_power_loss(
    journal: &str,
    level: &str,
    sql: &str,
    torn: Option<&mut dyn FnMut() -> bool>,
) -> (Vec<i64>, String) {
    let store = store(journal);
    let writer = store.connect("main.db", "writer").unwrap();
    writer
        .execute(&format!("PRAGMA synchronous = {level}"), &[])
        .unwrap();
    writer.execute(sql, &[]).unwrap();
    assert_eq!(store.power_loss(&[], torn).unwrap(), 1);
    // The dead connection's handle is only dropped.
    drop(writer);
    after(&store)
}

const THIRD_ROW: &str = "INSERT INTO t (v) VALUES ('three')";

#[test]
fn a_returned_commit_survives_power_loss_as_synchronous_promises() {
    let mut found = Vec::new();
    for journal in ["DELETE", "WAL"] {
        for level in LEVELS {
            let (ids, check) = commit_then_power_loss(journal, level, THIRD_ROW, None);
            assert_eq!(check, OK, "{journal} {level}");
            found.push(format!("{journal} {level}: {ids:?}"));
        }
    }
    assert_eq!(
        found,
        [
            // Nothing synced: the commit is lost.
            "DELETE OFF: [1, 2]",
            // In rollback mode NORMAL syncs the journal and the database
            // but, as FULL, never the directory after deleting the journal:
            // the journal comes back and rolls the commit back.
            "DELETE NORMAL: [1, 2]",
            "DELETE FULL: [1, 2]",
            // EXTRA syncs the directory after the deletion (SQLite's docs:
            // "additional durability if the commit is followed closely by a
            // power loss").
            "DELETE EXTRA: [1, 2, 3]",
            "WAL OFF: [1, 2]",
            // WAL NORMAL syncs only at a checkpoint: consistent, but the
            // last transactions are lost.
            "WAL NORMAL: [1, 2]",
            // FULL syncs the log at every commit.
            "WAL FULL: [1, 2, 3]",
            "WAL EXTRA: [1, 2, 3]",
        ]
    );
}

#[test]
fn the_next_transaction_makes_the_deletion_of_the_journal_durable() {
    // FULL in rollback mode: the second transaction's journal is created and
    // synced with its directory, which makes the first one's deletion
    // durable: only the last commit is at risk.
    let store = store("DELETE");
    let writer = store.connect("main.db", "writer").unwrap();
    writer.execute(THIRD_ROW, &[]).unwrap();
    writer
        .execute("INSERT INTO t (v) VALUES ('four')", &[])
        .unwrap();
    store.power_loss(&[], None).unwrap();
    drop(writer);
    assert_eq!(after(&store), (vec![1, 2, 3], OK.to_string()));
}

/// What survives the ways the 512-byte pieces written since the last sync
/// can be kept or lost: every way when there are at most 10 of them, else
/// 300 seeded ones, with each piece kept or lost alike.
fn every_tear(journal: &str, level: &str, sql: &str) -> Vec<(Vec<i64>, String)> {
    // How many choices one power loss asks for.
    let mut asked = 0;
    commit_then_power_loss(
        journal,
        level,
        sql,
        Some(&mut || {
            asked += 1;
            true
        }),
    );
    let patterns: Vec<u64> = if asked <= 10 {
        (0..1u64 << asked).collect()
    } else {
        (1..=300).collect()
    };
    patterns
        .into_iter()
        .map(|pattern| {
            let mut bit = 0u32;
            // splitmix64 of the pattern and the piece: a fixed coin flip.
            let mut flip = move || {
                bit += 1;
                if asked <= 10 {
                    return pattern & (1 << (bit - 1)) != 0;
                }
                let mut z = (pattern << 32 | u64::from(bit)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) & 1 == 1
            };
            commit_then_power_loss(journal, level, sql, Some(&mut flip))
        })
        .collect()
}

/// Enough rows to spread the change over several pages of the database and
/// its journal (4096-byte pages, each torn 512 bytes at a time).
const MANY_ROWS: &str = "INSERT INTO t (v) SELECT printf('%.3000c', 'x') FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i FROM n)";

#[test]
fn torn_writes_corrupt_only_without_syncs() {
    for journal in ["DELETE", "WAL"] {
        for level in LEVELS {
            let outcomes = every_tear(journal, level, MANY_ROWS);
            let corrupt = outcomes.iter().filter(|(_, check)| check != OK).count();
            let whole = outcomes.iter().filter(|(ids, _)| ids.len() == 7).count();
            let none = outcomes
                .iter()
                .filter(|(ids, check)| ids == &[1, 2] && check == OK)
                .count();
            match (journal, level) {
                // With no sync the database file itself tears.
                ("DELETE", "OFF") => assert!(corrupt > 0, "{journal} {level}: {outcomes:?}"),
                // The commit survives whole in every tearing.
                ("DELETE", "EXTRA") | ("WAL", "FULL" | "EXTRA") => {
                    assert_eq!(whole, outcomes.len(), "{journal} {level}: {outcomes:?}")
                }
                // Consistent: all of the transaction or none of it.
                _ => assert_eq!(
                    whole + none,
                    outcomes.len(),
                    "{journal} {level}: {outcomes:?}"
                ),
            }
            if !matches!((journal, level), ("DELETE", "OFF")) {
                assert_eq!(corrupt, 0, "{journal} {level}: {outcomes:?}");
            }
        }
    }
}

#[test]
fn power_loss_reaches_only_the_machine_that_lost_it() {
    let store = Store::new("two-machines").unwrap();
    for db in ["here.db", "there.db"] {
        let c = store.connect(db, "setup").unwrap();
        c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)", &[])
            .unwrap();
    }
    store.keep_durability();
    let here = store.connect("here.db", "here").unwrap();
    let there = store.connect("there.db", "there").unwrap();
    for c in [&here, &there] {
        c.execute("PRAGMA synchronous = OFF", &[]).unwrap();
        c.execute("INSERT INTO t VALUES (1)", &[]).unwrap();
    }
    assert_eq!(
        store.power_loss(&["there.db".to_string()], None).unwrap(),
        1
    );
    // The connection on the other machine goes on.
    here.execute("INSERT INTO t VALUES (2)", &[]).unwrap();
    let count = |db: &str| {
        let c = store.connect(db, "count").unwrap();
        c.execute("SELECT count(*) FROM t", &[]).unwrap().rows[0][0].clone()
    };
    assert_eq!(count("here.db"), SqlValue::Integer(2));
    assert_eq!(count("there.db"), SqlValue::Integer(0));
}

#[test]
fn what_is_durable_is_part_of_the_state_and_of_a_snapshot() {
    let store = store("WAL");
    let hash = |s: &Store| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.hash_files(&mut h);
        std::hash::Hasher::finish(&h)
    };
    let before = store.snapshot();
    let writer = store.connect("main.db", "writer").unwrap();
    writer.execute("PRAGMA synchronous = NORMAL", &[]).unwrap();
    writer.execute(THIRD_ROW, &[]).unwrap();
    let written = hash(&store);
    let unsynced = store.snapshot();
    writer.execute("PRAGMA wal_checkpoint(FULL)", &[]).unwrap();
    // The same rows, but now on disk.
    assert_ne!(hash(&store), written);
    drop(writer);
    // Back to before the checkpoint: the power loss loses the third row.
    store.restore(&unsynced).unwrap();
    assert_eq!(hash(&store), written);
    store.power_loss(&[], None).unwrap();
    assert_eq!(after(&store).0, vec![1, 2]);
    store.restore(&before).unwrap();
    assert_eq!(after(&store).0, vec![1, 2]);
    // A copy of a snapshot keeps what is durable too.
    let copy = Store::from_snapshot("copy", &unsynced).unwrap();
    assert!(copy.keeps_durability());
    copy.power_loss(&[], None).unwrap();
    assert_eq!(after(&copy).0, vec![1, 2]);
}

#[test]
fn power_loss_is_refused_unless_durability_is_kept() {
    let store = Store::new("plain").unwrap();
    let err = store.power_loss(&[], None).unwrap_err();
    assert!(err.to_string().contains("keep_durability"), "{err}");
}

#[test]
fn a_power_loss_inside_a_checkpoint_is_recovered_from_the_log() {
    // Each sync a checkpoint makes (the log, then the database), cut there.
    // At FULL the commit was on disk in the log before the checkpoint: it
    // survives every cut. At NORMAL it reaches the disk only with the
    // checkpoint's first sync: cut there, it is gone, consistently.
    for (level, expected) in [
        ("FULL", [vec![1, 2, 3], vec![1, 2, 3]]),
        ("NORMAL", [vec![1, 2], vec![1, 2, 3]]),
    ] {
        for (at, rows) in (1..=2).zip(expected) {
            let store = store("WAL");
            let writer = store.connect("main.db", "writer").unwrap();
            writer
                .execute(&format!("PRAGMA synchronous = {level}"), &[])
                .unwrap();
            writer.execute(THIRD_ROW, &[]).unwrap();
            store.arm(&writer, at, replayground::store::Death::Power(Vec::new()));
            let cut = writer.execute("PRAGMA wal_checkpoint(FULL)", &[]);
            assert!(
                store.disarm().is_some(),
                "{level}: sync {at} of the checkpoint"
            );
            assert!(
                cut.is_err(),
                "{level} {at}: the checkpoint did not complete"
            );
            drop(writer);
            assert_eq!(
                after(&store),
                (rows, OK.to_string()),
                "{level} at sync {at}"
            );
        }
    }
}
