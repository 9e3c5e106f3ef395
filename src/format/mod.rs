//! Scenarios as data: a scenario file a person writes, and the engine that
//! runs it.
//!
//! The file is TOML: SQL goes in multi-line strings without escaping,
//! comments are `#`, and a mistake is reported at its line and column. A
//! file declares its databases (schema and seed rows), its parameters (the
//! same declarations as the built-ins', [`crate::params::Param`]), its
//! attempts (each a program of steps on its own connection, optionally
//! replicated N times), and its checks (SQL on the final state with the
//! expected answer, and conditions on the attempts' outcomes). See the
//! book's "Write your own scenario" (docs/src/write-your-own.md) for a walk-through and every field.
//!
//! This is the first slice of the format: the built-in catalog is not yet
//! written in it (see the book's Status chapter).

mod decode;
pub(crate) mod file;
mod inline;
mod limits;
mod program;
mod sql;
mod validate;

use serde_json::Value;

use crate::params::{self, Param, Params};
use crate::sim::Scenario;
use crate::storage::{EngineOptions, Journal, Synchronous};
use crate::{Error, Result};

pub(crate) use file::*;
pub(crate) use inline::with_libraries;
pub use limits::*;
pub(crate) use program::{FileScenario, DONE};
pub use sql::SqlMistake;
use validate::validate;

/// Where in the source a problem is, and what it is.
fn at(source: &str, span: Option<std::ops::Range<usize>>, message: &str) -> Error {
    let (line, column) = span.map_or((1, 1), |span| sql::line_and_column(source, span.start));
    Error::Mistake {
        line,
        column,
        message: message.trim().to_string(),
    }
}

/// Where a problem found after parsing is: the first place in the source
/// of a name the message quotes, the last quoted first (in "step "read":
/// goes to "nowhere"", the missing target).
fn subject_span(source: &str, message: &str) -> Option<std::ops::Range<usize>> {
    // The names a list of what is declared quotes are not the subject.
    let message = message
        .split_once(&format!("; {}", crate::params::DECLARED))
        .map_or(message, |(subject, _)| subject);
    // "[[checks]] number 2": the second such table; in it, the last name
    // the message quotes that is written there, else the table's header.
    if let Some((table, rest)) = message.split_once("]] number ") {
        let header = format!("{}]]", &table[table.rfind("[[")?..]);
        let n: usize = rest
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        let at = source.match_indices(&header).nth(n.checked_sub(1)?)?.0;
        let body = at + header.len();
        let end = source[body..]
            .find("\n[")
            .map_or(source.len(), |i| body + i);
        return Some(
            quoted_span(&source[body..end], rest)
                .map_or(at..body, |span| body + span.start..body + span.end),
        );
    }
    quoted_span(source, message)
}

/// The first place in `source` of the last name `message` quotes that is
/// there.
fn quoted_span(source: &str, message: &str) -> Option<std::ops::Range<usize>> {
    let quoted: Vec<&str> = message.split('"').skip(1).step_by(2).collect();
    quoted
        .iter()
        .rev()
        .filter(|q| !q.is_empty() && !q.contains('…') && !q.contains('\\'))
        .find_map(|q| {
            let needle = format!("\"{q}\"");
            source
                .find(&needle)
                .map(|at| at + 1)
                .or_else(|| source.find(q))
                .map(|at| at..at + q.len())
        })
}

/// Parses and checks a scenario source; `fallback_id` names it when the
/// file gives no id. A statement SQLite cannot prepare is a mistake, at its
/// line and column, unless the file says `allow-sql-errors = true`.
pub(crate) fn parse(source: &str, fallback_id: &str, sources: SourcesRef) -> Result<File> {
    let (file, mistakes) = parse_listing_sql(source, fallback_id, sources)?;
    let refused = mistakes
        .iter()
        .find(|m| m.template)
        .or(match file.allow_sql_errors {
            true => None,
            false => mistakes.first(),
        });
    match refused {
        Some(first) => {
            let more = match mistakes.len() {
                1 => String::new(),
                n => format!(
                    " (and {} more SQL error{})",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ),
            };
            Err(Error::Mistake {
                line: first.line,
                column: first.column,
                message: format!("{}: {}{more}", first.what, first.message),
            })
        }
        None => Ok(file),
    }
}

