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

fn schedule(name: &str, steps: &[(usize, &str)]) -> Schedule {
    let mut ops: Vec<Op> = steps
        .iter()
        .map(|&(conn, step)| {
            let action = match step {
                "kill" => Action::Kill,
                "close" => Action::Close,
                sql => Action::Sql(sql.to_string()),
            };
            (conn, action)
        })
        .collect();
    ops.extend(
        FINAL
            .iter()
            .map(|sql| (FINAL_CONN, Action::Sql(sql.to_string()))),
    );
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
    let mut rng = SplitMix(seed);
    (0..count)
        .map(|n| {
            let mut ops: Vec<Op> = (0..len)
                .map(|i| {
                    let conn = rng.below(3);
                    let roll = rng.below(100);
                    let action = if roll < 5 {
                        Action::Kill
                    } else if roll < 8 {
                        Action::Close
                    } else if roll < 30 {
                        Action::Sql(format!("INSERT INTO t (v) VALUES ('r{n}-{i}')"))
                    } else {
                        Action::Sql(vocabulary[rng.below(vocabulary.len())].to_string())
                    };
                    (conn, action)
                })
                .collect();
            ops.extend(
                FINAL
                    .iter()
                    .map(|sql| (FINAL_CONN, Action::Sql(sql.to_string()))),
            );
            Schedule {
                name: format!("random-{seed}-{n}"),
                ops,
            }
        })
        .collect()
}

/// Every schedule of the suite.
pub fn all() -> Vec<Schedule> {
    let mut all = handwritten();
    all.extend(random(42, 60, 14));
    all
}
