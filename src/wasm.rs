//! The JavaScript face of the crate: every `#[wasm_bindgen]` export lives here.
//!
//! Exports take `JsValue` and check it themselves: [`js_to_json`] turns any
//! JavaScript value into JSON or a clear error (no NaN, no lone surrogates,
//! no functions, bounded depth), and [`crate::input`] turns the JSON into
//! typed inputs. Nothing is written before the whole input is accepted.
//! Results cross as plain JSON-compatible objects.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::patterns::idempotency::{self, Profile};
use crate::patterns::outbox;
use crate::scenarios;
use crate::sim::explore::{ExploreReport, Explorer, RunResult, Sampler};
use crate::sim::scheduler::{dfs, Pct, Random, RoundRobin, Scheduler};
use crate::sim::{Schedule, Status, Verdict};
use crate::storage::{self, Store};
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
/** A scenario of the catalog. */
export interface CatalogEntry {
  id: string; pattern: "idempotency" | "outbox" | "inbox"; title: string;
  suite: "idempotency" | "outbox"; explanation: string; fails: boolean; params: string[]; reference: boolean;
}
/** A scenario's parameters; each scenario takes some of them (see CatalogEntry.params). */
export interface ScenarioParams {
  attempts?: number; tenant?: string; key?: string; quantity?: number;
  clock?: number; profile?: "reference" | "ietf" | "stripe" | "powertools";
  crashPoint?: string; window?: number; delay?: number;
}
/** How `runScenario` chooses the interleaving. */
export interface RunOptions {
  params?: ScenarioParams;
  strategy?: "round-robin" | "random" | "pct" | "replay";
  seed?: number; depth?: number;
  /** An encoded schedule such as "A3B2A", for strategy "replay". */
  schedule?: string;
}
/** How `exploreScenario` and `Exploration` search. */
export interface ExploreOptions {
  params?: ScenarioParams;
  strategy?: "exhaustive" | "random" | "pct";
  runs?: number; seed?: number; depth?: number; preemptionBound?: number;
}
/** One idempotent request for `IdempotencySession.execute`. */
export interface RequestInput { tenant: string; operation: string; key: string; quantity: number; now: number; }
"#;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: a monotonic clock in milliseconds, in pages and workers.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Installs the panic hook, so a panic (a bug) reaches the console with its message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

fn js_error(error: Error) -> JsError {
    JsError::new(&error.to_string())
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&serializer)
        .map_err(|e| JsError::new(&format!("cannot convert the result for JavaScript: {e}")))
}

/// The deepest nesting accepted in an input.
const MAX_DEPTH: usize = 8;
/// The most entries an input object or array may have.
const MAX_ENTRIES: u32 = 256;

