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

mod io;
mod schedules;

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use std::collections::{BTreeMap, HashMap};

use replayground::store::ShmLocks;
use replayground::store::{Conn, LockLevel, SqlValue, Store};
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
    /// A statement left open after one step: what `sqlite3_step` returned
    /// (100 a row, 101 done, or an extended error code; the error of its
    /// preparation, if it could not be prepared).
    Stepped(i32),
    /// The files beside the database, by name, with their sizes in bytes.
    Files(Vec<(String, u64)>),
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
    /// Opens a statement, steps it once and keeps it open; also tells the
    /// lock the connection holds afterwards.
    fn open(&mut self, conn: usize, sql: &str) -> (Outcome, String);
    /// The files of the store, in name order.
    fn files(&mut self) -> Outcome;
}

/// Prepares `sql` on `db`, steps it once and leaves it open: the step's
/// result code, and the statement (null if it could not be prepared).
///
/// # Safety
/// `db` must be an open connection; the statement must be finalized before
/// the connection closes gracefully (a killed connection is never closed).
unsafe fn open_cursor(
    db: *mut rusqlite::ffi::sqlite3,
    sql: &str,
) -> (i32, *mut rusqlite::ffi::sqlite3_stmt) {
    use rusqlite::ffi;
    let sql = std::ffi::CString::new(sql).expect("no NUL in SQL");
    let mut statement = std::ptr::null_mut();
    let rc = unsafe {
        ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut statement, std::ptr::null_mut())
    };
    if rc != ffi::SQLITE_OK {
        return (
            unsafe { ffi::sqlite3_extended_errcode(db) },
            std::ptr::null_mut(),
        );
    }
    let rc = unsafe { ffi::sqlite3_step(statement) };
    let rc = if rc == ffi::SQLITE_ROW || rc == ffi::SQLITE_DONE {
        rc
    } else {
        unsafe { ffi::sqlite3_extended_errcode(db) }
    };
    (rc, statement)
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
            Action::Open(sql) => {
                let (outcome, lock) = side.open(*conn, sql);
                (outcome, Some(lock))
            }
            Action::Files => (side.files(), None),
        };
        outcomes.push(outcome);
        locks.push(lock);
    }
    Run { outcomes, locks }
}

struct VfsSide {
    store: Store,
    conns: HashMap<usize, Conn>,
    /// The statements left open on each connection.
    cursors: HashMap<usize, Vec<*mut rusqlite::ffi::sqlite3_stmt>>,
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
            cursors: HashMap::new(),
        }
    }

    /// Connection `conn`, opened on first use.
    fn conn(&mut self, conn: usize) -> Result<&Conn, Outcome> {
        if !self.conns.contains_key(&conn) {
            let c = self
                .store
                .connect("main.db", &format!("c{conn}"))
                .map_err(|e| Outcome::Error(e.sqlite_code().unwrap_or(-1)))?;
            self.conns.insert(conn, c);
        }
        Ok(&self.conns[&conn])
    }
}

impl Side for VfsSide {
    fn sql(&mut self, conn: usize, sql: &str) -> (Outcome, String) {
        let c = match self.conn(conn) {
            Ok(c) => c,
            Err(outcome) => return (outcome, "none".to_string()),
        };
        let outcome = match c.execute(sql, &[]) {
            Ok(rows) => Outcome::Rows(rows.rows),
            Err(e) => Outcome::Error(e.sqlite_code().unwrap_or(-1)),
        };
        (outcome, lock_text(c.lock_level(), c.shm_locks()))
    }

    fn open(&mut self, conn: usize, sql: &str) -> (Outcome, String) {
        let c = match self.conn(conn) {
            Ok(c) => c,
            Err(outcome) => return (outcome, "none".to_string()),
        };
        let sqlite = c.sqlite().unwrap();
        // SAFETY: the connection is open; the statement is finalized before
        // a graceful close (`close`) and never touched after a kill.
        let (rc, statement) = unsafe { open_cursor(sqlite.handle(), sql) };
        drop(sqlite);
        let lock = lock_text(c.lock_level(), c.shm_locks());
        if !statement.is_null() {
            self.cursors.entry(conn).or_default().push(statement);
        }
        (Outcome::Stepped(rc), lock)
    }