/// As [`parse`], returning the file with every statement SQLite cannot
/// prepare at the file's defaults (whether or not the file allows them).
pub fn parse_listing_sql(
    source: &str,
    fallback_id: &str,
    sources: SourcesRef,
) -> Result<(File, Vec<SqlMistake>)> {
    let (file, scenario) = parse_file(source, fallback_id, sources, true)?;
    // The trial scenario is dropped here, before the file is unshared.
    let mistakes = match scenario {
        Some(scenario) => scenario.sql_mistakes(source)?,
        None => Vec::new(),
    };
    Ok((file.unshared(), mistakes))
}

/// As [`parse`], without compiling the file at its defaults: for the
/// built-in files, which the tests compile at every pair of values, and
/// which every page reads at its start.
pub(crate) fn parse_builtin(source: &str, id: &str, sources: SourcesRef) -> Result<File> {
    Ok(parse_file(source, id, sources, false)?.0.unshared())
}

/// The file, shared with its trial scenario at its defaults when `trial`.
struct Parsed(std::rc::Rc<File>);

impl Parsed {
    /// The file, once its trial scenario is dropped (it is ours again, not
    /// copied).
    fn unshared(self) -> File {
        std::rc::Rc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }
}

fn parse_file(
    source: &str,
    fallback_id: &str,
    sources: SourcesRef,
    trial: bool,
) -> Result<(Parsed, Option<FileScenario>)> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(Error::invalid(
            "scenario",
            format!(
                "the source is {} bytes; at most {MAX_SOURCE_BYTES} are accepted",
                source.len()
            ),
        ));
    }
    let mut file: File =
        decode::from_str(source).map_err(|e| at(source, Some(e.span), &e.message))?;
    if file.id.is_none() {
        file.id = Some(fallback_id.to_string());
    }
    let located = |e: Error| match e {
        Error::InvalidInput { reason, .. } => at(source, subject_span(source, &reason), &reason),
        other => other,
    };
    file.merge_libraries(sources).map_err(located)?;
    for prior in file.before.iter_mut() {
        prior.found = sources.has_scenario(&prior.id).then_some(sources);
    }
    for check in file.checks.iter_mut().chain(file.invariants.iter_mut()) {
        if check.name.trim().is_empty() {
            check.name = check.derived_name();
        }
    }
    validate(&file).map_err(located)?;
    // Compiling with the defaults finds what only the whole program shows
    // (a `goto` to no step, a `when` that is not SQL).
    let declared = file.declared_params().map_err(located)?;
    let file = std::rc::Rc::new(file);
    if !trial {
        return Ok((Parsed(file), None));
    }
    let scenario = FileScenario::new(std::rc::Rc::clone(&file), Params::defaults(&declared))
        .map_err(located)?;
    Ok((Parsed(file), Some(scenario)))
}

