//! Compiling a file with its parameters: every attempt's program fully
//! expanded (`use` inlined, names filled in, `when` decided, every `goto`
//! resolved to a step index).

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::super::file::{ActionSpec, AttemptSpec, File, NoteSpec, StepSpec, MAX_USE_DEPTH};
use super::super::limits::MAX_ATTEMPT_STEPS;
use super::eval::{same_value, Evaluator};
use super::ir::{
    attempt_value, bad, fill, hash_value, leak, noted, param_value, reads, toml_sql, words_of, Act,
    Crash, Handlers, Instance, InstanceKind, Kept, RawStep, SetValue, Step, StepKind, EXPANSIONS,
    MAX_EXPANSIONS,
};
use super::FileScenario;
use crate::params::{quote, Params};
use crate::sim::Schedule;
use crate::storage::SqlValue;
use crate::Result;

impl FileScenario {
    /// The scenario of `file` with `params` (already checked), compiled.
    /// The file is shared, not copied: a built-in is built for every run
    /// session, sweep point and soak scenario.
    pub(crate) fn new(file: Rc<File>, params: Params) -> Result<Self> {
        let options = super::super::file::engine_options(params.values());
        Self::build(file, params, options, None, MAX_ATTEMPT_STEPS)
    }

    /// As [`FileScenario::new`], run with the engine's `options` (handed
    /// over typed, by a sweep) whatever `params` say of them: its
    /// parameters show them.
    pub(crate) fn new_in(
        file: Rc<File>,
        params: &Params,
        options: crate::storage::EngineOptions,
    ) -> Result<Self> {
        let params = super::super::file::showing(params, options);
        Self::build(file, params, options, None, MAX_ATTEMPT_STEPS)
    }

    /// As [`FileScenario::new`], for a file of one attempt labelled `label`
    /// that may take up to `max_steps` steps (run alone).
    pub(crate) fn alone(
        file: Rc<File>,
        params: Params,
        label: &str,
        max_steps: usize,
    ) -> Result<Self> {
        let options = super::super::file::engine_options(params.values());
        Self::build(file, params, options, Some(label.to_string()), max_steps)
    }

