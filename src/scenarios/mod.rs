//! The catalog: the built-in scenarios, each a scenario file in
//! `src/scenarios/builtin/` (see [`crate::format`]), with the libraries
//! they include.

#[cfg(all(test, not(target_family = "wasm")))]
mod params_docs;
pub(crate) mod sweep;

use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

use crate::format::{File, FileScenario, Sources};
use crate::params::{self, Param, Params};
use crate::sim::Scenario;
use crate::storage::EngineOptions;
use crate::{Error, Result};

/// A catalog entry, as the page and the command line list it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The id to run it by.
    pub id: &'static str,
    /// The pattern it belongs to (`idempotency`, `outbox`, `inbox`).
    pub pattern: &'static str,
    /// The reference program it comes from (`idempotency` or `outbox`).
    pub suite: &'static str,
    /// A title.
    pub title: &'static str,
    /// What the scenario shows and what it proves, in a few sentences.
    pub explanation: &'static str,
    /// Whether the design is expected to fail under some schedule.
    pub fails: bool,
    /// What changes in WAL mode (how a broken design fails there), if the
    /// file says.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub wal_note: &'static str,
    /// The parameters it takes, each declared once.
    pub params: &'static [Param],
    /// Whether it is one of the reference program's checks.
    pub reference: bool,
    /// What the page shows beside its run, if anything ([`EXTRAS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Extra>,
}

/// What the page shows beside a built-in's run, declared per built-in in
/// [`EXTRAS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Extra {
    /// The table of response profiles (`profiles()`).
    Profiles,
    /// The relay killed at every crash point (`crashSweep({ inbox })`).
    CrashSweep {
        /// Whether the subscribers keep an inbox.
        inbox: bool,
    },
}

/// The built-ins the page shows something beside, and what.
pub(crate) const EXTRAS: &[(&str, Extra)] = &[
    ("idem-profiles", Extra::Profiles),
    ("idem-in-flight", Extra::Profiles),
    ("outbox-crash-sweep", Extra::CrashSweep { inbox: true }),
    (
        "outbox-crash-sweep-no-inbox",
        Extra::CrashSweep { inbox: false },
    ),
];

/// The built-in whose page runs the crash-point sweep of subscribers with
/// (`inbox`) or without an inbox.
#[cfg(any(target_family = "wasm", test))]
pub(crate) fn sweep_id(inbox: bool) -> &'static str {
    EXTRAS
        .iter()
        .find(|(_, extra)| *extra == Extra::CrashSweep { inbox })
        .map_or("", |(id, _)| id)
}

impl Entry {
    /// The catalog entry of a scenario file: what the page and the embeds
    /// show of a built-in and of a user's file alike.
    pub fn of(file: &File) -> Result<Entry> {
        let declared = file.declared_params()?;
        Ok(Entry {
            id: crate::format::leak(file.id()),
            pattern: crate::format::leak(file.pattern.as_deref().unwrap_or("custom")),
            suite: crate::format::leak(file.suite.as_deref().unwrap_or_default()),
            title: crate::format::leak(&file.title),
            explanation: crate::format::leak(&file.explanation),
            fails: file.fails,
            wal_note: crate::format::leak(&file.wal_note),
            params: Box::leak(declared.into_boxed_slice()),
            reference: file.reference,
            extra: None,
        })
    }
}

/// The libraries of the built-in catalog: parameters, databases and
/// programs that scenario files include by name.
pub(crate) const LIBRARIES: &[(&str, &str)] = &[
    ("idempotency", include_str!("builtin/idempotency.lib.toml")),
    ("outbox", include_str!("builtin/outbox.lib.toml")),
];

