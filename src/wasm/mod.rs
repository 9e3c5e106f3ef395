//! The JavaScript face of the crate: every `#[wasm_bindgen]` export lives here.
//!
//! Exports take `JsValue` and check it themselves: [`js_to_json`] turns any
//! JavaScript value into JSON or a clear error (plain data only, no NaN, no
//! lone surrogates, bounded size and depth, and no caller exception ever
//! unwinds through Rust), and [`crate::input`] turns the JSON into typed
//! inputs. Nothing is written before the whole input is accepted. Results
//! cross as plain JSON-compatible objects.

mod boundary;

pub use boundary::js_to_json;

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::patterns::idempotency;
use crate::patterns::{outbox, SessionStore};
use crate::scenarios::{self, Named};
use crate::sim::search;
use crate::sim::search::cache::SharedCache;
use crate::sim::search::split;
use crate::sim::search::{ExploreReport, Explorer, RunResult};
use crate::sim::strategy::{self, Search, Strategy};
use crate::sim::{Status, Verdict};
use crate::storage;
use crate::{input, Error};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = r#"
/** Versions of this build, as `versions()` returns them. */
export interface Versions { replayground: string; sqlite: string; sqliteSourceId: string; }
/** What `roundTrip()` saw through connection B around connection A's write. */
export interface RoundTrip {
  sqliteVersion: string; writtenId: number; readDuringWrite: string[];
  writerLock: string; readAfterCommit: string[];
}
/** A parameter's declaration: what the page builds its control from. */
export type ParamDeclaration = { name: string; default: number | string; meaning: string } & (
  | { type: "whole"; min: number; max: number; multipleOf: number; unit: string; marks: number[] }
  | { type: "text"; maxChars: number }
  | { type: "choice"; options: string[] });
/** A scenario of the catalog. */
export interface CatalogEntry {
  id: ScenarioId; pattern: "idempotency" | "outbox" | "inbox"; title: string;
  suite: "idempotency" | "outbox"; explanation: string; fails: boolean;
  params: ParamDeclaration[]; reference: boolean;
}
/** A scenario file's text (TOML), where an export takes a catalog id; `name` stands in for a missing id. */
export interface ScenarioSource { source: string; name?: string; }
/** How `runScenario` chooses the interleaving. */
export interface RunOptions {
  params?: ScenarioParams;
  strategy?: "round-robin" | "random" | "pct" | "replay";
  seed?: number; depth?: number;
  /** An encoded schedule such as "A3B2A", for strategy "replay". */
  schedule?: string;
  /** false: the run's schedule, verdict and checks without its steps
   * (no `trace`, and faster); true by default. */
  trace?: boolean;
}
/** How `exploreScenario` and `Exploration` search. */
export interface ExploreOptions {
  params?: ScenarioParams;
  strategy?: "exhaustive" | "random" | "pct";
  /** Sampled runs, or an exhaustive search's run budget (`resume()` continues past it). */
  runs?: number; seed?: number; depth?: number; preemptionBound?: number;
  /** Exhaustive search: reductions to turn off, to compare. */
  without?: ("state-caching" | "symmetry" | "partial-order")[];
  /** Exhaustive search: this worker's part of a search split across `count` workers (see `mergeExplorations`). */
  shard?: { index: number; count: number };
}
/** One idempotent request for `IdempotencySession.execute`. */
export interface RequestInput { tenant: string; operation: string; key: string; quantity: number; now: number; }
"#;

/// Each scenario's parameters, generated from their declarations.
#[wasm_bindgen(typescript_custom_section)]
const PARAMS_TS: &str = crate::scenarios::PARAMS_TYPESCRIPT;

/// `performance.now()`: a monotonic clock in milliseconds, in a page or a worker.
fn performance_now() -> f64 {
    let global = js_sys::global();
    let performance = match global.dyn_ref::<web_sys::Window>() {
        Some(window) => window.performance(),
        None => global
            .dyn_ref::<web_sys::WorkerGlobalScope>()
            .and_then(web_sys::WorkerGlobalScope::performance),
    };
    performance.map_or(0.0, |p| p.now())
}

/// Installs the panic hook, so a panic (a bug) reaches the console with its message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// A result as a plain JavaScript object: written as JSON text here and
/// parsed by the engine's `JSON.parse`, one crossing of the boundary. Built
/// value by value from Rust instead (serde-wasm-bindgen), a request's
/// result of about a hundred strings and numbers cost several times more.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let text = serde_json::to_string(value)
        .map_err(|e| JsError::new(&format!("cannot convert the result for JavaScript: {e}")))?;
    js_sys::JSON::parse(&text)
        .map_err(|_| JsError::new("cannot convert the result for JavaScript: not JSON"))
}

