// The playground page: catalog, timeline lanes, manual stepping, strategies,
// the database beside the timeline, checks and permalinks. It talks to the
// engine only through engine.js. All text, from users and links included, is
// rendered with textContent, never as HTML.
import * as engine from './engine.js';
import { count, el, number, row, scheduleText } from './parts/dom.js';
import { databaseSections, lockItems } from './parts/tables.js';
import { keepInView, renderTimeline } from './parts/timeline.js';
import { pack, unpack } from './parts/pack.js';
import { checkText, checksRows, verdictOf } from './parts/verdict.js';
import { JOURNAL, lockText, statusWord } from './parts/words.js';
import * as catalog from './catalog.js';
import * as editor from './editor.js';
import * as paramControls from './params.js';

/** @param {string} id The element's id (the page has it). */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const ui = {
  status: $('engine-status'),
  crateVersion: $('crate-version'),
  linkError: $('link-error'),
  title: $('scenario-title'),
  explanation: $('scenario-explanation'),
  extra: $('scenario-extra'),
  strategy: /** @type {HTMLSelectElement} */ ($('strategy')),
  seed: /** @type {HTMLInputElement} */ ($('seed')),
  runs: /** @type {HTMLInputElement} */ ($('runs')),
  depth: /** @type {HTMLInputElement} */ ($('depth')),
  budget: /** @type {HTMLInputElement} */ ($('budget')),
  run: /** @type {HTMLButtonElement} */ ($('run')),
  cancel: /** @type {HTMLButtonElement} */ ($('cancel')),
  continue: /** @type {HTMLButtonElement} */ ($('continue')),
  undo: /** @type {HTMLButtonElement} */ ($('undo')),
  reset: /** @type {HTMLButtonElement} */ ($('reset')),
  copyLink: /** @type {HTMLButtonElement} */ ($('copy-link')),
  progress: /** @type {HTMLProgressElement} */ ($('progress')),
  runStatus: $('run-status'),
  steps: $('explanation'),
  lanes: $('lanes'),
  verdict: $('verdict'),
  checks: /** @type {HTMLTableElement} */ ($('checks')),
  selectedStep: $('selected-step'),
  locks: $('locks'),
  changes: $('changes'),
  tables: $('tables'),
  roundTripRun: /** @type {HTMLButtonElement} */ ($('round-trip-run')),
  note: /** @type {HTMLInputElement} */ ($('note')),
  roundTripLog: $('round-trip-log'),
  roundTripError: $('round-trip-error'),
  shortcuts: /** @type {HTMLInputElement} */ ($('shortcuts')),
};

const DEFAULT_SCENARIO = 'idem-race';
// The longest address a shared link may be: common servers and proxies
// refuse longer request lines (8 KiB).
const MAX_LINK_CHARS = 8000;
const state = {
  // Counts scenario loads: a search's answer counts only for the load it started under.
  generation: 0,
  // While the page shows what the address says, it writes no new history entry.
  restoring: false,
  catalog: [],
  entry: null,
  // The schedule of the run the explanation list explains (showExplanation).
  explained: null,
  // What the engine runs: a catalog id, or { source, name } for a design.
  arg: null,
  // A design's source and its packed form for links (null for a built-in).
  source: null,
  packed: null,
  params: {},
  stepper: null,
  // The search that stopped with branches left ({ generation, strategy }),
  // which Continue goes on with.
  paused: null,
  view: null,
  selected: -1,
  search: null,
  busy: false,
};

// Shows `message` in the link-error notice (or hides it).
function notice(message) {
  ui.linkError.textContent = message;
  ui.linkError.hidden = !message;
}

// Shows a status line under the controls.
function status(message, kind = '') {
  ui.runStatus.textContent = message;
  ui.runStatus.dataset.kind = kind;
}

// Draws the catalog with the scenario shown marked (until the catalog is
// read, the scenario shown stands alone in it).
function renderCatalog() {
  const entries = state.catalog.length ? state.catalog : [state.entry].filter((e) => e && !state.source);
  catalog.render(entries, state.source ? null : state.entry?.id);
}

// Enter or Space on a scenario of the catalog opens it, as a click does.
catalog.onPick((option) => actions.pick(option));

// ---------------------------------------------------------------- params

// The scenario shown, as loadScenario takes it: a catalog id, or { source } for a design.
const shownScenario = () => (state.source ? { source: state.source } : state.entry.id);

// Saves `text` as a file called `name` (the browser's download).
function download(name, text, type) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// ---------------------------------------------------------------- permalink

// The URL of the current scenario, parameters, schedule and selected step.
function permalink() {
  const query = new URLSearchParams();
  if (state.source) {
    // A design travels whole in the link, packed; its parameters as JSON.
    query.set('src', state.packed);
    if (Object.keys(state.params).length) query.set('params', JSON.stringify(state.params));
  } else {
    query.set('s', state.entry.id);
    for (const [name, value] of Object.entries(state.params)) query.set(name, String(value));
  }
  if (state.view?.schedule) query.set('schedule', state.view.schedule);
  if (state.selected >= 0 && state.view && state.selected < state.view.trace.length - 1) query.set('step', String(state.selected + 1));
  return `${location.pathname}?${query}`;
}

