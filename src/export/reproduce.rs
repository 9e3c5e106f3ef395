//! Reproduces one replayground run on real SQLite files: scenario __SCENARIO__,
//! schedule __SCHEDULE__.
//!
//! Written by `replayground export --rust`. Put this file in the `tests/`
//! folder of a crate whose dev-dependencies have
//! `rusqlite = { version = "0.43", features = ["bundled"] }` and run
//! `cargo test -- --nocapture`. It writes the scenario's database files (as
//! its setup left them) into a temporary folder, runs one process per
//! attempt (this test binary again, as a worker) with its own connection to
//! each database it uses (no busy timeout: SQLITE_BUSY comes back at once;
//! autocommit: the scenario's own BEGIN and COMMIT delimit transactions),
//! runs the statements in the schedule's order, kills an attempt's process
//! where the run killed it, and compares each step's result and the final
//! tables with the playground's. It fails if anything differs.
#![allow(dead_code, clippy::all)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use rusqlite::types::Value;
use rusqlite::Connection;

__REPR__

/// A value the playground bound.
enum P {
    N,
    I(i64),
    R(f64),
    T(&'static str),
    B(&'static [u8]),
}

/// One step of the run.
struct Step {
    attempt: &'static str,
    name: &'static str,
    sql: Option<&'static str>,
    database: &'static str,
    params: &'static [P],
    expected: &'static str,
    ends: bool,
    kill: bool,
}

const SCENARIO: &str = __SCENARIO_LITERAL__;
const SCHEDULE: &str = __SCHEDULE_LITERAL__;
/// Each database file as the setup left it (hex), and its connections' PRAGMAs.
const DATABASES: &[(&str, &str, &str)] = __DATABASES__;
const STEPS: &[Step] = __STEPS__;
/// The committed tables after the last step: database, table, rows.
const TABLES: &[(&str, &str, &str)] = __TABLES__;
/// The checks the playground reported failing.
const FAILED_CHECKS: &[&str] = __FAILED__;

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn v_of(value: &Value) -> V<'_> {
    match value {
        Value::Null => V::N,
        Value::Integer(i) => V::I(*i),
        Value::Real(f) => V::R(*f),
        Value::Text(t) => V::T(t),
        Value::Blob(b) => V::B(b),
    }
}

/// Runs one statement; its result in the playground's words.
fn run(conn: &Connection, sql: &str, params: &[P]) -> String {
    let values: Vec<Value> = params
        .iter()
        .map(|p| match p {
            P::N => Value::Null,
            P::I(i) => Value::Integer(*i),
            P::R(f) => Value::Real(*f),
            P::T(t) => Value::Text(t.to_string()),
            P::B(b) => Value::Blob(b.to_vec()),
        })
        .collect();
    let result = (|| -> rusqlite::Result<Vec<Vec<Value>>> {
        let mut statement = conn.prepare(sql)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(values.iter()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push((0..columns).map(|i| row.get::<_, Value>(i)).collect::<rusqlite::Result<Vec<_>>>()?);
        }
        Ok(out)
    })();
    match result {
        Ok(rows) => {
            let rows: Vec<Vec<V<'_>>> = rows.iter().map(|r| r.iter().map(v_of).collect()).collect();
            repr_rows(&rows)
        }
        // SQLITE_BUSY_SNAPSHOT (517) is a failure no wait cures, as the playground shows it.
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseBusy && e.extended_code != 517 => "busy".into(),
        Err(_) => "error".into(),
    }
}

/// One attempt's process: its connections, and the steps it is told to run.
#[test]
fn worker() {
    let Ok(folder) = std::env::var("REPLAYGROUND_WORKER") else { return };
    let mut connections: Vec<(&str, Connection)> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        if line == "close" {
            // A graceful close: SQLite rolls back an open transaction.
            connections.clear();
            println!("REPLY closed");
            return;
        }
        let step = &STEPS[line.parse::<usize>().unwrap()];
        if !connections.iter().any(|(db, _)| *db == step.database) {
            let conn = Connection::open(std::path::Path::new(&folder).join(step.database)).unwrap();
            conn.busy_timeout(std::time::Duration::ZERO).unwrap();
            let pragmas = DATABASES.iter().find(|d| d.0 == step.database).map_or("", |d| d.2);
            conn.execute_batch(pragmas).unwrap();
            connections.push((step.database, conn));
        }
        let conn = &connections.iter().find(|(db, _)| *db == step.database).unwrap().1;
        println!("REPLY {}", run(conn, step.sql.unwrap(), step.params));
    }
}

