// The engine adapter: the page's only door to the engine. The engine runs in
// a Web Worker (js/worker.js), which alone knows the wasm exports; this
// module turns its messages into promises. The rest of the page is
// wasm-agnostic.
import { withChanges } from './parts/changes.js';

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
// and the next call starts a fresh engine. `requested`: the page asked for
// it ([`settle`]), and reloads what it shows itself.
function restart(reason, requested = false) {
  const dead = worker;
  worker = null;
  interrupting = null;
  dead?.terminate();
  const message = `the engine stopped (${reason}) and was restarted; what it held is gone, so reload the scenario`;
  for (const call of pending.values()) call.reject(new Error(message));
  pending.clear();
  for (const listener of restartListeners) listener(reason, requested);
}

// How long a call under way may take to answer once the page wants the
// engine back (a cancelled search answers between its slices, a tenth of a
// second at most unless one run takes longer) before the statement it runs
// is interrupted.
export const SETTLE_MS = 50;

// How long an interrupted call may take to answer before the engine is
// restarted: the statement it ran ends at SQLite's next progress check
// (measured 1-11 ms); only an engine stuck outside SQLite takes longer.
export const INTERRUPT_GRACE_MS = 2000;

// A flag shared with the engine's worker (its `setInterrupt`): set, it
// interrupts the statement the engine runs. A page may share memory with
// its workers only when it is cross-origin isolated (COOP and COEP
// headers, as scripts/serve.py sends); elsewhere there is no flag, and an
// engine that does not answer within SETTLE_MS is restarted.
const canInterrupt = Boolean(globalThis.crossOriginIsolated) && typeof SharedArrayBuffer === 'function';
const newFlag = () => (canInterrupt ? new Int32Array(new SharedArrayBuffer(4)) : null);
let flag = null;
// The calls an interrupt is for: once they have answered, the flag is
// cleared before anything else hears of it, so the next call runs.
let interrupting = null;

// Gives the engine back to the page: resolves with how the calls under way
// ended. 'answered': none was under way, or they answered within
// SETTLE_MS; 'interrupted': the statement they ran was interrupted and they
// answered (a search with what it covered before the interrupted run, a
// run or a step with an error); 'restarted': they did not answer, and the
// worker was ended (they are rejected with a sentence, and whatever the
// engine held is gone). Await it before the next call: a call made
// meanwhile may be interrupted or rejected with the others.
export function settle(reason) {
  if (pending.size === 0) return Promise.resolve('answered');
  const waiting = new Set(pending.keys());
  return new Promise((resolve) => {
    const started = performance.now();
    let interruptedAt = null;
    const poll = () => {
      const now = performance.now();
      if ([...waiting].every((id) => !pending.has(id))) {
        resolve(interruptedAt == null ? 'answered' : 'interrupted');
      } else if (interruptedAt == null && now - started >= SETTLE_MS && flag) {
        interrupting = waiting;
        Atomics.store(flag, 0, 1);
        interruptedAt = now;
        setTimeout(poll, 5);
      } else if (now - (interruptedAt ?? started) >= (interruptedAt == null ? SETTLE_MS : INTERRUPT_GRACE_MS)) {
        restart(reason, true);
        resolve('restarted');
      } else setTimeout(poll, 5);
    };
    poll();
  });
}

