//! The checks of a file beyond its types: names that must exist, values in
//! range, pragmas the engine keeps to itself, programs that can run.

use std::collections::BTreeSet;

use super::file::*;
use super::limits::*;
use crate::params;
use crate::storage::IoCall;
use crate::{Error, Result};

/// A `&'static str` for `text`: declarations are `'static` in the built-in
/// catalog. Each distinct text is kept once (interned), so parsing the same
/// file again, as an editor does on every change, keeps nothing new.
// The next slice makes declarations own their text (see the book's Status chapter).
/// Checks what the TOML types cannot: references between parts of the file.
/// The first PRAGMA among `pragmas` that sets one the engine refuses
/// ([`crate::storage::DENIED_PRAGMAS`]), found before the run would refuse it.
fn denied_pragma(pragmas: &str) -> Option<String> {
    pragmas.split(';').find_map(|statement| {
        let text = statement.trim().to_ascii_lowercase();
        let rest = text.strip_prefix("pragma")?.trim_start();
        let end = rest
            .find(|c: char| c == '=' || c == '(' || c.is_whitespace())
            .unwrap_or(rest.len());
        let (qualified, after) = rest.split_at(end);
        let name = qualified.rsplit('.').next().unwrap_or(qualified);
        let sets = after.trim_start().starts_with(['=', '(']);
        (sets && crate::storage::DENIED_PRAGMAS.contains(&name)).then(|| name.to_string())
    })
}

