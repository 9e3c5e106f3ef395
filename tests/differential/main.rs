//! Differential test: every schedule runs statement by statement on the
//! replayground VFS and on real SQLite database files (the unix VFS, one
//! process per connection, no busy timeout, kills by SIGKILL). The result code
//! and rows of every statement must be identical.
//!
//! After every statement the lock the connection holds on its main database
//! must be identical too: the VFS's [`Conn::lock_level`] against the unix
//! VFS's own record of the handle's lock (`SQLITE_FCNTL_LOCKSTATE`, which
//! each worker process reports for itself after each statement).
//!
//! Natively both sides run and are compared, and the real-file results must
//! equal the recorded `expected.json` (outcomes) and `expected_locks.json`
//! (locks). In the browser, where there are no files and no processes, the
//! VFS side is compared with those recordings.
//! `REPLAYGROUND_BLESS=1 cargo test --test differential` rewrites them.

mod schedules;

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use std::collections::{BTreeMap, HashMap};

use replayground::storage::shm::ShmLocks;
use replayground::storage::{Conn, LockLevel, SqlValue, Store};
use schedules::{Action, Schedule};
use serde::{Deserialize, Serialize};

/// What one step produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    /// The statement succeeded with these rows.
    Rows(Vec<Vec<SqlValue>>),
    /// The statement failed with this extended result code.
    Error(i32),
    Killed,
    Closed,
    /// Kill or close of a connection that is not open.
    NotOpen,
}

type Recording = BTreeMap<String, Vec<Outcome>>;

/// The lock a connection holds after a statement: `none`, `shared`,
/// `reserved`, `pending` or `exclusive`; `None` for kill and close steps.
type Lock = Option<String>;

type LockRecording = BTreeMap<String, Vec<Lock>>;

const RECORDING: &str = include_str!("expected.json");
const LOCK_RECORDING: &str = include_str!("expected_locks.json");

/// One way of running connections: the VFS or real files.
trait Side {
    /// Runs one statement; also tells the lock the connection holds afterwards.
    fn sql(&mut self, conn: usize, sql: &str) -> (Outcome, String);
    fn kill(&mut self, conn: usize) -> Outcome;
    fn close(&mut self, conn: usize) -> Outcome;
}

/// The lock a connection holds, as recorded: its level on the database file,
/// then, in WAL mode, its locks on the shared memory ("shared + DMS s,
/// READ0 s").
fn lock_text(level: LockLevel, shm: ShmLocks) -> String {
    let mut text = format!("{level:?}").to_lowercase();
    if !shm.is_empty() {
        text.push_str(" + ");
        text.push_str(&shm.describe());
    }
    text
}

/// What one schedule produced on one side.
struct Run {
    outcomes: Vec<Outcome>,
    locks: Vec<Lock>,
}

fn run(schedule: &Schedule, side: &mut dyn Side) -> Run {
    let mut outcomes = Vec::new();
    let mut locks = Vec::new();
    for (conn, action) in &schedule.ops {
        let (outcome, lock) = match action {
            Action::Sql(sql) => {
                let (outcome, lock) = side.sql(*conn, sql);
                (outcome, Some(lock))
            }
            Action::Kill => (side.kill(*conn), None),
            Action::Close => (side.close(*conn), None),
        };
        outcomes.push(outcome);
        locks.push(lock);
    }
    Run { outcomes, locks }
}

struct VfsSide {
    store: Store,
    conns: HashMap<usize, Conn>,
}

impl VfsSide {
    fn new() -> Self {
        let store = Store::new("differential").unwrap();
        let setup = store.connect("main.db", "setup").unwrap();
        setup
            .sqlite()
            .unwrap()
            .execute_batch(schedules::SETUP)
            .unwrap();
        VfsSide {
            store,
            conns: HashMap::new(),
        }
    }
}

impl Side for VfsSide {
    fn sql(&mut self, conn: usize, sql: &str) -> (Outcome, String) {
        if !self.conns.contains_key(&conn) {
            match self.store.connect("main.db", &format!("c{conn}")) {
                Ok(c) => {
                    self.conns.insert(conn, c);
                }
                Err(e) => {
                    return (
                        Outcome::Error(e.sqlite_code().unwrap_or(-1)),
                        "none".to_string(),
                    )
                }
            }
        }
        let c = &self.conns[&conn];
        let outcome = match c.execute(sql, &[]) {
            Ok(rows) => Outcome::Rows(rows.rows),
            Err(e) => Outcome::Error(e.sqlite_code().unwrap_or(-1)),
        };
        (outcome, lock_text(c.lock_level(), c.shm_locks()))
    }