/// The built-in scenarios written as files, by id.
pub(crate) const BUILTIN_FILES: &[(&str, &str)] = &[
    ("idem-race", include_str!("builtin/idem-race.toml")),
    ("idem-scope", include_str!("builtin/idem-scope.toml")),
    ("idem-failure", include_str!("builtin/idem-failure.toml")),
    (
        "idem-lost-reply",
        include_str!("builtin/idem-lost-reply.toml"),
    ),
    (
        "idem-retention",
        include_str!("builtin/idem-retention.toml"),
    ),
    (
        "idem-check-then-write",
        include_str!("builtin/idem-check-then-write.toml"),
    ),
    ("idem-deferred", include_str!("builtin/idem-deferred.toml")),
    (
        "idem-deferred-retry",
        include_str!("builtin/idem-deferred-retry.toml"),
    ),
    (
        "idem-no-fingerprint",
        include_str!("builtin/idem-no-fingerprint.toml"),
    ),
    (
        "idem-receipt-later",
        include_str!("builtin/idem-receipt-later.toml"),
    ),
    ("idem-profiles", include_str!("builtin/idem-profiles.toml")),
    (
        "idem-in-flight",
        include_str!("builtin/idem-in-flight.toml"),
    ),
    (
        "idem-power-loss",
        include_str!("builtin/idem-power-loss.toml"),
    ),
    (
        "idem-disk-full",
        include_str!("builtin/idem-disk-full.toml"),
    ),
    (
        "outbox-producer-rollback",
        include_str!("builtin/outbox-producer-rollback.toml"),
    ),
    (
        "outbox-relay-crash",
        include_str!("builtin/outbox-relay-crash.toml"),
    ),
    (
        "outbox-redelivery",
        include_str!("builtin/outbox-redelivery.toml"),
    ),
    (
        "inbox-subscriber-scope",
        include_str!("builtin/inbox-subscriber-scope.toml"),
    ),
    (
        "inbox-payload-conflict",
        include_str!("builtin/inbox-payload-conflict.toml"),
    ),
    (
        "inbox-consumer-rollback",
        include_str!("builtin/inbox-consumer-rollback.toml"),
    ),
    (
        "inbox-lost-history",
        include_str!("builtin/inbox-lost-history.toml"),
    ),
    (
        "outbox-two-relays",
        include_str!("builtin/outbox-two-relays.toml"),
    ),
    (
        "outbox-two-relays-no-inbox",
        include_str!("builtin/outbox-two-relays-no-inbox.toml"),
    ),
    (
        "outbox-crash-sweep",
        include_str!("builtin/outbox-crash-sweep.toml"),
    ),
    (
        "outbox-crash-sweep-no-inbox",
        include_str!("builtin/outbox-crash-sweep-no-inbox.toml"),
    ),
    (
        "inbox-retention",
        include_str!("builtin/inbox-retention.toml"),
    ),
    (
        "inbox-retention-remedy",
        include_str!("builtin/inbox-retention-remedy.toml"),
    ),
    (
        "outbox-power-loss",
        include_str!("builtin/outbox-power-loss.toml"),
    ),
];

/// The source of library `name`.
pub(crate) fn library_source(name: &str) -> Option<&'static str> {
    LIBRARIES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The source of built-in scenario `id`.
pub(crate) fn builtin_source(id: &str) -> Option<&'static str> {
    BUILTIN_FILES
        .iter()
        .find(|(n, _)| *n == id)
        .map(|(_, s)| *s)
}

/// Built-in scenario `id`'s file made whole, to start an edited copy from:
/// the libraries it includes written into it (`[libraries.NAME]`), so that
/// every program it runs is there to read and change.
pub fn editable_source(id: &str) -> Result<String> {
    entry(id)?;
    let source = builtin_source(id).unwrap_or_default();
    crate::format::with_libraries(source, &CATALOG)
}

/// The built-in catalog as the format's [`Sources`]: what the built-ins
/// and a user's file include (`include`) and run before their attempts
/// (`before`).
pub struct Catalog;

/// The built-in catalog.
pub const CATALOG: Catalog = Catalog;

impl Sources for Catalog {
    fn library(&self, name: &str) -> Option<&'static str> {
        library_source(name)
    }
    fn library_names(&self) -> Vec<&'static str> {
        LIBRARIES.iter().map(|(n, _)| *n).collect()
    }
    fn has_scenario(&self, id: &str) -> bool {
        builtin_source(id).is_some()
    }
    fn scenario(&self, id: &str) -> Option<Rc<File>> {
        let index = BUILTIN_FILES.iter().position(|(n, _)| *n == id)?;
        Some(builtin(index).1)
    }
}

/// Parses and checks a user's scenario file against the built-in catalog
/// (see [`crate::format::parse`]).
pub fn parse(source: &str, fallback_id: &str) -> Result<File> {
    crate::format::parse(source, fallback_id, &CATALOG)
}

