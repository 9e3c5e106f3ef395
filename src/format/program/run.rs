//! A compiled file as the engine's [`Scenario`]: its databases set up, its
//! attempts started, its checks and invariants judged; and every statement
//! it can run, for the SQL check.

use std::rc::Rc;

use serde_json::{Map, Value};

use super::super::file::CheckSpec;
use super::super::limits::{MAX_STATEMENT_INSTRUCTIONS, MAX_VALUE_BYTES};
use super::super::sql::Statement;
use super::attempt::ProgramAttempt;
use super::clock::ClockAttempt;
use super::ir::{bad, explain, fill, param_value, sql_json, words_of, InstanceKind, StepKind};
use super::FileScenario;
use crate::engines::{Engine, Opening};
use crate::params::quote;
use crate::sim::{Attempt, Check, Declared, Ended, Scenario};
use crate::storage::with_budget;
use crate::storage::{Death, EngineOptions, SqlValue, Synchronous};
use crate::Result;

impl FileScenario {
    /// Every step of every attempt's program.
    fn steps(&self) -> impl Iterator<Item = &super::ir::Step> {
        self.instances
            .iter()
            .flat_map(|instance| match &instance.kind {
                InstanceKind::Program(steps) => &steps[..],
                InstanceKind::Clock { .. } => &[],
            })
    }
}

impl Scenario for FileScenario {
    fn id(&self) -> &str {
        self.file.id()
    }

    fn declared(&self) -> Option<Declared> {
        let declared = self.file.declared_params().ok()?;
        self.params
            .changed(&declared)
            .is_empty()
            .then_some(if self.file.fails {
                Declared::Fails
            } else {
                Declared::Holds
            })
    }

    fn params(&self) -> Map<String, Value> {
        self.params.values().clone()
    }

    fn options(&self) -> EngineOptions {
        self.options
    }