    pub(super) fn build(
        file: Rc<File>,
        params: Params,
        options: crate::storage::EngineOptions,
        label: Option<String>,
        max_steps: usize,
    ) -> Result<Self> {
        let names: Vec<&String> = file.databases.keys().collect();
        let files: Rc<[&'static str]> = names
            .iter()
            .map(|name| leak(format!("{name}.db")))
            .collect();
        let pragmas: Rc<[String]> = file.databases.values().map(|d| d.pragmas.clone()).collect();
        // What programs bind by name: the parameters, then the defaults.
        let mut bound = params.values().clone();
        for (name, value) in &file.defaults {
            if bound.contains_key(name) {
                continue;
            }
            let value = match value {
                toml::Value::Integer(i) => Value::from(*i),
                toml::Value::String(s) => Value::from(s.as_str()),
                toml::Value::Boolean(b) => Value::from(i64::from(*b)),
                _ => return Err(bad(format!("defaults.{name} is a whole number or text"))),
            };
            bound.insert(name.clone(), value);
        }
        let shared_params = Rc::new(bound);
        let mut scenario = FileScenario {
            file,
            params,
            options,
            files,
            pragmas,
            instances: Vec::new(),
            checks_on: Vec::new(),
            label,
            max_steps,
        };
        // One private store evaluates every static expression of this build.
        let evaluator = Evaluator::new()?;
        scenario.instances = scenario.compile(&evaluator, &shared_params)?;
        for spec in &scenario.file.checks {
            let on = match &spec.when {
                Some(condition) => evaluator.truth(
                    condition,
                    &|| format!("check {}: when", quote(&spec.name)),
                    &|n| param_value(&shared_params, n),
                )?,
                None => true,
            };
            scenario.checks_on.push(on);
        }
        Ok(scenario)
    }

    /// Attempt `index`'s values (`with`, then `let`).
    pub(crate) fn values_of(&self, index: usize) -> Vec<(String, SqlValue)> {
        self.instances
            .get(index)
            .map(|i| i.values.clone())
            .unwrap_or_default()
    }

    pub(super) fn db_index(&self, name: Option<&String>) -> usize {
        name.and_then(|n| self.file.databases.keys().position(|k| k == n))
            .unwrap_or(0)
    }

    pub(super) fn whole_param(&self, name: &str) -> Result<i64> {
        self.params
            .values()
            .get(name)
            .and_then(Value::as_i64)
            .ok_or_else(|| bad(format!("{name} is not a whole parameter")))
    }

    pub(super) fn replicas(&self, spec: &AttemptSpec) -> Result<usize> {
        Ok(match &spec.replicas {
            None => 1,
            Some(toml::Value::Integer(n)) => *n as usize,
            Some(toml::Value::String(name)) => self.whole_param(name)? as usize,
            Some(_) => 1,
        })
    }

    /// Compiles every attempt.
    pub(super) fn compile(
        &self,
        evaluator: &Evaluator,
        params: &Rc<Map<String, Value>>,
    ) -> Result<Vec<Rc<Instance>>> {
        let file = &self.file;
        // Labels and roles first: `after`, `hold-for` and `wait-while` name them.
        let mut plan: Vec<(usize, String)> = Vec::new();
        for (spec_index, spec) in file.attempts.iter().enumerate() {
            let replicas = self.replicas(spec)?;
            for r in 0..replicas {
                let index = plan.len();
                let label = match (self.label.as_ref().or(spec.label.as_ref()), replicas) {
                    (Some(label), 1) => label.clone(),
                    (Some(label), _) => format!("{label}{}", r + 1),
                    (None, _) => Schedule::letter(index).to_string(),
                };
                plan.push((spec_index, label));
            }
        }
        if plan.len() > super::super::limits::MAX_ATTEMPTS {
            return Err(bad(format!(
                "{} attempts; at most {} can race",
                plan.len(),
                super::super::limits::MAX_ATTEMPTS
            )));
        }
        let named = |name: &str| -> Vec<usize> {
            plan.iter()
                .enumerate()
                .filter(|(_, (spec_index, label))| {
                    label == name || file.attempts[*spec_index].role.as_deref() == Some(name)
                })
                .map(|(i, _)| i)
                .collect()
        };
        // The lets that read no other let, computed together first for each
        // attempt (an event's ids from its suffix, for a session's call).
        let first_lets: Vec<&str> = file
            .lets
            .values()
            .filter(|expression| {
                let mut other_let = false;
                reads(expression, |n| other_let |= file.lets.contains_key(n));
                !other_let
            })
            .map(String::as_str)
            .collect();
        let mut instances = Vec::with_capacity(plan.len());
        for (index, (spec_index, label)) in plan.iter().enumerate() {
            let spec = &file.attempts[*spec_index];
            let what = format!("attempt {label}");
            let param_bind = |name: &str| param_value(params, name);
            let mut values: Vec<(String, SqlValue)> = Vec::new();
            for (name, value) in &spec.with {
                let resolved = match value {
                    toml::Value::String(s) if s.starts_with(':') => param_value(params, &s[1..])
                        .ok_or_else(|| {
                            bad(format!(
                                "{what}: with.{name} names {s}, which is not a parameter"
                            ))
                        })?,
                    other => toml_sql(other)
                        .ok_or_else(|| bad(format!("{what}: with.{name} is a number or text")))?,
                };
                values.push((name.clone(), resolved));
            }
            if spec.clock.is_none() {
                let lookup = |values: &[(String, SqlValue)], n: &str| {
                    attempt_value(values, index, label, params, n)
                };
                evaluator.warm(&first_lets, &|n| lookup(&values, n));
                for (name, expression) in &file.lets {
                    let value =
                        evaluator.eval(expression, &|| format!("{what}: let {name}"), &|n| {
                            lookup(&values, n)
                        })?;
                    values.push((name.clone(), value));
                }
            }
            let after = match &spec.after {
                Some(name) => Some(named(name).into_iter().find(|&i| i < index).ok_or_else(
                    || bad(format!("{what}: no earlier attempt is {}", quote(name))),
                )?),
                None => None,
            };
            let not_before = match &spec.not_before {
                Some(value) => {
                    evaluator
                        .number(value, &|| format!("{what}: not-before"), &|n| param_bind(n))?
                }
                None => i64::MIN,
            };
            let mut class = crate::sim::state_hasher();
            spec_index.hash(&mut class);
            after.hash(&mut class);
            for (name, value) in &values {
                name.hash(&mut class);
                hash_value(value, &mut class);
            }
            let kind = if let Some(clock) = &spec.clock {
                let until = evaluator.number(&clock.until, &|| format!("{what}: until"), &|n| {
                    param_bind(n)
                })?;
                let hold = match (&clock.hold_at, &clock.hold_for) {
                    (Some(at), Some(holder)) => Some((
                        evaluator.number(at, &|| format!("{what}: hold-at"), &|n| param_bind(n))?,
                        *named(holder)
                            .first()
                            .ok_or_else(|| bad(format!("{what}: hold-for names no attempt")))?,
                    )),
                    (None, None) => None,
                    _ => return Err(bad(format!("{what}: give hold-at and hold-for together"))),
                };
                (clock.tick, until, hold).hash(&mut class);
                InstanceKind::Clock {
                    tick: clock.tick,
                    until,
                    hold,
                }
            } else {
                let steps = self.expand(
                    evaluator, spec, index, label, &values, params, &named, &what,
                )?;
                let personal = steps.iter().any(|s| match &s.kind {
                    StepKind::Sql(sql) => sql.contains(":attempt") || sql.contains(":label"),
                    _ => false,
                });
                if personal {
                    index.hash(&mut class);
                }
                InstanceKind::Program(steps)
            };
            let crash = match &spec.crash_after {
                Some(crash) => {
                    let given = match &crash.steps {
                        toml::Value::String(name) => params.get(name).cloned(),
                        toml::Value::Integer(n) => Some(Value::from(*n)),
                        _ => None,
                    };
                    let after = match given.as_ref() {
                        Some(Value::Number(n)) => n.as_u64().map(|n| n as usize),
                        Some(Value::String(s)) if s == "none" => None,
                        Some(Value::String(s)) => Some(s.parse::<usize>().map_err(|_| {
                            bad(format!(
                                "{what}: crash-after: {} is neither a number of steps nor none",
                                quote(s)
                            ))
                        })?),
                        _ => None,
                    };
                    after.map(|after| Crash {
                        after,
                        name: crash.name.clone().unwrap_or_else(|| "crash".into()),
                        result: crash.result.clone(),
                        note: crash.note.clone().unwrap_or_else(|| {
                            "{label}'s process dies here: its locks vanish, and what it committed stays".into()
                        }),
                    })
                }
                None => None,
            };
            crash.as_ref().map(|c| c.after).hash(&mut class);
            let start = match &kind {
                InstanceKind::Program(steps) => first_present(steps, 0),
                InstanceKind::Clock { .. } => 0,
            };
            let local = match &kind {
                InstanceKind::Program(steps) => self.local_use(steps),
                InstanceKind::Clock { .. } => crate::storage::LocalUse::default(),
            };
            instances.push(Rc::new(Instance {
                index,
                label: label.clone(),
                role: spec.role.clone(),
                kind,
                values,
                class: class.finish(),
                after,
                crash,
                not_before,
                start,
                max_steps: self.max_steps,
                params: Rc::clone(params),
                files: Rc::clone(&self.files),
                pragmas: Rc::clone(&self.pragmas),
                options: self.options,
                local,
            }));
        }
        // Whether a connection has read the schema can show in the whole
        // scenario or nowhere (see `LocalUse::schema_state`).
        let schema_state =
            self.file.allow_sql_errors || instances.iter().any(|i| i.local.changes_schema);
        if schema_state {
            for instance in &mut instances {
                Rc::get_mut(instance)
                    .ok_or_else(|| {
                        crate::Error::Defect("an instance shared while compiled".into())
                    })?
                    .local
                    .schema_state = true;
            }
        }
        Ok(instances)
    }

    /// What a program's statements and the schemas' triggers may read of
    /// its connections' own state ([`crate::storage::local_use`]); a
    /// template reading `{rowid}` reads `last_insert_rowid()` through the
    /// statement before it.
    fn local_use(&self, steps: &[Step]) -> crate::storage::LocalUse {
        let schemas = self
            .file
            .databases
            .values()
            .map(|d| crate::storage::LocalUse {
                // Its own tables are the schema, not a change of it.
                changes_schema: false,
                ..crate::storage::local_use(&d.schema)
            });
        let statements = steps.iter().filter_map(|s| match &s.kind {
            StepKind::Sql(sql) => Some(crate::storage::local_use(sql)),
            _ => None,
        });
        let mut local = schemas.chain(statements).fold(
            crate::storage::LocalUse::default(),
            crate::storage::LocalUse::or,
        );
        if steps.iter().any(|s| s.live.iter().any(|n| n == "rowid")) {
            local.reads_rowid = true;
        }
        local
    }

    /// Expands attempt `spec`'s program: `use` inlined, names filled in,
    /// `when` decided, `goto` resolved.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn expand(
        &self,
        evaluator: &Evaluator,
        spec: &AttemptSpec,
        index: usize,
        label: &str,
        values: &[(String, SqlValue)],
        params: &Map<String, Value>,
        named: &dyn Fn(&str) -> Vec<usize>,
        what: &str,
    ) -> Result<Rc<[Step]>> {
        let file = &self.file;
        // What the expansion reads besides the file: the attempt's values,
        // `attempt`, `label` and the parameters.
        let dynamic =
            |name: &str| -> Option<SqlValue> { attempt_value(values, index, label, params, name) };
        // A file of one attempt that the engine builds again and again (a
        // session's requests) reuses an earlier expansion that read the same.
        let spec_at = std::ptr::from_ref(spec) as usize;
        if self.label.is_some() {
            let kept = EXPANSIONS.with(|e| {
                e.borrow()
                    .iter()
                    .rev()
                    .find(|k| {
                        Rc::ptr_eq(&k.file, file)
                            && k.spec == spec_at
                            && k.index == index
                            && k.read.iter().all(|(n, v)| same_value(&dynamic(n), v))
                            && k.asked.iter().all(|(n, answer)| named(n) == *answer)
                    })
                    .map(|k| Rc::clone(&k.steps))
            });
            if let Some(steps) = kept {
                return Ok(steps);
            }
        }
        let read: std::cell::RefCell<Vec<(String, Option<SqlValue>)>> = Default::default();
        let asked: std::cell::RefCell<Vec<(String, Vec<usize>)>> = Default::default();
        let dynamic = |name: &str| noted(&read, name, dynamic(name));
        let named = |name: &str| noted(&asked, name, named(name));
        // Whether a `when` evaluated could give another answer for the same
        // values (it calls a function): such an expansion is not kept.
        let mut impure = false;
        let mut raw: Vec<RawStep<'_>> = Vec::new();
        inline(
            file,
            file.steps_of(spec),
            &[],
            &[],
            None,
            None,
            0,
            &mut raw,
            what,
        )?;
        if raw.len() > super::super::limits::MAX_PROGRAM_STEPS * 4 {
            return Err(bad(format!(
                "{what}: its program expands to {} steps; at most {} are run",
                raw.len(),
                super::super::limits::MAX_PROGRAM_STEPS * 4
            )));
        }
        let default_db = self.db_index(spec.database.as_ref());
        let lookup_static = |with: &[(String, SqlValue)], name: &str| -> Option<SqlValue> {
            match with.iter().find(|(n, _)| n == name) {
                Some((_, value)) => Some(value.clone()),
                None => dynamic(name),
            }
        };
        let words_static = |with: &[(String, SqlValue)], name: &str| -> Option<String> {
            lookup_static(with, name).map(|v| words_of(&v))
        };
        // Names, with every value known before the run filled in.
        let names: Vec<String> = raw
            .iter()
            .map(|r| fill(&r.name, &|n| words_static(&r.with, n)))
            .collect();
        let ids: Vec<Option<String>> = raw
            .iter()
            .map(|r| {
                r.id.as_ref()
                    .map(|id| fill(id, &|n| words_static(&r.with, n)))
            })
            .collect();
        // The `when`s that read the same values, computed together first.
        let mut warmed: Vec<&[(String, SqlValue)]> = Vec::new();
        for r in &raw {
            if warmed.contains(&r.with.as_slice()) {
                continue;
            }
            warmed.push(&r.with);
            let conditions: Vec<&str> = raw
                .iter()
                .filter(|o| o.with == r.with)
                .flat_map(|o| o.conditions.iter().chain(&o.spec.when))
                .map(String::as_str)
                .collect();
            evaluator.warm(&conditions, &|n| lookup_static(&r.with, n));
        }
        let mut present = Vec::with_capacity(raw.len());
        for (r, name) in raw.iter().zip(&names) {
            let mut there = true;
            for condition in r.conditions.iter().chain(&r.spec.when) {
                if !there {
                    break;
                }
                impure |= !Evaluator::pure(condition);
                there = evaluator.truth(
                    condition,
                    &|| format!("{what}, step {}: when", quote(name)),
                    &|n| lookup_static(&r.with, n),
                )?;
            }
            present.push(there);
        }
        let first_present_at =
            |from: usize| -> usize { (from..raw.len()).find(|&i| present[i]).unwrap_or(raw.len()) };
        let target = |r: &RawStep<'_>, goto: &str, step: &str| -> Result<usize> {
            let goto = fill(goto, &|n| words_static(&r.with, n));
            ids.iter()
                .position(|id| id.as_deref() == Some(goto.as_str()))
                .or_else(|| names.iter().position(|n| *n == goto))
                .map(first_present_at)
                .ok_or_else(|| {
                    bad(format!(
                        "{what}, step {}: goes to {}, which is not a step of this attempt",
                        quote(step),
                        quote(&goto)
                    ))
                })
        };
        let resolve =
            |r: &RawStep<'_>, action: &Option<ActionSpec>, step: &str| -> Result<Option<Act>> {
                let Some(action) = action else {
                    return Ok(None);
                };
                Ok(Some(match action {
                    ActionSpec::Word(w) => match w.as_str() {
                        "wait" => Act::Wait,
                        "retry" => Act::Retry,
                        _ => Act::Next,
                    },
                    ActionSpec::Table(t) => {
                        let wait_while: Vec<usize> = match &t.wait_while {
                            // No attempt of that name: nothing to wait for.
                            Some(name) => named(name),
                            None => Vec::new(),
                        };
                        if let Some(goto) = &t.goto {
                            Act::Goto {
                                target: target(r, goto, step)?,
                                back_off: t.back_off,
                                log: t.log.clone(),
                                wait_while,
                            }
                        } else if let Some(kind) = &t.finish {
                            match &r.ret {
                                // Inside a `use`, finishing goes on after it.
                                Some((end, log)) => Act::Goto {
                                    target: first_present_at(*end),
                                    back_off: false,
                                    log: log.as_ref().map(|l| l.replace("{outcome}", kind)),
                                    wait_while,
                                },
                                None => Act::Finish {
                                    kind: kind.clone(),
                                    result: t.result.clone(),
                                    log: t.log.clone(),
                                    wait_while,
                                },
                            }
                        } else if let Some(why) = &t.fail {
                            Act::Fail(why.clone())
                        } else {
                            Act::WaitWhile(wait_while)
                        }
                    }
                }))
            };
        let mut steps = Vec::with_capacity(raw.len());
        for (i, r) in raw.iter().enumerate() {
            let s = r.spec;
            let name = &names[i];
            // The database files of the machine a step names (`databases`).
            let machine_of = |given: &[String]| -> Result<Vec<String>> {
                given
                    .iter()
                    .map(|given| {
                        let filled = fill(given, &|n| words_static(&r.with, n));
                        if self.file.databases.contains_key(&filled) {
                            Ok(format!("{filled}.db"))
                        } else {
                            Err(bad(format!(
                                "{what}, step {}: databases names {}, which is not declared",
                                quote(name),
                                quote(&filled)
                            )))
                        }
                    })
                    .collect()
            };
            // A used program's `database` may be a template (`{sub}`).
            let db = match &s.database {
                None => default_db,
                Some(given) => {
                    let filled = fill(given, &|n| words_static(&r.with, n));
                    self.file
                        .databases
                        .keys()
                        .position(|k| *k == filled)
                        .ok_or_else(|| {
                            bad(format!(
                                "{what}, step {}: database {} is {}, which is not declared",
                                quote(name),
                                quote(given),
                                quote(&filled)
                            ))
                        })?
                }
            };
            let kind = match (&s.sql, s.action.as_deref()) {
                (Some(sql), _) => StepKind::Sql(sql.clone()),
                (None, Some("crash")) => StepKind::Crash,
                (None, Some("lose-reply")) => StepKind::LoseReply,
                (None, Some("fail")) => StepKind::Fail,
                (None, Some(action)) if super::super::file::MACHINE_ACTIONS.contains(&action) => {
                    let machine = machine_of(&s.databases)?;
                    match action {
                        "power-loss" => StepKind::PowerLoss(
                            machine,
                            tearing(s, params, &format!("{what}, step {}", quote(name)))?,
                        ),
                        "disk-full" => StepKind::DiskFull(machine, true),
                        "disk-space" => StepKind::DiskFull(machine, false),
                        _ => StepKind::IoError(
                            machine,
                            s.call
                                .as_deref()
                                .and_then(crate::storage::IoCall::parse)
                                .ok_or_else(|| {
                                    bad(format!(
                                        "{what}, step {}: io-error needs call",
                                        quote(name)
                                    ))
                                })?,
                        ),
                    }
                }
                _ => StepKind::Work,
            };
            let on = &s.on;
            let mut cases = Vec::new();
            for (value, action) in &on.cases {
                if let Some(act) = resolve(r, &Some(action.clone()), name)? {
                    cases.push((value.clone(), act));
                }
            }
            let set = s
                .set
                .iter()
                .map(|(k, v)| {
                    let value = match v {
                        toml::Value::String(t) => SetValue::Template(t.clone()),
                        other => SetValue::Value(toml_sql(other).unwrap_or(SqlValue::Null)),
                    };
                    (k.clone(), value)
                })
                .collect();
            // What the step does not handle, the file's `on` does.
            let fallback = &file.on;
            let (constraint, error) = match (&on.constraint, &on.error) {
                (None, None) => (&fallback.constraint, &fallback.error),
                (constraint, error) => (constraint, error),
            };
            let handlers = Handlers {
                ok: resolve(r, &on.ok, name)?,
                rows: resolve(r, &on.rows, name)?,
                none: resolve(r, &on.none, name)?,
                cases,
                busy: resolve(
                    r,
                    if on.busy.is_some() {
                        &on.busy
                    } else {
                        &fallback.busy
                    },
                    name,
                )?,
                constraint: resolve(r, constraint, name)?,
                error: resolve(r, error, name)?,
            };
            steps.push(Step {
                name: name.clone(),
                kind,
                db,
                capture: match &s.capture {
                    Some(super::super::file::Capture::One(n)) => vec![n.clone()],
                    Some(super::super::file::Capture::Many(list)) => list.clone(),
                    None => Vec::new(),
                },
                set,
                note: s.note.clone(),
                phase: leak(fill(
                    r.phase
                        .as_ref()
                        .or(s.phase.as_ref())
                        .map_or("running", |p| p),
                    &|n| words_static(&r.with, n),
                )),
                because: s
                    .because
                    .iter()
                    .map(|b| (b.peers_in.clone(), b.say.clone()))
                    .collect(),
                on: handlers,
                with: r.with.clone(),
                next: first_present_at(i + 1),
                present: present[i],
                live: Vec::new(),
                own_errors: on.constraint.is_some() || on.error.is_some(),
                dies_at_sync: dies_at_sync(
                    s,
                    params,
                    &machine_of(&s.databases)?,
                    &format!("{what}, step {}", quote(name)),
                )?,
            });
        }
        let crash_note = spec
            .crash_after
            .as_ref()
            .and_then(|c| c.note.clone())
            .unwrap_or_default();
        let start = first_present(&steps, 0);
        liveness(&mut steps, &raw, start, &crash_note);
        let steps: Rc<[Step]> = steps.into();
        if self.label.is_some() && !impure {
            EXPANSIONS.with(|e| {
                let mut kept = e.borrow_mut();
                if kept.len() >= MAX_EXPANSIONS {
                    kept.remove(0);
                }
                kept.push(Kept {
                    file: Rc::clone(&self.file),
                    spec: spec_at,
                    index,
                    read: read.take(),
                    asked: asked.take(),
                    steps: Rc::clone(&steps),
                });
            });
        }
        Ok(steps)
    }
}