impl File {
    /// The file's id.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or("scenario")
    }

    /// Completes the file with the libraries it includes: the parameters it
    /// names get the library's declaration for what they leave out; the
    /// libraries' databases and programs are added where the file has none
    /// of that name.
    fn merge_libraries(&mut self, sources: &dyn Sources) -> Result<()> {
        for name in self.include.clone() {
            if let Some(own) = self.libraries.get(&name) {
                let own = own.clone();
                self.take_library(own);
                continue;
            }
            if sources.library(&name).is_none() {
                return Err(Error::invalid(
                    "scenario",
                    format!(
                        "include names {}, which is not a library; use {}",
                        params::quote(&name),
                        sources.library_names().join(", ")
                    ),
                ));
            }
            self.take_library(library(sources, &name)?);
        }
        Ok(())
    }

    /// Takes what `library` declares and this file does not (see
    /// [`File::merge_libraries`]).
    fn take_library(&mut self, library: Library) {
        for (param, spec) in self.params.iter_mut() {
            if let Some(base) = library.params.get(param) {
                spec.fill_from(base);
            }
        }
        for (db, spec) in library.databases {
            let mine = self.databases.entry(db).or_insert_with(|| spec.clone());
            if mine.schema.is_empty() {
                mine.schema = spec.schema.clone();
            }
            if mine.pragmas.is_empty() {
                mine.pragmas = spec.pragmas.clone();
            }
        }
        for (program, spec) in library.programs {
            self.programs.entry(program).or_insert(spec);
        }
        let mut lets = library.lets;
        for (name, expression) in std::mem::take(&mut self.lets) {
            lets.insert(name, expression);
        }
        self.lets = lets;
        for (name, sql) in library.queries {
            self.queries.entry(name).or_insert(sql);
        }
        for (name, value) in library.defaults {
            self.defaults.entry(name).or_insert(value);
        }
        let on = &mut self.on;
        on.busy = on.busy.take().or(library.on.busy);
        on.constraint = on.constraint.take().or(library.on.constraint);
        on.error = on.error.take().or(library.on.error);
    }

    /// The parameter declarations, as the engine's [`Param`]s, and last the
    /// engine's own ([`ENGINE_PARAMS`]), which every scenario takes.
    pub fn declared_params(&self) -> Result<Vec<Param>> {
        let mut declared = self
            .params
            .iter()
            .map(|(name, spec)| {
                if ENGINE_PARAMS.contains(&name.as_str()) {
                    return Err(Error::invalid(
                        "scenario",
                        format!(
                            "{} is the engine's parameter, which every scenario takes; set its default with {name} = \"{}\" at the top of the file",
                            params::quote(name),
                            if name == JOURNAL_PARAM { "wal" } else { "normal" }
                        ),
                    ));
                }
                spec.to_param(name)
            })
            .collect::<Result<Vec<Param>>>()?;
        let journal = engine_default(
            self.journal.as_deref(),
            JOURNAL_PARAM,
            "a journal mode",
            Journal::parse,
            Journal::NAMES,
        )?
        .unwrap_or_default();
        declared.push(Param::choice(
            JOURNAL_PARAM,
            Journal::NAMES,
            journal.name(),
            JOURNAL_MEANING,
        ));
        let synchronous = engine_default(
            self.synchronous.as_deref(),
            SYNCHRONOUS_PARAM,
            "a synchronous level",
            Synchronous::parse,
            Synchronous::NAMES,
        )?
        .unwrap_or_default();
        declared.push(Param::choice(
            SYNCHRONOUS_PARAM,
            Synchronous::NAMES,
            synchronous.name(),
            SYNCHRONOUS_MEANING,
        ));
        Ok(declared)
    }

    /// The engine's options `params` select.
    pub fn engine_options(params: &Params) -> EngineOptions {
        file::engine_options(params.values())
    }

    /// Builds the scenario with parameters given as JSON (null: defaults).
    pub fn build(&self, given: &Value) -> Result<Box<dyn Scenario>> {
        let declared = self.declared_params()?;
        let params = Params::parse(self.id(), &declared, given)?;
        Ok(Box::new(FileScenario::new(
            std::rc::Rc::new(self.clone()),
            params,
        )?))
    }

    /// The steps of attempt `spec`: its own, or its program's.
    pub(crate) fn steps_of<'a>(&'a self, spec: &'a AttemptSpec) -> &'a [StepSpec] {
        match &spec.program {
            Some(name) => self
                .programs
                .get(name)
                .map_or(&[][..], |p| p.steps.as_slice()),
            None => &spec.steps,
        }
    }
}

/// A library's source text as a cache's key: by where it is, not by what it
/// says. A source is `&'static str` ([`Sources::library`]): an address holds
/// one text for good (the same text at two addresses is two keys, never a
/// wrong hit). Hashing and comparing the text itself (kilobytes) took a
/// quarter of a session's request natively.
#[derive(Clone, Copy)]
struct SourceId(&'static str);

impl PartialEq for SourceId {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for SourceId {}

impl std::hash::Hash for SourceId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.0, state);
    }
}

