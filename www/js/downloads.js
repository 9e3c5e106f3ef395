// The run shown, taken home: its trace as JSON (every step's SQL,
// parameters, result, locks and tables) and a Python script that replays
// it on real SQLite. It owns the two download buttons.
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
  async 'export-python'() {
    const view = run.current();
    if (!view?.result) {
      run.status('Run to the end first (step until no attempt can, or Run a strategy): the script replays a whole run.', 'fail');
      return;
    }
    try {
      const { arg, params } = scenario.shown();
      const script = await engine.exportPython(arg, { params, schedule: view.schedule });
      const name = fileName(view.schedule, 'py');
      download(name, script, 'text/x-python');
      run.status(`${name} replays this run on real SQLite files with python3 and compares every step.`);
    } catch (error) {
      run.status(`The script could not be made: ${error.message}`, 'fail');
    }
  },
};