/// Which captures each step may still read before capturing them again
/// (a backward data-flow over the program's steps and jumps). Two states
/// of an attempt at the same step that differ only in dead captures behave
/// the same, so the explorer counts them once.
pub(super) fn liveness(steps: &mut [Step], raw: &[RawStep<'_>], start: usize, crash_note: &str) {
    let n = steps.len();
    // Names as bit positions: the fixpoint runs over sets of them.
    let mut names: Vec<&str> = Vec::new();
    let mut position = std::collections::HashMap::<&str, usize>::new();
    let mut index_of = |name| {
        *position.entry(name).or_insert_with(|| {
            names.push(name);
            names.len() - 1
        })
    };
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut killed: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut crash_reads = Vec::new();
    reads(crash_note, |name| crash_reads.push(index_of(name)));
    for (i, step) in steps.iter().enumerate() {
        let uses = &mut before[i];
        if let StepKind::Sql(sql) = &step.kind {
            reads(sql, |name| uses.push(index_of(name)));
        }
        uses.extend_from_slice(&crash_reads);
        // The texts read after the step ran: its note, `set`s and actions.
        let mut texts: Vec<&str> = Vec::new();
        let mut read = |text| texts.push(text);
        if let Some(note) = &raw[i].spec.note {
            match note {
                NoteSpec::One(t) => read(t),
                NoteSpec::By(by) => by.values().for_each(|t| read(t)),
            }
        }
        for (_, value) in &step.set {
            if let SetValue::Template(t) = value {
                read(t);
            }
        }
        let mut next = vec![step.next];
        for act in step.on.acts() {
            match act {
                Act::Next | Act::WaitWhile(_) => next.push(step.next),
                Act::Wait => {}
                Act::Retry => next.push(start),
                Act::Goto { target, log, .. } => {
                    next.push(*target);
                    if let Some(l) = log {
                        read(l);
                    }
                }
                Act::Finish {
                    kind, result, log, ..
                } => {
                    read(kind);
                    if let Some(r) = result {
                        read(r);
                    }
                    if let Some(l) = log {
                        read(l);
                    }
                }
                Act::Fail(why) => read(why),
            }
        }
        next.retain(|&t| t < n);
        successors[i] = next;
        let uses = &mut after[i];
        for text in texts {
            reads(text, |name| uses.push(index_of(name)));
        }
        killed[i] = step
            .set
            .iter()
            .map(|(name, _)| name)
            .chain(&step.capture)
            .map(|name| index_of(name))
            .collect();
    }
    let width = names.len().div_ceil(64).max(1);
    let mut live = vec![0u64; n * width];
    let mut out = vec![0u64; width];
    let set = |bits: &mut [u64], i: usize| bits[i / 64] |= 1 << (i % 64);
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            out.iter_mut().for_each(|w| *w = 0);
            for &t in &successors[i] {
                for (o, l) in out.iter_mut().zip(&live[t * width..(t + 1) * width]) {
                    *o |= l;
                }
            }
            after[i].iter().for_each(|&b| set(&mut out, b));
            for &b in &killed[i] {
                out[b / 64] &= !(1 << (b % 64));
            }
            before[i].iter().for_each(|&b| set(&mut out, b));
            let mine = &mut live[i * width..(i + 1) * width];
            if *mine != *out {
                mine.copy_from_slice(&out);
                changed = true;
            }
        }
    }
    // Sorted names, so that each step's list comes out sorted.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_unstable_by_key(|&b| names[b]);
    let sorted: Vec<(usize, String)> = order
        .into_iter()
        .map(|b| (b, names[b].to_string()))
        .collect();
    for (i, step) in steps.iter_mut().enumerate() {
        let bits = &live[i * width..(i + 1) * width];
        step.live = sorted
            .iter()
            .filter(|(b, _)| bits[b / 64] & (1 << (b % 64)) != 0)
            .map(|(_, name)| name.clone())
            .collect();
    }
}