// A call has answered: when it was the last of those interrupted, the flag
// is cleared (before its answer reaches the page, which may call again).
function answered(id) {
  pending.delete(id);
  if (interrupting && [...interrupting].every((w) => !pending.has(w))) {
    interrupting = null;
    if (flag) Atomics.store(flag, 0, 0);
  }
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
  flag = newFlag();
  const shared = flag;
  compiledModule().then((module) => {
    if (started === worker) started.postMessage({ op: 'init', module, flag: shared });
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
      call.onProgress?.(data.progress, data.finished);
      return;
    }
    answered(data.id);
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
  const owner = connect();
  owner.postMessage({ id, op, args });
  return { id, promise, owner };
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
// The same run as a Rust test (rusqlite): `replayground export --rust`.
export const exportRust = (id, options) => call('exportRust', [id, options]).promise;
// What the catalog says of an id or of a scenario file ({ source, name }).
export const describeScenario = (scenario) => call('describeScenario', [scenario]).promise;
// A scenario file ({ source, name }) checked: { entry } or its first mistake,
// { error, line?, column? }.
export const checkScenario = (scenario) => call('checkScenario', [scenario]).promise;
// A built-in scenario's source.
export const scenarioSource = (id) => call('scenarioSource', [id]).promise;
// Measures the engine in this browser; see `replayground bench` for the native twin.
export const benchEngine = (rounds, iterations) => call('benchEngine', [rounds, iterations]).promise;

// A search under way: { promise, cancel() }.
function search(op, args, onProgress) {
  stopWarmUps();
  lastSplit = null;
  const started = call(op, args, onProgress);
  return {
    promise: started.promise,
    cancel: () => worker?.postMessage({ op: 'cancel', target: started.id }),
  };
}

// ---------------------------------------------------------------- split searches

// How many workers an exhaustive search is split across: one per core, at
// most 4 (the engine's worker and helpers started at the first split search).
export const SEARCH_WORKERS = Math.max(1, Math.min(Number(navigator.hardwareConcurrency) || 1, 4));

// Helper workers: the same worker script and module as the engine's, each a
// shard of split searches only. One that fails is dropped (a new one starts
// with the next search); its search fails with a sentence.
const helpers = [];

function helper(index) {
  if (helpers[index]) return helpers[index];
  const started = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  const h = { worker: started, calls: new Map(), nextId: 1 };
  compiledModule().then((module) => started.postMessage({ op: 'init', module }));
  const fail = (reason) => {
    for (const c of h.calls.values()) c.reject(new Error(`a search worker stopped (${reason})`));
    h.calls.clear();
    started.terminate();
    if (helpers[index] === h) helpers[index] = null;
  };
  started.onmessage = ({ data }) => {
    if (data.fatal) {
      fail(data.error);
      return;
    }
    const c = h.calls.get(data.id);
    if (!c) return;
    if (data.progress) {
      c.onProgress?.(data.progress, data.finished);
      return;
    }
    h.calls.delete(data.id);
    if (data.ok) c.resolve(data.value);
    else c.reject(new Error(data.error));
  };
  started.onerror = (event) => {
    event.preventDefault?.();
    fail(event.message || 'its worker failed');
  };
  helpers[index] = h;
  return h;
}

// Starts the helpers a split search needs and has each search a bundled
// design as a shard of a split search for WARM_UP_MS (the engine's
// `warmUp`): V8 compiles a function when it first runs and optimises it
// only after it has run a while, and shares a module's compiled code between
// the workers of a page, so this prepares the search's hot code for the
// engine's worker too, and a large search splits sooner once the helpers
// are ready (SPLIT_WARM_MS). Measured on this project's 2-core machine
// (2026-12-03, Intel): compiling cost a page's first three-producer search
// about 0.4 s (2.0 s in a fresh worker, 1.6 s in a second fresh worker of
// the same page). Resolves to whether every helper is warm.
export function prepareSearches() {
  const warmed = [];
  for (let index = 0; index + 1 < SEARCH_WORKERS; index += 1) {
    const h = helper(index);
    if (!h.warm) {
      const { id, promise } = helperCall(h, 'warmUp', [WARM_UP_MS]);
      h.warming = id;
      h.warm = promise.then(() => {
        h.warming = null;
        h.ready = true;
        return true;
      }, () => false);
    }
    warmed.push(h.warm);
  }
  return Promise.all(warmed).then((all) => all.every(Boolean));
}

// How long each helper searches to warm up (the engine's `warmUp`). The
// page's three-producer search, split, from the click to its verdict, in
// fresh pages (2026-12-03), with the warm-up in one piece: 1.45-1.58 s after
// one slice, 1.42-1.53 s after 300 ms, 1.39-1.43 s after 1,000 ms; in the
// worker's 25 ms slices (each starts the bundled search anew, so its first
// part runs again), 1.40-1.45 s after 300 ms.
const WARM_UP_MS = 300;

// Stops the helpers' warm-ups under way (within a slice of it): a search
// needs the cores. A helper stopped so is ready all the same.
function stopWarmUps() {
  for (const h of helpers) {
    if (h?.warming != null) h.worker.postMessage({ op: 'cancel', target: h.warming });
  }
}

// Whether every helper a split needs has warmed up.
const helpersReady = () => {
  for (let index = 0; index + 1 < SEARCH_WORKERS; index += 1) {
    if (!helpers[index]?.ready) return false;
  }
  return true;
};

// Calls `op` on helper `h`; returns { id, promise }.
function helperCall(h, op, args, onProgress) {
  const id = h.nextId++;
  const promise = new Promise((resolve, reject) => h.calls.set(id, { resolve, reject, onProgress }));
  h.worker.postMessage({ id, op, args });
  return { id, promise };
}

// Shard `index`'s door: the engine's worker for 0, a helper for the others.
// Returns { id, promise, post(message) }.
function shardCall(index, op, args, onProgress) {
  if (index === 0) {
    const started = call(op, args, onProgress);
    return { ...started, post: (message) => worker?.postMessage(message) };
  }
  const h = helper(index - 1);
  const { id, promise } = helperCall(h, op, args, onProgress);
  return { id, promise, post: (message) => h.worker.postMessage(message) };
}

// The last split search, while it can be continued: { count, id, options }.
let lastSplit = null;

// Runs `op` on `count` shards (args(index) gives each its arguments): what
// one shard finishes goes to the others, progress is summed, and the shards'
// parts are merged into one report by the engine's worker.
function split(count, id, options, op, args, onProgress) {
  stopWarmUps();
  let cancelled = false;
  const latest = new Array(count).fill(null);
  const shards = [];
  const over = new Array(count).fill(false);
  for (let index = 0; index < count; index += 1) {
    shards.push(shardCall(index, op, args(index), (progress, finished) => {
      latest[index] = progress.stats;
      if (finished?.length) {
        shards.forEach((other, j) => {
          if (j !== index && !over[j]) other.post({ op: 'addFinished', target: other.id, words: finished });
        });
      }
      const stats = {};
      for (const s of latest.filter(Boolean)) {
        for (const [k, v] of Object.entries(s)) stats[k] = k === 'maxDepth' ? Math.max(stats[k] ?? 0, v) : (stats[k] ?? 0) + v;
      }
      onProgress?.({ done: false, stats, plannedRuns: null, workers: count });
    }));
    shards[index].promise.then(() => { over[index] = true; }, () => { over[index] = true; });
  }
  const cancelAll = () => shards.forEach((s) => s.post({ op: 'cancel', target: s.id }));
  const promise = Promise.all(shards.map((s) => s.promise))
    .catch((error) => {
      cancelAll();
      throw error;
    })
    .then(async (parts) => {
      const report = await call('mergeExplorations', [id, options, parts, cancelled]).promise;
      lastSplit = report.frontier ? { count, id, options } : null;
      return report;
    });
  return {
    promise,
    cancel: () => {
      cancelled = true;
      cancelAll();
    },
  };
}

// Whether `options` ask for a search this page splits: an exhaustive one.
const splits = (options) => SEARCH_WORKERS > 1 && (options?.strategy ?? 'exhaustive') === 'exhaustive'
  && options?.preemptionBound == null;

// A search that has not finished after this long is split: small searches
// stay on one worker (starting helpers and enumerating the top of the tree
// would cost them more than it saves), with the counts one worker gives.
// (The page's three-producer search: split after 500 ms, with its helper
// started then, 3.2 s; after 250 ms with the helper started at 100 ms,
// 2.8-3.0 s, one worker 3.2-3.6 s.)
export const SPLIT_AFTER_MS = 250;

// The same once the helpers have warmed up (prepareSearches): they are ready
// to take their shares at once.
export const SPLIT_WARM_MS = 100;

// The helpers a split needs are started this long into a search, so that
// they have loaded the module when it splits.
const PREPARE_AFTER_MS = 100;

// Starts an exhaustive search split across `count` workers at once (the
// engine's and count - 1 helpers), as `explore` splits one that runs long:
// a run budget is shared out among them. Returns { promise, cancel() }.
// The end-to-end suite compares it with the command line on random designs.
export function exploreSplit(id, options, onProgress, count = SEARCH_WORKERS) {
  const runs = options?.runs;
  const shardOptions = (index) => ({
    ...options,
    shard: { index, count },
    ...(runs == null ? {} : { runs: Math.max(1, Math.ceil(runs / count)) }),
  });
  lastSplit = null;
  return split(count, id, options, 'explore', (index) => [id, shardOptions(index)], onProgress);
}

// Starts a search; returns { promise, cancel() }; onProgress gets { done, stats, plannedRuns }.
// An exhaustive search still running after SPLIT_AFTER_MS starts over split
// across SEARCH_WORKERS workers (a run budget shared out among them); its
// report is one worker's, with counters summed over the workers (a state two
// workers both explored counts twice). A search that stops before covering
// everything (its report has a `frontier`) is kept until the next one
// starts, and `resume` continues it.
export function explore(id, options, onProgress) {
  if (!splits(options)) return search('explore', [id, options], onProgress);
  const began = performance.now();
  let current = null;
  let cancelled = false;
  let splitUp = null;
  const startSplit = () => exploreSplit(id, options, onProgress);
  let prepared = false;
  const warm = helpersReady();
  current = search('explore', [id, options], (progress) => {
    onProgress?.(progress);
    const elapsed = performance.now() - began;
    if (!prepared && !cancelled && !progress.done && elapsed > PREPARE_AFTER_MS) {
      prepared = true;
      for (let index = 1; index < SEARCH_WORKERS; index += 1) helper(index - 1);
    }
    if (!splitUp && !cancelled && !progress.done && elapsed > (warm ? SPLIT_WARM_MS : SPLIT_AFTER_MS)) {
      current.cancel();
      splitUp = startSplit();
      current = splitUp;
    }
  });
  // Once split, the answer is the split search's (cancelled or not).
  const promise = current.promise.then((report) => splitUp?.promise ?? report);
  return {
    promise,
    cancel: () => {
      cancelled = true;
      current.cancel();
    },
  };
}

// Continues the last search stopped by its budget or a cancel: `runs` more
// runs (its first budget if not given); returns { promise, cancel() }.
export function resume(runs, onProgress) {
  if (!lastSplit) return search('resume', [runs], onProgress);
  const { count, id, options } = lastSplit;
  const share = runs == null ? undefined : Math.max(1, Math.ceil(runs / count));
  return split(count, id, options, 'resume', () => [share], onProgress);
}

// A manual stepper for scenario `id`: { state, step(i), undo(), setSchedule(s), close() };
// with `schedule`, it starts replayed to it, or at the start with
// `scheduleError` saying why the schedule does not fit.
export async function stepper(id, options, schedule = null) {
  const made = call('newStepper', [id, options, schedule]);
  const { handle, state, scheduleError } = await made.promise;
  // A handle means something only to the worker that made it: a restarted
  // engine numbers its steppers from 1 again, and must not take a call (a
  // close above all) meant for one that died with the old worker.
  const current = () => worker === made.owner;
  const method = (name, arg) => (current()
    ? call('stepper', [handle, name, arg]).promise
    : Promise.reject(new Error('the engine was restarted since this scenario was opened; reload it')));
  // The last whole view: a step or an undo is answered with what changed,
  // and the view is put together here (parts/changes.js). Answers arrive in
  // the order asked.
  let last = state;
  const whole = (view) => { last = view; return view; };
  const changed = (changes) => whole(withChanges(last, changes));
  return {
    state,
    scheduleError,
    refresh: () => method('state').then(whole),
    step: (attempt) => method('stepChanges', attempt).then(changed),
    undo: () => method('undoChanges').then(changed),
    setSchedule: (schedule) => method('setSchedule', schedule).then(whole),
    close: () => (current() ? call('closeStepper', [handle]).promise : Promise.resolve(true)),
  };
}
