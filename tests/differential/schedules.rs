//! Multi-connection schedules for the differential test: hand-written ones for
//! each locking situation SQLite users meet, and random ones from a fixed seed.

/// What a connection does at one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run one SQL statement (the connection is opened first if needed).
    Sql(String),
    /// Kill the connection, as if its process called `_exit`.
    Kill,
    /// Close the connection gracefully (SQLite rolls back an open transaction).
    Close,
    /// Prepare a statement, step it once and leave it open (a cursor not read
    /// to its end: it keeps its read lock or snapshot until the connection
    /// closes, or dies with it).
    Open(String),
    /// List the store's files with their sizes (no connection acts).
    Files,
}

/// One step: connection index and action.
pub type Op = (usize, Action);

/// A named schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub name: String,
    pub ops: Vec<Op>,
}

/// Run by a setup connection, closed before the schedule starts.
pub const SETUP: &str = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL);\
                         INSERT INTO t (v) VALUES ('seed');";

/// Appended to every schedule on a fresh connection: what survived.
pub const FINAL: [&str; 2] = ["SELECT id, v FROM t ORDER BY id", "PRAGMA integrity_check"];

/// The connection index the final checks use.
pub const FINAL_CONN: usize = 9;

/// What ends every schedule: the final checks on a fresh connection, then
/// the listing of the files left beside the database.
fn final_ops() -> impl Iterator<Item = Op> {
    FINAL
        .iter()
        .map(|sql| (FINAL_CONN, Action::Sql(sql.to_string())))
        .chain([(FINAL_CONN, Action::Files)])
}

fn schedule(name: &str, steps: &[(usize, &str)]) -> Schedule {
    let mut ops: Vec<Op> = steps
        .iter()
        .map(|&(conn, step)| {
            let action = match step {
                "kill" => Action::Kill,
                "close" => Action::Close,
                "files" => Action::Files,
                _ => match step.strip_prefix("open:") {
                    Some(sql) => Action::Open(sql.to_string()),
                    None => Action::Sql(step.to_string()),
                },
            };
            (conn, action)
        })
        .collect();
    ops.extend(final_ops());
    Schedule {
        name: name.to_string(),
        ops,
    }
}

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;
const INS: &str = "INSERT INTO t (v) VALUES ('x')";
const SEL: &str = "SELECT id, v FROM t ORDER BY id";
const BIG: &str = "INSERT INTO t (v) VALUES (printf('%.800c', 'b'))";