/// The first step at or after `from` that is there.
pub(super) fn first_present(steps: &[Step], from: usize) -> usize {
    (from..steps.len())
        .find(|&i| steps[i].present)
        .unwrap_or(steps.len())
}

/// Appends `steps` to `out`, inlining each `use`.
#[allow(clippy::too_many_arguments)]
pub(super) fn inline<'a>(
    file: &'a File,
    steps: &'a [StepSpec],
    with: &[(String, SqlValue)],
    conditions: &[String],
    phase: Option<&String>,
    ret: Option<(usize, Option<String>)>,
    depth: usize,
    out: &mut Vec<RawStep<'a>>,
    what: &str,
) -> Result<()> {
    if depth > MAX_USE_DEPTH {
        return Err(bad(format!(
            "{what}: use nests more than {MAX_USE_DEPTH} deep (does a program use itself?)"
        )));
    }
    for step in steps {
        if out.len() > super::super::limits::MAX_PROGRAM_STEPS * 4 {
            return Ok(());
        }
        let fill_with = |text: &str, with: &[(String, SqlValue)]| {
            fill(text, &|n| {
                with.iter().find(|(k, _)| k == n).map(|(_, v)| words_of(v))
            })
        };
        match &step.use_program {
            Some(program) => {
                let inner = file
                    .programs
                    .get(program)
                    .map(|p| p.steps.as_slice())
                    .ok_or_else(|| bad(format!("{what}: no program {}", quote(program))))?;
                let mut inner_with: Vec<(String, SqlValue)> = Vec::new();
                for (k, v) in &step.with {
                    let value = toml_sql(v)
                        .ok_or_else(|| bad(format!("{what}: with.{k} is a number or text")))?;
                    inner_with.push((k.clone(), value));
                }
                inner_with.extend(with.iter().cloned());
                // Where the used steps end: counted by a dry expansion.
                let mut probe = Vec::new();
                inline(
                    file,
                    inner,
                    &inner_with,
                    &[],
                    None,
                    None,
                    depth + 1,
                    &mut probe,
                    what,
                )?;
                let end = out.len() + probe.len();
                // With a `log`, the used program's finishes go on after it
                // (a relay's delivery to one subscriber); without, they finish.
                let ret = step
                    .log
                    .as_ref()
                    .map(|l| (end, Some(fill_with(l, &inner_with))));
                let mut inner_conditions = conditions.to_vec();
                inner_conditions.extend(step.when.iter().cloned());
                inline(
                    file,
                    inner,
                    &inner_with,
                    &inner_conditions,
                    phase.or(step.phase.as_ref()),
                    ret,
                    depth + 1,
                    out,
                    what,
                )?;
            }
            None => out.push(RawStep {
                spec: step,
                name: fill_with(&step.name, with),
                id: step.id.as_ref().map(|id| fill_with(id, with)),
                conditions: conditions.to_vec(),
                phase: phase.cloned(),
                with: with.to_vec(),
                ret: ret.clone(),
            }),
        }
    }
    Ok(())
}