    fn kill(&mut self, conn: usize) -> Outcome {
        match self.conns.remove(&conn) {
            Some(mut c) => {
                c.kill().unwrap();
                Outcome::Killed
            }
            None => Outcome::NotOpen,
        }
    }

    fn close(&mut self, conn: usize) -> Outcome {
        match self.conns.remove(&conn) {
            Some(c) => {
                drop(c);
                Outcome::Closed
            }
            None => Outcome::NotOpen,
        }
    }
}

/// The first difference between two runs of `schedule`, as a readable sentence.
fn difference<T: PartialEq + std::fmt::Debug>(
    what: &str,
    schedule: &Schedule,
    expected: &[T],
    actual: &[T],
) -> Option<String> {
    if expected.len() != actual.len() {
        return Some(format!(
            "{}: {} {what} expected, {} produced",
            schedule.name,
            expected.len(),
            actual.len()
        ));
    }
    if std::env::var("REPLAYGROUND_DIFF_SHOW").is_ok_and(|name| name == schedule.name) {
        for (i, (op, (e, a))) in schedule
            .ops
            .iter()
            .zip(expected.iter().zip(actual))
            .enumerate()
        {
            eprintln!("{what} {i}: {op:?} real {e:?} vfs {a:?}");
        }
    }
    let step = expected.iter().zip(actual).position(|(e, a)| e != a)?;
    if std::env::var_os("REPLAYGROUND_DIFF_VERBOSE").is_some() {
        for (i, (op, (e, a))) in schedule
            .ops
            .iter()
            .zip(expected.iter().zip(actual))
            .enumerate()
        {
            eprintln!("{i}: {op:?} real {e:?} vfs {a:?}");
        }
    }
    let (conn, action) = &schedule.ops[step];
    Some(format!(
        "{}: step {step} (connection {conn}: {action:?}): real SQLite files gave {what} {:?}, the VFS gave {:?}",
        schedule.name, expected[step], actual[step]
    ))
}

fn recording() -> Recording {
    serde_json::from_str(RECORDING).expect("expected.json parses")
}

fn lock_recording() -> LockRecording {
    serde_json::from_str(LOCK_RECORDING).expect("expected_locks.json parses")
}

#[test]
fn the_suite_has_30_handwritten_schedules_with_busy_answers_and_kills() {
    let handwritten = schedules::handwritten();
    assert!(
        handwritten.len() >= 30,
        "{} hand-written schedules",
        handwritten.len()
    );
    let recorded = recording();
    let all = schedules::all();
    assert_eq!(
        recorded.len(),
        all.len(),
        "expected.json is out of date: bless it"
    );
    assert_eq!(
        lock_recording().len(),
        all.len(),
        "expected_locks.json is out of date: bless it"
    );
    let outcomes: Vec<&Outcome> = recorded.values().flatten().collect();
    let busy = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Error(5)))
        .count();
    let kills = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Killed))
        .count();
    assert!(busy >= 40, "only {busy} BUSY answers recorded");
    assert!(kills >= 20, "only {kills} kills recorded");
}

#[test]
fn the_suite_has_40_handwritten_wal_schedules_with_busy_snapshots_checkpoints_and_kills() {
    let handwritten = schedules::wal();
    assert!(
        handwritten.len() >= 40,
        "{} hand-written WAL schedules",
        handwritten.len()
    );
    let recorded = recording();
    let wal: Vec<&Outcome> = recorded
        .iter()
        .filter(|(name, _)| name.starts_with("wal-"))
        .flat_map(|(_, outcomes)| outcomes)
        .collect();
    let count = |code: i32| {
        wal.iter()
            .filter(|o| matches!(o, Outcome::Error(c) if *c == code))
            .count()
    };
    let kills = wal.iter().filter(|o| matches!(o, Outcome::Killed)).count();
    // SQLITE_BUSY, and SQLITE_BUSY_SNAPSHOT (a reader upgrading after a commit).
    let (busy, busy_snapshot) = (count(5), count(517));
    let sql = |needle: &str| {
        schedules::all()
            .iter()
            .filter(|s| s.name.starts_with("wal-"))
            .flat_map(|s| s.ops.iter())
            .filter(|(_, a)| matches!(a, schedules::Action::Sql(q) if q.contains(needle)))
            .count()
    };
    eprintln!(
        "WAL: {} schedules ({} hand-written), {} steps, {busy} BUSY, {busy_snapshot} BUSY_SNAPSHOT, {kills} kills",
        recorded.keys().filter(|n| n.starts_with("wal-")).count(),
        handwritten.len(),
        wal.len()
    );
    assert!(busy >= 20, "only {busy} BUSY answers in WAL mode");
    assert!(
        busy_snapshot >= 5,
        "only {busy_snapshot} BUSY_SNAPSHOT answers"
    );
    assert!(kills >= 30, "only {kills} kills in WAL mode");
    for mode in schedules::CHECKPOINTS {
        let n = sql(&format!("wal_checkpoint({mode})"));
        assert!(n >= 4, "only {n} {mode} checkpoints");
    }
    assert!(sql("wal_autocheckpoint") >= 4);
}