/// The hand-written schedules.
pub fn handwritten() -> Vec<Schedule> {
    let mut spill = vec![(A, "PRAGMA cache_size = 2"), (A, "BEGIN")];
    spill.extend(std::iter::repeat_n((A, BIG), 40));
    let mut kill_spill = spill.clone();
    kill_spill.extend([
        (B, SEL),
        (A, "kill"),
        (B, SEL),
        (B, "PRAGMA integrity_check"),
    ]);
    let mut commit_spill = spill;
    commit_spill.extend([(B, SEL), (A, "COMMIT"), (B, "SELECT count(*) FROM t")]);

    vec![
        schedule("immediate-vs-immediate", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (B, "BEGIN IMMEDIATE"), (A, "COMMIT"),
            (B, "BEGIN IMMEDIATE"), (B, INS), (B, "COMMIT"),
        ]),
        schedule("exclusive-blocks-readers", &[
            (A, "BEGIN EXCLUSIVE"), (B, SEL), (A, INS), (B, SEL), (A, "COMMIT"), (B, SEL),
        ]),
        schedule("reader-during-reserved-sees-old-rows", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (B, SEL), (A, "COMMIT"), (B, SEL),
        ]),
        schedule("commit-while-another-holds-shared", &[
            (A, "BEGIN"), (A, SEL), (B, "BEGIN IMMEDIATE"), (B, INS), (B, "COMMIT"),
            (A, SEL), (A, "COMMIT"), (B, "COMMIT"), (A, SEL),
        ]),
        schedule("pending-blocks-new-readers", &[
            (A, "BEGIN"), (A, SEL), (B, "BEGIN IMMEDIATE"), (B, INS), (B, "COMMIT"),
            (C, SEL), (A, "COMMIT"), (C, SEL), (B, "COMMIT"), (C, SEL),
        ]),
        schedule("deferred-upgrade-deadlock", &[
            (A, "BEGIN"), (B, "BEGIN"), (A, SEL), (B, SEL), (A, INS), (B, INS),
            (A, "COMMIT"), (B, "COMMIT"), (B, "ROLLBACK"), (A, "COMMIT"),
        ]),
        schedule("deferred-upgrade-deadlock-writer-gives-up", &[
            (A, "BEGIN"), (B, "BEGIN"), (A, SEL), (B, SEL), (A, INS), (B, INS),
            (A, "ROLLBACK"), (B, INS), (B, "COMMIT"),
        ]),
        schedule("deferred-write-first-wins", &[
            (A, "BEGIN"), (A, INS), (B, "BEGIN"), (B, SEL), (B, INS), (A, "COMMIT"),
            (B, "COMMIT"), (B, "BEGIN"), (B, INS), (B, "COMMIT"),
        ]),
        schedule("begin-exclusive-waits-for-reader", &[
            (A, "BEGIN"), (A, SEL), (B, "BEGIN EXCLUSIVE"), (A, "COMMIT"),
            (B, "BEGIN EXCLUSIVE"), (B, INS), (B, "COMMIT"),
        ]),
        schedule("kill-between-insert-and-commit", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (A, "kill"), (B, SEL), (B, INS),
        ]),
        schedule("kill-after-commit", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (A, "COMMIT"), (A, "kill"), (B, SEL),
        ]),
        schedule("kill-a-reader-lets-the-writer-commit", &[
            (A, "BEGIN"), (A, SEL), (B, "BEGIN IMMEDIATE"), (B, INS), (B, "COMMIT"),
            (A, "kill"), (B, "COMMIT"), (C, SEL),
        ]),
        schedule("kill-a-pending-writer-while-a-reader-holds-shared", &[
            (A, "BEGIN"), (A, SEL), (B, "BEGIN IMMEDIATE"), (B, "UPDATE t SET v = 'changed'"),
            (B, "COMMIT"), (B, "kill"), (C, SEL), (A, SEL), (A, "COMMIT"), (C, SEL),
        ]),
        schedule("kill-after-the-cache-spilled-into-the-database", &kill_spill
            .iter().map(|&(c, s)| (c, s)).collect::<Vec<_>>()),
        schedule("spilled-writer-commits-after-reader-retries", &commit_spill
            .iter().map(|&(c, s)| (c, s)).collect::<Vec<_>>()),
        schedule("kill-during-a-read-transaction", &[
            (A, "BEGIN"), (A, SEL), (A, "kill"), (B, "BEGIN EXCLUSIVE"), (B, INS), (B, "COMMIT"),
        ]),
        schedule("rollback-restores", &[
            (A, "BEGIN"), (A, INS), (A, "DELETE FROM t WHERE id = 1"), (A, "ROLLBACK"), (B, SEL),
        ]),
        schedule("savepoint-rollback", &[
            (A, "SAVEPOINT s1"), (A, INS), (A, "ROLLBACK TO s1"), (A, "RELEASE s1"), (B, SEL),
        ]),
        schedule("constraint-error-keeps-the-transaction", &[
            (A, "BEGIN IMMEDIATE"), (A, "INSERT INTO t (id, v) VALUES (1, 'dup')"), (A, INS),
            (B, SEL), (A, "COMMIT"), (B, SEL),
        ]),
        schedule("three-readers-one-writer", &[
            (A, "BEGIN"), (B, "BEGIN"), (C, "BEGIN"), (A, SEL), (B, SEL), (C, SEL),
            (D, "BEGIN IMMEDIATE"), (D, INS), (D, "COMMIT"), (A, "COMMIT"), (B, "COMMIT"),
            (D, "COMMIT"), (C, "COMMIT"), (D, "COMMIT"), (A, SEL),
        ]),
        schedule("autocommit-writes-interleave", &[
            (A, INS), (B, INS), (A, "UPDATE t SET v = v || '!' WHERE id = 2"),
            (B, "DELETE FROM t WHERE id = 3"), (A, SEL), (B, SEL),
        ]),
        schedule("schema-change-waits-for-reader", &[
            (A, "BEGIN"), (A, SEL), (B, "CREATE TABLE u (x)"), (A, "COMMIT"),
            (B, "CREATE TABLE u (x)"), (B, "INSERT INTO u VALUES (1)"), (A, "SELECT x FROM u"),
        ]),
        schedule("schema-change-seen-by-an-open-connection", &[
            (A, SEL), (B, "CREATE TABLE u (x)"), (A, "INSERT INTO u VALUES (2)"),
            (B, "SELECT x FROM u"),
        ]),
        schedule("close-mid-transaction-rolls-back", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (A, "close"), (B, SEL),
        ]),
        schedule("reopen-after-kill", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (A, "kill"), (A, "BEGIN IMMEDIATE"), (A, INS),
            (A, "COMMIT"), (B, SEL),
        ]),
        schedule("commit-without-a-transaction", &[(A, "COMMIT"), (A, "ROLLBACK"), (A, SEL)]),
        schedule("nested-begin-is-an-error", &[
            (A, "BEGIN"), (A, "BEGIN"), (A, INS), (A, "COMMIT"),
        ]),
        schedule("busy-begin-retried-after-the-holder-dies", &[
            (A, "BEGIN IMMEDIATE"), (B, "BEGIN IMMEDIATE"), (A, INS), (A, "kill"),
            (B, "BEGIN IMMEDIATE"), (B, INS), (B, "COMMIT"),
        ]),
        schedule("reader-started-after-reserved-reads-old-rows", &[
            (A, "BEGIN IMMEDIATE"), (A, "UPDATE t SET v = 'new'"), (B, "BEGIN"), (B, SEL),
            (A, "COMMIT"), (B, SEL), (B, "COMMIT"), (A, "COMMIT"), (B, SEL),
        ]),
        schedule("two-kills-in-a-row", &[
            (A, "BEGIN IMMEDIATE"), (A, INS), (A, "kill"), (B, "BEGIN IMMEDIATE"), (B, INS),
            (B, INS), (B, "kill"), (C, SEL),
        ]),
        schedule("hot-journal-with-reader-and-writer-waiting", &[
            (A, "BEGIN IMMEDIATE"), (A, "DELETE FROM t"), (A, "kill"), (B, "BEGIN"),
            (C, "BEGIN IMMEDIATE"), (B, SEL), (C, INS), (C, "COMMIT"), (B, "COMMIT"),
            (C, "COMMIT"),
        ]),
        schedule("returning-and-upsert", &[
            (A, "INSERT INTO t (id, v) VALUES (1, 'up') ON CONFLICT (id) DO UPDATE SET v = excluded.v RETURNING id, v"),
            (B, "UPDATE t SET v = upper(v) RETURNING v"), (A, SEL),
        ]),
        schedule("exclusive-writer-killed-before-commit", &[
            (A, "BEGIN EXCLUSIVE"), (A, INS), (B, SEL), (A, "kill"), (B, SEL),
        ]),
    ]
}

/// The connection that adds rows before a schedule starts, then closes.
const S: usize = 8;

/// Steps that bring `t` to five rows (`seed`, `b` to `e`).
const FIVE_ROWS: [(usize, &str); 2] = [
    (S, "INSERT INTO t (v) VALUES ('b'), ('c'), ('d'), ('e')"),
    (S, "close"),
];

const MARK_LAST: &str = "UPDATE t SET v = v || '+' WHERE id = (SELECT max(id) FROM t)";

fn with_five_rows(name: &str, steps: &[(usize, &str)]) -> Schedule {
    let mut all = FIVE_ROWS.to_vec();
    all.extend_from_slice(steps);
    schedule(name, &all)
}

