// The module split in two (scripts/split): the primary and its rest answer
// exactly as the whole module does, on every path the rest can arrive by:
// given up front (Node.js, provideRest), compiled in the background by
// init(), or fetched synchronously by the first call that needs it. (The
// playground's worker, in every other end-to-end test, loads it by init().)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openPage, serveAndLaunch } from './harness.mjs';
import { counterEdges, counterReader } from '../../scripts/split/counters.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const pkg = path.join(root, 'www', 'pkg');
const glue = pathToFileURL(path.join(pkg, 'replayground.js')).href;

// Calls that reach far into the rest (searches, sweeps, exports, the
// format's errors) and one a first visit makes; each returns JSON text.
const CALLS = {
  versions: (m) => m.versions(),
  run: (m) => m.runScenario('idem-check-then-write', { strategy: 'replay', schedule: 'A6B3AB4' }),
  explore: (m) => { const r = m.exploreScenario('idem-race', { params: { attempts: 3 } }); delete r.elapsedMs; return r; },
  random: (m) => { const r = m.exploreScenario('outbox-two-relays', { strategy: 'random', runs: 50, seed: 7 }); delete r.elapsedMs; return r; },
  python: (m) => m.exportPython('idem-check-then-write', { schedule: 'A6B3AB4' }),
  badDesign: (m) => { try { return m.checkScenario({ source: 'name = [' }); } catch (e) { return String(e); } },
  sweep: (m) => m.crashSweep({ inbox: true }),
};

test('in Node.js, the split module answers as the whole module does, the rest given with provideRest', async () => {
  const whole = await import(`${glue}?whole`);
  whole.initSync({ module: readFileSync(path.join(root, 'target', 'split', 'whole.wasm')) });
  const split = await import(`${glue}?split`);
  split.initSync({ module: readFileSync(path.join(pkg, 'replayground_bg.wasm')) });
  assert.equal(JSON.stringify(CALLS.versions(split)), JSON.stringify(CALLS.versions(whole)));
  split.provideRest(readFileSync(path.join(pkg, 'replayground_rest.wasm')));
  for (const [name, call] of Object.entries(CALLS)) {
    assert.equal(JSON.stringify(call(split)), JSON.stringify(call(whole)), name);
  }
});

test('in Node.js, a call that needs the rest before it was given says so', async () => {
  const split = await import(`${glue}?without-rest`);
  split.initSync({ module: readFileSync(path.join(pkg, 'replayground_bg.wasm')) });
  // A RuntimeError, as a trap: the call under way cannot finish (the page
  // then starts a fresh engine).
  assert.throws(() => CALLS.explore(split), (e) => e instanceof WebAssembly.RuntimeError
    && /needs replayground_rest\.wasm; give it to provideRest\(\) first/.test(e.message));
});