/// Library `name` of `sources`, parsed once per thread for each source
/// text (a session's every request builds its attempt from it).
fn library(sources: &dyn Sources, name: &str) -> Result<Library> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static PARSED: RefCell<HashMap<SourceId, Library>> = RefCell::new(HashMap::new());
    }
    let source = sources
        .library(name)
        .ok_or_else(|| Error::invalid("library", format!("no library {}", params::quote(name))))?;
    if let Some(parsed) = PARSED.with(|p| p.borrow().get(&SourceId(source)).cloned()) {
        return Ok(parsed);
    }
    let parsed: Library = decode::from_str(source)
        .map_err(|e| Error::invalid("library", format!("library {name}: {}", e.message)))?;
    PARSED.with(|p| p.borrow_mut().insert(SourceId(source), parsed.clone()));
    Ok(parsed)
}

/// Creates library `name`'s databases (their schemas) in `store`.
pub(crate) fn setup_library(
    sources: &dyn Sources,
    store: &crate::storage::Store,
    name: &str,
) -> Result<()> {
    for (db, spec) in library(sources, name)?.databases {
        store
            .connect(&format!("{db}.db"), "setup")?
            .execute_batch(&spec.schema)?;
    }
    Ok(())
}

/// The PRAGMAs every connection to library `name`'s database `db` runs.
pub(crate) fn library_pragmas(sources: &dyn Sources, name: &str, db: &str) -> Result<String> {
    library(sources, name)?
        .databases
        .get(db)
        .map(|d| d.pragmas.clone())
        .ok_or_else(|| Error::invalid("library", format!("{name} has no database {db}")))
}

/// The schema of library `name`'s database `db`.
pub(crate) fn library_schema(sources: &dyn Sources, name: &str, db: &str) -> Result<String> {
    library(sources, name)?
        .databases
        .remove(db)
        .map(|d| d.schema)
        .ok_or_else(|| Error::invalid("library", format!("{name} has no database {db}")))
}

/// What library `name`'s `let`s come to for an attempt with these values
/// (the rules of a response profile, as a table).
pub(crate) fn library_values(
    sources: &dyn Sources,
    name: &str,
    with: toml::Table,
) -> Result<Vec<(String, crate::storage::SqlValue)>> {
    let scenario = alone(sources, name, "values", "alone", &with, MAX_ATTEMPT_STEPS)?;
    Ok(scenario.values_of(0))
}

/// A scenario of one attempt running library `name`'s `program` with `with`.
///
/// The file is built, merged with its library and validated once per
/// thread for each (library, program, names of the values); its attempt
/// takes each value from the parameter of the same name (`with.key =
/// ":key"`), so a session's every request only compiles the attempt.
fn alone(
    sources: &dyn Sources,
    name: &str,
    program: &str,
    label: &str,
    with: &toml::Table,
    max_steps: usize,
) -> Result<FileScenario> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    // The library by its source ([`SourceId`], its address), not by its
    // name: two sources may name two libraries alike.
    type Key = (SourceId, String, Vec<String>);
    thread_local! {
        static TEMPLATES: RefCell<HashMap<Key, std::rc::Rc<File>>> = RefCell::new(HashMap::new());
    }
    let mut values = serde_json::Map::new();
    for (k, v) in with {
        let value = match v {
            toml::Value::Integer(i) => serde_json::Value::from(*i),
            toml::Value::String(s) => serde_json::Value::from(s.as_str()),
            _ => {
                return Err(Error::invalid(
                    "with",
                    format!("{k} is a whole number or text"),
                ))
            }
        };
        values.insert(k.clone(), value);
    }
    let source = sources
        .library(name)
        .ok_or_else(|| Error::invalid("library", format!("no library {}", params::quote(name))))?;
    let key: Key = (
        SourceId(source),
        program.to_string(),
        with.keys().cloned().collect(),
    );
    let kept = TEMPLATES.with(|t| t.borrow().get(&key).cloned());
    let file = match kept {
        Some(file) => file,
        None => {
            let file = std::rc::Rc::new(alone_file(sources, name, program, with.keys())?);
            TEMPLATES.with(|t| t.borrow_mut().insert(key, std::rc::Rc::clone(&file)));
            file
        }
    };
    FileScenario::alone(file, Params::bound(values), label, max_steps)
}