/// Hot journals: a writer killed mid-transaction (with `synchronous = OFF` its
/// journal is hot at once; otherwise after its cache spilled into the
/// database), readers that keep SHARED (`locking_mode = EXCLUSIVE`), recovery
/// attempts refused while they read, retried, and what is read and written
/// before and after the journal is rolled back.
pub fn hot_journal() -> Vec<Schedule> {
    // A writer's uncommitted change with a hot journal while B keeps SHARED.
    let hot_while_b_reads = [
        (A, "PRAGMA synchronous = OFF"),
        (A, "BEGIN"),
        (A, MARK_LAST),
        (B, "PRAGMA locking_mode = EXCLUSIVE"),
        (B, "SELECT * FROM t"),
        (A, "kill"),
    ];
    let hot = |rest: &[(usize, &'static str)]| {
        let mut steps = hot_while_b_reads.to_vec();
        steps.extend_from_slice(rest);
        steps
    };
    let mut spill = vec![(A, "PRAGMA cache_size = 2"), (A, "BEGIN")];
    spill.extend(std::iter::repeat_n((A, BIG), 40));
    let spilled = |rest: &[(usize, &'static str)]| {
        let mut steps = spill.clone();
        steps.extend_from_slice(rest);
        steps
    };
    let mut spill_sync_off = vec![(A, "PRAGMA synchronous = OFF")];
    spill_sync_off.extend(spilled(&[(A, "kill")]));
    spill_sync_off.extend([
        (B, "PRAGMA locking_mode = EXCLUSIVE"),
        (B, "SELECT count(*) FROM t"),
        (C, "SELECT count(*) FROM t"),
        (B, "PRAGMA locking_mode = NORMAL"),
        (B, "SELECT count(*) FROM t"),
        (C, "SELECT count(*) FROM t"),
    ]);

    vec![
        // The reported case: the refused recovery leaves C at SHARED, and the
        // retry is refused again while B reads.
        with_five_rows(
            "hot-journal-refused-recovery-keeps-shared",
            &hot(&[
                (C, "PRAGMA locking_mode = EXCLUSIVE"),
                (C, "PRAGMA data_version"),
                (C, "PRAGMA data_version"),
                (B, "close"),
                (C, "PRAGMA data_version"),
                (C, "SELECT * FROM t"),
                (D, SEL),
                (C, "close"),
                (D, SEL),
            ]),
        ),
        // A recovery skipped would let C commit over the hot journal with an
        // in-memory journal of its own; the next reader's rollback would then
        // undo C's committed row.
        with_five_rows(
            "hot-journal-refused-recovery-then-memory-journal-commit",
            &hot(&[
                (C, "PRAGMA locking_mode = EXCLUSIVE"),
                (C, "PRAGMA data_version"),
                (B, "close"),
                (C, "PRAGMA journal_mode = MEMORY"),
                (C, "UPDATE t SET v = 'c-wrote' WHERE id = 1"),
                (C, "close"),
            ]),
        ),
        with_five_rows(
            "hot-journal-refused-recovery-then-write",
            &hot(&[
                (C, "PRAGMA locking_mode = EXCLUSIVE"),
                (C, "PRAGMA data_version"),
                (C, "BEGIN IMMEDIATE"),
                (C, INS),
                (B, "PRAGMA locking_mode = NORMAL"),
                (B, SEL),
                (C, "BEGIN IMMEDIATE"),
                (C, INS),
                (C, "COMMIT"),
                (D, SEL),
                (C, "PRAGMA locking_mode = NORMAL"),
                (C, SEL),
                (D, SEL),
            ]),
        ),
        // A reader in normal mode gives its SHARED back after the refusal.
        with_five_rows(
            "hot-journal-normal-reader-refused-then-recovers",
            &hot(&[
                (C, SEL),
                (C, SEL),
                (D, "BEGIN IMMEDIATE"),
                (B, "PRAGMA locking_mode = NORMAL"),
                (C, SEL),
                (B, SEL),
                (C, SEL),
                (C, "PRAGMA data_version"),
                (D, "BEGIN IMMEDIATE"),
                (D, "COMMIT"),
            ]),
        ),
        // Two connections keep SHARED, each refused in turn.
        with_five_rows(
            "hot-journal-two-exclusive-readers-refused-in-turn",
            &[
                (A, "PRAGMA synchronous = OFF"),
                (A, "BEGIN"),
                (A, MARK_LAST),
                (B, "PRAGMA locking_mode = EXCLUSIVE"),
                (C, "PRAGMA locking_mode = EXCLUSIVE"),
                (B, SEL),
                (C, SEL),
                (A, "kill"),
                (D, SEL),
                (B, SEL),
                (C, SEL),
                (D, "PRAGMA locking_mode = EXCLUSIVE"),
                (D, SEL),
                (D, SEL),
                (B, "close"),
                (D, SEL),
                (C, "close"),
                (D, SEL),
                (D, INS),
                (D, "close"),
                (B, SEL),
            ],
        ),
        // The refused connection asks for a write lock while the journal is hot.
        with_five_rows(
            "hot-journal-begin-exclusive-refused-and-retried",
            &hot(&[
                (C, "PRAGMA locking_mode = EXCLUSIVE"),
                (C, "BEGIN EXCLUSIVE"),
                (C, "BEGIN EXCLUSIVE"),
                (C, "PRAGMA data_version"),
                (B, "kill"),
                (C, "BEGIN EXCLUSIVE"),
                (C, MARK_LAST),
                (C, "COMMIT"),
                (C, "kill"),
            ]),
        ),
        // A spill needs EXCLUSIVE, so a reader that keeps SHARED makes the
        // writer's spill and commit wait (it keeps PENDING); killed, it leaves
        // a journal that is not hot (synchronous is on and nothing was synced).
        schedule(
            "spill-refused-while-an-exclusive-mode-reader-holds-shared",
            &{
                let mut steps = vec![
                    (B, "PRAGMA locking_mode = EXCLUSIVE"),
                    (B, "SELECT count(*) FROM t"),
                ];
                steps.extend(spilled(&[
                    (A, "COMMIT"),
                    (A, "kill"),
                    (C, "PRAGMA locking_mode = EXCLUSIVE"),
                    (C, "SELECT count(*) FROM t"),
                    (C, "SELECT count(*) FROM t"),
                    (B, "close"),
                    (C, "SELECT count(*) FROM t"),
                    (D, "SELECT count(*) FROM t"),
                ]));
                steps
            },
        ),
        // Killed after its cache spilled: the first reader in exclusive mode
        // rolls the journal back and keeps EXCLUSIVE; the others wait.
        schedule(
            "kill-after-spill-recovered-by-an-exclusive-mode-reader",
            &spilled(&[
                (A, "kill"),
                (B, "PRAGMA locking_mode = EXCLUSIVE"),
                (B, "SELECT count(*) FROM t"),
                (C, "SELECT count(*) FROM t"),
                (C, "BEGIN IMMEDIATE"),
                (B, INS),
                (B, "PRAGMA locking_mode = NORMAL"),
                (C, "SELECT count(*) FROM t"),
                (B, "SELECT count(*) FROM t"),
                (C, "SELECT count(*) FROM t"),
            ]),
        ),
        schedule("kill-after-spill-with-synchronous-off", &spill_sync_off),
        // A spill and a kill; the connection that rolled the journal back then
        // writes with a hot journal of its own and is killed too.
        schedule(
            "kill-after-spill-then-the-recoverer-killed-mid-write",
            &spilled(&[
                (A, "kill"),
                (B, "PRAGMA locking_mode = EXCLUSIVE"),
                (B, "PRAGMA synchronous = OFF"),
                (B, "BEGIN"),
                (B, MARK_LAST),
                (B, BIG),
                (B, "kill"),
                (C, "PRAGMA data_version"),
                (C, "SELECT count(*) FROM t"),
            ]),
        ),
    ]
}

/// The rollback journal modes (WAL is refused by the VFS, so it has no
/// schedule here: real files would answer `wal`): commits, kills before
/// commit, kills after a cache spill, and connections in different modes.
/// Also `PRAGMA mmap_size`, which must answer as on real files.
pub fn journal_modes() -> Vec<Schedule> {
    let mut schedules = Vec::new();
    for mode in ["delete", "truncate", "persist", "memory", "off"] {
        let set = format!("PRAGMA journal_mode = {}", mode.to_uppercase());
        let set = set.as_str();
        schedules.push(schedule(
            &format!("journal-mode-{mode}-commit-then-kill-mid-transaction"),
            &[
                (A, set),
                (A, "BEGIN IMMEDIATE"),
                (A, INS),
                (B, SEL),
                (A, "COMMIT"),
                (B, SEL),
                (B, "PRAGMA journal_mode"),
                (A, "BEGIN IMMEDIATE"),
                (A, "UPDATE t SET v = 'changed'"),
                (A, INS),
                (B, SEL),
                (A, "kill"),
                (B, SEL),
                (B, "BEGIN IMMEDIATE"),
                (B, INS),
                (B, "COMMIT"),
            ],
        ));
        let mut spill = vec![(A, set), (A, "PRAGMA cache_size = 2"), (A, "BEGIN")];
        spill.extend(std::iter::repeat_n((A, BIG), 40));
        spill.extend([
            (B, "SELECT count(*) FROM t"),
            (A, "kill"),
            (B, "SELECT count(*) FROM t"),
        ]);
        schedules.push(schedule(
            &format!("journal-mode-{mode}-kill-after-a-spill"),
            &spill,
        ));
        schedules.push(schedule(
            &format!("journal-mode-{mode}-beside-a-delete-mode-writer"),
            &[
                (A, set),
                (A, "PRAGMA locking_mode = EXCLUSIVE"),
                (A, INS),
                (B, SEL),
                (A, "PRAGMA locking_mode = NORMAL"),
                (A, INS),
                (B, SEL),
                (B, INS),
                (A, "BEGIN"),
                (A, SEL),
                (B, "BEGIN IMMEDIATE"),
                (B, INS),
                (B, "COMMIT"),
                (A, "COMMIT"),
                (B, "COMMIT"),
                (A, "ROLLBACK"),
                (A, INS),
                (C, SEL),
            ],
        ));
    }
    schedules.push(schedule(
        "journal-mode-switches-with-a-reader-and-a-writer",
        &[
            (A, "PRAGMA journal_mode = PERSIST"),
            (A, INS),
            (B, "BEGIN"),
            (B, SEL),
            (A, "PRAGMA journal_mode = DELETE"),
            (A, "PRAGMA journal_mode = TRUNCATE"),
            (B, "COMMIT"),
            (A, "PRAGMA journal_mode = DELETE"),
            (A, "PRAGMA journal_mode = walx"),
            (A, "PRAGMA journal_mode = ''"),
            (A, "PRAGMA journal_mode = MEMORY"),
            (A, "BEGIN"),
            (A, "PRAGMA journal_mode = OFF"),
            (A, "COMMIT"),
            (A, "PRAGMA journal_mode = OFF"),
            (A, INS),
            (A, "PRAGMA journal_mode"),
        ],
    ));
    schedules.push(schedule(
        "mmap-size-answers-as-on-real-files",
        &[
            (A, "PRAGMA mmap_size"),
            (A, "PRAGMA mmap_size = 65536"),
            (A, "PRAGMA mmap_size"),
            (A, "PRAGMA main.mmap_size"),
            (A, INS),
            (A, SEL),
            (B, "PRAGMA mmap_size"),
            (B, "PRAGMA mmap_size = 1000000000000"),
            (B, "BEGIN IMMEDIATE"),
            (B, INS),
            (A, SEL),
            (B, "kill"),
            (A, SEL),
            (A, "PRAGMA mmap_size = -1"),
            (A, "PRAGMA mmap_size = 0"),
            (A, "PRAGMA mmap_size"),
            (C, "PRAGMA mmap_size = 4096"),
            (C, "PRAGMA temp.mmap_size"),
        ],
    ));
    schedules
}

/// Attached databases (`ATTACH 'aux.db'`, a file beside the main one) and
/// transactions that write both: commits through a super-journal, kills
/// before and after commit and after spills into both files, a commit
/// refused while another connection reads the attached file, and
/// `synchronous = OFF` (no super-journal).
pub fn attached() -> Vec<Schedule> {
    const ATTACH: &str = "ATTACH 'aux.db' AS aux";
    const AUX: &str = "CREATE TABLE IF NOT EXISTS aux.u (id INTEGER PRIMARY KEY, w TEXT)";
    const AUX_INS: &str = "INSERT INTO aux.u (w) VALUES ('y')";
    const AUX_BIG: &str = "INSERT INTO aux.u (w) VALUES (printf('%.800c', 'u'))";
    const BOTH: &str = "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM aux.u)";
    let mut spill_both = vec![
        (A, ATTACH),
        (A, AUX),
        (A, "PRAGMA cache_size = 2"),
        (A, "PRAGMA aux.cache_size = 2"),
        (A, "BEGIN"),
    ];
    spill_both.extend(std::iter::repeat_n((A, BIG), 20));
    spill_both.extend(std::iter::repeat_n((A, AUX_BIG), 20));
    spill_both.extend([
        (B, ATTACH),
        (B, BOTH),
        (A, "kill"),
        (C, ATTACH),
        (C, BOTH),
        (C, "PRAGMA aux.integrity_check"),
        (C, "PRAGMA integrity_check"),
        (B, BOTH),
    ]);
    vec![
        schedule(
            "attach-a-file-beside-the-main-database",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, AUX_INS),
                (B, "SELECT w FROM aux.u"),
                (B, ATTACH),
                (B, "SELECT id, w FROM aux.u"),
                (A, "SELECT seq, name FROM pragma_database_list"),
                (A, "ATTACH 'aux.db' AS aux"),
                (A, "DETACH aux"),
                (A, "SELECT w FROM aux.u"),
                (A, "ATTACH 'aux.db' AS again"),
                (A, "SELECT id, w FROM again.u"),
                (A, "ATTACH 'more.db' AS more"),
                (A, "CREATE TABLE more.m (z)"),
                (B, "ATTACH 'more.db' AS more"),
                (B, "SELECT count(*) FROM more.m"),
            ],
        ),
        schedule(
            "attach-transaction-writes-both-and-commits",
            &[
                (A, ATTACH),
                (A, AUX),
                (B, ATTACH),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (B, BOTH),
                (A, "COMMIT"),
                (B, BOTH),
                (A, "BEGIN IMMEDIATE"),
                (A, AUX_INS),
                (B, "BEGIN IMMEDIATE"),
                (B, AUX_INS),
                (B, INS),
                (B, "COMMIT"),
                (A, INS),
                (A, "COMMIT"),
                (B, BOTH),
                (C, ATTACH),
                (C, "SELECT id, w FROM aux.u"),
            ],
        ),
        schedule(
            "attach-kill-before-a-two-file-commit",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (A, "UPDATE t SET v = 'both'"),
                (B, ATTACH),
                (B, BOTH),
                (A, "kill"),
                (B, BOTH),
                (B, "BEGIN IMMEDIATE"),
                (B, AUX_INS),
                (B, "COMMIT"),
                (B, BOTH),
            ],
        ),
        schedule(
            "attach-kill-after-a-two-file-commit",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (A, "COMMIT"),
                (A, "kill"),
                (B, ATTACH),
                (B, BOTH),
                (B, "SELECT id, w FROM aux.u"),
            ],
        ),
        schedule("attach-kill-after-spills-into-both-files", &spill_both),
        // The commit takes EXCLUSIVE on every file before it writes anything:
        // refused on aux (a reader there), main stays locked until the retry.
        schedule(
            "attach-commit-refused-by-a-reader-of-the-attached-file-then-killed",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (B, ATTACH),
                (B, "BEGIN"),
                (B, "SELECT count(*) FROM aux.u"),
                (A, "COMMIT"),
                (C, SEL),
                (B, SEL),
                (A, "kill"),
                (C, SEL),
                (B, "COMMIT"),
                (B, BOTH),
            ],
        ),
        schedule(
            "attach-commit-refused-then-retried",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (B, ATTACH),
                (B, "BEGIN"),
                (B, "SELECT count(*) FROM aux.u"),
                (A, "COMMIT"),
                (B, "COMMIT"),
                (A, "COMMIT"),
                (B, BOTH),
                (A, "kill"),
                (B, BOTH),
            ],
        ),
        // With synchronous OFF there is no super-journal: each file commits alone.
        schedule(
            "attach-two-file-commit-with-synchronous-off",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, "PRAGMA synchronous = OFF"),
                (A, "PRAGMA aux.synchronous = OFF"),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (A, "COMMIT"),
                (A, "BEGIN"),
                (A, AUX_INS),
                (A, INS),
                (B, ATTACH),
                (B, BOTH),
                (A, "kill"),
                (B, BOTH),
            ],
        ),
        schedule(
            "attach-persist-journals-and-exclusive-locking",
            &[
                (A, ATTACH),
                (A, AUX),
                (A, "PRAGMA aux.journal_mode = PERSIST"),
                (A, "PRAGMA aux.locking_mode = EXCLUSIVE"),
                (A, "BEGIN"),
                (A, INS),
                (A, AUX_INS),
                (A, "COMMIT"),
                (B, ATTACH),
                (B, BOTH),
                (A, "BEGIN"),
                (A, AUX_INS),
                (A, INS),
                (A, "kill"),
                (B, BOTH),
                (B, "PRAGMA aux.journal_mode"),
            ],
        ),
    ]
}

