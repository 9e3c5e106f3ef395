// The strategies: the controls (strategy, seed, runs, depth, budget) and
// what they run: one round-robin run, or a search (random, PCT, exhaustive)
// with its progress bar, Cancel and Continue, and its report in the status
// line; the run it finds goes to the run view. It owns #strategy, #seed,
// #runs, #depth, #budget, #run, #cancel, #continue and #progress, the search
// under way and the one that stopped with branches left, and the helpers of
// split searches, started once the page is idle.
import * as engine from './engine.js';
import { byId as $, count, scheduleText } from './parts/dom.js';
import * as run from './run.js';
import * as scenario from './scenario.js';

const ui = {
  strategy: /** @type {HTMLSelectElement} */ ($('strategy')),
  seed: /** @type {HTMLInputElement} */ ($('seed')),
  runs: /** @type {HTMLInputElement} */ ($('runs')),
  depth: /** @type {HTMLInputElement} */ ($('depth')),
  budget: /** @type {HTMLInputElement} */ ($('budget')),
  run: /** @type {HTMLButtonElement} */ ($('run')),
  cancel: /** @type {HTMLButtonElement} */ ($('cancel')),
  continue: /** @type {HTMLButtonElement} */ ($('continue')),
  progress: /** @type {HTMLProgressElement} */ ($('progress')),
};

// The search under way (engine.explore's or engine.resume's answer, marked
// `cancelled` once Cancel is pressed).
let running = null;
// The search that stopped with branches left ({ generation, strategy }),
// which Continue goes on with.
let paused = null;

// Whether a search is under way.
export const isRunning = () => Boolean(running);

// Stops the search under way, if any (the scenario shown is left).
export function stop() {
  running?.cancel();
}

// Shows only the settings the chosen strategy uses.
export function renderControls() {
  const busy = run.isBusy();
  ui.run.disabled = busy;
  const strategy = ui.strategy.value;
  ui.seed.closest('label').hidden = !['random', 'pct'].includes(strategy);
  ui.runs.closest('label').hidden = !['random', 'pct'].includes(strategy);
  ui.depth.closest('label').hidden = strategy !== 'pct';
  ui.budget.closest('label').hidden = strategy !== 'exhaustive';
  // Continue belongs to the search that stopped on what is shown now.
  ui.continue.hidden = paused?.generation !== scenario.shown().generation;
  ui.continue.disabled = busy;
}

// A whole number from an input, or an error that names it.
function wholeInput(input, name, max) {
  const value = Number(input.value);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new Error(`${name} must be a whole number from 1 to ${max} (got ${input.value || 'nothing'})`);
  }
  return value;
}

// Runs the strategy chosen in the controls and loads the resulting schedule.
async function runStrategy() {
  const strategy = ui.strategy.value;
  const seed = Number(ui.seed.value) || 0;
  const depth = Number(ui.depth.value) || 3;
  const { arg, params } = scenario.shown();
  run.hideExplanation();
  if (strategy === 'round-robin') {
    const generation = scenario.shown().generation;
    // One run (and its replay in the stepper), which Cancel can stop
    // (engine.settle).
    ui.cancel.disabled = false;
    let result;
    try {
      result = await engine.runScenario(arg, { params, strategy, seed, depth });
      if (generation !== scenario.shown().generation) return;
      await run.replay(result.schedule);
    } finally {
      ui.cancel.disabled = true;
    }
    run.status(`${result.passed ? 'Passes' : 'Fails'}: ${scenario.runContext('one round-robin run')}, schedule ${scheduleText(result.schedule)}.`, result.passed ? 'pass' : 'fail');
    return;
  }
  const options = { params, strategy, seed, depth };
  options.runs = strategy === 'exhaustive'
    ? wholeInput(ui.budget, 'the budget', Number(ui.budget.max))
    : wholeInput(ui.runs, 'runs', Number(ui.runs.max));
  paused = null;
  await search(strategy, options.runs, (onProgress) => engine.explore(arg, options, onProgress));
}

// Continues the stopped search for another budget of runs.
async function continueSearch() {
  const stopped = paused;
  if (stopped?.generation !== scenario.shown().generation) return;
  const runs = wholeInput(ui.budget, 'the budget', Number(ui.budget.max));
  paused = null;
  run.hideExplanation();
  await search(stopped.strategy, runs, (onProgress) => engine.resume(runs, onProgress));
}

// How often a running search's progress is drawn, at most (ms). Workers
// report every 40 ms each; drawing each report cost the page's search a
// share of a core on a 2-core machine, where the workers need both.
const PROGRESS_EVERY_MS = 125;

