//! A run taken home: a standalone Python script that replays it on real
//! SQLite files, one process per attempt, and compares every step's result
//! with the playground's.

use serde_json::{json, Value};

use crate::sim::explore::Explorer;
use crate::sim::{Progress, Schedule, SqlResult};
use crate::storage::SqlValue;
use crate::{Error, Result};

/// The script, with `__RUN__` where the run goes.
const PYTHON: &str = include_str!("reproduce.py");

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
pub fn numbered(sql: &str) -> String {
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
    let run = explorer.replay(schedule, true)?;
    let trace = run
        .trace
        .as_ref()
        .ok_or_else(|| Error::Store("the replay recorded no trace".into()))?;
    let databases: Vec<Value> = explorer
        .initial_files()?
        .iter()
        .map(|(name, bytes, _)| json!({ "name": name, "hex": hex(bytes) }))
        .collect();
    let pragmas: serde_json::Map<String, Value> = explorer
        .initial_files()?
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
            let (ends, crash) = match &report.progress {
                Progress::Finished { outcome } => (true, outcome.kind == "crashed" && report.sql.is_none()),
                Progress::Failed { .. } => (true, false),
                _ => (false, false),
            };
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
    let text = serde_json::to_string(&data).map_err(|e| Error::Store(e.to_string()))?;
    let literal = serde_json::to_string(&text).map_err(|e| Error::Store(e.to_string()))?;
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