// What chooses the split's hot calls (scripts/split/profile.sh): the whole
// module with every direct call counted answers as the whole module does,
// and counts what it runs: the same search twice counts each call twice.
test('the counted module answers as the whole one and counts each call it makes', async () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'counted-'));
  try {
    const counted = path.join(tmp, 'counted.wasm');
    const edgesFile = path.join(tmp, 'edges.tsv');
    execFileSync(path.join(root, 'target', 'split-tool', 'release', 'replayground-split'),
      ['count', path.join(root, 'target', 'split', 'whole.wasm'), counted, edgesFile], { stdio: 'pipe' });
    const edgesText = readFileSync(edgesFile, 'utf8');
    const whole = await import(`${glue}?count-whole`);
    whole.initSync({ module: readFileSync(path.join(root, 'target', 'split', 'whole.wasm')) });
    const m = await import(`${glue}?counted`);
    const dump = counterReader(m.initSync({ module: readFileSync(counted) }), edgesText);
    const search = () => JSON.stringify(CALLS.explore(m));
    const start = dump();
    assert.equal(search(), JSON.stringify(CALLS.explore(whole)));
    const once = dump();
    search();
    const twice = dump();
    const calls = (from, to) => to.reduce((sum, n, k) => sum + (n - from[k]), 0n);
    assert.ok(calls(start, once) > 100000n, String(calls(start, once)));
    // Each function's entry counter counts every call, direct or not: at
    // least the direct calls counted into it, and more for some (the
    // exports JS calls, the table's calls). Imports have no entry counter.
    const direct = new Map();
    const entered = new Map();
    counterEdges(edgesText).forEach(([caller, callee], k) => {
      const into = caller === '>' ? entered : direct;
      into.set(callee, (into.get(callee) ?? 0n) + (once[k] - start[k]));
    });
    const short = [...direct].filter(([name, n]) => entered.has(name) && n > entered.get(name));
    assert.deepEqual(short, [], 'functions entered fewer times than they were called');
    assert.ok([...entered].some(([name, n]) => n > (direct.get(name) ?? 0n)), 'no function was entered other than by a direct call');
    // The search's own calls, counter by counter (the dump's allocation
    // and a first call's set-up may differ: compare where the second and
    // the third search agree).
    search();
    const thrice = dump();
    let busy = 0;
    let same = 0;
    twice.forEach((n, k) => {
      if (n === once[k]) return;
      busy += 1;
      if (n - once[k] === thrice[k] - n) same += 1;
    });
    assert.ok(busy > 1000 && same >= busy * 0.99, `${same} of the ${busy} counters a search counts counted it alike twice`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

const env = serveAndLaunch();

// In a page: the module loaded by init() (which compiles the rest in the
// background) or by initSync() (which does not: the first call that needs the
// rest fetches it synchronously), then at once a call that needs the rest,
// and the same call again once loadRest() has resolved.
async function inPage(how) {
  const { page, seen } = await openPage(env.browser, env.server.url);
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  // A document of the origin that loads nothing itself (nor a favicon).
  await page.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
  await page.goto(`${env.server.url}pkg/README.md`);
  const result = await page.evaluate(async (how) => {
    const m = await import('/pkg/replayground.js');
    if (how === 'init') await m.default();
    else m.initSync({ module: await (await fetch('/pkg/replayground_bg.wasm')).arrayBuffer() });
    const first = JSON.stringify(m.exploreScenario('idem-race', { params: { attempts: 3 } }).stats);
    await m.loadRest();
    const again = JSON.stringify(m.exploreScenario('idem-race', { params: { attempts: 3 } }).stats);
    return { first, again };
  }, how);
  await page.context().close();
  return { result, seen, rest: requests.filter((p) => p === '/pkg/replayground_rest.wasm').length };
}

for (const how of ['init', 'initSync']) {
  test(`in Chromium, loaded by ${how}(), the rest arrives when the first call needs it`, async () => {
    const whole = await import(`${glue}?stats`);
    whole.initSync({ module: readFileSync(path.join(root, 'target', 'split', 'whole.wasm')) });
    const expected = JSON.stringify(whole.exploreScenario('idem-race', { params: { attempts: 3 } }).stats);
    const { result, seen, rest } = await inPage(how);
    assert.deepEqual(result, { first: expected, again: expected });
    assert.deepEqual(seen.errors, []);
    // initSync() starts no background compile: the first call fetched the
    // rest itself, and loadRest() found it there.
    if (how === 'initSync') assert.equal(rest, 1);
    else assert.ok(rest >= 1);
  });
}

test('the playground draws a linked run without the rest, and says so when a search needs it', async () => {
  const { page } = await openPage(env.browser, env.server.url);
  await page.route('**/pkg/replayground_rest.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(`${env.server.url}?s=idem-check-then-write&schedule=A6B3AB4`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.match(await page.locator('#verdict').innerText(), /Fails, as declared/);
  await page.selectOption('#strategy', 'exhaustive');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  assert.match(await page.locator('#run-status').innerText(), /replayground_rest\.wasm: HTTP 404/);
  await page.context().close();
});
