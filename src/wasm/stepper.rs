//! Manual stepping for the page: a person picks the attempt of each step.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::boundary::js_to_json;
use super::{options_arg, string_arg, to_js, ScenarioArg};
use crate::sim::search::{Explorer, RunResult};
use crate::sim::{Status, Verdict};
use crate::{input, Error};

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
