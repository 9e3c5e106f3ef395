// The module in Node.js, as the npm package's users load it (initSync and
// provideRest): the calls that keep time (a helper's warm-up, the engine's
// benchmark) read Node's performance clock. They once read only a page's or
// a worker's, so in Node the clock stood at 0: a warm-up never ended and the
// benchmark's warm-up loop filled its database. Each call runs in a worker
// thread, so that a call that never ends fails the test instead of hanging it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const pkg = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../www/pkg');

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
(async () => {
  const m = await import(workerData.pkg + '/replayground.js');
  m.initSync({ module: readFileSync(workerData.pkg + '/replayground_bg.wasm') });
  m.provideRest(readFileSync(workerData.pkg + '/replayground_rest.wasm'));
  const started = performance.now();
  try {
    const value = workerData.call === 'warmUp' ? m.warmUp(50) : m.benchEngine(1, 1);
    parentPort.postMessage({ value, ms: performance.now() - started });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
})();
`;

// Runs `call` in a worker thread; its answer, or an Error after `limitMs`.
function inWorker(call, limitMs) {
  const worker = new Worker(WORKER, { eval: true, workerData: { pkg, call } });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error(`${call} did not return within ${limitMs / 1000} s`));
    }, limitMs);
    worker.once('message', (message) => {
      clearTimeout(timer);
      worker.terminate();
      resolve(message);
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

test('in Node.js, a warm-up searches for about the time asked and stops', async () => {
  const { value, ms, error } = await inWorker('warmUp', 60000);
  assert.equal(error, undefined);
  // 50 ms asked: at least that long (one slice of 200 runs may run past
  // it), and not the whole shard, which is 76,478 runs (what the warm-up
  // searched when its clock stood still; here 50 ms is about 600). A busy
  // machine searches fewer runs in 50 ms, never more.
  assert.ok(ms >= 50, `${ms} ms`);
  assert.ok(value.runs >= 200 && value.runs < 20000, JSON.stringify(value));
});

test("in Node.js, the engine's benchmark measures every operation", async () => {
  const { value, error } = await inWorker('benchEngine', 120000);
  assert.equal(error, undefined);
  assert.ok(value.measurements.length > 5, JSON.stringify(value.measurements));
  for (const m of value.measurements) assert.ok(m.medianUs > 0, `${m.name}: ${m.medianUs} µs`);
});