/// A whole-number argument in `min..=max` (`None` when undefined or null).
fn number_arg(
    field: &'static str,
    value: &JsValue,
    min: i64,
    max: i64,
) -> Result<Option<i64>, JsError> {
    let mut map = serde_json::Map::new();
    map.insert(field.to_string(), js_to_json(value)?);
    input::whole(&map, field, min, max).map_err(JsError::from)
}

/// A required string argument.
fn string_arg(field: &'static str, value: &JsValue) -> Result<String, JsError> {
    match js_to_json(value)? {
        Value::String(s) => Ok(s),
        Value::Null => Err(JsError::from(Error::invalid(field, "is required"))),
        _ => Err(JsError::from(Error::invalid(field, "expected a string"))),
    }
}

/// An optional options object, as JSON (`{}` when absent).
fn options_arg(value: &JsValue) -> Result<serde_json::Map<String, Value>, JsError> {
    match js_to_json(value)? {
        Value::Null => Ok(serde_json::Map::new()),
        Value::Object(map) => Ok(map),
        _ => Err(JsError::from(Error::invalid(
            "options",
            "expected an object",
        ))),
    }
}

/// The crate and SQLite versions of this module.
#[wasm_bindgen(js_name = versions, unchecked_return_type = "Versions")]
pub fn versions() -> Result<JsValue, JsError> {
    to_js(&storage::Versions::current())
}

/// Writes `note` through one SQLite connection and reads it through another.
#[wasm_bindgen(js_name = roundTrip, unchecked_return_type = "RoundTrip")]
pub fn round_trip(
    #[wasm_bindgen(unchecked_param_type = "string")] note: JsValue,
) -> Result<JsValue, JsError> {
    if !note.is_string() {
        return Err(JsError::new("invalid note: expected a string"));
    }
    let note = string_arg("note", &note)?;
    to_js(&storage::round_trip(&note)?)
}

/// Parses a permalink's query string (`location.search`): `{ scenario,
/// params, schedule, step }`, or an Error saying what is malformed.
#[wasm_bindgen(js_name = parsePermalink)]
pub fn parse_permalink(
    #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
) -> Result<JsValue, JsError> {
    let query = string_arg("link", &query)?;
    to_js(&input::permalink(&query)?)
}

/// The scenario catalog.
#[wasm_bindgen(js_name = scenarios, unchecked_return_type = "CatalogEntry[]")]
pub fn scenario_catalog() -> Result<JsValue, JsError> {
    to_js(&scenarios::catalog())
}

/// What the catalog says of a scenario, for an id or a scenario file's
/// source (`{ source, name? }`): its id, title, explanation, whether it is
/// meant to fail, and its parameters. A file with a mistake is an Error that
/// gives its line and column; a file whose schema or seed fails, or whose
/// earlier scenarios do not run, is an Error too.
#[wasm_bindgen(js_name = describeScenario, unchecked_return_type = "CatalogEntry")]
pub fn describe_scenario(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] scenario: JsValue,
) -> Result<JsValue, JsError> {
    let scenario = ScenarioArg::read(&scenario)?;
    if let Named::File(_) = scenario {
        // Set up once with its defaults: a schema or seed that fails is a
        // mistake the editor shows before the design is run.
        Explorer::new(scenario.build(&Value::Null)?)?;
    }
    to_js(&scenario.entry()?)
}

/// The source of a built-in scenario: the file to start an edited copy from.
#[wasm_bindgen(js_name = scenarioSource)]
pub fn scenario_source(
    #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
) -> Result<String, JsError> {
    let id = match js_to_json(&id)? {
        Value::String(id) => id,
        _ => {
            return Err(JsError::from(Error::invalid(
                "scenario",
                "give a scenario id",
            )))
        }
    };
    scenarios::entry(&id)?;
    Ok(scenarios::builtin_source(&id)
        .unwrap_or_default()
        .to_string())
}

/// The response profiles side by side: retention, error storage, answers.
#[wasm_bindgen(js_name = profiles)]
pub fn profile_table() -> Result<JsValue, JsError> {
    to_js(&idempotency::profiles()?)
}

/// What an export is asked to run: a catalog id, or `{ source, name? }`,
/// the text of a scenario file (its `name` stands in for a missing id).
struct ScenarioArg;

