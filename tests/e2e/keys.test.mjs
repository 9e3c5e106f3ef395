// Stepping by hand from the keyboard on a long run: 400 step keys sent as
// fast as the browser takes them are all applied, in order (a key pressed
// while a step is under way waits for it; none is dropped), and each step's
// handling is measured by the page ('replayground:step', which the
// benchmark reports; no time is asserted here). The stepper keeps its run,
// so the 400th step runs one statement, not 400.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openLongDesign, openReady, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

// Opens the page on the long design of the benchmark (bench-calls.js):
// two attempts of 200 heavy statements each.
async function openLong(viewport = { width: 1280, height: 800 }) {
  const opened = await openReady(env, '?s=idem-race', viewport);
  await openLongDesign(opened.page);
  return opened;
}

test('400 step keys sent at once are all applied, in order', async (t) => {
  const { page, seen } = await openLong();
  // a, b, a, b, … then the rest of b: an order a dropped or swapped key
  // would break. 100 alternating pairs, then runs of 50.
  const keys = [...Array.from({ length: 100 }, () => ['a', 'b']).flat(), ...Array(50).fill('a'), ...Array(50).fill('b'), ...Array(50).fill('a'), ...Array(50).fill('b')];
  assert.equal(keys.length, 400);
  for (const key of keys) await page.keyboard.press(key);
  await page.locator('#lanes .step[data-step="399"]').waitFor({ timeout: 120000 });
  const texts = await page.locator('#lanes .step').evaluateAll((steps) => steps.map((s) => [Number(s.getAttribute('data-step')), s.textContent]));
  texts.sort((x, y) => x[0] - y[0]);
  assert.equal(texts.length, 400);
  const counts = { a: 0, b: 0 };
  keys.forEach((key, i) => {
    const name = `${key}${counts[key]}`;
    counts[key] += 1;
    assert.match(texts[i][1], new RegExp(`\\b${name}\\b`), `step ${i + 1} is ${name}`);
  });
  // Every step's handling was measured, once.
  const handling = await page.evaluate(() => performance.getEntriesByName('replayground:step').map((e) => e.duration));
  assert.equal(handling.length, 400);
  handling.sort((x, y) => x - y);
  t.diagnostic(`each step's handling: median ${handling[200].toFixed(1)} ms, slowest ${handling[399].toFixed(1)} ms (measured, not asserted)`);
  t.diagnostic(JSON.stringify(await page.evaluate(() => performance.getEntriesByName('replayground:step').map((e, i) => [i, Math.round(e.duration)]).sort((a, b) => b[1] - a[1]).slice(0, 8))));
  // The run is over: both attempts finished; the verdict says so.
  await page.locator('#verdict[data-kind]').waitFor();
  assert.match(await page.locator('#run-status').textContent(), /^(?!.*cannot step)/);
  await screenshot(page, 'keys-400-steps', false);
  // Undo by key, then a key for an attempt that has finished: said, not dropped silently.
  await page.keyboard.press('u');
  await page.locator('#lanes .step[data-step="399"]').waitFor({ state: 'detached' });
  await page.keyboard.press('a');
  await page.locator('#run-status', { hasText: 'cannot step now' }).waitFor();
  assert.deepEqual(seen.errors, []);
});

// The search helpers start only once the visitor has left the page alone for
// a while (search.js): compiling and warming them up takes the cores of a
// small machine, and steps by key waited for it. However slow the machine,
// no key falls within that quiet time before they start.
test('the search helpers do not start while the visitor steps by key', async () => {
  const { page, seen } = await openReady(env, '?s=idem-race&attempts=2', { width: 1280, height: 800 });
  await page.evaluate(() => {
    window.keyTimes = [];
    document.addEventListener('keydown', () => window.keyTimes.push(performance.now()), { capture: true });
  });
  // Keys every 200 ms for 4 s (the run ends early; a key then is still heard).
  for (let i = 0; i < 20; i += 1) {
    await page.keyboard.press(i % 2 ? 'b' : 'a');
    await page.waitForTimeout(200);
  }
  await page.locator('body[data-search-workers="warm"]').waitFor({ timeout: 60000 });
  const { keys, started, quiet } = await page.evaluate(async () => ({
    keys: window.keyTimes,
    started: performance.getEntriesByName('replayground:helpers-start').map((e) => e.startTime),
    quiet: (await import('/js/search.js')).QUIET_BEFORE_PREPARING_MS,
  }));
  assert.equal(keys.length, 20);
  assert.equal(started.length, 1);
  const before = keys.filter((t) => t <= started[0]);
  assert.ok(started[0] - before[before.length - 1] >= quiet, `a key ${started[0] - before[before.length - 1]} ms before the helpers started`);
  // They were put off: the keys ran past the second after ready they start at.
  assert.ok(started[0] > keys[keys.length - 1], 'the helpers started between keys');
  assert.deepEqual(seen.errors, []);
});