    fn setup(&self, engine: &dyn Engine) -> Result<()> {
        for (i, (name, database)) in self.file.databases.iter().enumerate() {
            let conn = engine.create(self.files[i], self.options, MAX_VALUE_BYTES)?;
            with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                conn.execute_batch(&database.schema)
            })
            .map_err(|e| {
                bad(format!(
                    "the schema of database {name} failed: {}",
                    explain(&e)
                ))
            })?;
            with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
                conn.execute_batch(&database.seed)
            })
            .map_err(|e| {
                bad(format!(
                    "the seed of database {name} failed: {}",
                    explain(&e)
                ))
            })?;
        }
        for prior in &self.file.before {
            let scenario = prior.build()?;
            crate::sim::run_in_order(&scenario, engine)?;
        }
        Ok(())
    }

    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>> {
        Ok(self
            .instances
            .iter()
            .map(|instance| -> Box<dyn Attempt> {
                match instance.kind {
                    InstanceKind::Clock { .. } => Box::new(ClockAttempt {
                        instance: Rc::clone(instance),
                    }),
                    InstanceKind::Program(_) => Box::new(ProgramAttempt::new(Rc::clone(instance))),
                }
            })
            .collect())
    }

    fn databases(&self) -> Vec<&'static str> {
        self.files.to_vec()
    }

    fn pragmas(&self, db: &str) -> String {
        let own = self
            .files
            .iter()
            .position(|f| *f == db)
            .map(|i| self.pragmas[i].clone())
            .unwrap_or_default();
        // The engine sets `synchronous` on every connection (unless it is
        // SQLite's default): a reproduction on real files does too.
        match self.options.synchronous {
            level if level == Synchronous::default() => own,
            level if own.trim().is_empty() => format!("{};", level.pragma()),
            level => format!("{};\n{own}", level.pragma()),
        }
    }

    fn keeps_durability(&self) -> bool {
        self.steps().any(|step| {
            matches!(step.kind, StepKind::PowerLoss(..))
                || matches!(step.dies_at_sync, Some((_, Death::Power(_))))
        })
    }

    fn machine_fault(&self) -> Option<&'static str> {
        self.steps()
            .find_map(|step| match (&step.kind, &step.dies_at_sync) {
                (StepKind::PowerLoss(..), _) | (_, Some((_, Death::Power(_)))) => {
                    Some("power-loss")
                }
                (_, Some((_, Death::Process))) => Some("crash-at-sync"),
                (StepKind::DiskFull(..), _) => Some("disk-full"),
                (StepKind::IoError(..), _) => Some("io-error"),
                _ => None,
            })
    }

    fn has_invariants(&self) -> bool {
        !self.file.invariants.is_empty()
    }

    fn observes_end_of(&self, attempt: usize) -> bool {
        let Some(instance) = self.instances.get(attempt) else {
            return false;
        };
        self.file
            .checks
            .iter()
            .zip(&self.checks_on)
            .any(|(spec, on)| {
                *on && spec.after.as_deref().is_some_and(|label| {
                    // The first attempt the label or role names, as the checks find it.
                    self.instances
                        .iter()
                        .position(|i| i.label == label || i.role.as_deref() == Some(label))
                        .is_some_and(|i| std::ptr::eq(&self.instances[i], instance))
                })
            })
    }

    fn invariants(&self, committed: &dyn Engine) -> Result<Vec<Check>> {
        self.file
            .invariants
            .iter()
            .map(|spec| self.sql_check(spec, committed, None))
            .collect()
    }

    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>> {
        let mut checks = Vec::new();
        let params = self.params.values();
        let index_of = |label: &str| -> Option<usize> {
            self.instances
                .iter()
                .position(|i| i.label == label || i.role.as_deref() == Some(label))
        };
        for (spec, on) in self.file.checks.iter().zip(&self.checks_on) {
            if !on {
                continue;
            }
            let name = fill(&spec.name, &|n| {
                param_value(params, n).map(|v| words_of(&v))
            });
            if spec.sql.is_some() || spec.query.is_some() {
                let check = match &spec.after {
                    Some(label) => {
                        let at = index_of(label)
                            .map(|i| ended.store_at_end_of(i))
                            .transpose()?
                            .flatten();
                        match at {
                            Some(store) => self.sql_check(spec, store.as_ref(), Some(ended))?,
                            None => Check::equal(
                                &name,
                                show(&expected_rows(spec.expect.as_ref())),
                                "never",
                            ),
                        }
                    }
                    None => self.sql_check(spec, ended.committed, Some(ended))?,
                };
                checks.push(Check { name, ..check });
            } else if let Some(label) = &spec.attempt {
                let index = index_of(label).unwrap_or(usize::MAX);
                if let Some(outcome) = &spec.outcome {
                    checks.push(Check::equal(&name, outcome, ended.kind(index)));
                }
                if let Some(result) = &spec.result {
                    // `{result_X}` is attempt X's result: "B replays A's".
                    let expected = fill(result, &|n| match n.strip_prefix("result_") {
                        Some(label) => Some(
                            index_of(label)
                                .and_then(|i| ended.result(i))
                                .unwrap_or("none")
                                .to_string(),
                        ),
                        None => param_value(params, n).map(|v| words_of(&v)),
                    });
                    let name = if spec.outcome.is_some() {
                        format!("{name}: result")
                    } else {
                        name.clone()
                    };
                    checks.push(Check::equal(
                        &name,
                        expected,
                        ended.result(index).unwrap_or("none"),
                    ));
                }
            } else if let Some(outcome) = &spec.outcome {
                let expected = match &spec.count {
                    Some(toml::Value::Integer(n)) => *n,
                    Some(toml::Value::String(text)) => {
                        let (param, offset) =
                            super::super::file::count_expression(text).unwrap_or((text, 0));
                        self.whole_param(param)? + offset
                    }
                    _ => 0,
                };
                let actual = (0..ended.statuses.len())
                    .filter(|&i| ended.outcome(i).is_some_and(|o| &o.kind == outcome))
                    .count();
                checks.push(Check::equal(&name, expected, actual));
            } else if let Some(kinds) = &spec.same_result {
                let results: Vec<Option<&str>> = (0..ended.statuses.len())
                    .filter_map(|i| ended.outcome(i))
                    .filter(|o| kinds.contains(&o.kind))
                    .map(|o| o.result.as_deref())
                    .collect();
                let same = !results.is_empty() && results.iter().all(|r| *r == results[0]);
                checks.push(Check::equal(&name, true, same));
            }
        }
        Ok(checks)
    }
}

impl FileScenario {
    /// Every statement the scenario can run: each database's pragmas, each
    /// attempt's steps (present for it or not: `when` decides per attempt),
    /// the checks (those that apply and those that do not) and their named
    /// queries, the invariants.
    pub(in crate::format) fn statements(&self) -> Vec<Statement> {
        let mut out = Vec::new();
        for (db, (name, database)) in self.file.databases.iter().enumerate() {
            if !database.pragmas.trim().is_empty() {
                out.push(Statement {
                    what: format!("the pragmas of database {name}"),
                    db,
                    sql: database.pragmas.clone(),
                    step: false,
                    pragmas: true,
                    near: Some(name.clone()),
                });
            }
        }
        for instance in &self.instances {
            let InstanceKind::Program(steps) = &instance.kind else {
                continue;
            };
            for step in steps.iter() {
                if let StepKind::Sql(sql) = &step.kind {
                    out.push(Statement {
                        what: format!("step {} of attempt {}", quote(&step.name), instance.label),
                        db: step.db,
                        sql: sql.clone(),
                        step: true,
                        pragmas: false,
                        near: Some(step.name.clone()),
                    });
                }
            }
        }
        let checks = self.file.checks.iter().map(|c| ("check", c));
        let invariants = self.file.invariants.iter().map(|c| ("invariant", c));
        for (kind, spec) in checks.chain(invariants) {
            let sql = match (&spec.sql, &spec.query) {
                (Some(sql), _) => sql.clone(),
                (None, Some(query)) => match self.file.queries.get(query) {
                    Some(sql) => sql.clone(),
                    None => continue,
                },
                (None, None) => continue,
            };
            // A named query's mistake is the query's, wherever it is used.
            let what = match &spec.query {
                Some(query) => format!("query {} (of {kind} {})", quote(query), quote(&spec.name)),
                None => format!("{kind} {}", quote(&spec.name)),
            };
            out.push(Statement {
                what,
                db: self.db_index(spec.database.as_ref()),
                sql,
                step: false,
                pragmas: false,
                near: Some(spec.query.clone().unwrap_or_else(|| spec.name.clone())),
            });
        }
        out
    }