impl ScenarioArg {
    fn read(value: &JsValue) -> Result<Named, JsError> {
        match js_to_json(value)? {
            Value::String(id) => Ok(Named::Builtin(id)),
            Value::Object(map) => {
                input::only(&map, &["source", "name"], "scenario")?;
                let source = input::text(&map, "source", crate::format::MAX_SOURCE_BYTES)?
                    .ok_or_else(|| Error::invalid("source", "is required"))?;
                let name =
                    input::text(&map, "name", 64)?.unwrap_or_else(|| "my-scenario".to_string());
                Ok(Named::file(&source, &name)?)
            }
            Value::Null => Err(JsError::from(Error::invalid("scenario", "is required"))),
            _ => Err(JsError::from(Error::invalid(
                "scenario",
                "expected a catalog id or { source }",
            ))),
        }
    }
}

/// The run of `schedule` as a standalone Python script that replays it on
/// real SQLite files and compares every result (`replayground export`).
/// `options`: `{ schedule, params? }`; the schedule must be a whole run.
#[wasm_bindgen(js_name = exportPython)]
pub fn export_python(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "{ schedule: string; params?: object }")]
    options: JsValue,
) -> Result<String, JsError> {
    let scenario = ScenarioArg::read(&id)?;
    let mut options = options_arg(&options)?;
    input::only(&options, &["params", "schedule"], "options")?;
    let params = options.remove("params").unwrap_or(Value::Null);
    let schedule = input::text(&options, "schedule", 2 * crate::sim::schedule::MAX_STEPS)?
        .ok_or_else(|| Error::invalid("schedule", "is required"))?;
    let explorer = Explorer::new(scenario.build(&params)?)?;
    let schedule = explorer.parse_schedule(&schedule)?;
    crate::export::python(&explorer, &schedule).map_err(JsError::from)
}

/// Gives the engine a flag to hear a caller that wants it to stop: an
/// `Int32Array` whose first element another thread sets to non-zero (on a
/// `SharedArrayBuffer`, with `Atomics.store`) while this one is inside a
/// call. The engine reads it before every step of a run and every thousand
/// SQLite instructions of a statement; once it is set, the run under way is
/// abandoned within moments: `runScenario`, `exploreScenario` and a
/// stepper's `step` throw "interrupted: …", and an `Exploration`'s
/// `advance` returns done, its report saying it was interrupted (it cannot
/// be resumed). Clear the flag before the next call. `null` removes it.
#[wasm_bindgen(js_name = setInterrupt)]
pub fn set_interrupt(
    #[wasm_bindgen(unchecked_param_type = "Int32Array | null | undefined")] flag: JsValue,
) -> Result<(), JsError> {
    if flag.is_null() || flag.is_undefined() {
        crate::storage::set_interrupt(None);
        return Ok(());
    }
    let array: js_sys::Int32Array = flag.dyn_into().map_err(|_| {
        JsError::from(Error::invalid(
            "flag",
            "expected an Int32Array (on a SharedArrayBuffer, for another thread to set), or null",
        ))
    })?;
    if array.length() == 0 {
        return Err(JsError::from(Error::invalid(
            "flag",
            "the Int32Array is empty: its first element is the flag",
        )));
    }
    let asks = move || js_sys::Atomics::load(&array, 0).is_ok_and(|v| v != 0);
    crate::storage::set_interrupt(Some(std::rc::Rc::new(asks)));
    Ok(())
}

/// Runs a scenario once, with a strategy or an encoded schedule, and
/// returns the full trace (unless option `trace` is false) and checks.
#[wasm_bindgen(js_name = runScenario)]
pub fn run_scenario(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RunOptions | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let scenario = ScenarioArg::read(&id)?;
    let mut options = options_arg(&options)?;
    input::only(
        &options,
        &["params", "strategy", "seed", "depth", "schedule", "trace"],
        "options",
    )?;
    let record = input::flag(&options, "trace")?.unwrap_or(true);
    options.remove("trace");
    let params = options.remove("params").unwrap_or(Value::Null);
    let schedule = input::text(&options, "schedule", 2 * crate::sim::schedule::MAX_STEPS)?;
    let replay = options.get("strategy").and_then(Value::as_str) == Some("replay");
    options.remove("schedule");
    let result = if replay {
        options.remove("strategy");
        input::only(
            &options,
            &[],
            "options (strategy replay takes only a schedule)",
        )?;
        let text = schedule.ok_or_else(|| {
            JsError::from(Error::invalid(
                "schedule",
                "is required for strategy replay",
            ))
        })?;
        let explorer = Explorer::new(scenario.build(&params)?)?;
        explorer
            .parse_schedule(&text)
            .and_then(|s| explorer.replay(&s, record))
    } else {
        if schedule.is_some() {
            return Err(JsError::from(Error::invalid(
                "schedule",
                "is only taken with strategy replay",
            )));
        }
        let strategy = Strategy::from_json(&options, strategy::Kind::RoundRobin)?;
        if strategy.kind == strategy::Kind::Exhaustive {
            return Err(JsError::from(Error::invalid(
                "strategy",
                "runScenario makes one run; use exploreScenario or Exploration to search every interleaving",
            )));
        }
        let explorer = Explorer::new(scenario.build(&params)?)?;
        strategy
            .scheduler(0)
            .and_then(|mut scheduler| explorer.run(scheduler.as_mut(), record))
    }?;
    to_js(&result)
}

