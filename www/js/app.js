// The playground page: wires the DOM to the engine adapter.
// User text is always rendered with textContent, never as HTML.
import * as engine from './engine.js';

const ui = {
  status: document.getElementById('engine-status'),
  crateVersion: document.getElementById('crate-version'),
  roundTripForm: document.getElementById('round-trip-form'),
  roundTripRun: document.getElementById('round-trip-run'),
  note: document.getElementById('note'),
  roundTripLog: document.getElementById('round-trip-log'),
  roundTripError: document.getElementById('round-trip-error'),
};

// Replaces the children of `list` with one <li> per line of text.
function renderLines(list, lines) {
  list.replaceChildren(...lines.map((line) => {
    const item = document.createElement('li');
    item.textContent = line;
    return item;
  }));
}

// Shows `message` in an alert element, or hides it when message is empty.
function showError(element, message) {
  element.textContent = message;
  element.hidden = !message;
}

const actions = {
  // Runs the two-connection round trip with the note from the form.
  async 'round-trip'() {
    showError(ui.roundTripError, '');
    try {
      const trip = await engine.roundTrip(ui.note.value);
      renderLines(ui.roundTripLog, [
        `A inserts row ${trip.writtenId} in an open transaction (A holds ${trip.writerLock})`,
        `B reads before A commits: ${JSON.stringify(trip.readDuringWrite)}`,
        'A commits',
        `B reads after A commits: ${JSON.stringify(trip.readAfterCommit)}`,
      ]);
    } catch (error) {
      ui.roundTripLog.replaceChildren();
      showError(ui.roundTripError, error.message);
    }
  },
};

// Dispatches form submissions to `actions` through their data-action attribute.
document.addEventListener('submit', (event) => {
  const action = actions[event.target.dataset.action];
  if (!action) return;
  event.preventDefault();
  action();
});

// Loads the engine and reports the SQLite version it runs.
async function start() {
  try {
    const v = await engine.versions();
    ui.status.textContent = `SQLite ${v.sqlite} (WebAssembly)`;
    ui.status.dataset.state = 'ready';
    ui.status.dataset.sqliteVersion = v.sqlite;
    ui.status.title = v.sqliteSourceId;
    ui.crateVersion.textContent = v.replayground;
    ui.roundTripRun.disabled = false;
  } catch (error) {
    ui.status.textContent = `SQLite failed to load: ${error.message}`;
    ui.status.dataset.state = 'failed';
  }
}

start();
