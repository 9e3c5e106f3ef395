// The engine adapter: the page's only door to the engine. The engine runs in
// a Web Worker (js/worker.js), which alone knows the wasm exports; this
// module turns its messages into promises. The rest of the page is
// wasm-agnostic.

let worker = null;
let nextId = 1;
const pending = new Map();
const restartListeners = new Set();

// The most calls that may wait for the engine at once. A page that sends
// more (thousands of explorations at once) is told so at once instead of
// growing the engine's memory until it fails.
export const MAX_PENDING = 64;

// Calls `listener(reason)` whenever the engine had to be restarted (its
// module trapped or its worker died); everything it held (steppers,
// searches) is gone, so the page reloads what it shows.
export function onRestart(listener) {
  restartListeners.add(listener);
  return () => restartListeners.delete(listener);
}

// Ends the current worker: every pending call is rejected with a sentence,
// and the next call starts a fresh engine.
function restart(reason) {
  const dead = worker;
  worker = null;
  dead?.terminate();
  const message = `the engine stopped (${reason}) and was restarted; what it held is gone, so reload the scenario`;
  for (const call of pending.values()) call.reject(new Error(message));
  pending.clear();
  for (const listener of restartListeners) listener(reason);
}

// The wasm module, fetched and compiled on this page as soon as this script
// runs, while the worker starts; each worker (a restart makes a new one) is
// sent the compiled module and instantiates it. When it cannot be compiled
// here (a page whose policy forbids it), the worker loads it itself.
let compiled = null;
function compiledModule() {
  compiled ??= WebAssembly.compileStreaming(fetch(new URL('../pkg/replayground_bg.wasm', import.meta.url)))
    .catch(() => null);
  return compiled;
}

// Starts the worker once (again after a restart).
function connect() {
  if (worker) return worker;
  const started = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker = started;
  compiledModule().then((module) => {
    if (started === worker) started.postMessage({ op: 'init', module });
  });
  started.onmessage = ({ data }) => {
    if (started !== worker) return;
    const call = pending.get(data.id);
    if (data.fatal) {
      // The module trapped: it answers nothing correctly any more.
      restart(data.error);
      return;
    }
    if (!call) return;
    if (data.progress) {
      call.onProgress?.(data.progress);
      return;
    }
    pending.delete(data.id);
    if (data.ok) call.resolve(data.value);
    else call.reject(new Error(data.error));
  };
  started.onerror = (event) => {
    event.preventDefault?.();
    if (started === worker) restart(event.message || 'its worker failed');
  };
  return started;
}

// Sends one operation to the worker; resolves with its value.
function call(op, args = [], onProgress = null) {
  const id = nextId++;
  if (pending.size >= MAX_PENDING) {
    const busy = Promise.reject(new Error(
      `the engine is busy: ${pending.size} calls are already waiting (at most ${MAX_PENDING}); try again when they finish`));
    return { id, promise: busy };
  }
  const promise = new Promise((resolve, reject) => pending.set(id, { resolve, reject, onProgress }));
  connect().postMessage({ id, op, args });
  return { id, promise };
}

// The engine starts loading with the page, not at its first call.
connect();

// How many calls wait for the engine now.
export const pendingCalls = () => pending.size;

// For tests of the restart path: makes the engine's module really trap (a
// failed allocation inside the wasm module, the same failure as running out
// of memory).
export const trapForTests = () => call('trapForTests').promise;

// Crate and SQLite versions of the loaded module: { replayground, sqlite, sqliteSourceId }.
export const versions = () => call('versions').promise;
// Writes `note` through connection A and reads it back through connection B.
export const roundTrip = (note) => call('roundTrip', [note]).promise;
// The scenario catalog.
export const scenarios = () => call('scenarios').promise;
// Parses a permalink's query string: { scenario, params, schedule, step }.
export const parsePermalink = (query) => call('parsePermalink', [query]).promise;
// The response profiles side by side.
export const profiles = () => call('profiles').promise;
// Runs a scenario once: { params, strategy, seed, depth, schedule } -> result with trace.
export const runScenario = (id, options) => call('runScenario', [id, options]).promise;
// The crash-point sweep of the outbox relay.
export const crashSweep = (options) => call('crashSweep', [options]).promise;
// The run as a Python script that replays it on real SQLite files.
export const exportPython = (id, options) => call('exportPython', [id, options]).promise;
// What the catalog says of an id or of a scenario file ({ source, name }).
export const describeScenario = (scenario) => call('describeScenario', [scenario]).promise;
// A built-in scenario's source.
export const scenarioSource = (id) => call('scenarioSource', [id]).promise;
// Measures the engine in this browser; see `replayground bench` for the native twin.
export const benchEngine = (rounds, iterations) => call('benchEngine', [rounds, iterations]).promise;

// A search under way: { promise, cancel() }.
function search(op, args, onProgress) {
  const started = call(op, args, onProgress);
  return {
    promise: started.promise,
    cancel: () => worker?.postMessage({ op: 'cancel', target: started.id }),
  };
}

// Starts a search; returns { promise, cancel() }; onProgress gets { done, stats, plannedRuns }.
// A search that stops before covering everything (its report has a
// `frontier`) is kept until the next one starts, and `resume` continues it.
export const explore = (id, options, onProgress) => search('explore', [id, options], onProgress);

// Continues the last search stopped by its budget or a cancel: `runs` more
// runs (its first budget if not given); returns { promise, cancel() }.
export const resume = (runs, onProgress) => search('resume', [runs], onProgress);

// A manual stepper for scenario `id`: { state, step(i), undo(), setSchedule(s), close() }.
export async function stepper(id, options) {
  const { handle, state } = await call('newStepper', [id, options]).promise;
  const method = (name, arg) => call('stepper', [handle, name, arg]).promise;
  return {
    state,
    refresh: () => method('state'),
    step: (attempt) => method('step', attempt),
    undo: () => method('undo'),
    setSchedule: (schedule) => method('setSchedule', schedule),
    close: () => call('closeStepper', [handle]).promise,
  };
}