/// Searches a scenario's interleavings at once (for small searches; use
/// `Exploration` to show progress and cancel).
#[wasm_bindgen(js_name = exploreScenario)]
pub fn explore_scenario(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ExploreOptions | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let mut exploration = Exploration::new(id, options)?;
    while !exploration.done {
        exploration.advance_runs(u64::MAX)?;
    }
    exploration.report()
}

/// The options of `exploreScenario`, `Exploration` and `mergeExplorations`
/// (`ExploreOptions`; `mergeExplorations` reads only `params`).
const EXPLORE_OPTIONS: &[&str] = &[
    "params",
    "strategy",
    "runs",
    "seed",
    "depth",
    "preemptionBound",
    "without",
    "shard",
];

/// The most words one `addFinished` call takes (32 MiB).
const MAX_FINISHED_WORDS: u32 = 4 << 20;

/// Merges the parts of a search split across workers (each a shard's
/// `part()`) into one report; `options` are the search's own (without
/// `shard`), `cancelled` whether it was cancelled.
#[wasm_bindgen(js_name = mergeExplorations)]
pub fn merge_explorations(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ExploreOptions | undefined")] options: JsValue,
    #[wasm_bindgen(unchecked_param_type = "object[]")] parts: JsValue,
    #[wasm_bindgen(unchecked_param_type = "boolean")] cancelled: JsValue,
) -> Result<JsValue, JsError> {
    let scenario = ScenarioArg::read(&id)?;
    let options = options_arg(&options)?;
    input::only(&options, EXPLORE_OPTIONS, "options")?;
    let params = options.get("params").cloned().unwrap_or(Value::Null);
    let parts: Vec<split::Part> = match js_to_json(&parts)? {
        Value::Array(items) if !items.is_empty() && items.len() <= split::MAX_WORKERS => items
            .into_iter()
            .map(serde_json::from_value)
            .collect::<Result<_, _>>()
            .map_err(|e| JsError::from(Error::invalid("parts", e.to_string())))?,
        _ => {
            return Err(JsError::from(Error::invalid(
                "parts",
                format!(
                    "expected 1 to {} parts (each a shard's part())",
                    split::MAX_WORKERS
                ),
            )))
        }
    };
    let cancelled = match cancelled.as_bool() {
        Some(b) => b,
        None => {
            return Err(JsError::from(Error::invalid(
                "cancelled",
                "expected true or false",
            )))
        }
    };
    let explorer = Explorer::new(scenario.build(&params)?)?;
    to_js(&explorer.report_parts(&parts, cancelled)?)
}

/// A search that runs in slices: `advance(runs)` explores that many runs and
/// returns progress; `report()` gives the result, `cancel()` stops it.
#[wasm_bindgen]
pub struct Exploration {
    explorer: Explorer,
    search: Search,
    /// A shard's cache of finished states (`None` unless `shard` was given).
    cache: Option<std::sync::Arc<SharedCache>>,
    done: bool,
    cancelled: bool,
    /// Whether the caller interrupted a run of it (`setInterrupt`): that
    /// run is lost, so the search cannot go on, and its report is of the
    /// runs that finished before.
    interrupted: bool,
    report: Option<ExploreReport>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressView {
    done: bool,
    stats: search::Stats,
    /// Runs planned, when known (sampling strategies).
    planned_runs: Option<u64>,
}

#[wasm_bindgen]
impl Exploration {
    /// Prepares a search of scenario `id`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ExploreOptions | undefined")] options: JsValue,
    ) -> Result<Exploration, JsError> {
        let scenario = ScenarioArg::read(&id)?;
        let mut options = options_arg(&options)?;
        input::only(&options, EXPLORE_OPTIONS, "options")?;
        let params = options.remove("params").unwrap_or(Value::Null);
        let strategy = Strategy::from_json(&options, strategy::Kind::Exhaustive)?;
        let explorer = Explorer::new(scenario.build(&params)?)?;
        let mut search = strategy.search();
        // A shard of a split search keeps what it finishes, to send it to
        // the other workers, and cuts at what they send.
        let cache = strategy
            .shard
            .map(|_| std::sync::Arc::new(SharedCache::sending()));
        if let (Some(cache), Search::Exhaustive(dfs)) = (&cache, &mut search) {
            dfs.share(cache.clone());
        }
        Ok(Exploration {
            explorer,
            search,
            cache,
            done: false,
            cancelled: false,
            interrupted: false,
            report: None,
        })
    }

