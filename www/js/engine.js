// The engine adapter: the page's only door to the engine. The engine runs in
// a Web Worker (js/worker.js), which alone knows the wasm exports; this
// module turns its messages into promises. The rest of the page is
// wasm-agnostic.

let worker = null;
let nextId = 1;
const pending = new Map();

// Starts the worker once.
function connect() {
  if (worker) return worker;
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = ({ data }) => {
    const call = pending.get(data.id);
    if (!call) return;
    if (data.progress) {
      call.onProgress?.(data.progress);
      return;
    }
    pending.delete(data.id);
    if (data.ok) call.resolve(data.value);
    else call.reject(new Error(data.error));
  };
  worker.onerror = (event) => {
    for (const call of pending.values()) call.reject(new Error(event.message || 'the engine stopped'));
    pending.clear();
  };
  return worker;
}

// Sends one operation to the worker; resolves with its value.
function call(op, args = [], onProgress = null) {
  const id = nextId++;
  const promise = new Promise((resolve, reject) => pending.set(id, { resolve, reject, onProgress }));
  connect().postMessage({ id, op, args });
  return { id, promise };
}

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
// Measures the engine in this browser; see `replayground bench` for the native twin.
export const benchEngine = (rounds, iterations) => call('benchEngine', [rounds, iterations]).promise;

// Starts a search; returns { promise, cancel() }; onProgress gets { done, stats, plannedRuns }.
export function explore(id, options, onProgress) {
  const started = call('explore', [id, options], onProgress);
  return {
    promise: started.promise,
    cancel: () => connect().postMessage({ op: 'cancel', target: started.id }),
  };
}

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
