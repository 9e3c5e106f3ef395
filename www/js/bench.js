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

async function run() {
  try {
    await init();
    const report = wasm.benchEngine(param('rounds', 15), param('iterations', 2000));
    ui.table.replaceChildren(
      row(['operation', 'median µs', 'min µs', 'max µs', 'rounds × ops'], 'th'),
      ...report.measurements.map((m) => row([
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