    /// A shard of a split search (option `shard`): the states it finished
    /// since the last call, as words to give the other shards'
    /// `addFinished`.
    #[wasm_bindgen(js_name = takeFinished)]
    pub fn take_finished(&self) -> Vec<u64> {
        self.cache
            .as_ref()
            .map(|c| c.take_published())
            .unwrap_or_default()
    }

    /// A shard of a split search: adds the states another shard finished
    /// (its `takeFinished()` words, a BigUint64Array); returns how many.
    #[wasm_bindgen(js_name = addFinished)]
    pub fn add_finished(
        &self,
        #[wasm_bindgen(unchecked_param_type = "BigUint64Array")] words: JsValue,
    ) -> Result<u32, JsError> {
        let Some(cache) = &self.cache else {
            return Err(JsError::new(
                "only a shard of a split search (option shard) takes finished states",
            ));
        };
        let Some(words) = words.dyn_ref::<js_sys::BigUint64Array>() else {
            return Err(JsError::from(Error::invalid(
                "finished states",
                "expected the BigUint64Array takeFinished() gives",
            )));
        };
        if words.length() > MAX_FINISHED_WORDS {
            return Err(JsError::from(Error::invalid(
                "finished states",
                format!("at most {MAX_FINISHED_WORDS} words at once"),
            )));
        }
        let count = cache.import(&words.to_vec())?;
        Ok(count as u32)
    }

    /// An exhaustive search's result as a part to merge with the other
    /// shards' (`mergeExplorations`), once done or cancelled.
    pub fn part(&self) -> Result<JsValue, JsError> {
        if !self.done {
            return Err(JsError::new(
                "the exploration is not over: call advance() until done, or cancel()",
            ));
        }
        match &self.search {
            Search::Exhaustive(dfs) => {
                let mut part = dfs.part();
                if self.interrupted {
                    // Its interrupted run's branch is lost with the run.
                    part.interrupted = true;
                    part.frontier = None;
                }
                to_js(&part)
            }
            Search::Sample(_) => Err(JsError::new(
                "only an exhaustive search is split into parts",
            )),
        }
    }

    /// Explores up to `runs` more runs; returns `{ done, stats, plannedRuns }`.
    pub fn advance(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] runs: JsValue,
    ) -> Result<JsValue, JsError> {
        let runs = number_arg("runs", &runs, 1, 1_000_000)?
            .ok_or_else(|| Error::invalid("runs", "is required"))?;
        self.advance_runs(runs as u64)?;
        to_js(&self.progress())
    }

    /// Stops the search; `report()` then says it was cancelled.
    pub fn cancel(&mut self) {
        if !self.done {
            self.cancelled = true;
            self.done = true;
        }
    }

    /// Lets a search stopped by its budget or by `cancel()` go on from where
    /// it stopped: `runs` more runs, or as many as its first budget (a
    /// search without one goes on until complete). Returns progress, as
    /// `advance` does; then call `advance` again.
    pub fn resume(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number | undefined")] runs: JsValue,
    ) -> Result<JsValue, JsError> {
        let runs = number_arg("runs", &runs, 1, strategy::MAX_RUNS as i64)?;
        if !self.done {
            return Err(JsError::new(
                "the exploration has not stopped: there is nothing to resume",
            ));
        }
        if self.interrupted {
            return Err(JsError::new(
                "the exploration was interrupted in the middle of a run, which is lost: start a new one",
            ));
        }
        if !self.search.extend(runs.map(|r| r as u64)) {
            return Err(JsError::new(
                "the exploration is over: nothing is left to explore",
            ));
        }
        self.cancelled = false;
        self.done = false;
        self.report = None;
        to_js(&self.progress())
    }

    /// The search's result (once done or cancelled).
    pub fn report(&mut self) -> Result<JsValue, JsError> {
        if !self.done {
            return Err(JsError::new(
                "the exploration is not over: call advance() until done, or cancel()",
            ));
        }
        if self.report.is_none() {
            let mut report = self.search.report(&self.explorer, self.cancelled)?;
            if self.interrupted {
                // What was left is not known: the interrupted run's branch
                // was lost with it.
                report.bounded_by = Some(crate::sim::search::INTERRUPTED.into());
                report.frontier = None;
                report.complete = false;
            }
            self.report = Some(report);
        }
        to_js(&self.report)
    }
}

