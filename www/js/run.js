// The run view: the run shown and the stepper that makes it, drawn as the
// timeline's lanes, the database after the selected step, the verdict and
// the checks; the status line under the controls and the list that explains
// a run step by step; stepping, Undo and Reset, by button and by key. It
// owns that part of the page (#lanes, #selected-step, #locks, #changes,
// #tables, #verdict, #checks, #run-status, #explanation, #undo, #reset and
// #shortcuts) and its state; the page gives it a scenario's stepper, and
// hears when it draws.
import { byId as $, el } from './parts/dom.js';
import { databaseSections, lockItems } from './parts/tables.js';
import { keepInView, renderTimeline } from './parts/timeline.js';
import { checksRows, verdictOf } from './parts/verdict.js';
import { lockText, statusWord } from './parts/words.js';

const ui = {
  undo: /** @type {HTMLButtonElement} */ ($('undo')),
  reset: /** @type {HTMLButtonElement} */ ($('reset')),
  runStatus: $('run-status'),
  steps: $('explanation'),
  lanes: $('lanes'),
  verdict: $('verdict'),
  checks: /** @type {HTMLTableElement} */ ($('checks')),
  selectedStep: $('selected-step'),
  locks: $('locks'),
  changes: $('changes'),
  tables: $('tables'),
  shortcuts: /** @type {HTMLInputElement} */ ($('shortcuts')),
};

// The stepper of the scenario shown (null once the engine restarted, which
// took it), the run it shows, and the step selected in it (-1: before the
// first).
let stepper = null;
let view = null;
let selected = -1;
// The schedule of the run the explanation list explains (showExplanation),
// and the attempts of its steps (null where the run shown was another).
let explained = null;
let explainedAttempts = null;
// Whether an action is under way (the controls are disabled meanwhile),
// and the promise that settles when it is over.
let working = false;
let settled = Promise.resolve();
// Steps and undos asked for by key while an action was under way: each is
// applied, in order, once the one before is drawn (a key is never dropped).
const queued = [];
// Keys queued at most: a key held down repeats about 30 times a second.
const MAX_QUEUED = 1000;
// While keys wait, the run is drawn at most this often (ms), and once the
// last is applied: keys sent faster than a drawing takes are applied
// without drawing each step in between.
const QUEUED_DRAW_MS = 100;
// When the run was last drawn (performance.now()), and whether it changed
// since without being drawn.
let lastDrawn = -Infinity;
// Whether the next drawing brings the selected step into the window (the
// visitor stepped, took back or selected a step).
let revealSelection = false;
let drawPending = false;
// Called after each drawing (the controls of other parts, the address).
const drawn = [];

// The run shown (null before the first scenario is loaded).
export const current = () => view;
// The index of the step selected (-1: before the first step).
export const selection = () => selected;
// Whether an action is under way.
export const isBusy = () => working;

// Calls `listener()` each time the run is drawn.
export function onRender(listener) {
  drawn.push(listener);
}

// Shows the run of a scenario's new `next` stepper, at its last step; the
// stepper it replaces is closed.
export function start(next) {
  queued.length = 0;
  stepper?.close();
  stepper = next;
  view = next.state;
  selected = view.trace.length - 1;
  ui.steps.hidden = true;
}

// Forgets the stepper: the engine restarted, which took it.
export function dropStepper() {
  stepper = null;
}

// Replays the stepper to `schedule` and shows that run at its last step.
export async function replay(schedule) {
  view = await stepper.setSchedule(schedule);
  selected = view.trace.length - 1;
}

// Selects step `index` (-1: before the first step), without drawing.
export function select(index) {
  selected = index;
}

// Puts the explanation list away (a new run is on its way).
export function hideExplanation() {
  ui.steps.hidden = true;
}

// Shows a status line under the controls.
export function status(message, kind = '') {
  ui.runStatus.textContent = message;
  ui.runStatus.dataset.kind = kind;
}

// What the status line says.
export const statusText = () => ui.runStatus.textContent;

// Shows a run's explanation (one sentence per step, numbered by the list;
// the sentence that follows them all, a run that goes round for ever, not
// numbered) for the run of `schedule`: once the run shown is another, the
// list is put away (render).
// Each numbered sentence selects its step when clicked, and the selected
// step's sentence is marked (markSentence); while the run shown is on the
// way along the explained one (Reset, then stepping), the list stays and
// the sentences of steps not taken yet are greyed.
export function showExplanation(lines, schedule) {
  explainedAttempts = view?.schedule === schedule ? view.trace.map((s) => s.attempt) : null;
  let index = 0;
  ui.steps.replaceChildren(...lines.map((line) => {
    if (!/^\d+\. /.test(line)) return el('li', line, 'after-steps');
    const sentence = el('button', line.replace(/^\d+\. /, ''), 'sentence');
    sentence.type = 'button';
    sentence.dataset.action = 'select';
    sentence.dataset.step = String(index);
    index += 1;
    const li = el('li');
    li.append(sentence);
    return li;
  }));
  ui.steps.hidden = false;
  explained = schedule;
  markSentence();
}

