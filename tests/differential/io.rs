//! The file operations that reach the disk, statement by statement: what
//! SQLite asks of the replayground VFS (`Store::take_io_log`) against what
//! it asks of real files (`sql-worker --io-log`, a counting shim over the
//! unix VFS), for every `synchronous` level in both journal modes. The
//! syncs, and the directory syncs among them, are what a power loss keeps
//! (see `tests/durability.rs`); they must be the ones SQLite issues on real
//! files.
//!
//! Natively both sides run and are compared, and the real side must equal
//! the recording `expected_io.json`; in the browser the VFS side is
//! compared with it. `REPLAYGROUND_BLESS=1` rewrites it.

use std::collections::BTreeMap;

use replayground::store::{Conn, Store};

use super::schedules::SETUP;

/// The journal modes and `synchronous` levels compared.
const JOURNALS: [&str; 2] = ["DELETE", "WAL"];
const LEVELS: [&str; 4] = ["OFF", "NORMAL", "FULL", "EXTRA"];

/// What a connection does: a statement, or closing.
#[derive(Debug, Clone)]
enum Op {
    Sql(usize, String),
    Close(usize),
}

/// The schedule for `journal` at `level`: small and large commits, a
/// rollback, a second connection, a checkpoint, and the last close.
fn schedule(journal: &str, level: &str) -> Vec<Op> {
    let sql = |conn: usize, sql: &str| Op::Sql(conn, sql.to_string());
    let sync = format!("PRAGMA synchronous = {level}");
    vec![
        sql(0, &sync),
        sql(0, &format!("PRAGMA journal_mode = {journal}")),
        sql(0, "INSERT INTO t (v) VALUES ('one')"),
        sql(0, "BEGIN"),
        sql(0, "INSERT INTO t (v) VALUES ('two')"),
        sql(0, "UPDATE t SET v = v || '!' WHERE id = 1"),
        sql(0, "COMMIT"),
        sql(1, &sync),
        sql(1, "BEGIN IMMEDIATE"),
        sql(1, "INSERT INTO t (v) VALUES ('three')"),
        sql(1, "ROLLBACK"),
        sql(
            1,
            "INSERT INTO t (v) SELECT printf('%.3000c', 'x') FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6) SELECT i FROM n)",
        ),
        sql(0, "PRAGMA wal_checkpoint(TRUNCATE)"),
        sql(0, "DELETE FROM t WHERE id > 2"),
        Op::Close(1),
        sql(0, "SELECT count(*) FROM t"),
        Op::Close(0),
    ]
}

/// The io of each step of a schedule.
type Log = Vec<Vec<String>>;

fn name(journal: &str, level: &str) -> String {
    format!("{}-{}", journal.to_lowercase(), level.to_lowercase())
}