impl Exploration {
    fn progress(&self) -> ProgressView {
        ProgressView {
            done: self.done,
            stats: self.search.stats(),
            planned_runs: self.search.planned(),
        }
    }

    fn advance_runs(&mut self, runs: u64) -> Result<(), Error> {
        if !self.done {
            match self.search.advance(&self.explorer, runs) {
                Ok(done) => self.done = done,
                // Heard in a run, or in a statement outside one (a check, a
                // checkpoint's redo): either way the caller asked.
                Err(e) if matches!(e, Error::Interrupted) || crate::storage::interrupt_asked() => {
                    self.interrupted = true;
                    self.cancelled = true;
                    self.done = true;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Manual stepping: a person picks the attempt that takes each step; undo
/// takes one step back. Every state is the exact replay of its schedule.
#[wasm_bindgen]
pub struct Stepper {
    explorer: Explorer,
    choices: Vec<usize>,
    /// Where the cycle of a schedule that goes round for ever starts, while
    /// the choices are that schedule's ([`Stepper::set_schedule`]).
    cycle_from: Option<usize>,
    fails: bool,
    /// Committed tables before the first step (read once).
    initial_tables: Tables,
    /// Whether they were left out, being more than a trace may keep.
    initial_tables_left_out: bool,
}

/// Each database's tables, by name.
type Tables =
    std::collections::BTreeMap<String, std::collections::BTreeMap<String, crate::sim::Table>>;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepperView {
    scenario: String,
    /// The parameter values the scenario runs with (defaults filled in).
    params: serde_json::Map<String, Value>,
    labels: Vec<String>,
    /// The letter each attempt goes by in schedules (its label where
    /// labels are single letters): the key that steps it.
    letters: Vec<char>,
    schedule: String,
    runnable: Vec<usize>,
    statuses: Vec<Status>,
    verdict: Option<Verdict>,
    result: Option<RunResult>,
    trace: Vec<crate::sim::TraceStep>,
    /// One sentence per step, and for a run that goes round for ever the
    /// steps that repeat ([`crate::sim::search::explain`]).
    explanation: Vec<String>,
    /// Committed tables before the first step.
    initial_tables: Tables,
    /// Whether they were left out, being more than a trace may keep.
    initial_tables_left_out: bool,
    /// Whether the scenario is expected to fail under some schedule.
    expected_to_fail: bool,
}

#[wasm_bindgen]
impl Stepper {
    /// A stepper at the start of scenario `id` (options: `{ params }`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ params?: ScenarioParams } | undefined")]
        options: JsValue,
    ) -> Result<Stepper, JsError> {
        let scenario = ScenarioArg::read(&id)?;
        let options = options_arg(&options)?;
        input::only(&options, &["params"], "options")?;
        let explorer =
            Explorer::new(scenario.build(options.get("params").unwrap_or(&Value::Null))?)?;
        let mut initial_tables = explorer
            .start(false)
            .and_then(|run| run.committed_tables())?;
        // Held to what a trace may keep, as each step's tables are.
        let initial_tables_left_out =
            crate::sim::tables_size(&initial_tables) > crate::sim::BUDGETS.trace_bytes;
        if initial_tables_left_out {
            initial_tables.clear();
        }
        Ok(Stepper {
            explorer,
            choices: Vec::new(),
            cycle_from: None,
            fails: scenario.fails(),
            initial_tables,
            initial_tables_left_out,
        })
    }

    /// The current state: runnable attempts, statuses, trace, and the
    /// result once the run is over.
    pub fn state(&self) -> Result<JsValue, JsError> {
        let run = self.replay()?;
        to_js(&self.view(run, self.cycle_from)?)
    }

    /// Lets attempt `attempt` (0 for A) take the next step.
    pub fn step(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] attempt: JsValue,
    ) -> Result<JsValue, JsError> {
        let map = serde_json::json!({ "attempt": js_to_json(&attempt)? });
        let attempt = input::whole(map.as_object().expect("object"), "attempt", 0, 25)?
            .ok_or_else(|| Error::invalid("attempt", "is required"))?
            as usize;
        let mut run = self.replay()?;
        run.step(attempt)?;
        // The run now is the replay of the choices and this step: its view
        // is the new state (no second replay). A step taken from a run that
        // goes round for ever is a run of its own, whose cycle is not known.
        let view = self.view(run, None)?;
        self.choices.push(attempt);
        self.cycle_from = None;
        to_js(&view)
    }

    /// Takes back the last step.
    pub fn undo(&mut self) -> Result<JsValue, JsError> {
        self.choices.pop();
        self.cycle_from = None;
        self.state()
    }

    /// Replaces the steps with an encoded schedule (all of it must fit).
    #[wasm_bindgen(js_name = setSchedule)]
    pub fn set_schedule(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] schedule: JsValue,
    ) -> Result<JsValue, JsError> {
        let text = string_arg("schedule", &schedule)?;
        let schedule = self.explorer.parse_schedule(&text)?;
        if schedule.cycle_from().is_some() {
            // Its cycle must bring the run back where it started.
            self.explorer.replay(&schedule, false)?;
        }
        let previous = (
            std::mem::replace(&mut self.choices, schedule.steps().to_vec()),
            std::mem::replace(&mut self.cycle_from, schedule.cycle_from()),
        );
        let view = self
            .replay()
            .and_then(|run| self.view(run, self.cycle_from));
        match view {
            Ok(view) => to_js(&view),
            Err(e) => {
                (self.choices, self.cycle_from) = previous;
                Err(JsError::from(e))
            }
        }
    }
}

impl Stepper {
    fn replay(&self) -> Result<crate::sim::Run<'_>, Error> {
        let mut run = self.explorer.start(true)?;
        for (i, &choice) in self.choices.iter().enumerate() {
            run.step(choice).map_err(|e| {
                Error::invalid("schedule", format!("step {} does not fit: {e}", i + 1))
            })?;
        }
        Ok(run)
    }

    /// What `run` (a replay of this stepper's choices) shows.
    fn view(
        &self,
        run: crate::sim::Run<'_>,
        cycle_from: Option<usize>,
    ) -> Result<StepperView, Error> {
        let result = if let Some(from) = cycle_from {
            Some(self.explorer.looping(&run, from, false)?)
        } else if run.is_stopped() {
            Some(self.explorer.finish(&run, false)?)
        } else {
            None
        };
        let explanation = crate::sim::search::explain(
            run.trace().unwrap_or_default(),
            result
                .as_ref()
                .map_or(&Verdict::Completed, |result| &result.verdict),
        );
        Ok(StepperView {
            scenario: self.explorer.scenario_id().to_string(),
            params: self.explorer.params(),
            labels: run.labels(),
            letters: self.explorer.schedule_letters().to_vec(),
            schedule: match &result {
                Some(result) => result.schedule.clone(),
                None => self.explorer.show_schedule(&run.schedule()),
            },
            runnable: run.runnable(),
            statuses: run.statuses().to_vec(),
            verdict: result.as_ref().map(|result| result.verdict.clone()),
            result,
            explanation,
            trace: run.trace().map(<[_]>::to_vec).unwrap_or_default(),
            initial_tables: self.initial_tables.clone(),
            initial_tables_left_out: self.initial_tables_left_out,
            expected_to_fail: self.fails,
        })
    }
}

/// A database of receipts to send single requests to, one at a time.
#[wasm_bindgen]
pub struct IdempotencySession {
    store: SessionStore,
    sent: u32,
}

#[wasm_bindgen]
impl IdempotencySession {
    /// An empty database with the reference schema.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<IdempotencySession, JsError> {
        let store = idempotency::session("session")?;
        Ok(IdempotencySession { store, sent: 0 })
    }