    fn kill(&mut self, conn: usize) -> Outcome {
        // A dead process's statements die with it: never finalized.
        self.cursors.remove(&conn);
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
                let sqlite = c.sqlite().unwrap();
                for statement in self.cursors.remove(&conn).unwrap_or_default() {
                    // SAFETY: opened on this connection, which is still open.
                    unsafe { rusqlite::ffi::sqlite3_finalize(statement) };
                }
                drop(sqlite);
                drop(c);
                Outcome::Closed
            }
            None => Outcome::NotOpen,
        }
    }

    fn files(&mut self) -> Outcome {
        let mut files: Vec<(String, u64)> = self
            .store
            .files()
            .into_iter()
            .map(|(name, size)| (name, size as u64))
            .collect();
        files.sort();
        Outcome::Files(files)
    }
}

impl Drop for VfsSide {
    fn drop(&mut self) {
        for (conn, statements) in self.cursors.drain() {
            if let Some(c) = self.conns.get(&conn) {
                let _sqlite = c.sqlite().unwrap();
                for statement in statements {
                    // SAFETY: opened on this connection, which is still open.
                    unsafe { rusqlite::ffi::sqlite3_finalize(statement) };
                }
            }
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

    impl FileSide {
        /// Sends one request line to connection `conn`'s worker: its outcome,
        /// and the lock the connection holds afterwards.
        fn request(&mut self, conn: usize, request: serde_json::Value) -> (Outcome, String) {
            let worker = self.worker(conn);
            writeln!(worker.stdin, "{request}").unwrap();
            worker.stdin.flush().unwrap();
            let mut line = String::new();
            worker.stdout.read_line(&mut line).unwrap();
            let reply: Reply = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("sql-worker replied {line:?}: {e}"));
            let outcome = match (reply.rows, reply.code, reply.stepped) {
                (Some(rows), _, _) => Outcome::Rows(rows),
                (None, Some(code), _) => Outcome::Error(code),
                (None, None, Some(rc)) => Outcome::Stepped(rc),
                (None, None, None) => panic!("sql-worker replied {line:?}"),
            };
            let level = *LOCK_LEVELS
                .get(reply.lock)
                .unwrap_or_else(|| panic!("sql-worker replied lock {}", reply.lock));
            let pid = self.workers[&conn].child.id();
            let shm = shm_locks(pid, &self.dir.join("main.db-shm"));
            (outcome, lock_text(level, shm))
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

    /// The POSIX locks process `pid` holds on the file `shm`, read as
    /// shared-memory locks: the `lock:` lines of `/proc/PID/fdinfo/FD` for
    /// the descriptor the process has the file open on. The kernel writes
    /// them in one pass over that file's own locks, so no other process's
    /// locks appear and none of its churn can shift them (`/proc/locks`, the
    /// machine's whole table, is produced a page at a time from a list other
    /// processes change in between: lines were skipped or repeated).
    fn shm_locks(pid: u32, shm: &std::path::Path) -> ShmLocks {
        let mut locks = ShmLocks::default();
        let Some(fd) = descriptor_of(pid, shm) else {
            return locks;
        };
        let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")) else {
            // The descriptor closed between the listing and the read.
            return locks;
        };
        for line in info.lines() {
            // "lock:\t1: POSIX  ADVISORY  READ 1234 08:01:5678 120 120".
            let Some(lock) = line.strip_prefix("lock:") else {
                continue;
            };
            let fields: Vec<&str> = lock.split_whitespace().collect();
            assert!(
                fields.len() >= 8 && fields[0].ends_with(':'),
                "unexpected lock line in /proc/{pid}/fdinfo/{fd}: {line:?}"
            );
            if fields[1] != "POSIX" || fields[4].parse::<u32>().ok() != Some(pid) {
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

    /// The descriptor on which process `pid` has `path` open, if it does.
    fn descriptor_of(pid: u32, path: &std::path::Path) -> Option<String> {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .ok()?
            .flatten()
            .find(|entry| std::fs::read_link(entry.path()).is_ok_and(|target| target == path))
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
    }

    #[derive(Deserialize)]
    struct Reply {
        rows: Option<Vec<Vec<SqlValue>>>,
        code: Option<i32>,
        stepped: Option<i32>,
        lock: usize,
    }

    impl Side for FileSide {
        fn sql(&mut self, conn: usize, sql: &str) -> (Outcome, String) {
            self.request(conn, serde_json::json!(sql))
        }

        fn open(&mut self, conn: usize, sql: &str) -> (Outcome, String) {
            self.request(conn, serde_json::json!({ "open": sql }))
        }

        fn files(&mut self) -> Outcome {
            let mut files: Vec<(String, u64)> = std::fs::read_dir(&self.dir)
                .unwrap()
                .map(|entry| {
                    let entry = entry.unwrap();
                    let name = entry.file_name().to_string_lossy().into_owned();
                    (name, entry.metadata().unwrap().len())
                })
                .collect();
            files.sort();
            Outcome::Files(files)
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

    /// Another process taking and releasing POSIX locks on a file of its own
    /// in a tight loop, as a build or another test suite does on a busy
    /// machine: about 200 locks at a time, a few hundred thousand changes a
    /// second to the kernel's table of locks. Stopped when dropped.
    struct LockChurn {
        child: Child,
    }

    impl LockChurn {
        const SCRIPT: &'static str = "
import fcntl, os, sys, tempfile
fd, path = tempfile.mkstemp()
os.unlink(path)
os.write(fd, bytes(1024))
sys.stdout.write('ready\\n')
sys.stdout.flush()
while True:
    for i in range(200):
        fcntl.lockf(fd, fcntl.LOCK_SH if i % 2 else fcntl.LOCK_EX, 1, 2 * i)
    for i in range(200):
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, 2 * i)
";

        fn start() -> LockChurn {
            let mut child = Command::new("python3")
                .args(["-c", Self::SCRIPT])
                .stdout(Stdio::piped())
                .spawn()
                .expect("start python3 to churn locks");
            let mut ready = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut ready)
                .unwrap();
            assert_eq!(ready.trim(), "ready", "the lock churn did not start");
            LockChurn { child }
        }

        /// The most locks the helper was seen holding in readings of the
        /// machine's lock table, read until it was seen holding `enough` or
        /// `patience` has passed.
        fn most_locks_seen(&self, enough: usize, patience: std::time::Duration) -> usize {
            let pid = format!(" {} ", self.child.id());
            let start = std::time::Instant::now();
            let mut most = 0;
            while most < enough && start.elapsed() < patience {
                let held = std::fs::read_to_string("/proc/locks")
                    .unwrap()
                    .lines()
                    .filter(|line| line.contains(&pid))
                    .count();
                most = most.max(held);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            most
        }

        /// Whether it is still running.
        fn running(&mut self) -> bool {
            self.child.try_wait().unwrap().is_none()
        }
    }

    impl Drop for LockChurn {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Both sides, every schedule, while another process churns the
    /// machine's lock table all along (see [`LockChurn`]): what the real
    /// side reads of its workers' locks must not depend on what else the
    /// machine is doing.
    #[test]
    fn the_vfs_matches_real_sqlite_files_statement_by_statement() {
        let mut churn = LockChurn::start();
        // On a busy machine the helper may wait for a core: look until it
        // has been seen at work, for up to a minute.
        let seen = churn.most_locks_seen(20, std::time::Duration::from_secs(60));
        assert!(
            seen >= 20,
            "the lock churn was seen holding at most {seen} locks"
        );
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
        assert!(
            churn.running(),
            "the lock churn stopped before the suite ended"
        );
        drop(churn);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(
            recording() == real_results && lock_recording() == real_locks,
            "real SQLite files no longer give the results in {dir}/expected*.json; rerun with REPLAYGROUND_BLESS=1 and review the diff"
        );
    }
}