/// splitmix64: a tiny deterministic generator, so the random schedules are
/// the same on every machine and in every browser.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The random schedules: `count` schedules of `len` steps over 3 connections,
/// from `seed`.
pub fn random(seed: u64, count: usize, len: usize) -> Vec<Schedule> {
    let vocabulary = [
        "BEGIN",
        "BEGIN IMMEDIATE",
        "BEGIN EXCLUSIVE",
        "SELECT count(*) FROM t",
        SEL,
        "UPDATE t SET v = v || '+' WHERE id = (SELECT min(id) FROM t)",
        "DELETE FROM t WHERE id = (SELECT max(id) FROM t) AND id > 1",
        "COMMIT",
        "COMMIT",
        "ROLLBACK",
    ];
    random_from(&vocabulary, None, ("random", 'r'), seed, count, len)
}

/// `count` schedules of `len` random steps over 3 connections, from `seed`:
/// kills, closes, inserts (of values tagged `tag`) and statements of
/// `vocabulary`, after `first` if given; named `NAME-SEED-N`.
fn random_from(
    vocabulary: &[&str],
    first: Option<(usize, &str)>,
    (name, tag): (&str, char),
    seed: u64,
    count: usize,
    len: usize,
) -> Vec<Schedule> {
    let mut rng = SplitMix(seed);
    (0..count)
        .map(|n| {
            let mut ops: Vec<Op> = first
                .map(|(conn, sql)| (conn, Action::Sql(sql.to_string())))
                .into_iter()
                .collect();
            ops.extend((0..len).map(|i| {
                let conn = rng.below(3);
                let roll = rng.below(100);
                let action = if roll < 5 {
                    Action::Kill
                } else if roll < 8 {
                    Action::Close
                } else if roll < 30 {
                    Action::Sql(format!("INSERT INTO t (v) VALUES ('{tag}{n}-{i}')"))
                } else {
                    Action::Sql(vocabulary[rng.below(vocabulary.len())].to_string())
                };
                (conn, action)
            }));
            ops.extend(final_ops());
            Schedule {
                name: format!("{name}-{seed}-{n}"),
                ops,
            }
        })
        .collect()
}

