// The engine's Web Worker: owns the wasm module and every SQLite store, so a
// long exploration never freezes the page. Messages: { id, op, args } in,
// { id, ok, value } or { id, ok: false, error } out; explorations also post
// { id, progress } between slices and stop when told { op: 'cancel', target }.
import init, * as wasm from '../pkg/replayground.js';

// The page sends the module it compiled as the first message ({ op: 'init',
// module, flag }), or `module: null` when it could not, and then this worker
// loads it itself. `flag`, when the page can share memory with it, is the
// engine's interrupt flag (see engine.js settle). `init()` resolves to the
// module's raw exports.
let begin;
const ready = new Promise((resolve) => { begin = resolve; })
  .then(async ({ module, flag }) => {
    const exports = await init(module ? { module_or_path: module } : undefined);
    if (flag) wasm.setInterrupt(flag);
    return exports;
  });
const steppers = new Map();
const cancelled = new Set();
let nextHandle = 1;

// How long the engine works before it yields to the worker's messages: long
// enough that yielding costs little of a search's speed, short enough that a
// cancel is heard within a tenth of a second.
const SLICE_MS = 40;

// The most runs per call into the engine within a slice: each call starts
// its run anew (an exhaustive search goes back to a checkpoint of its last
// state), so a call should do enough runs that this costs little, and few
// enough that the slice ends near SLICE_MS (a run of the largest built-ins
// takes about 50 µs). A design whose runs are slow (a run may take up to its
// budget of instructions, most of a second) gets fewer, down to one, so that
// a slice is never much longer than SLICE_MS or one run.
const RUNS_PER_CALL = 200;

// How many runs the next call makes, from how long the last one took: about
// a quarter of a slice per call.
function nextRunsPerCall(runs, ms) {
  if (ms < SLICE_MS / 8) return Math.min(RUNS_PER_CALL, runs * 2);
  if (ms > SLICE_MS / 2) return Math.max(1, Math.floor(runs / 2));
  return runs;
}

// Lets the worker's queued messages (a cancel) run, then resumes: a message
// to itself through a channel, queued behind them. (`setTimeout(0)` does the
// same, but nested timers wait at least 4 ms: measured 3.8 ms per 40 ms
// slice here, a tenth of a search's time.)
// Two searches may be driven at once (one cancelled as another starts):
// each message wakes the oldest waiting one.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldToMessages = () => new Promise((resolve) => {
  waiting.push(resolve);
  channel.port2.postMessage(null);
});

// The last search that stopped before covering everything (its budget ran
// out, or it was cancelled): kept so that the page may continue it. A new
// search replaces it.
let paused = null;
// A search split across workers (option `shard`) answers with its part,
// not a report; this worker's paused search is such a shard if `pausedShard`.
let pausedShard = false;

// What other shards finished, sent for the shard searching under call `id`
// (applied between slices).
const inboxes = new Map();

// Runs an exploration in time slices of about SLICE_MS, posting progress and
// yielding between them so cancel messages arrive.
async function explore(id, [scenario, options]) {
  paused?.free();
  paused = null;
  const shard = options?.shard != null;
  return drive(id, new wasm.Exploration(scenario, options), shard);
}

// Continues the paused search for `runs` more runs (or its first budget).
async function resume(id, [runs]) {
  const search = paused;
  if (!search) throw new Error('there is no stopped search to continue: run one first');
  paused = null;
  const shard = pausedShard;
  try {
    search.resume(runs);
  } catch (error) {
    search.free();
    throw error;
  }
  return drive(id, search, shard);
}

// Advances `search` to its end (or a cancel) and returns its report (a
// shard: its part). A shard sends what it finished with each progress
// message, and takes in what the others finished between slices.
async function drive(id, search, shard) {
  let keep = false;
  let runs = 1;
  if (shard) inboxes.set(id, []);
  try {
    for (;;) {
      if (cancelled.has(id)) {
        search.cancel();
        break;
      }
      for (const words of inboxes.get(id)?.splice(0) ?? []) search.addFinished(words);
      const start = performance.now();
      let progress;
      do {
        const called = performance.now();
        progress = search.advance(runs);
        runs = nextRunsPerCall(runs, performance.now() - called);
      } while (!progress.done && performance.now() - start < SLICE_MS);
      if (shard) {
        const finished = search.takeFinished();
        postMessage({ id, progress, finished }, { transfer: [finished.buffer] });
      } else {
        postMessage({ id, progress });
      }
      if (progress.done) break;
      await yieldToMessages();
    }
    const result = shard ? search.part() : search.report();
    keep = result.frontier != null;
    return result;
  } finally {
    cancelled.delete(id);
    inboxes.delete(id);
    if (keep) {
      // Two searches may end together (one cancelled as a split one starts).
      if (paused !== search) paused?.free();
      paused = search;
      pausedShard = shard;
    } else {
      search.free();
    }
  }
}