    /// Sends one request; returns its outcome and steps (`counts()` gives the
    /// counts). A request that is not valid is refused before anything is written.
    pub fn execute(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "RequestInput")] request: JsValue,
    ) -> Result<JsValue, JsError> {
        let request = input::request(&js_to_json(&request)?)?;
        self.sent += 1;
        let label = format!("request {}", self.sent);
        to_js(&idempotency::execute_alone(&self.store, &label, request)?)
    }

    /// `{ effects, receipts }` now.
    pub fn counts(&self) -> Result<JsValue, JsError> {
        let (effects, receipts) = idempotency::counts(&self.store)?;
        to_js(&serde_json::json!({ "effects": effects, "receipts": receipts }))
    }

    /// The bytes of the database file, to compare before and after.
    #[wasm_bindgen(js_name = databaseBytes)]
    pub fn database_bytes(&self) -> Vec<u8> {
        self.store.file_bytes(idempotency::DB).unwrap_or_default()
    }
}

/// A producer and a consumer database to create orders, relay and deliver
/// events to, one operation at a time.
#[wasm_bindgen]
pub struct OutboxSession {
    store: SessionStore,
}

#[wasm_bindgen]
impl OutboxSession {
    /// Empty producer and consumer databases with the reference schemas.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<OutboxSession, JsError> {
        let store = outbox::session("outbox-session")?;
        Ok(OutboxSession { store })
    }

    /// Creates an order and its outbox event: `{ orderId, amount }`. Returns
    /// its outcome and steps, as every operation of the session does
    /// (`counts()` gives the counts).
    #[wasm_bindgen(js_name = createOrder)]
    pub fn create_order(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "{ orderId: string; amount: number }")]
        order: JsValue,
    ) -> Result<JsValue, JsError> {
        let event = input::order(&js_to_json(&order)?)?;
        to_js(&outbox::create_order_alone(&self.store, event)?)
    }

    /// Delivers an event to a subscriber through its inbox:
    /// `{ subscriber: "audit" | "search", event: { eventId, payload: { order_id, amount } } }`.
    pub fn deliver(
        &mut self,
        #[wasm_bindgen(
            unchecked_param_type = "{ subscriber: string; event: { eventId: string; payload: { order_id: string; amount: number } } }"
        )]
        delivery: JsValue,
    ) -> Result<JsValue, JsError> {
        let (subscriber, event) = input::delivery(&js_to_json(&delivery)?)?;
        to_js(&outbox::deliver_alone(&self.store, &subscriber, event)?)
    }

    /// Runs a relay until nothing is unsent.
    pub fn relay(&mut self) -> Result<JsValue, JsError> {
        to_js(&outbox::relay_alone(&self.store)?)
    }

    /// `{ orders, outbox, pending, inbox, effects: { audit, search } }` now.
    pub fn counts(&self) -> Result<JsValue, JsError> {
        to_js(&outbox::counts(&self.store)?)
    }

    /// The bytes of both database files, producer then consumer.
    #[wasm_bindgen(js_name = databaseBytes)]
    pub fn database_bytes(&self) -> Vec<u8> {
        let mut bytes = self.store.file_bytes(outbox::PRODUCER).unwrap_or_default();
        bytes.extend(self.store.file_bytes(outbox::CONSUMER).unwrap_or_default());
        bytes
    }
}