pub(super) fn validate(file: &File) -> Result<()> {
    let bad = |why: String| Error::invalid("scenario", why);
    let id = file.id();
    if id.is_empty()
        || id.len() > 64
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(bad(format!(
            "the id {} must be 1 to 64 letters, digits, dashes or underscores",
            params::quote(id)
        )));
    }
    if file.databases.is_empty() {
        return Err(bad("declare at least one database: [databases.NAME]".into()));
    }
    for name in file.databases.keys() {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(format!(
                "the database name {} must be letters, digits, dashes or underscores",
                params::quote(name)
            )));
        }
    }
    for (name, database) in &file.databases {
        if let Some(pragma) = denied_pragma(&database.pragmas) {
            let hint = match pragma.as_str() {
                "journal_mode" => "; set the mode with journal = \"wal\" at the top of the file (every scenario also takes it as its journal parameter)",
                "synchronous" => "; set the level with synchronous = \"normal\" at the top of the file (every scenario also takes it as its synchronous parameter)",
                _ => "",
            };
            return Err(bad(format!(
                "database {}: its pragmas set {}, which this engine keeps to itself (it changes how databases are stored, locked or waited for){hint}",
                params::quote(name),
                params::quote(&pragma)
            )));
        }
    }
    for prior in &file.before {
        if prior.found.is_none() {
            return Err(bad(format!(
                "before names {}, which is not a built-in scenario",
                params::quote(&prior.id)
            )));
        }
    }
    file.declared_params()?;
    if file.attempts.is_empty() {
        return Err(bad("declare at least one attempt: [[attempts]]".into()));
    }
    let database = |given: Option<&String>, what: &str, required: bool| -> Result<()> {
        match given {
            Some(name) if !file.databases.contains_key(name) => Err(bad(format!(
                "{what} names database {}, which is not declared; {}",
                params::quote(name),
                params::declared_names(name, file.databases.keys().map(String::as_str))
            ))),
            None if required && file.databases.len() > 1 => Err(bad(format!(
                "{what} must say which database (there are {})",
                file.databases.len()
            ))),
            _ => Ok(()),
        }
    };
    let whole_param = |name: &str| file.params.get(name).is_some_and(ParamSpec::is_whole);
    let names_attempt = |name: &str, before: usize| {
        file.attempts[..before]
            .iter()
            .any(|a| a.role.as_deref() == Some(name) || a.label.as_deref() == Some(name))
    };
    let known = Known::of(file);
    for (name, program) in &file.programs {
        check_steps(
            &known,
            &format!("program {}", params::quote(name)),
            &program.steps,
            false,
        )?;
    }
    // Attempts are named as traces name them: by label, else by the letter
    // of their first replica (while replicas before them are numbers).
    let mut first_letter = Some(0usize);
    for (i, attempt) in file.attempts.iter().enumerate() {
        let what = match (&attempt.label, first_letter) {
            (Some(label), _) => format!("attempt {}", params::quote(label)),
            (None, Some(index)) => format!("attempt {}", crate::sim::Schedule::letter(index)),
            (None, None) => format!("the attempts table number {}", i + 1),
        };
        first_letter = match (&attempt.replicas, first_letter) {
            (None, Some(index)) => Some(index + 1),
            (Some(toml::Value::Integer(n)), Some(index)) => {
                usize::try_from(*n).ok().map(|n| index + n.max(1))
            }
            _ => None,
        };
        if let Some(label) = &attempt.label {
            if label.is_empty() || label.chars().count() > 32 || label.chars().any(char::is_control)
            {
                return Err(bad(format!("{what}: a label is 1 to 32 characters")));
            }
        }
        if let Some(clock) = &attempt.clock {
            if clock.tick < 1 || !attempt.steps.is_empty() || attempt.program.is_some() {
                return Err(bad(format!(
                    "{what}: a clock ticks by a whole number from 1 and has no steps"
                )));
            }
            if let Some(holder) = &clock.hold_for {
                if !file
                    .attempts
                    .iter()
                    .any(|a| a.role.as_ref() == Some(holder) || a.label.as_ref() == Some(holder))
                {
                    return Err(bad(format!(
                        "{what}: hold-for names {}, which no attempt is",
                        params::quote(holder)
                    )));
                }
            }
            continue;
        }
        let needs_database = file
            .steps_of(attempt)
            .iter()
            .any(|s| s.sql.is_some() && s.database.is_none());
        database(attempt.database.as_ref(), &what, needs_database)?;
        match (&attempt.program, attempt.steps.is_empty()) {
            (Some(name), true) => {
                if !file.programs.contains_key(name) {
                    return Err(bad(format!(
                        "{what}: program {} is not declared; {}",
                        params::quote(name),
                        params::declared_names(name, file.programs.keys().map(String::as_str))
                    )));
                }
            }
            (None, false) => {
                if attempt.steps.len() > MAX_PROGRAM_STEPS {
                    return Err(bad(format!(
                        "{what} must have 1 to {MAX_PROGRAM_STEPS} steps"
                    )));
                }
                check_steps(&known, &what, &attempt.steps, true)?;
            }
            _ => {
                return Err(bad(format!(
                    "{what}: give either steps or program (1 to {MAX_PROGRAM_STEPS} steps)"
                )))
            }
        }
        if let Some(replicas) = &attempt.replicas {
            match replicas {
                toml::Value::Integer(n) if (1..=MAX_ATTEMPTS as i64).contains(n) => {}
                toml::Value::String(name) if whole_param(name) => {}
                _ => {
                    return Err(bad(format!(
                        "{what}: replicas is a number from 1 to {MAX_ATTEMPTS} or the name of a whole parameter"
                    )))
                }
            }
        }
        if let Some(crash) = &attempt.crash_after {
            match &crash.steps {
                toml::Value::Integer(n) if *n >= 0 => {}
                toml::Value::String(name) if file.params.contains_key(name) => {}
                _ => {
                    return Err(bad(format!(
                        "{what}: crash-after.steps is a number of steps or the name of a parameter"
                    )))
                }
            }
        }
        if let Some(role) = &attempt.after {
            let found: Vec<&AttemptSpec> = file.attempts[..i]
                .iter()
                .filter(|a| a.role.as_ref() == Some(role) || a.label.as_ref() == Some(role))
                .collect();
            let single = |a: &&AttemptSpec| {
                a.replicas.is_none()
                    || a.replicas.as_ref().and_then(toml::Value::as_integer) == Some(1)
            };
            if found.len() != 1 || !found.iter().all(single) || !names_attempt(role, i) {
                return Err(bad(format!(
                    "{what}: after = {} must name the role or label of exactly one earlier attempt that is not replicated",
                    params::quote(role)
                )));
            }
        }
    }
    let total = known.attempts;
    if total > MAX_ATTEMPTS {
        return Err(bad(format!(
            "the attempts may number up to {total}; at most {MAX_ATTEMPTS} can race (bound the replicas parameter's max)"
        )));
    }
    // A name derived from what is checked may say nothing of where it is:
    // then the table is named by its place ([`subject_span`] finds it).
    let named = |kind: &str, table: &str, i: usize, check: &CheckSpec| {
        if check.name == check.derived_name() {
            format!(
                "{kind} {} ([[{table}]] number {})",
                params::quote(&check.name),
                i + 1
            )
        } else {
            format!("{kind} {}", params::quote(&check.name))
        }
    };
    for (i, invariant) in file.invariants.iter().enumerate() {
        let what = named("invariant", "invariants", i, invariant);
        if invariant.sql.is_none()
            || invariant.expect.is_none()
            || invariant.outcome.is_some()
            || invariant.same_result.is_some()
            || invariant.attempt.is_some()
            || invariant.after.is_some()
        {
            return Err(bad(format!(
                "{what}: an invariant is sql with expect (it is checked after every step)"
            )));
        }
        database(invariant.database.as_ref(), &what, true)?;
    }
    let outcomes = outcomes(file);
    for (i, check) in file.checks.iter().enumerate() {
        let what = named("check", "checks", i, check);
        // An outcome no attempt can end with: a check that can only fail
        // (or, counted, only pass with count = 0), most likely misspelled.
        if let Some(outcomes) = &outcomes {
            let named = check
                .outcome
                .iter()
                .chain(check.same_result.iter().flatten());
            for outcome in named {
                if !outcomes.contains(outcome.as_str()) {
                    return Err(bad(format!(
                        "{what}: no attempt can end with outcome {}; {}",
                        params::quote(outcome),
                        params::declared_names(outcome, outcomes.iter().copied())
                    )));
                }
            }
        }
        if let Some(query) = &check.query {
            if check.sql.is_some() || !file.queries.contains_key(query) {
                return Err(bad(format!(
                    "{what}: query names {}, which is not one of the file's queries (and then give no sql)",
                    params::quote(query)
                )));
            }
        }
        for label in [&check.attempt, &check.after].into_iter().flatten() {
            if !known.names_an_attempt(label) {
                return Err(bad(format!(
                    "{what}: no attempt is labelled {}",
                    params::quote(label)
                )));
            }
        }
        let sql = check.sql.as_ref().or(check.query.as_ref());
        match (sql, &check.outcome, &check.same_result, &check.attempt) {
            (Some(_), None, None, None) => {
                database(check.database.as_ref(), &what, true)?;
                if check.expect.is_none() {
                    return Err(bad(format!("{what}: an sql check needs expect = …")));
                }
            }
            (None, _, None, Some(_)) if check.outcome.is_some() || check.result.is_some() => {}
            (None, Some(_), None, None) => {
                let counts = match &check.count {
                    Some(toml::Value::Integer(_)) => true,
                    Some(toml::Value::String(text)) => {
                        count_expression(text).is_some_and(|(name, _)| whole_param(name))
                    }
                    _ => false,
                };
                if !counts {
                    return Err(bad(format!(
                        "{what}: an outcome check needs count = a number, or a whole parameter's name with an optional offset (\"attempts - 1\")"
                    )));
                }
            }
            (None, None, Some(list), None) if !list.is_empty() => {}
            _ => {
                return Err(bad(format!(
                    "{what}: give exactly one of sql or query (with expect), outcome (with count), attempt (with outcome or result) or same-result"
                )))
            }
        }
    }
    Ok(())
}