// Whether the run shown is the explained one, or on the way along it.
function alongExplained() {
  if (view.schedule === explained) return true;
  const along = explainedAttempts;
  return Boolean(along) && view.trace.length <= along.length && view.trace.every((s, i) => s.attempt === along[i]);
}

// Marks the sentence of the selected step (and keeps it in its list's
// view), and greys those of steps not taken yet.
function markSentence() {
  if (ui.steps.hidden) return;
  /** @type {HTMLButtonElement | null} */
  let current = null;
  ui.steps.querySelectorAll('button.sentence').forEach((element, i) => {
    const sentence = /** @type {HTMLButtonElement} */ (element);
    const ahead = i >= view.trace.length;
    sentence.disabled = ahead;
    sentence.classList.toggle('ahead', ahead);
    sentence.title = ahead ? 'Not taken yet: step on to reach it' : '';
    if (i === selected) {
      sentence.setAttribute('aria-current', 'step');
      current = sentence;
    } else {
      sentence.removeAttribute('aria-current');
    }
  });
  if (!current || ui.steps.scrollHeight <= ui.steps.clientHeight) return;
  const b = current.getBoundingClientRect();
  const s = ui.steps.getBoundingClientRect();
  if (b.top < s.top) ui.steps.scrollTop -= s.top - b.top;
  else if (b.bottom > s.bottom) ui.steps.scrollTop += b.bottom - s.bottom;
}

// Redraws everything that depends on the run.
export function render() {
  if (!view) return;
  lastDrawn = performance.now();
  drawPending = false;
  // The explanation is of one run: a step off its way puts it away.
  if (!ui.steps.hidden && !alongExplained()) ui.steps.hidden = true;
  markSentence();
  const selectedBox = renderTimeline(ui.lanes, view, { selected, busy: working });
  renderDatabase();
  renderChecks();
  const over = Boolean(view.result);
  ui.undo.disabled = working || view.trace.length === 0;
  ui.reset.disabled = working || view.trace.length === 0;
  ui.lanes.dataset.over = String(over);
  for (const listener of drawn) listener();
  // A step taken or selected by the visitor brings the timeline into the
  // window; a run shown otherwise (a search's, a link's) leaves the page
  // where it is, with its verdict.
  keepInView(selectedBox, { page: revealSelection });
  revealSelection = false;
}

// Disables the controls while an action is under way (and tells the other
// parts, which disable theirs), without drawing the run again: it is drawn
// once the action is over.
function renderControls() {
  // Not drawn since the last action: its controls are still disabled.
  if (!view || drawPending) return;
  for (const button of ui.lanes.querySelectorAll('[data-action="step"]')) {
    /** @type {HTMLButtonElement} */ (button).disabled = true;
  }
  ui.undo.disabled = true;
  ui.reset.disabled = true;
  for (const listener of drawn) listener();
}

// Draws the database panel after the selected step: locks, uncommitted
// changes of that step, and the committed tables.
function renderDatabase() {
  const { trace } = view;
  const index = selected;
  const step = trace[index];
  ui.selectedStep.textContent = step ? `after step ${index + 1} (${step.label}: ${step.name})` : 'before the first step';
  ui.locks.replaceChildren(...lockItems(view, index));
  ui.changes.replaceChildren(...(step?.changes ?? []).map((c) => el('li', `${c.label ?? step.label} ${c.op} ${c.table} rowid ${c.rowid} (${c.db}, uncommitted until its transaction commits)`)));
  ui.tables.replaceChildren(...databaseSections(view, index));
}

// Draws the verdict and the checks (expected against actual) once the run is over.
function renderChecks() {
  const verdict = verdictOf(view);
  ui.verdict.textContent = verdict.text;
  ui.verdict.dataset.kind = verdict.kind;
  ui.checks.replaceChildren(...checksRows(view));
}

// Runs `work` with the controls disabled; says what went wrong, if
// anything, and returns whether it went right.
// Focus stays where the visitor left it: a button disabled while the work
// is under way (Run, pressed by Enter) would otherwise leave it on <body>.
export async function busy(work) {
  const focused = document.activeElement;
  working = true;
  let done = () => {};
  settled = new Promise((resolve) => { done = resolve; });
  try {
    renderControls();
    await work();
    return true;
  } catch (error) {
    status(error.message, 'fail');
    return false;
  } finally {
    working = false;
    if (queued.length === 0 || performance.now() - lastDrawn >= QUEUED_DRAW_MS) render();
    else drawPending = true;
    const lost = !document.activeElement || document.activeElement === document.body;
    if (lost && focused instanceof HTMLElement && focused !== document.body && focused.isConnected
      && !(/** @type {HTMLButtonElement} */ (focused).disabled)) focused.focus({ preventScroll: true });
    done();
  }
}