// Drives a search started by `start(onProgress)`: progress while it runs,
// then its report, and a run loaded (the counterexample, or one that passes).
// The bar shows the share of `budget` (its runs) spent, or of the runs a
// random search planned: never an indeterminate bar, which animates (and is
// redrawn) for as long as the search runs.
async function search(strategy, budget, start) {
  const { generation, arg, params } = scenario.shown();
  const current = () => generation === scenario.shown().generation;
  ui.progress.max = budget;
  ui.progress.value = 0;
  ui.progress.hidden = false;
  ui.cancel.disabled = false;
  run.status('Exploring…');
  let latest = null;
  let timer = null;
  let drawing = true;
  const stopDrawing = () => {
    drawing = false;
    clearTimeout(timer);
  };
  const draw = () => {
    timer = null;
    if (!current() || !drawing) return;
    const { stats, plannedRuns } = latest;
    ui.progress.max = plannedRuns || budget;
    ui.progress.value = Math.min(stats.runs, ui.progress.max);
    const workers = latest.workers ? ` (split across ${latest.workers} workers)` : '';
    run.status(`Exploring${workers}: ${count(stats.runs, 'run')}${strategy === 'exhaustive' ? `, ${count(stats.distinctStates, 'distinct state')}` : ''}, ${count(stats.violations, 'violation')}…`);
  };
  const under = start((progress) => {
    if (!current() || !drawing) return;
    latest = progress;
    timer ??= setTimeout(draw, PROGRESS_EVERY_MS);
  });
  running = under;
  try {
    const report = await under.promise;
    stopDrawing();
    if (!current()) return;
    // A search that stopped with branches left can go on from there.
    if (report.frontier) paused = { generation, strategy };
    showReport(report);
    // Show a run: the counterexample, or, when none was found, one
    // completed run with its checks passing. A cancel meanwhile stops it
    // (the report stays; the run shown stays what it was).
    try {
      const schedule = report.counterexample?.schedule
        ?? (await engine.runScenario(arg, { params, strategy: 'round-robin', trace: false })).schedule;
      if (!current()) return;
      await run.replay(schedule);
    } catch (error) {
      if (!under.cancelled) throw error;
    }
  } finally {
    stopDrawing();
    if (running === under) running = null;
    ui.progress.hidden = true;
    ui.cancel.disabled = true;
  }
}

// What an exhaustive search stopped early covered, and what is left.
function coverageLeft(report) {
  const s = report.stats;
  const f = report.frontier;
  const stopped = report.cancelled
    ? `cancelled after ${count(s.runs, 'run')}`
    : `stopped at its budget of ${count(s.runs, 'run')}`;
  const covered = `${count(s.distinctStates, 'distinct state')} and ${count(s.finalStates, 'final state')} reached, runs up to ${count(s.maxDepth, 'step')} long`;
  const left = f ? `; ${count(f.branches, 'known branch', 'known branches')} left, the shallowest from step ${f.shallowest + 1}; Continue goes on from there` : '';
  return `not every schedule: ${stopped}, ${covered}${left}`;
}

// Shows a search's report: what it belongs to, coverage, and the counterexample explained.
function showReport(report) {
  for (const listener of reported) listener(report);
  const s = report.stats;
  const exhaustive = report.strategy === 'exhaustive';
  // A design whose attempts can loop has no bound on its interleavings.
  const possible = report.loops ? 'where attempts can loop, so interleavings are unbounded'
    : report.naiveIsUpperBound ? `where at most ${report.naiveInterleavings} interleavings are possible (some attempt waits to start)`
      : `where ${report.naiveInterleavings === '1' ? 'one interleaving is' : `${report.naiveInterleavings} interleavings are`} possible`;
  let coverage = report.complete
    ? `every schedule covered: ${count(s.runs, 'run')}, ${count(s.distinctStates, 'distinct state')}, ${count(s.finalStates, 'final state')}, ${possible}`
    : exhaustive && report.frontier ? coverageLeft(report)
      : report.cancelled ? `cancelled after ${count(s.runs, 'run')}`
        : exhaustive ? `not every schedule: ${report.boundedBy}` : `${count(s.runs, 'sampled run')}, not every schedule`;
  // A search split across workers sums their counts.
  if (report.workers > 1) coverage += `; split across ${report.workers} workers, counts summed`;
  // Runs a bound cut short: each is a run that never completes.
  const cut = [
    [s.cycles, 'came back to a state of its own path (it can go round for ever)', 'came back to a state of their own path (they can go round for ever)'],
    [s.stoppedBySteps, 'was stopped by the step bound of an attempt', 'were stopped by the step bound of an attempt'],
    [s.stoppedByInstructions, 'was stopped by the instruction bound of a statement', 'were stopped by the instruction bound of a statement'],
    [s.stoppedByRunBudget, 'was stopped by the budget of a whole run', 'were stopped by the budget of a whole run'],
  ].filter(([n]) => n > 0).map(([n, one, many]) => `${count(n, 'run')} ${n === 1 ? one : many}`);
  if (cut.length) coverage += `; ${cut.join('; ')}`;
  // The verdict beside the design's declaration (absent when its
  // parameters are not the ones it was declared for).
  // Only when the verdict can be told against it: a sampled search that
  // found nothing says so itself.
  const declared = typeof report.asDeclared === 'boolean'
    ? `${report.verdictAsDeclared[0].toUpperCase()}${report.verdictAsDeclared.slice(1)}. `
    : '';
  const context = scenario.runContext(report.strategy);
  const c = report.counterexample;
  if (!c) {
    // A sampled search that found nothing passes what it tried; a stopped
    // exhaustive search has not passed yet.
    const passed = report.complete || (!exhaustive && !report.cancelled);
    const tone = report.asDeclared === false ? 'fail' : passed ? 'pass' : '';
    run.status(`${declared}No violation in ${context} (${coverage}). Shown: one completed run.`, tone);
    return;
  }
  run.status(`${declared}Counterexample in ${context} (${c.shortest ? 'shortest' : 'the shortest found; a shorter one may exist'}, ${count(c.steps, 'step')}, schedule ${scheduleText(c.schedule)}; ${coverage}).`, 'fail');
  run.showExplanation(c.explanation, c.schedule);
}