/// The file of [`alone`]: one attempt whose values are parameters (each
/// name bound to the parameter of the same name), built as the
/// declarations a file would make and checked as every file is.
fn alone_file<'a>(
    sources: &dyn Sources,
    name: &str,
    program: &str,
    names: impl Iterator<Item = &'a String>,
) -> Result<File> {
    let lib = library(sources, name)?;
    let mut attempt = AttemptSpec {
        label: Some("alone".into()),
        with: names
            .map(|n| (n.clone(), toml::Value::String(format!(":{n}"))))
            .collect(),
        ..AttemptSpec::default()
    };
    if lib.programs.contains_key(program) {
        attempt.program = Some(program.into());
    } else {
        // Only the values: one step that does nothing.
        attempt.steps = vec![StepSpec {
            name: "values".into(),
            action: Some("work".into()),
            ..StepSpec::default()
        }];
    }
    let mut file = File {
        id: Some("alone".into()),
        title: "alone".into(),
        include: vec![name.into()],
        attempts: vec![attempt],
        ..File::default()
    };
    file.merge_libraries(sources)?;
    validate(&file)?;
    Ok(file)
}

/// Runs library `name`'s `program` alone on `store` (whose databases the
/// library made), labelled `label`, with `with`, at virtual time `now`:
/// its outcome and every step's report.
// The library is its sources and its name (two arguments): the next step of
// the format's pipeline runs a library program without this door.
#[allow(clippy::too_many_arguments)]
pub fn run_alone(
    sources: &dyn Sources,
    store: &crate::storage::Store,
    name: &str,
    program: &str,
    label: &str,
    with: toml::Table,
    now: i64,
    max_steps: usize,
) -> Result<(crate::sim::Outcome, Vec<crate::sim::StepReport>)> {
    let scenario = alone(sources, name, program, label, &with, max_steps)?;
    let mut attempts = scenario.attempts()?;
    let attempt = attempts
        .first_mut()
        .ok_or_else(|| Error::Defect("no attempt".into()))?;
    crate::sim::run_alone(store, attempt.as_mut(), now, max_steps)
}

