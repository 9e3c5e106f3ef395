//! The evaluator of a file's expressions (`let`s, `when`s, `with`s): SQL
//! run on a connection of its own, each result kept for the values it read
//! when the expression can only depend on them.

use std::rc::Rc;

use super::super::limits::{MAX_STATEMENT_INSTRUCTIONS, MAX_VALUE_BYTES};
use super::ir::{bad, explain, reads, words_of};
use crate::params::quote;
use crate::storage::with_budget;
use crate::storage::{Conn, SqlValue, Store};
use crate::Result;

/// Evaluates static SQL expressions (`when`, `until`) on a private store.
pub(super) struct Evaluator {
    pub(super) _store: Store,
    pub(super) conn: Conn,
    /// What is known of each expression evaluated: the names it reads and,
    /// for one that can only depend on them (see [`Evaluator::pure`]), its
    /// latest results by their values.
    pub(super) known:
        std::cell::RefCell<std::collections::HashMap<String, Known, foldhash::fast::FixedState>>,
}

/// What the evaluator keeps of one expression.
pub(super) struct Known {
    /// Whether its value depends only on the values it reads.
    pub(super) pure: bool,
    /// The names it reads, each once.
    pub(super) reads: Vec<String>,
    /// Its latest results (oldest first), each with the values it read.
    pub(super) results: Vec<(Vec<Option<SqlValue>>, SqlValue)>,
}

/// How many expressions an evaluator keeps (all are dropped when it is
/// full), the longest expression it keeps, how many results it keeps of
/// each, and the most bytes of text the values of one result may hold.
pub(super) const MAX_KNOWN: usize = 4096;
pub(super) const MAX_KNOWN_EXPRESSION: usize = 1024;
pub(super) const MAX_RESULTS: usize = 16;
pub(super) const MAX_RESULT_KEY: usize = 1024;
/// The most expressions [`Evaluator::warm`] computes in one statement.
pub(super) const MAX_WARM: usize = 64;