/// Converts a JavaScript value to JSON, refusing what JSON cannot hold.
pub fn js_to_json(value: &JsValue, depth: usize) -> Result<Value, Error> {
    let bad = |reason: String| Error::invalid("input", reason);
    if depth > MAX_DEPTH {
        return Err(bad(format!("nested more than {MAX_DEPTH} levels deep")));
    }
    if value.is_undefined() || value.is_null() {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = value.as_f64() {
        if !n.is_finite() {
            return Err(bad(format!("numbers must be finite (got {n})")));
        }
        if n.fract() == 0.0 && n.abs() <= 9.0e15 {
            return Ok(Value::from(n as i64));
        }
        return serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| bad(format!("{n} is not a JSON number")));
    }
    if value.is_string() {
        let js = js_sys::JsString::from(value.clone());
        if !js.is_valid_utf16() {
            return Err(bad(
                "text contains a lone surrogate (invalid UTF-16)".to_string()
            ));
        }
        return Ok(Value::String(value.as_string().unwrap_or_default()));
    }
    if value.is_bigint() {
        return Err(bad("BigInt is not accepted; use a number".to_string()));
    }
    if value.is_function() || value.is_symbol() {
        return Err(bad(
            "expected plain data, got a function or a symbol".to_string()
        ));
    }
    if js_sys::Array::is_array(value) {
        let array = js_sys::Array::from(value);
        if array.length() > MAX_ENTRIES {
            return Err(bad(format!("arrays may hold at most {MAX_ENTRIES} items")));
        }
        return array
            .iter()
            .map(|item| js_to_json(&item, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if value.is_object() {
        let object = js_sys::Object::from(value.clone());
        let entries = js_sys::Object::entries(&object);
        if entries.length() > MAX_ENTRIES {
            return Err(bad(format!(
                "objects may hold at most {MAX_ENTRIES} fields"
            )));
        }
        let mut map = serde_json::Map::new();
        for entry in entries.iter() {
            let pair = js_sys::Array::from(&entry);
            let key = pair.get(0);
            let key_js = js_sys::JsString::from(key.clone());
            if !key_js.is_valid_utf16() {
                return Err(bad("a field name contains a lone surrogate".to_string()));
            }
            let key = key.as_string().unwrap_or_default();
            let item = pair.get(1);
            if item.is_undefined() {
                continue;
            }
            map.insert(key, js_to_json(&item, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    Err(bad("unsupported value".to_string()))
}

/// A whole-number argument in `min..=max` (`None` when undefined or null).
fn number_arg(
    field: &'static str,
    value: &JsValue,
    min: i64,
    max: i64,
) -> Result<Option<i64>, JsError> {
    let mut map = serde_json::Map::new();
    map.insert(field.to_string(), js_to_json(value, 0).map_err(js_error)?);
    input::whole(&map, field, min, max).map_err(js_error)
}

/// A required string argument.
fn string_arg(field: &'static str, value: &JsValue) -> Result<String, JsError> {
    match js_to_json(value, 0).map_err(js_error)? {
        Value::String(s) => Ok(s),
        Value::Null => Err(js_error(Error::invalid(field, "is required"))),
        _ => Err(js_error(Error::invalid(field, "expected a string"))),
    }
}

/// An optional options object, as JSON (`{}` when absent).
fn options_arg(value: &JsValue) -> Result<serde_json::Map<String, Value>, JsError> {
    match js_to_json(value, 0).map_err(js_error)? {
        Value::Null => Ok(serde_json::Map::new()),
        Value::Object(map) => Ok(map),
        _ => Err(js_error(Error::invalid("options", "expected an object"))),
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
    to_js(&storage::round_trip(&note).map_err(js_error)?)
}

/// Parses a permalink's query string (`location.search`): `{ scenario,
/// params, schedule, step }`, or an Error saying what is malformed.
#[wasm_bindgen(js_name = parsePermalink)]
pub fn parse_permalink(
    #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
) -> Result<JsValue, JsError> {
    let query = string_arg("link", &query)?;
    to_js(&input::permalink(&query).map_err(js_error)?)
}

/// The scenario catalog.
#[wasm_bindgen(js_name = scenarios, unchecked_return_type = "CatalogEntry[]")]
pub fn scenario_catalog() -> Result<JsValue, JsError> {
    to_js(&scenarios::catalog())
}

/// The response profiles side by side: retention, error storage, answers.
#[wasm_bindgen(js_name = profiles)]
pub fn profile_table() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Row {
        id: &'static str,
        retention_seconds: i64,
        stores_errors: bool,
        requires_key: bool,
        replay: &'static str,
        conflict: &'static str,
        in_flight: &'static str,
        missing_key: &'static str,
        error: &'static str,
    }
    let rows: Vec<Row> = Profile::ALL
        .into_iter()
        .map(|p| Row {
            id: p.id(),
            retention_seconds: p.retention(),
            stores_errors: p.stores_errors(),
            requires_key: p.requires_key(),
            replay: p.response("replay"),
            conflict: p.response("conflict"),
            in_flight: p.response("in-flight"),
            missing_key: p.response("missing-key"),
            error: p.response("error"),
        })
        .collect();
    to_js(&rows)
}

fn build(id: &str, options: &serde_json::Map<String, Value>) -> Result<Explorer, Error> {
    Explorer::new(scenarios::build_with(
        id,
        options.get("params").unwrap_or(&Value::Null),
    )?)
}

fn seed_of(options: &serde_json::Map<String, Value>) -> Result<u64, Error> {
    Ok(input::whole(options, "seed", 0, input::MAX_SAFE_INTEGER)?.unwrap_or(1) as u64)
}

fn depth_of(options: &serde_json::Map<String, Value>) -> Result<u32, Error> {
    Ok(input::whole(options, "depth", 1, 10)?.unwrap_or(3) as u32)
}

/// Runs a scenario once, with a strategy or an encoded schedule, and
/// returns the full trace and checks.
#[wasm_bindgen(js_name = runScenario)]
pub fn run_scenario(
    #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RunOptions | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let id = string_arg("scenario", &id)?;
    let options = options_arg(&options)?;
    input::only(
        &options,
        &["params", "strategy", "seed", "depth", "schedule"],
        "options",
    )
    .map_err(js_error)?;
    let strategy = input::text(&options, "strategy", 32).map_err(js_error)?;
    let explorer = build(&id, &options).map_err(js_error)?;
    let result = match strategy.as_deref().unwrap_or("round-robin") {
        "round-robin" => explorer.run(&mut RoundRobin, true),
        "random" => seed_of(&options).and_then(|seed| explorer.run(&mut Random::new(seed), true)),
        "pct" => seed_of(&options).and_then(|seed| {
            let mut pct = Pct::new(seed, depth_of(&options)?, 64)?;
            explorer.run(&mut pct, true)
        }),
        "replay" => {
            let text = input::text(&options, "schedule", 2 * crate::sim::schedule::MAX_STEPS)
                .map_err(js_error)?
                .ok_or_else(|| {
                    js_error(Error::invalid(
                        "schedule",
                        "is required for strategy replay",
                    ))
                })?;
            Schedule::decode(&text).and_then(|s| explorer.replay(&s, true))
        }
        other => Err(Error::invalid(
            "strategy",
            format!("unknown strategy {other:?}; use round-robin, random, pct or replay"),
        )),
    }
    .map_err(js_error)?;
    to_js(&result)
}

/// Searches a scenario's interleavings at once (for small searches; use
/// `Exploration` to show progress and cancel).
#[wasm_bindgen(js_name = exploreScenario)]
pub fn explore_scenario(
    #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ExploreOptions | undefined")] options: JsValue,
) -> Result<JsValue, JsError> {
    let mut exploration = Exploration::new(id, options)?;
    while !exploration.done {
        exploration.advance_runs(u64::MAX).map_err(js_error)?;
    }
    exploration.report()
}

/// A search that runs in slices: `advance(runs)` explores that many runs and
/// returns progress; `report()` gives the result, `cancel()` stops it.
#[wasm_bindgen]
pub struct Exploration {
    explorer: Explorer,
    kind: ExplorationKind,
    done: bool,
    cancelled: bool,
    report: Option<ExploreReport>,
}

enum ExplorationKind {
    Exhaustive(Box<dfs::Dfs>),
    Sample(Sampler<'static>),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressView {
    done: bool,
    stats: dfs::Stats,
    /// Runs planned, when known (sampling strategies).
    planned_runs: Option<u64>,
}

#[wasm_bindgen]
impl Exploration {
    /// Prepares a search of scenario `id`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ExploreOptions | undefined")] options: JsValue,
    ) -> Result<Exploration, JsError> {
        let id = string_arg("scenario", &id)?;
        let options = options_arg(&options)?;
        input::only(
            &options,
            &[
                "params",
                "strategy",
                "runs",
                "seed",
                "depth",
                "preemptionBound",
            ],
            "options",
        )
        .map_err(js_error)?;
        let strategy = input::text(&options, "strategy", 32).map_err(js_error)?;
        let runs = input::whole(&options, "runs", 1, 10_000_000).map_err(js_error)?;
        let seed = seed_of(&options).map_err(js_error)?;
        let depth = depth_of(&options).map_err(js_error)?;
        let bound = input::whole(&options, "preemptionBound", 0, 1000).map_err(js_error)?;
        let kind = match strategy.as_deref().unwrap_or("exhaustive") {
            "exhaustive" => ExplorationKind::Exhaustive(Box::new(dfs::Dfs::new(dfs::Options {
                preemption_bound: bound.map(|b| b as u32),
                max_runs: runs.map(|r| r as u64),
                ..dfs::Options::default()
            }))),
            "random" => ExplorationKind::Sample(Sampler::new(
                &format!("random (seed {seed})"),
                runs.unwrap_or(1000) as u64,
                move |i| Ok(Box::new(Random::new(seed.wrapping_add(i))) as Box<dyn Scheduler>),
            )),
            "pct" => ExplorationKind::Sample(Sampler::new(
                &format!("PCT (seed {seed}, depth {depth})"),
                runs.unwrap_or(1000) as u64,
                move |i| {
                    Ok(Box::new(Pct::new(seed.wrapping_add(i), depth, 64)?) as Box<dyn Scheduler>)
                },
            )),
            other => {
                return Err(js_error(Error::invalid(
                    "strategy",
                    format!("unknown strategy {other:?}; use exhaustive, random or pct"),
                )))
            }
        };
        let explorer = build(&id, &options).map_err(js_error)?;
        Ok(Exploration {
            explorer,
            kind,
            done: false,
            cancelled: false,
            report: None,
        })
    }

    /// Explores up to `runs` more runs; returns `{ done, stats, plannedRuns }`.
    pub fn advance(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] runs: JsValue,
    ) -> Result<JsValue, JsError> {
        let runs = number_arg("runs", &runs, 1, 1_000_000)?
            .ok_or_else(|| js_error(Error::invalid("runs", "is required")))?;
        self.advance_runs(runs as u64).map_err(js_error)?;
        to_js(&self.progress())
    }

    /// Stops the search; `report()` then says it was cancelled.
    pub fn cancel(&mut self) {
        if !self.done {
            self.cancelled = true;
            self.done = true;
        }
    }

    /// The search's result (once done or cancelled).
    pub fn report(&mut self) -> Result<JsValue, JsError> {
        if !self.done {
            return Err(JsError::new(
                "the exploration is not over: call advance() until done, or cancel()",
            ));
        }
        if self.report.is_none() {
            self.report = Some(self.build_report().map_err(js_error)?);
        }
        to_js(&self.report)
    }
}

impl Exploration {
    fn progress(&self) -> ProgressView {
        let (stats, planned_runs) = match &self.kind {
            ExplorationKind::Exhaustive(search) => (search.stats(), None),
            ExplorationKind::Sample(sampler) => (sampler.stats(), Some(sampler.planned())),
        };
        ProgressView {
            done: self.done,
            stats,
            planned_runs,
        }
    }

    fn advance_runs(&mut self, runs: u64) -> Result<(), Error> {
        if self.done {
            return Ok(());
        }
        self.done = match &mut self.kind {
            ExplorationKind::Exhaustive(search) => search.advance(&self.explorer, runs)?,
            ExplorationKind::Sample(sampler) => sampler.advance(&self.explorer, runs)?,
        };
        Ok(())
    }

    fn build_report(&self) -> Result<ExploreReport, Error> {
        match &self.kind {
            ExplorationKind::Exhaustive(search) => {
                self.explorer.report_search(search, self.cancelled)
            }
            ExplorationKind::Sample(sampler) => sampler.report(&self.explorer, self.cancelled),
        }
    }
}

/// Manual stepping: a person picks the attempt that takes each step; undo
/// takes one step back. Every state is the exact replay of its schedule.
#[wasm_bindgen]
pub struct Stepper {
    explorer: Explorer,
    choices: Vec<usize>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepperView {
    scenario: String,
    labels: Vec<String>,
    schedule: String,
    runnable: Vec<usize>,
    statuses: Vec<Status>,
    verdict: Option<Verdict>,
    result: Option<RunResult>,
    trace: Vec<crate::sim::TraceStep>,
    /// Committed tables before the first step.
    initial_tables:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, crate::sim::Table>>,
    /// Whether the scenario is expected to fail under some schedule.
    expected_to_fail: bool,
}

#[wasm_bindgen]
impl Stepper {
    /// A stepper at the start of scenario `id` (options: `{ params }`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ params?: ScenarioParams } | undefined")]
        options: JsValue,
    ) -> Result<Stepper, JsError> {
        let id = string_arg("scenario", &id)?;
        let options = options_arg(&options)?;
        input::only(&options, &["params"], "options").map_err(js_error)?;
        let explorer = build(&id, &options).map_err(js_error)?;
        Ok(Stepper {
            explorer,
            choices: Vec::new(),
        })
    }

    /// The current state: runnable attempts, statuses, trace, and the
    /// result once the run is over.
    pub fn state(&self) -> Result<JsValue, JsError> {
        to_js(&self.view().map_err(js_error)?)
    }

    /// Lets attempt `attempt` (0 for A) take the next step.
    pub fn step(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] attempt: JsValue,
    ) -> Result<JsValue, JsError> {
        let map = serde_json::json!({ "attempt": js_to_json(&attempt, 0).map_err(js_error)? });
        let attempt = input::whole(map.as_object().expect("object"), "attempt", 0, 25)
            .map_err(js_error)?
            .ok_or_else(|| js_error(Error::invalid("attempt", "is required")))?
            as usize;
        let mut run = self.replay().map_err(js_error)?;
        run.step(attempt).map_err(js_error)?;
        drop(run);
        self.choices.push(attempt);
        self.state()
    }

    /// Takes back the last step.
    pub fn undo(&mut self) -> Result<JsValue, JsError> {
        self.choices.pop();
        self.state()
    }

    /// Replaces the steps with an encoded schedule (all of it must fit).
    #[wasm_bindgen(js_name = setSchedule)]
    pub fn set_schedule(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] schedule: JsValue,
    ) -> Result<JsValue, JsError> {
        let text = string_arg("schedule", &schedule)?;
        let schedule = Schedule::decode(&text).map_err(js_error)?;
        let previous = std::mem::replace(&mut self.choices, schedule.steps().to_vec());
        if let Err(e) = self.replay() {
            self.choices = previous;
            return Err(js_error(e));
        }
        self.state()
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

    fn view(&self) -> Result<StepperView, Error> {
        let initial_tables = self.explorer.start(false)?.committed_tables()?;
        let run = self.replay()?;
        let result = if run.is_stopped() {
            Some(self.explorer.finish(&run, false)?)
        } else {
            None
        };
        Ok(StepperView {
            scenario: self.explorer.scenario_id().to_string(),
            labels: run.labels(),
            schedule: run.schedule().encode(),
            runnable: run.runnable(),
            statuses: run.statuses().to_vec(),
            verdict: run.verdict(),
            result,
            trace: run.trace().map(<[_]>::to_vec).unwrap_or_default(),
            initial_tables,
            expected_to_fail: scenarios::catalog()
                .iter()
                .any(|e| e.id == self.explorer.scenario_id() && e.fails),
        })
    }
}

/// A database of receipts to send single requests to, one at a time.
#[wasm_bindgen]
pub struct IdempotencySession {
    store: Store,
    sent: u32,
}

#[wasm_bindgen]
impl IdempotencySession {
    /// An empty database with the reference schema.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<IdempotencySession, JsError> {
        let store = Store::new("session").map_err(js_error)?;
        idempotency::setup(&store).map_err(js_error)?;
        Ok(IdempotencySession { store, sent: 0 })
    }

    /// Sends one request; returns its outcome, steps and the counts after it.
    /// A request that is not valid is refused before anything is written.
    pub fn execute(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "RequestInput")] request: JsValue,
    ) -> Result<JsValue, JsError> {
        let request =
            input::request(&js_to_json(&request, 0).map_err(js_error)?).map_err(js_error)?;
        self.sent += 1;
        let label = format!("request {}", self.sent);
        to_js(&idempotency::execute_alone(&self.store, &label, request).map_err(js_error)?)
    }

    /// `{ effects, receipts }` now.
    pub fn counts(&self) -> Result<JsValue, JsError> {
        let (effects, receipts) = idempotency::counts(&self.store).map_err(js_error)?;
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
    store: Store,
}

#[wasm_bindgen]
impl OutboxSession {
    /// Empty producer and consumer databases with the reference schemas.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<OutboxSession, JsError> {
        let store = Store::new("outbox-session").map_err(js_error)?;
        outbox::setup(&store).map_err(js_error)?;
        Ok(OutboxSession { store })
    }

    /// Creates an order and its outbox event: `{ orderId, amount }`.
    #[wasm_bindgen(js_name = createOrder)]
    pub fn create_order(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "{ orderId: string; amount: number }")]
        order: JsValue,
    ) -> Result<JsValue, JsError> {
        let event = input::order(&js_to_json(&order, 0).map_err(js_error)?).map_err(js_error)?;
        to_js(&outbox::create_order_alone(&self.store, event).map_err(js_error)?)
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
        let (subscriber, event) =
            input::delivery(&js_to_json(&delivery, 0).map_err(js_error)?).map_err(js_error)?;
        to_js(&outbox::deliver_alone(&self.store, &subscriber, event).map_err(js_error)?)
    }

    /// Runs a relay until nothing is unsent.
    pub fn relay(&mut self) -> Result<JsValue, JsError> {
        to_js(&outbox::relay_alone(&self.store).map_err(js_error)?)
    }

    /// `{ orders, outbox, pending, inbox, effects: { audit, search } }` now.
    pub fn counts(&self) -> Result<JsValue, JsError> {
        to_js(&outbox::counts(&self.store).map_err(js_error)?)
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
    input::only(&options, &["inbox"], "options").map_err(js_error)?;
    let inbox = match options.get("inbox") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => true,
        Some(Value::Bool(false)) => false,
        Some(_) => return Err(js_error(Error::invalid("inbox", "expected true or false"))),
    };
    let design = if inbox {
        outbox::Consumer::Inbox
    } else {
        outbox::Consumer::NoInbox
    };
    to_js(&scenarios::outbox::crash_sweep(design).map_err(js_error)?)
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
    to_js(&crate::bench::engine(budget, &performance_now).map_err(js_error)?)
}
