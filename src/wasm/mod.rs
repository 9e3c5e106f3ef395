//! The JavaScript face of the crate: every `#[wasm_bindgen]` export lives here.
//!
//! Exports take `JsValue` and check it themselves: [`js_to_json`] turns any
//! JavaScript value into JSON or a clear error (plain data only, no NaN, no
//! lone surrogates, bounded size and depth, and no caller exception ever
//! unwinds through Rust), and [`crate::input`] turns the JSON into typed
//! inputs. Nothing is written before the whole input is accepted. Results
//! cross as plain JSON-compatible objects.

mod boundary;
mod exploration;
mod sessions;
mod stepper;

pub use boundary::js_to_json;
pub use exploration::{explore_scenario, Exploration};
pub use sessions::{IdempotencySession, OutboxSession};
pub use stepper::Stepper;

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::patterns::idempotency;
use crate::scenarios::{self, Named};
use crate::sim::search::split;
use crate::sim::search::strategy::{self, Strategy};
use crate::sim::search::Explorer;
use crate::storage;
use crate::{input, json, Error};

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
  /** What the page shows beside the run: the profiles table, the crash-point sweep. */
  extra?: { kind: "profiles" } | { kind: "crashSweep"; inbox: boolean };
}
/** What `checkScenario` found: the entry, or the first mistake (at its line and column, when it has a place). */
export type ScenarioCheck = { entry: CatalogEntry } | { error: string; line?: number; column?: number };
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
  /** Exhaustive search: the report's `finalDigest`, a digest of the set of final states that
   * does not depend on the machine (the command line's `--final-digest` gives the same). */
  finalDigests?: boolean;
}
/** One idempotent request for `IdempotencySession.execute`. */
export interface RequestInput { tenant: string; operation: string; key: string; quantity: number; now: number; }
"#;

/// Each scenario's parameters, generated from their declarations.
#[wasm_bindgen(typescript_custom_section)]
const PARAMS_TS: &str = crate::scenarios::PARAMS_TYPESCRIPT;

/// The environment's `performance` (`globalThis.performance`: a page's, a
/// worker's or Node.js's), whose `now()` is a monotonic clock in
/// milliseconds; an Error where there is none, since a clock that stands
/// still would make a timed loop endless.
pub(super) fn performance() -> Result<web_sys::Performance, JsError> {
    js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
        .ok()
        .filter(JsValue::is_object)
        .map(JsCast::unchecked_into)
        .ok_or_else(|| JsError::new("this environment has no performance.now() to time with"))
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
pub(super) fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let text = serde_json::to_string(value)
        .map_err(|e| JsError::new(&format!("cannot convert the result for JavaScript: {e}")))?;
    js_sys::JSON::parse(&text)
        .map_err(|_| JsError::new("cannot convert the result for JavaScript: not JSON"))
}

/// A whole-number argument in `min..=max` (`None` when undefined or null).
pub(super) fn number_arg(
    field: &'static str,
    value: &JsValue,
    min: i64,
    max: i64,
) -> Result<Option<i64>, JsError> {
    let mut map = serde_json::Map::new();
    map.insert(field.to_string(), js_to_json(value)?);
    json::whole(&map, field, min, max).map_err(JsError::from)
}

/// A required string argument.
pub(super) fn string_arg(field: &'static str, value: &JsValue) -> Result<String, JsError> {
    match js_to_json(value)? {
        Value::String(s) => Ok(s),
        Value::Null => Err(JsError::from(Error::invalid(field, "is required"))),
        _ => Err(JsError::from(Error::invalid(field, "expected a string"))),
    }
}

/// An optional options object, as JSON (`{}` when absent).
pub(super) fn options_arg(value: &JsValue) -> Result<serde_json::Map<String, Value>, JsError> {
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
/// earlier scenarios do not run, is an Error too (`checkScenario` gives
/// the same as data).
#[wasm_bindgen(js_name = describeScenario, unchecked_return_type = "CatalogEntry")]
pub fn describe_scenario(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] scenario: JsValue,
) -> Result<JsValue, JsError> {
    to_js(&describe(ScenarioArg::read(&scenario)?)?)
}

/// A scenario's catalog entry; a file is set up once with its defaults,
/// so a schema or seed that fails is a mistake the editor shows before the
/// design is run.
fn describe(scenario: Named) -> crate::Result<scenarios::Entry> {
    if let Named::File(_) = scenario {
        Explorer::new(scenario.build(&Value::Null)?)?;
    }
    scenario.entry()
}

/// Checks a scenario file's text (`{ source, name? }`) as the editor does,
/// and answers with data: `{ entry }` (as `describeScenario`) when it is
/// right, or `{ error, line, column }` at its first mistake (no `line` nor
/// `column` for a mistake with no place in the text: a schema that fails,
/// an earlier scenario that does not run). Only an argument that is not a
/// scenario's text is an Error.
#[wasm_bindgen(js_name = checkScenario, unchecked_return_type = "ScenarioCheck")]
pub fn check_scenario(
    #[wasm_bindgen(unchecked_param_type = "ScenarioSource")] scenario: JsValue,
) -> Result<JsValue, JsError> {
    let (source, name) = match js_to_json(&scenario)? {
        Value::Object(map) => ScenarioArg::source(&map)?,
        _ => return Err(Error::invalid("scenario", "expected { source, name? }").into()),
    };
    /// What the check found (serialized as the union `ScenarioCheck`).
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Checked {
        Right {
            entry: scenarios::Entry,
        },
        Mistake {
            error: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            line: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            column: Option<usize>,
        },
    }
    let checked = match Named::file(&source, &name).and_then(describe) {
        Ok(entry) => Checked::Right { entry },
        Err(error) => {
            let (line, column) = match error {
                Error::Mistake { line, column, .. } => (Some(line), Some(column)),
                _ => (None, None),
            };
            Checked::Mistake {
                error: error.to_string(),
                line,
                column,
            }
        }
    };
    to_js(&checked)
}

