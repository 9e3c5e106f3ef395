//! Manual stepping for the page: a person picks the attempt of each step.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::boundary::js_to_json;
use super::{options_arg, string_arg, to_js, ScenarioArg};
use crate::sim::search::{Explorer, LiveRun, RunResult};
use crate::sim::{Status, Verdict};
use crate::{json, Error};

/// Manual stepping: a person picks the attempt that takes each step; undo
/// takes one step back. Every state is the exact replay of its schedule;
/// the run is kept between calls, so a step runs one statement
/// ([`LiveRun`]).
#[wasm_bindgen]
pub struct Stepper {
    live: LiveRun,
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
    /// The index of the first step `trace` holds: 0 in a whole view; in
    /// the changes a step or an undo made ([`Stepper::step_changes`]), the
    /// first step that is new (the steps before it are the last view's).
    trace_from: usize,
    /// The steps from `trace_from` on.
    trace: Vec<crate::sim::TraceStep>,
    /// One sentence per step from `trace_from` on, and for a run that goes
    /// round for ever the steps that repeat
    /// ([`crate::sim::search::explain`]).
    explanation: Vec<String>,
    /// Committed tables before the first step (in a whole view only).
    #[serde(skip_serializing_if = "Option::is_none")]
    initial_tables: Option<Tables>,
    /// Whether they were left out, being more than a trace may keep (in a
    /// whole view only).
    #[serde(skip_serializing_if = "Option::is_none")]
    initial_tables_left_out: Option<bool>,
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
        json::only(&options, &["params"], "options")?;
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
            live: LiveRun::new(explorer),
            cycle_from: None,
            fails: scenario.fails(),
            initial_tables,
            initial_tables_left_out,
        })
    }

    /// The current state: runnable attempts, statuses, trace, and the
    /// result once the run is over.
    pub fn state(&mut self) -> Result<JsValue, JsError> {
        let cycle_from = self.cycle_from;
        to_js(&self.view(cycle_from, None)?)
    }

    /// Lets attempt `attempt` (0 for A) take the next step: the whole view.
    pub fn step(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] attempt: JsValue,
    ) -> Result<JsValue, JsError> {
        self.take_step(&attempt)?;
        to_js(&self.view(None, None)?)
    }

    /// As [`Stepper::step`], answered with what changed: the view whose
    /// `trace` and `explanation` hold only the steps from `traceFrom` on (the
    /// new step), without the initial tables. What it costs does not grow
    /// with the run's length; the page's adapter puts the view together.
    #[wasm_bindgen(js_name = stepChanges)]
    pub fn step_changes(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] attempt: JsValue,
    ) -> Result<JsValue, JsError> {
        let from = self.live.choices().len();
        self.take_step(&attempt)?;
        to_js(&self.view(None, Some(from))?)
    }

    /// Takes back the last step: the whole view.
    pub fn undo(&mut self) -> Result<JsValue, JsError> {
        self.live.undo();
        self.cycle_from = None;
        self.state()
    }

    /// As [`Stepper::undo`], answered with what changed (see
    /// [`Stepper::step_changes`]): no step, from the one taken back.
    #[wasm_bindgen(js_name = undoChanges)]
    pub fn undo_changes(&mut self) -> Result<JsValue, JsError> {
        self.live.undo();
        self.cycle_from = None;
        let from = self.live.choices().len();
        to_js(&self.view(None, Some(from))?)
    }

    /// Replaces the steps with an encoded schedule (all of it must fit).
    #[wasm_bindgen(js_name = setSchedule)]
    pub fn set_schedule(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] schedule: JsValue,
    ) -> Result<JsValue, JsError> {
        let text = string_arg("schedule", &schedule)?;
        let schedule = self.live.explorer().parse_schedule(&text)?;
        if schedule.cycle_from().is_some() {
            // Its cycle must bring the run back where it started (a replay
            // on the explorer's store: the kept run lets it go first).
            self.live.release();
            self.live.explorer().replay(&schedule, false)?;
        }
        let previous = self.live.choices().to_vec();
        self.live.set_choices(schedule.steps().to_vec())?;
        match self.view(schedule.cycle_from(), None) {
            Ok(view) => {
                self.cycle_from = schedule.cycle_from();
                to_js(&view)
            }
            Err(e) => {
                self.live.set_choices(previous)?;
                Err(JsError::from(e))
            }
        }
    }
}

impl Stepper {
    /// Lets `attempt` (a JS value, checked) take the next step.
    fn take_step(&mut self, attempt: &JsValue) -> Result<(), Error> {
        let map = serde_json::json!({ "attempt": js_to_json(attempt)? });
        let attempt = json::whole(map.as_object().expect("object"), "attempt", 0, 25)?
            .ok_or_else(|| Error::invalid("attempt", "is required"))?
            as usize;
        self.live.step(attempt)?;
        // A step taken from a run that goes round for ever is a run of its
        // own, whose cycle is not known.
        self.cycle_from = None;
        Ok(())
    }

    /// What the run at this stepper's choices shows (`cycle_from`: where
    /// the cycle of a schedule that goes round for ever starts): whole, or
    /// from step `from` on.
    fn view(
        &mut self,
        cycle_from: Option<usize>,
        from: Option<usize>,
    ) -> Result<StepperView, Error> {
        let (initial_tables, initial_tables_left_out, fails) = (
            &self.initial_tables,
            self.initial_tables_left_out,
            self.fails,
        );
        self.live.with_run(|explorer, run| {
            view(
                explorer,
                run,
                cycle_from,
                from.map_or(Some((initial_tables, initial_tables_left_out)), |_| None),
                from.unwrap_or(0),
                fails,
            )
        })
    }
}

/// What `run` (at a stepper's choices) shows: its steps from `from` on,
/// and the initial tables if given.
fn view(
    explorer: &Explorer,
    run: &crate::sim::Run<'_>,
    cycle_from: Option<usize>,
    initial: Option<(&Tables, bool)>,
    from: usize,
    fails: bool,
) -> Result<StepperView, Error> {
    {
        let result = if let Some(from) = cycle_from {
            Some(explorer.looping(run, from, false)?)
        } else if run.is_stopped() {
            Some(explorer.finish(run, false)?)
        } else {
            None
        };
        let trace = run.trace().unwrap_or_default();
        let trace = trace.get(from..).unwrap_or_default();
        let explanation = crate::sim::search::explain(
            trace,
            result
                .as_ref()
                .map_or(&Verdict::Completed, |result| &result.verdict),
        );
        Ok(StepperView {
            scenario: explorer.scenario_id().to_string(),
            params: explorer.params(),
            labels: run.labels(),
            letters: explorer.schedule_letters().to_vec(),
            schedule: match &result {
                Some(result) => result.schedule.clone(),
                None => explorer.show_schedule(&run.schedule()),
            },
            runnable: run.runnable(),
            statuses: run.statuses().to_vec(),
            verdict: result.as_ref().map(|result| result.verdict.clone()),
            result,
            explanation,
            trace_from: from,
            trace: trace.to_vec(),
            initial_tables: initial.map(|(tables, _)| tables.clone()),
            initial_tables_left_out: initial.map(|(_, left_out)| left_out),
            expected_to_fail: fails,
        })
    }
}