/// A scenario as a front end names it: a built-in by id, or a user's file
/// (its text parsed against the catalog). Each front end reads its own
/// argument into one (a JavaScript value, a command line's path or id);
/// what follows is the same for all.
pub enum Named {
    /// A built-in, by id.
    Builtin(String),
    /// A user's file.
    File(Box<File>),
}

impl Named {
    /// A user's file: `source` parsed, `name` standing in for a missing id.
    pub fn file(source: &str, name: &str) -> Result<Named> {
        Ok(Named::File(Box::new(parse(source, name)?)))
    }

    /// The scenario, with parameters given as JSON (null: its defaults),
    /// checked against its declarations.
    pub fn build(&self, params: &Value) -> Result<Box<dyn Scenario>> {
        match self {
            Named::Builtin(id) => build_with(id, params),
            Named::File(file) => file.build(params),
        }
    }

    /// Its catalog entry.
    pub fn entry(&self) -> Result<Entry> {
        match self {
            Named::Builtin(id) => entry(id),
            Named::File(file) => Entry::of(file),
        }
    }

    /// Whether its author declares that some schedule makes it fail.
    pub fn fails(&self) -> bool {
        match self {
            Named::Builtin(id) => entry(id).is_ok_and(|e| e.fails),
            Named::File(file) => file.fails,
        }
    }
}

type Parsed = Option<(Entry, Rc<File>)>;
thread_local! {
    static BUILTINS: std::cell::RefCell<Vec<Parsed>> =
        std::cell::RefCell::new(vec![None; BUILTIN_FILES.len()]);
}

/// Built-in `index` (of [`BUILTIN_FILES`]), parsed once per thread and only
/// when first asked for: a page that opens one scenario reads that file
/// (and its library) first, and the others when it lists the catalog.
fn builtin(index: usize) -> (Entry, Rc<File>) {
    if let Some(parsed) = BUILTINS.with(|b| b.borrow()[index].clone()) {
        return parsed;
    }
    let (id, source) = BUILTIN_FILES[index];
    // A test parses every built-in: one that does not is a defect of the
    // build, not of a caller's input.
    let file = crate::format::parse_builtin(source, id, &CATALOG)
        .unwrap_or_else(|e| panic!("built-in scenario {id}: {e}"));
    let mut entry = Entry::of(&file).unwrap_or_else(|e| panic!("built-in scenario {id}: {e}"));
    entry.extra = EXTRAS.iter().find(|(n, _)| *n == id).map(|(_, e)| *e);
    let parsed = (entry, Rc::new(file));
    BUILTINS.with(|b| b.borrow_mut()[index] = Some(parsed.clone()));
    parsed
}

/// How many built-ins this thread has parsed so far (a page opening a link
/// should parse only the scenario it names before drawing it).
pub fn parsed_builtins() -> usize {
    BUILTINS.with(|b| b.borrow().iter().filter(|p| p.is_some()).count())
}

/// Every scenario the scheduler can run.
pub fn catalog() -> Vec<Entry> {
    (0..BUILTIN_FILES.len()).map(|i| builtin(i).0).collect()
}

/// The scenario the page lands on, and what a link opens that names none or
/// one that cannot be opened: short and broken, so that a newcomer's first
/// search shows how a design fails (a test keeps it so).
pub const LANDING: &str = "idem-check-then-write";

/// The landing scenario's entry.
pub(crate) fn landing_entry() -> Option<Entry> {
    entry(LANDING).ok()
}

/// The TypeScript declarations of every scenario's parameters, generated
/// from the declarations (a test keeps the file current).
#[cfg(any(target_family = "wasm", test))]
// Read by wasm-bindgen's `typescript_custom_section`, which dead-code
// analysis does not see.
#[cfg_attr(target_family = "wasm", allow(dead_code))]
pub(crate) const PARAMS_TYPESCRIPT: &str = include_str!("../params.d.ts");

/// Built-in `id`'s entry and file, or an error listing the known ids.
fn builtin_by_id(id: &str) -> Result<(Entry, Rc<File>)> {
    match BUILTIN_FILES.iter().position(|(n, _)| *n == id) {
        Some(index) => Ok(builtin(index)),
        None => {
            let ids: Vec<&str> = BUILTIN_FILES.iter().map(|(n, _)| *n).collect();
            Err(Error::invalid(
                "scenario",
                format!(
                    "unknown scenario {}; known: {}",
                    params::quote(id),
                    ids.join(", ")
                ),
            ))
        }
    }
}

