// The benchmark page: runs the engine benchmark in this browser and shows it
// as a table and as JSON (#report), which scripts/bench.sh reads. It runs on
// the page's own thread (no worker): scripts/serve.py serves this page
// cross-origin isolated, so that performance.now() resolves finely here.
import init, * as wasm from '../pkg/replayground.js';

const ui = {
  status: document.getElementById('bench-status'),
  table: document.getElementById('bench-table'),
  report: document.getElementById('report'),
};

// A whole number from the query string, or `fallback`.
function param(name, fallback) {
  const value = new URLSearchParams(location.search).get(name);
  return value === null ? fallback : Number(value);
}

// One table row of text cells.
function row(cells, tag = 'td') {
  const tr = document.createElement('tr');
  for (const text of cells) {
    const cell = document.createElement(tag);
    cell.textContent = text;
    tr.append(cell);
  }
  return tr;
}

// The median of sorted numbers.
const median = (sorted) => sorted[sorted.length >> 1];

// The exported API as a library user calls it from JS: every call crosses
// the boundary (its argument converted in, its result object out). Each
// entry makes a fresh object and returns one call. V8 compiles the code a
// call runs again, optimised, only after thousands of calls (a first
// session's calls took about 75 us where later ones took 60), so each kind
// of call first runs `warmup` untimed calls (or a second of them) on an
// object of its own (the engine's own measurements run a round of that many
// first, and so do the peers'); then a fresh object is timed in `rounds`
// rounds of `iterations` after an untimed warm-up round.
const CALLS = {
  'IdempotencySession.execute(), a new key each call': () => {
    const session = new wasm.IdempotencySession();
    let key = 0;
    return () => session.execute({ tenant: 'north', operation: 'web-order', key: `k${key += 1}`, quantity: 2, now: 0 });
  },
  'IdempotencySession.execute(), a replay of one key': () => {
    const session = new wasm.IdempotencySession();
    const request = { tenant: 'north', operation: 'web-order', key: 'bench-key', quantity: 2, now: 0 };
    session.execute(request);
    return () => session.execute(request);
  },
  'OutboxSession.createOrder(), a new order each call': () => {
    const session = new wasm.OutboxSession();
    let n = 0;
    return () => session.createOrder({ orderId: `o${n += 1}`, amount: 5 });
  },
  'OutboxSession.createOrder() then relay() of its event': () => {
    const session = new wasm.OutboxSession();
    let n = 0;
    return () => { session.createOrder({ orderId: `r${n += 1}`, amount: 5 }); session.relay(); };
  },
  'OutboxSession.deliver(), a new event each call': () => {
    const session = new wasm.OutboxSession();
    let n = 0;
    return () => {
      n += 1;
      session.deliver({ subscriber: 'audit', event: { eventId: `e${n}`, payload: { order_id: `order:${n}`, amount: 5 } } });
    };
  },
  'Exploration.advance(1): one random run of the 2-attempt race': () => {
    const search = new wasm.Exploration('idem-race', { params: { attempts: 2 }, strategy: 'random', runs: 1e7, seed: 1 });
    return () => search.advance(1);
  },
  'Stepper.step(): the 2-attempt race stepped to its end, a new Stepper per run': () => {
    let stepper = null;
    let runnable = [];
    return () => {
      if (runnable.length === 0) {
        stepper = new wasm.Stepper('idem-race', { params: { attempts: 2 } });
        ({ runnable } = stepper.state());
      }
      ({ runnable } = stepper.step(runnable[0]));
    };
  },
};

function measureCalls(rounds, iterations, warmup) {
  return Object.entries(CALLS).map(([name, make]) => {
    const warm = make();
    const started = performance.now();
    for (let i = 0; i < warmup && performance.now() - started < 1000; i += 1) warm();
    const call = make();
    for (let i = 0; i < iterations; i += 1) call();
    const means = [];
    for (let round = 0; round < rounds; round += 1) {
      const start = performance.now();
      for (let i = 0; i < iterations; i += 1) call();
      means.push(((performance.now() - start) * 1000) / iterations);
    }
    means.sort((a, b) => a - b);
    return { name, medianUs: median(means), minUs: means[0], maxUs: means[means.length - 1], rounds, iterations };
  });
}

async function run() {
  try {
    await init();
    const rounds = param('rounds', 15);
    const iterations = param('iterations', 2000);
    const report = wasm.benchEngine(rounds, iterations);
    // Fewer calls per round than engine operations: the sessions' tables
    // grow with every call, as a user's would.
    report.calls = measureCalls(rounds, Math.min(iterations, 200), iterations);
    ui.table.replaceChildren(
      row(['operation', 'median µs', 'min µs', 'max µs', 'rounds × ops'], 'th'),
      ...[...report.measurements, ...report.calls].map((m) => row([
        m.name, m.medianUs.toFixed(2), m.minUs.toFixed(2), m.maxUs.toFixed(2),
        `${m.rounds} × ${m.iterations}`,
      ])),
    );
    report.userAgent = navigator.userAgent;
    // How finely the timer resolves here: the smallest step seen.
    let step = Infinity;
    for (let i = 0, last = performance.now(); i < 100000 && step > 0.001; i += 1) {
      const now = performance.now();
      if (now > last) { step = Math.min(step, now - last); last = now; }
    }
    report.timer = { crossOriginIsolated: globalThis.crossOriginIsolated === true, resolutionUs: step * 1000 };
    ui.report.textContent = JSON.stringify(report, null, 2);
    ui.report.dataset.state = 'done';
    ui.status.textContent = `SQLite ${report.sqliteVersion} in WebAssembly: done.`;
  } catch (error) {
    ui.report.textContent = JSON.stringify({ error: error.message });
    ui.report.dataset.state = 'failed';
    ui.status.textContent = `Benchmark failed: ${error.message}`;
  }
}

run();