/// The source of a built-in scenario, to start an edited copy from, with the
/// libraries it includes written into it ([`scenarios::editable_source`]).
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
    scenarios::editable_source(&id).map_err(JsError::from)
}

/// The response profiles side by side: retention, error storage, answers.
#[wasm_bindgen(js_name = profiles)]
pub fn profile_table() -> Result<JsValue, JsError> {
    to_js(&idempotency::profiles()?)
}

/// What an export is asked to run: a catalog id, or `{ source, name? }`,
/// the text of a scenario file (its `name` stands in for a missing id).
pub(super) struct ScenarioArg;

impl ScenarioArg {
    /// A scenario file's text and the name that stands in for its id.
    fn source(map: &serde_json::Map<String, Value>) -> crate::Result<(String, String)> {
        json::only(map, &["source", "name"], "scenario")?;
        let source = json::text(map, "source", crate::format::MAX_SOURCE_BYTES)?
            .ok_or_else(|| Error::invalid("source", "is required"))?;
        let name = json::text(map, "name", 64)?.unwrap_or_else(|| "my-scenario".to_string());
        Ok((source, name))
    }

    fn read(value: &JsValue) -> Result<Named, JsError> {
        match js_to_json(value)? {
            Value::String(id) => Ok(Named::Builtin(id)),
            Value::Object(map) => {
                let (source, name) = Self::source(&map)?;
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
    export_run(&id, &options, crate::export::python)
}

/// The run of `schedule` as a Rust test that replays it on real SQLite files
/// with rusqlite, one process per attempt (`replayground export --rust`).
/// `options` as [`export_python`]'s.
#[wasm_bindgen(js_name = exportRust)]
pub fn export_rust(
    #[wasm_bindgen(unchecked_param_type = "string | ScenarioSource")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "{ schedule: string; params?: object }")]
    options: JsValue,
) -> Result<String, JsError> {
    export_run(&id, &options, crate::export::rust)
}

/// A whole run of a scenario (`options`: `{ schedule, params? }`) written by
/// `write`.
fn export_run(
    id: &JsValue,
    options: &JsValue,
    write: fn(&Explorer, &crate::Schedule) -> crate::Result<String>,
) -> Result<String, JsError> {
    let scenario = ScenarioArg::read(id)?;
    let mut options = options_arg(options)?;
    json::only(&options, &["params", "schedule"], "options")?;
    let params = options.remove("params").unwrap_or(Value::Null);
    let schedule = json::text(&options, "schedule", 2 * crate::sim::schedule::MAX_STEPS)?
        .ok_or_else(|| Error::invalid("schedule", "is required"))?;
    let explorer = Explorer::new(scenario.build(&params)?)?;
    let schedule = explorer.parse_schedule(&schedule)?;
    write(&explorer, &schedule).map_err(JsError::from)
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
    json::only(
        &options,
        &["params", "strategy", "seed", "depth", "schedule", "trace"],
        "options",
    )?;
    let record = json::flag(&options, "trace")?.unwrap_or(true);
    options.remove("trace");
    let params = options.remove("params").unwrap_or(Value::Null);
    let schedule = json::text(&options, "schedule", 2 * crate::sim::schedule::MAX_STEPS)?;
    let replay = options.get("strategy").and_then(Value::as_str) == Some("replay");
    options.remove("schedule");
    let result = if replay {
        options.remove("strategy");
        json::only(
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

/// The options of `exploreScenario`, `Exploration` and `mergeExplorations`
/// (`ExploreOptions`; `mergeExplorations` reads only `params`).
pub(super) const EXPLORE_OPTIONS: &[&str] = &[
    "params",
    "strategy",
    "runs",
    "seed",
    "depth",
    "preemptionBound",
    "without",
    "shard",
    "finalDigests",
];

/// The most words one `addFinished` call takes (32 MiB).
pub(super) const MAX_FINISHED_WORDS: u32 = 4 << 20;

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
    json::only(&options, EXPLORE_OPTIONS, "options")?;
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

/// Kills the outbox relay after every possible step, restarts it, and
/// returns the table: crash point, what was committed, what the restart did,
/// verdict. `options`: `{ inbox: false }` sweeps subscribers without an inbox.
#[wasm_bindgen(js_name = crashSweep)]
pub fn crash_sweep(
    #[wasm_bindgen(unchecked_param_type = "{ inbox?: boolean } | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let options = options_arg(&options)?;
    json::only(&options, &["inbox"], "options")?;
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
    to_js(&scenarios::sweep::crash_sweep(scenarios::sweep_id(inbox))?)
}

/// A helper worker's warm-up (see `engine.js`): searches a bundled design
/// as a shard of a split search for about `ms` milliseconds (1 to 10,000;
/// 250 if not given) and returns its counters.
#[wasm_bindgen(js_name = warmUp, unchecked_return_type = "Record<string, number>")]
pub fn warm_up(
    #[wasm_bindgen(unchecked_param_type = "number | undefined")] ms: JsValue,
) -> Result<JsValue, JsError> {
    let ms = number_arg("ms", &ms, 1, 10_000)?.unwrap_or(250);
    let performance = performance()?;
    to_js(&crate::bench::warm_up(ms as f64, &|| performance.now())?)
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
    let performance = performance()?;
    to_js(&crate::bench::engine(budget, &|| performance.now())?)
}
