// The playground page, wired together: each part of the page is a module
// that owns its elements and its state (the catalog, the scenario shown,
// the parameter controls, the run view, the strategies and their searches,
// the permalink, the design editor and its drafts, the downloads); this
// starts the engine, joins the parts, and dispatches the page's buttons. It
// talks to the engine only through engine.js. All text, from users and
// links included, is rendered with textContent, never as HTML.
import * as engine from './engine.js';
import { byId as $, el } from './parts/dom.js';
import { JOURNAL } from './parts/words.js';
import * as catalog from './catalog.js';
import * as designs from './designs.js';
import * as downloads from './downloads.js';
import * as editor from './editor.js';
import * as paramControls from './params.js';
import * as permalink from './permalink.js';
import * as run from './run.js';
import * as scenario from './scenario.js';
import * as search from './search.js';

const ui = {
  status: $('engine-status'),
  crateVersion: $('crate-version'),
  roundTripRun: /** @type {HTMLButtonElement} */ ($('round-trip-run')),
  note: /** @type {HTMLInputElement} */ ($('note')),
  roundTripLog: $('round-trip-log'),
  roundTripError: $('round-trip-error'),
  run: /** @type {HTMLButtonElement} */ ($('run')),
  runKeys: $('run-keys'),
};

// A scenario left stops its search; each drawing of the run redraws the
// strategy controls and keeps the address in step.
scenario.onLeave(search.stop);
search.onReport(designs.offerFlip);
run.onRender(() => {
  search.renderControls();
  permalink.update();
});

// Every button of the page, by its data-action.
const actions = {
  ...scenario.actions,
  ...run.actions,
  ...search.actions,
  ...permalink.actions,
  ...designs.actions,
  ...downloads.actions,
  // One Run: what the editor holds, if it is open on a design that is not
  // the one shown, becomes the scenario shown first; then the strategy
  // runs (Ctrl+Enter or Cmd+Enter, from anywhere on the page).
  async run() {
    if (editor.isOpen() && editor.text() !== scenario.shown().source
      && !(await designs.actions['apply-source']())) return;
    await search.actions.run();
  },
  // Opens a scenario from the catalog with its default parameters.
  async pick(target) {
    permalink.notice('');
    await run.busy(() => scenario.load(target.dataset.scenario, {}));
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

// Ctrl+Enter (Cmd+Enter on a Mac) runs, from anywhere on the page, the
// editor too; the Run button shows the keys.
const APPLE = /Mac|iPhone|iPad/.test(navigator.platform);
const RUN_KEYS = APPLE ? '⌘ Enter' : 'Ctrl+Enter';
ui.runKeys.textContent = RUN_KEYS;
ui.run.setAttribute('aria-keyshortcuts', APPLE ? 'Meta+Enter' : 'Control+Enter');
ui.run.title = `Runs the strategy chosen on the scenario shown, or on the design in the editor (${RUN_KEYS})`;
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
  event.preventDefault();
  if (!ui.run.disabled) actions.run();
});

// Enter or Space on a scenario of the catalog opens it, as a click does.
catalog.onPick((option) => actions.pick(option));

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

// The journal mode applies at once: the scenario starts over in that mode,
// with the parameters in use (not edits not yet applied). A search running
// is cancelled, and says so; if the scenario cannot start, the switch shows
// the mode still in use.
paramControls.onJournal(async (mode) => {
  const shown = scenario.shown();
  const params = { ...shown.params };
  delete params[JOURNAL];
  if (mode && mode !== paramControls.journalParam(shown.entry).default) params[JOURNAL] = mode;
  const searching = search.isRunning();
  const loaded = await run.busy(() => scenario.load(scenario.shownScenario(), params));
  if (!loaded) paramControls.renderJournal(shown.entry, run.current()?.params);
  else if (searching) run.status(`The search was cancelled: the scenario started over with the ${mode === 'wal' ? 'WAL' : 'rollback journal'}.`);
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
  await permalink.restore();
  performance.mark('replayground-first-result');
  try {
    scenario.setCatalog(await engine.scenarios());
  } catch (error) {
    run.status(`The catalog could not be read: ${error.message}`, 'fail');
    return;
  }
  performance.mark('replayground-interactive');
  document.body.dataset.ready = 'true';
  designs.ready();
  search.prepareLater();
}

start();
