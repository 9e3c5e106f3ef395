// The run shown, taken home: its trace as JSON (every step's SQL,
// parameters, result, locks and tables), and a Python script or a Rust test
// that replays it on real SQLite. It owns the three download buttons.
import * as engine from './engine.js';
import { count } from './parts/dom.js';
import * as run from './run.js';
import * as scenario from './scenario.js';

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

// A download's file name: the scenario and the run's schedule, a long one
// (a loop run to its bound) cut to keep the name short (the file holds it
// whole).
function fileName(schedule, extension) {
  const { source, entry } = scenario.shown();
  const shown = schedule.length > 64 ? `${schedule.slice(0, 48)}-cut` : schedule;
  return `${source ? 'design' : entry.id}-${shown}.${extension}`;
}

// The exports of a whole run, by language: the engine's export, the file's
// extension and type, and what to do with the file.
const EXPORTS = {
  python: {
    write: engine.exportPython,
    extension: 'py',
    type: 'text/x-python',
    use: (name) => `${name} replays this run on real SQLite files with python3 and compares every step.`,
  },
  rust: {
    write: engine.exportRust,
    extension: 'rs',
    type: 'text/x-rust',
    use: (name) => `${name} is a test: put it in a crate's tests/ folder, with rusqlite (features = ["bundled"]) among its dev-dependencies, and cargo test replays this run on real SQLite files and compares every step.`,
  },
};

// Downloads the run shown as `language` (EXPORTS).
async function exportRun(language) {
  const { write, extension, type, use } = EXPORTS[language];
  const view = run.current();
  if (!view?.result) {
    run.status('Run to the end first (step until no attempt can, or Run a strategy): the export replays a whole run.', 'fail');
    return;
  }
  try {
    const { arg, params } = scenario.shown();
    const text = await write(arg, { params, schedule: view.schedule });
    const name = fileName(view.schedule, extension);
    download(name, text, type);
    run.status(use(name));
  } catch (error) {
    run.status(`The export could not be made: ${error.message}`, 'fail');
  }
}

// The download buttons, by their data-action.
export const actions = {
  // Downloads the run shown as JSON: the scenario, parameters, schedule,
  // and every step's SQL, parameters, result, locks and tables.
  'download-trace'() {
    const view = run.current();
    if (!view?.trace?.length) {
      run.status('Take a step first: the trace holds the steps taken.', 'fail');
      return;
    }
    const name = fileName(view.schedule, 'json');
    download(name, JSON.stringify(view, null, 2), 'application/json');
    run.status(`${name} holds the ${count(view.trace.length, 'step')} of this run.`);
  },
  // Downloads the run as a Python script that replays it on real SQLite.
  'export-python': () => exportRun('python'),
  // Downloads the run as a Rust test that replays it on real SQLite.
  'export-rust': () => exportRun('rust'),
};
