// The benchmark page: runs the engine benchmark in this browser and shows it
// as a table and as JSON (#report), which scripts/bench.sh reads. It runs on
// the page's own thread (no worker): scripts/serve.py serves this page
// cross-origin isolated, so that performance.now() resolves finely here.
import init, * as wasm from '../pkg/replayground.js';
import { calls, stepping } from './bench-calls.js';

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

// The exported API's calls (bench-calls.js). V8 compiles the code a call
// runs again, optimised, only after thousands of calls (a first session's
// calls took about 75 us where later ones took 60), so each kind of call
// first runs `warmup` untimed calls (or a second of them) on an object of
// its own (the engine's own measurements run a round of that many first,
// and so do the peers'); then a fresh object is timed in `rounds` rounds of
// `iterations` after an untimed warm-up round.
function measureCalls(rounds, iterations, warmup) {
  return Object.entries(calls(wasm)).map(([name, make]) => {
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
    report.stepping = stepping(wasm);
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