/// Kills the outbox relay after every possible step, restarts it, and
/// returns the table: crash point, what was committed, what the restart did,
/// verdict. `options`: `{ inbox: false }` sweeps subscribers without an inbox.
#[wasm_bindgen(js_name = crashSweep)]
pub fn crash_sweep(
    #[wasm_bindgen(unchecked_param_type = "{ inbox?: boolean } | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let options = options_arg(&options)?;
    input::only(&options, &["inbox"], "options")?;
    let inbox = match options.get("inbox") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => true,
        Some(Value::Bool(false)) => false,
        Some(_) => {
            return Err(JsError::from(Error::invalid(
                "inbox",
                "expected true or false",
            )))
        }
    };
    let id = if inbox {
        "outbox-crash-sweep"
    } else {
        "outbox-crash-sweep-no-inbox"
    };
    to_js(&scenarios::sweep::crash_sweep(id)?)
}

/// A helper worker's warm-up (see `engine.js`): searches a bundled design
/// as a shard of a split search for about `ms` milliseconds (1 to 10,000;
/// 250 if not given) and returns its counters.
#[wasm_bindgen(js_name = warmUp, unchecked_return_type = "Record<string, number>")]
pub fn warm_up(
    #[wasm_bindgen(unchecked_param_type = "number | undefined")] ms: JsValue,
) -> Result<JsValue, JsError> {
    let ms = number_arg("ms", &ms, 1, 10_000)?.unwrap_or(250);
    to_js(&crate::bench::warm_up(ms as f64, &performance_now)?)
}

/// Measures the engine in this browser: `rounds` timed rounds of `iterations`
/// operations per measurement.
#[wasm_bindgen(js_name = benchEngine)]
pub fn bench_engine(
    #[wasm_bindgen(unchecked_param_type = "number")] rounds: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] iterations: JsValue,
) -> Result<JsValue, JsError> {
    let budget = crate::bench::Budget {
        rounds: number_arg("rounds", &rounds, 1, 1000)?.unwrap_or(15) as u32,
        iterations: number_arg("iterations", &iterations, 1, 1_000_000)?.unwrap_or(2000) as u32,
    };
    to_js(&crate::bench::engine(budget, &performance_now)?)
}