/// Every schedule of the suite.
pub fn all() -> Vec<Schedule> {
    let mut all = handwritten();
    all.extend(random(42, 60, 14));
    all.extend(hot_journal());
    all.extend(journal_modes());
    all.extend(attached());
    all.extend(wal());
    all.extend(random_wal(7, 40, 16));
    all.extend(empty_files_and_dead_cursors());
    all
}

/// Files of zero bytes, which SQLite's unix VFS says do not exist
/// (`unixAccess` asks for a size above zero): an empty log beside a
/// database, an empty journal left by `journal_mode = TRUNCATE`; and
/// connections killed while a statement is still open, whose file
/// descriptors and mappings go with their process.
pub fn empty_files_and_dead_cursors() -> Vec<Schedule> {
    vec![
        schedule(
            "wal-empty-log-then-exclusive-locking-mode-asks-for-wal-again",
            &[
                (A, INS),
                (A, INS),
                WAL,
                (C, "open:SELECT id, v FROM t ORDER BY id"),
                (A, "PRAGMA locking_mode = EXCLUSIVE"),
                (A, COUNT),
                (A, "files"),
                (A, "PRAGMA journal_mode = WAL"),
                (A, COUNT),
                (C, "close"),
                (A, COUNT),
                (A, "PRAGMA journal_mode = WAL"),
                (A, "files"),
            ],
        ),
        schedule(
            "wal-empty-log-then-leaving-wal-while-a-reader-keeps-it",
            &[
                (A, INS),
                (A, INS),
                WAL,
                (C, COUNT),
                (A, "files"),
                (A, "PRAGMA journal_mode = TRUNCATE"),
                (A, "PRAGMA wal_checkpoint(PASSIVE)"),
                (A, COUNT),
                (C, "close"),
                (A, "PRAGMA journal_mode = TRUNCATE"),
                (A, "files"),
            ],
        ),
        schedule(
            "truncate-rollback-on-an-empty-database-leaves-an-empty-journal",
            &[
                (A, "ATTACH 'empty.db' AS e"),
                (A, "PRAGMA e.journal_mode = TRUNCATE"),
                (A, "BEGIN"),
                (A, "CREATE TABLE e.x (a)"),
                (A, "ROLLBACK"),
                (A, "files"),
                (B, "ATTACH 'empty.db' AS e"),
                (B, "SELECT count(*) FROM e.sqlite_master"),
                (B, "files"),
                (A, "close"),
                (B, "close"),
                (B, "files"),
            ],
        ),
        schedule(
            "truncate-rollback-leaves-an-empty-journal-the-next-reader-keeps",
            &[
                (A, "PRAGMA journal_mode = TRUNCATE"),
                (A, "BEGIN"),
                (A, INS),
                (A, "ROLLBACK"),
                (A, "files"),
                (B, COUNT),
                (B, "files"),
                (A, "close"),
                (B, "close"),
                (B, "files"),
            ],
        ),
        schedule(
            "wal-a-killed-cursor-takes-its-shared-memory-with-it",
            &[
                WAL,
                (A, INS),
                (A, "PRAGMA wal_checkpoint(TRUNCATE)"),
                (C, "open:SELECT id, v FROM t ORDER BY id"),
                (C, "kill"),
                (A, COUNT),
                (A, "files"),
                (A, "close"),
                (A, "files"),
                (B, COUNT),
                (B, "close"),
                (B, "files"),
            ],
        ),
        schedule(
            "wal-a-killed-cursor-mid-transaction-leaves-its-log-for-recovery",
            &[
                WAL,
                (C, "BEGIN"),
                (C, INS),
                (C, "open:SELECT id, v FROM t ORDER BY id"),
                (C, "kill"),
                (A, COUNT),
                (A, INS),
                (A, "close"),
                (A, "files"),
            ],
        ),
        schedule(
            "a-killed-cursor-releases-its-shared-lock",
            &[
                (A, INS),
                (C, "open:SELECT id, v FROM t ORDER BY id"),
                (A, "BEGIN EXCLUSIVE"),
                (C, "kill"),
                (A, "BEGIN EXCLUSIVE"),
                (A, INS),
                (A, "COMMIT"),
                (A, "files"),
            ],
        ),
        schedule(
            "a-cursor-closed-with-its-connection-ends-its-read",
            &[
                (A, INS),
                (B, "open:SELECT id, v FROM t ORDER BY id"),
                (A, "BEGIN EXCLUSIVE"),
                (B, "close"),
                (A, "BEGIN EXCLUSIVE"),
                (A, "COMMIT"),
                (A, "files"),
            ],
        ),
    ]
}