    /// The SQL statements SQLite cannot prepare, located in `source` (see
    /// [`super::super::sql`]).
    pub(in crate::format) fn sql_mistakes(
        &self,
        source: &str,
    ) -> Result<Vec<super::super::sql::SqlMistake>> {
        super::super::sql::mistakes(
            &self.statements(),
            &self.files,
            |store| self.setup(store),
            source,
        )
    }
}

impl FileScenario {
    /// An SQL check: its query on `committed` against its `expect`; with
    /// `ended`, `:outcome_X` and `:result_X` bind attempt X's outcome and result.
    pub(super) fn sql_check(
        &self,
        spec: &CheckSpec,
        committed: &dyn Engine,
        ended: Option<&Ended<'_>>,
    ) -> Result<Check> {
        let sql = match &spec.query {
            Some(name) => self.file.queries.get(name).map_or("", String::as_str),
            None => spec.sql.as_deref().unwrap_or_default(),
        };
        let db = self.db_index(spec.database.as_ref());
        let conn = committed.open(&Opening::reader(self.files[db], MAX_VALUE_BYTES))?;
        let bind = |name: &str| {
            if let Some(ended) = ended {
                let attempt = |label: &str| self.instances.iter().position(|i| i.label == label);
                if let Some(label) = name.strip_prefix("outcome_") {
                    return attempt(label).map(|i| SqlValue::Text(ended.kind(i)));
                }
                if let Some(label) = name.strip_prefix("result_") {
                    return attempt(label).map(|i| {
                        ended
                            .result(i)
                            .map_or(SqlValue::Null, |r| SqlValue::Text(r.to_string()))
                    });
                }
            }
            param_value(self.params.values(), name)
        };
        let actual = match with_budget(MAX_STATEMENT_INSTRUCTIONS, || {
            conn.execute_named_bound(sql, &bind).1
        }) {
            Ok(rows) => Value::from(
                rows.rows
                    .iter()
                    .map(|r| Value::from(r.iter().map(sql_json).collect::<Vec<_>>()))
                    .collect::<Vec<_>>(),
            ),
            Err(e) => Value::from(format!("error: {}", explain(&e))),
        };
        let expected = expected_rows(spec.expect.as_ref());
        Ok(Check::equal(&spec.name, show(&expected), show(&actual)))
    }
}

/// A TOML `expect` as rows: a value is one row of one column, an array of
/// arrays is rows, an array of values is one row.
pub(super) fn expected_rows(expect: Option<&toml::Value>) -> Value {
    let scalar = |v: &toml::Value| match v {
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::from(i64::from(*b)),
        toml::Value::String(s) if s == "NULL" => Value::Null,
        toml::Value::String(s) => Value::from(s.as_str()),
        other => Value::from(format!("{other:?}")),
    };
    match expect {
        None => Value::Null,
        Some(toml::Value::Array(items)) if items.iter().all(|i| i.is_array()) => Value::from(
            items
                .iter()
                .map(|row| {
                    Value::from(
                        row.as_array()
                            .map(|r| r.iter().map(scalar).collect::<Vec<_>>())
                            .unwrap_or_default(),
                    )
                })
                .collect::<Vec<_>>(),
        ),
        Some(toml::Value::Array(items)) => Value::from(vec![Value::from(
            items.iter().map(scalar).collect::<Vec<_>>(),
        )]),
        Some(value) => Value::from(vec![Value::from(vec![scalar(value)])]),
    }
}

/// Rows for people: `2` or `(1, 1)` for one value, JSON otherwise.
pub(super) fn show(rows: &Value) -> String {
    match rows.as_array().map(Vec::as_slice) {
        Some([row]) => match row.as_array().map(Vec::as_slice) {
            Some([Value::String(text)]) => text.clone(),
            Some([one]) => one.to_string(),
            _ => row.to_string(),
        },
        _ => rows.to_string(),
    }
}

impl super::super::file::Before {
    /// The scenario, built with its defaults.
    pub(crate) fn build(&self) -> Result<FileScenario> {
        let file = self
            .found
            .and_then(|sources| sources.scenario(&self.id))
            .ok_or_else(|| {
                crate::Error::invalid(
                    "scenario",
                    format!(
                        "before names {}, which is not a built-in scenario",
                        quote(&self.id)
                    ),
                )
            })?;
        let params = crate::params::Params::defaults(&file.declared_params()?);
        FileScenario::new(file, params)
    }
}