/// Every outcome an attempt of `file` can end with: each `finish` its
/// programs and attempts' handlers name, a program's end ([`super::program::DONE`]) and
/// the engine's own ([`crate::sim::ENGINE_OUTCOMES`]); `None` when one is
/// written with `{name}` (filled in as the attempt runs, so not known here).
fn outcomes(file: &File) -> Option<BTreeSet<&str>> {
    let mut outcomes: BTreeSet<&str> = crate::sim::ENGINE_OUTCOMES.into_iter().collect();
    outcomes.insert(super::program::DONE);
    let steps = file
        .programs
        .values()
        .flat_map(|p| &p.steps)
        .chain(file.attempts.iter().flat_map(|a| &a.steps));
    for step in steps {
        let on = &step.on;
        let actions = [
            &on.ok,
            &on.rows,
            &on.none,
            &on.busy,
            &on.constraint,
            &on.error,
        ]
        .into_iter()
        .flatten()
        .chain(on.cases.values());
        for action in actions {
            if let ActionSpec::Table(ActionTable {
                finish: Some(kind), ..
            }) = action
            {
                if kind.contains('{') {
                    return None;
                }
                outcomes.insert(kind);
            }
        }
    }
    Some(outcomes)
}

/// Every phase a step of `file` declares; `None` when one is written with
/// `{name}` (filled in where the step is used, so not known here).
fn phases(file: &File) -> Option<BTreeSet<&str>> {
    let mut phases = BTreeSet::new();
    let steps = file
        .programs
        .values()
        .flat_map(|p| &p.steps)
        .chain(file.attempts.iter().flat_map(|a| &a.steps));
    for phase in steps.filter_map(|s| s.phase.as_deref()) {
        if phase.contains('{') {
            return None;
        }
        phases.insert(phase);
    }
    Some(phases)
}