/// WAL mode: the first step of every schedule turns it on (it persists in
/// the database file, so every connection then uses the WAL).
const WAL: (usize, &str) = (A, "PRAGMA journal_mode = WAL");
const E: usize = 4;
const F: usize = 5;
const COUNT: &str = "SELECT count(*) FROM t";

/// A WAL schedule: WAL mode on, then `steps`.
fn wal_schedule(name: &str, steps: &[(usize, &str)]) -> Schedule {
    let mut all = vec![WAL];
    all.extend_from_slice(steps);
    schedule(&format!("wal-{name}"), &all)
}

/// The checkpoint modes of `PRAGMA wal_checkpoint`.
pub const CHECKPOINTS: [&str; 4] = ["PASSIVE", "FULL", "RESTART", "TRUNCATE"];

/// The hand-written WAL schedules: readers during a write, long readers
/// pinning a snapshot, `SQLITE_BUSY_SNAPSHOT` on upgrade, every checkpoint
/// mode with readers and writers present, `wal_autocheckpoint`, kills
/// mid-transaction, after a cache spill and in the middle of a checkpoint
/// that readers held back, recovery by the next connection, and switching
/// journal modes.
pub fn wal() -> Vec<Schedule> {
    let ckpt = |mode: &str| format!("PRAGMA wal_checkpoint({mode})");
    let mut out = vec![
        wal_schedule(
            "reader-during-a-write-sees-the-last-commit",
            &[(A, "BEGIN"), (A, INS), (B, SEL), (A, "COMMIT"), (B, SEL)],
        ),
        wal_schedule(
            "a-reader-does-not-block-the-writer",
            &[
                (B, "BEGIN"),
                (B, SEL),
                (A, INS),
                (A, INS),
                (B, SEL),
                (B, "COMMIT"),
                (B, SEL),
            ],
        ),
        wal_schedule(
            "a-long-reader-pins-its-snapshot",
            &[
                (B, "BEGIN"),
                (B, COUNT),
                (A, INS),
                (C, "BEGIN"),
                (C, COUNT),
                (A, INS),
                (B, COUNT),
                (C, COUNT),
                (D, COUNT),
                (B, "COMMIT"),
                (B, COUNT),
                (C, "COMMIT"),
            ],
        ),
        wal_schedule(
            "busy-snapshot-when-a-reader-upgrades-after-a-commit",
            &[
                (B, "BEGIN"),
                (B, SEL),
                (A, INS),
                (B, INS),
                (B, "COMMIT"),
                (B, INS),
            ],
        ),
        wal_schedule(
            "busy-snapshot-is-not-cured-by-retrying",
            &[
                (B, "BEGIN"),
                (B, COUNT),
                (A, "UPDATE t SET v = 'a'"),
                (B, "UPDATE t SET v = 'b'"),
                (B, "UPDATE t SET v = 'b'"),
                (B, "ROLLBACK"),
                (B, "BEGIN"),
                (B, "UPDATE t SET v = 'b'"),
                (B, "COMMIT"),
            ],
        ),
        wal_schedule(
            "two-immediate-writers",
            &[
                (A, "BEGIN IMMEDIATE"),
                (B, "BEGIN IMMEDIATE"),
                (A, INS),
                (A, "COMMIT"),
                (B, "BEGIN IMMEDIATE"),
                (B, INS),
                (B, "COMMIT"),
            ],
        ),
        wal_schedule(
            "deferred-readers-race-to-write",
            &[
                (A, "BEGIN"),
                (B, "BEGIN"),
                (A, SEL),
                (B, SEL),
                (A, INS),
                (B, INS),
                (A, "COMMIT"),
                (B, INS),
                (B, "COMMIT"),
                (B, "ROLLBACK"),
                (C, SEL),
            ],
        ),
        wal_schedule(
            "deferred-write-first-then-a-reader-writes",
            &[
                (A, "BEGIN"),
                (A, INS),
                (B, "BEGIN"),
                (B, SEL),
                (B, INS),
                (A, "COMMIT"),
                (B, INS),
                (B, "ROLLBACK"),
                (B, "BEGIN"),
                (B, INS),
                (B, "COMMIT"),
            ],
        ),
        wal_schedule(
            "a-writer-that-has-not-read-is-not-stale",
            &[(B, "BEGIN"), (A, INS), (B, INS), (B, "COMMIT"), (C, SEL)],
        ),
        wal_schedule(
            "begin-exclusive-lets-readers-read",
            &[
                (B, "BEGIN"),
                (B, SEL),
                (A, "BEGIN EXCLUSIVE"),
                (A, INS),
                (C, SEL),
                (B, SEL),
                (A, "COMMIT"),
                (B, SEL),
                (B, "COMMIT"),
                (C, SEL),
            ],
        ),
        wal_schedule(
            "autocheckpoint-every-two-pages",
            &[
                (A, "PRAGMA wal_autocheckpoint = 2"),
                (A, INS),
                (A, INS),
                (A, INS),
                (A, INS),
                (B, SEL),
                (A, "PRAGMA wal_autocheckpoint"),
                (B, "PRAGMA wal_autocheckpoint"),
            ],
        ),
        wal_schedule(
            "autocheckpoint-held-back-by-a-reader",
            &[
                (A, "PRAGMA wal_autocheckpoint = 1"),
                (B, "BEGIN"),
                (B, COUNT),
                (A, INS),
                (A, INS),
                (A, INS),
                (B, COUNT),
                (B, "COMMIT"),
                (A, INS),
                (C, COUNT),
            ],
        ),
        wal_schedule(
            "autocheckpoint-off-grows-the-log",
            &[
                (A, "PRAGMA wal_autocheckpoint = 0"),
                (A, INS),
                (A, INS),
                (A, INS),
                (A, INS),
                (B, "PRAGMA wal_checkpoint(PASSIVE)"),
                (A, INS),
                (B, "PRAGMA wal_checkpoint"),
            ],
        ),
        wal_schedule(
            "kill-mid-transaction",
            &[
                (A, "BEGIN"),
                (A, INS),
                (A, "UPDATE t SET v = 'lost'"),
                (A, "kill"),
                (B, SEL),
                (B, INS),
                (C, SEL),
            ],
        ),
        wal_schedule(
            "kill-after-commit-the-next-connection-recovers",
            &[(A, INS), (A, INS), (A, "kill"), (B, SEL), (B, INS)],
        ),
        wal_schedule(
            "everyone-killed-then-recovery",
            &[
                (A, INS),
                (B, SEL),
                (B, "BEGIN"),
                (B, INS),
                (A, "kill"),
                (B, "kill"),
                (C, SEL),
                (C, INS),
                (D, COUNT),
            ],
        ),
        wal_schedule(
            "kill-a-reader-that-pinned-the-log",
            &[
                (B, "BEGIN"),
                (B, SEL),
                (A, INS),
                (A, "PRAGMA wal_checkpoint(RESTART)"),
                (B, "kill"),
                (A, "PRAGMA wal_checkpoint(RESTART)"),
                (A, INS),
                (C, SEL),
            ],
        ),
        wal_schedule(
            "kill-the-writer-while-it-holds-the-write-lock",
            &[
                (A, "BEGIN IMMEDIATE"),
                (B, "BEGIN IMMEDIATE"),
                (A, "kill"),
                (B, "BEGIN IMMEDIATE"),
                (B, INS),
                (B, "COMMIT"),
            ],
        ),
        wal_schedule(
            "close-of-the-last-connection-checkpoints-and-deletes-the-log",
            &[
                (A, INS),
                (A, INS),
                (A, "close"),
                (B, SEL),
                (B, "PRAGMA journal_mode"),
            ],
        ),
        wal_schedule(
            "close-beside-another-connection-keeps-the-log",
            &[
                (A, INS),
                (B, SEL),
                (A, "close"),
                (B, INS),
                (B, "close"),
                (C, SEL),
            ],
        ),
        wal_schedule(
            "switch-to-delete-while-another-connection-is-open",
            &[
                (A, INS),
                (B, SEL),
                (A, "PRAGMA journal_mode = DELETE"),
                (B, "close"),
                (A, "PRAGMA journal_mode = DELETE"),
                (A, INS),
                (C, SEL),
                (C, "PRAGMA journal_mode"),
            ],
        ),
        wal_schedule(
            "switch-from-delete-to-wal-with-a-reader",
            &[
                (A, "PRAGMA journal_mode = DELETE"),
                (B, "BEGIN"),
                (B, SEL),
                (A, "PRAGMA journal_mode = WAL"),
                (B, "COMMIT"),
                (A, "PRAGMA journal_mode = WAL"),
                (A, INS),
                (B, SEL),
            ],
        ),
        wal_schedule(
            "switch-to-truncate-and-back",
            &[
                (A, INS),
                (A, "PRAGMA journal_mode = TRUNCATE"),
                (A, INS),
                (A, "PRAGMA journal_mode = WAL"),
                (A, INS),
                (B, SEL),
                (B, "PRAGMA journal_mode"),
            ],
        ),
        wal_schedule(
            "switch-inside-a-transaction-is-refused",
            &[
                (A, "BEGIN"),
                (A, INS),
                (A, "PRAGMA journal_mode = DELETE"),
                (A, "COMMIT"),
                (A, "PRAGMA journal_mode"),
            ],
        ),
        wal_schedule(
            "exclusive-locking-mode",
            &[
                (A, "PRAGMA locking_mode = EXCLUSIVE"),
                (A, INS),
                (B, SEL),
                (A, "PRAGMA locking_mode = NORMAL"),
                (A, SEL),
                (B, SEL),
                (B, INS),
            ],
        ),
        wal_schedule(
            "savepoint-rolled-back",
            &[
                (A, "SAVEPOINT s1"),
                (A, INS),
                (A, "SAVEPOINT s2"),
                (A, INS),
                (A, "ROLLBACK TO s2"),
                (A, "RELEASE s1"),
                (B, SEL),
            ],
        ),
        wal_schedule(
            "five-readers-at-five-snapshots",
            &[
                (B, "BEGIN"),
                (B, COUNT),
                (A, INS),
                (C, "BEGIN"),
                (C, COUNT),
                (A, INS),
                (D, "BEGIN"),
                (D, COUNT),
                (A, INS),
                (E, "BEGIN"),
                (E, COUNT),
                (A, INS),
                (F, "BEGIN"),
                (F, COUNT),
                (A, INS),
                (B, COUNT),
                (C, COUNT),
                (D, COUNT),
                (E, COUNT),
                (F, COUNT),
                (A, "PRAGMA wal_checkpoint(PASSIVE)"),
                (B, "COMMIT"),
                (C, "COMMIT"),
                (D, "COMMIT"),
                (E, "COMMIT"),
                (F, "COMMIT"),
            ],
        ),
        wal_schedule(
            "data-version-sees-other-connections-commits",
            &[
                (B, "PRAGMA data_version"),
                (A, INS),
                (B, "PRAGMA data_version"),
                (B, INS),
                (B, "PRAGMA data_version"),
            ],
        ),
        wal_schedule(
            "restart-checkpoint-then-the-writer-restarts-the-log",
            &[
                (A, INS),
                (A, INS),
                (B, "PRAGMA wal_checkpoint(RESTART)"),
                (A, INS),
                (C, SEL),
                (B, "PRAGMA wal_checkpoint"),
                (A, "kill"),
                (D, SEL),
            ],
        ),
        wal_schedule(
            "truncate-checkpoint-then-a-reader-and-a-kill",
            &[
                (A, INS),
                (B, "PRAGMA wal_checkpoint(TRUNCATE)"),
                (C, "BEGIN"),
                (C, SEL),
                (A, INS),
                (A, "kill"),
                (C, SEL),
                (C, "COMMIT"),
                (C, SEL),
            ],
        ),
    ];
    for mode in CHECKPOINTS {
        let ckpt = ckpt(mode);
        let ckpt = ckpt.as_str();
        let lower = mode.to_lowercase();
        out.push(wal_schedule(
            &format!("checkpoint-{lower}-when-idle"),
            &[
                (A, INS),
                (A, INS),
                (B, ckpt),
                (C, SEL),
                (A, INS),
                (B, ckpt),
                (B, ckpt),
            ],
        ));
        out.push(wal_schedule(
            &format!("checkpoint-{lower}-with-a-reader"),
            &[
                (A, INS),
                (B, "BEGIN"),
                (B, SEL),
                (A, INS),
                (C, ckpt),
                (B, SEL),
                (B, "COMMIT"),
                (C, ckpt),
                (A, INS),
                (D, SEL),
            ],
        ));
        out.push(wal_schedule(
            &format!("checkpoint-{lower}-with-a-writer"),
            &[
                (A, INS),
                (A, "BEGIN IMMEDIATE"),
                (A, INS),
                (C, ckpt),
                (A, "COMMIT"),
                (C, ckpt),
                (B, SEL),
            ],
        ));
        // A checkpoint that readers held back part-way, then the
        // checkpointer and the writer killed: the next connection recovers.
        out.push(wal_schedule(
            &format!("kill-after-a-{lower}-checkpoint-held-back-part-way"),
            &[
                (A, "PRAGMA wal_autocheckpoint = 0"),
                (A, INS),
                (A, INS),
                (B, "BEGIN"),
                (B, COUNT),
                (A, INS),
                (A, INS),
                (C, ckpt),
                (C, "kill"),
                (A, "BEGIN"),
                (A, INS),
                (A, "kill"),
                (B, COUNT),
                (B, "COMMIT"),
                (D, "PRAGMA wal_checkpoint(TRUNCATE)"),
                (D, COUNT),
                (B, "kill"),
                (D, "kill"),
                (E, SEL),
            ],
        ));
    }
    let mut spill = vec![WAL, (A, "PRAGMA cache_size = 2"), (A, "BEGIN")];
    spill.extend(std::iter::repeat_n((A, BIG), 40));
    let mut kill_spill = spill.clone();
    kill_spill.extend([(B, COUNT), (A, "kill"), (B, COUNT), (B, INS), (C, COUNT)]);
    out.push(schedule(
        "wal-kill-after-the-cache-spilled-into-the-log",
        &kill_spill,
    ));
    let mut commit_spill = spill.clone();
    commit_spill.extend([
        (B, "BEGIN"),
        (B, COUNT),
        (A, "COMMIT"),
        (B, COUNT),
        (B, "COMMIT"),
        (B, COUNT),
    ]);
    out.push(schedule(
        "wal-spilled-writer-commits-beside-a-reader",
        &commit_spill,
    ));
    let mut rollback_spill = spill;
    rollback_spill.extend([(A, "ROLLBACK"), (B, COUNT), (A, INS), (B, COUNT)]);
    out.push(schedule("wal-spilled-writer-rolls-back", &rollback_spill));
    out.push(schedule(
        "wal-attached-databases-in-wal-mode",
        &[
            WAL,
            (A, "ATTACH 'aux.db' AS aux"),
            (A, "PRAGMA aux.journal_mode = WAL"),
            (A, "CREATE TABLE aux.u (x)"),
            (A, "BEGIN"),
            (A, INS),
            (A, "INSERT INTO aux.u VALUES (1)"),
            (A, "COMMIT"),
            (B, "ATTACH 'aux.db' AS aux"),
            (
                B,
                "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM aux.u)",
            ),
            (A, "BEGIN"),
            (A, "INSERT INTO aux.u VALUES (2)"),
            (A, INS),
            (A, "kill"),
            (
                B,
                "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM aux.u)",
            ),
        ],
    ));
    out
}

/// Random WAL schedules: `count` schedules of `len` steps over 3 connections,
/// from `seed`, with checkpoints of every mode among the statements.
pub fn random_wal(seed: u64, count: usize, len: usize) -> Vec<Schedule> {
    let vocabulary = [
        "BEGIN",
        "BEGIN IMMEDIATE",
        "SELECT count(*) FROM t",
        SEL,
        "UPDATE t SET v = v || '+' WHERE id = (SELECT min(id) FROM t)",
        "DELETE FROM t WHERE id = (SELECT max(id) FROM t) AND id > 1",
        "COMMIT",
        "COMMIT",
        "ROLLBACK",
        "PRAGMA wal_checkpoint(PASSIVE)",
        "PRAGMA wal_checkpoint(FULL)",
        "PRAGMA wal_checkpoint(RESTART)",
        "PRAGMA wal_checkpoint(TRUNCATE)",
        "PRAGMA wal_autocheckpoint = 1",
    ];
    random_from(
        &vocabulary,
        Some(WAL),
        ("wal-random", 'w'),
        seed,
        count,
        len,
    )
}