// Applies the keys queued, in order, each after the one before is drawn.
// A key whose attempt cannot step by then says why; the rest still apply.
// Each step's handling (the engine's answer and the drawing) is a
// performance measure named 'replayground:step', which the benchmark reads.
let draining = false;
async function drain() {
  if (draining) return;
  draining = true;
  try {
    while (queued.length > 0) {
      while (working) await settled;
      const next = queued.shift();
      if (!view || !stepper) continue;
      if (next === 'undo') {
        if (view.trace.length > 0) await actions.undo();
      } else if (view.runnable.includes(next)) {
        await actions.step({ dataset: { attempt: String(next) } });
      } else {
        status(cannotStep(next));
      }
    }
  } finally {
    draining = false;
    if (drawPending) render();
  }
}

// Why attempt `attempt` cannot step now: "B cannot step now: it has
// finished: created (A holds RESERVED)."
function cannotStep(attempt) {
  const holders = lockItemsText();
  const st = view.statuses[attempt];
  // "it has finished: created", "it failed: …", "it is waiting for a lock".
  const why = st.kind === 'finished' ? `it has finished: ${st.outcome.kind}`
    : st.kind === 'failed' ? `it failed: ${st.error}`
      : `it is ${statusWord(st, view.labels)}`;
  return `${view.labels[attempt]} cannot step now: ${why}${holders ? ` (${holders})` : ''}.`;
}

// The run view's buttons, by their data-action.
export const actions = {
  // Lets an attempt take its next step.
  async step(target) {
    const attempt = Number(target.dataset.attempt);
    const mark = performance.mark('replayground:step-start');
    await busy(async () => {
      view = await stepper.step(attempt);
      selected = view.trace.length - 1;
      revealSelection = true;
    });
    performance.measure('replayground:step', { start: mark.startTime });
  },
  // Takes back one step.
  async undo() {
    await busy(async () => {
      view = await stepper.undo();
      selected = view.trace.length - 1;
      revealSelection = true;
    });
  },
  // Goes back to the first step.
  async reset() {
    await busy(async () => {
      view = await stepper.setSchedule('');
      selected = -1;
      status('');
    });
  },
  // Shows the database after a step.
  select(target) {
    selected = Number(target.dataset.step);
    revealSelection = true;
    render();
  },
};

// Who holds a lock now, in words: "A holds RESERVED".
function lockItemsText() {
  const last = view.trace[view.trace.length - 1];
  return (last?.locks ?? []).filter((l) => l.level !== 'NONE').map((l) => `${l.attempt} holds ${lockText(l)}`).join(', ');
}

// Single-key shortcuts can be turned off (WCAG 2.1.4); the choice is kept.
const SHORTCUTS_KEY = 'replayground.shortcuts';
ui.shortcuts.checked = localStorage.getItem(SHORTCUTS_KEY) !== 'off';
ui.shortcuts.addEventListener('change', () => localStorage.setItem(SHORTCUTS_KEY, ui.shortcuts.checked ? 'on' : 'off'));

// Keyboard: a-z step that attempt, u undo, arrows move the selection.
document.addEventListener('keydown', (event) => {
  if (!ui.shortcuts.checked) return;
  if (event.ctrlKey || event.metaKey || event.altKey || !view) return;
  const key = event.key.toLowerCase();
  // A radio (the journal switch) keeps its arrow keys; letters still step.
  const target = /** @type {Element} */ (event.target);
  const radio = target.matches?.('input[type="radio"]');
  if (target.closest?.('input, select, textarea, [role="listbox"]') && !(radio && /^[a-z]$/.test(key))) return;
  if (key === 'u') {
    if (working || queued.length > 0) {
      if (queued.length < MAX_QUEUED) queued.push('undo');
      drain();
    } else if (!ui.undo.disabled) actions.undo();
  } else if (key === 'arrowleft' || key === 'arrowright') {
    const last = view.trace.length - 1;
    selected = Math.max(-1, Math.min(last, selected + (key === 'arrowleft' ? -1 : 1)));
    revealSelection = true;
    render();
  } else if (/^[a-z]$/.test(key)) {
    // The key of an attempt is the letter schedules write it with: its
    // label where labels are single letters (R, S), else its own (a, b).
    const attempt = view.letters.findIndex((l) => l.toLowerCase() === key);
    const label = view.labels[attempt];
    if (label === undefined) return;
    if (working || queued.length > 0) {
      // Applied once the action under way (and the keys before) are done.
      if (queued.length < MAX_QUEUED) queued.push(attempt);
      else status(`${MAX_QUEUED} keys are waiting already; this one was not kept.`, 'fail');
      drain();
    } else if (view.runnable.includes(attempt)) {
      actions.step({ dataset: { attempt: String(attempt) } });
    } else {
      // Say why nothing happened.
      status(cannotStep(attempt));
    }
  } else {
    return;
  }
  event.preventDefault();
});