/// Whether two values are the same value (a float by its bits: -0.0 is
/// not 0.0 to `printf`).
pub(super) fn same_value(a: &Option<SqlValue>, b: &Option<SqlValue>) -> bool {
    match (a, b) {
        (Some(SqlValue::Real(x)), Some(SqlValue::Real(y))) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

thread_local! {
    /// One evaluator per thread, kept: static expressions only read (a
    /// `SELECT` of an expression changes nothing a later one could see), and
    /// its cached statements make compiling a scenario again cheap (a
    /// session compiles its attempt for every request).
    static EVALUATOR: std::cell::RefCell<Option<Rc<Evaluator>>> = const { std::cell::RefCell::new(None) };
}

impl Evaluator {
    pub(super) fn new() -> Result<Rc<Self>> {
        if let Some(kept) = EVALUATOR.with(|e| e.borrow().clone()) {
            return Ok(kept);
        }
        let store = Store::new("expressions")?;
        let conn = store.connect("expressions.db", "expressions")?;
        conn.bound(MAX_VALUE_BYTES)?;
        let evaluator = Rc::new(Evaluator {
            _store: store,
            conn,
            known: Default::default(),
        });
        EVALUATOR.with(|e| *e.borrow_mut() = Some(Rc::clone(&evaluator)));
        Ok(evaluator)
    }

    /// The values pure `expression` reads, to key its result by, and its
    /// kept result for them (`None` for an expression whose result is not
    /// kept: impure, or too long).
    #[allow(clippy::type_complexity)]
    pub(super) fn lookup(
        &self,
        expression: &str,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Option<(Vec<Option<SqlValue>>, Option<SqlValue>)> {
        if expression.len() > MAX_KNOWN_EXPRESSION {
            return None;
        }
        let mut known = self.known.borrow_mut();
        if !known.contains_key(expression) {
            if known.len() >= MAX_KNOWN {
                known.clear();
            }
            let mut names: Vec<String> = Vec::new();
            reads(expression, |name| {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            });
            known.insert(
                expression.to_string(),
                Known {
                    pure: Self::pure(expression),
                    reads: names,
                    results: Vec::new(),
                },
            );
        }
        let entry = known.get(expression).filter(|k| k.pure)?;
        let key: Vec<Option<SqlValue>> = entry.reads.iter().map(|n| bind(n)).collect();
        let size: usize = key
            .iter()
            .flatten()
            .map(|v| match v {
                SqlValue::Text(t) => t.len(),
                SqlValue::Blob(b) => b.len(),
                _ => 8,
            })
            .sum();
        if size > MAX_RESULT_KEY {
            return None;
        }
        let hit = entry
            .results
            .iter()
            .rev()
            .find(|(values, _)| {
                values.len() == key.len() && values.iter().zip(&key).all(|(a, b)| same_value(a, b))
            })
            .map(|(_, value)| value.clone());
        Some((key, hit))
    }

    /// Keeps `value`, `expression`'s result for the values `key`.
    pub(super) fn keep(&self, expression: &str, key: Vec<Option<SqlValue>>, value: SqlValue) {
        if let Some(entry) = self.known.borrow_mut().get_mut(expression) {
            if entry.results.len() >= MAX_RESULTS {
                entry.results.remove(0);
            }
            entry.results.push((key, value));
        }
    }

    pub(super) fn eval(
        &self,
        expression: &str,
        what: &dyn Fn() -> String,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<SqlValue> {
        let key = match self.lookup(expression, bind) {
            Some((_, Some(value))) => return Ok(value),
            Some((key, None)) => Some(key),
            None => None,
        };
        let sql = format!("SELECT ({expression})");
        match with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
            self.conn.execute_named(&sql, bind)
        }) {
            Ok((rows, _)) => {
                let value = rows
                    .rows
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(SqlValue::Null);
                if let Some(key) = key {
                    self.keep(expression, key, value.clone());
                }
                Ok(value)
            }
            Err(e) => Err(bad(format!(
                "{}: the expression {} failed: {}",
                what(),
                quote(expression),
                explain(&e)
            ))),
        }
    }

    /// Computes the pure `expressions` (all read through `bind`) whose
    /// results for their values are not kept yet in one statement, and keeps
    /// them: a session's request compiles a program of many `when`s that
    /// read its new key. Nothing else changes: an expression that fails
    /// here is left to [`Evaluator::eval`], which says why when it is needed.
    pub(super) fn warm(&self, expressions: &[&str], bind: &dyn Fn(&str) -> Option<SqlValue>) {
        let mut missing: Vec<(&str, Vec<Option<SqlValue>>)> = Vec::new();
        for &expression in expressions {
            if missing.len() >= MAX_WARM || missing.iter().any(|(e, _)| *e == expression) {
                continue;
            }
            if let Some((key, None)) = self.lookup(expression, bind) {
                missing.push((expression, key));
            }
        }
        if missing.len() < 2 {
            return;
        }
        let columns: Vec<String> = missing.iter().map(|(e, _)| format!("({e})")).collect();
        let sql = format!("SELECT {}", columns.join(", "));
        let budget = MAX_STATEMENT_INSTRUCTIONS.saturating_mul(missing.len() as u64);
        let Ok((rows, _)) = with_budget(budget, || self.conn.execute_named(&sql, bind)) else {
            return;
        };
        let Some(row) = rows.rows.into_iter().next() else {
            return;
        };
        if row.len() != missing.len() {
            return;
        }
        for ((expression, key), value) in missing.into_iter().zip(row) {
            self.keep(expression, key, value);
        }
    }

    /// Whether `expression`'s value depends only on the values it reads:
    /// no parenthesis outside its quoted text (no function call, no
    /// subquery) and none of SQL's clock keywords anywhere. Such a result
    /// is kept and not computed again.
    pub(super) fn pure(expression: &str) -> bool {
        let mut quote = None;
        let mut previous = 0;
        for c in expression.bytes() {
            match quote {
                // A doubled quote closes and reopens: the same answer.
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if matches!(c, b'\'' | b'"' | b'`') => quote = Some(c),
                None if c == b'[' => quote = Some(b']'),
                // A comment could hide a quote: not read, not kept.
                None if c == b'('
                    || (previous, c) == (b'-', b'-')
                    || (previous, c) == (b'/', b'*') =>
                {
                    return false
                }
                None => {}
            }
            previous = c;
        }
        !expression
            .as_bytes()
            .windows(8)
            .any(|w| w.eq_ignore_ascii_case(b"CURRENT_"))
    }

    pub(super) fn truth(
        &self,
        expression: &str,
        what: &dyn Fn() -> String,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<bool> {
        Ok(match self.eval(expression, what, bind)? {
            SqlValue::Integer(i) => i != 0,
            SqlValue::Real(f) => f != 0.0,
            SqlValue::Null => false,
            SqlValue::Text(t) => t.parse::<f64>().is_ok_and(|f| f != 0.0),
            SqlValue::Blob(_) => false,
        })
    }

    /// A number: written as one, or an expression over the parameters.
    pub(super) fn number(
        &self,
        value: &toml::Value,
        what: &dyn Fn() -> String,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<i64> {
        match value {
            toml::Value::Integer(i) => Ok(*i),
            toml::Value::String(expression) => match self.eval(expression, what, bind)? {
                SqlValue::Integer(i) => Ok(i),
                other => Err(bad(format!(
                    "{}: {} is {}, not a whole number",
                    what(),
                    quote(expression),
                    words_of(&other)
                ))),
            },
            _ => Err(bad(format!(
                "{}: give a whole number or an expression",
                what()
            ))),
        }
    }
}