/// The catalog entry of scenario `id`, or an error listing the known ones.
pub fn entry(id: &str) -> Result<Entry> {
    builtin_by_id(id).map(|(entry, _)| entry)
}

/// The file of built-in scenario `id`.
pub(crate) fn file(id: &str) -> Result<Rc<File>> {
    builtin_by_id(id).map(|(_, file)| file)
}

/// Builds a scenario by id with its default parameters.
pub fn build(id: &str) -> Result<Box<dyn Scenario>> {
    build_with(id, &Value::Null)
}

/// Builds a scenario by id with parameters given as JSON (an object, or
/// null for the defaults), checked against the scenario's declarations.
pub fn build_with(id: &str, given: &Value) -> Result<Box<dyn Scenario>> {
    let entry = entry(id)?;
    let params = Params::parse(entry.id, entry.params, given)?;
    build_resolved(&entry, params)
}

/// The engine's options built-in `id` runs with by default (its file's
/// `journal` and `synchronous`, else SQLite's defaults).
pub fn default_options(id: &str) -> Result<EngineOptions> {
    Ok(File::engine_options(&Params::defaults(entry(id)?.params)))
}

/// Builds scenario `id` with its default parameters, run with the engine's
/// `options` (a sweep's journal mode and `synchronous` level, typed).
pub fn build_in(id: &str, options: EngineOptions) -> Result<Box<dyn Scenario>> {
    let entry = entry(id)?;
    let params = Params::defaults(entry.params);
    Ok(Box::new(FileScenario::new_in(file(id)?, &params, options)?))
}

/// Builds a scenario from parameters already checked against its declarations.
pub fn build_resolved(entry: &Entry, params: Params) -> Result<Box<dyn Scenario>> {
    let file = file(entry.id)?;
    Ok(Box::new(FileScenario::new(file, params)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Journal, Synchronous};

    /// Options handed over typed are the ones a scenario runs with and the
    /// ones its parameters show; a sweep that changes one keeps the file's
    /// default of the other.
    #[test]
    fn options_handed_over_typed_are_run_and_shown() {
        let defaults = default_options("idem-power-loss").unwrap();
        assert_eq!(
            (defaults.journal, defaults.synchronous),
            (Journal::Wal, Synchronous::Normal)
        );
        assert_eq!(
            default_options("idem-race").unwrap(),
            EngineOptions::default()
        );
        let options = EngineOptions {
            journal: Journal::Rollback,
            ..defaults
        };
        let scenario = build_in("idem-power-loss", options).unwrap();
        assert_eq!(scenario.options(), options);
        let params = scenario.params();
        assert_eq!(params["journal"], "rollback");
        assert_eq!(params["synchronous"], "normal");
        assert!(default_options("no-such-scenario").is_err());
    }

    /// A built-in is found by the id it is listed under, which is the id
    /// its file declares.
    #[test]
    fn every_builtin_is_listed_under_its_own_id() {
        for (id, _) in BUILTIN_FILES {
            assert_eq!(entry(id).unwrap().id, *id);
        }
        assert_eq!(catalog().len(), BUILTIN_FILES.len());
    }

    /// Every extra is a built-in's, and each sweep names a scenario with a
    /// crash point to sweep.
    #[test]
    fn every_extra_is_a_builtins_and_every_sweep_runs() {
        for (id, extra) in EXTRAS {
            assert_eq!(entry(id).unwrap().extra, Some(*extra));
        }
        for inbox in [true, false] {
            let rows = sweep::crash_sweep(sweep_id(inbox)).unwrap();
            assert!(rows.len() > 3, "{inbox}: {} rows", rows.len());
        }
        assert_eq!(entry("idem-race").unwrap().extra, None);
    }

    /// The catalog reads the built-ins without compiling them at their
    /// defaults (`parse_builtin`); this is the check it leaves out.
    #[test]
    fn every_builtin_passes_the_whole_check_of_a_users_file() {
        for (id, source) in BUILTIN_FILES {
            if let Err(e) = parse(source, id) {
                panic!("built-in {id}: {e}");
            }
        }
    }
}