/// What the names in a file can refer to, gathered once per file.
struct Known<'a> {
    file: &'a File,
    /// The most attempts the file can race: each replicated attempt at its
    /// replicas parameter's max.
    attempts: usize,
    /// What another attempt may be in, for a `because`: a step's phase, or
    /// an outcome once it is over (`None` where either is a template).
    peers_can_be: Option<(BTreeSet<&'a str>, BTreeSet<&'a str>)>,
}

impl<'a> Known<'a> {
    fn of(file: &'a File) -> Self {
        let attempts = file
            .attempts
            .iter()
            .map(|a| match &a.replicas {
                Some(toml::Value::Integer(n)) => *n as usize,
                Some(toml::Value::String(name)) => file
                    .params
                    .get(name)
                    .and_then(|p| p.max)
                    .map_or(MAX_ATTEMPTS, |m| m.max(1) as usize),
                _ => 1,
            })
            .sum();
        Known {
            file,
            attempts,
            peers_can_be: phases(file).zip(outcomes(file)),
        }
    }

    /// Whether `name` can name an attempt: a role or label one declares, or
    /// the letter a trace gives one of the attempts the file can race.
    fn names_an_attempt(&self, name: &str) -> bool {
        let letter = name.len() == 1
            && name.as_bytes()[0].is_ascii_uppercase()
            && usize::from(name.as_bytes()[0] - b'A') < self.attempts;
        letter
            || self
                .file
                .attempts
                .iter()
                .any(|a| a.label.as_deref() == Some(name) || a.role.as_deref() == Some(name))
    }
}

