// A caller of the JS exports stops the engine inside a run (issue 41): the
// module runs in a worker thread, as a page's engine does; another thread
// sets the flag given with setInterrupt, and the call under way ends within
// moments. Node's worker_threads share memory without a page's
// cross-origin isolation, so this runs in Node, on the module the page
// loads (www/pkg).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.join(here, '../../www/pkg');
const slowLoop = readFileSync(path.join(here, '../designs/hostile/slow-loop.toml'), 'utf8');

// The worker: loads the module, gives it the flag, runs `call` on the slow
// loop and reports how it ended, then runs a built-in to show the module
// still works (the flag cleared).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
(async () => {
  const m = await import(workerData.pkg + '/replayground.js');
  m.initSync({ module: readFileSync(workerData.pkg + '/replayground_bg.wasm') });
  // Node cannot fetch the module's rest on a first call that needs it.
  m.provideRest(readFileSync(workerData.pkg + '/replayground_rest.wasm'));
  const flag = new Int32Array(workerData.shared);
  m.setInterrupt(flag);
  const id = { source: workerData.source, name: 'slow-loop' };
  parentPort.postMessage({ started: true });
  let ended;
  try {
    if (workerData.call === 'run') {
      m.runScenario(id, { strategy: 'round-robin' });
      ended = 'returned';
    } else if (workerData.call === 'step') {
      const stepper = new m.Stepper(id);
      for (let i = 0; i < 100; i++) stepper.step(i % 2);
      ended = 'returned';
    } else {
      const exploration = new m.Exploration(id, { strategy: 'random', runs: 50 });
      let progress;
      do progress = exploration.advance(50); while (!progress.done);
      Atomics.store(flag, 0, 0);
      const report = exploration.report();
      let resumed;
      try { exploration.resume(); resumed = 'resumed'; } catch (e) { resumed = e.message; }
      ended = JSON.stringify({ boundedBy: report.boundedBy, complete: report.complete, resumed });
    }
  } catch (error) {
    ended = error.message;
  }
  parentPort.postMessage({ ended });
  Atomics.store(flag, 0, 0);
  const after = m.exploreScenario('idem-check-then-write', { strategy: 'exhaustive' }).counterexample.schedule;
  parentPort.postMessage({ after });
})();
`;

async function interrupted(call) {
  const shared = new SharedArrayBuffer(4);
  const flag = new Int32Array(shared);
  const worker = new Worker(WORKER, { eval: true, workerData: { pkg, shared, source: slowLoop, call } });
  const messages = [];
  let heard = null;
  const done = new Promise((resolve, reject) => {
    worker.on('message', (message) => {
      messages.push(message);
      if (message.started) {
        // Let the run get into its slow statements, then ask it to stop.
        setTimeout(() => {
          const asked = performance.now();
          Atomics.store(flag, 0, 1);
          heard = asked;
        }, 300);
      }
      if (message.ended !== undefined) heard = performance.now() - heard;
      if (message.after !== undefined) resolve({ ...messages.find((m) => m.ended !== undefined), after: message.after });
    });
    worker.on('error', reject);
  });
  const outcome = await done;
  await worker.terminate();
  return { ...outcome, ms: heard };
}

test('setInterrupt stops a round-robin run inside a slow statement', async () => {
  const { ended, after, ms } = await interrupted('run');
  console.log(`runScenario stopped ${ms.toFixed(0)} ms after the flag was set`);
  assert.match(ended, /^interrupted: the caller asked the engine to stop/);
  assert.equal(after, 'A6B3AB4');
});

test('setInterrupt stops a stepper in the middle of a step', async () => {
  const { ended, after, ms } = await interrupted('step');
  console.log(`Stepper.step stopped ${ms.toFixed(0)} ms after the flag was set`);
  assert.match(ended, /^interrupted: /);
  assert.equal(after, 'A6B3AB4');
});

test('setInterrupt ends a search, which says so and cannot be resumed', async () => {
  const { ended, after, ms } = await interrupted('explore');
  console.log(`Exploration.advance stopped ${ms.toFixed(0)} ms after the flag was set`);
  const report = JSON.parse(ended);
  assert.match(report.boundedBy, /^interrupted in the middle of a run/);
  assert.equal(report.complete, false);
  assert.match(report.resumed, /interrupted in the middle of a run, which is lost/);
  assert.equal(after, 'A6B3AB4');
});
