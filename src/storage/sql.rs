//! The values SQLite stores and returns ([`SqlValue`]), and one SQL
//! statement run to completion on a connection, its rows collected
//! ([`run_sql`], [`run_sql_named`]) and charged to the run's budget of bytes.

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ToSql};
use serde::{Deserialize, Serialize};

use super::bounds::charge_bytes;
use crate::{Error, Result};

/// A value SQLite stores or returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SqlValue {
    /// SQL NULL.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A 64-bit float.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl SqlValue {
    /// About how many bytes it takes: its text or bytes, and the value.
    pub fn size(&self) -> usize {
        std::mem::size_of::<SqlValue>()
            + match self {
                SqlValue::Text(t) => t.len(),
                SqlValue::Blob(b) => b.len(),
                _ => 0,
            }
    }
}

impl From<ValueRef<'_>> for SqlValue {
    fn from(value: ValueRef<'_>) -> Self {
        match value {
            ValueRef::Null => SqlValue::Null,
            ValueRef::Integer(i) => SqlValue::Integer(i),
            ValueRef::Real(f) => SqlValue::Real(f),
            ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
        }
    }
}

impl From<&str> for SqlValue {
    fn from(text: &str) -> Self {
        SqlValue::Text(text.to_string())
    }
}

impl From<i64> for SqlValue {
    fn from(i: i64) -> Self {
        SqlValue::Integer(i)
    }
}

impl ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            SqlValue::Null => ToSqlOutput::Owned(Value::Null),
            SqlValue::Integer(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            SqlValue::Real(f) => ToSqlOutput::Owned(Value::Real(*f)),
            SqlValue::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            SqlValue::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

/// What one SQL statement returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rows {
    /// Column names of the result (empty for statements without a result).
    pub columns: Vec<String>,
    /// The result rows.
    pub rows: Vec<Vec<SqlValue>>,
    /// Rows inserted, updated or deleted (0 for read-only statements).
    pub changes: u64,
    /// The connection's last inserted rowid after the statement.
    pub last_insert_rowid: i64,
}

/// Runs one SQL statement to completion on `connection` and collects its rows.
///
/// Exactly one statement: a second one after `;` is an error, so that a step
/// is always one statement.
pub fn run_sql(connection: &Connection, sql: &str, params: &[SqlValue]) -> Result<Rows> {
    let mut statement = connection.prepare_cached(sql)?;
    collect_rows(connection, &mut statement, params)
}

/// Runs a prepared statement with `params` and collects its rows.
fn collect_rows(
    connection: &Connection,
    statement: &mut rusqlite::CachedStatement<'_>,
    params: &[SqlValue],
) -> Result<Rows> {
    let columns: Vec<String> = statement.column_names().map(String::from).collect();
    // `changes()` keeps the count of the connection's last INSERT, UPDATE
    // or DELETE: a statement that changed nothing (a SELECT, BEGIN, COMMIT)
    // must not report it, as the total tells.
    let total_before = connection.total_changes();
    let mut rows = Vec::new();
    {
        let mut cursor = statement.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = cursor.next()? {
            // Each value's bytes are charged to the run before it is copied.
            let mut size = 0;
            for i in 0..columns.len() {
                size += match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        t.len()
                    }
                    _ => 0,
                } + std::mem::size_of::<SqlValue>();
            }
            if !charge_bytes(size) {
                return Err(Error::OverBudget(
                    "the rows it returned would exceed the run's budget of bytes".into(),
                ));
            }
            let values = (0..columns.len())
                .map(|i| row.get_ref(i).map(SqlValue::from))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.push(values);
        }
    }
    Ok(Rows {
        columns,
        rows,
        changes: if connection.total_changes() == total_before {
            0
        } else {
            connection.changes()
        },
        last_insert_rowid: connection.last_insert_rowid(),
    })
}

/// Runs one SQL statement whose parameters are named (`:name`, `@name`,
/// `$name`), each bound through `bind`; returns the rows and the values
/// bound, in order. A name `bind` does not know is an error that names it.
pub(crate) fn run_sql_named(
    connection: &Connection,
    sql: &str,
    bind: &dyn Fn(&str) -> Option<SqlValue>,
) -> Result<(Rows, Vec<SqlValue>)> {
    let (values, rows) = run_sql_named_bound(connection, sql, bind);
    Ok((rows?, values))
}

/// As [`run_sql_named`], keeping the values bound when the statement then
/// fails (a BUSY statement was bound before SQLite refused it).
pub(crate) fn run_sql_named_bound(
    connection: &Connection,
    sql: &str,
    bind: &dyn Fn(&str) -> Option<SqlValue>,
) -> (Vec<SqlValue>, Result<Rows>) {
    let mut values = Vec::new();
    let rows = bind_and_run(connection, sql, bind, &mut values);
    (values, rows)
}

fn bind_and_run(
    connection: &Connection,
    sql: &str,
    bind: &dyn Fn(&str) -> Option<SqlValue>,
    values: &mut Vec<SqlValue>,
) -> Result<Rows> {
    let mut statement = connection.prepare_cached(sql)?;
    values.reserve(statement.parameter_count());
    for i in 1..=statement.parameter_count() {
        let name = statement
            .parameter_name(i)
            .map(|n| &n[1..])
            .ok_or_else(|| {
                Error::invalid(
                    "sql",
                    format!("parameter {i} has no name: write :name, not ?"),
                )
            })?;
        values.push(bind(name).ok_or_else(|| {
            Error::invalid(
                "sql",
                format!(
                    "nothing is called :{name} (no parameter, capture or built-in of that name)"
                ),
            )
        })?);
    }
    collect_rows(connection, &mut statement, values)
}
