//! A run taken home: a standalone Python script, or a Rust test using
//! rusqlite, that replays it on real SQLite files, one process per attempt,
//! and compares every step's result with the playground's.

mod repr;

use repr::{repr_rows, V};

use serde_json::{json, Value};

use crate::sim::search::Explorer;
use crate::sim::{Progress, Schedule, SqlResult};
use crate::storage::SqlValue;
use crate::{Error, Result};

/// The script, with `__RUN__` where the run goes.
const PYTHON: &str = include_str!("reproduce.py");
/// The Rust test, with `__NAME__` placeholders.
const RUST: &str = include_str!("reproduce.rs");
/// The results' words, shared by both sides of a Rust reproduction.
const REPR: &str = include_str!("repr.rs");

/// Whether a step ends its attempt, and whether it kills its process.
fn ends_and_kill(report: &crate::sim::StepReport) -> (bool, bool) {
    match &report.progress {
        Progress::Finished { outcome } => (true, outcome.is_crash() && report.sql.is_none()),
        Progress::Failed { .. } => (true, false),
        _ => (false, false),
    }
}

fn v_of(value: &SqlValue) -> V<'_> {
    match value {
        SqlValue::Null => V::N,
        SqlValue::Integer(i) => V::I(*i),
        SqlValue::Real(f) => V::R(*f),
        SqlValue::Text(t) => V::T(t),
        SqlValue::Blob(b) => V::B(b),
    }
}

fn words_of_rows(rows: &[Vec<SqlValue>]) -> String {
    let rows: Vec<Vec<V<'_>>> = rows.iter().map(|r| r.iter().map(v_of).collect()).collect();
    repr_rows(&rows)
}

/// The replay of `schedule`, recorded: its result and its trace.
fn recorded(
    explorer: &Explorer,
    schedule: &Schedule,
) -> Result<(crate::sim::search::RunResult, Vec<crate::sim::TraceStep>)> {
    match explorer.machine_fault() {
        Some("power-loss") => return Err(Error::Refused(format!(
            "scenario {} cuts a machine's power, which a script on real files cannot do: the operating system would keep what SQLite did not sync, and only a real power cut loses it. The playground derives what a power loss leaves from the syncs SQLite makes, which its differential tests compare with real SQLite files",
            explorer.scenario_id()
        ))),
        Some("crash-at-sync") => return Err(Error::Refused(format!(
            "scenario {} kills a process inside a statement, at one of its syncs, which a script on real files cannot do: a script can kill a process only between the statements it sends",
            explorer.scenario_id()
        ))),
        Some(fault) => return Err(Error::Refused(format!(
            "scenario {} injects an I/O fault ({fault}), which a script on real files cannot do where the playground does: it would need a disk that fills up, or a write or sync that fails, at that very call",
            explorer.scenario_id()
        ))),
        None => {}
    }
    let mut run = explorer.replay(schedule, true)?;
    let trace = run
        .trace
        .take()
        .ok_or_else(|| Error::Defect("the replay recorded no trace".into()))?;
    if trace.last().is_some_and(|step| step.tables_left_out) {
        return Err(Error::invalid(
            "schedule",
            format!(
                "its run's tables outgrew what a trace may keep ({} MiB), so the tables at its end, which the reproduction compares, are not known",
                crate::sim::BUDGETS.trace_bytes >> 20
            ),
        ));
    }
    Ok((run, trace))
}

/// A value as a Rust literal of the reproduction's `P`.
fn rust_param(value: &SqlValue) -> String {
    match value {
        SqlValue::Null => "P::N".into(),
        SqlValue::Integer(i) => format!("P::I({i})"),
        SqlValue::Real(f) if f.is_finite() => format!("P::R({f:?})"),
        SqlValue::Real(f) if *f > 0.0 => "P::R(f64::INFINITY)".into(),
        SqlValue::Real(_) => "P::R(f64::NEG_INFINITY)".into(),
        SqlValue::Text(t) => format!("P::T({t:?})"),
        SqlValue::Blob(b) => format!("P::B(&{b:?})"),
    }
}