/// Runs a schedule on the VFS.
fn on_vfs(ops: &[Op]) -> Log {
    let store = Store::new("io").unwrap();
    let setup = store.connect("main.db", "setup").unwrap();
    setup.sqlite().unwrap().execute_batch(SETUP).unwrap();
    drop(setup);
    store.set_io_log(true);
    let mut conns: BTreeMap<usize, Conn> = BTreeMap::new();
    let mut log = Log::new();
    for op in ops {
        match op {
            Op::Sql(conn, sql) => {
                if !conns.contains_key(conn) {
                    let c = store.connect("main.db", &format!("c{conn}")).unwrap();
                    conns.insert(*conn, c);
                }
                conns[conn]
                    .execute(sql, &[])
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            Op::Close(conn) => drop(conns.remove(conn)),
        }
        log.push(store.take_io_log());
    }
    log
}

const RECORDING: &str = include_str!("expected_io.json");

fn recording() -> BTreeMap<String, Log> {
    serde_json::from_str(RECORDING).expect("expected_io.json")
}

fn all() -> Vec<(String, Vec<Op>)> {
    JOURNALS
        .iter()
        .flat_map(|j| LEVELS.iter().map(move |l| (name(j, l), schedule(j, l))))
        .collect()
}

/// The steps where `a` and `b` differ, one line each.
fn differences(name: &str, ops: &[Op], a: &Log, b: &Log) -> Vec<String> {
    (0..a.len().max(b.len()))
        .filter(|&i| a.get(i) != b.get(i))
        .map(|i| {
            format!(
                "{name} step {i} ({:?}): real {:?}, VFS {:?}",
                ops.get(i),
                a.get(i),
                b.get(i)
            )
        })
        .collect()
}

#[cfg_attr(
    all(target_family = "wasm", target_os = "unknown"),
    wasm_bindgen_test::wasm_bindgen_test
)]
#[cfg_attr(not(target_family = "wasm"), test)]
fn the_vfs_makes_the_recorded_syncs_of_real_sqlite_files() {
    let recorded = recording();
    let mut failures = Vec::new();
    for (name, ops) in all() {
        let Some(expected) = recorded.get(&name) else {
            failures.push(format!("{name}: not in expected_io.json (bless it)"));
            continue;
        };
        failures.extend(differences(&name, &ops, expected, &on_vfs(&ops)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg_attr(
    all(target_family = "wasm", target_os = "unknown"),
    wasm_bindgen_test::wasm_bindgen_test
)]
#[cfg_attr(not(target_family = "wasm"), test)]
fn the_recording_tells_the_levels_apart() {
    // What SQLite documents, read from the recording of real files.
    let recorded = recording();
    let syncs = |name: &str, what: &str| {
        recorded[name]
            .iter()
            .flatten()
            .filter(|e| e.starts_with("sync") && e.contains(what))
            .count()
    };
    for journal in ["delete", "wal"] {
        assert_eq!(syncs(&format!("{journal}-off"), ""), 0, "OFF never syncs");
    }
    // FULL syncs the rollback journal twice per commit (records, then header).
    assert!(syncs("delete-full", "journal") > syncs("delete-normal", "journal"));
    // EXTRA syncs the directory after deleting the journal.
    let dir_deletes = |name: &str| {
        recorded[name]
            .iter()
            .flatten()
            .filter(|e| e.starts_with("delete main.db-journal +dir"))
            .count()
    };
    assert_eq!(dir_deletes("delete-full"), 0);
    assert!(dir_deletes("delete-extra") >= 2);
    // WAL: NORMAL syncs the log only at a checkpoint, FULL at every commit.
    assert!(syncs("wal-full", "wal") > syncs("wal-normal", "wal"));
}

#[cfg(not(target_family = "wasm"))]
mod files {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

    struct Worker {
        child: Child,
        stdin: ChildStdin,
        stdout: BufReader<ChildStdout>,
    }

    impl Worker {
        fn reply(&mut self) -> serde_json::Value {
            let mut line = String::new();
            self.stdout.read_line(&mut line).unwrap();
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
        }
    }

    fn io_of(reply: &serde_json::Value) -> Vec<String> {
        serde_json::from_value(reply["io"].clone()).expect("io")
    }

    /// Runs a schedule on real files, one `sql-worker --io-log` process per
    /// connection.
    fn on_files(name: &str, ops: &[Op]) -> Log {
        let dir =
            std::env::temp_dir().join(format!("replayground-io-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("main.db");
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(SETUP)
            .unwrap();
        let mut workers: BTreeMap<usize, Worker> = BTreeMap::new();
        let mut log = Log::new();
        for op in ops {
            match op {
                Op::Sql(conn, sql) => {
                    let worker = workers.entry(*conn).or_insert_with(|| {
                        let mut child = Command::new(env!("CARGO_BIN_EXE_replayground"))
                            .args(["sql-worker", "--io-log"])
                            .arg(&db)
                            .current_dir(&dir)
                            .stdin(Stdio::piped())
                            .stdout(Stdio::piped())
                            .spawn()
                            .expect("start sql-worker");
                        Worker {
                            stdin: child.stdin.take().unwrap(),
                            stdout: BufReader::new(child.stdout.take().unwrap()),
                            child,
                        }
                    });
                    writeln!(worker.stdin, "{}", serde_json::Value::from(sql.as_str())).unwrap();
                    worker.stdin.flush().unwrap();
                    let reply = worker.reply();
                    assert!(reply.get("code").is_none(), "{name}: {sql}: {reply}");
                    log.push(io_of(&reply));
                }
                Op::Close(conn) => {
                    let Worker {
                        mut child,
                        stdin,
                        mut stdout,
                    } = workers.remove(conn).expect("open");
                    drop(stdin);
                    let mut line = String::new();
                    stdout.read_line(&mut line).unwrap();
                    let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
                    assert!(child.wait().unwrap().success());
                    log.push(io_of(&reply));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        log
    }

    #[test]
    fn the_vfs_makes_the_syncs_real_sqlite_makes_on_real_files() {
        let mut real = BTreeMap::new();
        let mut failures = Vec::new();
        for (name, ops) in all() {
            let files = on_files(&name, &ops);
            failures.extend(differences(&name, &ops, &files, &on_vfs(&ops)));
            real.insert(name, files);
        }
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/differential/expected_io.json"
        );
        if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
            let mut json = serde_json::to_string_pretty(&real).unwrap();
            json.push('\n');
            std::fs::write(path, json).unwrap();
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(
            recording() == real,
            "real SQLite files no longer make the operations in {path}; rerun with REPLAYGROUND_BLESS=1 and review the diff"
        );
    }
}