/// A SQL step's death inside its statement (`crash-at-sync`,
/// `power-loss-at-sync`): at which sync, and what dies. A count is a whole
/// number, or the parameter that says (a number, or `none`).
fn dies_at_sync(
    spec: &super::super::file::StepSpec,
    params: &Map<String, Value>,
    machine: &[String],
    what: &str,
) -> Result<Option<(u32, crate::storage::Death)>> {
    let count = |given: &toml::Value, field: &str| -> Result<Option<u32>> {
        let value = match given {
            toml::Value::String(name) => params.get(name).cloned(),
            toml::Value::Integer(n) => Some(Value::from(*n)),
            _ => None,
        };
        match value {
            Some(Value::Number(n)) => match n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(bad(format!("{what}: {field} counts syncs from 1"))),
            },
            Some(Value::String(s)) if s == "none" => Ok(None),
            Some(Value::String(s)) => s
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1)
                .map(Some)
                .ok_or_else(|| {
                    bad(format!(
                        "{what}: {field}: {} is neither a sync (from 1) nor none",
                        quote(&s)
                    ))
                }),
            _ => Err(bad(format!(
                "{what}: {field} is a number of syncs, or the name of a parameter that gives one"
            ))),
        }
    };
    let crash = spec
        .crash_at_sync
        .as_ref()
        .map(|v| count(v, "crash-at-sync"))
        .transpose()?
        .flatten();
    let power = spec
        .power_loss_at_sync
        .as_ref()
        .map(|v| count(v, "power-loss-at-sync"))
        .transpose()?
        .flatten();
    Ok(match (crash, power) {
        (Some(_), Some(_)) => {
            return Err(bad(format!(
                "{what}: give crash-at-sync or power-loss-at-sync, not both"
            )))
        }
        (Some(n), None) => Some((n, crate::storage::Death::Process)),
        (None, Some(n)) => Some((n, crate::storage::Death::Power(machine.to_vec()))),
        (None, None) => None,
    })
}

/// A power-loss step's tearing (`torn`): 0 (whole) unless it says, a
/// number or the parameter that gives one.
fn tearing(
    spec: &super::super::file::StepSpec,
    params: &Map<String, Value>,
    what: &str,
) -> Result<u32> {
    let Some(given) = &spec.torn else {
        return Ok(0);
    };
    let value = match given {
        toml::Value::String(name) => params.get(name).cloned(),
        toml::Value::Integer(n) => Some(Value::from(*n)),
        _ => None,
    };
    value
        .as_ref()
        .and_then(|v| match v {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        })
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            bad(format!(
                "{what}: torn is a tearing (0: none, N: the Nth), or the name of a parameter that gives one"
            ))
        })
}