struct Worker {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Worker {
    fn ask(&mut self, line: &str) -> String {
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
        let mut reply = String::new();
        loop {
            reply.clear();
            assert!(self.output.read_line(&mut reply).unwrap() > 0, "the worker ended");
            if let Some(rest) = reply.trim_end().strip_prefix("REPLY ") {
                return rest.to_string();
            }
        }
    }
}

#[test]
fn reproduces_the_run() {
    if std::env::var("REPLAYGROUND_WORKER").is_ok() {
        return;
    }
    let folder = std::env::temp_dir().join(format!("replayground-{}-{}", std::process::id(), SCENARIO));
    std::fs::create_dir_all(&folder).unwrap();
    for (name, hex, _) in DATABASES {
        std::fs::write(folder.join(name), unhex(hex)).unwrap();
    }
    println!("scenario {SCENARIO}, schedule {SCHEDULE}, SQLite {}", rusqlite::version());
    let exe = std::env::current_exe().unwrap();
    let mut workers: Vec<(&str, Worker)> = Vec::new();
    let (mut compared, mut differences) = (0, 0);
    for (i, step) in STEPS.iter().enumerate() {
        let label = format!("{:>3}. {}: {}", i + 1, step.attempt, step.name);
        if step.kill {
            if let Some(at) = workers.iter().position(|(a, _)| *a == step.attempt) {
                let (_, mut worker) = workers.remove(at);
                worker.child.kill().unwrap();
                worker.child.wait().unwrap();
            }
            println!("{label}  killed");
            continue;
        }
        if step.sql.is_none() {
            println!("{label}  (no SQL)");
        } else {
            if !workers.iter().any(|(a, _)| *a == step.attempt) {
                let mut child = Command::new(&exe)
                    .args(["worker", "--exact", "--nocapture", "--test-threads=1", "-q"])
                    .env("REPLAYGROUND_WORKER", &folder)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                let input = child.stdin.take().unwrap();
                let output = BufReader::new(child.stdout.take().unwrap());
                workers.push((step.attempt, Worker { child, input, output }));
            }
            let worker = &mut workers.iter_mut().find(|(a, _)| *a == step.attempt).unwrap().1;
            let actual = worker.ask(&i.to_string());
            compared += 1;
            if actual == step.expected {
                println!("{label}  {actual}  (as in the playground)");
            } else {
                differences += 1;
                println!("{label}  {actual}  DIFFERS: the playground showed {}", step.expected);
            }
        }
        if step.ends {
            if let Some(at) = workers.iter().position(|(a, _)| *a == step.attempt) {
                let (_, mut worker) = workers.remove(at);
                worker.ask("close");
                worker.child.wait().unwrap();
            }
        }
    }
    for (_, mut worker) in workers.drain(..) {
        worker.ask("close");
        worker.child.wait().unwrap();
    }
    println!("committed tables at the end:");
    for (db, table, expected) in TABLES {
        let conn = Connection::open(folder.join(db)).unwrap();
        let actual = run(&conn, &format!("SELECT * FROM \"{table}\" ORDER BY rowid"), &[]);
        compared += 1;
        if actual == *expected {
            println!("  {db} {table}: as in the playground");
        } else {
            differences += 1;
            println!("  {db} {table}: DIFFERS: {actual} here, {expected} in the playground");
        }
    }
    for check in FAILED_CHECKS {
        println!("the playground's check failed: {check}");
    }
    println!("{compared} results compared, {differences} different");
    std::fs::remove_dir_all(&folder).ok();
    assert_eq!(differences, 0, "the run on real SQLite differs from the playground's");
}
