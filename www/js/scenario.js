// The scenario shown: a built-in of the catalog or a design, its
// parameters, and what the page says of it (its title, its explanation, the
// extras some built-ins have: the profiles table, the crash-point sweep). It
// loads a scenario (its run goes to the run view), loads it again after the
// engine restarted, and owns #scenario-title, #scenario-explanation and
// #scenario-extra, and the catalog's entries.
import * as engine from './engine.js';
import { byId as $, el, row } from './parts/dom.js';
import { pack } from './parts/pack.js';
import * as catalog from './catalog.js';
import * as editor from './editor.js';
import * as paramControls from './params.js';
import * as run from './run.js';

const ui = {
  title: $('scenario-title'),
  explanation: $('scenario-explanation'),
  more: /** @type {HTMLButtonElement} */ ($('explanation-more')),
  extra: $('scenario-extra'),
};

const state = {
  // Counts scenario loads: a search's answer counts only for the load it started under.
  generation: 0,
  catalog: [],
  entry: null,
  // What the engine runs: a catalog id, or { source, name } for a design.
  arg: null,
  // A design's source and its packed form for links (null for a built-in).
  source: null,
  packed: null,
  params: {},
};

/**
 * The scenario shown, read only: load changes it.
 * @returns {Readonly<typeof state>}
 */
export const shown = () => state;

// The scenario shown, as load takes it: a catalog id, or { source } for a design.
export const shownScenario = () => (state.source ? { source: state.source } : state.entry.id);

// Called when another scenario starts loading.
const leaving = [];

// Calls `listener()` when a scenario starts loading: what was shown is left
// (a search of it must stop).
export function onLeave(listener) {
  leaving.push(listener);
}

// Draws the catalog with the scenario shown marked (until the catalog is
// read, the scenario shown stands alone in it).
function renderCatalog() {
  const entries = state.catalog.length ? state.catalog : [state.entry].filter((e) => e && !state.source);
  catalog.render(entries, state.source ? null : state.entry?.id);
}

// Takes the catalog's `entries` (read once the first scenario is drawn) and draws them.
export function setCatalog(entries) {
  state.catalog = entries;
  renderCatalog();
}

// Loads scenario `what` (a catalog id, or { source } for a design) with
// `params`, started replayed to `schedule` if given (one that does not fit
// is an Error marked `scheduleOnly`, thrown once the scenario is shown at
// its start). Draws it unless `draw` is false (a caller that draws once it
// is done).
export async function load(what, params = {}, schedule = null, { draw = true } = {}) {
  // A catalog id, or { source } for a design.
  const source = typeof what === 'string' ? null : what.source;
  const arg = source === null ? what : { source, name: 'design' };
  // A search of what was shown before must not report on what is shown
  // now; a run or step under way gives the engine back first (within
  // engine.SETTLE_MS: past it the engine starts over, and the old
  // scenario's stepper is gone with it).
  state.generation += 1;
  for (const listener of leaving) listener();
  if (await engine.settle('another scenario was chosen while a run was under way') === 'restarted') run.dropStepper();
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
  run.start(stepper);
  // The editor shows the design being run; a built-in closes it, unless it
  // holds changes not yet run or saved.
  if (source === null && editor.isOpen() && !editor.isDirty()) editor.close();
  state.entry = entry;
  state.arg = arg;
  state.source = source;
  state.packed = packed;
  state.params = params;
  ui.title.textContent = entry.title;
  ui.explanation.textContent = entry.explanation;
  ui.explanation.classList.add('clamped');
  offerMore();
  paramControls.render(state.entry, run.current()?.params);
  renderCatalog();
  renderExtra();
  run.status('');
  if (stepper.scheduleError !== undefined) {
    throw Object.assign(new Error(stepper.scheduleError), { scheduleOnly: true });
  }
  if (draw) run.render();
}

// Loads the scenario shown again, as it was (after the engine restarted,
// which took its stepper), then says `message`.
export async function reload(message) {
  if (!state.entry) return;
  const what = state.source === null ? state.arg : { source: state.source };
  try {
    await load(what, state.params);
    run.status(message, 'fail');
  } catch (error) {
    run.status(`${message} It could not be loaded again: ${error.message}`, 'fail');
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
  const extra = state.entry.extra;
  if (extra?.kind === 'profiles') {
    const rows = await engine.profiles();
    const table = el('table', '', 'results profiles');
    table.append(row(['profile', 'retention', 'stores errors', 'in flight', 'other payload', 'no key', 'handler error'], 'th'));
    for (const p of rows) {
      table.append(row([p.id, `${p.retentionSeconds} s`, p.storesErrors ? 'yes' : 'no', p.inFlight, p.conflict, p.missingKey, p.error]));
    }
    ui.extra.append(table);
  }
  if (extra?.kind === 'crashSweep') {
    const button = el('button', 'Sweep every crash point');
    button.type = 'button';
    button.dataset.action = 'sweep';
    ui.extra.append(button);
  }
}

// "idem-race (attempts 2), random (seed 1)": what a verdict belongs to.
export function runContext(strategyText) {
  const inUse = run.current().params;
  const changed = state.entry.params
    .filter((p) => inUse?.[p.name] !== undefined && inUse[p.name] !== p.default)
    .map((p) => `${paramControls.words(p.name)} ${inUse[p.name]}`);
  const params = changed.length ? ` (${changed.join(', ')})` : '';
  return `${state.entry.title}${params}, ${strategyText}`;
}

// More shows the explanation's lines that do not fit in three (wide
// screens clamp it: style.css); Less takes them back.
function offerMore() {
  const clamped = ui.explanation.classList.contains('clamped');
  const cut = ui.explanation.scrollHeight > ui.explanation.clientHeight + 1;
  ui.more.hidden = clamped && !cut;
  ui.more.textContent = clamped ? 'More' : 'Less';
  ui.more.setAttribute('aria-expanded', String(!clamped));
}
new ResizeObserver(offerMore).observe(ui.explanation);

// The scenario's buttons, by their data-action.
export const actions = {
  // Shows the whole explanation, or its first lines again.
  'explanation-more'() {
    ui.explanation.classList.toggle('clamped');
    offerMore();
  },
  // Applies the parameter controls: the scenario starts over with them.
  async params() {
    await run.busy(() => load(shownScenario(), paramControls.read(state.entry)));
  },
  // Runs the crash-point sweep and shows its table.
  async sweep() {
    await run.busy(async () => {
      const extra = state.entry.extra;
      if (extra?.kind !== 'crashSweep') return;
      const rows = await engine.crashSweep({ inbox: extra.inbox });
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
};