// Keeps the address in step with what is shown. A new scenario, new
// parameters or a new schedule make a history entry (Back and Forward move
// between them); moving the selection only replaces the current one.
// While the page is still opening what the address says, it leaves the
// address alone; `replace` rewrites the current entry instead of adding one.
function updateLink({ replace = false } = {}) {
  if (state.restoring) return;
  const url = permalink();
  if (url.length > MAX_LINK_CHARS) {
    // Refused, not cut: a cut link would open something else.
    notice(`This design is too long for a link (${number(url.length)} characters; links keep to ${number(MAX_LINK_CHARS)}). The address still shows the last run that fit; save the design as a file and embed it with src, or keep it as a draft.`);
    return;
  }
  const here = `${location.pathname}${location.search}`;
  if (url === here) return;
  const previous = new URLSearchParams(location.search);
  const next = new URL(url, location.href).searchParams;
  previous.delete('step');
  next.delete('step');
  const sameRun = previous.toString() === next.toString();
  if (replace || sameRun) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

// Opens what the address says (a link, or Back and Forward): the scenario,
// its parameters, the schedule and the step; a bad part is dropped and named.
async function openLink() {
  if (new URLSearchParams(location.search).has('src')) {
    await openDesignLink();
    return;
  }
  const problems = [];
  let link = { id: null, params: {}, schedule: null, step: null };
  try {
    link = await readLink();
    problems.push(...link.problems);
  } catch (error) {
    problems.push(error.message);
  }
  const id = link.id ?? DEFAULT_SCENARIO;
  const quietly = { draw: false };
  try {
    await loadScenario(id, link.params, link.schedule, quietly);
  } catch (error) {
    if (error.scheduleOnly) {
      problems.push(`the schedule was dropped: ${error.message}`);
    } else if (link.schedule) {
      problems.push(`the schedule was dropped: ${error.message}`);
      await loadScenario(id, link.params, null, quietly);
    } else {
      problems.push(error.message);
      await loadScenario(DEFAULT_SCENARIO, {}, null, quietly);
    }
  }
  if (link.step !== null && link.step !== undefined) {
    if (link.step <= state.view.trace.length) {
      state.selected = link.step - 1;
    } else {
      problems.push(`the step was dropped: step ${link.step} is not in this run (it has ${state.view.trace.length} steps)`);
    }
  }
  notice(problems.length ? `Part of this link was dropped: ${problems.join('; ')}.` : '');
  explainLinkedRun();
  render();
}

// A link to a failing run opens with its summary and one sentence per step.
function explainLinkedRun() {
  const { result } = state.view;
  if (result && !result.passed) {
    const failed = result.checks.filter((c) => !c.pass).map(checkText);
    status(`This link shows a failing run of ${runContext(`schedule ${scheduleText(result.schedule)}`)}: ${failed.join('; ')}.`, 'fail');
    showExplanation(state.view.explanation, state.view.schedule);
  }
}

// Shows a run's explanation (one sentence per step, numbered by the list;
// the sentence that follows them all, a run that goes round for ever, not
// numbered) for the run of `schedule`: once the run shown is another, the
// list is put away (render).
function showExplanation(lines, schedule) {
  ui.steps.replaceChildren(...lines.map((line) => {
    const li = el('li', line.replace(/^\d+\. /, ''));
    if (!/^\d+\. /.test(line)) li.className = 'after-steps';
    return li;
  }));
  ui.steps.hidden = false;
  state.explained = schedule;
}

// Opens a link that carries a design (src=, packed): the design, its
// parameters, the schedule and the step. The design is untrusted: the
// engine runs it in its worker within the format's bounds, and its text is
// shown as text.
async function openDesignLink() {
  const query = new URLSearchParams(location.search);
  const problems = [];
  let source;
  try {
    source = await unpack(query.get('src'));
  } catch (error) {
    notice(`This link's design could not be opened: ${error.message}.`);
    await loadScenario(DEFAULT_SCENARIO, {});
    render();
    return;
  }
  let params = {};
  if (query.has('params')) {
    let given = null;
    try {
      given = JSON.parse(query.get('params'));
    } catch {
      // Named below.
    }
    if (given !== null && typeof given === 'object' && !Array.isArray(given)) params = given;
    else problems.push('the params were dropped: they are not a JSON object');
  }
  try {
    await loadScenario({ source }, params, query.get('schedule'));
  } catch (error) {
    try {
      // What the link gave besides the design is dropped, and said.
      const dropped = [query.has('schedule') && 'schedule', query.has('params') && 'params'].filter(Boolean);
      problems.push(`the ${dropped.join(' and ') || 'link'} ${dropped.length === 1 ? 'was' : 'were'} dropped: ${error.message}`);
      await loadScenario({ source }, {});
    } catch (again) {
      notice(`This link's design could not be opened: ${again.message}.`);
      editor.open(source);
      await loadScenario(DEFAULT_SCENARIO, {});
      render();
      return;
    }
  }
  if (query.has('step')) {
    const step = Number(query.get('step'));
    if (Number.isInteger(step) && step >= 1 && step <= state.view.trace.length) state.selected = step - 1;
    else problems.push(`the step was dropped: step ${JSON.stringify(query.get('step'))} is not in this run (it has ${state.view.trace.length} steps)`);
  }
  notice(problems.length ? `Part of this link was dropped: ${problems.join('; ')}.` : '');
  explainLinkedRun();
  render();
}

// Opens what the address says without adding a history entry, then
// writes back the address of what is shown (a dropped part disappears).
async function restoreFromAddress() {
  state.restoring = true;
  try {
    await busy(openLink);
  } finally {
    state.restoring = false;
  }
  updateLink({ replace: true });
}

// Back and Forward: show the run the address names.
window.addEventListener('popstate', restoreFromAddress);

// Reads the link through the engine's permalink parser: { id, params,
// schedule, step, problems } (a bad part is dropped and named in problems).
async function readLink() {
  const link = await engine.parsePermalink(location.search);
  return { id: link.scenario, params: link.params, schedule: link.schedule, step: link.step ?? null, problems: link.problems };
}

// ---------------------------------------------------------------- scenario

// Loads scenario `id` with `params`, started replayed to `schedule` if given
// (one that does not fit is an Error marked `scheduleOnly`, thrown once the
// scenario is shown at its start). Draws it unless `draw` is false (a caller
// that draws once it is done).
async function loadScenario(what, params = {}, schedule = null, { draw = true } = {}) {
  // A catalog id, or { source } for a design.
  const source = typeof what === 'string' ? null : what.source;
  const arg = source === null ? what : { source, name: 'design' };
  // A search of what was shown before must not report on what is shown
  // now; a run or step under way gives the engine back first (within
  // engine.SETTLE_MS: past it the engine starts over, and the old
  // scenario's stepper is gone with it).
  state.generation += 1;
  state.search?.cancel();
  if (await engine.settle('another scenario was chosen while a run was under way') === 'restarted') state.stepper = null;
  // Before the catalog is read (the page's first scenario), the engine
  // describes the one scenario asked for.
  const entry = source === null && state.catalog.length
    ? state.catalog.find((e) => e.id === what)
    : await engine.describeScenario(arg);
  if (!entry) throw new Error(`there is no scenario ${JSON.stringify(what)}`);
  // What runs now is what is shown: a new design's drafting is over.
  document.body.classList.remove('drafting');
  const stepper = await engine.stepper(arg, { params }, schedule);
  const packed = source === null ? null : await pack(source);
  state.stepper?.close();
  state.stepper = stepper;
  // The editor shows the design being run; a built-in closes it, unless it
  // holds changes not yet run or saved.
  if (source === null && editor.isOpen() && !editor.isDirty()) editor.close();
  state.entry = entry;
  state.arg = arg;
  state.source = source;
  state.packed = packed;
  state.params = params;
  state.view = stepper.state;
  state.selected = -1;
  ui.steps.hidden = true;
  ui.title.textContent = entry.title;
  ui.explanation.textContent = entry.explanation;
  paramControls.render(state.entry, state.view?.params);
  renderCatalog();
  renderExtra();
  status('');
  state.selected = state.view.trace.length - 1;
  if (stepper.scheduleError !== undefined) {
    throw Object.assign(new Error(stepper.scheduleError), { scheduleOnly: true });
  }
  if (draw) render();
}

// Loads the scenario shown again, as it was (after the engine restarted,
// which took its stepper), then says `message`.
async function reload(message) {
  if (!state.entry) return;
  const what = state.source === null ? state.arg : { source: state.source };
  try {
    await loadScenario(what, state.params);
    status(message, 'fail');
  } catch (error) {
    status(`${message} It could not be loaded again: ${error.message}`, 'fail');
  }
}

// The engine restarted on its own (its module trapped, its worker died):
// the scenario shown is loaded again, so the next action works.
engine.onRestart((reason, requested) => {
  if (!requested) reload(`The engine stopped (${reason}) and was started again; the scenario is loaded again.`);
});

// Draws scenario-specific extras: the profiles table, the sweep button.
async function renderExtra() {
  ui.extra.replaceChildren();
  if (state.source) return;
  if (state.entry.id === 'idem-profiles' || state.entry.id === 'idem-in-flight') {
    const rows = await engine.profiles();
    const table = el('table', '', 'results profiles');
    table.append(row(['profile', 'retention', 'stores errors', 'in flight', 'other payload', 'no key', 'handler error'], 'th'));
    for (const p of rows) {
      table.append(row([p.id, `${p.retentionSeconds} s`, p.storesErrors ? 'yes' : 'no', p.inFlight, p.conflict, p.missingKey, p.error]));
    }
    ui.extra.append(table);
  }
  if (state.entry.id.startsWith('outbox-crash-sweep')) {
    const button = el('button', 'Sweep every crash point');
    button.type = 'button';
    button.dataset.action = 'sweep';
    ui.extra.append(button);
  }
}

// ---------------------------------------------------------------- rendering

// Redraws everything that depends on the run.
function render() {
  if (!state.view) return;
  // The explanation is of one run: a step, an undo or a reset makes another.
  if (!ui.steps.hidden && state.explained !== state.view.schedule) ui.steps.hidden = true;
  const selectedBox = renderTimeline(ui.lanes, state.view, { selected: state.selected, busy: state.busy });
  renderDatabase();
  renderChecks();
  const over = Boolean(state.view.result);
  ui.undo.disabled = state.busy || state.view.trace.length === 0;
  ui.reset.disabled = state.busy || state.view.trace.length === 0;
  ui.run.disabled = state.busy;
  ui.lanes.dataset.over = String(over);
  renderStrategyControls();
  keepInView(selectedBox);
  updateLink();
}

// Shows only the settings the chosen strategy uses.
function renderStrategyControls() {
  const strategy = ui.strategy.value;
  ui.seed.closest('label').hidden = !['random', 'pct'].includes(strategy);
  ui.runs.closest('label').hidden = !['random', 'pct'].includes(strategy);
  ui.depth.closest('label').hidden = strategy !== 'pct';
  ui.budget.closest('label').hidden = strategy !== 'exhaustive';
  // Continue belongs to the search that stopped on what is shown now.
  ui.continue.hidden = state.paused?.generation !== state.generation;
  ui.continue.disabled = state.busy;
}

// Draws the database panel after the selected step: locks, uncommitted
// changes of that step, and the committed tables.
function renderDatabase() {
  const { trace } = state.view;
  const index = state.selected;
  const step = trace[index];
  ui.selectedStep.textContent = step ? `after step ${index + 1} (${step.label}: ${step.name})` : 'before the first step';
  ui.locks.replaceChildren(...lockItems(state.view, index));
  ui.changes.replaceChildren(...(step?.changes ?? []).map((c) => el('li', `${c.label ?? step.label} ${c.op} ${c.table} rowid ${c.rowid} (${c.db}, uncommitted until its transaction commits)`)));
  ui.tables.replaceChildren(...databaseSections(state.view, index));
}

// Draws the verdict and the checks (expected against actual) once the run is over.
function renderChecks() {
  const verdict = verdictOf(state.view);
  ui.verdict.textContent = verdict.text;
  ui.verdict.dataset.kind = verdict.kind;
  ui.checks.replaceChildren(...checksRows(state.view));
}

// ---------------------------------------------------------------- actions

// Runs `work` with the controls disabled; shows its error as a status line.
// Runs `work` with the controls disabled; says what went wrong, if
// anything, and returns whether it went right.
async function busy(work) {
  state.busy = true;
  try {
    render();
    await work();
    return true;
  } catch (error) {
    status(error.message, 'fail');
    return false;
  } finally {
    state.busy = false;
    render();
  }
}

// ---------------------------------------------------------------- the editor

// Keeps `drafts` in this browser; says so in the status line if it refuses.
function keepDrafts(drafts) {
  try {
    editor.keepDrafts(drafts);
    return true;
  } catch (error) {
    status(`The draft could not be kept in this browser: ${error.message}`, 'fail');
    return false;
  }
}

const actions = {
  // Opens an editable copy of the scenario shown (a built-in's file, or the design).
  async 'edit-copy'() {
    try {
      let source = state.source ?? await engine.scenarioSource(state.entry.id);
      // The copy runs in the mode shown: a mode other than the file's own
      // default goes into the copy (a design's own `journal` line is replaced).
      const mode = state.params[JOURNAL];
      if (mode && mode !== paramControls.journalParam(state.entry).default) {
        source = `journal = "${mode}"\n${source.replace(/^journal\s*=.*\n/m, '')}`;
      }
      if (editor.open(source)) document.body.classList.remove('drafting');
    } catch (error) {
      status(error.message, 'fail');
    }
  },
  // Puts the caret at the mistake the editor's status names.
  'goto-mistake'() {
    editor.gotoMistake();
  },
  // Opens the editor on a blank design.
  'new-design'() {
    if (editor.open(editor.TEMPLATE)) document.body.classList.add('drafting');
  },
  // Runs the editor's design as the scenario shown (its link holds it).
  async 'apply-source'() {
    const source = editor.text();
    try {
      await engine.describeScenario({ source, name: 'design' });
    } catch (error) {
      editor.say(error.message, 'fail');
      return;
    }
    if (await busy(() => loadScenario({ source }, {}))) {
      editor.settled();
      // The design now runs below the editor: bring its controls and
      // timeline into view (the editor stays open above them).
      $('run-controls').scrollIntoView({ block: 'start' });
    } else {
      // Why it cannot run, where the design is written.
      editor.say(`It does not run: ${ui.runStatus.textContent}`, 'fail');
    }
  },
  // Keeps the editor's design in this browser, under its title.
  async 'save-draft'() {
    const source = editor.text();
    let title;
    try {
      title = (await engine.describeScenario({ source, name: 'design' })).title;
    } catch (error) {
      title = `Draft (not yet valid) ${new Date().toLocaleString('en')}`;
      editor.say(`Kept as a draft, but: ${error.message}`, 'fail');
    }
    const existing = editor.drafts().find((d) => d.title === title);
    if (existing && existing.source !== source
      && !window.confirm(`A draft called "${title}" exists. Replace it with this one? (Or change the title first.)`)) {
      return;
    }
    const drafts = editor.drafts().filter((d) => d.title !== title);
    drafts.unshift({ title, source, saved: Date.now() });
    if (keepDrafts(drafts)) {
      editor.settled();
      status(`Saved "${title}" in My scenarios.`);
    }
  },
  // Opens a draft in the editor and runs it.
  async 'open-draft'(target) {
    const draft = editor.drafts()[Number(target.dataset.draft)];
    if (!draft || !editor.open(draft.source)) return;
    try {
      await engine.describeScenario({ source: draft.source, name: 'design' });
      await busy(() => loadScenario({ source: draft.source }, {}));
    } catch {
      // The editor says what is wrong with it.
    }
  },
  // Deletes a draft, once the person confirms.
  'delete-draft'(target) {
    const drafts = editor.drafts();
    const i = Number(target.dataset.draft);
    const draft = drafts[i];
    if (!draft || !window.confirm(`Delete the draft "${draft.title}"? This cannot be undone.`)) return;
    drafts.splice(i, 1);
    keepDrafts(drafts);
  },
  // Closes the editor (the design shown stays).
  'close-editor'() {
    editor.close();
    document.body.classList.remove('drafting');
    $('edit-copy').focus();
  },
  // Opens a scenario from the catalog with its default parameters.
  async pick(target) {
    notice('');
    await busy(() => loadScenario(target.dataset.scenario, {}));
  },
  // Lets an attempt take its next step.
  async step(target) {
    const attempt = Number(target.dataset.attempt);
    await busy(async () => {
      state.view = await state.stepper.step(attempt);
      state.selected = state.view.trace.length - 1;
    });
  },
  // Takes back one step.
  async undo() {
    await busy(async () => {
      state.view = await state.stepper.undo();
      state.selected = state.view.trace.length - 1;
    });
  },
  // Goes back to the first step.
  async reset() {
    await busy(async () => {
      state.view = await state.stepper.setSchedule('');
      state.selected = -1;
      ui.steps.hidden = true;
      status('');
    });
  },
  // Shows the database after a step.
  select(target) {
    state.selected = Number(target.dataset.step);
    render();
  },
  // Applies the parameter controls: the scenario starts over with them.
  async params() {
    await busy(() => loadScenario(shownScenario(), paramControls.read(state.entry)));
  },
  // Runs the chosen strategy.
  async run() {
    await busy(runStrategy);
  },
  // Copies the address of this run (it always holds the run shown).
  async 'copy-link'() {
    const url = permalink();
    if (url.length > MAX_LINK_CHARS) {
      status(`Nothing was copied: this design is too long for a link (${number(url.length)} characters; links keep to ${number(MAX_LINK_CHARS)}). Save it as a draft or as a file.`, 'fail');
      return;
    }
    try {
      await navigator.clipboard.writeText(location.href);
      status('The link to this run was copied.');
    } catch (error) {
      status(`The link could not be copied (${error.message}); copy it from the address bar.`, 'fail');
    }
  },
  // Downloads the run shown as JSON: the scenario, parameters, schedule,
  // and every step's SQL, parameters, result, locks and tables.
  'download-trace'() {
    const view = state.view;
    if (!view?.trace?.length) {
      status('Take a step first: the trace holds the steps taken.', 'fail');
      return;
    }
    const name = fileName(view.schedule, 'json');
    download(name, JSON.stringify(view, null, 2), 'application/json');
    status(`${name} holds the ${count(view.trace.length, 'step')} of this run.`);
  },
  // Downloads the run as a Python script that replays it on real SQLite.
  async 'export-python'() {
    const view = state.view;
    if (!view?.result) {
      status('Run to the end first (step until no attempt can, or Run a strategy): the script replays a whole run.', 'fail');
      return;
    }
    try {
      const script = await engine.exportPython(state.arg, { params: state.params, schedule: view.schedule });
      const name = fileName(view.schedule, 'py');
      download(name, script, 'text/x-python');
      status(`${name} replays this run on real SQLite files with python3 and compares every step.`);
    } catch (error) {
      status(`The script could not be made: ${error.message}`, 'fail');
    }
  },
  // Cancels a running search or round-robin run. The engine answers
  // between a search's slices with what the search covered; past
  // engine.SETTLE_MS the statement under way is interrupted (a search then
  // reports the runs before it, and cannot be continued; a round-robin run
  // is stopped); an engine that answers neither way is ended and starts
  // over with the scenario shown.
  async cancel() {
    const searching = Boolean(state.search);
    if (searching) {
      state.search.cancelled = true;
      state.search.cancel();
    }
    const how = await engine.settle(`a ${searching ? 'search' : 'run'} under way was cancelled`);
    if (how === 'restarted') {
      state.stepper = null;
      await reload(`Cancelled: the ${searching ? 'search' : 'run'} under way did not stop, so the engine started over with the scenario.`);
    } else if (how === 'interrupted' && !searching) {
      status('Cancelled: the run under way was stopped.', 'fail');
    }
  },
  // Continues the search that stopped on its budget or was cancelled.
  async continue() {
    await busy(continueSearch);
  },
  // Runs the crash-point sweep and shows its table.
  async sweep() {
    await busy(async () => {
      const rows = await engine.crashSweep({ inbox: !state.entry.id.endsWith('no-inbox') });
      const table = el('table', '', 'results sweep');
      table.append(row(['crash point', 'committed when the relay died', 'what the restart did', 'verdict'], 'th'));
      for (const r of rows) {
        const tr = row([r.crashPoint, r.committed, r.restart, r.verdict]);
        tr.className = r.passed ? 'pass' : 'fail';
        table.append(tr);
      }
      ui.extra.querySelector('.sweep-scroll')?.remove();
      const scroll = el('div', '', 'table-scroll sweep-scroll');
      scroll.tabIndex = 0;
      scroll.setAttribute('role', 'region');
      scroll.setAttribute('aria-label', 'crash points');
      scroll.append(table);
      ui.extra.append(scroll);
    });
  },
  // The engine check: two connections, one database.
  async 'round-trip'() {
    ui.roundTripError.hidden = true;
    try {
      const trip = await engine.roundTrip(ui.note.value);
      ui.roundTripLog.replaceChildren(
        el('li', `A inserts row ${trip.writtenId} in an open transaction (A holds ${trip.writerLock})`),
        el('li', `B reads before A commits: ${JSON.stringify(trip.readDuringWrite)}`),
        el('li', 'A commits'),
        el('li', `B reads after A commits: ${JSON.stringify(trip.readAfterCommit)}`),
      );
    } catch (error) {
      ui.roundTripLog.replaceChildren();
      ui.roundTripError.textContent = error.message;
      ui.roundTripError.hidden = false;
    }
  },
};

// "idem-race (attempts 2), random (seed 1)": what a verdict belongs to.
function runContext(strategyText) {
  const changed = state.entry.params
    .filter((p) => state.view.params?.[p.name] !== undefined && state.view.params[p.name] !== p.default)
    .map((p) => `${paramControls.words(p.name)} ${state.view.params[p.name]}`);
  const params = changed.length ? ` (${changed.join(', ')})` : '';
  return `${state.entry.title}${params}, ${strategyText}`;
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
  const params = state.params;
  ui.steps.hidden = true;
  if (strategy === 'round-robin') {
    const generation = state.generation;
    // One run (and its replay in the stepper), which Cancel can stop
    // (engine.settle).
    ui.cancel.disabled = false;
    let result;
    try {
      result = await engine.runScenario(state.arg, { params, strategy, seed, depth });
      if (generation !== state.generation) return;
      state.view = await state.stepper.setSchedule(result.schedule);
    } finally {
      ui.cancel.disabled = true;
    }
    state.selected = state.view.trace.length - 1;
    status(`${result.passed ? 'Passes' : 'Fails'}: ${runContext('one round-robin run')}, schedule ${scheduleText(result.schedule)}.`, result.passed ? 'pass' : 'fail');
    return;
  }
  const options = { params, strategy, seed, depth };
  options.runs = strategy === 'exhaustive'
    ? wholeInput(ui.budget, 'the budget', Number(ui.budget.max))
    : wholeInput(ui.runs, 'runs', Number(ui.runs.max));
  state.paused = null;
  await search(strategy, options.runs, (onProgress) => engine.explore(state.arg, options, onProgress));
}

// Continues the stopped search for another budget of runs.
async function continueSearch() {
  const paused = state.paused;
  if (paused?.generation !== state.generation) return;
  const runs = wholeInput(ui.budget, 'the budget', Number(ui.budget.max));
  state.paused = null;
  ui.steps.hidden = true;
  await search(paused.strategy, runs, (onProgress) => engine.resume(runs, onProgress));
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
  const generation = state.generation;
  const current = () => generation === state.generation;
  const params = state.params;
  ui.progress.max = budget;
  ui.progress.value = 0;
  ui.progress.hidden = false;
  ui.cancel.disabled = false;
  status('Exploring…');
  let latest = null;
  let timer = null;
  let running = true;
  const stopDrawing = () => {
    running = false;
    clearTimeout(timer);
  };
  const draw = () => {
    timer = null;
    if (!current() || !running) return;
    const { stats, plannedRuns } = latest;
    ui.progress.max = plannedRuns || budget;
    ui.progress.value = Math.min(stats.runs, ui.progress.max);
    const workers = latest.workers ? ` (split across ${latest.workers} workers)` : '';
    status(`Exploring${workers}: ${count(stats.runs, 'run')}${strategy === 'exhaustive' ? `, ${count(stats.distinctStates, 'distinct state')}` : ''}, ${count(stats.violations, 'violation')}…`);
  };
  const search = start((progress) => {
    if (!current() || !running) return;
    latest = progress;
    timer ??= setTimeout(draw, PROGRESS_EVERY_MS);
  });
  state.search = search;
  try {
    const report = await search.promise;
    stopDrawing();
    if (!current()) return;
    // A search that stopped with branches left can go on from there.
    if (report.frontier) state.paused = { generation, strategy };
    showReport(report);
    // Show a run: the counterexample, or, when none was found, one
    // completed run with its checks passing. A cancel meanwhile stops it
    // (the report stays; the run shown stays what it was).
    try {
      const schedule = report.counterexample?.schedule
        ?? (await engine.runScenario(state.arg, { params, strategy: 'round-robin', trace: false })).schedule;
      if (!current()) return;
      state.view = await state.stepper.setSchedule(schedule);
      state.selected = state.view.trace.length - 1;
    } catch (error) {
      if (!search.cancelled) throw error;
    }
  } finally {
    stopDrawing();
    if (state.search === search) state.search = null;
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
  const context = runContext(report.strategy);
  const c = report.counterexample;
  if (!c) {
    // A sampled search that found nothing passes what it tried; a stopped
    // exhaustive search has not passed yet.
    const passed = report.complete || (!exhaustive && !report.cancelled);
    const tone = report.asDeclared === false ? 'fail' : passed ? 'pass' : '';
    status(`${declared}No violation in ${context} (${coverage}). Shown: one completed run.`, tone);
    return;
  }
  status(`${declared}Counterexample in ${context} (${c.shortest ? 'shortest' : 'first found'}, ${count(c.steps, 'step')}, schedule ${scheduleText(c.schedule)}; ${coverage}).`, 'fail');
  showExplanation(c.explanation, c.schedule);
}

// A download's file name: the scenario and the run's schedule, a long one
// (a loop run to its bound) cut to keep the name short (the file holds it
// whole).
function fileName(schedule, extension) {
  const shown = schedule.length > 64 ? `${schedule.slice(0, 48)}-cut` : schedule;
  return `${state.source ? 'design' : state.entry.id}-${shown}.${extension}`;
}

// Dispatches clicks on [data-action] elements and form submissions.
document.addEventListener('click', (event) => {
  const target = /** @type {HTMLButtonElement | null} */ (/** @type {Element} */ (event.target).closest('[data-action]'));
  if (!target || target.tagName === 'FORM' || target.disabled) return;
  const action = actions[target.dataset.action];
  if (action) action(target);
});
document.addEventListener('submit', (event) => {
  const action = actions[/** @type {HTMLElement} */ (event.target).dataset.action];
  if (!action) return;
  event.preventDefault();
  action(event.target);
});
ui.strategy.addEventListener('change', () => {
  render();
  if (ui.strategy.value === 'exhaustive' && document.body.dataset.ready === 'true' && !document.body.dataset.searchWorkers) {
    prepareSearchesWhenIdle();
  }
});
// The journal mode applies at once: the scenario starts over in that mode,
// with the parameters in use (not edits not yet applied). A search running
// is cancelled, and says so; if the scenario cannot start, the switch shows
// the mode still in use.
paramControls.onJournal(async (mode) => {
  const params = { ...state.params };
  delete params[JOURNAL];
  if (mode && mode !== paramControls.journalParam(state.entry).default) params[JOURNAL] = mode;
  const searching = Boolean(state.search);
  const loaded = await busy(() => loadScenario(shownScenario(), params));
  if (!loaded) paramControls.renderJournal(state.entry, state.view?.params);
  else if (searching) status(`The search was cancelled: the scenario started over with the ${mode === 'wal' ? 'WAL' : 'rollback journal'}.`);
});

// Who holds a lock now, in words: "A holds RESERVED".
function lockItemsText() {
  const last = state.view.trace[state.view.trace.length - 1];
  return (last?.locks ?? []).filter((l) => l.level !== 'NONE').map((l) => `${l.attempt} holds ${lockText(l)}`).join(', ');
}

// Single-key shortcuts can be turned off (WCAG 2.1.4); the choice is kept.
const SHORTCUTS_KEY = 'replayground.shortcuts';
ui.shortcuts.checked = localStorage.getItem(SHORTCUTS_KEY) !== 'off';
ui.shortcuts.addEventListener('change', () => localStorage.setItem(SHORTCUTS_KEY, ui.shortcuts.checked ? 'on' : 'off'));

// Keyboard: a-z step that attempt, u undo, arrows move the selection.
document.addEventListener('keydown', (event) => {
  if (!ui.shortcuts.checked) return;
  if (event.ctrlKey || event.metaKey || event.altKey || !state.view) return;
  const key = event.key.toLowerCase();
  // A radio (the journal switch) keeps its arrow keys; letters still step.
  const target = /** @type {Element} */ (event.target);
  const radio = target.matches?.('input[type="radio"]');
  if (target.closest?.('input, select, textarea, [role="listbox"]') && !(radio && /^[a-z]$/.test(key))) return;
  if (key === 'u') {
    if (!ui.undo.disabled) actions.undo();
  } else if (key === 'arrowleft' || key === 'arrowright') {
    const last = state.view.trace.length - 1;
    state.selected = Math.max(-1, Math.min(last, state.selected + (key === 'arrowleft' ? -1 : 1)));
    render();
  } else if (/^[a-z]$/.test(key)) {
    // The key of an attempt is the letter schedules write it with: its
    // label where labels are single letters (R, S), else its own (a, b).
    const attempt = state.view.letters.findIndex((l) => l.toLowerCase() === key);
    const label = state.view.labels[attempt];
    if (label === undefined) return;
    if (state.busy) return;
    if (state.view.runnable.includes(attempt)) {
      actions.step({ dataset: { attempt: String(attempt) } });
    } else {
      // Say why nothing happened.
      const holders = lockItemsText();
      const st = state.view.statuses[attempt];
      // "it has finished: created", "it failed: …", "it is waiting for a lock".
      const why = st.kind === 'finished' ? `it has finished: ${st.outcome.kind}`
        : st.kind === 'failed' ? `it failed: ${st.error}`
          : `it is ${statusWord(st, state.view.labels)}`;
      status(`${label} cannot step now: ${why}${holders ? ` (${holders})` : ''}.`);
    }
  } else {
    return;
  }
  event.preventDefault();
});

// Loads the engine, the scenario the link names (or the default), then the
// catalog: the engine reads the one scenario file the link needs first, and
// the other files once that scenario is drawn.
async function start() {
  try {
    const v = await engine.versions();
    performance.mark('replayground-engine-answering');
    ui.status.textContent = `SQLite ${v.sqlite} (WebAssembly)`;
    ui.status.dataset.state = 'ready';
    ui.status.dataset.sqliteVersion = v.sqlite;
    ui.status.title = v.sqliteSourceId;
    ui.crateVersion.textContent = v.replayground;
    ui.roundTripRun.disabled = false;
  } catch (error) {
    ui.status.textContent = `SQLite failed to load: ${error.message}`;
    ui.status.dataset.state = 'failed';
    return;
  }
  editor.renderDrafts();
  await restoreFromAddress();
  performance.mark('replayground-first-result');
  try {
    state.catalog = await engine.scenarios();
  } catch (error) {
    status(`The catalog could not be read: ${error.message}`, 'fail');
    return;
  }
  renderCatalog();
  performance.mark('replayground-interactive');
  document.body.dataset.ready = 'true';
  // A blank design opened before the first scenario was drawn would be
  // closed by it: the button waits for the page.
  /** @type {HTMLButtonElement} */ ($('new-design')).disabled = false;
  setTimeout(prepareSearchesWhenIdle, PREPARE_SEARCHES_AFTER_MS);
}

// How long after the page is ready the search helpers start (after what a
// first visit draws), and how long they wait again while a search runs.
const PREPARE_SEARCHES_AFTER_MS = 1000;

// Once the page is idle and no search runs, the helpers of split searches
// start and warm up (see engine.prepareSearches): a first large search then
// runs on compiled code and splits sooner. While a search runs they wait:
// on a 2-core machine a helper warming up during the page's random search
// of the 2-attempt race slowed it from 32,000-33,600 runs/s to 26,500-27,200
// (four fresh pages each, 2026-12-03). The body says when they are ready
// (`data-search-workers`: warm, or cold when one could not warm up).
function prepareSearchesWhenIdle() {
  const prepare = () => {
    // Only an exhaustive search splits: with another strategy chosen the
    // helpers wait until exhaustive is chosen again (the change below).
    if (ui.strategy.value !== 'exhaustive') return;
    if (state.search) {
      setTimeout(prepareSearchesWhenIdle, PREPARE_SEARCHES_AFTER_MS);
      return;
    }
    engine.prepareSearches().then(
      (warm) => { document.body.dataset.searchWorkers = warm ? 'warm' : 'cold'; },
      () => { document.body.dataset.searchWorkers = 'cold'; },
    );
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(prepare, { timeout: 2000 });
  else prepare();
}

start();