/// The default a file gives engine parameter `name` (`journal = "wal"`),
/// read with `parse`: `None` if it gives none, a mistake if it is not one of
/// `names`.
fn engine_default<T>(
    given: Option<&str>,
    name: &str,
    what: &str,
    parse: fn(&str) -> Option<T>,
    names: &[&str],
) -> Result<Option<T>> {
    given
        .map(|value| {
            parse(value).ok_or_else(|| {
                Error::invalid(
                    "scenario",
                    format!(
                        "{name} = {} is not {what}; use {}",
                        params::quote(value),
                        names.join(" or ")
                    ),
                )
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No library and no scenario: these files name none.
    struct Nothing;

    impl Sources for Nothing {
        fn library(&self, _: &str) -> Option<&'static str> {
            None
        }
        fn library_names(&self) -> Vec<&'static str> {
            Vec::new()
        }
        fn has_scenario(&self, _: &str) -> bool {
            false
        }
        fn scenario(&self, _: &str) -> Option<std::rc::Rc<File>> {
            None
        }
    }

    fn parse(source: &str, id: &str) -> Result<File> {
        super::parse(source, id, &Nothing)
    }

    const MINIMAL: &str = r#"
title = "Two writers"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
replicas = 2
steps = [ { name = "write", sql = "INSERT INTO t VALUES (:attempt)" } ]
[[checks]]
name = "two rows"
sql = "SELECT count(*) FROM t"
expect = 2
"#;

    /// Static expressions are computed once per set of values they read,
    /// except those that call a function or read the clock.
    #[test]
    fn a_let_that_calls_a_function_is_computed_for_every_build() {
        let source = r#"
title = "Lets"
[databases.app]
schema = "CREATE TABLE t (x);"
[let]
doubled = ":n * 2"
drawn = "abs(random())"
[[attempts]]
with = { n = 3 }
steps = [ { name = "write", sql = "INSERT INTO t VALUES (:doubled)" } ]
[[attempts]]
with = { n = 4 }
steps = [ { name = "write", sql = "INSERT INTO t VALUES (:doubled)" } ]
"#;
        let file = std::rc::Rc::new(parse(source, "lets").unwrap());
        let value = |scenario: &FileScenario, attempt: usize, name: &str| {
            scenario
                .values_of(attempt)
                .into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .unwrap()
        };
        let mut drawn = std::collections::HashSet::new();
        for _ in 0..5 {
            let built = FileScenario::new(file.clone(), Params::defaults(&[])).unwrap();
            assert_eq!(
                value(&built, 0, "doubled"),
                crate::storage::SqlValue::Integer(6)
            );
            assert_eq!(
                value(&built, 1, "doubled"),
                crate::storage::SqlValue::Integer(8)
            );
            drawn.insert(format!("{:?}", value(&built, 0, "drawn")));
        }
        assert!(drawn.len() > 1, "random() was drawn once: {drawn:?}");
    }

    #[test]
    fn a_minimal_file_parses() {
        let file = parse(MINIMAL, "two-writers").unwrap();
        assert_eq!(file.id(), "two-writers");
        assert_eq!(file.attempts[0].steps[0].name, "write");
    }

    #[test]
    fn mistakes_are_reported_at_their_line_and_column() {
        let source = "title = \"x\"\n[databases.app]\nschema = 5\n";
        let error = parse(source, "x").unwrap_err().to_string();
        assert!(
            error.starts_with("invalid scenario: line 3, column 10: "),
            "{error}"
        );
        let error = parse("title = \"x\"\n[databases.app]\nnope = 1\n", "x")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("line 3, column 1: unknown field `nope`"),
            "{error}"
        );
        let unknown_goto = MINIMAL.replace(
            "sql = \"INSERT INTO t VALUES (:attempt)\"",
            "sql = \"SELECT 1\", on.none = { goto = \"nowhere\" }",
        );
        let error = parse(&unknown_goto, "x").unwrap_err().to_string();
        assert!(
            error.contains("goes to \"nowhere\", which is not a step"),
            "{error}"
        );
        // Found after parsing, it is still shown where it is written.
        let line = unknown_goto
            .lines()
            .position(|l| l.contains("nowhere"))
            .unwrap()
            + 1;
        assert!(error.contains(&format!("line {line}, column ")), "{error}");
    }

    #[test]
    fn counts_name_a_parameter_with_an_offset() {
        assert_eq!(count_expression("attempts - 1"), Some(("attempts", -1)));
        assert_eq!(count_expression("attempts+2"), Some(("attempts", 2)));
        assert_eq!(count_expression("attempts"), Some(("attempts", 0)));
        assert_eq!(count_expression("attempts - x"), None);
        assert_eq!(count_expression("- 1"), None);
    }

    #[test]
    fn parsing_the_same_file_again_keeps_no_new_text() {
        let a = leak("a parameter's meaning");
        let b = leak(&String::from("a parameter's meaning"));
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn huge_sources_and_too_many_attempts_are_refused() {
        let huge = format!("title = \"{}\"", "x".repeat(MAX_SOURCE_BYTES));
        assert!(parse(&huge, "x")
            .unwrap_err()
            .to_string()
            .contains("at most"));
        let many = MINIMAL.replace("replicas = 2", "replicas = 27");
        assert!(parse(&many, "x")
            .unwrap_err()
            .to_string()
            .contains("replicas"));
    }
}
