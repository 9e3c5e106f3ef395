//! A search in slices for the page's worker: advance, report, cancel.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{number_arg, options_arg, to_js, ScenarioArg, EXPLORE_OPTIONS, MAX_FINISHED_WORDS};
use crate::sim::search;
use crate::sim::search::cache::SharedCache;
use crate::sim::search::strategy::{self, Search, Strategy};
use crate::sim::search::{ExploreReport, Explorer};
use crate::{json, Error};

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
        json::only(&options, EXPLORE_OPTIONS, "options")?;
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
                report.bounded_by = Some(search::Bounded::Interrupted);
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