// Called with each search's report, once it is shown.
const reported = [];
export function onReport(listener) {
  reported.push(listener);
}

// The strategies' buttons, by their data-action.
export const actions = {
  // Runs the chosen strategy.
  async run() {
    await run.busy(runStrategy);
  },
  // Continues the search that stopped on its budget or was cancelled.
  async continue() {
    await run.busy(continueSearch);
  },
  // Cancels a running search or round-robin run. The engine answers
  // between a search's slices with what the search covered; past
  // engine.SETTLE_MS the statement under way is interrupted (a search then
  // reports the runs before it, and cannot be continued; a round-robin run
  // is stopped); an engine that answers neither way is ended and starts
  // over with the scenario shown.
  async cancel() {
    const searching = Boolean(running);
    if (searching) {
      running.cancelled = true;
      running.cancel();
    }
    const how = await engine.settle(`a ${searching ? 'search' : 'run'} under way was cancelled`);
    if (how === 'restarted') {
      run.dropStepper();
      await scenario.reload(`Cancelled: the ${searching ? 'search' : 'run'} under way did not stop, so the engine started over with the scenario.`);
    } else if (how === 'interrupted' && !searching) {
      run.status('Cancelled: the run under way was stopped.', 'fail');
    }
  },
};

// How long after the page is ready the search helpers start (after what a
// first visit draws), and how long they wait again while a search runs.
const PREPARE_SEARCHES_AFTER_MS = 1000;

// Starts the search helpers a while after the page is ready (prepareWhenIdle).
export function prepareLater() {
  setTimeout(prepareWhenIdle, PREPARE_SEARCHES_AFTER_MS);
}

// The helpers start only once the visitor has left the page alone this long
// (ms): a key, a click or a keystroke in the editor puts them off. Compiling
// and warming up a helper's module takes the cores of a 2-core machine for
// a second or two, and the page's own work waits: the first of 400 steps by
// key right after a design was applied took 79-129 ms while a helper warmed
// up, its layout alone 61-82 ms (17 ms with no helper), 2026-12-07.
export const QUIET_BEFORE_PREPARING_MS = 1500;
let lastInput = -Infinity;
for (const type of ['keydown', 'pointerdown', 'input']) {
  document.addEventListener(type, () => { lastInput = performance.now(); }, { capture: true, passive: true });
}

// Once the page is idle and no search runs, the helpers of split searches
// start and warm up (see engine.prepareSearches): a first large search then
// runs on compiled code and splits sooner. While a search runs they wait:
// on a 2-core machine a helper warming up during the page's random search
// of the 2-attempt race slowed it from 32,000-33,600 runs/s to 26,500-27,200
// (four fresh pages each, 2026-12-03). The body says when they are ready
// (`data-search-workers`: warm, or cold when one could not warm up).
function prepareWhenIdle() {
  const prepare = () => {
    // Only an exhaustive search splits: with another strategy chosen the
    // helpers wait until exhaustive is chosen again (the change below).
    if (ui.strategy.value !== 'exhaustive') return;
    if (running) {
      prepareLater();
      return;
    }
    const quiet = performance.now() - lastInput;
    if (quiet < QUIET_BEFORE_PREPARING_MS) {
      setTimeout(prepareWhenIdle, QUIET_BEFORE_PREPARING_MS - quiet);
      return;
    }
    performance.mark('replayground:helpers-start');
    engine.prepareSearches().then(
      (warm) => { document.body.dataset.searchWorkers = warm ? 'warm' : 'cold'; },
      () => { document.body.dataset.searchWorkers = 'cold'; },
    );
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(prepare, { timeout: 2000 });
  else prepare();
}

ui.strategy.addEventListener('change', () => {
  run.render();
  if (ui.strategy.value === 'exhaustive' && document.body.dataset.ready === 'true' && !document.body.dataset.searchWorkers) {
    prepareWhenIdle();
  }
});