#[test]
fn the_vfs_gives_the_recorded_results_of_real_sqlite_files() {
    let recorded = recording();
    let recorded_locks = lock_recording();
    let mut failures = Vec::new();
    for schedule in schedules::all() {
        let (Some(expected), Some(expected_locks)) = (
            recorded.get(&schedule.name),
            recorded_locks.get(&schedule.name),
        ) else {
            failures.push(format!(
                "{}: not in expected.json or expected_locks.json (bless them)",
                schedule.name
            ));
            continue;
        };
        let actual = run(&schedule, &mut VfsSide::new());
        failures.extend(difference("outcome", &schedule, expected, &actual.outcomes));
        failures.extend(difference("lock", &schedule, expected_locks, &actual.locks));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[cfg(not(target_family = "wasm"))]
mod files {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::path::PathBuf;
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// One connection in its own process: `replayground sql-worker DB`.
    struct Worker {
        child: Child,
        stdin: ChildStdin,
        stdout: BufReader<ChildStdout>,
    }

    /// Real database files in a temporary directory, one process per connection.
    struct FileSide {
        dir: PathBuf,
        db: PathBuf,
        workers: HashMap<usize, Worker>,
    }

    static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

    impl FileSide {
        fn new() -> Self {
            let dir = std::env::temp_dir().join(format!(
                "replayground-differential-{}-{}",
                std::process::id(),
                NEXT_DIR.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let db = dir.join("main.db");
            let setup = rusqlite::Connection::open(&db).unwrap();
            setup.execute_batch(schedules::SETUP).unwrap();
            drop(setup);
            FileSide {
                dir,
                db,
                workers: HashMap::new(),
            }
        }

        fn worker(&mut self, conn: usize) -> &mut Worker {
            let db = self.db.clone();
            self.workers.entry(conn).or_insert_with(|| {
                // The directory is the worker's own, as a store is the VFS's:
                // `ATTACH 'aux.db'` names a file beside the main database.
                let mut child = Command::new(env!("CARGO_BIN_EXE_replayground"))
                    .arg("sql-worker")
                    .arg(&db)
                    .current_dir(db.parent().expect("a directory"))
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("start sql-worker");
                let stdin = child.stdin.take().unwrap();
                let stdout = BufReader::new(child.stdout.take().unwrap());
                Worker {
                    child,
                    stdin,
                    stdout,
                }
            })
        }
    }

    /// The lock levels, by SQLite's numbering (NONE 0 to EXCLUSIVE 4).
    const LOCK_LEVELS: [LockLevel; 5] = [
        LockLevel::None,
        LockLevel::Shared,
        LockLevel::Reserved,
        LockLevel::Pending,
        LockLevel::Exclusive,
    ];

    /// The first byte of the unix VFS's shared-memory locks (`UNIX_SHM_BASE`):
    /// slot i is byte 120 + i, the DMS byte 128.
    const SHM_BASE: u64 = 120;

    /// The POSIX locks process `pid` holds on the file `shm`, as the kernel
    /// lists them in /proc/locks, read as shared-memory locks.
    fn shm_locks(pid: u32, shm: &std::path::Path) -> ShmLocks {
        use std::os::unix::fs::MetadataExt;
        let mut locks = ShmLocks::default();
        let Ok(meta) = std::fs::metadata(shm) else {
            return locks;
        };
        let table = std::fs::read_to_string("/proc/locks").expect("/proc/locks is readable");
        for line in table.lines() {
            // "1: POSIX  ADVISORY  READ 1234 08:01:5678 120 120"; waiters ("->") are skipped.
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 || fields[1] != "POSIX" {
                continue;
            }
            let inode = fields[5]
                .rsplit(':')
                .next()
                .and_then(|i| i.parse::<u64>().ok());
            if fields[4].parse::<u32>().ok() != Some(pid) || inode != Some(meta.ino()) {
                continue;
            }
            let start: u64 = fields[6].parse().expect("lock start");
            let end: u64 = if fields[7] == "EOF" {
                u64::MAX
            } else {
                fields[7].parse().expect("lock end")
            };
            for byte in start..=end.min(SHM_BASE + 8) {
                match byte.checked_sub(SHM_BASE) {
                    Some(8) => locks.dms = true,
                    Some(slot @ 0..=7) => {
                        let bit = 1u8 << slot;
                        if fields[3] == "WRITE" {
                            locks.exclusive |= bit;
                        } else {
                            locks.shared |= bit;
                        }
                    }
                    _ => {}
                }
            }
        }
        locks
    }

    #[derive(Deserialize)]
    struct Reply {
        rows: Option<Vec<Vec<SqlValue>>>,
        code: Option<i32>,
        lock: usize,
    }

    impl Side for FileSide {
        fn sql(&mut self, conn: usize, sql: &str) -> (Outcome, String) {
            let worker = self.worker(conn);
            writeln!(worker.stdin, "{}", serde_json::to_string(sql).unwrap()).unwrap();
            worker.stdin.flush().unwrap();
            let mut line = String::new();
            worker.stdout.read_line(&mut line).unwrap();
            let reply: Reply = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("sql-worker replied {line:?}: {e}"));
            let outcome = match (reply.rows, reply.code) {
                (Some(rows), _) => Outcome::Rows(rows),
                (None, Some(code)) => Outcome::Error(code),
                (None, None) => panic!("sql-worker replied {line:?}"),
            };
            let level = *LOCK_LEVELS
                .get(reply.lock)
                .unwrap_or_else(|| panic!("sql-worker replied lock {}", reply.lock));
            let pid = self.workers[&conn].child.id();
            let shm = shm_locks(pid, &self.dir.join("main.db-shm"));
            (outcome, lock_text(level, shm))
        }

        fn kill(&mut self, conn: usize) -> Outcome {
            match self.workers.remove(&conn) {
                Some(mut worker) => {
                    worker.child.kill().unwrap();
                    worker.child.wait().unwrap();
                    Outcome::Killed
                }
                None => Outcome::NotOpen,
            }
        }

        fn close(&mut self, conn: usize) -> Outcome {
            match self.workers.remove(&conn) {
                Some(worker) => {
                    let Worker {
                        mut child, stdin, ..
                    } = worker;
                    drop(stdin);
                    let status = child.wait().unwrap();
                    assert!(status.success(), "sql-worker exited with {status}");
                    Outcome::Closed
                }
                None => Outcome::NotOpen,
            }
        }
    }

    impl Drop for FileSide {
        fn drop(&mut self) {
            for (_, mut worker) in self.workers.drain() {
                let _ = worker.child.kill();
                let _ = worker.child.wait();
            }
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn the_vfs_matches_real_sqlite_files_statement_by_statement() {
        let mut real_results = Recording::new();
        let mut real_locks = LockRecording::new();
        let mut failures = Vec::new();
        for schedule in schedules::all() {
            let real = run(&schedule, &mut FileSide::new());
            let vfs = run(&schedule, &mut VfsSide::new());
            failures.extend(difference(
                "outcome",
                &schedule,
                &real.outcomes,
                &vfs.outcomes,
            ));
            failures.extend(difference("lock", &schedule, &real.locks, &vfs.locks));
            real_results.insert(schedule.name.clone(), real.outcomes);
            real_locks.insert(schedule.name.clone(), real.locks);
        }

        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/differential");
        if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
            // Recorded even when the VFS differs: the recording is of real files.
            for (file, json) in [
                ("expected.json", serde_json::to_string_pretty(&real_results)),
                (
                    "expected_locks.json",
                    serde_json::to_string_pretty(&real_locks),
                ),
            ] {
                let mut json = json.unwrap();
                json.push('\n');
                std::fs::write(format!("{dir}/{file}"), json).unwrap();
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(
            recording() == real_results && lock_recording() == real_locks,
            "real SQLite files no longer give the results in {dir}/expected*.json; rerun with REPLAYGROUND_BLESS=1 and review the diff"
        );
    }
}