/// The Rust test that replays `schedule` of the explorer's scenario on real
/// SQLite files with rusqlite, one process per attempt.
pub fn rust(explorer: &Explorer, schedule: &Schedule) -> Result<String> {
    let (run, trace) = recorded(explorer, schedule)?;
    let databases: Vec<String> = explorer
        .initial_files()?
        .iter()
        .map(|(name, bytes, pragmas)| format!("({name:?}, {:?}, {pragmas:?})", hex(bytes)))
        .collect();
    let steps: Vec<String> = trace
        .iter()
        .map(|step| {
            let report = &step.report;
            let expected = match &report.result {
                SqlResult::Rows { rows, .. } => words_of_rows(rows),
                SqlResult::Busy => "busy".into(),
                SqlResult::Error { .. } => "error".into(),
                SqlResult::None => "none".into(),
            };
            let (ends, kill) = ends_and_kill(report);
            let params: Vec<String> = report.params.iter().map(rust_param).collect();
            format!(
                "    Step {{ attempt: {:?}, name: {:?}, sql: {:?}, database: {:?}, params: &[{}], expected: {:?}, ends: {ends}, kill: {kill} }},",
                step.label,
                report.name,
                report.sql.as_deref().map(numbered),
                report.database.as_deref().unwrap_or_default(),
                params.join(", "),
                expected,
            )
        })
        .collect();
    let tables: Vec<String> = trace
        .last()
        .map(|step| {
            step.tables
                .iter()
                .flat_map(|(db, tables)| {
                    tables.iter().map(move |(name, table)| {
                        format!("({db:?}, {name:?}, {:?})", words_of_rows(&table.rows))
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let failed: Vec<String> = run
        .checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| {
            format!(
                "{:?}",
                format!("{}: expected {}, got {}", c.name, c.expected, c.actual)
            )
        })
        .collect();
    let list = |items: &[String], indent: bool| {
        if indent {
            format!("&[\n{}\n]", items.join("\n"))
        } else {
            format!("&[{}]", items.join(", "))
        }
    };
    let repr = REPR
        .lines()
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    Ok(RUST
        .replace("__REPR__", &repr)
        .replace("__SCENARIO_LITERAL__", &format!("{:?}", run.scenario))
        .replace("__SCHEDULE_LITERAL__", &format!("{:?}", run.schedule))
        .replace("__SCENARIO__", &run.scenario)
        .replace("__SCHEDULE__", &run.schedule)
        .replace("__DATABASES__", &list(&databases, false))
        .replace("__STEPS__", &list(&steps, true))
        .replace("__TABLES__", &list(&tables, false))
        .replace("__FAILED__", &list(&failed, false)))
}

/// A value as the script reads it: blobs as `{ "blob": HEX }`.
fn value(v: &SqlValue) -> Value {
    match v {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => json!(i),
        SqlValue::Real(f) => json!(f),
        SqlValue::Text(t) => json!(t),
        SqlValue::Blob(b) => json!({ "blob": hex(b) }),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `sql` with each named parameter (`:name`, `@name`, `$name`) written as
/// `?N`, numbered as SQLite numbers them (by first appearance), so that
/// Python binds the values in the order the playground bound them. String
/// literals, quoted names and comments are left alone.
pub(crate) fn numbered(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut names: Vec<&str> = Vec::new();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    while i < bytes.len() {
        let c = bytes[i];
        let skip_to = match c {
            b'\'' | b'"' | b'`' => {
                let close = c;
                let mut j = i + 1;
                while j < bytes.len() {
                    if bytes[j] == close {
                        if bytes.get(j + 1) == Some(&close) {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                Some((j + 1).min(bytes.len()))
            }
            b'[' => Some(sql[i..].find(']').map_or(bytes.len(), |k| i + k + 1)),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                Some(sql[i..].find('\n').map_or(bytes.len(), |k| i + k))
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => Some(
                sql[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |k| i + 2 + k + 2),
            ),
            b':' | b'@' | b'$' if bytes.get(i + 1).is_some_and(|&n| ident(n)) => {
                let mut j = i + 1;
                while j < bytes.len() && ident(bytes[j]) {
                    j += 1;
                }
                let name = &sql[i + 1..j];
                let n = match names.iter().position(|k| *k == name) {
                    Some(k) => k + 1,
                    None => {
                        names.push(name);
                        names.len()
                    }
                };
                out.push_str(&format!("?{n}"));
                i = j;
                continue;
            }
            _ => None,
        };
        match skip_to {
            Some(end) => {
                out.push_str(&sql[i..end]);
                i = end;
            }
            None => {
                let len = sql[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&sql[i..i + len]);
                i += len;
            }
        }
    }
    out
}

/// The script that replays `schedule` of the explorer's scenario on real
/// SQLite files with Python's `sqlite3`.
pub fn python(explorer: &Explorer, schedule: &Schedule) -> Result<String> {
    let (run, trace) = recorded(explorer, schedule)?;
    let files = explorer.initial_files()?;
    let databases: Vec<Value> = files
        .iter()
        .map(|(name, bytes, _)| json!({ "name": name, "hex": hex(bytes) }))
        .collect();
    let pragmas: serde_json::Map<String, Value> = files
        .into_iter()
        .map(|(name, _, pragmas)| (name, json!(pragmas)))
        .collect();
    let steps: Vec<Value> = trace
        .iter()
        .map(|step| {
            let report = &step.report;
            let expected = match &report.result {
                SqlResult::None => json!({ "kind": "none" }),
                SqlResult::Rows { rows, changes, .. } => json!({
                    "kind": "rows",
                    "rows": rows.iter().map(|r| r.iter().map(value).collect::<Vec<_>>()).collect::<Vec<_>>(),
                    "changes": changes,
                }),
                SqlResult::Busy => json!({ "kind": "busy" }),
                SqlResult::Error { message, .. } => json!({ "kind": "error", "message": message }),
            };
            let (ends, crash) = ends_and_kill(report);
            json!({
                "index": step.index,
                "attempt": step.label,
                "name": report.name,
                "sql": report.sql.as_deref().map(numbered),
                "database": report.database,
                "params": report.params.iter().map(value).collect::<Vec<_>>(),
                "expected": expected,
                "ends": ends,
                "action": if crash { json!("crash") } else { Value::Null },
            })
        })
        .collect();
    // The committed tables after the last step, as the script reads values.
    let tables: serde_json::Map<String, Value> = trace
        .last()
        .map(|step| {
            step.tables
                .iter()
                .map(|(db, tables)| {
                    let tables: serde_json::Map<String, Value> = tables
                        .iter()
                        .map(|(name, table)| {
                            let rows: Vec<Vec<Value>> = table
                                .rows
                                .iter()
                                .map(|r| r.iter().map(value).collect())
                                .collect();
                            (name.clone(), json!({ "rows": rows }))
                        })
                        .collect();
                    (db.clone(), Value::Object(tables))
                })
                .collect()
        })
        .unwrap_or_default();
    let data = json!({
        "scenario": run.scenario,
        "params": run.params,
        "schedule": run.schedule,
        "databases": databases,
        "pragmas": pragmas,
        "steps": steps,
        "tables": tables,
        "checks": run.checks,
        "passed": run.passed,
    });
    // The run as a Python string literal: JSON's string escapes are Python's.
    let text = serde_json::to_string(&data)?;
    let literal = serde_json::to_string(&text)?;
    Ok(PYTHON.replacen("__RUN__", &literal, 1))
}

#[cfg(test)]
mod tests {
    use super::numbered;

    #[test]
    fn named_parameters_are_numbered_as_sqlite_numbers_them() {
        assert_eq!(
            numbered("SELECT :a, :b, :a FROM t WHERE x = ':a' -- :c\n AND y = @b"),
            "SELECT ?1, ?2, ?1 FROM t WHERE x = ':a' -- :c\n AND y = ?2"
        );
        assert_eq!(
            numbered("SELECT \"odd:name\", [x:y], /* :z */ $w"),
            "SELECT \"odd:name\", [x:y], /* :z */ ?1"
        );
        assert_eq!(numbered("SELECT 'it''s :x', :é"), "SELECT 'it''s :x', ?1");
    }
}