/// Checks one program's steps (`inline`: an attempt's own, which name the
/// attempts of this file; a program's may wait for a role that a file
/// including it does not have, and then does not wait).
fn check_steps(known: &Known, what: &str, steps: &[StepSpec], inline: bool) -> Result<()> {
    let bad = |why: String| Error::invalid("scenario", why);
    let file = known.file;
    if steps.is_empty() || steps.len() > MAX_PROGRAM_STEPS {
        return Err(bad(format!(
            "{what} must have 1 to {MAX_PROGRAM_STEPS} steps"
        )));
    }
    for step in steps {
        let what = format!("{what}, step {}", params::quote(&step.name));
        if let Some((phases, outcomes)) = &known.peers_can_be {
            let named = step.because.iter().flat_map(|b| &b.peers_in);
            for name in named.filter(|n| !n.contains('{')) {
                if !phases.contains(name.as_str()) && !outcomes.contains(name.as_str()) {
                    return Err(bad(format!(
                        "{what}: because names {}, which is neither a step's phase nor an outcome, so no attempt is ever in it; {}",
                        params::quote(name),
                        params::declared_names(name, phases.iter().chain(outcomes).copied())
                    )));
                }
            }
        }
        // A template (`{sub}`) is checked once filled, where it is used.
        if let Some(database) = step.database.as_ref().filter(|d| !d.contains('{')) {
            if !file.databases.contains_key(database) {
                return Err(bad(format!(
                    "{what} names database {}, which is not declared",
                    params::quote(database)
                )));
            }
        }
        let machine = step
            .action
            .as_deref()
            .is_some_and(|a| MACHINE_ACTIONS.contains(&a));
        if !step.databases.is_empty() && !machine && step.power_loss_at_sync.is_none() {
            return Err(bad(format!(
                "{what}: databases names the machine of a {} step, or of power-loss-at-sync; this step is neither (use database for a statement's)",
                MACHINE_ACTIONS.join(", ")
            )));
        }
        if (step.crash_at_sync.is_some() || step.power_loss_at_sync.is_some()) && step.sql.is_none()
        {
            return Err(bad(format!(
                "{what}: crash-at-sync and power-loss-at-sync land inside a statement: give the step sql"
            )));
        }
        match (step.action.as_deref(), step.call.as_deref()) {
            (Some("io-error"), Some(call)) if IoCall::parse(call).is_some() => {}
            (Some("io-error"), Some(call)) => {
                return Err(bad(format!(
                    "{what}: call {} is not a call that can fail; use {}",
                    params::quote(call),
                    IoCall::NAMES.join(" or ")
                )))
            }
            (Some("io-error"), None) => {
                return Err(bad(format!(
                    "{what}: an io-error step says which call fails: call = \"write\" or \"sync\""
                )))
            }
            (_, Some(_)) => {
                return Err(bad(format!(
                    "{what}: call says which call an io-error step fails; this step is not one"
                )))
            }
            _ => {}
        }
        for database in step.databases.iter().filter(|d| !d.contains('{')) {
            if !file.databases.contains_key(database) {
                return Err(bad(format!(
                    "{what}: databases names {}, which is not declared",
                    params::quote(database)
                )));
            }
        }
        match (&step.sql, step.action.as_deref(), &step.use_program) {
            (Some(_), None, None) => {}
            (None, Some(action), None) if ACTIONS.contains(&action) => {}
            (None, Some(other), None) => {
                return Err(bad(format!(
                    "{what}: unknown action {}; use {}",
                    params::quote(other),
                    ACTIONS.join(", ")
                )))
            }
            (None, None, Some(program)) => {
                if !file.programs.contains_key(program) {
                    return Err(bad(format!(
                        "{what}: use names program {}, which is not declared; {}",
                        params::quote(program),
                        params::declared_names(program, file.programs.keys().map(String::as_str))
                    )));
                }
                continue;
            }
            _ => return Err(bad(format!("{what}: give one of sql, action or use"))),
        }
        if step.name.is_empty() {
            return Err(bad(format!("{what}: every step has a name")));
        }
        let on = &step.on;
        let listed = [
            ("ok", &on.ok),
            ("rows", &on.rows),
            ("none", &on.none),
            ("busy", &on.busy),
            ("constraint", &on.constraint),
            ("error", &on.error),
        ];
        let cases = on.cases.iter().map(|(k, v)| (k.as_str(), Some(v)));
        for (kind, action) in listed.iter().map(|(k, a)| (*k, a.as_ref())).chain(cases) {
            let Some(action) = action else { continue };
            match action {
                ActionSpec::Word(w) if w == "next" || w == "retry" => {}
                ActionSpec::Word(w) if w == "wait" && kind == "busy" => {}
                ActionSpec::Word(w) => {
                    return Err(bad(format!(
                        "{what}: on.{kind} = {} is not an action; use \"next\", \"retry\"{}, {{ goto = … }}, {{ finish = … }} or {{ fail = … }}",
                        params::quote(w),
                        if kind == "busy" { ", \"wait\"" } else { "" }
                    )))
                }
                ActionSpec::Table(t) => {
                    let waits_for = t.wait_while.as_ref().filter(|n| inline && !n.contains('{'));
                    if let Some(name) = waits_for {
                        if !known.names_an_attempt(name) {
                            return Err(bad(format!(
                                "{what}: on.{kind} waits while {} runs, but no attempt has that role or label, so it never waits; {}",
                                params::quote(name),
                                params::declared_names(
                                    name,
                                    file.attempts
                                        .iter()
                                        .flat_map(|a| a.role.iter().chain(&a.label))
                                        .map(String::as_str)
                                )
                            )));
                        }
                    }
                    let given = [t.goto.is_some(), t.finish.is_some(), t.fail.is_some()]
                        .iter()
                        .filter(|g| **g)
                        .count();
                    let bare_wait = given == 0 && t.wait_while.is_some();
                    if (given != 1 && !bare_wait)
                        || (t.result.is_some() && t.finish.is_none())
                        || (t.back_off && t.goto.is_none())
                    {
                        return Err(bad(format!(
                            "{what}: on.{kind} takes exactly one of goto (with an optional back-off), finish (with an optional result) or fail"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}