// A helper's warm-up (see engine.js prepareSearches): the engine's warmUp
// for about `ms` in slices of WARM_UP_SLICE_MS, yielding between them, so
// that a cancel (a search starting in the page) stops it within a slice.
const WARM_UP_SLICE_MS = 25;
async function warmUp(id, [ms]) {
  const until = performance.now() + (Number(ms) || 0);
  let runs = 0;
  try {
    do {
      runs += wasm.warmUp(WARM_UP_SLICE_MS).runs;
      await yieldToMessages();
    } while (!cancelled.has(id) && performance.now() < until);
  } finally {
    cancelled.delete(id);
  }
  return { runs };
}

// The operations the page may ask for.
const ops = {
  versions: () => wasm.versions(),
  roundTrip: ([note]) => wasm.roundTrip(note),
  scenarios: () => wasm.scenarios(),
  parsePermalink: ([query]) => wasm.parsePermalink(query),
  profiles: () => wasm.profiles(),
  runScenario: ([scenario, options]) => wasm.runScenario(scenario, options),
  crashSweep: ([options]) => wasm.crashSweep(options),
  exportPython: ([scenario, options]) => wasm.exportPython(scenario, options),
  exportRust: ([scenario, options]) => wasm.exportRust(scenario, options),
  describeScenario: ([scenario]) => wasm.describeScenario(scenario),
  checkScenario: ([scenario]) => wasm.checkScenario(scenario),
  scenarioSource: ([id]) => wasm.scenarioSource(id),
  benchEngine: ([rounds, iterations]) => wasm.benchEngine(rounds, iterations),
  mergeExplorations: ([scenario, options, parts, cancelled]) => wasm.mergeExplorations(scenario, options, parts, cancelled),
  // With `schedule`, the stepper starts replayed to it: one replay, not a
  // view of the start and then another (a link's run opens sooner). A
  // schedule that does not fit leaves the stepper at the start and says why.
  newStepper: ([scenario, options, schedule]) => {
    const stepper = new wasm.Stepper(scenario, options);
    const handle = nextHandle++;
    steppers.set(handle, stepper);
    if (schedule != null) {
      try {
        return { handle, state: stepper.setSchedule(schedule) };
      } catch (error) {
        return { handle, state: stepper.state(), scheduleError: error instanceof Error ? error.message : String(error) };
      }
    }
    return { handle, state: stepper.state() };
  },
  stepper: ([handle, method, arg]) => {
    const stepper = steppers.get(handle);
    if (!stepper) throw new Error('this scenario was closed; reload it');
    if (!['state', 'step', 'undo', 'setSchedule', 'stepChanges', 'undoChanges'].includes(method)) throw new Error(`no stepper method ${method}`);
    return stepper[method](arg);
  },
  // A real trap: a failed allocation aborts inside the module (see engine.js).
  trapForTests: async () => (await ready).__wbindgen_malloc(0xfffffff0, 8),
  closeStepper: ([handle]) => {
    steppers.get(handle)?.free();
    steppers.delete(handle);
    return true;
  },
};

onmessage = async ({ data }) => {
  const { id, op, args = [] } = data;
  if (op === 'init') {
    begin({ module: data.module, flag: data.flag });
    return;
  }
  if (op === 'cancel') {
    cancelled.add(data.target);
    return;
  }
  if (op === 'addFinished') {
    inboxes.get(data.target)?.push(data.words);
    return;
  }
  try {
    await ready;
    const searches = { explore, resume, warmUp };
    const value = op in searches ? await searches[op](id, args) : await ops[op]?.(args);
    if (value === undefined && !(op in ops) && !(op in searches)) throw new Error(`unknown operation ${op}`);
    postMessage({ id, ok: true, value });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A trap (unreachable, out of bounds, out of memory) leaves the module
    // unusable: say so, and the adapter starts a fresh engine.
    const fatal = error instanceof WebAssembly.RuntimeError;
    postMessage({ id, ok: false, error: message, fatal });
  }
};
